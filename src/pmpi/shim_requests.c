/*
 * libmpitopo_shim, the requests of routed nonblocking and persistent
 * neighbourhood collectives (shim_neighbor.c starts them).
 *
 * An mpitopo request is not an MPI_Request: it is a schedule of messages on
 * a private communicator whose later rounds (and, while the private
 * communicator is being duplicated, even the first) are posted only by
 * mpitopo_test / mpitopo_wait. A generalized request would be an
 * MPI_Request, but MPI never runs the library's code while waiting on one.
 * So the program gets a real, cheap MPI request as the handle: a
 * PMPI_Recv_init from MPI_PROC_NULL, which completes as soon as it is
 * started and stays allocated until freed (a PMPI_Irecv from MPI_PROC_NULL
 * would not do: Open MPI returns one shared request for all of them).
 *   nonblocking  started at once; freed (MPI_REQUEST_NULL) on completion;
 *   persistent   started by MPI_Start with the schedule, made inactive on
 *                completion, freed by MPI_Request_free;
 * and a table maps the handle (its bytes: a pointer in Open MPI, an int in
 * MPICH) to the mpitopo request. The shim defines the calls that complete,
 * start, free or inspect requests:
 *   MPI_Wait, MPI_Waitall, MPI_Waitany, MPI_Waitsome, MPI_Test,
 *   MPI_Testall, MPI_Testany, MPI_Testsome, MPI_Request_get_status,
 *   MPI_Request_free, MPI_Start, MPI_Startall, MPI_Cancel
 * (their code is in mpitopo__shim_wait, ..., which their C bindings call,
 * and their Fortran bindings with handles converted by shim_fortran.c; the
 * bindings are generated from bindings.def).
 * For a handle in the table the schedule is completed (or tested) first,
 * and only then does the PMPI call complete the handle itself, so the
 * program sees MPI's semantics: a nonblocking handle becomes
 * MPI_REQUEST_NULL, a persistent one inactive. The status of a completed
 * collective is empty (MPI_SOURCE = MPI_ANY_SOURCE, MPI_TAG = MPI_ANY_TAG,
 * count 0). In arrays mixing ours and MPI's, MPI_Waitany, _Waitsome,
 * _Testany and _Testsome poll both kinds (ours with mpitopo_test, MPI's
 * with PMPI_Test* on a copy of the array in which ours are
 * MPI_REQUEST_NULL), so neither blocks while the other could complete;
 * MPI_Waitall finishes ours first (polling them while more than one is
 * active, because each may need this process to post its next round) and
 * then waits for MPI's. MPI_Cancel refuses ours (MPI_ERR_REQUEST: a
 * collective cannot be cancelled). MPI_Request_free on an active one
 * completes it first (mpitopo_request_free: the neighbours need its later
 * rounds).
 *
 * Cost: while no routed request exists (the table is empty: one atomic
 * load) every call goes straight to PMPI. Thread safety: one mutex guards
 * the table; a request is used by one thread at a time, as MPI requires.
 * A nonblocking handle is removed from the table before PMPI frees it, so
 * MPI may reuse its value at once.
 *
 * Errors: an error of the schedule (e.g. MPI_ERR_TRUNCATE) is raised
 * through the error handler of the collective's communicator, as the
 * blocking routing does; in the array calls the status of that request
 * gets the code in MPI_ERROR and the call returns MPI_ERR_IN_STATUS (when
 * statuses are not ignored).
 */
#include <mpi.h>
#include <mpitopo.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pmpi/shim.h"
#include "pmpi/trace/trace.h"

enum state { IDLE, RUNNING, DONE }; /* DONE: the schedule is, the handle not yet */

typedef struct shim_req {
    MPI_Request handle;   /* the key */
    mpitopo_request_t mreq;
    MPI_Comm comm;        /* for errors */
    int persistent;
    enum state state;
    int rc;               /* mpitopo's result, once DONE */
} shim_req_t;

/* Open addressing, linear probing; the capacity is a power of two, at
 * most half full. */
static struct {
    pthread_mutex_t lock;
    shim_req_t **slot;
    size_t cap, n;
} table = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0};
static atomic_long live;

static size_t hash(const MPI_Request *h)
{
    unsigned char b[sizeof *h];
    uint64_t x = 1469598103934665603ull;
    memcpy(b, h, sizeof b);
    for (size_t i = 0; i < sizeof b; i++)
        x = (x ^ b[i]) * 1099511628211ull;
    return (size_t)(x ^ (x >> 29));
}

