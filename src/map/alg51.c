/*
 * Alg. 5.1 of S. H. Mirsadeghi's PhD thesis (Queen's University 2017,
 * section 5.3.3, "Congestion-based mapping heuristic"): congestion-based
 * greedy mapping of one node's processes onto the PEs (cores or GPUs) of a
 * tree with a bandwidth per link, with these choices where the thesis is
 * silent or inconsistent:
 *  - volumes and the neighbour indicator are symmetric: vol[i][j] = c_ij +
 *    c_ji, neighbours when vol > 0 (the thesis's n_ij tests c_ij alone, and
 *    it loads the undirected tree links without separating directions);
 *  - a 0/0 average counts as 0;
 *  - ties: the lowest process, then the lowest PE.
 * Each step picks the unmapped process q with the largest
 *   delta(q) = (avg volume to mapped neighbours) - (avg volume to unmapped ones),
 * then the free PE whose tentative placement gives the smallest maximum
 * congestion (load / bandwidth over every tree link), the traffic to each
 * mapped neighbour loading the links of the tree path between their PEs.
 *
 * Extension (off != NULL, not the thesis's): process i also sends off[i]
 * to other nodes, which loads the path from its PE to the root (the node's
 * way out); counted in the tentative and committed loads like the traffic
 * to a mapped neighbour. Extension (sum_ties): PEs of equal maximum
 * congestion go to the one adding the least total congestion (sum over the
 * links it loads of the added load / bandwidth), then the lowest. MAGC
 * runs the four variants and keeps the one of least congestion, the
 * thesis's own (off NULL, sum_ties 0) on ties (mpitopo__alg51_best()),
 * then a local search on it (refine()): exchanges of two processes' PEs
 * and of two subtrees' contents, kept when they lower the maximum
 * congestion or keep it and lower the number of links at it, then the sum
 * of load^2 / bandwidth (a greedy on a maximum meets many ties and can
 * fill a switch with a row of four where a 2x2 block sends less out; the
 * maximum alone is a plateau there, the secondary keys lead off it).
 *
 * Cost: the averages are kept per process and updated over p_new's
 * neighbours (O(p) per step for the argmax). Link loads only grow, so the
 * maximum congestion after a tentative placement is the larger of the
 * current maximum and the congestion of the links it touches: evaluating
 * one PE costs O(d l) for d mapped neighbours and paths of l links, a step
 * O(p d l), the whole O(p^2 d l) as in the thesis.
 */
#include "machine/gpu_internal.h"

#include <math.h>
#include <string.h>

typedef struct work {
    int *adj_start, *adj; /* neighbours of each process (vol > 0), CSR */
    double *sum_m, *sum_u;
    int *cnt_m, *cnt_u;
    char *mapped, *pe_used;
    double *load, *delta; /* per vertex (its link to the parent) */
    int *touched;         /* vertices with a non-zero delta */
} work_t;

static void work_free(work_t *w)
{
    mpitopo__free(w->adj_start);
    mpitopo__free(w->adj);
    mpitopo__free(w->sum_m);
    mpitopo__free(w->sum_u);
    mpitopo__free(w->cnt_m);
    mpitopo__free(w->cnt_u);
    mpitopo__free(w->mapped);
    mpitopo__free(w->pe_used);
    mpitopo__free(w->load);
    mpitopo__free(w->delta);
    mpitopo__free(w->touched);
}

