/*
 * coll: latency of allgather, broadcast, gather and allreduce on reordered
 * communicators (issue 19, thesis chapter 4), in the style of the OSU
 * micro-benchmarks: the host MPI's own collective and mpitopo's algorithms
 * without reordering, with each heuristic and with Scotch fed the
 * algorithm's pattern, side by side in one run, for the four initial
 * layouts of the thesis.
 *
 * Layouts (-l): the order of a communicator's ranks over the machine.
 * block: node after node; cyclic: round robin over nodes; bunch: socket
 * after socket inside a node; scatter: round robin over the sockets of a
 * node. The benchmark finds every process's leaf (core) with
 * mpitopo_comm_machine (so MPITOPO_EMULATE describes the machine, e.g.
 * "node:4 socket:2 core:8" for 64 processes, or the real nodes and hwloc's
 * sockets) and builds each layout as a split of MPI_COMM_WORLD whose rank
 * r sits on the core that layout gives rank r. Every node must hold as
 * many processes, every socket too.
 *
 * Columns, for the operation of -o and each algorithm of -a:
 *   mpi          the host MPI's MPI_Allgather (MPI_Bcast, ...) on the layout;
 *   ALG          mpitopo's algorithm, original order (info mpitopo_coll =
 *                "OP=ALG:none");
 *   ALG+HEUR     the same algorithm on the copy reordered by HEUR (-H:
 *                rdmh, rmh, bbmh, bgmh, and auto = the library's choice,
 *                which keeps the original order unless the reordered one
 *                is cheaper under its distance model); RDMH is left out
 *                when the size is not a power of two;
 *   ALG+scotch   the algorithm, original order, on the layout renumbered by
 *                mpitopo_map("scotch") of the algorithm's pattern
 *                (coll:allgather-rd:P, ...; mapped once on rank 0 and
 *                broadcast): the thesis's comparator. Its results come in
 *                the order of the renumbered communicator (no initComm:
 *                a lower bound of that comparator's cost). Only when the
 *                library was built with Scotch, the machine has exactly
 *                as many leaves as processes, and the algorithm has a
 *                pattern (not hier, hierb).
 * Each mpitopo column runs on its own duplicate, so each pays its own
 * reordering on its first call (printed as setup).
 *
 * Sizes (-m, powers of two, bytes): allgather and gather, the block of one
 * process; bcast and allreduce (MPI_FLOAT, MPI_SUM), the whole buffer.
 *
 * Timing (OSU): for every size, -x warm-up then -i timed iterations; in
 * each iteration every column runs once after a barrier, the first column
 * rotating from one iteration to the next. A process's latency is its
 * average over the timed iterations; the table gives the average over the
 * processes, and with -f also the minimum and the maximum. Then the ratios:
 * ALG / ALG+HEUR (> 1: the reordering wins), and mpi / ALG and mpi /
 * ALG+auto (> 1: mpitopo wins).
 *
 * Correctness: before a size is timed every column's result is checked
 * against closed-form values on every process; a wrong one stops the run
 * (MPI_Abort) before any number of that size is printed. -N skips that
 * check (the calls still run): under SimGrid (MPITOPO_SMPI) the buffers are
 * then SMPI_SHARED_MALLOC, one physical copy for all simulated ranks, so
 * 1,024 ranks of 64 KiB blocks (64 MiB of receive buffer each) fit in
 * memory; the simulated times do not depend on the data.
 *
 * tuned (-T): info mpitopo_coll = "auto" with MPITOPO_TUNE on: the library
 * measures its candidates over the first blocking calls of each size
 * (src/coll/global/gcoll_tune.c). Before its check and timing, each size's
 * first 100 calls of tuned run alone, each after a barrier, and the table
 * of exploration gives their total (max over processes, per call) against
 * 100 calls of tuned's steady state, and the ratio tuned / the fastest
 * fixed column of the same run (mpi included). The exploration is the
 * excess as a share of the first 100 calls (as bench/neighbor's), against
 * the slowest process's steady state (the table's "max"; with -i 1 exactly
 * one call's maximum, like each of the first 100), not the average over
 * processes, which for gather and bcast is far below the slowest; the
 * ratio is given both ways (average, and slowest process: ratio-max).
 *
 *   mpirun -n 64 coll [-o allgather] [-a rd,ring] [-H rdmh,rmh,bbmh,bgmh,auto]
 *                     [-l block-bunch,block-scatter,cyclic-bunch,cyclic-scatter]
 *                     [-m 1:65536] [-i 100] [-x 10] [-f] [-h]
 */
