/* Unit tests of collective-aware reordering (src/map/collmap*.c) and the
 * collective patterns (src/pattern/coll_pattern.c): the fast free-count
 * search against the thesis's linear scan on random machines, networks and
 * launches; the thesis's orders for p = 8; permutations with rank 0 fixed;
 * the cost model; the patterns' message counts and bytes against closed
 * forms; the mappers; bad input and allocation failures. */
#include "unit.h"

#include "map/collmap.h"

#include <math.h>
#include <stdio.h>

/* ---- helpers ------------------------------------------------------------ */

static uint64_t lcg_state = 12345;
static int rnd(int n)
{
    lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (int)((lcg_state >> 33) % (uint64_t)n);
}

static const char *const heur_name[] = {"RDMH", "RMH", "BBMH", "BGMH"};

/* The reference: the thesis's Alg. 4.1 with find_closest_to a linear scan
 * over every free old rank's leaf (lowest leaf on ties), the same distance.
 * Written from the thesis (S. H. Mirsadeghi, PhD thesis, Queen's University
 * 2017, section 4.2.2, Alg. 4.1-4.5) independently of collmap.c. */
typedef struct ref_state {
    const mpitopo__coll_dist_t *d;
    int p;
    const int *leaf_of_rank;
    int *free_; /* per old rank */
    int *old_of_new;
} ref_state_t;

static void ref_place(ref_state_t *s, int new_rank, int ref)
{
    int ref_leaf = s->leaf_of_rank[s->old_of_new[ref]], best = -1, best_d = 0;
    for (int r = 0; r < s->p; r++) {
        if (!s->free_[r])
            continue;
        int dist = mpitopo__coll_distance(s->d, ref_leaf, s->leaf_of_rank[r]);
        if (best < 0 || dist < best_d || (dist == best_d && s->leaf_of_rank[r] < s->leaf_of_rank[best])) {
            best = r;
            best_d = dist;
        }
    }
    assert_true(best >= 0);
    s->free_[best] = 0;
    s->old_of_new[new_rank] = best;
}

static void ref_bbmh(ref_state_t *s, int r)
{
    for (long long i = 1; (r & i) == 0 && r + i < s->p; i *= 2) {
        ref_place(s, (int)(r + i), r);
        ref_bbmh(s, (int)(r + i));
    }
}

static void ref_order(mpitopo__coll_heur_t h, const mpitopo__coll_dist_t *d, int p, const int *leaf_of_rank,
                      int *old_of_new)
{
    ref_state_t s = {d, p, leaf_of_rank, calloc((size_t)p, sizeof(int)), old_of_new};
    int *placed = calloc((size_t)p, sizeof(int));
    for (int r = 1; r < p; r++)
        s.free_[r] = 1;
    old_of_new[0] = 0;
    placed[0] = 1;
    if (h == MPITOPO__COLL_RDMH) {
        int ref = 0, i = p / 2, n = 1, wrt = 0;
        while (n < p) {
            while (placed[ref ^ i])
                i /= 2;
            int nw = ref ^ i;
            ref_place(&s, nw, ref);
            placed[nw] = 1;
            n++;
            if (++wrt == 2) {
                ref = nw;
                i = p / 2;
                wrt = 0;
            }
        }
    } else if (h == MPITOPO__COLL_RMH) {
        for (int r = 1; r < p; r++)
            ref_place(&s, r, r - 1);
    } else if (h == MPITOPO__COLL_BBMH) {
        ref_bbmh(&s, 0);
    } else {
        int *v = malloc((size_t)p * sizeof *v), nv = 1, i = 1;
        v[0] = 0;
        while (i * 2 < p)
            i *= 2;
        for (; p > 1 && i > 0; i /= 2) {
            int snap = nv;
            for (int j = 0; j < snap; j++)
                if (v[j] + i < p) {
                    ref_place(&s, v[j] + i, v[j]);
                    v[nv++] = v[j] + i;
                }
        }
        free(v);
    }
    free(placed);
    free(s.free_);
}

static void assert_permutation(const int *old_of_new, int p, const char *what)
{
    char *seen = calloc((size_t)p, 1);
    if (p > 0 && old_of_new[0] != 0)
        fail_msg("%s: old_of_new[0] = %d, not 0", what, old_of_new[0]);
    for (int j = 0; j < p; j++) {
        if (old_of_new[j] < 0 || old_of_new[j] >= p || seen[old_of_new[j]])
            fail_msg("%s: old_of_new[%d] = %d: not a permutation", what, j, old_of_new[j]);
        seen[old_of_new[j]] = 1;
    }
    free(seen);
}

/* A random machine of at least minleaves leaves: one to four levels with
 * small arities, a node level (always when want_node). */
static mpitopo_machine_t *random_machine(int minleaves, int want_node, char *desc, size_t size)
{
    static const char *const inner[] = {"socket", "numa", "core"};
    for (;;) {
        int above = rnd(2), nin = 1 + rnd(3), has_node = want_node || rnd(4) != 0;
        int len = 0, leaves = 1;
        desc[0] = 0;
        if (above) {
            int a = 1 + rnd(3);
            leaves *= a;
            len += snprintf(desc + len, size - (size_t)len, "switch:%d ", a);
        }
        if (has_node) {
            int a = 1 + rnd(12);
            leaves *= a;
            len += snprintf(desc + len, size - (size_t)len, "node:%d ", a);
        }
        for (int i = 3 - nin; i < 3; i++) {
            int a = 1 + rnd(5);
            leaves *= a;
            len += snprintf(desc + len, size - (size_t)len, "%s:%d ", inner[i], a);
        }
        if (leaves < minleaves || leaves > 4 * minleaves + 64)
            continue;
        mpitopo_machine_t *m = NULL;
        OK(mpitopo_machine_from_string(desc, &m));
        return m;
    }
}

