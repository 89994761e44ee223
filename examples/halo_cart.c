/*
 * halo_cart: a Jacobi-style halo exchange on a periodic 2-D or 3-D grid of
 * processes, with the grid communicator made by mpitopo_cart_create so that
 * grid neighbours share a node.
 *
 *   mpirun -n 8 ./halo_cart [NDIMS [N [ITERATIONS]]]    (defaults: 2 16 20)
 *
 * Every process owns an N^NDIMS block of a global periodic field plus one
 * layer of ghost cells. What changes against a plain MPI program is one
 * call: mpitopo_cart_create instead of MPI_Cart_create. The rest is
 * ordinary MPI on the returned communicator, which is a real Cartesian
 * communicator (MPI_Cart_coords, MPI_Cart_shift, MPI_Neighbor_* all work).
 *
 * The one rule of reordering: the process that gets rank r in the new
 * communicator does rank r's work, so it must take its coordinates (and
 * load its data) from the new communicator, never from MPI_COMM_WORLD.
 *
 * Checks (exit status 1 on failure): after the first exchange every ghost
 * cell holds exactly the value of the global cell it mirrors; after the
 * sweeps the sum of the field is unchanged (a Jacobi sweep on a periodic
 * grid conserves it). Prints "halo_cart: PASS" on rank 0 when both hold.
 *
 * To see the reordering on one machine, emulate a cluster:
 *   MPITOPO_EMULATE="node:2 core:4" MPITOPO_EMULATE_PLACEMENT=rr mpirun -n 8 ./halo_cart
 */
#include <mpitopo.h>

#include <stdio.h>
#include <stdlib.h>

#define MAXD 3

/* The local block: n interior cells per dimension, one ghost layer each side. */
typedef struct block {
    int ndims, n, ext[MAXD]; /* ext[d] = n + 2 in the used dimensions, 1 above */
    int dims[MAXD], coords[MAXD];
    double *u, *tmp;
} block_t;

static size_t cells(const block_t *b)
{
    return (size_t)b->ext[0] * (size_t)b->ext[1] * (size_t)b->ext[2];
}

/* Offset of local cell (i, j, k), ghosts included (0 and n+1 are ghosts). */
static size_t at(const block_t *b, int i, int j, int k)
{
    return ((size_t)i * (size_t)b->ext[1] + (size_t)j) * (size_t)b->ext[2] + (size_t)k;
}

/* The interior cells are lo[d]..hi[d] in every dimension (0..0 in unused ones). */
static void interior(const block_t *b, int lo[MAXD], int hi[MAXD])
{
    for (int d = 0; d < MAXD; d++) {
        lo[d] = d < b->ndims ? 1 : 0;
        hi[d] = d < b->ndims ? b->n : 0;
    }
}

/* The initial value of global cell g: its row-major index, an exact double. */
static double initial(const block_t *b, const int g[MAXD])
{
    double v = 0;
    for (int d = 0; d < b->ndims; d++) {
        int span = b->dims[d] * b->n;
        v = v * span + (g[d] + span) % span; /* periodic wrap */
    }
    return v;
}

/* Global coordinates of local cell l[] (ghosts map outside [0, span)). */
static void global_of(const block_t *b, const int l[MAXD], int g[MAXD])
{
    for (int d = 0; d < b->ndims; d++)
        g[d] = b->coords[d] * b->n + l[d] - 1;
}

/*
 * Face datatypes: for dimension d, the slab of cells at local index `pos`
 * along d (1 and n: the interior faces we send; 0 and n+1: the ghost faces
 * we receive into), the interior range along the other dimensions.
 */
