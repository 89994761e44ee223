/*
 * The parallel ptram inside the graph constructors (issue 17 part 2): under
 * the network of world (MPITOPO_NETWORK) and the mapper ptram[:args] (info
 * key mpitopo_mapper), mpitopo_dist_graph_create_adjacent,
 * mpitopo_dist_graph_create and mpitopo_graph_create return a real
 * topology communicator whose placement is exactly what the serial
 * mpitopo_map_network(spec) gives from the same graph, never worse than the
 * launch under the hybrid metric; a bad spec fails on every process alike.
 * Graphs: a weighted 2-D periodic grid (3 along x, 1 along y) and a sparse
 * pseudo-random graph (3 out-edges per rank, weights 1..9).
 */
#include "mpitest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;
static mpitopo_machine_t *machine;
static const mpitopo_network_t *net;
static int *leaf, *unit_end, node_level;

#define DEG 4

/* Rank q's out-edges: dst[DEG * q + i], weight w[...]; *deg of them. */
static void edges_of(int kind, int q, int *dst, int *w, int *deg)
{
    if (kind == 0) {
        int nx = size >= 8 ? 4 : 2, ny = size / nx, x = q % nx, y = q / nx;
        dst[0] = (x + 1) % nx + y * nx;
        dst[1] = (x + nx - 1) % nx + y * nx;
        dst[2] = x + ((y + 1) % ny) * nx;
        dst[3] = x + ((y + ny - 1) % ny) * nx;
        w[0] = w[1] = 3;
        w[2] = w[3] = 1;
        *deg = 4;
    } else {
        unsigned s = 2654435761u * (unsigned)(q + 1);
        *deg = 3;
        for (int i = 0; i < 3; i++) {
            s = s * 1103515245u + 12345u;
            dst[i] = (int)((s >> 8) % (unsigned)size);
            if (dst[i] == q)
                dst[i] = (q + 1) % size;
            w[i] = 1 + (int)((s >> 20) % 9);
        }
    }
}

/* Every rank's edges as a pattern (rank order, as the constructors gather). */
static mpitopo_pattern_t *whole_pattern(int kind, int weighted)
{
    int *src = malloc((size_t)size * DEG * sizeof *src), *dst = malloc((size_t)size * DEG * sizeof *dst);
    double *b = malloc((size_t)size * DEG * sizeof *b);
    int n = 0;
    for (int q = 0; q < size; q++) {
        int d[DEG], w[DEG], deg;
        edges_of(kind, q, d, w, &deg);
        for (int i = 0; i < deg; i++, n++) {
            src[n] = q;
            dst[n] = d[i];
            b[n] = weighted ? w[i] : 1;
        }
    }
    mpitopo_pattern_t *p = NULL;
    MT_CHECK_RC(mpitopo_pattern_create(size, n, src, dst, weighted ? b : NULL, weighted ? b : NULL, &p));
    free(src);
    free(dst);
    free(b);
    return p;
}

/* The constructor's placement (newrank of every world rank) against the
 * serial mapping of spec, and the hybrid metric against the launch's. */
static void compare(MPI_Comm g, int kind, int weighted, const char *spec, const char *label)
{
    int newrank, *newranks = malloc((size_t)size * sizeof *newranks);
    int *mapped = malloc((size_t)size * sizeof *mapped), *le = malloc((size_t)size * sizeof *le);
    int *me = malloc((size_t)size * sizeof *me);
    MPI_Comm_rank(g, &newrank);
    MPI_Allgather(&newrank, 1, MPI_INT, newranks, 1, MPI_INT, MPI_COMM_WORLD);
    mpitopo_pattern_t *pat = whole_pattern(kind, weighted);
    mpitopo_map_options_t opt = MPITOPO_MAP_OPTIONS_INIT;
    opt.launch = leaf;
    opt.never_worse = 1;
    if (!pat || !MT_CHECK_RC(mpitopo_map_network(spec, machine, net, unit_end, pat, &opt, mapped, NULL)))
        goto cleanup;
    for (int q = 0; q < size; q++)
        if (!MT_CHECK(mapped[newranks[q]] == leaf[q], "%s, %s: role %d on leaf %d in the constructor, %d serially",
                      label, spec, newranks[q], leaf[q], mapped[newranks[q]]))
            break;
    for (int p = 0; p < size; p++) {
        int u;
        mpitopo_machine_unit_of(machine, node_level, leaf[p], &u);
        le[p] = unit_end[u];
        mpitopo_machine_unit_of(machine, node_level, mapped[p], &u);
        me[p] = unit_end[u];
    }
    mpitopo_network_metrics_t before, after;
    MT_CHECK_RC(mpitopo_network_evaluate(net, pat, le, NULL, NULL, &before));
    MT_CHECK_RC(mpitopo_network_evaluate(net, pat, me, NULL, NULL, &after));
    MT_CHECK(after.hybrid <= before.hybrid, "%s, %s: hybrid %g above the launch's %g", label, spec, after.hybrid,
             before.hybrid);
cleanup:
    mpitopo_pattern_destroy(&pat);
    free(newranks);
    free(mapped);
    free(le);
    free(me);
}

