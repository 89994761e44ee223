/*
 * Dimensions of Cartesian grids: MPI_Dims_create done right, and its
 * node-aware variant (W. Gropp, "Using Node Information to Implement MPI
 * Cartesian Topologies", EuroMPI'18, section 2.1).
 *
 * The free (zero) entries of dims receive a non-increasing sequence
 * a_1 >= ... >= a_k of divisors of m = nprocs / prod(fixed entries). The
 * most balanced sequence has the smallest a_1 - a_k, then the smallest a_1,
 * then is lexicographically smallest (its large entries as small as
 * possible). A depth-first search over the divisors of m chooses the entries
 * in increasing order at every level, so the first sequence found with a
 * given (a_1 - a_k, a_1) is the lexicographically smallest, and it prunes
 * every partial sequence whose remainder cannot be split (sizes, prime
 * factors) or cannot beat the best found so far (the last entry is at most
 * the j-th root of what remains). Exact for every int nprocs; no
 * allocation; under a millisecond on the hardest inputs (2095133040, the
 * int with the most divisors, with any ndims up to 32).
 *
 * The node-aware variant scores every sequence at most twice as unbalanced
 * (a_1 / a_k) as the most balanced one by the cut of its best node box,
 * computed in closed form (no pattern is built), and keeps the least cut,
 * ties to the more balanced in the order above. It shares the search tree
 * and carries the box programme down it (see below). Measured over 24000
 * nprocs up to 2^31 - 1 (highly composite ones included): at most 3 ms
 * with up to 4 free entries, 7 ms with up to 8; up to about 65 ms with
 * 9 to 32 free entries, nprocs near 2^31 with many divisors and nodes of
 * about sqrt(nprocs) processes.
 */
#include "core/internal.h"

#include <stdlib.h>
#include <string.h>

/* No int below 2^31 has more divisors (2095133040 has 1600) or more
 * distinct prime factors (2 * 3 * ... * 23 = 223092870). */
#define MAX_DIVISORS 1600
#define MAX_PRIMES 9
#define NO_BOX INT64_MAX

typedef struct factors {
    int n;
    int p[MAX_PRIMES]; /* increasing */
    int e[MAX_PRIMES];
} factors_t;

/* ---------------------------------------------------------------------------
 * Integer helpers
 */

/* Trial division: fine for n < 2^31 (divisors up to 46341). */
static void factorize(int n, factors_t *f)
{
    f->n = 0;
    for (int p = 2; (long long)p * p <= n; p += p == 2 ? 1 : 2) {
        if (n % p != 0)
            continue;
        f->p[f->n] = p;
        f->e[f->n] = 0;
        while (n % p == 0) {
            n /= p;
            f->e[f->n]++;
        }
        f->n++;
    }
    if (n > 1) {
        f->p[f->n] = n;
        f->e[f->n++] = 1;
    }
}

static int compare_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/*
 * All divisors of the number factored in f; returns their count. Divisor
 * number t = sum_i e_i(t) * stride_i, where stride_i = prod_{j<i} (e_j + 1)
 * (mixed radix over the exponents), so multiplying by a divisor that keeps
 * the exponents in range adds its number.
 */
static int list_divisors(const factors_t *f, int *div)
{
    int n = 1;
    div[0] = 1;
    for (int i = 0; i < f->n; i++) {
        int stride = n;
        long long pk = 1;
        for (int k = 1; k <= f->e[i]; k++) {
            pk *= f->p[i];
            for (int t = 0; t < stride; t++)
                div[n++] = (int)(div[t] * pk);
        }
    }
    return n;
}

/* The same, increasing. */
static int sorted_divisors(const factors_t *f, int *div)
{
    int n = list_divisors(f, div);
    qsort(div, (size_t)n, sizeof *div, compare_int);
    return n;
}

