/* HHC networks ("hhc:D", M.-H. Ok, "A Process-to-Processor Mapping of HHC
 * Topology in MPI", section 2): sizes by hand; the end-node
 * numbering against a post-order enumeration of node IDs written here;
 * the links against the adjacency rule of the IDs; every route of the
 * small HHCs against a walk that applies the paper's routing rule one hop
 * at a time on the IDs; metrics by hand; bad descriptions. */
#include "unit.h"

#include <math.h>
#include <stdio.h>

#define MAXL 10     /* levels of hhc:30 */
#define CENTRE 8    /* the nibble 1000 */
#define NAMELEN 64

/* ---------------------------------------------------------------- the model */

/* A node ID: nibbles n[1..L], n[1] the lowest (the bottom cube's). */
typedef struct id {
    int n[MAXL + 1];
} nid_t;

typedef struct model {
    int D, L;
    int nnodes;
    nid_t *ids; /* in end-node order */
} model_t;

/* The dimension of the cubes of level j (1..L). */
static int cube_dim(const model_t *m, int j)
{
    return j < m->L ? 3 : m->D - 3 * (m->L - 1);
}

static void id_format(const model_t *m, const nid_t *x, char *buf)
{
    char *p = buf;
    for (int i = m->L; i >= 1; i--) {
        p += sprintf(p, "%d%d%d%d", x->n[i] >> 3 & 1, x->n[i] >> 2 & 1, x->n[i] >> 1 & 1,
                     x->n[i] & 1);
        if (i > 1)
            *p++ = '.';
    }
    *p = 0;
}

/* The subtree of the level-j node whose nibbles above j are set in x, in
 * post-order: the subtrees of its cube's leaves by nibble, then itself. */
static void enumerate(model_t *m, int j, nid_t x)
{
    if (j > 0) {
        for (int q = 0; q < 1 << cube_dim(m, j); q++) {
            x.n[j] = q;
            enumerate(m, j - 1, x);
        }
        for (int i = 1; i <= j; i++)
            x.n[i] = CENTRE;
    }
    m->ids[m->nnodes++] = x;
}

static void model_build(model_t *m, int D)
{
    m->D = D;
    m->L = (D + 2) / 3;
    m->nnodes = 0;
    m->ids = calloc((size_t)3 << D, sizeof *m->ids);
    nid_t x;
    memset(&x, 0, sizeof x);
    enumerate(m, m->L, x);
}

/* The ID named "dddd.dddd...", L nibbles in binary. */
static void id_parse(const model_t *m, const char *name, nid_t *x)
{
    assert_int_equal(strlen(name), 5 * m->L - 1);
    for (int i = 0; i < m->L; i++) {
        x->n[m->L - i] = 0;
        for (int b = 0; b < 4; b++)
            x->n[m->L - i] = 2 * x->n[m->L - i] + (name[5 * i + b] == '1');
    }
}

static int model_find(const model_t *m, const char *name)
{
    char buf[NAMELEN];
    for (int v = 0; v < m->nnodes; v++) {
        id_format(m, &m->ids[v], buf);
        if (strcmp(buf, name) == 0)
            return v;
    }
    fail_msg("hhc:%d: no node is named \"%s\"", m->D, name);
    return -1;
}

/* The links: two nodes equal above nibble j, both 1000 below it, and at j
 * two positions one bit apart (a cube link) or a position and 1000 (a
 * leaf and its centre). */
static int adjacent(const model_t *m, const nid_t *u, const nid_t *v)
{
    for (int j = 1; j <= m->L; j++) {
        int ok = 1;
        for (int i = j + 1; i <= m->L; i++)
            ok &= u->n[i] == v->n[i];
        for (int i = 1; i < j; i++)
            ok &= u->n[i] == CENTRE && v->n[i] == CENTRE;
        int a = u->n[j], b = v->n[j];
        if (!ok || a == b)
            continue;
        if ((a == CENTRE) != (b == CENTRE))
            return 1;
        if (a != CENTRE && b != CENTRE && ((a ^ b) & ((a ^ b) - 1)) == 0)
            return 1;
    }
    return 0;
}

/*
 * One hop of the paper's routing (section 2.2) from cur towards dst. The
 * current level is the cube where cur is a leaf: its lowest nibble that is
 * not 1000 ("this nibble"). When dst differs above it, go to the centre of
 * the current level. When it differs at it, intra-cube routing: to the
 * centre if dst is it, else flip the least significant differing bit. When
 * this nibble corresponds, the lower level becomes current: from its
 * centre, cur, straight to dst's nibble there.
 */
