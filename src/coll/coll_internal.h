/* Shared by the files of src/coll: the neighbour-list cache of a topology
 * communicator, and the schedule engine behind mpitopo_request_t. */
#ifndef MPITOPO_COLL_INTERNAL_H
#define MPITOPO_COLL_INTERNAL_H

#include "mpi/mpi_internal.h"
#include <mpitopo/coll.h>

#include <stdint.h>

/*
 * What the cache keeps for one topology communicator. Reference counted:
 * the attribute holds one reference, every request in flight another, so a
 * communicator freed while a nonblocking call is pending keeps its private
 * duplicate until the call completes.
 */
struct mpitopo__comb;
struct mpitopo__stencil;
struct mpitopo__node;
struct mpitopo__cache;
struct mpitopo__centry;
struct mpitopo__tune;
struct side;

/* Schedules a neighbourhood operation can run on (MPITOPO_NEIGHBOR). */
typedef enum {
    MPITOPO__SCHED_AUTO = 0,
    MPITOPO__SCHED_LINEAR,
    MPITOPO__SCHED_COMBINE,
    MPITOPO__SCHED_CART,
    MPITOPO__SCHED_NODE,
    MPITOPO__SCHED_MPI,         /* the host MPI's own PMPI_(I)neighbor_* */
    MPITOPO__SCHED_UNSET = -1,  /* no choice given at this level */
    MPITOPO__SCHED_INVALID = -2 /* a value that is not a schedule name */
} mpitopo__sched_t;

/* The five operations, for the schedule choice and its log lines. */
typedef enum {
    MPITOPO__OPK_ALLGATHER = 0,
    MPITOPO__OPK_ALLGATHERV,
    MPITOPO__OPK_ALLTOALL,
    MPITOPO__OPK_ALLTOALLV,
    MPITOPO__OPK_ALLTOALLW,
    MPITOPO__OPK_COUNT
} mpitopo__opkind_t;

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
    /* Read from the communicator's info at cache time (MPITOPO__SCHED_UNSET
     * and -1 when absent): key "mpitopo_neighbor" and
     * "mpitopo_combine_threshold". */
    int info_sched;
    int info_threshold;
    char info_sched_text[64];     /* the values as given, for messages */
    char info_threshold_text[64];
    struct mpitopo__comb *comb; /* combining pattern, made on first use */
    struct mpitopo__stencil *stencil; /* grid and stencil of a communicator made by
                                         mpitopo_cart_stencil_create, else NULL */
    struct mpitopo__node *node; /* node-aware aggregation plan, made on first use */
    /* Whether every process passes the same block sizes: 1 yes, -1 no, as
     * mpitopo__sched_agree found for the schedule choice of the _init call
     * that follows it; 0 (unknown) otherwise. mpitopo__sched_choose
     * clears it. */
    int sizes_agreed;
    unsigned logged;            /* (operation kind, schedule) pairs logged */
    long long sends;            /* messages sent by schedules (diagnostics) */
    int next_tag;               /* tag allocator of multi-round schedules */
    /* What the last mpitopo__nbr_tags call gave, and how many calls were
     * made: a cached schedule takes new tags of the same span each run. */
    int tag_calls, last_tag_base, last_tag_span;
    int freed;                  /* the user freed comm (user_comm is gone) */
    struct mpitopo__cache *cache; /* schedules of earlier calls (cache.c) */
    struct mpitopo__tune *tune;   /* measured decisions of auto (tune.c) */
    /* The layer above the engine that made the entry; NULL for the global
     * collectives' own entries (gcoll_order.c). */
    const struct mpitopo__nbr_layer *layer;
} mpitopo__nbr_t;

/*
 * What the layer above the engine keeps for a communicator's entry (the
 * schedules' state, the info keys, the tuner's decisions: coll/neighbor/
 * entry.c): init runs once when the lists are computed, before the entry
 * is shared (an error drops the entry); release when the entry is freed,
 * also after a failed init. The engine calls them and imports nothing above
 * it.
 */
typedef struct mpitopo__nbr_layer {
    int (*init)(mpitopo__nbr_t *n, MPI_Comm comm, const char *func);
    void (*release)(mpitopo__nbr_t *n);
} mpitopo__nbr_layer_t;

/*
 * The cached lists of comm, computed on the first call (engine/neighbors.c),
 * with layer's state. Local. Checks comm (MPI initialized,
 * intracommunicator, has a topology: MPI_ERR_TOPOLOGY with a message naming
 * `func` otherwise). The pointer stays valid while comm lives; take a
 * reference to keep it longer.
 */
