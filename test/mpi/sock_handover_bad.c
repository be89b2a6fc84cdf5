/* A malicious rank on the endpoint channel (docs/launcher.md "Endpoints and isolation"):
 * rank 0 writes its own requests to its assist daemon (DCFA_SOCK_EP_FD) for endpoints it has
 * no right to: another job's process, a made-up rank, itself, rank 1 with a forged token, a
 * message that is no request. Each must come back as REFUSE naming the request, with no fd,
 * and reach nobody else; then the true request (rank 1's token, which rank 1 sends it over
 * MPI) is granted: rank 0 gets a stream socket, rank 1 gets the other end as INCOMING, and a
 * few bytes go through. Runs on shm (the sock fabric, which would read the channel itself,
 * is not opened).
 *
 * Across hosts (SOCK_BAD_DIR=<a directory both hosts see>, ranks 0 and 1 on two hosts, no
 * message between them: shm does not reach across) rank 1 leaves its token in a file there
 * instead; the forged token is then refused by rank 1's daemon, after the two daemons' own
 * handshake, and the true request is granted a TCP socket to rank 1's host. */
#include "mtest.h"
#include "../../src/fabric/sock/sock_wire.h"
#include <errno.h>
#include <sys/socket.h>

/* one message and the fd it carried (-1: none) */
static int ep_recv(int ep, sock_ep_msg *m, int *fd, int flags)
{
    char cbuf[CMSG_SPACE(sizeof(int))];
    struct iovec iov = {.iov_base = m, .iov_len = sizeof *m};
    struct msghdr mh = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
    *fd = -1;
    ssize_t n = recvmsg(ep, &mh, flags);
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); n > 0 && cm; cm = CMSG_NXTHDR(&mh, cm))
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
            memcpy(fd, CMSG_DATA(cm), sizeof *fd);
    return (int)n;
}

