/*
 * mapq: mapping quality, time and memory of the mappers on the benchmark set
 * of issue 4 (2-D/3-D star stencils, 2-D/3-D Moore neighbourhoods, random
 * sparse graphs, rings of 8), from 64 to 65,536 processes, on machines of 16
 * cores per node (and, from 16,384 processes, also with a switch level).
 *
 * Stencils run twice: as Cartesian patterns (the cart mapper applies) and as
 * plain graphs rebuilt from their edges ("-graph" cases), which carry no
 * Cartesian information, so a general mapper cannot hand them to the cart
 * mapper.
 *
 * Every mapping runs in a forked child: the child builds the machine and the
 * pattern, maps (wall time with CLOCK_MONOTONIC and CPU time of all threads
 * with CLOCK_PROCESS_CPUTIME_ID, around mpitopo_map only; the summary
 * compares CPU times, which a loaded machine disturbs less), evaluates, and
 * sends its figures through a pipe. Peak memory of the mapping: the child's
 * peak resident size minus its resident size just before mapping, with the
 * peak reset there (Linux: "5" written to /proc/self/clear_refs), because the
 * peak of building the pattern (the -graph cases copy every edge) would
 * otherwise hide the mapper's. Where that reset is not available, the
 * child's maxrss (wait4, that child alone) minus that of a baseline child
 * that builds the same problem and does not map. No MPI needed.
 *
 *   mapq [--quick] [--cases LIST] [--sizes LIST] [--mappers LIST] [--timeout S]
 *
 * Output: a markdown table, then a summary comparing tree with scotch and
 * metis. Mappers this build lacks are skipped with a note.
 */
#define _GNU_SOURCE
#define MPITOPO_NO_MPI
#include <mpitopo.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAXN 64
#define NOVALUE -1.0

static const char *const all_cases[] = {"star2d", "star3d", "moore2d", "moore3d", "star2d-graph", "star3d-graph",
                                        "moore2d-graph", "moore3d-graph", "random", "rings"};
static const int all_sizes[] = {64, 256, 1024, 4096, 16384, 65536};
static const char *const all_mappers[] = {"identity", "cart", "tree", "scotch", "metis"};

typedef struct list {
    int n;
    char item[MAXN][32];
} list_t;

/* What a child reports. */
typedef struct result {
    int status; /* 0 ok, else the mpitopo error code */
    char error[200];
    double cost, seconds, cpu_seconds; /* wall and CPU (all threads) time of mpitopo_map */
    long map_kb; /* peak resident growth while mapping, -1 if not measurable */
    int nlevels;
    char level[MPITOPO_MAX_LEVELS][MPITOPO_MAX_NAME];
    double weight_crossing[MPITOPO_MAX_LEVELS];
    long long offnode_edges;
} result_t;

typedef struct row {
    char cas[32], machine[128], mapper[32];
    int n;
    result_t r;
    double mem_mb;
} row_t;

static row_t *rows;
static int nrows, caprows;

/* ---- problems ----------------------------------------------------------- */

static int is_graph_case(const char *cas)
{
    return strstr(cas, "-graph") != NULL;
}

static int is_cart_case(const char *cas)
{
    return strncmp(cas, "star", 4) == 0 || strncmp(cas, "moore", 5) == 0;
}

/* The pattern description of a case (stencils periodic, radius 1). */
static int describe(const char *cas, int n, char *buf, size_t size)
{
    int nd = strstr(cas, "3d") ? 3 : 2, dims[3] = {0, 0, 0};
    if (is_cart_case(cas)) {
        if (mpitopo_dims_create(n, nd, dims) != MPITOPO_SUCCESS)
            return -1;
        if (nd == 2)
            snprintf(buf, size, "cart:%dx%d%s", dims[0], dims[1], strncmp(cas, "moore", 5) == 0 ? ":moore=1" : "");
        else
            snprintf(buf, size, "cart:%dx%dx%d%s", dims[0], dims[1], dims[2],
                     strncmp(cas, "moore", 5) == 0 ? ":moore=1" : "");
    } else if (strcmp(cas, "random") == 0) {
        snprintf(buf, size, "random:%d:%.17g:1", n, 8.0 / (n - 1));
    } else if (strcmp(cas, "rings") == 0) {
        snprintf(buf, size, "ring:%d:8", n);
    } else {
        return -1;
    }
    return 0;
}

