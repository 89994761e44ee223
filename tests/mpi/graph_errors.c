/*
 * Errors of the graph constructors: a bad argument on one process (the last
 * one) makes every process return an error — the precise one, naming the
 * argument and the value, on the faulty process; one naming that process
 * elsewhere — with no hang and newcomm left MPI_COMM_NULL. Weights given on
 * some processes and not on others give MPITOPO_ERR_MISMATCH everywhere.
 * A valid creation still works afterwards.
 */
#include "mpitest.h"

#include <stdio.h>
#include <string.h>

static int rank, size, last;

/* Every process fails with `want`; the faulty one's message mentions
 * `what`, the others' mention "process <last>" (unless every process is
 * faulty, as for mismatched weights: then all mention `what`). */
static void expect(int rc, MPI_Comm c, int want, const char *call, const char *what, int everywhere)
{
    const char *msg = mpitopo_last_error();
    char other[32];
    snprintf(other, sizeof other, "process %d", last);
    int faulty = everywhere || rank == last;
    if (!MT_CHECK(rc == (faulty ? want : MPITOPO_ERR_ARG) || (!faulty && rc == want),
                  "%s returned %s (%d), expected %s", call, mpitopo_err_name(rc), rc, mpitopo_err_name(want)))
        return;
    MT_CHECK(strstr(msg, faulty ? what : other), "%s: message \"%s\" does not mention \"%s\"", call, msg,
             faulty ? what : other);
    MT_CHECK(c == MPI_COMM_NULL, "%s: newcomm set despite the error", call);
}

/* A ring, with one thing broken on the last process by `breaker`. */
static void adjacent_case(const char *call, const char *what, int want, int everywhere, int bad_deg, int bad_dst,
                          int bad_w, MPI_Info info)
{
    int src = (rank + size - 1) % size, dst = (rank + 1) % size, w = 5, nw = -2;
    int indeg = 1, outdeg = 1, d = dst;
    const int *ww = &w;
    if (rank == last) {
        if (bad_deg)
            outdeg = -1;
        if (bad_dst)
            d = bad_dst == 1 ? size : MPI_PROC_NULL;
        if (bad_w)
            ww = bad_w == 1 ? &nw : MPI_UNWEIGHTED;
    }
    const int *sw = ww == MPI_UNWEIGHTED ? MPI_UNWEIGHTED : &w;
    for (int reorder = 0; reorder <= 1; reorder++) {
        MPI_Comm c = MPI_COMM_NULL;
        int rc = mpitopo_dist_graph_create_adjacent(MPI_COMM_WORLD, indeg, &src, sw, outdeg, &d, ww, info, reorder,
                                                    &c);
        char l[128];
        snprintf(l, sizeof l, "%s (reorder %d)", call, reorder);
        expect(rc, c, want, l, what, everywhere);
    }
}

static void general_case(void)
{
    int src = rank, deg = rank == last ? -1 : 1, dst = (rank + 1) % size, w = 1;
    MPI_Comm c = MPI_COMM_NULL;
    int rc = mpitopo_dist_graph_create(MPI_COMM_WORLD, 1, &src, &deg, &dst, &w, MPI_INFO_NULL, 1, &c);
    expect(rc, c, MPITOPO_ERR_ARG, "dist_graph_create degrees[0] = -1", "degrees[0] = -1", 0);
    deg = 1;
    dst = rank == last ? -5 : dst;
    rc = mpitopo_dist_graph_create(MPI_COMM_WORLD, 1, &src, &deg, &dst, &w, MPI_INFO_NULL, 1, &c);
    expect(rc, c, MPITOPO_ERR_ARG, "dist_graph_create destinations[0] = -5", "destinations[0] = -5", 0);
}

static void graph_case(void)
{
    /* A ring given with a bad edge on every process: the error is local. */
    int index[64], edges[64], n = size < 64 ? size : 64;
    for (int i = 0; i < n; i++) {
        index[i] = i + 1;
        edges[i] = (i + 1) % n;
    }
    edges[n - 1] = n;
    MPI_Comm c = MPI_COMM_NULL;
    int rc = mpitopo_graph_create(MPI_COMM_WORLD, n, index, edges, 1, &c);
    char what[64];
    snprintf(what, sizeof what, "edges[%d] = %d", n - 1, n);
    expect(rc, c, MPITOPO_ERR_ARG, "graph_create bad edge", what, 1);
    int nr = 7;
    rc = mpitopo_graph_map(MPI_COMM_WORLD, size + 1, index, edges, &nr);
    MT_CHECK(rc == MPITOPO_ERR_ARG && nr == MPI_UNDEFINED && strstr(mpitopo_last_error(), "nnodes"),
             "graph_map nnodes = size + 1: %s, newrank %d", mpitopo_err_name(rc), nr);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    last = size - 1;
    adjacent_case("outdegree = -1", "destinations = -1", MPITOPO_ERR_ARG, 0, 1, 0, 0, MPI_INFO_NULL);
    char what[64];
    snprintf(what, sizeof what, "destinations[0] = %d out of range", size);
    adjacent_case("neighbour = size", what, MPITOPO_ERR_ARG, 0, 0, 1, 0, MPI_INFO_NULL);
    adjacent_case("neighbour = MPI_PROC_NULL", "MPI_PROC_NULL", MPITOPO_ERR_ARG, 0, 0, 2, 0, MPI_INFO_NULL);
    adjacent_case("negative weight", "destweights[0] = -2", MPITOPO_ERR_ARG, 0, 0, 0, 1, MPI_INFO_NULL);
    if (size > 1)
        adjacent_case("weights on some processes only", "MPI_UNWEIGHTED on process", MPITOPO_ERR_MISMATCH, 1, 0,
                      0, 2, MPI_INFO_NULL);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpitopo_weights", "furlongs");
    adjacent_case("info mpitopo_weights = furlongs", "furlongs", MPITOPO_ERR_PARSE, 1, 0, 0, 0, info);
    MPI_Info_set(info, "mpitopo_weights", "bytes");
    MPI_Info_set(info, "mpitopo_mapper", "magic");
    adjacent_case("info mpitopo_mapper = magic", "magic", MPITOPO_ERR_PARSE, 1, 0, 0, 0, info);
    MPI_Info_free(&info);
    general_case();
    graph_case();
    MPI_Comm c = MPI_COMM_NULL;
    MT_CHECK(mpitopo_dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_WEIGHTS_EMPTY, 0, NULL,
                                                MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 1, NULL) == MPITOPO_ERR_ARG,
             "newcomm = NULL accepted");
    /* Still usable: an empty graph everywhere. */
    if (MT_CHECK_RC(mpitopo_dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_UNWEIGHTED, 0, NULL,
                                                       MPI_UNWEIGHTED, MPI_INFO_NULL, 1, &c)))
        MPI_Comm_free(&c);
    int rc = mt_finish("graph_errors");
    MPI_Finalize();
    return rc;
}
