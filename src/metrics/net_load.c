/* Channel loads of a partial mapping, one process at a time, and the
 * congestion metrics of thesis 3.2.3 computed from them. */
#include "network/network_internal.h"

#include <math.h>
#include <string.h>

struct mpitopo_network_load {
    const mpitopo_network_t *net;
    const mpitopo_pattern_t *pattern;
    int nprocs;
    int *node;         /* end node of each process, -1 when not placed */
    int64_t *in_off;   /* in-edges (positive bytes, no self edge), CSR by destination */
    int *in_src;
    double *in_bytes;
    double *load;      /* bytes per channel */
    int64_t *npairs;   /* communicating pairs per channel: a load is 0 exactly when this is */
    int64_t *route;    /* room for one route */
    double hop_bytes;
    double dilation;
};

void mpitopo_network_load_destroy(mpitopo_network_load_t **load)
{
    if (!load || !*load)
        return;
    mpitopo_network_load_t *l = *load;
    mpitopo__free(l->node);
    mpitopo__free(l->in_off);
    mpitopo__free(l->in_src);
    mpitopo__free(l->in_bytes);
    mpitopo__free(l->load);
    mpitopo__free(l->npairs);
    mpitopo__free(l->route);
    mpitopo__free(l);
    *load = NULL;
}

/* The transpose of the pattern, keeping the edges that can carry traffic. */
static int build_in_edges(mpitopo_network_load_t *l)
{
    int n = l->nprocs;
    l->in_off = mpitopo__calloc((size_t)n + 1, sizeof *l->in_off);
    if (!l->in_off)
        return MPITOPO_NOMEM("the in-edge offsets");
    for (int p = 0; p < n; p++) {
        int deg;
        const int *dst;
        const double *bytes;
        mpitopo_pattern_out_edges(l->pattern, p, &deg, &dst, &bytes, NULL);
        for (int e = 0; e < deg; e++)
            if (dst[e] != p && bytes[e] > 0)
                l->in_off[dst[e] + 1]++;
    }
    for (int p = 0; p < n; p++)
        l->in_off[p + 1] += l->in_off[p];
    size_t ne = (size_t)l->in_off[n];
    l->in_src = mpitopo__malloc_array(ne ? ne : 1, sizeof *l->in_src);
    l->in_bytes = mpitopo__malloc_array(ne ? ne : 1, sizeof *l->in_bytes);
    int64_t *fill = mpitopo__malloc_array((size_t)n, sizeof *fill);
    if (!l->in_src || !l->in_bytes || !fill) {
        mpitopo__free(fill);
        return MPITOPO_NOMEM("the in-edges");
    }
    memcpy(fill, l->in_off, (size_t)n * sizeof *fill);
    for (int p = 0; p < n; p++) {
        int deg;
        const int *dst;
        const double *bytes;
        mpitopo_pattern_out_edges(l->pattern, p, &deg, &dst, &bytes, NULL);
        for (int e = 0; e < deg; e++)
            if (dst[e] != p && bytes[e] > 0) {
                int64_t at = fill[dst[e]]++;
                l->in_src[at] = p;
                l->in_bytes[at] = bytes[e];
            }
    }
    mpitopo__free(fill);
    return MPITOPO_SUCCESS;
}

/* The structure, with the in-edges only when processes come one at a time. */
static int load_new(const mpitopo_network_t *network, const mpitopo_pattern_t *pattern,
                    int in_edges, mpitopo_network_load_t **load)
{
    mpitopo_network_load_t *l = mpitopo__calloc(1, sizeof *l);
    if (!l)
        return MPITOPO_NOMEM("the load structure");
    l->net = network;
    l->pattern = pattern;
    mpitopo_pattern_nprocs(pattern, &l->nprocs);
    size_t nch = (size_t)network->nchannels;
    l->node = mpitopo__malloc_array((size_t)l->nprocs, sizeof *l->node);
    l->load = mpitopo__calloc(nch ? nch : 1, sizeof *l->load);
    l->npairs = mpitopo__calloc(nch ? nch : 1, sizeof *l->npairs);
    l->route = mpitopo__malloc_array((size_t)network->max_route + 1, sizeof *l->route);
    int rc = MPITOPO_SUCCESS;
    if (!l->node || !l->load || !l->npairs || !l->route)
        rc = MPITOPO_NOMEM("the channel loads");
    else if (in_edges)
        rc = build_in_edges(l);
    if (rc != MPITOPO_SUCCESS) {
        mpitopo_network_load_destroy(&l);
        return rc;
    }
    for (int p = 0; p < l->nprocs; p++)
        l->node[p] = -1;
    *load = l;
    return MPITOPO_SUCCESS;
}

