/*
 * auto by measurement (issue 31). For a signature of a neighbourhood
 * operation (the operation and its allgather/alltoall block sizes: the
 * inputs of the cost model, which every process passes alike), the first
 * blocking calls run the candidates (select.c: mpitopo__sched_candidates)
 * in turn, timed on each process:
 *
 *   (a candidate's first run on the communicator is not timed: it sets up
 *   connections; it runs again, timed); then the rounds, the round-0 cut,
 *   the budget and the decision of coll/engine/explore.h, which the global
 *   collectives' tuner (coll/global/gcoll_tune.c) shares.
 *
 * Every process holds the same maxima, hence the same decision: processes
 * never decide locally. Afterwards the signature's calls request the
 * decision by name (its schedule is in the cache from its trials) and
 * nothing is timed. Nonblocking calls use a decision when there is one,
 * else the model; persistent _init calls the same, or the tuning file, and
 * without either they explore by their starts (below, "The exploration of
 * a persistent request").
 *
 * Why the key is (operation, block sizes) and not the full signature of
 * cache.c: which schedule runs must be the same on every process, and a
 * cache hit is local (a process whose v-form counts change misses alone).
 * The model's inputs are what every process has alike, so every process
 * looks up the same decision whatever its counts; the schedules are all
 * exact, so a decision measured with other counts can only be slower,
 * never wrong. Block sizes that change between calls make another key,
 * which is explored (or modelled) on its own.
 *
 * The tuning file (MPITOPO_TUNING_FILE, JSON read with json-c): rank 0 of
 * the communicator reads it when the communicator's tuner starts and
 * broadcasts its text, so every process sees the same entries; an entry
 * whose operation, topology class, process count, nodes, processes per
 * node and size class fit a signature decides it without exploring. Rank
 * 0 of MPI_COMM_WORLD writes the decisions back at MPI_Finalize.
 */
#include "coll/coll_internal.h"
#include "coll/engine/explore.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TUNE_MAXC 5      /* candidates: linear, combine, cart, node, mpi */
#define TUNE_KEYS 16     /* signatures per communicator */

enum { SRC_MEASURED = 0, SRC_FILE = 1, SRC_SINGLE = 2 };

static const char *const op_names[MPITOPO__OPK_COUNT] = {
    "allgather", "allgatherv", "alltoall", "alltoallv", "alltoallw"};

typedef struct tentry {
    int used, op;
    long long sb, rb;
    int decided, sched, source, model;
    int ncand, cand[TUNE_MAXC];
    mpitopo__explore_t x; /* the rounds (coll/engine/explore.c) */
    unsigned long long stamp;
} tentry_t;

/* An entry of a tuning file. */
typedef struct fentry {
    int op, nprocs, nodes, ppn, sched;
    long long size;
    char topo[64];
} fentry_t;

struct mpitopo__tune {
    char topo[64];      /* topology class */
    int nprocs, nodes, ppn;
    fentry_t *file;     /* entries of the tuning file that fit this communicator */
    int nfile;
    tentry_t e[TUNE_KEYS];
    unsigned long long clock;
    /* Schedules that have run once on this communicator: a first run
     * sets up connections and buffers (Open MPI connects peers on first
     * use), so it is not timed. */
    int warmed[TUNE_MAXC + 1];
    /* This process's last allreduce of the tuner (seconds): the
     * exploration budget counts the reductions too. */
    double red_s;
};

/* The tests' clock (mpitopo__tune_test_times): NULL, the calls' own. */
static double (*test_times)(int sched, void *arg);
static void *test_arg;

void mpitopo__tune_test_times(double (*times)(int sched, void *arg), void *arg)
{
    test_times = times;
    test_arg = arg;
}

/* ---- Job decisions, written at MPI_Finalize ---- */

static pthread_mutex_t job_lock = PTHREAD_MUTEX_INITIALIZER;
static fentry_t *job;
static int njob, capjob;
static double (*job_us)[TUNE_MAXC + 1]; /* per decision: microseconds by schedule, -1 none */

