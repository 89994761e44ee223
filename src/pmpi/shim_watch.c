/*
 * libmpitopo_shim: the guard of renumbering on request (MPITOPO_REORDER=job).
 *
 * Some programs create a reordered topology communicator only to read from
 * it (MPI_Cart_get, MPI_Cart_shift, MPI_Cart_rank: the rank of every grid
 * cell), free it, and then exchange their halos on MPI_COMM_WORLD with the
 * ranks they read. They rely on reorder changing nothing, as every MPI has
 * let them; once mpitopo has renumbered the communicator those ranks are no
 * longer MPI_COMM_WORLD's, and the exchange hangs or mixes up data. The
 * pattern is visible: a communicator mpitopo renumbered, freed before any
 * communication on it and without MPI_Comm_group (a program that takes the
 * group can translate the ranks). MPI_Comm_free is collective, so the shim
 * agrees on it there with one allreduce over the communicator (only for
 * communicators it renumbered, only in that mode), and rank 0 of the
 * communicator prints one warning naming the constructor, the size and the
 * remedy, before the program's next communication.
 *
 * "Communication on it", as the shim sees it: a send (the tracer's
 * point-to-point bindings, compiled into the shim), a neighbourhood or
 * global collective of the shim's own bindings, MPI_Barrier, MPI_Reduce,
 * MPI_Alltoall, MPI_Alltoallv, MPI_Allgatherv, MPI_Scatter, a
 * communicator derived from it (MPI_Comm_dup, MPI_Comm_split,
 * MPI_Cart_sub: the program uses the new numbering through it), and
 * MPI_Comm_group. A process that only receives is covered by the
 * reduction: its partner sent. C bindings only, generated from
 * bindings.def: MPI_Comm_free calls mpitopo__shim_comm_free, the others
 * (`shim watch` lines) mpitopo__shim_watch_used and then PMPI.
 */
#include <mpi.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "pmpi/shim.h"
#include "pmpi/trace/trace.h"

typedef struct watched {
    MPI_Comm comm;
    const char *func; /* the constructor (a string literal) */
    int differs;      /* this process's rank differs from its rank in comm_old */
    int used;
} watched_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static watched_t *list;
static int count, cap;
static atomic_int nwatched; /* count, read without the lock on the fast path */

void mpitopo__shim_watch(const char *func, MPI_Comm old, MPI_Comm comm)
{
    if (comm == MPI_COMM_NULL)
        return;
    int before = -1, after = -2;
    PMPI_Comm_rank(old, &before);
    PMPI_Comm_rank(comm, &after);
    pthread_mutex_lock(&lock);
    if (count == cap) {
        int ncap = cap ? 2 * cap : 8;
        watched_t *l = realloc(list, (size_t)ncap * sizeof *l);
        if (!l) { /* the guard is advice: without memory, no warning */
            pthread_mutex_unlock(&lock);
            return;
        }
        list = l;
        cap = ncap;
    }
    list[count++] = (watched_t){comm, func, before != after, 0};
    atomic_store(&nwatched, count);
    pthread_mutex_unlock(&lock);
}

void mpitopo__shim_watch_used(MPI_Comm comm)
{
    if (atomic_load_explicit(&nwatched, memory_order_relaxed) == 0)
        return;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < count; i++)
        if (list[i].comm == comm)
            list[i].used = 1;
    pthread_mutex_unlock(&lock);
}

/* Before MPI_Comm_free: the agreement and the warning for a watched
 * communicator; nothing for any other. */
static void check_free(MPI_Comm comm)
{
    if (atomic_load_explicit(&nwatched, memory_order_relaxed) == 0)
        return;
    watched_t w = {MPI_COMM_NULL, NULL, 0, 0};
    pthread_mutex_lock(&lock);
    for (int i = 0; i < count; i++)
        if (list[i].comm == comm) {
            w = list[i];
            list[i] = list[--count];
            break;
        }
    atomic_store(&nwatched, count);
    pthread_mutex_unlock(&lock);
    if (w.comm == MPI_COMM_NULL)
        return;
    int mine[2] = {w.used, w.differs}, all[2] = {1, 0}, rank = -1, size = 0;
    if (PMPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
        return;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    if (rank == 0 && !all[0] && all[1])
        fprintf(stderr,
                "mpitopo: warning: %s renumbered the %d processes of a communicator (MPITOPO_REORDER=job), "
                "and the program frees it before any communication on it, without MPI_Comm_group: if it "
                "uses the ranks it read there (MPI_Cart_rank, MPI_Cart_shift, neighbour lists) on another "
                "communicator, they are not that communicator's ranks, and it may hang or exchange wrong "
                "data. Remedy: unset MPITOPO_REORDER (mpitopo then keeps MPI's ranks) and place the job "
                "at launch with `mpitopo run`\n",
                w.func, size);
}

/* MPI_Comm_free: the agreement and the warning, then MPI's own. */
int mpitopo__shim_comm_free(MPI_Comm *comm)
{
    if (comm)
        check_free(*comm);
    return PMPI_Comm_free(comm);
}
