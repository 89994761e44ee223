/*
 * The machine of a communicator: one leaf per process, whose path is
 * [network labels, node, labels inside the node]. Every process computes
 * its own path, one allgather shares them, and mpitopo_machine_from_paths
 * builds the same machine on every process.
 *
 * With a network (MPITOPO_NETWORK or comm's info key mpitopo_network holding
 * a network description or "fabric:..."), the records carry no network
 * labels but two end nodes: the one of the process's host name among the
 * network's end-node names, and the one in order (the emulated node under
 * emulation, else the node's number in comm). After the allgather every
 * process makes the same choice — by name when every process's host name
 * is an end node, in order when none is, an error otherwise — and
 * mpitopo_network_machine puts the network's groups above the nodes.
 */
#include "mpi/mpi_internal.h"
#include "core/env.h"
#include "network/network_internal.h"

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
    const char *spec; /* MPITOPO_NETWORK when it describes a network */
} net;

/* Networks made from descriptions in this session, kept until finalize. */
#define MAX_NETWORKS 8
static struct {
    char *spec;
    mpitopo_network_t *network;
} networks[MAX_NETWORKS];
static int nnetworks;

/* The network of a description, made on first use (under cm_lock). */
static int network_of(const char *spec, const char *source, const mpitopo_network_t **out)
{
    *out = NULL;
    for (int i = 0; i < nnetworks; i++)
        if (strcmp(networks[i].spec, spec) == 0) {
            *out = networks[i].network;
            return MPITOPO_SUCCESS;
        }
    if (nnetworks == MAX_NETWORKS)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_RANGE, "mpitopo_comm_machine",
                               "%s = \"%.200s\": more than %d networks in one session", source,
                               spec, MAX_NETWORKS);
    mpitopo_network_t *n = NULL;
    int rc = mpitopo_network_from_string(spec, &n);
    if (rc != MPITOPO_SUCCESS)
        return MPITOPO_FAIL_RESTATE(rc, "mpitopo_comm_machine", "%s", source);
    char *copy = mpitopo__strdup(spec);
    if (!copy) {
        mpitopo_network_destroy(&n);
        return MPITOPO_NOMEM("the network's description");
    }
    networks[nnetworks].spec = copy;
    networks[nnetworks++].network = n;
    *out = n;
    return MPITOPO_SUCCESS;
}
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
    /* Every machine of a communicator starts here: the hwloc topology, the
     * networks and the Slurm state kept below are released at MPI_Finalize. */
    int rc = mpitopo__at_finalize(MPITOPO__FINI_COMM_MACHINE, mpitopo__comm_machine_finalize);
    if (rc != MPI_SUCCESS)
        return rc;
    pthread_mutex_lock(&cm_lock);
    if (!net.loaded) {
        net.loaded = 1;
        const char *v = mpitopo__getenv(MPITOPO_ENV_NETWORK);
        if (v && mpitopo__network_is_description(v))
            net.spec = v;
        else if (v && *v)
            parse_network(v);
    }
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
    for (int i = 0; i < nnetworks; i++) {
        mpitopo__free(networks[i].spec);
        mpitopo_network_destroy(&networks[i].network);
    }
    nnetworks = 0;
    pthread_mutex_unlock(&cm_lock);
    mpitopo__slurm_finalize();
}

/*
 * What this process knows before the allgather. Its record is
 * [above-node labels (nabove), node, inner labels (ninner), local rank];
 * without emulation the inner labels are (socket, core) when bound, and
 * unbound processes send -1s.
 */
typedef struct layout {
    int nabove, ninner, bound;
    const mpitopo_machine_t *emu;     /* NULL without emulation */
    const mpitopo_network_t *network; /* NULL without one */
    uint32_t spec_hash;               /* of the network's description */
    int width;                        /* of a record's path part */
    int stride;                       /* of a record: width, + 2 end nodes with a network,
                                         + MPITOPO__SLURM_REC at the end from Slurm */
    int slurm;                        /* the levels above the nodes may come from Slurm */
    const char *above;                /* where they come from, unless from Slurm */
    int rec[MPITOPO_MAX_LEVELS + 3 + MPITOPO__SLURM_REC];
} layout_t;

/* The end node whose name's first word is this host's name, or -1: the
 * whole name first ("node12.cluster" or an HHC's "0011.0101"), else the
 * short names (up to the first '.') when exactly one end node has it. */
