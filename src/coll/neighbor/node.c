/*
 * Node-aware aggregation (schedule "node"): one message per pair of nodes
 * with traffic, then a scatter inside the node. Nodes are mpitopo's own
 * (mpitopo_comm_nodeinfo), so MPITOPO_EMULATE nodes count as nodes. The
 * leader of a node is its lowest rank in comm.
 *
 *   round 0: every process packs its blocks for other nodes into one
 *            message to its leader, and sends its blocks for its own node
 *            (itself included) directly, as the linear schedule does; a
 *            leader receives its members' messages; a member posts the
 *            receive of what its leader will scatter to it;
 *   round 1: (leaders) one message per pair of nodes with traffic,
 *            assembled from the members' messages by moves;
 *   round 2: (leaders) one message per member that receives from other
 *            nodes, assembled from the node messages by moves;
 *   last:    unpacks into the receive slots.
 * Round 0 waits only for round-0 messages, and a leader's round 1 only for
 * other leaders' round 1, so no process waits for a later round of
 * another that waits for it.
 *
 * Allgather sends a block once per pair (source, remote node), however
 * many processes of that node receive it. Alltoall sends every block
 * once. The order of blocks in an aggregated message follows from the
 * edge key (source p, destination q, k) known at both ends of an edge:
 * k = the k-th duplicate edge p -> q (graph, dist-graph: MPI's matching of
 * duplicate edges in order), or the sender's block index (Cartesian: it
 * lands in block k^1, the erratum the linear schedule follows). Messages:
 * a member's message to its leader in (leader(q), q, k) order; a node
 * message in (p, q, k) order (allgather: distinct p); a scatter message in
 * the receiver's (leader(p), p, k) order (allgather: distinct (leader(p),
 * p)). Both leaders of a pair of nodes derive the same order from their
 * members' edge lists, so no call exchanges anything.
 *
 * The plan is made once per communicator, collectively, on the first use
 * of the schedule, even by a nonblocking or persistent call (a blocking
 * MPI_Comm_dup, neighbour exchanges, a gather to each leader). Memory:
 * O(degree) per process, O(edges leaving or entering the node + node size)
 * at leaders; no O(P) array anywhere.
 *
 * Allgatherv, alltoallv and alltoallw run the same plan with messages of
 * [part sizes | parts] (see "The v and w forms" below): a leader forwards
 * blocks whose sizes it does not know, and the final receiver checks them.
 *
 * Limits: allgather and alltoall need the same block size in bytes (count
 * x type size) on every process that sends, receives or leads: a leader
 * forwards its members' blocks at its own block size. Where they may not
 * have it the hint falls back to linear on every process (applies below):
 * _init calls know (mpitopo__sched_agree compares every process's sizes);
 * blocking and nonblocking calls cannot ask without a collective per call,
 * so they trust processes with neighbours (MPI makes those that
 * communicate pass alike) but not a leader without neighbours whose node
 * sends or receives (idle_leader, found when the plan is made), and a
 * message of more than INT_MAX bytes (max_blocks) falls back too. The v
 * and w forms have no such limit. An MPI error in a leader's round stops it,
 * and its members then wait for a scatter that never comes. Wrong v/w
 * counts on edges between nodes are no such error (leaders forward
 * without judging sizes; the final receiver fails, after its last
 * message); too small a receive count on a leader's own edge inside its
 * node is (MPI fails the direct receive in round 0). Data travels packed
 * as MPI_BYTE (a homogeneous MPI, as combining assumes).
 */
#include "coll/coll_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

enum { KA2A = 0, KAG = 1, NKINDS };

/* What a leader does for one kind of operation (blocks, not bytes). */
typedef struct lead {
    int nmem;                       /* members sending to me in round 0 */
    int *mem_rank, *mem_off, *mem_cnt;
    int own_off;                    /* my own region in the staging area */
    int staging;                    /* blocks of the staging area */
    int nto;                        /* node messages sent */
    int *to_rank, *to_start, *to_blk; /* to_blk: staging block of each block */
    int nfrom;                      /* node messages received, in order */
    int *from_rank, *from_start;
    int nsc;                        /* scatter messages (own one included) */
    int *sc_rank, *sc_start, *sc_blk; /* sc_blk: received block of each block */
    int own_sc;                     /* my own scatter message, else -1 */
} lead_t;

struct mpitopo__node {
    int me, leader, nnodes;
    /* The same on every process: some leader forwards blocks without
     * neighbours of its own (so MPI does not tie its block size to anyone's),
     * and the most blocks in one message of each kind (its size limit). */
    int idle_leader, max_blocks[NKINDS];
    int *out_pos[NKINDS]; /* per send slot: block in my message to the leader, -1 on-node */
    int *in_pos[NKINDS];  /* per receive slot: block in my scatter message, -1 on-node */
    int nout[NKINDS], nin[NKINDS];
    lead_t lead[NKINDS];  /* all zero unless I lead */
};

/* An edge record, compared lexicographically on (a, b, c, d). */
typedef struct rec {
    int a, b, c, d, ref;
} rec_t;

static int rec_cmp(const void *x, const void *y)
{
    const rec_t *u = x, *v = y;
    if (u->a != v->a)
        return u->a < v->a ? -1 : 1;
    if (u->b != v->b)
        return u->b < v->b ? -1 : 1;
    if (u->c != v->c)
        return u->c < v->c ? -1 : 1;
    return u->d < v->d ? -1 : u->d > v->d;
}

static void lead_free(lead_t *l)
{
    void *arrays[] = {l->mem_rank, l->mem_off, l->mem_cnt, l->to_rank, l->to_start, l->to_blk,
                      l->from_rank, l->from_start, l->sc_rank, l->sc_start, l->sc_blk};
    for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++)
        mpitopo__free(arrays[i]);
}

void mpitopo__node_free(struct mpitopo__node *p)
{
    if (!p)
        return;
    for (int k = 0; k < NKINDS; k++) {
        mpitopo__free(p->out_pos[k]);
        mpitopo__free(p->in_pos[k]);
        lead_free(&p->lead[k]);
    }
    mpitopo__free(p);
}

int mpitopo__node_supports(mpitopo__opkind_t op)
{
    return op >= MPITOPO__OPK_ALLGATHER && op < MPITOPO__OPK_COUNT;
}

int mpitopo__node_count(const mpitopo__nbr_t *n)
{
    return n->node ? n->node->nnodes : 0;
}

/* ---- The plan ---- */

typedef struct setup {
    const mpitopo__nbr_t *n;
    struct mpitopo__node *p;
    MPI_Comm comm;      /* a duplicate of the user's communicator */
    MPI_Comm node_comm; /* owned by the node information cache */
    int *lsrc, *ldst;   /* leader of every source and destination */
    int *ksrc, *kdst;   /* edge keys */
    int *mine, nmine;   /* what I send my leader: [me, nout, nin, 3 ints per edge] */
    int *all, *lens, *displs; /* gathered at the leader */
} setup_t;

static int *ints(size_t count)
{
    return mpitopo__malloc_array(count + 1, sizeof(int));
}

/* Every process of comm learns whether any failed (MPI_ERR_OTHER if
 * another did). */
