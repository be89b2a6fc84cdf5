/* Ping-pong between ranks 0 and 1: round-trip time and one-way latency
 * (half the round trip), 0 B to 4 MiB by default.
 * Options: --sizes a,b,..  --reps R  --warmup W  --iters MAX  --budget BYTES
 *          --max-ms T (stop repeating a size after T ms, at least 3 repetitions)
 *          --bufs 2 (send from one buffer and receive into another, as MPICH's
 *          perf/sendrecvl does: the buffer sent was not just written by a receive)
 *          --alloc mpi (buffers from MPI_Alloc_mem; default: the heap)
 * One JSON line per size on rank 0's stdout. */
#include "bench_common.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bc_settle(argc, argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (nranks < 2)
        return bc_fail(rank, "pingpong", "needs at least 2 ranks");

    long sizes[BC_MAX_SIZES];
    int nsizes = bc_sizes(argc, argv, sizes, 1, 1, 4L << 20);
    int reps = (int)bc_arg_long(argc, argv, "--reps", 20);
    int warmup = (int)bc_arg_long(argc, argv, "--warmup", 2);
    long max_iters = bc_arg_long(argc, argv, "--iters", 1000);
    long budget = bc_arg_long(argc, argv, "--budget", 16L << 20);
    double max_s = (double)bc_arg_long(argc, argv, "--max-ms", 0) / 1e3;
    int bufs = (int)bc_clamp(bc_arg_long(argc, argv, "--bufs", 1), 1, 2);
    bc_alloc_from(argc, argv);
    char *buf = bc_alloc((size_t)bc_max_of(sizes, nsizes));
    char *rbuf = bufs == 2 ? bc_alloc((size_t)bc_max_of(sizes, nsizes)) : buf;
    double *samples = calloc((size_t)reps, sizeof *samples);

    for (int k = 0; k < nsizes; k++) {
        int size = (int)sizes[k];
        long iters = bc_clamp(budget / (size > 0 ? size : 1), 2, max_iters);
        MPI_Barrier(MPI_COMM_WORLD);
        double tb = MPI_Wtime();
        int rep;
        for (rep = -warmup; rep < 0 || bc_more(rep, reps, tb, max_s); rep++) {
            double t0 = MPI_Wtime();
            for (long i = 0; i < iters; i++) {
                if (rank == 0) {
                    MPI_Send(buf, size, MPI_BYTE, 1, k, MPI_COMM_WORLD);
                    MPI_Recv(rbuf, size, MPI_BYTE, 1, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else if (rank == 1) {
                    MPI_Recv(rbuf, size, MPI_BYTE, 0, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(buf, size, MPI_BYTE, 0, k, MPI_COMM_WORLD);
                }
            }
            if (rep >= 0)
                samples[rep] = (MPI_Wtime() - t0) / (double)iters;
        }
        if (rank == 0) {
            bc_stats s = bc_stats_of(samples, rep);
            printf("{\"bench\":\"pingpong\",\"bytes\":%d,\"bufs\":%d,\"iters\":%ld,\"reps\":%d,%s", size,
                   bufs, iters, rep, bc_alloc_mpi ? "\"alloc\":\"mpi\"," : "");
            bc_print_stats("rtt_us", s, 1e6);
            putchar(',');
            bc_print_stats("lat_us", s, 0.5e6);
            printf("}\n");
            fflush(stdout);
        }
    }
    free(samples);
    if (rbuf != buf)
        bc_free(rbuf);
    bc_free(buf);
    MPI_Finalize();
    return 0;
}
