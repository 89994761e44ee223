/*
 * Best-box bound for Cartesian patterns: tile the grid with identical boxes
 * of procs_per_node processes (one box per node) and count the traffic that
 * crosses box boundaries; the best box over all shapes is what a node-aware
 * Cartesian mapping can reach (Gropp, EuroMPI'18, section 2.1).
 *
 * The count for one shape is closed-form: dimensions are independent, so
 * the number of grid points x whose neighbour x+o exists is prod_i v_i(o_i),
 * and the number whose neighbour also lies in the same box is
 * prod_i s_i(o_i, b_i). The difference, weighted, summed over offsets, is
 * the cut. This is exact unless two offsets reach the same neighbour (a
 * short periodic dimension, or an offset listed twice) or an offset wraps
 * onto the point itself: the pattern merged or dropped those edges, so then
 * every shape is evaluated on the pattern itself.
 */
#include "metrics/metrics_internal.h"
#include "pattern/pattern_internal.h"

#include <string.h>

#define MAX_SHAPES 1000000

/* Points x in [0, n) whose neighbour x + o exists. */
static double valid_points(int n, int periodic, int o)
{
    if (periodic)
        return n;
    int a = o < 0 ? -o : o;
    return a >= n ? 0 : n - a;
}

/* Points x in [0, n) whose neighbour x + o exists and lies in the same
 * block of b (b divides n). */
static double same_block_points(int n, int periodic, int o, int b)
{
    int blocks = n / b;
    if (!periodic) {
        int a = o < 0 ? -o : o;
        return a >= b ? 0 : (double)blocks * (b - a);
    }
    long long shift = ((long long)o % n + n) % n;
    long long q = shift / b, r = shift % b;
    /* Point t of a block moves q blocks on if t + r < b, q + 1 blocks otherwise. */
    double same = 0;
    if (q % blocks == 0)
        same += (double)(b - r);
    if ((q + 1) % blocks == 0)
        same += (double)r;
    return same * blocks;
}

static double offset_weight(const mpitopo__cart_t *c, int o, mpitopo_weight_t weight)
{
    return weight == MPITOPO_WEIGHT_BYTES ? c->offset_bytes[o] : 1.0;
}

static double shape_cut(const mpitopo__cart_t *c, const int *box, mpitopo_weight_t weight)
{
    double cut = 0;
    for (int o = 0; o < c->noffsets; o++) {
        const int *off = c->offsets + (size_t)o * c->ndims;
        double all = 1, same = 1;
        for (int i = 0; i < c->ndims; i++) {
            all *= valid_points(c->dims[i], c->periods[i], off[i]);
            same *= same_block_points(c->dims[i], c->periods[i], off[i], box[i]);
        }
        cut += offset_weight(c, o, weight) * (all - same);
    }
    return cut;
}

/* Offsets o and o' reach the same process from any point (o' may be the
 * zero offset, i.e. the point itself) when they agree in open dimensions
 * and modulo the extent in periodic ones. */
static int same_peer(const mpitopo__cart_t *c, const int *o, const int *q)
{
    for (int i = 0; i < c->ndims; i++) {
        long long d = (long long)o[i] - (q ? q[i] : 0);
        if (c->periods[i] ? d % c->dims[i] != 0 : d != 0)
            return 0;
    }
    return 1;
}

/* True when two offsets reach the same neighbour, or one reaches the point
 * itself: the pattern merged or dropped those edges, so per-offset counting
 * would be wrong. */
static int degenerate(const mpitopo__cart_t *c)
{
    for (int a = 0; a < c->noffsets; a++) {
        const int *o = c->offsets + (size_t)a * c->ndims;
        if (same_peer(c, o, NULL))
            return 1;
        for (int b = a + 1; b < c->noffsets; b++)
            if (same_peer(c, o, c->offsets + (size_t)b * c->ndims))
                return 1;
    }
    return 0;
}

