/* The sender's copy into its staging pool with non-temporal stores (DCFA_STAGE_NT,
 * docs/protocol.md): rank 0 streams messages of odd lengths from odd offsets of its
 * buffer to rank 1 through the pool (the copy path pinned by DCFA_CMA_MIN), then
 * staged EAGER ones, then a ping-pong that reuses the same chunks at once; every
 * message must arrive whole. The pvar dcfa_stage_nt_bytes must count the streamed
 * copies: on x86-64 every pool copy of at least DCFA_STAGE_NT bytes (default 4096), so
 * all but the short last fragments; none when the variant sets it to 0 (or off x86-64).
 * Then both ranks stream 512 KiB messages to each other at once: with the copies
 * streamed, the receivers take them through the pool too. Last, rank 1 posts a window of
 * 16 receives of 256 KiB that rank 0 fills, then one of 512 KiB alone: dcfa_recv_nt_bytes
 * must count what it copied out of the pool with non-temporal stores, the window's (the
 * receives under way add up to 8 x DCFA_RECV_NT, 256 KiB) but not the one alone. Then the
 * same window into one buffer, as the field's bandwidth programs post it: 256 KiB of
 * memory, which stays in cache, so nothing streamed (but with DCFA_RECV_NT=1). */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

#define NMSG 24
#define BOTH (512 << 10)
#define NWIN 16
#define WIN (256 << 10)
#define MAXLEN (280 << 10)      /* the longest, 272005 bytes, from offset up to 4095 */

