/* One-sided communication (MPI-2 thesis 3.4): rank 0 is the origin, rank 1
 * the target, window of MPI_Win_allocate (--flavor create: MPI_Win_create).
 *
 *   latency    time of one operation and its completion, averaged over a run
 *              of back-to-back iterations, median over repetitions:
 *                put/get/acc/fop + MPI_Win_flush inside one lock_all epoch
 *                ("sync":"flush": passive target, the OSU default),
 *                lock + put + unlock per iteration ("sync":"lock"),
 *                put + MPI_Win_fence on both ranks ("sync":"fence");
 *              the target waits in MPI_Barrier meanwhile (inside MPI).
 *   bandwidth  --window puts (or gets) back to back, then one flush (passive)
 *              or fence: bytes * window / time.
 *   epoch      lock, --window puts of one size, unlock ("op":"epoch"): what
 *              batching the operations of an epoch into one message saves
 *              (DCFA_RMA_BATCH; thesis 3.3.3), time per epoch.
 *   overlap    the target computes --compute-ms without any MPI call while
 *              the origin does lock / put / unlock: its time ("busy") against
 *              the same epoch with the target idle inside MPI ("idle");
 *              overlap% = 100 * (1 - (busy - idle) / compute), clamped to
 *              0..100: 100 when the transfer needs nothing from the target,
 *              0 when it waits for the whole computation (thesis 3.4.3).
 * Rank 0 prints one JSON line per point. Options: --sizes --reps --iters
 * --window --compute-ms --overlap-sizes --overlap-reps --max-ms --flavor
 * --only lat,bw,overlap */
#include "bench_common.h"

static volatile double rb_sink;

static void rb_compute_s(double s)
{
    double t0 = bc_mono(), x = 1.0;
    while (bc_mono() - t0 < s)
        for (int i = 0; i < 2000; i++)
            x = x * 0.999999 + 1e-7;
    rb_sink = x;
}

typedef struct {
    int rank;
    const char *flavor;
    MPI_Win win;
    char *base; /* my window memory */
    char *buf;  /* origin buffer */
    long winbytes;
    int reps, warmup;
    long iters;
    double max_s;
} rb_ctx;

enum { OP_PUT, OP_GET, OP_ACC, OP_FOP };
static const char *op_name[] = {"put", "get", "acc", "fop"};

/* one operation of `bytes` to rank 1 at offset 0 */
static void rb_op(rb_ctx *c, int op, long bytes)
{
    switch (op) {
    case OP_PUT:
        MPI_Put(c->buf, (int)bytes, MPI_BYTE, 1, 0, (int)bytes, MPI_BYTE, c->win);
        break;
    case OP_GET:
        MPI_Get(c->buf, (int)bytes, MPI_BYTE, 1, 0, (int)bytes, MPI_BYTE, c->win);
        break;
    case OP_ACC:
        MPI_Accumulate(c->buf, (int)(bytes / 8), MPI_DOUBLE, 1, 0, (int)(bytes / 8), MPI_DOUBLE,
                       MPI_SUM, c->win);
        break;
    case OP_FOP:
        MPI_Fetch_and_op(c->buf, c->buf + 8, MPI_LONG, 1, 0, MPI_SUM, c->win);
        break;
    }
}

/* seconds per iteration of `iters` (rank 0's clock), both ranks take part */
static double rb_lat_run(rb_ctx *c, int op, const char *sync, long bytes, long iters)
{
    double t = 0;
    if (!strcmp(sync, "fence")) {
        MPI_Win_fence(0, c->win);
        double t0 = MPI_Wtime();
        for (long i = 0; i < iters; i++) {
            if (c->rank == 0)
                rb_op(c, op, bytes);
            MPI_Win_fence(0, c->win);
        }
        t = (MPI_Wtime() - t0) / (double)iters;
        return t;
    }
    if (c->rank == 0) {
        double t0 = MPI_Wtime();
        if (!strcmp(sync, "flush")) {
            MPI_Win_lock_all(0, c->win);
            t0 = MPI_Wtime();
            for (long i = 0; i < iters; i++) {
                rb_op(c, op, bytes);
                MPI_Win_flush(1, c->win);
            }
            t = MPI_Wtime() - t0;
            MPI_Win_unlock_all(c->win);
        } else {
            for (long i = 0; i < iters; i++) {
                MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, c->win);
                rb_op(c, op, bytes);
                MPI_Win_unlock(1, c->win);
            }
            t = MPI_Wtime() - t0;
        }
        t /= (double)iters;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return t;
}

