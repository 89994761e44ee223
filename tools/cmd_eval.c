/* mpitopo: evaluate process mappings on machine models from the command line. */
#define MPITOPO_NO_MPI
#include <mpitopo.h>

#include "core/env.h"
#include "map/map_internal.h" /* mpitopo__map_check_spec */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MAPPERS 32
#define MAX_COLUMNS 64

/* The help texts follow help2man's conventions (the man pages are made from
 * them): a "Usage:" line, a description, "Options:" with options indented by
 * two blanks and descriptions from column 24. */
static const char *main_help =
    "Usage: mpitopo COMMAND [OPTION]...\n"
    "  or:  mpitopo help [COMMAND]\n"
    "  or:  mpitopo --version\n"
    "\n"
    "Evaluate how MPI processes are placed on a machine and how much of their\n"
    "communication crosses each level of it (nodes, sockets, switches), and write\n"
    "better rank placements for launchers.\n"
    "\n"
    "Commands:\n"
    "  eval                  print the metrics of mappers and of placement files\n"
    "                        side by side\n"
    "  map                   map a (traced) pattern and write a rank placement for\n"
    "                        a launcher\n"
    "  mappers               list the available mappers\n"
    "  platform              write a SimGrid platform with the links and routes\n"
    "                        of a network model, for SMPI\n"
    "  run                   launch a program with the placement recorded from its\n"
    "                        traffic (records it on the first run)\n"
    "  dims                  Cartesian dimensions for N processes, balanced or\n"
    "                        node-aware\n"
    "  version               print the version and the optional mappers\n"
    "  env                   list the environment variables mpitopo reads, and\n"
    "                        their values here\n"
    "  help [COMMAND]        this text, or the help of COMMAND\n"
    "\n"
    "Options:\n"
    "  -h, --help            print this help and exit\n"
    "  -V, --version         print the version and the optional mappers, and exit\n"
    "\n"
    "Run 'mpitopo COMMAND --help' for the options of a command.\n"
    "\n"
    "Exit status:\n"
    "  0 on success, 1 on a usage or input error (with a message on standard\n"
    "  error)\n";

static const char *eval_help =
    "Usage: mpitopo eval --machine DESC --pattern DESC|FILE [OPTION]...\n"
    "\n"
    "Places the processes of a communication pattern on a machine with each\n"
    "mapper, reads the placements given with --mapping, and prints side by side:\n"
    "distinct communication partners per process on the same node and on other\n"
    "nodes (min / max / avg), the edges and weight crossing every machine level\n"
    "(total and the most leaving one unit), and the weighted cost\n"
    "sum(weight x level cost). For Cartesian patterns it also prints a true lower\n"
    "bound on the off-node traffic of any mapping (the edge-isoperimetric bound\n"
    "of the grid) and how far each column is above it, and, on full, equal\n"
    "nodes, the best box tiling: the off-node traffic when every node holds the\n"
    "best box of the grid (not a bound: tilings by other shapes can do better).\n"
    "\n"
    "Options:\n"
    "  --machine DESC        levels from the network down to cores, each\n"
    "                        NAME:ARITY with an optional @COST, e.g.\n"
    "                        \"node:1024 core:16\" or\n"
    "                        \"switch:4@100 node:16@40 socket:2@10 core:8@1\"; the\n"
    "                        level called \"node\" is the compute node (host)\n"
    "  --node-topology SRC   take the levels inside a node from hwloc instead:\n"
    "                        DESC then ends at \"node\"; SRC is \"this\" (this\n"
    "                        machine), \"synthetic:package:2 core:8\" or an hwloc\n"
    "                        XML file\n"
    "  --pattern DESC|FILE   the communication pattern (see Patterns below)\n"
    "  --mapper LIST         comma-separated mappers (default: all that apply;\n"
    "                        see 'mpitopo mappers'), e.g. identity,tree,random:7;\n"
    "                        none: only the --mapping files; one that does not\n"
    "                        apply to the pattern (cart on a non-Cartesian one,\n"
    "                        a network mapper without --network) is skipped,\n"
    "                        saying why (an error when none applies)\n"
    "  --mapping FILE        also measure the placement in FILE (repeatable), in a\n"
    "                        column named after the file: a placement made\n"
    "                        elsewhere, in any format 'mpitopo map' writes (see\n"
    "                        Mapping files below)\n"
    "  --mapping-format F    the format of the --mapping files: auto (default),\n"
    "                        plain, openmpi-rankfile, mpich-hosts or\n"
    "                        cray-rank-order\n"
    "  --hosts H1,H2,...     the host names of the nodes in the --mapping files,\n"
    "                        in node order (default node0, node1, ...)\n"
    "  --placement P         how the launcher placed ranks: block (default), rr\n"
    "                        (round-robin over nodes) or random:SEED; the\n"
    "                        \"identity\" mapper keeps it (what MPI_Cart_create\n"
    "                        does today); --launch is an alias\n"
    "  --weights W           edge weight to count and optimise: bytes (default),\n"
    "                        messages or unit; --weight is an alias\n"
    "  --never-worse         keep the launch placement when a mapper does not\n"
    "                        lower the weighted cost (what the MPI layer and\n"
    "                        'mpitopo map' do)\n"
    "  --seed N              seed for randomised mappers (default 1)\n"
    "  --network DESC        also measure every column on a network (\"torus:4x4x4\",\n"
    "                        \"mesh:3x5\", \"fattree:...\", \"ktree:K,N\",\n"
    "                        \"dragonfly:P,A,H\", \"gpc\", \"hhc:...\",\n"
    "                        \"fabric:TOPOLOGY,ROUTES\"; see mpitopo_network(3)):\n"
    "                        the machine's nodes, in order, are its end nodes\n"
    "                        0, 1, ...; the network's switch groups replace the\n"
    "                        machine's levels above \"node\" (so mappers and\n"
    "                        the tree metrics see them); prints hop-bytes,\n"
    "                        dilation, maximum congestion, NZCA, NZCV, the\n"
    "                        hybrid metric and the busiest channel, over the\n"
    "                        bytes between processes on different nodes\n"
    "  --gpu-pattern FILE|DESC\n"
    "                        the GPU traffic C_gpu (a pattern over the same\n"
    "                        processes as --pattern, e.g. the tracer's FILE.gpu);\n"
    "                        needs --gpus. The columns are then the GPU\n"
    "                        strategies of mpitopo_map_gpu (default all:\n"
    "                        gpu-default, strategy1, strategy2, magc and\n"
    "                        magc:scotch when built with Scotch; --mapper picks\n"
    "                        some): the CPU rows over --pattern, plus the\n"
    "                        maximum congestion (bytes per GB/s) and hop-bytes\n"
    "                        of C_gpu over the GPU trees; in --json each mapper\n"
    "                        gains \"gpu\": {\"max_congestion\", \"hop_bytes\"}.\n"
    "                        gpu-default is the launch placement with GPU =\n"
    "                        local rank mod GPUs per node\n"
    "  --gpus DESC|XML       the GPUs of every node: a GPU tree description\n"
    "                        (\"package:2@38,switch:2@16,gpu:2@16\", levels\n"
    "                        NAME:FANOUT@GBPS from the node down to the GPUs)\n"
    "                        or an hwloc XML export (see mpitopo_gpu(3))\n"
    "  --json                one JSON object instead of the table\n"
    "  -h, --help            print this help and exit\n"
    "\n"
    "Patterns:\n"
    "  cart:DIMS[:open|:periods=P,..][:star=R|:moore=R|:offsets=O;O..][:weights=W,..][:bytes=B]\n"
    "                        a Cartesian grid, DIMS like 128x128; periodic\n"
    "                        unless :open; star radius 1 by default; ranks\n"
    "                        row-major (last dimension fastest), as\n"
    "                        MPI_Cart_create numbers them\n"
    "  random:N:DENSITY:SEED  Erdos-Renyi over ordered pairs\n"
    "  ring:N:K              rings of K consecutive processes\n"
    "  complete:N            everybody to everybody\n"
    "  alltoall:DIMS:REMAIN[:bytes=B]\n"
    "                        all-to-all inside each sub-communicator that\n"
    "                        MPI_Cart_sub(REMAIN) makes of a DIMS grid, e.g.\n"
    "                        alltoall:64x64:1,0 (every column)\n"
    "  hhc:D                 the links of the D-dimensional HHC (M.-H. Ok) as\n"
    "                        a pattern, its processes numbered as the hhc:D\n"
    "                        network's end nodes\n"
    "  coll:ALG:N[:BYTES]    the messages of a collective algorithm over N\n"
    "                        ranks: allgather-rd (N a power of two),\n"
    "                        allgather-ring, allgather-bruck, bcast-binomial,\n"
    "                        gather-binomial; BYTES one rank's block (the\n"
    "                        buffer for bcast), default 1; compare the\n"
    "                        mappers rdmh, rmh, bbmh, bgmh on them\n"
    "  FILE                  a pattern file (mpitopo-pattern 1 N, then lines\n"
    "                        SRC DST BYTES MESSAGES), as the tracer writes it\n"
    "\n"
    "Mapping files:\n"
    "  plain                 lines \"RANK LEAF\" or \"RANK LEAF NODE\"\n"
    "  openmpi-rankfile      lines \"rank R=HOST slot=S\", S the core index inside\n"
    "                        the node\n"
    "  mpich-hosts           one \"HOST\" or \"HOST:N\" (N ranks) line after the\n"
    "                        other in rank order; the k-th rank on a host takes\n"
    "                        the k-th leaf of its node, as mpiexec -bind-to core\n"
    "                        binds them\n"
    "  cray-rank-order       ranks separated by commas (ranges A-B allowed) in\n"
    "                        slot order: the i-th is the rank on leaf i\n"
    "\n"
    "'#' starts a comment. The format is told from the first line unless\n"
    "--mapping-format gives it. Every rank of the pattern must be placed once, on\n"
    "distinct leaves of known hosts; errors name the file, the line and the\n"
    "value.\n"
    "\n"
    "Exit status:\n"
    "  0 on success, 1 on a usage or input error (with a message on standard\n"
    "  error)\n"
    "\n"
    "Examples:\n"
    "  The MPI_Cart_create rows of Table 3 of Gropp (EuroMPI'18), 16 processes\n"
    "  per node: off-node partners 2 / 3 / 2.12 and on-node 1 / 2 / 1.88 in 2-D,\n"
    "  4 / 5 / 4.12 and 1 / 2 / 1.88 in 3-D:\n"
    "\n"
    "  $ mpitopo eval --machine \"node:1024 core:16\" --pattern cart:128x128 --mapper identity\n"
    "  $ mpitopo eval --machine \"node:1024 core:16\" --pattern cart:16x32x32 --mapper identity\n"
    "\n"
    "  The paper's 3-D grid 32x32x16 is given as 16x32x32: with row-major ranks a\n"
    "  node then holds half of a line of 32, which is what the paper's figures\n"
    "  imply; with the 16-long dimension last a node holds a whole periodic line\n"
    "  and the counts are 4 / 4 / 4 off-node.\n"
    "\n"
    "  A rankfile made by another tool, beside the tree mapper:\n"
    "\n"
    "  $ mpitopo eval --machine \"node:8 core:8\" --pattern app.trace --mapping ranks.txt --mapper tree\n";

