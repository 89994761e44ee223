/*
 * Cartesian communicators that are really reordered: every process computes
 * the same mapping from the cached machine (no communication), then comm is
 * split in the new order and PMPI_Cart_create is called with reorder = 0 on
 * the result, so the communicator is a real Cartesian one.
 *
 * A process that fails to compute the mapping takes part in the split with
 * MPI_UNDEFINED; the others then find their new communicator short of
 * prod(dims) processes and fail too, so no extra collective is needed to
 * agree on errors.
 */
#include "map/map_internal.h"
#include "mpi/mpi_internal.h"
#include "pattern/pattern_internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the caller asked for, after validation. */
typedef struct cart_request {
    const char *func;
    MPI_Comm comm;
    int rank, size;
    int ndims;
    const int *dims;
    const int *periods;
    int reorder;
    int nprocs; /* prod(dims) */
    char stencil[256];
    int stencil_from_info; /* whether the stencil came from the info key */
    char mapper[64];
    mpitopo_weight_t weight;
    int rank0_move; /* MPITOPO_RANK0=move: rank 0 may leave its process */
    int report;     /* print the verbose line (creation, not cart_map) */
} cart_request_t;

/* ---- validation -------------------------------------------------------- */

/* Local checks of the grid; with_topology: whether comm may carry one. */
static int check_grid(cart_request_t *r, int with_topology)
{
    if (r->ndims < 0 || r->ndims > MPITOPO_MAX_DIMS)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, r->func, "ndims = %d must be in [0, %d]", r->ndims,
                                 MPITOPO_MAX_DIMS);
    if (r->ndims > 0 && (!r->dims || !r->periods))
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, r->func, "%s = NULL with ndims = %d",
                                 !r->dims ? "dims" : "periods", r->ndims);
    long long prod = 1;
    for (int i = 0; i < r->ndims; i++) {
        if (r->dims[i] < 1)
            return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, r->func, "dims[%d] = %d must be >= 1", i, r->dims[i]);
        prod *= r->dims[i];
        if (prod > r->size)
            return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, r->func,
                                     "prod(dims) exceeds the %d processes of comm (at dims[%d] = %d)", r->size,
                                     i, r->dims[i]);
    }
    r->nprocs = (int)prod;
    int status = MPI_UNDEFINED, rc = with_topology ? MPI_SUCCESS : PMPI_Topo_test(r->comm, &status);
    if (rc != MPI_SUCCESS)
        return rc;
    if (status != MPI_UNDEFINED)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, r->func, "comm already has a %s topology",
                                 status == MPI_CART ? "Cartesian" : status == MPI_GRAPH ? "graph" : "dist-graph");
    return MPITOPO_SUCCESS;
}

/* A star or Moore stencil of the request must stay within the one limit
 * on stencils (the offsets of a list are bounded by the string's length). A
 * value that does not parse is left to the pattern parser's message. */
static int check_stencil_size(const cart_request_t *r)
{
    const char *name = r->stencil_from_info ? "info mpitopo_stencil" : "stencil";
    for (const char *f = r->stencil; *f;) {
        size_t len = strcspn(f, ":");
        int moore;
        long long radius;
        if (memchr(f, '=', len) && mpitopo__stencil_parse(f, len, &moore, &radius) == 0) {
            int rc = mpitopo__stencil_check(r->func, name, r->stencil, r->ndims, moore, radius);
            if (rc != MPITOPO_SUCCESS)
                return rc;
        }
        f += len + (f[len] == ':');
    }
    return MPITOPO_SUCCESS;
}

/* The arguments that must match on every process, in full: compared
 * across processes (mpitopo__agree) to name the first that differs. */
typedef struct cart_record {
    int ndims, reorder, weight;
    int dims[MPITOPO_MAX_DIMS], periods[MPITOPO_MAX_DIMS]; /* periods as 0/1 */
    char stencil[256], mapper[64];
} cart_record_t;

