/*
 * check_trace NAME TRACE EXPECTED: reads both pattern files and compares
 * them edge by edge (same processes, same edges, bytes and messages equal
 * exactly). Prints "PASS NAME" or "FAIL NAME: ..." and exits 0 or 1.
 */
#define MPITOPO_NO_MPI
#include <mpitopo.h>

#include <stdio.h>

static int load(const char *name, const char *path, mpitopo_pattern_t **p)
{
    if (mpitopo_pattern_read(path, p) == MPITOPO_SUCCESS)
        return 0;
    printf("FAIL %s: %s\n", name, mpitopo_last_error());
    return 1;
}

/* Compare the out-edges of process p; 0 when equal. */
static int compare_row(const char *name, const mpitopo_pattern_t *got,
                       const mpitopo_pattern_t *want, int p)
{
    int gd, wd;
    const int *gdst, *wdst;
    const double *gb, *gm, *wb, *wm;
    mpitopo_pattern_out_edges(got, p, &gd, &gdst, &gb, &gm);
    mpitopo_pattern_out_edges(want, p, &wd, &wdst, &wb, &wm);
    int bad = 0;
    for (int i = 0, j = 0; i < gd || j < wd;) {
        if (j == wd || (i < gd && gdst[i] < wdst[j])) {
            printf("FAIL %s: unexpected edge %d -> %d (%.17g bytes, %.17g messages)\n", name, p,
                   gdst[i], gb[i], gm[i]);
            i++, bad = 1;
        } else if (i == gd || wdst[j] < gdst[i]) {
            printf("FAIL %s: missing edge %d -> %d (%.17g bytes, %.17g messages)\n", name, p,
                   wdst[j], wb[j], wm[j]);
            j++, bad = 1;
        } else {
            if (gb[i] != wb[j] || gm[i] != wm[j]) {
                printf("FAIL %s: edge %d -> %d has %.17g bytes, %.17g messages; expected %.17g, "
                       "%.17g\n", name, p, gdst[i], gb[i], gm[i], wb[j], wm[j]);
                bad = 1;
            }
            i++, j++;
        }
    }
    return bad;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: check_trace NAME TRACE EXPECTED\n");
        return 2;
    }
    const char *name = argv[1];
    mpitopo_pattern_t *got = NULL, *want = NULL;
    int bad = load(name, argv[2], &got) || load(name, argv[3], &want);
    int gn = 0, wn = 0;
    if (!bad) {
        mpitopo_pattern_nprocs(got, &gn);
        mpitopo_pattern_nprocs(want, &wn);
        if (gn != wn) {
            printf("FAIL %s: %d processes in the trace, %d expected\n", name, gn, wn);
            bad = 1;
        }
    }
    for (int p = 0; !bad && p < gn; p++)
        bad |= compare_row(name, got, want, p);
    if (!bad)
        printf("PASS %s\n", name);
    mpitopo_pattern_destroy(&got);
    mpitopo_pattern_destroy(&want);
    return bad;
}