int mpitopo__nbr_lists(MPI_Comm comm, const mpitopo__nbr_layer_t *layer, const char *func,
                       mpitopo__nbr_t **nbr);
/* The entry cached on comm, or NULL (no lookup error is reported). Local. */
mpitopo__nbr_t *mpitopo__nbr_cached(MPI_Comm comm);

/* mpitopo__nbr_lists with the neighbourhood collectives' layer
 * (coll/neighbor/entry.c): what every neighbourhood call uses. */
int mpitopo__nbr_get(MPI_Comm comm, const char *func, mpitopo__nbr_t **nbr);

void mpitopo__nbr_ref(mpitopo__nbr_t *nbr);
void mpitopo__nbr_unref(mpitopo__nbr_t *nbr);

/*
 * Make sure the private communicator exists or is being made. blocking:
 * MPI_Comm_dup (or complete a pending idup); else MPI_Comm_idup when none
 * exists yet. Collective over comm on the first call. Returns MPI codes.
 */
int mpitopo__nbr_private_comm(mpitopo__nbr_t *nbr, int blocking);

/* From the delete callback of nbr's user communicator: complete a pending
 * idup of the private one where MPI needs it (Open MPI). */
void mpitopo__nbr_parent_going(mpitopo__nbr_t *nbr);

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

/*
 * Tags for one operation of a multi-round schedule (a round-tagged
 * protocol): span consecutive tags, from *base, that no other operation
 * started within the next few thousand on comm uses. Every process runs
 * the same operations on comm in the same order with the same schedule, so
 * every process gets the same base. Above the linear schedule's tags
 * (0, or the Cartesian 0..2*ndims-1) and below MPITOPO__TAG_SHIFT.
 * MPITOPO_ERR_UNSUPPORTED when span does not fit.
 */
int mpitopo__nbr_tags(mpitopo__nbr_t *n, int span, int *base, const char *func);

/* Tag of mpitopo_cart_shift_xchg: above the Cartesian tags (at most
 * 2 * 16383 - 1) and within the smallest MPI_TAG_UB MPI allows. */
#define MPITOPO__TAG_SHIFT 32767

/* What a step of a schedule does. */
enum {
    MPITOPO__OP_RECV = 0,
    MPITOPO__OP_SEND = 1,
    MPITOPO__OP_PACK,
    MPITOPO__OP_UNPACK,
    MPITOPO__OP_MOVE, /* memmove tmp_bytes from tmp + src_off to tmp + tmp_off */
    MPITOPO__OP_RECV_ANY, /* a message of unknown size into a growable buffer */
    MPITOPO__OP_CALL,     /* a runtime step: call(req, arg) */
    MPITOPO__OP_HOST      /* the host MPI's nonblocking operation (host.c) */
};

struct mpitopo_request;

/* A runtime step of a schedule builder: runs in order with the copies of
 * its round, may read what earlier rounds received (growable buffers),
 * grow buffers and set the fields of later steps (count, tmp_off, buf_id
 * of sends and unpacks). Reads its state from req->ctx. Returns an
 * MPITOPO code (made with MPITOPO_FAIL). */
typedef int (*mpitopo__call_t)(struct mpitopo_request *req, int arg);

/*
 * One step of a schedule: a point-to-point message, or a local copy
 * between a user buffer (buf, count, type) and the request's temporary
 * buffer (MPI_Pack into / MPI_Unpack from tmp + tmp_off, tmp_bytes long).
 * A message with in_tmp set uses tmp + tmp_off (count bytes of MPI_PACKED
 * or MPI_BYTE, say) instead of buf: how a combining schedule receives data
 * it forwards in a later round.
 *
 * buf_id other than 0 replaces tmp by growable buffer buf_id of the
 * request (mpitopo__request_bufs) in all of the above (MOVE: both ends).
 * MPITOPO__OP_RECV_ANY receives, from peer with tag, a message of any
 * size (MPI_BYTE) into the whole of growable buffer buf_id: when its round
 * is posted and progressed the engine matches it with MPI_Improbe
 * (MPI_Mprobe when blocking), grows the buffer to the size MPI_Get_count
 * gives, records that size (mpitopo__request_buf) and receives with
 * MPI_Imrecv. MPITOPO__OP_CALL runs call(req, arg) as a copy step.
 * New kinds take type MPI_BYTE (never duplicated).
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
    MPI_Aint src_off; /* MPITOPO__OP_MOVE only */
    int buf_id;       /* 0: tmp; k > 0: growable buffer k */
    int waiting;      /* MPITOPO__OP_RECV_ANY: posted, not matched yet */
    int side;         /* buf is in the user's send (1) or receive (2) buffer, else 0 */
    MPI_Aint boff;    /* and lies boff bytes from that buffer's start */
    mpitopo__call_t call; /* MPITOPO__OP_CALL */
    int arg;              /* MPITOPO__OP_CALL */
} mpitopo__op_t;