static int agree(MPI_Comm comm, int rc)
{
    int failed = rc != MPI_SUCCESS, any = 1;
    int mrc = PMPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, comm);
    if (rc != MPI_SUCCESS)
        return rc;
    return mrc != MPI_SUCCESS ? mrc : any ? MPI_ERR_OTHER : MPI_SUCCESS;
}

/* The leader of every neighbour: each process tells its sources and its
 * destinations its own leader (every message from one process carries the
 * same value, so duplicate edges may match in any order). */
static int exchange_leaders(setup_t *s)
{
    const mpitopo__nbr_t *n = s->n;
    int total = 2 * (n->indegree + n->outdegree), k = 0, rc = MPI_SUCCESS;
    MPI_Request *q = mpitopo__malloc_array((size_t)total + 1, sizeof *q);
    if (!q)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < n->indegree; i++) {
        s->lsrc[i] = MPI_PROC_NULL;
        if (n->sources[i] == MPI_PROC_NULL)
            continue;
        if (rc == MPI_SUCCESS)
            rc = PMPI_Irecv(&s->lsrc[i], 1, MPI_INT, n->sources[i], 0, s->comm, &q[k++]);
        if (rc == MPI_SUCCESS)
            rc = PMPI_Isend(&s->p->leader, 1, MPI_INT, n->sources[i], 0, s->comm, &q[k++]);
    }
    for (int d = 0; d < n->outdegree; d++) {
        s->ldst[d] = MPI_PROC_NULL;
        if (n->destinations[d] == MPI_PROC_NULL)
            continue;
        if (rc == MPI_SUCCESS)
            rc = PMPI_Irecv(&s->ldst[d], 1, MPI_INT, n->destinations[d], 0, s->comm, &q[k++]);
        if (rc == MPI_SUCCESS)
            rc = PMPI_Isend(&s->p->leader, 1, MPI_INT, n->destinations[d], 0, s->comm, &q[k++]);
    }
    if (rc == MPI_SUCCESS)
        rc = PMPI_Waitall(k, q, MPI_STATUSES_IGNORE);
    mpitopo__free(q);
    return rc;
}

/* Edge keys: Cartesian, the sender's block index; otherwise the index of
 * the edge among the duplicates of the same peer. */
static int edge_keys(const mpitopo__nbr_t *n, const int *peers, int deg, int recv, int *key)
{
    if (n->kind == MPI_CART) {
        for (int i = 0; i < deg; i++)
            key[i] = recv ? i ^ 1 : i;
        return MPI_SUCCESS;
    }
    rec_t *r = mpitopo__malloc_array((size_t)deg + 1, sizeof *r);
    if (!r)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < deg; i++)
        r[i] = (rec_t){peers[i], i, 0, 0, i};
    qsort(r, (size_t)deg, sizeof *r, rec_cmp);
    for (int i = 0; i < deg; i++)
        key[r[i].ref] = i > 0 && r[i - 1].a == r[i].a ? key[r[i - 1].ref] + 1 : 0;
    mpitopo__free(r);
    return MPI_SUCCESS;
}

/*
 * My side of the plan: the off-node edges, sorted by (leader, peer, key);
 * pos[kind][slot] their block (alltoall: every edge; allgather: one block
 * to the leader, one per distinct (leader, source) from it). The sorted
 * triples go to the leader: out edges at out3, in edges at in3.
 */
static int sort_side(setup_t *s, int recv, int *out3)
{
    const mpitopo__nbr_t *n = s->n;
    int deg = recv ? n->indegree : n->outdegree, m = 0;
    const int *peer = recv ? n->sources : n->destinations;
    const int *lead = recv ? s->lsrc : s->ldst, *key = recv ? s->ksrc : s->kdst;
    int **pos = recv ? s->p->in_pos : s->p->out_pos, *cnt = recv ? s->p->nin : s->p->nout;
    rec_t *r = mpitopo__malloc_array((size_t)deg + 1, sizeof *r);
    if (!r)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < deg; i++) {
        pos[KA2A][i] = pos[KAG][i] = -1;
        if (peer[i] != MPI_PROC_NULL && lead[i] != s->p->leader)
            r[m++] = (rec_t){lead[i], peer[i], key[i], 0, i};
    }
    qsort(r, (size_t)m, sizeof *r, rec_cmp);
    int distinct = 0;
    for (int j = 0; j < m; j++) {
        if (j > 0 && (r[j].a != r[j - 1].a || r[j].b != r[j - 1].b))
            distinct++;
        pos[KA2A][r[j].ref] = j;
        pos[KAG][r[j].ref] = recv ? distinct : 0;
        out3[3 * j] = r[j].a;
        out3[3 * j + 1] = r[j].b;
        out3[3 * j + 2] = r[j].c;
    }
    cnt[KA2A] = m;
    cnt[KAG] = m > 0 ? (recv ? distinct + 1 : 1) : 0;
    mpitopo__free(r);
    return MPI_SUCCESS;
}

static int local_side(setup_t *s)
{
    const mpitopo__nbr_t *n = s->n;
    struct mpitopo__node *p = s->p;
    int rc = exchange_leaders(s);
    if (rc == MPI_SUCCESS)
        rc = edge_keys(n, n->sources, n->indegree, 1, s->ksrc);
    if (rc == MPI_SUCCESS)
        rc = edge_keys(n, n->destinations, n->outdegree, 0, s->kdst);
    if (rc == MPI_SUCCESS)
        rc = sort_side(s, 0, s->mine + 3);
    if (rc == MPI_SUCCESS)
        rc = sort_side(s, 1, s->mine + 3 + 3 * p->nout[KA2A]);
    s->mine[0] = p->me;
    s->mine[1] = rc == MPI_SUCCESS ? p->nout[KA2A] : 0;
    s->mine[2] = rc == MPI_SUCCESS ? p->nin[KA2A] : 0;
    s->nmine = 3 + 3 * (s->mine[1] + s->mine[2]);
    return rc;
}

/* ---- The leader's lists ---- */

/* Group sorted records by their `a` (a peer node's leader): rank[] gets the
 * leaders, start[] the first block of each (blocks: distinct (a, b) when
 * by_b, else every record). Returns the number of groups. */
static int group(const rec_t *r, int m, int by_b, int *rank, int *start)
{
    int g = 0, b = 0;
    for (int j = 0; j < m; j++) {
        int new_block = !by_b || j == 0 || r[j].a != r[j - 1].a || r[j].b != r[j - 1].b;
        if (j == 0 || r[j].a != r[j - 1].a) {
            rank[g] = r[j].a;
            start[g++] = b;
        }
        b += new_block;
    }
    start[g] = b;
    return g;
}

static int lead_alloc(lead_t *l, int members, int edges)
{
    size_t m = (size_t)members, e = (size_t)edges;
    l->mem_rank = ints(m);
    l->mem_off = ints(m);
    l->mem_cnt = ints(m);
    l->to_rank = ints(e);
    l->to_start = ints(e + 1);
    l->to_blk = ints(e);
    l->from_rank = ints(e);
    l->from_start = ints(e + 1);
    l->sc_rank = ints(m);
    l->sc_start = ints(m + 1);
    l->sc_blk = ints(e);
    l->own_sc = -1;
    return l->mem_rank && l->mem_off && l->mem_cnt && l->to_rank && l->to_start && l->to_blk &&
                   l->from_rank && l->from_start && l->sc_rank && l->sc_start && l->sc_blk
               ? MPI_SUCCESS
               : MPI_ERR_NO_MEM;
}