static void rb_latency(rb_ctx *c, int op, const char *sync, long bytes)
{
    long iters = 2; /* a slow library must not spend --iters on its first try */
    /* calibrate: a repetition should take about 20 ms */
    for (int w = 0; w < c->warmup; w++) {
        double t = rb_lat_run(c, op, sync, bytes, iters);
        MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        long want = t > 0 ? (long)(0.02 / t) : c->iters;
        iters = bc_clamp(want, 2, c->iters);
    }
    double v[256];
    int n = 0;
    double tb = MPI_Wtime();
    while (bc_more(n, c->reps < 256 ? c->reps : 256, tb, c->max_s))
        v[n++] = rb_lat_run(c, op, sync, bytes, iters);
    if (c->rank == 0) {
        bc_stats s = bc_stats_of(v, n);
        printf("{\"bench\":\"rma\",\"flavor\":\"%s\",\"op\":\"%s\",\"sync\":\"%s\",\"bytes\":%ld,"
               "\"ranks\":2,\"iters\":%ld,\"reps\":%d,",
               c->flavor, op_name[op], sync, bytes, iters, n);
        bc_print_stats("lat_us", s, 1e6);
        printf("}\n");
        fflush(stdout);
    }
}

static double rb_bw_run(rb_ctx *c, int op, const char *sync, long bytes, int window)
{
    double t = 0;
    if (!strcmp(sync, "fence")) {
        MPI_Win_fence(0, c->win);
        double t0 = MPI_Wtime();
        if (c->rank == 0)
            for (int i = 0; i < window; i++)
                rb_op(c, op, bytes);
        MPI_Win_fence(0, c->win);
        return MPI_Wtime() - t0;
    }
    if (c->rank == 0) {
        MPI_Win_lock_all(0, c->win);
        double t0 = MPI_Wtime();
        for (int i = 0; i < window; i++)
            rb_op(c, op, bytes);
        MPI_Win_flush(1, c->win);
        t = MPI_Wtime() - t0;
        MPI_Win_unlock_all(c->win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return t;
}

static void rb_bandwidth(rb_ctx *c, int op, const char *sync, long bytes, int window)
{
    long total = bytes * window;
    if (total > (32L << 20))
        window = (int)bc_clamp((32L << 20) / bytes, 1, window);
    for (int w = 0; w < c->warmup; w++)
        rb_bw_run(c, op, sync, bytes, window);
    double v[256];
    int n = 0;
    double tb = MPI_Wtime();
    while (bc_more(n, c->reps < 256 ? c->reps : 256, tb, c->max_s)) {
        double t = rb_bw_run(c, op, sync, bytes, window);
        v[n++] = t > 0 ? (double)bytes * window / t / 1e6 : 0;
    }
    if (c->rank == 0) {
        bc_stats s = bc_stats_of(v, n);
        printf(
            "{\"bench\":\"rma\",\"flavor\":\"%s\",\"op\":\"%s_bw\",\"sync\":\"%s\",\"bytes\":%ld,"
            "\"ranks\":2,\"window\":%d,\"reps\":%d,",
            c->flavor, op_name[op], sync, bytes, window, n);
        bc_print_stats("mbps", s, 1);
        printf("}\n");
        fflush(stdout);
    }
}

/* lock, `window` puts, unlock: seconds per epoch (rank 0) */
static double rb_epoch_run(rb_ctx *c, long bytes, int window, long iters)
{
    double t = 0;
    if (c->rank == 0) {
        double t0 = MPI_Wtime();
        for (long it = 0; it < iters; it++) {
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, c->win);
            for (int i = 0; i < window; i++)
                MPI_Put(c->buf, (int)bytes, MPI_BYTE, 1, (MPI_Aint)(i * bytes % c->winbytes),
                        (int)bytes, MPI_BYTE, c->win);
            MPI_Win_unlock(1, c->win);
        }
        t = (MPI_Wtime() - t0) / (double)iters;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return t;
}

static void rb_epoch(rb_ctx *c, long bytes, int window)
{
    if (bytes * window > c->winbytes)
        window = (int)bc_clamp(c->winbytes / (bytes ? bytes : 1), 1, window);
    long iters = 1;
    for (int w = 0; w < c->warmup; w++) {
        double t = rb_epoch_run(c, bytes, window, iters);
        MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        iters = bc_clamp(t > 0 ? (long)(0.02 / t) : iters, 1, c->iters);
    }
    double v[256];
    int n = 0;
    double tb = MPI_Wtime();
    while (bc_more(n, c->reps < 256 ? c->reps : 256, tb, c->max_s))
        v[n++] = rb_epoch_run(c, bytes, window, iters);
    if (c->rank == 0) {
        bc_stats s = bc_stats_of(v, n);
        printf(
            "{\"bench\":\"rma\",\"flavor\":\"%s\",\"op\":\"epoch\",\"sync\":\"lock\",\"bytes\":%ld,"
            "\"ranks\":2,\"window\":%d,\"reps\":%d,",
            c->flavor, bytes, window, n);
        bc_print_stats("lat_us", s, 1e6);
        printf("}\n");
        fflush(stdout);
    }
}

/* one lock/put/unlock epoch by rank 0 while rank 1 computes (busy) or waits in MPI */
static double rb_overlap_run(rb_ctx *c, long bytes, double compute_s, int busy)
{
    double t = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (c->rank == 1) {
        if (busy)
            rb_compute_s(compute_s);
    } else {
        if (busy)
            rb_compute_s(0.02); /* the target is computing by now */
        double t0 = MPI_Wtime();
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, c->win);
        MPI_Put(c->buf, (int)bytes, MPI_BYTE, 1, 0, (int)bytes, MPI_BYTE, c->win);
        MPI_Win_unlock(1, c->win);
        t = MPI_Wtime() - t0;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return t;
}

static void rb_overlap(rb_ctx *c, long bytes, double compute_s, int reps)
{
    double idle[64], busy[64];
    int n = 0;
    rb_overlap_run(c, bytes, compute_s, 0); /* warm-up */
    for (int i = 0; i < 5; i++)
        idle[i] = rb_overlap_run(c, bytes, compute_s, 0);
    bc_stats si = bc_stats_of(idle, 5);
    double tb = MPI_Wtime();
    while (bc_more(n, reps < 64 ? reps : 64, tb, 0))
        busy[n++] = rb_overlap_run(c, bytes, compute_s, 1);
    if (c->rank == 0) {
        bc_stats sb = bc_stats_of(busy, n);
        double pct = 100.0 * (1.0 - (sb.median - si.median) / compute_s);
        pct = pct < 0 ? 0 : pct > 100 ? 100 : pct;
        printf("{\"bench\":\"rma\",\"flavor\":\"%s\",\"op\":\"overlap\",\"sync\":\"lock\","
               "\"bytes\":%ld,"
               "\"ranks\":2,\"compute_ms\":%.0f,\"reps\":%d,\"idle_ms_med\":%.6g,",
               c->flavor, bytes, compute_s * 1e3, n, si.median * 1e3);
        bc_print_stats("busy_ms", sb, 1e3);
        printf(",\"overlap_pct\":%.2f}\n", pct);
        fflush(stdout);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bc_settle(argc, argv);
    rb_ctx c = {0};
    int n;
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n != 2)
        return bc_fail(c.rank, "rma", "needs exactly 2 ranks");
    long sizes[BC_MAX_SIZES];
    int nsizes = bc_sizes(argc, argv, sizes, 0, 8, 1L << 20);
    c.reps = (int)bc_arg_long(argc, argv, "--reps", 10);
    c.warmup = (int)bc_arg_long(argc, argv, "--warmup", 2);
    c.iters = bc_arg_long(argc, argv, "--iters", 1000);
    c.max_s = (double)bc_arg_long(argc, argv, "--max-ms", 0) / 1e3;
    int window = (int)bc_arg_long(argc, argv, "--window", 64);
    double compute_s = (double)bc_arg_long(argc, argv, "--compute-ms", 1000) / 1e3;
    int ov_reps = (int)bc_arg_long(argc, argv, "--overlap-reps", 3);
    const char *only = bc_arg_str(argc, argv, "--only", "lat,bw,overlap");
    const char *flavor = bc_arg_str(argc, argv, "--flavor", "allocate");
    c.flavor = !strcmp(flavor, "create") ? "create" : "allocate";
    long ovs[BC_MAX_SIZES];
    int novs = 0;
    {
        const char *l = bc_arg_str(argc, argv, "--overlap-sizes", "8,1048576");
        char tmp[512];
        snprintf(tmp, sizeof tmp, "%s", l);
        for (char *tok = strtok(tmp, ","); tok && novs < BC_MAX_SIZES; tok = strtok(NULL, ","))
            ovs[novs++] = bc_parse_size(tok);
    }
    long maxsize = bc_max_of(sizes, nsizes);
    for (int i = 0; i < novs; i++)
        if (ovs[i] > maxsize)
            maxsize = ovs[i];
    if (maxsize < 64)
        maxsize = 64;
    c.winbytes = maxsize;
    c.buf = bc_alloc((size_t)maxsize);
    double *d = (double *)c.buf;
    for (long i = 0; i < maxsize / 8; i++)
        d[i] = 1.0;
    if (!strcmp(flavor, "create")) {
        c.base = bc_alloc((size_t)maxsize);
        MPI_Win_create(c.base, maxsize, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &c.win);
    } else {
        MPI_Win_allocate(maxsize, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &c.base, &c.win);
        memset(c.base, 0, (size_t)maxsize);
    }
    if (strstr(only, "lat")) {
        static const struct {
            int op;
            const char *sync;
        } lat[] = {{OP_PUT, "flush"}, {OP_GET, "flush"}, {OP_ACC, "flush"}, {OP_PUT, "lock"},
                   {OP_GET, "lock"},  {OP_PUT, "fence"}, {OP_GET, "fence"}};
        for (size_t k = 0; k < sizeof lat / sizeof lat[0]; k++)
            for (int i = 0; i < nsizes; i++)
                if (sizes[i] >= 8 && (lat[k].op != OP_ACC || sizes[i] % 8 == 0))
                    rb_latency(&c, lat[k].op, lat[k].sync, sizes[i]);
        rb_latency(&c, OP_FOP, "flush", 8);
    }
    if (strstr(only, "bw"))
        for (int i = 0; i < nsizes; i++) {
            rb_bandwidth(&c, OP_PUT, "flush", sizes[i], window);
            rb_bandwidth(&c, OP_GET, "flush", sizes[i], window);
            rb_bandwidth(&c, OP_PUT, "fence", sizes[i], window);
        }
    if (strstr(only, "epoch"))
        for (int i = 0; i < nsizes; i++)
            rb_epoch(&c, sizes[i], window);
    if (strstr(only, "overlap"))
        for (int i = 0; i < novs; i++)
            rb_overlap(&c, ovs[i], compute_s, ov_reps);
    MPI_Win_free(&c.win);
    if (!strcmp(flavor, "create"))
        free(c.base);
    free(c.buf);
    MPI_Finalize();
    return 0;
}
