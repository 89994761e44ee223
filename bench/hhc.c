/*
 * hhc: the HHC virtual topology's collectives against the host MPI's on the
 * same processes (issue 18). Builds the largest HHC that MPI_COMM_WORLD
 * holds (mpitopo_hhc_create, reorder as the info key says: default on) and
 * times, per message size, mpitopo_hhc_bcast and mpitopo_hhc_gather (root:
 * the top centre and a bottom node) and mpitopo_hhc_allreduce against
 * MPI_Bcast, MPI_Gather and MPI_Allreduce on the HHC's processes in comm's
 * order. Prints one table row per (operation, size): the median over -r
 * repetitions of the time of -i iterations closed by a barrier, divided by
 * -i, the slowest process's, in microseconds.
 *
 * -g sets the info key mpitopo_hhc_gather of the creation: auto (default:
 * the cubes off root's chain send straight up the tree) or cubes (every
 * cube gathers over its Cartesian communicator first).
 *
 *   mpirun -n 37 bench/hhc [-s 8,1024,65536] [-i 50] [-r 5] [-g auto|cubes]
 */
#include <mpitopo.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

typedef struct run {
    mpitopo_hhc_t *h;
    MPI_Comm ref;
    long long root_id;
    int root_rank, bytes, nnodes;
    char *buf, *big;
} run_t;

enum { OP_BCAST, OP_GATHER, OP_ALLREDUCE };

static void once(run_t *r, int op, int ours)
{
    int n = r->bytes / (int)sizeof(int);
    switch (op) {
    case OP_BCAST:
        if (ours)
            mpitopo_hhc_bcast(r->buf, r->bytes, MPI_BYTE, r->root_id, r->h);
        else
            MPI_Bcast(r->buf, r->bytes, MPI_BYTE, r->root_rank, r->ref);
        break;
    case OP_GATHER:
        if (ours)
            mpitopo_hhc_gather(r->buf, r->bytes, MPI_BYTE, r->big, r->bytes, MPI_BYTE, r->root_id, r->h);
        else
            MPI_Gather(r->buf, r->bytes, MPI_BYTE, r->big, r->bytes, MPI_BYTE, r->root_rank, r->ref);
        break;
    default:
        if (ours)
            mpitopo_hhc_allreduce(r->buf, r->big, n > 0 ? n : 1, MPI_INT, MPI_SUM, r->h);
        else
            MPI_Allreduce(r->buf, r->big, n > 0 ? n : 1, MPI_INT, MPI_SUM, r->ref);
    }
}

