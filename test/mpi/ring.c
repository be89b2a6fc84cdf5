/* A token passed around the ring 100 times (each rank adds its rank), then
 * a 1 MiB message passed around once with blocking Send/Recv. */
#include "mtest.h"

#define LAPS 100
#define BIG (1 << 20)

int main(int argc, char **argv)
{
    int rank, size, right, left, lap, token, expect;
    unsigned char *buf;
    MPI_Request req;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;

    token = 0;
    for (lap = 0; lap < LAPS; lap++) {
        if (rank == 0) {
            int out = token;
            MPI_Isend(&out, 1, MPI_INT, right, lap, MPI_COMM_WORLD, &req);
            MPI_Recv(&token, 1, MPI_INT, left, lap, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            expect = (lap + 1) * (size * (size - 1) / 2);
            if (!mtest_check(token == expect, "lap %d: token %d, expected %d", lap, token, expect))
                break;
        } else {
            MPI_Recv(&token, 1, MPI_INT, left, lap, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            token += rank;
            MPI_Send(&token, 1, MPI_INT, right, lap, MPI_COMM_WORLD);
        }
    }

    buf = mtest_malloc(BIG);
    if (rank == 0) {
        unsigned char *in = mtest_malloc(BIG);
        mtest_fill(buf, BIG, 0, 1);
        MPI_Isend(buf, BIG, MPI_BYTE, right, 1, MPI_COMM_WORLD, &req);
        MPI_Recv(in, BIG, MPI_BYTE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        mtest_verify("big message after one lap", in, BIG, 0, 1);
        free(in);
    } else {
        MPI_Recv(buf, BIG, MPI_BYTE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        mtest_verify("big message on the way", buf, BIG, 0, 1);
        MPI_Send(buf, BIG, MPI_BYTE, right, 1, MPI_COMM_WORLD);
    }
    free(buf);
    return mtest_finalize();
}
