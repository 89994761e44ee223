/* Shared by the files of src/mpi: the MPI session (cleanup at MPI_Finalize)
 * and the emulation helpers. Only src/mpi and src/coll include this. */
#ifndef MPITOPO_MPI_INTERNAL_H
#define MPITOPO_MPI_INTERNAL_H

#include <mpi.h>
#ifdef MPITOPO_SMPI
#include "mpi/smpi_compat.h" /* SimGrid SMPI shims (bench/smpi/build.sh) */
#endif

#include "core/internal.h"
#include <mpitopo/mpi.h>
#include "network/slurm.h"

/*
 * Finalize hooks (session.c). A module that keeps state for the MPI session
 * registers the function that releases it, in its slot, before it keeps
 * anything: the first registration of a session attaches an attribute to
 * MPI_COMM_SELF whose delete callback (run at the start of MPI_Finalize,
 * while MPI is still fully usable) calls the registered hooks once, in the
 * order of the slots. Registering again is cheap and changes nothing. Does
 * nothing when MPI is not initialized (the state then lives until the
 * process exits). Returns MPI_SUCCESS or an MPI error code. session.c calls
 * the hooks and imports none of the modules.
 */
typedef enum {
    MPITOPO__FINI_PTUNE = 0,    /* coll/neighbor/tune.c: reductions of freed persistent requests */
    MPITOPO__FINI_TUNE,         /* coll/neighbor/tune.c: decisions to MPITOPO_TUNING_FILE */
    MPITOPO__FINI_GTUNE,        /* coll/global/gcoll_tune.c: its section of the same file */
    MPITOPO__FINI_NODEINFO,     /* the node-information cache (frees communicators) */
    MPITOPO__FINI_EMULATION,    /* the emulated machine */
    MPITOPO__FINI_COMM_MACHINE, /* hwloc topology, networks, Slurm state */
    MPITOPO__FINI_COMM_INFO,    /* the info-key attribute */
    MPITOPO__FINI_COUNT
} mpitopo__fini_slot_t;
int mpitopo__at_finalize(mpitopo__fini_slot_t slot, void (*release)(void));

/* The hooks of the MPI layer's modules. */
void mpitopo__nodeinfo_finalize(void);
void mpitopo__emulation_finalize(void);
void mpitopo__comm_machine_finalize(void);
void mpitopo__comm_info_finalize(void);

/*
 * mpitopo's own info keys of a communicator (comm_info.c), kept in an
 * attribute because MPICH drops the info keys it does not know:
 * _set merges the keys of info that start with "mpitopo_" into comm's
 * (MPI_INFO_NULL removes them all; errors name `func`); _get copies the
 * value of key (len chars at most, NUL included) and returns whether comm
 * has it. Duplicates of comm share the keys. Local.
 */
int mpitopo__comm_info_set(MPI_Comm comm, MPI_Info info, const char *func);
int mpitopo__comm_info_get(MPI_Comm comm, const char *key, char *value, int len);
/* A number that changes whenever mpitopo__comm_info_set runs on any
 * communicator: what a caller compares to reuse what it read. */
unsigned mpitopo__comm_info_generation(void);
/* The value of key in info (up to size - 1 characters; a longer value reads
 * as "(a value of N characters)"), or 0 when absent, info is
 * MPI_INFO_NULL or unreadable. */
int mpitopo__info_value(MPI_Info info, const char *key, char *value, int size);

/* Return rc; when it is an MPI error code, first set mpitopo_last_error()
 * to "func: MPI error N: <MPI's own text>", so the message never belongs to
 * an earlier failure. Public MPI-layer functions return through this. */
int mpitopo__mpi_result(const char *func, int rc);

/* MPITOPO_ERR_ARG, naming `func`, unless MPI is initialized and not
 * finalized. */
int mpitopo__check_mpi(const char *func);

/* MPITOPO_ERR_ARG unless comm is an intracommunicator (not MPI_COMM_NULL);
 * a positive MPI error code if MPI fails to tell. */
int mpitopo__check_intracomm(MPI_Comm comm, const char *func);

/*
 * The emulated machine and the leaf of the calling process of comm (its rank
 * in MPI_COMM_WORLD placed by mpitopo_emulation). *machine is NULL when
 * emulation is off. Returns MPITOPO_SUCCESS, a negative mpitopo error (with
 * message), or a positive MPI error code. Local.
 */
int mpitopo__emulated_leaf(MPI_Comm comm, const mpitopo_machine_t **machine, int *leaf);

/*
 * The machine of comm (mpitopo_comm_machine), computed on the first call
 * and cached with its node information (shared by duplicates), and that
 * node information. Collective over comm on the first call, local after.
 * The pointers stay valid while comm lives.
 */
int mpitopo__comm_machine_cached(MPI_Comm comm, const mpitopo_nodeinfo_t **info,
                                 const mpitopo_machine_t **machine, const int **leaf_of_rank);

/* Whether comm's machine is cached already (mpitopo__comm_machine_cached
 * would not communicate): local, never an error. Every process of comm
 * gives the same answer, since the machine is made collectively. */
int mpitopo__comm_machine_known(MPI_Comm comm);

