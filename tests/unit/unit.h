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

/* Allocation failure injection: the k-th allocation from now on fails. */
static long unit_alloc_countdown = -1;
static void *unit_malloc(size_t n) { return unit_alloc_countdown-- == 0 ? NULL : malloc(n); }
static void *unit_calloc(size_t c, size_t n) { return unit_alloc_countdown-- == 0 ? NULL : calloc(c, n); }
static void *unit_realloc(void *p, size_t n) { return unit_alloc_countdown-- == 0 ? NULL : realloc(p, n); }
static inline void unit_fail_allocation(long k)
{
    static const mpitopo_allocator_t a = {unit_malloc, unit_calloc, unit_realloc, free};
    unit_alloc_countdown = k;
    mpitopo_set_allocator(&a);
}
static inline void unit_restore_allocator(void)
{
    unit_alloc_countdown = -1;
    mpitopo_set_allocator(NULL);
}

#endif
