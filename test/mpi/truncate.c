/* A message longer than the posted receive gives MPI_ERR_TRUNCATE under
 * MPI_ERRORS_RETURN, without writing past the receive buffer, for eager and
 * rendezvous sizes, with Recv and with Irecv+Wait; afterwards the same pair
 * still communicates correctly. A message that ends inside a basic element of
 * the receive's datatype (bytes received as MPI_INT, or as a struct {int,
 * char}) gives MPI_ERR_TYPE with Recv, Irecv+Wait and a persistent receive,
 * while one that ends on an element boundary succeeds with the right
 * MPI_Get_elements. Pairs 0-1, 2-3, ...; odd rank out: itself. */
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

/* `len` bytes sent as MPI_BYTE, received into `count` elements of `dt`: error class `want` */
static void partial_case(int rank, int peer, int len, MPI_Datatype dt, int count, int how, int want,
                         int want_elements, int tag)
{
    static const char *hows[] = {"Recv", "Irecv", "Recv_init"};
    unsigned char *sbuf = mtest_malloc((size_t)len);
    unsigned char *rbuf = mtest_malloc((size_t)count * 16 + (size_t)len);
    MPI_Request sreq = MPI_REQUEST_NULL, rreq;
    MPI_Status st;
    char what[96];
    int rc;
    snprintf(what, sizeof what, "%s of %d bytes into %d elements (partial element)", hows[how], len,
             count);
    mtest_fill(sbuf, (size_t)len, rank, tag);
    if (rank <= peer)
        MPI_Isend(sbuf, len, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &sreq);
    if (rank >= peer) {
        if (how == 0) {
            rc = MPI_Recv(rbuf, count, dt, peer, tag, MPI_COMM_WORLD, &st);
        } else if (how == 1) {
            MPI_Irecv(rbuf, count, dt, peer, tag, MPI_COMM_WORLD, &rreq);
            rc = MPI_Wait(&rreq, &st);
        } else {
            MPI_Recv_init(rbuf, count, dt, peer, tag, MPI_COMM_WORLD, &rreq);
            MPI_Start(&rreq);
            rc = MPI_Wait(&rreq, &st);
            MPI_Request_free(&rreq);
        }
        mtest_check_class(what, rc, want);
        if (want == MPI_SUCCESS) {
            int n = -1;
            MPI_Get_elements(&st, dt, &n);
            mtest_check_int(what, n, want_elements);
        } else {
            char msg[MPI_MAX_ERROR_STRING];
            int mlen = 0;
            MPI_Error_string(rc, msg, &mlen);
            if (!strstr(msg, "basic element"))
                mtest_fail("%s: the message does not say what is wrong: %s", what, msg);
        }
    }
    if (rank <= peer)
        mtest_check_rc("sender's Wait of a partial element", MPI_Wait(&sreq, MPI_STATUS_IGNORE));
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
    /* struct {int; char}: 5 bytes of data per element */
    MPI_Datatype ic, types[2] = {MPI_INT, MPI_CHAR};
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {0, 4};
    MPI_Type_create_struct(2, bl, disp, types, &ic);
    MPI_Type_commit(&ic);
    for (int how = 0; how < 3; how++) {
        partial_case(rank, peer, 203, MPI_INT, 100, how, MPI_ERR_TYPE, 0, 100 + how);
        partial_case(rank, peer, 300003, MPI_INT, 100000, how, MPI_ERR_TYPE, 0, 110 + how);
        partial_case(rank, peer, 7, ic, 4, how, MPI_ERR_TYPE, 0, 120 + how);
        partial_case(rank, peer, 9, ic, 4, how, MPI_SUCCESS, 3, 130 + how);
        partial_case(rank, peer, 200, MPI_INT, 100, how, MPI_SUCCESS, 50, 140 + how);
    }
    MPI_Type_free(&ic);
    return mtest_finalize();
}
