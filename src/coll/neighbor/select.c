/*
 * Which schedule a neighbourhood operation runs on. The choice belongs to
 * the operation (info key of an _init call), the communicator (its info
 * key, read when its neighbour lists are cached) or the environment
 * (MPITOPO_NEIGHBOR, read once), in that order; "auto" otherwise. Every
 * level must give the same answer on every process: the schedules of two
 * processes must match message for message.
 */
#include "coll/neighbor/combine.h"
#include "core/env.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The schedules, in the order of mpitopo__sched_t (auto is none). */
static const mpitopo__sched_ops_t *const table[] = {
    [MPITOPO__SCHED_LINEAR] = &mpitopo__linear_ops, [MPITOPO__SCHED_COMBINE] = &mpitopo__combine_ops,
    [MPITOPO__SCHED_CART] = &mpitopo__cart_ops,     [MPITOPO__SCHED_NODE] = &mpitopo__node_ops,
    [MPITOPO__SCHED_MPI] = &mpitopo__host_ops};
#define NSCHED ((int)(sizeof table / sizeof *table))

const mpitopo__sched_ops_t *mpitopo__sched_ops(mpitopo__sched_t s)
{
    return s >= 0 && s < NSCHED ? table[s] : NULL;
}

void mpitopo__sched_free_state(mpitopo__nbr_t *n)
{
    for (int i = 0; i < NSCHED; i++)
        if (table[i] && table[i]->free_state)
            table[i]->free_state(n);
}

/* Their names, by the same index (include/mpitopo/coll.h). */
static const char *const names[] = MPITOPO_NEIGHBOR_SCHEDULES;
_Static_assert(sizeof names / sizeof *names == sizeof table / sizeof *table,
               "MPITOPO_NEIGHBOR_SCHEDULES and the schedules of select.c differ");

mpitopo__sched_t mpitopo__sched_parse(const char *s)
{
    for (int i = 0; i < NSCHED; i++)
        if (strcmp(s, names[i]) == 0)
            return (mpitopo__sched_t)i;
    return MPITOPO__SCHED_INVALID;
}

const char *mpitopo__sched_name(mpitopo__sched_t s)
{
    return s >= 0 && s < NSCHED ? names[s] : "?";
}

/* MPITOPO_NEIGHBOR, read once. */
static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static mpitopo__sched_t env_sched = MPITOPO__SCHED_UNSET;
static char env_sched_text[64];

static void read_env(void)
{
    const char *v = mpitopo__getenv(MPITOPO_ENV_NEIGHBOR);
    /* "off" is the shim's (MPI's own collectives); to the library it says
     * nothing. */
    if (v && *v && strcmp(v, "off") != 0) {
        snprintf(env_sched_text, sizeof env_sched_text, "%s", v);
        env_sched = mpitopo__sched_parse(v);
    }
}

static int bad_name(const char *func, const char *where, const char *value)
{
    char known[96];
    size_t used = 0;
    for (int i = 0; i < NSCHED && used < sizeof known; i++)
        used += (size_t)snprintf(known + used, sizeof known - used, "%s%s", i ? ", " : "", names[i]);
    return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "%s = \"%s\" is not one of %s", where, value,
                           known);
}

int mpitopo__sched_requested(const mpitopo__nbr_t *n, MPI_Info info, mpitopo__sched_t *s,
                             const char *func)
{
    char v[64];
    if (mpitopo__info_value(info, "mpitopo_neighbor", v, sizeof v)) {
        *s = mpitopo__sched_parse(v);
        return *s == MPITOPO__SCHED_INVALID ? bad_name(func, "info key mpitopo_neighbor", v)
                                            : MPITOPO_SUCCESS;
    }
    if (n->info_sched == MPITOPO__SCHED_INVALID)
        return bad_name(func, "comm's info key mpitopo_neighbor", n->info_sched_text);
    if (n->info_sched != MPITOPO__SCHED_UNSET) {
        *s = (mpitopo__sched_t)n->info_sched;
        return MPITOPO_SUCCESS;
    }
    pthread_once(&env_once, read_env);
    if (env_sched == MPITOPO__SCHED_INVALID)
        return bad_name(func, "MPITOPO_NEIGHBOR", env_sched_text);
    *s = env_sched == MPITOPO__SCHED_UNSET ? MPITOPO__SCHED_AUTO : env_sched;
    return MPITOPO_SUCCESS;
}

