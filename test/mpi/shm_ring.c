/* The shm ring's size (docs/protocol.md: receive ring and credits), seen from
 * the credit it gives: rank 1 leaves MPI for a while (it cannot consume
 * anything), and rank 0 sends it 4 KiB eager messages until one no longer
 * completes, which happens when the ring's blocks are used up. With
 * DCFA_MAX_CREDIT auto the ring is the largest power of two of blocks, from
 * 512, that fits DCFA_SHM_RINGS over the node's other processes and
 * DCFA_SHM_RING_MAX; with DCFA_MAX_CREDIT set it is that. The count must be
 * close to what the ring holds: at least three quarters of it, and at most a
 * few more (rank 1 may still be in the barrier's progress when the first
 * messages arrive). Then rank 1 receives them all and checks every byte. */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MSG 4096
#define MAXMSG 160

static long env_long(const char *name, long dflt)
{
    const char *v = getenv(name);
    return v && *v ? strtol(v, NULL, 10) : dflt;
}

/* the ring's blocks of 64 bytes between two of `nodeprocs` processes, by the rule */
static long ring_blocks(int nodeprocs)
{
    long credit = env_long("DCFA_MAX_CREDIT", -1);
    long n = 512;
    if (credit > 0) {
        while (n < credit)
            n *= 2;
        return n;
    }
    long fit = env_long("DCFA_SHM_RINGS", 1 << 20) / (nodeprocs > 1 ? nodeprocs - 1 : 1);
    long cap = env_long("DCFA_SHM_RING_MAX", 256 << 10);
    if (fit > cap)
        fit = cap;
    while (n * 2 * 64 <= fit)
        n *= 2;
    return n;
}

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
    /* a 4 KiB message and its 32-byte header cover 65 blocks; one block stays for SYNC */
    long blocks = ring_blocks(size);
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
