/*
 * ring: the ring benchmark of Mercier & Jeannot (EuroMPI'11, section 4.1)
 * on several communicators side by side, in the same run.
 *
 * The P processes form R rings of P/R consecutive ranks (ring k: ranks
 * k*S .. k*S+S-1, S = P/R; its leader is k*S). A token of TOKEN bytes goes
 * round every ring LAPS times (the leader sends first; the others receive
 * from their predecessor and send to their successor); then the R leaders
 * call MPI_Allgather with GATHER bytes each. With the paper's 8 rings of 8
 * on 8 nodes of 8 cores, serial placement (rank n on node n/8) keeps every
 * ring inside a node and round-robin placement (rank n on node n%8) puts
 * every ring hop on the network.
 *
 * Every process declares its role's edges to the dist-graph constructor:
 * the ring edges (TOKEN*LAPS bytes, LAPS messages) and, on leaders, the
 * edges to every other leader (GATHER bytes, 1 message: the allgather's
 * logical pattern). The communicators:
 *
 *   native            MPI_Dist_graph_create_adjacent(reorder = 1) with the
 *                     byte weights: what the host MPI does;
 *   mpitopo-bytes     mpitopo_dist_graph_create_adjacent(reorder = 1),
 *                     info mpitopo_weights=bytes;
 *   mpitopo-messages  the same with mpitopo_weights=messages;
 *   mpitopo-unit      the same with mpitopo_weights=unit (not by default).
 *
 * With -o (always under SimGrid SMPI, which has no dist-graph
 * communicators) native is a duplicate of MPI_COMM_WORLD and the mpitopo
 * communicators come from mpitopo_dist_graph_reorder.
 *
 * As in every reordered topology, the process of rank r in the returned
 * communicator plays role r (ring r/S): the pattern is a function of the
 * rank, so the benchmark computes its partners itself, and reports whether
 * the neighbour lists the library returns agree with that role.
 *
 * Timing: one timing is ITERS patterns (laps + allgather) after a barrier,
 * the slowest process's time divided by ITERS. The communicators take turns
 * repetition after repetition (the first one rotates), repetition 0 is a
 * discarded warm-up, and the median over the others is reported.
 *
 *   mpirun -n 64 ring [-R 8] [-t 8] [-l 100] [-a 65536] [-r 10] [-i 1]
 *                     [-c native,bytes,messages,unit] [-o] [--csv]
 */
#include <mpitopo.h>

#include "bench_util.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Under SimGrid SMPI every rank lives in one process: the message buffers
 * are shared (their contents do not matter here). */
#ifdef SMPI_SHARED_MALLOC
#define RING_MALLOC(n) SMPI_SHARED_MALLOC(n)
#define RING_FREE(p) SMPI_SHARED_FREE(p)
#else
#define RING_MALLOC(n) malloc(n)
#define RING_FREE(p) free(p)
#endif

/* SMPI has no dist-graph communicators: reordering alone is the only way. */
#ifdef MPITOPO_SMPI
#define RING_REORDER_ONLY_DEFAULT 1
#else
#define RING_REORDER_ONLY_DEFAULT 0
#endif

enum { NATIVE, BYTES, MESSAGES, UNIT, NMODES };
static const char *const mode_name[NMODES] = {"native", "mpitopo-bytes", "mpitopo-messages", "mpitopo-unit"};
static const char *const mode_key[NMODES] = {"native", "bytes", "messages", "unit"};

typedef struct options {
    int nrings, laps, reps, iters, csv, reorder_only;
    long token, gather;
    int use[NMODES];
} options_t;

/* The edges one role declares: [0] is the ring edge, then the leaders. */
typedef struct role_graph {
    int indeg, outdeg;
    int *src, *dst, *srcw, *dstw;
} role_graph_t;

/* Traffic of one pattern on one communicator, summed over processes. */
typedef struct traffic {
    int ring_off;   /* ring hops (of P) between two nodes */
    int leader_off; /* ordered leader pairs (of R(R-1)) on two nodes */
    double msgs, bytes;
    double node_bytes_max; /* off-node bytes sent by one node, max over nodes */
} traffic_t;