static const char *const op_names[MPITOPO__OPK_COUNT] = {
    "allgather", "allgatherv", "alltoall", "alltoallv", "alltoallw"};

/* What the processes of a persistent operation must agree on, in full. */
typedef struct init_record {
    int op, sched, threshold; /* no padding: records are compared bytewise */
} init_record_t;

static void describe_init(const void *mine_, const void *root_, char *out, size_t len)
{
    const init_record_t *mine = mine_, *root = root_;
    if (mine->op != root->op)
        snprintf(out, len, "the operation is neighbor_%s_init (process 0: neighbor_%s_init)",
                 op_names[mine->op], op_names[root->op]);
    else if (mine->sched != root->sched)
        snprintf(out, len,
                 "the schedule asked for (info key mpitopo_neighbor, else comm's, else "
                 "MPITOPO_NEIGHBOR) is %s (process 0: %s)",
                 mpitopo__sched_name(mine->sched), mpitopo__sched_name(root->sched));
    else
        snprintf(out, len, "comm's info key mpitopo_combine_threshold is %d (process 0: %d; -1: unset)",
                 mine->threshold, root->threshold);
}

/* The block sizes as agreement extras, reduced by MPI_MIN: the two halves
 * of sb (31 bits each) and their complements, so that the minima give both
 * ends of each; -1 where sb and rb differ. Every process passes the same
 * sizes when both ends meet and no process gave -1. */
static void sizes_extra(mpitopo__agree_t *a, long long sb, long long rb)
{
    int hi = sb == rb ? (int)(sb >> 31) : -1, lo = sb == rb ? (int)(sb & 0x7fffffff) : 0;
    int v[4] = {hi, ~hi, lo, ~lo};
    a->nextra = 4;
    memcpy(a->extra, v, sizeof v);
}

static int sizes_agree(const mpitopo__agree_t *a)
{
    return a->extra[0] >= 0 && a->extra[0] == ~a->extra[1] && a->extra[2] == ~a->extra[3];
}

int mpitopo__sched_agree(mpitopo__nbr_t *n, mpitopo__opkind_t op, mpitopo__sched_t req, long long sb,
                         long long rb, int local, const char *func)
{
    int rc = mpitopo__nbr_private_comm(n, 1);
    mpitopo__agree_t a = {.func = func, .comm = n->comm};
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_rank(n->comm, &a.rank);
    if (rc != MPI_SUCCESS)
        return mpitopo__mpi_result(func, rc);
    init_record_t rec = {op, req, n->info_threshold};
    a.record = &rec;
    a.record_len = sizeof rec;
    a.describe = describe_init;
    mpitopo__agree_arg(&a, "the operation", op);
    mpitopo__agree_arg(&a, "the schedule", req);
    mpitopo__agree_arg(&a, "comm's info key mpitopo_combine_threshold", n->info_threshold);
    sizes_extra(&a, sb, rb);
    rc = mpitopo__agree(&a, local);
    if (rc == MPITOPO_SUCCESS)
        n->sizes_agreed = sizes_agree(&a) ? 1 : -1;
    return rc;
}

