/*
 * The global collectives of mpitopo (mpitopo_allgather, _bcast, _gather,
 * _allreduce and their nonblocking forms) against the MPI library's own
 * MPI_Allgather, MPI_Bcast, MPI_Gather and MPI_Allreduce (PMPI_* under the
 * test-only yield layer of MPICH builds), byte for
 * byte, for every algorithm, heuristic (none, rdmh, rmh, bbmh, bgmh, auto)
 * and output order (initcomm, endshfl), on sub-communicators of every size
 * 1..N split from the world (and the world itself), every root, with
 * MPI_IN_PLACE, a non-contiguous vector datatype, zero counts and a
 * non-commutative user operation (2x2 matrix product). Receive buffers
 * start filled with a sentinel, so a write to a gap or a wrong block shows.
 * Under an emulated cyclic layout (MT_EXPECT_REORDER=1) the ring and
 * recursive-doubling allgathers of the world must run on a reordered
 * communicator. Also: bad arguments and a bad configuration give
 * MPITOPO_ERR_ARG on every process, and the first nonblocking call on a
 * communicator does not wait for the other processes.
 *
 * MT_COLL_SHARE=R (default 3): the sub-communicators smaller than the world
 * share the configurations out R ways (the world and one more run all);
 * MT_COLL_SIZES=few (large worlds): R = world size / 2, the world and the
 * odd ranks run half of the configurations each, and not every root.
 */
#include "mpitest.h"

#include "coll/global/gcoll.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SENT (-7)

static int wrank, wsize;
static MPI_Datatype vec; /* 2 ints with a gap: extent 3 ints */
static MPI_Op matop;

static int set_conf(MPI_Comm comm, const char *conf)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpitopo_coll", conf);
    int rc = mpitopo_comm_set_info(comm, info);
    MPI_Info_free(&info);
    return rc;
}

static int value(int rank, int e)
{
    return rank * 1000 + e + 1;
}

/* 2x2 matrices of unsigned ints (wrapping arithmetic: associative, not
 * commutative): inout = in x inout. */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    unsigned *a = in, *b = inout;
    for (int i = 0; i < *len; i++, a += 4, b += 4) {
        unsigned c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                         a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
        memcpy(b, c, sizeof c);
    }
}

static void fill(int *b, int n, int v)
{
    for (int i = 0; i < n; i++)
        b[i] = v;
}

/* Complete a nonblocking call by testing and yielding the core (MPICH
 * busy-polls in blocking waits, which starves 16 processes on 2 cores). */
static int wait_or(int rc, mpitopo_request_t *r, int nb)
{
    if (rc != MPITOPO_SUCCESS || !nb)
        return rc;
    int flag = 0;
    while ((rc = mpitopo_test(r, &flag)) == MPITOPO_SUCCESS && !flag)
        sched_yield();
    return rc;
}

/* Whether a test runs its extra variants (in place, vector, zero) too. */
static int extras;

