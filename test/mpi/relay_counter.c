/* Is the assist daemon on the data path? Rank 0 sends 64 MiB to rank 1 (1 MiB messages) and
 * reads its daemon's /proc/<pid>/io before and after: with mpirun --relay (RELAY_EXPECT=relay)
 * the daemon's wchar must grow by at least the bytes moved, since it forwards them; with sockets
 * handed over directly (RELAY_EXPECT=direct) by less than 1 MiB. Ranks 0 and 1 each check their
 * own daemon (across hosts, test/hosts/run_multihost.sh stage isolate, both relay). */
#include "mtest.h"

#define CHUNK  (1 << 20)
#define NCHUNK 64

/* the wchar of process pid (bytes it passed to write and its kin), or -1 */
static long long io_wchar(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/io", (int)pid);
    return mtest_proc_value(path, "wchar");
}

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *expect = getenv("RELAY_EXPECT");
    int relay = expect && !strcmp(expect, "relay");
    char *buf = malloc(CHUNK);
    /* the connection first, so that its handover is not counted */
    if (rank < 2)
        MPI_Sendrecv(buf, 1, MPI_CHAR, 1 - rank, 0, buf + 1, 1, MPI_CHAR, 1 - rank, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    long long before = io_wchar(getppid());
    for (int i = 0; rank < 2 && i < NCHUNK; i++) {
        if (rank == 0) {
            mtest_fill(buf, CHUNK, 0, i);
            MPI_Send(buf, CHUNK, MPI_CHAR, 1, i, MPI_COMM_WORLD);
        } else {
            MPI_Recv(buf, CHUNK, MPI_CHAR, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (i % 16 == 0)
                mtest_verify("chunk", buf, CHUNK, 0, i);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    long long after = io_wchar(getppid());
    /* each of the two checks its own daemon (one host: the same one; across hosts under
     * --relay both daemons forward the bytes, one from its rank's socket pair onto TCP, the
     * other from TCP into its rank's) */
    if (rank < 2) {
        long long moved = (long long)CHUNK * NCHUNK, grew = after - before;
        mtest_check(before >= 0 && after >= 0, "cannot read /proc/%d/io", (int)getppid());
        if (relay)
            mtest_check(grew >= moved,
                        "relay: rank %d's daemon wrote %lld bytes, less than the %lld moved", rank,
                        grew, moved);
        else
            mtest_check(grew < CHUNK, "direct: rank %d's daemon wrote %lld bytes while %lld moved",
                        rank, grew, moved);
        fprintf(stderr, "rank %d: daemon wchar grew by %lld bytes for %lld moved (%s)\n", rank,
                grew, moved, relay ? "relay" : "direct");
    }
    free(buf);
    return mtest_finalize();
}