/*
 * One kind of operation at the leader, from the members' gathered lists
 * (member x: at all + displs[x], [rank, nout, nin, out triples, in
 * triples]). Staging: the members' messages, in node order. Node messages
 * out: records (leader(q), p, q, k) sorted; in: (leader(p), p, q, k)
 * sorted, whose position is the received block. Allgather keeps one block
 * per distinct (leader, p).
 */
static int lead_kind(setup_t *s, int kind, int members, int edges, rec_t *out, rec_t *in)
{
    lead_t *l = &s->p->lead[kind];
    int rc = lead_alloc(l, members, edges), no = 0, ni = 0, stage = 0, sc = 0;
    if (rc != MPI_SUCCESS)
        return rc;
    for (int x = 0; x < members; x++) {
        const int *h = s->all + s->displs[x], *o = h + 3, *v = h + 3 + 3 * h[1];
        int blocks = kind == KA2A ? h[1] : h[1] > 0;
        if (blocks > 0 && h[0] == s->p->me)
            l->own_off = stage;
        else if (blocks > 0) {
            l->mem_rank[l->nmem] = h[0];
            l->mem_off[l->nmem] = stage;
            l->mem_cnt[l->nmem++] = blocks;
        }
        for (int j = 0; j < h[1]; j++)
            out[no++] = (rec_t){o[3 * j], h[0], kind == KA2A ? o[3 * j + 1] : 0,
                                kind == KA2A ? o[3 * j + 2] : 0, stage + (kind == KA2A ? j : 0)};
        stage += blocks;
        int first = sc, distinct = -1;
        for (int j = 0; j < h[2]; j++) {
            if (kind == KA2A || j == 0 || v[3 * j] != v[3 * j - 3] || v[3 * j + 1] != v[3 * j - 2])
                distinct++;
            in[ni++] = (rec_t){v[3 * j], v[3 * j + 1], h[0], kind == KA2A ? v[3 * j + 2] : 0,
                               first + (kind == KA2A ? j : distinct)};
        }
        sc += distinct + 1;
        if (sc > first) {
            if (h[0] == s->p->me)
                l->own_sc = l->nsc;
            l->sc_rank[l->nsc] = h[0];
            l->sc_start[l->nsc++] = first;
        }
    }
    l->sc_start[l->nsc] = sc;
    l->staging = stage;
    qsort(out, (size_t)no, sizeof *out, rec_cmp);
    qsort(in, (size_t)ni, sizeof *in, rec_cmp);
    l->nto = group(out, no, kind == KAG, l->to_rank, l->to_start);
    for (int j = 0, b = 0; j < no; j++)
        if (kind == KA2A || j == 0 || out[j].a != out[j - 1].a || out[j].b != out[j - 1].b)
            l->to_blk[b++] = out[j].ref;
    l->nfrom = group(in, ni, kind == KAG, l->from_rank, l->from_start);
    for (int j = 0, b = -1; j < ni; j++) {
        if (kind == KA2A || j == 0 || in[j].a != in[j - 1].a || in[j].b != in[j - 1].b)
            b++;
        l->sc_blk[in[j].ref] = b;
    }
    return MPI_SUCCESS;
}

static int leader_side(setup_t *s, int members)
{
    int edges = 0;
    for (int x = 0; x < members; x++)
        edges += s->all[s->displs[x] + 1] + s->all[s->displs[x] + 2];
    rec_t *out = mpitopo__malloc_array((size_t)edges + 1, sizeof *out);
    rec_t *in = mpitopo__malloc_array((size_t)edges + 1, sizeof *in);
    int rc = out && in ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    for (int kind = 0; kind < NKINDS && rc == MPI_SUCCESS; kind++)
        rc = lead_kind(s, kind, members, edges, out, in);
    mpitopo__free(out);
    mpitopo__free(in);
    return rc;
}

/* Members' lists to the leader (local rank 0 of the node). */
static int gather(setup_t *s, int rc)
{
    int rank, size, mrc = PMPI_Comm_rank(s->node_comm, &rank);
    if (mrc == MPI_SUCCESS)
        mrc = PMPI_Comm_size(s->node_comm, &size);
    if (mrc != MPI_SUCCESS)
        return mrc;
    int len = rc == MPI_SUCCESS ? s->nmine : 0;
    if (rank == 0) {
        s->lens = ints((size_t)size);
        s->displs = ints((size_t)size);
    }
    int ok = rank != 0 || (s->lens && s->displs);
    mrc = PMPI_Gather(&len, 1, MPI_INT, s->lens, 1, MPI_INT, 0, s->node_comm);
    long long total = 0;
    for (int x = 0; rank == 0 && ok && x < size; x++) {
        s->displs[x] = (int)total;
        total += s->lens[x];
    }
    if (rank == 0 && ok && total < INT_MAX)
        s->all = ints((size_t)total);
    ok = ok && (rank != 0 || s->all);
    /* A leader that cannot receive says so before anyone sends. */
    if (mrc == MPI_SUCCESS)
        mrc = PMPI_Bcast(&ok, 1, MPI_INT, 0, s->node_comm);
    if (mrc == MPI_SUCCESS && ok)
        mrc = PMPI_Gatherv(s->mine, len, MPI_INT, s->all, s->lens, s->displs, MPI_INT, 0,
                           s->node_comm);
    if (rc != MPI_SUCCESS)
        return rc;
    if (mrc != MPI_SUCCESS || !ok)
        return mrc != MPI_SUCCESS ? mrc : MPI_ERR_NO_MEM;
    for (int x = 0; rank == 0 && x < size; x++)
        if (s->lens[x] == 0)
            return MPI_ERR_OTHER; /* that member failed: agree() reports it */
    return rank == 0 ? leader_side(s, size) : MPI_SUCCESS;
}

static int my_leader(MPI_Comm comm, MPI_Comm node_comm, int *leader)
{
    MPI_Group g = MPI_GROUP_NULL, h = MPI_GROUP_NULL;
    int zero = 0, rc = PMPI_Comm_group(node_comm, &g);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_group(comm, &h);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Group_translate_ranks(g, 1, &zero, h, leader);
    if (g != MPI_GROUP_NULL)
        PMPI_Group_free(&g);
    if (h != MPI_GROUP_NULL)
        PMPI_Group_free(&h);
    return rc;
}

