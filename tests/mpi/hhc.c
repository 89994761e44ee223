/*
 * The HHC virtual topology (issue 18) on the largest HHC that MPI_COMM_WORLD
 * holds (9 processes: the 3-HHC, 19: the 4-HHC, 37: the 5-HHC; the others
 * spare): membership, the ID <-> rank table and its string form, the tree
 * and cube communicators, routes against the network "hhc:D", routed
 * messages between every pair (a derived datatype, order kept), the
 * broadcast, gather and allreduce from every root against MPI's own on the
 * same processes, and bad input (the same error everywhere, no hang).
 */
#include "mpitest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

static int dim_for(int n)
{
    int d = 0;
    while (d < 30) {
        int nn = 1, s = 1; /* nodes of the (d+1)-HHC */
        int L = (d + 1 + 2) / 3;
        for (int j = 1; j <= L; j++)
            s = (1 << (j < L ? 3 : d + 1 - 3 * (L - 1))) * s + 1;
        nn = s;
        if (nn > n)
            break;
        d++;
    }
    return d;
}

/* The members in world order: MPI's reference for the collectives
 * (MPI_COMM_NULL on the spare processes). */
static MPI_Comm members(const mpitopo_hhc_t *h)
{
    MPI_Comm c;
    MPI_Comm_split(MPI_COMM_WORLD, h ? 0 : MPI_UNDEFINED, rank, &c);
    return c;
}

static void check_table(mpitopo_hhc_t *h, int dim, int nnodes)
{
    mpitopo_network_t *net = NULL;
    char desc[16];
    snprintf(desc, sizeof desc, "hhc:%d", dim);
    MT_CHECK_RC(mpitopo_network_from_string(desc, &net));
    long long me;
    int d, n;
    MT_CHECK_RC(mpitopo_hhc_info(h, &d, &n, &me));
    MT_CHECK(d == dim && n == nnodes, "info: dim %d nnodes %d", d, n);
    MPI_Comm tree, cube;
    MT_CHECK_RC(mpitopo_hhc_comm(h, MPITOPO_HHC_TREE, &tree));
    MT_CHECK_RC(mpitopo_hhc_comm(h, MPITOPO_HHC_CUBE, &cube));
    int status, trank, tsize, r, tr;
    MPI_Topo_test(tree, &status);
    MPI_Comm_rank(tree, &trank);
    MPI_Comm_size(tree, &tsize);
    MT_CHECK(status == MPI_DIST_GRAPH && tsize == nnodes, "tree: topology %d size %d", status, tsize);
    MT_CHECK_RC(mpitopo_hhc_rank_of_id(h, me, &r, &tr));
    MT_CHECK(r == rank && tr == trank, "my id %llx: rank %d (mine %d), tree rank %d (mine %d)", me, r, rank,
             tr, trank);
    int level, pos;
    long long centre;
    MT_CHECK_RC(mpitopo_hhc_node(h, me, &level, &centre, &pos));
    MT_CHECK((cube == MPI_COMM_NULL) == (trank == nnodes - 1), "cube of tree rank %d", trank);
    if (cube != MPI_COMM_NULL) {
        int cdims[3], cper[3], coords[3], nd, crank;
        MPI_Topo_test(cube, &status);
        MPI_Cartdim_get(cube, &nd);
        MPI_Cart_get(cube, nd, cdims, cper, coords);
        MPI_Comm_rank(cube, &crank);
        MT_CHECK(status == MPI_CART && crank == pos && nd >= 1 && nd <= 3 && cdims[0] == 2,
                 "cube: topology %d rank %d position %d ndims %d", status, crank, pos, nd);
        MT_CHECK((me >> (4 * level) & 15) == pos, "position %d of %llx at level %d", pos, me, level);
    }
    /* Every node: ID <-> rank, the string, routes against the network's. */
    int maxr = 0;
    mpitopo_network_size(net, NULL, NULL, &maxr);
    for (int v = 0; v < nnodes; v++) {
        char name[MPITOPO_HHC_ID_LEN], nname[64];
        long long id, back;
        mpitopo_network_node_name(net, v, nname, sizeof nname);
        MT_CHECK_RC(mpitopo_hhc_id_from_string(h, nname, &id));
        MT_CHECK_RC(mpitopo_hhc_id_to_string(h, id, name, sizeof name));
        MT_CHECK(strcmp(name, nname) == 0, "node %d: %s, network %s", v, name, nname);
        MT_CHECK_RC(mpitopo_hhc_rank_of_id(h, id, &r, &tr));
        MT_CHECK(tr == v, "node %d: tree rank %d", v, tr);
        MT_CHECK_RC(mpitopo_hhc_id_of_rank(h, r, &back));
        MT_CHECK(back == id, "node %d: rank %d gives %llx", v, r, back);
        for (int w = 0; w < nnodes; w++) {
            long long ids[64], wid;
            int ranks[64], comms[64], len, nlen;
            int64_t ch[64];
            mpitopo_network_node_name(net, w, nname, sizeof nname);
            mpitopo_hhc_id_from_string(h, nname, &wid);
            MT_CHECK_RC(mpitopo_hhc_route(h, id, wid, 64, ids, ranks, comms, &len));
            MT_CHECK_RC(mpitopo_network_route(net, v, w, 64, ch, &nlen));
            MT_CHECK(len == nlen && len <= maxr, "route %d -> %d: %d hops, network %d", v, w, len, nlen);
            MT_CHECK(len == 0 || ids[len - 1] == wid, "route %d -> %d ends elsewhere", v, w);
        }
    }
    mpitopo_network_destroy(&net);
}

