/*
 * A true lower bound on the traffic that crosses the node level when a
 * Cartesian pattern is mapped onto nodes, whatever the mapping: the
 * edge-isoperimetric bound of the grid, per node, summed.
 *
 * Proof. Only the unit steps of the stencil are counted (offsets with one
 * non-zero coordinate whose shift is +1 or -1 along its dimension i, modulo
 * n_i when periodic); every other edge weighs >= 0, so dropping them keeps
 * a lower bound. W_i is the summed weight of the unit steps along i.
 *
 * Lines. A line along i is the n_i points that differ only in coordinate i.
 * For a node holding the set S of k points, let a_i be the number of lines
 * along i that S meets (the size of the projection of S that forgets
 * coordinate i) and f_i the number of lines S holds whole; f_i <= k / n_i.
 *  - Periodic i: a line is a cycle. A non-empty proper part of a cycle has,
 *    for each unit step along i (+1 or -1), at least one point whose step
 *    leaves the part. So S sends at least W_i (a_i - f_i) off-node along i,
 *    and f_i <= floor(k / n_i).
 *  - Open i: a line is a path. If r nodes share it, at least r - 1 adjacent
 *    pairs lie on different nodes and each gives one edge per unit step.
 *    Summed over the N_i = P / n_i lines: at least W_i (sum over nodes of
 *    a_i - N_i) along i.
 * Loomis-Whitney (discrete): k^(d-1) <= prod_i a_i. Besides,
 * ceil(k / n_i) <= a_i <= min(k, N_i) (a line holds n_i points).
 *
 * So with G(k) = min over integer a with those constraints of
 * sum_i W_i a_i - sum_{i periodic} W_i floor(k / n_i), every mapping sends
 * off-node at least sum over nodes G(k_node) - sum_{i open} W_i N_i.
 * When every leaf holds a process, each node's k is its size; otherwise the
 * occupancy depends on the mapping and the sum is bounded below by
 * P * min_{j <= largest node} G(j) / j.
 *
 * G is found by enumeration with pruning; when that would take too long the
 * continuous relaxation H(j) <= G(j) is used instead (a_i real, floor
 * dropped). H(j) / j never grows with j: with a_i = j b_i the constraints
 * become prod b_i >= 1 / j, 1 / n_i <= b_i <= 1, which only loosen as j
 * grows. So the minimum of G(j) / j over small j is bounded by H(j0) / j0
 * and only the largest sizes need G itself.
 */
#include "machine/machine_internal.h"
#include "metrics/metrics_internal.h"
#include "pattern/pattern_internal.h"

#include <math.h>
#include <string.h>

/* Node sizes below the largest for which G is computed exactly. */
#define EXACT_SIZES 128
/* Candidate points tried by one enumeration of G before falling back. */
#define ENUM_BUDGET 200000

typedef struct lb_grid {
    int d;                       /* dimensions longer than 1 */
    double n[MPITOPO_MAX_DIMS];  /* their lengths */
    double lines[MPITOPO_MAX_DIMS];
    int periodic[MPITOPO_MAX_DIMS];
    double w[MPITOPO_MAX_DIMS];  /* W_i: weight of the unit steps along i */
} lb_grid_t;

/* The unit step an offset makes, as its dimension, or -1 if it is none. */
static int unit_step_dim(const mpitopo__cart_t *c, const int *off)
{
    int dim = -1;
    for (int i = 0; i < c->ndims; i++) {
        if (off[i] == 0)
            continue;
        if (dim >= 0)
            return -1;
        dim = i;
    }
    if (dim < 0)
        return -1;
    long long n = c->dims[dim], s = off[dim];
    if (c->periods[dim])
        s = ((s % n) + n) % n;
    return s == 1 || s == -1 || (c->periods[dim] && s == n - 1) ? dim : -1;
}

/* The grid of the bound; unit_weights counts edges instead of weight. */
static void lb_grid(const mpitopo__cart_t *c, int nprocs, mpitopo_weight_t weight, int unit_weights,
                    lb_grid_t *g)
{
    double w[MPITOPO_MAX_DIMS] = {0};
    for (int o = 0; o < c->noffsets; o++) {
        int i = unit_step_dim(c, c->offsets + (size_t)o * c->ndims);
        if (i >= 0)
            w[i] += unit_weights ? 1.0 : mpitopo_edge_weight(weight, c->offset_bytes[o], c->offset_msgs[o]);
    }
    memset(g, 0, sizeof *g);
    for (int i = 0; i < c->ndims; i++) {
        if (c->dims[i] < 2)
            continue; /* every line is one point: nothing crosses along i */
        g->n[g->d] = c->dims[i];
        g->lines[g->d] = (double)nprocs / c->dims[i];
        g->periodic[g->d] = c->periods[i];
        g->w[g->d++] = w[i];
    }
}

