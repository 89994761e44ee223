! A plain MPI program, unaware of mpitopo: the Fortran twin of cart_c.c
! (same arguments, same output, read by check_cart), built three times:
! with -DBINDING_F08 (use mpi_f08), -DBINDING_USEMPI (use mpi), or neither
! (include 'mpif.h').
program shim_cart
#if defined(BINDING_F08)
    use mpi_f08
#elif defined(BINDING_USEMPI)
    use mpi
#endif
    implicit none
#if !defined(BINDING_F08) && !defined(BINDING_USEMPI)
    include 'mpif.h'
#endif
#if defined(BINDING_F08)
    type(MPI_Comm) :: cart
#else
    integer :: cart
#endif
    integer :: ierr, wrank, wsize, crank, newrank, topo, r, d, src, dst, got, me, first
    integer :: dims(2), coords(2), c(2), back, nfail
    logical :: periods(2), reorder
    integer, allocatable :: cart_of_world(:), map_of_world(:), world_of_cart(:)
    character(len=16) :: arg

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, wrank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, wsize, ierr)
    dims = 0
    reorder = .true.
    periods = .true.
    if (command_argument_count() >= 2) then
        call get_command_argument(1, arg)
        read (arg, *) dims(1)
        call get_command_argument(2, arg)
        read (arg, *) dims(2)
    end if
    if (command_argument_count() >= 3) then
        call get_command_argument(3, arg)
        reorder = arg /= '0'
    end if
    if (dims(1) == 0) call MPI_Dims_create(wsize, 2, dims, ierr)

    cart = MPI_COMM_NULL
    call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, reorder, cart, ierr)
    crank = -1
    if (cart /= MPI_COMM_NULL) call MPI_Comm_rank(cart, crank, ierr)
    call MPI_Cart_map(MPI_COMM_WORLD, 2, dims, periods, newrank, ierr)

    allocate (cart_of_world(0:wsize - 1), map_of_world(0:wsize - 1), world_of_cart(0:wsize - 1))
    call MPI_Allgather(crank, 1, MPI_INTEGER, cart_of_world, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    call MPI_Allgather(newrank, 1, MPI_INTEGER, map_of_world, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    world_of_cart = -1
    do r = 0, wsize - 1
        if (cart_of_world(r) >= 0 .and. cart_of_world(r) < wsize) world_of_cart(cart_of_world(r)) = r
    end do

    nfail = 0
    if (cart == MPI_COMM_NULL) then
        nfail = 1
    else
        call MPI_Topo_test(cart, topo, ierr)
        if (topo /= MPI_CART) nfail = nfail + 1
        do r = 0, dims(1) * dims(2) - 1
            call MPI_Cart_coords(cart, r, 2, c, ierr)
            call MPI_Cart_rank(cart, c, back, ierr)
            if (back /= r) nfail = nfail + 1
        end do
        call MPI_Cart_coords(cart, crank, 2, coords, ierr)
        do d = 0, 1
            call MPI_Cart_shift(cart, d, 1, src, dst, ierr)
            c = coords
            c(d + 1) = modulo(coords(d + 1) + 1, dims(d + 1))
            call MPI_Cart_rank(cart, c, back, ierr)
            if (back /= dst) nfail = nfail + 1
            me = wrank
            call MPI_Sendrecv(me, 1, MPI_INTEGER, dst, d, got, 1, MPI_INTEGER, src, d, cart, &
                              MPI_STATUS_IGNORE, ierr)
            if (got /= world_of_cart(src)) nfail = nfail + 1
        end do
    end if
    call MPI_Allreduce(nfail, first, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)

    if (wrank == 0) then
        write (*, '(A,2(1X,I0))') 'dims', dims
        write (*, '(A,*(1X,I0))') 'world_of_cart', world_of_cart
        write (*, '(A,*(1X,I0))') 'cart_map', map_of_world
        if (first == 0) then
            write (*, '(A)') 'valid'
        else
            write (*, '(A,I0,A)') 'FAIL cart_fortran: ', first, ' failed checks of the communicator'
        end if
    end if
    if (cart /= MPI_COMM_NULL) call MPI_Comm_free(cart, ierr)
    call MPI_Finalize(ierr)
    if (first /= 0) stop 1
end program shim_cart
