/* Rendezvous over sock's one-sided frames (docs/fabric.md "sock: one-sided frames"): the
 * receiver reads (READQ/READR) the data of an RTS, the sender writes (WRITE) the data of an
 * RTR, each straight from and into the user's buffers, among eager packets on the same stream.
 * 2 ranks, DCFA_FABRICS=sock. Checked:
 *   - sender first (the receive posted after the RTS came: a read), receiver first (an RTR: a
 *     write), into a contiguous buffer and into a strided one, 264 KiB to 3 MiB (above
 *     DCFA_SOCK_EAGER_LIMIT's default, 256 KiB of payload);
 *   - a window of 24 messages on one tag, eager and rendezvous mixed, both ways at once: each
 *     whole and in order;
 *   - the pvars: with DCFA_SOCK_RMA=1 (the default) dcfa_cma_bytes grew by at least every
 *     rendezvous byte and dcfa_copy_bytes not at all; with SOCK_RMA_EXPECT=0 (the test list
 *     runs it with DCFA_SOCK_RMA=0) the reverse. */
#include "mtest.h"
#include <stdint.h>

enum { WIN = 24 };
#define RNDV_FROM ((size_t)256 << 10) /* DCFA_SOCK_EAGER_LIMIT's default, its header left out */

static const size_t big_sizes[] = {264 << 10, 520 << 10, 1 << 20, 3 << 20};

static void counters(MPI_T_pvar_session s, unsigned long long *copy, unsigned long long *cma)
{
    *copy = mtest_pvar_counter(s, "dcfa_copy_bytes");
    *cma = mtest_pvar_counter(s, "dcfa_cma_bytes");
}

static size_t win_size(int i)
{
    return i % 3 == 0 ? RNDV_FROM + (4 << 10) + 8 * (size_t)i : (size_t)100 + 40 * i;
}