static const char *mappers_help =
    "Usage: mpitopo mappers\n"
    "\n"
    "Lists the mappers that --mapper accepts, one per line with a summary.\n";

static const char *version_help =
    "Usage: mpitopo version\n"
    "  or:  mpitopo --version\n"
    "\n"
    "Prints the version of mpitopo and which optional mappers (scotch, metis)\n"
    "this build has.\n";

static const char *env_help =
    "Usage: mpitopo env [--markdown]\n"
    "\n"
    "Lists every environment variable that the library, the shim, the tracer and\n"
    "the tools read, who reads it, and its value in this environment.\n"
    "\n"
    "Options:\n"
    "  --markdown            print the table of doc/user-guide.md instead\n"
    "                        (variable and meaning)\n";

typedef enum map_format { FMT_AUTO = -1, FMT_PLAIN, FMT_OPENMPI, FMT_MPICH, FMT_CRAY } map_format_t;
static const char *format_names[] = {"plain", "openmpi-rankfile", "mpich-hosts", "cray-rank-order"};

/* Options that eval and map share, with one spelling each (and the other
 * subcommand's old spelling as an alias). */
typedef struct common_args {
    const char *machine, *node_topology, *pattern, *placement, *hosts;
    const char *network;       /* --network DESC, NULL without */
    const char *gpu_pattern;   /* --gpu-pattern FILE|DESC, NULL without (issue 20) */
    const char *gpus;          /* --gpus DESC|XML, NULL without */
    const char *placement_opt; /* the spelling given, for messages */
    mpitopo_weight_t weight;
    uint64_t seed;
} common_args_t;

#define COMMON_ARGS_INIT {.placement = "block", .placement_opt = "--placement", .weight = MPITOPO_WEIGHT_BYTES, .seed = 1}

typedef struct eval_args {
    common_args_t c;
    const char *mappers;
    const char *mappings[MAX_COLUMNS];
    int nmappings;
    map_format_t mapping_format;
    int json, never_worse;
} eval_args_t;

typedef struct result {
    char name[64];
    const char *file; /* the --mapping file, NULL for a mapper */
    map_format_t format;
    int kept_launch;
    mpitopo_metrics_t m;
    int has_gpu;                   /* the GPU-tree metrics below are set */
    double gpu_mc, gpu_hop_bytes;  /* mpitopo_gpu_metrics of C_gpu (--gpu-pattern) */
    int has_net;                   /* the network metrics below are set */
    mpitopo_network_metrics_t net; /* on --network */
    char busiest[96];              /* the most congested channel's name, "" when none carries traffic */
} result_t;

static int fail(const char *what, int rc)
{
    const char *detail = mpitopo_last_error();
    fprintf(stderr, "mpitopo: %s: %s\n", what, detail[0] ? detail : mpitopo_strerror(rc));
    return 1;
}

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "mpitopo: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nRun 'mpitopo help' for the commands and their options.\n");
    return 1;
}

/* An integer in [lo, 2^31-1] filling s[0..len); 0 on success. */
static int parse_int(const char *s, size_t len, long long lo, long long *out)
{
    char buf[32], *end;
    *out = 0; /* defined on every return */
    if (len == 0 || len >= sizeof buf)
        return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    errno = 0;
    *out = strtoll(buf, &end, 10);
    return *end || errno || *out < lo || *out > INT32_MAX ? -1 : 0;
}

static int parse_format(const char *opt, const char *s, int allow_auto, map_format_t *f)
{
    if (allow_auto && !strcmp(s, "auto")) {
        *f = FMT_AUTO;
        return 0;
    }
    for (int i = 0; i < 4; i++)
        if (!strcmp(s, format_names[i])) {
            *f = (map_format_t)i;
            return 0;
        }
    fprintf(stderr, "mpitopo: %s '%s': expected %splain, openmpi-rankfile, mpich-hosts or cray-rank-order\n", opt, s,
            allow_auto ? "auto, " : "");
    return 1;
}

/* A launch placement as mpitopo_placement takes it: block, rr or random:SEED. */
static int valid_placement(const char *s)
{
    if (!strcmp(s, "block") || !strcmp(s, "rr"))
        return 1;
    if (strncmp(s, "random:", 7))
        return 0;
    char *end;
    errno = 0;
    long long seed = strtoll(s + 7, &end, 10);
    return s[7] >= '0' && s[7] <= '9' && !*end && errno != ERANGE && seed >= 0;
}

/* An option both subcommands take: 0 when o is one (its value taken), 1
 * after a usage error, -1 when o is not a common option. */
static int common_option(common_args_t *c, const char *o, const char *value)
{
    const char **slot = !strcmp(o, "--machine")         ? &c->machine
                        : !strcmp(o, "--node-topology") ? &c->node_topology
                        : !strcmp(o, "--pattern")       ? &c->pattern
                        : !strcmp(o, "--hosts")         ? &c->hosts
                        : !strcmp(o, "--network")       ? &c->network
                        : !strcmp(o, "--gpu-pattern")   ? &c->gpu_pattern
                        : !strcmp(o, "--gpus")          ? &c->gpus
                        : !strcmp(o, "--placement") || !strcmp(o, "--launch") ? &c->placement
                                                                              : NULL;
    int weights = !strcmp(o, "--weights") || !strcmp(o, "--weight");
    if (!slot && !weights && strcmp(o, "--seed"))
        return -1;
    if (!value)
        return usage_error("option '%s' needs a value", o);
    if (slot == &c->placement) {
        c->placement_opt = o;
        if (!valid_placement(value)) {
            fprintf(stderr, "mpitopo: %s '%s': expected block, rr or random:SEED\n", o, value);
            return 1;
        }
    }
    if (slot) {
        *slot = value;
    } else if (weights) {
        if (mpitopo_weight_from_string(value, &c->weight) != MPITOPO_SUCCESS) {
            fprintf(stderr, "mpitopo: %s '%s': expected bytes, messages or unit\n", o, value);
            return 1;
        }
    } else {
        char *end;
        errno = 0;
        long long s = strtoll(value, &end, 10);
        if (!*value || *end || s < 0 || errno == ERANGE)
            return usage_error("--seed '%s': expected an integer in [0, 2^63-1]", value);
        c->seed = (uint64_t)s;
    }
    return 0;
}

/* One option of eval at argv[*i]; 0 or 1 after a usage error. */
static int eval_option(eval_args_t *a, int argc, char **argv, int *i)
{
    const char *o = argv[*i], *value = *i + 1 < argc ? argv[*i + 1] : NULL;
    if (!strcmp(o, "--json")) {
        a->json = 1;
        return 0;
    }
    if (!strcmp(o, "--never-worse")) {
        a->never_worse = 1;
        return 0;
    }
    int rc = common_option(&a->c, o, value);
    if (rc >= 0) {
        ++*i;
        return rc;
    }
    int mapping = !strcmp(o, "--mapping"), fmt = !strcmp(o, "--mapping-format");
    if (!mapping && !fmt && strcmp(o, "--mapper"))
        return usage_error("unknown option '%s'", o);
    if (!value)
        return usage_error("option '%s' needs a value", o);
    ++*i;
    if (fmt)
        return parse_format(o, value, 1, &a->mapping_format);
    if (!mapping) {
        a->mappers = value;
        return 0;
    }
    if (a->nmappings == MAX_COLUMNS)
        return usage_error("--mapping '%s': too many --mapping files (at most 64)", value);
    a->mappings[a->nmappings++] = value;
    return 0;
}

/* --gpu-pattern and --gpus come together. */
static int gpu_options_check(const common_args_t *c)
{
    if (c->gpu_pattern && !c->gpus)
        return usage_error("--gpu-pattern '%s' needs --gpus DESC|XML (the GPUs of a node)", c->gpu_pattern);
    if (c->gpus && !c->gpu_pattern)
        return usage_error("--gpus '%s' needs --gpu-pattern FILE|DESC (the GPU traffic)", c->gpus);
    return 0;
}

static int parse_eval_args(int argc, char **argv, eval_args_t *a, int *done)
{
    *a = (eval_args_t){.c = COMMON_ARGS_INIT, .mapping_format = FMT_AUTO};
    *done = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(eval_help, stdout);
            *done = 1;
            return 0;
        }
        if (eval_option(a, argc, argv, &i))
            return 1;
    }
    if (!a->c.machine)
        return usage_error("%s", "eval needs --machine DESC");
    if (!a->c.pattern)
        return usage_error("%s", "eval needs --pattern DESC|FILE");
    if (gpu_options_check(&a->c))
        return 1;
    if (a->c.gpu_pattern && a->nmappings)
        return usage_error("--mapping '%s': not with --gpu-pattern (a placement file assigns no GPUs)",
                           a->mappings[0]);
    return 0;
}

static char **host_names(const char *list, int nnodes, char **copy);
static int machine_nnodes(const mpitopo_machine_t *m);

static int is_pattern_description(const char *s)
{
    static const char *kinds[] = {"cart:", "random:", "ring:", "complete:", "alltoall:", "hhc:", "coll:"};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strncmp(s, kinds[i], strlen(kinds[i])))
            return 1;
    return 0;
}

/* The network of --network (NULL without), its end nodes the machine's
 * nodes in order. */
static mpitopo_network_t *eval_network;

/* Load --network, and put its group levels (switches) above the machine's
 * nodes in place of the machine's own. */
static int load_network(const char *desc, mpitopo_machine_t **machine)
{
    if (!desc)
        return 0;
    int rc = mpitopo_network_from_string(desc, &eval_network);
    if (rc != MPITOPO_SUCCESS) {
        const char *detail = mpitopo_last_error();
        fprintf(stderr, "mpitopo: --network '%s': %s\n", desc, detail[0] ? detail : mpitopo_strerror(rc));
        return 1;
    }
    int nend = 0, nnodes = machine_nnodes(*machine);
    mpitopo_network_size(eval_network, &nend, NULL, NULL);
    if (nnodes > nend) {
        fprintf(stderr, "mpitopo: --network '%s': the machine has %d nodes but the network only %d end nodes\n",
                desc, nnodes, nend);
        return 1;
    }
    mpitopo_machine_t *m = NULL;
    if ((rc = mpitopo_network_machine(eval_network, *machine, NULL, &m, NULL)) != MPITOPO_SUCCESS)
        return fail("--network", rc);
    mpitopo_machine_destroy(machine);
    *machine = m;
    return 0;
}

/* tools/slurm_machine.c: "slurm:FILE INNER" machines (issue 32). */
int mpitopo__cli_slurm_machine(const char *desc, const char *hosts, mpitopo_machine_t **machine,
                               char **node_hosts);
static char *slurm_node_hosts; /* the hosts of a slurm: machine, in node order */

