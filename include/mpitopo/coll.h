#ifndef MPITOPO_COLL_H
#define MPITOPO_COLL_H
#ifndef MPITOPO_INSIDE_H_
#error Please include <mpitopo.h> instead of <mpitopo/coll.h>
#endif

#include <mpitopo/export.h>

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @defgroup mpitopo_neighbors Neighbour lists and stencil communicators
 * @ingroup mpitopo
 * @brief The neighbour lists of a topology communicator, stencil
 * communicators, and mpitopo's info keys on a communicator.
 *
 * Neighbour lists. The first call on a communicator turns its topology into
 * one canonical list of sources (in-neighbours) and one of destinations
 * (out-neighbours), cached on it through an attribute (not copied by
 * MPI_Comm_dup: a duplicate gets its own; released when the communicator is
 * freed, and at MPI_Finalize at the latest). O(degree) memory. The order is
 * the one MPI's neighbourhood collectives use, so block i of a buffer always
 * belongs to list entry i:
 *  - Cartesian: for each dimension d, the -1 then the +1 neighbour
 *    (MPI_Cart_shift(comm, d, 1, &src, &dst) gives src, dst); MPI_PROC_NULL
 *    entries are kept, so both degrees are 2 * ndims. Sources and
 *    destinations are the same list. (The 003 proposal lists +1 before -1
 *    and omits open borders; we follow MPI so that queries and collectives
 *    agree.)
 *  - graph: MPI_Graph_neighbors, as both sources and destinations
 *    (duplicates and self edges kept).
 *  - dist-graph: MPI_Dist_graph_neighbors (duplicates and self edges kept).
 *
 * This works on any topology communicator, including ones mpitopo did not
 * create.
 * @{
 */

/**
 * @brief The in- and out-degree of the calling process in a communicator.
 * @param[in] comm a topology communicator
 * @param[out] indegree its number of sources, or NULL
 * @param[out] outdegree its number of destinations, or NULL
 * @retval MPITOPO_SUCCESS on success
 * @retval MPI_ERR_TOPOLOGY comm has no topology
 * @retval MPITOPO_ERR_ARG MPI_COMM_NULL or an intercommunicator
 * @mpierr
 * @local
 */
MPITOPO_API int mpitopo_comm_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree);

/**
 * @brief The sources and destinations of the calling process, in the order
 * of the neighbour lists.
 *
 * The first min(maxindegree, indegree) sources and min(maxoutdegree,
 * outdegree) destinations are written (as MPI_Dist_graph_neighbors does).
 * @param[in] comm a topology communicator
 * @param[in] maxindegree room in sources, >= 0
 * @param[out] sources the sources
 * @param[in] maxoutdegree room in destinations, >= 0
 * @param[out] destinations the destinations
 * @retval MPITOPO_SUCCESS on success
 * @retval MPI_ERR_TOPOLOGY comm has no topology
 * @retval MPITOPO_ERR_ARG MPI_COMM_NULL or an intercommunicator, a negative
 *         max, or a NULL array that would be written to
 * @mpierr
 * @local
 */
MPITOPO_API int mpitopo_comm_neighbors(MPI_Comm comm, int maxindegree, int sources[],
                                       int maxoutdegree, int destinations[]);

/**
 * @brief A stencil on a Cartesian grid as a dist-graph communicator, so that
 * the neighbourhood collectives can forward along the grid's dimensions.
 *
 * Offsets are listed lexicographically, dimension 0 varying slowest, from
 * -R to R. The result has the ranks of cart (no reordering; cart's own
 * order may already be a reordered one) and, for offset o_j in that order,
 * destination j = the process at coords + o_j and source j = the process at
 * coords - o_j: so block j of an alltoall lands in block j of its receiver,
 * and block j of an allgather receive buffer comes from coords - o_j. Along
 * a periodic dimension coordinates wrap; along an open one an offset leaving
 * the grid has no destination (and its opposite no source): it is skipped,
 * and later blocks move up (degrees vary near the border). The grid and
 * stencil are cached on the result: the "cart" schedule of the collectives
 * runs on it in d rounds of forwarding (one per dimension, at most 2R
 * messages each) instead of one message per neighbour, when no periodic
 * dimension is shorter than 2R + 1 (else two offsets would reach one
 * process, and the collectives run linear).
 * @param[in] cart a Cartesian communicator
 * @param[in] stencil "moore=R" (every offset with all components in [-R, R],
 *            except 0: (2R+1)^d - 1 neighbours) or "star=R" (offsets along
 *            one dimension, 1..R either way: 2dR neighbours), R >= 1; the
 *            same on every process
 * @param[in] info passed to MPI_Dist_graph_create_adjacent; its mpitopo_ keys
 *            are kept on the result (mpitopo_comm_set_info()), so
 *            mpitopo_neighbor and friends apply on every MPI
 * @param[out] newcomm the stencil communicator; free it with MPI_Comm_free
 * @retval MPITOPO_SUCCESS on success
 * @retval MPI_ERR_TOPOLOGY cart is not Cartesian
 * @retval MPITOPO_ERR_ARG a stencil that does not parse or has more than
 *         1,048,576 offsets, the limit of every stencil; newcomm NULL
 * @retval MPITOPO_ERR_MISMATCH stencils that differ between processes
 * @mpierr
 * @collective{cart} Every process must pass the same stencil; one allreduce
 * agrees on it and on every process's arguments first, so that every
 * process returns the same error.
 */
MPITOPO_API int mpitopo_cart_stencil_create(MPI_Comm cart, const char *stencil, MPI_Info info,
                                            MPI_Comm *newcomm);

/**
 * @brief Keep mpitopo's own info keys of a communicator where every MPI
 * keeps them.
 *
 * The keys of info whose name starts with "mpitopo_" (mpitopo_neighbor,
 * mpitopo_combine_threshold) are stored on comm in an attribute, replacing
 * earlier values of the same keys; MPI_INFO_NULL removes them all. MPICH
 * keeps no info key it does not know, so MPI_Comm_set_info alone has no
 * effect on mpitopo there (Open MPI keeps them). The neighbourhood
 * collectives read these keys first, then comm's own info, when they first
 * run on comm and again after each call here. MPI_Comm_dup copies them with
 * the communicator (as MPI copies hints); the shim's MPI_Comm_set_info and
 * MPI_Comm_dup_with_info call this, so unmodified programs get their keys
 * on every MPI.
 * @param[in] comm the communicator
 * @param[in] info the keys, or MPI_INFO_NULL to remove them all
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG MPI not initialized, comm = MPI_COMM_NULL, info
 *         not valid, a key of 64 characters or more, a value of 256 or
 *         more, more than 16 mpitopo_ keys
 * @retval MPITOPO_ERR_NOMEM out of memory
 * @mpierr
 * @local Give every process the same values (persistent _init calls check
 * that the schedule asked for agrees).
 */
MPITOPO_API int mpitopo_comm_set_info(MPI_Comm comm, MPI_Info info);

/**
 * @brief The value of one of mpitopo's info keys on a communicator.
 *
 * The keys stored by mpitopo_comm_set_info() (and the shim's
 * MPI_Comm_set_info) come first, then MPI's own info of comm (Open MPI
 * keeps keys it does not know). The shim reads mpitopo_reorder here.
 * @param[in] comm the communicator
 * @param[in] key the key, e.g. "mpitopo_reorder"
 * @param[in] size the room in value, terminating zero included; a longer
 *            value is truncated
 * @param[out] value the value, when found
 * @param[out] found 1 when comm has the key, else 0
 * @retval MPITOPO_SUCCESS on success (found or not)
 * @retval MPITOPO_ERR_ARG MPI not initialized, comm = MPI_COMM_NULL, a
 *         NULL pointer, size < 1
 * @mpierr
 * @local
 */
MPITOPO_API int mpitopo_comm_get_info(MPI_Comm comm, const char *key, int size, char *value,
                                      int *found);

/** @} */

