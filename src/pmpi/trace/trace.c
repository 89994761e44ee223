/*
 * libmpitopo_trace: LD_PRELOADed into an unmodified MPI program, it records
 * who sends how much to whom and writes one pattern file at MPI_Finalize
 * (the tracing step of Mercier & Jeannot, EuroMPI'11), ready for
 * `mpitopo map`, `mpitopo eval` or mpitopo_pattern_adjacent.
 *
 * Intercepted (C; the Fortran bindings are in trace_fortran.c):
 *   MPI_Send, MPI_Bsend, MPI_Ssend, MPI_Rsend, MPI_Isend, MPI_Ibsend,
 *   MPI_Issend, MPI_Irsend, MPI_Sendrecv, MPI_Sendrecv_replace: one message
 *     of count x type size bytes to dest;
 *   MPI_Send_init, MPI_Bsend_init, MPI_Ssend_init, MPI_Rsend_init: the
 *     request is remembered; each MPI_Start / MPI_Startall of it counts one
 *     message; MPI_Request_free forgets it;
 *   MPI_Finalize: gathers the edges on rank 0 of MPI_COMM_WORLD and writes
 *     the file, then calls PMPI_Finalize (one thread calls it, as MPI
 *     requires, after the others' last MPI call).
 * Destinations are translated to ranks of MPI_COMM_WORLD (the remote group
 * for intercommunicators), with a per-communicator cache hung on the
 * communicator as an attribute (so it dies with it); MPI_PROC_NULL is
 * ignored, and a call MPI refused is not counted. Memory per process is
 * O(distinct destinations + live persistent requests), never O(processes);
 * rank 0 needs O(edges + processes) at the end.
 *
 * Environment:
 *   MPITOPO_TRACE_FILE   the pattern file (default "mpitopo-trace.txt"),
 *                        written by rank 0 of MPI_COMM_WORLD;
 *   MPITOPO_VERBOSE=1    rank 0 says what it wrote.
 * A file that cannot be written gives one line on stderr; the program goes
 * on to PMPI_Finalize either way. Thread safe (one mutex around the
 * tables). The tracer's own communication uses PMPI_* only.
 */
#include <mpi.h>
#include <mpitopo.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmpi/trace/trace.h"
#include "core/env.h"

_Static_assert(sizeof(MPI_Request) <= sizeof(uint64_t), "request handles fit 64 bits");

/* What a communicator's attribute holds: its group (local, or remote for an
 * intercommunicator) and the translations asked for so far. */
typedef struct comm_cache {
    int identity; /* congruent to MPI_COMM_WORLD: no translation */
    MPI_Group group;
    trace_table_t ranks;
} comm_cache_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static trace_table_t edges, persistent;
static int keyval = MPI_KEYVAL_INVALID;
static MPI_Group world_group = MPI_GROUP_NULL;
static uint64_t lost;          /* messages not recorded (no memory, no world rank) */
static uint64_t lost_requests; /* persistent requests not remembered (no memory) */
static _Thread_local int fortran_depth;

void mpitopo__trace_fortran_enter(void)
{
    fortran_depth++;
}

void mpitopo__trace_fortran_leave(void)
{
    fortran_depth--;
}

static int cache_delete(MPI_Comm comm, int kv, void *attr, void *extra)
{
    (void)comm, (void)kv, (void)extra;
    comm_cache_t *c = attr;
    if (c->group != MPI_GROUP_NULL)
        PMPI_Group_free(&c->group);
    mpitopo__trace_table_free(&c->ranks);
    free(c);
    return MPI_SUCCESS;
}

static comm_cache_t *cache_new(MPI_Comm comm)
{
    int cmp = MPI_UNEQUAL, inter = 0;
    comm_cache_t *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->group = MPI_GROUP_NULL;
    PMPI_Comm_test_inter(comm, &inter);
    if (!inter)
        PMPI_Comm_compare(comm, MPI_COMM_WORLD, &cmp);
    c->identity = cmp == MPI_IDENT || cmp == MPI_CONGRUENT;
    if (!c->identity && (inter ? PMPI_Comm_remote_group(comm, &c->group)
                               : PMPI_Comm_group(comm, &c->group)) != MPI_SUCCESS) {
        free(c);
        return NULL;
    }
    return c;
}

