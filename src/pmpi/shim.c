/*
 * libmpitopo_shim: an unmodified MPI program gets mpitopo by LD_PRELOADing
 * (or linking, before the MPI library) this library. This file holds the
 * topology constructors, the mapping queries and the info calls, as the
 * mpitopo__shim_* functions that their C and Fortran bindings call (the
 * bindings are generated from bindings.def).
 *
 * Renumbering is asked for, never assumed. MPI-4.1 section 8.5.4: after a
 * reorder, the process of rank k in the new communicator plays the role
 * rank k described; the program must take its rank (and coordinates) from
 * the new communicator and keep its data by the new rank. Many programs
 * pass reorder = 1 and do not (they use the new ranks on MPI_COMM_WORLD,
 * or free the communicator and keep its coordinates), and would hang or
 * compute garbage once renumbered. So by default the constructors below
 * give the new communicator MPI's ranks, those of comm_old (PMPI with
 * reorder = 0, as for a program's reorder = 0: mpitopo's info keys and
 * neighbourhood collectives still apply), MPI_Cart_map and MPI_Graph_map
 * are MPI's own, and at MPITOPO_VERBOSE >= 1 rank 0 says once per
 * constructor what renumbering would gain (Cartesian: the off-node
 * partners, which costs the mapping, so only then). MPITOPO_REORDER=job,
 * or the info key mpitopo_reorder = job on comm_old or in the dist-graph
 * info (it comes first; launch, off, false or 0 there keep MPI's ranks),
 * says the program honours the rule; then:
 *
 *   MPI_Cart_create  reorder != 0 on an intracommunicator without a
 *                    topology: mpitopo_cart_create; otherwise (reorder == 0,
 *                    a topology already on comm, an intercommunicator,
 *                    MPI_COMM_NULL, ndims > MPITOPO_MAX_DIMS, MPI not
 *                    initialized) PMPI_Cart_create, unchanged;
 *   MPI_Cart_map     mpitopo_cart_map (same exceptions, except that a
 *                    topology on comm is allowed), else PMPI_Cart_map;
 *   MPI_Dist_graph_create_adjacent, MPI_Dist_graph_create, MPI_Graph_create
 *                    as MPI_Cart_create: mpitopo_dist_graph_create_adjacent,
 *                    mpitopo_dist_graph_create, mpitopo_graph_create when
 *                    reorder != 0 on an intracommunicator without a
 *                    topology, else MPI's own;
 *   MPI_Graph_map    as MPI_Cart_map: mpitopo_graph_map.
 *
 * Whatever MPITOPO_REORDER says:
 *
 *   MPI_Dims_create  MPI's own unless MPITOPO_DIMS asks otherwise;
 *   MPI_Comm_set_info, MPI_Comm_dup_with_info
 *                    MPI's own, then mpitopo_comm_set_info with the same
 *                    info (dup_with_info: replacing the keys copied from
 *                    comm), so that mpitopo's keys (mpitopo_neighbor, ...)
 *                    take on MPICH too, which drops keys it does not know;
 *                    likewise the info of MPI_Dist_graph_create(_adjacent);
 *   MPI_Neighbor_allgather, _allgatherv, _alltoall, _alltoallv, _alltoallw,
 *   their MPI_Ineighbor_* and (MPI-4) MPI_Neighbor_*_init forms
 *                    mpitopo's when MPITOPO_NEIGHBOR asks, on an
 *                    intracommunicator with a topology; else MPI's own
 *                    (shim_neighbor.c; the request calls MPI_Wait, MPI_Test,
 *                    MPI_Start, ... that complete them: shim_requests.c).
 *
 * Environment, read once (at the first intercepted call):
 *   MPITOPO_DISABLE=1        every call goes to MPI unchanged (any value but
 *                            "" and "0" disables);
 *   MPITOPO_DIMS=nodes       MPI_Dims_create is node-aware:
 *                            mpitopo_comm_dims_create on MPI_COMM_WORLD when
 *                            nnodes is its size (mpitopo_dims_create for
 *                            other nnodes). Beware: MPI_Dims_create is
 *                            local in MPI, but the first such call is
 *                            collective over MPI_COMM_WORLD (node
 *                            discovery), so every process must make it;
 *   MPITOPO_DIMS=balanced    mpitopo_dims_create (local);
 *   MPITOPO_DIMS unset, empty or "mpi": MPI's own (another value is
 *                            reported once by world rank 0, then ignored);
 *   MPITOPO_NEIGHBOR=linear  the neighbourhood collectives run mpitopo's
 *                            schedules; auto, combine and cart too (the
 *                            library reads the variable to choose the
 *                            schedule); unset, empty or "off":
 *                            MPI's own (another value is reported once by
 *                            world rank 0, then treated as off);
 *   MPITOPO_REORDER=job      renumber (above); unset, empty, "off" or
 *                            "launch": MPI's ranks (another value is
 *                            reported once by world rank 0, then ignored);
 *   MPITOPO_VERBOSE=1        say once per constructor that MPI's ranks
 *                            were kept (above); print mpitopo's message
 *                            with every error
 *                            (2: also say why a call went to MPI unchanged).
 * The library's own variables (MPITOPO_EMULATE, MPITOPO_NETWORK, ...) apply
 * as usual.
 *
 * Errors: mpitopo's negative codes become an MPI error class
 * (MPI_ERR_DIMS, MPI_ERR_ARG, MPI_ERR_NO_MEM, MPI_ERR_OTHER, ...; every
 * bad argument of a graph call is MPI_ERR_ARG, the class Open MPI gives an
 * out-of-range neighbour) raised through the error handler of comm (of
 * MPI_COMM_WORLD for MPI_Dims_create, as both Open MPI and MPICH do), so
 * MPI_ERRORS_ARE_FATAL programs abort through MPI and MPI_ERRORS_RETURN
 * programs get the class.
 * Just before an abort, mpitopo's message is printed whatever
 * MPITOPO_VERBOSE says. MPI's own error codes pass through unchanged (the
 * failing PMPI call has reported them).
 *
 * The Fortran converters are in shim_fortran.c. Inside, only PMPI_* and
 * mpitopo_* are called, so the shim never calls itself.
 */
