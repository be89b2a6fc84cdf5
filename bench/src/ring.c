/* A token passed around a ring with an MPI_Allreduce per step: the
 * oversubscription check of issue 31 (64 ranks on 2 cores, 1000 steps).
 * Step s: the holder, rank s % n, sends the token (its step count) to rank
 * (s + 1) % n, which receives it; then every rank calls MPI_Allreduce
 * (MPI_MAX) of two doubles: whether it holds the token (the result must be 1)
 * and rank 0's seconds since the loop began (so every rank knows when
 * --max-ms has passed and all stop at the same step).
 * The loop's time is taken between two barriers on rank 0; it prints one
 * JSON line: the steps done, the loop's seconds and the time per step.
 * Options: --steps N (1000)  --max-ms T (0: no limit; at least 10 steps run)
 * A wrong token or allreduce result is printed as "error" and the job aborts. */
#include "bench_common.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bc_settle(argc, argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n < 2)
        return bc_fail(rank, "ring", "needs at least 2 ranks");
    long steps = bc_arg_long(argc, argv, "--steps", 1000);
    double max_s = (double)bc_arg_long(argc, argv, "--max-ms", 0) / 1e3;

    long token = rank == 0 ? 0 : -1, done = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long s = 0; s < steps; s++) {
        int holder = (int)(s % n), next = (holder + 1) % n;
        if (rank == holder) {
            token++;
            MPI_Send(&token, 1, MPI_LONG, next, 0, MPI_COMM_WORLD);
            token = -1;
        } else if (rank == next) {
            MPI_Recv(&token, 1, MPI_LONG, holder, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        double in[2] = {token >= 0 ? 1.0 : 0.0, rank == 0 ? MPI_Wtime() - t0 : 0}, out[2];
        MPI_Allreduce(in, out, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        done = s + 1;
        if ((rank == next && token != done) || out[0] != 1.0) {
            printf("{\"bench\":\"ring\",\"ranks\":%d,\"error\":\"step %ld: token %ld on rank %d, "
                   "holders %g\"}\n",
                   n, s, token, rank, out[0]);
            fflush(stdout);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        if (max_s > 0 && done >= 10 && out[1] >= max_s)
            break;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime() - t0;
    if (rank == 0) {
        printf("{\"bench\":\"ring\",\"ranks\":%d,\"steps\":%ld,\"steps_asked\":%ld,"
               "\"loop_s\":%.6g,\"step_us\":%.6g}\n",
               n, done, steps, t, t / (double)done * 1e6);
        fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}