static int end_node_by_name(const mpitopo_network_t *network, int *node)
{
    char host[MPI_MAX_PROCESSOR_NAME + 1] = "";
    int len = 0, rc = PMPI_Get_processor_name(host, &len);
    if (rc != MPI_SUCCESS)
        return rc;
    host[len < 0 ? 0 : len > MPI_MAX_PROCESSOR_NAME ? MPI_MAX_PROCESSOR_NAME : len] = '\0';
    size_t full = strlen(host), shortlen = strcspn(host, ".");
    int n, exact = -1, by_short = -1, nshort = 0;
    mpitopo_network_size(network, &n, NULL, NULL);
    for (int e = 0; full > 0 && e < n && exact < 0; e++) {
        char name[256];
        mpitopo_network_node_name(network, e, name, sizeof name);
        size_t word = strcspn(name, " \t");
        if (word == full && strncmp(name, host, full) == 0)
            exact = e;
        else if (strcspn(name, ". \t") == shortlen && strncmp(name, host, shortlen) == 0 && nshort++ == 0)
            by_short = e;
    }
    *node = exact >= 0 ? exact : nshort == 1 ? by_short : -1;
    return MPITOPO_SUCCESS;
}

/* The network of comm: its info key mpitopo_network, else MPITOPO_NETWORK
 * when it describes a network; NULL otherwise. */
static int comm_network(MPI_Comm comm, layout_t *L)
{
    char key[256];
    const char *spec = net.spec, *source = "MPITOPO_NETWORK";
    if (mpitopo__comm_info_get(comm, "mpitopo_network", key, sizeof key)) {
        spec = key;
        source = "info mpitopo_network";
    }
    if (!spec)
        return MPITOPO_SUCCESS;
    L->spec_hash = mpitopo__hash(2166136261u, spec, strlen(spec)) | 1u;
    L->above = source;
    pthread_mutex_lock(&cm_lock);
    int rc = network_of(spec, source, &L->network);
    pthread_mutex_unlock(&cm_lock);
    return rc;
}