static int alloc_local(setup_t *s)
{
    const mpitopo__nbr_t *n = s->n;
    size_t in = (size_t)n->indegree, out = (size_t)n->outdegree;
    struct mpitopo__node *p = s->p;
    s->lsrc = ints(in);
    s->ksrc = ints(in);
    s->ldst = ints(out);
    s->kdst = ints(out);
    s->mine = ints(3 + 3 * (in + out));
    for (int k = 0; k < NKINDS; k++) {
        p->out_pos[k] = ints(out);
        p->in_pos[k] = ints(in);
        if (!p->out_pos[k] || !p->in_pos[k])
            return MPI_ERR_NO_MEM;
    }
    return s->lsrc && s->ksrc && s->ldst && s->kdst && s->mine ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

/* Blocks in the largest message of kind k this process sends or receives. */
static int most_blocks(const struct mpitopo__node *p, int k)
{
    const lead_t *l = &p->lead[k];
    int most = p->nout[k] > p->nin[k] ? p->nout[k] : p->nin[k];
    for (int j = 0; j < l->nmem; j++)
        most = l->mem_cnt[j] > most ? l->mem_cnt[j] : most;
    const int *starts[] = {l->to_start, l->from_start, l->sc_start}, counts[] = {l->nto, l->nfrom, l->nsc};
    for (int a = 0; a < 3; a++)
        for (int j = 0; j < counts[a]; j++)
            most = starts[a][j + 1] - starts[a][j] > most ? starts[a][j + 1] - starts[a][j] : most;
    return most;
}

/* agree() for the finished plan, which also makes idle_leader and
 * max_blocks the same everywhere. */
static int agree_plan(setup_t *s, int rc)
{
    struct mpitopo__node *p = s->p;
    int v[2 + NKINDS] = {rc != MPI_SUCCESS, 0}, g[2 + NKINDS];
    int isolated = s->n->indegree == 0 && s->n->outdegree == 0;
    for (int k = 0; rc == MPI_SUCCESS && k < NKINDS; k++) {
        const lead_t *l = &p->lead[k];
        v[1] |= p->me == p->leader && isolated && l->nmem + l->nto + l->nfrom + l->nsc > 0;
        v[2 + k] = most_blocks(p, k);
    }
    int mrc = PMPI_Allreduce(v, g, 2 + NKINDS, MPI_INT, MPI_MAX, s->comm);
    if (rc != MPI_SUCCESS)
        return rc;
    if (mrc != MPI_SUCCESS || g[0])
        return mrc != MPI_SUCCESS ? mrc : MPI_ERR_OTHER;
    p->idle_leader = g[1];
    for (int k = 0; k < NKINDS; k++)
        p->max_blocks[k] = g[2 + k];
    return MPI_SUCCESS;
}

static int compute(setup_t *s, const mpitopo_nodeinfo_t *ni)
{
    int rc = s->p ? PMPI_Comm_rank(s->n->user_comm, &s->p->me) : MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS) {
        s->p->nnodes = ni->nnodes;
        rc = my_leader(s->n->user_comm, ni->node_comm, &s->p->leader);
    }
    if (rc == MPI_SUCCESS)
        rc = alloc_local(s);
    rc = agree(s->comm, rc);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = local_side(s);
    rc = gather(s, rc);
    return agree_plan(s, rc);
}

int mpitopo__node_prepare(mpitopo__nbr_t *n, const char *func)
{
    if (n->node)
        return MPITOPO_SUCCESS;
    const mpitopo_nodeinfo_t *ni;
    int rc = mpitopo_comm_nodeinfo(n->user_comm, &ni);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    setup_t s = {.n = n, .comm = MPI_COMM_NULL, .node_comm = ni->node_comm};
    s.p = mpitopo__calloc(1, sizeof *s.p);
    rc = PMPI_Comm_dup(n->user_comm, &s.comm);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_set_errhandler(s.comm, MPI_ERRORS_RETURN);
    if (rc == MPI_SUCCESS)
        rc = compute(&s, ni);
    void *scratch[] = {s.lsrc, s.ksrc, s.ldst, s.kdst, s.mine, s.all, s.lens, s.displs};
    for (size_t i = 0; i < sizeof scratch / sizeof *scratch; i++)
        mpitopo__free(scratch[i]);
    if (s.comm != MPI_COMM_NULL)
        PMPI_Comm_free(&s.comm);
    if (rc != MPI_SUCCESS) {
        mpitopo__node_free(s.p);
        return rc == MPI_ERR_NO_MEM ? MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func,
                                                        "out of memory for the node schedule")
               : rc == MPI_ERR_OTHER ? MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func,
                                                         "another process failed to set up "
                                                         "the node schedule")
                                     : mpitopo__mpi_result(func, rc);
    }
    n->node = s.p;
    mpitopo__log(2, "node: rank %d (leader %d of %d nodes): %d blocks to other nodes, %d from them",
                 s.p->me, s.p->leader, s.p->nnodes, s.p->nout[KA2A], s.p->nin[KA2A]);
    return MPITOPO_SUCCESS;
}

/* ---- The schedule of one call ---- */

typedef struct builder {
    mpitopo_request_t r;
    const mpitopo__nbr_t *n;
    const side_t *send, *recv;
    int k, round;
} builder_t;

static void add(builder_t *b, mpitopo__op_t o)
{
    b->r->ops[b->k++] = o;
}

/* Empty rounds are dropped: rounds are the process's own business. */
static void close_round(builder_t *b)
{
    if (b->k > b->r->round_start[b->round])
        b->r->round_start[++b->round] = b->k;
}

static void add_msg(builder_t *b, int kind, MPI_Aint off, long long bytes, int peer, int tag)
{
    add(b, (mpitopo__op_t){.count = (int)bytes, .type = MPI_BYTE, .peer = peer, .tag = tag,
                           .kind = kind, .in_tmp = 1, .tmp_off = off});
}

/* A move, merged with the previous one when both ends continue it. */
static void add_move(builder_t *b, MPI_Aint to, MPI_Aint from, int bytes)
{
    mpitopo__op_t *o = b->k > b->r->round_start[b->round] ? &b->r->ops[b->k - 1] : NULL;
    if (o && o->kind == MPITOPO__OP_MOVE && o->tmp_off + o->tmp_bytes == to &&
        o->src_off + o->tmp_bytes == from && o->tmp_bytes <= INT_MAX - bytes) {
        o->tmp_bytes += bytes;
        return;
    }
    add(b, (mpitopo__op_t){.type = MPI_BYTE, .kind = MPITOPO__OP_MOVE, .tmp_off = to,
                           .tmp_bytes = bytes, .src_off = from});
}

static void add_copy(builder_t *b, int kind, const side_t *side, int slot, MPI_Aint off,
                     int bytes)
{
    add(b, (mpitopo__op_t){MPITOPO__SLOT(side, slot),
                           .count = mpitopo__slot_count(side, slot),
                           .type = mpitopo__slot_type(side, slot), .kind = kind,
                           .tmp_off = off, .tmp_bytes = bytes});
}

/* Where things sit in the temporary buffer (bytes). */
typedef struct layout {
    int kind, sb, rb, base, t1, t2, t3;
    MPI_Aint out, in, isend, irecv, scatter;
    size_t size;
} layout_t;

static int too_big(long long blocks, int bytes)
{
    return blocks * bytes > INT_MAX;
}

