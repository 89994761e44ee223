/*
 * The schedule cache of a topology communicator (coll_internal.h): a
 * blocking or nonblocking call that repeats an earlier call's operation,
 * counts, displacements and datatypes takes that call's schedule, moves
 * its steps onto the new buffers and gives it fresh tags, instead of
 * building one again. The steady state of an iterative program thus
 * allocates nothing and repeats no O(degree) set-up.
 *
 * Why tags are renewed: multi-round schedules take a block of tags per
 * operation so that overlapping operations cannot match each other's
 * messages, and every process must take the same blocks in the same
 * order. Whether a call hits the cache is each process's own affair (a
 * datatype of another handle but the same signature misses on one process
 * only), so every run takes a new block, hit or miss, of the span the
 * schedule was built with.
 *
 * Entries are owned by the cache; a request in use points to its entry,
 * and goes back to it when it completes (request.c).
 */
#include "coll/coll_internal.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

/* Schedules kept per communicator. */
#define CACHE_ENTRIES 8

/* The key of one side of a call. */
typedef struct side_key {
    int mode, count, slots; /* slots: entries in the arrays below (0 for scalar sides) */
    MPI_Datatype type;
    long long serial;
    int *counts;              /* V and W: slots each */
    MPI_Aint *displs;         /* V: displs[i] * extent; W: bdispls[i] */
    MPI_Datatype *types;      /* W */
    long long *serials;       /* W */
    MPI_Aint extent;
} side_key_t;

typedef struct mpitopo__centry {
    int used, in_use;
    unsigned long long stamp;
    int op, requested, sched;
    side_key_t k[2];
    mpitopo_request_t req;
    struct mpitopo__cache *cache;
} centry_t;

struct mpitopo__cache {
    unsigned long long clock;
    centry_t e[CACHE_ENTRIES];
};

/* ---- Datatype identity ---- */

static pthread_once_t type_once = PTHREAD_ONCE_INIT;
static int type_keyval = MPI_KEYVAL_INVALID;
static long long type_next;
static pthread_mutex_t type_lock = PTHREAD_MUTEX_INITIALIZER;

static void make_type_keyval(void)
{
    if (PMPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &type_keyval,
                                NULL) != MPI_SUCCESS)
        type_keyval = MPI_KEYVAL_INVALID;
}

/* 0 for a predefined datatype; else the datatype's serial number, given on
 * first sight; -1 when it cannot be told (then nothing is cached). */
static long long type_serial(MPI_Datatype t)
{
    int ni, na, nd, combiner, found = 0;
    if (t == MPI_DATATYPE_NULL)
        return 0;
    if (PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) != MPI_SUCCESS)
        return -1;
    if (combiner == MPI_COMBINER_NAMED)
        return 0;
    pthread_once(&type_once, make_type_keyval);
    if (type_keyval == MPI_KEYVAL_INVALID)
        return -1;
    void *v = NULL;
    if (PMPI_Type_get_attr(t, type_keyval, &v, &found) != MPI_SUCCESS)
        return -1;
    if (found)
        return (long long)(intptr_t)v;
    pthread_mutex_lock(&type_lock);
    long long serial = ++type_next;
    pthread_mutex_unlock(&type_lock);
    if (PMPI_Type_set_attr(t, type_keyval, (void *)(intptr_t)serial) != MPI_SUCCESS)
        return -1;
    return serial;
}

/* Whether t is the type of the key (handle and serial): a predefined
 * type's handle is never a derived one's, so only derived ones are asked
 * for their serial. */
static int same_type(MPI_Datatype t, MPI_Datatype kt, long long kserial)
{
    if (t != kt)
        return 0;
    return kserial == 0 || type_serial(t) == kserial;
}

/* ---- Keys ---- */

static int slots_of(const side_t *s, int degree)
{
    return s->mode == SIDE_V || s->mode == SIDE_W ? degree : 0;
}

static int side_matches(const side_key_t *k, const side_t *s, int degree)
{
    if (k->mode != (int)s->mode || k->slots != slots_of(s, degree))
        return 0;
    if (s->mode == SIDE_SAME || s->mode == SIDE_BLOCK)
        return k->count == s->count && k->extent == s->extent &&
               same_type(s->type, k->type, k->serial);
    if (s->mode == SIDE_V && (k->extent != s->extent || !same_type(s->type, k->type, k->serial)))
        return 0;
    for (int i = 0; i < k->slots; i++)
        if (k->counts[i] != s->counts[i] || k->displs[i] != mpitopo__slot_off(s, i))
            return 0;
    for (int i = 0; s->mode == SIDE_W && i < k->slots; i++)
        if (!same_type(s->types[i], k->types[i], k->serials[i]))
            return 0;
    return 1;
}

static void key_free(side_key_t *k)
{
    mpitopo__free(k->counts);
    mpitopo__free(k->displs);
    mpitopo__free(k->types);
    mpitopo__free(k->serials);
    memset(k, 0, sizeof *k);
}

/* The key of side s; 0 when it cannot be made (memory, a datatype that
 * cannot be told apart). */
