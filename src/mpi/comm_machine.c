/*
 * The machine of a communicator: one leaf per process, whose path is
 * [network labels, node, labels inside the node]. Every process computes
 * its own path, one allgather shares them, and mpitopo_machine_from_paths
 * builds the same machine on every process.
 */
#include "mpi/mpi_internal.h"
#include "core/env.h"

#include <ctype.h>
#include <hwloc.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Session state: MPITOPO_NETWORK (read once) and this machine's hwloc topology. */
static pthread_mutex_t cm_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int loaded;
    int rc;
    char msg[400];
    int nlevels;
    char name[MPITOPO_MAX_LEVELS][MPITOPO_MAX_NAME];
    long long nodes_per_unit[MPITOPO_MAX_LEVELS];
} net;
static hwloc_topology_t topo;
static int topo_state; /* 0 not loaded yet, 1 loaded, -1 failed */

static int net_error(const char *value, size_t pos, const char *what)
{
    snprintf(net.msg, sizeof net.msg, "MPITOPO_NETWORK = \"%s\": %s at position %zu", value, what,
             pos);
    return net.rc = MPITOPO_ERR_PARSE;
}

/*
 * "group:4 switch:8" (blanks or commas between levels): a switch holds 8
 * consecutive nodes, a group 4 switches; the number of top-level units
 * follows from the number of nodes.
 */
static int parse_network(const char *v)
{
    long long arity[MPITOPO_MAX_LEVELS];
    const char *p = v;
    int n = 0;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        if (!*p)
            break;
        const char *name = p;
        if (!isalpha((unsigned char)*p))
            return net_error(v, (size_t)(p - v), "expected a level name");
        while (isalnum((unsigned char)*p) || *p == '_' || *p == '-')
            p++;
        size_t len = (size_t)(p - name);
        if (len >= MPITOPO_MAX_NAME)
            return net_error(v, (size_t)(name - v), "level name too long");
        if (*p++ != ':')
            return net_error(v, (size_t)(p - 1 - v), "expected ':' after the level name");
        const char *num = p;
        while (*p && !strchr(" \t,", *p))
            p++;
        if (mpitopo__parse_long(num, (size_t)(p - num), 1, INT_MAX, &arity[n]) != 0)
            return net_error(v, (size_t)(num - v),
                             "the number of children must be an integer >= 1");
        if (n == MPITOPO_MAX_LEVELS - 2)
            return net_error(v, (size_t)(name - v), "too many levels");
        memcpy(net.name[n], name, len);
        net.name[n][len] = '\0';
        for (int l = 0; l < n; l++)
            if (!strcmp(net.name[l], net.name[n]))
                return net_error(v, (size_t)(name - v), "duplicate level name");
        if (!strcmp(net.name[n], "node"))
            return net_error(v, (size_t)(name - v), "\"node\" is not a network level");
        n++;
    }
    long long group = 1;
    for (int l = n - 1; l >= 0; l--) {
        group *= arity[l];
        if (group > INT_MAX)
            group = (long long)INT_MAX + 1; /* one unit holds every node */
        net.nodes_per_unit[l] = group;
    }
    net.nlevels = n;
    return MPITOPO_SUCCESS;
}

static int load_network(void)
{
    pthread_mutex_lock(&cm_lock);
    if (!net.loaded) {
        net.loaded = 1;
        const char *v = mpitopo__getenv(MPITOPO_ENV_NETWORK);
        if (v && *v)
            parse_network(v);
    }
    int rc = MPITOPO_SUCCESS;
    if (net.rc != MPITOPO_SUCCESS)
        rc = MPITOPO_FAIL_AS(net.rc, "mpitopo_comm_machine", "%s", net.msg);
    pthread_mutex_unlock(&cm_lock);
    return rc;
}

/* Package and core (logical indices) of the core this process is bound to;
 * 0 when it is not bound to a single core (or hwloc cannot tell). */
