/*
 * The "ptram" mapper: topology- and routing-aware mapping onto a statically
 * routed network, serial (S. H. Mirsadeghi, "Improving Communication
 * Performance through Topology and Congestion Awareness in HPC Systems",
 * PhD thesis, Queen's University 2017, ch. 3: the framework of Fig. 3.5,
 * partitioning 3.3.1, heuristic 3.3.2, hybrid metric 3.3.3, routing
 * 3.3.4, refinement 3.3.5). Three steps:
 *
 *   1. partition the processes into one part per node, each exactly as
 *      large as the node's slots (the first nprocs leaves, as every mapper
 *      fills them): the tree mapper on the machine itself (whose levels
 *      above the nodes are the network's groups) when it fills exactly
 *      those nodes, else on the flattened machine "node x slots", and
 *      Scotch on the flattened machine; by default (part=auto) the smaller
 *      cut wins, part=tree or part=scotch runs one. part=none keeps every
 *      process a part of its own and lets the next steps fill the nodes'
 *      slots one process at a time;
 *   2. the greedy heuristic (Alg. 3.1): the part most tied to the parts
 *      already placed (then, with weight 1/(placed+1), to the others) goes
 *      to the free node that gives the lowest hybrid metric
 *      w1*HB + w2*MC + w3*NZCA + w4*NZCV, scored incrementally from the
 *      channels of the new routes only (ptram_load.c);
 *   3. the refinement (Alg. 3.2): a round visits the nodes in order; a part
 *      whose traffic crosses the most congested channel is swapped with
 *      the part (of the same size) on one of the k nearest nodes that
 *      lowers the hybrid metric most, at once; a round that finds no such
 *      swap goes over every part the same way; up to `rounds` rounds
 *      (10), or until a round swaps nothing.
 *
 * Step 2 may run elsewhere (params->greedy: the node leaders of
 * src/mpi/ptram_par.c, with the same scoring code, map/ptram_greedy.c);
 * its steps are replayed here, so what follows sees the serial state.
 * When the tree mapper's parts are also a placement (part k on node k), that
 * placement goes through step 3 too, and the lower hybrid metric wins.
 * Then the processes of each node go onto its cores by the tree mapper on
 * the levels inside the node (rank order when all cores are alike).
 * Routes between the nodes in use are computed once (a table while it
 * stays within 16 MiB).
 * Choices where the thesis is silent: ties go to the lowest index
 * everywhere; "nearest" is the route length, then the node number; a swap
 * is taken when it lowers the hybrid metric (which holds MC), not MC alone,
 * so swaps that only move traffic off the second-hottest channel count;
 * the result is the launch placement unless its hybrid metric is lower.
 * "blind" is the routing-blind comparator: hop-bytes only, and the
 * refinement, knowing no channel, swaps wherever hop-bytes drop. "strict"
 * is the thesis's method as written, for comparison: the greedy start
 * only, and per round the one swap that lowers MC most.
 */
#include "machine/machine_internal.h"
#include "map/map_internal.h"
#include "map/netmap_internal.h"
#include "map/ptram_internal.h"
#include "pattern/pattern_internal.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- arguments ---------------------------------------------------------- */

static int bad_arg(const char *tok, size_t len, const char *why)
{
    return MPITOPO_FAIL_AS(MPITOPO_ERR_PARSE, "mpitopo_map", "mapper 'ptram': argument \"%.*s\": %s", (int)len,
                           tok, why);
}

