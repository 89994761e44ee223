/* mpitopo dims: the Cartesian dimensions of N processes, balanced as
 * MPI_Dims_create should make them, or node-aware. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

static const char *dims_help =
    "Usage: mpitopo dims NPROCS D0,D1,... [--ppn N]\n"
    "\n"
    "Fills the 0 entries of the dimension list as MPI_Dims_create should (most\n"
    "balanced, non-increasing; non-zero entries kept): 'mpitopo dims 576 0,0,0'\n"
    "gives 9x8x8.\n"
    "\n"
    "Options:\n"
    "  --ppn N               processes per node: choose the dimensions whose best\n"
    "                        node box cuts the fewest edges of a radius-1 star\n"
    "                        among those at most twice as unbalanced, and print\n"
    "                        the box: 'mpitopo dims 576 0,0,0 --ppn 36' gives\n"
    "                        12x8x6\n"
    "  -h, --help            print this help and exit\n";

/* mpitopo dims NPROCS LIST [--ppn N] */
int mpitopo__cmd_dims(int argc, char **argv)
{
    if (argc > 0 && (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help"))) {
        fputs(dims_help, stdout);
        return 0;
    }
    long long nprocs, ppn = 0, v;
    int dims[MPITOPO_MAX_DIMS], box[MPITOPO_MAX_DIMS], ndims = 0;
    if (argc != 2 && !(argc == 4 && !strcmp(argv[2], "--ppn")))
        return mpitopo__cli_usage_error("%s", "expected NPROCS D0,D1,... [--ppn N] (see 'mpitopo dims --help')");
    if (mpitopo__cli_parse_int(argv[0], strlen(argv[0]), 1, &nprocs))
        return mpitopo__cli_usage_error("NPROCS '%s': expected an integer in [1, 2^31-1]", argv[0]);
    if (argc == 4 && mpitopo__cli_parse_int(argv[3], strlen(argv[3]), 1, &ppn))
        return mpitopo__cli_usage_error("--ppn '%s': expected an integer in [1, 2^31-1]", argv[3]);
    for (const char *p = argv[1]; *p; ndims++) {
        size_t len = strcspn(p, ",x");
        if (ndims == MPITOPO_MAX_DIMS || mpitopo__cli_parse_int(p, len, 0, &v))
            return mpitopo__cli_usage_error(
                "dimension list '%s': expected up to 32 non-negative integers separated by commas", argv[1]);
        dims[ndims] = (int)v;
        p += len + (p[len] != '\0');
    }
    int rc = ppn ? mpitopo_dims_create_nodes((int)nprocs, (int)ppn, ndims, dims, NULL, box)
                 : mpitopo_dims_create((int)nprocs, ndims, dims);
    if (rc != MPITOPO_SUCCESS)
        return mpitopo__cli_fail("dims", rc);
    for (int i = 0; i < ndims; i++)
        printf("%s%d", i ? "x" : "", dims[i]);
    if (ppn && box[0] > 0) {
        printf("   node box ");
        for (int i = 0; i < ndims; i++)
            printf("%s%d", i ? "x" : "", box[i]);
    }
    printf("\n");
    return 0;
}