static long long size_class(long long sb, long long rb)
{
    long long b = sb > rb ? sb : rb, c = 1;
    if (sb == 0 && rb == 0)
        return 0; /* the v and w forms */
    while (c < b && c < (1LL << 40))
        c *= 2;
    return c;
}

static void job_add(const struct mpitopo__tune *t, const tentry_t *e)
{
    /* Only a failing MPI could refuse the hook; the decision then stays
     * with this job, as without a tuning file. */
    if (mpitopo__at_finalize(MPITOPO__FINI_TUNE, mpitopo__tune_finalize) != MPI_SUCCESS)
        return;
    pthread_mutex_lock(&job_lock);
    if (njob == capjob) {
        int cap = capjob ? 2 * capjob : 16;
        fentry_t *j = mpitopo__realloc(job, (size_t)cap * sizeof *job);
        if (j)
            job = j;
        double(*u)[TUNE_MAXC + 1] = j ? mpitopo__realloc(job_us, (size_t)cap * sizeof *job_us) : NULL;
        if (u) {
            job_us = u;
            capjob = cap;
        }
    }
    if (njob < capjob) {
        fentry_t *f = &job[njob];
        *f = (fentry_t){.op = e->op, .nprocs = t->nprocs, .nodes = t->nodes, .ppn = t->ppn,
                        .sched = e->sched, .size = size_class(e->sb, e->rb)};
        snprintf(f->topo, sizeof f->topo, "%s", t->topo);
        for (int s = 0; s <= TUNE_MAXC; s++)
            job_us[njob][s] = -1;
        for (int i = 0; i < e->ncand; i++)
            job_us[njob][e->cand[i]] = e->x.med[i] * 1e6;
        njob++;
    }
    pthread_mutex_unlock(&job_lock);
}

/* ---- The tuning file ---- */

static int same_key(const fentry_t *a, const fentry_t *b)
{
    return a->op == b->op && a->nprocs == b->nprocs && a->nodes == b->nodes && a->ppn == b->ppn &&
           a->size == b->size && strcmp(a->topo, b->topo) == 0;
}

#ifdef MPITOPO_HAVE_JSONC
static int json_int(json_object *o, const char *key, long long *v)
{
    json_object *x;
    if (!json_object_object_get_ex(o, key, &x) || !json_object_is_type(x, json_type_int))
        return 0;
    *v = json_object_get_int64(x);
    return 1;
}

static const char *json_str(json_object *o, const char *key)
{
    json_object *x;
    if (!json_object_object_get_ex(o, key, &x) || !json_object_is_type(x, json_type_string))
        return NULL;
    return json_object_get_string(x);
}

/* The entries of text (a tuning file); NULL and *why when it is not one
 * of this host MPI's. */
