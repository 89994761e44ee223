/*
 * Per-communicator state of the global collectives: the reordered copies
 * of the user's communicator (thesis ch. 4), one per pattern (algorithm,
 * heuristic asked for, root), built on first use and cached in an
 * attribute of the user's communicator; freed with it, or at MPI_Finalize
 * for communicators never freed.
 *
 * A copy is a rank order: the heuristic's order (mpitopo__coll_order,
 * src/map/collmap.c) over the leaves of the communicator's machine
 * (mpitopo_comm_machine: one allgather of O(1) per process, cached on the
 * communicator), kept only when mpitopo__coll_cost says it is strictly
 * cheaper than the original order for that algorithm. Every order runs on
 * one private duplicate of the user's communicator, made on first use
 * (MPI_Comm_dup in a blocking call, MPI_Comm_idup in a nonblocking one):
 * the schedules address logical rank u at its
 * old rank old_of_new[u] (gv_peer), which is what a communicator split in
 * that order would give, without a communicator per pattern (MPI has few
 * context ids: MPICH 2,048) nor a blocking MPI_Comm_split. Messages of
 * concurrent operations are kept apart by tags (mpitopo__nbr_tags).
 *
 * Nothing a nonblocking call does waits for the other processes: the
 * machine and the node of every rank, gathered collectively once, are
 * gathered by blocking calls only (mpitopo__gstate_ready); a nonblocking
 * call on a communicator without them runs the original order, decided
 * again by the first call that has them.
 */
#include "coll/global/gcoll_internal.h"
#include "map/collmap.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_mutex_t glock = PTHREAD_MUTEX_INITIALIZER;
static int gkeyval = MPI_KEYVAL_INVALID, gfinal_keyval = MPI_KEYVAL_INVALID;
static gstate_t glist = {.prev = &glist, .next = &glist};

/* A private communicator as the schedule engine wants it: an entry of its
 * own, holding comm (freed with the entry's last reference). */
static int wrap_comm(MPI_Comm user, MPI_Comm comm, mpitopo__nbr_t **out, const char *func)
{
    mpitopo__nbr_t *n = mpitopo__calloc(1, sizeof *n);
    if (!n) {
        PMPI_Comm_free(&comm);
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func, "out of memory for a communicator entry");
    }
    n->prev = n->next = n;
    n->user_comm = user;
    n->refs = 1;
    n->kind = MPI_UNDEFINED;
    n->comm = comm;
    n->dup_request = MPI_REQUEST_NULL;
    n->info_sched = MPITOPO__SCHED_UNSET;
    n->info_threshold = -1;
    n->freed = 1; /* never in the schedule cache */
    /* MPI_COMM_NULL: the engine makes it (idup) with the first operation
     * and sets the error handler then. */
    int rc = comm == MPI_COMM_NULL ? MPI_SUCCESS : PMPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    if (rc != MPI_SUCCESS) {
        mpitopo__nbr_unref(n);
        return mpitopo__mpi_result(func, rc);
    }
    *out = n;
    return MPITOPO_SUCCESS;
}

static void order_free(gorder_t *o)
{
    if (o->nbr)
        mpitopo__nbr_unref(o->nbr);
    mpitopo__free(o->old_of_new);
    mpitopo__free(o);
}

static void state_free(gstate_t *s)
{
    while (s->orders) {
        gorder_t *o = s->orders;
        s->orders = o->next;
        order_free(o);
    }
    while (s->hiers) {
        ghier_t *h = s->hiers;
        s->hiers = h->next;
        mpitopo__free(h->first);
        mpitopo__free(h);
    }
    if (s->ident)
        mpitopo__nbr_unref(s->ident);
    if (s->host)
        mpitopo__nbr_unref(s->host);
    mpitopo__free(s->node_of_rank);
    if (s->tune)
        s->tune_free(s->tune);
    mpitopo__free(s);
}

static int delete_cb(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    gstate_t *s = value;
    if (s->ident)
        mpitopo__nbr_parent_going(s->ident);
    pthread_mutex_lock(&glock);
    s->prev->next = s->next;
    s->next->prev = s->prev;
    pthread_mutex_unlock(&glock);
    state_free(s);
    return MPI_SUCCESS;
}

