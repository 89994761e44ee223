/*
 * Rank 0 stays where it was. Programs read their input and write their
 * output on rank 0, and many check that the process of rank 0 in a new
 * communicator is the one that was rank 0 before; a renumbering that moves
 * it breaks them. A mapping rarely needs to move it: the machine's
 * equivalent units (two nodes, two sockets of a node, two cores of a
 * socket) can be exchanged wholesale without changing any distance, so the
 * mapping is first relabelled, unit by unit from the top, until role 0 lies
 * on the leaf of the process that was rank 0. That is checked, not assumed:
 * the weighted cost (mpitopo_metrics_cost) must be unchanged. When it is
 * not (units of different sizes or costs), rank 0 is pinned anyway at the
 * least cost found, unless the caller allows it to move.
 */
#include "map/map_internal.h"
#include "machine/machine_internal.h"

#include <math.h>
#include <string.h>

static int same_cost(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(1.0, fmax(fabs(a), fabs(b)));
}

/* Exchange the contents (roles) of two units of one level, leaf i of the
 * first with leaf i of the second; 0 when their sizes differ. */
static int swap_units(const mpitopo_machine_t *m, int level, int ua, int ub, int *role_of_leaf, int *mapped)
{
    int fa, na, fb, nb;
    if (mpitopo_machine_unit_leaves(m, level, ua, &fa, &na) != MPITOPO_SUCCESS ||
        mpitopo_machine_unit_leaves(m, level, ub, &fb, &nb) != MPITOPO_SUCCESS || na != nb)
        return 0;
    for (int i = 0; i < na; i++) {
        int ra = role_of_leaf[fa + i], rb = role_of_leaf[fb + i];
        role_of_leaf[fa + i] = rb;
        role_of_leaf[fb + i] = ra;
        if (ra >= 0)
            mapped[ra] = fb + i;
        if (rb >= 0)
            mapped[rb] = fa + i;
    }
    return 1;
}

/* Relabel `mapped` (n roles) unit by unit until role 0 is on `target`;
 * 0 when some pair of units on the way differs in size. */
static int relabel(const mpitopo_machine_t *m, int n, int target, int *role_of_leaf, int *mapped)
{
    for (int l = 0; l < m->nleaves; l++)
        role_of_leaf[l] = -1;
    for (int p = 0; p < n; p++)
        role_of_leaf[mapped[p]] = p;
    for (int guard = 0; mapped[0] != target && guard <= m->nlevels; guard++) {
        int level, ua, ub;
        if (mpitopo_machine_meet_level(m, mapped[0], target, &level) != MPITOPO_SUCCESS ||
            level >= m->nlevels || mpitopo_machine_unit_of(m, level, mapped[0], &ua) != MPITOPO_SUCCESS ||
            mpitopo_machine_unit_of(m, level, target, &ub) != MPITOPO_SUCCESS ||
            !swap_units(m, level, ua, ub, role_of_leaf, mapped))
            return 0;
    }
    return mapped[0] == target;
}

/* Role 0 onto target by exchanging it with the role there (or moving it
 * when the leaf is free). */
static void exchange(int n, int target, int *mapped)
{
    int s = mapped[0];
    for (int p = 1; p < n; p++)
        if (mapped[p] == target) {
            mapped[p] = s;
            break;
        }
    mapped[0] = target;
}

int mpitopo__map_keep_rank0(const mpitopo_machine_t *m, const mpitopo_pattern_t *pattern, mpitopo_weight_t weight,
                            int n, const int *launch, int allow_move, int *mapped, mpitopo__rank0_t *out)
{
    memset(out, 0, sizeof *out);
    if (n < 1 || mapped[0] == launch[0])
        return MPITOPO_SUCCESS;
    int rc = mpitopo_metrics_cost(m, pattern, mapped, weight, &out->cost_mapped);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    out->cost_kept = out->cost_mapped;
    if (allow_move) {
        out->moved = 1;
        return MPITOPO_SUCCESS;
    }
    int *a = mpitopo__malloc_array((size_t)n, sizeof *a);
    int *b = mpitopo__malloc_array((size_t)n, sizeof *b);
    int *role_of_leaf = mpitopo__malloc_array((size_t)m->nleaves, sizeof *role_of_leaf);
    if (!a || !b || !role_of_leaf) {
        rc = MPITOPO_NOMEM("keeping rank 0");
        goto done;
    }
    memcpy(a, mapped, (size_t)n * sizeof *a);
    double ca = INFINITY, cb, cl;
    int relabelled = relabel(m, n, launch[0], role_of_leaf, a);
    if (relabelled && (rc = mpitopo_metrics_cost(m, pattern, a, weight, &ca)) != MPITOPO_SUCCESS)
        goto done;
    if (relabelled && same_cost(ca, out->cost_mapped)) { /* a free relabelling */
        memcpy(mapped, a, (size_t)n * sizeof *a);
        goto done;
    }
    /* It costs: the cheapest of the relabelling, the plain exchange and
     * the launch placement itself (which has rank 0 where it was). */
    memcpy(b, mapped, (size_t)n * sizeof *b);
    exchange(n, launch[0], b);
    if ((rc = mpitopo_metrics_cost(m, pattern, b, weight, &cb)) != MPITOPO_SUCCESS ||
        (rc = mpitopo_metrics_cost(m, pattern, launch, weight, &cl)) != MPITOPO_SUCCESS)
        goto done;
    const int *best = cb <= ca ? b : a;
    double cbest = fmin(ca, cb);
    if (cl <= cbest) {
        best = launch;
        cbest = cl;
    }
    memcpy(mapped, best, (size_t)n * sizeof *mapped);
    out->cost_kept = cbest;
    out->costly = !same_cost(cbest, out->cost_mapped);
done:
    mpitopo__free(a);
    mpitopo__free(b);
    mpitopo__free(role_of_leaf);
    return rc;
}