/**
 * @defgroup mpitopo_coll Neighbourhood collectives
 * @ingroup mpitopo
 * @brief Blocking, nonblocking and persistent neighbourhood collectives and
 * neighbour exchanges on any topology communicator.
 *
 * Neighbourhood collectives on any topology communicator (Cartesian, graph,
 * dist-graph), including ones mpitopo did not create. Block i of a buffer
 * belongs to entry i of the calling process's neighbour lists (see
 * mpitopo_neighbors(3): per dimension the -1 then the +1 neighbour on a
 * Cartesian communicator, MPI_PROC_NULL kept; MPI's lists on graph and
 * dist-graph communicators).
 *
 * Traffic. Messages travel on a private duplicate of comm, made by the first
 * collective call on comm (MPI_Comm_dup from a blocking call, MPI_Comm_idup
 * from a nonblocking one, so that a nonblocking call never blocks) and
 * cached with the lists. A reserved tag on comm itself would not do: a user
 * receive with MPI_ANY_TAG on comm could take mpitopo's messages. The
 * private communicator returns errors (MPI_ERRORS_RETURN) instead of
 * aborting, so a mismatch between neighbours (e.g. MPI_ERR_TRUNCATE) comes
 * back as an error code (MPICH 4.0 raises errors of MPI_Waitall on the
 * handler of MPI_COMM_WORLD instead, so there they abort unless
 * MPI_COMM_WORLD returns errors).
 *
 * Semantics are exactly those of MPI_Neighbor_* / MPI_Ineighbor_*: same
 * buffer layout (block offsets are multiples of the datatype's extent;
 * alltoallw displacements are in bytes), count/displacement/type arrays
 * sized by degree (NULL allowed when that degree is 0), nothing sent to or
 * received from MPI_PROC_NULL (its receive block is left untouched). In a
 * Cartesian communicator whose periodic dimension has size 1 or 2 (the -1
 * and +1 neighbours are the same process), block 2d sent lands in block
 * 2d+1 at the receiver and block 2d+1 in block 2d, in every dimension, as
 * the MPI-4.0 erratum specifies (some MPI libraries deliver these blocks
 * differently).
 *
 * All collectives are collective over comm: every process calls the same
 * operation in the same order (blocking and nonblocking alike).
 *
 * Errors (returned locally, without communicating, so nobody hangs on a
 * locally detectable error): MPI_ERR_TOPOLOGY (the MPI error class, a
 * positive code) when comm has no topology; #MPITOPO_ERR_ARG for
 * comm = MPI_COMM_NULL or an intercommunicator, MPI_IN_PLACE (not allowed
 * in neighbourhood collectives), a negative count, a NULL array where the
 * degree is > 0, MPI_DATATYPE_NULL, or a NULL buffer with a nonzero count
 * of a predefined datatype (a derived datatype with absolute addresses may
 * use MPI_BOTTOM); #MPITOPO_ERR_NOMEM; MPI error codes pass through.
 * mpitopo_last_error() names the argument and the value.
 *
 * Thread safety: as MPI collectives (distinct communicators may be used
 * from distinct threads when MPI is initialized with MPI_THREAD_MULTIPLE).
 * @{
 */

/**
 * @brief The schedules of the neighbourhood collectives, as MPITOPO_NEIGHBOR
 * and the info key mpitopo_neighbor name them: an initialiser of an array
 * of strings, the one list the library, the shim and the benchmarks read.
 */
#define MPITOPO_NEIGHBOR_SCHEDULES {"auto", "linear", "combine", "cart", "node", "mpi"}

/**
 * @brief MPI_Neighbor_allgather: every process sends one block to all its
 * destinations and receives one block from each source.
 *
 * The arguments and semantics of MPI_Neighbor_allgather.
 * @param[in] sendbuf the one block sent to every destination
 * @param[in] sendcount number of elements of the block
 * @param[in] sendtype datatype of the elements sent
 * @param[out] recvbuf indegree blocks of recvcount elements, block i from
 *             source i
 * @param[in] recvcount number of elements of each block received (at most)
 * @param[in] recvtype datatype of the elements received
 * @param[in] comm a topology communicator (Cartesian, graph or dist-graph)
 * @retval MPITOPO_SUCCESS on success
 * @retval MPI_ERR_TOPOLOGY comm has no topology (the MPI error class)
 * @retval MPITOPO_ERR_ARG an invalid argument (listed in mpitopo_coll(3));
 *         the message names it and its value
 * @retval MPITOPO_ERR_NOMEM out of memory
 * @mpierr
 * @collective{comm} Every process calls the same operation in the same order.
 * @threadsafe As MPI collectives.
 */
MPITOPO_API int mpitopo_neighbor_allgather(const void *sendbuf, int sendcount,
                                           MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                           MPI_Datatype recvtype, MPI_Comm comm);

/**
 * @brief MPI_Neighbor_allgatherv: every process sends one block to all its
 * destinations and receives a block of its own size from each source.
 *
 * The arguments and semantics of MPI_Neighbor_allgatherv.
 * @param[in] sendbuf the one block sent to every destination
 * @param[in] sendcount number of elements of the block
 * @param[in] sendtype datatype of the elements sent
 * @param[out] recvbuf the received blocks, block i from source i
 * @param[in] recvcounts indegree counts: elements received from source i
 * @param[in] displs indegree displacements of the received blocks, in extents
 *            of recvtype
 * @param[in] recvtype datatype of the elements received
 * @param[in] comm a topology communicator (Cartesian, graph or dist-graph)
 * @retval MPITOPO_SUCCESS on success
 * @retval MPI_ERR_TOPOLOGY comm has no topology (the MPI error class)
 * @retval MPITOPO_ERR_ARG an invalid argument (listed in mpitopo_coll(3));
 *         the message names it and its value
 * @retval MPITOPO_ERR_NOMEM out of memory
 * @mpierr
 * @collective{comm} Every process calls the same operation in the same order.
 * @threadsafe As MPI collectives.
 */
MPITOPO_API int mpitopo_neighbor_allgatherv(const void *sendbuf, int sendcount,
                                            MPI_Datatype sendtype, void *recvbuf,
                                            const int recvcounts[], const int displs[],
                                            MPI_Datatype recvtype, MPI_Comm comm);

/**
 * @brief MPI_Neighbor_alltoall: every process sends block j to destination j
 * and receives block i from source i.
 *
 * The arguments and semantics of MPI_Neighbor_alltoall.
 * @param[in] sendbuf outdegree blocks of sendcount elements, block j to
 *            destination j
 * @param[in] sendcount number of elements of each block sent
 * @param[in] sendtype datatype of the elements sent
 * @param[out] recvbuf indegree blocks of recvcount elements, block i from
 *             source i
 * @param[in] recvcount number of elements of each block received (at most)
 * @param[in] recvtype datatype of the elements received
 * @param[in] comm a topology communicator (Cartesian, graph or dist-graph)
 * @retval MPITOPO_SUCCESS on success
 * @retval MPI_ERR_TOPOLOGY comm has no topology (the MPI error class)
 * @retval MPITOPO_ERR_ARG an invalid argument (listed in mpitopo_coll(3));
 *         the message names it and its value
 * @retval MPITOPO_ERR_NOMEM out of memory
 * @mpierr
 * @collective{comm} Every process calls the same operation in the same order.
 * @threadsafe As MPI collectives.
 */
MPITOPO_API int mpitopo_neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                          void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                          MPI_Comm comm);

/**
 * @brief MPI_Neighbor_alltoallv: as alltoall, with a count and displacement per
 * block.
 *
 * The arguments and semantics of MPI_Neighbor_alltoallv.
 * @param[in] sendbuf the blocks sent, block j to destination j
 * @param[in] sendcounts outdegree counts: elements sent to destination j
 * @param[in] sdispls outdegree displacements of the blocks sent, in extents of
 *            sendtype
 * @param[in] sendtype datatype of the elements sent
 * @param[out] recvbuf the received blocks, block i from source i
 * @param[in] recvcounts indegree counts: elements received from source i
 * @param[in] rdispls indegree displacements of the received blocks, in extents
 *            of recvtype
 * @param[in] recvtype datatype of the elements received
 * @param[in] comm a topology communicator (Cartesian, graph or dist-graph)
 * @retval MPITOPO_SUCCESS on success
 * @retval MPI_ERR_TOPOLOGY comm has no topology (the MPI error class)
 * @retval MPITOPO_ERR_ARG an invalid argument (listed in mpitopo_coll(3));
 *         the message names it and its value
 * @retval MPITOPO_ERR_NOMEM out of memory
 * @mpierr
 * @collective{comm} Every process calls the same operation in the same order.
 * @threadsafe As MPI collectives.
 */
