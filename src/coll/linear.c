/*
 * The linear schedule of the neighbourhood collectives: one round in which
 * every receive and every send is posted at once, as MPI libraries do. The
 * five operations differ only in how a buffer is cut into per-neighbour
 * blocks, so each side (send, receive) is described once by a
 * `side_t` and the schedule is built from the two.
 */
#include "coll/coll_internal.h"

#include <stdint.h>

/* How block i of a buffer is found. */
typedef enum {
    SIDE_SAME,  /* allgather send: the whole buffer for every neighbour */
    SIDE_BLOCK, /* block i at i * count * extent */
    SIDE_V,     /* counts[i] at displs[i] * extent */
    SIDE_W      /* counts[i] of types[i] at bdispls[i] bytes */
} side_mode_t;

typedef struct side {
    side_mode_t mode;
    const void *buf;
    int count;
    const int *counts;
    const int *displs;
    const MPI_Aint *bdispls;
    MPI_Datatype type;
    const MPI_Datatype *types;
    MPI_Aint extent;
    /* Argument names, for error messages. */
    const char *buf_name, *count_name, *displs_name, *type_name;
} side_t;

static const char *mode_count_name(int send, side_mode_t mode)
{
    int scalar = mode == SIDE_SAME || mode == SIDE_BLOCK;
    return send ? (scalar ? "sendcount" : "sendcounts") : (scalar ? "recvcount" : "recvcounts");
}

static int slot_count(const side_t *s, int i)
{
    return s->mode == SIDE_SAME || s->mode == SIDE_BLOCK ? s->count : s->counts[i];
}

static MPI_Datatype slot_type(const side_t *s, int i)
{
    return s->mode == SIDE_W ? s->types[i] : s->type;
}

static void *slot_buf(const side_t *s, int i)
{
    /* The send buffer is only ever read: MPI's own prototypes take a
     * non-const pointer for both directions. */
    char *b = (char *)(uintptr_t)s->buf;
    switch (s->mode) {
    case SIDE_SAME:
        return b;
    case SIDE_BLOCK:
        return b + (MPI_Aint)i * s->count * s->extent;
    case SIDE_V:
        return b + (MPI_Aint)s->displs[i] * s->extent;
    default:
        return b + s->bdispls[i];
    }
}

static int check_arrays(const side_t *s, int degree, const char *func)
{
    if (s->mode != SIDE_V && s->mode != SIDE_W)
        return MPITOPO_SUCCESS;
    const void *displs = s->mode == SIDE_V ? (const void *)s->displs : (const void *)s->bdispls;
    const char *missing = !s->counts                          ? s->count_name
                          : !displs                           ? s->displs_name
                          : s->mode == SIDE_W && !s->types    ? s->type_name
                                                              : NULL;
    if (degree > 0 && missing)
        return mpitopo__error_at(MPITOPO_ERR_ARG, func, "%s = NULL with degree %d", missing,
                                 degree);
    return MPITOPO_SUCCESS;
}

/* A NULL buffer can only be right with a derived datatype of absolute
 * addresses (MPI_BOTTOM); with a predefined one it is a mistake. */
static int check_slot(const side_t *s, int i, const char *func)
{
    int count = slot_count(s, i);
    MPI_Datatype t = slot_type(s, i);
    int vec = s->mode == SIDE_V || s->mode == SIDE_W;
    if (count < 0)
        return vec ? mpitopo__error_at(MPITOPO_ERR_ARG, func, "%s[%d] = %d must be >= 0",
                                       s->count_name, i, count)
                   : mpitopo__error_at(MPITOPO_ERR_ARG, func, "%s = %d must be >= 0",
                                       s->count_name, count);
    if (t == MPI_DATATYPE_NULL)
        return s->mode == SIDE_W
                   ? mpitopo__error_at(MPITOPO_ERR_ARG, func, "%s[%d] = MPI_DATATYPE_NULL",
                                       s->type_name, i)
                   : mpitopo__error_at(MPITOPO_ERR_ARG, func, "%s = MPI_DATATYPE_NULL",
                                       s->type_name);
    if (s->buf || count == 0)
        return MPITOPO_SUCCESS;
    int ni, na, nd, combiner, rc = PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
    if (rc != MPI_SUCCESS)
        return mpitopo__mpi_result(func, rc);
    if (combiner != MPI_COMBINER_NAMED)
        return MPITOPO_SUCCESS;
    return vec ? mpitopo__error_at(MPITOPO_ERR_ARG, func,
                                   "%s = NULL with %s[%d] = %d of a predefined datatype",
                                   s->buf_name, s->count_name, i, count)
               : mpitopo__error_at(MPITOPO_ERR_ARG, func,
                                   "%s = NULL with %s = %d of a predefined datatype",
                                   s->buf_name, s->count_name, count);
}