int main(int argc, char **argv)
{
    int rank, size;
    if (!mtest_init_pvars(&argc, &argv, 2, &rank, &size))
        return mtest_finalize();
    const char *e = getenv("SOCK_RMA_EXPECT");
    int expect = e ? atoi(e) : 1;
    int peer = 1 - rank;
    MPI_T_pvar_session ses;
    MPI_T_pvar_session_create(&ses);
    unsigned long long copy0, cma0, copy1, cma1, rndv = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    counters(ses, &copy0, &cma0);

    size_t maxb = 3 << 20;
    unsigned char *sbuf = mtest_malloc(maxb), *rbuf = mtest_malloc(2 * maxb);
    for (size_t k = 0; k < sizeof big_sizes / sizeof *big_sizes; k++) {
        size_t n = big_sizes[k];
        for (int mode = 0; mode < 4; mode++) {
            int recv_first = mode & 1, strided = mode & 2;
            int tag = (int)(10 * k + mode);
            /* strided: n bytes as n/8 blocks of 8 every 16 bytes */
            MPI_Datatype vec;
            MPI_Type_vector((int)(n / 8), 8, 16, MPI_BYTE, &vec);
            MPI_Type_commit(&vec);
            if (rank == 0) {
                mtest_fill(sbuf, n, tag, 0);
                if (recv_first)
                    MPI_Barrier(MPI_COMM_WORLD); /* rank 1's receive is posted */
                MPI_Send(sbuf, (int)n, MPI_BYTE, 1, tag, MPI_COMM_WORLD);
                if (!recv_first)
                    MPI_Barrier(MPI_COMM_WORLD);
            } else {
                memset(rbuf, 0xee, 2 * n);
                MPI_Request rq;
                if (!recv_first) {
                    /* the RTS is here before the receive is posted */
                    MPI_Status st;
                    MPI_Probe(0, tag, MPI_COMM_WORLD, &st);
                }
                if (strided)
                    MPI_Irecv(rbuf, 1, vec, 0, tag, MPI_COMM_WORLD, &rq);
                else
                    MPI_Irecv(rbuf, (int)n, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &rq);
                if (recv_first)
                    MPI_Barrier(MPI_COMM_WORLD);
                MPI_Wait(&rq, MPI_STATUS_IGNORE);
                if (!recv_first)
                    MPI_Barrier(MPI_COMM_WORLD);
                unsigned char *want = mtest_malloc(n);
                mtest_fill(want, n, tag, 0);
                size_t bad = SIZE_MAX;
                for (size_t i = 0; i < n && bad == SIZE_MAX; i++) {
                    size_t at = strided ? (i / 8) * 16 + i % 8 : i;
                    if (rbuf[at] != want[i])
                        bad = i;
                }
                if (strided)
                    for (size_t i = 0; i < n / 8 && bad == SIZE_MAX; i++)
                        for (int j = 8; j < 16; j++)
                            if (rbuf[i * 16 + j] != 0xee)
                                bad = i * 16 + j;
                mtest_check(bad == SIZE_MAX, "%zu bytes (%s, %s): wrong byte at %zu", n,
                            recv_first ? "receiver first" : "sender first",
                            strided ? "strided" : "contiguous", bad);
                free(want);
            }
            rndv += n;
            MPI_Type_free(&vec);
        }
    }
    free(rbuf);
    free(sbuf);

    /* a window both ways: eager and rendezvous mixed on one tag */
    size_t tot = 0;
    for (int i = 0; i < WIN; i++)
        tot += win_size(i);
    unsigned char *out = mtest_malloc(tot), *in = mtest_malloc(tot);
    MPI_Request rq[2 * WIN];
    size_t off = 0;
    for (int i = 0; i < WIN; i++) {
        mtest_fill(out + off, win_size(i), rank, i);
        memset(in + off, 0, win_size(i));
        MPI_Irecv(in + off, (int)win_size(i), MPI_BYTE, peer, 7, MPI_COMM_WORLD, &rq[i]);
        off += win_size(i);
    }
    off = 0;
    for (int i = 0; i < WIN; i++) {
        MPI_Isend(out + off, (int)win_size(i), MPI_BYTE, peer, 7, MPI_COMM_WORLD, &rq[WIN + i]);
        if (win_size(i) > RNDV_FROM)
            rndv += win_size(i);
        off += win_size(i);
    }
    MPI_Waitall(2 * WIN, rq, MPI_STATUSES_IGNORE);
    off = 0;
    unsigned char *want = mtest_malloc(tot);
    for (int i = 0; i < WIN; i++) {
        mtest_fill(want + off, win_size(i), peer, i);
        mtest_check(memcmp(in + off, want + off, win_size(i)) == 0,
                    "window message %d (%zu bytes) from rank %d is not what was sent", i,
                    win_size(i), peer);
        off += win_size(i);
    }
    free(want);
    free(in);
    free(out);

    MPI_Barrier(MPI_COMM_WORLD);
    counters(ses, &copy1, &cma1);
    unsigned long long d[2] = {copy1 - copy0, cma1 - cma0}, all[2];
    MPI_Allreduce(d, all, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    /* rank 1's rendezvous bytes (rank 0 counted the same ones, and its own window's) */
    unsigned long long rv[2] = {rndv, 0}, rvall;
    MPI_Allreduce(&rv[0], &rvall, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) {
        if (expect)
            mtest_check(all[0] == 0 && all[1] >= rvall,
                        "one-sided frames: copy bytes %llu (want 0), one-sided bytes %llu (want "
                        "at least %llu)",
                        all[0], all[1], rvall);
        else
            mtest_check(all[0] > 0 && all[1] == 0,
                        "DCFA_SOCK_RMA=0: copy bytes %llu (want > 0), one-sided bytes %llu "
                        "(want 0)",
                        all[0], all[1]);
    }
    MPI_T_pvar_session_free(&ses);
    MPI_T_finalize();
    return mtest_finalize();
}
