/*
 * auto of the global collectives by measurement (issue 31). For a
 * signature (operation, the bytes of its blocks, the root of bcast and
 * gather or the commutativity of allreduce's op: what every process passes
 * alike), the first blocking calls run the candidates in turn, timed: the
 * model's choice (the algorithm of the size rule with its heuristic, or
 * the hierarchical allgather where the distance model says it pays), the
 * host MPI's own call, and every other algorithm the operation has with
 * the original order and with the reordered one (when the heuristic's
 * order is kept under the cost model; otherwise it is the same candidate),
 * less the flat allgathers the latency model puts far behind (ruled_out).
 * The rounds, the round-0 cut, the budget and the decision are those of
 * the neighbourhood tuner (coll/engine/explore.c); the allreduces run on
 * the user's communicator, inside the blocking call every process makes.
 * Later calls of the signature run the decision, untimed; nonblocking
 * calls use a decision when there is one, else the model.
 *
 * Why the op's handle is not in the key: a user-defined op may have
 * another handle on every process, and the key must find the same entry
 * everywhere. The algorithms are exact (a non-commutative op keeps the
 * rank order), so a decision measured with another op can only be slower.
 *
 * The tuning file: section "collectives" of MPITOPO_TUNING_FILE (the
 * neighbourhood tuner owns "decisions"), entries {op, nprocs, nodes, ppn,
 * size (the power of two at or above the bytes), class ("root0" or "root"
 * for bcast and gather, "commutative" or "noncommutative" for allreduce,
 * "-" for allgather), choice ("mpi" or ALGORITHM:HEURISTIC, as ring:none,
 * ring:auto)} and the medians measured.
 */
#include "coll/global/gcoll_internal.h"
#include "coll/engine/explore.h"
#include "map/collmap.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define GT_KEYS 16 /* signatures per communicator */
#define GT_MAXC MPITOPO__EXPLORE_MAXC

enum { SRC_MEASURED = 0, SRC_FILE = 1, SRC_SINGLE = 2 };

static const char *const op_names[MPITOPO__COLL_NOPS] = {"allgather", "bcast", "gather",
                                                          "allreduce"};

typedef struct gcand {
    int alg, heur;
} gcand_t;

typedef struct gentry {
    int used, op, cls;
    long long bytes;
    int decided, slot, source;
    int ncand;
    gcand_t cand[GT_MAXC];
    unsigned ruled_out; /* algorithms (bits 1 << alg) the model left out */
    mpitopo__explore_t x;
    unsigned long long stamp;
} gentry_t;

/* A decision of the file or of this job. */
typedef struct gfile {
    int op, nprocs, nodes, ppn, cls;
    long long size;
    gcand_t choice;
    int ncand;
    gcand_t cand[GT_MAXC];
    double us[GT_MAXC]; /* this job's medians; -1 none */
} gfile_t;

struct gtune {
    int nprocs, nodes, ppn;
    gfile_t *file;
    int nfile;
    gentry_t e[GT_KEYS];
    unsigned long long clock;
    unsigned char warmed[MPITOPO__COLL_NOPS][MPITOPO__GA_COUNT][MPITOPO__GH_COUNT];
    double red_s; /* this process's last reduction of the tuner (seconds) */
};

static double (*test_times)(int alg, int heur, void *arg);
static void *test_arg;

void mpitopo__gtune_test_times(double (*times)(int alg, int heur, void *arg), void *arg)
{
    test_times = times;
    test_arg = arg;
}

static void gtune_free(struct gtune *t)
{
    if (t)
        mpitopo__free(t->file);
    mpitopo__free(t);
}

static long long size_class(long long b)
{
    long long c = 1;
    while (c < b && c < (1LL << 40))
        c *= 2;
    return c;
}

/* The class in the file: the root matters as 0 or another rank. */
static int file_class(int op, int cls)
{
    if (op == MPITOPO__COLL_OP_BCAST || op == MPITOPO__COLL_OP_GATHER)
        return cls != 0;
    return op == MPITOPO__COLL_OP_ALLREDUCE ? cls : 0;
}

