/*
 * libmpitopo_shim, Fortran bindings of MPI_Cart_create, MPI_Cart_map,
 * MPI_Dims_create, MPI_Dist_graph_create_adjacent, MPI_Dist_graph_create,
 * MPI_Graph_create and MPI_Graph_map. They do what the C bindings do. The
 * neighbourhood collectives of mpif.h and `use mpi` are routed too,
 * blocking, nonblocking and persistent, with the calls that complete,
 * start and free their requests; mpi_f08's stay MPI's own (the section
 * "Neighbourhood collectives" below says why).
 *
 * This file holds the converters f_<call>: Fortran handles, LOGICALs,
 * arrays and special addresses in, the shim's mpitopo__shim_<call> run (or
 * the MPI's own subroutine `next`), the results out. The subroutines
 * themselves, every mangling, are generated from bindings.def (its
 * `fortran` lines name the converter each calls) and included at the end.
 *
 * What a Fortran program calls, and what is covered (Open MPI 4.1 and
 * MPICH 4.0 as built by Debian 12, gfortran 12; found with nm -D and
 * objdump -d on the MPI libraries and on compiled programs):
 *
 * Open MPI 4.1
 *   mpif.h and `use mpi`: the program calls mpi_cart_create_ (libmpi_mpifh,
 *     an alias of ompi_cart_create_f), which calls the C PMPI_Cart_create,
 *     so intercepting the C MPI_Cart_create does NOT reach it.
 *     COVERED: the shim defines mpi_cart_create_ (and the other manglings).
 *   `use mpi_f08`: the program calls mpi_cart_create_f08_
 *     (libmpi_usempif08), which calls the Fortran pmpi_cart_create_ of
 *     libmpi_mpifh, hence PMPI_Cart_create. COVERED: the shim defines
 *     mpi_cart_create_f08_. Likewise mpi_cart_map_f08_ (-> pmpi_cart_map_)
 *     and mpi_dims_create_f08_ (-> ompi_dims_create_f -> PMPI_Dims_create).
 *   Not intercepted: the C-named aliases MPI_Cart_create_f and
 *     MPI_Cart_create_f08 of libmpi_mpifh (no gfortran-built program calls
 *     them), and the profiling entries pmpi_* / PMPI_CART_CREATE.
 *
 * MPICH 4.0
 *   mpif.h and `use mpi`: the program calls mpi_cart_create_ (libmpichfort,
 *     an alias of pmpi_cart_create_), which calls the C MPI_Cart_create: the
 *     C interception alone would cover it. COVERED directly as well: the
 *     shim defines mpi_cart_create_ (and the other manglings), so both MPIs
 *     take the same path. Same for cart_map and dims_create.
 *   `use mpi_f08`: the program calls mpi_cart_create_f08_ (libmpichfort),
 *     which calls the C PMPI_Cart_create directly, bypassing the C
 *     interception. COVERED: the shim defines mpi_cart_create_f08_.
 *     Likewise mpi_cart_map_f08_ (-> PMPI_Cart_map) and
 *     mpi_dims_create_f08_ (-> PMPI_Dims_create).
 *   Not intercepted: the profiling entries pmpi_* and pmpir_*_f08_.
 *
 * The graph calls (dist_graph_create_adjacent, dist_graph_create,
 * graph_create, graph_map) follow the same pattern on both MPIs: Open MPI's
 * mpi_x_ and mpi_x_f08_ end in the C PMPI_X, MPICH's mpi_x_ in the C MPI_X
 * and its mpi_x_f08_ in PMPI_X. All are intercepted.
 *
 * Both MPIs: every Fortran symbol is defined in the four manglings
 * (mpi_cart_create_, mpi_cart_create__, mpi_cart_create, MPI_CART_CREATE)
 * plus the f08 one (mpi_cart_create_f08_); all take their arguments by
 * reference in the order of the standard, ierror last. In mpi_f08,
 * TYPE(MPI_Comm) is one INTEGER passed by reference, and an absent
 * (OPTIONAL) ierror arrives as NULL, which is accepted everywhere.
 * LOGICAL: gfortran's .TRUE. is 1 (Open MPI is configured with
 * OMPI_FORTRAN_VALUE_TRUE 1; MPICH takes anything but .FALSE. as true); the
 * shim takes any nonzero value as true. The shim's Fortran symbols win when
 * it is LD_PRELOADed, or linked before the MPI's Fortran libraries
 * (`mpif90 prog.f90 -lmpitopo_shim` does this: the wrapper appends its own
 * libraries after the user's). The shim must be built against the MPI the
 * program runs with.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dlsym and RTLD_DEFAULT */
#endif
#include <mpi.h>
#include <mpitopo.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

#include "pmpi/shim.h"

/* Fortran INTEGER or LOGICAL arrays as C ints: a stack buffer for the
 * dimensions mpitopo handles, the heap beyond (those calls go to MPI). */
typedef struct f_ints {
    int *v;
    int local[MPITOPO_MAX_DIMS];
} f_ints_t;

/* Copy n Fortran values; logical != 0 turns them into 0/1. Returns 0 when
 * out of memory. */
static int f_ints_in(f_ints_t *a, const MPI_Fint *f, int n, int logical)
{
    a->v = a->local;
    if (n > MPITOPO_MAX_DIMS && !(a->v = malloc((size_t)n * sizeof *a->v)))
        return 0;
    for (int i = 0; i < n; i++)
        a->v[i] = logical ? f[i] != 0 : (int)f[i];
    return 1;
}

static void f_ints_free(f_ints_t *a)
{
    if (a->v != a->local)
        free(a->v);
}

static void f_set(MPI_Fint *ierr, int rc)
{
    if (ierr)
        *ierr = (MPI_Fint)rc;
}

static void f_cart_create(MPI_Fint *comm, MPI_Fint *ndims, MPI_Fint *dims, MPI_Fint *periods,
                          MPI_Fint *reorder, MPI_Fint *newcomm, MPI_Fint *ierr)
{
    MPI_Comm c = PMPI_Comm_f2c(*comm), cnew = MPI_COMM_NULL;
    int n = (int)*ndims, rc;
    f_ints_t d, p;
    if (!f_ints_in(&d, dims, n, 0) || !f_ints_in(&p, periods, n, 1)) {
        f_ints_free(&d);
        f_set(ierr, mpitopo__shim_raise("MPI_Cart_create", c, MPI_ERR_NO_MEM,
                                        "out of memory converting dims and periods"));
        return;
    }
    rc = mpitopo__shim_cart_create(c, n, d.v, p.v, *reorder != 0, &cnew);
    if (rc == MPI_SUCCESS)
        *newcomm = PMPI_Comm_c2f(cnew);
    f_ints_free(&d);
    f_ints_free(&p);
    f_set(ierr, rc);
}