static int same(const MPI_Request *a, const MPI_Request *b)
{
    return memcmp(a, b, sizeof *a) == 0;
}

/* The slot of h, or the empty slot where it would go. Under the lock. */
static size_t probe(const MPI_Request *h)
{
    size_t i = hash(h) & (table.cap - 1);
    while (table.slot[i] && !same(&table.slot[i]->handle, h))
        i = (i + 1) & (table.cap - 1);
    return i;
}

static int grow(void)
{
    size_t cap = table.cap ? 2 * table.cap : 64;
    shim_req_t **old = table.slot, **slot = calloc(cap, sizeof *slot);
    size_t oldcap = table.cap;
    if (!slot)
        return 0;
    table.slot = slot;
    table.cap = cap;
    for (size_t i = 0; i < oldcap; i++)
        if (old[i])
            table.slot[probe(&old[i]->handle)] = old[i];
    free(old);
    return 1;
}

static int insert(shim_req_t *r)
{
    int ok = 1;
    pthread_mutex_lock(&table.lock);
    if (2 * (table.n + 1) > table.cap)
        ok = grow();
    if (ok) {
        table.slot[probe(&r->handle)] = r;
        table.n++;
        atomic_fetch_add(&live, 1);
    }
    pthread_mutex_unlock(&table.lock);
    return ok;
}

/* Remove r, moving later entries of its probe run back into the gap. */
static void forget(shim_req_t *r)
{
    pthread_mutex_lock(&table.lock);
    size_t m = table.cap - 1, i = probe(&r->handle), j = i;
    if (table.slot[i]) {
        table.slot[i] = NULL;
        for (;;) {
            j = (j + 1) & m;
            if (!table.slot[j])
                break;
            size_t home = hash(&table.slot[j]->handle) & m;
            /* Move j into the gap i unless its home lies cyclically in (i, j]. */
            if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
                table.slot[i] = table.slot[j];
                table.slot[j] = NULL;
                i = j;
            }
        }
        table.n--;
        atomic_fetch_sub(&live, 1);
    }
    pthread_mutex_unlock(&table.lock);
}

/* The entry of handle *h, or NULL (at once when no routed request exists). */
static shim_req_t *find(const MPI_Request *h)
{
    if (atomic_load_explicit(&live, memory_order_acquire) == 0 || !h)
        return NULL;
    shim_req_t *r = NULL;
    pthread_mutex_lock(&table.lock);
    if (table.cap)
        r = table.slot[probe(h)];
    pthread_mutex_unlock(&table.lock);
    return r;
}

int mpitopo__shim_requests_live(void)
{
    return atomic_load_explicit(&live, memory_order_acquire) != 0;
}

int mpitopo__shim_request_ours(MPI_Request request)
{
    return find(&request) != NULL;
}

/*
 * Waiting on MPI's own requests while routed operations are in flight: a
 * neighbour may be waiting for a later round that this process posts only
 * from inside mpitopo, so the shim polls MPI's requests and moves every
 * operation of mpitopo on between polls (mpitopo_progress) instead of
 * blocking in MPI. Without routed operations in flight: MPI's own call.
 */
static void progress_ours(void)
{
    if (mpitopo__shim_requests_live())
        mpitopo_progress();
}

static int plain_wait(MPI_Request *request, MPI_Status *status)
{
    if (!mpitopo__shim_requests_live())
        return PMPI_Wait(request, status);
    int flag = 0, rc;
    while ((rc = PMPI_Test(request, &flag, status)) == MPI_SUCCESS && !flag) {
        mpitopo_progress();
        sched_yield();
    }
    return rc;
}

static int plain_waitall(int n, MPI_Request reqs[], MPI_Status sts[])
{
    if (!mpitopo__shim_requests_live())
        return PMPI_Waitall(n, reqs, sts);
    int flag = 0, rc;
    while ((rc = PMPI_Testall(n, reqs, &flag, sts)) == MPI_SUCCESS && !flag) {
        mpitopo_progress();
        sched_yield();
    }
    return rc;
}

static int plain_waitany(int n, MPI_Request reqs[], int *index, MPI_Status *st)
{
    if (!mpitopo__shim_requests_live())
        return PMPI_Waitany(n, reqs, index, st);
    int flag = 0, rc;
    while ((rc = PMPI_Testany(n, reqs, index, &flag, st)) == MPI_SUCCESS && !flag) {
        mpitopo_progress();
        sched_yield();
    }
    return rc;
}

