/*
 * What the network-aware comparators share (netmap_internal.h): LibTopoMap,
 * the comparator of the thesis (ch. 3), first partitions the process graph
 * into one part per node and then maps the part graph onto the network; so
 * do these. The partition is the tree mapper's on the flattened machine
 * "node x slots" (what ptram's part=tree does when the machine's own levels
 * do not fit), so that the comparators differ from each other, and from
 * ptram, only in where the parts go. Distances come from the routes
 * between end nodes, not from a graph of the switches: what a process pair
 * pays is the route its traffic takes.
 */
#include "machine/machine_internal.h"
#include "map/netmap_internal.h"
#include "pattern/pattern_internal.h"

#include <stdlib.h>
#include <string.h>

void mpitopo__netmap_free(mpitopo__netmap_t *nm)
{
    void *arrays[] = {nm->cap, nm->end, nm->part, nm->goff, nm->gadj, nm->gw, nm->wsum, nm->dist};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        mpitopo__free(arrays[i]);
    memset(nm, 0, sizeof *nm);
}

/* The nodes in use: units 0..nn-1 of the node level, holding the first
 * nprocs leaves, each with its number of them. */
static int setup_nodes(mpitopo__netmap_t *nm, const int *end_node)
{
    const mpitopo_machine_t *m = nm->m;
    int nl = m->node_level, nend;
    nm->nn = m->unit[nl][nm->nprocs - 1] + 1;
    mpitopo_network_size(nm->net, &nend, NULL, NULL);
    if (nm->nn > MPITOPO__NETMAP_MAX_NODES)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_RANGE, "mpitopo_map", "the comparators map onto at most %d nodes, "
                               "the processes fill %d", MPITOPO__NETMAP_MAX_NODES, nm->nn);
    nm->cap = mpitopo__malloc_array((size_t)nm->nn, sizeof *nm->cap);
    nm->end = mpitopo__malloc_array((size_t)nm->nn, sizeof *nm->end);
    if (!nm->cap || !nm->end)
        return MPITOPO_NOMEM("the nodes");
    for (int u = 0; u < nm->nn; u++) {
        int hi = m->first[nl][u + 1] < nm->nprocs ? m->first[nl][u + 1] : nm->nprocs;
        nm->cap[u] = hi - m->first[nl][u];
        nm->end[u] = end_node ? end_node[u] : u;
        if (nm->end[u] < 0 || nm->end[u] >= nend)
            return MPITOPO_FAIL_AS(MPITOPO_ERR_RANGE, "mpitopo_map", "node %d is on end node %d, the network has %d",
                                   u, nm->end[u], nend);
    }
    return MPITOPO_SUCCESS;
}

/* The route costs (see dist in netmap_internal.h): channel capacities read
 * once, then one route per ordered pair. */
static int setup_dist(mpitopo__netmap_t *nm)
{
    int64_t nch;
    int max_route, nn = nm->nn;
    mpitopo_network_size(nm->net, NULL, &nch, &max_route);
    double *cap = mpitopo__malloc_array((size_t)(nch > 0 ? nch : 1), sizeof *cap);
    int64_t *route = mpitopo__malloc_array((size_t)max_route + 1, sizeof *route);
    nm->dist = mpitopo__malloc_array((size_t)nn * (size_t)nn, sizeof *nm->dist);
    int rc = cap && route && nm->dist ? MPITOPO_SUCCESS : MPITOPO_NOMEM("the distances between the nodes");
    double maxcap = 0;
    for (int64_t c = 0; rc == MPITOPO_SUCCESS && c < nch; c++) {
        rc = mpitopo_network_channel(nm->net, c, &cap[c], NULL, 0);
        if (cap[c] > maxcap)
            maxcap = cap[c];
    }
    for (int n = 0; rc == MPITOPO_SUCCESS && n < nn; n++)
        for (int k = 0; rc == MPITOPO_SUCCESS && k < nn; k++) {
            int len = 0;
            rc = mpitopo_network_route(nm->net, nm->end[n], nm->end[k], max_route, route, &len);
            double d = 0;
            for (int i = 0; rc == MPITOPO_SUCCESS && i < len; i++)
                d += cap[route[i]] > 0 ? maxcap / cap[route[i]] : 1.0;
            nm->dist[(size_t)n * (size_t)nn + (size_t)k] = (float)d;
        }
    for (int n = 0; rc == MPITOPO_SUCCESS && n < nn; n++)
        for (int k = n + 1; k < nn; k++) {
            float *a = &nm->dist[(size_t)n * (size_t)nn + (size_t)k], *b = &nm->dist[(size_t)k * (size_t)nn + (size_t)n];
            *a = *b = (*a + *b) / 2;
        }
    mpitopo__free(cap);
    mpitopo__free(route);
    return rc;
}

