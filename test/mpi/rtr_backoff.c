/* Receiver-first rendezvous that keeps going stale (docs/protocol.md, receiver-first):
 * in an exchange, both ranks post MPI_Irecv, then MPI_Isend, then MPI_Waitall, and every
 * RTR crosses the peer's RTS. After each stale RTR the next 1, 3, 7 ... 63 receives to
 * that peer send none: 64 exchanges must send at most 12 RTRs a rank (one each without
 * the rule; 24 leaves room for a few that went through on a busy machine and started the
 * rule over). Then receives posted well before their sends (the receiver says so by a
 * message the other way, which follows its RTR) must use RTR again once the skipped ones
 * are through: of 80, at least 16 send one. Every message is checked. */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

#define LEN (128 << 10)
#define NX  64
#define NP  80

int main(int argc, char **argv)
{
    int rank, size;
    if (!mtest_init_pvars(&argc, &argv, 2, &rank, &size))
        return mtest_finalize();
    int peer = 1 - rank;
    unsigned char *out = mtest_malloc(LEN), *in = mtest_malloc(LEN);
    MPI_T_pvar_session ses;
    MPI_T_pvar_session_create(&ses);

    /* 1: the exchange */
    MPI_Sendrecv(out, 1, MPI_BYTE, peer, 0, in, 1, MPI_BYTE, peer, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE); /* connected */
    unsigned long long r0 = mtest_pvar_counter(ses, "dcfa_rtr_sent");
    for (int i = 0; i < NX; i++) {
        MPI_Request rq[2];
        mtest_fill(out, LEN, rank, i);
        MPI_Irecv(in, LEN, MPI_BYTE, peer, i, MPI_COMM_WORLD, &rq[0]);
        MPI_Isend(out, LEN, MPI_BYTE, peer, i, MPI_COMM_WORLD, &rq[1]);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        if (!mtest_verify("exchange", in, LEN, peer, i))
            break;
    }
    unsigned long long r1 = mtest_pvar_counter(ses, "dcfa_rtr_sent");
    mtest_check(r1 - r0 <= 24,
                "rank %d: %llu RTRs for %d exchanges (at most 24: a stale RTR "
                "makes the next receives skip it)",
                rank, r1 - r0, NX);

    /* 2: rank 1's receives posted before rank 0 sends */
    for (int i = 0; i < NP; i++) {
        MPI_Request rq;
        if (rank == 1) {
            MPI_Irecv(in, LEN, MPI_BYTE, 0, 100 + i, MPI_COMM_WORLD, &rq);
            MPI_Send(NULL, 0, MPI_BYTE, 0, 99, MPI_COMM_WORLD);
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
            if (!mtest_verify("posted first", in, LEN, 0, 100 + i))
                break;
        } else {
            MPI_Recv(NULL, 0, MPI_BYTE, 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            mtest_fill(out, LEN, 0, 100 + i);
            MPI_Send(out, LEN, MPI_BYTE, 1, 100 + i, MPI_COMM_WORLD);
        }
    }
    unsigned long long r2 = mtest_pvar_counter(ses, "dcfa_rtr_sent");
    if (rank == 1)
        mtest_check(r2 - r1 >= NP - 64,
                    "%llu RTRs for %d receives posted first (at least %d: "
                    "one used resets the rule)",
                    r2 - r1, NP, NP - 64);
    MPI_T_pvar_session_free(&ses);
    free(out);
    free(in);
    MPI_T_finalize();
    return mtest_finalize();
}
