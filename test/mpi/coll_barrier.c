/* MPI_Barrier: no rank leaves before every rank has entered. Each rank in
 * turn is late; entry and exit times come from CLOCK_MONOTONIC, which is
 * one clock for all processes of a node, so the check is made among the
 * ranks of each node: every exit is after the latest entry. */
#include "mtest.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    int rank, size, late, i, flag, val, got;
    double t_in, t_out, max_in;
    MPI_Comm node;
    MPI_Request req;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    for (i = 0; i < 10; i++)
        MPI_Barrier(MPI_COMM_WORLD);

    for (late = 0; late < size && late < 4; late++) {
        if (rank == late)
            mtest_sleep_ms(100);
        t_in = now();
        MPI_Barrier(MPI_COMM_WORLD);
        t_out = now();
        MPI_Allreduce(&t_in, &max_in, 1, MPI_DOUBLE, MPI_MAX, node);
        mtest_check(t_out >= max_in, "left the barrier %.6f s before the last rank entered",
                    max_in - t_out);
    }

    /* A message sent before a barrier can be received after it. */
    val = rank;
    MPI_Isend(&val, 1, MPI_INT, (rank + 1) % size, 3, MPI_COMM_WORLD, &req);
    MPI_Barrier(MPI_COMM_WORLD);
    flag = 0;
    while (!flag)
        MPI_Iprobe(MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    mtest_check_int("value", got, (rank + size - 1) % size);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Comm_free(&node);
    return mtest_finalize();
}
