/*
 * A plain MPI program, unaware of mpitopo (the shim test runs it as is):
 * rings of 4 consecutive ranks (vertex v talks to the next and the previous
 * vertex of its ring), built as graph topologies in five ways, with reorder:
 *   adjacent             MPI_Dist_graph_create_adjacent, weights 100 along
 *                        the ring, 10 against it;
 *   adjacent_unweighted  the same with MPI_UNWEIGHTED;
 *   dist                 MPI_Dist_graph_create with the same weights, the
 *                        edges of vertices w and w + 1 given by even ranks
 *                        w, none by odd ranks (MPI_WEIGHTS_EMPTY);
 *   dist_unweighted      MPI_Dist_graph_create, rank w gives the edges of
 *                        vertex w + 1, MPI_UNWEIGHTED;
 *   graph                MPI_Graph_create (every rank gives the whole graph);
 * and MPI_Graph_map on the graph.
 *   shim_graph_c [REORDER]
 * On each communicator every process queries its neighbours
 * (MPI_Dist_graph_neighbors / MPI_Graph_neighbors), translates them to
 * world ranks with MPI_Group_translate_ranks, and gathers the world ranks
 * of its in-neighbours with MPI_Neighbor_allgather. World rank 0 prints,
 * for check_graph:
 *   kinds K1 K2 ...
 *   proc KIND W NEW in N ... inw N ... out N ... outw N ... got N ...
 *                        (one line per process and kind; neighbours as
 *                        world ranks, inw/outw empty when unweighted)
 *   graph_map M0 M1 ...  MPI_Graph_map's rank of every world rank
 *   valid
 * or "FAIL graph_c: why" (exit status 1).
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RING 4
#define MAXD 4 /* room for more neighbours than the 2 of a ring, to see extra ones */

enum { F_W, F_NEW, F_NIN, F_NOUT, F_WEIGHTED, F_IN, F_INW = F_IN + MAXD, F_OUT = F_INW + MAXD,
       F_OUTW = F_OUT + MAXD, F_GOT = F_OUTW + MAXD, NREC = F_GOT + MAXD };

static char why[256];

#define CHECK(cond, ...)                                                                       \
    do {                                                                                       \
        if (!(cond) && !why[0])                                                                \
            snprintf(why, sizeof why, __VA_ARGS__);                                            \
    } while (0)

static int next_of(int v) { return v - v % RING + (v % RING + 1) % RING; }
static int prev_of(int v) { return v - v % RING + (v % RING + RING - 1) % RING; }

static MPI_Comm adjacent(int w, int weighted, int reorder)
{
    int src[2] = {prev_of(w), next_of(w)}, dst[2] = {next_of(w), prev_of(w)};
    int sw[2] = {100, 10}, dw[2] = {100, 10};
    MPI_Comm g = MPI_COMM_NULL;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, weighted ? sw : MPI_UNWEIGHTED, 2, dst,
                                   weighted ? dw : MPI_UNWEIGHTED, MPI_INFO_NULL, reorder, &g);
    return g;
}

/* Even ranks w give the edges of vertices w and w + 1, odd ranks none. */
static MPI_Comm dist_weighted(int w, int reorder)
{
    int src[2] = {w, w + 1}, deg[2] = {2, 2};
    int dst[4] = {next_of(w), prev_of(w), next_of(w + 1), prev_of(w + 1)};
    int wt[4] = {100, 10, 100, 10};
    int odd = w % 2;
    MPI_Comm g = MPI_COMM_NULL;
    MPI_Dist_graph_create(MPI_COMM_WORLD, odd ? 0 : 2, src, deg, dst,
                          odd ? MPI_WEIGHTS_EMPTY : wt, MPI_INFO_NULL, reorder, &g);
    return g;
}