/* A growable buffer of a request: kept across persistent runs. */
typedef struct mpitopo__rbuf {
    char *p;    /* never NULL once reserved */
    size_t cap; /* bytes allocated */
    size_t len; /* bytes in use (a RECV_ANY sets it to the size received) */
} mpitopo__rbuf_t;

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
    mpitopo__rbuf_t *bufs; /* growable buffers 1..nbufs (bufs[k - 1]) */
    int nbufs;
    void *ctx;                 /* state of the builder's runtime steps */
    void (*ctx_free)(void *);  /* frees ctx with the request (may be NULL) */
    int persistent;      /* made by an _init call: inactive between runs */
    int active;          /* started and not yet completed */
    int error;           /* error of a deferred first round */
    int queued;          /* waiting in nbr's queue for the private communicator */
    struct mpitopo_request *next_queued;
    /* In nbr's list of active multi-round requests, which every wait and
     * test on the communicator progresses (see request.c). */
    struct mpitopo_request *prev_active, *next_active;
    int listed;
    _Atomic int busy;    /* being advanced by some thread (request.c) */
    /* A schedule kept in its communicator's cache (cache.c): on completion
     * it goes back there instead of being released. */
    struct mpitopo__centry *entry;
    int tag_base, tag_span; /* tags of a multi-round schedule (span 0: none) */
    /* Move the buffers the steps and the runtime state refer to onto the
     * sides of a new call (cache.c); NULL: the MPITOPO__SLOT fields do. */
    void (*rebase)(struct mpitopo_request *req, const struct side *send,
                   const struct side *recv);
    /* Posts the MPITOPO__OP_HOST step: the host MPI's neighbourhood call
     * (set by host.c's build) or the request it already started
     * (mpitopo__request_of_host). */
    int (*host_post)(struct mpitopo_request *req, MPI_Request *q);
    /* Duplicates the derived datatypes the MPITOPO__OP_HOST step will use
     * when its posting is deferred (host.c); NULL: nothing to keep. */
    int (*host_own_types)(struct mpitopo_request *req);
    /* The host MPI started the operation already (mpitopo__request_of_host):
     * its first round is posted at once, without waiting for the private
     * communicator. */
    int host_started;
    /* A persistent request that runs another persistent request of its
     * own on each start (the tuner's exploration of an _init call,
     * coll/neighbor/tune.c): pick gives the one to start (local: it may
     * wait only for a reduction every process posted at an earlier start),
     * done hears when it completed, with its seconds from the start to the
     * completion seen and its result. State in ctx. */
    int (*pick)(struct mpitopo_request *req, struct mpitopo_request **inner);
    void (*done)(struct mpitopo_request *req, double seconds, int rc);
    struct mpitopo_request *inner; /* running now */
    double started_at;
};

/* Make n's private communicator ready (blocking) and post the first
 * rounds of the requests queued for it, so that a call made on it now
 * comes after them on every process. */
int mpitopo__nbr_settle(mpitopo__nbr_t *n);

/* Move every active operation of the calling process on, on every
 * communicator, without blocking (errors stay with their requests). */
void mpitopo__progress_all(void);

/* A request for nrounds rounds of nops messages in all; the caller fills
 * ops and round_start, then calls mpitopo__request_start. Takes a reference
 * to nbr. NULL when out of memory. */
mpitopo_request_t mpitopo__request_new(mpitopo__nbr_t *nbr, int nops, int nrounds);

/* A request of one round holding one MPITOPO__OP_HOST step over nbr (the
 * caller sets ctx), not started; NULL when out of memory. */
mpitopo_request_t mpitopo__request_host_step(mpitopo__nbr_t *nbr);

/* A request of one MPITOPO__OP_HOST step over nbr that stands for q, an
 * operation the host MPI has already started (a global collective handed
 * to PMPI_I*): waited, tested and progressed as every other. Takes q
 * (freed with the request if it is never started). NULL when out of
 * memory (then q is left to the caller). */
mpitopo_request_t mpitopo__request_of_host(mpitopo__nbr_t *nbr, MPI_Request q);

