/*
 * The entry points of the five neighbourhood operations (blocking,
 * nonblocking, persistent) and of the exchanges of T. Hoefler et al.,
 * "Topological Collectives for MPI-2", section 2.1:
 * check the arguments, take the schedule select.c chooses (cached by
 * cache.c), build and run it. What differs between the operations is how
 * a buffer is cut into per-neighbour blocks: each side (send, receive) is
 * one `side_t` (coll_internal.h).
 */
#include "coll/coll_internal.h"
#include "coll/engine/explore.h"

/* How a call runs: the values of `blocking` of the foundation, plus two.
 * FORM_EXCHANGE: blocking, on the linear schedule, with the blocks a
 * process sends to itself copied locally (mpitopo_neighbor_xchg(v)). */
enum { FORM_NONBLOCKING = 0, FORM_BLOCKING = 1, FORM_PERSISTENT = 2, FORM_EXCHANGE = 3 };

static const char *mode_count_name(int send, side_mode_t mode)
{
    int scalar = mode == SIDE_SAME || mode == SIDE_BLOCK;
    return send ? (scalar ? "sendcount" : "sendcounts") : (scalar ? "recvcount" : "recvcounts");
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
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "%s = NULL with degree %d", missing,
                                 degree);
    return MPITOPO_SUCCESS;
}

/* A NULL buffer can only be right with a derived datatype of absolute
 * addresses (MPI_BOTTOM); with a predefined one it is a mistake. */
static int check_slot(const side_t *s, int i, const char *func)
{
    int count = mpitopo__slot_count(s, i);
    MPI_Datatype t = mpitopo__slot_type(s, i);
    int vec = s->mode == SIDE_V || s->mode == SIDE_W;
    if (count < 0)
        return vec ? MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "%s[%d] = %d must be >= 0",
                                       s->count_name, i, count)
                   : MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "%s = %d must be >= 0",
                                       s->count_name, count);
    if (t == MPI_DATATYPE_NULL)
        return s->mode == SIDE_W
                   ? MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "%s[%d] = MPI_DATATYPE_NULL",
                                       s->type_name, i)
                   : MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "%s = MPI_DATATYPE_NULL",
                                       s->type_name);
    if (s->buf || count == 0)
        return MPITOPO_SUCCESS;
    int ni, na, nd, combiner, rc = PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
    if (rc != MPI_SUCCESS)
        return mpitopo__mpi_result(func, rc);
    if (combiner != MPI_COMBINER_NAMED)
        return MPITOPO_SUCCESS;
    return vec ? MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func,
                                   "%s = NULL with %s[%d] = %d of a predefined datatype",
                                   s->buf_name, s->count_name, i, count)
               : MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func,
                                   "%s = NULL with %s = %d of a predefined datatype",
                                   s->buf_name, s->count_name, count);
}

/* Validate one side against its degree and compute the extent it needs. */
static int check_side(side_t *s, int degree, const char *func)
{
    if (s->buf == MPI_IN_PLACE)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func,
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

static int check_request(int form, mpitopo_request_t *request, const char *func)
{
    if (form != FORM_BLOCKING && !request)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "request = NULL");
    if (request)
        *request = MPITOPO_REQUEST_NULL;
    return MPITOPO_SUCCESS;
}

static int checked_nbr(side_t *send, side_t *recv, MPI_Comm comm, int form,
                       mpitopo_request_t *request, mpitopo__nbr_t **n, const char *func)
{
    int rc = check_request(form, request, func);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__nbr_get(comm, func, n);
    if (rc == MPITOPO_SUCCESS)
        rc = check_side(send, (*n)->outdegree, func);
    if (rc == MPITOPO_SUCCESS)
        rc = check_side(recv, (*n)->indegree, func);
    return rc;
}

static int side_bytes(const side_t *s, long long *bytes)
{
    int size, rc = PMPI_Type_size(s->type, &size);
    *bytes = (long long)size * s->count;
    return rc;
}

/* The blocks of one operation, for the cost model: block bytes of
 * allgather and alltoall (0 for the v and w forms, which have none that
 * every process shares). */
