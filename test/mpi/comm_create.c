/* MPI_Comm_create (collective over the parent; non-members get
 * MPI_COMM_NULL) and MPI_Comm_create_group (only members call), with groups
 * in reversed order; ranks follow the group order. */
#include "mtest.h"

int main(int argc, char **argv)
{
    int rank, size, i, n, nrank, nsize, val, sum;
    int *ranks;
    MPI_Group world, even, odd_rev;
    MPI_Comm comm;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    ranks = mtest_malloc(sizeof(int) * (size_t)size);

    /* Even ranks, in descending order. */
    n = 0;
    for (i = size - 1; i >= 0; i--)
        if (i % 2 == 0)
            ranks[n++] = i;
    MPI_Group_incl(world, n, ranks, &even);
    MPI_Comm_create(MPI_COMM_WORLD, even, &comm);
    if (rank % 2 == 0) {
        if (mtest_check(comm != MPI_COMM_NULL, "member got MPI_COMM_NULL from Comm_create")) {
            MPI_Comm_rank(comm, &nrank);
            MPI_Comm_size(comm, &nsize);
            mtest_check_int("Comm_create size", nsize, n);
            mtest_check_int("Comm_create rank", nrank, (size - 1) / 2 - rank / 2);
            val = rank;
            MPI_Allreduce(&val, &sum, 1, MPI_INT, MPI_SUM, comm);
            mtest_check_int("Allreduce on created comm", sum, 2 * (n * (n - 1) / 2));
            MPI_Comm_free(&comm);
        }
    } else {
        mtest_check(comm == MPI_COMM_NULL, "non-member did not get MPI_COMM_NULL");
    }

    /* Odd ranks, descending, with Comm_create_group: only members call. */
    n = 0;
    for (i = size - 1; i >= 0; i--)
        if (i % 2 == 1)
            ranks[n++] = i;
    MPI_Group_incl(world, n, ranks, &odd_rev);
    if (rank % 2 == 1) {
        MPI_Comm_create_group(MPI_COMM_WORLD, odd_rev, 33, &comm);
        if (mtest_check(comm != MPI_COMM_NULL, "Comm_create_group gave MPI_COMM_NULL")) {
            MPI_Comm_rank(comm, &nrank);
            MPI_Comm_size(comm, &nsize);
            mtest_check_int("Comm_create_group size", nsize, n);
            mtest_check_int("Comm_create_group rank", nrank, n - 1 - rank / 2);
            val = 1;
            MPI_Allreduce(&val, &sum, 1, MPI_INT, MPI_SUM, comm);
            mtest_check_int("Allreduce on create_group comm", sum, n);
            MPI_Comm_free(&comm);
        }
    }

    /* The empty group gives MPI_COMM_NULL everywhere. */
    MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_EMPTY, &comm);
    mtest_check(comm == MPI_COMM_NULL, "Comm_create(GROUP_EMPTY) is not MPI_COMM_NULL");

    MPI_Group_free(&even);
    MPI_Group_free(&odd_rev);
    MPI_Group_free(&world);
    free(ranks);
    return mtest_finalize();
}