/* The cache of comm, made on first use. Called with the lock held. */
static comm_cache_t *cache_of(MPI_Comm comm)
{
    comm_cache_t *c = NULL;
    int found = 0;
    if (keyval == MPI_KEYVAL_INVALID &&
        PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, cache_delete, &keyval, NULL) != MPI_SUCCESS)
        return NULL;
    if (PMPI_Comm_get_attr(comm, keyval, &c, &found) == MPI_SUCCESS && found)
        return c;
    if (!(c = cache_new(comm)))
        return NULL;
    if (PMPI_Comm_set_attr(comm, keyval, c) != MPI_SUCCESS) {
        cache_delete(comm, keyval, c, NULL);
        return NULL;
    }
    return c;
}

/* World rank of `rank` of comm, or -1 (out of memory, MPI failure).
 * Called with the lock held. */
static int world_rank(int rank, MPI_Comm comm)
{
    if (comm == MPI_COMM_WORLD)
        return rank;
    comm_cache_t *c = cache_of(comm);
    if (!c)
        return -1;
    if (c->identity)
        return rank;
    trace_slot_t *s = mpitopo__trace_table_find(&c->ranks, (uint64_t)rank);
    if (s)
        return s->rank;
    int w = MPI_UNDEFINED;
    if (world_group == MPI_GROUP_NULL && PMPI_Comm_group(MPI_COMM_WORLD, &world_group) != MPI_SUCCESS)
        return -1;
    if (PMPI_Group_translate_ranks(c->group, 1, &rank, world_group, &w) != MPI_SUCCESS ||
        w == MPI_UNDEFINED)
        return -1; /* a process outside MPI_COMM_WORLD (dynamic processes) */
    if (!(s = mpitopo__trace_table_get(&c->ranks, (uint64_t)rank)))
        return -1;
    s->rank = w;
    return w;
}

static uint64_t message_bytes(MPI_Count count, MPI_Datatype type)
{
    MPI_Count size = 0;
    if (count <= 0 || PMPI_Type_size_x(type, &size) != MPI_SUCCESS || size <= 0)
        return 0;
    return (uint64_t)count * (uint64_t)size;
}

/* Add msgs messages of bytes in total to world rank w. Lock held. */
static void add_edge(int w, uint64_t bytes, uint64_t msgs)
{
    trace_slot_t *s = w < 0 ? NULL : mpitopo__trace_table_get(&edges, (uint64_t)w);
    if (!s) {
        lost += msgs;
        return;
    }
    s->bytes += bytes;
    s->msgs += msgs;
}

void mpitopo__trace_send(int dest, MPI_Count count, MPI_Datatype type, MPI_Comm comm)
{
    if (dest == MPI_PROC_NULL || fortran_depth)
        return;
    uint64_t bytes = message_bytes(count, type);
    pthread_mutex_lock(&lock);
    add_edge(world_rank(dest, comm), bytes, 1);
    pthread_mutex_unlock(&lock);
}

static uint64_t request_key(MPI_Request req)
{
    uint64_t key = 0;
    memcpy(&key, &req, sizeof req);
    return key;
}

void mpitopo__trace_init(MPI_Request req, int dest, MPI_Count count, MPI_Datatype type,
                         MPI_Comm comm)
{
    if (dest == MPI_PROC_NULL || fortran_depth)
        return;
    uint64_t bytes = message_bytes(count, type);
    pthread_mutex_lock(&lock);
    /* A destination that cannot be translated stays in the table with rank
     * -1, so that its starts are counted as lost. */
    int w = world_rank(dest, comm);
    trace_slot_t *s = mpitopo__trace_table_get(&persistent, request_key(req));
    if (s) {
        s->rank = w;
        s->bytes = bytes;
    } else {
        lost_requests++;
    }
    pthread_mutex_unlock(&lock);
}

void mpitopo__trace_start(int n, const MPI_Request *reqs)
{
    if (fortran_depth)
        return;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < n; i++) {
        const trace_slot_t *s = mpitopo__trace_table_find(&persistent, request_key(reqs[i]));
        if (s)
            add_edge(s->rank, s->bytes, 1);
    }
    pthread_mutex_unlock(&lock);
}

void mpitopo__trace_forget(MPI_Request req)
{
    if (fortran_depth)
        return;
    pthread_mutex_lock(&lock);
    mpitopo__trace_table_remove(&persistent, request_key(req));
    pthread_mutex_unlock(&lock);
}

/* ------------------------------------------------------------------------
 * MPI_Finalize: gather and write.
 */

/* The edges of this process as (dst, bytes, msgs) triples of doubles (dst
 * and counts are exact up to 2^53), and the tables emptied. *n = -1 when
 * out of memory. */