typedef struct ring {
    int mode;
    MPI_Comm comm, leaders; /* leaders: MPI_COMM_NULL except on ring leaders */
    int rank, pos, prev, next;
    double create_time;
    traffic_t traffic;
    int lists_ok;                 /* processes whose lists are their role's; -1: no lists */
    double *times;                /* one per timed repetition */
    double median, min;
} ring_t;

static int world_rank, world_size;

static void usage(FILE *f)
{
    fprintf(f, "usage: ring [options]   (run under mpirun)\n"
               "  -R N        rings (default 8); N must divide the number of processes,\n"
               "              and each ring needs at least 2 processes\n"
               "  -t BYTES    token size (default 8)\n"
               "  -l N        laps of the token round each ring per pattern (default 100)\n"
               "  -a BYTES    allgather contribution of each ring leader (default 65536)\n"
               "  -r N        timed repetitions, after one warm-up (default 10)\n"
               "  -i N        patterns per timing (default 1)\n"
               "  -c LIST     communicators among native,bytes,messages,unit\n"
               "              (default native,bytes,messages)\n"
               "  -o          reordering only: native = MPI_COMM_WORLD duplicated, mpitopo\n"
               "              from mpitopo_dist_graph_reorder (always so under SimGrid SMPI)\n"
               "  --csv       machine-readable output\n"
               "  -h          this help\n");
}

/* Checks that need the job size; NULL when the options are fine. */
static const char *check_options(const options_t *o)
{
    int any = 0;
    for (int k = 0; k < NMODES; k++)
        any |= o->use[k];
    if (!any)
        return "-c selects no communicator";
    if (world_size % o->nrings != 0)
        return "-R does not divide the number of processes";
    if (world_size / o->nrings < 2)
        return "rings need at least 2 processes (lower -R)";
    /* Weights are ints: TOKEN*LAPS bytes along one ring edge. */
    if ((double)o->token * o->laps > 2147483647.0)
        return "-t times -l exceeds 2^31-1 bytes per ring edge";
    return NULL;
}

static int parse_one(int c, const char *arg, options_t *o)
{
    long v = 0;
    int bad = 0;
    switch (c) {
    case 'R':
        bad = bench_parse_long(arg, 1, 1 << 20, &v);
        o->nrings = (int)v;
        break;
    case 't':
        bad = bench_parse_long(arg, 1, 1L << 30, &o->token);
        break;
    case 'l':
        bad = bench_parse_long(arg, 1, 10000000, &v);
        o->laps = (int)v;
        break;
    case 'a':
        bad = bench_parse_long(arg, 1, 1L << 30, &o->gather);
        break;
    case 'r':
        bad = bench_parse_long(arg, 1, 100000, &v);
        o->reps = (int)v;
        break;
    case 'i':
        bad = bench_parse_long(arg, 1, 1000000, &v);
        o->iters = (int)v;
        break;
    case 'c':
        bad = bench_parse_names(arg, mode_key, mode_name, NMODES, o->use);
        break;
    case 'o':
        o->reorder_only = 1;
        break;
    case 'C':
        o->csv = 1;
        break;
    default:
        bad = 1;
    }
    return bad;
}

/* 0: run; 1: stop with success (help); -1: stop with an error. */
static int parse_options(int argc, char **argv, options_t *o)
{
    static const struct option longopts[] = {{"csv", no_argument, NULL, 'C'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    *o = (options_t){.nrings = 8, .laps = 100, .reps = 10, .iters = 1, .token = 8, .gather = 65536,
                     .reorder_only = RING_REORDER_ONLY_DEFAULT, .use = {1, 1, 1, 0}};
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "R:t:l:a:r:i:c:oh", longopts, NULL)) != -1) {
        if (c == 'h') {
            if (world_rank == 0)
                usage(stdout);
            return 1;
        }
        if (parse_one(c, optarg, o)) {
            if (world_rank == 0) {
                fprintf(stderr, "ring: bad option -%c%s%s\n", c == '?' ? optopt : c, optarg ? " " : "",
                        optarg ? optarg : "");
                usage(stderr);
            }
            return -1;
        }
    }
    const char *why = optind < argc ? "unexpected argument" : check_options(o);
    if (why) {
        if (world_rank == 0)
            fprintf(stderr, "ring: %s\n", why);
        return -1;
    }
    return 0;
}

