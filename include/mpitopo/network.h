#ifndef MPITOPO_NETWORK_H
#define MPITOPO_NETWORK_H
#ifndef MPITOPO_INSIDE_H_
#error Please include <mpitopo.h> instead of <mpitopo/network.h>
#endif

#include <mpitopo/export.h>
#include <mpitopo/machine.h>
#include <mpitopo/pattern.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @defgroup mpitopo_network Networks: links, routes and congestion
 * @ingroup mpitopo
 * @brief Networks above the nodes: end nodes, switches, directed channels
 * with capacities, static routes, and the congestion metrics of a mapping.
 *
 * A network has nnodes end nodes (numbered 0..nnodes-1), switches, and
 * directed channels (numbered 0..nchannels-1): every physical link is two
 * channels, one each way. The route of an ordered pair of end nodes is the
 * sequence of channels its traffic crosses; the routes of the regular
 * topologies are computed on demand, in O(route length), with no table.
 *
 * Descriptions (mpitopo_network_from_string()), each optionally followed by
 * ":cap=X", the capacity of every channel (default 1):
 *  - "torus:4x4x4", "mesh:3x5": direct networks of any dimension (up to
 *    #MPITOPO_MAX_DIMS); the end nodes are the routers, node i sits at the
 *    row-major coordinates of i (last coordinate fastest). Dimension-order
 *    routing, dimension 0 first; in a torus dimension the shorter way round,
 *    on a tie the + direction. A torus dimension of size 2 has both its +
 *    and its wrap-around - link; a dimension of size 1 has none.
 *  - "fattree:H;m1,..,mH;w1,..,wH;p1,..,pH" with an optional ":nodes=N":
 *    a parallel-ports generalised fat tree (PGFT, the parameters of
 *    SimGrid's fat-tree): H levels of switches; a switch of level l has m_l
 *    children, every vertex of level l-1 has w_l parents, joined by p_l
 *    parallel links each. The m1*..*mH end nodes (or the first N of them:
 *    the switches with no node below are left out) are numbered with the
 *    lowest level fastest. Oversubscription is m_l against w_(l+1)*p_(l+1).
 *    Routing is d-mod-k (as OpenSM's ftree): the traffic to node d goes up
 *    from level l-1 through up-port u = (d / prod over j < l of w_j*p_j) mod
 *    (w_l*p_l), to parent u mod w_l over parallel link u / w_l, up to the
 *    lowest common ancestor level, then down over the same parallel links.
 *  - "ktree:K,N": the K-ary N-tree, fattree:N;K,..,K;1,K,..,K;1,..,1.
 *  - "dragonfly:P,A,H" or "dragonfly:P,A,H,G": G groups (default and at
 *    most A*H+1) of A routers, all-to-all inside a group, with P nodes and
 *    H global ports each; exactly one global link between every two groups,
 *    group i's t-th link (t = 0..G-2, leaving its router t / H) going to
 *    group t when t < i, else t+1. Minimal routing: to the router of the
 *    group holding the link to the destination's group, across it, then to
 *    the destination's router (at most 5 channels, counting the node links).
 *  - "hhc:D": the hierarchical hypercube with centre nodes (HHC) of
 *    dimension D in [1, 30] (M.-H. Ok, "A Process-to-Processor Mapping of
 *    HHC Topology in MPI", section 2). The 3-HHC is a 3-cube of 8
 *    nodes and a centre linked to all 8 (9 nodes). The D-HHC has L =
 *    ceil(D/3) levels of such cubes: the leaves of the level-1 cubes are
 *    the 2^D bottom nodes, the leaves of a level-j cube the centres of
 *    cubes of level j-1, and the single top cube has D - 3(L-1)
 *    dimensions (the 4-HHC is two 3-HHCs and a top centre, 19 nodes; the
 *    6-HHC eight, 73 nodes). Every node is an end node. Its ID, its name,
 *    is L 4-bit nibbles, the top cube's first, joined by '.' ("0101" in
 *    the 3-HHC, "0011.0101" when L = 2): a nibble is the node's position
 *    in a cube, below 1000, and the centre of a level-j cube has its j
 *    lowest nibbles 1000 ("0011.1000" is the centre of bottom cube 0011,
 *    "1000.1000" the top centre). End node numbers follow the post-order
 *    of the tree of centres (the subtrees below a cube's leaves in the
 *    order of their nibbles, then the centre): with S_0 = 1 and S_j = 2^k
 *    S_(j-1) + 1 for the k-cubes of level j, the node whose l lowest
 *    nibbles are 1000 is number S_l - 1 plus the sum over i > l of
 *    nibble_i * S_(i-1), nibble 1 being the lowest. So in the 3-HHC end
 *    node i is the nibble i and the centre is node 8; in the 6-HHC, "a.b"
 *    is node 9a + b and "1000.1000" node 72. Routing (the paper's): up
 *    through the centres to a leaf of the lowest cube holding both ends,
 *    across that cube (to its centre, or flipping the differing bits of
 *    its nibble, the least significant first), then down through the
 *    centres; at most D - L + 1 channels. A channel is named by its ends,
 *    "0011.0101->0011.1000".
 *  - "fabric:TOPOLOGY,ROUTES": an InfiniBand fabric read from two files,
 *    ibnetdiscover's output and the switches' forwarding tables (see
 *    mpitopo_network_from_fabric()); its capacities are the links' rates
 *    (a ":cap=X" changes none of them).
 *  - "gpc": the QDR partition of SciNet's GPC, a 5:1 blocking fat tree:
 *    103 leaf switches of 30 nodes, each with 3 links to a line switch
 *    in each of two core switches, a core being 18 line switches (6 leaves
 *    each, the last one 1) with 2 links to each of 9 spines:
 *    fattree:3;30,6,18;1,2,9;1,3,2:nodes=3090.
 *
 * Metrics of a mapping (thesis 3.2.3), over the traffic (bytes) between
 * processes on different end nodes; a channel's congestion is its load
 * divided by its capacity:
 *  - hop_bytes: sum over communicating ordered pairs of bytes * hops;
 *  - dilation: sum of the hops of every communicating ordered pair (bytes > 0);
 *  - max_congestion (MC): the largest congestion of any channel;
 *  - nzca: the average congestion over the channels that carry traffic;
 *  - nzcv: the population variance of the congestion over those channels;
 *  - hybrid: w1*hop_bytes + w2*max_congestion + w3*nzca + w4*nzcv, weights
 *    (1,1,1,1) by default; normalised, each term is divided by the same
 *    metric of a reference mapping (a term whose reference is 0 is left as
 *    it is).
 *
 * The functions of this page make no MPI call.
 * @threadsafe On distinct objects, and for concurrent queries of one network.
 * @{
 */

/** @brief A network (opaque): made by mpitopo_network_from_string(),
 * released by mpitopo_network_destroy(). */
typedef struct mpitopo_network mpitopo_network_t;

/** @brief The channel loads of a partial mapping (opaque), updated one
 * process at a time: made by mpitopo_network_load_create(), released by
 * mpitopo_network_load_destroy(). */
typedef struct mpitopo_network_load mpitopo_network_load_t;

/** @brief The network metrics of a mapping (see the topic's description). */
typedef struct mpitopo_network_metrics {
    double hop_bytes;       /**< sum of bytes * hops */
    double dilation;        /**< sum of hops over the communicating pairs */
    double max_congestion;  /**< MC: the largest load / capacity */
    double nzca;            /**< average congestion over the loaded channels */
    double nzcv;            /**< population variance of that congestion */
    double hybrid;          /**< the weighted sum of the four above */
    int64_t busy_channels;  /**< number of channels with a non-zero load */
} mpitopo_network_metrics_t;

/**
 * @brief A network from a description ("torus:4x4x4", "mesh:3x5",
 * "fattree:2;4,4;1,4;1,1", "ktree:4,3", "dragonfly:2,4,2", "hhc:6", "gpc",
 * each optionally followed by ":cap=X").
 * @param[in] desc the description (see the topic's description)
 * @param[out] network the new network, owned by the caller; NULL on error
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL pointers
 * @retval MPITOPO_ERR_PARSE a malformed description (the message names the
 *         parameter and its value)
 * @retval MPITOPO_ERR_RANGE a parameter out of range: a size < 1, more than
 *         2^31-1 nodes or switches, a capacity not positive and finite
 * @retval MPITOPO_ERR_NOMEM out of memory
 */
MPITOPO_API int mpitopo_network_from_string(const char *desc, mpitopo_network_t **network);

/**
 * @brief An InfiniBand fabric read from files: its topology as
 * ibnetdiscover prints it, its routes as the switches' linear forwarding
 * tables (LFTs). Also made by mpitopo_network_from_string() from
 * "fabric:TOPOLOGY,ROUTES".
 *
 * The topology file is the output of ibnetdiscover: "Switch N "id"" and
 * "Ca N "id"" records (ibsim's "Hca" too), each followed by its connected
 * ports "[p] "peer-id"[q]"; the node description is the quoted string
 * after '#' on the record's line (else the id), the LID of a switch its
 * "lid L" there, the LID of a CA port the "# lid L" of its port line, and
 * a link's width and speed ("4xSDR", "4xQDR", "4xEDR"...) the last words
 * of a port line's comment. Both ends of every link must list it. Routers
 * are refused. OpenSM's opensm-subnet.lst does as well (told apart by its
 * first character, '{'): one line per direction of every link, both ends'
 * "{ SW|CA Ports:.. NodeGUID:.. {description} LID:.. PN:.. }" and the
 * link's "PHY=4x ... SPD=2.5"; its nodes are named by their NodeGUID
 * ("0x0000000000200001") in messages.
 *
 * The routes file holds, for each switch, a table headed "Unicast lids
 * [...] of switch ... guid 0x... ...:" with lines "0xLID PORT ...":
 * OpenSM's opensm-lfts.dump, the output of ibroute for each switch
 * concatenated, or that of dump_fts. One reader takes the
 * three: a table's switch is the one whose GUID its header names; column
 * headings, "N lids dumped" lines and multicast tables are skipped.
 * Entries for LIDs that no CA port has (the switches' own) and entries to
 * port 255 (OpenSM's "no path") are ignored; with an LMC above 0 only the
 * base LID is routed.
 *
 * The end nodes are the connected CA ports, numbered by node description
 * in natural order ("node2" before "node10"), then by record and port:
 * with descriptions "HOST HCA-1", MPI node i (in host-name order) is end
 * node i. mpitopo_network_node_name() gives the node description; the MPI
 * layer matches an MPI processor name against its first word, the host
 * name (a fabric whose HCAs keep their vendor's description, such as
 * "MT25408 ConnectX Mellanox Technologies", needs its node descriptions
 * set to the host names first). Every cable is two channels named "FROM/pP->TO/pQ" (a switch by
 * its description, an end node by its host name; P and Q the ports at
 * either end), of capacity the link's data rate in Gb/s: width times 2
 * (SDR), 4 (DDR), 8 (QDR), 10 (FDR10), 13.64 (FDR), 25 (EDR), 50 (HDR),
 * 100 (NDR) or 200 (XDR) per lane; 8 (4xSDR) where neither end says.
 *
 * One group level (mpitopo_network_group()), "switch": the end nodes on
 * one switch, labelled by the first of them; none when all end nodes share
 * one switch or none shares one.
 *
 * A route leaves its source over the CA port's link, then follows each
 * switch's table entry for the destination's LID. Every route is walked
 * once at import (O(switches x end nodes)); the tables are kept as read,
 * one byte per switch and end node, and a route is walked on demand.
 * @param[in] topology the topology file's name (ibnetdiscover's output or
 *            opensm-subnet.lst)
 * @param[in] routes the routes file's name
 * @param[out] network the new network, owned by the caller; NULL on error
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL pointers
 * @retval MPITOPO_ERR_IO a file that cannot be opened or read
 * @retval MPITOPO_ERR_FORMAT a malformed file, the message naming the file
 *         and line: a truncated or unrecognised line, a port beyond its
 *         node's ports, a link to a node with no record or not listed back,
 *         duplicate node names, GUIDs or LIDs, a table of an unknown switch,
 *         an entry to an unconnected port, a route that loops, dead-ends (no
 *         entry for the destination, or no table for a switch on the way)
 *         or reaches another end node
 * @retval MPITOPO_ERR_RANGE a file larger than 1 GiB
 * @retval MPITOPO_ERR_NOMEM out of memory
 */
MPITOPO_API int mpitopo_network_from_fabric(const char *topology, const char *routes,
                                            mpitopo_network_t **network);

/**
 * @brief Release a network and set the handle to NULL.
 * @param[in,out] network the handle; NULL, or a handle to NULL, is accepted
 */
MPITOPO_API void mpitopo_network_destroy(mpitopo_network_t **network);

/**
 * @brief The sizes of a network.
 * @param[in] network the network
 * @param[out] nnodes its number of end nodes (or NULL)
 * @param[out] nchannels its number of directed channels (or NULL)
 * @param[out] max_route the length of its longest route, in channels (or NULL)
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL network
 */
MPITOPO_API int mpitopo_network_size(const mpitopo_network_t *network, int *nnodes,
                                     int64_t *nchannels, int *max_route);

/**
 * @brief The route from end node src to end node dst, in O(its length).
 * @param[in] network the network
 * @param[in] src the source node, in [0, nnodes)
 * @param[in] dst the destination node, in [0, nnodes)
 * @param[in] maxlen room in channels, at least the route's length (the
 *            max_route of mpitopo_network_size() always suffices)
 * @param[out] channels the channels crossed, in order (none when src = dst)
 * @param[out] len the number of channels written
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL pointers
 * @retval MPITOPO_ERR_RANGE a node out of range, maxlen too small
 */
MPITOPO_API int mpitopo_network_route(const mpitopo_network_t *network, int src, int dst,
                                      int maxlen, int64_t *channels, int *len);

/**
 * @brief The capacity and name of a channel ("n5->n6 d0+" in a torus or
 * mesh; "n5->s1.0", "s2.3->s1.7#1" in a fat tree, where s2.3 is switch 3
 * of level 2 and #1 the parallel link; "r0.1->r2.0 global" in a dragonfly,
 * where r0.1 is router 1 of group 0).
 * @param[in] network the network
 * @param[in] channel the channel, in [0, nchannels)
 * @param[out] capacity its capacity (or NULL)
 * @param[out] name its name, truncated to size bytes with the terminating
 *             NUL (or NULL)
 * @param[in] size room in name
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL network
 * @retval MPITOPO_ERR_RANGE channel out of range
 */
MPITOPO_API int mpitopo_network_channel(const mpitopo_network_t *network, int64_t channel,
                                        double *capacity, char *name, size_t size);

/**
 * @brief The name of an end node: "n5" in the described networks, the
 * node ID in an HHC, the node description (host name) in a fabric read
 * from files.
 * @param[in] network the network
 * @param[in] node the end node, in [0, nnodes)
 * @param[out] name the name, truncated to size bytes with the terminating NUL
 * @param[in] size room in name
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL pointers
 * @retval MPITOPO_ERR_RANGE node out of range
 */
MPITOPO_API int mpitopo_network_node_name(const mpitopo_network_t *network, int node, char *name,
                                          size_t size);

/**
 * @brief The number of group levels of a network: the sets of end nodes
 * that share switches, nested as a tree (see mpitopo_network_group()).
 * @param[in] network the network
 * @param[out] nlevels the number of group levels, 0 for a torus or a mesh
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL pointers
 */
MPITOPO_API int mpitopo_network_group_levels(const mpitopo_network_t *network, int *nlevels);

/**
 * @brief The group of an end node at a group level, and the level's name.
 *
 * Group levels, top-down, are those where end nodes share switches:
 *  - a fat tree: the subtrees of its switch levels, from the highest that
 *    does not hold every node down to the leaf switches; level l of the
 *    tree is named "switchL" ("switch" for the leaf switches) and holds the
 *    nodes d with equal d / (m1*..*ml);
 *  - a dragonfly: "group" (P*A nodes) and "router" (P nodes);
 *  - an HHC: "hhcJ" for J = L-1 down to 1, the nodes below one centre of
 *    level J (an "hhc1" is a 3-HHC); a centre of a higher level is a group
 *    of its own;
 *  - a fabric read from files: see its description;
 *  - a torus or a mesh: none.
 * These levels are what mpitopo_network_machine() puts above a machine's
 * nodes, so every mapper that reads a machine sees the switches.
 * @param[in] network the network
 * @param[in] level the group level, in [0, nlevels)
 * @param[in] node the end node, in [0, nnodes)
 * @param[out] group its group at that level: a label, the same for the
 *             nodes of one group and different for those of two, growing
 *             with the nodes (consecutive nodes d / size in a fat tree and
 *             a dragonfly; the first node of the group in an HHC)
 * @param[out] name the level's name, owned by the library (or NULL)
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL network or group
 * @retval MPITOPO_ERR_RANGE level or node out of range
 */
MPITOPO_API int mpitopo_network_group(const mpitopo_network_t *network, int level, int node,
                                      int64_t *group, const char **name);

/**
 * @brief A machine whose levels above the nodes are the network's group
 * levels: node u of machine sits on end node end_node[u].
 *
 * The levels of machine from "node" down are kept (names and, unless the
 * machine has the default costs, costs: a group level then costs the node
 * level's cost plus its distance to the node level); the levels above
 * "node" are replaced. A machine without a "node" level is one node.
 * @param[in] network the network
 * @param[in] machine the machine
 * @param[in] end_node the end node of every node of machine (distinct, in
 *            [0, nnodes)), or NULL for node u on end node u
 * @param[out] out the new machine, owned by the caller; NULL on error
 * @param[out] leaf_map the new leaf of every leaf of machine (or NULL): the
 *             leaves are renumbered when end_node does not keep the nodes
 *             in order
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL pointers; two nodes on one end node (the
 *         message names both)
 * @retval MPITOPO_ERR_RANGE more nodes than end nodes, an end node out of
 *         range, more levels than #MPITOPO_MAX_LEVELS
 * @retval MPITOPO_ERR_NOMEM out of memory
 */
MPITOPO_API int mpitopo_network_machine(const mpitopo_network_t *network,
                                        const mpitopo_machine_t *machine, const int *end_node,
                                        mpitopo_machine_t **out, int *leaf_map);

/**
 * @brief An empty load structure: no process placed, every channel at 0.
 *
 * It keeps the pattern's in-edges (O(nprocs + edges)) and one load per
 * channel; the network and the pattern must outlive it.
 * @param[in] network the network
 * @param[in] pattern the pattern; its byte weights are the traffic
 * @param[out] load the new structure, owned by the caller; NULL on error
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL pointers
 * @retval MPITOPO_ERR_NOMEM out of memory
 */
MPITOPO_API int mpitopo_network_load_create(const mpitopo_network_t *network,
                                            const mpitopo_pattern_t *pattern,
                                            mpitopo_network_load_t **load);

/**
 * @brief Place a process on an end node, adding its traffic with every
 * process already placed: O(its edges * route length).
 * @param[in,out] load the load structure
 * @param[in] proc the process, in [0, nprocs), not placed
 * @param[in] node its end node, in [0, nnodes)
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL load, proc already placed
 * @retval MPITOPO_ERR_RANGE proc or node out of range
 */
MPITOPO_API int mpitopo_network_load_place(mpitopo_network_load_t *load, int proc, int node);

/**
 * @brief Remove a placed process and its traffic: O(its edges * route length).
 * @param[in,out] load the load structure
 * @param[in] proc the process, placed
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL load, proc not placed
 * @retval MPITOPO_ERR_RANGE proc out of range
 */
MPITOPO_API int mpitopo_network_load_unplace(mpitopo_network_load_t *load, int proc);

/**
 * @brief The load (bytes) of one channel.
 * @param[in] load the load structure
 * @param[in] channel the channel, in [0, nchannels)
 * @param[out] bytes its load
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL pointers
 * @retval MPITOPO_ERR_RANGE channel out of range
 */
MPITOPO_API int mpitopo_network_load_channel(const mpitopo_network_load_t *load, int64_t channel,
                                             double *bytes);

/**
 * @brief The metrics of the processes placed so far, in O(nchannels).
 * @param[in] load the load structure
 * @param[in] weights the 4 weights of the hybrid metric, or NULL for (1,1,1,1)
 * @param[in] reference the metrics that normalise the hybrid metric, or NULL
 *            for none
 * @param[out] metrics the metrics
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL load or metrics, a weight not finite
 */
MPITOPO_API int mpitopo_network_load_metrics(const mpitopo_network_load_t *load,
                                             const double *weights,
                                             const mpitopo_network_metrics_t *reference,
                                             mpitopo_network_metrics_t *metrics);

/**
 * @brief The most congested channels, most congested first (ties by
 * channel number); only channels with a non-zero load.
 * @param[in] load the load structure
 * @param[in] k the most channels wanted, >= 0
 * @param[out] channels room for k channels
 * @param[out] congestion room for k congestions (or NULL)
 * @param[out] count the number written, <= k
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL pointers, k < 0
 * @retval MPITOPO_ERR_NOMEM out of memory
 */
MPITOPO_API int mpitopo_network_load_top(const mpitopo_network_load_t *load, int k,
                                         int64_t *channels, double *congestion, int *count);

/**
 * @brief Release a load structure and set the handle to NULL.
 * @param[in,out] load the handle; NULL, or a handle to NULL, is accepted
 */
MPITOPO_API void mpitopo_network_load_destroy(mpitopo_network_load_t **load);

/**
 * @brief The metrics of a whole mapping: every process placed on
 * mapping[proc], in O(edges * route length + nchannels).
 * @param[in] network the network
 * @param[in] pattern the pattern; its byte weights are the traffic
 * @param[in] mapping nprocs end nodes, in [0, nnodes)
 * @param[in] weights the 4 weights of the hybrid metric, or NULL for (1,1,1,1)
 * @param[in] reference the metrics that normalise the hybrid metric, or NULL
 * @param[out] metrics the metrics
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL pointers, a weight not finite
 * @retval MPITOPO_ERR_RANGE a node out of range (the message names the process)
 * @retval MPITOPO_ERR_NOMEM out of memory
 */
MPITOPO_API int mpitopo_network_evaluate(const mpitopo_network_t *network,
                                         const mpitopo_pattern_t *pattern, const int *mapping,
                                         const double *weights,
                                         const mpitopo_network_metrics_t *reference,
                                         mpitopo_network_metrics_t *metrics);

/** @brief True lower bounds on the metrics of every mapping (see
 * mpitopo_network_bound()). */
typedef struct mpitopo_network_bound {
    int found;             /**< 0: no bound known for this pattern (not Cartesian), the rest 0 */
    double max_congestion; /**< no mapping has a lower MC: max(injection, group) */
    double hop_bytes;      /**< nor fewer hop-bytes */
    double injection;      /**< the MC bound of the nodes' own links */
    double group;          /**< the best MC bound of a group level (0 if none) */
    int group_level;       /**< that group level (as mpitopo_network_group()), -1 if none */
} mpitopo_network_bound_t;

/**
 * @brief True lower bounds on the max congestion (MC) and the hop-bytes
 * that any mapping of a pattern onto the nodes of a machine reaches, the
 * machine's node u sitting on end node end_node[u] (the metrics of
 * mpitopo_network_evaluate(), bytes as traffic, the network's routes).
 *
 * For a set A of the job's end nodes, its bytes to the other nodes cross a
 * cut of channels taken from the routes themselves (for one node, its own
 * links; for a switch subtree, the uplinks its routes use), so MC is at
 * least the least traffic A can send (or receive) divided by the cut's
 * capacity. The least traffic of a set of s processes is the grid's
 * edge-isoperimetric bound (unit steps of the stencil only, so weaker on
 * stencils with diagonal steps), or for groups that talk all-to-all
 * (mpitopo_pattern_subcomm_alltoall()) w * r * (G - r), r = s mod G, if
 * higher; it is known only for Cartesian patterns (mpitopo_pattern_cart()):
 * for the others found = 0 and every bound is 0.
 * The sets are the nodes (injection) and the job's nodes in each group of
 * every group level (mpitopo_network_group()): a partly used switch counts
 * only its job's nodes. When every leaf of the machine holds a process each
 * set's size is known and the largest ratio is the bound; with fewer
 * processes than leaves the occupancy is the mapping's choice and only the
 * summed traffic over a level's sets, at the least per-process rate, is
 * claimed. Hop-bytes: the traffic surely crossing each level times the
 * shortest route that crosses it, level over level. src/metrics/net_bound.c
 * proves both.
 * Time O(levels * nodes^2 * route length), memory O(nodes + channels).
 * @param[in] network the network
 * @param[in] machine the machine: the processes go on its leaves, at most
 *            one per leaf
 * @param[in] end_node the distinct end node of every node of machine, or
 *            NULL for node u on end node u
 * @param[in] pattern the pattern, nprocs <= the machine's leaves
 * @param[out] bound the bounds
 * @retval MPITOPO_SUCCESS on success (also when found = 0)
 * @retval MPITOPO_ERR_ARG NULL pointers, more processes than leaves
 * @retval MPITOPO_ERR_RANGE an end node out of range, more nodes than end
 *         nodes
 * @retval MPITOPO_ERR_NOMEM out of memory
 */
MPITOPO_API int mpitopo_network_bound(const mpitopo_network_t *network,
                                      const mpitopo_machine_t *machine, const int *end_node,
                                      const mpitopo_pattern_t *pattern,
                                      mpitopo_network_bound_t *bound);

/** @} */

#ifdef __cplusplus
}
#endif

#endif /* MPITOPO_NETWORK_H */
