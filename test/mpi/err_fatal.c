/* Under the default MPI_ERRORS_ARE_FATAL, MPI_Send to rank 12345 must end
 * the whole job with a non-zero status and a message on stderr naming
 * MPI_Send and the bad rank. The test list marks it expect_fail. If the call
 * returns instead, the program exits 0 so that the expect_fail test fails. */
#include "mtest.h"

int main(int argc, char **argv)
{
    int rank, buf = 0, rc;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        rc = MPI_Send(&buf, 1, MPI_INT, 12345, 0, MPI_COMM_WORLD);
        fprintf(stderr, "err_fatal: the invalid send returned %d instead of ending the job\n", rc);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
