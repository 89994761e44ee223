/*
 * Stress: many neighbourhood collectives in flight at once and back to
 * back on one communicator, under the schedule MPITOPO_NEIGHBOR names
 * (testlist). On a random digraph with duplicate and self edges, the
 * periodic 2-D Moore graph, the dense MPI_Graph and a Moore stencil
 * communicator (where the cart schedule applies):
 *   - ROUNDS bursts of WINDOW nonblocking calls, each of an operation and
 *     block size drawn alike on every process (MPI's rule: collectives
 *     in the same order everywhere), then completed in an order of each
 *     process's own: waits on a random pending call mixed with passes of
 *     mpitopo_test over all pending calls. A multi-round schedule must
 *     post the later rounds of one call while another is waited on;
 *   - WINDOW persistent requests of mixed operations, started together
 *     (mpitopo_startall) ROUNDS times with new data each time, completed
 *     the same way.
 * Every call carries its own data (the generation, nt_gen), so a message
 * matched to the wrong call shows; each result is checked against MPI's
 * own operation (mpitopo's linear schedule on the stencil communicator)
 * and against what each neighbour sent.
 */
#include "common/nbrtest.h"

#include <stdlib.h>
#include <string.h>

#define ROUNDS 8
#define WINDOW 12

static unsigned draw(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return (*seed >> 16) & 0x7fff;
}

/* Completes the WINDOW requests of q, in this process's own order. */
static void complete_all(mpitopo_request_t *q, unsigned *own, const char *label)
{
    int done[WINDOW] = {0}, left = WINDOW;
    while (left > 0) {
        if (draw(own) % 3 == 0) {
            int k = (int)(draw(own) % WINDOW);
            while (done[k])
                k = (k + 1) % WINDOW;
            if (!MT_CHECK(mpitopo_wait(&q[k]) == MPITOPO_SUCCESS, "%s: wait: %s", label,
                          mpitopo_last_error()))
                return;
            done[k] = 1;
            left--;
            continue;
        }
        for (int k = 0; k < WINDOW; k++) {
            int flag = 0;
            if (done[k])
                continue;
            if (!MT_CHECK(mpitopo_test(&q[k], &flag) == MPITOPO_SUCCESS, "%s: test: %s",
                          label, mpitopo_last_error()))
                return;
            if (flag) {
                done[k] = 1;
                left--;
            }
        }
    }
}

static void fresh(nt_bufs_t *b, int gen)
{
    nt_gen = gen;
    nt_bufs_fill(b);
    memset(b->recv, 0xff, (size_t)(b->rints + 1) * sizeof(int));
}

static void check(const nt_graph_t *g, nt_bufs_t *b, int *op, int gen0, int form,
                  const char *how)
{
    for (int k = 0; k < WINDOW; k++) {
        nt_gen = gen0 + k;
        nt_verify(g, op[k], form, &b[k], how);
    }
    nt_gen = 0;
}

static void bursts(const nt_graph_t *g, unsigned *shared, unsigned *own)
{
    for (int round = 0; round < ROUNDS; round++) {
        nt_bufs_t b[WINDOW];
        mpitopo_request_t q[WINDOW];
        int op[WINDOW], gen0 = 100 * (round + 1), ok = 1;
        for (int k = 0; k < WINDOW; k++) {
            op[k] = (int)(draw(shared) % NOPS);
            nt_bufs_make(&b[k], g, op[k], 1 + (int)(draw(shared) % 4));
            fresh(&b[k], gen0 + k);
            q[k] = MPITOPO_REQUEST_NULL;
            ok &= MT_CHECK(nt_start_or_run(g, op[k], &b[k], &q[k], 1) == MPITOPO_SUCCESS,
                           "%s: burst %d, call %d (%s): %s", g->label, round, k,
                           nt_op_name[op[k]], mpitopo_last_error());
        }
        if (ok) {
            complete_all(q, own, g->label);
            check(g, b, op, gen0, NONBLOCKING, "burst");
        }
        for (int k = 0; k < WINDOW; k++)
            nt_bufs_free(&b[k]);
    }
}

static void persistent(const nt_graph_t *g, unsigned *shared, unsigned *own)
{
    nt_bufs_t b[WINDOW];
    mpitopo_request_t q[WINDOW];
    int op[WINDOW], ok = 1;
    for (int k = 0; k < WINDOW; k++) {
        op[k] = (int)(draw(shared) % NOPS);
        nt_bufs_make(&b[k], g, op[k], 1 + (int)(draw(shared) % 4));
        q[k] = MPITOPO_REQUEST_NULL;
        ok &= MT_CHECK(nt_init_op(g, op[k], &b[k], MPI_INFO_NULL, &q[k]) == MPITOPO_SUCCESS,
                       "%s: init %d (%s): %s", g->label, k, nt_op_name[op[k]],
                       mpitopo_last_error());
    }
    for (int round = 0; ok && round < ROUNDS; round++) {
        int gen0 = 100 * (round + 1);
        for (int k = 0; k < WINDOW; k++)
            fresh(&b[k], gen0 + k);
        if (!MT_CHECK(mpitopo_startall(WINDOW, q) == MPITOPO_SUCCESS, "%s: startall: %s",
                      g->label, mpitopo_last_error()))
            break;
        complete_all(q, own, g->label);
        check(g, b, op, gen0, PERSISTENT, "startall");
    }
    for (int k = 0; k < WINDOW; k++) {
        if (q[k] != MPITOPO_REQUEST_NULL)
            MT_CHECK_RC(mpitopo_request_free(&q[k]));
        nt_bufs_free(&b[k]);
    }
}

static void stress(nt_graph_t *g)
{
    unsigned shared = 2026, own = 7u + 31u * (unsigned)nt_rank;
    bursts(g, &shared, &own);
    persistent(g, &shared, &own);
    nt_graph_free(g);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    nt_begin();
    nt_vary = 1;
    nt_graph_t g;
    nt_random_graph(&g, 11, 5);
    stress(&g);
    nt_moore_graph(&g);
    stress(&g);
    nt_dense_graph(&g);
    stress(&g);
    int dims[2] = {0, 0};
    MPI_Dims_create(nt_size, 2, dims);
    nt_stencil_graph(&g, 2, dims, "moore=1");
    stress(&g);
    nt_end();
    int code = mt_finish("neighbor_stress");
    MPI_Finalize();
    return code;
}
