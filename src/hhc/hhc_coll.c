/*
 * Collectives over the whole HHC, the ones M.-H. Ok's paper ("A
 * Process-to-Processor Mapping of HHC Topology in MPI", section 3.3)
 * leaves "not available": the tree for the centre-leaf links, and for
 * the broadcast and the allreduce every cube's Cartesian communicator
 * inside the cube (the duplicates ftree and fcube, tag COLL_TAG, so that
 * the user's traffic on the topology communicators never matches ours).
 *
 * Broadcast from root. The chain is root and its centres up to the top
 * centre. A chain node above root receives from the chain node below it; a
 * cube is entered at one leaf, the chain node when the cube's centre is
 * above root on the chain (it also sends the data up), else leaf 0, which
 * receives from the centre; then the cube broadcasts from that leaf. Data
 * only flows from a node that has it to one that waits for it, along a tree,
 * so the blocking calls cannot deadlock.
 *
 * Gather: the broadcast run backwards, blocks packed in node order. The
 * nodes are numbered in post-order, so the subtree of a node is the run of
 * numbers that ends with it and a cube's leaves' subtrees are consecutive
 * runs of one size, in leaf position order. The chain (root and its
 * centres) receives from above: a centre above root sends its child on
 * the chain everything outside the centre's subtree plus its own block
 * (one message of an indexed type), which it received the same way, and
 * the cube of such a centre gathers its other leaves' subtrees over its
 * Cartesian communicator (PMPI_Gather on fcube) into that child, the cube's
 * links adding to the child's tree link. A cube off the chain sends its
 * leaves' subtrees to its centre, each over its own centre-leaf link at
 * once (auto, the default); with info mpitopo_hhc_gather = cubes it
 * gathers them over its Cartesian communicator to leaf 0, which sends them
 * to the centre over its one link (slower on the HHC network: the centre's
 * other links idle). So the blocks climb off the chain and descend the
 * chain to root over real HHC links only; root unpacks block v at the
 * gather position of node v (comm's rank order).
 *
 * Allreduce. The same climb with PMPI_Reduce in the cubes and
 * PMPI_Reduce_local at the centres, then the broadcast from the top centre.
 */
#include "hhc/hhc_internal.h"
#include "network/network_internal.h"

#include <limits.h>
#include <string.h>

#define COLL_TAG 1802

/* ---- broadcast ----------------------------------------------------------- */

/* Whether node v is a centre strictly above root (on its chain). */
static int above_root(int dim, int root, int v)
{
    int q;
    for (int c = mpitopo__hhc_parent(dim, root, &q); c >= 0; c = mpitopo__hhc_parent(dim, c, &q))
        if (c == v)
            return 1;
    return 0;
}

/* The child of centre c on root's chain (c above root). */
static int chain_child(int dim, int root, int c)
{
    int q, v = root;
    while (mpitopo__hhc_parent(dim, v, &q) != c)
        v = mpitopo__hhc_parent(dim, v, &q);
    return v;
}

int mpitopo__hhc_bcast_node(void *buf, int count, MPI_Datatype type, int root, mpitopo_hhc_t *h)
{
    int rc = MPI_SUCCESS, me = h->node, dim = h->dim;
    int me_above = above_root(dim, root, me), on_chain = me == root || me_above;
    if (me_above)
        rc = PMPI_Recv(buf, count, type, chain_child(dim, root, me), COLL_TAG, h->ftree, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS && h->centre >= 0) {
        int entry = 0;
        if (above_root(dim, root, h->centre)) {
            int q;
            mpitopo__hhc_parent(dim, chain_child(dim, root, h->centre), &q);
            entry = q;
            if (on_chain)
                rc = PMPI_Send(buf, count, type, h->centre, COLL_TAG, h->ftree);
        } else if (h->position == 0) {
            rc = PMPI_Recv(buf, count, type, h->centre, COLL_TAG, h->ftree, MPI_STATUS_IGNORE);
        }
        if (rc == MPI_SUCCESS)
            rc = PMPI_Bcast(buf, count, type, entry, h->fcube);
    }
    if (rc == MPI_SUCCESS && h->level > 0 && !me_above)
        rc = PMPI_Send(buf, count, type, mpitopo__hhc_child(dim, me, 0), COLL_TAG, h->ftree);
    return rc;
}