static int block_sizes(mpitopo__opkind_t op, const side_t *send, const side_t *recv,
                       long long *sb, long long *rb, const char *func)
{
    *sb = *rb = 0;
    int rc = MPI_SUCCESS;
    if (op == MPITOPO__OPK_ALLGATHER || op == MPITOPO__OPK_ALLTOALL) {
        rc = side_bytes(send, sb);
        if (rc == MPI_SUCCESS)
            rc = side_bytes(recv, rb);
    }
    return rc == MPI_SUCCESS ? MPITOPO_SUCCESS : mpitopo__mpi_result(func, rc);
}

/* The private communicator is duplicated without blocking by the
 * nonblocking and persistent forms, so that neither blocks; every
 * schedule, the host MPI's call too, runs on it. Then the linear
 * schedule of plan p (the exchanges), else c's schedule of op, not
 * started; persistent requests keep their own datatype duplicates for all
 * runs. */
static int build_for(mpitopo__nbr_t *n, const mpitopo__plan_t *p, const side_t *send,
                     const side_t *recv, const mpitopo__choice_t *c, mpitopo__opkind_t op,
                     int form, mpitopo_request_t *out, const char *func)
{
    int rc = mpitopo__nbr_private_comm(n, form == FORM_BLOCKING);
    if (rc != MPI_SUCCESS)
        return mpitopo__mpi_result(func, rc);
    mpitopo_request_t r = NULL;
    rc = p ? mpitopo__linear_build(n, p, send, recv, &r, func)
           : mpitopo__sched_ops(c->sched)->build(n, op, send, recv, c, &r, func);
    if (rc == MPITOPO_SUCCESS && form == FORM_PERSISTENT) {
        r->persistent = 1;
        rc = mpitopo__request_own_datatypes(r);
    }
    if (rc != MPITOPO_SUCCESS) {
        mpitopo__request_release(r);
        return rc;
    }
    *out = r;
    return MPITOPO_SUCCESS;
}

/* A request that ran no step (the blocking host call): back to the cache
 * or released. */
static void unused(mpitopo_request_t r)
{
    if (r->entry)
        mpitopo__cache_put_back(r);
    else
        mpitopo__request_release(r);
}

/*
 * A new schedule for this call: choose, build (build_for), and
 * keep it in the cache (not persistent ones: each _init call owns its
 * request). A schedule that took more than one block of tags cannot be
 * given new ones and is not cached.
 */
