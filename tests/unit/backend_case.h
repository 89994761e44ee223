/*
 * One mapping problem decoded from bytes, for the property test of the
 * mappers (test_backends.c, random bytes) and their fuzz harness
 * (tests/fuzz/fuzz_backends.c, the fuzzer's bytes). The machines are the
 * ones the partitioning libraries stumble on: levels of arity 1, a single
 * node, a single core, costs that are zero or grow down the tree, and
 * partially filled trees (leaves dropped, units of different sizes); the
 * patterns have self edges, repeated and zero-weight edges, no edges, or
 * every edge. Bytes past the end read as 0, so every input is a case.
 */
#ifndef MPITOPO_BACKEND_CASE_H
#define MPITOPO_BACKEND_CASE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Small enough for many cases a second, large enough for several levels. */
#define BK_MAX_LEAVES 256
#define BK_MAX_EDGES 512

typedef struct bk_bytes {
    const uint8_t *d;
    size_t n, at;
} bk_bytes_t;

static unsigned bk_take(bk_bytes_t *b)
{
    return b->at < b->n ? b->d[b->at++] : 0u;
}

/* Levels, arities (1 to 6, the product at most BK_MAX_LEAVES), costs. */
static int bk_levels(bk_bytes_t *b, int *arity, const char **names, double *costs, int *with_costs)
{
    static const char *const by_depth[5][5] = {{"core"},
                                               {"node", "core"},
                                               {"node", "socket", "core"},
                                               {"switch", "node", "socket", "core"},
                                               {"switch", "node", "socket", "numa", "core"}};
    unsigned h = bk_take(b);
    int nlevels = 1 + (int)(h % 5), leaves = 1;
    *with_costs = (h >> 3) & 1;
    for (int l = 0; l < nlevels; l++) {
        unsigned c = bk_take(b);
        int a = 1 + (int)(c % 6);
        while (a > 1 && leaves * a > BK_MAX_LEAVES)
            a--;
        arity[l] = a;
        leaves *= a;
        names[l] = by_depth[nlevels - 1][l];
        costs[l] = (double)((c >> 3) % 8); /* zero, equal or growing down the tree too */
    }
    return nlevels;
}

/* The machine: regular, or its leaves thinned out by a mask (at least one
 * kept), which leaves units of different sizes. */
static int bk_machine(bk_bytes_t *b, mpitopo_machine_t **m)
{
    int arity[5], with_costs, paths[BK_MAX_LEAVES * 5];
    const char *names[5];
    double costs[5];
    int nlevels = bk_levels(b, arity, names, costs, &with_costs);
    int full = 1;
    for (int l = 0; l < nlevels; l++)
        full *= arity[l];
    int thin = bk_take(b) & 1, n = 0;
    unsigned mask = 0;
    for (int leaf = 0; leaf < full; leaf++) {
        if (thin && leaf % 8 == 0)
            mask = bk_take(b);
        if (thin && !(mask >> (leaf % 8) & 1) && !(n == 0 && leaf == full - 1))
            continue;
        for (int l = nlevels - 1, x = leaf; l >= 0; l--) {
            paths[n * nlevels + l] = x % arity[l];
            x /= arity[l];
        }
        n++;
    }
    return mpitopo_machine_from_paths(nlevels, names, with_costs ? costs : NULL, n, paths, m, NULL);
}

/* A pattern of 1 to nleaves processes. */
static int bk_pattern(bk_bytes_t *b, int nleaves, mpitopo_pattern_t **p)
{
    unsigned k = bk_take(b);
    unsigned hi = bk_take(b), lo = bk_take(b);
    int n = 1 + (int)((hi << 8 | lo) % (unsigned)nleaves);
    switch (k % 4) {
    case 0: {
        int src[BK_MAX_EDGES], dst[BK_MAX_EDGES], ne = (int)(bk_take(b) * 2u % BK_MAX_EDGES);
        double bytes[BK_MAX_EDGES];
        for (int e = 0; e < ne; e++) {
            src[e] = (int)(bk_take(b) % (unsigned)n);
            dst[e] = (int)(bk_take(b) % (unsigned)n);
            unsigned w = bk_take(b);
            bytes[e] = w < 32 ? 0.0 : w < 200 ? (double)w : 1e12 * w; /* zero, small, huge */
        }
        return mpitopo_pattern_create(n, ne, src, dst, bytes, NULL, p);
    }
    case 1:
        return mpitopo_pattern_rings(n, 1 + (int)(bk_take(b) % 9), p);
    case 2: {
        double density = bk_take(b) / 255.0;
        return mpitopo_pattern_random(n, density, bk_take(b), p);
    }
    default:
        return n <= 40 ? mpitopo_pattern_complete(n, p) : mpitopo_pattern_random(n, 0.05, k, p);
    }
}

/* The whole case; the options get a seed, a weight and the never-worse
 * guard from the bytes. MPITOPO_SUCCESS or the constructors' error. */
static int bk_case(const uint8_t *data, size_t size, mpitopo_machine_t **m, mpitopo_pattern_t **p,
                   mpitopo_map_options_t *opt)
{
    bk_bytes_t b = {data, size, 0};
    int nleaves = 0, rc = bk_machine(&b, m);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo_machine_nleaves(*m, &nleaves);
    if (rc == MPITOPO_SUCCESS)
        rc = bk_pattern(&b, nleaves, p);
    unsigned o = bk_take(&b);
    *opt = (mpitopo_map_options_t)MPITOPO_MAP_OPTIONS_INIT;
    opt->weight = (mpitopo_weight_t)(o % 3);
    opt->never_worse = (o >> 2) & 1;
    opt->seed = bk_take(&b);
    return rc;
}

#endif