void mpitopo__sched_log(mpitopo__nbr_t *n, mpitopo__opkind_t op, mpitopo__sched_t requested,
                        const mpitopo__choice_t *choice)
{
    mpitopo__sched_t chosen = choice->sched;
    int rank = 0;
    unsigned bit = 1u << (op * 6 + (chosen > 0 ? chosen : 0));
    if (mpitopo__verbose() < 1 || (n->logged & bit))
        return;
    n->logged |= bit;
    if (PMPI_Comm_rank(n->user_comm, &rank) != MPI_SUCCESS || rank != 0)
        return;
    if (chosen == MPITOPO__SCHED_COMBINE)
        mpitopo__log(1, "neighbor_%s: schedule combine (requested %s; rank 0 combines with %d "
                        "friend(s))",
                     op_names[op], mpitopo__sched_name(requested), mpitopo__combine_pairs(n));
    else if (chosen == MPITOPO__SCHED_MPI)
        mpitopo__log(1, "neighbor_%s: the host MPI's own (requested %s)", op_names[op],
                     mpitopo__sched_name(requested));
    else if (chosen == MPITOPO__SCHED_NODE)
        mpitopo__log(1, "neighbor_%s: schedule node (requested %s; %d nodes)", op_names[op],
                     mpitopo__sched_name(requested), mpitopo__node_count(n));
    else if (choice->why)
        mpitopo__log(1, "neighbor_%s: schedule %s (requested %s, which cannot run here: %s)", op_names[op],
                     mpitopo__sched_name(chosen), mpitopo__sched_name(requested), choice->why);
    else
        mpitopo__log(1, "neighbor_%s: schedule %s (requested %s)", op_names[op],
                     mpitopo__sched_name(chosen), mpitopo__sched_name(requested));
}

/* ---- The cost model of auto ----
 *
 * A schedule's latency is predicted as
 *     T = round_us * rounds + msg_us * messages + byte_us * bytes
 * for the busiest process: rounds that depend on each other, messages it
 * sends and receives, bytes it sends. The host MPI runs one round of every
 * neighbour's message. The constants are the job's (MPITOPO_NEIGHBOR_MODEL,
 * a file of "key value" lines that bench/neighbor -W writes from measured
 * host-MPI latencies), else the defaults below, fitted to the host MPI on
 * 16 real cores (issue 14: 4.08 us at 16 messages, 10.33 us at 52, 31.36 us
 * at 52 messages of 1 KiB). auto takes a schedule of mpitopo only where its
 * prediction is below (1 - margin) times the host MPI's.
 */
static pthread_once_t model_once = PTHREAD_ONCE_INIT;
static mpitopo__model_t model = {.round_us = 1.3, .msg_us = 0.17, .byte_us = 0.0008,
                                 .margin = 0.1};
static char model_error[256];

static int model_line(const char *line, int lineno, const char *path)
{
    char key[32];
    double v;
    int got = sscanf(line, " %31s %lf", key, &v);
    if (got < 1 || key[0] == '#')
        return 0;
    if (got < 2) {
        snprintf(model_error, sizeof model_error, "%s line %d: \"%s\" needs a value", path,
                 lineno, key);
        return 1;
    }
    double *f = strcmp(key, "round_us") == 0  ? &model.round_us
                : strcmp(key, "msg_us") == 0  ? &model.msg_us
                : strcmp(key, "byte_us") == 0 ? &model.byte_us
                : strcmp(key, "margin") == 0  ? &model.margin
                                              : NULL;
    if (!f || !(v >= 0) || v > 1e6) {
        snprintf(model_error, sizeof model_error,
                 f ? "%s line %d: %s = %g must be in [0, 1e6]"
                   : "%s line %d: unknown key \"%s\" (round_us, msg_us, byte_us, margin)",
                 path, lineno, key, v);
        return 1;
    }
    *f = v;
    return 0;
}

static void read_model(void)
{
    const char *path = mpitopo__getenv(MPITOPO_ENV_NEIGHBOR_MODEL);
    if (!path || !*path)
        return;
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(model_error, sizeof model_error, "%s cannot be read", path);
        return;
    }
    char line[256];
    for (int no = 1; fgets(line, sizeof line, f) && !model_error[0]; no++)
        model_line(line, no, path);
    fclose(f);
    if (model.margin >= 1 && !model_error[0])
        snprintf(model_error, sizeof model_error, "%s: margin = %g must be below 1", path,
                 model.margin);
}

int mpitopo__model(const mpitopo__model_t **m, const char *func)
{
    pthread_once(&model_once, read_model);
    if (model_error[0])
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "MPITOPO_NEIGHBOR_MODEL: %s",
                                 model_error);
    *m = &model;
    return MPITOPO_SUCCESS;
}

double mpitopo__model_time(const mpitopo__model_t *m, double rounds, double messages,
                           double bytes)
{
    return m->round_us * rounds + m->msg_us * messages + m->byte_us * bytes;
}

