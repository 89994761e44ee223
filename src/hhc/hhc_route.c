/*
 * Routed point-to-point messages of the HHC (M.-H. Ok, "A
 * Process-to-Processor Mapping of HHC Topology in MPI", section 3.3):
 * a message to a node that is not a neighbour travels the network's route,
 * one MPI message per hop on the tree or on a cube (the duplicates ftree
 * and fcube, tag HOP_TAG: the user's traffic, on the world or on the
 * topology communicators, never matches it), and the processes in between
 * forward it. A hop is the header {destination, source, tag, payload
 * bytes} followed by the payload packed with PMPI_Pack, so any datatype
 * travels as bytes.
 *
 * Forwarding happens in progress(), called by every routed function (and
 * while it waits): it receives the hops that came, keeps those for this
 * node and passes the others on with an Isend. A message for this node
 * completes the first posted receive it matches (posting order), else waits
 * in the arrived queue (arrival order); a new receive takes the first
 * arrived message it matches, else is posted: MPI's matching rule. The
 * route between two nodes is fixed and every hop keeps MPI's order between
 * one pair on one communicator, so messages between two nodes keep their
 * order.
 *
 * Requests: an isend completes when the Isend of its first hop has
 * completed (its packed copy is then released); an irecv when a message
 * matched it and was unpacked into its buffer.
 *
 * The fence counts hops: every process adds up the hops it sent and those
 * it received; when two rounds in a row give the same sums and they are
 * equal, none is in flight (Mattern's four-counter method: counts taken at
 * different moments cannot agree twice by accident).
 */
#include "hhc/hhc_internal.h"
#include "network/network_internal.h"

#include <limits.h>
#include <sched.h>
#include <string.h>

#define HOP_TAG 1801
#define HEADER (4 * (int)sizeof(int))

/* The two queues of an HHC (arrived messages, posted receives) are singly
 * linked lists with a tail pointer, of two types: these write their
 * operations once. Unlink x, which follows prev (NULL: x is the head). */
#define QUEUE_UNLINK(head, tail, prev, x)                                                              \
    do {                                                                                               \
        if (prev)                                                                                      \
            (prev)->next = (x)->next;                                                                  \
        else                                                                                           \
            (head) = (x)->next;                                                                        \
        if ((tail) == (x))                                                                             \
            (tail) = (prev);                                                                           \
        (x)->next = NULL;                                                                              \
    } while (0)
/* Append x (its next already NULL) at the tail. */
#define QUEUE_APPEND(head, tail, x)                                                                    \
    do {                                                                                               \
        if (tail)                                                                                      \
            (tail)->next = (x);                                                                        \
        else                                                                                           \
            (head) = (x);                                                                              \
        (tail) = (x);                                                                                  \
    } while (0)

/* Send the hop buf (header and payload, len bytes) one step towards its
 * destination node dst. */
static int forward(mpitopo_hhc_t *h, char *buf, int len, int dst, mpitopo_hhc_request_t owner)
{
    int path[64], which, rank;
    mpitopo__hhc_path(h->dim, h->node, dst, path);
    mpitopo__hhc_hop(h->dim, h->node, path[0], &which, &rank);
    hhc_hop_t *hop = mpitopo__malloc(sizeof *hop);
    if (!hop) {
        mpitopo__free(buf);
        return MPITOPO_NOMEM("a routed message");
    }
    hop->buf = buf;
    hop->owner = owner;
    int rc = PMPI_Isend(buf, len, MPI_BYTE, rank, HOP_TAG, which == MPITOPO_HHC_TREE ? h->ftree : h->fcube,
                        &hop->req);
    if (rc != MPI_SUCCESS) {
        mpitopo__free(buf);
        mpitopo__free(hop);
        return rc;
    }
    hop->next = h->hops;
    h->hops = hop;
    h->hops_sent++;
    return MPITOPO_SUCCESS;
}

/* Whether a message from node src with tag matches receive r. */
static int matches(const mpitopo_hhc_request_t r, int src, int tag)
{
    return (r->src < 0 || r->src == src) && (r->tag == MPI_ANY_TAG || r->tag == tag);
}

