/*
 * The parallel "ptram" mapper (S. H. Mirsadeghi, PhD thesis, Queen's
 * University 2017, section 3.3.2: Alg. 3.1 run by one leader per node, the
 * metric values gathered by MPI_Allgather). The node leaders
 * (leader_comm, rank 0 of comm among them) run the greedy step together:
 * at every step each leader scores the next part on the nodes it owns (its
 * own node when there is one leader per node) with the serial scoring code
 * (map/ptram_greedy.c), one allgather of every node's (fits, metric) per
 * step gives every leader the winner by the serial loop's rule, and the
 * winner broadcasts its sparse load increment (channel, load, pairs), which
 * every leader stages and commits: each leader computes routes from and to
 * its own nodes only, and holds the channel loads, the parts' graph and
 * O(nodes) routes.
 *
 * Everything else runs on rank 0 with the serial code: the partition, the
 * tree mapper's start, the refinement, the placement inside the nodes and
 * the never-worse guard. Rank 0 replays the steps into its own structure,
 * so the mapping is exactly mpitopo_map_network's. Every leader's loads
 * are bit for bit rank 0's: the increments travel as the doubles the
 * winner staged, in the order it touched them.
 *
 * Protocol over `leaders`, rank 0 the root: a header (1: a greedy follows,
 * with its sizes; 0: released), an allreduce of whether every leader could
 * allocate, the parts' graph, then the steps.
 */
#include "mpi/ptram_par.h"

#include "machine/machine_internal.h"
#include "map/map_internal.h"
#include "map/ptram_internal.h"
#include "pattern/pattern_internal.h"

#include <limits.h>
#include <math.h>
#include <string.h>

enum { HDR_GO, HDR_NI, HDR_NN, HDR_EXACT, HDR_NEDGES, HDR_LEN };

/* One leader's state: the items (parts) and their graph, its nodes
 * [lo, hi) with their routes (cached both ways when they fit), the loads. */
typedef struct leader {
    MPI_Comm comm;
    int rank, size, lo, hi, max_route;
    const mpitopo_network_t *net;
    mpitopo__ptram_items_t it;
    mpitopo__pload_t pl;
    int64_t *route_out, *route_in, *route_tmp; /* [(n - lo) * nn + m] * max_route */
    signed char *len_out, *len_in;
    double *conn, *rest, *h, *gathered, *packed;
    unsigned char *fit;
    int *counts, *displs; /* of the allgather: 2 doubles per node */
    int64_t *dch, *dpairs;
    double *dload;
    int64_t mem;
    mpitopo__ptram_par_stats_t *st;
} leader_t;

/* Leader q's nodes: a block of nn over the leaders, in rank order. */
static int block_lo(int q, int nn, int size)
{
    return (int)((int64_t)q * nn / size);
}

static double now(void)
{
    return PMPI_Wtime();
}

static void *lalloc(leader_t *l, size_t n, size_t size)
{
    l->mem += (int64_t)(n * size);
    return mpitopo__malloc_array(n ? n : 1, size);
}

/* A route with n or m among this leader's nodes. */
static const int64_t *route_cb(void *ctx, int n, int m, int *len)
{
    leader_t *l = ctx;
    int nn = l->it.nn, own = n >= l->lo && n < l->hi;
    int64_t *r;
    signed char *lp;
    if (!l->route_out || (!own && (m < l->lo || m >= l->hi))) {
        mpitopo_network_route(l->net, l->it.end[n], l->it.end[m], l->max_route, l->route_tmp, len);
        return l->route_tmp;
    }
    size_t at = own ? (size_t)(n - l->lo) * (size_t)nn + (size_t)m : (size_t)(m - l->lo) * (size_t)nn + (size_t)n;
    r = (own ? l->route_out : l->route_in) + at * (size_t)l->max_route;
    lp = (own ? l->len_out : l->len_in) + at;
    if (*lp < 0) {
        mpitopo_network_route(l->net, l->it.end[n], l->it.end[m], l->max_route, r, len);
        *lp = (signed char)*len;
    }
    *len = *lp;
    return r;
}

/* The route cache of this leader's nodes: at most 16 MiB, else routes are
 * computed each time (only speed differs). */
