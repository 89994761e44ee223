/*
 * The rule of the "auto" schedule on graph communicators (src/coll/neighbor/linear.c
 * choose_auto): the host MPI's own operation, unless the cost model of
 * src/coll/neighbor/select.c predicts that combining beats it by the model's margin
 * (blocks of at most 1 KiB; the v and w forms whatever their sizes).
 *
 * On a dist-graph made by mpitopo (no stencil), for alltoall, allgather
 * and alltoallv, every process counts the messages one operation sends
 * under linear, combine and auto (persistent requests, info
 * "mpitopo_neighbor"; the host MPI's messages are not counted: auto sends
 * 0 when it hands the call to MPI), and checks auto's received data byte
 * for byte against MPI_Neighbor_* on the same communicator. Cases: Moore
 * radius 1 on periodic 2 x (size/2) and 4 x (size/4) grids with duplicate
 * edges kept, the complete graph, the ring, 8- and 1200-byte blocks.
 *   - graphs with a duplicate or self edge anywhere: auto never hands the
 *     call to MPI (MPICH delivers such edges in another order): linear, or
 *     combining for small blocks;
 *   - the default model: auto either hands the call to MPI or combines;
 *     it must hand it to MPI where combining saves nothing (the ring) and
 *     for allgather and alltoall of 1200-byte blocks;
 *   - MT_MODEL=free (a model file in MPITOPO_NEIGHBOR_MODEL that makes
 *     rounds and bytes free and takes no margin): auto combines exactly
 *     where combining sends fewer messages than linear;
 *   - MT_MODEL=bad (a file with an unknown key): the first call fails with
 *     MPITOPO_ERR_ARG naming the file, on every process.
 */
#include "mpitest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Internal (src/coll/coll_internal.h): messages the schedules of comm sent. */
int mpitopo__coll_sends(MPI_Comm comm, long long *sends);

enum { AG, A2A, A2AV, NOPS };
static const char *op_name[NOPS] = {"allgather", "alltoall", "alltoallv"};

/* The host defects of src/coll/neighbor/defects.c this test meets: MPICH 4.0.2's
 * MPI_Neighbor_allgather (a truncated receive not reported), which auto
 * therefore never chooses. */
static int host_defect(int op)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(v, &len);
    return op == AG && mt_is_mpich() && strstr(v, "4.0.2") != NULL;
}
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

static int free_model;

/* The dist-graph of g, made by mpitopo (no reordering); 0 on failure. */
static int graph_comm(make_t *make, graph_t *g, MPI_Comm *c)
{
    make(g, wrank);
    return MT_CHECK_RC(mpitopo_dist_graph_create_adjacent(MPI_COMM_WORLD, g->in, g->src,
                                                          MPI_UNWEIGHTED, g->out, g->dst,
                                                          MPI_UNWEIGHTED, MPI_INFO_NULL, 0, c));
}

