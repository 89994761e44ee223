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

/**
 * @defgroup mpitopo_errors Errors, allocation and version
 * @ingroup mpitopo
 * @brief Error codes and messages, the allocation hook, the library version.
 *
 * Every function of mpitopo returns an int: #MPITOPO_SUCCESS (0) on success,
 * a negative MPITOPO_ERR_* code for mpitopo's own errors, or a positive MPI
 * error code passed through unchanged from the MPI library. After a failure,
 * mpitopo_last_error() gives a message that names the argument and value.
 * @{
 */

/**
 * @brief The one table of mpitopo's own error codes: X(name, code, message).
 *
 * Codes are negative so they never collide with MPI error codes, which are
 * non-negative and are passed through unchanged. The table generates enum
 * #mpitopo_error, mpitopo_strerror() and mpitopo_err_name().
 * @hideinitializer
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

/** @brief mpitopo's own error codes (from #MPITOPO_ERROR_TABLE); all <= 0. */
enum mpitopo_error {
#define MPITOPO_ENUM_(name, code, msg) MPITOPO_##name = (code), /**< mpitopo_strerror(): msg */
    MPITOPO_ERROR_TABLE(MPITOPO_ENUM_)
#undef MPITOPO_ENUM_
    MPITOPO_ERR_LAST_ = -12 /**< one below the lowest code; not an error code */
};

/**
 * @brief Short description of a code.
 * @param[in] code an mpitopo error code, or a positive MPI error code
 * @return the description; for positive codes, "MPI error" (use
 *         MPI_Error_string for the MPI library's own text). Never NULL.
 */
MPITOPO_API const char *mpitopo_strerror(int code);

/**
 * @brief The symbolic name of a code ("MPITOPO_ERR_ARG").
 * @param[in] code an mpitopo error code, or a positive MPI error code
 * @return the name; "MPI_ERROR" for positive codes, "MPITOPO_ERR_UNKNOWN"
 *         for unknown negative codes. Never NULL.
 */
MPITOPO_API const char *mpitopo_err_name(int code);

/**
 * @brief Message of the most recent failing mpitopo call in the calling
 * thread, naming the argument and the value.
 *
 * For example
 * @verbatim
   mpitopo_machine_from_string: desc = "node:0": arity 0 of level 'node' must be >= 1
   @endverbatim
 * @return the message; the empty string when no call has failed. Valid until
 *         the next mpitopo call in this thread.
 * @threadsafe Thread-local: each thread sees its own last error.
 */
MPITOPO_API const char *mpitopo_last_error(void);

/**
 * @brief Allocation hook: the four functions every allocation of the library
 * goes through (see mpitopo_set_allocator()).
 */
typedef struct mpitopo_allocator {
    void *(*malloc_fn)(size_t size);              /**< as malloc */
    void *(*calloc_fn)(size_t count, size_t size); /**< as calloc */
    void *(*realloc_fn)(void *ptr, size_t size);   /**< as realloc */
    void (*free_fn)(void *ptr);                    /**< as free */
} mpitopo_allocator_t;

/**
 * @brief Set the allocation hook: every allocation of the library goes
 * through these four functions, so tests can inject failures.
 * @param[in] allocator the four functions (copied), or NULL to restore the C
 *            library's functions
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG one of the four function pointers is NULL
 * @threadsafe Not thread safe: set it before any other call.
 */
MPITOPO_API int mpitopo_set_allocator(const mpitopo_allocator_t *allocator);

/**
 * @brief Release memory the library allocated for the caller (the arrays of
 * mpitopo_pattern_adjacent(), say) through the allocator above.
 * @param[in] ptr the memory; NULL is ignored
 */
MPITOPO_API void mpitopo_free(void *ptr);

/**
 * @brief Version of the library actually linked (the macros in
 * \<mpitopo/version.h\> give the version compiled against).
 * @param[out] major major version, or NULL
 * @param[out] minor minor version, or NULL
 * @param[out] patch patch level, or NULL
 * @return the version string, e.g. "0.1.0".
 */
MPITOPO_API const char *mpitopo_get_version(int *major, int *minor, int *patch);

/** @} */

#ifdef __cplusplus
}
#endif
#endif /* MPITOPO_ERROR_H */
