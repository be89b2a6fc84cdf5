/* MPI_Sendrecv and MPI_Sendrecv_replace around a ring, small and large,
 * in both directions. */
#include "mtest.h"

int main(int argc, char **argv)
{
    static const int sizes[] = {0, 7, 8192, 70000, 1 << 20};
    int rank, size, right, left, s;
    unsigned char *sbuf, *rbuf;
    MPI_Status st;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    sbuf = mtest_malloc(1 << 20);
    rbuf = mtest_malloc(1 << 20);

    for (s = 0; s < (int)(sizeof(sizes) / sizeof(sizes[0])); s++) {
        int len = sizes[s], count = -1;

        mtest_fill(sbuf, (size_t)len, rank, s);
        MPI_Sendrecv(sbuf, len, MPI_BYTE, right, s, rbuf, len, MPI_BYTE, left, s, MPI_COMM_WORLD,
                     &st);
        MPI_Get_count(&st, MPI_BYTE, &count);
        mtest_check_int("Sendrecv count", count, len);
        mtest_check_int("Sendrecv source", st.MPI_SOURCE, left);
        mtest_check_int("Sendrecv tag", st.MPI_TAG, s);
        mtest_verify("Sendrecv data", rbuf, (size_t)len, left, s);

        /* The other way round, with wildcards on the receive side. */
        MPI_Sendrecv(sbuf, len, MPI_BYTE, left, 100 + s, rbuf, len, MPI_BYTE, MPI_ANY_SOURCE,
                     MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        mtest_check_int("Sendrecv wildcard source", st.MPI_SOURCE, right);
        mtest_check_int("Sendrecv wildcard tag", st.MPI_TAG, 100 + s);
        mtest_verify("Sendrecv reverse data", rbuf, (size_t)len, right, s);
        /* Keep the next step's messages away from the wildcard receive. */
        MPI_Barrier(MPI_COMM_WORLD);

        mtest_fill(rbuf, (size_t)len, rank, 200 + s);
        MPI_Sendrecv_replace(rbuf, len, MPI_BYTE, right, 200 + s, left, 200 + s, MPI_COMM_WORLD,
                             &st);
        MPI_Get_count(&st, MPI_BYTE, &count);
        mtest_check_int("Sendrecv_replace count", count, len);
        mtest_verify("Sendrecv_replace data", rbuf, (size_t)len, left, 200 + s);
    }
    free(sbuf);
    free(rbuf);
    return mtest_finalize();
}
