/*
 * mpitopo-job: run under mpirun to see the machine an MPI job runs on, as
 * mpitopo discovers it (real nodes, or MPITOPO_EMULATE), where the launcher
 * put each rank, and what that placement costs a Cartesian halo exchange of
 * the job's size next to the best node-aware layout.
 *
 *   mpirun -n 16 mpitopo-job [NDIMS]        (default NDIMS = 2)
 *
 * Its last line tells how to launch a program with a placement fitted to its
 * traffic (mpitopo run); the lines above it are read by scripts and stay as
 * they are.
 */
#include <mpitopo.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* help2man makes the man page from this text and from --version. */
static const char *help =
    "Usage: mpitopo-job [NDIMS]\n"
    "  or:  mpitopo-job --help | --version\n"
    "\n"
    "Run under the MPI launcher (mpirun -n 16 mpitopo-job) to see the machine the\n"
    "job runs on as mpitopo discovers it: the nodes (real, or emulated with\n"
    "MPITOPO_EMULATE), how many ranks each holds, the levels inside and above a\n"
    "node and where those above it come from (MPITOPO_NETWORK, emulation, or in\n"
    "a Slurm job Slurm's switches), and which ranks the launcher put on every\n"
    "node. Rank 0 then prints\n"
    "what this placement costs a periodic halo exchange on an NDIMS-dimensional\n"
    "grid of the job's size (dimensions from MPI_Dims_create, ranks as\n"
    "MPI_Cart_create keeps them): distinct off-node and on-node partners per\n"
    "process (min, max, avg), and the off-node partners of the best node-aware\n"
    "layout, where every node holds one box of the grid. Its last line gives the\n"
    "command that launches a program with a placement fitted to its own traffic\n"
    "on this job's nodes (mpitopo run, see mpitopo help run).\n"
    "\n"
    "Arguments:\n"
    "  NDIMS                 dimensions of the grid: 1, 2 (default) or 3\n"
    "\n"
    "Options:\n"
    "  -h, --help            print this help and exit\n"
    "  -V, --version         print the version of mpitopo and of the MPI library,\n"
    "                        and exit\n"
    "\n"
    "Environment:\n"
    "  MPITOPO_EMULATE       a machine description with a \"node\" level, e.g.\n"
    "                        \"node:4 core:4\": see the job placed on that machine\n"
    "                        instead of the real nodes (at least one leaf per\n"
    "                        rank)\n"
    "  MPITOPO_EMULATE_PLACEMENT\n"
    "                        block (default), rr or random:SEED: how the ranks are\n"
    "                        laid on the emulated leaves\n"
    "  MPITOPO_NETWORK       network levels above the nodes, e.g. \"switch:8\"\n"
    "                        (nodes grouped 8 by 8)\n"
    "  MPITOPO_SLURM         off: in a Slurm job, no levels above the nodes\n"
    "                        from Slurm's topology (default: from the tasks'\n"
    "                        SLURM_TOPOLOGY_ADDR, else topology.conf)\n"
    "  MPITOPO_SLURM_TOPOLOGY\n"
    "                        the topology.conf to read (default: beside\n"
    "                        SLURM_CONF, else /etc/slurm/topology.conf)\n"
    "  MPITOPO_VERBOSE       1: warnings; 2: details of the node discovery from\n"
    "                        every process\n"
    "\n"
    "Exit status:\n"
    "  0 on success, 1 on an error (with a message on standard error)\n"
    "\n"
    "Examples:\n"
    "  $ mpirun -n 16 mpitopo-job\n"
    "  $ MPITOPO_EMULATE=\"node:4 core:4\" MPITOPO_EMULATE_PLACEMENT=rr mpirun -n 16 mpitopo-job 3\n";

/* The version of mpitopo, and of the MPI library (which MPI allows before
 * MPI_Init). */
static int print_version(void)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0, major = 0, minor = 0;
    printf("mpitopo-job %s\n", MPITOPO_VERSION_STRING);
    MPI_Get_version(&major, &minor);
    if (MPI_Get_library_version(lib, &len) == MPI_SUCCESS && len > 0) {
        lib[strcspn(lib, "\r\n,")] = '\0';
        printf("MPI %d.%d: %s\n", major, minor, lib);
    }
    return 0;
}

static int report(const char *what, int rc)
{
    const char *detail = mpitopo_last_error();
    fprintf(stderr, "mpitopo-job: %s failed: %s\n", what,
            rc > 0 ? "MPI error" : detail[0] ? detail : mpitopo_strerror(rc));
    return 1;
}

static void print_nodes(const mpitopo_machine_t *m, const int *leaf_of_rank, int size)
{
    int node_level, nnodes;
    mpitopo_machine_node_level(m, &node_level);
    mpitopo_machine_level(m, node_level, NULL, NULL, &nnodes, NULL, NULL);
    for (int u = 0; u < nnodes; u++) {
        printf("  node %d: ranks", u);
        for (int r = 0; r < size; r++) {
            int unit;
            mpitopo_machine_unit_of(m, node_level, leaf_of_rank[r], &unit);
            if (unit == u)
                printf(" %d", r);
        }
        printf("\n");
    }
}