int mpitopo_hhc_bcast(void *buf, int count, MPI_Datatype type, long long root, mpitopo_hhc_t *hhc)
{
    int node, rc = mpitopo__hhc_check_id(hhc, __func__, "root", root, &node);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__hhc_bcast_node(buf, count, type, node, hhc);
    return mpitopo__mpi_result(__func__, rc);
}

/* ---- gather --------------------------------------------------------------- */

/* The nodes in the subtree of a level-l node. */
static int subtree(int dim, int l)
{
    int s = 1;
    for (int j = 1; j <= l; j++)
        s = (1 << mpitopo__hhc_cube_dim(dim, j)) * s + 1;
    return s;
}

/* The first node of v's subtree (post-order: the run that ends with v). */
static int first_of(int dim, int v)
{
    return v - subtree(dim, mpitopo__hhc_level(dim, v)) + 1;
}

/* Send (or receive) the blocks of buf outside node c's subtree, and c's
 * own: blocks [0, first_of(c)) and [c, nnodes), blk bytes each, in one
 * message over the tree link between c and its child on root's chain. */
static int chain_region(mpitopo_hhc_t *h, char *buf, int blk, int c, int peer, int send)
{
    int lens[2] = {first_of(h->dim, c) * blk, (h->nnodes - c) * blk}, displs[2] = {0, c * blk};
    MPI_Datatype region;
    int rc = PMPI_Type_indexed(2, lens, displs, MPI_BYTE, &region);
    if (rc != MPI_SUCCESS)
        return rc;
    if ((rc = PMPI_Type_commit(&region)) == MPI_SUCCESS)
        rc = send ? PMPI_Send(buf, 1, region, peer, COLL_TAG, h->ftree)
                  : PMPI_Recv(buf, 1, region, peer, COLL_TAG, h->ftree, MPI_STATUS_IGNORE);
    PMPI_Type_free(&region);
    return rc;
}