#include <mpi.h>
#include <mpitopo.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmpi/shim.h"
#include "core/env.h"

enum shim_dims { DIMS_MPI, DIMS_NODES, DIMS_BALANCED };

static struct shim_config {
    int disabled;
    enum shim_dims dims;
    int verbose;
    char bad_dims[64]; /* an MPITOPO_DIMS value that is none of the above */
    int neighbor;      /* MPITOPO_NEIGHBOR asks for mpitopo's collectives */
    char neighbor_value[64]; /* the value as given, for messages */
    int bad_neighbor;  /* neighbor_value is not one of the accepted values */
    int reorder_job;   /* MPITOPO_REORDER=job: the constructors renumber */
    char reorder_value[64]; /* the value as given, for messages */
    int bad_reorder;   /* reorder_value is not job, launch or off */
} config;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;
static pthread_once_t bad_dims_once = PTHREAD_ONCE_INIT;
static pthread_once_t bad_neighbor_once = PTHREAD_ONCE_INIT;
static pthread_once_t neighbor_said_once = PTHREAD_ONCE_INIT;
static pthread_once_t bad_reorder_once = PTHREAD_ONCE_INIT;

/* The schedule names of the library (MPITOPO_NEIGHBOR_SCHEDULES, the list
 * src/coll/neighbor/select.c reads too); the library reads the same
 * variable and runs the schedule it names. */
static const char *const schedule_names[] = MPITOPO_NEIGHBOR_SCHEDULES;

static void config_read_neighbor(void)
{
    const char *v = mpitopo__getenv(MPITOPO_ENV_NEIGHBOR);
    if (!v || !*v || strcmp(v, "off") == 0)
        return;
    snprintf(config.neighbor_value, sizeof config.neighbor_value, "%s", v);
    for (size_t i = 0; i < sizeof schedule_names / sizeof schedule_names[0]; i++)
        if (strcmp(v, schedule_names[i]) == 0)
            config.neighbor = 1;
    config.bad_neighbor = !config.neighbor;
}

/* Unset, empty, "off" or "launch": MPI's ranks (the default). */
static void config_read_reorder(void)
{
    const char *v = mpitopo__getenv(MPITOPO_ENV_REORDER);
    if (!v || !*v || strcmp(v, "off") == 0 || strcmp(v, "launch") == 0)
        return;
    snprintf(config.reorder_value, sizeof config.reorder_value, "%s", v);
    config.reorder_job = strcmp(v, "job") == 0;
    config.bad_reorder = !config.reorder_job;
}

