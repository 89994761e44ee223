/*
 * Routed point-to-point messages of the HHC (seed paper 002, section 3.3):
 * a message to a node that is not a neighbour travels the network's route,
 * one MPI message per hop on the tree or on a cube (the duplicates ftree
 * and fcube, tag HOP_TAG), and the processes in between forward it. A hop
 * is the header {destination, source, tag, payload bytes} followed by the
 * payload packed with PMPI_Pack, so any datatype travels as bytes.
 *
 * Forwarding happens in progress(), called by every routed function (and
 * while it waits): it receives the hops that came, keeps those for this node (in
 * arrival order) and passes the others on with an Isend. The route between
 * two nodes is fixed and every hop keeps MPI's order between one pair on
 * one communicator, so messages between two nodes keep their order.
 *
 * The fence counts hops: every process adds up the hops it sent and those
 * it received; when two rounds in a row give the same sums and they are
 * equal, none is in flight (Mattern's four-counter method: counts taken at
 * different moments cannot agree twice by accident).
 */
#include "mpi/hhc_internal.h"
#include "network/network_internal.h"

#include <sched.h>
#include <string.h>

#define HOP_TAG 1801
#define HEADER (4 * (int)sizeof(int))

/* Send the hop buf (header and payload, len bytes) one step towards its
 * destination node dst. */
static int forward(mpitopo_hhc_t *h, char *buf, int len, int dst)
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

/* Keep a message for this node (takes buf). */
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
    if (h->arrived_tail)
        h->arrived_tail->next = m;
    else
        h->arrived = m;
    h->arrived_tail = m;
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
        rc = dst == h->node ? arrive(h, buf) : forward(h, buf, len, dst);
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

static int send_impl(const void *buf, int count, MPI_Datatype type, long long dst, int tag, mpitopo_hhc_t *h)
{
    int node, rc = mpitopo__hhc_check_id(h, "mpitopo_hhc_send", "dst", dst, &node);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    if (count < 0 || tag < 0)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, "mpitopo_hhc_send", "%s = %d must be >= 0",
                               count < 0 ? "count" : "tag", count < 0 ? count : tag);
    int size = 0;
    if ((rc = PMPI_Pack_size(count, type, h->ftree, &size)) != MPI_SUCCESS)
        return rc;
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
    if (node == h->node)
        return arrive(h, msg);
    if ((rc = forward(h, msg, HEADER + pos, node)) != MPITOPO_SUCCESS)
        return rc;
    int moved = 0;
    return progress(h, &moved);
}

int mpitopo_hhc_send(const void *buf, int count, MPI_Datatype type, long long dst, int tag, mpitopo_hhc_t *hhc)
{
    return mpitopo__mpi_result(__func__, send_impl(buf, count, type, dst, tag, hhc));
}

/* The first message that came for this node from src with tag, unlinked. */
static hhc_msg_t *take(mpitopo_hhc_t *h, int src, int tag)
{
    hhc_msg_t *prev = NULL;
    for (hhc_msg_t *m = h->arrived; m; prev = m, m = m->next) {
        if ((src >= 0 && m->src != src) || (tag != MPI_ANY_TAG && m->tag != tag))
            continue;
        if (prev)
            prev->next = m->next;
        else
            h->arrived = m->next;
        if (h->arrived_tail == m)
            h->arrived_tail = prev;
        return m;
    }
    return NULL;
}

/* recv (wait = 1) and try_recv (wait = 0: one round of progress, *flag
 * whether a message was received). */
static int recv_impl(const char *fn, void *buf, int count, MPI_Datatype type, long long src, int tag,
                     mpitopo_hhc_t *h, int wait, int *flag, long long *from, int *tag_out)
{
    int node = -1, rc = MPITOPO_SUCCESS;
    if (flag)
        *flag = 0;
    if (!h)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, fn, "hhc = NULL");
    if (src != MPITOPO_HHC_ANY && (rc = mpitopo__hhc_check_id(h, fn, "src", src, &node)))
        return rc;
    if (count < 0)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, fn, "count = %d must be >= 0", count);
    if (!wait && !flag)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, fn, "flag = NULL");
    int room = 0, moved = 0;
    if ((rc = PMPI_Pack_size(count, type, h->ftree, &room)) != MPI_SUCCESS)
        return rc;
    hhc_msg_t *m;
    if (!wait && (rc = progress(h, &moved)) != MPITOPO_SUCCESS)
        return rc;
    while (!(m = take(h, node, tag))) {
        if (!wait)
            return MPITOPO_SUCCESS;
        if ((rc = progress_wait(h)) != MPITOPO_SUCCESS)
            return rc;
    }
    if (m->nbytes > room) {
        rc = MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, fn,
                             "count = %d: the message from node %d is longer (%d bytes packed, room for %d)",
                             count, m->src, m->nbytes, room);
    } else {
        int pos = 0;
        rc = PMPI_Unpack(m->data + HEADER, m->nbytes, &pos, buf, count, type, h->ftree);
        if (from)
            *from = (long long)mpitopo__hhc_id(h->dim, m->src);
        if (tag_out)
            *tag_out = m->tag;
        if (flag)
            *flag = 1;
    }
    mpitopo__free(m->data);
    mpitopo__free(m);
    return rc;
}

int mpitopo_hhc_recv(void *buf, int count, MPI_Datatype type, long long src, int tag, mpitopo_hhc_t *hhc,
                     long long *from, int *tag_out)
{
    return mpitopo__mpi_result(__func__,
                               recv_impl(__func__, buf, count, type, src, tag, hhc, 1, NULL, from, tag_out));
}

int mpitopo_hhc_try_recv(void *buf, int count, MPI_Datatype type, long long src, int tag, mpitopo_hhc_t *hhc,
                         int *flag, long long *from, int *tag_out)
{
    return mpitopo__mpi_result(__func__,
                               recv_impl(__func__, buf, count, type, src, tag, hhc, 0, flag, from, tag_out));
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
    while (h->hops) {
        hhc_hop_t *hop = h->hops;
        h->hops = hop->next;
        /* Only after a failed fence: MPI may still read the buffer, which
         * is left to leak rather than freed under it. */
        PMPI_Request_free(&hop->req);
        mpitopo__free(hop);
    }
}
