! A plain MPI program, unaware of mpitopo: the blocking neighbourhood
! collectives (allgather, allgatherv, alltoall, alltoallv, alltoallw) on a
! dist-graph where rank r sends to r+1, r+2, r+3 and receives from r-1,
! r-2, r-3 (mod p, p >= 4), and MPI_Ineighbor_alltoall + MPI_Wait, every
! received element checked on every rank. The shim's counter
! (mpitopo_shim_neighbor_calls, found with dlsym) must be 6 when the
! argument is "routed", 0 when "passed" (neighbor_req.F90 tests the
! nonblocking and persistent calls in depth). Built with -DBINDING_USEMPI (use mpi) or
! without (include 'mpif.h'). Prints "PASS shim_neighbor_fortran" on rank 0.
!   shim_neighbor_f* routed|passed
program shim_neighbor_fortran
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
    integer, parameter :: DEG = 3, N = 2
    integer :: ierr, rank, nprocs, g, i, nfail, total, expected, req
    integer :: src(DEG), dst(DEG), sbuf(N * DEG), rbuf(N * DEG)
    integer :: counts(DEG), displs(DEG), types(DEG)
    integer(kind=MPI_ADDRESS_KIND) :: bdispls(DEG)
    character(len=16) :: arg
    logical :: routed

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
    call get_command_argument(1, arg)
    routed = arg == 'routed'
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

    call fill(.true.)
    call MPI_Neighbor_alltoall(sbuf, N, MPI_INTEGER, rbuf, N, MPI_INTEGER, g, ierr)
    call check('alltoall', .true.)
    call fill(.false.)
    call MPI_Neighbor_allgather(sbuf, N, MPI_INTEGER, rbuf, N, MPI_INTEGER, g, ierr)
    call check('allgather', .false.)
    call fill(.false.)
    call MPI_Neighbor_allgatherv(sbuf, N, MPI_INTEGER, rbuf, counts, displs, MPI_INTEGER, g, ierr)
    call check('allgatherv', .false.)
    call fill(.true.)
    call MPI_Neighbor_alltoallv(sbuf, counts, displs, MPI_INTEGER, rbuf, counts, displs, &
                                MPI_INTEGER, g, ierr)
    call check('alltoallv', .true.)
    call fill(.true.)
    call MPI_Neighbor_alltoallw(sbuf, counts, bdispls, types, rbuf, counts, bdispls, types, &
                                g, ierr)
    call check('alltoallw', .true.)
    ! Nonblocking, completed by MPI_WAIT.
    call fill(.true.)
    call MPI_Ineighbor_alltoall(sbuf, N, MPI_INTEGER, rbuf, N, MPI_INTEGER, g, req, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call check('ialltoall', .true.)

    expected = 0
    if (routed) expected = 6
    if (shim_neighbor_calls() /= expected) then
        write (*, '(A,I0,A,I0,A,I0)') 'FAIL shim_neighbor_fortran: rank ', rank, &
            ': the shim routed ', shim_neighbor_calls(), ' calls, expected ', expected
        nfail = nfail + 1
    end if
    call MPI_Comm_free(g, ierr)
    call MPI_Allreduce(nfail, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (rank == 0 .and. total == 0) write (*, '(A,A)') 'PASS shim_neighbor_fortran ', trim(arg)
    call MPI_Finalize(ierr)
    if (total /= 0) stop 1

contains

    ! The shim's counter, 0 when the shim is not loaded.
    integer function shim_neighbor_calls()
        procedure(counter_t), pointer :: f
        type(c_ptr) :: p
        p = dlsym(c_null_ptr, 'mpitopo_shim_neighbor_calls' // c_null_char)
        shim_neighbor_calls = 0
        if (.not. c_associated(p)) return
        call c_f_procpointer(transfer(p, c_null_funptr), f)
        shim_neighbor_calls = int(f())
    end function

    integer function val(sender, block, e)
        integer, intent(in) :: sender, block, e
        val = sender * 1000 + block * 10 + e
    end function

    ! alltoall: block j (0-based) to destination j; else block 0 to all.
    subroutine fill(alltoall)
        logical, intent(in) :: alltoall
        integer :: j, k
        do j = 0, DEG - 1
            do k = 0, N - 1
                if (alltoall) then
                    sbuf(j * N + k + 1) = val(rank, j, k)
                else
                    sbuf(j * N + k + 1) = val(rank, 0, k)
                end if
            end do
        end do
        rbuf = -1
    end subroutine

    subroutine check(what, alltoall)
        character(len=*), intent(in) :: what
        logical, intent(in) :: alltoall
        integer :: j, k, want
        do j = 0, DEG - 1
            do k = 0, N - 1
                want = val(src(j + 1), 0, k)
                if (alltoall) want = val(src(j + 1), j, k)
                if (rbuf(j * N + k + 1) /= want) then
                    write (*, '(A,I0,A,A,A,I0,A,I0)') 'FAIL shim_neighbor_fortran: rank ', &
                        rank, ', ', what, ': got ', rbuf(j * N + k + 1), ' expected ', want
                    nfail = nfail + 1
                    return
                end if
            end do
        end do
    end subroutine
end program
