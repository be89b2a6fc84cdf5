! mpif.h through mpif77 and pkg-config mpi-fort (test/cmake/check.sh)
      program hello_f77
      implicit none
      include 'mpif.h'
      integer rank, nprocs, total, ierr
      call MPI_INIT(ierr)
      call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
      call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
      call MPI_ALLREDUCE(rank, total, 1, MPI_INTEGER, MPI_SUM,
     &     MPI_COMM_WORLD, ierr)
      if (rank .eq. 0) then
         if (total .eq. nprocs * (nprocs - 1) / 2) then
            print '(A)', ' No Errors'
         else
            print '(A,I0)', ' Found 1 errors: sum ', total
         end if
      end if
      call MPI_FINALIZE(ierr)
      end