static int plain_waitsome(int n, MPI_Request reqs[], int *out, int idx[], MPI_Status sts[])
{
    if (!mpitopo__shim_requests_live())
        return PMPI_Waitsome(n, reqs, out, idx, sts);
    int rc;
    while ((rc = PMPI_Testsome(n, reqs, out, idx, sts)) == MPI_SUCCESS && *out == 0) {
        mpitopo_progress();
        sched_yield();
    }
    return rc;
}

int mpitopo__shim_request_give(const char *func, MPI_Comm comm, int rc, mpitopo_request_t mreq,
                               int persistent, MPI_Request *request)
{
    if (rc != MPITOPO_SUCCESS)
        return mpitopo__shim_neighbor_result(func, comm, rc);
    shim_req_t *r = calloc(1, sizeof *r);
    int mrc = MPI_ERR_NO_MEM;
    if (r) {
        r->mreq = mreq;
        r->comm = comm;
        r->persistent = persistent;
        r->state = persistent ? IDLE : RUNNING;
        mrc = PMPI_Recv_init(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_SELF, &r->handle);
        if (mrc == MPI_SUCCESS && !persistent)
            mrc = PMPI_Start(&r->handle);
        if (mrc == MPI_SUCCESS && !insert(r)) {
            PMPI_Request_free(&r->handle);
            mrc = MPI_ERR_NO_MEM;
        }
    }
    if (mrc == MPI_SUCCESS) {
        *request = r->handle;
        return MPI_SUCCESS;
    }
    free(r);
    /* Started everywhere: the neighbours need this process's part. */
    mpitopo_request_free(&mreq);
    return mpitopo__shim_raise(func, comm, mrc, "no MPI request for the routed collective");
}

/* The status MPI gives a completed collective. */
static void empty_status(MPI_Status *st)
{
    if (st == MPI_STATUS_IGNORE)
        return;
    st->MPI_SOURCE = MPI_ANY_SOURCE;
    st->MPI_TAG = MPI_ANY_TAG;
}

/* Advance r's schedule; block: until it completes. Returns 1 when DONE. */
static int advance(shim_req_t *r, int block)
{
    int flag = 1;
    if (r->state != RUNNING)
        return r->state == DONE;
    r->rc = block ? mpitopo_wait(&r->mreq) : mpitopo_test(&r->mreq, &flag);
    /* On an error mpitopo has released (or deactivated) the request. */
    if (flag || r->rc != MPITOPO_SUCCESS)
        r->state = DONE;
    return r->state == DONE;
}

/* Complete the handle *h of r, whose schedule is done (or never started):
 * PMPI frees a nonblocking one (forgotten first: MPI may reuse the value)
 * and makes a persistent one inactive. Returns r's result as an MPI code
 * (raised on r's communicator) and stores it in st->MPI_ERROR when asked. */
static int finish(const char *func, shim_req_t *r, MPI_Request *h, MPI_Status *st, int set_error)
{
    MPI_Comm comm = r->comm;
    int rc = r->state == DONE ? r->rc : MPITOPO_SUCCESS;
    PMPI_Wait(h, st);
    if (r->persistent) {
        r->state = IDLE;
    } else {
        forget(r);
        free(r);
        PMPI_Request_free(h);
    }
    empty_status(st);
    int code = rc == MPITOPO_SUCCESS ? MPI_SUCCESS : mpitopo__shim_neighbor_code(rc);
    if (st != MPI_STATUS_IGNORE && set_error)
        st->MPI_ERROR = code;
    if (rc != MPITOPO_SUCCESS)
        mpitopo__shim_neighbor_result(func, comm, rc);
    return code;
}

/* A request array with ours taken out: mine[i] is ours or NULL, copy[] the
 * array with ours replaced by MPI_REQUEST_NULL, for PMPI. */
#define MIXED_LOCAL 16
typedef struct mixed {
    int nours;
    shim_req_t **mine;
    MPI_Request *copy;
    shim_req_t *mine_local[MIXED_LOCAL];
    MPI_Request copy_local[MIXED_LOCAL];
} mixed_t;

static void mixed_free(mixed_t *m)
{
    if (m->mine != m->mine_local)
        free(m->mine);
    if (m->copy != m->copy_local)
        free(m->copy);
    m->mine = m->mine_local;
    m->copy = m->copy_local;
}

