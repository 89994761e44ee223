/*
 * libmpitopo_shim, neighbourhood collectives: with MPITOPO_NEIGHBOR=auto,
 * linear, combine or cart (the library reads the same variable to choose
 * its schedule) an unmodified C program's
 *   MPI_Neighbor_allgather, _allgatherv, _alltoall, _alltoallv, _alltoallw
 *                   run mpitopo_neighbor_*;
 *   MPI_Ineighbor_* run mpitopo_ineighbor_*, and the program gets a real
 *                   MPI_Request for it (shim_requests.c says how, and which
 *                   completion calls the shim takes over for it);
 *   MPI_Neighbor_*_init (MPI-4, only when mpi.h declares them: MPICH 4.0
 *                   does, Open MPI 4.1 does not) run
 *                   mpitopo_neighbor_*_init; the request is persistent, and
 *                   MPI_Start / MPI_Startall start mpitopo's schedule.
 * Off by default (unset, empty or "off": MPI's own).
 *
 * Errors: a communicator MPI should reject (MPI_COMM_NULL, an
 * intercommunicator, no topology) goes to MPI, which reports its own error.
 * mpitopo's errors are raised through comm's error handler: a bad argument
 * as MPI_ERR_ARG, out of memory as MPI_ERR_NO_MEM, an MPI error of the
 * point-to-point traffic (e.g. MPI_ERR_TRUNCATE) with its own code.
 *
 * mpitopo_shim_neighbor_calls() (exported, declared in shim.h) counts the
 * calls routed to mpitopo (a persistent operation once, at its _init), so
 * that a test can tell interception happened.
 *
 * The Fortran bindings of mpif.h and `use mpi` (shim_fortran.c) route
 * through the mpitopo__shim_* functions below; a Fortran call they leave
 * to MPI stays MPI's own in the C bindings too
 * (mpitopo__shim_fortran_passing).
 */
#include <mpi.h>
#include <mpitopo.h>

#include <stdatomic.h>

#include "pmpi/shim.h"
#include "pmpi/trace/trace.h"

static atomic_long routed;

_Thread_local int mpitopo__shim_fortran_passing;

long mpitopo_shim_neighbor_calls(void)
{
    return atomic_load(&routed);
}

/* Whether this call goes to mpitopo; counts it if so. */
static int takes(const char *func, MPI_Comm comm)
{
    mpitopo__shim_watch_used(comm);
    if (!mpitopo__shim_neighbor_takes(func, comm))
        return 0;
    atomic_fetch_add(&routed, 1);
    return 1;
}

/* The same for a nonblocking or persistent call, which stays MPI's own
 * when a Fortran binding passes it on. */
static int takes_request(const char *func, MPI_Comm comm)
{
    return !mpitopo__shim_fortran_passing && takes(func, comm);
}

int mpitopo__shim_neighbor_code(int rc)
{
    if (rc == MPITOPO_ERR_NOMEM)
        return MPI_ERR_NO_MEM;
    if (rc == MPITOPO_ERR_ARG)
        return MPI_ERR_ARG;
    if (rc < 0)
        return MPI_ERR_OTHER;
    return rc;
}

/* mpitopo's own codes (< 0) become a class, MPI codes (> 0) stay as they
 * are; both go through comm's error handler as MPI would raise them. */
int mpitopo__shim_neighbor_result(const char *func, MPI_Comm comm, int rc)
{
    if (rc == MPITOPO_SUCCESS)
        return MPI_SUCCESS;
    return mpitopo__shim_raise(func, comm, mpitopo__shim_neighbor_code(rc),
                               mpitopo_last_error());
}

static int result(const char *func, MPI_Comm comm, int rc)
{
    return mpitopo__shim_neighbor_result(func, comm, rc);
}

/* What each operation sends, for the trace of mpitopo run (a call MPI
 * refuses is counted all the same: it is rare, and the trace is a pattern). */
static void trace_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                            int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    (void)recvbuf, (void)recvcount, (void)recvtype;
    mpitopo__trace_neighbors(comm, sendbuf, sendcount, NULL, sendtype, NULL);
}
static void trace_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                             const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    (void)recvbuf, (void)recvcounts, (void)displs, (void)recvtype;
    mpitopo__trace_neighbors(comm, sendbuf, sendcount, NULL, sendtype, NULL);
}
static void trace_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    trace_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
static void trace_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                            MPI_Datatype recvtype, MPI_Comm comm)
{
    (void)sdispls, (void)recvbuf, (void)recvcounts, (void)rdispls, (void)recvtype;
    mpitopo__trace_neighbors(comm, sendbuf, 0, sendcounts, sendtype, NULL);
}
static void trace_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    (void)sdispls, (void)recvbuf, (void)recvcounts, (void)rdispls, (void)recvtypes;
    mpitopo__trace_neighbors(comm, sendbuf, 0, sendcounts, MPI_DATATYPE_NULL, sendtypes);
}