/* Index of the first entry >= x in the increasing array a[0..n). */
static int lower_bound(const int *a, int n, long long x)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (a[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* x^j, or cap + 1 when that exceeds cap (x >= 1, cap < 2^31). */
static long long power_capped(long long x, int j, long long cap)
{
    long long v = 1;
    for (int t = 0; t < j && v <= cap; t++)
        v *= x;
    return v <= cap ? v : cap + 1;
}

/* Largest x with x^j <= r (r >= 1, j >= 1). */
static int floor_root(long long r, int j)
{
    if (j == 1)
        return (int)r;
    long long lo = 1, hi = 46341; /* 46341^2 > 2^31 > r */
    while (lo < hi) {
        long long mid = lo + (hi - lo + 1) / 2;
        if (power_capped(mid, j, r) <= r)
            lo = mid;
        else
            hi = mid - 1;
    }
    return (int)lo;
}

/* Smallest x with x^j >= r (r >= 1, j >= 1). */
static int ceil_root(long long r, int j)
{
    int x = floor_root(r, j);
    return power_capped(x, j, r) == r ? x : x + 1;
}

static long long gcd(long long a, long long b)
{
    while (b != 0) {
        long long t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Sum of p - 1 over the prime factors p of x, with multiplicity: the least
 * sum of c - 1 over factors c >= 2 whose product is x, as
 * (a - 1) + (b - 1) <= ab - 1. x divides the number factored in f. */
static long long prime_sum(const factors_t *f, long long x)
{
    long long sum = 0;
    for (int i = 0; i < f->n; i++)
        for (; x % f->p[i] == 0; x /= f->p[i])
            sum += f->p[i] - 1;
    return sum;
}

/*
 * Whether r (a divisor of the number factored in f) may be a product of j
 * factors, each in [lo, hi]: by size, and by primes (each factor holds at
 * most log_p(hi) factors p, so prime p must not occur more than j times
 * that). Necessary conditions only; the search finds out the rest.
 */
static int may_split(const factors_t *f, long long r, int j, long long lo, long long hi)
{
    if (lo > hi || power_capped(lo, j, r) > r || power_capped(hi, j, r) < r)
        return 0;
    for (int i = 0; i < f->n; i++) {
        int p = f->p[i], e = 0, per_factor = 0;
        for (long long q = r; q % p == 0; q /= p)
            e++;
        for (long long v = p; v <= hi; v *= p)
            per_factor++;
        if ((long long)per_factor * j < e)
            return 0;
    }
    return 1;
}

/* ---------------------------------------------------------------------------
 * Arguments
 */

/*
 * Check the arguments of both public functions (errors reported for func);
 * *free_product is nprocs / prod(non-zero entries), *nfree the number of
 * zero entries.
 */
static int check_dims(const char *func, int nprocs, int ndims, const int *dims, int *free_product,
                      int *nfree)
{
    if (nprocs < 1)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "nprocs = %d must be >= 1", nprocs);
    if (ndims < 0 || ndims > MPITOPO_MAX_DIMS)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "ndims = %d must be in [0, %d]", ndims,
                                 MPITOPO_MAX_DIMS);
    if (!dims && ndims > 0)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "dims is NULL with ndims = %d", ndims);
    long long fixed = 1;
    int zeros = 0;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0)
            return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "dims[%d] = %d must be >= 0", i, dims[i]);
        zeros += dims[i] == 0;
        if (dims[i] > 0 && fixed <= nprocs)
            fixed *= dims[i];
    }
    if (fixed > nprocs)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_RANGE, func,
                                 "the non-zero entries of dims multiply to more than nprocs = %d", nprocs);
    if (nprocs % fixed != 0)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_RANGE, func,
                                 "the non-zero entries of dims multiply to %lld, which does not divide nprocs = %d",
                                 fixed, nprocs);
    if (ndims == 0 && nprocs != 1)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_RANGE, func,
                                 "ndims = 0 makes a grid of 1 process, not nprocs = %d", nprocs);
    if (zeros == 0 && fixed != nprocs)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_RANGE, func,
                                 "every entry of dims is fixed and they multiply to %lld, not nprocs = %d", fixed,
                                 nprocs);
    *free_product = (int)(nprocs / fixed);
    *nfree = zeros;
    return MPITOPO_SUCCESS;
}