static const char *class_name(int op, int fcls)
{
    if (op == MPITOPO__COLL_OP_BCAST || op == MPITOPO__COLL_OP_GATHER)
        return fcls ? "root" : "root0";
    if (op == MPITOPO__COLL_OP_ALLREDUCE)
        return fcls ? "commutative" : "noncommutative";
    return "-";
}

static void cand_name(gcand_t c, char *buf, size_t len)
{
    if (c.alg == MPITOPO__GA_MPI)
        snprintf(buf, len, "mpi");
    else
        snprintf(buf, len, "%s:%s", mpitopo__galg_name((mpitopo__galg_t)c.alg),
                 mpitopo__gheur_name((mpitopo__gheur_t)c.heur));
}

/* ---- Job decisions, written at MPI_Finalize ---- */

static pthread_mutex_t job_lock = PTHREAD_MUTEX_INITIALIZER;
static gfile_t *job;
static int njob, capjob;

static void job_add(const struct gtune *t, const gentry_t *e)
{
    if (mpitopo__at_finalize(MPITOPO__FINI_GTUNE, mpitopo__gtune_finalize) != MPI_SUCCESS)
        return; /* the decision stays with this job */
    pthread_mutex_lock(&job_lock);
    if (njob == capjob) {
        int cap = capjob ? 2 * capjob : 16;
        gfile_t *j = mpitopo__realloc(job, (size_t)cap * sizeof *job);
        if (j) {
            job = j;
            capjob = cap;
        }
    }
    if (njob < capjob) {
        gfile_t *f = &job[njob++];
        *f = (gfile_t){.op = e->op, .nprocs = t->nprocs, .nodes = t->nodes, .ppn = t->ppn,
                       .cls = file_class(e->op, e->cls), .size = size_class(e->bytes),
                       .choice = e->cand[e->slot], .ncand = e->ncand};
        for (int i = 0; i < e->ncand; i++) {
            f->cand[i] = e->cand[i];
            f->us[i] = e->x.med[i] * 1e6;
        }
    }
    pthread_mutex_unlock(&job_lock);
}

static int same_key(const gfile_t *a, const gfile_t *b)
{
    return a->op == b->op && a->nprocs == b->nprocs && a->nodes == b->nodes && a->ppn == b->ppn &&
           a->size == b->size && a->cls == b->cls;
}

/* ---- The tuning file ---- */

#ifdef MPITOPO_HAVE_JSONC
static int json_ll(json_object *o, const char *key, long long *v)
{
    json_object *x;
    if (!json_object_object_get_ex(o, key, &x) || !json_object_is_type(x, json_type_int))
        return 0;
    *v = json_object_get_int64(x);
    return 1;
}

static const char *json_s(json_object *o, const char *key)
{
    json_object *x;
    if (!json_object_object_get_ex(o, key, &x) || !json_object_is_type(x, json_type_string))
        return NULL;
    return json_object_get_string(x);
}

/* "mpi" or "ALG:HEURISTIC"; alg -1 when not one. */
static gcand_t parse_choice(const char *s)
{
    gcand_t c = {-1, MPITOPO__GH_NONE};
    if (!s)
        return c;
    if (strcmp(s, "mpi") == 0)
        return (gcand_t){MPITOPO__GA_MPI, MPITOPO__GH_NONE};
    const char *colon = strchr(s, ':');
    if (!colon)
        return c;
    int a = -1, h = -1;
    for (int i = MPITOPO__GA_RD; i < MPITOPO__GA_COUNT; i++) {
        const char *n = mpitopo__galg_name((mpitopo__galg_t)i);
        if (strlen(n) == (size_t)(colon - s) && strncmp(s, n, strlen(n)) == 0)
            a = i;
    }
    for (int i = 0; i < MPITOPO__GH_COUNT; i++)
        if (strcmp(colon + 1, mpitopo__gheur_name((mpitopo__gheur_t)i)) == 0)
            h = i;
    if (a >= 0 && h >= 0)
        c = (gcand_t){a, h};
    return c;
}