static void f_cart_map(MPI_Fint *comm, MPI_Fint *ndims, MPI_Fint *dims, MPI_Fint *periods,
                       MPI_Fint *newrank, MPI_Fint *ierr)
{
    MPI_Comm c = PMPI_Comm_f2c(*comm);
    int n = (int)*ndims, rank = MPI_UNDEFINED, rc;
    f_ints_t d, p;
    if (!f_ints_in(&d, dims, n, 0) || !f_ints_in(&p, periods, n, 1)) {
        f_ints_free(&d);
        f_set(ierr, mpitopo__shim_raise("MPI_Cart_map", c, MPI_ERR_NO_MEM,
                                        "out of memory converting dims and periods"));
        return;
    }
    rc = mpitopo__shim_cart_map(c, n, d.v, p.v, &rank);
    if (rc == MPI_SUCCESS)
        *newrank = (MPI_Fint)rank;
    f_ints_free(&d);
    f_ints_free(&p);
    f_set(ierr, rc);
}

static void f_dims_create(MPI_Fint *nnodes, MPI_Fint *ndims, MPI_Fint *dims, MPI_Fint *ierr)
{
    int n = (int)*ndims, rc;
    f_ints_t d;
    if (!f_ints_in(&d, dims, n, 0)) {
        f_set(ierr, mpitopo__shim_raise("MPI_Dims_create", MPI_COMM_WORLD, MPI_ERR_NO_MEM,
                                        "out of memory converting dims"));
        return;
    }
    rc = mpitopo__shim_dims_create((int)*nnodes, n, d.v);
    if (rc == MPI_SUCCESS)
        for (int i = 0; i < n; i++)
            dims[i] = (MPI_Fint)d.v[i];
    f_ints_free(&d);
    f_set(ierr, rc);
}

/*
 * Fortran MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are variables of the MPI's
 * Fortran support, recognised by their address only, and each MPI names
 * them differently (nm -D of its Fortran libraries, checked with programs
 * of the three bindings on both MPIs):
 *   Open MPI 4.1  common blocks /mpi_fortran_unweighted/ and
 *                 /mpi_fortran_weights_empty/, in mpif.h, use mpi and
 *                 use mpi_f08 alike;
 *   MPICH 4.0     common blocks /MPIFCMB5/ and /MPIFCMB9/ (mpif.h and
 *                 use mpi), and the module variables mpi_unweighted and
 *                 mpi_weights_empty of mpi_f08_link_constants (use mpi_f08;
 *                 gfortran's module mangling, the one Debian builds with).
 * The shim looks every candidate name up once with dlsym over the whole
 * process, which finds the definition the program's own references were
 * bound to; names of the other MPI are simply not found. Common blocks are
 * tried in the four manglings, as the subroutines are.
 */
#define F_COMMON_NAMES(lower, upper) #lower "_", #lower, #lower "__", #upper

static const char *const f_unweighted_names[] = {
    F_COMMON_NAMES(mpi_fortran_unweighted, MPI_FORTRAN_UNWEIGHTED),
    F_COMMON_NAMES(mpifcmb5, MPIFCMB5), "__mpi_f08_link_constants_MOD_mpi_unweighted"};
static const char *const f_weights_empty_names[] = {
    F_COMMON_NAMES(mpi_fortran_weights_empty, MPI_FORTRAN_WEIGHTS_EMPTY),
    F_COMMON_NAMES(mpifcmb9, MPIFCMB9), "__mpi_f08_link_constants_MOD_mpi_weights_empty"};

#define F_NNAMES (sizeof f_unweighted_names / sizeof f_unweighted_names[0])
_Static_assert(sizeof f_weights_empty_names == sizeof f_unweighted_names,
               "as many names for MPI_WEIGHTS_EMPTY as for MPI_UNWEIGHTED");

static struct f_specials {
    const void *unweighted[F_NNAMES];    /* NULL where not found */
    const void *weights_empty[F_NNAMES];
} f_specials;
static pthread_once_t f_specials_once = PTHREAD_ONCE_INIT;

static void f_specials_find(void)
{
    for (size_t i = 0; i < F_NNAMES; i++) {
        f_specials.unweighted[i] = dlsym(RTLD_DEFAULT, f_unweighted_names[i]);
        f_specials.weights_empty[i] = dlsym(RTLD_DEFAULT, f_weights_empty_names[i]);
    }
}

static int f_is_one_of(const void *p, const void *const *addrs)
{
    for (size_t i = 0; i < F_NNAMES; i++)
        if (addrs[i] && addrs[i] == p)
            return 1;
    return 0;
}

/*
 * The Fortran arrays of the graph calls as C ints. They can hold O(E)
 * entries, so when MPI_Fint is int (every MPI built with default Fortran
 * INTEGERs) the Fortran array is used as it is; otherwise it is copied, and
 * f_conv_free frees the copies. A failed copy sets failed and gives NULL.
 */
#define F_CONV_MAX 4
typedef struct f_conv {
    int *owned[F_CONV_MAX];
    int nowned;
    int failed;
} f_conv_t;

static const int *f_conv_ints(f_conv_t *c, const MPI_Fint *f, long long n)
{
    if (sizeof(MPI_Fint) == sizeof(int) || !f || n <= 0)
        return (const int *)f;
    int *v = c->nowned < F_CONV_MAX ? malloc((size_t)n * sizeof *v) : NULL;
    if (!v) {
        c->failed = 1;
        return NULL;
    }
    for (long long i = 0; i < n; i++)
        v[i] = (int)f[i];
    c->owned[c->nowned++] = v;
    return v;
}

/* Weights: Fortran's MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY become C's. */
static const int *f_conv_weights(f_conv_t *c, const MPI_Fint *w, long long n)
{
    pthread_once(&f_specials_once, f_specials_find);
    if (f_is_one_of(w, f_specials.unweighted))
        return MPI_UNWEIGHTED;
    if (f_is_one_of(w, f_specials.weights_empty))
        return MPI_WEIGHTS_EMPTY;
    return f_conv_ints(c, w, n);
}

static void f_conv_free(f_conv_t *c)
{
    for (int i = 0; i < c->nowned; i++)
        free(c->owned[i]);
    c->nowned = 0;
}

/* Sum of the n degrees (negative ones count 0: mpitopo reports them). */
static long long f_sum(const MPI_Fint *degrees, int n)
{
    long long total = 0;
    for (int i = 0; degrees && i < n; i++)
        total += degrees[i] > 0 ? degrees[i] : 0;
    return total;
}

/* Entries of edges[] in an MPI graph of nnodes nodes: index[nnodes - 1]. */
static long long f_nedges(const MPI_Fint *index, int nnodes)
{
    return nnodes > 0 && index ? (long long)index[nnodes - 1] : 0;
}

static int f_no_mem(const char *func, MPI_Comm comm)
{
    return mpitopo__shim_raise(func, comm, MPI_ERR_NO_MEM,
                               "out of memory converting the Fortran arrays");
}

static void f_dist_graph_create_adjacent(MPI_Fint *comm, MPI_Fint *indegree, MPI_Fint *sources,
                                         MPI_Fint *sourceweights, MPI_Fint *outdegree,
                                         MPI_Fint *destinations, MPI_Fint *destweights,
                                         MPI_Fint *info, MPI_Fint *reorder, MPI_Fint *newcomm,
                                         MPI_Fint *ierr)
{
    MPI_Comm c = PMPI_Comm_f2c(*comm), cnew = MPI_COMM_NULL;
    int in = (int)*indegree, out = (int)*outdegree, rc;
    f_conv_t a = {0};
    const int *s = f_conv_ints(&a, sources, in), *sw = f_conv_weights(&a, sourceweights, in);
    const int *d = f_conv_ints(&a, destinations, out), *dw = f_conv_weights(&a, destweights, out);
    if (a.failed)
        rc = f_no_mem("MPI_Dist_graph_create_adjacent", c);
    else
        rc = mpitopo__shim_dist_graph_create_adjacent(c, in, s, sw, out, d, dw,
                                                      PMPI_Info_f2c(*info), *reorder != 0, &cnew);
    if (rc == MPI_SUCCESS)
        *newcomm = PMPI_Comm_c2f(cnew);
    f_conv_free(&a);
    f_set(ierr, rc);
}