MPITOPO_API int mpitopo_neighbor_alltoallv(const void *sendbuf, const int sendcounts[],
                                           const int sdispls[], MPI_Datatype sendtype,
                                           void *recvbuf, const int recvcounts[],
                                           const int rdispls[], MPI_Datatype recvtype,
                                           MPI_Comm comm);

/**
 * @brief MPI_Neighbor_alltoallw: as alltoall, with a count, byte displacement
 * and datatype per block.
 *
 * The arguments and semantics of MPI_Neighbor_alltoallw.
 * @param[in] sendbuf the blocks sent, block j to destination j
 * @param[in] sendcounts outdegree counts: elements sent to destination j
 * @param[in] sdispls outdegree displacements of the blocks sent, in bytes
 * @param[in] sendtypes outdegree datatypes of the blocks sent
 * @param[out] recvbuf the received blocks, block i from source i
 * @param[in] recvcounts indegree counts: elements received from source i
 * @param[in] rdispls indegree displacements of the received blocks, in bytes
 * @param[in] recvtypes indegree datatypes of the received blocks
 * @param[in] comm a topology communicator (Cartesian, graph or dist-graph)
 * @retval MPITOPO_SUCCESS on success
 * @retval MPI_ERR_TOPOLOGY comm has no topology (the MPI error class)
 * @retval MPITOPO_ERR_ARG an invalid argument (listed in mpitopo_coll(3));
 *         the message names it and its value
 * @retval MPITOPO_ERR_NOMEM out of memory
 * @mpierr
 * @collective{comm} Every process calls the same operation in the same order.
 * @threadsafe As MPI collectives.
 */
MPITOPO_API int mpitopo_neighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                                           const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                           void *recvbuf, const int recvcounts[],
                                           const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                           MPI_Comm comm);

/* Nonblocking forms (progress and completion: the requests, mpitopo_requests(3)). */

/** @ingroup mpitopo_requests
 * @brief A request of a nonblocking or persistent neighbourhood collective
 * (opaque handle). */
typedef struct mpitopo_request *mpitopo_request_t;
/** @ingroup mpitopo_requests
 * @brief The empty request.
 * @hideinitializer */
#define MPITOPO_REQUEST_NULL ((mpitopo_request_t)0)

/**
 * @brief MPI_Ineighbor_allgather: every process sends one block to all its
 * destinations and receives one block from each source; nonblocking.
 *
 * The arguments and semantics of MPI_Ineighbor_allgather. The buffers must not
 * be touched until completion (mpitopo_wait(), mpitopo_test()); the count,
 * displacement and datatype arrays are copied by this call and may be reused at
 * once. Datatypes may be freed after it returns (the request keeps duplicates
 * of the derived ones it has not posted yet). The first round of messages is
 * posted here (see mpitopo_requests(3) for progress).
 * @param[in] sendbuf the one block sent to every destination
 * @param[in] sendcount number of elements of the block
 * @param[in] sendtype datatype of the elements sent
 * @param[out] recvbuf indegree blocks of recvcount elements, block i from
 *             source i
 * @param[in] recvcount number of elements of each block received (at most)
 * @param[in] recvtype datatype of the elements received
 * @param[in] comm a topology communicator (Cartesian, graph or dist-graph)
 * @param[out] request the new active request; complete it with mpitopo_wait()
 *             or mpitopo_test()
 * @retval MPITOPO_SUCCESS on success
 * @retval MPI_ERR_TOPOLOGY comm has no topology (the MPI error class)
 * @retval MPITOPO_ERR_ARG an invalid argument (listed in mpitopo_coll(3));
 *         the message names it and its value
 * @retval MPITOPO_ERR_NOMEM out of memory
 * @mpierr
 * @collective{comm} Every process starts the same operation in the same
 * order (blocking and nonblocking alike); the call does not block.
 * @threadsafe As MPI collectives.
 */
MPITOPO_API int mpitopo_ineighbor_allgather(const void *sendbuf, int sendcount,
                                            MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                            MPI_Datatype recvtype, MPI_Comm comm,
                                            mpitopo_request_t *request);

/**
 * @brief MPI_Ineighbor_allgatherv: every process sends one block to all its
 * destinations and receives a block of its own size from each source;
 * nonblocking.
 *
 * The arguments and semantics of MPI_Ineighbor_allgatherv. The buffers must not
 * be touched until completion (mpitopo_wait(), mpitopo_test()); the count,
 * displacement and datatype arrays are copied by this call and may be reused at
 * once. Datatypes may be freed after it returns (the request keeps duplicates
 * of the derived ones it has not posted yet). The first round of messages is
 * posted here (see mpitopo_requests(3) for progress).
 * @param[in] sendbuf the one block sent to every destination
 * @param[in] sendcount number of elements of the block
 * @param[in] sendtype datatype of the elements sent
 * @param[out] recvbuf the received blocks, block i from source i
 * @param[in] recvcounts indegree counts: elements received from source i
 * @param[in] displs indegree displacements of the received blocks, in extents
 *            of recvtype
 * @param[in] recvtype datatype of the elements received
 * @param[in] comm a topology communicator (Cartesian, graph or dist-graph)
 * @param[out] request the new active request; complete it with mpitopo_wait()
 *             or mpitopo_test()
 * @retval MPITOPO_SUCCESS on success
 * @retval MPI_ERR_TOPOLOGY comm has no topology (the MPI error class)
 * @retval MPITOPO_ERR_ARG an invalid argument (listed in mpitopo_coll(3));
 *         the message names it and its value
 * @retval MPITOPO_ERR_NOMEM out of memory
 * @mpierr
 * @collective{comm} Every process starts the same operation in the same
 * order (blocking and nonblocking alike); the call does not block.
 * @threadsafe As MPI collectives.
 */
MPITOPO_API int mpitopo_ineighbor_allgatherv(const void *sendbuf, int sendcount,
                                             MPI_Datatype sendtype, void *recvbuf,
                                             const int recvcounts[], const int displs[],
                                             MPI_Datatype recvtype, MPI_Comm comm,
                                             mpitopo_request_t *request);

/**
 * @brief MPI_Ineighbor_alltoall: every process sends block j to destination j
 * and receives block i from source i; nonblocking.
 *
 * The arguments and semantics of MPI_Ineighbor_alltoall. The buffers must not
 * be touched until completion (mpitopo_wait(), mpitopo_test()); the count,
 * displacement and datatype arrays are copied by this call and may be reused at
 * once. Datatypes may be freed after it returns (the request keeps duplicates
 * of the derived ones it has not posted yet). The first round of messages is
 * posted here (see mpitopo_requests(3) for progress).
 * @param[in] sendbuf outdegree blocks of sendcount elements, block j to
 *            destination j
 * @param[in] sendcount number of elements of each block sent
 * @param[in] sendtype datatype of the elements sent
 * @param[out] recvbuf indegree blocks of recvcount elements, block i from
 *             source i
 * @param[in] recvcount number of elements of each block received (at most)
 * @param[in] recvtype datatype of the elements received
 * @param[in] comm a topology communicator (Cartesian, graph or dist-graph)
 * @param[out] request the new active request; complete it with mpitopo_wait()
 *             or mpitopo_test()
 * @retval MPITOPO_SUCCESS on success
 * @retval MPI_ERR_TOPOLOGY comm has no topology (the MPI error class)
 * @retval MPITOPO_ERR_ARG an invalid argument (listed in mpitopo_coll(3));
 *         the message names it and its value
 * @retval MPITOPO_ERR_NOMEM out of memory
 * @mpierr
 * @collective{comm} Every process starts the same operation in the same
 * order (blocking and nonblocking alike); the call does not block.
 * @threadsafe As MPI collectives.
 */
MPITOPO_API int mpitopo_ineighbor_alltoall(const void *sendbuf, int sendcount,
                                           MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                           MPI_Datatype recvtype, MPI_Comm comm,
                                           mpitopo_request_t *request);