/* Give req a temporary buffer of `bytes` bytes (freed with it). */
int mpitopo__request_alloc_tmp(mpitopo_request_t req, size_t bytes);

/* Give req n growable buffers (ids 1..n, empty; once per request). */
int mpitopo__request_bufs(mpitopo_request_t req, int n);

/* Growable buffer id of req, grown to at least `bytes` bytes (contents
 * kept); NULL when out of memory. */
mpitopo__rbuf_t *mpitopo__request_buf(mpitopo_request_t req, int id, size_t bytes);

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

/* ---- Schedule cache (cache.c) ----
 *
 * Blocking and nonblocking calls reuse the schedule of an earlier call on
 * the same communicator with the same operation, requested schedule,
 * counts, displacements and datatypes; buffers may differ. A bounded
 * number of schedules per communicator, least recently used replaced,
 * freed with the communicator. Keys compare predefined datatypes by
 * handle and derived ones by a serial number kept in an attribute of the
 * datatype, so a freed type whose handle MPI reuses never matches.
 */

/* The idle cached schedule for this call, rebased onto its buffers and
 * given new tags (NULL when none); *sched: the schedule it runs. Marks it
 * in use. */
int mpitopo__cache_get(mpitopo__nbr_t *n, int op, int requested, const struct side *send,
                       const struct side *recv, mpitopo_request_t *req, int *sched,
                       const char *func);

/* Keep req (just built for this call, schedule sched, not persistent) in
 * the cache, in use; returns without keeping it when every entry is in
 * use or memory runs out. */
void mpitopo__cache_put(mpitopo__nbr_t *n, int op, int requested, const struct side *send,
                        const struct side *recv, mpitopo_request_t req, int sched);

/* A cached request has completed: make it idle again (or release it when
 * its communicator is gone). */
void mpitopo__cache_put_back(mpitopo_request_t req);

/* A cached request is being released: forget its entry. */
void mpitopo__cache_forget(mpitopo_request_t req);

/* Release every idle schedule of n's cache; those in use leave it and are
 * released on completion. */
void mpitopo__cache_clear(mpitopo__nbr_t *n);

/* ---- The host MPI's own operations (host.c) ---- */


/* The blocking host operation (PMPI_Neighbor_*) on n's communicator,
 * MPI's code returned. */
int mpitopo__host_run(const mpitopo__nbr_t *n, int op, const struct side *send,
                      const struct side *recv);

/* Whether the host MPI has neighbourhood collectives (not SimGrid SMPI). */
int mpitopo__host_available(void);

/* How block i of a user buffer is found (the five operations differ only
 * in this). */
typedef enum {
    SIDE_SAME,  /* allgather send: the whole buffer for every neighbour */
    SIDE_BLOCK, /* block i at i * count * extent */
    SIDE_V,     /* counts[i] at displs[i] * extent */
    SIDE_W      /* counts[i] of types[i] at bdispls[i] bytes */
} side_mode_t;

typedef struct side {
    side_mode_t mode;
    int which; /* 1: the send side, 2: the receive side (mpitopo__op_t.side) */
    const void *buf;
    int count;
    const int *counts;
    const int *displs;
    const MPI_Aint *bdispls;
    MPI_Datatype type;
    const MPI_Datatype *types;
    MPI_Aint extent;
    /* Argument names, for error messages. */
    const char *buf_name, *count_name, *displs_name, *type_name;
} side_t;

static inline int mpitopo__slot_count(const side_t *s, int i)
{
    return s->mode == SIDE_SAME || s->mode == SIDE_BLOCK ? s->count : s->counts[i];
}

static inline MPI_Datatype mpitopo__slot_type(const side_t *s, int i)
{
    return s->mode == SIDE_W ? s->types[i] : s->type;
}

/* The send buffer is only ever read: MPI's own prototypes take a
 * non-const pointer for both directions. */
static inline void *mpitopo__slot_buf(const side_t *s, int i)
{
    char *b = (char *)(uintptr_t)s->buf;
    switch (s->mode) {
    case SIDE_SAME:
        return b;
    case SIDE_BLOCK:
        return b + (MPI_Aint)i * s->count * s->extent;
    case SIDE_V:
        return b + (MPI_Aint)s->displs[i] * s->extent;
    default:
        return b + s->bdispls[i];
    }
}

