/*
 * Graph and dist-graph communicators that are really reordered: for rings
 * laid across nodes and for random graphs (duplicate and self edges,
 * zero-degree ranks, weighted and not), through every constructor, every
 * rank checks that
 *   - the result is a topology communicator of the right kind;
 *   - rank k's neighbour lists (and weights) are the ones given for rank k,
 *     in the given order for the adjacent form, as multisets otherwise;
 *   - a neighbour allgather delivers every in-neighbour's rank;
 *   - the off-node weight is never above the original order's (and zero
 *     for rings that fit in nodes);
 *   - reorder = 0 keeps every rank; mpitopo_graph_map and
 *     mpitopo_dist_graph_reorder agree with the constructors;
 *   - a pattern file written by rank 0 and read back by every process gives,
 *     through mpitopo_pattern_adjacent, the arguments of the same graph.
 * MT_GRAPH_MAPPER (optional) selects the mapper through the info key.
 */
#include "mpitest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A graph over n ranks known to every process: out-lists with weights, and
 * the in-lists they imply (sources in increasing order, with repeats). */
typedef struct graph {
    int n;
    int *out_off, *out, *out_w; /* CSR */
    int *in_off, *in, *in_w;
} graph_t;

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static void graph_free(graph_t *g)
{
    free(g->out_off), free(g->out), free(g->out_w);
    free(g->in_off), free(g->in), free(g->in_w);
}

/* The in-lists from the out-lists. */
static void graph_transpose(graph_t *g)
{
    int n = g->n, m = g->out_off[n];
    g->in_off = calloc((size_t)n + 1, sizeof(int));
    g->in = malloc(((size_t)m + 1) * sizeof(int));
    g->in_w = malloc(((size_t)m + 1) * sizeof(int));
    for (int k = 0; k < m; k++)
        g->in_off[g->out[k] + 1]++;
    for (int v = 0; v < n; v++)
        g->in_off[v + 1] += g->in_off[v];
    int *fill = calloc((size_t)n, sizeof(int));
    for (int u = 0; u < n; u++)
        for (int k = g->out_off[u]; k < g->out_off[u + 1]; k++) {
            int v = g->out[k], at = g->in_off[v] + fill[v]++;
            g->in[at] = u;
            g->in_w[at] = g->out_w[k];
        }
    free(fill);
}

/* Rings of members `stride` apart: ring r = {r, r + stride, ...}, each
 * sending `bytes` to the next member. With stride = number of nodes and a
 * block placement, every ring edge crosses nodes until reordered. */
static void graph_rings(graph_t *g, int n, int stride, int bytes)
{
    g->n = n;
    g->out_off = malloc(((size_t)n + 1) * sizeof(int));
    g->out = malloc(((size_t)n + 1) * sizeof(int));
    g->out_w = malloc(((size_t)n + 1) * sizeof(int));
    for (int p = 0; p <= n; p++)
        g->out_off[p] = p;
    for (int p = 0; p < n; p++) {
        g->out[p] = (p + stride) % n;
        g->out_w[p] = bytes;
    }
    graph_transpose(g);
}

/* Random out-lists of 0..4 edges (a fifth of the ranks have none), with
 * duplicate and self edges, weights 0..999. */
static void graph_random(graph_t *g, int n, uint64_t seed)
{
    g->n = n;
    g->out_off = malloc(((size_t)n + 1) * sizeof(int));
    g->out = malloc(((size_t)n * 4 + 1) * sizeof(int));
    g->out_w = malloc(((size_t)n * 4 + 1) * sizeof(int));
    int m = 0;
    for (int p = 0; p < n; p++) {
        g->out_off[p] = m;
        uint64_t h = mix(seed ^ (uint64_t)p * 7919u);
        int deg = h % 5 == 0 ? 0 : (int)(h >> 8) % 5;
        for (int k = 0; k < deg; k++) {
            uint64_t e = mix(h + (uint64_t)k);
            int v = e % 7 == 0 ? p : (int)((e >> 16) % (uint64_t)n);
            g->out[m] = v;
            g->out_w[m++] = (int)((e >> 40) % 1000);
            if (e % 11 == 0 && k + 1 < deg) { /* a duplicate */
                g->out[m] = v;
                g->out_w[m++] = 1;
                k++;
            }
        }
    }
    g->out_off[n] = m;
    graph_transpose(g);
}

