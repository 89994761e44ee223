/*
 * Entry points of the global collectives (coll.h, mpitopo_collectives):
 * argument checks, the choice of algorithm, heuristic and output order
 * (configuration in gcoll_config.c), the order of the communicator
 * (gcoll_order.c) and the schedule (gcoll_alg.c), run on the request
 * engine; blocking forms wait for their request.
 */
#include "coll/global/gcoll_internal.h"
#include "map/collmap.h"

#include <limits.h>
#include <stdio.h>

static int is_pow2(int p)
{
    return p > 0 && (p & (p - 1)) == 0;
}

static int check_type(MPI_Datatype t, const char *name, const char *func)
{
    if (t == MPI_DATATYPE_NULL)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "%s = MPI_DATATYPE_NULL", name);
    return MPITOPO_SUCCESS;
}

static int check_count(int c, const char *name, const char *func)
{
    if (c < 0)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "%s = %d must be >= 0", name, c);
    return MPITOPO_SUCCESS;
}

static int check_root(int root, int p, const char *func)
{
    if (root < 0 || root >= p)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "root = %d is not a rank of comm (size %d)",
                               root, p);
    return MPITOPO_SUCCESS;
}

static int named(MPI_Datatype t)
{
    int ni, na, nd, comb;
    return PMPI_Type_get_envelope(t, &ni, &na, &nd, &comb) == MPI_SUCCESS &&
           comb == MPI_COMBINER_NAMED;
}

/* NULL is fine for a derived datatype (absolute addresses from MPI_BOTTOM). */
static int check_buf(const void *buf, long long bytes, MPI_Datatype t, const char *name,
                     const char *func)
{
    if (!buf && bytes > 0 && named(t))
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "%s = NULL with %lld bytes to move", name,
                               bytes);
    return MPITOPO_SUCCESS;
}

/* count x size of t, in *bytes. */
static int bytes_of(int count, MPI_Datatype t, long long *bytes, MPI_Aint *extent,
                    const char *func)
{
    int size;
    MPI_Aint lb, ext;
    int rc = PMPI_Type_size(t, &size);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_get_extent(t, &lb, &ext);
    if (rc != MPI_SUCCESS)
        return mpitopo__mpi_result(func, rc);
    *bytes = (long long)count * size;
    if (extent)
        *extent = ext;
    return MPITOPO_SUCCESS;
}

/* Whether recvcount elements of t are rb bytes laid out without gaps from
 * the buffer's start (then blocks can be moved as bytes in place). */
static int contiguous(MPI_Datatype t, long long rb, int recvcount)
{
    MPI_Aint lb, ext, tlb, text;
    int size;
    if (PMPI_Type_get_extent(t, &lb, &ext) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(t, &tlb, &text) != MPI_SUCCESS ||
        PMPI_Type_size(t, &size) != MPI_SUCCESS)
        return 0;
    return lb == 0 && tlb == 0 && ext == size && text == size && rb == (long long)recvcount * size;
}

static gview_t view_of(const gstate_t *s, const gorder_t *o)
{
    gview_t v = {.nbr = o->nbr, .p = s->size};
    if (o->reordered) {
        v.old_of_new = o->old_of_new;
        v.new_of_old = o->new_of_old;
        v.me = o->new_of_old[s->rank];
    } else {
        v.shift = o->root;
        v.me = (s->rank - o->root + s->size) % s->size;
    }
    return v;
}

/* Start req; blocking: wait for it (and *out stays NULL). */
static int run(mpitopo_request_t r, mpitopo_request_t *out, const char *func)
{
    int rc = MPITOPO_SUCCESS;
    if (out)
        rc = mpitopo__request_own_datatypes(r);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__request_start(r);
    if (rc != MPITOPO_SUCCESS) {
        mpitopo__request_release(r);
        return rc;
    }
    if (out) {
        *out = r;
        return MPITOPO_SUCCESS;
    }
    return mpitopo__request_wait(&r, func);
}

static int order_of(const mpitopo__gconf_t *c, int op)
{
    return c->order[op] < 0 ? MPITOPO__GO_INITCOMM : c->order[op];
}

/* p blocks of `bytes` bytes (and of `count` elements) in one message: the
 * bytes must stay below INT_MAX / 2, the elements within an int. */
