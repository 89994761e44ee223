/*
 * mapnet_replay: the communication of bench/mapnet's patterns, for SMPI
 * (issue 17, part 4). Ranks are the points of a periodic Cartesian grid in
 * row-major order (last coordinate fastest, as MPI_Cart_create with
 * reorder = 0 and mpitopo's cart: patterns number them), so a hostfile
 * that puts rank i on the host of a mapper's placement of process i runs
 * the mapping under test. Kinds:
 *
 *   halo5   2-D grid, the 4 face neighbours
 *   halo15  3-D grid, 6 faces and 8 corners
 *   a2a     MPI_Cart_sub(REMAIN) of the grid, MPI_Alltoall in each part
 *
 * Halos: MPI_Irecv from every neighbour, MPI_Isend to every neighbour,
 * MPI_Waitall; the message to offset o has SIZE times the product of the
 * weights of o's non-zero dimensions (the byte weights of mpitopo's
 * "cart:DIMS:weights=W,.." pattern). All-to-all: SIZE bytes per member.
 * One warm-up exchange, then ITERS timed ones; rank 0 prints, per size, the
 * largest over ranks of the average time of an exchange (µs).
 *
 *   mapnet_replay -k halo5|halo15|a2a -g AxB[xC] [-w W,W[,W]] [-R R,R[,R]]
 *                 [-L SIZE,SIZE..] [-i ITERS]
 *
 * (needs only MPI; built by bench/smpi/mapnet_smpi.sh with smpicc)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Under SMPI the buffers of every simulated rank share one allocation:
 * their content does not matter, their number would not fit. */
#ifdef SMPI_SHARED_MALLOC
#define BUF_MALLOC(n) SMPI_SHARED_MALLOC(n)
#define BUF_FREE(p) SMPI_SHARED_FREE(p)
#else
#define BUF_MALLOC(n) malloc(n)
#define BUF_FREE(p) free(p)
#endif

#define MAXD 3
#define MAXN 32
#define MAXS 16