static MPI_Info make_info(const char *weights)
{
    MPI_Info info;
    MPI_Info_create(&info);
    const char *mapper = mt_getenv("MT_GRAPH_MAPPER");
    if (mapper)
        MPI_Info_set(info, "mpitopo_mapper", mapper);
    if (weights)
        MPI_Info_set(info, "mpitopo_weights", weights);
    return info;
}

/* Pairs (rank, weight) sorted, to compare lists as multisets. */
static void sort_pairs(int n, int *ranks, int *w)
{
    long long *p = malloc(((size_t)n + 1) * sizeof *p);
    for (int i = 0; i < n; i++)
        p[i] = (long long)ranks[i] << 32 | (unsigned)(w ? w[i] : 0);
    for (int i = 1; i < n; i++) /* insertion sort: lists are short */
        for (int j = i; j > 0 && p[j - 1] > p[j]; j--) {
            long long t = p[j];
            p[j] = p[j - 1];
            p[j - 1] = t;
        }
    for (int i = 0; i < n; i++) {
        ranks[i] = (int)(p[i] >> 32);
        if (w)
            w[i] = (int)(p[i] & 0xffffffff);
    }
    free(p);
}

/* Compare one list of the communicator with the expected one. */
static void check_list(const char *label, const char *what, int n, const int *got, const int *got_w,
                       const int *want, const int *want_w, int ordered)
{
    int *a = malloc(((size_t)n + 1) * sizeof *a), *b = malloc(((size_t)n + 1) * sizeof *b);
    int *aw = malloc(((size_t)n + 1) * sizeof *aw), *bw = malloc(((size_t)n + 1) * sizeof *bw);
    memcpy(a, got, (size_t)n * sizeof *a);
    memcpy(b, want, (size_t)n * sizeof *b);
    for (int i = 0; i < n; i++) {
        aw[i] = got_w ? got_w[i] : 0;
        bw[i] = want_w ? want_w[i] : 0;
    }
    if (!ordered) {
        sort_pairs(n, a, aw);
        sort_pairs(n, b, bw);
    }
    for (int i = 0; i < n; i++)
        if (!MT_CHECK(a[i] == b[i] && aw[i] == bw[i], "%s: %s[%d] = %d (weight %d), expected %d (weight %d)", label,
                      what, i, a[i], aw[i], b[i], bw[i]))
            break;
    free(a), free(b), free(aw), free(bw);
}

/* The node of every rank of comm, as keys (equal = same node). */
static int *node_of_rank(MPI_Comm comm)
{
    int size;
    MPI_Comm_size(comm, &size);
    int *keys = mt_node_keys(), *world = mt_world_ranks(comm);
    int *node = malloc((size_t)size * sizeof *node);
    for (int q = 0; q < size; q++)
        node[q] = keys[world[q]];
    free(keys);
    free(world);
    return node;
}

/* Weight of the graph's edges between different nodes when rank p of comm
 * plays role p. */
static long long offnode_weight(const graph_t *g, MPI_Comm comm, int weighted)
{
    int *node = node_of_rank(comm);
    long long w = 0;
    for (int u = 0; u < g->n; u++)
        for (int k = g->out_off[u]; k < g->out_off[u + 1]; k++)
            if (node[u] != node[g->out[k]])
                w += weighted ? g->out_w[k] : 1;
    free(node);
    return w;
}

