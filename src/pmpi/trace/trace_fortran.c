/*
 * libmpitopo_trace, Fortran bindings (mpif.h and `use mpi`) of the sends
 * the tracer's C bindings record.
 *
 * Open MPI 4.1: mpi_send_ (libmpi_mpifh) calls the C PMPI_Send, so the C
 * interception does not see Fortran sends; these bindings do. MPICH 4.0:
 * mpi_send_ (libmpichfort) calls the C MPI_Send, which the C binding would
 * record; these bindings record instead, and mark the thread meanwhile so
 * that the C binding does not count the message twice.
 *
 * Each binding forwards its arguments untouched to the MPI's own Fortran
 * profiling entry point (pmpi_send_ ...), which converts handles and
 * special buffers (MPI_BOTTOM, MPI_IN_PLACE) as the MPI does; then it
 * records through the C handles (PMPI_*_f2c). The pmpi_*_ symbols are weak
 * references, resolved from the MPI's Fortran library that a Fortran
 * program loads, so a C program does not need that library (a binding
 * whose entry point is absent sets ierror to MPI_ERR_OTHER). Every binding
 * exists in the four usual manglings (mpi_send_, mpi_send__, mpi_send,
 * MPI_SEND) and forwards to the gfortran one, which both MPIs export.
 * MPI_FINALIZE is bound too: Open MPI's calls the C PMPI_Finalize.
 * Not covered: `use mpi_f08` (descriptor-based buffers in some builds).
 *
 * The bindings are generated from src/pmpi/bindings.def (its `trace`
 * lines) and included at the end of this file, which holds what they
 * share.
 */
#include <mpi.h>

#include "pmpi/trace/trace.h"

/* buf as the program passed it: a device address (CUDA Fortran) counts for
 * the GPU pattern as in C; MPI_BOTTOM and MPI_IN_PLACE are host addresses. */
static void record(const void *buf, MPI_Fint dest, MPI_Fint count, MPI_Fint type, MPI_Fint comm)
{
    mpitopo__trace_send(buf, (int)dest, (MPI_Count)count, PMPI_Type_f2c(type),
                        PMPI_Comm_f2c(comm));
}

#include "pmpi/gen/trace_fortran_bindings.c"
