/*
 * Node information of a communicator, cached on it through an attribute.
 *
 * The attribute value is an attachment: one per (communicator, cache entry)
 * pair. MPI_Comm_dup copies it by reference (the copy callback makes a new
 * attachment to the same entry and counts it); freeing a communicator
 * drops its attachment, and the entry's communicators are freed with the
 * last one. All attachments sit in one mutex-protected list, so that
 * MPI_Finalize can release what the program left cached. The copy callback
 * does not know the new communicator: an attachment learns it when the
 * duplicate is first queried, and at finalize those never queried are
 * released by hand (their attribute is then an empty shell that MPI may
 * delete later, or never).
 */
#include "mpi/mpi_internal.h"

#include <limits.h>
#include <stddef.h>
#include <stdio.h>

#include <pthread.h>

typedef struct nodeinfo_entry {
    int refs; /* attachments that share it */
    mpitopo_nodeinfo_t info;                /* first member: see entry_of */
    mpitopo_machine_t *machine;             /* comm_machine.c, once asked for */
    int *leaf_of_rank;
    const mpitopo_network_t *network;       /* the session's; NULL without one */
    int *end_node;                          /* of every node unit of machine, with a network */
    char above[320];                        /* where the levels above the nodes came from */
    const mpitopo_machine_t *emu;           /* the emulated machine (NULL: none) */
    int emu_leaf;                           /* this process's leaf there */
} nodeinfo_entry_t;

typedef struct attachment {
    struct attachment *prev, *next;
    nodeinfo_entry_t *entry; /* NULL once released at finalize */
    MPI_Comm comm;           /* MPI_COMM_NULL while unknown (made by the copy callback) */
    unsigned long serial;    /* tells attachments apart at finalize */
} attachment_t;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static int cache_keyval = MPI_KEYVAL_INVALID;
static attachment_t attachments = {.prev = &attachments, .next = &attachments};
static unsigned long next_serial;

/* Under cache_lock. */
static void link_attachment(attachment_t *a)
{
    a->serial = ++next_serial;
    a->prev = attachments.prev;
    a->next = &attachments;
    attachments.prev->next = a;
    attachments.prev = a;
}

static void unlink_attachment(attachment_t *a)
{
    a->prev->next = a->next;
    a->next->prev = a->prev;
}

/* Free an entry nobody refers to any more. Never called under cache_lock:
 * freeing node_comm runs our delete callback if it has a cache of its own.
 * It runs inside attribute callbacks, which must not fail once the
 * attachment is gone, so an MPI error here is only logged. */
static void entry_free(nodeinfo_entry_t *e)
{
    if (!e)
        return;
    int rc = MPI_SUCCESS;
    if (e->info.leader_comm != MPI_COMM_NULL)
        rc = PMPI_Comm_free(&e->info.leader_comm);
    if (rc == MPI_SUCCESS && e->info.node_comm != MPI_COMM_NULL)
        rc = PMPI_Comm_free(&e->info.node_comm);
    if (rc != MPI_SUCCESS)
        mpitopo__log(1, "freeing a cached node communicator failed with MPI error %d", rc);
    mpitopo_machine_destroy(&e->machine);
    mpitopo__free(e->leaf_of_rank);
    mpitopo__free(e->end_node);
    mpitopo__free(e);
}

/* Drop one reference (under cache_lock); returns the entry if it was the last. */
static nodeinfo_entry_t *entry_unref_locked(nodeinfo_entry_t *e)
{
    return e && --e->refs == 0 ? e : NULL;
}

static int copy_cb(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)oldcomm;
    (void)keyval;
    (void)extra;
    attachment_t *old = in, *a = mpitopo__calloc(1, sizeof *a);
    *flag = 0;
    if (!a)
        return MPI_ERR_NO_MEM; /* fail the dup rather than let ranks disagree */
    pthread_mutex_lock(&cache_lock);
    if (old->entry) {
        a->entry = old->entry;
        a->entry->refs++;
        a->comm = MPI_COMM_NULL;
        link_attachment(a);
        *flag = 1;
    }
    pthread_mutex_unlock(&cache_lock);
    if (*flag)
        *(void **)out = a;
    else
        mpitopo__free(a);
    return MPI_SUCCESS;
}

static int delete_cb(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    attachment_t *a = value;
    pthread_mutex_lock(&cache_lock);
    unlink_attachment(a);
    nodeinfo_entry_t *last = entry_unref_locked(a->entry);
    pthread_mutex_unlock(&cache_lock);
    mpitopo__free(a);
    entry_free(last);
    return MPI_SUCCESS;
}