/* One entry of section "collectives"; 0 when it is not one. */
static int parse_entry(json_object *o, gfile_t *f)
{
    long long np, nodes, ppn, size;
    const char *op = json_s(o, "op"), *cls = json_s(o, "class");
    memset(f, 0, sizeof *f);
    f->op = -1;
    for (int k = 0; op && k < MPITOPO__COLL_NOPS; k++)
        if (strcmp(op, op_names[k]) == 0)
            f->op = k;
    f->choice = parse_choice(json_s(o, "choice"));
    if (f->op < 0 || f->choice.alg < 0 || !cls || !json_ll(o, "nprocs", &np) ||
        !json_ll(o, "nodes", &nodes) || !json_ll(o, "ppn", &ppn) || !json_ll(o, "size", &size) ||
        np < 1 || np > 1 << 30 || nodes < 1 || nodes > np || ppn < 1 || ppn > np || size < 0)
        return 0;
    f->cls = f->op != MPITOPO__COLL_OP_ALLGATHER && strcmp(cls, class_name(f->op, 1)) == 0;
    if (f->cls == 0 && strcmp(cls, class_name(f->op, 0)) != 0)
        return 0;
    f->nprocs = (int)np;
    f->nodes = (int)nodes;
    f->ppn = (int)ppn;
    f->size = size;
    return 1;
}

/* The entries of section "collectives" of text; NULL and why[] when the
 * file is not one of this host MPI's or an entry is not one. */
static gfile_t *parse_file(const char *text, int *n, char *why, size_t len)
{
    *n = 0;
    json_object *root = mpitopo__tunefile_parse(text, mpitopo__host_name(), why, len), *list;
    if (!root)
        return NULL;
    gfile_t *out = NULL;
    size_t m = 0;
    if (json_object_object_get_ex(root, "collectives", &list)) {
        if (!json_object_is_type(list, json_type_array)) {
            snprintf(why, len, "has a \"collectives\" section that is not an array");
            goto done;
        }
        m = json_object_array_length(list);
    }
    if (!(out = mpitopo__calloc(m ? m : 1, sizeof *out))) {
        snprintf(why, len, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < m; i++, (*n)++)
        if (!parse_entry(json_object_array_get_idx(list, i), &out[i])) {
            snprintf(why, len, "collectives entry %zu is not {op, nprocs, nodes, ppn, size, class, "
                               "choice} with known names", i);
            mpitopo__free(out);
            out = NULL;
            *n = 0;
            goto done;
        }
done:
    json_object_put(root);
    return out;
}
#endif

/* Every process gets the file's text from rank 0 and keeps the entries
 * that fit this communicator. Collective over s->user. */
static int load_file(gstate_t *s, struct gtune *t)
{
    static int said; /* one line per process for a file it ignores */
    const char *path = mpitopo__explore_path();
    char why[256] = "", *text = NULL;
    int rc = mpitopo__tunefile_share(s->user, &text, why, sizeof why);
    if (rc != MPI_SUCCESS || !text) {
        if (rc == MPI_SUCCESS && why[0] && !said++)
            mpitopo__log(0, "MPITOPO_TUNING_FILE %s %s: ignored", path, why);
        return rc;
    }
#ifdef MPITOPO_HAVE_JSONC
    int m = 0, fit = 0;
    gfile_t *all = parse_file(text, &m, why, sizeof why);
    for (int i = 0; all && i < m; i++)
        if (all[i].nprocs == t->nprocs && all[i].nodes == t->nodes && all[i].ppn == t->ppn)
            all[fit++] = all[i];
    if (all && m > 0 && fit == 0)
        snprintf(why, sizeof why, "has %d collectives decision(s), none for %d processes on %d "
                 "node(s) x %d", m, t->nprocs, t->nodes, t->ppn);
    if (!all || (m > 0 && fit == 0)) {
        mpitopo__free(all);
        if (s->rank == 0 && !said++)
            mpitopo__log(0, "MPITOPO_TUNING_FILE %s %s: ignored", path, why);
    } else {
        t->file = all;
        t->nfile = fit;
    }
#else
    (void)t;
    if (s->rank == 0 && !said++)
        mpitopo__log(0, "MPITOPO_TUNING_FILE %s: this mpitopo was built without json-c, tuning "
                        "files are unavailable: ignored", path);
#endif
    mpitopo__free(text);
    return MPI_SUCCESS;
}

/* Process count, nodes, processes per node, the file. Collective. */
static int tune_start(gstate_t *s, const char *func)
{
    struct gtune *t = mpitopo__calloc(1, sizeof *t);
    if (!t)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func, "out of memory for the tuner");
    const mpitopo_nodeinfo_t *ni = NULL;
    int rc = mpitopo__comm_nodeinfo(s->user, &ni);
    if (rc != MPITOPO_SUCCESS) {
        mpitopo__free(t);
        return rc;
    }
    t->nprocs = s->size;
    t->nodes = ni->nnodes;
    t->ppn = ni->max_local_size;
    if (mpitopo__explore_path() && (rc = load_file(s, t)) != MPI_SUCCESS) {
        gtune_free(t);
        return mpitopo__mpi_result(func, rc);
    }
    s->tune = t;
    s->tune_free = gtune_free;
    return MPITOPO_SUCCESS;
}