static void setup_routes(leader_t *l)
{
    size_t n = (size_t)(l->hi - l->lo) * (size_t)l->it.nn, mr = (size_t)(l->max_route ? l->max_route : 1);
    if (l->max_route > 127 || n == 0 || 2 * n * mr * sizeof(int64_t) > (16u << 20))
        return;
    l->route_out = lalloc(l, n * mr, sizeof *l->route_out);
    l->route_in = lalloc(l, n * mr, sizeof *l->route_in);
    l->len_out = lalloc(l, n, 1);
    l->len_in = lalloc(l, n, 1);
    if (!l->route_out || !l->route_in || !l->len_out || !l->len_in) {
        mpitopo__free(l->route_out);
        mpitopo__free(l->route_in);
        mpitopo__free(l->len_out);
        mpitopo__free(l->len_in);
        l->route_out = l->route_in = NULL;
        l->len_out = l->len_in = NULL;
        return;
    }
    memset(l->len_out, -1, n);
    memset(l->len_in, -1, n);
}

/* The loop's arrays; 0 when one is missing. */
static int leader_alloc(leader_t *l)
{
    int64_t nch;
    mpitopo_network_size(l->net, NULL, &nch, &l->max_route);
    int ni = l->it.ni, own = l->hi - l->lo;
    l->route_tmp = lalloc(l, (size_t)l->max_route + 1, sizeof *l->route_tmp);
    l->conn = lalloc(l, (size_t)ni, sizeof *l->conn);
    l->rest = lalloc(l, (size_t)ni, sizeof *l->rest);
    l->h = lalloc(l, (size_t)l->it.nn, sizeof *l->h);
    l->fit = lalloc(l, (size_t)l->it.nn, sizeof *l->fit);
    l->gathered = lalloc(l, 2 * (size_t)l->it.nn, sizeof *l->gathered);
    l->counts = lalloc(l, (size_t)l->size, sizeof *l->counts);
    l->displs = lalloc(l, (size_t)l->size, sizeof *l->displs);
    size_t np = 3 * (size_t)nch + 2 > 2 * (size_t)own ? 3 * (size_t)nch + 2 : 2 * (size_t)own;
    l->packed = lalloc(l, np, sizeof *l->packed);
    l->dch = lalloc(l, (size_t)nch, sizeof *l->dch);
    l->dpairs = lalloc(l, (size_t)nch, sizeof *l->dpairs);
    l->dload = lalloc(l, (size_t)nch, sizeof *l->dload);
    l->it.node_of = lalloc(l, (size_t)ni, sizeof *l->it.node_of);
    l->it.fill = lalloc(l, (size_t)l->it.nn, sizeof *l->it.fill);
    if (!l->route_tmp || !l->conn || !l->rest || !l->h || !l->fit || !l->gathered || !l->packed || !l->dch ||
        !l->dpairs || !l->dload || !l->it.node_of || !l->it.fill || !l->counts || !l->displs)
        return 0;
    for (int q = 0; q < l->size; q++) {
        l->displs[q] = 2 * block_lo(q, l->it.nn, l->size);
        l->counts[q] = 2 * block_lo(q + 1, l->it.nn, l->size) - l->displs[q];
    }
    for (int a = 0; a < ni; a++) {
        l->conn[a] = 0;
        l->it.node_of[a] = -1;
    }
    memset(l->it.fill, 0, (size_t)l->it.nn * sizeof *l->it.fill);
    setup_routes(l);
    l->mem += (int64_t)nch * (int64_t)(2 * sizeof(double) + 2 * sizeof(int64_t) + 3 * sizeof(double) + 1);
    return mpitopo__pload_init(&l->pl, l->net, NULL, NULL) == MPITOPO_SUCCESS;
}

static void leader_free(leader_t *l)
{
    void *a[] = {l->route_out, l->route_in, l->route_tmp, l->len_out, l->len_in, l->conn,
                 l->rest,      l->h,        l->gathered,  l->packed,  l->fit,    l->dch,
                 l->dpairs,    l->dload,    l->it.node_of, l->it.fill, l->counts, l->displs};
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++)
        mpitopo__free(a[i]);
    mpitopo__pload_free(&l->pl);
}