static nid_t step(const model_t *m, nid_t cur, const nid_t *dst)
{
    int h = m->L;
    while (cur.n[h] == dst->n[h])
        h--;
    int p = 1;
    while (p <= m->L && cur.n[p] == CENTRE)
        p++;
    if (h > p) {
        cur.n[p] = CENTRE;
    } else if (h == p) {
        int diff = cur.n[p] ^ dst->n[p];
        cur.n[p] = dst->n[p] == CENTRE ? CENTRE : cur.n[p] ^ (diff & -diff);
    } else {
        cur.n[h] = dst->n[h];
    }
    return cur;
}

/* ---------------------------------------------------------------- helpers */

/* The ends of a channel named "A->B". */
static void ends(const char *name, char *from, char *to)
{
    const char *arrow = strstr(name, "->");
    if (!arrow)
        fail_msg("channel name \"%s\" has no \"->\"", name);
    size_t n = (size_t)(arrow - name);
    memcpy(from, name, n);
    from[n] = 0;
    snprintf(to, NAMELEN, "%s", arrow + 2);
}

static mpitopo_network_t *hhc(int D)
{
    char desc[32];
    snprintf(desc, sizeof desc, "hhc:%d", D);
    mpitopo_network_t *net;
    OK(mpitopo_network_from_string(desc, &net));
    return net;
}

/* ---------------------------------------------------------------- tests */

static void test_sizes(void **state)
{
    (void)state;
    /* Nodes: the 2^D bottom nodes and the centres of every level; channels:
     * (k + 2) per leaf of a k-cube of centres; longest route: up L-1
     * centres, across the top cube, down L-1. */
    static const struct {
        int D, nodes;
        int64_t channels;
        int max_route;
    } cases[] = {
        {1, 3, 2 * 3, 1},                                   /* a triangle */
        {2, 5, 4 * 4, 2},                                   /* a square and its centre */
        {3, 9, 8 * 5, 3},                                   /* 12 cube links, 8 spokes */
        {4, 19, 16 * 5 + 2 * 3, 3},                         /* two 3-HHCs, a top centre */
        {5, 37, 32 * 5 + 4 * 4, 4},                         /* four, their centres a square */
        {6, 73, 64 * 5 + 8 * 5, 5},                         /* eight, their centres a cube */
        {7, 147, 128 * 5 + 16 * 5 + 2 * 3, 5},              /* three levels */
        {9, 585, 512 * 5 + 64 * 5 + 8 * 5, 7},              /* 512 + 64 + 8 + 1 */
        {30, 1227133513, 5LL * 1227133512, 21},             /* (8^11-1)/7 nodes */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        mpitopo_network_t *net = hhc(cases[i].D);
        int n, r;
        int64_t c;
        OK(mpitopo_network_size(net, &n, &c, &r));
        if (n != cases[i].nodes || c != cases[i].channels || r != cases[i].max_route)
            fail_msg("hhc:%d: %d nodes, %lld channels, routes up to %d", cases[i].D, n,
                     (long long)c, r);
        mpitopo_network_destroy(&net);
    }
    mpitopo_network_t *net;
    OK(mpitopo_network_from_string("hhc:3:cap=2.5", &net));
    double cap;
    OK(mpitopo_network_channel(net, 39, &cap, NULL, 0));
    assert_true(cap == 2.5);
    mpitopo_network_destroy(&net);
}