/* Bytes from the start of s's buffer to block i. */
static inline MPI_Aint mpitopo__slot_off(const side_t *s, int i)
{
    switch (s->mode) {
    case SIDE_SAME:
        return 0;
    case SIDE_BLOCK:
        return (MPI_Aint)i * s->count * s->extent;
    case SIDE_V:
        return (MPI_Aint)s->displs[i] * s->extent;
    default:
        return s->bdispls[i];
    }
}

/* The fields of a step on block i of side s (designated initialisers):
 * its address, and where that lies in the user's buffer, so that a cached
 * schedule can serve a later call with other buffers (request.c). */
#define MPITOPO__SLOT(s, i)                                                                   \
    .buf = mpitopo__slot_buf((s), (i)), .side = (s)->which, .boff = mpitopo__slot_off((s), (i))

/* ---- The v and w forms of multi-round schedules (request.c) ----
 *
 * A forwarded message is [one int per part: its byte size | the parts,
 * packed, back to back]: a process that forwards parts it did not make
 * learns their sizes from the header. */

/* Part bounds of a received message m of len bytes and nparts parts: part
 * j is m[offs[j] .. offs[j + 1]) (offs: nparts + 1 entries). 0 when the
 * header does not describe the message exactly. */
int mpitopo__parts_parse(const char *m, size_t len, int nparts, MPI_Aint *offs);

/* Bytes of every slot of side s (degree slots; SIDE_SAME: one), at most
 * INT_MAX / 4 in all, so that any message carrying them with its header
 * fits an int; else MPITOPO_ERR_UNSUPPORTED naming the schedule. */
int mpitopo__slot_bytes(const side_t *s, int degree, int *bytes, const char *schedule,
                        const char *func);

/* ---- The schedules, one table of operations each ---- */

/* What runs: a schedule and, for combining, whether each side combines
 * (either may stay linear, see mpitopo__combine_build). */
typedef struct mpitopo__choice {
    mpitopo__sched_t sched;
    int send_comb, recv_comb;
    const char *why; /* why the schedule asked for by name does not run (static), else NULL */
} mpitopo__choice_t;

/*
 * One schedule (linear.c, combine.c, cart_sched.c, node.c, host.c), as the
 * choice (select.c), the entry points (collectives.c) and the entry's
 * layer (entry.c) see it; its name is in MPITOPO_NEIGHBOR_SCHEDULES
 * (include/mpitopo/coll.h) at its index. Every member may be NULL.
 *   applies: whether the schedule runs op on n when asked for by name
 *     (*why = NULL) or not (*why: the reason, a static string; mpitopo's
 *     linear schedule runs instead), with blocks of sb and rb bytes (0 for
 *     the v and w forms); may make the schedule's plan, collectively
 *     (every process calls it for the same operation). The answer must be
 *     the same on every process: it may depend on the block sizes only as
 *     far as processes that communicate must pass alike;
 *   build: the schedule of op with sides send and recv, not started;
 *   free_state: release what the schedule keeps on n.
 */
typedef struct mpitopo__sched_ops {
    int (*applies)(mpitopo__nbr_t *n, mpitopo__opkind_t op, long long sb, long long rb, const char **why,
                   const char *func);
    int (*build)(mpitopo__nbr_t *n, mpitopo__opkind_t op, const side_t *send, const side_t *recv,
                 const mpitopo__choice_t *c, mpitopo_request_t *out, const char *func);
    void (*free_state)(mpitopo__nbr_t *n);
} mpitopo__sched_ops_t;

extern const mpitopo__sched_ops_t mpitopo__linear_ops, mpitopo__combine_ops, mpitopo__cart_ops,
    mpitopo__node_ops, mpitopo__host_ops;

/* Who the linear schedule talks to: the neighbour lists of the
 * communicator, or (mpitopo_cart_shift_xchg) one source and one
 * destination. self_copy: messages to the calling process itself become
 * local copies. */
typedef struct mpitopo__plan {
    int indeg, outdeg;
    const int *src, *dst;
    int shift;     /* tags: MPITOPO__TAG_SHIFT, else the neighbour tags */
    int self_copy;
} mpitopo__plan_t;

/* The plan of n's neighbour lists. */
mpitopo__plan_t mpitopo__plan_of(const mpitopo__nbr_t *n, int self_copy);

/* The linear schedule of plan p on n, not started. */
int mpitopo__linear_build(mpitopo__nbr_t *n, const mpitopo__plan_t *p, const side_t *send,
                          const side_t *recv, mpitopo_request_t *out, const char *func);

/* ---- Schedule choice (select.c) ---- */