/* ---- the pattern --------------------------------------------------------- */

static int ring_size(const options_t *o)
{
    return world_size / o->nrings;
}

/* The edges of role r, with weights in the unit of `mode` (native: bytes). */
static int role_graph(const options_t *o, int r, int mode, role_graph_t *g)
{
    int s = ring_size(o), ring = r / s, pos = r % s, leader = pos == 0;
    int n = 1 + (leader ? o->nrings - 1 : 0);
    long wring = mode == MESSAGES ? o->laps : o->token * o->laps;
    long wlead = mode == MESSAGES ? 1 : o->gather;
    g->indeg = g->outdeg = n;
    g->src = malloc((size_t)n * sizeof *g->src);
    g->dst = malloc((size_t)n * sizeof *g->dst);
    g->srcw = malloc((size_t)n * sizeof *g->srcw);
    g->dstw = malloc((size_t)n * sizeof *g->dstw);
    if (!g->src || !g->dst || !g->srcw || !g->dstw)
        return -1;
    g->src[0] = ring * s + (pos + s - 1) % s;
    g->dst[0] = ring * s + (pos + 1) % s;
    g->srcw[0] = g->dstw[0] = (int)wring;
    for (int k = 0, i = 1; leader && k < o->nrings; k++) {
        if (k == ring)
            continue;
        g->src[i] = g->dst[i] = k * s;
        g->srcw[i] = g->dstw[i] = wlead > 2147483647L ? 2147483647 : (int)wlead;
        i++;
    }
    return 0;
}

static void role_graph_free(role_graph_t *g)
{
    free(g->src);
    free(g->dst);
    free(g->srcw);
    free(g->dstw);
    memset(g, 0, sizeof *g);
}

/* One timing: ITERS patterns; seconds per pattern on the slowest process. */
static double pattern(const ring_t *g, const options_t *o, char *tok, char *abuf, char *gbuf)
{
    int tsize = (int)o->token;
    MPI_Barrier(g->comm);
    double t0 = MPI_Wtime();
    for (int it = 0; it < o->iters; it++) {
        for (int lap = 0; lap < o->laps; lap++) {
            if (g->pos == 0) {
                MPI_Send(tok, tsize, MPI_BYTE, g->next, 0, g->comm);
                MPI_Recv(tok, tsize, MPI_BYTE, g->prev, 0, g->comm, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(tok, tsize, MPI_BYTE, g->prev, 0, g->comm, MPI_STATUS_IGNORE);
                MPI_Send(tok, tsize, MPI_BYTE, g->next, 0, g->comm);
            }
        }
        if (g->leaders != MPI_COMM_NULL)
            MPI_Allgather(abuf, (int)o->gather, MPI_BYTE, gbuf, (int)o->gather, MPI_BYTE, g->leaders);
    }
    double t = (MPI_Wtime() - t0) / o->iters, tmax;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, g->comm);
    return tmax;
}

/* ---- creation -------------------------------------------------------------- */

static int create_native(const role_graph_t *g, int reorder_only, MPI_Comm *comm)
{
    if (reorder_only)
        return MPI_Comm_dup(MPI_COMM_WORLD, comm);
    return MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, g->indeg, g->src, g->srcw, g->outdeg, g->dst,
                                          g->dstw, MPI_INFO_NULL, 1, comm);
}

static int create_mpitopo(const role_graph_t *g, int mode, int reorder_only, MPI_Comm *comm)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpitopo_weights", mode_key[mode]);
    int rc;
    if (reorder_only)
        rc = mpitopo_dist_graph_reorder(MPI_COMM_WORLD, g->indeg, g->src, g->srcw, g->outdeg, g->dst, g->dstw,
                                        info, 1, comm);
    else
        rc = mpitopo_dist_graph_create_adjacent(MPI_COMM_WORLD, g->indeg, g->src, g->srcw, g->outdeg, g->dst,
                                                g->dstw, info, 1, comm);
    if (rc != MPITOPO_SUCCESS)
        fprintf(stderr, "ring: %s (rank %d): %s\n", mode_name[mode], world_rank, mpitopo_last_error());
    MPI_Info_free(&info);
    return rc;
}