static fentry_t *parse_file(const char *text, int *n, char *why, size_t len)
{
    *n = 0;
    json_object *root, *list;
    fentry_t *out = NULL;
    if (!(root = mpitopo__tunefile_parse(text, mpitopo__host_name(), why, len)))
        return NULL;
    /* A file of the global collectives' decisions only has no section of ours. */
    if (!json_object_object_get_ex(root, "decisions", &list)) {
        out = mpitopo__calloc(1, sizeof *out);
        if (!out)
            snprintf(why, len, "out of memory");
        goto done;
    }
    if (!json_object_is_type(list, json_type_array)) {
        snprintf(why, len, "is not an mpitopo tuning file (\"decisions\" is not an array)");
        goto done;
    }
    size_t m = json_object_array_length(list);
    out = mpitopo__calloc(m ? m : 1, sizeof *out);
    if (!out) {
        snprintf(why, len, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < m; i++) {
        json_object *o = json_object_array_get_idx(list, i);
        long long np, nodes, ppn, size;
        const char *op = json_str(o, "op"), *topo = json_str(o, "topology"),
                   *sched = json_str(o, "schedule");
        fentry_t *f = &out[*n];
        f->op = -1;
        for (int k = 0; op && k < MPITOPO__OPK_COUNT; k++)
            if (strcmp(op, op_names[k]) == 0)
                f->op = k;
        f->sched = sched ? mpitopo__sched_parse(sched) : MPITOPO__SCHED_INVALID;
        if (f->op < 0 || f->sched <= MPITOPO__SCHED_AUTO || !topo || strlen(topo) >= sizeof f->topo ||
            !json_int(o, "nprocs", &np) || !json_int(o, "nodes", &nodes) ||
            !json_int(o, "ppn", &ppn) || !json_int(o, "size", &size) || np < 1 || np > 1 << 30 ||
            nodes < 1 || nodes > np || ppn < 1 || ppn > np || size < 0) {
            snprintf(why, len, "decision %zu is not {op, topology, nprocs, nodes, ppn, size, "
                               "schedule} with known names", i);
            mpitopo__free(out);
            out = NULL;
            goto done;
        }
        f->nprocs = (int)np;
        f->nodes = (int)nodes;
        f->ppn = (int)ppn;
        f->size = size;
        snprintf(f->topo, sizeof f->topo, "%s", topo);
        (*n)++;
    }
done:
    json_object_put(root);
    return out;
}
#endif

/* Rank 0 of n's private communicator reads the file, every process gets
 * its text (two broadcasts), parses it and keeps the entries that fit. */
static int load_file(mpitopo__nbr_t *n, struct mpitopo__tune *t, int rank)
{
    static int said; /* one line per process for a file it ignores */
    const char *tune_path = mpitopo__explore_path();
    char why[256] = "";
    char *text = NULL;
    int rc = mpitopo__tunefile_share(n->comm, &text, why, sizeof why);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!text) {
        if (why[0] && !said++)
            mpitopo__log(0, "MPITOPO_TUNING_FILE %s %s: ignored", tune_path, why);
        else if (rank == 0)
            mpitopo__log(1, "MPITOPO_TUNING_FILE %s does not exist yet: decisions are measured",
                         tune_path);
        return MPI_SUCCESS;
    }
#ifdef MPITOPO_HAVE_JSONC
    int m = 0;
    fentry_t *all = parse_file(text, &m, why, sizeof why);
    mpitopo__free(text);
    int fit = 0;
    for (int i = 0; all && i < m; i++)
        if (all[i].nprocs == t->nprocs && all[i].nodes == t->nodes && all[i].ppn == t->ppn)
            all[fit++] = all[i];
    if (all && m > 0 && fit == 0)
        snprintf(why, sizeof why,
                 "has %d decision(s), none for %d processes on %d node(s) x %d", m, t->nprocs,
                 t->nodes, t->ppn);
    if (!all || (m > 0 && fit == 0)) {
        mpitopo__free(all);
        if (rank == 0 && !said++)
            mpitopo__log(0, "MPITOPO_TUNING_FILE %s %s: ignored", tune_path, why);
        return MPI_SUCCESS;
    }
    t->file = all;
    t->nfile = fit;
    if (rank == 0)
        mpitopo__log(1, "MPITOPO_TUNING_FILE %s: %d decision(s) fit this communicator", tune_path,
                     fit);
#else
    mpitopo__free(text);
    (void)t;
    if (rank == 0 && !said++)
        mpitopo__log(0, "MPITOPO_TUNING_FILE %s: this mpitopo was built without json-c, tuning "
                        "files are unavailable: ignored",
                     tune_path);
#endif
    return MPI_SUCCESS;
}

/* ---- The tuner of a communicator ---- */

/* Topology class, process count, nodes and processes per node: one
 * allreduce for the degree spread, the node information, the file.
 * Collective over n's communicator. */
