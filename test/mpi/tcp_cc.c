/* The congestion control of the TCP connections that carry MPI data (DCFA_TCP_CONGESTION,
 * docs/fabric.md): every rank exchanges a checked value with every other (so its connections
 * exist), then looks at each of its descriptors that is a connected TCP socket (AF_INET or
 * AF_INET6) and reads its TCP_CONGESTION. The launcher says what to expect, in the
 * environment (a test list has no arguments):
 *   TCP_CC_EXPECT=NAME   every such socket of every rank uses NAME, and each rank has at
 *                        least one (its pairs go over TCP: sock across hosts or sock's self
 *                        mode on one host, a gateway);
 *   TCP_CC_HOLD_MS=MS    after the check rank 0 prints "holding" and keeps the job (and its
 *                        connections) for MS ms, so a script can look at the other ends
 *                        (the gateway daemon's sockets);
 *   TCP_CC_VERBOSE=1     each rank prints its count.
 * Without TCP_CC_EXPECT only the exchange is checked (any MPI library). */
#include "mtest.h"
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* this process's connected TCP sockets: how many, and how many use `want` (the first other
 * name in `other`) */
static int scan(const char *want, int *matching, char *other, size_t olen)
{
    int n = 0;
    *matching = 0;
    other[0] = 0;
    for (int fd = 3; fd < 4096; fd++) {
        int dom = 0, type = 0;
        socklen_t l = sizeof dom;
        if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &l) != 0 ||
            (dom != AF_INET && dom != AF_INET6))
            continue;
        l = sizeof type;
        struct sockaddr_storage a;
        socklen_t al = sizeof a;
        if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l) != 0 || type != SOCK_STREAM ||
            getpeername(fd, (struct sockaddr *)&a, &al) != 0)
            continue;
        char cc[32] = {0};
        l = sizeof cc - 1;
        if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, &l) != 0)
            continue;
        n++;
        if (strcmp(cc, want) == 0)
            (*matching)++;
        else if (!other[0])
            snprintf(other, olen, "%s (descriptor %d)", cc, fd);
    }
    return n;
}

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int d = 1; d < size; d++) {
        int to = (rank + d) % size, from = (rank - d + size) % size;
        int out = 1000 * rank + to, in = -1;
        MPI_Sendrecv(&out, 1, MPI_INT, to, 7, &in, 1, MPI_INT, from, 7, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        if (in != 1000 * from + rank)
            mtest_fail("got %d from rank %d, expected %d", in, from, 1000 * from + rank);
    }
    const char *want = getenv("TCP_CC_EXPECT");
    if (want && *want) {
        int matching = 0;
        char other[96];
        int n = scan(want, &matching, other, sizeof other);
        if (n == 0)
            mtest_fail("no connected TCP socket (the pairs were to go over TCP)");
        else if (matching != n)
            mtest_fail("%d of its %d TCP connections do not use %s: %s", n - matching, n, want,
                       other);
        const char *v = getenv("TCP_CC_VERBOSE");
        if (v && *v == '1')
            printf("rank %d: %d TCP connections, %d with %s\n", rank, n, matching, want);
    }
    const char *hold = getenv("TCP_CC_HOLD_MS");
    if (hold && atoi(hold) > 0) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            printf("holding\n");
            fflush(stdout);
            usleep((useconds_t)atoi(hold) * 1000u);
        }
    }
    return mtest_finalize();
}
