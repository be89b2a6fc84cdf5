/* MPI_Comm_split: colour by parity, keys that reverse the order, and
 * MPI_UNDEFINED (every third rank) giving MPI_COMM_NULL. */
#include "mtest.h"

int main(int argc, char **argv)
{
    int rank, size, color, nrank, nsize, i, expect_size, expect_rank, sum, val;
    MPI_Comm comm, same;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    color = (rank % 3 == 2) ? MPI_UNDEFINED : rank % 2;
    MPI_Comm_split(MPI_COMM_WORLD, color, size - rank, &comm);
    if (color == MPI_UNDEFINED) {
        mtest_check(comm == MPI_COMM_NULL, "MPI_UNDEFINED colour did not give MPI_COMM_NULL");
    } else if (mtest_check(comm != MPI_COMM_NULL, "split returned MPI_COMM_NULL")) {
        /* Members: ranks with the same colour; order: descending world rank. */
        expect_size = 0;
        expect_rank = 0;
        for (i = 0; i < size; i++) {
            if (i % 3 == 2 || i % 2 != color)
                continue;
            expect_size++;
            if (i > rank)
                expect_rank++;
        }
        MPI_Comm_rank(comm, &nrank);
        MPI_Comm_size(comm, &nsize);
        mtest_check_int("split size", nsize, expect_size);
        mtest_check_int("split rank (reversed keys)", nrank, expect_rank);
        /* Rank 0 of the new comm is the highest world rank of the colour. */
        val = (nrank == 0) ? rank : 0;
        sum = -1;
        MPI_Allreduce(&val, &sum, 1, MPI_INT, MPI_SUM, comm);
        mtest_check(sum >= rank, "new rank 0 is world rank %d, below member %d", sum, rank);
        MPI_Comm_free(&comm);
    }

    /* Same colour and key everywhere: order follows the parent. */
    MPI_Comm_split(MPI_COMM_WORLD, 0, 0, &same);
    MPI_Comm_rank(same, &nrank);
    MPI_Comm_size(same, &nsize);
    mtest_check_int("equal-key split rank", nrank, rank);
    mtest_check_int("equal-key split size", nsize, size);
    MPI_Comm_free(&same);

    /* One communicator per rank. */
    MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &comm);
    MPI_Comm_size(comm, &nsize);
    mtest_check_int("singleton split size", nsize, 1);
    MPI_Comm_free(&comm);
    return mtest_finalize();
}