static int final_cb(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm;
    (void)value;
    (void)extra;
    for (;;) {
        pthread_mutex_lock(&glock);
        gstate_t *s = glist.next;
        MPI_Comm c = s == &glist ? MPI_COMM_NULL : s->user;
        int k = gkeyval;
        pthread_mutex_unlock(&glock);
        if (c == MPI_COMM_NULL)
            break;
        if (PMPI_Comm_delete_attr(c, k) != MPI_SUCCESS)
            delete_cb(c, k, s, NULL);
    }
    pthread_mutex_lock(&glock);
    if (gkeyval != MPI_KEYVAL_INVALID)
        PMPI_Comm_free_keyval(&gkeyval);
    int k = keyval;
    PMPI_Comm_free_keyval(&k);
    gfinal_keyval = MPI_KEYVAL_INVALID;
    pthread_mutex_unlock(&glock);
    return MPI_SUCCESS;
}

static int keyvals_locked(void)
{
    int rc = MPI_SUCCESS;
    if (gfinal_keyval == MPI_KEYVAL_INVALID) {
        rc = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, final_cb, &gfinal_keyval, NULL);
        if (rc == MPI_SUCCESS && (rc = PMPI_Comm_set_attr(MPI_COMM_SELF, gfinal_keyval, NULL)))
            PMPI_Comm_free_keyval(&gfinal_keyval);
        if (rc != MPI_SUCCESS)
            gfinal_keyval = MPI_KEYVAL_INVALID;
    }
    if (rc == MPI_SUCCESS && gkeyval == MPI_KEYVAL_INVALID)
        rc = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_cb, &gkeyval, NULL);
    return rc;
}

/* Looked up without a collective; the state is made by the first caller
 * (local: the communicators are made later, collectively). */
int mpitopo__gstate_get(MPI_Comm comm, gstate_t **out, const char *func)
{
    int rc = mpitopo__check_mpi(func);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__check_intracomm(comm, func);
    if (rc != MPITOPO_SUCCESS)
        return mpitopo__mpi_result(func, rc);
    int found = 0;
    pthread_mutex_lock(&glock);
    rc = keyvals_locked();
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_get_attr(comm, gkeyval, out, &found);
    if (rc != MPI_SUCCESS || found) {
        pthread_mutex_unlock(&glock);
        return mpitopo__mpi_result(func, rc);
    }
    gstate_t *s = mpitopo__calloc(1, sizeof *s);
    if (!s) {
        pthread_mutex_unlock(&glock);
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func, "out of memory for collective state");
    }
    s->user = comm;
    rc = PMPI_Comm_size(comm, &s->size);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_rank(comm, &s->rank);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_set_attr(comm, gkeyval, s);
    if (rc != MPI_SUCCESS) {
        pthread_mutex_unlock(&glock);
        mpitopo__free(s);
        return mpitopo__mpi_result(func, rc);
    }
    s->prev = glist.prev;
    s->next = &glist;
    glist.prev->next = s;
    glist.prev = s;
    for (int i = 0; i < MPITOPO__COLL_NOPS; i++)
        s->last_alg[i] = -1;
    pthread_mutex_unlock(&glock);
    *out = s;
    return MPITOPO_SUCCESS;
}

int mpitopo__gstate_ident(gstate_t *s, mpitopo__nbr_t **out, const char *func)
{
    if (!s->ident) {
        int rc = wrap_comm(s->user, MPI_COMM_NULL, &s->ident, func);
        if (rc != MPITOPO_SUCCESS)
            return rc;
    }
    /* Made at the same call on every process: by MPI_Comm_dup in a blocking
     * call, else by MPI_Comm_idup, whose operations queue until it completes
     * (request.c), as the neighbourhood collectives do (collectives.c). */
    if (!s->nb || s->ident->comm == MPI_COMM_NULL) {
        int rc = mpitopo__nbr_private_comm(s->ident, !s->nb);
        if (rc != MPI_SUCCESS) {
            mpitopo__nbr_unref(s->ident);
            s->ident = NULL;
            return mpitopo__mpi_result(func, rc);
        }
    }
    *out = s->ident;
    return MPITOPO_SUCCESS;
}

int mpitopo__gstate_host_nbr(gstate_t *s, mpitopo__nbr_t **out, const char *func)
{
    int rc = s->host ? MPITOPO_SUCCESS : wrap_comm(s->user, MPI_COMM_NULL, &s->host, func);
    *out = s->host;
    return rc;
}

