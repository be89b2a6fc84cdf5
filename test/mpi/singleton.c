/* Started without mpirun (a singleton): MPI_COMM_WORLD has one rank and
 * communicating with oneself works. The test list runs it directly. */
#include "mtest.h"

int main(int argc, char **argv)
{
    int size = -1, rank = -1, out = 42, in = 0;
    MPI_Status st;

    mtest_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    mtest_check_int("world size", size, 1);
    mtest_check_int("world rank", rank, 0);
    MPI_Sendrecv(&out, 1, MPI_INT, 0, 7, &in, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, &st);
    mtest_check_int("self sendrecv value", in, 42);
    mtest_check_int("self sendrecv source", st.MPI_SOURCE, 0);
    MPI_Barrier(MPI_COMM_WORLD);
    return mtest_finalize();
}