static void random_launch(const mpitopo_machine_t *m, int p, int *leaf_of_rank, const char **kind)
{
    static const char *const kinds[] = {"block", "rr", "random:1", "random:2", "random:3"};
    int k = rnd(5);
    *kind = kinds[k];
    if (k >= 2) {
        char spec[32];
        snprintf(spec, sizeof spec, "random:%d", rnd(1000000));
        OK(mpitopo_placement(m, p, spec, leaf_of_rank));
    } else {
        OK(mpitopo_placement(m, p, kinds[k], leaf_of_rank));
    }
}

/* ---- (a) the fast search is the linear scan ------------------------------- */

static void check_against_reference(const mpitopo__coll_dist_t *d, int p, const int *leaf, const char *what)
{
    int *fast = malloc((size_t)p * sizeof *fast), *slow = malloc((size_t)p * sizeof *slow);
    for (int h = MPITOPO__COLL_RDMH; h <= MPITOPO__COLL_BGMH; h++) {
        if (h == MPITOPO__COLL_RDMH && (p & (p - 1)) != 0)
            continue;
        OK(mpitopo__coll_order((mpitopo__coll_heur_t)h, d, p, leaf, fast));
        assert_permutation(fast, p, what);
        ref_order((mpitopo__coll_heur_t)h, d, p, leaf, slow);
        for (int j = 0; j < p; j++)
            if (fast[j] != slow[j])
                fail_msg("%s, %s, p = %d: old_of_new[%d] = %d, the linear scan gives %d", what, heur_name[h], p, j,
                         fast[j], slow[j]);
    }
    free(fast);
    free(slow);
}

static void matches_linear_scan_on_trees(void **state)
{
    (void)state;
    int rounds = UNIT_SANITIZED ? 2 : 8;
    for (int round = 0; round < rounds; round++)
        for (int p = 1; p <= 130; p++) {
            char desc[128], what[256];
            mpitopo_machine_t *m = random_machine(p, 0, desc, sizeof desc);
            int *leaf = malloc((size_t)p * sizeof *leaf);
            const char *kind;
            random_launch(m, p, leaf, &kind);
            snprintf(what, sizeof what, "machine \"%s\", %s launch", desc, kind);
            const mpitopo__coll_dist_t d = {m, NULL, NULL};
            check_against_reference(&d, p, leaf, what);
            free(leaf);
            mpitopo_machine_destroy(&m);
        }
}

static void matches_linear_scan_under_networks(void **state)
{
    (void)state;
    static const char *const nets[] = {"fattree:2;4,4;1,2;1,1", "torus:4x4", "mesh:3x5", "dragonfly:2,4,2",
                                       "ktree:2,3", "hhc:3", "torus:3x2x4", "mesh:2x7", "torus:5x1x3",
                                       "fattree:3;2,3,2;1,2,2;1,2,1:nodes=10", "fattree:2;3,4;2,2;2,1", "gpc"};
    int rounds = UNIT_SANITIZED ? 2 : 8;
    for (int round = 0; round < rounds; round++)
        for (int p = 1; p <= 130; p++) {
            char desc[128], what[384];
            mpitopo_machine_t *m = random_machine(p, 1, desc, sizeof desc);
            mpitopo_network_t *net = NULL;
            const char *nd = nets[rnd(12)];
            OK(mpitopo_network_from_string(nd, &net));
            int nnodes, nend, node_level;
            mpitopo_machine_node_level(m, &node_level);
            mpitopo_machine_level(m, node_level, NULL, NULL, &nnodes, NULL, NULL);
            mpitopo_network_size(net, &nend, NULL, NULL);
            /* Node units on random end nodes (some shared: 0 hops apart). */
            int *end = malloc((size_t)nnodes * sizeof *end);
            for (int u = 0; u < nnodes; u++)
                end[u] = rnd(nend);
            int *leaf = malloc((size_t)p * sizeof *leaf);
            const char *kind;
            random_launch(m, p, leaf, &kind);
            snprintf(what, sizeof what, "machine \"%s\", network %s, %s launch", desc, nd, kind);
            const mpitopo__coll_dist_t d = {m, net, end};
            check_against_reference(&d, p, leaf, what);
            if (nnodes <= nend) { /* end_node NULL: node u on end node u; a random injective map */
                const mpitopo__coll_dist_t d0 = {m, net, NULL};
                check_against_reference(&d0, p, leaf, what);
                int *perm = malloc((size_t)nend * sizeof *perm);
                for (int e = 0; e < nend; e++)
                    perm[e] = e;
                for (int e = nend - 1; e > 0; e--) {
                    int j = rnd(e + 1), t = perm[e];
                    perm[e] = perm[j];
                    perm[j] = t;
                }
                const mpitopo__coll_dist_t d1 = {m, net, perm};
                check_against_reference(&d1, p, leaf, what);
                free(perm);
            }
            free(leaf);
            free(end);
            mpitopo_network_destroy(&net);
            mpitopo_machine_destroy(&m);
        }
}

/* ---- distances ---------------------------------------------------------- */

