/*
 * mpitopo_cart_create, mpitopo_cart_create_x, mpitopo_cart_map and
 * mpitopo_comm_dims_create on MPI_COMM_WORLD and on a split communicator in
 * reversed order. For grids of 0 to 4 dimensions, periodic and open, with
 * dims of 1 and 2 and with fewer grid points than processes, every process
 * checks:
 *  - the Cartesian structure of what it gets (mt_cart_check) and MPI_Cart_sub;
 *  - exactly prod(dims) processes get a communicator, the others MPI_COMM_NULL;
 *  - reorder = 0 (and the info keys mpitopo_mapper=identity,
 *    mpitopo_reorder=false) is exactly PMPI_Cart_create: same processes, same
 *    order;
 *  - mpitopo_cart_map gives every process its rank in the reordered grid;
 *  - twenty creations in a row are all valid and identical;
 *  - mpitopo_comm_dims_create factorises the size as the node-aware
 *    mpitopo_dims_create_nodes (uniform nodes) or mpitopo_dims_create does.
 * Large or slow runs try a subset (see effort below).
 */
#include "mpitest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NREPEAT 20

/*
 * How much to try, so that a run stays under ten seconds: everything
 * (FULL); fewer MPI_Cart_sub masks, info variants and split-communicator
 * grids (MEDIUM: 64 Open MPI processes on a few cores); and a core subset
 * (SMALL: MPICH above 2 processes, which busy-waits inside every
 * communicator creation, where the test yield layer cannot reach).
 */
enum effort { SMALL, MEDIUM, FULL };
static enum effort effort;

static int prod_of(int ndims, const int *dims)
{
    int p = 1;
    for (int d = 0; d < ndims; d++)
        p *= dims[d];
    return p;
}

/* "world 4x2 po" */
static void grid_label(char *buf, size_t n, const char *what, int ndims, const int *dims,
                       const int *periods)
{
    int used = snprintf(buf, n, "%s %s", what, ndims ? "" : "ndims=0");
    for (int d = 0; d < ndims && used > 0 && (size_t)used < n; d++)
        used += snprintf(buf + used, n - (size_t)used, "%s%d", d ? "x" : "", dims[d]);
    for (int d = 0; d < ndims && used > 0 && (size_t)used < n; d++)
        used += snprintf(buf + used, n - (size_t)used, "%s%c", d ? "" : " ", periods[d] ? 'p' : 'o');
}

static int rank_or_null(MPI_Comm c)
{
    int r = MPI_UNDEFINED;
    if (c != MPI_COMM_NULL)
        MPI_Comm_rank(c, &r);
    return r;
}

/* MPI_Cart_sub for every subset of the dimensions but the empty one (where
 * MPI libraries differ), or for each single dimension and all but the first
 * beyond three dimensions; only the single dimensions below FULL, none in
 * SMALL: sizes, dimensions and coordinates. Collective over cart. */
static void check_sub(MPI_Comm cart, int ndims, const int *dims, const int *periods,
                      const char *label)
{
    int mine[MPITOPO_MAX_DIMS + 1];
    int rank = rank_or_null(cart);
    MPI_Cart_coords(cart, rank, ndims, mine);
    for (unsigned mask = 1; effort > SMALL && ndims > 0 && mask < (1u << ndims); mask++) {
        int single = !(mask & (mask - 1));
        if (!single && (effort < FULL || (ndims > 3 && mask != (1u << ndims) - 2)))
            continue;
        int remain[MPITOPO_MAX_DIMS], sdims[MPITOPO_MAX_DIMS], sper[MPITOPO_MAX_DIMS];
        int want[MPITOPO_MAX_DIMS], got[MPITOPO_MAX_DIMS], n = 0;
        for (int d = 0; d < ndims; d++) {
            remain[d] = (mask >> d) & 1;
            if (remain[d]) {
                sdims[n] = dims[d];
                sper[n] = periods[d];
                want[n++] = mine[d];
            }
        }
        MPI_Comm sub = MPI_COMM_NULL;
        MPI_Cart_sub(cart, remain, &sub);
        char sl[160];
        snprintf(sl, sizeof sl, "%s: MPI_Cart_sub mask %#x", label, mask);
        if (mt_cart_check(sub, n, sdims, sper, sl)) {
            MPI_Cart_coords(sub, rank_or_null(sub), n, got);
            MT_CHECK(!memcmp(got, want, (size_t)n * sizeof *got),
                     "%s: coordinates in the subgrid are not those kept", sl);
        }
        if (sub != MPI_COMM_NULL)
            MPI_Comm_free(&sub);
    }
}

