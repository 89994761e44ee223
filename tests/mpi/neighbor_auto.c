/*
 * The rule of the "auto" schedule on graph communicators: it combines
 * messages only where combining is expected to pay (the busiest process's
 * messages plus one per round, src/coll/combine.c mpitopo__combine_pays),
 * and only for blocks of at most 1 KiB; otherwise it runs linear.
 *
 * On a dist-graph made by mpitopo (no stencil), for alltoall, allgather
 * and alltoallv, every process counts the messages one operation sends
 * under linear, combine and auto (persistent requests, info
 * "mpitopo_neighbor"), and checks auto's received data byte for byte
 * against MPI_Neighbor_* on the same communicator. Cases, with what auto
 * must do:
 *   - Moore radius 1 on a periodic 2 x (size/2) grid, duplicate edges kept
 *     (every process has 8 edges each way and its neighbourhood overlaps
 *     its neighbours' almost completely): combines, at 8 and 16 processes
 *     (busiest process 10 messages in 5 rounds against 16 linear);
 *   - the complete graph at 16 processes (18 in 5 rounds against 30):
 *     combines;
 *   - where combining saves messages but not enough to pay for its
 *     rounds, a tie: the complete graph at 8 processes (10 in 5 rounds
 *     against 14) and Moore radius 1 on a 4 x 4 grid (12 in 5 rounds
 *     against 16): linear;
 *   - the ring (2 neighbours each way: nothing worth saving): linear;
 *   - the Moore graph with 1200-byte blocks: linear, except alltoallv,
 *     which combines whatever the block size (the v and w forms have no
 *     size that all processes know to agree on).
 * "Combines" is checked as: auto sends exactly what combine sends, and
 * fewer than linear; "linear": exactly what linear sends.
 */
#include "mpitest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Internal (src/coll/coll_internal.h): messages the schedules of comm sent. */
int mpitopo__coll_sends(MPI_Comm comm, long long *sends);

enum { AG, A2A, A2AV, NOPS };
static const char *op_name[NOPS] = {"allgather", "alltoall", "alltoallv"};
enum { LINEAR, COMBINE, AUTO, NSCHED };
static const char *sched_name[NSCHED] = {"linear", "combine", "auto"};

static int wrank, wsize;

typedef struct graph {
    const char *label;
    int out, in;
    int dst[32], src[32];
} graph_t;

/* The graphs, as seen by process `me`. */

/* Moore radius 1 on a periodic rows x (size/rows) grid, row-major ranks. */
static void moore_rows(graph_t *g, int me, int rows)
{
    int cols = wsize / rows, y = me / cols, x = me % cols;
    g->out = g->in = 0;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) {
            if (!dy && !dx)
                continue;
            g->dst[g->out++] = ((y + dy + rows) % rows) * cols + (x + dx + cols) % cols;
            g->src[g->in++] = ((y - dy + rows) % rows) * cols + (x - dx + cols) % cols;
        }
}

static void moore2(graph_t *g, int me)
{
    moore_rows(g, me, 2);
    g->label = "moore 2 x size/2";
}

static void moore4(graph_t *g, int me)
{
    moore_rows(g, me, 4);
    g->label = "moore 4 x size/4";
}

static void complete(graph_t *g, int me)
{
    g->label = "complete";
    g->out = g->in = 0;
    for (int r = 0; r < wsize; r++)
        if (r != me)
            g->dst[g->out++] = g->src[g->in++] = r;
}

static void ring(graph_t *g, int me)
{
    g->label = "ring";
    g->out = g->in = 2;
    g->dst[0] = g->src[1] = (me + 1) % wsize;
    g->dst[1] = g->src[0] = (me + wsize - 1) % wsize;
}

typedef void make_t(graph_t *g, int me);

static int has_duplicates(const graph_t *g)
{
    for (int i = 0; i < g->in; i++)
        for (int j = 0; j < i; j++)
            if (g->src[i] == g->src[j])
                return 1;
    return 0;
}