/* Copy dims to out with the zero entries replaced by seq[0..), in order. */
static void fill_free(int ndims, const int *dims, const int *seq, int *out)
{
    for (int i = 0, k = 0; i < ndims; i++)
        out[i] = dims[i] != 0 ? dims[i] : seq[k++];
}

/* Entries i.. of the sequence when their product r is 1 or they are one
 * entry: the only completion, if it respects [lo, prev]. */
static int complete_trivially(int *seq, int i, int k, int r, long long lo, int prev, int *done)
{
    *done = r == 1 || k - i == 1;
    if (!*done || r < lo || r > prev)
        return 0;
    for (int t = i; t < k; t++)
        seq[t] = t == i ? r : 1;
    return 1;
}

/* ---------------------------------------------------------------------------
 * The most balanced factorisation
 */

typedef struct balance {
    const factors_t *f;
    const int *div; /* divisors of m, increasing */
    int ndiv;
    int k;
    int seq[MPITOPO_MAX_DIMS];
    int best[MPITOPO_MAX_DIMS];
    int best_diff, best_max, found;
} balance_t;

/* Smallest last entry that lets a sequence starting with a beat the best. */
static long long balance_floor(const balance_t *s, int a)
{
    if (!s->found)
        return 1;
    return (long long)a - s->best_diff + (a >= s->best_max);
}

static void balance_record(balance_t *s)
{
    int a = s->seq[0], diff = a - s->seq[s->k - 1];
    if (!s->found || diff < s->best_diff || (diff == s->best_diff && a < s->best_max)) {
        s->found = 1;
        s->best_diff = diff;
        s->best_max = a;
        memcpy(s->best, s->seq, sizeof s->best);
    }
}

/* Entries i.. of the sequence: j = k - i of them, product r, each <= prev. */
static void balance_dfs(balance_t *s, int i, int r, int prev)
{
    int j = s->k - i;
    if (j == 0) {
        balance_record(s);
        return;
    }
    long long lo = balance_floor(s, s->seq[0]);
    int done;
    if (complete_trivially(s->seq, i, s->k, r, lo, prev, &done))
        balance_record(s);
    if (done || !may_split(s->f, r, j, lo, prev))
        return;
    long long from = ceil_root(r, j);
    for (int t = lower_bound(s->div, s->ndiv, from > lo ? from : lo); t < s->ndiv && s->div[t] <= prev; t++) {
        if (r % s->div[t] != 0)
            continue;
        s->seq[i] = s->div[t];
        balance_dfs(s, i + 1, r / s->div[t], s->div[t]);
    }
}

/*
 * The first entry a, from the smallest possible up: the spread of a
 * sequence starting with a is at least a - floor_root(m / a, k - 1), which
 * grows with a, so the loop stops once that cannot beat the best.
 */
static void balance_search(balance_t *s, int m)
{
    for (int t = lower_bound(s->div, s->ndiv, ceil_root(m, s->k)); t < s->ndiv; t++) {
        int a = s->div[t];
        if (s->found) {
            int spread = s->k == 1 ? 0 : a - floor_root(m / a, s->k - 1);
            if (spread > s->best_diff || (spread == s->best_diff && a >= s->best_max))
                break;
        }
        s->seq[0] = a;
        balance_dfs(s, 1, m / a, a);
    }
}

/* The most balanced non-increasing k-sequence with product m, into seq. */
static void most_balanced(int m, int k, int *seq)
{
    if (k == 0)
        return;
    factors_t f;
    int div[MAX_DIVISORS];
    factorize(m, &f);
    balance_t s = {.f = &f, .div = div, .ndiv = sorted_divisors(&f, div), .k = k};
    balance_search(&s, m);
    memcpy(seq, s.best, (size_t)k * sizeof *seq);
}