/* sum_{i periodic} W_i * (j / n_i), floored or not. */
static double whole_lines(const lb_grid_t *g, double j, int floored)
{
    double s = 0;
    for (int i = 0; i < g->d; i++)
        if (g->periodic[i])
            s += g->w[i] * (floored ? floor(j / g->n[i]) : j / g->n[i]);
    return s;
}

/* H(j): the continuous relaxation, by bisection on the multiplier of
 * a_i = clamp(lambda / W_i, j / n_i, j); the infeasible end is returned,
 * so rounding errs low. Dimensions of weight 0 take a_i = j for free. */
static double relaxed(const lb_grid_t *g, double j)
{
    double target = (g->d - 1) * log(j), lo = 0, hi = 0;
    for (int i = 0; i < g->d; i++)
        hi = fmax(hi, j * g->w[i]);
    for (int it = 0; it < 200 && hi > 0; it++) {
        double mid = 0.5 * (lo + hi), logs = 0;
        for (int i = 0; i < g->d; i++) {
            double a = g->w[i] > 0 ? fmin(fmax(mid / g->w[i], j / g->n[i]), j) : j;
            logs += log(a);
        }
        if (logs >= target)
            hi = mid;
        else
            lo = mid;
    }
    double cost = 0;
    for (int i = 0; i < g->d; i++)
        cost += g->w[i] > 0 ? g->w[i] * fmin(fmax(lo / g->w[i], j / g->n[i]), j) : 0;
    return cost - whole_lines(g, j, 0);
}

typedef struct lb_enum {
    const lb_grid_t *g;
    double lo[MPITOPO_MAX_DIMS], hi[MPITOPO_MAX_DIMS];
    double target; /* prod a_i must reach j^(d-1) */
    double best;
    long visits;
} lb_enum_t;

/* Smallest sum W_i a_i over integer a_i in [lo_i, hi_i] for i >= dim with
 * prod a_i >= target / prod; the last dimension takes the least a that
 * reaches the target (rounded down a hair: erring low keeps a bound). */
static void enumerate(lb_enum_t *e, int dim, double prod, double cost)
{
    const lb_grid_t *g = e->g;
    if (cost >= e->best || ++e->visits > ENUM_BUDGET)
        return;
    if (dim == g->d - 1) {
        double a = fmax(e->lo[dim], ceil(e->target / prod * (1 - 1e-12)));
        if (a <= e->hi[dim])
            e->best = fmin(e->best, cost + g->w[dim] * a);
        return;
    }
    for (double a = e->lo[dim]; a <= e->hi[dim]; a++) {
        if (cost + g->w[dim] * a >= e->best)
            break;
        enumerate(e, dim + 1, prod * a, cost + g->w[dim] * a);
    }
}

/* Subsets of periodic dimensions tried for whole lines (2^d of them). */
#define MAX_MASK_DIMS 8

/* G(j) restricted to the nodes that hold whole lines along exactly the
 * periodic dimensions in `mask`, with f_i = floor(j / n_i) of them: a whole
 * line along i projects onto n_i distinct lines along every other
 * dimension, so those a_k are at least n_i. HUGE_VAL when none can; -1
 * when the enumeration ran out of budget. */
static double exact_masked(const lb_grid_t *g, double j, unsigned mask)
{
    lb_enum_t e = {.g = g, .target = pow(j, g->d - 1), .best = HUGE_VAL};
    double whole = 0;
    for (int i = 0; i < g->d; i++) {
        e.lo[i] = ceil(j / g->n[i]);
        e.hi[i] = fmin(j, floor(g->lines[i]));
    }
    for (int i = 0; i < g->d; i++) {
        if (!(mask >> i & 1))
            continue;
        if (!g->periodic[i] || j < g->n[i])
            return HUGE_VAL;
        whole += g->w[i] * floor(j / g->n[i]);
        for (int k = 0; k < g->d; k++)
            if (k != i)
                e.lo[k] = fmax(e.lo[k], g->n[i]);
    }
    /* Weightless dimensions at their maximum: they cost nothing. */
    for (int i = 0; i < g->d; i++)
        if (g->w[i] == 0)
            e.lo[i] = fmax(e.lo[i], e.hi[i]);
    enumerate(&e, 0, 1, 0);
    if (e.visits > ENUM_BUDGET)
        return -1;
    return e.best - whole;
}

