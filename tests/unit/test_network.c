/* Networks: descriptions and their errors, routes hop by hop against BFS
 * and hand computation, the metrics against a brute force over explicit
 * routes, the incremental load structure, the GPC preset's speed. */
#include "unit.h"

#include <math.h>
#include <stdio.h>
#include <time.h>

/* ---------------------------------------------------------------- helpers */

/* The endpoints of a channel from its name: "A->B" followed by " ..." or "#q". */
static void ends(const char *name, char *from, char *to)
{
    const char *arrow = strstr(name, "->");
    assert_non_null(arrow);
    size_t n = (size_t)(arrow - name);
    memcpy(from, name, n);
    from[n] = 0;
    const char *b = arrow + 2;
    n = strcspn(b, " #");
    memcpy(to, b, n);
    to[n] = 0;
}

/* The network's graph rebuilt from the channel names alone. */
typedef struct graph {
    int nv;
    char (*vname)[32];
    int64_t nch;
    int *from, *to;
} graph_t;

static int vertex(graph_t *g, const char *s)
{
    for (int v = 0; v < g->nv; v++)
        if (strcmp(g->vname[v], s) == 0)
            return v;
    snprintf(g->vname[g->nv], 32, "%s", s);
    return g->nv++;
}

static void graph_build(const mpitopo_network_t *net, graph_t *g)
{
    OK(mpitopo_network_size(net, NULL, &g->nch, NULL));
    g->nv = 0;
    g->vname = calloc((size_t)g->nch * 2 + 1, sizeof *g->vname);
    g->from = calloc((size_t)g->nch + 1, sizeof *g->from);
    g->to = calloc((size_t)g->nch + 1, sizeof *g->to);
    char name[96], a[48], b[48];
    for (int64_t c = 0; c < g->nch; c++) {
        double cap;
        OK(mpitopo_network_channel(net, c, &cap, name, sizeof name));
        assert_true(cap > 0);
        ends(name, a, b);
        g->from[c] = vertex(g, a);
        g->to[c] = vertex(g, b);
        assert_int_not_equal(g->from[c], g->to[c]);
    }
}

static void graph_free(graph_t *g)
{
    free(g->vname);
    free(g->from);
    free(g->to);
}

/* BFS distances from vertex s. */
static void bfs(const graph_t *g, int s, int *dist)
{
    int *queue = malloc(sizeof *queue * (size_t)g->nv);
    for (int v = 0; v < g->nv; v++)
        dist[v] = -1;
    int head = 0, tail = 0;
    dist[s] = 0;
    queue[tail++] = s;
    while (head < tail) {
        int v = queue[head++];
        for (int64_t c = 0; c < g->nch; c++)
            if (g->from[c] == v && dist[g->to[c]] < 0) {
                dist[g->to[c]] = dist[v] + 1;
                queue[tail++] = g->to[c];
            }
    }
    free(queue);
}

/* Every route starts at src, follows connected channels, ends at dst, and
 * is a shortest path; every channel name is unique. */
static void check_routes(const char *desc, int destination_based, int shortest)
{
    mpitopo_network_t *net;
    OK(mpitopo_network_from_string(desc, &net));
    int n, maxr;
    OK(mpitopo_network_size(net, &n, NULL, &maxr));
    graph_t g;
    graph_build(net, &g);
    int *node = malloc(sizeof *node * (size_t)n), *dist = malloc(sizeof *dist * (size_t)g.nv);
    char nm[32];
    for (int i = 0; i < n; i++) {
        snprintf(nm, sizeof nm, "n%d", i);
        node[i] = vertex(&g, nm);
    }
    int64_t *r = malloc(sizeof *r * (size_t)(maxr + 1));
    int64_t *next = malloc(sizeof *next * (size_t)g.nv); /* destination-based: next channel per vertex */
    for (int s = 0; s < n; s++) {
        bfs(&g, node[s], dist);
        for (int d = 0; d < n; d++) {
            int len;
            OK(mpitopo_network_route(net, s, d, maxr, r, &len));
            if (s == d) {
                assert_int_equal(len, 0);
                continue;
            }
            int at = node[s];
            for (int i = 0; i < len; i++) {
                if (g.from[r[i]] != at)
                    fail_msg("%s: route %d->%d, hop %d leaves %s, not %s", desc, s, d, i,
                             g.vname[g.from[r[i]]], g.vname[at]);
                at = g.to[r[i]];
            }
            assert_int_equal(at, node[d]);
            if (shortest ? len != dist[node[d]] : len < dist[node[d]])
                fail_msg("%s: route %d->%d has %d hops, BFS %d", desc, s, d, len, dist[node[d]]);
        }
    }
    if (destination_based) {
        /* d-mod-k: the channel out of a vertex towards d never depends on the source. */
        for (int d = 0; d < n; d++) {
            for (int v = 0; v < g.nv; v++)
                next[v] = -1;
            for (int s = 0; s < n; s++) {
                int len;
                OK(mpitopo_network_route(net, s, d, maxr, r, &len));
                for (int i = 0; i < len; i++) {
                    int v = g.from[r[i]];
                    if (next[v] >= 0 && next[v] != r[i])
                        fail_msg("%s: towards %d, %s forwards on two channels", desc, d, g.vname[v]);
                    next[v] = r[i];
                }
            }
        }
    }
    /* A route with too little room is refused, naming maxlen. */
    int len;
    FAILS(mpitopo_network_route(net, 0, n - 1, 0, r, &len), n > 1 ? MPITOPO_ERR_RANGE : MPITOPO_SUCCESS,
          n > 1 ? "maxlen = 0" : NULL);
    free(next);
    free(r);
    free(node);
    free(dist);
    graph_free(&g);
    mpitopo_network_destroy(&net);
    assert_null(net);
}

