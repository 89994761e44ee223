/*
 * One process with bad or different arguments never hangs the others
 * (issue 15): every creation (Cartesian, graph, dist-graph, stencil) and
 * every persistent _init call is run with ONE process whose arguments are
 * invalid (dims NULL, newcomm NULL, prod(dims) > size, an unknown mapper,
 * too large a stencil, a negative count, a bad schedule name, ...) or valid
 * but different from the others' (reorder, ndims with the same product,
 * periods, mapper, stencil, graph edges, schedule). Every process must
 * return the same error class, the message must name the argument and, on
 * the processes that did nothing wrong, the process that did. The faulty
 * process is the last one, then process 0. A hang is caught by ctest's
 * TIMEOUT on this test (testlist), which fails the test alone.
 */
#include "mpitest.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static int rank, size;

/* Whether msg contains the decimal number n, not as part of a longer one. */
static int names_number(const char *msg, int n)
{
    char num[16];
    snprintf(num, sizeof num, "%d", n);
    size_t len = strlen(num);
    for (const char *p = strstr(msg, num); p; p = strstr(p + 1, num))
        if ((p == msg || !isdigit((unsigned char)p[-1])) && !isdigit((unsigned char)p[len]))
            return 1;
    return 0;
}

/*
 * rc must be `want` on every process (one allreduce checks that the class
 * is the same everywhere, whatever each process got); the message mentions
 * `what`, and names the process at fault on the others: `bad` for an
 * invalid argument, or, for a difference, the first process that differs
 * from process 0 (the last one, or 1 when process 0 is the odd one).
 */