/* Under emulation (without a network: the tree mapper), the placement's
 * weighted cost of the pattern hhc:D is never above the launch order's
 * (node i on world rank i). Every process checks. */
static void check_placement(mpitopo_hhc_t *h, int dim, int nnodes)
{
    mpitopo_machine_t *emu = NULL;
    int *leaf = NULL;
    if (!mt_emulation(&emu, &leaf) || !emu || mt_getenv("MPITOPO_NETWORK")) {
        free(leaf);
        mpitopo_machine_destroy(&emu);
        return;
    }
    char desc[16];
    snprintf(desc, sizeof desc, "hhc:%d", dim);
    mpitopo_pattern_t *pat = NULL;
    MT_CHECK_RC(mpitopo_pattern_from_string(desc, &pat));
    int *placed = malloc((size_t)nnodes * sizeof *placed);
    mpitopo_network_t *net = NULL;
    MT_CHECK_RC(mpitopo_network_from_string(desc, &net));
    for (int v = 0; v < nnodes; v++) { /* node v: its ID by the network's name, its rank, its leaf */
        long long id = 0;
        int r = 0;
        char name[64];
        mpitopo_network_node_name(net, v, name, sizeof name);
        MT_CHECK_RC(mpitopo_hhc_id_from_string(h, name, &id));
        MT_CHECK_RC(mpitopo_hhc_rank_of_id(h, id, &r, NULL));
        placed[v] = leaf[r];
    }
    mpitopo_network_destroy(&net);
    double launch = 0, mapped = 0;
    MT_CHECK_RC(mpitopo_metrics_cost(emu, pat, leaf, MPITOPO_WEIGHT_BYTES, &launch));
    MT_CHECK_RC(mpitopo_metrics_cost(emu, pat, placed, MPITOPO_WEIGHT_BYTES, &mapped));
    MT_CHECK(mapped <= launch, "placement cost %g above the launch order's %g", mapped, launch);
    free(placed);
    free(leaf);
    mpitopo_pattern_destroy(&pat);
    mpitopo_machine_destroy(&emu);
}

/* Every node sends two messages to every node (itself included), a vector
 * of every other int; receives them by source in order, then any. */
