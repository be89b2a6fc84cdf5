/* The staging pool is shared by all of a process's streams, and a stream never
 * waits for another stream's receiver (docs/protocol.md, copy path). Rank 0
 * streams NBIG messages to rank 1, which copies for a moment and then stops
 * calling MPI for a while (its stream keeps whatever chunks it holds); rank 0
 * meanwhile sends messages to rank 2, which must all complete while rank 1 is
 * away: the sends to rank 1 must still be incomplete when they do. Every
 * message is checked whole at the end. Also run with a pool of one chunk
 * (the messages to rank 2 then go through the ring whenever rank 1's stream
 * holds it) and with no pool (the ring only); DCFA_TEST_VERBOSE=1 prints
 * which way the bytes went. */
#include "mtest.h"

#include <string.h>
#include <unistd.h>

#define NBIG 128
#define BIG (512 << 10)  /* below DCFA_CMA_MIN: copied, not single-copy */
#define NSMALL 8
#define SMALL (256 << 10)

int main(int argc, char **argv)
{
    int rank, size;
    if (!mtest_init_pvars(&argc, &argv, 3, &rank, &size))
        return mtest_finalize();
    unsigned char *big = mtest_malloc((size_t)NBIG * BIG);
    unsigned char *small = mtest_malloc((size_t)NSMALL * SMALL);
    MPI_Request rq[NBIG];
    if (rank == 0) {
        MPI_T_pvar_session ses;
        MPI_T_pvar_session_create(&ses);
        for (int i = 0; i < NBIG; i++)
            mtest_fill(big + (size_t)i * BIG, BIG, 0, i);
        for (int i = 0; i < NSMALL; i++)
            mtest_fill(small + (size_t)i * SMALL, SMALL, 0, 100 + i);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < NBIG; i++)
            MPI_Isend(big + (size_t)i * BIG, BIG, MPI_BYTE, 1, i, MPI_COMM_WORLD, &rq[i]);
        unsigned long long staged0 = mtest_pvar_counter(ses, "dcfa_stage_bytes"), copied0 = mtest_pvar_counter(ses, "dcfa_copy_bytes");
        for (int i = 0; i < NSMALL; i++)
            MPI_Send(small + (size_t)i * SMALL, SMALL, MPI_BYTE, 2, i, MPI_COMM_WORLD);
        int all = 0;
        MPI_Testall(NBIG, rq, &all, MPI_STATUSES_IGNORE);
        mtest_check(!all, "the messages to rank 2 waited until rank 1's stream ended");
        unsigned long long staged = mtest_pvar_counter(ses, "dcfa_stage_bytes") - staged0;
        unsigned long long copied = mtest_pvar_counter(ses, "dcfa_copy_bytes") - copied0;
        mtest_check(copied >= (unsigned long long)NSMALL * SMALL,
                    "copied %llu bytes while sending %d x %d to rank 2", copied, NSMALL, SMALL);
        if (getenv("DCFA_TEST_VERBOSE"))
            printf("to rank 2 (and rank 1 meanwhile): %llu bytes copied, %llu of them through the pool\n",
                   copied, staged);
        MPI_Waitall(NBIG, rq, MPI_STATUSES_IGNORE);
        MPI_T_pvar_session_free(&ses);
    } else if (rank == 1) {
        memset(big, 0, (size_t)NBIG * BIG);
        for (int i = 0; i < NBIG; i++)
            MPI_Irecv(big + (size_t)i * BIG, BIG, MPI_BYTE, 0, i, MPI_COMM_WORLD, &rq[i]);
        MPI_Barrier(MPI_COMM_WORLD);
        /* copy the first few, then leave while the rest is in flight */
        for (int k = 0; k < 4;) {
            int done = 0;
            MPI_Test(&rq[k], &done, MPI_STATUS_IGNORE);
            k += done;
        }
        usleep(1500000);    /* away from MPI: the stream to this rank stalls */
        MPI_Waitall(NBIG, rq, MPI_STATUSES_IGNORE);
        for (int i = 0; i < NBIG; i++)
            if (!mtest_verify("big message", big + (size_t)i * BIG, BIG, 0, i))
                break;
    } else if (rank == 2) {
        memset(small, 0, (size_t)NSMALL * SMALL);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < NSMALL; i++)
            MPI_Recv(small + (size_t)i * SMALL, SMALL, MPI_BYTE, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < NSMALL; i++)
            if (!mtest_verify("message to rank 2", small + (size_t)i * SMALL, SMALL, 0, 100 + i))
                break;
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
    }
    free(big);
    free(small);
    MPI_T_finalize();
    return mtest_finalize();
}
