/* MPI_Comm_dup and MPI_Comm_free: same size, rank and group; CONGRUENT with
 * the parent; the error handler is inherited; dup of a dup; free sets
 * MPI_COMM_NULL; the dup carries messages. */
#include "mtest.h"

int main(int argc, char **argv)
{
    int rank, size, drank, dsize, result, i, val, sum;
    MPI_Comm dup, dup2;
    MPI_Errhandler eh;
    MPI_Group g1, g2;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    mtest_check(dup != MPI_COMM_NULL && dup != MPI_COMM_WORLD, "dup is NULL or WORLD");
    MPI_Comm_rank(dup, &drank);
    MPI_Comm_size(dup, &dsize);
    mtest_check_int("dup rank", drank, rank);
    mtest_check_int("dup size", dsize, size);
    MPI_Comm_compare(MPI_COMM_WORLD, dup, &result);
    mtest_check_int("compare(WORLD, dup)", result, MPI_CONGRUENT);
    MPI_Comm_group(MPI_COMM_WORLD, &g1);
    MPI_Comm_group(dup, &g2);
    MPI_Group_compare(g1, g2, &result);
    mtest_check_int("group of dup", result, MPI_IDENT);
    MPI_Group_free(&g1);
    MPI_Group_free(&g2);
    MPI_Comm_get_errhandler(dup, &eh);
    mtest_check(eh == MPI_ERRORS_RETURN, "dup did not inherit MPI_ERRORS_RETURN");
    MPI_Errhandler_free(&eh);

    MPI_Comm_dup(dup, &dup2);
    MPI_Comm_compare(dup, dup2, &result);
    mtest_check_int("compare(dup, dup of dup)", result, MPI_CONGRUENT);

    /* Both carry traffic. */
    for (i = 0; i < 3; i++) {
        val = rank + i;
        sum = -1;
        MPI_Allreduce(&val, &sum, 1, MPI_INT, MPI_SUM, i % 2 ? dup : dup2);
        mtest_check_int("Allreduce on dup", sum, size * (size - 1) / 2 + i * size);
    }
    MPI_Comm_free(&dup);
    mtest_check(dup == MPI_COMM_NULL, "Comm_free did not set MPI_COMM_NULL");
    /* dup2 stays usable after its parent is freed. */
    val = rank;
    MPI_Allreduce(&val, &sum, 1, MPI_INT, MPI_MAX, dup2);
    mtest_check_int("Allreduce on dup2 after freeing its parent", sum, size - 1);
    MPI_Comm_free(&dup2);

    /* Many dup/free cycles must not leak contexts. */
    for (i = 0; i < 50; i++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        MPI_Comm_free(&dup);
    }
    return mtest_finalize();
}
