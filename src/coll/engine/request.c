/*
 * The schedule engine: a request is a list of rounds of steps (messages on
 * the private communicator of its topology communicator, and local copies
 * to and from a request-owned temporary buffer). Round r+1 is posted when
 * round r has completed, inside mpitopo_test and mpitopo_wait (no progress
 * thread; see coll.h). Persistent requests are started again and again.
 */
#include "coll/coll_internal.h"

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

mpitopo_request_t mpitopo__request_new(mpitopo__nbr_t *nbr, int nops, int nrounds)
{
    mpitopo_request_t r = mpitopo__calloc(1, sizeof *r);
    if (!r)
        return NULL;
    size_t n = (size_t)(nops > 0 ? nops : 1);
    r->ops = mpitopo__calloc(n, sizeof *r->ops);
    r->reqs = mpitopo__malloc_array(n, sizeof *r->reqs);
    r->statuses = mpitopo__malloc_array(n, sizeof *r->statuses);
    r->round_start = mpitopo__calloc((size_t)nrounds + 1, sizeof *r->round_start);
    if (!r->ops || !r->reqs || !r->statuses || !r->round_start) {
        mpitopo__free(r->ops);
        mpitopo__free(r->reqs);
        mpitopo__free(r->statuses);
        mpitopo__free(r->round_start);
        mpitopo__free(r);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        r->reqs[i] = MPI_REQUEST_NULL;
    r->nops = nops;
    r->nrounds = nrounds;
    r->nbr = nbr;
    mpitopo__nbr_ref(nbr);
    return r;
}

static int started_post(mpitopo_request_t r, MPI_Request *q)
{
    MPI_Request *held = r->ctx;
    *q = *held;
    *held = MPI_REQUEST_NULL;
    return MPITOPO_SUCCESS;
}

static void started_free(void *ctx)
{
    MPI_Request *held = ctx;
    if (*held != MPI_REQUEST_NULL)
        PMPI_Request_free(held);
    mpitopo__free(held);
}

mpitopo_request_t mpitopo__request_host_step(mpitopo__nbr_t *nbr)
{
    mpitopo_request_t r = mpitopo__request_new(nbr, 1, 1);
    if (r) {
        r->ops[0] = (mpitopo__op_t){.kind = MPITOPO__OP_HOST, .type = MPI_BYTE};
        r->round_start[0] = 0;
        r->round_start[1] = 1;
    }
    return r;
}

mpitopo_request_t mpitopo__request_of_host(mpitopo__nbr_t *nbr, MPI_Request q)
{
    MPI_Request *held = mpitopo__malloc(sizeof *held);
    mpitopo_request_t r = held ? mpitopo__request_host_step(nbr) : NULL;
    if (!r) {
        mpitopo__free(held);
        return NULL;
    }
    *held = q;
    r->ctx = held;
    r->ctx_free = started_free;
    r->host_post = started_post;
    r->host_started = 1;
    return r;
}

int mpitopo__request_alloc_tmp(mpitopo_request_t r, size_t bytes)
{
    r->tmp = mpitopo__malloc(bytes > 0 ? bytes : 1);
    if (!r->tmp)
        return MPITOPO_NOMEM("temporary buffer");
    r->tmp_size = bytes;
    return MPITOPO_SUCCESS;
}

static void dequeue(mpitopo_request_t r)
{
    mpitopo__nbr_t *n = r->nbr;
    mpitopo_request_t *p = &n->queue_head, prev = NULL;
    while (*p && *p != r) {
        prev = *p;
        p = &(*p)->next_queued;
    }
    if (!*p)
        return;
    *p = r->next_queued;
    if (n->queue_tail == r)
        n->queue_tail = prev;
    r->next_queued = NULL;
    r->queued = 0;
}

int mpitopo__request_bufs(mpitopo_request_t r, int n)
{
    if (n <= 0)
        return MPITOPO_SUCCESS;
    r->bufs = mpitopo__calloc((size_t)n, sizeof *r->bufs);
    if (!r->bufs)
        return MPITOPO_NOMEM("growable buffers");
    r->nbufs = n;
    return MPITOPO_SUCCESS;
}

mpitopo__rbuf_t *mpitopo__request_buf(mpitopo_request_t r, int id, size_t bytes)
{
    if (id < 1 || id > r->nbufs)
        return NULL;
    mpitopo__rbuf_t *b = &r->bufs[id - 1];
    if (b->p && b->cap >= bytes)
        return b;
    size_t cap = b->cap * 2 > bytes ? b->cap * 2 : bytes;
    char *p = mpitopo__realloc(b->p, cap > 0 ? cap : 1);
    if (!p)
        return NULL;
    b->p = p;
    b->cap = cap;
    return b;
}

/* Where a step's tmp_off points: the temporary buffer or a growable one. */
static char *area(mpitopo_request_t r, const mpitopo__op_t *o)
{
    return o->buf_id > 0 ? r->bufs[o->buf_id - 1].p : r->tmp;
}

static int is_message(int kind)
{
    return kind == MPITOPO__OP_SEND || kind == MPITOPO__OP_RECV || kind == MPITOPO__OP_RECV_ANY ||
           kind == MPITOPO__OP_HOST;
}

/*
 * Active multi-round requests of the process, on every communicator. A
 * process can only post round r+1 of a request from inside a test or
 * wait, so a wait on one request must also move every other on: otherwise
 * two processes waiting for two overlapping operations (on one
 * communicator or on two) in opposite orders would each wait for a round
 * the other has not posted. One lock guards the list; a request is
 * advanced by one thread at a time (busy), and a thread that finds it
 * busy leaves it to the other.
 */
static pthread_mutex_t active_lock = PTHREAD_MUTEX_INITIALIZER;
static mpitopo_request_t active_head;
static atomic_int nactive;

/* Requests of one round are listed only while queued: their round is
 * posted by whichever wait or test finds the private communicator ready. */
static void list_add(mpitopo_request_t r)
{
    if (r->listed || (r->nrounds < 2 && !r->queued))
        return;
    pthread_mutex_lock(&active_lock);
    r->prev_active = NULL;
    r->next_active = active_head;
    if (active_head)
        active_head->prev_active = r;
    active_head = r;
    r->listed = 1;
    atomic_fetch_add(&nactive, 1);
    pthread_mutex_unlock(&active_lock);
}

static void list_del(mpitopo_request_t r)
{
    if (!r->listed)
        return;
    pthread_mutex_lock(&active_lock);
    if (r->prev_active)
        r->prev_active->next_active = r->next_active;
    else
        active_head = r->next_active;
    if (r->next_active)
        r->next_active->prev_active = r->prev_active;
    r->prev_active = r->next_active = NULL;
    r->listed = 0;
    atomic_fetch_sub(&nactive, 1);
    pthread_mutex_unlock(&active_lock);
}

/* How long a failed round's pending receives may take to arrive. */
#define DRAIN_SECONDS 2.0

/*
 * Messages still pending when a request stops (a round failed: one
 * message's error ends MPI_Waitall with the others pending). A receive
 * left posted would write into the caller's buffer after the call
 * returned (the sanitizer build caught one writing into memory freed
 * meanwhile); cancelled at once, its message would arrive unmatched and
 * spoil the next operation on the communicator. So the receives are given
 * DRAIN_SECONDS to complete (their senders posted them in the same round),
 * then the rest are cancelled; both end before the call returns. A send
 * only reads, and waiting for it could hang when its receiver failed: it
 * is freed.
 */
static void drain(mpitopo_request_t r, int n)
{
    int first = r->round < r->nrounds ? r->round_start[r->round] : 0, pending = 0, done = 0;
    for (int i = 0; i < n; i++) {
        if (r->reqs[i] == MPI_REQUEST_NULL)
            continue;
        int kind = first + i < r->nops ? r->ops[first + i].kind : MPITOPO__OP_SEND;
        if (kind == MPITOPO__OP_RECV || kind == MPITOPO__OP_RECV_ANY)
            pending++;
        else
            PMPI_Request_free(&r->reqs[i]);
    }
    /* One at a time: a receive that fails (truncated too) is complete. */
    for (double t0 = PMPI_Wtime(); pending > done && PMPI_Wtime() - t0 < DRAIN_SECONDS; sched_yield())
        for (int i = 0; i < n; i++) {
            int flag = 0;
            if (r->reqs[i] != MPI_REQUEST_NULL && PMPI_Test(&r->reqs[i], &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
                flag = 1;
            if (flag && r->reqs[i] != MPI_REQUEST_NULL)
                PMPI_Request_free(&r->reqs[i]); /* failed, complete: not freed by MPI_Test */
            done += flag;
        }
    for (int i = 0; i < n; i++)
        if (r->reqs[i] != MPI_REQUEST_NULL) {
            PMPI_Cancel(&r->reqs[i]);
            PMPI_Wait(&r->reqs[i], MPI_STATUS_IGNORE);
        }
}

static void deactivate(mpitopo_request_t r)
{
    list_del(r);
    int n = 0;
    for (int i = 0; i < r->nops; i++)
        if (r->reqs[i] != MPI_REQUEST_NULL)
            n = i + 1;
    if (n > 0)
        drain(r, n);
    dequeue(r);
    r->active = 0;
}

void mpitopo__request_release(mpitopo_request_t r)
{
    if (!r)
        return;
    if (r->entry)
        mpitopo__cache_forget(r);
    deactivate(r);
    for (int i = 0; i < r->nowned; i++)
        PMPI_Type_free(&r->owned[i]);
    mpitopo__free(r->owned);
    mpitopo__nbr_unref(r->nbr);
    mpitopo__free(r->tmp);
    for (int i = 0; i < r->nbufs; i++)
        mpitopo__free(r->bufs[i].p);
    mpitopo__free(r->bufs);
    if (r->ctx_free)
        r->ctx_free(r->ctx);
    mpitopo__free(r->ops);
    mpitopo__free(r->reqs);
    mpitopo__free(r->statuses);
    mpitopo__free(r->round_start);
    mpitopo__free(r);
}

/* Copies use MPI_COMM_SELF: the data never leaves the process, and the
 * user's communicator may be freed while a request is pending. */
static int copy_step(mpitopo_request_t r, const mpitopo__op_t *o)
{
    int pos = 0, rc;
    if (o->kind == MPITOPO__OP_CALL)
        return o->call(r, o->arg);
    char *t = area(r, o) + o->tmp_off;
    if (o->kind == MPITOPO__OP_MOVE) {
        memmove(t, area(r, o) + o->src_off, (size_t)o->tmp_bytes);
        return MPITOPO_SUCCESS;
    }
    if (o->kind == MPITOPO__OP_PACK)
        rc = PMPI_Pack(o->buf, o->count, o->type, t, o->tmp_bytes, &pos, MPI_COMM_SELF);
    else
        rc = PMPI_Unpack(t, o->tmp_bytes, &pos, o->buf, o->count, o->type, MPI_COMM_SELF);
    if (rc != MPI_SUCCESS)
        return mpitopo__mpi_result(o->kind == MPITOPO__OP_PACK ? "MPI_Pack" : "MPI_Unpack", rc);
    return MPITOPO_SUCCESS;
}

static int post_message(mpitopo_request_t r, const mpitopo__op_t *o, MPI_Request *q)
{
    MPI_Comm comm = r->nbr->comm;
    if (o->kind == MPITOPO__OP_HOST)
        return r->host_post(r, q);
    if (o->kind == MPITOPO__OP_RECV_ANY) {
        *q = MPI_REQUEST_NULL; /* matched and received by match_unknown */
        return MPITOPO_SUCCESS;
    }
    void *buf = o->in_tmp ? area(r, o) + o->tmp_off : o->buf;
    int rc = o->kind == MPITOPO__OP_SEND
                 ? PMPI_Isend(buf, o->count, o->type, o->peer, o->tag, comm, q)
                 : PMPI_Irecv(buf, o->count, o->type, o->peer, o->tag, comm, q);
    if (rc != MPI_SUCCESS)
        return mpitopo__mpi_result(o->kind == MPITOPO__OP_SEND ? "MPI_Isend" : "MPI_Irecv", rc);
    r->nbr->sends += o->kind == MPITOPO__OP_SEND;
    return MPITOPO_SUCCESS;
}

/* Copies first, then messages (see coll_internal.h). */
static int post_round(mpitopo_request_t r)
{
    int first = r->round_start[r->round], last = r->round_start[r->round + 1];
    int rc = MPITOPO_SUCCESS;
    for (int i = first; i < last; i++) {
        r->reqs[i - first] = MPI_REQUEST_NULL;
        r->ops[i].waiting = r->ops[i].kind == MPITOPO__OP_RECV_ANY;
    }
    for (int i = first; i < last && rc == MPITOPO_SUCCESS; i++)
        if (!is_message(r->ops[i].kind))
            rc = copy_step(r, &r->ops[i]);
    for (int i = first; i < last && rc == MPITOPO_SUCCESS; i++)
        if (is_message(r->ops[i].kind))
            rc = post_message(r, &r->ops[i], &r->reqs[i - first]);
    r->posted = rc == MPITOPO_SUCCESS;
    return rc;
}

static int is_named(MPI_Datatype t, int *named)
{
    int ni, na, nd, combiner;
    int rc = PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
    *named = rc == MPI_SUCCESS && combiner == MPI_COMBINER_NAMED;
    return rc;
}

int mpitopo__request_own_datatypes(mpitopo_request_t r)
{
    if (r->nops == 1 && r->ops[0].kind == MPITOPO__OP_HOST)
        return r->host_own_types ? r->host_own_types(r) : MPITOPO_SUCCESS;
    if (r->owned)
        return MPITOPO_SUCCESS;
    r->owned = mpitopo__malloc_array((size_t)(r->nops > 0 ? r->nops : 1), sizeof *r->owned);
    if (!r->owned)
        return MPITOPO_NOMEM("datatype duplicates");
    for (int i = 0; i < r->nops; i++) {
        int k = r->ops[i].kind;
        if (k == MPITOPO__OP_RECV_ANY || k == MPITOPO__OP_CALL || k == MPITOPO__OP_HOST)
            continue;
        int named, rc = is_named(r->ops[i].type, &named);
        if (rc == MPI_SUCCESS && !named)
            rc = PMPI_Type_dup(r->ops[i].type, &r->owned[r->nowned]);
        if (rc != MPI_SUCCESS)
            return mpitopo__mpi_result("MPI_Type_dup", rc);
        if (!named)
            r->ops[i].type = r->owned[r->nowned++];
    }
    return MPITOPO_SUCCESS;
}

/* Post the first round of every queued request, in start order; an error
 * stays with its request and is reported by its test or wait. */
static void flush_queue(mpitopo__nbr_t *n)
{
    while (n->queue_head) {
        mpitopo_request_t r = n->queue_head;
        dequeue(r);
        if (r->nrounds > 0)
            r->error = post_round(r);
    }
}

/* Flush the queue if the private communicator is ready (blocking: make it
 * ready first). */
static int kick(mpitopo__nbr_t *n, int blocking, int *ready)
{
    *ready = 1;
    int rc = blocking ? mpitopo__nbr_private_comm(n, 1) : mpitopo__nbr_private_ready(n, ready);
    if (rc != MPI_SUCCESS)
        return mpitopo__mpi_result("MPI_Comm_idup", rc);
    if (*ready)
        flush_queue(n);
    return MPITOPO_SUCCESS;
}

int mpitopo__nbr_settle(mpitopo__nbr_t *n)
{
    int ready;
    return kick(n, 1, &ready);
}

static void enqueue(mpitopo_request_t r)
{
    mpitopo__nbr_t *n = r->nbr;
    r->next_queued = NULL;
    if (n->queue_tail)
        n->queue_tail->next_queued = r;
    else
        n->queue_head = r;
    n->queue_tail = r;
    r->queued = 1;
}

/* A request that runs one of its own (pick): start that one. */
static int start_inner(mpitopo_request_t r)
{
    mpitopo_request_t in = NULL;
    int rc = r->pick(r, &in);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    r->inner = in;
    r->active = 1;
    r->started_at = PMPI_Wtime();
    rc = mpitopo__request_start(in);
    if (rc != MPITOPO_SUCCESS) {
        r->done(r, 0, rc);
        r->inner = NULL;
        r->active = 0;
    }
    return rc;
}

int mpitopo__request_start(mpitopo_request_t r)
{
    if (r->pick)
        return start_inner(r);
    r->round = 0;
    r->posted = 0;
    r->error = MPITOPO_SUCCESS;
    r->active = 1;
    if (r->host_started) { /* started by the host MPI already: nothing to wait for */
        list_add(r);
        return post_round(r);
    }
    int ready, rc = kick(r->nbr, 0, &ready);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    if (ready) {
        list_add(r);
        return r->nrounds > 0 ? post_round(r) : MPITOPO_SUCCESS;
    }
    rc = mpitopo__request_own_datatypes(r);
    if (rc == MPITOPO_SUCCESS) {
        enqueue(r);
        list_add(r);
    }
    return rc;
}

/* The first failing message of the current round, for the error message. */
static int round_error(mpitopo_request_t r, int rc, const char *func)
{
    if (rc != MPI_ERR_IN_STATUS)
        return mpitopo__mpi_result(func, rc);
    int first = r->round_start[r->round], n = r->round_start[r->round + 1] - first;
    for (int i = 0; i < n; i++) {
        int e = r->statuses[i].MPI_ERROR;
        const mpitopo__op_t *o = &r->ops[first + i];
        if (e == MPI_SUCCESS || e == MPI_ERR_PENDING || !is_message(o->kind))
            continue;
        char text[MPI_MAX_ERROR_STRING] = "";
        int len = 0;
        if (PMPI_Error_string(e, text, &len) != MPI_SUCCESS)
            snprintf(text, sizeof text, "(no description)");
        return MPITOPO_FAIL_AS(e, func, "MPI error %d %s neighbour rank %d: %s", e,
                                 o->kind == MPITOPO__OP_SEND ? "sending to" : "receiving from",
                                 o->peer, text);
    }
    return mpitopo__mpi_result(func, rc);
}

/*
 * Match the receives of unknown size of the current round that are still
 * waiting (blocking: wait for each) and post their receives; *left: how
 * many still wait. A matched message is received at once with
 * MPI_Imrecv, so no other receive can take it.
 */
static int match_unknown(mpitopo_request_t r, int blocking, int *left, const char *func)
{
    int first = r->round_start[r->round], last = r->round_start[r->round + 1];
    *left = 0;
    for (int i = first; i < last; i++) {
        mpitopo__op_t *o = &r->ops[i];
        if (o->kind != MPITOPO__OP_RECV_ANY || !o->waiting)
            continue;
        MPI_Message msg;
        MPI_Status st;
        int flag = 1, count = 0;
        int rc = blocking ? PMPI_Mprobe(o->peer, o->tag, r->nbr->comm, &msg, &st)
                          : PMPI_Improbe(o->peer, o->tag, r->nbr->comm, &flag, &msg, &st);
        if (rc != MPI_SUCCESS)
            return mpitopo__mpi_result(blocking ? "MPI_Mprobe" : "MPI_Improbe", rc);
        if (!flag) {
            (*left)++;
            continue;
        }
        rc = PMPI_Get_count(&st, MPI_BYTE, &count);
        if (rc != MPI_SUCCESS || count < 0)
            return MPITOPO_FAIL_AS(rc != MPI_SUCCESS ? rc : MPI_ERR_COUNT, func,
                                     "cannot size the message from neighbour rank %d", o->peer);
        mpitopo__rbuf_t *b = mpitopo__request_buf(r, o->buf_id, (size_t)count);
        if (!b) { /* the message is matched: consume it, then fail */
            PMPI_Mrecv(NULL, 0, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
            return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func,
                                     "out of memory for a %d-byte message from rank %d", count,
                                     o->peer);
        }
        b->len = (size_t)count;
        rc = PMPI_Imrecv(b->p, count, MPI_BYTE, &msg, &r->reqs[i - first]);
        if (rc != MPI_SUCCESS)
            return mpitopo__mpi_result("MPI_Imrecv", rc);
        o->waiting = 0;
    }
    return MPITOPO_SUCCESS;
}

/* Run the request as far as it goes without blocking (blocking: to the
 * end). *done = 1 when every round has completed. */
static int advance_one(mpitopo_request_t r, int blocking, int *done, const char *func)
{
    *done = 0;
    if (r->queued) {
        int ready, rc = kick(r->nbr, blocking, &ready);
        if (rc != MPITOPO_SUCCESS)
            return mpitopo__mpi_result(func, rc);
        if (r->queued)
            return MPITOPO_SUCCESS;
    }
    if (r->error != MPITOPO_SUCCESS)
        return r->error;
    while (r->round < r->nrounds) {
        int rc = r->posted ? MPITOPO_SUCCESS : post_round(r);
        if (rc != MPITOPO_SUCCESS)
            return rc;
        int left = 0;
        rc = match_unknown(r, blocking, &left, func);
        if (rc != MPITOPO_SUCCESS || left > 0)
            return rc;
        int n = r->round_start[r->round + 1] - r->round_start[r->round], flag = 1;
        rc = blocking ? PMPI_Waitall(n, r->reqs, r->statuses)
                      : PMPI_Testall(n, r->reqs, &flag, r->statuses);
        if (rc != MPI_SUCCESS)
            return round_error(r, rc, func);
        if (!flag)
            return MPITOPO_SUCCESS;
        r->posted = 0;
        r->round++;
    }
    *done = 1;
    return MPITOPO_SUCCESS;
}

/* Advance q without blocking unless another thread is advancing it; an
 * error stays with q, for its own test or wait. */
static void nudge(mpitopo_request_t q, const char *func)
{
    int idle = 0, done;
    if (!q->active || q->error != MPITOPO_SUCCESS || (!q->queued && q->round >= q->nrounds) ||
        !atomic_compare_exchange_strong(&q->busy, &idle, 1))
        return;
    int rc = advance_one(q, 0, &done, func);
    if (rc != MPITOPO_SUCCESS)
        q->error = rc;
    atomic_store(&q->busy, 0);
}

/* Move every other active request of the process on (r may be NULL). */
static void progress_others(mpitopo_request_t r, const char *func)
{
    if (atomic_load(&nactive) == 0)
        return;
    pthread_mutex_lock(&active_lock);
    for (mpitopo_request_t q = active_head; q; q = q->next_active)
        if (q != r)
            nudge(q, func);
    pthread_mutex_unlock(&active_lock);
}

void mpitopo__progress_all(void)
{
    progress_others(NULL, "mpitopo_progress");
}

int mpitopo_progress(void)
{
    mpitopo__progress_all();
    return MPITOPO_SUCCESS;
}

static int others_active(mpitopo_request_t r)
{
    int n = atomic_load(&nactive);
    return n > 1 || (n == 1 && !r->listed);
}

/* advance_one, moving the other active requests on too; blocking with
 * others active polls all of them (yielding the processor between polls)
 * instead of blocking in MPI on this one's messages. */
static int advance(mpitopo_request_t r, int blocking, int *done, const char *func)
{
    if (!blocking || !others_active(r)) {
        int rc = advance_one(r, blocking, done, func);
        if (!blocking && !*done)
            progress_others(r, func);
        return rc;
    }
    for (;;) {
        int rc = advance_one(r, 0, done, func);
        if (rc != MPITOPO_SUCCESS || *done)
            return rc;
        progress_others(r, func);
        sched_yield();
    }
}

/* Advance *request; release it when done or failed (a persistent request
 * becomes inactive instead, unless release is set). */
static int finish(mpitopo_request_t *request, int blocking, int *flag, int release,
                  const char *func)
{
    if (!request)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "request = NULL");
    mpitopo_request_t r = *request;
    int done = 1, rc = MPITOPO_SUCCESS;
    if (r && r->active && r->inner) {
        /* Persistent, so the inner request is made inactive, not freed. */
        mpitopo_request_t in = r->inner;
        rc = finish(&in, blocking, &done, 0, func);
        if (done || rc != MPITOPO_SUCCESS) {
            r->done(r, PMPI_Wtime() - r->started_at, rc);
            r->inner = NULL;
            r->active = 0;
        }
    } else if (r && r->active) {
        /* Another thread's progress pass may be on r this moment. */
        int idle = 0;
        while (!atomic_compare_exchange_weak(&r->busy, &idle, 1)) {
            idle = 0;
            sched_yield();
        }
        rc = advance(r, blocking, &done, func);
        atomic_store(&r->busy, 0);
    }
    if (flag)
        *flag = done;
    if (!r || !(done || rc != MPITOPO_SUCCESS || release))
        return rc;
    if (r->persistent && !release) {
        deactivate(r);
        return rc;
    }
    *request = MPITOPO_REQUEST_NULL;
    if (r->entry && rc == MPITOPO_SUCCESS) {
        deactivate(r);
        mpitopo__cache_put_back(r);
        return rc;
    }
    /* Not cached (persistent, a schedule of several tag blocks) or failed:
     * released here (a failed cached one leaves the cache first). */
    mpitopo__request_release(r);
    return rc;
}

int mpitopo__request_wait(mpitopo_request_t *request, const char *func)
{
    return finish(request, 1, NULL, 0, func);
}

int mpitopo_wait(mpitopo_request_t *request)
{
    return finish(request, 1, NULL, 0, __func__);
}

int mpitopo_test(mpitopo_request_t *request, int *flag)
{
    if (!flag)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "flag = NULL");
    *flag = 0;
    return finish(request, 0, flag, 0, __func__);
}

int mpitopo_request_free(mpitopo_request_t *request)
{
    return finish(request, 1, NULL, 1, __func__);
}

static int check_startable(mpitopo_request_t r, const char *what, int i, const char *func)
{
    if (!r)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "%s[%d] = MPITOPO_REQUEST_NULL", what, i);
    if (!r->persistent)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func,
                                 "%s[%d] is not a persistent request (made by an _init call)",
                                 what, i);
    if (r->active)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func,
                                 "%s[%d] is still active (complete it before starting it again)",
                                 what, i);
    return MPITOPO_SUCCESS;
}

