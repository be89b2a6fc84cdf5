/* Dynamic processes (MPI-2 thesis 2.4): the cost of MPI_Comm_spawn and of
 * point-to-point messages over the inter-communicator it makes.  One program,
 * the mode chosen by --mode; the children are this same binary, started with
 * "--child KIND" (the parent finds its own path in /proc/self/exe).
 *
 *   --mode latency --children N   (1 rank) spawn N children, repeatedly:
 *        spawn_ms  from just before MPI_Comm_spawn until it returns (parent);
 *        ready_ms  from the same instant until the first message of every
 *                  child, sent right after its MPI_Init returned, has arrived
 *                  at the parent: spawn "to MPI_Init's return on both sides";
 *        start_ms  until the last child entered main (same clock: one host);
 *        init_ms   the slowest child's MPI_Init;
 *        disc_ms   the parent's MPI_Comm_disconnect afterwards.
 *        The children disconnect and exit; the parent waits --gap-ms (20)
 *        before the next spawn, so exiting children do not share its cores.
 *        The first (warm-up) spawn is printed as *_first: it also pays for
 *        the parent's first contact with another job.
 *   --mode rate                   (1 rank) spawns per second over a loop of
 *        --count spawn + disconnect of 1 child (the child only disconnects);
 *        a repetition stops early after --max-ms, never below 3 spawns.
 *   --mode inter                  (1 rank) spawn 1 child, ping-pong between
 *        the parent and it over the inter-communicator
 *   --mode world                  (2 ranks) the same ping-pong between ranks
 *        0 and 1 over MPI_COMM_WORLD, to compare with inter
 *
 * Options: --reps R  --warmup W  --max-ms T (per child count / size / rate
 * repetition, at least 3 repetitions)  --sizes a,b,..  --iters MAX
 * --budget BYTES  --count K  --gap-ms G.
 * MPI_Comm_spawn's errors return (MPI_ERRORS_RETURN on MPI_COMM_SELF): a
 * library that cannot spawn prints, per measurement, a line with
 * "unsupported":1 and its error string, and the job ends cleanly (status 0,
 * as overlap does); the driver records it as "cannot spawn".  One JSON line
 * per measurement on rank 0's stdout. */
#define _GNU_SOURCE
#include "bench_common.h"

#include <limits.h>
#include <unistd.h>

#define TAG_HELLO 1
#define TAG_MORE 2
#define TAG_PP 3

static char self_path[PATH_MAX];

/* Prints the spawn failure as a JSON line (what: the fields naming the
 * measurement that could not be made); the caller then ends the job. */
static void spawn_failed_line(const char *what, int err)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(err, msg, &len);
    for (char *p = msg; *p; p++)
        if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20)
            *p = ' ';
    printf("{\"bench\":\"spawn\",%s,\"unsupported\":1,\"error\":\"MPI_Comm_spawn: %s\"}\n", what, msg);
    fflush(stdout);
}

static int spawn_failed(const char *mode, int children, int err)
{
    char what[128];
    snprintf(what, sizeof what, "\"mode\":\"%s\",\"children\":%d", mode, children);
    spawn_failed_line(what, err);
    return 0;
}

static int spawn_children(const char *kind, int n, char **pass, int npass, MPI_Comm *inter)
{
    char *args[64];
    int k = 0;
    args[k++] = "--child";
    args[k++] = (char *)kind;
    for (int i = 0; i < npass && k < 63; i++)
        args[k++] = pass[i];
    args[k] = NULL;
    int errs[64];
    int err = MPI_Comm_spawn(self_path, args, n, MPI_INFO_NULL, 0, MPI_COMM_SELF, inter,
                             n <= 64 ? errs : MPI_ERRCODES_IGNORE);
    if (err == MPI_SUCCESS) /* only the spawn itself may fail quietly */
        MPI_Comm_set_errhandler(*inter, MPI_ERRORS_ARE_FATAL);
    return err;
}

