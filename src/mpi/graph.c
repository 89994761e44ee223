/*
 * Graph and dist-graph communicators that are really reordered.
 *
 * The graph is the communication of the ranks (roles). The mapper places
 * every role on a leaf of the machine; the process sitting on that leaf
 * takes the role, i.e. gets that rank in a split of comm, and the PMPI_
 * constructor is then called on the split with reorder = 0 and the roles'
 * lists, which need no renumbering. Only the adjacent form has to move
 * data: each process's lists go to the process taking its role.
 *
 * The dist-graph forms gather the edges on rank 0 (O(E) there), which maps
 * and scatters the new ranks; errors are agreed on by one allreduce before
 * the gather and one broadcast once rank 0 has room for the edges, and the
 * scatter of the new ranks carries the mapping's outcome. Graph_create has the graph
 * everywhere, so every process maps it itself, as for Cartesian grids.
 */
#include "core/env.h"
#include "machine/machine_internal.h"
#include "map/map_internal.h"
#include "mpi/mpi_internal.h"
#include "mpi/ptram_par.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* What the caller asked for, after validation. */
typedef struct graph_request {
    const char *func;
    const char *kind; /* "dist_graph" or "graph", for the verbose line */
    MPI_Comm comm;
    int rank, size;
    mpitopo__topo_options_t opt;
    int weighted;   /* 1: weights given, 0: MPI_UNWEIGHTED, -1: no edges here */
    int nroles;     /* ranks of the graph: size, or nnodes for graph_create */
    int quiet;      /* no verbose line (graph_map) */
    /* The machine of comm, fetched once by fetch_machine (reorder only). */
    const mpitopo_nodeinfo_t *ni;
    const mpitopo_machine_t *machine;
    const int *leaf_of_rank;
    const mpitopo_network_t *net; /* the machine's network (NULL: none), from fetch_machine */
    const int *end_node;          /* its end node of every node unit */
} graph_request_t;

/* Edges this process gives, as (src, dst, weight) triples. */
typedef struct edge_list {
    int n;
    int *triple; /* 3 * n ints */
} edge_list_t;

static int is_unweighted(const int *w)
{
    return w == MPI_UNWEIGHTED;
}

/* ---- validation -------------------------------------------------------- */

/* A list of n neighbours with optional weights: ranks in [0, size), weights
 * >= 0. `name` and `wname` name the arrays in messages. */
static int check_list(const graph_request_t *r, const char *name, int n, const int *list, const char *wname,
                      const int *w)
{
    if (n < 0)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, r->func, "the size of %s = %d must be >= 0", name, n);
    if (n > 0 && !list)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, r->func, "%s = NULL with %d entries", name, n);
    int weighted = !is_unweighted(w);
    if (n > 0 && weighted && (!w || w == MPI_WEIGHTS_EMPTY))
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, r->func, "%s = %s with %d edges (use MPI_UNWEIGHTED)", wname,
                                 w ? "MPI_WEIGHTS_EMPTY" : "NULL", n);
    for (int i = 0; i < n; i++) {
        if (list[i] == MPI_PROC_NULL)
            return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, r->func, "%s[%d] = MPI_PROC_NULL: not a process", name, i);
        if (list[i] < 0 || list[i] >= r->size)
            return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, r->func, "%s[%d] = %d out of range [0, %d)", name, i,
                                     list[i], r->size);
        if (weighted && w[i] < 0)
            return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, r->func, "%s[%d] = %d must be >= 0", wname, i, w[i]);
    }
    return MPITOPO_SUCCESS;
}

/* Whether this process gives weights: -1 when it has no edge, so that it
 * agrees with any other process. */
static int weight_class(int nedges, const int *w)
{
    return nedges == 0 ? -1 : !is_unweighted(w);
}

static int check_adjacent(graph_request_t *r, int indegree, const int *sources, const int *sourceweights,
                          int outdegree, const int *destinations, const int *destweights)
{
    int rc = check_list(r, "sources", indegree, sources, "sourceweights", sourceweights);
    if (rc == MPITOPO_SUCCESS)
        rc = check_list(r, "destinations", outdegree, destinations, "destweights", destweights);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    int in = weight_class(indegree, sourceweights), out = weight_class(outdegree, destweights);
    if (in >= 0 && out >= 0 && in != out)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_MISMATCH, r->func, "%s is MPI_UNWEIGHTED but %s is not",
                                 in ? "destweights" : "sourceweights", in ? "sourceweights" : "destweights");
    r->weighted = in >= 0 ? in : out;
    return MPITOPO_SUCCESS;
}

static int check_general(graph_request_t *r, int n, const int *sources, const int *degrees,
                         const int *destinations, const int *weights, int64_t *nedges)
{
    int rc = check_list(r, "sources", n, sources, "weights", MPI_UNWEIGHTED);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    if (n > 0 && !degrees)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, r->func, "degrees = NULL with n = %d", n);
    int64_t total = 0;
    for (int i = 0; i < n; i++) {
        if (degrees[i] < 0)
            return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, r->func, "degrees[%d] = %d must be >= 0", i, degrees[i]);
        total += degrees[i];
        if (total > INT_MAX / 3)
            return MPITOPO_FAIL_AS(MPITOPO_ERR_RANGE, r->func, "more than %d edges given by one process",
                                     INT_MAX / 3);
    }
    rc = check_list(r, "destinations", (int)total, destinations, "weights", weights);
    r->weighted = weight_class((int)total, weights);
    *nedges = total;
    return rc;
}

