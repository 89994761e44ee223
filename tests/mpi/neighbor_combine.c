/*
 * The message-combining schedule (thesis ch. 6) of mpitopo's neighbourhood
 * collectives. On dist-graph communicators built to have common
 * neighbourhoods (dense random digraphs with duplicate and self edges and a
 * zero-degree process, a periodic 2-D Moore neighbourhood, which on small
 * grids is full of duplicates) and a dense symmetric graph communicator:
 * every operation in every form (blocking, nonblocking, persistent), with
 * the schedule chosen by the _init info key ("linear", "combine", "auto")
 * and by MPITOPO_NEIGHBOR, checked against the data each neighbour sent
 * (the k-th edge from s to us carries s's block of its k-th edge to us) and
 * byte for byte against MPI_Neighbor_* (not alltoall with duplicate edges
 * under MPICH 4.0, which delivers them in reverse order). Blocks of 4 B to
 * 2 KiB (above the 1 KiB limit of "auto").
 *
 * The v and w forms run again with per-edge counts that vary (zeros
 * included), and alltoallw always mixes MPI_INT blocks with blocks of a
 * strided vector type, on either side independently; persistent requests
 * run twice, with new data the second time; three nonblocking v/w calls
 * overlap and complete out of order; and receive counts one too large
 * must fail cleanly (MPI_ERR_TRUNCATE) where a block arrives combined.
 *
 * Then the point of combining: one alltoall, alltoallv, alltoallw and
 * allgatherv under "combine" must send fewer messages in total than under
 * "linear" (the library's internal counter), so a silent fall back to
 * linear fails the test.
 */
#include "nbrtest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Overwrite the count, displacement and type arrays of b, saving them in
 * keep (restore: put them back): a started call must have copied them. */
static void clobber(nt_bufs_t *b, nt_bufs_t *k0, const nt_graph_t *g, int restore)
{
    nt_bufs_t keep = *k0;
    size_t so = (size_t)g->outdeg + 1, si = (size_t)g->indeg + 1;
    int **iv[4] = {&b->scounts, &b->sdispls, &b->rcounts, &b->rdispls};
    int **kv[4] = {&keep.scounts, &keep.sdispls, &keep.rcounts, &keep.rdispls};
    for (int k = 0; k < 4; k++) {
        size_t n = (k < 2 ? so : si) * sizeof(int);
        if (!restore) {
            *kv[k] = malloc(n);
            memcpy(*kv[k], *iv[k], n);
            memset(*iv[k], 0x7f, n);
        } else {
            memcpy(*iv[k], *kv[k], n);
            free(*kv[k]);
        }
    }
    if (!restore) {
        keep.sb = malloc(so * sizeof(MPI_Aint));
        keep.rb = malloc(si * sizeof(MPI_Aint));
        keep.st = malloc(so * sizeof(MPI_Datatype));
        keep.rt = malloc(si * sizeof(MPI_Datatype));
        memcpy(keep.sb, b->sb, so * sizeof(MPI_Aint));
        memcpy(keep.rb, b->rb, si * sizeof(MPI_Aint));
        memcpy(keep.st, b->st, so * sizeof(MPI_Datatype));
        memcpy(keep.rt, b->rt, si * sizeof(MPI_Datatype));
        for (size_t i = 0; i + 1 < so; i++)
            b->sb[i] = -1, b->st[i] = MPI_DATATYPE_NULL;
        for (size_t i = 0; i + 1 < si; i++)
            b->rb[i] = -1, b->rt[i] = MPI_DATATYPE_NULL;
        *k0 = keep;
        return;
    }
    memcpy(b->sb, keep.sb, so * sizeof(MPI_Aint));
    memcpy(b->rb, keep.rb, si * sizeof(MPI_Aint));
    memcpy(b->st, keep.st, so * sizeof(MPI_Datatype));
    memcpy(b->rt, keep.rt, si * sizeof(MPI_Datatype));
    free(keep.sb);
    free(keep.rb);
    free(keep.st);
    free(keep.rt);
}

/* Three nonblocking v/w calls (varying counts) in flight at once, their
 * argument arrays overwritten as soon as each has started, completed in
 * another order than started (the same on every process). */
