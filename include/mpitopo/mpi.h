#ifndef MPITOPO_MPI_H
#define MPITOPO_MPI_H
#ifndef MPITOPO_INSIDE_H_
#error Please include <mpitopo.h> instead of <mpitopo/mpi.h>
#endif

#include <mpitopo/export.h>
#include <mpitopo/machine.h>
#include <mpitopo/network.h>

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @defgroup mpitopo_nodes Nodes and machine of a communicator
 * @ingroup mpitopo
 * @brief The compute nodes of a communicator, its machine, and emulated machines.
 *
 * Node information of a communicator is computed once and cached on it
 * through an attribute (copied by reference on MPI_Comm_dup, released when
 * the communicator is freed, and at MPI_Finalize at the latest).
 *
 * Nodes are what MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) reports, unless
 * MPITOPO_EMULATE is set: then MPI_COMM_WORLD is placed on the emulated
 * machine it describes (see mpitopo_emulation()) and nodes are those.
 * @{
 */

/** @brief Node information of a communicator (mpitopo_comm_nodeinfo()). */
typedef struct mpitopo_nodeinfo {
    MPI_Comm node_comm;   /**< the processes of comm on my node; owned by the cache */
    MPI_Comm leader_comm; /**< one process per node (local rank 0); MPI_COMM_NULL elsewhere */
    int node;             /**< my node, 0..nnodes-1, numbered by lowest rank in comm */
    int nnodes;           /**< number of nodes of comm */
    int local_rank;       /**< my rank in node_comm */
    int local_size;       /**< size of node_comm */
    int min_local_size;   /**< smallest node of comm (processes) */
    int max_local_size;   /**< largest node of comm (processes) */
    int emulated;         /**< 1 when the nodes come from MPITOPO_EMULATE */
} mpitopo_nodeinfo_t;

/**
 * @brief Get (computing it the first time, collectively over comm) the node
 * information of a communicator.
 *
 * @param[in] comm the communicator (an intracommunicator)
 * @param[out] info points into the cache and stays valid while comm lives
 *             (and until MPI_Finalize at the latest)
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG info == NULL, comm == MPI_COMM_NULL, an
 *         intercommunicator (returned by every process, so nobody hangs),
 *         or MPI not initialized
 * @retval MPITOPO_ERR_* a bad MPITOPO_EMULATE or MPITOPO_EMULATE_PLACEMENT
 *         (see mpitopo_emulation(): #MPITOPO_ERR_PARSE, #MPITOPO_ERR_ARG or
 *         #MPITOPO_ERR_RANGE) makes every process of comm return the error,
 *         whose message names the variable and its value
 * @mpierr
 * @collective{comm} On the first call for comm (and for its duplicates,
 * which share the cache); local afterwards.
 * @threadsafe For distinct communicators.
 */
MPITOPO_API int mpitopo_comm_nodeinfo(MPI_Comm comm, const mpitopo_nodeinfo_t **info);

/**
 * @brief The machine the processes of a communicator run on, with one leaf
 * per process.
 *
 * Its levels:
 *  - network levels: with a network (comm's info key "mpitopo_network", else
 *    MPITOPO_NETWORK, holding a network description of
 *    mpitopo_network_from_string(): "gpc", "torus:4x4x4", "fattree:...",
 *    "fabric:TOPOLOGY,ROUTES", ...), the network's group levels
 *    (mpitopo_network_group()) of the end node of each node; see
 *    mpitopo_comm_network() for which end node that is. Otherwise
 *    MPITOPO_NETWORK (read once per MPI session) may be a list of name:count
 *    separated by blanks or commas, where count is how many units of the
 *    level below (nodes, for the last one) one unit holds: "switch:8" puts
 *    nodes 0-7 of comm on switch 0, 8-15 on switch 1, ...; "group:4 switch:8"
 *    also puts 4 switches in a group. The number of top-level units follows
 *    from the number of nodes. Without MPITOPO_NETWORK, under emulation, the
 *    emulated levels above "node"; otherwise, in a Slurm job, Slurm's
 *    switches or blocks (SLURM_TOPOLOGY_ADDR of every task, else
 *    topology.conf; see MPITOPO_SLURM and mpitopo_comm_machine_source());
 *    otherwise none;
 *  - "node": the nodes of mpitopo_comm_nodeinfo();
 *  - the levels inside a node: under emulation, those of the emulated
 *    description below "node"; otherwise "socket" and "core" (hwloc package
 *    and core logical indices) when every process is bound to a single core,
 *    and a flat "core" level labelled by local rank when any is not. When
 *    two processes of a node are bound to the same core, that node's core
 *    labels are the local ranks. Processes are never bound or rebound.
 *
 * Level costs are those of the emulated description when the levels are
 * exactly its own (emulation without MPITOPO_NETWORK), the defaults of
 * mpitopo_machine_from_paths() otherwise.
 * @param[in] comm the communicator
 * @param[out] machine the machine; the caller destroys it
 *             (mpitopo_machine_destroy())
 * @param[out] leaf_of_rank comm size ints, caller-allocated: receives the
 *             leaf of every rank of comm
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_* those of mpitopo_comm_nodeinfo()
 * @retval MPITOPO_ERR_PARSE a bad MPITOPO_NETWORK or info key mpitopo_network
 *         (the message names it); the errors of mpitopo_network_from_string()
 *         for a network description
 * @retval MPITOPO_ERR_MISMATCH the processes disagree on the levels or on
 *         the network (different environments)
 * @retval MPITOPO_ERR_RANGE more nodes than the network has end nodes
 * @retval MPITOPO_ERR_NOT_FOUND the host names of some processes, not all,
 *         are end nodes of the network
 * @mpierr
 * @collective{comm} One allreduce and one allgather (after
 * mpitopo_comm_nodeinfo()); O(size) memory on every rank. Every process of
 * comm returns the error.
 */
MPITOPO_API int mpitopo_comm_machine(MPI_Comm comm, mpitopo_machine_t **machine, int *leaf_of_rank);

/**
 * @brief The network a communicator's nodes are attached to, and the end
 * node of the calling process.
 *
 * The network comes from comm's info key "mpitopo_network" (set with
 * mpitopo_comm_set_info() or, through the shim, MPI_Comm_set_info before the
 * communicator's machine is first needed: the machine and its network are
 * then cached, and shared by duplicates), else from MPITOPO_NETWORK when it
 * holds a network description (see mpitopo_network_from_string(); a list of
 * levels such as "switch:8" is no network). Each description is made once
 * per MPI session (a fabric's files are read once).
 *
 * The nodes of comm sit on end nodes by host name when the host name of
 * every process (MPI_Get_processor_name(), up to the first '.') is the first
 * word of an end node's name (mpitopo_network_node_name(): a fabric's node
 * descriptions); in order when none is: node i of comm (numbered by lowest
 * rank, as mpitopo_comm_nodeinfo() does) on end node i, or under emulation
 * the emulated node i (in MPI_COMM_WORLD's emulated machine) on end node i.
 * @param[in] comm the communicator
 * @param[out] network the network, owned by the library until
 *             MPI_Finalize; NULL when there is none
 * @param[out] end_node the end node of the calling process's node; -1
 *             without a network
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL pointers
 * @retval MPITOPO_ERR_* those of mpitopo_comm_machine()
 * @mpierr
 * @collective{comm} On the first call for comm and its duplicates (it
 * builds the machine of mpitopo_comm_machine() and caches it); local after.
 */
MPITOPO_API int mpitopo_comm_network(MPI_Comm comm, const mpitopo_network_t **network,
                                     int *end_node);

/**
 * @brief Where the levels above the nodes of a communicator's machine came
 * from.
 *
 * One line, the same on every process: "MPITOPO_NETWORK" or
 * "info mpitopo_network" (a network or levels given by the user),
 * "MPITOPO_EMULATE" (emulated levels above "node"), "Slurm
 * (SLURM_TOPOLOGY_ADDR)" or "Slurm (FILE)" (a Slurm job's switches or
 * blocks; see MPITOPO_SLURM), or "none ..." saying why there are none.
 * @param[in] comm the communicator
 * @param[out] source at least size chars: the line, NUL-terminated (cut
 *             at size - 1)
 * @param[in] size the size of source, >= 1
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG source NULL or size < 1
 * @retval MPITOPO_ERR_* those of mpitopo_comm_machine()
 * @mpierr
 * @collective{comm} On the first call for comm and its duplicates (it
 * builds the machine of mpitopo_comm_machine() and caches it); local after.
 */
MPITOPO_API int mpitopo_comm_machine_source(MPI_Comm comm, char *source, int size);

/**
 * @brief The emulated machine, and the leaf of a world rank on it.
 *
 * Emulation is read once from the environment (once per MPI session: the
 * state is dropped at MPI_Finalize):
 * @verbatim
   MPITOPO_EMULATE="node:4 core:4"   any description with a "node" level
                                     (e.g. "switch:2 node:4 socket:2 core:2";
                                     commas may separate levels); it must
                                     have at least as many leaves as
                                     MPI_COMM_WORLD has processes.
                                     Unset or empty: emulation is off.
   MPITOPO_EMULATE_PLACEMENT=block|rr|random:SEED   how world ranks are
                                     placed on its leaves (default block),
                                     as mpitopo_placement does.
   @endverbatim
 * The placement (world_size ints) is computed once.
 * @param[in] world_rank a rank of MPI_COMM_WORLD
 * @param[in] world_size the size of MPI_COMM_WORLD
 * @param[out] machine the emulated machine (owned by the library, valid
 *             until MPI_Finalize; NULL when emulation is off)
 * @param[out] leaf the leaf of world_rank (-1 when emulation is off); may be NULL
 * @retval MPITOPO_SUCCESS on success (also when emulation is off)
 * @retval MPITOPO_ERR_ARG bad arguments
 * @retval MPITOPO_ERR_* for a bad description, one without a "node" level,
 *         fewer leaves than world_size, or a bad placement: the error of the
 *         parser or placement (#MPITOPO_ERR_PARSE, #MPITOPO_ERR_ARG,
 *         #MPITOPO_ERR_RANGE) with a message naming the variable and its
 *         value, on every call
 * @local
 */
MPITOPO_API int mpitopo_emulation(int world_rank, int world_size, const mpitopo_machine_t **machine,
                                  int *leaf);

/** @} */

/**
 * @defgroup mpitopo_cart Reordered Cartesian communicators
 * @ingroup mpitopo
 * @brief Cartesian communicators that are really reordered, and node-aware
 * grid dimensions.
 *
 * mpitopo_cart_create() is MPI_Cart_create with reorder honoured: grid
 * neighbours share a node (and a socket, a switch, ...) as much as
 * possible. The machine is cached on comm (first call:
 * mpitopo_comm_machine()), so a later creation costs one split plus one
 * PMPI_Cart_create.
 * @{
 */

/**
 * @brief MPI_Cart_create with reorder honoured.
 *
 * With reorder != 0 the processes are renumbered so that grid neighbours
 * share a node (and a socket, a switch, ... on every level of
 * mpitopo_comm_machine()) as much as possible, using the "cart" mapper with
 * the never-worse guard (the original order is kept when the mapping does
 * not lower the weighted cost). The result is a real Cartesian
 * communicator (MPI_Topo_test says MPI_CART; every MPI_Cart_* and
 * MPI_Neighbor_* call works on it): comm is split in the new order, then
 * PMPI_Cart_create is called with reorder = 0. reorder == 0 is exactly
 * PMPI_Cart_create. When prod(dims) < size, the processes left out get
 * MPI_COMM_NULL; with reorder they are chosen so that whole nodes stay in
 * (nodes whose sizes add up to prod(dims) when some do), unless the
 * original order is kept by the never-worse guard: then, as with
 * PMPI_Cart_create, ranks prod(dims) and up are left out. ndims == 0 gives
 * a communicator of one process (MPI-3 semantics): that of rank 0 with
 * reorder == 0.
 *
 * The machine is cached on comm (first call: mpitopo_comm_machine()), so a
 * later creation costs one split plus one PMPI_Cart_create. O(size) memory
 * on every process. With MPITOPO_VERBOSE=1 rank 0 prints one line per
 * creation, e.g.
 * @verbatim
   mpitopo: cart 128x128 on 1024 nodes x 16: off-node partners avg 2.12 -> 1.00
   @endverbatim
 * Every creation starts with one small allreduce that agrees on whether
 * every process's arguments are valid and the same (ndims, dims, periods,
 * reorder, stencil, info values): a process with bad arguments makes every
 * process return its error (the others name it), and a difference is
 * reported on every process with the first process that differs from
 * process 0, the argument and both values; nobody is left waiting. With
 * MPITOPO_CHECK_ARGS=1 (default in debug builds) the arguments are also
 * compared in full (not by hash) when they agree.
 * @param[in] comm the communicator: an intracommunicator without a topology
 * @param[in] ndims number of dimensions, 0..#MPITOPO_MAX_DIMS
 * @param[in] dims ndims sizes, each >= 1, prod(dims) <= size of comm
 * @param[in] periods ndims flags (non-zero: periodic)
 * @param[in] reorder non-zero: renumber the processes
 * @param[out] newcomm the new Cartesian communicator, or MPI_COMM_NULL on
 *             the processes left out; free it with MPI_Comm_free
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG ndims < 0 or > #MPITOPO_MAX_DIMS, NULL arrays with
 *         ndims > 0, a dims entry < 1, prod(dims) > size, newcomm NULL, an
 *         intercommunicator or MPI_COMM_NULL, or a communicator that already
 *         has a topology
 * @retval MPITOPO_ERR_MISMATCH arguments that differ between processes
 * @retval MPITOPO_ERR_* errors of mpitopo_comm_machine()
 * @mpierr
 * @collective{comm} Every process returns the error.
 */
MPITOPO_API int mpitopo_cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[],
                                    int reorder, MPI_Comm *newcomm);