/* The winner's increment reaches every leader, staged there. */
static int share_increment(leader_t *l, int winner, int p, int n)
{
    double *b = l->packed;
    int64_t k = 0;
    if (l->rank == winner) {
        mpitopo__ptram_stage_item(&l->it, &l->pl, route_cb, l, p, n, -1, +1);
        k = mpitopo__pload_delta_size(&l->pl);
        mpitopo__pload_delta_export(&l->pl, l->dch, l->dload, l->dpairs, b);
        for (int64_t i = 0; i < k; i++) {
            b[2 + i] = (double)l->dch[i];
            b[2 + k + i] = l->dload[i];
            b[2 + 2 * k + i] = (double)l->dpairs[i];
        }
    }
    int rc = PMPI_Bcast(&k, 1, MPI_INT64_T, winner, l->comm);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Bcast(b, (int)(2 + 3 * k), MPI_DOUBLE, winner, l->comm);
    if (rc != MPI_SUCCESS || l->rank == winner)
        return rc;
    for (int64_t i = 0; i < k; i++) {
        l->dch[i] = (int64_t)b[2 + i];
        l->dload[i] = b[2 + k + i];
        l->dpairs[i] = (int64_t)b[2 + 2 * k + i];
    }
    mpitopo__pload_delta_import(&l->pl, k, l->dch, l->dload, l->dpairs, b);
    if (k > l->st->max_delta)
        l->st->max_delta = k;
    return MPI_SUCCESS;
}

/* The node of item p at this step: scored here, every node's (fits,
 * metric) gathered, the winner by the serial loop's rule over them all
 * (mpitopo__ptram_pick: the lowest metric, the lowest node on a tie);
 * -1 when none fits. *winner: its leader. */
static int choose(leader_t *l, int p, int *winner, int *rc)
{
    int nn = l->it.nn;
    double *mine = l->packed; /* free until the increment */
    for (int n = l->lo; n < l->hi; n++) {
        int fit = mpitopo__ptram_fits(&l->it, p, n);
        mine[2 * (n - l->lo)] = fit;
        mine[2 * (n - l->lo) + 1] = fit ? mpitopo__ptram_score(&l->it, &l->pl, route_cb, l, p, n) : INFINITY;
    }
    double t0 = now();
    *rc = PMPI_Allgatherv(mine, 2 * (l->hi - l->lo), MPI_DOUBLE, l->gathered, l->counts, l->displs, MPI_DOUBLE,
                          l->comm);
    l->st->t_comm += now() - t0;
    if (*rc != MPI_SUCCESS)
        return -1;
    for (int n = 0; n < nn; n++) {
        l->fit[n] = l->gathered[2 * n] != 0;
        l->h[n] = l->gathered[2 * n + 1];
    }
    double best;
    int n = mpitopo__ptram_pick(0, nn, l->fit, l->h, &best);
    for (int q = 0; n >= 0 && q < l->size; q++)
        if (n >= block_lo(q, nn, l->size) && n < block_lo(q + 1, nn, l->size))
            *winner = q;
    return n;
}

/* The greedy loop on every leader; order/node: the steps (rank 0). Every
 * leader returns the same code. */
static int leader_loop(leader_t *l, int *order, int *node)
{
    mpitopo__ptram_greedy_init(&l->it, l->rest);
    double t0 = now();
    int rc = MPITOPO_SUCCESS;
    for (int step = 0; step < l->it.ni; step++) {
        int p = mpitopo__ptram_greedy_next(&l->it, l->conn, l->rest, step), n = -1, winner = -1, mrc = MPI_SUCCESS;
        if (l->conn[p] == 0) {
            /* No placed peer: every node scores the same, the first that fits (nothing to stage). */
            for (int m = 0; m < l->it.nn && n < 0; m++)
                if (mpitopo__ptram_fits(&l->it, p, m))
                    n = m;
        } else {
            n = choose(l, p, &winner, &mrc);
            l->st->scored_steps++;
            if (mrc == MPI_SUCCESS && n >= 0) {
                double t1 = now();
                mrc = share_increment(l, winner, p, n);
                l->st->t_comm += now() - t1;
            }
        }
        if (mrc != MPI_SUCCESS)
            return mrc;
        if (n < 0) {
            rc = MPITOPO_FAIL_AS(MPITOPO_ERR_INTERNAL, "mpitopo_map", "mapper 'ptram': no node left for part %d", p);
            break;
        }
        mpitopo__pload_commit(&l->pl);
        l->it.node_of[p] = n;
        l->it.fill[n]++;
        mpitopo__ptram_greedy_placed(&l->it, l->conn, l->rest, p);
        if (order) {
            order[step] = p;
            node[step] = n;
        }
        l->st->steps++;
    }
    l->st->t_greedy = now() - t0;
    return rc;
}

