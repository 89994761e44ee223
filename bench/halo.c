/*
 * halo: the ncartperf experiment of Gropp (EuroMPI'18, section 3) on three
 * communicators side by side, in the same run:
 *
 *   native   MPI_COMM_WORLD, grid from MPI_Dims_create, neighbours computed
 *            by hand in row-major order (no topology at all);
 *   cart     MPI_Cart_create(reorder = 1): what the MPI library does;
 *   mpitopo  mpitopo_cart_create(reorder = 1): node-aware renumbering.
 *
 * Each process exchanges one message with each of its 2*ndims face
 * neighbours of the periodic grid (Irecv, Isend, Waitall), ITERS times per
 * timing. A timing is the slowest process's time divided by ITERS; for each
 * message size the three communicators take turns (interleaved
 * repetitions, the first one a discarded warm-up) and the minimum over the
 * repetitions is reported, as in the paper. Bandwidth is per process:
 * bytes a process sends per exchange divided by the time of one exchange.
 *
 * Nodes are those of mpitopo_comm_nodeinfo(MPI_COMM_WORLD), so an emulated
 * cluster (MPITOPO_EMULATE) counts: the partner table (Table 3 of the
 * paper) is what mpitopo believes; timings only differ where the nodes are
 * real (network namespaces, SimGrid SMPI, a cluster).
 *
 *   mpirun -n 64 halo [-d 2|3] [-D 8x8] [-s 8] [-S 1048576] [-f 4] [-L 65536,1024]
 *                     [-r 10] [-i 32] [-c native,cart,mpitopo] [--csv]
 */
#include <mpitopo.h>

#include "bench_util.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Under SimGrid SMPI every rank lives in one process: the message buffers
 * are shared (their contents do not matter here), so 1024 ranks fit. */
#ifdef SMPI_SHARED_MALLOC
#define HALO_MALLOC(n) SMPI_SHARED_MALLOC(n)
#define HALO_FREE(p) SMPI_SHARED_FREE(p)
#else
#define HALO_MALLOC(n) malloc(n)
#define HALO_FREE(p) free(p)
#endif

enum { NATIVE, CART, MPITOPO, NKINDS };
static const char *const kind_name[NKINDS] = {"native", "cart", "mpitopo"};

#define MAX_DIMS 3
#define MAX_SIZES 64

typedef struct options {
    int ndims;
    int dims[MAX_DIMS]; /* 0 entries are filled by MPI_Dims_create */
    long minsize, maxsize;
    int factor;
    long list[MAX_SIZES]; /* explicit sizes (-L), nlist of them */
    int nlist;
    int reps, iters, csv;
    int use[NKINDS];
} options_t;

/* Partners of one process, and their totals over the communicator. */
typedef struct partners {
    int on_min, on_max, off_min, off_max;
    double on_avg, off_avg;
    int node_msgs_max; /* off-node messages one node sends per exchange, max over nodes */
    double node_msgs_avg;
} partners_t;

typedef struct halo {
    int kind;
    MPI_Comm comm;
    int nnb;
    int nb[2 * MAX_DIMS]; /* nb[2d]: minus neighbour in dimension d, nb[2d+1]: plus */
    double create_time;   /* seconds, slowest process */
    partners_t partners;
    double best[MAX_SIZES]; /* seconds per exchange, min over repetitions */
} halo_t;

static int world_rank, world_size;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: halo [options]   (run under mpirun)\n"
            "  -d N        2 or 3 dimensions (default 2)\n"
            "  -D AxBxC    process grid; 0 entries are filled by MPI_Dims_create\n"
            "              (default: all 0); the product must equal the number of processes\n"
            "  -s BYTES    smallest message (default 8)\n"
            "  -S BYTES    largest message (default 1048576)\n"
            "  -f F        sizes are -s, then every power of F above it up to -S (2 or 4; default 4)\n"
            "  -L A,B,...  explicit message sizes instead of -s/-S/-f\n"
            "  -r N        timed repetitions per size, after one warm-up (default 10)\n"
            "  -i N        exchanges per timing (default 32, as ncartperf)\n"
            "  -c LIST     communicators among native,cart,mpitopo (default all three)\n"
            "  --csv       machine-readable output\n"
            "  -h          this help\n");
}

static int parse_dims(const char *s, options_t *o)
{
    int n = 0;
    const char *p = s;
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 0 || v > 1 << 20 || n == MAX_DIMS)
            return -1;
        o->dims[n++] = (int)v;
        p = end;
        if (*p == 'x')
            p++;
        else if (*p)
            return -1;
    }
    if (n < 2)
        return -1;
    o->ndims = n;
    return 0;
}

