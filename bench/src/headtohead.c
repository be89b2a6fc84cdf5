/* Head to head between ranks 0 and 1, the three loops MPICH's perf/sendrecvl
 * times: both post MPI_Irecv then MPI_Send ("irecv_send"), both call
 * MPI_Sendrecv ("sendrecv"), and a ping-pong round trip ("pingpong"); time
 * per exchange, 4 KiB to 256 KiB by default. The staged eager rule (no staged
 * eager while a receive is posted, docs/protocol.md) was measured with it.
 * Options: --sizes a,b,..  --reps R  --iters N
 * One JSON line per size and loop on rank 0's stdout. */
#include "bench_common.h"

static void exchange(int mode, int rank, char *sb, char *rb, int size, int tag)
{
    int peer = rank ^ 1;
    if (mode == 0) {
        MPI_Request rq;
        MPI_Irecv(rb, size, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &rq);
        MPI_Send(sb, size, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
    } else if (mode == 1) {
        MPI_Sendrecv(sb, size, MPI_BYTE, peer, tag, rb, size, MPI_BYTE, peer, tag, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
    } else if (rank == 0) {
        MPI_Send(sb, size, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
        MPI_Recv(rb, size, MPI_BYTE, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(rb, size, MPI_BYTE, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(sb, size, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv)
{
    static const char *const names[3] = {"irecv_send", "sendrecv", "pingpong"};
    MPI_Init(&argc, &argv);
    bc_settle(argc, argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (nranks != 2)
        return bc_fail(rank, "headtohead", "needs exactly 2 ranks");

    long sizes[BC_MAX_SIZES];
    int nsizes = bc_sizes(argc, argv, sizes, 0, 4096, 256L << 10);
    int reps = (int)bc_arg_long(argc, argv, "--reps", 5);
    long iters = bc_arg_long(argc, argv, "--iters", 400);
    size_t most = (size_t)bc_max_of(sizes, nsizes);
    char *sb = bc_alloc(most), *rb = bc_alloc(most);
    double *samples = calloc((size_t)reps, sizeof *samples);

    for (int k = 0; k < nsizes; k++) {
        int size = (int)sizes[k];
        for (int mode = 0; mode < 3; mode++) {
            for (int rep = 0; rep < reps; rep++) {
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = MPI_Wtime();
                for (long i = 0; i < iters; i++)
                    exchange(mode, rank, sb, rb, size, mode);
                samples[rep] = (MPI_Wtime() - t0) / (double)iters;
            }
            if (rank == 0) {
                printf("{\"bench\":\"headtohead\",\"loop\":\"%s\",\"bytes\":%d,\"iters\":%ld,"
                       "\"reps\":%d,", names[mode], size, iters, reps);
                bc_print_stats("us", bc_stats_of(samples, reps), 1e6);
                printf("}\n");
                fflush(stdout);
            }
        }
    }
    free(samples);
    free(sb);
    free(rb);
    MPI_Finalize();
    return 0;
}