static int parse_int(const char *s, size_t len, long lo, long hi, int *out)
{
    char buf[32], *end;
    if (len == 0 || len >= sizeof buf)
        return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    errno = 0;
    long v = strtol(buf, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

static int parse_weights(const char *s, size_t len, double *w)
{
    char buf[160];
    if (len == 0 || len >= sizeof buf)
        return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *p = buf;
    double sum = 0;
    for (int i = 0; i < 4; i++) {
        char *end;
        errno = 0;
        w[i] = strtod(p, &end);
        if (end == p || errno || !isfinite(w[i]) || w[i] < 0 || *end != (i < 3 ? ',' : '\0'))
            return -1;
        sum += w[i];
        p = end + 1;
    }
    return sum > 0 ? 0 : -1;
}

int mpitopo__ptram_parse(const char *args, mpitopo__ptram_params_t *prm)
{
    *prm = (mpitopo__ptram_params_t){.w = {1, 1, 1, 1}, .k = 8, .rounds = 10, .keep = 1,
                                     .part = MPITOPO__PTRAM_PART_AUTO};
    int have_w = 0;
    for (const char *tok = args; tok && *tok;) {
        const char *colon = strchr(tok, ':');
        size_t len = colon ? (size_t)(colon - tok) : strlen(tok);
        const char *eq = memchr(tok, '=', len);
        size_t key = eq ? (size_t)(eq - tok) : len;
        const char *val = eq ? eq + 1 : NULL;
        size_t vlen = eq ? len - key - 1 : 0;
#define KEY(name) (key == sizeof(name) - 1 && memcmp(tok, name, key) == 0)
        if (KEY("w") && val) {
            if (parse_weights(val, vlen, prm->w) != 0)
                return bad_arg(tok, len, "w must be 4 finite weights >= 0, not all 0, as w=1,1,1,1");
            have_w = 1;
        } else if (KEY("k") && val) {
            if (parse_int(val, vlen, 1, 1 << 20, &prm->k) != 0)
                return bad_arg(tok, len, "k must be an integer in [1, 1048576]");
        } else if (KEY("rounds") && val) {
            if (parse_int(val, vlen, 0, 1000, &prm->rounds) != 0)
                return bad_arg(tok, len, "rounds must be an integer in [0, 1000]");
        } else if (KEY("part") && val) {
            if (vlen == 4 && memcmp(val, "auto", 4) == 0)
                prm->part = MPITOPO__PTRAM_PART_AUTO;
            else if (vlen == 4 && memcmp(val, "tree", 4) == 0)
                prm->part = MPITOPO__PTRAM_PART_TREE;
            else if (vlen == 4 && memcmp(val, "none", 4) == 0)
                prm->part = MPITOPO__PTRAM_PART_NONE;
            else if (vlen == 6 && memcmp(val, "scotch", 6) == 0) {
#ifdef MPITOPO_HAVE_SCOTCH
                prm->part = MPITOPO__PTRAM_PART_SCOTCH;
#else
                return bad_arg(tok, len, "this build has no Scotch (MPITOPO_WITH_SCOTCH=OFF): use part=tree");
#endif
            } else {
                return bad_arg(tok, len, "part must be auto, scotch, tree or none");
            }
        } else if (KEY("blind") && !val) {
            prm->blind = 1;
        } else if (KEY("norm") && !val) {
            prm->norm = 1;
        } else if (KEY("strict") && !val) {
            prm->strict = 1;
        } else {
            return bad_arg(tok, len, "expected w=W,W,W,W, k=N, rounds=N, part=auto|scotch|tree|none, blind, norm or strict");
        }
#undef KEY
        tok = colon ? colon + 1 : NULL;
    }
    if (prm->blind && prm->strict)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_PARSE, "mpitopo_map",
                               "mapper 'ptram': arguments \"%.64s\": blind knows no channel, strict needs the hottest",
                               args);
    if (prm->blind) {
        if (have_w)
            return MPITOPO_FAIL_AS(MPITOPO_ERR_PARSE, "mpitopo_map",
                                   "mapper 'ptram': arguments \"%.64s\": blind (hop-bytes only) takes no w=", args);
        prm->w[1] = prm->w[2] = prm->w[3] = 0;
        prm->w[0] = 1;
    }
    return MPITOPO_SUCCESS;
}

/* ---- the problem -------------------------------------------------------- */

/*
 * Items are what the greedy step places: the parts (one per node in use,
 * exactly as large as its slots) or, with part=none, the processes. The
 * item graph is the pattern summed over items, directed, without the
 * traffic inside an item: out-edges ooff/odst/obytes/opairs, in-edges the
 * same transposed (opairs: how many process edges an item edge stands for,
 * for the dilation).
 */
typedef struct ptram {
    const mpitopo_machine_t *m;
    const mpitopo_pattern_t *pat;
    const mpitopo__ptram_params_t *prm;
    int nprocs, nn, ni, exact;
    int *cap, *end;          /* per node in use: slots, end node */
    int *item_of, *isize;    /* process -> item; item -> processes */
    int64_t *moff;
    int *mem;                /* processes of each item, increasing */
    int64_t *ooff, *ioff;
    int *odst, *isrc;
    double *obytes, *ibytes;
    int64_t *opairs, *ipairs;
    int *node_of;            /* item -> node in use, -1 while not placed */
    int *fill, *soff, *slots; /* items on node n: slots[soff[n] .. soff[n] + fill[n]) */
    int *near;               /* the nk nearest other nodes of every node */
    int nk;
    int *proc_node;          /* end node of every process, for the check hook */
    const mpitopo_network_t *net;
    const mpitopo_network_metrics_t *ref;
    mpitopo__pload_t pl;
    /* Routes between the nodes in use, computed once each when the table
     * fits (route_len[n * nn + m] < 0: not yet), else every time; the
     * table holds 32-bit channel numbers (twice the routes in the same
     * memory: a 512-node torus fits), copied out to route_tmp. The lengths
     * alone are kept for more nodes (routes NULL): the greedy and the
     * refinement bound a candidate's hop-bytes from them. */
    signed char *route_len;
    int32_t *routes;
    int64_t *route_tmp;
    int max_route;
    mpitopo__ptram_items_t view; /* the items as the shared greedy code sees them */
} ptram_t;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* What one solution holds: the items, their graph, their placement. */
static void items_free(ptram_t *t)
{
    void *arrays[] = {t->item_of, t->isize, t->moff,   t->mem,     t->ooff,  t->ioff, t->odst,  t->isrc,
                      t->obytes,  t->ibytes, t->opairs, t->ipairs, t->node_of, t->fill, t->soff, t->slots,
                      t->proc_node};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        mpitopo__free(arrays[i]);
    t->item_of = t->isize = t->mem = t->odst = t->isrc = t->node_of = t->fill = t->soff = t->slots = NULL;
    t->proc_node = NULL;
    t->moff = t->ooff = t->ioff = t->opairs = t->ipairs = NULL;
    t->obytes = t->ibytes = NULL;
    mpitopo__pload_free(&t->pl);
}

static void ptram_free(ptram_t *t)
{
    items_free(t);
    mpitopo__free(t->route_len);
    mpitopo__free(t->routes);
    mpitopo__free(t->route_tmp);
    mpitopo__free(t->cap);
    mpitopo__free(t->end);
    mpitopo__free(t->near);
}

/* The nodes in use: those holding the first nprocs leaves, units 0..nn-1
 * of the node level, each with its number of those leaves. */
static int setup_nodes(ptram_t *t, const int *end_node)
{
    const mpitopo_machine_t *m = t->m;
    int nl = m->node_level;
    t->nn = m->unit[nl][t->nprocs - 1] + 1;
    t->cap = mpitopo__malloc_array((size_t)t->nn, sizeof *t->cap);
    t->end = mpitopo__malloc_array((size_t)t->nn, sizeof *t->end);
    if (!t->cap || !t->end)
        return MPITOPO_NOMEM("the nodes");
    for (int u = 0; u < t->nn; u++) {
        int hi = m->first[nl][u + 1] < t->nprocs ? m->first[nl][u + 1] : t->nprocs;
        t->cap[u] = hi - m->first[nl][u];
        t->end[u] = end_node ? end_node[u] : u;
    }
    return MPITOPO_SUCCESS;
}

/* The route cache: at most this many channels (16 MiB), so 512 nodes of a
 * fat tree with routes of 6 channels or of an 8x8x8 torus (12) fit, a
 * thousand-node torus does not. Without it the routes of a torus, computed
 * again for every candidate, took 40 % of ptram's time at 4,096 processes.
 * The lengths alone: one byte per pair of nodes, up to 16 MiB too. */
#define PTRAM_ROUTE_CACHE_MAX (4 << 20)
#define PTRAM_ROUTE_LEN_MAX (16 << 20)

static int setup_routes(ptram_t *t)
{
    int64_t nch;
    mpitopo_network_size(t->net, NULL, &nch, &t->max_route);
    t->route_tmp = mpitopo__malloc_array((size_t)t->max_route + 1, sizeof *t->route_tmp);
    if (!t->route_tmp)
        return MPITOPO_NOMEM("a route");
    size_t pairs = (size_t)t->nn * (size_t)t->nn;
    /* Both tables are only for speed: none when they do not fit. */
    if (t->max_route > 127 || pairs > PTRAM_ROUTE_LEN_MAX || !(t->route_len = mpitopo__malloc(pairs)))
        return MPITOPO_SUCCESS;
    memset(t->route_len, -1, pairs);
    if (nch <= INT32_MAX && pairs * (size_t)t->max_route <= PTRAM_ROUTE_CACHE_MAX)
        t->routes = mpitopo__malloc_array(pairs * (size_t)(t->max_route ? t->max_route : 1), sizeof *t->routes);
    return MPITOPO_SUCCESS;
}

/* The route from node n to node m (nodes in use), *len channels; valid
 * until the next call. */
static const int64_t *route_of(ptram_t *t, int n, int m, int *len)
{
    size_t at = (size_t)n * (size_t)t->nn + (size_t)m;
    if (t->routes && t->route_len[at] >= 0) {
        const int32_t *r = t->routes + at * (size_t)t->max_route;
        *len = t->route_len[at];
        for (int i = 0; i < *len; i++)
            t->route_tmp[i] = r[i];
        return t->route_tmp;
    }
    mpitopo_network_route(t->net, t->end[n], t->end[m], t->max_route, t->route_tmp, len);
    if (t->routes)
        for (int i = 0; i < *len; i++)
            t->routes[at * (size_t)t->max_route + (size_t)i] = (int32_t)t->route_tmp[i];
    if (t->route_len)
        t->route_len[at] = (signed char)*len;
    return t->route_tmp;
}

/* The number of channels from node n to node m. */
static int route_length(ptram_t *t, int n, int m)
{
    int len;
    if (t->route_len && (len = t->route_len[(size_t)n * (size_t)t->nn + (size_t)m]) >= 0)
        return len;
    route_of(t, n, m, &len);
    return len;
}

static const int64_t *route_cb(void *ctx, int n, int m, int *len)
{
    return route_of(ctx, n, m, len);
}

/* The flattened machine "node x slots" of the nodes in use: entry i is
 * leaf i, so its node unit is the real node unit. */
static int flat_machine(const ptram_t *t, mpitopo_machine_t **flat)
{
    int *paths = mpitopo__malloc_array(2 * (size_t)t->nprocs, sizeof *paths);
    if (!paths)
        return MPITOPO_NOMEM("the flattened machine");
    for (int i = 0; i < t->nprocs; i++) {
        paths[2 * i] = t->m->unit[t->m->node_level][i];
        paths[2 * i + 1] = i;
    }
    static const char *const names[2] = {"node", "core"};
    int rc = mpitopo_machine_from_paths(2, names, NULL, t->nprocs, paths, flat, NULL);
    mpitopo__free(paths);
    return rc;
}

/* The bytes between processes of different parts. */
static double cut_of(const mpitopo_pattern_t *pat, const int *part)
{
    double cut = 0;
    for (int p = 0; p < pat->nprocs; p++)
        for (int64_t e = pat->offs[p]; e < pat->offs[p + 1]; e++)
            if (part[pat->dst[e]] != part[p] && pat->bytes[e] > 0)
                cut += pat->bytes[e];
    return cut;
}

/* One partitioner on the flattened machine; part[p] is the node unit. */
static int partition_with(const ptram_t *t, const mpitopo_machine_t *flat, const mpitopo_map_options_t *o,
                          int scotch, int *part)
{
    int rc;
#ifdef MPITOPO_HAVE_SCOTCH
    if (scotch)
        rc = mpitopo__map_scotch(flat, t->pat, NULL, o, part);
    else
#endif
        rc = mpitopo__map_tree(flat, t->pat, NULL, o, part);
    (void)scotch;
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo_mapping_check(flat, t->nprocs, part);
    for (int p = 0; rc == MPITOPO_SUCCESS && p < t->nprocs; p++)
        part[p] = flat->unit[0][part[p]];
    return rc;
}

/* The tree mapper on the machine itself (the network's group levels above
 * the nodes): parts and a placement of them in one go, kept when it fills
 * exactly the nodes in use (always when every leaf is used). *ok: whether. */
static int partition_tree_here(const ptram_t *t, const mpitopo_map_options_t *o, int *part, int *ok)
{
    int *count = mpitopo__calloc((size_t)t->m->nunits[t->m->node_level], sizeof *count);
    int rc = count ? mpitopo__map_tree(t->m, t->pat, NULL, o, part) : MPITOPO_NOMEM("the parts' sizes");
    *ok = rc == MPITOPO_SUCCESS;
    for (int p = 0; rc == MPITOPO_SUCCESS && p < t->nprocs; p++) {
        part[p] = t->m->unit[t->m->node_level][part[p]];
        count[part[p]]++;
        *ok &= part[p] < t->nn;
    }
    for (int u = 0; *ok && u < t->nn; u++)
        *ok = count[u] == t->cap[u];
    mpitopo__free(count);
    return rc;
}

/*
 * Step 1: *chosen, the part (numbered like the nodes: part k has the size
 * of node k) of every process, NULL with part=none; *start, the tree
 * mapper's parts when they also are a placement worth refining (part k on
 * node k), else NULL. The default runs the tree mapper and Scotch (when
 * built with it) and keeps the smaller cut, the tree's on a tie.
 */
static int partition(const ptram_t *t, const mpitopo_map_options_t *options, int **chosen, int **start)
{
    *chosen = *start = NULL;
    int part = t->prm->part;
    if (part == MPITOPO__PTRAM_PART_NONE)
        return MPITOPO_SUCCESS;
    mpitopo_machine_t *flat = NULL;
    int *tree = mpitopo__malloc_array((size_t)t->nprocs, sizeof *tree), *other = NULL, ok = 0;
    mpitopo_map_options_t o = *options;
    o.launch = NULL; /* block: exactly the first nprocs leaves */
    o.never_worse = 0;
    int rc = tree ? MPITOPO_SUCCESS : MPITOPO_NOMEM("the parts");
    if (rc == MPITOPO_SUCCESS && part != MPITOPO__PTRAM_PART_SCOTCH)
        rc = partition_tree_here(t, &o, tree, &ok);
    if (rc == MPITOPO_SUCCESS && (!ok || part != MPITOPO__PTRAM_PART_TREE))
        rc = flat_machine(t, &flat);
    if (rc == MPITOPO_SUCCESS && !ok && part != MPITOPO__PTRAM_PART_SCOTCH)
        rc = partition_with(t, flat, &o, 0, tree);
#ifdef MPITOPO_HAVE_SCOTCH
    if (rc == MPITOPO_SUCCESS && part != MPITOPO__PTRAM_PART_TREE) {
        other = mpitopo__malloc_array((size_t)t->nprocs, sizeof *other);
        rc = other ? partition_with(t, flat, &o, 1, other) : MPITOPO_NOMEM("the Scotch partition");
    }
#endif
    if (rc == MPITOPO_SUCCESS) {
        double a = part == MPITOPO__PTRAM_PART_SCOTCH ? INFINITY : cut_of(t->pat, tree);
        double b = other ? cut_of(t->pat, other) : INFINITY;
        mpitopo__log(3, "ptram mapper: partition cut %g (tree), %g (Scotch)", a, b);
        *chosen = b < a ? other : tree;
        *start = ok ? tree : NULL;
    }
    if (rc != MPITOPO_SUCCESS || (*chosen != tree && *start != tree))
        mpitopo__free(tree);
    if (rc != MPITOPO_SUCCESS || *chosen != other)
        mpitopo__free(other);
    if (rc != MPITOPO_SUCCESS)
        *chosen = *start = NULL;
    mpitopo_machine_destroy(&flat);
    return rc;
}

/* The processes of every item, in increasing order (CSR); part NULL:
 * every process an item. */
static int build_members(ptram_t *t, const int *part)
{
    t->ni = part ? t->nn : t->nprocs;
    t->exact = part != NULL;
    t->item_of = mpitopo__malloc_array((size_t)t->nprocs, sizeof *t->item_of);
    if (!t->item_of)
        return MPITOPO_NOMEM("the parts");
    for (int p = 0; p < t->nprocs; p++)
        t->item_of[p] = part ? part[p] : p;
    t->isize = mpitopo__calloc((size_t)t->ni, sizeof *t->isize);
    t->moff = mpitopo__calloc((size_t)t->ni + 1, sizeof *t->moff);
    t->mem = mpitopo__malloc_array((size_t)t->nprocs, sizeof *t->mem);
    if (!t->isize || !t->moff || !t->mem)
        return MPITOPO_NOMEM("the members of the parts");
    for (int p = 0; p < t->nprocs; p++)
        t->isize[t->item_of[p]]++;
    for (int a = 0; a < t->ni; a++)
        t->moff[a + 1] = t->moff[a] + t->isize[a];
    /* The item graph's row offsets, allocated here, serve as fill cursors first. */
    int64_t *at = t->ooff = mpitopo__malloc_array((size_t)t->ni + 1, sizeof *t->ooff);
    if (!at)
        return MPITOPO_NOMEM("the members of the parts");
    memcpy(at, t->moff, ((size_t)t->ni + 1) * sizeof *at);
    for (int p = 0; p < t->nprocs; p++)
        t->mem[at[t->item_of[p]]++] = p;
    return MPITOPO_SUCCESS;
}

/* The item graph's out-edges, duplicates merged (pos[b]: where item b went
 * in the current row), then its transpose. */
static int build_item_graph(ptram_t *t)
{
    const mpitopo_pattern_t *pat = t->pat;
    size_t ne = (size_t)(pat->nedges > 0 ? pat->nedges : 1);
    int64_t *pos = mpitopo__malloc_array((size_t)t->ni, sizeof *pos);
    t->odst = mpitopo__malloc_array(ne, sizeof *t->odst);
    t->obytes = mpitopo__malloc_array(ne, sizeof *t->obytes);
    t->opairs = mpitopo__malloc_array(ne, sizeof *t->opairs);
    t->ioff = mpitopo__calloc((size_t)t->ni + 1, sizeof *t->ioff);
    t->isrc = mpitopo__malloc_array(ne, sizeof *t->isrc);
    t->ibytes = mpitopo__malloc_array(ne, sizeof *t->ibytes);
    t->ipairs = mpitopo__malloc_array(ne, sizeof *t->ipairs);
    int rc = MPITOPO_SUCCESS;
    if (!pos || !t->odst || !t->obytes || !t->opairs || !t->ioff || !t->isrc || !t->ibytes || !t->ipairs) {
        rc = MPITOPO_NOMEM("the graph of the parts");
        goto cleanup;
    }
    for (int b = 0; b < t->ni; b++)
        pos[b] = -1;
    int64_t out = 0;
    for (int a = 0; a < t->ni; a++) {
        int64_t row = out;
        t->ooff[a] = row;
        for (int64_t i = t->moff[a]; i < t->moff[a + 1]; i++) {
            int p = t->mem[i];
            for (int64_t e = pat->offs[p]; e < pat->offs[p + 1]; e++) {
                int b = t->item_of[pat->dst[e]];
                if (b == a || !(pat->bytes[e] > 0))
                    continue;
                if (pos[b] < row) {
                    pos[b] = out;
                    t->odst[out] = b;
                    t->obytes[out] = 0;
                    t->opairs[out++] = 0;
                }
                t->obytes[pos[b]] += pat->bytes[e];
                t->opairs[pos[b]]++;
            }
        }
    }
    t->ooff[t->ni] = out;
    for (int64_t e = 0; e < out; e++)
        t->ioff[t->odst[e] + 1]++;
    for (int b = 0; b < t->ni; b++)
        t->ioff[b + 1] += t->ioff[b];
    for (int b = 0; b < t->ni; b++)
        pos[b] = t->ioff[b];
    for (int a = 0; a < t->ni; a++)
        for (int64_t e = t->ooff[a]; e < t->ooff[a + 1]; e++) {
            int64_t at = pos[t->odst[e]]++;
            t->isrc[at] = a;
            t->ibytes[at] = t->obytes[e];
            t->ipairs[at] = t->opairs[e];
        }
cleanup:
    mpitopo__free(pos);
    return rc;
}

static int setup_placement(ptram_t *t)
{
    t->node_of = mpitopo__malloc_array((size_t)t->ni, sizeof *t->node_of);
    t->fill = mpitopo__calloc((size_t)t->nn, sizeof *t->fill);
    t->soff = mpitopo__malloc_array((size_t)t->nn + 1, sizeof *t->soff);
    t->slots = mpitopo__malloc_array((size_t)t->nprocs, sizeof *t->slots);
    t->proc_node = mpitopo__malloc_array((size_t)t->nprocs, sizeof *t->proc_node);
    if (!t->node_of || !t->fill || !t->soff || !t->slots || !t->proc_node)
        return MPITOPO_NOMEM("the placement");
    for (int a = 0; a < t->ni; a++)
        t->node_of[a] = -1;
    for (int p = 0; p < t->nprocs; p++)
        t->proc_node[p] = -1;
    t->soff[0] = 0;
    for (int n = 0; n < t->nn; n++)
        t->soff[n + 1] = t->soff[n] + t->cap[n];
    t->view = (mpitopo__ptram_items_t){.ni = t->ni, .nn = t->nn, .exact = t->exact, .isize = t->isize,
                                       .cap = t->cap, .end = t->end, .ooff = t->ooff, .ioff = t->ioff,
                                       .odst = t->odst, .isrc = t->isrc, .obytes = t->obytes, .ibytes = t->ibytes,
                                       .opairs = t->opairs, .ipairs = t->ipairs, .node_of = t->node_of,
                                       .fill = t->fill};
    return MPITOPO_SUCCESS;
}

/* ---- staging moves ------------------------------------------------------ */

/* Stage the traffic of item a on node n with every placed item (skip:
 * an item to leave out, -1 for none). */
static void stage_item(ptram_t *t, int a, int n, int skip, int sign)
{
    mpitopo__ptram_stage_item(&t->view, &t->pl, route_cb, t, a, n, skip, sign);
}

/* Stage the swap of placed items a and b (on different nodes): their
 * traffic leaves, then comes back from the exchanged nodes. The a-b
 * traffic is staged with a's, between the two nodes both ways round.
 * a_gone: a's traffic is staged as gone already (the first part, the same
 * for every b). */
static void stage_swap_rest(ptram_t *t, int a, int b, int a_gone)
{
    int na = t->node_of[a], nb = t->node_of[b];
    if (!a_gone)
        stage_item(t, a, na, -1, -1);
    stage_item(t, b, nb, a, -1);
    t->node_of[a] = nb;
    t->node_of[b] = na;
    stage_item(t, a, nb, -1, +1);
    stage_item(t, b, na, a, +1);
    t->node_of[a] = na;
    t->node_of[b] = nb;
}

static void stage_swap(ptram_t *t, int a, int b)
{
    stage_swap_rest(t, a, b, 0);
}

/* What placing item a on node n would stage, from the route lengths
 * alone: the hop-bytes (summed in the same order) and the channels of its
 * routes, *hops. */
static double item_hop_bytes(ptram_t *t, int a, int n, int64_t *hops)
{
    double dhb = 0;
    *hops = 0;
    for (int64_t e = t->ooff[a]; e < t->ooff[a + 1]; e++) {
        int m = t->node_of[t->odst[e]];
        if (m >= 0 && m != n) {
            int len = route_length(t, n, m);
            dhb += t->obytes[e] * len;
            *hops += len;
        }
    }
    for (int64_t e = t->ioff[a]; e < t->ioff[a + 1]; e++) {
        int m = t->node_of[t->isrc[e]];
        if (m >= 0 && m != n) {
            int len = route_length(t, m, n);
            dhb += t->ibytes[e] * len;
            *hops += len;
        }
    }
    return dhb;
}

static void put(ptram_t *t, int a, int n)
{
    t->node_of[a] = n;
    t->slots[t->soff[n] + t->fill[n]++] = a;
    for (int64_t i = t->moff[a]; i < t->moff[a + 1]; i++)
        t->proc_node[t->mem[i]] = t->end[n];
}

static void check(ptram_t *t)
{
    if (t->prm->check)
        t->prm->check(t->prm->check_ctx, &t->pl, t->proc_node);
}

/* ---- step 2: greedy (Alg. 3.1) ------------------------------------------ */

/* Place item p on node n for good. */
static void place(ptram_t *t, double *conn, double *rest, int p, int n)
{
    stage_item(t, p, n, -1, +1);
    mpitopo__pload_commit(&t->pl);
    put(t, p, n);
    mpitopo__ptram_greedy_placed(&t->view, conn, rest, p);
    check(t);
}

/* The steps made elsewhere (prm->greedy: the parallel driver), replayed
 * here so that the structure and the check hook see what the serial loop
 * would have done. */
static int greedy_elsewhere(ptram_t *t, double *conn, double *rest)
{
    int *order = mpitopo__malloc_array((size_t)t->ni, sizeof *order);
    int *node = mpitopo__malloc_array((size_t)t->ni, sizeof *node);
    int rc = order && node ? t->prm->greedy(t->prm->greedy_ctx, &t->view, &t->pl, order, node)
                           : MPITOPO_NOMEM("the greedy's steps");
    for (int s = 0; rc == MPITOPO_SUCCESS && s < t->ni; s++) {
        if (order[s] < 0 || order[s] >= t->ni || t->node_of[order[s]] >= 0 || node[s] < 0 || node[s] >= t->nn ||
            !mpitopo__ptram_fits(&t->view, order[s], node[s]))
            rc = MPITOPO_FAIL_AS(MPITOPO_ERR_INTERNAL, "mpitopo_map", "mapper 'ptram': the parallel greedy's step %d "
                                 "(part %d on node %d) is not a valid step", s, order[s], node[s]);
        else
            place(t, conn, rest, order[s], node[s]);
    }
    mpitopo__free(order);
    mpitopo__free(node);
    return rc;
}

/* With no placed peer every node scores the same: the first that fits. */
static int first_fit(ptram_t *t, int p)
{
    for (int n = 0; n < t->nn; n++)
        if (mpitopo__ptram_fits(&t->view, p, n))
            return n;
    return -1;
}

/*
 * The node for item p, which has placed peers: the lowest hybrid metric,
 * the lowest node on a tie, exactly what scoring every node in order gives,
 * for less. A node's hybrid metric is at least its floor (its hop-bytes,
 * from the route lengths, and the MC so far, which placing only raises):
 * the node of the lowest floor is scored first, then only the nodes whose
 * floor could still win. On a torus most nodes are far from p's peers and
 * are never staged. bound: room for one value per node.
 */
static int greedy_node(ptram_t *t, int p, double *bound)
{
    int first = -1;
    for (int n = 0; n < t->nn; n++) {
        bound[n] = INFINITY;
        if (!mpitopo__ptram_fits(&t->view, p, n))
            continue;
        int64_t hops;
        double dhb = item_hop_bytes(t, p, n, &hops);
        bound[n] = mpitopo__pload_add_floor(&t->pl, dhb, hops);
        if (first < 0 || bound[n] < bound[first])
            first = n;
    }
    if (first < 0)
        return -1;
    int bestn = first;
    double best = mpitopo__ptram_score(&t->view, &t->pl, route_cb, t, p, first);
    for (int n = 0; n < t->nn; n++) {
        if (n == first || !mpitopo__ptram_fits(&t->view, p, n))
            continue;
        if (bound[n] > best || (bound[n] == best && n > bestn))
            continue;
        double h = mpitopo__ptram_score(&t->view, &t->pl, route_cb, t, p, n);
        if (h < best || (h == best && n < bestn)) {
            best = h;
            bestn = n;
        }
    }
    return bestn;
}

/* conn[a]: a's traffic (both ways) with the placed items, rest[a]: with
 * the others; the next item is the argmax of conn + rest / (placed + 1). */
static int greedy(ptram_t *t)
{
    double *conn = mpitopo__calloc((size_t)t->ni, sizeof *conn);
    double *rest = mpitopo__calloc((size_t)t->ni, sizeof *rest);
    double *bound = mpitopo__malloc_array((size_t)t->nn, sizeof *bound);
    if (!conn || !rest || !bound) {
        mpitopo__free(conn);
        mpitopo__free(rest);
        mpitopo__free(bound);
        return MPITOPO_NOMEM("the greedy scores");
    }
    mpitopo__ptram_greedy_init(&t->view, rest);
    int rc = MPITOPO_SUCCESS;
    if (t->prm->greedy) {
        rc = greedy_elsewhere(t, conn, rest);
        goto done;
    }
    for (int step = 0; step < t->ni; step++) {
        int p = mpitopo__ptram_greedy_next(&t->view, conn, rest, step);
        int bestn = conn[p] == 0 ? first_fit(t, p) : greedy_node(t, p, bound);
        if (bestn < 0) {
            rc = MPITOPO_FAIL_AS(MPITOPO_ERR_INTERNAL, "mpitopo_map", "mapper 'ptram': no node left for part %d of %d "
                                 "processes", p, t->isize[p]);
            break;
        }
        place(t, conn, rest, p, bestn);
    }
done:
    mpitopo__free(conn);
    mpitopo__free(rest);
    mpitopo__free(bound);
    return rc;
}

/* ---- step 3: refinement (Alg. 3.2) -------------------------------------- */

typedef struct near_entry {
    int hops, node;
} near_entry_t;

static int compare_near(const void *x, const void *y)
{
    const near_entry_t *a = x, *b = y;
    if (a->hops != b->hops)
        return a->hops < b->hops ? -1 : 1;
    return (a->node > b->node) - (a->node < b->node);
}

/* The k nearest other nodes in use of every node (route length, then node). */
static int build_near(ptram_t *t)
{
    t->nk = t->prm->k < t->nn - 1 ? t->prm->k : t->nn - 1;
    if (t->nk <= 0)
        return MPITOPO_SUCCESS;
    near_entry_t *cand = mpitopo__malloc_array((size_t)t->nn, sizeof *cand);
    t->near = mpitopo__malloc_array((size_t)t->nn * (size_t)t->nk, sizeof *t->near);
    if (!cand || !t->near) {
        mpitopo__free(cand);
        return MPITOPO_NOMEM("the nearest nodes");
    }
    for (int n = 0; n < t->nn; n++) {
        int c = 0;
        for (int m = 0; m < t->nn; m++) {
            if (m == n)
                continue;
            int len;
            route_of(t, n, m, &len);
            cand[c++] = (near_entry_t){len, m};
        }
        qsort(cand, (size_t)c, sizeof *cand, compare_near);
        for (int i = 0; i < t->nk; i++)
            t->near[(size_t)n * (size_t)t->nk + (size_t)i] = cand[i].node;
    }
    mpitopo__free(cand);
    return MPITOPO_SUCCESS;
}

static int route_has(ptram_t *t, int n, int m, int64_t channel)
{
    if (n == m)
        return 0;
    int len;
    const int64_t *r = route_of(t, n, m, &len);
    for (int i = 0; i < len; i++)
        if (r[i] == channel)
            return 1;
    return 0;
}

/* Whether some traffic of item a crosses the channel. */
static int crosses(ptram_t *t, int a, int64_t channel)
{
    int n = t->node_of[a];
    for (int64_t e = t->ooff[a]; e < t->ooff[a + 1]; e++)
        if (route_has(t, n, t->node_of[t->odst[e]], channel))
            return 1;
    for (int64_t e = t->ioff[a]; e < t->ioff[a + 1]; e++)
        if (route_has(t, t->node_of[t->isrc[e]], n, channel))
            return 1;
    return 0;
}

/* Make the swap of placed items a and b. */
static void apply_swap(ptram_t *t, int a, int b)
{
    int n = t->node_of[a], m = t->node_of[b];
    stage_swap(t, a, b);
    mpitopo__pload_commit(&t->pl);
    mpitopo__pload_resum(&t->pl);
    for (int j = 0; j < t->fill[n]; j++)
        if (t->slots[t->soff[n] + j] == a)
            t->slots[t->soff[n] + j] = b;
    for (int j = 0; j < t->fill[m]; j++)
        if (t->slots[t->soff[m] + j] == b)
            t->slots[t->soff[m] + j] = a;
    t->node_of[a] = m;
    t->node_of[b] = n;
    for (int64_t i = t->moff[a]; i < t->moff[a + 1]; i++)
        t->proc_node[t->mem[i]] = t->end[m];
    for (int64_t i = t->moff[b]; i < t->moff[b + 1]; i++)
        t->proc_node[t->mem[i]] = t->end[n];
    check(t);
}

/* Swap a with the best partner among the items of the k nearest nodes, if
 * one lowers the hybrid metric. */
static int try_swaps(ptram_t *t, int a)
{
    int n = t->node_of[a], best_b = -1;
    mpitopo_network_metrics_t cur;
    mpitopo__pload_metrics(&t->pl, &cur);
    /* A gain must beat the rounding of the running sums. */
    double best = cur.hybrid - 1e-12 * fabs(cur.hybrid);
    /* a's traffic leaving its node is the first part of every swap: staged once. */
    stage_item(t, a, n, -1, -1);
    mpitopo__pload_keep(&t->pl);
    for (int i = 0; i < t->nk; i++) {
        int m = t->near[(size_t)n * (size_t)t->nk + (size_t)i];
        for (int j = 0; j < t->fill[m]; j++) {
            int b = t->slots[t->soff[m] + j];
            if (t->isize[b] != t->isize[a])
                continue;
            stage_swap_rest(t, a, b, 1);
            double h = mpitopo__pload_delta_hybrid(&t->pl);
            mpitopo__pload_rewind(&t->pl);
            if (h < best) {
                best = h;
                best_b = b;
            }
        }
    }
    mpitopo__pload_clear(&t->pl);
    if (best_b < 0)
        return 0;
    apply_swap(t, a, best_b);
    return 1;
}

/*
 * The thesis's refinement as written (Alg. 3.2, "strict"): in a round,
 * every part whose traffic crosses the hottest channel tries the parts of
 * its k nearest nodes, and the one swap that lowers MC most (first found
 * on a tie) is made; rounds stop when none lowers it.
 */
static int refine_strict_round(ptram_t *t)
{
    int64_t hot = mpitopo__pload_hottest(&t->pl);
    if (hot < 0)
        return 0;
    double best = t->pl.tree[1] * (1 - 1e-12);
    int best_a = -1, best_b = -1;
    mpitopo_network_metrics_t m;
    for (int n = 0; n < t->nn; n++)
        for (int j = 0; j < t->fill[n]; j++) {
            int a = t->slots[t->soff[n] + j];
            if (!crosses(t, a, hot))
                continue;
            for (int i = 0; i < t->nk; i++) {
                int mn = t->near[(size_t)n * (size_t)t->nk + (size_t)i];
                for (int q = 0; q < t->fill[mn]; q++) {
                    int b = t->slots[t->soff[mn] + q];
                    if (t->isize[b] != t->isize[a])
                        continue;
                    stage_swap(t, a, b);
                    mpitopo__pload_delta_metrics(&t->pl, &m);
                    mpitopo__pload_clear(&t->pl);
                    if (m.max_congestion < best) {
                        best = m.max_congestion;
                        best_a = a;
                        best_b = b;
                    }
                }
            }
        }
    if (best_a < 0)
        return 0;
    apply_swap(t, best_a, best_b);
    return 1;
}

/* One pass over the parts in node order; hot: only those whose traffic
 * crosses the most congested channel (Alg. 3.2). The number of swaps. */
static int refine_pass(ptram_t *t, int hot)
{
    int swaps = 0;
    for (int n = 0; n < t->nn; n++)
        for (int j = 0; j < t->fill[n]; j++) {
            int a = t->slots[t->soff[n] + j];
            if (hot) {
                int64_t c = mpitopo__pload_hottest(&t->pl);
                if (c < 0 || !crosses(t, a, c))
                    continue;
            }
            swaps += try_swaps(t, a);
        }
    return swaps;
}

/* A round is the thesis's pass over the parts on the hottest channel;
 * when that finds nothing, a pass over every part (which the thesis does
 * not do: it leaves local optima where only other channels can gain). */
static int refine(ptram_t *t, mpitopo__ptram_stats_t *st)
{
    int rc = t->near ? MPITOPO_SUCCESS : build_near(t);
    if (rc != MPITOPO_SUCCESS || t->nk <= 0)
        return rc;
    for (int round = 0; round < t->prm->rounds; round++) {
        int swaps = t->prm->strict ? refine_strict_round(t) : t->prm->blind ? 0 : refine_pass(t, 1);
        if (swaps == 0 && !t->prm->strict)
            swaps = refine_pass(t, 0);
        st->swaps += swaps;
        st->rounds = round + 1;
        if (swaps == 0)
            break;
    }
    return MPITOPO_SUCCESS;
}

/* ---- inside the nodes --------------------------------------------------- */

/* node[p]: the node in use of process p; each node's processes placed by
 * mpitopo__place_in_node (netmap_common.c). */
static int place_cores(const ptram_t *t, const mpitopo_map_options_t *options, const int *node, int *leaf_of_proc)
{
    int *procs = mpitopo__malloc_array((size_t)t->nprocs, sizeof *procs);
    int *local = mpitopo__malloc_array((size_t)t->nprocs, sizeof *local);
    int *at = mpitopo__calloc((size_t)t->nn + 1, sizeof *at);
    int rc = procs && local && at ? MPITOPO_SUCCESS : MPITOPO_NOMEM("the processes of a node");
    for (int p = 0; rc == MPITOPO_SUCCESS && p < t->nprocs; p++) {
        local[p] = -1;
        at[node[p] + 1]++;
    }
    for (int n = 0; rc == MPITOPO_SUCCESS && n < t->nn; n++)
        at[n + 1] += at[n];
    /* by node, in rank order inside each */
    for (int p = 0; rc == MPITOPO_SUCCESS && p < t->nprocs; p++)
        procs[at[node[p]]++] = p;
    for (int n = 0, lo = 0; rc == MPITOPO_SUCCESS && n < t->nn; n++) {
        rc = mpitopo__place_in_node(t->m, t->pat, options, n, procs + lo, at[n] - lo, local, leaf_of_proc,
                                    "a node's sub-problem");
        lo = at[n];
    }
    mpitopo__free(procs);
    mpitopo__free(local);
    mpitopo__free(at);
    return rc;
}

/* ---- driver ------------------------------------------------------------- */

/* The network metrics of a placement (leaves) of the processes. */
static int evaluate(const mpitopo_machine_t *m, const mpitopo_pattern_t *pat, const mpitopo_network_t *net,
                    const int *end_node, const int *leaf_of_proc, const double *w,
                    const mpitopo_network_metrics_t *ref, int *scratch, mpitopo_network_metrics_t *out)
{
    for (int p = 0; p < pat->nprocs; p++) {
        int u = mpitopo__node_of(m, leaf_of_proc[p]);
        scratch[p] = end_node ? end_node[u] : u;
    }
    return mpitopo_network_evaluate(net, pat, scratch, w, ref, out);
}

/* Zero traffic, or so much that the hybrid metric would overflow. */
static int traffic_check(const mpitopo_pattern_t *pat, const mpitopo_network_t *net, int *none)
{
    double total = 0;
    for (int p = 0; p < pat->nprocs; p++)
        for (int64_t e = pat->offs[p]; e < pat->offs[p + 1]; e++)
            if (pat->dst[e] != p && pat->bytes[e] > 0)
                total += pat->bytes[e];
    *none = total == 0;
    int64_t nch;
    int max_route;
    double mincap = INFINITY, cap;
    mpitopo_network_size(net, NULL, &nch, &max_route);
    for (int64_t c = 0; c < nch; c++)
        if (mpitopo_network_channel(net, c, &cap, NULL, 0) == MPITOPO_SUCCESS && cap < mincap)
            mincap = cap;
    double worst = total / (nch > 0 ? mincap : 1.0);
    if (!isfinite(total * (max_route + 1)) || !isfinite(worst * worst * (double)(nch + 1)))
        return MPITOPO_FAIL_AS(MPITOPO_ERR_RANGE, "mpitopo_map", "mapper 'ptram': the pattern's %g bytes in all "
                               "overflow the hybrid metric (squared congestions): scale the weights down", total);
    return MPITOPO_SUCCESS;
}

static int launch_of(const mpitopo_machine_t *m, const mpitopo_map_options_t *options, int nprocs, int *launch)
{
    if (options->launch) {
        memcpy(launch, options->launch, (size_t)nprocs * sizeof *launch);
        return MPITOPO_SUCCESS;
    }
    return mpitopo__place_block(m, nprocs, launch);
}

/* Place the parts k on nodes k (the tree mapper's placement). */
static void start_in_order(ptram_t *t)
{
    for (int k = 0; k < t->ni; k++) {
        stage_item(t, k, k, -1, +1);
        mpitopo__pload_commit(&t->pl);
        put(t, k, k);
        check(t);
    }
}

/* One solution from the parts `part` (NULL: single processes), by the
 * greedy step or from the parts' own placement, refined: node[p] for
 * every process and its hybrid metric. */
static int solve(ptram_t *t, const int *part, int in_order, int refine_it, mpitopo__ptram_stats_t *st, int *node,
                 double *hybrid, double *mc)
{
    items_free(t);
    int rc = build_members(t, part);
    if (rc == MPITOPO_SUCCESS)
        rc = build_item_graph(t);
    if (rc == MPITOPO_SUCCESS)
        rc = setup_placement(t);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__pload_init(&t->pl, t->net, t->prm->w, t->ref);
    double t1 = now();
    if (rc == MPITOPO_SUCCESS && in_order)
        start_in_order(t);
    else if (rc == MPITOPO_SUCCESS)
        rc = greedy(t);
    double t2 = now();
    mpitopo_network_metrics_t g;
    if (rc == MPITOPO_SUCCESS && !in_order) {
        mpitopo__pload_metrics(&t->pl, &g);
        st->greedy_hybrid = g.hybrid;
    }
    if (rc == MPITOPO_SUCCESS && t->prm->rounds > 0 && refine_it)
        rc = refine(t, st);
    double t3 = now();
    if (rc == MPITOPO_SUCCESS) {
        for (int p = 0; p < t->nprocs; p++)
            node[p] = t->node_of[t->item_of[p]];
        mpitopo__pload_metrics(&t->pl, &g);
        *hybrid = g.hybrid;
        *mc = g.max_congestion;
    }
    st->nparts = t->ni;
    st->t_greedy += t2 - t1;
    st->t_refine += t3 - t2;
    return rc;
}

/* The launch's nodes as parts (part k: the processes on node k) when the
 * launch fills exactly the nodes in use, each to its slots; else NULL. */
static int launch_parts(const ptram_t *t, const int *launch, int **parts)
{
    *parts = NULL;
    int *part = mpitopo__malloc_array((size_t)t->nprocs, sizeof *part);
    int *count = mpitopo__calloc((size_t)t->nn, sizeof *count);
    int ok = part && count;
    for (int p = 0; ok && p < t->nprocs; p++) {
        int u = mpitopo__node_of(t->m, launch[p]);
        ok = u >= 0 && u < t->nn && ++count[u] <= t->cap[u];
        if (ok)
            part[p] = u;
    }
    mpitopo__free(count);
    if (!part || ok)
        *parts = part;
    else
        mpitopo__free(part);
    return part ? MPITOPO_SUCCESS : MPITOPO_NOMEM("the launch's parts");
}

/* Parts from the placement of the machine-level mapper `spec` (block
 * launch, no guard; "greedy": Hoefler and Snir's placement of the parts
 * `part`, ptram's own, instead of partitioning again); NULL when it fails or does not fill the nodes in use
 * (the optional start is then left out, its message cleared). */
static int mapper_parts(const ptram_t *t, const mpitopo_map_options_t *options, const char *spec,
                        const int *end_node, const int *part, int **parts)
{
    *parts = NULL;
    int *leaf = mpitopo__malloc_array((size_t)t->nprocs, sizeof *leaf);
    if (!leaf)
        return MPITOPO_NOMEM("a start's placement");
    mpitopo_map_options_t o = *options;
    o.launch = NULL;
    o.never_worse = 0;
    const mpitopo__map_net_t net = {t->net, end_node};
    int rc = strcmp(spec, "greedy") ? mpitopo_map(spec, t->m, t->pat, &o, leaf, NULL)
                                    : mpitopo__netgreedy_parts(t->m, t->pat, &o, &net, part, leaf);
    if (rc == MPITOPO_SUCCESS)
        rc = launch_parts(t, leaf, parts);
    else if (rc != MPITOPO_ERR_NOMEM) {
        mpitopo__log(3, "ptram mapper: no start from '%s' (%s)", spec, mpitopo_last_error());
        mpitopo__clear_error();
        rc = MPITOPO_SUCCESS;
    }
    mpitopo__free(leaf);
    return rc;
}

/* The starts of run_steps, in the order that wins ties, and their names. */
enum { START_GREEDY, START_TREE, START_LAUNCH, START_CART, START_METIS, START_HS, NSTARTS };
static const char *const start_name[NSTARTS] = {"greedy", "tree", "launch", "cart", "metis", "hoefler-snir"};
/* Where the best of the starts from START_LAUNCH on goes, refined. */
#define REFINED_EXTRA NSTARTS

/* The winner among solutions lo..hi-1: the lowest MC among those whose MC
 * is not above the launch's, then the lowest hybrid metric, the earlier on
 * ties; when all raise MC, the lowest hybrid. -1 when none is finite. */
static int best_start(const double *h, const double *mc, int lo, int hi, double launch_mc)
{
    int best = -1;
    for (int i = lo; i < hi; i++)
        if (isfinite(h[i]) && mc[i] <= launch_mc &&
            (best < 0 || mc[i] < mc[best] || (mc[i] == mc[best] && h[i] < h[best])))
            best = i;
    for (int i = lo; best < 0 && i < hi; i++)
        if (isfinite(h[i]))
            best = i;
    if (best >= 0 && mc[best] > launch_mc)
        for (int i = lo; i < hi; i++)
            if (isfinite(h[i]) && h[i] < h[best])
                best = i;
    return best;
}

/*
 * Several solutions: the greedy one from the chosen parts and, when the
 * tree mapper's parts are a placement of their own (on the network's group
 * levels), that placement (the greedy alone places parts one at a time and
 * loses to the hierarchy on 3-D stencils), both refined by step 3; then
 * the launch's own nodes in place, and the placements of the machine-level
 * mappers cart (Cartesian and sub-communicator patterns: the row-by-row
 * tiling keeps all-to-all groups on few switches) and metis (when built
 * with it) on the machine with the network's group levels, and of Hoefler
 * and Snir's greedy (the comparator "greedy", up to its node limit): these
 * as they are, and the best of them refined too. The winner has the lowest
 * MC among those whose MC is not above the launch's, then the lowest
 * hybrid metric: the hybrid metric without normalisation is ruled by
 * hop-bytes, and a refinement that trades congestion for hops (twice the
 * launch's MC on a 2-D halo of a 4,096-process torus) is worse where
 * congestion bounds the time. When every solution raises MC, the lowest
 * hybrid goes on to the launch guard. "strict" (the thesis as written) has
 * the greedy start only.
 */
static int run_steps(ptram_t *t, const mpitopo_map_options_t *options, const int *launch, double launch_mc,
                     const int *end_node, mpitopo__ptram_stats_t *st, int *leaf_of_proc)
{
    double t0 = now();
    int *parts[NSTARTS] = {NULL};
    int *node = mpitopo__malloc_array((NSTARTS + 1) * (size_t)t->nprocs, sizeof *node);
    int rc = node ? partition(t, options, &parts[START_GREEDY], &parts[START_TREE])
                  : MPITOPO_NOMEM("the nodes of the processes");
    int more = t->prm->rounds > 0 && !t->prm->strict;
    if (parts[START_TREE] && !more) {
        if (parts[START_TREE] != parts[START_GREEDY])
            mpitopo__free(parts[START_TREE]);
        parts[START_TREE] = NULL;
    } else if (parts[START_TREE] && parts[START_TREE] == parts[START_GREEDY]) {
        /* the tree's parts won step 1: the same parts, placed in order too */
        parts[START_TREE] = mpitopo__malloc_array((size_t)t->nprocs, sizeof *parts[START_TREE]);
        if (parts[START_TREE])
            memcpy(parts[START_TREE], parts[START_GREEDY], (size_t)t->nprocs * sizeof *parts[START_TREE]);
        else
            rc = MPITOPO_NOMEM("the tree's parts");
    }
    if (rc == MPITOPO_SUCCESS && more && parts[START_GREEDY])
        rc = launch_parts(t, launch, &parts[START_LAUNCH]);
    if (rc == MPITOPO_SUCCESS && more && parts[START_GREEDY])
        rc = mapper_parts(t, options, "cart", end_node, NULL, &parts[START_CART]);
#ifdef MPITOPO_HAVE_METIS
    if (rc == MPITOPO_SUCCESS && more && parts[START_GREEDY])
        rc = mapper_parts(t, options, "metis", end_node, NULL, &parts[START_METIS]);
#endif
    if (rc == MPITOPO_SUCCESS && more && parts[START_GREEDY] && t->nn <= MPITOPO__NETMAP_MAX_NODES)
        rc = mapper_parts(t, options, "greedy", end_node, parts[START_GREEDY], &parts[START_HS]);
    st->t_part = now() - t0;
    double h[NSTARTS + 1], mc[NSTARTS + 1];
    for (int i = 0; i <= NSTARTS; i++)
        h[i] = mc[i] = INFINITY;
    /* The greedy and the tree's starts refined, the others as they are. */
    for (int i = 0; i < NSTARTS && rc == MPITOPO_SUCCESS; i++)
        if (i == START_GREEDY || parts[i])
            rc = solve(t, parts[i], i != START_GREEDY, i <= START_TREE, st, node + (size_t)i * t->nprocs, &h[i],
                       &mc[i]);
    /* Only the best of those others goes through the refinement too: each
     * refinement costs about as much as the rest of a start. */
    int extra = best_start(h, mc, START_LAUNCH, NSTARTS, launch_mc);
    if (rc == MPITOPO_SUCCESS && extra >= 0 && isfinite(h[extra]))
        rc = solve(t, parts[extra], 1, 1, st, node + (size_t)REFINED_EXTRA * t->nprocs, &h[REFINED_EXTRA],
                   &mc[REFINED_EXTRA]);
    int best = best_start(h, mc, 0, NSTARTS + 1, launch_mc);
    int from = best == REFINED_EXTRA ? extra : best;
    if (from >= 0)
        st->start = start_name[from];
    if (rc == MPITOPO_SUCCESS)
        rc = place_cores(t, options, node + (size_t)best * t->nprocs, leaf_of_proc);
    st->nnodes = t->nn;
    for (int i = 0; i < NSTARTS; i++)
        mpitopo__free(parts[i]);
    mpitopo__free(node);
    return rc;
}

int mpitopo__ptram_run(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern,
                       const mpitopo_map_options_t *options, const mpitopo_network_t *network,
                       const int *end_node, const mpitopo__ptram_params_t *prm, int *leaf_of_proc,
                       mpitopo__ptram_stats_t *stats)
{
    mpitopo__ptram_stats_t dummy;
    mpitopo__ptram_stats_t *st = stats ? stats : &dummy;
    *st = (mpitopo__ptram_stats_t){0};
    int nprocs = pattern->nprocs, none;
    if (nprocs == 0)
        return MPITOPO_SUCCESS;
    double t0 = now();
    if (machine->node_level < 0) /* one node: only the inside of it matters */
        return mpitopo__map_tree(machine, pattern, NULL, options, leaf_of_proc);
    int rc = traffic_check(pattern, network, &none);
    int *launch = mpitopo__malloc_array((size_t)nprocs, sizeof *launch);
    int *scratch = mpitopo__malloc_array((size_t)nprocs, sizeof *scratch);
    ptram_t t = {.m = machine, .pat = pattern, .prm = prm, .nprocs = nprocs};
    mpitopo_network_metrics_t lm, res;
    if (rc == MPITOPO_SUCCESS && (!launch || !scratch))
        rc = MPITOPO_NOMEM("the launch placement");
    if (rc == MPITOPO_SUCCESS)
        rc = launch_of(machine, options, nprocs, launch);
    if (rc == MPITOPO_SUCCESS)
        rc = evaluate(machine, pattern, network, end_node, launch, prm->w, NULL, scratch, &lm);
    if (rc != MPITOPO_SUCCESS)
        goto cleanup;
    if (none) {
        /* Every placement costs 0 on the network: nothing to gain, keep the launch. */
        mpitopo__log(2, "ptram mapper: the pattern has no traffic between processes: launch placement kept");
        memcpy(leaf_of_proc, launch, (size_t)nprocs * sizeof *launch);
        st->zero_traffic = st->kept_launch = 1;
        goto cleanup;
    }
    const mpitopo_network_metrics_t *ref = prm->norm ? &lm : NULL;
    if (ref)
        rc = evaluate(machine, pattern, network, end_node, launch, prm->w, ref, scratch, &lm);
    if (rc != MPITOPO_SUCCESS)
        goto cleanup;
    st->launch_hybrid = lm.hybrid;
    t.net = network;
    t.ref = ref;
    rc = setup_nodes(&t, end_node);
    if (rc == MPITOPO_SUCCESS)
        rc = setup_routes(&t);
    if (rc == MPITOPO_SUCCESS)
        rc = run_steps(&t, options, launch, lm.max_congestion, end_node, st, leaf_of_proc);
    if (rc == MPITOPO_SUCCESS)
        rc = evaluate(machine, pattern, network, end_node, leaf_of_proc, prm->w, ref, scratch, &res);
    if (rc != MPITOPO_SUCCESS)
        goto cleanup;
    st->final_hybrid = res.hybrid;
    /* Never worse than the launch: a lower hybrid metric and, except for
     * the thesis's method as written (strict), no higher MC. */
    int raises_mc = !prm->strict && res.max_congestion > lm.max_congestion;
    if (prm->keep && (!(res.hybrid < lm.hybrid) || raises_mc)) {
        mpitopo__log(2, "ptram mapper: hybrid metric %g (MC %g) does not beat the launch placement's %g (MC %g): "
                     "launch kept", res.hybrid, res.max_congestion, lm.hybrid, lm.max_congestion);
        memcpy(leaf_of_proc, launch, (size_t)nprocs * sizeof *launch);
        st->kept_launch = 1;
        st->final_hybrid = lm.hybrid;
        st->start = "launch";
    }
    mpitopo__log(2, "ptram mapper: %d parts on %d nodes, hybrid %g (greedy %g, launch %g) from the %s start%s, "
                 "%d swaps in %d rounds; %.3f s partitioning, %.3f s greedy, %.3f s refinement",
                 st->nparts, st->nnodes, st->final_hybrid, st->greedy_hybrid, lm.hybrid, st->start ? st->start : "no",
                 st->kept_launch ? " (launch kept)" : "", st->swaps, st->rounds, st->t_part, st->t_greedy,
                 st->t_refine);
cleanup:
    ptram_free(&t);
    mpitopo__free(launch);
    mpitopo__free(scratch);
    st->t_total = now() - t0;
    return rc;
}

int mpitopo__map_ptram(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern, const char *args,
                       const mpitopo_map_options_t *options, const mpitopo__map_net_t *net, int *leaf_of_proc)
{
    mpitopo__ptram_params_t prm;
    int rc = mpitopo__ptram_parse(args, &prm);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    if (!net || !net->network)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, "mpitopo_map", "ptram needs a network: use mpitopo_map_network or "
                               "--network");
    return mpitopo__ptram_run(machine, pattern, options, net->network, net->end_node, &prm, leaf_of_proc, NULL);
}