static int make(mpitopo__nbr_t *n, mpitopo__opkind_t op, mpitopo__sched_t req, const side_t *send,
                const side_t *recv, int form, mpitopo_request_t *out, int *sched,
                const char *func)
{
    mpitopo__choice_t c;
    long long sb, rb;
    int rc = block_sizes(op, send, recv, &sb, &rb, func);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__sched_choose(n, op, req, sb, rb, &c, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    mpitopo__sched_log(n, op, req, &c);
    int calls = n->tag_calls;
    mpitopo_request_t r = NULL; /* set by build_for on success */
    rc = build_for(n, NULL, send, recv, &c, op, form, &r, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    if (n->tag_calls == calls + 1) {
        r->tag_base = n->last_tag_base;
        r->tag_span = n->last_tag_span;
    }
    if (form != FORM_PERSISTENT && n->tag_calls <= calls + 1)
        mpitopo__cache_put(n, op, req, send, recv, r, c.sched);
    *out = r;
    *sched = c.sched;
    return MPITOPO_SUCCESS;
}

/* Run r (cached or new; schedule sched) in its form. */
static int go(mpitopo__nbr_t *n, mpitopo_request_t r, int sched, mpitopo__opkind_t op,
              const side_t *send, const side_t *recv, int form, mpitopo_request_t *request,
              const char *func)
{
    if (sched == MPITOPO__SCHED_MPI && form == FORM_BLOCKING) {
        int rc = mpitopo__nbr_settle(n);
        if (rc == MPITOPO_SUCCESS)
            rc = mpitopo__host_run(n, op, send, recv);
        unused(r);
        return rc == MPI_SUCCESS ? MPITOPO_SUCCESS : mpitopo__mpi_result(func, rc);
    }
    if (form == FORM_PERSISTENT) {
        *request = r;
        return MPITOPO_SUCCESS;
    }
    int rc = mpitopo__request_start(r);
    if (rc != MPITOPO_SUCCESS) {
        mpitopo__request_release(r);
        return rc;
    }
    if (form == FORM_BLOCKING)
        return mpitopo__request_wait(&r, func);
    *request = r;
    return MPITOPO_SUCCESS;
}

/* A schedule of mpitopo's (the exchanges: never cached), built and run. */
static int launch(mpitopo__nbr_t *n, const mpitopo__plan_t *p, side_t *send, side_t *recv,
                  int form, mpitopo_request_t *request, const char *func)
{
    mpitopo__choice_t c = {MPITOPO__SCHED_LINEAR, 0, 0, NULL};
    mpitopo_request_t r = NULL;
    int rc = build_for(n, p, send, recv, &c, MPITOPO__OPK_ALLTOALL, form, &r, func);
    return rc == MPITOPO_SUCCESS
               ? go(n, r, c.sched, MPITOPO__OPK_ALLTOALL, send, recv, form, request, func)
               : rc;
}

/*
 * The exchanges (no schedule choice, never cached): check, make sure the
 * private communicator exists, build the linear schedule that copies the
 * blocks to the calling process itself and complete it.
 */
static int exchange(side_t *send, side_t *recv, MPI_Comm comm, const char *func)
{
    mpitopo__nbr_t *n;
    int rc = checked_nbr(send, recv, comm, FORM_BLOCKING, NULL, &n, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    mpitopo__plan_t p = mpitopo__plan_of(n, 1);
    return launch(n, &p, send, recv, FORM_BLOCKING, NULL, func);
}

/* A handle that is neither MPI_INFO_NULL nor valid is an error; the key
 * "mpitopo_neighbor" chooses the schedule (mpitopo__sched_requested). */
static int check_info(MPI_Info info, const char *func)
{
    int nkeys, rc = info == MPI_INFO_NULL ? MPI_SUCCESS : PMPI_Info_get_nkeys(info, &nkeys);
    return rc == MPI_SUCCESS ? MPITOPO_SUCCESS
                             : MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "info is not valid");
}

/*
 * The checks of an _init call. Only a communicator that cannot carry
 * neighbour lists fails at once (every process has the same); everything
 * else this process finds wrong, and the schedule it asks for, is agreed
 * on by every process (mpitopo__sched_agree), so that a process with a bad
 * argument or another schedule never leaves the others building theirs.
 */
static int persistent_checks(side_t *send, side_t *recv, MPI_Comm comm, mpitopo_request_t *request,
                             MPI_Info info, mpitopo__opkind_t op, mpitopo__nbr_t **n,
                             mpitopo__sched_t *req, const char *func)
{
    int local = check_request(FORM_PERSISTENT, request, func);
    int rc = mpitopo__nbr_get(comm, func, n);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    long long sb = 0, rb = 0;
    if (local == MPITOPO_SUCCESS)
        local = check_side(send, (*n)->outdegree, func);
    if (local == MPITOPO_SUCCESS)
        local = check_side(recv, (*n)->indegree, func);
    if (local == MPITOPO_SUCCESS)
        local = check_info(info, func);
    if (local == MPITOPO_SUCCESS)
        local = mpitopo__sched_requested(*n, info, req, func);
    if (local == MPITOPO_SUCCESS)
        local = block_sizes(op, send, recv, &sb, &rb, func);
    return mpitopo__sched_agree(*n, op, *req, sb, rb, local, func);
}

/* An undecided auto _init call: every candidate built persistent, behind
 * one request that explores them by its starts (tune.c). Collective as
 * make is. */
static int explore_persistent(mpitopo__nbr_t *n, mpitopo__opkind_t op, const side_t *send,
                              const side_t *recv, const mpitopo__trial_t *trial,
                              mpitopo_request_t *request, const char *func)
{
    int ncand = 0, cand[MPITOPO__SCHED_MPI + 1];
    mpitopo_request_t shell = NULL;
    int rc = mpitopo__ptune_new(n, trial, &shell, &ncand, cand, func);
    for (int i = 0; i < ncand && rc == MPITOPO_SUCCESS; i++) {
        mpitopo_request_t r = NULL;
        int sched;
        rc = make(n, op, (mpitopo__sched_t)cand[i], send, recv, FORM_PERSISTENT, &r, &sched, func);
        if (rc == MPITOPO_SUCCESS)
            mpitopo__ptune_set(shell, i, r);
    }
    if (rc != MPITOPO_SUCCESS) {
        mpitopo__request_release(shell);
        return rc;
    }
    *request = shell;
    return MPITOPO_SUCCESS;
}

/* auto measured (tune.c): the schedule this call requests instead, and
 * whether it is a timed trial (blocking calls only; persistent ones take a
 * decision, nonblocking ones one that exists). */
static int tuned(mpitopo__nbr_t *n, mpitopo__opkind_t op, const side_t *send, const side_t *recv,
                 int form, mpitopo__sched_t *req, mpitopo__trial_t *trial, const char *func)
{
    long long sb, rb;
    int rc = block_sizes(op, send, recv, &sb, &rb, func);
    int how = form == FORM_BLOCKING ? 1 : form == FORM_PERSISTENT ? 2 : 0;
    return rc == MPITOPO_SUCCESS ? mpitopo__tune_pick(n, op, sb, rb, how, req, trial, func) : rc;
}

/* The five operations: check, take the cached schedule of an equal
 * earlier call or make one (info of an _init call first), run it. The
 * exchanges run exchange(). */
static int run(side_t *send, side_t *recv, MPI_Comm comm, int form, mpitopo_request_t *request,
               MPI_Info info, mpitopo__opkind_t op, const char *func)
{
    if (form == FORM_EXCHANGE)
        return exchange(send, recv, comm, func);
    mpitopo__nbr_t *n;
    mpitopo__sched_t req = MPITOPO__SCHED_AUTO;
    int rc = form == FORM_PERSISTENT ? persistent_checks(send, recv, comm, request, info, op, &n, &req, func)
                                     : checked_nbr(send, recv, comm, form, request, &n, func);
    if (rc == MPITOPO_SUCCESS && form != FORM_PERSISTENT)
        rc = mpitopo__sched_requested(n, info, &req, func);
    mpitopo__trial_t trial = {NULL, 0, 0};
    if (rc == MPITOPO_SUCCESS && req == MPITOPO__SCHED_AUTO)
        rc = tuned(n, op, send, recv, form, &req, &trial, func);
    if (rc == MPITOPO_SUCCESS && form == FORM_PERSISTENT && trial.entry)
        return explore_persistent(n, op, send, recv, &trial, request, func);
    mpitopo_request_t r = NULL;
    int sched = MPITOPO__SCHED_LINEAR;
    if (rc == MPITOPO_SUCCESS && form != FORM_PERSISTENT)
        rc = mpitopo__cache_get(n, op, req, send, recv, &r, &sched, func);
    if (rc == MPITOPO_SUCCESS && !r)
        rc = make(n, op, req, send, recv, form, &r, &sched, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    if (!trial.entry)
        return go(n, r, sched, op, send, recv, form, request, func);
    /* A timed trial: every process records it, whatever its call
     * returned, so that the rounds stay in step everywhere; a failed one
     * as failed, which stops its candidate everywhere. */
    double t0 = PMPI_Wtime();
    rc = go(n, r, sched, op, send, recv, form, request, func);
    int trc = mpitopo__tune_record(
        n, &trial, rc == MPITOPO_SUCCESS ? PMPI_Wtime() - t0 : MPITOPO__EXPLORE_FAILED, func);
    return rc != MPITOPO_SUCCESS ? rc : trc;
}

/* The sides of the five operations. */
static side_t side_scalar(int send, side_mode_t mode, const void *buf, int count,
                          MPI_Datatype type)
{
    return (side_t){.mode = mode, .which = send ? 1 : 2, .buf = buf, .count = count, .type = type,
                    .buf_name = send ? "sendbuf" : "recvbuf",
                    .count_name = mode_count_name(send, mode),
                    .type_name = send ? "sendtype" : "recvtype"};
}

static side_t side_v(int send, const void *buf, const int *counts, const int *displs,
                     MPI_Datatype type, const char *displs_name)
{
    return (side_t){.mode = SIDE_V, .which = send ? 1 : 2, .buf = buf, .counts = counts, .displs = displs,
                    .type = type, .buf_name = send ? "sendbuf" : "recvbuf",
                    .count_name = mode_count_name(send, SIDE_V), .displs_name = displs_name,
                    .type_name = send ? "sendtype" : "recvtype"};
}

static side_t side_w(int send, const void *buf, const int *counts, const MPI_Aint *displs,
                     const MPI_Datatype *types)
{
    return (side_t){.mode = SIDE_W, .which = send ? 1 : 2, .buf = buf, .counts = counts, .bdispls = displs,
                    .types = types, .buf_name = send ? "sendbuf" : "recvbuf",
                    .count_name = mode_count_name(send, SIDE_W),
                    .displs_name = send ? "sdispls" : "rdispls",
                    .type_name = send ? "sendtypes" : "recvtypes"};
}

static int allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                     MPI_Datatype rtype, MPI_Comm comm, mpitopo_request_t *req, int form, MPI_Info info,
                     const char *func)
{
    side_t s = side_scalar(1, SIDE_SAME, sbuf, scount, stype);
    side_t r = side_scalar(0, SIDE_BLOCK, rbuf, rcount, rtype);
    return run(&s, &r, comm, form, req, info, MPITOPO__OPK_ALLGATHER, func);
}

static int allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                      const int *rcounts, const int *displs, MPI_Datatype rtype, MPI_Comm comm,
                      mpitopo_request_t *req, int form, MPI_Info info, const char *func)
{
    side_t s = side_scalar(1, SIDE_SAME, sbuf, scount, stype);
    side_t r = side_v(0, rbuf, rcounts, displs, rtype, "displs");
    return run(&s, &r, comm, form, req, info, MPITOPO__OPK_ALLGATHERV, func);
}

static int alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                    MPI_Datatype rtype, MPI_Comm comm, mpitopo_request_t *req, int form, MPI_Info info,
                    const char *func)
{
    side_t s = side_scalar(1, SIDE_BLOCK, sbuf, scount, stype);
    side_t r = side_scalar(0, SIDE_BLOCK, rbuf, rcount, rtype);
    return run(&s, &r, comm, form, req, info, MPITOPO__OPK_ALLTOALL, func);
}

