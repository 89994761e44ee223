! The Fortran counterpart of trace_prog.c, for the tracer's Fortran
! bindings, built with -DBINDING_USEMPI (use mpi) or without (mpif.h). On 8
! processes every r sends (expected_f_8.txt):
!   to r+1: MPI_Send 10 INTEGER, MPI_Sendrecv_replace 2 INTEGER  48 B, 2 msgs
!   to r+2: MPI_Send_init 6 REAL started 3 times by MPI_Start and once by
!           MPI_Startall, freed; then MPI_Send 1 INTEGER while a persistent
!           receive (maybe the same handle) is started          100 B, 5 msgs
!   to r+4: MPI_Isend 3 DOUBLE PRECISION                         24 B, 1 msg
!   to r-1: MPI_Sendrecv 4 INTEGER                               16 B, 1 msg
!   to r-2: MPI_Issend 5 DOUBLE PRECISION to the next rank of a communicator
!           split by parity in reverse order                     40 B, 1 msg
! and MPI_Send to MPI_PROC_NULL. Prints "PASS trace_f" on rank 0.
program trace_f
#if defined(BINDING_USEMPI)
    use mpi
#endif
    implicit none
#if !defined(BINDING_USEMPI)
    include 'mpif.h'
#endif
    integer :: ierr, n, r, i, half, l, hn, nerr, total, phase, v
    integer :: ints(10), iin(10), pair(2), four(4), fin4(4), req(2), one
    double precision :: h(5), hin(5)
    ! Buffers of nonblocking and persistent calls: read or written by MPI
    ! in calls that do not name them, which the compiler must not cache.
    integer, volatile :: vin
    real, volatile :: f(6), fr(6)
    double precision, volatile :: d(3), din(3)
    integer :: status(MPI_STATUS_SIZE)

    call MPI_Init(ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, r, ierr)
    nerr = 0
    do i = 1, 10
        ints(i) = r * 100 + i
    end do
    ! Even ranks send first, odd ranks receive first.
    do phase = 0, 1
        if ((phase == 0) .eqv. (mod(r, 2) == 0)) then
            call MPI_Send(ints, 10, MPI_INTEGER, at(1), 1, MPI_COMM_WORLD, ierr)
        else
            call MPI_Recv(iin, 10, MPI_INTEGER, at(-1), 1, MPI_COMM_WORLD, status, ierr)
        end if
    end do
    if (iin(10) /= at(-1) * 100 + 10) nerr = nerr + 1
    pair = r
    call MPI_Sendrecv_replace(pair, 2, MPI_INTEGER, at(1), 2, at(-1), 2, MPI_COMM_WORLD, &
                              status, ierr)
    if (pair(1) /= at(-1)) nerr = nerr + 1
    four = r
    call MPI_Sendrecv(four, 4, MPI_INTEGER, at(-1), 3, fin4, 4, MPI_INTEGER, at(1), 3, &
                      MPI_COMM_WORLD, status, ierr)
    if (fin4(4) /= at(1)) nerr = nerr + 1

    d = r
    call MPI_Irecv(din, 3, MPI_DOUBLE_PRECISION, at(-4), 4, MPI_COMM_WORLD, req(1), ierr)
    call MPI_Isend(d, 3, MPI_DOUBLE_PRECISION, at(4), 4, MPI_COMM_WORLD, req(2), ierr)
    call MPI_Waitall(2, req, MPI_STATUSES_IGNORE, ierr)
    if (din(3) /= at(-4)) nerr = nerr + 1

    f = 0
    call MPI_Send_init(f, 6, MPI_REAL, at(2), 5, MPI_COMM_WORLD, req(1), ierr)
    call MPI_Recv_init(fr, 6, MPI_REAL, at(-2), 5, MPI_COMM_WORLD, req(2), ierr)
    do i = 1, 3
        f(6) = r + i
        call MPI_Start(req(2), ierr)
        call MPI_Start(req(1), ierr)
        call MPI_Waitall(2, req, MPI_STATUSES_IGNORE, ierr)
        if (fr(6) /= at(-2) + i) nerr = nerr + 1
    end do
    call MPI_Startall(2, req, ierr)
    call MPI_Waitall(2, req, MPI_STATUSES_IGNORE, ierr)
    call MPI_Request_free(req(1), ierr)
    call MPI_Request_free(req(2), ierr)
    v = r
    call MPI_Recv_init(vin, 1, MPI_INTEGER, at(-2), 6, MPI_COMM_WORLD, one, ierr)
    call MPI_Start(one, ierr)
    call MPI_Send(v, 1, MPI_INTEGER, at(2), 6, MPI_COMM_WORLD, ierr)
    call MPI_Wait(one, status, ierr)
    call MPI_Request_free(one, ierr)
    if (vin /= at(-2)) nerr = nerr + 1

    call MPI_Comm_split(MPI_COMM_WORLD, mod(r, 2), -r, half, ierr)
    call MPI_Comm_rank(half, l, ierr)
    call MPI_Comm_size(half, hn, ierr)
    h = r
    call MPI_Issend(h, 5, MPI_DOUBLE_PRECISION, mod(l + 1, hn), 7, half, one, ierr)
    call MPI_Recv(hin, 5, MPI_DOUBLE_PRECISION, mod(l - 1 + hn, hn), 7, half, status, ierr)
    call MPI_Wait(one, status, ierr)
    if (hin(5) /= at(2)) nerr = nerr + 1
    call MPI_Comm_free(half, ierr)

    call MPI_Send(v, 1, MPI_INTEGER, MPI_PROC_NULL, 8, MPI_COMM_WORLD, ierr)

    call MPI_Allreduce(nerr, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (r == 0 .and. total == 0) print '(a)', 'PASS trace_f'
    if (r == 0 .and. total /= 0) print '(a,i0,a)', 'FAIL trace_f: ', total, ' wrong values'
    call MPI_Finalize(ierr)

contains

    integer function at(off)
        integer, intent(in) :: off
        at = modulo(r + off, n)
    end function at

end program trace_f
