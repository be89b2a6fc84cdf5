/* Five-point (Jacobi) stencil with MPI + OpenMP, as in the DCFA-MPI paper
 * (section V): an N x N grid, fixed boundary, interior rows split in blocks
 * over the ranks; each iteration exchanges one halo row with each
 * neighbour (Isend/Irecv/Waitall) and updates the local rows with an OpenMP
 * parallel loop.  N = 1282 gives 10 KiB halo rows, as in the paper.
 * Options: --n N  --iters I  --reps R  --warmup W
 * Output: total time of I iterations (slowest rank), its communication
 * share, and a checksum that must agree between libraries. */
#include "bench_common.h"
#ifdef _OPENMP
#include <omp.h>
#endif

static void st_init(double *u, int rows, int n, int first_global)
{
    for (int i = 0; i < rows + 2; i++)
        for (int j = 0; j < n; j++)
            u[(size_t)i * n + j] = (first_global + i - 1 == 0) ? 1.0 : 0.0;
}

static double st_sweep(const double *u, double *v, int rows, int n)
{
    double diff = 0.0;
#pragma omp parallel for reduction(+ : diff)
    for (int i = 1; i <= rows; i++)
        for (int j = 1; j < n - 1; j++) {
            size_t c = (size_t)i * n + j;
            v[c] = 0.25 * (u[c - n] + u[c + n] + u[c - 1] + u[c + 1]);
            diff += (v[c] - u[c]) * (v[c] - u[c]);
        }
    return diff;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bc_settle(argc, argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int n = (int)bc_arg_long(argc, argv, "--n", 1282);
    int iters = (int)bc_arg_long(argc, argv, "--iters", 100);
    int reps = (int)bc_arg_long(argc, argv, "--reps", 5);
    int warmup = (int)bc_arg_long(argc, argv, "--warmup", 1);
    int interior = n - 2;
    if (interior < nranks)
        return bc_fail(rank, "stencil5", "grid too small for this many ranks");
    int rows = interior / nranks + (rank < interior % nranks ? 1 : 0);
    int first =
        1 + rank * (interior / nranks) + (rank < interior % nranks ? rank : interior % nranks);
    int up = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    int down = rank < nranks - 1 ? rank + 1 : MPI_PROC_NULL;
    size_t cells = (size_t)(rows + 2) * n;
    double *u = bc_alloc(cells * sizeof(double)), *v = bc_alloc(cells * sizeof(double));
    double *times = calloc((size_t)reps, sizeof *times);
    double *comms = calloc((size_t)reps, sizeof *comms);
    int threads = 1;
#ifdef _OPENMP
    threads = omp_get_max_threads();
#endif

    for (int rep = -warmup; rep < reps; rep++) {
        st_init(u, rows, n, first);
        st_init(v, rows, n, first);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime(), tcomm = 0;
        for (int it = 0; it < iters; it++) {
            double tc = MPI_Wtime();
            MPI_Request reqs[4];
            MPI_Status stats[4];
            MPI_Irecv(u, n, MPI_DOUBLE, up, 0, MPI_COMM_WORLD, &reqs[0]);
            MPI_Irecv(u + (size_t)(rows + 1) * n, n, MPI_DOUBLE, down, 0, MPI_COMM_WORLD, &reqs[1]);
            MPI_Isend(u + n, n, MPI_DOUBLE, up, 0, MPI_COMM_WORLD, &reqs[2]);
            MPI_Isend(u + (size_t)rows * n, n, MPI_DOUBLE, down, 0, MPI_COMM_WORLD, &reqs[3]);
            MPI_Waitall(4, reqs, stats);
            tcomm += MPI_Wtime() - tc;
            st_sweep(u, v, rows, n);
            double *tmp = u;
            u = v;
            v = tmp;
        }
        double t[2] = {MPI_Wtime() - t0, tcomm}, tmax[2] = {0, 0};
        MPI_Reduce(t, tmax, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rep >= 0) {
            times[rep] = tmax[0];
            comms[rep] = tmax[1];
        }
    }
    double local = 0, sum = 0;
    for (int i = 1; i <= rows; i++)
        for (int j = 1; j < n - 1; j++)
            local += u[(size_t)i * n + j];
    MPI_Reduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        bc_stats st = bc_stats_of(times, reps), sc = bc_stats_of(comms, reps);
        printf("{\"bench\":\"stencil5\",\"ranks\":%d,\"threads\":%d,\"n\":%d,\"iters\":%d,"
               "\"reps\":%d,\"halo_bytes\":%d,",
               nranks, threads, n, iters, reps, n * 8);
        bc_print_stats("time_ms", st, 1e3);
        putchar(',');
        bc_print_stats("comm_ms", sc, 1e3);
        printf(",\"checksum\":%.12e}\n", sum);
        fflush(stdout);
    }
    free(times);
    free(comms);
    free(u);
    free(v);
    MPI_Finalize();
    return 0;
}