int mpitopo__gstate_ready(const gstate_t *s, int nodes)
{
    return !s->nb || (mpitopo__comm_machine_known(s->user) && (!nodes || s->node_of_rank));
}

int mpitopo__gstate_nodes(gstate_t *s, const char *func)
{
    if (s->node_of_rank)
        return MPITOPO_SUCCESS;
    const mpitopo_nodeinfo_t *ni;
    int rc = mpitopo__comm_nodeinfo(s->user, &ni);
    if (rc != MPITOPO_SUCCESS)
        return rc < 0 ? rc : mpitopo__mpi_result(func, rc);
    int *nodes = mpitopo__malloc_array((size_t)s->size, sizeof *nodes);
    if (!nodes)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func, "out of memory for %d node numbers", s->size);
    int me = ni->node;
    rc = PMPI_Allgather(&me, 1, MPI_INT, nodes, 1, MPI_INT, s->user);
    if (rc != MPI_SUCCESS) {
        mpitopo__free(nodes);
        return mpitopo__mpi_result(func, rc);
    }
    s->node_of_rank = nodes;
    s->nnodes = ni->nnodes;
    return MPITOPO_SUCCESS;
}

static mpitopo__coll_heur_t natural(mpitopo__coll_alg_t alg)
{
    switch (alg) {
    case MPITOPO__COLL_ALG_ALLGATHER_RING:
    case MPITOPO__COLL_ALG_ALLGATHER_BRUCK:
        return MPITOPO__COLL_RMH;
    case MPITOPO__COLL_ALG_BCAST_BINOMIAL:
        return MPITOPO__COLL_BBMH;
    case MPITOPO__COLL_ALG_GATHER_BINOMIAL:
        return MPITOPO__COLL_BGMH;
    default:
        return MPITOPO__COLL_RDMH;
    }
}

static int is_pow2(int p)
{
    return p > 0 && (p & (p - 1)) == 0;
}

/*
 * Decide the order of a new entry: fills o->old_of_new (NULL: keep) and
 * o->heur_used, o->cost0, o->cost1. Every process computes the same.
 */
/* The distance between the processes of comm (*d) and the leaf of each of
 * its ranks, from the machine cached on comm: MPITOPO_SUCCESS or what
 * mpitopo__comm_machine_cached returned (an MPI error worded for func). */
static int comm_dist(MPI_Comm comm, mpitopo__coll_dist_t *d, const int **leaf, const char *func)
{
    const mpitopo_nodeinfo_t *ni;
    const mpitopo_machine_t *m;
    int rc = mpitopo__comm_machine_cached(comm, &ni, &m, leaf);
    if (rc != MPITOPO_SUCCESS)
        return rc < 0 ? rc : mpitopo__mpi_result(func, rc);
    const mpitopo_network_t *net = NULL;
    const int *end_node = NULL;
    mpitopo__nodeinfo_network(ni, &net, &end_node);
    *d = (mpitopo__coll_dist_t){.machine = m, .network = net, .end_node = end_node};
    return MPITOPO_SUCCESS;
}