static void test_node_names(void **state)
{
    (void)state;
    char name[NAMELEN], want[NAMELEN];
    /* By hand: the 3-HHC's end node i is the nibble i, its centre 1000. */
    mpitopo_network_t *net = hhc(3);
    static const char *const three[9] = {"0000", "0001", "0010", "0011", "0100",
                                         "0101", "0110", "0111", "1000"};
    for (int i = 0; i < 9; i++) {
        OK(mpitopo_network_node_name(net, i, name, sizeof name));
        assert_string_equal(name, three[i]);
    }
    mpitopo_network_destroy(&net);
    /* The 6-HHC: "a.b" is 9a + b; the 4-HHC: 19 nodes, the top centre last. */
    net = hhc(6);
    OK(mpitopo_network_node_name(net, 9 * 5 + 3, name, sizeof name));
    assert_string_equal(name, "0101.0011");
    OK(mpitopo_network_node_name(net, 9 * 5 + 8, name, sizeof name));
    assert_string_equal(name, "0101.1000");
    OK(mpitopo_network_node_name(net, 72, name, sizeof name));
    assert_string_equal(name, "1000.1000");
    /* Truncated with its NUL. */
    OK(mpitopo_network_node_name(net, 72, name, 5));
    assert_string_equal(name, "1000");
    mpitopo_network_destroy(&net);
    net = hhc(4);
    OK(mpitopo_network_node_name(net, 17, name, sizeof name));
    assert_string_equal(name, "0001.1000");
    OK(mpitopo_network_node_name(net, 18, name, sizeof name));
    assert_string_equal(name, "1000.1000");
    mpitopo_network_destroy(&net);
    /* Every end node of the small HHCs against the enumeration. */
    for (int D = 1; D <= 10; D++) {
        model_t m;
        model_build(&m, D);
        net = hhc(D);
        int n;
        OK(mpitopo_network_size(net, &n, NULL, NULL));
        assert_int_equal(n, m.nnodes);
        for (int v = 0; v < n; v++) {
            OK(mpitopo_network_node_name(net, v, name, sizeof name));
            id_format(&m, &m.ids[v], want);
            if (strcmp(name, want) != 0)
                fail_msg("hhc:%d: node %d is \"%s\", expected \"%s\"", D, v, name, want);
        }
        mpitopo_network_destroy(&net);
        free(m.ids);
    }
    /* The largest: the top centre is last, the first node all zeros. */
    net = hhc(30);
    OK(mpitopo_network_node_name(net, 1227133512, name, sizeof name));
    assert_string_equal(name, "1000.1000.1000.1000.1000.1000.1000.1000.1000.1000");
    OK(mpitopo_network_node_name(net, 0, name, sizeof name));
    assert_string_equal(name, "0000.0000.0000.0000.0000.0000.0000.0000.0000.0000");
    /* Just before it, the root of its last leaf's subtree. */
    OK(mpitopo_network_node_name(net, 1227133512 - 1, name, sizeof name));
    assert_string_equal(name, "0111.1000.1000.1000.1000.1000.1000.1000.1000.1000");
    mpitopo_network_destroy(&net);
}

/* Every channel joins two adjacent nodes, no two the same ordered pair,
 * and every ordered adjacent pair is one. */
static void test_links(void **state)
{
    (void)state;
    for (int D = 1; D <= 7; D++) {
        model_t m;
        model_build(&m, D);
        mpitopo_network_t *net = hhc(D);
        int64_t nch;
        OK(mpitopo_network_size(net, NULL, &nch, NULL));
        char *seen = calloc((size_t)m.nnodes * (size_t)m.nnodes, 1);
        char name[2 * NAMELEN], a[NAMELEN], b[NAMELEN];
        for (int64_t c = 0; c < nch; c++) {
            OK(mpitopo_network_channel(net, c, NULL, name, sizeof name));
            ends(name, a, b);
            int u = model_find(&m, a), v = model_find(&m, b);
            if (!adjacent(&m, &m.ids[u], &m.ids[v]))
                fail_msg("hhc:%d: channel %lld \"%s\" joins no link", D, (long long)c, name);
            if (seen[u * m.nnodes + v]++)
                fail_msg("hhc:%d: channel %lld \"%s\" twice", D, (long long)c, name);
        }
        int64_t pairs = 0;
        for (int u = 0; u < m.nnodes; u++)
            for (int v = 0; v < m.nnodes; v++)
                pairs += adjacent(&m, &m.ids[u], &m.ids[v]);
        assert_int_equal(pairs, nch);
        /* The paper's degrees: 4 for a bottom node below full cubes, 8 + 4
         * for a centre of level 1 that is a leaf of a 3-cube. */
        if (D >= 6) {
            int deg0 = 0, deg1 = 0;
            for (int v = 0; v < m.nnodes; v++) {
                deg0 += adjacent(&m, &m.ids[0], &m.ids[v]);
                deg1 += adjacent(&m, &m.ids[8], &m.ids[v]);
            }
            assert_int_equal(deg0, 4);
            assert_int_equal(deg1, 12);
        }
        free(seen);
        mpitopo_network_destroy(&net);
        free(m.ids);
    }
}