static int alltoallv(const void *sbuf, const int *scounts, const int *sdispls,
                     MPI_Datatype stype, void *rbuf, const int *rcounts, const int *rdispls,
                     MPI_Datatype rtype, MPI_Comm comm, mpitopo_request_t *req, int form, MPI_Info info,
                     const char *func)
{
    side_t s = side_v(1, sbuf, scounts, sdispls, stype, "sdispls");
    side_t r = side_v(0, rbuf, rcounts, rdispls, rtype, "rdispls");
    return run(&s, &r, comm, form, req, info, MPITOPO__OPK_ALLTOALLV, func);
}

static int alltoallw(const void *sbuf, const int *scounts, const MPI_Aint *sdispls,
                     const MPI_Datatype *stypes, void *rbuf, const int *rcounts,
                     const MPI_Aint *rdispls, const MPI_Datatype *rtypes, MPI_Comm comm,
                     mpitopo_request_t *req, int form, MPI_Info info, const char *func)
{
    side_t s = side_w(1, sbuf, scounts, sdispls, stypes);
    side_t r = side_w(0, rbuf, rcounts, rdispls, rtypes);
    return run(&s, &r, comm, form, req, info, MPITOPO__OPK_ALLTOALLW, func);
}

/* The entry points of the operations, three forms each: blocking,
 * nonblocking (a request) and persistent (an info and a request). */