static int evaluate(const mpitopo_machine_t *m, const int *leaf_of_rank, int size, int ndims)
{
    int dims[3] = {0, 0, 0};
    MPI_Dims_create(size, ndims, dims);
    mpitopo_pattern_t *p = NULL;
    int rc = mpitopo_pattern_cart(ndims, dims, NULL, NULL, &p);
    if (rc != MPITOPO_SUCCESS)
        return report("mpitopo_pattern_cart", rc);
    mpitopo_metrics_t met;
    rc = mpitopo_metrics_compute(m, p, leaf_of_rank, MPITOPO_WEIGHT_BYTES, &met);
    if (rc == MPITOPO_SUCCESS) {
        char grid[64] = "";
        for (int i = 0, n = 0; i < ndims; i++)
            n += snprintf(grid + n, sizeof grid - (size_t)n, "%s%d", i ? "x" : "", dims[i]);
        printf("periodic %s halo exchange (dims from MPI_Dims_create) on this placement, as MPI_Cart_create keeps it:\n",
               grid);
        printf("  off-node partners per process  min %g  max %g  avg %.2f\n", met.offnode_partners.min,
               met.offnode_partners.max, met.offnode_partners.avg);
        printf("  on-node partners per process   min %g  max %g  avg %.2f\n", met.onnode_partners.min,
               met.onnode_partners.max, met.onnode_partners.avg);
        if (met.box_bound.found)
            printf("  best node-aware layout (boxes of one node): off-node partners avg %.2f\n",
                   met.box_bound.offnode_partners_avg);
        else
            printf("  (no box tiling: nodes are uneven or a node's size does not fit the grid)\n");
    } else {
        report("mpitopo_metrics_compute", rc);
    }
    mpitopo_pattern_destroy(&p);
    return rc != MPITOPO_SUCCESS;
}

/* The launcher that started the job, as its environment tells: Open MPI's
 * mpirun (orterun) gives its processes its URI, also inside a Slurm job
 * where its daemons run under srun; srun gives SLURM_STEP_ID (so does a
 * launcher whose proxies srun started, such as Hydra in a Slurm job);
 * anything else is named mpiexec, MPI's standard name. Only the hint's
 * wording depends on it: mpitopo run tells the launcher by its --version. */
static const char *launcher_name(void)
{
    if (getenv("OMPI_MCA_orte_hnp_uri"))
        return "mpirun";
    if (getenv("SLURM_STEP_ID"))
        return "srun";
    return "mpiexec";
}

/* Parses the command line before MPI_Init, so that --help and --version
 * work without a launcher; 0 to run, else the exit status + 1. */
static int parse_args(int argc, char **argv, int *ndims)
{
    *ndims = 2;
    if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))
        return fputs(help, stdout), 1;
    if (argc > 1 && (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")))
        return print_version() + 1;
    if (argc > 2 || (argc == 2 && (strlen(argv[1]) != 1 || argv[1][0] < '1' || argv[1][0] > '3'))) {
        fprintf(stderr, "mpitopo-job: expected at most one argument NDIMS, 1, 2 or 3, not '%s'\n"
                        "Run 'mpitopo-job --help' for the usage.\n", argv[argc > 2 ? 2 : 1]);
        return 2;
    }
    if (argc == 2)
        *ndims = argv[1][0] - '0';
    return 0;
}

int main(int argc, char **argv)
{
    int ndims, rc = parse_args(argc, argv, &ndims);
    if (rc)
        return rc - 1;
    MPI_Init(&argc, &argv);
    int rank, size, status = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const mpitopo_nodeinfo_t *info;
    mpitopo_machine_t *m = NULL;
    int *leaf_of_rank = malloc((size_t)size * sizeof *leaf_of_rank);
    if (!leaf_of_rank) {
        /* The others are in a collective call by now: take the job down. */
        fprintf(stderr, "mpitopo-job: out of memory on rank %d\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if ((rc = mpitopo_comm_nodeinfo(MPI_COMM_WORLD, &info)) != MPITOPO_SUCCESS)
        status = report("mpitopo_comm_nodeinfo", rc);
    else if ((rc = mpitopo_comm_machine(MPI_COMM_WORLD, &m, leaf_of_rank)) != MPITOPO_SUCCESS)
        status = report("mpitopo_comm_machine", rc);
    /* Collective: every rank asks (the machine is cached on the first call). */
    char above[320] = "";
    if (!status && (rc = mpitopo_comm_machine_source(MPI_COMM_WORLD, above, sizeof above)) != MPITOPO_SUCCESS)
        status = report("mpitopo_comm_machine_source", rc);
    if (!status && rank == 0) {
        char desc[256];
        mpitopo_machine_describe(m, desc, sizeof desc);
        printf("%d ranks on %d %s nodes (%d to %d ranks per node); machine %s\n", size, info->nnodes,
               info->emulated ? "emulated" : "real", info->min_local_size, info->max_local_size, desc);
        printf("levels above the nodes: %s\n", above);
        print_nodes(m, leaf_of_rank, size);
        status = evaluate(m, leaf_of_rank, size, ndims);
        if (!status)
            printf("for a placement fitted to a program's traffic, launch it with: "
                   "mpitopo run -- %s -n %d PROGRAM [ARGS...]\n",
                   launcher_name(), size);
    }
    mpitopo_machine_destroy(&m);
    free(leaf_of_rank);
    MPI_Finalize();
    return status;
}