static int local_layout(MPI_Comm comm, const mpitopo_nodeinfo_t *ni, layout_t *L)
{
    int leaf = -1, emu_node = -1, nlev = 0, rc = load_network();
    memset(L, 0, sizeof *L);
    if (rc == MPITOPO_SUCCESS)
        rc = comm_network(comm, L);
    if (rc == MPITOPO_SUCCESS && ni->emulated)
        mpitopo__nodeinfo_emulated(ni, &L->emu, &leaf);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    if (L->emu) {
        mpitopo_machine_nlevels(L->emu, &nlev);
        mpitopo_machine_node_level(L->emu, &emu_node);
        L->ninner = nlev - emu_node - 1;
    } else {
        L->ninner = 2;
    }
    /* MPITOPO_NETWORK, when set, replaces the emulated levels above the node;
     * a network's groups go above them after the allgather. With none of
     * these, a Slurm job's levels may (slurm_machine.c); the hash makes
     * processes that disagree on trying fail together. */
    L->nabove = L->network ? 0 : net.nlevels ? net.nlevels : L->emu ? emu_node : 0;
    if (!L->network && net.nlevels)
        L->above = "MPITOPO_NETWORK";
    else if (!L->network && L->nabove)
        L->above = "MPITOPO_EMULATE";
    else if (!L->network && (rc = mpitopo__slurm_wanted(&L->slurm)) != MPITOPO_SUCCESS)
        return rc;
    if (L->slurm)
        L->spec_hash = mpitopo__hash(2166136261u, "slurm", 5) | 1u;
    L->width = L->nabove + 1 + L->ninner + 1;
    L->stride = L->width + (L->network ? 2 : 0) + (L->slurm ? MPITOPO__SLURM_REC : 0);
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
    if (L->network) {
        /* Two more: the end node in order, and the one by host name. */
        int order = ni->node;
        if (L->emu)
            mpitopo_machine_unit_of(L->emu, emu_node, leaf, &order);
        r[L->width] = order;
        if ((rc = end_node_by_name(L->network, &r[L->width + 1])) != MPI_SUCCESS)
            return rc;
        if (L->emu)
            r[L->width + 1] = -1; /* every emulated node runs on this one host */
        int n;
        mpitopo_network_size(L->network, &n, NULL, NULL);
        if (r[L->width + 1] < 0 && order >= n)
            return MPITOPO_FAIL_AS(MPITOPO_ERR_RANGE, "mpitopo_comm_machine",
                                   "node %d of comm has no end node: the network has %d", order,
                                   n);
    }
    if (L->slurm) {
        int emulated = -1;
        if (L->emu)
            mpitopo_machine_unit_of(L->emu, emu_node, leaf, &emulated);
        return mpitopo__slurm_record(emulated, L->rec + L->stride - MPITOPO__SLURM_REC);
    }
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
        const int *r = all + (size_t)i * L->stride + L->nabove;
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
                 const int *all, const mpitopo__slurm_levels_t *S, mpitopo_machine_t **machine,
                 int *leaf_of_rank)
{
    int ninner = L->emu ? L->ninner : all_bound ? 2 : 1, ns = S->n;
    int nlevels = ns + L->nabove + 1 + ninner, node_level = -1, rc;
    if (nlevels > MPITOPO_MAX_LEVELS)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_RANGE, "mpitopo_comm_machine",
                               "%d levels from Slurm + 1 node + %d inner levels exceed %d", ns,
                               ninner, MPITOPO_MAX_LEVELS);
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
    for (int l = 0; l < ns; l++) {
        names[l] = S->names[l];
        costs[l] = (double)(nlevels - l) * S->factor[l];
    }
    for (int l = 0; l < nlevels - ns; l++) {
        int el = l < L->nabove ? l : node_level + 1 + (l - L->nabove - 1); /* emulated level */
        costs[ns + l] = (double)(nlevels - ns - l);
        const char **name = &names[ns + l];
        if (l < L->nabove && net.nlevels && !L->network)
            *name = net.name[l];
        else if (l == L->nabove)
            *name = "node";
        else if (L->emu)
            mpitopo_machine_level(L->emu, el, name, NULL, NULL, NULL, NULL);
        else
            *name = l == nlevels - ns - 1 ? "core" : "socket";
    }
    /* Costs of the emulated machine when its levels are exactly ours;
     * Slurm's when they are not all 1 (its links are not equal). */
    int emu_costs = L->emu && !net.nlevels && !L->network && !ns, slurm_costs = 0;
    for (int l = 0; l < ns; l++)
        slurm_costs |= S->factor[l] != 1.0;
    for (int l = 0; emu_costs && l < nlevels; l++)
        mpitopo_machine_level(L->emu, l, NULL, &costs[l], NULL, NULL, NULL);
    if (!L->emu && all_bound && (rc = shared_cores(L, size, ni->nnodes, all, shared)) != 0)
        goto cleanup;
    for (int i = 0; i < size; i++) {
        const int *r = all + (size_t)i * L->stride;
        int *p = paths + (size_t)i * nlevels, local_rank = r[L->width - 1];
        if (ns)
            memcpy(p, S->labels + (size_t)i * MPITOPO__SLURM_MAX_DEPTH, (size_t)ns * sizeof *p);
        p += ns;
        memcpy(p, r, (size_t)(L->nabove + 1 + (L->emu ? ninner : 0)) * sizeof *p);
        if (!L->emu && all_bound) {
            p[L->nabove + 1] = r[L->nabove + 1];
            p[L->nabove + 2] = shared[r[L->nabove]] ? local_rank : r[L->nabove + 2];
        } else if (!L->emu) {
            p[L->nabove + 1] = local_rank;
        }
    }
    rc = mpitopo_machine_from_paths(nlevels, names, emu_costs || slurm_costs ? costs : NULL, size,
                                    paths, machine, leaf_of_rank);
cleanup:
    mpitopo__free(paths);
    mpitopo__free(shared);
    return rc;
}

/*
 * The end node of every node of comm, from the gathered records: by host
 * name when every process's host is an end node, in order when none is;
 * the lowest rank of a node speaks for it. The same data on every process
 * gives the same answer, errors included.
 */
static int choose_end_nodes(const layout_t *L, const mpitopo_nodeinfo_t *ni, int size,
                            const int *all, int *end_node)
{
    int named = 0, unnamed = -1, named_rank = -1;
    for (int i = 0; i < size; i++) {
        if (all[(size_t)i * L->stride + L->width + 1] >= 0) {
            named++;
            named_rank = named_rank < 0 ? i : named_rank;
        } else if (unnamed < 0) {
            unnamed = i;
        }
    }
    if (named > 0 && named < size)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOT_FOUND, "mpitopo_comm_machine",
                               "the host of process %d of comm is an end node of the network, "
                               "that of process %d is not: name every host, or none",
                               named_rank, unnamed);
    for (int u = 0; u < ni->nnodes; u++)
        end_node[u] = -1;
    for (int i = 0; i < size; i++) {
        const int *r = all + (size_t)i * L->stride;
        int u = r[L->nabove];
        if (u >= 0 && u < ni->nnodes && end_node[u] < 0)
            end_node[u] = r[L->width + (named ? 1 : 0)];
    }
    mpitopo__log(2, "network: %d nodes on end nodes %s", ni->nnodes,
                 named ? "by host name" : "in order");
    return MPITOPO_SUCCESS;
}

