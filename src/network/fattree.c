/*
 * Parallel-ports generalised fat trees ("fattree:H;M1,..;W1,..;P1,..",
 * "ktree:K,N", and the preset "gpc" expanded by network.c): d-mod-k
 * routing up to the nearest common ancestor and down. Routes and channel
 * names are arithmetic on the description's numbers: no table is kept. The
 * groups of end nodes are the subtrees.
 */
#include "network/network_internal.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

static int tree_setup(const char *desc, mpitopo_network_t *net, int64_t nodes)
{
    int h = net->h;
    net->M[0] = net->W[0] = net->P[0] = 1;
    for (int l = 1; l <= h; l++) {
        net->M[l] = mpitopo__net_mul_max(net->M[l - 1], net->m[l], MPITOPO__NET_LIMIT);
        net->W[l] = mpitopo__net_mul_max(net->W[l - 1], net->w[l], MPITOPO__NET_LIMIT);
        int64_t wp = mpitopo__net_mul_max(net->w[l], net->p[l], MPITOPO__NET_CHANNEL_LIMIT);
        net->P[l] = wp < 0 ? -1 : mpitopo__net_mul_max(net->P[l - 1], wp, MPITOPO__NET_CHANNEL_LIMIT);
        if (net->M[l] < 0)
            return mpitopo__net_fail(desc, MPITOPO_ERR_RANGE, "more than %lld nodes", MPITOPO__NET_LIMIT);
        if (net->W[l] < 0 || net->P[l] < 0)
            return mpitopo__net_fail(desc, MPITOPO_ERR_RANGE, "the product of w (and of w*p) exceeds %lld",
                             MPITOPO__NET_LIMIT);
    }
    if (nodes == 0)
        nodes = net->M[h];
    if (nodes > net->M[h])
        return mpitopo__net_fail(desc, MPITOPO_ERR_RANGE, "nodes = %lld exceeds the tree's %lld nodes",
                         (long long)nodes, (long long)net->M[h]);
    net->nnodes = (int)nodes;
    net->nvert[0] = nodes;
    int64_t base = 0;
    for (int l = 1; l <= h; l++) {
        int64_t groups = (nodes + net->M[l] - 1) / net->M[l];
        net->nvert[l] = mpitopo__net_mul_max(groups, net->W[l], MPITOPO__NET_LIMIT);
        int64_t per = mpitopo__net_mul_max(net->nvert[l - 1], net->P[l] / net->P[l - 1], MPITOPO__NET_CHANNEL_LIMIT);
        if (net->nvert[l] < 0 || per < 0 || per > MPITOPO__NET_CHANNEL_LIMIT - 2 * base)
            return mpitopo__net_fail(desc, MPITOPO_ERR_RANGE, "more than %lld switches or channels",
                             MPITOPO__NET_LIMIT);
        net->upbase[l] = base;
        net->downbase[l] = base + per;
        base += 2 * per;
    }
    net->nchannels = base;
    net->max_route = 2 * h;
    return MPITOPO_SUCCESS;
}

/* The parent of vertex v of level l-1 through its k-th parent choice. */
static int64_t tree_parent(const mpitopo_network_t *net, int l, int64_t v, int64_t k)
{
    int64_t A = v / net->W[l - 1], B = v % net->W[l - 1];
    return A / net->m[l] * net->W[l] + B + net->W[l - 1] * k;
}

static int tree_route(const mpitopo_network_t *net, int src, int dst, int64_t *ch)
{
    int L = 1;
    while (src / net->M[L] != dst / net->M[L])
        L++;
    int len = 0;
    int64_t cur = src;
    for (int l = 1; l <= L; l++) {
        int64_t wl = net->w[l], pl = net->p[l];
        int64_t u = dst / net->P[l - 1] % (wl * pl), k = u % wl, q = u / wl;
        ch[len++] = net->upbase[l] + (cur * wl + k) * pl + q;
        cur = tree_parent(net, l, cur, k);
    }
    for (int l = L; l >= 1; l--) {
        int64_t wl = net->w[l], pl = net->p[l];
        int64_t q = dst / net->P[l - 1] % (wl * pl) / wl;
        int64_t A = cur / net->W[l], B = cur % net->W[l];
        int64_t k = B / net->W[l - 1];
        int64_t child = (A * net->m[l] + dst / net->M[l - 1] % net->m[l]) * net->W[l - 1] +
                        B % net->W[l - 1];
        ch[len++] = net->downbase[l] + (child * wl + k) * pl + q;
        cur = child;
    }
    return len;
}

static void vertex_name(int l, int64_t v, char *buf, size_t size)
{
    if (l == 0)
        snprintf(buf, size, "n%lld", (long long)v);
    else
        snprintf(buf, size, "s%d.%lld", l, (long long)v);
}

static void tree_name(const mpitopo_network_t *net, int64_t ch, char *name, size_t size)
{
    int l = 1;
    while (l < net->h && ch >= net->upbase[l + 1])
        l++;
    int down = ch >= net->downbase[l];
    int64_t idx = ch - (down ? net->downbase[l] : net->upbase[l]);
    int64_t q = idx % net->p[l], t = idx / net->p[l];
    int64_t k = t % net->w[l], lower = t / net->w[l];
    char a[40], b[40], par[24] = "";
    vertex_name(l - 1, lower, a, sizeof a);
    vertex_name(l, tree_parent(net, l, lower, k), b, sizeof b);
    if (net->p[l] > 1)
        snprintf(par, sizeof par, "#%lld", (long long)q);
    snprintf(name, size, "%s->%s%s", down ? b : a, down ? a : b, par);
}