/* ---- agreement --------------------------------------------------------- */

/* The graph of mpitopo_graph_create (the same on every process), or
 * nnodes < 0 for the dist-graph forms. */
typedef struct whole_graph {
    int nnodes;
    const int *index, *edges;
} whole_graph_t;

/*
 * One allreduce (mpitopo__agree) tells every process whether any had bad
 * arguments (every process then returns the first one's error), whether
 * reorder, the info values or (graph_create) the graph differ (every
 * process returns MPITOPO_ERR_MISMATCH naming the first process that
 * differs from process 0 and the argument), and, in two extra slots,
 * whether weights were given on some processes and not on others.
 */
static int agree(graph_request_t *r, int local, const whole_graph_t *g)
{
    mpitopo__agree_t a = {.func = r->func, .comm = r->comm, .rank = r->rank, .nextra = 2};
    int ok = local == MPITOPO_SUCCESS;
    a.extra[0] = ok && r->weighted == 1 ? r->rank : INT_MAX;
    a.extra[1] = ok && r->weighted == 0 ? r->rank : INT_MAX;
    mpitopo__agree_arg(&a, "reorder (with info mpitopo_reorder)", ok ? r->opt.reorder : 0);
    mpitopo__agree_string(&a, "info mpitopo_mapper", ok ? r->opt.mapper : "");
    mpitopo__agree_arg(&a, "info mpitopo_weights", ok ? (int)r->opt.weight : 0);
    if (g) {
        int nedges = ok && g->nnodes > 0 ? g->index[g->nnodes - 1] : 0;
        mpitopo__agree_arg(&a, "nnodes", ok ? g->nnodes : 0);
        mpitopo__agree_hash(&a, "index", g->index, ok && g->nnodes > 0 ? (size_t)g->nnodes * sizeof(int) : 0);
        mpitopo__agree_hash(&a, "edges", g->edges, (size_t)nedges * sizeof(int));
    }
    int rc = mpitopo__agree(&a, local);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    if (a.extra[0] != INT_MAX && a.extra[1] != INT_MAX)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_MISMATCH, r->func,
                                 "weights are given on process %d but MPI_UNWEIGHTED on process %d", a.extra[0],
                                 a.extra[1]);
    /* From here on, whether the graph is weighted at all. */
    r->weighted = a.extra[0] != INT_MAX;
    return MPITOPO_SUCCESS;
}

/* ---- the mapping ------------------------------------------------------- */

/* One line on rank 0 at MPITOPO_VERBOSE >= 1: the graph, the machine, the
 * weight crossing the node level and the cost before and after. */
static void report(const graph_request_t *r, const mpitopo_nodeinfo_t *ni, const mpitopo_machine_t *m,
                   const mpitopo_pattern_t *pattern, const int *launch, const int *mapped, int kept)
{
    if (mpitopo__verbose() < 1)
        return;
    mpitopo_metrics_t before, after;
    mpitopo_weight_t w = r->weighted == 1 ? r->opt.weight : MPITOPO_WEIGHT_UNIT;
    if (mpitopo_metrics_compute(m, pattern, launch, w, &before) != MPITOPO_SUCCESS ||
        mpitopo_metrics_compute(m, pattern, mapped, w, &after) != MPITOPO_SUCCESS)
        return;
    int64_t nedges = 0;
    mpitopo_pattern_nedges(pattern, &nedges);
    char nodes[64];
    if (ni->min_local_size == ni->max_local_size)
        snprintf(nodes, sizeof nodes, "%d nodes x %d", ni->nnodes, ni->min_local_size);
    else
        snprintf(nodes, sizeof nodes, "%d nodes x %d..%d", ni->nnodes, ni->min_local_size, ni->max_local_size);
    int nl = m->node_level;
    char network[256];
    mpitopo__network_report(ni, m, pattern, launch, mapped, network, sizeof network);
    mpitopo__log(1, "%s %d ranks, %lld edges on %s (%s, %s): off-node weight %.6g -> %.6g, cost %.3g -> %.3g%s%s; "
                    "above the nodes: %s",
                 r->kind, r->nroles, (long long)nedges, nodes, mpitopo__graph_mapper(r->net, &r->opt),
                 mpitopo_weight_name(w), before.levels[nl].weight_crossing, after.levels[nl].weight_crossing,
                 before.cost, after.cost, network, kept ? " (original order kept: no gain)" : "",
                 mpitopo__nodeinfo_above(ni));
}

/* The machine of comm, on every process before anything can fail locally
 * (collective over comm the first time). */
static int fetch_machine(graph_request_t *r)
{
    int rc = mpitopo__comm_machine_cached(r->comm, &r->ni, &r->machine, &r->leaf_of_rank);
    if (rc == MPITOPO_SUCCESS)
        mpitopo__nodeinfo_network(r->ni, &r->net, &r->end_node);
    return rc;
}

/*
 * Map the roles of `pattern` on the machine of comm (fetch_machine): *role
 * receives the role of every process of comm (MPI_UNDEFINED for those left
 * out), or only the caller's when `role_of_rank` is NULL and `mine` is not.
 */
