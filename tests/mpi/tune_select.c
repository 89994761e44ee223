/*
 * The selection of auto by measurement (src/coll/neighbor/tune.c, issue 31) under
 * known times: mpitopo__tune_test_times replaces every timed trial's
 * duration by a table's (per schedule, one process may be slower), so the
 * choice is deterministic whatever the machine's noise. For each table
 * (a new block size: a new signature) on a Cartesian grid and on a dist
 * graph, blocking alltoalls until decided, then:
 *
 *   - the decision is the fastest candidate by the slowest process's time
 *     (the candidates are the schedules the tuner timed; the tables'
 *     margins are clear, > 3 % (the model's keep) and not within noise);
 *   - every process decided the same and timed the same calls;
 *   - a candidate slower than 1.5x the best ran one timed trial only;
 *   - the exploration (timed calls x their excess over the best, and the
 *     tuner's reductions, whose time the table gives too) costs at most
 *     10 % of 100 calls of the best, unless round 0 alone (one trial of
 *     each candidate and a reduction) costs more: then no candidate ran
 *     twice;
 *   - nothing is timed after the decision; every result equals MPI's.
 */
#include "mpitest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Internal (src/coll/coll_internal.h). */
int mpitopo__tune_state(MPI_Comm comm, int op, long long sb, long long rb, int *explored,
                        int *decided, int *sched, int *source);
void mpitopo__tune_test_times(double (*times)(int sched, void *arg), void *arg);

enum { OPK_ALLTOALL = 2, NSCHED = 6 }; /* schedules 1 linear .. 5 mpi */
static const char *const names[NSCHED] = {"auto", "linear", "combine", "cart", "node", "mpi"};

typedef struct table {
    const char *what;
    double us[NSCHED]; /* per schedule */
    int slow_sched;    /* on rank 1 only, this schedule takes slow_us */
    double slow_us;
    double red_us;     /* a reduction */
    int calls[NSCHED]; /* timed trials seen, per schedule */
} table_t;

static int wrank, wsize;

static double slowest(const table_t *t, int s)
{
    return s == t->slow_sched && wsize > 1 && t->slow_us > t->us[s] ? t->slow_us : t->us[s];
}

static double fake_time(int sched, void *arg)
{
    table_t *t = arg;
    if (sched == 0)
        return t->red_us * 1e-6; /* a reduction of the tuner */
    if (sched >= NSCHED)
        return 1.0;
    t->calls[sched]++;
    double us = wrank == 1 && sched == t->slow_sched ? t->slow_us : t->us[sched];
    return us * 1e-6;
}

static void alltoalls(MPI_Comm c, int in, int out, int cnt, int calls)
{
    int *sb = malloc(sizeof(int) * (size_t)(out * cnt + 1)),
        *rb = malloc(sizeof(int) * (size_t)(in * cnt + 1)),
        *ref = malloc(sizeof(int) * (size_t)(in * cnt + 1));
    for (int it = 0; it < calls; it++) {
        for (int i = 0; i < out * cnt; i++)
            sb[i] = wrank * 100000 + it * 100 + i;
        memset(rb, 0xff, sizeof(int) * (size_t)(in * cnt + 1));
        memset(ref, 0xff, sizeof(int) * (size_t)(in * cnt + 1));
        MT_CHECK_RC(mpitopo_neighbor_alltoall(sb, cnt, MPI_INT, rb, cnt, MPI_INT, c));
        MPI_Neighbor_alltoall(sb, cnt, MPI_INT, ref, cnt, MPI_INT, c);
        MT_CHECK(memcmp(rb, ref, sizeof(int) * (size_t)(in * cnt)) == 0,
                 "alltoall of %d ints, call %d differs from MPI's", cnt, it);
    }
    free(sb);
    free(rb);
    free(ref);
}

