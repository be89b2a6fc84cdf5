/* Invalid arguments under MPI_ERRORS_RETURN return the right error class:
 * MPI_ERR_RANK, MPI_ERR_TAG, MPI_ERR_COUNT, MPI_ERR_TYPE, MPI_ERR_COMM,
 * MPI_ERR_ROOT, MPI_ERR_OP; afterwards the library still works. */
#include "mtest.h"

int main(int argc, char **argv)
{
    int rank, size, right, left, rc, flag, *tag_ub, buf[4] = {1, 2, 3, 4}, in[4];
    MPI_Request req;
    MPI_Status st;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    /* Ranks. */
    rc = MPI_Send(buf, 1, MPI_INT, size, 0, MPI_COMM_WORLD);
    mtest_check_class("Send to rank == size", rc, MPI_ERR_RANK);
    rc = MPI_Send(buf, 1, MPI_INT, -5, 0, MPI_COMM_WORLD);
    mtest_check_class("Send to rank -5", rc, MPI_ERR_RANK);
    rc = MPI_Recv(in, 1, MPI_INT, size + 3, 0, MPI_COMM_WORLD, &st);
    mtest_check_class("Recv from rank size+3", rc, MPI_ERR_RANK);
    rc = MPI_Isend(buf, 1, MPI_INT, size, 0, MPI_COMM_WORLD, &req);
    mtest_check_class("Isend to rank == size", rc, MPI_ERR_RANK);

    /* Tags. */
    rc = MPI_Send(buf, 1, MPI_INT, right, -3, MPI_COMM_WORLD);
    mtest_check_class("Send with tag -3", rc, MPI_ERR_TAG);
    rc = MPI_Send(buf, 1, MPI_INT, right, MPI_ANY_TAG, MPI_COMM_WORLD);
    mtest_check_class("Send with MPI_ANY_TAG", rc, MPI_ERR_TAG);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
    if (flag && *tag_ub < 2147483647) {
        rc = MPI_Send(buf, 1, MPI_INT, right, *tag_ub + 1, MPI_COMM_WORLD);
        mtest_check_class("Send with tag MPI_TAG_UB+1", rc, MPI_ERR_TAG);
    }
    rc = MPI_Recv(in, 1, MPI_INT, left, -7, MPI_COMM_WORLD, &st);
    mtest_check_class("Recv with tag -7", rc, MPI_ERR_TAG);

    /* Counts and datatypes. */
    rc = MPI_Send(buf, -1, MPI_INT, right, 0, MPI_COMM_WORLD);
    mtest_check_class("Send with count -1", rc, MPI_ERR_COUNT);
    rc = MPI_Recv(in, -2, MPI_INT, left, 0, MPI_COMM_WORLD, &st);
    mtest_check_class("Recv with count -2", rc, MPI_ERR_COUNT);
    rc = MPI_Send(buf, 1, MPI_DATATYPE_NULL, right, 0, MPI_COMM_WORLD);
    mtest_check_class("Send with MPI_DATATYPE_NULL", rc, MPI_ERR_TYPE);

    /* Communicators (the error goes to a handler that returns). */
    rc = MPI_Send(buf, 1, MPI_INT, right, 0, MPI_COMM_NULL);
    mtest_check_class("Send on MPI_COMM_NULL", rc, MPI_ERR_COMM);
    rc = MPI_Barrier(MPI_COMM_NULL);
    mtest_check_class("Barrier on MPI_COMM_NULL", rc, MPI_ERR_COMM);

    /* Roots (every rank makes the same bad call). */
    rc = MPI_Bcast(buf, 1, MPI_INT, size, MPI_COMM_WORLD);
    mtest_check_class("Bcast with root == size", rc, MPI_ERR_ROOT);
    rc = MPI_Bcast(buf, 1, MPI_INT, -4, MPI_COMM_WORLD);
    mtest_check_class("Bcast with root -4", rc, MPI_ERR_ROOT);
    rc = MPI_Reduce(buf, in, 1, MPI_INT, MPI_SUM, size + 1, MPI_COMM_WORLD);
    mtest_check_class("Reduce with root size+1", rc, MPI_ERR_ROOT);

    /* Operations. */
    rc = MPI_Allreduce(buf, in, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD);
    mtest_check_class("Allreduce with MPI_OP_NULL", rc, MPI_ERR_OP);

    /* Still works. */
    in[0] = -1;
    rc = MPI_Sendrecv(&buf[3], 1, MPI_INT, right, 1, in, 1, MPI_INT, left, 1, MPI_COMM_WORLD, &st);
    mtest_check_rc("Sendrecv after errors", rc);
    mtest_check_int("value after errors", in[0], 4);
    return mtest_finalize();
}
