/*
 * auto by measurement (src/coll/neighbor/tune.c, issue 31).
 *
 *   - results: every blocking, nonblocking and persistent auto call of
 *     alltoall, allgather and alltoallv on a Cartesian grid and on a
 *     dist graph equals MPI_Neighbor_* on the same communicator, byte for
 *     byte, before, during and after the exploration;
 *   - agreement: the decision of every signature is the same on every
 *     process (MPI_MIN and MPI_MAX of it agree);
 *   - bound: a signature is decided after at most 5 candidates x 3 trials
 *     timed calls (plus each candidate's first run on the communicator,
 *     untimed), and no call is timed after that;
 *   - signatures: alltoall blocks of 2 ints and of 3 ints are explored and
 *     decided apart (the second does not reuse the first's decision);
 *     alltoallv counts that change on a few processes only (rank 0 sends
 *     more to its ring neighbours) never break agreement or results;
 *   - the tuning file (MPITOPO_TUNING_FILE): the decisions written
 *     (mpitopo__tune_finalize, which MPI_Finalize runs) are taken by a
 *     new communicator of the same shape with no call timed;
 *     MT_TUNE=corrupt / foreign: a file that does not parse / was written
 *     for another host MPI is ignored with its one line (captured from
 *     rank 0's stderr) and the signatures are measured;
 *   - MPITOPO_TUNE=off: no tuner state at all (the model alone).
 */
#include "mpitest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Internal (src/coll/coll_internal.h, src/mpi/mpi_internal.h). */
int mpitopo__tune_state(MPI_Comm comm, int op, long long sb, long long rb, int *explored,
                        int *decided, int *sched, int *source);
void mpitopo__tune_finalize(void);

enum { OPK_ALLGATHER = 0, OPK_ALLGATHERV, OPK_ALLTOALL, OPK_ALLTOALLV };
#define MAX_EXPLORED 20 /* 5 candidates x (3 trials + a first run per communicator) */

static int wrank, wsize, tune_off;

static int degree(MPI_Comm c, int *in, int *out)
{
    int w;
    return MPI_Dist_graph_neighbors_count(c, in, out, &w);
}

static int topo_degree(MPI_Comm c, int *in, int *out)
{
    int status;
    MPI_Topo_test(c, &status);
    if (status == MPI_CART) {
        int nd;
        MPI_Cartdim_get(c, &nd);
        *in = *out = 2 * nd;
        return MPI_SUCCESS;
    }
    return degree(c, in, out);
}

/* The tuner agrees: decided after at most MAX_EXPLORED timed calls, the
 * same decision everywhere. */
static void check_state(MPI_Comm c, const char *what, int op, long long sb, long long rb,
                        int want_source)
{
    int explored = -1, decided = 0, sched = -2, source = -1;
    if (tune_off) {
        int rc = mpitopo__tune_state(c, op, sb, rb, &explored, &decided, &sched, &source);
        MT_CHECK(rc != MPITOPO_SUCCESS, "%s: MPITOPO_TUNE=off left tuner state", what);
        return;
    }
    MT_CHECK_RC(mpitopo__tune_state(c, op, sb, rb, &explored, &decided, &sched, &source));
    MT_CHECK(decided, "%s: not decided after %d timed calls", what, explored);
    MT_CHECK(explored <= MAX_EXPLORED, "%s: %d timed calls (bound %d)", what, explored,
             MAX_EXPLORED);
    int v[2] = {sched, -sched}, m[2];
    MPI_Allreduce(v, m, 2, MPI_INT, MPI_MAX, c);
    MT_CHECK(m[0] == -m[1], "%s: processes decided differently (%d .. %d)", what, -m[1], m[0]);
    if (want_source >= 0 && source != 2)
        MT_CHECK(source == want_source && (want_source != 1 || explored == 0),
                 "%s: decision source %d (want %d), %d timed calls", what, source, want_source,
                 explored);
}

/* calls blocking alltoalls of cnt ints (and one nonblocking and one
 * persistent run), each compared with MPI's. */
