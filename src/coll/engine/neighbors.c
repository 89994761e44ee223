/*
 * Canonical neighbour lists of a topology communicator, cached on it
 * through an attribute (the public queries are in neighbor/queries.c).
 *
 * The attribute is not copied by MPI_Comm_dup (a duplicate computes its
 * own lists and gets its own private communicator): sharing the private
 * communicator between comm and its duplicate would let collectives on the
 * two, which MPI allows in different orders on different processes, match
 * each other's messages. Entries sit in one mutex-protected list so that
 * MPI_Finalize can release those whose communicator the program never
 * freed: our own attribute on MPI_COMM_SELF, deleted at the start of
 * MPI_Finalize, deletes the attribute of every listed communicator.
 */
#include "coll/coll_internal.h"

#include <pthread.h>
#include <stdatomic.h>

static pthread_mutex_t nbr_lock = PTHREAD_MUTEX_INITIALIZER;
static int nbr_keyval = MPI_KEYVAL_INVALID;
/* nbr_keyval for the lock-free lookup of mpitopo__nbr_get. */
static atomic_int fast_keyval = MPI_KEYVAL_INVALID;
static int finalize_keyval = MPI_KEYVAL_INVALID;
static mpitopo__nbr_t entries = {.prev = &entries, .next = &entries};

/* Never under nbr_lock: freeing the private communicator may run
 * attribute callbacks. A pending idup is completed first (every process
 * started it, from the same collective call, so this does not hang). */
static void nbr_free(mpitopo__nbr_t *n)
{
    int rc = MPI_SUCCESS;
    if (n->dup_request != MPI_REQUEST_NULL)
        rc = PMPI_Wait(&n->dup_request, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS && n->comm != MPI_COMM_NULL)
        rc = PMPI_Comm_free(&n->comm);
    if (rc != MPI_SUCCESS)
        mpitopo__log(1, "freeing a private neighbour communicator failed with MPI error %d", rc);
    mpitopo__cache_clear(n);
    if (n->layer && n->layer->release)
        n->layer->release(n);
    if (n->destinations != n->sources)
        mpitopo__free(n->destinations);
    mpitopo__free(n->sources);
    mpitopo__free(n);
}

void mpitopo__nbr_ref(mpitopo__nbr_t *n)
{
    pthread_mutex_lock(&nbr_lock);
    n->refs++;
    pthread_mutex_unlock(&nbr_lock);
}

void mpitopo__nbr_unref(mpitopo__nbr_t *n)
{
    pthread_mutex_lock(&nbr_lock);
    int last = --n->refs == 0;
    pthread_mutex_unlock(&nbr_lock);
    if (last)
        nbr_free(n);
}

void mpitopo__nbr_parent_going(mpitopo__nbr_t *n)
{
    /* A duplicate still being made: Open MPI 4.1 frees the parent at once
     * and crashes when its pending MPI_Comm_idup completes, so it is
     * completed now, while the parent exists (every process started it
     * from the same collective call and frees comm collectively: this
     * cannot hang). MPICH keeps the parent until the idup completes and
     * runs the delete callbacks from inside that completion, where a wait
     * on it would recurse: there it completes by itself. */
#ifdef OPEN_MPI
    if (n->dup_request != MPI_REQUEST_NULL) {
        int rc = mpitopo__nbr_private_comm(n, 1);
        if (rc != MPI_SUCCESS)
            mpitopo__log(1, "completing a private communicator failed with MPI error %d", rc);
    }
#else
    (void)n;
#endif
}

static int delete_cb(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    mpitopo__nbr_t *n = value;
    /* The user's communicator is going. Operations in flight keep the
     * entry (their references) and finish on the duplicate. */
    mpitopo__nbr_parent_going(n);
    n->freed = 1;
    n->user_comm = MPI_COMM_NULL;
    mpitopo__cache_clear(n);
    pthread_mutex_lock(&nbr_lock);
    n->prev->next = n->next;
    n->next->prev = n->prev;
    n->prev = n->next = n;
    pthread_mutex_unlock(&nbr_lock);
    mpitopo__nbr_unref(n);
    return MPI_SUCCESS;
}

