/* ad: endpoints handed over to the ranks, and the confinement they run in (docs/launcher.md
 * "Endpoints and isolation").
 *
 * Each rank gets, besides its PMI channel, an endpoint channel: a SOCK_SEQPACKET socketpair
 * (the rank's end is DCFA_SOCK_EP_FD) and a random token (DCFA_SOCK_TOKEN) that its sock card
 * carries. A rank asks on it for a connection to another rank of its job (SOCK_EP_REQUEST,
 * src/fabric/sock/sock_wire.h); the daemon checks the request (the job is the asker's, the
 * rank exists and runs here, the token is that rank's), makes a connected pair of stream
 * sockets, and hands one end to the asker (GRANT) and the other to the peer (INCOMING), both as
 * SCM_RIGHTS; a request it cannot grant gets REFUSE naming it, and nothing else happens. The
 * daemon never touches the bytes that then flow, unless mpirun --relay asked it to forward them
 * (ad_relay.c). A rank on another host: ad_ep_remote.c.
 *
 * mpirun --isolate net (DCFA_ISOLATE=net) starts each rank in a network namespace of its own
 * with only loopback: unshare(CLONE_NEWNET) as root, inside a new user namespace otherwise;
 * --isolate seccomp adds a system call filter (ad_seccomp.c), --isolate shm an empty read-only
 * /dev/shm, the segments coming from the daemon on the endpoint channel (ad_seg.c). */
#include "ad_ep.h"
#include "ad_sendfd.h"
#include "ad_seg.h"
#include "ad.h"
#include "ad_seccomp.h"
#include "ad_relay.h"
#include "fabric/sock/sock_wire.h"
#include "util/node_key.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

int ad_ep_pair(struct ad_proc *p, int *child_fd)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
        return -errno;
    uint64_t t = 0;
    if (getrandom(&t, sizeof t, GRND_NONBLOCK) != (ssize_t)sizeof t) {
        close(sv[0]);
        close(sv[1]);
        return -EIO;
    }
    p->ep_fd = sv[0];
    p->ep_token = t;
    ad_set_nonblock(p->ep_fd);
    *child_fd = sv[1];
    return 0;
}

static int ad_ep_node; /* this daemon's tree node across hosts, 0 on one host */

void ad_ep_set_node(int node) { ad_ep_node = node; }

/* this daemon's data port and networks ("<port>:<networks>"), which the ranks' cards carry for
 * the daemons of other mpiruns on other hosts; "" when it has no data port */
static char ad_ep_daddr[SOCK_EP_TEXT_MAX];

void ad_ep_set_daddr(int port, const util_net *nets, int nnets)
{
    /* ':' after the port (';' separates cards); whole networks only, as many as fit the
     * REQUEST's text */
    int n = snprintf(ad_ep_daddr, sizeof ad_ep_daddr, "%d:", port);
    while (nnets > 0 &&
           util_net_format(nets, nnets, ad_ep_daddr + n, sizeof ad_ep_daddr - (size_t)n) != UTIL_OK)
        nnets--;
    if (nnets == 0)
        ad_ep_daddr[0] = 0; /* no network */
}

void ad_ep_child_env(const struct ad_proc *p, int child_fd)
{
    char buf[32];
    if (child_fd < 0)
        return;
    fcntl(child_fd, F_SETFD, 0);
    snprintf(buf, sizeof buf, "%d", child_fd);
    setenv("DCFA_SOCK_EP_FD", buf, 1);
    snprintf(buf, sizeof buf, "%016llx", (unsigned long long)p->ep_token);
    setenv("DCFA_SOCK_TOKEN", buf, 1);
    if (ad_ep_node > 0) { /* across hosts: my tree node, which the rank's sock card names */
        snprintf(buf, sizeof buf, "%d", ad_ep_node);
        setenv("DCFA_SOCK_NODE", buf, 1);
    }
    if (ad_ep_daddr[0] != 0) /* my data port: the rank's card names it for other mpiruns */
        setenv("DCFA_SOCK_DADDR", ad_ep_daddr, 1);
}

/* one message to a rank's endpoint channel, with fd (or -1); 0 or -errno */
int ad_ep_send(struct ad_proc *p, const sock_ep_msg *m, int fd)
{
    return ad_send_fd(p->ep_fd, m, sizeof *m, fd);
}

