/* Internal header of the MPI-free core: public topic headers plus the
 * helpers every module uses (errors, allocation, logging, random numbers). */
#ifndef MPITOPO_INTERNAL_H
#define MPITOPO_INTERNAL_H

#define MPITOPO_INSIDE_H_ 1
#include <mpitopo/version.h>
#include <mpitopo/error.h>
#include <mpitopo/machine.h>
#include <mpitopo/pattern.h>
#include <mpitopo/map.h>
#include <mpitopo/metrics.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define MPITOPO_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define MPITOPO_PRINTF(f, a)
#endif

/* Allocation, through the hook of mpitopo_set_allocator. The _array forms
 * return NULL when count * size overflows. */
void *mpitopo__malloc(size_t size);
void *mpitopo__calloc(size_t count, size_t size);
void *mpitopo__realloc(void *ptr, size_t size);
void mpitopo__free(void *ptr);
void *mpitopo__malloc_array(size_t count, size_t size);
void *mpitopo__realloc_array(void *ptr, size_t count, size_t size);
char *mpitopo__strdup(const char *s);

/* Errors: every module records the calling thread's last error message and
 * returns the code through one family of macros.
 *   MPITOPO_FAIL(code, fmt, ...)            "<this function>: <message>"
 *   MPITOPO_FAIL_AS(code, func, fmt, ...)   "<func>: <message>", for helpers that
 *                                           report as the public function they serve
 *   MPITOPO_FAIL_MSG(code, fmt, ...)        "<message>", already naming its function
 *   MPITOPO_NOMEM(what)                     "<this function>: out of memory allocating <what>"
 *   MPITOPO_FAIL_CONTEXT(code, fmt, ...)    "<context>: <current message>"
 *   MPITOPO_FAIL_RESTATE(code, func, fmt, ...)
 *       the current "<inner function>: <detail>" as "<func>: <context>: <detail>",
 *       for public functions that report what a constructor they called on the
 *       caller's behalf said.
 * The functions below implement them; call the macros. */
int mpitopo__error(int code, const char *fmt, ...) MPITOPO_PRINTF(2, 3);
int mpitopo__error_at(int code, const char *func, const char *fmt, ...) MPITOPO_PRINTF(3, 4);
int mpitopo__error_context(int code, const char *fmt, ...) MPITOPO_PRINTF(2, 3);
/* "<func>: <file>:<line>: <message>", for the readers of files (a fabric
 * dump, a Slurm topology.conf). */
int mpitopo__error_line(int code, const char *func, const char *file, long line, const char *fmt, va_list ap)
    MPITOPO_PRINTF(5, 0);
int mpitopo__error_restate(int code, const char *func, const char *fmt, ...) MPITOPO_PRINTF(3, 4);
void mpitopo__clear_error(void);
#define MPITOPO_FAIL(code, ...) mpitopo__error_at((code), __func__, __VA_ARGS__)
#define MPITOPO_FAIL_AS(code, func, ...) mpitopo__error_at((code), (func), __VA_ARGS__)
#define MPITOPO_FAIL_MSG(code, ...) mpitopo__error((code), __VA_ARGS__)
#define MPITOPO_NOMEM(what) MPITOPO_FAIL(MPITOPO_ERR_NOMEM, "out of memory allocating %s", (what))
#define MPITOPO_FAIL_CONTEXT(code, ...) mpitopo__error_context((code), __VA_ARGS__)
#define MPITOPO_FAIL_RESTATE(code, func, ...) mpitopo__error_restate((code), (func), __VA_ARGS__)

/* Verbosity from MPITOPO_VERBOSE (read once); log lines go to stderr
 * prefixed with "mpitopo: ". */
int mpitopo__verbose(void);
void mpitopo__log(int level, const char *fmt, ...) MPITOPO_PRINTF(2, 3);

/* xoshiro256** seeded through splitmix64: the same stream on every
 * platform for a given seed. */
typedef struct mpitopo__rng {
    uint64_t s[4];
} mpitopo__rng_t;
void mpitopo__rng_seed(mpitopo__rng_t *rng, uint64_t seed);
uint64_t mpitopo__rng_next(mpitopo__rng_t *rng);
/* Uniform in [0, 1) with 53 random bits. */
double mpitopo__rng_double(mpitopo__rng_t *rng);
/* Uniform in [0, n), unbiased; n >= 1. */
uint64_t mpitopo__rng_below(mpitopo__rng_t *rng, uint64_t n);

/* The largest stencil anything accepts: a Cartesian stencil (star, Moore or
 * a list of offsets) may have at most this many offsets, in
 * mpitopo_cart_stencil_create and in the stencil of mpitopo_cart_create_x
 * alike (a million offsets is already O(10 MB) of lists per process; a
 * Moore stencil of radius 2,000 in 2-D, 16 million, took 15 s and 0.9 GB). */
#define MPITOPO_MAX_STENCIL_OFFSETS (1 << 20)

/* Strict integer parsing of s[0..len): optional sign, decimal digits only,
 * value within [min, max]. Returns 0 on success, -1 otherwise. */
int mpitopo__parse_long(const char *s, size_t len, long long min, long long max, long long *out);
/* Strict parsing of a finite decimal number. */
int mpitopo__parse_double(const char *s, size_t len, double *out);

#endif /* MPITOPO_INTERNAL_H */
