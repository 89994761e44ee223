/*
 * mapnet: network-aware mapping quality and time (issue 17, part 4).
 *
 * One case per run: a network, a machine whose nodes sit on the network's
 * first end nodes in order (mpitopo_network_machine(), as 'mpitopo eval
 * --network' does), and a pattern. Every mapper of the list runs through
 * mpitopo_map_network() from the block launch; its placement is judged by
 * mpitopo_network_evaluate() (process p on the end node of its leaf's
 * node). One Markdown table per case: hop-bytes, dilation, MC, NZCA and
 * NZCV divided by block's, "hyb/blk" their sum without dilation (the
 * thesis's normalised hybrid metric: 4 for block), and the mapping time:
 * CPU time of the process (CLOCK_PROCESS_CPUTIME_ID, less disturbed by the
 * other work of a shared machine than the wall time, also shown), the
 * smallest of --reps runs.
 *
 * ptram's phases: the library prints "X s partitioning, Y s greedy, Z s
 * refinement" at MPITOPO_VERBOSE=2 (its own clock, wall time); mapnet sets
 * that level, catches the library's standard error around each call and
 * shows the three figures and the rest (total wall time minus the three:
 * setup, the launch's evaluation, routes, the placement on cores).
 *
 *   mapnet --network DESC --machine DESC --pattern DESC [--mappers LIST]
 *          [--reps N] [--title TEXT] [--nodes-dir DIR] [--verbose]
 *
 * The last row, "bound", is no mapper: mpitopo_network_bound()'s true lower
 * bounds on MC and hop-bytes over block's (every mapping is at or above
 * them; "-" for patterns it knows no bound of), detailed on the line after
 * the table (its injection and group parts, absolute).
 *
 * --nodes-dir: for each mapper, DIR/<mapper>.nodes (':' and '=' in the
 * spec made '_'), the end node of every process, one line per process in
 * rank order: bench/smpi/mapnet_smpi.sh turns them into SMPI hostfiles, so
 * the simulated placement is the one measured here.
 *
 * --mappers: comma-separated specs ("ptram:rounds=0"); "auto" (default):
 * block, then every registered mapper that applies to the pattern (cart
 * mappers only for Cartesian patterns; the launch placements rr, random
 * and identity left out), then ptram:blind and ptram:strict when ptram is
 * registered. block must come first: it is the reference. No MPI needed.
 */
#define _GNU_SOURCE
#define MPITOPO_NO_MPI
#include <mpitopo.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_SPECS 64

typedef struct {
    char spec[96];
    mpitopo_network_metrics_t m;
    double cpu, wall;
    double phase[3]; /* partitioning, greedy, refinement; < 0 when not logged */
} row_t;

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int fail(const char *what, int rc)
{
    const char *detail = mpitopo_last_error();
    fprintf(stderr, "mapnet: %s: %s\n", what, detail && detail[0] ? detail : mpitopo_strerror(rc));
    return 1;
}

/* "auto": block, the registered mappers that apply, ptram's comparators. */
static int auto_specs(int is_cart, char specs[][96], int *n)
{
    static const char *skip[] = {"block", "rr", "random", "identity"};
    int has_ptram = 0;
    *n = 0;
    snprintf(specs[(*n)++], 96, "block");
    for (int i = 0; i < mpitopo_mapper_count() && *n < MAX_SPECS - 2; i++) {
        const mpitopo_mapper_t *mp = mpitopo_mapper_at(i);
        int skipped = mp->needs_cart && !is_cart;
        for (size_t k = 0; k < sizeof skip / sizeof skip[0]; k++)
            skipped |= !strcmp(mp->name, skip[k]);
        if (skipped)
            continue;
        has_ptram |= !strcmp(mp->name, "ptram");
        snprintf(specs[(*n)++], 96, "%s", mp->name);
    }
    if (has_ptram) {
        snprintf(specs[(*n)++], 96, "ptram:blind");
        snprintf(specs[(*n)++], 96, "ptram:strict");
    }
    return 0;
}

static int split_specs(const char *list, char specs[][96], int *n)
{
    *n = 0;
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        if (len == 0 || len >= 96 || *n == MAX_SPECS) {
            fprintf(stderr, "mapnet: --mappers '%s': expected a comma-separated list\n", list);
            return 1;
        }
        memcpy(specs[*n], p, len);
        specs[(*n)++][len] = '\0';
        p += len + (p[len] == ',');
    }
    return *n == 0;
}

/* Read ptram's phase line from the captured standard error; pass the other
 * lines on when verbose. */
static void read_log(FILE *log, int verbose, double phase[3])
{
    char line[2048];
    phase[0] = phase[1] = phase[2] = -1;
    rewind(log);
    while (fgets(line, sizeof line, log)) {
        const char *s = strstr(line, " s partitioning, ");
        if (s) {
            while (s > line && s[-1] != ' ' && s[-1] != ';')
                s--;
            if (sscanf(s, "%lf s partitioning, %lf s greedy, %lf s refinement", &phase[0], &phase[1],
                       &phase[2]) != 3)
                phase[0] = phase[1] = phase[2] = -1;
        } else if (verbose) {
            fputs(line, stderr);
        }
    }
}