/* Everything a process can check on the dist-graph communicator `dg`. */
static void check_dist(const char *label, const graph_t *g, MPI_Comm dg, int weighted, int ordered,
                       long long before, int expect_zero)
{
    int status, rank, size;
    MPI_Topo_test(dg, &status);
    if (!MT_CHECK(status == MPI_DIST_GRAPH, "%s: MPI_Topo_test = %d, not MPI_DIST_GRAPH", label, status))
        return;
    MPI_Comm_rank(dg, &rank);
    MPI_Comm_size(dg, &size);
    MT_CHECK(size == g->n, "%s: size %d, expected %d", label, size, g->n);
    int world_rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    if (!mt_getenv("MPITOPO_RANK0")) /* rank 0 stays where it was (keep) */
        MT_CHECK((rank == 0) == (world_rank == 0), "%s: world rank %d has rank %d in the new communicator", label,
                 world_rank, rank);
    int indeg, outdeg, w;
    MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &w);
    int want_in = g->in_off[rank + 1] - g->in_off[rank], want_out = g->out_off[rank + 1] - g->out_off[rank];
    if (!MT_CHECK(indeg == want_in && outdeg == want_out, "%s: rank %d has degrees %d/%d, expected %d/%d", label,
                  rank, indeg, outdeg, want_in, want_out))
        return;
    int *src = malloc(((size_t)indeg + 1) * sizeof *src), *srcw = malloc(((size_t)indeg + 1) * sizeof *srcw);
    int *dst = malloc(((size_t)outdeg + 1) * sizeof *dst), *dstw = malloc(((size_t)outdeg + 1) * sizeof *dstw);
    MPI_Dist_graph_neighbors(dg, indeg, src, weighted ? srcw : MPI_UNWEIGHTED, outdeg, dst,
                             weighted ? dstw : MPI_UNWEIGHTED);
    check_list(label, "sources", indeg, src, weighted ? srcw : NULL, g->in + g->in_off[rank],
               weighted ? g->in_w + g->in_off[rank] : NULL, ordered);
    check_list(label, "destinations", outdeg, dst, weighted ? dstw : NULL, g->out + g->out_off[rank],
               weighted ? g->out_w + g->out_off[rank] : NULL, ordered);
    /* Every in-neighbour sends its rank. */
    int *got = malloc(((size_t)indeg + 1) * sizeof *got);
    MPI_Neighbor_allgather(&rank, 1, MPI_INT, got, 1, MPI_INT, dg);
    for (int i = 0; i < indeg; i++)
        if (!MT_CHECK(got[i] == src[i], "%s: allgather from in-neighbour %d gave %d, expected %d", label, i,
                      got[i], src[i]))
            break;
    long long after = offnode_weight(g, dg, weighted);
    MT_CHECK(after <= before, "%s: off-node weight %lld after reordering, %lld before", label, after, before);
    if (expect_zero)
        MT_CHECK(after == 0, "%s: off-node weight %lld, expected 0 (rings fit in nodes)", label, after);
    free(src), free(srcw), free(dst), free(dstw), free(got);
}

/* The adjacent form, the reorder-only form, and reorder = 0. */
static void test_adjacent(const char *name, const graph_t *g, int weighted, int expect_zero)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char label[96];
    snprintf(label, sizeof label, "%s adjacent %s", name, weighted ? "weighted" : "unweighted");
    int indeg = g->in_off[rank + 1] - g->in_off[rank], outdeg = g->out_off[rank + 1] - g->out_off[rank];
    const int *in = indeg ? g->in + g->in_off[rank] : NULL, *out = outdeg ? g->out + g->out_off[rank] : NULL;
    /* Zero-degree ranks pass NULL lists and MPI_WEIGHTS_EMPTY. */
    const int *inw = !weighted ? MPI_UNWEIGHTED : indeg ? g->in_w + g->in_off[rank] : MPI_WEIGHTS_EMPTY;
    const int *outw = !weighted ? MPI_UNWEIGHTED : outdeg ? g->out_w + g->out_off[rank] : MPI_WEIGHTS_EMPTY;
    long long before = offnode_weight(g, MPI_COMM_WORLD, weighted);
    MPI_Info info = make_info(weighted ? "bytes" : NULL);
    for (int reorder = 0; reorder <= 1; reorder++) {
        MPI_Comm dg = MPI_COMM_NULL;
        if (!MT_CHECK_RC(mpitopo_dist_graph_create_adjacent(MPI_COMM_WORLD, indeg, in, inw, outdeg, out, outw,
                                                             info, reorder, &dg)))
            break;
        int newrank;
        MPI_Comm_rank(dg, &newrank);
        if (!reorder)
            MT_CHECK(newrank == rank, "%s: reorder = 0 moved rank %d to %d", label, rank, newrank);
        check_dist(label, g, dg, weighted, 1, before, reorder && expect_zero);
        /* The reordering alone gives the same ranks. */
        MPI_Comm plain = MPI_COMM_NULL;
        if (reorder && MT_CHECK_RC(mpitopo_dist_graph_reorder(MPI_COMM_WORLD, indeg, in, inw, outdeg, out, outw,
                                                              info, 1, &plain))) {
            int r2, status;
            MPI_Comm_rank(plain, &r2);
            MPI_Topo_test(plain, &status);
            MT_CHECK(r2 == newrank && status == MPI_UNDEFINED,
                     "%s: mpitopo_dist_graph_reorder gave rank %d (topology %d), the constructor %d", label, r2,
                     status, newrank);
            MPI_Comm_free(&plain);
        }
        MPI_Comm_free(&dg);
    }
    MPI_Info_free(&info);
}

