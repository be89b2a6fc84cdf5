/* Buffer_attach / Bsend of many messages / Buffer_detach: Bsend returns
 * before the receive is posted; detach waits until everything is delivered
 * and returns the attached buffer and size. Ring neighbours. */
#include "mtest.h"

#define NSMALL 100
#define SMALL 64
#define NBIG 3
#define BIG 100000

int main(int argc, char **argv)
{
    int rank, size, right, left, i, bsize, dsize = -1, count;
    unsigned char *sbuf, *rbuf;
    void *bbuf, *det = NULL;
    MPI_Status st;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    bsize = NSMALL * (SMALL + MPI_BSEND_OVERHEAD) + NBIG * (BIG + MPI_BSEND_OVERHEAD);
    bbuf = mtest_malloc((size_t)bsize);
    sbuf = mtest_malloc(BIG);
    rbuf = mtest_malloc(BIG);
    mtest_check_rc("Buffer_attach", MPI_Buffer_attach(bbuf, bsize));

    for (i = 0; i < NSMALL + NBIG; i++) {
        int len = i < NSMALL ? SMALL : BIG;
        /* The send buffer is reused at once: Bsend copied it. */
        mtest_fill(sbuf, (size_t)len, rank, i);
        mtest_check_rc("Bsend", MPI_Bsend(sbuf, len, MPI_BYTE, right, i, MPI_COMM_WORLD));
    }
    memset(sbuf, 0, BIG);
    /* Receive in reverse tag order so the messages wait as unexpected. */
    for (i = NSMALL + NBIG - 1; i >= 0; i--) {
        int len = i < NSMALL ? SMALL : BIG;
        MPI_Recv(rbuf, BIG, MPI_BYTE, left, i, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_BYTE, &count);
        mtest_check_int("Bsend message length", count, len);
        mtest_verify("Bsend data", rbuf, (size_t)len, left, i);
    }
    mtest_check_rc("Buffer_detach", MPI_Buffer_detach(&det, &dsize));
    mtest_check(det == bbuf, "Buffer_detach returned %p, attached %p", det, bbuf);
    mtest_check_int("Buffer_detach size", dsize, bsize);

    /* Attach again and detach with messages still in flight to a receiver
     * that posts late. */
    MPI_Buffer_attach(bbuf, bsize);
    mtest_fill(sbuf, BIG, rank, 999);
    MPI_Bsend(sbuf, BIG, MPI_BYTE, right, 999, MPI_COMM_WORLD);
    if (rank % 2 == 0 && size > 1) {
        MPI_Buffer_detach(&det, &dsize);
        MPI_Recv(rbuf, BIG, MPI_BYTE, left, 999, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        mtest_sleep_ms(50);
        MPI_Recv(rbuf, BIG, MPI_BYTE, left, 999, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Buffer_detach(&det, &dsize);
    }
    mtest_verify("late Bsend data", rbuf, BIG, left, 999);
    free(bbuf);
    free(sbuf);
    free(rbuf);
    return mtest_finalize();
}