#include <mpitopo.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

enum op { OP_ALLGATHER, OP_BCAST, OP_GATHER, OP_ALLREDUCE, NOPS };
static const char *const op_names[NOPS] = {"allgather", "bcast", "gather", "allreduce"};
static const char *const op_mpi[NOPS] = {"MPI_Allgather", "MPI_Bcast", "MPI_Gather",
                                         "MPI_Allreduce"};

#define NLAYOUTS 4
static const char *const layout_names[NLAYOUTS] = {"block-bunch", "block-scatter", "cyclic-bunch",
                                                   "cyclic-scatter"};
#define NHEURS 5
static const char *const heur_names[NHEURS] = {"rdmh", "rmh", "bbmh", "bgmh", "auto"};
#define MAX_ALGS 6
#define MAX_COLS 64

typedef struct options {
    enum op op;
    char algs[MAX_ALGS][16];
    int nalgs;
    int use_heur[NHEURS];
    int use_layout[NLAYOUTS];
    long min, max, step; /* sizes min, min*step, ... <= max */
    int iters, warmup, full, scotch, nocheck, tuned;
} options_t;

typedef struct column {
    char name[40];
    int host;          /* 1: the host MPI's call */
    MPI_Comm comm;
    int rank;          /* this process's rank in comm */
    double first_us;   /* first call (max over ranks): setup + one call */
    double *first100_us; /* tuned: its first 100 calls of each size (max over ranks each) */
    double *avg, *min, *max; /* per size */
} column_t;

static int rank, nprocs;

static void die(const char *msg)
{
    fprintf(stderr, "coll: rank %d: %s\n", rank, msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: coll [options]   (run under mpirun)\n"
            "  -o OP       allgather (default), bcast, gather, allreduce\n"
            "  -a LIST     mpitopo algorithms (default: allgather rd,ring; bcast, gather\n"
            "              binomial; allreduce rd); allgather also bruck, hier, hierb\n"
            "  -H LIST     heuristics among rdmh,rmh,bbmh,bgmh,auto (default all)\n"
            "  -l LIST     layouts among block-bunch,block-scatter,cyclic-bunch,\n"
            "              cyclic-scatter (default all)\n"
            "  -m MIN:MAX  sizes in bytes, powers of two (default 1:65536; -m MAX too)\n"
            "  -m MIN:MAX:STEP  sizes MIN, MIN*STEP, ... (STEP a power of two; default 2)\n"
            "  -i N        timed iterations per size (default 100)\n"
            "  -x N        warm-up iterations per size (default 10)\n"
            "  -f          full statistics: minimum and maximum over processes too\n"
            "  -S          no Scotch column\n"
            "  -N          no result check (SimGrid: shared buffers, for large sizes)\n"
            "  -T          a column tuned: auto by measurement (MPITOPO_TUNE, issue 31),\n"
            "              and its exploration cost (its first 100 calls of each size)\n"
            "  -h          this help\n");
}

static int is_pow2(long v) { return v > 0 && (v & (v - 1)) == 0; }

