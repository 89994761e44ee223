/*
 * mpitopo-job: run under mpirun to see the machine an MPI job runs on, as
 * mpitopo discovers it (real nodes, or MPITOPO_EMULATE), where the launcher
 * put each rank, and what that placement costs a Cartesian halo exchange of
 * the job's size next to the best node-aware layout.
 *
 *   mpirun -n 16 mpitopo-job [NDIMS]        (default NDIMS = 2)
 */
#include <mpitopo.h>

#include <stdio.h>
#include <stdlib.h>

static int report(const char *what, int rc)
{
    fprintf(stderr, "mpitopo-job: %s failed: %s\n", what, rc > 0 ? "MPI error" : mpitopo_last_error());
    return 1;
}

static void print_nodes(const mpitopo_machine_t *m, const int *leaf_of_rank, int size)
{
    int node_level, nnodes;
    mpitopo_machine_node_level(m, &node_level);
    mpitopo_machine_level(m, node_level, NULL, NULL, &nnodes, NULL, NULL);
    for (int u = 0; u < nnodes; u++) {
        printf("  node %d: ranks", u);
        for (int r = 0; r < size; r++) {
            int unit;
            mpitopo_machine_unit_of(m, node_level, leaf_of_rank[r], &unit);
            if (unit == u)
                printf(" %d", r);
        }
        printf("\n");
    }
}

static int evaluate(const mpitopo_machine_t *m, const int *leaf_of_rank, int size, int ndims)
{
    int dims[3] = {0, 0, 0};
    MPI_Dims_create(size, ndims, dims);
    mpitopo_pattern_t *p = NULL;
    int rc = mpitopo_pattern_cart(ndims, dims, NULL, NULL, &p);
    if (rc != MPITOPO_SUCCESS)
        return report("mpitopo_pattern_cart", rc);
    mpitopo_metrics_t met;
    rc = mpitopo_metrics_compute(m, p, leaf_of_rank, MPITOPO_WEIGHT_BYTES, &met);
    if (rc == MPITOPO_SUCCESS) {
        char grid[64] = "";
        for (int i = 0, n = 0; i < ndims; i++)
            n += snprintf(grid + n, sizeof grid - (size_t)n, "%s%d", i ? "x" : "", dims[i]);
        printf("periodic %s halo exchange (dims from MPI_Dims_create) on this placement, as MPI_Cart_create keeps it:\n",
               grid);
        printf("  off-node partners per process  min %g  max %g  avg %.2f\n", met.offnode_partners.min,
               met.offnode_partners.max, met.offnode_partners.avg);
        printf("  on-node partners per process   min %g  max %g  avg %.2f\n", met.onnode_partners.min,
               met.onnode_partners.max, met.onnode_partners.avg);
        if (met.box_bound.found)
            printf("  best node-aware layout (boxes of one node): off-node partners avg %.2f\n",
                   met.box_bound.offnode_partners_avg);
        else
            printf("  (no box tiling: nodes are uneven or a node's size does not fit the grid)\n");
    } else {
        report("mpitopo_metrics_compute", rc);
    }
    mpitopo_pattern_destroy(&p);
    return rc != MPITOPO_SUCCESS;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, status = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int ndims = argc > 1 ? atoi(argv[1]) : 2;
    if (ndims < 1 || ndims > 3)
        ndims = 2;
    const mpitopo_nodeinfo_t *info;
    mpitopo_machine_t *m = NULL;
    int *leaf_of_rank = malloc((size_t)size * sizeof *leaf_of_rank);
    int rc = mpitopo_comm_nodeinfo(MPI_COMM_WORLD, &info);
    if (rc != MPITOPO_SUCCESS)
        status = report("mpitopo_comm_nodeinfo", rc);
    else if ((rc = mpitopo_comm_machine(MPI_COMM_WORLD, &m, leaf_of_rank)) != MPITOPO_SUCCESS)
        status = report("mpitopo_comm_machine", rc);
    if (!status && rank == 0) {
        char desc[256];
        mpitopo_machine_describe(m, desc, sizeof desc);
        printf("%d ranks on %d %s nodes (%d to %d ranks per node); machine %s\n", size, info->nnodes,
               info->emulated ? "emulated" : "real", info->min_local_size, info->max_local_size, desc);
        print_nodes(m, leaf_of_rank, size);
        status = evaluate(m, leaf_of_rank, size, ndims);
    }
    mpitopo_machine_destroy(&m);
    free(leaf_of_rank);
    MPI_Finalize();
    return status;
}
