/* Half packets (DCFA_HALF_PACKETS, docs/protocol.md): an eager message of at most 12 bytes
 * takes half a ring block, the next packet the other half or, when it is not a half, a PAD
 * that closes the block first. Every sender streams to rank 1 messages whose sizes mix
 * halves (0-12 bytes) with whole packets (13 bytes up, a rendezvous now and then, a
 * synchronous send), by MPI_Send and windows of MPI_Isend, with tags that follow the
 * sequence; rank 1 takes them partly posted ahead, partly after they arrived, partly with
 * MPI_ANY_TAG (and MPI_ANY_SOURCE at 2 ranks), and checks every envelope, length and byte. Then a
 * ping-pong of 8-byte messages, where each side writes first and second halves in turn,
 * and an MPI_Isend of 8 bytes cancelled before anybody receives it: it must be withdrawn.
 * The pvar dcfa_half_sent must count the halves on a node's rings (none with the variant
 * that turns them off). */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

#define NMSG 3000
#define WIN 16
#define MAXLEN 20000

static const int sizes[] = {0, 1, 4, 7, 8, 11, 12, 13, 16, 40, 8, 8, 3, 12, 100, 2000, 12, 9, 20000, 5};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

static int len_of(int sender, int i) { return sizes[(i * 7 + sender * 3) % NSIZES]; }
static unsigned char byte_of(int sender, int i, int k) { return (unsigned char)(i * 31 + k * 7 + sender + 1); }

static void fill(unsigned char *b, int sender, int i, int n)
{
    for (int k = 0; k < n; k++)
        b[k] = byte_of(sender, i, k);
}

static void check(const unsigned char *b, const MPI_Status *st, int sender, int i)
{
    int n = len_of(sender, i), got;
    MPI_Get_count(st, MPI_BYTE, &got);
    if (st->MPI_SOURCE != sender || st->MPI_TAG != i % 1000 || got != n) {
        mtest_fail("message %d from %d: source %d tag %d count %d, want %d %d %d", i, sender, st->MPI_SOURCE,
                   st->MPI_TAG, got, sender, i % 1000, n);
        return;
    }
    for (int k = 0; k < n; k++)
        if (b[k] != byte_of(sender, i, k)) {
            mtest_fail("message %d from %d (%d bytes): byte %d wrong", i, sender, n, k);
            return;
        }
}

int main(int argc, char **argv)
{
    int rank, size;
    if (!mtest_init_pvars(&argc, &argv, 2, &rank, &size))
        return mtest_finalize();
    MPI_T_pvar_session ses;
    MPI_T_pvar_session_create(&ses);
    unsigned long long half0 = mtest_pvar_counter(ses, "dcfa_half_sent");
    unsigned char *buf = malloc((size_t)WIN * MAXLEN);
    MPI_Request reqs[WIN];
    MPI_Status sts[WIN];

    /* 1. streams to rank 1 */
    if (rank != 1) {
        for (int i = 0; i < NMSG;) {
            if ((i / WIN) % 3 == 2) {       /* a window of MPI_Isend */
                int w;
                for (w = 0; w < WIN && i < NMSG; w++, i++) {
                    fill(buf + (size_t)w * MAXLEN, rank, i, len_of(rank, i));
                    MPI_Isend(buf + (size_t)w * MAXLEN, len_of(rank, i), MPI_BYTE, 1, i % 1000, MPI_COMM_WORLD,
                              &reqs[w]);
                }
                MPI_Waitall(w, reqs, MPI_STATUSES_IGNORE);
            } else {
                fill(buf, rank, i, len_of(rank, i));
                if (i % 97 == 0)
                    MPI_Ssend(buf, len_of(rank, i), MPI_BYTE, 1, i % 1000, MPI_COMM_WORLD);
                else
                    MPI_Send(buf, len_of(rank, i), MPI_BYTE, 1, i % 1000, MPI_COMM_WORLD);
                i++;
            }
        }
    } else {
        for (int sender = 0; sender < size; sender++) {
            if (sender == 1)
                continue;
            for (int i = 0; i < NMSG;) {
                int w, n = 0;
                /* wildcards: MPI_ANY_TAG in order from one sender; MPI_ANY_SOURCE too where
                 * there is one sender */
                int any = (i / WIN) % 4 == 3;
                int src = any && size == 2 ? MPI_ANY_SOURCE : sender;
                for (w = 0; w < WIN && i + w < NMSG; w++, n++)
                    MPI_Irecv(buf + (size_t)w * MAXLEN, MAXLEN, MPI_BYTE, src, any ? MPI_ANY_TAG : (i + w) % 1000,
                              MPI_COMM_WORLD, &reqs[w]);
                MPI_Waitall(n, reqs, sts);
                for (w = 0; w < n; w++)
                    check(buf + (size_t)w * MAXLEN, &sts[w], sender, i + w);
                i += n;
                if ((i / WIN) % 5 == 1) {       /* let some arrive before their receives */
                    double t = MPI_Wtime();
                    while (MPI_Wtime() - t < 1e-4)
                        ;
                }
            }
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* 2. ping-pong of 8 bytes between ranks 0 and 1: halves both ways */
    if (rank < 2) {
        int peer = 1 - rank;
        for (int i = 0; i < 500; i++) {
            unsigned char m[8];
            if (rank == 0) {
                fill(m, 0, i, 8);
                MPI_Send(m, 8, MPI_BYTE, peer, 7, MPI_COMM_WORLD);
                MPI_Recv(m, 8, MPI_BYTE, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                for (int k = 0; k < 8; k++)
                    if (m[k] != (unsigned char)(byte_of(0, i, k) + 1)) {
                        mtest_fail("ping-pong %d: byte %d wrong", i, k);
                        break;
                    }
            } else {
                MPI_Recv(m, 8, MPI_BYTE, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                for (int k = 0; k < 8; k++)
                    m[k]++;
                MPI_Send(m, 8, MPI_BYTE, peer, 7, MPI_COMM_WORLD);
            }
        }
    }

    /* 3. an MPI_Isend of 8 bytes, cancelled while unmatched: withdrawn, never received */
    if (rank == 0) {
        unsigned char m[8] = {1, 2, 3, 4, 5, 6, 7, 8};
        MPI_Request r;
        MPI_Status st;
        int cancelled = 0;
        MPI_Isend(m, 8, MPI_BYTE, 1, 999, MPI_COMM_WORLD, &r);
        MPI_Cancel(&r);
        MPI_Wait(&r, &st);
        MPI_Test_cancelled(&st, &cancelled);
        if (!cancelled)
            mtest_fail("the cancelled MPI_Isend of 8 bytes was not withdrawn");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        int flag = 1;
        MPI_Iprobe(0, 999, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        if (flag)
            mtest_fail("the cancelled message arrived anyway");
    }

    /* every sender's small messages went as halves (on shm rings: one node, the default
     * fabrics), unless they are off */
    unsigned long long halves = mtest_pvar_counter(ses, "dcfa_half_sent") - half0;
    const char *env = getenv("DCFA_HALF_PACKETS"), *fabs = getenv("DCFA_FABRICS");
    int off = env && atoi(env) == 0, shm = !fabs || strstr(fabs, "shm");
    if (rank != 1) {
        if (off && halves != 0)
            mtest_fail("DCFA_HALF_PACKETS=0: %llu half packets sent", halves);
        if (!off && shm && halves < NMSG / 4)
            mtest_fail("%llu half packets sent, want at least %d", halves, NMSG / 4);
    }
    MPI_T_pvar_session_free(&ses);
    MPI_T_finalize();
    free(buf);
    return mtest_finalize();
}