static void pack_record(const cart_request_t *r, cart_record_t *rec)
{
    memset(rec, 0, sizeof *rec);
    rec->ndims = r->ndims;
    rec->reorder = r->reorder != 0;
    rec->weight = (int)r->weight;
    for (int i = 0; i < r->ndims; i++) {
        rec->dims[i] = r->dims[i];
        rec->periods[i] = r->periods[i] != 0;
    }
    memcpy(rec->stencil, r->stencil, sizeof rec->stencil);
    memcpy(rec->mapper, r->mapper, sizeof rec->mapper);
}

/* What differs between two records, e.g. "dims[1] = 4 (process 0: 2)". */
static void describe_difference(const void *mine_, const void *root_, char *out, size_t len)
{
    const cart_record_t *mine = mine_, *root = root_;
    if (mine->ndims != root->ndims) {
        snprintf(out, len, "ndims = %d (process 0: %d)", mine->ndims, root->ndims);
        return;
    }
    for (int i = 0; i < mine->ndims; i++)
        if (mine->dims[i] != root->dims[i]) {
            snprintf(out, len, "dims[%d] = %d (process 0: %d)", i, mine->dims[i], root->dims[i]);
            return;
        }
    for (int i = 0; i < mine->ndims; i++)
        if (mine->periods[i] != root->periods[i]) {
            snprintf(out, len, "periods[%d] = %d (process 0: %d)", i, mine->periods[i], root->periods[i]);
            return;
        }
    if (mine->reorder != root->reorder)
        snprintf(out, len, "reorder = %d (process 0: %d; info mpitopo_reorder included)", mine->reorder,
                 root->reorder);
    else if (strcmp(mine->stencil, root->stencil) != 0)
        snprintf(out, len, "stencil = \"%.100s\" (process 0: \"%.100s\")", mine->stencil, root->stencil);
    else if (strcmp(mine->mapper, root->mapper) != 0)
        snprintf(out, len, "info mpitopo_mapper = \"%s\" (process 0: \"%s\")", mine->mapper, root->mapper);
    else
        snprintf(out, len, "info mpitopo_weights = %s (process 0: %s)",
                 mpitopo_weight_name((mpitopo_weight_t)mine->weight),
                 mpitopo_weight_name((mpitopo_weight_t)root->weight));
}

/*
 * Every process learns whether every process's arguments are valid and
 * the same (mpitopo__agree: one allreduce; more only on an error), so
 * that a process with bad arguments never leaves the others waiting and
 * arguments that differ never give a communicator that disagrees. `local`
 * is this process's validation result.
 */
static int agree_on_args(const cart_request_t *r, int local)
{
    cart_record_t rec;
    mpitopo__agree_t a = {.func = r->func, .comm = r->comm, .rank = r->rank, .record = &rec,
                          .record_len = sizeof rec, .describe = describe_difference};
    if (local == MPITOPO_SUCCESS) {
        pack_record(r, &rec);
        mpitopo__agree_arg(&a, "ndims", r->ndims);
        mpitopo__agree_hash(&a, "dims", rec.dims, sizeof rec.dims);
        mpitopo__agree_hash(&a, "periods", rec.periods, sizeof rec.periods);
        mpitopo__agree_arg(&a, "reorder", rec.reorder);
        mpitopo__agree_string(&a, "stencil", r->stencil);
        mpitopo__agree_string(&a, "info mpitopo_mapper", r->mapper);
        mpitopo__agree_arg(&a, "info mpitopo_weights", rec.weight);
    } else {
        memset(&rec, 0, sizeof rec);
        a.nargs = 7; /* the same vector length everywhere; values ignored */
    }
    return mpitopo__agree(&a, local);
}

/* ---- info keys --------------------------------------------------------- */