static MPI_Info mapper_info(const char *spec)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpitopo_mapper", spec);
    return info;
}

static void check_adjacent(int kind, const char *spec)
{
    int dst[DEG], w[DEG], deg, topo;
    edges_of(kind, rank, dst, w, &deg);
    MPI_Info info = mapper_info(spec);
    MPI_Comm g;
    if (MT_CHECK_RC(mpitopo_dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_WEIGHTS_EMPTY, deg, dst, w,
                                                       info, 1, &g))) {
        MPI_Topo_test(g, &topo);
        MT_CHECK(topo == MPI_DIST_GRAPH, "adjacent, %s: topology %d is not a dist-graph", spec, topo);
        compare(g, kind, 1, spec, kind ? "adjacent, random" : "adjacent, grid");
        MPI_Comm_free(&g);
    }
    MPI_Info_free(&info);
}

static void check_general(int kind, const char *spec)
{
    int dst[DEG], w[DEG], deg, topo;
    edges_of(kind, rank, dst, w, &deg);
    MPI_Info info = mapper_info(spec);
    MPI_Comm g;
    if (MT_CHECK_RC(mpitopo_dist_graph_create(MPI_COMM_WORLD, 1, &rank, &deg, dst, w, info, 1, &g))) {
        MPI_Topo_test(g, &topo);
        MT_CHECK(topo == MPI_DIST_GRAPH, "general, %s: topology %d is not a dist-graph", spec, topo);
        compare(g, kind, 1, spec, kind ? "general, random" : "general, grid");
        MPI_Comm_free(&g);
    }
    MPI_Info_free(&info);
}

/* mpitopo_graph_create: every process gives the whole graph (unweighted). */
static void check_graph(int kind)
{
    int *index = malloc((size_t)size * sizeof *index), *edges = malloc((size_t)size * DEG * sizeof *edges), n = 0;
    for (int q = 0; q < size; q++) {
        int d[DEG], w[DEG], deg;
        edges_of(kind, q, d, w, &deg);
        for (int i = 0; i < deg; i++)
            edges[n++] = d[i];
        index[q] = n;
    }
    MPI_Comm g;
    int topo;
    if (MT_CHECK_RC(mpitopo_graph_create(MPI_COMM_WORLD, size, index, edges, 1, &g))) {
        MPI_Topo_test(g, &topo);
        MT_CHECK(topo == MPI_GRAPH, "graph: topology %d is not a graph", topo);
        compare(g, kind, 0, "ptram", kind ? "graph, random" : "graph, grid");
        MPI_Comm_free(&g);
    }
    free(index);
    free(edges);
}

/* A bad spec: every process fails, with the same code. */
static void check_bad(const char *spec)
{
    int dst[DEG], w[DEG], deg;
    edges_of(0, rank, dst, w, &deg);
    MPI_Info info = mapper_info(spec);
    MPI_Comm g = MPI_COMM_WORLD;
    int rc = mpitopo_dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_WEIGHTS_EMPTY, deg, dst, w, info, 1, &g);
    int lo, hi;
    MPI_Allreduce(&rc, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&rc, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MT_CHECK(rc != MPITOPO_SUCCESS && lo == hi, "%s: rc %d here (%s), from %d to %d over the processes", spec, rc,
             mpitopo_last_error(), lo, hi);
    MT_CHECK(g == MPI_COMM_NULL, "%s: newcomm not MPI_COMM_NULL on error", spec);
    MPI_Info_free(&info);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int end, *ends = malloc((size_t)size * sizeof *ends);
    leaf = malloc((size_t)size * sizeof *leaf);
    unit_end = malloc((size_t)size * sizeof *unit_end);
    MT_CHECK_RC(mpitopo_comm_network(MPI_COMM_WORLD, &net, &end));
    MT_CHECK_RC(mpitopo_comm_machine(MPI_COMM_WORLD, &machine, leaf));
    MPI_Allgather(&end, 1, MPI_INT, ends, 1, MPI_INT, MPI_COMM_WORLD);
    if (net && machine && !mt_failed()) {
        mpitopo_machine_node_level(machine, &node_level);
        for (int q = 0; q < size; q++) {
            int u;
            mpitopo_machine_unit_of(machine, node_level, leaf[q], &u);
            unit_end[u] = ends[q];
        }
        static const char *const specs[] = {"ptram", "ptram:part=none", "ptram:w=1,0,0,0:k=2", "ptram:strict",
                                            "ptram:rounds=0:norm"};
        for (int kind = 0; kind < 2; kind++) {
            for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
                check_adjacent(kind, specs[i]);
            check_general(kind, "ptram");
            check_graph(kind);
        }
        check_bad("ptram:k=0");
        check_bad("ptram:w=1,1,1");
    } else {
        MT_CHECK(net != NULL, "no network: run with MPITOPO_NETWORK");
    }
    mpitopo_machine_destroy(&machine);
    free(ends);
    free(leaf);
    free(unit_end);
    int rc = mt_finish("ptram_par");
    MPI_Finalize();
    return rc;
}