/* Release the first attachment still holding an entry; 0 when none is left. */
static int release_one(void)
{
    pthread_mutex_lock(&cache_lock);
    attachment_t *a = attachments.next;
    while (a != &attachments && !a->entry)
        a = a->next;
    if (a == &attachments) {
        pthread_mutex_unlock(&cache_lock);
        return 0;
    }
    MPI_Comm comm = a->comm;
    unsigned long serial = a->serial;
    int keyval = cache_keyval;
    pthread_mutex_unlock(&cache_lock);
    /* Normally delete_cb runs and frees the attachment. MPI_COMM_SELF is
     * being freed right now: leave its attribute list alone (its own cache,
     * set after our finalize hook, is normally gone already). */
    if (comm != MPI_COMM_NULL && comm != MPI_COMM_SELF)
        PMPI_Comm_delete_attr(comm, keyval);
    /* Otherwise drop its entry by hand; the attachment stays listed (an
     * empty shell) until MPI deletes the attribute, if ever. */
    nodeinfo_entry_t *last = NULL;
    pthread_mutex_lock(&cache_lock);
    for (a = attachments.next; a != &attachments; a = a->next)
        if (a->serial == serial) {
            last = entry_unref_locked(a->entry);
            a->entry = NULL;
            break;
        }
    pthread_mutex_unlock(&cache_lock);
    entry_free(last);
    return 1;
}

void mpitopo__nodeinfo_finalize(void)
{
    while (release_one())
        ;
    pthread_mutex_lock(&cache_lock);
    if (cache_keyval != MPI_KEYVAL_INVALID)
        PMPI_Comm_free_keyval(&cache_keyval);
    cache_keyval = MPI_KEYVAL_INVALID;
    pthread_mutex_unlock(&cache_lock);
}

static int get_keyval(int *keyval)
{
    int rc = MPI_SUCCESS;
    pthread_mutex_lock(&cache_lock);
    if (cache_keyval == MPI_KEYVAL_INVALID)
        rc = PMPI_Comm_create_keyval(copy_cb, delete_cb, &cache_keyval, NULL);
    *keyval = cache_keyval;
    pthread_mutex_unlock(&cache_lock);
    return rc;
}

/* Split comm by node: the emulated node of each process, or MPI_COMM_TYPE_SHARED. */
static int split_nodes(MPI_Comm comm, int rank, int emulate, const mpitopo_machine_t *emu,
                       int leaf, int ok, MPI_Comm *node_comm)
{
    if (!emulate)
        return PMPI_Comm_split_type(comm, ok ? MPI_COMM_TYPE_SHARED : MPI_UNDEFINED, rank,
                                    MPI_INFO_NULL, node_comm);
    int level = -1, node = MPI_UNDEFINED;
    if (ok) {
        mpitopo_machine_node_level(emu, &level);
        mpitopo_machine_unit_of(emu, level, leaf, &node);
    }
    return PMPI_Comm_split(comm, node, rank, node_comm);
}

/*
 * Collective over comm. `local` is an error this process already has (an
 * allocation failure): it still takes part in every collective, and the
 * final allreduce makes every process of comm fail together.
 */