/* Returns 0 when out of memory. m->nours == 0: use PMPI directly (nothing
 * to free). */
static int mixed_init(mixed_t *m, int n, const MPI_Request reqs[])
{
    m->nours = 0;
    m->mine = m->mine_local;
    m->copy = m->copy_local;
    if (n <= 0 || !reqs || atomic_load_explicit(&live, memory_order_acquire) == 0)
        return 1;
    if (n > MIXED_LOCAL) {
        m->mine = malloc((size_t)n * sizeof *m->mine);
        m->copy = malloc((size_t)n * sizeof *m->copy);
        if (!m->mine || !m->copy) {
            free(m->mine);
            free(m->copy);
            m->mine = NULL;
            m->copy = NULL;
            return 0;
        }
    }
    for (int i = 0; i < n; i++) {
        m->mine[i] = find(&reqs[i]);
        m->copy[i] = m->mine[i] ? MPI_REQUEST_NULL : reqs[i];
        m->nours += m->mine[i] != NULL;
    }
    if (m->nours == 0)
        mixed_free(m);
    return 1;
}

/* MPI's requests back into the program's array, as PMPI left them. */
static void mixed_put_back(const mixed_t *m, int n, MPI_Request reqs[])
{
    for (int i = 0; i < n; i++)
        if (!m->mine[i])
            reqs[i] = m->copy[i];
}

static int no_mem(const char *func)
{
    return mpitopo__shim_raise(func, MPI_COMM_WORLD, MPI_ERR_NO_MEM,
                               "out of memory for the request array");
}

static MPI_Status *status_at(MPI_Status *sts, int i)
{
    return sts == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &sts[i];
}

int mpitopo__shim_wait(MPI_Request *request, MPI_Status *status)
{
    shim_req_t *r = find(request);
    if (!r)
        return plain_wait(request, status);
    advance(r, 1);
    return finish("MPI_Wait", r, request, status, 0);
}

int mpitopo__shim_test(MPI_Request *request, int *flag, MPI_Status *status)
{
    shim_req_t *r = find(request);
    if (!r) {
        progress_ours();
        return PMPI_Test(request, flag, status);
    }
    if (r->state == RUNNING && !advance(r, 0)) {
        *flag = 0;
        return MPI_SUCCESS;
    }
    *flag = 1;
    return finish("MPI_Test", r, request, status, 0);
}

int mpitopo__shim_request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    shim_req_t *r = find(&request);
    if (!r)
        return PMPI_Request_get_status(request, flag, status);
    if (r->state == RUNNING && !advance(r, 0)) {
        *flag = 0;
        return MPI_SUCCESS;
    }
    int rc = PMPI_Request_get_status(request, flag, status);
    empty_status(status);
    if (rc == MPI_SUCCESS && r->state == DONE && r->rc != MPITOPO_SUCCESS)
        rc = mpitopo__shim_neighbor_result("MPI_Request_get_status", r->comm, r->rc);
    return rc;
}

/* Complete every one of ours: poll while several are running (each may
 * need this process to post its next round), wait for the last. */
static void complete_ours(const mixed_t *m, int n)
{
    for (;;) {
        shim_req_t *last = NULL;
        int running = 0;
        for (int i = 0; i < n; i++)
            if (m->mine[i] && !advance(m->mine[i], 0) && m->mine[i]->state == RUNNING) {
                last = m->mine[i];
                running++;
            }
        if (running <= 1) {
            if (last)
                advance(last, 1);
            return;
        }
        sched_yield();
    }
}

/* Finish ours at the indices in mine[] (all DONE or IDLE); the result for
 * an array call: MPI_ERR_IN_STATUS when one failed and statuses are kept. */
static int finish_ours(const char *func, const mixed_t *m, int n, MPI_Request reqs[],
                       MPI_Status *sts, int mpi_rc)
{
    int failed = 0;
    for (int i = 0; i < n; i++) {
        if (!m->mine[i])
            continue;
        int code = finish(func, m->mine[i], &reqs[i], status_at(sts, i), 1);
        if (code != MPI_SUCCESS && !failed)
            failed = code;
    }
    if (!failed)
        return mpi_rc;
    if (sts != MPI_STATUSES_IGNORE && mpi_rc == MPI_SUCCESS)
        for (int i = 0; i < n; i++)
            if (!m->mine[i])
                sts[i].MPI_ERROR = MPI_SUCCESS;
    return sts != MPI_STATUSES_IGNORE ? MPI_ERR_IN_STATUS : failed;
}

