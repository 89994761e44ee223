/* Shared by the files of src/coll: the neighbour-list cache of a topology
 * communicator, and the schedule engine behind mpitopo_request_t. */
#ifndef MPITOPO_COLL_INTERNAL_H
#define MPITOPO_COLL_INTERNAL_H

#include "mpi/mpi_internal.h"
#include <mpitopo/coll.h>

/*
 * What the cache keeps for one topology communicator. Reference counted:
 * the attribute holds one reference, every request in flight another, so a
 * communicator freed while a nonblocking call is pending keeps its private
 * duplicate until the call completes.
 */
typedef struct mpitopo__nbr {
    struct mpitopo__nbr *prev, *next; /* list of cached entries, for MPI_Finalize */
    MPI_Comm user_comm;               /* the communicator the attribute sits on */
    int refs;                         /* under the cache lock */
    int kind;                         /* MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH */
    int indegree, outdegree;
    int *sources;                     /* indegree entries (MPI_PROC_NULL kept) */
    int *destinations;                /* outdegree entries; may alias sources */
    MPI_Comm comm;                    /* private duplicate; MPI_COMM_NULL until made */
    MPI_Request dup_request;          /* pending MPI_Comm_idup, else MPI_REQUEST_NULL */
    /* Requests started while the private communicator was being made, in
     * start order: their first rounds are posted in that order once it is
     * ready, so every process posts the messages of concurrent operations
     * in the same order (what message matching relies on). */
    struct mpitopo_request *queue_head, *queue_tail;
} mpitopo__nbr_t;

/*
 * The cached lists of comm, computed on the first call. Local. Checks comm
 * (MPI initialized, intracommunicator, has a topology: MPI_ERR_TOPOLOGY with
 * a message naming `func` otherwise). The pointer stays valid while comm
 * lives; take a reference to keep it longer.
 */
int mpitopo__nbr_get(MPI_Comm comm, const char *func, mpitopo__nbr_t **nbr);

void mpitopo__nbr_ref(mpitopo__nbr_t *nbr);
void mpitopo__nbr_unref(mpitopo__nbr_t *nbr);

/*
 * Make sure the private communicator exists or is being made. blocking:
 * MPI_Comm_dup (or complete a pending idup); else MPI_Comm_idup when none
 * exists yet. Collective over comm on the first call. Returns MPI codes.
 */
int mpitopo__nbr_private_comm(mpitopo__nbr_t *nbr, int blocking);

/* Whether the private communicator is ready; tests a pending idup. */
int mpitopo__nbr_private_ready(mpitopo__nbr_t *nbr, int *ready);

/*
 * Tags on the private communicator. Cartesian: block k (0..2*ndims-1) is
 * sent with tag k and received, from the neighbour that sent it towards
 * us, with tag k^1; so when the -1 and +1 neighbours are one process
 * (periodic dimension of size 1 or 2) the blocks still land by direction.
 * Graph and dist-graph: tag 0 everywhere; duplicate edges match in posting
 * order (MPI's non-overtaking rule), as MPI's own collectives do.
 */
int mpitopo__nbr_send_tag(const mpitopo__nbr_t *nbr, int k);
int mpitopo__nbr_recv_tag(const mpitopo__nbr_t *nbr, int k);

/* Tag of mpitopo_cart_shift_xchg: above the Cartesian tags (at most
 * 2 * 16383 - 1) and within the smallest MPI_TAG_UB MPI allows. */
#define MPITOPO__TAG_SHIFT 32767

/* What a step of a schedule does. */
enum { MPITOPO__OP_RECV = 0, MPITOPO__OP_SEND = 1, MPITOPO__OP_PACK, MPITOPO__OP_UNPACK };

/*
 * One step of a schedule: a point-to-point message, or a local copy
 * between a user buffer (buf, count, type) and the request's temporary
 * buffer (MPI_Pack into / MPI_Unpack from tmp + tmp_off, tmp_bytes long).
 * A message with in_tmp set uses tmp + tmp_off (count bytes of MPI_PACKED
 * or MPI_BYTE, say) instead of buf: how a combining schedule receives data
 * it forwards in a later round.
 */
typedef struct mpitopo__op {
    void *buf;
    int count;
    MPI_Datatype type;
    int peer; /* rank in the private communicator (same as in comm) */
    int tag;
    int kind; /* MPITOPO__OP_* */
    int in_tmp;
    MPI_Aint tmp_off;
    int tmp_bytes;
} mpitopo__op_t;

/*
 * A schedule: ops[round_start[r] .. round_start[r+1]) form round r. When a
 * round is posted, its copies run first, in order (so they may unpack what
 * earlier rounds received and pack what this round sends), then its
 * messages are posted; round r+1 is posted once every message of round r
 * has completed. A multi-round schedule whose later rounds send messages
 * must give them tags that no other round or concurrent operation uses
 * between the same processes (a round-tagged protocol): a later round is
 * posted at a different time on each process. Built by an algorithm
 * (linear.c today), run by request.c.
 */
struct mpitopo_request {
    mpitopo__nbr_t *nbr; /* one reference held */
    mpitopo__op_t *ops;
    int nops;
    int *round_start;    /* nrounds + 1 entries */
    int nrounds;
    int round;           /* the round being run, nrounds when done */
    int posted;          /* 1 when round `round` has been posted */
    MPI_Request *reqs;   /* one per op of the largest round */
    MPI_Status *statuses;
    MPI_Datatype *owned; /* duplicates of derived datatypes (deferred posting) */
    int nowned;
    char *tmp;           /* temporary buffer of the copy steps, tmp_size bytes */
    size_t tmp_size;
    int persistent;      /* made by an _init call: inactive between runs */
    int active;          /* started and not yet completed */
    int error;           /* error of a deferred first round */
    int queued;          /* waiting in nbr's queue for the private communicator */
    struct mpitopo_request *next_queued;
};

/* A request for nrounds rounds of nops messages in all; the caller fills
 * ops and round_start, then calls mpitopo__request_start. Takes a reference
 * to nbr. NULL when out of memory. */
mpitopo_request_t mpitopo__request_new(mpitopo__nbr_t *nbr, int nops, int nrounds);

/* Give req a temporary buffer of `bytes` bytes (freed with it). */
int mpitopo__request_alloc_tmp(mpitopo_request_t req, size_t bytes);

/* Keep duplicates of the derived datatypes of req's steps, so the caller
 * may free its own (once per request). */
int mpitopo__request_own_datatypes(mpitopo_request_t req);

/* Start req: post the first round if the private communicator is ready;
 * else queue it (and own its datatypes). */
int mpitopo__request_start(mpitopo_request_t req);

/* mpitopo_wait, with errors naming func. */
int mpitopo__request_wait(mpitopo_request_t *request, const char *func);

/* Release a request (in-flight MPI requests are freed, left to MPI). */
void mpitopo__request_release(mpitopo_request_t req);

#endif