static void run_alltoall(MPI_Comm c, const char *what, int cnt, int calls)
{
    int in, out;
    topo_degree(c, &in, &out);
    int ns = out * cnt + 1, nr = in * cnt + 1;
    int *sb = malloc(sizeof(int) * (size_t)ns), *rb = malloc(sizeof(int) * (size_t)nr),
        *ref = malloc(sizeof(int) * (size_t)nr);
    for (int it = 0; it < calls; it++) {
        for (int i = 0; i < ns; i++)
            sb[i] = wrank * 100000 + it * 100 + i;
        memset(rb, 0xff, sizeof(int) * (size_t)nr);
        memset(ref, 0xff, sizeof(int) * (size_t)nr);
        mpitopo_request_t r = MPITOPO_REQUEST_NULL;
        if (it % 7 == 3) {
            MT_CHECK_RC(mpitopo_ineighbor_alltoall(sb, cnt, MPI_INT, rb, cnt, MPI_INT, c, &r));
            MT_CHECK_RC(mpitopo_wait(&r));
        } else if (it % 7 == 5) {
            MT_CHECK_RC(mpitopo_neighbor_alltoall_init(sb, cnt, MPI_INT, rb, cnt, MPI_INT, c,
                                                       MPI_INFO_NULL, &r));
            MT_CHECK_RC(mpitopo_start(&r));
            MT_CHECK_RC(mpitopo_wait(&r));
            MT_CHECK_RC(mpitopo_request_free(&r));
        } else {
            MT_CHECK_RC(mpitopo_neighbor_alltoall(sb, cnt, MPI_INT, rb, cnt, MPI_INT, c));
        }
        MPI_Neighbor_alltoall(sb, cnt, MPI_INT, ref, cnt, MPI_INT, c);
        MT_CHECK(memcmp(rb, ref, sizeof(int) * (size_t)(in * cnt)) == 0,
                 "%s: alltoall of %d ints, call %d differs from MPI's", what, cnt, it);
    }
    free(sb);
    free(rb);
    free(ref);
}

static void run_allgather(MPI_Comm c, const char *what, int calls)
{
    int in, out;
    topo_degree(c, &in, &out);
    int *rb = calloc((size_t)in + 1, sizeof(int)), *ref = calloc((size_t)in + 1, sizeof(int));
    for (int it = 0; it < calls; it++) {
        int v = wrank * 1000 + it;
        MT_CHECK_RC(mpitopo_neighbor_allgather(&v, 1, MPI_INT, rb, 1, MPI_INT, c));
        MPI_Neighbor_allgather(&v, 1, MPI_INT, ref, 1, MPI_INT, c);
        MT_CHECK(memcmp(rb, ref, sizeof(int) * (size_t)in) == 0,
                 "%s: allgather call %d differs from MPI's", what, it);
    }
    free(rb);
    free(ref);
}

/* alltoallv on a dist graph whose sources and destinations are the same
 * lists (ring +-1, +-2): rank 0 sends `extra` more ints to everyone from
 * call `from` on, and its neighbours receive them: counts that change on
 * a few processes only. */
static void run_alltoallv(MPI_Comm c, const char *what, int calls, int from)
{
    int in, out, w;
    degree(c, &in, &out);
    int *src = malloc(sizeof(int) * (size_t)(in + 1)), *dst = malloc(sizeof(int) * (size_t)(out + 1));
    MPI_Dist_graph_neighbors(c, in, src, &w, out, dst, &w);
    int sc[8], sd[8], rc[8], rd[8], sb[64], rb[64], ref[64];
    for (int it = 0; it < calls; it++) {
        int more = it >= from ? 3 : 0, so = 0, ro = 0;
        for (int i = 0; i < out; i++) {
            sc[i] = 1 + (wrank == 0 ? more : 0);
            sd[i] = so;
            so += sc[i];
        }
        for (int i = 0; i < in; i++) {
            rc[i] = 1 + (src[i] == 0 ? more : 0);
            rd[i] = ro;
            ro += rc[i];
        }
        for (int i = 0; i < so; i++)
            sb[i] = wrank * 1000 + it * 10 + i;
        memset(rb, 0xff, sizeof rb);
        memset(ref, 0xff, sizeof ref);
        MT_CHECK_RC(mpitopo_neighbor_alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, c));
        MPI_Neighbor_alltoallv(sb, sc, sd, MPI_INT, ref, rc, rd, MPI_INT, c);
        MT_CHECK(memcmp(rb, ref, sizeof(int) * (size_t)ro) == 0,
                 "%s: alltoallv call %d differs from MPI's", what, it);
    }
    free(src);
    free(dst);
}