/**
 * @brief mpitopo_cart_create() with the communication described.
 *
 * info may set:
 * @verbatim
   mpitopo_stencil   same as stencil (the argument wins when both are set)
   mpitopo_mapper    cart (default), identity, block, rr, random[:SEED]
   mpitopo_weights   bytes (default), messages, unit: what the mapper minimises
   mpitopo_reorder   false: behave as reorder = 0
   @endverbatim
 * Unknown info keys are ignored, as MPI does.
 * @param[in] comm as mpitopo_cart_create()
 * @param[in] ndims as mpitopo_cart_create()
 * @param[in] dims as mpitopo_cart_create()
 * @param[in] periods as mpitopo_cart_create()
 * @param[in] reorder as mpitopo_cart_create()
 * @param[in] stencil NULL or "" = star of radius 1; otherwise the options of
 *            Cartesian pattern descriptions: "star=R", "moore=R",
 *            "offsets=a,b;c,d", optionally followed by ":weights=w0,w1,..."
 *            (per dimension) and ":bytes=B", e.g. "moore=1:weights=4,1"
 * @param[in] info MPI_INFO_NULL or the keys above
 * @param[out] newcomm as mpitopo_cart_create()
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_* as mpitopo_cart_create()
 * @retval MPITOPO_ERR_PARSE also a bad stencil or info value (the message names it)
 * @retval MPITOPO_ERR_ARG also a Moore or star stencil of more than
 *         1,048,576 offsets (the limit of every stencil, as in
 *         mpitopo_cart_stencil_create()), an info value of 256 characters or more
 * @mpierr
 * @collective{comm} Every process returns the error.
 */
