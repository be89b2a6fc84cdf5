/* Shared-memory segments from the assist daemon (mpirun --isolate shm; docs/launcher.md
 * "--isolate shm").
 *
 * A rank confined with --isolate shm has an empty, read-only /dev/shm of its own: shm_open
 * cannot create anything there. util_shm_create, util_shm_attach and util_shm_remove then ask
 * the daemon instead, on the endpoint channel (DCFA_SOCK_EP_FD), by the name the segment
 * would have had: the daemon keeps one sealed memfd per name for the job and hands it over
 * (SCM_RIGHTS). Requests are synchronous: the caller waits for the answer to its own request
 * (at most UTIL_SEG_WAIT_S seconds: a daemon that never answers is an error naming the
 * request, not a hang). What else arrives on the channel meanwhile (the sock fabric's sockets)
 * is kept here in arrival order, and the sock fabric takes it with util_epch_take before it
 * reads the channel itself. */
#include "util/seg_wire.h"
#include "util/util.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define UTIL_SEG_WAIT_S 60
#define UTIL_EPCH_KEEP  64  /* channel messages kept while waiting */
#define UTIL_EPCH_BYTES 256 /* the largest of them (a sock_ep_msg is 232) */

typedef struct {
    char buf[UTIL_EPCH_BYTES];
    ssize_t len;
    int fd;
} util_epch_msg;

static struct {
    int mode; /* -1 not looked yet, 0 off, 1 on */
    int fd;   /* the endpoint channel */
    int rank;
    uint64_t token;
    char job[SEG_JOB_MAX];
    uint32_t seq;
    util_epch_msg kept[UTIL_EPCH_KEEP];
    int nkept, first;
} seg = {.mode = -1, .fd = -1};

static const char *const seg_type_name[] = {"?", "create", "open", "remove"};

int util_shm_daemon(void)
{
    if (seg.mode >= 0)
        return seg.mode;
    seg.mode = 0;
    const char *iso = getenv("DCFA_ISOLATE");
    for (const char *s = iso; s && *s;) {
        size_t n = strcspn(s, ",");
        if (n == 3 && strncmp(s, "shm", 3) == 0)
            seg.mode = 1;
        s += n + (s[n] == ',');
    }
    if (!seg.mode)
        return 0;
    const char *fd = getenv("DCFA_SOCK_EP_FD"), *tok = getenv("DCFA_SOCK_TOKEN");
    const char *rank = getenv("PMI_RANK"), *job = getenv("DCFA_JOBID");
    seg.fd = fd && *fd ? atoi(fd) : -1;
    seg.token = tok ? strtoull(tok, NULL, 16) : 0;
    seg.rank = rank ? atoi(rank) : -1;
    snprintf(seg.job, sizeof seg.job, "%s", job ? job : "");
    if (seg.fd < 0 || !tok || strlen(tok) != 16 || !job)
        util_log("--isolate shm: no assist daemon to ask for shared-memory segments "
                 "(DCFA_SOCK_EP_FD, DCFA_SOCK_TOKEN or DCFA_JOBID unset: not started by our "
                 "mpirun?)");
    return 1;
}

static void seg_keep(const char *buf, ssize_t len, int fd)
{
    if (seg.nkept == UTIL_EPCH_KEEP)
        util_die("--isolate shm: more than %d endpoint messages arrived while waiting for the "
                 "assist daemon's answer",
                 UTIL_EPCH_KEEP);
    util_epch_msg *m = &seg.kept[(seg.first + seg.nkept++) % UTIL_EPCH_KEEP];
    memcpy(m->buf, buf, (size_t)len);
    m->len = len;
    m->fd = fd;
}

int util_epch_pending(void) { return seg.nkept; }

ssize_t util_epch_take(void *buf, size_t cap, int *fd)
{
    if (seg.nkept == 0)
        return 0;
    util_epch_msg *m = &seg.kept[seg.first];
    seg.first = (seg.first + 1) % UTIL_EPCH_KEEP;
    seg.nkept--;
    size_t n = (size_t)m->len < cap ? (size_t)m->len : cap;
    memcpy(buf, m->buf, n);
    *fd = m->fd;
    return (ssize_t)n;
}

/* one request and its answer: UTIL_OK with *fd (GRANT; -1 for DONE), or an error (logged
 * unless it is a REMOVE's ENOENT) */
static int seg_call_once(int type, const char *name, size_t len, const char *what, int *fd);

/* util_die's cleanups (a segment name to remove) may run inside a request: not again */
static int seg_call(int type, const char *name, size_t len, const char *what, int *fd)
{
    static int busy;
    *fd = -1;
    if (busy)
        return UTIL_EAGAIN;
    busy = 1;
    int rc = seg_call_once(type, name, len, what, fd);
    busy = 0;
    return rc;
}