static int make_layout(const mpitopo__nbr_t *n, layout_t *L, const char *func)
{
    const struct mpitopo__node *p = n->node;
    const lead_t *l = &p->lead[L->kind];
    int isleader = p->me == p->leader;
    long long x = l->nto ? l->to_start[l->nto] : 0, y = l->nfrom ? l->from_start[l->nfrom] : 0;
    long long z = l->nsc ? l->sc_start[l->nsc] : 0;
    int big = too_big(p->nout[L->kind], L->sb) || too_big(p->nin[L->kind], L->rb);
    for (int j = 0; j < l->nmem; j++)
        big |= too_big(l->mem_cnt[j], L->sb);
    for (int j = 0; j < l->nto; j++)
        big |= too_big(l->to_start[j + 1] - l->to_start[j], L->sb);
    for (int j = 0; j < l->nfrom; j++)
        big |= too_big(l->from_start[j + 1] - l->from_start[j], L->rb);
    for (int j = 0; j < l->nsc; j++)
        big |= too_big(l->sc_start[j + 1] - l->sc_start[j], L->rb);
    if (big)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_UNSUPPORTED, func,
                                 "an aggregated message of the node schedule would exceed "
                                 "INT_MAX bytes (use the linear schedule)");
    if (isleader) {
        L->out = (MPI_Aint)l->own_off * L->sb;
        L->isend = (MPI_Aint)l->staging * L->sb;
        L->irecv = L->isend + (MPI_Aint)x * L->sb;
        L->scatter = L->irecv + (MPI_Aint)y * L->rb;
        L->in = L->scatter + (MPI_Aint)(l->own_sc >= 0 ? l->sc_start[l->own_sc] : 0) * L->rb;
        L->size = (size_t)(L->scatter + (MPI_Aint)z * L->rb);
    } else {
        L->out = 0;
        L->in = (MPI_Aint)p->nout[L->kind] * L->sb;
        L->size = (size_t)(L->in + (MPI_Aint)p->nin[L->kind] * L->rb);
    }
    return MPITOPO_SUCCESS;
}

/* My node's edges, user buffers in place, as the linear schedule sends
 * them (round 0 of every form). */
static void direct(builder_t *b, const layout_t *L)
{
    const mpitopo__nbr_t *n = b->n;
    const struct mpitopo__node *p = n->node;
    for (int i = 0; i < n->indegree; i++)
        if (n->sources[i] != MPI_PROC_NULL && p->in_pos[KA2A][i] < 0)
            add(b, (mpitopo__op_t){MPITOPO__SLOT(b->recv, i),
                                   .count = mpitopo__slot_count(b->recv, i),
                                   .type = mpitopo__slot_type(b->recv, i), .peer = n->sources[i],
                                   .tag = L->base + mpitopo__nbr_recv_tag(n, i),
                                   .kind = MPITOPO__OP_RECV});
    for (int d = 0; d < n->outdegree; d++)
        if (n->destinations[d] != MPI_PROC_NULL && p->out_pos[KA2A][d] < 0)
            add(b, (mpitopo__op_t){MPITOPO__SLOT(b->send, d),
                                   .count = mpitopo__slot_count(b->send, d),
                                   .type = mpitopo__slot_type(b->send, d),
                                   .peer = n->destinations[d],
                                   .tag = L->base + mpitopo__nbr_send_tag(n, d),
                                   .kind = MPITOPO__OP_SEND});
}

/* Round 0: my blocks for other nodes to the leader, my node's edges
 * direct, the leader's receives from its members. */
static void round0(builder_t *b, const layout_t *L)
{
    const mpitopo__nbr_t *n = b->n;
    const struct mpitopo__node *p = n->node;
    const lead_t *l = &p->lead[L->kind];
    int isleader = p->me == p->leader;
    if (L->kind == KAG && p->nout[KAG] > 0)
        add_copy(b, MPITOPO__OP_PACK, b->send, 0, L->out, L->sb);
    for (int d = 0; L->kind == KA2A && d < n->outdegree; d++)
        if (p->out_pos[KA2A][d] >= 0)
            add_copy(b, MPITOPO__OP_PACK, b->send, d,
                     L->out + (MPI_Aint)p->out_pos[KA2A][d] * L->sb, L->sb);
    if (!isleader && p->nout[L->kind] > 0)
        add_msg(b, MPITOPO__OP_SEND, L->out, (long long)p->nout[L->kind] * L->sb, p->leader,
                L->t1);
    if (!isleader && p->nin[L->kind] > 0)
        add_msg(b, MPITOPO__OP_RECV, L->in, (long long)p->nin[L->kind] * L->rb, p->leader,
                L->t3);
    for (int j = 0; j < l->nmem; j++)
        add_msg(b, MPITOPO__OP_RECV, (MPI_Aint)l->mem_off[j] * L->sb,
                (long long)l->mem_cnt[j] * L->sb, l->mem_rank[j], L->t1);
    direct(b, L);
    close_round(b);
}

/* Rounds 1 and 2 of a leader: node messages, then the scatter. */
static void leader_rounds(builder_t *b, const layout_t *L)
{
    const lead_t *l = &b->n->node->lead[L->kind];
    for (int j = 0; j < l->nto; j++) {
        int first = l->to_start[j], last = l->to_start[j + 1];
        for (int x = first; x < last; x++)
            add_move(b, L->isend + (MPI_Aint)x * L->sb, (MPI_Aint)l->to_blk[x] * L->sb, L->sb);
        add_msg(b, MPITOPO__OP_SEND, L->isend + (MPI_Aint)first * L->sb,
                (long long)(last - first) * L->sb, l->to_rank[j], L->t2);
    }
    for (int j = 0; j < l->nfrom; j++)
        add_msg(b, MPITOPO__OP_RECV, L->irecv + (MPI_Aint)l->from_start[j] * L->rb,
                (long long)(l->from_start[j + 1] - l->from_start[j]) * L->rb, l->from_rank[j],
                L->t2);
    close_round(b);
    for (int j = 0; j < l->nsc; j++) {
        int first = l->sc_start[j], last = l->sc_start[j + 1];
        for (int x = first; x < last; x++)
            add_move(b, L->scatter + (MPI_Aint)x * L->rb,
                     L->irecv + (MPI_Aint)l->sc_blk[x] * L->rb, L->rb);
        if (j != l->own_sc)
            add_msg(b, MPITOPO__OP_SEND, L->scatter + (MPI_Aint)first * L->rb,
                    (long long)(last - first) * L->rb, l->sc_rank[j], L->t3);
    }
    close_round(b);
}

static void unpacks(builder_t *b, const layout_t *L)
{
    const mpitopo__nbr_t *n = b->n;
    const int *pos = n->node->in_pos[L->kind];
    for (int i = 0; i < n->indegree; i++)
        if (pos[i] >= 0)
            add_copy(b, MPITOPO__OP_UNPACK, b->recv, i, L->in + (MPI_Aint)pos[i] * L->rb, L->rb);
    close_round(b);
}

/* ---- The v and w forms ----
 *
 * A leader forwards blocks whose sizes only their senders know, so every
 * aggregated message is [one int per part: its bytes | the parts, packed,
 * back to back], parts in the orders above (the message combining does
 * its v and w forms the same way: combine.c). A member's message to its
 * leader has sizes known when the schedule is built; the leader receives
 * it, the node messages and (a member) the scatter message at whatever
 * size they have (MPITOPO__OP_RECV_ANY), and runtime steps
 * (MPITOPO__OP_CALL) assemble the node messages once the members' have
 * arrived (round 1), the scatter messages once the node messages have
 * (round 2), setting the sizes of their sends. Only the final receiver
 * knows what a part should hold (its recvcounts and recvtypes): vunpack
 * checks every part against them before any unpack runs, and fails with
 * MPI_ERR_TRUNCATE naming the slot and the sender. A leader forwards
 * without judging, so wrong counts never stop a leader.
 */

