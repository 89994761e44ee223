/*
 * The HHC virtual topology (M.-H. Ok, "A Process-to-Processor Mapping of
 * HHC Topology in MPI", section 3; issue 18): the tree
 * communicator over the whole HHC, one Cartesian communicator per cube, the
 * node ID <-> {rank, communicator} table, and creation with reordering.
 * The arithmetic of IDs and routes is the network's (src/network/hhc.c), so
 * process i of the tree communicator is end node i of "hhc:D". Routed
 * messages are in hhc_route.c, the collectives in hhc_coll.c, the checks
 * of IDs and the hop between neighbours in hhc_id.c.
 */
#include "map/map_internal.h"
#include "hhc/hhc_internal.h"
#include "network/network_internal.h"

#include <stdio.h>
#include <string.h>

/* ---- validation and agreement ------------------------------------------- */

typedef struct hhc_request {
    const char *func;
    MPI_Comm comm;
    int rank, size;
    int dim, nnodes;
    int gather_cubes; /* info mpitopo_hhc_gather: 1 cubes, 0 auto */
    mpitopo__topo_options_t opt;
} hhc_request_t;

static int check_local(hhc_request_t *r, MPI_Info info, mpitopo_hhc_t **hhc)
{
    if (!hhc)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, r->func, "hhc = NULL");
    int rc = mpitopo__topo_options_read(r->func, info, &r->opt);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    char value[32];
    int found = 0;
    if ((rc = mpitopo__info_get(r->func, info, "mpitopo_hhc_gather", value, sizeof value, &found)) !=
        MPITOPO_SUCCESS)
        return rc;
    if (found && strcmp(value, "cubes") != 0 && strcmp(value, "auto") != 0)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_PARSE, r->func, "info mpitopo_hhc_gather = \"%s\": auto or cubes",
                               value);
    r->gather_cubes = found && strcmp(value, "cubes") == 0;
    if (r->dim < 1 || (r->nnodes = mpitopo__hhc_nnodes(r->dim)) < 0)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, r->func, "dim = %d must be in [1, 30]", r->dim);
    if (r->nnodes > r->size)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, r->func,
                               "dim = %d: the %d-HHC has %d nodes, comm only %d processes", r->dim,
                               r->dim, r->nnodes, r->size);
    return MPITOPO_SUCCESS;
}

static int agree_on_args(hhc_request_t *r, int local)
{
    mpitopo__agree_t a = {.func = r->func, .comm = r->comm, .rank = r->rank};
    if (local == MPITOPO_SUCCESS) {
        mpitopo__agree_arg(&a, "dim", r->dim);
        mpitopo__agree_arg(&a, "info mpitopo_reorder", r->opt.reorder);
        mpitopo__agree_string(&a, "info mpitopo_mapper", r->opt.mapper_set ? r->opt.mapper : "");
        mpitopo__agree_arg(&a, "info mpitopo_weights", (int)r->opt.weight);
        mpitopo__agree_arg(&a, "info mpitopo_hhc_gather", r->gather_cubes);
    } else {
        a.nargs = 5; /* the same vector length everywhere; values ignored */
    }
    return mpitopo__agree(&a, local);
}

/* ---- placement ------------------------------------------------------------ */

static void report(const hhc_request_t *r, const mpitopo_nodeinfo_t *ni, const mpitopo_machine_t *m,
                   const mpitopo_pattern_t *pattern, const char *mapper, const int *launch,
                   const int *mapped, int kept)
{
    if (r->rank != 0 || mpitopo__verbose() < 1)
        return;
    mpitopo_metrics_t before, after;
    if (mpitopo_metrics_compute(m, pattern, launch, r->opt.weight, &before) != MPITOPO_SUCCESS ||
        mpitopo_metrics_compute(m, pattern, mapped, r->opt.weight, &after) != MPITOPO_SUCCESS)
        return;
    char net[256];
    mpitopo__network_report(ni, m, pattern, launch, mapped, net, sizeof net);
    mpitopo__log(1, "hhc %d-HHC (%d nodes) on %d nodes by %s: off-node partners avg %.2f -> %.2f%s%s",
                 r->dim, r->nnodes, ni->nnodes, mapper, before.offnode_partners.avg,
                 after.offnode_partners.avg, net, kept ? " (launch order kept: no gain)" : "");
}

