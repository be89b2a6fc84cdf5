/* A malicious spawned rank under mpirun --isolate (docs/launcher.md "Endpoints between jobs"):
 * the daemon hands over a connection to a rank of any job of its mpirun on that rank's true
 * token (the capability: only the rank's card, learned through MPI, gives it), and nothing
 * else. The parent (rank 0 of a job of any size) spawns job A and job B, one process each; B
 * tells the parent its job id and endpoint token (DCFA_JOBID, DCFA_SOCK_TOKEN), the parent
 * passes them and its own to A. A then writes its own requests to its daemon (DCFA_SOCK_EP_FD)
 * for: a made-up job, its parent's rank 0 with a forged token, a rank its parent's job does
 * not have, its sibling B with a forged token and a rank B does not have. Each must come back
 * as REFUSE with the reason and no fd, and reach nobody else. Its request for B with B's true
 * token is granted (a socket; B's sock fabric gets the other end, which A closes before any
 * hello: B drops it). Then A and its parent still talk (over the connection the daemon handed
 * over when the parent's data first went to A), and A tells the parent its error count.
 * Segments (--isolate shm; the daemon answers them in any mode): A may not open a name of its
 * sibling's job without the creator's tag, nor create one under its sibling's or parent's; a
 * tagged name it guessed does not exist (or, B on another host, is no name this daemon has). Run
 * with DCFA_FABRICS=sock so that the parent-child connection is the daemon's; A makes its requests
 * while no other connection can come to it, so its sock fabric does not read those answers. */
#include "mtest.h"
#include "../../src/fabric/sock/sock_wire.h"
#include "../../src/util/seg_wire.h"
#include <errno.h>
#include <limits.h>
#include <sys/socket.h>
#include <unistd.h>

#define CHILD_A "--spawn-isolate-bad-a"
#define CHILD_B "--spawn-isolate-bad-b"

/* what a process tells about itself: its job id and token */
typedef struct {
    char job[SOCK_EP_JOB_MAX];
    char token[24];
    int node; /* its daemon's tree node across hosts (DCFA_SOCK_NODE: its card's hint), else 0 */
} who;

static void who_me(who *w)
{
    const char *job = getenv("DCFA_JOBID"), *tok = getenv("DCFA_SOCK_TOKEN");
    memset(w, 0, sizeof *w);
    snprintf(w->job, sizeof w->job, "%s", job ? job : "");
    snprintf(w->token, sizeof w->token, "%s", tok ? tok : "");
    w->node = getenv("DCFA_SOCK_NODE") ? atoi(getenv("DCFA_SOCK_NODE")) : 0;
}

/* one request to my daemon, which must be refused saying want (or one of want's
 * '|'-separated texts); want NULL: granted a socket to that job's rank */
static void ask(int ep, const char *job, int rank, uint64_t token, int node, uint32_t seq,
                const char *want)
{
    sock_ep_msg m = {.magic = SOCK_EP_MAGIC,
                     .version = SOCK_VERSION,
                     .type = SOCK_EP_REQUEST,
                     .seq = seq,
                     .rank = rank,
                     .token = token,
                     .node = node};
    snprintf(m.job, sizeof m.job, "%s", job);
    if (send(ep, &m, sizeof m, 0) != (ssize_t)sizeof m)
        mtest_fail("send request %u", seq);
    char cbuf[CMSG_SPACE(sizeof(int))];
    struct iovec iov = {.iov_base = &m, .iov_len = sizeof m};
    struct msghdr mh = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
    int fd = -1;
    ssize_t n = recvmsg(ep, &mh, 0);
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); n > 0 && cm; cm = CMSG_NXTHDR(&mh, cm))
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
            memcpy(&fd, CMSG_DATA(cm), sizeof fd);
    m.text[sizeof m.text - 1] = 0;
    m.job[sizeof m.job - 1] = 0;
    if (want == NULL) {
        int type = -1;
        socklen_t tl = sizeof type;
        mtest_check(n == (ssize_t)sizeof m && m.type == SOCK_EP_GRANT && m.seq == seq &&
                        m.rank == rank && strcmp(m.job, job) == 0 && fd >= 0 &&
                        getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) == 0 && type == SOCK_STREAM,
                    "request %u (%s rank %d): answer type %u seq %u rank %d job '%s' fd %d "
                    "(%s), not a grant of a stream socket",
                    seq, job, rank, m.type, m.seq, (int)m.rank, m.job, fd,
                    m.type == SOCK_EP_REFUSE ? m.text : "");
    } else {
        int said = 0;
        char alt[256];
        snprintf(alt, sizeof alt, "%s", want);
        for (char *sv = NULL, *w = strtok_r(alt, "|", &sv); w; w = strtok_r(NULL, "|", &sv))
            said |= strstr(m.text, w) != NULL;
        mtest_check(n == (ssize_t)sizeof m && m.type == SOCK_EP_REFUSE && m.seq == seq && fd < 0,
                    "request %u (%s rank %d): answer type %u seq %u fd %d, not a refusal", seq, job,
                    rank, m.type, m.seq, fd);
        mtest_check(said, "request %u: refusal '%s' does not say '%s'", seq, m.text, want);
    }
    if (fd >= 0)
        close(fd);
}

