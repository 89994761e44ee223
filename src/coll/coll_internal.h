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

/* One point-to-point message of a schedule. */
typedef struct mpitopo__op {
    void *buf;
    int count;
    MPI_Datatype type;
    int peer; /* rank in the private communicator (same as in comm) */
    int tag;
    int is_send;
} mpitopo__op_t;

/*
 * A schedule in flight: ops[round_start[r] .. round_start[r+1]) form round r.
 * Built by an algorithm (linear.c today), run by request.c.
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
};

/* A request for nrounds rounds of nops messages in all; the caller fills
 * ops and round_start, then calls mpitopo__request_start. Takes a reference
 * to nbr. NULL when out of memory. */
mpitopo_request_t mpitopo__request_new(mpitopo__nbr_t *nbr, int nops, int nrounds);

/* Post the first round if the private communicator is ready; else keep
 * duplicates of the derived datatypes so the caller may free its own. */
int mpitopo__request_start(mpitopo_request_t req);

/* mpitopo_wait, with errors naming func. */
int mpitopo__request_wait(mpitopo_request_t *request, const char *func);

/* Release a request (in-flight MPI requests are freed, left to MPI). */
void mpitopo__request_release(mpitopo_request_t req);

#endif