/* Allgather: ints, in place, vector; blocking or not. */
static void t_allgather(MPI_Comm comm, const char *conf, int nb)
{
    int p, r;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &r);
    enum { C = 3 };
    int *got = malloc(sizeof(int) * (size_t)(3 * C * p + 8)), *want = malloc(sizeof(int) * (size_t)(3 * C * p + 8));
    int send[3 * C];
    for (int e = 0; e < 3 * C; e++)
        send[e] = value(r, e);
    mpitopo_request_t req = MPITOPO_REQUEST_NULL;
    /* 1: C ints. */
    fill(got, C * p, SENT);
    fill(want, C * p, SENT);
    MPI_Allgather(send, C, MPI_INT, want, C, MPI_INT, comm);
    int rc = nb ? mpitopo_iallgather(send, C, MPI_INT, got, C, MPI_INT, comm, &req)
                : mpitopo_allgather(send, C, MPI_INT, got, C, MPI_INT, comm);
    rc = wait_or(rc, &req, nb);
    MT_CHECK(rc == MPITOPO_SUCCESS, "allgather [%s] p=%d: rc %d %s", conf, p, rc, mpitopo_last_error());
    MT_CHECK(memcmp(got, want, sizeof(int) * (size_t)(C * p)) == 0, "allgather [%s] p=%d: wrong data", conf, p);
    if (!extras) {
        free(got);
        free(want);
        return;
    }
    /* 2: in place. */
    fill(got, C * p, SENT);
    for (int e = 0; e < C; e++)
        got[r * C + e] = value(r, e);
    rc = nb ? mpitopo_iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, got, C, MPI_INT, comm, &req)
            : mpitopo_allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, got, C, MPI_INT, comm);
    rc = wait_or(rc, &req, nb);
    MT_CHECK(rc == MPITOPO_SUCCESS && memcmp(got, want, sizeof(int) * (size_t)(C * p)) == 0,
             "allgather in place [%s] p=%d: rc %d or wrong data", conf, p, rc);
    /* 3: vector type on both sides (2 ints of 3), 1 element sent as 2 ints received. */
    fill(got, 3 * p + 1, SENT);
    fill(want, 3 * p + 1, SENT);
    MPI_Allgather(send, 1, vec, want, 1, vec, comm);
    rc = nb ? mpitopo_iallgather(send, 1, vec, got, 1, vec, comm, &req)
            : mpitopo_allgather(send, 1, vec, got, 1, vec, comm);
    rc = wait_or(rc, &req, nb);
    MT_CHECK(rc == MPITOPO_SUCCESS && memcmp(got, want, sizeof(int) * (size_t)(3 * p + 1)) == 0,
             "allgather vector [%s] p=%d: rc %d or wrong data", conf, p, rc);
    /* 4: zero count. */
    rc = mpitopo_allgather(send, 0, MPI_INT, got, 0, MPI_INT, comm);
    MT_CHECK(rc == MPITOPO_SUCCESS, "allgather zero count [%s]: rc %d", conf, rc);
    free(got);
    free(want);
}

static void t_bcast(MPI_Comm comm, const char *conf, int nb, int allroots)
{
    int p, r;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &r);
    for (int root = 0; root < p; root += allroots ? 1 : (p > 2 ? p / 2 + 1 : 1)) {
        int got[12], want[12];
        mpitopo_request_t req = MPITOPO_REQUEST_NULL;
        fill(got, 12, SENT);
        fill(want, 12, SENT);
        if (r == root)
            for (int e = 0; e < 12; e++)
                got[e] = want[e] = value(root, e);
        MPI_Bcast(want, 5, MPI_INT, root, comm);
        int rc = nb ? mpitopo_ibcast(got, 5, MPI_INT, root, comm, &req)
                    : mpitopo_bcast(got, 5, MPI_INT, root, comm);
        rc = wait_or(rc, &req, nb);
        MT_CHECK(rc == MPITOPO_SUCCESS && memcmp(got, want, sizeof got) == 0,
                 "bcast [%s] p=%d root=%d: rc %d %s or wrong data", conf, p, root, rc,
                 mpitopo_last_error());
        if (!extras)
            continue;
        /* Vector type: 3 vectors (gaps stay untouched). */
        fill(got, 12, SENT);
        fill(want, 12, SENT);
        if (r == root)
            for (int e = 0; e < 12; e++)
                got[e] = want[e] = value(root, e);
        MPI_Bcast(want, 3, vec, root, comm);
        rc = mpitopo_bcast(got, 3, vec, root, comm);
        MT_CHECK(rc == MPITOPO_SUCCESS && memcmp(got, want, sizeof got) == 0,
                 "bcast vector [%s] p=%d root=%d: rc %d or wrong data", conf, p, root, rc);
    }
}