int mpitopo_dims_create(int nprocs, int ndims, int *dims)
{
    int m, k;
    int rc = check_dims(__func__, nprocs, ndims, dims, &m, &k);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    int seq[MPITOPO_MAX_DIMS];
    most_balanced(m, k, seq);
    fill_free(ndims, dims, seq, dims);
    return MPITOPO_SUCCESS;
}

/* ---------------------------------------------------------------------------
 * Best node box of a grid
 *
 * A box b (b_i dividing d_i, prod(b) = ppn) is also a split of the grid
 * into c_i = d_i / b_i boxes along each dimension, prod(c) = nprocs / ppn.
 * The cut of a box is a sum over dimensions, so the least cut is a
 * programme over the divisors of whichever of ppn and nprocs / ppn has
 * fewer (the "units" the dimensions share out): a layer holds, for every
 * divisor u, the least cut of the dimensions so far when their parts
 * multiply to u (NO_BOX when no box does). The smaller side keeps a layer
 * to a few dozen entries even for 2^31 - 1 processes.
 */

typedef struct grid {
    int ndims;
    long long nprocs;
    int units;          /* ppn or nprocs / ppn: what the parts multiply to */
    int by_nodes;       /* parts are box counts c_i (else box sides b_i) */
    const int *periods; /* NULL: all periodic */
    int dims[MPITOPO_MAX_DIMS];
} grid_t;

/* Work space of the programme; layers: (nfree + 1) x ndiv, for the search. */
typedef struct box_ws {
    factors_t f;             /* of units */
    int ndiv;
    int div[MAX_DIVISORS];   /* divisors of units, numbered as by list_divisors */
    int nparts;              /* of the dimension being stepped: */
    int parts[MAX_DIVISORS]; /* divisors of its dims entry that divide units, */
    int part_at[MAX_DIVISORS];         /* their numbers, */
    long long part_cut[MAX_DIVISORS];  /* and the cut of each */
    long long prime_sum[MAX_DIVISORS]; /* of each divisor of units */
    long long cut[MAX_DIVISORS];
    long long next[MAX_DIVISORS];
    long long layers[];
} box_ws_t;

/* The number of divisor x of units (see list_divisors). */
static int div_number(const box_ws_t *w, int x)
{
    int t = 0, stride = 1;
    for (int i = 0; i < w->f.n; i++) {
        for (; x % w->f.p[i] == 0; x /= w->f.p[i])
            t += stride;
        stride *= w->f.e[i] + 1;
    }
    return t;
}

/* Side of the box along dimension i when its part is x. */
static int box_side(const grid_t *g, int i, int x)
{
    return g->by_nodes ? g->dims[i] / x : x;
}

/*
 * Edges of the radius-1 star stencil that leave boxes of side b along
 * dimension i: per direction, nprocs / b when periodic (none when the box
 * spans the ring; with d == 2 both directions reach the same neighbour,
 * counted once), (d / b - 1) * (nprocs / d) when open.
 */
static long long side_cut(const grid_t *g, int i, int b)
{
    int d = g->dims[i];
    if (!g->periods || g->periods[i])
        return b < d ? (d == 2 ? 1 : 2) * (g->nprocs / b) : 0;
    return 2 * (long long)(d / b - 1) * (g->nprocs / d);
}

/* The parts of dimension i that divide `of`, with their numbers and cuts. */
static void box_parts(const grid_t *g, box_ws_t *w, int i, long long of)
{
    long long common = gcd(g->dims[i], of);
    w->nparts = 0;
    for (int t = 0; t < w->ndiv; t++) {
        if (common % w->div[t] != 0)
            continue;
        w->parts[w->nparts] = w->div[t];
        w->part_at[w->nparts] = t;
        w->part_cut[w->nparts++] = side_cut(g, i, box_side(g, i, w->div[t]));
    }
}

