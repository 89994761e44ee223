/* mpitopo eval: the metrics of mappers and of placement files side by side,
 * on a machine model, from the command line. */
#include "cli.h"
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

typedef struct eval_args {
    mpitopo__cli_args_t c;
    const char *mappers;
    const char *mappings[MAX_COLUMNS];
    int nmappings;
    mpitopo__cli_format_t mapping_format;
    int json, never_worse;
} eval_args_t;

typedef struct result {
    char name[64];
    const char *file; /* the --mapping file, NULL for a mapper */
    mpitopo__cli_format_t format;
    int kept_launch;
    mpitopo_metrics_t m;
    int has_gpu;                   /* the GPU-tree metrics below are set */
    double gpu_mc, gpu_hop_bytes;  /* mpitopo_gpu_metrics of C_gpu (--gpu-pattern) */
    int has_net;                   /* the network metrics below are set */
    mpitopo_network_metrics_t net; /* on --network */
    char busiest[96];              /* the most congested channel's name, "" when none carries traffic */
} result_t;

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
    int rc = mpitopo__cli_option(&a->c, o, value);
    if (rc >= 0) {
        ++*i;
        return rc;
    }
    int mapping = !strcmp(o, "--mapping"), fmt = !strcmp(o, "--mapping-format");
    if (!mapping && !fmt && strcmp(o, "--mapper"))
        return mpitopo__cli_usage_error("unknown option '%s'", o);
    if (!value)
        return mpitopo__cli_usage_error("option '%s' needs a value", o);
    ++*i;
    if (fmt)
        return mpitopo__cli_parse_format(o, value, 1, &a->mapping_format);
    if (!mapping) {
        a->mappers = value;
        return 0;
    }
    if (a->nmappings == MAX_COLUMNS)
        return mpitopo__cli_usage_error("--mapping '%s': too many --mapping files (at most 64)", value);
    a->mappings[a->nmappings++] = value;
    return 0;
}

static int parse_eval_args(int argc, char **argv, eval_args_t *a, int *done)
{
    *a = (eval_args_t){.c = MPITOPO__CLI_ARGS_INIT, .mapping_format = MPITOPO__CLI_FMT_AUTO};
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
        return mpitopo__cli_usage_error("%s", "eval needs --machine DESC");
    if (!a->c.pattern)
        return mpitopo__cli_usage_error("%s", "eval needs --pattern DESC|FILE");
    if (mpitopo__cli_gpu_options_check(&a->c))
        return 1;
    if (a->c.gpu_pattern && a->nmappings)
        return mpitopo__cli_usage_error("--mapping '%s': not with --gpu-pattern (a placement file assigns no GPUs)",
                                        a->mappings[0]);
    return 0;
}

static int is_coll_mapper(const char *name)
{
    /* By the registered list: mpitopo_mapper_find would set the last error,
     * which the caller may still print. */
    for (int i = 0; i < mpitopo_mapper_count(); i++)
        if (!strcmp(mpitopo_mapper_at(i)->name, name))
            return strncmp(mpitopo_mapper_at(i)->summary, "collective-aware", 16) == 0;
    return 0;
}

/* The mappers of eval without --mapper: all that apply to the pattern, the
 * network-aware ones only under --network, the collective-aware ones (rdmh,
 * rmh, bbmh, bgmh) only for a collective's pattern ("coll:..."). */
static void default_mappers(int is_cart, int network, int coll_pattern, char specs[][64], int *n)
{
    *n = 0;
    for (int i = 0; i < mpitopo_mapper_count() && *n < MAX_MAPPERS; i++)
        if ((is_cart || !mpitopo_mapper_at(i)->needs_cart) &&
            (network || strncmp(mpitopo_mapper_at(i)->summary, "needs a network", 15) != 0) &&
            (coll_pattern || !is_coll_mapper(mpitopo_mapper_at(i)->name)))
            snprintf(specs[(*n)++], 64, "%s", mpitopo_mapper_at(i)->name);
}