static void config_read(void)
{
    const char *v = mpitopo__getenv(MPITOPO_ENV_DISABLE);
    config.disabled = v && *v && strcmp(v, "0") != 0;

    config.verbose = mpitopo__env_level(MPITOPO_ENV_VERBOSE);

    v = mpitopo__getenv(MPITOPO_ENV_DIMS);
    if (!v || !*v || strcmp(v, "mpi") == 0)
        config.dims = DIMS_MPI;
    else if (strcmp(v, "nodes") == 0)
        config.dims = DIMS_NODES;
    else if (strcmp(v, "balanced") == 0)
        config.dims = DIMS_BALANCED;
    else
        snprintf(config.bad_dims, sizeof config.bad_dims, "%s", v);

    config_read_neighbor();
    config_read_reorder();
}

static const struct shim_config *shim_config(void)
{
    pthread_once(&config_once, config_read);
    return &config;
}

/* One line on stderr from world rank 0 only (the other ranks would repeat it). */
static void world_root_says(const char *fmt, ...)
{
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

/* Said once (pthread_once): a setting that was not understood, rather than
 * silently ignored, and at MPITOPO_VERBOSE >= 1 which schedule the
 * intercepted collectives run, so a job log shows that the setting took. */
static void report_bad_dims(void)
{
    world_root_says("mpitopo: MPITOPO_DIMS = \"%s\" is not nodes, balanced or mpi; "
                    "MPI_Dims_create stays MPI's own\n",
                    config.bad_dims);
}

static void report_bad_neighbor(void)
{
    char known[96];
    size_t used = 0;
    for (size_t i = 0; i < sizeof schedule_names / sizeof schedule_names[0] && used < sizeof known; i++)
        used += (size_t)snprintf(known + used, sizeof known - used, "%s, ", schedule_names[i]);
    if (used >= 2 && used < sizeof known)
        known[used - 2] = '\0'; /* the last ", " */
    world_root_says("mpitopo: MPITOPO_NEIGHBOR = \"%s\" is not %s or off; the neighbourhood "
                    "collectives stay MPI's own\n",
                    config.neighbor_value, known);
}

static void report_bad_reorder(void)
{
    world_root_says("mpitopo: MPITOPO_REORDER = \"%s\" is not job, launch or off; "
                    "the topology constructors keep MPI's ranks\n",
                    config.reorder_value);
}

static void say_neighbor(void)
{
    if (config.verbose >= 1)
        world_root_says("mpitopo: MPI_Neighbor_*: mpitopo's schedules (MPITOPO_NEIGHBOR=%s)\n",
                        config.neighbor_value);
}

static int mpi_is_running(void)
{
    int init = 0, fini = 0;
    PMPI_Initialized(&init);
    PMPI_Finalized(&fini);
    return init && !fini;
}

/* Why a call goes to MPI unchanged, printed at MPITOPO_VERBOSE >= 2 by
 * rank 0 of comm (of MPI_COMM_WORLD for MPI_COMM_NULL). Returns 0, for use
 * in shim_takes. */
static int passed_on(const char *func, MPI_Comm comm, const char *why)
{
    if (config.verbose >= 2) {
        int rank = 0;
        if (mpi_is_running())
            PMPI_Comm_rank(comm != MPI_COMM_NULL ? comm : MPI_COMM_WORLD, &rank);
        if (rank == 0)
            fprintf(stderr, "mpitopo: %s: %s, calling MPI's own\n", func, why);
    }
    return 0;
}

/* Whether mpitopo handles a topology call on comm. A communicator MPI
 * should reject (MPI_COMM_NULL, an intercommunicator) goes to MPI, so that
 * MPI reports its own error. */
static int shim_takes(const char *func, MPI_Comm comm, int ndims, int topology_allowed)
{
    if (shim_config()->disabled)
        return passed_on(func, comm, "MPITOPO_DISABLE is set");
    if (!mpi_is_running())
        return passed_on(func, comm, "MPI is not initialized");
    if (comm == MPI_COMM_NULL)
        return passed_on(func, comm, "comm is MPI_COMM_NULL");
    if (ndims > MPITOPO_MAX_DIMS)
        return passed_on(func, comm, "more dimensions than MPITOPO_MAX_DIMS");
    int inter = 0;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return passed_on(func, comm, "comm is an intercommunicator");
    int topo = MPI_UNDEFINED;
    if (!topology_allowed && (PMPI_Topo_test(comm, &topo) != MPI_SUCCESS || topo != MPI_UNDEFINED))
        return passed_on(func, comm, "comm already has a topology");
    return 1;
}

/*
 * Communicators the shim has found fit for mpitopo's neighbourhood
 * collectives carry an attribute of this keyval, so that a call in a loop
 * pays one attribute lookup instead of the checks below (MPI running, an
 * intracommunicator, a topology). The keyval is made on first use and
 * dropped at MPI_Finalize (an attribute of MPI_COMM_SELF, deleted first
 * thing there), after which the checks run again and say MPI is gone.
 */
static atomic_int checked_keyval = MPI_KEYVAL_INVALID;
static pthread_mutex_t checked_lock = PTHREAD_MUTEX_INITIALIZER;

static int forget_checked(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)value, (void)extra;
    int k = atomic_exchange(&checked_keyval, MPI_KEYVAL_INVALID);
    if (k != MPI_KEYVAL_INVALID)
        PMPI_Comm_free_keyval(&k);
    PMPI_Comm_free_keyval(&keyval);
    return MPI_SUCCESS;
}

