/* Receiver-first: the receiver posts Irecv with a specific source and tag,
 * a barrier makes sure it is posted, then the sender sends (large, so a
 * receiver-first rendezvous with RTR is possible). Cases: one receive; two
 * receives for the same (source, tag) that must complete in order; a posted
 * buffer larger than the message; a posted buffer smaller than the message
 * (MPI_ERR_TRUNCATE under MPI_ERRORS_RETURN). Runs on a duplicate of
 * MPI_COMM_WORLD; both carry MPI_ERRORS_RETURN (MPICH 4.0 raises a Wait
 * error on the world handler instead of the request's communicator).
 * Pairs: lower rank sends, higher receives; odd rank out: itself. */
#include "mtest.h"

#define BIG (1 << 20)

int main(int argc, char **argv)
{
    int rank, size, peer, count, rc, i;
    int sender, receiver;
    unsigned char *s1, *s2, *r1, *r2;
    MPI_Request rq[2], sq[2];
    MPI_Status st[2];
    MPI_Comm comm;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    peer = mtest_partner(rank, size);
    sender = rank <= peer;
    receiver = rank >= peer;
    s1 = mtest_malloc(BIG);
    s2 = mtest_malloc(BIG);
    r1 = mtest_malloc(BIG + 64);
    r2 = mtest_malloc(BIG + 64);
    mtest_fill(s1, BIG, rank, 1);
    mtest_fill(s2, BIG, rank, 2);

    /* 1: a single posted receive. */
    if (receiver)
        MPI_Irecv(r1, BIG, MPI_BYTE, peer, 5, comm, &rq[0]);
    MPI_Barrier(comm);
    if (sender && rank != peer)
        MPI_Send(s1, BIG, MPI_BYTE, peer, 5, comm);
    else if (sender)
        MPI_Isend(s1, BIG, MPI_BYTE, peer, 5, comm, &sq[0]);
    if (receiver) {
        MPI_Wait(&rq[0], &st[0]);
        MPI_Get_count(&st[0], MPI_BYTE, &count);
        mtest_check_int("receiver-first count", count, BIG);
        mtest_verify("receiver-first data", r1, BIG, peer, 1);
    }
    if (sender && rank == peer)
        MPI_Wait(&sq[0], MPI_STATUS_IGNORE);

    /* 2: two posted receives, same source and tag: first message to first. */
    if (receiver) {
        MPI_Irecv(r1, BIG, MPI_BYTE, peer, 6, comm, &rq[0]);
        MPI_Irecv(r2, BIG, MPI_BYTE, peer, 6, comm, &rq[1]);
    }
    MPI_Barrier(comm);
    if (sender) {
        MPI_Isend(s1, BIG, MPI_BYTE, peer, 6, comm, &sq[0]);
        MPI_Isend(s2, BIG / 2, MPI_BYTE, peer, 6, comm, &sq[1]);
    }
    if (receiver) {
        MPI_Waitall(2, rq, st);
        MPI_Get_count(&st[0], MPI_BYTE, &count);
        mtest_check_int("first of two posted: count", count, BIG);
        mtest_verify("first of two posted", r1, BIG, peer, 1);
        MPI_Get_count(&st[1], MPI_BYTE, &count);
        mtest_check_int("second of two posted: count", count, BIG / 2);
        mtest_verify("second of two posted", r2, BIG / 2, peer, 2);
    }
    if (sender)
        MPI_Waitall(2, sq, MPI_STATUSES_IGNORE);

    /* 3: posted buffer larger than the message. */
    if (receiver) {
        memset(r1, 0xcc, BIG + 64);
        MPI_Irecv(r1, BIG + 64, MPI_BYTE, peer, 7, comm, &rq[0]);
    }
    MPI_Barrier(comm);
    if (sender)
        MPI_Isend(s1, BIG - 1000, MPI_BYTE, peer, 7, comm, &sq[0]);
    if (receiver) {
        MPI_Wait(&rq[0], &st[0]);
        MPI_Get_count(&st[0], MPI_BYTE, &count);
        mtest_check_int("bigger posted buffer: count", count, BIG - 1000);
        mtest_verify("bigger posted buffer", r1, BIG - 1000, peer, 1);
        for (i = BIG - 1000; i < BIG + 64; i++)
            if (!mtest_check(r1[i] == 0xcc, "byte %d beyond the message was written", i))
                break;
    }
    if (sender)
        MPI_Wait(&sq[0], MPI_STATUS_IGNORE);

    /* 4: posted buffer smaller than the message: truncation, no overrun. */
    if (receiver) {
        memset(r1, 0xcc, BIG + 64);
        MPI_Irecv(r1, BIG / 4, MPI_BYTE, peer, 8, comm, &rq[0]);
    }
    MPI_Barrier(comm);
    if (sender)
        MPI_Isend(s1, BIG, MPI_BYTE, peer, 8, comm, &sq[0]);
    if (receiver) {
        rc = MPI_Wait(&rq[0], &st[0]);
        mtest_check_class("receiver-first truncation", rc, MPI_ERR_TRUNCATE);
        for (i = BIG / 4; i < BIG + 64; i++)
            if (!mtest_check(r1[i] == 0xcc, "truncated receive wrote byte %d", i))
                break;
    }
    if (sender)
        mtest_check_rc("sender Wait after truncation", MPI_Wait(&sq[0], MPI_STATUS_IGNORE));

    /* The pair still works afterwards. */
    if (receiver)
        MPI_Irecv(r2, BIG, MPI_BYTE, peer, 9, comm, &rq[0]);
    MPI_Barrier(comm);
    if (sender)
        MPI_Isend(s2, BIG, MPI_BYTE, peer, 9, comm, &sq[0]);
    if (receiver) {
        mtest_check_rc("receive after truncation", MPI_Wait(&rq[0], &st[0]));
        mtest_verify("data after truncation", r2, BIG, peer, 2);
    }
    if (sender)
        MPI_Wait(&sq[0], MPI_STATUS_IGNORE);

    MPI_Comm_free(&comm);
    free(s1);
    free(s2);
    free(r1);
    free(r2);
    return mtest_finalize();
}
