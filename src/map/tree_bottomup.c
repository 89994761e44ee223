/*
 * The bottom-up path of the tree mapper, after TreeMatch (Mercier &
 * Jeannot, EuroMPI'11, section 3.3): from the leaves up, the objects of a
 * level (processes first, then the groups made at the level below) are
 * grouped into the units of the level above, each group grown greedily from
 * a seed by the object most connected to it, so that as much weight as
 * possible stays inside. The groups become the objects of the next level,
 * their graph the sum of their members' edges. Unlike TreeMatch the graph
 * stays sparse and the tree may be irregular: every unit has a shape (the
 * multiset of its children's shapes, as a hash), a group is grown for one
 * unit and takes only objects whose shape that unit's children still need,
 * so at the end every group fits a unit of its shape and is placed by
 * matching shapes from the top down.
 */
#include "map/tree_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct keyed {
    uint64_t key;
    int idx;
} keyed_t;

static int compare_keyed(const void *a, const void *b)
{
    const keyed_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

static uint64_t mix(uint64_t h, uint64_t x)
{
    h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h ^= h >> 31;
    return h * 0xbf58476d1ce4e5b9ULL;
}

/* ---- shapes ------------------------------------------------------------ */

typedef struct bottomup {
    const mpitopo__ttree_t *t;
    uint64_t *shape[MPITOPO_MAX_LEVELS]; /* shape[l][unit] */
    int *mfirst[MPITOPO_MAX_LEVELS];     /* groups of level l: members mfirst[l][g] .. mfirst[l][g+1]-1 */
    int *mlist[MPITOPO_MAX_LEVELS];      /* objects of level l + 1 */
    int *unit_of[MPITOPO_MAX_LEVELS];    /* unit of every group of level l (slot of every process) */
    keyed_t *scratch;                    /* 2n entries */
} bottomup_t;

/* The sorted shapes of the children of unit k of level l, in scratch. */
static int child_shapes(bottomup_t *bu, int l, int k)
{
    int a, b;
    mpitopo__ttree_children(bu->t, l, k, &a, &b);
    for (int c = a; c < b; c++)
        bu->scratch[c - a] = (keyed_t){bu->shape[l + 1][c], 0};
    qsort(bu->scratch, (size_t)(b - a), sizeof *bu->scratch, compare_keyed);
    return b - a;
}

static int compute_shapes(bottomup_t *bu)
{
    const mpitopo__ttree_t *t = bu->t;
    for (int l = t->nlevels - 1; l >= 0; l--) {
        bu->shape[l] = mpitopo__malloc_array((size_t)t->nunits[l], sizeof *bu->shape[l]);
        if (!bu->shape[l])
            return MPITOPO_NOMEM("the unit shapes");
        for (int k = 0; k < t->nunits[l]; k++) {
            if (l == t->nlevels - 1) {
                bu->shape[l][k] = 1;
                continue;
            }
            int nc = child_shapes(bu, l, k);
            uint64_t h = mix(0x51ed270b27e9bb9dULL, (uint64_t)nc);
            for (int i = 0; i < nc; i++)
                h = mix(h, bu->scratch[i].key);
            bu->shape[l][k] = h;
        }
    }
    return MPITOPO_SUCCESS;
}

/* ---- grouping ---------------------------------------------------------- */

/* What one level's grouping works with. */
typedef struct grouping {
    const mpitopo__tgraph_t *g; /* the objects and their graph */
    const uint64_t *oshape;     /* shape of every object */
    int *group_of;              /* -1 while free */
    int *order;                 /* seeds are taken in breadth-first order */
    int cursor;                 /* order[0 .. cursor) are all grouped */
    double *conn;               /* weight from an object to the growing group */
    int *touched, ntouched;
    mpitopo__heap_t heap;
    keyed_t *need;              /* shapes still needed by the growing group, with counts in idx */
    int nneed;
} grouping_t;

/* Breadth-first order of the objects, every component from its smallest
 * object, so that consecutive seeds lie next to the groups already made. */
static void bfs_order(const mpitopo__tgraph_t *g, int *order, int *seen)
{
    int head = 0, tail = 0;
    memset(seen, 0, (size_t)g->n * sizeof *seen);
    for (int r = 0; r < g->n; r++) {
        if (seen[r])
            continue;
        seen[r] = 1;
        order[tail++] = r;
        while (head < tail) {
            int v = order[head++];
            for (int64_t e = g->offs[v]; e < g->offs[v + 1]; e++)
                if (!seen[g->adj[e]]) {
                    seen[g->adj[e]] = 1;
                    order[tail++] = g->adj[e];
                }
        }
    }
}

/* Index in need of an object's shape when still needed, else -1. */
static int needed(const grouping_t *gr, int o)
{
    for (int i = 0; i < gr->nneed; i++)
        if (gr->need[i].key == gr->oshape[o])
            return gr->need[i].idx > 0 ? i : -1;
    return -1;
}

static void join(grouping_t *gr, int o, int group, int slot, int *mlist)
{
    const mpitopo__tgraph_t *g = gr->g;
    gr->group_of[o] = group;
    gr->need[slot].idx--;
    *mlist = o;
    for (int64_t e = g->offs[o]; e < g->offs[o + 1]; e++) {
        int u = g->adj[e];
        if (gr->group_of[u] >= 0)
            continue;
        if (gr->conn[u] == 0)
            gr->touched[gr->ntouched++] = u;
        gr->conn[u] += g->w[e];
        if (gr->heap.pos[u] >= 0)
            mpitopo__heap_up(&gr->heap, gr->heap.pos[u]);
        else
            mpitopo__heap_push(&gr->heap, u);
    }
}

/* The next member: the most connected free object of a needed shape, else
 * the first free one in breadth-first order. */
static int next_member(grouping_t *gr, int *slot)
{
    while (gr->heap.n > 0) {
        int o = gr->heap.h[0];
        mpitopo__heap_remove(&gr->heap, o);
        if (gr->group_of[o] < 0 && (*slot = needed(gr, o)) >= 0)
            return o;
    }
    while (gr->cursor < gr->g->n && gr->group_of[gr->order[gr->cursor]] >= 0)
        gr->cursor++;
    for (int i = gr->cursor; i < gr->g->n; i++) {
        int o = gr->order[i];
        if (gr->group_of[o] < 0 && (*slot = needed(gr, o)) >= 0)
            return o;
    }
    return -1;
}

/* Grow group `group` for unit k of level l, writing its members at mlist.
 * Returns the number of members (the unit's number of children unless the
 * shapes cannot be matched, which only a hash collision could cause). */
static int grow_group(bottomup_t *bu, grouping_t *gr, int l, int k, int group, int *mlist)
{
    int nc = child_shapes(bu, l, k), count = 0, slot;
    gr->nneed = 0;
    for (int i = 0; i < nc; i++) {
        if (gr->nneed == 0 || gr->need[gr->nneed - 1].key != bu->scratch[i].key)
            gr->need[gr->nneed++] = (keyed_t){bu->scratch[i].key, 0};
        gr->need[gr->nneed - 1].idx++;
    }
    int o;
    while (count < nc && (o = next_member(gr, &slot)) >= 0)
        join(gr, o, group, slot, mlist + count++);
    for (int i = 0; i < gr->ntouched; i++)
        gr->conn[gr->touched[i]] = 0;
    gr->ntouched = 0;
    mpitopo__heap_clear(&gr->heap);
    return count;
}

/* ---- the graph of the groups ------------------------------------------ */

static int64_t group_row(const mpitopo__tgraph_t *g, const int *group_of, const int *members, int nm, int c,
                         int64_t row, int64_t *mark, mpitopo__tgraph_t *out)
{
    int64_t end = row;
    for (int i = 0; i < nm; i++)
        for (int64_t e = g->offs[members[i]]; e < g->offs[members[i] + 1]; e++) {
            int x = group_of[g->adj[e]];
            if (x == c)
                continue;
            if (mark[x] >= row) {
                if (out)
                    out->w[mark[x]] += g->w[e];
                continue;
            }
            mark[x] = end;
            if (out) {
                out->adj[end] = x;
                out->w[end] = g->w[e];
            }
            end++;
        }
    return end;
}

/* Sum the members' edges into the graph of the ng groups: count, then fill. */
static int aggregate(const mpitopo__tgraph_t *g, const int *group_of, const int *mfirst, const int *mlist, int ng,
                     int64_t *mark, mpitopo__tgraph_t *cg)
{
    int64_t end = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int c = 0; c < ng; c++)
            mark[c] = -1;
        end = 0;
        for (int c = 0; c < ng; c++) {
            end = group_row(g, group_of, mlist + mfirst[c], mfirst[c + 1] - mfirst[c], c, end, mark,
                            pass ? cg : NULL);
            if (pass)
                cg->offs[c + 1] = end;
        }
        if (pass == 0 && mpitopo__tgraph_alloc(cg, ng, end) != MPITOPO_SUCCESS)
            return MPITOPO_NOMEM("the graph of the groups");
    }
    return MPITOPO_SUCCESS;
}