/* Complete receive r with message m (unpacked into r's buffer when it
 * fits; a longer one is dropped and r fails). Frees m. */
static void deliver(mpitopo_hhc_t *h, mpitopo_hhc_request_t r, hhc_msg_t *m)
{
    r->from = m->src;
    r->tag_out = m->tag;
    r->nbytes = m->nbytes;
    if (m->nbytes > r->room) {
        r->error = MPITOPO_ERR_ARG; /* worded by the wait or test */
    } else {
        int pos = 0;
        r->error = PMPI_Unpack(m->data + HEADER, m->nbytes, &pos, r->buf, r->count, r->type, h->ftree);
    }
    r->done = 1;
    mpitopo__free(m->data);
    mpitopo__free(m);
}

/* A message for this node (takes buf): to the first posted receive it
 * matches, else to the arrived queue. */
static int arrive(mpitopo_hhc_t *h, char *buf)
{
    hhc_msg_t *m = mpitopo__malloc(sizeof *m);
    if (!m) {
        mpitopo__free(buf);
        return MPITOPO_NOMEM("a routed message");
    }
    int head[4];
    memcpy(head, buf, sizeof head);
    *m = (hhc_msg_t){.src = head[1], .tag = head[2], .nbytes = head[3], .data = buf};
    mpitopo_hhc_request_t prev = NULL;
    for (mpitopo_hhc_request_t r = h->posted; r; prev = r, r = r->next) {
        if (!matches(r, m->src, m->tag))
            continue;
        QUEUE_UNLINK(h->posted, h->posted_tail, prev, r);
        deliver(h, r, m);
        return MPITOPO_SUCCESS;
    }
    QUEUE_APPEND(h->arrived, h->arrived_tail, m);
    return MPITOPO_SUCCESS;
}

/* Receive what came on comm and pass it on; *moved when anything did. */
static int drain(mpitopo_hhc_t *h, MPI_Comm comm, int *moved)
{
    for (;;) {
        int flag = 0, len = 0, rc;
        MPI_Status st;
        if ((rc = PMPI_Iprobe(MPI_ANY_SOURCE, HOP_TAG, comm, &flag, &st)) != MPI_SUCCESS || !flag)
            return rc;
        if ((rc = PMPI_Get_count(&st, MPI_BYTE, &len)) != MPI_SUCCESS)
            return rc;
        char *buf = mpitopo__malloc(len > 0 ? (size_t)len : 1);
        if (!buf)
            return MPITOPO_NOMEM("a routed message");
        if ((rc = PMPI_Recv(buf, len, MPI_BYTE, st.MPI_SOURCE, HOP_TAG, comm, MPI_STATUS_IGNORE)) !=
            MPI_SUCCESS) {
            mpitopo__free(buf);
            return rc;
        }
        h->hops_received++;
        *moved = 1;
        int dst;
        memcpy(&dst, buf, sizeof dst);
        rc = dst == h->node ? arrive(h, buf) : forward(h, buf, len, dst, NULL);
        if (rc != MPITOPO_SUCCESS)
            return rc;
    }
}

