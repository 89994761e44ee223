/*
 * Mapper "rb": recursive bisection of the part graph and the network
 * together (one of LibTopoMap's strategies, Hoefler and Snir, ICS 2011; a
 * comparator of the thesis, ch. 3). The nodes are halved (the lower half
 * by count, ties by index) along the axis of two far-apart nodes: a is the
 * node farthest from the first, b the one farthest from a, and nodes go
 * by route cost to a minus route cost to b. The parts are halved to match
 * exactly (as many parts of each size as the nodes' half has nodes of it):
 * grown from the part least tied to the rest, adding the part whose move
 * cuts the fewest bytes, then improved by swaps of a part from each side
 * (same size, the best gain of each side) while the cut falls. Each half of
 * the parts goes onto the matching half of the nodes, recursively, down to
 * one part on one node. Deterministic; O(parts^2) per level.
 */
#include "map/netmap_internal.h"

#include <stdlib.h>

typedef struct rb {
    const mpitopo__netmap_t *nm;
    int *group;         /* group id of every part of the current set */
    unsigned char *in1; /* the part is on side 1 */
    double *to1, *tot;  /* bytes to side 1, to the whole set */
    int *need;          /* per size: how many parts side 1 still needs */
    int *besty;         /* per size: the best part of side 2 to swap */
    int *tmp;           /* scratch, nn entries */
    struct key { double key; int n; } *keys;
    int next_group;
    int *node_of;
} rb_t;

static int by_key(const void *x, const void *y)
{
    const struct key *a = x, *b = y;
    return a->key != b->key ? (a->key < b->key ? -1 : 1) : (a->n > b->n) - (a->n < b->n);
}

static int farthest(const mpitopo__netmap_t *nm, const int *t, int nt, int from)
{
    int best = t[0];
    for (int i = 1; i < nt; i++)
        if (mpitopo__netmap_dist(nm, from, t[i]) > mpitopo__netmap_dist(nm, from, best))
            best = t[i];
    return best;
}

/* Sort the nodes t along the axis a -> b; side 1 is the first nt / 2. */
static void split_nodes(rb_t *r, int *t, int nt)
{
    const mpitopo__netmap_t *nm = r->nm;
    int a = farthest(nm, t, nt, t[0]), b = farthest(nm, t, nt, a);
    for (int i = 0; i < nt; i++) {
        r->keys[i].key = mpitopo__netmap_dist(nm, a, t[i]) - mpitopo__netmap_dist(nm, b, t[i]);
        r->keys[i].n = t[i];
    }
    qsort(r->keys, (size_t)nt, sizeof *r->keys, by_key);
    for (int i = 0; i < nt; i++)
        t[i] = r->keys[i].n;
}

/* Move part x to side `side`, keeping to1 of its neighbours in the set. */
static void move(rb_t *r, int x, int side, int g)
{
    const mpitopo__netmap_t *nm = r->nm;
    r->in1[x] = (unsigned char)side;
    for (int64_t e = nm->goff[x]; e < nm->goff[x + 1]; e++)
        if (r->group[nm->gadj[e]] == g)
            r->to1[nm->gadj[e]] += side ? nm->gw[e] : -nm->gw[e];
}

static double edge(const mpitopo__netmap_t *nm, int x, int y)
{
    for (int64_t e = nm->goff[x]; e < nm->goff[x + 1]; e++)
        if (nm->gadj[e] == y)
            return nm->gw[e];
    return 0;
}

/* Grow side 1 to n1 parts of the sizes the nodes' side 1 has. */
static void grow(rb_t *r, const int *s, int ns, int n1, int g)
{
    const mpitopo__netmap_t *nm = r->nm;
    for (int k = 0; k < n1; k++) {
        int best = -1;
        double best_gain = 0;
        for (int i = 0; i < ns; i++) {
            int x = s[i];
            if (r->in1[x] || r->need[nm->cap[x]] <= 0)
                continue;
            /* the first part: the one least tied to the set */
            double gain = k == 0 ? -r->tot[x] : 2 * r->to1[x] - r->tot[x];
            if (best < 0 || gain > best_gain) {
                best = x;
                best_gain = gain;
            }
        }
        r->need[nm->cap[best]]--;
        move(r, best, 1, g);
    }
}

/* Swap the best part of each side (same size) while the cut falls: per
 * round the best partner of every size on side 2 is found once. */
