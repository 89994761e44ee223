/*
 * Errors of mpitopo_cart_create, mpitopo_cart_create_x, mpitopo_cart_map and
 * mpitopo_comm_dims_create: every process passes the same bad argument and
 * every process gets the documented code with a message naming the
 * argument; nothing hangs, and a valid creation still works afterwards.
 * With MPITOPO_CHECK_ARGS=1, arguments that differ on the last rank give
 * MPITOPO_ERR_MISMATCH on every process, naming that rank.
 */
#include "mpitest.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* rc must be want (or also2, when not SUCCESS) and the message mention what. */
static void expect2(int rc, int want, int also2, const char *call, const char *what)
{
    if (MT_CHECK(rc == want || (also2 != MPITOPO_SUCCESS && rc == also2),
                 "%s returned %s (%d), expected %s", call, mpitopo_err_name(rc), rc,
                 mpitopo_err_name(want)))
        MT_CHECK(strstr(mpitopo_last_error(), what), "%s: message \"%s\" does not mention %s",
                 call, mpitopo_last_error(), what);
}

static void expect(int rc, int want, const char *call, const char *what)
{
    expect2(rc, want, MPITOPO_SUCCESS, call, what);
}

/* mpitopo_cart_create, then the same through mpitopo_cart_create_x. */
static void expect_create(MPI_Comm comm, int ndims, const int *dims, const int *periods,
                          MPI_Comm *newcomm, const char *what, const char *call)
{
    char l[160];
    for (int reorder = 0; reorder <= 1; reorder++) {
        snprintf(l, sizeof l, "cart_create(%s, reorder=%d)", call, reorder);
        expect(mpitopo_cart_create(comm, ndims, dims, periods, reorder, newcomm), MPITOPO_ERR_ARG,
               l, what);
    }
    snprintf(l, sizeof l, "cart_create_x(%s)", call);
    expect(mpitopo_cart_create_x(comm, ndims, dims, periods, 1, "moore=1", MPI_INFO_NULL,
                                 newcomm),
           MPITOPO_ERR_ARG, l, what);
}

static void bad_arguments(int size)
{
    MPI_Comm c = MPI_COMM_NULL;
    int periods[MPITOPO_MAX_DIMS + 1], many[MPITOPO_MAX_DIMS + 1], nr;
    for (int d = 0; d <= MPITOPO_MAX_DIMS; d++)
        periods[d] = many[d] = 1;
    int zero[2] = {size, 0}, neg[2] = {-3, 1}, big[1] = {size + 1};
    int huge[3] = {1 << 16, 1 << 16, 1}, ok[2] = {size, 1};

    expect_create(MPI_COMM_WORLD, -1, ok, periods, &c, "ndims", "ndims = -1");
    expect_create(MPI_COMM_WORLD, MPITOPO_MAX_DIMS + 1, many, periods, &c, "ndims",
                  "ndims = MPITOPO_MAX_DIMS + 1");
    expect_create(MPI_COMM_WORLD, 2, zero, periods, &c, "dims[1]", "dims[1] = 0");
    expect_create(MPI_COMM_WORLD, 2, neg, periods, &c, "dims[0]", "dims[0] = -3");
    expect_create(MPI_COMM_WORLD, 1, big, periods, &c, "dims", "prod(dims) = size + 1");
    expect_create(MPI_COMM_WORLD, 3, huge, periods, &c, "dims", "prod(dims) = 2^32");
    expect_create(MPI_COMM_WORLD, 2, NULL, periods, &c, "dims", "dims = NULL");
    expect_create(MPI_COMM_WORLD, 2, ok, NULL, &c, "periods", "periods = NULL");
    expect_create(MPI_COMM_WORLD, 2, ok, periods, NULL, "newcomm", "newcomm = NULL");
    expect_create(MPI_COMM_NULL, 2, ok, periods, &c, "MPI_COMM_NULL", "MPI_COMM_NULL");

    expect(mpitopo_cart_map(MPI_COMM_WORLD, 2, ok, periods, NULL), MPITOPO_ERR_ARG,
           "cart_map(newrank = NULL)", "newrank");
    expect(mpitopo_cart_map(MPI_COMM_WORLD, -1, ok, periods, &nr), MPITOPO_ERR_ARG,
           "cart_map(ndims = -1)", "ndims");
    expect(mpitopo_cart_map(MPI_COMM_WORLD, 2, zero, periods, &nr), MPITOPO_ERR_ARG,
           "cart_map(dims[1] = 0)", "dims[1]");
    expect(mpitopo_cart_map(MPI_COMM_WORLD, 1, big, periods, &nr), MPITOPO_ERR_ARG,
           "cart_map(prod(dims) = size + 1)", "dims");
    expect(mpitopo_cart_map(MPI_COMM_WORLD, 2, NULL, periods, &nr), MPITOPO_ERR_ARG,
           "cart_map(dims = NULL)", "dims");
    expect(mpitopo_cart_map(MPI_COMM_NULL, 2, ok, periods, &nr), MPITOPO_ERR_ARG,
           "cart_map(MPI_COMM_NULL)", "MPI_COMM_NULL");

    int d2[2] = {0, 0}, dneg[2] = {-1, 0}, dbad[2] = {size + 1, 0};
    expect(mpitopo_comm_dims_create(MPI_COMM_WORLD, -1, d2), MPITOPO_ERR_ARG,
           "comm_dims_create(ndims = -1)", "ndims");
    expect(mpitopo_comm_dims_create(MPI_COMM_WORLD, 2, NULL), MPITOPO_ERR_ARG,
           "comm_dims_create(dims = NULL)", "dims");
    expect(mpitopo_comm_dims_create(MPI_COMM_WORLD, 2, dneg), MPITOPO_ERR_ARG,
           "comm_dims_create(dims[0] = -1)", "dims[0]");
    expect(mpitopo_comm_dims_create(MPI_COMM_WORLD, 2, dbad), MPITOPO_ERR_RANGE,
           "comm_dims_create(dims[0] = size + 1)", "dims");
    MT_CHECK(dbad[0] == size + 1 && dbad[1] == 0, "comm_dims_create changed dims on error");
    expect(mpitopo_comm_dims_create(MPI_COMM_NULL, 2, d2), MPITOPO_ERR_ARG,
           "comm_dims_create(MPI_COMM_NULL)", "MPI_COMM_NULL");
}