static void verdict(const char *label, int rc, int want, const char *what, int bad, MPI_Comm *c)
{
    int lo_hi[2] = {rc, -rc}, all[2];
    MPI_Allreduce(lo_hi, all, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MT_CHECK(all[0] == -all[1], "%s (process %d at fault): the processes returned different codes "
             "(%d..%d)", label, bad, all[0], -all[1]);
    const char *msg = mpitopo_last_error();
    if (!MT_CHECK(rc == want, "%s (process %d at fault): rank %d returned %s (%d), expected %s: %s", label,
                  bad, rank, mpitopo_err_name(rc), rc, mpitopo_err_name(want), msg))
        goto out;
    MT_CHECK(strstr(msg, what), "%s (process %d at fault): message \"%s\" does not mention \"%s\"", label,
             bad, msg, what);
    int named = want == MPITOPO_ERR_MISMATCH && bad == 0 ? 1 : bad;
    if (rank != bad || want == MPITOPO_ERR_MISMATCH)
        MT_CHECK(names_number(msg, named) && strstr(msg, "process"),
                 "%s (process %d at fault): message \"%s\" does not name process %d", label, bad, msg, named);
out:
    if (c && *c != MPI_COMM_NULL) {
        MT_CHECK(rc == MPITOPO_SUCCESS, "%s: a communicator despite the error", label);
        MPI_Comm_free(c);
    }
}

/* ---- Cartesian ---------------------------------------------------------- */

static void cart_cases(int bad)
{
    int me = rank == bad;
    int d2[2] = {2, size / 2}, d3[3] = {2, size / 2, 1}, big[2] = {2, size}, per[3] = {1, 0, 1};
    int per_other[3] = {0, 0, 1};
    MPI_Comm c = MPI_COMM_NULL;
    char l[96];
    for (int reorder = 0; reorder <= 1; reorder++) {
        snprintf(l, sizeof l, "cart_create dims = NULL, reorder %d", reorder);
        verdict(l, mpitopo_cart_create(MPI_COMM_WORLD, 2, me ? NULL : d2, per, reorder, &c), MPITOPO_ERR_ARG,
                "dims", bad, &c);
        snprintf(l, sizeof l, "cart_create newcomm = NULL, reorder %d", reorder);
        verdict(l, mpitopo_cart_create(MPI_COMM_WORLD, 2, d2, per, reorder, me ? NULL : &c), MPITOPO_ERR_ARG,
                "newcomm", bad, &c);
        snprintf(l, sizeof l, "cart_create prod(dims) > size, reorder %d", reorder);
        verdict(l, mpitopo_cart_create(MPI_COMM_WORLD, 2, me ? big : d2, per, reorder, &c), MPITOPO_ERR_ARG,
                "prod(dims)", bad, &c);
        snprintf(l, sizeof l, "cart_create ndims 3 / 2 with the same product, reorder %d", reorder);
        verdict(l, mpitopo_cart_create(MPI_COMM_WORLD, me ? 3 : 2, me ? d3 : d2, per, reorder, &c),
                MPITOPO_ERR_MISMATCH, "ndims", bad, &c);
        snprintf(l, sizeof l, "cart_create periods differ, reorder %d", reorder);
        verdict(l, mpitopo_cart_create(MPI_COMM_WORLD, 2, d2, me ? per_other : per, reorder, &c),
                MPITOPO_ERR_MISMATCH, "periods[0]", bad, &c);
    }
    verdict("cart_create reorder differs",
            mpitopo_cart_create(MPI_COMM_WORLD, 2, d2, per, me ? 0 : 1, &c), MPITOPO_ERR_MISMATCH, "reorder", bad,
            &c);

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpitopo_mapper", me ? "bogus" : "cart");
    verdict("cart_create_x unknown mapper",
            mpitopo_cart_create_x(MPI_COMM_WORLD, 2, d2, per, 1, NULL, info, &c), MPITOPO_ERR_PARSE,
            "mpitopo_mapper", bad, &c);
    MPI_Info_set(info, "mpitopo_mapper", me ? "identity" : "cart");
    verdict("cart_create_x mapper differs",
            mpitopo_cart_create_x(MPI_COMM_WORLD, 2, d2, per, 1, NULL, info, &c), MPITOPO_ERR_MISMATCH,
            "mpitopo_mapper", bad, &c);
    MPI_Info_free(&info);
    verdict("cart_create_x stencil differs",
            mpitopo_cart_create_x(MPI_COMM_WORLD, 2, d2, per, 1, me ? "moore=1" : "star=1", MPI_INFO_NULL, &c),
            MPITOPO_ERR_MISMATCH, "stencil", bad, &c);
    /* The one limit on stencils, here as in mpitopo_cart_stencil_create:
     * refused at once, not after seconds and a gigabyte. */
    double t0 = MPI_Wtime();
    verdict("cart_create_x stencil moore=2000",
            mpitopo_cart_create_x(MPI_COMM_WORLD, 2, d2, per, 1, me ? "moore=2000" : "moore=1", MPI_INFO_NULL,
                                  &c),
            MPITOPO_ERR_ARG, "more than 1048576 offsets", bad, &c);
    MT_CHECK(MPI_Wtime() - t0 < 5, "refusing moore=2000 took %.1f s", MPI_Wtime() - t0);

    int nr;
    verdict("cart_map newrank = NULL", mpitopo_cart_map(MPI_COMM_WORLD, 2, d2, per, me ? NULL : &nr),
            MPITOPO_ERR_ARG, "newrank", bad, NULL);
    verdict("cart_map dims differ",
            mpitopo_cart_map(MPI_COMM_WORLD, me ? 3 : 2, me ? d3 : d2, per, &nr), MPITOPO_ERR_MISMATCH, "ndims",
            bad, NULL);
}

/* ---- graph and dist-graph ----------------------------------------------- */

static void graph_cases(int bad)
{
    int me = rank == bad;
    int src = (rank + size - 1) % size, dst = (rank + 1) % size;
    MPI_Comm c = MPI_COMM_NULL;
    verdict("dist_graph_create_adjacent reorder differs",
            mpitopo_dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &src, MPI_UNWEIGHTED, 1, &dst, MPI_UNWEIGHTED,
                                               MPI_INFO_NULL, !me, &c),
            MPITOPO_ERR_MISMATCH, "reorder", bad, &c);
    verdict("dist_graph_create_adjacent newcomm = NULL",
            mpitopo_dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &src, MPI_UNWEIGHTED, 1, &dst, MPI_UNWEIGHTED,
                                               MPI_INFO_NULL, 1, me ? NULL : &c),
            MPITOPO_ERR_ARG, "newcomm", bad, &c);
    verdict("dist_graph_reorder reorder differs",
            mpitopo_dist_graph_reorder(MPI_COMM_WORLD, 1, &src, MPI_UNWEIGHTED, 1, &dst, MPI_UNWEIGHTED,
                                       MPI_INFO_NULL, !me, &c),
            MPITOPO_ERR_MISMATCH, "reorder", bad, &c);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpitopo_mapper", me ? "identity" : "tree");
    verdict("dist_graph_create_adjacent mapper differs",
            mpitopo_dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &src, MPI_UNWEIGHTED, 1, &dst, MPI_UNWEIGHTED,
                                               info, 1, &c),
            MPITOPO_ERR_MISMATCH, "mpitopo_mapper", bad, &c);
    MPI_Info_set(info, "mpitopo_mapper", me ? "nonesuch" : "tree");
    verdict("dist_graph_create unknown mapper",
            mpitopo_dist_graph_create(MPI_COMM_WORLD, 1, &rank, (int[]){1}, &dst, MPI_UNWEIGHTED, info, 1, &c),
            MPITOPO_ERR_PARSE, "nonesuch", bad, &c);
    MPI_Info_free(&info);
    verdict("dist_graph_create reorder differs",
            mpitopo_dist_graph_create(MPI_COMM_WORLD, 1, &rank, (int[]){1}, &dst, MPI_UNWEIGHTED, MPI_INFO_NULL,
                                      me ? 0 : 1, &c),
            MPITOPO_ERR_MISMATCH, "reorder", bad, &c);

    /* A ring as a graph: index/edges the same everywhere but on one. */
    int index[16], edges[16], other[16], shorter[16], n = size < 16 ? size : 16;
    for (int i = 0; i < n; i++) {
        index[i] = i + 1;
        edges[i] = other[i] = (i + 1) % n;
        shorter[i] = (i + 1) % (n - 1); /* the ring of the first n - 1 */
    }
    other[0] = n > 2 ? 2 : 0;
    for (int reorder = 0; reorder <= 1; reorder++) {
        char l[64];
        snprintf(l, sizeof l, "graph_create edges differ, reorder %d", reorder);
        verdict(l, mpitopo_graph_create(MPI_COMM_WORLD, n, index, me ? other : edges, reorder, &c),
                MPITOPO_ERR_MISMATCH, "edges", bad, &c);
        snprintf(l, sizeof l, "graph_create nnodes differs, reorder %d", reorder);
        verdict(l, mpitopo_graph_create(MPI_COMM_WORLD, me ? n - 1 : n, index, me ? shorter : edges, reorder, &c),
                MPITOPO_ERR_MISMATCH, "nnodes", bad, &c);
    }
    verdict("graph_create reorder differs", mpitopo_graph_create(MPI_COMM_WORLD, n, index, edges, !me, &c),
            MPITOPO_ERR_MISMATCH, "reorder", bad, &c);
    verdict("graph_create edges = NULL", mpitopo_graph_create(MPI_COMM_WORLD, n, index, me ? NULL : edges, 1, &c),
            MPITOPO_ERR_ARG, "edges", bad, &c);
    int nr;
    verdict("graph_map index differs",
            mpitopo_graph_map(MPI_COMM_WORLD, n, me ? (int[16]){0} : index, edges, &nr), MPITOPO_ERR_MISMATCH,
            "index", bad, NULL);
}