static void check_routed(mpitopo_hhc_t *h, int nnodes)
{
    long long me;
    mpitopo_hhc_info(h, NULL, NULL, &me);
    MPI_Datatype vec;
    MPI_Type_vector(3, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Comm tree;
    mpitopo_hhc_comm(h, MPITOPO_HHC_TREE, &tree);
    int trank;
    MPI_Comm_rank(tree, &trank);
    long long *ids = malloc((size_t)nnodes * sizeof *ids);
    MPI_Allgather(&me, 1, MPI_LONG_LONG, ids, 1, MPI_LONG_LONG, tree);
    for (int w = 0; w < nnodes; w++)
        for (int k = 0; k < 2; k++) {
            int buf[6] = {trank, -1, w, -1, k, -1};
            MT_CHECK_RC(mpitopo_hhc_send(buf, 1, vec, ids[w], 7, h));
        }
    for (int v = 0; v < nnodes; v++)
        for (int k = 0; k < 2; k++) {
            int buf[6] = {-5, -5, -5, -5, -5, -5};
            long long from;
            int tag;
            MT_CHECK_RC(mpitopo_hhc_recv(buf, 1, vec, ids[v], MPI_ANY_TAG, h, &from, &tag));
            MT_CHECK(buf[0] == v && buf[2] == trank && buf[4] == k && buf[1] == -5 && from == ids[v] &&
                         tag == 7,
                     "routed %d -> %d #%d: got %d %d %d %d from %llx tag %d", v, trank, k, buf[0], buf[1],
                     buf[2], buf[4], from, tag);
        }
    /* Any source: the tree's neighbours' ring. */
    int next = (trank + 1) % nnodes, x = trank * 10;
    MT_CHECK_RC(mpitopo_hhc_send(&x, 1, MPI_INT, ids[next], 9, h));
    long long from;
    MT_CHECK_RC(mpitopo_hhc_recv(&x, 1, MPI_INT, MPITOPO_HHC_ANY, 9, h, &from, NULL));
    int prev = (trank + nnodes - 1) % nnodes;
    MT_CHECK(x == prev * 10 && from == ids[prev], "any: %d from %llx", x, from);
    /* Nonblocking: the ring again, polled. */
    x = trank * 10 + 1;
    MT_CHECK_RC(mpitopo_hhc_send(&x, 1, MPI_INT, ids[next], 11, h));
    for (int flag = 0; !flag;)
        if (!MT_CHECK_RC(mpitopo_hhc_try_recv(&x, 1, MPI_INT, ids[prev], 11, h, &flag, &from, NULL)))
            break;
    MT_CHECK(x == prev * 10 + 1 && from == ids[prev], "try_recv: %d from %llx", x, from);
    MT_CHECK_RC(mpitopo_hhc_fence(h));
    free(ids);
    MPI_Type_free(&vec);
}

/* Nonblocking routed messages: K in flight from every node to every node
 * (itself included) with tag 7, a vector of every other int, interleaved
 * with the user's own messages on MPI_COMM_WORLD with the same tag (a ring
 * over the members), no fence: receives from the lower half of the nodes
 * are posted before the sends (matched on arrival), the others after (they
 * take arrived messages); every receive from one source must see that
 * source's messages in the order sent. The user's traffic completes with
 * MPI_Testall and mpitopo_hhc_progress, the last phase with an MPI_Ibarrier
 * polled the same way, the documented way to end without a fence. */
static void check_nonblocking(mpitopo_hhc_t *h, int nnodes, MPI_Comm ref)
{
    enum { K = 3 };
    long long me;
    mpitopo_hhc_info(h, NULL, NULL, &me);
    MPI_Comm tree;
    mpitopo_hhc_comm(h, MPITOPO_HHC_TREE, &tree);
    int trank, mrank, msize;
    MPI_Comm_rank(tree, &trank);
    MPI_Comm_rank(ref, &mrank);
    MPI_Comm_size(ref, &msize);
    long long *ids = malloc((size_t)nnodes * sizeof *ids);
    int *world_of = malloc((size_t)msize * sizeof *world_of);
    MPI_Allgather(&me, 1, MPI_LONG_LONG, ids, 1, MPI_LONG_LONG, tree);
    MPI_Allgather(&rank, 1, MPI_INT, world_of, 1, MPI_INT, ref);
    MPI_Datatype vec;
    MPI_Type_vector(3, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int n = nnodes * K;
    int(*in)[6] = malloc((size_t)n * sizeof *in), (*out)[6] = malloc((size_t)n * sizeof *out);
    mpitopo_hhc_request_t *rr = malloc((size_t)n * sizeof *rr), *sr = malloc((size_t)n * sizeof *sr);
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < 6; j++)
            in[i][j] = -5;
        rr[i] = sr[i] = MPITOPO_HHC_REQUEST_NULL;
    }
    /* A type freed while its receives are pending (they keep a duplicate). */
    MPI_Datatype rvec;
    MPI_Type_dup(vec, &rvec);
    int half = nnodes / 2;
    for (int v = 0; v < half; v++)
        for (int k = 0; k < K; k++)
            MT_CHECK_RC(mpitopo_hhc_irecv(in[v * K + k], 1, rvec, ids[v], 7, h, &rr[v * K + k]));
    MPI_Type_free(&rvec);
    /* The user's ring on the world, same tag, posted among the sends. */
    int unext = world_of[(mrank + 1) % msize], uprev = world_of[(mrank + msize - 1) % msize];
    int usend[2] = {rank, 4242}, urecv[2] = {-1, -1};
    MPI_Request ureq[2];
    MPI_Irecv(urecv, 2, MPI_INT, uprev, 7, MPI_COMM_WORLD, &ureq[0]);
    for (int w = 0; w < nnodes; w++) {
        for (int k = 0; k < K; k++) {
            int i = w * K + k;
            out[i][0] = trank;
            out[i][2] = w;
            out[i][4] = k;
            out[i][1] = out[i][3] = out[i][5] = -1;
            MT_CHECK_RC(mpitopo_hhc_isend(out[i], 1, vec, ids[w], 7, h, &sr[i]));
        }
        if (w == half)
            MPI_Isend(usend, 2, MPI_INT, unext, 7, MPI_COMM_WORLD, &ureq[1]);
    }
    if (half >= nnodes)
        MPI_Isend(usend, 2, MPI_INT, unext, 7, MPI_COMM_WORLD, &ureq[1]);
    for (int v = half; v < nnodes; v++)
        for (int k = 0; k < K; k++)
            MT_CHECK_RC(mpitopo_hhc_irecv(in[v * K + k], 1, vec, ids[v], 7, h, &rr[v * K + k]));
    for (int done = 0; !done;) {
        MPI_Testall(2, ureq, &done, MPI_STATUSES_IGNORE);
        MT_CHECK_RC(mpitopo_hhc_progress(h));
    }
    MT_CHECK(urecv[0] == uprev && urecv[1] == 4242, "user ring: %d %d from world rank %d", urecv[0], urecv[1],
             uprev);
    /* Sends by wait and test, receives by waitall. */
    for (int i = 0; i < n; i += 2)
        MT_CHECK_RC(mpitopo_hhc_wait(&sr[i], NULL, NULL));
    for (int i = 1; i < n; i += 2)
        for (int flag = 0; !flag;)
            if (!MT_CHECK_RC(mpitopo_hhc_test(&sr[i], &flag, NULL, NULL)))
                break;
    MT_CHECK_RC(mpitopo_hhc_waitall(n, rr));
    for (int i = 0; i < n; i++) {
        int v = i / K, k = i % K;
        MT_CHECK(sr[i] == MPITOPO_HHC_REQUEST_NULL && rr[i] == MPITOPO_HHC_REQUEST_NULL, "request %d kept", i);
        MT_CHECK(in[i][0] == v && in[i][2] == trank && in[i][4] == k && in[i][1] == -5 && in[i][5] == -5,
                 "nonblocking %d -> %d #%d: got %d %d %d", v, trank, k, in[i][0], in[i][2], in[i][4]);
    }
    /* Any source, tested: the ring of tree ranks, with a blocking send
     * between (order between the two kinds of send kept). */
    int next = (trank + 1) % nnodes, prev = (trank + nnodes - 1) % nnodes, x[2] = {-1, -1};
    mpitopo_hhc_request_t a = MPITOPO_HHC_REQUEST_NULL, b = MPITOPO_HHC_REQUEST_NULL, s = NULL;
    MT_CHECK_RC(mpitopo_hhc_irecv(&x[0], 1, MPI_INT, MPITOPO_HHC_ANY, 13, h, &a));
    MT_CHECK_RC(mpitopo_hhc_irecv(&x[1], 1, MPI_INT, MPITOPO_HHC_ANY, MPI_ANY_TAG, h, &b));
    int y0 = trank * 10, y1 = trank * 10 + 1;
    MT_CHECK_RC(mpitopo_hhc_isend(&y0, 1, MPI_INT, ids[next], 13, h, &s));
    MT_CHECK_RC(mpitopo_hhc_send(&y1, 1, MPI_INT, ids[next], 14, h));
    long long from = -1, from2 = -1;
    int tag = -1, tag2 = -1;
    for (int flag = 0; !flag;)
        if (!MT_CHECK_RC(mpitopo_hhc_test(&a, &flag, &from, &tag)))
            break;
    MT_CHECK_RC(mpitopo_hhc_wait(&b, &from2, &tag2));
    MT_CHECK_RC(mpitopo_hhc_wait(&s, NULL, NULL));
    MT_CHECK(x[0] == prev * 10 && from == ids[prev] && tag == 13 && x[1] == prev * 10 + 1 &&
                 from2 == ids[prev] && tag2 == 14,
             "any: %d from %llx tag %d, then %d from %llx tag %d", x[0], from, tag, x[1], from2, tag2);
    /* The end without a fence: a nonblocking barrier of the user's, polled
     * with the routed progress, so that messages still crossing a process
     * that is done move on. */
    MPI_Request bar;
    MPI_Ibarrier(ref, &bar);
    for (int done = 0; !done;) {
        MPI_Test(&bar, &done, MPI_STATUS_IGNORE);
        MT_CHECK_RC(mpitopo_hhc_progress(h));
    }
    MPI_Type_free(&vec);
    free(in);
    free(out);
    free(rr);
    free(sr);
    free(ids);
    free(world_of);
}