typedef struct vctx {
    const char *func, *count_name;
    int kind;
    int *sizes;         /* header of my message to the leader (my parts' bytes) */
    int *rbytes;        /* bytes of every receive slot */
    int *unp;           /* op of every receive slot's unpack, -1 if none */
    int sc_buf;         /* buffer of my scatter message */
    MPI_Aint sc_at;     /* where it starts there (leader: set by vscatter) */
    size_t sc_len;
    /* Leaders only: */
    MPI_Aint own_len;   /* my own message to myself, at tmp + 0 */
    int mem_buf, from_buf, to_buf, sc_out; /* first buffer of each kind */
    int *to_op, *sc_op; /* ops of the node and scatter sends (-1: my own) */
    const char **blk;   /* staging blocks, then received blocks (member: parts) */
    int *len;
    MPI_Aint *offs;     /* scratch: part bounds of one message */
} vctx_t;

static void vctx_free(void *x)
{
    vctx_t *v = x;
    if (!v)
        return;
    void *arrays[] = {v->sizes, v->rbytes, v->unp, v->to_op, v->sc_op, v->blk, v->len, v->offs};
    for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++)
        mpitopo__free(arrays[i]);
    mpitopo__free(v);
}

static vctx_t *vctx_new(const mpitopo__nbr_t *n, int kind, const char *func,
                        const char *count_name)
{
    const struct mpitopo__node *p = n->node;
    const lead_t *l = &p->lead[kind];
    vctx_t *v = mpitopo__calloc(1, sizeof *v);
    if (!v)
        return NULL;
    size_t blocks = (size_t)(l->nfrom ? l->from_start[l->nfrom] : 0) + (size_t)l->staging;
    if (blocks < (size_t)p->nin[kind])
        blocks = (size_t)p->nin[kind];
    *v = (vctx_t){.func = func, .count_name = count_name, .kind = kind};
    v->sizes = ints((size_t)p->nout[kind]);
    v->rbytes = ints((size_t)n->indegree);
    v->unp = ints((size_t)n->indegree);
    v->to_op = ints((size_t)l->nto);
    v->sc_op = ints((size_t)l->nsc);
    v->blk = mpitopo__malloc_array(blocks + 1, sizeof *v->blk);
    v->len = ints(blocks);
    v->offs = mpitopo__malloc_array(blocks + 1, sizeof *v->offs);
    if (!v->sizes || !v->rbytes || !v->unp || !v->to_op || !v->sc_op || !v->blk || !v->len ||
        !v->offs) {
        vctx_free(v);
        return NULL;
    }
    return v;
}

/* The parts of a received message [sizes | parts] of nparts parts (at
 * most the blocks of v): where each starts and its bytes. 0 when the
 * header does not describe the message exactly. */
static int split(vctx_t *v, const char *m, size_t bytes, int nparts, const char **blk, int *len)
{
    if (!mpitopo__parts_parse(m, bytes, nparts, v->offs))
        return 0;
    for (int j = 0; j < nparts; j++) {
        blk[j] = m + v->offs[j];
        len[j] = (int)(v->offs[j + 1] - v->offs[j]);
    }
    return 1;
}

static int bad_message(const vctx_t *v, size_t bytes, const char *what, int rank, int nparts)
{
    return MPITOPO_FAIL_AS(MPI_ERR_TRUNCATE, v->func,
                             "the %zu-byte %s message from rank %d does not hold the %d blocks "
                             "expected (node schedule)",
                             bytes, what, rank, nparts);
}

/* Messages [sizes | parts] of groups j < ngroups, back to back in buffer
 * buf (group j: blocks base + map[x], x in start[j] .. start[j + 1]); the
 * send op[j] gets its place and size (op[j] < 0: the scatter message I
 * keep, whose place goes to sc_*). */
static int assemble(mpitopo_request_t r, vctx_t *v, int buf, int ngroups, const int *start,
                    const int *map, int base, const int *op)
{
    long long total = 0;
    for (int j = 0; j < ngroups; j++)
        for (int x = start[j]; x < start[j + 1]; x++)
            total += (long long)sizeof(int) + v->len[base + map[x]];
    mpitopo__rbuf_t *o = total <= INT_MAX ? mpitopo__request_buf(r, buf, (size_t)total) : NULL;
    if (!o)
        return MPITOPO_FAIL_AS(total <= INT_MAX ? MPITOPO_ERR_NOMEM : MPITOPO_ERR_UNSUPPORTED,
                                 v->func,
                                 "cannot aggregate %lld bytes at a node leader (use the linear "
                                 "schedule)",
                                 total);
    char *at = o->p;
    for (int j = 0; j < ngroups; j++) {
        char *h = at, *d = at + (size_t)(start[j + 1] - start[j]) * sizeof(int);
        for (int x = start[j]; x < start[j + 1]; x++) {
            int b = base + map[x];
            memcpy(h, &v->len[b], sizeof(int));
            memcpy(d, v->blk[b], (size_t)v->len[b]);
            h += sizeof(int);
            d += v->len[b];
        }
        if (op[j] >= 0) {
            mpitopo__op_t *s = &r->ops[op[j]];
            s->buf_id = buf;
            s->tmp_off = at - o->p;
            s->count = (int)(d - at);
        } else {
            v->sc_buf = buf;
            v->sc_at = at - o->p;
            v->sc_len = (size_t)(d - at);
        }
        at = d;
    }
    o->len = (size_t)total;
    return MPITOPO_SUCCESS;
}

/* Round 1 of a leader: the node messages, from the members' messages
 * (and my own, in tmp). */
static int vnode_msgs(mpitopo_request_t r, int arg)
{
    (void)arg;
    vctx_t *v = r->ctx;
    const struct mpitopo__node *p = r->nbr->node;
    const lead_t *l = &p->lead[v->kind];
    int own = p->nout[v->kind];
    if (own > 0 && !split(v, r->tmp, (size_t)v->own_len, own, v->blk + l->own_off,
                          v->len + l->own_off))
        return bad_message(v, (size_t)v->own_len, "own", p->me, own);
    for (int j = 0; j < l->nmem; j++) {
        const mpitopo__rbuf_t *m = &r->bufs[v->mem_buf + j - 1];
        if (!split(v, m->p, m->len, l->mem_cnt[j], v->blk + l->mem_off[j], v->len + l->mem_off[j]))
            return bad_message(v, m->len, "member", l->mem_rank[j], l->mem_cnt[j]);
    }
    return assemble(r, v, v->to_buf, l->nto, l->to_start, l->to_blk, 0, v->to_op);
}