void ad_ep_refuse(struct ad_proc *p, const sock_ep_msg *req, int status, const char *fmt, ...)
{
    sock_ep_msg m = {.magic = SOCK_EP_MAGIC,
                     .version = SOCK_VERSION,
                     .type = SOCK_EP_REFUSE,
                     .seq = req->seq,
                     .rank = req->rank,
                     .status = status};
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m.text, sizeof m.text, fmt, ap);
    va_end(ap);
    (void)ad_ep_send(p, &m, -1);
}

/* the local process of job with that rank, or NULL */
static struct ad_proc *ad_ep_local(struct ad_job *job, int rank)
{
    for (int i = 0; i < job->nprocs; i++)
        if (job->procs[i].rank == rank)
            return &job->procs[i];
    return NULL;
}

/* the job of this daemon (of this mpirun) named jobid, or NULL */
static struct ad_job *ad_ep_job(struct ad_daemon *d, const char *jobid)
{
    for (int i = 0; i < d->njobs; i++)
        if (d->jobs[i] && strcmp(d->jobs[i]->jobid, jobid) == 0)
            return d->jobs[i];
    return NULL;
}

static ad_ep_remote_fn ad_ep_remote; /* ad_ep_remote.c's, across hosts */

void ad_ep_set_remote(ad_ep_remote_fn fn) { ad_ep_remote = fn; }

static int (*ad_ep_is_foreign)(const char *jobid); /* a job of another mpirun? */
static ad_ep_foreign_fn ad_ep_foreign;             /* asks that mpirun's daemon */

void ad_ep_set_foreign(int (*is_foreign)(const char *jobid), ad_ep_foreign_fn fn)
{
    ad_ep_is_foreign = is_foreign;
    ad_ep_foreign = fn;
}

static void ad_ep_request(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p,
                          const sock_ep_msg *req)
{
    char job_of[SOCK_EP_JOB_MAX];
    memcpy(job_of, req->job, sizeof job_of);
    job_of[sizeof job_of - 1] = 0;
    int rank = req->rank;
    struct ad_job *mine = job;
    struct ad_job *other = NULL; /* the peer's job, when it runs here; NULL: another host's */
    if (strcmp(job_of, job->jobid) != 0) {
        /* another job of this mpirun: any (its parent, a job it spawned, a sibling that a
         * common parent joined to it through MPI). The token below is the capability: a random
         * secret of the peer rank's that the asker can only know from the peer's card, which
         * only MPI gives it (an inter-communicator, a port) */
        other = ad_ep_job(d, job_of);
        if (other == NULL && ad_ep_foreign != NULL && ad_ep_is_foreign(job_of)) {
            /* a job of another mpirun on this host: its daemon checks the right (the token)
             * by a challenge (ad_ep_remote.c, "Endpoints between two mpiruns") */
            ad_ep_foreign(d, job, p, req);
            return;
        }
        if (other == NULL && req->node > 0 && d->tree != NULL && ad_ep_remote != NULL) {
            /* a job that runs no rank here: the peer's card names its host; that host's daemon
             * checks the rest, the relation of the two jobs too (ad_ep_remote.c) */
            ad_ep_remote(d, job, p, NULL, req);
            return;
        }
        if (other == NULL) {
            ad_ep_refuse(p, req, -ENOENT,
                         "rank %d of job %s asked for rank %d of job '%.40s', which is no job "
                         "of this mpirun nor of another one on this host",
                         p->rank, job->jobid, rank, job_of);
            return;
        }
        job = other;
    }
    if (job == mine && rank == p->rank) {
        ad_ep_refuse(p, req, -EINVAL, "rank %d asked for a connection to itself", p->rank);
        return;
    }
    if (rank < 0 || rank >= job->size) {
        ad_ep_refuse(p, req, -ENOENT, "rank %d asked for rank %d of job %s, which has no such rank",
                     p->rank, rank, job->jobid);
        return;
    }
    struct ad_proc *q = ad_ep_local(job, rank);
    if (q == NULL) { /* on another host: its daemon checks the rest (ad_ep_remote.c) */
        if (d->tree != NULL && ad_ep_remote != NULL)
            ad_ep_remote(d, mine, p, job, req);
        else
            ad_ep_refuse(p, req, -EHOSTUNREACH,
                         "rank %d asked for rank %d of job %s, which this daemon does not run",
                         p->rank, rank, job->jobid);
        return;
    }
    if (req->token != q->ep_token) {
        ad_ep_refuse(p, req, -EACCES,
                     "rank %d asked for rank %d of job %s with token %016llx, which is not that "
                     "rank's (a forged card)",
                     p->rank, rank, job->jobid, (unsigned long long)req->token);
        return;
    }
    if (q->ep_fd < 0 || !q->running) {
        ad_ep_refuse(p, req, -ECONNREFUSED, "rank %d asked for rank %d of job %s, which has ended",
                     p->rank, rank, job->jobid);
        return;
    }
    int sv[2]; /* one pair, or with --relay two whose other ends the daemon joins */
    int rc = ad_relay_enabled()                                            ? ad_relay_pair(sv)
             : socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0 ? -errno
                                                                           : 0;
    if (rc != 0) {
        ad_ep_refuse(p, req, rc, "rank %d asked for rank %d of job %s: socketpair: %s", p->rank,
                     rank, job->jobid, strerror(-rc));
        return;
    }
    sock_ep_msg in = {
        .magic = SOCK_EP_MAGIC, .version = SOCK_VERSION, .type = SOCK_EP_INCOMING, .rank = p->rank};
    snprintf(in.job, sizeof in.job, "%s", mine->jobid);
    rc = ad_ep_send(q, &in, sv[1]);
    if (rc == 0) {
        sock_ep_msg g = {.magic = SOCK_EP_MAGIC,
                         .version = SOCK_VERSION,
                         .type = SOCK_EP_GRANT,
                         .seq = req->seq,
                         .rank = rank};
        snprintf(g.job, sizeof g.job, "%s", job->jobid);
        (void)ad_ep_send(p, &g, sv[0]);
    } else {
        ad_ep_refuse(p, req, rc,
                     "rank %d asked for rank %d of job %s, whose endpoint channel "
                     "takes nothing (%s)",
                     p->rank, rank, job->jobid, strerror(-rc));
    }
    close(sv[0]);
    close(sv[1]);
}

