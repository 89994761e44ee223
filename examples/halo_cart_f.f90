! halo_cart_f: the Fortran twin of halo_cart.c, written as a plain MPI
! program that knows nothing of mpitopo: a Jacobi-style halo exchange on a
! periodic 2-D grid of processes made by MPI_CART_CREATE with
! reorder = .true.
!
!   mpirun -n 8 ./halo_cart_f
!
! Every MPI accepts reorder = .true. and ignores it. Linked with mpitopo's
! shim before the MPI libraries (-lmpitopo_shim, as CMakeLists.txt and the
! Makefile do), or run with the shim preloaded,
!   mpirun -x LD_PRELOAD=<prefix>/lib/libmpitopo_shim.so -n 8 ./program
!   mpiexec -genv LD_PRELOAD <prefix>/lib/libmpitopo_shim.so -n 8 ./program
! with MPITOPO_REORDER=job (the program uses the new ranks, as MPI-4.1
! section 8.5.4 requires after a reorder; without it the shim keeps MPI's
! ranks), the same MPI_CART_CREATE returns a grid whose neighbours share a
! node.
! Nothing in the source changes: the shim defines MPI_CART_CREATE (and the
! C MPI_Cart_create) and hands the call to mpitopo_cart_create. This
! program uses the mpi_f08 module; `use mpi` and `include 'mpif.h'` get
! the same from the shim.
!
! As with any reordering, the program takes its rank and coordinates from
! the new communicator and loads its data by them (below: the initial
! field is a function of the global cell, computed after the call).
!
! Checks (exit status 1 on failure): after one exchange every ghost cell
! holds the value of the global cell it mirrors; the sweeps conserve the
! sum of the field. Prints "halo_cart_f: PASS" on rank 0 when both hold,
! and how many processes got a new rank (0 without the shim or without
! MPITOPO_REORDER=job, or when the launch order is already the best). On
! one machine, emulate a cluster:
!   MPITOPO_EMULATE="node:2 core:4" MPITOPO_EMULATE_PLACEMENT=rr MPITOPO_REORDER=job \
!       mpirun -n 8 ./halo_cart_f
program halo_cart_f
    use mpi_f08
    implicit none
    integer, parameter :: n = 16, iterations = 20
    type(MPI_Comm) :: cart
    type(MPI_Datatype) :: xface
    integer :: ierr, wrank, nprocs, rank, moved, nmoved, nbad, allbad
    integer :: dims(2), coords(2), it, i, j
    logical :: periods(2), ok
    double precision, allocatable :: u(:, :), tmp(:, :)
    double precision :: total0, total, mine

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, wrank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)

    ! The grid, exactly as an unmodified program writes it.
    dims = 0
    periods = .true.
    call MPI_Dims_create(nprocs, 2, dims, ierr)
    call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .true., cart, ierr)

    ! From here on, rank and coordinates come from the new communicator.
    call MPI_Comm_rank(cart, rank, ierr)
    call MPI_Cart_coords(cart, rank, 2, coords, ierr)
    moved = merge(1, 0, rank /= wrank)
    call MPI_Allreduce(moved, nmoved, 1, MPI_INTEGER, MPI_SUM, cart, ierr)

    ! u(1:n, 1:n) is my block, u(0, :), u(n+1, :), u(:, 0), u(:, n+1) the
    ! ghosts. Dimension 1 of the grid runs along the first index. A face
    ! u(i, 1:n) is strided in memory: one vector datatype describes it.
    allocate (u(0:n + 1, 0:n + 1), tmp(0:n + 1, 0:n + 1))
    u = 0
    call MPI_Type_vector(n, 1, n + 2, MPI_DOUBLE_PRECISION, xface, ierr)
    call MPI_Type_commit(xface, ierr)
    do j = 1, n
        do i = 1, n
            u(i, j) = initial(i, j)
        end do
    end do

    ! Check 1: one exchange fills every ghost face exactly.
    call exchange()
    nbad = 0
    do i = 1, n
        if (u(i, 0) /= initial(i, 0)) nbad = nbad + 1
        if (u(i, n + 1) /= initial(i, n + 1)) nbad = nbad + 1
        if (u(0, i) /= initial(0, i)) nbad = nbad + 1
        if (u(n + 1, i) /= initial(n + 1, i)) nbad = nbad + 1
    end do
    call MPI_Allreduce(nbad, allbad, 1, MPI_INTEGER, MPI_SUM, cart, ierr)

    ! Check 2: Jacobi sweeps on a periodic grid keep the sum of the field.
    mine = sum(u(1:n, 1:n))
    call MPI_Allreduce(mine, total0, 1, MPI_DOUBLE_PRECISION, MPI_SUM, cart, ierr)
    do it = 1, iterations
        call exchange()
        tmp(1:n, 1:n) = (u(0:n - 1, 1:n) + u(2:n + 1, 1:n) + u(1:n, 0:n - 1) + u(1:n, 2:n + 1)) / 4
        u(1:n, 1:n) = tmp(1:n, 1:n)
    end do
    mine = sum(u(1:n, 1:n))
    call MPI_Allreduce(mine, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, cart, ierr)
    ok = allbad == 0 .and. abs(total - total0) <= 1d-9 * abs(total0)

    if (rank == 0) then
        print '(a, i0, a, i0, a, i0, a, i0)', 'halo_cart_f: grid ', dims(1), 'x', dims(2), &
            '; processes that changed rank: ', nmoved, ' of ', nprocs
        print '(a, i0, a, es14.6, a, es14.6)', 'halo_cart_f: wrong ghost cells ', allbad, &
            '; sum ', total0, ' -> ', total
        if (ok) then
            print '(a)', 'halo_cart_f: PASS'
        else
            print '(a)', 'halo_cart_f: FAIL'
        end if
    end if
    call MPI_Type_free(xface, ierr)
    call MPI_Comm_free(cart, ierr)
    call MPI_Finalize(ierr)
    if (.not. ok) stop 1

