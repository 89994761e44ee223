/*
 * A plain MPI program (no mpitopo) with a fixed communication pattern, run
 * with libmpitopo_trace preloaded: the written trace must equal
 * expected_8.txt exactly (for 8 processes). Every process r sends, with
 * offsets modulo the size n (n >= 8 keeps the offsets distinct):
 *
 *   to r+1: MPI_Send 10 MPI_INT (40 B), MPI_Ssend 3 MPI_DOUBLE (24 B),
 *           MPI_Sendrecv_replace 2 MPI_INT (8 B)            72 B, 3 messages
 *   to r+2: MPI_Bsend 2 x (contiguous 5 MPI_SHORT) (20 B), a persistent
 *           MPI_Send_init of 6 MPI_FLOAT started 3 times with MPI_Start and
 *           once with MPI_Startall (4 x 24 B), after its MPI_Request_free
 *           one MPI_Send of 1 MPI_INT (4 B) while a persistent receive
 *           (which may reuse the handle) is started     120 B, 6 messages
 *   to r+3: MPI_Rsend 7 MPI_CHAR, MPI_Irsend 1 MPI_CHAR, and on a
 *           duplicate of MPI_COMM_WORLD MPI_Ibsend 1 MPI_DOUBLE
 *                                                        16 B, 3 messages
 *   to r+4: MPI_Isend 100 MPI_BYTE, MPI_Isend 3 MPI_INT on the duplicate
 *                                                       112 B, 2 messages
 *   to r-1: MPI_Sendrecv 4 MPI_INT64_T (32 B), a persistent MPI_Ssend_init
 *           of 1 MPI_INT started once (4 B)               36 B, 2 messages
 *   to r-2: MPI_Issend 5 MPI_DOUBLE to the next rank of a communicator
 *           split by parity in reverse order (its rank l+1 is world r-2)
 *                                                         40 B, 1 message
 * and MPI_Send, MPI_Isend, MPI_Send_init + MPI_Start and MPI_Sendrecv to
 * MPI_PROC_NULL, which must not appear. Prints "PASS trace_prog" on rank 0
 * when the received data were right.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int n, r, errors;

static int at(int off)
{
    return ((r + off) % n + n) % n;
}

static void expect(int cond, const char *what)
{
    if (!cond) {
        fprintf(stderr, "FAIL trace_prog rank %d: %s\n", r, what);
        errors++;
    }
}

/* Blocking sends around the ring: even ranks send first, odd ranks receive
 * first, so synchronous sends cannot deadlock. */