/* The block that receive slot i must hold: the k-th edge from s = src[i]
 * (k earlier slots from s) matches s's k-th send slot to us (MPI's
 * non-overtaking order); allgather sends one block. */
static int expected_slot(make_t *make, const graph_t *g, int i, int op)
{
    int s = g->src[i], k = 0;
    for (int j = 0; j < i; j++)
        k += g->src[j] == s;
    if (op == AG)
        return 0;
    graph_t h;
    make(&h, s);
    for (int d = 0; d < h.out; d++)
        if (h.dst[d] == wrank && k-- == 0)
            return d;
    return -1;
}

static unsigned char byte_of(int rank, int slot, int e)
{
    return (unsigned char)(rank * 31 + slot * 7 + e);
}

typedef struct bufs {
    int bytes;
    unsigned char *sb, *rb, *ref;
    int *sc, *sd, *rc, *rd;
} bufs_t;

static void bufs_make(bufs_t *b, const graph_t *g, int op, int bytes)
{
    int blocks = op == AG ? 1 : g->out;
    b->bytes = bytes;
    b->sb = malloc((size_t)blocks * bytes + 1);
    b->rb = malloc((size_t)g->in * bytes + 1);
    b->ref = malloc((size_t)g->in * bytes + 1);
    b->sc = malloc(2 * sizeof(int) * (size_t)(g->out + g->in + 1));
    b->sd = b->sc + g->out + 1;
    b->rc = b->sd + g->out + 1;
    b->rd = b->rc + g->in;
    for (int j = 0; j < blocks; j++)
        for (int e = 0; e < bytes; e++)
            b->sb[(size_t)j * bytes + e] = byte_of(wrank, j, e);
    for (int j = 0; j < g->out; j++) {
        b->sc[j] = bytes;
        b->sd[j] = j * bytes;
    }
    for (int i = 0; i < g->in; i++) {
        b->rc[i] = bytes;
        b->rd[i] = i * bytes;
    }
    memset(b->rb, 0xee, (size_t)g->in * bytes + 1);
    memset(b->ref, 0xdd, (size_t)g->in * bytes + 1);
}

static void bufs_free(bufs_t *b)
{
    free(b->sb);
    free(b->rb);
    free(b->ref);
    free(b->sc);
}

static int init(int op, bufs_t *b, MPI_Info info, MPI_Comm c, mpitopo_request_t *q)
{
    switch (op) {
    case AG:
        return mpitopo_neighbor_allgather_init(b->sb, b->bytes, MPI_BYTE, b->rb, b->bytes,
                                               MPI_BYTE, c, info, q);
    case A2A:
        return mpitopo_neighbor_alltoall_init(b->sb, b->bytes, MPI_BYTE, b->rb, b->bytes,
                                              MPI_BYTE, c, info, q);
    default:
        return mpitopo_neighbor_alltoallv_init(b->sb, b->sc, b->sd, MPI_BYTE, b->rb, b->rc,
                                               b->rd, MPI_BYTE, c, info, q);
    }
}

static int reference(int op, bufs_t *b, MPI_Comm c)
{
    switch (op) {
    case AG:
        return MPI_Neighbor_allgather(b->sb, b->bytes, MPI_BYTE, b->ref, b->bytes, MPI_BYTE, c);
    case A2A:
        return MPI_Neighbor_alltoall(b->sb, b->bytes, MPI_BYTE, b->ref, b->bytes, MPI_BYTE, c);
    default:
        return MPI_Neighbor_alltoallv(b->sb, b->sc, b->sd, MPI_BYTE, b->ref, b->rc, b->rd,
                                      MPI_BYTE, c);
    }
}

/* Messages one persistent run of op under sched sends, summed over all
 * processes; the received data is checked against the senders' blocks
 * and MPI's. MPICH 4.0's MPI_Neighbor_alltoall delivers the blocks of a
 * duplicated neighbour in reverse order (tests/mpi/neighbor_linear.c):
 * no MPI reference there. */