/* ---- levels ------------------------------------------------------------ */

/* Group the objects of graph g (shapes oshape) into the units of level l;
 * the groups' graph goes to cg (when not NULL). Group k is grown for unit
 * k, so shape[l][k] is its shape too. */
static int group_level(bottomup_t *bu, const mpitopo__tgraph_t *g, const uint64_t *oshape, int l, int *ints,
                       double *conn, int64_t *mark, mpitopo__tgraph_t *cg)
{
    const mpitopo__ttree_t *t = bu->t;
    int ng = t->nunits[l], n = g->n;
    grouping_t gr = {.g = g, .oshape = oshape, .group_of = ints, .order = ints + n, .conn = conn,
                     .touched = ints + 2 * (size_t)n, .heap = {0, ints + 3 * (size_t)n, ints + 4 * (size_t)n, conn},
                     .need = bu->scratch + n};
    bfs_order(g, gr.order, gr.group_of);
    for (int o = 0; o < n; o++) {
        gr.group_of[o] = -1;
        gr.heap.pos[o] = -1;
        conn[o] = 0;
    }
    bu->mfirst[l] = mpitopo__malloc_array((size_t)ng + 1, sizeof *bu->mfirst[l]);
    bu->mlist[l] = mpitopo__malloc_array((size_t)n, sizeof *bu->mlist[l]);
    if (!bu->mfirst[l] || !bu->mlist[l])
        return MPITOPO_NOMEM("the groups of a level");
    int used = 0;
    bu->mfirst[l][0] = 0;
    for (int k = 0; k < ng; k++) {
        used += grow_group(bu, &gr, l, k, k, bu->mlist[l] + used);
        bu->mfirst[l][k + 1] = used;
    }
    if (used != n)
        return MPITOPO_FAIL_MSG(MPITOPO_ERR_INTERNAL, "tree mapper: level %d: shapes of units do not match", l);
    return cg ? aggregate(g, gr.group_of, bu->mfirst[l], bu->mlist[l], ng, mark, cg) : MPITOPO_SUCCESS;
}