static int read_info(cart_request_t *r, const char *stencil, MPI_Info info)
{
    char v[256];
    int found, rc;
    r->stencil[0] = '\0';
    if ((rc = mpitopo__info_get(r->func, info, "mpitopo_stencil", v, sizeof v, &found)) != MPI_SUCCESS)
        return rc;
    if (found)
        snprintf(r->stencil, sizeof r->stencil, "%s", v);
    r->stencil_from_info = found;
    if (stencil && *stencil) {
        r->stencil_from_info = 0;
        if (strlen(stencil) >= sizeof r->stencil)
            return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, r->func, "stencil is longer than %zu characters",
                                     sizeof r->stencil - 1);
        snprintf(r->stencil, sizeof r->stencil, "%s", stencil);
    }
    mpitopo__topo_options_t o = {.mapper = "cart", .weight = MPITOPO_WEIGHT_BYTES, .reorder = r->reorder};
    if ((rc = mpitopo__topo_options_read(r->func, info, &o)) != MPITOPO_SUCCESS)
        return rc;
    snprintf(r->mapper, sizeof r->mapper, "%s", o.mapper);
    r->weight = o.weight;
    r->reorder = o.reorder;
    r->rank0_move = o.rank0_move;
    return MPITOPO_SUCCESS;
}

/* ---- the mapping ------------------------------------------------------- */

/* The grid as a pattern description: "cart:4x4:periods=1,0:moore=1". */
static int grid_pattern(const cart_request_t *r, mpitopo_pattern_t **pattern)
{
    size_t cap = 64 + (size_t)r->ndims * 24 + sizeof r->stencil;
    char *desc = mpitopo__malloc(cap);
    if (!desc)
        return MPITOPO_NOMEM("the grid description");
    size_t n = (size_t)snprintf(desc, cap, "cart:");
    for (int i = 0; i < r->ndims; i++)
        n += (size_t)snprintf(desc + n, cap - n, "%s%d", i ? "x" : "", r->dims[i]);
    n += (size_t)snprintf(desc + n, cap - n, ":periods=");
    for (int i = 0; i < r->ndims; i++)
        n += (size_t)snprintf(desc + n, cap - n, "%s%d", i ? "," : "", r->periods[i] != 0);
    if (r->stencil[0])
        snprintf(desc + n, cap - n, ":%s", r->stencil);
    int rc = mpitopo_pattern_from_string(desc, pattern);
    mpitopo__free(desc);
    if (rc != MPITOPO_SUCCESS)
        return MPITOPO_FAIL_RESTATE(rc, r->func, "%s = \"%s\"",
                                      r->stencil_from_info ? "info mpitopo_stencil" : "stencil", r->stencil);
    return MPITOPO_SUCCESS;
}

/* One line on rank 0 at MPITOPO_VERBOSE >= 1: the grid, the machine and
 * the off-node partners before and after. */
static void report(const cart_request_t *r, const mpitopo_nodeinfo_t *ni, const mpitopo_machine_t *m,
                   const mpitopo_pattern_t *pattern, const int *launch, const int *mapped, int kept)
{
    if (!r->report || r->rank != 0 || mpitopo__verbose() < 1)
        return;
    mpitopo_metrics_t before, after;
    if (mpitopo_metrics_compute(m, pattern, launch, r->weight, &before) != MPITOPO_SUCCESS ||
        mpitopo_metrics_compute(m, pattern, mapped, r->weight, &after) != MPITOPO_SUCCESS)
        return;
    char grid[MPITOPO_MAX_DIMS * 12 + 1] = "", nodes[64];
    size_t n = 0;
    for (int i = 0; i < r->ndims; i++)
        n += (size_t)snprintf(grid + n, sizeof grid - n, "%s%d", i ? "x" : "", r->dims[i]);
    if (ni->min_local_size == ni->max_local_size)
        snprintf(nodes, sizeof nodes, "%d nodes x %d", ni->nnodes, ni->min_local_size);
    else
        snprintf(nodes, sizeof nodes, "%d nodes x %d..%d", ni->nnodes, ni->min_local_size, ni->max_local_size);
    mpitopo__log(1, "cart %s on %s: off-node partners avg %.2f -> %.2f%s; above the nodes: %s",
                 grid, nodes, before.offnode_partners.avg, after.offnode_partners.avg,
                 kept ? " (original order kept: no gain)" : "", mpitopo__nodeinfo_above(ni));
}