MPITOPO_API int mpitopo_cart_create_x(MPI_Comm comm, int ndims, const int dims[],
                                      const int periods[], int reorder, const char *stencil,
                                      MPI_Info info, MPI_Comm *newcomm);

/**
 * @brief MPI_Cart_map done right: the rank the calling process gets in the
 * reordered grid of mpitopo_cart_create() (reorder = 1).
 * @param[in] comm the communicator (a topology on it is allowed)
 * @param[in] ndims as mpitopo_cart_create()
 * @param[in] dims as mpitopo_cart_create()
 * @param[in] periods as mpitopo_cart_create()
 * @param[out] newrank the new rank, or MPI_UNDEFINED when the process is
 *             left out (prod(dims) < size)
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_* as mpitopo_cart_create(), except that a topology
 *         on comm is allowed
 * @mpierr
 * @collective{comm} One allreduce agrees on the arguments (as in
 * mpitopo_cart_create()), plus machine discovery on the first call. Every
 * process returns the error.
 */
MPITOPO_API int mpitopo_cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[],
                                 int *newrank);

/**
 * @brief mpitopo_dims_create_nodes() for the processes of a communicator.
 *
 * nprocs is the size of comm and procs_per_node its (uniform) node size;
 * when the nodes of comm differ in size, this is mpitopo_dims_create().
 * @param[in] comm the communicator
 * @param[in] ndims number of dimensions
 * @param[in,out] dims as for mpitopo_dims_create()
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_* those of mpitopo_dims_create() and
 *         mpitopo_comm_nodeinfo()
 * @mpierr
 * @collective{comm} On the first call; local afterwards.
 */