static void print_stat(const char *name, double *v, int n, double first)
{
    bc_stats s = bc_stats_of(v, n);
    printf(",\"%s_min\":%.6g,", name, s.min * 1e3);
    bc_print_stats(name, s, 1e3);
    printf(",\"%s_first\":%.6g", name, first * 1e3);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Whether the leader (rank 0 of a 2-process exchange) wants another
 * repetition; the decision crosses to the peer as one int, outside the timed
 * region, over whatever communicator joins them (world or inter). */
static int more_pp(MPI_Comm comm, int leader, int peer, int done, int reps, double tb, double max_s)
{
    int more = 0;
    if (leader) {
        more = done < reps && (done < 3 || max_s <= 0 || MPI_Wtime() - tb < max_s);
        MPI_Send(&more, 1, MPI_INT, peer, TAG_MORE, comm);
    } else {
        MPI_Recv(&more, 1, MPI_INT, peer, TAG_MORE, comm, MPI_STATUS_IGNORE);
    }
    return more;
}

/* The ping-pong of pingpong.c between this process and peer on comm. */
static void pingpong(MPI_Comm comm, int leader, int peer, const char *label, int argc, char **argv)
{
    long sizes[BC_MAX_SIZES];
    int nsizes = bc_sizes(argc, argv, sizes, 0, 8, 64 * 1024);
    int reps = (int)bc_arg_long(argc, argv, "--reps", 20);
    int warmup = (int)bc_arg_long(argc, argv, "--warmup", 2);
    long max_iters = bc_arg_long(argc, argv, "--iters", 1000);
    long budget = bc_arg_long(argc, argv, "--budget", 16L << 20);
    double max_s = (double)bc_arg_long(argc, argv, "--max-ms", 0) / 1e3;
    char *buf = bc_alloc((size_t)bc_max_of(sizes, nsizes));
    double *samples = calloc((size_t)reps + 1, sizeof *samples);

    for (int k = 0; k < nsizes; k++) {
        int size = (int)sizes[k];
        long iters = bc_clamp(budget / (size > 0 ? size : 1), 2, max_iters);
        double tb = MPI_Wtime();
        int rep;
        for (rep = -warmup; rep < 0 || more_pp(comm, leader, peer, rep, reps, tb, max_s); rep++) {
            double t0 = MPI_Wtime();
            for (long i = 0; i < iters; i++) {
                if (leader) {
                    MPI_Send(buf, size, MPI_BYTE, peer, TAG_PP, comm);
                    MPI_Recv(buf, size, MPI_BYTE, peer, TAG_PP, comm, MPI_STATUS_IGNORE);
                } else {
                    MPI_Recv(buf, size, MPI_BYTE, peer, TAG_PP, comm, MPI_STATUS_IGNORE);
                    MPI_Send(buf, size, MPI_BYTE, peer, TAG_PP, comm);
                }
            }
            if (rep >= 0)
                samples[rep] = (MPI_Wtime() - t0) / (double)iters;
        }
        if (leader) {
            bc_stats s = bc_stats_of(samples, rep);
            printf("{\"bench\":\"spawn\",\"mode\":\"pt2pt\",\"comm\":\"%s\",\"bytes\":%d,\"iters\":%ld,"
                   "\"reps\":%d,",
                   label, size, iters, rep);
            bc_print_stats("rtt_us", s, 1e6);
            putchar(',');
            bc_print_stats("lat_us", s, 0.5e6);
            printf("}\n");
            fflush(stdout);
        }
    }
    free(samples);
    free(buf);
}

/* A spawned process: "hello" sends its clock readings to the parent's rank 0
 * right after MPI_Init, "quiet" sends nothing, "pp" ping-pongs; then each
 * disconnects and ends. */
static int child(const char *kind, double t_main, double t_init, int argc, char **argv)
{
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent == MPI_COMM_NULL) {
        fprintf(stderr, "spawn: --child given but MPI_Comm_get_parent is MPI_COMM_NULL\n");
        MPI_Finalize();
        return 1;
    }
    if (strcmp(kind, "hello") == 0) {
        double t[2] = {t_main, t_init};
        MPI_Send(t, 2, MPI_DOUBLE, 0, TAG_HELLO, parent);
    } else if (strcmp(kind, "pp") == 0) {
        pingpong(parent, 0, 0, "inter", argc, argv);
    }
    MPI_Comm_disconnect(&parent);
    MPI_Finalize();
    return 0;
}

static int mode_latency(int argc, char **argv)
{
    int n = (int)bc_arg_long(argc, argv, "--children", 1);
    int reps = (int)bc_arg_long(argc, argv, "--reps", 10);
    int warmup = (int)bc_arg_long(argc, argv, "--warmup", 1);
    double max_s = (double)bc_arg_long(argc, argv, "--max-ms", 0) / 1e3;
    long gap = bc_arg_long(argc, argv, "--gap-ms", 20);
    if (n < 1 || n > 64 || warmup < 1)
        return bc_fail(0, "spawn", "--children must be 1..64 and --warmup at least 1");
    double *sp = calloc((size_t)reps, sizeof(double)), *rd = calloc((size_t)reps, sizeof(double));
    double *st = calloc((size_t)reps, sizeof(double)), *in = calloc((size_t)reps, sizeof(double));
    double *dc = calloc((size_t)reps, sizeof(double));
    double f_sp = 0, f_rd = 0, f_st = 0, f_in = 0, f_dc = 0;
    double tb = bc_mono();
    int rep;
    for (rep = -warmup; rep < reps && (rep < 3 || max_s <= 0 || bc_mono() - tb < max_s); rep++) {
        MPI_Comm inter;
        double t0 = bc_mono();
        int err = spawn_children("hello", n, NULL, 0, &inter);
        double t1 = bc_mono();
        if (err != MPI_SUCCESS)
            return spawn_failed("latency", n, err);
        double start = 0, init = 0, t[2];
        for (int i = 0; i < n; i++) {
            MPI_Recv(t, 2, MPI_DOUBLE, MPI_ANY_SOURCE, TAG_HELLO, inter, MPI_STATUS_IGNORE);
            if (t[0] - t0 > start)
                start = t[0] - t0;
            if (t[1] - t[0] > init)
                init = t[1] - t[0];
        }
        double t2 = bc_mono();
        MPI_Comm_disconnect(&inter);
        double t3 = bc_mono();
        if (rep < 0) {
            if (rep == -warmup)
                f_sp = t1 - t0, f_rd = t2 - t0, f_st = start, f_in = init, f_dc = t3 - t2;
        } else {
            sp[rep] = t1 - t0, rd[rep] = t2 - t0, st[rep] = start, in[rep] = init, dc[rep] = t3 - t2;
        }
        sleep_ms(gap);
        if (rep < 0)
            tb = bc_mono();
    }
    printf("{\"bench\":\"spawn\",\"mode\":\"latency\",\"children\":%d,\"reps\":%d", n, rep);
    print_stat("spawn_ms", sp, rep, f_sp);
    print_stat("ready_ms", rd, rep, f_rd);
    print_stat("start_ms", st, rep, f_st);
    print_stat("init_ms", in, rep, f_in);
    print_stat("disc_ms", dc, rep, f_dc);
    printf("}\n");
    fflush(stdout);
    free(sp), free(rd), free(st), free(in), free(dc);
    return 0;
}

