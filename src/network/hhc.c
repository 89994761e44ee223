/*
 * HHC networks: hierarchical hypercubes with centre nodes (M.-H. Ok, "A
 * Process-to-Processor Mapping of HHC Topology in MPI", section 2; issue
 * 16). Everything is arithmetic on the dimension D.
 *
 * Shape. The D-HHC has L = ceil(D/3) levels of cubes. A cube of level j
 * (j = 1..L) has 2^k leaves (k = 3 below the top, t = D - 3(L-1) at the
 * top), the links of a k-cube between them, and a centre node linked to
 * every leaf. The leaves of a level-1 cube are the 2^D bottom nodes; the
 * leaves of a level-j cube (j > 1) are the centres of 2^k cubes of level
 * j-1; the single cube of level L has the topmost centre. So the 3-HHC is
 * one 3-cube and its centre (9 nodes), the 4-HHC two 3-HHCs whose centres
 * and a new centre form the top (19 nodes), the 6-HHC eight 3-HHCs (73).
 *
 * Node IDs. A node is L nibbles, nibble L (the top cube) first: a bottom
 * node has its position in each cube, 0000..0111 (the top nibble below
 * 2^t); the centre of a level-j cube has its nibbles 1..j set to 1000 and
 * keeps the positions above. A node of level l (its l lowest nibbles are
 * 1000) is held here as (l, pos): pos = its nibbles above l, 3 bits each,
 * nibble l+1 lowest.
 *
 * End nodes (every node is one) are numbered in post-order of the tree
 * of centres: the subtrees below the leaves of a cube in the order of
 * their nibble, then its centre. With S_0 = 1 and S_j = 2^k S_(j-1) + 1
 * nodes in the subtree of a level-j node, the node of level l is number
 * sum over i > l of nibble_i S_(i-1), plus S_l - 1.
 *
 * Channels, for j = 1..L: from base_j on, every leaf of a level-j cube (a
 * level j-1 node, by its pos p) has k+2: base_j + p(k+2) + e, for e < k
 * the cube link flipping bit e, e = k the link up to the centre, e = k+1
 * the link down from it.
 *
 * Routing (the paper's section 2.2) from c to d, h the highest nibble where
 * they differ: c climbs to its centres until it is a leaf of the level-h
 * cube, crosses that cube (to its centre when d is it, else flipping the
 * differing bits of nibble h, least significant first), then descends
 * through the centres to d.
 */
#include "network/network_internal.h"

#include <limits.h>
#include <stdio.h>

#define HHC_MAX_DIM 30 /* 31 would exceed 2^31-1 nodes */
#define HHC_MAX_LEVELS ((HHC_MAX_DIM + 2) / 3)
#define HHC_CENTRE 8 /* the nibble 1000 */

/*
 * net->ext points at hhc_dims[D]: the dimension is all an HHC needs, and a
 * network whose options fail after this parse is released without
 * its release, so the HHC allocates nothing.
 */
static const int hhc_dims[HHC_MAX_DIM + 1] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10,
                                              11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
                                              22, 23, 24, 25, 26, 27, 28, 29, 30};

typedef struct hhc {
    int L;
    int k[HHC_MAX_LEVELS + 1];        /* [j]: the dimension of the level-j cubes */
    int64_t S[HHC_MAX_LEVELS + 1];    /* [l]: the nodes of a level-l node's subtree */
    int64_t base[HHC_MAX_LEVELS + 2]; /* [j]: the first channel of the level-j cubes */
} hhc_t;

typedef struct hhc_node {
    int lev;
    int64_t pos;
} hhc_node_t;

/* Every field is defined for every D, those past level L included: the
 * readers index base[j + 1] and k[j] from j = 1, which D = 0 (L = 0) or an
 * optimiser that cannot see D >= 1 would otherwise find unset. */
static void hhc_shape(int D, hhc_t *h)
{
    *h = (hhc_t){0};
    h->L = (D + 2) / 3;
    h->S[0] = 1;
    h->base[1] = 0;
    for (int j = 1; j <= h->L; j++) {
        h->k[j] = j < h->L ? 3 : D - 3 * (h->L - 1);
        h->S[j] = ((int64_t)1 << h->k[j]) * h->S[j - 1] + 1;
        int64_t leaves = (int64_t)1 << (D - 3 * (j - 1));
        h->base[j + 1] = h->base[j] + leaves * (h->k[j] + 2);
    }
}

