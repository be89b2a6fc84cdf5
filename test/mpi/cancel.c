/* Cancel of a posted receive that nothing matches: Wait completes, and
 * Test_cancelled is true; a later message with that tag goes to a new
 * receive. Cancel of a receive that has already completed: not cancelled. */
#include "mtest.h"

int main(int argc, char **argv)
{
    int rank, size, left, right, flag = -1, val = -1, out;
    MPI_Request req;
    MPI_Status st;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;

    /* Nothing will ever be sent with tag 77 before the cancel. */
    MPI_Irecv(&val, 1, MPI_INT, left, 77, MPI_COMM_WORLD, &req);
    mtest_check_rc("Cancel", MPI_Cancel(&req));
    mtest_check_rc("Wait on cancelled receive", MPI_Wait(&req, &st));
    MPI_Test_cancelled(&st, &flag);
    mtest_check_int("Test_cancelled after cancelling a posted receive", flag, 1);
    mtest_check_int("cancelled receive left its buffer alone", val, -1);

    /* Same with an ANY_SOURCE, large receive, completed by Test. */
    {
        static char big[300000];
        MPI_Irecv(big, sizeof(big), MPI_BYTE, MPI_ANY_SOURCE, 78, MPI_COMM_WORLD, &req);
        MPI_Cancel(&req);
        flag = 0;
        while (!flag)
            MPI_Test(&req, &flag, &st);
        flag = -1;
        MPI_Test_cancelled(&st, &flag);
        mtest_check_int("Test_cancelled on ANY_SOURCE receive", flag, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* Now a tag-77 message arrives: it must go to the new receive. */
    out = 1000 + rank;
    MPI_Irecv(&val, 1, MPI_INT, left, 77, MPI_COMM_WORLD, &req);
    MPI_Send(&out, 1, MPI_INT, right, 77, MPI_COMM_WORLD);
    MPI_Wait(&req, &st);
    mtest_check_int("value after cancel", val, 1000 + left);
    MPI_Test_cancelled(&st, &flag);
    mtest_check_int("Test_cancelled on a completed receive", flag, 0);

    /* Cancelling a receive that already completed does not cancel it. */
    val = -1;
    MPI_Irecv(&val, 1, MPI_INT, left, 79, MPI_COMM_WORLD, &req);
    MPI_Send(&out, 1, MPI_INT, right, 79, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    /* The message may or may not be matched yet; if Cancel wins, the
     * receive is cancelled and the message must still be receivable. */
    MPI_Cancel(&req);
    MPI_Wait(&req, &st);
    MPI_Test_cancelled(&st, &flag);
    if (flag) {
        MPI_Recv(&val, 1, MPI_INT, left, 79, MPI_COMM_WORLD, &st);
    }
    mtest_check_int("value of the cancel-raced receive", val, 1000 + left);
    return mtest_finalize();
}
