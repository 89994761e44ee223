/*
 * Torus and mesh networks ("torus:AxBxC", "mesh:AxBxC"): end node i at the
 * row-major coordinates of i, one channel each way between neighbours,
 * dimension-order routing (lowest dimension first, the shorter way around a
 * torus ring, ties towards +). Routes and channel names are arithmetic on
 * the dimensions: no table is kept.
 */
#include "network/network_internal.h"

#include <stdio.h>
#include <string.h>

static int grid_setup(const char *desc, mpitopo_network_t *net)
{
    int64_t n = 1;
    for (int d = net->ndims - 1; d >= 0; d--) {
        net->stride[d] = n;
        n = mpitopo__net_mul_max(n, net->dims[d], MPITOPO__NET_LIMIT);
        if (n < 0)
            return mpitopo__net_fail(desc, MPITOPO_ERR_RANGE, "more than %lld nodes", MPITOPO__NET_LIMIT);
    }
    net->nnodes = (int)n;
    int64_t base = 0;
    net->max_route = 0;
    for (int d = 0; d < net->ndims; d++) {
        int k = net->dims[d];
        int64_t per = k < 2 ? 0 : net->torus ? n : n / k * (k - 1);
        for (int s = 0; s < 2; s++) {
            net->chbase[d][s] = base;
            net->chcount[d][s] = per;
            base += per;
        }
        net->max_route += net->torus ? k / 2 : k - 1;
    }
    net->nchannels = base;
    return MPITOPO_SUCCESS;
}

/* The channel leaving node i along dimension d in direction s (0 +, 1 -). */
static int64_t grid_channel(const mpitopo_network_t *net, int64_t i, int d, int s)
{
    if (net->torus)
        return net->chbase[d][s] + i;
    int64_t k = net->dims[d], st = net->stride[d];
    int64_t c = i / st % k, hi = i / (st * k), lo = i % st;
    return net->chbase[d][s] + (hi * (k - 1) + c - s) * st + lo;
}

static int grid_route(const mpitopo_network_t *net, int src, int dst, int64_t *ch)
{
    int len = 0;
    int64_t cur = src;
    for (int d = 0; d < net->ndims; d++) {
        int64_t k = net->dims[d], st = net->stride[d];
        int64_t cs = cur / st % k, cd = dst / st % k;
        if (cs == cd)
            continue;
        int64_t steps;
        int s;
        if (net->torus) {
            int64_t fwd = (cd - cs + k) % k;
            s = fwd <= k - fwd ? 0 : 1;
            steps = s == 0 ? fwd : k - fwd;
        } else {
            s = cd > cs ? 0 : 1;
            steps = s == 0 ? cd - cs : cs - cd;
        }
        for (int64_t t = 0; t < steps; t++) {
            ch[len++] = grid_channel(net, cur, d, s);
            int64_t c = cur / st % k;
            int64_t nc = s == 0 ? (c + 1) % k : (c + k - 1) % k;
            cur += (nc - c) * st;
        }
    }
    return len;
}

static void grid_name(const mpitopo_network_t *net, int64_t ch, char *name, size_t size)
{
    int d = 0, s = 0;
    for (d = 0; d < net->ndims; d++) {
        for (s = 0; s < 2; s++)
            if (ch < net->chbase[d][s] + net->chcount[d][s])
                goto found;
    }
found:;
    int64_t idx = ch - net->chbase[d][s], k = net->dims[d], st = net->stride[d], from;
    if (net->torus) {
        from = idx;
    } else {
        int64_t hi = idx / ((k - 1) * st), rem = idx % ((k - 1) * st);
        from = (hi * k + rem / st + s) * st + rem % st;
    }
    int64_t c = from / st % k, nc = s == 0 ? (c + 1) % k : (c + k - 1) % k;
    snprintf(name, size, "n%lld->n%lld d%d%c", (long long)from,
             (long long)(from + (nc - c) * st), d, s == 0 ? '+' : '-');
}

static int parse_grid(const char *desc, const char *body, size_t len, mpitopo_network_t *net)
{
    int64_t dims[MPITOPO_MAX_DIMS];
    int n;
    int rc = mpitopo__net_parse_list(desc, "dims", body, len, 'x', MPITOPO__NET_LIMIT, dims, MPITOPO_MAX_DIMS, &n);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    net->kind = MPITOPO__NET_GRID;
    net->ndims = n;
    for (int d = 0; d < n; d++)
        net->dims[d] = (int)dims[d];
    return grid_setup(desc, net);
}

static int parse_torus(const char *desc, const char *body, size_t len, mpitopo_network_t *net)
{
    net->torus = 1;
    return parse_grid(desc, body, len, net);
}

const mpitopo__net_ops_t mpitopo__net_torus_ops = {
    .name = "torus", .kind = MPITOPO__NET_GRID, .parse = parse_torus, .route = grid_route,
    .channel_name = grid_name};
const mpitopo__net_ops_t mpitopo__net_mesh_ops = {
    .name = "mesh", .kind = MPITOPO__NET_GRID, .parse = parse_grid, .route = grid_route,
    .channel_name = grid_name};
