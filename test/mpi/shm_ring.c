/* The shm ring's size (docs/protocol.md: receive ring and credits), seen from
 * the credit it gives: rank 1 leaves MPI for a while (it cannot consume
 * anything), and rank 0 sends it 4 KiB eager messages until one no longer
 * completes, which happens when the ring's blocks are used up. The ring's
 * size, in blocks of 64 bytes, comes from the test list
 * (DCFA_TEST_RING_BLOCKS), worked out there by hand from the rule in
 * docs/protocol.md for each setting and process count, not computed here: a
 * library whose rule drifts from the documented one fails. The count must be
 * close to what the ring holds: at least three quarters of it, and at most a
 * few more (rank 1 may still be in the barrier's progress when the first
 * messages arrive). Then rank 1 receives them all and checks every byte. */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MSG 4096
#define MAXMSG 160

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        mtest_fail("needs 2 ranks");
        return mtest_finalize();
    }
    const char *want = getenv("DCFA_TEST_RING_BLOCKS");
    long blocks = want ? strtol(want, NULL, 10) : 0;
    if (blocks <= 0) {
        mtest_fail("DCFA_TEST_RING_BLOCKS (the ring's blocks by docs/protocol.md) is not set");
        return mtest_finalize();
    }
    /* a 4 KiB message and its 32-byte header cover 65 blocks; one block stays for SYNC */
    long holds = (blocks - 1) / 65;
    if (holds > MAXMSG - 16)
        holds = MAXMSG - 16;
    char *buf = malloc((size_t)MAXMSG * MSG);
    MPI_Request req[MAXMSG];
    int sent = 0, completed = 0;
    /* connect first, so that rank 1's first receive is not the connection's */
    if (rank < 2)
        MPI_Sendrecv_replace(buf, 1, MPI_CHAR, 1 - rank, 0, 1 - rank, 0, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        while (sent < holds + 16) {
            mtest_fill(buf + (size_t)sent * MSG, MSG, 0, sent);
            MPI_Isend(buf + (size_t)sent * MSG, MSG, MPI_CHAR, 1, sent, MPI_COMM_WORLD, &req[sent]);
            int done = 0;
            MPI_Test(&req[sent], &done, MPI_STATUS_IGNORE);
            sent++;
            if (!done)
                break;
            completed++;
        }
        mtest_check(completed >= holds * 3 / 4 && completed <= holds + 8,
                    "%d 4 KiB messages completed before the credit ran out, where a ring of %ld "
                    "blocks (%d processes on the node) holds %ld", completed, blocks, size, holds);
        MPI_Send(&sent, 1, MPI_INT, 1, MAXMSG, MPI_COMM_WORLD);
        MPI_Waitall(sent - completed, req + completed, MPI_STATUSES_IGNORE);
    } else if (rank == 1) {
        usleep(300000);     /* out of MPI: nothing arrives */
        int n = 0;
        MPI_Recv(&n, 1, MPI_INT, 0, MAXMSG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < n; i++) {
            MPI_Recv(buf, MSG, MPI_CHAR, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            mtest_verify("message", buf, MSG, 0, i);
        }
    }
    free(buf);
    return mtest_finalize();
}