void ad_ep_input(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p)
{
    for (int k = 0; k < 16 && p->ep_fd >= 0; k++) {
        sock_ep_msg m;
        _Alignas(8) char buf[512]; /* this channel's messages: sock_ep_msg, or seg_msg (ad_seg.c) */
        char cbuf[CMSG_SPACE(4 * sizeof(int))];
        struct iovec iov = {.iov_base = buf, .iov_len = sizeof buf};
        struct msghdr mh = {
            .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
        memset(&m, 0, sizeof m);
        memset(buf, 0, sizeof buf);
        ssize_t n = recvmsg(p->ep_fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n <= 0) { /* the rank closed it or ended: nothing more to hand over */
            ad_proc_close_ep(p);
            return;
        }
        /* a rank sends no fds: any it sent are closed, unused */
        for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
            if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
                for (size_t i = 0; i < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
                    int fd;
                    memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof fd);
                    close(fd);
                }
        if (!(mh.msg_flags & MSG_TRUNC) &&
            ad_seg_request(d->jobs, d->njobs, job, p, buf, (size_t)n))
            continue; /* a shared-memory segment (--isolate shm) */
        memcpy(&m, buf, sizeof m);
        if (n != (ssize_t)sizeof m || m.magic != SOCK_EP_MAGIC || m.version != SOCK_VERSION ||
            m.type != SOCK_EP_REQUEST || (mh.msg_flags & MSG_TRUNC)) {
            ad_ep_refuse(p, &m, -EPROTO,
                         "rank %d sent a malformed endpoint request (%zd bytes, type %u, version "
                         "%u)",
                         p->rank, n, m.type, m.version);
            continue;
        }
        ad_ep_request(d, job, p, &m);
    }
}

static int ad_ep_on_fd(struct ad_daemon *d, const struct ad_fd_ref *ref, short revents)
{
    (void)revents;
    ad_ep_input(d, ref->job, ref->proc);
    return 0;
}

void ad_ep_attach(void) { ad_reactor_handle(AD_FD_EP, ad_ep_on_fd); }

/* ---- isolation ------------------------------------------------------------------------ */

int ad_isolate_parse(const char *spec, char *err, size_t cap)
{
    int modes = 0;
    for (const char *s = spec; s && *s;) {
        size_t n = strcspn(s, ",");
        if (n == 3 && !strncmp(s, "net", 3))
            modes |= AD_ISOLATE_NET;
        else if (n == 7 && !strncmp(s, "seccomp", 7) && ad_seccomp_supported())
            modes |= AD_ISOLATE_SECCOMP;
        else if (n == 3 && !strncmp(s, "shm", 3))
            modes |= AD_ISOLATE_SHM;
        else if (n == 4 && !strncmp(s, "none", 4))
            ;
        else {
            snprintf(err, cap, "--isolate %s: '%.*s' is not a mode (net, shm, seccomp%s)", spec,
                     (int)n, s, ad_seccomp_supported() ? "" : " on x86_64 and aarch64");
            return -EINVAL;
        }
        s += n;
        if (*s == ',')
            s++;
    }
    return modes;
}