/* Translate n ranks of comm into ranks of MPI_COMM_WORLD (or back). */
static void translate(MPI_Comm from, MPI_Comm to, int n, const int *in, int *out)
{
    MPI_Group gf, gt;
    MPI_Comm_group(from, &gf);
    MPI_Comm_group(to, &gt);
    MPI_Group_translate_ranks(gf, n, in, gt, out);
    MPI_Group_free(&gf);
    MPI_Group_free(&gt);
}

static int same(int n, const int *a, const int *b)
{
    for (int i = 0; i < n; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

/*
 * Whether the neighbour lists of the dist-graph communicator g->comm are
 * those of the role of my new rank, in the given order (the library's
 * promise, and what neighbourhood collectives would use): 1 yes, 0 no,
 * -1 when the communicator has no dist-graph topology.
 */
static int lists_match_role(const ring_t *g, const options_t *o)
{
    int status = MPI_UNDEFINED, in = -1, out = -1, weighted, ok = 0;
    MPI_Topo_test(g->comm, &status);
    if (status != MPI_DIST_GRAPH)
        return -1;
    role_graph_t want = {0};
    MPI_Dist_graph_neighbors_count(g->comm, &in, &out, &weighted);
    if (role_graph(o, g->rank, g->mode, &want) != 0 || in != want.indeg || out != want.outdeg) {
        role_graph_free(&want);
        return 0;
    }
    int *got = malloc((size_t)(in + out) * sizeof *got);
    if (got && MPI_Dist_graph_neighbors(g->comm, in, got, MPI_UNWEIGHTED, out, got + in, MPI_UNWEIGHTED) ==
                   MPI_SUCCESS)
        ok = same(in, want.src, got) && same(out, want.dst, got + in);
    free(got);
    role_graph_free(&want);
    return ok;
}

/* My role on the new communicator, and the communicator of ring leaders. */
static int set_role(ring_t *g, const options_t *o)
{
    int s = ring_size(o);
    MPI_Comm_rank(g->comm, &g->rank);
    g->pos = g->rank % s;
    g->prev = g->rank - g->pos + (g->pos + s - 1) % s;
    g->next = g->rank - g->pos + (g->pos + 1) % s;
    return MPI_Comm_split(g->comm, g->pos == 0 ? 0 : MPI_UNDEFINED, g->rank, &g->leaders);
}

static int create(ring_t *g, const options_t *o)
{
    role_graph_t mine = {0};
    int rc = role_graph(o, world_rank, g->mode == NATIVE ? BYTES : g->mode, &mine) == 0 ? MPI_SUCCESS : 1;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (rc == MPI_SUCCESS)
        rc = g->mode == NATIVE ? create_native(&mine, o->reorder_only, &g->comm)
                               : create_mpitopo(&mine, g->mode, o->reorder_only, &g->comm);
    double t = MPI_Wtime() - t0;
    MPI_Allreduce(&t, &g->create_time, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rc == MPI_SUCCESS)
        rc = set_role(g, o);
    if (rc == MPI_SUCCESS) {
        /* MPI_Topo_test is missing in SMPI: reordering alone has no lists. */
        int ok = o->reorder_only ? -1 : lists_match_role(g, o), sums[2] = {ok < 0, ok > 0};
        MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        g->lists_ok = sums[0] ? -1 : sums[1];
    }
    role_graph_free(&mine);
    return rc;
}

/* ---- traffic ------------------------------------------------------------------ */

/* Off-node hops and bytes of one pattern on g->comm, with the nodes of
 * the processes that play each role. */
static void count_traffic(ring_t *g, const options_t *o, const int *node_of, int nnodes)
{
    int s = ring_size(o), n = o->nrings, *peer = malloc((size_t)(n + 1) * sizeof *peer);
    int *wpeer = malloc((size_t)(n + 1) * sizeof *wpeer);
    double mine[4] = {0, 0, 0, 0}; /* ring hops, leader pairs, messages, bytes */
    if (peer && wpeer) {
        peer[0] = g->next;
        for (int k = 0; k < n; k++)
            peer[k + 1] = k * s;
        translate(g->comm, MPI_COMM_WORLD, n + 1, peer, wpeer);
        int me = node_of[world_rank];
        if (node_of[wpeer[0]] != me) {
            mine[0] = 1;
            mine[2] += o->laps;
            mine[3] += (double)o->laps * (double)o->token;
        }
        for (int k = 0; g->pos == 0 && k < n; k++)
            if (peer[k + 1] != g->rank && node_of[wpeer[k + 1]] != me) {
                mine[1] += 1;
                mine[2] += 1;
                mine[3] += (double)o->gather;
            }
    }
    double *per_node = calloc((size_t)nnodes, sizeof *per_node), tot[4];
    MPI_Allreduce(mine, tot, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (per_node) {
        per_node[node_of[world_rank]] = mine[3];
        MPI_Allreduce(MPI_IN_PLACE, per_node, nnodes, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    g->traffic = (traffic_t){(int)tot[0], (int)tot[1], tot[2], tot[3], 0.0};
    for (int k = 0; per_node && k < nnodes; k++)
        if (per_node[k] > g->traffic.node_bytes_max)
            g->traffic.node_bytes_max = per_node[k];
    free(per_node);
    free(peer);
    free(wpeer);
}

/* ---- running and printing ------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void summarise(ring_t *g, int reps)
{
    qsort(g->times, (size_t)reps, sizeof *g->times, cmp_double);
    g->min = g->times[0];
    g->median = reps % 2 ? g->times[reps / 2] : 0.5 * (g->times[reps / 2 - 1] + g->times[reps / 2]);
}

static int run(const options_t *o, ring_t *gs)
{
    size_t gbytes = (size_t)o->gather * (size_t)o->nrings;
    char *tok = RING_MALLOC((size_t)o->token), *abuf = RING_MALLOC((size_t)o->gather);
    char *gbuf = RING_MALLOC(gbytes);
    int ok = tok && abuf && gbuf, all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (all_ok) {
        memset(tok, 1, (size_t)o->token);
        memset(abuf, 1, (size_t)o->gather);
        int modes[NMODES], nm = 0;
        for (int k = 0; k < NMODES; k++)
            if (o->use[k])
                modes[nm++] = k;
        /* Repetition 0 is the warm-up; the first communicator rotates so
         * that none always runs right after another. */
        for (int rep = 0; rep <= o->reps; rep++)
            for (int j = 0; j < nm; j++) {
                ring_t *g = &gs[modes[(j + rep) % nm]];
                double t = pattern(g, o, tok, abuf, gbuf);
                if (rep > 0)
                    g->times[rep - 1] = t;
            }
        for (int j = 0; j < nm; j++)
            summarise(&gs[modes[j]], o->reps);
    } else if (world_rank == 0) {
        fprintf(stderr, "ring: cannot allocate the message buffers (%zu bytes)\n", gbytes);
    }
    if (tok)
        RING_FREE(tok);
    if (abuf)
        RING_FREE(abuf);
    if (gbuf)
        RING_FREE(gbuf);
    return all_ok ? 0 : 1;
}

static void print_header(const options_t *o, const mpitopo_nodeinfo_t *ni)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0;
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, "\n,")] = '\0';
    const char *emu = getenv("MPITOPO_EMULATE"), *pl = getenv("MPITOPO_EMULATE_PLACEMENT");
    const char *how = o->reorder_only ? "MPI_COMM_WORLD dup / mpitopo_dist_graph_reorder"
                                      : "MPI_Dist_graph_create_adjacent / mpitopo_dist_graph_create_adjacent";
    printf("%sring (Mercier & Jeannot, EuroMPI'11): %d processes, %d rings of %d, token %ld B x %d laps, "
           "allgather %ld B per leader; %d pattern(s) per timing, median of %d repetitions (+1 warm-up), "
           "interleaved\n",
           o->csv ? "# " : "", world_size, o->nrings, ring_size(o), o->token, o->laps, o->gather, o->iters,
           o->reps);
    printf("%snodes: %d of %d..%d processes, ", o->csv ? "# " : "", ni->nnodes, ni->min_local_size,
           ni->max_local_size);
    if (ni->emulated)
        printf("emulated: MPITOPO_EMULATE=\"%s\" placement %s\n", emu, pl && *pl ? pl : "block");
    else
        printf("from MPI_COMM_TYPE_SHARED\n");
    printf("%scommunicators: %s\n%sMPI: %s\n", o->csv ? "# " : "", how, o->csv ? "# " : "", lib);
    if (o->csv)
        printf("record,mode,nprocs,nrings,token,laps,gather,ring_off,leader_off,off_msgs,off_bytes,"
               "node_off_bytes_max,lists_ok,create_s,median_us,min_us\n");
    else
        printf("\n");
}