static int check_blocks(int p, long long bytes, int count, const char *func)
{
    if ((long long)p * bytes > INT_MAX / 2 || (long long)p * count > INT_MAX)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_UNSUPPORTED, func,
                               "%d blocks of %lld bytes are too many for one message", p, bytes);
    return MPITOPO_SUCCESS;
}

/* The start of every entry point: *request (the nonblocking forms'; the
 * callers reject NULL) set to MPITOPO_REQUEST_NULL, then comm's state. */
static int begin(MPI_Comm comm, mpitopo_request_t *request, gstate_t **s, const char *func)
{
    if (request)
        *request = MPITOPO_REQUEST_NULL;
    int rc = mpitopo__gstate_get(comm, s, func);
    if (rc == MPITOPO_SUCCESS)
        (*s)->nb = request != NULL;
    return rc;
}

/* After the host MPI's own call (algorithm "mpi"): rc of the blocking
 * PMPI_* (request NULL), or of the nonblocking PMPI_I* that started q,
 * which a request of mpitopo then stands for. */
static int handed(gstate_t *s, int rc, MPI_Request q, mpitopo_request_t *request,
                  const char *func)
{
    if (rc != MPI_SUCCESS || !request)
        return mpitopo__mpi_result(func, rc);
    mpitopo__nbr_t *hn;
    mpitopo_request_t r = NULL;
    if ((rc = mpitopo__gstate_host_nbr(s, &hn, func)) == MPITOPO_SUCCESS &&
        !(r = mpitopo__request_of_host(hn, q)))
        rc = MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func, "out of memory for a request");
    if (rc != MPITOPO_SUCCESS) {
        /* The operation is under way on every process: finish it here. */
        PMPI_Wait(&q, MPI_STATUS_IGNORE);
        return rc;
    }
    return run(r, request, func);
}

/* ---- Allgather ---- */