static int bound_core(int *socket, int *core)
{
    int bound = 0;
    pthread_mutex_lock(&cm_lock);
    if (topo_state == 0) {
        topo_state = -1;
        if (hwloc_topology_init(&topo) == 0) {
            if (hwloc_topology_load(topo) == 0)
                topo_state = 1;
            else
                hwloc_topology_destroy(topo);
        }
    }
    hwloc_bitmap_t set = topo_state > 0 ? hwloc_bitmap_alloc() : NULL;
    if (set && hwloc_get_cpubind(topo, set, 0) == 0) {
        hwloc_obj_t obj = hwloc_get_obj_covering_cpuset(topo, set);
        if (obj && obj->type == HWLOC_OBJ_PU)
            obj = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, obj);
        if (obj && obj->type == HWLOC_OBJ_CORE) {
            hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, obj);
            *socket = pkg ? (int)pkg->logical_index : 0;
            *core = (int)obj->logical_index;
            bound = 1;
        }
    }
    hwloc_bitmap_free(set);
    pthread_mutex_unlock(&cm_lock);
    return bound;
}

void mpitopo__comm_machine_finalize(void)
{
    pthread_mutex_lock(&cm_lock);
    if (topo_state > 0)
        hwloc_topology_destroy(topo);
    topo_state = 0;
    memset(&net, 0, sizeof net);
    pthread_mutex_unlock(&cm_lock);
}

/*
 * What this process knows before the allgather. Its record is
 * [above-node labels (nabove), node, inner labels (ninner), local rank];
 * without emulation the inner labels are (socket, core) when bound, and
 * unbound processes send -1s.
 */
typedef struct layout {
    int nabove, ninner, bound;
    const mpitopo_machine_t *emu; /* NULL without emulation */
    int width;                    /* of a record */
    int rec[MPITOPO_MAX_LEVELS + 1];
} layout_t;

static int local_layout(MPI_Comm comm, const mpitopo_nodeinfo_t *ni, layout_t *L)
{
    int leaf = -1, emu_node = -1, nlev = 0, rc = load_network();
    memset(L, 0, sizeof *L);
    if (rc == MPITOPO_SUCCESS && ni->emulated)
        rc = mpitopo__emulated_leaf(comm, &L->emu, &leaf);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    if (L->emu) {
        mpitopo_machine_nlevels(L->emu, &nlev);
        mpitopo_machine_node_level(L->emu, &emu_node);
        L->ninner = nlev - emu_node - 1;
    } else {
        L->ninner = 2;
    }
    /* MPITOPO_NETWORK, when set, replaces the emulated levels above the node. */
    L->nabove = net.nlevels ? net.nlevels : L->emu ? emu_node : 0;
    L->width = L->nabove + 1 + L->ninner + 1;
    if (L->width - 1 > MPITOPO_MAX_LEVELS)
        return MPITOPO_FAIL(MPITOPO_ERR_RANGE, "%d network + 1 node + %d inner levels exceed %d",
                            L->nabove, L->ninner, MPITOPO_MAX_LEVELS);
    int *r = L->rec;
    for (int l = 0; l < L->nabove; l++) {
        if (net.nlevels)
            r[l] = (int)(ni->node / net.nodes_per_unit[l]);
        else
            mpitopo_machine_unit_of(L->emu, l, leaf, &r[l]);
    }
    r[L->nabove] = ni->node;
    if (L->emu) {
        for (int l = 0; l < L->ninner; l++)
            mpitopo_machine_unit_of(L->emu, emu_node + 1 + l, leaf, &r[L->nabove + 1 + l]);
    } else {
        r[L->nabove + 1] = r[L->nabove + 2] = -1;
        L->bound = bound_core(&r[L->nabove + 1], &r[L->nabove + 2]);
    }
    r[L->width - 1] = ni->local_rank;
    return MPITOPO_SUCCESS;
}

typedef struct slot {
    int node, socket, core;
} slot_t;

static int slot_cmp(const void *a, const void *b)
{
    const slot_t *x = a, *y = b;
    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    if (x->socket != y->socket)
        return x->socket < y->socket ? -1 : 1;
    return (x->core > y->core) - (x->core < y->core);
}

/* Nodes where two processes are bound to the same core (oversubscribed
 * binding): there, the core label becomes the local rank. */