static int parse_args(int argc, char **argv, options_t *o)
{
    long v;
    int c;
    char algs[128] = "";
    memset(o, 0, sizeof *o);
    o->min = 1, o->max = 65536, o->iters = 100, o->warmup = 10, o->scotch = 1;
    for (int i = 0; i < NHEURS; i++)
        o->use_heur[i] = 1;
    for (int i = 0; i < NLAYOUTS; i++)
        o->use_layout[i] = 1;
    while ((c = getopt(argc, argv, "o:a:H:l:m:i:x:fSNTh")) != -1) {
        switch (c) {
        case 'o': {
            int k = 0;
            while (k < NOPS && strcmp(optarg, op_names[k]))
                k++;
            if (k == NOPS)
                return -1;
            o->op = (enum op)k;
            break;
        }
        case 'a':
            if (strlen(optarg) >= sizeof algs)
                return -1;
            strcpy(algs, optarg);
            break;
        case 'H':
            if (bench_parse_names(optarg, heur_names, NULL, NHEURS, o->use_heur))
                return -1;
            break;
        case 'l':
            if (bench_parse_names(optarg, layout_names, NULL, NLAYOUTS, o->use_layout))
                return -1;
            break;
        case 'm':
            if (bench_parse_sizes_step(optarg, &o->min, &o->max, &o->step))
                return -1;
            break;
        case 'i':
            if (bench_parse_long(optarg, 1, 1000000, &v))
                return -1;
            o->iters = (int)v;
            break;
        case 'x':
            if (bench_parse_long(optarg, 0, 1000000, &v))
                return -1;
            o->warmup = (int)v;
            break;
        case 'f':
            o->full = 1;
            break;
        case 'S':
            o->scotch = 0;
            break;
        case 'N':
            o->nocheck = 1;
            break;
        case 'T':
            o->tuned = 1;
            break;
        case 'h':
            return 1;
        default:
            return -1;
        }
    }
    if (!algs[0])
        strcpy(algs, o->op == OP_ALLGATHER ? "rd,ring" : o->op == OP_ALLREDUCE ? "rd" : "binomial");
    char *save = NULL;
    for (char *t = strtok_r(algs, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (o->nalgs == MAX_ALGS || strlen(t) >= sizeof o->algs[0])
            return -1;
        strcpy(o->algs[o->nalgs++], t);
    }
    return optind == argc && o->nalgs ? 0 : -1;
}

/*
 * Where every process sits: node index a (0..N-1, in node order), socket
 * index s inside its node (0..S-1) and core index c inside its socket
 * (0..K/S-1, in leaf order), from the machine's levels. Fails (a message
 * naming the reason) when the nodes or sockets do not hold as many
 * processes each.
 */
typedef struct place {
    int nnodes, nsockets, per_node; /* N, S, K */
    int a, s, c;                    /* this process */
    mpitopo_machine_t *machine;
    int *leaf_of_rank;              /* world */
    int nleaves;
} place_t;

static void find_place(place_t *pl)
{
    char msg[300];
    pl->leaf_of_rank = malloc(sizeof(int) * (size_t)nprocs);
    if (!pl->leaf_of_rank)
        die("out of memory");
    if (mpitopo_comm_machine(MPI_COMM_WORLD, &pl->machine, pl->leaf_of_rank) != MPITOPO_SUCCESS) {
        snprintf(msg, sizeof msg, "mpitopo_comm_machine: %s", mpitopo_last_error());
        die(msg);
    }
    int nl = -1, nlevels = 0, nunits = 0, sock_units = 0;
    mpitopo_machine_node_level(pl->machine, &nl);
    mpitopo_machine_nlevels(pl->machine, &nlevels);
    mpitopo_machine_nleaves(pl->machine, &pl->nleaves);
    if (nl < 0)
        die("the machine has no node level");
    mpitopo_machine_level(pl->machine, nl, NULL, NULL, &nunits, NULL, NULL);
    /* Sockets: the level below the node when there is one below it too. */
    int sl = nl + 2 < nlevels ? nl + 1 : -1;
    if (sl >= 0)
        mpitopo_machine_level(pl->machine, sl, NULL, NULL, &sock_units, NULL, NULL);
    int *node_of = malloc(sizeof(int) * (size_t)nprocs), *sock_of = malloc(sizeof(int) * (size_t)nprocs);
    int *node_used = calloc((size_t)nunits, sizeof(int));
    if (!node_of || !sock_of || !node_used)
        die("out of memory");
    for (int r = 0; r < nprocs; r++) {
        mpitopo_machine_unit_of(pl->machine, nl, pl->leaf_of_rank[r], &node_of[r]);
        sock_of[r] = 0;
        if (sl >= 0)
            mpitopo_machine_unit_of(pl->machine, sl, pl->leaf_of_rank[r], &sock_of[r]);
        node_used[node_of[r]]++;
    }
    pl->nnodes = 0;
    pl->per_node = -1;
    int me_node = node_of[rank];
    pl->a = 0;
    for (int u = 0; u < nunits; u++) {
        if (!node_used[u])
            continue;
        if (pl->per_node >= 0 && node_used[u] != pl->per_node) {
            snprintf(msg, sizeof msg, "node %d holds %d processes, another %d: layouts need "
                     "as many on every node", u, node_used[u], pl->per_node);
            die(msg);
        }
        pl->per_node = node_used[u];
        if (u < me_node)
            pl->a++;
        pl->nnodes++;
    }
    /* Sockets of my node in use, my socket's index, my core's index. */
    int first_sock = -1, nsock = 0, in_my_sock = 0, below_me = 0, my_sock = sock_of[rank];
    for (int r = 0; r < nprocs; r++) {
        if (node_of[r] != me_node)
            continue;
        if (first_sock < 0 || sock_of[r] < first_sock)
            first_sock = sock_of[r];
        if (sock_of[r] == my_sock) {
            in_my_sock++;
            below_me += pl->leaf_of_rank[r] < pl->leaf_of_rank[rank];
        }
    }
    int *seen = calloc((size_t)(sock_units > 0 ? sock_units : 1), sizeof(int));
    if (!seen)
        die("out of memory");
    for (int r = 0; r < nprocs; r++)
        if (node_of[r] == me_node && !seen[sock_of[r]]++)
            nsock++;
    pl->nsockets = nsock;
    pl->s = my_sock - first_sock;
    pl->c = below_me;
    if (in_my_sock * nsock != pl->per_node || pl->s >= nsock)
        die("the sockets of a node hold different numbers of processes (or are not contiguous): "
            "layouts need as many on every socket");
    int bad = 0;
    MPI_Allreduce(&pl->nsockets, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (bad != pl->nsockets)
        die("nodes with different numbers of sockets");
    free(seen);
    free(node_used);
    free(node_of);
    free(sock_of);
}

/* The rank this process takes in layout l. */
static int layout_rank(const place_t *pl, int l)
{
    int S = pl->nsockets, K = pl->per_node, N = pl->nnodes, per_sock = K / S;
    int bunch = pl->s * per_sock + pl->c, scatter = pl->c * S + pl->s;
    switch (l) {
    case 0:
        return pl->a * K + bunch;
    case 1:
        return pl->a * K + scatter;
    case 2:
        return bunch * N + pl->a;
    default:
        return scatter * N + pl->a;
    }
}

static unsigned char fill(int r, long k, long size)
{
    return (unsigned char)((r * 131u + (unsigned)k * 7u + (unsigned)size) & 0xffu);
}

static float ffill(int r, long k) { return (float)((r + k) % 7); }

typedef struct bufs {
    unsigned char *send, *recv;
} bufs_t;

static int run_call(const column_t *col, const options_t *o, bufs_t *b, long size)
{
    int n = (int)size, cnt = size >= 4 ? n / 4 : 1;
    MPI_Comm c = col->comm;
    switch (o->op) {
    case OP_ALLGATHER:
        return col->host ? MPI_Allgather(b->send, n, MPI_BYTE, b->recv, n, MPI_BYTE, c)
                         : mpitopo_allgather(b->send, n, MPI_BYTE, b->recv, n, MPI_BYTE, c);
    case OP_BCAST:
        return col->host ? MPI_Bcast(b->recv, n, MPI_BYTE, 0, c)
                         : mpitopo_bcast(b->recv, n, MPI_BYTE, 0, c);
    case OP_GATHER:
        return col->host ? MPI_Gather(b->send, n, MPI_BYTE, b->recv, n, MPI_BYTE, 0, c)
                         : mpitopo_gather(b->send, n, MPI_BYTE, b->recv, n, MPI_BYTE, 0, c);
    default:
        return col->host ? MPI_Allreduce(b->send, b->recv, cnt, MPI_FLOAT, MPI_SUM, c)
                         : mpitopo_allreduce(b->send, b->recv, cnt, MPI_FLOAT, MPI_SUM, c);
    }
}

static double timed_call(const column_t *col, const options_t *o, bufs_t *b, long size)
{
    double t0 = MPI_Wtime();
    int err = run_call(col, o, b, size);
    double t = MPI_Wtime() - t0;
    if (err != MPI_SUCCESS) {
        char msg[600];
        snprintf(msg, sizeof msg, "%s failed at %ld bytes: error %d (%s)", col->name, size, err,
                 col->host ? "the host MPI's" : mpitopo_last_error());
        die(msg);
    }
    return t;
}

/* Fill the send buffer (and bcast's root buffer) for col at size. */
static void prepare(const column_t *col, const options_t *o, bufs_t *b, long size)
{
    int cnt = size >= 4 ? (int)size / 4 : 1;
    if (o->op == OP_ALLREDUCE)
        for (int k = 0; k < cnt; k++)
            ((float *)b->send)[k] = ffill(col->rank, k);
    else if (o->op == OP_BCAST)
        for (long k = 0; k < size; k++)
            b->recv[k] = col->rank == 0 ? fill(0, k, size) : 0xEE;
    else
        for (long k = 0; k < size; k++)
            b->send[k] = fill(col->rank, k, size);
}

/* The check of col's result at size; a message in msg when wrong. */
static int wrong(const column_t *col, const options_t *o, const bufs_t *b, long size, int np,
                 char *msg, size_t len)
{
    int cnt = size >= 4 ? (int)size / 4 : 1;
    if (o->op == OP_ALLREDUCE) {
        for (int k = 0; k < cnt; k++) {
            float want = 0;
            for (int r = 0; r < np; r++)
                want += ffill(r, k);
            if (((float *)b->recv)[k] != want) {
                snprintf(msg, len, "%s: element %d is %g, expected %g", col->name, k,
                         (double)((float *)b->recv)[k], (double)want);
                return 1;
            }
        }
        return 0;
    }
    int blocks = o->op == OP_BCAST ? 1 : o->op == OP_GATHER && col->rank != 0 ? 0 : np;
    for (int r = 0; r < blocks; r++)
        for (long k = 0; k < size; k++)
            if (b->recv[(size_t)r * size + k] != fill(r, k, size)) {
                snprintf(msg, len, "%s: block %d, byte %ld is %d, expected %d", col->name, r, k,
                         b->recv[(size_t)r * size + k], fill(r, k, size));
                return 1;
            }
    return 0;
}

static void check_size(column_t *cols, int nc, const options_t *o, bufs_t *b, long size, int np,
                       int first)
{
    char msg[400] = "";
    int bad = 0;
    for (int v = 0; v < nc && !bad; v++) {
        prepare(&cols[v], o, b, size);
        if (o->op != OP_BCAST)
            memset(b->recv, 0xEE, (size_t)np * (size_t)size);
        MPI_Barrier(MPI_COMM_WORLD);
        double t = timed_call(&cols[v], o, b, size);
        if (first) {
            MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            cols[v].first_us = t * 1e6;
        }
        bad = !o->nocheck && wrong(&cols[v], o, b, size, np, msg, sizeof msg);
    }
    int anybad = bad;
    MPI_Allreduce(MPI_IN_PLACE, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (anybad) {
        if (bad)
            fprintf(stderr, "coll: WRONG RESULT (%s, %ld bytes) on rank %d: %s\n",
                    op_names[o->op], size, rank, msg);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            fprintf(stderr, "coll: stopped: wrong results are not timed\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
}

static void time_size(column_t *cols, int nc, const options_t *o, bufs_t *b, long size, int si)
{
    double *sum = calloc((size_t)nc, sizeof *sum);
    if (!sum)
        die("out of memory");
    for (int it = 0; it < o->warmup + o->iters; it++)
        for (int k = 0; k < nc; k++) {
            int v = (k + it) % nc;
            if (o->op == OP_BCAST)
                prepare(&cols[v], o, b, size);
            MPI_Barrier(MPI_COMM_WORLD);
            double dt = timed_call(&cols[v], o, b, size);
            if (it >= o->warmup)
                sum[v] += dt;
        }
    for (int v = 0; v < nc; v++) {
        double mine = sum[v] / o->iters * 1e6, mn, mx, tot;
        MPI_Reduce(&mine, &mn, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
        MPI_Reduce(&mine, &mx, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Reduce(&mine, &tot, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        cols[v].avg[si] = tot / nprocs, cols[v].min[si] = mn, cols[v].max[si] = mx;
    }
    free(sum);
}

/* The pattern generator's name of an algorithm, or NULL (none). */
static const char *pattern_of(enum op op, const char *alg)
{
    if (op == OP_BCAST)
        return "bcast-binomial";
    if (op == OP_GATHER)
        return "gather-binomial";
    if (op == OP_ALLREDUCE || !strcmp(alg, "rd"))
        return "allgather-rd";
    if (!strcmp(alg, "ring"))
        return "allgather-ring";
    if (!strcmp(alg, "bruck"))
        return "allgather-bruck";
    return NULL;
}

static double scotch_ms_of_layout; /* mapping time of the last Scotch column */

/* The layout renumbered by Scotch on alg's pattern (rank 0 maps, then
 * broadcasts); MPI_COMM_NULL (and a note) when it cannot be made. */
static MPI_Comm scotch_comm(const place_t *pl, MPI_Comm layout, const options_t *o,
                            const char *alg, long block)
{
    const char *pat = pattern_of(o->op, alg);
    int np;
    MPI_Comm_size(layout, &np);
    if (!o->scotch || !pat || pl->nleaves != np)
        return MPI_COMM_NULL;
    int *map = malloc(sizeof(int) * (size_t)np), *launch = malloc(sizeof(int) * (size_t)np);
    int *world_of = malloc(sizeof(int) * (size_t)np);
    if (!map || !launch || !world_of)
        die("out of memory");
    int lr, w = rank;
    MPI_Comm_rank(layout, &lr);
    MPI_Allgather(&w, 1, MPI_INT, world_of, 1, MPI_INT, layout);
    for (int r = 0; r < np; r++)
        launch[r] = pl->leaf_of_rank[world_of[r]];
    int rc = MPITOPO_SUCCESS;
    char msg[400] = "";
    double t = 0;
    if (lr == 0) {
        char desc[96];
        snprintf(desc, sizeof desc, "coll:%s:%d:%ld", pat, np, block);
        mpitopo_pattern_t *p = NULL;
        mpitopo_map_options_t mo = MPITOPO_MAP_OPTIONS_INIT;
        mo.launch = launch;
        double t0 = MPI_Wtime();
        rc = mpitopo_pattern_from_string(desc, &p);
        if (rc == MPITOPO_SUCCESS)
            rc = mpitopo_map("scotch", pl->machine, p, &mo, map, NULL);
        t = MPI_Wtime() - t0;
        if (rc != MPITOPO_SUCCESS)
            snprintf(msg, sizeof msg, "%s: %s", desc, mpitopo_last_error());
        mpitopo_pattern_destroy(&p);
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, layout);
    MPI_Bcast(&t, 1, MPI_DOUBLE, 0, layout);
    scotch_ms_of_layout = t * 1e3;
    MPI_Comm c = MPI_COMM_NULL;
    if (rc == MPITOPO_SUCCESS) {
        MPI_Bcast(map, np, MPI_INT, 0, layout);
        int key = -1;
        for (int q = 0; q < np; q++)
            if (map[q] == pl->leaf_of_rank[rank])
                key = q;
        if (key < 0)
            die("the Scotch mapping misses this process's core");
        MPI_Comm_split(layout, 0, key, &c);
    } else if (rank == 0) {
        printf("# no Scotch column for %s: %s\n", alg, msg);
    }
    free(map), free(launch), free(world_of);
    return c;
}

static void add_col(column_t *cols, int *nc, const char *name, int host, MPI_Comm base,
                    const char *info_value, int nsizes)
{
    if (*nc == MAX_COLS)
        die("too many columns");
    column_t *c = &cols[(*nc)++];
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", name);
    c->host = host;
    c->avg = calloc((size_t)nsizes, sizeof(double));
    c->min = calloc((size_t)nsizes, sizeof(double));
    c->max = calloc((size_t)nsizes, sizeof(double));
    if (!c->avg || !c->min || !c->max)
        die("out of memory");
    if (host) {
        c->comm = base;
    } else {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "mpitopo_coll", info_value);
        MPI_Comm_dup_with_info(base, info, &c->comm);
        /* MPICH drops keys it does not know: mpitopo keeps its own. */
        if (mpitopo_comm_set_info(c->comm, info) != MPITOPO_SUCCESS)
            die(mpitopo_last_error());
        MPI_Info_free(&info);
    }
    MPI_Comm_rank(c->comm, &c->rank);
}

/* The columns compared with the host MPI: each algorithm as it is and
 * with the library's own choice of reordering. */
static int vs_host_ratio(const char *name)
{
    return !strchr(name, '+') || strstr(name, "+auto");
}

static void print_table(const column_t *cols, int nc, const options_t *o, const char *layout,
                        int nsizes)
{
    printf("\n# %s, layout %s: latency (us), average over processes of each one's mean over "
           "%d iterations%s\n",
           op_names[o->op], layout, o->iters, o->full ? " (then min, max over processes)" : "");
    printf("%-10s", "# Size");
    for (int v = 0; v < nc; v++)
        printf(" %13s", cols[v].name);
    if (o->full)
        for (int v = 0; v < nc; v++)
            printf(" %9s-min %9s-max", cols[v].name, cols[v].name);
    printf("\n");
    long size = o->min;
    for (int si = 0; si < nsizes; si++, size *= o->step) {
        printf("%-10ld", size);
        for (int v = 0; v < nc; v++)
            printf(" %13.2f", cols[v].avg[si]);
        if (o->full)
            for (int v = 0; v < nc; v++)
                printf(" %13.2f %13.2f", cols[v].min[si], cols[v].max[si]);
        printf("\n");
    }
    /* Ratios: the algorithm without reordering over each of its variants,
     * and the host MPI over every mpitopo column. */
    printf("# ratios (> 1: the column on the right of '/' is faster)\n%-10s", "# Size");
    for (int v = 1; v < nc; v++) {
        char base[40];
        snprintf(base, sizeof base, "%s", cols[v].name);
        char *plus = strchr(base, '+');
        if (plus) {
            *plus = '\0';
            printf(" %18s/%s", base, plus + 1);
        }
    }
    for (int v = 1; v < nc; v++)
        if (vs_host_ratio(cols[v].name))
            printf(" %13s/%s", "mpi", cols[v].name);
    printf("\n");
    size = o->min;
    for (int si = 0; si < nsizes; si++, size *= o->step) {
        printf("%-10ld", size);
        for (int v = 1; v < nc; v++) {
            const char *plus = strchr(cols[v].name, '+');
            if (!plus)
                continue;
            int b = v;
            while (b > 0 && (strncmp(cols[b].name, cols[v].name, (size_t)(plus - cols[v].name)) ||
                             cols[b].name[plus - cols[v].name] != '\0'))
                b--;
            int w = (int)strlen(cols[v].name) - (int)(plus - cols[v].name) + 18;
            printf(" %*.3f", w, cols[b].avg[si] / cols[v].avg[si]);
        }
        for (int v = 1; v < nc; v++)
            if (vs_host_ratio(cols[v].name))
                printf(" %*.3f", 14 + (int)strlen(cols[v].name), cols[0].avg[si] / cols[v].avg[si]);
        printf("\n");
    }
    printf("# setup at %ld bytes (max over processes, us): first call - steady state "
           "(reordering, communicator copies)\n",
           o->min);
    for (int v = 1; v < nc; v++)
        printf("#   %-18s %12.1f\n", cols[v].name, cols[v].first_us - cols[v].avg[0]);
}

/* tuned: its first 100 calls of a size, each after a barrier, the max
 * over processes of each summed (rank 0's figure). */
static void first100(column_t *col, const options_t *o, bufs_t *b, long size, int si)
{
    double tot = 0;
    for (int it = 0; it < 100; it++) {
        if (o->op == OP_BCAST)
            prepare(col, o, b, size);
        MPI_Barrier(MPI_COMM_WORLD);
        double dt = timed_call(col, o, b, size), mx;
        MPI_Reduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        tot += mx;
    }
    col->first100_us[si] = tot * 1e6;
}

/* tuned against the fastest fixed column, and its exploration cost. */
static void print_tuned(const column_t *cols, int nc, const options_t *o, int nsizes)
{
    const column_t *t = &cols[nc - 1];
    /* The first 100 calls are summed maxima over processes (one call each,
     * after a barrier): the steady state they are set against is the
     * slowest process's (max), not the average over processes, which for
     * a rooted collective (gather, bcast) is far below the slowest. */
    printf("# tuned: steady state / fastest fixed column (average over processes, as the table; and "
           "slowest process); exploration = first 100 calls - 100 x tuned's steady state (slowest "
           "process), in %% of the first 100 calls\n");
    printf("%-10s %13s %13s %13s %13s %13s %13s %13s %13s\n", "# Size", "tuned", "fastest", "column",
           "ratio", "tuned-max", "fastest-max", "ratio-max", "explore%");
    long size = o->min;
    for (int si = 0; si < nsizes; si++, size *= o->step) {
        int best = 0, bestm = 0;
        for (int v = 1; v < nc - 1; v++) {
            if (cols[v].avg[si] < cols[best].avg[si])
                best = v;
            if (cols[v].max[si] < cols[bestm].max[si])
                bestm = v;
        }
        double fb = cols[best].avg[si], fm = cols[bestm].max[si], f = t->first100_us[si];
        printf("%-10ld %13.2f %13.2f %13s %13.3f %13.2f %13.2f %13.3f %13.1f\n", size, t->avg[si], fb,
               cols[best].name, t->avg[si] / fb, t->max[si], fm, t->max[si] / fm,
               f > 0 ? 100.0 * (f - 100 * t->max[si]) / f : 0);
    }
}

static void run_layout(const place_t *pl, int l, const options_t *o, bufs_t *b, int nsizes)
{
    MPI_Comm layout;
    MPI_Comm_split(MPI_COMM_WORLD, 0, layout_rank(pl, l), &layout);
    column_t cols[MAX_COLS];
    int nc = 0;
    char name[40], value[96];
    add_col(cols, &nc, "mpi", 1, layout, NULL, nsizes);
    double scotch_ms[MAX_ALGS] = {0};
    for (int a = 0; a < o->nalgs; a++) {
        const char *alg = o->algs[a], *opn = op_names[o->op];
        snprintf(value, sizeof value, "%s=%s:none", opn, alg);
        add_col(cols, &nc, alg, 0, layout, value, nsizes);
        for (int h = 0; h < NHEURS; h++) {
            if (!o->use_heur[h] || (!strcmp(heur_names[h], "rdmh") && !is_pow2(nprocs)))
                continue;
            snprintf(name, sizeof name, "%s+%s", alg, heur_names[h]);
            snprintf(value, sizeof value, "%s=%s:%s", opn, alg, heur_names[h]);
            add_col(cols, &nc, name, 0, layout, value, nsizes);
        }
        MPI_Comm sc = scotch_comm(pl, layout, o, alg, o->op == OP_ALLREDUCE ? 4 : o->min);
        if (sc != MPI_COMM_NULL) {
            snprintf(name, sizeof name, "%s+scotch", alg);
            snprintf(value, sizeof value, "%s=%s:none", opn, alg);
            add_col(cols, &nc, name, 0, sc, value, nsizes);
            MPI_Comm_free(&sc);
            scotch_ms[a] = scotch_ms_of_layout;
        }
    }
    if (o->tuned) {
        add_col(cols, &nc, "tuned", 0, layout, "auto", nsizes);
        if (!(cols[nc - 1].first100_us = calloc((size_t)nsizes, sizeof(double))))
            die("out of memory");
    }
    long size = o->min;
    int np;
    MPI_Comm_size(layout, &np);
    for (int si = 0; si < nsizes; si++, size *= o->step) {
        if (o->tuned)
            first100(&cols[nc - 1], o, b, size, si);
        check_size(cols, nc, o, b, size, np, si == 0);
        time_size(cols, nc, o, b, size, si);
    }
    if (rank == 0) {
        print_table(cols, nc, o, layout_names[l], nsizes);
        if (o->tuned)
            print_tuned(cols, nc, o, nsizes);
        for (int a = 0; a < o->nalgs; a++)
            if (scotch_ms[a] > 0)
                printf("#   Scotch mapping of %s's pattern on rank 0: %.1f ms\n", o->algs[a],
                       scotch_ms[a]);
        fflush(stdout);
    }
    for (int v = 0; v < nc; v++) {
        if (!cols[v].host)
            MPI_Comm_free(&cols[v].comm);
        free(cols[v].avg), free(cols[v].min), free(cols[v].max), free(cols[v].first100_us);
    }
    MPI_Comm_free(&layout);
}

int main(int argc, char **argv)
{
    options_t o;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int pa = parse_args(argc, argv, &o);
    if (pa) {
        if (rank == 0)
            usage(pa > 0 ? stdout : stderr);
        MPI_Finalize();
        return pa > 0 ? 0 : 1;
    }
    place_t pl;
    find_place(&pl);
    int nsizes = 0;
    for (long s = o.min; s <= o.max; s *= o.step)
        nsizes++;
    /* send: one block (allgather, gather) or the buffer (allreduce) */
    size_t cap = (size_t)nprocs * (size_t)o.max + 16, scap = (size_t)o.max + 16;
#ifdef MPITOPO_SMPI
    bufs_t b = o.nocheck ? (bufs_t){SMPI_SHARED_MALLOC(scap), SMPI_SHARED_MALLOC(cap)}
                         : (bufs_t){malloc(scap), malloc(cap)};
#else
    bufs_t b = {malloc(scap), malloc(cap)};
#endif
    if (!b.send || !b.recv)
        die("out of memory");
    if (rank == 0) {
        char ver[MPI_MAX_LIBRARY_VERSION_STRING], mdesc[128] = "";
        int len;
        MPI_Get_library_version(ver, &len);
        char *nl = strchr(ver, '\n');
        if (nl)
            *nl = '\0';
        mpitopo_machine_describe(pl.machine, mdesc, sizeof mdesc);
        printf("# mpitopo coll benchmark (OSU-style latency): %s (%s)\n", op_names[o.op],
               op_mpi[o.op]);
        printf("# MPI: %s\n", ver);
        printf("# %d processes on %d nodes x %d sockets x %d cores; machine %s\n", nprocs,
               pl.nnodes, pl.nsockets, pl.per_node / pl.nsockets, mdesc);
        printf("# iterations: %d timed, %d warm-up per size; sizes %ld..%ld bytes%s\n", o.iters,
               o.warmup, o.min, o.max,
               o.op == OP_ALLGATHER || o.op == OP_GATHER ? " per process" : "");
        if (o.nocheck)
            printf("# results NOT checked (-N)\n");
    }
    for (int l = 0; l < NLAYOUTS; l++)
        if (o.use_layout[l])
            run_layout(&pl, l, &o, &b, nsizes);
#ifdef MPITOPO_SMPI
    if (o.nocheck)
        SMPI_SHARED_FREE(b.send), SMPI_SHARED_FREE(b.recv);
    else
#endif
        free(b.send), free(b.recv);
    free(pl.leaf_of_rank);
    mpitopo_machine_destroy(&pl.machine);
    MPI_Finalize();
    return 0;
}