static void route_names(const char *desc, int s, int d, const char *expected)
{
    mpitopo_network_t *net;
    OK(mpitopo_network_from_string(desc, &net));
    int64_t r[64];
    int len;
    OK(mpitopo_network_route(net, s, d, 64, r, &len));
    char got[1024] = "", name[96];
    for (int i = 0; i < len; i++) {
        OK(mpitopo_network_channel(net, r[i], NULL, name, sizeof name));
        if (i)
            strcat(got, ", ");
        strcat(got, name);
    }
    if (strcmp(got, expected) != 0)
        fail_msg("%s: route %d->%d is \"%s\", expected \"%s\"", desc, s, d, got, expected);
    mpitopo_network_destroy(&net);
}

/* ---------------------------------------------------------------- routes */

static void test_routes_bfs(void **state)
{
    (void)state;
    static const char *const grids[] = {"mesh:3x5", "torus:4x4x4", "torus:5x3", "torus:2x3",
                                        "mesh:7",   "torus:1x4",   "mesh:2x1x3", "torus:6"};
    for (size_t i = 0; i < sizeof grids / sizeof *grids; i++)
        check_routes(grids[i], 0, 1);
    static const char *const trees[] = {"ktree:2,2", "ktree:4,3", "ktree:3,3",
                                        "fattree:2;4,4;1,2;1,2", "fattree:3;3,2,3;1,2,2;1,2,1",
                                        "fattree:3;4,2,3;1,2,3;1,3,2:nodes=19"};
    for (size_t i = 0; i < sizeof trees / sizeof *trees; i++)
        check_routes(trees[i], 1, 1);
    /* Minimal routing in a dragonfly (local, global, local) is not always a
     * shortest path: two global hops through a third group can be shorter. */
    static const char *const flies[] = {"dragonfly:2,2,1", "dragonfly:1,4,2", "dragonfly:2,3,2,5",
                                        "dragonfly:1,1,1"};
    for (size_t i = 0; i < sizeof flies / sizeof *flies; i++)
        check_routes(flies[i], 1, 0);
}

static void test_routes_by_hand(void **state)
{
    (void)state;
    /* torus:4x4x4: node 42 = (2,2,2); every dimension a tie, so +. */
    route_names("torus:4x4x4", 0, 42, "n0->n16 d0+, n16->n32 d0+, n32->n36 d1+, n36->n40 d1+, "
                                      "n40->n41 d2+, n41->n42 d2+");
    route_names("torus:4x4x4", 42, 0, "n42->n58 d0+, n58->n10 d0+, n10->n14 d1+, n14->n2 d1+, "
                                      "n2->n3 d2+, n3->n0 d2+");
    /* (0,0,0) -> (2,0,3): +2 in dimension 0 (a tie), then -1 in dimension 2. */
    route_names("torus:4x4x4", 0, 35, "n0->n16 d0+, n16->n32 d0+, n32->n35 d2-");
    /* mesh:3x5: node 14 = (2,4), node 5 = (1,0); dimension 0 first, never round. */
    route_names("mesh:3x5", 0, 14, "n0->n5 d0+, n5->n10 d0+, n10->n11 d1+, n11->n12 d1+, "
                                   "n12->n13 d1+, n13->n14 d1+");
    route_names("mesh:3x5", 14, 5, "n14->n9 d0-, n9->n8 d1-, n8->n7 d1-, n7->n6 d1-, n6->n5 d1-");
    /* ktree:2,2: nodes 0,1 under s1.0, 2,3 under s1.1 (W1 = 1, w2 = 2, so
     * the level-2 switches are s2.0 and s2.1); towards node 3 the up port is
     * 3 mod 2 = 1, towards 2 it is 0. */
    route_names("ktree:2,2", 0, 1, "n0->s1.0, s1.0->n1");
    /* dragonfly:2,2,1: 3 groups of 2 routers of 2 nodes; group 0 reaches
     * group 2 from its router 1, arriving at group 2's router 0. */
    route_names("dragonfly:2,2,1", 0, 11, "n0->r0.0, r0.0->r0.1, r0.1->r2.0 global, r2.0->r2.1, "
                                          "r2.1->n11");
    route_names("dragonfly:2,2,1", 2, 4, "n2->r0.1, r0.1->r0.0, r0.0->r1.0 global, r1.0->n4");
    route_names("dragonfly:2,2,1", 2, 1, "n2->r0.1, r0.1->r0.0, r0.0->n1");
    route_names("ktree:2,2", 0, 3, "n0->s1.0, s1.0->s2.1, s2.1->s1.1, s1.1->n3");
    route_names("ktree:2,2", 1, 2, "n1->s1.0, s1.0->s2.0, s2.0->s1.1, s1.1->n2");
    /* GPC: 30 nodes per leaf, 3 parallel links to a line switch of each
     * core; node 3089 is on leaf 102, the only leaf of line 17 (s2.34 and
     * s2.35 in the two cores). Towards 3089: up port 3089 mod 6 = 5 (core
     * 1, link 2), then (3089 / 6) mod 18 = 10 (spine 1 of core 1, link 1):
     * the spine s3.(core + 2 * spine) = s3.3. */
    route_names("gpc", 0, 3089, "n0->s1.0, s1.0->s2.1#2, s2.1->s3.3#1, s3.3->s2.35#1, "
                                "s2.35->s1.102#2, s1.102->n3089");
}

