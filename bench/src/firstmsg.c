/* Time to the first message to a new peer: rank 0 sends 8 bytes to each other rank in turn,
 * which answers at once, and times that first round trip (it includes making the connection:
 * the card looked up, the socket asked of the daemon or made, the hellos), then the median of
 * --reps more round trips to the same peer (connected). Nothing is exchanged before, so every
 * peer is new to rank 0. One JSON line per peer on rank 0's stdout:
 *   {"bench":"firstmsg","peer":K,"first_us":...,"rtt_us":...}
 * Options: --reps R (default 100). */
#include "bench_common.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (nranks < 2)
        return bc_fail(rank, "firstmsg", "needs at least 2 ranks");
    int reps = (int)bc_clamp(bc_arg_long(argc, argv, "--reps", 100), 1, 100000);
    double *t = malloc((size_t)reps * sizeof *t);
    char b[8] = {0};
    for (int k = 1; k < nranks; k++) {
        if (rank == 0) {
            double t0 = MPI_Wtime();
            MPI_Send(b, 8, MPI_CHAR, k, 0, MPI_COMM_WORLD);
            MPI_Recv(b, 8, MPI_CHAR, k, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            double first = MPI_Wtime() - t0;
            for (int i = 0; i < reps; i++) {
                t0 = MPI_Wtime();
                MPI_Send(b, 8, MPI_CHAR, k, 1, MPI_COMM_WORLD);
                MPI_Recv(b, 8, MPI_CHAR, k, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                t[i] = MPI_Wtime() - t0;
            }
            bc_stats s = bc_stats_of(t, reps);
            printf("{\"bench\":\"firstmsg\",\"peer\":%d,\"first_us\":%.1f,\"rtt_us\":%.2f}\n", k,
                   first * 1e6, s.median * 1e6);
            fflush(stdout);
        } else if (rank == k) {
            MPI_Recv(b, 8, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(b, 8, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
            for (int i = 0; i < reps; i++) {
                MPI_Recv(b, 8, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(b, 8, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
            }
        }
    }
    free(t);
    MPI_Finalize();
    return 0;
}