static void layer_start(const box_ws_t *w, long long *layer)
{
    layer[0] = 0;
    for (int t = 1; t < w->ndiv; t++)
        layer[t] = NO_BOX;
}

/* Layer `to` = layer `from` extended by dimension i. A part that divides
 * what the layer leaves (units / div[t]) keeps the exponents in range, so
 * the product's number is t + part_at. */
static void box_step(const grid_t *g, box_ws_t *w, int i, const long long *from, long long *to)
{
    if (g->dims[i] == 1) {
        memcpy(to, from, (size_t)w->ndiv * sizeof *to);
        return;
    }
    box_parts(g, w, i, g->units);
    for (int t = 0; t < w->ndiv; t++)
        to[t] = NO_BOX;
    for (int t = 0; t < w->ndiv; t++) {
        if (from[t] == NO_BOX)
            continue;
        int rest = g->units / w->div[t];
        for (int u = 0; u < w->nparts; u++) {
            if (rest % w->parts[u] != 0)
                continue;
            long long c = from[t] + w->part_cut[u];
            int at = t + w->part_at[u];
            if (c < to[at])
                to[at] = c;
        }
    }
}

/* The programme over dimensions [0, upto), into w->cut. */
static void box_programme(const grid_t *g, box_ws_t *w, int upto)
{
    layer_start(w, w->cut);
    for (int i = 0; i < upto; i++) {
        box_step(g, w, i, w->cut, w->next);
        memcpy(w->cut, w->next, (size_t)w->ndiv * sizeof *w->cut);
    }
}

/*
 * The box with the least cut `cut`, last dimension first: rerun the
 * programme up to dimension i and take the first part that keeps the
 * optimum. O(ndims) programmes, once, for the chosen grid.
 */
static void box_shape(const grid_t *g, box_ws_t *w, long long cut, int *box)
{
    int units = g->units;
    for (int i = g->ndims - 1; i >= 0; i--) {
        box[i] = 1;
        if (g->dims[i] == 1)
            continue;
        box_programme(g, w, i);
        box_parts(g, w, i, units);
        for (int u = 0; u < w->nparts; u++) {
            long long before = w->cut[div_number(w, units / w->parts[u])];
            if (before != NO_BOX && before + w->part_cut[u] == cut) {
                box[i] = box_side(g, i, w->parts[u]);
                units /= w->parts[u];
                cut = before;
                break;
            }
        }
    }
}

/* ---------------------------------------------------------------------------
 * Node-aware choice among the nearly balanced factorisations
 *
 * The search walks the same tree as the balanced one, without the bound on
 * the spread but with a_k >= a_1 min_ref / (2 max_ref). Layer i of the
 * programme covers the dimensions before the i-th free one, so each node of
 * the tree extends its parent's layer by one dimension (plus the fixed ones
 * that follow) instead of every leaf running the whole programme. The most
 * balanced sequence is scored first; a node whose completions all cut more
 * than the best leaf (nodes_bound) is cut off, and so is one whose
 * completions can only tie it without being more balanced.
 */

typedef struct nodes {
    balance_t bal;     /* divisors of m and k; bal.seq is the sequence being built */
    long long max_ref; /* largest and smallest entry of the most balanced */
    long long min_ref; /* sequence: a_1 / a_k <= 2 max_ref / min_ref */
    int free_at[MPITOPO_MAX_DIMS + 1];   /* positions of the zeros, then ndims */
    int fixed_after[MPITOPO_MAX_DIMS + 1]; /* largest fixed entry after free_at[i] */
    factors_t nprocs_f;
    long long nodes_sum;                    /* prime_sum(nprocs / ppn) */
    long long prefix_sum[MPITOPO_MAX_DIMS + 1]; /* prime_sum(dims before free_at[i]) */
    grid_t grid;
    box_ws_t *ws;
    int best[MPITOPO_MAX_DIMS];
    long long best_cut;
    int best_diff, best_max, found;
} nodes_t;