/**
 * @brief MPI_Ineighbor_alltoallv: as alltoall, with a count and displacement
 * per block; nonblocking.
 *
 * The arguments and semantics of MPI_Ineighbor_alltoallv. The buffers must not
 * be touched until completion (mpitopo_wait(), mpitopo_test()); the count,
 * displacement and datatype arrays are copied by this call and may be reused at
 * once. Datatypes may be freed after it returns (the request keeps duplicates
 * of the derived ones it has not posted yet). The first round of messages is
 * posted here (see mpitopo_requests(3) for progress).
 * @param[in] sendbuf the blocks sent, block j to destination j
 * @param[in] sendcounts outdegree counts: elements sent to destination j
 * @param[in] sdispls outdegree displacements of the blocks sent, in extents of
 *            sendtype
 * @param[in] sendtype datatype of the elements sent
 * @param[out] recvbuf the received blocks, block i from source i
 * @param[in] recvcounts indegree counts: elements received from source i
 * @param[in] rdispls indegree displacements of the received blocks, in extents
 *            of recvtype
 * @param[in] recvtype datatype of the elements received
 * @param[in] comm a topology communicator (Cartesian, graph or dist-graph)
 * @param[out] request the new active request; complete it with mpitopo_wait()
 *             or mpitopo_test()
 * @retval MPITOPO_SUCCESS on success
 * @retval MPI_ERR_TOPOLOGY comm has no topology (the MPI error class)
 * @retval MPITOPO_ERR_ARG an invalid argument (listed in mpitopo_coll(3));
 *         the message names it and its value
 * @retval MPITOPO_ERR_NOMEM out of memory
 * @mpierr
 * @collective{comm} Every process starts the same operation in the same
 * order (blocking and nonblocking alike); the call does not block.
 * @threadsafe As MPI collectives.
 */
MPITOPO_API int mpitopo_ineighbor_alltoallv(const void *sendbuf, const int sendcounts[],
                                            const int sdispls[], MPI_Datatype sendtype,
                                            void *recvbuf, const int recvcounts[],
                                            const int rdispls[], MPI_Datatype recvtype,
                                            MPI_Comm comm, mpitopo_request_t *request);

/**
 * @brief MPI_Ineighbor_alltoallw: as alltoall, with a count, byte displacement
 * and datatype per block; nonblocking.
 *
 * The arguments and semantics of MPI_Ineighbor_alltoallw. The buffers must not
 * be touched until completion (mpitopo_wait(), mpitopo_test()); the count,
 * displacement and datatype arrays are copied by this call and may be reused at
 * once. Datatypes may be freed after it returns (the request keeps duplicates
 * of the derived ones it has not posted yet). The first round of messages is
 * posted here (see mpitopo_requests(3) for progress).
 * @param[in] sendbuf the blocks sent, block j to destination j
 * @param[in] sendcounts outdegree counts: elements sent to destination j
 * @param[in] sdispls outdegree displacements of the blocks sent, in bytes
 * @param[in] sendtypes outdegree datatypes of the blocks sent
 * @param[out] recvbuf the received blocks, block i from source i
 * @param[in] recvcounts indegree counts: elements received from source i
 * @param[in] rdispls indegree displacements of the received blocks, in bytes
 * @param[in] recvtypes indegree datatypes of the received blocks
 * @param[in] comm a topology communicator (Cartesian, graph or dist-graph)
 * @param[out] request the new active request; complete it with mpitopo_wait()
 *             or mpitopo_test()
 * @retval MPITOPO_SUCCESS on success
 * @retval MPI_ERR_TOPOLOGY comm has no topology (the MPI error class)
 * @retval MPITOPO_ERR_ARG an invalid argument (listed in mpitopo_coll(3));
 *         the message names it and its value
 * @retval MPITOPO_ERR_NOMEM out of memory
 * @mpierr
 * @collective{comm} Every process starts the same operation in the same
 * order (blocking and nonblocking alike); the call does not block.
 * @threadsafe As MPI collectives.
 */
MPITOPO_API int mpitopo_ineighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                                            const MPI_Aint sdispls[],
                                            const MPI_Datatype sendtypes[], void *recvbuf,
                                            const int recvcounts[], const MPI_Aint rdispls[],
                                            const MPI_Datatype recvtypes[], MPI_Comm comm,
                                            mpitopo_request_t *request);

/**
 * @brief MPI_Neighbor_allgather_init: a persistent neighbourhood collective
 * (every process sends one block to all its destinations and receives one block
 * from each source).
 *
 * Persistent forms: the arguments of MPI-4's MPI_Neighbor_allgather_init. The
 * schedule is built once, the arrays are copied and derived datatypes
 * duplicated, so both may be freed after the call; the buffers are fixed, their
 * contents may change between runs. The request is inactive until
 * mpitopo_start(). The "mpitopo_neighbor" key of info chooses this operation's
 * schedule, over the communicator's info key of that name and MPITOPO_NEIGHBOR;
 * it must be the same on every process. The first operation that combines on a
 * communicator computes its combining pattern, collectively and blocking, even
 * in an _init or nonblocking call; likewise the first allgather or alltoall
 * under "node" (node-aware aggregation) computes its plan. Under "node" every
 * process must pass the same block size (count x type size), processes without
 * neighbours too; its v and w forms run linear.
 * @param[in] sendbuf the one block sent to every destination
 * @param[in] sendcount number of elements of the block
 * @param[in] sendtype datatype of the elements sent
 * @param[out] recvbuf indegree blocks of recvcount elements, block i from
 *             source i
 * @param[in] recvcount number of elements of each block received (at most)
 * @param[in] recvtype datatype of the elements received
 * @param[in] comm a topology communicator (Cartesian, graph or dist-graph)
 * @param[in] info MPI_INFO_NULL or a valid handle; key "mpitopo_neighbor"
 *            (auto, linear, combine, cart, node) chooses this operation's
 *            schedule, the same on every process
 * @param[out] request the new persistent request, inactive until
 *             mpitopo_start()
 * @retval MPITOPO_SUCCESS on success
 * @retval MPI_ERR_TOPOLOGY comm has no topology (the MPI error class)
 * @retval MPITOPO_ERR_ARG an invalid argument (listed in mpitopo_coll(3));
 *         the message names it and its value
 * @retval MPITOPO_ERR_NOMEM out of memory
 * @retval MPITOPO_ERR_MISMATCH the processes disagree on the arguments or
 *         the schedule
 * @mpierr
 * @collective{comm} Every process makes the same persistent operations in
 * the same order, and blocking: one small allreduce (on the private
 * communicator, duplicated blocking here) agrees on every process's
 * arguments, the operation, the schedule asked for, the combining
 * threshold and, under "node", the block sizes, so that a process with a
 * bad argument or another schedule makes every process return the same
 * error (naming it) instead of leaving the others waiting; no data is
 * sent. Start every persistent operation on every process in the same
 * order, as with MPI_Start on persistent collectives.
 * @threadsafe As MPI collectives.
 */
MPITOPO_API int mpitopo_neighbor_allgather_init(const void *sendbuf, int sendcount,
                                                MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                                MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                                mpitopo_request_t *request);

/**
 * @brief MPI_Neighbor_allgatherv_init: a persistent neighbourhood collective
 * (every process sends one block to all its destinations and receives a block
 * of its own size from each source).
 *
 * Persistent forms: the arguments of MPI-4's MPI_Neighbor_allgatherv_init. The
 * schedule is built once, the arrays are copied and derived datatypes
 * duplicated, so both may be freed after the call; the buffers are fixed, their
 * contents may change between runs. The request is inactive until
 * mpitopo_start(). The "mpitopo_neighbor" key of info chooses this operation's
 * schedule, over the communicator's info key of that name and MPITOPO_NEIGHBOR;
 * it must be the same on every process. The first operation that combines on a
 * communicator computes its combining pattern, collectively and blocking, even
 * in an _init or nonblocking call; likewise the first allgather or alltoall
 * under "node" (node-aware aggregation) computes its plan. Under "node" every
 * process must pass the same block size (count x type size), processes without
 * neighbours too; its v and w forms run linear.
 * @param[in] sendbuf the one block sent to every destination
 * @param[in] sendcount number of elements of the block
 * @param[in] sendtype datatype of the elements sent
 * @param[out] recvbuf the received blocks, block i from source i
 * @param[in] recvcounts indegree counts: elements received from source i
 * @param[in] displs indegree displacements of the received blocks, in extents
 *            of recvtype
 * @param[in] recvtype datatype of the elements received
 * @param[in] comm a topology communicator (Cartesian, graph or dist-graph)
 * @param[in] info MPI_INFO_NULL or a valid handle; key "mpitopo_neighbor"
 *            (auto, linear, combine, cart, node) chooses this operation's
 *            schedule, the same on every process
 * @param[out] request the new persistent request, inactive until
 *             mpitopo_start()
 * @retval MPITOPO_SUCCESS on success
 * @retval MPI_ERR_TOPOLOGY comm has no topology (the MPI error class)
 * @retval MPITOPO_ERR_ARG an invalid argument (listed in mpitopo_coll(3));
 *         the message names it and its value
 * @retval MPITOPO_ERR_NOMEM out of memory
 * @retval MPITOPO_ERR_MISMATCH the processes disagree on the arguments or
 *         the schedule
 * @mpierr
 * @collective{comm} Every process makes the same persistent operations in
 * the same order, and blocking: one small allreduce (on the private
 * communicator, duplicated blocking here) agrees on every process's
 * arguments, the operation, the schedule asked for, the combining
 * threshold and, under "node", the block sizes, so that a process with a
 * bad argument or another schedule makes every process return the same
 * error (naming it) instead of leaving the others waiting; no data is
 * sent. Start every persistent operation on every process in the same
 * order, as with MPI_Start on persistent collectives.
 * @threadsafe As MPI collectives.
 */
