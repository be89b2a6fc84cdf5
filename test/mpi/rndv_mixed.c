/* Mixed posted receives: the receiver posts Irecv(MPI_ANY_SOURCE) and
 * Irecv(specific source) for the same tag, in both orders; the sender then
 * sends two messages. The first message must match the receive posted first.
 * Size combinations mix eager and rendezvous, so eager data can meet a
 * receive that might have sent RTR. Pairs: lower sends, higher receives. */
#include "mtest.h"

#define BIG 600000
#define SMALL 100

int main(int argc, char **argv)
{
    static const int combos[4][2] = {{BIG, BIG}, {SMALL, BIG}, {BIG, SMALL}, {SMALL, SMALL}};
    int rank, size, peer, c, order, count, sender, receiver;
    unsigned char *s1, *s2, *r1, *r2;
    MPI_Request rq[2], sq[2];
    MPI_Status st[2];

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    peer = mtest_partner(rank, size);
    sender = rank <= peer;
    receiver = rank >= peer;
    s1 = mtest_malloc(BIG);
    s2 = mtest_malloc(BIG);
    r1 = mtest_malloc(BIG);
    r2 = mtest_malloc(BIG);

    for (order = 0; order < 2; order++) {
        for (c = 0; c < 4; c++) {
            int l1 = combos[c][0], l2 = combos[c][1], tag = 10 * order + c;
            int first_src = order == 0 ? MPI_ANY_SOURCE : peer;
            int second_src = order == 0 ? peer : MPI_ANY_SOURCE;

            if (receiver) {
                memset(r1, 0, BIG);
                memset(r2, 0, BIG);
                MPI_Irecv(r1, BIG, MPI_BYTE, first_src, tag, MPI_COMM_WORLD, &rq[0]);
                MPI_Irecv(r2, BIG, MPI_BYTE, second_src, tag, MPI_COMM_WORLD, &rq[1]);
            }
            MPI_Barrier(MPI_COMM_WORLD);
            if (sender) {
                mtest_fill(s1, (size_t)l1, rank, 1000 + tag);
                mtest_fill(s2, (size_t)l2, rank, 2000 + tag);
                MPI_Isend(s1, l1, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &sq[0]);
                MPI_Isend(s2, l2, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &sq[1]);
            }
            if (receiver) {
                MPI_Waitall(2, rq, st);
                MPI_Get_count(&st[0], MPI_BYTE, &count);
                mtest_check_int("first posted receive count", count, l1);
                mtest_check_int("first posted receive source", st[0].MPI_SOURCE, peer);
                mtest_verify("first posted receive data", r1, (size_t)l1, peer, 1000 + tag);
                MPI_Get_count(&st[1], MPI_BYTE, &count);
                mtest_check_int("second posted receive count", count, l2);
                mtest_verify("second posted receive data", r2, (size_t)l2, peer, 2000 + tag);
            }
            if (sender)
                MPI_Waitall(2, sq, MPI_STATUSES_IGNORE);
        }
    }

    /* Specific receive for tag A posted before an ANY_SOURCE receive for tag
     * B; the messages come B first, then A. */
    if (receiver) {
        MPI_Irecv(r1, BIG, MPI_BYTE, peer, 50, MPI_COMM_WORLD, &rq[0]);
        MPI_Irecv(r2, BIG, MPI_BYTE, MPI_ANY_SOURCE, 51, MPI_COMM_WORLD, &rq[1]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (sender) {
        mtest_fill(s1, BIG, rank, 50);
        mtest_fill(s2, BIG, rank, 51);
        MPI_Isend(s2, BIG, MPI_BYTE, peer, 51, MPI_COMM_WORLD, &sq[1]);
        MPI_Isend(s1, BIG, MPI_BYTE, peer, 50, MPI_COMM_WORLD, &sq[0]);
    }
    if (receiver) {
        MPI_Waitall(2, rq, st);
        mtest_check_int("tag of specific receive", st[0].MPI_TAG, 50);
        mtest_verify("specific receive, other tag first", r1, BIG, peer, 50);
        mtest_check_int("tag of ANY_SOURCE receive", st[1].MPI_TAG, 51);
        mtest_verify("ANY_SOURCE receive, other tag first", r2, BIG, peer, 51);
    }
    if (sender)
        MPI_Waitall(2, sq, MPI_STATUSES_IGNORE);
    free(s1);
    free(s2);
    free(r1);
    free(r2);
    return mtest_finalize();
}