MPITOPO_API int mpitopo_comm_dims_create(MPI_Comm comm, int ndims, int *dims);

/** @} */

/**
 * @defgroup mpitopo_graph Reordered graph and dist-graph communicators
 * @ingroup mpitopo
 * @brief Graph and dist-graph communicators that are really reordered.
 *
 * The graph describes the communication of the ranks (the roles of the
 * program). With reorder != 0 a mapper (default "tree") chooses which
 * process plays which rank, so that heavy edges stay inside a node (a
 * socket, a switch, ... on every level of mpitopo_comm_machine()), with the
 * never-worse guard: the original order is kept when the mapping does not
 * lower the weighted cost. As for Cartesian grids, the process that gets
 * rank k in the new communicator takes over the role of rank k: its
 * neighbour lists are those given for rank k (by the process that had rank
 * k in comm), in the given order, with the neighbours' new ranks, which
 * are the numbers given, since the neighbours' roles move with them. So
 * MPI_Dist_graph_neighbors, MPI_Graph_neighbors and every MPI_Neighbor_*
 * call on the result see exactly the input graph, and the program loads its
 * data by its new rank (reorder after loading data means moving it: pass
 * reorder = 0 then). The result is a real topology communicator of the same
 * kind as the MPI call's: comm is split in the new order, then the PMPI_
 * constructor is called with reorder = 0. reorder == 0 is exactly the PMPI_
 * call.
 *
 * Weights. MPI_UNWEIGHTED means weight 1 per edge (never 0). Weights must
 * be given on every process that has edges or on none (a process without
 * edges may pass MPI_WEIGHTS_EMPTY, MPI_UNWEIGHTED or NULL); they must be
 * >= 0. The info key
 * @verbatim
   mpitopo_weights   bytes (default), messages or unit
   @endverbatim
 * says what the weights mean: bytes or messages sent along the edge (the
 * mapper minimises their sum times the distance), or nothing (every edge
 * counts 1, the weights are only passed on to MPI). Other info keys:
 * @verbatim
   mpitopo_mapper    tree (default), identity, block, rr, random[:SEED],
                     and scotch / metis when built with them
   mpitopo_reorder   false: behave as reorder = 0
   @endverbatim
 * The info is passed on to the PMPI_ constructor (MPI ignores keys it does
 * not know). Duplicate edges add up for the mapping and are kept in the
 * lists; self edges are kept and cost nothing.
 *
 * Cost. The dist-graph forms gather the edges on rank 0 of comm: O(E) memory
 * there (E = edges given by all processes, below 2^31 / 3), O(degree)
 * elsewhere; rank 0 scatters the new ranks, and with the adjacent form each
 * process sends its lists to the process taking its role (O(degree)).
 * mpitopo_graph_create() has the whole graph on every process already:
 * every process maps it itself, no gather. Never a P x P matrix.
 *
 * Every constructor is collective over comm. With MPITOPO_VERBOSE=1 rank 0
 * prints one line per creation, e.g.
 * @verbatim
   mpitopo: dist_graph 64 ranks, 128 edges on 8 nodes x 8 (tree, bytes):
            off-node weight 96 -> 16, cost 1.2e+04 -> 4.1e+03
   @endverbatim
 * Every constructor starts with one small allreduce that agrees on
 * whether every process's arguments are valid and on reorder, the info
 * values and (graph_create) the graph (hashed): a difference is reported
 * on every process, naming the first process that differs from process 0
 * and the argument.
 *
 * Errors: every process returns one; the process whose input is wrong has
 * the precise message, the others name that process.
 * @{
 */