MPITOPO_API int mpitopo_neighbor_allgatherv_init(const void *sendbuf, int sendcount,
                                                 MPI_Datatype sendtype, void *recvbuf,
                                                 const int recvcounts[], const int displs[],
                                                 MPI_Datatype recvtype, MPI_Comm comm,
                                                 MPI_Info info, mpitopo_request_t *request);

/**
 * @brief MPI_Neighbor_alltoall_init: a persistent neighbourhood collective
 * (every process sends block j to destination j and receives block i from
 * source i).
 *
 * Persistent forms: the arguments of MPI-4's MPI_Neighbor_alltoall_init. The
 * schedule is built once, the arrays are copied and derived datatypes
 * duplicated, so both may be freed after the call; the buffers are fixed, their
 * contents may change between runs. The request is inactive until
 * mpitopo_start(). The "mpitopo_neighbor" key of info chooses this operation's
 * schedule, over the communicator's info key of that name and MPITOPO_NEIGHBOR;
 * it must be the same on every process. The first operation that combines on a
 * communicator computes its combining pattern, collectively and blocking, even
 * in an _init or nonblocking call; likewise the first allgather or alltoall
 * under "node" (node-aware aggregation) computes its plan. Under "node" every
 * process must pass the same block size (count x type size), processes without
 * neighbours too; its v and w forms run linear.
 * @param[in] sendbuf outdegree blocks of sendcount elements, block j to
 *            destination j
 * @param[in] sendcount number of elements of each block sent
 * @param[in] sendtype datatype of the elements sent
 * @param[out] recvbuf indegree blocks of recvcount elements, block i from
 *             source i
 * @param[in] recvcount number of elements of each block received (at most)
 * @param[in] recvtype datatype of the elements received
 * @param[in] comm a topology communicator (Cartesian, graph or dist-graph)
 * @param[in] info MPI_INFO_NULL or a valid handle; key "mpitopo_neighbor"
 *            (auto, linear, combine, cart, node) chooses this operation's
 *            schedule, the same on every process
 * @param[out] request the new persistent request, inactive until
 *             mpitopo_start()
 * @retval MPITOPO_SUCCESS on success
 * @retval MPI_ERR_TOPOLOGY comm has no topology (the MPI error class)
 * @retval MPITOPO_ERR_ARG an invalid argument (listed in mpitopo_coll(3));
 *         the message names it and its value
 * @retval MPITOPO_ERR_NOMEM out of memory
 * @retval MPITOPO_ERR_MISMATCH the processes disagree on the arguments or
 *         the schedule
 * @mpierr
 * @collective{comm} Every process makes the same persistent operations in
 * the same order, and blocking: one small allreduce (on the private
 * communicator, duplicated blocking here) agrees on every process's
 * arguments, the operation, the schedule asked for, the combining
 * threshold and, under "node", the block sizes, so that a process with a
 * bad argument or another schedule makes every process return the same
 * error (naming it) instead of leaving the others waiting; no data is
 * sent. Start every persistent operation on every process in the same
 * order, as with MPI_Start on persistent collectives.
 * @threadsafe As MPI collectives.
 */
MPITOPO_API int mpitopo_neighbor_alltoall_init(const void *sendbuf, int sendcount,
                                               MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                               MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                               mpitopo_request_t *request);

/**
 * @brief MPI_Neighbor_alltoallv_init: a persistent neighbourhood collective (as
 * alltoall, with a count and displacement per block).
 *
 * Persistent forms: the arguments of MPI-4's MPI_Neighbor_alltoallv_init. The
 * schedule is built once, the arrays are copied and derived datatypes
 * duplicated, so both may be freed after the call; the buffers are fixed, their
 * contents may change between runs. The request is inactive until
 * mpitopo_start(). The "mpitopo_neighbor" key of info chooses this operation's
 * schedule, over the communicator's info key of that name and MPITOPO_NEIGHBOR;
 * it must be the same on every process. The first operation that combines on a
 * communicator computes its combining pattern, collectively and blocking, even
 * in an _init or nonblocking call; likewise the first allgather or alltoall
 * under "node" (node-aware aggregation) computes its plan. Under "node" every
 * process must pass the same block size (count x type size), processes without
 * neighbours too; its v and w forms run linear.
 * @param[in] sendbuf the blocks sent, block j to destination j
 * @param[in] sendcounts outdegree counts: elements sent to destination j
 * @param[in] sdispls outdegree displacements of the blocks sent, in extents of
 *            sendtype
 * @param[in] sendtype datatype of the elements sent
 * @param[out] recvbuf the received blocks, block i from source i
 * @param[in] recvcounts indegree counts: elements received from source i
 * @param[in] rdispls indegree displacements of the received blocks, in extents
 *            of recvtype
 * @param[in] recvtype datatype of the elements received
 * @param[in] comm a topology communicator (Cartesian, graph or dist-graph)
 * @param[in] info MPI_INFO_NULL or a valid handle; key "mpitopo_neighbor"
 *            (auto, linear, combine, cart, node) chooses this operation's
 *            schedule, the same on every process
 * @param[out] request the new persistent request, inactive until
 *             mpitopo_start()
 * @retval MPITOPO_SUCCESS on success
 * @retval MPI_ERR_TOPOLOGY comm has no topology (the MPI error class)
 * @retval MPITOPO_ERR_ARG an invalid argument (listed in mpitopo_coll(3));
 *         the message names it and its value
 * @retval MPITOPO_ERR_NOMEM out of memory
 * @retval MPITOPO_ERR_MISMATCH the processes disagree on the arguments or
 *         the schedule
 * @mpierr
 * @collective{comm} Every process makes the same persistent operations in
 * the same order, and blocking: one small allreduce (on the private
 * communicator, duplicated blocking here) agrees on every process's
 * arguments, the operation, the schedule asked for, the combining
 * threshold and, under "node", the block sizes, so that a process with a
 * bad argument or another schedule makes every process return the same
 * error (naming it) instead of leaving the others waiting; no data is
 * sent. Start every persistent operation on every process in the same
 * order, as with MPI_Start on persistent collectives.
 * @threadsafe As MPI collectives.
 */
MPITOPO_API int mpitopo_neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[],
                                                const int sdispls[], MPI_Datatype sendtype,
                                                void *recvbuf, const int recvcounts[],
                                                const int rdispls[], MPI_Datatype recvtype,
                                                MPI_Comm comm, MPI_Info info,
                                                mpitopo_request_t *request);