static int load_inputs(common_args_t *a, mpitopo_machine_t **machine, mpitopo_pattern_t **pattern)
{
    int rc;
    if (!strncmp(a->machine, "slurm:", 6)) {
        if (a->node_topology)
            return usage_error("--node-topology '%s': not with a slurm: machine (give the levels inside a node "
                               "after the file)", a->node_topology);
        if (mpitopo__cli_slurm_machine(a->machine, a->hosts, machine, &slurm_node_hosts))
            return 1;
        a->hosts = slurm_node_hosts; /* --hosts of the mapping files, now in node order */
        rc = MPITOPO_SUCCESS;
    } else if (a->node_topology)
        rc = mpitopo_machine_from_hwloc(a->machine, strcmp(a->node_topology, "this") ? a->node_topology : NULL,
                                        machine);
    else
        rc = mpitopo_machine_from_string(a->machine, machine);
    if (rc != MPITOPO_SUCCESS)
        return fail("--machine", rc);
    if (load_network(a->network, machine))
        return 1;
    int nprocs, nleaves;
    mpitopo_machine_nleaves(*machine, &nleaves);
    /* A file's header is checked against the machine before anything is
     * allocated for it, so a huge process count costs nothing. */
    if (is_pattern_description(a->pattern))
        rc = mpitopo_pattern_from_string(a->pattern, pattern);
    else
        rc = mpitopo_pattern_read_max(a->pattern, nleaves, pattern);
    if (rc == MPITOPO_ERR_RANGE && !is_pattern_description(a->pattern)) {
        fprintf(stderr, "mpitopo: --pattern: %s (the machine has %d leaves)\n", mpitopo_last_error(), nleaves);
        return 1;
    }
    if (rc != MPITOPO_SUCCESS)
        return fail("--pattern", rc);
    mpitopo_pattern_nprocs(*pattern, &nprocs);
    if (nprocs > nleaves) {
        fprintf(stderr, "mpitopo: the pattern has %d processes but the machine only %d leaves\n", nprocs, nleaves);
        return 1;
    }
    /* --hosts is checked whether or not a format needs it. */
    char *copy = NULL, **hosts = a->hosts ? host_names(a->hosts, machine_nnodes(*machine), &copy) : NULL;
    free(hosts);
    free(copy);
    return a->hosts && !hosts;
}

/* The GPU tree of --gpus and the pattern of --gpu-pattern (NULL without). */
static mpitopo_gpus_t *eval_gpus;
static mpitopo_pattern_t *eval_gpu_pattern;

/* Load --gpus and --gpu-pattern (when given), the GPU pattern over the
 * same processes as the CPU pattern. */
static int load_gpu_inputs(const common_args_t *a, const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern)
{
    if (!a->gpu_pattern)
        return 0;
    int rc = mpitopo_gpus_load(a->gpus, &eval_gpus);
    if (rc != MPITOPO_SUCCESS) {
        const char *detail = mpitopo_last_error();
        fprintf(stderr, "mpitopo: --gpus '%s': %s\n", a->gpus, detail[0] ? detail : mpitopo_strerror(rc));
        return 1;
    }
    int nleaves, nprocs, gprocs;
    mpitopo_machine_nleaves(machine, &nleaves);
    if (is_pattern_description(a->gpu_pattern))
        rc = mpitopo_pattern_from_string(a->gpu_pattern, &eval_gpu_pattern);
    else
        rc = mpitopo_pattern_read_max(a->gpu_pattern, nleaves, &eval_gpu_pattern);
    if (rc != MPITOPO_SUCCESS) {
        const char *detail = mpitopo_last_error();
        fprintf(stderr, "mpitopo: --gpu-pattern '%s': %s\n", a->gpu_pattern, detail[0] ? detail : mpitopo_strerror(rc));
        return 1;
    }
    mpitopo_pattern_nprocs(pattern, &nprocs);
    mpitopo_pattern_nprocs(eval_gpu_pattern, &gprocs);
    if (gprocs != nprocs) {
        fprintf(stderr, "mpitopo: --gpu-pattern '%s' has %d processes but --pattern '%s' has %d: both must describe "
                        "the same processes\n", a->gpu_pattern, gprocs, a->pattern, nprocs);
        return 1;
    }
    return 0;
}

static void free_gpu_inputs(void)
{
    mpitopo_gpus_destroy(&eval_gpus);
    mpitopo_pattern_destroy(&eval_gpu_pattern);
}

/* Whether --pattern is a collective's ("coll:..."): the collective-aware
 * mappers (rdmh, rmh, bbmh, bgmh) join the default list only then. */
static int eval_coll_pattern;

static int is_coll_mapper(const char *name)
{
    /* By the registered list: mpitopo_mapper_find would set the last error,
     * which the caller may still print. */
    for (int i = 0; i < mpitopo_mapper_count(); i++)
        if (!strcmp(mpitopo_mapper_at(i)->name, name))
            return strncmp(mpitopo_mapper_at(i)->summary, "collective-aware", 16) == 0;
    return 0;
}

/* Split the comma-separated mapper list (or all mappers that apply to the
 * pattern, the network-aware ones only under --network, the collective-aware
 * ones only for a collective's pattern; none for "none") into specs. */
static int mapper_specs(const char *list, int is_cart, char specs[][64], int *n)
{
    *n = 0;
    if (!list) {
        for (int i = 0; i < mpitopo_mapper_count() && *n < MAX_MAPPERS; i++)
            if ((is_cart || !mpitopo_mapper_at(i)->needs_cart) &&
                (eval_network || strncmp(mpitopo_mapper_at(i)->summary, "needs a network", 15) != 0) &&
                (eval_coll_pattern || !is_coll_mapper(mpitopo_mapper_at(i)->name)))
                snprintf(specs[(*n)++], 64, "%s", mpitopo_mapper_at(i)->name);
        return 0;
    }
    if (!strcmp(list, "none"))
        return 0;
    const char *p = list;
    if (!*p)
        return usage_error("--mapper '%s': expected a comma-separated list of mappers", list);
    while (*p) {
        size_t len = strcspn(p, ",");
        if (len == 0 || len >= 64 || *n == MAX_MAPPERS)
            return usage_error("--mapper '%s': expected a comma-separated list of mappers", list);
        memcpy(specs[*n], p, len);
        specs[(*n)++][len] = '\0';
        p += len + (p[len] == ',');
    }
    return 0;
}

/* The network metrics of a placement (leaves of the machine): process p on
 * the end node numbered as the node of its leaf; the busiest channel named. */
static int network_metrics(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern, const int *leaves,
                           result_t *r)
{
    r->has_net = 0;
    if (!eval_network)
        return 0;
    int nprocs, node_level, status = 0;
    mpitopo_pattern_nprocs(pattern, &nprocs);
    mpitopo_machine_node_level(machine, &node_level);
    mpitopo_network_load_t *load = NULL;
    int rc = mpitopo_network_load_create(eval_network, pattern, &load);
    for (int p = 0; p < nprocs && rc == MPITOPO_SUCCESS; p++) {
        int node = 0;
        if (node_level >= 0)
            mpitopo_machine_unit_of(machine, node_level, leaves[p], &node);
        rc = mpitopo_network_load_place(load, p, node);
    }
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo_network_load_metrics(load, NULL, NULL, &r->net);
    int64_t channel;
    int count = 0;
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo_network_load_top(load, 1, &channel, NULL, &count);
    r->busiest[0] = '\0';
    if (rc == MPITOPO_SUCCESS && count > 0)
        rc = mpitopo_network_channel(eval_network, channel, NULL, r->busiest, sizeof r->busiest);
    if (rc != MPITOPO_SUCCESS)
        status = fail("--network", rc);
    else
        r->has_net = 1;
    mpitopo_network_load_destroy(&load);
    return status;
}

/* What the mappers of eval share: the launch placement of --placement in
 * launch (allocated: whether the caller's arrays all were) and the map
 * options. 0, or the exit status after saying what failed. */
static int eval_options(const eval_args_t *a, const mpitopo_machine_t *machine, int nprocs, int *launch,
                        int allocated, mpitopo_map_options_t *opt)
{
    int rc, status = 0;
    if (!allocated)
        status = (fprintf(stderr, "mpitopo: out of memory\n"), 1);
    else if ((rc = mpitopo_placement(machine, nprocs, a->c.placement, launch)) != MPITOPO_SUCCESS)
        status = fail(a->c.placement_opt, rc);
    *opt = (mpitopo_map_options_t)MPITOPO_MAP_OPTIONS_INIT;
    opt->weight = a->c.weight;
    opt->seed = a->c.seed;
    opt->launch = launch;
    opt->never_worse = a->never_worse;
    return status;
}

/* The mappers of --mapper that do not apply to the pattern: each with why,
 * and the number of columns before it (the JSON lists it there). */
typedef struct skipped {
    char name[64], why[256];
    int at;
} skipped_t;
static skipped_t eval_skipped[MAX_MAPPERS];
static int eval_nskipped;

static const mpitopo_mapper_t *registered(const char *spec)
{
    size_t len = strcspn(spec, ":");
    for (int i = 0; i < mpitopo_mapper_count(); i++)
        if (strlen(mpitopo_mapper_at(i)->name) == len && !strncmp(mpitopo_mapper_at(i)->name, spec, len))
            return mpitopo_mapper_at(i);
    return NULL;
}

/* Whether the mapper of spec does not apply to the pattern, and why. It
 * does not when the pattern or the inputs lack what it needs (a Cartesian
 * pattern, --network) or, after running it (rc), when a collective-aware
 * mapper refused the process count (rdmh: not a power of two). A bad spec
 * (no such mapper, bad arguments) applies: running it says what is wrong,
 * as for every other failure, size limits included. The last error is left
 * alone unless the answer is yes. */
static int does_not_apply(const char *spec, int is_cart, int rc, char *why, size_t len)
{
    const mpitopo_mapper_t *mp = registered(spec);
    if (!mp)
        return 0;
    if (mp->needs_cart && !is_cart)
        snprintf(why, len, "needs a Cartesian pattern");
    else if (!eval_network && !strncmp(mp->summary, "needs a network", 15))
        snprintf(why, len, "needs a network (--network)");
    else if (rc == MPITOPO_ERR_ARG && is_coll_mapper(mp->name))
        snprintf(why, len, "%s", mpitopo_last_error());
    else
        return 0;
    return mpitopo__map_check_spec(spec) == MPITOPO_SUCCESS;
}

