/*
 * Test-only PMPI layer, linked into the MPI tests of MPICH builds (never into
 * the library): MPICH busy-polls inside blocking calls, which starves the
 * other ranks when 16 processes share 2 cores. Each blocking call below
 * becomes its nonblocking PMPI form completed by PMPI_Test* + a pause that
 * gives the core away, under its MPI_ name (the test programs' calls) and
 * its PMPI_ name (the library's). MPI error codes are returned unchanged.
 */
#include <mpi.h>
#include <sched.h>
#include <time.h>

/*
 * Between two tests: give the core away. sched_yield() alone hands it back
 * at once when every process on the core is polling; after 64 tries the
 * waiter sleeps 20 us per try, so the processes that can progress run
 * (a 16-process MPICH test took 3-4x longer with sched_yield() alone).
 */
static void yield_pause(int *tries)
{
    if (++*tries < 64) {
        sched_yield();
        return;
    }
    struct timespec ts = {0, 20000};
    nanosleep(&ts, NULL);
}

/* Complete one request, yielding the core between tests. */
static int yield_wait(MPI_Request *req, MPI_Status *status)
{
    int flag = 0, rc, tries = 0;
    while ((rc = PMPI_Test(req, &flag, status)) == MPI_SUCCESS && !flag)
        yield_pause(&tries);
    return rc;
}

static int yield_waitall(int n, MPI_Request *reqs, MPI_Status *statuses)
{
    int flag = 0, rc, tries = 0;
    while ((rc = PMPI_Testall(n, reqs, &flag, statuses)) == MPI_SUCCESS && !flag)
        yield_pause(&tries);
    return rc;
}

/* Start `call` (which fills the request r_), then complete it with status st. */
#define YIELD(call, st)                                                        \
    do {                                                                       \
        MPI_Request r_;                                                        \
        int rc_ = (call);                                                      \
        return rc_ != MPI_SUCCESS ? rc_ : yield_wait(&r_, (st));               \
    } while (0)

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    return yield_wait(request, status);
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    return yield_waitall(count, requests, statuses);
}

int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
    int flag = 0, rc, tries = 0;
    while ((rc = PMPI_Testany(count, requests, index, &flag, status)) == MPI_SUCCESS && !flag)
        yield_pause(&tries);
    return rc;
}

/* Done when something completed, or MPI_UNDEFINED when nothing was active. */
int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    int rc, tries = 0;
    while ((rc = PMPI_Testsome(incount, requests, outcount, indices, statuses)) == MPI_SUCCESS &&
           *outcount == 0)
        yield_pause(&tries);
    return rc;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    int flag = 0, rc, tries = 0;
    while ((rc = PMPI_Iprobe(source, tag, comm, &flag, status)) == MPI_SUCCESS && !flag)
        yield_pause(&tries);
    return rc;
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    YIELD(PMPI_Irecv(buf, count, type, source, tag, comm, &r_), status);
}

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    YIELD(PMPI_Isend(buf, count, type, dest, tag, comm, &r_), MPI_STATUS_IGNORE);
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    YIELD(PMPI_Issend(buf, count, type, dest, tag, comm, &r_), MPI_STATUS_IGNORE);
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                 int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                 int recvtag, MPI_Comm comm, MPI_Status *status)
{
    MPI_Request r[2];
    MPI_Status st[2];
    int rc = PMPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &r[0]);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = PMPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &r[1]);
    if (rc != MPI_SUCCESS) {
        PMPI_Cancel(&r[0]);
        PMPI_Request_free(&r[0]);
        return rc;
    }
    rc = yield_waitall(2, r, st);
    if (rc == MPI_SUCCESS && status != MPI_STATUS_IGNORE)
        *status = st[0];
    return rc;
}

int MPI_Barrier(MPI_Comm comm)
{
    YIELD(PMPI_Ibarrier(comm, &r_), MPI_STATUS_IGNORE);
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    YIELD(PMPI_Ibcast(buf, count, type, root, comm, &r_), MPI_STATUS_IGNORE);
}

int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, int root,
               MPI_Comm comm)
{
    YIELD(PMPI_Ireduce(sbuf, rbuf, count, type, op, root, comm, &r_), MPI_STATUS_IGNORE);
}

int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm)
{
    YIELD(PMPI_Iallreduce(sbuf, rbuf, count, type, op, comm, &r_), MPI_STATUS_IGNORE);
}

int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
               MPI_Datatype rtype, int root, MPI_Comm comm)
{
    YIELD(PMPI_Igather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, &r_),
          MPI_STATUS_IGNORE);
}

int MPI_Gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                const int rcounts[], const int displs[], MPI_Datatype rtype, int root,
                MPI_Comm comm)
{
    YIELD(PMPI_Igatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm, &r_),
          MPI_STATUS_IGNORE);
}