/* At MPI_Finalize: delete our attribute from every communicator still
 * cached (delete_cb unlinks it), then free the keyvals. */
static int finalize_cb(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm;
    (void)value;
    (void)extra;
    for (;;) {
        pthread_mutex_lock(&nbr_lock);
        mpitopo__nbr_t *n = entries.next;
        MPI_Comm c = n == &entries ? MPI_COMM_NULL : n->user_comm;
        int k = nbr_keyval;
        pthread_mutex_unlock(&nbr_lock);
        if (c == MPI_COMM_NULL)
            break;
        if (PMPI_Comm_delete_attr(c, k) != MPI_SUCCESS)
            delete_cb(c, k, n, NULL); /* MPI refused: release it by hand */
    }
    pthread_mutex_lock(&nbr_lock);
    atomic_store(&fast_keyval, MPI_KEYVAL_INVALID);
    if (nbr_keyval != MPI_KEYVAL_INVALID)
        PMPI_Comm_free_keyval(&nbr_keyval);
    int k = keyval;
    PMPI_Comm_free_keyval(&k);
    finalize_keyval = MPI_KEYVAL_INVALID;
    pthread_mutex_unlock(&nbr_lock);
    return MPI_SUCCESS;
}

/* Create the keyvals on first use (under nbr_lock). */
static int keyvals_locked(void)
{
    int rc = MPI_SUCCESS;
    if (finalize_keyval == MPI_KEYVAL_INVALID) {
        rc = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finalize_cb, &finalize_keyval, NULL);
        if (rc == MPI_SUCCESS && (rc = PMPI_Comm_set_attr(MPI_COMM_SELF, finalize_keyval, NULL)))
            PMPI_Comm_free_keyval(&finalize_keyval);
        if (rc != MPI_SUCCESS)
            finalize_keyval = MPI_KEYVAL_INVALID;
    }
    if (rc == MPI_SUCCESS && nbr_keyval == MPI_KEYVAL_INVALID) {
        rc = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_cb, &nbr_keyval, NULL);
        if (rc == MPI_SUCCESS)
            atomic_store(&fast_keyval, nbr_keyval);
    }
    return rc;
}

/* Cartesian: MPI_Cart_shift by 1 in every dimension, -1 neighbour first. */
static int lists_cart(MPI_Comm comm, mpitopo__nbr_t *n, const char *func)
{
    int ndims, rc = PMPI_Cartdim_get(comm, &ndims);
    if (rc != MPI_SUCCESS)
        return rc;
    /* Tags 0..2*ndims-1 must fit under the smallest MPI_TAG_UB MPI allows. */
    if (ndims > 16383)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_UNSUPPORTED, func,
                                 "comm has %d dimensions; at most 16383 are supported", ndims);
    n->indegree = n->outdegree = 2 * ndims;
    n->sources = mpitopo__malloc_array((size_t)(ndims > 0 ? 2 * ndims : 1), sizeof(int));
    if (!n->sources)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func, "out of memory for %d neighbours",
                                 2 * ndims);
    n->destinations = n->sources;
    for (int d = 0; d < ndims && rc == MPI_SUCCESS; d++)
        rc = PMPI_Cart_shift(comm, d, 1, &n->sources[2 * d], &n->sources[2 * d + 1]);
    return rc;
}

static int lists_graph(MPI_Comm comm, mpitopo__nbr_t *n, const char *func)
{
    int rank, deg, rc = PMPI_Comm_rank(comm, &rank);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Graph_neighbors_count(comm, rank, &deg);
    if (rc != MPI_SUCCESS)
        return rc;
    n->indegree = n->outdegree = deg;
    n->sources = mpitopo__malloc_array((size_t)(deg > 0 ? deg : 1), sizeof(int));
    if (!n->sources)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func, "out of memory for %d neighbours", deg);
    n->destinations = n->sources;
    return PMPI_Graph_neighbors(comm, rank, deg, n->sources);
}