static int shared_cores(const layout_t *L, int size, int nnodes, const int *all, char *shared)
{
    slot_t *s = mpitopo__malloc_array((size_t)size, sizeof *s);
    if (!s)
        return MPITOPO_NOMEM("the bound cores");
    for (int i = 0; i < size; i++) {
        const int *r = all + (size_t)i * L->width + L->nabove;
        s[i] = (slot_t){r[0], r[1], r[2]};
    }
    qsort(s, (size_t)size, sizeof *s, slot_cmp);
    for (int i = 1; i < size; i++)
        if (!slot_cmp(&s[i - 1], &s[i]) && s[i].node >= 0 && s[i].node < nnodes)
            shared[s[i].node] = 1;
    mpitopo__free(s);
    return MPITOPO_SUCCESS;
}

/* Turn the gathered records into paths and level names, and build. */
static int build(const layout_t *L, const mpitopo_nodeinfo_t *ni, int size, int all_bound,
                 const int *all, mpitopo_machine_t **machine, int *leaf_of_rank)
{
    int ninner = L->emu ? L->ninner : all_bound ? 2 : 1;
    int nlevels = L->nabove + 1 + ninner, node_level = -1, rc;
    const char *names[MPITOPO_MAX_LEVELS];
    double costs[MPITOPO_MAX_LEVELS];
    int *paths = mpitopo__malloc_array((size_t)size * (size_t)nlevels, sizeof *paths);
    char *shared = mpitopo__calloc((size_t)ni->nnodes, 1);
    if (!paths || !shared) {
        rc = MPITOPO_NOMEM("the paths of the processes");
        goto cleanup;
    }
    if (L->emu)
        mpitopo_machine_node_level(L->emu, &node_level);
    for (int l = 0; l < nlevels; l++) {
        int el = l < L->nabove ? l : node_level + 1 + (l - L->nabove - 1); /* emulated level */
        if (l < L->nabove && net.nlevels)
            names[l] = net.name[l];
        else if (l == L->nabove)
            names[l] = "node";
        else if (L->emu)
            mpitopo_machine_level(L->emu, el, &names[l], &costs[l], NULL, NULL, NULL);
        else
            names[l] = l == nlevels - 1 ? "core" : "socket";
    }
    /* Costs of the emulated machine when its levels are exactly ours. */
    int emu_costs = L->emu && !net.nlevels;
    for (int l = 0; emu_costs && l < nlevels; l++)
        mpitopo_machine_level(L->emu, l, NULL, &costs[l], NULL, NULL, NULL);
    if (!L->emu && all_bound && (rc = shared_cores(L, size, ni->nnodes, all, shared)) != 0)
        goto cleanup;
    for (int i = 0; i < size; i++) {
        const int *r = all + (size_t)i * L->width;
        int *p = paths + (size_t)i * nlevels, local_rank = r[L->width - 1];
        memcpy(p, r, (size_t)(L->nabove + 1 + (L->emu ? ninner : 0)) * sizeof *p);
        if (!L->emu && all_bound) {
            p[L->nabove + 1] = r[L->nabove + 1];
            p[L->nabove + 2] = shared[r[L->nabove]] ? local_rank : r[L->nabove + 2];
        } else if (!L->emu) {
            p[L->nabove + 1] = local_rank;
        }
    }
    rc = mpitopo_machine_from_paths(nlevels, names, emu_costs ? costs : NULL, size, paths, machine,
                                    leaf_of_rank);
cleanup:
    mpitopo__free(paths);
    mpitopo__free(shared);
    return rc;
}

/*
 * Build the machine of comm (node information ni). *leaf_of_rank is the
 * caller's array, or when NULL one of size ints allocated here (the
 * cache's), whose failure is agreed on in the one allreduce with the rest.
 */