/*
 * The three forms of each operation, as their C bindings (and the Fortran
 * ones, through the converters of shim_fortran.c) run them; the bindings
 * are generated from bindings.def. Nonblocking and persistent: the request
 * handed out is made by mpitopo__shim_request_give.
 */

/* MPI_Neighbor_allgather */
int mpitopo__shim_neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                     void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                     MPI_Comm comm)
{
    static const char func[] = "MPI_Neighbor_allgather";
    trace_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    if (!takes(func, comm))
        return PMPI_Neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                       comm);
    return result(func, comm,
                  mpitopo_neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                             recvtype, comm));
}

int mpitopo__shim_ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                      void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                      MPI_Comm comm, MPI_Request *request)
{
    static const char func[] = "MPI_Ineighbor_allgather";
    trace_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    if (!takes_request(func, comm))
        return PMPI_Ineighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                        recvtype, comm, request);
    mpitopo_request_t m = MPITOPO_REQUEST_NULL;
    int rc = mpitopo_ineighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                         recvtype, comm, &m);
    return mpitopo__shim_request_give(func, comm, rc, m, 0, request);
}

#if MPI_VERSION >= 4
int mpitopo__shim_neighbor_allgather_init(const void *sendbuf, int sendcount,
                                          MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                          MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                          MPI_Request *request)
{
    static const char func[] = "MPI_Neighbor_allgather_init";
    if (!takes_request(func, comm))
        return PMPI_Neighbor_allgather_init(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                            recvtype, comm, info, request);
    mpitopo_request_t m = MPITOPO_REQUEST_NULL;
    int rc = mpitopo_neighbor_allgather_init(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                             recvtype, comm, info, &m);
    return mpitopo__shim_request_give(func, comm, rc, m, 1, request);
}
#endif

/* MPI_Neighbor_allgatherv */
int mpitopo__shim_neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                      void *recvbuf, const int recvcounts[], const int displs[],
                                      MPI_Datatype recvtype, MPI_Comm comm)
{
    static const char func[] = "MPI_Neighbor_allgatherv";
    trace_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
    if (!takes(func, comm))
        return PMPI_Neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                        recvtype, comm);
    return result(func, comm,
                  mpitopo_neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                              displs, recvtype, comm));
}

int mpitopo__shim_ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                       void *recvbuf, const int recvcounts[], const int displs[],
                                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    static const char func[] = "MPI_Ineighbor_allgatherv";
    trace_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
    if (!takes_request(func, comm))
        return PMPI_Ineighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                         displs, recvtype, comm, request);
    mpitopo_request_t m = MPITOPO_REQUEST_NULL;
    int rc = mpitopo_ineighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                          displs, recvtype, comm, &m);
    return mpitopo__shim_request_give(func, comm, rc, m, 0, request);
}

#if MPI_VERSION >= 4
int mpitopo__shim_neighbor_allgatherv_init(const void *sendbuf, int sendcount,
                                           MPI_Datatype sendtype, void *recvbuf,
                                           const int recvcounts[], const int displs[],
                                           MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                           MPI_Request *request)
{
    static const char func[] = "MPI_Neighbor_allgatherv_init";
    if (!takes_request(func, comm))
        return PMPI_Neighbor_allgatherv_init(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                             displs, recvtype, comm, info, request);
    mpitopo_request_t m = MPITOPO_REQUEST_NULL;
    int rc = mpitopo_neighbor_allgatherv_init(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                              displs, recvtype, comm, info, &m);
    return mpitopo__shim_request_give(func, comm, rc, m, 1, request);
}
#endif

/* MPI_Neighbor_alltoall */
int mpitopo__shim_neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                    void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                    MPI_Comm comm)
{
    static const char func[] = "MPI_Neighbor_alltoall";
    trace_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    if (!takes(func, comm))
        return PMPI_Neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                      comm);
    return result(func, comm,
                  mpitopo_neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                            recvtype, comm));
}

int mpitopo__shim_ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                     void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                     MPI_Comm comm, MPI_Request *request)
{
    static const char func[] = "MPI_Ineighbor_alltoall";
    trace_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    if (!takes_request(func, comm))
        return PMPI_Ineighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                       recvtype, comm, request);
    mpitopo_request_t m = MPITOPO_REQUEST_NULL;
    int rc = mpitopo_ineighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                        recvtype, comm, &m);
    return mpitopo__shim_request_give(func, comm, rc, m, 0, request);
}