/**
 * @brief MPI_Dist_graph_create_adjacent with reorder honoured.
 *
 * See mpitopo_graph(3) for what reordering means, the weights, the info
 * keys and the cost.
 * @param[in] comm the communicator (an intracommunicator)
 * @param[in] indegree number of sources of the calling process's rank, >= 0
 * @param[in] sources indegree ranks in [0, size)
 * @param[in] sourceweights indegree weights >= 0, MPI_UNWEIGHTED or
 *            MPI_WEIGHTS_EMPTY
 * @param[in] outdegree number of destinations, >= 0
 * @param[in] destinations outdegree ranks in [0, size)
 * @param[in] destweights outdegree weights >= 0, MPI_UNWEIGHTED or
 *            MPI_WEIGHTS_EMPTY
 * @param[in] info MPI_INFO_NULL or the keys mpitopo_weights,
 *            mpitopo_mapper, mpitopo_reorder (passed on to MPI; its
 *            mpitopo_ keys are also kept on the result with
 *            mpitopo_comm_set_info(), as MPICH drops them)
 * @param[in] reorder non-zero: renumber the processes
 * @param[out] newcomm the new dist-graph communicator; free it with
 *             MPI_Comm_free
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG a negative degree or count, a NULL array with a
 *         positive count, a neighbour outside [0, size) or MPI_PROC_NULL, a
 *         negative weight, a NULL newcomm, MPI_COMM_NULL or an
 *         intercommunicator
 * @retval MPITOPO_ERR_MISMATCH weights given on some processes and
 *         MPI_UNWEIGHTED on others (the message names one of each), and
 *         arguments differing between processes
 * @retval MPITOPO_ERR_PARSE a bad info value
 * @retval MPITOPO_ERR_* errors of mpitopo_comm_machine()
 * @mpierr
 * @collective{comm} Every process returns the error.
 */
