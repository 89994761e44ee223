#ifndef MPITOPO_ERROR_H
#define MPITOPO_ERROR_H
#ifndef MPITOPO_INSIDE_H_
#error Please include <mpitopo.h> instead of <mpitopo/error.h>
#endif

#include <mpitopo/export.h>

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The one table of mpitopo's own error codes. Codes are negative so they
 * never collide with MPI error codes, which are non-negative and are passed
 * through unchanged.
 */
#define MPITOPO_ERROR_TABLE(X)                                                  \
    X(SUCCESS, 0, "success")                                                    \
    X(ERR_ARG, -1, "invalid argument")                                          \
    X(ERR_NOMEM, -2, "out of memory")                                           \
    X(ERR_PARSE, -3, "malformed description")                                   \
    X(ERR_FORMAT, -4, "malformed file")                                         \
    X(ERR_IO, -5, "input/output error")                                         \
    X(ERR_RANGE, -6, "value out of range")                                      \
    X(ERR_NOT_FOUND, -7, "no such name")                                        \
    X(ERR_UNSUPPORTED, -8, "not supported by this build or this MPI")           \
    X(ERR_HWLOC, -9, "hwloc failed")                                            \
    X(ERR_MISMATCH, -10, "collective arguments disagree across processes")      \
    X(ERR_INTERNAL, -11, "internal error")

enum mpitopo_error {
#define MPITOPO_ENUM_(name, code, msg) MPITOPO_##name = (code),
    MPITOPO_ERROR_TABLE(MPITOPO_ENUM_)
#undef MPITOPO_ENUM_
    MPITOPO_ERR_LAST_ = -12
};

/* Short description of a code; for positive codes, "MPI error" (use
 * MPI_Error_string for the MPI library's own text). Never NULL. */
MPITOPO_API const char *mpitopo_strerror(int code);

/* The symbolic name of a code ("MPITOPO_ERR_ARG"); "MPI_ERROR" for positive
 * codes, "MPITOPO_ERR_UNKNOWN" for unknown negative codes. Never NULL. */
MPITOPO_API const char *mpitopo_err_name(int code);

/* Message of the most recent failing mpitopo call in the calling thread,
 * naming the argument and the value, e.g.
 * "mpitopo_machine_from_string: desc = \"node:0\": arity 0 of level 'node' must be >= 1".
 * Empty string when no call has failed. Thread-local; valid until the next
 * mpitopo call in this thread. */
MPITOPO_API const char *mpitopo_last_error(void);

/* Allocation hook: every allocation of the library goes through these four
 * functions, so tests can inject failures. Passing NULL restores the C
 * library's functions. Not thread safe: set it before any other call. */
typedef struct mpitopo_allocator {
    void *(*malloc_fn)(size_t size);
    void *(*calloc_fn)(size_t count, size_t size);
    void *(*realloc_fn)(void *ptr, size_t size);
    void (*free_fn)(void *ptr);
} mpitopo_allocator_t;
MPITOPO_API int mpitopo_set_allocator(const mpitopo_allocator_t *allocator);
/* Release memory the library allocated for the caller (the arrays of
 * mpitopo_pattern_adjacent, say) through the allocator above. NULL is
 * ignored. */
MPITOPO_API void mpitopo_free(void *ptr);

/* Version of the library actually linked (the macros in <mpitopo/version.h>
 * give the version compiled against). Any out-pointer may be NULL. Returns
 * the version string, e.g. "0.1.0". */
MPITOPO_API const char *mpitopo_get_version(int *major, int *minor, int *patch);

#ifdef __cplusplus
}
#endif
#endif /* MPITOPO_ERROR_H */
