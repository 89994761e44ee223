/* What the cart mapper's files share: the strip tilings (cart_strips.c) and
 * the score that picks among candidate mappings. */
#ifndef MPITOPO_CART_INTERNAL_H
#define MPITOPO_CART_INTERNAL_H

#include "core/internal.h"

struct mpitopo__cart;

/*
 * A strip tiling: the points are walked as a boustrophedon curve, and
 * consecutive runs of the curve fill consecutive leaves, so every unit of
 * every level holds a stretch of the curve. The curve cuts the grid into
 * slabs of thickness t[order[0]] across order[0], each slab into bands of
 * thickness t[order[1]], and so on; the innermost band is walked along
 * `run`, a cross-section (a block of prod t points) at a time. A node of k
 * points is then a near-box t x ... x (k / prod t) that wraps from one band
 * into the next; where k is no multiple of the cross-section its cuts are
 * staggered.
 */
typedef struct mpitopo__strip {
    int run;                       /* the dimension walked */
    int nouter;                    /* ndims - 1 */
    int order[MPITOPO_MAX_DIMS];   /* outer dimensions, outermost first */
    int t[MPITOPO_MAX_DIMS];       /* thickness across each outer dimension */
    int mixed;                     /* 0: the last band of each outer dimension takes
                                    * what is left; 1: the last bands are one thinner,
                                    * as many as it takes to fit exactly (50 = 11 x 4
                                    * + 2 x 3), so nodes of 12 are 3x4 or 4x3 boxes */
    double estimate;               /* estimated node-level cut, for ranking */
} mpitopo__strip_t;

/* The `keep` strip tilings of best estimated node-level cut for nodes of
 * `ppn` points, best first; dim_weight[i] is the stencil weight along i.
 * *list is freed by the caller (mpitopo__free). */
int mpitopo__cart_strips(const struct mpitopo__cart *c, int ppn, const double *dim_weight, int keep,
                         mpitopo__strip_t **list, int *count);

/* Whether s has a mixed form different from its plain one. */
int mpitopo__cart_strip_mixable(const struct mpitopo__cart *c, const mpitopo__strip_t *s);

/* pos_of_point[p] = position of grid point p on the curve of s. */
void mpitopo__cart_strip_walk(const struct mpitopo__cart *c, const mpitopo__strip_t *s, int *pos_of_point);

/* How a candidate mapping is judged: the weighted cost over every level,
 * ties broken by the most off-node weight leaving one node. */
typedef struct mpitopo__cart_score {
    double cost;
    double max_offnode;
} mpitopo__cart_score_t;

/* Score leaf_of_proc; scratch holds one double per node. */
void mpitopo__cart_score(const mpitopo_machine_t *m, const mpitopo_pattern_t *pat, mpitopo_weight_t weight,
                         const int *leaf_of_proc, double *scratch, mpitopo__cart_score_t *out);

/* a strictly better than b. */
static inline int mpitopo__cart_better(const mpitopo__cart_score_t *a, const mpitopo__cart_score_t *b)
{
    return a->cost < b->cost || (a->cost == b->cost && a->max_offnode < b->max_offnode);
}

#endif
