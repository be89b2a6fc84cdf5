/* MPI_DATATYPE_NULL with count 0 in point-to-point calls, an extension MPICH has (its test
 * suite synchronises with MPI_Send(NULL, 0, MPI_DATATYPE_NULL, ...) and receives with
 * MPI_Irecv(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, ...)): every send, receive,
 * sendrecv, persistent, matched-probe and partitioned form takes it, to a real peer and to
 * MPI_PROC_NULL, and the message arrives empty (status count 0, source and tag right).
 * With a count other than 0, or where MPICH refuses it too (collectives, MPI_Get_count),
 * it stays MPI_ERR_TYPE. Pairs: rank r talks to r ^ 1 (an odd last rank to itself). */
#include "mtest.h"

#define D MPI_DATATYPE_NULL

static void check_empty(const char *what, const MPI_Status *st, int src, int tag)
{
    int n = -1;
    MPI_Get_count(st, MPI_BYTE, &n);
    mtest_check(n == 0 && st->MPI_SOURCE == src && st->MPI_TAG == tag,
                "%s: count %d source %d tag %d, expected 0 %d %d", what, n, st->MPI_SOURCE,
                st->MPI_TAG, src, tag);
}

static void to_proc_null(void)
{
    int P = MPI_PROC_NULL;
    MPI_Request r;
    MPI_Status st;
    MPI_Message m;
    mtest_check_rc("MPI_Send PROC_NULL", MPI_Send(NULL, 0, D, P, 0, MPI_COMM_WORLD));
    mtest_check_rc("MPI_Ssend PROC_NULL", MPI_Ssend(NULL, 0, D, P, 0, MPI_COMM_WORLD));
    mtest_check_rc("MPI_Rsend PROC_NULL", MPI_Rsend(NULL, 0, D, P, 0, MPI_COMM_WORLD));
    mtest_check_rc("MPI_Bsend PROC_NULL", MPI_Bsend(NULL, 0, D, P, 0, MPI_COMM_WORLD));
    mtest_check_rc("MPI_Recv PROC_NULL", MPI_Recv(NULL, 0, D, P, 0, MPI_COMM_WORLD, &st));
    mtest_check(st.MPI_SOURCE == MPI_PROC_NULL, "MPI_Recv PROC_NULL: source %d", st.MPI_SOURCE);
    mtest_check_rc("MPI_Irecv PROC_NULL", MPI_Irecv(NULL, 0, D, P, 0, MPI_COMM_WORLD, &r));
    mtest_check_rc("MPI_Wait", MPI_Wait(&r, &st));
    mtest_check_rc("MPI_Isend PROC_NULL", MPI_Isend(NULL, 0, D, P, 0, MPI_COMM_WORLD, &r));
    mtest_check_rc("MPI_Wait", MPI_Wait(&r, &st));
    mtest_check_rc("MPI_Sendrecv PROC_NULL",
                   MPI_Sendrecv(NULL, 0, D, P, 0, NULL, 0, D, P, 0, MPI_COMM_WORLD, &st));
    mtest_check_rc("MPI_Sendrecv_replace PROC_NULL",
                   MPI_Sendrecv_replace(NULL, 0, D, P, 0, P, 0, MPI_COMM_WORLD, &st));
    mtest_check_rc("MPI_Recv_init PROC_NULL", MPI_Recv_init(NULL, 0, D, P, 0, MPI_COMM_WORLD, &r));
    mtest_check_rc("MPI_Start", MPI_Start(&r));
    mtest_check_rc("MPI_Wait", MPI_Wait(&r, &st));
    MPI_Request_free(&r);
    mtest_check_rc("MPI_Mprobe PROC_NULL", MPI_Mprobe(P, 0, MPI_COMM_WORLD, &m, &st));
    mtest_check_rc("MPI_Mrecv PROC_NULL", MPI_Mrecv(NULL, 0, D, &m, &st));
}

