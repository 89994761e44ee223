/*
 * The host MPI's own neighbourhood collectives as a schedule of one step,
 * so that "auto" can hand an operation to MPI where no schedule of mpitopo
 * is predicted to beat it (select.c's model) and the request still
 * behaves as every other: waited, tested, progressed, cached, persistent.
 *
 * Every call runs on the private duplicate of the communicator (a
 * duplicate keeps the topology), as mpitopo's own schedules do: its error
 * handler returns errors, so the library returns MPI's codes instead of
 * invoking the user's handler (the shim raises them through it), and a
 * persistent request started after the user freed the communicator is
 * still valid. Persistent requests post PMPI_Ineighbor_* at each start;
 * MPI-4's PMPI_Neighbor_*_init is not used because Open MPI 4.1 lacks it.
 */
#include "coll/coll_internal.h"

typedef struct host {
    int op;
    side_t send, recv;
    /* Duplicates of the derived datatypes, made when posting is deferred
     * (the caller may free its own meanwhile): scalar types of the two
     * sides, then the alltoallw arrays; n of them made. */
    MPI_Datatype *dup;
    int ndup, cap;
} host_t;

static void host_free(void *p)
{
    host_t *h = p;
    for (int i = 0; i < h->ndup; i++)
        if (h->dup[i] != MPI_DATATYPE_NULL)
            PMPI_Type_free(&h->dup[i]);
    mpitopo__free(h->dup);
    mpitopo__free(h);
}

/* *t, or a duplicate kept in h when *t is derived. */
static int keep_type(host_t *h, MPI_Datatype *t)
{
    int ni, na, nd, combiner, rc = MPI_SUCCESS;
    h->dup[h->ndup] = MPI_DATATYPE_NULL;
    if (*t != MPI_DATATYPE_NULL)
        rc = PMPI_Type_get_envelope(*t, &ni, &na, &nd, &combiner);
    if (rc == MPI_SUCCESS && *t != MPI_DATATYPE_NULL && combiner != MPI_COMBINER_NAMED &&
        (rc = PMPI_Type_dup(*t, &h->dup[h->ndup])) == MPI_SUCCESS)
        *t = h->dup[h->ndup];
    h->ndup++;
    return rc == MPI_SUCCESS ? MPITOPO_SUCCESS : mpitopo__mpi_result("MPI_Type_dup", rc);
}

/* The arrays and buffer of a side without slots, as MPI wants them: mpitopo
 * accepts NULL arrays (and buffers) from a process without neighbours, Open
 * MPI 4.1 rejects them. The dummy is never read or written. */
static const int no_ints[1];
static const MPI_Aint no_aints[1];

static side_t fit(const side_t *s, int degree, MPI_Datatype *no_types)
{
    side_t f = *s;
    if (degree > 0)
        return f;
    *no_types = MPI_BYTE;
    f.counts = f.counts ? f.counts : no_ints;
    f.displs = f.displs ? f.displs : no_ints;
    f.bdispls = f.bdispls ? f.bdispls : no_aints;
    f.types = f.types ? f.types : no_types;
    f.buf = f.buf ? f.buf : no_ints;
    return f;
}

int mpitopo__host_available(void)
{
#ifdef MPITOPO_SMPI
    return 0; /* SimGrid has no neighbourhood collectives */
#else
    return 1;
#endif
}

#ifdef MPITOPO_SMPI
static int host_call(MPI_Comm comm, int op, const side_t *s, const side_t *r)
{
    (void)comm, (void)op, (void)s, (void)r;
    return MPI_ERR_UNSUPPORTED_OPERATION;
}

static int host_start(MPI_Comm comm, int op, const side_t *s, const side_t *r, MPI_Request *q)
{
    (void)comm, (void)op, (void)s, (void)r, (void)q;
    return MPI_ERR_UNSUPPORTED_OPERATION;
}
#else
/* MPI's prototypes take non-const buffers and arrays in older versions. */
#define W(p) ((void *)(uintptr_t)(p))

static int host_call(MPI_Comm comm, int op, const side_t *s, const side_t *r)
{
    switch (op) {
    case MPITOPO__OPK_ALLGATHER:
        return PMPI_Neighbor_allgather(s->buf, s->count, s->type, W(r->buf), r->count, r->type,
                                       comm);
    case MPITOPO__OPK_ALLGATHERV:
        return PMPI_Neighbor_allgatherv(s->buf, s->count, s->type, W(r->buf), r->counts,
                                        r->displs, r->type, comm);
    case MPITOPO__OPK_ALLTOALL:
        return PMPI_Neighbor_alltoall(s->buf, s->count, s->type, W(r->buf), r->count, r->type,
                                      comm);
    case MPITOPO__OPK_ALLTOALLV:
        return PMPI_Neighbor_alltoallv(s->buf, s->counts, s->displs, s->type, W(r->buf),
                                       r->counts, r->displs, r->type, comm);
    default:
        return PMPI_Neighbor_alltoallw(s->buf, s->counts, s->bdispls, s->types, W(r->buf),
                                       r->counts, r->bdispls, r->types, comm);
    }
}