static int gather_impl(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       MPI_Datatype recvtype, long long root, mpitopo_hhc_t *h)
{
    static const char *const fn = "mpitopo_hhc_gather";
    int rootn, rc = mpitopo__hhc_check_id(h, fn, "root", root, &rootn);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    int me = h->node, dim = h->dim, nn = h->nnodes, blk = 0;
    MPI_Aint lb, extent = 0;
    if (me == rootn && (rc = PMPI_Type_get_extent(recvtype, &lb, &extent)) != MPI_SUCCESS)
        return rc;
    /* MPI_IN_PLACE at root: its block is already in recvbuf. */
    const void *in = sendbuf;
    int incount = sendcount;
    MPI_Datatype intype = sendtype;
    if (sendbuf == MPI_IN_PLACE) {
        in = (const char *)recvbuf + (MPI_Aint)h->block_of_node[me] * recvcount * extent;
        incount = recvcount;
        intype = recvtype;
    }
    /* The same type signature gives the same packed size on one machine,
     * so every block has blk bytes, and every process decides alike. */
    if ((rc = PMPI_Pack_size(incount, intype, h->ftree, &blk)) != MPI_SUCCESS)
        return rc;
    if ((size_t)blk * (size_t)nn > INT_MAX)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, fn, "sendcount = %d: %d blocks of %d packed bytes exceed one message",
                               incount, nn, blk);
    /* The roles: the chain (root and the centres above it) receives the
     * blocks from above. A cube whose centre is above root (a chain cube)
     * gathers over its Cartesian communicator to the centre's child on
     * the chain; another cube (off the chain) sends its leaves' subtrees to
     * the centre over their own tree links (auto), or with info
     * mpitopo_hhc_gather = cubes gathers them to leaf 0 over the cube's
     * communicator, which sends them on over its link. */
    int me_above = above_root(dim, rootn, me), on_chain = me == rootn || me_above;
    int chain_cube = h->centre >= 0 && above_root(dim, rootn, h->centre);
    int exit_pos = 0, S = subtree(dim, h->level);
    if (chain_cube)
        mpitopo__hhc_parent(dim, chain_child(dim, rootn, h->centre), &exit_pos);
    int by_cube = chain_cube || h->gather_cubes;
    int is_exit = h->centre >= 0 && by_cube && h->position == exit_pos;
    /* The blocks this process holds: from node base on, nblk of them. */
    int base = first_of(dim, me), nblk = S;
    if (on_chain) {
        base = 0;
        nblk = nn;
    } else if (is_exit) { /* leaf 0 of a cube off the chain: the cube's leaves' subtrees */
        nblk = subtree(dim, h->level + 1) - 1;
    }
    char *buf = mpitopo__malloc((size_t)blk * (size_t)nblk + 1);
    /* Agreed before any message, so that one process short of memory does
     * not leave the others waiting. */
    int ok = buf != NULL, all_ok = 0;
    rc = PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, h->ftree);
    if (rc == MPI_SUCCESS && !all_ok)
        rc = MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, fn, "out of memory on a process of the HHC");
    int pos = (me - base) * blk;
    if (rc == MPI_SUCCESS)
        rc = PMPI_Pack(in, incount, intype, buf, nblk * blk, &pos, h->ftree);
    char *mine = buf + (size_t)(first_of(dim, me) - base) * (size_t)blk; /* this subtree's blocks */
    /* A centre not above root: its cube's blocks, gathered at leaf 0 or
     * one subtree from each leaf at once. */
    if (rc == MPI_SUCCESS && h->level > 0 && !me_above) {
        if (h->gather_cubes) {
            rc = PMPI_Recv(mine, (S - 1) * blk, MPI_BYTE, mpitopo__hhc_child(dim, me, 0), COLL_TAG, h->ftree,
                           MPI_STATUS_IGNORE);
        } else {
            int k = mpitopo__hhc_cube_dim(dim, h->level), part = subtree(dim, h->level - 1) * blk;
            MPI_Request req[8];
            for (int q = 0; q < 1 << k; q++)
                if ((rc = PMPI_Irecv(mine + (size_t)q * (size_t)part, part, MPI_BYTE,
                                     mpitopo__hhc_child(dim, me, q), COLL_TAG, h->ftree, &req[q])) != MPI_SUCCESS)
                    break; /* MPI's errors are fatal by default: no cleanup of the others */
            if (rc == MPI_SUCCESS)
                rc = PMPI_Waitall(1 << k, req, MPI_STATUSES_IGNORE);
        }
    }
    /* As a leaf: the cube's gather over its Cartesian communicator (the
     * exit's own subtree is in place in its buffer), or straight up. */
    if (rc == MPI_SUCCESS && h->centre >= 0 && !by_cube) {
        rc = PMPI_Send(mine, S * blk, MPI_BYTE, h->centre, COLL_TAG, h->ftree);
    } else if (rc == MPI_SUCCESS && h->centre >= 0) {
        char *at = buf + (size_t)(first_of(dim, h->centre) - base) * (size_t)blk;
        rc = is_exit ? PMPI_Gather(MPI_IN_PLACE, S * blk, MPI_BYTE, at, S * blk, MPI_BYTE, exit_pos, h->fcube)
                     : PMPI_Gather(mine, S * blk, MPI_BYTE, NULL, 0, MPI_BYTE, exit_pos, h->fcube);
        if (rc == MPI_SUCCESS && is_exit && !on_chain) /* leaf 0: the cube's blocks up to the centre */
            rc = PMPI_Send(buf, nblk * blk, MPI_BYTE, h->centre, COLL_TAG, h->ftree);
        else if (rc == MPI_SUCCESS && on_chain) /* the exit on the chain: everything outside, from above */
            rc = chain_region(h, buf, blk, h->centre, h->centre, 0);
    }
    /* Down the chain: all but this subtree, and this block. */
    if (rc == MPI_SUCCESS && me_above)
        rc = chain_region(h, buf, blk, me, chain_child(dim, rootn, me), 1);
    for (int v = 0; rc == MPI_SUCCESS && me == rootn && v < nn; v++) {
        if (sendbuf == MPI_IN_PLACE && v == me)
            continue;
        int p = v * blk;
        char *out = (char *)recvbuf + (MPI_Aint)h->block_of_node[v] * recvcount * extent;
        rc = PMPI_Unpack(buf, nn * blk, &p, out, recvcount, recvtype, h->ftree);
    }
    mpitopo__free(buf);
    return rc;
}

