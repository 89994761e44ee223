/*
 * libmpitopo_shim, collectives on reordered communicators (issue 19): with
 * MPITOPO_COLL set to anything but "off" (the library reads the same
 * variable, and the communicator's info key mpitopo_coll, to choose the
 * algorithm and the reordering) an unmodified C program's
 *   MPI_Allgather, MPI_Bcast, MPI_Gather, MPI_Allreduce
 *                   run mpitopo_allgather, _bcast, _gather, _allreduce;
 *   MPI_Iallgather, MPI_Ibcast, MPI_Igather, MPI_Iallreduce
 *                   run mpitopo_iallgather, ...; the program gets a real
 *                   MPI_Request for the mpitopo request, completed by the
 *                   shim's MPI_Wait, MPI_Test, ... (shim_requests.c, the
 *                   mechanism of the nonblocking neighbourhood collectives);
 * each only when the library says it handles that call
 * (mpitopo_coll_handles of coll.h: the datatypes, the operation, an
 * intracommunicator, ...); every other call is MPI's own, unchanged.
 * Unset, empty or "off", or MPITOPO_DISABLE set: every call is MPI's own
 * and costs one load of a flag read once.
 *
 * The library decides per call from the call's arguments, which are the
 * same on every process of a correct program, so all processes route the
 * same call the same way (a routed collective is point-to-point on
 * communicators of mpitopo's, so it must be). Arguments the MPI standard
 * calls insignificant are not shown to it: with MPI_IN_PLACE the send
 * type is the receive type, and a gather's receive type at a process that
 * is not the root is its send type.
 *
 * Errors are raised through comm's error handler as MPI would raise them
 * (mpitopo__shim_neighbor_result: a bad argument as MPI_ERR_ARG, out of
 * memory as MPI_ERR_NO_MEM, MPI's own codes as they are).
 *
 * mpitopo_shim_coll_calls() (exported, declared in shim.h) counts the
 * calls routed to mpitopo, so that a test can tell interception happened.
 * The C bindings and those of mpif.h and `use mpi` (generated from
 * bindings.def; the Fortran converters are in shim_fortran.c) call the
 * mpitopo__shim_* functions below.
 */
#include <mpi.h>
#include <mpitopo.h>

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "core/env.h"
#include "pmpi/shim.h"
#include "pmpi/trace/trace.h"

static atomic_long routed;

long mpitopo_shim_coll_calls(void)
{
    return atomic_load(&routed);
}

/* MPITOPO_COLL asks for routing (and MPITOPO_DISABLE does not forbid it). */
static int coll_on;
static pthread_once_t coll_once = PTHREAD_ONCE_INIT;

static void coll_read(void)
{
    const char *d = mpitopo__getenv(MPITOPO_ENV_DISABLE);
    const char *v = mpitopo__getenv(MPITOPO_ENV_COLL);
    int disabled = d && *d && strcmp(d, "0") != 0;
    coll_on = !disabled && v && *v && strcmp(v, "off") != 0;
}

int mpitopo__shim_coll_enabled(void)
{
    pthread_once(&coll_once, coll_read);
    return coll_on;
}

/* Whether this call goes to mpitopo; counts it if so. MPI_COMM_NULL, and
 * calls before MPI_Init or after MPI_Finalize, go to MPI, which reports its
 * own errors. */
int mpitopo__shim_coll_takes(int which, MPI_Comm comm, MPI_Datatype sendtype,
                             MPI_Datatype recvtype, MPI_Op op)
{
    mpitopo__shim_watch_used(comm);
    if (!mpitopo__shim_coll_enabled() || comm == MPI_COMM_NULL)
        return 0;
    int init = 0, fini = 0;
    PMPI_Initialized(&init);
    PMPI_Finalized(&fini);
    if (!init || fini || !mpitopo_coll_handles(which, comm, sendtype, recvtype, op))
        return 0;
    atomic_fetch_add(&routed, 1);
    return 1;
}

/* The same for a nonblocking call, which stays MPI's own while a Fortran
 * binding passes it to the MPI's Fortran code. */
static int takes_request(int which, MPI_Comm comm, MPI_Datatype st, MPI_Datatype rt, MPI_Op op)
{
    return !mpitopo__shim_fortran_passing && mpitopo__shim_coll_takes(which, comm, st, rt, op);
}

static int result(const char *func, MPI_Comm comm, int rc)
{
    return mpitopo__shim_neighbor_result(func, comm, rc);
}