static void hhc_get(const mpitopo_network_t *net, hhc_t *h)
{
    hhc_shape(*(const int *)net->ext, h);
}

/* Nibble i (1..L) of node x: 0..7, or HHC_CENTRE. */
static int nibble(hhc_node_t x, int i)
{
    return i <= x.lev ? HHC_CENTRE : (int)(x.pos >> (3 * (i - x.lev - 1)) & 7);
}

/* The node numbered r (the post-order above), from the top down. */
static hhc_node_t node_of(const hhc_t *h, int64_t r)
{
    hhc_node_t x = {h->L, 0};
    while (r != h->S[x.lev] - 1) {
        int64_t a = r / h->S[x.lev - 1];
        r -= a * h->S[x.lev - 1];
        x.pos = x.pos * 8 + a;
        x.lev--;
    }
    return x;
}

/* The channel e (see above) of leaf pos of a level-j cube. */
static int64_t channel(const hhc_t *h, int j, int64_t pos, int e)
{
    return h->base[j] + pos * (h->k[j] + 2) + e;
}

/* Move x up to its centre, across bit e of its cube, down to its leaf q. */
static int64_t go_up(const hhc_t *h, hhc_node_t *x)
{
    int j = x->lev + 1;
    int64_t ch = channel(h, j, x->pos, h->k[j]);
    x->lev = j;
    x->pos >>= 3;
    return ch;
}

static int64_t go_across(const hhc_t *h, hhc_node_t *x, int e)
{
    int64_t ch = channel(h, x->lev + 1, x->pos, e);
    x->pos ^= (int64_t)1 << e;
    return ch;
}

static int64_t go_down(const hhc_t *h, hhc_node_t *x, int q)
{
    int j = x->lev;
    x->pos = x->pos * 8 + q;
    x->lev = j - 1;
    return channel(h, j, x->pos, h->k[j] + 1);
}

static int net_route(const mpitopo_network_t *net, int src, int dst, int64_t *ch)
{
    if (src == dst)
        return 0;
    hhc_t h;
    hhc_get(net, &h);
    hhc_node_t c = node_of(&h, src), d = node_of(&h, dst);
    /* The highest nibble where they differ: the level of the lowest cube
     * that holds both, or whose centre one of them is. */
    int top = h.L;
    while (nibble(c, top) == nibble(d, top))
        top--;
    int len = 0;
    if (c.lev < top) {
        while (c.lev < top - 1)
            ch[len++] = go_up(&h, &c);
        if (d.lev == top) {
            ch[len++] = go_up(&h, &c);
        } else {
            int diff = nibble(c, top) ^ nibble(d, top);
            for (int e = 0; e < h.k[top]; e++)
                if (diff >> e & 1)
                    ch[len++] = go_across(&h, &c, e);
        }
    }
    while (c.lev > d.lev)
        ch[len++] = go_down(&h, &c, nibble(d, c.lev));
    return len;
}

/* "0101.1000": the nibbles in binary, the top cube's first. */
static void id_name(const hhc_t *h, hhc_node_t x, char *buf)
{
    char *p = buf;
    for (int i = h->L; i >= 1; i--) {
        int v = nibble(x, i);
        for (int b = 3; b >= 0; b--)
            *p++ = (char)('0' + (v >> b & 1));
        *p++ = i > 1 ? '.' : '\0';
    }
}

static void net_node_name(const mpitopo_network_t *net, int node, char *name, size_t size)
{
    hhc_t h;
    hhc_get(net, &h);
    char buf[5 * HHC_MAX_LEVELS + 1];
    id_name(&h, node_of(&h, node), buf);
    snprintf(name, size, "%s", buf);
}

static void net_channel_name(const mpitopo_network_t *net, int64_t ch, char *name, size_t size)
{
    hhc_t h;
    hhc_get(net, &h);
    int j = 1;
    while (j < h.L && ch >= h.base[j + 1])
        j++;
    int64_t off = ch - h.base[j];
    int e = (int)(off % (h.k[j] + 2));
    hhc_node_t leaf = {j - 1, off / (h.k[j] + 2)}, other = {j, leaf.pos >> 3};
    if (e < h.k[j])
        other = (hhc_node_t){j - 1, leaf.pos ^ ((int64_t)1 << e)};
    char a[5 * HHC_MAX_LEVELS + 1], b[5 * HHC_MAX_LEVELS + 1];
    id_name(&h, leaf, a);
    id_name(&h, other, b);
    int down = e == h.k[j] + 1;
    snprintf(name, size, "%s->%s", down ? b : a, down ? a : b);
}