/* My nodes: a block of nn over the leaders, in rank order. */
static void leader_init(leader_t *l, MPI_Comm comm, const mpitopo_network_t *net, mpitopo__ptram_par_stats_t *st)
{
    PMPI_Comm_rank(comm, &l->rank);
    PMPI_Comm_size(comm, &l->size);
    l->comm = comm;
    l->net = net;
    l->lo = block_lo(l->rank, l->it.nn, l->size);
    l->hi = block_lo(l->rank + 1, l->it.nn, l->size);
    *st = (mpitopo__ptram_par_stats_t){.leaders = l->size};
    l->st = st;
}

/* Whether every leader has its arrays (collective). */
static int all_ok(MPI_Comm comm, int ok, int *mrc)
{
    int all = 0;
    *mrc = PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
    return all;
}

/* ---- rank 0 ------------------------------------------------------------- */

typedef struct root_ctx {
    MPI_Comm comm;
    const mpitopo_network_t *net;
    mpitopo__ptram_par_stats_t *st;
} root_ctx_t;

/* The greedy hook of rank 0's serial run: send the problem, run the loop. */
static int root_greedy(void *ctx, const mpitopo__ptram_items_t *it, const mpitopo__pload_t *pl, int *order, int *node)
{
    root_ctx_t *c = ctx;
    double t0 = now();
    int64_t ne = it->ooff[it->ni];
    int64_t hdr[HDR_LEN] = {1, it->ni, it->nn, it->exact, ne};
    leader_t l = {.it = *it};
    leader_init(&l, c->comm, c->net, c->st);
    int rc = PMPI_Bcast(hdr, HDR_LEN, MPI_INT64_T, 0, c->comm), mrc = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        return rc;
    int ok = ne <= INT_MAX && leader_alloc(&l);
    if (!all_ok(c->comm, ok, &mrc) || mrc != MPI_SUCCESS) {
        leader_free(&l);
        if (mrc != MPI_SUCCESS)
            return mrc;
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, "mpitopo_map", "mapper 'ptram': a node leader could not allocate "
                               "the parallel greedy's %lld edges", (long long)ne);
    }
    double wr[8];
    memcpy(wr, pl->w, sizeof pl->w);
    memcpy(wr + 4, pl->ref, sizeof pl->ref);
    memcpy(l.pl.w, pl->w, sizeof pl->w);
    memcpy(l.pl.ref, pl->ref, sizeof pl->ref);
    int n1 = it->ni, n2 = it->nn, e = (int)ne;
    /* The buffers are only read at the root. */
    if ((rc = PMPI_Bcast(wr, 8, MPI_DOUBLE, 0, c->comm)) == MPI_SUCCESS &&
        (rc = PMPI_Bcast((int *)it->isize, n1, MPI_INT, 0, c->comm)) == MPI_SUCCESS &&
        (rc = PMPI_Bcast((int *)it->cap, n2, MPI_INT, 0, c->comm)) == MPI_SUCCESS &&
        (rc = PMPI_Bcast((int *)it->end, n2, MPI_INT, 0, c->comm)) == MPI_SUCCESS &&
        (rc = PMPI_Bcast((int64_t *)it->ooff, n1 + 1, MPI_INT64_T, 0, c->comm)) == MPI_SUCCESS &&
        (rc = PMPI_Bcast((int *)it->odst, e, MPI_INT, 0, c->comm)) == MPI_SUCCESS &&
        (rc = PMPI_Bcast((double *)it->obytes, e, MPI_DOUBLE, 0, c->comm)) == MPI_SUCCESS)
        rc = PMPI_Bcast((int64_t *)it->opairs, e, MPI_INT64_T, 0, c->comm);
    c->st->t_setup = now() - t0;
    if (rc == MPI_SUCCESS)
        rc = leader_loop(&l, order, node);
    c->st->mem_bytes = l.mem;
    leader_free(&l);
    return rc; /* MPI's codes (positive) pass through */
}