int mpitopo__shim_waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    mixed_t m;
    if (!mixed_init(&m, count, requests))
        return no_mem("MPI_Waitall");
    if (m.nours == 0)
        return plain_waitall(count, requests, statuses);
    complete_ours(&m, count);
    int rc = plain_waitall(count, m.copy, statuses);
    mixed_put_back(&m, count, requests);
    rc = finish_ours("MPI_Waitall", &m, count, requests, statuses, rc);
    mixed_free(&m);
    return rc;
}

int mpitopo__shim_testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    mixed_t m;
    if (!mixed_init(&m, count, requests))
        return no_mem("MPI_Testall");
    if (m.nours == 0) {
        progress_ours();
        return PMPI_Testall(count, requests, flag, statuses);
    }
    int all = 1, rc = MPI_SUCCESS;
    for (int i = 0; i < count; i++)
        if (m.mine[i] && m.mine[i]->state == RUNNING)
            all &= advance(m.mine[i], 0);
    /* Nothing is completed unless everything is. */
    *flag = 0;
    if (all)
        rc = PMPI_Testall(count, m.copy, flag, statuses);
    if (*flag) {
        mixed_put_back(&m, count, requests);
        rc = finish_ours("MPI_Testall", &m, count, requests, statuses, rc);
    }
    mixed_free(&m);
    return rc;
}

/* One pass of MPI_Testany: *index = MPI_UNDEFINED with *flag = 1 when no
 * request is active. */
static int testany(const char *func, const mixed_t *m, int n, MPI_Request reqs[], int *index,
                   int *flag, MPI_Status *st)
{
    int ours_active = 0;
    for (int i = 0; i < n; i++) {
        shim_req_t *r = m->mine[i];
        if (!r || r->state == IDLE)
            continue;
        ours_active = 1;
        if (advance(r, 0)) {
            *index = i;
            *flag = 1;
            return finish(func, r, &reqs[i], st, 0);
        }
    }
    int rc = PMPI_Testany(n, m->copy, index, flag, st);
    mixed_put_back(m, n, reqs);
    if (rc == MPI_SUCCESS && *flag && *index == MPI_UNDEFINED && ours_active)
        *flag = 0;
    return rc;
}

int mpitopo__shim_testany(int count, MPI_Request requests[], int *index, int *flag,
                          MPI_Status *status)
{
    mixed_t m;
    if (!mixed_init(&m, count, requests))
        return no_mem("MPI_Testany");
    if (m.nours == 0) {
        progress_ours();
        return PMPI_Testany(count, requests, index, flag, status);
    }
    int rc = testany("MPI_Testany", &m, count, requests, index, flag, status);
    mixed_free(&m);
    return rc;
}

int mpitopo__shim_waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
    mixed_t m;
    if (!mixed_init(&m, count, requests))
        return no_mem("MPI_Waitany");
    if (m.nours == 0)
        return plain_waitany(count, requests, index, status);
    int flag = 0, rc;
    while ((rc = testany("MPI_Waitany", &m, count, requests, index, &flag, status)) ==
               MPI_SUCCESS &&
           !flag)
        sched_yield();
    mixed_free(&m);
    return rc;
}

/* One pass of MPI_Testsome: *outcount = MPI_UNDEFINED when no request is
 * active. */
static int testsome(const char *func, const mixed_t *m, int n, MPI_Request reqs[],
                    int *outcount, int indices[], MPI_Status sts[])
{
    int k = 0, ours_active = 0, failed = 0;
    for (int i = 0; i < n; i++) {
        shim_req_t *r = m->mine[i];
        if (!r || r->state == IDLE)
            continue;
        ours_active = 1;
        if (advance(r, 0)) {
            int code = finish(func, r, &reqs[i], status_at(sts, k), 1);
            failed = failed ? failed : code;
            indices[k++] = i;
        }
    }
    int out = 0;
    int rc = PMPI_Testsome(n, m->copy, &out, indices + k, status_at(sts, k));
    mixed_put_back(m, n, reqs);
    if (rc == MPI_SUCCESS && out == MPI_UNDEFINED)
        out = ours_active ? 0 : MPI_UNDEFINED;
    *outcount = out == MPI_UNDEFINED ? MPI_UNDEFINED : k + out;
    if (failed && rc == MPI_SUCCESS) {
        for (int j = k; sts != MPI_STATUSES_IGNORE && j < *outcount; j++)
            sts[j].MPI_ERROR = MPI_SUCCESS;
        rc = sts != MPI_STATUSES_IGNORE ? MPI_ERR_IN_STATUS : failed;
    }
    return rc;
}