/* What every process checks on the result of one creation from comm with
 * reorder (identity: it must be PMPI_Cart_create's order). */
static void check_result(MPI_Comm comm, MPI_Comm c, int ndims, const int *dims,
                         const int *periods, int identity, int with_map, const char *label)
{
    int rank, in = c != MPI_COMM_NULL, nin = 0, prod = prod_of(ndims, dims);
    MPI_Comm_rank(comm, &rank);
    MPI_Allreduce(&in, &nin, 1, MPI_INT, MPI_SUM, comm);
    MT_CHECK(nin == prod, "%s: %d processes got a communicator, expected prod(dims) = %d", label,
             nin, prod);
    if (identity) {
        MT_CHECK(in == (rank < prod), "%s: rank %d %s a communicator (identity order)", label,
                 rank, in ? "got" : "did not get");
        /* PMPI_Cart_create is not given ndims = 0 (MPI-3 only). */
        if (ndims > 0) {
            MPI_Comm ref = MPI_COMM_NULL;
            PMPI_Cart_create(comm, ndims, dims, periods, 0, &ref);
            int cmp = MPI_UNEQUAL;
            if (in && ref != MPI_COMM_NULL)
                MPI_Comm_compare(c, ref, &cmp);
            MT_CHECK(in == (ref != MPI_COMM_NULL) && (!in || cmp == MPI_CONGRUENT),
                     "%s: not PMPI_Cart_create's order (MPI_Comm_compare gives %d)", label, cmp);
            if (ref != MPI_COMM_NULL)
                MPI_Comm_free(&ref);
        } else {
            MT_CHECK(in == (rank == 0), "%s: ndims = 0 must give rank 0 the communicator",
                     label);
        }
    }
    if (!identity && !mt_getenv("MPITOPO_RANK0")) {
        /* Rank 0 stays on the process that was rank 0 (MPITOPO_RANK0=keep). */
        int r0 = rank_or_null(c) == 0 ? rank : -1, who = -1;
        MPI_Allreduce(&r0, &who, 1, MPI_INT, MPI_MAX, comm);
        MT_CHECK(who == 0, "%s: rank 0 of the reordered grid is the process of rank %d, not of rank 0", label, who);
    }
    if (with_map) {
        int newrank = -2;
        if (MT_CHECK_RC(mpitopo_cart_map(comm, ndims, dims, periods, &newrank)))
            MT_CHECK(newrank == rank_or_null(c),
                     "%s: mpitopo_cart_map gives %d, rank in the reordered grid is %d", label,
                     newrank, rank_or_null(c));
    }
    if (in && mt_cart_check(c, ndims, dims, periods, label))
        check_sub(c, ndims, dims, periods, label);
}

/* mpitopo_cart_create with reorder = 0 and 1. */
static void check_create(MPI_Comm comm, const char *name, int ndims, const int *dims,
                         const int *periods)
{
    for (int reorder = 0; reorder <= 1; reorder++) {
        char label[160];
        grid_label(label, sizeof label, name, ndims, dims, periods);
        snprintf(label + strlen(label), sizeof label - strlen(label), " reorder=%d", reorder);
        MPI_Comm c = MPI_COMM_SELF; /* must be overwritten */
        if (!MT_CHECK_RC(mpitopo_cart_create(comm, ndims, dims, periods, reorder, &c)))
            continue;
        if (!MT_CHECK(c != MPI_COMM_SELF, "%s: newcomm not set", label))
            continue;
        check_result(comm, c, ndims, dims, periods, !reorder, reorder, label);
        if (c != MPI_COMM_NULL)
            MPI_Comm_free(&c);
    }
}

/* Twenty creations (four in SMALL) kept alive together: all valid, all the
 * same order. */
static void check_repeated(MPI_Comm comm, int ndims, const int *dims, const int *periods)
{
    MPI_Comm cs[NREPEAT];
    int first = -2, n = effort == SMALL ? 4 : NREPEAT;
    for (int i = 0; i < NREPEAT; i++)
        cs[i] = MPI_COMM_NULL;
    for (int i = 0; i < n; i++) {
        if (!MT_CHECK_RC(mpitopo_cart_create(comm, ndims, dims, periods, 1, &cs[i])))
            break;
        int r = rank_or_null(cs[i]), status = MPI_UNDEFINED;
        if (i == 0)
            first = r;
        MT_CHECK(r == first, "repeated creation %d: rank %d, the first creation gave %d", i, r,
                 first);
        if (cs[i] != MPI_COMM_NULL) {
            MPI_Topo_test(cs[i], &status);
            MT_CHECK(status == MPI_CART, "repeated creation %d: not MPI_CART", i);
        }
    }
    if (cs[n - 1] != MPI_COMM_NULL)
        mt_cart_check(cs[n - 1], ndims, dims, periods, "last repeated creation");
    for (int i = 0; i < n; i++)
        if (cs[i] != MPI_COMM_NULL)
            MPI_Comm_free(&cs[i]);
}