static int run_mappers(const eval_args_t *a, const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern,
                       result_t *results, int *nresults)
{
    char specs[MAX_MAPPERS][64];
    int is_cart = 0;
    mpitopo_pattern_cart_info(pattern, &is_cart, NULL, NULL, NULL);
    eval_coll_pattern = strncmp(a->c.pattern, "coll:", 5) == 0;
    if (mapper_specs(a->mappers, is_cart, specs, nresults))
        return 1;
    if (*nresults == 0 && a->nmappings == 0)
        return usage_error("%s", "--mapper none: nothing to measure without --mapping FILE");
    int nprocs, rc;
    mpitopo_pattern_nprocs(pattern, &nprocs);
    int *launch = malloc(((size_t)nprocs + 1) * sizeof *launch);
    int *leaves = malloc(((size_t)nprocs + 1) * sizeof *leaves);
    mpitopo_map_options_t opt;
    int status = eval_options(a, machine, nprocs, launch, launch && leaves, &opt);
    int n = 0;
    for (int i = 0; i < *nresults && !status; i++) {
        result_t *r = &results[n];
        skipped_t *s = &eval_skipped[eval_nskipped];
        snprintf(r->name, sizeof r->name, "%s", specs[i]);
        int skip = a->mappers && does_not_apply(specs[i], is_cart, MPITOPO_SUCCESS, s->why, sizeof s->why);
        rc = skip ? MPITOPO_SUCCESS
             : eval_network ? mpitopo_map_network(specs[i], machine, eval_network, NULL, pattern, &opt, leaves,
                                                  &r->kept_launch)
                            : mpitopo_map(specs[i], machine, pattern, &opt, leaves, &r->kept_launch);
        if (!a->mappers && (rc == MPITOPO_ERR_RANGE || (rc == MPITOPO_ERR_ARG && is_coll_mapper(specs[i])))) {
            /* A mapper of the default list beyond its size limit (or rdmh
             * on a process count not a power of two) is left out, saying
             * so; one the user named is an error unless it does not apply
             * to the pattern: then it is skipped, saying why. */
            fprintf(stderr, "mpitopo: %s left out: %s\n", specs[i], mpitopo_last_error());
            continue;
        }
        if (a->mappers && rc != MPITOPO_SUCCESS)
            skip = does_not_apply(specs[i], is_cart, rc, s->why, sizeof s->why);
        if (skip) {
            snprintf(s->name, sizeof s->name, "%s", specs[i]);
            s->at = n;
            eval_nskipped++;
            fprintf(stderr, "mpitopo: skipping mapper '%s': %s\n", specs[i], s->why);
            continue;
        }
        if (rc == MPITOPO_SUCCESS)
            rc = mpitopo_metrics_compute(machine, pattern, leaves, a->c.weight, &r->m);
        if (rc != MPITOPO_SUCCESS)
            status = fail(specs[i], rc);
        else
            status = network_metrics(machine, pattern, leaves, r);
        n++;
    }
    *nresults = n;
    if (!status && a->mappers && n == 0 && eval_nskipped > 0)
        status = (fprintf(stderr, "mpitopo: --mapper '%s': no mapper applies to this pattern\n", a->mappers), 1);
    free(launch);
    free(leaves);
    return status;
}

/* The strategies of --gpu-pattern (mpitopo_map_gpu), the baseline first. */
static const char *const gpu_strategies[] = {"gpu-default", "strategy1", "strategy2", "magc", "magc:scotch"};

/* eval with --gpu-pattern: every GPU strategy (or those of --mapper), the
 * CPU metrics of the placement over --pattern and the GPU-tree metrics of
 * the GPU assignment over --gpu-pattern. */
static int run_gpu_mappers(const eval_args_t *a, const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern,
                           result_t *results, int *nresults)
{
    char specs[MAX_MAPPERS][64];
    int nspecs = 0;
    if (a->mappers) {
        if (mapper_specs(a->mappers, 0, specs, &nspecs))
            return 1;
        if (nspecs == 0)
            return usage_error("%s", "--mapper none: nothing to measure with --gpu-pattern");
    } else {
        for (size_t i = 0; i < sizeof gpu_strategies / sizeof gpu_strategies[0]; i++)
            snprintf(specs[nspecs++], 64, "%s", gpu_strategies[i]);
    }
    int nprocs, rc, status = 0, n = 0;
    mpitopo_pattern_nprocs(pattern, &nprocs);
    int *launch = malloc(((size_t)nprocs + 1) * sizeof *launch);
    int *leaves = malloc(((size_t)nprocs + 1) * sizeof *leaves);
    int *gpu_of = malloc(((size_t)nprocs + 1) * sizeof *gpu_of);
    mpitopo_map_options_t opt;
    status = eval_options(a, machine, nprocs, launch, launch && leaves && gpu_of, &opt);
    for (int i = 0; i < nspecs && !status; i++) {
        result_t *r = &results[n];
        memset(r, 0, sizeof *r);
        snprintf(r->name, sizeof r->name, "%s", specs[i]);
        rc = mpitopo_map_gpu(specs[i], machine, eval_network, NULL, eval_gpus, pattern, eval_gpu_pattern, &opt,
                             leaves, gpu_of);
        if (rc == MPITOPO_ERR_UNSUPPORTED && !a->mappers) {
            /* magc:scotch without Scotch, in the default list */
            fprintf(stderr, "mpitopo: %s left out: %s\n", specs[i], mpitopo_last_error());
            continue;
        }
        if (rc == MPITOPO_SUCCESS)
            rc = mpitopo_metrics_compute(machine, pattern, leaves, a->c.weight, &r->m);
        if (rc == MPITOPO_SUCCESS)
            rc = mpitopo_gpu_metrics(machine, eval_gpus, eval_gpu_pattern, leaves, gpu_of, &r->gpu_mc,
                                     &r->gpu_hop_bytes);
        if (rc != MPITOPO_SUCCESS)
            status = fail(specs[i], rc);
        else
            status = network_metrics(machine, pattern, leaves, r);
        r->has_gpu = 1;
        n++;
    }
    *nresults = n;
    if (!status && n == 0)
        status = (fprintf(stderr, "mpitopo: --gpu-pattern: no GPU strategy could run\n"), 1);
    free(launch);
    free(leaves);
    free(gpu_of);
    return status;
}

/* Where a leaf is: its node (0 when the machine has no "node" level) and
 * its index inside the node. */
static void leaf_place(const mpitopo_machine_t *m, int node_level, int leaf, int *node, int *slot)
{
    int first = 0, count;
    *node = 0;
    if (node_level >= 0) {
        mpitopo_machine_unit_of(m, node_level, leaf, node);
        mpitopo_machine_unit_leaves(m, node_level, *node, &first, &count);
    }
    *slot = leaf - first;
}

/* The first leaf of a node and how many it has (one node holding every leaf
 * when the machine has no "node" level). */
static void node_leaves(const mpitopo_machine_t *m, int node_level, int node, int *first, int *count)
{
    if (node_level >= 0) {
        mpitopo_machine_unit_leaves(m, node_level, node, first, count);
    } else {
        *first = 0;
        mpitopo_machine_nleaves(m, count);
    }
}

static int machine_nnodes(const mpitopo_machine_t *m)
{
    int node_level, nnodes = 1;
    mpitopo_machine_node_level(m, &node_level);
    if (node_level >= 0)
        mpitopo_machine_level(m, node_level, NULL, NULL, &nnodes, NULL, NULL);
    return nnodes;
}

/* Host names: --hosts split at commas (pointers into a copy), or NULL for
 * the default node<i>. */
static char **host_names(const char *list, int nnodes, char **copy)
{
    *copy = NULL;
    if (!list)
        return NULL;
    int n = 1;
    for (const char *p = list; *p; p++)
        n += *p == ',';
    char **names = malloc((size_t)n * sizeof *names);
    *copy = malloc(strlen(list) + 1);
    if (!names || !*copy) {
        free(names);
        free(*copy);
        *copy = NULL;
        fprintf(stderr, "mpitopo: out of memory\n");
        return NULL;
    }
    strcpy(*copy, list);
    n = 0;
    for (char *tok = *copy, *end; tok; tok = end) {
        end = strchr(tok, ',');
        if (end)
            *end++ = '\0';
        names[n++] = tok;
    }
    for (int i = 0; i < n; i++)
        if (!names[i][0] || strpbrk(names[i], " \t=:")) {
            fprintf(stderr, "mpitopo: --hosts '%s': host %d is empty or contains a blank, '=' or ':'\n",
                    list, i);
            goto bad;
        }
    if (n < nnodes) {
        fprintf(stderr, "mpitopo: --hosts '%s': %d host names for %d nodes\n", list, n, nnodes);
        goto bad;
    }
    return names;
bad:
    free(names);
    free(*copy);
    *copy = NULL;
    return NULL;
}

static void host_name(char *const *names, int node, char *buf, size_t size)
{
    if (names)
        snprintf(buf, size, "%s", names[node]);
    else
        snprintf(buf, size, "node%d", node);
}

/*
 * Reading a placement written elsewhere (--mapping FILE) in one of the
 * formats 'mpitopo map' writes. Every line is checked as it comes, so an
 * error names the file, the line and the value; at the end every rank of
 * the pattern must have a leaf.
 */
typedef struct mapping_reader {
    const char *path;
    int line;
    const mpitopo_machine_t *m;
    int nprocs, nleaves, nnodes, node_level;
    char *const *hosts;
    int *leaves;       /* out: the leaf of each rank, -1 while unplaced */
    int *rank_line;    /* the line that placed each rank */
    int *rank_on_leaf; /* -1 = free */
    int *next_in_node; /* mpich-hosts: leaves handed out per node */
    int next;          /* mpich-hosts: the next rank; cray-rank-order: the next leaf */
} mapping_reader_t;

static int mapping_error(const mapping_reader_t *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (r->line > 0)
        fprintf(stderr, "mpitopo: --mapping %s:%d: ", r->path, r->line);
    else
        fprintf(stderr, "mpitopo: --mapping %s: ", r->path);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 1;
}

/* A non-negative int filling the token [s, s+len), or an error naming it. */
static int token_int(const mapping_reader_t *r, const char *what, const char *s, size_t len, long long *v)
{
    if (!parse_int(s, len, 0, v))
        return 0;
    return mapping_error(r, "%s '%.*s': expected an integer in [0, 2^31-1]", what, (int)(len < 60 ? len : 60), s);
}

static int place(mapping_reader_t *r, long long rank, long long leaf)
{
    if (rank >= r->nprocs)
        return mapping_error(r, "rank %lld, but the pattern has %d processes (ranks 0 to %d)", rank, r->nprocs,
                             r->nprocs - 1);
    if (leaf >= r->nleaves)
        return mapping_error(r, "leaf %lld, but the machine has %d leaves (0 to %d)", leaf, r->nleaves,
                             r->nleaves - 1);
    if (r->leaves[rank] >= 0)
        return mapping_error(r, "rank %lld placed twice (line %d placed it already)", rank, r->rank_line[rank]);
    int other = r->rank_on_leaf[leaf];
    if (other >= 0)
        return mapping_error(r, "rank %lld on leaf %lld, which rank %d holds already (line %d): not a permutation",
                             rank, leaf, other, r->rank_line[other]);
    r->leaves[rank] = (int)leaf;
    r->rank_on_leaf[leaf] = (int)rank;
    r->rank_line[rank] = r->line;
    return 0;
}

/* A line as messages quote it: at most about 60 characters. */
static const char *quoted(const char *s)
{
    static char buf[2][72];
    static int which;
    if (strlen(s) <= 64)
        return s;
    which = !which;
    snprintf(buf[which], sizeof buf[which], "%.60s...", s);
    return buf[which];
}

/* The node of a host name: --hosts, or node0, node1, ... */
static int host_node(const mapping_reader_t *r, const char *host, int *node)
{
    if (r->hosts) {
        for (int i = 0; i < r->nnodes; i++)
            if (!strcmp(r->hosts[i], host))
                return *node = i, 0;
        return mapping_error(r, "unknown host '%s': not among the %d names that --hosts gives the nodes", quoted(host),
                             r->nnodes);
    }
    long long v;
    char canon[32];
    if (!strncmp(host, "node", 4) && !parse_int(host + 4, strlen(host + 4), 0, &v) && v < r->nnodes) {
        snprintf(canon, sizeof canon, "node%lld", v);
        if (!strcmp(canon, host))
            return *node = (int)v, 0;
    }
    return mapping_error(r, "unknown host '%s': the machine's nodes are node0 to node%d (name them with --hosts)",
                         quoted(host), r->nnodes - 1);
}