/* Match n objects to n units of equal shapes: both sorted by shape, then
 * paired in order. unit_of[i] receives the unit of objs[i]. */
static int match_shapes(bottomup_t *bu, const int *objs, const uint64_t *oshape, int a, const uint64_t *ushape,
                        int n, int *unit_of)
{
    keyed_t *x = bu->scratch, *y = bu->scratch + n;
    for (int i = 0; i < n; i++) {
        x[i] = (keyed_t){oshape[objs[i]], i};
        y[i] = (keyed_t){ushape[a + i], a + i};
    }
    qsort(x, (size_t)n, sizeof *x, compare_keyed);
    qsort(y, (size_t)n, sizeof *y, compare_keyed);
    for (int i = 0; i < n; i++) {
        if (x[i].key != y[i].key)
            return MPITOPO_FAIL_MSG(MPITOPO_ERR_INTERNAL, "tree mapper: a group does not fit its unit");
        unit_of[x[i].idx] = y[i].idx;
    }
    return MPITOPO_SUCCESS;
}

/* From the top down, put every group of level l on a unit of its shape,
 * then its members on the unit's children; at the last level the objects
 * are the processes (all of the leaves' shape) and the units the slots. */
static int place(bottomup_t *bu, int *tmp)
{
    const mpitopo__ttree_t *t = bu->t;
    int nl = t->nlevels;
    for (int k = 0; k < t->nunits[0]; k++)
        tmp[k] = k;
    int rc = match_shapes(bu, tmp, bu->shape[0], 0, bu->shape[0], t->nunits[0], bu->unit_of[0]);
    for (int l = 0; rc == MPITOPO_SUCCESS && l < nl - 1; l++)
        for (int grp = 0; rc == MPITOPO_SUCCESS && grp < t->nunits[l]; grp++) {
            int a, b, lo = bu->mfirst[l][grp];
            mpitopo__ttree_children(t, l, bu->unit_of[l][grp], &a, &b);
            rc = match_shapes(bu, bu->mlist[l] + lo, bu->shape[l + 1], a, bu->shape[l + 1], b - a, tmp);
            for (int i = 0; rc == MPITOPO_SUCCESS && i < b - a; i++)
                bu->unit_of[l + 1][bu->mlist[l][lo + i]] = tmp[i];
        }
    return rc;
}