static int was_checked(MPI_Comm comm)
{
    int k = atomic_load(&checked_keyval), found = 0;
    void *v;
    return k != MPI_KEYVAL_INVALID && comm != MPI_COMM_NULL &&
           PMPI_Comm_get_attr(comm, k, &v, &found) == MPI_SUCCESS && found;
}

static void mark_checked(MPI_Comm comm)
{
    pthread_mutex_lock(&checked_lock);
    if (atomic_load(&checked_keyval) == MPI_KEYVAL_INVALID) {
        int k, fin;
        if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k, NULL) ==
                MPI_SUCCESS &&
            PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, forget_checked, &fin, NULL) ==
                MPI_SUCCESS &&
            PMPI_Comm_set_attr(MPI_COMM_SELF, fin, NULL) == MPI_SUCCESS)
            atomic_store(&checked_keyval, k);
    }
    int k = atomic_load(&checked_keyval);
    pthread_mutex_unlock(&checked_lock);
    if (k != MPI_KEYVAL_INVALID)
        PMPI_Comm_set_attr(comm, k, NULL);
}

int mpitopo__shim_neighbor_takes(const char *func, MPI_Comm comm)
{
    const struct shim_config *c = shim_config();
    /* Off is the default: no message per call, these run in loops. */
    if (!c->neighbor) {
        if (c->bad_neighbor && mpi_is_running())
            pthread_once(&bad_neighbor_once, report_bad_neighbor);
        return 0;
    }
    if (was_checked(comm))
        return 1;
    /* MPI_COMM_NULL, an intercommunicator or a communicator without a
     * topology goes to MPI, which reports its own error class. */
    if (!shim_takes(func, comm, 0, 1))
        return 0;
    int topo = MPI_UNDEFINED;
    if (PMPI_Topo_test(comm, &topo) != MPI_SUCCESS || topo == MPI_UNDEFINED)
        return passed_on(func, comm, "comm has no topology");
    pthread_once(&neighbor_said_once, say_neighbor);
    mark_checked(comm);
    return 1;
}

/* Whether an error raised on comm will end the program. */
static int handler_aborts(MPI_Comm comm)
{
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    if (PMPI_Comm_get_errhandler(comm, &eh) != MPI_SUCCESS)
        return 0;
    int aborts = eh == MPI_ERRORS_ARE_FATAL;
#ifdef MPI_ERRORS_ABORT
    aborts = aborts || eh == MPI_ERRORS_ABORT;
#endif
    PMPI_Errhandler_free(&eh);
    return aborts;
}

int mpitopo__shim_raise(const char *func, MPI_Comm comm, int mpi_class, const char *why)
{
    if (shim_config()->verbose >= 1 || handler_aborts(comm)) {
        char text[MPI_MAX_ERROR_STRING] = "";
        int len = 0;
        PMPI_Error_string(mpi_class, text, &len);
        fprintf(stderr, "mpitopo: %s fails with %s: %s\n", func, text, why);
    }
    PMPI_Comm_call_errhandler(comm, mpi_class);
    return mpi_class;
}

/* What the MPI function returns for mpitopo's result rc. */
static int shim_result(const char *func, MPI_Comm comm, int rc, int mpi_class)
{
    if (rc >= 0)
        return rc;
    return mpitopo__shim_raise(func, comm, mpi_class, mpitopo_last_error());
}

/* The MPI error class of a failed Cartesian call. mpitopo reports every
 * bad argument as MPITOPO_ERR_ARG; MPI tells bad dimensions (MPI_ERR_DIMS)
 * from other bad arguments, which the caller's arguments show. */