static void distance_values(void **state)
{
    (void)state;
    mpitopo_machine_t *m = NULL;
    OK(mpitopo_machine_from_string("switch:2 node:4 socket:2 core:4", &m));
    const mpitopo__coll_dist_t d = {m, NULL, NULL};
    assert_int_equal(mpitopo__coll_distance(&d, 5, 5), 0);
    assert_int_equal(mpitopo__coll_distance(&d, 0, 3), 1);   /* same socket */
    assert_int_equal(mpitopo__coll_distance(&d, 0, 4), 2);   /* same node */
    assert_int_equal(mpitopo__coll_distance(&d, 0, 8), 3);   /* same switch */
    assert_int_equal(mpitopo__coll_distance(&d, 0, 32), 4);  /* across switches */
    assert_int_equal(mpitopo__coll_distance(&d, 63, 0), 4);
    /* Under a 1-D mesh of 8 end nodes: 3 + the channels between them. */
    mpitopo_network_t *net = NULL;
    OK(mpitopo_network_from_string("mesh:8", &net));
    const mpitopo__coll_dist_t dn = {m, net, NULL};
    assert_int_equal(mpitopo__coll_distance(&dn, 0, 4), 2);
    assert_int_equal(mpitopo__coll_distance(&dn, 0, 8), 3 + 1);
    assert_int_equal(mpitopo__coll_distance(&dn, 0, 63), 3 + 7);
    int end[8] = {0, 0, 1, 2, 3, 4, 5, 7};
    const mpitopo__coll_dist_t de = {m, net, end};
    assert_int_equal(mpitopo__coll_distance(&de, 0, 8), 3); /* two nodes on one end node */
    assert_int_equal(mpitopo__coll_distance(&de, 0, 63), 3 + 7);
    mpitopo_network_destroy(&net);
    mpitopo_machine_destroy(&m);
}

/* ---- (b) the thesis's orders for p = 8 ----------------------------------- */

/* Thesis Alg. 4.2-4.5 (section 4.2.2): the placements (new rank, its
 * reference) in order. */
static const int spec_rdmh[7][2] = {{4, 0}, {2, 0}, {6, 2}, {3, 2}, {7, 3}, {1, 3}, {5, 1}};
static const int spec_rmh[7][2] = {{1, 0}, {2, 1}, {3, 2}, {4, 3}, {5, 4}, {6, 5}, {7, 6}};
static const int spec_bbmh[7][2] = {{1, 0}, {2, 0}, {3, 2}, {4, 0}, {5, 4}, {6, 4}, {7, 6}};
static const int spec_bgmh[7][2] = {{4, 0}, {2, 0}, {6, 4}, {1, 0}, {5, 4}, {3, 2}, {7, 6}};

/* Replay a listed order with the linear scan. */
static void replay(const mpitopo__coll_dist_t *d, const int *leaf, const int (*steps)[2], int *old_of_new)
{
    ref_state_t s = {d, 8, leaf, calloc(8, sizeof(int)), old_of_new};
    for (int r = 1; r < 8; r++)
        s.free_[r] = 1;
    old_of_new[0] = 0;
    for (int t = 0; t < 7; t++)
        ref_place(&s, steps[t][0], steps[t][1]);
    free(s.free_);
}

static void thesis_orders_for_8(void **state)
{
    (void)state;
    const int (*const specs[4])[2] = {spec_rdmh, spec_rmh, spec_bbmh, spec_bgmh};
    /* Flat machine: every free leaf is as close as any other, so the t-th
     * placed rank takes the t-th lowest leaf: the placement order shows. */
    mpitopo_machine_t *flat = NULL;
    OK(mpitopo_machine_from_string("core:8", &flat));
    int block[8] = {0, 1, 2, 3, 4, 5, 6, 7}, got[8], want[8];
    const mpitopo__coll_dist_t df = {flat, NULL, NULL};
    for (int h = 0; h < 4; h++) {
        OK(mpitopo__coll_order((mpitopo__coll_heur_t)h, &df, 8, block, got));
        for (int t = 0; t < 7; t++)
            if (got[specs[h][t][0]] != t + 1)
                fail_msg("%s: rank %d placed %d-th, the thesis places it %d-th", heur_name[h], specs[h][t][0],
                         got[specs[h][t][0]], t + 1);
    }
    /* Hierarchical machines and scrambled launches: the references matter. */
    static const char *const machines[] = {"a:2 b:2 c:2", "node:2 socket:2 core:2", "node:4 core:2",
                                           "node:2 core:4", "x:8"};
    for (int mi = 0; mi < 5; mi++) {
        mpitopo_machine_t *m = NULL;
        OK(mpitopo_machine_from_string(machines[mi], &m));
        const mpitopo__coll_dist_t d = {m, NULL, NULL};
        for (int trial = 0; trial < 20; trial++) {
            int leaf[8];
            for (int i = 0; i < 8; i++)
                leaf[i] = i;
            for (int i = 7; i > 0 && trial > 0; i--) {
                int j = rnd(i + 1), t = leaf[i];
                leaf[i] = leaf[j];
                leaf[j] = t;
            }
            for (int h = 0; h < 4; h++) {
                OK(mpitopo__coll_order((mpitopo__coll_heur_t)h, &d, 8, leaf, got));
                replay(&d, leaf, specs[h], want);
                for (int j = 0; j < 8; j++)
                    if (got[j] != want[j])
                        fail_msg("%s on \"%s\": old_of_new[%d] = %d, the thesis's order gives %d", heur_name[h],
                                 machines[mi], j, got[j], want[j]);
            }
        }
        mpitopo_machine_destroy(&m);
    }
    mpitopo_machine_destroy(&flat);
}

