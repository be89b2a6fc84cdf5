/*
 * MPI_Request_get_status_any/all/some (MPI 4.1): they report completed
 * requests without freeing them or making them inactive, and answer "done"
 * for a list of only null or inactive requests. Each rank receives three
 * messages from its right neighbour (itself on one rank), released one and
 * then two at a time.
 */
#include "mtest.h"

static void wait_any(MPI_Request *r, int *index, MPI_Status *st)
{
    int flag = 0;
    while (!flag)
        MPI_Request_get_status_any(3, r, index, &flag, st);
}

int main(int argc, char **argv)
{
    int rank, size, buf[3] = {-1, -1, -1}, val[3], index, flag, outcount, indices[3];
    MPI_Request r[3], s[3];
    MPI_Status st, sts[3];

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    /* only null requests: done, no index */
    r[0] = r[1] = r[2] = MPI_REQUEST_NULL;
    MPI_Request_get_status_any(3, r, &index, &flag, &st);
    mtest_check(flag == 1 && index == MPI_UNDEFINED, "any of nulls: flag %d index %d", flag, index);
    MPI_Request_get_status_all(3, r, &flag, sts);
    mtest_check(flag == 1, "all of nulls: flag %d", flag);
    MPI_Request_get_status_some(3, r, &outcount, indices, sts);
    mtest_check(outcount == MPI_UNDEFINED, "some of nulls: outcount %d", outcount);

    for (int i = 0; i < 3; i++)
        MPI_Irecv(&buf[i], 1, MPI_INT, left, i, MPI_COMM_WORLD, &r[i]);
    MPI_Request_get_status_all(3, r, &flag, sts);
    mtest_check(flag == 0, "all before any send: flag %d", flag);
    MPI_Request_get_status_some(3, r, &outcount, indices, sts);
    mtest_check(outcount == 0, "some before any send: outcount %d", outcount);
    MPI_Barrier(MPI_COMM_WORLD); /* nobody sends before every rank has looked */

    /* tag 1 first */
    val[1] = 100 * right + 1;
    MPI_Isend(&val[1], 1, MPI_INT, right, 1, MPI_COMM_WORLD, &s[1]);
    wait_any(r, &index, &st);
    mtest_check(index == 1 && st.MPI_TAG == 1 && st.MPI_SOURCE == left,
                "any: index %d tag %d source %d, expected 1 1 %d", index, st.MPI_TAG, st.MPI_SOURCE,
                left);
    mtest_check(r[1] != MPI_REQUEST_NULL, "get_status_any freed the request");
    mtest_check(buf[1] == 100 * rank + 1, "buf[1]=%d", buf[1]);
    /* asked again: the same answer, the request is still there */
    MPI_Request_get_status_any(3, r, &index, &flag, &st);
    mtest_check(flag && index == 1, "any again: flag %d index %d", flag, index);
    MPI_Request_get_status_some(3, r, &outcount, indices, sts);
    mtest_check(outcount == 1 && indices[0] == 1 && sts[0].MPI_TAG == 1,
                "some: outcount %d index %d tag %d", outcount, indices[0], sts[0].MPI_TAG);
    MPI_Request_get_status_all(3, r, &flag, sts);
    mtest_check(flag == 0, "all with two pending: flag %d", flag);
    MPI_Barrier(MPI_COMM_WORLD);

    val[0] = 100 * right, val[2] = 100 * right + 2;
    MPI_Isend(&val[0], 1, MPI_INT, right, 0, MPI_COMM_WORLD, &s[0]);
    MPI_Isend(&val[2], 1, MPI_INT, right, 2, MPI_COMM_WORLD, &s[2]);
    flag = 0;
    while (!flag)
        MPI_Request_get_status_all(3, r, &flag, sts);
    for (int i = 0; i < 3; i++) {
        mtest_check(sts[i].MPI_TAG == i && sts[i].MPI_SOURCE == left && sts[i].MPI_ERROR == 0,
                    "all: status %d tag %d source %d error %d", i, sts[i].MPI_TAG,
                    sts[i].MPI_SOURCE, sts[i].MPI_ERROR);
        mtest_check(r[i] != MPI_REQUEST_NULL, "get_status_all freed request %d", i);
        mtest_check(buf[i] == 100 * rank + i, "buf[%d]=%d", i, buf[i]);
    }
    MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
    MPI_Waitall(3, s, MPI_STATUSES_IGNORE);

    /* an inactive persistent request counts as null */
    MPI_Recv_init(&buf[0], 1, MPI_INT, left, 9, MPI_COMM_WORLD, &r[0]);
    MPI_Request_get_status_any(1, r, &index, &flag, &st);
    mtest_check(flag == 1 && index == MPI_UNDEFINED, "inactive persistent: flag %d index %d",
                flag, index);
    MPI_Request_free(&r[0]);
    return mtest_finalize();
}