int mpitopo_network_load_create(const mpitopo_network_t *network, const mpitopo_pattern_t *pattern,
                                mpitopo_network_load_t **load)
{
    if (!load)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "load is NULL");
    *load = NULL;
    if (!network || !pattern)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "%s is NULL", !network ? "network" : "pattern");
    int rc = load_new(network, pattern, 1, load);
    if (rc != MPITOPO_SUCCESS)
        return MPITOPO_FAIL_RESTATE(rc, __func__, "network of %lld channels",
                                      (long long)network->nchannels);
    return rc;
}

/* Add (sign +1) or remove (-1) the traffic of one pair along its route. */
static void add_route(mpitopo_network_load_t *l, const int64_t *route, int n, double bytes,
                      int sign)
{
    for (int i = 0; i < n; i++) {
        int64_t c = route[i];
        l->npairs[c] += sign;
        /* Exactly 0 once the last pair leaves, whatever the rounding. */
        l->load[c] = l->npairs[c] == 0 ? 0.0 : l->load[c] + sign * bytes;
    }
    l->hop_bytes += sign * bytes * n;
    l->dilation += sign * n;
}

/* Add (sign +1) or remove (-1) the traffic of src -> dst. */
static void add_pair(mpitopo_network_load_t *l, int src, int dst, double bytes, int sign)
{
    if (src == dst)
        return;
    add_route(l, l->route, mpitopo__network_route(l->net, src, dst, l->route), bytes, sign);
}

/* Add or remove the traffic between proc (on node) and every placed process. */
static void add_proc(mpitopo_network_load_t *l, int proc, int node, int sign)
{
    int deg;
    const int *dst;
    const double *bytes;
    mpitopo_pattern_out_edges(l->pattern, proc, &deg, &dst, &bytes, NULL);
    for (int e = 0; e < deg; e++)
        if (dst[e] != proc && bytes[e] > 0 && l->node[dst[e]] >= 0)
            add_pair(l, node, l->node[dst[e]], bytes[e], sign);
    for (int64_t e = l->in_off[proc]; e < l->in_off[proc + 1]; e++)
        if (l->node[l->in_src[e]] >= 0)
            add_pair(l, l->node[l->in_src[e]], node, l->in_bytes[e], sign);
}

int mpitopo_network_load_place(mpitopo_network_load_t *load, int proc, int node)
{
    if (!load)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "load is NULL");
    if (proc < 0 || proc >= load->nprocs)
        return MPITOPO_FAIL(MPITOPO_ERR_RANGE, "proc = %d is not in [0, %d)", proc, load->nprocs);
    if (node < 0 || node >= load->net->nnodes)
        return MPITOPO_FAIL(MPITOPO_ERR_RANGE, "node = %d is not in [0, %d)", node,
                            load->net->nnodes);
    if (load->node[proc] >= 0)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "proc = %d is already placed (on node %d)", proc,
                            load->node[proc]);
    add_proc(load, proc, node, +1);
    load->node[proc] = node;
    return MPITOPO_SUCCESS;
}

int mpitopo_network_load_unplace(mpitopo_network_load_t *load, int proc)
{
    if (!load)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "load is NULL");
    if (proc < 0 || proc >= load->nprocs)
        return MPITOPO_FAIL(MPITOPO_ERR_RANGE, "proc = %d is not in [0, %d)", proc, load->nprocs);
    if (load->node[proc] < 0)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "proc = %d is not placed", proc);
    int node = load->node[proc];
    load->node[proc] = -1;
    add_proc(load, proc, node, -1);
    if (load->dilation == 0) /* no pair left: no rounding residue either */
        load->hop_bytes = 0.0;
    return MPITOPO_SUCCESS;
}

int mpitopo_network_load_channel(const mpitopo_network_load_t *load, int64_t channel,
                                 double *bytes)
{
    if (!load || !bytes)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "%s is NULL", !load ? "load" : "bytes");
    if (channel < 0 || channel >= load->net->nchannels)
        return MPITOPO_FAIL(MPITOPO_ERR_RANGE, "channel = %lld is not in [0, %lld)",
                            (long long)channel, (long long)load->net->nchannels);
    *bytes = load->load[channel];
    return MPITOPO_SUCCESS;
}

