/*
 * Dist-graphs without edges keep the caller's weighting (issue 14). MPI
 * says a dist-graph is weighted unless MPI_UNWEIGHTED was given, also on a
 * process with no edge. Every process gives in- and out-degree 0 with one
 * weights form — an array, MPI_WEIGHTS_EMPTY, NULL, MPI_UNWEIGHTED, or an
 * array one way and MPI_WEIGHTS_EMPTY the other — to
 *   - mpitopo_dist_graph_create_adjacent and mpitopo_dist_graph_create
 *     (n = 0, and n = 1 with degree 0),
 *   - MPI_Dist_graph_create_adjacent (the shim's, when it is preloaded),
 * with reorder = 0 and 1, and every rank checks that the result has no
 * neighbour and reports `weighted` as PMPI's own constructor does for the
 * same arguments (and, but for NULL, which MPI leaves to the
 * implementation: weighted unless MPI_UNWEIGHTED). A form PMPI rejects is
 * skipped. Then one process holds a weighted self-edge, the others none,
 * with the weighted forms: every process must report weighted.
 */
#include "mpitest.h"

#include <stdio.h>

enum { F_ARRAY, F_EMPTY, F_NULL, F_UNWEIGHTED, F_MIXED, NFORMS };
static const char *const form_name[NFORMS] = {"array", "MPI_WEIGHTS_EMPTY", "NULL", "MPI_UNWEIGHTED",
                                              "array/MPI_WEIGHTS_EMPTY"};
enum { C_ADJACENT, C_GENERAL0, C_GENERAL1, C_MPI, NCTORS };
static const char *const ctor_name[NCTORS] = {"mpitopo_dist_graph_create_adjacent",
                                              "mpitopo_dist_graph_create (n = 0)",
                                              "mpitopo_dist_graph_create (n = 1, degree 0)",
                                              "MPI_Dist_graph_create_adjacent"};

static int rank;
static int array[1] = {7};

static const int *weights_of(int form, int which)
{
    switch (form) {
    case F_ARRAY: return array;
    case F_EMPTY: return MPI_WEIGHTS_EMPTY;
    case F_NULL: return NULL;
    case F_UNWEIGHTED: return MPI_UNWEIGHTED;
    default: return which == 0 ? array : MPI_WEIGHTS_EMPTY;
    }
}

/* Creates the empty graph with constructor `c` (pmpi: PMPI's own with the
 * same arguments); returns the call's code. */
static int create(int c, int pmpi, int form, int reorder, MPI_Comm *out)
{
    const int *sw = weights_of(form, 0), *dw = weights_of(form, 1);
    int self = rank, zero = 0;
    if (c == C_ADJACENT || c == C_MPI) {
        if (pmpi)
            return PMPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, sw, 0, NULL, dw, MPI_INFO_NULL,
                                                   reorder, out);
        if (c == C_MPI)
            return MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, sw, 0, NULL, dw, MPI_INFO_NULL,
                                                  reorder, out);
        return mpitopo_dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, sw, 0, NULL, dw, MPI_INFO_NULL,
                                                  reorder, out);
    }
    /* n = 1: Open MPI wants a destinations array even for no edge. */
    int n = c == C_GENERAL1;
    const int *list = n ? &self : NULL;
    if (pmpi)
        return PMPI_Dist_graph_create(MPI_COMM_WORLD, n, list, n ? &zero : NULL, list, sw, MPI_INFO_NULL,
                                      reorder, out);
    return mpitopo_dist_graph_create(MPI_COMM_WORLD, n, list, n ? &zero : NULL, list, sw, MPI_INFO_NULL, reorder,
                                     out);
}

/* The weighted flag of a dist-graph without neighbours (-1 on error). */
static int weighted_of(MPI_Comm dg, const char *label)
{
    int status = MPI_UNDEFINED, indeg = -1, outdeg = -1, weighted = -1;
    if (!MT_CHECK(dg != MPI_COMM_NULL, "%s: MPI_COMM_NULL", label))
        return -1;
    MPI_Topo_test(dg, &status);
    MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted);
    MT_CHECK(status == MPI_DIST_GRAPH, "%s: topology %d, not MPI_DIST_GRAPH", label, status);
    MT_CHECK(indeg == 0 && outdeg == 0, "%s: degrees %d, %d instead of 0, 0", label, indeg, outdeg);
    return weighted;
}