/* Node of every process when the grid is tiled by `box`. */
static void tile(const mpitopo__cart_t *c, const int *box, int nprocs, int *node_of_proc)
{
    for (int p = 0; p < nprocs; p++) {
        int rest = p, node = 0, stride = 1;
        for (int i = c->ndims - 1; i >= 0; i--) {
            int coord = rest % c->dims[i];
            rest /= c->dims[i];
            node += (coord / box[i]) * stride;
            stride *= c->dims[i] / box[i];
        }
        node_of_proc[p] = node;
    }
}

typedef struct search {
    const mpitopo_pattern_t *pat;
    mpitopo_weight_t weight;
    int exact;          /* evaluate every shape on the pattern */
    int *node_of_proc;  /* scratch for exact evaluation */
    int box[MPITOPO_MAX_DIMS];
    int best[MPITOPO_MAX_DIMS];
    double best_cut;
    long shapes;
    int found;
    int rc;
} search_t;

static void consider(search_t *s)
{
    const mpitopo__cart_t *c = s->pat->cart;
    double cut;
    if (s->exact) {
        mpitopo__node_traffic_t t;
        tile(c, s->box, s->pat->nprocs, s->node_of_proc);
        s->rc = mpitopo__node_traffic(s->pat, s->node_of_proc, s->weight, &t);
        cut = t.offnode_weight;
    } else {
        cut = shape_cut(c, s->box, s->weight);
    }
    if (!s->found || cut < s->best_cut) {
        s->found = 1;
        s->best_cut = cut;
        memcpy(s->best, s->box, sizeof s->best);
    }
}

/* Every box with b_i dividing dims_i and prod(b) = remaining, by recursion
 * over dimensions. */
static void enumerate(search_t *s, int dim, long long remaining)
{
    const mpitopo__cart_t *c = s->pat->cart;
    if (s->rc != MPITOPO_SUCCESS || s->shapes >= MAX_SHAPES)
        return;
    if (dim == c->ndims) {
        if (remaining == 1) {
            s->shapes++;
            consider(s);
        }
        return;
    }
    for (int b = 1; b <= c->dims[dim] && b <= remaining; b++) {
        if (c->dims[dim] % b == 0 && remaining % b == 0) {
            s->box[dim] = b;
            enumerate(s, dim + 1, remaining / b);
        }
    }
}

int mpitopo_cart_box_bound(const mpitopo_pattern_t *pat, int procs_per_node, mpitopo_weight_t weight,
                           mpitopo_box_bound_t *bound)
{
    if (!pat || !bound)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "%s is NULL", !pat ? "cart_pattern" : "bound");
    if (!pat->cart)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "cart_pattern was not made by mpitopo_pattern_cart");
    if (procs_per_node < 1)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "procs_per_node = %d must be >= 1", procs_per_node);
    if ((int)weight < MPITOPO_WEIGHT_BYTES || weight > MPITOPO_WEIGHT_UNIT)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "weight = %d is not a mpitopo_weight_t", (int)weight);
    memset(bound, 0, sizeof *bound);
    search_t s = {.pat = pat, .weight = weight, .exact = degenerate(pat->cart), .rc = MPITOPO_SUCCESS};
    s.node_of_proc = mpitopo__malloc_array((size_t)pat->nprocs, sizeof *s.node_of_proc);
    if (!s.node_of_proc)
        return MPITOPO_NOMEM("the tiling");
    if (pat->nprocs % procs_per_node == 0)
        enumerate(&s, 0, procs_per_node);
    if (s.rc == MPITOPO_SUCCESS && s.found) {
        mpitopo__node_traffic_t t;
        tile(pat->cart, s.best, pat->nprocs, s.node_of_proc);
        s.rc = mpitopo__node_traffic(pat, s.node_of_proc, weight, &t);
        bound->found = 1;
        bound->ndims = pat->cart->ndims;
        memcpy(bound->box, s.best, sizeof bound->box);
        bound->offnode_edges = t.offnode_edges;
        bound->offnode_weight = t.offnode_weight;
        bound->offnode_partners_avg = t.offnode_partners.avg;
    }
    mpitopo__free(s.node_of_proc);
    return s.rc;
}