static double measure(run_t *r, int op, int ours, int iters, int reps)
{
    double *t = malloc((size_t)reps * sizeof *t);
    once(r, op, ours); /* warm-up */
    for (int k = 0; k < reps; k++) {
        MPI_Barrier(r->ref);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++)
            once(r, op, ours);
        MPI_Barrier(r->ref); /* until the last process is done */
        t[k] = (MPI_Wtime() - t0) / iters * 1e6;
        MPI_Allreduce(MPI_IN_PLACE, &t[k], 1, MPI_DOUBLE, MPI_MAX, r->ref);
    }
    for (int a = 1; a < reps; a++) /* insertion sort: reps is small */
        for (int b = a; b > 0 && t[b] < t[b - 1]; b--) {
            double x = t[b];
            t[b] = t[b - 1];
            t[b - 1] = x;
        }
    double med = t[reps / 2];
    MPI_Bcast(&med, 1, MPI_DOUBLE, 0, r->ref);
    free(t);
    return med;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, iters = 50, reps = 5, sizes[16] = {8, 1024, 65536}, nsizes = 3;
    const char *gather = "auto";
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int a = 1; a < argc; a++) {
        long v;
        if (!strcmp(argv[a], "-i") && a + 1 < argc && !bench_parse_long(argv[++a], 1, 1000000, &v))
            iters = (int)v;
        else if (!strcmp(argv[a], "-r") && a + 1 < argc && !bench_parse_long(argv[++a], 1, 1000, &v))
            reps = (int)v;
        else if (!strcmp(argv[a], "-g") && a + 1 < argc)
            gather = argv[++a];
        else if (!strcmp(argv[a], "-s") && a + 1 < argc) {
            nsizes = 0;
            for (char *p = strtok(argv[++a], ","); p && nsizes < 16; p = strtok(NULL, ","))
                if (!bench_parse_long(p, 4, 1 << 24, &v))
                    sizes[nsizes++] = (int)v;
        } else {
            if (rank == 0)
                fprintf(stderr, "usage: hhc [-s SIZES] [-i ITERS] [-r REPS] [-g auto|cubes]\n");
            MPI_Finalize();
            return 2;
        }
    }
    int dim = 0;
    for (int d = 1; d <= 10; d++) {
        int L = (d + 2) / 3, s = 1;
        for (int j = 1; j <= L; j++)
            s = (1 << (j < L ? 3 : d - 3 * (L - 1))) * s + 1;
        if (s <= size)
            dim = d;
    }
    run_t r = {0};
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpitopo_hhc_gather", gather);
    int crc = dim ? mpitopo_hhc_create(MPI_COMM_WORLD, dim, info, &r.h) : MPITOPO_ERR_ARG;
    MPI_Info_free(&info);
    if (crc != MPITOPO_SUCCESS) {
        if (rank == 0)
            fprintf(stderr, "hhc: %s\n", dim ? mpitopo_last_error() : "needs at least 3 processes");
        MPI_Finalize();
        return 1;
    }
    MPI_Comm_split(MPI_COMM_WORLD, r.h ? 0 : MPI_UNDEFINED, rank, &r.ref);
    if (r.h) {
        mpitopo_hhc_info(r.h, NULL, &r.nnodes, NULL);
        int mrank;
        MPI_Comm_rank(r.ref, &mrank);
        long long me, *ids = malloc((size_t)r.nnodes * sizeof *ids);
        mpitopo_hhc_info(r.h, NULL, NULL, &me);
        MPI_Allgather(&me, 1, MPI_LONG_LONG, ids, 1, MPI_LONG_LONG, r.ref);
        if (mrank == 0)
            printf("# %d-HHC on %d of %d processes, gather %s, %d iterations, median of %d\n"
                   "| operation | root | bytes | MPI (µs) | HHC (µs) | HHC / MPI |\n|---|---|---:|---:|---:|---:|\n",
                   dim, r.nnodes, size, gather, iters, reps);
        /* Roots: the top centre (its ID: every nibble 1000) and a bottom node. */
        long long top = 0;
        for (int i = 0; i < (dim + 2) / 3; i++)
            top = top << 4 | 8;
        static const char *const names[] = {"bcast", "gather", "allreduce"};
        for (int s = 0; s < nsizes; s++) {
            r.bytes = sizes[s];
            r.buf = calloc((size_t)r.bytes, 1);
            r.big = calloc((size_t)r.bytes * (size_t)r.nnodes, 1);
            for (int op = 0; op < 3; op++)
                for (int which = 0; which < (op == OP_ALLREDUCE ? 1 : 2); which++) {
                    r.root_id = which == 0 ? top : 0;
                    for (r.root_rank = 0; ids[r.root_rank] != r.root_id; r.root_rank++)
                        ;
                    double mpi = measure(&r, op, 0, iters, reps), ours = measure(&r, op, 1, iters, reps);
                    if (mrank == 0)
                        printf("| %s | %s | %d | %.2f | %.2f | %.2f |\n", names[op],
                               op == OP_ALLREDUCE ? "-" : which == 0 ? "top centre" : "bottom 0", r.bytes, mpi,
                               ours, ours / mpi);
                }
            free(r.buf);
            free(r.big);
        }
        free(ids);
        MPI_Comm_free(&r.ref);
        mpitopo_hhc_free(&r.h);
    }
    MPI_Finalize();
    return 0;
}
