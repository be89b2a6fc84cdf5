/* Latency of blocking collectives on MPI_COMM_WORLD: MPI_Barrier, MPI_Bcast,
 * MPI_Reduce and MPI_Allreduce (MPI_SUM), MPI_Allgather and MPI_Alltoall, per
 * size.  Size: the whole buffer for bcast, reduce and allreduce, the block of
 * each rank for allgather, the block sent to each rank for alltoall; barrier
 * has none and prints one line.  Data moves as MPI_CHAR; the reductions use
 * --dtype (double, the default, or char) and a size that is a multiple of it.
 * Two ways to time (--timing):
 *  run:  every rank times `iters` back-to-back calls; a sample is the slowest
 *        rank's time per call.  The bcast and reduce root rotates from call
 *        to call (rank i % n) and a repetition has at least n calls, so
 *        successive calls cannot pipeline behind each other.
 *  call: as the field's OSU-style programs: every call is timed alone and
 *        followed by an MPI_Barrier (outside the time; barrier: back to back),
 *        root 0; a rank's time is the sum over its calls / `iters`, and a
 *        sample is the slowest rank's (avg_us: the mean over ranks).
 * The median over repetitions is printed.  `iters` is recalibrated after each
 * warm-up repetition (the first runs one call) so that a repetition lasts
 * about --rep-ms, within 1..--iters: a slow, oversubscribed job stays
 * time-bounded.  --max-ms T: after T ms on one size, no further repetition
 * starts (at least 3 are done).
 * --dtype char: when the library refuses MPI_SUM on MPI_CHAR (MPI_Reduce_local
 * returns an error), the reductions use MPI_INT8_T and their lines say so
 * ("dtype":"int8","refused":"<error string>").
 * Options: --colls barrier,bcast,reduce,allreduce,allgather,alltoall  --sizes a,b,..
 *          --timing run|call  --dtype double|char  --reps R  --warmup W  --iters MAX
 *          --rep-ms T  --max-ms T
 * One JSON line per (collective, size) on rank 0's stdout; an MPI error is
 * printed as a JSON line with "error" and the job aborts. */
#include "bench_common.h"

enum { C_BARRIER, C_BCAST, C_REDUCE, C_ALLREDUCE, C_ALLGATHER, C_ALLTOALL, C_COUNT };
static const char *const coll_names[C_COUNT] = {"barrier",   "bcast",     "reduce",
                                                "allreduce", "allgather", "alltoall"};

typedef struct {
    int rank, nranks;
    int per_call;       /* --timing call */
    MPI_Datatype rtype; /* element type of the reductions */
    int relem;          /* its size in bytes */
    const char *rname;  /* its name in the output */
    char refused[160];  /* why MPI_CHAR was not taken for the reductions, or "" */
    char *sbuf, *rbuf;
} coll_ctx;

/* The library's string for error code rc, fit for a JSON string. */
static void coll_errstr(int rc, char msg[MPI_MAX_ERROR_STRING])
{
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    for (int i = 0; i < len; i++)
        if (msg[i] == '"' || msg[i] == '\\' || msg[i] == '\n')
            msg[i] = ' ';
}