static int map_roles(const graph_request_t *r, const mpitopo_pattern_t *pattern, int *role_of_rank, int *mine)
{
    const mpitopo_nodeinfo_t *ni = r->ni;
    const mpitopo_machine_t *m = r->machine;
    const int *leaf_of_rank = r->leaf_of_rank;
    int rc = MPITOPO_SUCCESS;
    int *mapped = mpitopo__malloc_array((size_t)r->nroles, sizeof *mapped);
    int *role_of_leaf = mpitopo__malloc_array((size_t)m->nleaves, sizeof *role_of_leaf);
    if (!mapped || !role_of_leaf) {
        rc = MPITOPO_NOMEM("the mapping");
        goto cleanup;
    }
    /* The launch: role p where the process of rank p sits. */
    mpitopo_map_options_t opt = MPITOPO_MAP_OPTIONS_INIT;
    opt.weight = r->weighted == 1 ? r->opt.weight : MPITOPO_WEIGHT_UNIT;
    opt.launch = leaf_of_rank;
    opt.never_worse = 1;
    int kept = 0;
    const char *spec = mpitopo__graph_mapper(r->net, &r->opt);
    if (mpitopo__ptram_par_applies(r->net, spec)) {
        /* rank 0 only, the other leaders serving (ptram_par.c) */
        rc = mpitopo__ptram_par_map(ni->leader_comm, spec, m, r->net, r->end_node, pattern, &opt, mapped, &kept,
                                    NULL);
    } else {
        rc = mpitopo__map_on_comm(r->net, r->end_node, spec, m, pattern, &opt, mapped, &kept);
    }
    mpitopo__rank0_t r0;
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__map_keep_rank0(m, pattern, opt.weight, r->nroles, leaf_of_rank, r->opt.rank0_move, mapped,
                                     &r0);
    if (rc != MPITOPO_SUCCESS) {
        rc = MPITOPO_FAIL_RESTATE(rc, r->func, "mapping the graph with %s", spec);
        goto cleanup;
    }
    if (r->rank == 0 && !r->quiet) {
        report(r, ni, m, pattern, leaf_of_rank, mapped, kept);
        mpitopo__rank0_report(r->func, &r0);
    }
    for (int l = 0; l < m->nleaves; l++)
        role_of_leaf[l] = MPI_UNDEFINED;
    for (int p = 0; p < r->nroles; p++)
        role_of_leaf[mapped[p]] = p;
    if (role_of_rank)
        for (int q = 0; q < r->size; q++)
            role_of_rank[q] = role_of_leaf[leaf_of_rank[q]];
    if (mine)
        *mine = role_of_leaf[leaf_of_rank[r->rank]];
cleanup:
    mpitopo__free(mapped);
    mpitopo__free(role_of_leaf);
    return rc;
}

/* The weight of an edge as the mapper sees it: 1 without weights. */
static double edge_weight(const graph_request_t *r, const int *w, int i)
{
    return r->weighted == 1 ? (double)w[i] : 1.0;
}

/* The edges this process gives, as triples, for the gather. */
static int collect_adjacent(const graph_request_t *r, int outdegree, const int *destinations,
                            const int *destweights, edge_list_t *e)
{
    e->n = outdegree;
    e->triple = mpitopo__malloc_array((size_t)outdegree * 3 + 1, sizeof *e->triple);
    if (!e->triple)
        return MPITOPO_NOMEM("the edge list");
    for (int i = 0; i < outdegree; i++) {
        e->triple[3 * i] = r->rank;
        e->triple[3 * i + 1] = destinations[i];
        e->triple[3 * i + 2] = (int)edge_weight(r, destweights, i);
    }
    return MPITOPO_SUCCESS;
}

static int collect_general(const graph_request_t *r, int n, const int *sources, const int *degrees,
                           const int *destinations, const int *weights, int nedges, edge_list_t *e)
{
    e->n = nedges;
    e->triple = mpitopo__malloc_array((size_t)nedges * 3 + 1, sizeof *e->triple);
    if (!e->triple)
        return MPITOPO_NOMEM("the edge list");
    int k = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, k++) {
            e->triple[3 * k] = sources[i];
            e->triple[3 * k + 1] = destinations[k];
            e->triple[3 * k + 2] = (int)edge_weight(r, weights, k);
        }
    return MPITOPO_SUCCESS;
}

/* On rank 0: the gathered triples as a pattern over r->nroles ranks. */
static int triples_pattern(const graph_request_t *r, const int *t, int64_t n, mpitopo_pattern_t **pattern)
{
    int *src = mpitopo__malloc_array((size_t)n + 1, sizeof *src);
    int *dst = mpitopo__malloc_array((size_t)n + 1, sizeof *dst);
    double *w = mpitopo__malloc_array((size_t)n + 1, sizeof *w);
    int rc = MPITOPO_SUCCESS;
    if (!src || !dst || !w)
        rc = MPITOPO_NOMEM("the gathered graph");
    for (int64_t i = 0; rc == MPITOPO_SUCCESS && i < n; i++) {
        src[i] = t[3 * i];
        dst[i] = t[3 * i + 1];
        w[i] = t[3 * i + 2];
    }
    /* Both weights carry the caller's numbers: mpitopo_weights only says
     * which one they are, and the mapper reads that one. */
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo_pattern_create(r->nroles, n, src, dst, w, w, pattern);
    mpitopo__free(src);
    mpitopo__free(dst);
    mpitopo__free(w);
    return rc;
}

/* Rank 0 failed with `code` (its own result: local), as every process
 * knows: its message reaches every process. */