int mpitopo__shim_testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    mixed_t m;
    if (!mixed_init(&m, incount, requests))
        return no_mem("MPI_Testsome");
    if (m.nours == 0) {
        progress_ours();
        return PMPI_Testsome(incount, requests, outcount, indices, statuses);
    }
    int rc = testsome("MPI_Testsome", &m, incount, requests, outcount, indices, statuses);
    mixed_free(&m);
    return rc;
}

int mpitopo__shim_waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    mixed_t m;
    if (!mixed_init(&m, incount, requests))
        return no_mem("MPI_Waitsome");
    if (m.nours == 0)
        return plain_waitsome(incount, requests, outcount, indices, statuses);
    int rc;
    while ((rc = testsome("MPI_Waitsome", &m, incount, requests, outcount, indices,
                          statuses)) == MPI_SUCCESS &&
           *outcount == 0)
        sched_yield();
    mixed_free(&m);
    return rc;
}

int mpitopo__shim_request_free(MPI_Request *request)
{
    if (request)
        mpitopo__trace_forget(*request); /* a persistent send the trace counts */
    shim_req_t *r = find(request);
    if (!r)
        return PMPI_Request_free(request);
    MPI_Comm comm = r->comm;
    int rc = mpitopo_request_free(&r->mreq);
    forget(r);
    free(r);
    int mrc = PMPI_Request_free(request);
    if (rc != MPITOPO_SUCCESS)
        return mpitopo__shim_neighbor_result("MPI_Request_free", comm, rc);
    return mrc;
}

int mpitopo__shim_cancel(MPI_Request *request)
{
    shim_req_t *r = find(request);
    if (!r)
        return PMPI_Cancel(request);
    return mpitopo__shim_raise("MPI_Cancel", r->comm, MPI_ERR_REQUEST,
                               "a neighbourhood collective (routed to mpitopo) cannot be "
                               "cancelled");
}

int mpitopo__shim_start(MPI_Request *request)
{
    shim_req_t *r = find(request);
    if (!r || !r->persistent) {
        int rc = PMPI_Start(request);
        if (rc == MPI_SUCCESS)
            mpitopo__trace_start(1, request);
        return rc;
    }
    int rc = mpitopo_start(&r->mreq);
    if (rc != MPITOPO_SUCCESS)
        return mpitopo__shim_neighbor_result("MPI_Start", r->comm, rc);
    r->state = RUNNING;
    return PMPI_Start(request);
}

int mpitopo__shim_startall(int count, MPI_Request requests[])
{
    mixed_t m;
    if (!mixed_init(&m, count, requests))
        return no_mem("MPI_Startall");
    if (m.nours == 0) { /* mixed_init freed m */
        int rc = PMPI_Startall(count, requests);
        if (rc == MPI_SUCCESS)
            mpitopo__trace_start(count, requests);
        return rc;
    }
    /* Ours all start or none does (mpitopo_startall), in array order. */
    mpitopo_request_t local[MIXED_LOCAL], *ms = m.nours <= MIXED_LOCAL
                                                  ? local
                                                  : malloc((size_t)m.nours * sizeof *ms);
    int k = 0, rc = MPI_SUCCESS;
    if (!ms) {
        mixed_free(&m);
        return no_mem("MPI_Startall");
    }
    shim_req_t *first = NULL;
    for (int i = 0; i < count; i++)
        if (m.mine[i] && m.mine[i]->persistent) {
            first = first ? first : m.mine[i];
            ms[k++] = m.mine[i]->mreq;
        }
    int mrc = k ? mpitopo_startall(k, ms) : MPITOPO_SUCCESS;
    if (mrc != MPITOPO_SUCCESS) {
        rc = mpitopo__shim_neighbor_result("MPI_Startall", first->comm, mrc);
    } else {
        for (int i = 0; i < count; i++)
            if (m.mine[i] && m.mine[i]->persistent)
                m.mine[i]->state = RUNNING;
        rc = PMPI_Startall(count, requests);
    }
    if (ms != local)
        free(ms);
    mixed_free(&m);
    return rc;
}
