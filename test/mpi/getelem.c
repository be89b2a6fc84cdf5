/* MPI_Get_count and MPI_Get_elements (and the _x forms) with basic types,
 * including a count that is not a whole number of the queried type. */
#include "mtest.h"

int main(int argc, char **argv)
{
    int rank, size, right, left, count, elems;
    MPI_Count ecount;
    double dout[5] = {1.5, 2.5, 3.5, 4.5, 5.5}, din[10];
    char cbuf[16];
    MPI_Status st;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;

    MPI_Sendrecv(dout, 5, MPI_DOUBLE, right, 1, din, 10, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_DOUBLE, &count);
    mtest_check_int("Get_count(DOUBLE)", count, 5);
    MPI_Get_elements(&st, MPI_DOUBLE, &elems);
    mtest_check_int("Get_elements(DOUBLE)", elems, 5);
    MPI_Get_elements_x(&st, MPI_DOUBLE, &ecount);
    mtest_check_int("Get_elements_x(DOUBLE)", ecount, 5);
    MPI_Get_count(&st, MPI_BYTE, &count);
    mtest_check_int("Get_count(BYTE) of 5 doubles", count, 5 * (int)sizeof(double));
    MPI_Get_count(&st, MPI_INT, &count);
    mtest_check_int("Get_count(INT) of 5 doubles", count, 5 * (int)(sizeof(double) / sizeof(int)));
    mtest_check(din[0] == 1.5 && din[4] == 5.5, "double values wrong: %g %g", din[0], din[4]);

    /* 7 bytes: not a whole number of ints. */
    memset(cbuf, 'a', sizeof(cbuf));
    MPI_Sendrecv(cbuf, 7, MPI_CHAR, right, 2, cbuf + 8, 8, MPI_CHAR, left, 2, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_CHAR, &count);
    mtest_check_int("Get_count(CHAR)", count, 7);
    MPI_Get_count(&st, MPI_INT, &count);
    mtest_check_int("Get_count(INT) of 7 bytes", count, MPI_UNDEFINED);
    MPI_Get_elements(&st, MPI_INT, &elems);
    mtest_check_int("Get_elements(INT) of 7 bytes", elems, MPI_UNDEFINED);

    /* Zero-length message. */
    MPI_Sendrecv(NULL, 0, MPI_INT, right, 3, din, 10, MPI_DOUBLE, left, 3, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_DOUBLE, &count);
    mtest_check_int("Get_count of empty message", count, 0);
    MPI_Get_elements(&st, MPI_DOUBLE, &elems);
    mtest_check_int("Get_elements of empty message", elems, 0);
    return mtest_finalize();
}
