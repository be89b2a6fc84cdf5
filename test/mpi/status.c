/* Status fields: source, tag, count; MPI_STATUS_IGNORE and
 * MPI_STATUSES_IGNORE; the empty status returned for MPI_REQUEST_NULL. */
#include "mtest.h"

static void check_empty(const char *what, const MPI_Status *st)
{
    int count = -1, cancelled = -1;
    mtest_check_int(what, st->MPI_SOURCE, MPI_ANY_SOURCE);
    mtest_check_int(what, st->MPI_TAG, MPI_ANY_TAG);
    MPI_Get_count(st, MPI_BYTE, &count);
    mtest_check_int(what, count, 0);
    MPI_Test_cancelled(st, &cancelled);
    mtest_check_int(what, cancelled, 0);
}

int main(int argc, char **argv)
{
    int rank, size, right, left, i, flag, idx, count;
    int sval[4], rval[4];
    MPI_Request reqs[8], nreq = MPI_REQUEST_NULL;
    MPI_Status st, sts[8];

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;

    /* Status of a received message. */
    sval[0] = rank;
    MPI_Sendrecv(sval, 1, MPI_INT, right, 42, rval, 4, MPI_INT, left, MPI_ANY_TAG,
                 MPI_COMM_WORLD, &st);
    mtest_check_int("status source", st.MPI_SOURCE, left);
    mtest_check_int("status tag", st.MPI_TAG, 42);
    MPI_Get_count(&st, MPI_INT, &count);
    mtest_check_int("Get_count(MPI_INT)", count, 1);
    MPI_Get_count(&st, MPI_BYTE, &count);
    mtest_check_int("Get_count(MPI_BYTE)", count, (int)sizeof(int));
    mtest_check_int("received value", rval[0], left);

    /* MPI_STATUS_IGNORE on Recv and Wait; MPI_STATUSES_IGNORE on Waitall. */
    sval[1] = 7 * rank;
    MPI_Sendrecv(&sval[1], 1, MPI_INT, right, 43, &rval[1], 1, MPI_INT, left, 43, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    mtest_check_int("value with STATUS_IGNORE", rval[1], 7 * left);
    for (i = 0; i < 4; i++) {
        sval[i] = 100 * rank + i;
        MPI_Irecv(&rval[i], 1, MPI_INT, left, 50 + i, MPI_COMM_WORLD, &reqs[i]);
        MPI_Isend(&sval[i], 1, MPI_INT, right, 50 + i, MPI_COMM_WORLD, &reqs[4 + i]);
    }
    mtest_check_rc("Waitall with STATUSES_IGNORE", MPI_Waitall(8, reqs, MPI_STATUSES_IGNORE));
    for (i = 0; i < 4; i++)
        mtest_check_int("value with STATUSES_IGNORE", rval[i], 100 * left + i);

    /* Testall with a status array fills each status. */
    for (i = 0; i < 4; i++) {
        MPI_Irecv(&rval[i], 1, MPI_INT, left, 60 + i, MPI_COMM_WORLD, &reqs[i]);
        MPI_Isend(&sval[i], 1, MPI_INT, right, 60 + i, MPI_COMM_WORLD, &reqs[4 + i]);
    }
    flag = 0;
    while (!flag)
        MPI_Testall(8, reqs, &flag, sts);
    for (i = 0; i < 4; i++) {
        mtest_check_int("Testall status source", sts[i].MPI_SOURCE, left);
        mtest_check_int("Testall status tag", sts[i].MPI_TAG, 60 + i);
    }

    /* Empty statuses for null requests. */
    memset(&st, 0x5a, sizeof(st));
    MPI_Wait(&nreq, &st);
    check_empty("Wait(REQUEST_NULL)", &st);
    memset(&st, 0x5a, sizeof(st));
    flag = 0;
    MPI_Test(&nreq, &flag, &st);
    mtest_check_int("Test(REQUEST_NULL) flag", flag, 1);
    check_empty("Test(REQUEST_NULL)", &st);
    for (i = 0; i < 2; i++)
        reqs[i] = MPI_REQUEST_NULL;
    MPI_Waitany(2, reqs, &idx, &st);
    mtest_check_int("Waitany on null requests", idx, MPI_UNDEFINED);
    check_empty("Waitany(all null)", &st);
    memset(sts, 0x5a, sizeof(sts));
    MPI_Waitall(2, reqs, sts);
    check_empty("Waitall(all null)[0]", &sts[0]);
    check_empty("Waitall(all null)[1]", &sts[1]);
    return mtest_finalize();
}
