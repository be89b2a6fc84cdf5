/* Messages to one's own rank, small and large, in both orders (receive
 * posted first, send first), plus Sendrecv, Ssend and Probe on self. */
#include "mtest.h"

#define BIG (2 << 20)

int main(int argc, char **argv)
{
    static const int lens[] = {0, 1, 8192, 8193, 100000, BIG};
    int rank, s, count, flag;
    unsigned char *sbuf, *rbuf;
    MPI_Request sreq, rreq;
    MPI_Status st;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    sbuf = mtest_malloc(BIG);
    rbuf = mtest_malloc(BIG);

    for (s = 0; s < (int)(sizeof(lens) / sizeof(lens[0])); s++) {
        int len = lens[s];

        /* Receive first, then a blocking Send. */
        mtest_fill(sbuf, (size_t)len, rank, s);
        memset(rbuf, 0, (size_t)len);
        MPI_Irecv(rbuf, BIG, MPI_BYTE, rank, s, MPI_COMM_WORLD, &rreq);
        MPI_Send(sbuf, len, MPI_BYTE, rank, s, MPI_COMM_WORLD);
        MPI_Wait(&rreq, &st);
        MPI_Get_count(&st, MPI_BYTE, &count);
        mtest_check_int("recv-first count", count, len);
        mtest_check_int("recv-first source", st.MPI_SOURCE, rank);
        mtest_verify("recv-first data", rbuf, (size_t)len, rank, s);

        /* Send first, then a blocking Recv (after probing). */
        mtest_fill(sbuf, (size_t)len, rank, 100 + s);
        memset(rbuf, 0, (size_t)len);
        MPI_Isend(sbuf, len, MPI_BYTE, rank, 100 + s, MPI_COMM_WORLD, &sreq);
        flag = 0;
        while (!flag)
            MPI_Iprobe(rank, 100 + s, MPI_COMM_WORLD, &flag, &st);
        MPI_Get_count(&st, MPI_BYTE, &count);
        mtest_check_int("Iprobe on self count", count, len);
        MPI_Recv(rbuf, BIG, MPI_BYTE, MPI_ANY_SOURCE, 100 + s, MPI_COMM_WORLD, &st);
        MPI_Wait(&sreq, MPI_STATUS_IGNORE);
        MPI_Get_count(&st, MPI_BYTE, &count);
        mtest_check_int("send-first count", count, len);
        mtest_verify("send-first data", rbuf, (size_t)len, rank, 100 + s);

        /* Sendrecv with oneself. */
        mtest_fill(sbuf, (size_t)len, rank, 200 + s);
        MPI_Sendrecv(sbuf, len, MPI_BYTE, rank, 200 + s, rbuf, len, MPI_BYTE, rank, 200 + s,
                     MPI_COMM_WORLD, &st);
        mtest_verify("Sendrecv self data", rbuf, (size_t)len, rank, 200 + s);

        /* Synchronous send to oneself with the receive posted. */
        mtest_fill(sbuf, (size_t)len, rank, 300 + s);
        MPI_Irecv(rbuf, len, MPI_BYTE, rank, 300 + s, MPI_COMM_WORLD, &rreq);
        MPI_Ssend(sbuf, len, MPI_BYTE, rank, 300 + s, MPI_COMM_WORLD);
        MPI_Wait(&rreq, MPI_STATUS_IGNORE);
        mtest_verify("Ssend self data", rbuf, (size_t)len, rank, 300 + s);
    }
    /* On MPI_COMM_SELF too. */
    mtest_fill(sbuf, 1000, rank, 9);
    MPI_Sendrecv(sbuf, 1000, MPI_BYTE, 0, 9, rbuf, 1000, MPI_BYTE, 0, 9, MPI_COMM_SELF, &st);
    mtest_check_int("COMM_SELF source", st.MPI_SOURCE, 0);
    mtest_verify("COMM_SELF data", rbuf, 1000, rank, 9);
    free(sbuf);
    free(rbuf);
    return mtest_finalize();
}
