/* MPI_Initialized / MPI_Finalized before, during and after the MPI lifetime. */
#include "mtest.h"

int main(int argc, char **argv)
{
    int flag = -1, total = 0;

    MPI_Initialized(&flag);
    mtest_check_int("Initialized before Init", flag, 0);
    flag = -1;
    MPI_Finalized(&flag);
    mtest_check_int("Finalized before Init", flag, 0);

    mtest_init(&argc, &argv);
    flag = -1;
    MPI_Initialized(&flag);
    mtest_check_int("Initialized after Init", flag, 1);
    flag = -1;
    MPI_Finalized(&flag);
    mtest_check_int("Finalized after Init", flag, 0);

    MPI_Allreduce(&mtest_errs, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();

    /* Both queries are allowed after MPI_Finalize. */
    flag = -1;
    MPI_Initialized(&flag);
    mtest_check_int("Initialized after Finalize", flag, 1);
    flag = -1;
    MPI_Finalized(&flag);
    mtest_check_int("Finalized after Finalize", flag, 1);
    if (mtest_errs > 0)
        return 1;
    if (mtest_wrank == 0) {
        if (total == 0)
            printf(" No Errors\n");
        else
            printf(" Found %d errors\n", total);
    }
    return total == 0 ? 0 : 1;
}