/* Group level by level from the leaves up; each level's graph is dropped
 * once the next one is made. */
static int group_all(bottomup_t *bu, const mpitopo__tgraph_t *g, int *ints, double *conn, int64_t *mark)
{
    const mpitopo__ttree_t *t = bu->t;
    mpitopo__tgraph_t cg[2] = {{0}, {0}};
    const mpitopo__tgraph_t *cur = g;
    int rc = MPITOPO_SUCCESS;
    for (int l = t->nlevels - 2, k = 0; rc == MPITOPO_SUCCESS && l >= 0; l--, k ^= 1) {
        rc = group_level(bu, cur, bu->shape[l + 1], l, ints, conn, mark, l > 0 ? &cg[k] : NULL);
        mpitopo__tgraph_free(&cg[k ^ 1]);
        cur = &cg[k];
    }
    mpitopo__tgraph_free(&cg[0]);
    mpitopo__tgraph_free(&cg[1]);
    return rc;
}

static int alloc_bottomup(bottomup_t *bu, size_t n)
{
    bu->scratch = mpitopo__malloc_array(2 * n, sizeof *bu->scratch);
    if (!bu->scratch)
        return MPITOPO_NOMEM("the shape lists");
    for (int l = 0; l < bu->t->nlevels; l++) {
        bu->unit_of[l] = mpitopo__malloc_array((size_t)bu->t->nunits[l], sizeof *bu->unit_of[l]);
        if (!bu->unit_of[l])
            return MPITOPO_NOMEM("the group placement");
    }
    return MPITOPO_SUCCESS;
}

static void free_bottomup(bottomup_t *bu)
{
    mpitopo__free(bu->scratch);
    for (int l = 0; l < bu->t->nlevels; l++) {
        mpitopo__free(bu->shape[l]);
        mpitopo__free(bu->mfirst[l]);
        mpitopo__free(bu->mlist[l]);
        mpitopo__free(bu->unit_of[l]);
    }
}

int mpitopo__tree_bottomup(const mpitopo__tgraph_t *g, const mpitopo__ttree_t *t, int *slot_of_proc)
{
    size_t n = (size_t)t->n;
    bottomup_t bu = {.t = t};
    int *ints = mpitopo__malloc_array(5 * n, sizeof *ints);
    double *conn = mpitopo__malloc_array(n, sizeof *conn);
    int64_t *mark = mpitopo__malloc_array(n, sizeof *mark);
    int rc = ints && conn && mark ? alloc_bottomup(&bu, n) : MPITOPO_NOMEM("the grouping work arrays");
    if (rc == MPITOPO_SUCCESS)
        rc = compute_shapes(&bu);
    if (rc == MPITOPO_SUCCESS)
        rc = group_all(&bu, g, ints, conn, mark);
    if (rc == MPITOPO_SUCCESS && t->nlevels == 1)
        for (int p = 0; p < t->n; p++)
            bu.unit_of[0][p] = p;
    else if (rc == MPITOPO_SUCCESS)
        rc = place(&bu, ints);
    if (rc == MPITOPO_SUCCESS)
        memcpy(slot_of_proc, bu.unit_of[t->nlevels - 1], n * sizeof *slot_of_proc);
    free_bottomup(&bu);
    mpitopo__free(ints);
    mpitopo__free(conn);
    mpitopo__free(mark);
    return rc;
}