/* G(j), or H(j) where the enumeration would be too long. Beyond
 * MAX_MASK_DIMS dimensions every periodic dimension is credited its whole
 * lines at once (weaker, still a bound). */
static double exact(const lb_grid_t *g, double j)
{
    if (g->d == 0)
        return 0;
    if (g->d > MAX_MASK_DIMS) {
        double r = exact_masked(g, j, 0);
        return r < 0 ? relaxed(g, j) : r - whole_lines(g, j, 1);
    }
    double best = HUGE_VAL;
    for (unsigned mask = 0; mask < 1u << g->d; mask++) {
        double r = exact_masked(g, j, mask);
        if (r < 0)
            return relaxed(g, j);
        best = fmin(best, r);
    }
    return best;
}

/* min over 1 <= j <= cap of G(j) / j: G for the EXACT_SIZES largest j,
 * H(j0) / j0 standing for every smaller j (see the proof above). */
static double least_rate(const lb_grid_t *g, int cap)
{
    int j0 = cap > EXACT_SIZES ? cap - EXACT_SIZES : 0;
    double rate = j0 > 0 ? relaxed(g, j0) / j0 : HUGE_VAL;
    for (int j = cap; j > j0; j--)
        rate = fmin(rate, exact(g, j) / j);
    return rate;
}

/* The bound for one weighting of the unit steps. Full machines: each node
 * holds its own size; otherwise P times the least rate. */
static double bound_of(const mpitopo_machine_t *m, const lb_grid_t *g, int nprocs)
{
    if (g->d == 0)
        return 0;
    const int *first = m->first[m->node_level];
    int nnodes = m->nunits[m->node_level], cap = 0;
    double sum = 0, open = 0;
    for (int u = 0; u < nnodes; u++)
        cap = first[u + 1] - first[u] > cap ? first[u + 1] - first[u] : cap;
    cap = cap < nprocs ? cap : nprocs;
    if (nprocs == m->nleaves) {
        int last = -1;
        double g_last = 0;
        for (int u = 0; u < nnodes; u++) {
            int k = first[u + 1] - first[u];
            if (k != last) /* nodes of one size usually come in runs */
                g_last = exact(g, k);
            last = k;
            sum += g_last;
        }
    } else {
        sum = nprocs * least_rate(g, cap);
    }
    for (int i = 0; i < g->d; i++)
        if (!g->periodic[i])
            open += g->w[i] * g->lines[i];
    return sum - open > 0 ? sum - open : 0;
}

/*
 * One set of s processes, wherever it lies: the same bound without the
 * global correction of open dimensions. Along an open dimension a part of
 * a path that is neither empty nor whole has two neighbouring points, one
 * in the set and one out; if the inner one steps +1 to the outer one, the
 * set sends over the +1 step (and receives over the -1 step), otherwise
 * the reverse. So each such line costs at least min(W+, W-) each way, a
 * path held whole nothing, and at most floor(s / n_i) paths are whole: an
 * open dimension of weight min(W+, W-) obeys the periodic rule above,
 * whose whole-line reasoning (a whole line projects onto n_i lines along
 * every other dimension) never used the wrap-around. Periodic dimensions
 * are as above. The bound holds for the weight leaving the set and for
 * the weight entering it (a partial cycle has a point whose -1 step, and
 * one whose +1 step, comes from outside).
 */
static void lb_set_grid(const mpitopo__cart_t *c, int nprocs, mpitopo_weight_t weight, lb_grid_t *g)
{
    double w[MPITOPO_MAX_DIMS][2] = {{0}};
    for (int o = 0; o < c->noffsets; o++) {
        const int *off = c->offsets + (size_t)o * c->ndims;
        int i = unit_step_dim(c, off);
        if (i >= 0)
            w[i][off[i] < 0] += mpitopo_edge_weight(weight, c->offset_bytes[o], c->offset_msgs[o]);
    }
    memset(g, 0, sizeof *g);
    for (int i = 0; i < c->ndims; i++) {
        if (c->dims[i] < 2)
            continue;
        g->n[g->d] = c->dims[i];
        g->lines[g->d] = (double)nprocs / c->dims[i];
        g->periodic[g->d] = 1;
        g->w[g->d++] = c->periods[i] ? w[i][0] + w[i][1] : fmin(w[i][0], w[i][1]);
    }
}

