/* The communication-only stencil loop of the DCFA thesis (Listing 4.1): each
 * rank sends to its right neighbour and receives from its left one with
 * Isend/Irecv/Waitall, the computing part left out.  Reported: time of one
 * loop iteration (slowest rank), per message size.
 * Options: --sizes (bytes, multiples of 8)  --iters MAX  --budget  --reps  --warmup  --max-ms T */
#include "bench_common.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bc_settle(argc, argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    long sizes[BC_MAX_SIZES];
    int nsizes = bc_sizes(argc, argv, sizes, 0, 8, 1L << 20);
    long max_iters = bc_arg_long(argc, argv, "--iters", 500);
    long budget = bc_arg_long(argc, argv, "--budget", 16L << 20);
    int reps = (int)bc_arg_long(argc, argv, "--reps", 10);
    int warmup = (int)bc_arg_long(argc, argv, "--warmup", 2);
    double max_s = (double)bc_arg_long(argc, argv, "--max-ms", 0) / 1e3;
    size_t maxsize = (size_t)bc_max_of(sizes, nsizes);
    double *sendbuf = bc_alloc(maxsize), *recvbuf = bc_alloc(maxsize);
    double *samples = calloc((size_t)reps, sizeof *samples);
    int dst = (rank + 1) % nranks, src = (rank - 1 + nranks) % nranks;

    for (int k = 0; k < nsizes; k++) {
        int count = (int)(sizes[k] / 8);
        long iters = bc_clamp(budget / (sizes[k] > 0 ? sizes[k] : 1), 10, max_iters);
        double tb = MPI_Wtime();
        int rep;
        for (rep = -warmup; rep < 0 || bc_more(rep, reps, tb, max_s); rep++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (long it = 0; it < iters; it++) {
                MPI_Request reqs[2];
                MPI_Status stats[2];
                MPI_Isend(sendbuf, count, MPI_DOUBLE, dst, 0, MPI_COMM_WORLD, &reqs[0]);
                MPI_Irecv(recvbuf, count, MPI_DOUBLE, src, 0, MPI_COMM_WORLD, &reqs[1]);
                MPI_Waitall(2, reqs, stats);
            }
            double t = (MPI_Wtime() - t0) / (double)iters, tmax = 0;
            MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            if (rep >= 0)
                samples[rep] = tmax;
        }
        if (rank == 0) {
            bc_stats s = bc_stats_of(samples, rep);
            printf("{\"bench\":\"stencil_comm\",\"bytes\":%d,\"ranks\":%d,\"iters\":%ld,"
                   "\"reps\":%d,",
                   count * 8, nranks, iters, rep);
            bc_print_stats("iter_us", s, 1e6);
            printf("}\n");
            fflush(stdout);
        }
    }
    free(samples);
    free(sendbuf);
    free(recvbuf);
    MPI_Finalize();
    return 0;
}
