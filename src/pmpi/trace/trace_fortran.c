/*
 * libmpitopo_trace, Fortran bindings (mpif.h and `use mpi`) of the sends
 * the C bindings of trace.c record.
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
 * program loads, so a C program does not need that library. Every binding
 * exists in the four usual manglings (mpi_send_, mpi_send__, mpi_send,
 * MPI_SEND) and forwards to the gfortran one, which both MPIs export.
 * MPI_FINALIZE is bound too: Open MPI's calls the C PMPI_Finalize.
 * Not covered: `use mpi_f08` (descriptor-based buffers in some builds).
 */
#include <mpi.h>

#include "pmpi/trace/trace.h"

typedef MPI_Fint F;

#define WEAK __attribute__((weak))

/* Call the MPI's entry point with the thread marked; ierr may be absent in
 * principle, so a local stands in. */
#define FORWARD(fn, args)                                                                          \
    F ierr_local_;                                                                                 \
    if (!ierr)                                                                                     \
        ierr = &ierr_local_;                                                                       \
    if (!fn) {                                                                                     \
        *ierr = MPI_ERR_OTHER;                                                                     \
        return;                                                                                    \
    }                                                                                              \
    mpitopo__trace_fortran_enter();                                                                \
    fn args;                                                                                       \
    mpitopo__trace_fortran_leave()

