/* The HHC object, shared by src/hhc/hhc.c (creation, table, queries),
 * hhc_route.c (routed messages) and hhc_coll.c (collectives). */
#ifndef MPITOPO_HHC_INTERNAL_H
#define MPITOPO_HHC_INTERNAL_H

#include "mpi/mpi_internal.h"
#include <mpitopo/hhc.h>

/* A routed message that reached its destination, waiting for its recv. */
typedef struct hhc_msg {
    struct hhc_msg *next;
    int src, tag, nbytes; /* src: the source's node */
    char *data;           /* nbytes packed bytes */
} hhc_msg_t;

/* A nonblocking routed send or receive (mpitopo_hhc_isend, _irecv). */
struct mpitopo_hhc_request {
    mpitopo_hhc_t *h;                 /* NULL once the HHC was freed under it */
    int dim;                          /* the HHC's, for the source's ID */
    struct mpitopo_hhc_request *next; /* the posted receives, in posting order */
    int is_recv, done, error;         /* error: an mpitopo or MPI code */
    void *buf;                        /* receive: the user's buffer */
    int count, room;                  /* room: packed bytes count elements take */
    MPI_Datatype type;                /* receive: the user's type or a duplicate */
    int owned_type;                   /* type is a duplicate, freed with the request */
    int src, tag;                     /* receive: node wanted (-1 any), tag (or MPI_ANY_TAG) */
    int from, tag_out, nbytes;        /* completed receive: source node, tag, packed bytes */
};

/* A hop on its way (an Isend of buf); owner: the isend request it
 * completes, NULL for a forwarded hop or a blocking send. */
typedef struct hhc_hop {
    struct hhc_hop *next;
    MPI_Request req;
    char *buf;
    struct mpitopo_hhc_request *owner;
} hhc_hop_t;

struct mpitopo_hhc {
    int dim, nnodes, comm_size;
    int gather_cubes;        /* info mpitopo_hhc_gather = cubes: every cube gathers over fcube */
    int node;                /* this process's end node: its rank in tree */
    int level, centre, position; /* centre -1, position -1 for the top centre */
    MPI_Comm tree, cube;     /* the user's: the topology communicators */
    MPI_Comm ftree, fcube;   /* duplicates: routed hops and the collectives */
    int *node_of_rank;       /* comm's size: node or MPI_UNDEFINED */
    int *rank_of_node;       /* nnodes: rank in comm */
    int *block_of_node;      /* nnodes: the node's block in gather (comm's order) */
    hhc_msg_t *arrived, *arrived_tail;
    hhc_hop_t *hops;
    struct mpitopo_hhc_request *posted, *posted_tail; /* receives not matched yet */
    long long hops_sent, hops_received; /* for the fence's count */
};

/* The node of an ID, or an MPITOPO_ERR_ARG naming func and name. */
int mpitopo__hhc_check_id(const mpitopo_hhc_t *h, const char *func, const char *name, long long id,
                          int *node);
/* The communicator (MPITOPO_HHC_TREE or _CUBE) and rank of the hop a -> b
 * between neighbours. */
void mpitopo__hhc_hop(int dim, int a, int b, int *which, int *rank);
/* Complete the routed messages (mpitopo_hhc_fence), reporting as func. */
int mpitopo__hhc_fence(mpitopo_hhc_t *h, const char *func);
/* Free the queues of routed messages (nothing in flight). */
void mpitopo__hhc_route_release(mpitopo_hhc_t *h);

/* The broadcast from the node root (hhc_coll.c). */
int mpitopo__hhc_bcast_node(void *buf, int count, MPI_Datatype type, int root, mpitopo_hhc_t *h);

#endif
