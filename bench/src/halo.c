/* 2-D halo exchange of columns: each rank holds an N x N block of doubles
 * (row-major, one ghost column on each side, N + 2 doubles per row) in a ring
 * of ranks, and exchanges its first and last inner columns with its left and
 * right neighbours into their ghost columns. Two ways, timed alternately in
 * the same run:
 *   dtype   the columns are sent and received as MPI_Type_vector(N, 1, N + 2)
 *   manual  each column is copied into a contiguous buffer, sent as N
 *           doubles, and copied out of the receive buffer into the ghost column
 * The ghost columns are checked after the first exchange of each way.
 * Reported per N and way: time of one exchange (slowest rank), median of
 * --reps repetitions after --warmup discarded ones.
 * Options: --sizes N,N,...  --iters MAX  --budget BYTES  --reps  --warmup  --max-ms T */
#include "bench_common.h"

enum { DTYPE = 0, MANUAL = 1 };

static double value(int rank, long row, long col) { return rank * 1e9 + row * 1e4 + col; }

static void exchange(int way, double *a, long n, MPI_Datatype col, double *pack, int left,
                     int right)
{
    long ld = n + 2;
    MPI_Request rq[4];
    MPI_Status st[4]; /* not MPI_STATUSES_IGNORE: MPICH's header makes gcc warn */
    if (way == DTYPE) {
        MPI_Irecv(a, 1, col, left, 0, MPI_COMM_WORLD, &rq[0]);
        MPI_Irecv(a + n + 1, 1, col, right, 1, MPI_COMM_WORLD, &rq[1]);
        MPI_Isend(a + 1, 1, col, left, 1, MPI_COMM_WORLD, &rq[2]);
        MPI_Isend(a + n, 1, col, right, 0, MPI_COMM_WORLD, &rq[3]);
        MPI_Waitall(4, rq, st);
        return;
    }
    /* pack: [0, n) to the left, [n, 2n) to the right; receive into [2n, 4n) */
    double *sl = pack, *sr = pack + n, *rl = pack + 2 * n, *rr = pack + 3 * n;
    MPI_Irecv(rl, (int)n, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, &rq[0]);
    MPI_Irecv(rr, (int)n, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &rq[1]);
    for (long i = 0; i < n; i++) {
        sl[i] = a[i * ld + 1];
        sr[i] = a[i * ld + n];
    }
    MPI_Isend(sl, (int)n, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &rq[2]);
    MPI_Isend(sr, (int)n, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, &rq[3]);
    MPI_Waitall(4, rq, st);
    for (long i = 0; i < n; i++) {
        a[i * ld] = rl[i];
        a[i * ld + n + 1] = rr[i];
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bc_settle(argc, argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    long sizes[BC_MAX_SIZES];
    int nsizes = bc_sizes(argc, argv, sizes, 0, 16, 4096);
    long max_iters = bc_arg_long(argc, argv, "--iters", 1000);
    long budget = bc_arg_long(argc, argv, "--budget", 16L << 20);
    int reps = (int)bc_arg_long(argc, argv, "--reps", 10);
    int warmup = (int)bc_arg_long(argc, argv, "--warmup", 2);
    double max_s = (double)bc_arg_long(argc, argv, "--max-ms", 0) / 1e3;
    int left = (rank - 1 + nranks) % nranks, right = (rank + 1) % nranks;
    double *samples[2] = {calloc((size_t)reps, sizeof(double)),
                          calloc((size_t)reps, sizeof(double))};

    for (int k = 0; k < nsizes; k++) {
        long n = sizes[k];
        long ld = n + 2;
        double *a = bc_alloc((size_t)(n * ld) * sizeof(double));
        double *pack = bc_alloc((size_t)(4 * n) * sizeof(double));
        MPI_Datatype col;
        MPI_Type_vector((int)n, 1, (int)ld, MPI_DOUBLE, &col);
        MPI_Type_commit(&col);
        long iters = bc_clamp(budget / (16 * n), 10, max_iters);

        /* correctness of both ways before timing them */
        for (int way = 0; way < 2; way++) {
            for (long i = 0; i < n; i++)
                for (long j = 0; j < ld; j++)
                    a[i * ld + j] = (j == 0 || j == n + 1) ? -1.0 : value(rank, i, j);
            exchange(way, a, n, col, pack, left, right);
            int bad = 0, anybad = 0;
            for (long i = 0; i < n; i++)
                if (a[i * ld] != value(left, i, n) || a[i * ld + n + 1] != value(right, i, 1))
                    bad = 1;
            MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
            if (anybad)
                return bc_fail(rank, "halo",
                               way == DTYPE ? "dtype: wrong ghost column"
                                            : "manual: wrong ghost column");
        }

        double tb = MPI_Wtime();
        int rep;
        for (rep = -warmup; rep < 0 || bc_more(rep, reps, tb, max_s); rep++) {
            for (int way = 0; way < 2; way++) { /* alternate: both see the same drift */
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = MPI_Wtime();
                for (long it = 0; it < iters; it++)
                    exchange(way, a, n, col, pack, left, right);
                double t = (MPI_Wtime() - t0) / (double)iters, tmax = 0;
                MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
                if (rep >= 0)
                    samples[way][rep] = tmax;
            }
        }
        if (rank == 0)
            for (int way = 0; way < 2; way++) {
                bc_stats s = bc_stats_of(samples[way], rep);
                printf("{\"bench\":\"halo\",\"way\":\"%s\",\"rows\":%ld,\"bytes\":%ld,"
                       "\"ranks\":%d,\"iters\":%ld,\"reps\":%d,",
                       way == DTYPE ? "dtype" : "manual", n, 8 * n, nranks, iters, rep);
                bc_print_stats("iter_us", s, 1e6);
                printf("}\n");
                fflush(stdout);
            }
        MPI_Type_free(&col);
        free(a);
        free(pack);
    }
    free(samples[0]);
    free(samples[1]);
    MPI_Finalize();
    return 0;
}