static int work_alloc(work_t *w, const mpitopo__ptree_t *t, int n, const double *vol)
{
    memset(w, 0, sizeof *w);
    size_t nn = (size_t)(n > 0 ? n : 1), nv = (size_t)t->nvert;
    w->adj_start = mpitopo__calloc(nn + 1, sizeof *w->adj_start);
    w->sum_m = mpitopo__calloc(nn, sizeof *w->sum_m);
    w->sum_u = mpitopo__calloc(nn, sizeof *w->sum_u);
    w->cnt_m = mpitopo__calloc(nn, sizeof *w->cnt_m);
    w->cnt_u = mpitopo__calloc(nn, sizeof *w->cnt_u);
    w->mapped = mpitopo__calloc(nn, 1);
    w->pe_used = mpitopo__calloc((size_t)(t->npe > 0 ? t->npe : 1), 1);
    w->load = mpitopo__calloc(nv, sizeof *w->load);
    w->delta = mpitopo__calloc(nv, sizeof *w->delta);
    w->touched = mpitopo__malloc_array(nv, sizeof *w->touched);
    if (!w->adj_start || !w->sum_m || !w->sum_u || !w->cnt_m || !w->cnt_u || !w->mapped ||
        !w->pe_used || !w->load || !w->delta || !w->touched)
        return MPITOPO_NOMEM("Alg. 5.1 work arrays");
    size_t m = 0;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++)
            if (j != i && vol[(size_t)i * (size_t)n + (size_t)j] > 0) {
                m++;
                w->sum_u[i] += vol[(size_t)i * (size_t)n + (size_t)j];
                w->cnt_u[i]++;
            }
        w->adj_start[i + 1] = (int)m;
    }
    w->adj = mpitopo__malloc_array(m ? m : 1, sizeof *w->adj);
    if (!w->adj)
        return MPITOPO_NOMEM("Alg. 5.1 neighbour lists");
    m = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (j != i && vol[(size_t)i * (size_t)n + (size_t)j] > 0)
                w->adj[m++] = j;
    return MPITOPO_SUCCESS;
}

/* Adds x to every link of the tree path between vertices a and b, into
 * add[]; the links first touched are appended to touched[*nt]. */
static void add_path(const mpitopo__ptree_t *t, int a, int b, double x, double *add,
                     int *touched, int *nt)
{
    while (a != b) {
        int *v = t->depth[a] >= t->depth[b] ? &a : &b;
        if (add[*v] == 0)
            touched[(*nt)++] = *v;
        add[*v] += x;
        *v = t->parent[*v];
    }
}

static double avg(double sum, int cnt)
{
    return cnt ? sum / cnt : 0.0;
}

/* The unmapped process with the largest delta, ties to the lowest. */
static int pick_process(const work_t *w, int n)
{
    int best = -1;
    double best_delta = 0;
    for (int q = 0; q < n; q++) {
        if (w->mapped[q])
            continue;
        double d = avg(w->sum_m[q], w->cnt_m[q]) - avg(w->sum_u[q], w->cnt_u[q]);
        if (best < 0 || d > best_delta) {
            best = q;
            best_delta = d;
        }
    }
    return best;
}

/* Places p on the free PE of least resulting maximum congestion. */
static int pick_pe(const mpitopo__ptree_t *t, work_t *w, const double *vol, const double *off,
                   int sum_ties, int n, int p, const int *pe_of, double cur_max)
{
    int best = -1;
    double best_cost = 0, best_sum = 0;
    for (int pe = 0; pe < t->npe; pe++) {
        if (w->pe_used[pe])
            continue;
        int nt = 0;
        for (int k = w->adj_start[p]; k < w->adj_start[p + 1]; k++) {
            int r = w->adj[k];
            if (w->mapped[r])
                add_path(t, t->pe_vertex[pe], t->pe_vertex[pe_of[r]],
                         vol[(size_t)p * (size_t)n + (size_t)r], w->delta, w->touched, &nt);
        }
        if (off && off[p] > 0)
            add_path(t, t->pe_vertex[pe], 0, off[p], w->delta, w->touched, &nt);
        double cost = cur_max, sum = 0;
        for (int k = 0; k < nt; k++) {
            int v = w->touched[k];
            double c = (w->load[v] + w->delta[v]) / t->bw[v];
            if (c > cost)
                cost = c;
            sum += w->delta[v] / t->bw[v];
            w->delta[v] = 0;
        }
        if (best < 0 || cost < best_cost || (sum_ties && cost == best_cost && sum < best_sum)) {
            best = pe;
            best_cost = cost;
            best_sum = sum;
        }
    }
    return best;
}