static int parse_list(const char *s, long *out, int max, int *n)
{
    char buf[1024];
    if (strlen(s) >= sizeof buf)
        return -1;
    strcpy(buf, s);
    *n = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (*n == max || bench_parse_long(t, 1, 1L << 30, &out[(*n)++]) != 0)
            return -1;
    return *n > 0 ? 0 : -1;
}

/* 0: run; 1: stop with success (help); -1: stop with an error. */
static int parse_options(int argc, char **argv, options_t *o)
{
    static const struct option longopts[] = {{"csv", no_argument, NULL, 'C'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    *o = (options_t){.ndims = 2, .minsize = 8, .maxsize = 1 << 20, .factor = 4, .reps = 10, .iters = 32,
                     .use = {1, 1, 1}};
    int dims_given = 0, ndims_opt = 0, c;
    long v;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "d:D:s:S:f:L:r:i:c:h", longopts, NULL)) != -1) {
        int bad = 0;
        switch (c) {
        case 'd':
            bad = bench_parse_long(optarg, 2, 3, &v);
            ndims_opt = (int)v;
            break;
        case 'D':
            bad = parse_dims(optarg, o);
            dims_given = 1;
            break;
        case 's':
            bad = bench_parse_long(optarg, 1, 1L << 30, &o->minsize);
            break;
        case 'S':
            bad = bench_parse_long(optarg, 1, 1L << 30, &o->maxsize);
            break;
        case 'f':
            bad = bench_parse_long(optarg, 2, 4, &v) || v == 3;
            o->factor = (int)v;
            break;
        case 'L':
            bad = parse_list(optarg, o->list, MAX_SIZES, &o->nlist);
            break;
        case 'r':
            bad = bench_parse_long(optarg, 1, 100000, &v);
            o->reps = (int)v;
            break;
        case 'i':
            bad = bench_parse_long(optarg, 1, 1000000, &v);
            o->iters = (int)v;
            break;
        case 'c':
            bad = bench_parse_names(optarg, kind_name, NULL, NKINDS, o->use);
            break;
        case 'C':
            o->csv = 1;
            break;
        case 'h':
            if (world_rank == 0)
                usage(stdout);
            return 1;
        default:
            bad = 1;
        }
        if (bad) {
            if (world_rank == 0) {
                fprintf(stderr, "halo: bad option -%c%s%s\n", c == '?' ? optopt : c, optarg ? " " : "",
                        optarg ? optarg : "");
                usage(stderr);
            }
            return -1;
        }
    }
    const char *why = NULL;
    if (optind < argc)
        why = "unexpected argument";
    else if (dims_given && ndims_opt && ndims_opt != o->ndims)
        why = "-d disagrees with the number of entries of -D";
    else if (o->minsize > o->maxsize)
        why = "-s is larger than -S";
    else if (!o->use[NATIVE] && !o->use[CART] && !o->use[MPITOPO])
        why = "-c selects no communicator";
    if (why) {
        if (world_rank == 0)
            fprintf(stderr, "halo: %s\n", why);
        return -1;
    }
    if (!dims_given && ndims_opt)
        o->ndims = ndims_opt;
    if (o->nlist == 0) {
        o->list[o->nlist++] = o->minsize;
        for (long s = o->factor; s <= o->maxsize && o->nlist < MAX_SIZES; s *= o->factor)
            if (s > o->minsize)
                o->list[o->nlist++] = s;
    }
    return 0;
}

/* Node of every world rank, and what halo prints of the nodes. */
static int world_nodes(int **node_of, int *nnodes, int *emulated, int *min_local, int *max_local)
{
    const mpitopo_nodeinfo_t *ni;
    int rc = bench_world_nodes("halo", node_of, &ni);
    if (rc != MPI_SUCCESS)
        return rc;
    *nnodes = ni->nnodes;
    *emulated = ni->emulated;
    *min_local = ni->min_local_size;
    *max_local = ni->max_local_size;
    return MPI_SUCCESS;
}

/* Row-major neighbours of `rank` on a periodic grid, as MPI_Cart_shift gives them. */
static void grid_neighbours(int rank, int ndims, const int *dims, int *nb)
{
    int coords[MAX_DIMS], r = rank;
    for (int d = ndims - 1; d >= 0; d--) {
        coords[d] = r % dims[d];
        r /= dims[d];
    }
    for (int d = 0; d < ndims; d++) {
        for (int s = 0; s < 2; s++) {
            int c[MAX_DIMS];
            memcpy(c, coords, sizeof c);
            c[d] = (c[d] + (s ? 1 : dims[d] - 1)) % dims[d];
            int q = 0;
            for (int e = 0; e < ndims; e++)
                q = q * dims[e] + c[e];
            nb[2 * d + s] = q;
        }
    }
}

