/*
 * Mapper "metis": recursive METIS k-way partitioning down the machine tree,
 * with a balance repair after every level.
 *
 * Level by level from the top: the processes of each unit of the level
 * above (the whole machine first) are partitioned with METIS_PartGraphKway
 * into that unit's children, with target part weights equal to the
 * children's capacities. METIS meets targets only within a tolerance, so
 * the repair of backends.c then moves processes from overfull to underfull
 * siblings, best gain first, until every count is exact. Below the last
 * level above the leaves the leaves are given out in order (they all cost
 * the same to each other).
 *
 * Corner cases METIS does not take: a single part (it refuses nparts = 1)
 * and a part-graph without edges are filled in order, which is optimal
 * there. With fewer processes than leaves, the first nprocs leaves are used
 * (the compact choice a block launch makes): children beyond them have
 * capacity 0 and are not offered as parts.
 */
#include "machine/machine_internal.h"
#include "map/map_internal.h"
#include "pattern/pattern_internal.h"

#include <string.h>

#include <metis.h>

_Static_assert(sizeof(idx_t) == sizeof(int), "the metis mapper passes int arrays as idx_t "
                                             "(Debian's libmetis-dev default)");

/* The processes of one unit of the level above, and its children. */
typedef struct group {
    int parent;        /* unit of level-1, 0 for the whole machine */
    int nmembers;
    const int *member; /* processes, increasing */
    int child0;        /* first child unit of `level` */
    int nparts;        /* children with capacity > 0: child0 .. child0+nparts-1 */
} group_t;

typedef struct metis_map {
    const mpitopo_machine_t *m;
    const mpitopo__bk_graph_t *g;
    int level;
    idx_t seed;
    int *leaf;
    /* work areas, reused by every group */
    int *local;   /* process -> index in its group */
    idx_t *xadj, *adj, *wgt, *part;
    real_t *tpwgts;
    int *filled;  /* per part */
} metis_map_t;

static int in_group(const metis_map_t *mm, const group_t *gr, int q)
{
    return mm->level == 0 || mm->m->unit[mm->level - 1][mm->leaf[q]] == gr->parent;
}

/* The subgraph induced by the group, in local numbering; returns its arcs. */
static int induce(metis_map_t *mm, const group_t *gr)
{
    const mpitopo__bk_graph_t *g = mm->g;
    for (int i = 0; i < gr->nmembers; i++)
        mm->local[gr->member[i]] = i;
    int k = 0;
    for (int i = 0; i < gr->nmembers; i++) {
        int p = gr->member[i];
        mm->xadj[i] = k;
        for (int e = g->xadj[p]; e < g->xadj[p + 1]; e++) {
            if (!in_group(mm, gr, g->adj[e]))
                continue;
            mm->adj[k] = mm->local[g->adj[e]];
            mm->wgt[k++] = g->wgt[e];
        }
    }
    mm->xadj[gr->nmembers] = k;
    return k;
}

/* Put member i in part j: on the next leaf of child j (wrapping when METIS
 * overfills it; the repair sorts that out). */
static void place(metis_map_t *mm, const group_t *gr, int i, int j)
{
    int u = gr->child0 + j, lo = mm->m->first[mm->level][u], size = mm->m->first[mm->level][u + 1] - lo;
    mm->leaf[gr->member[i]] = lo + mm->filled[j]++ % size;
}

static int run_metis(metis_map_t *mm, const group_t *gr)
{
    idx_t nvtxs = gr->nmembers, ncon = 1, nparts = gr->nparts, cut = 0;
    idx_t opts[METIS_NOPTIONS];
    METIS_SetDefaultOptions(opts);
    opts[METIS_OPTION_SEED] = mm->seed;
    opts[METIS_OPTION_NUMBERING] = 0;
    for (int j = 0; j < gr->nparts; j++)
        mm->tpwgts[j] = (real_t)mpitopo__bk_capacity(mm->m, mm->g->n, mm->level, gr->child0 + j) / (real_t)nvtxs;
    int r = METIS_PartGraphKway(&nvtxs, &ncon, mm->xadj, mm->adj, NULL, NULL, mm->wgt, &nparts, mm->tpwgts, NULL,
                                opts, &cut, mm->part);
    if (r == METIS_ERROR_MEMORY)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, "mpitopo_map", "metis: METIS_PartGraphKway ran out of memory");
    if (r != METIS_OK)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_INTERNAL, "mpitopo_map", "metis: METIS_PartGraphKway returned %d for "
                                                    "%d processes into %d parts", r, gr->nmembers, gr->nparts);
    for (int i = 0; i < gr->nmembers; i++)
        place(mm, gr, i, mm->part[i] >= 0 && mm->part[i] < gr->nparts ? mm->part[i] : 0);
    return MPITOPO_SUCCESS;
}

static int split_group(metis_map_t *mm, const group_t *gr)
{
    memset(mm->filled, 0, (size_t)(gr->nparts > 0 ? gr->nparts : 1) * sizeof *mm->filled);
    if (gr->nparts > 1 && induce(mm, gr) > 0)
        return run_metis(mm, gr);
    for (int i = 0, j = 0; i < gr->nmembers; i++) {
        while (j + 1 < gr->nparts &&
               mm->filled[j] >= mpitopo__bk_capacity(mm->m, mm->g->n, mm->level, gr->child0 + j))
            j++;
        place(mm, gr, i, j);
    }
    return MPITOPO_SUCCESS;
}

