/* Internal to the tracer (src/pmpi/trace): the hash table, the recording
 * entry points shared by the C and Fortran bindings. Not exported from
 * libmpitopo_trace. */
#ifndef MPITOPO_TRACE_H
#define MPITOPO_TRACE_H

#include <mpi.h>
#include <mpitopo.h>
#include <stdint.h>

#if defined(__GNUC__)
#define MPITOPO_TRACE_HIDDEN __attribute__((visibility("hidden")))
#else
#define MPITOPO_TRACE_HIDDEN
#endif

/* One slot of a table: what the three tables of the tracer keep.
 *   edges:        key = world rank of a destination; bytes, msgs
 *   translations: key = rank in a communicator; rank = its world rank
 *   persistent:   key = request handle; rank = world destination, bytes */
typedef struct trace_slot {
    uint64_t key;
    uint64_t bytes;
    uint64_t msgs;
    int rank;
    int gpu; /* persistent: the buffer is device memory */
    int used;
} trace_slot_t;

/* Open addressing with linear probing, grown at half load: memory
 * O(entries), not O(processes). */
typedef struct trace_table {
    trace_slot_t *slots;
    uint64_t cap, n;
} trace_table_t;

/* The slot of key, created (zeroed but for the key) when absent; NULL when
 * out of memory. */
MPITOPO_TRACE_HIDDEN trace_slot_t *mpitopo__trace_table_get(trace_table_t *t, uint64_t key);
/* The slot of key, or NULL. */
MPITOPO_TRACE_HIDDEN trace_slot_t *mpitopo__trace_table_find(const trace_table_t *t, uint64_t key);
MPITOPO_TRACE_HIDDEN void mpitopo__trace_table_remove(trace_table_t *t, uint64_t key);
MPITOPO_TRACE_HIDDEN void mpitopo__trace_table_free(trace_table_t *t);

/* Record one message of count x type from buf to dest of comm
 * (MPI_PROC_NULL ignored): in the GPU pattern when buf is device memory,
 * else in the CPU pattern. Called after the send was accepted by MPI. */
MPITOPO_TRACE_HIDDEN void mpitopo__trace_send(const void *buf, int dest, MPI_Count count,
                                              MPI_Datatype type, MPI_Comm comm);
/* A neighbourhood collective on comm (Cartesian, graph or dist-graph):
 * one message to each out-neighbour, of count x type (counts[i] when
 * counts, types[i] when types). */
MPITOPO_TRACE_HIDDEN void mpitopo__trace_neighbors(MPI_Comm comm, const void *buf, int count, const int *counts,
                                                   MPI_Datatype type, const MPI_Datatype *types);
/* Persistent sends: remember a request after *_init, count one message per
 * start, forget it when freed. */
MPITOPO_TRACE_HIDDEN void mpitopo__trace_init(MPI_Request req, const void *buf, int dest,
                                              MPI_Count count, MPI_Datatype type, MPI_Comm comm);
MPITOPO_TRACE_HIDDEN void mpitopo__trace_start(int n, const MPI_Request *reqs);
MPITOPO_TRACE_HIDDEN void mpitopo__trace_forget(MPI_Request req);

/* Gather the edges on rank 0 of MPI_COMM_WORLD and write the pattern file
 * (collective over MPI_COMM_WORLD); does nothing after its first call or
 * outside MPI_Init .. MPI_Finalize. */
MPITOPO_TRACE_HIDDEN void mpitopo__trace_finalize(void);

/* Whether the tracer records (always in libmpitopo_trace; in the shim when
 * MPITOPO_TRACE_FILE or MPITOPO_RUN_RECORD is set). */
MPITOPO_TRACE_HIDDEN int mpitopo__trace_on(void);

#ifdef MPITOPO_TRACE_IN_SHIM
/* The shim's side (src/pmpi/shim_watch.c, shim_record.c): a send on comm
 * counts as communication on it for the guard of renumbered communicators;
 * at MPI_Finalize, the placement for mpitopo run (collective over
 * MPI_COMM_WORLD; traffic on rank 0, root = whether this is rank 0). */
MPITOPO_TRACE_HIDDEN void mpitopo__shim_watch_used(MPI_Comm comm);
MPITOPO_TRACE_HIDDEN void mpitopo__shim_record_placement(const char *path, int root,
                                                         const mpitopo_pattern_t *traffic);
#endif

/* While a Fortran binding forwards to the MPI's own Fortran entry point,
 * which may call the C MPI_* function (MPICH does), the C bindings must not
 * count the message a second time. Per thread. */
MPITOPO_TRACE_HIDDEN void mpitopo__trace_fortran_enter(void);
MPITOPO_TRACE_HIDDEN void mpitopo__trace_fortran_leave(void);

#endif /* MPITOPO_TRACE_H */
