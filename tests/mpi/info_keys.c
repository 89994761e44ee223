/*
 * mpitopo's own info keys of a communicator on every MPI (issue 15): MPICH
 * drops the info keys it does not know, so mpitopo_comm_set_info keeps
 * them. A key is seen to take by its effect: a bad mpitopo_neighbor value
 * makes the next neighbourhood collective fail with a message that names
 * the value as given (not "(unknown)"), a good one makes it work again.
 * Covered: set before and after the first collective, MPI_Comm_dup copying
 * the keys, MPI_INFO_NULL removing them, the keys of a dist-graph
 * constructor's info and of mpitopo_cart_stencil_create's kept on the
 * result, mpitopo_combine_threshold, and an _init call whose schedule
 * comes from a comm key that differs on one process.
 */
#include "mpitest.h"

#include <stdio.h>
#include <string.h>

static int rank, size;

static MPI_Info info_of(const char *key, const char *value, const char *key2, const char *value2)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, key, value);
    if (key2)
        MPI_Info_set(info, key2, value2);
    return info;
}

/* One allgather on the ring: fails naming `bad` when given, else delivers. */
static void expect_allgather(MPI_Comm g, const char *bad, const char *label)
{
    int mine = rank, got[2] = {-1, -1};
    int rc = mpitopo_neighbor_allgather(&mine, 1, MPI_INT, got, 1, MPI_INT, g);
    const char *msg = mpitopo_last_error();
    if (bad) {
        if (MT_CHECK(rc == MPITOPO_ERR_ARG, "%s: returned %s (%d), expected MPITOPO_ERR_ARG", label,
                     mpitopo_err_name(rc), rc))
            MT_CHECK(strstr(msg, bad) && !strstr(msg, "(unknown)"),
                     "%s: message \"%s\" does not name the value \"%s\"", label, msg, bad);
        return;
    }
    if (MT_CHECK(rc == MPITOPO_SUCCESS, "%s: returned %s: %s", label, mpitopo_err_name(rc), msg))
        MT_CHECK(got[0] == (rank + size - 1) % size, "%s: got %d from source 0, expected %d", label, got[0],
                 (rank + size - 1) % size);
}

static void ring(MPI_Info info, MPI_Comm *g)
{
    int src = (rank + size - 1) % size, dst = (rank + 1) % size;
    *g = MPI_COMM_NULL;
    MT_CHECK_RC(mpitopo_dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &src, MPI_UNWEIGHTED, 1, &dst,
                                                   MPI_UNWEIGHTED, info, 0, g));
}

static void comm_keys(void)
{
    MPI_Comm g, d;
    /* Made by MPI itself (the info key would be dropped by MPICH). */
    int src = (rank + size - 1) % size, dst = (rank + 1) % size;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &src, MPI_UNWEIGHTED, 1, &dst, MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &g);
    MPI_Info bogus = info_of("mpitopo_neighbor", "bogus", NULL, NULL);
    MPI_Info linear = info_of("mpitopo_neighbor", "linear", "unrelated_key", "kept by MPI or not");
    MT_CHECK_RC(mpitopo_comm_set_info(g, bogus));
    expect_allgather(g, "bogus", "set before the first call");
    MT_CHECK_RC(mpitopo_comm_set_info(g, linear));
    expect_allgather(g, NULL, "set to linear after a call");
    MT_CHECK_RC(mpitopo_comm_set_info(g, bogus));
    expect_allgather(g, "bogus", "set to bogus after a call");
    MPI_Comm_dup(g, &d);
    expect_allgather(d, "bogus", "MPI_Comm_dup copies the keys");
    MT_CHECK_RC(mpitopo_comm_set_info(d, MPI_INFO_NULL));
    expect_allgather(d, NULL, "MPI_INFO_NULL removes them");
    expect_allgather(g, "bogus", "the original keeps its keys");
    MPI_Comm_free(&d);

    /* The threshold, read when combining. */
    MPI_Info thr = info_of("mpitopo_neighbor", "combine", "mpitopo_combine_threshold", "zero");
    MT_CHECK_RC(mpitopo_comm_set_info(g, thr));
    expect_allgather(g, "zero", "mpitopo_combine_threshold = zero");
    MPI_Info_free(&thr);
    MPI_Comm_free(&g);

    /* The keys of a constructor's info stay on its result. */
    ring(bogus, &g);
    expect_allgather(g, "bogus", "dist_graph_create_adjacent's info");
    MPI_Comm_free(&g);
    ring(linear, &g);
    expect_allgather(g, NULL, "dist_graph_create_adjacent's info, linear");
    MPI_Comm_free(&g);

    int dims[1] = {size}, periods[1] = {1};
    MPI_Comm cart, st;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
    if (MT_CHECK_RC(mpitopo_cart_stencil_create(cart, "star=1", bogus, &st))) {
        expect_allgather(st, "bogus", "cart_stencil_create's info");
        MPI_Comm_free(&st);
    }
    MPI_Comm_free(&cart);
    MPI_Info_free(&bogus);
    MPI_Info_free(&linear);
}

