/* The rank's side of segment requests (--isolate shm, src/util/shm_seg.c) against a daemon
 * that answers wrongly: each rank makes its own endpoint channel before MPI_Init
 * (DCFA_SOCK_EP_FD, with DCFA_ISOLATE=shm) and a thread plays the daemon, answering the first
 * request (the shm fabric's door, at MPI_Init) as FAKE_ANSWER says: nofd (a GRANT without a
 * descriptor), pipe (a GRANT with a pipe), small (a GRANT with a memfd of 1 byte), refuse
 * (REFUSE), wrongseq (a GRANT for a request never made). MPI_Init must end the job with a line
 * naming the request (the test list runs it expect_fail), never hang or map what came. Run
 * with DCFA_FABRICS=shm. */
#define _GNU_SOURCE
#include "mtest.h"
#include "../../src/util/seg_wire.h"
#include <errno.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/socket.h>

static int fake_fd;

static void *fake_daemon(void *arg)
{
    const char *how = arg;
    seg_msg m;
    if (recv(fake_fd, &m, sizeof m, 0) != (ssize_t)sizeof m)
        return NULL;
    seg_msg a = {.magic = SEG_MAGIC,
                 .version = SEG_VERSION,
                 .type = SEG_GRANT,
                 .seq = m.seq,
                 .rank = m.rank,
                 .size = m.size};
    memcpy(a.name, m.name, sizeof a.name);
    int fd = -1, pfd[2];
    if (!strcmp(how, "pipe") && pipe(pfd) == 0)
        fd = pfd[0];
    if (!strcmp(how, "small") && (fd = memfd_create("fake", 0)) >= 0 && ftruncate(fd, 1) != 0)
        perror("ftruncate");
    if (!strcmp(how, "refuse")) {
        a.type = SEG_REFUSE;
        a.status = -EACCES;
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
    int sv[2];
    const char *how = getenv("FAKE_ANSWER");
    if (!how || socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) != 0)
        return 1;
    char buf[16];
    snprintf(buf, sizeof buf, "%d", sv[0]);
    setenv("DCFA_SOCK_EP_FD", buf, 1);
    setenv("DCFA_SOCK_TOKEN", "0123456789abcdef", 1);
    setenv("DCFA_ISOLATE", "shm", 1);
    fake_fd = sv[1];
    pthread_t t;
    pthread_create(&t, NULL, fake_daemon, (void *)how);
    mtest_init(&argc, &argv);
    mtest_fail("MPI_Init went on with a segment the daemon never gave");
    return mtest_finalize();
}