/* One round of progress: incoming hops, then the completed sends. */
static int progress(mpitopo_hhc_t *h, int *moved)
{
    int rc = drain(h, h->ftree, moved);
    if (rc == MPITOPO_SUCCESS && h->fcube != MPI_COMM_NULL)
        rc = drain(h, h->fcube, moved);
    for (hhc_hop_t **p = &h->hops; rc == MPITOPO_SUCCESS && *p;) {
        int done = 0;
        if ((rc = PMPI_Test(&(*p)->req, &done, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
            break;
        if (!done) {
            p = &(*p)->next;
            continue;
        }
        hhc_hop_t *hop = *p;
        *p = hop->next;
        if (hop->owner)
            hop->owner->done = 1;
        mpitopo__free(hop->buf);
        mpitopo__free(hop);
        *moved = 1;
    }
    return rc;
}

/* Progress, yielding the core when nothing moved (oversubscribed runs). */
static int progress_wait(mpitopo_hhc_t *h)
{
    int moved = 0, rc = progress(h, &moved);
    if (rc == MPITOPO_SUCCESS && !moved)
        sched_yield();
    return rc;
}

/* Pack and post a message to node dst; owner: the isend request the first
 * hop completes (NULL: a blocking send). */
static int send_impl(const char *fn, const void *buf, int count, MPI_Datatype type, long long dst, int tag,
                     mpitopo_hhc_t *h, mpitopo_hhc_request_t owner)
{
    int node, rc = mpitopo__hhc_check_id(h, fn, "dst", dst, &node);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    if (count < 0 || tag < 0)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, fn, "%s = %d must be >= 0", count < 0 ? "count" : "tag",
                               count < 0 ? count : tag);
    int size = 0;
    if ((rc = PMPI_Pack_size(count, type, h->ftree, &size)) != MPI_SUCCESS)
        return rc;
    if (size > INT_MAX - HEADER)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, fn, "count = %d: %d packed bytes, too many for one message",
                               count, size);
    char *msg = mpitopo__malloc((size_t)HEADER + (size_t)size);
    if (!msg)
        return MPITOPO_NOMEM("a routed message");
    int pos = 0;
    if ((rc = PMPI_Pack(buf, count, type, msg + HEADER, size, &pos, h->ftree)) != MPI_SUCCESS) {
        mpitopo__free(msg);
        return rc;
    }
    int head[4] = {node, h->node, tag, pos};
    memcpy(msg, head, sizeof head);
    if (node == h->node) {
        if (owner)
            owner->done = 1;
        return arrive(h, msg);
    }
    if ((rc = forward(h, msg, HEADER + pos, node, owner)) != MPITOPO_SUCCESS)
        return rc;
    int moved = 0;
    return progress(h, &moved);
}

int mpitopo_hhc_send(const void *buf, int count, MPI_Datatype type, long long dst, int tag, mpitopo_hhc_t *hhc)
{
    return mpitopo__mpi_result(__func__, send_impl(__func__, buf, count, type, dst, tag, hhc, NULL));
}

static mpitopo_hhc_request_t request_new(mpitopo_hhc_t *h, int is_recv)
{
    mpitopo_hhc_request_t r = mpitopo__calloc(1, sizeof *r);
    if (r) {
        r->h = h;
        r->dim = h->dim;
        r->is_recv = is_recv;
        r->type = MPI_DATATYPE_NULL;
    }
    return r;
}

static void request_release(mpitopo_hhc_request_t r)
{
    if (r && r->owned_type)
        PMPI_Type_free(&r->type);
    mpitopo__free(r);
}

int mpitopo_hhc_isend(const void *buf, int count, MPI_Datatype type, long long dst, int tag, mpitopo_hhc_t *hhc,
                      mpitopo_hhc_request_t *request)
{
    static const char *const fn = "mpitopo_hhc_isend";
    if (!request)
        return mpitopo__mpi_result(fn, MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, fn, "request = NULL"));
    *request = MPITOPO_HHC_REQUEST_NULL;
    if (!hhc)
        return mpitopo__mpi_result(fn, MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, fn, "hhc = NULL"));
    mpitopo_hhc_request_t r = request_new(hhc, 0);
    if (!r)
        return mpitopo__mpi_result(fn, MPITOPO_NOMEM("a routed request"));
    int rc = send_impl(fn, buf, count, type, dst, tag, hhc, r);
    if (rc != MPITOPO_SUCCESS) {
        /* Posted (a later progress failed): the hop still names r. */
        for (hhc_hop_t *hop = hhc->hops; hop; hop = hop->next)
            if (hop->owner == r)
                hop->owner = NULL;
        request_release(r);
        return mpitopo__mpi_result(fn, rc);
    }
    *request = r;
    return MPITOPO_SUCCESS;
}