static void f_dist_graph_create(MPI_Fint *comm, MPI_Fint *n, MPI_Fint *sources, MPI_Fint *degrees,
                                MPI_Fint *destinations, MPI_Fint *weights, MPI_Fint *info,
                                MPI_Fint *reorder, MPI_Fint *newcomm, MPI_Fint *ierr)
{
    MPI_Comm c = PMPI_Comm_f2c(*comm), cnew = MPI_COMM_NULL;
    int nsrc = (int)*n, rc;
    long long nedges = f_sum(degrees, nsrc);
    f_conv_t a = {0};
    const int *s = f_conv_ints(&a, sources, nsrc), *deg = f_conv_ints(&a, degrees, nsrc);
    const int *d = f_conv_ints(&a, destinations, nedges), *w = f_conv_weights(&a, weights, nedges);
    if (a.failed)
        rc = f_no_mem("MPI_Dist_graph_create", c);
    else
        rc = mpitopo__shim_dist_graph_create(c, nsrc, s, deg, d, w, PMPI_Info_f2c(*info),
                                             *reorder != 0, &cnew);
    if (rc == MPI_SUCCESS)
        *newcomm = PMPI_Comm_c2f(cnew);
    f_conv_free(&a);
    f_set(ierr, rc);
}

static void f_graph_create(MPI_Fint *comm, MPI_Fint *nnodes, MPI_Fint *index, MPI_Fint *edges,
                           MPI_Fint *reorder, MPI_Fint *newcomm, MPI_Fint *ierr)
{
    MPI_Comm c = PMPI_Comm_f2c(*comm), cnew = MPI_COMM_NULL;
    int nn = (int)*nnodes, rc;
    f_conv_t a = {0};
    const int *idx = f_conv_ints(&a, index, nn), *e = f_conv_ints(&a, edges, f_nedges(index, nn));
    if (a.failed)
        rc = f_no_mem("MPI_Graph_create", c);
    else
        rc = mpitopo__shim_graph_create(c, nn, idx, e, *reorder != 0, &cnew);
    /* Processes outside the graph get MPI_COMM_NULL, which c2f converts. */
    if (rc == MPI_SUCCESS)
        *newcomm = PMPI_Comm_c2f(cnew);
    f_conv_free(&a);
    f_set(ierr, rc);
}

static void f_graph_map(MPI_Fint *comm, MPI_Fint *nnodes, MPI_Fint *index, MPI_Fint *edges,
                        MPI_Fint *newrank, MPI_Fint *ierr)
{
    MPI_Comm c = PMPI_Comm_f2c(*comm);
    int nn = (int)*nnodes, rank = MPI_UNDEFINED, rc;
    f_conv_t a = {0};
    const int *idx = f_conv_ints(&a, index, nn), *e = f_conv_ints(&a, edges, f_nedges(index, nn));
    if (a.failed)
        rc = f_no_mem("MPI_Graph_map", c);
    else
        rc = mpitopo__shim_graph_map(c, nn, idx, e, &rank);
    if (rc == MPI_SUCCESS)
        *newrank = (MPI_Fint)rank;
    f_conv_free(&a);
    f_set(ierr, rc);
}

/* MPI_Comm_set_info and MPI_Comm_dup_with_info: MPI's own, then mpitopo's
 * keys kept where every MPI keeps them (shim.c). */
static void f_comm_set_info(MPI_Fint *comm, MPI_Fint *info, MPI_Fint *ierr)
{
    f_set(ierr, mpitopo__shim_comm_set_info(PMPI_Comm_f2c(*comm), PMPI_Info_f2c(*info)));
}

static void f_comm_dup_with_info(MPI_Fint *comm, MPI_Fint *info, MPI_Fint *newcomm, MPI_Fint *ierr)
{
    MPI_Comm cnew = MPI_COMM_NULL;
    int rc = mpitopo__shim_comm_dup_with_info(PMPI_Comm_f2c(*comm), PMPI_Info_f2c(*info), &cnew);
    if (rc == MPI_SUCCESS)
        *newcomm = PMPI_Comm_c2f(cnew);
    f_set(ierr, rc);
}

/*
 * Neighbourhood collectives (MPITOPO_NEIGHBOR; see shim_neighbor.c).
 *
 * Blocking MPI_NEIGHBOR_ALLGATHER, _ALLGATHERV, _ALLTOALL, _ALLTOALLV and
 * _ALLTOALLW of mpif.h and `use mpi` are routed as the C calls are. Open
 * MPI's mpi_neighbor_x_ ends in the C PMPI_Neighbor_x, so only a Fortran
 * symbol of the shim can route it; MPICH's ends in the C MPI_Neighbor_x,
 * which the shim defines too, and the Fortran symbol gives both MPIs one
 * path. When the call stays MPI's own (MPITOPO_NEIGHBOR off, no topology,
 * ...) or a buffer is Fortran's MPI_BOTTOM or MPI_IN_PLACE (addresses
 * only the MPI's Fortran code translates), the shim calls the MPI's own
 * Fortran subroutine of the same name (dlsym RTLD_NEXT), unchanged.
 *
 * The nonblocking MPI_INEIGHBOR_* and (MPI-4: MPICH 4.0 has them, Open MPI
 * 4.1 only as MPIX_*, which stay its own) persistent MPI_NEIGHBOR_*_INIT
 * are routed the same way and give the program the Fortran value of a C
 * request of shim_requests.c; the Fortran completion calls (the last
 * section) complete it.
 *
 * Not routed: `use mpi_f08`. MPICH 4.0's f08 subroutines with choice
 * buffers take TS 29113 descriptors (mpi_ineighbor_alltoall_f08ts_, not a
 * plain address), and on both MPIs the f08 subroutines end in PMPI
 * (Open MPI's mpi_ineighbor_alltoall_f08_ in PMPI_Ineighbor_alltoall,
 * both MPIs' mpi_wait_f08_ in PMPI_Wait). Their requests are therefore
 * always MPI's own, and their completion calls see only MPI's own. A
 * routed request of an mpif.h or `use mpi` unit must not be completed by
 * an mpi_f08 unit (through MPI_Request%MPI_VAL): mpi_wait_f08_ would
 * complete the handle without running the schedule.
 */

/* MPI's own definition of the Fortran subroutine name, found once. */
static void *f_next(void *volatile *cache, const char *name)
{
    void *fn = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (!fn) {
        fn = dlsym(RTLD_NEXT, name);
        __atomic_store_n(cache, fn, __ATOMIC_RELEASE);
    }
    return fn;
}

static int f_no_next(const char *name, MPI_Fint *comm)
{
    return mpitopo__shim_raise(name, PMPI_Comm_f2c(*comm), MPI_ERR_INTERN,
                               "the MPI's own Fortran subroutine is not found");
}

