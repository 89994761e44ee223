/* The incremental hybrid metric of the ptram mapper (ptram_internal.h):
 * channel loads, running sums over the loaded channels and a max segment
 * tree, so a candidate placement or swap is scored from the channels its
 * routes cross, not from every channel of the network. */
#include "map/ptram_internal.h"

#include <math.h>
#include <string.h>

void mpitopo__pload_free(mpitopo__pload_t *pl)
{
    mpitopo__free(pl->cap);
    mpitopo__free(pl->load);
    mpitopo__free(pl->npairs);
    mpitopo__free(pl->tree);
    mpitopo__free(pl->dload);
    mpitopo__free(pl->dpairs);
    mpitopo__free(pl->touched);
    mpitopo__free(pl->kept_load);
    mpitopo__free(pl->kept_pairs);
    mpitopo__free(pl->mark);
    mpitopo__free(pl->route);
    *pl = (mpitopo__pload_t){0};
}

int mpitopo__pload_init(mpitopo__pload_t *pl, const mpitopo_network_t *net, const double *w,
                        const mpitopo_network_metrics_t *ref)
{
    *pl = (mpitopo__pload_t){.net = net};
    int nnodes;
    mpitopo_network_size(net, &nnodes, &pl->nch, &pl->max_route);
    size_t n = (size_t)(pl->nch > 0 ? pl->nch : 1);
    for (pl->size = 1; pl->size < pl->nch; pl->size *= 2)
        ;
    pl->cap = mpitopo__malloc_array(n, sizeof *pl->cap);
    pl->load = mpitopo__calloc(n, sizeof *pl->load);
    pl->npairs = mpitopo__calloc(n, sizeof *pl->npairs);
    pl->tree = mpitopo__calloc(2 * (size_t)pl->size, sizeof *pl->tree);
    pl->dload = mpitopo__calloc(n, sizeof *pl->dload);
    pl->dpairs = mpitopo__calloc(n, sizeof *pl->dpairs);
    pl->kept_load = mpitopo__malloc_array(n, sizeof *pl->kept_load);
    pl->kept_pairs = mpitopo__malloc_array(n, sizeof *pl->kept_pairs);
    pl->touched = mpitopo__malloc_array(n, sizeof *pl->touched);
    pl->mark = mpitopo__calloc(n, 1);
    pl->route = mpitopo__malloc_array((size_t)pl->max_route + 1, sizeof *pl->route);
    if (!pl->cap || !pl->load || !pl->npairs || !pl->tree || !pl->dload || !pl->dpairs || !pl->touched ||
        !pl->kept_load || !pl->kept_pairs ||
        !pl->mark || !pl->route) {
        mpitopo__pload_free(pl);
        return MPITOPO_NOMEM("the channel loads");
    }
    pl->cap_min = INFINITY;
    pl->cap_max = 0;
    for (int64_t c = 0; c < pl->nch; c++) {
        mpitopo_network_channel(net, c, &pl->cap[c], NULL, 0);
        pl->cap_min = pl->cap[c] < pl->cap_min ? pl->cap[c] : pl->cap_min;
        pl->cap_max = pl->cap[c] > pl->cap_max ? pl->cap[c] : pl->cap_max;
    }
    double ones[4] = {1, 1, 1, 1};
    memcpy(pl->w, w ? w : ones, sizeof pl->w);
    double r[4] = {1, 1, 1, 1};
    if (ref) {
        double given[4] = {ref->hop_bytes, ref->max_congestion, ref->nzca, ref->nzcv};
        for (int i = 0; i < 4; i++)
            r[i] = given[i] != 0 ? given[i] : 1;
    }
    memcpy(pl->ref, r, sizeof pl->ref);
    return MPITOPO_SUCCESS;
}

void mpitopo__pload_stage_route(mpitopo__pload_t *pl, const int64_t *route, int len, double bytes, int64_t pairs,
                                int sign)
{
    for (int i = 0; i < len; i++) {
        int64_t c = route[i];
        if (!pl->mark[c]) {
            pl->mark[c] = 1;
            pl->touched[pl->ntouched++] = c;
        }
        pl->dload[c] += sign * bytes;
        pl->dpairs[c] += sign * pairs;
    }
    pl->dhop_bytes += sign * bytes * len;
    pl->ddilation += (double)(sign * pairs) * len;
}

