/*
 * The global collectives of mpitopo (allgather, bcast, gather, allreduce;
 * issue 19, thesis ch. 4): algorithms over point-to-point on reordered
 * copies of the user's communicator, run by the schedule engine of the
 * neighbourhood collectives (request.c).
 *
 * FOR THE SHIM (src/pmpi): the shim is a separate library and the
 * mpitopo__* symbols are hidden in libmpitopo, so it cannot call
 * mpitopo__coll_handles. It calls the public, documented
 * mpitopo_coll_handles() of <mpitopo/coll.h> instead (same arguments, same
 * answer), with the public constants MPITOPO_COLL_OP_ALLGATHER, _BCAST,
 * _GATHER, _ALLREDUCE (the MPITOPO__COLL_OP_* below are the same values).
 * Then it calls mpitopo_allgather / mpitopo_iallgather / ... (public).
 */
#ifndef MPITOPO_COLL_GCOLL_H
#define MPITOPO_COLL_GCOLL_H

#include "coll/coll_internal.h"

/* The operations (same values as the public MPITOPO_COLL_OP_*). */
#define MPITOPO__COLL_OP_ALLGATHER MPITOPO_COLL_OP_ALLGATHER
#define MPITOPO__COLL_OP_BCAST MPITOPO_COLL_OP_BCAST
#define MPITOPO__COLL_OP_GATHER MPITOPO_COLL_OP_GATHER
#define MPITOPO__COLL_OP_ALLREDUCE MPITOPO_COLL_OP_ALLREDUCE
#define MPITOPO__COLL_NOPS 4

/* 1 when mpitopo handles this call as configured (MPITOPO_COLL / info key
 * mpitopo_coll of comm not unset or "off", the operation's algorithm not
 * "mpi", an intracommunicator, datatypes and op supported), 0 when the
 * shim must call PMPI_*. Local. */
int mpitopo__coll_handles(int which, MPI_Comm comm, MPI_Datatype sendtype, MPI_Datatype recvtype,
                          MPI_Op op);

/* Algorithms (per operation; GA_AUTO: chosen by size and layout). */
typedef enum {
    MPITOPO__GA_AUTO = 0,
    MPITOPO__GA_MPI,       /* the host MPI's own PMPI_* call */
    MPITOPO__GA_RD,        /* allgather, allreduce: recursive doubling */
    MPITOPO__GA_BRUCK,     /* allgather */
    MPITOPO__GA_RING,      /* allgather */
    MPITOPO__GA_HIER,      /* allgather: hierarchical, linear inside the node */
    MPITOPO__GA_HIERB,     /* allgather: hierarchical, binomial inside the node */
    MPITOPO__GA_BINOMIAL,  /* bcast, gather */
    MPITOPO__GA_COUNT
} mpitopo__galg_t;

/* Reordering heuristic of one operation. */
typedef enum {
    MPITOPO__GH_AUTO = 0, /* the algorithm's own heuristic, kept when cheaper */
    MPITOPO__GH_NONE,
    MPITOPO__GH_RDMH,
    MPITOPO__GH_RMH,
    MPITOPO__GH_BBMH,
    MPITOPO__GH_BGMH,
    MPITOPO__GH_COUNT
} mpitopo__gheur_t;

typedef enum { MPITOPO__GO_INITCOMM = 0, MPITOPO__GO_ENDSHFL } mpitopo__gorder_t;

/* A parsed MPITOPO_COLL / mpitopo_coll value. */
typedef struct mpitopo__gconf {
    int off;                               /* unset or "off": the shim passes */
    mpitopo__galg_t alg[MPITOPO__COLL_NOPS];
    mpitopo__gheur_t heur[MPITOPO__COLL_NOPS];
    int order[MPITOPO__COLL_NOPS];         /* mpitopo__gorder_t; -1: default (initcomm) */
    long long switch_bytes;                /* RD/Bruck below, ring from (default 1024) */
} mpitopo__gconf_t;

/* Parse a value (errors MPITOPO_ERR_ARG naming `where` and the value). */
int mpitopo__gconf_parse(const char *text, mpitopo__gconf_t *c, const char *where,
                         const char *func);

/* What a communicator keeps of its configuration, so that a call parses
 * nothing when the text in force has not changed. */
typedef struct mpitopo__gconf_cache {
    int mpi_read, mpi_found; /* comm's MPI info, read once */
    char mpi_text[256];
    int valid;
    unsigned gen;   /* mpitopo__comm_info_generation when conf was taken */
    char text[256]; /* the text parsed (where it came from first) */
    mpitopo__gconf_t conf;
} mpitopo__gconf_cache_t;

/* The configuration in force on comm: the info key mpitopo_coll of comm
 * (mpitopo_comm_set_info, at every call; else comm's MPI info, read on
 * the first call with this cache), else MPITOPO_COLL, else auto with
 * off = 1. cache may be NULL (then nothing is kept). */
int mpitopo__gconf_of(MPI_Comm comm, mpitopo__gconf_cache_t *cache, mpitopo__gconf_t *c,
                      const char *func);

const char *mpitopo__galg_name(mpitopo__galg_t a);
const char *mpitopo__gheur_name(mpitopo__gheur_t h);

/* For tests: the algorithm, heuristic and whether the reordered order was
 * used (1) or the original kept (0) by the last call of operation `which`
 * on comm (by the calling process). MPITOPO_ERR_NOT_FOUND when none ran. */
int mpitopo__coll_last(MPI_Comm comm, int which, int *alg, int *heur, int *reordered);

/*
 * For the tests (tests/mpi/gcoll_tune.c): the tuner's state of operation
 * `which` with `bytes` (as mpitopo__gtune_pick) and class cls on comm:
 * *explored calls so far, *decided, the decision's *alg and *heur (-1
 * when undecided), *source 0 measured, 1 the tuning file, 2 a single
 * candidate. MPITOPO_ERR_NOT_FOUND when there is none. Local.
 */
int mpitopo__gtune_state(MPI_Comm comm, int which, long long bytes, int cls, int *explored,
                         int *decided, int *alg, int *heur, int *source);
/* For the tests: every timed trial of the global tuner takes times(alg,
 * heur, arg) seconds on this process instead of its own, a reduction
 * times(0, 0, arg); NULL restores the clock. Set it alike everywhere. */
void mpitopo__gtune_test_times(double (*times)(int alg, int heur, void *arg), void *arg);
/* The finalize hook: rank 0 of MPI_COMM_WORLD writes the global
 * collectives' decisions (section "collectives" of MPITOPO_TUNING_FILE). */
void mpitopo__gtune_finalize(void);

#endif
