! The cost of the mpi_f08 binding: a ping-pong and an allreduce of SIZE bytes,
! the same loops as f08_speed.c (docs/fortran.md, "Speed"). Two ranks.
!   f08_speed SIZE ITERS   prints "pingpong SIZE us_per_round_trip" and
!                          "allreduce SIZE us_per_call"
program f08_speed
  use mpi_f08
  implicit none
  integer :: rank, n, iters, i, bytes
  character(len=32) :: arg
  real(8), allocatable :: a(:), b(:)
  real(8) :: t0, t_pp, t_ar
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call get_command_argument(1, arg)
  read (arg, *) bytes
  call get_command_argument(2, arg)
  read (arg, *) iters
  n = max(bytes / 8, 1)
  allocate(a(n), b(n))
  a = 1.0d0
  b = 0.0d0
  do i = 1, 2                        ! warm-up: connections, first-touch
    call round(rank)
    call MPI_Allreduce(a, b, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  end do
  call MPI_Barrier(MPI_COMM_WORLD)
  t0 = MPI_Wtime()
  do i = 1, iters
    call round(rank)
  end do
  t_pp = (MPI_Wtime() - t0) / iters
  call MPI_Barrier(MPI_COMM_WORLD)
  t0 = MPI_Wtime()
  do i = 1, iters
    call MPI_Allreduce(a, b, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  end do
  t_ar = (MPI_Wtime() - t0) / iters
  if (rank == 0) then
    print '(A,I0,1X,F12.3)', 'pingpong ', bytes, t_pp * 1d6
    print '(A,I0,1X,F12.3)', 'allreduce ', bytes, t_ar * 1d6
  end if
  call MPI_Finalize()
contains
  subroutine round(r)
    integer, intent(in) :: r
    if (r == 0) then
      call MPI_Send(a, n, MPI_DOUBLE_PRECISION, 1, 0, MPI_COMM_WORLD)
      call MPI_Recv(b, n, MPI_DOUBLE_PRECISION, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    else
      call MPI_Recv(b, n, MPI_DOUBLE_PRECISION, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
      call MPI_Send(a, n, MPI_DOUBLE_PRECISION, 0, 0, MPI_COMM_WORLD)
    end if
  end subroutine
end program
