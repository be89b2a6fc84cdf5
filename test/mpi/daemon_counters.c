/* The assist daemon is never on the data path (docs/launcher.md "Endpoints and isolation"):
 * rank 0 sends DAEMON_COUNTERS_MB MiB (default 1024) to rank 1 in 4 MiB messages, and each of
 * the two reads its own daemon's counters (its parent: the daemon that started it) before and
 * after: CPU time (utime + stime of /proc/<pid>/stat) must grow by less than 50 ms, and the
 * bytes it read and wrote (rchar, wchar of /proc/<pid>/io) by less than 1 MiB each. The
 * connection is made (a first message both ways) before the first reading, so the handover
 * itself is not counted. Each rank prints its figures on stderr. Meant for isolated ranks on two
 * hosts (test/hosts/run_multihost.sh, stage isolate) and on one (the test list). */
#include "mtest.h"
#include <unistd.h>

typedef struct {
    long long ticks, rchar, wchar;
} counters;

static int read_counters(pid_t pid, counters *c)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *p = strrchr(buf, ')'); /* the name may hold blanks: fields after it */
    unsigned long long ut = 0, st = 0;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return -1;
    c->ticks = (long long)(ut + st);
    snprintf(path, sizeof path, "/proc/%d/io", (int)pid);
    if (!(f = fopen(path, "r")))
        return -1;
    c->rchar = c->wchar = -1;
    while (fgets(buf, sizeof buf, f)) {
        sscanf(buf, "rchar: %lld", &c->rchar);
        sscanf(buf, "wchar: %lld", &c->wchar);
    }
    fclose(f);
    return c->rchar < 0 || c->wchar < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mb = getenv("DAEMON_COUNTERS_MB");
    long total_mb = mb ? atol(mb) : 1024;
    const int chunk = 4 << 20;
    long nmsg = total_mb / 4 > 0 ? total_mb / 4 : 1;
    char *buf = malloc((size_t)chunk);
    if (!buf || size < 2)
        mtest_fail("needs 2 ranks and 4 MiB");
    memset(buf, rank + 1, (size_t)chunk);
    pid_t daemon = getppid();
    counters before = {0}, after = {0};
    int peer = rank == 0 ? 1 : 0;
    if (rank < 2) /* the connection first: the handover is not what is measured */
        MPI_Sendrecv_replace(buf, 1, MPI_CHAR, peer, 0, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank < 2 && read_counters(daemon, &before) != 0)
        mtest_fail("cannot read /proc/%d/stat and io (the daemon's)", (int)daemon);
    double t0 = MPI_Wtime();
    for (long i = 0; i < nmsg && rank < 2; i++) {
        if (rank == 0)
            MPI_Send(buf, chunk, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
        else
            MPI_Recv(buf, chunk, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (rank < 2) /* everything arrived */
        MPI_Sendrecv_replace(buf, 1, MPI_CHAR, peer, 2, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    double secs = MPI_Wtime() - t0;
    if (rank < 2 && read_counters(daemon, &after) != 0)
        mtest_fail("cannot read /proc/%d/stat and io (the daemon's)", (int)daemon);
    if (rank < 2) {
        long hz = sysconf(_SC_CLK_TCK);
        double ms = 1000.0 * (double)(after.ticks - before.ticks) / (double)hz;
        long long r = after.rchar - before.rchar, w = after.wchar - before.wchar;
        char host[64] = "";
        gethostname(host, sizeof host - 1);
        fprintf(stderr,
                "rank %d on %s: %ld MiB in %.2f s (%.0f MB/s); its daemon (pid %d): cpu +%.0f ms, "
                "rchar +%lld B, wchar +%lld B\n",
                rank, host, nmsg * 4, secs, (double)nmsg * chunk / secs / 1e6, (int)daemon, ms, r,
                w);
        mtest_check(ms < 50.0, "rank %d: its daemon used %.0f ms of CPU during the transfer", rank,
                    ms);
        mtest_check(r < (1 << 20) && w < (1 << 20),
                    "rank %d: its daemon read %lld and wrote %lld bytes during the transfer", rank,
                    r, w);
    }
    free(buf);
    return mtest_finalize();
}