int mpitopo__alg51(const mpitopo__ptree_t *t, int n, const double *vol, const double *off,
                   int sum_ties, int *pe_of)
{
    if (n > t->npe)
        return MPITOPO_FAIL(MPITOPO_ERR_INTERNAL, "%d processes for %d PEs", n, t->npe);
    work_t w;
    int rc = work_alloc(&w, t, n, vol);
    double cur_max = 0;
    for (int step = 0; step < n && !rc; step++) {
        int p = pick_process(&w, n);
        int pe = pick_pe(t, &w, vol, off, sum_ties, n, p, pe_of, cur_max);
        /* Commit: p's traffic to its mapped neighbours joins the loads. */
        int nt = 0;
        for (int k = w.adj_start[p]; k < w.adj_start[p + 1]; k++) {
            int r = w.adj[k];
            double x = vol[(size_t)p * (size_t)n + (size_t)r];
            if (w.mapped[r])
                add_path(t, t->pe_vertex[pe], t->pe_vertex[pe_of[r]], x, w.delta, w.touched,
                         &nt);
            else {
                /* r sees p move from its unmapped to its mapped neighbours. */
                w.sum_u[r] -= x;
                w.cnt_u[r]--;
                w.sum_m[r] += x;
                w.cnt_m[r]++;
            }
        }
        if (off && off[p] > 0)
            add_path(t, t->pe_vertex[pe], 0, off[p], w.delta, w.touched, &nt);
        for (int k = 0; k < nt; k++) {
            int v = w.touched[k];
            w.load[v] += w.delta[v];
            w.delta[v] = 0;
            double c = w.load[v] / t->bw[v];
            if (c > cur_max)
                cur_max = c;
        }
        pe_of[p] = pe;
        w.mapped[p] = 1;
        w.pe_used[pe] = 1;
    }
    work_free(&w);
    return rc;
}

double mpitopo__ptree_mc(const mpitopo__ptree_t *t, int n, const double *vol, const int *pe_of,
                         const double *extra, double *load)
{
    for (int v = 0; v < t->nvert; v++)
        load[v] = extra ? extra[v] : 0.0;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            double x = vol[(size_t)i * (size_t)n + (size_t)j];
            if (x <= 0)
                continue;
            int a = t->pe_vertex[pe_of[i]], b = t->pe_vertex[pe_of[j]];
            while (a != b) {
                int *v = t->depth[a] >= t->depth[b] ? &a : &b;
                load[*v] += x;
                *v = t->parent[*v];
            }
        }
    double mc = 0;
    for (int v = 1; v < t->nvert; v++)
        if (load[v] / t->bw[v] > mc)
            mc = load[v] / t->bw[v];
    return mc;
}

/* ---- exchange refinement (an extension; see mpitopo__alg51_best) ---------- */

typedef struct edges {
    int m;
    int *a, *b;
    double *x;
} edges_t;

/* Lexicographic cost of a placement: the maximum congestion (mc), then the
 * number of links at it (nmax), then the sum over links of load^2 /
 * bandwidth (ss). The two last keys tell apart placements of one maximum,
 * so that exchanges can leave a plateau: fewer links at the maximum is a
 * step towards lowering it, a lower ss a spread of the load. */
typedef struct lex {
    double mc, ss;
    int nmax;
} lex_t;

#define LEX_EPS 1e-12

static lex_t lex_cost(const mpitopo__ptree_t *t, const edges_t *e, int n, const double *off,
                      const int *pe_of, double *load)
{
    memset(load, 0, (size_t)t->nvert * sizeof *load);
    for (int k = 0; k < e->m; k++) {
        int a = t->pe_vertex[pe_of[e->a[k]]], b = t->pe_vertex[pe_of[e->b[k]]];
        while (a != b) {
            int *v = t->depth[a] >= t->depth[b] ? &a : &b;
            load[*v] += e->x[k];
            *v = t->parent[*v];
        }
    }
    for (int i = 0; off && i < n; i++)
        for (int x = t->pe_vertex[pe_of[i]]; x > 0; x = t->parent[x])
            load[x] += off[i];
    lex_t c = {0, 0, 0};
    for (int v = 1; v < t->nvert; v++) {
        double x = load[v] / t->bw[v];
        c.mc = x > c.mc ? x : c.mc;
        c.ss += load[v] * x;
    }
    for (int v = 1; v < t->nvert && c.mc > 0; v++)
        c.nmax += load[v] / t->bw[v] >= c.mc * (1 - LEX_EPS);
    return c;
}

/* Whether a is lower than b (relative tolerance on the real keys). */
static int lex_less(lex_t a, lex_t b)
{
    if (a.mc < b.mc * (1 - LEX_EPS))
        return 1;
    if (a.mc > b.mc * (1 + LEX_EPS))
        return 0;
    if (a.nmax != b.nmax)
        return a.nmax < b.nmax;
    return a.ss < b.ss * (1 - LEX_EPS);
}

