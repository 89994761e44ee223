/* The parallel ptram's greedy step, simulated without MPI: L leaders, each
 * with its own load structure and nodes, score the next part on their own
 * nodes with the shared code (map/ptram_greedy.c), the winner by the
 * serial tie rule over all the scores, the winner's sparse increment
 * staged by the others (export/import), as src/mpi/ptram_par.c does. The
 * mapping and every metric equal the serial run's bit for bit, and every
 * leader's loads are the same. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "map/ptram_internal.h"
#include "net_test_util.h"

#include <math.h>
#include <stdio.h>

typedef struct sim {
    const mpitopo_network_t *net;
    int nleaders, max_route;
    int64_t *route;
    int scored;
} sim_t;

/* The route of the items' nodes n -> m (its end nodes). */
typedef struct leader_ctx {
    sim_t *sim;
    const mpitopo__ptram_items_t *it;
} leader_ctx_t;

static const int64_t *leader_route(void *ctx, int n, int m, int *len)
{
    leader_ctx_t *c = ctx;
    mpitopo_network_route(c->sim->net, c->it->end[n], c->it->end[m], c->sim->max_route, c->sim->route, len);
    return c->sim->route;
}

static int sim_greedy(void *ctx, const mpitopo__ptram_items_t *it0, const mpitopo__pload_t *pl0, int *order,
                      int *node)
{
    sim_t *s = ctx;
    int L = s->nleaders, ni = it0->ni, nn = it0->nn;
    int64_t nch;
    mpitopo_network_size(s->net, NULL, &nch, &s->max_route);
    s->route = malloc(((size_t)s->max_route + 1) * sizeof *s->route);
    mpitopo__ptram_items_t *it = malloc((size_t)L * sizeof *it);
    mpitopo__pload_t *pl = malloc((size_t)L * sizeof *pl);
    leader_ctx_t *lc = malloc((size_t)L * sizeof *lc);
    double *conn = calloc((size_t)ni, sizeof *conn), *rest = malloc((size_t)ni * sizeof *rest);
    double *h = malloc((size_t)nn * sizeof *h);
    unsigned char *fit = malloc((size_t)nn * sizeof *fit);
    int64_t *ch = malloc((size_t)nch * sizeof *ch), *dp = malloc((size_t)nch * sizeof *dp);
    double *dl = malloc((size_t)nch * sizeof *dl), sums[2];
    for (int l = 0; l < L; l++) {
        it[l] = *it0;
        it[l].node_of = malloc((size_t)ni * sizeof(int));
        it[l].fill = calloc((size_t)nn, sizeof(int));
        for (int a = 0; a < ni; a++)
            it[l].node_of[a] = -1;
        OK(mpitopo__pload_init(&pl[l], s->net, NULL, NULL));
        memcpy(pl[l].w, pl0->w, sizeof pl0->w);
        memcpy(pl[l].ref, pl0->ref, sizeof pl0->ref);
        lc[l] = (leader_ctx_t){s, &it[l]};
    }
    mpitopo__ptram_greedy_init(&it[0], rest);
    for (int step = 0; step < ni; step++) {
        int p = mpitopo__ptram_greedy_next(&it[0], conn, rest, step), n = -1;
        for (int l = 1; l < L; l++)
            assert_int_equal(mpitopo__ptram_greedy_next(&it[l], conn, rest, step), p);
        if (conn[p] == 0) {
            for (int m = 0; m < nn && n < 0; m++)
                if (mpitopo__ptram_fits(&it[0], p, m))
                    n = m;
        } else {
            s->scored++;
            /* every leader scores its own nodes; the "allgather" is the whole array */
            int w = -1;
            for (int l = 0; l < L; l++) {
                int lo = (int)((int64_t)l * nn / L), hi = (int)((int64_t)(l + 1) * nn / L);
                for (int m = lo; m < hi; m++) {
                    fit[m] = (unsigned char)mpitopo__ptram_fits(&it[l], p, m);
                    h[m] = fit[m] ? mpitopo__ptram_score(&it[l], &pl[l], leader_route, &lc[l], p, m) : INFINITY;
                }
            }
            double best;
            n = mpitopo__ptram_pick(0, nn, fit, h, &best);
            assert_true(n >= 0);
            for (int l = 0; l < L; l++)
                if (n >= (int)((int64_t)l * nn / L) && n < (int)((int64_t)(l + 1) * nn / L))
                    w = l;
            mpitopo__ptram_stage_item(&it[w], &pl[w], leader_route, &lc[w], p, n, -1, +1);
            int64_t k = mpitopo__pload_delta_size(&pl[w]);
            mpitopo__pload_delta_export(&pl[w], ch, dl, dp, sums);
            for (int l = 0; l < L; l++)
                if (l != w)
                    mpitopo__pload_delta_import(&pl[l], k, ch, dl, dp, sums);
        }
        assert_true(n >= 0);
        for (int l = 0; l < L; l++) {
            mpitopo__pload_commit(&pl[l]);
            it[l].node_of[p] = n;
            it[l].fill[n]++;
        }
        mpitopo__ptram_greedy_placed(&it[0], conn, rest, p);
        order[step] = p;
        node[step] = n;
    }
    /* Every leader holds the same loads, bit for bit. */
    mpitopo_network_metrics_t m0, m;
    mpitopo__pload_metrics(&pl[0], &m0);
    for (int l = 0; l < L; l++) {
        mpitopo__pload_metrics(&pl[l], &m);
        double x[5] = {m.hybrid, m.hop_bytes, m.max_congestion, m.nzca, m.nzcv};
        double x0[5] = {m0.hybrid, m0.hop_bytes, m0.max_congestion, m0.nzca, m0.nzcv};
        if (memcmp(x, x0, sizeof x) != 0 || memcmp(pl[l].load, pl[0].load, (size_t)nch * sizeof *pl[0].load) != 0)
            fail_msg("leader %d of %d: loads differ from leader 0's (hybrid %.17g / %.17g)", l, L, m.hybrid,
                     m0.hybrid);
    }
    for (int l = L - 1; l >= 0; l--) {
        mpitopo__pload_free(&pl[l]);
        free(it[l].node_of);
        free(it[l].fill);
    }
    free(it);
    free(pl);
    free(lc);
    free(conn);
    free(rest);
    free(h);
    free(fit);
    free(ch);
    free(dp);
    free(dl);
    free(s->route);
    return MPITOPO_SUCCESS;
}