/*
 * The grid position (new rank) of the calling process, or MPI_UNDEFINED
 * when it is left out. Local once the machine is cached; every process
 * computes the same mapping.
 */
static int new_rank(const cart_request_t *r, int *position)
{
    const mpitopo_nodeinfo_t *ni;
    const mpitopo_machine_t *m;
    const int *leaf_of_rank;
    int rc = mpitopo__comm_machine_cached(r->comm, &ni, &m, &leaf_of_rank);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    mpitopo_pattern_t *pattern = NULL;
    int *mapped = mpitopo__malloc_array((size_t)r->nprocs, sizeof *mapped);
    if (!mapped)
        return MPITOPO_NOMEM("the mapping");
    if ((rc = grid_pattern(r, &pattern)) == MPITOPO_SUCCESS) {
        int kept;
        mpitopo__rank0_t r0;
        rc = mpitopo__map_from_launch(ni, r->mapper, m, pattern, r->weight, leaf_of_rank, mapped, &kept);
        if (rc == MPITOPO_SUCCESS)
            rc = mpitopo__map_keep_rank0(m, pattern, r->weight, r->nprocs, leaf_of_rank, r->rank0_move, mapped,
                                         &r0);
        if (rc != MPITOPO_SUCCESS) {
            rc = MPITOPO_FAIL_RESTATE(rc, r->func, "mapping the grid");
        } else {
            report(r, ni, m, pattern, leaf_of_rank, mapped, kept);
            if (r->rank == 0)
                mpitopo__rank0_report(r->func, &r0);
        }
    }
    *position = MPI_UNDEFINED;
    if (rc == MPITOPO_SUCCESS)
        *position = mpitopo__position_of(mapped, r->nprocs, leaf_of_rank[r->rank]);
    mpitopo_pattern_destroy(&pattern);
    mpitopo__free(mapped);
    return rc;
}

/* Split comm in the new order, then make it Cartesian. */
static int reordered_create(const cart_request_t *r, MPI_Comm *newcomm)
{
    int position = MPI_UNDEFINED;
    int local = new_rank(r, &position);
    MPI_Comm ordered = MPI_COMM_NULL;
    int rc = PMPI_Comm_split(r->comm, local == MPITOPO_SUCCESS && position != MPI_UNDEFINED ? 0 : MPI_UNDEFINED,
                             position, &ordered);
    if (rc != MPI_SUCCESS || local != MPITOPO_SUCCESS)
        return local != MPITOPO_SUCCESS ? local : rc;
    if (ordered == MPI_COMM_NULL)
        return MPITOPO_SUCCESS; /* left out: *newcomm stays MPI_COMM_NULL */
    int n = 0;
    rc = PMPI_Comm_size(ordered, &n);
    if (rc == MPI_SUCCESS && n != r->nprocs)
        rc = MPITOPO_FAIL_AS(MPITOPO_ERR_INTERNAL, r->func,
                               "another process of comm failed to compute the mapping (%d of %d joined)", n,
                               r->nprocs);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Cart_create(ordered, r->ndims, r->dims, r->periods, 0, newcomm);
    int frc = PMPI_Comm_free(&ordered);
    return rc != MPI_SUCCESS ? rc : frc;
}

/* ---- public functions -------------------------------------------------- */

/* Validation shared by create and map: the local checks that cannot
 * communicate (MPI state, comm), then this process's arguments (`out`:
 * the output pointer, named `out_name`), then the agreement of every
 * process on them. */