int mpitopo_hhc_gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       MPI_Datatype recvtype, long long root, mpitopo_hhc_t *hhc)
{
    return mpitopo__mpi_result(
        __func__, gather_impl(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, hhc));
}

/* ---- allreduce ------------------------------------------------------------ */

/* Room for count elements of type: the allocation and the buffer (shifted
 * by the true lower bound). */
static void *typed_alloc(int count, MPI_Datatype type, char **raw)
{
    MPI_Aint lb, extent, tlb, textent;
    *raw = NULL;
    if (PMPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(type, &tlb, &textent) != MPI_SUCCESS)
        return NULL;
    size_t n = count > 0 ? (size_t)textent + (size_t)(count - 1) * (size_t)extent : 1;
    if (!(*raw = mpitopo__malloc(n ? n : 1)))
        return NULL;
    return *raw - tlb;
}

static int allreduce_impl(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                          mpitopo_hhc_t *h)
{
    static const char *const fn = "mpitopo_hhc_allreduce";
    if (!h)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, fn, "hhc = NULL");
    int commute = 0, rc = PMPI_Op_commutative(op, &commute);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!commute)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, fn, "op is not commutative");
    char *raw_acc, *raw_tmp;
    void *acc = typed_alloc(count, type, &raw_acc), *tmp = typed_alloc(count, type, &raw_tmp);
    /* Agreed across the HHC before any message: a process short of memory
     * must not leave the others waiting. */
    int ok = raw_acc && raw_tmp, all_ok = 0;
    rc = PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, h->ftree);
    if (rc == MPI_SUCCESS && !all_ok)
        rc = MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, fn, "out of memory on a process of the HHC");
    if (rc == MPI_SUCCESS)
        rc = PMPI_Sendrecv(sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, count, type, 0, 0, acc, count, type, 0, 0,
                           MPI_COMM_SELF, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS && h->level > 0) {
        rc = PMPI_Recv(tmp, count, type, mpitopo__hhc_child(h->dim, h->node, 0), COLL_TAG, h->ftree,
                       MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            rc = PMPI_Reduce_local(tmp, acc, count, type, op);
    }
    if (rc == MPI_SUCCESS && h->centre >= 0) {
        rc = PMPI_Reduce(acc, tmp, count, type, op, 0, h->fcube);
        if (rc == MPI_SUCCESS && h->position == 0)
            rc = PMPI_Send(tmp, count, type, h->centre, COLL_TAG, h->ftree);
    }
    /* The top centre holds the result: into recvbuf, then to everyone. */
    if (rc == MPI_SUCCESS && h->centre < 0)
        rc = PMPI_Sendrecv(acc, count, type, 0, 0, recvbuf, count, type, 0, 0, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS)
        rc = mpitopo__hhc_bcast_node(recvbuf, count, type, h->nnodes - 1, h);
    mpitopo__free(raw_acc);
    mpitopo__free(raw_tmp);
    return rc;
}

int mpitopo_hhc_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                          mpitopo_hhc_t *hhc)
{
    return mpitopo__mpi_result(__func__, allreduce_impl(sendbuf, recvbuf, count, type, op, hhc));
}