/* The same edges and weights without the Cartesian information. */
static int strip_cart(mpitopo_pattern_t **pattern)
{
    int n;
    int64_t ne, k = 0;
    mpitopo_pattern_nprocs(*pattern, &n);
    mpitopo_pattern_nedges(*pattern, &ne);
    int *src = malloc((size_t)(ne + 1) * sizeof *src), *dst = malloc((size_t)(ne + 1) * sizeof *dst);
    double *bytes = malloc((size_t)(ne + 1) * sizeof *bytes), *msgs = malloc((size_t)(ne + 1) * sizeof *msgs);
    int rc = src && dst && bytes && msgs ? MPITOPO_SUCCESS : MPITOPO_ERR_NOMEM;
    for (int p = 0; p < n && rc == MPITOPO_SUCCESS; p++) {
        int deg;
        const int *d;
        const double *b, *m;
        mpitopo_pattern_out_edges(*pattern, p, &deg, &d, &b, &m);
        for (int i = 0; i < deg; i++, k++) {
            src[k] = p;
            dst[k] = d[i];
            bytes[k] = b[i];
            msgs[k] = m[i];
        }
    }
    mpitopo_pattern_t *plain = NULL;
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo_pattern_create(n, ne, src, dst, bytes, msgs, &plain);
    if (rc == MPITOPO_SUCCESS) {
        mpitopo_pattern_destroy(pattern);
        *pattern = plain;
    }
    free(src);
    free(dst);
    free(bytes);
    free(msgs);
    return rc;
}

static int build(const char *cas, int n, const char *mdesc, mpitopo_machine_t **m, mpitopo_pattern_t **p)
{
    char pdesc[128];
    if (describe(cas, n, pdesc, sizeof pdesc) != 0)
        return MPITOPO_ERR_ARG;
    int rc = mpitopo_machine_from_string(mdesc, m);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo_pattern_from_string(pdesc, p);
    if (rc == MPITOPO_SUCCESS && is_graph_case(cas))
        rc = strip_cart(p);
    return rc;
}

/* ---- the child ----------------------------------------------------------- */

static double now(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A field of /proc/self/status in kB ("VmRSS:", "VmHWM:"), -1 if unknown. */
static long status_kb(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, field, strlen(field)) == 0)
            kb = strtol(line + strlen(field), NULL, 10);
    if (f)
        fclose(f);
    return kb;
}

