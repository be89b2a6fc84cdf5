/* Startup cost of an empty job: MPI_Init time (slowest and fastest rank) and
 * rank 0's MPI_Finalize time, measured with a monotonic clock.  The driver
 * also times the whole launch from outside.  Printed after MPI_Finalize.
 * --first 1: also the first round trip of 1 byte between rank 0 and the last
 * rank right after MPI_Init (the first contact: connection set-up included),
 * and a second one (the pair connected), as first_ms and second_ms. */
#include "bench_common.h"

int main(int argc, char **argv)
{
    double t0 = bc_mono();
    MPI_Init(&argc, &argv);
    double init = bc_mono() - t0;
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    double first = -1, second = -1;
    if (bc_arg_long(argc, argv, "--first", 0) && nranks > 1 && (rank == 0 || rank == nranks - 1)) {
        char b = 0;
        int peer = rank == 0 ? nranks - 1 : 0;
        for (int k = 0; k < 2; k++) {
            double t = bc_mono();
            if (rank == 0) {
                MPI_Send(&b, 1, MPI_CHAR, peer, k, MPI_COMM_WORLD);
                MPI_Recv(&b, 1, MPI_CHAR, peer, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(&b, 1, MPI_CHAR, peer, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(&b, 1, MPI_CHAR, peer, k, MPI_COMM_WORLD);
            }
            *(k ? &second : &first) = bc_mono() - t;
        }
    }
    double imax = 0, imin = 0;
    MPI_Reduce(&init, &imax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&init, &imin, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    double t1 = bc_mono();
    MPI_Finalize();
    double fin = bc_mono() - t1;
    if (rank == 0) {
        printf("{\"bench\":\"startup\",\"ranks\":%d,\"init_ms_max\":%.6g,\"init_ms_min\":%.6g,"
               "\"finalize_ms\":%.6g",
               nranks, imax * 1e3, imin * 1e3, fin * 1e3);
        if (first >= 0)
            printf(",\"first_ms\":%.6g,\"second_ms\":%.6g", first * 1e3, second * 1e3);
        printf("}\n");
        fflush(stdout);
    }
    return 0;
}