static void t_gather(MPI_Comm comm, const char *conf, int nb, int allroots)
{
    int p, r;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &r);
    enum { C = 2 };
    int *got = malloc(sizeof(int) * (size_t)(3 * C * p + 8)), *want = malloc(sizeof(int) * (size_t)(3 * C * p + 8));
    int send[3 * C];
    for (int e = 0; e < 3 * C; e++)
        send[e] = value(r, e);
    for (int root = 0; root < p; root += allroots ? 1 : (p > 2 ? p / 2 + 1 : 1)) {
        mpitopo_request_t req = MPITOPO_REQUEST_NULL;
        fill(got, C * p, SENT);
        fill(want, C * p, SENT);
        MPI_Gather(send, C, MPI_INT, want, C, MPI_INT, root, comm);
        int rc = nb ? mpitopo_igather(send, C, MPI_INT, got, C, MPI_INT, root, comm, &req)
                    : mpitopo_gather(send, C, MPI_INT, got, C, MPI_INT, root, comm);
        rc = wait_or(rc, &req, nb);
        MT_CHECK(rc == MPITOPO_SUCCESS && memcmp(got, want, sizeof(int) * (size_t)(C * p)) == 0,
                 "gather [%s] p=%d root=%d: rc %d %s or wrong data", conf, p, root, rc,
                 mpitopo_last_error());
        if (!extras)
            continue;
        /* In place at the root. */
        fill(got, C * p, SENT);
        if (r == root)
            for (int e = 0; e < C; e++)
                got[r * C + e] = value(r, e);
        rc = mpitopo_gather(r == root ? MPI_IN_PLACE : send, C, MPI_INT, got, C, MPI_INT, root,
                            comm);
        MT_CHECK(rc == MPITOPO_SUCCESS &&
                     (r != root || memcmp(got, want, sizeof(int) * (size_t)(C * p)) == 0),
                 "gather in place [%s] p=%d root=%d: rc %d or wrong data", conf, p, root, rc);
        /* Vector type received, C ints sent. */
        fill(got, 3 * p + 1, SENT);
        fill(want, 3 * p + 1, SENT);
        MPI_Gather(send, 2, MPI_INT, want, 1, vec, root, comm);
        rc = mpitopo_gather(send, 2, MPI_INT, got, 1, vec, root, comm);
        MT_CHECK(rc == MPITOPO_SUCCESS && memcmp(got, want, sizeof(int) * (size_t)(3 * p + 1)) == 0,
                 "gather vector [%s] p=%d root=%d: rc %d or wrong data", conf, p, root, rc);
    }
    free(got);
    free(want);
}

static void t_allreduce(MPI_Comm comm, const char *conf, int nb)
{
    int p, r;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &r);
    enum { C = 7 };
    int send[C], got[C], want[C];
    for (int e = 0; e < C; e++)
        send[e] = value(r, e) * (e % 2 ? -1 : 1);
    mpitopo_request_t req = MPITOPO_REQUEST_NULL;
    MPI_Allreduce(send, want, C, MPI_INT, MPI_SUM, comm);
    int rc = nb ? mpitopo_iallreduce(send, got, C, MPI_INT, MPI_SUM, comm, &req)
                : mpitopo_allreduce(send, got, C, MPI_INT, MPI_SUM, comm);
    rc = wait_or(rc, &req, nb);
    MT_CHECK(rc == MPITOPO_SUCCESS && memcmp(got, want, sizeof got) == 0,
             "allreduce sum [%s] p=%d: rc %d %s or wrong data", conf, p, rc, mpitopo_last_error());
    /* In place, MPI_MAX on doubles. */
    double dg[3], dw[3], ds[3];
    for (int e = 0; e < 3; e++)
        ds[e] = dg[e] = (double)((r * 7919 + e * 31) % 97) / 3.0;
    MPI_Allreduce(ds, dw, 3, MPI_DOUBLE, MPI_MAX, comm);
    rc = mpitopo_allreduce(MPI_IN_PLACE, dg, 3, MPI_DOUBLE, MPI_MAX, comm);
    MT_CHECK(rc == MPITOPO_SUCCESS && memcmp(dg, dw, sizeof dg) == 0,
             "allreduce max in place [%s] p=%d: rc %d or wrong data", conf, p, rc);
    /* Non-commutative: 2 matrices each. */
    unsigned ms[8], mg[8], mw[8];
    for (int e = 0; e < 8; e++)
        ms[e] = (unsigned)(r * 13 + e * 5 + 1);
    MPI_Datatype mat;
    MPI_Type_contiguous(4, MPI_UNSIGNED, &mat);
    MPI_Type_commit(&mat);
    MPI_Allreduce(ms, mw, 2, mat, matop, comm);
    rc = nb ? mpitopo_iallreduce(ms, mg, 2, mat, matop, comm, &req)
            : mpitopo_allreduce(ms, mg, 2, mat, matop, comm);
    MPI_Type_free(&mat); /* allowed while a nonblocking call is pending */
    rc = wait_or(rc, &req, nb);
    MT_CHECK(rc == MPITOPO_SUCCESS && memcmp(mg, mw, sizeof mg) == 0,
             "allreduce matrix product [%s] p=%d: rc %d or wrong data", conf, p, rc);
    rc = mpitopo_allreduce(send, got, 0, MPI_INT, MPI_SUM, comm);
    MT_CHECK(rc == MPITOPO_SUCCESS, "allreduce zero count [%s]: rc %d", conf, rc);
}