void mpitopo__pload_stage(mpitopo__pload_t *pl, int src, int dst, double bytes, int64_t pairs, int sign)
{
    if (src == dst)
        return;
    int len = 0;
    mpitopo_network_route(pl->net, src, dst, pl->max_route, pl->route, &len);
    mpitopo__pload_stage_route(pl, pl->route, len, bytes, pairs, sign);
}

static double hybrid_of(const mpitopo__pload_t *pl, double hb, double mc, double s1, double s2, int64_t nz)
{
    double avg = nz ? s1 / (double)nz : 0.0;
    double var = nz ? s2 / (double)nz - avg * avg : 0.0;
    if (var < 0)
        var = 0; /* rounding of nearly equal congestions */
    return pl->w[0] * hb / pl->ref[0] + pl->w[1] * mc / pl->ref[1] + pl->w[2] * avg / pl->ref[2] +
           pl->w[3] * var / pl->ref[3];
}

/* The hop-bytes and MC terms alone (NZCA and NZCV are >= 0), MC at least mc. */
static double hybrid_floor(const mpitopo__pload_t *pl, double dhop_bytes, double mc)
{
    return hybrid_of(pl, pl->hop_bytes + dhop_bytes, mc, 0, 0, 0);
}

/* NZCV >= f(z) = b / z - c / z^2 for nz' = z channels with traffic, when
 * the sum of squares is at least b and the sum at most sqrt(c); f is
 * concave in 1 / z, so its least value on [lo, hi] is at an end. */
static double var_floor(double b, double c, double lo, double hi)
{
    double f_lo = b / lo - c / (lo * lo), f_hi = b / hi - c / (hi * hi);
    double f = f_lo < f_hi ? f_lo : f_hi;
    return f > 0 ? f : 0;
}

/*
 * Traffic only added (dhop_bytes > 0 over routes of `hops` channels in
 * all): the congestions grow by D = sum of d = dload / cap in [dhop_bytes
 * / cap_max, dhop_bytes / cap_min] over at most `hops` channels, so MC
 * stays >= the current one, the sum of congestions is s1 + D, the sum of
 * squares grows by at least sum d^2 >= D^2 / hops (x'^2 - x^2 >= d^2), and
 * between nz and nz + hops channels carry traffic: hence bounds of NZCA and
 * NZCV. The hop-bytes term is computed as the staged one is; the others
 * are given a margin (1e-9 of the terms' size) far above what rounding
 * moves either side by.
 */
double mpitopo__pload_add_floor(const mpitopo__pload_t *pl, double dhop_bytes, int64_t hops)
{
    double mc = pl->tree[1], plain = hybrid_floor(pl, dhop_bytes, mc);
    if (hops <= 0 || !(dhop_bytes > 0) || !(pl->cap_min > 0))
        return plain;
    double d_lo = dhop_bytes / pl->cap_max, d_hi = dhop_bytes / pl->cap_min;
    double sum_lo = pl->s1 + d_lo, sum_hi = pl->s1 + d_hi, sq_lo = pl->s2 + d_lo * d_lo / (double)hops;
    int64_t top = pl->nz + hops < pl->nch ? pl->nz + hops : pl->nch;
    double lo = pl->nz > 1 ? (double)pl->nz : 1.0, hi = (double)top > lo ? (double)top : lo;
    double t0 = pl->w[0] * (pl->hop_bytes + dhop_bytes) / pl->ref[0], t1 = pl->w[1] * mc / pl->ref[1];
    double t2 = pl->w[2] * sum_lo / hi / pl->ref[2];
    double t3 = pl->w[3] * var_floor(sq_lo, sum_hi * sum_hi, lo, hi) / pl->ref[3];
    double scale = t0 + t1 + pl->w[2] * sum_hi / lo / pl->ref[2] +
                   pl->w[3] * (sq_lo + sum_hi * sum_hi / lo) / lo / pl->ref[3];
    double floor = t0 + t1 + t2 + t3 - 1e-9 * scale;
    return floor > plain ? floor : plain;
}