static gentry_t *find(struct gtune *t, int op, long long bytes, int cls)
{
    for (int i = 0; t && i < GT_KEYS; i++)
        if (t->e[i].used && t->e[i].op == op && t->e[i].bytes == bytes && t->e[i].cls == cls)
            return &t->e[i];
    return NULL;
}

/* A free entry, else the least recently used (the same on every process:
 * stamps move in blocking calls only). */
static gentry_t *victim(struct gtune *t)
{
    gentry_t *best = &t->e[0];
    for (int i = 0; i < GT_KEYS; i++) {
        if (!t->e[i].used)
            return &t->e[i];
        if (t->e[i].stamp < best->stamp)
            best = &t->e[i];
    }
    return best;
}

/* Add candidate k unless e has it already. */
static void add(gentry_t *e, gcand_t k)
{
    for (int i = 0; i < e->ncand; i++)
        if (e->cand[i].alg == k.alg && e->cand[i].heur == k.heur)
            return;
    if (e->ncand < GT_MAXC)
        e->cand[e->ncand++] = k;
}

/* The order-cost model's algorithm of op (gcoll_order.c). */
static int model_alg(int op, int alg)
{
    switch (op) {
    case MPITOPO__COLL_OP_ALLGATHER:
        return alg == MPITOPO__GA_RD     ? MPITOPO__COLL_ALG_ALLGATHER_RD
               : alg == MPITOPO__GA_RING ? MPITOPO__COLL_ALG_ALLGATHER_RING
                                         : MPITOPO__COLL_ALG_ALLGATHER_BRUCK;
    case MPITOPO__COLL_OP_BCAST:
        return MPITOPO__COLL_ALG_BCAST_BINOMIAL;
    case MPITOPO__COLL_OP_GATHER:
        return MPITOPO__COLL_ALG_GATHER_BINOMIAL;
    default:
        return MPITOPO__COLL_ALG_ALLREDUCE_RD;
    }
}

/* Candidate (alg, heur) as it runs: with heuristic none when the
 * heuristic's order is not kept (then both are the same candidate).
 * Collective on first use of the order. */