static int share_message(const graph_request_t *r, int local, int code)
{
    char what[256] = "";
    int rc;
    if (r->rank == 0)
        snprintf(what, sizeof what, "%s", mpitopo_last_error());
    if ((rc = PMPI_Bcast(what, sizeof what, MPI_CHAR, 0, r->comm)) != MPI_SUCCESS)
        return rc;
    if (r->rank == 0)
        return local;
    what[sizeof what - 1] = '\0';
    return MPITOPO_FAIL_AS(code, r->func, "on process 0: %s", what);
}

/* Rank 0's error reaches every process: its code, then its message. */
static int share_status(const graph_request_t *r, int local)
{
    int code = local;
    int rc = PMPI_Bcast(&code, 1, MPI_INT, 0, r->comm);
    if (rc != MPI_SUCCESS || code == MPITOPO_SUCCESS)
        return rc != MPI_SUCCESS ? rc : MPITOPO_SUCCESS;
    return share_message(r, local, code);
}

/* Rank 0: displacements of the gathered triples, and room for them. */
static int root_buffers(const graph_request_t *r, int *counts, int *displs, int **all, int64_t *total)
{
    *total = 0;
    for (int q = 0; q < r->size; q++) {
        displs[q] = (int)(3 * *total);
        *total += counts[q];
        if (*total > INT_MAX / 3)
            return MPITOPO_FAIL_AS(MPITOPO_ERR_RANGE, r->func, "the graph has more than %d edges in all",
                                     INT_MAX / 3);
    }
    for (int q = 0; q < r->size; q++)
        counts[q] *= 3;
    *all = mpitopo__malloc_array((size_t)(3 * *total) + 1, sizeof **all);
    return *all ? MPITOPO_SUCCESS : MPITOPO_NOMEM("the gathered graph");
}

/* Rank 0: the roles of every process, from the gathered triples. */
static int root_map(const graph_request_t *r, const int *all, int64_t total, int *roles)
{
    mpitopo_pattern_t *pattern = NULL;
    int rc = triples_pattern(r, all, total, &pattern);
    if (rc == MPITOPO_SUCCESS)
        rc = map_roles(r, pattern, roles, NULL);
    mpitopo_pattern_destroy(&pattern);
    return rc;
}

/*
 * The parallel ptram (ptram_par.c) needs the node leaders while rank 0
 * maps: rank 0 releases them when it is done (whatever the outcome), the
 * others serve until then. Nothing without it.
 */
static int end_parallel(const graph_request_t *r, int *local)
{
    const mpitopo_nodeinfo_t *ni = r->ni;
    if (!mpitopo__ptram_par_applies(r->net, mpitopo__graph_mapper(r->net, &r->opt)) || ni->leader_comm == MPI_COMM_NULL)
        return MPI_SUCCESS;
    if (r->rank != 0)
        return mpitopo__ptram_par_serve(ni->leader_comm, r->net, NULL);
    int rc = mpitopo__ptram_par_release(ni->leader_comm);
    if (rc != MPI_SUCCESS && *local == MPITOPO_SUCCESS)
        *local = rc;
    return MPI_SUCCESS;
}

/* From rank 0 (roles: 2 size ints there, the first size of them the role
 * of every rank, and `local` its outcome): each process receives (its
 * role, rank 0's code), and only on a failure does the message follow. */
static int scatter_roles(const graph_request_t *r, int local, int *roles, int *role)
{
    if (r->rank == 0)
        /* (role, code) pairs, spread from the back so none is overwritten. */
        for (int q = r->size - 1; q >= 0; q--) {
            roles[2 * q] = local == MPITOPO_SUCCESS ? roles[q] : MPI_UNDEFINED;
            roles[2 * q + 1] = local;
        }
    int mine[2];
    int rc = PMPI_Scatter(roles, 2, MPI_INT, mine, 2, MPI_INT, 0, r->comm);
    if (rc != MPI_SUCCESS)
        return rc;
    if (mine[1] != MPITOPO_SUCCESS)
        return share_message(r, local, mine[1]);
    *role = mine[0];
    return MPITOPO_SUCCESS;
}

/*
 * Gather every process's edges on rank 0 (a Gather of the counts, then one
 * Gatherv of the triples), map there and scatter the roles: *role is the
 * caller's new rank. `counts` and `displs` are rank 0's arrays of size
 * ints, allocated before the agreement so that their failure is agreed on.
 * Every process must have fetched the machine already (it is collective).
 * The outcome of the mapping rides on the scatter: each process receives
 * (its role, rank 0's code), and only on a failure does the message follow.
 */
static int gather_and_map(const graph_request_t *r, const edge_list_t *e, int *counts, int *displs, int *role)
{
    int *all = NULL, *roles = NULL, local = MPITOPO_SUCCESS;
    int64_t total = 0;
    int rc = PMPI_Gather(&e->n, 1, MPI_INT, counts, 1, MPI_INT, 0, r->comm);
    if (rc != MPI_SUCCESS)
        return rc;
    if (r->rank == 0) {
        local = root_buffers(r, counts, displs, &all, &total);
        roles = mpitopo__malloc_array((size_t)r->size * 2, sizeof *roles);
        if (local == MPITOPO_SUCCESS && !roles)
            local = MPITOPO_NOMEM("the new ranks");
    }
    if ((rc = share_status(r, local)) != MPITOPO_SUCCESS)
        goto cleanup;
    rc = PMPI_Gatherv(e->triple, 3 * e->n, MPI_INT, all, counts, displs, MPI_INT, 0, r->comm);
    if (rc != MPI_SUCCESS)
        goto cleanup;
    if (r->rank == 0)
        local = root_map(r, all, total, roles);
    if ((rc = end_parallel(r, &local)) == MPI_SUCCESS)
        rc = scatter_roles(r, local, roles, role);
cleanup:
    mpitopo__free(all);
    mpitopo__free(roles);
    return rc;
}

