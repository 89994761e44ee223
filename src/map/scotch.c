/*
 * Mapper "scotch": Scotch's static mapping (SCOTCH_graphMap) of the
 * symmetrised pattern onto a tree-leaf architecture of the machine, then a
 * balance repair, as Scotch balances loads only within a tolerance.
 *
 * The architecture. SCOTCH_archTleaf describes a regular tree: one arity per
 * level and one link cost per level; the distance of two leaves is the sum
 * of the link costs from their meet level down (checked against Scotch 7.0:
 * links 100, 10, 1 give distances 111, 11, 1), so link[l] = cost[l] -
 * cost[l+1] reproduces the machine's costs exactly when costs decrease down
 * the tree (they are clamped at 0 otherwise, which then overstates the upper
 * levels). Irregular machines (different arities, partial nodes) and runs
 * with fewer processes than leaves use the regular enclosing tree (largest
 * arity of each level) restricted by SCOTCH_archSub to the leaves in use: the
 * first nprocs leaves, the compact choice a block launch makes. Distances in
 * the sub-architecture are those of the enclosing tree, which are the
 * machine's, so nothing is approximated but the cost rounding to integers.
 *
 * Errors. Scotch reports through SCOTCH_errorPrint and SCOTCH_errorPrintW,
 * which the application must provide (Debian's libscotcherr prints them,
 * libscotcherrexit also exits). The library must never exit, so it defines
 * both here: errors are recorded and returned as mpitopo errors, warnings go
 * to the log. Like every internal symbol they are hidden, never exported:
 * Scotch's static archive is linked into libmpitopo.so (src/CMakeLists.txt),
 * so its calls bind to these definitions at link time.
 */
#include "machine/machine_internal.h"
#include "map/map_internal.h"
#include "pattern/pattern_internal.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <scotch.h>

_Static_assert(sizeof(SCOTCH_Num) == sizeof(int), "the scotch mapper passes int arrays as SCOTCH_Num "
                                                  "(Debian's libscotch-dev default)");

/* Scotch may report from its own threads: one message, under a lock. */
static pthread_mutex_t message_lock = PTHREAD_MUTEX_INITIALIZER;
static char message[512];

void SCOTCH_errorPrint(const char *const errstr, ...)
{
    va_list ap;
    va_start(ap, errstr);
    pthread_mutex_lock(&message_lock);
    vsnprintf(message, sizeof message, errstr, ap);
    pthread_mutex_unlock(&message_lock);
    va_end(ap);
}

void SCOTCH_errorPrintW(const char *const errstr, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, errstr);
    vsnprintf(buf, sizeof buf, errstr, ap);
    va_end(ap);
    mpitopo__log(2, "scotch warning: %s", buf);
}

static void clear_message(void)
{
    pthread_mutex_lock(&message_lock);
    message[0] = '\0';
    pthread_mutex_unlock(&message_lock);
}

static int scotch_failed(const char *call)
{
    char text[sizeof message];
    pthread_mutex_lock(&message_lock);
    memcpy(text, message, sizeof text);
    message[0] = '\0';
    pthread_mutex_unlock(&message_lock);
    return MPITOPO_FAIL_AS(MPITOPO_ERR_INTERNAL, "mpitopo_map", "scotch: %s failed: %s", call,
                          text[0] ? text : "(Scotch gave no message)");
}

/* ---- architecture -------------------------------------------------------- */

/* Integer costs of the n tree levels: kept when they are integers up to
 * 1024, else scaled so the largest is 1024 (Scotch multiplies them by edge
 * weights in 32 bits). */
static void link_costs(const double *cost, int n, SCOTCH_Num *link, long long *maxdist)
{
    double top = 0;
    int integral = 1;
    for (int l = 0; l < n; l++) {
        top = cost[l] > top ? cost[l] : top;
        integral &= cost[l] == floor(cost[l]);
    }
    double scale = integral && top <= 1024 ? 1.0 : top > 0 ? 1024 / top : 0;
    long long below = 0;
    for (int l = n - 1; l >= 0; l--) {
        long long c = llround(cost[l] * scale);
        link[l] = c > below ? (SCOTCH_Num)(c - below) : 0;
        below += link[l];
    }
    *maxdist = below > 1 ? below : 1;
}

/* Largest number of children of a unit of level l-1 in level l. */
static int max_arity(const mpitopo_machine_t *m, int l)
{
    if (l == 0)
        return m->nunits[0];
    int best = 1;
    for (int u = 0; u < m->nunits[l - 1]; u++) {
        int lo = m->unit[l][m->first[l - 1][u]], hi = m->unit[l][m->first[l - 1][u + 1] - 1];
        best = hi - lo + 1 > best ? hi - lo + 1 : best;
    }
    return best;
}