static int key_make(side_key_t *k, const side_t *s, int degree)
{
    memset(k, 0, sizeof *k);
    k->mode = (int)s->mode;
    k->slots = slots_of(s, degree);
    k->count = s->count;
    k->extent = s->extent;
    k->type = s->type;
    if (s->mode != SIDE_W && (k->serial = type_serial(s->type)) < 0)
        return 0;
    if (k->slots == 0)
        return 1;
    size_t n = (size_t)k->slots;
    k->counts = mpitopo__malloc_array(n, sizeof *k->counts);
    k->displs = mpitopo__malloc_array(n, sizeof *k->displs);
    if (s->mode == SIDE_W) {
        k->types = mpitopo__malloc_array(n, sizeof *k->types);
        k->serials = mpitopo__malloc_array(n, sizeof *k->serials);
    }
    if (!k->counts || !k->displs || (s->mode == SIDE_W && (!k->types || !k->serials)))
        return 0;
    for (int i = 0; i < k->slots; i++) {
        k->counts[i] = s->counts[i];
        k->displs[i] = mpitopo__slot_off(s, i);
        if (s->mode == SIDE_W && (k->serials[i] = type_serial(k->types[i] = s->types[i])) < 0)
            return 0;
    }
    return 1;
}

/* ---- Reuse ---- */

/* The steps' user buffers: same offsets, the new call's buffers. */
static void rebase_steps(mpitopo_request_t r, const side_t *send, const side_t *recv)
{
    uintptr_t base[3] = {0, (uintptr_t)send->buf, (uintptr_t)recv->buf};
    for (int i = 0; i < r->nops; i++) {
        mpitopo__op_t *o = &r->ops[i];
        if (o->side > 0)
            o->buf = (void *)(base[o->side] + (uintptr_t)o->boff);
    }
}

/* A new block of tags of the schedule's span, every step moved onto it. */
static int retag(mpitopo__nbr_t *n, mpitopo_request_t r, const char *func)
{
    if (r->tag_span == 0)
        return MPITOPO_SUCCESS;
    int base, rc = mpitopo__nbr_tags(n, r->tag_span, &base, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    for (int i = 0; i < r->nops; i++) {
        mpitopo__op_t *o = &r->ops[i];
        if (o->tag >= r->tag_base && o->tag < r->tag_base + r->tag_span)
            o->tag += base - r->tag_base;
    }
    r->tag_base = base;
    return MPITOPO_SUCCESS;
}

int mpitopo__cache_get(mpitopo__nbr_t *n, int op, int requested, const side_t *send,
                       const side_t *recv, mpitopo_request_t *req, int *sched, const char *func)
{
    *req = NULL;
    struct mpitopo__cache *c = n->cache;
    for (int i = 0; c && i < CACHE_ENTRIES; i++) {
        centry_t *e = &c->e[i];
        if (!e->used || e->in_use || e->op != op || e->requested != requested ||
            !side_matches(&e->k[0], send, n->outdegree) ||
            !side_matches(&e->k[1], recv, n->indegree))
            continue;
        mpitopo_request_t r = e->req;
        if (r->rebase)
            r->rebase(r, send, recv);
        else
            rebase_steps(r, send, recv);
        int rc = retag(n, r, func);
        if (rc != MPITOPO_SUCCESS)
            return rc;
        e->in_use = 1;
        e->stamp = ++c->clock;
        *req = r;
        *sched = e->sched;
        return MPITOPO_SUCCESS;
    }
    return MPITOPO_SUCCESS;
}

/* The entry to fill: a free one, else the least recently used idle one
 * (its schedule released); NULL when all are in use. */
static centry_t *victim(struct mpitopo__cache *c)
{
    centry_t *best = NULL;
    for (int i = 0; i < CACHE_ENTRIES; i++) {
        centry_t *e = &c->e[i];
        if (!e->used)
            return e;
        if (!e->in_use && (!best || e->stamp < best->stamp))
            best = e;
    }
    if (best)
        mpitopo__request_release(best->req); /* forgets its entry */
    return best;
}

void mpitopo__cache_put(mpitopo__nbr_t *n, int op, int requested, const side_t *send,
                        const side_t *recv, mpitopo_request_t req, int sched)
{
    if (n->freed || (!n->cache && !(n->cache = mpitopo__calloc(1, sizeof *n->cache))))
        return;
    centry_t *e = victim(n->cache);
    if (!e)
        return;
    /* Derived datatypes of the steps are the cache's own from now on. */
    if (!key_make(&e->k[0], send, n->outdegree) || !key_make(&e->k[1], recv, n->indegree) ||
        mpitopo__request_own_datatypes(req) != MPITOPO_SUCCESS) {
        key_free(&e->k[0]);
        key_free(&e->k[1]);
        return;
    }
    *e = (centry_t){.used = 1, .in_use = 1, .stamp = ++n->cache->clock, .op = op,
                    .requested = requested, .sched = sched, .k = {e->k[0], e->k[1]}, .req = req,
                    .cache = n->cache};
    req->entry = e;
}

void mpitopo__cache_put_back(mpitopo_request_t r)
{
    r->entry->in_use = 0;
}

void mpitopo__cache_forget(mpitopo_request_t r)
{
    centry_t *e = r->entry;
    r->entry = NULL;
    key_free(&e->k[0]);
    key_free(&e->k[1]);
    e->used = e->in_use = 0;
    e->req = NULL;
}

void mpitopo__cache_clear(mpitopo__nbr_t *n)
{
    struct mpitopo__cache *c = n->cache;
    n->cache = NULL;
    for (int i = 0; c && i < CACHE_ENTRIES; i++) {
        centry_t *e = &c->e[i];
        if (!e->used)
            continue;
        if (!e->in_use) {
            mpitopo__request_release(e->req); /* forgets its entry */
            continue;
        }
        e->req->entry = NULL;
        key_free(&e->k[0]);
        key_free(&e->k[1]);
    }
    mpitopo__free(c);
}
