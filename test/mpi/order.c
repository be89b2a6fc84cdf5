/* Non-overtaking: many messages with the same (source, tag) and sizes that
 * cross the eager/rendezvous boundary must be received in the order sent.
 * Each message carries its sequence number in its first 4 bytes. Phase 1:
 * receives are posted after the sends (unexpected path); phase 2: all
 * receives are posted first (posted path); phase 3: receives use
 * MPI_ANY_SOURCE. Pairs 0->1, 2->3, ...; an odd rank out talks to itself. */
#include "mtest.h"

#define NMSG 40
#define MAXLEN 300000

static int msg_len(int i)
{
    static const int lens[] = {4, 100, 8000, 9000, 300000, 4, 20000, 8192, 4, 65536};
    return lens[i % 10];
}

/* Sequence number in bytes 0-3, the (rank, i) pattern in the rest. */
static void fill_msg(unsigned char *buf, int i, int rank)
{
    memcpy(buf, &i, sizeof(int));
    mtest_fill(buf + 4, (size_t)msg_len(i) - 4, rank, i);
}

static void check_msg(const unsigned char *buf, const MPI_Status *st, int i, int src)
{
    int seq = -1, count = -1, len = msg_len(i);

    memcpy(&seq, buf, sizeof(int));
    MPI_Get_count(st, MPI_BYTE, &count);
    if (!mtest_check(seq == i, "message %d arrived in position of message %d", seq, i))
        return;
    mtest_check_int("message length", count, len);
    mtest_verify("message body", buf + 4, (size_t)len - 4, src, i);
}

int main(int argc, char **argv)
{
    int rank, size, peer, phase, i;
    unsigned char *sbuf, *rbuf;
    MPI_Request *reqs;
    MPI_Status *sts;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    peer = mtest_partner(rank, size);
    sbuf = mtest_malloc((size_t)NMSG * MAXLEN);
    rbuf = mtest_malloc((size_t)NMSG * MAXLEN);
    reqs = mtest_malloc(sizeof(*reqs) * 2 * NMSG);
    sts = mtest_malloc(sizeof(*sts) * 2 * NMSG);
    for (phase = 0; phase < 3; phase++) {
        int sender = rank <= peer, receiver = rank >= peer;
        int nreq = 0;

        if (receiver && phase >= 1) {
            for (i = 0; i < NMSG; i++)
                MPI_Irecv(rbuf + (size_t)i * MAXLEN, MAXLEN, MPI_BYTE,
                          phase == 2 ? MPI_ANY_SOURCE : peer, 7, MPI_COMM_WORLD, &reqs[nreq++]);
            MPI_Barrier(MPI_COMM_WORLD);
        } else if (phase >= 1) {
            MPI_Barrier(MPI_COMM_WORLD);
        }
        if (sender) {
            for (i = 0; i < NMSG; i++) {
                unsigned char *b = sbuf + (size_t)i * MAXLEN;
                fill_msg(b, i, rank);
                MPI_Isend(b, msg_len(i), MPI_BYTE, peer, 7, MPI_COMM_WORLD, &reqs[nreq++]);
            }
        }
        if (receiver && phase == 0) {
            /* Let the messages pile up as unexpected before receiving. */
            mtest_sleep_ms(100);
            for (i = 0; i < NMSG; i++)
                MPI_Irecv(rbuf + (size_t)i * MAXLEN, MAXLEN, MPI_BYTE, peer, 7, MPI_COMM_WORLD,
                          &reqs[nreq++]);
        }
        MPI_Waitall(nreq, reqs, sts);
        if (receiver) {
            /* Receive requests are first in reqs[] for phases 1-2, last for phase 0
             * (and when sender == receiver, the sends come first in phase 0). */
            int base = (phase == 0 && sender) ? NMSG : 0;
            for (i = 0; i < NMSG; i++)
                check_msg(rbuf + (size_t)i * MAXLEN, &sts[base + i], i, peer);
        }
    }
    free(sbuf);
    free(rbuf);
    free(reqs);
    free(sts);
    return mtest_finalize();
}
