/* A malicious rank across two separately started mpiruns (docs/launcher.md "Endpoints between
 * two mpiruns"; driven by port_two_jobs.sh with this program): the server job opens a port and
 * writes its name to FILE, the client job connects. The server's rank 0 tells the client's
 * rank 0 (through MPI) its own and its rank 1's job id and endpoint token (DCFA_JOBID,
 * DCFA_SOCK_TOKEN). The client's rank 0 then writes its own requests to its daemon
 * (DCFA_SOCK_EP_FD): the server's rank 0 with a forged token and a rank the server's job does
 * not have (both refused by the server's daemon after the challenge), a job of an mpirun that
 * does not exist, a segment of the server's job with a guessed tag, an untagged one and one to
 * create: each must come back REFUSE with its reason and no descriptor. The server's rank 0
 * made a segment under a random tag (a raw CREATE) and tells its name: with the tag changed
 * it does not exist; with the true tag it opens (the server's mark is in it) and is removed. The
 * server's rank 1 with its true token is granted a stream socket (closed before any hello: rank 1
 * drops it). Then both jobs still talk (an allreduce over the inter-communicator). Run under
 * --isolate with DCFA_FABRICS=sock: every connection is the daemons'; both jobs connect within
 * themselves first (a barrier), so that nothing comes to the client's rank 0 while it reads
 * its own answers.
 * PORT_BAD_CROSS=1: the two mpiruns run on different hosts (test/hosts/run_multihost.sh stage
 * isolate). The client's requests then carry the server's daemon's data address (its
 * DCFA_SOCK_DADDR, as a card would tell) and that daemon answers over TCP: the same refusals,
 * a job that daemon does not run "on this host", the daemon's address with a port where
 * nothing listens "cannot connect"; the segments of another host's mpirun are refused by the
 * client's own daemon (none of its daemons on this host takes requests).
 *   port_two_jobs_bad server FILE | client FILE */
#include "mtest.h"
#include "../../src/fabric/sock/sock_wire.h"
#include "../../src/util/seg_wire.h"
#include <errno.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#define MARK "port_two_jobs_bad's segment"

typedef struct {
    char job[SOCK_EP_JOB_MAX];
    char token[24];
    char seg[SEG_NAME_MAX]; /* rank 0: a segment it made, with its tag (as a card would tell) */
    char daddr[SOCK_EP_TEXT_MAX]; /* its daemon's data address, DCFA_SOCK_DADDR ("" none) */
} who;

static void who_me(who *w)
{
    const char *job = getenv("DCFA_JOBID"), *tok = getenv("DCFA_SOCK_TOKEN");
    const char *daddr = getenv("DCFA_SOCK_DADDR");
    memset(w, 0, sizeof *w);
    snprintf(w->job, sizeof w->job, "%s", job ? job : "");
    snprintf(w->token, sizeof w->token, "%s", tok ? tok : "");
    snprintf(w->daddr, sizeof w->daddr, "%s", daddr ? daddr : "");
}

/* the answer to my request seq on ep: its type, text (cap bytes) and descriptor */
static int answer(int ep, void *m, size_t len, int *fd)
{
    char cbuf[CMSG_SPACE(sizeof(int))];
    struct iovec iov = {.iov_base = m, .iov_len = len};
    struct msghdr mh = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
    ssize_t n = recvmsg(ep, &mh, 0);
    *fd = -1;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); n > 0 && cm; cm = CMSG_NXTHDR(&mh, cm))
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
            memcpy(fd, CMSG_DATA(cm), sizeof *fd);
    return n == (ssize_t)len;
}

/* the peer's daemon's address for a request (PORT_BAD_CROSS: the server's), else "" */
static const char *ask_daddr = "";

/* one connection request, refused saying want, or (want NULL) granted a stream socket */
static void ask(int ep, const char *job, int rank, uint64_t token, uint32_t seq, const char *want)
{
    sock_ep_msg m = {.magic = SOCK_EP_MAGIC,
                     .version = SOCK_VERSION,
                     .type = SOCK_EP_REQUEST,
                     .seq = seq,
                     .rank = rank,
                     .token = token};
    int fd, type = -1;
    socklen_t tl = sizeof type;
    snprintf(m.job, sizeof m.job, "%s", job);
    snprintf(m.text, sizeof m.text, "%s", ask_daddr);
    if (send(ep, &m, sizeof m, 0) != (ssize_t)sizeof m)
        mtest_fail("send request %u", seq);
    int ok = answer(ep, &m, sizeof m, &fd);
    m.text[sizeof m.text - 1] = 0;
    if (want == NULL)
        mtest_check(ok && m.type == SOCK_EP_GRANT && m.seq == seq && m.rank == rank && fd >= 0 &&
                        getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) == 0 && type == SOCK_STREAM,
                    "request %u (%s rank %d): answer type %u seq %u fd %d (%s), not a grant of a "
                    "stream socket",
                    seq, job, rank, m.type, m.seq, fd, m.type == SOCK_EP_REFUSE ? m.text : "");
    else
        mtest_check(ok && m.type == SOCK_EP_REFUSE && m.seq == seq && fd < 0 &&
                        strstr(m.text, want) != NULL,
                    "request %u (%s rank %d): answer type %u seq %u fd %d '%s', not a refusal "
                    "saying '%s'",
                    seq, job, rank, m.type, m.seq, fd, m.text, want);
    if (fd >= 0)
        close(fd);
}

