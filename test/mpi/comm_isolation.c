/* Context isolation: messages on a dup'd (or split) communicator never
 * match receives on the parent, even with the same source and tag and
 * wildcards, and probes on one do not see the other's messages. */
#include "mtest.h"

int main(int argc, char **argv)
{
    int rank, size, right, left, flag, a, b, c;
    int va, vb, vc;
    MPI_Comm dup, split;
    MPI_Request req[3];
    MPI_Status st;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &split);   /* same ranks, new context */

    /* The same (dest, tag) on three communicators, dup first. */
    va = 100 + rank;
    vb = 200 + rank;
    vc = 300 + rank;
    MPI_Isend(&vb, 1, MPI_INT, right, 5, dup, &req[0]);
    MPI_Isend(&vc, 1, MPI_INT, right, 5, split, &req[1]);
    MPI_Isend(&va, 1, MPI_INT, right, 5, MPI_COMM_WORLD, &req[2]);
    MPI_Barrier(MPI_COMM_WORLD);

    /* A wildcard receive on WORLD must get WORLD's message only. */
    MPI_Recv(&a, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    mtest_check_int("WORLD wildcard receive got WORLD's message", a, 100 + left);
    flag = -1;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    mtest_check_int("Iprobe on WORLD sees another comm's message", flag, 0);
    MPI_Recv(&c, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, split, &st);
    mtest_check_int("split receive", c, 300 + left);
    MPI_Recv(&b, 1, MPI_INT, left, 5, dup, &st);
    mtest_check_int("dup receive", b, 200 + left);
    MPI_Waitall(3, req, MPI_STATUSES_IGNORE);

    /* Receives posted first on dup and WORLD; the sends come in the
     * opposite order and still go to their own communicator. */
    MPI_Irecv(&b, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &req[0]);
    MPI_Irecv(&a, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &req[1]);
    MPI_Barrier(MPI_COMM_WORLD);
    va = 1000 + rank;
    vb = 2000 + rank;
    MPI_Send(&va, 1, MPI_INT, right, 9, MPI_COMM_WORLD);
    MPI_Send(&vb, 1, MPI_INT, right, 9, dup);
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    mtest_check_int("posted WORLD receive", a, 1000 + left);
    mtest_check_int("posted dup receive", b, 2000 + left);

    MPI_Comm_free(&split);
    MPI_Comm_free(&dup);
    return mtest_finalize();
}
