/* A minimal MPI program built three ways by check.sh (CMake, mpicc, pkg-config). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size, expect = argc > 1 ? atoi(argv[1]) : 0, errs = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (expect > 0 && size != expect) {
        fprintf(stderr, "rank %d: size %d, expected %d\n", rank, size, expect);
        errs++;
    }
    if (size > 1 && rank == 1) {
        int v = 42;
        MPI_Send(&v, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    } else if (size > 1 && rank == 0) {
        int v = 0;
        MPI_Recv(&v, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (v != 42) {
            fprintf(stderr, "rank 0: received %d, expected 42\n", v);
            errs++;
        }
    }
    if (rank == 0 && errs == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return errs != 0;
}