/* The machine under the network: its groups above the nodes. */
static int add_network(const layout_t *L, const mpitopo_nodeinfo_t *ni, int size, const int *all,
                       mpitopo_machine_t **machine, int *leaf_of_rank, int **end_node)
{
    int *leaf_map = mpitopo__malloc_array((size_t)size, sizeof *leaf_map);
    *end_node = mpitopo__malloc_array((size_t)ni->nnodes, sizeof **end_node);
    mpitopo_machine_t *m = NULL;
    int rc = !leaf_map || !*end_node ? MPITOPO_NOMEM("the end nodes")
                                     : choose_end_nodes(L, ni, size, all, *end_node);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo_network_machine(L->network, *machine, *end_node, &m, leaf_map);
    if (rc == MPITOPO_SUCCESS) {
        /* From here on, *end_node is by node unit of the new machine (its
         * units follow the end nodes' order, not comm's node numbers). */
        int node_level, *by_unit = mpitopo__malloc_array((size_t)ni->nnodes, sizeof *by_unit);
        if (!by_unit) {
            mpitopo_machine_destroy(&m);
            rc = MPITOPO_NOMEM("the end nodes");
            goto cleanup;
        }
        mpitopo_machine_node_level(m, &node_level);
        for (int i = 0; i < size; i++) {
            int unit;
            leaf_of_rank[i] = leaf_map[leaf_of_rank[i]];
            mpitopo_machine_unit_of(m, node_level, leaf_of_rank[i], &unit);
            by_unit[unit] = (*end_node)[all[(size_t)i * L->stride + L->nabove]];
        }
        mpitopo__free(*end_node);
        *end_node = by_unit;
        mpitopo_machine_destroy(machine);
        *machine = m;
    }
cleanup:
    if (rc != MPITOPO_SUCCESS) {
        mpitopo_machine_destroy(machine);
        mpitopo__free(*end_node);
        *end_node = NULL;
    }
    mpitopo__free(leaf_map);
    return rc;
}

/*
 * Build the machine of comm (node information ni). *leaf_of_rank is the
 * caller's array, or when NULL one of size ints allocated here (the
 * cache's), whose failure is agreed on in the one allreduce with the rest.
 * With a network, *network is the session's and *end_node (when end_node
 * is not NULL) an array of the end node of every node, owned by the caller.
 */