static void test_simulated_leaders(void **state)
{
    (void)state;
    static const char *const nets[] = {"torus:4x4", "ktree:4,2", "dragonfly:2,4,2", "fattree:2;4,4;1,2;1,1", "gpc"};
    static const char *const specs[] = {"", "part=none", "strict", "norm:k=2", "w=0,1,0,0", "rounds=0"};
    static const char *const pats[] = {"random", "cart:16x8:weights=3,1"};
    int compared = 0, scored = 0;
    for (size_t i = 0; i < sizeof nets / sizeof nets[0]; i++) {
        mpitopo_network_t *net = NULL;
        OK(mpitopo_network_from_string(nets[i], &net));
        int nn;
        OK(mpitopo_network_size(net, &nn, NULL, NULL));
        if (nn > 32)
            nn = 32;
        char desc[64];
        snprintf(desc, sizeof desc, "node:%d core:4", nn);
        mpitopo_machine_t *m = NULL;
        OK(mpitopo_machine_from_string(desc, &m));
        int nprocs = 4 * nn;
        int *a = malloc((size_t)nprocs * sizeof *a), *b = malloc((size_t)nprocs * sizeof *b);
        int *launch = malloc((size_t)nprocs * sizeof *launch);
        for (size_t q = 0; q < sizeof pats / sizeof pats[0]; q++) {
            mpitopo_pattern_t *pat = NULL;
            if (q == 0)
                pat = random_pattern(nprocs, 0.05, 17 * i + 1);
            else if (nprocs == 128)
                OK(mpitopo_pattern_from_string(pats[q], &pat));
            else
                continue;
            OK(mpitopo_placement(m, nprocs, i % 2 ? "random:3" : "block", launch));
            mpitopo_map_options_t opt = MPITOPO_MAP_OPTIONS_INIT;
            opt.launch = launch;
            for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
                mpitopo__ptram_params_t prm;
                OK(mpitopo__ptram_parse(specs[k], &prm));
                mpitopo__ptram_stats_t s1, s2;
                OK(mpitopo__ptram_run(m, pat, &opt, net, NULL, &prm, a, &s1));
                int leaders[3] = {1, 3, nn};
                for (int l = 0; l < 3; l++) {
                    sim_t sim = {.net = net, .nleaders = leaders[l]};
                    prm.greedy = sim_greedy;
                    prm.greedy_ctx = &sim;
                    OK(mpitopo__ptram_run(m, pat, &opt, net, NULL, &prm, b, &s2));
                    if (memcmp(a, b, (size_t)nprocs * sizeof *a) != 0 ||
                        memcmp(&s1.greedy_hybrid, &s2.greedy_hybrid, sizeof(double)) != 0 ||
                        memcmp(&s1.final_hybrid, &s2.final_hybrid, sizeof(double)) != 0)
                        fail_msg("%s, %s, ptram:%s, %d leaders: greedy hybrid %.17g / %.17g, final %.17g / %.17g, "
                                 "mappings %s", nets[i], pats[q], specs[k], leaders[l], s1.greedy_hybrid,
                                 s2.greedy_hybrid, s1.final_hybrid, s2.final_hybrid,
                                 memcmp(a, b, (size_t)nprocs * sizeof *a) ? "differ" : "equal");
                    compared++;
                    scored += sim.scored;
                }
            }
            mpitopo_pattern_destroy(&pat);
        }
        free(a);
        free(b);
        free(launch);
        mpitopo_machine_destroy(&m);
        mpitopo_network_destroy(&net);
    }
    assert_true(compared > 100);
    assert_true(scored > 0);
}

/* The serial loop's tie rule: the lowest metric, the lowest node on a tie,
 * the first that fits when nothing beats it (NaN, infinities). */
static void test_pick(void **state)
{
    (void)state;
    uint64_t s = 7;
    for (int trial = 0; trial < 2000; trial++) {
        int n = 1 + (int)(lcg(&s) % 12), want = -1;
        double h[12], best, wbest = INFINITY;
        unsigned char fit[12];
        for (int i = 0; i < n; i++) {
            fit[i] = lcg(&s) % 4 != 0;
            uint64_t r = lcg(&s) % 6;
            h[i] = r == 5 ? NAN : r == 4 ? INFINITY : (double)r;
        }
        for (int i = 0; i < n; i++)
            if (fit[i] && (want < 0 || h[i] < wbest)) {
                want = i;
                wbest = h[i];
            }
        assert_int_equal(mpitopo__ptram_pick(0, n, fit, h, &best), want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pick),
        cmocka_unit_test(test_simulated_leaders),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
