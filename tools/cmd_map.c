/* mpitopo map: a placement of a (traced) pattern on a machine, written in a
 * launcher's format. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *map_help =
    "Usage: mpitopo map --pattern FILE|DESC --machine DESC [OPTION]...\n"
    "\n"
    "Maps the processes of a communication pattern (a file written by the\n"
    "tracer libmpitopo_trace.so, or a description as for 'mpitopo eval') onto a\n"
    "machine and writes the placement in a launcher's format, for running the\n"
    "unmodified program with a better rank placement. The launch placement is\n"
    "kept when the mapper does not lower the weighted cost. 'mpitopo eval\n"
    "--mapping FILE' measures the file beside other mappers.\n"
    "\n"
    "Options:\n"
    "  --pattern FILE|DESC   the communication pattern (see 'mpitopo eval --help')\n"
    "  --machine DESC        levels from the network down to cores, e.g.\n"
    "                        \"node:4 core:16\"; the level called \"node\" is the\n"
    "                        compute node (host)\n"
    "  --node-topology SRC   the levels inside a node from hwloc (see 'mpitopo\n"
    "                        eval --help')\n"
    "  --mapper NAME         the mapper (default tree; see 'mpitopo mappers')\n"
    "  --weights W           bytes (default), messages or unit; --weight is an\n"
    "                        alias\n"
    "  --placement P         how ranks would be placed without the file, the\n"
    "                        placement to beat: block (default), rr or\n"
    "                        random:SEED; --launch is an alias\n"
    "  --seed N              seed for randomised mappers (default 1)\n"
    "  --format F            plain (default): one line \"RANK LEAF NODE\" per rank\n"
    "                        (\"RANK LEAF NODE GPU\" with --gpu-pattern, GPU the\n"
    "                        local device index on the node);\n"
    "                        openmpi-rankfile: \"rank R=HOST slot=S\" lines, S the\n"
    "                        core index inside the node (mpirun --rankfile\n"
    "                        FILE); mpich-hosts: a Hydra machine file, one\n"
    "                        \"HOST:1\" line per rank in rank order (mpiexec -f\n"
    "                        FILE -n N); cray-rank-order: an MPICH_RANK_ORDER\n"
    "                        file, the ranks in slot order, comma-separated (the\n"
    "                        i-th number is the rank on the i-th slot;\n"
    "                        MPICH_RANK_REORDER_METHOD=3); it cannot tell empty\n"
    "                        slots, so a warning names the ranks that move when\n"
    "                        the mapper left some\n"
    "  --hosts H1,H2,...     host names of the nodes, in node order (default\n"
    "                        node0, node1, ...); at least one per node\n"
    "  --network DESC        the network above the nodes (see 'mpitopo eval\n"
    "                        --help'): its switch groups replace the machine's\n"
    "                        levels above \"node\", so mappers see them; with\n"
    "                        --verbose, the network metrics too\n"
    "  --output FILE         write there instead of standard output\n"
    "  --gpu-pattern FILE|DESC\n"
    "                        the GPU traffic C_gpu (e.g. the tracer's FILE.gpu);\n"
    "                        with --gpus, processes are mapped and GPUs assigned\n"
    "                        together by a GPU strategy (--mapper magc, the\n"
    "                        default then, magc:scotch, strategy1, strategy2 or\n"
    "                        gpu-default; see 'mpitopo eval --help')\n"
    "  --gpus DESC|XML       the GPUs of every node, as for 'mpitopo eval'\n"
    "  --devices FILE        with --gpu-pattern: write the GPU of each rank\n"
    "                        there, one line per rank in rank order, the local\n"
    "                        device index for CUDA_VISIBLE_DEVICES (a launcher\n"
    "                        wrapper sets CUDA_VISIBLE_DEVICES=$(sed -n\n"
    "                        \"$((RANK+1))p\" FILE)); needed with formats other\n"
    "                        than plain\n"
    "  --verbose             print the weighted cost and the off-node weight of\n"
    "                        the launch placement and of the result on stderr\n"
    "  -h, --help            print this help and exit\n"
    "\n"
    "Exit status:\n"
    "  0 on success, 1 on a usage or input error (with a message on standard\n"
    "  error)\n"
    "\n"
    "Examples:\n"
    "  $ mpitopo map --pattern mpitopo-trace.txt --machine \"node:8 core:8\" --placement rr --format openmpi-rankfile --output ranks.txt\n"
    "  $ mpitopo map --pattern t.txt --gpu-pattern t.txt.gpu --gpus \"package:2@38,switch:2@16,gpu:2@16\" --machine \"node:4 socket:2 core:8\" --format openmpi-rankfile --output ranks.txt --devices devices.txt\n";

typedef struct map_args {
    mpitopo__cli_args_t c;
    const char *mapper, *output;
    const char *devices; /* --devices FILE (with --gpu-pattern) */
    int mapper_given;
    mpitopo__cli_format_t format;
    int verbose;
} map_args_t;

