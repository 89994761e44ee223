/*
 * An unmodified MPI program (MPI only; dlsym for the shim's counter) that
 * calls MPI_Allgather, MPI_Bcast, MPI_Gather, MPI_Allreduce and their
 * nonblocking forms on communicators of every size from 1 to 6 and on
 * MPI_COMM_WORLD, each under several settings of the info key mpitopo_coll
 * (the algorithms and heuristics of issue 19, forced), and checks every
 * received element on every process against values computed in closed form
 * (allreduce with a non-commutative user operation: against the operands
 * combined in rank order by the program itself).
 *
 *   shim_coll_c routed|passed [quick]
 *
 * quick (for MPICH, which is slow oversubscribed): counts 1 and 300 and the
 * first three settings only.
 *
 * Covered per communicator and setting: counts 0, 1, 7 and 300 ints (300:
 * blocks above the 1 KiB switch to ring), roots 0 and size-1, MPI_IN_PLACE
 * (allgather, gather at the root, allreduce), a send type of three ints
 * against three MPI_INTs received (different type signatures of the same
 * data), MPI_SUM on ints and doubles, MPI_MAX, a user operation that is not
 * commutative; nonblocking calls completed by MPI_Wait, an MPI_Test loop or
 * one MPI_Waitall with two requests of the program's own.
 *
 * Must stay MPI's own in every mode: an allgather and an allreduce on an
 * intercommunicator, and MPI_Allreduce on a communicator whose info says
 * allreduce=mpi. routed: the shim's counter (mpitopo_shim_coll_calls)
 * must equal the number of other calls exactly; passed: it stays 0 (or the
 * shim is not loaded). Prints "PASS shim_coll" on rank 0; every failure
 * prints a "FAIL shim_coll" line and rank 0 exits 1.
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <mpi.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXCOUNT 300
#define MAXP 16
#define P 1000003 /* the user operation works modulo this prime */

static int failures, world_rank;
static long expected_routed;
static int routed_mode, quick;

static const char *setting_name;
static const char *comm_name;

static void fail(const char *op, int count, const char *fmt, long got, long want)
{
    if (failures++ < 20) {
        printf("FAIL shim_coll: rank %d, %s on %s (mpitopo_coll=%s), count %d: ", world_rank, op,
               comm_name, setting_name, count);
        printf(fmt, got, want);
        printf("\n");
    }
}

static int val(int rank, int k, int salt) { return rank * 10007 + k * 13 + salt; }

/* The user operation: composition of affine maps x -> a x + b (mod P),
 * pairs of ints; (f o g)(x) = f(g(x)), not commutative. MPI computes
 * inout = in op inout, the operands in rank order. */
static void compose(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    long *f = in, *g = inout;
    for (int i = 0; i < *len; i++) {
        long a = f[2 * i] * g[2 * i] % P, b = (f[2 * i] * g[2 * i + 1] + f[2 * i + 1]) % P;
        g[2 * i] = a, g[2 * i + 1] = b;
    }
}

static void affine(int rank, int k, long *ab)
{
    ab[0] = 2 + (rank * 7 + k) % 97, ab[1] = 1 + (rank * 3 + k * 5) % 89;
}

static MPI_Op compose_op;
static MPI_Datatype pair_type, three_ints;

/* A routed call: counted when the program expects routing. */
static void routed(void) { expected_routed++; }