static int effective(gstate_t *s, int op, int alg, int heur, int root, long long bytes,
                     gcand_t *out, const char *func)
{
    *out = (gcand_t){alg, heur};
    if (alg == MPITOPO__GA_MPI) {
        out->heur = MPITOPO__GH_NONE;
        return MPITOPO_SUCCESS;
    }
    if (heur == MPITOPO__GH_NONE)
        return MPITOPO_SUCCESS;
    int rc, reordered;
    if (alg == MPITOPO__GA_HIER || alg == MPITOPO__GA_HIERB) {
        const ghier_t *h;
        rc = mpitopo__gstate_hier(s, heur, alg == MPITOPO__GA_HIERB, (double)bytes, &h, func);
        reordered = rc == MPITOPO_SUCCESS && (h->leaders_reordered || h->nodes_reordered);
    } else {
        gorder_t *o;
        rc = mpitopo__gstate_order(s, model_alg(op, alg), heur, root, (double)bytes, &o, func);
        reordered = rc == MPITOPO_SUCCESS && o->reordered;
    }
    if (!reordered)
        out->heur = MPITOPO__GH_NONE;
    return rc;
}

/* The model's choice (gcoll_api.c's rule for auto). */
static int model_choice(gstate_t *s, const mpitopo__gconf_t *c, int op, long long bytes, int heur,
                        int root, gcand_t *out, const char *func)
{
    int alg = op == MPITOPO__COLL_OP_ALLGATHER
                  ? (bytes >= c->switch_bytes ? MPITOPO__GA_RING
                     : (s->size & (s->size - 1)) == 0 ? MPITOPO__GA_RD
                                                      : MPITOPO__GA_BRUCK)
              : op == MPITOPO__COLL_OP_ALLREDUCE ? MPITOPO__GA_RD
                                                 : MPITOPO__GA_BINOMIAL;
    if (op == MPITOPO__COLL_OP_ALLGATHER) {
        gorder_t *o;
        int pays = 0;
        int rc = mpitopo__gstate_order(s, model_alg(op, alg), heur, 0, (double)bytes, &o, func);
        if (rc == MPITOPO_SUCCESS)
            rc = mpitopo__gstate_hier_pays(s, o, (double)bytes, &pays, func);
        if (rc != MPITOPO_SUCCESS)
            return rc;
        if (pays)
            alg = pays;
    }
    return effective(s, op, alg, heur, root, bytes, out, func);
}

/* The latency model's prediction (us, mpitopo__model_time: the busiest
 * process's dependent rounds, messages and bytes) of flat allgather alg on
 * p processes with blocks of b bytes: every algorithm sends (p - 1) blocks;
 * recursive doubling and Bruck take ceil(log2 p) rounds of one exchange,
 * the ring p - 1. The order does not change these counts. */
static double flat_time(const mpitopo__model_t *m, int alg, int p, double b)
{
    int steps = 0;
    while ((1 << steps) < p)
        steps++;
    double rounds = alg == MPITOPO__GA_RING ? p - 1 : steps;
    return mpitopo__model_time(m, rounds, 2 * rounds, (p - 1) * b);
}

/*
 * Whether the model rules out flat algorithm alg for e: its prediction
 * (flat_time) exceeds MPITOPO__TUNE_RULE_OUT times the cheapest flat
 * algorithm's, the neighbourhood tuner's rule. So
 * the allgather's ring at small blocks (p - 1 rounds against log2 p),
 * whose single trial would cost more than the whole exploration may, is
 * not timed; the hierarchical allgathers and the host MPI's call never
 * are ruled out. A model file that does not read: nothing ruled out. The
 * same on every process.
 */
static int ruled_out(const gstate_t *s, const gentry_t *e, int alg)
{
    const mpitopo__model_t *m;
    if (e->op != MPITOPO__COLL_OP_ALLGATHER ||
        (alg != MPITOPO__GA_RD && alg != MPITOPO__GA_BRUCK && alg != MPITOPO__GA_RING))
        return 0;
    if (mpitopo__model(&m, "auto") != MPITOPO_SUCCESS) {
        mpitopo__clear_error();
        return 0;
    }
    double b = (double)e->bytes, best = flat_time(m, MPITOPO__GA_BRUCK, s->size, b);
    return flat_time(m, alg, s->size, b) > MPITOPO__TUNE_RULE_OUT * best;
}

