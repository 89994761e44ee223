/* The arguments of MPI_Dist_graph_create_adjacent for one process of a
 * pattern: its in- and out-neighbours with integer weights. */
#include "pattern/pattern_internal.h"

#include <limits.h>
#include <math.h>

/* The factor that brings the pattern's largest weight down to INT_MAX, or
 * 1 when every weight fits already. Computed over the whole pattern so that
 * every process that asks gets the same scale. */
static double weight_scale(const mpitopo_pattern_t *p, mpitopo_weight_t weight)
{
    double largest = 0;
    for (int64_t k = 0; k < p->nedges; k++) {
        double w = mpitopo_edge_weight(weight, p->bytes[k], p->msgs[k]);
        if (w > largest)
            largest = w;
    }
    return largest > (double)INT_MAX ? (double)INT_MAX / largest : 1.0;
}

/* An edge in the pattern is communication, so its integer weight is at
 * least 1 even when it rounds to 0 (a 0.3-byte average, a tiny weight
 * scaled down). The upper clamp guards against the scaled product rounding
 * a hair above INT_MAX. */
static int int_weight(double w, double scale)
{
    double r = floor(w * scale + 0.5);
    if (r < 1)
        return 1;
    return r > (double)INT_MAX ? INT_MAX : (int)r;
}

/* Position of proc in the sorted row of p, or -1. */
static int64_t find_in_row(const mpitopo_pattern_t *pat, int p, int proc)
{
    int64_t lo = pat->offs[p], hi = pat->offs[p + 1];
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (pat->dst[mid] < proc)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < pat->offs[p + 1] && pat->dst[lo] == proc ? lo : -1;
}

/* The in-edges of proc, scanning the rows in process order so the sources
 * come out increasing. With src == NULL it only counts them. */
static int in_edges(const mpitopo_pattern_t *pat, int proc, mpitopo_weight_t weight,
                    double scale, int *src, int *w)
{
    int n = 0;
    for (int p = 0; p < pat->nprocs; p++) {
        int64_t k = find_in_row(pat, p, proc);
        if (k < 0)
            continue;
        if (src) {
            src[n] = p;
            w[n] = int_weight(mpitopo_edge_weight(weight, pat->bytes[k], pat->msgs[k]), scale);
        }
        n++;
    }
    return n;
}

/* Two arrays of n ints, or both NULL when n == 0. */
static int alloc_pair(int n, int **a, int **b, const char *what)
{
    *a = *b = NULL;
    if (n == 0)
        return MPITOPO_SUCCESS;
    *a = mpitopo__malloc_array((size_t)n, sizeof **a);
    *b = mpitopo__malloc_array((size_t)n, sizeof **b);
    if (*a && *b)
        return MPITOPO_SUCCESS;
    mpitopo__free(*a);
    mpitopo__free(*b);
    *a = *b = NULL;
    return MPITOPO_NOMEM(what);
}

static int check_args(const mpitopo_pattern_t *pattern, int proc, mpitopo_weight_t weight,
                      const void *const *outs)
{
    if (!pattern)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "pattern must not be NULL");
    for (int i = 0; i < 6; i++)
        if (!outs[i])
            return MPITOPO_FAIL(MPITOPO_ERR_ARG,
                                "indegree, sources, sourceweights, outdegree, destinations "
                                "and destweights must not be NULL");
    if (weight != MPITOPO_WEIGHT_BYTES && weight != MPITOPO_WEIGHT_MESSAGES &&
        weight != MPITOPO_WEIGHT_UNIT)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "weight = %d is not bytes, messages or unit",
                            (int)weight);
    if (proc < 0 || proc >= pattern->nprocs)
        return MPITOPO_FAIL(MPITOPO_ERR_RANGE, "proc = %d out of range [0, %d)", proc,
                            pattern->nprocs);
    return MPITOPO_SUCCESS;
}

int mpitopo_pattern_adjacent(const mpitopo_pattern_t *pattern, int proc, mpitopo_weight_t weight,
                             int *indegree, int **sources, int **sourceweights, int *outdegree,
                             int **destinations, int **destweights)
{
    const void *outs[6] = {indegree, sources, sourceweights, outdegree, destinations, destweights};
    int *src = NULL, *srcw = NULL, *dst = NULL, *dstw = NULL;
    int rc = check_args(pattern, proc, weight, outs);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    double scale = weight_scale(pattern, weight);
    int nin = in_edges(pattern, proc, weight, scale, NULL, NULL);
    int64_t begin = pattern->offs[proc];
    int nout = (int)(pattern->offs[proc + 1] - begin);
    if ((rc = alloc_pair(nin, &src, &srcw, "the sources")) != MPITOPO_SUCCESS ||
        (rc = alloc_pair(nout, &dst, &dstw, "the destinations")) != MPITOPO_SUCCESS)
        goto cleanup;
    in_edges(pattern, proc, weight, scale, src, srcw);
    for (int i = 0; i < nout; i++) {
        dst[i] = pattern->dst[begin + i];
        dstw[i] = int_weight(
            mpitopo_edge_weight(weight, pattern->bytes[begin + i], pattern->msgs[begin + i]), scale);
    }
    *indegree = nin;
    *sources = src;
    *sourceweights = srcw;
    *outdegree = nout;
    *destinations = dst;
    *destweights = dstw;
    return MPITOPO_SUCCESS;
cleanup:
    mpitopo__free(src);
    mpitopo__free(srcw);
    mpitopo__free(dst);
    mpitopo__free(dstw);
    return rc;
}