static void ask(int ep, const char *job, int rank, uint64_t token, uint32_t seq, const char *want)
{
    sock_ep_msg m = {.magic = SOCK_EP_MAGIC,
                     .version = SOCK_VERSION,
                     .type = SOCK_EP_REQUEST,
                     .seq = seq,
                     .rank = rank,
                     .token = token};
    snprintf(m.job, sizeof m.job, "%s", job);
    if (send(ep, &m, sizeof m, 0) != (ssize_t)sizeof m)
        mtest_fail("send request %u", seq);
    int fd;
    int n = ep_recv(ep, &m, &fd, 0);
    mtest_check(n == (int)sizeof m && m.type == SOCK_EP_REFUSE && m.seq == seq && fd < 0,
                "request %u (%s rank %d): answer type %u seq %u fd %d, not a refusal", seq, job,
                rank, m.type, m.seq, fd);
    mtest_check(strstr(m.text, want) != NULL, "request %u: refusal '%s' does not say '%s'", seq,
                m.text, want);
    if (fd >= 0)
        close(fd);
}

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *epv = getenv("DCFA_SOCK_EP_FD"), *job = getenv("DCFA_JOBID");
    const char *tok = getenv("DCFA_SOCK_TOKEN");
    if (!epv || !job || !tok || size < 2) {
        fprintf(stderr, "sock_handover_bad: needs our mpirun and 2 ranks\n");
        return 1;
    }
    int ep = atoi(epv);
    uint64_t t1 = 0;
    const char *dir = getenv("SOCK_BAD_DIR");
    char path[512];
    snprintf(path, sizeof path, "%s/token.%s", dir ? dir : ".", job);
    if (rank == 1)
        t1 = strtoull(tok, NULL, 16);
    if (!dir) {
        MPI_Bcast(&t1, 1, MPI_UINT64_T, 1, MPI_COMM_WORLD);
    } else if (rank == 1) {
        char tmp[520];
        snprintf(tmp, sizeof tmp, "%s.new", path);
        FILE *f = fopen(tmp, "w");
        if (!f || fprintf(f, "%s\n", tok) < 0 || fclose(f) != 0 || rename(tmp, path) != 0)
            mtest_fail("cannot write %s", path);
    } else if (rank == 0) {
        for (int i = 0; i < 2000 && t1 == 0; i++) {
            FILE *f = fopen(path, "r");
            unsigned long long v = 0;
            if (f) {
                if (fscanf(f, "%llx", &v) == 1)
                    t1 = v;
                fclose(f);
            } else
                usleep(10000);
        }
        mtest_check(t1 != 0, "no token of rank 1 in %s", path);
        unlink(path);
    }
    if (rank == 0) {
        ask(ep, "otherjob", 1, t1, 1, "no job of this mpirun");
        ask(ep, job, size + 5, t1, 2, "no such rank");
        ask(ep, job, -1, t1, 3, "no such rank");
        ask(ep, job, 0, strtoull(tok, NULL, 16), 4, "itself");
        ask(ep, job, 1, t1 ^ 1, 5, "forged card");
        ask(ep, job, 1, 0, 6, "forged card");
        char junk[10] = "junk";
        if (send(ep, junk, sizeof junk, 0) != (ssize_t)sizeof junk)
            mtest_fail("send junk");
        int fd;
        sock_ep_msg m;
        int n = ep_recv(ep, &m, &fd, 0);
        mtest_check(n == (int)sizeof m && m.type == SOCK_EP_REFUSE && fd < 0 &&
                        strstr(m.text, "malformed") != NULL,
                    "junk: answer type %u fd %d '%s'", m.type, fd, m.text);
        /* the true one */
        m = (sock_ep_msg){.magic = SOCK_EP_MAGIC,
                          .version = SOCK_VERSION,
                          .type = SOCK_EP_REQUEST,
                          .seq = 7,
                          .rank = 1,
                          .token = t1};
        snprintf(m.job, sizeof m.job, "%s", job);
        if (send(ep, &m, sizeof m, 0) != (ssize_t)sizeof m)
            mtest_fail("send request 7");
        n = ep_recv(ep, &m, &fd, 0);
        int type = 0;
        socklen_t l = sizeof type;
        mtest_check(n == (int)sizeof m && m.type == SOCK_EP_GRANT && m.seq == 7 && fd >= 0 &&
                        getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l) == 0 && type == SOCK_STREAM,
                    "request 7: answer type %u seq %u fd %d (socket type %d), not a grant", m.type,
                    m.seq, fd, type);
        if (fd >= 0) {
            struct sockaddr_storage sa;
            socklen_t sl = sizeof sa;
            mtest_check(!dir || (getsockname(fd, (struct sockaddr *)&sa, &sl) == 0 &&
                                 sa.ss_family == AF_INET),
                        "across hosts the granted socket is a TCP one (family %d)", sa.ss_family);
            mtest_check(write(fd, "hello", 5) == 5, "write to the granted socket");
            close(fd);
        }
    } else if (rank == 1) {
        int fd;
        sock_ep_msg m;
        int n = ep_recv(ep, &m, &fd, 0); /* the one from request 7, and nothing before it */
        mtest_check(n == (int)sizeof m && m.type == SOCK_EP_INCOMING && m.rank == 0 &&
                        !strcmp(m.job, job) && fd >= 0,
                    "incoming: type %u rank %d job %s fd %d", m.type, m.rank, m.job, fd);
        char buf[8] = {0};
        if (fd >= 0) {
            mtest_check(read(fd, buf, 5) == 5 && !memcmp(buf, "hello", 5), "bytes over the socket");
            close(fd);
        }
    }
    if (dir) {
        /* no message between the hosts (shm does not reach): rank 1 leaves its error count
         * in a file, rank 0 adds it and reports */
        char done[520];
        int total = mtest_errs, theirs = -1;
        snprintf(done, sizeof done, "%s/done.%s", dir, job);
        if (rank == 1) {
            char tmp[530];
            snprintf(tmp, sizeof tmp, "%s.new", done);
            FILE *f = fopen(tmp, "w");
            if (!f || fprintf(f, "%d\n", mtest_errs) < 0 || fclose(f) != 0 ||
                rename(tmp, done) != 0)
                total++;
        } else if (rank == 0) {
            for (int i = 0; i < 2000 && theirs < 0; i++) {
                FILE *f = fopen(done, "r");
                if (f) {
                    if (fscanf(f, "%d", &theirs) != 1)
                        theirs = -1;
                    fclose(f);
                } else
                    usleep(10000);
            }
            unlink(done);
            total += theirs < 0 ? 1 : theirs;
            if (total)
                printf(" Found %d errors\n", total);
            else
                printf(" No Errors\n");
            fflush(stdout);
        }
        MPI_Finalize();
        return total != 0;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) { /* nothing else came: no refused request reached the peer */
        int fd;
        sock_ep_msg m;
        int n = ep_recv(ep, &m, &fd, MSG_DONTWAIT);
        mtest_check(n < 0 && errno == EAGAIN, "a second message to rank 1 (type %u)", m.type);
    }
    return mtest_finalize();
}
