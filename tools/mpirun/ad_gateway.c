/* The gateway daemon of a job on a host with two networks (docs/gateway.md).
 *
 * The assist daemon of a host named by mpirun --gateways starts it before it reports READY
 * (ad_gateway_start): a process of its own, forked, listening on every address of the host.
 * Processes of the job that share a network with it connect to it at MPI_Init (the gw
 * fabric, src/fabric/gw/gw.c), say who they are (HELLO: their gid), and send it DATA frames
 * for processes on the other network; it forwards each frame, unchanged, on the destination's
 * connection. The kernel forwards nothing: the frames cross from one network to the other in
 * this process.
 *
 * Flow control, per hop: a process starts with DCFA_GW_TOKENS tokens (WELCOME) and spends one
 * per DATA frame it sends; the gateway gives it back (TOKENS) once the frame has been written
 * to its destination's connection. So the gateway holds at most that many frames of each
 * process, whatever the number of pairs, and reading a connection never waits for anything:
 * the gateway reads every connection whenever it has bytes. Writing to a destination waits
 * only for that destination to read, which its progress does unconditionally (its frames are
 * bounded by the end-to-end credits of the protocol engine). Frames for a process that has
 * not said HELLO yet wait (they count against their sender's tokens); frames for one whose
 * connection closed are dropped and their tokens given back. */
#include "fabric/gw/gw_wire.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ad_gateway.h"

struct gw_conn {
    int fd;       /* -1: closed */
    uint64_t gid; /* after HELLO */
    int hello;
    unsigned held; /* its DATA frames in the gateway */
    unsigned owed; /* tokens to give back */
    gw_frame hdr;  /* the frame being read */
    size_t hgot;
    gw_buf *in; /* its payload being read */
    size_t ingot;
    gw_buf *oq, *oq_tail; /* to write to it */
};

static struct {
    struct gw_conn *c;
    int n, cap;
    gw_buf *parked; /* for processes not known yet */
    unsigned tokens;
} gw;

static gw_buf *gw_msg_new(int from, size_t len)
{
    gw_buf *m = malloc(sizeof *m + len);
    if (!m)
        return NULL;
    m->next = NULL;
    m->from = from;
    m->total = sizeof(gw_frame) + len;
    m->off = 0;
    return m;
}

static void gw_enqueue(struct gw_conn *c, gw_buf *m)
{
    m->next = NULL;
    if (c->oq_tail)
        c->oq_tail->next = m;
    else
        c->oq = m;
    c->oq_tail = m;
}

static void gw_ctl(struct gw_conn *c, int kind, uint32_t arg)
{
    gw_buf *m = gw_msg_new(-1, 0);
    if (!m)
        return; /* tokens stay owed and go with the next TOKENS */
    gw_frame h = {.kind = (uint8_t)kind, .version = GW_WIRE_VERSION, .arg = arg};
    m->h = h;
    gw_enqueue(c, m);
}

/* a frame leaves the gateway (written, or dropped): its sender's token comes back */
static void gw_msg_done(gw_buf *m)
{
    if (m->from >= 0 && m->from < gw.n) {
        struct gw_conn *s = &gw.c[m->from];
        s->held--;
        if (s->fd >= 0)
            s->owed++;
    }
    free(m);
}

static struct gw_conn *gw_by_gid(uint64_t gid)
{
    for (int i = 0; i < gw.n; i++)
        if (gw.c[i].hello && gw.c[i].gid == gid)
            return &gw.c[i];
    return NULL;
}

static void gw_close(struct gw_conn *c)
{
    if (c->fd < 0)
        return;
    close(c->fd);
    c->fd = -1;
    free(c->in);
    c->in = NULL;
    while (c->oq) {
        gw_buf *m = c->oq;
        c->oq = m->next;
        gw_msg_done(m);
    }
    c->oq_tail = NULL;
}