/* The node of the calling process (MPI_UNDEFINED when left out): the HHC's
 * links mapped onto comm's machine. Every process computes the same map. */
static int place(const hhc_request_t *r, int *node)
{
    *node = MPI_UNDEFINED;
    if (!r->opt.reorder) {
        if (r->rank < r->nnodes)
            *node = r->rank;
        return MPITOPO_SUCCESS;
    }
    const mpitopo_nodeinfo_t *ni;
    const mpitopo_machine_t *m;
    const int *leaf_of_rank;
    int rc = mpitopo__comm_machine_cached(r->comm, &ni, &m, &leaf_of_rank);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    mpitopo_pattern_t *pattern = NULL;
    int *mapped = mpitopo__malloc_array((size_t)r->nnodes, sizeof *mapped);
    if (!mapped)
        return MPITOPO_NOMEM("the mapping");
    const mpitopo_network_t *net;
    const int *end_node;
    mpitopo__nodeinfo_network(ni, &net, &end_node);
    const char *mapper = mpitopo__graph_mapper(net, &r->opt);
    if ((rc = mpitopo__hhc_pattern(r->dim, &pattern)) == MPITOPO_SUCCESS) {
        int kept; /* node i starts on the process of rank i */
        mpitopo__rank0_t r0;
        rc = mpitopo__map_from_launch(ni, mapper, m, pattern, r->opt.weight, leaf_of_rank, mapped, &kept);
        if (rc == MPITOPO_SUCCESS)
            rc = mpitopo__map_keep_rank0(m, pattern, r->opt.weight, r->nnodes, leaf_of_rank, r->opt.rank0_move,
                                         mapped, &r0);
        if (rc != MPITOPO_SUCCESS) {
            rc = MPITOPO_FAIL_RESTATE(rc, r->func, "mapping the %d-HHC", r->dim);
        } else {
            report(r, ni, m, pattern, mapper, leaf_of_rank, mapped, kept);
            if (r->rank == 0)
                mpitopo__rank0_report(r->func, &r0);
        }
    }
    if (rc == MPITOPO_SUCCESS)
        *node = mpitopo__position_of(mapped, r->nnodes, leaf_of_rank[r->rank]);
    mpitopo_pattern_destroy(&pattern);
    mpitopo__free(mapped);
    return rc;
}

/* ---- the communicators ---------------------------------------------------- */

/* The tree: a dist-graph of the centre-leaf links of the node, ranks in
 * node order (ordered), no reordering by MPI. */
static int make_tree(mpitopo_hhc_t *h, MPI_Comm ordered)
{
    int nb[1 + 8], n = 0, q;
    int parent = mpitopo__hhc_parent(h->dim, h->node, &q);
    if (parent >= 0)
        nb[n++] = parent;
    if (h->level > 0)
        for (int c = 0; c < 1 << mpitopo__hhc_cube_dim(h->dim, h->level); c++)
            nb[n++] = mpitopo__hhc_child(h->dim, h->node, c);
    return PMPI_Dist_graph_create_adjacent(ordered, n, nb, MPI_UNWEIGHTED, n, nb, MPI_UNWEIGHTED,
                                           MPI_INFO_NULL, 0, &h->tree);
}

/* The cube the node is a leaf of: a Cartesian 2x..x2 communicator whose
 * rank is the node's nibble (MPI_COMM_NULL for the top centre). */