/* The four manglings of a binding whose body is f_<name>. */
#define MANGLE(name, NAME, params, args)                                                           \
    void name##_ params;                                                                           \
    void name##__ params;                                                                          \
    void name params;                                                                              \
    void NAME params;                                                                              \
    void name##_ params { f_##name args; }                                                         \
    void name##__ params { f_##name args; }                                                        \
    void name params { f_##name args; }                                                            \
    void NAME params { f_##name args; }

/* buf as the program passed it: a device address (CUDA Fortran) counts for
 * the GPU pattern as in C; MPI_BOTTOM and MPI_IN_PLACE are host addresses. */
static void record(const void *buf, F dest, F count, F type, F comm)
{
    mpitopo__trace_send(buf, (int)dest, (MPI_Count)count, PMPI_Type_f2c(type),
                        PMPI_Comm_f2c(comm));
}

/* MPI_Send and friends: (buf, count, datatype, dest, tag, comm, ierror). */
#define P_BLOCKING (void *buf, F *count, F *type, F *dest, F *tag, F *comm, F *ierr)
#define A_BLOCKING (buf, count, type, dest, tag, comm, ierr)
#define BLOCKING(name, NAME)                                                                       \
    void p##name##_ P_BLOCKING WEAK;                                                               \
    static void f_##name P_BLOCKING                                                                \
    {                                                                                              \
        FORWARD(p##name##_, A_BLOCKING);                                                           \
        if (*ierr == MPI_SUCCESS)                                                                  \
            record(buf, *dest, *count, *type, *comm);                                              \
    }                                                                                              \
    MANGLE(name, NAME, P_BLOCKING, A_BLOCKING)

/* MPI_Isend and friends: (..., comm, request, ierror). */
#define P_NONBLOCKING (void *buf, F *count, F *type, F *dest, F *tag, F *comm, F *req, F *ierr)
#define A_NONBLOCKING (buf, count, type, dest, tag, comm, req, ierr)
#define NONBLOCKING(name, NAME)                                                                    \
    void p##name##_ P_NONBLOCKING WEAK;                                                            \
    static void f_##name P_NONBLOCKING                                                             \
    {                                                                                              \
        FORWARD(p##name##_, A_NONBLOCKING);                                                        \
        if (*ierr == MPI_SUCCESS)                                                                  \
            record(buf, *dest, *count, *type, *comm);                                              \
    }                                                                                              \
    MANGLE(name, NAME, P_NONBLOCKING, A_NONBLOCKING)

/* MPI_Send_init and friends: same arguments, the request remembered. */
#define PERSISTENT(name, NAME)                                                                     \
    void p##name##_ P_NONBLOCKING WEAK;                                                            \
    static void f_##name P_NONBLOCKING                                                             \
    {                                                                                              \
        FORWARD(p##name##_, A_NONBLOCKING);                                                        \
        if (*ierr == MPI_SUCCESS && *dest != MPI_PROC_NULL)                                        \
            mpitopo__trace_init(PMPI_Request_f2c(*req), buf, (int)*dest, (MPI_Count)*count,   \
                                PMPI_Type_f2c(*type), PMPI_Comm_f2c(*comm));                       \
    }                                                                                              \
    MANGLE(name, NAME, P_NONBLOCKING, A_NONBLOCKING)

BLOCKING(mpi_send, MPI_SEND)
BLOCKING(mpi_bsend, MPI_BSEND)
BLOCKING(mpi_ssend, MPI_SSEND)
BLOCKING(mpi_rsend, MPI_RSEND)
NONBLOCKING(mpi_isend, MPI_ISEND)
NONBLOCKING(mpi_ibsend, MPI_IBSEND)
NONBLOCKING(mpi_issend, MPI_ISSEND)
NONBLOCKING(mpi_irsend, MPI_IRSEND)
PERSISTENT(mpi_send_init, MPI_SEND_INIT)
PERSISTENT(mpi_bsend_init, MPI_BSEND_INIT)
PERSISTENT(mpi_ssend_init, MPI_SSEND_INIT)
PERSISTENT(mpi_rsend_init, MPI_RSEND_INIT)

#define P_SENDRECV                                                                                 \
    (void *sbuf, F *scount, F *stype, F *dest, F *stag, void *rbuf, F *rcount, F *rtype, F *source, \
     F *rtag, F *comm, F *status, F *ierr)
#define A_SENDRECV (sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, status, ierr)
void pmpi_sendrecv_ P_SENDRECV WEAK;
static void f_mpi_sendrecv P_SENDRECV
{
    FORWARD(pmpi_sendrecv_, A_SENDRECV);
    if (*ierr == MPI_SUCCESS)
        record(sbuf, *dest, *scount, *stype, *comm);
}
MANGLE(mpi_sendrecv, MPI_SENDRECV, P_SENDRECV, A_SENDRECV)

#define P_REPLACE                                                                                  \
    (void *buf, F *count, F *type, F *dest, F *stag, F *source, F *rtag, F *comm, F *status, F *ierr)
#define A_REPLACE (buf, count, type, dest, stag, source, rtag, comm, status, ierr)
void pmpi_sendrecv_replace_ P_REPLACE WEAK;
static void f_mpi_sendrecv_replace P_REPLACE
{
    FORWARD(pmpi_sendrecv_replace_, A_REPLACE);
    if (*ierr == MPI_SUCCESS)
        record(buf, *dest, *count, *type, *comm);
}
MANGLE(mpi_sendrecv_replace, MPI_SENDRECV_REPLACE, P_REPLACE, A_REPLACE)

#ifndef MPITOPO_TRACE_IN_SHIM /* the shim binds these itself */
#define P_START (F *req, F *ierr)
#define A_START (req, ierr)
void pmpi_start_ P_START WEAK;
static void f_mpi_start P_START
{
    FORWARD(pmpi_start_, A_START);
    if (*ierr == MPI_SUCCESS) {
        MPI_Request c = PMPI_Request_f2c(*req);
        mpitopo__trace_start(1, &c);
    }
}
MANGLE(mpi_start, MPI_START, P_START, A_START)

#define P_STARTALL (F *count, F *reqs, F *ierr)
#define A_STARTALL (count, reqs, ierr)
void pmpi_startall_ P_STARTALL WEAK;
static void f_mpi_startall P_STARTALL
{
    FORWARD(pmpi_startall_, A_STARTALL);
    for (F i = 0; *ierr == MPI_SUCCESS && i < *count; i++) {
        MPI_Request c = PMPI_Request_f2c(reqs[i]);
        mpitopo__trace_start(1, &c);
    }
}
MANGLE(mpi_startall, MPI_STARTALL, P_STARTALL, A_STARTALL)

/* Forget before forwarding: the handle is MPI_REQUEST_NULL afterwards. */
void pmpi_request_free_ P_START WEAK;
static void f_mpi_request_free P_START
{
    if (req)
        mpitopo__trace_forget(PMPI_Request_f2c(*req));
    FORWARD(pmpi_request_free_, A_START);
}
MANGLE(mpi_request_free, MPI_REQUEST_FREE, P_START, A_START)

#endif

/* The trace is written before the MPI's own MPI_FINALIZE runs. */
#define P_FINALIZE (F *ierr)
#define A_FINALIZE (ierr)
void pmpi_finalize_ P_FINALIZE WEAK;
static void f_mpi_finalize P_FINALIZE
{
    mpitopo__trace_finalize();
    FORWARD(pmpi_finalize_, A_FINALIZE);
}
MANGLE(mpi_finalize, MPI_FINALIZE, P_FINALIZE, A_FINALIZE)
