/* The HHC arithmetic of the virtual topology (src/network/hhc.c, issue 18)
 * and the pattern "hhc:D", dimensions 3 to 7: the ID table's round trips
 * (integer, string, the network's node names), the tree's parent/child
 * links, the pattern's links and degrees, and every route (all pairs up to
 * the 5-HHC, every pair from a sample of sources above) as a walk on the
 * pattern's links, as long as the network's, and against a breadth-first
 * search: the paper's routing crosses a cube bit by bit, so it is never
 * shorter than the BFS and longer by one hop exactly when it flips all
 * three bits of a 3-cube (two hops through the centre). And the pattern on
 * its own network: one hop an edge. */
#include "unit.h"

#include "network/network_internal.h"

static void load(int D, mpitopo_network_t **net, mpitopo_pattern_t **pat)
{
    char desc[16];
    snprintf(desc, sizeof desc, "hhc:%d", D);
    OK(mpitopo_network_from_string(desc, net));
    OK(mpitopo_pattern_from_string(desc, pat));
}

/* Whether b is a neighbour of a in the pattern. */
static int linked(const mpitopo_pattern_t *p, int a, int b)
{
    int deg;
    const int *dst;
    mpitopo_pattern_out_edges(p, a, &deg, &dst, NULL, NULL);
    for (int i = 0; i < deg; i++)
        if (dst[i] == b)
            return 1;
    return 0;
}

static void bfs(const mpitopo_pattern_t *p, int n, int src, int *dist, int *queue)
{
    for (int i = 0; i < n; i++)
        dist[i] = -1;
    int head = 0, tail = 0;
    dist[src] = 0;
    queue[tail++] = src;
    while (head < tail) {
        int v = queue[head++], deg;
        const int *dst;
        mpitopo_pattern_out_edges(p, v, &deg, &dst, NULL, NULL);
        for (int i = 0; i < deg; i++)
            if (dist[dst[i]] < 0) {
                dist[dst[i]] = dist[v] + 1;
                queue[tail++] = dst[i];
            }
    }
}

static void test_ids(void **state)
{
    (void)state;
    static const int sizes[] = {0, 3, 5, 9, 19, 37, 73, 147};
    for (int D = 1; D <= 7; D++) {
        mpitopo_network_t *net;
        mpitopo_pattern_t *pat;
        load(D, &net, &pat);
        int n = mpitopo__hhc_nnodes(D), nn, L = mpitopo__hhc_levels(D);
        assert_int_equal(n, sizes[D]);
        OK(mpitopo_pattern_nprocs(pat, &nn));
        assert_int_equal(nn, n);
        for (int v = 0; v < n; v++) {
            int64_t id = mpitopo__hhc_id(D, v), back;
            assert_int_equal(mpitopo__hhc_node_of_id(D, id), v);
            char name[64], netname[64];
            mpitopo__hhc_id_string(D, v, name, sizeof name);
            OK(mpitopo_network_node_name(net, v, netname, sizeof netname));
            assert_string_equal(name, netname);
            assert_int_equal(strlen(name), 5 * L - 1);
            assert_int_equal(mpitopo__hhc_id_parse(D, name, &back), 0);
            assert_true(back == id);
            int level = mpitopo__hhc_level(D, v), q, c = mpitopo__hhc_parent(D, v, &q);
            for (int i = 0; i < L; i++) /* nibbles 1..level are 1000 */
                assert_true((i < level) == ((id >> (4 * i) & 15) == 8));
            if (v == n - 1) {
                assert_int_equal(c, -1);
                assert_int_equal(level, L);
                continue;
            }
            assert_int_equal(mpitopo__hhc_child(D, c, q), v);
            assert_int_equal(mpitopo__hhc_level(D, c), level + 1);
            assert_true(q == (int)(id >> (4 * level) & 15));
            assert_true(linked(pat, v, c) && linked(pat, c, v));
            int deg;
            const int *dst;
            mpitopo_pattern_out_edges(pat, v, &deg, &dst, NULL, NULL);
            int k = mpitopo__hhc_cube_dim(D, level + 1);
            /* Its cube's k links, its centre, and its own cube's leaves. */
            assert_int_equal(deg, k + 1 + (level > 0 ? 1 << mpitopo__hhc_cube_dim(D, level) : 0));
            assert_true(deg <= 12);
        }
        /* IDs that name no node. */
        assert_int_equal(mpitopo__hhc_node_of_id(D, 9), -1);
        assert_int_equal(mpitopo__hhc_node_of_id(D, (int64_t)8 << (4 * L)), -1);
        assert_int_equal(mpitopo__hhc_node_of_id(D, -1), -1);
        int64_t id;
        assert_int_equal(mpitopo__hhc_id_parse(D, "1001", &id), -1);
        assert_int_equal(mpitopo__hhc_id_parse(D, "0000.0000.0000.0000", &id), -1);
        assert_int_equal(mpitopo__hhc_id_parse(D, "", &id), -1);
        mpitopo_pattern_destroy(&pat);
        mpitopo_network_destroy(&net);
    }
}

