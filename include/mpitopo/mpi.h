#ifndef MPITOPO_MPI_H
#define MPITOPO_MPI_H
#ifndef MPITOPO_INSIDE_H_
#error Please include <mpitopo.h> instead of <mpitopo/mpi.h>
#endif

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Node information of a communicator, computed once and cached on it through
 * an attribute (copied by reference on MPI_Comm_dup, released when the
 * communicator is freed, and at MPI_Finalize at the latest).
 *
 * Nodes are what MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) reports, unless
 * MPITOPO_EMULATE is set: then MPI_COMM_WORLD is placed on the emulated
 * machine it describes (see mpitopo_emulation below) and nodes are those.
 */
typedef struct mpitopo_nodeinfo {
    MPI_Comm node_comm;   /* the processes of comm on my node; owned by the cache */
    MPI_Comm leader_comm; /* one process per node (local rank 0); MPI_COMM_NULL elsewhere */
    int node;             /* my node, 0..nnodes-1, numbered by lowest rank in comm */
    int nnodes;
    int local_rank;       /* my rank in node_comm */
    int local_size;       /* size of node_comm */
    int min_local_size;   /* smallest and largest node of comm */
    int max_local_size;
    int emulated;         /* 1 when the nodes come from MPITOPO_EMULATE */
} mpitopo_nodeinfo_t;

/*
 * Get (computing it the first time, collectively over comm) the node
 * information of comm. *info points into the cache and stays valid while
 * comm lives. Collective over comm on the first call for comm (and for its
 * duplicates, which share the cache); local afterwards. comm must be an
 * intracommunicator. MPI error codes pass through.
 */
int mpitopo_comm_nodeinfo(MPI_Comm comm, const mpitopo_nodeinfo_t **info);

/*
 * The machine the processes of comm run on, with one leaf per process:
 * network levels from MPITOPO_NETWORK (e.g. "switch:8": consecutive nodes
 * grouped 8 by 8), then "node", then the levels inside a node (from the
 * emulated description, or from hwloc for bound processes: "socket" and
 * "core"; a flat "core" level for unbound ones). leaf_of_rank (comm size
 * ints, caller-allocated) receives the leaf of every rank of comm.
 * Collective over comm; O(size) memory on every rank. The caller destroys
 * the machine.
 */
int mpitopo_comm_machine(MPI_Comm comm, mpitopo_machine_t **machine, int *leaf_of_rank);

/*
 * Emulation, read once from the environment:
 *   MPITOPO_EMULATE="node:4 core:4"   any description with a "node" level
 *                                     (e.g. "switch:2 node:4 socket:2 core:2");
 *                                     it must have at least as many leaves
 *                                     as MPI_COMM_WORLD has processes.
 *   MPITOPO_EMULATE_PLACEMENT=block|rr|random:SEED   how world ranks are
 *                                     placed on its leaves (default block).
 * Returns the emulated machine (owned by the library; NULL when emulation is
 * off) and, for world rank `world_rank`, its leaf. Local: no communication.
 */
int mpitopo_emulation(int world_rank, int world_size, const mpitopo_machine_t **machine,
                      int *leaf);

#ifdef __cplusplus
}
#endif
#endif /* MPITOPO_MPI_H */