/* Complete req in one of three ways (rotating). */
static void complete(MPI_Request *req, int how)
{
    if (how % 3 == 0) {
        MPI_Wait(req, MPI_STATUS_IGNORE);
    } else if (how % 3 == 1) {
        int flag = 0;
        while (!flag)
            MPI_Test(req, &flag, MPI_STATUS_IGNORE);
    } else {
        /* With a message of the program's own to itself. */
        MPI_Request r[3] = {*req, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        int out = 1, in = 0;
        MPI_Irecv(&in, 1, MPI_INT, 0, 77, MPI_COMM_SELF, &r[1]);
        MPI_Isend(&out, 1, MPI_INT, 0, 77, MPI_COMM_SELF, &r[2]);
        MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
        *req = r[0];
        if (in != 1)
            fail("waitall", 0, "own message %ld, expected %ld", in, 1);
    }
    if (*req != MPI_REQUEST_NULL)
        fail("completion", 0, "request not MPI_REQUEST_NULL (%ld, %ld)", 1, 0);
}

static int buf_i[MAXP * MAXCOUNT * 2 + 8], send_i[MAXCOUNT * 2 + 8];

static void test_allgather(MPI_Comm c, int n, int count, int form, int salt)
{
    int rank;
    MPI_Comm_rank(c, &rank);
    const char *op = form == 0 ? "MPI_Allgather" : form == 1 ? "MPI_Iallgather" : "in-place";
    for (int i = 0; i < n * count + 2; i++)
        buf_i[i] = -1;
    for (int k = 0; k < count; k++)
        send_i[k] = val(rank, k, salt);
    int three = count % 3 == 0 && count > 0; /* send as count/3 of three_ints */
    MPI_Request req = MPI_REQUEST_NULL;
    if (form == 2) {
        for (int k = 0; k < count; k++)
            buf_i[rank * count + k] = val(rank, k, salt);
        MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf_i, count, MPI_INT, c);
    } else if (form == 0) {
        MPI_Allgather(send_i, three ? count / 3 : count, three ? three_ints : MPI_INT, buf_i,
                      count, MPI_INT, c);
    } else {
        MPI_Iallgather(send_i, count, MPI_INT, buf_i, count, MPI_INT, c, &req);
        complete(&req, salt);
    }
    routed();
    for (int r = 0; r < n; r++)
        for (int k = 0; k < count; k++)
            if (buf_i[r * count + k] != val(r, k, salt))
                fail(op, count, "got %ld, expected %ld", buf_i[r * count + k], val(r, k, salt));
    if (buf_i[n * count] != -1)
        fail(op, count, "wrote past the end: %ld (expected %ld)", buf_i[n * count], -1);
}

static void test_bcast(MPI_Comm c, int n, int count, int root, int form, int salt)
{
    int rank;
    MPI_Comm_rank(c, &rank);
    const char *op = form ? "MPI_Ibcast" : "MPI_Bcast";
    for (int k = 0; k < count + 1; k++)
        buf_i[k] = rank == root && k < count ? val(root, k, salt) : -1;
    MPI_Request req = MPI_REQUEST_NULL;
    if (form) {
        MPI_Ibcast(buf_i, count, MPI_INT, root, c, &req);
        complete(&req, salt + 1);
    } else {
        MPI_Bcast(buf_i, count, MPI_INT, root, c);
    }
    routed();
    for (int k = 0; k < count; k++)
        if (buf_i[k] != val(root, k, salt))
            fail(op, count, "got %ld, expected %ld", buf_i[k], val(root, k, salt));
    if (buf_i[count] != -1)
        fail(op, count, "wrote past the end: %ld (expected %ld)", buf_i[count], -1);
    (void)n;
}

static void test_gather(MPI_Comm c, int n, int count, int root, int form, int salt)
{
    int rank;
    MPI_Comm_rank(c, &rank);
    const char *op = form == 0 ? "MPI_Gather" : form == 1 ? "MPI_Igather" : "in-place gather";
    for (int i = 0; i < n * count + 2; i++)
        buf_i[i] = -1;
    for (int k = 0; k < count; k++)
        send_i[k] = val(rank, k, salt);
    MPI_Request req = MPI_REQUEST_NULL;
    if (form == 2) {
        if (rank == root) {
            for (int k = 0; k < count; k++)
                buf_i[rank * count + k] = val(rank, k, salt);
            MPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf_i, count, MPI_INT, root, c);
        } else {
            MPI_Gather(send_i, count, MPI_INT, NULL, 0, MPI_DATATYPE_NULL, root, c);
        }
    } else if (form == 0) {
        MPI_Gather(send_i, count, MPI_INT, buf_i, count, MPI_INT, root, c);
    } else {
        MPI_Igather(send_i, count, MPI_INT, buf_i, count, MPI_INT, root, c, &req);
        complete(&req, salt + 2);
    }
    routed();
    if (rank != root) {
        if (buf_i[0] != -1)
            fail(op, count, "a process that is not the root received %ld (expected %ld)",
                 buf_i[0], -1);
        return;
    }
    for (int r = 0; r < n; r++)
        for (int k = 0; k < count; k++)
            if (buf_i[r * count + k] != val(r, k, salt))
                fail(op, count, "got %ld, expected %ld", buf_i[r * count + k], val(r, k, salt));
}