/* The PEs under every vertex, ascending (CSR: pes[start[v]..start[v+1])). */
typedef struct subtrees {
    int *start, *pes;
} subtrees_t;

static int subtrees_build(const mpitopo__ptree_t *t, subtrees_t *s)
{
    size_t nv = (size_t)t->nvert, total = 0;
    s->start = mpitopo__calloc(nv + 1, sizeof *s->start);
    int *fill = mpitopo__calloc(nv, sizeof *fill);
    for (int i = 0; s->start && fill && i < t->npe; i++)
        for (int x = t->pe_vertex[i]; x >= 0; x = t->parent[x], total++)
            s->start[x + 1]++;
    s->pes = mpitopo__malloc_array(total ? total : 1, sizeof *s->pes);
    if (!s->start || !fill || !s->pes) {
        mpitopo__free(fill);
        return MPITOPO_NOMEM("the refinement's subtrees");
    }
    for (size_t v = 0; v < nv; v++)
        s->start[v + 1] += s->start[v];
    for (int i = 0; i < t->npe; i++)
        for (int x = t->pe_vertex[i]; x >= 0; x = t->parent[x])
            s->pes[s->start[x] + fill[x]++] = i;
    mpitopo__free(fill);
    return MPITOPO_SUCCESS;
}

/* Whether the subtrees of u and v are disjoint (neither is an ancestor). */
static int disjoint(const mpitopo__ptree_t *t, int u, int v)
{
    while (t->depth[u] > t->depth[v])
        u = t->parent[u];
    while (t->depth[v] > t->depth[u])
        v = t->parent[v];
    return u != v;
}

/* Exchanges the processes of PEs pa[k] and pb[k], k < len (owner -1: a
 * free PE). */
static void exchange(int *pe_of, int *owner, const int *pa, const int *pb, int len)
{
    for (int k = 0; k < len; k++) {
        int i = owner[pa[k]], j = owner[pb[k]];
        owner[pa[k]] = j;
        owner[pb[k]] = i;
        if (i >= 0)
            pe_of[i] = pb[k];
        if (j >= 0)
            pe_of[j] = pa[k];
    }
}

/* One move of the local search: exchange the PEs pa[] and pb[] (len each),
 * kept when it lowers the cost *cur (then the new cost), else undone.
 * Whether it was kept. */
static int try_exchange(const mpitopo__ptree_t *t, const edges_t *e, int n, const double *off, int *pe_of,
                        int *owner, double *load, const int *pa, const int *pb, int len, lex_t *cur)
{
    exchange(pe_of, owner, pa, pb, len);
    lex_t c = lex_cost(t, e, n, off, pe_of, load);
    if (lex_less(c, *cur)) {
        *cur = c;
        return 1;
    }
    exchange(pe_of, owner, pa, pb, len);
    return 0;
}

/* Local search on the lexicographic cost (lex_cost): exchanges the PEs of
 * two processes, or moves one to a free PE, and exchanges the contents of
 * two disjoint subtrees of as many PEs (their k-th PEs in PE order), which
 * moves a group of neighbours at once where single exchanges would first
 * have to raise the cost (two rows of four under two switches become two
 * 2x2 blocks by exchanging a board of each). A move is kept when it lowers
 * the cost; moves in a fixed order (processes and PEs, then vertex pairs,
 * lowest first), at most 8 passes over them: deterministic, and the
 * maximum congestion never rises. */