/* Weights are asked for into real arrays: passing MPI_UNWEIGHTED for a
 * weighted graph is not allowed everywhere. */
static int lists_dist_graph(MPI_Comm comm, mpitopo__nbr_t *n, const char *func)
{
    int in, out, weighted, rc = PMPI_Dist_graph_neighbors_count(comm, &in, &out, &weighted);
    if (rc != MPI_SUCCESS)
        return rc;
    n->indegree = in;
    n->outdegree = out;
    size_t nin = (size_t)(in > 0 ? in : 1), nout = (size_t)(out > 0 ? out : 1);
    n->sources = mpitopo__malloc_array(nin, sizeof(int));
    n->destinations = mpitopo__malloc_array(nout, sizeof(int));
    int *w = mpitopo__malloc_array(nin + nout, sizeof(int));
    if (!n->sources || !n->destinations || !w) {
        mpitopo__free(w);
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func,
                                 "out of memory for %d + %d neighbours", in, out);
    }
    rc = PMPI_Dist_graph_neighbors(comm, in, n->sources, w, out, n->destinations, w + nin);
    mpitopo__free(w);
    return rc;
}

static int compute(MPI_Comm comm, int kind, const mpitopo__nbr_layer_t *layer, const char *func,
                   mpitopo__nbr_t **out)
{
    mpitopo__nbr_t *n = mpitopo__calloc(1, sizeof *n);
    if (!n)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func, "out of memory for neighbour lists");
    n->prev = n->next = n;
    n->user_comm = comm;
    n->refs = 1;
    n->kind = kind;
    n->comm = MPI_COMM_NULL;
    n->dup_request = MPI_REQUEST_NULL;
    n->layer = layer;
    int rc = kind == MPI_CART    ? lists_cart(comm, n, func)
             : kind == MPI_GRAPH ? lists_graph(comm, n, func)
                                 : lists_dist_graph(comm, n, func);
    if (rc == MPI_SUCCESS && layer && layer->init)
        rc = layer->init(n, comm, func);
    if (rc != MPI_SUCCESS) {
        nbr_free(n);
        return rc;
    }
    *out = n;
    return MPI_SUCCESS;
}

static int topology_kind(MPI_Comm comm, const char *func, int *kind)
{
    int rc = mpitopo__check_mpi(func);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__check_intracomm(comm, func);
    if (rc == MPITOPO_SUCCESS)
        rc = PMPI_Topo_test(comm, kind);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    if (*kind != MPI_CART && *kind != MPI_GRAPH && *kind != MPI_DIST_GRAPH)
        return MPITOPO_FAIL_AS(MPI_ERR_TOPOLOGY, func,
                                 "comm has no topology (MPI_Topo_test gives MPI_UNDEFINED); a "
                                 "Cartesian, graph or dist-graph communicator is required");
    return MPITOPO_SUCCESS;
}

/* Attach a new entry (under nbr_lock): the attribute holds its reference. */
static int attach_locked(MPI_Comm comm, mpitopo__nbr_t *n)
{
    int rc = PMPI_Comm_set_attr(comm, nbr_keyval, n);
    if (rc != MPI_SUCCESS)
        return rc;
    n->prev = entries.prev;
    n->next = &entries;
    entries.prev->next = n;
    entries.prev = n;
    return MPI_SUCCESS;
}

