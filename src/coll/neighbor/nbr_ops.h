/*
 * The five neighbourhood operations, one line each, from which every
 * binding of theirs is generated: mpitopo's entry points (collectives.c:
 * mpitopo_neighbor_OP, mpitopo_ineighbor_OP, mpitopo_neighbor_OP_init),
 * the shim's C bindings (shim_neighbor.c: MPI_Neighbor_OP, MPI_Ineighbor_OP,
 * MPI_Neighbor_OP_init) and its Fortran ones (shim_fortran.c: mpif.h and
 * `use mpi`, every mangling). Adding an operation is a line here, its
 * sides in collectives.c and its Fortran converter in shim_fortran.c.
 *
 *   X(op, OP, params, args, fparams, fargs)
 *     op, OP: the name in lower and upper case;
 *     params: the arguments of the blocking form in C, in parentheses (the
 *       nonblocking form adds a request, the persistent one an info and a
 *       request); args: their names;
 *     fparams: those of the Fortran subroutine (every argument by
 *       reference; ierror, and the request and info, are added);
 *       fargs: their names.
 * MPITOPO_NBR_UNPAREN params is the list without its parentheses;
 * MPITOPO_NBR_CALL expands the shared argument lists of allgather and
 * alltoall (MPITOPO_NBR_FIXED) before X sees them.
 */
#ifndef MPITOPO_COLL_NBR_OPS_H
#define MPITOPO_COLL_NBR_OPS_H

#define MPITOPO_NBR_UNPAREN(...) __VA_ARGS__
#define MPITOPO_NBR_CALL(X, ...) X(__VA_ARGS__)

/* The arguments of allgather and alltoall (one block each way). */
#define MPITOPO_NBR_FIXED                                                                       \
    (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,   \
     MPI_Datatype recvtype, MPI_Comm comm),                                                     \
        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),                     \
        (void *sb, MPI_Fint *sc, MPI_Fint *st, void *rb, MPI_Fint *rc, MPI_Fint *rt,            \
         MPI_Fint *comm),                                                                       \
        (sb, sc, st, rb, rc, rt, comm)

#define MPITOPO_NBR_OPS(X)                                                                      \
    MPITOPO_NBR_CALL(X, allgather, ALLGATHER, MPITOPO_NBR_FIXED)                                \
    X(allgatherv, ALLGATHERV,                                                                   \
      (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,                \
       const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm),       \
      (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm),              \
      (void *sb, MPI_Fint *sc, MPI_Fint *st, void *rb, MPI_Fint *rcs, MPI_Fint *d,              \
       MPI_Fint *rt, MPI_Fint *comm),                                                           \
      (sb, sc, st, rb, rcs, d, rt, comm))                                                       \
    MPITOPO_NBR_CALL(X, alltoall, ALLTOALL, MPITOPO_NBR_FIXED)                                  \
    X(alltoallv, ALLTOALLV,                                                                     \
      (const void *sendbuf, const int sendcounts[], const int sdispls[],                        \
       MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],       \
       MPI_Datatype recvtype, MPI_Comm comm),                                                   \
      (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm),   \
      (void *sb, MPI_Fint *sc, MPI_Fint *sd, MPI_Fint *st, void *rb, MPI_Fint *rcs,             \
       MPI_Fint *rd, MPI_Fint *rt, MPI_Fint *comm),                                             \
      (sb, sc, sd, st, rb, rcs, rd, rt, comm))                                                  \
    X(alltoallw, ALLTOALLW,                                                                     \
      (const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],                   \
       const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],                   \
       const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm),                \
      (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm), \
      (void *sb, MPI_Fint *sc, MPI_Aint *sd, MPI_Fint *st, void *rb, MPI_Fint *rcs,             \
       MPI_Aint *rd, MPI_Fint *rt, MPI_Fint *comm),                                             \
      (sb, sc, sd, st, rb, rcs, rd, rt, comm))

#endif