/* The general form, edges given by their source (n = 1) or all by rank 0. */
static void test_general(const char *name, const graph_t *g, int weighted, int all_on_root)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char label[96];
    snprintf(label, sizeof label, "%s general %s%s", name, weighted ? "weighted" : "unweighted",
             all_on_root ? " (all on rank 0)" : "");
    int n, *sources, *degrees;
    const int *dst, *w;
    if (all_on_root) {
        n = rank == 0 ? g->n : 0;
        sources = malloc(((size_t)g->n + 1) * sizeof *sources);
        degrees = malloc(((size_t)g->n + 1) * sizeof *degrees);
        for (int p = 0; p < g->n; p++) {
            sources[p] = p;
            degrees[p] = g->out_off[p + 1] - g->out_off[p];
        }
        dst = g->out;
        w = g->out_w;
    } else {
        n = 1;
        sources = malloc(sizeof *sources);
        degrees = malloc(sizeof *degrees);
        sources[0] = rank;
        degrees[0] = g->out_off[rank + 1] - g->out_off[rank];
        dst = g->out + g->out_off[rank];
        w = g->out_w + g->out_off[rank];
    }
    long long before = offnode_weight(g, MPI_COMM_WORLD, weighted);
    MPI_Info info = make_info(weighted ? "messages" : NULL);
    MPI_Comm dg = MPI_COMM_NULL;
    const int *weights = !weighted ? MPI_UNWEIGHTED : (n && degrees[0]) || all_on_root ? w : MPI_WEIGHTS_EMPTY;
    if (MT_CHECK_RC(mpitopo_dist_graph_create(MPI_COMM_WORLD, n, sources, degrees, dst, weights, info, 1, &dg))) {
        check_dist(label, g, dg, weighted, 0, before, 0);
        MPI_Comm_free(&dg);
    }
    MPI_Info_free(&info);
    free(sources);
    free(degrees);
}

/* MPI_Graph_create on the first nnodes ranks, and MPI_Graph_map. */
static void test_graph(const char *name, const graph_t *full, int nnodes)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char label[96];
    snprintf(label, sizeof label, "%s graph_create nnodes %d", name, nnodes);
    /* The subgraph of the first nnodes roles. */
    int *index = malloc(((size_t)nnodes + 1) * sizeof *index);
    int *edges = malloc(((size_t)full->out_off[full->n] + 1) * sizeof *edges), m = 0;
    for (int p = 0; p < nnodes; p++) {
        for (int k = full->out_off[p]; k < full->out_off[p + 1]; k++)
            if (full->out[k] < nnodes)
                edges[m++] = full->out[k];
        index[p] = m;
    }
    int mapped = -2;
    MT_CHECK_RC(mpitopo_graph_map(MPI_COMM_WORLD, nnodes, index, edges, &mapped));
    MPI_Comm gc = MPI_COMM_NULL;
    if (MT_CHECK_RC(mpitopo_graph_create(MPI_COMM_WORLD, nnodes, index, edges, 1, &gc))) {
        int newrank = MPI_UNDEFINED;
        if (gc != MPI_COMM_NULL)
            MPI_Comm_rank(gc, &newrank);
        MT_CHECK(newrank == mapped, "%s: graph_map says %d, graph_create gave %d", label, mapped, newrank);
        int joined = gc != MPI_COMM_NULL, total = 0;
        MPI_Allreduce(&joined, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        MT_CHECK(total == nnodes, "%s: %d processes joined", label, total);
        if (gc != MPI_COMM_NULL) {
            int status, nn, ne;
            MPI_Topo_test(gc, &status);
            MPI_Graphdims_get(gc, &nn, &ne);
            MT_CHECK(status == MPI_GRAPH && nn == nnodes && ne == m, "%s: topology %d, %d nodes, %d edges", label,
                     status, nn, ne);
            int deg = index[newrank] - (newrank ? index[newrank - 1] : 0), got_deg;
            MPI_Graph_neighbors_count(gc, newrank, &got_deg);
            int *nb = malloc(((size_t)deg + 1) * sizeof *nb);
            if (MT_CHECK(got_deg == deg, "%s: degree %d, expected %d", label, got_deg, deg)) {
                MPI_Graph_neighbors(gc, newrank, deg, nb);
                check_list(label, "neighbours", deg, nb, NULL, edges + (newrank ? index[newrank - 1] : 0), NULL, 1);
            }
            free(nb);
            MPI_Comm_free(&gc);
        }
    }
    free(index);
    free(edges);
}

/* The random graph through a pattern file: rank 0 writes it, every process
 * reads it and takes its own arguments with mpitopo_pattern_adjacent. The
 * file's graph has duplicates merged, lists sorted, weights >= 1. */