/* The new load and congestion of a touched channel. */
static double staged_congestion(const mpitopo__pload_t *pl, int64_t c, double *load, int64_t *pairs)
{
    *pairs = pl->npairs[c] + pl->dpairs[c];
    *load = *pairs == 0 ? 0.0 : pl->load[c] + pl->dload[c];
    return *load / pl->cap[c];
}

static void tree_set(double *tree, int64_t size, int64_t c, double x)
{
    int64_t i = size + c;
    tree[i] = x;
    for (i /= 2; i >= 1; i /= 2) {
        double a = tree[2 * i], b = tree[2 * i + 1];
        tree[i] = a > b ? a : b;
    }
}

void mpitopo__pload_delta_metrics(mpitopo__pload_t *pl, mpitopo_network_metrics_t *m)
{
    double s1 = pl->s1, s2 = pl->s2, grow = 0;
    int64_t nz = pl->nz;
    int shrinks = 0;
    for (int64_t i = 0; i < pl->ntouched; i++) {
        int64_t c = pl->touched[i], pairs;
        double load, x = staged_congestion(pl, c, &load, &pairs);
        double old = pl->tree[pl->size + c];
        if (pl->npairs[c] > 0) {
            s1 -= old;
            s2 -= old * old;
            nz--;
        }
        if (pairs > 0) {
            s1 += x;
            s2 += x * x;
            nz++;
        }
        grow = x > grow ? x : grow;
        /* Only a channel at the maximum going down can lower it. */
        shrinks |= x < old && old == pl->tree[1];
    }
    double mc = pl->tree[1];
    if (shrinks) {
        /* Loads going down: the tree answers for the untouched channels,
         * once the touched ones are set to their new values (then reset). */
        for (int64_t i = 0; i < pl->ntouched; i++) {
            int64_t c = pl->touched[i], pairs;
            double load, x = staged_congestion(pl, c, &load, &pairs);
            tree_set(pl->tree, pl->size, c, x);
        }
        mc = pl->tree[1];
        for (int64_t i = 0; i < pl->ntouched; i++) {
            int64_t c = pl->touched[i];
            tree_set(pl->tree, pl->size, c, pl->npairs[c] > 0 ? pl->load[c] / pl->cap[c] : 0.0);
        }
    } else if (grow > mc) {
        mc = grow;
    }
    double avg = nz ? s1 / (double)nz : 0.0, var = nz ? s2 / (double)nz - avg * avg : 0.0;
    *m = (mpitopo_network_metrics_t){.hop_bytes = pl->hop_bytes + pl->dhop_bytes,
                                     .dilation = pl->dilation + pl->ddilation,
                                     .max_congestion = mc,
                                     .nzca = avg,
                                     .nzcv = var > 0 ? var : 0.0,
                                     .busy_channels = nz};
    m->hybrid = hybrid_of(pl, m->hop_bytes, mc, s1, s2, nz);
}

double mpitopo__pload_delta_hybrid(mpitopo__pload_t *pl)
{
    mpitopo_network_metrics_t m;
    mpitopo__pload_delta_metrics(pl, &m);
    return m.hybrid;
}

void mpitopo__pload_clear(mpitopo__pload_t *pl)
{
    for (int64_t i = 0; i < pl->ntouched; i++) {
        int64_t c = pl->touched[i];
        pl->mark[c] = 0;
        pl->dload[c] = 0;
        pl->dpairs[c] = 0;
    }
    pl->ntouched = 0;
    pl->dhop_bytes = pl->ddilation = 0;
}

void mpitopo__pload_keep(mpitopo__pload_t *pl)
{
    pl->nkept = pl->ntouched;
    for (int64_t i = 0; i < pl->nkept; i++) {
        int64_t c = pl->touched[i];
        pl->kept_load[i] = pl->dload[c];
        pl->kept_pairs[i] = pl->dpairs[c];
    }
    pl->kept_sums[0] = pl->dhop_bytes;
    pl->kept_sums[1] = pl->ddilation;
}

