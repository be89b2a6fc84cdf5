/* Asymmetric eager flood: in each pair (0->1, 2->3, ...) the lower rank sends
 * 10000 small messages with blocking MPI_Send while the higher rank, after a
 * delay, only receives. The sender must be throttled by credits, never drop
 * or overwrite. Needs at least 2 ranks. */
#include "mtest.h"

#define NMSG 10000

int main(int argc, char **argv)
{
    int rank, size, peer, i, msg[2];
    MPI_Status st;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    peer = mtest_partner(rank, size);
    if (size < 2)
        mtest_fail("flood needs at least 2 ranks");
    else if (rank < peer) {
        for (i = 0; i < NMSG; i++) {
            msg[0] = i;
            msg[1] = rank * 7 + i;
            MPI_Send(msg, 2, MPI_INT, peer, i % 3, MPI_COMM_WORLD);
        }
    } else if (rank > peer) {
        mtest_sleep_ms(100);
        for (i = 0; i < NMSG; i++) {
            MPI_Recv(msg, 2, MPI_INT, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            if (!mtest_check(msg[0] == i && msg[1] == peer * 7 + i && st.MPI_TAG == i % 3,
                             "flood message %d: got seq %d value %d tag %d", i, msg[0], msg[1],
                             st.MPI_TAG))
                break;
        }
    }
    return mtest_finalize();
}