/* Reset the peak resident size to the current one; 0 on success. */
static int reset_peak(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f)
        return -1;
    int ok = fputs("5", f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

static void measure(const char *cas, int n, const char *mdesc, const char *mapper, result_t *r)
{
    mpitopo_machine_t *m = NULL;
    mpitopo_pattern_t *p = NULL;
    int *leaf = malloc((size_t)n * sizeof *leaf);
    memset(r, 0, sizeof *r);
    r->status = leaf ? build(cas, n, mdesc, &m, &p) : MPITOPO_ERR_NOMEM;
    if (r->status == MPITOPO_SUCCESS && mapper) {
        long before = reset_peak() == 0 ? status_kb("VmRSS:") : -1;
        double t0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
        r->status = mpitopo_map(mapper, m, p, NULL, leaf, NULL);
        r->seconds = now(CLOCK_MONOTONIC) - t0;
        r->cpu_seconds = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
        long peak = before >= 0 ? status_kb("VmHWM:") : -1;
        r->map_kb = peak >= 0 ? peak - before : -1;
    }
    mpitopo_metrics_t met;
    if (r->status == MPITOPO_SUCCESS && mapper)
        r->status = mpitopo_metrics_compute(m, p, leaf, MPITOPO_WEIGHT_BYTES, &met);
    if (r->status != MPITOPO_SUCCESS) {
        snprintf(r->error, sizeof r->error, "%s", mpitopo_last_error());
    } else if (mapper) {
        r->cost = met.cost;
        r->nlevels = met.nlevels;
        for (int l = 0; l < met.nlevels; l++) {
            snprintf(r->level[l], sizeof r->level[l], "%s", met.levels[l].name);
            r->weight_crossing[l] = met.levels[l].weight_crossing;
            if (strcmp(met.levels[l].name, "node") == 0)
                r->offnode_edges = met.levels[l].edges_crossing;
        }
    }
    free(leaf);
    mpitopo_pattern_destroy(&p);
    mpitopo_machine_destroy(&m);
}

/* Run measure() in a child; *maxrss_kb gets its peak resident size. */
static int in_child(const char *cas, int n, const char *mdesc, const char *mapper, int timeout, result_t *r,
                    long *maxrss_kb)
{
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        close(fd[0]);
        alarm((unsigned)timeout);
        result_t mine;
        measure(cas, n, mdesc, mapper, &mine);
        ssize_t w = write(fd[1], &mine, sizeof mine);
        _exit(w == (ssize_t)sizeof mine ? 0 : 1);
    }
    close(fd[1]);
    ssize_t got = 0, k;
    while (got < (ssize_t)sizeof *r && (k = read(fd[0], (char *)r + got, sizeof *r - (size_t)got)) > 0)
        got += k;
    close(fd[0]);
    int status;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
        ;
    *maxrss_kb = ru.ru_maxrss;
    if (got != (ssize_t)sizeof *r) {
        memset(r, 0, sizeof *r);
        r->status = MPITOPO_ERR_INTERNAL;
        snprintf(r->error, sizeof r->error, "%s",
                 WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM ? "timeout" : "child died");
    }
    return 0;
}

/* ---- driver --------------------------------------------------------------- */

static int parse_list(const char *s, list_t *l)
{
    l->n = 0;
    const char *p = s;
    while (*p && l->n < MAXN) {
        size_t len = strcspn(p, ",");
        if (len == 0 || len >= sizeof l->item[0])
            return -1;
        memcpy(l->item[l->n], p, len);
        l->item[l->n++][len] = '\0';
        p += len + (p[len] == ',');
    }
    return l->n > 0 ? 0 : -1;
}

static int has_mapper(const char *name)
{
    const mpitopo_mapper_t *m;
    return mpitopo_mapper_find(name, &m) == MPITOPO_SUCCESS;
}

static void add_row(const char *cas, int n, const char *mdesc, const char *mapper, const result_t *r, double mem)
{
    if (nrows == caprows) {
        caprows = caprows ? 2 * caprows : 64;
        rows = realloc(rows, (size_t)caprows * sizeof *rows);
        if (!rows) {
            fprintf(stderr, "mapq: out of memory\n");
            exit(1);
        }
    }
    row_t *w = &rows[nrows++];
    snprintf(w->cas, sizeof w->cas, "%s", cas);
    snprintf(w->machine, sizeof w->machine, "%s", mdesc);
    snprintf(w->mapper, sizeof w->mapper, "%s", mapper);
    w->n = n;
    w->r = *r;
    w->mem_mb = mem;
}

static void print_row(const row_t *w, double identity_cost)
{
    const result_t *r = &w->r;
    printf("| %s | %d | %s | %s |", w->cas, w->n, w->machine, w->mapper);
    if (r->status != MPITOPO_SUCCESS) {
        printf(" failed: %s | | | | | | |\n", r->error);
        return;
    }
    printf(" %.6g |", r->cost);
    if (identity_cost > 0)
        printf(" %.3f |", r->cost / identity_cost);
    else
        printf(" - |");
    for (int l = 0; l < r->nlevels; l++)
        printf("%s%s %.6g", l ? ", " : " ", r->level[l], r->weight_crossing[l]);
    printf(" | %lld | %.4f | %.4f | %.1f |\n", r->offnode_edges, r->seconds, r->cpu_seconds, w->mem_mb);
    fflush(stdout);
}