static int ad_write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = write(fd, text, strlen(text));
    int e = errno;
    close(fd);
    return n == (ssize_t)strlen(text) ? 0 : -(n < 0 ? e : EIO);
}

int ad_isolate_idmap(uid_t uid, gid_t gid)
{
    char map[64];
    snprintf(map, sizeof map, "%u %u 1", (unsigned)uid, (unsigned)uid);
    int rc = ad_write_file("/proc/self/uid_map", map);
    if (rc == 0)
        rc = ad_write_file("/proc/self/setgroups", "deny");
    snprintf(map, sizeof map, "%u %u 1", (unsigned)gid, (unsigned)gid);
    if (rc == 0)
        rc = ad_write_file("/proc/self/gid_map", map);
    return rc;
}

static int ad_isolate_net(char *err, size_t cap)
{
    if (unshare(CLONE_NEWNET) != 0) {
        /* not root: a user namespace of our own first, in which we may make a network one; the
         * rank keeps its uid and gid (mapped to themselves) */
        uid_t uid = getuid();
        gid_t gid = getgid();
        if (unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) {
            snprintf(err, cap,
                     "--isolate net: cannot make a network namespace: %s (needs root, or "
                     "unprivileged user namespaces: sysctl kernel.unprivileged_userns_clone=1)",
                     strerror(errno));
            return -errno;
        }
        int rc = ad_isolate_idmap(uid, gid);
        if (rc != 0) {
            snprintf(err, cap, "--isolate net: cannot map the user namespace's ids: %s",
                     strerror(-rc));
            return rc;
        }
    }
    /* bring up loopback, the only interface of the new namespace */
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
    if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) != 0 ||
        (ifr.ifr_flags |= IFF_UP, ioctl(s, SIOCSIFFLAGS, &ifr) != 0)) {
        snprintf(err, cap, "--isolate net: cannot bring up loopback: %s", strerror(errno));
        if (s >= 0)
            close(s);
        return -EIO;
    }
    close(s);
    return 0;
}

int ad_isolate_child(int modes, char *err, size_t cap)
{
    int rc = (modes & AD_ISOLATE_NET) ? ad_isolate_net(err, cap) : 0;
    if (rc == 0 && (modes & AD_ISOLATE_SHM))
        rc = ad_isolate_shm(err, cap);
    if (rc == 0 && (modes & AD_ISOLATE_SECCOMP)) /* last: the above needs an AF_INET socket */
        rc = ad_seccomp_install(err, cap);
    return rc;
}

/* --isolate shm, in the child before exec: a mount namespace with an empty read-only
 * /dev/shm (its segments come from the daemon, ad_seg.c); 0, or -errno with err */
int ad_isolate_shm(char *err, size_t cap)
{
    /* the node key (util/node_key.h) includes /dev/shm's device, which is about to be each
     * rank's own: fix it now, so that the ranks of this host still agree on their node */
    if (getenv("DCFA_NODE_KEY") == NULL || *getenv("DCFA_NODE_KEY") == '\0') {
        char key[UTIL_NODE_KEY_CAP];
        util_node_key_make(key, sizeof key, NULL);
        setenv("DCFA_NODE_KEY", key, 1);
    }
    if (unshare(CLONE_NEWNS) != 0) {
        uid_t uid = getuid();
        gid_t gid = getgid();
        if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) {
            snprintf(err, cap,
                     "--isolate shm: cannot make a mount namespace: %s (needs root, or "
                     "unprivileged user namespaces: sysctl kernel.unprivileged_userns_clone=1)",
                     strerror(errno));
            return -errno;
        }
        int rc = ad_isolate_idmap(uid, gid);
        if (rc != 0) {
            snprintf(err, cap, "--isolate shm: cannot map the user namespace's ids: %s",
                     strerror(-rc));
            return rc;
        }
    }
    /* nothing mounted here reaches the host's mounts; then an empty read-only tmpfs over
     * /dev/shm: shm_open can neither find the host's segments nor make one */
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
        mount("dcfa-noshm", "/dev/shm", "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
              "size=4k,mode=0555") != 0) {
        snprintf(err, cap, "--isolate shm: cannot mount an empty /dev/shm: %s", strerror(errno));
        return -errno;
    }
    return 0;
}