/* Terminal number of `leaf` in the regular enclosing tree: its child index
 * at every level, in mixed radix (a level of arity 1 adds no digit). */
static SCOTCH_Num terminal_of(const mpitopo_machine_t *m, const SCOTCH_Num *arity, int leaf)
{
    long long t = 0;
    for (int l = 0; l < m->nlevels; l++) {
        int u = m->unit[l][leaf];
        int first_sibling = l == 0 ? 0 : m->unit[l][m->first[l - 1][m->unit[l - 1][leaf]]];
        t = t * arity[l] + (u - first_sibling);
    }
    return (SCOTCH_Num)t;
}

/*
 * The tree of the machine, restricted to the first nprocs leaves when that
 * is not the whole tree (*restricted then says to use `sub`). Sub-architecture
 * domain i is leaf i.
 *
 * Levels of arity 1 are left out: Scotch's tree-leaf levels must have at
 * least 2 children (its file reader rejects fewer) and SCOTCH_graphMap dies
 * of a division by zero on an inner level of arity 1 ("switch:2 node:1
 * core:4", every leaf used). No two leaves first differ at such a level, so
 * the distances of the others are unchanged: the links are computed from
 * the costs of the levels kept.
 */
static int build_arch(const mpitopo_machine_t *m, int nprocs, SCOTCH_Arch *tree, SCOTCH_Arch *sub,
                      int *restricted, long long *maxdist)
{
    SCOTCH_Num arity[MPITOPO_MAX_LEVELS], kept_arity[MPITOPO_MAX_LEVELS], link[MPITOPO_MAX_LEVELS];
    double kept_cost[MPITOPO_MAX_LEVELS];
    long long terminals = 1;
    int nkept = 0;
    for (int l = 0; l < m->nlevels; l++) {
        arity[l] = max_arity(m, l);
        terminals *= arity[l];
        if (terminals > SCOTCH_NUMMAX)
            return MPITOPO_FAIL_AS(MPITOPO_ERR_UNSUPPORTED, "mpitopo_map", "scotch: the regular tree enclosing the machine "
                                                           "has more than %d leaves", (int)SCOTCH_NUMMAX);
        if (arity[l] < 2)
            continue;
        kept_arity[nkept] = arity[l];
        kept_cost[nkept++] = m->cost[l];
    }
    if (nkept == 0) /* one leaf: the caller maps a single process itself */
        return MPITOPO_FAIL_AS(MPITOPO_ERR_INTERNAL, "mpitopo_map", "scotch: the machine has a single leaf");
    link_costs(kept_cost, nkept, link, maxdist);
    if (SCOTCH_archTleaf(tree, nkept, kept_arity, link) != 0)
        return scotch_failed("SCOTCH_archTleaf");
    *restricted = nprocs < m->nleaves || terminals != m->nleaves;
    if (!*restricted)
        return MPITOPO_SUCCESS;
    SCOTCH_Num *term = mpitopo__malloc_array((size_t)nprocs, sizeof *term);
    if (!term)
        return MPITOPO_NOMEM("the sub-architecture terminals");
    for (int leaf = 0; leaf < nprocs; leaf++)
        term[leaf] = terminal_of(m, arity, leaf);
    int rc = SCOTCH_archSub(sub, tree, nprocs, term) == 0 ? MPITOPO_SUCCESS : scotch_failed("SCOTCH_archSub");
    mpitopo__free(term);
    return rc;
}

/* ---- mapping ------------------------------------------------------------- */

/* SCOTCH_graphMap of g onto arch, in a context of its own so the seed is
 * ours and Scotch's global random state is left alone. */