/* mpitopo_cart_create_x: stencils, and info keys. 2-D grid of comm's size. */
static void check_create_x(MPI_Comm comm, const char *name)
{
    int size;
    MPI_Comm_size(comm, &size);
    int dims[2] = {0, 0}, periods[2] = {1, 0};
    MPI_Dims_create(size, 2, dims);
    static const char *stencils[] = {"moore=1", "star=1:weights=4,1", NULL, "", "star=2",
                                     "offsets=1,0;0,1", "moore=1:weights=4,1:bytes=8",
                                     "offsets=1,1;-1,0;0,-2"};
    static const struct {
        const char *key, *value;
        int identity;
    } infos[] = {
        {"mpitopo_mapper", "identity", 1}, {"mpitopo_reorder", "false", 1},
        {"mpitopo_weights", "messages", 0}, {"mpitopo_weights", "unit", 0},
        {"mpitopo_weights", "bytes", 0},    {"mpitopo_mapper", "cart", 0},
        {"mpitopo_mapper", "block", 0},     {"mpitopo_mapper", "rr", 0},
        {"mpitopo_mapper", "random:5", 0},  {"mpitopo_stencil", "moore=2", 0},
        {"no_such_key", "whatever", 0},
    };
    size_t nstencils = effort == SMALL ? 2 : sizeof stencils / sizeof *stencils;
    for (size_t i = 0; i < nstencils; i++) {
        char label[160];
        grid_label(label, sizeof label, name, 2, dims, periods);
        snprintf(label + strlen(label), sizeof label - strlen(label), " stencil \"%s\"",
                 stencils[i] ? stencils[i] : "(NULL)");
        MPI_Comm c = MPI_COMM_SELF;
        if (MT_CHECK_RC(mpitopo_cart_create_x(comm, 2, dims, periods, 1, stencils[i],
                                              MPI_INFO_NULL, &c))) {
            check_result(comm, c, 2, dims, periods, 0, 0, label);
            if (c != MPI_COMM_NULL && c != MPI_COMM_SELF)
                MPI_Comm_free(&c);
        }
    }
    size_t ninfos = effort == FULL ? sizeof infos / sizeof *infos : effort == MEDIUM ? 4 : 1;
    for (size_t i = 0; i < ninfos; i++) {
        char label[160];
        grid_label(label, sizeof label, name, 2, dims, periods);
        snprintf(label + strlen(label), sizeof label - strlen(label), " info %s=%s",
                 infos[i].key, infos[i].value);
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, infos[i].key, infos[i].value);
        MPI_Comm c = MPI_COMM_SELF;
        if (MT_CHECK_RC(mpitopo_cart_create_x(comm, 2, dims, periods, 1, NULL, info, &c))) {
            check_result(comm, c, 2, dims, periods, infos[i].identity, 0, label);
            if (c != MPI_COMM_NULL && c != MPI_COMM_SELF)
                MPI_Comm_free(&c);
        }
        MPI_Info_free(&info);
    }
    /* 3-D, a Moore stencil weighted per dimension, reorder = 0 via create_x. */
    int d3[3] = {0, 0, 0}, p3[3] = {1, 1, 0};
    MPI_Dims_create(size, 3, d3);
    for (int reorder = 0; effort > SMALL && reorder <= 1; reorder++) {
        char label[160];
        grid_label(label, sizeof label, name, 3, d3, p3);
        snprintf(label + strlen(label), sizeof label - strlen(label),
                 " create_x moore=1:weights=1,2,3 reorder=%d", reorder);
        MPI_Comm c = MPI_COMM_SELF;
        if (MT_CHECK_RC(mpitopo_cart_create_x(comm, 3, d3, p3, reorder, "moore=1:weights=1,2,3",
                                              MPI_INFO_NULL, &c))) {
            check_result(comm, c, 3, d3, p3, !reorder, 0, label);
            if (c != MPI_COMM_NULL && c != MPI_COMM_SELF)
                MPI_Comm_free(&c);
        }
    }
}