/* Children of `parent` (at level-1) with room, as a group of `level`. */
static void describe_group(const metis_map_t *mm, int parent, group_t *gr)
{
    const mpitopo_machine_t *m = mm->m;
    int l = mm->level, lo = l == 0 ? 0 : m->first[l - 1][parent];
    int hi = l == 0 ? m->nleaves : m->first[l - 1][parent + 1];
    gr->parent = parent;
    gr->child0 = m->unit[l][lo];
    gr->nparts = 0;
    for (int u = gr->child0; u <= m->unit[l][hi - 1]; u++)
        gr->nparts += mpitopo__bk_capacity(m, mm->g->n, l, u) > 0;
}

/* Partition every unit of level-1 into its children: members bucketed by
 * parent unit (counting sort, so each group lists its processes in order). */
static int split_level(metis_map_t *mm)
{
    int n = mm->g->n, l = mm->level, nparents = l == 0 ? 1 : mm->m->nunits[l - 1];
    int *start = mpitopo__calloc((size_t)nparents + 1, sizeof *start);
    int *members = mpitopo__malloc_array((size_t)n, sizeof *members);
    int rc = MPITOPO_SUCCESS;
    if (!start || !members) {
        rc = MPITOPO_NOMEM("the process groups");
        goto cleanup;
    }
    for (int p = 0; p < n; p++)
        start[(l == 0 ? 0 : mm->m->unit[l - 1][mm->leaf[p]]) + 1]++;
    for (int u = 0; u < nparents; u++)
        start[u + 1] += start[u];
    for (int p = 0; p < n; p++)
        members[start[l == 0 ? 0 : mm->m->unit[l - 1][mm->leaf[p]]]++] = p;
    for (int u = nparents; u > 0; u--)
        start[u] = start[u - 1];
    start[0] = 0;
    for (int u = 0; u < nparents && rc == MPITOPO_SUCCESS; u++) {
        group_t gr = {.nmembers = start[u + 1] - start[u], .member = members + start[u]};
        describe_group(mm, u, &gr);
        if (gr.nmembers > 0)
            rc = split_group(mm, &gr);
    }
cleanup:
    mpitopo__free(start);
    mpitopo__free(members);
    return rc;
}

static int alloc_work(metis_map_t *mm)
{
    size_t n = (size_t)mm->g->n, narcs = (size_t)mm->g->xadj[mm->g->n] + 1;
    mm->local = mpitopo__malloc_array(n, sizeof *mm->local);
    mm->xadj = mpitopo__malloc_array(n + 1, sizeof *mm->xadj);
    mm->adj = mpitopo__malloc_array(narcs, sizeof *mm->adj);
    mm->wgt = mpitopo__malloc_array(narcs, sizeof *mm->wgt);
    mm->part = mpitopo__malloc_array(n, sizeof *mm->part);
    mm->tpwgts = mpitopo__malloc_array(n, sizeof *mm->tpwgts);
    mm->filled = mpitopo__malloc_array(n, sizeof *mm->filled);
    if (!mm->local || !mm->xadj || !mm->adj || !mm->wgt || !mm->part || !mm->tpwgts || !mm->filled)
        return MPITOPO_NOMEM("the METIS work areas");
    return MPITOPO_SUCCESS;
}

static void free_work(metis_map_t *mm)
{
    mpitopo__free(mm->local);
    mpitopo__free(mm->xadj);
    mpitopo__free(mm->adj);
    mpitopo__free(mm->wgt);
    mpitopo__free(mm->part);
    mpitopo__free(mm->tpwgts);
    mpitopo__free(mm->filled);
}

static int map_levels(const mpitopo_machine_t *m, const mpitopo__bk_graph_t *g, uint64_t seed, int *leaf)
{
    metis_map_t mm = {.m = m, .g = g, .seed = (idx_t)(seed % 2147483647u), .leaf = leaf};
    int rc = alloc_work(&mm);
    for (int l = 0; l + 1 < m->nlevels && rc == MPITOPO_SUCCESS; l++) {
        mm.level = l;
        rc = split_level(&mm);
        if (rc == MPITOPO_SUCCESS)
            rc = mpitopo__bk_repair_level(m, g, g->n, l, leaf);
    }
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__bk_assign_leaves(m, g->n, leaf);
    free_work(&mm);
    return rc;
}

int mpitopo__map_metis(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern, const char *args,
                       const mpitopo_map_options_t *options, int *leaf_of_proc)
{
    (void)args;
    mpitopo__bk_graph_t g;
    /* METIS sums edge weights (the cut) in 32-bit integers. */
    int rc = mpitopo__bk_graph_build(pattern, options->weight, 1LL << 30, &g);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    if (g.xadj[g.n] == 0)
        rc = mpitopo__place_block(machine, g.n, leaf_of_proc); /* no edge: every placement costs 0 */
    else
        rc = map_levels(machine, &g, options->seed, leaf_of_proc);
    mpitopo__bk_graph_free(&g);
    return rc;
}