/* The value of option o into its field; 1 after a usage error. */
static int map_option(map_args_t *a, const char *o, const char *value)
{
    int rc = mpitopo__cli_option(&a->c, o, value);
    if (rc >= 0)
        return rc;
    const char **slot = !strcmp(o, "--mapper")    ? &a->mapper
                        : !strcmp(o, "--output")  ? &a->output
                        : !strcmp(o, "--devices") ? &a->devices
                                                  : NULL;
    a->mapper_given |= slot == &a->mapper;
    if (!slot && strcmp(o, "--format"))
        return mpitopo__cli_usage_error("unknown option '%s'", o);
    if (!value)
        return mpitopo__cli_usage_error("option '%s' needs a value", o);
    if (!slot)
        return mpitopo__cli_parse_format(o, value, 0, &a->format);
    *slot = value;
    return 0;
}

static int parse_map_args(int argc, char **argv, map_args_t *a, int *done)
{
    *a = (map_args_t){.c = MPITOPO__CLI_ARGS_INIT, .mapper = "tree", .format = MPITOPO__CLI_FMT_PLAIN};
    *done = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(map_help, stdout);
            *done = 1;
            return 0;
        }
        if (!strcmp(argv[i], "--verbose")) {
            a->verbose = 1;
            continue;
        }
        if (map_option(a, argv[i], i + 1 < argc ? argv[i + 1] : NULL))
            return 1;
        i++;
    }
    if (!a->c.machine)
        return mpitopo__cli_usage_error("%s", "map needs --machine DESC");
    if (!a->c.pattern)
        return mpitopo__cli_usage_error("%s", "map needs --pattern FILE|DESC");
    if (mpitopo__cli_gpu_options_check(&a->c))
        return 1;
    if (a->devices && !a->c.gpu_pattern)
        return mpitopo__cli_usage_error("--devices '%s' needs --gpu-pattern FILE|DESC and --gpus DESC|XML", a->devices);
    if (a->c.gpu_pattern && !a->mapper_given)
        a->mapper = "magc";
    if (a->c.gpu_pattern && a->format != MPITOPO__CLI_FMT_PLAIN && !a->devices) {
        fprintf(stderr, "mpitopo: --format %s with --gpu-pattern needs --devices FILE for the GPU of each rank "
                        "(only the plain format has a GPU column)\n", mpitopo__cli_format_names[a->format]);
        return 1;
    }
    return 0;
}

/* The ranks in leaf (slot) order, comma-separated. */
static int write_cray(FILE *out, const mpitopo_machine_t *m, int nprocs, const int *leaves)
{
    int nleaves;
    mpitopo_machine_nleaves(m, &nleaves);
    int *rank_at = malloc((size_t)nleaves * sizeof *rank_at);
    if (!rank_at) {
        fprintf(stderr, "mpitopo: out of memory\n");
        return 1;
    }
    for (int l = 0; l < nleaves; l++)
        rank_at[l] = -1;
    for (int p = 0; p < nprocs; p++)
        rank_at[leaves[p]] = p;
    const char *sep = "";
    int slot = 0, moved = 0;
    for (int l = 0; l < nleaves; l++)
        if (rank_at[l] >= 0) {
            fprintf(out, "%s%d", sep, rank_at[l]);
            sep = ",";
            moved += slot++ != l;
        }
    fputc('\n', out);
    /* The file says which rank takes the i-th slot of the job; leaves the
     * mapper left empty are not slots, so ranks after them shift. */
    if (moved)
        fprintf(stderr, "mpitopo: warning: cray-rank-order cannot leave slots empty: %d ranks take earlier slots "
                        "than the mapper chose (the i-th rank in the file goes to the i-th slot)\n",
                moved);
    free(rank_at);
    return 0;
}

/* The name of a node: --hosts, or node<i>. */
static void host_name(char *const *names, int node, char *buf, size_t size)
{
    if (names)
        snprintf(buf, size, "%s", names[node]);
    else
        snprintf(buf, size, "node%d", node);
}