static int allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                     mpitopo_request_t *request, gtrial_t *tr, const char *func)
{
    gstate_t *s;
    int rc = begin(comm, request, &s, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    int inplace = sendbuf == MPI_IN_PLACE;
    if (!inplace && ((rc = check_count(sendcount, "sendcount", func)) ||
                     (rc = check_type(sendtype, "sendtype", func))))
        return rc;
    if ((rc = check_count(recvcount, "recvcount", func)) ||
        (rc = check_type(recvtype, "recvtype", func)))
        return rc;
    long long sb = 0, rb = 0;
    MPI_Aint rext = 0;
    if ((rc = bytes_of(recvcount, recvtype, &rb, &rext, func)) ||
        (!inplace && (rc = bytes_of(sendcount, sendtype, &sb, NULL, func))))
        return rc;
    if (!inplace && sb != rb)
        return MPITOPO_FAIL_AS(MPI_ERR_TRUNCATE, func,
                               "sendcount %d of sendtype is %lld bytes; recvcount %d of recvtype "
                               "is %lld bytes (they must be equal)",
                               sendcount, sb, recvcount, rb);
    int p = s->size;
    if ((rc = check_buf(recvbuf, rb * p, recvtype, "recvbuf", func)) ||
        (!inplace && (rc = check_buf(sendbuf, sb, sendtype, "sendbuf", func))))
        return rc;
    if ((rc = check_blocks(p, rb, recvcount, func)))
        return rc;
    mpitopo__gconf_t c;
    if ((rc = mpitopo__gconf_of(comm, &s->conf_cache, &c, func)) != MPITOPO_SUCCESS ||
        (rc = mpitopo__gtune_pick(s, &c, MPITOPO__COLL_OP_ALLGATHER, rb, 0, tr, func)))
        return rc;
    int alg = c.alg[MPITOPO__COLL_OP_ALLGATHER];
    if (alg == MPITOPO__GA_MPI) {
        MPI_Request q = MPI_REQUEST_NULL;
        rc = request ? PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                       comm, &q)
                     : PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                      comm);
        mpitopo__gstate_log(s, MPITOPO__COLL_OP_ALLGATHER, alg, NULL, "");
        return handed(s, rc, q, request, func);
    }
    if (rb == 0)
        return MPITOPO_SUCCESS;
    const char *why = "";
    if ((alg == MPITOPO__GA_HIER || alg == MPITOPO__GA_HIERB) && !mpitopo__gstate_ready(s, 1)) {
        alg = MPITOPO__GA_AUTO;
        why = "(the node layout is not gathered yet and a nonblocking call does not wait for it: "
              "flat instead)";
    }
    if (alg == MPITOPO__GA_AUTO)
        alg = rb >= c.switch_bytes ? MPITOPO__GA_RING : is_pow2(p) ? MPITOPO__GA_RD : MPITOPO__GA_BRUCK;
    else if (alg == MPITOPO__GA_RD && !is_pow2(p)) {
        alg = MPITOPO__GA_BRUCK;
        why = "(rd needs a power of two: bruck instead)";
    }
    MPI_Aint stride = (MPI_Aint)recvcount * rext;
    gblock_t in = inplace ? (gblock_t){(char *)recvbuf + (MPI_Aint)s->rank * stride, recvcount,
                                       recvtype, 0}
                          : (gblock_t){(void *)(uintptr_t)sendbuf, sendcount, sendtype, 0};
    gblock_t out = {recvbuf, recvcount, recvtype, stride};
    mpitopo_request_t r = NULL;
    if (alg == MPITOPO__GA_HIER || alg == MPITOPO__GA_HIERB) {
        mpitopo__nbr_t *id;
        const ghier_t *h;
        if ((rc = mpitopo__gstate_hier(s, c.heur[MPITOPO__COLL_OP_ALLGATHER],
                                       alg == MPITOPO__GA_HIERB, (double)rb, &h, func)) ||
            (rc = mpitopo__gstate_ident(s, &id, func)))
            return rc;
        rc = mpitopo__gbuild_allgather_hier(id, h, p, s->rank, alg == MPITOPO__GA_HIERB, &in, &out,
                                            rb, &r, func);
        if (rc != MPITOPO_SUCCESS)
            return rc;
        char note[160];
        snprintf(note, sizeof note, "(%d nodes; leaders %s%s, %d node trees reordered)",
                 h->nnodes, h->leaders_reordered ? "reordered" : "in node order",
                 h->heur_req == MPITOPO__GH_NONE ? ", no heuristic" : "", h->nodes_reordered);
        mpitopo__gstate_log(s, MPITOPO__COLL_OP_ALLGATHER, alg, NULL, note);
        s->last_reordered[MPITOPO__COLL_OP_ALLGATHER] = h->leaders_reordered || h->nodes_reordered;
        return run(r, request, func);
    }
    int calg = alg == MPITOPO__GA_RD      ? MPITOPO__COLL_ALG_ALLGATHER_RD
               : alg == MPITOPO__GA_RING ? MPITOPO__COLL_ALG_ALLGATHER_RING
                                         : MPITOPO__COLL_ALG_ALLGATHER_BRUCK;
    gorder_t *o;
    rc = mpitopo__gstate_order(s, calg, c.heur[MPITOPO__COLL_OP_ALLGATHER], 0, (double)rb, &o, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    if (c.alg[MPITOPO__COLL_OP_ALLGATHER] == MPITOPO__GA_AUTO) {
        int pays;
        if ((rc = mpitopo__gstate_hier_pays(s, o, (double)rb, &pays, func)) != MPITOPO_SUCCESS)
            return rc;
        if (pays) {
            mpitopo__nbr_t *id;
            const ghier_t *h;
            int binomial = pays == MPITOPO__GA_HIERB;
            if ((rc = mpitopo__gstate_hier(s, c.heur[MPITOPO__COLL_OP_ALLGATHER], binomial,
                                           (double)rb, &h, func)) ||
                (rc = mpitopo__gstate_ident(s, &id, func)))
                return rc;
            rc = mpitopo__gbuild_allgather_hier(id, h, p, s->rank, binomial, &in, &out, rb, &r,
                                                func);
            if (rc != MPITOPO_SUCCESS)
                return rc;
            char note[128];
            snprintf(note, sizeof note, "(cheaper than flat %s: cost %.4g < %.4g)",
                     mpitopo__galg_name((mpitopo__galg_t)alg), s->hier_cost, s->flat_cost);
            mpitopo__gstate_log(s, MPITOPO__COLL_OP_ALLGATHER, pays, NULL, note);
            s->last_reordered[MPITOPO__COLL_OP_ALLGATHER] = h->leaders_reordered || h->nodes_reordered;
            return run(r, request, func);
        }
    }
    gview_t v = view_of(s, o);
    int order = order_of(&c, MPITOPO__COLL_OP_ALLGATHER);
    if (contiguous(recvtype, rb, recvcount) &&
        (alg == MPITOPO__GA_RING ||
         (alg == MPITOPO__GA_RD && (!o->reordered || order == MPITOPO__GO_INITCOMM))))
        rc = mpitopo__gbuild_allgather_direct(&v, alg, inplace, &in, recvbuf, rb, &r, func);
    else
        rc = mpitopo__gbuild_allgather(&v, alg, order, &in, &out, rb, &r, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    mpitopo__gstate_log(s, MPITOPO__COLL_OP_ALLGATHER, alg, o, why);
    return run(r, request, func);
}

int mpitopo_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    gtrial_t tr = {NULL, NULL, 0, 0, 0};
    int rc = allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, NULL, &tr,
                       __func__);
    return mpitopo__gtune_record(&tr, rc, __func__);
}

