/* Matched probe and receive (MPI 4.1 3.8.2, 3.8.3), corner by corner, as
 * mpi4py.util.pkl5 uses them (a header message, then the payload, each
 * taken with MPI_Mprobe/MPI_Improbe and received with MPI_Mrecv/MPI_Imrecv,
 * counts from MPI_Get_count/MPI_Get_elements on the probe's status):
 *  - MPI_PROC_NULL: flag true, MPI_MESSAGE_NO_PROC, source MPI_PROC_NULL,
 *    tag MPI_ANY_TAG, count 0, not cancelled; MPI_Mrecv/MPI_Imrecv of
 *    MPI_MESSAGE_NO_PROC give the same status and MPI_MESSAGE_NULL;
 *  - the status of MPI_Mrecv / of the MPI_Imrecv request (source, tag,
 *    count; MPI_ERROR untouched by single-completion calls);
 *  - large messages (rendezvous: an RTS in the unexpected queue), eager
 *    ones, messages to self (standard and synchronous mode);
 *  - a matched message is out of the queue: a later MPI_Recv, MPI_Probe or
 *    MPI_Improbe with the same envelope gets the next message;
 *  - MPI_Improbe that finds nothing: flag false;
 *  - truncation: MPI_ERR_TRUNCATE;
 *  - cancel: MPI_Cancel of a send whose message was already matched by
 *    MPI_Mprobe leaves it (and any later message of the same envelope) alone;
 *    MPI_Cancel of an MPI_Imrecv request does not cancel it.
 * Every payload is checked byte by byte. Run with 1 or 2+ ranks (pairs
 * 0<->1 talk; others only do the self parts). */
#include "mtest.h"

#define BIG (256 * 1024)

static int rank, size;

static void check_status(const char *what, const MPI_Status *st, int src, int tag, int count,
                         MPI_Datatype dt)
{
    int n = -7;
    MPI_Get_count(st, dt, &n);
    mtest_check(st->MPI_SOURCE == src, "%s: source %d, want %d", what, st->MPI_SOURCE, src);
    mtest_check(st->MPI_TAG == tag, "%s: tag %d, want %d", what, st->MPI_TAG, tag);
    mtest_check(n == count, "%s: count %d, want %d", what, n, count);
    int c = 1;
    MPI_Test_cancelled(st, &c);
    mtest_check(!c, "%s: status says cancelled", what);
}

static void test_proc_null(void)
{
    MPI_Message m = MPI_MESSAGE_NULL;
    MPI_Status st;
    int flag = 0;
    st.MPI_ERROR = -5;
    MPI_Improbe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &flag, &m, &st);
    mtest_check(flag, "Improbe(PROC_NULL): flag false");
    mtest_check(m == MPI_MESSAGE_NO_PROC, "Improbe(PROC_NULL): message is not MPI_MESSAGE_NO_PROC");
    check_status("Improbe(PROC_NULL)", &st, MPI_PROC_NULL, MPI_ANY_TAG, 0, MPI_BYTE);
    mtest_check(st.MPI_ERROR == -5, "Improbe(PROC_NULL) changed MPI_ERROR");
    long long x = 99;
    st.MPI_ERROR = -5;
    MPI_Mrecv(&x, 1, MPI_LONG_LONG, &m, &st);
    mtest_check(m == MPI_MESSAGE_NULL, "Mrecv(NO_PROC): message not set to MPI_MESSAGE_NULL");
    check_status("Mrecv(NO_PROC)", &st, MPI_PROC_NULL, MPI_ANY_TAG, 0, MPI_LONG_LONG);
    mtest_check(x == 99, "Mrecv(NO_PROC) wrote the buffer");
    int e = -1;
    MPI_Get_elements(&st, MPI_LONG_LONG, &e);
    mtest_check(e == 0, "Mrecv(NO_PROC): Get_elements %d", e);

    m = MPI_MESSAGE_NULL;
    MPI_Mprobe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &m, &st);
    mtest_check(m == MPI_MESSAGE_NO_PROC, "Mprobe(PROC_NULL): not MPI_MESSAGE_NO_PROC");
    check_status("Mprobe(PROC_NULL)", &st, MPI_PROC_NULL, MPI_ANY_TAG, 0, MPI_INT);
    MPI_Request r;
    MPI_Imrecv(NULL, 0, MPI_BYTE, &m, &r);
    mtest_check(m == MPI_MESSAGE_NULL, "Imrecv(NO_PROC): message not MPI_MESSAGE_NULL");
    MPI_Wait(&r, &st);
    check_status("Imrecv(NO_PROC)", &st, MPI_PROC_NULL, MPI_ANY_TAG, 0, MPI_BYTE);
    mtest_check(r == MPI_REQUEST_NULL, "Imrecv(NO_PROC): request not freed by MPI_Wait");
}