static MPI_Comm ring_graph(void)
{
    return mt_ring2_graph(NULL);
}

static MPI_Comm grid(void)
{
    int dims[2] = {0, 0}, periods[2] = {0, 0};
    MPI_Comm c;
    MPI_Dims_create(wsize, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &c);
    return c;
}

/* Runs f with rank 0's stderr going to a file; returns what it wrote. */
static void capture_first_call(MPI_Comm c, char *out, size_t len)
{
    char path[64];
    int saved = -1;
    snprintf(path, sizeof path, "neighbor_tune.stderr.%d", (int)getpid());
    if (wrank == 0) {
        fflush(stderr);
        saved = dup(2);
        FILE *f = fopen(path, "w");
        dup2(fileno(f), 2);
        fclose(f);
    }
    run_alltoall(c, "first call", 2, 1);
    if (wrank == 0) {
        fflush(stderr);
        dup2(saved, 2);
        close(saved);
        FILE *f = fopen(path, "r");
        size_t got = f ? fread(out, 1, len - 1, f) : 0;
        out[got] = '\0';
        if (f)
            fclose(f);
        unlink(path);
        fputs(out, stderr);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    const char *mode = getenv("MT_TUNE"), *file = getenv("MPITOPO_TUNING_FILE"),
               *off = getenv("MPITOPO_TUNE");
    tune_off = off && strcmp(off, "off") == 0;
    if (wrank == 0 && file) {
        unlink(file);
        FILE *f = mode ? fopen(file, "w") : NULL;
        if (f && strcmp(mode, "corrupt") == 0)
            fputs("{\"format\": \"mpitopo-tuning\", \"decisions\": [ {\"op\": ", f);
        else if (f)
            fputs("{\"format\": \"mpitopo-tuning\", \"version\": 1, \"host\": \"mpich 0.0.1\", "
                  "\"decisions\": []}\n",
                  f);
        if (f)
            fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Comm c = grid(), g = ring_graph();
    if (mode) {
        char said[2048] = "";
        capture_first_call(c, said, sizeof said);
        const char *want = strcmp(mode, "corrupt") == 0 ? "does not parse as JSON"
                                                        : "was written for host MPI \"mpich 0.0.1\"";
        if (wrank == 0)
            MT_CHECK(strstr(said, want) && strstr(said, "ignored"),
                     "MT_TUNE=%s: rank 0 did not say \"%s ... ignored\" (said: %s)", mode, want,
                     said);
    }
    run_alltoall(c, "grid", 2, 40);
    check_state(c, "grid alltoall 2 ints", OPK_ALLTOALL, 8, 8, 0);
    int explored = 0, decided, sched, source, e2 = 0;
    if (!tune_off)
        mpitopo__tune_state(c, OPK_ALLTOALL, 8, 8, &explored, &decided, &sched, &source);
    /* Blocks of 3 ints: a signature of its own, explored apart. */
    run_alltoall(c, "grid", 3, 30);
    check_state(c, "grid alltoall 3 ints", OPK_ALLTOALL, 12, 12, 0);
    run_alltoall(c, "grid", 2, 10);
    if (!tune_off) {
        mpitopo__tune_state(c, OPK_ALLTOALL, 8, 8, &e2, &decided, &sched, &source);
        MT_CHECK(e2 == explored, "grid alltoall: %d more calls timed after the decision",
                 e2 - explored);
    }
    run_allgather(g, "ring graph", 30);
    check_state(g, "ring graph allgather", OPK_ALLGATHER, 4, 4, 0);
    run_alltoallv(g, "ring graph", 40, 20);
    check_state(g, "ring graph alltoallv", OPK_ALLTOALLV, 0, 0, 0);

    /* Round trip through the file: written now, taken by a new grid. */
    if (file && !mode && !tune_off) {
        mpitopo__tune_finalize();
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Comm c2 = grid();
        run_alltoall(c2, "second grid", 2, 5);
        check_state(c2, "second grid alltoall (from the file)", OPK_ALLTOALL, 8, 8, 1);
        MPI_Comm_free(&c2);
    }
    MPI_Comm_free(&c);
    MPI_Comm_free(&g);
    int rc = mt_finish("neighbor_tune");
    MPI_Finalize();
    return rc;
}