/* The first message that came for this node from src with tag, unlinked. */
static hhc_msg_t *take(mpitopo_hhc_t *h, int src, int tag)
{
    hhc_msg_t *prev = NULL;
    for (hhc_msg_t *m = h->arrived; m; prev = m, m = m->next) {
        if ((src >= 0 && m->src != src) || (tag != MPI_ANY_TAG && m->tag != tag))
            continue;
        QUEUE_UNLINK(h->arrived, h->arrived_tail, prev, m);
        return m;
    }
    return NULL;
}

/* The checks of a receive; *node the source node (-1: any), *room the
 * packed bytes of count elements. */
static int recv_check(const char *fn, int count, MPI_Datatype type, long long src, mpitopo_hhc_t *h, int *node,
                      int *room)
{
    int rc;
    *node = -1;
    if (!h)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, fn, "hhc = NULL");
    if (src != MPITOPO_HHC_ANY && (rc = mpitopo__hhc_check_id(h, fn, "src", src, node)) != MPITOPO_SUCCESS)
        return rc;
    if (count < 0)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, fn, "count = %d must be >= 0", count);
    return PMPI_Pack_size(count, type, h->ftree, room);
}

/* Post a receive: matched at once by an arrived message, else queued. */
static int irecv_impl(const char *fn, void *buf, int count, MPI_Datatype type, long long src, int tag,
                      mpitopo_hhc_t *h, mpitopo_hhc_request_t *out)
{
    int node, room = 0, rc = recv_check(fn, count, type, src, h, &node, &room);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    mpitopo_hhc_request_t r = request_new(h, 1);
    if (!r)
        return MPITOPO_NOMEM("a routed request");
    *r = (struct mpitopo_hhc_request){
        .h = h, .dim = h->dim, .is_recv = 1, .buf = buf, .count = count, .room = room, .type = type,
        .src = node, .tag = tag};
    /* Datatypes may be freed after the call, as with MPI_Irecv. */
    int ni, na, nd, comb;
    if ((rc = PMPI_Type_get_envelope(type, &ni, &na, &nd, &comb)) == MPI_SUCCESS && comb != MPI_COMBINER_NAMED &&
        (rc = PMPI_Type_dup(type, &r->type)) == MPI_SUCCESS)
        r->owned_type = 1;
    if (rc != MPI_SUCCESS) {
        mpitopo__free(r);
        return rc;
    }
    /* Messages already here first: the earliest that matches. */
    int moved = 0;
    hhc_msg_t *m = take(h, node, tag);
    if (m) {
        deliver(h, r, m);
    } else {
        QUEUE_APPEND(h->posted, h->posted_tail, r);
    }
    *out = r;
    /* Then move what came (r may be matched by it). */
    return progress(h, &moved);
}

int mpitopo_hhc_irecv(void *buf, int count, MPI_Datatype type, long long src, int tag, mpitopo_hhc_t *hhc,
                      mpitopo_hhc_request_t *request)
{
    static const char *const fn = "mpitopo_hhc_irecv";
    if (!request)
        return mpitopo__mpi_result(fn, MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, fn, "request = NULL"));
    *request = MPITOPO_HHC_REQUEST_NULL;
    /* A failed progress leaves the posted receive: it is the caller's. */
    return mpitopo__mpi_result(fn, irecv_impl(fn, buf, count, type, src, tag, hhc, request));
}

/* Unlink a posted receive (the HHC is being freed, or the request is). */
static void unpost(mpitopo_hhc_t *h, mpitopo_hhc_request_t r)
{
    mpitopo_hhc_request_t prev = NULL;
    for (mpitopo_hhc_request_t q = h->posted; q; prev = q, q = q->next)
        if (q == r) {
            QUEUE_UNLINK(h->posted, h->posted_tail, prev, r);
            return;
        }
}

/* Wait for (wait = 1) or test one request; on completion report it and
 * release it. */
