/* A pair's ping-pong through a gateway daemon that dies mid-run (stage twonet of
 * test/hosts/run_multihost.sh, docs/gateway.md "Failure behaviour"). Under MPI_ERRORS_RETURN
 * each rank's exchange fails with MPI_ERR_OTHER and a message naming the gateway's host and
 * the peer; then the same pair exchanges again, small and large messages, through a new
 * connection (over the other gateway). With MTEST_FAILOVER=1 each rank says on stderr that
 * it is in the ping-pong and exchanges until an error (at most 60 s), and prints the error
 * ("gw_failover: rank R: round N: <error string>"); without it (one host, no gateway) a
 * few rounds, no error expected. Ranks 0 and 1 are the pair; others only finalize. */
#include "mtest.h"

#include <string.h>

static void exchange(int rank, int peer, int n, int tag)
{
    char *out = mtest_malloc((size_t)n), *in = mtest_malloc((size_t)n);
    mtest_fill(out, (size_t)n, rank, tag);
    memset(in, 0, (size_t)n);
    int err = MPI_Sendrecv(out, n, MPI_CHAR, peer, tag, in, n, MPI_CHAR, peer, tag, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE);
    if (err != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(err, msg, &len);
        mtest_fail("the exchange of %d bytes after the failure failed: %s", n, msg);
    } else {
        mtest_verify("the exchange after the failure", in, (size_t)n, peer, tag);
    }
    free(out);
    free(in);
}

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int kill = getenv("MTEST_FAILOVER") != NULL, peer = rank ^ 1;
    if (rank < 2 && peer < size) {
        if (kill)
            fprintf(stderr, "gw_failover: rank %d in the ping-pong\n", rank);
        double t0 = MPI_Wtime();
        long round, in = -1;
        int err = MPI_SUCCESS;
        for (round = 0; kill ? MPI_Wtime() - t0 < 60 : round < 100; round++) {
            err = MPI_Sendrecv(&round, 1, MPI_LONG, peer, 1, &in, 1, MPI_LONG, peer, 1,
                               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (err != MPI_SUCCESS)
                break;
            if (!mtest_check(in == round, "round %ld: got %ld", round, in))
                break;
        }
        if (kill) {
            int cls = MPI_SUCCESS, len = 0;
            char msg[MPI_MAX_ERROR_STRING] = "";
            MPI_Error_class(err, &cls);
            MPI_Error_string(err, msg, &len);
            fprintf(stderr, "gw_failover: rank %d: round %ld: %s\n", rank, round, msg);
            mtest_check(err != MPI_SUCCESS, "no error within 60 s (%ld rounds)", round);
            mtest_check(cls == MPI_ERR_OTHER, "error class %d, expected MPI_ERR_OTHER", cls);
        } else {
            mtest_check(err == MPI_SUCCESS, "an error at round %ld without a failure", round);
        }
        /* the pair again: a new connection, small, rendezvous, small */
        exchange(rank, peer, 8, 2);
        exchange(rank, peer, 1 << 20, 3);
        exchange(rank, peer, 8, 4);
    }
    return mtest_finalize();
}
