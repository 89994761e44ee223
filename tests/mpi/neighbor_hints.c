/*
 * A schedule hint that cannot be honoured falls back, it is no error
 * (issue 28). A dist-graph communicator whose processes without neighbours
 * (rank 0, a node leader, and every rank r with r % 5 == 3; or those of
 * MT_IDLE, "3,5": members whose leaders have neighbours) pass count 0
 * to neighbor_allgather and neighbor_alltoall while the others pass 2:
 * legal MPI, counts need only match between processes that communicate.
 * The others form a ring in rank order with a chord to the second next.
 * Every hint (node, combine, cart, linear, auto, mpi), from the _init
 * call's info key (persistent, two runs, new data the second time) and
 * from the communicator's (mpitopo_comm_set_info: blocking, nonblocking
 * and persistent calls), and MPITOPO_NEIGHBOR from the testlist: every
 * call succeeds and delivers what MPI_Neighbor_allgather and
 * MPI_Neighbor_alltoall deliver. Then the same with count 2 everywhere,
 * where the node schedule may run.
 */
#include "mpitest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { AG, A2A, NOPS };
enum { BLOCKING, NONBLOCKING, PERSISTENT, NFORMS };
static const char *const op_name[NOPS] = {"allgather", "alltoall"};
static const char *const form_name[NFORMS] = {"blocking", "nonblocking", "persistent"};
static const char *const hints[] = {"node", "combine", "cart", "linear", "auto", "mpi"};
#define NHINTS ((int)(sizeof hints / sizeof *hints))
#define CNT 2

static int rank, size;
static const char *idle_list; /* MT_IDLE: the ranks without neighbours, "3,5" */

static int idle(int r)
{
    if (!idle_list)
        return r == 0 || r % 5 == 3;
    for (const char *p = idle_list; *p;) {
        char *end;
        long x = strtol(p, &end, 10);
        if (end == p)
            break;
        if (x == r)
            return 1;
        p = *end == ',' ? end + 1 : end;
    }
    return 0;
}

/* The next (step 1) or previous (step -1) process with neighbours. */
static int next_active(int r, int step)
{
    do
        r = (r + step + size) % size;
    while (idle(r));
    return r;
}

typedef struct graph {
    MPI_Comm comm;
    int in, out, src[2], dst[2];
} graph_t;

/* Destinations: the next active process and the one after it (when it is
 * another); sources the same way back. */
static void graph_make(graph_t *g)
{
    g->in = g->out = 0;
    int active = 0;
    for (int r = 0; r < size; r++)
        active += !idle(r);
    if (!idle(rank) && active > 0) {
        int n1 = next_active(rank, 1), n2 = next_active(n1, 1);
        int p1 = next_active(rank, -1), p2 = next_active(p1, -1);
        g->dst[g->out++] = n1;
        if (n2 != n1)
            g->dst[g->out++] = n2;
        g->src[g->in++] = p1;
        if (p2 != p1)
            g->src[g->in++] = p2;
    }
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, g->in, g->src, MPI_UNWEIGHTED, g->out, g->dst,
                                   MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g->comm);
}

/* Send blocks of cnt ints, new values each generation. */
static void fill(int *send, int nblocks, int cnt, int gen)
{
    for (int k = 0; k < nblocks * cnt; k++)
        send[k] = rank * 1000 + gen * 100 + k;
}

static int call(const graph_t *g, int op, int form, const int *send, int cnt, int *recv, MPI_Info info,
                mpitopo_request_t *q)
{
    if (form == PERSISTENT)
        return op == AG ? mpitopo_neighbor_allgather_init(send, cnt, MPI_INT, recv, cnt, MPI_INT, g->comm, info, q)
                        : mpitopo_neighbor_alltoall_init(send, cnt, MPI_INT, recv, cnt, MPI_INT, g->comm, info, q);
    if (form == NONBLOCKING)
        return op == AG ? mpitopo_ineighbor_allgather(send, cnt, MPI_INT, recv, cnt, MPI_INT, g->comm, q)
                        : mpitopo_ineighbor_alltoall(send, cnt, MPI_INT, recv, cnt, MPI_INT, g->comm, q);
    return op == AG ? mpitopo_neighbor_allgather(send, cnt, MPI_INT, recv, cnt, MPI_INT, g->comm)
                    : mpitopo_neighbor_alltoall(send, cnt, MPI_INT, recv, cnt, MPI_INT, g->comm);
}