static int build_machine(MPI_Comm comm, const mpitopo_nodeinfo_t *ni, mpitopo_machine_t **machine,
                         int **leaf_of_rank)
{
    int rank, size, rc;
    if ((rc = PMPI_Comm_rank(comm, &rank)) != MPI_SUCCESS ||
        (rc = PMPI_Comm_size(comm, &size)) != MPI_SUCCESS)
        return rc;
    layout_t L;
    int local = local_layout(comm, ni, &L);
    int *all = NULL;
    if (local == MPITOPO_SUCCESS &&
        !(all = mpitopo__malloc_array((size_t)size * (size_t)L.width, sizeof *all)))
        local = MPITOPO_NOMEM("the gathered paths");
    if (local == MPITOPO_SUCCESS && !*leaf_of_rank &&
        !(*leaf_of_rank = mpitopo__malloc_array((size_t)size, sizeof **leaf_of_rank)))
        local = MPITOPO_NOMEM("the leaf of every rank");
    /* Agree on the levels (and on failure) before exchanging records. */
    int failed = local != MPITOPO_SUCCESS;
    /* A failing process's code may be mpitopo's (< 0) or MPI's (> 0). */
    int v[7] = {failed ? -rank : -size, failed ? local : INT_MIN, L.nabove, -L.nabove,
                L.ninner, -L.ninner, !L.bound};
    rc = PMPI_Allreduce(MPI_IN_PLACE, v, 7, MPI_INT, MPI_MAX, comm);
    if (rc == MPI_SUCCESS && -v[0] < size)
        rc = failed ? local
                    : MPITOPO_FAIL_AS(v[1], "mpitopo_comm_machine", "process %d of comm failed: %s", -v[0],
                                   mpitopo_err_name(v[1]));
    else if (rc == MPI_SUCCESS && (v[2] != -v[3] || v[4] != -v[5]))
        rc = MPITOPO_FAIL_AS(MPITOPO_ERR_MISMATCH, "mpitopo_comm_machine",
                          "processes of comm disagree on the levels (%d..%d network, %d..%d "
                          "inner): are MPITOPO_NETWORK and MPITOPO_EMULATE the same everywhere?",
                          -v[3], v[2], -v[5], v[4]);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Allgather(L.rec, L.width, MPI_INT, all, L.width, MPI_INT, comm);
    if (rc == MPI_SUCCESS)
        rc = build(&L, ni, size, !v[6], all, machine, *leaf_of_rank);
    mpitopo__free(all);
    return rc;
}

static int comm_machine_impl(MPI_Comm comm, mpitopo_machine_t **machine, int *leaf_of_rank)
{
    if (!machine)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, "mpitopo_comm_machine", "machine = NULL");
    *machine = NULL;
    if (!leaf_of_rank)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, "mpitopo_comm_machine", "leaf_of_rank = NULL");
    const mpitopo_nodeinfo_t *ni;
    int rc = mpitopo__comm_nodeinfo(comm, &ni);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    return build_machine(comm, ni, machine, &leaf_of_rank);
}

int mpitopo_comm_machine(MPI_Comm comm, mpitopo_machine_t **machine, int *leaf_of_rank)
{
    return mpitopo__mpi_result(__func__, comm_machine_impl(comm, machine, leaf_of_rank));
}

/* The machine is cached with comm's node information (nodeinfo.c keeps
 * it with the attribute, shared by duplicates). The first call is
 * collective over comm; a failure leaves nothing cached, on every process
 * alike. */
int mpitopo__comm_machine_cached(MPI_Comm comm, const mpitopo_nodeinfo_t **info,
                                 const mpitopo_machine_t **machine, const int **leaf_of_rank)
{
    int rc = mpitopo__comm_nodeinfo(comm, info);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    mpitopo__nodeinfo_machine(*info, machine, leaf_of_rank);
    if (*machine)
        return MPITOPO_SUCCESS;
    mpitopo_machine_t *m = NULL;
    int *leaves = NULL;
    if ((rc = build_machine(comm, *info, &m, &leaves)) != MPITOPO_SUCCESS) {
        mpitopo__free(leaves);
        return rc;
    }
    mpitopo__nodeinfo_set_machine(*info, m, leaves);
    mpitopo__nodeinfo_machine(*info, machine, leaf_of_rank);
    return MPITOPO_SUCCESS;
}