int mpitopo_network_load_metrics(const mpitopo_network_load_t *load, const double *weights,
                                 const mpitopo_network_metrics_t *reference,
                                 mpitopo_network_metrics_t *metrics)
{
    if (!load || !metrics)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "%s is NULL", !load ? "load" : "metrics");
    static const double ones[4] = {1, 1, 1, 1};
    if (!weights)
        weights = ones;
    for (int i = 0; i < 4; i++)
        if (!isfinite(weights[i]))
            return MPITOPO_FAIL(MPITOPO_ERR_ARG, "weights[%d] = %g is not finite", i, weights[i]);
    const mpitopo_network_t *net = load->net;
    double sum = 0, max = 0;
    int64_t nz = 0;
    for (int64_t c = 0; c < net->nchannels; c++)
        if (load->load[c] > 0) {
            double x = load->load[c] / mpitopo__network_capacity(net, c);
            sum += x;
            max = x > max ? x : max;
            nz++;
        }
    double avg = nz ? sum / (double)nz : 0.0, var = 0;
    /* Two passes: the variance of nearly equal loads must not cancel out. */
    for (int64_t c = 0; c < net->nchannels; c++)
        if (load->load[c] > 0) {
            double d = load->load[c] / mpitopo__network_capacity(net, c) - avg;
            var += d * d;
        }
    mpitopo_network_metrics_t m = {0};
    m.hop_bytes = load->hop_bytes;
    m.dilation = load->dilation;
    m.max_congestion = max;
    m.nzca = avg;
    m.nzcv = nz ? var / (double)nz : 0.0;
    m.busy_channels = nz;
    double term[4] = {m.hop_bytes, m.max_congestion, m.nzca, m.nzcv};
    if (reference) {
        double ref[4] = {reference->hop_bytes, reference->max_congestion, reference->nzca,
                         reference->nzcv};
        for (int i = 0; i < 4; i++)
            if (ref[i] != 0)
                term[i] /= ref[i];
    }
    m.hybrid = 0;
    for (int i = 0; i < 4; i++)
        m.hybrid += weights[i] * term[i];
    *metrics = m;
    return MPITOPO_SUCCESS;
}

/* A min-heap of (congestion, channel) keeping the k most congested:
 * the root is the least of them (ties: the larger channel number). */
static int worse(const double *x, const int64_t *c, int64_t i, int64_t j)
{
    return x[i] < x[j] || (x[i] == x[j] && c[i] > c[j]);
}

static void swap_entries(double *x, int64_t *c, int64_t i, int64_t j)
{
    double tx = x[i];
    x[i] = x[j];
    x[j] = tx;
    int64_t tc = c[i];
    c[i] = c[j];
    c[j] = tc;
}

static void sift_down(double *x, int64_t *c, int64_t n, int64_t i)
{
    for (;;) {
        int64_t a = 2 * i + 1, b = a + 1, s = i;
        if (a < n && worse(x, c, a, s))
            s = a;
        if (b < n && worse(x, c, b, s))
            s = b;
        if (s == i)
            return;
        swap_entries(x, c, i, s);
        i = s;
    }
}

int mpitopo_network_load_top(const mpitopo_network_load_t *load, int k, int64_t *channels,
                             double *congestion, int *count)
{
    if (!load || !count || (k > 0 && !channels))
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "%s is NULL",
                            !load ? "load" : !count ? "count" : "channels");
    if (k < 0)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "k = %d must be >= 0", k);
    *count = 0;
    if (k == 0)
        return MPITOPO_SUCCESS;
    double *x = mpitopo__malloc_array((size_t)k, sizeof *x);
    int64_t *c = mpitopo__malloc_array((size_t)k, sizeof *c);
    if (!x || !c) {
        mpitopo__free(x);
        mpitopo__free(c);
        return MPITOPO_NOMEM("the most loaded channels");
    }
    int64_t n = 0;
    for (int64_t ch = 0; ch < load->net->nchannels; ch++) {
        if (!(load->load[ch] > 0))
            continue;
        double v = load->load[ch] / mpitopo__network_capacity(load->net, ch);
        if (n < k) {
            /* Insert, sifting up. */
            int64_t i = n++;
            x[i] = v;
            c[i] = ch;
            for (; i > 0 && worse(x, c, i, (i - 1) / 2); i = (i - 1) / 2)
                swap_entries(x, c, i, (i - 1) / 2);
        } else if (v > x[0]) {
            x[0] = v;
            c[0] = ch;
            sift_down(x, c, n, 0);
        }
    }
    /* Pop the least to the end: most congested first. */
    for (int64_t end = n - 1; end >= 0; end--) {
        channels[end] = c[0];
        if (congestion)
            congestion[end] = x[0];
        x[0] = x[end];
        c[0] = c[end];
        sift_down(x, c, end, 0);
    }
    *count = (int)n;
    mpitopo__free(x);
    mpitopo__free(c);
    return MPITOPO_SUCCESS;
}