/*
 * e's candidates: the model's choice first, the host MPI's call, then every
 * algorithm of the operation with the original order and with the
 * configured heuristic's (when it is kept). Ruled out: recursive doubling
 * on a size that is not a power of two, the hierarchical allgathers on one
 * node or one process per node, a reordered non-commutative allreduce,
 * and what ruled_out says (the model's choice too: slot 0 is then the
 * host MPI's call).
 * Collective (orders and plans are made); the same answer everywhere.
 */
static int candidates(gstate_t *s, const mpitopo__gconf_t *c, gentry_t *e, const char *func)
{
    int op = e->op, root = op == MPITOPO__COLL_OP_BCAST || op == MPITOPO__COLL_OP_GATHER ? e->cls : 0;
    int heur = c->heur[op];
    if (op == MPITOPO__COLL_OP_ALLREDUCE && !e->cls)
        heur = MPITOPO__GH_NONE;
    gcand_t k;
    int rc = model_choice(s, c, op, e->bytes, heur, root, &k, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    /* The size rule's ring where the latency model puts it far behind:
     * not timed either; the host MPI's call comes first then. */
    if (ruled_out(s, e, k.alg))
        e->ruled_out |= 1u << k.alg;
    else
        add(e, k);
    add(e, (gcand_t){MPITOPO__GA_MPI, MPITOPO__GH_NONE});
    int algs[5], na = 0;
    if (op == MPITOPO__COLL_OP_ALLGATHER) {
        if ((rc = mpitopo__gstate_nodes(s, func)) != MPITOPO_SUCCESS)
            return rc;
        if ((s->size & (s->size - 1)) == 0)
            algs[na++] = MPITOPO__GA_RD;
        algs[na++] = MPITOPO__GA_BRUCK;
        algs[na++] = MPITOPO__GA_RING;
        if (s->nnodes > 1 && s->nnodes < s->size) {
            algs[na++] = MPITOPO__GA_HIER;
            algs[na++] = MPITOPO__GA_HIERB;
        }
    } else {
        algs[na++] = op == MPITOPO__COLL_OP_ALLREDUCE ? MPITOPO__GA_RD : MPITOPO__GA_BINOMIAL;
    }
    for (int i = 0; i < na; i++) {
        if (ruled_out(s, e, algs[i])) {
            e->ruled_out |= 1u << algs[i];
            continue;
        }
        add(e, (gcand_t){algs[i], MPITOPO__GH_NONE});
        if (heur == MPITOPO__GH_NONE)
            continue;
        if ((rc = effective(s, op, algs[i], heur, root, e->bytes, &k, func)) != MPITOPO_SUCCESS)
            return rc;
        add(e, k);
    }
    return MPITOPO_SUCCESS;
}

/* The file's decision for e, if it is one of e's candidates. */
static int from_file(const struct gtune *t, gentry_t *e)
{
    gfile_t k = {.op = e->op, .nprocs = t->nprocs, .nodes = t->nodes, .ppn = t->ppn,
                 .cls = file_class(e->op, e->cls), .size = size_class(e->bytes)};
    for (int i = 0; i < t->nfile; i++)
        if (same_key(&t->file[i], &k))
            for (int c = 0; c < e->ncand; c++)
                if (e->cand[c].alg == t->file[i].choice.alg &&
                    e->cand[c].heur == t->file[i].choice.heur) {
                    e->decided = 1;
                    e->slot = c;
                    e->source = SRC_FILE;
                    return 1;
                }
    return 0;
}

static void apply(mpitopo__gconf_t *c, int op, gcand_t k)
{
    c->alg[op] = (mpitopo__galg_t)k.alg;
    if (k.alg != MPITOPO__GA_MPI)
        c->heur[op] = (mpitopo__gheur_t)k.heur;
}

static int entry_new(gstate_t *s, const mpitopo__gconf_t *c, int op, long long bytes, int cls,
                     gentry_t **out, const char *func)
{
    gentry_t *e = victim(s->tune);
    *e = (gentry_t){.used = 1, .op = op, .bytes = bytes, .cls = cls};
    int rc = candidates(s, c, e, func);
    if (rc != MPITOPO_SUCCESS) {
        e->used = 0;
        return rc;
    }
    mpitopo__explore_init(&e->x, e->ncand);
    if (!from_file(s->tune, e) && e->ncand == 1) {
        e->decided = 1;
        e->source = SRC_SINGLE;
    }
    *out = e;
    return MPITOPO_SUCCESS;
}

int mpitopo__gtune_pick(gstate_t *s, mpitopo__gconf_t *c, int op, long long bytes, int cls,
                        gtrial_t *trial, const char *func)
{
    if (trial)
        *trial = (gtrial_t){NULL, NULL, 0, 0, 0};
    if (!mpitopo__explore_on() || c->alg[op] != MPITOPO__GA_AUTO || bytes == 0)
        return MPITOPO_SUCCESS;
    gentry_t *e = find(s->tune, op, bytes, cls);
    if (!trial || (e && e->decided)) {
        if (e && e->decided)
            apply(c, op, e->cand[e->slot]);
        return MPITOPO_SUCCESS; /* nonblocking: the decision, else the model */
    }
    int rc = s->tune ? MPITOPO_SUCCESS : tune_start(s, func);
    if (rc == MPITOPO_SUCCESS && !e)
        rc = entry_new(s, c, op, bytes, cls, &e, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    e->stamp = ++s->tune->clock;
    int slot = e->decided ? e->slot : mpitopo__explore_next(&e->x);
    apply(c, op, e->cand[slot]);
    if (e->decided)
        return MPITOPO_SUCCESS;
    gcand_t k = e->cand[slot];
    *trial = (gtrial_t){s, e, slot, !s->tune->warmed[op][k.alg][k.heur], PMPI_Wtime()};
    return MPITOPO_SUCCESS;
}

/* The decision's verbose line (rank 0). */
static void say(const gstate_t *s, const gentry_t *e)
{
    if (mpitopo__verbose() < 1 || s->rank != 0)
        return;
    char line[1024], name[32], model[32], win[32];
    int len = 0;
    for (int i = 0; i < e->ncand && len < (int)sizeof line; i++) {
        cand_name(e->cand[i], name, sizeof name);
        len += snprintf(line + len, sizeof line - (size_t)len, "%s%s %.2f us%s", i ? ", " : "",
                        name, e->x.med[i] * 1e6, e->x.alive[i] ? "" : " (stopped after 1 trial)");
    }
    char out[96] = "";
    for (int a = 0, n = 0; a < MPITOPO__GA_COUNT; a++)
        if (e->ruled_out & (1u << a))
            n += snprintf(out + n, sizeof out - (size_t)n, "%s%s", n ? ", " : "; left out by the model: ",
                          mpitopo__galg_name((mpitopo__galg_t)a));
    cand_name(e->cand[0], model, sizeof model);
    cand_name(e->cand[e->slot], win, sizeof win);
    mpitopo__log(1, "%s (%lld B, %s) tuned over %d calls: %s -> %s (model: %s%s)", op_names[e->op],
                 e->bytes, class_name(e->op, file_class(e->op, e->cls)), e->x.explored, line, win,
                 model, out);
}

int mpitopo__gtune_record(const gtrial_t *trial, int rc, const char *func)
{
    gentry_t *e = trial->entry;
    gstate_t *s = trial->s;
    if (!e)
        return rc;
    /* A trial that failed here is recorded too, as failed: the other
     * processes reduce at the end of the round, so this one must as well,
     * and the candidate is then stopped everywhere. */
    double seconds = rc == MPITOPO_SUCCESS ? PMPI_Wtime() - trial->t0 : MPITOPO__EXPLORE_FAILED;
    struct gtune *t = s->tune;
    gcand_t k = e->cand[trial->slot];
    e->x.explored++;
    if (trial->warm) {
        t->warmed[e->op][k.alg][k.heur] = 1; /* runs again, timed */
        return rc;
    }
    if (test_times && rc == MPITOPO_SUCCESS)
        seconds = test_times(k.alg, k.heur, test_arg);
    double red_in = test_times ? test_times(0, 0, test_arg) : t->red_s;
    int best = -1;
    int mrc = mpitopo__explore_record(&e->x, trial->slot, seconds, s->user, red_in, &t->red_s,
                                      &best);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    if (mrc != MPI_SUCCESS)
        return mpitopo__mpi_result(func, mrc);
    if (best >= 0) {
        e->decided = 1;
        e->slot = best;
        e->source = SRC_MEASURED;
        job_add(t, e);
        say(s, e);
    }
    return MPITOPO_SUCCESS;
}

int mpitopo__gtune_state(MPI_Comm comm, int which, long long bytes, int cls, int *explored,
                         int *decided, int *alg, int *heur, int *source)
{
    gstate_t *s;
    int rc = mpitopo__gstate_get(comm, &s, __func__);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    const gentry_t *e = find(s->tune, which, bytes, cls);
    if (!e)
        return MPITOPO_FAIL(MPITOPO_ERR_NOT_FOUND, "no tuner state for this signature");
    *explored = e->x.explored;
    *decided = e->decided;
    *alg = e->decided ? e->cand[e->slot].alg : -1;
    *heur = e->decided ? e->cand[e->slot].heur : -1;
    *source = e->source;
    return MPITOPO_SUCCESS;
}

/* ---- Writing the decisions ---- */

#ifdef MPITOPO_HAVE_JSONC
static json_object *entry_json(const gfile_t *f, int measured)
{
    char name[32];
    json_object *o = json_object_new_object();
    json_object_object_add(o, "op", json_object_new_string(op_names[f->op]));
    json_object_object_add(o, "nprocs", json_object_new_int(f->nprocs));
    json_object_object_add(o, "nodes", json_object_new_int(f->nodes));
    json_object_object_add(o, "ppn", json_object_new_int(f->ppn));
    json_object_object_add(o, "size", json_object_new_int64(f->size));
    json_object_object_add(o, "class", json_object_new_string(class_name(f->op, f->cls)));
    cand_name(f->choice, name, sizeof name);
    json_object_object_add(o, "choice", json_object_new_string(name));
    if (measured) {
        json_object *m = json_object_new_object();
        for (int i = 0; i < f->ncand; i++) {
            cand_name(f->cand[i], name, sizeof name);
            json_object_object_add(m, name, json_object_new_double(f->us[i]));
        }
        json_object_object_add(o, "measured_us", m);
    }
    return o;
}

/* For mpitopo__tunefile_merge: this job's decisions carry their times. */
static int same_entry(const void *a, const void *b)
{
    return same_key(a, b);
}

static json_object *job_json(const void *f, int j)
{
    return entry_json(f, j >= 0);
}

static void write_file(void)
{
    char why[256] = "";
    int nold = 0;
    char *text = mpitopo__tunefile_slurp(mpitopo__explore_path(), why, sizeof why);
    gfile_t *old = text ? parse_file(text, &nold, why, sizeof why) : NULL;
    mpitopo__free(text);
    json_object *list = mpitopo__tunefile_merge(old, nold, job, njob, sizeof *job, same_entry, job_json);
    mpitopo__free(old);
    mpitopo__tunefile_write("collectives", list, mpitopo__host_name(), njob);
}
#endif

void mpitopo__gtune_finalize(void)
{
    int rank = -1;
    pthread_mutex_lock(&job_lock);
    if (mpitopo__explore_on() && mpitopo__explore_path() && njob > 0 &&
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank) == MPI_SUCCESS && rank == 0) {
#ifdef MPITOPO_HAVE_JSONC
        write_file();
#endif
    }
    mpitopo__free(job);
    job = NULL;
    njob = capjob = 0;
    pthread_mutex_unlock(&job_lock);
}