/* ---- stencils and persistent operations --------------------------------- */

static void stencil_cases(int bad, MPI_Comm cart)
{
    int me = rank == bad;
    MPI_Comm c = MPI_COMM_NULL;
    verdict("cart_stencil_create stencil differs",
            mpitopo_cart_stencil_create(cart, me ? "star=1" : "moore=1", MPI_INFO_NULL, &c), MPITOPO_ERR_MISMATCH,
            "stencil", bad, &c);
    verdict("cart_stencil_create bad stencil",
            mpitopo_cart_stencil_create(cart, me ? "moore=x" : "moore=1", MPI_INFO_NULL, &c), MPITOPO_ERR_ARG,
            "moore=x", bad, &c);
    verdict("cart_stencil_create moore=2000",
            mpitopo_cart_stencil_create(cart, me ? "moore=2000" : "moore=1", MPI_INFO_NULL, &c), MPITOPO_ERR_ARG,
            "more than 1048576 offsets", bad, &c);
    verdict("cart_stencil_create newcomm = NULL",
            mpitopo_cart_stencil_create(cart, "moore=1", MPI_INFO_NULL, me ? NULL : &c), MPITOPO_ERR_ARG,
            "newcomm", bad, &c);
}

static void init_verdict(const char *label, int rc, int want, const char *what, int bad, mpitopo_request_t *r)
{
    if (*r != MPITOPO_REQUEST_NULL) {
        MT_CHECK(rc == MPITOPO_SUCCESS, "%s: a request despite the error", label);
        mpitopo_request_free(r);
    }
    verdict(label, rc, want, what, bad, NULL);
}