static void test_sizes(void **state)
{
    (void)state;
    static const struct {
        const char *desc;
        int nodes;
        int64_t channels;
        int max_route;
    } cases[] = {
        {"torus:4x4x4", 64, 384, 6},  {"mesh:3x5", 15, 44, 6},       {"torus:2x3", 6, 24, 2},
        {"torus:1x4", 4, 8, 2},       {"ktree:4,3", 64, 384, 6},     {"gpc", 3090, 2 * (3090 + 618 + 648), 6},
        {"gpc:cap=4", 3090, 8712, 6}, {"dragonfly:2,2,1", 12, 36, 5}, {"dragonfly:4,8,4", 33 * 32, 33 * 32 * 2 + 33 * 56 + 33 * 32, 5}, {"fattree:2;4,4;1,2;1,2:nodes=5", 5, 2 * (5 + 2 * 2 * 2), 4},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        mpitopo_network_t *net;
        OK(mpitopo_network_from_string(cases[i].desc, &net));
        int n, r;
        int64_t c;
        OK(mpitopo_network_size(net, &n, &c, &r));
        if (n != cases[i].nodes || c != cases[i].channels || r != cases[i].max_route)
            fail_msg("%s: %d nodes, %lld channels, routes up to %d", cases[i].desc, n,
                     (long long)c, r);
        mpitopo_network_destroy(&net);
    }
}

/* ---------------------------------------------------------------- errors */

