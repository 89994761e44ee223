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
 *   - graph and dist-graph communicators (MPI_Graph_create,
 *     MPI_Dist_graph_create[_adjacent] and their queries): emulated. The
 *     constructors (src/mpi/smpi_compat.c) return a plain communicator (a
 *     duplicate of comm_old, or for MPI_Graph_create with nnodes < size a
 *     split of it) carrying the neighbour lists in an attribute, which
 *     MPI_Comm_dup copies (shared, reference counted) as MPI copies a
 *     topology. The queries read that attribute, so mpitopo's neighbour
 *     cache (src/coll/engine/neighbors.c) and with it every neighbourhood schedule,
 *     all on point-to-point, work unchanged. Only mpitopo sees these
 *     topologies: the program's own MPI_Topo_test or MPI_Dist_graph_*
 *     calls still hit SMPI's stubs.
 *   - MPI_Topo_test: replaced below. MPI_GRAPH or MPI_DIST_GRAPH for an
 *     emulated topology; else MPI_CART when PMPI_Cartdim_get succeeds, else
 *     MPI_UNDEFINED. On a communicator without topology PMPI_Cartdim_get
 *     logs a warning; run with --log=smpi_pmpi.thres:error to hide it.
 *   - MPI_Comm_idup: replaced by a blocking MPI_Comm_dup that returns
 *     MPI_REQUEST_NULL, and sets MPI_ERRORS_RETURN on the duplicate (what
 *     the only caller, mpitopo__nbr_private_comm, does when the idup
 *     completes; with no request to complete it would never run). So the
 *     first nonblocking neighbourhood call on a communicator synchronises
 *     like a blocking one.
 *   - MPI_Cart_map, MPI_Graph_map and the neighbourhood collectives:
 *     redirected below to a function that returns
 *     MPI_ERR_UNSUPPORTED_OPERATION, so a code path that needs them fails
 *     with an error code instead of ending the simulation.
 */
#ifndef MPITOPO_SMPI_COMPAT_H
#define MPITOPO_SMPI_COMPAT_H

#ifdef MPITOPO_SMPI

/* The emulated graph and dist-graph communicators (src/mpi/smpi_compat.c). Same
 * arguments, semantics and return codes as the MPI functions they replace,
 * except that reorder is ignored (the callers pass 0). */
int mpitopo__smpi_topo_test(MPI_Comm comm, int *status);
int mpitopo__smpi_dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[],
                                             const int sourceweights[], int outdegree,
                                             const int destinations[], const int destweights[],
                                             MPI_Info info, int reorder, MPI_Comm *newcomm);
int mpitopo__smpi_dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[],
                                    const int destinations[], const int weights[], MPI_Info info,
                                    int reorder, MPI_Comm *newcomm);
int mpitopo__smpi_dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree,
                                             int *weighted);
int mpitopo__smpi_dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[],
                                       int sourceweights[], int maxoutdegree, int destinations[],
                                       int destweights[]);
int mpitopo__smpi_graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[],
                               int reorder, MPI_Comm *newcomm);
int mpitopo__smpi_graphdims_get(MPI_Comm comm, int *nnodes, int *nedges);
int mpitopo__smpi_graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]);
int mpitopo__smpi_graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors);
int mpitopo__smpi_graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[]);

#define PMPI_Topo_test mpitopo__smpi_topo_test
#define PMPI_Dist_graph_create_adjacent mpitopo__smpi_dist_graph_create_adjacent
#define PMPI_Dist_graph_create mpitopo__smpi_dist_graph_create
#define PMPI_Dist_graph_neighbors_count mpitopo__smpi_dist_graph_neighbors_count
#define PMPI_Dist_graph_neighbors mpitopo__smpi_dist_graph_neighbors
#define PMPI_Graph_create mpitopo__smpi_graph_create
#define PMPI_Graphdims_get mpitopo__smpi_graphdims_get
#define PMPI_Graph_get mpitopo__smpi_graph_get
#define PMPI_Graph_neighbors_count mpitopo__smpi_graph_neighbors_count
#define PMPI_Graph_neighbors mpitopo__smpi_graph_neighbors

static inline int mpitopo__smpi_comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    *request = MPI_REQUEST_NULL;
    int rc = PMPI_Comm_dup(comm, newcomm);
    return rc == MPI_SUCCESS ? PMPI_Comm_set_errhandler(*newcomm, MPI_ERRORS_RETURN) : rc;
}
#define PMPI_Comm_idup mpitopo__smpi_comm_idup

/* Takes the caller's arguments (so they count as used) and ignores them. */
static inline int mpitopo__smpi_unsupported(int unused, ...)
{
    (void)unused;
    return MPI_ERR_UNSUPPORTED_OPERATION;
}
#define MPITOPO__SMPI_UNSUPPORTED(...) mpitopo__smpi_unsupported(0, __VA_ARGS__)
#define PMPI_Cart_map(...) MPITOPO__SMPI_UNSUPPORTED(__VA_ARGS__)
#define PMPI_Graph_map(...) MPITOPO__SMPI_UNSUPPORTED(__VA_ARGS__)
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