/* Step 1: the tree mapper on "node x slots" of the nodes in use; leaf i of
 * that machine is leaf i of the real one, so its node is part i's node. */
static int partition(mpitopo__netmap_t *nm, const mpitopo_map_options_t *options)
{
    int *paths = mpitopo__malloc_array(2 * (size_t)nm->nprocs, sizeof *paths);
    nm->part = mpitopo__malloc_array((size_t)nm->nprocs, sizeof *nm->part);
    mpitopo_machine_t *flat = NULL;
    int rc = paths && nm->part ? MPITOPO_SUCCESS : MPITOPO_NOMEM("the parts");
    for (int i = 0; rc == MPITOPO_SUCCESS && i < nm->nprocs; i++) {
        paths[2 * i] = nm->m->unit[nm->m->node_level][i];
        paths[2 * i + 1] = i;
    }
    static const char *const names[2] = {"node", "core"};
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo_machine_from_paths(2, names, NULL, nm->nprocs, paths, &flat, NULL);
    mpitopo_map_options_t o = *options;
    o.launch = NULL;
    o.never_worse = 0;
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__map_tree(flat, nm->pat, NULL, &o, nm->part);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo_mapping_check(flat, nm->nprocs, nm->part);
    for (int p = 0; rc == MPITOPO_SUCCESS && p < nm->nprocs; p++)
        nm->part[p] = flat->unit[0][nm->part[p]];
    mpitopo_machine_destroy(&flat);
    mpitopo__free(paths);
    return rc;
}

/* The part graph: every pattern edge between parts counted from both
 * ends, rows bucketed, then duplicates merged in place (pos[b]: where
 * neighbour b sits in the row being merged). */
static int part_graph(mpitopo__netmap_t *nm)
{
    const mpitopo_pattern_t *pat = nm->pat;
    int nn = nm->nn;
    size_t na = 2 * (size_t)(pat->nedges > 0 ? pat->nedges : 1);
    int64_t *cnt = mpitopo__calloc((size_t)nn + 1, sizeof *cnt), *pos = mpitopo__malloc_array((size_t)nn, sizeof *pos);
    int *adj = mpitopo__malloc_array(na, sizeof *adj);
    double *w = mpitopo__malloc_array(na, sizeof *w);
    nm->goff = mpitopo__calloc((size_t)nn + 1, sizeof *nm->goff);
    nm->wsum = mpitopo__calloc((size_t)nn, sizeof *nm->wsum);
    int rc = cnt && pos && adj && w && nm->goff && nm->wsum ? MPITOPO_SUCCESS : MPITOPO_NOMEM("the part graph");
    for (int p = 0; rc == MPITOPO_SUCCESS && p < pat->nprocs; p++)
        for (int64_t e = pat->offs[p]; e < pat->offs[p + 1]; e++)
            if (nm->part[p] != nm->part[pat->dst[e]] && pat->bytes[e] > 0) {
                cnt[nm->part[p] + 1]++;
                cnt[nm->part[pat->dst[e]] + 1]++;
            }
    for (int a = 0; rc == MPITOPO_SUCCESS && a < nn; a++)
        cnt[a + 1] += cnt[a];
    for (int p = 0; rc == MPITOPO_SUCCESS && p < pat->nprocs; p++)
        for (int64_t e = pat->offs[p]; e < pat->offs[p + 1]; e++) {
            int a = nm->part[p], b = nm->part[pat->dst[e]];
            if (a == b || !(pat->bytes[e] > 0))
                continue;
            adj[cnt[a]] = b;
            w[cnt[a]++] = pat->bytes[e];
            adj[cnt[b]] = a;
            w[cnt[b]++] = pat->bytes[e];
        }
    /* cnt[a] is now the end of row a, the start of row a + 1 */
    int64_t out = 0;
    for (int b = 0; rc == MPITOPO_SUCCESS && b < nn; b++)
        pos[b] = -1;
    for (int a = 0; rc == MPITOPO_SUCCESS && a < nn; a++) {
        int64_t row = out, lo = a ? cnt[a - 1] : 0;
        for (int64_t i = lo; i < cnt[a]; i++) {
            int b = adj[i];
            double wi = w[i]; /* read first: slot `out` may be slot i */
            if (pos[b] < row) {
                pos[b] = out;
                adj[out] = b;
                w[out++] = 0;
            }
            w[pos[b]] += wi;
            nm->wsum[a] += wi;
        }
        nm->goff[a + 1] = out;
    }
    if (rc == MPITOPO_SUCCESS) {
        nm->gadj = adj;
        nm->gw = w;
        adj = NULL;
        w = NULL;
    }
    mpitopo__free(cnt);
    mpitopo__free(pos);
    mpitopo__free(adj);
    mpitopo__free(w);
    return rc;
}

