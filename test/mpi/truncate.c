/* A message longer than the posted receive gives MPI_ERR_TRUNCATE under
 * MPI_ERRORS_RETURN, without writing past the receive buffer, for eager and
 * rendezvous sizes, with Recv and with Irecv+Wait; afterwards the same pair
 * still communicates correctly. Pairs 0-1, 2-3, ...; odd rank out: itself. */
#include "mtest.h"

#define GUARD 64

static void one_case(int rank, int peer, int len, int use_irecv, int tag)
{
    int rlen = len / 2, rc, i, count = -1;
    unsigned char *sbuf = mtest_malloc((size_t)len);
    unsigned char *rbuf = mtest_malloc((size_t)len + GUARD);
    MPI_Request sreq = MPI_REQUEST_NULL, rreq;
    MPI_Status st;
    char what[64];

    snprintf(what, sizeof(what), "%s of %d bytes into %d", use_irecv ? "Irecv" : "Recv", len,
             rlen);
    mtest_fill(sbuf, (size_t)len, rank, tag);
    memset(rbuf, 0xa5, (size_t)len + GUARD);
    if (rank <= peer)
        MPI_Isend(sbuf, len, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &sreq);
    if (rank >= peer) {
        if (use_irecv) {
            MPI_Irecv(rbuf, rlen, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &rreq);
            rc = MPI_Wait(&rreq, &st);
        } else {
            rc = MPI_Recv(rbuf, rlen, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &st);
        }
        mtest_check_class(what, rc, MPI_ERR_TRUNCATE);
        for (i = rlen; i < len + GUARD; i++) {
            if (rbuf[i] != 0xa5) {
                mtest_fail("%s: byte %d past the receive buffer was overwritten", what, i);
                break;
            }
        }
    }
    if (rank <= peer)
        mtest_check_rc("sender's Wait after receiver truncated", MPI_Wait(&sreq, MPI_STATUS_IGNORE));

    /* The pair still works: the same size again, with a big enough buffer. */
    if (rank <= peer)
        MPI_Isend(sbuf, len, MPI_BYTE, peer, tag + 1, MPI_COMM_WORLD, &sreq);
    if (rank >= peer) {
        memset(rbuf, 0, (size_t)len);
        rc = MPI_Recv(rbuf, len, MPI_BYTE, peer, tag + 1, MPI_COMM_WORLD, &st);
        mtest_check_rc("Recv after truncation", rc);
        MPI_Get_count(&st, MPI_BYTE, &count);
        mtest_check_int("count after truncation", count, len);
        mtest_verify("data after truncation", rbuf, (size_t)len, rank == peer ? rank : peer, tag);
    }
    if (rank <= peer)
        MPI_Wait(&sreq, MPI_STATUS_IGNORE);
    free(sbuf);
    free(rbuf);
}

int main(int argc, char **argv)
{
    static const int lens[] = {200, 8190, 300000, 4 << 20};
    int rank, size, peer, s;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    peer = mtest_partner(rank, size);
    for (s = 0; s < 4; s++) {
        one_case(rank, peer, lens[s], 0, 10 * s);
        one_case(rank, peer, lens[s], 1, 10 * s + 5);
    }
    return mtest_finalize();
}