static int build_machine(MPI_Comm comm, const mpitopo_nodeinfo_t *ni, mpitopo_machine_t **machine,
                         int **leaf_of_rank, const mpitopo_network_t **network, int **end_node,
                         char *above, size_t above_size)
{
    int rank, size, rc;
    if ((rc = PMPI_Comm_rank(comm, &rank)) != MPI_SUCCESS ||
        (rc = PMPI_Comm_size(comm, &size)) != MPI_SUCCESS)
        return rc;
    layout_t L;
    int local = local_layout(comm, ni, &L);
    int *all = NULL;
    if (local == MPITOPO_SUCCESS &&
        !(all = mpitopo__malloc_array((size_t)size * (size_t)L.stride, sizeof *all)))
        local = MPITOPO_NOMEM("the gathered paths");
    if (local == MPITOPO_SUCCESS && !*leaf_of_rank &&
        !(*leaf_of_rank = mpitopo__malloc_array((size_t)size, sizeof **leaf_of_rank)))
        local = MPITOPO_NOMEM("the leaf of every rank");
    /* Agree on the levels (and on failure) before exchanging records. */
    int failed = local != MPITOPO_SUCCESS;
    /* A failing process's code may be mpitopo's (< 0) or MPI's (> 0). */
    int hash = (int)(L.spec_hash >> 1);
    int v[9] = {failed ? -rank : -size, failed ? local : INT_MIN, L.nabove, -L.nabove,
                L.ninner, -L.ninner, !L.bound, hash, -hash};
    rc = PMPI_Allreduce(MPI_IN_PLACE, v, 9, MPI_INT, MPI_MAX, comm);
    if (rc == MPI_SUCCESS && -v[0] < size)
        rc = failed ? local
                    : MPITOPO_FAIL_AS(v[1], "mpitopo_comm_machine", "process %d of comm failed: %s", -v[0],
                                   mpitopo_err_name(v[1]));
    else if (rc == MPI_SUCCESS && (v[2] != -v[3] || v[4] != -v[5]))
        rc = MPITOPO_FAIL_AS(MPITOPO_ERR_MISMATCH, "mpitopo_comm_machine",
                          "processes of comm disagree on the levels (%d..%d network, %d..%d "
                          "inner): are MPITOPO_NETWORK and MPITOPO_EMULATE the same everywhere?",
                          -v[3], v[2], -v[5], v[4]);
    else if (rc == MPI_SUCCESS && v[7] != -v[8])
        rc = MPITOPO_FAIL_AS(MPITOPO_ERR_MISMATCH, "mpitopo_comm_machine",
                             "processes of comm disagree on the network: are MPITOPO_NETWORK, "
                             "the info key mpitopo_network, SLURM_JOB_ID and MPITOPO_SLURM the "
                             "same everywhere?");
    if (rc == MPI_SUCCESS)
        rc = PMPI_Allgather(L.rec, L.stride, MPI_INT, all, L.stride, MPI_INT, comm);
    mpitopo__slurm_levels_t S = {0};
    if (rc == MPI_SUCCESS && L.slurm)
        rc = mpitopo__slurm_gathered(size, all + L.stride - MPITOPO__SLURM_REC, L.stride, &S);
    if (rc == MPI_SUCCESS)
        rc = build(&L, ni, size, !v[6], all, &S, machine, *leaf_of_rank);
    if (rc == MPI_SUCCESS && above)
        snprintf(above, above_size, "%s", L.slurm ? S.source : L.above ? L.above : "none");
    mpitopo__slurm_levels_free(&S);
    int *ends = NULL;
    if (rc == MPI_SUCCESS && L.network)
        rc = add_network(&L, ni, size, all, machine, *leaf_of_rank, &ends);
    if (network)
        *network = rc == MPI_SUCCESS ? L.network : NULL;
    if (end_node)
        *end_node = ends;
    else
        mpitopo__free(ends);
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
    return build_machine(comm, ni, machine, &leaf_of_rank, NULL, NULL, NULL, 0);
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
    int *leaves = NULL, *ends = NULL;
    const mpitopo_network_t *network = NULL;
    char above[320];
    if ((rc = build_machine(comm, *info, &m, &leaves, &network, &ends, above, sizeof above)) !=
        MPITOPO_SUCCESS) {
        mpitopo__free(leaves);
        return rc;
    }
    mpitopo__nodeinfo_set_above(*info, above);
    mpitopo__nodeinfo_set_machine(*info, m, leaves, network, ends);
    mpitopo__nodeinfo_machine(*info, machine, leaf_of_rank);
    return MPITOPO_SUCCESS;
}

static int comm_network_impl(MPI_Comm comm, const mpitopo_network_t **network, int *end_node)
{
    if (!network || !end_node)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, "mpitopo_comm_network", "%s = NULL",
                               !network ? "network" : "end_node");
    *network = NULL;
    *end_node = -1;
    const mpitopo_nodeinfo_t *ni;
    const mpitopo_machine_t *m;
    const int *leaf_of_rank, *ends;
    int rc = mpitopo__comm_machine_cached(comm, &ni, &m, &leaf_of_rank), rank, unit, node_level;
    if (rc != MPITOPO_SUCCESS)
        return rc;
    mpitopo__nodeinfo_network(ni, network, &ends);
    if (!*network)
        return MPITOPO_SUCCESS;
    if ((rc = PMPI_Comm_rank(comm, &rank)) != MPI_SUCCESS)
        return rc;
    mpitopo_machine_node_level(m, &node_level);
    mpitopo_machine_unit_of(m, node_level, leaf_of_rank[rank], &unit);
    *end_node = ends[unit];
    return MPITOPO_SUCCESS;
}

int mpitopo_comm_network(MPI_Comm comm, const mpitopo_network_t **network, int *end_node)
{
    return mpitopo__mpi_result(__func__, comm_network_impl(comm, network, end_node));
}

static int comm_machine_source_impl(MPI_Comm comm, char *source, int size)
{
    if (!source || size < 1)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, "mpitopo_comm_machine_source",
                               source ? "size = %d must be >= 1" : "source = NULL (size %d)", size);
    source[0] = '\0';
    const mpitopo_nodeinfo_t *ni;
    const mpitopo_machine_t *m;
    const int *leaf_of_rank;
    int rc = mpitopo__comm_machine_cached(comm, &ni, &m, &leaf_of_rank);
    if (rc == MPITOPO_SUCCESS)
        snprintf(source, (size_t)size, "%s", mpitopo__nodeinfo_above(ni));
    return rc;
}

int mpitopo_comm_machine_source(MPI_Comm comm, char *source, int size)
{
    return mpitopo__mpi_result(__func__, comm_machine_source_impl(comm, source, size));
}
