/*
 * libFuzzer harness of the mappers on whole problems: the bytes decode
 * (tests/unit/backend_case.h) into a machine, a pattern and options, and
 * every mapper that takes any pattern, Scotch and METIS included where
 * built, must map it: success with a valid placement (mpitopo_map checks
 * it) or, with the allocation cap below, out of memory. Any other error
 * traps, with the case printed; crashes inside the partitioning libraries
 * (Scotch's SIGFPE on a level of arity 1, issue 15) are the fuzzer's to
 * find.
 */
#define MPITOPO_NO_MPI
#include <mpitopo.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/backend_case.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_ALLOC_LIMIT ((size_t)16 << 20)
#include "fuzz_alloc.h"

static int have(const char *name)
{
    const mpitopo_mapper_t *m;
    return mpitopo_mapper_find(name, &m) == MPITOPO_SUCCESS;
}

static void fail(const char *mapper, const mpitopo_machine_t *m, const mpitopo_pattern_t *p, int rc)
{
    char desc[256] = "(no machine)";
    int n = 0;
    int64_t e = 0;
    mpitopo_machine_describe(m, desc, sizeof desc);
    mpitopo_pattern_nprocs(p, &n);
    mpitopo_pattern_nedges(p, &e);
    fprintf(stderr, "fuzz_backends: %s on %s (%d processes, %lld edges): %s: %s\n", mapper, desc, n,
            (long long)e, mpitopo_err_name(rc), mpitopo_last_error());
    __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const mappers[] = {"identity", "block", "rr", "random", "tree", "scotch", "metis"};
    mpitopo_set_allocator(&fuzz_allocator);
    mpitopo_machine_t *m = NULL;
    mpitopo_pattern_t *p = NULL;
    mpitopo_map_options_t opt;
    int rc = bk_case(data, size, &m, &p, &opt);
    if (rc != MPITOPO_SUCCESS) {
        /* Only the cap can stop the constructors: the cases are valid. */
        if (rc != MPITOPO_ERR_NOMEM)
            fail("(construction)", m, p, rc);
    } else {
        int leaf[BK_MAX_LEAVES], n = 0;
        mpitopo_pattern_nprocs(p, &n);
        for (size_t k = 0; k < sizeof mappers / sizeof *mappers; k++) {
            /* The tree mapper's refinement, instrumented, would take most
             * of the time: it runs on the small cases only (test_backends
             * gives it the large ones). */
            if (!have(mappers[k]) || (strcmp(mappers[k], "tree") == 0 && n > 32))
                continue;
            rc = mpitopo_map(mappers[k], m, p, &opt, leaf, NULL);
            if (rc != MPITOPO_SUCCESS && rc != MPITOPO_ERR_NOMEM)
                fail(mappers[k], m, p, rc);
        }
    }
    mpitopo_pattern_destroy(&p);
    mpitopo_machine_destroy(&m);
    return 0;
}