static void print_lists(int v)
{
    if (v < 0)
        printf("  %5s", "-");
    else
        printf("  %5d", v);
}

static void print_results(const options_t *o, const ring_t *gs)
{
    int pairs = o->nrings * (o->nrings - 1);
    if (o->csv) {
        for (int k = 0; k < NMODES; k++) {
            const ring_t *g = &gs[k];
            const traffic_t *t = &g->traffic;
            if (o->use[k])
                printf("ring,%s,%d,%d,%ld,%d,%ld,%d,%d,%.0f,%.0f,%.0f,%d,%.6f,%.3f,%.3f\n", mode_name[k],
                       world_size, o->nrings, o->token, o->laps, o->gather, t->ring_off, t->leader_off, t->msgs,
                       t->bytes, t->node_bytes_max, g->lists_ok, g->create_time,
                       g->median * 1e6, g->min * 1e6);
        }
        return;
    }
    printf("off-node traffic per pattern: ring hops (of %d) and leader pairs (of %d) between nodes,\n"
           "messages and bytes leaving nodes (all nodes; node max: the busiest node's bytes);\n"
           "processes whose neighbour lists are their role's (of %d; -: no lists); creation\n"
           "time (slowest process); time per pattern (slowest process):\n",
           world_size, pairs, world_size);
    printf("  %-16s %5s %5s %9s %12s %12s  %5s  %9s  %11s %11s\n", "", "hops", "pairs", "msgs", "bytes",
           "node max B", "lists", "created s", "median us", "min us");
    for (int k = 0; k < NMODES; k++) {
        const ring_t *g = &gs[k];
        const traffic_t *t = &g->traffic;
        if (!o->use[k])
            continue;
        printf("  %-16s %5d %5d %9.0f %12.0f %12.0f", mode_name[k], t->ring_off, t->leader_off, t->msgs,
               t->bytes, t->node_bytes_max);
        print_lists(g->lists_ok);
        printf("  %9.4f  %11.1f %11.1f\n", g->create_time, g->median * 1e6, g->min * 1e6);
    }
    for (int k = BYTES; k < NMODES && o->use[NATIVE]; k++)
        if (o->use[k])
            printf("native/%s (medians): %.3f\n", mode_name[k], gs[NATIVE].median / gs[k].median);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    options_t o;
    int st = parse_options(argc, argv, &o), rc = 0;
    if (st != 0) {
        MPI_Finalize();
        return st < 0;
    }
    const mpitopo_nodeinfo_t *ni = NULL;
    int *node_of = NULL;
    if (bench_world_nodes("ring", &node_of, &ni) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);
    ring_t gs[NMODES];
    memset(gs, 0, sizeof gs);
    for (int k = 0; k < NMODES; k++) {
        gs[k] = (ring_t){.mode = k, .comm = MPI_COMM_NULL, .leaders = MPI_COMM_NULL};
        if (!o.use[k])
            continue;
        gs[k].times = calloc((size_t)o.reps, sizeof *gs[k].times);
        if (!gs[k].times || create(&gs[k], &o) != MPI_SUCCESS) {
            fprintf(stderr, "ring: creating the %s communicator failed on rank %d\n", mode_name[k], world_rank);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        count_traffic(&gs[k], &o, node_of, ni->nnodes);
    }
    if (world_rank == 0) {
        print_header(&o, ni);
        fflush(stdout);
    }
    rc = run(&o, gs);
    if (rc == 0 && world_rank == 0) {
        print_results(&o, gs);
        fflush(stdout);
    }
    for (int k = 0; k < NMODES; k++) {
        if (gs[k].leaders != MPI_COMM_NULL)
            MPI_Comm_free(&gs[k].leaders);
        if (gs[k].comm != MPI_COMM_NULL)
            MPI_Comm_free(&gs[k].comm);
        free(gs[k].times);
    }
    free(node_of);
    MPI_Finalize();
    return rc;
}