static int cart_error_class(int rc, int ndims, const int dims[])
{
    switch (rc) {
    case MPITOPO_ERR_NOMEM:
        return MPI_ERR_NO_MEM;
    case MPITOPO_ERR_UNSUPPORTED:
        return MPI_ERR_UNSUPPORTED_OPERATION;
    case MPITOPO_ERR_MISMATCH: /* arguments differ between processes */
        return MPI_ERR_ARG;
    case MPITOPO_ERR_ARG:
        if (ndims < 0)
            return MPI_ERR_DIMS;
        for (int i = 0; dims && i < ndims; i++)
            if (dims[i] < 1)
                return MPI_ERR_DIMS;
        return MPI_ERR_ARG;
    default: /* a bad MPITOPO_EMULATE or MPITOPO_NETWORK, an internal error */
        return MPI_ERR_OTHER;
    }
}

static int dims_error_class(int rc)
{
    switch (rc) {
    case MPITOPO_ERR_NOMEM:
        return MPI_ERR_NO_MEM;
    case MPITOPO_ERR_ARG:   /* nnodes < 1, ndims < 0, a negative entry */
    case MPITOPO_ERR_RANGE: /* the fixed entries do not divide nnodes */
        return MPI_ERR_DIMS;
    default:
        return MPI_ERR_OTHER;
    }
}

/* The MPI error class of a failed graph or dist-graph call. mpitopo
 * reports every bad argument (a negative degree, a neighbour out of range
 * or MPI_PROC_NULL, a negative weight) as MPITOPO_ERR_ARG and weights given
 * on some processes only as MPITOPO_ERR_MISMATCH: both are MPI_ERR_ARG. A
 * bad info value, a bad MPITOPO_EMULATE or an internal error is
 * MPI_ERR_OTHER (mpitopo's message tells which). */
static int graph_error_class(int rc)
{
    switch (rc) {
    case MPITOPO_ERR_NOMEM:
        return MPI_ERR_NO_MEM;
    case MPITOPO_ERR_UNSUPPORTED:
        return MPI_ERR_UNSUPPORTED_OPERATION;
    case MPITOPO_ERR_ARG:
    case MPITOPO_ERR_MISMATCH:
        return MPI_ERR_ARG;
    default:
        return MPI_ERR_OTHER;
    }
}

/*
 * Renumbering. MPI-4.1 section 8.5.4: after a reorder, the process of rank
 * k in the new communicator plays the role rank k described, so only a
 * program that takes its rank, coordinates and data from the new
 * communicator survives one. Many real programs do not (they use the new
 * ranks on MPI_COMM_WORLD, or free the communicator and keep its
 * coordinates): the shim renumbers only when told that the program honours
 * the rule, and otherwise creates the communicator with MPI's ranks.
 */

/* What a value of the info key mpitopo_reorder says: 1 renumber, 0 keep
 * MPI's ranks, -1 nothing (the next source decides). */
static int reorder_word(const char *v)
{
    if (strcmp(v, "job") == 0)
        return 1;
    if (strcmp(v, "launch") == 0 || strcmp(v, "off") == 0 || strcmp(v, "false") == 0 ||
        strcmp(v, "0") == 0)
        return 0;
    return -1;
}

/* The key mpitopo_reorder in info (a dist-graph call's), as reorder_word. */
static int reorder_of_info(MPI_Info info)
{
    char v[64];
    int flag = 0;
    if (info == MPI_INFO_NULL)
        return -1;
#if MPI_VERSION >= 4
    int len = (int)sizeof v;
    if (PMPI_Info_get_string(info, "mpitopo_reorder", &len, v, &flag) != MPI_SUCCESS || !flag ||
        len > (int)sizeof v)
        return -1;
#else
    /* MPICH fails MPI_Info_get on a value longer than the buffer. */
    int len = 0;
    if (PMPI_Info_get_valuelen(info, "mpitopo_reorder", &len, &flag) != MPI_SUCCESS || !flag ||
        len >= (int)sizeof v ||
        PMPI_Info_get(info, "mpitopo_reorder", (int)sizeof v - 1, v, &flag) != MPI_SUCCESS || !flag)
        return -1;
#endif
    return reorder_word(v);
}

/* Whether the program asked for renumbering: the info of the call, then
 * comm's key (mpitopo_comm_get_info: kept on every MPI), then
 * MPITOPO_REORDER. Local: every process must be given the same. */
static int renumbering_asked(MPI_Comm comm, MPI_Info info)
{
    const struct shim_config *c = shim_config();
    if (c->bad_reorder)
        pthread_once(&bad_reorder_once, report_bad_reorder);
    int says = reorder_of_info(info);
    char v[64];
    int found = 0;
    if (says < 0 && mpitopo_comm_get_info(comm, "mpitopo_reorder", (int)sizeof v, v, &found) ==
                        MPITOPO_SUCCESS && found)
        says = reorder_word(v);
    return says < 0 ? c->reorder_job : says > 0;
}