static int tune_start(mpitopo__nbr_t *n, const char *func)
{
    struct mpitopo__tune *t = mpitopo__calloc(1, sizeof *t);
    if (!t)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func, "out of memory for the tuner");
    int rank = 0, rc = mpitopo__nbr_private_comm(n, 1);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_rank(n->comm, &rank);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_size(n->comm, &t->nprocs);
    int deg[2] = {n->indegree + n->outdegree, -(n->indegree + n->outdegree)}, all[2];
    double t0 = PMPI_Wtime(); /* the budget's first estimate of a reduction */
    if (rc == MPI_SUCCESS)
        rc = PMPI_Allreduce(deg, all, 2, MPI_INT, MPI_MAX, n->comm);
    t->red_s = PMPI_Wtime() - t0;
    const mpitopo_nodeinfo_t *ni = NULL;
    int mrc = rc == MPI_SUCCESS ? mpitopo__comm_nodeinfo(n->comm, &ni) : MPITOPO_SUCCESS;
    if (rc != MPI_SUCCESS || mrc != MPITOPO_SUCCESS) {
        mpitopo__free(t);
        return rc != MPI_SUCCESS ? mpitopo__mpi_result(func, rc) : mrc;
    }
    t->nodes = ni->nnodes;
    t->ppn = ni->max_local_size;
    if (n->stencil)
        mpitopo__stencil_class(n->stencil, t->topo, sizeof t->topo);
    else if (n->kind == MPI_CART)
        snprintf(t->topo, sizeof t->topo, "cart:%dd", n->indegree / 2);
    else
        snprintf(t->topo, sizeof t->topo, "graph:deg%d-%d", -all[1], all[0]);
    if (mpitopo__explore_path() && (rc = load_file(n, t, rank)) != MPI_SUCCESS) {
        mpitopo__tune_free(t);
        return mpitopo__mpi_result(func, rc);
    }
    n->tune = t;
    return MPITOPO_SUCCESS;
}

void mpitopo__tune_free(struct mpitopo__tune *t)
{
    if (t)
        mpitopo__free(t->file);
    mpitopo__free(t);
}

static tentry_t *find(struct mpitopo__tune *t, int op, long long sb, long long rb)
{
    for (int i = 0; t && i < TUNE_KEYS; i++)
        if (t->e[i].used && t->e[i].op == op && t->e[i].sb == sb && t->e[i].rb == rb)
            return &t->e[i];
    return NULL;
}

/* A free entry, else the least recently used (the same on every process:
 * every process makes the same blocking calls). */
static tentry_t *victim(struct mpitopo__tune *t)
{
    tentry_t *best = &t->e[0];
    for (int i = 0; i < TUNE_KEYS; i++) {
        if (!t->e[i].used)
            return &t->e[i];
        if (t->e[i].stamp < best->stamp)
            best = &t->e[i];
    }
    return best;
}

/* The file's decision for e, if it is one of e's candidates. */
static int from_file(const struct mpitopo__tune *t, tentry_t *e)
{
    fentry_t k = {.op = e->op, .nprocs = t->nprocs, .nodes = t->nodes, .ppn = t->ppn,
                  .size = size_class(e->sb, e->rb)};
    snprintf(k.topo, sizeof k.topo, "%s", t->topo);
    for (int i = 0; i < t->nfile; i++)
        if (same_key(&t->file[i], &k))
            for (int c = 0; c < e->ncand; c++)
                if (e->cand[c] == t->file[i].sched) {
                    e->decided = 1;
                    e->sched = e->cand[c];
                    e->source = SRC_FILE;
                    return 1;
                }
    return 0;
}

static int entry_new(mpitopo__nbr_t *n, int op, long long sb, long long rb, tentry_t **out,
                     const char *func)
{
    struct mpitopo__tune *t = n->tune;
    tentry_t *e = victim(t);
    *e = (tentry_t){.used = 1, .op = op, .sb = sb, .rb = rb, .sched = -1};
    int rc = mpitopo__sched_candidates(n, op, sb, rb, e->cand, &e->ncand, &e->model, func);
    if (rc != MPITOPO_SUCCESS) {
        e->used = 0;
        return rc;
    }
    mpitopo__explore_init(&e->x, e->ncand);
    if (!from_file(t, e) && e->ncand == 1) {
        e->decided = 1;
        e->sched = e->cand[0];
        e->source = SRC_SINGLE;
    }
    *out = e;
    return MPITOPO_SUCCESS;
}