/* The next call: nonblocking three times in four; extras one time in three. */
static int next_call(int *k)
{
    extras = *k % 3 == 0;
    return (*k)++ % 4 != 0;
}

static const char *heurs[] = {"none", "rdmh", "rmh", "bbmh", "bgmh", "auto"};
static const char *orders[] = {"initcomm", "endshfl"};

/* Every algorithm x heuristic x order; with R > 1 only the configurations
 * whose index is phase mod R (the sizes of the world share them out). */
static void run_all(MPI_Comm comm, int allroots, int R, int phase)
{
    char conf[128];
    int k = 0, c = 0;
    static const char *ag[] = {"rd", "bruck", "ring", "hier", "hierb"};
    for (int a = 0; a < 5; a++)
        for (int h = 0; h < 6; h++)
            for (int o = 0; o < 2; o++) {
                if (a >= 3 && ((h > 0 && h < 5) || o > 0))
                    continue; /* hierarchical: none or auto (its own orders, no output step) */
                if (c++ % R != phase % R)
                    continue;
                snprintf(conf, sizeof conf, "allgather=%s:%s:%s", ag[a], heurs[h], orders[o]);
                MT_CHECK_RC(set_conf(comm, conf));
                t_allgather(comm, conf, next_call(&k));
            }
    for (int h = 0; h < 6; h++)
        for (int o = 0; o < 2; o++) {
            if (c++ % R != phase % R)
                continue;
            snprintf(conf, sizeof conf, "bcast=binomial:%s,gather=binomial:%s:%s", heurs[h],
                     heurs[h], orders[o]);
            MT_CHECK_RC(set_conf(comm, conf));
            if (o == 0 || R > 1)
                t_bcast(comm, conf, next_call(&k), allroots);
            t_gather(comm, conf, next_call(&k), allroots);
        }
    for (int h = 0; h < 6; h++) {
        if (c++ % R != phase % R)
            continue;
        snprintf(conf, sizeof conf, "allreduce=rd:%s", heurs[h]);
        MT_CHECK_RC(set_conf(comm, conf));
        t_allreduce(comm, conf, next_call(&k));
    }
    /* Auto everywhere, and the host MPI's own. */
    const char *more[] = {"auto", "all=mpi", "all=auto:auto,switch=8"};
    for (int i = 0; i < 3; i++) {
        MT_CHECK_RC(set_conf(comm, more[i]));
        t_allgather(comm, more[i], next_call(&k));
        t_bcast(comm, more[i], 0, 0);
        t_gather(comm, more[i], 0, 0);
        t_allreduce(comm, more[i], next_call(&k));
    }
    mpitopo_comm_set_info(comm, MPI_INFO_NULL);
}

/* Errors every process sees alike. */
static void t_errors(void)
{
    int buf[4] = {0};
    MT_CHECK(mpitopo_allgather(buf, -1, MPI_INT, buf, 1, MPI_INT, MPI_COMM_WORLD) == MPITOPO_ERR_ARG,
             "negative sendcount accepted");
    MT_CHECK(mpitopo_bcast(buf, 1, MPI_INT, wsize, MPI_COMM_WORLD) == MPITOPO_ERR_ARG &&
                 strstr(mpitopo_last_error(), "root"),
             "bad root accepted or not named: %s", mpitopo_last_error());
    MT_CHECK(mpitopo_allreduce(buf, buf + 2, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD) == MPITOPO_ERR_ARG,
             "MPI_OP_NULL accepted");
    MT_CHECK(mpitopo_gather(buf, 1, MPI_INT, buf, 1, MPI_INT, 0, MPI_COMM_NULL) == MPITOPO_ERR_ARG,
             "MPI_COMM_NULL accepted");
    MT_CHECK_RC(set_conf(MPI_COMM_WORLD, "allgather=fast"));
    MT_CHECK(mpitopo_allgather(buf, 1, MPI_INT, buf + 1, 1, MPI_INT, MPI_COMM_WORLD) == MPITOPO_ERR_ARG &&
                 strstr(mpitopo_last_error(), "fast"),
             "bad configuration accepted or not named: %s", mpitopo_last_error());
    MT_CHECK(!mpitopo_coll_handles(MPITOPO_COLL_OP_ALLGATHER, MPI_COMM_WORLD, MPI_INT, MPI_INT,
                                   MPI_OP_NULL),
             "a bad configuration is handled");
    MT_CHECK_RC(set_conf(MPI_COMM_WORLD, "bcast=binomial:rmh,allgather=mpi"));
    MT_CHECK(mpitopo_coll_handles(MPITOPO_COLL_OP_BCAST, MPI_COMM_WORLD, MPI_INT, MPI_INT, MPI_OP_NULL) &&
                 !mpitopo_coll_handles(MPITOPO_COLL_OP_ALLGATHER, MPI_COMM_WORLD, MPI_INT, MPI_INT,
                                       MPI_OP_NULL),
             "mpitopo_coll_handles disagrees with the configuration");
    MT_CHECK_RC(set_conf(MPI_COMM_WORLD, "off"));
    MT_CHECK(!mpitopo_coll_handles(MPITOPO_COLL_OP_BCAST, MPI_COMM_WORLD, MPI_INT, MPI_INT, MPI_OP_NULL),
             "off is handled");
    mpitopo_comm_set_info(MPI_COMM_WORLD, MPI_INFO_NULL);
}