/* Round 2 of a leader: the scatter messages, from the node messages. */
static int vscatter(mpitopo_request_t r, int arg)
{
    (void)arg;
    vctx_t *v = r->ctx;
    const lead_t *l = &r->nbr->node->lead[v->kind];
    for (int j = 0; j < l->nfrom; j++) {
        const mpitopo__rbuf_t *m = &r->bufs[v->from_buf + j - 1];
        int first = l->staging + l->from_start[j], nparts = l->from_start[j + 1] - l->from_start[j];
        if (!split(v, m->p, m->len, nparts, v->blk + first, v->len + first))
            return bad_message(v, m->len, "node", l->from_rank[j], nparts);
    }
    return assemble(r, v, v->sc_out, l->nsc, l->sc_start, l->sc_blk, l->staging, v->sc_op);
}

/* Last round: check every part of my scatter message against my receive
 * slots, then aim their unpacks at it. */
static int vunpack(mpitopo_request_t r, int arg)
{
    (void)arg;
    vctx_t *v = r->ctx;
    const mpitopo__nbr_t *n = r->nbr;
    const struct mpitopo__node *p = n->node;
    const mpitopo__rbuf_t *m = &r->bufs[v->sc_buf - 1];
    size_t bytes = p->me == p->leader ? v->sc_len : m->len;
    const char *at = m->p + v->sc_at;
    if (!split(v, at, bytes, p->nin[v->kind], v->blk, v->len))
        return bad_message(v, bytes, "scatter", p->leader, p->nin[v->kind]);
    for (int i = 0; i < n->indegree; i++) {
        if (v->unp[i] < 0)
            continue;
        int part = p->in_pos[v->kind][i];
        mpitopo__op_t *u = &r->ops[v->unp[i]];
        if (v->len[part] != v->rbytes[i])
            return MPITOPO_FAIL_AS(MPI_ERR_TRUNCATE, v->func,
                                     "receive block %d: %d bytes arrived from rank %d (via node "
                                     "leader %d), but %s[%d] = %d elements hold %d bytes",
                                     i, v->len[part], n->sources[i], p->leader, v->count_name, i,
                                     u->count, v->rbytes[i]);
        u->buf_id = v->sc_buf;
        u->tmp_off = v->blk[part] - m->p;
    }
    return MPITOPO_SUCCESS;
}

/* Round 0: [sizes | parts] of my blocks for other nodes at tmp + 0, sent
 * to the leader (a leader keeps it: own_len); a member's receive of its
 * scatter message; a leader's receives of its members' messages; my
 * node's edges direct. Returns the bytes of tmp used. */
static MPI_Aint vround0(builder_t *b, vctx_t *v, const layout_t *L, const int *sbv,
                        MPI_Aint *pos_at)
{
    const mpitopo__nbr_t *n = b->n;
    const struct mpitopo__node *p = n->node;
    const lead_t *l = &p->lead[L->kind];
    int m = p->nout[L->kind], isleader = p->me == p->leader;
    if (L->kind == KAG && m > 0)
        v->sizes[0] = sbv[0];
    for (int d = 0; L->kind == KA2A && d < n->outdegree; d++)
        if (p->out_pos[KA2A][d] >= 0)
            v->sizes[p->out_pos[KA2A][d]] = sbv[d];
    MPI_Aint at = (MPI_Aint)m * (MPI_Aint)sizeof(int);
    for (int j = 0; j < m; j++) {
        pos_at[j] = at;
        at += v->sizes[j];
    }
    if (m > 0)
        add(b, (mpitopo__op_t){.buf = v->sizes, .count = m * (int)sizeof(int), .type = MPI_BYTE,
                               .kind = MPITOPO__OP_PACK, .tmp_bytes = m * (int)sizeof(int)});
    if (L->kind == KAG && m > 0)
        add_copy(b, MPITOPO__OP_PACK, b->send, 0, pos_at[0], sbv[0]);
    for (int d = 0; L->kind == KA2A && d < n->outdegree; d++)
        if (p->out_pos[KA2A][d] >= 0)
            add_copy(b, MPITOPO__OP_PACK, b->send, d, pos_at[p->out_pos[KA2A][d]], sbv[d]);
    if (m > 0 && !isleader)
        add_msg(b, MPITOPO__OP_SEND, 0, at, p->leader, L->t1);
    v->own_len = isleader && m > 0 ? at : 0;
    if (!isleader && p->nin[L->kind] > 0)
        add(b, (mpitopo__op_t){.type = MPI_BYTE, .peer = p->leader, .tag = L->t3,
                               .kind = MPITOPO__OP_RECV_ANY, .buf_id = v->sc_buf});
    for (int j = 0; j < l->nmem; j++)
        add(b, (mpitopo__op_t){.type = MPI_BYTE, .peer = l->mem_rank[j], .tag = L->t1,
                               .kind = MPITOPO__OP_RECV_ANY, .buf_id = v->mem_buf + j});
    direct(b, L);
    close_round(b);
    return m > 0 ? at : 0;
}

/* Rounds 1 and 2 of a leader: node messages, then the scatter, each
 * assembled by a runtime step that sets the sizes of its sends. */
static void vleader_rounds(builder_t *b, vctx_t *v, const layout_t *L)
{
    const lead_t *l = &b->n->node->lead[L->kind];
    if (l->nto > 0 || l->nfrom > 0) {
        add(b, (mpitopo__op_t){.type = MPI_BYTE, .kind = MPITOPO__OP_CALL, .call = vnode_msgs});
        for (int j = 0; j < l->nto; j++) {
            v->to_op[j] = b->k;
            add_msg(b, MPITOPO__OP_SEND, 0, 0, l->to_rank[j], L->t2);
        }
        for (int j = 0; j < l->nfrom; j++)
            add(b, (mpitopo__op_t){.type = MPI_BYTE, .peer = l->from_rank[j], .tag = L->t2,
                                   .kind = MPITOPO__OP_RECV_ANY, .buf_id = v->from_buf + j});
        close_round(b);
    }
    if (l->nsc > 0) {
        add(b, (mpitopo__op_t){.type = MPI_BYTE, .kind = MPITOPO__OP_CALL, .call = vscatter});
        for (int j = 0; j < l->nsc; j++) {
            v->sc_op[j] = j == l->own_sc ? -1 : b->k;
            if (j != l->own_sc)
                add_msg(b, MPITOPO__OP_SEND, 0, 0, l->sc_rank[j], L->t3);
        }
        close_round(b);
    }
}

/* Last round: vunpack, then the unpacks it aims. */
static void vunpacks(builder_t *b, vctx_t *v, const layout_t *L)
{
    const mpitopo__nbr_t *n = b->n;
    const int *pos = n->node->in_pos[L->kind];
    for (int i = 0; i < n->indegree; i++)
        v->unp[i] = -1;
    if (n->node->nin[L->kind] == 0)
        return;
    add(b, (mpitopo__op_t){.type = MPI_BYTE, .kind = MPITOPO__OP_CALL, .call = vunpack});
    for (int i = 0; i < n->indegree; i++)
        if (pos[i] >= 0) {
            v->unp[i] = b->k;
            add_copy(b, MPITOPO__OP_UNPACK, b->recv, i, 0, v->rbytes[i]);
        }
    close_round(b);
}

/* The v/w schedule (also right for allgather and alltoall): the runtime
 * state goes to the request at once, so that it is freed with it. */
