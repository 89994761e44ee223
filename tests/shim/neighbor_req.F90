! A plain MPI program, unaware of mpitopo: the nonblocking neighbourhood
! collectives (MPI_INEIGHBOR_ALLGATHER, _ALLGATHERV, _ALLTOALL, _ALLTOALLV,
! _ALLTOALLW) on a dist-graph where rank r sends to r+1, r+2, r+3 and
! receives from r-1, r-2, r-3 (mod p, p >= 4), each in one request array
! with an ordinary MPI_IRECV and MPI_ISEND (a ring, tag 7), completed with
! MPI_WAIT, MPI_TEST loops, MPI_WAITALL, MPI_WAITANY, MPI_WAITSOME,
! MPI_TESTALL, MPI_TESTANY and MPI_TESTSOME; MPI_REQUEST_GET_STATUS; and,
! built with -DPERSISTENT (MPI-4), MPI_NEIGHBOR_*_INIT run five times with
! MPI_STARTALL or MPI_START and freed with MPI_REQUEST_FREE. Every received
! element, the ring message's status (source, tag, count), the 1-based
! indices, MPI_UNDEFINED once nothing is active, and the handles
! (MPI_REQUEST_NULL after completion, kept when persistent) are checked on
! every rank (MPICH 4.0's own MPI_WAITANY and MPI_TESTANY give
! MPI_UNDEFINED + 1 for "nothing active": they add 1 to every index; that
! is accepted from MPICH). When the argument is "routed" the shim's counter
! (mpitopo_shim_neighbor_calls, found with dlsym) must equal the number of
! neighbourhood calls made, and MPI_CANCEL of one must fail; "passed": 0.
! Built with -DBINDING_USEMPI (use mpi) or without (include 'mpif.h').
! Prints "PASS shim_neighbor_req_fortran" on rank 0.
!   shim_neighbor_req_* routed|passed
program shim_neighbor_req_fortran
#if defined(BINDING_USEMPI)
    use mpi
#endif
    use, intrinsic :: iso_c_binding
    implicit none
#if !defined(BINDING_USEMPI)
    include 'mpif.h'
