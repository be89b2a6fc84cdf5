/* Overlap of MPI_Iallreduce (MPI_DOUBLE, MPI_SUM on MPI_COMM_WORLD) with
 * computation.  Per size, one repetition measures on every rank, each as the
 * average over `iters` back-to-back operations:
 *   t_comm     Iallreduce + Wait alone;
 *   t_compute  a compute loop calibrated to last about t_comm (the slowest
 *              rank's), no MPI call;
 *   t_total    Iallreduce, the same compute loop, Wait; once with no MPI call
 *              during the loop ("tests":0) and once with the loop cut in
 *              --tests pieces, an MPI_Test after each.
 * Each time is the median over repetitions of the slowest rank's average;
 *   overlap% = 100 * (t_comm + t_compute - t_total) / min(t_comm, t_compute)
 * clamped to 0..100: 100 when the reduction hides entirely behind the loop,
 * 0 when they run one after the other.
 * The communicator returns errors (MPI_ERRORS_RETURN): a library whose
 * MPI_Iallreduce reports MPI_ERR_UNSUPPORTED_OPERATION gets one line per
 * (size, tests) with "unsupported":1 and an "error", and the job ends cleanly.
 * Options: --sizes (bytes, multiples of 8)  --tests N  --reps R  --warmup W
 *          --iters MAX  --rep-ms T  --max-ms T */
#include "bench_common.h"

static volatile double ov_sink;

/* About `n` dependent floating-point operations. */
static void ov_compute(long n)
{
    double x = 1.0;
    for (long i = 0; i < n; i++)
        x = x * 0.999999 + 1e-7;
    ov_sink = x;
}

/* Loop iterations per second on this rank: the loop is doubled until it
 * lasts 20 ms, then the best of three runs at that length is kept. */
static double ov_calibrate(void)
{
    long n = 1000;
    double t = 0;
    for (;;) {
        double t0 = MPI_Wtime();
        ov_compute(n);
        t = MPI_Wtime() - t0;
        if (t >= 0.02 || n > (1L << 40))
            break;
        n *= 2;
    }
    for (int i = 0; i < 3; i++) {
        double t0 = MPI_Wtime();
        ov_compute(n);
        double ti = MPI_Wtime() - t0;
        if (ti < t)
            t = ti;
    }
    return (double)n / t;
}

typedef struct {
    int rank, nranks;
    double *sbuf, *rbuf;
    const char *err; /* first MPI error met, as text */
    int err_class;
} ov_ctx;

static int ov_ok(ov_ctx *c, int rc, const char *what)
{
    if (rc == MPI_SUCCESS)
        return 1;
    if (!c->err) {
        MPI_Error_class(rc, &c->err_class);
        c->err = what;
    }
    return 0;
}

/* `mode`: 0 Iallreduce+Wait, 1 compute only, 2 both, MPI_Test `tests` times
 * during the loop (0: never).  Returns this rank's seconds per operation. */
static double ov_run(ov_ctx *c, int mode, int count, long work, int tests, long iters)
{
    int pieces = tests > 0 ? tests : 1;
    double t0 = MPI_Wtime();
    for (long it = 0; it < iters && !c->err; it++) {
        MPI_Request req = MPI_REQUEST_NULL;
        if (mode != 1 && !ov_ok(c, MPI_Iallreduce(c->sbuf, c->rbuf, count, MPI_DOUBLE, MPI_SUM,
                                                  MPI_COMM_WORLD, &req),
                                "MPI_Iallreduce"))
            break;
        if (mode != 0)
            for (int p = 0; p < pieces; p++) {
                ov_compute(work / pieces);
                int flag = 0;
                if (mode == 2 && tests > 0)
                    ov_ok(c, MPI_Test(&req, &flag, MPI_STATUS_IGNORE), "MPI_Test");
            }
        if (mode != 1)
            ov_ok(c, MPI_Wait(&req, MPI_STATUS_IGNORE), "MPI_Wait");
    }
    return (MPI_Wtime() - t0) / (double)iters;
}

/* Slowest rank's value; also agrees on errors: returns 0 (and sets c->err on
 * every rank) when any rank met one. */