/* Routes from recent source nodes, for mpitopo_network_evaluate: slot b
 * holds the route to end node b from end node from[b] (-1: none yet).
 * Computing a route is most of an evaluation (a fat-tree route costs a few
 * dozen integer divisions, a channel update a few additions), and the
 * processes of one node under a block-like placement, or the peers of one
 * process on one node, ask for the same routes again and again. The cache
 * changes no sum: the metrics are bit for bit those computed without it. */
typedef struct route_cache {
    int *from;
    int *len;
    int64_t *ch; /* nnodes x max_route */
} route_cache_t;

/* The cache costs nnodes * max_route channels: kept only while that stays
 * within a few times the network's channels (a long ring's routes would
 * not), so memory stays O(links). */
static int cache_fits(const mpitopo_network_t *net)
{
    return (int64_t)net->nnodes * net->max_route <= 4 * net->nchannels + 4096;
}

/* The number of end nodes holding a process (mark has nnodes entries, all
 * -1 on entry). */
static int nodes_used(const int *mapping, int nprocs, int *mark)
{
    int used = 0;
    for (int p = 0; p < nprocs; p++)
        if (mark[mapping[p]] < 0) {
            mark[mapping[p]] = p;
            used++;
        }
    return used;
}

/* *cached: whether the cache is made and worth using for this mapping:
 * when no end node holds two processes, no route can come twice (a process
 * has one edge per peer, and the next process sits elsewhere), and filling
 * the cache only costs. *used: the end nodes holding a process. */
static int cache_new(const mpitopo_network_t *net, const int *mapping, int nprocs,
                     route_cache_t *rc, int *cached, int *used)
{
    size_t n = (size_t)net->nnodes;
    *cached = 0;
    if (!cache_fits(net))
        return MPITOPO_SUCCESS;
    rc->from = mpitopo__malloc_array(n, sizeof *rc->from);
    if (!rc->from)
        return MPITOPO_NOMEM("the route cache");
    for (size_t b = 0; b < n; b++)
        rc->from[b] = -1;
    *used = nodes_used(mapping, nprocs, rc->from);
    if (*used == nprocs)
        return MPITOPO_SUCCESS;
    rc->len = mpitopo__malloc_array(n, sizeof *rc->len);
    rc->ch = mpitopo__malloc_array(n * (size_t)(net->max_route ? net->max_route : 1),
                                   sizeof *rc->ch);
    if (!rc->len || !rc->ch)
        return MPITOPO_NOMEM("the route cache");
    for (size_t b = 0; b < n; b++)
        rc->from[b] = -1;
    *cached = 1;
    return MPITOPO_SUCCESS;
}

static void cache_free(route_cache_t *rc)
{
    mpitopo__free(rc->from);
    mpitopo__free(rc->len);
    mpitopo__free(rc->ch);
}

/* Whether the order in which the pairs are added cannot change the sums:
 * every byte count an integer and all bytes times the longest route below
 * 2^53, so that every partial sum (a channel's load, hop_bytes) is an
 * integer held exactly in a double, whatever the order. */
static int order_free(const mpitopo_pattern_t *pattern, int nprocs, int max_route)
{
    double total = 0;
    for (int p = 0; p < nprocs; p++) {
        int deg;
        const double *bytes;
        mpitopo_pattern_out_edges(pattern, p, &deg, NULL, &bytes, NULL);
        for (int e = 0; e < deg; e++) {
            if (bytes[e] != floor(bytes[e]))
                return 0;
            total += bytes[e];
        }
    }
    return total * (max_route > 1 ? max_route : 1) < 0x1p53;
}

/* The processes sorted by end node (stable), into order[nprocs]: all the
 * processes of a node in a row, so each route from that node is computed
 * once for all of them. count has nnodes + 1 entries. */