/* Fortran MPI_BOTTOM and MPI_IN_PLACE: Open MPI's common blocks
 * /mpi_fortran_bottom/ and /mpi_fortran_in_place/, MPICH's first two
 * INTEGERs of /MPIPRIV1/. */
static struct {
    const char *bottom, *in_place, *mpipriv1;
} f_buffers;
static pthread_once_t f_buffers_once = PTHREAD_ONCE_INIT;

static void f_buffers_find(void)
{
    f_buffers.bottom = dlsym(RTLD_DEFAULT, "mpi_fortran_bottom_");
    f_buffers.in_place = dlsym(RTLD_DEFAULT, "mpi_fortran_in_place_");
    f_buffers.mpipriv1 = dlsym(RTLD_DEFAULT, "mpipriv1_");
}

static int f_special_buffer(const void *p)
{
    pthread_once(&f_buffers_once, f_buffers_find);
    const char *c = p;
    if (c && (c == f_buffers.bottom || c == f_buffers.in_place))
        return 1;
    return f_buffers.mpipriv1 && c >= f_buffers.mpipriv1 &&
           c < f_buffers.mpipriv1 + 2 * sizeof(MPI_Fint);
}

/* Whether the shim converts and routes this call itself. */
static int f_neighbor_routes(const char *func, MPI_Comm comm, const void *sendbuf,
                             const void *recvbuf)
{
    return !f_special_buffer(sendbuf) && !f_special_buffer(recvbuf) &&
           mpitopo__shim_neighbor_takes(func, comm);
}

static void f_degrees(MPI_Comm comm, int *in, int *out)
{
    if (mpitopo_comm_neighbors_count(comm, in, out) != MPITOPO_SUCCESS)
        *in = *out = 0;
}

/* n Fortran datatype handles as C ones; NULL (out of memory) only for n > 0. */
static MPI_Datatype *f_types(const MPI_Fint *f, int n)
{
    MPI_Datatype *t = malloc((size_t)(n > 0 ? n : 1) * sizeof *t);
    for (int i = 0; t && i < n; i++)
        t[i] = PMPI_Type_f2c(f[i]);
    return t;
}

/*
 * One converter per operation serves the three forms: blocking (request
 * NULL), nonblocking (info NULL) and persistent. Routed: the shim runs the
 * C binding's code (mpitopo__shim_neighbor_*, _ineighbor_*, _init) and,
 * for the last two, hands the program the Fortran value of the C request
 * (MPI_Request_c2f), which the completion calls below recognise. Not routed: MPI's own Fortran
 * subroutine, with the C bindings it may call (MPICH's do) told to pass
 * the call on too (mpitopo__shim_fortran_passing), so that the call stays
 * exactly MPI's own. Every argument is passed by reference (no CHARACTER,
 * so no hidden lengths); ierror is the last.
 */
#define V void *
typedef void (*f_pass8_t)(V, V, V, V, V, V, V, V);
typedef void (*f_pass9_t)(V, V, V, V, V, V, V, V, V);
typedef void (*f_pass10_t)(V, V, V, V, V, V, V, V, V, V);
typedef void (*f_pass11_t)(V, V, V, V, V, V, V, V, V, V, V);
typedef void (*f_pass12_t)(V, V, V, V, V, V, V, V, V, V, V, V);
#undef V

/* The call to MPI's own subroutine next; ierr gets MPI_ERR_INTERN when
 * there is none. */
#define F_PASS(next, comm, func, ierr, type, ...)                                              \
    do {                                                                                       \
        if (!(next)) {                                                                         \
            f_set(ierr, f_no_next(func, comm));                                                \
            break;                                                                             \
        }                                                                                      \
        mpitopo__shim_fortran_passing++;                                                       \
        ((type)(next))(__VA_ARGS__);                                                           \
        mpitopo__shim_fortran_passing--;                                                       \
    } while (0)

/* The result; the request too unless the form is blocking. */
static void f_give(MPI_Fint *request, MPI_Request r, int rc, MPI_Fint *ierr)
{
    if (request && rc == MPI_SUCCESS)
        *request = PMPI_Request_c2f(r);
    f_set(ierr, rc);
}

enum { F_ALLGATHER, F_ALLGATHERV, F_ALLTOALL, F_ALLTOALLV, F_ALLTOALLW };

/* The C name of the call: request NULL is the blocking form, info NULL
 * the nonblocking one, otherwise the persistent one. */
static const char *f_func(int op, const MPI_Fint *info, const MPI_Fint *request)
{
    static const char *const names[][3] = {
        {"MPI_Neighbor_allgather", "MPI_Ineighbor_allgather", "MPI_Neighbor_allgather_init"},
        {"MPI_Neighbor_allgatherv", "MPI_Ineighbor_allgatherv", "MPI_Neighbor_allgatherv_init"},
        {"MPI_Neighbor_alltoall", "MPI_Ineighbor_alltoall", "MPI_Neighbor_alltoall_init"},
        {"MPI_Neighbor_alltoallv", "MPI_Ineighbor_alltoallv", "MPI_Neighbor_alltoallv_init"},
        {"MPI_Neighbor_alltoallw", "MPI_Ineighbor_alltoallw", "MPI_Neighbor_alltoallw_init"},
    };
    return names[op][!request ? 0 : !info ? 1 : 2];
}

/* allgather (alltoall = 0) and alltoall (1): the same arguments. */
static void f_neighbor_fixed(int alltoall, void *next, void *sb, MPI_Fint *sc, MPI_Fint *st,
                             void *rb, MPI_Fint *rc, MPI_Fint *rt, MPI_Fint *comm,
                             MPI_Fint *info, MPI_Fint *request, MPI_Fint *ierr)
{
    const char *func = f_func(alltoall ? F_ALLTOALL : F_ALLGATHER, info, request);
    MPI_Comm c = PMPI_Comm_f2c(*comm);
    if (!f_neighbor_routes(func, c, sb, rb)) {
        if (!request)
            F_PASS(next, comm, func, ierr, f_pass8_t, sb, sc, st, rb, rc, rt, comm, ierr);
        else if (info)
            F_PASS(next, comm, func, ierr, f_pass10_t, sb, sc, st, rb, rc, rt, comm, info,
                   request, ierr);
        else
            F_PASS(next, comm, func, ierr, f_pass9_t, sb, sc, st, rb, rc, rt, comm, request,
                   ierr);
        return;
    }
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Datatype s = PMPI_Type_f2c(*st), t = PMPI_Type_f2c(*rt);
    int n = (int)*sc, m = (int)*rc, code;
    if (!request)
        code = (alltoall ? mpitopo__shim_neighbor_alltoall
                         : mpitopo__shim_neighbor_allgather)(sb, n, s, rb, m, t, c);
#if MPI_VERSION >= 4
    else if (info)
        code = (alltoall ? mpitopo__shim_neighbor_alltoall_init
                         : mpitopo__shim_neighbor_allgather_init)(sb, n, s, rb, m, t, c,
                                                                  PMPI_Info_f2c(*info), &r);
#endif
    else
        code = (alltoall ? mpitopo__shim_ineighbor_alltoall
                         : mpitopo__shim_ineighbor_allgather)(sb, n, s, rb, m, t, c, &r);
    f_give(request, r, code, ierr);
}

