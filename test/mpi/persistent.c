/* Persistent requests: Send_init/Ssend_init/Recv_init, Start, Startall,
 * restarted many times with new data, small and large. Ring neighbours. */
#include "mtest.h"

#define ITERS 10

int main(int argc, char **argv)
{
    static const int sizes[] = {16, 300000};
    int rank, size, right, left, s, it;
    unsigned char *sbuf, *rbuf;
    MPI_Request reqs[2];
    MPI_Status sts[2];

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    sbuf = mtest_malloc(300000);
    rbuf = mtest_malloc(300000);

    for (s = 0; s < 2; s++) {
        int len = sizes[s], count = -1, flag = 0;

        /* Startall on a (recv, send) pair. */
        MPI_Recv_init(rbuf, len, MPI_BYTE, left, 5, MPI_COMM_WORLD, &reqs[0]);
        MPI_Send_init(sbuf, len, MPI_BYTE, right, 5, MPI_COMM_WORLD, &reqs[1]);
        for (it = 0; it < ITERS; it++) {
            mtest_fill(sbuf, (size_t)len, rank, it);
            memset(rbuf, 0, (size_t)len);
            MPI_Startall(2, reqs);
            MPI_Waitall(2, reqs, sts);
            mtest_check(reqs[0] != MPI_REQUEST_NULL && reqs[1] != MPI_REQUEST_NULL,
                        "persistent request became MPI_REQUEST_NULL after Waitall");
            MPI_Get_count(&sts[0], MPI_BYTE, &count);
            mtest_check_int("persistent recv count", count, len);
            mtest_check_int("persistent recv source", sts[0].MPI_SOURCE, left);
            mtest_verify("Startall data", rbuf, (size_t)len, left, it);
        }
        /* An inactive persistent request completes at once in Test. */
        MPI_Test(&reqs[0], &flag, &sts[0]);
        mtest_check_int("Test on inactive persistent request", flag, 1);
        MPI_Request_free(&reqs[0]);
        MPI_Request_free(&reqs[1]);
        mtest_check(reqs[0] == MPI_REQUEST_NULL, "Request_free did not null the handle");

        /* Start one by one, synchronous mode. */
        MPI_Recv_init(rbuf, len, MPI_BYTE, left, 6, MPI_COMM_WORLD, &reqs[0]);
        MPI_Ssend_init(sbuf, len, MPI_BYTE, right, 6, MPI_COMM_WORLD, &reqs[1]);
        for (it = 0; it < ITERS; it++) {
            mtest_fill(sbuf, (size_t)len, rank, 50 + it);
            MPI_Start(&reqs[0]);
            MPI_Start(&reqs[1]);
            MPI_Wait(&reqs[1], MPI_STATUS_IGNORE);
            MPI_Wait(&reqs[0], &sts[0]);
            mtest_verify("Start/Ssend_init data", rbuf, (size_t)len, left, 50 + it);
        }
        MPI_Request_free(&reqs[0]);
        MPI_Request_free(&reqs[1]);
    }
    free(sbuf);
    free(rbuf);
    return mtest_finalize();
}
