/*
 * Strip tilings for the cart mapper (see cart_internal.h): when a node's
 * size fits the grid only as an elongated box, or as no box at all, nodes
 * that are near-boxes wrapping from one band of the grid into the next cut
 * far fewer edges (a node of 32 on a 160x125 torus: 5 x 6.4 strips cut
 * 15,250 edges, the best box, 32x1, 41,250).
 *
 * Candidates are ranked by a closed-form estimate of their node-level cut,
 * so that only a few are walked and scored exactly by the caller: every
 * band boundary across dimension i is a plane of P / n_i points, and every
 * node boundary inside a band a cross-section of prod t points.
 */
#include "map/cart_internal.h"
#include "pattern/pattern_internal.h"
#include "machine/machine_internal.h"

#include <string.h>

/* Thickness vectors estimated per call, at most (the enumeration stops). */
#define STRIP_VISITS 200000

typedef struct strip_search {
    const mpitopo__cart_t *c;
    const double *dim_weight;
    int ppn;
    double nprocs;
    mpitopo__strip_t cur;
    mpitopo__strip_t *list;
    int keep, count;
    long visits;
} strip_search_t;

static int ceil_div(int a, int b)
{
    return (a + b - 1) / b;
}

/* Estimated node-level cut of s.cur (see the top of the file). */
static double estimate(const strip_search_t *s)
{
    const mpitopo__cart_t *c = s->c;
    const mpitopo__strip_t *st = &s->cur;
    double cut = 0, area = 1;
    for (int k = 0; k < st->nouter; k++) {
        int i = st->order[k], bands = ceil_div(c->dims[i], st->t[i]);
        int planes = c->periods[i] ? (bands > 1 ? bands : 0) : bands - 1;
        cut += s->dim_weight[i] * planes * (s->nprocs / c->dims[i]);
        area *= st->t[i];
    }
    return cut + s->nprocs / s->ppn * s->dim_weight[st->run] * area;
}

/* Keep s.cur among the `keep` best, sorted by estimate. */
static void consider(strip_search_t *s)
{
    s->cur.estimate = estimate(s);
    int pos = s->count;
    while (pos > 0 && s->list[pos - 1].estimate > s->cur.estimate)
        pos--;
    if (pos >= s->keep)
        return;
    int last = s->count < s->keep ? s->count : s->keep - 1;
    memmove(s->list + pos + 1, s->list + pos, (size_t)(last - pos) * sizeof *s->list);
    s->list[pos] = s->cur;
    if (s->count < s->keep)
        s->count++;
}

/* Every thickness of the outer dimensions k.. whose cross-section (area so
 * far times the rest) stays within one node. */
static void thicknesses(strip_search_t *s, int k, long long area)
{
    if (++s->visits > STRIP_VISITS)
        return;
    if (k == s->cur.nouter) {
        consider(s);
        return;
    }
    int i = s->cur.order[k];
    for (int t = 1; t <= s->c->dims[i] && area * t <= s->ppn; t++) {
        s->cur.t[i] = t;
        thicknesses(s, k + 1, area * t);
    }
}

int mpitopo__cart_strips(const mpitopo__cart_t *c, int ppn, const double *dim_weight, int keep,
                         mpitopo__strip_t **list, int *count)
{
    *count = 0;
    *list = mpitopo__malloc_array((size_t)(keep > 0 ? keep : 1), sizeof **list);
    if (!*list)
        return MPITOPO_NOMEM("the strip tilings");
    strip_search_t s = {.c = c, .dim_weight = dim_weight, .ppn = ppn > 0 ? ppn : 1, .list = *list, .keep = keep};
    s.nprocs = 1;
    for (int i = 0; i < c->ndims; i++)
        s.nprocs *= c->dims[i];
    /* Each dimension walked in turn, the others outer in grid order: their
     * order changes only where the snake turns, which the estimate
     * ignores; the caller also walks the reverse order. */
    for (int run = 0; run < c->ndims; run++) {
        memset(&s.cur, 0, sizeof s.cur);
        s.cur.run = run;
        s.visits = 0;
        for (int i = 0; i < c->ndims; i++)
            if (i != run)
                s.cur.order[s.cur.nouter++] = i;
        thicknesses(&s, 0, 1);
    }
    *count = s.count;
    return MPITOPO_SUCCESS;
}

/* ---- walking the curve ------------------------------------------------- */

