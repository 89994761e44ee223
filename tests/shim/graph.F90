! A plain MPI program, unaware of mpitopo: the Fortran twin of graph_c.c
! (same rings, same output, read by check_graph) for the kinds adjacent
! (weighted), adjacent_unweighted (MPI_UNWEIGHTED), dist (weighted, odd
! ranks give no edge and MPI_WEIGHTS_EMPTY) and graph, plus MPI_Graph_map.
! Built three times: with -DBINDING_F08 (use mpi_f08), -DBINDING_USEMPI
! (use mpi), or neither (include 'mpif.h').
!   shim_graph_f* [REORDER]
#if defined(BINDING_F08)
#define COMM_T type(MPI_Comm)
#define GROUP_T type(MPI_Group)
#else
#define COMM_T integer
#define GROUP_T integer
#endif
program shim_graph
#if defined(BINDING_F08)
    use mpi_f08
#elif defined(BINDING_USEMPI)
    use mpi
#endif
    implicit none
#if !defined(BINDING_F08) && !defined(BINDING_USEMPI)
    include 'mpif.h'
#endif
    integer, parameter :: RING = 4, MAXD = 4, NKINDS = 4
    ! The record of one process, as in graph_c.c (1-based here).
    integer, parameter :: F_W = 1, F_NEW = 2, F_NIN = 3, F_NOUT = 4, F_WEIGHTED = 5, F_IN = 6
    integer, parameter :: F_INW = F_IN + MAXD, F_OUT = F_INW + MAXD, F_OUTW = F_OUT + MAXD
    integer, parameter :: F_GOT = F_OUTW + MAXD, NREC = F_GOT + MAXD - 1
    character(len=24), parameter :: kinds(NKINDS) = [character(len=24) :: 'adjacent', &
                                                     'adjacent_unweighted', 'dist', 'graph']
    COMM_T :: g
    integer :: ierr, w, wsize, k, v, p, mapped(1), nfail, total
    integer :: rec(NREC)
    integer, allocatable :: all(:, :, :), idx(:), edges(:), map_of_world(:)
    logical :: reorder
    character(len=16) :: arg

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, w, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, wsize, ierr)
    reorder = .true.
    if (command_argument_count() >= 1) then
        call get_command_argument(1, arg)
        reorder = arg /= '0'
    end if
    if (mod(wsize, RING) /= 0) then
        if (w == 0) write (*, '(A)') 'FAIL graph_fortran: size not a multiple of 4'
        call MPI_Finalize(ierr)
        stop 1
    end if
    allocate (all(NREC, wsize, NKINDS), idx(wsize), edges(2 * wsize), map_of_world(wsize))
    do v = 0, wsize - 1
        idx(v + 1) = 2 * (v + 1)
        edges(2 * v + 1) = next_of(v)
        edges(2 * v + 2) = prev_of(v)
    end do

    nfail = 0
    do k = 1, NKINDS
        call create(k, g)
        call record(g, rec)
        call MPI_Gather(rec, NREC, MPI_INTEGER, all(1, 1, k), NREC, MPI_INTEGER, 0, &
                        MPI_COMM_WORLD, ierr)
        if (g /= MPI_COMM_NULL) call MPI_Comm_free(g, ierr)
    end do
    ! mapped is an array, as rec is: mpif.h has no interfaces to reconcile the two.
    call MPI_Graph_map(MPI_COMM_WORLD, wsize, idx, edges, mapped(1), ierr)
    call MPI_Gather(mapped, 1, MPI_INTEGER, map_of_world, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    call MPI_Allreduce(nfail, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)

    if (w == 0) then
        write (*, '(A)', advance='no') 'kinds'
        do k = 1, NKINDS
            write (*, '(1X,A)', advance='no') trim(kinds(k))
        end do
        write (*, '(A)') ''
        do k = 1, NKINDS
            do p = 1, wsize
                call print_rec(trim(kinds(k)), all(:, p, k))
            end do
        end do
        write (*, '(A,*(1X,I0))') 'graph_map', map_of_world
        if (total == 0) then
            write (*, '(A)') 'valid'
        else
            write (*, '(A,I0,A)') 'FAIL graph_fortran: ', total, ' failed checks'
        end if
    end if
    deallocate (all, idx, edges, map_of_world)
    call MPI_Finalize(ierr)
    if (total /= 0) stop 1

contains

    integer function next_of(x)
        integer, intent(in) :: x
        next_of = x - mod(x, RING) + mod(mod(x, RING) + 1, RING)
    end function

    integer function prev_of(x)
        integer, intent(in) :: x
        prev_of = x - mod(x, RING) + mod(mod(x, RING) + RING - 1, RING)
    end function

    ! The communicator of kind k, as graph_c.c builds it.
    subroutine create(k, g)
        integer, intent(in) :: k
        COMM_T, intent(out) :: g
        integer :: src(2), dst(2), wts(2), dsrc(2), deg(2), ddst(4), dwts(4)
        src = [prev_of(w), next_of(w)]
        dst = [next_of(w), prev_of(w)]
        wts = [100, 10]
        g = MPI_COMM_NULL
        select case (k)
        case (1)
            call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, wts, 2, dst, wts, &
                                                MPI_INFO_NULL, reorder, g, ierr)
        case (2)
            call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, MPI_UNWEIGHTED, 2, dst, &
                                                MPI_UNWEIGHTED, MPI_INFO_NULL, reorder, g, ierr)
        case (3)
            dsrc = [w, w + 1]
            deg = [2, 2]
            ddst = [next_of(w), prev_of(w), next_of(w + 1), prev_of(w + 1)]
            dwts = [100, 10, 100, 10]
            if (mod(w, 2) == 0) then
                call MPI_Dist_graph_create(MPI_COMM_WORLD, 2, dsrc, deg, ddst, dwts, &
                                           MPI_INFO_NULL, reorder, g, ierr)
            else
                call MPI_Dist_graph_create(MPI_COMM_WORLD, 0, dsrc, deg, ddst, &
                                           MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, reorder, g, ierr)
            end if
        case default
            call MPI_Graph_create(MPI_COMM_WORLD, wsize, idx, edges, reorder, g, ierr)
        end select
        if (g == MPI_COMM_NULL) nfail = nfail + 1
    end subroutine

    ! Neighbours in world ranks, weights, and what the neighbour allgather
    ! of world ranks delivered.
    subroutine record(g, r)
        COMM_T, intent(in) :: g
        integer, intent(out) :: r(NREC)
        GROUP_T :: gg, wg
        integer :: topo, nin, nout, inl(MAXD), outl(MAXD), inw(MAXD), outw(MAXD), got(MAXD)
        logical :: weighted
        r = 0
        r(F_W) = w
        r(F_NEW) = -1
        if (g == MPI_COMM_NULL) return
        call MPI_Comm_rank(g, r(F_NEW), ierr)
        call MPI_Topo_test(g, topo, ierr)
        inw = 0
        outw = 0
        weighted = .false.
        if (topo == MPI_GRAPH) then
            call MPI_Graph_neighbors_count(g, r(F_NEW), nin, ierr)
            nout = nin
            if (nin > MAXD) then
                nfail = nfail + 1
                return
            end if
            call MPI_Graph_neighbors(g, r(F_NEW), MAXD, inl, ierr)
            outl = inl
        else if (topo == MPI_DIST_GRAPH) then
            call MPI_Dist_graph_neighbors_count(g, nin, nout, weighted, ierr)
            if (nin > MAXD .or. nout > MAXD) then
                nfail = nfail + 1
                return
            end if
            if (weighted) then
                call MPI_Dist_graph_neighbors(g, MAXD, inl, inw, MAXD, outl, outw, ierr)
            else
                call MPI_Dist_graph_neighbors(g, MAXD, inl, MPI_UNWEIGHTED, MAXD, outl, &
                                              MPI_UNWEIGHTED, ierr)
            end if
        else
            nfail = nfail + 1
            return
        end if
        r(F_NIN) = nin
        r(F_NOUT) = nout
        if (weighted) r(F_WEIGHTED) = 1
        r(F_INW:F_INW + MAXD - 1) = inw
        r(F_OUTW:F_OUTW + MAXD - 1) = outw
        call MPI_Comm_group(g, gg, ierr)
        call MPI_Comm_group(MPI_COMM_WORLD, wg, ierr)
        call MPI_Group_translate_ranks(gg, nin, inl, wg, got, ierr)
        r(F_IN:F_IN + MAXD - 1) = got
        call MPI_Group_translate_ranks(gg, nout, outl, wg, got, ierr)
        r(F_OUT:F_OUT + MAXD - 1) = got
        call MPI_Group_free(gg, ierr)
        call MPI_Group_free(wg, ierr)
        got = -1
        call MPI_Neighbor_allgather(w, 1, MPI_INTEGER, got, 1, MPI_INTEGER, g, ierr)
        r(F_GOT:F_GOT + MAXD - 1) = got
    end subroutine

    subroutine print_list(key, v, n)
        character(len=*), intent(in) :: key
        integer, intent(in) :: v(:), n
        integer :: i
        write (*, '(1X,A,1X,I0)', advance='no') key, n
        do i = 1, n
            write (*, '(1X,I0)', advance='no') v(i)
        end do
    end subroutine

    subroutine print_rec(kind, r)
        character(len=*), intent(in) :: kind
        integer, intent(in) :: r(NREC)
        integer :: nw
        nw = r(F_WEIGHTED)
        write (*, '(A,1X,A,2(1X,I0))', advance='no') 'proc', kind, r(F_W), r(F_NEW)
        call print_list('in', r(F_IN:), r(F_NIN))
        call print_list('inw', r(F_INW:), nw * r(F_NIN))
        call print_list('out', r(F_OUT:), r(F_NOUT))
        call print_list('outw', r(F_OUTW:), nw * r(F_NOUT))
        call print_list('got', r(F_GOT:), r(F_NIN))
        write (*, '(A)') ''
    end subroutine

end program shim_graph