int mpitopo__netmap_setup(mpitopo__netmap_t *nm, const char *name, const mpitopo_machine_t *machine,
                          const mpitopo_pattern_t *pattern, const mpitopo_map_options_t *options,
                          const mpitopo__map_net_t *net, const int *part, int *leaf_of_proc, int *trivial)
{
    memset(nm, 0, sizeof *nm);
    *trivial = 0;
    if (!net || !net->network)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, "mpitopo_map", "%s needs a network: use mpitopo_map_network or "
                               "--network", name);
    nm->m = machine;
    nm->pat = pattern;
    nm->net = net->network;
    nm->nprocs = pattern->nprocs;
    if (nm->nprocs == 0)
        *trivial = 1;
    if (*trivial || machine->node_level < 0) { /* one node: only its inside matters */
        *trivial = 1;
        return nm->nprocs ? mpitopo__map_tree(machine, pattern, NULL, options, leaf_of_proc) : MPITOPO_SUCCESS;
    }
    int rc = setup_nodes(nm, net->end_node);
    if (rc == MPITOPO_SUCCESS && part) {
        nm->part = mpitopo__malloc_array((size_t)nm->nprocs, sizeof *nm->part);
        if (nm->part)
            memcpy(nm->part, part, (size_t)nm->nprocs * sizeof *nm->part);
        else
            rc = MPITOPO_NOMEM("the parts");
    } else if (rc == MPITOPO_SUCCESS)
        rc = partition(nm, options);
    if (rc == MPITOPO_SUCCESS)
        rc = part_graph(nm);
    if (rc == MPITOPO_SUCCESS)
        rc = setup_dist(nm);
    return rc;
}

int mpitopo__place_in_node(const mpitopo_machine_t *m, const mpitopo_pattern_t *pat,
                           const mpitopo_map_options_t *options, int u, const int *procs, int np, int *local,
                           int *leaf_of_proc, const char *what)
{
    int first = m->first[m->node_level][u], below = m->nlevels - 1 - m->node_level;
    if (below <= 1 || np <= 1) {
        for (int i = 0; i < np; i++)
            leaf_of_proc[procs[i]] = first + i;
        return MPITOPO_SUCCESS;
    }
    for (int i = 0; i < np; i++)
        local[procs[i]] = i;
    int64_t ne = 0;
    for (int i = 0; i < np; i++)
        for (int64_t e = pat->offs[procs[i]]; e < pat->offs[procs[i] + 1]; e++)
            ne += local[pat->dst[e]] >= 0;
    size_t na = (size_t)(ne > 0 ? ne : 1);
    int *src = mpitopo__malloc_array(na, sizeof *src), *dst = mpitopo__malloc_array(na, sizeof *dst);
    double *bytes = mpitopo__malloc_array(na, sizeof *bytes), *msgs = mpitopo__malloc_array(na, sizeof *msgs);
    int *paths = mpitopo__malloc_array((size_t)np * (size_t)below, sizeof *paths);
    int *entry_leaf = mpitopo__malloc_array((size_t)np, sizeof *entry_leaf);
    int *sub_leaf = mpitopo__malloc_array((size_t)np, sizeof *sub_leaf);
    mpitopo_pattern_t *sp = NULL;
    mpitopo_machine_t *sm = NULL;
    int rc = MPITOPO_SUCCESS;
    if (!src || !dst || !bytes || !msgs || !paths || !entry_leaf || !sub_leaf) {
        rc = MPITOPO_NOMEM(what);
        goto cleanup;
    }
    ne = 0;
    for (int i = 0; i < np; i++)
        for (int64_t e = pat->offs[procs[i]]; e < pat->offs[procs[i] + 1]; e++)
            if (local[pat->dst[e]] >= 0) {
                src[ne] = i;
                dst[ne] = local[pat->dst[e]];
                bytes[ne] = pat->bytes[e];
                msgs[ne++] = pat->msgs[e];
            }
    const char *names[MPITOPO_MAX_LEVELS];
    for (int l = 0; l < below; l++)
        names[l] = m->name[m->node_level + 1 + l];
    for (int i = 0; i < np; i++)
        for (int l = 0; l < below; l++)
            paths[(size_t)i * (size_t)below + (size_t)l] = m->unit[m->node_level + 1 + l][first + i];
    rc = mpitopo_pattern_create(np, ne, src, dst, bytes, msgs, &sp);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo_machine_from_paths(below, names, m->cost + m->node_level + 1, np, paths, &sm, entry_leaf);
    if (rc == MPITOPO_SUCCESS) {
        mpitopo_map_options_t o = *options;
        o.launch = NULL;
        o.never_worse = 0;
        rc = mpitopo__map_tree(sm, sp, NULL, &o, sub_leaf);
    }
    /* Entry i is leaf first + i: paths, no longer needed, maps the leaves
     * of sm back to their entries. */
    for (int i = 0; rc == MPITOPO_SUCCESS && i < np; i++)
        paths[entry_leaf[i]] = i;
    for (int i = 0; rc == MPITOPO_SUCCESS && i < np; i++)
        leaf_of_proc[procs[i]] = first + paths[sub_leaf[i]];
cleanup:
    for (int i = 0; i < np; i++)
        local[procs[i]] = -1;
    mpitopo_pattern_destroy(&sp);
    mpitopo_machine_destroy(&sm);
    void *arrays[] = {src, dst, bytes, msgs, paths, entry_leaf, sub_leaf};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        mpitopo__free(arrays[i]);
    return rc;
}