static int finish(const char *fn, mpitopo_hhc_request_t *request, int wait, int *flag, long long *from,
                  int *tag_out)
{
    if (flag)
        *flag = 0;
    if (!request)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, fn, "request = NULL");
    mpitopo_hhc_request_t r = *request;
    if (!r) {
        if (flag)
            *flag = 1;
        return MPITOPO_SUCCESS;
    }
    int rc = MPITOPO_SUCCESS, moved = 0;
    if (r->h && !r->done)
        rc = wait ? progress_wait(r->h) : progress(r->h, &moved);
    while (rc == MPITOPO_SUCCESS && wait && !r->done && r->h)
        rc = progress_wait(r->h);
    if (rc != MPITOPO_SUCCESS)
        return rc; /* the request stays pending */
    if (!r->done && r->h)
        return MPITOPO_SUCCESS;
    if (!r->done) /* the HHC was freed under it */
        rc = MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, fn, "the request's HHC was freed before it completed");
    else if (r->error == MPITOPO_ERR_ARG)
        rc = MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, fn,
                             "count = %d: the message from node %d is longer (%d bytes packed, room for %d); "
                             "it is dropped",
                             r->count, r->from, r->nbytes, r->room);
    else
        rc = r->error;
    if (rc == MPITOPO_SUCCESS && r->is_recv) {
        if (from)
            *from = (long long)mpitopo__hhc_id(r->dim, r->from);
        if (tag_out)
            *tag_out = r->tag_out;
    }
    if (flag)
        *flag = 1;
    request_release(r);
    *request = MPITOPO_HHC_REQUEST_NULL;
    return rc;
}

int mpitopo_hhc_wait(mpitopo_hhc_request_t *request, long long *from, int *tag)
{
    return mpitopo__mpi_result(__func__, finish(__func__, request, 1, NULL, from, tag));
}

int mpitopo_hhc_test(mpitopo_hhc_request_t *request, int *flag, long long *from, int *tag)
{
    if (!flag)
        return mpitopo__mpi_result(__func__, MPITOPO_FAIL(MPITOPO_ERR_ARG, "flag = NULL"));
    return mpitopo__mpi_result(__func__, finish(__func__, request, 0, flag, from, tag));
}

int mpitopo_hhc_waitall(int count, mpitopo_hhc_request_t requests[])
{
    static const char *const fn = "mpitopo_hhc_waitall";
    if (count < 0 || (count > 0 && !requests))
        return mpitopo__mpi_result(fn, MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, fn, count < 0 ? "count = %d must be >= 0"
                                                                                        : "requests = NULL (count = %d)",
                                                       count));
    /* Every request completes (each one's progress moves the others);
     * the first error is returned. */
    int first = MPITOPO_SUCCESS;
    for (int i = 0; i < count; i++) {
        int rc = finish(fn, &requests[i], 1, NULL, NULL, NULL);
        if (rc != MPITOPO_SUCCESS && first == MPITOPO_SUCCESS)
            first = rc;
    }
    return mpitopo__mpi_result(fn, first);
}

int mpitopo_hhc_progress(mpitopo_hhc_t *hhc)
{
    if (!hhc)
        return mpitopo__mpi_result(__func__, MPITOPO_FAIL(MPITOPO_ERR_ARG, "hhc = NULL"));
    int moved = 0;
    return mpitopo__mpi_result(__func__, progress(hhc, &moved));
}

int mpitopo_hhc_recv(void *buf, int count, MPI_Datatype type, long long src, int tag, mpitopo_hhc_t *hhc,
                     long long *from, int *tag_out)
{
    static const char *const fn = "mpitopo_hhc_recv";
    mpitopo_hhc_request_t r = MPITOPO_HHC_REQUEST_NULL;
    int rc = irecv_impl(fn, buf, count, type, src, tag, hhc, &r);
    if (rc == MPITOPO_SUCCESS) {
        rc = finish(fn, &r, 1, NULL, from, tag_out);
    } else if (r) {
        if (!r->done)
            unpost(hhc, r);
        request_release(r);
    }
    return mpitopo__mpi_result(fn, rc);
}

/* try_recv: one round of progress, then the earliest arrived message that
 * matches (posted receives have had theirs already). */