/* ---- building the communicator ----------------------------------------- */

/* Split comm so that the process playing role k gets rank k (MPI_UNDEFINED:
 * left out), and check that every role found its process. */
static int split_by_role(const graph_request_t *r, int local, int role, MPI_Comm *ordered)
{
    *ordered = MPI_COMM_NULL;
    int rc = PMPI_Comm_split(r->comm, local == MPITOPO_SUCCESS && role != MPI_UNDEFINED ? 0 : MPI_UNDEFINED,
                             role, ordered);
    if (rc != MPI_SUCCESS || local != MPITOPO_SUCCESS)
        return local != MPITOPO_SUCCESS ? local : rc;
    if (*ordered == MPI_COMM_NULL)
        return MPITOPO_SUCCESS;
    int n = 0;
    rc = PMPI_Comm_size(*ordered, &n);
    if (rc == MPI_SUCCESS && n != r->nroles)
        rc = MPITOPO_FAIL_AS(MPITOPO_ERR_INTERNAL, r->func,
                               "another process of comm failed to compute the mapping (%d of %d joined)", n,
                               r->nroles);
    if (rc != MPI_SUCCESS)
        PMPI_Comm_free(ordered);
    return rc;
}

/* The lists of one rank of an adjacent graph, as they travel. */
typedef struct adjacent_lists {
    int indegree, outdegree;
    int *sources, *sourceweights, *destinations, *destweights;
    int *buffer;
} adjacent_lists_t;

/*
 * In `ordered`, the process that had rank q in comm sends its lists to rank
 * q (the process taking its role) and receives the lists of its own new
 * rank from whoever had that rank: exactly one message reaches each
 * process, so it is received from MPI_ANY_SOURCE with a probe for its size.
 * Layout: indegree, outdegree, sources, destinations, then the weights.
 */
static int move_lists(const graph_request_t *r, MPI_Comm ordered, const int *ins, const int *inw, int indeg,
                      const int *outs, const int *outw, int outdeg, adjacent_lists_t *mine)
{
    const int tag = 7183;
    int w = r->weighted == 1, len = 2 + (indeg + outdeg) * (1 + w), rlen = 0;
    int *msg = mpitopo__malloc_array((size_t)len, sizeof *msg);
    if (!msg)
        return MPITOPO_NOMEM("the lists to send");
    msg[0] = indeg;
    msg[1] = outdeg;
    /* An empty list may be NULL or MPI_WEIGHTS_EMPTY: never read it. */
    if (indeg > 0) {
        memcpy(msg + 2, ins, (size_t)indeg * sizeof *msg);
        if (w)
            memcpy(msg + 2 + indeg + outdeg, inw, (size_t)indeg * sizeof *msg);
    }
    if (outdeg > 0) {
        memcpy(msg + 2 + indeg, outs, (size_t)outdeg * sizeof *msg);
        if (w)
            memcpy(msg + 2 + 2 * indeg + outdeg, outw, (size_t)outdeg * sizeof *msg);
    }
    MPI_Request req;
    MPI_Status st;
    int rc = PMPI_Isend(msg, len, MPI_INT, r->rank, tag, ordered, &req);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Probe(MPI_ANY_SOURCE, tag, ordered, &st);
    if (rc != MPI_SUCCESS) {
        mpitopo__free(msg); /* MPI failed: its state is undefined anyway */
        return rc;
    }
    int local = PMPI_Get_count(&st, MPI_INT, &rlen);
    if (local == MPI_SUCCESS && !(mine->buffer = mpitopo__malloc_array((size_t)rlen + 1, sizeof *mine->buffer)))
        local = MPITOPO_NOMEM("the received lists");
    /* The receive is posted even without a buffer (count 0 truncates), so
     * the message never stays pending. */
    int rrc = PMPI_Recv(mine->buffer, mine->buffer ? rlen : 0, MPI_INT, st.MPI_SOURCE, tag, ordered,
                        MPI_STATUS_IGNORE);
    int wrc = PMPI_Wait(&req, MPI_STATUS_IGNORE);
    mpitopo__free(msg);
    if (local != MPI_SUCCESS)
        return local;
    if (rrc != MPI_SUCCESS || wrc != MPI_SUCCESS)
        return rrc != MPI_SUCCESS ? rrc : wrc;
    int *b = mine->buffer;
    mine->indegree = b[0];
    mine->outdegree = b[1];
    mine->sources = b + 2;
    mine->destinations = b + 2 + b[0];
    mine->sourceweights = w ? b + 2 + b[0] + b[1] : NULL;
    mine->destweights = w ? b + 2 + 2 * b[0] + b[1] : NULL;
    return MPITOPO_SUCCESS;
}

/* After the agreement, a failure on one process (memory, mostly) must not
 * leave the others inside the next collective: one more allreduce. */
