/* Every rank reaches every other at the same moment, first contact included (each Isends a
 * stream of messages to all peers before receiving any): over sock both ends of each pair open
 * a socket at once, and the socket the lower gid opened must end up carrying both directions
 * (docs/fabric.md "sock": SWITCH/SWITCHED) with nothing reordered or lost on the way.
 *
 * Checks: each peer's stream arrives whole and in order (sizes alternating between eager and
 * rendezvous, the payload naming its sequence number); then, with SOCK_SIMOPEN_COUNT=1 (sock
 * runs), the process holds exactly one more connected stream socket per peer than after
 * MPI_Init: two per peer when both opened sockets stay. */
#include "mtest.h"

#include <dirent.h>
#include <unistd.h>

#define NMSG 40
#define BIG  (96 << 10)

/* inodes of this process's socket descriptors */
static int my_socket_inodes(unsigned long *ino, int max)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        char path[300], link[64];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t k = readlink(path, link, sizeof link - 1);
        if (k <= 0)
            continue;
        link[k] = 0;
        if (n < max && sscanf(link, "socket:[%lu]", &ino[n]) == 1)
            n++;
    }
    closedir(d);
    return n;
}

static int mine(unsigned long x, const unsigned long *ino, int n)
{
    for (int i = 0; i < n; i++)
        if (ino[i] == x)
            return 1;
    return 0;
}

/* connected stream sockets of this process: TCP in state ESTABLISHED (01), Unix stream
 * (type 0001) in state connected (03) */
static int connected_streams(void)
{
    unsigned long ino[512];
    int n = my_socket_inodes(ino, 512), count = 0;
    if (n < 0)
        return -1;
    static const char *const tcp[] = {"/proc/self/net/tcp", "/proc/self/net/tcp6"};
    char line[512];
    for (int t = 0; t < 2; t++) {
        FILE *f = fopen(tcp[t], "r");
        if (!f)
            continue;
        while (fgets(line, sizeof line, f)) {
            char st[8];
            unsigned long x;
            if (sscanf(line, "%*s %*s %*s %7s %*s %*s %*s %*s %*s %lu", st, &x) == 2 &&
                !strcmp(st, "01") && mine(x, ino, n))
                count++;
        }
        fclose(f);
    }
    FILE *f = fopen("/proc/self/net/unix", "r");
    if (f) {
        while (fgets(line, sizeof line, f)) {
            unsigned type, state;
            unsigned long x;
            if (sscanf(line, "%*s %*s %*s %*s %x %x %lu", &type, &state, &x) == 3 && type == 1 &&
                state == 3 && mine(x, ino, n))
                count++;
        }
        fclose(f);
    }
    return count;
}

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int before = connected_streams();
    int npeer = size - 1;
    unsigned char *sbuf = mtest_malloc((size_t)NMSG * BIG);
    unsigned char *rbuf = mtest_malloc((size_t)npeer * NMSG * BIG);
    MPI_Request *req = mtest_malloc(sizeof(MPI_Request) * (size_t)(2 * npeer * NMSG));
    int nreq = 0;
    for (int i = 0; i < NMSG; i++) {
        size_t len = i % 3 == 2 ? BIG : (size_t)(8 << (i % 6));
        mtest_fill(sbuf + (size_t)i * BIG, len, rank, i);
    }
    /* sends first: every pair's first contact happens from both ends at once */
    for (int k = 1; k < size; k++) {
        int peer = (rank + k) % size;
        for (int i = 0; i < NMSG; i++) {
            int len = i % 3 == 2 ? BIG : 8 << (i % 6);
            MPI_Isend(sbuf + (size_t)i * BIG, len, MPI_BYTE, peer, 7, MPI_COMM_WORLD, &req[nreq++]);
        }
    }
    for (int k = 1; k < size; k++) {
        int peer = (rank + k) % size;
        for (int i = 0; i < NMSG; i++)
            MPI_Irecv(rbuf + ((size_t)(k - 1) * NMSG + (size_t)i) * BIG, BIG, MPI_BYTE, peer, 7,
                      MPI_COMM_WORLD, &req[nreq++]);
    }
    MPI_Status *st = mtest_malloc(sizeof(MPI_Status) * (size_t)nreq);
    MPI_Waitall(nreq, req, st);
    for (int k = 1; k < size; k++) {
        int peer = (rank + k) % size;
        for (int i = 0; i < NMSG; i++) {
            int len = i % 3 == 2 ? BIG : 8 << (i % 6), count;
            /* the same tag: the i-th receive must hold the peer's i-th message */
            MPI_Get_count(&st[npeer * NMSG + (k - 1) * NMSG + i], MPI_BYTE, &count);
            if (count != len) {
                mtest_fail("message %d from rank %d: %d bytes, expected %d (out of order)", i, peer,
                           count, len);
                continue;
            }
            mtest_verify("message in order", rbuf + ((size_t)(k - 1) * NMSG + (size_t)i) * BIG,
                         (size_t)len, peer, i);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const char *count_env = getenv("SOCK_SIMOPEN_COUNT");
    if (count_env && atoi(count_env) == 1) {
        int after = connected_streams();
        if (before < 0 || after < 0)
            mtest_fail("cannot read /proc/self/fd or /proc/self/net");
        else if (after - before != npeer)
            mtest_fail("%d more connected stream sockets after reaching %d peers at once "
                       "(before %d, after %d): expected one per peer",
                       after - before, npeer, before, after);
    }
    free(st);
    free(req);
    free(sbuf);
    free(rbuf);
    return mtest_finalize();
}