static void run_case(MPI_Comm c, const char *cname, int in, int out, table_t *t, int cnt)
{
    memset(t->calls, 0, sizeof t->calls);
    mpitopo__tune_test_times(fake_time, t);
    alltoalls(c, in, out, cnt, 30);
    int explored = 0, decided = 0, sched = -1, source = -1;
    MT_CHECK_RC(mpitopo__tune_state(c, OPK_ALLTOALL, 4LL * cnt, 4LL * cnt, &explored, &decided,
                                    &sched, &source));
    int before[NSCHED];
    memcpy(before, t->calls, sizeof before);
    alltoalls(c, in, out, cnt, 10);
    mpitopo__tune_test_times(NULL, NULL);
    MT_CHECK(memcmp(before, t->calls, sizeof before) == 0, "%s %s: calls timed after the decision",
             cname, t->what);
    MT_CHECK(decided && (source == 0 || source == 2), "%s %s: not decided by measurement (source %d)",
             cname, t->what, source);

    int lo[NSCHED + 1], hi[NSCHED + 1], v[NSCHED + 1];
    memcpy(v, t->calls, sizeof t->calls);
    v[NSCHED] = sched;
    MPI_Allreduce(v, lo, NSCHED + 1, MPI_INT, MPI_MIN, c);
    MPI_Allreduce(v, hi, NSCHED + 1, MPI_INT, MPI_MAX, c);
    MT_CHECK(memcmp(lo, hi, sizeof lo) == 0, "%s %s: processes differ in decision or trials",
             cname, t->what);

    int best = -1, ncand = 0;
    for (int s = 1; s < NSCHED; s++)
        if (t->calls[s] > 0) {
            ncand++;
            if (best < 0 || slowest(t, s) < slowest(t, best))
                best = s;
        }
    if (source == 2 || ncand < 2)
        return; /* one candidate: nothing to choose */
    MT_CHECK(sched == best, "%s %s: decided %s, the fastest candidate is %s", cname, t->what,
             sched >= 0 && sched < NSCHED ? names[sched] : "?", names[best]);
    double tb = slowest(t, best), round0 = 0, cost = 0;
    int twice = 0;
    for (int s = 1; s < NSCHED; s++) {
        if (!t->calls[s])
            continue;
        round0 += slowest(t, s) - tb;
        cost += t->calls[s] * (slowest(t, s) - tb);
        twice |= s != best && t->calls[s] > 1;
        MT_CHECK(slowest(t, s) <= 1.5 * tb || t->calls[s] == 1,
                 "%s %s: %s (%.0f us, best %.0f) ran %d timed trials", cname, t->what, names[s],
                 slowest(t, s), tb, t->calls[s]);
    }
    /* The reductions: one after round 0, one more when trials went on. */
    round0 += t->red_us;
    cost += t->red_us * (twice ? 2 : 1);
    if (round0 > 10 * tb)
        MT_CHECK(!twice, "%s %s: round 0 cost %.0f us > 10 %% of 100 x %.0f, yet trials went on",
                 cname, t->what, round0, tb);
    else
        MT_CHECK(cost <= 10 * tb + 1e-9, "%s %s: exploration cost %.1f us > 10 %% of 100 x %.0f us",
                 cname, t->what, cost, tb);
    if (wrank == 0)
        printf("# %s %s: %d candidates, %s decided after %d calls, exploration %.1f us "
               "(%.1f %% of 100 x best)\n",
               cname, t->what, ncand, names[sched], explored, cost, cost / tb);
}

static MPI_Comm ring_graph(int *deg)
{
    return mt_ring2_graph(deg);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    /* Times in us of linear, combine, cart, node, mpi. */
    table_t tables[] = {
        {"linear clearly fastest", {0, 10, 30, 30, 40, 25}, 0, 0, 0, {0}},
        {"mpi fastest, rivals within 1.45x", {0, 14, 13, 12, 14.5, 10}, 0, 0, 0, {0}},
        {"linear fastest but slow on rank 1", {0, 10, 17, 17, 18, 16}, 1, 40, 0, {0}},
        {"node fastest, one rival 1.3x", {0, 13, 20, 20, 10, 20}, 0, 0, 0, {0}},
        {"linear, round 0 over the budget", {0, 10, 14, 14, 14, 100}, 0, 0, 0, {0}},
        {"linear, the rest at 1.4x", {0, 10, 14, 14, 14, 14}, 0, 0, 0, {0}},
        {"linear, rest 1.4x, reductions of 45 us", {0, 10, 14, 14, 14, 14}, 0, 0, 45, {0}},
    };
    int nt = (int)(sizeof tables / sizeof tables[0]);
    int dims[2] = {0, 0}, periods[2] = {1, 0}, gdeg = 0;
    MPI_Comm c, g = ring_graph(&gdeg);
    MPI_Dims_create(wsize, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &c);
    for (int i = 0; i < nt; i++) {
        run_case(c, "grid", 4, 4, &tables[i], i + 1);
        run_case(g, "ring graph", gdeg, gdeg, &tables[i], i + 1);
    }
    MPI_Comm_free(&c);
    MPI_Comm_free(&g);
    int rc = mt_finish("tune_select");
    MPI_Finalize();
    return rc;
}
