/*
 * libmpitopo_shim: the recording run of `mpitopo run`, at MPI_Finalize (the
 * tracer's binding, compiled into the shim: mpitopo__trace_finalize calls
 * mpitopo__shim_record_placement).
 *
 * When MPITOPO_RUN_RECORD=PATH is set (by `mpitopo run`, never by hand),
 * the tracer compiled into the shim has counted what every process sent
 * (point-to-point sends, and the neighbourhood collectives' blocks to each
 * out-neighbour, in MPI_COMM_WORLD ranks). At MPI_Finalize rank 0 holds
 * that traffic; every process takes part in building the job's machine
 * (mpitopo_comm_machine of MPI_COMM_WORLD: the real nodes, hwloc inside
 * them, emulation and the network when given) and in gathering the host
 * names. Rank 0 then maps the traffic onto the machine from the launch
 * placement (never worse: the launch is kept unless the mapping costs
 * less), and writes
 *   PATH.pattern  the traffic (the pattern file format of mpitopo_pattern_write);
 *   PATH          the machine, the off-node bytes and cost of the launch and
 *                 of the mapping, every node (host name, leaves, cores) and every
 *                 rank's node and slot, before and after;
 * each to a temporary name first and renamed, PATH last, so that a run that
 * dies leaves no PATH behind. Nothing about the program's run changes:
 * rank 0 only computes, after the program's last call.
 */
#include <mpi.h>
#include <mpitopo.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/env.h"
#include "pmpi/shim.h"
#include "pmpi/trace/trace.h"

enum { NAME = MPI_MAX_PROCESSOR_NAME };

static void say(const char *path, const char *why)
{
    fprintf(stderr, "mpitopo run: the recording run wrote no placement to %s: %s\n", path, why);
}

/* The bytes crossing the node level, and the weighted cost. */
static int measure(const mpitopo_machine_t *m, const mpitopo_pattern_t *p, const int *leaf, double *offnode,
                   double *cost)
{
    mpitopo_metrics_t mt;
    int node_level = -1, rc = mpitopo_metrics_compute(m, p, leaf, MPITOPO_WEIGHT_BYTES, &mt);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    mpitopo_machine_node_level(m, &node_level);
    *offnode = node_level >= 0 ? mt.levels[node_level].weight_crossing : 0;
    *cost = mt.cost;
    return MPITOPO_SUCCESS;
}

/* Node unit and slot (leaf index inside the node) of a leaf. */
static void node_slot(const mpitopo_machine_t *m, int node_level, int leaf, int *node, int *slot)
{
    int first = leaf, count = 1;
    *node = 0;
    if (node_level >= 0) {
        mpitopo_machine_unit_of(m, node_level, leaf, node);
        mpitopo_machine_unit_leaves(m, node_level, *node, &first, &count);
    }
    *slot = leaf - first;
}

static int write_placement(FILE *f, const mpitopo_machine_t *m, int size, const int *launch, const int *mapped,
                           const char *names, const int *cores, const char *mapper, int kept, const double *off,
                           const double *cost)
{
    char desc[512] = "";
    int node_level = -1, nnodes = 1;
    mpitopo_machine_describe(m, desc, sizeof desc);
    mpitopo_machine_node_level(m, &node_level);
    if (node_level >= 0)
        mpitopo_machine_level(m, node_level, NULL, NULL, &nnodes, NULL, NULL);
    fprintf(f, "# mpitopo placement 1\n");
    fprintf(f, "nprocs %d\nmachine %s\nmapper %s%s\n", size, desc, mapper, kept ? " (launch kept)" : "");
    fprintf(f, "offnode_bytes %.17g %.17g\ncost %.17g %.17g\n", off[0], off[1], cost[0], cost[1]);
    fprintf(f, "nodes %d\n", nnodes);
    for (int u = 0; u < nnodes; u++) {
        int first = 0, count = 0;
        if (node_level >= 0)
            mpitopo_machine_unit_leaves(m, node_level, u, &first, &count);
        else
            mpitopo_machine_nleaves(m, &count);
        const char *host = "-";
        int ncores = 0;
        for (int r = 0; r < size; r++)
            if (launch[r] >= first && launch[r] < first + count) {
                host = names + (size_t)r * NAME;
                ncores = cores[r];
                break;
            }
        fprintf(f, "node %d %s %d %d\n", u, *host ? host : "-", count, ncores);
    }
    fprintf(f, "# rank node slot leaf launch_node launch_slot launch_leaf\n");
    for (int r = 0; r < size; r++) {
        int n1, s1, n0, s0;
        node_slot(m, node_level, mapped[r], &n1, &s1);
        node_slot(m, node_level, launch[r], &n0, &s0);
        fprintf(f, "rank %d %d %d %d %d %d %d\n", r, n1, s1, mapped[r], n0, s0, launch[r]);
    }
    fprintf(f, "end\n");
    return ferror(f) ? -1 : 0;
}