static void machines_for(int n, char out[2][64], int *count)
{
    snprintf(out[0], 64, "node:%d core:16", n / 16);
    *count = 1;
    /* Switches of 32 nodes at the largest sizes. */
    if (n >= 16384 && n % (16 * 32) == 0) {
        snprintf(out[1], 64, "switch:%d node:32 core:16", n / (16 * 32));
        *count = 2;
    }
}

static void run_case(const char *cas, int n, const char *mdesc, const list_t *mappers, int timeout)
{
    result_t base;
    long base_kb = 0, kb = 0;
    if (in_child(cas, n, mdesc, NULL, timeout, &base, &base_kb) != 0 || base.status != MPITOPO_SUCCESS) {
        fprintf(stderr, "mapq: %s n=%d on %s: %s\n", cas, n, mdesc, base.error);
        return;
    }
    double identity_cost = NOVALUE;
    for (int i = 0; i < mappers->n; i++) {
        const char *mp = mappers->item[i];
        if (strcmp(mp, "cart") == 0 && (!is_cart_case(cas) || is_graph_case(cas)))
            continue;
        result_t r;
        if (in_child(cas, n, mdesc, mp, timeout, &r, &kb) != 0) {
            perror("mapq: fork");
            exit(1);
        }
        if (strcmp(mp, "identity") == 0 && r.status == MPITOPO_SUCCESS)
            identity_cost = r.cost;
        add_row(cas, n, mdesc, mp, &r, (double)(r.map_kb >= 0 ? r.map_kb : kb - base_kb) / 1024.0);
        print_row(&rows[nrows - 1], identity_cost);
    }
}

/* ---- summary -------------------------------------------------------------- */

static const row_t *find_row(const row_t *like, const char *mapper)
{
    for (int i = 0; i < nrows; i++)
        if (rows[i].n == like->n && strcmp(rows[i].cas, like->cas) == 0 &&
            strcmp(rows[i].machine, like->machine) == 0 && strcmp(rows[i].mapper, mapper) == 0 &&
            rows[i].r.status == MPITOPO_SUCCESS)
            return &rows[i];
    return NULL;
}

static void summary(void)
{
    int compared = 0, wins = 0;
    printf("\n### Summary\n\n");
    for (int i = 0; i < nrows; i++) {
        if (strcmp(rows[i].mapper, "tree") != 0 || rows[i].r.status != MPITOPO_SUCCESS)
            continue;
        const row_t *s = find_row(&rows[i], "scotch"), *m = find_row(&rows[i], "metis");
        if (!s && !m)
            continue;
        double best = s && m ? (s->r.cost < m->r.cost ? s->r.cost : m->r.cost) : s ? s->r.cost : m->r.cost;
        compared++;
        if (rows[i].r.cost <= best) {
            wins++;
            continue;
        }
        printf("- tree worse on %s n=%d %s: %.6g vs %.6g (+%.1f%%)\n", rows[i].cas, rows[i].n, rows[i].machine,
               rows[i].r.cost, best, 100.0 * (rows[i].r.cost - best) / (best > 0 ? best : 1));
    }
    if (compared == 0) {
        printf("No case with tree and a backend to compare.\n");
        return;
    }
    printf("\ntree <= min(scotch, metis) on %d of %d cases (%.0f%%).\n", wins, compared, 100.0 * wins / compared);
    for (int i = 0; i < nrows; i++) {
        if (rows[i].n != 65536 || strcmp(rows[i].mapper, "tree") != 0 || rows[i].r.status != MPITOPO_SUCCESS)
            continue;
        const row_t *s = find_row(&rows[i], "scotch");
        if (s)
            printf("- 65536 %s %s: CPU tree %.3f s, scotch %.3f s: tree %s\n", rows[i].cas, rows[i].machine,
                   rows[i].r.cpu_seconds, s->r.cpu_seconds,
                   rows[i].r.cpu_seconds < s->r.cpu_seconds ? "faster" : "NOT faster");
    }
}