/* Rank w gives the edges of vertex w + 1. */
static MPI_Comm dist_unweighted(int w, int size, int reorder)
{
    int s = (w + 1) % size, src[1] = {s}, deg[1] = {2}, dst[2] = {next_of(s), prev_of(s)};
    MPI_Comm g = MPI_COMM_NULL;
    MPI_Dist_graph_create(MPI_COMM_WORLD, 1, src, deg, dst, MPI_UNWEIGHTED, MPI_INFO_NULL, reorder,
                          &g);
    return g;
}

/* The whole ring graph in MPI_Graph_create's form: neighbours next, prev. */
static void ring_graph(int size, int *index, int *edges)
{
    for (int v = 0; v < size; v++) {
        index[v] = 2 * (v + 1);
        edges[2 * v] = next_of(v);
        edges[2 * v + 1] = prev_of(v);
    }
}

static void to_world(MPI_Comm g, int n, const int *ranks, int *world)
{
    MPI_Group gg, wg;
    MPI_Comm_group(g, &gg);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_translate_ranks(gg, n, ranks, wg, world);
    MPI_Group_free(&gg);
    MPI_Group_free(&wg);
}

/* Neighbours of the calling process in g (a dist graph or a graph) into
 * rec; returns 0 if they do not fit. */
static int neighbours(MPI_Comm g, int *rec)
{
    int topo = MPI_UNDEFINED, in[MAXD], out[MAXD];
    MPI_Topo_test(g, &topo);
    CHECK(topo == MPI_DIST_GRAPH || topo == MPI_GRAPH, "MPI_Topo_test gives %d", topo);
    if (topo == MPI_GRAPH) {
        int n = -1;
        MPI_Graph_neighbors_count(g, rec[F_NEW], &n);
        CHECK(n >= 0 && n <= MAXD, "MPI_Graph_neighbors_count gives %d", n);
        if (n < 0 || n > MAXD)
            return 0;
        MPI_Graph_neighbors(g, rec[F_NEW], MAXD, in);
        memcpy(out, in, sizeof in);
        rec[F_NIN] = rec[F_NOUT] = n;
    } else if (topo == MPI_DIST_GRAPH) {
        int nin = -1, nout = -1, weighted = -1;
        MPI_Dist_graph_neighbors_count(g, &nin, &nout, &weighted);
        CHECK(nin >= 0 && nin <= MAXD && nout >= 0 && nout <= MAXD,
              "MPI_Dist_graph_neighbors_count gives %d in, %d out", nin, nout);
        if (nin < 0 || nin > MAXD || nout < 0 || nout > MAXD)
            return 0;
        rec[F_WEIGHTED] = weighted;
        MPI_Dist_graph_neighbors(g, MAXD, in, weighted ? rec + F_INW : MPI_UNWEIGHTED, MAXD, out,
                                 weighted ? rec + F_OUTW : MPI_UNWEIGHTED);
        rec[F_NIN] = nin;
        rec[F_NOUT] = nout;
    } else {
        return 0;
    }
    to_world(g, rec[F_NIN], in, rec + F_IN);
    to_world(g, rec[F_NOUT], out, rec + F_OUT);
    return 1;
}

/* This process's record on g; rec[F_NEW] = -1 for MPI_COMM_NULL. */
static void record(MPI_Comm g, int w, int *rec)
{
    for (int i = 0; i < NREC; i++)
        rec[i] = 0;
    rec[F_W] = w;
    rec[F_NEW] = -1;
    if (g == MPI_COMM_NULL)
        return;
    MPI_Comm_rank(g, &rec[F_NEW]);
    if (!neighbours(g, rec))
        return;
    /* Every in-neighbour must deliver its world rank, in the order of the
     * in-neighbour list. */
    int got[MAXD];
    MPI_Neighbor_allgather(&w, 1, MPI_INT, got, 1, MPI_INT, g);
    memcpy(rec + F_GOT, got, (size_t)rec[F_NIN] * sizeof(int));
}

static void print_ints(const char *key, const int *v, int n)
{
    printf(" %s %d", key, n);
    for (int i = 0; i < n; i++)
        printf(" %d", v[i]);
}