/* ---- (c) permutations, rank 0 fixed, large p --------------------------------- */

static void permutations_at_scale(void **state)
{
    (void)state;
    int p = UNIT_SANITIZED ? 4096 : 16384;
    mpitopo_machine_t *m = NULL;
    mpitopo_network_t *net = NULL;
    char desc[64];
    snprintf(desc, sizeof desc, "node:%d socket:2 core:8", p / 16);
    OK(mpitopo_machine_from_string(desc, &m));
    OK(mpitopo_network_from_string("ktree:16,3", &net));
    int *leaf = malloc((size_t)p * sizeof *leaf), *out = malloc((size_t)p * sizeof *out);
    static const char *const launches[] = {"block", "rr", "random:5"};
    for (int l = 0; l < 3; l++) {
        OK(mpitopo_placement(m, p, launches[l], leaf));
        for (int withnet = 0; withnet < 2; withnet++) {
            const mpitopo__coll_dist_t d = {m, withnet ? net : NULL, NULL};
            for (int h = 0; h < 4; h++) {
                OK(mpitopo__coll_order((mpitopo__coll_heur_t)h, &d, p, leaf, out));
                assert_permutation(out, p, launches[l]);
            }
        }
    }
    free(leaf);
    free(out);
    mpitopo_network_destroy(&net);
    mpitopo_machine_destroy(&m);
}

/* ---- (d) the cost model ---------------------------------------------------- */

static double cost_of(mpitopo__coll_alg_t alg, const mpitopo__coll_dist_t *d, int p, const int *leaf,
                      const int *order, double bytes)
{
    double c = -1;
    OK(mpitopo__coll_cost(alg, d, p, leaf, order, bytes, &c));
    return c;
}

static void cost_model(void **state)
{
    (void)state;
    mpitopo_machine_t *m = NULL;
    OK(mpitopo_machine_from_string("node:16 socket:2 core:4", &m));
    const mpitopo__coll_dist_t d = {m, NULL, NULL};
    int p = 128, *leaf = malloc((size_t)p * sizeof *leaf), *ord = malloc((size_t)p * sizeof *ord);
    /* Hand-checked small case: ring of 4 on "node:16 socket:2 core:4", block: 3 stages, the slowest
     * message 0..3 within a socket (distance 1), 3 -> 0 the same: 3 * 1 * (1 + 1024/1024) = 6. */
    OK(mpitopo_placement(m, 4, "block", leaf));
    assert_true(fabs(cost_of(MPITOPO__COLL_ALG_ALLGATHER_RING, &d, 4, leaf, NULL, 1024) - 6.0) < 1e-12);
    /* RD of 8 in block, 1 KiB blocks: stages 1 and 2 inside a socket (d 1, each message alone leaving its
     * core): 1 * (1 + 1) + 1 * (1 + 2); stage 4 across sockets (d 2) with 4 KiB, the 4 messages of each
     * socket sharing its way out: 2 * (1 + 4 * 4). Total 39. */
    OK(mpitopo_placement(m, 8, "block", leaf));
    assert_true(fabs(cost_of(MPITOPO__COLL_ALG_ALLGATHER_RD, &d, 8, leaf, NULL, 1024) - 39.0) < 1e-12);
    /* Cyclic over nodes: the reorderings lower RD and ring costs. */
    OK(mpitopo_placement(m, p, "rr", leaf));
    for (double bytes = 1; bytes <= 65536; bytes *= 64) {
        OK(mpitopo__coll_order(MPITOPO__COLL_RDMH, &d, p, leaf, ord));
        double id = cost_of(MPITOPO__COLL_ALG_ALLGATHER_RD, &d, p, leaf, NULL, bytes);
        double re = cost_of(MPITOPO__COLL_ALG_ALLGATHER_RD, &d, p, leaf, ord, bytes);
        if (!(re < id))
            fail_msg("rr, RD, %g bytes: RDMH cost %g not below the identity's %g", bytes, re, id);
        OK(mpitopo__coll_order(MPITOPO__COLL_RMH, &d, p, leaf, ord));
        id = cost_of(MPITOPO__COLL_ALG_ALLGATHER_RING, &d, p, leaf, NULL, bytes);
        re = cost_of(MPITOPO__COLL_ALG_ALLGATHER_RING, &d, p, leaf, ord, bytes);
        if (!(re < id))
            fail_msg("rr, ring, %g bytes: RMH cost %g not below the identity's %g", bytes, re, id);
    }
    /* Block: not made worse by RDMH, RMH, BBMH for their algorithms. (BGMH is: it packs the
     * children of a stage into one node, whose link the stage's messages then share, where block
     * spreads them over as many nodes; the MPI layer's guard keeps the original order then, and the
     * thesis applies BGMH inside nodes only.) */
    OK(mpitopo_placement(m, p, "block", leaf));
    static const struct {
        mpitopo__coll_heur_t h;
        mpitopo__coll_alg_t alg;
    } pairs[] = {{MPITOPO__COLL_RDMH, MPITOPO__COLL_ALG_ALLGATHER_RD},
                 {MPITOPO__COLL_RDMH, MPITOPO__COLL_ALG_ALLREDUCE_RD},
                 {MPITOPO__COLL_RMH, MPITOPO__COLL_ALG_ALLGATHER_RING},
                 {MPITOPO__COLL_BBMH, MPITOPO__COLL_ALG_BCAST_BINOMIAL}};
    for (int i = 0; i < 4; i++)
        for (double bytes = 1; bytes <= 65536; bytes *= 64) {
            OK(mpitopo__coll_order(pairs[i].h, &d, p, leaf, ord));
            double id = cost_of(pairs[i].alg, &d, p, leaf, NULL, bytes);
            double re = cost_of(pairs[i].alg, &d, p, leaf, ord, bytes);
            if (re > id * (1 + 1e-12))
                fail_msg("block, %s, %g bytes: cost %g above the identity's %g", heur_name[pairs[i].h], bytes, re,
                         id);
        }
    /* The identity order and NULL agree; Bruck takes any p. */
    for (int j = 0; j < 100; j++)
        ord[j] = j;
    assert_true(cost_of(MPITOPO__COLL_ALG_ALLGATHER_BRUCK, &d, 100, leaf, ord, 8) ==
                cost_of(MPITOPO__COLL_ALG_ALLGATHER_BRUCK, &d, 100, leaf, NULL, 8));
    double c;
    FAILS(mpitopo__coll_cost(MPITOPO__COLL_ALG_ALLGATHER_RD, &d, 100, leaf, NULL, 8, &c), MPITOPO_ERR_ARG,
          "p = 100");
    FAILS(mpitopo__coll_cost(MPITOPO__COLL_ALG_ALLGATHER_RING, &d, 8, leaf, NULL, -1, &c), MPITOPO_ERR_ARG,
          "block_bytes");
    FAILS(mpitopo__coll_cost((mpitopo__coll_alg_t)42, &d, 8, leaf, NULL, 1, &c), MPITOPO_ERR_ARG, "alg = 42");
    FAILS(mpitopo__coll_cost(MPITOPO__COLL_ALG_ALLGATHER_RING, &d, 8, NULL, NULL, 1, &c), MPITOPO_ERR_ARG,
          "leaf_of_rank");
    /* The initComm exchange: nothing to move for the identity; on "block", swapping ranks 1 and 4
     * (sockets 0 and 1 of node 0, distance 2, one 1 KiB message each way leaving its socket alone)
     * costs 2 * (1 + 1) = 4; a permutation that is not one fails. */
    OK(mpitopo_placement(m, 8, "block", leaf));
    for (int j = 0; j < 8; j++)
        ord[j] = j;
    OK(mpitopo__coll_perm_cost(&d, 8, leaf, ord, 1024, &c));
    assert_true(c == 0);
    ord[1] = 4;
    ord[4] = 1;
    OK(mpitopo__coll_perm_cost(&d, 8, leaf, ord, 1024, &c));
    assert_true(fabs(c - 4.0) < 1e-12);
    ord[4] = 9;
    FAILS(mpitopo__coll_perm_cost(&d, 8, leaf, ord, 1024, &c), MPITOPO_ERR_ARG, "old_of_new[4] = 9");
    free(leaf);
    free(ord);
    mpitopo_machine_destroy(&m);
}