int mpitopo__netmap_finish(const mpitopo__netmap_t *nm, const mpitopo_map_options_t *options,
                           const int *node_of_part, int *leaf_of_proc)
{
    int nn = nm->nn;
    int *seen = mpitopo__calloc((size_t)nn, sizeof *seen);
    int *procs = mpitopo__malloc_array((size_t)nm->nprocs, sizeof *procs);
    int *local = mpitopo__malloc_array((size_t)nm->nprocs, sizeof *local);
    int *at = mpitopo__calloc((size_t)nn + 1, sizeof *at);
    int rc = seen && procs && local && at ? MPITOPO_SUCCESS : MPITOPO_NOMEM("the processes of the nodes");
    for (int a = 0; rc == MPITOPO_SUCCESS && a < nn; a++) {
        int n = node_of_part[a];
        if (n < 0 || n >= nn || seen[n]++ || nm->cap[n] != nm->cap[a])
            rc = MPITOPO_FAIL_AS(MPITOPO_ERR_INTERNAL, "mpitopo_map", "part %d placed on node %d: not a placement "
                                 "of one part per node of its size", a, n);
    }
    for (int p = 0; rc == MPITOPO_SUCCESS && p < nm->nprocs; p++) {
        local[p] = -1;
        at[node_of_part[nm->part[p]] + 1]++;
    }
    for (int n = 0; rc == MPITOPO_SUCCESS && n < nn; n++)
        at[n + 1] += at[n];
    for (int p = 0; rc == MPITOPO_SUCCESS && p < nm->nprocs; p++)
        procs[at[node_of_part[nm->part[p]]]++] = p;
    for (int n = 0, lo = 0; rc == MPITOPO_SUCCESS && n < nn; n++) {
        rc = mpitopo__place_in_node(nm->m, nm->pat, options, n, procs + lo, at[n] - lo, local, leaf_of_proc,
                                    "a node's processes");
        lo = at[n];
    }
    mpitopo__free(seen);
    mpitopo__free(procs);
    mpitopo__free(local);
    mpitopo__free(at);
    return rc;
}

int mpitopo__netmap_run(const char *name, mpitopo__netmap_place_fn place, const mpitopo_machine_t *machine,
                        const mpitopo_pattern_t *pattern, const mpitopo_map_options_t *options,
                        const mpitopo__map_net_t *net, int *leaf_of_proc)
{
    return mpitopo__netmap_run_parts(name, place, machine, pattern, options, net, NULL, leaf_of_proc);
}

int mpitopo__netmap_run_parts(const char *name, mpitopo__netmap_place_fn place, const mpitopo_machine_t *machine,
                              const mpitopo_pattern_t *pattern, const mpitopo_map_options_t *options,
                              const mpitopo__map_net_t *net, const int *part, int *leaf_of_proc)
{
    mpitopo__netmap_t nm;
    int trivial, *node_of = NULL;
    int rc = mpitopo__netmap_setup(&nm, name, machine, pattern, options, net, part, leaf_of_proc, &trivial);
    if (rc == MPITOPO_SUCCESS && !trivial) {
        node_of = mpitopo__malloc_array((size_t)nm.nn, sizeof *node_of);
        rc = node_of ? place(&nm, node_of) : MPITOPO_NOMEM("the nodes of the parts");
        if (rc == MPITOPO_SUCCESS)
            rc = mpitopo__netmap_finish(&nm, options, node_of, leaf_of_proc);
    }
    mpitopo__free(node_of);
    mpitopo__netmap_free(&nm);
    return rc;
}