static int write_nodes(const char *dir, const char *spec, const int *nodes, int nprocs)
{
    char path[4096];
    int len = snprintf(path, sizeof path, "%s/", dir);
    for (const char *c = spec; *c && len < (int)sizeof path - 8; c++)
        path[len++] = *c == ':' || *c == '=' || *c == ',' ? '_' : *c;
    snprintf(path + len, sizeof path - (size_t)len, ".nodes");
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "mapnet: cannot write %s\n", path);
        return 1;
    }
    for (int p = 0; p < nprocs; p++)
        fprintf(f, "%d\n", nodes[p]);
    return fclose(f) != 0;
}

/* One mapper, --reps times (the fastest run kept): map, then evaluate. */
static int run_one(const char *spec, const mpitopo_machine_t *machine, const mpitopo_network_t *net,
                   const mpitopo_pattern_t *pat, int reps, int verbose, const char *nodes_dir, int *leaves,
                   int *nodes, row_t *r)
{
    int nprocs, node_level, rc = MPITOPO_SUCCESS;
    mpitopo_pattern_nprocs(pat, &nprocs);
    mpitopo_machine_node_level(machine, &node_level);
    snprintf(r->spec, sizeof r->spec, "%s", spec);
    r->cpu = r->wall = 1e300;
    for (int rep = 0; rep < reps && rc == MPITOPO_SUCCESS; rep++) {
        FILE *log = tmpfile();
        int saved = log ? dup(2) : -1;
        fflush(stderr);
        if (saved >= 0)
            dup2(fileno(log), 2);
        double c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID), w0 = clock_s(CLOCK_MONOTONIC);
        rc = mpitopo_map_network(spec, machine, net, NULL, pat, NULL, leaves, NULL);
        double c1 = clock_s(CLOCK_PROCESS_CPUTIME_ID), w1 = clock_s(CLOCK_MONOTONIC);
        fflush(stderr);
        if (saved >= 0) {
            dup2(saved, 2);
            close(saved);
        }
        if (log) {
            double phase[3];
            read_log(log, verbose, phase);
            fclose(log);
            if (w1 - w0 < r->wall)
                memcpy(r->phase, phase, sizeof phase);
        }
        if (w1 - w0 < r->wall)
            r->wall = w1 - w0;
        if (c1 - c0 < r->cpu)
            r->cpu = c1 - c0;
    }
    if (rc != MPITOPO_SUCCESS)
        return fail(spec, rc);
    for (int p = 0; p < nprocs; p++) {
        nodes[p] = 0;
        if (node_level >= 0)
            mpitopo_machine_unit_of(machine, node_level, leaves[p], &nodes[p]);
    }
    rc = mpitopo_network_evaluate(net, pat, nodes, NULL, NULL, &r->m);
    if (rc != MPITOPO_SUCCESS)
        return fail("mpitopo_network_evaluate", rc);
    return nodes_dir ? write_nodes(nodes_dir, spec, nodes, nprocs) : 0;
}

static double ratio(double x, double ref)
{
    return ref > 0 ? x / ref : x;
}

/* The "bound" row: mpitopo_network_bound()'s MC and hop-bytes over block's,
 * the floor no mapping goes below ("-" where no bound is known). */
static void print_bound(const mpitopo_network_bound_t *lb, const mpitopo_network_metrics_t *b)
{
    if (!lb->found) {
        printf("| bound | - |  | - |  |  |  |  |  |  |  |  |  |\n");
        return;
    }
    printf("| bound | %.3f |  | %.3f |  |  |  |  |  |  |  |  |  |\n", ratio(lb->hop_bytes, b->hop_bytes),
           ratio(lb->max_congestion, b->max_congestion));
}

static void print_table(const char *title, int nprocs, int64_t nedges, const row_t *rows, int n,
                        const mpitopo_network_bound_t *lb)
{
    const mpitopo_network_metrics_t *b = &rows[0].m;
    printf("\n### %s\n\n", title);
    printf("%d processes, %lld edges; block: hop-bytes %.0f, dilation %.0f, MC %.4g, NZCA %.3f, NZCV %.3f\n\n",
           nprocs, (long long)nedges, b->hop_bytes, b->dilation, b->max_congestion, b->nzca, b->nzcv);
    printf("| mapper | HB | dil | MC | NZCA | NZCV | hyb/blk | CPU s | wall s | part | greedy | refine | rest |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int i = 0; i < n; i++) {
        const mpitopo_network_metrics_t *m = &rows[i].m;
        double hb = ratio(m->hop_bytes, b->hop_bytes), mc = ratio(m->max_congestion, b->max_congestion);
        double ca = ratio(m->nzca, b->nzca), cv = ratio(m->nzcv, b->nzcv);
        printf("| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |", rows[i].spec, hb,
               ratio(m->dilation, b->dilation), mc, ca, cv, hb + mc + ca + cv, rows[i].cpu, rows[i].wall);
        if (rows[i].phase[0] >= 0) {
            double rest = rows[i].wall - rows[i].phase[0] - rows[i].phase[1] - rows[i].phase[2];
            printf(" %.3f | %.3f | %.3f | %.3f |\n", rows[i].phase[0], rows[i].phase[1], rows[i].phase[2],
                   rest > 0 ? rest : 0);
        } else {
            printf("  |  |  |  |\n");
        }
    }
    print_bound(lb, b);
    if (lb->found)
        printf("\nbound: MC %.3f (injection %.3f, group %.3f at group level %d), hop-bytes %.0f\n",
               lb->max_congestion, lb->injection, lb->group, lb->group_level, lb->hop_bytes);
    fflush(stdout);
}