static int all_ok(const graph_request_t *r, MPI_Comm comm, int local)
{
    int bad = local != MPITOPO_SUCCESS ? r->rank : INT_MAX, first = INT_MAX;
    int rc = PMPI_Allreduce(&bad, &first, 1, MPI_INT, MPI_MIN, comm);
    if (rc != MPI_SUCCESS || local != MPITOPO_SUCCESS)
        return local != MPITOPO_SUCCESS ? local : rc;
    if (first != INT_MAX)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_INTERNAL, r->func, "process %d of comm failed (see its error)", first);
    return MPITOPO_SUCCESS;
}

/* Local start of every function: MPI state, comm, rank and size (errors
 * returned at once: no process can communicate on such a comm), then
 * *local: the output pointer (`out`, named `out_name`) and the info keys
 * over the given defaults, to be agreed on. */
static int begin(graph_request_t *r, MPI_Info info, int reorder, const void *out, const char *out_name,
                 int *local)
{
    int rc;
    if ((rc = mpitopo__check_mpi(r->func)) != MPITOPO_SUCCESS ||
        (rc = mpitopo__check_intracomm(r->comm, r->func)) != MPITOPO_SUCCESS)
        return rc;
    if ((rc = PMPI_Comm_rank(r->comm, &r->rank)) != MPI_SUCCESS ||
        (rc = PMPI_Comm_size(r->comm, &r->size)) != MPI_SUCCESS)
        return rc;
    /* MPITOPO_MAPPER, then the info key, over the default (tree, or ptram
     * under a network: mpitopo__graph_mapper). */
    const char *env = mpitopo__getenv(MPITOPO_ENV_MAPPER);
    snprintf(r->opt.mapper, sizeof r->opt.mapper, "%s", env && *env ? env : "tree");
    r->opt.mapper_set = env && *env;
    r->opt.weight = MPITOPO_WEIGHT_BYTES;
    r->opt.reorder = reorder != 0;
    r->nroles = r->size;
    *local = out ? mpitopo__topo_options_read(r->func, info, &r->opt)
                 : MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, r->func, "%s = NULL", out_name);
    /* MPITOPO_MAPPER is checked like the key, when the key does not override it. */
    if (*local == MPITOPO_SUCCESS && env && *env && strcmp(r->opt.mapper, env) == 0 &&
        (*local = mpitopo__map_check_spec(env)) != MPITOPO_SUCCESS && *local != MPITOPO_ERR_NOMEM)
        *local = MPITOPO_FAIL_RESTATE(MPITOPO_ERR_PARSE, r->func, "MPITOPO_MAPPER = \"%.64s\"", env);
    return MPITOPO_SUCCESS;
}

/* What the dist-graph forms share once the arguments are checked locally:
 * rank 0's buffers, the agreement, the machine, the gather and the split.
 * *ordered is MPI_COMM_NULL when reorder is off. */
static int dist_reorder(graph_request_t *r, int local, const edge_list_t *e, MPI_Comm *ordered)
{
    int *counts = NULL, *displs = NULL, role = MPI_UNDEFINED;
    *ordered = MPI_COMM_NULL;
    if (local == MPITOPO_SUCCESS && r->opt.reorder && r->rank == 0) {
        counts = mpitopo__malloc_array((size_t)r->size, sizeof *counts);
        displs = mpitopo__malloc_array((size_t)r->size, sizeof *displs);
        if (!counts || !displs)
            local = MPITOPO_NOMEM("the edge counts");
    }
    int rc = agree(r, local, NULL);
    if (rc == MPITOPO_SUCCESS && r->opt.reorder) {
        rc = fetch_machine(r);
        if (rc == MPITOPO_SUCCESS)
            rc = gather_and_map(r, e, counts, displs, &role);
        if (rc == MPITOPO_SUCCESS)
            rc = split_by_role(r, rc, role, ordered);
    }
    mpitopo__free(counts);
    mpitopo__free(displs);
    return rc;
}

/*
 * The weight arguments for the role this process takes. MPI decides whether
 * a dist-graph is weighted on each process from that process's own weight
 * arguments (weighted unless MPI_UNWEIGHTED), even when it has no edge. So
 * a role with no edge passes the caller's own arguments on (they may be
 * anything with degree 0), and reports what MPI would have for the call; a
 * role with edges passes the weights that came with them, or MPI_UNWEIGHTED
 * when the graph has none.
 */
static void role_weights(const graph_request_t *r, const adjacent_lists_t *mine, const int *sourceweights,
                         const int *destweights, const int **inw, const int **outw)
{
    if (mine->indegree == 0 && mine->outdegree == 0) {
        *inw = sourceweights;
        *outw = destweights;
        return;
    }
    int w = r->weighted == 1;
    *inw = !w ? MPI_UNWEIGHTED : mine->indegree ? mine->sourceweights : MPI_WEIGHTS_EMPTY;
    *outw = !w ? MPI_UNWEIGHTED : mine->outdegree ? mine->destweights : MPI_WEIGHTS_EMPTY;
}

/* After the PMPI_ constructor (result rc): the mpitopo_ keys of info stay
 * on the new communicator (MPICH drops the keys it does not know), so that
 * mpitopo_neighbor and friends given at creation apply on every MPI. */
static int keep_keys(const graph_request_t *r, MPI_Info info, int rc, MPI_Comm *newcomm)
{
    if (rc != MPI_SUCCESS || info == MPI_INFO_NULL || *newcomm == MPI_COMM_NULL)
        return rc;
    if ((rc = mpitopo__comm_info_set(*newcomm, info, r->func)) != MPITOPO_SUCCESS)
        PMPI_Comm_free(newcomm);
    return rc;
}

