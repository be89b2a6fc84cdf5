/* MPI_PROC_NULL: sends and receives complete at once; a receive's status has
 * source MPI_PROC_NULL, tag MPI_ANY_TAG and count 0, and the buffer is not
 * touched. */
#include "mtest.h"

static void check_null_status(const char *what, const MPI_Status *st)
{
    int count = -1;
    mtest_check(st->MPI_SOURCE == MPI_PROC_NULL, "%s: MPI_SOURCE %d, expected MPI_PROC_NULL",
                what, st->MPI_SOURCE);
    mtest_check(st->MPI_TAG == MPI_ANY_TAG, "%s: MPI_TAG %d, expected MPI_ANY_TAG", what,
                st->MPI_TAG);
    MPI_Get_count(st, MPI_INT, &count);
    mtest_check(count == 0, "%s: count %d, expected 0", what, count);
}

int main(int argc, char **argv)
{
    int buf[10], i, flag = 0;
    MPI_Status st;
    MPI_Request req[2];
    MPI_Status sts[2];

    mtest_init(&argc, &argv);
    for (i = 0; i < 10; i++)
        buf[i] = 100 + i;

    mtest_check_rc("Send to PROC_NULL", MPI_Send(buf, 10, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    mtest_check_rc("Ssend to PROC_NULL",
                   MPI_Ssend(buf, 10, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    mtest_check_rc("Recv from PROC_NULL",
                   MPI_Recv(buf, 10, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
    check_null_status("Recv(PROC_NULL) status", &st);
    for (i = 0; i < 10; i++)
        mtest_check_int("buffer after Recv(PROC_NULL)", buf[i], 100 + i);

    MPI_Irecv(buf, 10, MPI_INT, MPI_PROC_NULL, 2, MPI_COMM_WORLD, &req[0]);
    MPI_Isend(buf, 10, MPI_INT, MPI_PROC_NULL, 2, MPI_COMM_WORLD, &req[1]);
    MPI_Wait(&req[0], &st);
    check_null_status("Irecv(PROC_NULL) status", &st);
    MPI_Waitall(1, &req[1], sts);

    MPI_Sendrecv(buf, 10, MPI_INT, MPI_PROC_NULL, 3, buf, 10, MPI_INT, MPI_PROC_NULL, 3,
                 MPI_COMM_WORLD, &st);
    check_null_status("Sendrecv(PROC_NULL) status", &st);

    MPI_Probe(MPI_PROC_NULL, 4, MPI_COMM_WORLD, &st);
    check_null_status("Probe(PROC_NULL) status", &st);
    flag = 0;
    MPI_Iprobe(MPI_PROC_NULL, 4, MPI_COMM_WORLD, &flag, &st);
    mtest_check_int("Iprobe(PROC_NULL) flag", flag, 1);
    check_null_status("Iprobe(PROC_NULL) status", &st);
    for (i = 0; i < 10; i++)
        mtest_check_int("buffer at end", buf[i], 100 + i);
    return mtest_finalize();
}