int mpitopo_neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, NULL,
                     FORM_BLOCKING, MPI_INFO_NULL, __func__);
}

int mpitopo_ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                mpitopo_request_t *request)
{
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request,
                     FORM_NONBLOCKING, MPI_INFO_NULL, __func__);
}

int mpitopo_neighbor_allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                    void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                    MPI_Comm comm, MPI_Info info, mpitopo_request_t *request)
{
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request,
                     FORM_PERSISTENT, info, __func__);
}

int mpitopo_neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                void *recvbuf, const int recvcounts[], const int displs[],
                                MPI_Datatype recvtype, MPI_Comm comm)
{
    return allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                      NULL, FORM_BLOCKING, MPI_INFO_NULL, __func__);
}

int mpitopo_ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, const int recvcounts[], const int displs[],
                                 MPI_Datatype recvtype, MPI_Comm comm, mpitopo_request_t *request)
{
    return allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                      request, FORM_NONBLOCKING, MPI_INFO_NULL, __func__);
}

int mpitopo_neighbor_allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                     void *recvbuf, const int recvcounts[], const int displs[],
                                     MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                     mpitopo_request_t *request)
{
    return allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                      request, FORM_PERSISTENT, info, __func__);
}

int mpitopo_neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, NULL,
                    FORM_BLOCKING, MPI_INFO_NULL, __func__);
}