static void check_overlap(const nt_graph_t *g)
{
    static const int ops[3] = {A2AV, AGV, A2AW}, order[3] = {2, 0, 1};
    nt_bufs_t b[3], keep[3];
    mpitopo_request_t q[3];
    nt_vary = 1;
    for (int k = 0; k < 3; k++) {
        nt_bufs_make(&b[k], g, ops[k], 3 + k);
        memset(b[k].recv, 0xff, (size_t)(b[k].rints + 1) * sizeof(int));
        MT_CHECK_RC(nt_start_or_run(g, ops[k], &b[k], &q[k], 1));
        clobber(&b[k], &keep[k], g, 0);
    }
    for (int k = 0; k < 3; k++)
        MT_CHECK_RC(mpitopo_wait(&q[order[k]]));
    for (int k = 0; k < 3; k++)
        clobber(&b[k], &keep[k], g, 1);
    for (int k = 0; k < 3; k++) {
        nt_verify(g, ops[k], NONBLOCKING, &b[k], "overlapping, out of order");
        nt_bufs_free(&b[k]);
    }
    nt_vary = 0;
}

static void check_all(const nt_graph_t *g)
{
    static const char *const scheds[] = {"linear", "combine", "auto"};
    static const int cnts[] = {1, 5, 513};
    for (nt_vary = 0; nt_vary < 2; nt_vary++) {
        int op0 = nt_vary ? AGV : AG;
        for (int s = 0; s < 3; s++) {
            MPI_Info info;
            MPI_Info_create(&info);
            MPI_Info_set(info, "mpitopo_neighbor", scheds[s]);
            for (int op = op0; op < NOPS; op += nt_vary && op == AGV ? 2 : 1)
                for (int c = 0; c < 3; c++)
                    nt_check_one(g, op, PERSISTENT, cnts[c], info, scheds[s]);
            MPI_Info_free(&info);
        }
        for (int op = op0; op < NOPS; op += nt_vary && op == AGV ? 2 : 1)
            for (int form = BLOCKING; form <= NONBLOCKING; form++)
                for (int c = 0; c < 3; c++)
                    nt_check_one(g, op, form, cnts[c], MPI_INFO_NULL, "environment");
    }
    nt_vary = 0;
    check_overlap(g);
}

static void check_fewer_messages(const nt_graph_t *g)
{
    static const int ops[4] = {A2A, A2AV, A2AW, AGV};
    for (int k = 0; k < 4; k++) {
        long long lin = nt_sends_of(g, ops[k], "linear");
        long long comb = nt_sends_of(g, ops[k], "combine");
        if (nt_rank == 0)
            printf("# %s: one %s sends %lld messages linear, %lld combined\n", g->label,
                   nt_op_name[ops[k]], lin, comb);
        MT_CHECK(comb < lin, "%s: %s combining sent %lld messages, linear %lld: no saving",
                 g->label, nt_op_name[ops[k]], comb, lin);
    }
}

/* Receive counts one larger than sent: a block that arrives combined must
 * fail the call with MPI_ERR_TRUNCATE (direct ones are received as MPI
 * does, short); somewhere one must arrive combined. */
static void finish_graph(nt_graph_t *g, int counting)
{
    check_all(g);
    if (counting) {
        check_fewer_messages(g);
        nt_check_truncate(g, "combine", 1, NULL);
    }
    nt_graph_free(g);
}

static void random_case(unsigned seed, int keep, int counting)
{
    nt_graph_t g;
    nt_random_graph(&g, seed, keep);
    finish_graph(&g, counting);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    nt_begin();
    /* Sparse graphs pair only under a low friendship threshold. */
    const char *theta = mt_getenv("MPITOPO_COMBINE_THRESHOLD");
    int low = theta && atoi(theta) <= 2;
    random_case(3, 7, nt_size >= 6);
    random_case(8, 7, nt_size >= 6);
    random_case(5, 3, low && nt_size >= 6);
    nt_graph_t g;
    nt_moore_graph(&g);
    finish_graph(&g, nt_size >= 8);
    nt_dense_graph(&g);
    finish_graph(&g, nt_size >= 6);
    nt_end();
    int code = mt_finish("neighbor_combine");
    MPI_Finalize();
    return code;
}
