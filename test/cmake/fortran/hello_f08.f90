! find_package(MPI COMPONENTS Fortran), mpifort and pkg-config mpi-fort builds
! (test/cmake/check.sh): every rank adds its rank; rank 0 checks the sum.
program hello_f08
  use mpi_f08
  implicit none
  integer :: rank, nprocs, total
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  call MPI_Allreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) then
    if (total == nprocs * (nprocs - 1) / 2) then
      print '(A)', ' No Errors'
    else
      print '(A,I0)', ' Found 1 errors: sum ', total
    end if
  end if
  call MPI_Finalize()
end program