static int decide(gstate_t *s, gorder_t *o, mpitopo__coll_alg_t alg, double bytes,
                  const char *func)
{
    int p = s->size;
    if (o->heur_req == MPITOPO__GH_NONE || p <= 2)
        return MPITOPO_SUCCESS;
    mpitopo__coll_heur_t h = o->heur_req == MPITOPO__GH_AUTO ? natural(alg)
                             : o->heur_req == MPITOPO__GH_RDMH ? MPITOPO__COLL_RDMH
                             : o->heur_req == MPITOPO__GH_RMH  ? MPITOPO__COLL_RMH
                             : o->heur_req == MPITOPO__GH_BBMH ? MPITOPO__COLL_BBMH
                                                               : MPITOPO__COLL_BGMH;
    o->heur_used = h == MPITOPO__COLL_RDMH ? MPITOPO__GH_RDMH
                   : h == MPITOPO__COLL_RMH ? MPITOPO__GH_RMH
                   : h == MPITOPO__COLL_BBMH ? MPITOPO__GH_BBMH
                                             : MPITOPO__GH_BGMH;
    if (h == MPITOPO__COLL_RDMH && !is_pow2(p)) {
        snprintf(o->note, sizeof o->note, "rdmh needs a power of two, %d processes", p);
        return MPITOPO_SUCCESS;
    }
    if (!mpitopo__gstate_ready(s, 0)) {
        snprintf(o->note, sizeof o->note,
                 "the machine is not gathered yet (a nonblocking call does not wait for it)");
        o->provisional = 1;
        return MPITOPO_SUCCESS;
    }
    mpitopo__coll_dist_t d;
    const int *leaf;
    int rc = comm_dist(s->user, &d, &leaf, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    int *lleaf = mpitopo__malloc_array((size_t)p, 2 * sizeof(int));
    if (!lleaf)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func, "out of memory for %d leaves", p);
    int *lold = lleaf + p;
    for (int v = 0; v < p; v++)
        lleaf[v] = leaf[(v + o->root) % p];
    rc = mpitopo__coll_order(h, &d, p, lleaf, lold);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__coll_cost(alg, &d, p, lleaf, NULL, bytes, &o->cost0);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__coll_cost(alg, &d, p, lleaf, lold, bytes, &o->cost1);
    /* The reordered order also pays the step that puts the blocks in its
     * order (initComm; the ring stores blocks in place, bcast and allreduce
     * have no vector output), which the original order does not. */
    double perm = 0;
    if (rc == MPITOPO_SUCCESS && (alg == MPITOPO__COLL_ALG_ALLGATHER_RD || alg == MPITOPO__COLL_ALG_ALLGATHER_BRUCK ||
                                  alg == MPITOPO__COLL_ALG_GATHER_BINOMIAL))
        rc = mpitopo__coll_perm_cost(&d, p, lleaf, lold, bytes, &perm);
    o->cost1 += perm;
    if (rc != MPITOPO_SUCCESS) {
        /* The same on every process (deterministic): keep the order. */
        snprintf(o->note, sizeof o->note, "%s", mpitopo_last_error());
        mpitopo__free(lleaf);
        return MPITOPO_SUCCESS;
    }
    int identity = 1;
    for (int j = 0; j < p; j++)
        identity &= lold[j] == j;
    if (identity || !(o->cost1 < o->cost0)) {
        mpitopo__free(lleaf);
        return MPITOPO_SUCCESS;
    }
    o->old_of_new = mpitopo__malloc_array((size_t)p, 2 * sizeof(int));
    if (!o->old_of_new) {
        mpitopo__free(lleaf);
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func, "out of memory for an order of %d", p);
    }
    o->new_of_old = o->old_of_new + p;
    for (int j = 0; j < p; j++) {
        o->old_of_new[j] = (lold[j] + o->root) % p;
        o->new_of_old[o->old_of_new[j]] = j;
    }
    mpitopo__free(lleaf);
    return MPITOPO_SUCCESS;
}

int mpitopo__gstate_order(gstate_t *s, int alg, int heur_req, int root, double bytes,
                          gorder_t **out, const char *func)
{
    for (gorder_t **at = &s->orders; *at; at = &(*at)->next) {
        gorder_t *o = *at;
        if (o->alg != alg || o->heur_req != heur_req || o->root != root)
            continue;
        if (!o->provisional || !mpitopo__gstate_ready(s, 0)) {
            *out = o;
            return MPITOPO_SUCCESS;
        }
        /* Kept for want of the machine, which this call has: decide again. */
        *at = o->next;
        if (s->hier_flat == o)
            s->hier_valid = 0;
        order_free(o);
        break;
    }
    /* Beyond MAX_ORDERS reordered patterns, the original order. */
    int fresh = s->norders < MPITOPO__GMAX_ORDERS || heur_req == MPITOPO__GH_NONE;
    gorder_t *o = mpitopo__calloc(1, sizeof *o);
    if (!o)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func, "out of memory for an order entry");
    o->alg = alg;
    o->heur_req = heur_req;
    o->root = root;
    o->heur_used = MPITOPO__GH_NONE;
    int rc = MPITOPO_SUCCESS;
    if (fresh)
        rc = decide(s, o, (mpitopo__coll_alg_t)alg, bytes, func);
    else
        snprintf(o->note, sizeof o->note, "more than %d orders on this communicator",
                 MPITOPO__GMAX_ORDERS);
    o->reordered = rc == MPITOPO_SUCCESS && o->old_of_new;
    if (rc == MPITOPO_SUCCESS) {
        rc = mpitopo__gstate_ident(s, &o->nbr, func);
        if (rc == MPITOPO_SUCCESS)
            mpitopo__nbr_ref(o->nbr);
    }
    if (rc != MPITOPO_SUCCESS) {
        o->nbr = NULL;
        order_free(o);
        return rc;
    }
    o->next = s->orders;
    s->orders = o;
    s->norders += o->reordered;
    *out = o;
    return MPITOPO_SUCCESS;
}

