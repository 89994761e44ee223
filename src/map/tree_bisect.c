/*
 * Multilevel bisection with exact part sizes, the workhorse of the tree
 * mapper's top-down path. Heavy-edge matching coarsens the graph, greedy
 * graph growing splits the coarsest graph (best of a few seeds), and
 * Fiduccia-Mattheyses passes refine every level on the way back up. At the
 * finest level, where every vertex is one process, the split is first made
 * exact, then refined by moves that keep it within one process of exact,
 * only an exact prefix of the moves being kept: Kernighan-Lin swaps done one
 * half at a time, so the sizes the machine asks for are met exactly.
 */
#include "map/tree_internal.h"

#include <math.h>
#include <string.h>

#define COARSEST 64    /* stop coarsening below this many vertices */
#define MAX_LEVELS 64  /* coarsening levels kept at most */
#define GROW_TRIES 4   /* seeds tried for the initial split (4x on graphs coarse enough) */
#define FM_PASSES 8    /* refinement passes per level at most */
#define FM_STALL 100   /* moves without improvement before a pass gives up */
#define MIN_GAIN 1e-3  /* relative cut improvement worth another pass */

/* ---- refinement -------------------------------------------------------- */

/* Work arrays sized for the finest graph, shared by every level. */
typedef struct work {
    const mpitopo__tgraph_t *g; /* the level being refined */
    unsigned char *side;
    double *gain; /* weight to the other side minus weight to the own side */
    unsigned char *locked;
    int *moves;
    mpitopo__heap_t heap[2]; /* candidates to leave side 0 and side 1 */
    int64_t wa, target;
    double cut;
    mpitopo__rng_t rng;
} work_t;

/* Gains, cut and side-0 weight from scratch; with `push`, the boundary
 * vertices (those with a neighbour on the other side) enter their heap. */
static void compute_gains(work_t *w, int push)
{
    const mpitopo__tgraph_t *g = w->g;
    double cut2 = 0;
    w->wa = 0;
    for (int v = 0; v < g->n; v++) {
        double ext = 0, in = 0;
        unsigned char s = w->side[v];
        for (int64_t e = g->offs[v]; e < g->offs[v + 1]; e++) {
            if (w->side[g->adj[e]] != s)
                ext += g->w[e];
            else
                in += g->w[e];
        }
        w->gain[v] = ext - in;
        cut2 += ext;
        if (s == 0)
            w->wa += g->vw[v];
        if (push && ext > 0)
            mpitopo__heap_push(&w->heap[s], v);
    }
    w->cut = cut2 / 2;
}

/* Move v to the other side, updating the cut, the weights and the gains
 * (and heap positions) of its unlocked neighbours. */
static void move(work_t *w, int v)
{
    const mpitopo__tgraph_t *g = w->g;
    int from = w->side[v];
    if (w->heap[from].pos[v] >= 0)
        mpitopo__heap_remove(&w->heap[from], v);
    w->side[v] = (unsigned char)(1 - from);
    w->wa += from == 0 ? -g->vw[v] : g->vw[v];
    w->cut -= w->gain[v];
    w->gain[v] = -w->gain[v];
    for (int64_t e = g->offs[v]; e < g->offs[v + 1]; e++) {
        int u = g->adj[e];
        if (w->locked[u])
            continue;
        /* u on v's old side: the edge now leaves u's side; else it joins it. */
        w->gain[u] += w->side[u] == from ? 2 * g->w[e] : -2 * g->w[e];
        mpitopo__heap_t *hp = &w->heap[w->side[u]];
        if (hp->pos[u] >= 0) {
            mpitopo__heap_up(hp, hp->pos[u]);
            mpitopo__heap_down(hp, hp->pos[u]);
        } else if (w->side[u] == from) {
            mpitopo__heap_push(hp, u);
        }
    }
}

static int64_t imbalance(const work_t *w, int64_t wa)
{
    return wa > w->target ? wa - w->target : w->target - wa;
}

/* The heap to move from next: the best gain among the moves that keep the
 * split within tol of the target, or that bring it closer; -1 if none. */
static int pick_side(const work_t *w, int64_t tol)
{
    int best = -1;
    for (int s = 0; s < 2; s++) {
        const mpitopo__heap_t *hp = &w->heap[s];
        if (hp->n == 0)
            continue;
        int v = hp->h[0];
        int64_t after = imbalance(w, w->wa + (s == 0 ? -w->g->vw[v] : w->g->vw[v]));
        if (after > tol && after >= imbalance(w, w->wa))
            continue;
        if (best < 0 || w->gain[v] > w->gain[w->heap[best].h[0]])
            best = s;
    }
    return best;
}