static void to_peer(int rank, int size)
{
    int peer = mtest_partner(rank, size);
    MPI_Request r[2];
    MPI_Status st;
    MPI_Message m;
    int tag = 0;
    /* each pair: I send with MPI_DATATYPE_NULL and receive with it, in every form */
    mtest_check_rc("MPI_Sendrecv",
                   MPI_Sendrecv(NULL, 0, D, peer, tag, NULL, 0, D, peer, tag, MPI_COMM_WORLD, &st));
    check_empty("MPI_Sendrecv", &st, peer, tag);
    tag++;
    mtest_check_rc("MPI_Sendrecv_replace",
                   MPI_Sendrecv_replace(NULL, 0, D, peer, tag, peer, tag, MPI_COMM_WORLD, &st));
    check_empty("MPI_Sendrecv_replace", &st, peer, tag);
    tag++;
    mtest_check_rc("MPI_Irecv", MPI_Irecv(NULL, 0, D, peer, tag, MPI_COMM_WORLD, &r[0]));
    mtest_check_rc("MPI_Isend", MPI_Isend(NULL, 0, D, peer, tag, MPI_COMM_WORLD, &r[1]));
    MPI_Wait(&r[1], MPI_STATUS_IGNORE);
    MPI_Wait(&r[0], &st);
    check_empty("MPI_Irecv", &st, peer, tag);
    tag++;
    mtest_check_rc("MPI_Issend", MPI_Issend(NULL, 0, D, peer, tag, MPI_COMM_WORLD, &r[1]));
    mtest_check_rc("MPI_Recv", MPI_Recv(NULL, 0, D, peer, tag, MPI_COMM_WORLD, &st));
    check_empty("MPI_Recv", &st, peer, tag);
    MPI_Wait(&r[1], MPI_STATUS_IGNORE);
    tag++;
    mtest_check_rc("MPI_Isendrecv", MPI_Isendrecv(NULL, 0, D, peer, tag, NULL, 0, D, peer, tag,
                                                  MPI_COMM_WORLD, &r[0]));
    MPI_Wait(&r[0], &st);
    check_empty("MPI_Isendrecv", &st, peer, tag);
    tag++;
    mtest_check_rc("MPI_Isendrecv_replace",
                   MPI_Isendrecv_replace(NULL, 0, D, peer, tag, peer, tag, MPI_COMM_WORLD, &r[0]));
    MPI_Wait(&r[0], &st);
    check_empty("MPI_Isendrecv_replace", &st, peer, tag);
    tag++;
    mtest_check_rc("MPI_Send_init", MPI_Send_init(NULL, 0, D, peer, tag, MPI_COMM_WORLD, &r[1]));
    mtest_check_rc("MPI_Recv_init", MPI_Recv_init(NULL, 0, D, peer, tag, MPI_COMM_WORLD, &r[0]));
    for (int round = 0; round < 2; round++) {
        MPI_Startall(2, r);
        MPI_Wait(&r[1], MPI_STATUS_IGNORE);
        MPI_Wait(&r[0], &st);
        check_empty("MPI_Recv_init", &st, peer, tag);
    }
    MPI_Request_free(&r[0]);
    MPI_Request_free(&r[1]);
    tag++;
    /* MPI_Send (the form MPICH's partitioned tests synchronise with), then a matched probe */
    if (peer != rank) {
        if (rank < peer) {
            mtest_check_rc("MPI_Send", MPI_Send(NULL, 0, D, peer, tag, MPI_COMM_WORLD));
        } else {
            mtest_check_rc("MPI_Mprobe", MPI_Mprobe(peer, tag, MPI_COMM_WORLD, &m, &st));
            mtest_check_rc("MPI_Imrecv", MPI_Imrecv(NULL, 0, D, &m, &r[0]));
            MPI_Wait(&r[0], &st);
            check_empty("MPI_Imrecv", &st, peer, tag);
        }
    }
    tag++;
    /* partitioned: one partition of nothing each way */
    if (peer != rank) {
        MPI_Request pr;
        if (rank < peer)
            mtest_check_rc("MPI_Psend_init", MPI_Psend_init(NULL, 1, 0, D, peer, tag,
                                                            MPI_COMM_WORLD, MPI_INFO_NULL, &pr));
        else
            mtest_check_rc("MPI_Precv_init", MPI_Precv_init(NULL, 1, 0, D, peer, tag,
                                                            MPI_COMM_WORLD, MPI_INFO_NULL, &pr));
        MPI_Start(&pr);
        if (rank < peer)
            MPI_Pready(0, pr);
        MPI_Wait(&pr, MPI_STATUS_IGNORE);
        MPI_Request_free(&pr);
    }
}

/* where MPICH refuses it too */
static void still_refused(int rank)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Request r;
    MPI_Status st;
    int n;
    mtest_check_class("MPI_Send count 1", MPI_Send(&n, 1, D, MPI_PROC_NULL, 0, MPI_COMM_WORLD),
                      MPI_ERR_TYPE);
    mtest_check_class("MPI_Irecv count 1",
                      MPI_Irecv(&n, 1, D, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r), MPI_ERR_TYPE);
    mtest_check_class("MPI_Bcast", MPI_Bcast(NULL, 0, D, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    mtest_check_class("MPI_Allreduce", MPI_Allreduce(NULL, NULL, 0, D, MPI_SUM, MPI_COMM_WORLD),
                      MPI_ERR_TYPE);
    MPI_Status_set_elements(&st, MPI_BYTE, 0);
    mtest_check_class("MPI_Get_count", MPI_Get_count(&st, D, &n), MPI_ERR_TYPE);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    (void)rank;
}

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    to_proc_null();
    to_peer(rank, size);
    still_refused(rank);
    return mtest_finalize();
}