int mpitopo_iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                       mpitopo_request_t *request)
{
    if (!request)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "request = NULL");
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request, NULL,
                     __func__);
}

/* ---- Broadcast ---- */

static int bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
                 mpitopo_request_t *request, gtrial_t *tr, const char *func)
{
    gstate_t *s;
    int rc = begin(comm, request, &s, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    long long bytes = 0;
    if ((rc = check_count(count, "count", func)) || (rc = check_type(type, "type", func)) ||
        (rc = check_root(root, s->size, func)) || (rc = bytes_of(count, type, &bytes, NULL, func)) ||
        (rc = check_buf(buf, bytes, type, "buf", func)))
        return rc;
    mpitopo__gconf_t c;
    if ((rc = mpitopo__gconf_of(comm, &s->conf_cache, &c, func)) != MPITOPO_SUCCESS ||
        (rc = mpitopo__gtune_pick(s, &c, MPITOPO__COLL_OP_BCAST, bytes, root, tr, func)))
        return rc;
    int alg = c.alg[MPITOPO__COLL_OP_BCAST];
    if (alg == MPITOPO__GA_MPI) {
        MPI_Request q = MPI_REQUEST_NULL;
        rc = request ? PMPI_Ibcast(buf, count, type, root, comm, &q)
                     : PMPI_Bcast(buf, count, type, root, comm);
        mpitopo__gstate_log(s, MPITOPO__COLL_OP_BCAST, alg, NULL, "");
        return handed(s, rc, q, request, func);
    }
    if (bytes == 0)
        return MPITOPO_SUCCESS;
    alg = MPITOPO__GA_BINOMIAL;
    gorder_t *o;
    rc = mpitopo__gstate_order(s, MPITOPO__COLL_ALG_BCAST_BINOMIAL, c.heur[MPITOPO__COLL_OP_BCAST],
                               root, (double)bytes, &o, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    gview_t v = view_of(s, o);
    mpitopo_request_t r;
    rc = mpitopo__gbuild_bcast(&v, buf, count, type, &r, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    mpitopo__gstate_log(s, MPITOPO__COLL_OP_BCAST, alg, o, "");
    return run(r, request, func);
}

int mpitopo_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    gtrial_t tr = {NULL, NULL, 0, 0, 0};
    int rc = bcast(buf, count, type, root, comm, NULL, &tr, __func__);
    return mpitopo__gtune_record(&tr, rc, __func__);
}

int mpitopo_ibcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
                   mpitopo_request_t *request)
{
    if (!request)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "request = NULL");
    return bcast(buf, count, type, root, comm, request, NULL, __func__);
}

/* ---- Gather ---- */

