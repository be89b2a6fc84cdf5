/* The eager limit of a fabric of its own (ofi: DCFA_OFI_EAGER_LIMIT, docs/fabric.md).
 * Between ranks 0 and 1, messages of L - 1, L and L + 1 bytes, L the largest eager payload
 * (the limit given in OFI_EAGER_TEST_LIMIT, header of 32 bytes included, as the tunable
 * counts it): the first two must go eager (no RTS sent, no RTR offered for a receive that
 * small), the third by rendezvous; the same sizes with the receive posted first
 * (receiver-first may take L + 1) and unexpected; synchronous mode (8 bytes more on the
 * wire); each truncated by one byte into a guarded buffer, which must end with
 * MPI_ERR_TRUNCATE, the buffer filled and nothing written past it. */
#include "mtest.h"

#include <stdlib.h>

#define GUARD 64

static unsigned long long counter(const char *name)
{
    MPI_T_pvar_session s;
    MPI_T_pvar_session_create(&s);
    unsigned long long v = mtest_pvar_counter(s, name);
    MPI_T_pvar_session_free(&s);
    return v;
}

/* one message of len bytes from 0 to 1 into a receive of cap bytes; mode 's' ssend, 'u'
 * unexpected (the receive posted after the message arrived), 'p' posted first; returns on
 * rank 0 the RTS sent for it and on rank 1 the RTR sent */
static unsigned long long one(int rank, int len, int cap, char mode, unsigned char *buf, int tag)
{
    const char *pv = rank == 0 ? "dcfa_rts_sent" : "dcfa_rtr_sent";
    unsigned long long before = counter(pv);
    if (rank == 0) {
        mtest_fill(buf, (size_t)len, 0, tag);
        if (mode == 'p')
            MPI_Barrier(MPI_COMM_WORLD); /* the receive is posted */
        if (mode == 's')
            MPI_Ssend(buf, len, MPI_BYTE, 1, tag, MPI_COMM_WORLD);
        else
            MPI_Send(buf, len, MPI_BYTE, 1, tag, MPI_COMM_WORLD);
        if (mode == 'u')
            MPI_Barrier(MPI_COMM_WORLD);
    } else if (rank == 1) {
        MPI_Request rq;
        MPI_Status st;
        memset(buf, 0xee, (size_t)cap + GUARD);
        if (mode == 'u') {
            int flag = 0;
            while (!flag) /* the message (or its RTS) has arrived */
                MPI_Iprobe(0, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        }
        MPI_Irecv(buf, cap, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &rq);
        if (mode == 'p')
            MPI_Barrier(MPI_COMM_WORLD);
        int rc = MPI_Wait(&rq, &st);
        if (mode == 'u')
            MPI_Barrier(MPI_COMM_WORLD);
        char what[96];
        snprintf(what, sizeof what, "%d bytes into %d (%c)", len, cap, mode);
        if (len > cap) {
            mtest_check_class(what, rc == MPI_SUCCESS ? st.MPI_ERROR : rc, MPI_ERR_TRUNCATE);
        } else {
            mtest_check_rc(what, rc);
            int count = -1;
            MPI_Get_count(&st, MPI_BYTE, &count);
            mtest_check_int(what, count, len);
        }
        int got = len < cap ? len : cap;
        mtest_verify(what, buf, (size_t)got, 0, tag);
        for (int i = got; i < cap + GUARD; i++)
            if (!mtest_check(buf[i] == 0xee, "%s: byte %d written past the data", what, i))
                break;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return counter(pv) - before;
}

int main(int argc, char **argv)
{
    int rank, size;
    if (!mtest_init_pvars(&argc, &argv, 2, &rank, &size))
        return mtest_finalize();
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const char *lim = getenv("OFI_EAGER_TEST_LIMIT");
    if (!lim || atoi(lim) <= 64) {
        mtest_fail("OFI_EAGER_TEST_LIMIT (the eager limit this run sets) is not given");
        return mtest_finalize();
    }
    int L = atoi(lim) - 32; /* the header (docs/protocol.md) */
    unsigned char *buf = mtest_malloc((size_t)L + 1 + GUARD);
    int tag = 0;
    static const char modes[] = {'n', 'p', 'u', 's'};
    for (int m = 0; m < 4; m++) {
        char mode = modes[m];
        int sync = mode == 's' ? 8 : 0; /* ssend's request id travels in the packet */
        for (int d = -1; d <= 1; d++) {
            int len = L - sync + d;
            for (int trunc = 0; trunc < 2; trunc++) {
                int cap = trunc ? len - 1 : len;
                unsigned long long n = one(rank, len, cap, mode, buf, tag++);
                int eager = d <= 0;
                if (rank == 0)
                    mtest_check(eager ? n == 0 : n <= 1,
                                "%d bytes (%c, limit payload %d): %llu RTS", len, mode, L, n);
                if (rank == 1 && cap <= L - sync && mode == 'p')
                    mtest_check(n == 0, "receive of %d bytes (limit payload %d): %llu RTR", cap, L,
                                n);
            }
        }
    }
    /* the rendezvous is still used above the limit: one message of 2 L by RTS or RTR */
    unsigned long long rts = counter("dcfa_rts_sent"), rtr = counter("dcfa_rtr_sent");
    unsigned char *big = mtest_malloc(2 * (size_t)L + GUARD);
    if (rank == 0) {
        mtest_fill(big, 2 * (size_t)L, 0, 999);
        MPI_Send(big, 2 * L, MPI_BYTE, 1, 999, MPI_COMM_WORLD);
    } else if (rank == 1) {
        MPI_Recv(big, 2 * L, MPI_BYTE, 0, 999, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        mtest_verify("2 L", big, 2 * (size_t)L, 0, 999);
    }
    unsigned long long mine =
        rank == 0 ? counter("dcfa_rts_sent") - rts : counter("dcfa_rtr_sent") - rtr;
    unsigned long long both = 0;
    MPI_Allreduce(&mine, &both, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        mtest_check(both >= 1, "a message of %d bytes went without RTS or RTR", 2 * L);
    free(big);
    free(buf);
    return mtest_finalize();
}