/* The cost of alg over the leaves lv[0..n) in their order (*c0), and *c1:
 * the cost in heuristic h's order perm when that is strictly cheaper
 * (*kept = 1), else *c0 (h < 0: no heuristic). An error of the heuristic's
 * part keeps the order; an error of the first cost is returned. */
static int ordered_cost(const mpitopo__coll_dist_t *d, const int *lv, int n, int h,
                        mpitopo__coll_alg_t alg, double bytes, int *perm, double *c0, double *c1,
                        int *kept)
{
    *kept = 0;
    int rc = mpitopo__coll_cost(alg, d, n, lv, NULL, bytes, c0);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    *c1 = *c0;
    if (h >= 0 && n > 2) {
        double c;
        if (mpitopo__coll_order((mpitopo__coll_heur_t)h, d, n, lv, perm) == MPITOPO_SUCCESS &&
            mpitopo__coll_cost(alg, d, n, lv, perm, bytes, &c) == MPITOPO_SUCCESS && c < *c0) {
            *c1 = c;
            *kept = 1;
        }
        mpitopo__clear_error();
    }
    return MPITOPO_SUCCESS;
}

/* The largest cost over the nodes of alg inside each node, each node's ranks
 * in rank order, or in heuristic h's order where that is cheaper (h < 0:
 * none), as mpitopo__gstate_hier plans them. */
static int per_node_cost(gstate_t *s, const mpitopo__coll_dist_t *d, const int *leaf,
                         mpitopo__coll_alg_t alg, int h, double bytes, int *members, int *lv,
                         int *perm, double *worst)
{
    *worst = 0;
    for (int n = 0; n < s->nnodes; n++) {
        int L = 0;
        for (int r = 0; r < s->size; r++)
            if (s->node_of_rank[r] == n)
                members[L++] = r;
        if (L < 2)
            continue;
        for (int j = 0; j < L; j++)
            lv[j] = leaf[members[j]];
        double c0, c;
        int kept, rc = ordered_cost(d, lv, L, h, alg, bytes, perm, &c0, &c, &kept);
        if (rc != MPITOPO_SUCCESS)
            return rc;
        if (c > *worst)
            *worst = c;
    }
    return MPITOPO_SUCCESS;
}

