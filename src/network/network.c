/* Networks from descriptions: torus and mesh (dimension-order routing) and
 * parallel-ports generalised fat trees (d-mod-k routing). Routes and channel
 * names are arithmetic on the description's numbers: no table is kept. */
#include "network/network_internal.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define NET_LIMIT 2147483647LL        /* nodes, and vertices of one level */
#define NET_CHANNEL_LIMIT (1LL << 40) /* channels, and the d-mod-k products */

static const char *const net_fn = "mpitopo_network_from_string";

/* An error of the description, naming it: "desc = \"...\": <detail>". */
MPITOPO_PRINTF(3, 4)
static int desc_fail(const char *desc, int code, const char *fmt, ...)
{
    char detail[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    return MPITOPO_FAIL_AS(code, net_fn, "desc = \"%.200s\": %s", desc, detail);
}

/* a * b when it stays <= limit; -1 otherwise (a, b >= 0). */
static int64_t mul_max(int64_t a, int64_t b, int64_t limit)
{
    if (a != 0 && b > limit / a)
        return -1;
    return a * b;
}

/* A list of integers in [1, max] separated by `sep`, exactly s[0..len). */
static int parse_list(const char *desc, const char *what, const char *s, size_t len, char sep,
                      int64_t max, int64_t *out, int maxn, int *n)
{
    *n = 0;
    size_t i = 0;
    for (;;) {
        size_t j = i;
        while (j < len && s[j] != sep)
            j++;
        if (*n == maxn)
            return desc_fail(desc, MPITOPO_ERR_RANGE, "%s has more than %d entries", what, maxn);
        long long v;
        if (mpitopo__parse_long(s + i, j - i, LLONG_MIN, LLONG_MAX, &v) != 0)
            return desc_fail(desc, MPITOPO_ERR_PARSE, "%s[%d] = \"%.*s\" is not an integer", what,
                             *n, (int)(j - i > 40 ? 40 : j - i), s + i);
        if (v < 1 || v > max)
            return desc_fail(desc, MPITOPO_ERR_RANGE, "%s[%d] = %lld must be in [1, %lld]", what,
                             *n, v, (long long)max);
        out[(*n)++] = v;
        if (j == len)
            return MPITOPO_SUCCESS;
        i = j + 1;
    }
}

/* ---------------------------------------------------------------- torus, mesh */

static int grid_setup(const char *desc, mpitopo_network_t *net)
{
    int64_t n = 1;
    for (int d = net->ndims - 1; d >= 0; d--) {
        net->stride[d] = n;
        n = mul_max(n, net->dims[d], NET_LIMIT);
        if (n < 0)
            return desc_fail(desc, MPITOPO_ERR_RANGE, "more than %lld nodes", NET_LIMIT);
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
    int rc = parse_list(desc, "dims", body, len, 'x', NET_LIMIT, dims, MPITOPO_MAX_DIMS, &n);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    net->kind = MPITOPO__NET_GRID;
    net->ndims = n;
    for (int d = 0; d < n; d++)
        net->dims[d] = (int)dims[d];
    return grid_setup(desc, net);
}

/* ---------------------------------------------------------------- fat tree */

static int tree_setup(const char *desc, mpitopo_network_t *net, int64_t nodes)
{
    int h = net->h;
    net->M[0] = net->W[0] = net->P[0] = 1;
    for (int l = 1; l <= h; l++) {
        net->M[l] = mul_max(net->M[l - 1], net->m[l], NET_LIMIT);
        net->W[l] = mul_max(net->W[l - 1], net->w[l], NET_LIMIT);
        int64_t wp = mul_max(net->w[l], net->p[l], NET_CHANNEL_LIMIT);
        net->P[l] = wp < 0 ? -1 : mul_max(net->P[l - 1], wp, NET_CHANNEL_LIMIT);
        if (net->M[l] < 0)
            return desc_fail(desc, MPITOPO_ERR_RANGE, "more than %lld nodes", NET_LIMIT);
        if (net->W[l] < 0 || net->P[l] < 0)
            return desc_fail(desc, MPITOPO_ERR_RANGE, "the product of w (and of w*p) exceeds %lld",
                             NET_LIMIT);
    }
    if (nodes == 0)
        nodes = net->M[h];
    if (nodes > net->M[h])
        return desc_fail(desc, MPITOPO_ERR_RANGE, "nodes = %lld exceeds the tree's %lld nodes",
                         (long long)nodes, (long long)net->M[h]);
    net->nnodes = (int)nodes;
    net->nvert[0] = nodes;
    int64_t base = 0;
    for (int l = 1; l <= h; l++) {
        int64_t groups = (nodes + net->M[l] - 1) / net->M[l];
        net->nvert[l] = mul_max(groups, net->W[l], NET_LIMIT);
        int64_t per = mul_max(net->nvert[l - 1], net->P[l] / net->P[l - 1], NET_CHANNEL_LIMIT);
        if (net->nvert[l] < 0 || per < 0 || per > NET_CHANNEL_LIMIT - 2 * base)
            return desc_fail(desc, MPITOPO_ERR_RANGE, "more than %lld switches or channels",
                             NET_LIMIT);
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
            return desc_fail(desc, MPITOPO_ERR_PARSE,
                             "a fat tree has 4 fields, H;m1,..;w1,..;p1,.., not more");
        f[nf] = body + i;
        flen[nf++] = j - i;
        if (j == len)
            break;
        i = j + 1;
    }
    if (nf != 4)
        return desc_fail(desc, MPITOPO_ERR_PARSE,
                         "a fat tree has 4 fields, H;m1,..;w1,..;p1,.., not %d", nf);
    long long h;
    if (mpitopo__parse_long(f[0], flen[0], LLONG_MIN, LLONG_MAX, &h) != 0)
        return desc_fail(desc, MPITOPO_ERR_PARSE, "levels = \"%.*s\" is not an integer",
                         (int)(flen[0] > 40 ? 40 : flen[0]), f[0]);
    if (h < 1 || h > MPITOPO_NET_MAX_LEVELS)
        return desc_fail(desc, MPITOPO_ERR_RANGE, "levels = %lld must be in [1, %d]", h,
                         MPITOPO_NET_MAX_LEVELS);
    static const char *const names[3] = {"m", "w", "p"};
    int64_t *dst[3] = {net->m, net->w, net->p};
    for (int k = 0; k < 3; k++) {
        int n;
        int rc = parse_list(desc, names[k], f[k + 1], flen[k + 1], ',', NET_LIMIT, dst[k] + 1,
                            MPITOPO_NET_MAX_LEVELS, &n);
        if (rc != MPITOPO_SUCCESS)
            return rc;
        if (n != h)
            return desc_fail(desc, MPITOPO_ERR_PARSE, "%s has %d entries, not levels = %lld",
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
    int rc = parse_list(desc, "ktree", body, len, ',', NET_LIMIT, kn, 2, &n);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    if (n != 2)
        return desc_fail(desc, MPITOPO_ERR_PARSE, "a K-ary N-tree is ktree:K,N");
    if (kn[1] > MPITOPO_NET_MAX_LEVELS)
        return desc_fail(desc, MPITOPO_ERR_RANGE, "N = %lld must be in [1, %d]",
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

/* ---------------------------------------------------------------- dragonfly */

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
    int rc = parse_list(desc, "dragonfly", body, len, ',', NET_LIMIT, v, 4, &n);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    if (n < 3)
        return desc_fail(desc, MPITOPO_ERR_PARSE, "a dragonfly is dragonfly:P,A,H[,G]");
    int64_t ports = mul_max(v[1], v[2], NET_LIMIT);
    if (ports < 0 || ports >= NET_LIMIT)
        return desc_fail(desc, MPITOPO_ERR_RANGE, "A*H exceeds %lld", NET_LIMIT - 1);
    int64_t g = n == 4 ? v[3] : ports + 1;
    if (g < 2 || g > ports + 1)
        return desc_fail(desc, MPITOPO_ERR_RANGE,
                         "G = %lld groups must be in [2, A*H+1 = %lld] (one global link between "
                         "every two groups)", (long long)g, (long long)(ports + 1));
    int64_t routers = mul_max(g, v[1], NET_LIMIT), nodes = routers < 0 ? -1 : mul_max(routers, v[0], NET_LIMIT);
    int64_t local = routers < 0 ? -1 : mul_max(routers, v[1] - 1, NET_CHANNEL_LIMIT);
    int64_t global = mul_max(g, g - 1, NET_CHANNEL_LIMIT);
    if (nodes < 0 || local < 0 || global < 0)
        return desc_fail(desc, MPITOPO_ERR_RANGE, "more than %lld nodes", NET_LIMIT);
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

/* ---------------------------------------------------------------- parser */

/* Trailing ":key=value" options: cap=X (all kinds), nodes=N (fat trees). */
static int parse_options(const char *desc, const char *s, mpitopo_network_t *net, int64_t *nodes)
{
    if (!*s)
        return desc_fail(desc, MPITOPO_ERR_PARSE, "empty option after ':'");
    while (*s) {
        const char *end = strchr(s, ':');
        size_t len = end ? (size_t)(end - s) : strlen(s);
        if (len > 4 && strncmp(s, "cap=", 4) == 0) {
            double c;
            if (mpitopo__parse_double(s + 4, len - 4, &c) != 0)
                return desc_fail(desc, MPITOPO_ERR_PARSE, "cap = \"%.*s\" is not a number",
                                 (int)(len - 4 > 40 ? 40 : len - 4), s + 4);
            if (!(c > 0) || !isfinite(c))
                return desc_fail(desc, MPITOPO_ERR_RANGE, "cap = %g must be positive and finite",
                                 c);
            net->capacity = c;
        } else if (len > 6 && strncmp(s, "nodes=", 6) == 0 && net->kind == MPITOPO__NET_FATTREE) {
            long long v;
            if (mpitopo__parse_long(s + 6, len - 6, LLONG_MIN, LLONG_MAX, &v) != 0)
                return desc_fail(desc, MPITOPO_ERR_PARSE, "nodes = \"%.*s\" is not an integer",
                                 (int)(len - 6 > 40 ? 40 : len - 6), s + 6);
            if (v < 1 || v > NET_LIMIT)
                return desc_fail(desc, MPITOPO_ERR_RANGE, "nodes = %lld must be in [1, %lld]", v,
                                 NET_LIMIT);
            *nodes = v;
        } else {
            return desc_fail(desc, MPITOPO_ERR_PARSE, "unknown option \"%.*s\" (cap=X%s)",
                             (int)(len > 40 ? 40 : len), s,
                             net->kind == MPITOPO__NET_FATTREE ? ", nodes=N" : "");
        }
        s += len + (end != NULL);
        if (end && !*s)
            return desc_fail(desc, MPITOPO_ERR_PARSE, "empty option after ':'");
    }
    return MPITOPO_SUCCESS;
}

int mpitopo__network_is_description(const char *s)
{
    static const char *const kinds[] = {"torus", "mesh", "fattree", "ktree",
                                        "dragonfly", "gpc", "hhc", "fabric"};
    size_t len = strcspn(s, ":");
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
        if (len == strlen(kinds[i]) && strncmp(s, kinds[i], len) == 0)
            return 1;
    return 0;
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
            return desc_fail(desc, MPITOPO_ERR_PARSE, "gpc takes only the option cap=X");
    }
    const char *colon = strchr(s, ':');
    if (!colon)
        return desc_fail(desc, MPITOPO_ERR_PARSE,
                         "expected KIND:PARAMETERS, KIND one of torus, mesh, fattree, ktree, "
                         "dragonfly, hhc, fabric, gpc");
    size_t klen = (size_t)(colon - s);
    const char *body = colon + 1, *opt = strchr(body, ':');
    size_t blen = opt ? (size_t)(opt - body) : strlen(body);
    if (blen == 0)
        return desc_fail(desc, MPITOPO_ERR_PARSE, "no parameters after \"%.*s:\"", (int)klen, s);
    int rc;
    if (klen == 5 && strncmp(s, "torus", 5) == 0) {
        net->torus = 1;
        rc = parse_grid(desc, body, blen, net);
    } else if (klen == 4 && strncmp(s, "mesh", 4) == 0) {
        rc = parse_grid(desc, body, blen, net);
    } else if (klen == 7 && strncmp(s, "fattree", 7) == 0) {
        rc = parse_fattree(desc, body, blen, net);
    } else if (klen == 5 && strncmp(s, "ktree", 5) == 0) {
        rc = parse_ktree(desc, body, blen, net);
    } else if (klen == 9 && strncmp(s, "dragonfly", 9) == 0) {
        rc = parse_dragonfly(desc, body, blen, net);
    } else if (klen == 3 && strncmp(s, "hhc", 3) == 0) {
        net->kind = MPITOPO__NET_HHC;
        rc = mpitopo__hhc_parse(desc, body, blen, net);
    } else if (klen == 6 && strncmp(s, "fabric", 6) == 0) {
        rc = mpitopo__fabric_parse(desc, body, blen, net);
    } else {
        return desc_fail(desc, MPITOPO_ERR_PARSE,
                         "kind = \"%.*s\" is not torus, mesh, fattree, ktree, dragonfly, hhc, "
                         "fabric or gpc",
                         (int)(klen > 40 ? 40 : klen), s);
    }
    int64_t nodes = 0;
    if (rc == MPITOPO_SUCCESS && opt)
        rc = parse_options(desc, opt + 1, net, &nodes);
    if (rc == MPITOPO_SUCCESS && s == expanded && desc[3] == ':')
        rc = parse_options(desc, desc + 4, net, &nodes);
    if (rc == MPITOPO_SUCCESS && net->kind == MPITOPO__NET_FATTREE)
        rc = tree_setup(desc, net, nodes);
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
    if (net->kind == MPITOPO__NET_HHC)
        mpitopo__hhc_free(net);
    else if (net->kind == MPITOPO__NET_FABRIC)
        mpitopo__fabric_free(net);
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
    switch (net->kind) {
    case MPITOPO__NET_GRID:
        return grid_route(net, src, dst, ch);
    case MPITOPO__NET_FATTREE:
        return tree_route(net, src, dst, ch);
    case MPITOPO__NET_DRAGONFLY:
        return df_route(net, src, dst, ch);
    case MPITOPO__NET_HHC:
        return mpitopo__hhc_route(net, src, dst, ch);
    default:
        return mpitopo__fabric_route(net, src, dst, ch);
    }
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
    int64_t buf[2 * MPITOPO_NET_MAX_LEVELS];
    if (network->kind != MPITOPO__NET_GRID || maxlen >= network->max_route) {
        /* Too little room: through buf, or a block as long as the longest
         * route (a fabric's routes can be longer than buf). */
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
            return MPITOPO_FAIL(MPITOPO_ERR_RANGE, "maxlen = %d is less than the route's %d",
                                maxlen, n);
        *len = n;
        return MPITOPO_SUCCESS;
    }
    /* A grid route longer than the caller's room: measure it first. */
    int n = 0;
    for (int d = 0; d < network->ndims; d++) {
        int64_t k = network->dims[d], st = network->stride[d];
        int64_t diff = (dst / st % k - src / st % k + k) % k;
        n += (int)(network->torus ? (diff <= k - diff ? diff : k - diff)
                                  : (dst / st % k > src / st % k ? diff : (k - diff) % k));
    }
    if (n > maxlen)
        return MPITOPO_FAIL(MPITOPO_ERR_RANGE, "maxlen = %d is less than the route's %d", maxlen,
                            n);
    *len = grid_route(network, src, dst, channels);
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
        if (network->kind == MPITOPO__NET_GRID)
            grid_name(network, channel, name, size);
        else if (network->kind == MPITOPO__NET_FATTREE)
            tree_name(network, channel, name, size);
        else if (network->kind == MPITOPO__NET_DRAGONFLY)
            df_name(network, channel, name, size);
        else if (network->kind == MPITOPO__NET_HHC)
            mpitopo__hhc_channel_name(network, channel, name, size);
        else
            mpitopo__fabric_channel_name(network, channel, name, size);
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
    if (network->kind == MPITOPO__NET_HHC)
        mpitopo__hhc_node_name(network, node, name, size);
    else if (network->kind == MPITOPO__NET_FABRIC)
        mpitopo__fabric_node_name(network, node, name, size);
    else
        snprintf(name, size, "n%d", node);
    return MPITOPO_SUCCESS;
}

/* ---------------------------------------------------------------- groups */

/*
 * The groups of end nodes that form a tree above them, top-down: a fat
 * tree's subtrees (level l of the tree holds the nodes d with the same
 * d / M[l]; levels holding every node are left out), a dragonfly's groups
 * and routers, and whatever the kinds read from files or built on cubes
 * say. Torus and mesh have none: no subset of their nodes shares links.
 */
static int group_levels(const mpitopo_network_t *net, int64_t *size, const char **names)
{
    static const char *const tree_names[MPITOPO_NET_MAX_LEVELS + 1] = {
        "", "switch", "switch2", "switch3", "switch4", "switch5", "switch6", "switch7", "switch8",
        "switch9", "switch10", "switch11", "switch12", "switch13", "switch14", "switch15",
        "switch16"};
    int n = 0;
    switch (net->kind) {
    case MPITOPO__NET_FATTREE:
        for (int l = net->h; l >= 1; l--)
            if (net->M[l] < net->nnodes && net->M[l] > 1) {
                size[n] = net->M[l];
                names[n++] = tree_names[l];
            }
        return n;
    case MPITOPO__NET_DRAGONFLY:
        if (net->df_g > 1) {
            size[n] = net->df_p * net->df_a;
            names[n++] = "group";
        }
        if (net->df_a > 1 && net->df_p > 1) {
            size[n] = net->df_p;
            names[n++] = "router";
        }
        return n;
    case MPITOPO__NET_HHC:
        return mpitopo__hhc_groups(net, size, names);
    case MPITOPO__NET_FABRIC:
        return mpitopo__fabric_groups(net, size, names);
    default:
        return 0;
    }
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
    *group = size[level] > 0 ? node / size[level]
             : network->kind == MPITOPO__NET_HHC
                 ? mpitopo__hhc_group(network, level, node)
                 : mpitopo__fabric_group(network, level, node);
    if (name)
        *name = names[level];
    return MPITOPO_SUCCESS;
}