static void print_kind(const char *kind, const int *all, int size)
{
    for (int p = 0; p < size; p++) {
        const int *r = all + (size_t)p * NREC;
        int nw = r[F_WEIGHTED] ? 1 : 0;
        printf("proc %s %d %d", kind, r[F_W], r[F_NEW]);
        print_ints("in", r + F_IN, r[F_NIN]);
        print_ints("inw", r + F_INW, nw * r[F_NIN]);
        print_ints("out", r + F_OUT, r[F_NOUT]);
        print_ints("outw", r + F_OUTW, nw * r[F_NOUT]);
        print_ints("got", r + F_GOT, r[F_NIN]);
        printf("\n");
    }
}

static const char *const kinds[] = {"adjacent", "adjacent_unweighted", "dist", "dist_unweighted",
                                    "graph"};
#define NKINDS (int)(sizeof kinds / sizeof kinds[0])

/* The communicator of kind k (MPI_COMM_NULL off the graph). */
static MPI_Comm create(int k, int w, int size, int reorder, const int *index, const int *edges)
{
    MPI_Comm g = MPI_COMM_NULL;
    switch (k) {
    case 0:
    case 1:
        return adjacent(w, k == 0, reorder);
    case 2:
        return dist_weighted(w, reorder);
    case 3:
        return dist_unweighted(w, size, reorder);
    default:
        MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, reorder, &g);
        return g;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int w, size, reorder = argc > 1 ? atoi(argv[1]) : 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &w);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size % RING != 0) {
        if (w == 0)
            printf("FAIL graph_c: %d processes, not a multiple of %d\n", size, RING);
        MPI_Finalize();
        return 1;
    }
    int *all = malloc((size_t)NKINDS * size * NREC * sizeof(int));
    int *index = malloc((size_t)size * sizeof(int)), *edges = malloc((size_t)2 * size * sizeof(int));
    int *map_of_world = malloc((size_t)size * sizeof(int));
    ring_graph(size, index, edges);

    for (int k = 0; k < NKINDS; k++) {
        int rec[NREC];
        MPI_Comm g = create(k, w, size, reorder, index, edges);
        CHECK(g != MPI_COMM_NULL, "%s: MPI_COMM_NULL", kinds[k]);
        record(g, w, rec);
        MPI_Gather(rec, NREC, MPI_INT, all + (size_t)k * size * NREC, NREC, MPI_INT, 0,
                   MPI_COMM_WORLD);
        if (g != MPI_COMM_NULL)
            MPI_Comm_free(&g);
    }
    int mapped = -1;
    MPI_Graph_map(MPI_COMM_WORLD, size, index, edges, &mapped);
    MPI_Gather(&mapped, 1, MPI_INT, map_of_world, 1, MPI_INT, 0, MPI_COMM_WORLD);

    /* One verdict: the message of the lowest failing rank. */
    int failed = why[0] ? w : size, first;
    MPI_Allreduce(&failed, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first < size && first != 0) {
        if (w == first)
            MPI_Send(why, sizeof why, MPI_CHAR, 0, 99, MPI_COMM_WORLD);
        if (w == 0)
            MPI_Recv(why, sizeof why, MPI_CHAR, first, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (w == 0) {
        printf("kinds");
        for (int k = 0; k < NKINDS; k++)
            printf(" %s", kinds[k]);
        printf("\n");
        for (int k = 0; k < NKINDS; k++)
            print_kind(kinds[k], all + (size_t)k * size * NREC, size);
        printf("graph_map");
        for (int p = 0; p < size; p++)
            printf(" %d", map_of_world[p]);
        printf("\n%s", first < size ? "FAIL graph_c: " : "valid\n");
        if (first < size)
            printf("world rank %d: %s\n", first, why);
        fflush(stdout);
    }
    free(all);
    free(index);
    free(edges);
    free(map_of_world);
    MPI_Finalize();
    return first < size;
}
