#include "mpitest.h"

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MT_MSG 256

static char first_failure[MT_MSG];
static int nfailures;

int mt_fail(const char *file, int line, const char *fmt, ...)
{
    if (nfailures++ == 0) {
        const char *base = strrchr(file, '/');
        int n = snprintf(first_failure, sizeof first_failure, "%s:%d: ", base ? base + 1 : file,
                         line);
        va_list ap;
        va_start(ap, fmt);
        if (n > 0 && n < MT_MSG)
            vsnprintf(first_failure + n, sizeof first_failure - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return 0;
}

int mt_check_rc_(int rc, const char *what, const char *file, int line)
{
    if (rc == MPITOPO_SUCCESS)
        return 1;
    return mt_fail(file, line, "%s returned %s (%d): %s", what, mpitopo_err_name(rc), rc,
                   mpitopo_last_error());
}

int mt_failed(void)
{
    return nfailures > 0;
}

int mt_finish(const char *name)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* How many ranks failed, and the lowest of them. */
    int mine[2] = {nfailures > 0, nfailures > 0 ? -rank : -size}, all[2];
    MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    int nfailed_max = all[0], first = -all[1];
    int count = nfailures > 0, nfailed = 0;
    MPI_Reduce(&count, &nfailed, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    char *msgs = rank == 0 ? malloc((size_t)size * MT_MSG) : NULL;
    MPI_Gather(first_failure, MT_MSG, MPI_CHAR, msgs, MT_MSG, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (!nfailed_max)
            printf("PASS %s\n", name);
        else
            printf("FAIL %s: %d of %d ranks failed; rank %d: %.*s\n", name, nfailed, size, first,
                   MT_MSG, msgs ? msgs + (size_t)first * MT_MSG : "(no memory for messages)");
        fflush(stdout);
    }
    free(msgs);
    return nfailed_max ? 1 : 0;
}

int mt_is_mpich(void)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(version, &len);
    return strstr(version, "MPICH") != NULL;
}

const char *mt_getenv(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

int mt_emulation(mpitopo_machine_t **machine, int **leaf_of_world)
{
    const char *desc = mt_getenv("MPITOPO_EMULATE");
    const char *spec = mt_getenv("MPITOPO_EMULATE_PLACEMENT");
    int wsize;
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    *machine = NULL;
    *leaf_of_world = NULL;
    if (!desc)
        return 1;
    int *leaves = malloc((size_t)wsize * sizeof *leaves);
    if (!MT_CHECK_RC(mpitopo_machine_from_string(desc, machine)) ||
        !MT_CHECK_RC(mpitopo_placement(*machine, wsize, spec ? spec : "block", leaves))) {
        mpitopo_machine_destroy(machine);
        free(leaves);
        return 0;
    }
    *leaf_of_world = leaves;
    return 1;
}

/* MPICH's fake nodes: n cliques, by block (sizes differ by at most one,
 * larger first) or round-robin. */
static int clique_of(int r, int size, int n, int by_block)
{
    if (!by_block)
        return r % n;
    int q = size / n, rem = size % n;
    return r < rem * (q + 1) ? r / (q + 1) : rem + (r - rem * (q + 1)) / q;
}

int *mt_node_keys(void)
{
    int wsize;
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    int *keys = calloc((size_t)wsize, sizeof *keys);
    mpitopo_machine_t *m;
    int *leaves;
    if (mt_emulation(&m, &leaves) && m) {
        int level;
        mpitopo_machine_node_level(m, &level);
        for (int r = 0; r < wsize; r++)
            mpitopo_machine_unit_of(m, level, leaves[r], &keys[r]);
    } else if (mt_is_mpich() && mt_getenv("MPIR_CVAR_NUM_CLIQUES")) {
        int n = atoi(getenv("MPIR_CVAR_NUM_CLIQUES"));
        const char *b = mt_getenv("MPIR_CVAR_CLIQUES_BY_BLOCK");
        for (int r = 0; n > 0 && r < wsize; r++)
            keys[r] = clique_of(r, wsize, n, b && atoi(b));
    }
    mpitopo_machine_destroy(&m);
    free(leaves);
    return keys;
}

int *mt_ranks_in(MPI_Comm sub, MPI_Comm comm)
{
    int size;
    MPI_Comm_size(sub, &size);
    int *ranks = malloc((size_t)size * sizeof *ranks), *in = malloc((size_t)size * sizeof *in);
    MPI_Group g, cg;
    MPI_Comm_group(sub, &g);
    MPI_Comm_group(comm, &cg);
    for (int i = 0; i < size; i++)
        ranks[i] = i;
    MPI_Group_translate_ranks(g, size, ranks, cg, in);
    MPI_Group_free(&g);
    MPI_Group_free(&cg);
    free(ranks);
    return in;
}

int *mt_world_ranks(MPI_Comm comm)
{
    return mt_ranks_in(comm, MPI_COMM_WORLD);
}

int mt_cart_rank_of(int ndims, const int *dims, const int *periods, const int *coords)
{
    int r = 0;
    for (int d = 0; d < ndims; d++) {
        int c = coords[d];
        if (c < 0 || c >= dims[d]) {
            if (!periods[d])
                return MPI_PROC_NULL;
            c = ((c % dims[d]) + dims[d]) % dims[d];
        }
        r = r * dims[d] + c;
    }
    return r;
}

/* The shifts of the calling process by +-1 and +-2 along every dimension. */
static int cart_check_shifts(MPI_Comm cart, int ndims, const int *dims, const int *periods,
                             const int *mine, const char *label)
{
    static const int disps[] = {1, -1, 2, -2};
    int c[MPITOPO_MAX_DIMS];
    for (int d = 0; d < ndims; d++)
        for (int k = 0; k < 4; k++) {
            int src, dst, want_src, want_dst;
            MPI_Cart_shift(cart, d, disps[k], &src, &dst);
            memcpy(c, mine, (size_t)ndims * sizeof *c);
            c[d] = mine[d] + disps[k];
            want_dst = mt_cart_rank_of(ndims, dims, periods, c);
            c[d] = mine[d] - disps[k];
            want_src = mt_cart_rank_of(ndims, dims, periods, c);
            if (!MT_CHECK(src == want_src && dst == want_dst,
                          "%s: MPI_Cart_shift(dim %d, disp %d) gives source %d, dest %d; "
                          "expected %d, %d", label, d, disps[k], src, dst, want_src, want_dst))
                return 0;
        }
    return 1;
}

int mt_cart_check(MPI_Comm cart, int ndims, const int *dims, const int *periods,
                  const char *label)
{
    int status = MPI_UNDEFINED, nd = -1, size, rank, prod = 1;
    int gd[MPITOPO_MAX_DIMS + 1], gp[MPITOPO_MAX_DIMS + 1], mine[MPITOPO_MAX_DIMS + 1];
    int c[MPITOPO_MAX_DIMS + 1], want[MPITOPO_MAX_DIMS + 1];
    if (!MT_CHECK(cart != MPI_COMM_NULL, "%s: MPI_COMM_NULL", label))
        return 0;
    MPI_Topo_test(cart, &status);
    if (!MT_CHECK(status == MPI_CART, "%s: MPI_Topo_test gives %d, not MPI_CART (%d)", label,
                  status, MPI_CART))
        return 0;
    MPI_Cartdim_get(cart, &nd);
    if (!MT_CHECK(nd == ndims, "%s: MPI_Cartdim_get gives %d dimensions, expected %d", label,
                  nd, ndims))
        return 0;
    for (int d = 0; d < ndims; d++)
        prod *= dims[d];
    MPI_Comm_size(cart, &size);
    MPI_Comm_rank(cart, &rank);
    if (!MT_CHECK(size == prod, "%s: %d processes, expected prod(dims) = %d", label, size, prod))
        return 0;
    MPI_Cart_get(cart, ndims, gd, gp, mine);
    for (int d = 0; d < ndims; d++)
        if (!MT_CHECK(gd[d] == dims[d] && !gp[d] == !periods[d],
                      "%s: MPI_Cart_get gives dims[%d] = %d, periods[%d] = %d; expected %d, %d",
                      label, d, gd[d], d, gp[d], dims[d], periods[d]))
            return 0;
    /* Every rank's coordinates are its row-major position, and back. */
    for (int r = 0; r < size; r++) {
        int back = -1, rem = r;
        MPI_Cart_coords(cart, r, ndims, c);
        for (int d = ndims - 1; d >= 0; d--) {
            want[d] = rem % dims[d];
            rem /= dims[d];
        }
        MPI_Cart_rank(cart, c, &back);
        if (!MT_CHECK(!memcmp(c, want, (size_t)ndims * sizeof *c) && back == r,
                      "%s: rank %d has coordinates not row-major, or MPI_Cart_rank gives %d",
                      label, r, back))
            return 0;
        if (r == rank && !MT_CHECK(!memcmp(c, mine, (size_t)ndims * sizeof *c),
                                   "%s: MPI_Cart_get and MPI_Cart_coords disagree", label))
            return 0;
    }
    /* MPI_Cart_rank wraps coordinates in periodic dimensions. */
    for (int d = 0; d < ndims; d++) {
        if (!periods[d])
            continue;
        int back = -1;
        memcpy(c, mine, (size_t)ndims * sizeof *c);
        c[d] = mine[d] - dims[d];
        MPI_Cart_rank(cart, c, &back);
        if (!MT_CHECK(back == rank, "%s: MPI_Cart_rank of wrapped coordinate in dim %d gives "
                                    "%d, expected %d", label, d, back, rank))
            return 0;
    }
    return cart_check_shifts(cart, ndims, dims, periods, mine, label);
}

MPI_Comm mt_ring2_graph(int *degree)
{
    int wrank, wsize, nb[4], k = 0;
    const int offs[4] = {-1, 1, -2, 2};
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    for (int i = 0; i < 4 && wsize > 1; i++) {
        int p = ((wrank + offs[i]) % wsize + wsize) % wsize, dup = p == wrank;
        for (int j = 0; j < k; j++)
            dup |= nb[j] == p;
        if (!dup)
            nb[k++] = p;
    }
    MPI_Comm g;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, k, nb, MPI_UNWEIGHTED, k, nb, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                   &g);
    if (degree)
        *degree = k;
    return g;
}