typedef struct walk {
    const mpitopo__cart_t *c;
    const mpitopo__strip_t *s;
    int *pos_of_point;
    int next;
    int x[MPITOPO_MAX_DIMS];
    int base[MPITOPO_MAX_DIMS], extent[MPITOPO_MAX_DIMS];
    unsigned char reversed[MPITOPO_MAX_DIMS + 1]; /* per level, flips after each sweep */
} walk_t;

static void visit(walk_t *w)
{
    const mpitopo__cart_t *c = w->c;
    int64_t p = 0;
    for (int i = 0; i < c->ndims; i++)
        p = p * c->dims[i] + w->x[i];
    w->pos_of_point[p] = w->next++;
}

static int band_count(const mpitopo__cart_t *c, const mpitopo__strip_t *s, int i)
{
    return ceil_div(c->dims[i], s->t[i]);
}

/* Start and thickness of band b across dimension i. Mixed: with nb bands
 * of t, the last nb * t - n are t - 1 thick. */
static void band_of(const mpitopo__cart_t *c, const mpitopo__strip_t *s, int i, int b, int *base, int *extent)
{
    int n = c->dims[i], t = s->t[i], nb = band_count(c, s, i);
    int thin = s->mixed ? nb * t - n : 0, thick = nb - thin;
    if (b < thick) {
        *base = b * t;
        *extent = n - *base < t ? n - *base : t;
    } else {
        *base = thick * t + (b - thick) * (t - 1);
        *extent = t - 1;
    }
}

/* Whether the mixed form of s exists: every outer dimension's thin bands
 * fit among its bands and are not empty. */
int mpitopo__cart_strip_mixable(const mpitopo__cart_t *c, const mpitopo__strip_t *s)
{
    int useful = 0;
    for (int k = 0; k < s->nouter; k++) {
        int i = s->order[k], nb = band_count(c, s, i), thin = nb * s->t[i] - c->dims[i];
        if (thin > 0 && (s->t[i] < 2 || thin > nb))
            return 0;
        useful |= thin > 0;
    }
    return useful;
}

/* The points of one cross-section, outer dimensions k.. in order. */
static void walk_section(walk_t *w, int k)
{
    if (k == w->s->nouter) {
        visit(w);
        return;
    }
    int i = w->s->order[k];
    for (int v = w->base[i]; v < w->base[i] + w->extent[i]; v++) {
        w->x[i] = v;
        walk_section(w, k + 1);
    }
}

/* Slabs and bands of the outer dimensions k.., then the run; each level
 * turns back after every sweep, so consecutive bands meet end to end. */
static void walk_bands(walk_t *w, int k)
{
    const mpitopo__strip_t *s = w->s;
    if (k == s->nouter) {
        int n = w->c->dims[s->run];
        for (int step = 0; step < n; step++) {
            w->x[s->run] = w->reversed[k] ? n - 1 - step : step;
            walk_section(w, 0);
        }
    } else {
        int i = s->order[k];
        for (int step = 0, bands = band_count(w->c, s, i); step < bands; step++) {
            band_of(w->c, s, i, w->reversed[k] ? bands - 1 - step : step, &w->base[i], &w->extent[i]);
            walk_bands(w, k + 1);
        }
    }
    w->reversed[k] ^= 1;
}

void mpitopo__cart_strip_walk(const mpitopo__cart_t *c, const mpitopo__strip_t *s, int *pos_of_point)
{
    walk_t w = {.c = c, .s = s, .pos_of_point = pos_of_point};
    walk_bands(&w, 0);
}

/* ---- scoring ----------------------------------------------------------- */

void mpitopo__cart_score(const mpitopo_machine_t *m, const mpitopo_pattern_t *pat, mpitopo_weight_t weight,
                         const int *leaf_of_proc, double *scratch, mpitopo__cart_score_t *out)
{
    int nnodes = m->node_level < 0 ? 1 : m->nunits[m->node_level];
    memset(scratch, 0, (size_t)nnodes * sizeof *scratch);
    double cost = 0;
    for (int p = 0; p < pat->nprocs; p++) {
        int a = leaf_of_proc[p], node = mpitopo__node_of(m, a);
        for (int64_t e = pat->offs[p]; e < pat->offs[p + 1]; e++) {
            int b = leaf_of_proc[pat->dst[e]];
            double w = mpitopo_edge_weight(weight, pat->bytes[e], pat->msgs[e]);
            cost += w * mpitopo__cost(m, a, b);
            if (mpitopo__node_of(m, b) != node)
                scratch[node] += w;
        }
    }
    out->cost = cost;
    out->max_offnode = 0;
    for (int u = 0; u < nnodes; u++)
        out->max_offnode = scratch[u] > out->max_offnode ? scratch[u] : out->max_offnode;
}