/*
 * auto where the host MPI has neighbourhood collectives: the schedule the
 * cost model (below) predicts fastest, mpitopo's only where it beats
 * the host MPI's by the model's margin, else the host MPI's own call.
 *   cart: stencil communicators whose stencil forwards (Moore), blocks of
 *     at most MPITOPO__COMBINE_AUTO_BYTES (the v and w forms as small);
 *   combine: graph and dist-graph communicators; the pattern (made once,
 *     collectively, whatever the block size, so that every process takes
 *     part) gives the busiest process's messages, blocks and rounds. Where
 *     some process has a duplicate or self edge, the host MPI is never
 *     taken (MPICH delivers duplicate edges in another order than Open MPI
 *     and mpitopo): mpitopo's linear schedule stands in for it.
 * Every input is the same on every process (the stencil, the pattern's
 * maxima) or the block size, which the choice assumes every process
 * passes alike (as applications do: a HOPS pattern makes every process
 * forward for others, so neighbours agreeing is not enough).
 */
static int choose_auto(mpitopo__nbr_t *n, mpitopo__opkind_t op, long long sb, long long rb,
                       mpitopo__choice_t *c, const char *func)
{
    const mpitopo__model_t *m;
    int rc = mpitopo__model(&m, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    *c = (mpitopo__choice_t){MPITOPO__SCHED_MPI, 0, 0, NULL};
    double b = (double)(sb > rb ? sb : rb), keep = 1 - m->margin;
    int small = sb <= MPITOPO__COMBINE_AUTO_BYTES && rb <= MPITOPO__COMBINE_AUTO_BYTES;
    int alltoall = op != MPITOPO__OPK_ALLGATHER && op != MPITOPO__OPK_ALLGATHERV;
    if (mpitopo__cart_applies(n, op)) {
        int k, rounds, msgs;
        double blocks;
        mpitopo__cart_cost(n, alltoall, &k, &rounds, &msgs, &blocks);
        double host = mpitopo__model_time(m, 1, 2.0 * k, k * b);
        /* Forwarded blocks are copied as well as sent: twice the bytes. */
        double cart = mpitopo__model_time(m, rounds, msgs, 2 * blocks * b);
        if (small && mpitopo__cart_gains(n) && cart < keep * host)
            c->sched = MPITOPO__SCHED_CART;
        return MPITOPO_SUCCESS;
    }
    if (!mpitopo__combine_supports(op) || n->kind == MPI_CART)
        return MPITOPO_SUCCESS;
    rc = mpitopo__combine_pattern(n, func);
    if (rc != MPITOPO_SUCCESS || !n->comb)
        return rc;
    /* With a duplicate or self edge anywhere the alternative to combining
     * is mpitopo's linear schedule (as many messages as the host MPI's). */
    const struct mpitopo__comb *cb = n->comb;
    if (cb->any_duplicates)
        c->sched = MPITOPO__SCHED_LINEAR;
    if (!mpitopo__combine_usable(n) || !small)
        return MPITOPO_SUCCESS;
    /* Blocks the busiest process moves; combined ones are also copied. */
    double host = mpitopo__model_time(m, 1, cb->max_linear, (double)cb->max_blocks_linear * b);
    /* Dependent rounds of the schedule: one per hop, or a swap and a
     * combined send per pattern round plus the direct one. */
    double rounds = cb->mode == MPITOPO__COMB_HOPS ? cb->nhops + 1 : 2 * cb->rounds + 1;
    double comb = mpitopo__model_time(m, rounds, cb->max_combined,
                                      2.0 * (double)cb->max_blocks_combined * b);
    if (comb < keep * host)
        *c = (mpitopo__choice_t){MPITOPO__SCHED_COMBINE, 1, 1, NULL};
    return MPITOPO_SUCCESS;
}

/*
 * auto without the host MPI's neighbourhood collectives (SimGrid SMPI):
 *   cart: as above, when it sends fewer messages (Moore, not star);
 *   combine: only where the pattern saves enough messages to pay for its
 *     rounds (mpitopo__combine_pays), then each side only for blocks of
 *     at most MPITOPO__COMBINE_AUTO_BYTES (the thesis's gain is for small
 *     messages), the v and w forms whatever their sizes;
 *   else linear.
 */
static int choose_auto_p2p(mpitopo__nbr_t *n, mpitopo__opkind_t op, long long sb, long long rb,
                           mpitopo__choice_t *c, const char *func)
{
    int small = sb <= MPITOPO__COMBINE_AUTO_BYTES && rb <= MPITOPO__COMBINE_AUTO_BYTES;
    *c = (mpitopo__choice_t){MPITOPO__SCHED_LINEAR, 0, 0, NULL};
    if (mpitopo__cart_applies(n, op) && small && mpitopo__cart_gains(n)) {
        c->sched = MPITOPO__SCHED_CART;
        return MPITOPO_SUCCESS;
    }
    if (!mpitopo__combine_supports(op) || n->kind == MPI_CART)
        return MPITOPO_SUCCESS;
    int rc = mpitopo__combine_pattern(n, func);
    if (rc != MPITOPO_SUCCESS || !mpitopo__combine_usable(n) || !mpitopo__combine_pays(n))
        return rc;
    c->send_comb = sb <= MPITOPO__COMBINE_AUTO_BYTES;
    c->recv_comb = rb <= MPITOPO__COMBINE_AUTO_BYTES;
    if (c->send_comb || c->recv_comb)
        c->sched = MPITOPO__SCHED_COMBINE;
    return MPITOPO_SUCCESS;
}

/* Whether MPI's own operation may deliver differently from mpitopo's on
 * this communicator: a Cartesian one with a periodic dimension of size 1
 * or 2, where the -1 and +1 neighbours are one process and the MPI-4.0
 * erratum (which mpitopo follows) says which block lands where. The same
 * answer on every process (dims and periods are). */
static int host_may_differ(const mpitopo__nbr_t *n)
{
    for (int d = 0; n->kind == MPI_CART && d < n->indegree / 2; d++)
        if (n->sources[2 * d] != MPI_PROC_NULL && n->sources[2 * d] == n->sources[2 * d + 1])
            return 1;
    return 0;
}

/* Whether auto may hand op to the host MPI: it has the operation, it
 * delivers as mpitopo does on n, and no known defect of it matches
 * (defects.c). The same answer on every process. */
static int host_usable(const mpitopo__nbr_t *n, mpitopo__opkind_t op)
{
    return mpitopo__host_available() && !host_may_differ(n) && !mpitopo__host_defect(n, op);
}

/*
 * The schedule rule. A schedule asked for by name (info key or
 * MPITOPO_NEIGHBOR) is a hint: it runs where it applies (its operations'
 * applies; none: everywhere), else mpitopo's linear one, saying why in the
 * log; arguments MPI forbids are the only errors.
 *   mpi: the host MPI's own call (not under SimGrid, which has none);
 *   node: all five operations; the plan is made on first use,
 *     collectively (node.c). Allgather and alltoall need one block size
 *     everywhere, which _init calls check (mpitopo__sched_agree) and the
 *     others assume of processes with neighbours (node.c);
 *   cart: communicators made by mpitopo_cart_stencil_create whose stencil
 *     maps to distinct processes (mpitopo__cart_applies), all five, blocks
 *     small enough to forward;
 *   combine: graph and dist-graph communicators, all five, both sides,
 *     blocks small enough to combine;
 *   linear: always.
 * auto: choose_auto; choose_auto_p2p under SimGrid, where the host MPI
 * may deliver otherwise (host_may_differ) or has a known defect for op
 * (mpitopo__host_defect).
 */
int mpitopo__sched_choose(mpitopo__nbr_t *n, mpitopo__opkind_t op, mpitopo__sched_t req,
                          long long sb, long long rb, mpitopo__choice_t *c, const char *func)
{
    *c = (mpitopo__choice_t){MPITOPO__SCHED_LINEAR, 0, 0, NULL};
    int rc = MPITOPO_SUCCESS;
    if (req == MPITOPO__SCHED_AUTO) {
        rc = host_usable(n, op) ? choose_auto(n, op, sb, rb, c, func)
                                : choose_auto_p2p(n, op, sb, rb, c, func);
    } else {
        const mpitopo__sched_ops_t *s = mpitopo__sched_ops(req);
        const char *why = NULL;
        rc = s->applies ? s->applies(n, op, sb, rb, &why, func) : MPITOPO_SUCCESS;
        if (rc == MPITOPO_SUCCESS)
            *c = why ? (mpitopo__choice_t){MPITOPO__SCHED_LINEAR, 0, 0, why}
                     : (mpitopo__choice_t){req, 1, 1, NULL};
    }
    n->sizes_agreed = 0;
    return rc;
}

/*
 * The candidates the tuner measures (tune.c): every schedule that runs op
 * on n by name and that the model does not rule out, the model's own
 * choice first.
 *   mpi: where auto may hand op to the host MPI (host_usable) and no
 *     process has a duplicate or self edge (where MPI's order differs);
 *   linear: always;
 *   cart: where it applies and sends fewer messages than linear;
 *   combine: graph and dist-graph communicators whose pattern runs and
 *     is predicted within MPITOPO__TUNE_RULE_OUT of the host MPI's time;
 *   node: where it applies and the communicator spans several nodes.
 * Collective (the plans of combine and node are made here): every process
 * calls it for the same operation and block sizes, and every answer is the
 * same on every process.
 */
int mpitopo__sched_candidates(mpitopo__nbr_t *n, mpitopo__opkind_t op, long long sb, long long rb,
                              int *cand, int *ncand, int *modelled, const char *func)
{
    mpitopo__choice_t c;
    const mpitopo__model_t *m;
    int rc = mpitopo__sched_choose(n, op, MPITOPO__SCHED_AUTO, sb, rb, &c, func);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__model(&m, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    *modelled = c.sched;
    *ncand = 0;
    cand[(*ncand)++] = c.sched;
    double b = (double)(sb > rb ? sb : rb);
    for (int s = MPITOPO__SCHED_LINEAR; s <= MPITOPO__SCHED_MPI; s++) {
        const char *why = NULL;
        if (s == c.sched)
            continue;
        if (s == MPITOPO__SCHED_MPI) {
            if (!host_usable(n, op) || (n->kind != MPI_CART && (!n->comb || n->comb->any_duplicates)))
                continue;
        } else if (s == MPITOPO__SCHED_CART) {
            if (!mpitopo__cart_applies(n, op) || !mpitopo__cart_gains(n))
                continue;
        } else if (s == MPITOPO__SCHED_COMBINE) {
            if (n->kind == MPI_CART || !mpitopo__combine_supports(op))
                continue;
            rc = mpitopo__combine_pattern(n, func);
            if (rc != MPITOPO_SUCCESS)
                return rc;
            const struct mpitopo__comb *cb = n->comb;
            if (!cb || !mpitopo__combine_usable(n))
                continue;
            double host = mpitopo__model_time(m, 1, cb->max_linear, (double)cb->max_blocks_linear * b);
            double rounds = cb->mode == MPITOPO__COMB_HOPS ? cb->nhops + 1 : 2 * cb->rounds + 1;
            double comb = mpitopo__model_time(m, rounds, cb->max_combined,
                                              2.0 * (double)cb->max_blocks_combined * b);
            if (comb > MPITOPO__TUNE_RULE_OUT * host)
                continue;
        } else if (s == MPITOPO__SCHED_NODE) {
            rc = mpitopo__node_ops.applies(n, op, sb, rb, &why, func);
            if (rc != MPITOPO_SUCCESS)
                return rc;
            if (why || mpitopo__node_count(n) < 2)
                continue;
        }
        if (s != MPITOPO__SCHED_MPI && s != MPITOPO__SCHED_NODE) {
            rc = table[s]->applies ? table[s]->applies(n, op, sb, rb, &why, func) : MPITOPO_SUCCESS;
            if (rc != MPITOPO_SUCCESS)
                return rc;
            if (why)
                continue;
        }
        cand[(*ncand)++] = s;
    }
    n->sizes_agreed = 0;
    return MPITOPO_SUCCESS;
}