static int gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                  mpitopo_request_t *request, gtrial_t *tr, const char *func)
{
    gstate_t *s;
    int rc = begin(comm, request, &s, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    if ((rc = check_root(root, s->size, func)))
        return rc;
    int p = s->size, am_root = s->rank == root, inplace = sendbuf == MPI_IN_PLACE;
    if (inplace && !am_root)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func,
                               "sendbuf = MPI_IN_PLACE on rank %d, which is not the root %d",
                               s->rank, root);
    long long sb = 0, rb = 0;
    MPI_Aint rext = 0;
    if (!inplace && ((rc = check_count(sendcount, "sendcount", func)) ||
                     (rc = check_type(sendtype, "sendtype", func)) ||
                     (rc = bytes_of(sendcount, sendtype, &sb, NULL, func)) ||
                     (rc = check_buf(sendbuf, sb, sendtype, "sendbuf", func))))
        return rc;
    if (am_root) {
        if ((rc = check_count(recvcount, "recvcount", func)) ||
            (rc = check_type(recvtype, "recvtype", func)) ||
            (rc = bytes_of(recvcount, recvtype, &rb, &rext, func)) ||
            (rc = check_buf(recvbuf, rb * p, recvtype, "recvbuf", func)))
            return rc;
        if (!inplace && sb != rb)
            return MPITOPO_FAIL_AS(MPI_ERR_TRUNCATE, func,
                                   "at the root, sendcount %d of sendtype is %lld bytes; "
                                   "recvcount %d of recvtype is %lld bytes (they must be equal)",
                                   sendcount, sb, recvcount, rb);
        if ((rc = check_blocks(p, rb, recvcount, func)))
            return rc;
        if (inplace)
            sb = rb;
    } else if ((rc = check_blocks(p, sb, 0, func)))
        return rc;
    mpitopo__gconf_t c;
    if ((rc = mpitopo__gconf_of(comm, &s->conf_cache, &c, func)) != MPITOPO_SUCCESS ||
        (rc = mpitopo__gtune_pick(s, &c, MPITOPO__COLL_OP_GATHER, sb, root, tr, func)))
        return rc;
    int alg = c.alg[MPITOPO__COLL_OP_GATHER];
    if (alg == MPITOPO__GA_MPI) {
        MPI_Request q = MPI_REQUEST_NULL;
        rc = request ? PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                    root, comm, &q)
                     : PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                                   comm);
        mpitopo__gstate_log(s, MPITOPO__COLL_OP_GATHER, alg, NULL, "");
        return handed(s, rc, q, request, func);
    }
    if (sb == 0)
        return MPITOPO_SUCCESS;
    alg = MPITOPO__GA_BINOMIAL;
    MPI_Aint stride = (MPI_Aint)recvcount * rext;
    gblock_t in = inplace ? (gblock_t){(char *)recvbuf + (MPI_Aint)root * stride, recvcount,
                                       recvtype, 0}
                          : (gblock_t){(void *)(uintptr_t)sendbuf, sendcount, sendtype, 0};
    gblock_t out = {recvbuf, recvcount, recvtype, stride};
    gorder_t *o;
    rc = mpitopo__gstate_order(s, MPITOPO__COLL_ALG_GATHER_BINOMIAL,
                               c.heur[MPITOPO__COLL_OP_GATHER], root, (double)sb, &o, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    gview_t v = view_of(s, o);
    mpitopo_request_t r;
    rc = mpitopo__gbuild_gather(&v, order_of(&c, MPITOPO__COLL_OP_GATHER), &in, &out, sb, &r, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    mpitopo__gstate_log(s, MPITOPO__COLL_OP_GATHER, alg, o, "");
    return run(r, request, func);
}

int mpitopo_gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    gtrial_t tr = {NULL, NULL, 0, 0, 0};
    int rc = gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, NULL,
                    &tr, __func__);
    return mpitopo__gtune_record(&tr, rc, __func__);
}

int mpitopo_igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                    mpitopo_request_t *request)
{
    if (!request)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "request = NULL");
    return gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request,
                  NULL, __func__);
}

/* ---- Allreduce ---- */