/* one segment request of mine (A's), which must be refused saying want */
static void ask_seg(int ep, int type, const char *name, uint32_t seq, const char *want)
{
    const char *job = getenv("DCFA_JOBID"), *tok = getenv("DCFA_SOCK_TOKEN");
    seg_msg m = {.magic = SEG_MAGIC,
                 .version = SEG_VERSION,
                 .type = (uint8_t)type,
                 .seq = seq,
                 .rank = 0,
                 .token = tok ? strtoull(tok, NULL, 16) : 0,
                 .size = 4096};
    snprintf(m.job, sizeof m.job, "%s", job ? job : "");
    snprintf(m.name, sizeof m.name, "%s", name);
    if (send(ep, &m, sizeof m, 0) != (ssize_t)sizeof m)
        mtest_fail("send segment request %u", seq);
    char cbuf[CMSG_SPACE(sizeof(int))];
    struct iovec iov = {.iov_base = &m, .iov_len = sizeof m};
    struct msghdr mh = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
    int fd = -1;
    ssize_t n = recvmsg(ep, &mh, 0);
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); n > 0 && cm; cm = CMSG_NXTHDR(&mh, cm))
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
            memcpy(&fd, CMSG_DATA(cm), sizeof fd);
    m.text[sizeof m.text - 1] = 0;
    mtest_check(n == (ssize_t)sizeof m && m.magic == SEG_MAGIC && m.type == SEG_REFUSE &&
                    m.seq == seq && fd < 0,
                "segment request %u (%s): answer type %u seq %u fd %d, not a refusal", seq, name,
                m.type, m.seq, fd);
    mtest_check(strstr(m.text, want) != NULL, "segment request %u: refusal '%s' does not say '%s'",
                seq, m.text, want);
    if (fd >= 0)
        close(fd);
}

