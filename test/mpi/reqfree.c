/* MPI_Request_free on an active send: the message is still delivered. The
 * receiver acknowledges, and only then is the send buffer released. */
#include "mtest.h"

#define BIG 200000

int main(int argc, char **argv)
{
    static const int lens[] = {8, BIG};
    int rank, size, right, left, s, count;
    unsigned char *sbuf, *rbuf;
    MPI_Request req;
    MPI_Status st;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    for (s = 0; s < 2; s++) {
        int len = lens[s], ack = 0, ack_in = -1;
        sbuf = mtest_malloc((size_t)len);
        rbuf = mtest_malloc((size_t)len);
        mtest_fill(sbuf, (size_t)len, rank, s);
        MPI_Isend(sbuf, len, MPI_BYTE, right, s, MPI_COMM_WORLD, &req);
        mtest_check_rc("Request_free on active send", MPI_Request_free(&req));
        mtest_check(req == MPI_REQUEST_NULL, "Request_free did not set MPI_REQUEST_NULL");
        MPI_Recv(rbuf, len, MPI_BYTE, left, s, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_BYTE, &count);
        mtest_check_int("count", count, len);
        mtest_verify("data of freed send", rbuf, (size_t)len, left, s);
        /* Acknowledge to the sender: after this its buffer may be reused. */
        MPI_Sendrecv(&ack, 1, MPI_INT, left, 100, &ack_in, 1, MPI_INT, right, 100, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        free(sbuf);
        free(rbuf);
    }
    return mtest_finalize();
}