contains

    ! The initial value of local cell (i, j): the row-major index of the
    ! global cell it stands for (ghosts wrap around the periodic grid).
    double precision function initial(i, j)
        integer, intent(in) :: i, j
        integer :: gx, gy
        gx = modulo(coords(1) * n + i - 1, dims(1) * n)
        gy = modulo(coords(2) * n + j - 1, dims(2) * n)
        initial = dble(gx) * dims(2) * n + gy
    end function initial

    ! One halo exchange: in each dimension, my high face goes up while the
    ! lower neighbour's arrives in my low ghosts, then the other way round.
    ! MPI_Sendrecv pairs them, so no ordering can deadlock, and a dimension
    ! of size 1 or 2 (both neighbours the same process) works too.
    subroutine exchange()
        integer :: lo, hi
        type(MPI_Status) :: status
        call MPI_Cart_shift(cart, 0, 1, lo, hi, ierr)
        call MPI_Sendrecv(u(n, 1), 1, xface, hi, 0, u(0, 1), 1, xface, lo, 0, cart, status, ierr)
        call MPI_Sendrecv(u(1, 1), 1, xface, lo, 1, u(n + 1, 1), 1, xface, hi, 1, cart, status, ierr)
        call MPI_Cart_shift(cart, 1, 1, lo, hi, ierr)
        call MPI_Sendrecv(u(1, n), n, MPI_DOUBLE_PRECISION, hi, 2, u(1, 0), n, MPI_DOUBLE_PRECISION, &
                          lo, 2, cart, status, ierr)
        call MPI_Sendrecv(u(1, 1), n, MPI_DOUBLE_PRECISION, lo, 3, u(1, n + 1), n, MPI_DOUBLE_PRECISION, &
                          hi, 3, cart, status, ierr)
    end subroutine exchange

end program halo_cart_f