#endif
    interface
        function dlsym(handle, name) bind(C, name='dlsym')
            import :: c_ptr, c_char
            type(c_ptr), value :: handle
            character(kind=c_char), dimension(*) :: name
            type(c_ptr) :: dlsym
        end function
        function counter_t() bind(C)
            import :: c_long
            integer(c_long) :: counter_t
        end function
    end interface
    integer, parameter :: DEG = 3, N = 2, M = N * DEG, NOPS = 5, NMETHODS = 8, TAG = 7
    ! The completion call of each persistent run.
    integer, parameter :: pmeth(5) = [3, 5, 6, 4, 2]
    character(len=10), parameter :: opname(NOPS) = [character(len=10) :: 'allgather', &
        'allgatherv', 'alltoall', 'alltoallv', 'alltoallw']
    character(len=8), parameter :: methname(NMETHODS) = [character(len=8) :: 'wait', 'test', &
        'waitall', 'waitany', 'waitsome', 'testall', 'testany', 'testsome']
    integer :: ierr, rank, nprocs, g, i, k, meth, it, nfail, total, calls, left, right, salt
    integer :: src(DEG), dst(DEG), counts(DEG), displs(DEG), types(DEG)
    integer(kind=MPI_ADDRESS_KIND) :: bdispls(DEG)
    integer :: sbuf(M), rbuf(M), psend(M, NOPS), precv(M, NOPS), ring_s(2), ring_r(2)
    integer :: reqs(3), preq(NOPS), all(NOPS + 2), st(MPI_STATUS_SIZE)
    integer :: sts(MPI_STATUS_SIZE, NOPS + 2)
    character(len=16) :: arg
    logical :: routed, flag, mpich
    character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: version

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
    call get_command_argument(1, arg)
    routed = arg == 'routed'
    call MPI_Get_library_version(version, i, ierr)
    mpich = index(version, 'MPICH') > 0
    right = mod(rank + 1, nprocs)
    left = mod(rank - 1 + nprocs, nprocs)
    do i = 1, DEG
        dst(i) = mod(rank + i, nprocs)
        src(i) = mod(rank - i + nprocs, nprocs)
        counts(i) = N
        displs(i) = N * (i - 1)
        bdispls(i) = 4 * N * (i - 1)
        types(i) = MPI_INTEGER
    end do
    call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, DEG, src, MPI_UNWEIGHTED, DEG, dst, &
                                        MPI_UNWEIGHTED, MPI_INFO_NULL, .false., g, ierr)
    nfail = 0
    calls = 0

    ! An ordinary message first, before any routed request exists.
    salt = 1
    call ring_start(reqs(2), reqs(3))
    call MPI_Wait(reqs(2), st, ierr)
    call check_ring_status('plain wait', st)
    call MPI_Wait(reqs(3), MPI_STATUS_IGNORE, ierr)
    call check_ring('plain', reqs(2:3))

    ! Nonblocking: every operation with every completion call.
    do meth = 1, NMETHODS
        do k = 1, NOPS
            salt = 100 * meth + k
            call fill(k, sbuf, salt)
            rbuf = -1
            call ring_start(reqs(2), reqs(3))
            call start_op(k, sbuf, rbuf, reqs(1))
            call complete(meth, 3, reqs, .false., methname(meth) // ' ' // opname(k))
            call check(methname(meth) // ' ' // opname(k), k, rbuf, salt)
            call check_ring(methname(meth), reqs(2:3))
        end do
    end do

    ! MPI_REQUEST_GET_STATUS until done, then MPI_WAIT; an ordinary MPI_WAIT
    ! while a routed request is active.
    salt = 900
    call fill(3, sbuf, salt)
    rbuf = -1
    call ring_start(reqs(2), reqs(3))
    call start_op(3, sbuf, rbuf, reqs(1))
    call MPI_Wait(reqs(2), st, ierr)
    call check_ring_status('wait beside a routed request', st)
    ! (Open MPI 4.1's own MPI_Request_get_status never saw its own
    ! MPI_Ineighbor_alltoall complete here, shim or not: MPI's own is only
    ! polled a while.)
    flag = .false.
    i = 0
    do while (.not. flag .and. (routed .or. i < 1000))
        call MPI_Request_get_status(reqs(1), flag, MPI_STATUS_IGNORE, ierr)
        i = i + 1
    end do
    if (reqs(1) == MPI_REQUEST_NULL) call fail('request_get_status freed the request', 0)
    call MPI_Wait(reqs(1), st, ierr)
    call MPI_Wait(reqs(3), MPI_STATUS_IGNORE, ierr)
    call check('request_get_status', 3, rbuf, salt)
    call check_ring('request_get_status', reqs(2:3))

    ! MPI_CANCEL of a routed collective is refused (MPI_ERR_REQUEST).
    if (routed) then
        call MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN, ierr)
        salt = 901
        call fill(1, sbuf, salt)
        call start_op(1, sbuf, rbuf, reqs(1))
        call MPI_Cancel(reqs(1), ierr)
        if (ierr == MPI_SUCCESS) call fail('MPI_CANCEL of a routed collective succeeded', 0)
        call MPI_Wait(reqs(1), MPI_STATUS_IGNORE, ierr)
        if (ierr /= MPI_SUCCESS) call fail('MPI_WAIT after MPI_CANCEL failed', ierr)
        call check('cancel', 1, rbuf, salt)
    end if

#if defined(PERSISTENT)
    ! Persistent: five runs, started with MPI_STARTALL or MPI_START.
    do k = 1, NOPS
        call init_op(k, psend(1, k), precv(1, k), preq(k))
    end do
    do it = 1, 5
        salt = 1000 * it
        do k = 1, NOPS
            call fill(k, psend(1, k), salt + k)
            precv(:, k) = -1
        end do
        if (it == 2) then
            do k = 1, NOPS
                call MPI_Start(preq(k), ierr)
            end do
        else
            call MPI_Startall(NOPS, preq, ierr)
        end if
        all(1:NOPS) = preq
        call ring_start(all(NOPS + 1), all(NOPS + 2))
        meth = pmeth(it)
        ! MPICH 4.0's own persistent neighbourhood collectives are only
        ! completed with MPI_WAITALL: its MPI_WAITSOME returned them twice
        ! and then refused to start them again (already active).
        if (mpich .and. .not. routed) meth = 3
        call complete(meth, NOPS + 2, all, .true., 'persistent ' // methname(meth))
        do k = 1, NOPS
            call check('persistent ' // methname(meth) // ' ' // opname(k), k, precv(:, k), &
                       salt + k)
            if (all(k) /= preq(k)) call fail('persistent handle changed', k)
        end do
        call check_ring('persistent', all(NOPS + 1:))
    end do
    do k = 1, NOPS
        call MPI_Request_free(preq(k), ierr)
        if (preq(k) /= MPI_REQUEST_NULL) call fail('MPI_REQUEST_FREE left a handle', k)
    end do
#else
    preq = MPI_REQUEST_NULL
    psend = 0
    precv = 0
    it = 0
    all = MPI_REQUEST_NULL
#endif

    if (.not. routed) calls = 0
    if (shim_neighbor_calls() /= calls) then
        write (*, '(A,I0,A,I0,A,I0)') 'FAIL shim_neighbor_req_fortran: rank ', rank, &
            ': the shim routed ', shim_neighbor_calls(), ' calls, expected ', calls
        nfail = nfail + 1
    end if
    call MPI_Comm_free(g, ierr)
    call MPI_Allreduce(nfail, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (rank == 0 .and. total == 0) write (*, '(A,A)') 'PASS shim_neighbor_req_fortran ', &
        trim(arg)
    call MPI_Finalize(ierr)
    if (total /= 0) stop 1

contains

    integer function shim_neighbor_calls()
        procedure(counter_t), pointer :: f
        type(c_ptr) :: p
        p = dlsym(c_null_ptr, 'mpitopo_shim_neighbor_calls' // c_null_char)
        shim_neighbor_calls = 0
        if (.not. c_associated(p)) return
        call c_f_procpointer(transfer(p, c_null_funptr), f)
        shim_neighbor_calls = int(f())
    end function

    subroutine fail(what, v)
        character(len=*), intent(in) :: what
        integer, intent(in) :: v
        write (*, '(A,I0,A,A,A,I0)') 'FAIL shim_neighbor_req_fortran: rank ', rank, ': ', &
            what, ' ', v
        nfail = nfail + 1
    end subroutine

    integer function val(sender, block, e, s)
        integer, intent(in) :: sender, block, e, s
        val = s * 100000 + sender * 1000 + block * 10 + e
    end function

    ! alltoall forms (k >= 3): block j (0-based) to destination j; else
    ! block 0 to all.
    subroutine fill(k, sb, s)
        integer, intent(in) :: k, s
        integer, intent(out) :: sb(M)
        integer :: j, e
        do j = 0, DEG - 1
            do e = 0, N - 1
                if (k >= 3) then
                    sb(j * N + e + 1) = val(rank, j, e, s)
                else
                    sb(j * N + e + 1) = val(rank, 0, e, s)
                end if
            end do
        end do
    end subroutine

    subroutine check(what, k, rb, s)
        character(len=*), intent(in) :: what
        integer, intent(in) :: k, rb(M), s
        integer :: j, e, want
        do j = 0, DEG - 1
            do e = 0, N - 1
                want = val(src(j + 1), 0, e, s)
                if (k >= 3) want = val(src(j + 1), j, e, s)
                if (rb(j * N + e + 1) /= want) then
                    write (*, '(A,I0,A,A,A,I0,A,I0)') 'FAIL shim_neighbor_req_fortran: rank ', &
                        rank, ', ', what, ': got ', rb(j * N + e + 1), ' expected ', want
                    nfail = nfail + 1
                    return
                end if
            end do
        end do
    end subroutine

    subroutine start_op(k, sb, rb, req)
        integer, intent(in) :: k
        integer :: sb(M), rb(M), req
        select case (k)
        case (1)
            call MPI_Ineighbor_allgather(sb, N, MPI_INTEGER, rb, N, MPI_INTEGER, g, req, ierr)
        case (2)
            call MPI_Ineighbor_allgatherv(sb, N, MPI_INTEGER, rb, counts, displs, MPI_INTEGER, &
                                          g, req, ierr)
        case (3)
            call MPI_Ineighbor_alltoall(sb, N, MPI_INTEGER, rb, N, MPI_INTEGER, g, req, ierr)
        case (4)
            call MPI_Ineighbor_alltoallv(sb, counts, displs, MPI_INTEGER, rb, counts, displs, &
                                         MPI_INTEGER, g, req, ierr)
        case (5)
            call MPI_Ineighbor_alltoallw(sb, counts, bdispls, types, rb, counts, bdispls, &
                                         types, g, req, ierr)
        end select
        if (ierr /= MPI_SUCCESS) call fail('MPI_INEIGHBOR_' // opname(k) // ' ierror', ierr)
        if (req == MPI_REQUEST_NULL) call fail('no request from ' // opname(k), 0)
        calls = calls + 1
    end subroutine

#if defined(PERSISTENT)
    subroutine init_op(k, sb, rb, req)
        integer, intent(in) :: k
        integer :: sb(M), rb(M), req
        select case (k)
        case (1)
            call MPI_Neighbor_allgather_init(sb, N, MPI_INTEGER, rb, N, MPI_INTEGER, g, &
                                             MPI_INFO_NULL, req, ierr)
        case (2)
            call MPI_Neighbor_allgatherv_init(sb, N, MPI_INTEGER, rb, counts, displs, &
                                              MPI_INTEGER, g, MPI_INFO_NULL, req, ierr)
        case (3)
            call MPI_Neighbor_alltoall_init(sb, N, MPI_INTEGER, rb, N, MPI_INTEGER, g, &
                                            MPI_INFO_NULL, req, ierr)
        case (4)
            call MPI_Neighbor_alltoallv_init(sb, counts, displs, MPI_INTEGER, rb, counts, &
                                             displs, MPI_INTEGER, g, MPI_INFO_NULL, req, ierr)
        case (5)
            call MPI_Neighbor_alltoallw_init(sb, counts, bdispls, types, rb, counts, bdispls, &
                                             types, g, MPI_INFO_NULL, req, ierr)
        end select
        if (ierr /= MPI_SUCCESS) call fail('MPI_NEIGHBOR_' // opname(k) // '_INIT ierror', ierr)
        calls = calls + 1
    end subroutine
#endif

    ! The ring message: [rank, salt] to the right, from the left.
    subroutine ring_start(rreq, sreq)
        integer :: rreq, sreq
        ring_s = [rank, salt]
        ring_r = -1
        call MPI_Irecv(ring_r, 2, MPI_INTEGER, left, TAG, MPI_COMM_WORLD, rreq, ierr)
        call MPI_Isend(ring_s, 2, MPI_INTEGER, right, TAG, MPI_COMM_WORLD, sreq, ierr)
    end subroutine

    subroutine check_ring_status(what, s)
        character(len=*), intent(in) :: what
        integer, intent(in) :: s(MPI_STATUS_SIZE)
        integer :: cnt
        call MPI_Get_count(s, MPI_INTEGER, cnt, ierr)
        if (s(MPI_SOURCE) /= left .or. s(MPI_TAG) /= TAG .or. cnt /= 2) then
            write (*, '(A,I0,A,A,A,I0,A,I0,A,I0)') 'FAIL shim_neighbor_req_fortran: rank ', &
                rank, ', ', what, ': ring status source ', s(MPI_SOURCE), ' tag ', s(MPI_TAG), &
                ' count ', cnt
            nfail = nfail + 1
        end if
    end subroutine

    subroutine check_ring(what, r)
        character(len=*), intent(in) :: what
        integer, intent(in) :: r(2)
        if (ring_r(1) /= left .or. ring_r(2) /= salt) &
            call fail(trim(what) // ': ring message wrong, from', ring_r(1))
        if (r(1) /= MPI_REQUEST_NULL .or. r(2) /= MPI_REQUEST_NULL) &
            call fail(trim(what) // ': ring request not MPI_REQUEST_NULL', 0)
    end subroutine

    ! Complete the n requests r (the last two: the ring's receive and send;
    ! persistent: the others are persistent and stay allocated).
    subroutine complete(meth, n, r, persistent, what)
        integer, intent(in) :: meth, n
        integer :: r(n)
        logical, intent(in) :: persistent
        character(len=*), intent(in) :: what
        logical :: done(n), f, last
        integer :: idx, out, j, ndone, ind(n)
        done = .false.
        ndone = 0
        ! After the last completion, one more call must say "nothing
        ! active" (MPI_UNDEFINED). Not asked of MPICH 4.0's own persistent
        ! collectives: its MPI_WAITSOME returns them again once inactive.
        last = .not. (persistent .and. mpich .and. .not. routed)
        select case (meth)
        case (1) ! MPI_WAIT in array order
            do j = 1, n
                if (j == n - 1) then
                    call MPI_Wait(r(j), st, ierr)
                    call check_ring_status(what, st)
                else
                    call MPI_Wait(r(j), MPI_STATUS_IGNORE, ierr)
                end if
                call ok(what, ierr)
            end do
        case (2) ! MPI_TEST loops
            do while (ndone < n)
                do j = 1, n
                    if (done(j)) cycle
                    call MPI_Test(r(j), f, st, ierr)
                    call ok(what, ierr)
                    if (f) then
                        done(j) = .true.
                        ndone = ndone + 1
                        if (j == n - 1) call check_ring_status(what, st)
                    end if
                end do
            end do
        case (3) ! MPI_WAITALL
            call MPI_Waitall(n, r, sts, ierr)
            call ok(what, ierr)
            call check_ring_status(what, sts(:, n - 1))
        case (4) ! MPI_WAITANY until MPI_UNDEFINED
            do
                call MPI_Waitany(n, r, idx, st, ierr)
                call ok(what, ierr)
                if (undefined(idx)) exit
                call mark(what, n, done, ndone, idx)
                if (idx == n - 1) call check_ring_status(what, st)
                if ((ndone == n .and. .not. last) .or. nfail > 0) exit
            end do
        case (5) ! MPI_WAITSOME until MPI_UNDEFINED
            do
                call MPI_Waitsome(n, r, out, ind, sts, ierr)
                call ok(what, ierr)
                if (out == MPI_UNDEFINED) exit
                if (out < 1) call fail(what // ': waitsome returned', out)
                do j = 1, out
                    call mark(what, n, done, ndone, ind(j))
                    if (ind(j) == n - 1) call check_ring_status(what, sts(:, j))
                end do
                if ((ndone == n .and. .not. last) .or. nfail > 0) exit
            end do
        case (6) ! MPI_TESTALL, statuses ignored
            f = .false.
            do while (.not. f)
                call MPI_Testall(n, r, f, MPI_STATUSES_IGNORE, ierr)
                call ok(what, ierr)
            end do
            ndone = n
        case (7) ! MPI_TESTANY until MPI_UNDEFINED, status ignored
            do
                call MPI_Testany(n, r, idx, f, MPI_STATUS_IGNORE, ierr)
                call ok(what, ierr)
                if (f .and. undefined(idx)) exit
                if (f) call mark(what, n, done, ndone, idx)
                if ((ndone == n .and. .not. last) .or. nfail > 0) exit
            end do
        case (8) ! MPI_TESTSOME until MPI_UNDEFINED
            do
                call MPI_Testsome(n, r, out, ind, sts, ierr)
                call ok(what, ierr)
                if (out == MPI_UNDEFINED) exit
                do j = 1, out
                    call mark(what, n, done, ndone, ind(j))
                    if (ind(j) == n - 1) call check_ring_status(what, sts(:, j))
                end do
                if ((ndone == n .and. .not. last) .or. nfail > 0) exit
            end do
        end select
        if (meth >= 4 .and. meth /= 6 .and. ndone /= n) &
            call fail(what // ': completed requests', ndone)
        do j = 1, n
            if (.not. persistent .or. j >= n - 1) then
                if (r(j) /= MPI_REQUEST_NULL) call fail(what // ': not MPI_REQUEST_NULL', j)
            else if (r(j) == MPI_REQUEST_NULL) then
                call fail(what // ': persistent request freed', j)
            end if
        end do
    end subroutine

    ! The index of "nothing active" (see the top).
    logical function undefined(idx)
        integer, intent(in) :: idx
        undefined = idx == MPI_UNDEFINED .or. (mpich .and. idx == MPI_UNDEFINED + 1)
    end function

    ! Request j (1-based) of n completed, once.
    subroutine mark(what, n, done, ndone, j)
        character(len=*), intent(in) :: what
        integer, intent(in) :: n, j
        logical, intent(inout) :: done(n)
        integer, intent(inout) :: ndone
        if (j < 1 .or. j > n) then
            call fail(what // ': index out of range', j)
        else if (done(j)) then
            call fail(what // ': index returned twice', j)
        else
            done(j) = .true.
            ndone = ndone + 1
        end if
    end subroutine

    subroutine ok(what, e)
        character(len=*), intent(in) :: what
        integer, intent(in) :: e
        if (e /= MPI_SUCCESS) call fail(what // ': ierror', e)
    end subroutine
end program
