/* Split reads (docs/protocol.md, DCFA_COOP_MIN): a single-copy rendezvous the
 * receiver reads is split with the sender, which writes the second half while
 * the receiver reads the first; a half the sender has not taken when the
 * receiver is done with its own, the receiver reads itself. Ranks 0 and 1
 * (others wait) check, with the pvars dcfa_split_sent (SPLIT packets),
 * dcfa_split_written (bytes the sender wrote) and dcfa_split_back (halves the
 * receiver took back):
 *  - blocking sends of 1 MiB (sender-first, DCFA_RNDV_MODE=read in the list):
 *    every byte arrives, the receiver offers a split for each message but the
 *    first of the connection, and each half is moved once, by the sender or
 *    taken back by the receiver (which of them, the scheduling decides);
 *  - a sender away from MPI (MPI_Isend, then 1 s outside MPI): the receive
 *    completes long before the sender is back, the receiver having taken the
 *    half back;
 *  - a receive buffer smaller than the message: MPI_ERR_TRUNCATE, the bytes
 *    that fit are right and the guard bytes after the buffer untouched;
 *  - with DCFA_COOP_MIN=0, or by default on an oversubscribed node, no split. */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BIG (1 << 20)
#define NMSG 20

static MPI_T_pvar_session sess;

static unsigned long long pv(const char *name) { return mtest_pvar_counter(sess, name); }

int main(int argc, char **argv)
{
    int rank, size, provided;
    mtest_init(&argc, &argv);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_T_pvar_session_create(&sess);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        mtest_fail("needs 2 ranks");
        return mtest_finalize();
    }
    /* no split with DCFA_COOP_MIN=0, nor by default on an oversubscribed node */
    const char *cm = getenv("DCFA_COOP_MIN");
    int off = cm && *cm ? atol(cm) == 0 : size > sysconf(_SC_NPROCESSORS_ONLN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    char *buf = mtest_malloc(BIG + 64);
    unsigned long long sent0 = pv("dcfa_split_sent"), written0 = pv("dcfa_split_written"),
                       back0 = pv("dcfa_split_back");

    /* 1: blocking sends, the sender in MPI */
    for (int i = 0; i < NMSG; i++) {
        if (rank == 0) {
            mtest_fill(buf, BIG, 0, i);
            MPI_Send(buf, BIG, MPI_CHAR, 1, i, MPI_COMM_WORLD);
        } else if (rank == 1) {
            memset(buf, 0, BIG);
            MPI_Status st;
            int n = -1;
            MPI_Recv(buf, BIG, MPI_CHAR, 0, i, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_CHAR, &n);
            mtest_check_int("count", n, BIG);
            mtest_verify("1 MiB message", buf, BIG, 0, i);
        }
    }
    unsigned long long written = pv("dcfa_split_written") - written0;
    unsigned long long splits = pv("dcfa_split_sent") - sent0, back = pv("dcfa_split_back") - back0;
    if (rank == 1)
        mtest_check(off ? splits == 0 : splits == NMSG - 1,
                    "the receiver offered %llu splits for %d messages (%s)", splits, NMSG,
                    off ? "DCFA_COOP_MIN=0: none expected" : "all but the connection's first");
    /* how many halves the sender wrote depends on the scheduling (a sender off its core
     * leaves them all to the receiver): each must be moved exactly once */
    if (rank == 0 && off)
        mtest_check(written == 0, "the sender wrote %llu bytes of halves, none expected", written);
    /* every half was moved once: written by the sender, or taken back by the receiver */
    if (rank < 2) {
        unsigned long long mine = rank == 0 ? written : back, theirs = 0;
        MPI_Sendrecv(&mine, 1, MPI_UNSIGNED_LONG_LONG, 1 - rank, 99, &theirs, 1,
                     MPI_UNSIGNED_LONG_LONG, 1 - rank, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rank == 1 && !off)
            mtest_check(theirs == (splits - back) * (BIG / 2),
                        "the sender wrote %llu bytes; %llu splits, %llu halves taken back", theirs,
                        splits, back);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* 2: the sender away from MPI for a second */
    back0 = pv("dcfa_split_back");
    if (rank == 0) {
        MPI_Request rq;
        mtest_fill(buf, BIG, 0, 100);
        MPI_Isend(buf, BIG, MPI_CHAR, 1, 100, MPI_COMM_WORLD, &rq);
        sleep(1);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
        double t0 = MPI_Wtime();
        MPI_Recv(buf, BIG, MPI_CHAR, 0, 100, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        double t = MPI_Wtime() - t0;
        mtest_verify("message of a sender away", buf, BIG, 0, 100);
        mtest_check(t < 0.8, "the receive took %.3f s while the sender was away for 1 s", t);
        if (!off)
            mtest_check(pv("dcfa_split_back") - back0 == 1,
                        "the receiver took back %llu halves, expected the one its sender did not take",
                        pv("dcfa_split_back") - back0);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* 3: truncated */
    enum { FIT = 600 * 1024 };
    if (rank == 0) {
        mtest_fill(buf, BIG, 0, 200);
        MPI_Send(buf, BIG, MPI_CHAR, 1, 200, MPI_COMM_WORLD);
    } else if (rank == 1) {
        memset(buf, 0x5a, BIG + 64);
        int rc = MPI_Recv(buf, FIT, MPI_CHAR, 0, 200, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        mtest_check_class("truncated receive", rc, MPI_ERR_TRUNCATE);
        mtest_verify("truncated message", buf, FIT, 0, 200);
        int guard = 1;
        for (size_t k = FIT; k < BIG + 64; k++)
            guard &= buf[k] == 0x5a;
        mtest_check(guard, "bytes after the receive buffer were written");
    }
    free(buf);
    MPI_T_pvar_session_free(&sess);
    MPI_T_finalize();
    return mtest_finalize();
}