static double *take_edges(int *n)
{
    pthread_mutex_lock(&lock);
    double *out = malloc((edges.n ? edges.n : 1) * 3 * sizeof *out);
    *n = out ? 0 : -1;
    for (uint64_t i = 0; out && i < edges.cap; i++) {
        const trace_slot_t *s = &edges.slots[i];
        if (!s->used)
            continue;
        out[3 * *n] = (double)s->key;
        out[3 * *n + 1] = (double)s->bytes;
        out[3 * *n + 2] = (double)s->msgs;
        (*n)++;
    }
    mpitopo__trace_table_free(&edges);
    mpitopo__trace_table_free(&persistent);
    if (lost || lost_requests)
        fprintf(stderr,
                "mpitopo trace: %llu messages and the starts of %llu persistent requests were "
                "not recorded (out of memory, or a destination outside MPI_COMM_WORLD)\n",
                (unsigned long long)lost, (unsigned long long)lost_requests);
    pthread_mutex_unlock(&lock);
    return out;
}

static int verbose(void)
{
    return mpitopo__env_level(MPITOPO_ENV_VERBOSE) > 0;
}

/* On rank 0: the pattern of the gathered triples, written to the file. */
static void write_pattern(int nprocs, const int *counts, const double *all, int64_t total)
{
    const char *path = mpitopo__getenv(MPITOPO_ENV_TRACE_FILE);
    if (!path || !*path)
        path = "mpitopo-trace.txt";
    int *src = malloc((size_t)(total ? total : 1) * sizeof *src);
    int *dst = malloc((size_t)(total ? total : 1) * sizeof *dst);
    double *bytes = malloc((size_t)(total ? total : 1) * sizeof *bytes);
    double *msgs = malloc((size_t)(total ? total : 1) * sizeof *msgs);
    mpitopo_pattern_t *pattern = NULL;
    int rc = MPITOPO_ERR_NOMEM;
    if (src && dst && bytes && msgs) {
        int64_t e = 0;
        for (int p = 0; p < nprocs; p++)
            for (int k = 0; k < counts[p]; k++, e++) {
                src[e] = p;
                dst[e] = (int)all[3 * e];
                bytes[e] = all[3 * e + 1];
                msgs[e] = all[3 * e + 2];
            }
        rc = mpitopo_pattern_create(nprocs, total, src, dst, bytes, msgs, &pattern);
    }
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo_pattern_write(pattern, path);
    if (rc != MPITOPO_SUCCESS)
        fprintf(stderr, "mpitopo trace: cannot write the trace to %s: %s\n", path,
                rc == MPITOPO_ERR_NOMEM && !*mpitopo_last_error() ? "out of memory"
                                                                   : mpitopo_last_error());
    else if (verbose())
        fprintf(stderr, "mpitopo trace: wrote %lld edges among %d processes to %s\n",
                (long long)total, nprocs, path);
    mpitopo_pattern_destroy(&pattern);
    free(src);
    free(dst);
    free(bytes);
    free(msgs);
}

/* Rank 0 receives O(edges) triples: counts first, then one Gatherv of
 * 3-double records (so 2^31-1 edges fit the int counts). A broadcast flag
 * lets every process skip the Gatherv together when rank 0 cannot take it
 * (too many edges, a process out of memory, rank 0 out of memory). */
static void gather_and_write(void)
{
    int rank, size, n, ok = 1;
    int *counts = NULL, *displs = NULL;
    double *all = NULL;
    int64_t total = 0;
    MPI_Datatype triple = MPI_DATATYPE_NULL;
    double *mine = take_edges(&n);
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0) {
        counts = malloc((size_t)size * sizeof *counts);
        displs = malloc((size_t)size * sizeof *displs);
        ok = counts && displs;
    }
    PMPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (int p = 0; rank == 0 && ok && p < size; p++) {
        if (counts[p] < 0 || total + counts[p] > INT32_MAX)
            ok = 0;
        else
            displs[p] = (int)total, total += counts[p];
    }
    if (rank == 0 && ok && !(all = malloc((size_t)(total ? total : 1) * 3 * sizeof *all)))
        ok = 0;
    PMPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (ok) {
        PMPI_Type_contiguous(3, MPI_DOUBLE, &triple);
        PMPI_Type_commit(&triple);
        PMPI_Gatherv(mine, n, triple, all, counts, displs, triple, 0, MPI_COMM_WORLD);
        PMPI_Type_free(&triple);
    }
    if (rank == 0 && ok)
        write_pattern(size, counts, all, total);
    else if (rank == 0)
        fprintf(stderr, "mpitopo trace: cannot gather the trace (%s); no file written\n",
                total > INT32_MAX ? "more than 2^31-1 edges" : "out of memory");
    free(mine);
    free(counts);
    free(displs);
    free(all);
}