static int try_recv_impl(const char *fn, void *buf, int count, MPI_Datatype type, long long src, int tag,
                         mpitopo_hhc_t *h, int *flag, long long *from, int *tag_out)
{
    if (flag)
        *flag = 0;
    int node, room = 0, moved = 0, rc = recv_check(fn, count, type, src, h, &node, &room);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    if (!flag)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, fn, "flag = NULL");
    if ((rc = progress(h, &moved)) != MPITOPO_SUCCESS)
        return rc;
    hhc_msg_t *m = take(h, node, tag);
    if (!m)
        return MPITOPO_SUCCESS;
    struct mpitopo_hhc_request r = {.h = h, .is_recv = 1, .buf = buf, .count = count, .room = room, .type = type};
    deliver(h, &r, m);
    if (r.error == MPITOPO_ERR_ARG)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, fn,
                               "count = %d: the message from node %d is longer (%d bytes packed, room for %d); "
                               "it is dropped",
                               count, r.from, r.nbytes, room);
    if (r.error != MPI_SUCCESS)
        return r.error;
    if (from)
        *from = (long long)mpitopo__hhc_id(h->dim, r.from);
    if (tag_out)
        *tag_out = r.tag_out;
    *flag = 1;
    return MPITOPO_SUCCESS;
}

int mpitopo_hhc_try_recv(void *buf, int count, MPI_Datatype type, long long src, int tag, mpitopo_hhc_t *hhc,
                         int *flag, long long *from, int *tag_out)
{
    return mpitopo__mpi_result(__func__,
                               try_recv_impl(__func__, buf, count, type, src, tag, hhc, flag, from, tag_out));
}

int mpitopo__hhc_fence(mpitopo_hhc_t *h, const char *func)
{
    if (!h)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "hhc = NULL");
    long long last[2] = {-1, -1};
    for (;;) {
        long long mine[2] = {h->hops_sent, h->hops_received}, sum[2];
        MPI_Request req;
        int rc = PMPI_Iallreduce(mine, sum, 2, MPI_LONG_LONG, MPI_SUM, h->ftree, &req);
        for (int done = 0; rc == MPI_SUCCESS && !done;)
            if ((rc = PMPI_Test(&req, &done, MPI_STATUS_IGNORE)) == MPI_SUCCESS && !done)
                rc = progress_wait(h);
        if (rc != MPITOPO_SUCCESS)
            return rc;
        if (sum[0] == sum[1] && sum[0] == last[0] && sum[1] == last[1])
            break;
        last[0] = sum[0];
        last[1] = sum[1];
    }
    /* Every hop was received: the sends still listed complete now. */
    int rc = MPITOPO_SUCCESS;
    while (rc == MPITOPO_SUCCESS && h->hops)
        rc = progress_wait(h);
    return rc;
}

int mpitopo_hhc_fence(mpitopo_hhc_t *hhc)
{
    return mpitopo__mpi_result(__func__, mpitopo__hhc_fence(hhc, __func__));
}

void mpitopo__hhc_route_release(mpitopo_hhc_t *h)
{
    while (h->arrived) {
        hhc_msg_t *m = h->arrived;
        h->arrived = m->next;
        mpitopo__free(m->data);
        mpitopo__free(m);
    }
    h->arrived_tail = NULL;
    /* Receives still posted stay with their owners, who learn from their
     * wait or test that the HHC is gone. */
    while (h->posted) {
        mpitopo_hhc_request_t r = h->posted;
        h->posted = r->next;
        r->next = NULL;
        r->h = NULL;
    }
    h->posted_tail = NULL;
    while (h->hops) {
        hhc_hop_t *hop = h->hops;
        h->hops = hop->next;
        if (hop->owner) { /* a send whose first hop never completed */
            hop->owner->done = 1;
            hop->owner->error = MPI_ERR_OTHER;
        }
        /* Only after a failed fence: MPI may still read the buffer, which
         * is left to leak rather than freed under it. */
        PMPI_Request_free(&hop->req);
        mpitopo__free(hop);
    }
}
