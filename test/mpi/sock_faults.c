/* The sock fabric against a peer that breaks its connection (docs/fabric.md "sock"): after
 * one exchange, rank 1 does to every connection socket it holds what SOCK_FAULT says, and
 * rank 0 then waits for a message from it. Each must end the job with a line naming rank 1,
 * never with a hang or a corrupt message (the test list runs it expect_fail with the line):
 *   garbage   16 bytes that are no frame header         "malformed frame from rank 1"
 *   bigframe  a well-formed header of 16 MiB - 16 bytes  "malformed frame from rank 1"
 *   lie       a frame whose packet header gives another length
 *   write     a one-sided WRITE into memory rank 0 never lent   "a WRITE outside the memory"
 *   readr     an answer (READR) to a read rank 0 never asked    "a READR that answers no read"
 *   close     shutdown() of the sockets, no BYE          "rank 1 closed its connection"
 * Run with DCFA_FABRICS=sock (self or daemon connections). */
#include "mtest.h"
#include <stdint.h>
#include <sys/socket.h>

/* sock_wire.h's frame header: len, then len ^ 0x5dcfa000 ^ (kind << 24); kind 1 a packet,
 * 6 WRITE, 8 READR */
static void frame(unsigned char *b, uint32_t len, uint32_t kind)
{
    uint32_t check = len ^ 0x5dcfa000u ^ (kind << 24);
    memcpy(b, &len, 4);
    memcpy(b + 4, &check, 4);
}

static void break_sockets(const char *how)
{
    const char *pmi = getenv("PMI_FD");
    int pmi_fd = pmi ? atoi(pmi) : -1, found = 0;
    for (int fd = 3; fd < 1024; fd++) {
        int type = 0, listening = 0;
        socklen_t l = sizeof type;
        if (fd == pmi_fd || getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l) != 0 ||
            type != SOCK_STREAM)
            continue;
        l = sizeof listening;
        if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &l) == 0 && listening)
            continue;
        found++;
        unsigned char b[64];
        memset(b, 0xa5, sizeof b);
        size_t n = 16;
        if (!strcmp(how, "bigframe")) {
            frame(b, (16u << 20) - 16, 1);
        } else if (!strcmp(how, "lie")) {
            /* a 64-byte packet whose header (the core's: len at byte 28) says 1000 bytes */
            frame(b, 64, 1);
            memset(b + 8, 0, 56);
            uint32_t len = 1000;
            memcpy(b + 8 + 28, &len, 4);
            n = 72;
        } else if (!strcmp(how, "write") || !strcmp(how, "readr")) {
            /* sock_rma: addr, key, len (8 bytes of data follow), id, status 0 */
            uint64_t rma[4] = {(uint64_t)(uintptr_t)b, 0x100000001ull, 8, 77};
            frame(b, 40, how[0] == 'w' ? 6 : 8);
            memcpy(b + 8, rma, sizeof rma);
            memset(b + 40, 0x5a, 8);
            n = 48;
        }
        if (!strcmp(how, "close")) {
            shutdown(fd, SHUT_RDWR);
        } else if (write(fd, b, n) != (ssize_t)n) {
            mtest_fail("write to fd %d", fd);
        }
    }
    mtest_check(found > 0, "no connection socket found");
}

int main(int argc, char **argv)
{
    int rank, size, v = 0;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *how = getenv("SOCK_FAULT");
    if (!how || size != 2) {
        fprintf(stderr, "sock_faults: needs SOCK_FAULT and 2 ranks\n");
        return 1;
    }
    if (rank == 0) {
        MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        /* the next message from rank 1 never comes whole: this must end the job */
        MPI_Recv(&v, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        mtest_fail("a message arrived over a broken connection");
    } else {
        MPI_Recv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
        break_sockets(how);
        sleep(30); /* ended by the job's end */
    }
    return mtest_finalize();
}
