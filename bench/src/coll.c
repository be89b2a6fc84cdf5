/* Latency of blocking collectives on MPI_COMM_WORLD: MPI_Barrier, MPI_Bcast,
 * MPI_Allreduce (MPI_DOUBLE, MPI_SUM) and MPI_Alltoall (MPI_BYTE), per size.
 * Size: the whole buffer for bcast and allreduce (a multiple of 8), the block
 * sent to each rank for alltoall; barrier has none and prints one line.
 * One repetition: every rank times `iters` back-to-back calls; a sample is
 * the slowest rank's time per call; the median over repetitions is printed.
 * The broadcast root rotates from call to call (rank i % n) and a repetition
 * has at least n calls, so successive broadcasts cannot pipeline behind each
 * other and a rank leaving the start barrier late is still waited for.
 * `iters` is recalibrated after each warm-up repetition (the first runs one
 * call) so that a repetition lasts about --rep-ms, within 1..--iters: a slow,
 * oversubscribed job stays time-bounded.  --max-ms T: after T ms on one
 * size, no further repetition starts (at least 3 are done).
 * Options: --colls barrier,bcast,allreduce,alltoall  --sizes a,b,..  --reps R
 *          --warmup W  --iters MAX  --rep-ms T  --max-ms T
 * One JSON line per (collective, size) on rank 0's stdout; an MPI error is
 * printed as a JSON line with "error" and the job aborts. */
#include "bench_common.h"

enum { C_BARRIER, C_BCAST, C_ALLREDUCE, C_ALLTOALL, C_COUNT };
static const char *const coll_names[C_COUNT] = {"barrier", "bcast", "allreduce", "alltoall"};

typedef struct {
    int rank, nranks;
    char *sbuf, *rbuf;
} coll_ctx;

static void coll_check(const coll_ctx *c, int rc, int which, long size)
{
    if (rc == MPI_SUCCESS)
        return;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    for (int i = 0; i < len; i++)
        if (msg[i] == '"' || msg[i] == '\\' || msg[i] == '\n')
            msg[i] = ' ';
    printf("{\"bench\":\"coll\",\"coll\":\"%s\",\"bytes\":%ld,\"ranks\":%d,\"rank\":%d,"
           "\"error\":\"%s\"}\n",
           coll_names[which], size, c->nranks, c->rank, msg);
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

/* Runs `iters` calls; returns this rank's seconds per call. */
static double coll_run(const coll_ctx *c, int which, long size, long iters)
{
    int rc = MPI_SUCCESS;
    int count = (int)(size / 8);
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters && rc == MPI_SUCCESS; i++) {
        switch (which) {
        case C_BARRIER:
            rc = MPI_Barrier(MPI_COMM_WORLD);
            break;
        case C_BCAST:
            rc = MPI_Bcast(c->sbuf, (int)size, MPI_BYTE, (int)(i % c->nranks), MPI_COMM_WORLD);
            break;
        case C_ALLREDUCE:
            rc = MPI_Allreduce(c->sbuf, c->rbuf, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            break;
        default:
            rc = MPI_Alltoall(c->sbuf, (int)size, MPI_BYTE, c->rbuf, (int)size, MPI_BYTE,
                              MPI_COMM_WORLD);
            break;
        }
    }
    double t = (MPI_Wtime() - t0) / (double)iters;
    coll_check(c, rc, which, size);
    return t;
}

/* One repetition: synchronised start, then the slowest rank's time per call
 * and rank 0's seconds since `tb`, both known to every rank after one
 * reduction (so all of them pick the same next `iters` and stop together). */
static double coll_rep(const coll_ctx *c, int which, long size, long iters, double tb,
                       double *elapsed)
{
    coll_check(c, MPI_Barrier(MPI_COMM_WORLD), which, size);
    double in[2] = {coll_run(c, which, size, iters), c->rank == 0 ? MPI_Wtime() - tb : 0};
    double out[2] = {0, 0};
    coll_check(c, MPI_Allreduce(in, out, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), which, size);
    *elapsed = out[1];
    return out[0];
}

static int coll_selected(const char *list, const char *name)
{
    char tmp[256];
    snprintf(tmp, sizeof tmp, "%s", list);
    for (char *tok = strtok(tmp, ","); tok; tok = strtok(NULL, ","))
        if (strcmp(tok, name) == 0)
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    coll_ctx c;
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.nranks);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    long sizes[BC_MAX_SIZES];
    int nsizes = bc_sizes(argc, argv, sizes, 0, 8, 1L << 20);
    const char *colls = bc_arg_str(argc, argv, "--colls", "barrier,bcast,allreduce,alltoall");
    int reps = (int)bc_arg_long(argc, argv, "--reps", 10);
    int warmup = (int)bc_arg_long(argc, argv, "--warmup", 2);
    long max_iters = bc_arg_long(argc, argv, "--iters", 1000);
    double rep_s = (double)bc_arg_long(argc, argv, "--rep-ms", 20) / 1e3;
    double max_s = (double)bc_arg_long(argc, argv, "--max-ms", 0) / 1e3;
    if (warmup < 1)
        warmup = 1;
    for (int k = 0; k < nsizes; k++)
        sizes[k] = sizes[k] < 8 ? 8 : sizes[k] / 8 * 8;
    size_t maxsize = (size_t)bc_max_of(sizes, nsizes);
    c.sbuf = bc_alloc(maxsize * (size_t)c.nranks);
    c.rbuf = bc_alloc(maxsize * (size_t)c.nranks);
    double *samples = calloc((size_t)reps, sizeof *samples);

    for (int which = 0; which < C_COUNT; which++) {
        if (!coll_selected(colls, coll_names[which]))
            continue;
        for (int k = 0; k < (which == C_BARRIER ? 1 : nsizes); k++) {
            long size = which == C_BARRIER ? 0 : sizes[k];
            /* a broadcast repetition visits every root once */
            long min_iters = which == C_BCAST ? c.nranks : 1;
            long iters = min_iters;
            double tb = MPI_Wtime(), elapsed = 0;
            int rep;
            for (rep = -warmup; rep < reps; rep++) {
                if (rep >= 3 && max_s > 0 && elapsed >= max_s)
                    break;
                double t = coll_rep(&c, which, size, iters, tb, &elapsed);
                if (rep >= 0)
                    samples[rep] = t;
                else
                    iters = bc_clamp(t > 0 ? (long)(rep_s / t) : max_iters, min_iters,
                                     max_iters < min_iters ? min_iters : max_iters);
            }
            if (c.rank == 0) {
                bc_stats s = bc_stats_of(samples, rep);
                printf("{\"bench\":\"coll\",\"coll\":\"%s\",\"bytes\":%ld,\"ranks\":%d,"
                       "\"iters\":%ld,\"reps\":%d,",
                       coll_names[which], size, c.nranks, iters, rep);
                bc_print_stats("us", s, 1e6);
                printf("}\n");
                fflush(stdout);
            }
        }
    }
    free(samples);
    free(c.sbuf);
    free(c.rbuf);
    MPI_Finalize();
    return 0;
}