/* Validate one side against its degree and compute the extent it needs. */
static int check_side(side_t *s, int degree, const char *func)
{
    if (s->buf == MPI_IN_PLACE)
        return mpitopo__error_at(MPITOPO_ERR_ARG, func,
                                 "%s = MPI_IN_PLACE is not allowed in neighbourhood collectives",
                                 s->buf_name);
    int rc = check_arrays(s, degree, func);
    int slots = s->mode == SIDE_SAME && degree > 0 ? 1 : degree;
    for (int i = 0; i < slots && rc == MPITOPO_SUCCESS; i++)
        rc = check_slot(s, i, func);
    if (rc != MPITOPO_SUCCESS || degree == 0 || s->mode == SIDE_W)
        return rc;
    MPI_Aint lb;
    rc = PMPI_Type_get_extent(s->type, &lb, &s->extent);
    return rc == MPI_SUCCESS ? MPITOPO_SUCCESS : mpitopo__mpi_result(func, rc);
}

static int count_peers(const int *list, int n)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        k += list[i] != MPI_PROC_NULL;
    return k;
}

/* Receives first, then sends, all in round 0; MPI_PROC_NULL gets nothing. */
static void fill_linear(mpitopo_request_t r, const side_t *send, const side_t *recv)
{
    const mpitopo__nbr_t *n = r->nbr;
    int k = 0;
    for (int i = 0; i < n->indegree; i++)
        if (n->sources[i] != MPI_PROC_NULL)
            r->ops[k++] = (mpitopo__op_t){slot_buf(recv, i), slot_count(recv, i),
                                          slot_type(recv, i), n->sources[i],
                                          mpitopo__nbr_recv_tag(n, i), 0};
    for (int i = 0; i < n->outdegree; i++)
        if (n->destinations[i] != MPI_PROC_NULL)
            r->ops[k++] = (mpitopo__op_t){slot_buf(send, i), slot_count(send, i),
                                          slot_type(send, i), n->destinations[i],
                                          mpitopo__nbr_send_tag(n, i), 1};
    r->round_start[0] = 0;
    r->round_start[1] = k;
}

/*
 * The common path of every operation: check, make sure the private
 * communicator exists (or is being made), build the schedule and start it.
 * blocking: complete it too; *request is then unused.
 */
static int run(side_t *send, side_t *recv, MPI_Comm comm, int blocking,
               mpitopo_request_t *request, const char *func)
{
    if (!blocking && !request)
        return mpitopo__error_at(MPITOPO_ERR_ARG, func, "request = NULL");
    if (request)
        *request = MPITOPO_REQUEST_NULL;
    mpitopo__nbr_t *n;
    int rc = mpitopo__nbr_get(comm, func, &n);
    if (rc == MPITOPO_SUCCESS)
        rc = check_side(send, n->outdegree, func);
    if (rc == MPITOPO_SUCCESS)
        rc = check_side(recv, n->indegree, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    rc = mpitopo__nbr_private_comm(n, blocking);
    if (rc != MPI_SUCCESS)
        return mpitopo__mpi_result(func, rc);
    int nops = count_peers(n->sources, n->indegree) + count_peers(n->destinations, n->outdegree);
    mpitopo_request_t r = mpitopo__request_new(n, nops, 1);
    if (!r)
        return mpitopo__error_at(MPITOPO_ERR_NOMEM, func, "out of memory for %d messages", nops);
    fill_linear(r, send, recv);
    rc = mpitopo__request_start(r);
    if (rc != MPITOPO_SUCCESS) {
        mpitopo__request_release(r);
        return rc;
    }
    if (blocking)
        return mpitopo__request_wait(&r, func);
    *request = r;
    return MPITOPO_SUCCESS;
}

/* The sides of the five operations. */
static side_t side_scalar(int send, side_mode_t mode, const void *buf, int count,
                          MPI_Datatype type)
{
    return (side_t){.mode = mode, .buf = buf, .count = count, .type = type,
                    .buf_name = send ? "sendbuf" : "recvbuf",
                    .count_name = mode_count_name(send, mode),
                    .type_name = send ? "sendtype" : "recvtype"};
}

static side_t side_v(int send, const void *buf, const int *counts, const int *displs,
                     MPI_Datatype type, const char *displs_name)
{
    return (side_t){.mode = SIDE_V, .buf = buf, .counts = counts, .displs = displs,
                    .type = type, .buf_name = send ? "sendbuf" : "recvbuf",
                    .count_name = mode_count_name(send, SIDE_V), .displs_name = displs_name,
                    .type_name = send ? "sendtype" : "recvtype"};
}

static side_t side_w(int send, const void *buf, const int *counts, const MPI_Aint *displs,
                     const MPI_Datatype *types)
{
    return (side_t){.mode = SIDE_W, .buf = buf, .counts = counts, .bdispls = displs,
                    .types = types, .buf_name = send ? "sendbuf" : "recvbuf",
                    .count_name = mode_count_name(send, SIDE_W),
                    .displs_name = send ? "sdispls" : "rdispls",
                    .type_name = send ? "sendtypes" : "recvtypes"};
}

static int allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                     MPI_Datatype rtype, MPI_Comm comm, mpitopo_request_t *req, int blocking,
                     const char *func)
{
    side_t s = side_scalar(1, SIDE_SAME, sbuf, scount, stype);
    side_t r = side_scalar(0, SIDE_BLOCK, rbuf, rcount, rtype);
    return run(&s, &r, comm, blocking, req, func);
}

