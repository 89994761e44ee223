! A plain MPI program, unaware of mpitopo: MPI_ALLGATHER, MPI_BCAST,
! MPI_GATHER, MPI_ALLREDUCE and their nonblocking forms (completed by
! MPI_WAIT, MPI_WAITALL or an MPI_TEST loop) on MPI_COMM_WORLD and on a
! duplicate whose info forces allgather=ring:rmh, with Fortran's
! MPI_IN_PLACE (allgather, gather at the root, allreduce), roots 0 and
! p-1, 1 and 300 INTEGERs (300: above the 1 KiB ring switch), MPI_SUM,
! MPI_MAX and MPI_SUM on DOUBLE PRECISION; every received element checked
! on every rank against its closed form. MPI_ALLREDUCE on a duplicate whose
! info says allreduce=mpi must stay MPI's own. The shim's counter
! (mpitopo_shim_coll_calls, found with dlsym) must equal the number of
! the other calls when the argument is "routed", 0 when "passed". Built
! with -DBINDING_USEMPI (use mpi) or without (include 'mpif.h'). Prints
! "PASS shim_coll_fortran" on rank 0.
!   shim_coll_f* routed|passed
program shim_coll_fortran
#if defined(BINDING_USEMPI)
    use mpi
#endif
    use, intrinsic :: iso_c_binding
    implicit none
#if !defined(BINDING_USEMPI)
    include 'mpif.h'
