/* Many-to-one with MPI_ANY_SOURCE: every rank but 0 sends a mix of small
 * and large messages to rank 0, which receives them with ANY_SOURCE and
 * checks each against its status source. Meant for 8 ranks. */
#include "mtest.h"

#define ROUNDS 6
#define BIG 300000

static int msg_len(int round, int src)
{
    return (round + src) % 3 == 0 ? BIG : 16 + round * 100 + src;
}

int main(int argc, char **argv)
{
    int rank, size, round, i, count, nsrc;
    unsigned char *sbuf, *rbuf;
    MPI_Request req;
    MPI_Status st;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    sbuf = mtest_malloc(BIG);
    rbuf = mtest_malloc(BIG);
    nsrc = size == 1 ? 1 : size - 1;

    for (round = 0; round < ROUNDS; round++) {
        int sending = rank != 0 || size == 1;
        int len = msg_len(round, rank);
        if (sending) {
            mtest_fill(sbuf, (size_t)len, rank, round);
            MPI_Isend(sbuf, len, MPI_BYTE, 0, round, MPI_COMM_WORLD, &req);
        }
        if (rank == 0) {
            int *seen = calloc((size_t)size, sizeof(int));
            for (i = 0; i < nsrc; i++) {
                MPI_Recv(rbuf, BIG, MPI_BYTE, MPI_ANY_SOURCE, round, MPI_COMM_WORLD, &st);
                if (!mtest_check(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < size &&
                                     !seen[st.MPI_SOURCE],
                                 "round %d: bad or repeated source %d", round, st.MPI_SOURCE))
                    continue;
                seen[st.MPI_SOURCE] = 1;
                MPI_Get_count(&st, MPI_BYTE, &count);
                mtest_check_int("count", count, msg_len(round, st.MPI_SOURCE));
                mtest_verify("many-to-one data", rbuf, (size_t)count, st.MPI_SOURCE, round);
            }
            free(seen);
        }
        if (sending)
            MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    free(sbuf);
    free(rbuf);
    return mtest_finalize();
}
