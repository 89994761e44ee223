#ifndef MPITOPO_HHC_H
#define MPITOPO_HHC_H
#ifndef MPITOPO_INSIDE_H_
#error Please include <mpitopo.h> instead of <mpitopo/hhc.h>
#endif

#include <mpitopo/export.h>

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @defgroup mpitopo_hhc The HHC virtual topology
 * @ingroup mpitopo
 * @brief Hierarchical cubes with centre nodes (HHC) as MPI communicators:
 * node IDs, routes, forwarded point-to-point messages and collectives.
 *
 * The D-HHC is the network "hhc:D" of mpitopo_network_from_string() (see
 * mpitopo_network(3)): L = ceil(D/3) levels of cubes (2x2x2 below the top,
 * the top cube of D - 3(L-1) dimensions), each with a centre node linked to
 * its leaves; the centres of one level are the leaves of the cubes above.
 * 3-HHC = 9 nodes, 4-HHC = 19, 5-HHC = 37, 6-HHC = 73. A node ID is L
 * nibbles, the top cube's first: written "0011.0101", as an integer the
 * nibbles concatenated (0x35); the nibble 1000 marks a centre. The nodes are
 * numbered in post-order of the tree of centres, the end node numbers of the
 * network, and the rank in the tree communicator is that number.
 *
 * mpitopo_hhc_create() builds one HHC object per process: a tree
 * communicator (a dist-graph topology of the centre-leaf links, the top
 * centre its root) over the whole HHC, and one Cartesian communicator per
 * cube over its leaves (2x2x2, or the top cube's shape; the rank of a leaf
 * is its nibble, coordinates its bits, most significant first).
 *
 * Routed messages (mpitopo_hhc_send(), mpitopo_hhc_isend(),
 * mpitopo_hhc_recv(), mpitopo_hhc_irecv()) travel the network's route hop
 * by hop, each hop one message on the tree or a cube. The hops travel on
 * private duplicates of those communicators, so they never match the
 * user's messages on any communicator, and messages from one node to
 * another are received in the order sent (receives match as in MPI: a
 * message goes to the earliest posted receive it fits, a receive takes the
 * earliest message it fits).
 *
 * Progress: there is no progress thread. The processes on a route forward
 * a message while they are inside one of the routed calls on this HHC:
 * mpitopo_hhc_send(), _isend(), _recv(), _irecv(), _try_recv(), _wait(),
 * _waitall(), _test(), _progress(), _fence() and _free() (the collectives
 * do not forward, and neither does mpitopo_progress(), which moves the
 * neighbourhood collectives' requests). So no fence is needed between
 * routed messages and other communication as long as every process that
 * may lie on a pending message's route keeps making such calls, for
 * instance mpitopo_hhc_progress() in the loop where it waits for its own
 * MPI requests with MPI_Test; before it blocks in other communication that
 * depends on a routed message reaching another process, it calls
 * mpitopo_hhc_fence() (collective), which returns once no routed message is
 * in flight anywhere.
 * @{
 */

/** The HHC object of one process (opaque). */
typedef struct mpitopo_hhc mpitopo_hhc_t;
/** A nonblocking routed send or receive (opaque handle). */
typedef struct mpitopo_hhc_request *mpitopo_hhc_request_t;
/** The empty routed request. */
#define MPITOPO_HHC_REQUEST_NULL ((mpitopo_hhc_request_t)0)

/** The tree communicator (mpitopo_hhc_comm(), and a hop of mpitopo_hhc_route()). */
#define MPITOPO_HHC_TREE 0
/** The Cartesian communicator of a cube. */
#define MPITOPO_HHC_CUBE 1
/** Any source node in mpitopo_hhc_recv(). */
#define MPITOPO_HHC_ANY (-1LL)
/** Room for the longest node ID string, NUL included. */
#define MPITOPO_HHC_ID_LEN 64

/**
 * @brief Build the D-HHC over the processes of comm.
 *
 * The HHC takes N = (its node count) processes. Without reorder, node i
 * (end node i of "hhc:D") is the process of rank i and ranks N and above
 * are left out. With reorder (the default), the HHC's links, as the
 * pattern "hhc:D", are mapped onto comm's machine (mpitopo_comm_machine())
 * by the tree mapper, or by ptram when the machine has a network (info
 * mpitopo_mapper chooses another), never worse than the launch order
 * under the mapper's metric; MPITOPO_VERBOSE=1 prints the placement. info
 * may set:
 * @verbatim
   mpitopo_reorder   false: no reordering (default true)
   mpitopo_mapper    the mapper (tree, or ptram under a network)
   mpitopo_weights   bytes (default), messages, unit
   mpitopo_hhc_gather  auto (default) or cubes: how the cubes off root's
                     chain gather in mpitopo_hhc_gather()
   @endverbatim
 * @param[in] comm an intracommunicator of at least N processes
 * @param[in] dim the dimension D, >= 1, the same on every process
 * @param[in] info MPI_INFO_NULL or the keys above
 * @param[out] hhc the HHC object, to release with mpitopo_hhc_free(); NULL
 *             on the processes left out (as MPI_Cart_create gives
 *             MPI_COMM_NULL) and on error
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG dim < 1, an HHC larger than comm, hhc NULL, comm
 *         MPI_COMM_NULL or an intercommunicator
 * @retval MPITOPO_ERR_PARSE a bad info value
 * @retval MPITOPO_ERR_MISMATCH arguments that differ between processes
 * @retval MPITOPO_ERR_NOMEM out of memory
 * @mpierr
 * @collective{comm} Every process returns the same error.
 */
MPITOPO_API int mpitopo_hhc_create(MPI_Comm comm, int dim, MPI_Info info, mpitopo_hhc_t **hhc);

/**
 * @brief Release an HHC object and its communicators.
 *
 * Completes the routed messages first (mpitopo_hhc_fence()). Receives
 * still pending then fail in their mpitopo_hhc_wait() or mpitopo_hhc_test()
 * (which releases them); complete them first.
 * @param[in,out] hhc the object, set to NULL; NULL or *hhc NULL does nothing
 * @retval MPITOPO_SUCCESS on success
 * @mpierr
 * @collective{hhc} The processes given a non-NULL object.
 */
MPITOPO_API int mpitopo_hhc_free(mpitopo_hhc_t **hhc);

/**
 * @brief The dimension, node count and the calling process's node.
 * @param[in] hhc the HHC
 * @param[out] dim NULL or the dimension D
 * @param[out] nnodes NULL or its node count
 * @param[out] id NULL or the node ID of the calling process
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG hhc NULL
 * @local
 */
MPITOPO_API int mpitopo_hhc_info(const mpitopo_hhc_t *hhc, int *dim, int *nnodes, long long *id);

/**
 * @brief One of the HHC's communicators of the calling process.
 * @param[in] hhc the HHC
 * @param[in] which #MPITOPO_HHC_TREE or #MPITOPO_HHC_CUBE
 * @param[out] comm the communicator, owned by hhc (do not free it);
 *             MPI_COMM_NULL for the cube of the top centre, which is a
 *             leaf of no cube
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG hhc or comm NULL, which unknown
 * @local
 */
MPITOPO_API int mpitopo_hhc_comm(const mpitopo_hhc_t *hhc, int which, MPI_Comm *comm);

/**
 * @brief The node ID of a process.
 * @param[in] hhc the HHC
 * @param[in] rank its rank in the comm given to mpitopo_hhc_create()
 * @param[out] id its node ID
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG hhc or id NULL, a rank outside comm or left out of the HHC
 * @local
 */
MPITOPO_API int mpitopo_hhc_id_of_rank(const mpitopo_hhc_t *hhc, int rank, long long *id);

/**
 * @brief The process of a node ID.
 * @param[in] hhc the HHC
 * @param[in] id a node ID
 * @param[out] rank its rank in the comm given to mpitopo_hhc_create()
 * @param[out] tree_rank NULL or its rank in the tree communicator (its end node number)
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG hhc or rank NULL, an ID that names no node (a
 *         nibble above 1000, too many nibbles, a position beyond the top cube)
 * @local
 */
MPITOPO_API int mpitopo_hhc_rank_of_id(const mpitopo_hhc_t *hhc, long long id, int *rank,
                                       int *tree_rank);

/**
 * @brief A node ID as a string of nibbles, "0011.0101".
 * @param[in] hhc the HHC
 * @param[in] id a node ID
 * @param[out] buf the string
 * @param[in] len the size of buf; #MPITOPO_HHC_ID_LEN always suffices
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG hhc or buf NULL, a bad ID, buf too short
 * @local
 */
MPITOPO_API int mpitopo_hhc_id_to_string(const mpitopo_hhc_t *hhc, long long id, char *buf,
                                         int len);

/**
 * @brief A node ID from its string of nibbles.
 * @param[in] hhc the HHC
 * @param[in] s L nibbles of 4 binary digits, separated by dots ("0011.0101")
 * @param[out] id the node ID
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG hhc, s or id NULL
 * @retval MPITOPO_ERR_PARSE a wrong length, a character other than 0 and 1,
 *         an ID that names no node (a nibble above 1000)
 * @local
 */
MPITOPO_API int mpitopo_hhc_id_from_string(const mpitopo_hhc_t *hhc, const char *s,
                                           long long *id);

/**
 * @brief The place of a node in the HHC.
 * @param[in] hhc the HHC
 * @param[in] id a node ID
 * @param[out] level NULL or its level: 0 for a bottom node, l for the
 *             centre of a level-l cube
 * @param[out] centre NULL or the centre of the cube it is a leaf of (its
 *             cube), -1 for the top centre
 * @param[out] position NULL or its rank in that cube's communicator (its
 *             nibble there), -1 for the top centre
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG hhc NULL, a bad ID
 * @local
 */
MPITOPO_API int mpitopo_hhc_node(const mpitopo_hhc_t *hhc, long long id, int *level,
                                 long long *centre, int *position);

/**
 * @brief The route between two nodes, as the paper's routing takes it.
 *
 * Up through the centres to the lowest cube that holds both, across it
 * (least significant bit first), down through the centres: the route of the
 * network "hhc:D". Hop h goes to node ids[h] by sending to ranks[h] on the
 * communicator comms[h] of the process that sends it.
 * @param[in] hhc the HHC
 * @param[in] src the source node ID
 * @param[in] dst the destination node ID
 * @param[in] max the room in the arrays; 2 L + 1 always suffices
 * @param[out] ids NULL or the node reached by each hop
 * @param[out] ranks NULL or the rank to send each hop to
 * @param[out] comms NULL or the communicator of each hop: #MPITOPO_HHC_TREE
 *             or #MPITOPO_HHC_CUBE
 * @param[out] len the number of hops (0 when src = dst)
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG hhc or len NULL, a bad ID, max too small for the route
 * @local
 */
MPITOPO_API int mpitopo_hhc_route(const mpitopo_hhc_t *hhc, long long src, long long dst, int max,
                                  long long ids[], int ranks[], int comms[], int *len);

/**
 * @brief Send a message to a node, forwarded along the route.
 *
 * Returns once the message is packed and its first hop posted (buf may be
 * reused): a buffered send, which never waits for the receiver. Messages
 * from one node to another arrive in the order sent, whether sent by
 * mpitopo_hhc_send() or mpitopo_hhc_isend().
 * @param[in] buf the data
 * @param[in] count number of elements, >= 0
 * @param[in] type their datatype
 * @param[in] dst the destination node ID (the sender's own: a message to itself)
 * @param[in] tag a tag >= 0
 * @param[in,out] hhc the HHC
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG hhc NULL, a bad ID, count or tag < 0
 * @retval MPITOPO_ERR_NOMEM out of memory
 * @mpierr
 * @par Collective:
 * No: point-to-point; the processes on the route forward it while they
 * are inside a routed call (see above).
 */
MPITOPO_API int mpitopo_hhc_send(const void *buf, int count, MPI_Datatype type, long long dst,
                                 int tag, mpitopo_hhc_t *hhc);

/**
 * @brief Start a routed send: the nonblocking form of mpitopo_hhc_send().
 *
 * The message is packed at once (buf and type may be reused or freed when
 * the call returns) and its first hop posted; the request completes, in
 * mpitopo_hhc_wait() or mpitopo_hhc_test(), when MPI has completed that
 * hop's send, and the packed copy is released then. The processes on the
 * route forward it as described above.
 * @param[in] buf the data
 * @param[in] count number of elements, >= 0
 * @param[in] type their datatype
 * @param[in] dst the destination node ID (the sender's own: a message to itself)
 * @param[in] tag a tag >= 0
 * @param[in,out] hhc the HHC
 * @param[out] request the new request (#MPITOPO_HHC_REQUEST_NULL on error)
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG hhc or request NULL, a bad ID, count or tag < 0
 * @retval MPITOPO_ERR_NOMEM out of memory
 * @mpierr
 * @par Collective:
 * No: point-to-point.
 */
MPITOPO_API int mpitopo_hhc_isend(const void *buf, int count, MPI_Datatype type, long long dst, int tag,
                                  mpitopo_hhc_t *hhc, mpitopo_hhc_request_t *request);

/**
 * @brief Start a routed receive: the nonblocking form of mpitopo_hhc_recv().
 *
 * The receive takes the earliest message already arrived from src with
 * tag, or else the first that arrives (receives are matched in the order
 * they were posted); the data is unpacked into buf then, inside whichever
 * routed call moved it. buf must stay valid until the request completes;
 * type may be freed at once (the request keeps a duplicate).
 * @param[out] buf the data, when the request completes
 * @param[in] count room for count elements of type
 * @param[in] type their datatype
 * @param[in] src the source node ID or #MPITOPO_HHC_ANY
 * @param[in] tag a tag or MPI_ANY_TAG
 * @param[in,out] hhc the HHC
 * @param[out] request the new request (#MPITOPO_HHC_REQUEST_NULL on an
 *             argument error)
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG hhc or request NULL, a bad ID, count < 0
 * @retval MPITOPO_ERR_NOMEM out of memory
 * @mpierr
 * @par Collective:
 * No: point-to-point.
 */
MPITOPO_API int mpitopo_hhc_irecv(void *buf, int count, MPI_Datatype type, long long src, int tag,
                                  mpitopo_hhc_t *hhc, mpitopo_hhc_request_t *request);

/**
 * @brief Complete a routed request, forwarding others' messages meanwhile.
 *
 * The request is then released and set to #MPITOPO_HHC_REQUEST_NULL (also
 * when it failed); #MPITOPO_HHC_REQUEST_NULL completes at once.
 * @param[in,out] request the request
 * @param[out] from NULL or, for a receive, the source node ID
 * @param[out] tag NULL or, for a receive, the tag
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG request NULL; a receive whose message was longer
 *         than count elements (the message is dropped); a receive whose HHC
 *         was freed first
 * @mpierr
 * @par Collective:
 * No: point-to-point; waits for the message.
 */
MPITOPO_API int mpitopo_hhc_wait(mpitopo_hhc_request_t *request, long long *from, int *tag);

/**
 * @brief Tell whether a routed request has completed, after one round of
 * forwarding; completed, it is released as by mpitopo_hhc_wait().
 * @param[in,out] request the request
 * @param[out] flag 1 when it has completed (#MPITOPO_HHC_REQUEST_NULL gives 1), else 0
 * @param[out] from NULL or, for a completed receive, the source node ID
 * @param[out] tag NULL or, for a completed receive, the tag
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG request or flag NULL, or as mpitopo_hhc_wait()
 * @mpierr
 * @par Collective:
 * No: point-to-point; never waits.
 */
MPITOPO_API int mpitopo_hhc_test(mpitopo_hhc_request_t *request, int *flag, long long *from, int *tag);

/**
 * @brief Complete count routed requests (of any HHC objects), in any order.
 * @param[in] count number of requests, >= 0
 * @param[in,out] requests the requests, each set to #MPITOPO_HHC_REQUEST_NULL
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG count < 0, requests NULL with count > 0, or the
 *         first request's error as mpitopo_hhc_wait() (every request is
 *         completed and released all the same)
 * @mpierr
 * @par Collective:
 * No: point-to-point.
 */
MPITOPO_API int mpitopo_hhc_waitall(int count, mpitopo_hhc_request_t requests[]);

/**
 * @brief Forward the routed messages that have come, complete what can
 * complete, and return at once.
 *
 * For a process that waits on something else (its own MPI requests)
 * while routed messages may cross it.
 * @param[in,out] hhc the HHC
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG hhc NULL
 * @retval MPITOPO_ERR_NOMEM out of memory for a message passing through
 * @mpierr
 * @local
 */
MPITOPO_API int mpitopo_hhc_progress(mpitopo_hhc_t *hhc);

/**
 * @brief Receive a routed message, forwarding others meanwhile.
 * @param[out] buf the data
 * @param[in] count room for count elements of type
 * @param[in] type their datatype
 * @param[in] src the source node ID or #MPITOPO_HHC_ANY
 * @param[in] tag a tag or MPI_ANY_TAG
 * @param[in,out] hhc the HHC
 * @param[out] from NULL or the source node ID
 * @param[out] tag_out NULL or the tag
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG hhc NULL, a bad ID, a message larger than count
 *         elements (it is dropped)
 * @mpierr
 * @par Collective:
 * No: point-to-point; waits for the message.
 */
MPITOPO_API int mpitopo_hhc_recv(void *buf, int count, MPI_Datatype type, long long src, int tag,
                                 mpitopo_hhc_t *hhc, long long *from, int *tag_out);

/**
 * @brief Receive a routed message if one has come: the nonblocking form of
 * mpitopo_hhc_recv(); forwards what has come for others meanwhile.
 *
 * It takes only a message that no posted receive (mpitopo_hhc_irecv())
 * has matched.
 * @param[out] buf the data, when *flag is set
 * @param[in] count room for count elements of type
 * @param[in] type their datatype
 * @param[in] src the source node ID or #MPITOPO_HHC_ANY
 * @param[in] tag a tag or MPI_ANY_TAG
 * @param[in,out] hhc the HHC
 * @param[out] flag 1 when a message was received, else 0
 * @param[out] from NULL or the source node ID
 * @param[out] tag_out NULL or the tag
 * @retval MPITOPO_SUCCESS on success (with or without a message)
 * @retval MPITOPO_ERR_ARG as mpitopo_hhc_recv(), flag NULL
 * @mpierr
 * @par Collective:
 * No: point-to-point; never waits.
 */
MPITOPO_API int mpitopo_hhc_try_recv(void *buf, int count, MPI_Datatype type, long long src,
                                     int tag, mpitopo_hhc_t *hhc, int *flag, long long *from,
                                     int *tag_out);

/**
 * @brief Wait until every routed message sent before the call has reached
 * its destination (it may still wait there for its mpitopo_hhc_recv()).
 * @param[in,out] hhc the HHC
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG hhc NULL
 * @mpierr
 * @collective{hhc} Every process of the HHC.
 */
MPITOPO_API int mpitopo_hhc_fence(mpitopo_hhc_t *hhc);

/**
 * @brief Broadcast over the HHC with the tree and the cubes.
 *
 * The data climbs from root through its centres to the top, enters every
 * cube at one leaf (from the route or from its centre) and spreads there by
 * the cube's broadcast. The result equals MPI_Bcast's on the HHC's processes.
 * @param[in,out] buf the data (sent from root, received elsewhere)
 * @param[in] count number of elements
 * @param[in] type their datatype
 * @param[in] root the root's node ID, the same everywhere
 * @param[in,out] hhc the HHC
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG hhc NULL, a bad root
 * @mpierr
 * @collective{hhc} Every process of the HHC.
 */
MPITOPO_API int mpitopo_hhc_bcast(void *buf, int count, MPI_Datatype type, long long root,
                                  mpitopo_hhc_t *hhc);

/**
 * @brief Gather over the HHC with the cubes and the tree.
 *
 * The chain from root up to the top centre carries the blocks down to
 * root: each centre on it sends its child on the chain everything outside
 * its own subtree, and that centre's cube gathers its other leaves'
 * subtrees into the same child over the cube's Cartesian communicator.
 * Every other cube sends its leaves' subtrees up to its centre, each over
 * its own centre-leaf link (the default), or, with the info key
 * mpitopo_hhc_gather = cubes of mpitopo_hhc_create(), gathers them to its
 * leaf 0 over the cube's communicator first. Block j of root's recvbuf
 * comes from the process of the j-th lowest rank in comm among the HHC's
 * processes: MPI_Gather's result on those processes in comm's order.
 * sendbuf may be MPI_IN_PLACE at root.
 * @param[in] sendbuf the data of the calling process
 * @param[in] sendcount number of elements
 * @param[in] sendtype their datatype
 * @param[out] recvbuf at root: room for N blocks
 * @param[in] recvcount elements of a block (significant at root)
 * @param[in] recvtype their datatype (significant at root)
 * @param[in] root the root's node ID, the same everywhere
 * @param[in,out] hhc the HHC
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG hhc NULL, a bad root
 * @retval MPITOPO_ERR_NOMEM out of memory
 * @mpierr
 * @collective{hhc} Every process of the HHC.
 */
MPITOPO_API int mpitopo_hhc_gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                   void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                   long long root, mpitopo_hhc_t *hhc);

/**
 * @brief Allreduce over the HHC: reduced up the cubes and the tree, then
 * broadcast (mpitopo_hhc_bcast()) from the top centre.
 *
 * The op must be commutative; the order of the reduction differs from
 * MPI_Allreduce's, so floating-point sums may differ in their last bits.
 * @param[in] sendbuf the data of the calling process, or MPI_IN_PLACE
 * @param[in,out] recvbuf the result
 * @param[in] count number of elements
 * @param[in] type their datatype
 * @param[in] op a commutative operation
 * @param[in,out] hhc the HHC
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG hhc NULL, a non-commutative op
 * @retval MPITOPO_ERR_NOMEM out of memory
 * @mpierr
 * @collective{hhc} Every process of the HHC.
 */
MPITOPO_API int mpitopo_hhc_allreduce(const void *sendbuf, void *recvbuf, int count,
                                      MPI_Datatype type, MPI_Op op, mpitopo_hhc_t *hhc);

/** @} */

#ifdef __cplusplus
}
#endif

#endif /* MPITOPO_HHC_H */
