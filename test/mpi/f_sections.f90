! Array sections as buffers of mpi_f08 (MPI_SUBARRAYS_SUPPORTED = .TRUE.):
! strided, reversed and 2-D sections in blocking and nonblocking point-to-point
! calls (a derived datatype picks the elements in place), a count smaller than
! the section, collectives on sections (a copy for the call), and the errors:
! a section too small for count, a section in a nonblocking collective.
! Runs on 2 ranks.
program f_sections
  use mpi_f08
  implicit none
  integer :: rank, nprocs, peer, errs, i, k, n, rc, cls
  integer :: a(20), b(20), m(6, 5), r(6, 5)
  real(8) :: x(10), y(10)
  type(MPI_Request) :: req(2)
  type(MPI_Status) :: st, sts(2)

  errs = 0
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  peer = ieor(rank, 1)

  ! strided to reversed-strided, blocking
  a = [(i + 100 * rank, i = 1, 20)]
  b = -1
  call MPI_Sendrecv(a(1:20:3), 7, MPI_INTEGER, peer, 1, b(20:2:-3), 7, MPI_INTEGER, peer, 1, &
                    MPI_COMM_WORLD, st)
  do k = 0, 6
    if (b(20 - 3 * k) /= 1 + 3 * k + 100 * peer) call fail('sendrecv element', k)
  end do
  if (count(b /= -1) /= 7) call fail('sendrecv wrote outside the section', count(b /= -1))
  call MPI_Get_count(st, MPI_INTEGER, n)
  if (n /= 7) call fail('get_count', n)

  ! 2-D sections, nonblocking; the receive takes 5 of its 12 elements: the
  ! first five in array order
  m = reshape([(i + 1000 * rank, i = 1, 30)], [6, 5])
  r = 0
  call MPI_Irecv(r(2:5, 1:5:2), 12, MPI_INTEGER, peer, 2, MPI_COMM_WORLD, req(1))
  call MPI_Isend(m(1:6:5, 2:5), 5, MPI_INTEGER, peer, 2, MPI_COMM_WORLD, req(2))
  call MPI_Waitall(2, req, sts)
  ! sent: m(1,2) m(6,2) m(1,3) m(6,3) m(1,4) of the peer
  call check2(r(2, 1), m0(1, 2)); call check2(r(3, 1), m0(6, 2)); call check2(r(4, 1), m0(1, 3))
  call check2(r(5, 1), m0(6, 3)); call check2(r(2, 3), m0(1, 4))
  if (count(r /= 0) /= 5) call fail('irecv wrote outside its elements', count(r /= 0))
  call MPI_Get_count(sts(1), MPI_INTEGER, n)
  if (n /= 5) call fail('irecv count', n)

  ! collectives on sections: the call works on a contiguous copy
  x = [(dble(i + rank), i = 1, 10)]
  y = 0
  call MPI_Allreduce(x(10:1:-2), y(1:5), 5, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  do k = 1, 5
    if (y(k) /= dble(2 * (12 - 2 * k)) + dble(nprocs * (nprocs - 1) / 2)) call fail('allreduce', k)
  end do
  call MPI_Allreduce(MPI_IN_PLACE, x(1:10:3), 4, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD)
  if (x(4) /= dble(4 + nprocs - 1) .or. x(2) /= dble(2 + rank)) call fail('allreduce in place', 0)
  a = rank
  if (rank == 0) a(2:20:2) = [(i, i = 1, 10)]
  call MPI_Bcast(a(2:20:2), 10, MPI_INTEGER, 0, MPI_COMM_WORLD)
  if (a(20) /= 10 .or. a(19) /= rank) call fail('bcast', a(20))

  ! bad input under MPI_ERRORS_RETURN
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
  call MPI_Send(a(1:10:2), 6, MPI_INTEGER, peer, 3, MPI_COMM_WORLD, rc)
  call MPI_Error_class(rc, cls)
  if (cls /= MPI_ERR_COUNT) call fail('count beyond the section: class', cls)
  call MPI_Iallreduce(x(1:10:2), y(1:5), 5, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, &
                      req(1), rc)
  call MPI_Error_class(rc, cls)
  if (cls /= MPI_ERR_BUFFER) call fail('section in a nonblocking collective: class', cls)

  call MPI_Allreduce(MPI_IN_PLACE, errs, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) then
    if (errs == 0) then
      print '(A)', ' No Errors'
    else
      print '(A,I0,A)', ' Found ', errs, ' errors'
    end if
  end if
  call MPI_Finalize()

contains

  integer function m0(i, j)
    integer, intent(in) :: i, j
    m0 = i + 6 * (j - 1) + 1000 * peer
  end function

  subroutine check2(got, want)
    integer, intent(in) :: got, want
    if (got /= want) call fail('2-D section element', got)
  end subroutine

  subroutine fail(what, v)
    character(len=*), intent(in) :: what
    integer, intent(in) :: v
    errs = errs + 1
    print '(A,I0,A,A,A,I0)', 'rank ', rank, ': ', what, ': ', v
  end subroutine
end program
