/* A nonblocking collective ordered differently from blocking ones between
 * ranks: for each root, the root starts an MPI_Iallreduce (then an MPI_Ibcast)
 * before a barrier that the others enter first, starting theirs after it.
 * MPI 4.1 (section 6.12) calls this erroneous, yet MPICH and Open MPI run it,
 * and mpi4py's MPI_Comm_iagree fallback (an MPI_Iallreduce) is used this way
 * by its test suite: each must match its own kind (sched.h), with the right
 * results, never a hang. Also with the node segment off (variant noshm). */
#include "mtest.h"

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    for (int rep = 0; rep < 20; rep++) {
        for (int root = 0; root < size; root++) {
            int flag = rank == root ? 0xb : 0xd, out = -1, big = -1;
            MPI_Request req[2];
            MPI_Barrier(comm);
            if (rank == root) {
                big = 1000 * rep + root;
                MPI_Iallreduce(&flag, &out, 1, MPI_INT, MPI_BAND, comm, &req[0]);
                MPI_Ibcast(&big, 1, MPI_INT, root, comm, &req[1]);
                int done = 1;
                MPI_Test(&req[0], &done, MPI_STATUS_IGNORE);
                if (size > 1)
                    mtest_check(!done,
                                "root %d: the iallreduce completed before the others "
                                "started theirs",
                                root);
                MPI_Barrier(comm);
            } else {
                MPI_Barrier(comm);
                MPI_Iallreduce(&flag, &out, 1, MPI_INT, MPI_BAND, comm, &req[0]);
                MPI_Ibcast(&big, 1, MPI_INT, root, comm, &req[1]);
            }
            MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
            mtest_check_int("iallreduce(BAND) ordered after a barrier on some ranks", out,
                            size > 1 ? 0x9 : 0xb);
            mtest_check_int("ibcast ordered after a barrier on some ranks", big, 1000 * rep + root);
        }
    }
    MPI_Comm_free(&comm);
    return mtest_finalize();
}