/* a whole frame from connection i */
static int gw_frame_in(int i, gw_buf *m)
{
    struct gw_conn *c = &gw.c[i];
    gw_frame h = m ? m->h : c->hdr;
    if (h.kind == GW_HELLO && !c->hello) {
        if (gw_by_gid(h.src)) {
            fprintf(stderr, "gateway: two processes say they are %llx\n",
                    (unsigned long long)h.src);
            return -1;
        }
        c->hello = 1;
        c->gid = h.src;
        gw_ctl(c, GW_WELCOME, gw.tokens);
        /* frames that waited for it, in the order they came */
        gw_buf **pp = &gw.parked;
        while (*pp) {
            gw_frame ph = (*pp)->h;
            if (ph.dst == c->gid) {
                gw_buf *p = *pp;
                *pp = p->next;
                gw_enqueue(c, p);
            } else {
                pp = &(*pp)->next;
            }
        }
        free(m);
        return 0;
    }
    if (h.kind != GW_DATA || !c->hello || !m || h.src != c->gid) {
        fprintf(stderr, "gateway: a malformed frame (kind %u) from %llx: closing its connection\n",
                h.kind, (unsigned long long)c->gid);
        free(m);
        return -1;
    }
    if (++c->held > gw.tokens) {
        fprintf(stderr,
                "gateway: %llx sent more frames than its tokens (%u): closing its connection\n",
                (unsigned long long)c->gid, gw.tokens);
        c->held--;
        free(m);
        return -1;
    }
    m->from = i;
    struct gw_conn *d = gw_by_gid(h.dst);
    if (d && d->fd >= 0) {
        gw_enqueue(d, m);
    } else if (d) {
        gw_msg_done(m); /* it left: dropped */
    } else {
        gw_buf **pp = &gw.parked;
        while (*pp)
            pp = &(*pp)->next;
        *pp = m;
    }
    return 0;
}

/* read what connection i has; -1: closed or broken */
static int gw_read(int i)
{
    for (;;) {
        struct gw_conn *c = &gw.c[i];
        ssize_t n;
        if (c->hgot < sizeof c->hdr) {
            n = recv(c->fd, (char *)&c->hdr + c->hgot, sizeof c->hdr - c->hgot, MSG_DONTWAIT);
            if (n > 0) {
                c->hgot += (size_t)n;
                if (c->hgot < sizeof c->hdr)
                    continue;
                if (c->hdr.version != GW_WIRE_VERSION || c->hdr.len > GW_FRAME_MAX) {
                    fprintf(stderr, "gateway: a bad frame header (version %u, %u bytes)\n",
                            c->hdr.version, c->hdr.len);
                    return -1;
                }
                if (c->hdr.len == 0) {
                    c->hgot = 0;
                    gw_buf *m = NULL;
                    if (c->hdr.kind == GW_DATA) { /* an empty payload is still a packet */
                        m = gw_msg_new(i, 0);
                        if (!m)
                            return -1;
                        m->h = c->hdr;
                    }
                    if (gw_frame_in(i, m) != 0)
                        return -1;
                    continue;
                }
                c->in = gw_msg_new(i, c->hdr.len);
                if (!c->in)
                    return -1;
                c->in->h = c->hdr;
                c->ingot = 0;
                continue;
            }
        } else {
            n = recv(c->fd, c->in->pkt + c->ingot, c->hdr.len - c->ingot, MSG_DONTWAIT);
            if (n > 0) {
                c->ingot += (size_t)n;
                if (c->ingot == c->hdr.len) {
                    gw_buf *m = c->in;
                    c->in = NULL;
                    c->hgot = 0;
                    if (gw_frame_in(i, m) != 0)
                        return -1;
                }
                continue;
            }
        }
        if (n == 0)
            return -1;
        if (errno == EINTR)
            continue;
        return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
    }
}

static void gw_written(gw_buf *m, void *arg)
{
    (void)arg;
    gw_msg_done(m);
}

/* write what waits for connection c; -1: broken */
static int gw_write(struct gw_conn *c)
{
    return gw_queue_write(c->fd, &c->oq, &c->oq_tail, gw_written, NULL) == 0 ? 0 : -1;
}

static void gw_accept(int lfd)
{
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (gw.n == gw.cap) {
            int cap = gw.cap ? 2 * gw.cap : 16;
            struct gw_conn *nc = realloc(gw.c, (size_t)cap * sizeof *nc);
            if (!nc) {
                close(fd);
                return;
            }
            gw.c = nc;
            gw.cap = cap;
        }
        gw.c[gw.n++] = (struct gw_conn){.fd = fd};
    }
}