/* Parse a schedule name ("auto", "linear", ...); MPITOPO__SCHED_INVALID
 * otherwise. */
mpitopo__sched_t mpitopo__sched_parse(const char *s);
const char *mpitopo__sched_name(mpitopo__sched_t s);

/* Read the mpitopo_* keys of comm (mpitopo_comm_set_info's, else comm's
 * info) into n: at cache time, and again when they are set (entry.c). */
void mpitopo__nbr_read_info(mpitopo__nbr_t *n, MPI_Comm comm);
/* When comm has cached lists, read its keys again. Local. */
void mpitopo__nbr_refresh_info(MPI_Comm comm);

/*
 * The schedule an operation requested: the _init call's info key (info may
 * be MPI_INFO_NULL), else the communicator's, else MPITOPO_NEIGHBOR, else
 * auto. Errors name a bad value.
 */
int mpitopo__sched_requested(const mpitopo__nbr_t *n, MPI_Info info, mpitopo__sched_t *s,
                             const char *func);

/*
 * The persistent (_init) forms: every process must build the same
 * schedule, so before building one they agree (mpitopo__agree: one
 * allreduce on the private communicator, made blocking here) on whether
 * every process's arguments are valid (`local`: this process's verdict),
 * the operation, the schedule asked for and the communicator's combining
 * threshold. Every process returns the same error otherwise, naming the
 * first process that differs from process 0 and what differs. The same
 * allreduce tells whether every process passes the same block sizes sb
 * and rb (bytes; 0 for the v and w forms): n->sizes_agreed, which the node
 * schedule needs (else linear runs; MPI asks only processes that
 * communicate to agree).
 */
int mpitopo__sched_agree(mpitopo__nbr_t *n, mpitopo__opkind_t op, mpitopo__sched_t req, long long sb,
                         long long rb, int local, const char *func);

/* The friendship threshold: comm info, else MPITOPO_COMBINE_THRESHOLD,
 * else 4 (the thesis). */
/* An integer >= 1 from v (the value of MPITOPO_COMBINE_THRESHOLD or the
 * info key mpitopo_combine_threshold), else -2. */
int mpitopo__combine_parse_threshold(const char *v);
int mpitopo__combine_threshold(const mpitopo__nbr_t *n, int *theta, const char *func);

/* The operations of schedule s (NULL for auto and invalid values). */
const mpitopo__sched_ops_t *mpitopo__sched_ops(mpitopo__sched_t s);

/* Release what every schedule keeps on n (the neighbour lists' free). */
void mpitopo__sched_free_state(mpitopo__nbr_t *n);

/*
 * The schedule rule: which schedule runs op on n, asked for req (not
 * unset or invalid), with blocks of sb and rb bytes (0 for the v and w
 * forms). May make a schedule's plan, collectively.
 */
int mpitopo__sched_choose(mpitopo__nbr_t *n, mpitopo__opkind_t op, mpitopo__sched_t req,
                          long long sb, long long rb, mpitopo__choice_t *c, const char *func);

/* Log (MPITOPO_VERBOSE >= 1, rank 0 of the communicator, once per
 * communicator, operation kind and schedule) the schedule chosen, and why
 * the one asked for does not run when it does not. */
void mpitopo__sched_log(mpitopo__nbr_t *n, mpitopo__opkind_t op, mpitopo__sched_t requested,
                        const mpitopo__choice_t *chosen);

/* The cost model of auto (select.c): constants read once. */
typedef struct mpitopo__model {
    double round_us, msg_us, byte_us, margin;
} mpitopo__model_t;

/* The model (MPITOPO_NEIGHBOR_MODEL or the defaults); errors name a bad
 * file. */
int mpitopo__model(const mpitopo__model_t **m, const char *func);

/* Predicted microseconds of rounds dependent rounds, messages sent and
 * received and bytes sent by the busiest process. */
double mpitopo__model_time(const mpitopo__model_t *m, double rounds, double messages,
                           double bytes);

/* ---- Measured selection of auto (tune.c) and host defects (defects.c) ---- */

/* A schedule whose model prediction exceeds this times the host MPI's is
 * not measured. */
#define MPITOPO__TUNE_RULE_OUT 2.0

/*
 * The candidates of op on n with blocks of sb and rb bytes (0 for the v
 * and w forms): the model's choice (*model) first, then every schedule
 * that applies and that the model does not rule out; *ncand of them (at
 * most MPITOPO__SCHED_MPI). Collective (plans are made): every process
 * calls it for the same operation and sizes; the same answer everywhere.
 */
