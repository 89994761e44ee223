/* Inside the global collectives (gcoll_*.c): per-communicator state and
 * the orders cached on it (gcoll_order.c), the schedule builders
 * (gcoll_alg.c). */
#ifndef MPITOPO_COLL_GCOLL_INTERNAL_H
#define MPITOPO_COLL_GCOLL_INTERNAL_H

#include "coll/global/gcoll.h"

/* Reordered orders kept per user communicator at most; further
 * (algorithm, heuristic, root) triples run in the original order. */
#define MPITOPO__GMAX_ORDERS 8

/* The plan of the hierarchical allgather: the nodes in the leaders' order
 * (position k), each node's ranks in the order of its gather tree
 * (slot_rank[first[k] .. first[k+1]), the leader, its lowest rank, first)
 * and of its broadcast tree (bslot, same ranges). Identity: nodes by
 * number, ranks in rank order. */
typedef struct ghier {
    struct ghier *next;
    int heur_req, binomial;
    int nnodes;
    int *first;       /* nnodes + 1 */
    int *slot_rank;   /* p */
    int *bslot;       /* p */
    int *pos_of_rank; /* p: the position of each rank's node */
    int leaders_reordered, nodes_reordered; /* nodes whose tree orders changed */
    double cost0, cost1; /* leaders' cost, original and chosen */
} ghier_t;

/* One order of a communicator for one algorithm, heuristic and root. The
 * algorithm sees logical ranks 0..p-1 with the root at 0: logical rank u
 * is the process of old rank old_of_new[u] of the user's communicator
 * (rank (u + root) % p when not reordered), the same rank in nbr->comm,
 * the private duplicate every order shares. */
typedef struct gorder {
    struct gorder *next;
    int alg;      /* mpitopo__coll_alg_t (collmap.h) */
    int heur_req; /* mpitopo__gheur_t asked for */
    int heur_used;
    int root;
    int reordered;            /* old_of_new != NULL */
    int *old_of_new;          /* p entries (+ p of new_of_old), or NULL: rotation by root */
    int *new_of_old;
    double cost0, cost1;      /* distance-model costs: original, reordered */
    char note[160];           /* why the order was kept, for the log */
    int provisional;          /* kept because a nonblocking call could not gather
                               * the machine: decided again once it can */
    mpitopo__nbr_t *nbr;      /* the communicator (one reference) */
} gorder_t;

typedef struct gstate {
    struct gstate *prev, *next;
    MPI_Comm user;
    int size, rank;
    mpitopo__nbr_t *host;  /* for the host MPI's nonblocking calls: no communicator */
    mpitopo__nbr_t *ident; /* duplicate of user (made by MPI_Comm_idup on first
                            * use), shared by every order */
    int nb;                /* the call under way is nonblocking: no collective
                            * setup (see mpitopo__gstate_ready) */
    gorder_t *orders;
    int norders;
    mpitopo__gconf_cache_t conf_cache;
    ghier_t *hiers; /* plans of the hierarchical allgather, by heuristic */
    int *node_of_rank; /* hierarchical allgather: node of every rank (made on first use) */
    int nnodes;
    int last_alg[MPITOPO__COLL_NOPS], last_heur[MPITOPO__COLL_NOPS],
        last_reordered[MPITOPO__COLL_NOPS];
    /* The last answer of mpitopo__gstate_hier_pays. */
    int hier_valid, hier_pays;
    double hier_bytes, hier_cost, flat_cost;
    const struct gorder *hier_flat;
    unsigned char logged[64]; /* (op, alg, heuristic, reordered) lines printed */
    struct gtune *tune;       /* measured decisions of auto (gcoll_tune.c) */
    /* Its release, set with it: the state (gcoll_order.c) frees the tuner
     * without importing gcoll_tune.c, which imports the orders. */
    void (*tune_free)(struct gtune *t);
} gstate_t;

/* The logical view of an order, as the builders use it. */
typedef struct gview {
    mpitopo__nbr_t *nbr;
    int p, me;          /* size, my logical rank */
    int shift;          /* comm rank of logical u: (u + shift) % p */
    const int *old_of_new, *new_of_old; /* NULL: rotation by shift */
} gview_t;

static inline int gv_old(const gview_t *v, int u)
{
    return v->old_of_new ? v->old_of_new[u] : (u + v->shift) % v->p;
}

/* The rank in nbr->comm of logical rank u: its old rank, since nbr->comm
 * is a duplicate of the user's communicator. */
static inline int gv_peer(const gview_t *v, int u)
{
    return gv_old(v, u);
}

/* The logical rank of old rank o. */
static inline int gv_logical(const gview_t *v, int o)
{
    return v->new_of_old ? v->new_of_old[o] : (o - v->shift + v->p) % v->p;
}

/* The state of comm (made on first use, locally); checks MPI and comm. */
int mpitopo__gstate_get(MPI_Comm comm, gstate_t **s, const char *func);
/* The duplicate of the user's communicator, shared by every order: its
 * MPI_Comm_idup starts on first use (collective, not blocking); operations
 * on it are queued until it completes (request.c). */
int mpitopo__gstate_ident(gstate_t *s, mpitopo__nbr_t **nbr, const char *func);
/* The entry the requests standing for the host MPI's own nonblocking calls
 * hang on (mpitopo__request_of_host): the user's communicator, no
 * duplicate; local. */