static int gw_loop(int lfd)
{
    struct pollfd *pfd = NULL;
    int pcap = 0;
    for (;;) {
        if (pcap < gw.n + 1) {
            pcap = 2 * (gw.n + 1);
            struct pollfd *np = realloc(pfd, (size_t)pcap * sizeof *np);
            if (!np)
                return 1;
            pfd = np;
        }
        pfd[0] = (struct pollfd){.fd = lfd, .events = POLLIN};
        for (int i = 0; i < gw.n; i++)
            pfd[i + 1] = (struct pollfd){.fd = gw.c[i].fd,
                                         .events = (short)(POLLIN | (gw.c[i].oq ? POLLOUT : 0))};
        int n = gw.n;
        if (poll(pfd, (nfds_t)n + 1, -1) < 0 && errno != EINTR)
            return 1;
        for (int i = 0; i < n; i++) {
            if (gw.c[i].fd < 0)
                continue;
            if ((pfd[i + 1].revents & (POLLIN | POLLHUP | POLLERR)) && gw_read(i) != 0) {
                gw_close(&gw.c[i]);
                continue;
            }
        }
        /* until no token is owed: a frame written to a connection after its sender's turn
         * in this pass owes that sender a token, which must go now (poll would not wake up
         * for it: both processes may be waiting for nothing else) */
        for (int more = 1; more;) {
            more = 0;
            for (int i = 0; i < n; i++) {
                struct gw_conn *c = &gw.c[i];
                if (c->fd < 0)
                    continue;
                if (c->owed && c->hello) {
                    gw_ctl(c, GW_TOKENS, c->owed);
                    c->owed = 0;
                }
                if (c->oq && gw_write(c) != 0)
                    gw_close(c);
            }
            for (int i = 0; i < n; i++)
                more |= gw.c[i].fd >= 0 && gw.c[i].hello && gw.c[i].owed;
        }
        if (pfd[0].revents & POLLIN)
            gw_accept(lfd);
    }
}

int ad_gateway_start(const char *host, char *info, size_t infolen, pid_t *pid, char *err,
                     size_t errlen)
{
    const util_net *nets;
    int nn = util_net_list(&nets), k = 0;
    util_net mine[UTIL_NET_MAX];
    for (int i = 0; i < nn; i++)
        if ((nets[i].addr >> 24) != 127)
            mine[k++] = nets[i];
    char list[400];
    if (util_net_format(mine, k, list, sizeof list) != UTIL_OK)
        list[0] = 0;
    if (k < 2) {
        snprintf(err, errlen,
                 "mpirun: gateway host '%s' has %s network (%s): a gateway needs an interface on "
                 "each of two networks",
                 host, k ? "one" : "no", k ? list : "no IPv4 address but loopback");
        return -EINVAL;
    }
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    socklen_t sl = sizeof sa;
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(lfd, 256) != 0 ||
        getsockname(lfd, (struct sockaddr *)&sa, &sl) != 0) {
        snprintf(err, errlen, "mpirun: host '%s': the gateway daemon cannot listen: %s", host,
                 strerror(errno));
        if (lfd >= 0)
            close(lfd);
        return -errno;
    }
    const char *t = getenv("DCFA_GW_TOKENS");
    long tokens = t && *t ? strtol(t, NULL, 10) : 32;
    if (tokens < 1 || tokens > 4096) {
        snprintf(err, errlen, "mpirun: DCFA_GW_TOKENS=%s: not a number of tokens from 1 to 4096",
                 t);
        close(lfd);
        return -EINVAL;
    }
    pid_t parent = getpid();
    pid_t p = fork();
    if (p < 0) {
        snprintf(err, errlen, "mpirun: host '%s': cannot start the gateway daemon: %s", host,
                 strerror(errno));
        close(lfd);
        return -errno;
    }
    if (p == 0) {
        /* ends with its daemon, whatever way that ends */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent)
            _exit(0);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        signal(SIGPIPE, SIG_IGN);
        if (dup2(lfd, 3) != 3)
            _exit(1);
        for (int fd = 4; fd < 1024; fd++)
            close(fd);
        int devnull = open("/dev/null", O_RDWR);
        if (devnull >= 0) {
            dup2(devnull, 0);
            dup2(devnull, 1);
            if (devnull > 3)
                close(devnull);
        }
        gw.tokens = (unsigned)tokens;
        _exit(gw_loop(3));
    }
    close(lfd);
    *pid = p;
    snprintf(info, infolen, "%u:%s", (unsigned)ntohs(sa.sin_port), list);
    return 0;
}
