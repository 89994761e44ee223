/*
 * neighbor: latency of neighbourhood collectives (allgather, alltoall), in
 * the style of the OSU micro-benchmarks, for the host MPI and for mpitopo's
 * schedules side by side, in the same run.
 *
 * Topologies (-N):
 *   cart:DIMS:R     periodic Moore neighbourhood of radius R on the grid DIMS
 *                   (8x8, 4x4x4): the (2R+1)^d - 1 offsets in lexicographic
 *                   order, as a dist-graph made by mpitopo_cart_stencil_create
 *                   from a periodic MPI_Cart_create (reorder = 0; MPI
 *                   Cartesian communicators only give star neighbourhoods),
 *                   which also carries the grid for the "cart" schedule.
 *                   Source i is the process at -offset i, destination i the
 *                   one at +offset i.
 *   star:DIMS       MPI_Cart_create, periodic, reorder = 0 (2d neighbours).
 *   graph:FILE      an mpitopo pattern file (mpitopo_pattern_read), each
 *                   rank's lists from mpitopo_pattern_adjacent.
 *   random:D:SEED   mpitopo_pattern_random(P, D, SEED), the same path.
 *
 * Variants (columns): the host MPI's MPI_Neighbor_* ("mpi") and
 * MPI_Ineighbor_* + MPI_Wait ("mpi-i"), MPI-4 MPI_Neighbor_*_init when the
 * MPI has it ("mpi-p"); for every mpitopo schedule selected by -s, blocking
 * (NAME), nonblocking + mpitopo_wait (NAME-i) and, when coll.h has the
 * persistent forms, _init + mpitopo_start + mpitopo_wait (NAME-p); -f keeps
 * some forms only (of the host MPI's columns too). Every
 * mpitopo variant runs on its own duplicate of the topology communicator
 * (MPI_Comm_dup_with_info, carrying the info key mpitopo_neighbor=NAME when
 * -s is given), so each pays its own one-time setup on its first call.
 *
 * Timing: for every size, -x warm-up then -i timed iterations; in each
 * iteration every variant runs once, after a barrier, the first variant
 * rotating from one iteration to the next. Latency = average over the timed
 * iterations of the slowest rank's time (max over ranks), in microseconds.
 *
 * Correctness: before timing a size, every variant's received data is
 * compared with the host MPI's (and, for allgather, with what each source
 * sent); a mismatch stops the benchmark (MPI_Abort) before any number of
 * that size is printed.
 *
 * Setup: the first call of each mpitopo variant (first size) is timed apart
 * (max over ranks); for persistent variants, the _init call. Printed with
 * the steady-state latency of the same size.
 *
 *   mpirun -n 64 neighbor [-N cart:8x8:1] [-c allgather,alltoall] [-m 1:65536]
 *                         [-i 100] [-x 10] [-f blocking,...] [-s linear] [-h]
 */
