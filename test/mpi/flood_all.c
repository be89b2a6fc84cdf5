/* Every rank floods rank 0 while rank 0 is not receiving (docs/protocol.md:
 * why the ring cannot deadlock). Each sender sends NMSG messages of mixed
 * sizes (one block, several blocks, an eager message at the limit, and
 * rendezvous ones) with blocking MPI_Send, so it is throttled by its
 * connection's credits. Rank 0 sleeps outside MPI first, then drains the
 * senders one after the other, the highest rank first: every sender must
 * progress once rank 0 turns to it, and every message must arrive whole and
 * in order. Then the same with nonblocking sends that all wait at once. */
#include "mtest.h"

#include <unistd.h>

#define NMSG 300

static const int sizes[] = {8, 100, 1000, 4000, 16000, 16352, 40000};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

static int msg_len(int i, int src) { return sizes[(i + src) % NSIZES]; }

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsigned char *buf = mtest_malloc(40000), *want = mtest_malloc(40000);
    for (int pass = 0; pass < 2 && size > 1; pass++) {
        int tag = 10 + pass;
        if (rank == 0) {
            usleep(300000); /* the senders fill their rings meanwhile */
            for (int src = size - 1; src >= 1; src--)
                for (int i = 0; i < NMSG; i++) {
                    MPI_Status st;
                    int len = msg_len(i, src), got = -1;
                    MPI_Recv(buf, 40000, MPI_BYTE, src, tag, MPI_COMM_WORLD, &st);
                    MPI_Get_count(&st, MPI_BYTE, &got);
                    if (!mtest_check(got == len, "pass %d: message %d from %d: %d bytes, expected %d",
                                     pass, i, src, got, len))
                        break;
                    /* the first bytes carry the message's index: order is checked */
                    int idx = -1;
                    memcpy(&idx, buf, sizeof idx);
                    if (!mtest_check(idx == i, "pass %d: from %d: message %d arrived as number %d",
                                     pass, src, idx, i))
                        break;
                    mtest_fill(want, (size_t)len, src, tag);
                    memcpy(want, &i, sizeof i);
                    if (!mtest_check(memcmp(buf, want, (size_t)len) == 0,
                                     "pass %d: message %d from %d: wrong data", pass, i, src))
                        break;
                }
        } else if (pass == 0) {
            unsigned char *s = mtest_malloc(40000);
            for (int i = 0; i < NMSG; i++) {
                int len = msg_len(i, rank);
                mtest_fill(s, (size_t)len, rank, tag);
                memcpy(s, &i, sizeof i);
                MPI_Send(s, len, MPI_BYTE, 0, tag, MPI_COMM_WORLD);
            }
            free(s);
        } else {
            unsigned char *s = mtest_malloc((size_t)NMSG * 40000);
            MPI_Request *r = mtest_malloc(NMSG * sizeof *r);
            for (int i = 0; i < NMSG; i++) {
                unsigned char *m = s + (size_t)i * 40000;
                int len = msg_len(i, rank);
                mtest_fill(m, (size_t)len, rank, tag);
                memcpy(m, &i, sizeof i);
                MPI_Isend(m, len, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &r[i]);
            }
            MPI_Waitall(NMSG, r, MPI_STATUSES_IGNORE);
            free(r);
            free(s);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    free(buf);
    free(want);
    return mtest_finalize();
}
