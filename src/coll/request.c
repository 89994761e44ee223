/*
 * The schedule engine: a request is a list of rounds of point-to-point
 * messages on the private communicator of its topology communicator.
 * Round r+1 is posted when round r has completed, inside mpitopo_test and
 * mpitopo_wait (no progress thread; see coll.h).
 */
#include "coll/coll_internal.h"

#include <stdio.h>

mpitopo_request_t mpitopo__request_new(mpitopo__nbr_t *nbr, int nops, int nrounds)
{
    mpitopo_request_t r = mpitopo__calloc(1, sizeof *r);
    if (!r)
        return NULL;
    size_t n = (size_t)(nops > 0 ? nops : 1);
    r->ops = mpitopo__malloc_array(n, sizeof *r->ops);
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

void mpitopo__request_release(mpitopo_request_t r)
{
    if (!r)
        return;
    /* Messages of a failed round still in flight are left to MPI. */
    for (int i = 0; i < r->nops; i++)
        if (r->reqs[i] != MPI_REQUEST_NULL)
            PMPI_Request_free(&r->reqs[i]);
    for (int i = 0; i < r->nowned; i++)
        PMPI_Type_free(&r->owned[i]);
    mpitopo__free(r->owned);
    mpitopo__nbr_unref(r->nbr);
    mpitopo__free(r->ops);
    mpitopo__free(r->reqs);
    mpitopo__free(r->statuses);
    mpitopo__free(r->round_start);
    mpitopo__free(r);
}

static int post_round(mpitopo_request_t r)
{
    MPI_Comm comm = r->nbr->comm;
    int first = r->round_start[r->round], last = r->round_start[r->round + 1];
    for (int i = first; i < last; i++) {
        const mpitopo__op_t *o = &r->ops[i];
        MPI_Request *q = &r->reqs[i - first];
        int rc = o->is_send ? PMPI_Isend(o->buf, o->count, o->type, o->peer, o->tag, comm, q)
                            : PMPI_Irecv(o->buf, o->count, o->type, o->peer, o->tag, comm, q);
        if (rc != MPI_SUCCESS)
            return mpitopo__mpi_result(o->is_send ? "MPI_Isend" : "MPI_Irecv", rc);
    }
    r->posted = 1;
    return MPI_SUCCESS;
}

static int is_named(MPI_Datatype t, int *named)
{
    int ni, na, nd, combiner;
    int rc = PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
    *named = rc == MPI_SUCCESS && combiner == MPI_COMBINER_NAMED;
    return rc;
}

/* Posting is deferred: hold duplicates of the derived datatypes, so that
 * the caller may free its own as soon as the starting call returns. */
static int own_datatypes(mpitopo_request_t r)
{
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

int mpitopo__request_start(mpitopo_request_t r)
{
    int ready, rc = mpitopo__nbr_private_ready(r->nbr, &ready);
    if (rc != MPI_SUCCESS)
        return mpitopo__mpi_result("MPI_Comm_idup", rc);
    return ready ? post_round(r) : own_datatypes(r);
}

/* The first failing message of the current round, for the error message. */
static int round_error(mpitopo_request_t r, int rc, const char *func)
{
    if (rc != MPI_ERR_IN_STATUS)
        return mpitopo__mpi_result(func, rc);
    int first = r->round_start[r->round], n = r->round_start[r->round + 1] - first;
    for (int i = 0; i < n; i++) {
        int e = r->statuses[i].MPI_ERROR;
        if (e == MPI_SUCCESS || e == MPI_ERR_PENDING)
            continue;
        const mpitopo__op_t *o = &r->ops[first + i];
        char text[MPI_MAX_ERROR_STRING] = "";
        int len = 0;
        if (PMPI_Error_string(e, text, &len) != MPI_SUCCESS)
            snprintf(text, sizeof text, "(no description)");
        return mpitopo__error_at(e, func, "MPI error %d %s neighbour rank %d: %s", e,
                                 o->is_send ? "sending to" : "receiving from", o->peer, text);
    }
    return mpitopo__mpi_result(func, rc);
}

/* Run the request as far as it goes without blocking (blocking: to the
 * end). *done = 1 when every round has completed. */
static int advance(mpitopo_request_t r, int blocking, int *done, const char *func)
{
    int rc = MPI_SUCCESS;
    while (r->round < r->nrounds) {
        if (!r->posted) {
            int ready = 1;
            rc = blocking ? mpitopo__nbr_private_comm(r->nbr, 1)
                          : mpitopo__nbr_private_ready(r->nbr, &ready);
            if (rc != MPI_SUCCESS)
                return mpitopo__mpi_result(func, rc);
            if (!ready)
                break;
            if ((rc = post_round(r)) != MPI_SUCCESS)
                return rc;
        }
        int n = r->round_start[r->round + 1] - r->round_start[r->round], flag = 1;
        rc = blocking ? PMPI_Waitall(n, r->reqs, r->statuses)
                      : PMPI_Testall(n, r->reqs, &flag, r->statuses);
        if (rc != MPI_SUCCESS)
            return round_error(r, rc, func);
        if (!flag)
            break;
        r->posted = 0;
        r->round++;
    }
    *done = r->round == r->nrounds;
    return MPITOPO_SUCCESS;
}

static int finish(mpitopo_request_t *request, int blocking, int *flag, const char *func)
{
    if (!request)
        return mpitopo__error_at(MPITOPO_ERR_ARG, func, "request = NULL");
    int done = 1, rc = MPITOPO_SUCCESS;
    if (*request)
        rc = advance(*request, blocking, &done, func);
    if (flag)
        *flag = done;
    if (done || rc != MPITOPO_SUCCESS) {
        mpitopo__request_release(*request);
        *request = MPITOPO_REQUEST_NULL;
    }
    return rc;
}

int mpitopo__request_wait(mpitopo_request_t *request, const char *func)
{
    return finish(request, 1, NULL, func);
}

int mpitopo_wait(mpitopo_request_t *request)
{
    return finish(request, 1, NULL, __func__);
}

int mpitopo_test(mpitopo_request_t *request, int *flag)
{
    if (!flag)
        return mpitopo__error_at(MPITOPO_ERR_ARG, __func__, "flag = NULL");
    *flag = 0;
    return finish(request, 0, flag, __func__);
}

int mpitopo_request_free(mpitopo_request_t *request)
{
    return finish(request, 1, NULL, __func__);
}