int mpitopo__sched_candidates(mpitopo__nbr_t *n, mpitopo__opkind_t op, long long sb, long long rb,
                              int *cand, int *ncand, int *model, const char *func);

/* The known defect of the host MPI's op on n (a static sentence), or NULL
 * when none matches; the same answer on every process. */
const char *mpitopo__host_defect(const mpitopo__nbr_t *n, mpitopo__opkind_t op);

/* The same for comm's neighbour lists (tests/mpi/host_defects.c); NULL
 * also when comm has none. */
const char *mpitopo__test_host_defect(MPI_Comm comm, int op);

/* The host MPI, as "mpich 4.0.2" or "openmpi 4.1.4" ("other 0.0.0"). */
const char *mpitopo__host_name(void);

/* One measured call of the tuner: which candidate it runs (timed when
 * entry is not NULL). */
typedef struct mpitopo__trial {
    void *entry; /* the signature being explored, NULL: not timed */
    int slot;    /* the candidate's index */
    int warm;    /* the candidate's first run on the communicator: not timed */
} mpitopo__trial_t;

/*
 * The schedule an auto call of op with blocks sb, rb requests (*req, left
 * AUTO for the model). form: 1 blocking (may explore: *trial says which
 * candidate runs, timed), 2 persistent (a decision, made from the tuning
 * file if there is one; undecided: trial->entry set, slot -1, and the
 * request explores by its starts, mpitopo__ptune_new), 0 nonblocking (an existing
 * decision only, else the model; local). Blocking and persistent calls are
 * collective as their operations are; every process requests the same.
 */
int mpitopo__tune_pick(mpitopo__nbr_t *n, mpitopo__opkind_t op, long long sb, long long rb, int form,
                       mpitopo__sched_t *req, mpitopo__trial_t *trial, const char *func);

/* The timed call of trial took seconds on this process: record it; at
 * the end of a round of trials, one allreduce (MPI_MAX) over the private
 * communicator, and the decision. Collective when *trial is. */
int mpitopo__tune_record(mpitopo__nbr_t *n, const mpitopo__trial_t *trial, double seconds,
                         const char *func);

/*
 * An auto _init call whose signature is undecided (mpitopo__tune_pick set
 * trial->entry, slot -1): *shell, a persistent request that explores the
 * candidates by its starts (tune.c), and the candidates' schedules
 * (cand[0 .. *ncand), at most 5), each of which the caller builds as a
 * persistent request and hands to mpitopo__ptune_set (slot i).
 */
int mpitopo__ptune_new(mpitopo__nbr_t *n, const mpitopo__trial_t *trial, mpitopo_request_t *shell,
                       int *ncand, int *cand, const char *func);
void mpitopo__ptune_set(mpitopo_request_t shell, int i, mpitopo_request_t r);

/* For the tests (tests/mpi/tune_persistent.c): r's candidates, its starts
 * so far that explored, whether it decided and on which schedule (-1:
 * none). MPITOPO_ERR_ARG when r does not explore. */
int mpitopo__ptune_state(mpitopo_request_t r, int *ncand, int *explored, int *decided, int *sched);

/* For the tests only (tests/mpi/tune_select.c): the time of every timed
 * trial becomes times(schedule, arg) on this process instead of the
 * call's own, and a reduction's times(MPITOPO__SCHED_AUTO, arg), so the
 * selection runs on times the test knows; NULL
 * restores the clock. Not thread-safe; set it alike on every process. */
void mpitopo__tune_test_times(double (*times)(int sched, void *arg), void *arg);

/* Release n's tuning state. */
void mpitopo__tune_free(struct mpitopo__tune *t);
/* The finalize hook (mpitopo__at_finalize): rank 0 of MPI_COMM_WORLD writes
 * the job's measured decisions to MPITOPO_TUNING_FILE (a temporary file,
 * then rename). */
void mpitopo__tune_finalize(void);

/* The tuner's state of op with blocks sb, rb on comm, for the tests:
 * *explored calls timed so far, *decided 1 once decided, *sched the
 * decision (or -1), *source 0 measured, 1 the tuning file, 2 a single
 * candidate. MPITOPO_ERR_ARG when comm has none. Local. */
int mpitopo__tune_state(MPI_Comm comm, int op, long long sb, long long rb, int *explored,
                        int *decided, int *sched, int *source);
/* The same of the tuner's state t (queries.c reads it through the entry). */
int mpitopo__tune_entry_state(struct mpitopo__tune *t, int op, long long sb, long long rb,
                              int *explored, int *decided, int *sched, int *source);