MPITOPO_API int mpitopo_dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[],
                                                   const int sourceweights[], int outdegree,
                                                   const int destinations[],
                                                   const int destweights[], MPI_Info info,
                                                   int reorder, MPI_Comm *newcomm);

/**
 * @brief MPI_Dist_graph_create with reorder honoured.
 *
 * A process gives n source ranks sources[k], each with degrees[k]
 * destinations (destinations and weights listed one source after the
 * other). The edges are gathered and mapped as for
 * mpitopo_dist_graph_create_adjacent(); the order of neighbours in the
 * result is MPI's, which the standard leaves open.
 * @param[in] comm the communicator (an intracommunicator)
 * @param[in] n number of source ranks given by this process, >= 0
 * @param[in] sources n ranks
 * @param[in] degrees n numbers of destinations
 * @param[in] destinations sum(degrees) ranks, source after source
 * @param[in] weights sum(degrees) weights >= 0, MPI_UNWEIGHTED or
 *            MPI_WEIGHTS_EMPTY
 * @param[in] info as mpitopo_dist_graph_create_adjacent()
 * @param[in] reorder non-zero: renumber the processes
 * @param[out] newcomm the new dist-graph communicator
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_* as mpitopo_dist_graph_create_adjacent()
 * @mpierr
 * @collective{comm} Every process returns the error.
 */
