/*
 * The schedule engine: a request is a list of rounds of steps (messages on
 * the private communicator of its topology communicator, and local copies
 * to and from a request-owned temporary buffer). Round r+1 is posted when
 * round r has completed, inside mpitopo_test and mpitopo_wait (no progress
 * thread; see coll.h). Persistent requests are started again and again.
 */
#include "coll/coll_internal.h"

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

/* Stop a run: messages still in flight (after an error) are left to MPI. */
static void deactivate(mpitopo_request_t r)
{
    for (int i = 0; i < r->nops; i++)
        if (r->reqs[i] != MPI_REQUEST_NULL)
            PMPI_Request_free(&r->reqs[i]);
    dequeue(r);
    r->active = 0;
}

void mpitopo__request_release(mpitopo_request_t r)
{
    if (!r)
        return;
    deactivate(r);
    for (int i = 0; i < r->nowned; i++)
        PMPI_Type_free(&r->owned[i]);
    mpitopo__free(r->owned);
    mpitopo__nbr_unref(r->nbr);
    mpitopo__free(r->tmp);
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
    char *t = r->tmp + o->tmp_off;
    if (o->kind == MPITOPO__OP_MOVE) {
        memmove(t, r->tmp + o->src_off, (size_t)o->tmp_bytes);
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
    void *buf = o->in_tmp ? r->tmp + o->tmp_off : o->buf;
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
    for (int i = first; i < last && rc == MPITOPO_SUCCESS; i++)
        if (r->ops[i].kind > MPITOPO__OP_SEND)
            rc = copy_step(r, &r->ops[i]);
    for (int i = first; i < last && rc == MPITOPO_SUCCESS; i++)
        if (r->ops[i].kind == MPITOPO__OP_SEND || r->ops[i].kind == MPITOPO__OP_RECV)
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
    if (r->owned)
        return MPITOPO_SUCCESS;
    r->owned = mpitopo__malloc_array((size_t)(r->nops > 0 ? r->nops : 1), sizeof *r->owned);
    if (!r->owned)
        return MPITOPO_NOMEM("datatype duplicates");
    for (int i = 0; i < r->nops; i++) {
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

int mpitopo__request_start(mpitopo_request_t r)
{
    r->round = 0;
    r->posted = 0;
    r->error = MPITOPO_SUCCESS;
    r->active = 1;
    int ready, rc = kick(r->nbr, 0, &ready);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    if (ready)
        return r->nrounds > 0 ? post_round(r) : MPITOPO_SUCCESS;
    rc = mpitopo__request_own_datatypes(r);
    if (rc == MPITOPO_SUCCESS)
        enqueue(r);
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
        if (e == MPI_SUCCESS || e == MPI_ERR_PENDING || o->kind > MPITOPO__OP_SEND)
            continue;
        char text[MPI_MAX_ERROR_STRING] = "";
        int len = 0;
        if (PMPI_Error_string(e, text, &len) != MPI_SUCCESS)
            snprintf(text, sizeof text, "(no description)");
        return mpitopo__error_at(e, func, "MPI error %d %s neighbour rank %d: %s", e,
                                 o->kind == MPITOPO__OP_SEND ? "sending to" : "receiving from",
                                 o->peer, text);
    }
    return mpitopo__mpi_result(func, rc);
}

/* Run the request as far as it goes without blocking (blocking: to the
 * end). *done = 1 when every round has completed. */
static int advance(mpitopo_request_t r, int blocking, int *done, const char *func)
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

/* Advance *request; release it when done or failed (a persistent request
 * becomes inactive instead, unless release is set). */
static int finish(mpitopo_request_t *request, int blocking, int *flag, int release,
                  const char *func)
{
    if (!request)
        return mpitopo__error_at(MPITOPO_ERR_ARG, func, "request = NULL");
    mpitopo_request_t r = *request;
    int done = 1, rc = MPITOPO_SUCCESS;
    if (r && r->active)
        rc = advance(r, blocking, &done, func);
    if (flag)
        *flag = done;
    if (!r || !(done || rc != MPITOPO_SUCCESS || release))
        return rc;
    if (r->persistent && !release) {
        deactivate(r);
        return rc;
    }
    mpitopo__request_release(r);
    *request = MPITOPO_REQUEST_NULL;
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
        return mpitopo__error_at(MPITOPO_ERR_ARG, __func__, "flag = NULL");
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
        return mpitopo__error_at(MPITOPO_ERR_ARG, func, "%s[%d] = MPITOPO_REQUEST_NULL", what, i);
    if (!r->persistent)
        return mpitopo__error_at(MPITOPO_ERR_ARG, func,
                                 "%s[%d] is not a persistent request (made by an _init call)",
                                 what, i);
    if (r->active)
        return mpitopo__error_at(MPITOPO_ERR_ARG, func,
                                 "%s[%d] is still active (complete it before starting it again)",
                                 what, i);
    return MPITOPO_SUCCESS;
}

int mpitopo_start(mpitopo_request_t *request)
{
    if (!request)
        return mpitopo__error_at(MPITOPO_ERR_ARG, __func__, "request = NULL");
    int rc = check_startable(*request, "request", 0, __func__);
    return rc == MPITOPO_SUCCESS ? mpitopo__request_start(*request) : rc;
}

int mpitopo_startall(int count, mpitopo_request_t requests[])
{
    if (count < 0)
        return mpitopo__error_at(MPITOPO_ERR_ARG, __func__, "count = %d must be >= 0", count);
    if (count > 0 && !requests)
        return mpitopo__error_at(MPITOPO_ERR_ARG, __func__, "requests = NULL with count %d",
                                 count);
    /* Check every request first, so that none starts when one cannot. */
    for (int i = 0; i < count; i++) {
        int rc = check_startable(requests[i], "requests", i, __func__);
        for (int j = 0; j < i && rc == MPITOPO_SUCCESS; j++)
            if (requests[j] == requests[i])
                rc = mpitopo__error_at(MPITOPO_ERR_ARG, __func__,
                                       "requests[%d] and requests[%d] are the same request", j, i);
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
