/* Shared helpers for the cmocka unit tests. */
#ifndef MPITOPO_UNIT_H
#define MPITOPO_UNIT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#define MPITOPO_NO_MPI
#include <mpitopo.h>

#include <stdlib.h>
#include <string.h>

/* Sanitizer builds (ASan runs several times slower): the randomised
 * property tests run fewer cases there, the normal build runs them all. */
#if defined(__SANITIZE_ADDRESS__)
#define UNIT_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNIT_SANITIZED 1
#endif
#endif
#ifndef UNIT_SANITIZED
#define UNIT_SANITIZED 0
#endif

/* Assert success, printing mpitopo's message when it fails. */
#define OK(call)                                                                          \
    do {                                                                                  \
        int rc_ = (call);                                                                 \
        if (rc_ != MPITOPO_SUCCESS)                                                       \
            fail_msg("%s returned %s: %s", #call, mpitopo_err_name(rc_), mpitopo_last_error()); \
    } while (0)

/* Assert a specific error code and that the message mentions `needle`. */
#define FAILS(call, code, needle)                                                         \
    do {                                                                                  \
        int rc_ = (call);                                                                 \
        if (rc_ != (code))                                                                \
            fail_msg("%s returned %s, expected %s (%s)", #call, mpitopo_err_name(rc_),    \
                     mpitopo_err_name(code), mpitopo_last_error());                       \
        if ((needle) && !strstr(mpitopo_last_error(), (needle) ? (needle) : ""))          \
            fail_msg("%s: message \"%s\" lacks \"%s\"", #call, mpitopo_last_error(), (needle)); \
    } while (0)

/* Allocation failure injection: an allocator that fails the k-th call and
 * counts the blocks still live. */
static long unit_fail_at, unit_calls, unit_live;
static void *unit_malloc(size_t n)
{
    if (++unit_calls == unit_fail_at)
        return NULL;
    void *p = malloc(n);
    unit_live += p != NULL;
    return p;
}
static void *unit_calloc(size_t c, size_t n)
{
    if (++unit_calls == unit_fail_at)
        return NULL;
    void *p = calloc(c, n);
    unit_live += p != NULL;
    return p;
}
static void *unit_realloc(void *old, size_t n)
{
    if (++unit_calls == unit_fail_at)
        return NULL;
    void *p = realloc(old, n);
    unit_live += p != NULL && old == NULL;
    return p;
}
static void unit_free(void *p)
{
    unit_live -= p != NULL;
    free(p);
}

/* An allocator refusing blocks above a cap, so inputs that ask for
 * gigabytes reach their out-of-memory path at once, under the sanitizers
 * too (which abort on huge blocks instead of returning NULL). */
static size_t unit_cap;
static void *unit_capped_malloc(size_t n)
{
    return n > unit_cap ? NULL : malloc(n);
}
static void *unit_capped_calloc(size_t c, size_t n)
{
    return n && c > unit_cap / n ? NULL : calloc(c, n);
}
static void *unit_capped_realloc(void *old, size_t n)
{
    return n > unit_cap ? NULL : realloc(old, n);
}
/* Cap blocks at `cap` bytes; 0 restores the default allocator. */
static inline void unit_cap_allocations(size_t cap)
{
    static const mpitopo_allocator_t capped = {unit_capped_malloc, unit_capped_calloc, unit_capped_realloc, free};
    unit_cap = cap;
    mpitopo_set_allocator(cap ? &capped : NULL);
}

/*
 * Run op(ctx) with allocation k failing, for k = 1, 2, ... until a run
 * makes fewer than k allocations. op releases whatever it made when it
 * succeeds. Every failing run must return MPITOPO_ERR_NOMEM with a message
 * saying "out of memory"; every run, failing or not, must leave no block
 * allocated. Returns the number of runs that failed.
 */
typedef int (*unit_op_fn)(void *ctx);
static inline long unit_each_allocation_fails(const char *what, unit_op_fn op, void *ctx)
{
    static const mpitopo_allocator_t counting = {unit_malloc, unit_calloc, unit_realloc, unit_free};
    long k;
    for (k = 1;; k++) {
        unit_calls = unit_live = 0;
        unit_fail_at = k;
        mpitopo_set_allocator(&counting);
        int rc = op(ctx);
        mpitopo_set_allocator(NULL);
        long made = unit_calls;
        unit_fail_at = 0;
        if (rc != MPITOPO_SUCCESS && rc != MPITOPO_ERR_NOMEM)
            fail_msg("%s, allocation %ld failing: %s %s", what, k, mpitopo_err_name(rc), mpitopo_last_error());
        if (rc == MPITOPO_ERR_NOMEM && !strstr(mpitopo_last_error(), "out of memory"))
            fail_msg("%s, allocation %ld failing: message \"%s\"", what, k, mpitopo_last_error());
        if (unit_live != 0)
            fail_msg("%s, allocation %ld failing: %ld blocks leaked", what, k, unit_live);
        if (made < k)
            break;
    }
    return k - 1;
}

#endif