int mpitopo__tune_pick(mpitopo__nbr_t *n, mpitopo__opkind_t op, long long sb, long long rb, int form,
                       mpitopo__sched_t *req, mpitopo__trial_t *trial, const char *func)
{
    *trial = (mpitopo__trial_t){NULL, 0, 0};
    if (!mpitopo__explore_on() || *req != MPITOPO__SCHED_AUTO)
        return MPITOPO_SUCCESS;
    tentry_t *e = find(n->tune, op, sb, rb);
    if (form == 0 || (e && e->decided)) {
        if (e && e->decided)
            *req = (mpitopo__sched_t)e->sched;
        return MPITOPO_SUCCESS;
    }
    int rc = n->tune ? MPITOPO_SUCCESS : tune_start(n, func);
    if (rc == MPITOPO_SUCCESS && !e)
        rc = entry_new(n, op, sb, rb, &e, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    e->stamp = ++n->tune->clock;
    if (e->decided) {
        *req = (mpitopo__sched_t)e->sched;
        return MPITOPO_SUCCESS;
    }
    if (form != 1) {
        trial->entry = e; /* persistent, undecided: explored by its starts */
        trial->slot = -1;
        return MPITOPO_SUCCESS;
    }
    trial->entry = e;
    trial->slot = mpitopo__explore_next(&e->x);
    trial->warm = !n->tune->warmed[e->cand[trial->slot]];
    *req = (mpitopo__sched_t)e->cand[trial->slot];
    return MPITOPO_SUCCESS;
}

/* The verbose line of a decision (rank 0); what: "" or " (persistent)". */
static void say(mpitopo__nbr_t *n, const tentry_t *e, const char *what)
{
    const double *med = e->x.med;
    int rank = 0;
    if (mpitopo__verbose() < 1 || PMPI_Comm_rank(n->comm, &rank) != MPI_SUCCESS || rank != 0)
        return;
    char line[512];
    int len = 0;
    for (int i = 0; i < e->ncand && len < (int)sizeof line; i++)
        len += snprintf(line + len, sizeof line - (size_t)len, "%s%s %.2f us%s", i ? ", " : "",
                        mpitopo__sched_name(e->cand[i]), med[i] * 1e6,
                        e->x.alive[i] ? "" : " (stopped after 1 trial)");
    mpitopo__log(1, "neighbor_%s (blocks %lld/%lld B) tuned over %d %s: %s -> %s (model: %s)",
                 op_names[e->op], e->sb, e->rb, e->x.explored, *what ? "starts" : "calls", line,
                 mpitopo__sched_name(e->sched), mpitopo__sched_name(e->model));
}

/* The decision from the reduced times, and its verbose line. */
static void decide(mpitopo__nbr_t *n, tentry_t *e, int best)
{
    e->decided = 1;
    e->sched = e->cand[best];
    e->source = SRC_MEASURED;
    job_add(n->tune, e);
    say(n, e, "");
}

int mpitopo__tune_record(mpitopo__nbr_t *n, const mpitopo__trial_t *trial, double seconds,
                         const char *func)
{
    tentry_t *e = trial->entry;
    if (!e)
        return MPITOPO_SUCCESS;
    e->x.explored++;
    if (trial->warm) {
        n->tune->warmed[e->cand[trial->slot]] = 1; /* the same candidate runs again, timed */
        return MPITOPO_SUCCESS;
    }
    if (test_times && seconds < MPITOPO__EXPLORE_FAILED)
        seconds = test_times(e->cand[trial->slot], test_arg);
    double red_in = test_times ? test_times(MPITOPO__SCHED_AUTO, test_arg) : n->tune->red_s;
    int best = -1, rc = mpitopo__explore_record(&e->x, trial->slot, seconds, n->comm, red_in,
                                                &n->tune->red_s, &best);
    if (rc == MPI_SUCCESS && best >= 0)
        decide(n, e, best);
    return rc == MPI_SUCCESS ? MPITOPO_SUCCESS : mpitopo__mpi_result(func, rc);
}

/* ---- The exploration of a persistent request, by its starts ----
 *
 * An undecided auto _init call builds every candidate of its signature as
 * a persistent request of its own, behind one request (the shell) that
 * runs one of them on each start (request.c: pick and done). The rounds
 * are those of the blocking calls (explore.h) on the persistent request's
 * own bookkeeping; what differs is the reduction: a start is local, and
 * the completions that end a round are seen in waits and tests at moments
 * that differ between processes, so the reduction is neither made nor
 * posted there. The start after a round's last trial posts it (Iallreduce,
 * on the private communicator, in start order: the same on every process)
 * and runs the model's choice, untimed; the start after that waits for it
 * (every process posted it at its previous start) and goes on with what it
 * decided. The decision stays with the request; the signature's entry
 * takes it too when no blocking call has explored it yet, so that later
 * calls and the tuning file have it. A reduction still posted when the
 * request is freed completes at the next shell's creation or MPI_Finalize
 * (a nonblocking collective cannot be freed).
 */
typedef struct ptune {
    mpitopo__nbr_t *n;
    tentry_t *e;  /* the signature's entry at _init, and a copy of it */
    tentry_t sig; /* (op, sizes, candidates, model) */
    mpitopo_request_t req[TUNE_MAXC];
    int warmed[TUNE_MAXC]; /* by slot: its first start is behind it */
    mpitopo__explore_t x;
    int slot, timed, due, decided, pending;
    MPI_Request q;
    double in[MPITOPO__EXPLORE_PACK], mx[MPITOPO__EXPLORE_PACK];
    struct ptune *next_orphan;
} ptune_t;

static pthread_mutex_t orphan_lock = PTHREAD_MUTEX_INITIALIZER;
static ptune_t *orphans;

static void ptune_release(ptune_t *pt)
{
    for (int i = 0; i < TUNE_MAXC; i++)
        mpitopo__request_release(pt->req[i]);
    mpitopo__free(pt);
}

/* Complete the reductions of freed requests: waiting (MPI_Finalize) or
 * those done already. */
static void orphans_reap(int wait)
{
    pthread_mutex_lock(&orphan_lock);
    for (ptune_t **at = &orphans; *at;) {
        ptune_t *pt = *at;
        int flag = 0;
        if (wait)
            PMPI_Wait(&pt->q, MPI_STATUS_IGNORE);
        else if (PMPI_Test(&pt->q, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS || !flag)
            flag = pt->q == MPI_REQUEST_NULL;
        if (wait || flag) {
            *at = pt->next_orphan;
            mpitopo__free(pt);
        } else {
            at = &pt->next_orphan;
        }
    }
    pthread_mutex_unlock(&orphan_lock);
}

static void orphans_finalize(void)
{
    orphans_reap(1);
}

static void ptune_free(void *ctx)
{
    ptune_t *pt = ctx;
    if (!pt->pending) {
        ptune_release(pt);
        return;
    }
    for (int i = 0; i < TUNE_MAXC; i++) {
        mpitopo__request_release(pt->req[i]);
        pt->req[i] = NULL;
    }
    int flag = 0;
    if (PMPI_Test(&pt->q, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && flag) {
        mpitopo__free(pt);
        return;
    }
    /* Only a failing MPI could refuse the hook: the request then stays
     * pending until the process exits. */
    mpitopo__at_finalize(MPITOPO__FINI_PTUNE, orphans_finalize);
    pthread_mutex_lock(&orphan_lock);
    pt->next_orphan = orphans;
    orphans = pt;
    pthread_mutex_unlock(&orphan_lock);
}

static void ptune_decided(ptune_t *pt, int best)
{
    pt->decided = 1;
    pt->slot = best;
    for (int i = 0; i < pt->sig.ncand; i++)
        if (i != best) {
            mpitopo__request_release(pt->req[i]);
            pt->req[i] = NULL;
        }
    tentry_t *e = pt->e;
    if (e->used && e->op == pt->sig.op && e->sb == pt->sig.sb && e->rb == pt->sig.rb &&
        !e->decided && e->x.explored == 0) {
        e->x = pt->x;
        decide(pt->n, e, best);
        return;
    }
    pt->sig.x = pt->x;
    pt->sig.sched = pt->sig.cand[best];
    say(pt->n, &pt->sig, "persistent");
}

static int ptune_pick(mpitopo_request_t shell, mpitopo_request_t *in)
{
    ptune_t *pt = shell->ctx;
    if (pt->pending) {
        int rc = PMPI_Wait(&pt->q, MPI_STATUS_IGNORE);
        pt->pending = 0;
        if (rc != MPI_SUCCESS)
            return mpitopo__mpi_result("mpitopo_start", rc);
        int best = mpitopo__explore_apply(&pt->x, pt->mx);
        if (best >= 0)
            ptune_decided(pt, best);
    }
    pt->timed = 0;
    if (pt->decided) {
        *in = pt->req[pt->slot];
        return MPITOPO_SUCCESS;
    }
    pt->x.explored++;
    if (pt->due) {
        int count = mpitopo__explore_pack(&pt->x, 0, pt->in);
        int rc = PMPI_Iallreduce(pt->in, pt->mx, count, MPI_DOUBLE, MPI_MAX, pt->n->comm, &pt->q);
        if (rc != MPI_SUCCESS)
            return mpitopo__mpi_result("mpitopo_start", rc);
        pt->due = 0;
        pt->pending = 1;
        *in = pt->req[0];
        return MPITOPO_SUCCESS;
    }
    pt->slot = mpitopo__explore_next(&pt->x);
    pt->timed = pt->warmed[pt->slot];
    pt->warmed[pt->slot] = 1;
    pt->n->tune->warmed[pt->sig.cand[pt->slot]] = 1;
    *in = pt->req[pt->slot];
    return MPITOPO_SUCCESS;
}

static void ptune_done(mpitopo_request_t shell, double seconds, int rc)
{
    ptune_t *pt = shell->ctx;
    if (!pt->timed)
        return;
    if (rc != MPITOPO_SUCCESS)
        seconds = MPITOPO__EXPLORE_FAILED;
    else if (test_times)
        seconds = test_times(pt->sig.cand[pt->slot], test_arg);
    pt->due = mpitopo__explore_note(&pt->x, pt->slot, seconds);
}

int mpitopo__ptune_new(mpitopo__nbr_t *n, const mpitopo__trial_t *trial, mpitopo_request_t *shell,
                       int *ncand, int *cand, const char *func)
{
    orphans_reap(0);
    tentry_t *e = trial->entry;
    ptune_t *pt = mpitopo__calloc(1, sizeof *pt);
    mpitopo_request_t r = pt ? mpitopo__request_new(n, 0, 0) : NULL;
    if (!r) {
        mpitopo__free(pt);
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func, "out of memory for a tuned request");
    }
    pt->n = n;
    pt->e = e;
    pt->sig = *e;
    pt->q = MPI_REQUEST_NULL;
    mpitopo__explore_init(&pt->x, e->ncand);
    /* A schedule that has run on the communicator (a blocking call, an
     * earlier request) has its connections: its first start is timed. */
    for (int i = 0; i < e->ncand; i++)
        pt->warmed[i] = n->tune->warmed[e->cand[i]];
    r->persistent = 1;
    r->pick = ptune_pick;
    r->done = ptune_done;
    r->ctx = pt;
    r->ctx_free = ptune_free;
    *ncand = e->ncand;
    memcpy(cand, e->cand, sizeof e->cand);
    *shell = r;
    return MPITOPO_SUCCESS;
}

void mpitopo__ptune_set(mpitopo_request_t shell, int i, mpitopo_request_t r)
{
    ptune_t *pt = shell->ctx;
    pt->req[i] = r;
}

int mpitopo__ptune_state(mpitopo_request_t r, int *ncand, int *explored, int *decided, int *sched)
{
    if (!r || r->pick != ptune_pick)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "not a persistent request exploring its starts");
    const ptune_t *pt = r->ctx;
    *ncand = pt->sig.ncand;
    *explored = pt->x.explored;
    *decided = pt->decided;
    *sched = pt->decided ? pt->sig.cand[pt->slot] : -1;
    return MPITOPO_SUCCESS;
}

int mpitopo__tune_entry_state(struct mpitopo__tune *t, int op, long long sb, long long rb,
                              int *explored, int *decided, int *sched, int *source)
{
    const tentry_t *e = find(t, op, sb, rb);
    if (!e)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "no tuner state for this signature");
    *explored = e->x.explored;
    *decided = e->decided;
    *sched = e->decided ? e->sched : -1;
    *source = e->source;
    return MPITOPO_SUCCESS;
}