/*
 * Groups that talk all-to-all (mpitopo_pattern_subcomm_alltoall(), or any
 * stencil whose offsets are every non-zero shift of the periodic
 * dimensions they move along): the grid falls into groups of G points,
 * the cosets of those dimensions, and the G - 1 offsets take a point to
 * every other point of its group once. A set holding m_g points of group
 * g so sends at least w_min * m_g * (G - m_g) out of it (w_min: the
 * lightest offset), and receives as much. m (G - m) is concave, zero at 0
 * and G, so over sum m_g = s the least total puts every group but one at
 * 0 or G: w_min * r * (G - r) with r = s mod G. Returns G, or 0 when the
 * stencil is not of this kind.
 */
static long long alltoall_group(const mpitopo__cart_t *c, mpitopo_weight_t weight, double *w_min)
{
    long long group = 1;
    *w_min = HUGE_VAL;
    for (int i = 0; i < c->ndims; i++) {
        int moves = 0;
        for (int o = 0; o < c->noffsets && !moves; o++)
            moves = c->offsets[(size_t)o * c->ndims + i] % c->dims[i] != 0;
        if (!moves)
            continue;
        if (!c->periods[i])
            return 0;
        group *= c->dims[i];
    }
    for (int o = 0; o < c->noffsets; o++)
        *w_min = fmin(*w_min, mpitopo_edge_weight(weight, c->offset_bytes[o], c->offset_msgs[o]));
    /* Distinct offsets reach distinct peers (pattern_internal.h), none the
     * point itself: G - 1 of them are all the group. */
    return group > 1 && c->noffsets == group - 1 ? group : 0;
}

static double alltoall_bound(long long group, double w_min, int size)
{
    long long r = size % group;
    return w_min * (double)r * (double)(group - r);
}

int mpitopo__cart_set_bound(const mpitopo_pattern_t *pat, mpitopo_weight_t weight, int size,
                            int max_size, double *bound)
{
    *bound = 0;
    if (!pat->cart || size < 0 || max_size < 0)
        return 0;
    lb_grid_t g;
    lb_set_grid(pat->cart, pat->nprocs, weight, &g);
    if (g.d == 0)
        return 1;
    int cap = max_size < pat->nprocs ? max_size : pat->nprocs;
    double v = max_size > 0 ? least_rate(&g, cap)
                            : (size > 0 && size <= pat->nprocs ? exact(&g, size) : 0);
    double w_min;
    long long group = alltoall_group(pat->cart, weight, &w_min);
    if (group > 0 && max_size > 0) {
        /* the least per process of the group bound, by itself: the
         * minimum of a max is at least the max of the minima */
        double rate = HUGE_VAL;
        for (int j = 1; j <= cap; j++)
            rate = fmin(rate, alltoall_bound(group, w_min, j) / j);
        v = fmax(v, rate);
    } else if (group > 0 && size > 0 && size <= pat->nprocs) {
        v = fmax(v, alltoall_bound(group, w_min, size));
    }
    /* Erring low a hair for the floating-point sums. */
    *bound = v > 0 ? v * (1 - 1e-12) : 0;
    return 1;
}

int mpitopo_cart_node_bound(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pat,
                            mpitopo_weight_t weight, mpitopo_node_bound_t *bound)
{
    if (!machine || !pat || !bound)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "%s is NULL", !machine ? "machine" : !pat ? "cart_pattern" : "bound");
    if (!pat->cart)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "cart_pattern was not made by mpitopo_pattern_cart");
    if ((int)weight < MPITOPO_WEIGHT_BYTES || weight > MPITOPO_WEIGHT_UNIT)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "weight = %d is not a mpitopo_weight_t", (int)weight);
    if (pat->nprocs > machine->nleaves)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "the pattern has %d processes but the machine only %d leaves",
                            pat->nprocs, machine->nleaves);
    memset(bound, 0, sizeof *bound);
    if (machine->node_level < 0)
        return MPITOPO_SUCCESS;
    lb_grid_t g;
    lb_grid(pat->cart, pat->nprocs, weight, 1, &g);
    /* Edge counts are integers: a real bound rounds up (less a hair for
     * the floating-point sums above). */
    bound->offnode_edges = (int64_t)ceil(bound_of(machine, &g, pat->nprocs) * (1 - 1e-12) - 1e-9);
    lb_grid(pat->cart, pat->nprocs, weight, 0, &g);
    bound->offnode_weight = bound_of(machine, &g, pat->nprocs) * (1 - 1e-12);
    bound->found = 1;
    return MPITOPO_SUCCESS;
}