static int make_cube(mpitopo_hhc_t *h)
{
    MPI_Comm part = MPI_COMM_NULL;
    int rc = PMPI_Comm_split(h->tree, h->centre >= 0 ? h->centre : MPI_UNDEFINED, h->position, &part);
    if (rc != MPI_SUCCESS || part == MPI_COMM_NULL)
        return rc;
    int k = mpitopo__hhc_cube_dim(h->dim, h->level + 1);
    int dims[3] = {2, 2, 2}, periods[3] = {0, 0, 0};
    rc = PMPI_Cart_create(part, k, dims, periods, 0, &h->cube);
    int frc = PMPI_Comm_free(&part);
    return rc != MPI_SUCCESS ? rc : frc;
}

/* The table: rank in comm of every node, node of every rank of comm, and
 * the order of the nodes' ranks (gather's block order). */
static int make_table(mpitopo_hhc_t *h, const hhc_request_t *r)
{
    int rc = PMPI_Allgather(&h->node, 1, MPI_INT, h->node_of_rank, 1, MPI_INT, r->comm);
    if (rc != MPI_SUCCESS)
        return rc;
    for (int rank = 0, block = 0; rank < r->size; rank++) {
        int v = h->node_of_rank[rank];
        if (v < 0 || v >= h->nnodes)
            continue;
        h->rank_of_node[v] = rank;
        h->block_of_node[v] = block++;
    }
    return MPITOPO_SUCCESS;
}

static void hhc_release(mpitopo_hhc_t *h)
{
    MPI_Comm *comms[] = {&h->tree, &h->cube, &h->ftree, &h->fcube};
    for (size_t i = 0; i < sizeof comms / sizeof *comms; i++)
        if (*comms[i] != MPI_COMM_NULL)
            PMPI_Comm_free(comms[i]);
    mpitopo__hhc_route_release(h);
    mpitopo__free(h->node_of_rank);
    mpitopo__free(h->rank_of_node);
    mpitopo__free(h->block_of_node);
    mpitopo__free(h);
}

/* An empty object for node (MPI_UNDEFINED: a spare process, which takes
 * part in the creation and then releases it), or NULL. */
static mpitopo_hhc_t *hhc_alloc(const hhc_request_t *r, int node)
{
    mpitopo_hhc_t *h = mpitopo__calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->tree = h->cube = h->ftree = h->fcube = MPI_COMM_NULL;
    h->dim = r->dim;
    h->nnodes = r->nnodes;
    h->comm_size = r->size;
    h->gather_cubes = r->gather_cubes;
    h->node = node;
    h->node_of_rank = mpitopo__malloc_array((size_t)r->size, sizeof *h->node_of_rank);
    h->rank_of_node = mpitopo__malloc_array((size_t)h->nnodes, sizeof *h->rank_of_node);
    h->block_of_node = mpitopo__malloc_array((size_t)h->nnodes, sizeof *h->block_of_node);
    if (!h->node_of_rank || !h->rank_of_node || !h->block_of_node) {
        hhc_release(h);
        return NULL;
    }
    return h;
}

/* After agreement: the node and the memory of every process (a second
 * agreement, so that one failure ends the call everywhere), then the table
 * and the communicators of the members. */
