/*
 * Networks from descriptions: the front end every kind shares. "KIND:
 * PARAMETERS[:OPTIONS]" is parsed by the kind named in `kinds` (one file
 * per kind: grid.c, fattree.c, dragonfly.c, hhc.c, fabric.c, each behind a
 * mpitopo__net_ops_t), the options (cap=X, nodes=N) here; the public calls
 * (size, routes, channel and node names, groups) ask the network's ops.
 * A new kind is a file with its ops and a line in `kinds`.
 */
#include "network/network_internal.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- parser */

/* The kinds of network, by the KIND of their descriptions ("gpc" is a
 * preset of fattree, expanded in parse). */
static const mpitopo__net_ops_t *const kinds[] = {
    &mpitopo__net_torus_ops,     &mpitopo__net_mesh_ops, &mpitopo__net_fattree_ops,
    &mpitopo__net_ktree_ops,     &mpitopo__net_dragonfly_ops, &mpitopo__net_hhc_ops,
    &mpitopo__net_fabric_ops};
#define NKINDS (sizeof kinds / sizeof *kinds)

static const mpitopo__net_ops_t *find_kind(const char *s, size_t len)
{
    for (size_t i = 0; i < NKINDS; i++)
        if (len == strlen(kinds[i]->name) && strncmp(s, kinds[i]->name, len) == 0)
            return kinds[i];
    return NULL;
}

/* Trailing ":key=value" options: cap=X (all kinds), nodes=N (fat trees). */
static int parse_options(const char *desc, const char *s, mpitopo_network_t *net, int64_t *nodes)
{
    if (!*s)
        return mpitopo__net_fail(desc, MPITOPO_ERR_PARSE, "empty option after ':'");
    while (*s) {
        const char *end = strchr(s, ':');
        size_t len = end ? (size_t)(end - s) : strlen(s);
        if (len > 4 && strncmp(s, "cap=", 4) == 0) {
            double c;
            if (mpitopo__parse_double(s + 4, len - 4, &c) != 0)
                return mpitopo__net_fail(desc, MPITOPO_ERR_PARSE, "cap = \"%.*s\" is not a number",
                                 (int)(len - 4 > 40 ? 40 : len - 4), s + 4);
            if (!(c > 0) || !isfinite(c))
                return mpitopo__net_fail(desc, MPITOPO_ERR_RANGE, "cap = %g must be positive and finite",
                                 c);
            net->capacity = c;
        } else if (len > 6 && strncmp(s, "nodes=", 6) == 0 && net->ops->takes_nodes) {
            long long v;
            if (mpitopo__parse_long(s + 6, len - 6, LLONG_MIN, LLONG_MAX, &v) != 0)
                return mpitopo__net_fail(desc, MPITOPO_ERR_PARSE, "nodes = \"%.*s\" is not an integer",
                                 (int)(len - 6 > 40 ? 40 : len - 6), s + 6);
            if (v < 1 || v > MPITOPO__NET_LIMIT)
                return mpitopo__net_fail(desc, MPITOPO_ERR_RANGE, "nodes = %lld must be in [1, %lld]", v,
                                 MPITOPO__NET_LIMIT);
            *nodes = v;
        } else {
            return mpitopo__net_fail(desc, MPITOPO_ERR_PARSE, "unknown option \"%.*s\" (cap=X%s)",
                             (int)(len > 40 ? 40 : len), s,
                             net->ops->takes_nodes ? ", nodes=N" : "");
        }
        s += len + (end != NULL);
        if (end && !*s)
            return mpitopo__net_fail(desc, MPITOPO_ERR_PARSE, "empty option after ':'");
    }
    return MPITOPO_SUCCESS;
}

int mpitopo__network_is_description(const char *s)
{
    size_t len = strcspn(s, ":");
    return find_kind(s, len) != NULL || (len == 3 && strncmp(s, "gpc", 3) == 0);
}