static void f_neighbor_allgather(void *next, void *sb, MPI_Fint *sc, MPI_Fint *st, void *rb,
                                 MPI_Fint *rc, MPI_Fint *rt, MPI_Fint *comm, MPI_Fint *info,
                                 MPI_Fint *request, MPI_Fint *ierr)
{
    f_neighbor_fixed(0, next, sb, sc, st, rb, rc, rt, comm, info, request, ierr);
}

static void f_neighbor_alltoall(void *next, void *sb, MPI_Fint *sc, MPI_Fint *st, void *rb,
                                MPI_Fint *rc, MPI_Fint *rt, MPI_Fint *comm, MPI_Fint *info,
                                MPI_Fint *request, MPI_Fint *ierr)
{
    f_neighbor_fixed(1, next, sb, sc, st, rb, rc, rt, comm, info, request, ierr);
}

static void f_neighbor_allgatherv(void *next, void *sb, MPI_Fint *sc, MPI_Fint *st, void *rb,
                                  MPI_Fint *rcs, MPI_Fint *d, MPI_Fint *rt, MPI_Fint *comm,
                                  MPI_Fint *info, MPI_Fint *request, MPI_Fint *ierr)
{
    const char *func = f_func(F_ALLGATHERV, info, request);
    MPI_Comm c = PMPI_Comm_f2c(*comm);
    if (!f_neighbor_routes(func, c, sb, rb)) {
        if (!request)
            F_PASS(next, comm, func, ierr, f_pass9_t, sb, sc, st, rb, rcs, d, rt, comm, ierr);
        else if (info)
            F_PASS(next, comm, func, ierr, f_pass11_t, sb, sc, st, rb, rcs, d, rt, comm, info,
                   request, ierr);
        else
            F_PASS(next, comm, func, ierr, f_pass10_t, sb, sc, st, rb, rcs, d, rt, comm, request,
                   ierr);
        return;
    }
    MPI_Request r = MPI_REQUEST_NULL;
    int in, out, code;
    f_degrees(c, &in, &out);
    f_conv_t a = {0};
    const int *counts = f_conv_ints(&a, rcs, in), *displs = f_conv_ints(&a, d, in);
    MPI_Datatype s = PMPI_Type_f2c(*st), t = PMPI_Type_f2c(*rt);
    if (a.failed)
        code = f_no_mem(func, c);
    else if (!request)
        code = mpitopo__shim_neighbor_allgatherv(sb, (int)*sc, s, rb, counts, displs, t, c);
#if MPI_VERSION >= 4
    else if (info)
        code = mpitopo__shim_neighbor_allgatherv_init(sb, (int)*sc, s, rb, counts, displs, t, c,
                                                      PMPI_Info_f2c(*info), &r);
#endif
    else
        code = mpitopo__shim_ineighbor_allgatherv(sb, (int)*sc, s, rb, counts, displs, t, c, &r);
    f_conv_free(&a);
    f_give(request, r, code, ierr);
}

static void f_neighbor_alltoallv(void *next, void *sb, MPI_Fint *scs, MPI_Fint *sd,
                                 MPI_Fint *st, void *rb, MPI_Fint *rcs, MPI_Fint *rd,
                                 MPI_Fint *rt, MPI_Fint *comm, MPI_Fint *info, MPI_Fint *request,
                                 MPI_Fint *ierr)
{
    const char *func = f_func(F_ALLTOALLV, info, request);
    MPI_Comm c = PMPI_Comm_f2c(*comm);
    if (!f_neighbor_routes(func, c, sb, rb)) {
        if (!request)
            F_PASS(next, comm, func, ierr, f_pass10_t, sb, scs, sd, st, rb, rcs, rd, rt, comm,
                   ierr);
        else if (info)
            F_PASS(next, comm, func, ierr, f_pass12_t, sb, scs, sd, st, rb, rcs, rd, rt, comm,
                   info, request, ierr);
        else
            F_PASS(next, comm, func, ierr, f_pass11_t, sb, scs, sd, st, rb, rcs, rd, rt, comm,
                   request, ierr);
        return;
    }
    MPI_Request r = MPI_REQUEST_NULL;
    int in, out, code;
    f_degrees(c, &in, &out);
    f_conv_t a = {0};
    const int *sc = f_conv_ints(&a, scs, out), *sdi = f_conv_ints(&a, sd, out);
    const int *rc = f_conv_ints(&a, rcs, in), *rdi = f_conv_ints(&a, rd, in);
    MPI_Datatype s = PMPI_Type_f2c(*st), t = PMPI_Type_f2c(*rt);
    if (a.failed)
        code = f_no_mem(func, c);
    else if (!request)
        code = mpitopo__shim_neighbor_alltoallv(sb, sc, sdi, s, rb, rc, rdi, t, c);
#if MPI_VERSION >= 4
    else if (info)
        code = mpitopo__shim_neighbor_alltoallv_init(sb, sc, sdi, s, rb, rc, rdi, t, c,
                                                     PMPI_Info_f2c(*info), &r);
#endif
    else
        code = mpitopo__shim_ineighbor_alltoallv(sb, sc, sdi, s, rb, rc, rdi, t, c, &r);
    f_conv_free(&a);
    f_give(request, r, code, ierr);
}

/* INTEGER(KIND=MPI_ADDRESS_KIND) is MPI_Aint in both MPIs. */
static void f_neighbor_alltoallw(void *next, void *sb, MPI_Fint *scs, MPI_Aint *sd,
                                 MPI_Fint *sts, void *rb, MPI_Fint *rcs, MPI_Aint *rd,
                                 MPI_Fint *rts, MPI_Fint *comm, MPI_Fint *info,
                                 MPI_Fint *request, MPI_Fint *ierr)
{
    const char *func = f_func(F_ALLTOALLW, info, request);
    MPI_Comm c = PMPI_Comm_f2c(*comm);
    if (!f_neighbor_routes(func, c, sb, rb)) {
        if (!request)
            F_PASS(next, comm, func, ierr, f_pass10_t, sb, scs, sd, sts, rb, rcs, rd, rts, comm,
                   ierr);
        else if (info)
            F_PASS(next, comm, func, ierr, f_pass12_t, sb, scs, sd, sts, rb, rcs, rd, rts, comm,
                   info, request, ierr);
        else
            F_PASS(next, comm, func, ierr, f_pass11_t, sb, scs, sd, sts, rb, rcs, rd, rts, comm,
                   request, ierr);
        return;
    }
    MPI_Request r = MPI_REQUEST_NULL;
    int in, out, code;
    f_degrees(c, &in, &out);
    f_conv_t a = {0};
    const int *sc = f_conv_ints(&a, scs, out), *rc = f_conv_ints(&a, rcs, in);
    /* mpitopo copies the arrays: they may go when the call returns. */
    MPI_Datatype *s = f_types(sts, out), *t = f_types(rts, in);
    if (a.failed || !s || !t)
        code = f_no_mem(func, c);
    else if (!request)
        code = mpitopo__shim_neighbor_alltoallw(sb, sc, sd, s, rb, rc, rd, t, c);
#if MPI_VERSION >= 4
    else if (info)
        code = mpitopo__shim_neighbor_alltoallw_init(sb, sc, sd, s, rb, rc, rd, t, c,
                                                     PMPI_Info_f2c(*info), &r);
#endif
    else
        code = mpitopo__shim_ineighbor_alltoallw(sb, sc, sd, s, rb, rc, rd, t, c, &r);
    free(s);
    free(t);
    f_conv_free(&a);
    f_give(request, r, code, ierr);
}