static int allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                     MPI_Comm comm, mpitopo_request_t *request, gtrial_t *tr, const char *func)
{
    gstate_t *s;
    int rc = begin(comm, request, &s, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    long long bytes = 0;
    if ((rc = check_count(count, "count", func)) || (rc = check_type(type, "type", func)) ||
        (rc = bytes_of(count, type, &bytes, NULL, func)) ||
        (rc = check_buf(recvbuf, bytes, type, "recvbuf", func)) ||
        (sendbuf != MPI_IN_PLACE && (rc = check_buf(sendbuf, bytes, type, "sendbuf", func))))
        return rc;
    if (op == MPI_OP_NULL)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "op = MPI_OP_NULL");
    if (sendbuf == recvbuf && bytes > 0)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func,
                               "sendbuf = recvbuf (use MPI_IN_PLACE as sendbuf)");
    int commute = 1;
    if ((rc = PMPI_Op_commutative(op, &commute)) != MPI_SUCCESS)
        return mpitopo__mpi_result(func, rc);
    mpitopo__gconf_t c;
    if ((rc = mpitopo__gconf_of(comm, &s->conf_cache, &c, func)) != MPITOPO_SUCCESS ||
        (rc = mpitopo__gtune_pick(s, &c, MPITOPO__COLL_OP_ALLREDUCE, bytes, commute, tr, func)))
        return rc;
    int alg = c.alg[MPITOPO__COLL_OP_ALLREDUCE];
    if (alg == MPITOPO__GA_MPI) {
        MPI_Request q = MPI_REQUEST_NULL;
        rc = request ? PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, &q)
                     : PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
        mpitopo__gstate_log(s, MPITOPO__COLL_OP_ALLREDUCE, alg, NULL, "");
        return handed(s, rc, q, request, func);
    }
    if (count == 0)
        return MPITOPO_SUCCESS;
    alg = MPITOPO__GA_RD;
    int heur = c.heur[MPITOPO__COLL_OP_ALLREDUCE];
    const char *why = "";
    if (!commute && heur != MPITOPO__GH_NONE) {
        heur = MPITOPO__GH_NONE;
        why = "(operation not commutative: rank order kept)";
    }
    gorder_t *o;
    rc = mpitopo__gstate_order(s, MPITOPO__COLL_ALG_ALLREDUCE_RD, heur, 0, (double)bytes, &o, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    gview_t v = view_of(s, o);
    mpitopo_request_t r;
    rc = mpitopo__gbuild_allreduce(&v, sendbuf, recvbuf, count, type, op, commute, &r, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    mpitopo__gstate_log(s, MPITOPO__COLL_OP_ALLREDUCE, alg, o, why);
    return run(r, request, func);
}

int mpitopo_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                      MPI_Comm comm)
{
    gtrial_t tr = {NULL, NULL, 0, 0, 0};
    int rc = allreduce(sendbuf, recvbuf, count, type, op, comm, NULL, &tr, __func__);
    return mpitopo__gtune_record(&tr, rc, __func__);
}

int mpitopo_iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                       MPI_Op op, MPI_Comm comm, mpitopo_request_t *request)
{
    if (!request)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "request = NULL");
    return allreduce(sendbuf, recvbuf, count, type, op, comm, request, NULL, __func__);
}

/* Whether the shim routes a call to mpitopo: the configuration of comm
 * (gcoll_config.c) read through its state (gcoll_order.c). */
int mpitopo__coll_handles(int which, MPI_Comm comm, MPI_Datatype sendtype, MPI_Datatype recvtype,
                          MPI_Op op)
{
    if (which < 0 || which >= MPITOPO__COLL_NOPS || comm == MPI_COMM_NULL)
        return 0;
    int init = 0, fin = 1, inter = 1;
    if (PMPI_Initialized(&init) != MPI_SUCCESS || !init || PMPI_Finalized(&fin) != MPI_SUCCESS ||
        fin || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return 0;
    mpitopo__gconf_t c;
    gstate_t *s;
    if (mpitopo__gstate_get(comm, &s, "mpitopo_coll_handles") != MPITOPO_SUCCESS ||
        mpitopo__gconf_of(comm, &s->conf_cache, &c, "mpitopo_coll_handles") != MPITOPO_SUCCESS ||
        c.off ||
        c.alg[which] == MPITOPO__GA_MPI)
        return 0;
    /* The answer must be the same on every process (or the processes would
     * run different collectives): the datatypes are not looked at (a
     * gather's receive type matters at its root only, MPI_IN_PLACE makes the
     * send type meaningless); mpitopo reports bad ones itself. */
    (void)sendtype;
    (void)recvtype;
    if (which == MPITOPO__COLL_OP_ALLREDUCE &&
        (op == MPI_OP_NULL || op == MPI_REPLACE || op == MPI_NO_OP))
        return 0;
    return 1;
}

int mpitopo_coll_handles(int which, MPI_Comm comm, MPI_Datatype sendtype, MPI_Datatype recvtype,
                         MPI_Op op)
{
    return mpitopo__coll_handles(which, comm, sendtype, recvtype, op);
}