static int refine(const mpitopo__ptree_t *t, int n, const double *vol, const double *off,
                  int *pe_of, double *load)
{
    edges_t e = {0, NULL, NULL, NULL};
    subtrees_t s = {NULL, NULL};
    size_t cap = 1;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            cap += vol[(size_t)i * (size_t)n + (size_t)j] > 0;
    e.a = mpitopo__malloc_array(cap, sizeof *e.a);
    e.b = mpitopo__malloc_array(cap, sizeof *e.b);
    e.x = mpitopo__malloc_array(cap, sizeof *e.x);
    int *owner = mpitopo__malloc_array((size_t)t->npe, sizeof *owner);
    int rc = e.a && e.b && e.x && owner ? subtrees_build(t, &s) : MPITOPO_NOMEM("the refinement");
    for (int i = 0; i < n && !rc; i++)
        for (int j = i + 1; j < n; j++)
            if (vol[(size_t)i * (size_t)n + (size_t)j] > 0) {
                e.a[e.m] = i;
                e.b[e.m] = j;
                e.x[e.m++] = vol[(size_t)i * (size_t)n + (size_t)j];
            }
    lex_t cur = {0, 0, 0};
    if (!rc) {
        for (int pe = 0; pe < t->npe; pe++)
            owner[pe] = -1;
        for (int i = 0; i < n; i++)
            owner[pe_of[i]] = i;
        cur = lex_cost(t, &e, n, off, pe_of, load);
    }
    for (int pass = 0, better = 1; !rc && better && pass < 8 && cur.mc > 0; pass++) {
        better = 0;
        for (int i = 0; i < n; i++)
            for (int pe = 0; pe < t->npe; pe++) {
                int old = pe_of[i];
                if (pe == old || (owner[pe] >= 0 && owner[pe] < i))
                    continue; /* an exchange with a lower process: tried from it */
                better |= try_exchange(t, &e, n, off, pe_of, owner, load, &old, &pe, 1, &cur);
            }
        for (int u = 1; u < t->nvert; u++) {
            int len = s.start[u + 1] - s.start[u];
            if (len < 2)
                continue; /* one PE: the exchanges above */
            for (int v = u + 1; v < t->nvert; v++) {
                if (s.start[v + 1] - s.start[v] != len || !disjoint(t, u, v))
                    continue;
                const int *pa = s.pes + s.start[u], *pb = s.pes + s.start[v];
                int busy = 0;
                for (int k = 0; k < len && !busy; k++)
                    busy = owner[pa[k]] >= 0 || owner[pb[k]] >= 0;
                if (!busy)
                    continue;
                better |= try_exchange(t, &e, n, off, pe_of, owner, load, pa, pb, len, &cur);
            }
        }
    }
    mpitopo__free(e.a);
    mpitopo__free(e.b);
    mpitopo__free(e.x);
    mpitopo__free(owner);
    mpitopo__free(s.start);
    mpitopo__free(s.pes);
    return rc;
}

int mpitopo__alg51_best(const mpitopo__ptree_t *t, int n, const double *vol, const double *off,
                        int refine_swaps, int *pe_of, double *mc)
{
    int *alt = mpitopo__malloc_array((size_t)n + 1, sizeof *alt);
    double *extra = mpitopo__malloc_array((size_t)t->nvert, sizeof *extra);
    double *load = mpitopo__malloc_array((size_t)t->nvert, sizeof *load);
    int rc = alt && extra && load ? MPITOPO_SUCCESS : MPITOPO_NOMEM("Alg. 5.1 candidates");
    double best = 0;
    for (int variant = 0; variant < 4 && !rc; variant++) {
        const double *o = variant & 1 ? off : NULL;
        if ((variant & 1) && !off)
            continue;
        rc = mpitopo__alg51(t, n, vol, o, variant >> 1, alt);
        if (rc)
            break;
        double x = mpitopo__node_mc(t, n, vol, off, alt, extra, load);
        if (variant == 0 || x < best) {
            best = x;
            memcpy(pe_of, alt, (size_t)n * sizeof *alt);
        }
    }
    /* Last candidate: the best so far after the local search, which never
     * raises its maximum congestion (kept on a tie: fewer links at it). */
    if (!rc && refine_swaps) {
        memcpy(alt, pe_of, (size_t)n * sizeof *alt);
        rc = refine(t, n, vol, off, alt, load);
        double x = rc ? best : mpitopo__node_mc(t, n, vol, off, alt, extra, load);
        if (!rc && x <= best) {
            best = x;
            memcpy(pe_of, alt, (size_t)n * sizeof *alt);
        }
    }
    if (mc)
        *mc = best;
    mpitopo__free(alt);
    mpitopo__free(extra);
    mpitopo__free(load);
    return rc;
}

double mpitopo__node_mc(const mpitopo__ptree_t *t, int n, const double *vol, const double *off,
                        const int *pe_of, double *extra, double *load)
{
    memset(extra, 0, (size_t)t->nvert * sizeof *extra);
    for (int i = 0; off && i < n; i++)
        for (int x = t->pe_vertex[pe_of[i]]; x > 0; x = t->parent[x])
            extra[x] += off[i];
    return mpitopo__ptree_mc(t, n, vol, pe_of, extra, load);
}