/* The route src -> dst is the walk of step(), channel by channel. */
static int check_route(const model_t *m, const mpitopo_network_t *net, int src, int dst,
                       int max_route)
{
    int64_t r[32];
    int len;
    OK(mpitopo_network_route(net, src, dst, 32, r, &len));
    assert_true(len <= max_route);
    if (src == dst) {
        assert_int_equal(len, 0);
        return 0;
    }
    nid_t cur = m->ids[src];
    char name[2 * NAMELEN], a[NAMELEN], b[NAMELEN], want_a[NAMELEN], want_b[NAMELEN];
    for (int i = 0; i < len; i++) {
        nid_t next = step(m, cur, &m->ids[dst]);
        OK(mpitopo_network_channel(net, r[i], NULL, name, sizeof name));
        ends(name, a, b);
        id_format(m, &cur, want_a);
        id_format(m, &next, want_b);
        if (strcmp(a, want_a) != 0 || strcmp(b, want_b) != 0)
            fail_msg("hhc:%d: route %d->%d, hop %d is %s, expected %s->%s", m->D, src, dst, i,
                     name, want_a, want_b);
        cur = next;
    }
    id_format(m, &cur, a);
    id_format(m, &m->ids[dst], b);
    if (strcmp(a, b) != 0)
        fail_msg("hhc:%d: route %d->%d of %d channels ends at %s, not %s", m->D, src, dst, len, a,
                 b);
    return len;
}

static void test_routes(void **state)
{
    (void)state;
    for (int D = 1; D <= 7; D++) {
        model_t m;
        model_build(&m, D);
        mpitopo_network_t *net = hhc(D);
        int max_route, longest = 0;
        OK(mpitopo_network_size(net, NULL, NULL, &max_route));
        for (int s = 0; s < m.nnodes; s++)
            for (int d = 0; d < m.nnodes; d++) {
                int len = check_route(&m, net, s, d, max_route);
                longest = len > longest ? len : longest;
            }
        /* max_route is exact. */
        assert_int_equal(longest, max_route);
        mpitopo_network_destroy(&net);
        free(m.ids);
    }
}

static void route_names(int D, int s, int d, const char *expected)
{
    mpitopo_network_t *net = hhc(D);
    int64_t r[32];
    int len;
    OK(mpitopo_network_route(net, s, d, 32, r, &len));
    char got[1024] = "", name[2 * NAMELEN];
    for (int i = 0; i < len; i++) {
        OK(mpitopo_network_channel(net, r[i], NULL, name, sizeof name));
        if (i)
            strcat(got, ", ");
        strcat(got, name);
    }
    if (strcmp(got, expected) != 0)
        fail_msg("hhc:%d: route %d->%d is \"%s\", expected \"%s\"", D, s, d, got, expected);
    mpitopo_network_destroy(&net);
}

static void test_routes_by_hand(void **state)
{
    (void)state;
    /* Intra-cube: the least significant bit first. */
    route_names(3, 0, 7, "0000->0001, 0001->0011, 0011->0111");
    route_names(3, 6, 1, "0110->0111, 0111->0101, 0101->0001");
    route_names(3, 5, 8, "0101->1000");
    route_names(3, 8, 2, "1000->0010");
    /* Inter-cube: up to the centre, across the cube of centres (bit 1,
     * then bit 2), down from the centre straight to the leaf. */
    route_names(6, 0, 9 * 6 + 3, "0000.0000->0000.1000, 0000.1000->0010.1000, "
                                 "0010.1000->0110.1000, 0110.1000->0110.0011");
    route_names(6, 9 * 6 + 3, 72, "0110.0011->0110.1000, 0110.1000->1000.1000");
    route_names(6, 72, 9 * 6 + 3, "1000.1000->0110.1000, 0110.1000->0110.0011");
    route_names(4, 3, 9 + 3, "0000.0011->0000.1000, 0000.1000->0001.1000, "
                             "0001.1000->0001.0011");
}

/* In the largest HHC, routes between pseudo-random pairs (and the
 * extremes) follow the walk, read from the node names. */