static long long *nodes_layer(const nodes_t *s, int i)
{
    return s->ws->layers + (size_t)i * (size_t)s->ws->ndiv;
}

/* Layer i + 1 from layer i: the free entry i, then the fixed entries up to
 * the next free one. i = -1 makes layer 0, the fixed entries before the
 * first free one. Steps alternate between the two scratch layers. */
static void nodes_advance(nodes_t *s, int i)
{
    box_ws_t *w = s->ws;
    long long *to = nodes_layer(s, i + 1);
    const long long *from = w->cut;
    int first = 0, last = s->free_at[i + 1];
    long long sum = 0;
    if (i < 0) {
        layer_start(w, w->cut);
    } else {
        first = s->free_at[i];
        s->grid.dims[first] = s->bal.seq[i];
        from = nodes_layer(s, i);
        sum = s->prefix_sum[i];
    }
    if (first == last)
        memcpy(to, from, (size_t)w->ndiv * sizeof *to);
    for (int d = first; d < last; d++) {
        long long *out = d == last - 1 ? to : from == w->cut ? w->next : w->cut;
        box_step(&s->grid, w, d, from, out);
        sum += prime_sum(&s->nprocs_f, s->grid.dims[d]);
        from = out;
    }
    s->prefix_sum[i + 1] = sum;
}

/*
 * A lower bound on the cut of every completion of layer i (i < k). With
 * the units placed so far, the dimensions still to come split the rest, U,
 * into c_j boxes each, and one with c_j > 1 cuts at least
 * 2 nprocs (c_j - 1) / d_j (equal when open or d_j = 2, more when
 * periodic). With d_j at most the largest entry to come and
 * sum (c_j - 1) >= prime_sum(U), the rest cuts at least
 * 2 nprocs prime_sum(U) / (largest entry to come).
 */
static long long nodes_bound(const nodes_t *s, int i)
{
    const box_ws_t *w = s->ws;
    const long long *layer = nodes_layer(s, i);
    long long biggest = s->bal.seq[i - 1] > s->fixed_after[i] ? s->bal.seq[i - 1] : s->fixed_after[i];
    long long least = NO_BOX;
    for (int t = 0; t < w->ndiv; t++) {
        if (layer[t] == NO_BOX)
            continue;
        /* prime_sum(U): U = units / div[t], or, counting box sides,
         * nprocs / ppn / (boxes along the dimensions so far). */
        long long rest = s->grid.by_nodes ? w->prime_sum[w->ndiv - 1] - w->prime_sum[t]
                                          : s->nodes_sum + w->prime_sum[t] - s->prefix_sum[i];
        if (rest > 0 && biggest < 2)
            continue; /* boxes left to place, no dimension to hold them */
        /* floor(2 nprocs rest / biggest), without overflow */
        long long q = 2 * rest / biggest, r = 2 * rest % biggest;
        long long bound = layer[t] + s->grid.nprocs * q + s->grid.nprocs * r / biggest;
        if (bound < least)
            least = bound;
    }
    return least;
}

/* Whether the sequence is more balanced than the best: smaller spread,
 * then smaller first entry, then lexicographically smaller. */
static int nodes_more_balanced(const nodes_t *s, int diff, int a)
{
    if (diff != s->best_diff || a != s->best_max)
        return diff < s->best_diff || (diff == s->best_diff && a < s->best_max);
    for (int i = 1; i < s->bal.k; i++)
        if (s->bal.seq[i] != s->best[i])
            return s->bal.seq[i] < s->best[i];
    return 0;
}

/* A complete sequence (layer k is ready): keep it if its cut is lower, or
 * equal and it is more balanced. */