static void coll_check(const coll_ctx *c, int rc, int which, long size)
{
    if (rc == MPI_SUCCESS)
        return;
    char msg[MPI_MAX_ERROR_STRING];
    coll_errstr(rc, msg);
    printf("{\"bench\":\"coll\",\"coll\":\"%s\",\"bytes\":%ld,\"ranks\":%d,\"rank\":%d,"
           "\"error\":\"%s\"}\n",
           coll_names[which], size, c->nranks, c->rank, msg);
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

static int coll_call(const coll_ctx *c, int which, long size, int root)
{
    int n = (int)size;
    int count = (int)(size / c->relem);
    switch (which) {
    case C_BARRIER:
        return MPI_Barrier(MPI_COMM_WORLD);
    case C_BCAST:
        return MPI_Bcast(c->sbuf, n, MPI_CHAR, root, MPI_COMM_WORLD);
    case C_REDUCE:
        return MPI_Reduce(c->sbuf, c->rbuf, count, c->rtype, MPI_SUM, root, MPI_COMM_WORLD);
    case C_ALLREDUCE:
        return MPI_Allreduce(c->sbuf, c->rbuf, count, c->rtype, MPI_SUM, MPI_COMM_WORLD);
    case C_ALLGATHER:
        return MPI_Allgather(c->sbuf, n, MPI_CHAR, c->rbuf, n, MPI_CHAR, MPI_COMM_WORLD);
    default:
        return MPI_Alltoall(c->sbuf, n, MPI_CHAR, c->rbuf, n, MPI_CHAR, MPI_COMM_WORLD);
    }
}

/* Runs `iters` calls; returns this rank's seconds per call in *per_call and
 * the loop's seconds per iteration (barriers included) in *wall. */
static void coll_run(const coll_ctx *c, int which, long size, long iters, double *per_call,
                     double *wall)
{
    int rc = MPI_SUCCESS;
    double sum = 0, t0 = MPI_Wtime();
    for (long i = 0; i < iters && rc == MPI_SUCCESS; i++) {
        if (!c->per_call) {
            rc = coll_call(c, which, size, (int)(i % c->nranks));
            continue;
        }
        double t = MPI_Wtime();
        rc = coll_call(c, which, size, 0);
        sum += MPI_Wtime() - t;
        if (rc == MPI_SUCCESS && which != C_BARRIER)
            rc = MPI_Barrier(MPI_COMM_WORLD);
    }
    *wall = (MPI_Wtime() - t0) / (double)iters;
    *per_call = c->per_call ? sum / (double)iters : *wall;
    coll_check(c, rc, which, size);
}

/* One repetition: synchronised start, then the slowest rank's time per call,
 * the mean over ranks, the slowest loop time per iteration and rank 0's
 * seconds since `tb`, known to every rank (so all of them pick the same next
 * `iters` and stop together). */
typedef struct {
    double slowest, mean, wall, elapsed;
} coll_sample;

static coll_sample coll_rep(const coll_ctx *c, int which, long size, long iters, double tb)
{
    coll_check(c, MPI_Barrier(MPI_COMM_WORLD), which, size);
    double t = 0, wall = 0;
    coll_run(c, which, size, iters, &t, &wall);
    double in[3] = {t, wall, c->rank == 0 ? MPI_Wtime() - tb : 0}, out[3] = {0, 0, 0}, sum = 0;
    coll_check(c, MPI_Allreduce(in, out, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), which, size);
    coll_check(c, MPI_Allreduce(&t, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), which, size);
    return (coll_sample){out[0], sum / c->nranks, out[1], out[2]};
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

/* The reductions' element type: --dtype double or char; MPI_INT8_T when the
 * library refuses MPI_SUM on MPI_CHAR (the reason goes into c->refused). */
static void coll_pick_dtype(coll_ctx *c, const char *dtype)
{
    c->refused[0] = '\0';
    if (strcmp(dtype, "char") != 0) {
        c->rtype = MPI_DOUBLE, c->relem = 8, c->rname = "double";
        return;
    }
    c->rtype = MPI_CHAR, c->relem = 1, c->rname = "char";
    char in = 1, out = 1;
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int rc = MPI_Reduce_local(&in, &out, 1, MPI_CHAR, MPI_SUM);
    if (rc == MPI_SUCCESS)
        return;
    char msg[MPI_MAX_ERROR_STRING];
    coll_errstr(rc, msg);
    snprintf(c->refused, sizeof c->refused, "%.150s", msg);
    c->rtype = MPI_INT8_T, c->rname = "int8";
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bc_settle(argc, argv);
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
    c.per_call = strcmp(bc_arg_str(argc, argv, "--timing", "run"), "call") == 0;
    coll_pick_dtype(&c, bc_arg_str(argc, argv, "--dtype", "double"));
    if (warmup < 1)
        warmup = 1;
    for (int k = 0; k < nsizes; k++)
        if (sizes[k] < 1)
            sizes[k] = 1;
    size_t maxsize = (size_t)bc_max_of(sizes, nsizes) + 8;
    c.sbuf = bc_alloc(maxsize * (size_t)c.nranks);
    c.rbuf = bc_alloc(maxsize * (size_t)c.nranks);
    memset(c.sbuf, 0, maxsize * (size_t)c.nranks); /* reductions of zeros cannot overflow */
    double *samples = calloc((size_t)reps, sizeof *samples);
    double *means = calloc((size_t)reps, sizeof *means);

    for (int which = 0; which < C_COUNT; which++) {
        if (!coll_selected(colls, coll_names[which]))
            continue;
        int reduction = which == C_REDUCE || which == C_ALLREDUCE;
        for (int k = 0; k < (which == C_BARRIER ? 1 : nsizes); k++) {
            long size = which == C_BARRIER ? 0 : sizes[k];
            if (reduction) /* whole elements, at least one */
                size = size < c.relem ? c.relem : size / c.relem * c.relem;
            /* in run mode, a broadcast or reduce repetition visits every root once */
            long min_iters = !c.per_call && (which == C_BCAST || which == C_REDUCE) ? c.nranks : 1;
            long iters = min_iters;
            double tb = MPI_Wtime(), elapsed = 0;
            int rep;
            for (rep = -warmup; rep < reps; rep++) {
                if (rep >= 3 && max_s > 0 && elapsed >= max_s)
                    break;
                coll_sample s = coll_rep(&c, which, size, iters, tb);
                elapsed = s.elapsed;
                if (rep >= 0) {
                    samples[rep] = s.slowest;
                    means[rep] = s.mean;
                } else {
                    iters = bc_clamp(s.wall > 0 ? (long)(rep_s / s.wall) : max_iters, min_iters,
                                     max_iters < min_iters ? min_iters : max_iters);
                }
            }
            if (c.rank == 0) {
                bc_stats s = bc_stats_of(samples, rep), m = bc_stats_of(means, rep);
                printf("{\"bench\":\"coll\",\"coll\":\"%s\",\"bytes\":%ld,\"ranks\":%d,"
                       "\"timing\":\"%s\",\"iters\":%ld,\"reps\":%d,",
                       coll_names[which], size, c.nranks, c.per_call ? "call" : "run", iters, rep);
                if (reduction)
                    printf("\"dtype\":\"%s\",", c.rname);
                if (reduction && c.refused[0])
                    printf("\"refused\":\"MPI_SUM on MPI_CHAR: %s\",", c.refused);
                bc_print_stats("us", s, 1e6);
                printf(",\"avg_us_med\":%.6g}\n", m.median * 1e6);
                fflush(stdout);
            }
        }
    }
    free(samples);
    free(means);
    free(c.sbuf);
    free(c.rbuf);
    MPI_Finalize();
    return 0;
}
