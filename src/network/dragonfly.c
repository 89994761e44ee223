/*
 * Dragonfly networks ("dragonfly:P,A,H[,G]"): P end nodes per router, A
 * routers per group fully connected, H global ports per router, G groups,
 * minimal routing (local, global, local). The groups of end nodes are the
 * dragonfly's groups and its routers.
 */
#include "network/network_internal.h"

#include <stdio.h>
#include <string.h>

/* Group i's t-th global link goes to group t (t < i) or t + 1 (t >= i):
 * one link between every two groups (the consecutive arrangement). */
static int64_t df_target(int64_t i, int64_t t)
{
    return t < i ? t : t + 1;
}

/* The index, among group i's global links, of its link to group j != i. */
static int64_t df_index(int64_t i, int64_t j)
{
    return j < i ? j : j - 1;
}

static int64_t df_local(const mpitopo_network_t *net, int64_t g, int64_t r1, int64_t r2)
{
    return net->df_lbase + (g * net->df_a + r1) * (net->df_a - 1) + (r2 < r1 ? r2 : r2 - 1);
}

static int df_route(const mpitopo_network_t *net, int src, int dst, int64_t *ch)
{
    int64_t a = net->df_a, rs = src / net->df_p, rd = dst / net->df_p;
    int64_t gs = rs / a, gd = rd / a;
    int len = 0;
    ch[len++] = src; /* up to its router */
    if (gs != gd) {
        int64_t t = df_index(gs, gd), back = df_index(gd, gs);
        int64_t out = gs * a + t / net->df_h, in = gd * a + back / net->df_h;
        if (out != rs)
            ch[len++] = df_local(net, gs, rs % a, out % a);
        ch[len++] = net->df_gbase + gs * (net->df_g - 1) + t;
        rs = in;
    }
    if (rs != rd)
        ch[len++] = df_local(net, gd, rs % a, rd % a);
    ch[len++] = net->nnodes + (int64_t)dst; /* down to dst */
    return len;
}

static void df_name(const mpitopo_network_t *net, int64_t ch, char *name, size_t size)
{
    int64_t a = net->df_a, n = net->nnodes;
    if (ch < 2 * n) {
        int64_t node = ch % n, r = node / net->df_p;
        if (ch < n)
            snprintf(name, size, "n%lld->r%lld.%lld", (long long)node, (long long)(r / a),
                     (long long)(r % a));
        else
            snprintf(name, size, "r%lld.%lld->n%lld", (long long)(r / a), (long long)(r % a),
                     (long long)node);
    } else if (ch < net->df_gbase) {
        int64_t i = ch - net->df_lbase, g = i / (a * (a - 1)), rem = i % (a * (a - 1));
        int64_t r1 = rem / (a - 1), r2 = rem % (a - 1);
        r2 += r2 >= r1;
        snprintf(name, size, "r%lld.%lld->r%lld.%lld", (long long)g, (long long)r1, (long long)g,
                 (long long)r2);
    } else {
        int64_t i = ch - net->df_gbase, g = i / (net->df_g - 1), t = i % (net->df_g - 1);
        int64_t j = df_target(g, t), back = df_index(j, g);
        snprintf(name, size, "r%lld.%lld->r%lld.%lld global", (long long)g,
                 (long long)(t / net->df_h), (long long)j, (long long)(back / net->df_h));
    }
}

/* "P,A,H[,G]": P nodes per router, A routers per group, H global ports per
 * router, G groups (default and most A*H+1). */
static int parse_dragonfly(const char *desc, const char *body, size_t len, mpitopo_network_t *net)
{
    int64_t v[4];
    int n;
    int rc = mpitopo__net_parse_list(desc, "dragonfly", body, len, ',', MPITOPO__NET_LIMIT, v, 4, &n);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    if (n < 3)
        return mpitopo__net_fail(desc, MPITOPO_ERR_PARSE, "a dragonfly is dragonfly:P,A,H[,G]");
    int64_t ports = mpitopo__net_mul_max(v[1], v[2], MPITOPO__NET_LIMIT);
    if (ports < 0 || ports >= MPITOPO__NET_LIMIT)
        return mpitopo__net_fail(desc, MPITOPO_ERR_RANGE, "A*H exceeds %lld", MPITOPO__NET_LIMIT - 1);
    int64_t g = n == 4 ? v[3] : ports + 1;
    if (g < 2 || g > ports + 1)
        return mpitopo__net_fail(desc, MPITOPO_ERR_RANGE,
                         "G = %lld groups must be in [2, A*H+1 = %lld] (one global link between "
                         "every two groups)", (long long)g, (long long)(ports + 1));
    int64_t routers = mpitopo__net_mul_max(g, v[1], MPITOPO__NET_LIMIT), nodes = routers < 0 ? -1 : mpitopo__net_mul_max(routers, v[0], MPITOPO__NET_LIMIT);
    int64_t local = routers < 0 ? -1 : mpitopo__net_mul_max(routers, v[1] - 1, MPITOPO__NET_CHANNEL_LIMIT);
    int64_t global = mpitopo__net_mul_max(g, g - 1, MPITOPO__NET_CHANNEL_LIMIT);
    if (nodes < 0 || local < 0 || global < 0)
        return mpitopo__net_fail(desc, MPITOPO_ERR_RANGE, "more than %lld nodes", MPITOPO__NET_LIMIT);
    net->kind = MPITOPO__NET_DRAGONFLY;
    net->df_p = v[0];
    net->df_a = v[1];
    net->df_h = v[2];
    net->df_g = g;
    net->nnodes = (int)nodes;
    net->df_lbase = 2 * nodes;
    net->df_gbase = net->df_lbase + local;
    net->nchannels = net->df_gbase + global;
    net->max_route = 5;
    return MPITOPO_SUCCESS;
}

static int df_groups(const mpitopo_network_t *net, int64_t *size, const char **names)
{
    int n = 0;
    if (net->df_g > 1) {
        size[n] = net->df_p * net->df_a;
        names[n++] = "group";
    }
    if (net->df_a > 1 && net->df_p > 1) {
        size[n] = net->df_p;
        names[n++] = "router";
    }
    return n;
}

const mpitopo__net_ops_t mpitopo__net_dragonfly_ops = {
    .name = "dragonfly", .kind = MPITOPO__NET_DRAGONFLY, .parse = parse_dragonfly,
    .route = df_route, .channel_name = df_name, .groups = df_groups};
