/*
 * libmpitopo_shim, Fortran bindings of MPI_Cart_create, MPI_Cart_map and
 * MPI_Dims_create. They do what the C bindings of shim.c do.
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
#include <mpi.h>
#include <mpitopo.h>

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

/* Every name a Fortran compiler may give the three subroutines. Each
 * wrapper is declared first for -Wmissing-prototypes. */
#define SHIM_F_NAMES(X, lower, upper) X(lower##_) X(lower##__) X(lower) X(upper) X(lower##_f08_)

#define CART_CREATE(name)                                                                      \
    void name(MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *,          \
              MPI_Fint *);                                                                     \
    void name(MPI_Fint *comm, MPI_Fint *ndims, MPI_Fint *dims, MPI_Fint *periods,              \
              MPI_Fint *reorder, MPI_Fint *newcomm, MPI_Fint *ierr)                            \
    {                                                                                          \
        f_cart_create(comm, ndims, dims, periods, reorder, newcomm, ierr);                     \
    }
#define CART_MAP(name)                                                                         \
    void name(MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *);         \
    void name(MPI_Fint *comm, MPI_Fint *ndims, MPI_Fint *dims, MPI_Fint *periods,              \
              MPI_Fint *newrank, MPI_Fint *ierr)                                               \
    {                                                                                          \
        f_cart_map(comm, ndims, dims, periods, newrank, ierr);                                 \
    }
#define DIMS_CREATE(name)                                                                      \
    void name(MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *);                                 \
    void name(MPI_Fint *nnodes, MPI_Fint *ndims, MPI_Fint *dims, MPI_Fint *ierr)               \
    {                                                                                          \
        f_dims_create(nnodes, ndims, dims, ierr);                                              \
    }

SHIM_F_NAMES(CART_CREATE, mpi_cart_create, MPI_CART_CREATE)
SHIM_F_NAMES(CART_MAP, mpi_cart_map, MPI_CART_MAP)
SHIM_F_NAMES(DIMS_CREATE, mpi_dims_create, MPI_DIMS_CREATE)