#if MPI_VERSION >= 4
int mpitopo__shim_neighbor_alltoall_init(const void *sendbuf, int sendcount,
                                         MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                         MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                         MPI_Request *request)
{
    static const char func[] = "MPI_Neighbor_alltoall_init";
    if (!takes_request(func, comm))
        return PMPI_Neighbor_alltoall_init(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                           recvtype, comm, info, request);
    mpitopo_request_t m = MPITOPO_REQUEST_NULL;
    int rc = mpitopo_neighbor_alltoall_init(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                            recvtype, comm, info, &m);
    return mpitopo__shim_request_give(func, comm, rc, m, 1, request);
}
#endif

/* MPI_Neighbor_alltoallv */
int mpitopo__shim_neighbor_alltoallv(const void *sendbuf, const int sendcounts[],
                                     const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                     const int recvcounts[], const int rdispls[],
                                     MPI_Datatype recvtype, MPI_Comm comm)
{
    static const char func[] = "MPI_Neighbor_alltoallv";
    trace_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                    recvtype, comm);
    if (!takes(func, comm))
        return PMPI_Neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                       recvcounts, rdispls, recvtype, comm);
    return result(func, comm,
                  mpitopo_neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                             recvcounts, rdispls, recvtype, comm));
}

int mpitopo__shim_ineighbor_alltoallv(const void *sendbuf, const int sendcounts[],
                                      const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                      const int recvcounts[], const int rdispls[],
                                      MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    static const char func[] = "MPI_Ineighbor_alltoallv";
    trace_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                    recvtype, comm);
    if (!takes_request(func, comm))
        return PMPI_Ineighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                        recvcounts, rdispls, recvtype, comm, request);
    mpitopo_request_t m = MPITOPO_REQUEST_NULL;
    int rc = mpitopo_ineighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                         recvcounts, rdispls, recvtype, comm, &m);
    return mpitopo__shim_request_give(func, comm, rc, m, 0, request);
}

#if MPI_VERSION >= 4
int mpitopo__shim_neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[],
                                          const int sdispls[], MPI_Datatype sendtype,
                                          void *recvbuf, const int recvcounts[],
                                          const int rdispls[], MPI_Datatype recvtype,
                                          MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    static const char func[] = "MPI_Neighbor_alltoallv_init";
    if (!takes_request(func, comm))
        return PMPI_Neighbor_alltoallv_init(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                            recvcounts, rdispls, recvtype, comm, info, request);
    mpitopo_request_t m = MPITOPO_REQUEST_NULL;
    int rc = mpitopo_neighbor_alltoallv_init(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                             recvcounts, rdispls, recvtype, comm, info, &m);
    return mpitopo__shim_request_give(func, comm, rc, m, 1, request);
}
#endif

/* MPI_Neighbor_alltoallw */
int mpitopo__shim_neighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                                     const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                     void *recvbuf, const int recvcounts[],
                                     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                     MPI_Comm comm)
{
    static const char func[] = "MPI_Neighbor_alltoallw";
    trace_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                    recvtypes, comm);
    if (!takes(func, comm))
        return PMPI_Neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                       recvcounts, rdispls, recvtypes, comm);
    return result(func, comm,
                  mpitopo_neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                             recvcounts, rdispls, recvtypes, comm));
}

int mpitopo__shim_ineighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                                      const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                      void *recvbuf, const int recvcounts[],
                                      const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                      MPI_Comm comm, MPI_Request *request)
{
    static const char func[] = "MPI_Ineighbor_alltoallw";
    trace_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                    recvtypes, comm);
    if (!takes_request(func, comm))
        return PMPI_Ineighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                        recvcounts, rdispls, recvtypes, comm, request);
    mpitopo_request_t m = MPITOPO_REQUEST_NULL;
    int rc = mpitopo_ineighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                         recvcounts, rdispls, recvtypes, comm, &m);
    return mpitopo__shim_request_give(func, comm, rc, m, 0, request);
}

#if MPI_VERSION >= 4
int mpitopo__shim_neighbor_alltoallw_init(const void *sendbuf, const int sendcounts[],
                                          const MPI_Aint sdispls[],
                                          const MPI_Datatype sendtypes[], void *recvbuf,
                                          const int recvcounts[], const MPI_Aint rdispls[],
                                          const MPI_Datatype recvtypes[], MPI_Comm comm,
                                          MPI_Info info, MPI_Request *request)
{
    static const char func[] = "MPI_Neighbor_alltoallw_init";
    if (!takes_request(func, comm))
        return PMPI_Neighbor_alltoallw_init(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                            recvcounts, rdispls, recvtypes, comm, info, request);
    mpitopo_request_t m = MPITOPO_REQUEST_NULL;
    int rc = mpitopo_neighbor_alltoallw_init(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                             recvcounts, rdispls, recvtypes, comm, info, &m);
    return mpitopo__shim_request_give(func, comm, rc, m, 1, request);
}
#endif
