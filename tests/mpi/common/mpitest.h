/*
 * Helpers for the MPI test programs. Every rank checks what it can with
 * MT_CHECK, which records the first failure of this rank and carries on;
 * mt_finish() reduces the verdict over MPI_COMM_WORLD and rank 0 prints one
 * line, "PASS name" or "FAIL name: ..." with the message of the first
 * failing rank.
 */
#ifndef MPITOPO_MPITEST_H
#define MPITOPO_MPITEST_H

#include <mpitopo.h>

#if defined(__GNUC__)
#define MT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define MT_PRINTF(f, a)
#endif

/* Record a failure (the first one of this rank is kept). Returns 0. */
int mt_fail(const char *file, int line, const char *fmt, ...) MT_PRINTF(3, 4);

/* Evaluates to 1 when cond holds, else records the formatted message and
 * evaluates to 0: `if (!MT_CHECK(n == 4, "n = %d", n)) return;`. */
#define MT_CHECK(cond, ...) ((cond) ? 1 : mt_fail(__FILE__, __LINE__, __VA_ARGS__))

/* Check that an mpitopo call succeeded; the message names the call, the
 * error code and mpitopo_last_error(). */
#define MT_CHECK_RC(call)                                                             \
    mt_check_rc_((call), #call, __FILE__, __LINE__)
int mt_check_rc_(int rc, const char *what, const char *file, int line);

/* Whether this rank has recorded a failure. */
int mt_failed(void);

/* Collective over MPI_COMM_WORLD: reduce the verdict, print one line on
 * rank 0, and return the exit code (0 on PASS, 1 on FAIL) on every rank. */
int mt_finish(const char *name);

/* 1 when the MPI library is MPICH (from MPI_Get_library_version). */
int mt_is_mpich(void);

/* getenv, with NULL for unset or empty variables. */
const char *mt_getenv(const char *name);

/* What MPITOPO_EMULATE and MPITOPO_EMULATE_PLACEMENT should give, computed
 * locally from the same description: the emulated machine (NULL when
 * MPITOPO_EMULATE is unset) and the leaf of every world rank (world-size
 * ints, malloc'ed). Records a failure and returns 0 if they are invalid. */
int mt_emulation(mpitopo_machine_t **machine, int **leaf_of_world);

/* The expected node of every world rank, as an opaque key (world-size ints,
 * malloc'ed; equal keys = same node): the emulated node, MPICH's fake nodes
 * (MPIR_CVAR_NUM_CLIQUES, MPIR_CVAR_CLIQUES_BY_BLOCK), else one host. */
int *mt_node_keys(void);

/* World ranks of the processes of comm (size ints, malloc'ed). */
int *mt_world_ranks(MPI_Comm comm);
/* The rank in comm of every member of sub (malloc'ed, sub's size entries). */
int *mt_ranks_in(MPI_Comm sub, MPI_Comm comm);

/* Check on the calling process that cart is a Cartesian communicator of
 * ndims dimensions with these dims and periods (non-zero = periodic):
 * MPI_Topo_test, MPI_Cartdim_get, MPI_Cart_get, size prod(dims), row-major
 * MPI_Cart_coords / MPI_Cart_rank round trip for every rank (and wrapped
 * coordinates in periodic dimensions), MPI_Cart_shift by +-1 and +-2 in every
 * dimension (wrap, MPI_PROC_NULL at open borders). Local. Returns 1 when
 * everything holds; failures are recorded with label. */
int mt_cart_check(MPI_Comm cart, int ndims, const int *dims, const int *periods,
                  const char *label);

/* Row-major rank of coords in a dims grid; coordinates outside the grid
 * wrap in periodic dimensions and give MPI_PROC_NULL in open ones. */
int mt_cart_rank_of(int ndims, const int *dims, const int *periods, const int *coords);

/* A dist graph over MPI_COMM_WORLD (reorder 0): each process's neighbours,
 * both ways, are the ranks at -1, +1, -2 and +2 (modulo the size; itself
 * and repeats left out); *degree receives their number when not NULL. */
MPI_Comm mt_ring2_graph(int *degree);

#endif