/*
 * Completion, start and free of requests (MPI_WAIT, MPI_TEST, MPI_WAITALL,
 * MPI_TESTALL, MPI_WAITANY, MPI_TESTANY, MPI_WAITSOME, MPI_TESTSOME,
 * MPI_REQUEST_GET_STATUS, MPI_START, MPI_STARTALL, MPI_REQUEST_FREE,
 * MPI_CANCEL of mpif.h and `use mpi`). Open MPI's mpi_wait_ (ompi_wait_f)
 * calls the C PMPI_Wait, so only a Fortran symbol can see a routed request
 * there; MPICH's calls the C MPI_Wait, which the shim defines too, and the
 * Fortran symbol gives both MPIs one path. When no routed request exists
 * (one atomic load), or none of the call's requests is one, the call goes
 * to MPI's own Fortran subroutine unchanged. Otherwise the handles are
 * converted (MPI_Request_f2c), the C binding's code runs (shim_requests.c:
 * mixed arrays poll both kinds), and handles, statuses (MPI_Status_c2f;
 * Fortran's MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE are MPI_F_STATUS_IGNORE
 * and MPI_F_STATUSES_IGNORE), 1-based indices and LOGICAL flags
 * (gfortran's .TRUE. is 1; see the top of this file) go back; ierror gets
 * the C result. MPI_UNDEFINED stays MPI_UNDEFINED. (MPICH 4.0's own
 * MPI_WAITANY and MPI_TESTANY add 1 to it too, returning -32765 when no
 * request is active: objdump of pmpi_waitany_ in libmpichfort. Arrays
 * without a routed request still get that, as before.)
 */
#ifdef MPI_F_STATUS_SIZE
#define F_STATUS_SIZE MPI_F_STATUS_SIZE
#else
/* Open MPI 4.1 (MPI-3): its Fortran MPI_STATUS_SIZE is its C status in
 * INTEGERs (6). */
#define F_STATUS_SIZE ((int)(sizeof(MPI_Status) / sizeof(MPI_Fint)))
#endif
#define F_REQS_LOCAL 16

/* A Fortran request array as C requests, with room for C statuses and
 * indices. */
typedef struct f_reqs {
    MPI_Request *req;
    MPI_Status *st; /* MPI_STATUSES_IGNORE when the program ignores them */
    int *idx;
    MPI_Request req_local[F_REQS_LOCAL];
    MPI_Status st_local[F_REQS_LOCAL];
    int idx_local[F_REQS_LOCAL];
} f_reqs_t;

static void f_reqs_free(f_reqs_t *a)
{
    if (a->req != a->req_local)
        free(a->req);
    if (a->st != a->st_local && a->st != MPI_STATUSES_IGNORE)
        free(a->st);
    if (a->idx != a->idx_local)
        free(a->idx);
}

/* Convert the n requests of f when one of them is routed: 1 (a to be
 * freed with f_reqs_free), 0 when none is (MPI's own call takes them),
 * -1 out of memory. statuses: the Fortran status array (or NULL: the call
 * has none); indices: whether the call returns indices. */
static int f_reqs_in(f_reqs_t *a, const MPI_Fint *f, int n, const MPI_Fint *statuses,
                     int indices)
{
    if (n <= 0 || !mpitopo__shim_requests_live())
        return 0;
    size_t k = (size_t)n;
    int big = n > F_REQS_LOCAL, ours = 0;
    int want_st = statuses && statuses != MPI_F_STATUSES_IGNORE;
    a->req = big ? malloc(k * sizeof *a->req) : a->req_local;
    a->st = !want_st ? MPI_STATUSES_IGNORE : big ? malloc(k * sizeof *a->st) : a->st_local;
    a->idx = !indices ? NULL : big ? malloc(k * sizeof *a->idx) : a->idx_local;
    if (!a->req || (want_st && !a->st) || (indices && !a->idx)) {
        f_reqs_free(a);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        a->req[i] = PMPI_Request_f2c(f[i]);
        ours |= mpitopo__shim_request_ours(a->req[i]);
    }
    if (!ours)
        f_reqs_free(a);
    return ours;
}

/* The C requests back into the Fortran array. */
static void f_reqs_out(const f_reqs_t *a, MPI_Fint *f, int n)
{
    for (int i = 0; i < n; i++)
        f[i] = PMPI_Request_c2f(a->req[i]);
}

/* C statuses [from, to) back into the Fortran array. */
static void f_statuses_out(const f_reqs_t *a, MPI_Fint *f, int from, int to)
{
    for (int i = from; a->st != MPI_STATUSES_IGNORE && i < to; i++)
        PMPI_Status_c2f(&a->st[i], f + (size_t)i * F_STATUS_SIZE);
}

static int f_reqs_no_mem(const char *func)
{
    return mpitopo__shim_raise(func, MPI_COMM_WORLD, MPI_ERR_NO_MEM,
                               "out of memory converting the Fortran request array");
}

/* One Fortran request: its C handle when routed (1), else 0. */
static int f_req_in(const MPI_Fint *f, MPI_Request *c)
{
    if (!mpitopo__shim_requests_live())
        return 0;
    *c = PMPI_Request_f2c(*f);
    return mpitopo__shim_request_ours(*c);
}

/* A Fortran status as a C one, or MPI_STATUS_IGNORE. */
static MPI_Status *f_status_in(const MPI_Fint *status, MPI_Status *c)
{
    return status == MPI_F_STATUS_IGNORE ? MPI_STATUS_IGNORE : c;
}

static void f_status_out(const MPI_Status *c, MPI_Fint *status)
{
    if (c != MPI_STATUS_IGNORE)
        PMPI_Status_c2f(c, status);
}

typedef void (*f_req1_t)(MPI_Fint *, MPI_Fint *);
typedef void (*f_req2_t)(MPI_Fint *, MPI_Fint *, MPI_Fint *);
typedef void (*f_req3_t)(MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *);
typedef void (*f_req4_t)(MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *);
typedef void (*f_req5_t)(MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *,
                         MPI_Fint *);

/* MPI's own subroutine, or MPI_ERR_INTERN in ierr. */
#define F_OWN(next, func, ierr, type, ...)                                                     \
    do {                                                                                       \
        if (next)                                                                              \
            ((type)(next))(__VA_ARGS__);                                                       \
        else                                                                                   \
            f_set(ierr, mpitopo__shim_raise(func, MPI_COMM_WORLD, MPI_ERR_INTERN,              \
                                            "the MPI's own Fortran subroutine is not found")); \
    } while (0)

static void f_wait(void *next, MPI_Fint *request, MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Request c;
    MPI_Status cs, *s = f_status_in(status, &cs);
    if (!f_req_in(request, &c)) {
        F_OWN(next, "MPI_Wait", ierr, f_req2_t, request, status, ierr);
        return;
    }
    int rc = mpitopo__shim_wait(&c, s);
    *request = PMPI_Request_c2f(c);
    f_status_out(s, status);
    f_set(ierr, rc);
}