static int child(MPI_Comm parent, const char *which)
{
    mtest_wrank = 100;
    int perrs = 0;
    if (strcmp(which, CHILD_B) == 0) {
        who me;
        who_me(&me);
        MPI_Send(&me, sizeof me, MPI_BYTE, 0, 1, parent);
        MPI_Recv(NULL, 0, MPI_BYTE, 0, 2, parent, MPI_STATUS_IGNORE);
    } else {
        who w[2]; /* the parent's rank 0, B */
        int psize = 0;
        MPI_Comm_remote_size(parent, &psize);
        MPI_Recv(w, sizeof w, MPI_BYTE, 0, 1, parent, MPI_STATUS_IGNORE);
        const char *epv = getenv("DCFA_SOCK_EP_FD");
        if (!epv)
            mtest_fail("child: no DCFA_SOCK_EP_FD (not started by our mpirun?)");
        int ep = atoi(epv);
        uint64_t tp = strtoull(w[0].token, NULL, 16), tb = strtoull(w[1].token, NULL, 16);
        /* across hosts (B elsewhere, its card's node hint given as its card would) B's daemon
         * decides on the sibling, after the daemons' handshake */
        ask(ep, "jmadeup_0000_7", 0, tp, 0, 901, "no job of this mpirun");
        ask(ep, w[1].job, 0, tb ^ 1, w[1].node, 909, "forged card");
        ask(ep, w[1].job, 5, tb, w[1].node, 910, "no such rank");
        ask(ep, w[1].job, 0, tb, w[1].node, 902, NULL); /* the true token: granted */
        ask(ep, w[0].job, 0, tp ^ 1, w[0].node, 903, "forged card");
        ask(ep, w[0].job, psize + 3, tp, w[0].node, 904, "no such rank");
        const char *mynode = getenv("DCFA_SOCK_NODE");
        if (w[1].node > 0 && (!mynode || atoi(mynode) != w[1].node)) /* a wrong hint */
            ask(ep, "jmadeup_0000_7", 0, tp, w[1].node, 908, "which does not run on host");
        char name[SEG_NAME_MAX];
        snprintf(name, sizeof name, "/dcfa-%s-0-dnotag", w[1].job);
        ask_seg(ep, SEG_OPEN, name, 905, "which is no name of its job");
        snprintf(name, sizeof name, "/dcfa-%s-0-d0123456789abcdef", w[1].job);
        /* a guessed tag: no such segment; B on another host: its job has no names here */
        int b_here = !(w[1].node > 0 && (!mynode || atoi(mynode) != w[1].node));
        ask_seg(ep, SEG_OPEN, name, 911, b_here ? "does not exist" : "which is no name of its job");
        ask_seg(ep, SEG_CREATE, name, 912, "which is no name of its job");
        snprintf(name, sizeof name, "/dcfa-%s-0-d0123456789abcdef", w[0].job);
        ask_seg(ep, SEG_CREATE, name, 906, "which is no name of its job");
        ask_seg(ep, SEG_OPEN, name, 907, "does not exist");
        MPI_Send(&mtest_errs, 1, MPI_INT, 0, 3, parent);
    }
    MPI_Allreduce(&mtest_errs, &perrs, 1, MPI_INT, MPI_SUM, parent);
    MPI_Comm_disconnect(&parent);
    MPI_Finalize();
    return mtest_errs == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    MPI_Comm parent = MPI_COMM_NULL, a = MPI_COMM_NULL, b = MPI_COMM_NULL;
    char exe[PATH_MAX];
    int rank, zero = 0, cerrs = -1;

    mtest_init(&argc, &argv);
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL)
        return child(parent, argc > 1 ? argv[1] : "");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    mtest_self_exe(exe, sizeof exe);
    char *argv_a[] = {CHILD_A, NULL}, *argv_b[] = {CHILD_B, NULL};
    mtest_check_rc("spawn A", MPI_Comm_spawn(exe, argv_a, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &a,
                                             MPI_ERRCODES_IGNORE));
    mtest_check_rc("spawn B", MPI_Comm_spawn(exe, argv_b, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &b,
                                             MPI_ERRCODES_IGNORE));
    if (a == MPI_COMM_NULL || b == MPI_COMM_NULL)
        return mtest_finalize();
    if (rank == 0) {
        who w[2];
        who_me(&w[0]);
        MPI_Recv(&w[1], sizeof w[1], MPI_BYTE, 0, 1, b, MPI_STATUS_IGNORE);
        mtest_check(w[0].job[0] && w[0].token[0] && w[1].job[0] && w[1].token[0],
                    "no job id or token (parent '%s' '%s', B '%s' '%s')", w[0].job, w[0].token,
                    w[1].job, w[1].token);
        MPI_Send(w, sizeof w, MPI_BYTE, 0, 1, a);
        int aerrs = -1;
        MPI_Recv(&aerrs, 1, MPI_INT, 0, 3, a, MPI_STATUS_IGNORE);
        mtest_check(aerrs == 0, "child A found %d errors", aerrs);
        MPI_Send(NULL, 0, MPI_BYTE, 0, 2, b);
    }
    MPI_Allreduce(&zero, &cerrs, 1, MPI_INT, MPI_SUM, a);
    mtest_check(cerrs == 0, "child A: %d errors", cerrs);
    MPI_Allreduce(&zero, &cerrs, 1, MPI_INT, MPI_SUM, b);
    mtest_check(cerrs == 0, "child B: %d errors", cerrs);
    MPI_Comm_disconnect(&a);
    MPI_Comm_disconnect(&b);
    return mtest_finalize();
}
