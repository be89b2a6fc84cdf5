/* MPI_ANY_SOURCE and MPI_ANY_TAG: every rank sends to rank 0 with tag = its
 * rank; rank 0 receives with each wildcard combination and checks status. */
#include "mtest.h"

#define LEN 100

int main(int argc, char **argv)
{
    int rank, size, round, i;
    unsigned char buf[LEN], rbuf[LEN];
    MPI_Status st;
    MPI_Request req;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    for (round = 0; round < 4; round++) {
        int tag = 1000 * round + rank;
        mtest_fill(buf, LEN, rank, tag);
        MPI_Isend(buf, LEN, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &req);
        if (rank == 0) {
            int *seen = calloc((size_t)size, sizeof(int));
            for (i = 0; i < size; i++) {
                int src = MPI_ANY_SOURCE, rtag = MPI_ANY_TAG, count = -1;
                if (round == 1)
                    rtag = 1000 + i;       /* ANY_SOURCE, specific tag */
                else if (round == 2)
                    src = i;               /* specific source, ANY_TAG */
                else if (round == 3) {
                    src = size - 1 - i;    /* both specific, reverse order */
                    rtag = 3000 + src;
                }
                memset(rbuf, 0, LEN);
                MPI_Recv(rbuf, LEN, MPI_BYTE, src, rtag, MPI_COMM_WORLD, &st);
                MPI_Get_count(&st, MPI_BYTE, &count);
                mtest_check_int("count", count, LEN);
                if (!mtest_check(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < size,
                                 "status source %d out of range", st.MPI_SOURCE))
                    continue;
                mtest_check_int("status tag", st.MPI_TAG, 1000 * round + st.MPI_SOURCE);
                if (src != MPI_ANY_SOURCE)
                    mtest_check_int("status source", st.MPI_SOURCE, src);
                mtest_check(!seen[st.MPI_SOURCE], "source %d matched twice", st.MPI_SOURCE);
                seen[st.MPI_SOURCE] = 1;
                mtest_verify("wildcard data", rbuf, LEN, st.MPI_SOURCE, st.MPI_TAG);
            }
            free(seen);
        }
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    return mtest_finalize();
}