/* plain: "RANK LEAF" or "RANK LEAF NODE". */
static int line_plain(mapping_reader_t *r, char *s)
{
    const char *what[] = {"rank", "leaf", "node"};
    long long v[3];
    int n = 0;
    for (char *p = s + strspn(s, " \t"); *p; p += strspn(p, " \t"), n++) {
        size_t len = strcspn(p, " \t");
        if (n == 3)
            return mapping_error(r, "'%s': expected \"RANK LEAF\" or \"RANK LEAF NODE\" (plain format)", quoted(s));
        if (token_int(r, what[n], p, len, &v[n]))
            return 1;
        p += len;
    }
    if (n < 2)
        return mapping_error(r, "'%s': expected \"RANK LEAF\" or \"RANK LEAF NODE\" (plain format)", quoted(s));
    if (n == 3 && v[1] < r->nleaves) {
        int node, slot;
        leaf_place(r->m, r->node_level, (int)v[1], &node, &slot);
        if (node != v[2])
            return mapping_error(r, "leaf %lld is on node %d, not on node %lld", v[1], node, v[2]);
    }
    return place(r, v[0], v[1]);
}

/* openmpi-rankfile: "rank R=HOST slot=S", S the core index in the node. */
static int line_openmpi(mapping_reader_t *r, char *s)
{
    static const char *expected = "expected \"rank R=HOST slot=S\" (openmpi-rankfile format)";
    char *p = s + 4;
    if (strncmp(s, "rank", 4) || (*p != ' ' && *p != '\t'))
        return mapping_error(r, "'%s': %s", quoted(s), expected);
    p += strspn(p, " \t");
    size_t len = strcspn(p, " \t=");
    char *eq = p + len + strspn(p + len, " \t");
    if (*eq != '=')
        return mapping_error(r, "'%s': %s", quoted(s), expected);
    long long rank, slot;
    if (token_int(r, "rank", p, len, &rank))
        return 1;
    char *host = eq + 1;
    size_t host_len = strcspn(host, " \t");
    char *slot_s = host + host_len + strspn(host + host_len, " \t");
    if (host_len == 0 || strncmp(slot_s, "slot=", 5))
        return mapping_error(r, "'%s': %s", quoted(s), expected);
    slot_s += 5;
    len = strcspn(slot_s, " \t");
    if (slot_s[len + strspn(slot_s + len, " \t")])
        return mapping_error(r, "'%s': %s", quoted(s), expected);
    if (parse_int(slot_s, len, 0, &slot))
        return mapping_error(r, "slot '%.*s': expected one core index inside the node, as 'mpitopo map' writes",
                             (int)(len < 60 ? len : 60), slot_s);
    host[host_len] = '\0';
    int node, first, count;
    if (host_node(r, host, &node))
        return 1;
    node_leaves(r->m, r->node_level, node, &first, &count);
    if (slot >= count)
        return mapping_error(r, "slot %lld, but host %s has %d leaves (slots 0 to %d)", slot, host, count,
                             count - 1);
    return place(r, rank, first + slot);
}

/* mpich-hosts: "HOST" or "HOST:N", N ranks on HOST, in rank order. */
static int line_mpich(mapping_reader_t *r, char *s)
{
    if (strpbrk(s, " \t"))
        return mapping_error(r, "'%s': expected \"HOST\" or \"HOST:N\" (mpich-hosts format)", quoted(s));
    char *colon = strrchr(s, ':');
    long long n = 1;
    if (colon) {
        *colon = '\0';
        if (parse_int(colon + 1, strlen(colon + 1), 1, &n))
            return mapping_error(r, "'%s:%s': expected a number of ranks >= 1 after ':'", quoted(s), quoted(colon + 1));
    }
    int node, first, count;
    if (host_node(r, s, &node))
        return 1;
    node_leaves(r->m, r->node_level, node, &first, &count);
    for (long long k = 0; k < n; k++) {
        if (r->next >= r->nprocs)
            return mapping_error(r, "more ranks than the pattern's %d processes", r->nprocs);
        if (r->next_in_node[node] == count)
            return mapping_error(r, "host %s gets more ranks than its %d leaves", s, count);
        if (place(r, r->next++, first + r->next_in_node[node]++))
            return 1;
    }
    return 0;
}

/* One entry of a cray-rank-order list: a rank or a range A-B, on the next
 * leaves (slots). */
static int cray_entry(mapping_reader_t *r, const char *tok, size_t len)
{
    const char *dash = memchr(tok, '-', len);
    size_t lo_len = dash ? (size_t)(dash - tok) : len;
    long long lo, hi;
    if (parse_int(tok, lo_len, 0, &lo) || (dash && parse_int(dash + 1, len - lo_len - 1, 0, &hi)))
        return mapping_error(r, "'%.*s': expected a rank or a range A-B of ranks", (int)(len < 60 ? len : 60), tok);
    if (!dash)
        hi = lo;
    if (hi < lo)
        return mapping_error(r, "range '%.*s': the first rank is above the last", (int)(len < 60 ? len : 60), tok);
    for (long long rank = lo; rank <= hi; rank++) {
        if (r->next >= r->nleaves)
            return mapping_error(r, "more ranks than the machine's %d leaves (slots)", r->nleaves);
        if (place(r, rank, r->next++))
            return 1;
    }
    return 0;
}

/* cray-rank-order: ranks or ranges separated by commas, over any number of
 * lines; the i-th rank in the file is the rank on leaf i. */
static int line_cray(mapping_reader_t *r, char *s)
{
    for (char *p = s; *p;) {
        char *tok = p;
        size_t len = strcspn(p, ",");
        p += len + (p[len] == ',');
        for (; len > 0 && (*tok == ' ' || *tok == '\t'); len--)
            tok++;
        while (len > 0 && (tok[len - 1] == ' ' || tok[len - 1] == '\t'))
            len--;
        if (len == 0 && *p)
            return mapping_error(r, "'%s': an empty entry between commas (cray-rank-order format)", quoted(s));
        if (len > 0 && cray_entry(r, tok, len))
            return 1;
    }
    return 0;
}

/* The format of a file from its first line (comments and blanks gone). */
static map_format_t detect_format(const char *s)
{
    size_t n = strlen(s);
    int fields = 0;
    for (const char *p = s + strspn(s, " \t"); *p; p += strspn(p, " \t"), fields++)
        p += strcspn(p, " \t");
    if (!strncmp(s, "rank", 4) && (s[4] == ' ' || s[4] == '\t'))
        return FMT_OPENMPI;
    if (strspn(s, "0123456789,- \t") == n && (strchr(s, ',') || fields == 1))
        return FMT_CRAY;
    if (strspn(s, "0123456789 \t") == n && (fields == 2 || fields == 3))
        return FMT_PLAIN;
    if (fields == 1)
        return FMT_MPICH;
    return FMT_AUTO;
}

/* One line without its comment and trailing blanks (and \r), control
 * characters shown as '?' (they fit no format, and messages quote lines);
 * 0 when empty. */
static size_t clean_line(char *s)
{
    s[strcspn(s, "#\r\n")] = '\0';
    size_t n = strlen(s);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 && s[i] != '\t')
            s[i] = '?';
        else if (s[i] == 0x7f)
            s[i] = '?';
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    return n;
}

static int read_lines(mapping_reader_t *r, FILE *f, map_format_t *format)
{
    static int (*const parse[])(mapping_reader_t *, char *) = {line_plain, line_openmpi, line_mpich, line_cray};
    char *buf = NULL;
    size_t cap = 0;
    int status = 0;
    ssize_t len;
    while (!status && (len = getline(&buf, &cap, f)) >= 0) {
        r->line++;
        if (memchr(buf, '\0', (size_t)len)) {
            status = mapping_error(r, "a NUL byte: not a text file");
            break;
        }
        if (!clean_line(buf))
            continue;
        char *s = buf + strspn(buf, " \t");
        if (*format == FMT_AUTO && (*format = detect_format(s)) == FMT_AUTO)
            status = mapping_error(r, "'%s': not a line of any format 'mpitopo map' writes (or give --mapping-format)",
                                   quoted(s));
        else
            status = parse[*format](r, s);
    }
    if (!status && ferror(f))
        status = mapping_error(r, "reading failed: %s", strerror(errno));
    free(buf);
    return status;
}

/* Every rank placed: the file is complete. */
static int check_complete(mapping_reader_t *r, map_format_t format)
{
    int placed = 0, missing = -1;
    for (int p = 0; p < r->nprocs; p++) {
        if (r->leaves[p] >= 0)
            placed++;
        else if (missing < 0)
            missing = p;
    }
    r->line = 0;
    if (format == FMT_AUTO)
        return mapping_error(r, "no placement in the file (empty, or only comments)");
    if (missing >= 0)
        return mapping_error(r, "places %d of the pattern's %d ranks: rank %d is missing (%s format)", placed,
                             r->nprocs, missing, format_names[format]);
    return mpitopo_mapping_check(r->m, r->nprocs, r->leaves) == MPITOPO_SUCCESS ? 0 : fail(r->path, 1);
}

static int read_mapping(const char *path, const mpitopo_machine_t *m, int nprocs, char *const *hosts,
                        map_format_t *format, int *leaves)
{
    mapping_reader_t r = {.path = path, .m = m, .nprocs = nprocs, .hosts = hosts, .leaves = leaves};
    mpitopo_machine_nleaves(m, &r.nleaves);
    mpitopo_machine_node_level(m, &r.node_level);
    r.nnodes = machine_nnodes(m);
    r.rank_line = malloc(((size_t)nprocs + 1) * sizeof *r.rank_line);
    r.rank_on_leaf = malloc((size_t)r.nleaves * sizeof *r.rank_on_leaf);
    r.next_in_node = calloc((size_t)r.nnodes, sizeof *r.next_in_node);
    FILE *f = NULL;
    int status = 0;
    if (!r.rank_line || !r.rank_on_leaf || !r.next_in_node)
        status = (fprintf(stderr, "mpitopo: out of memory\n"), 1);
    else if (!(f = fopen(path, "r")))
        status = mapping_error(&r, "%s", strerror(errno));
    if (!status) {
        for (int p = 0; p < nprocs; p++)
            leaves[p] = -1;
        for (int l = 0; l < r.nleaves; l++)
            r.rank_on_leaf[l] = -1;
        status = read_lines(&r, f, format);
    }
    if (!status)
        status = check_complete(&r, *format);
    if (f)
        fclose(f);
    free(r.rank_line);
    free(r.rank_on_leaf);
    free(r.next_in_node);
    return status;
}

