/* Inter-communicators: MPI_Intercomm_create between even and odd world
 * ranks, Comm_test_inter, Comm_remote_size, Comm_remote_group,
 * point-to-point across, and MPI_Intercomm_merge ordering. Needs >= 2 ranks. */
#include "mtest.h"

int main(int argc, char **argv)
{
    int rank, size, color, lrank, lsize, rsize, flag, i, val, mrank, msize;
    int nlow, expect_rsize;
    MPI_Comm local, inter, merged;
    MPI_Group rgroup;
    MPI_Request *reqs;
    int *vals;
    MPI_Status st;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        mtest_fail("intercomm needs at least 2 ranks");
        return mtest_finalize();
    }
    color = rank % 2;
    nlow = (size + 1) / 2;                 /* number of even ranks */
    expect_rsize = color ? nlow : size - nlow;
    MPI_Comm_split(MPI_COMM_WORLD, color, rank, &local);
    MPI_Comm_rank(local, &lrank);
    MPI_Comm_size(local, &lsize);
    /* Leaders: world rank 0 (evens) and 1 (odds). */
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color ? 0 : 1, 77, &inter);

    flag = -1;
    MPI_Comm_test_inter(inter, &flag);
    mtest_check_int("Comm_test_inter(inter)", flag, 1);
    MPI_Comm_test_inter(local, &flag);
    mtest_check_int("Comm_test_inter(intra)", flag, 0);
    MPI_Comm_remote_size(inter, &rsize);
    mtest_check_int("Comm_remote_size", rsize, expect_rsize);
    MPI_Comm_size(inter, &i);
    mtest_check_int("Comm_size of inter = local size", i, lsize);
    MPI_Comm_rank(inter, &i);
    mtest_check_int("Comm_rank of inter = local rank", i, lrank);
    MPI_Comm_remote_group(inter, &rgroup);
    MPI_Group_size(rgroup, &i);
    mtest_check_int("remote group size", i, rsize);
    MPI_Group_free(&rgroup);

    /* Each rank sends its world rank to remote rank (lrank % rsize) and
     * receives from every remote rank r with r % lsize == lrank. */
    val = rank;
    reqs = mtest_malloc(sizeof(*reqs) * (size_t)(rsize + 1));
    vals = mtest_malloc(sizeof(int) * (size_t)(rsize + 1));
    MPI_Isend(&val, 1, MPI_INT, lrank % rsize, 3, inter, &reqs[0]);
    for (i = 0; i < rsize; i++) {
        if (i % lsize != lrank)
            continue;
        MPI_Recv(&vals[i], 1, MPI_INT, i, 3, inter, &st);
        mtest_check_int("inter recv source (remote rank)", st.MPI_SOURCE, i);
        /* Remote rank i in the other group is world rank 2*i + (1 - color). */
        mtest_check_int("inter recv value", vals[i], 2 * i + (1 - color));
    }
    MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
    /* ANY_SOURCE over an inter-communicator: remote rank 0 to local 0. */
    if (lrank == 0) {
        MPI_Sendrecv(&val, 1, MPI_INT, 0, 4, &vals[0], 1, MPI_INT, MPI_ANY_SOURCE, 4, inter, &st);
        mtest_check_int("inter ANY_SOURCE source", st.MPI_SOURCE, 0);
        mtest_check_int("inter ANY_SOURCE value", vals[0], 1 - color);
    }

    /* Merge: evens (high = 0) come first. */
    MPI_Intercomm_merge(inter, color, &merged);
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    mtest_check_int("merged size", msize, size);
    mtest_check_int("merged rank", mrank, color ? nlow + rank / 2 : rank / 2);
    MPI_Comm_test_inter(merged, &flag);
    mtest_check_int("merged is intra", flag, 0);
    val = rank;
    MPI_Allreduce(&val, &i, 1, MPI_INT, MPI_SUM, merged);
    mtest_check_int("Allreduce on merged", i, size * (size - 1) / 2);

    free(reqs);
    free(vals);
    MPI_Comm_free(&merged);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
    return mtest_finalize();
}