#include "bench_util.h"
#include <mpitopo.h>

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * SimGrid SMPI (bench/smpi/build.sh defines MPITOPO_SMPI) has no
 * dist-graph communicators and no neighbourhood collectives: the topology
 * comes from mpitopo_dist_graph_create_adjacent (a communicator carrying
 * mpitopo's own lists, see src/mpi/smpi_compat.h), the host MPI's columns
 * are left out, and the first mpitopo variant (blocking, first schedule of
 * -s) is the reference the others are checked against.
 */
#ifdef MPITOPO_SMPI
#define NB_HOST_MPI 0
#define NB_DIST_GRAPH_CREATE_ADJACENT mpitopo_dist_graph_create_adjacent
#else
#define NB_HOST_MPI 1
#define NB_DIST_GRAPH_CREATE_ADJACENT MPI_Dist_graph_create_adjacent
#endif

#if defined(MPI_VERSION) && MPI_VERSION >= 4
#define NB_HAVE_MPI_PERSISTENT 1
#else
#define NB_HAVE_MPI_PERSISTENT 0
#endif
/* BENCH_HAVE_PERSISTENT is defined by bench/CMakeLists.txt when
 * include/mpitopo/coll.h declares mpitopo_start (the persistent forms). */
#ifndef BENCH_HAVE_PERSISTENT
#define BENCH_HAVE_PERSISTENT 0
#endif

/*
 * The mpitopo schedules the benchmark knows: each selected one (-s) gives
 * its columns. The library picks them through the info key
 * mpitopo_neighbor, which every variant's communicator carries. Unknown
 * names in -s are reported and skipped.
 */
typedef struct schedule {
    const char *name;
    const char *what;
} schedule_t;
static const schedule_t schedules[] = {
    {"linear", "every message posted at once (the baseline)"},
    {"combine", "message combining over common neighbourhoods (thesis ch. 6)"},
    {"cart", "Cartesian dimension-wise forwarding (cart: topologies)"},
    {"node", "node-aware aggregation (one message per pair of nodes)"},
    {"auto", "the library's own choice"},
    {"tuned", "auto by measurement (MPITOPO_TUNE, issue 31); its exploration is timed apart "
              "(tuned-p: by the starts of each size's new request)"},
};
#define NSCHEDULES ((int)(sizeof schedules / sizeof schedules[0]))

/* Every schedule of the library (MPITOPO_NEIGHBOR_SCHEDULES) has its column
 * here, but "mpi", the host MPI's own call, which is a column of its own. */
static const char *missing_schedule(void)
{
    static const char *const library[] = MPITOPO_NEIGHBOR_SCHEDULES;
    for (size_t i = 0; i < sizeof library / sizeof *library; i++) {
        int found = !strcmp(library[i], "mpi");
        for (int k = 0; k < NSCHEDULES && !found; k++)
            found = !strcmp(schedules[k].name, library[i]);
        if (!found)
            return library[i];
    }
    return NULL;
}
#define MAX_VARIANTS 32

enum op { OP_ALLGATHER, OP_ALLTOALL };
enum form { FORM_BLOCKING, FORM_NONBLOCKING, FORM_PERSISTENT };

typedef struct variant {
    char name[64];
    int host;       /* 1: host MPI, 0: mpitopo */
    enum form form;
    MPI_Comm comm;  /* host: the topology communicator; mpitopo: its own dup */
    MPI_Info info;  /* MPI_INFO_NULL unless -s was given */
    MPI_Request mreq;       /* persistent host request */
#if BENCH_HAVE_PERSISTENT
    mpitopo_request_t preq; /* persistent mpitopo request */
#endif
    double first_us, init_us; /* setup: first call / _init (max over ranks) */
    double *lat_us;           /* per size */
    double *first100_us;      /* tuned, tuned-p: the first 100 calls (starts) of each size */
} variant_t;

typedef struct options {
    char topo[1024];
    int ops[2], nops;
    long min, max, step; /* sizes min, min*step, ... <= max */
    int iters, warmup;
    char sched[256];
    int sched_given;
    unsigned forms; /* bit f: form f is measured */
    char model[1024]; /* -W: write the cost model fitted to the host MPI here */
} options_t;

static int rank, nprocs;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: neighbor [options]   (run under mpirun)\n"
            "  -N TOPO     cart:DIMS:R (periodic Moore, radius R; DIMS like 8x8), star:DIMS,\n"
            "              graph:FILE (mpitopo pattern file), random:DENSITY:SEED\n"
            "              (default cart:PxP... from MPI_Dims_create in 2-D, radius 1)\n"
            "  -c LIST     operations among allgather,alltoall (default both)\n"
            "  -m MIN:MAX  message sizes in bytes, powers of two (default 1:65536; -m MAX too)\n"
            "  -m MIN:MAX:STEP  sizes MIN, MIN*STEP, ... (STEP a power of two; default 2)\n"
            "  -i N        timed iterations per size (default 100)\n"
            "  -x N        warm-up iterations per size (default 10)\n"
            "  -f LIST     forms among blocking,nonblocking,persistent (default all)\n"
            "  -W FILE     fit the cost model of auto (MPITOPO_NEIGHBOR_MODEL) to the host\n"
            "              MPI's blocking allgather on this topology and a ring, write FILE\n"
            "  -s LIST     mpitopo schedules (default linear; known:");
    for (int i = 0; i < NSCHEDULES; i++)
        fprintf(f, " %s", schedules[i].name);
    fprintf(f, ");\n"
               "              passed as info mpitopo_neighbor=NAME, unknown names skipped\n"
               "  -h          this help\n");
}

static int parse_ops(const char *s, options_t *o)
{
    char buf[64];
    if (strlen(s) >= sizeof buf)
        return -1;
    strcpy(buf, s);
    o->nops = 0;
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
        if (o->nops == 2)
            return -1;
        if (!strcmp(t, "allgather"))
            o->ops[o->nops++] = OP_ALLGATHER;
        else if (!strcmp(t, "alltoall"))
            o->ops[o->nops++] = OP_ALLTOALL;
        else
            return -1;
    }
    return o->nops ? 0 : -1;
}

/* "blocking,persistent" -> the bits of those forms. */
static int parse_forms(const char *s, unsigned *forms)
{
    static const char *const names[3] = {"blocking", "nonblocking", "persistent"};
    char buf[64];
    if (strlen(s) >= sizeof buf)
        return -1;
    strcpy(buf, s);
    *forms = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int f = 0;
        while (f < 3 && strcmp(t, names[f]))
            f++;
        if (f == 3)
            return -1;
        *forms |= 1u << f;
    }
    return *forms ? 0 : -1;
}

static int parse_args(int argc, char **argv, options_t *o)
{
    long v;
    int c;
    memset(o, 0, sizeof *o);
    o->ops[0] = OP_ALLGATHER, o->ops[1] = OP_ALLTOALL, o->nops = 2;
    o->min = 1, o->max = 65536, o->iters = 100, o->warmup = 10;
    strcpy(o->sched, "linear");
    o->forms = 7;
    while ((c = getopt(argc, argv, "N:c:m:i:x:f:s:W:h")) != -1) {
        switch (c) {
        case 'W':
            if (strlen(optarg) >= sizeof o->model)
                return -1;
            strcpy(o->model, optarg);
            break;
        case 'N':
            if (strlen(optarg) >= sizeof o->topo)
                return -1;
            strcpy(o->topo, optarg);
            break;
        case 'c':
            if (parse_ops(optarg, o))
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
            if (parse_forms(optarg, &o->forms))
                return -1;
            break;
        case 's':
            if (strlen(optarg) >= sizeof o->sched)
                return -1;
            strcpy(o->sched, optarg);
            o->sched_given = 1;
            break;
        case 'h':
            return 1;
        default:
            return -1;
        }
    }
    return optind == argc ? 0 : -1;
}

