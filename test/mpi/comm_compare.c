/* MPI_Comm_compare: IDENT, CONGRUENT, SIMILAR and UNEQUAL. */
#include "mtest.h"

int main(int argc, char **argv)
{
    int rank, size, result;
    MPI_Comm dup, rev, half;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &result);
    mtest_check_int("compare(WORLD, WORLD)", result, MPI_IDENT);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_compare(dup, dup, &result);
    mtest_check_int("compare(dup, dup)", result, MPI_IDENT);
    MPI_Comm_compare(MPI_COMM_WORLD, dup, &result);
    mtest_check_int("compare(WORLD, dup)", result, MPI_CONGRUENT);

    /* Same members, reversed order: SIMILAR (CONGRUENT with one rank). */
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
    MPI_Comm_compare(MPI_COMM_WORLD, rev, &result);
    mtest_check_int("compare(WORLD, reversed)", result, size > 1 ? MPI_SIMILAR : MPI_CONGRUENT);

    /* Different members: UNEQUAL (with one rank, SELF is CONGRUENT to WORLD). */
    MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_SELF, &result);
    mtest_check_int("compare(WORLD, SELF)", result, size > 1 ? MPI_UNEQUAL : MPI_CONGRUENT);
    MPI_Comm_split(MPI_COMM_WORLD, rank < size / 2, rank, &half);
    MPI_Comm_compare(half, dup, &result);
    mtest_check_int("compare(half, dup)", result, size > 1 ? MPI_UNEQUAL : MPI_CONGRUENT);
    MPI_Comm_compare(MPI_COMM_SELF, MPI_COMM_SELF, &result);
    mtest_check_int("compare(SELF, SELF)", result, MPI_IDENT);

    MPI_Comm_free(&half);
    MPI_Comm_free(&rev);
    MPI_Comm_free(&dup);
    return mtest_finalize();
}
