/*
 * libmpitopo_shim, neighbourhood collectives: with MPITOPO_NEIGHBOR=linear
 * (or auto, combine, cart: today all the linear schedule) the blocking
 * MPI_Neighbor_allgather, _allgatherv, _alltoall, _alltoallv and _alltoallw
 * of an unmodified C program run mpitopo_neighbor_*. Off by default: the
 * linear schedule is the flat burst of point-to-point messages that MPI's
 * own collectives already send, so routing to it gains nothing until the
 * combining and Cartesian schedules exist.
 *
 * Not intercepted, on purpose: MPI_Ineighbor_* and the persistent
 * MPI_Neighbor_*_init. The program waits on an MPI_Request (MPI_Wait,
 * MPI_Testall, mixed with its own requests), but an mpitopo request is a
 * set of messages on a private communicator, possibly not yet posted
 * (pending MPI_Comm_idup), not one MPI_Request. A generalized request
 * would be one, but MPI never progresses it: only a progress thread could
 * complete it, which the shim will not start behind the program's back.
 * These calls reach MPI's own, which is correct for every program.
 *
 * Errors: a communicator MPI should reject (MPI_COMM_NULL, an
 * intercommunicator, no topology) goes to MPI, which reports its own error.
 * mpitopo's errors are raised through comm's error handler: a bad argument
 * as MPI_ERR_ARG, out of memory as MPI_ERR_NO_MEM, an MPI error of the
 * point-to-point traffic (e.g. MPI_ERR_TRUNCATE) with its own code.
 *
 * mpitopo_shim_neighbor_calls() (exported, declared in shim.h) counts the
 * calls routed to mpitopo, so that a test can tell interception happened.
 */
#include <mpi.h>
#include <mpitopo.h>

#include <stdatomic.h>

#include "pmpi/shim.h"

static atomic_long routed;

long mpitopo_shim_neighbor_calls(void)
{
    return atomic_load(&routed);
}

/* Whether this call goes to mpitopo; counts it if so. */
static int takes(const char *func, MPI_Comm comm)
{
    if (!mpitopo__shim_neighbor_takes(func, comm))
        return 0;
    atomic_fetch_add(&routed, 1);
    return 1;
}

/* What the MPI function returns for mpitopo's result rc: MPI codes (> 0)
 * as they are, mpitopo's own (< 0) as a class, both through comm's error
 * handler as MPI would raise them. */
static int result(const char *func, MPI_Comm comm, int rc)
{
    if (rc == MPITOPO_SUCCESS)
        return MPI_SUCCESS;
    int mpi_code = rc;
    if (rc == MPITOPO_ERR_NOMEM)
        mpi_code = MPI_ERR_NO_MEM;
    else if (rc == MPITOPO_ERR_ARG)
        mpi_code = MPI_ERR_ARG;
    else if (rc < 0)
        mpi_code = MPI_ERR_OTHER;
    return mpitopo__shim_raise(func, comm, mpi_code, mpitopo_last_error());
}

int MPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    static const char func[] = "MPI_Neighbor_allgather";
    if (!takes(func, comm))
        return PMPI_Neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                       recvtype, comm);
    return result(func, comm,
                  mpitopo_neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                             recvtype, comm));
}

int MPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, MPI_Comm comm)
{
    static const char func[] = "MPI_Neighbor_allgatherv";
    if (!takes(func, comm))
        return PMPI_Neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                        displs, recvtype, comm);
    return result(func, comm,
                  mpitopo_neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                              displs, recvtype, comm));
}

int MPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    static const char func[] = "MPI_Neighbor_alltoall";
    if (!takes(func, comm))
        return PMPI_Neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                      recvtype, comm);
    return result(func, comm,
                  mpitopo_neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                            recvtype, comm));
}

int MPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                           MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    static const char func[] = "MPI_Neighbor_alltoallv";
    if (!takes(func, comm))
        return PMPI_Neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                       recvcounts, rdispls, recvtype, comm);
    return result(func, comm,
                  mpitopo_neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                             recvcounts, rdispls, recvtype, comm));
}

int MPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                           const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                           MPI_Comm comm)
{
    static const char func[] = "MPI_Neighbor_alltoallw";
    if (!takes(func, comm))
        return PMPI_Neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                       recvcounts, rdispls, recvtypes, comm);
    return result(func, comm,
                  mpitopo_neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                             recvcounts, rdispls, recvtypes, comm));
}
