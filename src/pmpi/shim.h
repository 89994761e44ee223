/* Internal to the shim (src/pmpi): the decisions shared by the C and the
 * Fortran bindings. Each function takes the C binding's arguments and
 * returns what the MPI function returns: MPI_SUCCESS, or an MPI error code
 * after the error handler has been invoked as MPI would. Not exported from
 * libmpitopo_shim. */
#ifndef MPITOPO_SHIM_H
#define MPITOPO_SHIM_H

#include <mpi.h>
#include <mpitopo.h>

#if defined(__GNUC__)
#define MPITOPO_SHIM_HIDDEN __attribute__((visibility("hidden")))
#define MPITOPO_SHIM_EXPORT __attribute__((visibility("default")))
#else
#define MPITOPO_SHIM_HIDDEN
#define MPITOPO_SHIM_EXPORT
#endif

/*
 * The function behind every C binding of the shim: mpitopo__shim_<call>,
 * with the arguments and the result of MPI_<Call>, hidden, shared by the
 * C and the Fortran bindings. The bindings, and these declarations, are
 * generated from src/pmpi/bindings.def at build time
 * (scripts/gen_bindings.py); the functions are written in shim.c (topology
 * constructors and maps; MPI_Comm_set_info and MPI_Comm_dup_with_info:
 * MPI's own, then mpitopo_comm_set_info, so that mpitopo's keys survive on
 * MPICH), shim_neighbor.c (the neighbourhood collectives: routed to
 * mpitopo and counted, or MPI's own; nonblocking and persistent ones stay
 * MPI's own while a Fortran binding is passing the call to MPI),
 * shim_requests.c (the completion, start and free calls: routed requests
 * completed by the shim, the others by PMPI), shim_coll.c (MPI_Allgather,
 * MPI_Bcast, MPI_Gather, MPI_Allreduce and their MPI_I* forms, as the
 * neighbourhood collectives) and shim_watch.c (MPI_Comm_free).
 */
#include "pmpi/gen/shim_decls.h"

/* The guard of renumbering on request (shim_watch.c): watch comm, made by
 * func from old with mpitopo's numbering; MPI_Comm_free then warns when no
 * process communicated on it. */
MPITOPO_SHIM_HIDDEN void mpitopo__shim_watch(const char *func, MPI_Comm old, MPI_Comm comm);

/* Whether a neighbourhood collective on comm goes to mpitopo
 * (MPITOPO_NEIGHBOR, MPITOPO_DISABLE; comm an intracommunicator with a
 * topology). Local. */
MPITOPO_SHIM_HIDDEN int mpitopo__shim_neighbor_takes(const char *func, MPI_Comm comm);

/* The MPI error code for mpitopo's result rc (MPI codes as they are). */
MPITOPO_SHIM_HIDDEN int mpitopo__shim_neighbor_code(int rc);

/* What an MPI function returns for mpitopo's result rc: MPI_SUCCESS, or
 * the code after comm's error handler has been called with it. */
MPITOPO_SHIM_HIDDEN int mpitopo__shim_neighbor_result(const char *func, MPI_Comm comm, int rc);

/* Nonzero while a Fortran binding hands a nonblocking or persistent
 * neighbourhood collective it does not route (routing off, Fortran
 * MPI_BOTTOM or MPI_IN_PLACE) to the MPI's own Fortran code: the C
 * bindings that code may call (MPICH's do) must then not route it either,
 * so that the call stays exactly MPI's own. */
MPITOPO_SHIM_HIDDEN extern _Thread_local int mpitopo__shim_fortran_passing;

/* shim_requests.c: give the program an MPI_Request for an mpitopo request
 * that the starting call returned with result rc. persistent: mreq is an
 * inactive persistent request. On rc != MPITOPO_SUCCESS, raises the error
 * on comm and returns its code (*request untouched). */
MPITOPO_SHIM_HIDDEN int mpitopo__shim_request_give(const char *func, MPI_Comm comm, int rc,
                                                   mpitopo_request_t mreq, int persistent,
                                                   MPI_Request *request);

/* shim_requests.c: whether any routed request exists (one atomic load),
 * and whether request is one. Local; thread safe. */
MPITOPO_SHIM_HIDDEN int mpitopo__shim_requests_live(void);
MPITOPO_SHIM_HIDDEN int mpitopo__shim_request_ours(MPI_Request request);

/* Report an error the shim itself found (e.g. out of memory converting
 * Fortran arrays) through comm's error handler; returns mpi_class. */
MPITOPO_SHIM_HIDDEN int mpitopo__shim_raise(const char *func, MPI_Comm comm, int mpi_class,
                                            const char *why);

/* shim_coll.c: whether MPITOPO_COLL asks for routing (read once; 0 under
 * MPITOPO_DISABLE), and whether a call goes to mpitopo (the library's
 * mpitopo_coll_handles; counted when it does). which: an
 * MPITOPO_COLL_OP_* value. Local. */
MPITOPO_SHIM_HIDDEN int mpitopo__shim_coll_enabled(void);
MPITOPO_SHIM_HIDDEN int mpitopo__shim_coll_takes(int which, MPI_Comm comm, MPI_Datatype sendtype,
                                                 MPI_Datatype recvtype, MPI_Op op);

/* Exported (documented in doc/user-guide.md): how many of MPI_Allgather, MPI_Bcast,
 * MPI_Gather, MPI_Allreduce and their nonblocking forms this process has
 * routed to mpitopo so far (MPITOPO_COLL), for tests and for users who want
 * to check that the setting took. Look it up with dlsym. Thread safe. */
MPITOPO_SHIM_EXPORT long mpitopo_shim_coll_calls(void);

/* Exported (documented in doc/user-guide.md): how many neighbourhood collectives
 * (blocking, nonblocking, and persistent ones once, at their _init call)
 * this process has routed to mpitopo so far, for tests and for users who
 * want to check that MPITOPO_NEIGHBOR took. Look it up with dlsym; absent
 * when the shim is not loaded. Thread safe. */
MPITOPO_SHIM_EXPORT long mpitopo_shim_neighbor_calls(void);

#endif /* MPITOPO_SHIM_H */