/* ---- Message combining (combine.c) ---- */

/* Largest block, in bytes, that "auto" combines. */
#define MPITOPO__COMBINE_AUTO_BYTES 1024

/*
 * Make n's combining pattern if it has none (collective over the
 * communicator: every process calls it for the same operation). Local
 * afterwards.
 */
int mpitopo__combine_pattern(mpitopo__nbr_t *n, const char *func);

/* Combining pairs (steps) of the calling process in n's pattern. */
int mpitopo__combine_pairs(const mpitopo__nbr_t *n);

/* Whether combining may run at all on n (a pattern exists and its tags
 * fit). */
int mpitopo__combine_usable(const mpitopo__nbr_t *n);

/* Whether n's pattern is expected to beat the linear schedule on small
 * blocks (the rule of auto; the same answer on every process). */
int mpitopo__combine_pays(const mpitopo__nbr_t *n);

/*
 * The combining schedule of allgather (send side SIDE_SAME, receive side
 * SIDE_BLOCK), alltoall (both SIDE_BLOCK), allgatherv (SIDE_SAME,
 * SIDE_V), alltoallv or alltoallw, not started. send_comb / recv_comb:
 * whether the send and receive sides combine (auto turns each off for
 * blocks above MPITOPO__COMBINE_AUTO_BYTES; both ends of every message
 * decide alike because matching block sizes are equal). The v and w forms
 * combine both sides whatever these say.
 */
int mpitopo__combine_build(mpitopo__nbr_t *n, const side_t *send, const side_t *recv,
                           int send_comb, int recv_comb, mpitopo_request_t *out,
                           const char *func);

void mpitopo__combine_free(struct mpitopo__comb *c);

/* Whether combining has a schedule for operation op. */
int mpitopo__combine_supports(mpitopo__opkind_t op);

/* ---- Cartesian dimension-wise forwarding (cart_sched.c) ---- */

/* The stencil attached to comm by mpitopo_cart_stencil_create, copied
 * (NULL when comm has none). Local. */
int mpitopo__stencil_of(MPI_Comm comm, struct mpitopo__stencil **stencil, const char *func);
void mpitopo__stencil_free(struct mpitopo__stencil *s);

/* The stencil's class for the tuning file: "stencil:2d:r1:moore". */
void mpitopo__stencil_class(const struct mpitopo__stencil *s, char *out, size_t len);

/* Whether the dimension-wise schedule can run op on n (a stencil that
 * maps its offsets to distinct processes everywhere), and whether it
 * gains anything over the linear schedule (fewer messages). */
int mpitopo__cart_applies(const mpitopo__nbr_t *n, mpitopo__opkind_t op);
int mpitopo__cart_gains(const mpitopo__nbr_t *n);

/* What the dimension-wise schedule costs the busiest process (one inside
 * the grid: the same on every process): the stencil's offsets (the linear
 * schedule's messages each way), dependent rounds, messages sent and
 * received, and blocks sent (alltoall forwards a block once per nonzero
 * coordinate of its offset; allgather sends each of its blocks once). */
void mpitopo__cart_cost(const mpitopo__nbr_t *n, int alltoall, int *offsets, int *rounds,
                        int *messages, double *blocks);


/* Messages sent by the schedules of comm so far (diagnostics, tests). */
int mpitopo__coll_sends(MPI_Comm comm, long long *sends);

/* ---- Node-aware aggregation (node.c) ---- */

/* Whether the node schedule has a schedule for op (all five). */
int mpitopo__node_supports(mpitopo__opkind_t op);

/*
 * Make n's node plan if it has none (collective over the communicator:
 * every process calls it for the same operation, even a nonblocking one).
 * Local afterwards.
 */
int mpitopo__node_prepare(mpitopo__nbr_t *n, const char *func);

/* The node schedule of allgather (send side SIDE_SAME, receive side
 * SIDE_BLOCK), alltoall (both SIDE_BLOCK), allgatherv (SIDE_SAME, SIDE_V),
 * alltoallv or alltoallw on n's plan, not started. The v and w forms
 * carry part sizes in their messages (no equal block sizes needed). */
int mpitopo__node_build(mpitopo__nbr_t *n, const side_t *send, const side_t *recv,
                        mpitopo_request_t *out, const char *func);

/* Nodes of n's plan (0 without one), for the log. */
int mpitopo__node_count(const mpitopo__nbr_t *n);

void mpitopo__node_free(struct mpitopo__node *p);

#endif