static void usage(void)
{
    fprintf(stderr, "usage: mapq [--quick] [--cases LIST] [--sizes LIST] [--mappers LIST] [--timeout SECONDS]\n"
                    "  cases: star2d star3d moore2d moore3d (and -graph variants) random rings\n"
                    "  sizes: multiples of 16 (default 64..65536; --quick: up to 1024)\n"
                    "  mappers: identity cart tree scotch metis (any registered mapper)\n");
}

static void defaults(list_t *l, const char *const *items, int n)
{
    l->n = n;
    for (int i = 0; i < n; i++)
        snprintf(l->item[i], sizeof l->item[i], "%s", items[i]);
}

int main(int argc, char **argv)
{
    list_t cases, mappers, sizes;
    defaults(&cases, all_cases, (int)(sizeof all_cases / sizeof all_cases[0]));
    defaults(&mappers, all_mappers, (int)(sizeof all_mappers / sizeof all_mappers[0]));
    sizes.n = 0;
    int quick = 0, timeout = 1800;
    for (int i = 1; i < argc; i++) {
        int more = i + 1 < argc;
        if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--cases") == 0 && more && parse_list(argv[i + 1], &cases) == 0)
            i++;
        else if (strcmp(argv[i], "--mappers") == 0 && more && parse_list(argv[i + 1], &mappers) == 0)
            i++;
        else if (strcmp(argv[i], "--sizes") == 0 && more && parse_list(argv[i + 1], &sizes) == 0)
            i++;
        else if (strcmp(argv[i], "--timeout") == 0 && more && (timeout = atoi(argv[i + 1])) > 0)
            i++;
        else {
            usage();
            return 2;
        }
    }
    int size_list[MAXN], nsizes = 0;
    for (int i = 0; i < sizes.n; i++)
        if ((size_list[nsizes++] = atoi(sizes.item[i])) < 16 || size_list[nsizes - 1] % 16) {
            fprintf(stderr, "mapq: size %s is not a positive multiple of 16\n", sizes.item[i]);
            return 2;
        }
    for (int i = 0; sizes.n == 0 && i < (int)(sizeof all_sizes / sizeof all_sizes[0]); i++)
        if (!quick || all_sizes[i] <= 1024)
            size_list[nsizes++] = all_sizes[i];
    for (int c = 0; c < cases.n; c++) {
        char probe[128];
        if (describe(cases.item[c], 64, probe, sizeof probe) != 0) {
            fprintf(stderr, "mapq: unknown case '%s'\n", cases.item[c]);
            usage();
            return 2;
        }
    }
    list_t usable = {0};
    for (int i = 0; i < mappers.n; i++) {
        if (has_mapper(mappers.item[i]))
            snprintf(usable.item[usable.n++], sizeof usable.item[0], "%s", mappers.item[i]);
        else
            printf("Note: mapper '%s' is not in this build; skipped.\n\n", mappers.item[i]);
    }
    printf("| case | N | machine | mapper | weighted cost | / identity | weight crossing each level | "
           "edges off-node | time (s) | CPU (s) | peak mem (MB) |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int s = 0; s < nsizes; s++)
        for (int c = 0; c < cases.n; c++) {
            char mach[2][64];
            int nm;
            machines_for(size_list[s], mach, &nm);
            for (int k = 0; k < nm; k++)
                run_case(cases.item[c], size_list[s], mach[k], &usable, timeout);
        }
    summary();
    free(rows);
    return 0;
}
