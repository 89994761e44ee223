/*
 * auto of a persistent neighbourhood request explored by its starts
 * (src/coll/neighbor/tune.c, issue 31), on a periodic 2-D grid and on a
 * dist graph, under known times (mpitopo__tune_test_times: every timed
 * start's duration comes from a table, so the choice is deterministic):
 *
 *   - every start's result equals MPI_Neighbor_alltoall's, on every rank,
 *     whether completed by mpitopo_wait or by an mpitopo_test loop;
 *   - the request decides, the same on every process, for the fastest
 *     candidate by the slowest process's time (the candidates: the
 *     schedules timed), within (candidates x (1 + 3)) + 2 starts; no start
 *     is timed after the decision;
 *   - the signature's entry takes the decision (no blocking call explored
 *     it), so a blocking call of the same signature does not explore;
 *   - a request freed while its reduction is posted: no hang, and a new
 *     request of the same signature explores again and decides;
 *   - a candidate failing on one process is never the decision;
 *   - MPITOPO_TUNE=off (MT_OFF=1 given too): no exploring request.
 */
#include "mpitest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Internal (src/coll/coll_internal.h). */
int mpitopo__ptune_state(mpitopo_request_t r, int *ncand, int *explored, int *decided,
                         int *sched);
int mpitopo__tune_state(MPI_Comm comm, int op, long long sb, long long rb, int *explored,
                        int *decided, int *sched, int *source);
void mpitopo__tune_test_times(double (*times)(int sched, void *arg), void *arg);

enum { OPK_ALLTOALL = 2, NSCHED = 6 }; /* schedules 1 linear .. 5 mpi */
static const char *const names[NSCHED] = {"auto", "linear", "combine", "cart", "node", "mpi"};
#define FAILED 1e30 /* MPITOPO__EXPLORE_FAILED (src/coll/engine/explore.h) */

typedef struct table {
    const char *what;
    double us[NSCHED];
    int fail_sched;    /* fails on rank 1 only (0: none) */
    int calls[NSCHED]; /* timed starts seen, per schedule */
} table_t;

static int wrank, wsize;

static double fake_time(int sched, void *arg)
{
    table_t *t = arg;
    if (sched <= 0 || sched >= NSCHED)
        return 1e-6;
    t->calls[sched]++;
    if (sched == t->fail_sched)
        return wrank == 1 ? FAILED : 1e-6;
    return t->us[sched] * 1e-6;
}

/* The request's buffers and MPI's answer for the same input. */
typedef struct bufs {
    int in, out, cnt;
    int *sb, *rb, *ref;
} bufs_t;

static void fill(bufs_t *b, int it)
{
    for (int i = 0; i < b->out * b->cnt; i++)
        b->sb[i] = wrank * 100000 + it * 100 + i;
    /* MPI_PROC_NULL neighbours leave their blocks as they are. */
    memset(b->rb, 0xff, sizeof(int) * (size_t)(b->in * b->cnt + 1));
    memset(b->ref, 0xff, sizeof(int) * (size_t)(b->in * b->cnt + 1));
}

/* starts starts of r (completed by wait, or by a test loop every third),
 * each checked against MPI's own call. */
static void run(MPI_Comm c, bufs_t *b, mpitopo_request_t *r, int starts, int it0, const char *what)
{
    for (int it = it0; it < it0 + starts; it++) {
        fill(b, it);
        MT_CHECK_RC(mpitopo_start(r));
        if (it % 3 == 2) {
            int flag = 0;
            while (!flag)
                MT_CHECK_RC(mpitopo_test(r, &flag));
        } else {
            MT_CHECK_RC(mpitopo_wait(r));
        }
        MPI_Neighbor_alltoall(b->sb, b->cnt, MPI_INT, b->ref, b->cnt, MPI_INT, c);
        MT_CHECK(memcmp(b->rb, b->ref, sizeof(int) * (size_t)(b->in * b->cnt)) == 0,
                 "%s: start %d differs from MPI's", what, it);
    }
}

static int same_everywhere(MPI_Comm c, int v)
{
    int w[2] = {v, -v}, m[2];
    MPI_Allreduce(w, m, 2, MPI_INT, MPI_MAX, c);
    return m[0] == -m[1];
}

static mpitopo_request_t make(MPI_Comm c, bufs_t *b, int in, int out, int cnt)
{
    b->in = in;
    b->out = out;
    b->cnt = cnt;
    b->sb = calloc((size_t)(out * cnt + 1), sizeof(int));
    b->rb = malloc(sizeof(int) * (size_t)(in * cnt + 1));
    b->ref = malloc(sizeof(int) * (size_t)(in * cnt + 1));
    mpitopo_request_t r = MPITOPO_REQUEST_NULL;
    MT_CHECK_RC(mpitopo_neighbor_alltoall_init(b->sb, cnt, MPI_INT, b->rb, cnt, MPI_INT, c,
                                                MPI_INFO_NULL, &r));
    return r;
}

static void unmake(bufs_t *b, mpitopo_request_t *r)
{
    MT_CHECK_RC(mpitopo_request_free(r));
    free(b->sb);
    free(b->rb);
    free(b->ref);
}