/**
 * @brief MPI_Neighbor_alltoallw_init: a persistent neighbourhood collective (as
 * alltoall, with a count, byte displacement and datatype per block).
 *
 * Persistent forms: the arguments of MPI-4's MPI_Neighbor_alltoallw_init. The
 * schedule is built once, the arrays are copied and derived datatypes
 * duplicated, so both may be freed after the call; the buffers are fixed, their
 * contents may change between runs. The request is inactive until
 * mpitopo_start(). The "mpitopo_neighbor" key of info chooses this operation's
 * schedule, over the communicator's info key of that name and MPITOPO_NEIGHBOR;
 * it must be the same on every process. The first operation that combines on a
 * communicator computes its combining pattern, collectively and blocking, even
 * in an _init or nonblocking call; likewise the first allgather or alltoall
 * under "node" (node-aware aggregation) computes its plan. Under "node" every
 * process must pass the same block size (count x type size), processes without
 * neighbours too; its v and w forms run linear.
 * @param[in] sendbuf the blocks sent, block j to destination j
 * @param[in] sendcounts outdegree counts: elements sent to destination j
 * @param[in] sdispls outdegree displacements of the blocks sent, in bytes
 * @param[in] sendtypes outdegree datatypes of the blocks sent
 * @param[out] recvbuf the received blocks, block i from source i
 * @param[in] recvcounts indegree counts: elements received from source i
 * @param[in] rdispls indegree displacements of the received blocks, in bytes
 * @param[in] recvtypes indegree datatypes of the received blocks
 * @param[in] comm a topology communicator (Cartesian, graph or dist-graph)
 * @param[in] info MPI_INFO_NULL or a valid handle; key "mpitopo_neighbor"
 *            (auto, linear, combine, cart, node) chooses this operation's
 *            schedule, the same on every process
 * @param[out] request the new persistent request, inactive until
 *             mpitopo_start()
 * @retval MPITOPO_SUCCESS on success
 * @retval MPI_ERR_TOPOLOGY comm has no topology (the MPI error class)
 * @retval MPITOPO_ERR_ARG an invalid argument (listed in mpitopo_coll(3));
 *         the message names it and its value
 * @retval MPITOPO_ERR_NOMEM out of memory
 * @retval MPITOPO_ERR_MISMATCH the processes disagree on the arguments or
 *         the schedule
 * @mpierr
 * @collective{comm} Every process makes the same persistent operations in
 * the same order, and blocking: one small allreduce (on the private
 * communicator, duplicated blocking here) agrees on every process's
 * arguments, the operation, the schedule asked for, the combining
 * threshold and, under "node", the block sizes, so that a process with a
 * bad argument or another schedule makes every process return the same
 * error (naming it) instead of leaving the others waiting; no data is
 * sent. Start every persistent operation on every process in the same
 * order, as with MPI_Start on persistent collectives.
 * @threadsafe As MPI collectives.
 */
MPITOPO_API int mpitopo_neighbor_alltoallw_init(const void *sendbuf, const int sendcounts[],
                                                const MPI_Aint sdispls[],
                                                const MPI_Datatype sendtypes[], void *recvbuf,
                                                const int recvcounts[], const MPI_Aint rdispls[],
                                                const MPI_Datatype recvtypes[], MPI_Comm comm,
                                                MPI_Info info, mpitopo_request_t *request);

/**
 * @brief Neighbour exchange (the 003 proposal's MPI_Neighbor_xchg): block j
 * of sendbuf to the j-th destination, block i of recvbuf from the i-th
 * source.
 *
 * Every process sends block j of sendbuf to its j-th destination and
 * receives block i of recvbuf from its i-th source, in the neighbour order
 * (mpitopo_neighbors(3)); block j of a process lands, at its j-th
 * destination, in the block of the source slot that names the process (for
 * duplicate edges, the first such slot not yet used; in a Cartesian
 * communicator, block 2d lands in block 2d+1 and 2d+1 in 2d, as for the
 * collectives). Blocks of sendcount (recvcount) elements at
 * j * sendcount * extent(sendtype). The data are those of
 * mpitopo_neighbor_alltoall() (the proposal differs from it only in its
 * neighbour order, which we replace by MPI's); the difference is that a
 * block a process sends to itself (self edge, periodic dimension of size 1)
 * is copied locally, not sent through MPI. Each pair's type signatures must
 * match (a block to self larger than its receive block is MPI_ERR_TRUNCATE,
 * detected locally). Blocking.
 * @param[in] sendbuf outdegree blocks of sendcount elements, block j to
 *            destination j
 * @param[in] sendcount number of elements of each block sent
 * @param[in] sendtype datatype of the elements sent
 * @param[out] recvbuf indegree blocks of recvcount elements, block i from
 *             source i
 * @param[in] recvcount number of elements of each block received (at most)
 * @param[in] recvtype datatype of the elements received
 * @param[in] comm a topology communicator (Cartesian, graph or dist-graph)
 * @retval MPITOPO_SUCCESS on success
 * @retval MPI_ERR_TOPOLOGY comm has no topology (the MPI error class)
 * @retval MPITOPO_ERR_ARG an invalid argument (listed in mpitopo_coll(3));
 *         the message names it and its value
 * @retval MPITOPO_ERR_NOMEM out of memory
 * @mpierr
 * @collective{comm} Errors as the collectives.
 */
MPITOPO_API int mpitopo_neighbor_xchg(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                      void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                      MPI_Comm comm);

/**
 * @brief Neighbour exchange with a count and displacement per block (the
 * 003 proposal's MPI_Neighbor_xchgv).
 *
 * As mpitopo_neighbor_xchg(), with sendcounts[j] elements at
 * sdispls[j] * extent(sendtype), received into recvcounts[i] elements at
 * rdispls[i] * extent(recvtype). The data are those of
 * mpitopo_neighbor_alltoallv(), but a block a process sends to itself is
 * copied locally. Blocking.
 * @param[in] sendbuf the blocks sent, block j to destination j
 * @param[in] sendcounts outdegree counts: elements sent to destination j
 * @param[in] sdispls outdegree displacements of the blocks sent, in extents of
 *            sendtype
 * @param[in] sendtype datatype of the elements sent
 * @param[out] recvbuf the received blocks, block i from source i
 * @param[in] recvcounts indegree counts: elements received from source i
 * @param[in] rdispls indegree displacements of the received blocks, in extents
 *            of recvtype
 * @param[in] recvtype datatype of the elements received
 * @param[in] comm a topology communicator (Cartesian, graph or dist-graph)
 * @retval MPITOPO_SUCCESS on success
 * @retval MPI_ERR_TOPOLOGY comm has no topology (the MPI error class)
 * @retval MPITOPO_ERR_ARG an invalid argument (listed in mpitopo_coll(3));
 *         the message names it and its value
 * @retval MPITOPO_ERR_NOMEM out of memory
 * @mpierr
 * @collective{comm} Errors as the collectives.
 */
MPITOPO_API int mpitopo_neighbor_xchgv(const void *sendbuf, const int sendcounts[],
                                       const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                       const int recvcounts[], const int rdispls[],
                                       MPI_Datatype recvtype, MPI_Comm comm);

/**
 * @brief Cartesian shift exchange (the 003 proposal's MPI_Cart_shift_xchg):
 * data move by disp along one dimension.
 *
 * With MPI_Cart_shift(comm, direction, disp, &source, &dest), every process
 * sends its one block (sendcount elements of sendtype at sendbuf) to dest
 * and receives one block (at most recvcount of recvtype at recvbuf) from
 * source: data move by +disp along dimension `direction` (disp < 0 moves
 * them the other way), exactly as MPI_Sendrecv(sendbuf, .., dest, ..,
 * recvbuf, .., source, ..) on every process. At an open border
 * (non-periodic dimension) dest or source is MPI_PROC_NULL: nothing is
 * sent, or recvbuf is left untouched (it must still be a valid buffer when
 * recvcount > 0). Blocking.
 * @param[in] sendbuf the one block sent
 * @param[in] sendcount number of elements sent
 * @param[in] sendtype their datatype
 * @param[out] recvbuf the one block received
 * @param[in] recvcount number of elements received (at most)
 * @param[in] recvtype their datatype
 * @param[in] direction the dimension, in [0, ndims)
 * @param[in] disp the shift: any integer, 0 and multiples of a periodic
 *            dimension's size included (then the block is copied locally)
 * @param[in] comm a Cartesian communicator
 * @retval MPITOPO_SUCCESS on success
 * @retval MPI_ERR_TOPOLOGY comm is not Cartesian
 * @retval MPITOPO_ERR_ARG direction outside [0, ndims), and the argument
 *         errors of the collectives
 * @retval MPITOPO_ERR_NOMEM out of memory
 * @mpierr
 * @collective{comm}
 */
MPITOPO_API int mpitopo_cart_shift_xchg(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                        void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                        int direction, int disp, MPI_Comm comm);

/** @} */

