/* Asymmetric eager flood (DCFA thesis 4.3.1.3): rank 0 only sends, rank 1
 * only receives, --count messages per repetition (400 as in the thesis),
 * then one zero-byte acknowledgement.  The receiver must return credits
 * with explicit SYNC packets; the library's own statistics (DCFA_STATS=1)
 * count them.  Reported: time per message.
 * Options: --size BYTES  --count N  --reps R  --warmup W  --max-ms T */
#include "bench_common.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bc_settle(argc, argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (nranks < 2)
        return bc_fail(rank, "flood", "needs at least 2 ranks");
    int size = (int)bc_arg_long(argc, argv, "--size", 1024);
    long count = bc_arg_long(argc, argv, "--count", 400);
    int reps = (int)bc_arg_long(argc, argv, "--reps", 10);
    int warmup = (int)bc_arg_long(argc, argv, "--warmup", 1);
    double max_s = (double)bc_arg_long(argc, argv, "--max-ms", 0) / 1e3;
    char *buf = bc_alloc((size_t)size);
    double *samples = calloc((size_t)reps, sizeof *samples);

    double tb = MPI_Wtime();
    int rep;
    for (rep = -warmup; rep < 0 || bc_more(rep, reps, tb, max_s); rep++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (long i = 0; i < count; i++) {
            if (rank == 0)
                MPI_Send(buf, size, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            else if (rank == 1)
                MPI_Recv(buf, size, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        if (rank == 0)
            MPI_Recv(NULL, 0, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else if (rank == 1)
            MPI_Send(NULL, 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
        if (rep >= 0)
            samples[rep] = (MPI_Wtime() - t0) / (double)count;
    }
    if (rank == 0) {
        bc_stats s = bc_stats_of(samples, rep);
        printf("{\"bench\":\"flood\",\"bytes\":%d,\"count\":%ld,\"reps\":%d,\"messages\":%ld,",
               size, count, rep, count * (rep + warmup));
        bc_print_stats("msg_us", s, 1e6);
        printf("}\n");
        fflush(stdout);
    }
    free(samples);
    free(buf);
    MPI_Finalize();
    return 0;
}
