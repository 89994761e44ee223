/*
 * The harness shared by the tests of neighbourhood-collective schedules
 * (neighbor_combine, neighbor_node): test graphs, the data every edge
 * carries and where it must land, buffers for the five operations (v and w
 * forms with per-edge counts that may vary, zeros included, and alltoallw
 * mixing MPI_INT blocks with a strided vector type), the operations called
 * in three forms, and checks against MPI's own operations and against the
 * data each neighbour sent. Every failure is recorded with MT_CHECK.
 *
 * What every edge carries: the k-th edge from s to us carries s's block of
 * its k-th edge to us (MPI's matching of duplicate edges); Cartesian
 * communicators deliver s's block k in our slot k^1 (the MPI-4 erratum
 * that mpitopo's linear schedule follows), and are checked against that
 * schedule instead of MPI's; so are stencil communicators, where block k
 * lands in slot k.
 */
#ifndef MPITOPO_NBRTEST_H
#define MPITOPO_NBRTEST_H

#include "mpitest.h"

enum { AG, AGV, A2A, A2AV, A2AW, NOPS };
enum { BLOCKING, NONBLOCKING, PERSISTENT, NFORMS };
extern const char *const nt_op_name[NOPS];
extern const char *const nt_form_name[NFORMS];

extern int nt_rank, nt_size; /* in MPI_COMM_WORLD */
extern int nt_gen;           /* data generation: a restarted request sends new data */
extern int nt_vary;          /* v and w forms: per-edge counts vary */

typedef struct nt_graph {
    char label[64];
    MPI_Comm comm;
    int indeg, outdeg, *src, *dst;
    int **out_of; /* out_of[s]: destinations of every process, MPI's order */
    int *outdeg_of;
    int dups;     /* some process has duplicate neighbours */
    int cart;     /* Cartesian: slot k^1 rule, compared with mpitopo's linear */
    int stencil;  /* periodic stencil communicator: block k lands in slot k (and
                     cart is set: compared with mpitopo's linear) */
} nt_graph_t;

typedef struct nt_bufs {
    int op, cnt, scount, *send, *recv, *ref;
    int *scounts, *sdispls, *rcounts, *rdispls;
    MPI_Aint *sb, *rb;
    MPI_Datatype *st, *rt;
    int ns, sints, rints; /* send slots, ints of the send and receive buffers */
    int *sn, *sstride;    /* ints and stride of every send block */
    int *rn, *rstride;    /* and of every receive block */
} nt_bufs_t;

/* After MPI_Init: ranks and the strided datatype. nt_end frees it. */
void nt_begin(void);
void nt_end(void);

/* Test graphs (collective over MPI_COMM_WORLD). Random digraph of density
 * keep / 10 with duplicate and self edges, process 1 without edges (when
 * there are more than 2); periodic 2-D Moore neighbourhood of radius 1;
 * dense symmetric MPI_Graph without rank 0 and with a self loop at the
 * last rank; Cartesian communicator. */
void nt_random_graph(nt_graph_t *g, unsigned seed, int keep);
void nt_moore_graph(nt_graph_t *g);
void nt_dense_graph(nt_graph_t *g);
void nt_cart_graph(nt_graph_t *g, int ndims, const int *dims, const int *periods);
/* Periodic grid of ndims (at most 4) dims with an mpitopo stencil
 * communicator ("moore=1", ...) on it, checked like a Cartesian one. */
void nt_stencil_graph(nt_graph_t *g, int ndims, const int *dims, const char *stencil);
void nt_graph_free(nt_graph_t *g);

/* Buffers of op with blocks of cnt ints (varying when nt_vary), filled
 * with generation nt_gen's data; receive blocks in reverse slot order in
 * the v and w forms, so a slot mix-up shows. */
void nt_bufs_make(nt_bufs_t *b, const nt_graph_t *g, int op, int cnt);
void nt_bufs_fill(nt_bufs_t *b);
void nt_bufs_free(nt_bufs_t *b);

/* mpitopo's operations on b: the _init call; the blocking call (nb = 0)
 * or the nonblocking one (nb = 1, request in *q). */
int nt_init_op(const nt_graph_t *g, int op, nt_bufs_t *b, MPI_Info info, mpitopo_request_t *q);
int nt_start_or_run(const nt_graph_t *g, int op, nt_bufs_t *b, mpitopo_request_t *q, int nb);

/* One call of op in `form`; persistent (with info): two runs of one
 * request, the second with new data (generation 1; the caller resets
 * nt_gen). */
int nt_call(const nt_graph_t *g, int op, int form, nt_bufs_t *b, MPI_Info info);

/* The received blocks of b against the reference (MPI's operation, or
 * mpitopo's linear schedule on Cartesian communicators, run now on the
 * same send data) and against the data each neighbour sent. */
void nt_verify(const nt_graph_t *g, int op, int form, nt_bufs_t *b, const char *how);

/* nt_call then nt_verify, on fresh buffers. */
void nt_check_one(const nt_graph_t *g, int op, int form, int cnt, MPI_Info info,
                  const char *how);

/* Messages sent by one persistent run of op (blocks of one int) under
 * schedule sched, summed over all processes (the library's counter). */
long long nt_sends_of(const nt_graph_t *g, int op, const char *sched);

/*
 * Alltoallv under schedule sched with wrong receive counts: delta added to
 * recvcounts[i] of every slot i with change[i] set (NULL: every slot). A
 * block the schedule forwards must fail the call with MPI_ERR_TRUNCATE
 * class at its receiver (never hang), and somewhere one must.
 */
void nt_check_truncate(const nt_graph_t *g, const char *sched, int delta, const int *change);

#endif