int mpitopo_ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                               mpitopo_request_t *request)
{
    return alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request,
                    FORM_NONBLOCKING, MPI_INFO_NULL, __func__);
}

int mpitopo_neighbor_alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                   void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                   MPI_Comm comm, MPI_Info info, mpitopo_request_t *request)
{
    return alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request,
                    FORM_PERSISTENT, info, __func__);
}

int mpitopo_neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                               MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                               const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                     recvtype, comm, NULL, FORM_BLOCKING, MPI_INFO_NULL, __func__);
}

int mpitopo_ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                mpitopo_request_t *request)
{
    return alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                     recvtype, comm, request, FORM_NONBLOCKING, MPI_INFO_NULL, __func__);
}

int mpitopo_neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[],
                                    const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                    const int recvcounts[], const int rdispls[],
                                    MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                    mpitopo_request_t *request)
{
    return alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                     recvtype, comm, request, FORM_PERSISTENT, info, __func__);
}

int mpitopo_neighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                               const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                               void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                               const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    return alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                     recvtypes, comm, NULL, FORM_BLOCKING, MPI_INFO_NULL, __func__);
}

int mpitopo_ineighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                                const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                                const MPI_Datatype recvtypes[], MPI_Comm comm,
                                mpitopo_request_t *request)
{
    return alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                     recvtypes, comm, request, FORM_NONBLOCKING, MPI_INFO_NULL, __func__);
}

int mpitopo_neighbor_alltoallw_init(const void *sendbuf, const int sendcounts[],
                                    const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                    void *recvbuf, const int recvcounts[],
                                    const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                    MPI_Comm comm, MPI_Info info, mpitopo_request_t *request)
{
    return alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                     recvtypes, comm, request, FORM_PERSISTENT, info, __func__);
}

/* The exchanges of "Topological Collectives for MPI-2" (section 2.1) are
 * thin forms of alltoall and alltoallv (FORM_EXCHANGE). */
int mpitopo_neighbor_xchg(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, NULL,
                    FORM_EXCHANGE, MPI_INFO_NULL, __func__);
}

int mpitopo_neighbor_xchgv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                           MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                     recvtype, comm, NULL, FORM_EXCHANGE, MPI_INFO_NULL, __func__);
}

static int shift_peers(const mpitopo__nbr_t *n, int direction, int disp, int *src, int *dst,
                       const char *func)
{
    if (n->kind != MPI_CART)
        return MPITOPO_FAIL_AS(MPI_ERR_TOPOLOGY, func,
                                 "comm has a %s topology; a Cartesian communicator is required",
                                 n->kind == MPI_GRAPH ? "graph" : "dist-graph");
    int ndims = n->indegree / 2;
    if (direction < 0 || direction >= ndims)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func,
                                 "direction = %d must be in [0, %d) (the number of dimensions)",
                                 direction, ndims);
    int rc = PMPI_Cart_shift(n->user_comm, direction, disp, src, dst);
    return rc == MPI_SUCCESS ? MPITOPO_SUCCESS : mpitopo__mpi_result(func, rc);
}

int mpitopo_cart_shift_xchg(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, int direction,
                            int disp, MPI_Comm comm)
{
    const char *func = __func__;
    side_t s = side_scalar(1, SIDE_BLOCK, sendbuf, sendcount, sendtype);
    side_t r = side_scalar(0, SIDE_BLOCK, recvbuf, recvcount, recvtype);
    mpitopo__nbr_t *n;
    int src, dst, rc = mpitopo__nbr_get(comm, func, &n);
    if (rc == MPITOPO_SUCCESS)
        rc = shift_peers(n, direction, disp, &src, &dst, func);
    if (rc == MPITOPO_SUCCESS)
        rc = check_side(&s, 1, func);
    if (rc == MPITOPO_SUCCESS)
        rc = check_side(&r, 1, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    mpitopo__plan_t p = {1, 1, &src, &dst, 1, 1};
    return launch(n, &p, &s, &r, FORM_BLOCKING, NULL, func);
}