/* pkl5's pattern: a header (two long longs: payload size, tag) then the payload */
static void send_pair(int dest, int tag, size_t bytes, int sync)
{
    long long hdr[2] = {(long long)bytes, tag};
    unsigned char *p = mtest_malloc(bytes + 1);
    mtest_fill(p, bytes, rank, tag);
    MPI_Request r[2];
    if (sync) {
        MPI_Issend(hdr, 2, MPI_LONG_LONG, dest, tag, MPI_COMM_WORLD, &r[0]);
        MPI_Issend(p, (int)bytes, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &r[1]);
    } else {
        MPI_Isend(hdr, 2, MPI_LONG_LONG, dest, tag, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(p, (int)bytes, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &r[1]);
    }
    if (dest != rank) {
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        free(p);
        return;
    }
    /* to myself: receive here, synchronous sends must not have completed yet */
    int done = 0;
    MPI_Testall(2, r, &done, MPI_STATUSES_IGNORE);
    if (sync)
        mtest_check(!done, "Issend to self completed before the receive");
    void recv_pair(int src, int tag, int nonblocking);
    recv_pair(rank, tag, tag & 1);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    free(p);
}

void recv_pair(int src, int tag, int nonblocking)
{
    MPI_Message mh = MPI_MESSAGE_NULL, mp = MPI_MESSAGE_NULL;
    MPI_Status st;
    int flag = 0;
    if (nonblocking) {
        while (!flag)
            MPI_Improbe(src, tag, MPI_COMM_WORLD, &flag, &mh, &st);
    } else {
        MPI_Mprobe(src, tag, MPI_COMM_WORLD, &mh, &st);
    }
    int n = -1;
    MPI_Get_elements(&st, MPI_LONG_LONG, &n);
    mtest_check(n == 2, "header: Get_elements %d, want 2", n);
    mtest_check(st.MPI_SOURCE == src && st.MPI_TAG == tag, "header probe: source %d tag %d",
                st.MPI_SOURCE, st.MPI_TAG);
    /* the payload, probed with the header's source and tag before the header is received */
    MPI_Mprobe(st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &mp, &st);
    int bytes = -1;
    MPI_Get_count(&st, MPI_BYTE, &bytes);
    long long hdr[2] = {-1, -1};
    MPI_Status sh;
    sh.MPI_ERROR = -5;
    MPI_Mrecv(hdr, 2, MPI_LONG_LONG, &mh, &sh);
    check_status("header Mrecv", &sh, src, tag, 2, MPI_LONG_LONG);
    mtest_check(sh.MPI_ERROR == -5, "Mrecv set MPI_ERROR");
    mtest_check(mh == MPI_MESSAGE_NULL, "Mrecv left the message handle");
    mtest_check(hdr[0] == bytes && hdr[1] == tag, "header %lld %lld, payload probe says %d bytes",
                hdr[0], hdr[1], bytes);
    unsigned char *p = mtest_malloc((size_t)bytes + 1);
    if (nonblocking) {
        MPI_Request r;
        MPI_Imrecv(p, bytes, MPI_BYTE, &mp, &r);
        mtest_check(mp == MPI_MESSAGE_NULL, "Imrecv left the message handle");
        MPI_Wait(&r, &st);
    } else {
        MPI_Mrecv(p, bytes, MPI_BYTE, &mp, &st);
    }
    check_status("payload", &st, src, tag, bytes, MPI_BYTE);
    mtest_verify("payload", p, (size_t)bytes, src, tag);
    free(p);
}

/* messages of one envelope: the matched one is out of the queue */
static void test_matched_leaves_queue(int peer)
{
    int tag = 77;
    if (rank == peer || rank == 0) {
        unsigned char *a = mtest_malloc(BIG), *b = mtest_malloc(100);
        MPI_Request r[2];
        if (rank == 0) {
            mtest_fill(a, BIG, 0, 1);
            mtest_fill(b, 100, 0, 2);
            MPI_Isend(a, BIG, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r[0]);
            MPI_Isend(b, 100, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r[1]);
        }
        if (rank == peer) {
            MPI_Message m;
            MPI_Status st;
            MPI_Mprobe(0, tag, MPI_COMM_WORLD, &m, &st);
            check_status("large first", &st, 0, tag, BIG, MPI_BYTE);
            /* the next probe and receive see the small one */
            MPI_Probe(0, tag, MPI_COMM_WORLD, &st);
            check_status("probe after Mprobe", &st, 0, tag, 100, MPI_BYTE);
            unsigned char *bb = mtest_malloc(100);
            MPI_Recv(bb, 100, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &st);
            check_status("recv after Mprobe", &st, 0, tag, 100, MPI_BYTE);
            mtest_verify("small after Mprobe", bb, 100, 0, 2);
            int flag = 1;
            MPI_Message none = MPI_MESSAGE_NULL;
            MPI_Improbe(0, tag, MPI_COMM_WORLD, &flag, &none, &st);
            mtest_check(!flag, "Improbe found a message that was already taken");
            /* truncation of the large one */
            unsigned char *aa = mtest_malloc(BIG);
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
            int rc = MPI_Mrecv(aa, BIG / 2, MPI_BYTE, &m, &st);
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
            int cls = MPI_SUCCESS;
            MPI_Error_class(rc, &cls);
            mtest_check(cls == MPI_ERR_TRUNCATE, "truncated Mrecv: class %d", cls);
            free(aa);
            free(bb);
        }
        if (rank == 0)
            MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        free(a);
        free(b);
    }
}

/* MPI_Cancel of a send to myself whose message was matched: too late, and
 * the next message of the same envelope stays */
static void test_cancel_after_mprobe(void)
{
    int tag = 5, v1 = 111, v2 = 222, got = 0;
    MPI_Request r1, r2;
    MPI_Isend(&v1, 1, MPI_INT, rank, tag, MPI_COMM_WORLD, &r1);
    MPI_Message m;
    MPI_Status st;
    MPI_Mprobe(rank, tag, MPI_COMM_WORLD, &m, &st);
    MPI_Isend(&v2, 1, MPI_INT, rank, tag, MPI_COMM_WORLD, &r2);
    MPI_Cancel(&r1);
    MPI_Wait(&r1, &st);
    int c = 1;
    MPI_Test_cancelled(&st, &c);
    mtest_check(!c, "cancel succeeded on a send whose message was matched by MPI_Mprobe");
    MPI_Mrecv(&got, 1, MPI_INT, &m, &st);
    mtest_check(got == v1, "Mrecv after cancel got %d", got);
    got = 0;
    int flag = 0;
    MPI_Iprobe(rank, tag, MPI_COMM_WORLD, &flag, &st);
    mtest_check(flag, "the second message was withdrawn by the cancel of the first");
    if (flag) {
        MPI_Recv(&got, 1, MPI_INT, rank, tag, MPI_COMM_WORLD, &st);
        mtest_check(got == v2, "second message %d", got);
    }
    MPI_Wait(&r2, MPI_STATUS_IGNORE);

    /* cancel of a matched receive does nothing */
    int big_tag = 6;
    unsigned char *a = mtest_malloc(BIG), *b = mtest_malloc(BIG);
    mtest_fill(a, BIG, rank, big_tag);
    MPI_Isend(a, BIG, MPI_BYTE, rank, big_tag, MPI_COMM_WORLD, &r1);
    MPI_Mprobe(rank, big_tag, MPI_COMM_WORLD, &m, &st);
    MPI_Imrecv(b, BIG, MPI_BYTE, &m, &r2);
    MPI_Cancel(&r2);
    MPI_Wait(&r2, &st);
    c = 1;
    MPI_Test_cancelled(&st, &c);
    mtest_check(!c, "an Imrecv request was cancelled");
    mtest_verify("Imrecv after cancel", b, BIG, rank, big_tag);
    MPI_Wait(&r1, MPI_STATUS_IGNORE);
    free(a);
    free(b);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    rank = mtest_wrank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    test_proc_null();
    /* to myself: eager and large, standard and synchronous */
    const size_t sizes[] = {0, 1, 8, 1000, 16384, BIG};
    int tag = 10;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        for (int sync = 0; sync < 2; sync++)
            send_pair(rank, tag++, sizes[i], sync);
    test_cancel_after_mprobe();
    MPI_Barrier(MPI_COMM_WORLD);
    /* between ranks 0 and 1 */
    if (size > 1 && rank < 2) {
        tag = 100;
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
            for (int sync = 0; sync < 2; sync++, tag++) {
                if (rank == 0)
                    send_pair(1, tag, sizes[i], sync);
                else
                    recv_pair(0, tag, tag & 1);
            }
    }
    if (size > 1)
        test_matched_leaves_queue(1);
    return mtest_finalize();
}
