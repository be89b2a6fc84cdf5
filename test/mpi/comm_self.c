/* MPI_COMM_SELF: one rank, point-to-point and collectives on it, dup and
 * split of it, and it is UNEQUAL to WORLD (for more than one rank). */
#include "mtest.h"

int main(int argc, char **argv)
{
    int size, rank, wsize, val, out, result;
    MPI_Comm dup;
    MPI_Status st;

    mtest_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Comm_size(MPI_COMM_SELF, &size);
    MPI_Comm_rank(MPI_COMM_SELF, &rank);
    mtest_check_int("SELF size", size, 1);
    mtest_check_int("SELF rank", rank, 0);

    val = 5 + mtest_wrank;
    MPI_Sendrecv(&val, 1, MPI_INT, 0, 1, &out, 1, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_SELF, &st);
    mtest_check_int("SELF sendrecv value", out, 5 + mtest_wrank);
    mtest_check_int("SELF sendrecv source", st.MPI_SOURCE, 0);
    MPI_Barrier(MPI_COMM_SELF);
    out = -1;
    MPI_Allreduce(&val, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF);
    mtest_check_int("SELF Allreduce", out, val);

    MPI_Comm_dup(MPI_COMM_SELF, &dup);
    MPI_Comm_compare(MPI_COMM_SELF, dup, &result);
    mtest_check_int("compare(SELF, dup of SELF)", result, MPI_CONGRUENT);
    MPI_Comm_free(&dup);
    MPI_Comm_split(MPI_COMM_SELF, 3, 0, &dup);
    MPI_Comm_size(dup, &size);
    mtest_check_int("split of SELF size", size, 1);
    MPI_Comm_free(&dup);
    if (wsize > 1) {
        MPI_Comm_compare(MPI_COMM_SELF, MPI_COMM_WORLD, &result);
        mtest_check_int("compare(SELF, WORLD)", result, MPI_UNEQUAL);
    }
    return mtest_finalize();
}