/**
 * @defgroup mpitopo_collectives Collectives on reordered communicators
 * @ingroup mpitopo
 * @brief Allgather, broadcast, gather and allreduce run by mpitopo's own
 * algorithms, on copies of the communicator reordered for each algorithm.
 *
 * The arguments and results are those of MPI_Allgather, MPI_Bcast,
 * MPI_Gather and MPI_Allreduce (MPI_IN_PLACE included). mpitopo runs its own
 * algorithms over point-to-point messages: allgather by recursive doubling
 * (powers of two; other sizes fall back to Bruck, said at MPITOPO_VERBOSE=1),
 * Bruck (any size), ring, or hierarchically (gather to the node leader,
 * allgather among leaders, broadcast inside the node; linear or binomial
 * inside the node); broadcast and gather by a binomial tree; allreduce by
 * recursive doubling (other sizes fold the extra processes in first).
 *
 * Reordering (thesis chapter 4). For each algorithm (and root), mpitopo
 * builds once, on first use, a copy of comm whose rank order fits that
 * algorithm's pattern to the distances between the processes (the machine
 * of mpitopo_comm_machine(), and its network when known): RDMH for
 * recursive doubling, RMH for ring, BBMH for the broadcast tree, BGMH for
 * the gather tree. The copy is cached on comm (freed with it) and used by
 * every later call. The original order is kept when the reordered one is
 * not strictly cheaper under the distance model, so reordering never makes
 * a layout worse under that model. Results are always in the order of
 * comm's ranks: the blocks are exchanged once before the algorithm
 * ("initcomm", default) or put in place at the end ("endshfl"); ring stores
 * each block at its place directly. Allreduce with a user operation that is
 * not commutative keeps comm's order (operands combined in rank order).
 *
 * Configuration: the info key "mpitopo_coll" of comm (mpitopo_comm_set_info())
 * comes first, then the environment variable MPITOPO_COLL:
 * @verbatim
   off | auto        (library: both mean auto; the shim routes MPI_Allgather
                      etc. to mpitopo only when the value is not off)
   ITEM[,ITEM...]    items, separated by commas or blanks:
     OP=ALG[:HEUR[:ORDER]]   OP: allgather, bcast, gather, allreduce, all
        ALG  allgather: auto, rd, bruck, ring, hier (linear inside the
             node), hierb (binomial inside the node), mpi;
             bcast, gather: auto, binomial, mpi; allreduce: auto, rd, mpi
             (mpi: the host MPI's own blocking call, also from the
             nonblocking forms, which then return MPITOPO_REQUEST_NULL;
             the shim passes such calls to MPI itself)
        HEUR none, auto (the algorithm's own heuristic), rdmh, rmh, bbmh, bgmh
        ORDER initcomm (default) or endshfl
     order=initcomm|endshfl  every operation's order
     switch=BYTES            allgather block size from which auto takes ring
                             (default 1024; below: rd, or bruck when the
                             size is not a power of two); auto takes hier
                             or hierb instead when that is cheaper than the
                             flat algorithm under the distance model
   @endverbatim
 * Unknown names give #MPITOPO_ERR_ARG from every call, naming the value.
 * Every process must see the same configuration. With MPITOPO_VERBOSE=1,
 * rank 0 prints one line per communicator, operation and choice: the
 * algorithm, the heuristic and whether the reordered order was used.
 *
 * Datatypes: any (derived, non-contiguous) for allgather, broadcast and
 * gather; allreduce takes any datatype and operation MPI_Reduce_local takes.
 * Counts that differ across processes are erroneous (as in MPI): a larger
 * block than the receiver expects is reported as MPI_ERR_TRUNCATE, a smaller
 * one is not detected.
 *
 * The first call of an algorithm on comm is collective and blocking in all
 * forms (it builds the reordered copy); nonblocking forms return requests of
 * the same engine as the neighbourhood collectives (see mpitopo_requests(3)),
 * completed with mpitopo_wait() or mpitopo_test().
 * @{
 */

/** @brief The operation numbers of mpitopo_coll_handles(). */
#define MPITOPO_COLL_OP_ALLGATHER 0
/** @brief Broadcast, for mpitopo_coll_handles(). */
#define MPITOPO_COLL_OP_BCAST 1
/** @brief Gather, for mpitopo_coll_handles(). */
#define MPITOPO_COLL_OP_GATHER 2
/** @brief Allreduce, for mpitopo_coll_handles(). */
#define MPITOPO_COLL_OP_ALLREDUCE 3

/**
 * @brief Whether mpitopo runs an operation on a communicator as configured
 * (what the shim asks before routing MPI_Allgather and the others).
 * @param[in] which MPITOPO_COLL_OP_ALLGATHER, _BCAST, _GATHER or _ALLREDUCE
 * @param[in] comm the communicator
 * @param[in] sendtype the send datatype (ignored for bcast and allreduce)
 * @param[in] recvtype the receive datatype (bcast and allreduce: the datatype)
 * @param[in] op the operation (allreduce only; else ignored)
 * @return 1 when the configuration (info key mpitopo_coll, else
 *         MPITOPO_COLL) is set and not "off", the operation's algorithm is
 *         not "mpi", comm is an intracommunicator and the datatypes and
 *         operation are valid; 0 otherwise (also for a bad configuration,
 *         which the shim leaves to MPI)
 * @local
 */
MPITOPO_API int mpitopo_coll_handles(int which, MPI_Comm comm, MPI_Datatype sendtype,
                                     MPI_Datatype recvtype, MPI_Op op);

/**
 * @brief MPI_Allgather by mpitopo's algorithms on a reordered communicator.
 * @param[in] sendbuf this process's block, or MPI_IN_PLACE (then it is block
 *            rank of recvbuf)
 * @param[in] sendcount elements of the block
 * @param[in] sendtype their datatype
 * @param[out] recvbuf size blocks of recvcount elements, block i from rank i
 * @param[in] recvcount elements of each block received
 * @param[in] recvtype their datatype
 * @param[in] comm an intracommunicator
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG a bad argument or configuration (the message names it)
 * @retval MPITOPO_ERR_NOMEM out of memory
 * @mpierr
 * @collective{comm} Every process calls the same operation in the same order.
 */
MPITOPO_API int mpitopo_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                  MPI_Comm comm);

/**
 * @brief Nonblocking mpitopo_allgather().
 * @param[in] sendbuf as mpitopo_allgather()
 * @param[in] sendcount as mpitopo_allgather()
 * @param[in] sendtype as mpitopo_allgather()
 * @param[out] recvbuf as mpitopo_allgather(); do not touch it until completion
 * @param[in] recvcount as mpitopo_allgather()
 * @param[in] recvtype as mpitopo_allgather()
 * @param[in] comm as mpitopo_allgather()
 * @param[out] request completed by mpitopo_wait() or mpitopo_test()
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG a bad argument or configuration
 * @retval MPITOPO_ERR_NOMEM out of memory
 * @mpierr
 * @collective{comm} The first call of an algorithm on comm blocks while it
 * builds the reordered communicator.
 */
MPITOPO_API int mpitopo_iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                   void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                   MPI_Comm comm, mpitopo_request_t *request);

/**
 * @brief MPI_Bcast by a binomial tree on a reordered communicator.
 * @param[in,out] buf the data: read at root, written elsewhere
 * @param[in] count elements
 * @param[in] type their datatype
 * @param[in] root the rank that has the data
 * @param[in] comm an intracommunicator
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG a bad argument or configuration
 * @retval MPITOPO_ERR_NOMEM out of memory
 * @mpierr
 * @collective{comm} Every process calls the same operation in the same order.
 */
MPITOPO_API int mpitopo_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm);

/**
 * @brief Nonblocking mpitopo_bcast().
 * @param[in,out] buf as mpitopo_bcast()
 * @param[in] count as mpitopo_bcast()
 * @param[in] type as mpitopo_bcast()
 * @param[in] root as mpitopo_bcast()
 * @param[in] comm as mpitopo_bcast()
 * @param[out] request completed by mpitopo_wait() or mpitopo_test()
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG a bad argument or configuration
 * @retval MPITOPO_ERR_NOMEM out of memory
 * @mpierr
 * @collective{comm} As mpitopo_iallgather().
 */
MPITOPO_API int mpitopo_ibcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
                               mpitopo_request_t *request);