static int prepare(cart_request_t *r, const char *stencil, MPI_Info info, int with_topology, const void *out,
                   const char *out_name)
{
    int rc;
    if ((rc = mpitopo__check_mpi(r->func)) != MPITOPO_SUCCESS ||
        (rc = mpitopo__check_intracomm(r->comm, r->func)) != MPITOPO_SUCCESS)
        return rc;
    if ((rc = PMPI_Comm_rank(r->comm, &r->rank)) != MPI_SUCCESS ||
        (rc = PMPI_Comm_size(r->comm, &r->size)) != MPI_SUCCESS)
        return rc;
    int local = out ? MPITOPO_SUCCESS : MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, r->func, "%s = NULL", out_name);
    if (local == MPITOPO_SUCCESS)
        local = read_info(r, stencil, info);
    if (local == MPITOPO_SUCCESS)
        local = check_grid(r, with_topology);
    if (local == MPITOPO_SUCCESS)
        local = check_stencil_size(r);
    return agree_on_args(r, local);
}

static int cart_create_impl(cart_request_t *r, const char *stencil, MPI_Info info, MPI_Comm *newcomm)
{
    if (newcomm)
        *newcomm = MPI_COMM_NULL;
    int rc = prepare(r, stencil, info, 0, newcomm, "newcomm");
    if (rc != MPITOPO_SUCCESS)
        return rc;
    if (!r->reorder || r->ndims == 0)
        return PMPI_Cart_create(r->comm, r->ndims, r->dims, r->periods, 0, newcomm);
    return reordered_create(r, newcomm);
}

int mpitopo_cart_create_x(MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder,
                          const char *stencil, MPI_Info info, MPI_Comm *newcomm)
{
    cart_request_t r = {.func = __func__, .comm = comm, .ndims = ndims, .dims = dims, .periods = periods,
                        .reorder = reorder, .report = 1};
    return mpitopo__mpi_result(__func__, cart_create_impl(&r, stencil, info, newcomm));
}

int mpitopo_cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder,
                        MPI_Comm *newcomm)
{
    cart_request_t r = {.func = __func__, .comm = comm, .ndims = ndims, .dims = dims, .periods = periods,
                        .reorder = reorder, .report = 1};
    return mpitopo__mpi_result(__func__, cart_create_impl(&r, NULL, MPI_INFO_NULL, newcomm));
}

static int cart_map_impl(cart_request_t *r, int *newrank)
{
    if (newrank)
        *newrank = MPI_UNDEFINED;
    int rc = prepare(r, NULL, MPI_INFO_NULL, 1, newrank, "newrank");
    if (rc != MPITOPO_SUCCESS)
        return rc;
    if (r->ndims == 0) {
        *newrank = r->rank == 0 ? 0 : MPI_UNDEFINED;
        return MPITOPO_SUCCESS;
    }
    return new_rank(r, newrank);
}

int mpitopo_cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
    cart_request_t r = {.func = __func__, .comm = comm, .ndims = ndims, .dims = dims, .periods = periods,
                        .reorder = 1};
    return mpitopo__mpi_result(__func__, cart_map_impl(&r, newrank));
}

static int comm_dims_create_impl(MPI_Comm comm, int ndims, int *dims)
{
    const mpitopo_nodeinfo_t *ni;
    int size, rc = mpitopo_comm_nodeinfo(comm, &ni);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    if ((rc = PMPI_Comm_size(comm, &size)) != MPI_SUCCESS)
        return rc;
    if (ni->min_local_size == ni->max_local_size)
        rc = mpitopo_dims_create_nodes(size, ni->min_local_size, ndims, dims, NULL, NULL);
    else
        rc = mpitopo_dims_create(size, ndims, dims);
    return rc == MPITOPO_SUCCESS ? rc : MPITOPO_FAIL_RESTATE(rc, "mpitopo_comm_dims_create", "size %d", size);
}

int mpitopo_comm_dims_create(MPI_Comm comm, int ndims, int *dims)
{
    return mpitopo__mpi_result(__func__, comm_dims_create_impl(comm, ndims, dims));
}
