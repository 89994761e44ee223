/*
 * Offline comparison of rank orders for collective algorithms (issue 19,
 * thesis ch. 4), MPI-free: 1,024 ranks on 64 nodes x 2 sockets x 8 cores
 * ("node:64 socket:2 core:8") under a fat tree (ktree:4,3, its first 64 end
 * nodes), launched in the thesis's four layouts
 *   block-bunch    rank r on node r / 16, filling socket 0 then socket 1
 *   block-scatter  rank r on node r / 16, alternating the sockets
 *   cyclic-bunch   rank r on node r % 64, filling socket 0 then socket 1
 *   cyclic-scatter rank r on node r % 64, alternating the sockets
 * (the CLI's --placement has block = block-bunch and rr = cyclic-bunch; the
 * scatter layouts are built here). For each algorithm's pattern
 * (coll:ALG:1024:BYTES), each mapper's placement from that launch
 * (identity, rdmh, rmh, bbmh, bgmh, tree, scotch; no never-worse guard) is
 * judged by the distance/contention cost model of src/map/collmap_cost.c
 * (under the fat tree) and by the tree metric sum(bytes x level cost).
 * Built as bench target mpitopo_bench_collmap_layouts.
 */
#define MPITOPO_NO_MPI
#include <mpitopo.h>

#include "map/collmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define P 1024
#define NODES 64

static void die(int rc)
{
    fprintf(stderr, "collmap_layouts: %s\n", mpitopo_last_error());
    exit(rc ? 1 : 0);
}

static void layout(int kind, int *leaf)
{
    for (int r = 0; r < P; r++) {
        int node = kind < 2 ? r / 16 : r % NODES, k = kind < 2 ? r % 16 : r / NODES;
        int scatter = kind == 1 || kind == 3;
        leaf[r] = node * 16 + (scatter ? (k % 2) * 8 + k / 2 : k);
    }
}

int main(void)
{
    static const char *const layouts[] = {"block-bunch", "block-scatter", "cyclic-bunch", "cyclic-scatter"};
    static const struct {
        const char *pattern;
        mpitopo__coll_alg_t alg;
        double bytes;
    } algs[] = {{"coll:allgather-rd:1024:64", MPITOPO__COLL_ALG_ALLGATHER_RD, 64},
                {"coll:allgather-ring:1024:4096", MPITOPO__COLL_ALG_ALLGATHER_RING, 4096},
                {"coll:bcast-binomial:1024:65536", MPITOPO__COLL_ALG_BCAST_BINOMIAL, 65536},
                {"coll:gather-binomial:1024:4096", MPITOPO__COLL_ALG_GATHER_BINOMIAL, 4096}};
    const char *mappers[8] = {"identity", "rdmh", "rmh", "bbmh", "bgmh", "tree", "scotch", NULL};
    const mpitopo_mapper_t *probe;
    if (mpitopo_mapper_find("scotch", &probe) != MPITOPO_SUCCESS)
        mappers[6] = NULL;
    mpitopo_machine_t *m = NULL;
    mpitopo_network_t *net = NULL;
    int rc;
    if ((rc = mpitopo_machine_from_string("node:64 socket:2 core:8", &m)) ||
        (rc = mpitopo_network_from_string("ktree:4,3", &net)))
        die(rc);
    const mpitopo__coll_dist_t d = {m, net, NULL};
    int launch[P], out[P];
    for (int a = 0; a < 4; a++) {
        mpitopo_pattern_t *pat = NULL;
        if ((rc = mpitopo_pattern_from_string(algs[a].pattern, &pat)))
            die(rc);
        printf("\n%s: model cost under ktree:4,3 / tree metric (MB x level cost)\n", algs[a].pattern);
        printf("%-15s", "layout");
        for (int k = 0; mappers[k]; k++)
            printf(" %17s", mappers[k]);
        printf("\n");
        for (int l = 0; l < 4; l++) {
            layout(l, launch);
            printf("%-15s", layouts[l]);
            for (int k = 0; mappers[k]; k++) {
                mpitopo_map_options_t opt = MPITOPO_MAP_OPTIONS_INIT;
                opt.launch = launch;
                if (!strcmp(mappers[k], "rdmh") && algs[a].alg != MPITOPO__COLL_ALG_ALLGATHER_RD) {
                    printf(" %17s", "-");
                    continue;
                }
                if ((rc = mpitopo_map_network(mappers[k], m, net, NULL, pat, &opt, out, NULL)))
                    die(rc);
                double model, tree;
                if ((rc = mpitopo__coll_cost(algs[a].alg, &d, P, out, NULL, algs[a].bytes, &model)) ||
                    (rc = mpitopo_metrics_cost(m, pat, out, MPITOPO_WEIGHT_BYTES, &tree)))
                    die(rc);
                printf(" %9.0f/%7.1f", model, tree / 1e6);
            }
            printf("\n");
        }
        mpitopo_pattern_destroy(&pat);
    }
    mpitopo_network_destroy(&net);
    mpitopo_machine_destroy(&m);
    return 0;
}
