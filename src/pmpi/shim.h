/* Internal to the shim (src/pmpi): the decisions shared by the C and the
 * Fortran bindings. Each function takes the C binding's arguments and
 * returns what the MPI function returns: MPI_SUCCESS, or an MPI error code
 * after the error handler has been invoked as MPI would. Not exported from
 * libmpitopo_shim. */
#ifndef MPITOPO_SHIM_H
#define MPITOPO_SHIM_H

#include <mpi.h>

#if defined(__GNUC__)
#define MPITOPO_SHIM_HIDDEN __attribute__((visibility("hidden")))
#define MPITOPO_SHIM_EXPORT __attribute__((visibility("default")))
#else
#define MPITOPO_SHIM_HIDDEN
#define MPITOPO_SHIM_EXPORT
#endif

MPITOPO_SHIM_HIDDEN int mpitopo__shim_cart_create(MPI_Comm comm, int ndims, const int dims[],
                                                  const int periods[], int reorder,
                                                  MPI_Comm *newcomm);
MPITOPO_SHIM_HIDDEN int mpitopo__shim_cart_map(MPI_Comm comm, int ndims, const int dims[],
                                               const int periods[], int *newrank);
MPITOPO_SHIM_HIDDEN int mpitopo__shim_dims_create(int nnodes, int ndims, int dims[]);
MPITOPO_SHIM_HIDDEN int mpitopo__shim_dist_graph_create_adjacent(
    MPI_Comm comm, int indegree, const int sources[], const int sourceweights[], int outdegree,
    const int destinations[], const int destweights[], MPI_Info info, int reorder,
    MPI_Comm *newcomm);
MPITOPO_SHIM_HIDDEN int mpitopo__shim_dist_graph_create(MPI_Comm comm, int n, const int sources[],
                                                        const int degrees[],
                                                        const int destinations[],
                                                        const int weights[], MPI_Info info,
                                                        int reorder, MPI_Comm *newcomm);
MPITOPO_SHIM_HIDDEN int mpitopo__shim_graph_create(MPI_Comm comm, int nnodes, const int index[],
                                                   const int edges[], int reorder,
                                                   MPI_Comm *newcomm);
MPITOPO_SHIM_HIDDEN int mpitopo__shim_graph_map(MPI_Comm comm, int nnodes, const int index[],
                                                const int edges[], int *newrank);

/* Whether a blocking neighbourhood collective on comm goes to mpitopo
 * (MPITOPO_NEIGHBOR, MPITOPO_DISABLE; comm an intracommunicator with a
 * topology). Local. */
MPITOPO_SHIM_HIDDEN int mpitopo__shim_neighbor_takes(const char *func, MPI_Comm comm);

/* Report an error the shim itself found (e.g. out of memory converting
 * Fortran arrays) through comm's error handler; returns mpi_class. */
MPITOPO_SHIM_HIDDEN int mpitopo__shim_raise(const char *func, MPI_Comm comm, int mpi_class,
                                            const char *why);

/* Exported (documented in README.md): how many neighbourhood collectives
 * this process has routed to mpitopo so far, for tests and for users who
 * want to check that MPITOPO_NEIGHBOR took. Look it up with dlsym; absent
 * when the shim is not loaded. Thread safe. */
MPITOPO_SHIM_EXPORT long mpitopo_shim_neighbor_calls(void);

#endif /* MPITOPO_SHIM_H */