static int host_start(MPI_Comm comm, int op, const side_t *s, const side_t *r, MPI_Request *q)
{
    switch (op) {
    case MPITOPO__OPK_ALLGATHER:
        return PMPI_Ineighbor_allgather(s->buf, s->count, s->type, W(r->buf), r->count, r->type,
                                        comm, q);
    case MPITOPO__OPK_ALLGATHERV:
        return PMPI_Ineighbor_allgatherv(s->buf, s->count, s->type, W(r->buf), r->counts,
                                         r->displs, r->type, comm, q);
    case MPITOPO__OPK_ALLTOALL:
        return PMPI_Ineighbor_alltoall(s->buf, s->count, s->type, W(r->buf), r->count, r->type,
                                       comm, q);
    case MPITOPO__OPK_ALLTOALLV:
        return PMPI_Ineighbor_alltoallv(s->buf, s->counts, s->displs, s->type, W(r->buf),
                                        r->counts, r->displs, r->type, comm, q);
    default:
        return PMPI_Ineighbor_alltoallw(s->buf, s->counts, s->bdispls, s->types, W(r->buf),
                                        r->counts, r->bdispls, r->types, comm, q);
    }
}
#endif

int mpitopo__host_run(const mpitopo__nbr_t *n, int op, const side_t *send, const side_t *recv)
{
    MPI_Datatype t[2];
    side_t s = fit(send, n->outdegree, &t[0]), r = fit(recv, n->indegree, &t[1]);
    return host_call(n->comm, op, &s, &r);
}

static int host_post(mpitopo_request_t req, MPI_Request *q)
{
    const host_t *h = req->ctx;
    const mpitopo__nbr_t *n = req->nbr;
    MPI_Datatype t[2];
    side_t s = fit(&h->send, n->outdegree, &t[0]), r = fit(&h->recv, n->indegree, &t[1]);
    int rc = host_start(n->comm, h->op, &s, &r, q);
    return rc == MPI_SUCCESS ? MPITOPO_SUCCESS : mpitopo__mpi_result("MPI_Ineighbor", rc);
}

/* Keep duplicates of the derived datatypes of a host request whose posting
 * is deferred (mpitopo__request_own_datatypes calls it). */
static int host_own_datatypes(mpitopo_request_t req)
{
    host_t *h = req->ctx;
    const mpitopo__nbr_t *n = req->nbr;
    int w = h->op == MPITOPO__OPK_ALLTOALLW, ns = w ? n->outdegree : 0, nr = w ? n->indegree : 0;
    if (h->dup)
        return MPITOPO_SUCCESS;
    h->dup = mpitopo__malloc_array((size_t)(2 + 2 * (ns + nr)), sizeof *h->dup);
    if (!h->dup)
        return MPITOPO_NOMEM("datatype duplicates");
    /* The alltoallw arrays are copied into the same allocation. */
    MPI_Datatype *st = h->dup + 2 + ns + nr, *rt = st + ns;
    int rc = w ? MPITOPO_SUCCESS : keep_type(h, &h->send.type);
    if (rc == MPITOPO_SUCCESS && !w)
        rc = keep_type(h, &h->recv.type);
    for (int i = 0; i < ns && rc == MPITOPO_SUCCESS; i++) {
        st[i] = h->send.types[i];
        rc = keep_type(h, &st[i]);
    }
    for (int i = 0; i < nr && rc == MPITOPO_SUCCESS; i++) {
        rt[i] = h->recv.types[i];
        rc = keep_type(h, &rt[i]);
    }
    if (w && rc == MPITOPO_SUCCESS) {
        h->send.types = st;
        h->recv.types = rt;
    }
    return rc;
}

/* A cached host request serves a new call: its sides are the call's. */
static void host_rebase(mpitopo_request_t req, const side_t *send, const side_t *recv)
{
    host_t *h = req->ctx;
    h->send = *send;
    h->recv = *recv;
}

/* The table's build: a request running the host MPI's PMPI_Ineighbor_* of
 * op on comm with the given sides (persistent ones start it again each run),
 * not started. */
static int build(mpitopo__nbr_t *n, mpitopo__opkind_t op, const side_t *send, const side_t *recv,
                 const mpitopo__choice_t *c, mpitopo_request_t *out, const char *func)
{
    (void)c;
    mpitopo_request_t r = mpitopo__request_host_step(n);
    host_t *h = mpitopo__calloc(1, sizeof *h);
    if (!r || !h) {
        mpitopo__free(h);
        mpitopo__request_release(r);
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func, "out of memory for a request");
    }
    *h = (host_t){.op = op, .send = *send, .recv = *recv};
    r->ctx = h;
    r->ctx_free = host_free;
    r->rebase = host_rebase;
    r->host_post = host_post;
    r->host_own_types = host_own_datatypes;
    *out = r;
    return MPITOPO_SUCCESS;
}

/* Asked for by name: wherever the host MPI has the operations. */
static int applies(mpitopo__nbr_t *n, mpitopo__opkind_t op, long long sb, long long rb, const char **why,
                   const char *func)
{
    (void)n;
    (void)op;
    (void)sb;
    (void)rb;
    (void)func;
    *why = mpitopo__host_available() ? NULL : "the host MPI has no neighbourhood collectives";
    return MPITOPO_SUCCESS;
}

const mpitopo__sched_ops_t mpitopo__host_ops = {.applies = applies, .build = build};