/* "D": the D-HHC, D in [1, HHC_MAX_DIM]. */
static int net_parse(const char *desc, const char *s, size_t len, mpitopo_network_t *net)
{
    static const char *const fn = "mpitopo_network_from_string";
    long long D;
    if (mpitopo__parse_long(s, len, LLONG_MIN, LLONG_MAX, &D) != 0)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_PARSE, fn,
                               "desc = \"%.200s\": dimension = \"%.*s\" is not an integer (an "
                               "HHC is hhc:D)",
                               desc, (int)(len > 40 ? 40 : len), s);
    if (D < 1 || D > HHC_MAX_DIM)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_RANGE, fn,
                               "desc = \"%.200s\": dimension = %lld must be in [1, %d] (the "
                               "%d-HHC has more than 2^31-1 nodes)",
                               desc, D, HHC_MAX_DIM, HHC_MAX_DIM + 1);
    hhc_t h;
    hhc_shape((int)D, &h);
    net->ext = (void *)&hhc_dims[D];
    net->nnodes = (int)h.S[h.L];
    net->nchannels = h.base[h.L + 1];
    net->max_route = 2 * (h.L - 1) + h.k[h.L];
    return MPITOPO_SUCCESS;
}

static void net_release(mpitopo_network_t *net)
{
    net->ext = NULL;
}

/* Group levels: the subtree below a level-j centre (j = L-1 down to 1),
 * named "hhcJ" (a 3-HHC is "hhc1"): its nodes are a run of S_j consecutive
 * end nodes, labelled by the first of them. The centres above level j
 * (interleaved in post-order between those runs) are groups of their own,
 * labelled by their number. */
static int net_groups(const mpitopo_network_t *net, int64_t *size, const char **names)
{
    static const char *const level_names[HHC_MAX_LEVELS + 1] = {
        "", "hhc1", "hhc2", "hhc3", "hhc4", "hhc5", "hhc6", "hhc7", "hhc8", "hhc9", "hhc10"};
    hhc_t h;
    hhc_get(net, &h);
    int n = 0;
    for (int j = h.L - 1; j >= 1; j--) {
        size[n] = 0; /* labelled by mpitopo__hhc_group */
        names[n++] = level_names[j];
    }
    return n;
}

static int64_t net_group(const mpitopo_network_t *net, int level, int node)
{
    hhc_t h;
    hhc_get(net, &h);
    int j = h.L - 1 - level, lev = h.L;
    int64_t r = node, base = 0;
    /* Down from the top through the subtrees holding the node. */
    while (lev > j) {
        if (r == h.S[lev] - 1)
            return node; /* a centre above level j */
        int64_t a = r / h.S[lev - 1];
        base += a * h.S[lev - 1];
        r -= a * h.S[lev - 1];
        lev--;
    }
    return base;
}

/* ---- the arithmetic of the virtual topology (src/hhc/hhc.c) and of the
 * pattern generator (src/pattern/hhc.c), by end node number ---------------- */

/* The end node number of x (the post-order of the header). */
static int index_of(const hhc_t *h, hhc_node_t x)
{
    int64_t r = h->S[x.lev] - 1;
    for (int i = h->L; i > x.lev; i--)
        r += nibble(x, i) * h->S[i - 1];
    return (int)r;
}

int mpitopo__hhc_nnodes(int D)
{
    if (D < 1 || D > HHC_MAX_DIM)
        return -1;
    hhc_t h;
    hhc_shape(D, &h);
    return (int)h.S[h.L];
}

int mpitopo__hhc_levels(int D)
{
    return (D + 2) / 3;
}

int mpitopo__hhc_cube_dim(int D, int j)
{
    int L = (D + 2) / 3;
    return j < L ? 3 : D - 3 * (L - 1);
}