static void test_routes_large(void **state)
{
    (void)state;
    static const int dims[] = {13, 30};
    for (size_t k = 0; k < sizeof dims / sizeof *dims; k++) {
        int D = dims[k];
        mpitopo_network_t *net = hhc(D);
        int n, max_route;
        OK(mpitopo_network_size(net, &n, NULL, &max_route));
        model_t m = {D, (D + 2) / 3, 0, NULL};
        uint64_t h = 12345;
        for (int t = 0; t < 2000; t++) {
            h = h * 6364136223846793005ULL + 1442695040888963407ULL;
            int s = (int)((h >> 33) % (uint64_t)n), d = (int)((h >> 5) % (uint64_t)n);
            if (t == 0)
                s = 0, d = n - 1;
            if (t == 1) /* the bottom nodes 0000... and 0111.0000... */
                s = 0, d = (int)(D == 30 ? 7LL * 153391689 : 0);
            char name[2 * NAMELEN], a[NAMELEN], b[NAMELEN], cur[NAMELEN], want[NAMELEN];
            int64_t r[32];
            int len;
            OK(mpitopo_network_route(net, s, d, 32, r, &len));
            assert_true(len <= max_route);
            if (D == 30 && t == 1)
                assert_int_equal(len, 21);
            if (D == 30 && t == 0)
                assert_int_equal(len, 10);
            nid_t x, y;
            OK(mpitopo_network_node_name(net, s, cur, sizeof cur));
            id_parse(&m, cur, &x);
            OK(mpitopo_network_node_name(net, d, want, sizeof want));
            id_parse(&m, want, &y);
            for (int i = 0; i < len; i++) {
                nid_t next = step(&m, x, &y);
                OK(mpitopo_network_channel(net, r[i], NULL, name, sizeof name));
                ends(name, a, b);
                id_format(&m, &x, cur);
                id_format(&m, &next, want);
                if (strcmp(a, cur) != 0 || strcmp(b, want) != 0)
                    fail_msg("hhc:%d: route %d->%d, hop %d is %s, expected %s->%s", D, s, d, i,
                             name, cur, want);
                x = next;
            }
            id_format(&m, &x, a);
            id_format(&m, &y, b);
            assert_string_equal(a, b);
        }
        mpitopo_network_destroy(&net);
    }
}

static int near(double a, double b)
{
    return fabs(a - b) <= 1e-9 * (1 + fabs(a) + fabs(b));
}

static void test_metrics_by_hand(void **state)
{
    (void)state;
    /* hhc:3, processes 0..3 on 0000, 0111, 0001 and the centre 1000:
     * 0 -> 1 (100 bytes) 0000->0001->0011->0111, 2 -> 1 (10) 0001->0011->0111,
     * 3 -> 0 (5) 1000->0000. Loads 100, 110, 110, 5. */
    int src[3] = {0, 2, 3}, dst[3] = {1, 1, 0};
    double bytes[3] = {100, 10, 5};
    mpitopo_pattern_t *p;
    OK(mpitopo_pattern_create(4, 3, src, dst, bytes, NULL, &p));
    int mapping[4] = {0, 7, 1, 8};
    mpitopo_network_t *net = hhc(3);
    mpitopo_network_metrics_t m;
    OK(mpitopo_network_evaluate(net, p, mapping, NULL, NULL, &m));
    double nzca = 325.0 / 4, nzcv = (100.0 * 100 + 2 * 110 * 110 + 25) / 4 - nzca * nzca;
    assert_true(near(m.hop_bytes, 300 + 20 + 5));
    assert_true(near(m.dilation, 3 + 2 + 1));
    assert_true(near(m.max_congestion, 110));
    assert_true(near(m.nzca, nzca));
    assert_true(near(m.nzcv, nzcv));
    assert_true(near(m.hybrid, 325 + 110 + nzca + nzcv));
    assert_int_equal(m.busy_channels, 4);
    mpitopo_network_destroy(&net);
    /* With cap=2 every congestion halves (the variance quarters). */
    OK(mpitopo_network_from_string("hhc:3:cap=2", &net));
    OK(mpitopo_network_evaluate(net, p, mapping, NULL, NULL, &m));
    assert_true(near(m.hop_bytes, 325) && near(m.max_congestion, 55));
    assert_true(near(m.nzca, nzca / 2) && near(m.nzcv, nzcv / 4));
    mpitopo_network_destroy(&net);
    mpitopo_pattern_destroy(&p);

    /* hhc:6, one byte each way between 0000.0000 (node 0) and 0001.0000
     * (node 9): 3 hops each through the two centres, 6 channels at 1. */
    int s2[2] = {0, 1}, d2[2] = {1, 0};
    OK(mpitopo_pattern_create(2, 2, s2, d2, NULL, NULL, &p));
    int map2[2] = {0, 9};
    net = hhc(6);
    OK(mpitopo_network_evaluate(net, p, map2, NULL, NULL, &m));
    assert_true(near(m.hop_bytes, 6) && near(m.dilation, 6) && near(m.max_congestion, 1));
    assert_true(near(m.nzca, 1) && near(m.nzcv, 0) && near(m.hybrid, 8));
    assert_int_equal(m.busy_channels, 6);
    mpitopo_network_destroy(&net);
    mpitopo_pattern_destroy(&p);
}

