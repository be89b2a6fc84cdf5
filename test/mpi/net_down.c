/*
 * net_down: a host whose network goes down ends the job with an error that
 * names the peer and its host, within DCFA_NET_TIMEOUT, instead of hanging
 * (docs/faults.md, "A host that stops answering").
 *
 * Without NET_DOWN_MODE (the test list, one host): a few 1 MiB round trips
 * between ranks 0 and 1, then " No Errors".
 * NET_DOWN_MODE=busy: ranks 0 and 1 ping-pong 1 MiB messages (rendezvous
 * under way when the link goes); NET_DOWN_MODE=idle: after one exchange rank
 * 0 computes outside MPI while rank 1 waits in MPI_Recv for it (an idle
 * connection: only keepalive probes can find the peer gone). Rank 0 prints
 * "net_down ready" once the pair has exchanged; the multi-host stage then
 * takes one host's interface down and expects the job to end with the error.
 * If it still runs after NET_DOWN_LIMIT seconds (default 60), the program
 * fails by itself: the loss was not noticed.
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    mtest_wrank = rank;
    if (size < 2) {
        mtest_fail("needs 2 ranks");
        return mtest_finalize();
    }
    const char *mode = getenv("NET_DOWN_MODE");
    const char *lim = getenv("NET_DOWN_LIMIT");
    double limit = lim && atoi(lim) > 0 ? atoi(lim) : 60;
    int n = 1 << 20, busy = mode && !strcmp(mode, "busy"), idle = mode && !strcmp(mode, "idle");
    char *buf = malloc((size_t)n);
    memset(buf, rank, (size_t)n);
    if (rank < 2) {
        int peer = 1 - rank;
        double t0 = MPI_Wtime();
        for (long i = 0;; i++) {
            if (rank == 0) {
                MPI_Send(buf, n, MPI_CHAR, peer, 0, MPI_COMM_WORLD);
                MPI_Recv(buf, n, MPI_CHAR, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(buf, n, MPI_CHAR, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, n, MPI_CHAR, peer, 0, MPI_COMM_WORLD);
            }
            if (i == 3 && rank == 0 && (busy || idle)) {
                printf("net_down ready\n");
                fflush(stdout);
            }
            if (i >= 3 && !busy)
                break;
            if (MPI_Wtime() - t0 > limit) {
                mtest_fail("the pair still exchanges after %.0f s: the link's loss was not noticed",
                           limit);
                break;
            }
        }
        if (idle) {
            /* rank 0 computes outside MPI; rank 1 waits for it on an idle connection */
            if (rank == 0) {
                while (MPI_Wtime() - t0 < limit)
                    usleep(100000);
                mtest_fail("rank 1 still waits after %.0f s: the link's loss was not noticed",
                           limit);
                MPI_Send(buf, 1, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
            } else {
                MPI_Recv(buf, 1, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
        }
    }
    free(buf);
    return mtest_finalize();
}