static void init_cases(int bad, MPI_Comm cart)
{
    int me = rank == bad, in, out;
    mpitopo_comm_neighbors_count(cart, &in, &out);
    int sbuf[64] = {0}, rbuf[64];
    mpitopo_request_t r = MPITOPO_REQUEST_NULL;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpitopo_neighbor", me ? "combine" : "linear");
    init_verdict("neighbor_allgather_init schedule differs",
                 mpitopo_neighbor_allgather_init(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, cart, info, &r),
                 MPITOPO_ERR_MISMATCH, "schedule", bad, &r);
    MPI_Info_set(info, "mpitopo_neighbor", me ? "fastest" : "linear");
    init_verdict("neighbor_alltoall_init bad schedule",
                 mpitopo_neighbor_alltoall_init(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, cart, info, &r),
                 MPITOPO_ERR_ARG, "fastest", bad, &r);
    MPI_Info_free(&info);
    init_verdict("neighbor_alltoall_init sendcount = -1",
                 mpitopo_neighbor_alltoall_init(sbuf, me ? -1 : 1, MPI_INT, rbuf, 1, MPI_INT, cart, MPI_INFO_NULL,
                                                &r),
                 MPITOPO_ERR_ARG, "sendcount", bad, &r);
    init_verdict("neighbor_allgather_init request = NULL",
                 mpitopo_neighbor_allgather_init(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, cart, MPI_INFO_NULL,
                                                 me ? NULL : &r),
                 MPITOPO_ERR_ARG, "request", bad, &r);
    init_verdict("neighbor_*_init operation differs",
                 me ? mpitopo_neighbor_alltoall_init(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, cart, MPI_INFO_NULL, &r)
                    : mpitopo_neighbor_allgather_init(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, cart, MPI_INFO_NULL, &r),
                 MPITOPO_ERR_MISMATCH, "operation", bad, &r);
    /* Still in step: a persistent exchange that every process makes. */
    if (MT_CHECK_RC(mpitopo_neighbor_allgather_init(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, cart, MPI_INFO_NULL, &r))) {
        MT_CHECK_RC(mpitopo_start(&r));
        MT_CHECK_RC(mpitopo_wait(&r));
        MT_CHECK_RC(mpitopo_request_free(&r));
    }
}

/* After all that, creation works (and nobody is left in a collective). */
static void still_works(void)
{
    int dims[2] = {0, 0}, periods[2] = {1, 1};
    MPI_Dims_create(size, 2, dims);
    MPI_Comm c = MPI_COMM_NULL;
    if (MT_CHECK_RC(mpitopo_cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &c))) {
        mt_cart_check(c, 2, dims, periods, "creation after the errors");
        MPI_Comm_free(&c);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2 || size % 2) {
        if (rank == 0)
            printf("SKIP agreement: needs an even number of processes\n");
        MPI_Finalize();
        return 0;
    }
    int dims[2] = {2, size / 2}, periods[2] = {1, 1};
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    for (int pass = 0; pass < 2; pass++) {
        int bad = pass == 0 ? size - 1 : 0;
        cart_cases(bad);
        graph_cases(bad);
        stencil_cases(bad, cart);
        init_cases(bad, cart);
    }
    MPI_Comm_free(&cart);
    still_works();
    int rc = mt_finish("agreement");
    MPI_Finalize();
    return rc;
}