/* ---- (e) the patterns ------------------------------------------------------ */

static void totals(const char *desc, double *msgs, double *bytes, int *n)
{
    mpitopo_pattern_t *pat = NULL;
    OK(mpitopo_pattern_from_string(desc, &pat));
    OK(mpitopo_pattern_nprocs(pat, n));
    *msgs = *bytes = 0;
    for (int i = 0; i < *n; i++) {
        int deg;
        const int *dst;
        const double *b, *mm;
        OK(mpitopo_pattern_out_edges(pat, i, &deg, &dst, &b, &mm));
        for (int e = 0; e < deg; e++) {
            if (dst[e] == i)
                fail_msg("%s: self edge at %d", desc, i);
            *msgs += mm[e];
            *bytes += b[e];
        }
    }
    mpitopo_pattern_destroy(&pat);
}

static int ceil_log2(int n)
{
    int k = 0;
    while ((1LL << k) < n)
        k++;
    return k;
}

/* Bytes of the binomial gather: the subtree sizes of every rank but the root. */
static double gather_blocks(int n)
{
    double sum = 0;
    for (int r = 1; r < n; r++) {
        int low = r & -r;
        sum += low < n - r ? low : n - r;
    }
    return sum;
}

static void pattern_counts(void **state)
{
    (void)state;
    char desc[96];
    double msgs, bytes;
    int n;
    for (int N = 1; N <= 130; N++) {
        double B = 1 + N % 7;
        if ((N & (N - 1)) == 0) {
            snprintf(desc, sizeof desc, "coll:allgather-rd:%d:%g", N, B);
            totals(desc, &msgs, &bytes, &n);
            assert_int_equal(n, N);
            assert_true(msgs == (double)N * ceil_log2(N));
            assert_true(bytes == (double)N * (N - 1) * B);
        }
        snprintf(desc, sizeof desc, "coll:allgather-ring:%d:%g", N, B);
        totals(desc, &msgs, &bytes, &n);
        assert_true(msgs == (double)N * (N - 1));
        assert_true(bytes == (double)N * (N - 1) * B);
        snprintf(desc, sizeof desc, "coll:allgather-bruck:%d:%g", N, B);
        totals(desc, &msgs, &bytes, &n);
        assert_true(msgs == (double)N * ceil_log2(N));
        assert_true(bytes == (double)N * (N - 1) * B);
        snprintf(desc, sizeof desc, "coll:bcast-binomial:%d:%g", N, B);
        totals(desc, &msgs, &bytes, &n);
        assert_true(msgs == N - 1);
        assert_true(bytes == (N - 1) * B);
        snprintf(desc, sizeof desc, "coll:gather-binomial:%d:%g", N, B);
        totals(desc, &msgs, &bytes, &n);
        assert_true(msgs == N - 1);
        assert_true(bytes == gather_blocks(N) * B);
        if ((N & (N - 1)) == 0) /* p/2 log2 p blocks for powers of two */
            assert_true(gather_blocks(N) == N / 2.0 * ceil_log2(N));
    }
    /* Default block: one byte. */
    totals("coll:allgather-ring:5", &msgs, &bytes, &n);
    assert_true(bytes == 20);
    /* RD edges are exactly the partners i ^ 2^s. */
    mpitopo_pattern_t *pat = NULL;
    OK(mpitopo_pattern_from_string("coll:allgather-rd:16:2", &pat));
    for (int i = 0; i < 16; i++) {
        int deg;
        const int *dst;
        const double *b, *mm;
        OK(mpitopo_pattern_out_edges(pat, i, &deg, &dst, &b, &mm));
        assert_int_equal(deg, 4);
        for (int e = 0; e < deg; e++) {
            int s = i ^ dst[e];
            assert_true(s == 1 || s == 2 || s == 4 || s == 8);
            assert_true(b[e] == 2.0 * s);
        }
    }
    mpitopo_pattern_destroy(&pat);
}