static void test_errors(void **state)
{
    (void)state;
    mpitopo_network_t *net = (mpitopo_network_t *)&net;
    static const struct {
        const char *desc;
        int code;
        const char *needle;
    } bad[] = {
        {"torus:4x0", MPITOPO_ERR_RANGE, "dims[1] = 0 must be in [1,"},
        {"torus:4x-2", MPITOPO_ERR_RANGE, "dims[1] = -2"},
        {"mesh:3xa", MPITOPO_ERR_PARSE, "dims[1] = \"a\" is not an integer"},
        {"mesh:3x", MPITOPO_ERR_PARSE, "dims[1] = \"\""},
        {"mesh:", MPITOPO_ERR_PARSE, "no parameters"},
        {"torus", MPITOPO_ERR_PARSE, "expected KIND:PARAMETERS"},
        {"ring:3", MPITOPO_ERR_PARSE, "kind = \"ring\""},
        {"torus:65536x65536", MPITOPO_ERR_RANGE, "more than 2147483647 nodes"},
        {"torus:99999999999999999999x2", MPITOPO_ERR_PARSE, "dims[0]"},
        {"torus:4x4:cap=0", MPITOPO_ERR_RANGE, "cap = 0 must be positive"},
        {"torus:4x4:cap=-1", MPITOPO_ERR_RANGE, "cap = -1"},
        {"torus:4x4:cap=x", MPITOPO_ERR_PARSE, "cap = \"x\""},
        {"torus:4x4:nodes=3", MPITOPO_ERR_PARSE, "unknown option \"nodes=3\""},
        {"torus:4x4:", MPITOPO_ERR_PARSE, "empty option"},
        {"fattree:2;4,4;1,4", MPITOPO_ERR_PARSE, "4 fields"},
        {"fattree:2;4,4;1,4;1,1;3", MPITOPO_ERR_PARSE, "not more"},
        {"fattree:2;4;1,4;1,1", MPITOPO_ERR_PARSE, "m has 1 entries, not levels = 2"},
        {"fattree:0;4;1;1", MPITOPO_ERR_RANGE, "levels = 0"},
        {"fattree:2;4,4;0,4;1,1", MPITOPO_ERR_RANGE, "w[0] = 0"},
        {"fattree:2;4,4;1,4;1,0", MPITOPO_ERR_RANGE, "p[1] = 0"},
        {"fattree:2;4,4;1,4;1,1:nodes=17", MPITOPO_ERR_RANGE, "nodes = 17 exceeds the tree's 16"},
        {"fattree:2;4,4;1,4;1,1:nodes=0", MPITOPO_ERR_RANGE, "nodes = 0"},
        {"fattree:3;2000,2000,2000;1,1,1;1,1,1", MPITOPO_ERR_RANGE, "nodes"},
        {"fattree:3;2,2,2;1,100000,100000;1,1,1", MPITOPO_ERR_RANGE, "w"},
        {"ktree:4", MPITOPO_ERR_PARSE, "ktree:K,N"},
        {"ktree:4,0", MPITOPO_ERR_RANGE, "ktree[1] = 0"},
        {"ktree:4,17", MPITOPO_ERR_RANGE, "N = 17"},
        {"gpc:nodes=4", MPITOPO_ERR_PARSE, "gpc takes only the option cap=X"},
        {"dragonfly:2,2", MPITOPO_ERR_PARSE, "dragonfly:P,A,H[,G]"},
        {"dragonfly:2,2,1,4", MPITOPO_ERR_RANGE, "G = 4 groups must be in [2, A*H+1 = 3]"},
        {"dragonfly:2,2,1,1", MPITOPO_ERR_RANGE, "G = 1"},
        {"dragonfly:2,0,1", MPITOPO_ERR_RANGE, "dragonfly[1] = 0"},
        {"dragonfly:1000,1000,1000", MPITOPO_ERR_RANGE, "more than"},
        {"gpcx", MPITOPO_ERR_PARSE, "expected KIND:PARAMETERS"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        FAILS(mpitopo_network_from_string(bad[i].desc, &net), bad[i].code, bad[i].needle);
        assert_null(net);
        /* The message names the function and the description. */
        assert_non_null(strstr(mpitopo_last_error(), "mpitopo_network_from_string: desc = \""));
    }
    FAILS(mpitopo_network_from_string(NULL, &net), MPITOPO_ERR_ARG, "desc is NULL");
    FAILS(mpitopo_network_from_string("mesh:2", NULL), MPITOPO_ERR_ARG, "network is NULL");
    char *longdesc = malloc(6000);
    memset(longdesc, '2', 5999);
    longdesc[5999] = 0;
    memcpy(longdesc, "mesh:", 5);
    FAILS(mpitopo_network_from_string(longdesc, &net), MPITOPO_ERR_RANGE, "more than 4096");
    free(longdesc);

    OK(mpitopo_network_from_string("mesh:3x5", &net));
    int64_t r[8];
    int len;
    FAILS(mpitopo_network_route(net, 15, 0, 8, r, &len), MPITOPO_ERR_RANGE, "src = 15");
    FAILS(mpitopo_network_route(net, 0, -1, 8, r, &len), MPITOPO_ERR_RANGE, "dst = -1");
    /* A route shorter than max_route fits a smaller buffer. */
    OK(mpitopo_network_route(net, 0, 1, 1, r, &len));
    assert_int_equal(len, 1);
    FAILS(mpitopo_network_route(net, 0, 2, 1, r, &len), MPITOPO_ERR_RANGE, "route's 2");
    FAILS(mpitopo_network_channel(net, 44, NULL, NULL, 0), MPITOPO_ERR_RANGE, "channel = 44");
    mpitopo_pattern_t *p;
    OK(mpitopo_pattern_from_string("cart:2x2", &p));
    int mapping[4] = {0, 1, 15, 2};
    mpitopo_network_metrics_t m;
    FAILS(mpitopo_network_evaluate(net, p, mapping, NULL, NULL, &m), MPITOPO_ERR_RANGE,
          "mapping[2] = 15");
    mapping[2] = 3;
    double w[4] = {1, NAN, 1, 1};
    FAILS(mpitopo_network_evaluate(net, p, mapping, w, NULL, &m), MPITOPO_ERR_ARG, "weights[1]");
    mpitopo_network_load_t *l;
    OK(mpitopo_network_load_create(net, p, &l));
    OK(mpitopo_network_load_place(l, 0, 3));
    FAILS(mpitopo_network_load_place(l, 0, 4), MPITOPO_ERR_ARG, "proc = 0 is already placed");
    FAILS(mpitopo_network_load_place(l, 1, 15), MPITOPO_ERR_RANGE, "node = 15");
    FAILS(mpitopo_network_load_unplace(l, 1), MPITOPO_ERR_ARG, "proc = 1 is not placed");
    FAILS(mpitopo_network_load_top(l, -1, r, NULL, &len), MPITOPO_ERR_ARG, "k = -1");
    mpitopo_network_load_destroy(&l);
    mpitopo_network_load_destroy(&l);
    assert_null(l);
    mpitopo_pattern_destroy(&p);
    mpitopo_network_destroy(&net);
    mpitopo_network_destroy(&net);
    mpitopo_network_destroy(NULL);
}

/* ---------------------------------------------------------------- metrics */

static int near(double a, double b)
{
    return fabs(a - b) <= 1e-9 * (1 + fabs(a) + fabs(b));
}

static void expect_metrics(const char *what, const mpitopo_network_metrics_t *got,
                           const mpitopo_network_metrics_t *want)
{
    if (!near(got->hop_bytes, want->hop_bytes) || !near(got->dilation, want->dilation) ||
        !near(got->max_congestion, want->max_congestion) || !near(got->nzca, want->nzca) ||
        !near(got->nzcv, want->nzcv) || !near(got->hybrid, want->hybrid) ||
        got->busy_channels != want->busy_channels)
        fail_msg("%s: got HB %g D %g MC %g NZCA %g NZCV %g H %g busy %lld; want HB %g D %g MC %g "
                 "NZCA %g NZCV %g H %g busy %lld",
                 what, got->hop_bytes, got->dilation, got->max_congestion, got->nzca, got->nzcv,
                 got->hybrid, (long long)got->busy_channels, want->hop_bytes, want->dilation,
                 want->max_congestion, want->nzca, want->nzcv, want->hybrid,
                 (long long)want->busy_channels);
}

/* The metrics straight from the definitions, over explicit routes. */
static void brute_metrics(const mpitopo_network_t *net, const mpitopo_pattern_t *p,
                          const int *mapping, const double *w, mpitopo_network_metrics_t *m)
{
    int nprocs, maxr;
    int64_t nch;
    OK(mpitopo_pattern_nprocs(p, &nprocs));
    OK(mpitopo_network_size(net, NULL, &nch, &maxr));
    double *load = calloc((size_t)nch, sizeof *load);
    int64_t *r = malloc(sizeof *r * (size_t)(maxr + 1));
    memset(m, 0, sizeof *m);
    for (int s = 0; s < nprocs; s++) {
        int deg;
        const int *dst;
        const double *bytes;
        OK(mpitopo_pattern_out_edges(p, s, &deg, &dst, &bytes, NULL));
        for (int e = 0; e < deg; e++) {
            if (bytes[e] <= 0 || mapping[s] == mapping[dst[e]])
                continue;
            int len;
            OK(mpitopo_network_route(net, mapping[s], mapping[dst[e]], maxr, r, &len));
            m->hop_bytes += bytes[e] * len;
            m->dilation += len;
            for (int i = 0; i < len; i++)
                load[r[i]] += bytes[e];
        }
    }
    double sum = 0, cap;
    for (int64_t c = 0; c < nch; c++) {
        OK(mpitopo_network_channel(net, c, &cap, NULL, 0));
        if (load[c] > 0) {
            m->busy_channels++;
            sum += load[c] / cap;
            if (load[c] / cap > m->max_congestion)
                m->max_congestion = load[c] / cap;
        }
    }
    m->nzca = m->busy_channels ? sum / (double)m->busy_channels : 0;
    for (int64_t c = 0; c < nch; c++)
        if (load[c] > 0)
            m->nzcv += (load[c] / cap - m->nzca) * (load[c] / cap - m->nzca);
    m->nzcv = m->busy_channels ? m->nzcv / (double)m->busy_channels : 0;
    static const double ones[4] = {1, 1, 1, 1};
    if (!w)
        w = ones;
    m->hybrid = w[0] * m->hop_bytes + w[1] * m->max_congestion + w[2] * m->nzca + w[3] * m->nzcv;
    free(load);
    free(r);
}

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

static void test_metrics_brute_force(void **state)
{
    (void)state;
    static const char *const descs[] = {"mesh:3x5",  "torus:4x4x4", "torus:3x2:cap=2.5",
                                        "ktree:3,3", "gpc", "dragonfly:2,3,2,5",         "fattree:3;4,2,3;1,2,3;1,3,2:nodes=19"};
    uint64_t seed = 12345;
    int cases = UNIT_SANITIZED ? 4 : 12;
    for (size_t di = 0; di < sizeof descs / sizeof *descs; di++) {
        mpitopo_network_t *net;
        OK(mpitopo_network_from_string(descs[di], &net));
        int nn;
        OK(mpitopo_network_size(net, &nn, NULL, NULL));
        for (int t = 0; t < cases; t++) {
            int nprocs = 2 + (int)(lcg(&seed) % 40), nedges = (int)(lcg(&seed) % 200);
            int *src = malloc(sizeof *src * (size_t)(nedges + 1)), *dst = malloc(sizeof *dst * (size_t)(nedges + 1));
            double *bytes = malloc(sizeof *bytes * (size_t)(nedges + 1));
            for (int e = 0; e < nedges; e++) {
                src[e] = (int)(lcg(&seed) % (uint64_t)nprocs);
                dst[e] = (int)(lcg(&seed) % (uint64_t)nprocs);
                bytes[e] = (double)(lcg(&seed) % 5) * 0.75; /* some zero-byte edges */
            }
            mpitopo_pattern_t *p;
            OK(mpitopo_pattern_create(nprocs, nedges, src, dst, bytes, NULL, &p));
            int *mapping = malloc(sizeof *mapping * (size_t)nprocs);
            int span = 1 + (int)(lcg(&seed) % (uint64_t)nn); /* crowd some nodes */
            for (int i = 0; i < nprocs; i++)
                mapping[i] = (int)(lcg(&seed) % (uint64_t)span);
            double w[4] = {0.5, 2, 3, 0.25};
            mpitopo_network_metrics_t want, got, inc;
            brute_metrics(net, p, mapping, w, &want);
            OK(mpitopo_network_evaluate(net, p, mapping, w, NULL, &got));
            expect_metrics(descs[di], &got, &want);

            /* Incrementally, in a random order, with some processes removed
             * and placed again. */
            mpitopo_network_load_t *l;
            OK(mpitopo_network_load_create(net, p, &l));
            int *order = malloc(sizeof *order * (size_t)nprocs);
            for (int i = 0; i < nprocs; i++)
                order[i] = i;
            for (int i = nprocs - 1; i > 0; i--) {
                int j = (int)(lcg(&seed) % (uint64_t)(i + 1)), x = order[i];
                order[i] = order[j];
                order[j] = x;
            }
            for (int i = 0; i < nprocs; i++)
                OK(mpitopo_network_load_place(l, order[i], mapping[order[i]]));
            for (int i = 0; i < nprocs; i += 3)
                OK(mpitopo_network_load_unplace(l, order[i]));
            for (int i = 0; i < nprocs; i += 3)
                OK(mpitopo_network_load_place(l, order[i], mapping[order[i]]));
            OK(mpitopo_network_load_metrics(l, w, NULL, &inc));
            expect_metrics("incremental", &inc, &want);
            /* Everything removed: all zero. */
            for (int i = 0; i < nprocs; i++)
                OK(mpitopo_network_load_unplace(l, i));
            OK(mpitopo_network_load_metrics(l, NULL, NULL, &inc));
            mpitopo_network_metrics_t zero = {0};
            expect_metrics("empty", &inc, &zero);
            mpitopo_network_load_destroy(&l);
            free(order);
            free(mapping);
            mpitopo_pattern_destroy(&p);
            free(src);
            free(dst);
            free(bytes);
        }
        mpitopo_network_destroy(&net);
    }
}

static void test_metrics_by_hand(void **state)
{
    (void)state;
    /* mesh:3x5: 0 -> 1 (10 bytes) from node 0 to node 14, 6 hops;
     * 2 -> 1 (5 bytes) from node 5, 5 hops over the same last 5 channels.
     * Loads: 10 on n0->n5, 15 on the 5 others. */
    int src[2] = {0, 2}, dst[2] = {1, 1};
    double bytes[2] = {10, 5};
    mpitopo_pattern_t *p;
    OK(mpitopo_pattern_create(3, 2, src, dst, bytes, NULL, &p));
    mpitopo_network_t *net;
    OK(mpitopo_network_from_string("mesh:3x5", &net));
    int mapping[3] = {0, 14, 5};
    mpitopo_network_metrics_t m, want = {85, 11, 15, 85.0 / 6, 125.0 / 36, 0, 6};
    want.hybrid = 85 + 15 + 85.0 / 6 + 125.0 / 36;
    OK(mpitopo_network_evaluate(net, p, mapping, NULL, NULL, &m));
    expect_metrics("mesh:3x5", &m, &want);
    /* Normalised by itself, each term is 1. */
    mpitopo_network_metrics_t self = m;
    OK(mpitopo_network_evaluate(net, p, mapping, NULL, &self, &m));
    assert_true(near(m.hybrid, 4));
    /* The most loaded channels, by name: five at 15 (ties by number), then 10. */
    mpitopo_network_load_t *l;
    OK(mpitopo_network_load_create(net, p, &l));
    for (int i = 0; i < 3; i++)
        OK(mpitopo_network_load_place(l, i, mapping[i]));
    int64_t top[8];
    double cong[8];
    int count;
    char name[64];
    OK(mpitopo_network_load_top(l, 8, top, cong, &count));
    assert_int_equal(count, 6);
    OK(mpitopo_network_channel(net, top[0], NULL, name, sizeof name));
    assert_string_equal(name, "n5->n10 d0+");
    assert_true(cong[0] == 15 && cong[4] == 15 && cong[5] == 10);
    OK(mpitopo_network_channel(net, top[5], NULL, name, sizeof name));
    assert_string_equal(name, "n0->n5 d0+");
    for (int i = 1; i < 5; i++)
        assert_true(top[i] > top[i - 1]);
    OK(mpitopo_network_load_top(l, 2, top, NULL, &count));
    assert_int_equal(count, 2);
    double b;
    OK(mpitopo_network_load_channel(l, top[1], &b));
    assert_true(b == 15);
    mpitopo_network_load_destroy(&l);
    mpitopo_network_destroy(&net);

    /* torus:4x4x4, 1 byte each way between nodes 0 and 42: 6 hops each,
     * 12 channels at 1; with cap=2 the congestion halves. */
    int s2[2] = {0, 1}, d2[2] = {1, 0};
    mpitopo_pattern_destroy(&p);
    OK(mpitopo_pattern_create(2, 2, s2, d2, NULL, NULL, &p));
    int map2[2] = {0, 42};
    OK(mpitopo_network_from_string("torus:4x4x4", &net));
    mpitopo_network_metrics_t t1 = {12, 12, 1, 1, 0, 14, 12};
    OK(mpitopo_network_evaluate(net, p, map2, NULL, NULL, &m));
    expect_metrics("torus:4x4x4", &m, &t1);
    mpitopo_network_destroy(&net);
    OK(mpitopo_network_from_string("torus:4x4x4:cap=2", &net));
    mpitopo_network_metrics_t t2 = {12, 12, 0.5, 0.5, 0, 13, 12};
    OK(mpitopo_network_evaluate(net, p, map2, NULL, NULL, &m));
    expect_metrics("torus:4x4x4:cap=2", &m, &t2);
    /* Both on one node: no traffic on the network. */
    int map3[2] = {7, 7};
    mpitopo_network_metrics_t zero = {0};
    OK(mpitopo_network_evaluate(net, p, map3, NULL, NULL, &m));
    expect_metrics("same node", &m, &zero);
    mpitopo_network_destroy(&net);
    mpitopo_pattern_destroy(&p);
}

/* ---------------------------------------------------------------- speed */

static double now(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void test_gpc_speed(void **state)
{
    (void)state;
    /* 4,096 processes, a 16x16x16 halo with the 26-point Moore stencil
     * (heavier than the thesis's 15-point one), block-mapped 8 per node on
     * 512 nodes. */
    mpitopo_network_t *net;
    OK(mpitopo_network_from_string("gpc", &net));
    mpitopo_pattern_t *p;
    OK(mpitopo_pattern_from_string("cart:16x16x16:moore=1", &p));
    int mapping[4096];
    for (int i = 0; i < 4096; i++)
        mapping[i] = i / 8;
    mpitopo_network_metrics_t m;
    double best = 1e9, best_cpu = 1e9;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
        OK(mpitopo_network_evaluate(net, p, mapping, NULL, NULL, &m));
        double t = now(CLOCK_MONOTONIC) - t0, c = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
        best = t < best ? t : best;
        best_cpu = c < best_cpu ? c : best_cpu;
    }
    print_message("gpc, cart:16x16x16:moore=1 block: %.2f ms (%.2f ms CPU); HB %g D %g MC %g "
                  "NZCA %g NZCV %g\n",
                  best * 1e3, best_cpu * 1e3, m.hop_bytes, m.dilation, m.max_congestion, m.nzca,
                  m.nzcv);
    assert_true(m.max_congestion > 0);
    mpitopo_pattern_destroy(&p);
    mpitopo_network_destroy(&net);
}

/* ---------------------------------------------------------------- allocation */

typedef struct run {
    mpitopo_network_t *net;
    mpitopo_pattern_t *p;
} run_t;

static int run_all(void *ctx)
{
    run_t *r = ctx;
    mpitopo_network_t *net;
    int rc = mpitopo_network_from_string("torus:3x3", &net);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    int mapping[9] = {8, 7, 6, 5, 4, 3, 2, 1, 0};
    mpitopo_network_metrics_t m;
    rc = mpitopo_network_evaluate(net, r->p, mapping, NULL, NULL, &m);
    int64_t top[3];
    int count;
    mpitopo_network_load_t *l = NULL;
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo_network_load_create(net, r->p, &l);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo_network_load_top(l, 3, top, NULL, &count);
    mpitopo_network_load_destroy(&l);
    mpitopo_network_destroy(&net);
    return rc;
}

static void test_allocation_failures(void **state)
{
    (void)state;
    run_t r = {NULL, NULL};
    OK(mpitopo_pattern_from_string("cart:3x3", &r.p));
    assert_true(unit_each_allocation_fails("network", run_all, &r) > 4);
    mpitopo_pattern_destroy(&r.p);
}

/* Group levels against the routes: in a fat tree two nodes share a group
 * of level "switchL" exactly when their route climbs at most L levels
 * (2L channels); in a dragonfly they share a router when the route is 2
 * channels long, a group when it crosses no global link. */
static void test_groups(void **state)
{
    (void)state;
    const char *trees[] = {"ktree:4,3", "fattree:3;3,2,4;1,2,2;1,2,1:nodes=20", "gpc"};
    for (int t = 0; t < 3; t++) {
        mpitopo_network_t *net = NULL;
        assert_int_equal(mpitopo_network_from_string(trees[t], &net), MPITOPO_SUCCESS);
        int n, nl, maxr;
        mpitopo_network_size(net, &n, NULL, &maxr);
        assert_int_equal(mpitopo_network_group_levels(net, &nl), MPITOPO_SUCCESS);
        assert_int_equal(nl, 2);
        int64_t ch[32];
        for (int a = 0; a < n; a += (t == 2 ? 37 : 1))
            for (int b = 0; b < n; b += (t == 2 ? 13 : 1)) {
                int len;
                assert_int_equal(mpitopo_network_route(net, a, b, 32, ch, &len), MPITOPO_SUCCESS);
                for (int l = 0; l < nl; l++) {
                    int64_t ga, gb;
                    const char *name;
                    assert_int_equal(mpitopo_network_group(net, l, a, &ga, &name), 0);
                    assert_int_equal(mpitopo_network_group(net, l, b, &gb, NULL), 0);
                    int L = l == nl - 1 ? 1 : 2; /* "switch2", "switch" */
                    assert_string_equal(name, L == 1 ? "switch" : "switch2");
                    assert_int_equal(ga == gb, len <= 2 * L);
                }
            }
        int64_t g;
        assert_int_equal(mpitopo_network_group(net, nl, 0, &g, NULL), MPITOPO_ERR_RANGE);
        assert_int_equal(mpitopo_network_group(net, 0, n, &g, NULL), MPITOPO_ERR_RANGE);
        assert_int_equal(mpitopo_network_group(net, 0, 0, NULL, NULL), MPITOPO_ERR_ARG);
        mpitopo_network_destroy(&net);
    }
    mpitopo_network_t *net = NULL;
    assert_int_equal(mpitopo_network_from_string("dragonfly:2,4,2", &net), MPITOPO_SUCCESS);
    int n, nl;
    mpitopo_network_size(net, &n, NULL, NULL);
    mpitopo_network_group_levels(net, &nl);
    assert_int_equal(nl, 2);
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            int64_t ch[8], ga, gb, ra, rb;
            int len;
            const char *gname, *rname;
            mpitopo_network_route(net, a, b, 8, ch, &len);
            mpitopo_network_group(net, 0, a, &ga, &gname);
            mpitopo_network_group(net, 0, b, &gb, NULL);
            mpitopo_network_group(net, 1, a, &ra, &rname);
            mpitopo_network_group(net, 1, b, &rb, NULL);
            assert_string_equal(gname, "group");
            assert_string_equal(rname, "router");
            int global = 0;
            for (int i = 0; i < len; i++) {
                char cname[64];
                mpitopo_network_channel(net, ch[i], NULL, cname, sizeof cname);
                global += strstr(cname, "global") != NULL;
            }
            assert_int_equal(ra == rb, len <= 2);
            assert_int_equal(ga == gb, global == 0);
        }
    mpitopo_network_destroy(&net);
    assert_int_equal(mpitopo_network_from_string("torus:4x4", &net), MPITOPO_SUCCESS);
    assert_int_equal(mpitopo_network_group_levels(net, &nl), MPITOPO_SUCCESS);
    assert_int_equal(nl, 0);
    mpitopo_network_destroy(&net);
    /* hhc:7 (3 levels of cubes, 147 nodes, IDs "n3.n2.n1"): two nodes share
     * a 3-HHC ("hhc1", 9 nodes) when their IDs agree above the lowest
     * nibble and neither is a centre of a higher cube (n2 = 1000, alone in
     * its group); a 6-HHC ("hhc2") when they agree on n3 and neither is the
     * top centre. */
    assert_int_equal(mpitopo_network_from_string("hhc:7", &net), MPITOPO_SUCCESS);
    mpitopo_network_size(net, &n, NULL, NULL);
    mpitopo_network_group_levels(net, &nl);
    assert_int_equal(nl, 2);
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            char na[32], nb[32];
            mpitopo_network_node_name(net, a, na, sizeof na);
            mpitopo_network_node_name(net, b, nb, sizeof nb);
            int high_a = strncmp(na + 5, "1000", 4) == 0, high_b = strncmp(nb + 5, "1000", 4) == 0;
            int top_a = strncmp(na, "1000", 4) == 0, top_b = strncmp(nb, "1000", 4) == 0;
            int same1 = a == b || (!high_a && !high_b && strncmp(na, nb, 9) == 0);
            int same2 = a == b || (!top_a && !top_b && strncmp(na, nb, 4) == 0);
            int64_t ga, gb;
            const char *name;
            mpitopo_network_group(net, 1, a, &ga, &name);
            mpitopo_network_group(net, 1, b, &gb, NULL);
            assert_string_equal(name, "hhc1");
            assert_int_equal(ga == gb, same1);
            mpitopo_network_group(net, 0, a, &ga, &name);
            mpitopo_network_group(net, 0, b, &gb, NULL);
            assert_string_equal(name, "hhc2");
            assert_int_equal(ga == gb, same2);
        }
    mpitopo_network_destroy(&net);
}