static int parse_ints(const char *s, char sep, int *out, int max)
{
    int n = 0;
    while (*s && n < max) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 0)
            return -1;
        out[n++] = (int)v;
        s = *end == sep ? end + 1 : end;
        if (*end && *end != sep)
            return -1;
    }
    return *s ? -1 : n;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np, c;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const char *kind = "halo5";
    int dims[MAXD] = {0}, nd = 0, w[MAXD] = {1, 1, 1}, remain[MAXD] = {0}, nr = 0, iters = 4, nsizes = 0;
    int sizes[MAXS];
    while ((c = getopt(argc, argv, "k:g:w:R:L:i:")) != -1) {
        int bad = 0;
        switch (c) {
        case 'k': kind = optarg; break;
        case 'g': bad = (nd = parse_ints(optarg, 'x', dims, MAXD)) < 2; break;
        case 'w': bad = parse_ints(optarg, ',', w, MAXD) < 1; break;
        case 'R': bad = (nr = parse_ints(optarg, ',', remain, MAXD)) < 1; break;
        case 'L': bad = (nsizes = parse_ints(optarg, ',', sizes, MAXS)) < 1; break;
        case 'i': bad = (iters = atoi(optarg)) < 1; break;
        default: bad = 1;
        }
        if (bad) {
            if (rank == 0)
                fprintf(stderr, "mapnet_replay: bad option -%c\n", c);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    long prod = 1;
    for (int d = 0; d < nd; d++)
        prod *= dims[d];
    int is_a2a = !strcmp(kind, "a2a"), is15 = !strcmp(kind, "halo15");
    if (nd == 0 || prod != np || nsizes == 0 || (is_a2a && nr != nd) || (is15 && nd != 3) ||
        (!is_a2a && !is15 && (strcmp(kind, "halo5") || nd != 2))) {
        if (rank == 0)
            fprintf(stderr, "mapnet_replay: -k halo5 (2-D) | halo15 (3-D) | a2a -R; -g must multiply to %d; -L\n", np);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    /* Neighbours of a halo and their message factors. */
    int offs[MAXN][MAXD] = {{0}}, noff = 0, peer[MAXN], opp[MAXN], factor[MAXN], coord[MAXD];
    for (int d = nd - 1, r = rank; d >= 0; d--) {
        coord[d] = r % dims[d];
        r /= dims[d];
    }
    if (!is_a2a) {
        for (int d = 0; d < nd; d++)
            for (int s = -1; s <= 1; s += 2) {
                memset(offs[noff], 0, sizeof offs[noff]);
                offs[noff++][d] = s;
            }
        if (is15)
            for (int k = 0; k < 8; k++)
                for (int d = 0; d < 3; d++)
                    offs[noff + k][d] = (k >> (2 - d)) & 1 ? -1 : 1;
        noff += is15 ? 8 : 0;
        for (int o = 0; o < noff; o++) {
            int r = 0;
            factor[o] = 1;
            for (int d = 0; d < nd; d++) {
                r = r * dims[d] + ((coord[d] + offs[o][d]) % dims[d] + dims[d]) % dims[d];
                if (offs[o][d])
                    factor[o] *= w[d];
            }
            peer[o] = r;
        }
        for (int o = 0; o < noff; o++)
            for (int q = 0; q < noff; q++)
                if (offs[q][0] == -offs[o][0] && offs[q][1] == -offs[o][1] && offs[q][2] == -offs[o][2])
                    opp[o] = q;
    }
    MPI_Comm sub = MPI_COMM_NULL;
    if (is_a2a) {
        MPI_Comm cart;
        int periods[MAXD] = {1, 1, 1};
        MPI_Cart_create(MPI_COMM_WORLD, nd, dims, periods, 0, &cart);
        MPI_Cart_sub(cart, remain, &sub);
        MPI_Comm_free(&cart);
    }
    int subsize = 1;
    if (sub != MPI_COMM_NULL)
        MPI_Comm_size(sub, &subsize);

    if (rank == 0)
        printf("# mapnet_replay -k %s, %d ranks%s\n# bytes   us_per_exchange\n", kind, np,
               is_a2a ? " (MPI_Alltoall in each sub-communicator)" : "");
    for (int s = 0; s < nsizes; s++) {
        size_t most = (size_t)sizes[s] * (is_a2a ? (size_t)subsize : (size_t)(w[0] * w[1] * (nd > 2 ? w[2] : 1)));
        size_t total = is_a2a ? most : most * (size_t)noff;
        char *sbuf = BUF_MALLOC(total), *rbuf = BUF_MALLOC(total);
        MPI_Request req[2 * MAXN];
        double t = 0;
        for (int it = 0; it <= iters; it++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            if (is_a2a) {
                MPI_Alltoall(sbuf, sizes[s], MPI_BYTE, rbuf, sizes[s], MPI_BYTE, sub);
            } else {
                for (int o = 0; o < noff; o++)
                    MPI_Irecv(rbuf + o * most, sizes[s] * factor[o], MPI_BYTE, peer[opp[o]], o, MPI_COMM_WORLD,
                              &req[o]);
                for (int o = 0; o < noff; o++)
                    MPI_Isend(sbuf + o * most, sizes[s] * factor[o], MPI_BYTE, peer[o], o, MPI_COMM_WORLD,
                              &req[noff + o]);
                MPI_Waitall(2 * noff, req, MPI_STATUSES_IGNORE);
            }
            if (it > 0)
                t += MPI_Wtime() - t0;
        }
        double avg = t / iters, worst = 0;
        MPI_Reduce(&avg, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0)
            printf("%d %.2f\n", sizes[s], worst * 1e6);
        BUF_FREE(sbuf);
        BUF_FREE(rbuf);
    }
    if (sub != MPI_COMM_NULL)
        MPI_Comm_free(&sub);
    MPI_Finalize();
    return 0;
}