static int create(halo_t *h, const options_t *o)
{
    static const int periods[MAX_DIMS] = {1, 1, 1};
    int rc = MPI_SUCCESS;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    switch (h->kind) {
    case NATIVE:
        rc = MPI_Comm_dup(MPI_COMM_WORLD, &h->comm);
        break;
    case CART:
        rc = MPI_Cart_create(MPI_COMM_WORLD, o->ndims, o->dims, periods, 1, &h->comm);
        break;
    case MPITOPO:
        rc = mpitopo_cart_create(MPI_COMM_WORLD, o->ndims, o->dims, periods, 1, &h->comm);
        if (rc != MPITOPO_SUCCESS)
            fprintf(stderr, "halo: mpitopo_cart_create: %s\n", mpitopo_last_error());
        break;
    }
    double t = MPI_Wtime() - t0;
    MPI_Allreduce(&t, &h->create_time, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS)
        return rc;
    h->nnb = 2 * o->ndims;
    if (h->kind == NATIVE) {
        grid_neighbours(world_rank, o->ndims, o->dims, h->nb);
        return MPI_SUCCESS;
    }
    for (int d = 0; d < o->ndims && rc == MPI_SUCCESS; d++)
        rc = MPI_Cart_shift(h->comm, d, 1, &h->nb[2 * d], &h->nb[2 * d + 1]);
    return rc;
}

/* Distinct partners (self excluded), on and off the node, as mpitopo's
 * metrics and Table 3 count them; and off-node messages per node. */
static void count_partners(halo_t *h, const int *node_of, int nnodes)
{
    MPI_Group g, gw;
    int wnb[2 * MAX_DIMS], on = 0, off = 0, msgs = 0;
    MPI_Comm_group(h->comm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &gw);
    MPI_Group_translate_ranks(g, h->nnb, h->nb, gw, wnb);
    MPI_Group_free(&g);
    MPI_Group_free(&gw);
    int me = node_of[world_rank];
    for (int i = 0; i < h->nnb; i++) {
        if (wnb[i] == world_rank)
            continue;
        int off_node = node_of[wnb[i]] != me, seen = 0;
        msgs += off_node;
        for (int j = 0; j < i; j++)
            seen |= wnb[j] == wnb[i];
        if (!seen)
            off_node ? off++ : on++;
    }
    int mm[4] = {-on, on, -off, off}, sum[2] = {on, off}, tot[2];
    MPI_Allreduce(MPI_IN_PLACE, mm, 4, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(sum, tot, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int *per_node = calloc((size_t)nnodes, sizeof *per_node);
    if (per_node) {
        per_node[me] = msgs;
        MPI_Allreduce(MPI_IN_PLACE, per_node, nnodes, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    }
    partners_t *p = &h->partners;
    *p = (partners_t){-mm[0], mm[1], -mm[2], mm[3], (double)tot[0] / world_size,
                      (double)tot[1] / world_size, 0, 0.0};
    for (int n = 0; per_node && n < nnodes; n++) {
        p->node_msgs_max = per_node[n] > p->node_msgs_max ? per_node[n] : p->node_msgs_max;
        p->node_msgs_avg += (double)per_node[n] / nnodes;
    }
    free(per_node);
}

/* One timing: ITERS exchanges; seconds per exchange on the slowest process. */
static double exchange(const halo_t *h, char *sbuf, char *rbuf, long size, int iters)
{
    MPI_Request rq[4 * MAX_DIMS];
    int n = h->nnb;
    /* The message from my minus neighbour in dimension d carries tag 2d, from
     * my plus neighbour 2d+1: unambiguous even when both are one process. */
    MPI_Barrier(h->comm);
    double t0 = MPI_Wtime();
    for (int it = 0; it < iters; it++) {
        for (int i = 0; i < n; i++)
            MPI_Irecv(rbuf + (size_t)i * (size_t)size, (int)size, MPI_BYTE, h->nb[i], i, h->comm, &rq[i]);
        for (int i = 0; i < n; i++)
            MPI_Isend(sbuf + (size_t)i * (size_t)size, (int)size, MPI_BYTE, h->nb[i], i ^ 1, h->comm,
                      &rq[n + i]);
        MPI_Waitall(2 * n, rq, MPI_STATUSES_IGNORE);
    }
    double t = (MPI_Wtime() - t0) / iters, tmax;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, h->comm);
    return tmax;
}

static void print_header(const options_t *o, int nnodes, int emulated, int min_local, int max_local)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0;
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, "\n,")] = '\0';
    char grid[64] = "";
    for (int d = 0, n = 0; d < o->ndims; d++)
        n += snprintf(grid + n, sizeof grid - (size_t)n, "%s%d", d ? "x" : "", o->dims[d]);
    const char *emu = getenv("MPITOPO_EMULATE"), *pl = getenv("MPITOPO_EMULATE_PLACEMENT");
    if (o->csv) {
        printf("# halo: %d processes, %d-D %s periodic, %d nodes of %d..%d (%s), %d exchanges per timing, "
               "min over %d repetitions; %s\n",
               world_size, o->ndims, grid, nnodes, min_local, max_local, emulated ? "emulated" : "MPI",
               o->iters, o->reps, lib);
        printf("record,comm,ndims,dims,nprocs,nnodes,bytes,time_us,mbps_per_proc,on_min,on_max,on_avg,"
               "off_min,off_max,off_avg,node_offmsgs_max,create_s\n");
        return;
    }
    printf("halo (ncartperf): %d processes, %d-D %s periodic grid, %d exchanges per timing, min over %d "
           "repetitions (+1 warm-up), interleaved\n",
           world_size, o->ndims, grid, o->iters, o->reps);
    printf("nodes: %d of %d..%d processes, %s", nnodes, min_local, max_local,
           emulated ? "emulated: MPITOPO_EMULATE=" : "from MPI_COMM_TYPE_SHARED");
    if (emulated)
        printf("\"%s\" placement %s", emu, pl && *pl ? pl : "block");
    printf("\nMPI: %s\n\n", lib);
}