/*
 * One Fiduccia-Mattheyses pass: move boundary vertices best gain first,
 * each at most once, then keep the prefix of moves with the lowest cut
 * among the states whose imbalance is at most keep_tol (ties: the more
 * balanced). Returns 1 when the pass improved the split.
 */
static int fm_pass(work_t *w, int64_t tol, int64_t keep_tol)
{
    compute_gains(w, 1);
    double start = w->cut, best = imbalance(w, w->wa) <= keep_tol ? w->cut : INFINITY;
    int64_t best_imb = imbalance(w, w->wa), start_imb = best_imb;
    int nmoves = 0, best_len = 0, stall = 0, s;
    while (stall < FM_STALL && (s = pick_side(w, tol)) >= 0) {
        int v = w->heap[s].h[0];
        move(w, v);
        w->locked[v] = 1;
        w->moves[nmoves++] = v;
        int64_t imb = imbalance(w, w->wa);
        if (imb <= keep_tol && (w->cut < best || (w->cut <= best && imb < best_imb))) {
            best = w->cut;
            best_imb = imb;
            best_len = nmoves;
            stall = 0;
        } else {
            stall++;
        }
    }
    /* Never balanced: keep every move, they brought the split closer. */
    if (best == INFINITY)
        best_len = nmoves;
    for (int k = nmoves - 1; k >= best_len; k--)
        w->side[w->moves[k]] ^= 1;
    for (int k = 0; k < nmoves; k++)
        w->locked[w->moves[k]] = 0;
    mpitopo__heap_clear(&w->heap[0]);
    mpitopo__heap_clear(&w->heap[1]);
    return best_len > 0 && (best < start - MIN_GAIN * start || best_imb < start_imb);
}

static void refine(work_t *w, int64_t tol, int64_t keep_tol)
{
    for (int pass = 0; pass < FM_PASSES && fm_pass(w, tol, keep_tol); pass++)
        ;
}

/* At the finest level: move the best-gain vertices off the heavier side
 * until the split is exact (or cannot come closer). */
static void make_exact(work_t *w)
{
    const mpitopo__tgraph_t *g = w->g;
    compute_gains(w, 0);
    int from = w->wa > w->target ? 0 : 1;
    for (int v = 0; v < g->n; v++)
        if (w->side[v] == from)
            mpitopo__heap_push(&w->heap[from], v);
    while (w->heap[from].n > 0 && w->wa != w->target) {
        int v = w->heap[from].h[0];
        if (imbalance(w, w->wa + (from == 0 ? -g->vw[v] : g->vw[v])) >= imbalance(w, w->wa))
            break;
        move(w, v);
    }
    mpitopo__heap_clear(&w->heap[0]);
    mpitopo__heap_clear(&w->heap[1]);
}

/* ---- initial split ----------------------------------------------------- */

/* Grow side 0 from `seed` by the best-gain vertex until it holds about
 * target; a new random vertex restarts the growth when the frontier dies
 * (disconnected graphs). */
static void grow(work_t *w, int seed)
{
    const mpitopo__tgraph_t *g = w->g;
    memset(w->side, 1, (size_t)g->n);
    compute_gains(w, 0);
    int v = seed;
    while (v >= 0) {
        int64_t after = w->wa + g->vw[v];
        if (w->wa > 0 && after - w->target > w->target - w->wa)
            break;
        move(w, v);
        if (w->wa >= w->target)
            break;
        v = w->heap[1].n > 0 ? w->heap[1].h[0] : -1;
        /* The frontier is empty: start again from any vertex still on side 1. */
        for (int tries = 0; v < 0 && tries < 2 * g->n + 8; tries++) {
            int u = (int)mpitopo__rng_below(&w->rng, (uint64_t)g->n);
            v = w->side[u] == 1 ? u : -1;
        }
        for (int u = 0; v < 0 && u < g->n; u++)
            v = w->side[u] == 1 ? u : -1;
    }
    mpitopo__heap_clear(&w->heap[1]);
}

static int64_t max_vw(const mpitopo__tgraph_t *g)
{
    int64_t m = 1;
    for (int v = 0; v < g->n; v++)
        m = g->vw[v] > m ? g->vw[v] : m;
    return m;
}