int mpitopo__nbr_lists(MPI_Comm comm, const mpitopo__nbr_layer_t *layer, const char *func,
                       mpitopo__nbr_t **nbr)
{
    /* A communicator that carries our lists is a live intracommunicator
     * with a topology: the checks below were made when they were cached,
     * and one attribute lookup is all a call in a loop pays. The keyval
     * is invalid before the first entry and after MPI_Finalize. */
    if ((*nbr = mpitopo__nbr_cached(comm)) != NULL)
        return MPITOPO_SUCCESS;
    int found = 0, kind, rc = topology_kind(comm, func, &kind);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    pthread_mutex_lock(&nbr_lock);
    rc = keyvals_locked();
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_get_attr(comm, nbr_keyval, nbr, &found);
    pthread_mutex_unlock(&nbr_lock);
    if (rc != MPI_SUCCESS || found)
        return mpitopo__mpi_result(func, rc);
    /* Computed outside the lock (it calls MPI); only this thread may use
     * comm for a collective now, and queries racing here would at worst
     * compute the lists twice, the loser's copy being dropped. */
    mpitopo__nbr_t *n = NULL;
    rc = compute(comm, kind, layer, func, &n);
    if (rc != MPI_SUCCESS)
        return mpitopo__mpi_result(func, rc);
    pthread_mutex_lock(&nbr_lock);
    mpitopo__nbr_t *other = NULL;
    rc = PMPI_Comm_get_attr(comm, nbr_keyval, &other, &found);
    if (rc == MPI_SUCCESS && !found)
        rc = attach_locked(comm, n);
    pthread_mutex_unlock(&nbr_lock);
    if (rc != MPI_SUCCESS || found) {
        nbr_free(n);
        n = other;
    }
    *nbr = n;
    return mpitopo__mpi_result(func, rc);
}

mpitopo__nbr_t *mpitopo__nbr_cached(MPI_Comm comm)
{
    int k = atomic_load(&fast_keyval), found = 0;
    mpitopo__nbr_t *n = NULL;
    if (k != MPI_KEYVAL_INVALID && comm != MPI_COMM_NULL &&
        PMPI_Comm_get_attr(comm, k, &n, &found) == MPI_SUCCESS && found)
        return n;
    return NULL;
}

int mpitopo__nbr_private_comm(mpitopo__nbr_t *n, int blocking)
{
    int rc;
    if (n->dup_request == MPI_REQUEST_NULL && n->comm != MPI_COMM_NULL)
        return MPI_SUCCESS;
    if (n->dup_request != MPI_REQUEST_NULL) {
        if (!blocking)
            return MPI_SUCCESS;
        rc = PMPI_Wait(&n->dup_request, MPI_STATUS_IGNORE);
    } else if (blocking) {
        rc = PMPI_Comm_dup(n->user_comm, &n->comm);
    } else {
        /* The error handler is set by mpitopo__nbr_private_ready, once the
         * duplicate exists. */
        return PMPI_Comm_idup(n->user_comm, &n->comm, &n->dup_request);
    }
    return rc == MPI_SUCCESS ? PMPI_Comm_set_errhandler(n->comm, MPI_ERRORS_RETURN) : rc;
}

int mpitopo__nbr_private_ready(mpitopo__nbr_t *n, int *ready)
{
    int rc = MPI_SUCCESS, done = 1;
    if (n->dup_request != MPI_REQUEST_NULL) {
        rc = PMPI_Test(&n->dup_request, &done, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS && done)
            rc = PMPI_Comm_set_errhandler(n->comm, MPI_ERRORS_RETURN);
    }
    *ready = rc == MPI_SUCCESS && done;
    return rc;
}

int mpitopo__nbr_send_tag(const mpitopo__nbr_t *n, int k)
{
    return n->kind == MPI_CART ? k : 0;
}

int mpitopo__nbr_recv_tag(const mpitopo__nbr_t *n, int k)
{
    return n->kind == MPI_CART ? k ^ 1 : 0;
}

int mpitopo__nbr_tags(mpitopo__nbr_t *n, int span, int *base, const char *func)
{
    int lo = n->kind == MPI_CART ? (n->outdegree > 1 ? n->outdegree : 1) : 1;
    int room = MPITOPO__TAG_SHIFT - lo;
    if (span < 1 || span > room)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_UNSUPPORTED, func,
                                 "a schedule of %d tags does not fit in the %d tags available "
                                 "(use the linear schedule)",
                                 span, room);
    if (n->next_tag < lo || n->next_tag + span > MPITOPO__TAG_SHIFT)
        n->next_tag = lo;
    *base = n->next_tag;
    n->next_tag += span;
    n->tag_calls++;
    n->last_tag_base = *base;
    n->last_tag_span = span;
    return MPITOPO_SUCCESS;
}