static MPI_Datatype face(const block_t *b, int d, int pos)
{
    int sizes[MAXD], subsizes[MAXD], starts[MAXD];
    for (int e = 0; e < MAXD; e++) {
        sizes[e] = b->ext[e];
        subsizes[e] = e < b->ndims ? b->n : 1;
        starts[e] = e < b->ndims ? 1 : 0;
    }
    subsizes[d] = 1;
    starts[d] = pos;
    MPI_Datatype t;
    MPI_Type_create_subarray(MAXD, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    return t;
}

/*
 * One halo exchange: in every dimension, send my low face to the lower
 * neighbour and my high face to the upper one, and receive their faces into
 * my ghosts. Tags tell the two directions apart (with a dimension of size 1
 * or 2 both neighbours are the same process).
 */
static void exchange(const block_t *b, MPI_Comm cart, MPI_Datatype send[][2],
                     MPI_Datatype recv[][2])
{
    MPI_Request req[4 * MAXD];
    MPI_Status st[4 * MAXD]; /* (MPI_STATUSES_IGNORE trips a false GCC 12 warning in MPICH's mpi.h) */
    int nreq = 0;
    for (int d = 0; d < b->ndims; d++) {
        int lo, hi;
        MPI_Cart_shift(cart, d, 1, &lo, &hi);
        MPI_Irecv(b->u, 1, recv[d][0], lo, 2 * d, cart, &req[nreq++]);     /* from below */
        MPI_Irecv(b->u, 1, recv[d][1], hi, 2 * d + 1, cart, &req[nreq++]); /* from above */
        MPI_Isend(b->u, 1, send[d][1], hi, 2 * d, cart, &req[nreq++]);
        MPI_Isend(b->u, 1, send[d][0], lo, 2 * d + 1, cart, &req[nreq++]);
    }
    MPI_Waitall(nreq, req, st);
}

/* Errors in the ghost faces after an exchange of the initial field. */
static long check_ghosts(const block_t *b)
{
    long bad = 0;
    int l[MAXD] = {0, 0, 0}, g[MAXD];
    int hi[MAXD];
    for (int d = 0; d < MAXD; d++)
        hi[d] = d < b->ndims ? b->n + 1 : 0;
    for (l[0] = 0; l[0] <= hi[0]; l[0]++)
        for (l[1] = 0; l[1] <= hi[1]; l[1]++)
            for (l[2] = 0; l[2] <= hi[2]; l[2]++) {
                int ghosts = 0;
                for (int d = 0; d < b->ndims; d++)
                    ghosts += l[d] == 0 || l[d] == b->n + 1;
                if (ghosts != 1) /* interior cells, and edges/corners nobody sends */
                    continue;
                global_of(b, l, g);
                bad += b->u[at(b, l[0], l[1], l[2])] != initial(b, g);
            }
    return bad;
}

/* One Jacobi sweep: every interior cell becomes the mean of its 2*ndims neighbours. */
static void sweep(block_t *b)
{
    int lo[MAXD], hi[MAXD];
    interior(b, lo, hi);
    for (int i = lo[0]; i <= hi[0]; i++)
        for (int j = lo[1]; j <= hi[1]; j++)
            for (int k = lo[2]; k <= hi[2]; k++) {
                double s = b->u[at(b, i - 1, j, k)] + b->u[at(b, i + 1, j, k)];
                if (b->ndims > 1)
                    s += b->u[at(b, i, j - 1, k)] + b->u[at(b, i, j + 1, k)];
                if (b->ndims > 2)
                    s += b->u[at(b, i, j, k - 1)] + b->u[at(b, i, j, k + 1)];
                b->tmp[at(b, i, j, k)] = s / (2 * b->ndims);
            }
    double *t = b->u;
    b->u = b->tmp;
    b->tmp = t;
}

static double local_sum(const block_t *b)
{
    double s = 0;
    int lo[MAXD], hi[MAXD];
    interior(b, lo, hi);
    for (int i = lo[0]; i <= hi[0]; i++)
        for (int j = lo[1]; j <= hi[1]; j++)
            for (int k = lo[2]; k <= hi[2]; k++)
                s += b->u[at(b, i, j, k)];
    return s;
}

/*
 * Average number of grid neighbours (of 2*ndims) on another node, over all
 * processes: every process tells its neighbours its node (a neighbourhood
 * allgather on the grid communicator) and counts those that differ.
 */
static double offnode_neighbours(MPI_Comm cart, int ndims)
{
    const mpitopo_nodeinfo_t *ni;
    if (mpitopo_comm_nodeinfo(MPI_COMM_WORLD, &ni) != MPITOPO_SUCCESS) { /* emulated nodes count */
        fprintf(stderr, "halo_cart: %s\n", mpitopo_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int nodes[2 * MAXD], off = 0, size;
    MPI_Neighbor_allgather(&ni->node, 1, MPI_INT, nodes, 1, MPI_INT, cart);
    for (int i = 0; i < 2 * ndims; i++)
        off += nodes[i] != ni->node;
    double sum, mine = off;
    MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, cart);
    MPI_Comm_size(cart, &size);
    return sum / size;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    block_t b = {.ndims = argc > 1 ? atoi(argv[1]) : 2, .n = argc > 2 ? atoi(argv[2]) : 16};
    int iterations = argc > 3 ? atoi(argv[3]) : 20;
    int wrank;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    if (b.ndims < 2 || b.ndims > 3 || b.n < 1 || iterations < 0) {
        if (wrank == 0)
            fprintf(stderr, "usage: halo_cart [NDIMS (2 or 3) [N >= 1 [ITERATIONS]]]\n");
        MPI_Finalize();
        return 1;
    }

    /* Node-aware dims (the grid whose node-sized boxes cut least), then the
     * reordered grid. mpitopo's functions return MPITOPO_SUCCESS (0) or an
     * error, explained by mpitopo_last_error(). */
    int dims[MAXD] = {0, 0, 0}, periods[MAXD] = {1, 1, 1};
    MPI_Comm cart, plain;
    int rc = mpitopo_comm_dims_create(MPI_COMM_WORLD, b.ndims, dims);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo_cart_create(MPI_COMM_WORLD, b.ndims, dims, periods, 1, &cart);
    if (rc != MPITOPO_SUCCESS) {
        fprintf(stderr, "halo_cart: %s\n", mpitopo_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* For comparison only: what MPI_Cart_create gives (it keeps the order). */
    MPI_Cart_create(MPI_COMM_WORLD, b.ndims, dims, periods, 1, &plain);
    double off_plain = offnode_neighbours(plain, b.ndims), off_cart = offnode_neighbours(cart, b.ndims);
    MPI_Comm_free(&plain);

    /* From here on, rank and coordinates come from the new communicator. */
    int rank;
    MPI_Comm_rank(cart, &rank);
    MPI_Cart_coords(cart, rank, b.ndims, b.coords);
    for (int d = 0; d < MAXD; d++) {
        b.ext[d] = d < b.ndims ? b.n + 2 : 1;
        b.dims[d] = d < b.ndims ? dims[d] : 1;
    }
    b.u = calloc(cells(&b), sizeof *b.u);
    b.tmp = calloc(cells(&b), sizeof *b.tmp);
    if (!b.u || !b.tmp)
        MPI_Abort(MPI_COMM_WORLD, 1);

    /* Load the data of my block (by my new coordinates). */
    int l[MAXD], g[MAXD], lo[MAXD], hi[MAXD];
    interior(&b, lo, hi);
    for (l[0] = lo[0]; l[0] <= hi[0]; l[0]++)
        for (l[1] = lo[1]; l[1] <= hi[1]; l[1]++)
            for (l[2] = lo[2]; l[2] <= hi[2]; l[2]++) {
                global_of(&b, l, g);
                b.u[at(&b, l[0], l[1], l[2])] = initial(&b, g);
            }

    MPI_Datatype send[MAXD][2], recv[MAXD][2];
    for (int d = 0; d < b.ndims; d++) {
        send[d][0] = face(&b, d, 1);
        send[d][1] = face(&b, d, b.n);
        recv[d][0] = face(&b, d, 0);
        recv[d][1] = face(&b, d, b.n + 1);
    }

    /* Check 1: one exchange fills every ghost face exactly. */
    exchange(&b, cart, send, recv);
    long bad = check_ghosts(&b), allbad;
    MPI_Allreduce(&bad, &allbad, 1, MPI_LONG, MPI_SUM, cart);

    /* Check 2: the sweeps keep the sum of the field. */
    double sum0 = local_sum(&b), total0, total;
    MPI_Allreduce(&sum0, &total0, 1, MPI_DOUBLE, MPI_SUM, cart);
    double t0 = MPI_Wtime();
    for (int it = 0; it < iterations; it++) {
        exchange(&b, cart, send, recv);
        sweep(&b);
    }
    double t = MPI_Wtime() - t0, sum1 = local_sum(&b);
    MPI_Allreduce(&sum1, &total, 1, MPI_DOUBLE, MPI_SUM, cart);
    int ok = allbad == 0 && (total - total0) * (total - total0) <= 1e-18 * total0 * total0;

    if (rank == 0) {
        printf("halo_cart: %d-D grid %d", b.ndims, dims[0]);
        for (int d = 1; d < b.ndims; d++)
            printf("x%d", dims[d]);
        printf(" of %d^%d blocks; grid neighbours on another node per process: "
               "MPI_Cart_create %.2f, mpitopo_cart_create %.2f\n",
               b.n, b.ndims, off_plain, off_cart);
        printf("halo_cart: %d sweeps in %.2f ms; wrong ghost cells %ld; sum %.6e -> %.6e\n",
               iterations, 1e3 * t, allbad, total0, total);
        printf("halo_cart: %s\n", ok ? "PASS" : "FAIL");
    }
    for (int d = 0; d < b.ndims; d++)
        for (int s = 0; s < 2; s++) {
            MPI_Type_free(&send[d][s]);
            MPI_Type_free(&recv[d][s]);
        }
    free(b.u);
    free(b.tmp);
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return ok ? 0 : 1;
}
