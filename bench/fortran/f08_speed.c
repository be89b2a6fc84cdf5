/* The loops of f08_speed.f90 in C: the reference for the mpi_f08 binding's
 * cost (docs/fortran.md, "Speed"). Two ranks.
 *   f08_speed_c SIZE ITERS */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

static double *a, *b;
static int n;

static void round_trip(int rank)
{
    if (rank == 0) {
        MPI_Send(a, n, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(b, n, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(b, n, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(a, n, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv)
{
    int rank, bytes = argc > 1 ? atoi(argv[1]) : 8, iters = argc > 2 ? atoi(argv[2]) : 1000;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    n = bytes / 8 > 1 ? bytes / 8 : 1;
    a = malloc(n * sizeof *a);
    b = calloc(n, sizeof *b);
    for (int i = 0; i < n; i++)
        a[i] = 1.0;
    for (int i = 0; i < 2; i++) {
        round_trip(rank);
        MPI_Allreduce(a, b, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        round_trip(rank);
    double t_pp = (MPI_Wtime() - t0) / iters;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        MPI_Allreduce(a, b, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double t_ar = (MPI_Wtime() - t0) / iters;
    if (rank == 0) {
        printf("pingpong %d %12.3f\n", bytes, t_pp * 1e6);
        printf("allreduce %d %12.3f\n", bytes, t_ar * 1e6);
    }
    free(a);
    free(b);
    MPI_Finalize();
    return 0;
}
