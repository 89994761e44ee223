/*
 * trace_app: a plain MPI program that knows nothing of mpitopo and builds no
 * topology, the kind `mpitopo run` (and trace_and_map.sh) is for. Its pattern makes the default
 * (block) launch placement a bad one: every rank r exchanges a large
 * message with its partner r + P/2 (mod P), which block placement puts on
 * another node, and small messages with r - 1 and r + 1.
 *
 *   mpirun -n 8 ./trace_app [ITERATIONS]      (default 20; an even number of processes)
 *
 * Checks (exit status 1 on failure): every message holds what its sender
 * put in it. Prints "trace_app: PASS" on rank 0 and, with -v as the first
 * argument, the host of every rank (to see the placement a launcher was given).
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIG 65536 /* ints to the partner per iteration */
#define SMALL 16  /* ints to each ring neighbour */

static int fill(int *buf, int n, int from, int to, int it)
{
    for (int i = 0; i < n; i++)
        buf[i] = ((it * 1000 + from) * 1000 + to) ^ i;
    return n;
}

static long wrong(const int *buf, int n, int from, int to, int it)
{
    long bad = 0;
    for (int i = 0; i < n; i++)
        bad += buf[i] != (((it * 1000 + from) * 1000 + to) ^ i);
    return bad;
}

static void print_hosts(int rank, int size)
{
    char name[MPI_MAX_PROCESSOR_NAME] = "", *all = NULL;
    int len;
    MPI_Get_processor_name(name, &len);
    if (rank == 0)
        all = malloc((size_t)size * MPI_MAX_PROCESSOR_NAME);
    MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0,
               MPI_COMM_WORLD);
    for (int r = 0; rank == 0 && r < size; r++)
        printf("trace_app: rank %d on %s\n", r, all + (size_t)r * MPI_MAX_PROCESSOR_NAME);
    free(all);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, verbose = argc > 1 && !strcmp(argv[1], "-v");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iterations = argc > 1 + verbose ? atoi(argv[1 + verbose]) : 20;
    if (size % 2 || iterations < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: trace_app [-v] [ITERATIONS >= 1] on an even number of processes\n");
        MPI_Finalize();
        return 1;
    }
    if (verbose)
        print_hosts(rank, size);

    int partner = (rank + size / 2) % size, left = (rank - 1 + size) % size, right = (rank + 1) % size;
    int *out = malloc(BIG * sizeof *out), *in = malloc(BIG * sizeof *in);
    int lout[SMALL], rout[SMALL], lin[SMALL], rin[SMALL];
    if (!out || !in)
        MPI_Abort(MPI_COMM_WORLD, 1);
    long bad = 0;
    for (int it = 0; it < iterations; it++) {
        /* The ring: small messages both ways, nonblocking. */
        MPI_Request req[4];
        MPI_Status st[4]; /* (MPI_STATUSES_IGNORE trips a false GCC 12 warning in MPICH's mpi.h) */
        MPI_Irecv(lin, SMALL, MPI_INT, left, 1, MPI_COMM_WORLD, &req[0]);
        MPI_Irecv(rin, SMALL, MPI_INT, right, 2, MPI_COMM_WORLD, &req[1]);
        MPI_Isend(rout, fill(rout, SMALL, rank, right, it), MPI_INT, right, 1, MPI_COMM_WORLD, &req[2]);
        MPI_Isend(lout, fill(lout, SMALL, rank, left, it), MPI_INT, left, 2, MPI_COMM_WORLD, &req[3]);
        /* The partner: one large message each way. */
        MPI_Sendrecv(out, fill(out, BIG, rank, partner, it), MPI_INT, partner, 0, in, BIG, MPI_INT,
                     partner, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Waitall(4, req, st);
        bad += wrong(in, BIG, partner, rank, it) + wrong(lin, SMALL, left, rank, it) +
               wrong(rin, SMALL, right, rank, it);
    }
    long allbad;
    MPI_Reduce(&bad, &allbad, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("trace_app: %d processes, %d iterations, wrong items %ld\ntrace_app: %s\n", size,
               iterations, allbad, allbad ? "FAIL" : "PASS");
    MPI_Bcast(&allbad, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    free(out);
    free(in);
    MPI_Finalize();
    return allbad ? 1 : 0;
}