static void test_allreduce(MPI_Comm c, int n, int count, int form, int salt)
{
    int rank;
    MPI_Comm_rank(c, &rank);
    const char *op = form == 0 ? "MPI_Allreduce" : form == 1 ? "MPI_Iallreduce" : "in-place";
    static double d[MAXCOUNT + 1], dsum[MAXCOUNT + 1];
    static long ab[2 * MAXCOUNT], res[2 * MAXCOUNT], want[2];
    int imax[MAXCOUNT + 1];
    MPI_Request req = MPI_REQUEST_NULL;
    /* MPI_SUM on ints (blocking, nonblocking or in place). */
    for (int k = 0; k < count; k++)
        send_i[k] = val(rank, k, salt), buf_i[k] = form == 2 ? send_i[k] : -1;
    if (form == 2)
        MPI_Allreduce(MPI_IN_PLACE, buf_i, count, MPI_INT, MPI_SUM, c);
    else if (form == 0)
        MPI_Allreduce(send_i, buf_i, count, MPI_INT, MPI_SUM, c);
    else {
        MPI_Iallreduce(send_i, buf_i, count, MPI_INT, MPI_SUM, c, &req);
        complete(&req, salt);
    }
    routed();
    for (int k = 0; k < count; k++) {
        long want_sum = 10007L * n * (n - 1) / 2 + (long)n * (k * 13 + salt);
        if (buf_i[k] != want_sum)
            fail(op, count, "MPI_SUM got %ld, expected %ld", buf_i[k], want_sum);
    }
    if (form != 0)
        return;
    /* MPI_SUM on doubles (exact: small integers), MPI_MAX on ints. */
    for (int k = 0; k < count; k++)
        d[k] = 0.5 * val(rank, k, salt);
    MPI_Allreduce(d, dsum, count, MPI_DOUBLE, MPI_SUM, c);
    routed();
    MPI_Allreduce(send_i, imax, count, MPI_INT, MPI_MAX, c);
    routed();
    for (int k = 0; k < count; k++) {
        double want_d = 0.5 * (10007.0 * n * (n - 1) / 2 + (double)n * (k * 13 + salt));
        if (dsum[k] != want_d)
            fail(op, count, "MPI_SUM on doubles got %ld, expected %ld", (long)dsum[k],
                 (long)want_d);
        if (imax[k] != val(n - 1, k, salt))
            fail(op, count, "MPI_MAX got %ld, expected %ld", imax[k], val(n - 1, k, salt));
    }
    /* The non-commutative user operation, in rank order. */
    for (int k = 0; k < count; k++)
        affine(rank, k + salt, &ab[2 * k]);
    MPI_Allreduce(ab, res, count, pair_type, compose_op, c);
    routed();
    for (int k = 0; k < count; k++) {
        affine(n - 1, k + salt, want);
        for (int r = n - 2; r >= 0; r--) {
            long f[2];
            int one = 1;
            affine(r, k + salt, f);
            compose(f, want, &one, NULL);
        }
        if (res[2 * k] != want[0] || res[2 * k + 1] != want[1])
            fail("MPI_Allreduce (user op, not commutative)", count, "got a = %ld, expected %ld",
                 res[2 * k], want[0]);
    }
}

/* Every operation, form, count and root on c. */
static void run_all(MPI_Comm c, int salt)
{
    static const int counts[] = {0, 1, 7, 300};
    int n;
    MPI_Comm_size(c, &n);
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        int count = counts[i];
        if (quick && (count == 0 || count == 7))
            continue;
        for (int form = 0; form < 3; form++) {
            test_allgather(c, n, count, form, salt + form);
            test_gather(c, n, count, form == 2 ? n - 1 : form ? 0 : n / 2, form, salt + form);
            test_allreduce(c, n, count, form, salt + form);
        }
        test_bcast(c, n, count, 0, 0, salt);
        test_bcast(c, n, count, n - 1, 1, salt + 1);
    }
}

/* The cases MPI must keep: an intercommunicator (world split in halves),
 * and allreduce=mpi on a communicator. Not counted as routed. */
static void passed_cases(int wsize)
{
    MPI_Comm half, inter;
    int low = world_rank < wsize / 2;
    MPI_Comm_split(MPI_COMM_WORLD, low, world_rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, low ? wsize / 2 : 0, 5, &inter);
    int rsize, mine = val(world_rank, 0, 3), got[MAXP];
    MPI_Comm_remote_size(inter, &rsize);
    comm_name = "an intercommunicator", setting_name = "(environment)";
    MPI_Allgather(&mine, 1, MPI_INT, got, 1, MPI_INT, inter);
    int first_remote = low ? wsize / 2 : 0;
    for (int r = 0; r < rsize; r++)
        if (got[r] != val(first_remote + r, 0, 3))
            fail("MPI_Allgather", 1, "got %ld, expected %ld", got[r], val(first_remote + r, 0, 3));
    int sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, inter);
    long want = 0;
    for (int r = 0; r < rsize; r++)
        want += val(first_remote + r, 0, 3);
    if (sum != want)
        fail("MPI_Allreduce", 1, "got %ld, expected %ld", sum, want);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);

    MPI_Info info;
    MPI_Comm c;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpitopo_coll", "allreduce=mpi");
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &c);
    MPI_Info_free(&info);
    comm_name = "a world duplicate", setting_name = "allreduce=mpi";
    mine = world_rank + 1;
    MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, c);
    if (sum != wsize * (wsize + 1) / 2)
        fail("MPI_Allreduce", 1, "got %ld, expected %ld", sum, wsize * (wsize + 1) / 2);
    MPI_Comm_free(&c);
}