/* Best of a few grown splits of the coarsest graph, each refined. */
static void initial_split(work_t *w, unsigned char *best_side)
{
    const mpitopo__tgraph_t *g = w->g;
    int64_t tol = max_vw(g);
    double best = INFINITY;
    int64_t best_imb = INT64_MAX;
    int tries = g->n <= COARSEST ? 4 * GROW_TRIES : GROW_TRIES;
    for (int t = 0; t < tries; t++) {
        grow(w, (int)mpitopo__rng_below(&w->rng, (uint64_t)g->n));
        /* Unit weights (no coarsening happened): exact splits only. */
        refine(w, tol, tol > 1 ? tol : 0);
        compute_gains(w, 0);
        int64_t imb = imbalance(w, w->wa);
        int within = imb <= (tol > 1 ? tol : 0), best_within = best_imb <= (tol > 1 ? tol : 0);
        if ((within && !best_within) || (within == best_within && (w->cut < best || (w->cut <= best && imb < best_imb)))) {
            best = w->cut;
            best_imb = imb;
            memcpy(best_side, w->side, (size_t)g->n);
        }
    }
    memcpy(w->side, best_side, (size_t)g->n);
}

/* ---- coarsening -------------------------------------------------------- */

/* Heavy-edge matching in random order; cmap[v] receives the coarse vertex
 * of v and rep[c] the first fine vertex of c, match[v] its partner (v when
 * alone). Returns the number of coarse vertices. */