static void print_partners(const options_t *o, const halo_t *hs, int nnodes)
{
    if (o->csv) {
        for (int k = 0; k < NKINDS; k++) {
            const halo_t *h = &hs[k];
            if (!o->use[k])
                continue;
            const partners_t *p = &h->partners;
            printf("partners,%s,%d,", kind_name[k], o->ndims);
            for (int d = 0; d < o->ndims; d++)
                printf("%s%d", d ? "x" : "", o->dims[d]);
            printf(",%d,%d,,,,%d,%d,%.4f,%d,%d,%.4f,%d,%.6f\n", world_size, nnodes, p->on_min, p->on_max,
                   p->on_avg, p->off_min, p->off_max, p->off_avg, p->node_msgs_max, h->create_time);
        }
        return;
    }
    printf("partners per process (distinct, self excluded) and off-node messages per node and exchange:\n");
    printf("  %-8s  on-node min max  avg   off-node min max  avg   node off-msgs max  avg    created in\n", "");
    for (int k = 0; k < NKINDS; k++) {
        const partners_t *p = &hs[k].partners;
        if (o->use[k])
            printf("  %-8s          %3d %3d %5.2f          %3d %3d %5.2f               %4d %6.1f   %9.6f s\n",
                   kind_name[k], p->on_min, p->on_max, p->on_avg, p->off_min, p->off_max, p->off_avg,
                   p->node_msgs_max, p->node_msgs_avg, hs[k].create_time);
    }
    printf("\n");
}

static void print_times(const options_t *o, const halo_t *hs, int nnodes)
{
    int ratio = o->use[NATIVE] && o->use[MPITOPO];
    if (o->csv) {
        for (int s = 0; s < o->nlist; s++)
            for (int k = 0; k < NKINDS; k++) {
                if (!o->use[k])
                    continue;
                double t = hs[k].best[s];
                printf("time,%s,%d,", kind_name[k], o->ndims);
                for (int d = 0; d < o->ndims; d++)
                    printf("%s%d", d ? "x" : "", o->dims[d]);
                printf(",%d,%d,%ld,%.3f,%.3f,,,,,,,,\n", world_size, nnodes, o->list[s], t * 1e6,
                       (double)hs[k].nnb * (double)o->list[s] / t * 1e-6);
            }
        return;
    }
    printf("time per exchange (us) and bandwidth per process (MB/s):\n  %9s", "bytes");
    for (int k = 0; k < NKINDS; k++)
        if (o->use[k])
            printf("  %11s %9s", kind_name[k], "MB/s");
    if (ratio)
        printf("  native/mpitopo");
    printf("\n");
    for (int s = 0; s < o->nlist; s++) {
        printf("  %9ld", o->list[s]);
        for (int k = 0; k < NKINDS; k++)
            if (o->use[k])
                printf("  %11.2f %9.1f", hs[k].best[s] * 1e6,
                       (double)hs[k].nnb * (double)o->list[s] / hs[k].best[s] * 1e-6);
        if (ratio)
            printf("  %14.2f", hs[NATIVE].best[s] / hs[MPITOPO].best[s]);
        printf("\n");
    }
}

