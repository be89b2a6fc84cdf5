/* A malicious rank asking its assist daemon for shared-memory segments (mpirun --isolate shm;
 * docs/launcher.md "--isolate shm", src/util/seg_wire.h): rank 0 writes its own requests on
 * its endpoint channel (DCFA_SOCK_EP_FD) for segments it has no right to: as a rank of another
 * job, with another job's name (untagged; tagged of an mpirun that is not there), in the name of a
 * made-up rank and of rank 1, with a forged token, with a name that is no segment name, of size 0
 * and of more bytes than the host has, an existing segment opened with the wrong size or created
 * twice, and junk (with and without the segment magic). Each must come back as REFUSE naming the
 * request, with no descriptor; rank 1 receives nothing. Its true requests work: CREATE gives a
 * sealed memfd of the size asked, OPEN the same memory, REMOVE drops the name (a second REMOVE:
 * ENOENT; OPEN then refused), and the job goes on. */
#include "mtest.h"
#include "../../src/util/seg_wire.h"
#include "../../src/fabric/sock/sock_wire.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>

static int ep;
static char job[SEG_JOB_MAX];
static uint64_t token;
static uint32_t seq;

/* one answer (up to 512 bytes) and the descriptor it carried (-1: none) */
static int recv_answer(void *buf, int *fd)
{
    char cbuf[CMSG_SPACE(sizeof(int))];
    struct iovec iov = {.iov_base = buf, .iov_len = 512};
    struct msghdr mh = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
    *fd = -1;
    struct pollfd p = {.fd = ep, .events = POLLIN};
    if (poll(&p, 1, 10000) != 1) {
        mtest_fail("no answer from the daemon within 10 s");
        return -1;
    }
    ssize_t n = recvmsg(ep, &mh, 0);
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); n > 0 && cm; cm = CMSG_NXTHDR(&mh, cm))
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
            memcpy(fd, CMSG_DATA(cm), sizeof *fd);
    return (int)n;
}

static seg_msg request(int type, const char *j, int rank, uint64_t tok, const char *name,
                       uint64_t size)
{
    seg_msg m = {.magic = SEG_MAGIC,
                 .version = SEG_VERSION,
                 .type = (uint8_t)type,
                 .seq = ++seq,
                 .rank = rank,
                 .token = tok,
                 .size = size};
    snprintf(m.job, sizeof m.job, "%s", j);
    snprintf(m.name, sizeof m.name, "%s", name);
    return m;
}

