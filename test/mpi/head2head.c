/* Head-to-head: both ranks of a pair Isend a large message to each other,
 * then Recv, then Wait (the simultaneous rendezvous case), several sizes. */
#include "mtest.h"

#define BIG (4 << 20)

int main(int argc, char **argv)
{
    static const int lens[] = {8193, 1 << 20, BIG};
    int rank, size, peer, s, rep, count;
    unsigned char *sbuf, *rbuf;
    MPI_Request req;
    MPI_Status st;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    peer = mtest_partner(rank, size);
    sbuf = mtest_malloc(BIG);
    rbuf = mtest_malloc(BIG);
    for (rep = 0; rep < 2; rep++) {
        for (s = 0; s < 3; s++) {
            int len = lens[s], tag = rep * 10 + s;
            mtest_fill(sbuf, (size_t)len, rank, tag);
            memset(rbuf, 0, (size_t)len);
            MPI_Isend(sbuf, len, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &req);
            MPI_Recv(rbuf, len, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &st);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            MPI_Get_count(&st, MPI_BYTE, &count);
            mtest_check_int("head-to-head count", count, len);
            mtest_verify("head-to-head data", rbuf, (size_t)len, peer, tag);
        }
    }
    free(sbuf);
    free(rbuf);
    return mtest_finalize();
}