/* What PMPI reports for the same call, or -1 when PMPI rejects it (the same
 * on every process). */
static int pmpi_weighted(int c, int form, int reorder, const char *label)
{
    MPI_Comm dg = MPI_COMM_NULL;
    int rc = create(c, 1, form, reorder, &dg), any_bad = 0;
    MPI_Allreduce((int[]){rc != MPI_SUCCESS}, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any_bad) {
        if (dg != MPI_COMM_NULL)
            MPI_Comm_free(&dg);
        if (rank == 0)
            printf("# %s: PMPI rejects it, skipped\n", label);
        return -1;
    }
    int w = weighted_of(dg, label);
    MPI_Comm_free(&dg);
    return w;
}

static void test_empty(int c, int form, int reorder)
{
    char label[160];
    snprintf(label, sizeof label, "%s, weights %s, reorder %d", ctor_name[c], form_name[form], reorder);
    int want = pmpi_weighted(c, form, reorder, label);
    if (want < 0)
        return;
    if (form == F_NULL && rank == 0)
        printf("# %s: PMPI reports weighted = %d\n", label, want);
    if (form != F_NULL)
        MT_CHECK(want == (form != F_UNWEIGHTED), "%s: PMPI reports weighted = %d", label, want);
    MPI_Comm dg = MPI_COMM_NULL;
    int rc = create(c, 0, form, reorder, &dg);
    if (!MT_CHECK(rc == MPI_SUCCESS, "%s: returned %d (%s)", label, rc, mpitopo_last_error()))
        return;
    int got = weighted_of(dg, label);
    MT_CHECK(got == want, "%s: weighted = %d, PMPI says %d", label, got, want);
    MPI_Comm_free(&dg);
}

/* Rank 0 has a weighted self-edge, the others nothing: the graph is weighted,
 * and so is every process's view of it, whichever role it takes. */
static void test_one_edge(int c, int form, int reorder)
{
    char label[160];
    snprintf(label, sizeof label, "%s, one edge, weights %s elsewhere, reorder %d",
             c == C_ADJACENT ? ctor_name[c] : "mpitopo_dist_graph_create", form_name[form], reorder);
    int edge = rank == 0, self = rank, w = 3;
    const int *sw = edge ? &w : weights_of(form, 0), *dw = edge ? &w : weights_of(form, 1);
    MPI_Comm dg = MPI_COMM_NULL;
    int rc;
    if (c == C_ADJACENT)
        rc = mpitopo_dist_graph_create_adjacent(MPI_COMM_WORLD, edge, &self, sw, edge, &self, dw, MPI_INFO_NULL,
                                                reorder, &dg);
    else
        rc = mpitopo_dist_graph_create(MPI_COMM_WORLD, edge, &self, &edge, &self, sw, MPI_INFO_NULL, reorder, &dg);
    if (!MT_CHECK(rc == MPI_SUCCESS, "%s: returned %d (%s)", label, rc, mpitopo_last_error()))
        return;
    int indeg = -1, outdeg = -1, weighted = -1;
    MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted);
    MT_CHECK(weighted == 1, "%s: weighted = %d", label, weighted);
    MPI_Comm_free(&dg);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    /* PMPI may reject NULL: its error must come back, not abort. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int reorder = 0; reorder <= 1; reorder++)
        for (int c = 0; c < NCTORS; c++)
            for (int form = 0; form < NFORMS; form++)
                if (!(form == F_MIXED && (c == C_GENERAL0 || c == C_GENERAL1)))
                    test_empty(c, form, reorder);
    for (int reorder = 0; reorder <= 1; reorder++)
        for (int c = C_ADJACENT; c <= C_GENERAL0; c++)
            for (int form = F_ARRAY; form <= F_NULL; form++)
                test_one_edge(c, form, reorder);
    int rc = mt_finish("graph_empty_weighted");
    MPI_Finalize();
    return rc;
}