static int run(const options_t *o, halo_t *hs)
{
    long maxsize = 0;
    for (int s = 0; s < o->nlist; s++)
        maxsize = o->list[s] > maxsize ? o->list[s] : maxsize;
    size_t bytes = (size_t)(2 * o->ndims) * (size_t)maxsize;
    char *sbuf = HALO_MALLOC(bytes), *rbuf = HALO_MALLOC(bytes);
    int ok = sbuf && rbuf, all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
        if (world_rank == 0)
            fprintf(stderr, "halo: cannot allocate 2 x %zu bytes of message buffers\n", bytes);
        if (sbuf)
            HALO_FREE(sbuf);
        if (rbuf)
            HALO_FREE(rbuf);
        return 1;
    }
    memset(sbuf, 1, bytes);
    memset(rbuf, 0, bytes);
    int kinds[NKINDS], nk = 0;
    for (int k = 0; k < NKINDS; k++)
        if (o->use[k])
            kinds[nk++] = k;
    for (int s = 0; s < o->nlist; s++) {
        for (int k = 0; k < NKINDS; k++)
            hs[k].best[s] = 1e300;
        /* Repetition 0 is the warm-up; the starting communicator rotates so
         * that none always runs right after another. */
        for (int rep = 0; rep <= o->reps; rep++)
            for (int j = 0; j < nk; j++) {
                halo_t *h = &hs[kinds[(j + rep) % nk]];
                double t = exchange(h, sbuf, rbuf, o->list[s], o->iters);
                if (rep > 0 && t < h->best[s])
                    h->best[s] = t;
            }
    }
    HALO_FREE(sbuf);
    HALO_FREE(rbuf);
    return 0;
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
    /* MPI_Dims_create fails (fatally, by default) unless the given entries divide the size. */
    long given = 1;
    for (int d = 0; d < o.ndims; d++)
        given *= o.dims[d] ? o.dims[d] : 1;
    if (world_size % given != 0 || MPI_Dims_create(world_size, o.ndims, o.dims) != MPI_SUCCESS) {
        if (world_rank == 0)
            fprintf(stderr, "halo: the entries of -D do not divide the %d processes\n", world_size);
        MPI_Finalize();
        return 1;
    }
    long prod = 1;
    for (int d = 0; d < o.ndims; d++)
        prod *= o.dims[d];
    if (prod != world_size) {
        if (world_rank == 0)
            fprintf(stderr, "halo: the grid has %ld processes, the job %d\n", prod, world_size);
        MPI_Finalize();
        return 1;
    }
    int *node_of = NULL, nnodes = 0, emulated = 0, min_local = 0, max_local = 0;
    if (world_nodes(&node_of, &nnodes, &emulated, &min_local, &max_local) != MPI_SUCCESS) {
        MPI_Abort(MPI_COMM_WORLD, 1);
        return 1;
    }
    halo_t hs[NKINDS];
    memset(hs, 0, sizeof hs);
    for (int k = 0; k < NKINDS; k++) {
        hs[k].kind = k;
        hs[k].comm = MPI_COMM_NULL;
        if (!o.use[k])
            continue;
        if (create(&hs[k], &o) != MPI_SUCCESS) {
            fprintf(stderr, "halo: creating the %s communicator failed on rank %d\n", kind_name[k],
                    world_rank);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        count_partners(&hs[k], node_of, nnodes);
    }
    if (world_rank == 0) {
        print_header(&o, nnodes, emulated, min_local, max_local);
        print_partners(&o, hs, nnodes);
        fflush(stdout);
    }
    rc = run(&o, hs);
    if (rc == 0 && world_rank == 0) {
        print_times(&o, hs, nnodes);
        fflush(stdout);
    }
    for (int k = 0; k < NKINDS; k++)
        if (hs[k].comm != MPI_COMM_NULL)
            MPI_Comm_free(&hs[k].comm);
    free(node_of);
    MPI_Finalize();
    return rc;
}
