/* mpitopo: evaluate process mappings on machine models from the command line. */
#define MPITOPO_NO_MPI
#include <mpitopo.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MAPPERS 32

static const char *main_help =
    "usage: mpitopo <command> [options]\n"
    "\n"
    "Evaluate how MPI processes are placed on a machine and how much of their\n"
    "communication crosses each level of it (nodes, sockets, switches).\n"
    "\n"
    "commands:\n"
    "  eval      print the metrics of one or more mappers side by side\n"
    "  map       map a (traced) pattern and write a rank placement for a launcher\n"
    "  mappers   list the available mappers\n"
    "  dims      Cartesian dimensions for N processes, balanced or node-aware\n"
    "  version   print the version of mpitopo\n"
    "  help [COMMAND]   this text, or the help of COMMAND\n"
    "\n"
    "Run 'mpitopo COMMAND --help' for the options of a command.\n";

static const char *eval_help =
    "usage: mpitopo eval --machine DESC --pattern DESC|FILE [options]\n"
    "\n"
    "Places the processes of a communication pattern on a machine with each\n"
    "mapper and prints, side by side: distinct communication partners per\n"
    "process on the same node and on other nodes (min / max / avg), the\n"
    "edges and weight crossing every machine level (total and the most\n"
    "leaving one unit), and the weighted cost sum(weight x level cost).\n"
    "For Cartesian patterns it also prints a true lower bound on the off-node\n"
    "traffic of any mapping (the edge-isoperimetric bound of the grid) and how\n"
    "far each mapper is above it, and, on full, equal nodes, the best box\n"
    "tiling: the off-node traffic when every node holds the best box of the\n"
    "grid (not a bound: tilings by other shapes can do better).\n"
    "\n"
    "options:\n"
    "  --machine DESC     levels from the network down to cores, each NAME:ARITY\n"
    "                     with an optional @COST, e.g. \"node:1024 core:16\" or\n"
    "                     \"switch:4@100 node:16@40 socket:2@10 core:8@1\".\n"
    "                     The level called \"node\" is the compute node.\n"
    "  --node-topology SRC  take the levels inside a node from hwloc instead:\n"
    "                     DESC then ends at \"node\"; SRC is \"this\" (this machine),\n"
    "                     \"synthetic:package:2 core:8\" or an hwloc XML file.\n"
    "  --pattern DESC|FILE  the communication pattern:\n"
    "                     cart:DIMS[:open|:periods=P,..][:star=R|:moore=R|:offsets=O;O..]\n"
    "                          [:weights=W,..][:bytes=B]\n"
    "                          DIMS like 128x128; periodic unless :open; star radius 1\n"
    "                          by default; ranks row-major (last dimension fastest),\n"
    "                          as MPI_Cart_create numbers them\n"
    "                     random:N:DENSITY:SEED   Erdos-Renyi over ordered pairs\n"
    "                     ring:N:K               rings of K consecutive processes\n"
    "                     complete:N             everybody to everybody\n"
    "                     FILE                   a pattern file (mpitopo-pattern 1 N,\n"
    "                                            then lines SRC DST BYTES MESSAGES)\n"
    "  --placement P      how the launcher placed ranks: block (default), rr\n"
    "                     (round-robin over nodes) or random:SEED. The \"identity\"\n"
    "                     mapper keeps this placement: what MPI_Cart_create does today.\n"
    "  --mapper LIST      comma-separated mappers (default: all; see 'mpitopo mappers');\n"
    "                     a mapper may take an argument, e.g. random:7\n"
    "  --weight W         edge weight to count and optimise: bytes (default),\n"
    "                     messages or unit\n"
    "  --never-worse      keep the launch placement when a mapper does not lower\n"
    "                     the weighted cost (what the MPI layer does)\n"
    "  --seed N           seed for randomised mappers (default 1)\n"
    "  --json             one JSON object instead of the table\n"
    "  -h, --help         this text\n"
    "\n"
    "Table 3 of Gropp (EuroMPI'18), MPI_Cart_create rows, 16 processes per node:\n"
    "  mpitopo eval --machine \"node:1024 core:16\" --pattern cart:128x128 --mapper identity\n"
    "    off-node partners 2 / 3 / 2.12, on-node 1 / 2 / 1.88\n"
    "  mpitopo eval --machine \"node:1024 core:16\" --pattern cart:16x32x32 --mapper identity\n"
    "    off-node partners 4 / 5 / 4.12, on-node 1 / 2 / 1.88\n"
    "  (the paper's 3-D grid 32x32x16 is given here as 16x32x32: with row-major\n"
    "  ranks, a node then holds half of a line of 32, which is what the paper's\n"
    "  figures imply; with the 16-long dimension last a node holds a whole\n"
    "  periodic line and the counts are 4 / 4 / 4 off-node).\n"
    "\n"
    "exit status: 0 on success, 1 on a usage or input error (with a message).\n";

