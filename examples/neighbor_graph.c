/*
 * neighbor_graph: a dist-graph communicator made by
 * mpitopo_dist_graph_create_adjacent (reordered so that heavy edges stay
 * inside a node) and neighbourhood alltoalls on it with mpitopo's blocking,
 * nonblocking and persistent calls, each result checked.
 *
 *   mpirun -n 8 ./neighbor_graph [COUNT [ITERATIONS]]     (defaults: 64 10; 4 processes or more)
 *
 * The graph: rank r sends COUNT ints to r+1, r-1 and r+P/2 (mod P) and
 * receives from r-1, r+1 and r-P/2. The edge weights say how many bytes
 * travel along each edge (info key mpitopo_weights=bytes, the default), so
 * the mapper knows what it saves by putting two ranks on one node.
 *
 * The rule of reordering: in the new communicator, the process with rank k
 * plays rank k's role (its neighbour lists are the ones given for rank k),
 * so each process computes its data from its new rank.
 *
 * Which schedule runs the collectives: the info key mpitopo_neighbor of an
 * _init call or of the communicator, else MPITOPO_NEIGHBOR, else "auto" (the
 * host MPI's own call unless mpitopo's cost model predicts that one of its
 * schedules is faster). Below, the persistent operation is made once per
 * schedule through the info key; every one must give the same data.
 *
 * Checks (exit status 1 on failure): each received block holds what its
 * source sent to this process, in the neighbour order of
 * MPI_Dist_graph_neighbors, and equals what the MPI's own
 * MPI_Neighbor_alltoall delivers. Prints "neighbor_graph: PASS" on rank 0.
 */
#include <mpitopo.h>

#include <stdio.h>
#include <stdlib.h>

#define DEG 3

static int count, nprocs;

/* Item k of the block that rank src sends to rank dst in iteration it. */
static int value(int src, int dst, int k, int it)
{
    return ((it * nprocs + src) * nprocs + dst) * count + k;
}

static void fill(int me, const int dst[DEG], int it, int *send)
{
    for (int j = 0; j < DEG; j++)
        for (int k = 0; k < count; k++)
            send[j * count + k] = value(me, dst[j], k, it);
}

/* Wrong items in recv: block i must come from src[i]. */
static long check(int me, const int src[DEG], int it, const int *recv)
{
    long bad = 0;
    for (int i = 0; i < DEG; i++)
        for (int k = 0; k < count; k++)
            bad += recv[i * count + k] != value(src[i], me, k, it);
    return bad;
}