int mpitopo__gstate_host_nbr(gstate_t *s, mpitopo__nbr_t **nbr, const char *func);
/* The node of every rank (collective on first use). */
int mpitopo__gstate_nodes(gstate_t *s, const char *func);
/*
 * Whether the call under way may use what needs collective setup on first
 * use: the communicator's machine (one allgather, cached on it) and, with
 * nodes, the node of every rank. Always in a blocking call; in a
 * nonblocking one (s->nb) only when both are cached already, because a
 * nonblocking collective must not wait for the other processes: until a
 * blocking call (or mpitopo_comm_machine) has gathered them, nonblocking
 * calls keep the original order and the flat algorithm. Every process
 * gives the same answer: the caches are filled by collective calls.
 */
int mpitopo__gstate_ready(const gstate_t *s, int nodes);
/* The order for (alg, heur_req, root); on first use: the machine (collective,
 * see mpitopo__gstate_ready), heuristic and cost, all local after. bytes:
 * the block size the cost is taken at. */
int mpitopo__gstate_order(gstate_t *s, int alg, int heur_req, int root, double bytes,
                          gorder_t **out, const char *func);
/* Whether a hierarchical allgather is cheaper under the distance model than
 * the flat order `flat` (with its initComm exchange when reordered) for
 * blocks of `bytes`: *pays is 0 (no), MPITOPO__GA_HIER (linear inside the
 * nodes) or MPITOPO__GA_HIERB (binomial), the cheaper of the two; only with
 * several nodes of at least 2 processes each. Collective on first use (node
 * numbers, machine); the answer is kept for the same bytes. */
int mpitopo__gstate_hier_pays(gstate_t *s, const gorder_t *flat, double bytes, int *pays,
                              const char *func);
/* The hierarchical plan for heuristic heur_req (none: identity; any other:
 * RDMH or RMH over the leaders, BGMH and BBMH inside the nodes when
 * binomial, each kept only when cheaper under the distance model).
 * Collective on first use. */
int mpitopo__gstate_hier(gstate_t *s, int heur_req, int binomial, double bytes,
                         const ghier_t **out, const char *func);
/* Remember (for mpitopo__coll_last) and log at MPITOPO_VERBOSE=1 on rank 0,
 * once per communicator, operation, algorithm and outcome. */
void mpitopo__gstate_log(gstate_t *s, int op, int alg, const gorder_t *o, const char *why);

/* A user buffer of blocks: block k at buf + k * stride (count elements of
 * type each); the input block of allgather and gather has stride 0. */
typedef struct gblock {
    void *buf;
    int count;
    MPI_Datatype type;
    MPI_Aint stride;
} gblock_t;

/* The schedules (gcoll_alg.c), not started. B: bytes of one block. */
int mpitopo__gbuild_allgather(const gview_t *v, int alg, int order, const gblock_t *in,
                              const gblock_t *out, long long B, mpitopo_request_t *req,
                              const char *func);
/* Ring, or recursive doubling on the original order or with initcomm, moving
 * the blocks straight in the receive buffer rbuf (a contiguous datatype:
 * block k is B bytes at rbuf + k B); inplace: my block is there already. */
int mpitopo__gbuild_allgather_direct(const gview_t *v, int alg, int inplace, const gblock_t *in,
                                     char *rbuf, long long B, mpitopo_request_t *req,
                                     const char *func);
int mpitopo__gbuild_allgather_hier(mpitopo__nbr_t *nbr, const struct ghier *h, int p, int rank,
                                   int binomial, const gblock_t *in, const gblock_t *out,
                                   long long B, mpitopo_request_t *req, const char *func);
int mpitopo__gbuild_bcast(const gview_t *v, void *buf, int count, MPI_Datatype type,
                          mpitopo_request_t *req, const char *func);
int mpitopo__gbuild_gather(const gview_t *v, int order, const gblock_t *in, const gblock_t *out,
                           long long B, mpitopo_request_t *req, const char *func);
int mpitopo__gbuild_allreduce(const gview_t *v, const void *sendbuf, void *recvbuf, int count,
                              MPI_Datatype type, MPI_Op op, int commute, mpitopo_request_t *req,
                              const char *func);

/* ---- Measured selection of auto (gcoll_tune.c) ---- */

/* One call of the tuner: the signature explored (NULL: not timed), the
 * candidate's slot, whether its first run on the communicator (not timed),
 * and when the candidate started (set by mpitopo__gtune_pick with a trial
 * only, so a decided call reads no clock). */
typedef struct gtrial {
    gstate_t *s;
    void *entry;
    int slot, warm;
    double t0;
} gtrial_t;

/*
 * The algorithm and heuristic an auto call of op runs: c->alg[op] and
 * c->heur[op] set to the signature's decision, or (blocking: trial not
 * NULL) to the candidate to explore, timed (*trial), or left to the model.
 * bytes: allgather recvcount x size, bcast count x size, gather block
 * bytes, allreduce count x size; cls: the root (bcast, gather), 1 for a
 * commutative op (allreduce), else 0. Blocking calls are collective as
 * their operations; every process sets the same; nonblocking ones local.
 */
int mpitopo__gtune_pick(gstate_t *s, mpitopo__gconf_t *c, int op, long long bytes, int cls,
                        gtrial_t *trial, const char *func);
/* The blocking call of trial returned rc: record its time since trial->t0
 * (at the end of a round one allreduce over the communicator, collective).
 * Returns rc, or the error of the reduction. */
int mpitopo__gtune_record(const gtrial_t *trial, int rc, const char *func);

#endif
