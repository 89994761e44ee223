/*
 * Best box tiling for Cartesian patterns: tile the grid with identical boxes
 * of procs_per_node processes (one box per node) and count the traffic that
 * crosses box boundaries; the best box over all shapes is what a node-aware
 * Cartesian mapping of boxes reaches (Gropp, EuroMPI'18, section 2.1). It
 * is no lower bound: tilings by other shapes can cut less (nodebound.c
 * gives the true bound).
 *
 * The count for one shape is closed-form: dimensions are independent, so
 * the number of grid points x whose neighbour x+o exists is prod_i v_i(o_i),
 * and the number whose neighbour also lies in the same box is
 * prod_i s_i(o_i, b_i). The difference, weighted, summed over offsets, is
 * the cut. It is exact because the pattern keeps its stencil merged:
 * distinct offsets reach distinct neighbours (see mpitopo__cart_t).
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
    return mpitopo_edge_weight(weight, c->offset_bytes[o], c->offset_msgs[o]);
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
    const mpitopo__cart_t *cart;
    mpitopo_weight_t weight;
    const int *lower, *upper;
    int box[MPITOPO_MAX_DIMS];
    mpitopo__box_list_t *list;
    int keep;      /* capacity of list->boxes, in boxes */
    long shapes;
    int overflow;  /* more than MAX_SHAPES shapes */
    int nomem;
} search_t;

/* Keep the `keep` boxes of smallest cut, sorted by cut (insertion: lists
 * are short and the number of shapes is capped). */
static void consider(search_t *s)
{
    mpitopo__box_list_t *l = s->list;
    int nd = s->cart->ndims;
    double cut = shape_cut(s->cart, s->box, s->weight);
    int pos = l->count;
    while (pos > 0 && l->cut[pos - 1] > cut)
        pos--;
    if (pos >= s->keep)
        return;
    int last = l->count < s->keep ? l->count : s->keep - 1;
    memmove(l->cut + pos + 1, l->cut + pos, (size_t)(last - pos) * sizeof *l->cut);
    memmove(l->boxes + (size_t)(pos + 1) * nd, l->boxes + (size_t)pos * nd,
            (size_t)(last - pos) * nd * sizeof *l->boxes);
    l->cut[pos] = cut;
    memcpy(l->boxes + (size_t)pos * nd, s->box, (size_t)nd * sizeof *l->boxes);
    if (l->count < s->keep)
        l->count++;
}

/* Every box with lower_i | b_i | upper_i and prod(b) = remaining, by
 * recursion over dimensions. */
static void enumerate(search_t *s, int dim, long long remaining)
{
    const mpitopo__cart_t *c = s->cart;
    if (s->shapes > MAX_SHAPES) {
        s->overflow = 1;
        return;
    }
    if (dim == c->ndims) {
        if (remaining == 1) {
            s->shapes++;
            consider(s);
        }
        return;
    }
    int lo = s->lower ? s->lower[dim] : 1;
    int hi = s->upper ? s->upper[dim] : c->dims[dim];
    for (int b = lo; b <= hi && b <= remaining; b += lo) {
        if (hi % b == 0 && c->dims[dim] % b == 0 && remaining % b == 0) {
            s->box[dim] = b;
            enumerate(s, dim + 1, remaining / b);
        }
    }
}

int mpitopo__cart_boxes(const mpitopo__cart_t *cart, const int *lower, const int *upper, long long size,
                        mpitopo_weight_t weight, int keep, mpitopo__box_list_t *list)
{
    memset(list, 0, sizeof *list);
    if (keep < 1)
        keep = 1;
    int nd = cart->ndims > 0 ? cart->ndims : 1;
    list->boxes = mpitopo__malloc_array((size_t)keep * nd, sizeof *list->boxes);
    list->cut = mpitopo__malloc_array((size_t)keep, sizeof *list->cut);
    if (!list->boxes || !list->cut) {
        mpitopo__box_list_free(list);
        return MPITOPO_NOMEM("the box list");
    }
    search_t s = {.cart = cart, .weight = weight, .lower = lower, .upper = upper, .list = list, .keep = keep};
    if (size >= 1)
        enumerate(&s, 0, size);
    list->overflow = s.overflow;
    return MPITOPO_SUCCESS;
}

void mpitopo__box_list_free(mpitopo__box_list_t *list)
{
    mpitopo__free(list->boxes);
    mpitopo__free(list->cut);
    memset(list, 0, sizeof *list);
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
    mpitopo__box_list_t list;
    int rc = MPITOPO_SUCCESS;
    if (pat->nprocs % procs_per_node == 0)
        rc = mpitopo__cart_boxes(pat->cart, NULL, NULL, procs_per_node, weight, 1, &list);
    else
        memset(&list, 0, sizeof list);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    int best[MPITOPO_MAX_DIMS] = {0};
    int found = list.count > 0 && !list.overflow;
    if (found)
        memcpy(best, list.boxes, (size_t)pat->cart->ndims * sizeof *best);
    if (list.overflow)
        mpitopo__log(1, "best box tiling: more than %d box shapes, none given", MAX_SHAPES);
    mpitopo__box_list_free(&list);
    if (!found)
        return MPITOPO_SUCCESS;
    /* The partner counts need the tiling itself: one pass over the pattern. */
    int *node_of_proc = mpitopo__malloc_array((size_t)pat->nprocs, sizeof *node_of_proc);
    if (!node_of_proc)
        return MPITOPO_NOMEM("the tiling");
    mpitopo__node_traffic_t t;
    tile(pat->cart, best, pat->nprocs, node_of_proc);
    rc = mpitopo__node_traffic(pat, node_of_proc, weight, &t);
    mpitopo__free(node_of_proc);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    bound->found = 1;
    bound->ndims = pat->cart->ndims;
    memcpy(bound->box, best, sizeof bound->box);
    bound->offnode_edges = t.offnode_edges;
    bound->offnode_weight = t.offnode_weight;
    bound->offnode_partners_avg = t.offnode_partners.avg;
    return MPITOPO_SUCCESS;
}