static void pattern_bad_input(void **state)
{
    (void)state;
    mpitopo_pattern_t *pat = NULL;
    FAILS(mpitopo_pattern_from_string("coll:allgather-rd:12", &pat), MPITOPO_ERR_PARSE, "power of two");
    assert_null(pat);
    FAILS(mpitopo_pattern_from_string("coll:allgather-ring:0", &pat), MPITOPO_ERR_PARSE, "N = \"0\"");
    FAILS(mpitopo_pattern_from_string("coll:allgather-ring:-3", &pat), MPITOPO_ERR_PARSE, "N = \"-3\"");
    FAILS(mpitopo_pattern_from_string("coll:allgather-ring:x", &pat), MPITOPO_ERR_PARSE, "N = \"x\"");
    FAILS(mpitopo_pattern_from_string("coll:allgather-ring:9999999", &pat), MPITOPO_ERR_PARSE, "N = ");
    FAILS(mpitopo_pattern_from_string("coll:allgather-ring:8:-1", &pat), MPITOPO_ERR_PARSE, "BYTES = \"-1\"");
    FAILS(mpitopo_pattern_from_string("coll:allgather-ring:8:abc", &pat), MPITOPO_ERR_PARSE, "BYTES = \"abc\"");
    FAILS(mpitopo_pattern_from_string("coll:allgather-ring:8:", &pat), MPITOPO_ERR_PARSE, "BYTES");
    FAILS(mpitopo_pattern_from_string("coll:allgather-ring:8:1:2", &pat), MPITOPO_ERR_PARSE, "BYTES");
    FAILS(mpitopo_pattern_from_string("coll:allgather-ring:8:1e308", &pat), MPITOPO_ERR_RANGE, "overflows");
    FAILS(mpitopo_pattern_from_string("coll:alltoall-pairwise:8", &pat), MPITOPO_ERR_PARSE, "known: allgather-rd");
    FAILS(mpitopo_pattern_from_string("coll:allgather-ring", &pat), MPITOPO_ERR_PARSE, "coll:ALG:N");
    FAILS(mpitopo_pattern_from_string("coll", &pat), MPITOPO_ERR_PARSE, "coll:ALG:N");
    FAILS(mpitopo_pattern_from_string("nonsense:3", &pat), MPITOPO_ERR_PARSE, "coll:ALG:N");
    assert_null(pat);
}

/* ---- the mappers ------------------------------------------------------------ */

static void mappers(void **state)
{
    (void)state;
    mpitopo_machine_t *m = NULL;
    OK(mpitopo_machine_from_string("node:8 socket:2 core:4", &m));
    mpitopo_pattern_t *pat = NULL;
    OK(mpitopo_pattern_from_string("coll:allgather-ring:64:4096", &pat));
    int rr[64], out[64], ord[64];
    OK(mpitopo_placement(m, 64, "rr", rr));
    mpitopo_map_options_t opt = MPITOPO_MAP_OPTIONS_INIT;
    opt.launch = rr;
    static const char *const names[] = {"rdmh", "rmh", "bbmh", "bgmh"};
    const mpitopo__coll_dist_t d = {m, NULL, NULL};
    for (int h = 0; h < 4; h++) {
        OK(mpitopo_map(names[h], m, pat, &opt, out, NULL));
        OK(mpitopo__coll_order((mpitopo__coll_heur_t)h, &d, 64, rr, ord));
        for (int j = 0; j < 64; j++)
            assert_int_equal(out[j], rr[ord[j]]);
    }
    double id, re;
    OK(mpitopo_metrics_cost(m, pat, rr, MPITOPO_WEIGHT_BYTES, &id));
    OK(mpitopo_map("rmh", m, pat, &opt, out, NULL));
    OK(mpitopo_metrics_cost(m, pat, out, MPITOPO_WEIGHT_BYTES, &re));
    assert_true(re < id);
    FAILS(mpitopo_map("rmh:3", m, pat, &opt, out, NULL), MPITOPO_ERR_ARG, "takes no argument");
    mpitopo_pattern_destroy(&pat);
    OK(mpitopo_pattern_from_string("coll:allgather-bruck:48", &pat));
    FAILS(mpitopo_map("rdmh", m, pat, &opt, out, NULL), MPITOPO_ERR_ARG, "p = 48");
    OK(mpitopo_map("bgmh", m, pat, NULL, out, NULL));
    /* With a network. */
    mpitopo_network_t *net = NULL;
    OK(mpitopo_network_from_string("mesh:8", &net));
    OK(mpitopo_map_network("rmh", m, net, NULL, pat, &opt, out, NULL));
    OK(mpitopo_mapping_check(m, 48, out));
    mpitopo_network_destroy(&net);
    mpitopo_pattern_destroy(&pat);
    mpitopo_machine_destroy(&m);
}