/* one segment request of mine (of 4096 bytes), refused saying want; want NULL: granted (the
 * memfd, returned; REMOVE: done, -1) */
static int ask_seg(int ep, int type, const char *name, uint32_t seq, const char *want)
{
    who me;
    who_me(&me);
    seg_msg m = {.magic = SEG_MAGIC,
                 .version = SEG_VERSION,
                 .type = (uint8_t)type,
                 .seq = seq,
                 .rank = 0,
                 .token = strtoull(me.token, NULL, 16),
                 .size = 4096};
    int fd;
    snprintf(m.job, sizeof m.job, "%s", me.job);
    snprintf(m.name, sizeof m.name, "%s", name);
    if (send(ep, &m, sizeof m, 0) != (ssize_t)sizeof m)
        mtest_fail("send segment request %u", seq);
    int ok = answer(ep, &m, sizeof m, &fd);
    m.text[sizeof m.text - 1] = 0;
    if (want == NULL) {
        int good = type == SEG_REMOVE ? m.type == SEG_DONE && m.status == 0 && fd < 0
                                      : m.type == SEG_GRANT && fd >= 0 && m.size == 4096;
        mtest_check(ok && m.magic == SEG_MAGIC && m.seq == seq && good,
                    "segment request %u (%s): answer type %u seq %u status %d fd %d '%s', not "
                    "granted",
                    seq, name, m.type, m.seq, (int)m.status, fd, m.text);
        return fd;
    }
    mtest_check(ok && m.magic == SEG_MAGIC && m.type == SEG_REFUSE && m.seq == seq && fd < 0 &&
                    strstr(m.text, want) != NULL,
                "segment request %u (%s): answer type %u seq %u fd %d '%s', not a refusal saying "
                "'%s'",
                seq, name, m.type, m.seq, fd, m.text, want);
    if (fd >= 0)
        close(fd);
    return -1;
}

/* the server's rank 0: a segment of its job under a random tag, marked */
static void server_segment(who *w)
{
    const char *epv = getenv("DCFA_SOCK_EP_FD");
    uint64_t tag = 0;
    if (epv == NULL || getrandom(&tag, sizeof tag, 0) != (ssize_t)sizeof tag) {
        mtest_fail("no DCFA_SOCK_EP_FD, or no random tag");
        return;
    }
    snprintf(w->seg, sizeof w->seg, "/dcfa-%s-bad-%016llx", w->job, (unsigned long long)tag);
    int fd = ask_seg(atoi(epv), SEG_CREATE, w->seg, 700, NULL);
    void *p = fd >= 0 ? mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
    if (p != MAP_FAILED) {
        memcpy(p, MARK, sizeof MARK);
        munmap(p, 4096);
    }
    if (fd >= 0)
        close(fd);
}

static void client_asks(const who w[2])
{
    const char *epv = getenv("DCFA_SOCK_EP_FD");
    if (epv == NULL) {
        mtest_fail("no DCFA_SOCK_EP_FD (not started by our mpirun?)");
        return;
    }
    int ep = atoi(epv);
    uint64_t t0 = strtoull(w[0].token, NULL, 16), t1 = strtoull(w[1].token, NULL, 16);
    char name[SEG_NAME_MAX];
    const char *cross = getenv("PORT_BAD_CROSS");
    if (cross != NULL && strcmp(cross, "1") == 0) {
        char closed[SOCK_EP_TEXT_MAX];
        mtest_check(w[0].daddr[0] && strchr(w[0].daddr, ':'),
                    "the server's daemon has no data address ('%s')", w[0].daddr);
        ask_daddr = w[0].daddr;
        ask(ep, w[0].job, 0, t0 ^ 1, 801, "forged card");
        ask(ep, w[0].job, 0, 0, 802, "forged card");
        ask(ep, w[0].job, 7, t0, 803, "no such rank");
        ask(ep, "j1_0001", 0, t0, 804, "does not run on this host");
        /* the daemon's host, a port where nothing listens */
        snprintf(closed, sizeof closed, "1%s", strchr(w[0].daddr, ':'));
        ask_daddr = closed;
        ask(ep, w[0].job, 1, t1, 805, "cannot connect");
        ask_daddr = w[0].daddr;
        ask(ep, w[1].job, 1, t1, 806, NULL); /* the true token: granted */
        ask_seg(ep, SEG_OPEN, w[0].seg, 811, "takes no requests on this host");
        ask_daddr = "";
        return;
    }
    ask(ep, w[0].job, 0, t0 ^ 1, 801, "forged card");
    ask(ep, w[0].job, 0, 0, 802, "forged card");
    ask(ep, w[0].job, 7, t0, 803, "no such rank");
    ask(ep, "j1_0001", 0, t0, 804, "takes no requests on this host");
    ask(ep, w[1].job, 1, t1, 805, NULL); /* the true token: granted */
    /* the server's segment: a wrong tag opens nothing; its true tag opens it (the mark is
     * there) and removes it */
    size_t sl = strlen(w[0].seg);
    mtest_check(sl > 16, "no segment name from the server");
    if (sl > 16) {
        snprintf(name, sizeof name, "%.*s%016llx", (int)(sl - 16), w[0].seg,
                 strtoull(w[0].seg + sl - 16, NULL, 16) ^ 1);
        ask_seg(ep, SEG_OPEN, name, 810, "does not exist");
        int fd = ask_seg(ep, SEG_OPEN, w[0].seg, 811, NULL);
        void *p = fd >= 0 ? mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
        mtest_check(p != MAP_FAILED && memcmp(p, MARK, sizeof MARK) == 0,
                    "the server's segment %s is not the one it marked", w[0].seg);
        if (p != MAP_FAILED)
            munmap(p, 4096);
        if (fd >= 0)
            close(fd);
        ask_seg(ep, SEG_REMOVE, w[0].seg, 812, NULL);
        ask_seg(ep, SEG_OPEN, w[0].seg, 813, "does not exist");
    }
    snprintf(name, sizeof name, "/dcfa-%s-0-d0123456789abcdef", w[0].job);
    ask_seg(ep, SEG_OPEN, name, 806, "does not exist");
    ask_seg(ep, SEG_REMOVE, name, 807, "does not exist");
    ask_seg(ep, SEG_CREATE, name, 808, "which is no name of its job");
    snprintf(name, sizeof name, "/dcfa-%s-0-dnotag", w[0].job);
    ask_seg(ep, SEG_OPEN, name, 809, "which is no name of its job");
}