static int allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                      const int *rcounts, const int *displs, MPI_Datatype rtype, MPI_Comm comm,
                      mpitopo_request_t *req, int blocking, const char *func)
{
    side_t s = side_scalar(1, SIDE_SAME, sbuf, scount, stype);
    side_t r = side_v(0, rbuf, rcounts, displs, rtype, "displs");
    return run(&s, &r, comm, blocking, req, func);
}

static int alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                    MPI_Datatype rtype, MPI_Comm comm, mpitopo_request_t *req, int blocking,
                    const char *func)
{
    side_t s = side_scalar(1, SIDE_BLOCK, sbuf, scount, stype);
    side_t r = side_scalar(0, SIDE_BLOCK, rbuf, rcount, rtype);
    return run(&s, &r, comm, blocking, req, func);
}

static int alltoallv(const void *sbuf, const int *scounts, const int *sdispls,
                     MPI_Datatype stype, void *rbuf, const int *rcounts, const int *rdispls,
                     MPI_Datatype rtype, MPI_Comm comm, mpitopo_request_t *req, int blocking,
                     const char *func)
{
    side_t s = side_v(1, sbuf, scounts, sdispls, stype, "sdispls");
    side_t r = side_v(0, rbuf, rcounts, rdispls, rtype, "rdispls");
    return run(&s, &r, comm, blocking, req, func);
}

static int alltoallw(const void *sbuf, const int *scounts, const MPI_Aint *sdispls,
                     const MPI_Datatype *stypes, void *rbuf, const int *rcounts,
                     const MPI_Aint *rdispls, const MPI_Datatype *rtypes, MPI_Comm comm,
                     mpitopo_request_t *req, int blocking, const char *func)
{
    side_t s = side_w(1, sbuf, scounts, sdispls, stypes);
    side_t r = side_w(0, rbuf, rcounts, rdispls, rtypes);
    return run(&s, &r, comm, blocking, req, func);
}

int mpitopo_neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, NULL, 1,
                     __func__);
}

int mpitopo_ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                MPI_Comm comm, mpitopo_request_t *request)
{
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request,
                     0, __func__);
}

int mpitopo_neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                void *recvbuf, const int recvcounts[], const int displs[],
                                MPI_Datatype recvtype, MPI_Comm comm)
{
    return allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                      NULL, 1, __func__);
}

int mpitopo_ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, const int recvcounts[], const int displs[],
                                 MPI_Datatype recvtype, MPI_Comm comm,
                                 mpitopo_request_t *request)
{
    return allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                      request, 0, __func__);
}

int mpitopo_neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, NULL, 1,
                    __func__);
}

int mpitopo_ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, int recvcount, MPI_Datatype recvtype,
                               MPI_Comm comm, mpitopo_request_t *request)
{
    return alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request, 0,
                    __func__);
}

int mpitopo_neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                               MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                               const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                     recvtype, comm, NULL, 1, __func__);
}

int mpitopo_ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                mpitopo_request_t *request)
{
    return alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                     recvtype, comm, request, 0, __func__);
}

int mpitopo_neighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                               const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                               void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                               const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    return alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                     recvtypes, comm, NULL, 1, __func__);
}

int mpitopo_ineighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                                const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                                const MPI_Datatype recvtypes[], MPI_Comm comm,
                                mpitopo_request_t *request)
{
    return alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                     recvtypes, comm, request, 0, __func__);
}