/* ---- bad input and allocation failures ------------------------------------- */

static void bad_input(void **state)
{
    (void)state;
    mpitopo_machine_t *m = NULL;
    OK(mpitopo_machine_from_string("node:2 core:4", &m));
    const mpitopo__coll_dist_t d = {m, NULL, NULL};
    int leaf[8] = {0, 1, 2, 3, 4, 5, 6, 7}, out[8];
    FAILS(mpitopo__coll_order(MPITOPO__COLL_RDMH, &d, 6, leaf, out), MPITOPO_ERR_ARG, "p = 6");
    FAILS(mpitopo__coll_order(MPITOPO__COLL_RMH, &d, 0, leaf, out), MPITOPO_ERR_ARG, "p = 0");
    FAILS(mpitopo__coll_order(MPITOPO__COLL_RMH, &d, 9, leaf, out), MPITOPO_ERR_ARG, "p = 9");
    FAILS(mpitopo__coll_order(MPITOPO__COLL_RMH, &d, 8, NULL, out), MPITOPO_ERR_ARG, "leaf_of_rank");
    FAILS(mpitopo__coll_order((mpitopo__coll_heur_t)7, &d, 8, leaf, out), MPITOPO_ERR_ARG, "h = 7");
    leaf[5] = 2;
    FAILS(mpitopo__coll_order(MPITOPO__COLL_BBMH, &d, 8, leaf, out), MPITOPO_ERR_ARG, "distinct");
    leaf[5] = 8;
    FAILS(mpitopo__coll_order(MPITOPO__COLL_BBMH, &d, 8, leaf, out), MPITOPO_ERR_ARG, "leaf_of_rank[5] = 8");
    leaf[5] = 5;
    mpitopo_network_t *net = NULL;
    OK(mpitopo_network_from_string("mesh:2", &net));
    int end[2] = {0, 2};
    const mpitopo__coll_dist_t dn = {m, net, end};
    FAILS(mpitopo__coll_order(MPITOPO__COLL_BBMH, &dn, 8, leaf, out), MPITOPO_ERR_ARG, "end node 2");
    mpitopo_network_destroy(&net);
    mpitopo_machine_destroy(&m);
}

struct alloc_ctx {
    const mpitopo__coll_dist_t *d;
    const int *leaf;
    int p, h;
};

static int order_op(void *ctx)
{
    struct alloc_ctx *c = ctx;
    int out[64];
    return mpitopo__coll_order((mpitopo__coll_heur_t)c->h, c->d, c->p, c->leaf, out);
}

static int pattern_op(void *ctx)
{
    (void)ctx;
    mpitopo_pattern_t *pat = NULL;
    int rc = mpitopo_pattern_from_string("coll:gather-binomial:37:8", &pat);
    mpitopo_pattern_destroy(&pat);
    return rc;
}

static void allocation_failures(void **state)
{
    (void)state;
    mpitopo_machine_t *m = NULL;
    mpitopo_network_t *net = NULL;
    OK(mpitopo_machine_from_string("node:8 socket:2 core:4", &m));
    OK(mpitopo_network_from_string("torus:2x4", &net));
    int leaf[64];
    OK(mpitopo_placement(m, 64, "rr", leaf));
    for (int withnet = 0; withnet < 2; withnet++) {
        const mpitopo__coll_dist_t d = {m, withnet ? net : NULL, NULL};
        for (int h = 0; h < 4; h++) {
            struct alloc_ctx c = {&d, leaf, 64, h};
            assert_true(unit_each_allocation_fails("mpitopo__coll_order", order_op, &c) > 0);
        }
    }
    assert_true(unit_each_allocation_fails("coll pattern", pattern_op, NULL) > 0);
    mpitopo_network_destroy(&net);
    mpitopo_machine_destroy(&m);
}

/* Levels above the node without a network (leaf switches): latency grows
 * with them, the per-byte cost and the sharing stop at the node (full
 * bisection). Hand-checked on "switch:2 node:2 core:2", block, 1 KiB
 * blocks: RD stage 1 inside a node (d 1, alone) 1 + 1 = 2; stage 2 between
 * the nodes of a switch (d 2, the node's 2 messages sharing its link, 2
 * KiB) 2 + 2 * 2 * 2 = 10; stage 4 between switches (d 3, w 2, still the
 * node's 2 messages, 4 KiB) 3 + 2 * 2 * 4 = 19: 31 (the switch's 4 messages
 * sharing one way out at w = d made it 2 + 10 + 3 * (1 + 4 * 4) = 63). Then
 * recursive doubling cyclic over the nodes of such a machine: RDMH's order
 * costs what the original does, so with its initComm exchange it is never
 * cheaper (SimGrid, 1,024 ranks on a full-bisection fat tree: RDMH was
 * 5-15 % slower there), while on block it is cheaper from 64 B. */