/* A schedule from comm keys that differ on the last process: the _init
 * call says so on every process, naming it. */
static void init_disagrees(void)
{
    if (size < 2)
        return;
    MPI_Comm g;
    ring(MPI_INFO_NULL, &g);
    MPI_Info info = info_of("mpitopo_neighbor", rank == size - 1 ? "combine" : "linear", NULL, NULL);
    MT_CHECK_RC(mpitopo_comm_set_info(g, info));
    MPI_Info_free(&info);
    int s = rank, r[2];
    mpitopo_request_t req = MPITOPO_REQUEST_NULL;
    int rc = mpitopo_neighbor_allgather_init(&s, 1, MPI_INT, r, 1, MPI_INT, g, MPI_INFO_NULL, &req);
    char who[32];
    snprintf(who, sizeof who, "process %d", size - 1);
    if (MT_CHECK(rc == MPITOPO_ERR_MISMATCH, "_init with comm keys that differ: %s (%d)", mpitopo_err_name(rc), rc))
        MT_CHECK(strstr(mpitopo_last_error(), who) && strstr(mpitopo_last_error(), "combine"),
                 "_init: message \"%s\" does not name %s and combine", mpitopo_last_error(), who);
    if (req != MPITOPO_REQUEST_NULL)
        mpitopo_request_free(&req);
    MPI_Comm_free(&g);
}

static void bad_calls(void)
{
    MPI_Info info = info_of("mpitopo_neighbor", "linear", NULL, NULL);
    int rc = mpitopo_comm_set_info(MPI_COMM_NULL, info);
    MT_CHECK(rc == MPITOPO_ERR_ARG && strstr(mpitopo_last_error(), "MPI_COMM_NULL"),
             "comm_set_info(MPI_COMM_NULL): %s: %s", mpitopo_err_name(rc), mpitopo_last_error());
    /* Longer keys and values than mpitopo keeps, where the MPI allows them
     * (Open MPI's keys stop at 36 characters, its values at 256). */
    char text[300];
    memset(text, 'k', sizeof text - 1);
    memcpy(text, "mpitopo_", 8);
    if (MPI_MAX_INFO_KEY > 80) {
        text[80] = '\0';
        MPI_Info_set(info, text, "1");
        rc = mpitopo_comm_set_info(MPI_COMM_WORLD, info);
        MT_CHECK(rc == MPITOPO_ERR_ARG && strstr(mpitopo_last_error(), "longer than"),
                 "comm_set_info(an 80-character key): %s: %s", mpitopo_err_name(rc), mpitopo_last_error());
        MPI_Info_delete(info, text);
        text[80] = 'k';
    }
    if (MPI_MAX_INFO_VAL >= (int)sizeof text) {
        text[sizeof text - 1] = '\0';
        MPI_Info_set(info, "mpitopo_neighbor", text);
        rc = mpitopo_comm_set_info(MPI_COMM_WORLD, info);
        MT_CHECK(rc == MPITOPO_ERR_ARG && strstr(mpitopo_last_error(), "299 characters"),
                 "comm_set_info(a 299-character value): %s: %s", mpitopo_err_name(rc), mpitopo_last_error());
        /* MPICH's MPI_Info_get fails on a value longer than the buffer
         * (through the error handler: an abort): asked for its length first. */
        MPI_Info_set(info, "mpitopo_stencil", text);
        int dims[1] = {size}, periods[1] = {0};
        MPI_Comm c = MPI_COMM_NULL;
        rc = mpitopo_cart_create_x(MPI_COMM_WORLD, 1, dims, periods, 1, NULL, info, &c);
        MT_CHECK(rc == MPITOPO_ERR_ARG && strstr(mpitopo_last_error(), "mpitopo_stencil is 299 characters"),
                 "cart_create_x(info mpitopo_stencil of 299 characters): %s: %s", mpitopo_err_name(rc),
                 mpitopo_last_error());
    }
    MPI_Info_free(&info);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    comm_keys();
    init_disagrees();
    bad_calls();
    int rc = mt_finish("info_keys");
    MPI_Finalize();
    return rc;
}