static int run_map(const mpitopo__bk_graph_t *g, const SCOTCH_Arch *arch, uint64_t seed, SCOTCH_Num *part)
{
    SCOTCH_Graph graph, bound;
    SCOTCH_Strat strat;
    SCOTCH_Context ctx;
    int rc = MPITOPO_SUCCESS;
    int have_graph = SCOTCH_graphInit(&graph) == 0, have_bound = SCOTCH_graphInit(&bound) == 0;
    int have_strat = SCOTCH_stratInit(&strat) == 0, have_ctx = SCOTCH_contextInit(&ctx) == 0;
    if (!have_graph || !have_bound || !have_strat || !have_ctx) {
        rc = scotch_failed("initialisation");
        goto cleanup;
    }
    if (SCOTCH_graphBuild(&graph, 0, g->n, g->xadj, NULL, NULL, NULL, g->xadj[g->n], g->adj, g->wgt) != 0) {
        rc = scotch_failed("SCOTCH_graphBuild");
        goto cleanup;
    }
    SCOTCH_contextRandomClone(&ctx);
    SCOTCH_contextRandomSeed(&ctx, (SCOTCH_Num)(seed % (uint64_t)SCOTCH_NUMMAX));
    /* One thread, deterministic: every process of an MPI job maps on its
     * own (the cart mapper runs Scotch too) and must get the same result,
     * and a node full of processes must not each start a thread per core
     * (Scotch's default), which also stalled its barriers on a loaded
     * machine (test_cart: 3 s of CPU, 30 to 90 s of wall time). */
    if (SCOTCH_contextThreadSpawn(&ctx, 1, NULL) != 0 ||
        SCOTCH_contextOptionSetNum(&ctx, SCOTCH_OPTIONNUMDETERMINISTIC, 1) != 0) {
        rc = scotch_failed("the Scotch context");
        goto cleanup;
    }
    if (SCOTCH_contextBindGraph(&ctx, &graph, &bound) != 0) {
        rc = scotch_failed("SCOTCH_contextBindGraph");
        goto cleanup;
    }
    if (SCOTCH_stratGraphMapBuild(&strat, SCOTCH_STRATDEFAULT, g->n, 0.01) != 0) {
        rc = scotch_failed("SCOTCH_stratGraphMapBuild");
        goto cleanup;
    }
    if (SCOTCH_graphMap(&bound, arch, &strat, part) != 0)
        rc = scotch_failed("SCOTCH_graphMap");
cleanup:
    if (have_bound)
        SCOTCH_graphExit(&bound);
    if (have_ctx)
        SCOTCH_contextExit(&ctx);
    if (have_strat)
        SCOTCH_stratExit(&strat);
    if (have_graph)
        SCOTCH_graphExit(&graph);
    return rc;
}

/* From Scotch's domains to exact capacities: repair every level above the
 * leaves top-down, then give out the leaves. */
static int repair(const mpitopo_machine_t *m, const mpitopo__bk_graph_t *g, int *leaf)
{
    int rc = MPITOPO_SUCCESS;
    for (int l = 0; l + 1 < m->nlevels && rc == MPITOPO_SUCCESS; l++)
        rc = mpitopo__bk_repair_level(m, g, g->n, l, leaf);
    return rc == MPITOPO_SUCCESS ? mpitopo__bk_assign_leaves(m, g->n, leaf) : rc;
}

static int map_graph(const mpitopo_machine_t *m, const mpitopo_pattern_t *pattern,
                     const mpitopo_map_options_t *options, SCOTCH_Arch *tree, SCOTCH_Arch *sub, int *leaf)
{
    int nprocs = pattern->nprocs, restricted = 0;
    long long maxdist = 1;
    mpitopo__bk_graph_t g = {0};
    int rc = build_arch(m, nprocs, tree, sub, &restricted, &maxdist);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__bk_graph_build(pattern, options->weight, (1LL << 30) / maxdist, &g);
    if (rc == MPITOPO_SUCCESS && g.xadj[nprocs] == 0)
        rc = mpitopo__place_block(m, nprocs, leaf); /* no edge: every placement costs 0 */
    else if (rc == MPITOPO_SUCCESS)
        rc = run_map(&g, restricted ? sub : tree, options->seed, leaf);
    /* Domain numbers are leaves: sub-architecture domain i is leaf i, and a
     * full regular tree numbers its terminals as the machine its leaves. */
    for (int p = 0; rc == MPITOPO_SUCCESS && p < nprocs; p++)
        if (leaf[p] < 0 || leaf[p] >= nprocs)
            rc = MPITOPO_FAIL_AS(MPITOPO_ERR_INTERNAL, "mpitopo_map", "scotch: process %d mapped to domain %d, "
                                                      "outside [0, %d)", p, leaf[p], nprocs);
    if (rc == MPITOPO_SUCCESS && g.xadj[nprocs] > 0)
        rc = repair(m, &g, leaf);
    mpitopo__bk_graph_free(&g);
    return rc;
}

int mpitopo__map_scotch(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern, const char *args,
                        const mpitopo_map_options_t *options, int *leaf_of_proc)
{
    (void)args;
    if (pattern->nprocs == 1) {
        leaf_of_proc[0] = 0;
        return MPITOPO_SUCCESS;
    }
    SCOTCH_Arch tree, sub;
    int have_tree = SCOTCH_archInit(&tree) == 0, have_sub = SCOTCH_archInit(&sub) == 0;
    clear_message();
    int rc = have_tree && have_sub ? map_graph(machine, pattern, options, &tree, &sub, leaf_of_proc)
                                   : scotch_failed("SCOTCH_archInit");
    if (have_sub)
        SCOTCH_archExit(&sub);
    if (have_tree)
        SCOTCH_archExit(&tree);
    return rc;
}