static int write_placement(FILE *out, const map_args_t *a, const mpitopo_machine_t *m, int nprocs,
                           const int *leaves, const int *gpu_of)
{
    int node_level;
    mpitopo_machine_node_level(m, &node_level);
    if (a->format == MPITOPO__CLI_FMT_CRAY)
        return write_cray(out, m, nprocs, leaves);
    char *copy = NULL, **names = mpitopo__cli_host_names(a->c.hosts, mpitopo__cli_nnodes(m), &copy);
    if (a->c.hosts && !names)
        return 1;
    if (a->format == MPITOPO__CLI_FMT_MPICH)
        fprintf(out, "# mpitopo map: one line per rank, in rank order (mpiexec -f FILE -n %d)\n", nprocs);
    for (int p = 0; p < nprocs; p++) {
        int node, slot;
        char host[256];
        mpitopo__cli_leaf_place(m, node_level, leaves[p], &node, &slot);
        host_name(names, node, host, sizeof host);
        if (a->format == MPITOPO__CLI_FMT_PLAIN && gpu_of)
            fprintf(out, "%d %d %d %d\n", p, leaves[p], node, gpu_of[p]);
        else if (a->format == MPITOPO__CLI_FMT_PLAIN)
            fprintf(out, "%d %d %d\n", p, leaves[p], node);
        else if (a->format == MPITOPO__CLI_FMT_OPENMPI)
            fprintf(out, "rank %d=%s slot=%d\n", p, host, slot);
        else
            fprintf(out, "%s:1\n", host);
    }
    free(names);
    free(copy);
    return 0;
}

/* Weighted cost and weight crossing the node level of a placement. */
static int placement_metrics(const mpitopo_machine_t *m, const mpitopo_pattern_t *pat,
                             mpitopo_weight_t w, const int *leaves, double *cost, double *offnode)
{
    mpitopo_metrics_t mt;
    *cost = *offnode = 0; /* defined on every return */
    int node_level, rc = mpitopo_metrics_compute(m, pat, leaves, w, &mt);
    if (rc != MPITOPO_SUCCESS)
        return mpitopo__cli_fail("metrics", rc);
    mpitopo_machine_node_level(m, &node_level);
    *cost = mt.cost;
    *offnode = node_level >= 0 ? mt.levels[node_level].weight_crossing : 0;
    return 0;
}

static int report_map(const map_args_t *a, const mpitopo__cli_inputs_t *in, const int *launch, const int *leaves,
                      int kept)
{
    const mpitopo_machine_t *m = in->machine;
    const mpitopo_pattern_t *pat = in->pattern;
    double c0, o0, c1, o1;
    if (placement_metrics(m, pat, a->c.weight, launch, &c0, &o0) ||
        placement_metrics(m, pat, a->c.weight, leaves, &c1, &o1))
        return 1;
    fprintf(stderr, "mpitopo map: %s from %s launch (%s weights): cost %.6g -> %.6g, off-node weight %.6g -> %.6g%s\n",
            a->mapper, a->c.placement, mpitopo_weight_name(a->c.weight), c0, c1, o0, o1,
            kept ? " (kept the launch placement: the mapper did not lower the cost)" : "");
    if (!in->network)
        return 0;
    mpitopo_network_metrics_t n0, n1;
    char busiest[96];
    if (mpitopo__cli_network_metrics(in, launch, &n0, busiest, sizeof busiest) ||
        mpitopo__cli_network_metrics(in, leaves, &n1, busiest, sizeof busiest))
        return 1;
    fprintf(stderr, "mpitopo map: network %s: hop-bytes %.6g -> %.6g, MC %.6g -> %.6g, NZCA %.6g -> %.6g, hybrid %.6g -> %.6g\n",
            a->c.network, n0.hop_bytes, n1.hop_bytes, n0.max_congestion, n1.max_congestion, n0.nzca, n1.nzca,
            n0.hybrid, n1.hybrid);
    return 0;
}

/* --devices FILE: line r + 1 holds the local GPU index of rank r, the value
 * of CUDA_VISIBLE_DEVICES for that rank. */
static int write_devices(const char *path, int nprocs, const int *gpu_of)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "mpitopo: --devices '%s': %s\n", path, strerror(errno));
        return 1;
    }
    for (int p = 0; p < nprocs; p++)
        fprintf(f, "%d\n", gpu_of[p]);
    if (ferror(f) | fclose(f)) {
        fprintf(stderr, "mpitopo: writing --devices '%s' failed\n", path);
        return 1;
    }
    return 0;
}

/* --verbose with --gpu-pattern: the default GPU assignment on the launch
 * placement against the result, CPU cost and GPU-tree metrics. */