/* Communicators mpitopo_cart_create refuses: an intercommunicator, and
 * those with a topology (which mpitopo_cart_map accepts). */
static void bad_communicators(int rank, int size)
{
    MPI_Comm c = MPI_COMM_NULL;
    int dims[1] = {size}, periods[1] = {1}, nr = -2;
    if (size >= 2) {
        MPI_Comm half, inter;
        int low = rank < size / 2;
        MPI_Comm_split(MPI_COMM_WORLD, low, rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, low ? size / 2 : 0, 7, &inter);
        int one[1] = {1};
        expect_create(inter, 1, one, periods, &c, "intercommunicator", "intercommunicator");
        expect(mpitopo_cart_map(inter, 1, one, periods, &nr), MPITOPO_ERR_ARG,
               "cart_map(intercommunicator)", "intercommunicator");
        expect(mpitopo_comm_dims_create(inter, 1, dims), MPITOPO_ERR_ARG,
               "comm_dims_create(intercommunicator)", "intercommunicator");
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }
    MPI_Comm cart, graph;
    PMPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
    expect_create(cart, 1, dims, periods, &c, "topology", "a Cartesian communicator");
    if (MT_CHECK_RC(mpitopo_cart_map(cart, 1, dims, periods, &nr)))
        MT_CHECK(nr >= 0 && nr < size, "cart_map on a Cartesian communicator gives %d", nr);
    MPI_Comm_free(&cart);
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_UNWEIGHTED, 0, NULL,
                                   MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph);
    expect_create(graph, 1, dims, periods, &c, "topology", "a distributed graph communicator");
    MPI_Comm_free(&graph);
}

static void bad_stencils_and_info(int size)
{
    MPI_Comm c = MPI_COMM_NULL;
    int dims[2] = {size, 1}, periods[2] = {1, 1};
    /* Syntax errors: MPITOPO_ERR_PARSE; impossible values: _PARSE or _ARG. */
    static const struct {
        const char *stencil;
        int arg_ok;
    } stencils[] = {
        {"star=-1", 0},        {"moore", 0},          {"bogus=1", 0},
        {"star=1:", 0},        {"star=x", 0},         {"star=1:weights=4,x", 0},
        {"offsets=1;0", 1},    {"offsets=0,0", 1},    {"star=1:weights=4", 1},
        {"star=1:weights=4,-1", 1}, {"star=1:bytes=-5", 1}, {"star=1:star=2", 0},
    };
    for (size_t i = 0; i < sizeof stencils / sizeof *stencils; i++) {
        char l[96];
        snprintf(l, sizeof l, "cart_create_x(stencil \"%s\")", stencils[i].stencil);
        expect2(mpitopo_cart_create_x(MPI_COMM_WORLD, 2, dims, periods, 1, stencils[i].stencil,
                                      MPI_INFO_NULL, &c),
                MPITOPO_ERR_PARSE, stencils[i].arg_ok ? MPITOPO_ERR_ARG : MPITOPO_SUCCESS, l,
                "stencil");
    }
    /* The message names the key; "stencil" will do for mpitopo_stencil. */
    static const char *infos[][3] = {
        {"mpitopo_mapper", "bogus", "mpitopo_mapper"},
        {"mpitopo_mapper", "random:x", "mpitopo_mapper"},
        {"mpitopo_mapper", "identity:3", "mpitopo_mapper"},
        {"mpitopo_weights", "kg", "mpitopo_weights"},
        {"mpitopo_reorder", "maybe", "mpitopo_reorder"},
        {"mpitopo_stencil", "star=x", "stencil"},
    };
    for (size_t i = 0; i < sizeof infos / sizeof *infos; i++) {
        char l[96];
        snprintf(l, sizeof l, "cart_create_x(info %s=%s)", infos[i][0], infos[i][1]);
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, infos[i][0], infos[i][1]);
        expect(mpitopo_cart_create_x(MPI_COMM_WORLD, 2, dims, periods, 1, NULL, info, &c),
               MPITOPO_ERR_PARSE, l, infos[i][2]);
        MPI_Info_free(&info);
    }
}

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