static int discover(MPI_Comm comm, mpitopo_nodeinfo_t *ni, int local, const mpitopo_machine_t **emu_out,
                    int *leaf_out)
{
    int rank, size, rc;
    if ((rc = PMPI_Comm_rank(comm, &rank)) != MPI_SUCCESS ||
        (rc = PMPI_Comm_size(comm, &size)) != MPI_SUCCESS)
        return rc;
    const mpitopo_machine_t *emu = NULL;
    int leaf = -1, erc = mpitopo__emulated_leaf(comm, &emu, &leaf);
    /* A bad MPITOPO_EMULATE still means emulation was asked for. */
    int emulate = emu != NULL || erc != MPITOPO_SUCCESS;
    if (local == MPITOPO_SUCCESS)
        local = erc;
    *emu_out = emu;
    *leaf_out = leaf;

    *ni = (mpitopo_nodeinfo_t){MPI_COMM_NULL, MPI_COMM_NULL, 0, 0, 0, 0, 0, 0, emu != NULL};
    rc = split_nodes(comm, rank, emulate, emu, leaf, local == MPITOPO_SUCCESS, &ni->node_comm);
    if (rc == MPI_SUCCESS && ni->node_comm != MPI_COMM_NULL &&
        (rc = PMPI_Comm_rank(ni->node_comm, &ni->local_rank)) == MPI_SUCCESS)
        rc = PMPI_Comm_size(ni->node_comm, &ni->local_size);
    /* Leaders in comm's rank order: nodes are numbered by their lowest rank. */
    int leader = ni->node_comm != MPI_COMM_NULL && ni->local_rank == 0;
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_split(comm, leader ? 0 : MPI_UNDEFINED, rank, &ni->leader_comm);
    if (rc == MPI_SUCCESS && leader &&
        (rc = PMPI_Comm_rank(ni->leader_comm, &ni->node)) == MPI_SUCCESS)
        rc = PMPI_Comm_size(ni->leader_comm, &ni->nnodes);
    int nn[2] = {ni->node, ni->nnodes};
    if (rc == MPI_SUCCESS && ni->node_comm != MPI_COMM_NULL)
        rc = PMPI_Bcast(nn, 2, MPI_INT, 0, ni->node_comm);
    ni->node = nn[0];
    ni->nnodes = nn[1];
    /* One allreduce: largest and smallest node, lowest failing rank and its code. */
    int failed = local != MPITOPO_SUCCESS;
    int v[4] = {ni->local_size, -ni->local_size, failed ? -rank : -size, failed ? local : INT_MIN};
    if (rc == MPI_SUCCESS)
        rc = PMPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_INT, MPI_MAX, comm);
    if (rc == MPI_SUCCESS && -v[2] < size)
        rc = failed ? local
                    : MPITOPO_FAIL_AS(v[3], "mpitopo_comm_nodeinfo",
                                        "process %d of comm failed: %s%s", -v[2],
                                        mpitopo_err_name(v[3]),
                                        emulate ? " (with MPITOPO_EMULATE set)" : "");
    if (rc != MPITOPO_SUCCESS) {
        if (ni->leader_comm != MPI_COMM_NULL)
            PMPI_Comm_free(&ni->leader_comm);
        if (ni->node_comm != MPI_COMM_NULL)
            PMPI_Comm_free(&ni->node_comm);
        return rc;
    }
    ni->max_local_size = v[0];
    ni->min_local_size = -v[1];
    if (rank == 0)
        mpitopo__log(2, "node information: %d nodes of %d..%d processes%s", ni->nnodes,
                     ni->min_local_size, ni->max_local_size, ni->emulated ? " (emulated)" : "");
    return MPITOPO_SUCCESS;
}

static int create(MPI_Comm comm, int keyval, const mpitopo_nodeinfo_t **info)
{
    nodeinfo_entry_t *e = mpitopo__calloc(1, sizeof *e);
    attachment_t *a = mpitopo__calloc(1, sizeof *a);
    int local = e && a ? MPITOPO_SUCCESS : MPITOPO_NOMEM("the node information cache");
    mpitopo_nodeinfo_t scratch;
    const mpitopo_machine_t *emu = NULL;
    int leaf = -1, rc = discover(comm, e ? &e->info : &scratch, local, &emu, &leaf);
    if (rc != MPITOPO_SUCCESS) {
        mpitopo__free(e);
        mpitopo__free(a);
        return rc;
    }
    e->refs = 1;
    e->emu = emu;
    e->emu_leaf = leaf;
    a->entry = e;
    a->comm = comm;
    pthread_mutex_lock(&cache_lock);
    link_attachment(a);
    pthread_mutex_unlock(&cache_lock);
    rc = PMPI_Comm_set_attr(comm, keyval, a);
    if (rc != MPI_SUCCESS) {
        pthread_mutex_lock(&cache_lock);
        unlink_attachment(a);
        pthread_mutex_unlock(&cache_lock);
        mpitopo__free(a);
        entry_free(e);
        return rc;
    }
    *info = &e->info;
    return MPITOPO_SUCCESS;
}

int mpitopo__comm_nodeinfo(MPI_Comm comm, const mpitopo_nodeinfo_t **info)
{
    if (!info)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, "mpitopo_comm_nodeinfo", "info = NULL");
    *info = NULL;
    int rc, keyval, flag = 0;
    if ((rc = mpitopo__check_mpi("mpitopo_comm_nodeinfo")) != MPITOPO_SUCCESS ||
        (rc = mpitopo__check_intracomm(comm, "mpitopo_comm_nodeinfo")) != MPITOPO_SUCCESS)
        return rc;
    /* The finalize hook goes first, so it runs after any cache on MPI_COMM_SELF. */
    if ((rc = mpitopo__at_finalize(MPITOPO__FINI_NODEINFO, mpitopo__nodeinfo_finalize)) !=
            MPI_SUCCESS || (rc = get_keyval(&keyval)) != MPI_SUCCESS)
        return rc;
    attachment_t *a = NULL;
    if ((rc = PMPI_Comm_get_attr(comm, keyval, &a, &flag)) != MPI_SUCCESS)
        return rc;
    if (!flag)
        return create(comm, keyval, info);
    pthread_mutex_lock(&cache_lock);
    if (a->comm == MPI_COMM_NULL)
        a->comm = comm; /* a duplicate, first queried */
    nodeinfo_entry_t *e = a->entry;
    pthread_mutex_unlock(&cache_lock);
    if (!e)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, "mpitopo_comm_nodeinfo", "MPI is being finalized");
    *info = &e->info;
    return MPITOPO_SUCCESS;
}