static int read_port(const char *file, char *port)
{
    for (int waited = 0; waited < 30000; waited += 50) {
        FILE *f = fopen(file, "r");
        if (f != NULL) {
            int ok = fgets(port, MPI_MAX_PORT_NAME, f) != NULL;
            fclose(f);
            port[strcspn(port, "\n")] = 0;
            return ok && port[0];
        }
        mtest_sleep_ms(50);
    }
    return 0;
}

int main(int argc, char **argv)
{
    char port[MPI_MAX_PORT_NAME] = "";
    int rank, server, errs = 0, sum = -1;
    MPI_Comm inter = MPI_COMM_NULL;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc != 3 || (strcmp(argv[1], "server") != 0 && strcmp(argv[1], "client") != 0)) {
        mtest_fail("usage: port_two_jobs_bad server|client FILE");
        return mtest_finalize();
    }
    server = strcmp(argv[1], "server") == 0;
    MPI_Barrier(MPI_COMM_WORLD); /* the connections within the job, first */
    who w[2];
    memset(w, 0, sizeof w);
    if (rank == 0 && server) {
        FILE *f;
        char tmp[4096];
        who_me(&w[0]);
        server_segment(&w[0]);
        mtest_check_rc("MPI_Open_port", MPI_Open_port(MPI_INFO_NULL, port));
        snprintf(tmp, sizeof tmp, "%s.tmp", argv[2]);
        if ((f = fopen(tmp, "w")) == NULL || fprintf(f, "%s\n", port) < 0 || fclose(f) != 0 ||
            rename(tmp, argv[2]) != 0)
            mtest_fail("cannot write the port name to %s: %s", argv[2], strerror(errno));
    } else if (rank == 0 && !read_port(argv[2], port)) {
        fprintf(stderr, "[rank 0] no port name in %s\n", argv[2]);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    int rc = server ? MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter)
                    : MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
    if (!mtest_check_rc(server ? "MPI_Comm_accept" : "MPI_Comm_connect", rc))
        return mtest_finalize();
    if (server) {
        if (rank == 1) {
            who_me(&w[1]);
            MPI_Send(&w[1], sizeof w[1], MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        } else if (rank == 0) {
            MPI_Recv(&w[1], sizeof w[1], MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            mtest_check(w[0].job[0] && w[0].token[0] && w[1].token[0], "no job id or token");
            MPI_Send(w, sizeof w, MPI_BYTE, 0, 1, inter);
            MPI_Recv(&errs, 1, MPI_INT, 0, 3, inter, MPI_STATUS_IGNORE);
            mtest_check(errs == 0, "the client's rank 0 found %d errors", errs);
        }
    } else if (rank == 0) {
        MPI_Recv(w, sizeof w, MPI_BYTE, 0, 1, inter, MPI_STATUS_IGNORE);
        client_asks(w);
        MPI_Send(&mtest_errs, 1, MPI_INT, 0, 3, inter);
    }
    /* both jobs still talk */
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, inter);
    mtest_check(sum == 1, "allreduce over the inter-communicator: %d, not 1", sum);
    MPI_Comm_disconnect(&inter);
    if (server && rank == 0)
        mtest_check_rc("MPI_Close_port", MPI_Close_port(port));
    return mtest_finalize();
}