static long long run(make_t *make, const graph_t *g, MPI_Comm c, int op, int sched, int bytes)
{
    bufs_t b;
    bufs_make(&b, g, op, bytes);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpitopo_neighbor", sched_name[sched]);
    long long before = 0, after = 0, mine, total = 0;
    mpitopo_request_t q = MPITOPO_REQUEST_NULL;
    MT_CHECK_RC(init(op, &b, info, c, &q));
    MT_CHECK_RC(mpitopo__coll_sends(c, &before));
    MT_CHECK_RC(mpitopo_start(&q));
    MT_CHECK_RC(mpitopo_wait(&q));
    MT_CHECK_RC(mpitopo__coll_sends(c, &after));
    mpitopo_request_free(&q);
    for (int i = 0, bad = 0; i < g->in && !bad; i++) {
        int d = expected_slot(make, g, i, op);
        for (int e = 0; e < bytes && !bad; e++)
            bad = !MT_CHECK(d >= 0 && b.rb[(size_t)i * bytes + e] == byte_of(g->src[i], d, e),
                            "%s: %s under %s, %d-byte blocks: byte %d of block %d from %d "
                            "is %d, not %d",
                            g->label, op_name[op], sched_name[sched], bytes, e, i, g->src[i],
                            b.rb[(size_t)i * bytes + e], byte_of(g->src[i], d, e));
    }
    if (op == AG || !has_duplicates(g) || !mt_is_mpich()) {
        MT_CHECK(reference(op, &b, c) == MPI_SUCCESS, "%s: MPI_Neighbor_%s failed", g->label,
                 op_name[op]);
        MT_CHECK(!memcmp(b.rb, b.ref, (size_t)g->in * bytes),
                 "%s: %s under %s, %d-byte blocks: data differs from MPI_Neighbor_%s",
                 g->label, op_name[op], sched_name[sched], bytes, op_name[op]);
    }
    MPI_Info_free(&info);
    bufs_free(&b);
    mine = after - before;
    MPI_Allreduce(&mine, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return total;
}

static void check(make_t *make, int pays, int bytes)
{
    graph_t g;
    make(&g, wrank);
    MPI_Comm c;
    if (!MT_CHECK_RC(mpitopo_dist_graph_create_adjacent(MPI_COMM_WORLD, g.in, g.src,
                                                        MPI_UNWEIGHTED, g.out, g.dst,
                                                        MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c)))
        return;
    for (int op = 0; op < NOPS; op++) {
        long long n[NSCHED];
        for (int s = 0; s < NSCHED; s++)
            n[s] = run(make, &g, c, op, s, bytes);
        if (wrank == 0)
            printf("# %s, %s, %d-byte blocks: messages linear %lld, combine %lld, auto %lld\n",
                   g.label, op_name[op], bytes, n[LINEAR], n[COMBINE], n[AUTO]);
        if (pays && (bytes <= 1024 || op == A2AV))
            MT_CHECK(n[AUTO] == n[COMBINE] && n[COMBINE] < n[LINEAR],
                     "%s, %s: auto sent %lld messages, combine %lld, linear %lld: auto must "
                     "combine here",
                     g.label, op_name[op], n[AUTO], n[COMBINE], n[LINEAR]);
        else
            MT_CHECK(n[AUTO] == n[LINEAR],
                     "%s, %s: auto sent %lld messages, linear %lld: auto must stay linear here",
                     g.label, op_name[op], n[AUTO], n[LINEAR]);
    }
    MPI_Comm_free(&c);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (wsize == 8 || wsize == 16) {
        check(moore2, 1, 8);
        check(moore2, 1, 1200);
    }
    if (wsize == 8)
        check(complete, 0, 8);
    if (wsize == 16) {
        check(moore4, 0, 8);
        check(complete, 1, 8);
    }
    if (wsize >= 3)
        check(ring, 0, 8);
    int rc = mt_finish("neighbor_auto");
    MPI_Finalize();
    return rc;
}
