/*
 * A plain MPI program that breaks MPI's rule on reordering (MPI-4.1
 * section 8.5.4) the way real programs do: rings of 4 consecutive world
 * ranks as a dist-graph (MPI_Dist_graph_create_adjacent, reorder = 1),
 * then MPI_Neighbor_alltoallv on it with the counts and data of its own
 * neighbour lists, computed from its world rank, never asking the new
 * communicator who it is. Correct when the new communicator has MPI's
 * ranks; once renumbered, a process plays another vertex's role and the
 * counts and data no longer match.
 *   shim_world_nbr
 * The block from a to b holds count(a, b) ints a * 1000 + k; every block
 * received is checked. Errors return (MPI_ERRORS_RETURN). Rank 0 prints
 * "PASS world_nbr" or "FAIL world_nbr: why" (exit status 1).
 */
#include <mpi.h>

#include <stdio.h>

#define RING 4
#define MAXC 8

static int next_of(int v) { return v - v % RING + (v % RING + 1) % RING; }
static int prev_of(int v) { return v - v % RING + (v % RING + RING - 1) % RING; }

/* Different for a -> b and b -> a, and for the two neighbours of a. */
static int count(int a, int b) { return 1 + (3 * a + b) % 5; }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int w, size, bad = 0;
    char why[200] = "";
    MPI_Comm_rank(MPI_COMM_WORLD, &w);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (size % RING != 0) {
        if (w == 0)
            printf("FAIL world_nbr: %d processes are not rings of %d\n", size, RING);
        MPI_Finalize();
        return 1;
    }
    int nb[2] = {prev_of(w), next_of(w)};
    MPI_Comm g = MPI_COMM_NULL;
    int rc = MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, nb, MPI_UNWEIGHTED, 2, nb,
                                            MPI_UNWEIGHTED, MPI_INFO_NULL, 1, &g);
    if (rc != MPI_SUCCESS) {
        bad = 1;
        snprintf(why, sizeof why, "MPI_Dist_graph_create_adjacent returned %d", rc);
    }

    int sendbuf[2 * MAXC], recvbuf[2 * MAXC], scount[2], rcount[2], sdispl[2], rdispl[2];
    for (int i = 0; i < 2; i++) {
        scount[i] = count(w, nb[i]);
        rcount[i] = count(nb[i], w);
        sdispl[i] = rdispl[i] = i * MAXC;
        for (int k = 0; k < MAXC; k++) {
            sendbuf[i * MAXC + k] = w * 1000 + k;
            recvbuf[i * MAXC + k] = -1;
        }
    }
    if (!bad) {
        MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
        rc = MPI_Neighbor_alltoallv(sendbuf, scount, sdispl, MPI_INT, recvbuf, rcount, rdispl,
                                    MPI_INT, g);
        if (rc != MPI_SUCCESS) {
            char text[MPI_MAX_ERROR_STRING];
            int len = 0;
            MPI_Error_string(rc, text, &len);
            bad = 1;
            snprintf(why, sizeof why, "MPI_Neighbor_alltoallv failed: %.120s", text);
        }
    }
    for (int i = 0; i < 2 && !bad; i++)
        for (int k = 0; k < MAXC && !bad; k++) {
            int want = k < rcount[i] ? nb[i] * 1000 + k : -1;
            if (recvbuf[i * MAXC + k] != want) {
                bad = 1;
                snprintf(why, sizeof why, "block from %d: int %d is %d, not %d", nb[i], k,
                         recvbuf[i * MAXC + k], want);
            }
        }
    if (g != MPI_COMM_NULL)
        MPI_Comm_free(&g);

    int who = bad ? w : -1, first = -1;
    MPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (first > 0) {
        if (w == first)
            MPI_Send(why, sizeof why, MPI_CHAR, 0, 99, MPI_COMM_WORLD);
        if (w == 0)
            MPI_Recv(why, sizeof why, MPI_CHAR, first, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (w == 0) {
        if (first >= 0)
            printf("FAIL world_nbr: world rank %d: %s\n", first, why);
        else
            printf("PASS world_nbr: %d rings of %d\n", size / RING, RING);
    }
    MPI_Finalize();
    return first >= 0;
}
