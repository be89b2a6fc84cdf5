/*
 * async_progress: with DCFA_ASYNC_PROGRESS=1 a nonblocking collective moves on
 * while the other ranks compute without calling MPI.
 *
 * Every rank starts an MPI_Iallreduce (several rounds at 4+ ranks); rank 0
 * then waits for it at once while the others compute for COMPUTE_S seconds
 * without any MPI call. Only an assist thread on the computing ranks can take
 * their part of the later rounds, so rank 0's wait must end long before the
 * computation does. Without the assist thread (the expect_fail line of the
 * test list) it cannot: the wait lasts about COMPUTE_S.
 */
#include "mtest.h"

#define COMPUTE_S 2.0
#define COUNT 64

static volatile double sink;

static void compute(double seconds)
{
    double t0 = MPI_Wtime(), x = 1.0;
    while (MPI_Wtime() - t0 < seconds)
        for (int i = 0; i < 1000; i++)
            x = x * 1.0000001 + 1e-9;
    sink = x;
}

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double in[COUNT], out[COUNT];
    for (int i = 0; i < COUNT; i++)
        in[i] = rank + i;
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Request req;
    MPI_Iallreduce(in, out, COUNT, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req);
    double waited = 0;
    if (rank == 0) {
        double t0 = MPI_Wtime();
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        waited = MPI_Wtime() - t0;
        mtest_check(waited < COMPUTE_S / 2,
                    "rank 0 waited %.3f s for the allreduce while the others computed for %.1f s: "
                    "no asynchronous progress",
                    waited, COMPUTE_S);
    } else {
        compute(COMPUTE_S);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    for (int i = 0; i < COUNT; i++) {
        double want = (double)size * (size - 1) / 2 + (double)size * i;
        if (!mtest_check(out[i] == want, "out[%d] = %g, expected %g", i, out[i], want))
            break;
    }
    return mtest_finalize();
}