static void nodes_leaf(nodes_t *s)
{
    int k = s->bal.k;
    long long cut = nodes_layer(s, k)[s->ws->ndiv - 1];
    if (cut == NO_BOX)
        return;
    int a = k > 0 ? s->bal.seq[0] : 0, diff = k > 0 ? a - s->bal.seq[k - 1] : 0;
    if (s->found && (cut > s->best_cut || (cut == s->best_cut && !nodes_more_balanced(s, diff, a))))
        return;
    s->found = 1;
    s->best_cut = cut;
    s->best_diff = diff;
    s->best_max = a;
    memcpy(s->best, s->bal.seq, sizeof s->best);
}

/* Smallest last entry of a sequence starting with a within the balance
 * limit: a / a_k <= 2 max_ref / min_ref. */
static long long window_floor(const nodes_t *s, int a)
{
    long long num = (long long)a * s->min_ref, den = 2 * s->max_ref;
    return (num + den - 1) / den;
}

/*
 * Smallest last entry for completions of layer i of a sequence starting
 * with a: within the balance limit, and when the layer already cuts as
 * much as the best leaf, more balanced than it. NO_BOX when the layer cuts
 * more.
 */
static long long nodes_floor(const nodes_t *s, int i, int a)
{
    long long lo = window_floor(s, a);
    if (!s->found)
        return lo;
    long long bound = nodes_bound(s, i);
    if (bound > s->best_cut)
        return NO_BOX;
    long long tie = (long long)a - s->best_diff + (a > s->best_max);
    return bound == s->best_cut && tie > lo ? tie : lo;
}

/* Entries i.. of the sequence (layer i is ready), as in balance_dfs but
 * from the largest entry down: the less balanced sequences, which tend to
 * cut less, come first and the bound prunes more. */
static void nodes_dfs(nodes_t *s, int i, int r, int prev)
{
    balance_t *b = &s->bal;
    if (i == b->k) {
        nodes_leaf(s);
        return;
    }
    long long lo = nodes_floor(s, i, b->seq[0]);
    int done;
    if (complete_trivially(b->seq, i, b->k, r, lo, prev, &done)) {
        for (int t = i; t < b->k; t++)
            nodes_advance(s, t);
        nodes_leaf(s);
    }
    if (done || !may_split(b->f, r, b->k - i, lo, prev))
        return;
    long long from = ceil_root(r, b->k - i);
    int least = lower_bound(b->div, b->ndiv, from > lo ? from : lo);
    for (int t = lower_bound(b->div, b->ndiv, (long long)prev + 1) - 1; t >= least; t--) {
        if (r % b->div[t] != 0)
            continue;
        b->seq[i] = b->div[t];
        nodes_advance(s, i);
        nodes_dfs(s, i + 1, r / b->div[t], b->div[t]);
    }
}

/*
 * The most balanced sequence first, then every first entry a from the
 * largest down that leaves room for a last entry within the balance limit.
 */
static void nodes_search(nodes_t *s, int m, const int *reference)
{
    balance_t *b = &s->bal;
    int k = b->k;
    nodes_advance(s, -1);
    memcpy(b->seq, reference, (size_t)k * sizeof *reference);
    for (int i = 0; i < k; i++)
        nodes_advance(s, i);
    nodes_leaf(s);
    if (k == 0)
        return;
    int least = lower_bound(b->div, b->ndiv, ceil_root(m, k));
    for (int t = b->ndiv - 1; t >= least; t--) {
        int a = b->div[t];
        if ((k == 1 ? a : floor_root(m / a, k - 1)) < window_floor(s, a))
            continue;
        b->seq[0] = a;
        nodes_advance(s, 0);
        nodes_dfs(s, 1, m / a, a);
    }
}

/* The work space: divisors of the smaller of ppn and nprocs / ppn (into
 * g->units and g->by_nodes), and k + 1 layers. */