/* Split the comma-separated mapper list of --mapper (none for "none") into
 * specs. */
static int mapper_specs(const char *list, char specs[][64], int *n)
{
    *n = 0;
    if (!strcmp(list, "none"))
        return 0;
    const char *p = list;
    if (!*p)
        return mpitopo__cli_usage_error("--mapper '%s': expected a comma-separated list of mappers", list);
    while (*p) {
        size_t len = strcspn(p, ",");
        if (len == 0 || len >= 64 || *n == MAX_MAPPERS)
            return mpitopo__cli_usage_error("--mapper '%s': expected a comma-separated list of mappers", list);
        memcpy(specs[*n], p, len);
        specs[(*n)++][len] = '\0';
        p += len + (p[len] == ',');
    }
    return 0;
}

/* The network metrics of a column (none without --network). */
static int column_network(const mpitopo__cli_inputs_t *in, const int *leaves, result_t *r)
{
    r->has_net = 0;
    if (!in->network)
        return 0;
    if (mpitopo__cli_network_metrics(in, leaves, &r->net, r->busiest, sizeof r->busiest))
        return 1;
    r->has_net = 1;
    return 0;
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
        status = mpitopo__cli_fail(a->c.placement_opt, rc);
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
static int does_not_apply(const char *spec, int is_cart, int network, int rc, char *why, size_t len)
{
    const mpitopo_mapper_t *mp = registered(spec);
    if (!mp)
        return 0;
    if (mp->needs_cart && !is_cart)
        snprintf(why, len, "needs a Cartesian pattern");
    else if (!network && !strncmp(mp->summary, "needs a network", 15))
        snprintf(why, len, "needs a network (--network)");
    else if (rc == MPITOPO_ERR_ARG && is_coll_mapper(mp->name))
        snprintf(why, len, "%s", mpitopo_last_error());
    else
        return 0;
    return mpitopo__map_check_spec(spec) == MPITOPO_SUCCESS;
}

static int run_mappers(const eval_args_t *a, const mpitopo__cli_inputs_t *in, result_t *results, int *nresults)
{
    const mpitopo_machine_t *machine = in->machine;
    const mpitopo_pattern_t *pattern = in->pattern;
    char specs[MAX_MAPPERS][64];
    int is_cart = 0, network = in->network != NULL;
    mpitopo_pattern_cart_info(pattern, &is_cart, NULL, NULL, NULL);
    if (!a->mappers)
        default_mappers(is_cart, network, strncmp(a->c.pattern, "coll:", 5) == 0, specs, nresults);
    else if (mapper_specs(a->mappers, specs, nresults))
        return 1;
    if (*nresults == 0 && a->nmappings == 0)
        return mpitopo__cli_usage_error("%s", "--mapper none: nothing to measure without --mapping FILE");
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
        int skip = a->mappers && does_not_apply(specs[i], is_cart, network, MPITOPO_SUCCESS, s->why, sizeof s->why);
        rc = skip ? MPITOPO_SUCCESS
             : network ? mpitopo_map_network(specs[i], machine, in->network, NULL, pattern, &opt, leaves,
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
            skip = does_not_apply(specs[i], is_cart, network, rc, s->why, sizeof s->why);
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
            status = mpitopo__cli_fail(specs[i], rc);
        else
            status = column_network(in, leaves, r);
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
static int run_gpu_mappers(const eval_args_t *a, const mpitopo__cli_inputs_t *in, result_t *results, int *nresults)
{
    const mpitopo_machine_t *machine = in->machine;
    const mpitopo_pattern_t *pattern = in->pattern;
    char specs[MAX_MAPPERS][64];
    int nspecs = 0;
    if (a->mappers) {
        if (mapper_specs(a->mappers, specs, &nspecs))
            return 1;
        if (nspecs == 0)
            return mpitopo__cli_usage_error("%s", "--mapper none: nothing to measure with --gpu-pattern");
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
        rc = mpitopo_map_gpu(specs[i], machine, in->network, NULL, in->gpus, pattern, in->gpu_pattern, &opt, leaves,
                             gpu_of);
        if (rc == MPITOPO_ERR_UNSUPPORTED && !a->mappers) {
            /* magc:scotch without Scotch, in the default list */
            fprintf(stderr, "mpitopo: %s left out: %s\n", specs[i], mpitopo_last_error());
            continue;
        }
        if (rc == MPITOPO_SUCCESS)
            rc = mpitopo_metrics_compute(machine, pattern, leaves, a->c.weight, &r->m);
        if (rc == MPITOPO_SUCCESS)
            rc = mpitopo_gpu_metrics(machine, in->gpus, in->gpu_pattern, leaves, gpu_of, &r->gpu_mc,
                                     &r->gpu_hop_bytes);
        if (rc != MPITOPO_SUCCESS)
            status = mpitopo__cli_fail(specs[i], rc);
        else
            status = column_network(in, leaves, r);
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
    if (!mpitopo__cli_parse_int(s, len, 0, v))
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
    if (!strncmp(host, "node", 4) && !mpitopo__cli_parse_int(host + 4, strlen(host + 4), 0, &v) && v < r->nnodes) {
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
        mpitopo__cli_leaf_place(r->m, r->node_level, (int)v[1], &node, &slot);
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
    if (mpitopo__cli_parse_int(slot_s, len, 0, &slot))
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
        if (mpitopo__cli_parse_int(colon + 1, strlen(colon + 1), 1, &n))
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
    if (mpitopo__cli_parse_int(tok, lo_len, 0, &lo) ||
        (dash && mpitopo__cli_parse_int(dash + 1, len - lo_len - 1, 0, &hi)))
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
static mpitopo__cli_format_t detect_format(const char *s)
{
    size_t n = strlen(s);
    int fields = 0;
    for (const char *p = s + strspn(s, " \t"); *p; p += strspn(p, " \t"), fields++)
        p += strcspn(p, " \t");
    if (!strncmp(s, "rank", 4) && (s[4] == ' ' || s[4] == '\t'))
        return MPITOPO__CLI_FMT_OPENMPI;
    if (strspn(s, "0123456789,- \t") == n && (strchr(s, ',') || fields == 1))
        return MPITOPO__CLI_FMT_CRAY;
    if (strspn(s, "0123456789 \t") == n && (fields == 2 || fields == 3))
        return MPITOPO__CLI_FMT_PLAIN;
    if (fields == 1)
        return MPITOPO__CLI_FMT_MPICH;
    return MPITOPO__CLI_FMT_AUTO;
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

static int read_lines(mapping_reader_t *r, FILE *f, mpitopo__cli_format_t *format)
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
        if (*format == MPITOPO__CLI_FMT_AUTO && (*format = detect_format(s)) == MPITOPO__CLI_FMT_AUTO)
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
static int check_complete(mapping_reader_t *r, mpitopo__cli_format_t format)
{
    int placed = 0, missing = -1;
    for (int p = 0; p < r->nprocs; p++) {
        if (r->leaves[p] >= 0)
            placed++;
        else if (missing < 0)
            missing = p;
    }
    r->line = 0;
    if (format == MPITOPO__CLI_FMT_AUTO)
        return mapping_error(r, "no placement in the file (empty, or only comments)");
    if (missing >= 0)
        return mapping_error(r, "places %d of the pattern's %d ranks: rank %d is missing (%s format)", placed,
                             r->nprocs, missing, mpitopo__cli_format_names[format]);
    return mpitopo_mapping_check(r->m, r->nprocs, r->leaves) == MPITOPO_SUCCESS ? 0 : mpitopo__cli_fail(r->path, 1);
}

static int read_mapping(const char *path, const mpitopo_machine_t *m, int nprocs, char *const *hosts,
                        mpitopo__cli_format_t *format, int *leaves)
{
    mapping_reader_t r = {.path = path, .m = m, .nprocs = nprocs, .hosts = hosts, .leaves = leaves};
    mpitopo_machine_nleaves(m, &r.nleaves);
    mpitopo_machine_node_level(m, &r.node_level);
    r.nnodes = mpitopo__cli_nnodes(m);
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
static int read_mappings(const eval_args_t *a, const mpitopo__cli_inputs_t *in, result_t *results, int *nresults)
{
    const mpitopo_machine_t *machine = in->machine;
    const mpitopo_pattern_t *pattern = in->pattern;
    if (a->nmappings == 0)
        return 0;
    if (*nresults + a->nmappings > MAX_COLUMNS)
        return mpitopo__cli_usage_error("%s", "too many columns: at most 64 mappers and --mapping files together");
    int nprocs, status = 0;
    mpitopo_pattern_nprocs(pattern, &nprocs);
    char *copy = NULL, **hosts = mpitopo__cli_host_names(a->c.hosts, mpitopo__cli_nnodes(machine), &copy);
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
            status = mpitopo__cli_fail(r->file, rc);
        if (!status)
            status = column_network(in, leaves, r);
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

static void print_table(const eval_args_t *a, const mpitopo__cli_inputs_t *in, const result_t *r, int n)
{
    const mpitopo_machine_t *machine = in->machine;
    const mpitopo_pattern_t *pattern = in->pattern;
    char desc[256];
    int nleaves, nprocs;
    int64_t nedges;
    mpitopo_machine_describe(machine, desc, sizeof desc);
    mpitopo_machine_nleaves(machine, &nleaves);
    mpitopo_pattern_nprocs(pattern, &nprocs);
    mpitopo_pattern_nedges(pattern, &nedges);
    printf("machine:   %s (%d leaves)\n", desc, nleaves);
    printf("pattern:   %s (%d processes, %lld directed edges)\n", a->c.pattern, nprocs, (long long)nedges);
    if (in->gpus) {
        int g = 0;
        int64_t gedges;
        mpitopo_gpus_count(in->gpus, &g);
        mpitopo_gpus_describe(in->gpus, desc, sizeof desc);
        mpitopo_pattern_nedges(in->gpu_pattern, &gedges);
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
            printf("(%s: the placement in %s, %s format)\n", r[i].name, r[i].file,
                   mpitopo__cli_format_names[r[i].format]);
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
        printf(", \"format\": \"%s\"", mpitopo__cli_format_names[r->format]);
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

static void print_json(const eval_args_t *a, const mpitopo__cli_inputs_t *in, const result_t *r, int n)
{
    const mpitopo_machine_t *machine = in->machine;
    const mpitopo_pattern_t *pattern = in->pattern;
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
    if (in->gpus) {
        char gdesc[256];
        int g = 0;
        mpitopo_gpus_count(in->gpus, &g);
        mpitopo_gpus_describe(in->gpus, gdesc, sizeof gdesc);
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

int mpitopo__cmd_eval(int argc, char **argv)
{
    eval_args_t a;
    int done;
    if (parse_eval_args(argc, argv, &a, &done))
        return 1;
    if (done)
        return 0;
    mpitopo__cli_inputs_t in;
    static result_t results[MAX_COLUMNS];
    int n = 0;
    int status = mpitopo__cli_load(&a.c, &in);
    if (!status && in.gpus)
        status = run_gpu_mappers(&a, &in, results, &n);
    else if (!status)
        status = run_mappers(&a, &in, results, &n);
    if (!status)
        status = read_mappings(&a, &in, results, &n);
    if (!status && a.json)
        print_json(&a, &in, results, n);
    else if (!status)
        print_table(&a, &in, results, n);
    mpitopo__cli_free(&in);
    return status;
}