/* Collectives from every root against MPI's on the members in world order. */
static void check_collectives(mpitopo_hhc_t *h, int nnodes, MPI_Comm ref)
{
    int mrank;
    MPI_Comm_rank(ref, &mrank);
    long long *ids = malloc((size_t)nnodes * sizeof *ids);
    long long me;
    mpitopo_hhc_info(h, NULL, NULL, &me);
    MPI_Allgather(&me, 1, MPI_LONG_LONG, ids, 1, MPI_LONG_LONG, ref);
    enum { N = 5 };
    int *got = malloc((size_t)nnodes * N * sizeof *got), *want = malloc((size_t)nnodes * N * sizeof *want);
    MPI_Datatype gvec; /* extent 5 ints = N: block p at 5 p */
    MPI_Type_vector(3, 1, 2, MPI_INT, &gvec);
    MPI_Type_commit(&gvec);
    for (int root = 0; root < nnodes; root++) {
        int a[N], b[N];
        for (int i = 0; i < N; i++)
            a[i] = b[i] = mrank == root ? 1000 * root + i : -1;
        MT_CHECK_RC(mpitopo_hhc_bcast(a, N, MPI_INT, ids[root], h));
        MPI_Bcast(b, N, MPI_INT, root, ref);
        MT_CHECK(memcmp(a, b, sizeof a) == 0, "bcast from %d: %d %d, MPI %d %d", root, a[0], a[4], b[0], b[4]);
        int mine[N];
        for (int i = 0; i < N; i++)
            mine[i] = 100 * mrank + i + root;
        memset(got, 0xff, (size_t)nnodes * N * sizeof *got);
        memset(want, 0xff, (size_t)nnodes * N * sizeof *want);
        MT_CHECK_RC(mpitopo_hhc_gather(mine, N, MPI_INT, got, N, MPI_INT, ids[root], h));
        MPI_Gather(mine, N, MPI_INT, want, N, MPI_INT, root, ref);
        if (mrank == root)
            MT_CHECK(memcmp(got, want, (size_t)nnodes * N * sizeof *got) == 0, "gather to %d differs", root);
        /* A vector of 3 ints (every other), sent and received, in place
         * at root. */
        int vmine[6] = {mrank, -1, mrank + root, -1, 7 * mrank, -1};
        memset(got, 0xff, (size_t)nnodes * N * sizeof *got);
        memset(want, 0xff, (size_t)nnodes * N * sizeof *want);
        if (mrank == root) {
            memcpy(got + N * mrank, vmine, 5 * sizeof *vmine);
            memcpy(want + N * mrank, vmine, 5 * sizeof *vmine);
        }
        MT_CHECK_RC(mpitopo_hhc_gather(mrank == root ? MPI_IN_PLACE : vmine, 1, gvec, got, 1, gvec, ids[root], h));
        MPI_Gather(mrank == root ? MPI_IN_PLACE : vmine, 1, gvec, want, 1, gvec, root, ref);
        if (mrank == root)
            MT_CHECK(memcmp(got, want, (size_t)nnodes * N * sizeof *got) == 0 && got[N * mrank] == mrank &&
                         got[N * mrank + 1] == -1,
                     "gather of vectors in place to %d", root);
    }
    MPI_Type_free(&gvec);
    /* Types that differ but match in signature: a vector of 3 ints sent,
     * 3 contiguous ints received, to the top centre and to world order 0. */
    MPI_Datatype vec;
    MPI_Type_vector(3, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    for (int k = 0; k < 2; k++) {
        int root = k == 0 ? 0 : nnodes - 1, mine[6] = {mrank, -1, mrank + 1, -1, mrank + 2, -1};
        long long rid = ids[root];
        memset(got, 0xff, (size_t)nnodes * 3 * sizeof *got);
        MT_CHECK_RC(mpitopo_hhc_gather(mine, 1, vec, got, 3, MPI_INT, rid, h));
        for (int p = 0; mrank == root && p < nnodes; p++)
            MT_CHECK(got[3 * p] == p && got[3 * p + 1] == p + 1 && got[3 * p + 2] == p + 2,
                     "gather of a vector to %d: block %d = %d %d %d", root, p, got[3 * p], got[3 * p + 1],
                     got[3 * p + 2]);
        int b[6] = {-1, -1, -1, -1, -1, -1};
        if (mrank == root)
            memcpy(b, mine, sizeof b);
        MT_CHECK_RC(mpitopo_hhc_bcast(b, 1, vec, rid, h));
        MT_CHECK(b[0] == root && b[2] == root + 1 && b[4] == root + 2 && (mrank == root || b[1] == -1),
                 "bcast of a vector from %d: %d %d %d %d", root, b[0], b[1], b[2], b[4]);
    }
    MPI_Type_free(&vec);
    MPI_Op ops[] = {MPI_SUM, MPI_MAX, MPI_BXOR};
    for (int o = 0; o < 3; o++) {
        int in[N], out[N], ref_out[N];
        for (int i = 0; i < N; i++)
            in[i] = (mrank * 7919 + i * 31) % 1013;
        MT_CHECK_RC(mpitopo_hhc_allreduce(in, out, N, MPI_INT, ops[o], h));
        MPI_Allreduce(in, ref_out, N, MPI_INT, ops[o], ref);
        MT_CHECK(memcmp(out, ref_out, sizeof out) == 0, "allreduce op %d: %d, MPI %d", o, out[0], ref_out[0]);
        memcpy(out, in, sizeof in);
        MT_CHECK_RC(mpitopo_hhc_allreduce(MPI_IN_PLACE, out, N, MPI_INT, ops[o], h));
        MT_CHECK(memcmp(out, ref_out, sizeof out) == 0, "allreduce in place op %d", o);
    }
    free(got);
    free(want);
    free(ids);
}

static void check_errors(int dim)
{
    mpitopo_hhc_t *h = (mpitopo_hhc_t *)&rank; /* must be reset to NULL */
    int rc = mpitopo_hhc_create(MPI_COMM_WORLD, dim + 1, MPI_INFO_NULL, &h);
    MT_CHECK(rc == MPITOPO_ERR_ARG && h == NULL, "dim %d too big: %s", dim + 1, mpitopo_err_name(rc));
    rc = mpitopo_hhc_create(MPI_COMM_WORLD, 0, MPI_INFO_NULL, &h);
    MT_CHECK(rc == MPITOPO_ERR_ARG, "dim 0: %s", mpitopo_err_name(rc));
    if (dim > 1) { /* valid on every process, but different */
        rc = mpitopo_hhc_create(MPI_COMM_WORLD, rank == size - 1 ? dim - 1 : dim, MPI_INFO_NULL, &h);
        MT_CHECK(rc == MPITOPO_ERR_MISMATCH && h == NULL, "mismatched dims: %s (%s)", mpitopo_err_name(rc),
                 mpitopo_last_error());
        MT_CHECK(strstr(mpitopo_last_error(), "dim") != NULL, "message: %s", mpitopo_last_error());
    }
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpitopo_reorder", rank == 0 ? "false" : "true");
    rc = mpitopo_hhc_create(MPI_COMM_WORLD, dim, info, &h);
    MT_CHECK(rc == MPITOPO_ERR_MISMATCH && h == NULL, "mismatched reorder: %s (%s)", mpitopo_err_name(rc),
             mpitopo_last_error());
    MPI_Info_set(info, "mpitopo_reorder", "maybe");
    rc = mpitopo_hhc_create(MPI_COMM_WORLD, dim, info, &h);
    MT_CHECK(rc == MPITOPO_ERR_PARSE, "bad reorder: %s", mpitopo_err_name(rc));
    MPI_Info_set(info, "mpitopo_reorder", "true");
    MPI_Info_set(info, "mpitopo_hhc_gather", "tree");
    rc = mpitopo_hhc_create(MPI_COMM_WORLD, dim, info, &h);
    MT_CHECK(rc == MPITOPO_ERR_PARSE && strstr(mpitopo_last_error(), "mpitopo_hhc_gather") != NULL,
             "bad mpitopo_hhc_gather: %s (%s)", mpitopo_err_name(rc), mpitopo_last_error());
    MPI_Info_set(info, "mpitopo_hhc_gather", rank == 0 ? "cubes" : "auto");
    rc = mpitopo_hhc_create(MPI_COMM_WORLD, dim, info, &h);
    MT_CHECK(rc == MPITOPO_ERR_MISMATCH && h == NULL, "mismatched mpitopo_hhc_gather: %s (%s)",
             mpitopo_err_name(rc), mpitopo_last_error());
    MPI_Info_free(&info);
    mpitopo_hhc_request_t pending = MPITOPO_HHC_REQUEST_NULL;
    static int pending_buf;
    MT_CHECK_RC(mpitopo_hhc_create(MPI_COMM_WORLD, dim, MPI_INFO_NULL, &h));
    if (h) {
        long long id;
        int r;
        MT_CHECK(mpitopo_hhc_rank_of_id(h, 0x9, &r, NULL) == MPITOPO_ERR_ARG, "nibble 1001 accepted");
        MT_CHECK(mpitopo_hhc_rank_of_id(h, 0x8LL << (4 * ((dim + 2) / 3)), &r, NULL) == MPITOPO_ERR_ARG,
                 "a nibble too many accepted");
        MT_CHECK(mpitopo_hhc_id_from_string(h, "0001.0001.0001.0001", &id) == MPITOPO_ERR_PARSE,
                 "wrong length accepted");
        MT_CHECK(mpitopo_hhc_id_from_string(h, dim <= 3 ? "1001" : "0000.1001", &id) == MPITOPO_ERR_PARSE,
                 "nibble 1001 accepted");
        MT_CHECK(mpitopo_hhc_id_from_string(h, "1000.0000", &id) == MPITOPO_ERR_PARSE,
                 "1000.0000 accepted");
        MT_CHECK(mpitopo_hhc_send(&r, 1, MPI_INT, 0xA, 0, h) == MPITOPO_ERR_ARG, "send to 1010 accepted");
        mpitopo_hhc_request_t q = (mpitopo_hhc_request_t)&rank;
        MT_CHECK(mpitopo_hhc_isend(&r, 1, MPI_INT, 0xA, 0, h, &q) == MPITOPO_ERR_ARG && q == NULL,
                 "isend to 1010 accepted");
        MT_CHECK(mpitopo_hhc_isend(&r, 1, MPI_INT, 0x8, 0, h, NULL) == MPITOPO_ERR_ARG, "request NULL accepted");
        MT_CHECK(mpitopo_hhc_wait(NULL, NULL, NULL) == MPITOPO_ERR_ARG, "wait on NULL accepted");
        MT_CHECK(mpitopo_hhc_waitall(-1, NULL) == MPITOPO_ERR_ARG, "waitall of -1 accepted");
        /* Longer than the receive: it fails in the wait, and is dropped. */
        long long self;
        int two[2] = {1, 2}, one = 0, flag = 0;
        mpitopo_hhc_info(h, NULL, NULL, &self);
        mpitopo_hhc_request_t s = NULL;
        MT_CHECK_RC(mpitopo_hhc_irecv(&one, 1, MPI_INT, self, 3, h, &q));
        MT_CHECK_RC(mpitopo_hhc_isend(two, 2, MPI_INT, self, 3, h, &s));
        MT_CHECK_RC(mpitopo_hhc_wait(&s, NULL, NULL));
        int rc2 = mpitopo_hhc_wait(&q, NULL, NULL);
        MT_CHECK(rc2 == MPITOPO_ERR_ARG && q == NULL && strstr(mpitopo_last_error(), "longer") != NULL,
                 "truncated receive: %s (%s)", mpitopo_err_name(rc2), mpitopo_last_error());
        MT_CHECK_RC(mpitopo_hhc_try_recv(&one, 1, MPI_INT, self, 3, h, &flag, NULL, NULL));
        MT_CHECK(flag == 0, "the truncated message was kept");
        /* A receive left pending when the HHC is freed fails in its wait. */
        MT_CHECK_RC(mpitopo_hhc_irecv(&pending_buf, 1, MPI_INT, self, 4, h, &pending));
    }
    MT_CHECK_RC(mpitopo_hhc_free(&h));
    MT_CHECK(h == NULL, "free leaves the handle");
    if (pending) {
        int rc3 = mpitopo_hhc_wait(&pending, NULL, NULL);
        MT_CHECK(rc3 == MPITOPO_ERR_ARG && pending == NULL, "wait after free: %s", mpitopo_err_name(rc3));
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int dim = dim_for(size);
    const char *reorders[] = {"true", "false"};
    for (int o = 0; o < 2; o++) {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "mpitopo_reorder", reorders[o]);
        if (o == 1) /* every cube gathers over its Cartesian communicator */
            MPI_Info_set(info, "mpitopo_hhc_gather", "cubes");
        mpitopo_hhc_t *h = NULL;
        MT_CHECK_RC(mpitopo_hhc_create(MPI_COMM_WORLD, dim, info, &h));
        MPI_Info_free(&info);
        int in = h != NULL, count = 0, nnodes = 0;
        MPI_Allreduce(&in, &count, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (h)
            mpitopo_hhc_info(h, NULL, &nnodes, NULL);
        MPI_Allreduce(MPI_IN_PLACE, &nnodes, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        MT_CHECK(count == nnodes && nnodes <= size, "%d members of the %d-HHC (%d nodes)", count, dim, nnodes);
        if (o == 1)
            MT_CHECK(in == (rank < nnodes), "without reorder rank %d member %d", rank, in);
        MPI_Comm ref = members(h); /* collective over the world: spares too */
        if (h) {
            check_table(h, dim, nnodes);
            check_placement(h, dim, nnodes);
            check_routed(h, nnodes);
            check_nonblocking(h, nnodes, ref);
            check_collectives(h, nnodes, ref);
            MPI_Comm_free(&ref);
        }
        MT_CHECK_RC(mpitopo_hhc_free(&h));
    }
    check_errors(dim);
    int rc = mt_finish("hhc");
    MPI_Finalize();
    return rc;
}
