/*
 * gw_lost: a message held by a gateway daemon that dies is not waited for in
 * silence (stage twonet of test/hosts/run_multihost.sh; docs/faults.md, "A
 * connection is lost"). Ranks 0 and 1 (on two networks, one gateway) first
 * exchange a message, so that their connection through the gateway is made.
 * Then rank 0 waits for the file GW_LOST_SEND (the stage has stopped the
 * gateway with SIGSTOP meanwhile), sends 8 bytes eagerly (the send completes
 * at its end: the bytes sit in the stopped gateway's socket), says
 * "gw_lost: sent" on stderr and waits in a receive from MPI_ANY_SOURCE, which
 * stays posted when a connection is lost. The stage kills the gateway and
 * creates GW_LOST_RECV; rank 1, which meanwhile polls with MPI_Iprobe (so it
 * sees the loss with nothing waiting for rank 0 and drops the connection),
 * only then posts its receive for the message, which takes the other gateway.
 * Nothing waits for the lost bytes at rank 0, so before the check the job
 * hung; under the default error handler it must now end with a line naming
 * the gateway and the loss. With GW_LOST_RETURN=1 (MPI_ERRORS_RETURN) rank 1's
 * receive of the lost message must fail with MPI_ERR_OTHER (the reconnection
 * through the other gateway carried the report, WIRE_LOST: docs/gateway.md),
 * printed as "gw_lost: rank 1: <error string>", and the pair then exchanges
 * small and large messages through the other gateway and ends well. With
 * GW_LOST_ONE=1 too, the gateway was the only one: no report can come, and
 * rank 0's receive from MPI_ANY_SOURCE, posted before the loss, must fail with
 * MPI_ERR_OTHER ("gw_lost: rank 0: <error string>") instead of waiting for
 * ever, as rank 1's receive does; the pair does not exchange again. Without the
 * files (one host, the test list) the same exchanges run straight through.
 */
#include "mtest.h"

#include <string.h>
#include <unistd.h>

static void wait_file(const char *var)
{
    const char *f = getenv(var);
    for (int i = 0; f && *f && i < 60000 && access(f, F_OK) != 0; i++)
        usleep(1000);
}

/* a receive that must have failed with MPI_ERR_OTHER: its text on stderr, its class checked */
static void expect_lost(int rank, int err, const char *what)
{
    int cls = MPI_SUCCESS, len = 0;
    char msg[MPI_MAX_ERROR_STRING] = "";
    MPI_Error_class(err, &cls);
    MPI_Error_string(err, msg, &len);
    fprintf(stderr, "gw_lost: rank %d: %s\n", rank, msg);
    mtest_check(cls == MPI_ERR_OTHER, "%s: class %d, expected MPI_ERR_OTHER", what, cls);
}

int main(int argc, char **argv)
{
    int rank, size, v = 0;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *ret = getenv("GW_LOST_RETURN");
    int returns = ret && *ret == '1', lost = returns && getenv("GW_LOST_RECV");
    int only = lost && getenv("GW_LOST_ONE") && *getenv("GW_LOST_ONE") == '1';
    if (returns) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    }
    if (rank == 0) {
        MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        wait_file("GW_LOST_SEND");
        double x = 42.0;
        MPI_Send(&x, 1, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD);
        fprintf(stderr, "gw_lost: sent\n");
        int err = MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (only)
            expect_lost(0, err, "the receive from MPI_ANY_SOURCE with no gateway left");
    } else if (rank == 1) {
        MPI_Recv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
        /* in progress while the gateway dies (its loss seen with nothing waiting for rank 0),
         * until the stage says so */
        const char *f = getenv("GW_LOST_RECV");
        for (int i = 0, flag; f && *f && i < 60000 && access(f, F_OK) != 0; i++) {
            MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            usleep(1000);
        }
        double x = 0;
        int err = MPI_Recv(&x, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (lost) {
            expect_lost(1, err, "the receive of the lost message");
        } else if (x != 42.0) {
            mtest_fail("received %g, expected 42", x);
        }
        if (!only)
            MPI_Send(&v, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
    }
    if (rank < 2 && returns && !only) {
        /* the pair again, over the new connection: small, rendezvous, small, both ways */
        enum { BIG = 1 << 20 };
        int peer = rank ^ 1;
        char *out = mtest_malloc(BIG), *in = mtest_malloc(BIG);
        for (int round = 0; round < 3; round++) {
            int n = round == 1 ? BIG : 8;
            mtest_fill(out, (size_t)n, rank, 10 + round);
            memset(in, 0, (size_t)n);
            int err = MPI_Sendrecv(out, n, MPI_CHAR, peer, 10 + round, in, n, MPI_CHAR, peer,
                                   10 + round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (mtest_check(err == MPI_SUCCESS, "round %d: the exchange after the loss failed",
                            round))
                mtest_verify("the exchange after the loss", in, (size_t)n, peer, 10 + round);
        }
        free(out);
        free(in);
    }
    return mtest_finalize();
}