/* Overlapping nonblocking calls completed in reverse order, on a
 * communicator freed while they are in flight. */
static void t_overlap(void)
{
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MT_CHECK_RC(set_conf(dup, "allgather=ring:auto,bcast=binomial:auto,allreduce=rd:auto"));
    int *ag = malloc(sizeof(int) * (size_t)wsize), bc[4] = {0}, ar[2], one[2] = {wrank, 1};
    mpitopo_request_t q[3];
    MT_CHECK_RC(mpitopo_iallgather(&wrank, 1, MPI_INT, ag, 1, MPI_INT, dup, &q[0]));
    if (wrank == wsize - 1)
        for (int e = 0; e < 4; e++)
            bc[e] = 40 + e;
    MT_CHECK_RC(mpitopo_ibcast(bc, 4, MPI_INT, wsize - 1, dup, &q[1]));
    MT_CHECK_RC(mpitopo_iallreduce(one, ar, 2, MPI_INT, MPI_SUM, dup, &q[2]));
    MPI_Comm_free(&dup);
    for (int i = 2; i >= 0; i--)
        MT_CHECK_RC(wait_or(MPITOPO_SUCCESS, &q[i], 1));
    for (int r = 0; r < wsize; r++)
        MT_CHECK(ag[r] == r, "overlap: allgather block %d = %d", r, ag[r]);
    MT_CHECK(bc[0] == 40 && bc[3] == 43, "overlap: bcast got %d..%d", bc[0], bc[3]);
    MT_CHECK(ar[0] == wsize * (wsize - 1) / 2 && ar[1] == wsize, "overlap: allreduce %d %d", ar[0],
             ar[1]);
    free(ag);
}

/*
 * A nonblocking call must not wait for the other processes, not even the
 * first on a communicator (where the machine is not gathered yet): rank 0
 * starts it and then receives what rank 1 sends synchronously before rank
 * 1 starts it. A call that blocked until every process joined hangs here
 * (the test's timeout). On a cyclic layout (expect_reorder) the first call
 * keeps the original order; a blocking call gathers the machine, and the
 * nonblocking calls after it reorder.
 */