static int build(hhc_request_t *r, mpitopo_hhc_t **out)
{
    int node = MPI_UNDEFINED;
    mpitopo_hhc_t *h = NULL;
    int local = place(r, &node);
    if (local == MPITOPO_SUCCESS && !(h = hhc_alloc(r, node)))
        local = MPITOPO_NOMEM("the HHC");
    mpitopo__agree_t a = {.func = r->func, .comm = r->comm, .rank = r->rank};
    int rc = mpitopo__agree(&a, local);
    if (rc == MPITOPO_SUCCESS)
        rc = make_table(h, r);
    MPI_Comm ordered = MPI_COMM_NULL;
    if (rc == MPITOPO_SUCCESS)
        rc = PMPI_Comm_split(r->comm, node == MPI_UNDEFINED ? MPI_UNDEFINED : 0, node, &ordered);
    if (rc == MPITOPO_SUCCESS && ordered != MPI_COMM_NULL) {
        h->level = mpitopo__hhc_level(h->dim, node);
        h->centre = mpitopo__hhc_parent(h->dim, node, &h->position);
        if ((rc = make_tree(h, ordered)) == MPI_SUCCESS && (rc = make_cube(h)) == MPI_SUCCESS &&
            (rc = PMPI_Comm_dup(h->tree, &h->ftree)) == MPI_SUCCESS && h->cube != MPI_COMM_NULL)
            rc = PMPI_Comm_dup(h->cube, &h->fcube);
    }
    if (ordered != MPI_COMM_NULL)
        PMPI_Comm_free(&ordered);
    if (rc != MPITOPO_SUCCESS || node == MPI_UNDEFINED) {
        if (h)
            hhc_release(h);
        return rc;
    }
    *out = h;
    return MPITOPO_SUCCESS;
}

static int hhc_create_impl(hhc_request_t *r, MPI_Info info, mpitopo_hhc_t **hhc)
{
    if (hhc)
        *hhc = NULL;
    int rc;
    if ((rc = mpitopo__check_mpi(r->func)) != MPITOPO_SUCCESS ||
        (rc = mpitopo__check_intracomm(r->comm, r->func)) != MPITOPO_SUCCESS)
        return rc;
    if ((rc = PMPI_Comm_rank(r->comm, &r->rank)) != MPI_SUCCESS ||
        (rc = PMPI_Comm_size(r->comm, &r->size)) != MPI_SUCCESS)
        return rc;
    if ((rc = agree_on_args(r, check_local(r, info, hhc))) != MPITOPO_SUCCESS)
        return rc;
    return build(r, hhc);
}

int mpitopo_hhc_create(MPI_Comm comm, int dim, MPI_Info info, mpitopo_hhc_t **hhc)
{
    hhc_request_t r = {.func = __func__, .comm = comm, .dim = dim,
                       .opt = {.mapper = "tree", .weight = MPITOPO_WEIGHT_BYTES, .reorder = 1}};
    return mpitopo__mpi_result(__func__, hhc_create_impl(&r, info, hhc));
}

int mpitopo_hhc_free(mpitopo_hhc_t **hhc)
{
    if (!hhc || !*hhc)
        return MPITOPO_SUCCESS;
    int rc = mpitopo__hhc_fence(*hhc, __func__);
    hhc_release(*hhc);
    *hhc = NULL;
    return mpitopo__mpi_result(__func__, rc);
}

/* ---- queries --------------------------------------------------------------- */

int mpitopo_hhc_info(const mpitopo_hhc_t *hhc, int *dim, int *nnodes, long long *id)
{
    if (!hhc)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "hhc = NULL");
    if (dim)
        *dim = hhc->dim;
    if (nnodes)
        *nnodes = hhc->nnodes;
    if (id)
        *id = (long long)mpitopo__hhc_id(hhc->dim, hhc->node);
    return MPITOPO_SUCCESS;
}

int mpitopo_hhc_comm(const mpitopo_hhc_t *hhc, int which, MPI_Comm *comm)
{
    if (!hhc || !comm)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "%s = NULL", !hhc ? "hhc" : "comm");
    if (which != MPITOPO_HHC_TREE && which != MPITOPO_HHC_CUBE)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "which = %d must be MPITOPO_HHC_TREE or MPITOPO_HHC_CUBE",
                            which);
    *comm = which == MPITOPO_HHC_TREE ? hhc->tree : hhc->cube;
    return MPITOPO_SUCCESS;
}