static void improve(rb_t *r, const int *s, int ns, int g)
{
    const mpitopo__netmap_t *nm = r->nm;
    for (int guard = 0; guard < ns; guard++) {
        for (int i = 0; i < ns; i++)
            r->besty[nm->cap[s[i]]] = -1;
        for (int j = 0; j < ns; j++) {
            int c = s[j], *y = &r->besty[nm->cap[c]];
            if (!r->in1[c] && (*y < 0 || 2 * r->to1[c] - r->tot[c] > 2 * r->to1[*y] - r->tot[*y]))
                *y = c;
        }
        int bx = -1, by = -1;
        double gain = 0;
        for (int i = 0; i < ns; i++) {
            int x = s[i], y = r->besty[nm->cap[x]];
            if (!r->in1[x] || y < 0)
                continue;
            double gxy = r->tot[x] - 2 * r->to1[x] + 2 * r->to1[y] - r->tot[y] - 2 * edge(nm, x, y);
            if (gxy > gain) {
                bx = x;
                by = y;
                gain = gxy;
            }
        }
        /* a gain lost in rounding is none: no swap back and forth */
        if (bx < 0 || gain <= 1e-12 * (r->tot[bx] + r->tot[by]))
            return;
        move(r, bx, 0, g);
        move(r, by, 1, g);
    }
}

/* Parts s[0..ns) onto nodes t[0..ns): exactly as many of each size. */
static void bisect(rb_t *r, int *s, int *t, int n)
{
    const mpitopo__netmap_t *nm = r->nm;
    if (n == 1) {
        r->node_of[s[0]] = t[0];
        return;
    }
    split_nodes(r, t, n);
    int n1 = n / 2, g = r->next_group++;
    for (int i = 0; i < n1; i++)
        r->need[nm->cap[t[i]]]++;
    for (int i = 0; i < n; i++) {
        r->group[s[i]] = g;
        r->in1[s[i]] = 0;
        r->to1[s[i]] = 0;
    }
    for (int i = 0; i < n; i++) {
        int x = s[i];
        r->tot[x] = 0;
        for (int64_t e = nm->goff[x]; e < nm->goff[x + 1]; e++)
            if (r->group[nm->gadj[e]] == g)
                r->tot[x] += nm->gw[e];
    }
    grow(r, s, n, n1, g);
    improve(r, s, n, g);
    /* side 1 first, both in their order */
    int k = 0;
    for (int i = 0; i < n; i++)
        if (r->in1[s[i]])
            r->tmp[k++] = s[i];
    for (int i = 0; i < n; i++)
        if (!r->in1[s[i]])
            r->tmp[k++] = s[i];
    for (int i = 0; i < n; i++)
        s[i] = r->tmp[i];
    bisect(r, s, t, n1);
    bisect(r, s + n1, t + n1, n - n1);
}

static int rb_place(const mpitopo__netmap_t *nm, int *node_of)
{
    int nn = nm->nn, maxcap = 0;
    for (int n = 0; n < nn; n++)
        maxcap = nm->cap[n] > maxcap ? nm->cap[n] : maxcap;
    rb_t r = {.nm = nm, .node_of = node_of};
    r.group = mpitopo__malloc_array((size_t)nn, sizeof *r.group);
    r.in1 = mpitopo__malloc_array((size_t)nn, 1);
    r.to1 = mpitopo__malloc_array((size_t)nn, sizeof *r.to1);
    r.tot = mpitopo__malloc_array((size_t)nn, sizeof *r.tot);
    r.need = mpitopo__calloc((size_t)maxcap + 1, sizeof *r.need);
    r.besty = mpitopo__calloc((size_t)maxcap + 1, sizeof *r.besty);
    r.tmp = mpitopo__malloc_array((size_t)nn, sizeof *r.tmp);
    r.keys = mpitopo__malloc_array((size_t)nn, sizeof *r.keys);
    int *s = mpitopo__malloc_array((size_t)nn, sizeof *s), *t = mpitopo__malloc_array((size_t)nn, sizeof *t);
    int rc = r.group && r.in1 && r.to1 && r.tot && r.need && r.besty && r.tmp && r.keys && s && t
                 ? MPITOPO_SUCCESS
                 : MPITOPO_NOMEM("the bisection");
    if (rc == MPITOPO_SUCCESS) {
        for (int i = 0; i < nn; i++) {
            s[i] = t[i] = i;
            r.group[i] = -1;
        }
        bisect(&r, s, t, nn);
    }
    void *arrays[] = {r.group, r.in1, r.to1, r.tot, r.need, r.besty, r.tmp, r.keys, s, t};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        mpitopo__free(arrays[i]);
    return rc;
}

int mpitopo__map_netrb(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern, const char *args,
                       const mpitopo_map_options_t *options, const mpitopo__map_net_t *net, int *leaf_of_proc)
{
    (void)args;
    return mpitopo__netmap_run("rb", rb_place, machine, pattern, options, net, leaf_of_proc);
}
