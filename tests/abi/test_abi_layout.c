/*
 * The public structs keep their layout within a major version: the size and
 * alignment of every struct of the public headers, the offset and size of
 * each member, and the value of every enum constant are compared with the
 * reference recorded in layout_ref.h (tests/abi/gen_layout_ref.py; the ABI
 * policy is in NEWS). Prints one line per difference and "PASS abi" or
 * "FAIL abi"; exits 77 (skipped) on a platform without a reference.
 */
#include <mpitopo.h>

#include <stddef.h>
#include <stdio.h>

static int failures, entries;

static void check(const char *what, long long got, long long want)
{
    entries++;
    if (got != want) {
        printf("FAIL abi: %s is %lld, the reference says %lld\n", what, got, want);
        failures++;
    }
}

int main(void)
{
#define MPITOPO_ABI_STRUCT(T, size, align)                                     \
    check("sizeof(struct " #T ")", (long long)sizeof(struct T), size);        \
    check("_Alignof(struct " #T ")", (long long)_Alignof(struct T), align);
#define MPITOPO_ABI_MEMBER(T, m, offset, size)                                 \
    check("offsetof(struct " #T ", " #m ")", (long long)offsetof(struct T, m), offset); \
    check("sizeof(struct " #T "." #m ")", (long long)sizeof(((struct T *)0)->m), size);
#define MPITOPO_ABI_VALUE(name, value) check(#name, (long long)(name), value);
#define MPITOPO_ABI_UNKNOWN_MPI                                                \
    printf("SKIP (cannot exist here): abi: no reference layout for this MPI (mpitopo_nodeinfo_t holds its handles)\n"); \
    return 77;
#include "layout_ref.h"

#ifndef MPITOPO_ABI_REF_PLATFORM
    printf("SKIP (cannot exist here): abi: no reference layout for this platform\n");
    return 77;
#else
    if (MPITOPO_ABI_REF_MAJOR != MPITOPO_VERSION_MAJOR) {
        printf("FAIL abi: the reference is for major version %d, this is %s: record it again "
               "(tests/abi/gen_layout_ref.py generate)\n", MPITOPO_ABI_REF_MAJOR, MPITOPO_VERSION_STRING);
        return 1;
    }
    if (failures) {
        printf("FAIL abi: %d of %d checks differ from the reference of major version %d: a public "
               "struct or constant changed, which needs a new major version\n",
               failures, entries, MPITOPO_ABI_REF_MAJOR);
        return 1;
    }
    printf("PASS abi (%d checks, %s)\n", entries, MPITOPO_ABI_REF_PLATFORM);
    return 0;
#endif
}