/* Stop everything on an error of mpitopo: it says what and why. */
static void ok_or_abort(int rc, const char *what)
{
    if (rc != MPITOPO_SUCCESS) {
        fprintf(stderr, "neighbor_graph: %s: %s\n", what, mpitopo_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    count = argc > 1 ? atoi(argv[1]) : 64;
    int iterations = argc > 2 ? atoi(argv[2]) : 10;
    int wrank;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (nprocs < 4 || count < 1 || iterations < 1) {
        if (wrank == 0)
            fprintf(stderr, "usage: neighbor_graph [COUNT >= 1 [ITERATIONS >= 1]] on 4 processes or more\n");
        MPI_Finalize();
        return 1;
    }

    /* My role's edges, as the program would describe them for rank wrank. */
    int P = nprocs, r = wrank;
    int dst[DEG] = {(r + 1) % P, (r - 1 + P) % P, (r + P / 2) % P};
    int src[DEG] = {(r - 1 + P) % P, (r + 1) % P, (r - P / 2 + P) % P};
    int w[DEG] = {count * 4, count * 4, count * 4}; /* bytes per edge and call */
    MPI_Comm graph;
    ok_or_abort(mpitopo_dist_graph_create_adjacent(MPI_COMM_WORLD, DEG, src, w, DEG, dst, w,
                                                   MPI_INFO_NULL, 1, &graph),
                "mpitopo_dist_graph_create_adjacent");

    /* My rank and neighbour lists in the new communicator: those of the
     * role I now play (MPI_Dist_graph_neighbors gives MPI's order). */
    int me, wsrc[DEG], wdst[DEG];
    MPI_Comm_rank(graph, &me);
    MPI_Dist_graph_neighbors(graph, DEG, src, wsrc, DEG, dst, wdst);

    int *send = malloc(sizeof(int) * DEG * (size_t)count);
    int *recv = malloc(sizeof(int) * DEG * (size_t)count);
    int *host = malloc(sizeof(int) * DEG * (size_t)count);
    if (!send || !recv || !host)
        MPI_Abort(MPI_COMM_WORLD, 1);
    long bad = 0;

    /* 1. Blocking, against the host MPI's own call on the same buffers. */
    fill(me, dst, 0, send);
    ok_or_abort(mpitopo_neighbor_alltoall(send, count, MPI_INT, recv, count, MPI_INT, graph),
                "mpitopo_neighbor_alltoall");
    MPI_Neighbor_alltoall(send, count, MPI_INT, host, count, MPI_INT, graph);
    bad += check(me, src, 0, recv);
    for (int i = 0; i < DEG * count; i++)
        bad += recv[i] != host[i];

    /* 2. Nonblocking: start, do other work, test now and then (a schedule of
     * several rounds posts its next round inside test or wait), wait. */
    for (int it = 1; it <= iterations; it++) {
        mpitopo_request_t req;
        int done = 0;
        fill(me, dst, it, send);
        ok_or_abort(mpitopo_ineighbor_alltoall(send, count, MPI_INT, recv, count, MPI_INT, graph, &req),
                    "mpitopo_ineighbor_alltoall");
        for (int poll = 0; poll < 3 && !done; poll++)
            ok_or_abort(mpitopo_test(&req, &done), "mpitopo_test"); /* ... computation here ... */
        ok_or_abort(mpitopo_wait(&req), "mpitopo_wait");
        bad += check(me, src, it, recv);
    }

    /* 3. Persistent: the schedule is built once by _init; each iteration
     * refills the same send buffer, starts and waits. One operation per
     * schedule, chosen through the info key (same on every process). */
    const char *schedules[] = {"auto", "linear", "combine"};
    for (int s = 0; s < 3; s++) {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "mpitopo_neighbor", schedules[s]);
        mpitopo_request_t req;
        ok_or_abort(mpitopo_neighbor_alltoall_init(send, count, MPI_INT, recv, count, MPI_INT, graph,
                                                   info, &req),
                    "mpitopo_neighbor_alltoall_init");
        MPI_Info_free(&info); /* the request keeps what it needs */
        for (int it = 1; it <= iterations; it++) {
            fill(me, dst, 100 * (s + 1) + it, send);
            ok_or_abort(mpitopo_start(&req), "mpitopo_start");
            ok_or_abort(mpitopo_wait(&req), "mpitopo_wait"); /* inactive again, reusable */
            bad += check(me, src, 100 * (s + 1) + it, recv);
        }
        ok_or_abort(mpitopo_request_free(&req), "mpitopo_request_free");
    }

    long allbad, moved = me != wrank, nmoved;
    MPI_Allreduce(&bad, &allbad, 1, MPI_LONG, MPI_SUM, graph);
    MPI_Allreduce(&moved, &nmoved, 1, MPI_LONG, MPI_SUM, graph);
    if (me == 0) {
        printf("neighbor_graph: %d processes, degree %d, %d ints per block; processes that changed "
               "rank: %ld; wrong items: %ld\n",
               nprocs, DEG, count, nmoved, allbad);
        printf("neighbor_graph: %s\n", allbad ? "FAIL" : "PASS");
    }
    free(send);
    free(recv);
    free(host);
    MPI_Comm_free(&graph);
    MPI_Finalize();
    return allbad ? 1 : 0;
}