/* The --mapping files as columns after the mappers'. */
static int read_mappings(const eval_args_t *a, const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern,
                         result_t *results, int *nresults)
{
    if (a->nmappings == 0)
        return 0;
    if (*nresults + a->nmappings > MAX_COLUMNS)
        return usage_error("%s", "too many columns: at most 64 mappers and --mapping files together");
    int nprocs, status = 0;
    mpitopo_pattern_nprocs(pattern, &nprocs);
    char *copy = NULL, **hosts = host_names(a->c.hosts, machine_nnodes(machine), &copy);
    int *leaves = malloc(((size_t)nprocs + 1) * sizeof *leaves);
    if (a->c.hosts && !hosts)
        status = 1;
    else if (!leaves)
        status = (fprintf(stderr, "mpitopo: out of memory\n"), 1);
    for (int i = 0; i < a->nmappings && !status; i++) {
        result_t *r = &results[*nresults];
        const char *base = strrchr(a->mappings[i], '/');
        snprintf(r->name, sizeof r->name, "%s", base && base[1] ? base + 1 : a->mappings[i]);
        r->file = a->mappings[i];
        r->format = a->mapping_format;
        r->kept_launch = 0;
        status = read_mapping(r->file, machine, nprocs, hosts, &r->format, leaves);
        int rc = status ? MPITOPO_SUCCESS : mpitopo_metrics_compute(machine, pattern, leaves, a->c.weight, &r->m);
        if (rc != MPITOPO_SUCCESS)
            status = fail(r->file, rc);
        if (!status)
            status = network_metrics(machine, pattern, leaves, r);
        if (!status)
            ++*nresults;
    }
    free(leaves);
    free(hosts);
    free(copy);
    return status;
}

static void print_row(const char *label, const result_t *r, int n, int width, void (*cell)(const result_t *, char *, size_t))
{
    printf("%-34s", label);
    for (int i = 0; i < n; i++) {
        char buf[64];
        cell(&r[i], buf, sizeof buf);
        printf(" %*s", width, buf);
    }
    printf("\n");
}

/* Integral values in full (weights are usually whole bytes), others to 6 digits. */
static void number(char *buf, size_t size, double v)
{
    if (v == (double)(long long)v && v < 1e15 && v > -1e15)
        snprintf(buf, size, "%lld", (long long)v);
    else
        snprintf(buf, size, "%.6g", v);
}

static void stat_cell(const mpitopo_stat_t *s, char *buf, size_t size)
{
    snprintf(buf, size, "%g / %g / %.2f", s->min, s->max, s->avg);
}
static void cell_off(const result_t *r, char *b, size_t n) { stat_cell(&r->m.offnode_partners, b, n); }
static void cell_on(const result_t *r, char *b, size_t n) { stat_cell(&r->m.onnode_partners, b, n); }
static void cell_cost(const result_t *r, char *b, size_t n) { number(b, n, r->m.cost); }
static int cur_level;
static void cell_edges(const result_t *r, char *b, size_t n)
{
    snprintf(b, n, "%lld", (long long)r->m.levels[cur_level].edges_crossing);
}
static void cell_weight(const result_t *r, char *b, size_t n)
{
    number(b, n, r->m.levels[cur_level].weight_crossing);
}
static void cell_max(const result_t *r, char *b, size_t n)
{
    const mpitopo_level_metrics_t *l = &r->m.levels[cur_level];
    char w[32];
    number(w, sizeof w, l->max_weight_per_unit);
    snprintf(b, n, "%lld / %s", (long long)l->max_edges_per_unit, w);
}

static void cell_gpu_mc(const result_t *r, char *b, size_t n) { number(b, n, r->gpu_mc); }
static void cell_gpu_hop_bytes(const result_t *r, char *b, size_t n) { number(b, n, r->gpu_hop_bytes); }
static void cell_net_hop_bytes(const result_t *r, char *b, size_t n) { number(b, n, r->net.hop_bytes); }
static void cell_net_dilation(const result_t *r, char *b, size_t n) { number(b, n, r->net.dilation); }
static void cell_net_mc(const result_t *r, char *b, size_t n) { number(b, n, r->net.max_congestion); }
static void cell_net_nzca(const result_t *r, char *b, size_t n) { number(b, n, r->net.nzca); }
static void cell_net_nzcv(const result_t *r, char *b, size_t n) { number(b, n, r->net.nzcv); }
static void cell_net_hybrid(const result_t *r, char *b, size_t n) { number(b, n, r->net.hybrid); }
static void cell_net_busy(const result_t *r, char *b, size_t n)
{
    snprintf(b, n, "%lld", (long long)r->net.busy_channels);
}
static void cell_net_busiest(const result_t *r, char *b, size_t n)
{
    snprintf(b, n, "%s", r->busiest[0] ? r->busiest : "-");
}

/* The network rows, under a heading naming the description. */
static void print_network_rows(const char *desc, const result_t *r, int n, int width)
{
    printf("network %s\n", desc);
    print_row("  hop-bytes", r, n, width, cell_net_hop_bytes);
    print_row("  dilation (sum of hops)", r, n, width, cell_net_dilation);
    print_row("  max congestion (MC)", r, n, width, cell_net_mc);
    print_row("  NZCA", r, n, width, cell_net_nzca);
    print_row("  NZCV", r, n, width, cell_net_nzcv);
    print_row("  hybrid (weights 1,1,1,1)", r, n, width, cell_net_hybrid);
    print_row("  channels with traffic", r, n, width, cell_net_busy);
    print_row("  most loaded channel", r, n, width, cell_net_busiest);
}

static void print_box_bound(const mpitopo_box_bound_t *bb, const mpitopo_weight_t w)
{
    if (!bb->found) {
        printf("best box tiling: none (no tiling of the grid by equal boxes of one node's size)\n");
        return;
    }
    printf("best box tiling: box ");
    for (int i = 0; i < bb->ndims; i++)
        printf("%s%d", i ? "x" : "", bb->box[i]);
    char wt[32];
    number(wt, sizeof wt, bb->offnode_weight);
    printf(" per node -> off-node edges %lld, weight %s (%s), off-node partners avg %.2f\n",
           (long long)bb->offnode_edges, wt, mpitopo_weight_name(w), bb->offnode_partners_avg);
}

static void print_lower_bound(const mpitopo_node_bound_t *lb, const mpitopo_weight_t w)
{
    if (!lb->found) {
        printf("lower bound: none (the machine has no node level)\n");
        return;
    }
    char wt[32];
    number(wt, sizeof wt, lb->offnode_weight);
    printf("lower bound (any mapping): off-node edges %lld, weight %s (%s)\n", (long long)lb->offnode_edges, wt,
           mpitopo_weight_name(w));
}

/* Off-node weight of a mapping above the lower bound, in per cent. */
static int over_bound(const result_t *r, double *pct)
{
    const mpitopo_node_bound_t *lb = &r->m.lower_bound;
    int node = -1;
    for (int l = 0; l < r->m.nlevels; l++)
        if (!strcmp(r->m.levels[l].name, "node"))
            node = l;
    if (!lb->found || node < 0 || lb->offnode_weight <= 0)
        return 0;
    *pct = 100.0 * (r->m.levels[node].weight_crossing / lb->offnode_weight - 1);
    return 1;
}

static void cell_over(const result_t *r, char *b, size_t n)
{
    double pct;
    if (over_bound(r, &pct))
        snprintf(b, n, "+%.1f %%", pct < 0 ? 0 : pct);
    else
        snprintf(b, n, "-");
}

static void print_table(const eval_args_t *a, const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern,
                        const result_t *r, int n)
{
    char desc[256];
    int nleaves, nprocs;
    int64_t nedges;
    mpitopo_machine_describe(machine, desc, sizeof desc);
    mpitopo_machine_nleaves(machine, &nleaves);
    mpitopo_pattern_nprocs(pattern, &nprocs);
    mpitopo_pattern_nedges(pattern, &nedges);
    printf("machine:   %s (%d leaves)\n", desc, nleaves);
    printf("pattern:   %s (%d processes, %lld directed edges)\n", a->c.pattern, nprocs, (long long)nedges);
    if (eval_gpus) {
        int g = 0;
        int64_t gedges;
        mpitopo_gpus_count(eval_gpus, &g);
        mpitopo_gpus_describe(eval_gpus, desc, sizeof desc);
        mpitopo_pattern_nedges(eval_gpu_pattern, &gedges);
        printf("gpus:      %s (%d per node)\n", desc, g);
        printf("gpu pattern: %s (%lld directed edges)\n", a->c.gpu_pattern, (long long)gedges);
    }
    printf("launch:    %s placement; weights: %s\n\n", a->c.placement, mpitopo_weight_name(a->c.weight));
    int width = 22;
    printf("%-34s", "mapper");
    for (int i = 0; i < n; i++)
        printf(" %*s", width, r[i].name);
    printf("\n");
    print_row("off-node partners min / max / avg", r, n, width, cell_off);
    print_row("on-node partners  min / max / avg", r, n, width, cell_on);
    for (int l = 0; l < r[0].m.nlevels; l++) {
        char label[96];
        cur_level = l;
        snprintf(label, sizeof label, "edges crossing %s (%d units)", r[0].m.levels[l].name, r[0].m.levels[l].nunits);
        print_row(label, r, n, width, cell_edges);
        snprintf(label, sizeof label, "  weight crossing %s", r[0].m.levels[l].name);
        print_row(label, r, n, width, cell_weight);
        snprintf(label, sizeof label, "  most leaving one %s: edges / wt", r[0].m.levels[l].name);
        print_row(label, r, n, width, cell_max);
    }
    print_row("weighted cost sum(weight x cost)", r, n, width, cell_cost);
    if (a->c.network)
        print_network_rows(a->c.network, r, n, width);
    if (n > 0 && r[0].has_gpu) {
        print_row("GPU tree: max congestion (B/(GB/s))", r, n, width, cell_gpu_mc);
        print_row("GPU tree: hop-bytes", r, n, width, cell_gpu_hop_bytes);
    }
    for (int i = 0; i < n; i++)
        if (r[i].kept_launch)
            printf("(%s: kept the launch placement, it did not lower the cost)\n", r[i].name);
        else if (r[i].file)
            printf("(%s: the placement in %s, %s format)\n", r[i].name, r[i].file, format_names[r[i].format]);
    int is_cart = 0;
    mpitopo_pattern_cart_info(pattern, &is_cart, NULL, NULL, NULL);
    if (!is_cart)
        return;
    if (r[0].m.lower_bound.found)
        print_row("off-node weight over lower bound", r, n, width, cell_over);
    print_lower_bound(&r[0].m.lower_bound, a->c.weight);
    print_box_bound(&r[0].m.box_bound, a->c.weight);
}

static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

static void json_stat(const char *key, const mpitopo_stat_t *s)
{
    printf("\"%s\": {\"min\": %.17g, \"max\": %.17g, \"avg\": %.17g}", key, s->min, s->max, s->avg);
}