int mpitopo__ptram_par_applies(const mpitopo_network_t *net, const char *spec)
{
    return net && strncmp(spec, "ptram", 5) == 0 && (spec[5] == '\0' || spec[5] == ':');
}

int mpitopo__ptram_par_map(MPI_Comm leaders, const char *spec, const mpitopo_machine_t *machine,
                           const mpitopo_network_t *network, const int *end_node, const mpitopo_pattern_t *pattern,
                           const mpitopo_map_options_t *options, int *leaf_of_proc, int *kept,
                           mpitopo__ptram_par_stats_t *stats)
{
    mpitopo__ptram_par_stats_t dummy;
    mpitopo__ptram_params_t prm;
    root_ctx_t ctx = {leaders, network, stats ? stats : &dummy};
    *ctx.st = (mpitopo__ptram_par_stats_t){0};
    *kept = 0;
    int rc = mpitopo__ptram_parse(spec[5] == ':' ? spec + 6 : NULL, &prm);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    if (options->launch && (rc = mpitopo_mapping_check(machine, pattern->nprocs, options->launch)) != MPITOPO_SUCCESS)
        return MPITOPO_FAIL_CONTEXT(rc, "mpitopo_map: options->launch is not a valid placement");
    prm.greedy = root_greedy;
    prm.greedy_ctx = &ctx;
    rc = mpitopo__ptram_run(machine, pattern, options, network, end_node, &prm, leaf_of_proc, NULL);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    if (ctx.st->leaders > 0)
        mpitopo__log(2, "ptram mapper: parallel greedy on %d leaders: %d steps (%d scored), %.6f s (%.6f s "
                     "communicating, %.6f s sending the parts' graph), largest increment %lld channels",
                     ctx.st->leaders, ctx.st->steps, ctx.st->scored_steps, ctx.st->t_greedy, ctx.st->t_comm,
                     ctx.st->t_setup, (long long)ctx.st->max_delta);
    rc = mpitopo_mapping_check(machine, pattern->nprocs, leaf_of_proc);
    if (rc != MPITOPO_SUCCESS && rc != MPITOPO_ERR_NOMEM)
        return MPITOPO_FAIL_CONTEXT(MPITOPO_ERR_INTERNAL, "mpitopo_map: mapper 'ptram' returned an invalid mapping");
    if (rc == MPITOPO_SUCCESS && options->never_worse && pattern->nprocs > 0) {
        /* the guard of mpitopo_map_network (registry.c) */
        const mpitopo__map_net_t net = {network, end_node};
        rc = mpitopo__keep_launch_unless_hybrid_lower(machine, pattern, options, &net, pattern->nprocs, leaf_of_proc,
                                                      kept);
    }
    return rc;
}

int mpitopo__ptram_par_release(MPI_Comm leaders)
{
    int64_t hdr[HDR_LEN] = {0};
    return PMPI_Bcast(hdr, HDR_LEN, MPI_INT64_T, 0, leaders);
}

/* ---- the other leaders -------------------------------------------------- */

/* The in-edges, the transpose of the out-edges as ptram.c builds it. */
static void transpose(mpitopo__ptram_items_t *it, int64_t *ioff, int *isrc, double *ibytes, int64_t *ipairs,
                      int64_t *pos)
{
    int ni = it->ni;
    memset(ioff, 0, ((size_t)ni + 1) * sizeof *ioff);
    for (int64_t e = 0; e < it->ooff[ni]; e++)
        ioff[it->odst[e] + 1]++;
    for (int b = 0; b < ni; b++)
        ioff[b + 1] += ioff[b];
    memcpy(pos, ioff, (size_t)ni * sizeof *pos);
    for (int a = 0; a < ni; a++)
        for (int64_t e = it->ooff[a]; e < it->ooff[a + 1]; e++) {
            int64_t at = pos[it->odst[e]]++;
            isrc[at] = a;
            ibytes[at] = it->obytes[e];
            ipairs[at] = it->opairs[e];
        }
}