MPITOPO_API int mpitopo_dist_graph_create(MPI_Comm comm, int n, const int sources[],
                                          const int degrees[], const int destinations[],
                                          const int weights[], MPI_Info info, int reorder,
                                          MPI_Comm *newcomm);

/**
 * @brief MPI_Graph_create with reorder honoured.
 *
 * nnodes <= size ranks (the other processes get MPI_COMM_NULL; with reorder
 * they are chosen so that whole nodes stay in when that is cheaper),
 * index/edges as in MPI, the same on every process. Edges are unweighted:
 * each counts 1, duplicates add up.
 * @param[in] comm the communicator (an intracommunicator)
 * @param[in] nnodes number of ranks of the graph, in [0, size]
 * @param[in] index nnodes cumulative degrees, as in MPI
 * @param[in] edges index[nnodes-1] neighbours, as in MPI
 * @param[in] reorder non-zero: renumber the processes
 * @param[out] newcomm the new graph communicator, or MPI_COMM_NULL on the
 *             processes left out
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG nnodes out of [0, size], NULL arrays, a decreasing
 *         index, an edge out of range
 * @retval MPITOPO_ERR_MISMATCH a graph differing between processes
 * @retval MPITOPO_ERR_* as mpitopo_dist_graph_create_adjacent()
 * @mpierr
 * @collective{comm} Every process returns the error.
 */
MPITOPO_API int mpitopo_graph_create(MPI_Comm comm, int nnodes, const int index[],
                                     const int edges[], int reorder, MPI_Comm *newcomm);

/**
 * @brief MPI_Graph_map done right: the rank the calling process gets in the
 * graph of mpitopo_graph_create() (reorder = 1).
 * @param[in] comm the communicator; it may carry a topology
 * @param[in] nnodes as mpitopo_graph_create()
 * @param[in] index as mpitopo_graph_create()
 * @param[in] edges as mpitopo_graph_create()
 * @param[out] newrank the new rank, or MPI_UNDEFINED
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_* as mpitopo_graph_create()
 * @mpierr
 * @collective{comm} One allreduce agrees on the arguments, plus machine
 * discovery on the first call. Every process returns the error.
 */
MPITOPO_API int mpitopo_graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[],
                                  int *newrank);

/**
 * @brief The reordering alone, for programs that keep their own neighbour
 * lists (and for MPIs without dist-graph calls, such as SimGrid SMPI).
 *
 * A thin form of mpitopo_dist_graph_create_adjacent(): the same call,
 * one implementation, stopping before the topology. The mapping of
 * mpitopo_dist_graph_create_adjacent(), returned as a plain
 * communicator (comm's processes in the new order, no topology) in which
 * the process of rank k plays rank k's role. reorder == 0 (or info
 * mpitopo_reorder=false) gives a duplicate of comm.
 * @param[in] comm as mpitopo_dist_graph_create_adjacent()
 * @param[in] indegree as mpitopo_dist_graph_create_adjacent()
 * @param[in] sources as mpitopo_dist_graph_create_adjacent()
 * @param[in] sourceweights as mpitopo_dist_graph_create_adjacent()
 * @param[in] outdegree as mpitopo_dist_graph_create_adjacent()
 * @param[in] destinations as mpitopo_dist_graph_create_adjacent()
 * @param[in] destweights as mpitopo_dist_graph_create_adjacent()
 * @param[in] info as mpitopo_dist_graph_create_adjacent()
 * @param[in] reorder as mpitopo_dist_graph_create_adjacent()
 * @param[out] reordered the reordered communicator; free it with MPI_Comm_free
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_* as mpitopo_dist_graph_create_adjacent()
 * @mpierr
 * @collective{comm} Arguments, weights, info and errors as
 * mpitopo_dist_graph_create_adjacent().
 */
