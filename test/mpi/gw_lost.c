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
 * the gateway and the loss. Without the files (one host, the test list) the
 * same exchanges run straight through.
 */
#include "mtest.h"

#include <unistd.h>

static void wait_file(const char *var)
{
    const char *f = getenv(var);
    for (int i = 0; f && *f && i < 60000 && access(f, F_OK) != 0; i++)
        usleep(1000);
}

int main(int argc, char **argv)
{
    int rank, size, v = 0;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0) {
        MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        wait_file("GW_LOST_SEND");
        double x = 42.0;
        MPI_Send(&x, 1, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD);
        fprintf(stderr, "gw_lost: sent\n");
        MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
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
        MPI_Recv(&x, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (x != 42.0)
            mtest_fail("received %g, expected 42", x);
        MPI_Send(&v, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
    }
    return mtest_finalize();
}