static void by_node(const int *mapping, int nprocs, int nnodes, int *count, int *order)
{
    memset(count, 0, ((size_t)nnodes + 1) * sizeof *count);
    for (int p = 0; p < nprocs; p++)
        count[mapping[p] + 1]++;
    for (int b = 0; b < nnodes; b++)
        count[b + 1] += count[b];
    for (int p = 0; p < nprocs; p++)
        order[count[mapping[p]]++] = p;
}

/* add_pair(l, src, dst, bytes, +1), its route taken from the cache. */
static void add_pair_cached(mpitopo_network_load_t *l, route_cache_t *rc, int src, int dst,
                            double bytes)
{
    if (src == dst)
        return;
    int64_t *route = rc->ch + (size_t)dst * (size_t)l->net->max_route;
    if (rc->from[dst] != src) {
        rc->len[dst] = mpitopo__network_route(l->net, src, dst, route);
        rc->from[dst] = src;
    }
    add_route(l, route, rc->len[dst], bytes, +1);
}

int mpitopo_network_evaluate(const mpitopo_network_t *network, const mpitopo_pattern_t *pattern,
                             const int *mapping, const double *weights,
                             const mpitopo_network_metrics_t *reference,
                             mpitopo_network_metrics_t *metrics)
{
    if (!network || !pattern || !mapping || !metrics)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "%s is NULL",
                            !network ? "network" : !pattern ? "pattern" : !mapping ? "mapping"
                                                                                    : "metrics");
    int nprocs;
    mpitopo_pattern_nprocs(pattern, &nprocs);
    for (int p = 0; p < nprocs; p++)
        if (mapping[p] < 0 || mapping[p] >= network->nnodes)
            return MPITOPO_FAIL(MPITOPO_ERR_RANGE, "mapping[%d] = %d is not in [0, %d)", p,
                                mapping[p], network->nnodes);
    mpitopo_network_load_t *l = NULL;
    route_cache_t cache = {NULL, NULL, NULL};
    int cached = 0, used = 0, *order = NULL, *count = NULL;
    int64_t nedges = 0;
    mpitopo_pattern_nedges(pattern, &nedges);
    int rc = load_new(network, pattern, 0, &l);
    if (rc == MPITOPO_SUCCESS)
        rc = cache_new(network, mapping, nprocs, &cache, &cached, &used);
    /* With the cache, and when the order cannot change the result, a dense
     * pattern goes node by node: a route from a node is then computed once
     * per destination node, not once per process (under a scattered
     * placement, rank order asks for each route several times). Dense: a
     * node's edges number at least a quarter of the nodes used, so that
     * they often share a destination node (about 12 % of them at a
     * quarter); sparser patterns would only pay for the scattered reads. */
    if (rc == MPITOPO_SUCCESS && cached && 4.0 * (double)nedges >= (double)used * used &&
        order_free(pattern, nprocs, network->max_route)) {
        order = mpitopo__malloc_array((size_t)nprocs, sizeof *order);
        count = mpitopo__malloc_array((size_t)network->nnodes + 1, sizeof *count);
        if (!order || !count)
            rc = MPITOPO_NOMEM("the node order");
        else
            by_node(mapping, nprocs, network->nnodes, count, order);
    }
    if (rc != MPITOPO_SUCCESS) {
        rc = MPITOPO_FAIL_RESTATE(rc, __func__, "pattern of %d processes", nprocs);
        goto cleanup;
    }
    /* Every process at once: each out-edge once, no in-edge pass needed. */
    for (int p = 0; p < nprocs; p++)
        l->node[p] = mapping[p];
    for (int k = 0; k < nprocs; k++) {
        int p = order ? order[k] : k;
        int deg;
        const int *dst;
        const double *bytes;
        mpitopo_pattern_out_edges(pattern, p, &deg, &dst, &bytes, NULL);
        for (int e = 0; e < deg; e++) {
            if (dst[e] == p || !(bytes[e] > 0))
                continue;
            if (cached)
                add_pair_cached(l, &cache, mapping[p], mapping[dst[e]], bytes[e]);
            else
                add_pair(l, mapping[p], mapping[dst[e]], bytes[e], +1);
        }
    }
    rc = mpitopo_network_load_metrics(l, weights, reference, metrics);
cleanup:
    mpitopo__free(order);
    mpitopo__free(count);
    cache_free(&cache);
    mpitopo_network_load_destroy(&l);
    return rc;
}