/* The constructors that said "kept MPI's ranks" in this process. */
enum { KEPT_CART, KEPT_GRAPH, KEPT_DIST_ADJACENT, KEPT_DIST, KEPT_N };
static atomic_int kept_said[KEPT_N];

/* At MPITOPO_VERBOSE >= 1, rank 0 of comm says once per constructor that
 * MPI's ranks were kept, what renumbering would gain (gain: "" when not
 * computed) and how to get it. */
static void say_kept(const char *func, int which, MPI_Comm comm, const char *gain)
{
    int rank = 0;
    if (PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS || rank != 0 ||
        atomic_exchange(&kept_said[which], 1))
        return;
    fprintf(stderr,
            "mpitopo: %s: kept MPI's ranks (%s%sset MPITOPO_REORDER=job if the program uses the "
            "new ranks)\n",
            func, gain, *gain ? "; " : "");
}

/* The off-node partners of a grid placed with leaf[c] the leaf of grid
 * position c, on rank 0 of comm. */
static int cart_offnode(const mpitopo_machine_t *m, const mpitopo_pattern_t *grid,
                        const int *leaf, double *avg)
{
    mpitopo_metrics_t x;
    int rc = mpitopo_metrics_compute(m, grid, leaf, MPITOPO_WEIGHT_BYTES, &x);
    if (rc == MPITOPO_SUCCESS)
        *avg = x.offnode_partners.avg;
    return rc;
}

/* Into gain, on rank 0 of comm, what renumbering the grid would do to the
 * off-node partners: mpitopo_cart_map's positions against MPI's (rank c at
 * position c). Collective over comm (the machine, the mapping, one
 * allgather): every process calls it, after PMPI_Cart_create succeeded.
 * Nothing is written when a step fails; nothing fails. */
static void cart_gain(MPI_Comm comm, int ndims, const int dims[], const int periods[], char *gain,
                      size_t len)
{
    int size = 0, rank = 0, n = 1, newrank = MPI_UNDEFINED;
    PMPI_Comm_size(comm, &size);
    PMPI_Comm_rank(comm, &rank);
    for (int i = 0; i < ndims; i++)
        n *= dims[i];
    int *leaf = malloc((size_t)size * sizeof *leaf), *new_of = malloc((size_t)size * sizeof *new_of);
    int *mapped = malloc((size_t)n * sizeof *mapped);
    /* Everyone takes the same path: give up together when memory lacks. */
    int ok = leaf && new_of && mapped, all = 0;
    PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
    mpitopo_machine_t *m = NULL;
    mpitopo_pattern_t *grid = NULL;
    if (all && ndims > 0) {
        int mrc = mpitopo_comm_machine(comm, &m, leaf);
        int crc = mpitopo_cart_map(comm, ndims, dims, periods, &newrank);
        PMPI_Allgather(&newrank, 1, MPI_INT, new_of, 1, MPI_INT, comm);
        ok = rank == 0 && mrc == MPITOPO_SUCCESS && crc == MPITOPO_SUCCESS;
    } else {
        ok = 0;
    }
    if (ok) {
        char desc[64 + MPITOPO_MAX_DIMS * 24];
        size_t k = (size_t)snprintf(desc, sizeof desc, "cart:");
        for (int i = 0; i < ndims; i++)
            k += (size_t)snprintf(desc + k, sizeof desc - k, "%s%d", i ? "x" : "", dims[i]);
        k += (size_t)snprintf(desc + k, sizeof desc - k, ":periods=");
        for (int i = 0; i < ndims; i++)
            k += (size_t)snprintf(desc + k, sizeof desc - k, "%s%d", i ? "," : "", periods[i] != 0);
        for (int c = 0; c < n; c++)
            mapped[c] = -1;
        for (int r = 0; r < size; r++)
            if (new_of[r] >= 0 && new_of[r] < n)
                mapped[new_of[r]] = leaf[r];
        for (int c = 0; c < n; c++)
            ok = ok && mapped[c] >= 0;
        double before, after;
        if (ok && mpitopo_pattern_from_string(desc, &grid) == MPITOPO_SUCCESS &&
            cart_offnode(m, grid, leaf, &before) == MPITOPO_SUCCESS &&
            cart_offnode(m, grid, mapped, &after) == MPITOPO_SUCCESS) {
            if (after < before)
                snprintf(gain, len, "reordering would take off-node partners avg %.2f -> %.2f",
                         before, after);
            else
                snprintf(gain, len, "reordering would not lower off-node partners avg %.2f",
                         before);
        }
    }
    mpitopo_pattern_destroy(&grid);
    mpitopo_machine_destroy(&m);
    free(mapped);
    free(new_of);
    free(leaf);
}