static void json_result(const result_t *r)
{
    printf("    {\"name\": ");
    json_string(r->name);
    if (r->file) {
        printf(", \"file\": ");
        json_string(r->file);
        printf(", \"format\": \"%s\"", format_names[r->format]);
    }
    printf(", \"kept_launch\": %s, ", r->kept_launch ? "true" : "false");
    json_stat("offnode_partners", &r->m.offnode_partners);
    printf(", ");
    json_stat("onnode_partners", &r->m.onnode_partners);
    printf(", \"cost\": %.17g, ", r->m.cost);
    double pct;
    if (over_bound(r, &pct))
        printf("\"over_bound\": %.17g, ", pct / 100);
    else
        printf("\"over_bound\": null, ");
    printf("\"levels\": [");
    for (int l = 0; l < r->m.nlevels; l++) {
        const mpitopo_level_metrics_t *lm = &r->m.levels[l];
        printf("%s\n      {\"name\": ", l ? "," : "");
        json_string(lm->name);
        printf(", \"units\": %d, \"edges_crossing\": %lld, \"weight_crossing\": %.17g, \"max_per_unit\": %lld, "
               "\"avg_per_unit\": %.17g, \"max_weight_per_unit\": %.17g, \"avg_weight_per_unit\": %.17g}",
               lm->nunits, (long long)lm->edges_crossing, lm->weight_crossing, (long long)lm->max_edges_per_unit,
               lm->avg_edges_per_unit, lm->max_weight_per_unit, lm->avg_weight_per_unit);
    }
    printf("]");
    if (r->has_net) {
        const mpitopo_network_metrics_t *nm = &r->net;
        printf(",\n      \"network\": {\"hop_bytes\": %.17g, \"dilation\": %.17g, \"max_congestion\": %.17g, "
               "\"nzca\": %.17g, \"nzcv\": %.17g, \"hybrid\": %.17g, \"busiest_channel\": ",
               nm->hop_bytes, nm->dilation, nm->max_congestion, nm->nzca, nm->nzcv, nm->hybrid);
        if (r->busiest[0])
            json_string(r->busiest);
        else
            printf("null");
        printf("}");
    }
    if (r->has_gpu)
        printf(",\n      \"gpu\": {\"max_congestion\": %.17g, \"hop_bytes\": %.17g}", r->gpu_mc, r->gpu_hop_bytes);
    printf("}");
}

static void print_json(const eval_args_t *a, const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern,
                       const result_t *r, int n)
{
    char desc[256];
    int nprocs, is_cart = 0;
    int64_t nedges;
    mpitopo_machine_describe(machine, desc, sizeof desc);
    mpitopo_pattern_nprocs(pattern, &nprocs);
    mpitopo_pattern_nedges(pattern, &nedges);
    mpitopo_pattern_cart_info(pattern, &is_cart, NULL, NULL, NULL);
    printf("{\"machine\": ");
    json_string(desc);
    printf(", \"pattern\": ");
    json_string(a->c.pattern);
    printf(", \"nprocs\": %d, \"nedges\": %lld, \"placement\": ", nprocs, (long long)nedges);
    json_string(a->c.placement);
    printf(", \"weight\": \"%s\",", mpitopo_weight_name(a->c.weight));
    if (eval_gpus) {
        char gdesc[256];
        int g = 0;
        mpitopo_gpus_count(eval_gpus, &g);
        mpitopo_gpus_describe(eval_gpus, gdesc, sizeof gdesc);
        printf(" \"gpus\": ");
        json_string(gdesc);
        printf(", \"gpus_per_node\": %d, \"gpu_pattern\": ", g);
        json_string(a->c.gpu_pattern);
        printf(",");
    }
    printf("\n  \"box_bound\": ");
    const mpitopo_box_bound_t *bb = &r[0].m.box_bound;
    if (is_cart && bb->found) {
        printf("{\"box\": [");
        for (int i = 0; i < bb->ndims; i++)
            printf("%s%d", i ? ", " : "", bb->box[i]);
        printf("], \"offnode_edges\": %lld, \"offnode_weight\": %.17g, \"offnode_partners_avg\": %.17g}",
               (long long)bb->offnode_edges, bb->offnode_weight, bb->offnode_partners_avg);
    } else {
        printf("null");
    }
    const mpitopo_node_bound_t *lb = &r[0].m.lower_bound;
    printf(",\n  \"lower_bound\": ");
    if (is_cart && lb->found)
        printf("{\"offnode_edges\": %lld, \"offnode_weight\": %.17g}", (long long)lb->offnode_edges,
               lb->offnode_weight);
    else
        printf("null");
    printf(",\n  \"mappers\": [\n");
    /* The skipped mappers of --mapper where they were asked for, by name
     * with why. */
    for (int i = 0, k = 0; i < n || k < eval_nskipped;) {
        if (k < eval_nskipped && eval_skipped[k].at == i) {
            printf("    {\"name\": ");
            json_string(eval_skipped[k].name);
            printf(", \"skipped\": ");
            json_string(eval_skipped[k++].why);
            printf("}");
        } else {
            json_result(&r[i++]);
        }
        printf("%s\n", i < n || k < eval_nskipped ? "," : "");
    }
    printf("  ]}\n");
}

static int cmd_eval(int argc, char **argv)
{
    eval_args_t a;
    int done;
    if (parse_eval_args(argc, argv, &a, &done))
        return 1;
    if (done)
        return 0;
    mpitopo_machine_t *machine = NULL;
    mpitopo_pattern_t *pattern = NULL;
    static result_t results[MAX_COLUMNS];
    int n = 0;
    int status = load_inputs(&a.c, &machine, &pattern);
    if (!status)
        status = load_gpu_inputs(&a.c, machine, pattern);
    if (!status && eval_gpus)
        status = run_gpu_mappers(&a, machine, pattern, results, &n);
    else if (!status)
        status = run_mappers(&a, machine, pattern, results, &n);
    if (!status)
        status = read_mappings(&a, machine, pattern, results, &n);
    if (!status && a.json)
        print_json(&a, machine, pattern, results, n);
    else if (!status)
        print_table(&a, machine, pattern, results, n);
    free_gpu_inputs();
    mpitopo_network_destroy(&eval_network);
    mpitopo_machine_destroy(&machine);
    mpitopo_pattern_destroy(&pattern);
    return status;
}