int mpitopo__gstate_hier_pays(gstate_t *s, const gorder_t *flat, double bytes, int *pays,
                              const char *func)
{
    *pays = 0;
    if (s->hier_valid && s->hier_bytes == bytes && s->hier_flat == flat) {
        *pays = s->hier_pays;
        return MPITOPO_SUCCESS;
    }
    if (!mpitopo__gstate_ready(s, 1))
        return MPITOPO_SUCCESS; /* flat, and asked again by a call that may gather */
    int rc = mpitopo__gstate_nodes(s, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    int p = s->size, minl = p, maxl = 0;
    int *cnt = mpitopo__calloc((size_t)s->nnodes + 4 * (size_t)p, sizeof(int));
    if (!cnt)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func, "out of memory for %d nodes", s->nnodes);
    int *members = cnt + s->nnodes, *lv = members + p, *leaders = lv + p, *perm = leaders + p;
    /* With a heuristic, the hierarchical plan reorders too (the leaders by
     * RDMH or RMH, the nodes' trees by BGMH and BBMH): its cost is the
     * cheaper order's, as mpitopo__gstate_hier keeps it. */
    int heur = flat->heur_req != MPITOPO__GH_NONE;
    for (int r = 0; r < p; r++)
        cnt[s->node_of_rank[r]]++;
    for (int n = 0; n < s->nnodes; n++) {
        minl = cnt[n] < minl ? cnt[n] : minl;
        maxl = cnt[n] > maxl ? cnt[n] : maxl;
    }
    if (s->nnodes > 1 && minl > 1) {
        mpitopo__coll_dist_t d;
        const int *leaf;
        rc = comm_dist(s->user, &d, &leaf, func);
        if (rc != MPITOPO_SUCCESS) {
            mpitopo__free(cnt);
            return rc;
        }
        double cflat, pcost = 0, cg, cb, cgl, cbl, cl;
        rc = mpitopo__coll_cost((mpitopo__coll_alg_t)flat->alg, &d, p, leaf, flat->old_of_new,
                                bytes, &cflat);
        /* A reordered flat allgather pays its initComm exchange too (decide). */
        if (rc == MPITOPO_SUCCESS && flat->old_of_new && flat->alg != MPITOPO__COLL_ALG_ALLGATHER_RING)
            rc = mpitopo__coll_perm_cost(&d, p, leaf, flat->old_of_new, bytes, &pcost);
        cflat += pcost;
        if (rc == MPITOPO_SUCCESS)
            rc = per_node_cost(s, &d, leaf, MPITOPO__COLL_ALG_GATHER_BINOMIAL,
                               heur ? MPITOPO__COLL_BGMH : -1, bytes, members, lv, perm, &cg);
        if (rc == MPITOPO_SUCCESS)
            rc = per_node_cost(s, &d, leaf, MPITOPO__COLL_ALG_BCAST_BINOMIAL,
                               heur ? MPITOPO__COLL_BBMH : -1, bytes * p, members, lv, perm, &cb);
        if (rc == MPITOPO_SUCCESS)
            rc = per_node_cost(s, &d, leaf, MPITOPO__COLL_ALG_GATHER_LINEAR, -1, bytes, members,
                               lv, perm, &cgl);
        if (rc == MPITOPO_SUCCESS)
            rc = per_node_cost(s, &d, leaf, MPITOPO__COLL_ALG_BCAST_LINEAR, -1, bytes * p,
                               members, lv, perm, &cbl);
        if (rc == MPITOPO_SUCCESS) {
            /* Leaders: the lowest rank of each node. */
            for (int n = 0; n < s->nnodes; n++)
                leaders[n] = -1;
            for (int r = 0; r < p; r++)
                if (leaders[s->node_of_rank[r]] < 0)
                    leaders[s->node_of_rank[r]] = r;
            for (int n = 0; n < s->nnodes; n++)
                lv[n] = leaf[leaders[n]];
            int pow2 = (s->nnodes & (s->nnodes - 1)) == 0;
            double cl0;
            int kept;
            rc = ordered_cost(&d, lv, s->nnodes,
                              !heur ? -1 : pow2 ? MPITOPO__COLL_RDMH : MPITOPO__COLL_RMH,
                              pow2 ? MPITOPO__COLL_ALG_ALLGATHER_RD : MPITOPO__COLL_ALG_ALLGATHER_RING,
                              bytes * maxl, perm, &cl0, &cl, &kept);
        }
        if (rc != MPITOPO_SUCCESS) {
            mpitopo__free(cnt);
            return rc;
        }
        /* The cheaper of the two hierarchical variants (binomial on a tie),
         * when it beats the flat algorithm. */
        int linear = cgl + cbl < cg + cb;
        s->hier_cost = cl + (linear ? cgl + cbl : cg + cb);
        s->flat_cost = cflat;
        *pays = s->hier_cost < cflat ? (linear ? MPITOPO__GA_HIER : MPITOPO__GA_HIERB) : 0;
    }
    mpitopo__free(cnt);
    s->hier_valid = 1;
    s->hier_bytes = bytes;
    s->hier_flat = flat;
    s->hier_pays = *pays;
    return MPITOPO_SUCCESS;
}

/* Reorder ranks[0..n) (their leaves: leaf[ranks[j]]) by heuristic h when
 * the cost of alg strictly drops; ranks[0] stays. Returns whether it did.
 * Errors of the heuristic or the cost (the same everywhere) keep the order. */
static int reorder_group(const mpitopo__coll_dist_t *d, const int *leaf, int *ranks, int n,
                         mpitopo__coll_heur_t h, mpitopo__coll_alg_t alg, double bytes, int *lv,
                         int *perm, int *tmp, double *c0, double *c1)
{
    *c0 = *c1 = 0;
    if (n < 3)
        return 0;
    for (int j = 0; j < n; j++)
        lv[j] = leaf[ranks[j]];
    int kept;
    if (ordered_cost(d, lv, n, (int)h, alg, bytes, perm, c0, c1, &kept) != MPITOPO_SUCCESS) {
        mpitopo__clear_error();
        *c1 = *c0;
        return 0;
    }
    if (!kept)
        return 0;
    for (int j = 0; j < n; j++)
        tmp[j] = ranks[perm[j]];
    memcpy(ranks, tmp, (size_t)n * sizeof *ranks);
    return 1;
}