static const char *mappers_help =
    "usage: mpitopo mappers\n"
    "\n"
    "Lists the mappers that --mapper accepts, one per line with a summary.\n";

static const char *version_help = "usage: mpitopo version\n\nPrints the version of mpitopo.\n";

typedef struct eval_args {
    const char *machine, *node_topology, *pattern, *placement, *mappers;
    mpitopo_weight_t weight;
    uint64_t seed;
    int json, never_worse;
} eval_args_t;

typedef struct result {
    char name[64];
    int kept_launch;
    mpitopo_metrics_t m;
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

static int parse_eval_args(int argc, char **argv, eval_args_t *a, int *done)
{
    *a = (eval_args_t){.placement = "block", .weight = MPITOPO_WEIGHT_BYTES, .seed = 1};
    *done = 0;
    for (int i = 0; i < argc; i++) {
        const char *o = argv[i];
        const char **slot = NULL;
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
            fputs(eval_help, stdout);
            *done = 1;
            return 0;
        } else if (!strcmp(o, "--json")) {
            a->json = 1;
            continue;
        } else if (!strcmp(o, "--never-worse")) {
            a->never_worse = 1;
            continue;
        }
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--machine"))
            slot = &a->machine;
        else if (!strcmp(o, "--node-topology"))
            slot = &a->node_topology;
        else if (!strcmp(o, "--pattern"))
            slot = &a->pattern;
        else if (!strcmp(o, "--placement"))
            slot = &a->placement;
        else if (!strcmp(o, "--mapper"))
            slot = &a->mappers;
        else if (strcmp(o, "--weight") && strcmp(o, "--seed"))
            return usage_error("unknown option '%s'", o);
        if (!value)
            return usage_error("option '%s' needs a value", o);
        i++;
        if (slot) {
            *slot = value;
        } else if (!strcmp(o, "--weight")) {
            if (mpitopo_weight_from_string(value, &a->weight) != MPITOPO_SUCCESS)
                return usage_error("--weight '%s': expected bytes, messages or unit", value);
        } else {
            char *end;
            errno = 0;
            long long s = strtoll(value, &end, 10);
            if (!*value || *end || s < 0 || errno == ERANGE)
                return usage_error("--seed '%s': expected an integer in [0, 2^63-1]", value);
            a->seed = (uint64_t)s;
        }
    }
    if (!a->machine)
        return usage_error("%s", "eval needs --machine DESC");
    if (!a->pattern)
        return usage_error("%s", "eval needs --pattern DESC|FILE");
    return 0;
}

static int is_pattern_description(const char *s)
{
    static const char *kinds[] = {"cart:", "random:", "ring:", "complete:"};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strncmp(s, kinds[i], strlen(kinds[i])))
            return 1;
    return 0;
}

