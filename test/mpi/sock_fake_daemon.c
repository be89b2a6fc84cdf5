/* The rank's side of the endpoint channel against a daemon that answers wrongly: each rank
 * makes its own channel before MPI_Init (DCFA_SOCK_EP_FD, DCFA_SOCK_TOKEN) and a thread plays
 * the daemon, answering the first request as FAKE_ANSWER says: nofd (a GRANT without a
 * socket), pipe (a GRANT with a pipe), refuse (REFUSE), wrongseq (a GRANT for a request never
 * made). Rank 0's first send to rank 1 must end the job with a line naming the request (the
 * test list runs it expect_fail), never hang or use what came. Run with DCFA_FABRICS=sock. */
#include "mtest.h"
#include "../../src/fabric/sock/sock_wire.h"
#include <pthread.h>
#include <sys/socket.h>

static int fake_fd;

static void *fake_daemon(void *arg)
{
    const char *how = arg;
    sock_ep_msg m;
    if (recv(fake_fd, &m, sizeof m, 0) != (ssize_t)sizeof m)
        return NULL;
    sock_ep_msg a = {.magic = SOCK_EP_MAGIC,
                     .version = SOCK_VERSION,
                     .type = SOCK_EP_GRANT,
                     .seq = m.seq,
                     .rank = m.rank};
    int fd = -1, pfd[2];
    if (!strcmp(how, "pipe") && pipe(pfd) == 0)
        fd = pfd[0];
    if (!strcmp(how, "refuse")) {
        a.type = SOCK_EP_REFUSE;
        snprintf(a.text, sizeof a.text, "the fake daemon says no");
    }
    if (!strcmp(how, "wrongseq"))
        a.seq = m.seq + 100;
    char cbuf[CMSG_SPACE(sizeof(int))];
    memset(cbuf, 0, sizeof cbuf);
    struct iovec iov = {.iov_base = &a, .iov_len = sizeof a};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    if (fd >= 0) {
        mh.msg_control = cbuf;
        mh.msg_controllen = sizeof cbuf;
        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cm), &fd, sizeof fd);
    }
    if (sendmsg(fake_fd, &mh, 0) < 0)
        perror("sendmsg");
    return NULL;
}

int main(int argc, char **argv)
{
    int rank, size, v = 0, sv[2];
    const char *how = getenv("FAKE_ANSWER");
    if (!how || socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) != 0)
        return 1;
    char buf[16];
    snprintf(buf, sizeof buf, "%d", sv[0]);
    setenv("DCFA_SOCK_EP_FD", buf, 1);
    setenv("DCFA_SOCK_TOKEN", "0123456789abcdef", 1);
    fake_fd = sv[1];
    pthread_t t;
    pthread_create(&t, NULL, fake_daemon, (void *)how);
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0)
        MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
    else if (rank == 1)
        MPI_Recv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    mtest_fail("a message went over a connection the daemon never made");
    return mtest_finalize();
}