void mpitopo__pload_rewind(mpitopo__pload_t *pl)
{
    for (int64_t i = pl->nkept; i < pl->ntouched; i++) {
        int64_t c = pl->touched[i];
        pl->mark[c] = 0;
        pl->dload[c] = 0;
        pl->dpairs[c] = 0;
    }
    for (int64_t i = 0; i < pl->nkept; i++) {
        int64_t c = pl->touched[i];
        pl->dload[c] = pl->kept_load[i];
        pl->dpairs[c] = pl->kept_pairs[i];
    }
    pl->ntouched = pl->nkept;
    pl->dhop_bytes = pl->kept_sums[0];
    pl->ddilation = pl->kept_sums[1];
}

void mpitopo__pload_commit(mpitopo__pload_t *pl)
{
    for (int64_t i = 0; i < pl->ntouched; i++) {
        int64_t c = pl->touched[i], pairs;
        double load, x = staged_congestion(pl, c, &load, &pairs);
        double old = pl->tree[pl->size + c];
        if (pl->npairs[c] > 0) {
            pl->s1 -= old;
            pl->s2 -= old * old;
            pl->nz--;
        }
        if (pairs > 0) {
            pl->s1 += x;
            pl->s2 += x * x;
            pl->nz++;
        }
        pl->load[c] = load;
        pl->npairs[c] = pairs;
        tree_set(pl->tree, pl->size, c, x);
    }
    pl->hop_bytes += pl->dhop_bytes;
    pl->dilation += pl->ddilation;
    if (pl->dilation == 0) /* nothing left: no rounding residue either */
        pl->hop_bytes = 0;
    if (pl->nz == 0)
        pl->s1 = pl->s2 = 0;
    mpitopo__pload_clear(pl);
}

void mpitopo__pload_resum(mpitopo__pload_t *pl)
{
    pl->s1 = pl->s2 = 0;
    pl->nz = 0;
    for (int64_t c = 0; c < pl->nch; c++)
        if (pl->npairs[c] > 0) {
            double x = pl->load[c] / pl->cap[c];
            pl->s1 += x;
            pl->s2 += x * x;
            pl->nz++;
        }
}

void mpitopo__pload_metrics(const mpitopo__pload_t *pl, mpitopo_network_metrics_t *m)
{
    double avg = pl->nz ? pl->s1 / (double)pl->nz : 0.0;
    double var = pl->nz ? pl->s2 / (double)pl->nz - avg * avg : 0.0;
    *m = (mpitopo_network_metrics_t){0};
    m->hop_bytes = pl->hop_bytes;
    m->dilation = pl->dilation;
    m->max_congestion = pl->tree[1];
    m->nzca = avg;
    m->nzcv = var > 0 ? var : 0.0;
    m->busy_channels = pl->nz;
    m->hybrid = hybrid_of(pl, pl->hop_bytes, pl->tree[1], pl->s1, pl->s2, pl->nz);
}

int64_t mpitopo__pload_hottest(const mpitopo__pload_t *pl)
{
    if (!(pl->tree[1] > 0))
        return -1;
    int64_t i = 1;
    while (i < pl->size)
        i = pl->tree[2 * i] == pl->tree[i] ? 2 * i : 2 * i + 1;
    return i - pl->size;
}

int64_t mpitopo__pload_delta_size(const mpitopo__pload_t *pl)
{
    return pl->ntouched;
}

void mpitopo__pload_delta_export(const mpitopo__pload_t *pl, int64_t *channel, double *dload, int64_t *dpairs,
                                 double *sums)
{
    for (int64_t i = 0; i < pl->ntouched; i++) {
        int64_t c = pl->touched[i];
        channel[i] = c;
        dload[i] = pl->dload[c];
        dpairs[i] = pl->dpairs[c];
    }
    sums[0] = pl->dhop_bytes;
    sums[1] = pl->ddilation;
}

void mpitopo__pload_delta_import(mpitopo__pload_t *pl, int64_t n, const int64_t *channel, const double *dload,
                                 const int64_t *dpairs, const double *sums)
{
    for (int64_t i = 0; i < n; i++) {
        int64_t c = channel[i];
        if (!pl->mark[c]) {
            pl->mark[c] = 1;
            pl->touched[pl->ntouched++] = c;
        }
        pl->dload[c] += dload[i];
        pl->dpairs[c] += dpairs[i];
    }
    pl->dhop_bytes += sums[0];
    pl->ddilation += sums[1];
}