/* mpitopo_dist_graph_create_adjacent (topology = 1) and its thin form
 * mpitopo_dist_graph_reorder (topology = 0: the reordered communicator
 * without the topology, or a duplicate of comm when reorder is off). */
static int adjacent_impl(graph_request_t *r, int indegree, const int *sources, const int *sourceweights,
                         int outdegree, const int *destinations, const int *destweights, MPI_Info info,
                         int reorder, MPI_Comm *newcomm, int topology)
{
    if (newcomm)
        *newcomm = MPI_COMM_NULL;
    int local, rc = begin(r, info, reorder, newcomm, topology ? "newcomm" : "reordered", &local);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    edge_list_t e = {0, NULL};
    if (local == MPITOPO_SUCCESS)
        local = check_adjacent(r, indegree, sources, sourceweights, outdegree, destinations, destweights);
    if (local == MPITOPO_SUCCESS && r->opt.reorder)
        local = collect_adjacent(r, outdegree, destinations, destweights, &e);
    MPI_Comm ordered;
    rc = dist_reorder(r, local, &e, &ordered);
    mpitopo__free(e.triple);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    if (!r->opt.reorder)
        return topology ? keep_keys(r, info, PMPI_Dist_graph_create_adjacent(r->comm, indegree, sources,
                                                                              sourceweights, outdegree,
                                                                              destinations, destweights, info,
                                                                              0, newcomm),
                                    newcomm)
                        : PMPI_Comm_dup(r->comm, newcomm);
    if (!topology) {
        *newcomm = ordered;
        return MPITOPO_SUCCESS;
    }
    adjacent_lists_t mine = {0};
    local = move_lists(r, ordered, sources, sourceweights, indegree, destinations, destweights, outdegree, &mine);
    rc = all_ok(r, ordered, local);
    if (rc == MPITOPO_SUCCESS) {
        const int *inw, *outw;
        role_weights(r, &mine, sourceweights, destweights, &inw, &outw);
        rc = PMPI_Dist_graph_create_adjacent(ordered, mine.indegree, mine.sources, inw, mine.outdegree,
                                             mine.destinations, outw, info, 0, newcomm);
        rc = keep_keys(r, info, rc, newcomm);
    }
    mpitopo__free(mine.buffer);
    int frc = PMPI_Comm_free(&ordered);
    return rc != MPITOPO_SUCCESS ? rc : frc;
}

int mpitopo_dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[],
                                       const int sourceweights[], int outdegree, const int destinations[],
                                       const int destweights[], MPI_Info info, int reorder, MPI_Comm *newcomm)
{
    graph_request_t r = {.func = __func__, .kind = "dist_graph", .comm = comm};
    return mpitopo__mpi_result(__func__, adjacent_impl(&r, indegree, sources, sourceweights, outdegree,
                                                       destinations, destweights, info, reorder, newcomm, 1));
}

/* A thin form of mpitopo_dist_graph_create_adjacent: the same
 * implementation, stopping at the reordered communicator (topology = 0). */
int mpitopo_dist_graph_reorder(MPI_Comm comm, int indegree, const int sources[], const int sourceweights[],
                               int outdegree, const int destinations[], const int destweights[], MPI_Info info,
                               int reorder, MPI_Comm *reordered)
{
    graph_request_t r = {.func = __func__, .kind = "dist_graph", .comm = comm};
    return mpitopo__mpi_result(__func__, adjacent_impl(&r, indegree, sources, sourceweights, outdegree,
                                                       destinations, destweights, info, reorder, reordered, 0));
}

static int general_impl(graph_request_t *r, int n, const int *sources, const int *degrees,
                        const int *destinations, const int *weights, MPI_Info info, int reorder,
                        MPI_Comm *newcomm)
{
    if (newcomm)
        *newcomm = MPI_COMM_NULL;
    int local, rc = begin(r, info, reorder, newcomm, "newcomm", &local);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    edge_list_t e = {0, NULL};
    int64_t nedges = 0;
    if (local == MPITOPO_SUCCESS)
        local = check_general(r, n, sources, degrees, destinations, weights, &nedges);
    if (local == MPITOPO_SUCCESS && r->opt.reorder)
        local = collect_general(r, n, sources, degrees, destinations, weights, (int)nedges, &e);
    MPI_Comm ordered;
    rc = dist_reorder(r, local, &e, &ordered);
    mpitopo__free(e.triple);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    /* The edges name roles, which are the new ranks: they pass unchanged. */
    rc = PMPI_Dist_graph_create(r->opt.reorder ? ordered : r->comm, n, sources, degrees, destinations, weights,
                                info, 0, newcomm);
    rc = keep_keys(r, info, rc, newcomm);
    int frc = ordered != MPI_COMM_NULL ? PMPI_Comm_free(&ordered) : MPI_SUCCESS;
    return rc != MPI_SUCCESS ? rc : frc;
}

int mpitopo_dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[],
                              const int destinations[], const int weights[], MPI_Info info, int reorder,
                              MPI_Comm *newcomm)
{
    graph_request_t r = {.func = __func__, .kind = "dist_graph", .comm = comm};
    return mpitopo__mpi_result(__func__,
                               general_impl(&r, n, sources, degrees, destinations, weights, info, reorder, newcomm));
}

/* ---- MPI_Graph_create and MPI_Graph_map -------------------------------- */

/* The graph of Graph_create: nnodes in [0, size], index non-decreasing
 * from >= 0, edges in [0, nnodes). */