/* A machine under a network: the group levels above its nodes, nodes on
 * the end nodes the caller names, leaves renumbered in network order. */
static void test_network_machine(void **state)
{
    (void)state;
    mpitopo_network_t *net = NULL;
    mpitopo_machine_t *m = NULL, *out = NULL;
    assert_int_equal(mpitopo_network_from_string("ktree:2,3", &net), MPITOPO_SUCCESS);
    assert_int_equal(mpitopo_machine_from_string("rack:2 node:3 core:2", &m), MPITOPO_SUCCESS);
    int leaf_map[12];
    assert_int_equal(mpitopo_network_machine(net, m, NULL, &out, leaf_map), MPITOPO_SUCCESS);
    char buf[128];
    mpitopo_machine_describe(out, buf, sizeof buf);
    assert_string_equal(buf, "switch2:2 switch:[1..2] node:2 core:2 (12 leaves)");
    for (int i = 0; i < 12; i++)
        assert_int_equal(leaf_map[i], i);
    mpitopo_machine_destroy(&out);
    /* Nodes 0..5 on end nodes 7..2: leaf 2u+c goes to 2*(7-u-2)+c. */
    const int rev[6] = {7, 6, 5, 4, 3, 2};
    assert_int_equal(mpitopo_network_machine(net, m, rev, &out, leaf_map), MPITOPO_SUCCESS);
    for (int i = 0; i < 12; i++) {
        assert_int_equal(leaf_map[i], 2 * (5 - i / 2) + i % 2);
        int unit;
        mpitopo_machine_unit_of(out, 0, leaf_map[i], &unit); /* switch2: end nodes 4 by 4 */
        assert_int_equal(unit, rev[i / 2] >= 4 ? 1 : 0);
    }
    double c0, c1;
    mpitopo_machine_cost(out, 0, 1, &c0);  /* two cores of a node */
    mpitopo_machine_cost(out, 0, 11, &c1); /* across the top switch */
    assert_true(c0 < c1);
    mpitopo_machine_destroy(&out);
    const int dup[6] = {0, 1, 2, 3, 4, 1};
    assert_int_equal(mpitopo_network_machine(net, m, dup, &out, NULL), MPITOPO_ERR_ARG);
    assert_non_null(strstr(mpitopo_last_error(), "end_node[1] = end_node[5] = 1"));
    assert_null(out);
    const int far[6] = {0, 1, 2, 3, 4, 8};
    assert_int_equal(mpitopo_network_machine(net, m, far, &out, NULL), MPITOPO_ERR_RANGE);
    mpitopo_machine_destroy(&m);
    assert_int_equal(mpitopo_machine_from_string("node:9 core:2", &m), MPITOPO_SUCCESS);
    assert_int_equal(mpitopo_network_machine(net, m, NULL, &out, NULL), MPITOPO_ERR_RANGE);
    assert_non_null(strstr(mpitopo_last_error(), "9 nodes, the network only 8"));
    mpitopo_machine_destroy(&m);
    /* No node level: the machine is one node; a torus adds no level. */
    assert_int_equal(mpitopo_machine_from_string("socket:2 core:2", &m), MPITOPO_SUCCESS);
    assert_int_equal(mpitopo_network_machine(net, m, NULL, &out, NULL), MPITOPO_SUCCESS);
    mpitopo_machine_describe(out, buf, sizeof buf);
    assert_string_equal(buf, "switch2:1 switch:1 node:1 socket:2 core:2");
    mpitopo_machine_destroy(&out);
    mpitopo_network_destroy(&net);
    assert_int_equal(mpitopo_network_from_string("torus:2x2", &net), MPITOPO_SUCCESS);
    assert_int_equal(mpitopo_network_machine(net, m, NULL, &out, NULL), MPITOPO_SUCCESS);
    mpitopo_machine_describe(out, buf, sizeof buf);
    assert_string_equal(buf, "node:1 socket:2 core:2");
    mpitopo_machine_destroy(&out);
    assert_int_equal(mpitopo_network_machine(NULL, m, NULL, &out, NULL), MPITOPO_ERR_ARG);
    assert_null(out);
    mpitopo_machine_destroy(&m);
    mpitopo_network_destroy(&net);
}