/* "H;m1,..;w1,..;p1,.." */
static int parse_fattree(const char *desc, const char *body, size_t len, mpitopo_network_t *net)
{
    const char *f[4];
    size_t flen[4];
    int nf = 0;
    size_t i = 0;
    for (;;) {
        size_t j = i;
        while (j < len && body[j] != ';')
            j++;
        if (nf == 4)
            return mpitopo__net_fail(desc, MPITOPO_ERR_PARSE,
                             "a fat tree has 4 fields, H;m1,..;w1,..;p1,.., not more");
        f[nf] = body + i;
        flen[nf++] = j - i;
        if (j == len)
            break;
        i = j + 1;
    }
    if (nf != 4)
        return mpitopo__net_fail(desc, MPITOPO_ERR_PARSE,
                         "a fat tree has 4 fields, H;m1,..;w1,..;p1,.., not %d", nf);
    long long h;
    if (mpitopo__parse_long(f[0], flen[0], LLONG_MIN, LLONG_MAX, &h) != 0)
        return mpitopo__net_fail(desc, MPITOPO_ERR_PARSE, "levels = \"%.*s\" is not an integer",
                         (int)(flen[0] > 40 ? 40 : flen[0]), f[0]);
    if (h < 1 || h > MPITOPO_NET_MAX_LEVELS)
        return mpitopo__net_fail(desc, MPITOPO_ERR_RANGE, "levels = %lld must be in [1, %d]", h,
                         MPITOPO_NET_MAX_LEVELS);
    static const char *const names[3] = {"m", "w", "p"};
    int64_t *dst[3] = {net->m, net->w, net->p};
    for (int k = 0; k < 3; k++) {
        int n;
        int rc = mpitopo__net_parse_list(desc, names[k], f[k + 1], flen[k + 1], ',', MPITOPO__NET_LIMIT, dst[k] + 1,
                            MPITOPO_NET_MAX_LEVELS, &n);
        if (rc != MPITOPO_SUCCESS)
            return rc;
        if (n != h)
            return mpitopo__net_fail(desc, MPITOPO_ERR_PARSE, "%s has %d entries, not levels = %lld",
                             names[k], n, h);
    }
    net->kind = MPITOPO__NET_FATTREE;
    net->h = (int)h;
    return MPITOPO_SUCCESS;
}

/* "K,N": fattree:N;K,..,K;1,K,..,K;1,..,1 */
static int parse_ktree(const char *desc, const char *body, size_t len, mpitopo_network_t *net)
{
    int64_t kn[2];
    int n;
    int rc = mpitopo__net_parse_list(desc, "ktree", body, len, ',', MPITOPO__NET_LIMIT, kn, 2, &n);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    if (n != 2)
        return mpitopo__net_fail(desc, MPITOPO_ERR_PARSE, "a K-ary N-tree is ktree:K,N");
    if (kn[1] > MPITOPO_NET_MAX_LEVELS)
        return mpitopo__net_fail(desc, MPITOPO_ERR_RANGE, "N = %lld must be in [1, %d]",
                         (long long)kn[1], MPITOPO_NET_MAX_LEVELS);
    net->kind = MPITOPO__NET_FATTREE;
    net->h = (int)kn[1];
    for (int l = 1; l <= net->h; l++) {
        net->m[l] = kn[0];
        net->w[l] = l == 1 ? 1 : kn[0];
        net->p[l] = 1;
    }
    return MPITOPO_SUCCESS;
}

/* The subtrees, top-down: level l of the tree holds the nodes d with the
 * same d / M[l]; levels holding every node (or one) are left out. */
static int tree_groups(const mpitopo_network_t *net, int64_t *size, const char **names)
{
    static const char *const tree_names[MPITOPO_NET_MAX_LEVELS + 1] = {
        "", "switch", "switch2", "switch3", "switch4", "switch5", "switch6", "switch7", "switch8",
        "switch9", "switch10", "switch11", "switch12", "switch13", "switch14", "switch15",
        "switch16"};
    int n = 0;
    for (int l = net->h; l >= 1; l--)
        if (net->M[l] < net->nnodes && net->M[l] > 1) {
            size[n] = net->M[l];
            names[n++] = tree_names[l];
        }
    return n;
}

const mpitopo__net_ops_t mpitopo__net_fattree_ops = {
    .name = "fattree", .kind = MPITOPO__NET_FATTREE, .parse = parse_fattree, .finish = tree_setup,
    .takes_nodes = 1, .route = tree_route, .channel_name = tree_name, .groups = tree_groups};
const mpitopo__net_ops_t mpitopo__net_ktree_ops = {
    .name = "ktree", .kind = MPITOPO__NET_FATTREE, .parse = parse_ktree, .finish = tree_setup,
    .takes_nodes = 1, .route = tree_route, .channel_name = tree_name, .groups = tree_groups};
