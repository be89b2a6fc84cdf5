/* Startup cost of an empty job: MPI_Init time (slowest and fastest rank) and
 * rank 0's MPI_Finalize time, measured with a monotonic clock.  The driver
 * also times the whole launch from outside.  Printed after MPI_Finalize. */
#include "bench_common.h"

int main(int argc, char **argv)
{
    double t0 = bc_mono();
    MPI_Init(&argc, &argv);
    double init = bc_mono() - t0;
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    double imax = 0, imin = 0;
    MPI_Reduce(&init, &imax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&init, &imin, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    double t1 = bc_mono();
    MPI_Finalize();
    double fin = bc_mono() - t1;
    if (rank == 0) {
        printf("{\"bench\":\"startup\",\"ranks\":%d,\"init_ms_max\":%.6g,\"init_ms_min\":%.6g,"
               "\"finalize_ms\":%.6g}\n",
               nranks, imax * 1e3, imin * 1e3, fin * 1e3);
        fflush(stdout);
    }
    return 0;
}