/* One greedy as a leader other than rank 0. */
static int serve_one(MPI_Comm comm, const mpitopo_network_t *net, const int64_t *hdr, mpitopo__ptram_par_stats_t *st)
{
    double t0 = now();
    leader_t l = {.it = {.ni = (int)hdr[HDR_NI], .nn = (int)hdr[HDR_NN], .exact = (int)hdr[HDR_EXACT]}};
    leader_init(&l, comm, net, st);
    int64_t ne = hdr[HDR_NEDGES];
    size_t ni = (size_t)l.it.ni, nn = (size_t)l.it.nn, e = (size_t)ne;
    int *isize = lalloc(&l, ni, sizeof *isize), *cap = lalloc(&l, nn, sizeof *cap), *end = lalloc(&l, nn, sizeof *end);
    int64_t *ooff = lalloc(&l, ni + 1, sizeof *ooff), *ioff = lalloc(&l, ni + 1, sizeof *ioff);
    int64_t *pos = lalloc(&l, ni, sizeof *pos);
    int *odst = lalloc(&l, e, sizeof *odst), *isrc = lalloc(&l, e, sizeof *isrc);
    double *obytes = lalloc(&l, e, sizeof *obytes), *ibytes = lalloc(&l, e, sizeof *ibytes);
    int64_t *opairs = lalloc(&l, e, sizeof *opairs), *ipairs = lalloc(&l, e, sizeof *ipairs);
    l.it = (mpitopo__ptram_items_t){.ni = l.it.ni, .nn = l.it.nn, .exact = l.it.exact, .isize = isize, .cap = cap,
                                    .end = end, .ooff = ooff, .ioff = ioff, .odst = odst, .isrc = isrc,
                                    .obytes = obytes, .ibytes = ibytes, .opairs = opairs, .ipairs = ipairs};
    int ok = ne <= INT_MAX && isize && cap && end && ooff && ioff && pos && odst && isrc && obytes && ibytes &&
             opairs && ipairs && leader_alloc(&l);
    int rc = MPI_SUCCESS;
    double wr[8];
    if (all_ok(comm, ok, &rc) && rc == MPI_SUCCESS) {
        int n1 = (int)ni, n2 = (int)nn, ne32 = (int)ne;
        if ((rc = PMPI_Bcast(wr, 8, MPI_DOUBLE, 0, comm)) == MPI_SUCCESS &&
            (rc = PMPI_Bcast(isize, n1, MPI_INT, 0, comm)) == MPI_SUCCESS &&
            (rc = PMPI_Bcast(cap, n2, MPI_INT, 0, comm)) == MPI_SUCCESS &&
            (rc = PMPI_Bcast(end, n2, MPI_INT, 0, comm)) == MPI_SUCCESS &&
            (rc = PMPI_Bcast(ooff, n1 + 1, MPI_INT64_T, 0, comm)) == MPI_SUCCESS &&
            (rc = PMPI_Bcast(odst, ne32, MPI_INT, 0, comm)) == MPI_SUCCESS &&
            (rc = PMPI_Bcast(obytes, ne32, MPI_DOUBLE, 0, comm)) == MPI_SUCCESS)
            rc = PMPI_Bcast(opairs, ne32, MPI_INT64_T, 0, comm);
        if (rc == MPI_SUCCESS) {
            memcpy(l.pl.w, wr, sizeof l.pl.w);
            memcpy(l.pl.ref, wr + 4, sizeof l.pl.ref);
            transpose(&l.it, ioff, isrc, ibytes, ipairs, pos);
            st->t_setup = now() - t0;
            rc = leader_loop(&l, NULL, NULL);
        }
    }
    st->mem_bytes = l.mem;
    void *a[] = {isize, cap, end, ooff, ioff, pos, odst, isrc, obytes, ibytes, opairs, ipairs};
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++)
        mpitopo__free(a[i]);
    leader_free(&l);
    return rc;
}

int mpitopo__ptram_par_serve(MPI_Comm leaders, const mpitopo_network_t *network, mpitopo__ptram_par_stats_t *stats)
{
    mpitopo__ptram_par_stats_t dummy;
    for (;;) {
        int64_t hdr[HDR_LEN];
        int rc = PMPI_Bcast(hdr, HDR_LEN, MPI_INT64_T, 0, leaders);
        if (rc != MPI_SUCCESS || hdr[HDR_GO] == 0)
            return rc;
        rc = serve_one(leaders, network, hdr, stats ? stats : &dummy);
        /* mpitopo's own failures are rank 0's to report (every leader had the same) */
        if (rc > 0)
            return rc;
    }
}