/* Starts until decided (at most limit); the decision checked. */
static void explore(MPI_Comm c, const char *cname, int in, int out, table_t *t, int cnt)
{
    char what[160];
    snprintf(what, sizeof what, "%s %s", cname, t->what);
    memset(t->calls, 0, sizeof t->calls);
    bufs_t b;
    mpitopo__tune_test_times(fake_time, t);
    mpitopo_request_t r = make(c, &b, in, out, cnt);
    int ncand = 0, explored = 0, decided = 0, sched = -1;
    if (mpitopo__ptune_state(r, &ncand, &explored, &decided, &sched) != MPITOPO_SUCCESS) {
        /* One candidate only, or decided already: nothing to explore. */
        run(c, &b, &r, 3, 0, what);
        mpitopo__tune_test_times(NULL, NULL);
        unmake(&b, &r);
        return;
    }
    int limit = ncand * 4 + 2, it = 0;
    for (; it < limit + 1 && !decided; it++) {
        run(c, &b, &r, 1, it, what);
        MT_CHECK_RC(mpitopo__ptune_state(r, &ncand, &explored, &decided, &sched));
    }
    int before[NSCHED];
    memcpy(before, t->calls, sizeof before);
    run(c, &b, &r, 6, it, what);
    mpitopo__tune_test_times(NULL, NULL);
    MT_CHECK(memcmp(before, t->calls, sizeof before) == 0, "%s: starts timed after the decision",
             what);
    MT_CHECK(decided, "%s: not decided after %d starts (%d candidates)", what, it, ncand);
    MT_CHECK(explored <= limit, "%s: %d exploring starts, bound %d", what, explored, limit);
    MT_CHECK(same_everywhere(c, sched) && same_everywhere(c, explored),
             "%s: processes differ in decision or starts", what);
    int best = -1;
    for (int s = 1; s < NSCHED; s++)
        if (t->calls[s] > 0 && s != t->fail_sched && (best < 0 || t->us[s] < t->us[best]))
            best = s;
    MT_CHECK(sched == best, "%s: decided %s, the fastest candidate is %s", what,
             sched >= 0 && sched < NSCHED ? names[sched] : "?", best >= 0 ? names[best] : "?");
    /* The signature's entry has it: a blocking call does not explore. */
    int e_explored = -1, e_decided = 0, e_sched = -1, source = -1;
    MT_CHECK_RC(mpitopo__tune_state(c, OPK_ALLTOALL, 4LL * cnt, 4LL * cnt, &e_explored,
                                    &e_decided, &e_sched, &source));
    MT_CHECK(e_decided && e_sched == sched && e_explored == explored,
             "%s: the signature's entry: decided %d, %s, %d calls (request: %s, %d starts)", what,
             e_decided, e_sched >= 0 && e_sched < NSCHED ? names[e_sched] : "-", e_explored,
             names[sched], explored);
    if (wrank == 0)
        printf("# %s: %d candidates, %s decided after %d starts\n", what, ncand, names[sched],
               explored);
    unmake(&b, &r);
}

/* A request freed with its reduction posted, then a new one of the same
 * signature: it explores and decides. */
static void freed_early(MPI_Comm c, int in, int out, table_t *t)
{
    const int cnt = 97;
    bufs_t b;
    memset(t->calls, 0, sizeof t->calls);
    mpitopo__tune_test_times(fake_time, t);
    mpitopo_request_t r = make(c, &b, in, out, cnt);
    int ncand = 0, explored = 0, decided = 0, sched = -1;
    if (mpitopo__ptune_state(r, &ncand, &explored, &decided, &sched) == MPITOPO_SUCCESS)
        run(c, &b, &r, 2 * ncand + 1, 0, "freed early"); /* warm-ups, round 0, the posting */
    else
    unmake(&b, &r);
    r = make(c, &b, in, out, cnt);
    if (mpitopo__ptune_state(r, &ncand, &explored, &decided, &sched) == MPITOPO_SUCCESS) {
        for (int it = 0; it < 4 * ncand + 3 && !decided; it++) {
            run(c, &b, &r, 1, it, "after the freed one");
            MT_CHECK_RC(mpitopo__ptune_state(r, &ncand, &explored, &decided, &sched));
        }
        MT_CHECK(decided && same_everywhere(c, sched), "after the freed one: decided %d", decided);
    }
    mpitopo__tune_test_times(NULL, NULL);
    unmake(&b, &r);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    /* Times in us of linear, combine, cart, node, mpi. */
    table_t tables[] = {
        {"linear clearly fastest", {0, 10, 30, 30, 40, 25}, 0, {0}},
        {"mpi fastest, rivals within 1.45x", {0, 14, 13, 12, 14.5, 10}, 0, {0}},
        {"node fastest, one rival 1.3x", {0, 13, 20, 20, 10, 20}, 0, {0}},
        {"cart fastest but fails on rank 1", {0, 14, 13, 5, 14.5, 12}, 3, {0}},
        {"linear fastest but fails on rank 1", {0, 5, 13, 12, 14.5, 12}, 1, {0}},
    };
    int nt = (int)(sizeof tables / sizeof tables[0]);
    const char *off = getenv("MT_OFF");
    int dims[2] = {0, 0}, periods[2] = {1, 0}, gdeg = 0;
    MPI_Comm c, g = mt_ring2_graph(&gdeg);
    MPI_Dims_create(wsize, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &c);
    if (off) {
        bufs_t b;
        mpitopo_request_t r = make(c, &b, 4, 4, 3);
        int ncand, explored, decided, sched;
        MT_CHECK(mpitopo__ptune_state(r, &ncand, &explored, &decided, &sched) != MPITOPO_SUCCESS,
                 "MPITOPO_TUNE=off: the request explores");
        run(c, &b, &r, 4, 0, "MPITOPO_TUNE=off");
        unmake(&b, &r);
    } else {
        for (int i = 0; i < nt; i++) {
            explore(c, "grid", 4, 4, &tables[i], i + 1);
            explore(g, "ring graph", gdeg, gdeg, &tables[i], i + 1);
        }
        freed_early(c, 4, 4, &tables[0]);
        freed_early(g, gdeg, gdeg, &tables[2]);
    }
    MPI_Comm_free(&c);
    MPI_Comm_free(&g);
    int rc = mt_finish("tune_persistent");
    MPI_Finalize();
    return rc;
}
