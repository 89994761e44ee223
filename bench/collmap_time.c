/*
 * Mapping time of the collective-aware heuristics (src/map/collmap.c,
 * issue 19), MPI-free: RDMH, RMH, BBMH and BGMH at p ranks on
 * "node:p/16 socket:2 core:8", launched block and cyclic over nodes (rr),
 * without a network, with a fat tree (ktree:16,3) and with a torus
 * (torus:16x16x16) above the nodes (4,096 end nodes each), best of 5 runs;
 * and the cost model's time for RD and ring (1 KiB blocks; best of 3).
 * Times are CPU milliseconds; the last column is the best wall time of the
 * slowest heuristic.
 * Built as bench target mpitopo_bench_collmap_time (BUILD/bench/collmap_time).
 * Run: ./collmap_time [P ...]   (default 1024 4096 65536)
 */
#define MPITOPO_NO_MPI
#include <mpitopo.h>

#include "map/collmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* CPU time of this process: on a shared, loaded box the wall clock
 * measures the other tenants too (best-of-5 wall times are printed after
 * the table's last column pair). */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(int rc)
{
    fprintf(stderr, "collmap_time: %s\n", mpitopo_last_error());
    exit(rc ? 1 : 0);
}

int main(int argc, char **argv)
{
    int sizes[16] = {1024, 4096, 65536}, nsizes = 3;
    if (argc > 1) {
        nsizes = 0;
        for (int i = 1; i < argc && nsizes < 16; i++)
            sizes[nsizes++] = atoi(argv[i]);
    }
    static const char *const launches[] = {"block", "rr"};
    static const char *const netdesc[3] = {"none", "ktree:16,3", "torus:16x16x16"};
    mpitopo_network_t *nets[3] = {NULL, NULL, NULL};
    int rc;
    for (int n = 1; n < 3; n++)
        if ((rc = mpitopo_network_from_string(netdesc[n], &nets[n])))
            die(rc);
    printf("%-7s %-6s %-15s %10s %10s %10s %10s %12s %12s %12s\n", "p", "launch", "network", "rdmh_ms", "rmh_ms",
           "bbmh_ms", "bgmh_ms", "cost_rd_ms", "cost_ring_ms", "wall_max_ms");
    for (int s = 0; s < nsizes; s++) {
        int p = sizes[s];
        char desc[64];
        snprintf(desc, sizeof desc, "node:%d socket:2 core:8", p / 16);
        mpitopo_machine_t *m = NULL;
        if ((rc = mpitopo_machine_from_string(desc, &m)))
            die(rc);
        int *leaf = malloc((size_t)p * sizeof *leaf), *ord = malloc((size_t)p * sizeof *ord);
        for (int l = 0; l < 2; l++) {
            if ((rc = mpitopo_placement(m, p, launches[l], leaf)))
                die(rc);
            for (int n = 0; n < 3; n++) {
                const mpitopo__coll_dist_t d = {m, nets[n], NULL};
                double t[6], wmax = 0;
                for (int h = 0; h < 4; h++) {
                    double w = 1e30;
                    t[h] = 1e30;
                    for (int rep = 0; rep < 5; rep++) {
                        double t0 = now(), w0 = wall();
                        if ((rc = mpitopo__coll_order((mpitopo__coll_heur_t)h, &d, p, leaf, ord)))
                            die(rc);
                        double dt = now() - t0, dw = wall() - w0;
                        t[h] = dt < t[h] ? dt : t[h];
                        w = dw < w ? dw : w;
                    }
                    wmax = w > wmax ? w : wmax;
                }
                static const mpitopo__coll_alg_t algs[2] = {MPITOPO__COLL_ALG_ALLGATHER_RD,
                                                            MPITOPO__COLL_ALG_ALLGATHER_RING};
                for (int a = 0; a < 2; a++) {
                    t[4 + a] = 1e30;
                    for (int rep = 0; rep < 3; rep++) {
                        double c, t0 = now();
                        if ((rc = mpitopo__coll_cost(algs[a], &d, p, leaf, ord, 1024, &c)))
                            die(rc);
                        double dt = now() - t0;
                        t[4 + a] = dt < t[4 + a] ? dt : t[4 + a];
                    }
                }
                printf("%-7d %-6s %-15s %10.2f %10.2f %10.2f %10.2f %12.2f %12.2f %12.2f\n", p, launches[l],
                       netdesc[n], t[0] * 1e3, t[1] * 1e3, t[2] * 1e3, t[3] * 1e3, t[4] * 1e3, t[5] * 1e3,
                       wmax * 1e3);
                fflush(stdout);
            }
        }
        free(leaf);
        free(ord);
        mpitopo_machine_destroy(&m);
    }
    for (int n = 1; n < 3; n++)
        mpitopo_network_destroy(&nets[n]);
    return 0;
}