static int cmd_mappers(int argc, char **argv)
{
    if (argc > 0 && (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help"))) {
        fputs(mappers_help, stdout);
        return 0;
    }
    for (int i = 0; i < mpitopo_mapper_count(); i++)
        printf("%-10s %s\n", mpitopo_mapper_at(i)->name, mpitopo_mapper_at(i)->summary);
    return 0;
}

static const char *dims_help =
    "Usage: mpitopo dims NPROCS D0,D1,... [--ppn N]\n"
    "\n"
    "Fills the 0 entries of the dimension list as MPI_Dims_create should (most\n"
    "balanced, non-increasing; non-zero entries kept): 'mpitopo dims 576 0,0,0'\n"
    "gives 9x8x8.\n"
    "\n"
    "Options:\n"
    "  --ppn N               processes per node: choose the dimensions whose best\n"
    "                        node box cuts the fewest edges of a radius-1 star\n"
    "                        among those at most twice as unbalanced, and print\n"
    "                        the box: 'mpitopo dims 576 0,0,0 --ppn 36' gives\n"
    "                        12x8x6\n"
    "  -h, --help            print this help and exit\n";

/* mpitopo dims NPROCS LIST [--ppn N] */
static int cmd_dims(int argc, char **argv)
{
    if (argc > 0 && (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help"))) {
        fputs(dims_help, stdout);
        return 0;
    }
    long long nprocs, ppn = 0, v;
    int dims[MPITOPO_MAX_DIMS], box[MPITOPO_MAX_DIMS], ndims = 0;
    if (argc != 2 && !(argc == 4 && !strcmp(argv[2], "--ppn")))
        return usage_error("%s", "expected NPROCS D0,D1,... [--ppn N] (see 'mpitopo dims --help')");
    if (parse_int(argv[0], strlen(argv[0]), 1, &nprocs))
        return usage_error("NPROCS '%s': expected an integer in [1, 2^31-1]", argv[0]);
    if (argc == 4 && parse_int(argv[3], strlen(argv[3]), 1, &ppn))
        return usage_error("--ppn '%s': expected an integer in [1, 2^31-1]", argv[3]);
    for (const char *p = argv[1]; *p; ndims++) {
        size_t len = strcspn(p, ",x");
        if (ndims == MPITOPO_MAX_DIMS || parse_int(p, len, 0, &v))
            return usage_error("dimension list '%s': expected up to 32 non-negative integers separated by commas",
                               argv[1]);
        dims[ndims] = (int)v;
        p += len + (p[len] != '\0');
    }
    int rc = ppn ? mpitopo_dims_create_nodes((int)nprocs, (int)ppn, ndims, dims, NULL, box)
                 : mpitopo_dims_create((int)nprocs, ndims, dims);
    if (rc != MPITOPO_SUCCESS)
        return fail("dims", rc);
    for (int i = 0; i < ndims; i++)
        printf("%s%d", i ? "x" : "", dims[i]);
    if (ppn && box[0] > 0) {
        printf("   node box ");
        for (int i = 0; i < ndims; i++)
            printf("%s%d", i ? "x" : "", box[i]);
    }
    printf("\n");
    return 0;
}

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
    common_args_t c;
    const char *mapper, *output;
    const char *devices; /* --devices FILE (with --gpu-pattern) */
    int mapper_given;
    map_format_t format;
    int verbose;
} map_args_t;

/* The value of option o into its field; 1 after a usage error. */
static int map_option(map_args_t *a, const char *o, const char *value)
{
    int rc = common_option(&a->c, o, value);
    if (rc >= 0)
        return rc;
    const char **slot = !strcmp(o, "--mapper")    ? &a->mapper
                        : !strcmp(o, "--output")  ? &a->output
                        : !strcmp(o, "--devices") ? &a->devices
                                                  : NULL;
    a->mapper_given |= slot == &a->mapper;
    if (!slot && strcmp(o, "--format"))
        return usage_error("unknown option '%s'", o);
    if (!value)
        return usage_error("option '%s' needs a value", o);
    if (!slot)
        return parse_format(o, value, 0, &a->format);
    *slot = value;
    return 0;
}

static int parse_map_args(int argc, char **argv, map_args_t *a, int *done)
{
    *a = (map_args_t){.c = COMMON_ARGS_INIT, .mapper = "tree", .format = FMT_PLAIN};
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
        return usage_error("%s", "map needs --machine DESC");
    if (!a->c.pattern)
        return usage_error("%s", "map needs --pattern FILE|DESC");
    if (gpu_options_check(&a->c))
        return 1;
    if (a->devices && !a->c.gpu_pattern)
        return usage_error("--devices '%s' needs --gpu-pattern FILE|DESC and --gpus DESC|XML", a->devices);
    if (a->c.gpu_pattern && !a->mapper_given)
        a->mapper = "magc";
    if (a->c.gpu_pattern && a->format != FMT_PLAIN && !a->devices) {
        fprintf(stderr, "mpitopo: --format %s with --gpu-pattern needs --devices FILE for the GPU of each rank "
                        "(only the plain format has a GPU column)\n", format_names[a->format]);
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

static int write_placement(FILE *out, const map_args_t *a, const mpitopo_machine_t *m, int nprocs,
                           const int *leaves, const int *gpu_of)
{
    int node_level;
    mpitopo_machine_node_level(m, &node_level);
    if (a->format == FMT_CRAY)
        return write_cray(out, m, nprocs, leaves);
    char *copy = NULL, **names = host_names(a->c.hosts, machine_nnodes(m), &copy);
    if (a->c.hosts && !names)
        return 1;
    if (a->format == FMT_MPICH)
        fprintf(out, "# mpitopo map: one line per rank, in rank order (mpiexec -f FILE -n %d)\n", nprocs);
    for (int p = 0; p < nprocs; p++) {
        int node, slot;
        char host[256];
        leaf_place(m, node_level, leaves[p], &node, &slot);
        host_name(names, node, host, sizeof host);
        if (a->format == FMT_PLAIN && gpu_of)
            fprintf(out, "%d %d %d %d\n", p, leaves[p], node, gpu_of[p]);
        else if (a->format == FMT_PLAIN)
            fprintf(out, "%d %d %d\n", p, leaves[p], node);
        else if (a->format == FMT_OPENMPI)
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
    int node_level, rc = mpitopo_metrics_compute(m, pat, leaves, w, &mt);
    if (rc != MPITOPO_SUCCESS)
        return fail("metrics", rc);
    mpitopo_machine_node_level(m, &node_level);
    *cost = mt.cost;
    *offnode = node_level >= 0 ? mt.levels[node_level].weight_crossing : 0;
    return 0;
}

static int report_map(const map_args_t *a, const mpitopo_machine_t *m, const mpitopo_pattern_t *pat,
                      const int *launch, const int *leaves, int kept)
{
    double c0, o0, c1, o1;
    if (placement_metrics(m, pat, a->c.weight, launch, &c0, &o0) ||
        placement_metrics(m, pat, a->c.weight, leaves, &c1, &o1))
        return 1;
    fprintf(stderr, "mpitopo map: %s from %s launch (%s weights): cost %.6g -> %.6g, off-node weight %.6g -> %.6g%s\n",
            a->mapper, a->c.placement, mpitopo_weight_name(a->c.weight), c0, c1, o0, o1,
            kept ? " (kept the launch placement: the mapper did not lower the cost)" : "");
    if (!eval_network)
        return 0;
    result_t r0, r1;
    if (network_metrics(m, pat, launch, &r0) || network_metrics(m, pat, leaves, &r1))
        return 1;
    fprintf(stderr, "mpitopo map: network %s: hop-bytes %.6g -> %.6g, MC %.6g -> %.6g, NZCA %.6g -> %.6g, hybrid %.6g -> %.6g\n",
            a->c.network, r0.net.hop_bytes, r1.net.hop_bytes, r0.net.max_congestion, r1.net.max_congestion,
            r0.net.nzca, r1.net.nzca, r0.net.hybrid, r1.net.hybrid);
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
static int report_gpu_map(const map_args_t *a, const mpitopo_machine_t *m, const mpitopo_pattern_t *pat,
                          const mpitopo_map_options_t *opt, const int *leaves, const int *gpu_of)
{
    int nprocs, rc;
    mpitopo_pattern_nprocs(pat, &nprocs);
    int *l0 = malloc(((size_t)nprocs + 1) * sizeof *l0), *g0 = malloc(((size_t)nprocs + 1) * sizeof *g0);
    double c0, o0, c1, o1, mc0 = 0, hb0 = 0, mc1 = 0, hb1 = 0;
    int status = 0;
    if (!l0 || !g0)
        status = (fprintf(stderr, "mpitopo: out of memory\n"), 1);
    else if ((rc = mpitopo_map_gpu("gpu-default", m, eval_network, NULL, eval_gpus, pat, eval_gpu_pattern, opt, l0,
                                   g0)) != MPITOPO_SUCCESS)
        status = fail("gpu-default", rc);
    else if (placement_metrics(m, pat, a->c.weight, l0, &c0, &o0) ||
             placement_metrics(m, pat, a->c.weight, leaves, &c1, &o1))
        status = 1;
    else if ((rc = mpitopo_gpu_metrics(m, eval_gpus, eval_gpu_pattern, l0, g0, &mc0, &hb0)) != MPITOPO_SUCCESS ||
             (rc = mpitopo_gpu_metrics(m, eval_gpus, eval_gpu_pattern, leaves, gpu_of, &mc1, &hb1)) !=
                 MPITOPO_SUCCESS)
        status = fail("GPU metrics", rc);
    else
        fprintf(stderr, "mpitopo map: %s from gpu-default on %s launch (%s weights): cost %.6g -> %.6g, off-node "
                        "weight %.6g -> %.6g; GPU tree: max congestion %.6g -> %.6g, hop-bytes %.6g -> %.6g\n",
                a->mapper, a->c.placement, mpitopo_weight_name(a->c.weight), c0, c1, o0, o1, mc0, mc1, hb0, hb1);
    free(l0);
    free(g0);
    return status;
}

static int map_and_write(const map_args_t *a, const mpitopo_machine_t *m, const mpitopo_pattern_t *pat)
{
    int nprocs, kept = 0, status = 0, rc;
    mpitopo_pattern_nprocs(pat, &nprocs);
    int *launch = malloc((size_t)nprocs * sizeof *launch);
    int *leaves = malloc((size_t)nprocs * sizeof *leaves);
    int *gpu_of = eval_gpus ? malloc(((size_t)nprocs + 1) * sizeof *gpu_of) : NULL;
    FILE *out = NULL;
    mpitopo_map_options_t opt = MPITOPO_MAP_OPTIONS_INIT;
    opt.weight = a->c.weight;
    opt.seed = a->c.seed;
    opt.launch = launch;
    opt.never_worse = 1;
    if (!launch || !leaves || (eval_gpus && !gpu_of))
        status = (fprintf(stderr, "mpitopo: out of memory\n"), 1);
    else if ((rc = mpitopo_placement(m, nprocs, a->c.placement, launch)) != MPITOPO_SUCCESS)
        status = fail(a->c.placement_opt, rc);
    else if (eval_gpus) {
        if ((rc = mpitopo_map_gpu(a->mapper, m, eval_network, NULL, eval_gpus, pat, eval_gpu_pattern, &opt, leaves,
                                  gpu_of)) != MPITOPO_SUCCESS)
            status = fail(a->mapper, rc);
        else if (a->verbose)
            status = report_gpu_map(a, m, pat, &opt, leaves, gpu_of);
    } else if ((rc = eval_network ? mpitopo_map_network(a->mapper, m, eval_network, NULL, pat, &opt, leaves, &kept)
                                : mpitopo_map(a->mapper, m, pat, &opt, leaves, &kept)) != MPITOPO_SUCCESS)
        status = fail(a->mapper, rc);
    else if (a->verbose)
        status = report_map(a, m, pat, launch, leaves, kept);
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

static int cmd_map(int argc, char **argv)
{
    map_args_t a;
    int done;
    if (parse_map_args(argc, argv, &a, &done))
        return 1;
    if (done)
        return 0;
    mpitopo_machine_t *machine = NULL;
    mpitopo_pattern_t *pattern = NULL;
    int status = load_inputs(&a.c, &machine, &pattern);
    if (!status)
        status = load_gpu_inputs(&a.c, machine, pattern);
    if (!status)
        status = map_and_write(&a, machine, pattern);
    free_gpu_inputs();
    mpitopo_network_destroy(&eval_network);
    mpitopo_machine_destroy(&machine);
    mpitopo_pattern_destroy(&pattern);
    return status;
}

/* tools/platform.c */
extern const char *mpitopo__platform_help;
int mpitopo__platform_main(int argc, char **argv);
/* tools/run.c */
extern const char *mpitopo__run_help;
int mpitopo__run_main(int argc, char **argv);

static const char *help_of(const char *cmd)
{
    if (!strcmp(cmd, "platform"))
        return mpitopo__platform_help;
    if (!strcmp(cmd, "run"))
        return mpitopo__run_help;
    if (!strcmp(cmd, "dims"))
        return dims_help;
    if (!strcmp(cmd, "eval"))
        return eval_help;
    if (!strcmp(cmd, "map"))
        return map_help;
    if (!strcmp(cmd, "mappers"))
        return mappers_help;
    if (!strcmp(cmd, "version"))
        return version_help;
    if (!strcmp(cmd, "env"))
        return env_help;
    return NULL;
}

/* The version this was built as, and the optional mappers built in. */
static int print_version(void)
{
    printf("mpitopo %s\n", MPITOPO_VERSION_STRING);
    const char *optional[] = {"scotch", "metis"};
    const mpitopo_mapper_t *found;
    printf("optional mappers:");
    for (int i = 0; i < 2; i++)
        printf("%s %s %s", i ? "," : "", optional[i],
               mpitopo_mapper_find(optional[i], &found) == MPITOPO_SUCCESS ? "yes" : "no");
    printf("\n");
    return 0;
}

/* The variables of src/core/env.def: their values here, or the table of
 * doc/user-guide.md (which tests/cli/test_cli.sh compares with this output). */
static int cmd_env(int argc, char **argv)
{
    int markdown = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
            return fputs(env_help, stdout), 0;
        if (strcmp(argv[i], "--markdown"))
            return usage_error("env: unknown option '%s'", argv[i]);
        markdown = 1;
    }
    int n;
    const mpitopo__env_var_t *vars = mpitopo__env_vars(&n);
    if (markdown) {
        printf("| variable | read by | meaning |\n|---|---|---|\n");
        for (int i = 0; i < n; i++)
            printf("| `%s` | %s | %s |\n", vars[i].name, vars[i].who, vars[i].meaning);
        return 0;
    }
    for (int i = 0; i < n; i++) {
        const char *v = mpitopo__getenv((mpitopo__env_id)i);
        printf("%-26s %-22s %s\n", vars[i].name, vars[i].who, v ? v : "(unset)");
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        fputs(main_help, argc < 2 ? stderr : stdout);
        return argc < 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version"))
        return print_version();
    if (!strcmp(cmd, "help")) {
        const char *h = argc > 2 ? help_of(argv[2]) : main_help;
        if (!h) {
            fprintf(stderr, "mpitopo: no command '%s'\n", argv[2]);
            return 1;
        }
        fputs(h, stdout);
        return 0;
    }
    if (!strcmp(cmd, "eval"))
        return cmd_eval(argc - 2, argv + 2);
    if (!strcmp(cmd, "run"))
        return mpitopo__run_main(argc - 2, argv + 2);
    if (!strcmp(cmd, "map"))
        return cmd_map(argc - 2, argv + 2);
    if (!strcmp(cmd, "mappers"))
        return cmd_mappers(argc - 2, argv + 2);
    if (!strcmp(cmd, "platform"))
        return mpitopo__platform_main(argc - 2, argv + 2);
    if (!strcmp(cmd, "dims"))
        return cmd_dims(argc - 2, argv + 2);
    if (!strcmp(cmd, "env"))
        return cmd_env(argc - 2, argv + 2);
    if (!strcmp(cmd, "version")) {
        if (argc > 2 && (!strcmp(argv[2], "-h") || !strcmp(argv[2], "--help")))
            return fputs(version_help, stdout), 0;
        if (argc > 2)
            return usage_error("version takes no argument, not '%s'", argv[2]);
        return print_version();
    }
    fprintf(stderr, "mpitopo: unknown command '%s'\n\n%s", cmd, main_help);
    return 1;
}