static long shim_coll_calls(void)
{
    long (*f)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "mpitopo_shim_coll_calls");
    return f ? f() : 0;
}

int main(int argc, char **argv)
{
    /* NULL: only the environment (MPITOPO_COLL); the others as info. */
    static const char *const settings[] = {
        NULL,
        "allgather=rd:rdmh,bcast=binomial:bbmh,gather=binomial:bgmh,allreduce=rd:rdmh",
        "allgather=ring:rmh",
        "allgather=bruck:none,bcast=binomial:none,gather=binomial:none,allreduce=rd:none",
        "allgather=hier,order=endshfl",
        "allgather=hierb:auto",
        "allgather=rd:rdmh:endshfl,gather=binomial:bgmh:endshfl",
    };
    MPI_Init(&argc, &argv);
    int wsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    routed_mode = argc > 1 && strcmp(argv[1], "routed") == 0;
    quick = argc > 2 && strcmp(argv[2], "quick") == 0;
    if (wsize > MAXP) {
        if (world_rank == 0)
            printf("FAIL shim_coll: at most %d processes\n", MAXP);
        MPI_Finalize();
        return 1;
    }
    MPI_Op_create(compose, 0, &compose_op);
    MPI_Type_contiguous(2, MPI_LONG, &pair_type);
    MPI_Type_commit(&pair_type);
    MPI_Type_contiguous(3, MPI_INT, &three_ints);
    MPI_Type_commit(&three_ints);

    /* Groups of sizes 1, 2, 3, ...: every size up to the one that no
     * longer fits (the last group takes the rest). */
    int color = 0, first = 0;
    while (first + color + 1 <= world_rank)
        first += ++color;
    MPI_Comm group;
    MPI_Comm_split(MPI_COMM_WORLD, color, world_rank, &group);
    int gsize;
    MPI_Comm_size(group, &gsize);
    char gname[64];
    snprintf(gname, sizeof gname, "a group of %d", gsize);

    size_t nsettings = quick ? 3 : sizeof settings / sizeof settings[0];
    for (size_t s = 0; s < nsettings; s++) {
        setting_name = settings[s] ? settings[s] : "(environment)";
        MPI_Comm bases[2] = {MPI_COMM_WORLD, group};
        const char *names[2] = {"MPI_COMM_WORLD", gname};
        for (int b = 0; b < 2; b++) {
            MPI_Comm c;
            if (settings[s]) {
                MPI_Info info;
                MPI_Info_create(&info);
                MPI_Info_set(info, "mpitopo_coll", settings[s]);
                MPI_Comm_dup_with_info(bases[b], info, &c);
                MPI_Info_free(&info);
            } else {
                MPI_Comm_dup(bases[b], &c);
            }
            comm_name = names[b];
            run_all(c, (int)s * 3 + b);
            MPI_Comm_free(&c);
        }
    }
    MPI_Comm_free(&group);
    passed_cases(wsize);

    long calls = shim_coll_calls(), want = routed_mode ? expected_routed : 0;
    comm_name = "the process", setting_name = "-";
    if (calls != want)
        fail("the shim's counter", 0, "%ld calls routed, expected %ld", calls, want);
    int total = 0;
    MPI_Reduce(&failures, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (world_rank == 0 && total == 0)
        printf("PASS shim_coll %s (%d processes, %ld calls checked per process)\n",
               routed_mode ? "routed" : "passed", wsize, expected_routed);
    else if (world_rank == 0)
        printf("FAIL shim_coll: %d failures in all\n", total);
    MPI_Type_free(&pair_type);
    MPI_Type_free(&three_ints);
    MPI_Op_free(&compose_op);
    MPI_Finalize();
    return world_rank == 0 && total ? 1 : 0;
}