int mpitopo__hhc_level(int D, int node)
{
    hhc_t h;
    hhc_shape(D, &h);
    return node_of(&h, node).lev;
}

int mpitopo__hhc_parent(int D, int node, int *position)
{
    hhc_t h;
    hhc_shape(D, &h);
    hhc_node_t x = node_of(&h, node);
    if (x.lev == h.L) {
        *position = -1;
        return -1;
    }
    *position = (int)(x.pos & 7);
    x.lev++;
    x.pos >>= 3;
    return index_of(&h, x);
}

int mpitopo__hhc_child(int D, int centre, int q)
{
    hhc_t h;
    hhc_shape(D, &h);
    hhc_node_t x = node_of(&h, centre);
    x.pos = x.pos * 8 + q;
    x.lev--;
    return index_of(&h, x);
}

int64_t mpitopo__hhc_id(int D, int node)
{
    hhc_t h;
    hhc_shape(D, &h);
    hhc_node_t x = node_of(&h, node);
    int64_t id = 0;
    for (int i = h.L; i >= 1; i--)
        id = id << 4 | nibble(x, i);
    return id;
}

int mpitopo__hhc_node_of_id(int D, int64_t id)
{
    hhc_t h;
    hhc_shape(D, &h);
    if (id < 0 || id >> (4 * h.L) != 0)
        return -1;
    /* Nibbles 1..lev are 1000, those above are positions (the top one
     * below 2^t): anything else names no node. */
    hhc_node_t x = {0, 0};
    while (x.lev < h.L && (id >> (4 * x.lev) & 15) == HHC_CENTRE)
        x.lev++;
    for (int i = h.L; i > x.lev; i--) {
        int v = (int)(id >> (4 * (i - 1)) & 15);
        if (v >= 1 << h.k[i])
            return -1;
        x.pos = x.pos * 8 + v;
    }
    return index_of(&h, x);
}

void mpitopo__hhc_id_string(int D, int node, char *name, size_t size)
{
    hhc_t h;
    hhc_shape(D, &h);
    char buf[5 * HHC_MAX_LEVELS + 1];
    id_name(&h, node_of(&h, node), buf);
    snprintf(name, size, "%s", buf);
}

int mpitopo__hhc_id_parse(int D, const char *s, int64_t *id)
{
    int L = (D + 2) / 3;
    int64_t v = 0;
    for (int i = 0; i < L; i++) {
        for (int b = 0; b < 4; b++, s++) {
            if (*s != '0' && *s != '1')
                return -1;
            v = v << 1 | (*s - '0');
        }
        if (*s != (i + 1 < L ? '.' : '\0'))
            return -1;
        s += i + 1 < L;
    }
    *id = v;
    return mpitopo__hhc_node_of_id(D, v) < 0 ? -1 : 0;
}

int mpitopo__hhc_path(int D, int src, int dst, int *nodes)
{
    hhc_t h;
    hhc_shape(D, &h);
    if (src == dst)
        return 0;
    hhc_node_t c = node_of(&h, src), d = node_of(&h, dst);
    int top = h.L, len = 0;
    while (nibble(c, top) == nibble(d, top))
        top--;
    if (c.lev < top) {
        while (c.lev < top - 1) {
            go_up(&h, &c);
            nodes[len++] = index_of(&h, c);
        }
        if (d.lev == top) {
            go_up(&h, &c);
            nodes[len++] = index_of(&h, c);
        } else {
            int diff = nibble(c, top) ^ nibble(d, top);
            for (int e = 0; e < h.k[top]; e++)
                if (diff >> e & 1) {
                    go_across(&h, &c, e);
                    nodes[len++] = index_of(&h, c);
                }
        }
    }
    while (c.lev > d.lev) {
        go_down(&h, &c, nibble(d, c.lev));
        nodes[len++] = index_of(&h, c);
    }
    return len;
}

int mpitopo__hhc_max_path(int D)
{
    int L = (D + 2) / 3;
    return 2 * (L - 1) + mpitopo__hhc_cube_dim(D, L);
}

const mpitopo__net_ops_t mpitopo__net_hhc_ops = {
    .name = "hhc", .kind = MPITOPO__NET_HHC, .parse = net_parse, .route = net_route,
    .channel_name = net_channel_name, .node_name = net_node_name, .groups = net_groups,
    .group = net_group, .release = net_release};