/* Rank 0: map, write the two files atomically. */
static void root_record(const char *path, const mpitopo_pattern_t *traffic, const mpitopo_machine_t *m, int size,
                        const int *launch, const char *names, const int *cores)
{
    if (!traffic) {
        say(path, "the traffic could not be gathered (out of memory)");
        return;
    }
    int *mapped = malloc((size_t)size * sizeof *mapped);
    size_t plen = strlen(path) + 64;
    char *tmp = malloc(plen), *pat = malloc(plen), *pat_tmp = malloc(plen);
    if (!mapped || !tmp || !pat || !pat_tmp) {
        say(path, "out of memory");
        goto done;
    }
    const char *mapper = mpitopo__getenv(MPITOPO_ENV_MAPPER);
    if (!mapper || !*mapper)
        mapper = "tree";
    mpitopo_map_options_t opt = MPITOPO_MAP_OPTIONS_INIT;
    opt.weight = MPITOPO_WEIGHT_BYTES;
    opt.launch = launch;
    opt.never_worse = 1;
    int kept = 0;
    double off[2], cost[2];
    if (mpitopo_map(mapper, m, traffic, &opt, mapped, &kept) != MPITOPO_SUCCESS ||
        measure(m, traffic, launch, &off[0], &cost[0]) != MPITOPO_SUCCESS ||
        measure(m, traffic, mapped, &off[1], &cost[1]) != MPITOPO_SUCCESS) {
        say(path, mpitopo_last_error());
        goto done;
    }
    snprintf(tmp, plen, "%s.tmp.%ld", path, (long)getpid());
    snprintf(pat, plen, "%s.pattern", path);
    snprintf(pat_tmp, plen, "%s.pattern.tmp.%ld", path, (long)getpid());
    if (mpitopo_pattern_write(traffic, pat_tmp) != MPITOPO_SUCCESS || rename(pat_tmp, pat) != 0) {
        unlink(pat_tmp);
        say(path, "cannot write the traffic");
        goto done;
    }
    FILE *f = fopen(tmp, "w");
    int bad = !f || write_placement(f, m, size, launch, mapped, names, cores, mapper, kept, off, cost) != 0;
    if (f && fclose(f) != 0)
        bad = 1;
    if (bad || rename(tmp, path) != 0) {
        unlink(tmp);
        say(path, "cannot write the file");
    }
done:
    free(mapped);
    free(tmp);
    free(pat);
    free(pat_tmp);
}

void mpitopo__shim_record_placement(const char *path, int root, const mpitopo_pattern_t *traffic)
{
    int size = 0, len = 0;
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    int *launch = malloc((size_t)size * sizeof *launch);
    char name[NAME];
    memset(name, 0, sizeof name);
    PMPI_Get_processor_name(name, &len);
    name[strcspn(name, ". \t\n")] = '\0'; /* the short host name, as launchers take it */
    char *names = root ? calloc((size_t)size, NAME) : NULL;
    int ncores = (int)sysconf(_SC_NPROCESSORS_ONLN), *cores = root ? calloc((size_t)size, sizeof *cores) : NULL;
    mpitopo_machine_t *m = NULL;
    /* Collective over MPI_COMM_WORLD: every process has its array, or none
     * goes on; errors of the machine are agreed on by mpitopo_comm_machine. */
    int ok = launch != NULL, all_ok = 0;
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    int rc = all_ok ? mpitopo_comm_machine(MPI_COMM_WORLD, &m, launch) : MPITOPO_ERR_NOMEM;
    PMPI_Gather(name, NAME, MPI_CHAR, names, NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
    PMPI_Gather(&ncores, 1, MPI_INT, cores, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (root) {
        if (rc != MPITOPO_SUCCESS)
            say(path, rc == MPITOPO_ERR_NOMEM ? "out of memory" : mpitopo_last_error());
        else if (!names || !cores)
            say(path, "out of memory");
        else
            root_record(path, traffic, m, size, launch, names, cores);
    }
    mpitopo_machine_destroy(&m);
    free(launch);
    free(names);
    free(cores);
}
