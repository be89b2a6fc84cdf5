/* Blocking MPI_Send/MPI_Recv of sizes around the eager and rendezvous
 * boundaries, with data verification and status checks. Pairs 0-1, 2-3, ...;
 * an odd rank out sends to itself with Isend/Recv. */
#include "mtest.h"

static const int sizes[] = {0, 1, 8, 1000, 8191, 8192, 8193, 65536, 1 << 20, 4 << 20};
#define NSIZES ((int)(sizeof(sizes) / sizeof(sizes[0])))
#define MAXSIZE (4 << 20)

static void check_status(const MPI_Status *st, int src, int tag, int len)
{
    int count = -1;

    mtest_check_int("status.MPI_SOURCE", st->MPI_SOURCE, src);
    mtest_check_int("status.MPI_TAG", st->MPI_TAG, tag);
    MPI_Get_count(st, MPI_BYTE, &count);
    mtest_check_int("Get_count", count, len);
}

int main(int argc, char **argv)
{
    int rank, size, peer, i, rep;
    unsigned char *sbuf, *rbuf;
    MPI_Status st;
    MPI_Request req;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    peer = mtest_partner(rank, size);
    sbuf = mtest_malloc(MAXSIZE);
    rbuf = mtest_malloc(MAXSIZE + 16);

    for (rep = 0; rep < 2; rep++) {
        for (i = 0; i < NSIZES; i++) {
            int len = sizes[i], tag = i + 100 * rep;

            mtest_fill(sbuf, (size_t)len, rank, tag);
            memset(rbuf, 0xee, (size_t)len + 16);
            if (peer == rank) {
                MPI_Isend(sbuf, len, MPI_BYTE, rank, tag, MPI_COMM_WORLD, &req);
                MPI_Recv(rbuf, MAXSIZE, MPI_BYTE, rank, tag, MPI_COMM_WORLD, &st);
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            } else if (rank < peer) {
                MPI_Send(sbuf, len, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
                MPI_Recv(rbuf, MAXSIZE, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &st);
            } else {
                MPI_Recv(rbuf, MAXSIZE, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &st);
                MPI_Send(sbuf, len, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
            }
            check_status(&st, peer, tag, len);
            mtest_verify("received data", rbuf, (size_t)len, peer, tag);
            mtest_check(rbuf[len] == 0xee, "size %d: byte past the message was overwritten", len);
            /* The send buffer must be untouched. */
            mtest_verify("send buffer after send", sbuf, (size_t)len, rank, tag);
        }
    }
    free(sbuf);
    free(rbuf);
    return mtest_finalize();
}