MPITOPO_API int mpitopo_dist_graph_reorder(MPI_Comm comm, int indegree, const int sources[],
                                           const int sourceweights[], int outdegree,
                                           const int destinations[], const int destweights[],
                                           MPI_Info info, int reorder, MPI_Comm *reordered);

/**
 * @brief Reorder comm and pick each process's GPU on a GPU cluster (MAGC,
 * thesis ch. 5): the processes' node and core from C_cpu and C_gpu, the
 * GPU of each from C_gpu (mpitopo_map_gpu()).
 *
 * Process r of both patterns is rank r of the new communicator. The GPUs of
 * a node (every node alike) come from comm's info key "mpitopo_gpu", else
 * MPITOPO_GPU, else hwloc of rank 0's host (mpitopo_gpus_from_hwloc());
 * a description or an hwloc XML path as mpitopo_gpus_load() takes. The
 * machine is mpitopo_comm_machine()'s, with its network when comm has one
 * (mpitopo_comm_network()). The strategy is "magc" unless the info key
 * "mpitopo_gpu_mapper" names another of mpitopo_map_gpu() ("magc:scotch",
 * "strategy1", "strategy2", "gpu-default"); "mpitopo_weights" picks the
 * weight (bytes by default). Never worse: the launch placement with the
 * default assignment (local rank mod GPUs per node) is kept when the
 * mapping does not lower the GPU-tree congestion. Rank 0 maps and sends
 * each process its rank and device.
 *
 * Without GPUs (no key, no MPITOPO_GPU, and hwloc finds none or is not
 * available): *newcomm is a duplicate of comm and *device is -1, said at
 * MPITOPO_VERBOSE=1; a description that does not parse is an error.
 * @param[in] comm the communicator (an intracommunicator)
 * @param[in] cpu_pattern C_cpu over the size of comm processes, the same on
 *            every process
 * @param[in] gpu_pattern C_gpu, as many processes, the same on every process
 * @param[in] info MPI_INFO_NULL or keys mpitopo_gpu, mpitopo_gpu_mapper,
 *            mpitopo_weights (the same on every process); mpitopo_ keys stay
 *            on newcomm
 * @param[out] newcomm the reordered communicator; free it with MPI_Comm_free
 * @param[out] device the local GPU index this process should select (e.g.
 *             cudaSetDevice), in [0, GPUs per node), or -1 without GPUs
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL arguments, a pattern whose size differs
 *         from comm's or from the other pattern's (both named)
 * @retval MPITOPO_ERR_PARSE a GPU description or info value that does not
 *         parse (naming where it came from)
 * @retval MPITOPO_ERR_MISMATCH patterns, description, mapper or weights
 *         differing between processes
 * @retval MPITOPO_ERR_* those of mpitopo_map_gpu() and
 *         mpitopo_comm_machine()
 * @mpierr
 * @collective{comm} One allreduce agrees on the arguments, plus machine
 * discovery on the first call, one broadcast, one scatter and the split.
 * Every process returns the error.
 */
MPITOPO_API int mpitopo_gpu_map(MPI_Comm comm, const mpitopo_pattern_t *cpu_pattern,
                                const mpitopo_pattern_t *gpu_pattern, MPI_Info info,
                                MPI_Comm *newcomm, int *device);

/** @} */

#ifdef __cplusplus
}
#endif
#endif /* MPITOPO_MPI_H */