/* Once only: the Fortran MPI_FINALIZE of MPICH calls the C MPI_Finalize. */
void mpitopo__trace_finalize(void)
{
    static int done;
    int initialized = 0, finalized = 1;
    PMPI_Initialized(&initialized);
    PMPI_Finalized(&finalized);
    if (done || !initialized || finalized)
        return;
    done = 1;
    gather_and_write();
    pthread_mutex_lock(&lock);
    if (keyval != MPI_KEYVAL_INVALID)
        PMPI_Comm_free_keyval(&keyval);
    if (world_group != MPI_GROUP_NULL)
        PMPI_Group_free(&world_group);
    pthread_mutex_unlock(&lock);
}

int MPI_Finalize(void)
{
    mpitopo__trace_finalize();
    return PMPI_Finalize();
}

/* ------------------------------------------------------------------------
 * C bindings: the PMPI call, then the record when MPI accepted it.
 */

#define TRACE_SEND(call, dest, count, type, comm)                                                  \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ == MPI_SUCCESS)                                                                    \
            mpitopo__trace_send((dest), (count), (type), (comm));                                  \
        return rc_;                                                                                \
    } while (0)

#define TRACE_INIT(call, req, dest, count, type, comm)                                             \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ == MPI_SUCCESS)                                                                    \
            mpitopo__trace_init(*(req), (dest), (count), (type), (comm));                          \
        return rc_;                                                                                \
    } while (0)

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    TRACE_SEND(PMPI_Send(buf, count, type, dest, tag, comm), dest, count, type, comm);
}

int MPI_Bsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    TRACE_SEND(PMPI_Bsend(buf, count, type, dest, tag, comm), dest, count, type, comm);
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    TRACE_SEND(PMPI_Ssend(buf, count, type, dest, tag, comm), dest, count, type, comm);
}

int MPI_Rsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    TRACE_SEND(PMPI_Rsend(buf, count, type, dest, tag, comm), dest, count, type, comm);
}

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    TRACE_SEND(PMPI_Isend(buf, count, type, dest, tag, comm, req), dest, count, type, comm);
}

int MPI_Ibsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    TRACE_SEND(PMPI_Ibsend(buf, count, type, dest, tag, comm, req), dest, count, type, comm);
}

int MPI_Issend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    TRACE_SEND(PMPI_Issend(buf, count, type, dest, tag, comm, req), dest, count, type, comm);
}

int MPI_Irsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    TRACE_SEND(PMPI_Irsend(buf, count, type, dest, tag, comm, req), dest, count, type, comm);
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status *status)
{
    TRACE_SEND(PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                             recvtype, source, recvtag, comm, status),
               dest, sendcount, sendtype, comm);
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int sendtag,
                         int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    TRACE_SEND(PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, status),
               dest, count, type, comm);
}

int MPI_Send_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                  MPI_Request *req)
{
    TRACE_INIT(PMPI_Send_init(buf, count, type, dest, tag, comm, req), req, dest, count, type, comm);
}

int MPI_Bsend_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request *req)
{
    TRACE_INIT(PMPI_Bsend_init(buf, count, type, dest, tag, comm, req), req, dest, count, type, comm);
}

int MPI_Ssend_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request *req)
{
    TRACE_INIT(PMPI_Ssend_init(buf, count, type, dest, tag, comm, req), req, dest, count, type, comm);
}

int MPI_Rsend_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request *req)
{
    TRACE_INIT(PMPI_Rsend_init(buf, count, type, dest, tag, comm, req), req, dest, count, type, comm);
}

int MPI_Start(MPI_Request *req)
{
    int rc = PMPI_Start(req);
    if (rc == MPI_SUCCESS)
        mpitopo__trace_start(1, req);
    return rc;
}

int MPI_Startall(int count, MPI_Request reqs[])
{
    int rc = PMPI_Startall(count, reqs);
    if (rc == MPI_SUCCESS)
        mpitopo__trace_start(count, reqs);
    return rc;
}

/* Forget first: the handle is MPI_REQUEST_NULL afterwards, and MPI may hand
 * the same handle to the next request. */
int MPI_Request_free(MPI_Request *req)
{
    if (req)
        mpitopo__trace_forget(*req);
    return PMPI_Request_free(req);
}