static void cost_model_above_nodes(void **state)
{
    (void)state;
    mpitopo_machine_t *m = NULL;
    OK(mpitopo_machine_from_string("switch:2 node:2 core:2", &m));
    const mpitopo__coll_dist_t d = {m, NULL, NULL};
    int leaf[64], ord[64];
    OK(mpitopo_placement(m, 8, "block", leaf));
    assert_true(fabs(cost_of(MPITOPO__COLL_ALG_ALLGATHER_RD, &d, 8, leaf, NULL, 1024) - 31.0) < 1e-12);
    mpitopo_machine_destroy(&m);
    OK(mpitopo_machine_from_string("switch:4 node:4 core:4", &m));
    const mpitopo__coll_dist_t d4 = {m, NULL, NULL};
    for (int cyclic = 0; cyclic < 2; cyclic++) {
        for (int r = 0; r < 64; r++) /* cyclic: rank r on node r % 16 */
            leaf[r] = cyclic ? (r % 16) * 4 + r / 16 : r;
        OK(mpitopo__coll_order(MPITOPO__COLL_RDMH, &d4, 64, leaf, ord));
        for (double bytes = 8; bytes <= 65536; bytes *= 8) {
            double id = cost_of(MPITOPO__COLL_ALG_ALLGATHER_RD, &d4, 64, leaf, NULL, bytes);
            double re = cost_of(MPITOPO__COLL_ALG_ALLGATHER_RD, &d4, 64, leaf, ord, bytes), perm;
            OK(mpitopo__coll_perm_cost(&d4, 64, leaf, ord, bytes, &perm));
            if (cyclic && re + perm < id)
                fail_msg("cyclic, %g bytes: RDMH %g + initComm %g below the original %g", bytes, re, perm, id);
            if (!cyclic && bytes >= 64 && !(re + perm < id))
                fail_msg("block, %g bytes: RDMH %g + initComm %g not below the original %g", bytes, re, perm, id);
        }
    }
    mpitopo_machine_destroy(&m);
}

/* The linear steps of the hierarchical allgather: the root's messages one
 * after another. Hand-checked on "node:16 socket:2 core:4", 8 ranks of node
 * 0 in block order, 1 KiB: ranks 1-3 share rank 0's socket (d 1): 3 * (1 +
 * 1); ranks 4-7 do not (d 2): 4 * (2 + 2); 22 both ways. Hockney: a linear
 * broadcast never beats the binomial tree; a linear gather neither, inside
 * one socket (p - 1 latencies against log2 p, the same bytes). */
static void cost_model_linear(void **state)
{
    (void)state;
    mpitopo_machine_t *m = NULL;
    OK(mpitopo_machine_from_string("node:16 socket:2 core:4", &m));
    const mpitopo__coll_dist_t d = {m, NULL, NULL};
    int leaf[128];
    OK(mpitopo_placement(m, 8, "block", leaf));
    assert_true(fabs(cost_of(MPITOPO__COLL_ALG_GATHER_LINEAR, &d, 8, leaf, NULL, 1024) - 22.0) < 1e-12);
    assert_true(fabs(cost_of(MPITOPO__COLL_ALG_BCAST_LINEAR, &d, 8, leaf, NULL, 1024) - 22.0) < 1e-12);
    assert_true(cost_of(MPITOPO__COLL_ALG_GATHER_LINEAR, &d, 1, leaf, NULL, 1024) == 0);
    for (double bytes = 1; bytes <= 65536; bytes *= 16) {
        assert_true(cost_of(MPITOPO__COLL_ALG_BCAST_LINEAR, &d, 8, leaf, NULL, bytes) >=
                    cost_of(MPITOPO__COLL_ALG_BCAST_BINOMIAL, &d, 8, leaf, NULL, bytes));
        assert_true(cost_of(MPITOPO__COLL_ALG_GATHER_LINEAR, &d, 4, leaf, NULL, bytes) >=
                    cost_of(MPITOPO__COLL_ALG_GATHER_BINOMIAL, &d, 4, leaf, NULL, bytes));
    }
    /* Any p (no power of two needed); an algorithm past the last fails. */
    OK(mpitopo_placement(m, 100, "rr", leaf));
    assert_true(cost_of(MPITOPO__COLL_ALG_BCAST_LINEAR, &d, 100, leaf, NULL, 8) > 0);
    double c;
    FAILS(mpitopo__coll_cost((mpitopo__coll_alg_t)(MPITOPO__COLL_ALG_BCAST_LINEAR + 1), &d, 8, leaf, NULL, 1, &c),
          MPITOPO_ERR_ARG, "is not an algorithm");
    mpitopo_machine_destroy(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(distance_values),
        cmocka_unit_test(matches_linear_scan_on_trees),
        cmocka_unit_test(matches_linear_scan_under_networks),
        cmocka_unit_test(thesis_orders_for_8),
        cmocka_unit_test(permutations_at_scale),
        cmocka_unit_test(cost_model),
        cmocka_unit_test(cost_model_above_nodes),
        cmocka_unit_test(cost_model_linear),
        cmocka_unit_test(pattern_counts),
        cmocka_unit_test(pattern_bad_input),
        cmocka_unit_test(mappers),
        cmocka_unit_test(bad_input),
        cmocka_unit_test(allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