static int report_gpu_map(const map_args_t *a, const mpitopo__cli_inputs_t *in, const mpitopo_map_options_t *opt,
                          const int *leaves, const int *gpu_of)
{
    const mpitopo_machine_t *m = in->machine;
    const mpitopo_pattern_t *pat = in->pattern;
    int nprocs, rc;
    mpitopo_pattern_nprocs(pat, &nprocs);
    int *l0 = malloc(((size_t)nprocs + 1) * sizeof *l0), *g0 = malloc(((size_t)nprocs + 1) * sizeof *g0);
    double c0, o0, c1, o1, mc0 = 0, hb0 = 0, mc1 = 0, hb1 = 0;
    int status = 0;
    if (!l0 || !g0)
        status = (fprintf(stderr, "mpitopo: out of memory\n"), 1);
    else if ((rc = mpitopo_map_gpu("gpu-default", m, in->network, NULL, in->gpus, pat, in->gpu_pattern, opt, l0,
                                   g0)) != MPITOPO_SUCCESS)
        status = mpitopo__cli_fail("gpu-default", rc);
    else if (placement_metrics(m, pat, a->c.weight, l0, &c0, &o0) ||
             placement_metrics(m, pat, a->c.weight, leaves, &c1, &o1))
        status = 1;
    else if ((rc = mpitopo_gpu_metrics(m, in->gpus, in->gpu_pattern, l0, g0, &mc0, &hb0)) != MPITOPO_SUCCESS ||
             (rc = mpitopo_gpu_metrics(m, in->gpus, in->gpu_pattern, leaves, gpu_of, &mc1, &hb1)) !=
                 MPITOPO_SUCCESS)
        status = mpitopo__cli_fail("GPU metrics", rc);
    else
        fprintf(stderr, "mpitopo map: %s from gpu-default on %s launch (%s weights): cost %.6g -> %.6g, off-node "
                        "weight %.6g -> %.6g; GPU tree: max congestion %.6g -> %.6g, hop-bytes %.6g -> %.6g\n",
                a->mapper, a->c.placement, mpitopo_weight_name(a->c.weight), c0, c1, o0, o1, mc0, mc1, hb0, hb1);
    free(l0);
    free(g0);
    return status;
}

static int map_and_write(const map_args_t *a, const mpitopo__cli_inputs_t *in)
{
    const mpitopo_machine_t *m = in->machine;
    const mpitopo_pattern_t *pat = in->pattern;
    int nprocs, kept = 0, status = 0, rc;
    mpitopo_pattern_nprocs(pat, &nprocs);
    int *launch = malloc((size_t)nprocs * sizeof *launch);
    int *leaves = malloc((size_t)nprocs * sizeof *leaves);
    int *gpu_of = in->gpus ? malloc(((size_t)nprocs + 1) * sizeof *gpu_of) : NULL;
    FILE *out = NULL;
    mpitopo_map_options_t opt = MPITOPO_MAP_OPTIONS_INIT;
    opt.weight = a->c.weight;
    opt.seed = a->c.seed;
    opt.launch = launch;
    opt.never_worse = 1;
    if (!launch || !leaves || (in->gpus && !gpu_of))
        status = (fprintf(stderr, "mpitopo: out of memory\n"), 1);
    else if ((rc = mpitopo_placement(m, nprocs, a->c.placement, launch)) != MPITOPO_SUCCESS)
        status = mpitopo__cli_fail(a->c.placement_opt, rc);
    else if (in->gpus) {
        if ((rc = mpitopo_map_gpu(a->mapper, m, in->network, NULL, in->gpus, pat, in->gpu_pattern, &opt, leaves,
                                  gpu_of)) != MPITOPO_SUCCESS)
            status = mpitopo__cli_fail(a->mapper, rc);
        else if (a->verbose)
            status = report_gpu_map(a, in, &opt, leaves, gpu_of);
    } else if ((rc = in->network ? mpitopo_map_network(a->mapper, m, in->network, NULL, pat, &opt, leaves, &kept)
                                 : mpitopo_map(a->mapper, m, pat, &opt, leaves, &kept)) != MPITOPO_SUCCESS)
        status = mpitopo__cli_fail(a->mapper, rc);
    else if (a->verbose)
        status = report_map(a, in, launch, leaves, kept);
    if (!status && !(out = a->output ? fopen(a->output, "w") : stdout))
        status = (fprintf(stderr, "mpitopo: --output '%s': %s\n", a->output, strerror(errno)), 1);
    if (!status)
        status = write_placement(out, a, m, nprocs, leaves, gpu_of);
    if (!status && a->devices)
        status = write_devices(a->devices, nprocs, gpu_of);
    /* Close (or flush) even after an error, hence | rather than ||. */
    if (out && (ferror(out) | (out != stdout ? fclose(out) : fflush(out))) && !status)
        status = (fprintf(stderr, "mpitopo: writing %s failed\n", a->output ? a->output : "the output"), 1);
    free(launch);
    free(leaves);
    free(gpu_of);
    return status;
}

int mpitopo__cmd_map(int argc, char **argv)
{
    map_args_t a;
    int done;
    if (parse_map_args(argc, argv, &a, &done))
        return 1;
    if (done)
        return 0;
    mpitopo__cli_inputs_t in;
    int status = mpitopo__cli_load(&a.c, &in);
    if (!status)
        status = map_and_write(&a, &in);
    mpitopo__cli_free(&in);
    return status;
}

