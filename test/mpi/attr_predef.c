/* Predefined attributes on MPI_COMM_WORLD: MPI_TAG_UB (>= 32767, and usable
 * as a tag), MPI_WTIME_IS_GLOBAL (0 or 1), MPI_APPNUM (0 here, if set),
 * MPI_UNIVERSE_SIZE (>= 1 if set; Open MPI
 * reports the slot count, which can be below the world size), MPI_HOST (PROC_NULL or a rank). */
#include "mtest.h"

int main(int argc, char **argv)
{
    int rank, size, flag, *val, in = -1, out;
    MPI_Status st;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &val, &flag);
    if (mtest_check(flag, "MPI_TAG_UB not set")) {
        int ub = *val;
        mtest_check(ub >= 32767, "MPI_TAG_UB %d < 32767", ub);
        /* The largest tag works. */
        out = 5;
        MPI_Sendrecv(&out, 1, MPI_INT, rank, ub, &in, 1, MPI_INT, rank, ub, MPI_COMM_WORLD, &st);
        mtest_check_int("message with tag MPI_TAG_UB", in, 5);
        mtest_check_int("status tag MPI_TAG_UB", st.MPI_TAG, ub);
        /* Same on a dup. */
        {
            MPI_Comm dup;
            MPI_Comm_dup(MPI_COMM_WORLD, &dup);
            MPI_Comm_get_attr(dup, MPI_TAG_UB, &val, &flag);
            mtest_check(flag && *val == ub, "MPI_TAG_UB differs on a dup");
            MPI_Comm_free(&dup);
        }
    }
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &val, &flag);
    if (flag)
        mtest_check(*val == 0 || *val == 1, "MPI_WTIME_IS_GLOBAL is %d", *val);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &val, &flag);
    if (flag)
        mtest_check_int("MPI_APPNUM", *val, 0);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &val, &flag);
    if (flag)
        mtest_check(*val >= 1, "MPI_UNIVERSE_SIZE is %d", *val);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &val, &flag);
    if (mtest_check(flag, "MPI_HOST not set"))
        mtest_check(*val == MPI_PROC_NULL || (*val >= 0 && *val < size), "MPI_HOST is %d", *val);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &val, &flag);
    if (mtest_check(flag, "MPI_IO not set"))
        mtest_check(*val == MPI_ANY_SOURCE || *val == MPI_PROC_NULL || (*val >= 0 && *val < size),
                    "MPI_IO is %d", *val);
    return mtest_finalize();
}