static int parse(const char *desc, mpitopo_network_t *net)
{
    static const char gpc[] = "fattree:3;30,6,18;1,2,9;1,3,2:nodes=3090";
    const char *s = desc;
    char expanded[128];
    if (strncmp(desc, "gpc", 3) == 0 && (desc[3] == 0 || desc[3] == ':')) {
        /* The preset, then the caller's own options (a cap=). */
        snprintf(expanded, sizeof expanded, "%s", gpc);
        s = expanded;
        if (desc[3] == ':' && strncmp(desc + 4, "cap=", 4) != 0)
            return mpitopo__net_fail(desc, MPITOPO_ERR_PARSE, "gpc takes only the option cap=X");
    }
    const char *colon = strchr(s, ':');
    if (!colon)
        return mpitopo__net_fail(desc, MPITOPO_ERR_PARSE,
                         "expected KIND:PARAMETERS, KIND one of torus, mesh, fattree, ktree, "
                         "dragonfly, hhc, fabric, gpc");
    size_t klen = (size_t)(colon - s);
    const char *body = colon + 1, *opt = strchr(body, ':');
    size_t blen = opt ? (size_t)(opt - body) : strlen(body);
    if (blen == 0)
        return mpitopo__net_fail(desc, MPITOPO_ERR_PARSE, "no parameters after \"%.*s:\"", (int)klen, s);
    const mpitopo__net_ops_t *ops = find_kind(s, klen);
    if (!ops)
        return mpitopo__net_fail(desc, MPITOPO_ERR_PARSE,
                         "kind = \"%.*s\" is not torus, mesh, fattree, ktree, dragonfly, hhc, "
                         "fabric or gpc",
                         (int)(klen > 40 ? 40 : klen), s);
    net->ops = ops;
    net->kind = ops->kind;
    int rc = ops->parse(desc, body, blen, net);
    int64_t nodes = 0;
    if (rc == MPITOPO_SUCCESS && opt)
        rc = parse_options(desc, opt + 1, net, &nodes);
    if (rc == MPITOPO_SUCCESS && s == expanded && desc[3] == ':')
        rc = parse_options(desc, desc + 4, net, &nodes);
    if (rc == MPITOPO_SUCCESS && ops->finish)
        rc = ops->finish(desc, net, nodes);
    return rc;
}

int mpitopo_network_from_string(const char *desc, mpitopo_network_t **network)
{
    if (!network)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "network is NULL");
    *network = NULL;
    if (!desc)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "desc is NULL");
    if (strlen(desc) > 4096)
        return MPITOPO_FAIL(MPITOPO_ERR_RANGE, "desc is %zu characters long, more than 4096",
                            strlen(desc));
    mpitopo_network_t *net = mpitopo__calloc(1, sizeof *net);
    if (!net)
        return MPITOPO_NOMEM("the network");
    net->capacity = 1.0;
    int rc = parse(desc, net);
    if (rc != MPITOPO_SUCCESS) {
        mpitopo_network_destroy(&net); /* what the kind's parser made, too */
        return rc;
    }
    *network = net;
    return MPITOPO_SUCCESS;
}

void mpitopo_network_destroy(mpitopo_network_t **network)
{
    if (!network || !*network)
        return;
    mpitopo_network_t *net = *network;
    if (net->ops && net->ops->release)
        net->ops->release(net);
    mpitopo__free(net->chcap);
    mpitopo__free(net);
    *network = NULL;
}

int mpitopo_network_size(const mpitopo_network_t *network, int *nnodes, int64_t *nchannels,
                         int *max_route)
{
    if (!network)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "network is NULL");
    if (nnodes)
        *nnodes = network->nnodes;
    if (nchannels)
        *nchannels = network->nchannels;
    if (max_route)
        *max_route = network->max_route;
    return MPITOPO_SUCCESS;
}

int mpitopo__network_route(const mpitopo_network_t *net, int src, int dst, int64_t *ch)
{
    if (src == dst)
        return 0;
    return net->ops->route(net, src, dst, ch);
}

