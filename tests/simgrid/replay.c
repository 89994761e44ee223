/* Replays a pattern file under SMPI: every edge's bytes go from its source
 * rank to its destination in one message, so that a simulated run loads the
 * network exactly as the pattern weighs it.
 *   replay PATTERN_FILE            all edges at once (MPI_Irecv / MPI_Isend,
 *                                  then MPI_Waitall): the flows share links
 *   replay PATTERN_FILE serial     one edge after the other (a 0-byte
 *                                  token between two): every flow alone in the
 *                                  network, whose trace then accounts every
 *                                  link's bytes exactly (SimGrid 3.32's Paje
 *                                  trace drops part of a flow whose rate
 *                                  changes while other flows share its links)
 * The pattern file: "mpitopo-pattern 1 N", then lines "SRC DST BYTES
 * MESSAGES"; '#' starts a comment. Rank 0 prints the time of the exchange. */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct edge {
    int src, dst;
    long long bytes;
} edge_t;

/* The edges of the file, or NULL with a message. */
static edge_t *read_pattern(const char *path, int *nprocs, int *nedges)
{
    FILE *f = fopen(path, "r");
    char line[256];
    int cap = 0, ver;
    edge_t *e = NULL;
    *nprocs = -1;
    *nedges = 0;
    if (!f) {
        fprintf(stderr, "replay: cannot open '%s'\n", path);
        return NULL;
    }
    while (fgets(line, sizeof line, f)) {
        char *hash = strchr(line, '#');
        long long b;
        int s, d;
        if (hash)
            *hash = '\0';
        if (*nprocs < 0 && sscanf(line, " mpitopo-pattern %d %d", &ver, nprocs) == 2)
            continue;
        if (sscanf(line, "%d %d %lld", &s, &d, &b) != 3)
            continue;
        if (*nedges == cap) {
            cap = cap ? 2 * cap : 64;
            edge_t *grown = realloc(e, sizeof *e * (size_t)cap);
            if (!grown) {
                free(e);
                fclose(f);
                return NULL;
            }
            e = grown;
        }
        e[(*nedges)++] = (edge_t){s, d, b};
    }
    fclose(f);
    return e;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, nprocs = -1, nedges = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    edge_t *e = argc > 1 ? read_pattern(argv[1], &nprocs, &nedges) : NULL;
    if (!e || nprocs != size) {
        if (rank == 0)
            fprintf(stderr, "replay: need a pattern file of %d processes\n", size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long long most = 1;
    int mine = 0;
    for (int i = 0; i < nedges; i++)
        if (e[i].src == rank || e[i].dst == rank) {
            mine++;
            most = e[i].bytes > most ? e[i].bytes : most;
        }
    char *sendbuf = calloc((size_t)most, 1), *recvbuf = malloc((size_t)most * (size_t)(mine ? mine : 1));
    MPI_Request *req = malloc(sizeof *req * (size_t)(mine ? mine : 1));
    int n = 0;
    int serial = argc > 2 && !strcmp(argv[2], "serial");
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    /* Serial: the receiver of an edge hands a 0-byte token to the sender
     * of the next one, which only then sends: no two flows overlap, and
     * the tokens carry no byte. */
    for (int i = 0; i < nedges && serial; i++) {
        int s = e[i].src, d = e[i].dst;
        if (rank == s && i > 0 && e[i - 1].dst != rank)
            MPI_Recv(NULL, 0, MPI_CHAR, e[i - 1].dst, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rank == s && d != s)
            MPI_Send(sendbuf, (int)e[i].bytes, MPI_CHAR, d, 0, MPI_COMM_WORLD);
        if (rank == d && d != s)
            MPI_Recv(recvbuf, (int)e[i].bytes, MPI_CHAR, s, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rank == d && i + 1 < nedges && e[i + 1].src != rank)
            MPI_Send(NULL, 0, MPI_CHAR, e[i + 1].src, 1, MPI_COMM_WORLD);
    }
    for (int i = 0; i < nedges && !serial; i++)
        if (e[i].dst == rank) {
            MPI_Irecv(recvbuf + (size_t)n * (size_t)most, (int)e[i].bytes, MPI_CHAR, e[i].src, 0, MPI_COMM_WORLD,
                      &req[n]);
            n++;
        }
    for (int i = 0; i < nedges && !serial; i++)
        if (e[i].src == rank) {
            MPI_Isend(sendbuf, (int)e[i].bytes, MPI_CHAR, e[i].dst, 0, MPI_COMM_WORLD, &req[n]);
            n++;
        }
    MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
    double t = MPI_Wtime() - t0, tmax;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("replay: %d processes, %d edges, %.9f s\n", size, nedges, tmax);
    free(sendbuf);
    free(recvbuf);
    free(req);
    free(e);
    MPI_Finalize();
    return 0;
}