static int usage(void)
{
    fprintf(stderr, "usage: mapnet --network DESC --machine DESC --pattern DESC [--mappers LIST|auto]\n"
                    "              [--reps N] [--title TEXT] [--nodes-dir DIR] [--verbose]\n");
    return 2;
}

int main(int argc, char **argv)
{
    const char *netdesc = NULL, *mdesc = NULL, *pdesc = NULL, *list = "auto", *title = NULL,
               *nodes_dir = NULL;
    int reps = 1, verbose = 0;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--verbose")) {
            verbose = 1;
            continue;
        }
        if (!v)
            return usage();
        if (!strcmp(argv[i], "--network"))
            netdesc = v;
        else if (!strcmp(argv[i], "--machine"))
            mdesc = v;
        else if (!strcmp(argv[i], "--pattern"))
            pdesc = v;
        else if (!strcmp(argv[i], "--mappers"))
            list = v;
        else if (!strcmp(argv[i], "--nodes-dir"))
            nodes_dir = v;
        else if (!strcmp(argv[i], "--title"))
            title = v;
        else if (!strcmp(argv[i], "--reps") && (reps = atoi(v)) >= 1)
            ;
        else
            return usage();
        i++;
    }
    if (!netdesc || !mdesc || !pdesc)
        return usage();
    /* Read once by the library, at its first log call: set before any. */
    setenv("MPITOPO_VERBOSE", "2", 1);

    mpitopo_network_t *net = NULL;
    mpitopo_machine_t *m0 = NULL, *machine = NULL;
    mpitopo_pattern_t *pat = NULL;
    int *leaves = NULL, *nodes = NULL, status = 1, rc, nprocs = 0, is_cart = 0, n = 0;
    char (*specs)[96] = malloc(MAX_SPECS * sizeof *specs);
    row_t *rows = calloc(MAX_SPECS, sizeof *rows);
    if (!specs || !rows)
        goto cleanup;
    if ((rc = mpitopo_network_from_string(netdesc, &net)) != MPITOPO_SUCCESS) {
        fail("--network", rc);
        goto cleanup;
    }
    if ((rc = mpitopo_machine_from_string(mdesc, &m0)) != MPITOPO_SUCCESS ||
        (rc = mpitopo_network_machine(net, m0, NULL, &machine, NULL)) != MPITOPO_SUCCESS) {
        fail("--machine", rc);
        goto cleanup;
    }
    if ((rc = mpitopo_pattern_from_string(pdesc, &pat)) != MPITOPO_SUCCESS) {
        fail("--pattern", rc);
        goto cleanup;
    }
    mpitopo_pattern_nprocs(pat, &nprocs);
    mpitopo_pattern_cart_info(pat, &is_cart, NULL, NULL, NULL);
    if (!strcmp(list, "auto") ? auto_specs(is_cart, specs, &n) : split_specs(list, specs, &n))
        goto cleanup;
    leaves = malloc(((size_t)nprocs + 1) * sizeof *leaves);
    nodes = malloc(((size_t)nprocs + 1) * sizeof *nodes);
    if (!leaves || !nodes)
        goto cleanup;
    for (int i = 0; i < n; i++)
        if (run_one(specs[i], machine, net, pat, reps, verbose, nodes_dir, leaves, nodes, &rows[i]))
            goto cleanup;
    int64_t nedges = 0;
    mpitopo_pattern_nedges(pat, &nedges);
    mpitopo_network_bound_t lb;
    if ((rc = mpitopo_network_bound(net, machine, NULL, pat, &lb)) != MPITOPO_SUCCESS) {
        fail("mpitopo_network_bound", rc);
        goto cleanup;
    }
    char deftitle[256];
    snprintf(deftitle, sizeof deftitle, "%.100s on %.100s", pdesc, netdesc);
    print_table(title ? title : deftitle, nprocs, nedges, rows, n, &lb);
    status = 0;
cleanup:
    free(specs);
    free(rows);
    free(leaves);
    free(nodes);
    mpitopo_pattern_destroy(&pat);
    mpitopo_machine_destroy(&m0);
    mpitopo_machine_destroy(&machine);
    mpitopo_network_destroy(&net);
    return status;
}