/* mpitopo_comm_dims_create against the MPI-free functions it is defined by. */
static void check_dims(MPI_Comm comm, const char *name)
{
    int size;
    MPI_Comm_size(comm, &size);
    const mpitopo_nodeinfo_t *ni;
    if (!MT_CHECK_RC(mpitopo_comm_nodeinfo(comm, &ni)))
        return;
    int uniform = ni->min_local_size == ni->max_local_size;
    for (int ndims = 1; ndims <= 4; ndims++)
        for (int fixed = 0; fixed <= 1; fixed++) {
            int dims[4] = {0, 0, 0, 0}, want[4] = {0, 0, 0, 0}, lo[4], hi[4];
            if (fixed && ndims > 1)
                dims[1] = want[1] = 1; /* a fixed entry stays */
            else if (fixed)
                continue;
            if (!MT_CHECK_RC(mpitopo_comm_dims_create(comm, ndims, dims)))
                continue;
            int rc = uniform ? mpitopo_dims_create_nodes(size, ni->local_size, ndims, want, NULL,
                                                         NULL)
                             : mpitopo_dims_create(size, ndims, want);
            MT_CHECK_RC(rc);
            MT_CHECK(prod_of(ndims, dims) == size, "%s: mpitopo_comm_dims_create(%d) gives "
                     "product %d, expected %d", name, ndims, prod_of(ndims, dims), size);
            MT_CHECK(!fixed || dims[1] == 1, "%s: fixed dims[1] = 1 became %d", name, dims[1]);
            for (int d = 0; d < ndims; d++)
                MT_CHECK(dims[d] == want[d], "%s: mpitopo_comm_dims_create(%d): dims[%d] = %d, "
                         "expected %d (%d per node)", name, ndims, d, dims[d], want[d],
                         uniform ? ni->local_size : 0);
            MPI_Allreduce(dims, lo, ndims, MPI_INT, MPI_MIN, comm);
            MPI_Allreduce(dims, hi, ndims, MPI_INT, MPI_MAX, comm);
            MT_CHECK(!memcmp(lo, hi, (size_t)ndims * sizeof *lo),
                     "%s: mpitopo_comm_dims_create(%d) differs between processes", name, ndims);
        }
}

/* The grids every communicator is tried with (all: the world's). */
static void check_grids(MPI_Comm comm, const char *name, int all)
{
    int size;
    MPI_Comm_size(comm, &size);
    int d2[2] = {0, 0}, p2[2] = {1, 0};
    MPI_Dims_create(size, 2, d2);
    check_create(comm, name, 2, d2, p2);
    if (size > 1) { /* fewer grid points than processes */
        int fewer[2] = {(size - 1) / 2 > 0 ? (size - 1) / 2 : 1, 2};
        check_create(comm, name, size >= 3 ? 2 : 1, fewer, p2);
    }
    if (all)
        check_create(comm, name, 0, NULL, NULL);
    if (effort == SMALL)
        return;
    int one[1] = {size}, per1[1] = {1}, open1[1] = {0};
    check_create(comm, name, 1, one, per1);
    if (!all)
        return;
    check_create(comm, name, 1, one, open1);
    int d3[3] = {0, 0, 0}, p3[3] = {0, 1, 1};
    MPI_Dims_create(size, 3, d3);
    check_create(comm, name, 3, d3, p3);
    int d4[4] = {0, 0, 0, 0}, p4[4] = {1, 0, 1, 0};
    MPI_Dims_create(size, 4, d4);
    check_create(comm, name, 4, d4, p4);
    /* dims containing 1; periodic dimensions of size 1 and 2. */
    int ones[3] = {1, size, 1}, pones[3] = {1, 1, 0};
    check_create(comm, name, 3, ones, pones);
    if (size % 2 == 0) {
        int two[3] = {2, 1, size / 2}, ptwo[3] = {1, 1, 1};
        check_create(comm, name, 3, two, ptwo);
    }
    if (size > 2) {
        int left[1] = {size - 1};
        check_create(comm, name, 1, left, open1);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    effort = mt_is_mpich() ? (size <= 2 ? FULL : SMALL)
                           : size <= 16 ? FULL : MEDIUM;

    check_grids(MPI_COMM_WORLD, "world", 1);
    int d2[2] = {0, 0}, p2[2] = {1, 1};
    MPI_Dims_create(size, 2, d2);
    check_repeated(MPI_COMM_WORLD, 2, d2, p2);
    check_create_x(MPI_COMM_WORLD, "world");
    check_dims(MPI_COMM_WORLD, "world");

    /* A communicator whose ranks are not the world's. */
    if (effort > SMALL) {
        MPI_Comm split;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &split);
        check_grids(split, "split", 0);
        if (effort == FULL)
            check_create_x(split, "split");
        MPI_Comm_free(&split);
    }

    int rc = mt_finish("cart");
    MPI_Finalize();
    return rc;
}