int mpitopo_hhc_id_of_rank(const mpitopo_hhc_t *hhc, int rank, long long *id)
{
    if (!hhc || !id)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "%s = NULL", !hhc ? "hhc" : "id");
    int v = -1;
    if (rank >= 0 && rank < hhc->comm_size)
        v = hhc->node_of_rank[rank];
    if (v < 0 || v >= hhc->nnodes)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "rank = %d is not a process of the HHC", rank);
    *id = (long long)mpitopo__hhc_id(hhc->dim, v);
    return MPITOPO_SUCCESS;
}

int mpitopo_hhc_rank_of_id(const mpitopo_hhc_t *hhc, long long id, int *rank, int *tree_rank)
{
    int node, rc = mpitopo__hhc_check_id(hhc, __func__, "id", id, &node);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    if (!rank)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "rank = NULL");
    *rank = hhc->rank_of_node[node];
    if (tree_rank)
        *tree_rank = node;
    return MPITOPO_SUCCESS;
}

int mpitopo_hhc_id_to_string(const mpitopo_hhc_t *hhc, long long id, char *buf, int len)
{
    int node, rc = mpitopo__hhc_check_id(hhc, __func__, "id", id, &node);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    int need = 5 * mpitopo__hhc_levels(hhc->dim);
    if (!buf || len < need)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "buf: %s (%d characters needed)",
                            !buf ? "NULL" : "too short", need);
    mpitopo__hhc_id_string(hhc->dim, node, buf, (size_t)len);
    return MPITOPO_SUCCESS;
}

int mpitopo_hhc_id_from_string(const mpitopo_hhc_t *hhc, const char *s, long long *id)
{
    if (!hhc || !s || !id)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "%s = NULL", !hhc ? "hhc" : !s ? "s" : "id");
    int64_t v;
    if (mpitopo__hhc_id_parse(hhc->dim, s, &v) != 0)
        return MPITOPO_FAIL(MPITOPO_ERR_PARSE,
                            "s = \"%.80s\" is no node ID of the %d-HHC (%d nibbles of 4 binary "
                            "digits joined by '.', each below 1000 or 1000 for a centre)",
                            s, hhc->dim, mpitopo__hhc_levels(hhc->dim));
    *id = (long long)v;
    return MPITOPO_SUCCESS;
}

int mpitopo_hhc_node(const mpitopo_hhc_t *hhc, long long id, int *level, long long *centre, int *position)
{
    int node, rc = mpitopo__hhc_check_id(hhc, __func__, "id", id, &node);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    int q, c = mpitopo__hhc_parent(hhc->dim, node, &q);
    if (level)
        *level = mpitopo__hhc_level(hhc->dim, node);
    if (centre)
        *centre = c < 0 ? -1 : (long long)mpitopo__hhc_id(hhc->dim, c);
    if (position)
        *position = q;
    return MPITOPO_SUCCESS;
}

int mpitopo_hhc_route(const mpitopo_hhc_t *hhc, long long src, long long dst, int max, long long ids[],
                      int ranks[], int comms[], int *len)
{
    int a, b, rc;
    if ((rc = mpitopo__hhc_check_id(hhc, __func__, "src", src, &a)) != MPITOPO_SUCCESS ||
        (rc = mpitopo__hhc_check_id(hhc, __func__, "dst", dst, &b)) != MPITOPO_SUCCESS)
        return rc;
    if (!len)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "len = NULL");
    int path[64];
    int n = mpitopo__hhc_path(hhc->dim, a, b, path);
    if (n > max)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "max = %d: the route has %d hops", max, n);
    for (int i = 0, from = a; i < n; from = path[i++]) {
        int which, rank;
        mpitopo__hhc_hop(hhc->dim, from, path[i], &which, &rank);
        if (ids)
            ids[i] = (long long)mpitopo__hhc_id(hhc->dim, path[i]);
        if (ranks)
            ranks[i] = rank;
        if (comms)
            comms[i] = which;
    }
    *len = n;
    return MPITOPO_SUCCESS;
}