/* ---- Writing the decisions ---- */

#ifdef MPITOPO_HAVE_JSONC
static json_object *entry_json(const fentry_t *f, const double *us)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "op", json_object_new_string(op_names[f->op]));
    json_object_object_add(o, "topology", json_object_new_string(f->topo));
    json_object_object_add(o, "nprocs", json_object_new_int(f->nprocs));
    json_object_object_add(o, "nodes", json_object_new_int(f->nodes));
    json_object_object_add(o, "ppn", json_object_new_int(f->ppn));
    json_object_object_add(o, "size", json_object_new_int64(f->size));
    json_object_object_add(o, "schedule", json_object_new_string(mpitopo__sched_name(f->sched)));
    if (us) {
        json_object *m = json_object_new_object();
        for (int s = 0; s <= TUNE_MAXC; s++)
            if (us[s] >= 0)
                json_object_object_add(m, mpitopo__sched_name(s), json_object_new_double(us[s]));
        json_object_object_add(o, "measured_us", m);
    }
    return o;
}

/* For mpitopo__tunefile_merge (under job_lock): job_us holds the measured
 * times of this job's decisions. */
static int same_entry(const void *a, const void *b)
{
    return same_key(a, b);
}

static json_object *job_json(const void *f, int j)
{
    return entry_json(f, j >= 0 ? job_us[j] : NULL);
}

static void write_file(void)
{
    char why[256] = "";
    int nold = 0;
    char *text = mpitopo__tunefile_slurp(mpitopo__explore_path(), why, sizeof why);
    fentry_t *old = text ? parse_file(text, &nold, why, sizeof why) : NULL;
    mpitopo__free(text);
    json_object *list = mpitopo__tunefile_merge(old, nold, job, njob, sizeof *job, same_entry, job_json);
    mpitopo__free(old);
    mpitopo__tunefile_write("decisions", list, mpitopo__host_name(), njob);
}
#endif

void mpitopo__tune_finalize(void)
{
    int rank = -1;
    pthread_mutex_lock(&job_lock);
    if (mpitopo__explore_on() && mpitopo__explore_path() && njob > 0 && PMPI_Comm_rank(MPI_COMM_WORLD, &rank) == MPI_SUCCESS &&
        rank == 0) {
#ifdef MPITOPO_HAVE_JSONC
        write_file();
#endif
    }
    mpitopo__free(job);
    mpitopo__free(job_us);
    job = NULL;
    job_us = NULL;
    njob = capjob = 0;
    pthread_mutex_unlock(&job_lock);
}