/* The emulated machine (NULL without emulation) and the calling process's
 * leaf there, as the discovery of info found them (MPITOPO_EMULATE). */
void mpitopo__nodeinfo_emulated(const mpitopo_nodeinfo_t *info, const mpitopo_machine_t **emu, int *leaf);

/* mpitopo_comm_nodeinfo without its error conversion (nodeinfo.c), and the
 * machine cached beside the node information: what comm_machine.c builds
 * and caches with mpitopo__nodeinfo_set_machine (the cache takes both). */
int mpitopo__comm_nodeinfo(MPI_Comm comm, const mpitopo_nodeinfo_t **info);
void mpitopo__nodeinfo_machine(const mpitopo_nodeinfo_t *info, const mpitopo_machine_t **machine,
                               const int **leaf_of_rank);
void mpitopo__nodeinfo_set_machine(const mpitopo_nodeinfo_t *info, mpitopo_machine_t *machine,
                                   int *leaf_of_rank, const mpitopo_network_t *network,
                                   int *end_node);
/* The network of the cached machine (MPITOPO_NETWORK or comm's info key
 * mpitopo_network) and the end node of each node unit of that machine;
 * NULLs without a network or before the machine is cached. */
void mpitopo__nodeinfo_network(const mpitopo_nodeinfo_t *info, const mpitopo_network_t **network,
                               const int **end_node);


/* The levels above the nodes from Slurm (slurm_machine.c, issue 32).
 * mpitopo__slurm_wanted: whether a Slurm job asks for them (SLURM_JOB_ID
 * set, MPITOPO_SLURM not off); a bad MPITOPO_SLURM is an error.
 * mpitopo__slurm_record: this process's block of MPITOPO__SLURM_REC ints
 * for the machine's allgather (emulated_node: its emulated node, -1 on
 * real nodes). mpitopo__slurm_gathered: from every process's block
 * (all[i * stride]), the same levels or the same error on every process;
 * S->n = 0 when Slurm gives none; S->source says where they came from. */
#define MPITOPO__SLURM_REC (4 + 2 * MPITOPO__SLURM_MAX_DEPTH)
typedef struct mpitopo__slurm_levels {
    int n;       /* levels above the node */
    int *labels; /* size * MPITOPO__SLURM_MAX_DEPTH: labels of process i's levels */
    char names[MPITOPO__SLURM_MAX_DEPTH][MPITOPO_MAX_NAME];
    double factor[MPITOPO__SLURM_MAX_DEPTH];
    char source[300];
} mpitopo__slurm_levels_t;
int mpitopo__slurm_wanted(int *on);
int mpitopo__slurm_record(int emulated_node, int *rec);
int mpitopo__slurm_gathered(int size, const int *all, int stride, mpitopo__slurm_levels_t *S);
void mpitopo__slurm_levels_free(mpitopo__slurm_levels_t *S);
void mpitopo__slurm_finalize(void);

/* Where the levels above the nodes of comm's cached machine came from
 * ("MPITOPO_NETWORK", "Slurm (/etc/slurm/topology.conf)", ...), set once
 * with the machine; "" before. */
void mpitopo__nodeinfo_set_above(const mpitopo_nodeinfo_t *info, const char *source);
const char *mpitopo__nodeinfo_above(const mpitopo_nodeinfo_t *info);

/* Whether collective arguments are compared across processes
 * (MPITOPO_CHECK_ARGS, read once; default on without NDEBUG). */
int mpitopo__check_args(void);

/* Value of key in info; *found = 0 for MPI_INFO_NULL or a missing key.
 * MPITOPO_ERR_ARG (message naming the key) for a value of len characters
 * or more; MPI codes pass through. */
int mpitopo__info_get(const char *func, MPI_Info info, const char *key, char *value, int len, int *found);

/* What the info keys mpitopo_mapper, mpitopo_weights and mpitopo_reorder of
 * the topology constructors set. The caller fills the defaults first. */
typedef struct mpitopo__topo_options {
    char mapper[64];
    int mapper_set; /* by the info key or MPITOPO_MAPPER, not a default */
    mpitopo_weight_t weight;
    int reorder;
    int rank0_move; /* MPITOPO_RANK0 / info mpitopo_rank0 = move */
} mpitopo__topo_options_t;
/* The verbose line (rank 0 of comm) when keeping rank 0 cost something
 * (mpitopo__map_keep_rank0). */
struct mpitopo__rank0;
void mpitopo__rank0_report(const char *func, const struct mpitopo__rank0 *r0);
/* Read the keys into *o (errors MPITOPO_ERR_PARSE naming key and value). */
int mpitopo__topo_options_read(const char *func, MPI_Info info, mpitopo__topo_options_t *o);

/* mpitopo_map, or mpitopo_map_network when comm's cached machine has a
 * network (net, with the end node of every node unit: end_node; from
 * mpitopo__nodeinfo_network). */
int mpitopo__map_on_comm(const mpitopo_network_t *net, const int *end_node, const char *spec,
                         const mpitopo_machine_t *m, const mpitopo_pattern_t *pattern,
                         const mpitopo_map_options_t *opt, int *mapped, int *kept);