/**
 * @brief MPI_Gather by a binomial tree on a reordered communicator.
 * @param[in] sendbuf this process's block, or MPI_IN_PLACE at root (its
 *            block is then block root of recvbuf)
 * @param[in] sendcount elements of the block
 * @param[in] sendtype their datatype
 * @param[out] recvbuf at root: size blocks of recvcount elements; ignored
 *             elsewhere
 * @param[in] recvcount at root: elements of each block
 * @param[in] recvtype at root: their datatype
 * @param[in] root the rank that receives
 * @param[in] comm an intracommunicator
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG a bad argument or configuration
 * @retval MPITOPO_ERR_NOMEM out of memory
 * @mpierr
 * @collective{comm} Every process calls the same operation in the same order.
 */
MPITOPO_API int mpitopo_gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                               MPI_Comm comm);

/**
 * @brief Nonblocking mpitopo_gather().
 * @param[in] sendbuf as mpitopo_gather()
 * @param[in] sendcount as mpitopo_gather()
 * @param[in] sendtype as mpitopo_gather()
 * @param[out] recvbuf as mpitopo_gather()
 * @param[in] recvcount as mpitopo_gather()
 * @param[in] recvtype as mpitopo_gather()
 * @param[in] root as mpitopo_gather()
 * @param[in] comm as mpitopo_gather()
 * @param[out] request completed by mpitopo_wait() or mpitopo_test()
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG a bad argument or configuration
 * @retval MPITOPO_ERR_NOMEM out of memory
 * @mpierr
 * @collective{comm} As mpitopo_iallgather().
 */
MPITOPO_API int mpitopo_igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                MPI_Comm comm, mpitopo_request_t *request);

/**
 * @brief MPI_Allreduce by recursive doubling on a reordered communicator.
 * @param[in] sendbuf the operand, or MPI_IN_PLACE (then it is recvbuf)
 * @param[out] recvbuf the result
 * @param[in] count elements
 * @param[in] type their datatype
 * @param[in] op the operation (predefined or user; not commutative: the
 *            operands are combined in rank order, without reordering)
 * @param[in] comm an intracommunicator
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG a bad argument or configuration
 * @retval MPITOPO_ERR_NOMEM out of memory
 * @mpierr
 * @collective{comm} Every process calls the same operation in the same order.
 */
MPITOPO_API int mpitopo_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                                  MPI_Op op, MPI_Comm comm);

/**
 * @brief Nonblocking mpitopo_allreduce().
 * @param[in] sendbuf as mpitopo_allreduce()
 * @param[out] recvbuf as mpitopo_allreduce()
 * @param[in] count as mpitopo_allreduce()
 * @param[in] type as mpitopo_allreduce()
 * @param[in] op as mpitopo_allreduce()
 * @param[in] comm as mpitopo_allreduce()
 * @param[out] request completed by mpitopo_wait() or mpitopo_test()
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG a bad argument or configuration
 * @retval MPITOPO_ERR_NOMEM out of memory
 * @mpierr
 * @collective{comm} As mpitopo_iallgather().
 */
MPITOPO_API int mpitopo_iallreduce(const void *sendbuf, void *recvbuf, int count,
                                   MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                                   mpitopo_request_t *request);

/** @} */

/**
 * @defgroup mpitopo_requests Requests: start, wait, test, progress
 * @ingroup mpitopo
 * @brief Requests of the nonblocking and persistent neighbourhood
 * collectives, and how they progress.
 *
 * Nonblocking operations. A request is an opaque handle;
 * #MPITOPO_REQUEST_NULL is the empty one.
 *
 * A request holds a schedule: a list of rounds of point-to-point messages,
 * where round r+1 is posted once round r has completed. Progress: the first
 * round is posted by the starting call (unless the private communicator of
 * the first nonblocking call on comm is still being duplicated: then it is
 * posted by the first mpitopo_test() / mpitopo_wait() that finds the
 * duplicate ready); later rounds are posted only inside mpitopo_test() and
 * mpitopo_wait(), and messages already posted progress as MPI progresses
 * them. There is no progress thread: a program that overlaps computation
 * with a multi-round schedule should call mpitopo_test() now and then. The
 * linear schedule has a single round; combining has two per pattern round
 * plus two, the Cartesian one d + 1 on a d-dimensional grid. Operations
 * started while the private communicator is being made are posted, once it
 * is ready, in the order they were started, so any number of them may be in
 * flight and completed in any order.
 *
 * Why an mpitopo request and not an MPI generalized request: MPI calls a
 * generalized request's query function only once the library itself has
 * called MPI_Grequest_complete; MPI_Wait on it never runs any of the
 * library's code in between. A schedule of several rounds needs code to
 * run between rounds (to post the next one), so on a generalized request
 * something else would have to run that code: a progress thread, which
 * costs a core, needs MPI_THREAD_MULTIPLE and adds latency to every small
 * message. (MPIX_Grequest_start's poll function is not in every MPI.) Our
 * own handle lets mpitopo_test() and mpitopo_wait() post the next round
 * themselves; the price is that these requests cannot be mixed into an
 * MPI_Waitall with MPI's own.
 * @{
 */

/**
 * @brief Start an inactive persistent request.
 * @param[in,out] request the request, made by an _init call
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG request NULL, or a null, non-persistent or still
 *         active request
 * @mpierr
 * @collective{comm} That is, over the communicator the request was made
 * on: start every persistent operation on every process in the same order,
 * as with MPI_Start on persistent collectives.
 */
MPITOPO_API int mpitopo_start(mpitopo_request_t *request);
/**
 * @brief Start count inactive persistent requests, in array order; either
 * all start or, on an argument error, none.
 * @param[in] count number of requests, >= 0
 * @param[in,out] requests count requests, made by _init calls
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG a negative count, requests NULL with count > 0, a
 *         null, non-persistent or still active request (the message gives
 *         its index), or the same request twice
 * @mpierr
 * @collective{comm} That is, over the communicator of each request, as
 * mpitopo_start().
 */
MPITOPO_API int mpitopo_startall(int count, mpitopo_request_t requests[]);

/**
 * @brief Move every active neighbourhood operation of the calling process
 * on, on every communicator, without blocking.
 *
 * What mpitopo_wait() and mpitopo_test() do for the operations they are not
 * waiting for. For programs that wait on something else (their own MPI
 * requests) while operations of mpitopo are in flight. Errors stay with
 * their requests.
 * @retval MPITOPO_SUCCESS always
 * @local
 * @threadsafe Yes.
 */
MPITOPO_API int mpitopo_progress(void);

/**
 * @brief Complete a request (blocking).
 *
 * A nonblocking request is then released and `*request` set to
 * #MPITOPO_REQUEST_NULL; a persistent one becomes inactive and may be
 * started again (an inactive one completes at once). #MPITOPO_REQUEST_NULL
 * completes at once. On an error (e.g. MPI_ERR_TRUNCATE from a neighbour
 * that sent too much) a nonblocking request is released too and a
 * persistent one made inactive; messages still in flight are left to MPI.
 * @param[in,out] request the request
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG request NULL
 * @retval >0 an error code of the MPI library, passed through unchanged
 *         (e.g. MPI_ERR_TRUNCATE from a neighbour that sent too much)
 * @local It waits for the neighbours to take part.
 */
MPITOPO_API int mpitopo_wait(mpitopo_request_t *request);

/**
 * @brief Advance a request without blocking, and tell whether it has completed.
 *
 * When it has completed it is released, or made inactive, as by
 * mpitopo_wait().
 * @param[in,out] request the request
 * @param[out] flag 1 when it has completed (the null request and an
 *             inactive persistent one give 1), else 0
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG request or flag NULL
 * @retval >0 as mpitopo_wait(): an error code of the MPI library
 * @local
 */
MPITOPO_API int mpitopo_test(mpitopo_request_t *request, int *flag);

/**
 * @brief Release a request (nonblocking or persistent) and set it to
 * #MPITOPO_REQUEST_NULL.
 *
 * An active request is completed first (as by mpitopo_wait()), because its
 * later rounds could never be posted otherwise and the neighbours would
 * wait for them.
 * @param[in,out] request the request
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG request NULL
 * @retval >0 as mpitopo_wait(): an error code of the MPI library
 * @local Completing an active request waits for the neighbours to take part.
 */
MPITOPO_API int mpitopo_request_free(mpitopo_request_t *request);

/** @} */

#ifdef __cplusplus
}
#endif
#endif /* MPITOPO_COLL_H */