static int mode_rate(int argc, char **argv)
{
    long count = bc_arg_long(argc, argv, "--count", 20);
    int reps = (int)bc_arg_long(argc, argv, "--reps", 3);
    int warmup = (int)bc_arg_long(argc, argv, "--warmup", 1);
    double max_s = (double)bc_arg_long(argc, argv, "--max-ms", 0) / 1e3;
    double *rate = calloc((size_t)reps + 1, sizeof(double));
    long done_total = 0;
    for (int w = 0; w < warmup; w++) {
        MPI_Comm inter;
        int err = spawn_children("quiet", 1, NULL, 0, &inter);
        if (err != MPI_SUCCESS)
            return spawn_failed("rate", 1, err);
        MPI_Comm_disconnect(&inter);
    }
    int rep;
    for (rep = 0; rep < reps; rep++) {
        double t0 = bc_mono();
        long i;
        for (i = 0; i < count && (i < 3 || max_s <= 0 || bc_mono() - t0 < max_s); i++) {
            MPI_Comm inter;
            int err = spawn_children("quiet", 1, NULL, 0, &inter);
            if (err != MPI_SUCCESS)
                return spawn_failed("rate", 1, err);
            MPI_Comm_disconnect(&inter);
        }
        rate[rep] = (double)i / (bc_mono() - t0);
        done_total += i;
    }
    bc_stats s = bc_stats_of(rate, rep);
    printf("{\"bench\":\"spawn\",\"mode\":\"rate\",\"children\":1,\"reps\":%d,\"spawns\":%ld,"
           "\"rate_min\":%.6g,\"rate_max\":%.6g,",
           rep, done_total, s.min, s.max);
    bc_print_stats("rate", s, 1.0);
    printf("}\n");
    fflush(stdout);
    free(rate);
    return 0;
}

static int mode_inter(int argc, char **argv)
{
    MPI_Comm inter;
    int err = spawn_children("pp", 1, argv + 1, argc - 1, &inter);
    if (err != MPI_SUCCESS) {
        long sizes[BC_MAX_SIZES];
        int nsizes = bc_sizes(argc, argv, sizes, 0, 8, 64 * 1024);
        for (int k = 0; k < nsizes; k++) {
            char what[128];
            snprintf(what, sizeof what, "\"mode\":\"pt2pt\",\"comm\":\"inter\",\"bytes\":%ld", sizes[k]);
            spawn_failed_line(what, err);
        }
        return 0;
    }
    pingpong(inter, 1, 0, "inter", argc, argv);
    MPI_Comm_disconnect(&inter);
    return 0;
}

int main(int argc, char **argv)
{
    double t_main = bc_mono();
    MPI_Init(&argc, &argv);
    double t_init = bc_mono();
    const char *kind = bc_arg_str(argc, argv, "--child", NULL);
    if (kind)
        return child(kind, t_main, t_init, argc, argv);

    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    ssize_t len = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
    if (len <= 0)
        snprintf(self_path, sizeof self_path, "%s", argv[0]);
    else
        self_path[len] = 0;

    const char *mode = bc_arg_str(argc, argv, "--mode", "latency");
    int rc;
    if (strcmp(mode, "world") == 0) {
        if (nranks != 2)
            return bc_fail(rank, "spawn", "--mode world needs 2 ranks");
        pingpong(MPI_COMM_WORLD, rank == 0, 1 - rank, "world", argc, argv);
        rc = 0;
    } else {
        if (nranks != 1)
            return bc_fail(rank, "spawn", "--mode latency, rate and inter need 1 rank");
        if (strcmp(mode, "latency") == 0)
            rc = mode_latency(argc, argv);
        else if (strcmp(mode, "rate") == 0)
            rc = mode_rate(argc, argv);
        else if (strcmp(mode, "inter") == 0)
            rc = mode_inter(argc, argv);
        else
            return bc_fail(rank, "spawn", "--mode must be latency, rate, inter or world");
    }
    MPI_Finalize();
    return rc;
}
