/* Oversubscription: run with more ranks than cores (8 on 2 cores). Rank 0
 * sleeps 2 s before a barrier while the others wait in it. Nobody may leave
 * before rank 0 entered, and everybody must leave soon after (waiting ranks
 * must yield the CPU instead of starving rank 0). Times come from
 * CLOCK_MONOTONIC, shared by the processes of one node, and are compared
 * among the ranks of a node. Then some rounds of traffic. */
#include "mtest.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    int rank, size, i, val, sum, nrank;
    double t_in, t_out, t0_in;
    MPI_Comm node;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &nrank);
    MPI_Barrier(MPI_COMM_WORLD);
    if (nrank == 0)
        mtest_sleep_ms(2000);
    t_in = now();
    MPI_Barrier(MPI_COMM_WORLD);
    t_out = now();
    t0_in = t_in;
    MPI_Bcast(&t0_in, 1, MPI_DOUBLE, 0, node);
    mtest_check(t_out >= t0_in, "left the barrier %.6f s before the sleeping rank entered",
                t0_in - t_out);
    mtest_check(t_out - t0_in < 5.0, "left the barrier %.3f s after the sleeping rank entered",
                t_out - t0_in);

    for (i = 0; i < 20; i++) {
        val = rank + i;
        MPI_Allreduce(&val, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        mtest_check_int("Allreduce under oversubscription", sum,
                        size * (size - 1) / 2 + i * size);
    }
    MPI_Comm_free(&node);
    return mtest_finalize();
}