static int load_inputs(const eval_args_t *a, mpitopo_machine_t **machine, mpitopo_pattern_t **pattern)
{
    int rc;
    if (a->node_topology)
        rc = mpitopo_machine_from_hwloc(a->machine, strcmp(a->node_topology, "this") ? a->node_topology : NULL,
                                        machine);
    else
        rc = mpitopo_machine_from_string(a->machine, machine);
    if (rc != MPITOPO_SUCCESS)
        return fail("--machine", rc);
    if (is_pattern_description(a->pattern))
        rc = mpitopo_pattern_from_string(a->pattern, pattern);
    else
        rc = mpitopo_pattern_read(a->pattern, pattern);
    if (rc != MPITOPO_SUCCESS)
        return fail("--pattern", rc);
    return 0;
}

/* Split the comma-separated mapper list (or all mappers that apply to the
 * pattern) into specs. */
static int mapper_specs(const char *list, int is_cart, char specs[][64], int *n)
{
    *n = 0;
    if (!list) {
        for (int i = 0; i < mpitopo_mapper_count() && *n < MAX_MAPPERS; i++)
            if (is_cart || !mpitopo_mapper_at(i)->needs_cart)
                snprintf(specs[(*n)++], 64, "%s", mpitopo_mapper_at(i)->name);
        return 0;
    }
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

static int run_mappers(const eval_args_t *a, const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern,
                       result_t *results, int *nresults)
{
    char specs[MAX_MAPPERS][64];
    int is_cart = 0;
    mpitopo_pattern_cart_info(pattern, &is_cart, NULL, NULL, NULL);
    if (mapper_specs(a->mappers, is_cart, specs, nresults))
        return 1;
    int nprocs, nleaves, rc;
    mpitopo_pattern_nprocs(pattern, &nprocs);
    mpitopo_machine_nleaves(machine, &nleaves);
    if (nprocs > nleaves) {
        fprintf(stderr, "mpitopo: the pattern has %d processes but the machine only %d leaves\n", nprocs, nleaves);
        return 1;
    }
    int *launch = malloc(((size_t)nprocs + 1) * sizeof *launch);
    int *leaves = malloc(((size_t)nprocs + 1) * sizeof *leaves);
    int status = 0;
    if (!launch || !leaves) {
        fprintf(stderr, "mpitopo: out of memory\n");
        status = 1;
    } else if ((rc = mpitopo_placement(machine, nprocs, a->placement, launch)) != MPITOPO_SUCCESS) {
        status = fail("--placement", rc);
    }
    mpitopo_map_options_t opt = MPITOPO_MAP_OPTIONS_INIT;
    opt.weight = a->weight;
    opt.seed = a->seed;
    opt.launch = launch;
    opt.never_worse = a->never_worse;
    for (int i = 0; i < *nresults && !status; i++) {
        result_t *r = &results[i];
        snprintf(r->name, sizeof r->name, "%s", specs[i]);
        rc = mpitopo_map(specs[i], machine, pattern, &opt, leaves, &r->kept_launch);
        if (rc == MPITOPO_SUCCESS)
            rc = mpitopo_metrics_compute(machine, pattern, leaves, a->weight, &r->m);
        if (rc != MPITOPO_SUCCESS)
            status = fail(specs[i], rc);
    }
    free(launch);
    free(leaves);
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
    printf("pattern:   %s (%d processes, %lld directed edges)\n", a->pattern, nprocs, (long long)nedges);
    printf("launch:    %s placement; weights: %s\n\n", a->placement, mpitopo_weight_name(a->weight));
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
    for (int i = 0; i < n; i++)
        if (r[i].kept_launch)
            printf("(%s: kept the launch placement, it did not lower the cost)\n", r[i].name);
    int is_cart = 0;
    mpitopo_pattern_cart_info(pattern, &is_cart, NULL, NULL, NULL);
    if (!is_cart)
        return;
    if (r[0].m.lower_bound.found)
        print_row("off-node weight over lower bound", r, n, width, cell_over);
    print_lower_bound(&r[0].m.lower_bound, a->weight);
    print_box_bound(&r[0].m.box_bound, a->weight);
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
    printf("]}");
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
    json_string(a->pattern);
    printf(", \"nprocs\": %d, \"nedges\": %lld, \"placement\": ", nprocs, (long long)nedges);
    json_string(a->placement);
    printf(", \"weight\": \"%s\",\n  \"box_bound\": ", mpitopo_weight_name(a->weight));
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
    for (int i = 0; i < n; i++) {
        json_result(&r[i]);
        printf("%s\n", i + 1 < n ? "," : "");
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
    static result_t results[MAX_MAPPERS];
    int n = 0;
    int status = load_inputs(&a, &machine, &pattern);
    if (!status)
        status = run_mappers(&a, machine, pattern, results, &n);
    if (!status && a.json)
        print_json(&a, machine, pattern, results, n);
    else if (!status)
        print_table(&a, machine, pattern, results, n);
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
    "usage: mpitopo dims NPROCS D0,D1,... [--ppn N]\n"
    "\n"
    "Fills the 0 entries of the dimension list as MPI_Dims_create should\n"
    "(most balanced, non-increasing; non-zero entries kept), e.g.\n"
    "'mpitopo dims 576 0,0,0'. With --ppn N (processes per node), chooses the\n"
    "dimensions whose best node box cuts the fewest edges of a radius-1 star\n"
    "among those at most twice as unbalanced, and prints the box:\n"
    "'mpitopo dims 576 0,0,0 --ppn 36' gives 12x8x6.\n";

/* An integer in [lo, 2^31-1] filling s[0..len); 0 on success. */
static int parse_int(const char *s, size_t len, long long lo, long long *out)
{
    char buf[32], *end;
    if (len == 0 || len >= sizeof buf)
        return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    errno = 0;
    *out = strtoll(buf, &end, 10);
    return *end || errno || *out < lo || *out > INT32_MAX ? -1 : 0;
}

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
    "usage: mpitopo map --pattern FILE|DESC --machine DESC [options]\n"
    "\n"
    "Maps the processes of a communication pattern (a file written by the\n"
    "tracer libmpitopo_trace.so, or a description as for 'mpitopo eval') onto\n"
    "a machine and writes the placement in a launcher's format, for running\n"
    "the unmodified program with a better rank placement. The launch\n"
    "placement is kept when the mapper does not lower the weighted cost.\n"
    "\n"
    "options:\n"
    "  --pattern FILE|DESC  the communication pattern (see 'mpitopo eval --help')\n"
    "  --machine DESC     levels from the network down to cores, e.g. \"node:4 core:16\";\n"
    "                     the level called \"node\" is the compute node (host)\n"
    "  --mapper NAME      the mapper (default tree; see 'mpitopo mappers')\n"
    "  --weights W        bytes (default), messages or unit\n"
    "  --launch L         how ranks would be placed without the file, the\n"
    "                     placement to beat: block (default) or rr\n"
    "  --format F         plain (default): one line \"RANK LEAF NODE\" per rank;\n"
    "                     openmpi-rankfile: \"rank R=HOST slot=S\" lines, S the\n"
    "                       core index inside the node (mpirun --rankfile FILE);\n"
    "                     mpich-hosts: a Hydra machine file, one \"HOST:1\" line per\n"
    "                       rank in rank order (mpiexec -f FILE -n N);\n"
    "                     cray-rank-order: an MPICH_RANK_ORDER file, the ranks in\n"
    "                       slot order, comma-separated (the i-th number is the rank\n"
    "                       on the i-th slot; MPICH_RANK_REORDER_METHOD=3); empty\n"
    "                       slots are skipped\n"
    "  --hosts H1,H2,...  host names of the nodes, in node order (default node0,\n"
    "                     node1, ...); at least one per node of the machine\n"
    "  --output FILE      write there instead of standard output\n"
    "  --verbose          print the weighted cost and the off-node weight of the\n"
    "                     launch placement and of the result on stderr\n"
    "  -h, --help         this text\n"
    "\n"
    "Example: mpitopo map --pattern mpitopo-trace.txt --machine \"node:8 core:8\" \\\n"
    "             --launch rr --format openmpi-rankfile --output ranks.txt\n"
    "\n"
    "exit status: 0 on success, 1 on a usage or input error (with a message).\n";

typedef enum map_format { FMT_PLAIN, FMT_OPENMPI, FMT_MPICH, FMT_CRAY } map_format_t;

typedef struct map_args {
    const char *machine, *pattern, *mapper, *launch, *hosts, *output;
    mpitopo_weight_t weight;
    map_format_t format;
    int verbose;
} map_args_t;

static int parse_format(const char *s, map_format_t *f)
{
    static const char *names[] = {"plain", "openmpi-rankfile", "mpich-hosts", "cray-rank-order"};
    for (int i = 0; i < 4; i++)
        if (!strcmp(s, names[i])) {
            *f = (map_format_t)i;
            return 0;
        }
    return usage_error("--format '%s': expected plain, openmpi-rankfile, mpich-hosts or cray-rank-order", s);
}

/* The value of option o into its field; 1 after a usage error. */
static int map_option(map_args_t *a, const char *o, const char *value)
{
    const char **slot = !strcmp(o, "--machine")  ? &a->machine
                        : !strcmp(o, "--pattern") ? &a->pattern
                        : !strcmp(o, "--mapper")  ? &a->mapper
                        : !strcmp(o, "--hosts")   ? &a->hosts
                        : !strcmp(o, "--output")  ? &a->output
                        : !strcmp(o, "--launch")  ? &a->launch
                                                  : NULL;
    if (!slot && strcmp(o, "--weights") && strcmp(o, "--format"))
        return usage_error("unknown option '%s'", o);
    if (!value)
        return usage_error("option '%s' needs a value", o);
    if (slot)
        *slot = value;
    else if (!strcmp(o, "--format"))
        return parse_format(value, &a->format);
    else if (mpitopo_weight_from_string(value, &a->weight) != MPITOPO_SUCCESS)
        return usage_error("--weights '%s': expected bytes, messages or unit", value);
    if (slot == &a->launch && strcmp(value, "block") && strcmp(value, "rr"))
        return usage_error("--launch '%s': expected block or rr", value);
    return 0;
}

static int parse_map_args(int argc, char **argv, map_args_t *a, int *done)
{
    *a = (map_args_t){.mapper = "tree", .launch = "block", .weight = MPITOPO_WEIGHT_BYTES};
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
    if (!a->machine)
        return usage_error("%s", "map needs --machine DESC");
    if (!a->pattern)
        return usage_error("%s", "map needs --pattern FILE|DESC");
    return 0;
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
    for (int l = 0; l < nleaves; l++)
        if (rank_at[l] >= 0) {
            fprintf(out, "%s%d", sep, rank_at[l]);
            sep = ",";
        }
    fputc('\n', out);
    free(rank_at);
    return 0;
}

static int write_placement(FILE *out, const map_args_t *a, const mpitopo_machine_t *m, int nprocs,
                           const int *leaves)
{
    int node_level, nnodes = 1;
    mpitopo_machine_node_level(m, &node_level);
    if (node_level >= 0)
        mpitopo_machine_level(m, node_level, NULL, NULL, &nnodes, NULL, NULL);
    if (a->format == FMT_CRAY)
        return write_cray(out, m, nprocs, leaves);
    char *copy = NULL, **names = host_names(a->hosts, nnodes, &copy);
    if (a->hosts && !names)
        return 1;
    if (a->format == FMT_MPICH)
        fprintf(out, "# mpitopo map: one line per rank, in rank order (mpiexec -f FILE -n %d)\n", nprocs);
    for (int p = 0; p < nprocs; p++) {
        int node, slot;
        char host[256];
        leaf_place(m, node_level, leaves[p], &node, &slot);
        host_name(names, node, host, sizeof host);
        if (a->format == FMT_PLAIN)
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
    if (placement_metrics(m, pat, a->weight, launch, &c0, &o0) ||
        placement_metrics(m, pat, a->weight, leaves, &c1, &o1))
        return 1;
    fprintf(stderr, "mpitopo map: %s from %s launch (%s weights): cost %.6g -> %.6g, off-node weight %.6g -> %.6g%s\n",
            a->mapper, a->launch, mpitopo_weight_name(a->weight), c0, c1, o0, o1,
            kept ? " (kept the launch placement: the mapper did not lower the cost)" : "");
    return 0;
}

static int map_and_write(const map_args_t *a, const mpitopo_machine_t *m, const mpitopo_pattern_t *pat)
{
    int nprocs, nleaves, kept = 0, status = 0, rc;
    mpitopo_pattern_nprocs(pat, &nprocs);
    mpitopo_machine_nleaves(m, &nleaves);
    if (nprocs > nleaves) {
        fprintf(stderr, "mpitopo: the pattern has %d processes but the machine only %d leaves\n", nprocs, nleaves);
        return 1;
    }
    int *launch = malloc((size_t)nprocs * sizeof *launch);
    int *leaves = malloc((size_t)nprocs * sizeof *leaves);
    FILE *out = NULL;
    mpitopo_map_options_t opt = MPITOPO_MAP_OPTIONS_INIT;
    opt.weight = a->weight;
    opt.launch = launch;
    opt.never_worse = 1;
    if (!launch || !leaves)
        status = (fprintf(stderr, "mpitopo: out of memory\n"), 1);
    else if ((rc = mpitopo_placement(m, nprocs, a->launch, launch)) != MPITOPO_SUCCESS)
        status = fail("--launch", rc);
    else if ((rc = mpitopo_map(a->mapper, m, pat, &opt, leaves, &kept)) != MPITOPO_SUCCESS)
        status = fail(a->mapper, rc);
    else if (a->verbose)
        status = report_map(a, m, pat, launch, leaves, kept);
    if (!status && !(out = a->output ? fopen(a->output, "w") : stdout))
        status = (fprintf(stderr, "mpitopo: --output '%s': %s\n", a->output, strerror(errno)), 1);
    if (!status)
        status = write_placement(out, a, m, nprocs, leaves);
    /* Close (or flush) even after an error, hence | rather than ||. */
    if (out && (ferror(out) | (out != stdout ? fclose(out) : fflush(out))) && !status)
        status = (fprintf(stderr, "mpitopo: writing %s failed\n", a->output ? a->output : "the output"), 1);
    free(launch);
    free(leaves);
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
    eval_args_t in = {.machine = a.machine, .pattern = a.pattern};
    mpitopo_machine_t *machine = NULL;
    mpitopo_pattern_t *pattern = NULL;
    int status = load_inputs(&in, &machine, &pattern);
    if (!status)
        status = map_and_write(&a, machine, pattern);
    mpitopo_machine_destroy(&machine);
    mpitopo_pattern_destroy(&pattern);
    return status;
}

static const char *help_of(const char *cmd)
{
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
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        fputs(main_help, argc < 2 ? stderr : stdout);
        return argc < 2;
    }
    const char *cmd = argv[1];
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
    if (!strcmp(cmd, "map"))
        return cmd_map(argc - 2, argv + 2);
    if (!strcmp(cmd, "mappers"))
        return cmd_mappers(argc - 2, argv + 2);
    if (!strcmp(cmd, "dims"))
        return cmd_dims(argc - 2, argv + 2);
    if (!strcmp(cmd, "version")) {
        if (argc > 2) {
            fputs(version_help, stdout);
            return 0;
        }
        printf("mpitopo %s\n", mpitopo_get_version(NULL, NULL, NULL));
        return 0;
    }
    fprintf(stderr, "mpitopo: unknown command '%s'\n\n%s", cmd, main_help);
    return 1;
}