/* MPITOPO_CHECK_ARGS=1: the last rank disagrees. */
static void mismatches(int rank, int size)
{
    MPI_Comm c = MPI_COMM_NULL;
    int last = rank == size - 1;
    int a[2] = {size, 1}, b[2] = {1, size}, pa[2] = {1, 0}, pb[2] = {1, 1}, bad[2] = {0, size};
    struct {
        const char *what;
        int ndims;
        const int *dims, *periods;
        int reorder;
        int local_error; /* the last rank's own arguments are wrong */
    } cases[] = {
        {"dims", 2, last ? b : a, pa, 1, 0},
        {"periods", 2, a, last ? pb : pa, 1, 0},
        {"reorder", 2, a, pa, !last, 0},
        {"ndims", last ? 1 : 2, a, pa, 1, 0},
        {"dims[0] = 0 on one rank", 2, last ? bad : a, pa, 1, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int rc = mpitopo_cart_create(MPI_COMM_WORLD, cases[i].ndims, cases[i].dims,
                                     cases[i].periods, cases[i].reorder, &c);
        const char *msg = mpitopo_last_error();
        if (cases[i].local_error) {
            MT_CHECK(rc < 0, "%s: rank %d returned %s (%d), expected an error", cases[i].what,
                     rank, mpitopo_err_name(rc), rc);
        } else if (MT_CHECK(rc == MPITOPO_ERR_MISMATCH, "%s differ on rank %d: returned %s (%d), "
                            "expected MPITOPO_ERR_MISMATCH", cases[i].what, size - 1,
                            mpitopo_err_name(rc), rc)) {
            MT_CHECK(names_number(msg, size - 1),
                     "%s differ: message \"%s\" does not name rank %d", cases[i].what, msg,
                     size - 1);
        }
        if (rc == MPITOPO_SUCCESS && c != MPI_COMM_NULL)
            MPI_Comm_free(&c);
    }
    /* The stencil and the info of mpitopo_cart_create_x. */
    MPI_Info info;
    MPI_Info_create(&info);
    if (last)
        MPI_Info_set(info, "mpitopo_mapper", "identity");
    for (int which = 0; which < 2; which++) {
        const char *stencil = which == 0 && last ? "moore=1" : "star=1";
        int rc = mpitopo_cart_create_x(MPI_COMM_WORLD, 2, a, pa, 1, stencil,
                                       which == 1 ? info : MPI_INFO_NULL, &c);
        if (MT_CHECK(rc == MPITOPO_ERR_MISMATCH, "%s differs on rank %d: returned %s (%d), "
                     "expected MPITOPO_ERR_MISMATCH", which ? "info" : "stencil", size - 1,
                     mpitopo_err_name(rc), rc))
            MT_CHECK(names_number(mpitopo_last_error(), size - 1),
                     "%s differs: message \"%s\" does not name rank %d", which ? "info" : "stencil",
                     mpitopo_last_error(), size - 1);
        if (rc == MPITOPO_SUCCESS && c != MPI_COMM_NULL)
            MPI_Comm_free(&c);
    }
    MPI_Info_free(&info);
}

/* After all that, creation works (and nobody is left in a collective). */
static void still_works(int size)
{
    int dims[2] = {0, 0}, periods[2] = {1, 0};
    MPI_Dims_create(size, 2, dims);
    for (int reorder = 0; reorder <= 1; reorder++) {
        MPI_Comm c = MPI_COMM_NULL;
        if (MT_CHECK_RC(mpitopo_cart_create(MPI_COMM_WORLD, 2, dims, periods, reorder, &c))) {
            mt_cart_check(c, 2, dims, periods, "creation after the errors");
            if (c != MPI_COMM_NULL)
                MPI_Comm_free(&c);
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    const char *check = mt_getenv("MPITOPO_CHECK_ARGS");
    int checked = check && !strcmp(check, "1");
    /* With the check every call is collective, and MPICH busy-waits in
     * the library's collectives: above 4 processes, only the arguments. */
    int all = !checked || !mt_is_mpich() || size <= 4;
    bad_arguments(size);
    if (all) {
        bad_communicators(rank, size);
        bad_stencils_and_info(size);
    }
    if (checked && size >= 2)
        mismatches(rank, size);
    still_works(size);

    int rc = mt_finish("cart_errors");
    MPI_Finalize();
    return rc;
}
