/* MPI_Comm_join between ranks 0 and 1 of one job (other ranks only take part
 * in the final error count): rank 0 listens on a loopback TCP socket (port
 * 0), sends the port number to rank 1 with MPI_Send; rank 1 connects; both
 * call MPI_Comm_join on their socket. The inter-communicator has local and
 * remote size 1; data both ways (a small message and 256 KiB), MPI_Allreduce
 * and MPI_Barrier over it; MPI_Comm_disconnect. The socket is quiescent
 * after the join (MPI-4.1 11.10.5), so a byte sent over it afterwards
 * arrives as the first byte; then both close it. Socket waits are bounded
 * (poll, 30 s). */
#include "mtest.h"
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#define SOCK_WAIT_MS 30000
#define BIG          (256 * 1024)

/* Wait until fd is ready for events; records a failure on timeout/error. */
static int wait_fd(int fd, short events, const char *what)
{
    struct pollfd p;
    int rc;

    p.fd = fd;
    p.events = events;
    p.revents = 0;
    do {
        rc = poll(&p, 1, SOCK_WAIT_MS);
    } while (rc < 0 && errno == EINTR);
    if (rc == 1)
        return 1;
    mtest_fail("%s: %s", what, rc == 0 ? "timed out" : strerror(errno));
    return 0;
}

/* Rank 0: listen on 127.0.0.1, port 0; tell rank 1 the port; accept. */
static int server_socket(void)
{
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    int ls, fd = -1, port = -1, one = 1;

    ls = socket(AF_INET, SOCK_STREAM, 0);
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof a) != 0 || listen(ls, 1) != 0 ||
        getsockname(ls, (struct sockaddr *)&a, &len) != 0) {
        mtest_fail("listening socket: %s", strerror(errno));
    } else {
        port = ntohs(a.sin_port);
    }
    MPI_Send(&port, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
    if (port > 0 && wait_fd(ls, POLLIN, "accept")) {
        fd = accept(ls, NULL, NULL);
        if (fd < 0)
            mtest_fail("accept: %s", strerror(errno));
    }
    if (ls >= 0)
        close(ls);
    if (fd >= 0)
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/* Rank 1: get the port, connect. */
static int client_socket(void)
{
    struct sockaddr_in a;
    int fd, port = -1, one = 1;

    MPI_Recv(&port, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (port <= 0)
        return -1;
    fd = socket(AF_INET, SOCK_STREAM, 0);
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((unsigned short)port);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        mtest_fail("connect to 127.0.0.1:%d: %s", port, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static void use_intercomm(MPI_Comm inter, int rank)
{
    int flag = 0, lsize = -1, rsize = -1, v[2], got[2] = {-1, -1}, sum = -1, me;
    unsigned char *big = mtest_malloc(BIG);
    MPI_Status st;

    MPI_Comm_test_inter(inter, &flag);
    mtest_check_int("Comm_test_inter(joined)", flag, 1);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    mtest_check_int("joined: local size", lsize, 1);
    mtest_check_int("joined: remote size", rsize, 1);
    MPI_Comm_rank(inter, &me);
    mtest_check_int("joined: rank", me, 0);

    v[0] = rank;
    v[1] = 1000 + rank;
    MPI_Sendrecv(v, 2, MPI_INT, 0, 10 + rank, got, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, inter,
                 &st);
    mtest_check(got[0] == 1 - rank && got[1] == 1000 + (1 - rank),
                "joined: got {%d,%d} from the peer", got[0], got[1]);
    mtest_check(st.MPI_SOURCE == 0 && st.MPI_TAG == 10 + (1 - rank),
                "joined: status source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);

    /* 256 KiB each way, one direction at a time. */
    if (rank == 0) {
        mtest_fill(big, BIG, 0, 20);
        MPI_Send(big, BIG, MPI_BYTE, 0, 20, inter);
        memset(big, 0, BIG);
        MPI_Recv(big, BIG, MPI_BYTE, 0, 21, inter, MPI_STATUS_IGNORE);
        mtest_verify("joined: 256 KiB from rank 1", big, BIG, 1, 21);
    } else {
        memset(big, 0, BIG);
        MPI_Recv(big, BIG, MPI_BYTE, 0, 20, inter, MPI_STATUS_IGNORE);
        mtest_verify("joined: 256 KiB from rank 0", big, BIG, 0, 20);
        mtest_fill(big, BIG, 1, 21);
        MPI_Send(big, BIG, MPI_BYTE, 0, 21, inter);
    }
    free(big);

    me = 10 + rank;
    MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, inter);
    mtest_check_int("joined: allreduce (the peer's value)", sum, 10 + (1 - rank));
    MPI_Barrier(inter);
}

int main(int argc, char **argv)
{
    int rank, size, fd = -1, rc, ok, all_ok = 0;
    MPI_Comm inter = MPI_COMM_NULL;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        mtest_fail("comm_join needs at least 2 ranks");
        return mtest_finalize();
    }
    if (rank <= 1) {
        fd = rank == 0 ? server_socket() : client_socket();
        /* both join, or neither: MPI_Comm_join would wait for the peer */
        ok = fd >= 0;
    } else {
        ok = 1;
    }
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);

    if (rank <= 1 && all_ok) {
        rc = MPI_Comm_join(fd, &inter);
        if (mtest_check_rc("MPI_Comm_join", rc) &&
            mtest_check(inter != MPI_COMM_NULL, "MPI_Comm_join gave MPI_COMM_NULL")) {
            unsigned char b = (unsigned char)(0xa0 + rank), peer = 0;

            use_intercomm(inter, rank);
            rc = MPI_Comm_disconnect(&inter);
            mtest_check_rc("MPI_Comm_disconnect", rc);
            mtest_check(inter == MPI_COMM_NULL, "MPI_Comm_disconnect left the handle set");

            /* the socket is the user's again: one byte each way */
            if (!mtest_check(write(fd, &b, 1) == 1, "write to the socket after the join: %s",
                             strerror(errno))) {
                /* nothing */
            } else if (wait_fd(fd, POLLIN, "socket after the join")) {
                mtest_check(read(fd, &peer, 1) == 1 && peer == (unsigned char)(0xa1 - rank),
                            "socket after the join: read 0x%02x, expected 0x%02x", peer,
                            0xa1 - rank);
            }
        }
    }
    if (fd >= 0)
        mtest_check(close(fd) == 0, "close of the socket: %s", strerror(errno));
    return mtest_finalize();
}