int mpitopo__gstate_hier(gstate_t *s, int heur_req, int binomial, double bytes,
                         const ghier_t **out, const char *func)
{
    if (heur_req != MPITOPO__GH_NONE)
        heur_req = MPITOPO__GH_AUTO;
    for (ghier_t *h = s->hiers; h; h = h->next)
        if (h->heur_req == heur_req && h->binomial == binomial) {
            *out = h;
            return MPITOPO_SUCCESS;
        }
    int rc = mpitopo__gstate_nodes(s, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    int p = s->size, nn = s->nnodes;
    ghier_t *h = mpitopo__calloc(1, sizeof *h);
    int *mem = mpitopo__calloc((size_t)(nn + 1) + 3 * (size_t)p, sizeof(int));
    int *work = mpitopo__malloc_array((size_t)(4 * p + 4 * nn + 4), sizeof(int));
    if (!h || !mem || !work) {
        mpitopo__free(h);
        mpitopo__free(mem);
        mpitopo__free(work);
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func, "out of memory for a hierarchical plan");
    }
    h->heur_req = heur_req;
    h->binomial = binomial;
    h->nnodes = nn;
    h->first = mem;
    h->slot_rank = mem + nn + 1;
    h->bslot = h->slot_rank + p;
    h->pos_of_rank = h->bslot + p;
    /* Identity: nodes by number, ranks in order. */
    int *cnt = work, *order = work + nn + 1, *nfirst = order + nn + 1, *lv = nfirst + nn + 1;
    int *perm = lv + p, *tmp = perm + p, *ranks = tmp + p;
    for (int n = 0; n < nn; n++)
        cnt[n] = 0;
    for (int r = 0; r < p; r++)
        cnt[s->node_of_rank[r]]++;
    nfirst[0] = 0;
    for (int n = 0; n < nn; n++)
        nfirst[n + 1] = nfirst[n] + cnt[n];
    for (int n = 0; n < nn; n++)
        cnt[n] = 0;
    for (int r = 0; r < p; r++) {
        int n = s->node_of_rank[r];
        ranks[nfirst[n] + cnt[n]++] = r;
    }
    for (int n = 0; n < nn; n++)
        order[n] = n;
    if (heur_req != MPITOPO__GH_NONE && p > 2) {
        mpitopo__coll_dist_t d;
        const int *leaf;
        rc = comm_dist(s->user, &d, &leaf, func);
        if (rc != MPITOPO_SUCCESS) {
            mpitopo__free(h);
            mpitopo__free(mem);
            mpitopo__free(work);
            return rc;
        }
        /* Leaders (the first rank of each node) in the order of their heuristic. */
        int *lead = mpitopo__malloc_array((size_t)nn, sizeof(int));
        if (lead) {
            int maxl = 0;
            for (int n = 0; n < nn; n++) {
                lead[n] = ranks[nfirst[n]];
                maxl = nfirst[n + 1] - nfirst[n] > maxl ? nfirst[n + 1] - nfirst[n] : maxl;
            }
            int pow2 = (nn & (nn - 1)) == 0;
            /* lead[] holds ranks; reorder the node numbers alongside. */
            int *lr = mpitopo__malloc_array((size_t)nn, sizeof(int));
            if (lr) {
                memcpy(lr, lead, (size_t)nn * sizeof *lr);
                h->leaders_reordered =
                    reorder_group(&d, leaf, lr, nn, pow2 ? MPITOPO__COLL_RDMH : MPITOPO__COLL_RMH,
                                  pow2 ? MPITOPO__COLL_ALG_ALLGATHER_RD
                                       : MPITOPO__COLL_ALG_ALLGATHER_RING,
                                  bytes * maxl, lv, perm, tmp, &h->cost0, &h->cost1);
                for (int k = 0; k < nn; k++)
                    order[k] = s->node_of_rank[lr[k]];
                mpitopo__free(lr);
            }
            mpitopo__free(lead);
        }
        /* Inside each node: the gather order (BGMH) into slot_rank. */
        for (int n = 0; binomial && n < nn; n++) {
            double c0, c1;
            h->nodes_reordered +=
                reorder_group(&d, leaf, ranks + nfirst[n], nfirst[n + 1] - nfirst[n],
                              MPITOPO__COLL_BGMH, MPITOPO__COLL_ALG_GATHER_BINOMIAL, bytes, lv,
                              perm, tmp, &c0, &c1);
        }
    }
    /* Lay the nodes out by position. */
    h->first[0] = 0;
    for (int k = 0; k < nn; k++) {
        int n = order[k], L = nfirst[n + 1] - nfirst[n];
        h->first[k + 1] = h->first[k] + L;
        memcpy(h->slot_rank + h->first[k], ranks + nfirst[n], (size_t)L * sizeof(int));
        memcpy(h->bslot + h->first[k], ranks + nfirst[n], (size_t)L * sizeof(int));
        for (int j = 0; j < L; j++)
            h->pos_of_rank[ranks[nfirst[n] + j]] = k;
    }
    /* The broadcast order (BBMH) inside each node, from rank order. */
    if (heur_req != MPITOPO__GH_NONE && binomial && p > 2) {
        mpitopo__coll_dist_t d;
        const int *leaf;
        if (comm_dist(s->user, &d, &leaf, func) == MPITOPO_SUCCESS) {
            for (int k = 0; k < nn; k++) {
                int L = h->first[k + 1] - h->first[k], *b = h->bslot + h->first[k];
                /* Rank order first (the leader, the lowest rank, stays at 0). */
                for (int i = 1; i < L; i++)
                    for (int j = i; j > 0 && b[j - 1] > b[j]; j--) {
                        int t = b[j];
                        b[j] = b[j - 1];
                        b[j - 1] = t;
                    }
                double c0, c1;
                h->nodes_reordered += reorder_group(&d, leaf, b, L, MPITOPO__COLL_BBMH,
                                                    MPITOPO__COLL_ALG_BCAST_BINOMIAL,
                                                    bytes * p, lv, perm, tmp, &c0, &c1);
            }
        }
    }
    mpitopo__free(work);
    h->next = s->hiers;
    s->hiers = h;
    *out = h;
    return MPITOPO_SUCCESS;
}