int main(int argc, char **argv)
{
    int rank, size;
    setenv("DCFA_CMA_MIN", "1073741824", 0);      /* every rendezvous through the pool */
    if (!mtest_init_pvars(&argc, &argv, 2, &rank, &size))
        return mtest_finalize();
    size_t len[NMSG], off[NMSG];
    for (int i = 0; i < NMSG; i++) {
        len[i] = (size_t)(16 << 10) + (size_t)i * 11111 + (size_t)(i % 5) * 17;     /* 16 KiB-272 KiB */
        off[i] = (size_t)(i * 37) % 4096;
    }
    unsigned char *buf = mtest_malloc((size_t)NMSG * MAXLEN);
    MPI_Request rq[NMSG];
    MPI_T_pvar_session ses;
    MPI_T_pvar_session_create(&ses);
    unsigned long long nt0 = mtest_pvar_counter(ses, "dcfa_stage_nt_bytes");
    unsigned long long st0 = mtest_pvar_counter(ses, "dcfa_stage_bytes");

    /* 1: a stream, every receive posted before the sends start */
    if (rank == 0) {
        for (int i = 0; i < NMSG; i++)
            mtest_fill(buf + (size_t)i * MAXLEN + off[i], len[i], 0, i);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < NMSG; i++)
            MPI_Isend(buf + (size_t)i * MAXLEN + off[i], (int)len[i], MPI_BYTE, 1, i, MPI_COMM_WORLD, &rq[i]);
        MPI_Waitall(NMSG, rq, MPI_STATUSES_IGNORE);
    } else if (rank == 1) {
        memset(buf, 0, (size_t)NMSG * MAXLEN);
        for (int i = 0; i < NMSG; i++)
            MPI_Irecv(buf + (size_t)i * MAXLEN + (size_t)i, (int)len[i], MPI_BYTE, 0, i, MPI_COMM_WORLD, &rq[i]);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Waitall(NMSG, rq, MPI_STATUSES_IGNORE);
        for (int i = 0; i < NMSG; i++)
            if (!mtest_verify("stream", buf + (size_t)i * MAXLEN + (size_t)i, len[i], 0, i))
                break;
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
    }

    /* 2: a ping-pong of 40 KiB-64 KiB (staged EAGER once the pool is mapped, else
     * rendezvous through it): each reuses the chunk the peer just read */
    if (rank < 2) {
        int peer = 1 - rank;
        for (int i = 0; i < 40; i++) {
            size_t n = (size_t)(40 << 10) + (size_t)i * 613;
            unsigned char *p = buf + (size_t)(i & 3) * 8 + 1;
            if ((i & 1) == rank) {
                mtest_fill(p, n, rank, 100 + i);
                MPI_Send(p, (int)n, MPI_BYTE, peer, 100 + i, MPI_COMM_WORLD);
            } else {
                memset(p, 0, n);
                MPI_Recv(p, (int)n, MPI_BYTE, peer, 100 + i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                if (!mtest_verify("ping-pong", p, n, peer, 100 + i))
                    break;
            }
        }
    }

    unsigned long long st1 = mtest_pvar_counter(ses, "dcfa_stage_bytes");
    unsigned long long nt1 = mtest_pvar_counter(ses, "dcfa_stage_nt_bytes");

    /* 3: both ways at once, 4 messages of 512 KiB each way: with the copies streamed the
     * receivers follow the senders' request for the pool although they send too */
    if (rank < 2) {
        int peer = 1 - rank;
        unsigned char *out = buf, *in = buf + (size_t)8 * MAXLEN;
        MPI_Request rr[8];
        for (int i = 0; i < 4; i++) {
            mtest_fill(out + (size_t)i * BOTH, BOTH, rank, 300 + i);
            memset(in + (size_t)i * BOTH, 0, BOTH);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < 4; i++) {
            MPI_Irecv(in + (size_t)i * BOTH, BOTH, MPI_BYTE, peer, 300 + i, MPI_COMM_WORLD, &rr[i]);
            MPI_Isend(out + (size_t)i * BOTH, BOTH, MPI_BYTE, peer, 300 + i, MPI_COMM_WORLD, &rr[4 + i]);
        }
        MPI_Waitall(8, rr, MPI_STATUSES_IGNORE);
        for (int i = 0; i < 4; i++)
            if (!mtest_verify("both ways", in + (size_t)i * BOTH, BOTH, peer, 300 + i))
                break;
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
    }

    /* 4: the receiver's copy out of the pool (DCFA_RECV_NT): rank 1 posts a window of 16
     * receives of 256 KiB (4 MiB), which rank 0 then fills; then one receive of 512 KiB
     * alone, as a collective posts */
    unsigned long long rwin = 0, rlone = 0, rone = 0;
    if (rank < 2) {
        MPI_Request rr[NWIN];
        unsigned long long r0 = mtest_pvar_counter(ses, "dcfa_recv_nt_bytes");
        if (rank == 1)
            for (int i = 0; i < NWIN; i++)
                MPI_Irecv(buf + (size_t)i * WIN, WIN, MPI_BYTE, 0, 400 + i, MPI_COMM_WORLD, &rr[i]);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            for (int i = 0; i < NWIN; i++) {
                mtest_fill(buf + (size_t)i * WIN, WIN, 0, 400 + i);
                MPI_Isend(buf + (size_t)i * WIN, WIN, MPI_BYTE, 1, 400 + i, MPI_COMM_WORLD, &rr[i]);
            }
        MPI_Waitall(NWIN, rr, MPI_STATUSES_IGNORE);
        if (rank == 1)
            for (int i = 0; i < NWIN; i++)
                if (!mtest_verify("window", buf + (size_t)i * WIN, WIN, 0, 400 + i))
                    break;
        unsigned long long r1 = mtest_pvar_counter(ses, "dcfa_recv_nt_bytes");
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            mtest_fill(buf, 2 * WIN, 0, 500);
            MPI_Send(buf, 2 * WIN, MPI_BYTE, 1, 500, MPI_COMM_WORLD);
        } else {
            MPI_Recv(buf, 2 * WIN, MPI_BYTE, 0, 500, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            mtest_verify("alone", buf, 2 * WIN, 0, 500);
        }
        rwin = r1 - r0;
        unsigned long long r2 = mtest_pvar_counter(ses, "dcfa_recv_nt_bytes");
        rlone = r2 - r1;
        /* 5: the window again, every message from one buffer into one buffer */
        if (rank == 1)
            for (int i = 0; i < NWIN; i++)
                MPI_Irecv(buf, WIN, MPI_BYTE, 0, 600 + i, MPI_COMM_WORLD, &rr[i]);
        else
            mtest_fill(buf, WIN, 0, 600);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            for (int i = 0; i < NWIN; i++)
                MPI_Isend(buf, WIN, MPI_BYTE, 1, 600 + i, MPI_COMM_WORLD, &rr[i]);
        MPI_Waitall(NWIN, rr, MPI_STATUSES_IGNORE);
        if (rank == 1)
            mtest_verify("one buffer", buf, WIN, 0, 600);
        rone = mtest_pvar_counter(ses, "dcfa_recv_nt_bytes") - r2;
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
    }

    if (rank < 2) {
        unsigned long long nt = nt1 - nt0;
        unsigned long long staged = st1 - st0;
        unsigned long long both = mtest_pvar_counter(ses, "dcfa_stage_bytes") - st1;
        const char *e = getenv("DCFA_STAGE_NT");
#if defined(__x86_64__)
        int on = !(e && atol(e) == 0);
#else
        int on = 0;
#endif
        mtest_check(staged > 0, "rank %d: nothing went through the staging pool", rank);
        if (on) {
            /* the stream's fragments but its messages' last ones (under 4 KiB: 9 of the 24
             * have one) and every ping-pong message are whole chunks of at least 4 KiB */
            unsigned long long floor = staged > (unsigned long long)NMSG * 4096 ? staged - (unsigned long long)NMSG * 4096 : 0;
            mtest_check(nt >= floor && nt <= staged,
                        "rank %d: %llu of %llu bytes through the pool streamed, expected at least %llu", rank,
                        nt, staged, floor);
            /* the first may go single copy (a message alone), the others through the pool */
            mtest_check(both >= 3ull * BOTH, "rank %d: %llu bytes through the pool both ways, expected at least %d",
                        rank, both, 3 * BOTH);
        } else {
            mtest_check(nt == 0, "rank %d: %llu bytes streamed with DCFA_STAGE_NT=%s", rank, nt, e ? e : "(unset)");
        }
        /* the receiver's side (section 4, rank 1): streamed while the receives under way add
         * up to 8 times DCFA_RECV_NT (256 KiB): the window's first messages at least (a
         * fragment that came through the ring, when the pool was held, is not), never the
         * 512 KiB alone; DCFA_RECV_NT=1 streams both; above 256 KiB or 0, neither */
        const char *er = getenv("DCFA_RECV_NT");
        long rmin = er ? atol(er) : 262144;
#if defined(__x86_64__)
        int win_on = rmin > 0 && rmin <= WIN && (unsigned long long)NWIN * WIN / 8 >= (unsigned long long)rmin;
        int lone_on = rmin > 0 && rmin <= 2 * WIN && 2ull * WIN / 8 >= (unsigned long long)rmin;
        int one_on =
            rmin > 0 && rmin <= WIN && (unsigned long long)WIN / 8 >= (unsigned long long)rmin;
#else
        int win_on = 0, lone_on = 0, one_on = 0;
#endif
        if (rank == 1) {
            mtest_check(win_on ? rwin > 0 && rwin <= (unsigned long long)NWIN * WIN : rwin == 0,
                        "window of %d x %d: %llu bytes received with non-temporal stores (DCFA_RECV_NT=%ld), expected %s",
                        NWIN, WIN, rwin, rmin, win_on ? "some" : "none");
            mtest_check(lone_on ? rlone > 0 && rlone <= 2ull * WIN : rlone == 0,
                        "one receive of %d alone: %llu bytes received with non-temporal stores (DCFA_RECV_NT=%ld), expected %s",
                        2 * WIN, rlone, rmin, lone_on ? "some" : "none");
            mtest_check(one_on ? rone > 0 && rone <= (unsigned long long)NWIN * WIN : rone == 0,
                        "window of %d x %d into one buffer: %llu bytes received with non-temporal "
                        "stores (DCFA_RECV_NT=%ld), expected %s",
                        NWIN, WIN, rone, rmin, one_on ? "some" : "none");
        }
    }
    MPI_T_pvar_session_free(&ses);
    free(buf);
    MPI_T_finalize();
    return mtest_finalize();
}