int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                  MPI_Datatype rtype, MPI_Comm comm)
{
    YIELD(PMPI_Iallgather(sbuf, scount, stype, rbuf, rcount, rtype, comm, &r_),
          MPI_STATUS_IGNORE);
}

int MPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                   const int rcounts[], const int displs[], MPI_Datatype rtype, MPI_Comm comm)
{
    YIELD(PMPI_Iallgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, &r_),
          MPI_STATUS_IGNORE);
}

int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                MPI_Datatype rtype, int root, MPI_Comm comm)
{
    YIELD(PMPI_Iscatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, &r_),
          MPI_STATUS_IGNORE);
}

int MPI_Scatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype,
                 void *rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
    YIELD(PMPI_Iscatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm, &r_),
          MPI_STATUS_IGNORE);
}

int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                 MPI_Datatype rtype, MPI_Comm comm)
{
    YIELD(PMPI_Ialltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, &r_),
          MPI_STATUS_IGNORE);
}

int MPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype,
                  void *rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rtype,
                  MPI_Comm comm)
{
    YIELD(PMPI_Ialltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm,
                          &r_),
          MPI_STATUS_IGNORE);
}

/* mpitopo_neighbor_* with schedule `mpi` (and `auto` when it hands a call
 * to the host MPI) call MPICH's blocking neighbourhood collectives. */
int MPI_Neighbor_allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                           int rcount, MPI_Datatype rtype, MPI_Comm comm)
{
    YIELD(PMPI_Ineighbor_allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm, &r_),
          MPI_STATUS_IGNORE);
}

int MPI_Neighbor_allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                            const int rcounts[], const int displs[], MPI_Datatype rtype,
                            MPI_Comm comm)
{
    YIELD(PMPI_Ineighbor_allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, &r_),
          MPI_STATUS_IGNORE);
}

int MPI_Neighbor_alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                          int rcount, MPI_Datatype rtype, MPI_Comm comm)
{
    YIELD(PMPI_Ineighbor_alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, &r_),
          MPI_STATUS_IGNORE);
}

int MPI_Neighbor_alltoallv(const void *sbuf, const int scounts[], const int sdispls[],
                           MPI_Datatype stype, void *rbuf, const int rcounts[],
                           const int rdispls[], MPI_Datatype rtype, MPI_Comm comm)
{
    YIELD(PMPI_Ineighbor_alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype,
                                   comm, &r_),
          MPI_STATUS_IGNORE);
}

int MPI_Neighbor_alltoallw(const void *sbuf, const int scounts[], const MPI_Aint sdispls[],
                           const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
                           const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm)
{
    YIELD(PMPI_Ineighbor_alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes,
                                   comm, &r_),
          MPI_STATUS_IGNORE);
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    MPI_Request r;
    int rc = PMPI_Comm_idup(comm, newcomm, &r);
    return rc != MPI_SUCCESS ? rc : yield_wait(&r, MPI_STATUS_IGNORE);
}

/*
 * The same functions under their PMPI_ names: the library calls PMPI_*
 * (never MPI_*), so without these its own waits and collectives would spin
 * inside MPICH. The layer is linked (or preloaded) before the MPI library,
 * so these definitions come first; they call only nonblocking PMPI_I* forms
 * and PMPI_Test*, which stay MPICH's.
 */
#define YIELD_PMPI(name) __typeof__(MPI_##name) PMPI_##name __attribute__((alias("MPI_" #name)));
#ifdef YIELD_PMPI_WAITS /* not under the shim: tests/mpi/CMakeLists.txt says why */
YIELD_PMPI(Wait)
YIELD_PMPI(Waitall)
YIELD_PMPI(Waitany)
YIELD_PMPI(Waitsome)
#endif
YIELD_PMPI(Probe)
YIELD_PMPI(Recv)
YIELD_PMPI(Send)
YIELD_PMPI(Ssend)
YIELD_PMPI(Sendrecv)
YIELD_PMPI(Barrier)
YIELD_PMPI(Bcast)
YIELD_PMPI(Reduce)
YIELD_PMPI(Allreduce)
YIELD_PMPI(Gather)
YIELD_PMPI(Gatherv)
YIELD_PMPI(Allgather)
YIELD_PMPI(Allgatherv)
YIELD_PMPI(Scatter)
YIELD_PMPI(Scatterv)
YIELD_PMPI(Alltoall)
YIELD_PMPI(Alltoallv)
YIELD_PMPI(Neighbor_allgather)
YIELD_PMPI(Neighbor_allgatherv)
YIELD_PMPI(Neighbor_alltoall)
YIELD_PMPI(Neighbor_alltoallv)
YIELD_PMPI(Neighbor_alltoallw)
YIELD_PMPI(Comm_dup)