void mpitopo__gstate_log(gstate_t *s, int op, int alg, const gorder_t *o, const char *why)
{
    static const char *const ops[] = {"allgather", "bcast", "gather", "allreduce"};
    s->last_alg[op] = alg;
    s->last_heur[op] = o ? o->heur_used : MPITOPO__GH_NONE;
    s->last_reordered[op] = o ? o->reordered : 0;
    if (s->rank != 0 || mpitopo__verbose() < 1)
        return;
    int re = o && o->reordered, h = o ? o->heur_used : MPITOPO__GH_NONE;
    unsigned key = (((unsigned)op * 8u + (unsigned)alg % 8u) * 8u + (unsigned)h % 8u) * 2u + (unsigned)re;
    if (s->logged[key / 8] & (1u << (key % 8)))
        return;
    s->logged[key / 8] |= (unsigned char)(1u << (key % 8));
    char order[400] = "original order";
    if (o && o->heur_used != MPITOPO__GH_NONE && o->note[0])
        snprintf(order, sizeof order, "%s: original order kept (%s)",
                 mpitopo__gheur_name((mpitopo__gheur_t)o->heur_used), o->note);
    else if (o && o->heur_used != MPITOPO__GH_NONE)
        snprintf(order, sizeof order, "%s: %s (cost %.4g -> %.4g)",
                 mpitopo__gheur_name((mpitopo__gheur_t)o->heur_used),
                 o->reordered ? "reordered" : "original order kept", o->cost0, o->cost1);
    else if (o && o->note[0])
        snprintf(order, sizeof order, "original order (%s)", o->note);
    mpitopo__log(1, "%s on %d processes: %s%s%s, %s", ops[op], s->size,
                 mpitopo__galg_name((mpitopo__galg_t)alg), why && *why ? " " : "",
                 why ? why : "", order);
}

int mpitopo__coll_last(MPI_Comm comm, int which, int *alg, int *heur, int *reordered)
{
    gstate_t *s;
    int rc = mpitopo__gstate_get(comm, &s, __func__);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    if (which < 0 || which >= MPITOPO__COLL_NOPS || s->last_alg[which] < 0)
        return MPITOPO_FAIL(MPITOPO_ERR_NOT_FOUND, "no operation %d ran on comm", which);
    *alg = s->last_alg[which];
    *heur = s->last_heur[which];
    *reordered = s->last_reordered[which];
    return MPITOPO_SUCCESS;
}