static void test_errors(void **state)
{
    (void)state;
    mpitopo_network_t *net = (mpitopo_network_t *)&net;
    static const struct {
        const char *desc;
        int code;
        const char *needle;
    } bad[] = {
        {"hhc:0", MPITOPO_ERR_RANGE, "dimension = 0 must be in [1, 30]"},
        {"hhc:-3", MPITOPO_ERR_RANGE, "dimension = -3 must be in [1, 30]"},
        {"hhc:31", MPITOPO_ERR_RANGE, "dimension = 31 must be in [1, 30]"},
        {"hhc:1000000", MPITOPO_ERR_RANGE, "dimension = 1000000"},
        {"hhc:99999999999999999999", MPITOPO_ERR_PARSE,
         "dimension = \"99999999999999999999\" is not an integer"},
        {"hhc:abc", MPITOPO_ERR_PARSE, "dimension = \"abc\" is not an integer"},
        {"hhc:3x", MPITOPO_ERR_PARSE, "dimension = \"3x\""},
        {"hhc:3 ", MPITOPO_ERR_PARSE, "dimension = \"3 \""},
        {"hhc:3,4", MPITOPO_ERR_PARSE, "dimension = \"3,4\""},
        {"hhc:", MPITOPO_ERR_PARSE, "no parameters"},
        {"hhc:3:", MPITOPO_ERR_PARSE, "empty option"},
        {"hhc:3:cap=0", MPITOPO_ERR_RANGE, "cap = 0"},
        {"hhc:3:cap=x", MPITOPO_ERR_PARSE, "cap = \"x\""},
        {"hhc:3:nodes=4", MPITOPO_ERR_PARSE, "unknown option \"nodes=4\""},
        {"hhx:3", MPITOPO_ERR_PARSE, "kind = \"hhx\""},
        {"hhc", MPITOPO_ERR_PARSE, "expected KIND:PARAMETERS"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        FAILS(mpitopo_network_from_string(bad[i].desc, &net), bad[i].code, bad[i].needle);
        assert_null(net);
        assert_non_null(strstr(mpitopo_last_error(), "mpitopo_network_from_string: desc = \""));
        assert_non_null(strstr(mpitopo_last_error(), bad[i].desc));
    }
    /* The lists of kinds name hhc. */
    FAILS(mpitopo_network_from_string("hhx:3", &net), MPITOPO_ERR_PARSE, "hhc");
    FAILS(mpitopo_network_from_string("hhc", &net), MPITOPO_ERR_PARSE, "hhc,");

    net = hhc(3);
    int64_t r[4];
    int len;
    FAILS(mpitopo_network_route(net, 9, 0, 4, r, &len), MPITOPO_ERR_RANGE, "src = 9");
    FAILS(mpitopo_network_route(net, 0, 7, 2, r, &len), MPITOPO_ERR_RANGE, "route's 3");
    OK(mpitopo_network_route(net, 0, 8, 1, r, &len));
    assert_int_equal(len, 1);
    FAILS(mpitopo_network_channel(net, 40, NULL, NULL, 0), MPITOPO_ERR_RANGE, "channel = 40");
    char name[8];
    FAILS(mpitopo_network_node_name(net, 9, name, sizeof name), MPITOPO_ERR_RANGE, "node = 9");
    mpitopo_network_destroy(&net);
    assert_null(net);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),          cmocka_unit_test(test_node_names),
        cmocka_unit_test(test_links),          cmocka_unit_test(test_routes),
        cmocka_unit_test(test_routes_by_hand), cmocka_unit_test(test_routes_large),
        cmocka_unit_test(test_metrics_by_hand), cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