int mpitopo__comm_machine_known(MPI_Comm comm)
{
    int keyval, flag = 0;
    attachment_t *a = NULL;
    pthread_mutex_lock(&cache_lock);
    keyval = cache_keyval;
    pthread_mutex_unlock(&cache_lock);
    if (keyval == MPI_KEYVAL_INVALID || comm == MPI_COMM_NULL ||
        PMPI_Comm_get_attr(comm, keyval, &a, &flag) != MPI_SUCCESS || !flag || !a)
        return 0;
    pthread_mutex_lock(&cache_lock);
    int known = a->entry && a->entry->machine;
    pthread_mutex_unlock(&cache_lock);
    return known;
}

int mpitopo_comm_nodeinfo(MPI_Comm comm, const mpitopo_nodeinfo_t **info)
{
    return mpitopo__mpi_result(__func__, mpitopo__comm_nodeinfo(comm, info));
}

/* The entry holding a cached nodeinfo (info is its first member). */
static nodeinfo_entry_t *entry_of(const mpitopo_nodeinfo_t *info)
{
    return (nodeinfo_entry_t *)(void *)((char *)info - offsetof(nodeinfo_entry_t, info));
}

/* The machine cached beside comm's node information (comm_machine.c builds
 * it): NULLs until it is set. Duplicates share the entry, and their ranks
 * are in the same order, so one machine serves them all. */
void mpitopo__nodeinfo_machine(const mpitopo_nodeinfo_t *info, const mpitopo_machine_t **machine,
                               const int **leaf_of_rank)
{
    nodeinfo_entry_t *e = entry_of(info);
    pthread_mutex_lock(&cache_lock);
    *machine = e->machine;
    *leaf_of_rank = e->leaf_of_rank;
    pthread_mutex_unlock(&cache_lock);
}

void mpitopo__nodeinfo_emulated(const mpitopo_nodeinfo_t *info, const mpitopo_machine_t **emu, int *leaf)
{
    nodeinfo_entry_t *e = entry_of(info);
    *emu = e->emu;
    *leaf = e->emu_leaf;
}

/* The network of that machine and the end node of every node unit of it:
 * NULLs without a network (or before the machine is cached). */
void mpitopo__nodeinfo_network(const mpitopo_nodeinfo_t *info, const mpitopo_network_t **network,
                               const int **end_node)
{
    nodeinfo_entry_t *e = entry_of(info);
    pthread_mutex_lock(&cache_lock);
    *network = e->network;
    *end_node = e->end_node;
    pthread_mutex_unlock(&cache_lock);
}

/* Cache a machine that comm_machine.c built, with its network (the
 * session's) and end nodes (the entry takes the machine and both arrays);
 * a machine cached meanwhile by another thread is kept and the new one
 * freed. */
void mpitopo__nodeinfo_set_machine(const mpitopo_nodeinfo_t *info, mpitopo_machine_t *machine,
                                   int *leaf_of_rank, const mpitopo_network_t *network,
                                   int *end_node)
{
    nodeinfo_entry_t *e = entry_of(info);
    pthread_mutex_lock(&cache_lock);
    int first = e->machine == NULL;
    if (first) {
        e->machine = machine;
        e->leaf_of_rank = leaf_of_rank;
        e->network = network;
        e->end_node = end_node;
    }
    pthread_mutex_unlock(&cache_lock);
    if (!first) {
        mpitopo_machine_destroy(&machine);
        mpitopo__free(leaf_of_rank);
        mpitopo__free(end_node);
    }
}

void mpitopo__nodeinfo_set_above(const mpitopo_nodeinfo_t *info, const char *source)
{
    nodeinfo_entry_t *e = entry_of(info);
    pthread_mutex_lock(&cache_lock);
    if (!e->above[0])
        snprintf(e->above, sizeof e->above, "%s", source);
    pthread_mutex_unlock(&cache_lock);
}

/* Set once, before the machine is visible: no lock needed to read it after. */
const char *mpitopo__nodeinfo_above(const mpitopo_nodeinfo_t *info)
{
    return entry_of(info)->above;
}