/* Whether comm's processes compute the gain (a mapping) this time: once per
 * process, agreed over comm so that all of them take the same path (one
 * may have done it already on another communicator). */
static atomic_int cart_gain_done;
static int cart_gain_wanted(MPI_Comm comm)
{
    int first = !atomic_exchange(&cart_gain_done, 1), any = 0;
    return PMPI_Allreduce(&first, &any, 1, MPI_INT, MPI_MAX, comm) == MPI_SUCCESS && any;
}

int mpitopo__shim_cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[],
                              int reorder, MPI_Comm *newcomm)
{
    static const char func[] = "MPI_Cart_create";
    if (!reorder || !shim_takes(func, comm, ndims, 0))
        return PMPI_Cart_create(comm, ndims, dims, periods, reorder, newcomm);
    if (!renumbering_asked(comm, MPI_INFO_NULL)) {
        int rc = PMPI_Cart_create(comm, ndims, dims, periods, 0, newcomm);
        if (rc == MPI_SUCCESS && shim_config()->verbose >= 1 && cart_gain_wanted(comm)) {
            char gain[160] = "";
            cart_gain(comm, ndims, dims, periods, gain, sizeof gain);
            say_kept(func, KEPT_CART, comm, gain);
        }
        return rc;
    }
    int rc = mpitopo_cart_create(comm, ndims, dims, periods, reorder, newcomm);
    if (rc == MPITOPO_SUCCESS)
        mpitopo__shim_watch(func, comm, *newcomm);
    return shim_result(func, comm, rc, cart_error_class(rc, ndims, dims));
}

int mpitopo__shim_cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[],
                           int *newrank)
{
    static const char func[] = "MPI_Cart_map";
    if (!shim_takes(func, comm, ndims, 1) || !renumbering_asked(comm, MPI_INFO_NULL))
        return PMPI_Cart_map(comm, ndims, dims, periods, newrank);
    int rc = mpitopo_cart_map(comm, ndims, dims, periods, newrank);
    return shim_result(func, comm, rc, cart_error_class(rc, ndims, dims));
}

int mpitopo__shim_dims_create(int nnodes, int ndims, int dims[])
{
    static const char func[] = "MPI_Dims_create";
    const struct shim_config *c = shim_config();
    if (c->bad_dims[0] && mpi_is_running())
        pthread_once(&bad_dims_once, report_bad_dims);
    if (c->disabled || c->dims == DIMS_MPI || ndims > MPITOPO_MAX_DIMS)
        return PMPI_Dims_create(nnodes, ndims, dims);

    int rc, world_size = -1;
    if (c->dims == DIMS_NODES && mpi_is_running())
        PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
    if (nnodes == world_size)
        rc = mpitopo_comm_dims_create(MPI_COMM_WORLD, ndims, dims);
    else
        rc = mpitopo_dims_create(nnodes, ndims, dims);
    if (rc >= 0)
        return rc;
    if (!mpi_is_running()) /* no error handler to call yet */
        return dims_error_class(rc);
    return shim_result(func, MPI_COMM_WORLD, rc, dims_error_class(rc));
}

/*
 * mpitopo's own info keys (mpitopo_neighbor, mpitopo_combine_threshold):
 * MPICH keeps no info key it does not know, so after MPI's call the keys
 * of info are also kept with mpitopo_comm_set_info, on every MPI (one
 * place for the library to read them). replace: comm's keys become exactly
 * those of info (MPI_Comm_dup_with_info), instead of being updated. rc is
 * MPI's result.
 */
static int keep_info_keys(const char *func, MPI_Comm comm, MPI_Info info, int rc, int replace)
{
    if (rc != MPI_SUCCESS || shim_config()->disabled || comm == MPI_COMM_NULL || !mpi_is_running())
        return rc;
    int mrc = replace ? mpitopo_comm_set_info(comm, MPI_INFO_NULL) : MPITOPO_SUCCESS;
    if (mrc == MPITOPO_SUCCESS && info != MPI_INFO_NULL)
        mrc = mpitopo_comm_set_info(comm, info);
    return shim_result(func, comm, mrc, mrc == MPITOPO_ERR_NOMEM ? MPI_ERR_NO_MEM : MPI_ERR_INFO_VALUE);
}