static void f_test(void *next, MPI_Fint *request, MPI_Fint *flag, MPI_Fint *status,
                   MPI_Fint *ierr)
{
    MPI_Request c;
    MPI_Status cs, *s = f_status_in(status, &cs);
    int cflag = 0;
    if (!f_req_in(request, &c)) {
        F_OWN(next, "MPI_Test", ierr, f_req3_t, request, flag, status, ierr);
        return;
    }
    int rc = mpitopo__shim_test(&c, &cflag, s);
    *request = PMPI_Request_c2f(c);
    *flag = cflag != 0;
    if (cflag)
        f_status_out(s, status);
    f_set(ierr, rc);
}

static void f_request_get_status(void *next, MPI_Fint *request, MPI_Fint *flag,
                                 MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Request c;
    MPI_Status cs, *s = f_status_in(status, &cs);
    int cflag = 0;
    if (!f_req_in(request, &c)) {
        F_OWN(next, "MPI_Request_get_status", ierr, f_req3_t, request, flag, status, ierr);
        return;
    }
    int rc = mpitopo__shim_request_get_status(c, &cflag, s);
    *flag = cflag != 0;
    if (cflag)
        f_status_out(s, status);
    f_set(ierr, rc);
}

/* MPI_START (kind 0), MPI_REQUEST_FREE (1), MPI_CANCEL (2). */
static void f_request_op(int kind, void *next, MPI_Fint *request, MPI_Fint *ierr)
{
    static const char *const funcs[] = {"MPI_Start", "MPI_Request_free", "MPI_Cancel"};
    static int (*const ops[])(MPI_Request *) = {mpitopo__shim_start, mpitopo__shim_request_free,
                                                mpitopo__shim_cancel};
    MPI_Request c;
    if (!f_req_in(request, &c)) {
        F_OWN(next, funcs[kind], ierr, f_req1_t, request, ierr);
        return;
    }
    int rc = ops[kind](&c);
    *request = PMPI_Request_c2f(c);
    f_set(ierr, rc);
}

static void f_startall(void *next, MPI_Fint *count, MPI_Fint *requests, MPI_Fint *ierr)
{
    f_reqs_t a;
    int n = (int)*count, got = f_reqs_in(&a, requests, n, NULL, 0);
    if (got <= 0) {
        if (got < 0)
            f_set(ierr, f_reqs_no_mem("MPI_Startall"));
        else
            F_OWN(next, "MPI_Startall", ierr, f_req2_t, count, requests, ierr);
        return;
    }
    int rc = mpitopo__shim_startall(n, a.req);
    f_reqs_out(&a, requests, n);
    f_reqs_free(&a);
    f_set(ierr, rc);
}

static void f_waitall(void *next, MPI_Fint *count, MPI_Fint *requests, MPI_Fint *statuses,
                      MPI_Fint *ierr)
{
    f_reqs_t a;
    int n = (int)*count, got = f_reqs_in(&a, requests, n, statuses, 0);
    if (got <= 0) {
        if (got < 0)
            f_set(ierr, f_reqs_no_mem("MPI_Waitall"));
        else
            F_OWN(next, "MPI_Waitall", ierr, f_req3_t, count, requests, statuses, ierr);
        return;
    }
    int rc = mpitopo__shim_waitall(n, a.req, a.st);
    f_reqs_out(&a, requests, n);
    f_statuses_out(&a, statuses, 0, n);
    f_reqs_free(&a);
    f_set(ierr, rc);
}

static void f_testall(void *next, MPI_Fint *count, MPI_Fint *requests, MPI_Fint *flag,
                      MPI_Fint *statuses, MPI_Fint *ierr)
{
    f_reqs_t a;
    int n = (int)*count, cflag = 0, got = f_reqs_in(&a, requests, n, statuses, 0);
    if (got <= 0) {
        if (got < 0)
            f_set(ierr, f_reqs_no_mem("MPI_Testall"));
        else
            F_OWN(next, "MPI_Testall", ierr, f_req4_t, count, requests, flag, statuses, ierr);
        return;
    }
    int rc = mpitopo__shim_testall(n, a.req, &cflag, a.st);
    f_reqs_out(&a, requests, n);
    *flag = cflag != 0;
    if (cflag)
        f_statuses_out(&a, statuses, 0, n);
    f_reqs_free(&a);
    f_set(ierr, rc);
}

/* MPI_WAITANY (flag NULL) and MPI_TESTANY: Fortran's index is 1-based,
 * MPI_UNDEFINED as it is. */
static void f_anyone(void *next, MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index,
                     MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierr)
{
    const char *func = flag ? "MPI_Testany" : "MPI_Waitany";
    f_reqs_t a;
    MPI_Status cs, *s = f_status_in(status, &cs);
    int n = (int)*count, cflag = 1, i = MPI_UNDEFINED, got = f_reqs_in(&a, requests, n, NULL, 0);
    if (got <= 0) {
        if (got < 0)
            f_set(ierr, f_reqs_no_mem(func));
        else if (flag)
            F_OWN(next, func, ierr, f_req5_t, count, requests, index, flag, status, ierr);
        else
            F_OWN(next, func, ierr, f_req4_t, count, requests, index, status, ierr);
        return;
    }
    int rc = flag ? mpitopo__shim_testany(n, a.req, &i, &cflag, s)
                  : mpitopo__shim_waitany(n, a.req, &i, s);
    f_reqs_out(&a, requests, n);
    f_reqs_free(&a);
    if (flag)
        *flag = cflag != 0;
    if (cflag) {
        *index = i == MPI_UNDEFINED ? MPI_UNDEFINED : i + 1;
        f_status_out(s, status);
    }
    f_set(ierr, rc);
}

/* MPI_WAITSOME (wait = 1) and MPI_TESTSOME: indices 1-based. */
static void f_some(int wait, void *next, MPI_Fint *incount, MPI_Fint *requests,
                   MPI_Fint *outcount, MPI_Fint *indices, MPI_Fint *statuses, MPI_Fint *ierr)
{
    const char *func = wait ? "MPI_Waitsome" : "MPI_Testsome";
    f_reqs_t a;
    int n = (int)*incount, out = 0, got = f_reqs_in(&a, requests, n, statuses, 1);
    if (got <= 0) {
        if (got < 0)
            f_set(ierr, f_reqs_no_mem(func));
        else
            F_OWN(next, func, ierr, f_req5_t, incount, requests, outcount, indices, statuses,
                  ierr);
        return;
    }
    int rc = wait ? mpitopo__shim_waitsome(n, a.req, &out, a.idx, a.st)
                  : mpitopo__shim_testsome(n, a.req, &out, a.idx, a.st);
    f_reqs_out(&a, requests, n);
    *outcount = out;
    if (out != MPI_UNDEFINED) {
        for (int i = 0; i < out; i++)
            indices[i] = a.idx[i] + 1;
        f_statuses_out(&a, statuses, 0, out);
    }
    f_reqs_free(&a);
    f_set(ierr, rc);
}