static int seg_call_once(int type, const char *name, size_t len, const char *what, int *fd)
{
    if (seg.fd < 0 || seg.job[0] == 0) {
        util_log("%s: cannot %s shared-memory segment %s: no assist daemon to ask (--isolate shm)",
                 what, seg_type_name[type], name);
        return UTIL_EIO;
    }
    seg_msg q = {.magic = SEG_MAGIC,
                 .version = SEG_VERSION,
                 .type = (uint8_t)type,
                 .seq = ++seg.seq,
                 .rank = seg.rank,
                 .token = seg.token,
                 .size = len};
    snprintf(q.job, sizeof q.job, "%s", seg.job);
    snprintf(q.name, sizeof q.name, "%s", name);
    ssize_t n;
    while ((n = send(seg.fd, &q, sizeof q, MSG_NOSIGNAL)) < 0 && errno == EINTR)
        ;
    if (n != (ssize_t)sizeof q) {
        util_log("%s: cannot ask the assist daemon to %s segment %s: %m", what, seg_type_name[type],
                 name);
        return UTIL_ECONN;
    }
    uint64_t deadline = util_now_ns() + (uint64_t)UTIL_SEG_WAIT_S * 1000000000u;
    for (;;) {
        _Alignas(8) char buf[512];
        char cbuf[CMSG_SPACE(sizeof(int))];
        struct iovec iov = {.iov_base = buf, .iov_len = sizeof buf};
        struct msghdr mh = {
            .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
        n = recvmsg(seg.fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
            uint64_t now = util_now_ns();
            if (now >= deadline) {
                util_log("%s: the assist daemon did not answer request %u (%s segment %s, %zu "
                         "bytes) within %d s",
                         what, q.seq, seg_type_name[type], name, len, UTIL_SEG_WAIT_S);
                return UTIL_EIO;
            }
            struct pollfd p = {.fd = seg.fd, .events = POLLIN};
            (void)poll(&p, 1, (int)((deadline - now) / 1000000u) + 1);
            continue;
        }
        if (n <= 0) {
            util_log("%s: the assist daemon's endpoint channel %s while it had request %u (%s "
                     "segment %s)",
                     what, n == 0 ? "closed" : "failed", q.seq, seg_type_name[type], name);
            return UTIL_ECONN;
        }
        int got = -1;
        for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
            if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
                cm->cmsg_len == CMSG_LEN(sizeof(int)))
                memcpy(&got, CMSG_DATA(cm), sizeof got);
        seg_msg a;
        if (n != (ssize_t)sizeof a || ((const seg_msg *)buf)->magic != SEG_MAGIC) {
            if (n > UTIL_EPCH_BYTES) /* no message of the sock fabric's: let it complain */
                n = UTIL_EPCH_BYTES;
            seg_keep(buf, n, got); /* the sock fabric's: kept for it */
            continue;
        }
        memcpy(&a, buf, sizeof a);
        a.text[sizeof a.text - 1] = 0;
        if (a.version != SEG_VERSION || a.seq != q.seq || (mh.msg_flags & MSG_CTRUNC)) {
            if (got >= 0)
                close(got);
            util_log("%s: the assist daemon answered request %u (%s segment %s) with a message "
                     "for request %u, version %u",
                     what, q.seq, seg_type_name[type], name, a.seq, a.version);
            return UTIL_EPROTO;
        }
        if (a.type == SEG_REFUSE || (a.type == SEG_DONE && type == SEG_REMOVE)) {
            if (got >= 0)
                close(got);
            int st = a.type == SEG_DONE ? a.status : a.status < 0 ? a.status : UTIL_EPROTO;
            if (a.type == SEG_REFUSE && !(type == SEG_OPEN && a.status == -ENOENT))
                util_log("%s: the assist daemon refused request %u (%s segment %s, %zu bytes): %s",
                         what, q.seq, seg_type_name[type], name, len, a.text);
            return st == -EEXIST ? UTIL_EACCES : st;
        }
        struct stat st;
        if (a.type != SEG_GRANT || type == SEG_REMOVE || got < 0 || fstat(got, &st) != 0 ||
            !S_ISREG(st.st_mode) || (uint64_t)st.st_size != len) {
            util_log("%s: the assist daemon answered request %u (%s segment %s, %zu bytes) with "
                     "type %u and %s",
                     what, q.seq, seg_type_name[type], name, len, a.type,
                     got < 0 ? "no descriptor" : "a descriptor that is no segment of that size");
            if (got >= 0)
                close(got);
            return UTIL_EPROTO;
        }
        *fd = got;
        return UTIL_OK;
    }
}

int util_shm_daemon_map(int create, const char *name, size_t len, const char *what, void **out)
{
    int fd;
    int rc = seg_call(create ? SEG_CREATE : SEG_OPEN, name, len, what, &fd);
    if (rc != UTIL_OK)
        return rc;
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    rc = p == MAP_FAILED ? -errno : UTIL_OK;
    if (rc != UTIL_OK)
        util_log("%s: cannot map shared-memory segment %s (%zu bytes) from the assist daemon: %m",
                 what, name, len);
    close(fd);
    if (rc != UTIL_OK && create)
        (void)util_shm_remove(name);
    if (rc == UTIL_OK)
        *out = p;
    return rc;
}

int util_shm_remove(const char *name)
{
    if (!util_shm_daemon())
        return shm_unlink(name) == 0 ? UTIL_OK : -errno;
    int fd;
    return seg_call(SEG_REMOVE, name, 0, "shared memory", &fd);
}