/* mpitopo__map_on_comm with the launch as the never-worse baseline:
 * position p of pattern starts on the leaf of rank p (leaf_of_rank). */
int mpitopo__map_from_launch(const mpitopo_nodeinfo_t *ni, const char *spec, const mpitopo_machine_t *m,
                             const mpitopo_pattern_t *pattern, mpitopo_weight_t weight, const int *leaf_of_rank,
                             int *mapped, int *kept);
/* The position p whose mapped[p] is leaf, or MPI_UNDEFINED. */
int mpitopo__position_of(const int *mapped, int n, int leaf);
/* For the verbose line of a reordering: "; network: hop-bytes A -> B, MC
 * ..., hybrid ..." of the launch and the mapping when comm's machine has a
 * network, else "". */
void mpitopo__network_report(const mpitopo_nodeinfo_t *ni, const mpitopo_machine_t *m,
                             const mpitopo_pattern_t *pattern, const int *launch, const int *mapped, char *buf,
                             size_t size);
/* The mapper of a graph constructor: the one set (info key, MPITOPO_MAPPER),
 * else "ptram" when comm's machine has a network (net not NULL), else the
 * default. */
const char *mpitopo__graph_mapper(const mpitopo_network_t *net, const mpitopo__topo_options_t *o);

/* The offsets of a star (2 ndims radius) or Moore ((2 radius + 1)^ndims - 1)
 * stencil, or -1 above MPITOPO_MAX_STENCIL_OFFSETS; 0 for radius 0. */
long long mpitopo__stencil_offsets(int ndims, int moore, long long radius);
/* The one check of that limit, with the one message: MPITOPO_ERR_ARG
 * "<func>: <name> = "<stencil>" on <ndims> dimensions has more than
 * 1048576 offsets". */
int mpitopo__stencil_check(const char *func, const char *name, const char *stencil, int ndims, int moore,
                           long long radius);

/* FNV-1a over len bytes, continuing from h (start with 2166136261u): to
 * compare arguments across processes. */
uint32_t mpitopo__hash(uint32_t h, const void *data, size_t len);

/*
 * Agreement on the arguments of a collective call, in every build (agree.c).
 * A process that finds its arguments invalid must not return while the
 * others go on into the next collective, and arguments that differ between
 * processes but look valid (ndims, reorder, a mapper, a graph) must not give
 * communicators that disagree. So every creation starts with
 * mpitopo__agree: ONE allreduce of a few ints carrying "my arguments are
 * valid" (the lowest faulty rank), each argument that must match (its value,
 * or a hash of it: mpitopo__agree_hash) as a (min, max) pair, and the
 * caller's extra slots reduced with MPI_MIN (e.g. the lowest rank that gives
 * weights). More collectives follow only on an error:
 *  - a faulty process: it broadcasts its code and message; every process
 *    returns that code, the others with "process P of comm has invalid
 *    arguments: <its message>";
 *  - arguments that differ: process 0's record (or values) is broadcast and
 *    the lowest process that differs says how, e.g. "on process 3, ndims =
 *    2 (process 0: 3)"; every process returns MPITOPO_ERR_MISMATCH with
 *    that message.
 * With MPITOPO_CHECK_ARGS=1 on any process the record (when the caller
 * gives one) is compared even when every value agrees, so that a hash
 * collision cannot hide a difference. Collective over comm; returns
 * MPITOPO_SUCCESS on every process or an error on every process.
 */
#define MPITOPO__AGREE_ARGS 12
#define MPITOPO__AGREE_EXTRA 4
#define MPITOPO__AGREE_RECORD 1024 /* bytes of a record */
#define MPITOPO__AGREE_MSG 320     /* characters of a shared message */
typedef struct mpitopo__agree_arg {
    const char *name; /* as in messages: "ndims", "info mpitopo_mapper" */
    int value;
    int hashed; /* value is a hash: messages cannot show it */
} mpitopo__agree_arg_t;
typedef struct mpitopo__agree {
    const char *func;
    MPI_Comm comm;
    int rank;
    int nargs;
    mpitopo__agree_arg_t arg[MPITOPO__AGREE_ARGS];
    int nextra;
    int extra[MPITOPO__AGREE_EXTRA]; /* in: mine; out: the minimum over comm */
    /* Optional: the arguments in full (fixed size, the same on every
     * process) and how to tell what differs between mine and process 0's. */
    const void *record;
    size_t record_len;
    void (*describe)(const void *mine, const void *root, char *out, size_t len);
} mpitopo__agree_t;
/* Add an argument compared by value, or by a hash of len bytes, or of a
 * string (NULL and "" hash alike). Local. */
void mpitopo__agree_arg(mpitopo__agree_t *a, const char *name, int value);
void mpitopo__agree_hash(mpitopo__agree_t *a, const char *name, const void *data, size_t len);
void mpitopo__agree_string(mpitopo__agree_t *a, const char *name, const char *s);
/* local: this process's own verdict on its arguments (MPITOPO_SUCCESS, an
 * mpitopo error with its message set, or an MPI error code). */
int mpitopo__agree(mpitopo__agree_t *a, int local);

#endif
