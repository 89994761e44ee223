/*
 * SimGrid SMPI compatibility, compiled only when MPITOPO_SMPI is defined
 * (bench/smpi/build.sh does; the CMake build never does), and included
 * from mpi_internal.h after <mpi.h>, so every file of src/mpi and src/coll
 * sees the same shims and no call site changes.
 *
 * SMPI 3.32 implements nearly everything the MPI layer calls
 * (MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) groups the processes of one
 * simulated host; keyvals with copy and delete callbacks, and the delete
 * callbacks of MPI_COMM_SELF at MPI_Finalize, behave as in MPI-3). What it
 * lacks aborts the whole simulation ("Not yet implemented", xbt_die):
 *   - MPI_Topo_test: replaced below. SMPI creates no graph or dist-graph
 *     communicators (their constructors are missing too), so a
 *     communicator is either Cartesian (PMPI_Cartdim_get succeeds) or has
 *     no topology. On the latter PMPI_Cartdim_get logs a warning; run with
 *     --log=smpi_pmpi.thres:error to hide it.
 *   - MPI_Graph_*, MPI_Dist_graph_*, MPI_Cart_map and the neighbourhood
 *     collectives: redirected below to a function that returns
 *     MPI_ERR_UNSUPPORTED_OPERATION, so a code path that needs them fails
 *     with an error code instead of ending the simulation.
 */
#ifndef MPITOPO_SMPI_COMPAT_H
#define MPITOPO_SMPI_COMPAT_H

#ifdef MPITOPO_SMPI

static inline int mpitopo__smpi_topo_test(MPI_Comm comm, int *status)
{
    int ndims;
    if (comm == MPI_COMM_NULL)
        return MPI_ERR_COMM;
    *status = PMPI_Cartdim_get(comm, &ndims) == MPI_SUCCESS ? MPI_CART : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
#define PMPI_Topo_test mpitopo__smpi_topo_test

/* Takes the caller's arguments (so they count as used) and ignores them. */
static inline int mpitopo__smpi_unsupported(int unused, ...)
{
    (void)unused;
    return MPI_ERR_UNSUPPORTED_OPERATION;
}
#define MPITOPO__SMPI_UNSUPPORTED(...) mpitopo__smpi_unsupported(0, __VA_ARGS__)
#define PMPI_Cart_map(...) MPITOPO__SMPI_UNSUPPORTED(__VA_ARGS__)
#define PMPI_Graph_create(...) MPITOPO__SMPI_UNSUPPORTED(__VA_ARGS__)
#define PMPI_Graphdims_get(...) MPITOPO__SMPI_UNSUPPORTED(__VA_ARGS__)
#define PMPI_Graph_get(...) MPITOPO__SMPI_UNSUPPORTED(__VA_ARGS__)
#define PMPI_Graph_map(...) MPITOPO__SMPI_UNSUPPORTED(__VA_ARGS__)
#define PMPI_Graph_neighbors_count(...) MPITOPO__SMPI_UNSUPPORTED(__VA_ARGS__)
#define PMPI_Graph_neighbors(...) MPITOPO__SMPI_UNSUPPORTED(__VA_ARGS__)
#define PMPI_Dist_graph_create(...) MPITOPO__SMPI_UNSUPPORTED(__VA_ARGS__)
#define PMPI_Dist_graph_create_adjacent(...) MPITOPO__SMPI_UNSUPPORTED(__VA_ARGS__)
#define PMPI_Dist_graph_neighbors(...) MPITOPO__SMPI_UNSUPPORTED(__VA_ARGS__)
#define PMPI_Dist_graph_neighbors_count(...) MPITOPO__SMPI_UNSUPPORTED(__VA_ARGS__)
#define PMPI_Neighbor_allgather(...) MPITOPO__SMPI_UNSUPPORTED(__VA_ARGS__)
#define PMPI_Neighbor_allgatherv(...) MPITOPO__SMPI_UNSUPPORTED(__VA_ARGS__)
#define PMPI_Neighbor_alltoall(...) MPITOPO__SMPI_UNSUPPORTED(__VA_ARGS__)
#define PMPI_Neighbor_alltoallv(...) MPITOPO__SMPI_UNSUPPORTED(__VA_ARGS__)
#define PMPI_Neighbor_alltoallw(...) MPITOPO__SMPI_UNSUPPORTED(__VA_ARGS__)
#define PMPI_Ineighbor_allgather(...) MPITOPO__SMPI_UNSUPPORTED(__VA_ARGS__)
#define PMPI_Ineighbor_allgatherv(...) MPITOPO__SMPI_UNSUPPORTED(__VA_ARGS__)
#define PMPI_Ineighbor_alltoall(...) MPITOPO__SMPI_UNSUPPORTED(__VA_ARGS__)
#define PMPI_Ineighbor_alltoallv(...) MPITOPO__SMPI_UNSUPPORTED(__VA_ARGS__)
#define PMPI_Ineighbor_alltoallw(...) MPITOPO__SMPI_UNSUPPORTED(__VA_ARGS__)

#endif /* MPITOPO_SMPI */
#endif /* MPITOPO_SMPI_COMPAT_H */
