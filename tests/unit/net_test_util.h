/* Helpers shared by the unit tests of the network-aware mappers
 * (test_netmap.c, test_ptram.c, test_ptram_par.c): a seeded random
 * pattern, a machine under a network, and the network metrics of a
 * mapping. static inline: each test uses only some of them. */
#ifndef MPITOPO_NET_TEST_UTIL_H
#define MPITOPO_NET_TEST_UTIL_H

#include "unit.h"

#include <stdio.h>

static inline uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

/* A random directed pattern: every ordered pair an edge with probability
 * density, bytes 1..100. */
static inline mpitopo_pattern_t *random_pattern(int n, double density, uint64_t seed)
{
    int *src = malloc((size_t)n * (size_t)n * sizeof *src), *dst = malloc((size_t)n * (size_t)n * sizeof *dst);
    double *bytes = malloc((size_t)n * (size_t)n * sizeof *bytes);
    int64_t ne = 0;
    uint64_t s = seed * 2654435761ULL + 1;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j && (double)(lcg(&s) % 10000) < density * 10000) {
                src[ne] = i;
                dst[ne] = j;
                bytes[ne++] = (double)(1 + lcg(&s) % 100);
            }
    mpitopo_pattern_t *p = NULL;
    OK(mpitopo_pattern_create(n, ne, src, dst, bytes, NULL, &p));
    free(src);
    free(dst);
    free(bytes);
    return p;
}

/* The machine "node:N <inside>" under the network's group levels. */
static inline mpitopo_machine_t *net_machine(const mpitopo_network_t *net, int nodes, const char *inside)
{
    char desc[128];
    snprintf(desc, sizeof desc, "node:%d %s", nodes, inside);
    mpitopo_machine_t *flat = NULL, *m = NULL;
    OK(mpitopo_machine_from_string(desc, &flat));
    OK(mpitopo_network_machine(net, flat, NULL, &m, NULL));
    mpitopo_machine_destroy(&flat);
    return m;
}

static inline void end_nodes(const mpitopo_machine_t *m, int nprocs, const int *leaf, int *ends)
{
    int nl;
    OK(mpitopo_machine_node_level(m, &nl));
    for (int p = 0; p < nprocs; p++)
        OK(mpitopo_machine_unit_of(m, nl, leaf[p], &ends[p]));
}

/* The network metrics of leaf (hybrid weights w, NULL: 1,1,1,1). */
static inline mpitopo_network_metrics_t metrics_of(const mpitopo_network_t *net, const mpitopo_machine_t *m,
                                                   const mpitopo_pattern_t *pat, const int *leaf, const double *w)
{
    int n;
    mpitopo_pattern_nprocs(pat, &n);
    int *ends = malloc((size_t)n * sizeof *ends);
    end_nodes(m, n, leaf, ends);
    mpitopo_network_metrics_t r;
    OK(mpitopo_network_evaluate(net, pat, ends, w, NULL, &r));
    free(ends);
    return r;
}

#endif
