/* Large and odd-sized messages both ways at once, with a slow receiver, every byte checked:
 * through a gateway (stage twonet, docs/gateway.md) each is a stream of DATA packets the
 * gateway daemon reads in batches and forwards, so a byte out of place at a frame or packet
 * boundary, a lost or reordered packet, or a frame the gateway holds too long shows here.
 * Pairs (0-1, 2-3, ...): both send the same list of messages (contiguous, one of them twice
 * with one tag to check their order, and a strided one packed across fragment boundaries);
 * the higher rank of each pair is the slow receiver: it posts its receives late and then
 * looks at them only every 20 ms, so what is sent to it backs up (in the gateway, bounded by
 * its tokens, and in the sender's backlog, bounded by the credits). */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

static const int sizes[] = {4 << 20, (1 << 20) + 7, 65536 + 3, 100, (3 << 20) - 5,
                            0,       3 * 65536,     17};
#define NSIZES  ((int)(sizeof(sizes) / sizeof(sizes[0])))
#define NMSG    (NSIZES + 2) /* + the second of one tag + the strided one */
#define VCOUNT  2048         /* the strided one: 2048 blocks of 1000 bytes, 1024 apart */
#define VBLOCK  1000
#define VSTRIDE 1024

static unsigned char pat(int from, int msg, long off)
{
    return (unsigned char)(from * 37 + msg * 131 + off * 7 + (off >> 16) * 13 + (off >> 10));
}

static long msg_bytes(int m)
{
    if (m < NSIZES)
        return sizes[m];
    return m == NSIZES ? 5000 : (long)VCOUNT * VSTRIDE; /* (the strided one's extent) */
}

int main(int argc, char **argv)
{
    int rank, size, peer;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    peer = mtest_partner(rank, size);
    if (peer < 0 || peer == rank)
        return mtest_finalize();
    MPI_Datatype vec;
    MPI_Type_vector(VCOUNT, VBLOCK, VSTRIDE, MPI_BYTE, &vec);
    MPI_Type_commit(&vec);

    unsigned char *sb[NMSG], *rb[NMSG];
    MPI_Request rq[2 * NMSG];
    for (int m = 0; m < NMSG; m++) {
        long n = msg_bytes(m);
        sb[m] = malloc((size_t)n + 1);
        rb[m] = malloc((size_t)n + 1);
        for (long i = 0; i < n; i++)
            sb[m][i] = pat(rank, m, i);
        memset(rb[m], 0xee, (size_t)n + 1);
    }
    /* message NSIZES has the tag of message 0 (4 MiB, rendezvous) and goes after it: it must
     * arrive second although it is small (eager through a gateway) */
    for (int m = 0; m < NMSG; m++) {
        int tag = m == NSIZES ? 0 : m;
        if (m == NSIZES + 1)
            MPI_Isend(sb[m], 1, vec, peer, tag, MPI_COMM_WORLD, &rq[m]);
        else
            MPI_Isend(sb[m], (int)msg_bytes(m), MPI_BYTE, peer, tag, MPI_COMM_WORLD, &rq[m]);
    }
    int slow = rank > peer;
    if (slow)
        mtest_sleep_ms(300);
    for (int m = 0; m < NMSG; m++) {
        int tag = m == NSIZES ? 0 : m;
        if (m == NSIZES + 1)
            MPI_Irecv(rb[m], 1, vec, peer, tag, MPI_COMM_WORLD, &rq[NMSG + m]);
        else
            MPI_Irecv(rb[m], (int)msg_bytes(m) + 1, MPI_BYTE, peer, tag, MPI_COMM_WORLD,
                      &rq[NMSG + m]);
    }
    MPI_Status st[2 * NMSG];
    if (slow) {
        int done = 0;
        while (!done) {
            MPI_Testall(2 * NMSG, rq, &done, st);
            if (!done)
                mtest_sleep_ms(20);
        }
    } else {
        MPI_Waitall(2 * NMSG, rq, st);
    }
    for (int m = 0; m < NMSG; m++) {
        const MPI_Status *s = &st[NMSG + m];
        int count = -1;
        if (m == NSIZES + 1) {
            MPI_Get_count(s, vec, &count);
            mtest_check_int("strided message count", count, 1);
        } else {
            MPI_Get_count(s, MPI_BYTE, &count);
            mtest_check(count == msg_bytes(m), "message %d (tag %d): %d bytes, expected %ld", m,
                        s->MPI_TAG, count, msg_bytes(m));
        }
        long n = msg_bytes(m), bad = -1, nbad = 0;
        for (long i = 0; i < n; i++) {
            int in = m != NSIZES + 1 || i % VSTRIDE < VBLOCK; /* a byte the message carries */
            unsigned char want = in ? pat(peer, m, i) : 0xee;
            if (rb[m][i] != want && nbad++ == 0)
                bad = i;
        }
        mtest_check(nbad == 0,
                    "message %d (%ld bytes) from rank %d: %ld bytes wrong, the first at offset %ld "
                    "(got %u, expected %u)",
                    m, n, peer, nbad, bad, bad >= 0 ? rb[m][bad] : 0,
                    bad >= 0 ? pat(peer, m, bad) : 0);
        mtest_check(m == NSIZES + 1 || rb[m][n] == 0xee, "message %d: a byte past its end written",
                    m);
    }
    for (int m = 0; m < NMSG; m++) {
        free(sb[m]);
        free(rb[m]);
    }
    MPI_Type_free(&vec);
    return mtest_finalize();
}