int mpitopo_network_route(const mpitopo_network_t *network, int src, int dst, int maxlen,
                          int64_t *channels, int *len)
{
    if (!network || !channels || !len)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "%s is NULL",
                            !network ? "network" : !channels ? "channels" : "len");
    if (src < 0 || src >= network->nnodes)
        return MPITOPO_FAIL(MPITOPO_ERR_RANGE, "src = %d is not in [0, %d)", src, network->nnodes);
    if (dst < 0 || dst >= network->nnodes)
        return MPITOPO_FAIL(MPITOPO_ERR_RANGE, "dst = %d is not in [0, %d)", dst, network->nnodes);
    /* Too little room: through buf, or a block as long as the longest
     * route (a fabric's or a large grid's routes can be longer than buf). */
    int64_t buf[2 * MPITOPO_NET_MAX_LEVELS];
    int64_t *out = maxlen >= network->max_route                      ? channels
                   : network->max_route <= 2 * MPITOPO_NET_MAX_LEVELS ? buf
                       : mpitopo__malloc_array((size_t)network->max_route, sizeof *out);
    if (!out)
        return MPITOPO_NOMEM("the route");
    int n = mpitopo__network_route(network, src, dst, out);
    if (n <= maxlen && out != channels)
        memcpy(channels, out, (size_t)n * sizeof *out);
    if (out != channels && out != buf)
        mpitopo__free(out);
    if (n > maxlen)
        return MPITOPO_FAIL(MPITOPO_ERR_RANGE, "maxlen = %d is less than the route's %d", maxlen, n);
    *len = n;
    return MPITOPO_SUCCESS;
}

int mpitopo_network_channel(const mpitopo_network_t *network, int64_t channel, double *capacity,
                            char *name, size_t size)
{
    if (!network)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "network is NULL");
    if (channel < 0 || channel >= network->nchannels)
        return MPITOPO_FAIL(MPITOPO_ERR_RANGE, "channel = %lld is not in [0, %lld)",
                            (long long)channel, (long long)network->nchannels);
    if (capacity)
        *capacity = mpitopo__network_capacity(network, channel);
    if (name && size > 0) {
        network->ops->channel_name(network, channel, name, size);
    }
    return MPITOPO_SUCCESS;
}

int mpitopo_network_node_name(const mpitopo_network_t *network, int node, char *name,
                              size_t size)
{
    if (!network || !name)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "%s is NULL", !network ? "network" : "name");
    if (node < 0 || node >= network->nnodes)
        return MPITOPO_FAIL(MPITOPO_ERR_RANGE, "node = %d is not in [0, %d)", node,
                            network->nnodes);
    if (size == 0)
        return MPITOPO_SUCCESS;
    if (network->ops->node_name)
        network->ops->node_name(network, node, name, size);
    else
        snprintf(name, size, "n%d", node);
    return MPITOPO_SUCCESS;
}

/* ---------------------------------------------------------------- groups */

/*
 * The groups of end nodes that form a tree above them, top-down: a fat
 * tree's subtrees, a dragonfly's groups and routers, and whatever the kinds
 * read from files or built on cubes say (each kind's ops->groups). Torus
 * and mesh have none: no subset of their nodes shares links.
 */
static int group_levels(const mpitopo_network_t *net, int64_t *size, const char **names)
{
    return net->ops->groups ? net->ops->groups(net, size, names) : 0;
}

int mpitopo_network_group_levels(const mpitopo_network_t *network, int *nlevels)
{
    if (!network || !nlevels)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "%s is NULL", !network ? "network" : "nlevels");
    int64_t size[MPITOPO_MAX_LEVELS];
    const char *names[MPITOPO_MAX_LEVELS];
    *nlevels = group_levels(network, size, names);
    return MPITOPO_SUCCESS;
}

int mpitopo_network_group(const mpitopo_network_t *network, int level, int node, int64_t *group,
                          const char **name)
{
    if (!network || !group)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "%s is NULL", !network ? "network" : "group");
    int64_t size[MPITOPO_MAX_LEVELS];
    const char *names[MPITOPO_MAX_LEVELS];
    int n = group_levels(network, size, names);
    if (level < 0 || level >= n)
        return MPITOPO_FAIL(MPITOPO_ERR_RANGE, "level = %d is not in [0, %d)", level, n);
    if (node < 0 || node >= network->nnodes)
        return MPITOPO_FAIL(MPITOPO_ERR_RANGE, "node = %d is not in [0, %d)", node,
                            network->nnodes);
    /* size[level] > 0: runs of consecutive nodes; otherwise the kind labels them. */
    *group = size[level] > 0 ? node / size[level] : network->ops->group(network, level, node);
    if (name)
        *name = names[level];
    return MPITOPO_SUCCESS;
}
