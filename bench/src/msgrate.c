/* Multi-pair message rate: rank r < N/2 streams windows of small messages to
 * rank r + N/2; each window ends with a zero-byte acknowledgement.  The rate
 * is all pairs' messages over the slowest rank's time.
 * Options: --sizes (default 8)  --window W  --iters windows  --reps --warmup  --max-ms T */
#include "bench_common.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bc_settle(argc, argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (nranks < 2 || nranks % 2 != 0)
        return bc_fail(rank, "msgrate", "needs an even number of ranks");

    long sizes[BC_MAX_SIZES];
    int nsizes = bc_sizes(argc, argv, sizes, 0, 8, 8);
    int window = (int)bc_clamp(bc_arg_long(argc, argv, "--window", 64), 1, 256);
    long iters = bc_arg_long(argc, argv, "--iters", 100);
    int reps = (int)bc_arg_long(argc, argv, "--reps", 10);
    int warmup = (int)bc_arg_long(argc, argv, "--warmup", 2);
    double max_s = (double)bc_arg_long(argc, argv, "--max-ms", 0) / 1e3;
    int pairs = nranks / 2;
    int sender = rank < pairs;
    int peer = sender ? rank + pairs : rank - pairs;
    char *buf = bc_alloc((size_t)bc_max_of(sizes, nsizes) * (size_t)window);
    double *samples = calloc((size_t)reps, sizeof *samples);
    MPI_Request reqs[256];
    MPI_Status stats[256]; /* not MPI_STATUSES_IGNORE: gcc 12 warns on MPICH's */

    for (int k = 0; k < nsizes; k++) {
        int size = (int)sizes[k];
        double tb = MPI_Wtime();
        int rep;
        for (rep = -warmup; rep < 0 || bc_more(rep, reps, tb, max_s); rep++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (long it = 0; it < iters; it++) {
                for (int w = 0; w < window; w++) {
                    char *p = buf + (size_t)w * size;
                    if (sender)
                        MPI_Isend(p, size, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &reqs[w]);
                    else
                        MPI_Irecv(p, size, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &reqs[w]);
                }
                MPI_Waitall(window, reqs, stats);
                if (sender)
                    MPI_Recv(NULL, 0, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                else
                    MPI_Send(NULL, 0, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
            }
            double t = MPI_Wtime() - t0, tmax = 0;
            MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            if (rep >= 0)
                samples[rep] = (double)pairs * window * iters / tmax;
        }
        if (rank == 0) {
            bc_stats s = bc_stats_of(samples, rep);
            printf("{\"bench\":\"msgrate\",\"bytes\":%d,\"pairs\":%d,\"window\":%d,\"reps\":%d,",
                   size, pairs, window, rep);
            bc_print_stats("mmsgs", s, 1e-6);
            printf("}\n");
            fflush(stdout);
        }
    }
    free(samples);
    free(buf);
    MPI_Finalize();
    return 0;
}