static void test_routes(void **state)
{
    (void)state;
    for (int D = 3; D <= 7; D++) {
        mpitopo_network_t *net;
        mpitopo_pattern_t *pat;
        load(D, &net, &pat);
        int n = mpitopo__hhc_nnodes(D), maxp = mpitopo__hhc_max_path(D);
        int *dist = malloc((size_t)n * sizeof *dist), *queue = malloc((size_t)n * sizeof *queue);
        int step = D <= 5 ? 1 : 7, longer = 0;
        for (int s = 0; s < n; s += step) {
            bfs(pat, n, s, dist, queue);
            for (int d = 0; d < n; d++) {
                int path[64], len = mpitopo__hhc_path(D, s, d, path), nlen;
                int64_t ch[64];
                OK(mpitopo_network_route(net, s, d, 64, ch, &nlen));
                assert_int_equal(len, nlen);
                assert_true(len <= maxp);
                for (int i = 0, from = s; i < len; from = path[i++])
                    assert_true(linked(pat, from, path[i]));
                assert_int_equal(len ? path[len - 1] : s, d);
                assert_true(len >= dist[d] && len <= dist[d] + 1);
                if (len > dist[d]) {
                    /* Three cube hops in a row between leaves of one centre. */
                    int three = 0, q;
                    for (int i = 0; i + 2 < len; i++) {
                        int a = i ? path[i - 1] : s;
                        int c = mpitopo__hhc_parent(D, a, &q);
                        if (c >= 0 && mpitopo__hhc_parent(D, path[i], &q) == c &&
                            mpitopo__hhc_parent(D, path[i + 1], &q) == c &&
                            mpitopo__hhc_parent(D, path[i + 2], &q) == c)
                            three = 1;
                    }
                    assert_true(three);
                    longer++;
                }
            }
        }
        assert_true(longer > 0); /* the case exists at every dimension >= 3 */
        free(dist);
        free(queue);
        mpitopo_pattern_destroy(&pat);
        mpitopo_network_destroy(&net);
    }
}

static void test_pattern_errors(void **state)
{
    (void)state;
    mpitopo_pattern_t *p = NULL;
    FAILS(mpitopo_pattern_from_string("hhc:0", &p), MPITOPO_ERR_PARSE, "hhc:0");
    FAILS(mpitopo_pattern_from_string("hhc:25", &p), MPITOPO_ERR_PARSE, "[1, 24]");
    FAILS(mpitopo_pattern_from_string("hhc:x", &p), MPITOPO_ERR_PARSE, "D");
    FAILS(mpitopo_pattern_from_string("hhc:3:4", &p), MPITOPO_ERR_PARSE, "hhc");
    assert_null(p);
    OK(mpitopo_pattern_from_string("hhc:3", &p));
    int64_t ne;
    OK(mpitopo_pattern_nedges(p, &ne));
    assert_int_equal(ne, 2 * (12 + 8)); /* the cube's 12 links and 8 to the centre, both ways */
    mpitopo_pattern_destroy(&p);
}

/* The pattern on its own network, node i on end node i: every edge one hop
 * (hop-bytes and dilation equal the edge count). */
static void test_pattern_on_network(void **state)
{
    (void)state;
    for (int D = 1; D <= 7; D++) {
        mpitopo_network_t *net;
        mpitopo_pattern_t *pat;
        load(D, &net, &pat);
        int n = mpitopo__hhc_nnodes(D);
        int *ident = malloc((size_t)n * sizeof *ident);
        for (int i = 0; i < n; i++)
            ident[i] = i;
        int64_t ne;
        OK(mpitopo_pattern_nedges(pat, &ne));
        mpitopo_network_metrics_t m;
        OK(mpitopo_network_evaluate(net, pat, ident, NULL, NULL, &m));
        assert_true(m.hop_bytes == (double)ne && m.dilation == (double)ne);
        free(ident);
        mpitopo_pattern_destroy(&pat);
        mpitopo_network_destroy(&net);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ids),
        cmocka_unit_test(test_routes),
        cmocka_unit_test(test_pattern_errors),
        cmocka_unit_test(test_pattern_on_network),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