#endif
    interface
        ! RTLD_DEFAULT is a null handle in glibc.
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
    integer, parameter :: MAXN = 300, MAXP = 16
    integer :: ierr, rank, nprocs, nfail, total, expected, c, i, pass, info, nc
    integer :: counts(2), sbuf(MAXN), rbuf(MAXN * MAXP + 1), req, reqs(2), other
    double precision :: dsend(MAXN), drecv(MAXN)
    character(len=16) :: arg
    logical :: routed

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
    call get_command_argument(1, arg)
    routed = arg == 'routed'
    nfail = 0
    expected = 0
    counts = (/1, MAXN/)
    call MPI_Info_create(info, ierr)
    call MPI_Info_set(info, 'mpitopo_coll', 'allgather=ring:rmh', ierr)
    call MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, other, ierr)
    call MPI_Info_free(info, ierr)

    do pass = 1, 2
        c = MPI_COMM_WORLD
        if (pass == 2) c = other
        do i = 1, 2
            nc = counts(i)
            call allgathers(c, nc)
            call bcasts(c, nc)
            call gathers(c, nc)
            call allreduces(c, nc)
        end do
    end do
    call MPI_Comm_free(other, ierr)

    ! allreduce=mpi: MPI's own, not counted.
    call MPI_Info_create(info, ierr)
    call MPI_Info_set(info, 'mpitopo_coll', 'allreduce=mpi', ierr)
    call MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, other, ierr)
    call MPI_Info_free(info, ierr)
    sbuf(1) = rank + 1
    call MPI_Allreduce(sbuf, rbuf, 1, MPI_INTEGER, MPI_SUM, other, ierr)
    if (rbuf(1) /= nprocs * (nprocs + 1) / 2) call bad('allreduce=mpi', rbuf(1), &
                                                       nprocs * (nprocs + 1) / 2)
    call MPI_Comm_free(other, ierr)

    if (.not. routed) expected = 0
    if (shim_coll_calls() /= expected) then
        write (*, '(A,I0,A,I0,A,I0)') 'FAIL shim_coll_fortran: rank ', rank, &
            ': the shim routed ', shim_coll_calls(), ' calls, expected ', expected
        nfail = nfail + 1
    end if
    call MPI_Reduce(nfail, total, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
    if (rank == 0 .and. total == 0) write (*, '(A,A,A,I0,A)') 'PASS shim_coll_fortran ', &
        trim(arg), ' (', expected, ' calls)'
    if (rank == 0 .and. total /= 0) write (*, '(A,I0,A)') 'FAIL shim_coll_fortran: ', &
        total, ' failures'
    call MPI_Finalize(ierr)
    if (rank == 0 .and. total /= 0) stop 1

contains

    ! The shim's counter, 0 when the shim is not loaded.
    integer function shim_coll_calls()
        procedure(counter_t), pointer :: f
        type(c_ptr) :: p
        p = dlsym(c_null_ptr, 'mpitopo_shim_coll_calls' // c_null_char)
        shim_coll_calls = 0
        if (.not. c_associated(p)) return
        call c_f_procpointer(transfer(p, c_null_funptr), f)
        shim_coll_calls = int(f())
    end function

    integer function val(r, k)
        integer, intent(in) :: r, k
        val = r * 10007 + k * 13 + pass
    end function

    subroutine bad(what, got, want)
        character(len=*), intent(in) :: what
        integer, intent(in) :: got, want
        nfail = nfail + 1
        if (nfail <= 10) write (*, '(A,I0,A,A,A,I0,A,I0,A,I0)') 'FAIL shim_coll_fortran: rank ', &
            rank, ', ', what, ', count ', nc, ': got ', got, ', expected ', want
    end subroutine

    subroutine check_blocks(what, cnt)
        character(len=*), intent(in) :: what
        integer, intent(in) :: cnt
        integer :: r, k
        do r = 0, nprocs - 1
            do k = 0, cnt - 1
                if (rbuf(r * cnt + k + 1) /= val(r, k)) then
                    call bad(what, rbuf(r * cnt + k + 1), val(r, k))
                    return
                end if
            end do
        end do
    end subroutine

    subroutine fill(cnt)
        integer, intent(in) :: cnt
        integer :: k
        do k = 0, cnt - 1
            sbuf(k + 1) = val(rank, k)
        end do
        rbuf = -1
    end subroutine

    subroutine allgathers(comm, cnt)
        integer, intent(in) :: comm, cnt
        integer :: k
        call fill(cnt)
        call MPI_Allgather(sbuf, cnt, MPI_INTEGER, rbuf, cnt, MPI_INTEGER, comm, ierr)
        call check_blocks('MPI_ALLGATHER', cnt)
        call fill(cnt)
        do k = 0, cnt - 1
            rbuf(rank * cnt + k + 1) = val(rank, k)
        end do
        call MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, cnt, MPI_INTEGER, comm, ierr)
        call check_blocks('MPI_ALLGATHER in place', cnt)
        call fill(cnt)
        call MPI_Iallgather(sbuf, cnt, MPI_INTEGER, rbuf, cnt, MPI_INTEGER, comm, req, ierr)
        call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
        call check_blocks('MPI_IALLGATHER', cnt)
        expected = expected + 3
    end subroutine

    subroutine bcasts(comm, cnt)
        integer, intent(in) :: comm, cnt
        integer :: k, root
        logical :: flag
        do root = 0, nprocs - 1, max(1, nprocs - 1)
            rbuf = -1
            if (rank == root) then
                do k = 0, cnt - 1
                    rbuf(k + 1) = val(root, k)
                end do
            end if
            if (root == 0) then
                call MPI_Bcast(rbuf, cnt, MPI_INTEGER, root, comm, ierr)
            else
                call MPI_Ibcast(rbuf, cnt, MPI_INTEGER, root, comm, req, ierr)
                flag = .false.
                do while (.not. flag)
                    call MPI_Test(req, flag, MPI_STATUS_IGNORE, ierr)
                end do
            end if
            do k = 0, cnt - 1
                if (rbuf(k + 1) /= val(root, k)) then
                    call bad('MPI_BCAST', rbuf(k + 1), val(root, k))
                    exit
                end if
            end do
            if (rbuf(cnt + 1) /= -1) call bad('MPI_BCAST past the end', rbuf(cnt + 1), -1)
            expected = expected + 1
        end do
    end subroutine

    subroutine gathers(comm, cnt)
        integer, intent(in) :: comm, cnt
        integer :: k, root
        root = nprocs - 1
        call fill(cnt)
        call MPI_Gather(sbuf, cnt, MPI_INTEGER, rbuf, cnt, MPI_INTEGER, 0, comm, ierr)
        if (rank == 0) call check_blocks('MPI_GATHER', cnt)
        if (rank /= 0 .and. rbuf(1) /= -1) call bad('MPI_GATHER at a non-root', rbuf(1), -1)
        call fill(cnt)
        if (rank == root) then
            do k = 0, cnt - 1
                rbuf(rank * cnt + k + 1) = val(rank, k)
            end do
            call MPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, cnt, MPI_INTEGER, root, &
                            comm, ierr)
            call check_blocks('MPI_GATHER in place', cnt)
        else
            call MPI_Gather(sbuf, cnt, MPI_INTEGER, rbuf, 0, MPI_DATATYPE_NULL, root, comm, ierr)
        end if
        call fill(cnt)
        call MPI_Igather(sbuf, cnt, MPI_INTEGER, rbuf, cnt, MPI_INTEGER, root, comm, req, ierr)
        reqs(1) = req
        reqs(2) = MPI_REQUEST_NULL
        call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
        if (rank == root) call check_blocks('MPI_IGATHER', cnt)
        expected = expected + 3
    end subroutine

    subroutine allreduces(comm, cnt)
        integer, intent(in) :: comm, cnt
        integer :: k, want
        call fill(cnt)
        call MPI_Allreduce(sbuf, rbuf, cnt, MPI_INTEGER, MPI_SUM, comm, ierr)
        do k = 0, cnt - 1
            want = 10007 * nprocs * (nprocs - 1) / 2 + nprocs * (k * 13 + pass)
            if (rbuf(k + 1) /= want) then
                call bad('MPI_ALLREDUCE MPI_SUM', rbuf(k + 1), want)
                exit
            end if
        end do
        call fill(cnt)
        rbuf(1:cnt) = sbuf(1:cnt)
        call MPI_Allreduce(MPI_IN_PLACE, rbuf, cnt, MPI_INTEGER, MPI_MAX, comm, ierr)
        do k = 0, cnt - 1
            if (rbuf(k + 1) /= val(nprocs - 1, k)) then
                call bad('MPI_ALLREDUCE in place MPI_MAX', rbuf(k + 1), val(nprocs - 1, k))
                exit
            end if
        end do
        do k = 0, cnt - 1
            dsend(k + 1) = 0.5d0 * val(rank, k)
        end do
        call MPI_Iallreduce(dsend, drecv, cnt, MPI_DOUBLE_PRECISION, MPI_SUM, comm, req, ierr)
        call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
        do k = 0, cnt - 1
            want = 10007 * nprocs * (nprocs - 1) / 2 + nprocs * (k * 13 + pass)
            if (drecv(k + 1) /= 0.5d0 * want) then
                call bad('MPI_IALLREDUCE DOUBLE PRECISION', int(2 * drecv(k + 1)), want)
                exit
            end if
        end do
        expected = expected + 3
    end subroutine
end program