int mpitopo__shim_comm_set_info(MPI_Comm comm, MPI_Info info)
{
    return keep_info_keys("MPI_Comm_set_info", comm, info, PMPI_Comm_set_info(comm, info), 0);
}

int mpitopo__shim_comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    int rc = PMPI_Comm_dup_with_info(comm, info, newcomm);
    return keep_info_keys("MPI_Comm_dup_with_info", rc == MPI_SUCCESS ? *newcomm : MPI_COMM_NULL, info, rc, 1);
}

/* The graph calls take no dimensions: 0 for shim_takes. */
int mpitopo__shim_dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[],
                                             const int sourceweights[], int outdegree,
                                             const int destinations[], const int destweights[],
                                             MPI_Info info, int reorder, MPI_Comm *newcomm)
{
    static const char func[] = "MPI_Dist_graph_create_adjacent";
    int takes = reorder && shim_takes(func, comm, 0, 0);
    if (!takes || !renumbering_asked(comm, info)) {
        int rc = PMPI_Dist_graph_create_adjacent(comm, indegree, sources, sourceweights, outdegree,
                                                 destinations, destweights, info, takes ? 0 : reorder,
                                                 newcomm);
        rc = keep_info_keys(func, rc == MPI_SUCCESS ? *newcomm : MPI_COMM_NULL, info, rc, 0);
        if (takes && rc == MPI_SUCCESS && shim_config()->verbose >= 1)
            say_kept(func, KEPT_DIST_ADJACENT, comm, "");
        return rc;
    }
    int rc = mpitopo_dist_graph_create_adjacent(comm, indegree, sources, sourceweights, outdegree,
                                                destinations, destweights, info, reorder, newcomm);
    if (rc == MPITOPO_SUCCESS)
        mpitopo__shim_watch(func, comm, *newcomm);
    return shim_result(func, comm, rc, graph_error_class(rc));
}

int mpitopo__shim_dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[],
                                    const int destinations[], const int weights[], MPI_Info info,
                                    int reorder, MPI_Comm *newcomm)
{
    static const char func[] = "MPI_Dist_graph_create";
    int takes = reorder && shim_takes(func, comm, 0, 0);
    if (!takes || !renumbering_asked(comm, info)) {
        int rc = PMPI_Dist_graph_create(comm, n, sources, degrees, destinations, weights, info,
                                        takes ? 0 : reorder, newcomm);
        rc = keep_info_keys(func, rc == MPI_SUCCESS ? *newcomm : MPI_COMM_NULL, info, rc, 0);
        if (takes && rc == MPI_SUCCESS && shim_config()->verbose >= 1)
            say_kept(func, KEPT_DIST, comm, "");
        return rc;
    }
    int rc = mpitopo_dist_graph_create(comm, n, sources, degrees, destinations, weights, info,
                                       reorder, newcomm);
    if (rc == MPITOPO_SUCCESS)
        mpitopo__shim_watch(func, comm, *newcomm);
    return shim_result(func, comm, rc, graph_error_class(rc));
}

int mpitopo__shim_graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[],
                               int reorder, MPI_Comm *newcomm)
{
    static const char func[] = "MPI_Graph_create";
    if (!reorder || !shim_takes(func, comm, 0, 0))
        return PMPI_Graph_create(comm, nnodes, index, edges, reorder, newcomm);
    if (!renumbering_asked(comm, MPI_INFO_NULL)) {
        int rc = PMPI_Graph_create(comm, nnodes, index, edges, 0, newcomm);
        if (rc == MPI_SUCCESS && shim_config()->verbose >= 1)
            say_kept(func, KEPT_GRAPH, comm, "");
        return rc;
    }
    int rc = mpitopo_graph_create(comm, nnodes, index, edges, reorder, newcomm);
    if (rc == MPITOPO_SUCCESS)
        mpitopo__shim_watch(func, comm, *newcomm);
    return shim_result(func, comm, rc, graph_error_class(rc));
}

int mpitopo__shim_graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[],
                            int *newrank)
{
    static const char func[] = "MPI_Graph_map";
    if (!shim_takes(func, comm, 0, 1) || !renumbering_asked(comm, MPI_INFO_NULL))
        return PMPI_Graph_map(comm, nnodes, index, edges, newrank);
    int rc = mpitopo_graph_map(comm, nnodes, index, edges, newrank);
    return shim_result(func, comm, rc, graph_error_class(rc));
}