/* The types the library is asked about (see the top of this file). */
static MPI_Datatype send_type(const void *sendbuf, MPI_Datatype sendtype, MPI_Datatype recvtype)
{
    return sendbuf == MPI_IN_PLACE ? recvtype : sendtype;
}

static void gather_types(const void *sendbuf, MPI_Datatype *st, MPI_Datatype *rt, int root,
                         MPI_Comm comm)
{
    int rank = -1;
    if (PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
        return;
    if (rank != root)
        *rt = *st;
    else if (sendbuf == MPI_IN_PLACE)
        *st = *rt;
}

/* MPI_Allgather */
int mpitopo__shim_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    MPI_Datatype st = send_type(sendbuf, sendtype, recvtype);
    if (!mpitopo__shim_coll_takes(MPITOPO_COLL_OP_ALLGATHER, comm, st, recvtype, MPI_OP_NULL))
        return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    return result("MPI_Allgather", comm,
                  mpitopo_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                    comm));
}

int mpitopo__shim_iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request *request)
{
    MPI_Datatype st = send_type(sendbuf, sendtype, recvtype);
    if (!takes_request(MPITOPO_COLL_OP_ALLGATHER, comm, st, recvtype, MPI_OP_NULL))
        return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                               request);
    mpitopo_request_t m = MPITOPO_REQUEST_NULL;
    int rc = mpitopo_iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                                &m);
    return mpitopo__shim_request_give("MPI_Iallgather", comm, rc, m, 0, request);
}

/* MPI_Bcast */
int mpitopo__shim_bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    if (!mpitopo__shim_coll_takes(MPITOPO_COLL_OP_BCAST, comm, datatype, datatype, MPI_OP_NULL))
        return PMPI_Bcast(buffer, count, datatype, root, comm);
    return result("MPI_Bcast", comm, mpitopo_bcast(buffer, count, datatype, root, comm));
}

int mpitopo__shim_ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                         MPI_Request *request)
{
    if (!takes_request(MPITOPO_COLL_OP_BCAST, comm, datatype, datatype, MPI_OP_NULL))
        return PMPI_Ibcast(buffer, count, datatype, root, comm, request);
    mpitopo_request_t m = MPITOPO_REQUEST_NULL;
    int rc = mpitopo_ibcast(buffer, count, datatype, root, comm, &m);
    return mpitopo__shim_request_give("MPI_Ibcast", comm, rc, m, 0, request);
}

/* MPI_Gather */
int mpitopo__shim_gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                         int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    MPI_Datatype st = sendtype, rt = recvtype;
    if (mpitopo__shim_coll_enabled() && comm != MPI_COMM_NULL)
        gather_types(sendbuf, &st, &rt, root, comm);
    if (!mpitopo__shim_coll_takes(MPITOPO_COLL_OP_GATHER, comm, st, rt, MPI_OP_NULL))
        return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                           comm);
    return result("MPI_Gather", comm,
                  mpitopo_gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                                 comm));
}

int mpitopo__shim_igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                          MPI_Comm comm, MPI_Request *request)
{
    MPI_Datatype st = sendtype, rt = recvtype;
    if (mpitopo__shim_coll_enabled() && comm != MPI_COMM_NULL)
        gather_types(sendbuf, &st, &rt, root, comm);
    if (!takes_request(MPITOPO_COLL_OP_GATHER, comm, st, rt, MPI_OP_NULL))
        return PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                            comm, request);
    mpitopo_request_t m = MPITOPO_REQUEST_NULL;
    int rc = mpitopo_igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                             comm, &m);
    return mpitopo__shim_request_give("MPI_Igather", comm, rc, m, 0, request);
}

/* MPI_Allreduce */
int mpitopo__shim_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                            MPI_Op op, MPI_Comm comm)
{
    if (!mpitopo__shim_coll_takes(MPITOPO_COLL_OP_ALLREDUCE, comm, datatype, datatype, op))
        return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    return result("MPI_Allreduce", comm,
                  mpitopo_allreduce(sendbuf, recvbuf, count, datatype, op, comm));
}

int mpitopo__shim_iallreduce(const void *sendbuf, void *recvbuf, int count,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                             MPI_Request *request)
{
    if (!takes_request(MPITOPO_COLL_OP_ALLREDUCE, comm, datatype, datatype, op))
        return PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request);
    mpitopo_request_t m = MPITOPO_REQUEST_NULL;
    int rc = mpitopo_iallreduce(sendbuf, recvbuf, count, datatype, op, comm, &m);
    return mpitopo__shim_request_give("MPI_Iallreduce", comm, rc, m, 0, request);
}