static void check(make_t *make, int bytes)
{
    graph_t g;
    MPI_Comm c;
    if (!graph_comm(make, &g, &c))
        return;
    /* With a duplicate or self edge anywhere, auto keeps off the host MPI
     * (MPICH delivers such edges in another order) and picks between
     * mpitopo's linear schedule and combining by the pattern's rule. */
    int dups = has_duplicates(&g), any_dups = 0;
    MPI_Allreduce(&dups, &any_dups, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    for (int op = 0; op < NOPS && any_dups; op++) {
        long long n[NSCHED];
        for (int s = 0; s < NSCHED; s++)
            n[s] = run(make, &g, c, op, s, bytes);
        int small = bytes <= 1024 || op == A2AV;
        MT_CHECK(n[AUTO] == n[LINEAR] || (small && n[AUTO] == n[COMBINE]),
                 "%s, %s, %d-byte blocks (duplicate edges): auto sent %lld messages, linear %lld, "
                 "combine %lld",
                 g.label, op_name[op], bytes, n[AUTO], n[LINEAR], n[COMBINE]);
    }
    for (int op = 0; op < NOPS && !any_dups; op++) {
        long long n[NSCHED];
        for (int s = 0; s < NSCHED; s++)
            n[s] = run(make, &g, c, op, s, bytes);
        if (wrank == 0)
            printf("# %s, %s, %d-byte blocks: messages linear %lld, combine %lld, auto %lld\n",
                   g.label, op_name[op], bytes, n[LINEAR], n[COMBINE], n[AUTO]);
        int small = bytes <= 1024 || op == A2AV, saves = n[COMBINE] < n[LINEAR];
        if (host_defect(op)) { /* src/coll/neighbor/defects.c: never handed to this host MPI */
            MT_CHECK(n[AUTO] == n[LINEAR] || n[AUTO] == n[COMBINE],
                     "%s, %s: the host MPI's call is known broken, auto sent %lld messages, linear %lld, "
                     "combine %lld", g.label, op_name[op], n[AUTO], n[LINEAR], n[COMBINE]);
            continue;
        }
        MT_CHECK(n[AUTO] == 0 || n[AUTO] == n[COMBINE],
                 "%s, %s: auto sent %lld messages: neither the host MPI's (0) nor combine's "
                 "(%lld)", g.label, op_name[op], n[AUTO], n[COMBINE]);
        if (!small || !saves)
            MT_CHECK(n[AUTO] == 0, "%s, %s, %d-byte blocks: auto sent %lld messages: it must "
                                   "hand the call to the host MPI here",
                     g.label, op_name[op], bytes, n[AUTO]);
        else if (free_model)
            MT_CHECK(n[AUTO] == n[COMBINE], "%s, %s: auto sent %lld messages, combine %lld, "
                                            "linear %lld: auto must combine here",
                     g.label, op_name[op], n[AUTO], n[COMBINE], n[LINEAR]);
    }
    MPI_Comm_free(&c);
}

/* MT_MODEL: write this process's model file and point
 * MPITOPO_NEIGHBOR_MODEL at it (read at the first neighbourhood call). */
static void set_model(const char *which)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/mpitopo_model_%d_%d.txt", (int)getpid(), wrank);
    FILE *f = fopen(path, "w");
    if (!MT_CHECK(f != NULL, "cannot write %s", path))
        return;
    if (strcmp(which, "free") == 0)
        fputs("# rounds and bytes free, no margin\nround_us 0\nmsg_us 1\nbyte_us 0\nmargin 0\n", f);
    else
        fputs("round_us 1\nlatency_us 2\n", f);
    fclose(f);
    setenv("MPITOPO_NEIGHBOR_MODEL", path, 1);
    free_model = strcmp(which, "free") == 0;
}

static void check_bad_model(void)
{
    graph_t g;
    MPI_Comm c;
    if (!graph_comm(ring, &g, &c))
        return;
    /* alltoall: auto asks the model for it on every host MPI (MPICH 4.0.2's
     * allgather is never handed to the host, so its choice needs no model). */
    int s[4] = {wrank, wrank, wrank, wrank}, r[4];
    int rc = mpitopo_neighbor_alltoall(s, 1, MPI_INT, r, 1, MPI_INT, c);
    MT_CHECK(rc == MPITOPO_ERR_ARG && strstr(mpitopo_last_error(), "MPITOPO_NEIGHBOR_MODEL") &&
                 strstr(mpitopo_last_error(), "latency_us"),
             "a bad model file: rc %d, \"%s\"", rc, mpitopo_last_error());
    MPI_Comm_free(&c);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    const char *model = mt_getenv("MT_MODEL");
    if (model)
        set_model(model);
    if (model && strcmp(model, "bad") == 0) {
        check_bad_model();
        int rc = mt_finish("neighbor_auto");
        MPI_Finalize();
        return rc;
    }
    if (wsize == 8 || wsize == 16) {
        check(moore2, 8);
        check(moore2, 1200);
    }
    if (wsize == 8)
        check(complete, 8);
    if (wsize == 16) {
        check(moore4, 8);
        check(complete, 8);
    }
    if (wsize >= 3)
        check(ring, 8);
    int rc = mt_finish("neighbor_auto");
    MPI_Finalize();
    return rc;
}