static int match_heavy(const mpitopo__tgraph_t *g, mpitopo__rng_t *rng, int64_t limit, int *perm, int *match,
                       int *cmap, int *rep)
{
    for (int v = 0; v < g->n; v++) {
        perm[v] = v;
        match[v] = -1;
    }
    for (int i = g->n - 1; i > 0; i--) {
        int j = (int)mpitopo__rng_below(rng, (uint64_t)i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    int nc = 0;
    for (int i = 0; i < g->n; i++) {
        int v = perm[i], best = v;
        if (match[v] >= 0)
            continue;
        double bw = -1;
        for (int64_t e = g->offs[v]; e < g->offs[v + 1]; e++) {
            int u = g->adj[e];
            if (match[u] < 0 && u != v && g->w[e] > bw && (int64_t)g->vw[u] + g->vw[v] <= limit) {
                bw = g->w[e];
                best = u;
            }
        }
        match[v] = best;
        match[best] = v;
        cmap[v] = cmap[best] = nc;
        rep[nc++] = v;
    }
    return nc;
}

/* Add the edges of fine vertex v to coarse vertex c's row (mark[x] is the
 * position of coarse neighbour x in the row when >= row). */
static int64_t add_row(const mpitopo__tgraph_t *g, const int *cmap, int v, int c, int64_t row, int64_t end,
                       int64_t *mark, mpitopo__tgraph_t *cg)
{
    for (int64_t e = g->offs[v]; e < g->offs[v + 1]; e++) {
        int x = cmap[g->adj[e]];
        if (x == c)
            continue;
        if (mark[x] >= row) {
            if (cg->adj)
                cg->w[mark[x]] += g->w[e];
            continue;
        }
        mark[x] = end;
        if (cg->adj) {
            cg->adj[end] = x;
            cg->w[end] = g->w[e];
        }
        end++;
    }
    return end;
}

/* The coarse graph of a matching: first count the rows, then fill them. */
static int contract(const mpitopo__tgraph_t *g, const int *cmap, const int *rep, const int *match, int nc,
                    int64_t *mark, mpitopo__tgraph_t *cg)
{
    mpitopo__tgraph_t counted = {.n = nc};
    for (int pass = 0; pass < 2; pass++) {
        mpitopo__tgraph_t *out = pass ? cg : &counted;
        int64_t end = 0;
        for (int c = 0; c < nc; c++)
            mark[c] = -1;
        for (int c = 0; c < nc; c++) {
            int64_t row = end;
            int v = rep[c];
            end = add_row(g, cmap, v, c, row, end, mark, out);
            if (match[v] != v)
                end = add_row(g, cmap, match[v], c, row, end, mark, out);
            if (pass) {
                cg->offs[c + 1] = end;
                cg->vw[c] = g->vw[v] + (match[v] != v ? g->vw[match[v]] : 0);
            }
        }
        if (pass == 0 && mpitopo__tgraph_alloc(cg, nc, end) != MPITOPO_SUCCESS)
            return MPITOPO_NOMEM("a coarse graph");
    }
    return MPITOPO_SUCCESS;
}

/* ---- driver ------------------------------------------------------------ */

typedef struct levels {
    int count;
    mpitopo__tgraph_t g[MAX_LEVELS]; /* g[0] is the caller's, not owned */
    int *cmap[MAX_LEVELS];           /* fine vertex of g[i] -> vertex of g[i+1] */
} levels_t;

static void levels_free(levels_t *lv)
{
    for (int i = 0; i < lv->count; i++) {
        if (i > 0)
            mpitopo__tgraph_free(&lv->g[i]);
        mpitopo__free(lv->cmap[i]);
    }
}

/* Coarse vertices weigh at most `limit` so that a split near the target
 * stays reachable at every level. */
static int coarsen(levels_t *lv, mpitopo__rng_t *rng, int64_t limit, int *perm, int *match, int *rep,
                   int64_t *mark)
{
    int rc = MPITOPO_SUCCESS;
    while (lv->count < MAX_LEVELS && lv->g[lv->count - 1].n > COARSEST) {
        const mpitopo__tgraph_t *g = &lv->g[lv->count - 1];
        int *cmap = mpitopo__malloc_array((size_t)g->n, sizeof *cmap);
        if (!cmap)
            return MPITOPO_NOMEM("the coarsening map");
        int nc = match_heavy(g, rng, limit, perm, match, cmap, rep);
        /* Too little shrinkage: the graph is as coarse as it will get. */
        if (nc > g->n - g->n / 20) {
            mpitopo__free(cmap);
            break;
        }
        lv->cmap[lv->count - 1] = cmap;
        rc = contract(g, cmap, rep, match, nc, mark, &lv->g[lv->count]);
        if (rc != MPITOPO_SUCCESS)
            return rc;
        lv->count++;
    }
    return rc;
}

/* Split the coarsest level, then project and refine down to the finest. */
static void uncoarsen(levels_t *lv, work_t *w, unsigned char *tmp)
{
    int top = lv->count - 1;
    w->g = &lv->g[top];
    initial_split(w, tmp);
    for (int i = top - 1; i >= 0; i--) {
        memcpy(tmp, w->side, (size_t)lv->g[i + 1].n);
        for (int v = 0; v < lv->g[i].n; v++)
            w->side[v] = tmp[lv->cmap[i][v]];
        w->g = &lv->g[i];
        if (i > 0) {
            int64_t tol = max_vw(w->g);
            refine(w, tol, tol);
        }
    }
    make_exact(w);
    refine(w, 1, 0);
}

int mpitopo__tree_bisect(const mpitopo__tgraph_t *g, int64_t target, uint64_t seed, unsigned char *side)
{
    int n = g->n;
    if (n == 0)
        return MPITOPO_SUCCESS;
    levels_t lv = {.count = 1, .g = {*g}};
    size_t sn = (size_t)n;
    work_t w = {.side = side, .target = target};
    mpitopo__rng_seed(&w.rng, seed);
    w.gain = mpitopo__malloc_array(sn, sizeof *w.gain);
    w.locked = mpitopo__calloc(sn, 1);
    w.moves = mpitopo__malloc_array(sn, sizeof *w.moves);
    int *ints = mpitopo__malloc_array(sn * 6, sizeof *ints);
    int64_t *mark = mpitopo__malloc_array(sn, sizeof *mark);
    unsigned char *tmp = mpitopo__malloc(sn);
    int rc = w.gain && w.locked && w.moves && ints && mark && tmp ? MPITOPO_SUCCESS
                                                                 : MPITOPO_NOMEM("the bisection work arrays");
    if (rc != MPITOPO_SUCCESS)
        goto cleanup;
    for (int s = 0; s < 2; s++) {
        w.heap[s] = (mpitopo__heap_t){0, ints + (size_t)s * sn, ints + (size_t)(2 + s) * sn, w.gain};
        for (int v = 0; v < n; v++)
            w.heap[s].pos[v] = -1;
    }
    int64_t total = 0;
    for (int v = 0; v < n; v++)
        total += g->vw[v];
    int64_t small = target < total - target ? target : total - target;
    rc = coarsen(&lv, &w.rng, small / 4 > 1 ? small / 4 : 1, ints + 4 * sn, ints + 5 * sn, w.moves, mark);
    if (rc == MPITOPO_SUCCESS)
        uncoarsen(&lv, &w, tmp);
cleanup:
    levels_free(&lv);
    mpitopo__free(w.gain);
    mpitopo__free(w.locked);
    mpitopo__free(w.moves);
    mpitopo__free(ints);
    mpitopo__free(mark);
    mpitopo__free(tmp);
    return rc;
}