/* mpitopo_map_network: the mappers that ignore the network give what
 * mpitopo_map gives; its own argument checks. */
static void test_map_network(void **state)
{
    (void)state;
    mpitopo_network_t *net = NULL;
    mpitopo_machine_t *m = NULL;
    mpitopo_pattern_t *p = NULL;
    assert_int_equal(mpitopo_network_from_string("ktree:2,3", &net), MPITOPO_SUCCESS);
    assert_int_equal(mpitopo_machine_from_string("node:8 core:2", &m), MPITOPO_SUCCESS);
    assert_int_equal(mpitopo_pattern_from_string("cart:4x4", &p), MPITOPO_SUCCESS);
    int a[16], b[16], kept = -1;
    assert_int_equal(mpitopo_map("tree", m, p, NULL, a, NULL), MPITOPO_SUCCESS);
    assert_int_equal(mpitopo_map_network("tree", m, net, NULL, p, NULL, b, &kept), MPITOPO_SUCCESS);
    assert_memory_equal(a, b, sizeof a);
    assert_int_equal(kept, 0);
    const int ends[8] = {7, 6, 5, 4, 3, 2, 1, 0}, bad[8] = {0, 1, 2, 3, 4, 5, 6, 8};
    assert_int_equal(mpitopo_map_network("block", m, net, ends, p, NULL, b, NULL), MPITOPO_SUCCESS);
    assert_int_equal(mpitopo_map_network("block", m, NULL, NULL, p, NULL, b, NULL), MPITOPO_ERR_ARG);
    assert_int_equal(mpitopo_map_network("block", m, net, bad, p, NULL, b, NULL), MPITOPO_ERR_RANGE);
    assert_non_null(strstr(mpitopo_last_error(), "end_node[7] = 8"));
    mpitopo_machine_destroy(&m);
    assert_int_equal(mpitopo_machine_from_string("node:9 core:2", &m), MPITOPO_SUCCESS);
    assert_int_equal(mpitopo_map_network("block", m, net, NULL, p, NULL, b, NULL), MPITOPO_ERR_RANGE);
    assert_non_null(strstr(mpitopo_last_error(), "9 nodes, the network only 8"));
    mpitopo_machine_destroy(&m);
    mpitopo_pattern_destroy(&p);
    mpitopo_network_destroy(&net);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),          cmocka_unit_test(test_routes_by_hand),
        cmocka_unit_test(test_routes_bfs),     cmocka_unit_test(test_errors),
        cmocka_unit_test(test_metrics_by_hand), cmocka_unit_test(test_metrics_brute_force),
        cmocka_unit_test(test_gpc_speed),      cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_groups),         cmocka_unit_test(test_network_machine),
        cmocka_unit_test(test_map_network),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