static int vfill(builder_t *b, const layout_t *L, const char *func)
{
    const mpitopo__nbr_t *n = b->n;
    const struct mpitopo__node *p = n->node;
    const lead_t *l = &p->lead[L->kind];
    int *sbv = ints((size_t)n->outdegree);
    MPI_Aint *pos_at = mpitopo__malloc_array((size_t)p->nout[L->kind] + 1, sizeof *pos_at);
    vctx_t *v = vctx_new(n, L->kind, func, b->recv->count_name);
    int rc = sbv && pos_at && v ? MPITOPO_SUCCESS
                                : MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func,
                                                    "out of memory for the node schedule");
    if (v) {
        b->r->ctx = v;
        b->r->ctx_free = vctx_free;
    }
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__slot_bytes(b->send, n->outdegree, sbv, "node", func);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__slot_bytes(b->recv, n->indegree, v->rbytes, "node", func);
    if (rc == MPITOPO_SUCCESS) {
        int isleader = p->me == p->leader;
        v->mem_buf = 1;
        v->from_buf = v->mem_buf + l->nmem;
        v->to_buf = v->from_buf + l->nfrom;
        v->sc_out = v->to_buf + 1;
        v->sc_buf = isleader ? v->sc_out : 1;
        MPI_Aint tmp = vround0(b, v, L, sbv, pos_at);
        if (isleader)
            vleader_rounds(b, v, L);
        vunpacks(b, v, L);
        b->r->nops = b->k;
        b->r->nrounds = b->round;
        rc = mpitopo__request_bufs(b->r, isleader ? v->sc_out : 1);
        if (rc == MPITOPO_SUCCESS)
            rc = mpitopo__request_alloc_tmp(b->r, (size_t)tmp);
    }
    mpitopo__free(sbv);
    mpitopo__free(pos_at);
    return rc;
}

static int block_bytes(const side_t *s, int *bytes, const char *func)
{
    int size, rc = PMPI_Type_size(s->type, &size);
    if (rc != MPI_SUCCESS)
        return mpitopo__mpi_result(func, rc);
    long long v = (long long)size * s->count;
    if (v > INT_MAX)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_UNSUPPORTED, func,
                                 "%s = %d of %d-byte elements is too large for the node "
                                 "schedule (use the linear schedule)",
                                 s->count_name, s->count, size);
    *bytes = (int)v;
    return MPITOPO_SUCCESS;
}

/* Upper bound of the steps of one call. */
static long long max_ops(const mpitopo__nbr_t *n, int kind)
{
    const lead_t *l = &n->node->lead[kind];
    long long ops = 2LL * n->outdegree + 2LL * n->indegree + 7 + l->nmem + l->nto + l->nfrom +
                    l->nsc;
    ops += l->nto ? l->to_start[l->nto] : 0;
    ops += l->nsc ? l->sc_start[l->nsc] : 0;
    return ops;
}

int mpitopo__node_build(mpitopo__nbr_t *n, const side_t *send, const side_t *recv,
                        mpitopo_request_t *out, const char *func)
{
    int vw = send->mode == SIDE_V || send->mode == SIDE_W || recv->mode == SIDE_V ||
             recv->mode == SIDE_W;
    layout_t L = {.kind = send->mode == SIDE_SAME ? KAG : KA2A};
    int d = n->kind == MPI_CART && n->outdegree > 1 ? n->outdegree : 1;
    int rc = vw ? MPITOPO_SUCCESS : block_bytes(send, &L.sb, func);
    if (rc == MPITOPO_SUCCESS && !vw)
        rc = block_bytes(recv, &L.rb, func);
    if (rc == MPITOPO_SUCCESS && !vw)
        rc = make_layout(n, &L, func);
    long long nops = max_ops(n, L.kind);
    if (rc == MPITOPO_SUCCESS && nops > INT_MAX)
        rc = MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func, "node schedule too large");
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__nbr_tags(n, d + 3, &L.base, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    L.t1 = L.base + d;
    L.t2 = L.t1 + 1;
    L.t3 = L.t1 + 2;
    builder_t b = {.n = n, .send = send, .recv = recv};
    b.r = mpitopo__request_new(n, (int)nops, 4);
    if (!b.r)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func, "out of memory for %lld steps", nops);
    if (vw) {
        rc = vfill(&b, &L, func);
    } else {
        round0(&b, &L);
        if (n->node->me == n->node->leader)
            leader_rounds(&b, &L);
        unpacks(&b, &L);
        b.r->nops = b.k;
        b.r->nrounds = b.round;
        rc = mpitopo__request_alloc_tmp(b.r, L.size);
    }
    if (rc != MPITOPO_SUCCESS) {
        mpitopo__request_release(b.r);
        return rc;
    }
    *out = b.r;
    return MPITOPO_SUCCESS;
}

/* Why allgather or alltoall blocks of sb and rb bytes cannot run on the
 * plan, NULL when they can. A leader forwards at its own block size, so
 * every process must pass the same: _init calls know whether they do
 * (n->sizes_agreed); the others assume it of the processes that
 * communicate, as MPI makes them pass alike, but not of a leader without
 * neighbours, whose counts MPI leaves free (0, say). */
static const char *fixed_blocks(const mpitopo__nbr_t *n, mpitopo__opkind_t op, long long sb, long long rb)
{
    const struct mpitopo__node *p = n->node;
    long long most = p->max_blocks[op == MPITOPO__OPK_ALLGATHER ? KAG : KA2A];
    if (n->sizes_agreed < 0)
        return "allgather and alltoall need the same block size on every process";
    if (sb != rb)
        return "allgather and alltoall need the same block size sent and received";
    if (n->sizes_agreed == 0 && p->idle_leader)
        return "a node leader without neighbours may pass other counts than its members";
    if (sb > INT_MAX / (most > 1 ? most : 1))
        return "an aggregated message would exceed INT_MAX bytes";
    return NULL;
}

/* Asked for by name: all five operations, allgather and alltoall where
 * fixed_blocks allows. The plan is made here, collectively, before
 * anything local is judged, so every process takes part. */
static int applies(mpitopo__nbr_t *n, mpitopo__opkind_t op, long long sb, long long rb, const char **why,
                   const char *func)
{
    *why = "not an operation of the node schedule";
    if (!mpitopo__node_supports(op))
        return MPITOPO_SUCCESS;
    int rc = mpitopo__node_prepare(n, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    int fixed = op == MPITOPO__OPK_ALLGATHER || op == MPITOPO__OPK_ALLTOALL;
    *why = fixed ? fixed_blocks(n, op, sb, rb) : NULL;
    return MPITOPO_SUCCESS;
}

static int build(mpitopo__nbr_t *n, mpitopo__opkind_t op, const side_t *send, const side_t *recv,
                 const mpitopo__choice_t *c, mpitopo_request_t *out, const char *func)
{
    (void)op;
    (void)c;
    return mpitopo__node_build(n, send, recv, out, func);
}

static void free_state(mpitopo__nbr_t *n)
{
    mpitopo__node_free(n->node);
    n->node = NULL;
}

const mpitopo__sched_ops_t mpitopo__node_ops = {
    .applies = applies, .build = build, .free_state = free_state};