int mpitopo_start(mpitopo_request_t *request)
{
    if (!request)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "request = NULL");
    int rc = check_startable(*request, "request", 0, __func__);
    return rc == MPITOPO_SUCCESS ? mpitopo__request_start(*request) : rc;
}

int mpitopo_startall(int count, mpitopo_request_t requests[])
{
    if (count < 0)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "count = %d must be >= 0", count);
    if (count > 0 && !requests)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "requests = NULL with count %d",
                                 count);
    /* Check every request first, so that none starts when one cannot. */
    for (int i = 0; i < count; i++) {
        int rc = check_startable(requests[i], "requests", i, __func__);
        for (int j = 0; j < i && rc == MPITOPO_SUCCESS; j++)
            if (requests[j] == requests[i])
                rc = MPITOPO_FAIL(MPITOPO_ERR_ARG, "requests[%d] and requests[%d] are the same request", j, i);
        if (rc != MPITOPO_SUCCESS)
            return rc;
    }
    for (int i = 0; i < count; i++) {
        int rc = mpitopo__request_start(requests[i]);
        if (rc != MPITOPO_SUCCESS)
            return rc;
    }
    return MPITOPO_SUCCESS;
}

/* ---- The v and w forms ---- */

int mpitopo__parts_parse(const char *m, size_t len, int nparts, MPI_Aint *offs)
{
    size_t at = (size_t)nparts * sizeof(int);
    if (len < at)
        return 0;
    for (int j = 0; j < nparts; j++) {
        int sz;
        memcpy(&sz, m + (size_t)j * sizeof sz, sizeof sz);
        if (sz < 0 || (size_t)sz > len - at)
            return 0;
        offs[j] = (MPI_Aint)at;
        at += (size_t)sz;
    }
    offs[nparts] = (MPI_Aint)at;
    return at == len;
}

int mpitopo__slot_bytes(const side_t *s, int degree, int *bytes, const char *schedule,
                        const char *func)
{
    long long total = 0;
    int slots = s->mode == SIDE_SAME ? (degree > 0 ? 1 : 0) : degree;
    for (int i = 0; i < slots; i++) {
        int size, rc = PMPI_Type_size(mpitopo__slot_type(s, i), &size);
        if (rc != MPI_SUCCESS)
            return mpitopo__mpi_result(func, rc);
        long long v = (long long)size * mpitopo__slot_count(s, i);
        total += v;
        if (total > INT_MAX / 4)
            return MPITOPO_FAIL_AS(MPITOPO_ERR_UNSUPPORTED, func,
                                     "%s of %lld bytes in all are too large for the %s "
                                     "schedule (use the linear schedule)",
                                     s->count_name, total, schedule);
        bytes[i] = (int)v;
    }
    return MPITOPO_SUCCESS;
}
