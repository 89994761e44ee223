/*
 * The greedy step of the "ptram" mapper (Alg. 3.1) in the pieces that the
 * serial loop (ptram.c) and the parallel one (src/mpi/ptram_par.c) share:
 * staging an item on a node, scoring a candidate node, choosing the next
 * item, and the serial loop's tie rule for the best node.
 */
#include "map/ptram_internal.h"

#include <math.h>

void mpitopo__ptram_stage_item(const mpitopo__ptram_items_t *it, mpitopo__pload_t *pl, mpitopo__ptram_route_fn route,
                               void *ctx, int a, int n, int skip, int sign)
{
    int len;
    for (int64_t e = it->ooff[a]; e < it->ooff[a + 1]; e++) {
        int b = it->odst[e];
        if (b != skip && it->node_of[b] >= 0 && it->node_of[b] != n) {
            const int64_t *r = route(ctx, n, it->node_of[b], &len);
            mpitopo__pload_stage_route(pl, r, len, it->obytes[e], it->opairs[e], sign);
        }
    }
    for (int64_t e = it->ioff[a]; e < it->ioff[a + 1]; e++) {
        int b = it->isrc[e];
        if (b != skip && it->node_of[b] >= 0 && it->node_of[b] != n) {
            const int64_t *r = route(ctx, it->node_of[b], n, &len);
            mpitopo__pload_stage_route(pl, r, len, it->ibytes[e], it->ipairs[e], sign);
        }
    }
}

int mpitopo__ptram_fits(const mpitopo__ptram_items_t *it, int a, int n)
{
    int free_slots = it->cap[n] - it->fill[n];
    return it->exact ? it->fill[n] == 0 && it->cap[n] == it->isize[a] : free_slots >= it->isize[a];
}

double mpitopo__ptram_score(const mpitopo__ptram_items_t *it, mpitopo__pload_t *pl, mpitopo__ptram_route_fn route,
                            void *ctx, int a, int n)
{
    mpitopo__ptram_stage_item(it, pl, route, ctx, a, n, -1, +1);
    double h = mpitopo__pload_delta_hybrid(pl);
    mpitopo__pload_clear(pl);
    return h;
}

void mpitopo__ptram_greedy_init(const mpitopo__ptram_items_t *it, double *rest)
{
    for (int a = 0; a < it->ni; a++) {
        rest[a] = 0;
        for (int64_t e = it->ooff[a]; e < it->ooff[a + 1]; e++)
            rest[a] += it->obytes[e];
        for (int64_t e = it->ioff[a]; e < it->ioff[a + 1]; e++)
            rest[a] += it->ibytes[e];
    }
}

int mpitopo__ptram_greedy_next(const mpitopo__ptram_items_t *it, const double *conn, const double *rest, int step)
{
    double alpha = 1.0 / (step + 1), best = -1;
    int p = -1;
    for (int a = 0; a < it->ni; a++)
        if (it->node_of[a] < 0 && conn[a] + alpha * rest[a] > best) {
            best = conn[a] + alpha * rest[a];
            p = a;
        }
    return p;
}

void mpitopo__ptram_greedy_placed(const mpitopo__ptram_items_t *it, double *conn, double *rest, int a)
{
    for (int64_t e = it->ooff[a]; e < it->ooff[a + 1]; e++) {
        conn[it->odst[e]] += it->obytes[e];
        rest[it->odst[e]] -= it->obytes[e];
    }
    for (int64_t e = it->ioff[a]; e < it->ioff[a + 1]; e++) {
        conn[it->isrc[e]] += it->ibytes[e];
        rest[it->isrc[e]] -= it->ibytes[e];
    }
}

int mpitopo__ptram_pick(int lo, int hi, const unsigned char *fit, const double *h, double *best)
{
    int bestn = -1;
    *best = INFINITY;
    for (int n = lo; n < hi; n++)
        if (fit[n - lo] && (h[n - lo] < *best || bestn < 0)) {
            *best = h[n - lo];
            bestn = n;
        }
    return bestn;
}