/* One operation in one form (persistent: two runs, new data the second
 * time), each run against MPI's own operation on the same data. */
static void check(const graph_t *g, int op, int form, int cnt, MPI_Info info, const char *how)
{
    int nsend = op == AG ? 1 : g->out;
    size_t slen = (size_t)(nsend * cnt + 1), rlen = (size_t)(g->in * cnt + 1);
    int *send = calloc(slen, sizeof(int)), *recv = calloc(rlen, sizeof(int));
    int *ref = calloc(rlen, sizeof(int));
    mpitopo_request_t q = MPITOPO_REQUEST_NULL;
    int runs = form == PERSISTENT ? 2 : 1, rc = MPITOPO_SUCCESS, run = 0, bad = -1;
    fill(send, nsend, cnt, 0);
    if (form == PERSISTENT)
        rc = call(g, op, form, send, cnt, recv, info, &q);
    for (; run < runs && rc == MPITOPO_SUCCESS && bad < 0; run++) {
        fill(send, nsend, cnt, run);
        memset(recv, 0xff, rlen * sizeof(int));
        rc = form == PERSISTENT ? mpitopo_start(&q) : call(g, op, form, send, cnt, recv, MPI_INFO_NULL, &q);
        if (rc == MPITOPO_SUCCESS && form != BLOCKING)
            rc = mpitopo_wait(&q);
        memset(ref, 0xff, rlen * sizeof(int));
        if (op == AG)
            MPI_Neighbor_allgather(send, cnt, MPI_INT, ref, cnt, MPI_INT, g->comm);
        else
            MPI_Neighbor_alltoall(send, cnt, MPI_INT, ref, cnt, MPI_INT, g->comm);
        for (int i = 0; i < g->in * cnt && rc == MPITOPO_SUCCESS && bad < 0; i++)
            if (recv[i] != ref[i])
                bad = i;
    }
    MT_CHECK(rc == MPITOPO_SUCCESS, "%s, %s %s, count %d: error %d: %s", how, form_name[form], op_name[op], cnt,
             rc, mpitopo_last_error());
    MT_CHECK(bad < 0, "%s, %s %s, count %d, run %d: recv[%d] = %d, MPI gives %d", how, form_name[form],
             op_name[op], cnt, run - 1, bad, bad < 0 ? 0 : recv[bad], bad < 0 ? 0 : ref[bad]);
    if (q != MPITOPO_REQUEST_NULL)
        mpitopo_request_free(&q);
    free(send);
    free(recv);
    free(ref);
}

/* Count cnt on processes with neighbours; idle_cnt on the others. */
static void check_hint(const char *hint, int idle_cnt)
{
    int cnt = idle(rank) ? idle_cnt : CNT;
    char how[96];
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpitopo_neighbor", hint);
    /* The _init call's info key. */
    graph_t g;
    graph_make(&g);
    snprintf(how, sizeof how, "info key %s", hint);
    for (int op = 0; op < NOPS; op++)
        check(&g, op, PERSISTENT, cnt, info, how);
    MPI_Comm_free(&g.comm);
    /* The communicator's, for every form. */
    graph_make(&g);
    MT_CHECK_RC(mpitopo_comm_set_info(g.comm, info));
    snprintf(how, sizeof how, "comm's key %s", hint);
    for (int op = 0; op < NOPS; op++)
        for (int form = 0; form < NFORMS; form++)
            check(&g, op, form, cnt, MPI_INFO_NULL, how);
    MPI_Comm_free(&g.comm);
    MPI_Info_free(&info);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    idle_list = mt_getenv("MT_IDLE");
    for (int h = 0; h < NHINTS; h++) {
        check_hint(hints[h], 0);
        check_hint(hints[h], CNT);
    }
    /* MPITOPO_NEIGHBOR alone (the testlist sets it on some lines). */
    graph_t g;
    graph_make(&g);
    for (int op = 0; op < NOPS; op++)
        for (int form = 0; form < NFORMS; form++)
            check(&g, op, form, idle(rank) ? 0 : CNT, MPI_INFO_NULL, "MPITOPO_NEIGHBOR");
    MPI_Comm_free(&g.comm);
    int code = mt_finish("neighbor_hints");
    MPI_Finalize();
    return code;
}