static void t_nonblocking_first(int expect_reorder)
{
    if (wsize < 2)
        return;
    const char *confs[] = {"allgather=rd:auto", "allgather=ring:rmh", "allgather=hierb:auto",
                           "allgather=mpi", "allgather=auto:auto,switch=0"};
    int *got = malloc(sizeof(int) * (size_t)wsize);
    for (size_t i = 0; i < sizeof confs / sizeof *confs; i++) {
        MPI_Comm c; /* split, not dup: a duplicate shares the world's machine */
        MPI_Comm_split(MPI_COMM_WORLD, 0, wrank, &c);
        MT_CHECK_RC(set_conf(c, confs[i]));
        for (int round = 0; round < 3; round++) {
            mpitopo_request_t q = MPITOPO_REQUEST_NULL;
            int token = 1000 + (int)i, rc = MPITOPO_SUCCESS;
            fill(got, wsize, SENT);
            if (round == 1) {
                rc = mpitopo_allgather(&wrank, 1, MPI_INT, got, 1, MPI_INT, c);
            } else if (wrank == 1) {
                MPI_Ssend(&token, 1, MPI_INT, 0, 77, MPI_COMM_WORLD);
                rc = mpitopo_iallgather(&wrank, 1, MPI_INT, got, 1, MPI_INT, c, &q);
            } else {
                rc = mpitopo_iallgather(&wrank, 1, MPI_INT, got, 1, MPI_INT, c, &q);
                if (wrank == 0) {
                    int t = 0;
                    MPI_Recv(&t, 1, MPI_INT, 1, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MT_CHECK(t == token, "[%s] token %d", confs[i], t);
                }
            }
            MT_CHECK_RC(wait_or(rc, &q, round != 1));
            for (int r = 0; r < wsize; r++)
                MT_CHECK(got[r] == r, "[%s] round %d: block %d = %d", confs[i], round, r, got[r]);
            int alg = -1, heur = -1, re = -1;
            MT_CHECK_RC(mpitopo__coll_last(c, MPITOPO__COLL_OP_ALLGATHER, &alg, &heur, &re));
            if (expect_reorder && i == 1)
                MT_CHECK(re == (round > 0), "[%s] round %d: reordered = %d", confs[i], round, re);
        }
        MPI_Comm_free(&c);
    }
    free(got);
}

/* Under a cyclic emulated layout, ring and rd on the world reorder. */
static void t_reorder(void)
{
    /* Ring on a cyclic layout: every stage crosses nodes everywhere in the
     * original order; RMH keeps most of the ring inside the nodes. (RD may
     * already fit a cyclic layout: i ^ 2^s stays on a node when the node
     * count divides 2^s.) */
    const char *confs[] = {"allgather=ring:rmh", "allgather=ring:auto,switch=0"};
    for (int i = 0; i < 2; i++) {
        MT_CHECK_RC(set_conf(MPI_COMM_WORLD, confs[i]));
        t_allgather(MPI_COMM_WORLD, confs[i], i % 2);
        int alg = -1, heur = -1, re = -1;
        MT_CHECK_RC(mpitopo__coll_last(MPI_COMM_WORLD, MPITOPO__COLL_OP_ALLGATHER, &alg, &heur, &re));
        MT_CHECK(re == 1, "[%s] on the cyclic layout: the original order was kept (alg %d heur %d)",
                 confs[i], alg, heur);
    }
    mpitopo_comm_set_info(MPI_COMM_WORLD, MPI_INFO_NULL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Op_create(matmul, 0, &matop);
    const char *few = mt_getenv("MT_COLL_SIZES");
    int allsizes = !few || strcmp(few, "few") != 0;
    /* Sizes below the world's share the configurations out, R ways. */
    const char *rs = mt_getenv("MT_COLL_SHARE");
    int R = rs ? atoi(rs) : 3;
    if (R < 1)
        R = 1;
    if (!allsizes)
        R = wsize / 2 > R ? wsize / 2 : R; /* every size, fewer configurations each */
    for (int s = 1; s <= wsize; s++) {
        MPI_Comm sub;
        MPI_Comm_split(MPI_COMM_WORLD, wrank < s ? 0 : MPI_UNDEFINED, wrank, &sub);
        if (sub != MPI_COMM_NULL) {
            /* The world runs all (few: half, the odd ranks' the other half). */
            run_all(sub, allsizes || s <= 8, s < wsize ? R : allsizes ? 1 : 2, s < wsize ? s : 0);
            MPI_Comm_free(&sub);
        }
        if (mt_failed())
            break;
    }
    /* A sub-communicator in reverse order (odd ranks), every root. */
    MPI_Comm odd;
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wsize - wrank, &odd);
    run_all(odd, allsizes, allsizes ? R : 2, 1);
    MPI_Comm_free(&odd);
    t_errors();
    t_overlap();
    const char *exp = mt_getenv("MT_EXPECT_REORDER");
    t_nonblocking_first(exp && strcmp(exp, "1") == 0);
    if (exp && strcmp(exp, "1") == 0)
        t_reorder();
    MPI_Op_free(&matop);
    MPI_Type_free(&vec);
    int code = mt_finish("coll");
    MPI_Finalize();
    return code;
}
