/*
 * Errors: bad arguments (NULL pointers, MPI_COMM_NULL, an intercommunicator)
 * and, when MT_EXPECT_ERROR names a variable (MPITOPO_EMULATE,
 * MPITOPO_EMULATE_PLACEMENT or MPITOPO_NETWORK) set to a bad value, an
 * mpitopo error on every rank whose message names that variable: no hang,
 * no crash, and the same answer when asked again.
 */
#include "mpitest.h"

#include <string.h>

static void expect_error(int rc, const char *call, const char *var)
{
    if (MT_CHECK(rc < 0, "%s returned %d, expected an mpitopo error naming %s", call, rc, var))
        MT_CHECK(strstr(mpitopo_last_error(), var), "%s: message \"%s\" does not name %s", call,
                 mpitopo_last_error(), var);
}

static void check_env_error(MPI_Comm comm, const char *var)
{
    const mpitopo_nodeinfo_t *ni = NULL;
    mpitopo_machine_t *m = NULL;
    const mpitopo_machine_t *em = NULL;
    int size, leaf, leaves[64];
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int emulate = !strncmp(var, "MPITOPO_EMULATE", 15);
    for (int round = 0; round < 2; round++) {
        int rc = mpitopo_comm_nodeinfo(comm, &ni);
        if (emulate)
            expect_error(rc, "mpitopo_comm_nodeinfo", var);
        else
            MT_CHECK_RC(rc);
        expect_error(mpitopo_comm_machine(comm, &m, leaves), "mpitopo_comm_machine", var);
        MT_CHECK(m == NULL, "mpitopo_comm_machine set a machine on failure");
        if (emulate)
            expect_error(mpitopo_emulation(0, size, &em, &leaf), "mpitopo_emulation", var);
    }
}

static void expect_arg(int rc, const char *call, const char *what)
{
    if (MT_CHECK(rc == MPITOPO_ERR_ARG, "%s returned %d, expected MPITOPO_ERR_ARG", call, rc))
        MT_CHECK(strstr(mpitopo_last_error(), what), "%s: message \"%s\" does not mention %s",
                 call, mpitopo_last_error(), what);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, leaves[64], leaf;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const mpitopo_nodeinfo_t *ni;
    mpitopo_machine_t *m;
    const mpitopo_machine_t *em;

    expect_arg(mpitopo_comm_nodeinfo(MPI_COMM_WORLD, NULL), "nodeinfo(info = NULL)", "info");
    expect_arg(mpitopo_comm_nodeinfo(MPI_COMM_NULL, &ni), "nodeinfo(MPI_COMM_NULL)",
               "MPI_COMM_NULL");
    expect_arg(mpitopo_comm_machine(MPI_COMM_WORLD, NULL, leaves), "comm_machine(NULL)",
               "machine");
    expect_arg(mpitopo_comm_machine(MPI_COMM_WORLD, &m, NULL), "comm_machine(leaf NULL)",
               "leaf_of_rank");
    expect_arg(mpitopo_emulation(size, size, &em, &leaf), "emulation(rank = size)", "world_rank");
    expect_arg(mpitopo_emulation(0, 0, &em, &leaf), "emulation(size = 0)", "world_size");
    if (size >= 2) {
        MPI_Comm half, inter;
        int low = rank < size / 2;
        MPI_Comm_split(MPI_COMM_WORLD, low, rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, low ? size / 2 : 0, 7, &inter);
        expect_arg(mpitopo_comm_nodeinfo(inter, &ni), "nodeinfo(intercomm)", "intercommunicator");
        expect_arg(mpitopo_comm_machine(inter, &m, leaves), "comm_machine(intercomm)",
                   "intercommunicator");
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }

    const char *var = mt_getenv("MT_EXPECT_ERROR");
    if (var && MT_CHECK(size <= 64, "at most 64 ranks")) {
        check_env_error(MPI_COMM_WORLD, var);
        MPI_Comm split;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &split);
        check_env_error(split, var);
        MPI_Comm_free(&split);
    }
    int rc = mt_finish("errors");
    MPI_Finalize();
    return rc;
}
