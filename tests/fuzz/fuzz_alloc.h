/* What the harnesses share: CHECK, which traps on an inconsistency (the
 * fuzzer reports it as a crash), and an allocator that refuses blocks above
 * FUZZ_ALLOC_LIMIT: inputs can ask for 2^31-1 leaves or processes, and
 * refusing big blocks keeps each run fast, under libFuzzer's memory limit,
 * and exercises the out-of-memory paths. Define FUZZ_ALLOC_LIMIT before
 * including. */
#ifndef MPITOPO_FUZZ_ALLOC_H
#define MPITOPO_FUZZ_ALLOC_H

#include <stdlib.h>

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            __builtin_trap();                                                                      \
    } while (0)

static void *fuzz_malloc(size_t n)
{
    return n > FUZZ_ALLOC_LIMIT ? NULL : malloc(n);
}

static void *fuzz_calloc(size_t count, size_t n)
{
    return n && count > FUZZ_ALLOC_LIMIT / n ? NULL : calloc(count, n);
}

static void *fuzz_realloc(void *p, size_t n)
{
    return n > FUZZ_ALLOC_LIMIT ? NULL : realloc(p, n);
}

static const mpitopo_allocator_t fuzz_allocator = {fuzz_malloc, fuzz_calloc, fuzz_realloc, free};

#endif
