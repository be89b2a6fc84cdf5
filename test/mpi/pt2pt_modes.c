/* Send modes: Ssend, Bsend, Rsend and Issend, Ibsend, Irsend, for an eager
 * and a rendezvous size. Pairs 0-1, 2-3, ...; an odd rank out uses itself. */
#include "mtest.h"

#define NMODES 6
static const char *mode_name[NMODES] = {"Ssend", "Bsend", "Rsend", "Issend", "Ibsend", "Irsend"};
static const int sizes[] = {4, 200000};

static void do_send(int mode, void *buf, int len, int dest, int tag)
{
    MPI_Request req = MPI_REQUEST_NULL;
    int rc = MPI_SUCCESS;

    switch (mode) {
    case 0: rc = MPI_Ssend(buf, len, MPI_BYTE, dest, tag, MPI_COMM_WORLD); break;
    case 1: rc = MPI_Bsend(buf, len, MPI_BYTE, dest, tag, MPI_COMM_WORLD); break;
    case 2: rc = MPI_Rsend(buf, len, MPI_BYTE, dest, tag, MPI_COMM_WORLD); break;
    case 3: rc = MPI_Issend(buf, len, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &req); break;
    case 4: rc = MPI_Ibsend(buf, len, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &req); break;
    default: rc = MPI_Irsend(buf, len, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &req); break;
    }
    mtest_check_rc(mode_name[mode], rc);
    if (req != MPI_REQUEST_NULL)
        mtest_check_rc("Wait on send", MPI_Wait(&req, MPI_STATUS_IGNORE));
}

/* Self version: blocking Ssend/Rsend to oneself need the receive posted. */
static void self_round(int mode, unsigned char *sbuf, unsigned char *rbuf, int len, int rank,
                       int tag)
{
    MPI_Request rreq;
    MPI_Status st;
    int count = -1;

    MPI_Irecv(rbuf, len, MPI_BYTE, rank, tag, MPI_COMM_WORLD, &rreq);
    do_send(mode, sbuf, len, rank, tag);
    MPI_Wait(&rreq, &st);
    MPI_Get_count(&st, MPI_BYTE, &count);
    mtest_check_int("self count", count, len);
    mtest_verify(mode_name[mode], rbuf, (size_t)len, rank, tag);
}

int main(int argc, char **argv)
{
    int rank, size, peer, m, s, bsize;
    unsigned char *sbuf, *rbuf;
    void *bbuf, *det;
    MPI_Status st;
    MPI_Request rreq;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    peer = mtest_partner(rank, size);
    sbuf = mtest_malloc(200000);
    rbuf = mtest_malloc(200000);
    bsize = 200000 + MPI_BSEND_OVERHEAD;
    bbuf = mtest_malloc((size_t)bsize);
    MPI_Buffer_attach(bbuf, bsize);

    for (s = 0; s < 2; s++) {
        int len = sizes[s];
        for (m = 0; m < NMODES; m++) {
            int tag = 10 * s + m, count = -1;

            mtest_fill(sbuf, (size_t)len, rank, tag);
            memset(rbuf, 0, (size_t)len);
            if (peer == rank) {
                self_round(m, sbuf, rbuf, len, rank, tag);
                continue;
            }
            /* Both directions at once. A ready send needs the receive
             * posted: both post, then exchange a zero-byte "posted" note;
             * blocking synchronous sends from both sides then also complete. */
            MPI_Irecv(rbuf, len, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &rreq);
            MPI_Sendrecv(NULL, 0, MPI_BYTE, peer, 999, NULL, 0, MPI_BYTE, peer, 999,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            do_send(m, sbuf, len, peer, tag);
            MPI_Wait(&rreq, &st);
            MPI_Get_count(&st, MPI_BYTE, &count);
            mtest_check_int("count", count, len);
            mtest_check_int("source", st.MPI_SOURCE, peer);
            mtest_verify(mode_name[m], rbuf, (size_t)len, peer, tag);
        }
    }
    /* Detach waits for buffered messages to be delivered. */
    MPI_Buffer_detach(&det, &bsize);
    mtest_check(det == bbuf, "Buffer_detach returned another buffer");
    free(bbuf);
    free(sbuf);
    free(rbuf);
    return mtest_finalize();
}