static double ov_max(ov_ctx *c, double t)
{
    double in[2] = {t, c->err ? (double)c->err_class + 1 : 0}, out[2] = {0, 0};
    MPI_Allreduce(in, out, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (out[1] > 0 && !c->err) {
        c->err = "another rank";
        c->err_class = (int)out[1] - 1;
    }
    return out[0];
}

static double ov_percent(double comm, double comp, double total)
{
    double lo = comm < comp ? comm : comp;
    double p = lo > 0 ? 100.0 * (comm + comp - total) / lo : 0;
    return p < 0 ? 0 : p > 100 ? 100 : p;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bc_settle(argc, argv);
    ov_ctx c = {0};
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.nranks);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    long sizes[BC_MAX_SIZES];
    int nsizes = bc_sizes(argc, argv, sizes, 0, 8, 1L << 20);
    int ntests = (int)bc_arg_long(argc, argv, "--tests", 16);
    int reps = (int)bc_arg_long(argc, argv, "--reps", 10);
    int warmup = (int)bc_arg_long(argc, argv, "--warmup", 2);
    long max_iters = bc_arg_long(argc, argv, "--iters", 200);
    double rep_s = (double)bc_arg_long(argc, argv, "--rep-ms", 20) / 1e3;
    double max_s = (double)bc_arg_long(argc, argv, "--max-ms", 0) / 1e3;
    if (warmup < 1)
        warmup = 1;
    for (int k = 0; k < nsizes; k++)
        sizes[k] = sizes[k] < 8 ? 8 : sizes[k] / 8 * 8;
    size_t maxsize = (size_t)bc_max_of(sizes, nsizes);
    c.sbuf = bc_alloc(maxsize);
    c.rbuf = bc_alloc(maxsize);
    double *samples = calloc((size_t)reps * 4, sizeof *samples);
    /* the slowest rank's loop speed: every rank runs the same `work` */
    double rate = ov_calibrate(), rate_min = 0;
    MPI_Allreduce(&rate, &rate_min, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);

    int k;
    for (k = 0; k < nsizes && !c.err; k++) {
        int count = (int)(sizes[k] / 8);
        long iters = 1, work = 0;
        double tb = MPI_Wtime();
        int rep;
        for (rep = -warmup; rep < 0 || bc_more(rep, reps, tb, max_s); rep++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double comm = ov_max(&c, ov_run(&c, 0, count, 0, 0, iters));
            if (c.err)
                break;
            if (rep < 0) {
                /* warm-up: size the loop to the reduction, the count to --rep-ms;
                 * `comm` is the same on every rank, so are these */
                work = (long)(comm * rate_min);
                iters = bc_clamp(comm > 0 ? (long)(rep_s / (3 * comm)) : max_iters, 1, max_iters);
                continue;
            }
            MPI_Barrier(MPI_COMM_WORLD);
            double comp = ov_max(&c, ov_run(&c, 1, count, work, 0, iters));
            MPI_Barrier(MPI_COMM_WORLD);
            double tot0 = ov_max(&c, ov_run(&c, 2, count, work, 0, iters));
            MPI_Barrier(MPI_COMM_WORLD);
            double totn = ov_max(&c, ov_run(&c, 2, count, work, ntests, iters));
            if (c.err)
                break;
            samples[4 * rep] = comm;
            samples[4 * rep + 1] = comp;
            samples[4 * rep + 2] = tot0;
            samples[4 * rep + 3] = totn;
        }
        if (c.err)
            break; /* k: the size that failed */
        if (c.rank == 0) {
            double *col = calloc((size_t)rep, sizeof *col), med[4];
            for (int j = 0; j < 4; j++) {
                for (int r = 0; r < rep; r++)
                    col[r] = samples[4 * r + j];
                med[j] = bc_stats_of(col, rep).median;
            }
            free(col);
            for (int j = 2; j < 4; j++)
                printf("{\"bench\":\"overlap\",\"bytes\":%ld,\"ranks\":%d,\"tests\":%d,"
                       "\"iters\":%ld,\"reps\":%d,\"t_comm_us\":%.6g,\"t_compute_us\":%.6g,"
                       "\"t_total_us\":%.6g,\"overlap_pct\":%.4g}\n",
                       sizes[k], c.nranks, j == 2 ? 0 : ntests, iters, rep, med[0] * 1e6,
                       med[1] * 1e6, med[j] * 1e6, ov_percent(med[0], med[1], med[j]));
            fflush(stdout);
        }
    }
    int status = 0;
    if (c.err && c.rank == 0) {
        int unsup = c.err_class == MPI_ERR_UNSUPPORTED_OPERATION;
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(c.err_class, msg, &len);
        for (int i = 0; i < len; i++)
            if (msg[i] == '"' || msg[i] == '\\' || msg[i] == '\n')
                msg[i] = ' ';
        for (; k < nsizes; k++)
            for (int j = 0; j < 2; j++)
                printf("{\"bench\":\"overlap\",\"bytes\":%ld,\"ranks\":%d,\"tests\":%d,"
                       "\"unsupported\":%d,\"error\":\"%s%s: %s\"}\n",
                       sizes[k], c.nranks, j ? ntests : 0, unsup, unsup ? "unsupported: " : "",
                       c.err, msg);
        fflush(stdout);
    }
    if (c.err && c.err_class != MPI_ERR_UNSUPPORTED_OPERATION)
        status = 1;
    free(samples);
    free(c.sbuf);
    free(c.rbuf);
    MPI_Finalize();
    return status;
}