static void test_pattern_file(const graph_t *g)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char path[64];
    int id = (int)getpid();
    MPI_Bcast(&id, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(path, sizeof path, "graph_pattern_%d.txt", id);
    int m = g->out_off[g->n];
    int *src = malloc(((size_t)m + 1) * sizeof *src);
    double *w = malloc(((size_t)m + 1) * sizeof *w);
    for (int u = 0; u < g->n; u++)
        for (int k = g->out_off[u]; k < g->out_off[u + 1]; k++) {
            src[k] = u;
            w[k] = g->out_w[k];
        }
    mpitopo_pattern_t *p = NULL;
    if (rank == 0 && MT_CHECK_RC(mpitopo_pattern_create(g->n, m, src, g->out, w, NULL, &p)))
        MT_CHECK_RC(mpitopo_pattern_write(p, path));
    mpitopo_pattern_destroy(&p);
    free(src);
    free(w);
    MPI_Barrier(MPI_COMM_WORLD);
    if (!MT_CHECK_RC(mpitopo_pattern_read(path, &p)))
        return;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        remove(path);
    /* The expected graph, from the file's out-lists. */
    graph_t f = {.n = g->n};
    f.out_off = malloc(((size_t)g->n + 1) * sizeof(int));
    f.out = malloc(((size_t)m + 1) * sizeof(int));
    f.out_w = malloc(((size_t)m + 1) * sizeof(int));
    int at = 0;
    for (int u = 0; u < g->n; u++) {
        int deg;
        const int *dst;
        const double *bytes;
        f.out_off[u] = at;
        mpitopo_pattern_out_edges(p, u, &deg, &dst, &bytes, NULL);
        for (int k = 0; k < deg; k++, at++) {
            f.out[at] = dst[k];
            f.out_w[at] = bytes[k] < 1 ? 1 : (int)(bytes[k] + 0.5);
        }
    }
    f.out_off[g->n] = at;
    graph_transpose(&f);
    int indeg, outdeg, *in = NULL, *inw = NULL, *out = NULL, *outw = NULL;
    if (MT_CHECK_RC(mpitopo_pattern_adjacent(p, rank, MPITOPO_WEIGHT_BYTES, &indeg, &in, &inw, &outdeg, &out,
                                             &outw))) {
        long long before = offnode_weight(&f, MPI_COMM_WORLD, 1);
        MPI_Comm dg = MPI_COMM_NULL;
        if (MT_CHECK_RC(mpitopo_dist_graph_create_adjacent(MPI_COMM_WORLD, indeg, in,
                                                            indeg ? inw : MPI_WEIGHTS_EMPTY, outdeg, out,
                                                            outdeg ? outw : MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 1,
                                                            &dg))) {
            check_dist("pattern file adjacent", &f, dg, 1, 1, before, 0);
            MPI_Comm_free(&dg);
        }
    }
    mpitopo_free(in), mpitopo_free(inw), mpitopo_free(out), mpitopo_free(outw);
    mpitopo_pattern_destroy(&p);
    graph_free(&f);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size, rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const mpitopo_nodeinfo_t *ni;
    MT_CHECK_RC(mpitopo_comm_nodeinfo(MPI_COMM_WORLD, &ni));
    /* Rings whose members are one node count apart: every edge crosses
     * nodes in the block order, none need to when a ring fits in a node. */
    int nnodes = ni->nnodes, fits = ni->emulated && ni->min_local_size == ni->max_local_size &&
                                    size % nnodes == 0 && size / nnodes == ni->min_local_size &&
                                    !mt_getenv("MT_GRAPH_NO_ZERO");
    graph_t rings = {0}, rnd = {0};
    graph_rings(&rings, size, nnodes > 1 ? nnodes : 2 < size ? 2 : 1, 1000);
    graph_random(&rnd, size, 42);
    for (int weighted = 0; weighted <= 1; weighted++) {
        test_adjacent("rings", &rings, weighted, fits && nnodes > 1);
        test_adjacent("random", &rnd, weighted, 0);
        test_general("rings", &rings, weighted, 0);
        test_general("random", &rnd, weighted, weighted);
    }
    test_graph("rings", &rings, size);
    test_graph("random", &rnd, size);
    test_graph("random", &rnd, size - size / 4);
    test_pattern_file(&rnd);
    graph_free(&rings);
    graph_free(&rnd);
    int rc = mt_finish("graph");
    MPI_Finalize();
    return rc;
}