/* ---- reverse Cuthill-McKee ----------------------------------------------- */

typedef struct rcm_ctx {
    int n;
    const int64_t *off;
    const int *adj;
    unsigned char *mark; /* visited for good */
    int *level;          /* scratch BFS levels, -1 unset */
    int *queue;
} rcm_ctx_t;

static int degree(const rcm_ctx_t *r, int v)
{
    return (int)(r->off[v + 1] - r->off[v]);
}

/* BFS over the unvisited component of s: its vertices in queue[0..*cnt),
 * the depth of the last level; levels reset afterwards. The last level's
 * vertex of least degree (lowest index) in *far. */
static int bfs_far(rcm_ctx_t *r, int s, int *far)
{
    int head = 0, tail = 0, depth = 0;
    r->queue[tail++] = s;
    r->level[s] = 0;
    while (head < tail) {
        int v = r->queue[head++];
        depth = r->level[v];
        for (int64_t e = r->off[v]; e < r->off[v + 1]; e++) {
            int u = r->adj[e];
            if (!r->mark[u] && r->level[u] < 0) {
                r->level[u] = r->level[v] + 1;
                r->queue[tail++] = u;
            }
        }
    }
    *far = -1;
    for (int i = 0; i < tail; i++) {
        int v = r->queue[i];
        if (r->level[v] == depth && (*far < 0 || degree(r, v) < degree(r, *far) ||
                                     (degree(r, v) == degree(r, *far) && v < *far)))
            *far = v;
    }
    for (int i = 0; i < tail; i++)
        r->level[r->queue[i]] = -1;
    return depth;
}

/* George and Liu: move to a least-degree vertex of the last level while
 * the eccentricity grows. */
static int peripheral(rcm_ctx_t *r, int s)
{
    int far, depth = bfs_far(r, s, &far);
    for (int guard = 0; guard < r->n; guard++) {
        int far2, d2 = bfs_far(r, far, &far2);
        if (d2 <= depth)
            break;
        s = far;
        depth = d2;
        far = far2;
    }
    return s;
}

static int by_degree_ctx_cmp(const rcm_ctx_t *r, int a, int b)
{
    int da = degree(r, a), db = degree(r, b);
    return da != db ? (da < db ? -1 : 1) : (a > b) - (a < b);
}

int mpitopo__netmap_rcm(int n, const int64_t *off, const int *adj, mpitopo__netmap_next_fn next, void *ctx,
                        int *order)
{
    rcm_ctx_t r = {n, off, adj, mpitopo__calloc((size_t)(n > 0 ? n : 1), 1),
                   mpitopo__malloc_array((size_t)(n > 0 ? n : 1), sizeof(int)),
                   mpitopo__malloc_array((size_t)(n > 0 ? n : 1), sizeof(int))};
    if (!r.mark || !r.level || !r.queue) {
        mpitopo__free(r.mark);
        mpitopo__free(r.level);
        mpitopo__free(r.queue);
        return MPITOPO_NOMEM("the Cuthill-McKee order");
    }
    for (int v = 0; v < n; v++)
        r.level[v] = -1;
    int done = 0;
    while (done < n) {
        int s = -1;
        if (next && done > 0) {
            s = next(ctx, order[done - 1], r.mark);
        } else {
            for (int v = 0; v < n; v++)
                if (!r.mark[v] && (s < 0 || degree(&r, v) < degree(&r, s)))
                    s = v;
            s = peripheral(&r, s);
        }
        int head = done;
        order[done++] = s;
        r.mark[s] = 1;
        while (head < done) {
            int v = order[head++], lo = done;
            for (int64_t e = off[v]; e < off[v + 1]; e++)
                if (!r.mark[adj[e]]) {
                    r.mark[adj[e]] = 1;
                    order[done++] = adj[e];
                }
            /* insertion sort of the new ones by degree then index: rows are short */
            for (int i = lo + 1; i < done; i++) {
                int x = order[i], j = i;
                for (; j > lo && by_degree_ctx_cmp(&r, order[j - 1], x) > 0; j--)
                    order[j] = order[j - 1];
                order[j] = x;
            }
        }
    }
    for (int i = 0, j = n - 1; i < j; i++, j--) {
        int x = order[i];
        order[i] = order[j];
        order[j] = x;
    }
    mpitopo__free(r.mark);
    mpitopo__free(r.level);
    mpitopo__free(r.queue);
    return MPITOPO_SUCCESS;
}