static void ring_blocking(void)
{
    int ints[10] = {0}, in[10];
    double d[3] = {1, 2, 3}, din[3];
    for (int i = 0; i < 10; i++)
        ints[i] = r * 100 + i;
    for (int phase = 0; phase < 2; phase++) {
        if ((phase == 0) == (r % 2 == 0)) {
            MPI_Send(ints, 10, MPI_INT, at(1), 1, MPI_COMM_WORLD);
            MPI_Ssend(d, 3, MPI_DOUBLE, at(1), 2, MPI_COMM_WORLD);
        } else {
            MPI_Recv(in, 10, MPI_INT, at(-1), 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Recv(din, 3, MPI_DOUBLE, at(-1), 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    expect(in[9] == at(-1) * 100 + 9 && din[2] == 3, "ring data");
    int pair[2] = {r, -r};
    MPI_Sendrecv_replace(pair, 2, MPI_INT, at(1), 3, at(-1), 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    expect(pair[0] == at(-1), "sendrecv_replace data");
    int64_t l[4] = {r, r, r, r}, lin[4];
    MPI_Sendrecv(l, 4, MPI_INT64_T, at(-1), 4, lin, 4, MPI_INT64_T, at(1), 4, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    expect(lin[3] == at(1), "sendrecv data");
}

static void buffered(MPI_Comm dup)
{
    MPI_Datatype five;
    short s[10] = {0}, sin[10];
    double x = r, xin = -1;
    int size = 1 << 16;
    char *buf = malloc((size_t)size);
    MPI_Buffer_attach(buf, size);
    MPI_Type_contiguous(5, MPI_SHORT, &five);
    MPI_Type_commit(&five);
    s[9] = (short)r;
    MPI_Request rq[2];
    MPI_Irecv(sin, 10, MPI_SHORT, at(-2), 5, MPI_COMM_WORLD, &rq[0]);
    MPI_Irecv(&xin, 1, MPI_DOUBLE, at(-3), 6, dup, &rq[1]);
    MPI_Bsend(s, 2, five, at(2), 5, MPI_COMM_WORLD);
    MPI_Request ib;
    MPI_Ibsend(&x, 1, MPI_DOUBLE, at(3), 6, dup, &ib);
    MPI_Wait(&ib, MPI_STATUS_IGNORE);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    expect(sin[9] == at(-2) && xin == at(-3), "buffered data");
    MPI_Type_free(&five);
    MPI_Buffer_detach(&buf, &size);
    free(buf);
}

/* Ready sends need the receive posted first: post, barrier, send. */
static void ready(void)
{
    char c[7] = "abcdef", cin[7], one = 'z', onein = 0;
    MPI_Request rq[3];
    MPI_Irecv(cin, 7, MPI_CHAR, at(-3), 7, MPI_COMM_WORLD, &rq[0]);
    MPI_Irecv(&onein, 1, MPI_CHAR, at(-3), 8, MPI_COMM_WORLD, &rq[1]);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Rsend(c, 7, MPI_CHAR, at(3), 7, MPI_COMM_WORLD);
    MPI_Irsend(&one, 1, MPI_CHAR, at(3), 8, MPI_COMM_WORLD, &rq[2]);
    MPI_Waitall(3, rq, MPI_STATUSES_IGNORE);
    expect(cin[5] == 'f' && onein == 'z', "ready data");
}

static void nonblocking(MPI_Comm dup)
{
    unsigned char b[100], bin[100];
    int three[3] = {r, r, r}, tin[3];
    for (int i = 0; i < 100; i++)
        b[i] = (unsigned char)(r + i);
    MPI_Request rq[4];
    MPI_Irecv(bin, 100, MPI_BYTE, at(-4), 9, MPI_COMM_WORLD, &rq[0]);
    MPI_Irecv(tin, 3, MPI_INT, at(-4), 10, dup, &rq[1]);
    MPI_Isend(b, 100, MPI_BYTE, at(4), 9, MPI_COMM_WORLD, &rq[2]);
    MPI_Isend(three, 3, MPI_INT, at(4), 10, dup, &rq[3]);
    MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
    expect(bin[99] == (unsigned char)(at(-4) + 99) && tin[2] == at(-4), "nonblocking data");
}

static void persistent(void)
{
    float f[6] = {0}, fin[6];
    MPI_Request rq[2];
    MPI_Send_init(f, 6, MPI_FLOAT, at(2), 11, MPI_COMM_WORLD, &rq[0]);
    MPI_Recv_init(fin, 6, MPI_FLOAT, at(-2), 11, MPI_COMM_WORLD, &rq[1]);
    for (int i = 0; i < 3; i++) {
        f[5] = (float)(r + i);
        MPI_Start(&rq[1]);
        MPI_Start(&rq[0]);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        expect(fin[5] == (float)(at(-2) + i), "persistent data");
    }
    MPI_Startall(2, rq);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    MPI_Request_free(&rq[0]);
    MPI_Request_free(&rq[1]);

    /* A freed send request is forgotten: a new persistent receive, which
     * MPI may give the same handle, does not count when started. */
    int v = r, vin = -1;
    MPI_Request recv;
    MPI_Recv_init(&vin, 1, MPI_INT, at(-2), 12, MPI_COMM_WORLD, &recv);
    MPI_Start(&recv);
    MPI_Send(&v, 1, MPI_INT, at(2), 12, MPI_COMM_WORLD);
    MPI_Wait(&recv, MPI_STATUS_IGNORE);
    MPI_Request_free(&recv);
    expect(vin == at(-2), "receive after free");

    MPI_Request ss, sr;
    MPI_Irecv(&vin, 1, MPI_INT, at(1), 13, MPI_COMM_WORLD, &sr);
    MPI_Ssend_init(&v, 1, MPI_INT, at(-1), 13, MPI_COMM_WORLD, &ss);
    MPI_Start(&ss);
    MPI_Wait(&ss, MPI_STATUS_IGNORE);
    MPI_Wait(&sr, MPI_STATUS_IGNORE);
    MPI_Request_free(&ss);
    expect(vin == at(1), "ssend_init data");
}

static void split_reversed(void)
{
    MPI_Comm half;
    int l, hn;
    double d[5] = {0, 0, 0, 0, r}, din[5];
    MPI_Comm_split(MPI_COMM_WORLD, r % 2, -r, &half);
    MPI_Comm_rank(half, &l);
    MPI_Comm_size(half, &hn);
    MPI_Request rq;
    MPI_Issend(d, 5, MPI_DOUBLE, (l + 1) % hn, 14, half, &rq);
    MPI_Recv(din, 5, MPI_DOUBLE, (l - 1 + hn) % hn, 14, half, MPI_STATUS_IGNORE);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    expect(din[4] == at(2), "split data");
    MPI_Comm_free(&half);
}

static void proc_null(void)
{
    int v = 0;
    MPI_Request rq;
    MPI_Send(&v, 1, MPI_INT, MPI_PROC_NULL, 15, MPI_COMM_WORLD);
    MPI_Isend(&v, 1, MPI_INT, MPI_PROC_NULL, 15, MPI_COMM_WORLD, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MPI_Send_init(&v, 1, MPI_INT, MPI_PROC_NULL, 15, MPI_COMM_WORLD, &rq);
    MPI_Start(&rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MPI_Request_free(&rq);
    MPI_Sendrecv(&v, 1, MPI_INT, MPI_PROC_NULL, 15, &v, 1, MPI_INT, MPI_PROC_NULL, 15,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    if (n < 8 || n % 2) {
        if (r == 0)
            printf("FAIL trace_prog: needs an even number of processes >= 8, not %d\n", n);
        MPI_Finalize();
        return 1;
    }
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    ring_blocking();
    buffered(dup);
    ready();
    nonblocking(dup);
    persistent();
    split_reversed();
    proc_null();
    MPI_Comm_free(&dup);
    int all = 0;
    MPI_Allreduce(&errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (r == 0)
        printf("%s trace_prog\n", all ? "FAIL" : "PASS");
    MPI_Finalize();
    return all != 0;
}