static box_ws_t *nodes_workspace(grid_t *g, int ppn, int k)
{
    factors_t box, nodes;
    factorize(ppn, &box);
    factorize((int)(g->nprocs / ppn), &nodes);
    size_t nbox = 1, nnodes = 1;
    for (int i = 0; i < box.n; i++)
        nbox *= (size_t)box.e[i] + 1;
    for (int i = 0; i < nodes.n; i++)
        nnodes *= (size_t)nodes.e[i] + 1;
    g->by_nodes = nnodes < nbox;
    g->units = g->by_nodes ? (int)(g->nprocs / ppn) : ppn;
    size_t ndiv = g->by_nodes ? nnodes : nbox;
    box_ws_t *w = mpitopo__malloc(sizeof *w + (size_t)(k + 1) * ndiv * sizeof *w->layers);
    if (!w)
        return NULL;
    w->f = g->by_nodes ? nodes : box;
    w->ndiv = list_divisors(&w->f, w->div);
    for (int t = 0; t < w->ndiv; t++)
        w->prime_sum[t] = prime_sum(&w->f, w->div[t]);
    return w;
}

/* Search the grids of the caller's dims (m = product of the free entries,
 * k of them, most balanced `reference`); s->found = 0 when none has a box. */
static int nodes_choose(nodes_t *s, const int *dims, int m, int k, int ppn, const int *reference,
                        int *node_box)
{
    factors_t f;
    int div[MAX_DIVISORS];
    factorize(m, &f);
    s->bal = (balance_t){.f = &f, .div = div, .ndiv = sorted_divisors(&f, div), .k = k};
    s->ws = nodes_workspace(&s->grid, ppn, k);
    if (!s->ws)
        return MPITOPO_NOMEM("the node box work space");
    s->max_ref = k > 0 ? reference[0] : 1;
    s->min_ref = k > 0 ? reference[k - 1] : 1;
    for (int i = 0, n = 0; i <= s->grid.ndims; i++)
        if (i == s->grid.ndims || dims[i] == 0)
            s->free_at[n++] = i;
    for (int i = k, biggest = 0; i >= 0; i--) {
        s->fixed_after[i] = biggest;
        for (int d = i > 0 ? s->free_at[i - 1] : 0; d < s->free_at[i]; d++)
            biggest = dims[d] > biggest ? dims[d] : biggest;
    }
    factorize((int)s->grid.nprocs, &s->nprocs_f);
    s->nodes_sum = prime_sum(&s->nprocs_f, s->grid.nprocs / ppn);
    fill_free(s->grid.ndims, dims, reference, s->grid.dims);
    nodes_search(s, m, reference);
    if (s->found && node_box) {
        fill_free(s->grid.ndims, dims, s->best, s->grid.dims);
        box_shape(&s->grid, s->ws, s->best_cut, node_box);
    }
    mpitopo__free(s->ws);
    return MPITOPO_SUCCESS;
}

int mpitopo_dims_create_nodes(int nprocs, int procs_per_node, int ndims, int *dims, const int *periods,
                              int *node_box)
{
    int m, k;
    int rc = check_dims(__func__, nprocs, ndims, dims, &m, &k);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    if (procs_per_node < 1)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "procs_per_node = %d must be >= 1", procs_per_node);
    int reference[MPITOPO_MAX_DIMS];
    most_balanced(m, k, reference);
    nodes_t s = {.grid = {.ndims = ndims, .nprocs = nprocs, .periods = periods}};
    if (nprocs % procs_per_node == 0) {
        rc = nodes_choose(&s, dims, m, k, procs_per_node, reference, node_box);
        if (rc != MPITOPO_SUCCESS)
            return rc;
    }
    if (!s.found && node_box)
        memset(node_box, 0, (size_t)ndims * sizeof *node_box);
    fill_free(ndims, dims, s.found ? s.best : reference, dims);
    return MPITOPO_SUCCESS;
}
