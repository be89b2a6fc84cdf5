/*
 * MPI 4.1 buffered mode: buffers attached to a communicator, a session and
 * the process, MPI_BUFFER_AUTOMATIC, and the flush functions.
 *  - a buffered send uses its communicator's buffer, else its session's, else
 *    the process's; with none of them it fails with MPI_ERR_BUFFER;
 *  - MPI_Comm_iflush_buffer does not complete while a buffered rendezvous
 *    message is unreceived, and does once it is received;
 *  - detach gives back the buffer and size attached (MPI_BUFFER_AUTOMATIC too).
 */
#include "mtest.h"

#define BIG (1 << 20) /* above the eager limit: stays in flight until received */

int main(int argc, char **argv)
{
    int rank, size, flag;
    MPI_Comm dup;
    MPI_Request req;
    void *back;
    int backsize;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    int peer = rank ^ 1; /* 0 <-> 1, 2 <-> 3, ...; a last odd rank talks to itself */
    if (peer >= size)
        peer = rank;

    /* no buffer anywhere: MPI_ERR_BUFFER */
    int x = 7;
    mtest_check_class("MPI_Bsend without a buffer", MPI_Bsend(&x, 1, MPI_INT, peer, 1, dup),
                      MPI_ERR_BUFFER);

    /* a communicator's buffer serves that communicator only */
    int bsize = BIG + MPI_BSEND_OVERHEAD;
    char *cbuf = malloc((size_t)bsize), *msg = malloc(BIG), *in = malloc(BIG);
    mtest_check_rc("MPI_Comm_attach_buffer", MPI_Comm_attach_buffer(dup, cbuf, bsize));
    mtest_check_class("attach twice", MPI_Comm_attach_buffer(dup, cbuf, bsize), MPI_ERR_BUFFER);
    mtest_check_class("MPI_Bsend on another communicator",
                      MPI_Bsend(&x, 1, MPI_INT, peer, 1, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    mtest_fill(msg, BIG, rank, 2);
    mtest_check_rc("MPI_Bsend on the communicator", MPI_Bsend(msg, BIG, MPI_BYTE, peer, 2, dup));
    memset(msg, 0, BIG); /* the message was copied: the send buffer is free */
    mtest_check_rc("MPI_Comm_iflush_buffer", MPI_Comm_iflush_buffer(dup, &req));
    if (peer != rank) {
        MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        mtest_check(!flag, "the flush completed before the message was received");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Recv(in, BIG, MPI_BYTE, peer, 2, dup, MPI_STATUS_IGNORE);
    mtest_verify("buffered message", in, BIG, peer, 2);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    mtest_check_rc("MPI_Comm_flush_buffer", MPI_Comm_flush_buffer(dup));
    mtest_check_rc("MPI_Comm_detach_buffer", MPI_Comm_detach_buffer(dup, &back, &backsize));
    mtest_check(back == cbuf && backsize == bsize, "detach: %p %d, attached %p %d", back,
                backsize, (void *)cbuf, bsize);

    /* the process's buffer, automatic: as many messages as wanted */
    mtest_check_rc("MPI_Buffer_attach(AUTOMATIC)", MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0));
    for (int i = 0; i < 8; i++) {
        mtest_fill(msg, BIG, rank, 10 + i);
        MPI_Bsend(msg, BIG, MPI_BYTE, peer, 10 + i, dup);
    }
    for (int i = 0; i < 8; i++) {
        MPI_Recv(in, BIG, MPI_BYTE, peer, 10 + i, dup, MPI_STATUS_IGNORE);
        mtest_verify("automatic buffer", in, BIG, peer, 10 + i);
    }
    mtest_check_rc("MPI_Buffer_flush", MPI_Buffer_flush());
    MPI_Buffer_iflush(&req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    mtest_check_rc("MPI_Buffer_detach", MPI_Buffer_detach(&back, &backsize));
    mtest_check(back == MPI_BUFFER_AUTOMATIC, "detach of an automatic buffer: %p", back);
    MPI_Comm_free(&dup);

    /* a session's buffer serves the communicators made from it */
    MPI_Session s;
    MPI_Group g;
    MPI_Comm sc;
    MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s);
    MPI_Group_from_session_pset(s, "mpi://WORLD", &g);
    MPI_Comm_create_from_group(g, "bsend_scopes", MPI_INFO_NULL, MPI_ERRORS_RETURN, &sc);
    MPI_Group_free(&g);
    mtest_check_class("MPI_Bsend on a session's communicator, no buffer",
                      MPI_Bsend(&x, 1, MPI_INT, peer, 1, sc), MPI_ERR_BUFFER);
    mtest_check_rc("MPI_Session_attach_buffer", MPI_Session_attach_buffer(s, cbuf, bsize));
    mtest_fill(msg, 1000, rank, 3);
    mtest_check_rc("MPI_Bsend with the session's buffer", MPI_Bsend(msg, 1000, MPI_BYTE, peer, 3, sc));
    MPI_Recv(in, 1000, MPI_BYTE, peer, 3, sc, MPI_STATUS_IGNORE);
    mtest_verify("session-buffered message", in, 1000, peer, 3);
    MPI_Session_iflush_buffer(s, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    mtest_check_rc("MPI_Session_flush_buffer", MPI_Session_flush_buffer(s));
    mtest_check_rc("MPI_Session_detach_buffer", MPI_Session_detach_buffer(s, &back, &backsize));
    mtest_check(back == cbuf && backsize == bsize, "session detach: %p %d", back, backsize);
    MPI_Comm_free(&sc);
    MPI_Session_finalize(&s);

    free(cbuf);
    free(msg);
    free(in);
    return mtest_finalize();
}