/*
 * Collectives on reordered communicators (MPITOPO_COLL; see shim_coll.c):
 * MPI_ALLGATHER, MPI_BCAST, MPI_GATHER, MPI_ALLREDUCE and their
 * nonblocking MPI_I* forms of mpif.h and `use mpi`. Open MPI's
 * mpi_allgather_ ends in the C PMPI_Allgather, so only a Fortran symbol of
 * the shim can route it; MPICH's ends in the C MPI_Allgather. With
 * MPITOPO_COLL off (or MPITOPO_DISABLE set), or a buffer that is Fortran's
 * MPI_BOTTOM, the call is the MPI's own Fortran subroutine, unchanged (and
 * the C bindings it may call pass a nonblocking call on too). Otherwise the
 * handles are converted (a Fortran user operation stays one: MPI applies
 * it), Fortran's MPI_IN_PLACE becomes C's, and the C binding's code runs:
 * mpitopo's collective where the library handles the call, else the C
 * PMPI_* with the converted arguments. A nonblocking call gives the
 * Fortran value of its C request; the Fortran completion calls above
 * complete a routed one. `use mpi_f08` is not routed (see "Neighbourhood
 * collectives" above for why).
 */

typedef void (*f_pass6_t)(void *, void *, void *, void *, void *, void *);
typedef void (*f_pass7_t)(void *, void *, void *, void *, void *, void *, void *);

/* A Fortran buffer as C's: 1 with *c set (Fortran MPI_IN_PLACE becomes
 * C's), 0 for MPI_BOTTOM (MPI's own call must take it). */
static int f_coll_buf(void *f, void **c)
{
    pthread_once(&f_buffers_once, f_buffers_find);
    const char *p = f;
    *c = f;
    if (p && ((f_buffers.in_place && p == f_buffers.in_place) ||
              (f_buffers.mpipriv1 && p == f_buffers.mpipriv1 + sizeof(MPI_Fint)))) {
        *c = MPI_IN_PLACE;
        return 1;
    }
    return !f_special_buffer(f);
}

/* Whether the shim converts the call itself (else MPI's own subroutine). */
static int f_coll_routes(void *sb, void **s, void *rb, void **r)
{
    int ok_s = f_coll_buf(sb, s), ok_r = f_coll_buf(rb, r);
    return mpitopo__shim_coll_enabled() && ok_s && ok_r;
}

/* MPI_ALLGATHER (request NULL) and MPI_IALLGATHER. */
static void f_allgather(void *next, void *sb, MPI_Fint *sc, MPI_Fint *st, void *rb, MPI_Fint *rc,
                        MPI_Fint *rt, MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr)
{
    const char *func = request ? "MPI_Iallgather" : "MPI_Allgather";
    void *s, *r;
    if (!f_coll_routes(sb, &s, rb, &r)) {
        if (request)
            F_PASS(next, comm, func, ierr, f_pass9_t, sb, sc, st, rb, rc, rt, comm, request, ierr);
        else
            F_PASS(next, comm, func, ierr, f_pass8_t, sb, sc, st, rb, rc, rt, comm, ierr);
        return;
    }
    MPI_Comm c = PMPI_Comm_f2c(*comm);
    MPI_Datatype cs = PMPI_Type_f2c(*st), cr = PMPI_Type_f2c(*rt);
    MPI_Request q = MPI_REQUEST_NULL;
    int code = request ? mpitopo__shim_iallgather(s, (int)*sc, cs, r, (int)*rc, cr, c, &q)
                       : mpitopo__shim_allgather(s, (int)*sc, cs, r, (int)*rc, cr, c);
    f_give(request, q, code, ierr);
}

/* MPI_BCAST and MPI_IBCAST. */
static void f_bcast(void *next, void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *root,
                    MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr)
{
    const char *func = request ? "MPI_Ibcast" : "MPI_Bcast";
    void *b, *unused;
    if (!f_coll_routes(buf, &b, NULL, &unused) || b == MPI_IN_PLACE) {
        if (request)
            F_PASS(next, comm, func, ierr, f_pass7_t, buf, count, type, root, comm, request, ierr);
        else
            F_PASS(next, comm, func, ierr, f_pass6_t, buf, count, type, root, comm, ierr);
        return;
    }
    MPI_Comm c = PMPI_Comm_f2c(*comm);
    MPI_Datatype t = PMPI_Type_f2c(*type);
    MPI_Request q = MPI_REQUEST_NULL;
    int code = request ? mpitopo__shim_ibcast(b, (int)*count, t, (int)*root, c, &q)
                       : mpitopo__shim_bcast(b, (int)*count, t, (int)*root, c);
    f_give(request, q, code, ierr);
}

/* MPI_GATHER and MPI_IGATHER. */
static void f_gather(void *next, void *sb, MPI_Fint *sc, MPI_Fint *st, void *rb, MPI_Fint *rc,
                     MPI_Fint *rt, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *request,
                     MPI_Fint *ierr)
{
    const char *func = request ? "MPI_Igather" : "MPI_Gather";
    void *s, *r;
    if (!f_coll_routes(sb, &s, rb, &r)) {
        if (request)
            F_PASS(next, comm, func, ierr, f_pass10_t, sb, sc, st, rb, rc, rt, root, comm,
                   request, ierr);
        else
            F_PASS(next, comm, func, ierr, f_pass9_t, sb, sc, st, rb, rc, rt, root, comm, ierr);
        return;
    }
    MPI_Comm c = PMPI_Comm_f2c(*comm);
    MPI_Datatype cs = PMPI_Type_f2c(*st), cr = PMPI_Type_f2c(*rt);
    MPI_Request q = MPI_REQUEST_NULL;
    int code = request
                   ? mpitopo__shim_igather(s, (int)*sc, cs, r, (int)*rc, cr, (int)*root, c, &q)
                   : mpitopo__shim_gather(s, (int)*sc, cs, r, (int)*rc, cr, (int)*root, c);
    f_give(request, q, code, ierr);
}

/* MPI_ALLREDUCE and MPI_IALLREDUCE. */
static void f_allreduce(void *next, void *sb, void *rb, MPI_Fint *count, MPI_Fint *type,
                        MPI_Fint *op, MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr)
{
    const char *func = request ? "MPI_Iallreduce" : "MPI_Allreduce";
    void *s, *r;
    if (!f_coll_routes(sb, &s, rb, &r)) {
        if (request)
            F_PASS(next, comm, func, ierr, f_pass8_t, sb, rb, count, type, op, comm, request,
                   ierr);
        else
            F_PASS(next, comm, func, ierr, f_pass7_t, sb, rb, count, type, op, comm, ierr);
        return;
    }
    MPI_Comm c = PMPI_Comm_f2c(*comm);
    MPI_Datatype t = PMPI_Type_f2c(*type);
    MPI_Op o = PMPI_Op_f2c(*op);
    MPI_Request q = MPI_REQUEST_NULL;
    int code = request ? mpitopo__shim_iallreduce(s, r, (int)*count, t, o, c, &q)
                       : mpitopo__shim_allreduce(s, r, (int)*count, t, o, c);
    f_give(request, q, code, ierr);
}

/* The Fortran subroutines, every mangling, each calling its converter
 * above: generated from bindings.def (the `fortran` lines) at build time. */
#include "pmpi/gen/shim_fortran_bindings.c"
