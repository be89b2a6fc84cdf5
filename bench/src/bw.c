/* Bandwidth between ranks 0 and 1 with a window of messages in flight, as the
 * field's OSU-style programs measure it: MPI_CHAR, a window of 64 at every size.
 * uni: rank 0 posts a window of Isend, rank 1 a window of Irecv, then a
 *      zero-byte acknowledgement; bi: both ranks post both windows.
 * Buffers (--buffers): single (the default, as the field's): every message of a
 *      window from one send buffer into one receive buffer, so the data stays in
 *      cache; multiple: a buffer per message of the window; both: each size in
 *      both modes, one after the other.
 * --cap BYTES (default 0: no cap) shrinks the window for large messages so a
 * window holds at most BYTES.
 * --write: a sender writes its send buffer(s) before each window, as an
 *      application that computes or packs what it sends (the time includes it);
 *      without it the send buffer is never written, and a single-copy
 *      receiver may find its lines in its own cache from the window before.
 * Options: --mode uni|bi|both  --buffers single|multiple|both  --sizes  --window W
 *          --reps  --warmup  --max-ms T  --iters MAX  --budget BYTES  --cap BYTES
 *          --alloc mpi (buffers from MPI_Alloc_mem; default: the heap)  --write
 * One JSON line per (mode, size, buffers); bandwidth in MB/s (10^6 bytes/s). */
#include "bench_common.h"

static double bw_run(int rank, int bi, int size, int window, int multiple, int write, long iters,
                     char *sbuf, char *rbuf)
{
    MPI_Request reqs[2 * 256];
    MPI_Status stats[2 * 256]; /* not MPI_STATUSES_IGNORE: gcc 12 warns on MPICH's */
    int peer = 1 - rank;
    size_t stride = multiple ? (size_t)size : 0;
    double t0 = MPI_Wtime();
    for (long it = 0; it < iters; it++) {
        int n = 0;
        if (write && (bi || rank == 0))
            memset(sbuf, (int)(it & 0x7f), (size_t)size * (multiple ? (size_t)window : 1));
        if (bi || rank == 1)
            for (int w = 0; w < window; w++)
                MPI_Irecv(rbuf + (size_t)w * stride, size, MPI_CHAR, peer, 1, MPI_COMM_WORLD,
                          &reqs[n++]);
        if (bi || rank == 0)
            for (int w = 0; w < window; w++)
                MPI_Isend(sbuf + (size_t)w * stride, size, MPI_CHAR, peer, 1, MPI_COMM_WORLD,
                          &reqs[n++]);
        MPI_Waitall(n, reqs, stats);
        if (!bi && rank == 0)
            MPI_Recv(NULL, 0, MPI_CHAR, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else if (!bi && rank == 1)
            MPI_Send(NULL, 0, MPI_CHAR, 0, 2, MPI_COMM_WORLD);
    }
    return MPI_Wtime() - t0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bc_settle(argc, argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (nranks < 2)
        return bc_fail(rank, "bw", "needs at least 2 ranks");

    long sizes[BC_MAX_SIZES];
    int nsizes = bc_sizes(argc, argv, sizes, 0, 1, 4L << 20);
    const char *mode = bc_arg_str(argc, argv, "--mode", "both");
    const char *bufs = bc_arg_str(argc, argv, "--buffers", "single");
    int max_window = (int)bc_clamp(bc_arg_long(argc, argv, "--window", 64), 1, 256);
    int reps = (int)bc_arg_long(argc, argv, "--reps", 10);
    int warmup = (int)bc_arg_long(argc, argv, "--warmup", 2);
    long max_iters = bc_arg_long(argc, argv, "--iters", 100);
    long budget = bc_arg_long(argc, argv, "--budget", 64L << 20);
    long cap = bc_arg_long(argc, argv, "--cap", 0);
    int write = bc_arg_flag(argc, argv, "--write");
    double max_s = (double)bc_arg_long(argc, argv, "--max-ms", 0) / 1e3;
    int do_single = strcmp(bufs, "multiple") != 0, do_multiple = strcmp(bufs, "single") != 0;
    if (strcmp(bufs, "single") != 0 && strcmp(bufs, "multiple") != 0 && strcmp(bufs, "both") != 0)
        return bc_fail(rank, "bw", "--buffers takes single, multiple or both");
    long maxsize = bc_max_of(sizes, nsizes);
    if (maxsize < 1)
        maxsize = 1;
    /* the window of the largest size, in bytes: what multiple buffers need */
    long span = maxsize * (cap > 0 ? bc_clamp(cap / maxsize, 1, max_window) : max_window);
    size_t bufsize = (size_t)(do_multiple ? span : maxsize);
    bc_alloc_from(argc, argv);
    char *sbuf = bc_alloc(bufsize), *rbuf = bc_alloc(bufsize);
    double *samples = calloc((size_t)reps, sizeof *samples);

    for (int bi = 0; bi < 2; bi++) {
        if ((bi && strcmp(mode, "uni") == 0) || (!bi && strcmp(mode, "bi") == 0))
            continue;
        for (int k = 0; k < nsizes; k++) {
            int size = (int)sizes[k];
            long unit = size > 0 ? size : 1;
            int window = cap > 0 ? (int)bc_clamp(cap / unit, 1, max_window) : max_window;
            long iters = bc_clamp(budget / ((long)window * unit), 1, max_iters);
            for (int multiple = 0; multiple < 2; multiple++) {
                if ((multiple && !do_multiple) || (!multiple && !do_single))
                    continue;
                double tb = MPI_Wtime();
                int rep;
                for (rep = -warmup; rep < 0 || bc_more(rep, reps, tb, max_s); rep++) {
                    MPI_Barrier(MPI_COMM_WORLD);
                    double t = 0;
                    if (rank < 2)
                        t = bw_run(rank, bi, size, window, multiple, write, iters, sbuf, rbuf);
                    if (rep >= 0 && rank == 0)
                        samples[rep] = (double)size * window * iters * (bi ? 2 : 1) / t / 1e6;
                }
                if (rank == 0) {
                    bc_stats s = bc_stats_of(samples, rep);
                    printf("{\"bench\":\"%s\",\"bytes\":%d,\"window\":%d,\"buffers\":\"%s\","
                           "\"iters\":%ld,\"reps\":%d,%s",
                           bi ? "bibw" : "bw", size, window, multiple ? "multiple" : "single",
                           iters, rep, bc_alloc_mpi ? "\"alloc\":\"mpi\"," : "");
                    bc_print_stats("mbps", s, 1.0);
                    printf("}\n");
                    fflush(stdout);
                }
            }
        }
    }
    free(samples);
    bc_free(sbuf);
    bc_free(rbuf);
    MPI_Finalize();
    return 0;
}