/* send m (len bytes of it), expect a refusal saying `want`, with no descriptor */
static void refused(const void *m, size_t len, uint32_t s, const char *want)
{
    if (send(ep, m, len, 0) != (ssize_t)len)
        mtest_fail("send request %u: %s", s, strerror(errno));
    _Alignas(8) char buf[512];
    int fd;
    int n = recv_answer(buf, &fd);
    seg_msg *a = (seg_msg *)buf;
    mtest_check(n == (int)sizeof *a && a->magic == SEG_MAGIC && a->type == SEG_REFUSE &&
                    a->seq == s && fd < 0 && a->status < 0,
                "request %u: answer of %d bytes, type %u seq %u status %d fd %d, not a refusal", s,
                n, a->type, a->seq, a->status, fd);
    a->text[sizeof a->text - 1] = 0;
    mtest_check(strstr(a->text, want) != NULL, "request %u: refusal '%s' does not say '%s'", s,
                a->text, want);
    if (fd >= 0)
        close(fd);
}

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *e = getenv("DCFA_SOCK_EP_FD"), *t = getenv("DCFA_SOCK_TOKEN"),
               *j = getenv("DCFA_JOBID");
    if (!e || !t || !j) {
        mtest_fail("DCFA_SOCK_EP_FD, DCFA_SOCK_TOKEN or DCFA_JOBID unset: not under our mpirun");
        return mtest_finalize();
    }
    ep = atoi(e);
    token = strtoull(t, NULL, 16);
    snprintf(job, sizeof job, "%s", j);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        char mine[SEG_NAME_MAX], other[SEG_NAME_MAX];
        snprintf(mine, sizeof mine, "/dcfa-%s-bad-%d", job, (int)getpid());
        snprintf(other, sizeof other, "/dcfa-j1_beef-0-d0123456789abcdef");
        seg_msg m = request(SEG_CREATE, "j1_beef", 0, token, other, 4096);
        refused(&m, sizeof m, m.seq, "as a rank of job 'j1_beef', not its own");
        /* a tagged name of a job of no mpirun here: asked of its daemon, which is not there */
        m = request(SEG_OPEN, job, 0, token, other, 4096);
        refused(&m, sizeof m, m.seq, "whose daemon takes no requests on this host");
        snprintf(other, sizeof other, "/dcfa-j1_beef-0-dnotag"); /* untagged: nobody's */
        m = request(SEG_OPEN, job, 0, token, other, 4096);
        refused(&m, sizeof m, m.seq, "which is no name of its job");
        m = request(SEG_CREATE, job, size + 7, token, mine, 4096);
        refused(&m, sizeof m, m.seq, "in the name of rank");
        m = request(SEG_OPEN, job, 1, token, mine, 4096);
        refused(&m, sizeof m, m.seq, "in the name of rank 1");
        m = request(SEG_CREATE, job, 0, token ^ 0x5a5a, mine, 4096);
        refused(&m, sizeof m, m.seq, "a forged token");
        m = request(SEG_CREATE, job, 0, 0, mine, 4096);
        refused(&m, sizeof m, m.seq, "a forged token");
        char slash[SEG_NAME_MAX];
        snprintf(slash, sizeof slash, "/dcfa-%s-../../etc/passwd", job);
        m = request(SEG_CREATE, job, 0, token, slash, 4096);
        refused(&m, sizeof m, m.seq, "which is no name of its job");
        m = request(SEG_CREATE, job, 0, token, mine, 0);
        refused(&m, sizeof m, m.seq, "of 0 bytes");
        m = request(SEG_CREATE, job, 0, token, mine, (uint64_t)1 << 62);
        refused(&m, sizeof m, m.seq, "bytes (1 to");
        m = request(SEG_OPEN, job, 0, token, mine, 4096);
        refused(&m, sizeof m, m.seq, "which does not exist");
        m = request(9, job, 0, token, mine, 4096);
        refused(&m, sizeof m, m.seq, "malformed segment request");
        refused(&m, 10, m.seq, "malformed segment request (10 bytes");
        /* junk without the magic: the endpoint channel's own refusal (a sock_ep_msg) */
        char junk[10] = "junkjunkj";
        if (send(ep, junk, sizeof junk, 0) != (ssize_t)sizeof junk)
            mtest_fail("send junk");
        _Alignas(8) char buf[512];
        int fd;
        int n = recv_answer(buf, &fd);
        sock_ep_msg *s = (sock_ep_msg *)buf;
        mtest_check(n == (int)sizeof *s && s->type == SOCK_EP_REFUSE && fd < 0 &&
                        strstr(s->text, "malformed") != NULL,
                    "junk: answer of %d bytes type %u fd %d, not a refusal", n, s->type, fd);

        /* the true requests */
        m = request(SEG_CREATE, job, 0, token, mine, 4096);
        send(ep, &m, sizeof m, 0);
        n = recv_answer(buf, &fd);
        seg_msg *a = (seg_msg *)buf;
        struct stat st;
        mtest_check(n == (int)sizeof *a && a->type == SEG_GRANT && fd >= 0 && fstat(fd, &st) == 0 &&
                        S_ISREG(st.st_mode) && st.st_size == 4096,
                    "create: answer type %u fd %d, not a 4096-byte segment", a->type, fd);
        int *p = fd >= 0 ? mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : NULL;
        mtest_check(p != MAP_FAILED && p != NULL, "cannot map the granted segment");
        if (fd >= 0) {
            mtest_check(ftruncate(fd, 1) != 0 && errno == EPERM,
                        "the granted segment can be shrunk (not sealed)");
            close(fd);
        }
        if (p && p != MAP_FAILED)
            *p = 4242;
        m = request(SEG_CREATE, job, 0, token, mine, 4096);
        refused(&m, sizeof m, m.seq, "exists already");
        m = request(SEG_OPEN, job, 0, token, mine, 8192);
        refused(&m, sizeof m, m.seq, "as 8192 bytes; it has 4096");
        m = request(SEG_OPEN, job, 0, token, mine, 4096);
        send(ep, &m, sizeof m, 0);
        n = recv_answer(buf, &fd);
        int *q = fd >= 0 ? mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : NULL;
        mtest_check(a->type == SEG_GRANT && q && q != MAP_FAILED && *q == 4242,
                    "open: not the same memory");
        if (fd >= 0)
            close(fd);
        for (int k = 0; k < 2; k++) {
            m = request(SEG_REMOVE, job, 0, token, mine, 0);
            send(ep, &m, sizeof m, 0);
            n = recv_answer(buf, &fd);
            mtest_check(n == (int)sizeof *a && a->type == SEG_DONE && fd < 0 &&
                            a->status == (k == 0 ? 0 : -ENOENT),
                        "remove %d: answer type %u status %d", k, a->type, a->status);
        }
        m = request(SEG_OPEN, job, 0, token, mine, 4096);
        refused(&m, sizeof m, m.seq, "which does not exist");
        if (p && p != MAP_FAILED)
            munmap(p, 4096);
        if (q && q != MAP_FAILED)
            munmap(q, 4096);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0) { /* nothing reached the other ranks */
        char buf[512];
        ssize_t n = recv(ep, buf, sizeof buf, MSG_DONTWAIT);
        mtest_check(n < 0 && errno == EAGAIN, "rank %d got %zd bytes on its channel", rank, n);
    }
    /* and the job goes on */
    mtest_ring_sizes(MPI_COMM_WORLD, 1 << 16);
    return mtest_finalize();
}