/* "8x8" -> ndims 2, dims {8, 8}; the product must be nprocs. */
static int parse_dims(const char *s, int *ndims, int *dims, const char **end)
{
    long prod = 1;
    *ndims = 0;
    for (;;) {
        char *e;
        long v = strtol(s, &e, 10);
        if (e == s || v < 1 || v > 1 << 20 || *ndims == MPITOPO_MAX_DIMS)
            return -1;
        dims[(*ndims)++] = (int)v;
        prod *= v;
        if (prod > nprocs)
            return -1;
        s = e;
        if (*s != 'x')
            break;
        s++;
    }
    *end = s;
    return prod == nprocs ? 0 : -1;
}

static void die(const char *msg)
{
    fprintf(stderr, "neighbor: rank %d: %s\n", rank, msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

/* Periodic Moore neighbourhood of radius r: a periodic Cartesian
 * communicator (reorder = 0) turned into a stencil communicator, which is a
 * dist-graph that also carries the grid (what the "cart" schedule needs). */
static MPI_Comm make_moore(int ndims, const int *dims, int r)
{
    int periods[MPITOPO_MAX_DIMS];
    char st[32], msg[600];
    MPI_Comm cart, c;
    for (int d = 0; d < ndims; d++)
        periods[d] = 1;
    MPI_Cart_create(MPI_COMM_WORLD, ndims, (int *)dims, periods, 0, &cart);
    snprintf(st, sizeof st, "moore=%d", r);
    if (mpitopo_cart_stencil_create(cart, st, MPI_INFO_NULL, &c) != MPITOPO_SUCCESS) {
        snprintf(msg, sizeof msg, "mpitopo_cart_stencil_create: %s", mpitopo_last_error());
        die(msg);
    }
    MPI_Comm_free(&cart);
    return c;
}

static MPI_Comm make_pattern(const char *what, const char *arg)
{
    mpitopo_pattern_t *p = NULL;
    int err, np = 0;
    char msg[1200];
    if (!strcmp(what, "graph")) {
        err = mpitopo_pattern_read(arg, &p);
    } else {
        char buf[256], *colon, *e;
        if (strlen(arg) >= sizeof buf)
            die("random:DENSITY:SEED too long");
        strcpy(buf, arg);
        colon = strchr(buf, ':');
        if (!colon)
            die("expected random:DENSITY:SEED");
        *colon = '\0';
        double dens = strtod(buf, &e);
        if (e == buf || *e || dens < 0 || dens > 1)
            die("random: DENSITY must be a number in [0, 1]");
        unsigned long long seed = strtoull(colon + 1, &e, 10);
        if (e == colon + 1 || *e)
            die("random: SEED must be a decimal integer");
        err = mpitopo_pattern_random(nprocs, dens, (uint64_t)seed, &p);
    }
    if (err) {
        snprintf(msg, sizeof msg, "%s:%s: %s", what, arg, mpitopo_last_error());
        die(msg);
    }
    mpitopo_pattern_nprocs(p, &np);
    if (np != nprocs) {
        snprintf(msg, sizeof msg, "%s:%s has %d processes, the run has %d", what, arg, np,
                 nprocs);
        die(msg);
    }
    int indeg, outdeg, *src, *dst, *sw, *dw;
    if (mpitopo_pattern_adjacent(p, rank, MPITOPO_WEIGHT_UNIT, &indeg, &src, &sw, &outdeg, &dst,
                                 &dw))
        die(mpitopo_last_error());
    MPI_Comm c;
    NB_DIST_GRAPH_CREATE_ADJACENT(MPI_COMM_WORLD, indeg, src, MPI_UNWEIGHTED, outdeg, dst,
                                   MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c);
    mpitopo_free(src), mpitopo_free(sw), mpitopo_free(dst), mpitopo_free(dw);
    mpitopo_pattern_destroy(&p);
    return c;
}

static MPI_Comm make_topology(const char *topo)
{
    int ndims, dims[MPITOPO_MAX_DIMS], periods[MPITOPO_MAX_DIMS];
    const char *end;
    char msg[1200];
    MPI_Comm c;
    if (!strncmp(topo, "cart:", 5)) {
        long r;
        if (parse_dims(topo + 5, &ndims, dims, &end) || *end != ':' ||
            bench_parse_long(end + 1, 1, 64, &r)) {
            snprintf(msg, sizeof msg,
                     "-N %s: expected cart:DIMS:R, DIMS multiplying to %d processes", topo,
                     nprocs);
            die(msg);
        }
        return make_moore(ndims, dims, (int)r);
    }
    if (!strncmp(topo, "star:", 5)) {
        if (parse_dims(topo + 5, &ndims, dims, &end) || *end) {
            snprintf(msg, sizeof msg, "-N %s: expected star:DIMS multiplying to %d processes",
                     topo, nprocs);
            die(msg);
        }
        for (int d = 0; d < ndims; d++)
            periods[d] = 1;
        MPI_Cart_create(MPI_COMM_WORLD, ndims, dims, periods, 0, &c);
        return c;
    }
    if (!strncmp(topo, "graph:", 6))
        return make_pattern("graph", topo + 6);
    if (!strncmp(topo, "random:", 7))
        return make_pattern("random", topo + 7);
    snprintf(msg, sizeof msg, "-N %s: unknown topology (cart:, star:, graph:, random:)", topo);
    die(msg);
    return MPI_COMM_NULL;
}

/* The content of block `blk` of rank `r` at message size `size`. */
static unsigned char fill(int r, int blk, long byte, long size)
{
    return (unsigned char)((r * 131u + (unsigned)blk * 31u + (unsigned)byte * 7u +
                            (unsigned)size) & 0xffu);
}

typedef struct bufs {
    unsigned char *send, *recv, *ref;
    int indeg, outdeg, *sources;
} bufs_t;

/* Start (or run, for blocking) one operation of variant v. */
static int op_start(variant_t *v, enum op op, bufs_t *b, long size, void *req)
{
    int n = (int)size;
    if (v->host) {
        MPI_Request *r = req;
        if (v->form == FORM_BLOCKING)
            return op == OP_ALLGATHER
                       ? MPI_Neighbor_allgather(b->send, n, MPI_BYTE, b->recv, n, MPI_BYTE, v->comm)
                       : MPI_Neighbor_alltoall(b->send, n, MPI_BYTE, b->recv, n, MPI_BYTE, v->comm);
        if (v->form == FORM_NONBLOCKING)
            return op == OP_ALLGATHER ? MPI_Ineighbor_allgather(b->send, n, MPI_BYTE, b->recv, n,
                                                                MPI_BYTE, v->comm, r)
                                      : MPI_Ineighbor_alltoall(b->send, n, MPI_BYTE, b->recv, n,
                                                               MPI_BYTE, v->comm, r);
        *r = v->mreq;
        return MPI_Start(r);
    }
    mpitopo_request_t *r = req;
    if (v->form == FORM_BLOCKING)
        return op == OP_ALLGATHER
                   ? mpitopo_neighbor_allgather(b->send, n, MPI_BYTE, b->recv, n, MPI_BYTE, v->comm)
                   : mpitopo_neighbor_alltoall(b->send, n, MPI_BYTE, b->recv, n, MPI_BYTE, v->comm);
    if (v->form == FORM_NONBLOCKING)
        return op == OP_ALLGATHER ? mpitopo_ineighbor_allgather(b->send, n, MPI_BYTE, b->recv, n,
                                                                MPI_BYTE, v->comm, r)
                                  : mpitopo_ineighbor_alltoall(b->send, n, MPI_BYTE, b->recv, n,
                                                               MPI_BYTE, v->comm, r);
#if BENCH_HAVE_PERSISTENT
    *r = v->preq;
    return mpitopo_start(r);
#else
    return MPI_ERR_OTHER;
#endif
}

static int op_complete(variant_t *v, void *req)
{
    if (v->form == FORM_BLOCKING)
        return MPI_SUCCESS;
    if (v->host)
        return MPI_Wait(req, MPI_STATUS_IGNORE);
    return mpitopo_wait(req);
}

/* One call, its local time in seconds; dies on an error code. */
static double run_once(variant_t *v, enum op op, bufs_t *b, long size)
{
    MPI_Request mr = MPI_REQUEST_NULL;
    mpitopo_request_t tr = MPITOPO_REQUEST_NULL;
    void *req = v->host ? (void *)&mr : (void *)&tr;
    double t0 = MPI_Wtime();
    int err = op_start(v, op, b, size, req);
    if (err == MPI_SUCCESS)
        err = op_complete(v, req);
    double t = MPI_Wtime() - t0;
    if (err != MPI_SUCCESS) {
        char msg[512];
        snprintf(msg, sizeof msg, "%.64s failed at size %ld: error %d (%.400s)", v->name, size, err,
                 v->host ? "MPI" : mpitopo_last_error());
        die(msg);
    }
    return t;
}

/* Create the persistent requests of a size (timed: the setup of the form). */
static void persistent_init(variant_t *v, enum op op, bufs_t *b, long size, int first)
{
    int n = (int)size, err = MPI_SUCCESS;
    double t0 = MPI_Wtime();
    if (v->host) {
#if NB_HAVE_MPI_PERSISTENT
        err = op == OP_ALLGATHER ? MPI_Neighbor_allgather_init(b->send, n, MPI_BYTE, b->recv, n,
                                                               MPI_BYTE, v->comm, MPI_INFO_NULL,
                                                               &v->mreq)
                                 : MPI_Neighbor_alltoall_init(b->send, n, MPI_BYTE, b->recv, n,
                                                              MPI_BYTE, v->comm, MPI_INFO_NULL,
                                                              &v->mreq);
#endif
    } else {
#if BENCH_HAVE_PERSISTENT
        err = op == OP_ALLGATHER
                  ? mpitopo_neighbor_allgather_init(b->send, n, MPI_BYTE, b->recv, n, MPI_BYTE,
                                                    v->comm, v->info, &v->preq)
                  : mpitopo_neighbor_alltoall_init(b->send, n, MPI_BYTE, b->recv, n, MPI_BYTE,
                                                   v->comm, v->info, &v->preq);
#endif
    }
    double t = MPI_Wtime() - t0;
    if (err != MPI_SUCCESS) {
        char msg[600];
        snprintf(msg, sizeof msg, "persistent init failed (%d): %s", err,
                 v->host ? "the host MPI's" : mpitopo_last_error());
        die(msg);
    }
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (first)
        v->init_us = t * 1e6;
    (void)op, (void)b, (void)n;
}

static void persistent_free(variant_t *v)
{
    if (v->host) {
        if (v->mreq != MPI_REQUEST_NULL)
            MPI_Request_free(&v->mreq);
        return;
    }
#if BENCH_HAVE_PERSISTENT
    mpitopo_request_free(&v->preq);
#endif
}

/*
 * The check of one size: the host MPI's blocking result is the reference
 * (for allgather, itself checked against what each source sent); every
 * variant must receive the same bytes. The first call of each mpitopo
 * variant at the first size is timed: its setup. Returns only when all
 * ranks agree the data are right.
 */
static void check_size(variant_t *vs, int nv, enum op op, bufs_t *b, long size, int first)
{
    size_t rbytes = (size_t)b->indeg * (size_t)size;
    char msg[512] = "";
    int bad = 0;
    for (int j = 0; j < (op == OP_ALLGATHER ? 1 : b->outdeg); j++)
        for (long k = 0; k < size; k++)
            b->send[(size_t)j * size + k] = fill(rank, j, k, size);
    memset(b->recv, 0xEE, rbytes);
    double t0 = run_once(&vs[0], op, b, size); /* vs[0]: the host's first form */
    if (first && !vs[0].host && !vs[0].first_us) { /* (under SMPI, an mpitopo variant: time its setup) */
        MPI_Allreduce(MPI_IN_PLACE, &t0, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        vs[0].first_us = t0 * 1e6;
    }
    memcpy(b->ref, b->recv, rbytes);
    if (op == OP_ALLGATHER)
        for (int i = 0; i < b->indeg && !bad; i++)
            for (long k = 0; k < size && !bad; k++)
                if (b->ref[(size_t)i * size + k] != fill(b->sources[i], 0, k, size)) {
                    bad = 1;
                    snprintf(msg, sizeof msg,
                             "host MPI: block %d (from rank %d), byte %ld is %d, expected %d", i,
                             b->sources[i], k, b->ref[(size_t)i * size + k],
                             fill(b->sources[i], 0, k, size));
                }
    for (int v = 1; v < nv && !bad; v++) {
        memset(b->recv, 0xEE, rbytes);
        MPI_Barrier(MPI_COMM_WORLD);
        double t = run_once(&vs[v], op, b, size);
        if (first && !vs[v].first_us) {
            MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            vs[v].first_us = t * 1e6;
        }
        if (rbytes && memcmp(b->recv, b->ref, rbytes)) {
            size_t k = 0;
            while (b->recv[k] == b->ref[k])
                k++;
            bad = 1;
            snprintf(msg, sizeof msg,
                     "%s: block %zu (from rank %d), byte %zu is %d, the host MPI has %d%s",
                     vs[v].name, k / (size_t)size, b->sources[k / (size_t)size],
                     k % (size_t)size, b->recv[k], b->ref[k],
                     vs[v].host ? " (the host MPI's own forms disagree: MPI libraries deliver "
                                  "the blocks of periodic dimensions of size 1 or 2 "
                                  "inconsistently, see the MPI-4.0 erratum in coll.h; use "
                                  "sizes >= 3)"
                                : "");
        }
    }
    int anybad = bad;
    MPI_Allreduce(MPI_IN_PLACE, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (anybad) {
        if (bad)
            fprintf(stderr, "neighbor: WRONG RESULT (%s, %ld bytes) on rank %d: %s\n",
                    op == OP_ALLGATHER ? "allgather" : "alltoall", size, rank, msg);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            fprintf(stderr, "neighbor: stopped: wrong results are not timed\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
}

/* Time one size: -x + -i rounds, every variant once per round, rotating. */
static void time_size(variant_t *vs, int nv, enum op op, bufs_t *b, long size, int si,
                      const options_t *o)
{
    double *t = calloc((size_t)nv * (size_t)o->iters, sizeof *t);
    if (!t)
        die("out of memory");
    for (int it = 0; it < o->warmup + o->iters; it++)
        for (int k = 0; k < nv; k++) {
            int v = (k + it) % nv;
            MPI_Barrier(MPI_COMM_WORLD);
            double dt = run_once(&vs[v], op, b, size);
            if (it >= o->warmup)
                t[(size_t)v * o->iters + (it - o->warmup)] = dt;
        }
    MPI_Reduce(rank ? t : MPI_IN_PLACE, t, nv * o->iters, MPI_DOUBLE, MPI_MAX, 0,
               MPI_COMM_WORLD);
    for (int v = 0; v < nv; v++) {
        double s = 0;
        for (int it = 0; it < o->iters; it++)
            s += t[(size_t)v * o->iters + it];
        vs[v].lat_us[si] = s / o->iters * 1e6;
    }
    free(t);
}

static void add_variant(variant_t *vs, int *nv, const char *name, int host, enum form f,
                        MPI_Comm topo, const char *sched, int nsizes)
{
    variant_t *v = &vs[(*nv)++];
    memset(v, 0, sizeof *v);
    snprintf(v->name, sizeof v->name, "%s", name);
    v->host = host, v->form = f, v->mreq = MPI_REQUEST_NULL, v->info = MPI_INFO_NULL;
    v->lat_us = calloc((size_t)nsizes, sizeof(double));
    if (!v->lat_us)
        die("out of memory");
    if (host) {
        v->comm = topo;
        return;
    }
    if (sched) {
        MPI_Info_create(&v->info);
        /* tuned is auto; its column says that MPITOPO_TUNE measures. */
        MPI_Info_set(v->info, "mpitopo_neighbor", strcmp(sched, "tuned") ? sched : "auto");
    }
    /* tuned-p: a new request per size, which explores by its starts. */
    if ((!strcmp(name, "tuned") || !strcmp(name, "tuned-p")) &&
        !(v->first100_us = calloc((size_t)nsizes, sizeof(double))))
        die("out of memory");
    MPI_Comm_dup_with_info(topo, v->info, &v->comm);
}

/* The columns: host forms, then each known schedule of -s in its forms. */
static int make_variants(variant_t *vs, MPI_Comm topo, const options_t *o, int nsizes)
{
    static const char *const suffix[3] = {"", "-i", "-p"};
    char buf[256], name[64];
    int nv = 0;
    if (NB_HOST_MPI && (o->forms & 1u << FORM_BLOCKING))
        add_variant(vs, &nv, "mpi", 1, FORM_BLOCKING, topo, NULL, nsizes);
    if (NB_HOST_MPI && (o->forms & 1u << FORM_NONBLOCKING))
        add_variant(vs, &nv, "mpi-i", 1, FORM_NONBLOCKING, topo, NULL, nsizes);
    if (NB_HOST_MPI && NB_HAVE_MPI_PERSISTENT && (o->forms & 1u << FORM_PERSISTENT))
        add_variant(vs, &nv, "mpi-p", 1, FORM_PERSISTENT, topo, NULL, nsizes);
    strcpy(buf, o->sched);
    /* strtok_r: under SimGrid SMPI every rank is a thread of one process and
     * add_variant's MPI call switches ranks, so strtok's hidden state would
     * be shared between them. */
    for (char *save = NULL, *s = strtok_r(buf, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
        int known = 0;
        for (int i = 0; i < NSCHEDULES; i++)
            known |= !strcmp(s, schedules[i].name);
        if (!known) {
            if (rank == 0)
                printf("# -s %s: not a schedule of this build, skipped\n", s);
            continue;
        }
        for (int f = 0; f < 2 + BENCH_HAVE_PERSISTENT; f++) {
            if (!(o->forms & 1u << f))
                continue;
            if (nv == MAX_VARIANTS)
                die("too many variants");
            snprintf(name, sizeof name, "%s%s", s, suffix[f]);
            add_variant(vs, &nv, name, 0, (enum form)f, topo, o->sched_given ? s : NULL, nsizes);
        }
    }
    if (nv == 0)
        die("no variant to run (-s names no schedule of this build)");
    return nv;
}

/* The host variant of the same form as vs[v] (persistent falls back to
 * nonblocking when the MPI has no MPI-4 _init forms), or -1. */
static int host_of(const variant_t *vs, int nv, int v)
{
    for (int pass = 0; pass < 2; pass++)
        for (int h = 0; h < nv; h++) {
            enum form f = pass && vs[v].form == FORM_PERSISTENT ? FORM_NONBLOCKING : vs[v].form;
            if (vs[h].host && vs[h].form == f)
                return h;
        }
    return -1;
}

/* The host MPI's blocking allgather latency at every size (for -W). */
static double *host_allgather_us;

static void print_table(variant_t *vs, int nv, enum op op, const options_t *o, int nsizes)
{
    printf("\n# %s: latency (us), average over %d iterations of the max over ranks\n",
           op == OP_ALLGATHER ? "neighbor_allgather" : "neighbor_alltoall", o->iters);
    printf("%-10s", "# Size");
    for (int v = 0; v < nv; v++)
        printf(" %12s", vs[v].name);
    /* Ratios host/mpitopo: each mpitopo variant against the host's same form. */
    for (int v = 0; v < nv; v++)
        if (!vs[v].host && host_of(vs, nv, v) >= 0) {
            const char *a = vs[host_of(vs, nv, v)].name, *c = vs[v].name;
            int pad = 14 - (int)(strlen(a) + 1 + strlen(c));
            printf(" %*s%s/%s", pad > 0 ? pad : 0, "", a, c);
        }
    printf("\n");
    long size = o->min;
    for (int si = 0; si < nsizes; si++, size *= o->step) {
        printf("%-10ld", size);
        for (int v = 0; v < nv; v++)
            printf(" %12.2f", vs[v].lat_us[si]);
        for (int v = 0; v < nv; v++)
            if (!vs[v].host && host_of(vs, nv, v) >= 0)
                printf(" %14.2f", vs[host_of(vs, nv, v)].lat_us[si] / vs[v].lat_us[si]);
        printf("\n");
    }
    printf("# setup at %ld bytes (max over ranks, us): first call (or _init + first start) vs "
           "steady state\n",
           o->min);
    printf("%-14s %14s %12s %12s %14s\n", "# variant", "first/init", "steady", "setup",
           "setup/steady");
    for (int v = 0; v < nv; v++) {
        if (vs[v].host)
            continue;
        double first = vs[v].first_us + (vs[v].form == FORM_PERSISTENT ? vs[v].init_us : 0);
        double setup = first - vs[v].lat_us[0];
        printf("%-14s %14.2f %12.2f %12.2f %14.2f\n", vs[v].name, first, vs[v].lat_us[0], setup,
               setup / vs[v].lat_us[0]);
    }
}

/* tuned (tuned-p: the first 100 starts of its request): the first 100
 * calls of a size, each after a barrier, summed over the calls of the
 * slowest rank's time (us): exploration included. */
#define FIRST_CALLS 100
static void time_first100(variant_t *v, enum op op, bufs_t *b, long size, int si)
{
    double t[FIRST_CALLS], s = 0;
    for (int i = 0; i < FIRST_CALLS; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        t[i] = run_once(v, op, b, size);
    }
    MPI_Reduce(rank ? t : MPI_IN_PLACE, t, FIRST_CALLS, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    for (int i = 0; i < FIRST_CALLS; i++)
        s += t[i];
    v->first100_us[si] = s * 1e6;
}

/* tuned's exploration cost per size: the first 100 calls against 100
 * steady-state calls, and the excess as a share of the first 100. */
static void print_exploration(const variant_t *vs, int nv, const options_t *o, int nsizes)
{
    for (int v = 0; v < nv; v++) {
        if (!vs[v].first100_us)
            continue;
        printf("# %s exploration: first %d calls (sum of max over ranks, us) vs %d x steady\n",
               vs[v].name, FIRST_CALLS, FIRST_CALLS);
        printf("%-10s %14s %14s %10s\n", "# Size", "first100", "100xsteady", "excess");
        long size = o->min;
        for (int si = 0; si < nsizes; si++, size *= o->step) {
            double f = vs[v].first100_us[si], st = FIRST_CALLS * vs[v].lat_us[si];
            printf("%-10ld %14.1f %14.1f %9.1f%%\n", size, f, st, f > 0 ? 100 * (f - st) / f : 0);
        }
    }
}

/* Before tuned's first 100 calls: the first call of every blocking
 * variant that is not tuned, timed (its setup), so that the connections
 * between processes (Open MPI connects a pair on its first message, on
 * any communicator) are not charged to tuned's exploration; tuned's first
 * calls still build each candidate's schedule on its own communicator. */
static void connect_first(variant_t *vs, int nv, enum op op, bufs_t *b, long size)
{
    for (int v = 0; v < nv; v++) {
        if (vs[v].first100_us || vs[v].form != FORM_BLOCKING)
            continue;
        MPI_Barrier(MPI_COMM_WORLD);
        double t = run_once(&vs[v], op, b, size);
        MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        vs[v].first_us = t * 1e6;
    }
}

static void run_op(MPI_Comm topo, enum op op, const options_t *o, bufs_t *b)
{
    int nsizes = 0;
    for (long s = o->min; s <= o->max; s *= o->step)
        nsizes++;
    variant_t vs[MAX_VARIANTS];
    int nv = make_variants(vs, topo, o, nsizes);
    long size = o->min;
    connect_first(vs, nv, op, b, size);
    for (int si = 0; si < nsizes; si++, size *= o->step) {
        for (int v = 0; v < nv; v++)
            if (vs[v].form == FORM_PERSISTENT)
                persistent_init(&vs[v], op, b, size, si == 0);
        for (int v = 0; v < nv; v++)
            if (vs[v].first100_us)
                time_first100(&vs[v], op, b, size, si);
        check_size(vs, nv, op, b, size, si == 0);
        time_size(vs, nv, op, b, size, si, o);
        for (int v = 0; v < nv; v++)
            if (vs[v].form == FORM_PERSISTENT)
                persistent_free(&vs[v]);
    }
    if (rank == 0) {
        print_table(vs, nv, op, o, nsizes);
        print_exploration(vs, nv, o, nsizes);
    }
    for (int v = 0; v < nv && op == OP_ALLGATHER; v++)
        if (vs[v].host && vs[v].form == FORM_BLOCKING && !host_allgather_us) {
            host_allgather_us = vs[v].lat_us;
            vs[v].lat_us = NULL;
        }
    for (int v = 0; v < nv; v++) {
        if (!vs[v].host)
            MPI_Comm_free(&vs[v].comm);
        if (vs[v].info != MPI_INFO_NULL)
            MPI_Info_free(&vs[v].info);
        free(vs[v].lat_us);
        free(vs[v].first100_us);
    }
}

#if NB_HOST_MPI
/*
 * -W: the constants of auto's cost model (src/coll/neighbor/select.c), fitted to the
 * host MPI's blocking allgather. On the topology, the busiest process sends
 * and receives M messages; a least-squares line through (bytes sent, latency)
 * over the sizes gives byte_us (slope) and the cost of one round of M
 * messages (intercept); a ring (one message each way) at the smallest size
 * gives the cost of a round of 2 messages; the two split the intercept into
 * round_us and msg_us. Every process reads the file it is given: give all
 * the same one.
 */
static double ring_latency(const options_t *o)
{
    int left = (rank + nprocs - 1) % nprocs, right = (rank + 1) % nprocs;
    MPI_Comm ring;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, MPI_UNWEIGHTED, 1, &right,
                                   MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &ring);
    char s = 1, r = 0;
    double sum = 0;
    for (int it = 0; it < o->warmup + o->iters; it++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        MPI_Neighbor_allgather(&s, 1, MPI_BYTE, &r, 1, MPI_BYTE, ring);
        double t = MPI_Wtime() - t0;
        MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        sum += it >= o->warmup ? t : 0;
    }
    MPI_Comm_free(&ring);
    return sum / o->iters * 1e6;
}

static void write_model(const options_t *o, int maxin, int maxout, double ring_us)
{
    int n = 0;
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (long size = o->min; size <= o->max; size *= o->step, n++) {
        double x = (double)maxout * size, y = host_allgather_us[n];
        sx += x, sy += y, sxx += x * x, sxy += x * y;
    }
    double den = n * sxx - sx * sx;
    double slope = n > 1 && den > 0 ? (n * sxy - sx * sy) / den : 0;
    double icept = (sy - slope * sx) / n, msgs = maxin + maxout;
    double msg_us = msgs > 2 ? (icept - ring_us) / (msgs - 2) : 0;
    msg_us = msg_us > 0 ? msg_us : 0;
    double round_us = ring_us - 2 * msg_us > 0 ? ring_us - 2 * msg_us : 0;
    FILE *f = fopen(o->model, "w");
    if (!f) {
        fprintf(stderr, "neighbor: -W %s cannot be written\n", o->model);
        return;
    }
    fprintf(f, "# mpitopo cost model (MPITOPO_NEIGHBOR_MODEL), fitted by bench/neighbor -W\n"
               "# topology %s, %d processes, busiest %d + %d messages, sizes %ld..%ld;\n"
               "# host allgather: %.3f us + %.6f us/byte sent; ring: %.3f us\n",
            o->topo, nprocs, maxin, maxout, o->min, o->max, icept, slope, ring_us);
    fprintf(f, "round_us %.4f\nmsg_us %.4f\nbyte_us %.6f\nmargin 0.1\n", round_us, msg_us,
            slope > 0 ? slope : 0);
    fclose(f);
    printf("# cost model written to %s: round_us %.4f msg_us %.4f byte_us %.6f\n", o->model,
           round_us, msg_us, slope > 0 ? slope : 0);
}
#endif

static void degree_stats(int deg, const char *what)
{
    int mn = deg, mx = deg;
    long sum = deg;
    MPI_Allreduce(MPI_IN_PLACE, &mn, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &mx, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("# %s min/avg/max: %d / %.2f / %d\n", what, mn, (double)sum / nprocs, mx);
}

int main(int argc, char **argv)
{
    options_t o;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    const char *missing = missing_schedule();
    if (missing) {
        fprintf(stderr, "neighbor: the library's schedule \"%s\" has no column in bench/neighbor.c\n",
                missing);
        MPI_Finalize();
        return 1;
    }
    int pa = parse_args(argc, argv, &o);
    if (pa) {
        if (rank == 0)
            usage(pa > 0 ? stdout : stderr);
        MPI_Finalize();
        return pa > 0 ? 0 : 1;
    }
    if (!o.topo[0]) {
        int dims[2] = {0, 0};
        MPI_Dims_create(nprocs, 2, dims);
        snprintf(o.topo, sizeof o.topo, "cart:%dx%d:1", dims[0], dims[1]);
    }
    MPI_Comm topo = make_topology(o.topo);

    bufs_t b;
    if (mpitopo_comm_neighbors_count(topo, &b.indeg, &b.outdeg))
        die(mpitopo_last_error());
    b.sources = malloc(sizeof(int) * (size_t)(b.indeg + 1));
    int *dsts = malloc(sizeof(int) * (size_t)(b.outdeg + 1));
    if (!b.sources || !dsts || mpitopo_comm_neighbors(topo, b.indeg, b.sources, b.outdeg, dsts))
        die("neighbour lists");
    free(dsts);
    int maxdeg = b.indeg > b.outdeg ? b.indeg : b.outdeg;
    size_t cap = (size_t)(maxdeg ? maxdeg : 1) * (size_t)o.max;
    b.send = malloc(cap), b.recv = malloc(cap), b.ref = malloc(cap);
    if (!b.send || !b.recv || !b.ref)
        die("out of memory");

    if (rank == 0) {
        char ver[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(ver, &len);
        char *nl = strchr(ver, '\n');
        if (nl)
            *nl = '\0';
        printf("# mpitopo neighbor benchmark (OSU-style latency)\n");
        printf("# MPI: %s\n", ver);
        printf("# topology: %s, %d processes\n", o.topo, nprocs);
        printf("# iterations: %d timed, %d warm-up per size; sizes %ld..%ld bytes\n", o.iters,
               o.warmup, o.min, o.max);
        printf("# mpitopo persistent forms: %s; MPI persistent forms: %s\n",
               BENCH_HAVE_PERSISTENT ? "yes" : "no (not in coll.h)",
               NB_HAVE_MPI_PERSISTENT ? "yes" : "no (MPI < 4)");
        printf("# schedules: %s%s\n", o.sched,
               o.sched_given ? " (info mpitopo_neighbor=NAME on each variant's communicator)"
                             : " (default; no info key)");
    }
    degree_stats(b.indeg, "in-degree");
    degree_stats(b.outdeg, "out-degree");
    for (int k = 0; k < o.nops; k++)
        run_op(topo, (enum op)o.ops[k], &o, &b);
#if NB_HOST_MPI
    if (o.model[0]) {
        int mx[2] = {b.indeg, b.outdeg};
        MPI_Allreduce(MPI_IN_PLACE, mx, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        double ring_us = ring_latency(&o);
        if (rank == 0 && host_allgather_us)
            write_model(&o, mx[0], mx[1], ring_us);
        else if (rank == 0)
            fprintf(stderr, "neighbor: -W needs the host MPI's blocking allgather "
                            "(-c allgather, -f blocking)\n");
    }
#endif
    free(host_allgather_us);
    if (rank == 0)
        fflush(stdout);
    free(b.send), free(b.recv), free(b.ref), free(b.sources);
    MPI_Comm_free(&topo);
    MPI_Finalize();
    return 0;
}