static int check_graph(graph_request_t *r, int nnodes, const int *index, const int *edges)
{
    if (nnodes < 0 || nnodes > r->size)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, r->func, "nnodes = %d must be in [0, %d] (the size of comm)",
                                 nnodes, r->size);
    if (nnodes > 0 && (!index || !edges))
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, r->func, "%s = NULL with nnodes = %d",
                                 !index ? "index" : "edges", nnodes);
    for (int i = 0; i < nnodes; i++)
        if (index[i] < (i ? index[i - 1] : 0))
            return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, r->func, "index[%d] = %d is below %s = %d", i, index[i],
                                     i ? "the previous entry" : "0", i ? index[i - 1] : 0);
    int nedges = nnodes ? index[nnodes - 1] : 0;
    for (int k = 0; k < nedges; k++)
        if (edges[k] < 0 || edges[k] >= nnodes)
            return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, r->func, "edges[%d] = %d out of range [0, %d)", k, edges[k],
                                     nnodes);
    r->nroles = nnodes;
    r->weighted = 1; /* one unit per edge, duplicates adding up */
    return MPITOPO_SUCCESS;
}

/* My role in the mapped graph (every process maps it itself). */
static int graph_role(graph_request_t *r, const int *index, const int *edges, int *role)
{
    int nedges = index[r->nroles - 1], rc = fetch_machine(r);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    int *src = mpitopo__malloc_array((size_t)nedges + 1, sizeof *src);
    mpitopo_pattern_t *pattern = NULL;
    if (!src)
        return MPITOPO_NOMEM("the graph's edges");
    for (int i = 0, k = 0; i < r->nroles; i++)
        for (; k < index[i]; k++)
            src[k] = i;
    r->opt.weight = MPITOPO_WEIGHT_BYTES;
    rc = mpitopo_pattern_create(r->nroles, nedges, src, edges, NULL, NULL, &pattern);
    if (mpitopo__ptram_par_applies(r->net, mpitopo__graph_mapper(r->net, &r->opt))) {
        /* Rank 0 maps with the leaders' help, then its outcome and the
         * roles reach every process (the others' pattern is the same). */
        int *roles = NULL, local = rc;
        if (r->rank == 0 && local == MPITOPO_SUCCESS) {
            roles = mpitopo__malloc_array((size_t)r->size, sizeof *roles);
            local = roles ? map_roles(r, pattern, roles, NULL) : MPITOPO_NOMEM("the new ranks");
        }
        rc = end_parallel(r, &local);
        if (rc == MPI_SUCCESS)
            rc = share_status(r, local);
        if (rc == MPITOPO_SUCCESS)
            rc = PMPI_Scatter(roles, 1, MPI_INT, role, 1, MPI_INT, 0, r->comm);
        mpitopo__free(roles);
    } else if (rc == MPITOPO_SUCCESS) {
        rc = map_roles(r, pattern, NULL, role);
    }
    mpitopo_pattern_destroy(&pattern);
    mpitopo__free(src);
    return rc;
}

static int graph_prepare(graph_request_t *r, int nnodes, const int *index, const int *edges, int reorder,
                         const void *out, const char *out_name)
{
    int local, rc = begin(r, MPI_INFO_NULL, reorder, out, out_name, &local);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    if (local == MPITOPO_SUCCESS)
        local = check_graph(r, nnodes, index, edges);
    whole_graph_t g = {nnodes, index, edges};
    return agree(r, local, &g);
}

static int graph_create_impl(graph_request_t *r, int nnodes, const int *index, const int *edges, int reorder,
                             MPI_Comm *newcomm)
{
    if (newcomm)
        *newcomm = MPI_COMM_NULL;
    int rc = graph_prepare(r, nnodes, index, edges, reorder, newcomm, "newcomm");
    if (rc != MPITOPO_SUCCESS)
        return rc;
    if (!r->opt.reorder || nnodes == 0)
        return PMPI_Graph_create(r->comm, nnodes, index, edges, 0, newcomm);
    int role = MPI_UNDEFINED;
    int local = graph_role(r, index, edges, &role);
    MPI_Comm ordered;
    if ((rc = split_by_role(r, local, role, &ordered)) != MPITOPO_SUCCESS || ordered == MPI_COMM_NULL)
        return rc;
    rc = PMPI_Graph_create(ordered, nnodes, index, edges, 0, newcomm);
    int frc = PMPI_Comm_free(&ordered);
    return rc != MPI_SUCCESS ? rc : frc;
}

int mpitopo_graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[], int reorder,
                         MPI_Comm *newcomm)
{
    graph_request_t r = {.func = __func__, .kind = "graph", .comm = comm};
    return mpitopo__mpi_result(__func__, graph_create_impl(&r, nnodes, index, edges, reorder, newcomm));
}

static int graph_map_impl(graph_request_t *r, int nnodes, const int *index, const int *edges, int *newrank)
{
    if (newrank)
        *newrank = MPI_UNDEFINED;
    int rc = graph_prepare(r, nnodes, index, edges, 1, newrank, "newrank");
    if (rc != MPITOPO_SUCCESS || nnodes == 0)
        return rc;
    return graph_role(r, index, edges, newrank);
}

int mpitopo_graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank)
{
    graph_request_t r = {.func = __func__, .kind = "graph", .comm = comm, .quiet = 1};
    return mpitopo__mpi_result(__func__, graph_map_impl(&r, nnodes, index, edges, newrank));
}
