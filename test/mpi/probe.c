/* Probe, Iprobe, Mprobe, Improbe, Mrecv, Imrecv and Get_count, for an eager
 * and a rendezvous size. Ring: send to the right, receive from the left. */
#include "mtest.h"

#define BIG 500000

static void check_st(const char *what, const MPI_Status *st, int src, int tag, int len)
{
    int count = -1;
    mtest_check_int(what, st->MPI_SOURCE, src);
    mtest_check_int(what, st->MPI_TAG, tag);
    MPI_Get_count(st, MPI_BYTE, &count);
    mtest_check_int(what, count, len);
}

int main(int argc, char **argv)
{
    static const int lens[] = {33, BIG};
    int rank, size, right, left, s, flag, count;
    unsigned char *sbuf, *rbuf;
    MPI_Request sreq, rreq;
    MPI_Status st;
    MPI_Message msg;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    sbuf = mtest_malloc(BIG);
    rbuf = mtest_malloc(BIG);

    for (s = 0; s < 2; s++) {
        int len = lens[s];

        /* Probe then Recv of the probed size. */
        mtest_fill(sbuf, (size_t)len, rank, 1);
        MPI_Isend(sbuf, len, MPI_BYTE, right, 1, MPI_COMM_WORLD, &sreq);
        MPI_Probe(MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &st);
        check_st("Probe", &st, left, 1, len);
        MPI_Get_count(&st, MPI_BYTE, &count);
        /* Probing again returns the same message. */
        MPI_Probe(left, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        check_st("second Probe", &st, left, 1, len);
        MPI_Recv(rbuf, count, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st);
        mtest_verify("Probe+Recv", rbuf, (size_t)len, left, 1);
        MPI_Wait(&sreq, MPI_STATUS_IGNORE);
        MPI_Barrier(MPI_COMM_WORLD);

        /* Iprobe: nothing with tag 2 yet, then poll until it arrives. */
        flag = -1;
        MPI_Iprobe(MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &flag, &st);
        mtest_check_int("Iprobe before any send", flag, 0);
        MPI_Barrier(MPI_COMM_WORLD);
        mtest_fill(sbuf, (size_t)len, rank, 2);
        MPI_Isend(sbuf, len, MPI_BYTE, right, 2, MPI_COMM_WORLD, &sreq);
        flag = 0;
        while (!flag)
            MPI_Iprobe(left, 2, MPI_COMM_WORLD, &flag, &st);
        check_st("Iprobe", &st, left, 2, len);
        MPI_Recv(rbuf, len, MPI_BYTE, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        mtest_verify("Iprobe+Recv", rbuf, (size_t)len, left, 2);
        MPI_Wait(&sreq, MPI_STATUS_IGNORE);

        /* Mprobe + Mrecv: the message is removed from matching. */
        mtest_fill(sbuf, (size_t)len, rank, 3);
        MPI_Isend(sbuf, len, MPI_BYTE, right, 3, MPI_COMM_WORLD, &sreq);
        MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &msg, &st);
        check_st("Mprobe", &st, left, 3, len);
        mtest_check(msg != MPI_MESSAGE_NULL, "Mprobe returned MPI_MESSAGE_NULL");
        flag = -1;
        MPI_Iprobe(MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        mtest_check_int("Iprobe after Mprobe took the message", flag, 0);
        MPI_Mrecv(rbuf, len, MPI_BYTE, &msg, &st);
        mtest_check(msg == MPI_MESSAGE_NULL, "Mrecv did not reset the message handle");
        check_st("Mrecv", &st, left, 3, len);
        mtest_verify("Mrecv", rbuf, (size_t)len, left, 3);
        MPI_Wait(&sreq, MPI_STATUS_IGNORE);

        /* Improbe + Imrecv. */
        mtest_fill(sbuf, (size_t)len, rank, 4);
        MPI_Isend(sbuf, len, MPI_BYTE, right, 4, MPI_COMM_WORLD, &sreq);
        flag = 0;
        while (!flag)
            MPI_Improbe(left, 4, MPI_COMM_WORLD, &flag, &msg, &st);
        check_st("Improbe", &st, left, 4, len);
        MPI_Imrecv(rbuf, len, MPI_BYTE, &msg, &rreq);
        MPI_Wait(&rreq, &st);
        check_st("Imrecv", &st, left, 4, len);
        mtest_verify("Imrecv", rbuf, (size_t)len, left, 4);
        MPI_Wait(&sreq, MPI_STATUS_IGNORE);
        MPI_Barrier(MPI_COMM_WORLD);
    }

    /* Probe of MPI_PROC_NULL: MPI_MESSAGE_NO_PROC and an empty status. */
    MPI_Mprobe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &msg, &st);
    mtest_check(msg == MPI_MESSAGE_NO_PROC, "Mprobe(PROC_NULL) did not give MESSAGE_NO_PROC");
    mtest_check_int("Mprobe(PROC_NULL) source", st.MPI_SOURCE, MPI_PROC_NULL);
    MPI_Mrecv(rbuf, 10, MPI_BYTE, &msg, &st);
    check_st("Mrecv(NO_PROC)", &st, MPI_PROC_NULL, MPI_ANY_TAG, 0);

    free(sbuf);
    free(rbuf);
    return mtest_finalize();
}
