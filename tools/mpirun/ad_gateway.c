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
 * connection closed are dropped and their tokens given back.
 *
 * A connection that has not said HELLO (or PROXY) with the job's key within
 * DCFA_GW_HELLO_TIMEOUT seconds of its CHALLENGE is closed: nobody can hold the gateway's
 * sockets by connecting and saying nothing. */
#include "fabric/gw/gw_wire.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ad_gateway.h"
#include "ad_reactor.h"

struct gw_conn {
    int fd;         /* -1: closed */
    uint64_t nonce; /* of its CHALLENGE */
    uint64_t gid;   /* after HELLO */
    int hello;
    double deadline;      /* ad_now() by which it must say HELLO or PROXY; 0 once it has */
    unsigned held;        /* its DATA frames in the gateway */
    unsigned owed;        /* tokens to give back */
    gw_reader rd;         /* its reading (gw_wire.h): read-ahead, the frame being read */
    gw_buf *oq, *oq_tail; /* to write to it */
    /* a spliced pair (PROXY): raw bytes between this connection and peer's */
    int splice;          /* 0 frames; 1 connecting (the gateway's own end); 2 spliced */
    int peer;            /* the other end's index, -1 none */
    unsigned char *sbuf; /* bytes read from it, to write to peer */
    size_t slen, soff;   /* bytes in sbuf, of which written */
    int eof;             /* it closed its side: close both once sbuf is written */
    int got; /* frames: it gave bytes since the gateway last slept (acknowledged then) */
};

enum { GW_SPLICE_BUF = 65536 };

static struct {
    struct gw_conn *c;
    int n, cap;
    gw_buf *parked; /* for processes not known yet */
    unsigned tokens;
    uint64_t key[2];      /* the job's gateway key (DCFA_GATEWAY_KEY) */
    double hello_timeout; /* s (DCFA_GW_HELLO_TIMEOUT) */
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

static int gw_add_conn(int fd);
static void gw_close(struct gw_conn *c);
static void gw_splice_close(int i);

/* PROXY on connection i (MAC checked): connect to the target, answered when connected */
static int gw_proxy_start(int i, gw_frame h)
{
    uint32_t addr = (uint32_t)(h.src >> 16);
    uint16_t port = (uint16_t)h.src;
    const util_net *nets;
    int nn = util_net_list(&nets), on = 0;
    for (int k = 0; k < nn; k++)
        on |= (nets[k].addr >> 24) != 127 && util_net_on(&nets[k], addr) && addr != nets[k].addr;
    if (!on || port == 0) {
        fprintf(stderr,
                "gateway: a PROXY to %u.%u.%u.%u:%u, not a host of this gateway's networks: "
                "refused\n",
                addr >> 24, (addr >> 16) & 255, (addr >> 8) & 255, addr & 255, port);
        return -1;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {
        .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(addr)};
    if (fd < 0 || (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0 && errno != EINPROGRESS)) {
        gw_ctl(&gw.c[i], GW_PROXY, (uint32_t)(errno ? errno : EIO));
        if (fd >= 0)
            close(fd);
        gw.c[i].splice = 2; /* no peer: closes once the answer is written */
        gw.c[i].eof = 1;
        return 0;
    }
    int j = gw_add_conn(fd);
    if (j < 0) {
        close(fd);
        return -1;
    }
    gw.c[i].splice = 2;
    gw.c[i].peer = j;
    gw.c[j].splice = 1;
    gw.c[j].peer = i;
    return 0;
}

/* the target's connect finished (connection j, the gateway's end): answer the asker */
static void gw_proxy_connected(int j)
{
    struct gw_conn *c = &gw.c[j];
    int err = 0;
    socklen_t el = sizeof err;
    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0)
        err = errno;
    int i = c->peer;
    gw_ctl(&gw.c[i], GW_PROXY, (uint32_t)err);
    if (err) {
        gw.c[i].eof = 1; /* closes once the answer is written */
        gw.c[i].peer = -1;
        gw_close(c);
        return;
    }
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    util_tcp_data(c->fd, util_net_timeout_env());
    c->splice = 2;
}

/* raw bytes from connection i into its buffer; -1: it closed or broke */
static int gw_splice_read(int i)
{
    struct gw_conn *c = &gw.c[i];
    if (!c->sbuf && !(c->sbuf = malloc(GW_SPLICE_BUF)))
        return -1;
    if (c->slen)
        return 0;
    ssize_t n = recv(c->fd, c->sbuf, GW_SPLICE_BUF, MSG_DONTWAIT);
    if (n > 0) {
        c->slen = (size_t)n;
        c->soff = 0;
        return 0;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return 0;
    return -1;
}

/* write connection i's buffered bytes to its peer; -1: the peer broke */
static int gw_splice_write(int i)
{
    struct gw_conn *c = &gw.c[i];
    if (c->peer < 0 || gw.c[c->peer].fd < 0 || gw.c[c->peer].splice != 2 || gw.c[c->peer].oq)
        return 0;
    while (c->soff < c->slen) {
        ssize_t n = send(gw.c[c->peer].fd, c->sbuf + c->soff, c->slen - c->soff,
                         MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
        c->soff += (size_t)n;
    }
    c->slen = c->soff = 0;
    return 0;
}

/* both ends of a spliced pair go */
static void gw_splice_close(int i)
{
    int j = gw.c[i].peer;
    gw_close(&gw.c[i]);
    if (j >= 0 && gw.c[j].peer == i)
        gw_close(&gw.c[j]);
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
    gw_reader_free(&c->rd);
    while (c->oq) {
        gw_buf *m = c->oq;
        c->oq = m->next;
        gw_msg_done(m);
    }
    c->oq_tail = NULL;
    free(c->sbuf);
    c->sbuf = NULL;
    c->slen = c->soff = 0;
}

/* a whole frame from connection i */
static int gw_frame_in(int i, gw_buf *m)
{
    struct gw_conn *c = &gw.c[i];
    gw_frame h = m->h;
    if (h.kind == GW_PROXY && !c->hello && !c->splice) {
        free(m);
        if (h.dst != gw_proxy_mac(gw.key, h.src, c->nonce)) {
            fprintf(stderr, "gateway: a PROXY without the job's key: closing its connection\n");
            return -1;
        }
        c->deadline = 0;
        return gw_proxy_start(i, h);
    }
    if (h.kind == GW_HELLO && !c->hello) {
        if (h.dst != gw_hello_mac(gw.key, h.src, c->nonce)) {
            fprintf(stderr,
                    "gateway: a HELLO without the job's key (it says it is %llx): closing its "
                    "connection\n",
                    (unsigned long long)h.src);
            free(m);
            return -1;
        }
        if (gw_by_gid(h.src)) {
            fprintf(stderr, "gateway: two processes say they are %llx\n",
                    (unsigned long long)h.src);
            free(m);
            return -1;
        }
        c->hello = 1;
        c->deadline = 0;
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
    if (!c->hello) {
        fprintf(stderr,
                "gateway: a frame (kind %u) on a connection that has not said HELLO: closing it\n",
                h.kind);
        free(m);
        return -1;
    }
    if (h.kind != GW_DATA || h.src != c->gid) {
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

/* the frames whole at the start of connection i's read-ahead; a frame begun there whose
 * payload goes on is left in c->rd.in. -1: close the connection */
static int gw_parse(int i)
{
    size_t off = 0;
    for (;;) {
        struct gw_conn *c = &gw.c[i]; /* (gw_frame_in may move the array: a PROXY) */
        if (c->rd.ilen - off < sizeof(gw_frame))
            break;
        gw_frame h;
        memcpy(&h, c->rd.ib + off, sizeof h);
        if (h.version != GW_WIRE_VERSION || h.len > GW_FRAME_MAX) {
            fprintf(stderr, "gateway: a bad frame header (version %u, %u bytes)\n", h.version,
                    h.len);
            return -1;
        }
        gw_buf *m = gw_msg_new(i, h.len);
        if (!m)
            return -1;
        m->h = h;
        size_t have = c->rd.ilen - off - sizeof h;
        if (have > h.len)
            have = h.len;
        memcpy(m->pkt, c->rd.ib + off + sizeof h, have);
        off += sizeof h + have;
        if (have < h.len) { /* the rest comes straight into it */
            c->rd.in = m;
            c->rd.ingot = have;
            break;
        }
        if (gw_frame_in(i, m) != 0)
            return -1;
        c = &gw.c[i];
        if (c->splice) {
            /* a PROXY: raw bytes from here on (none should follow before its answer, but
             * what did goes to the target first) */
            size_t rest = c->rd.ilen - off;
            if (rest) {
                if (!c->sbuf && !(c->sbuf = malloc(GW_SPLICE_BUF)))
                    return -1;
                memcpy(c->sbuf, c->rd.ib + off, rest);
                c->slen = rest;
                c->soff = 0;
            }
            c->rd.ilen = 0;
            return 0;
        }
    }
    gw_reader_take(&gw.c[i].rd, off);
    return 0;
}

/* read what connection i has; -1: closed or broken */
static int gw_read(int i)
{
    for (;;) {
        gw_buf *whole;
        int drained;
        ssize_t n = gw_reader_recv(gw.c[i].fd, &gw.c[i].rd, &whole, &drained);
        if (n <= 0)
            return n == -EAGAIN ? 0 : -1;
        gw.c[i].got = 1;
        if (whole) {
            if (gw_frame_in(i, whole) != 0)
                return -1;
            if (gw.c[i].splice) /* (a PROXY is a header only: never read this way) */
                return 0;
        }
        if (gw_parse(i) != 0)
            return -1;
        if (gw.c[i].splice || drained)
            return 0; /* the socket had no more: poll says when it has */
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

/* a new connection's slot (the array may move): its index, or -1 */
static int gw_add_conn(int fd)
{
    if (gw.n == gw.cap) {
        int cap = gw.cap ? 2 * gw.cap : 16;
        struct gw_conn *nc = realloc(gw.c, (size_t)cap * sizeof *nc);
        if (!nc)
            return -1;
        gw.c = nc;
        gw.cap = cap;
    }
    gw.c[gw.n] = (struct gw_conn){.fd = fd, .peer = -1};
    return gw.n++;
}

static void gw_accept(int lfd)
{
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        util_tcp_data(fd, util_net_timeout_env());
        int i = gw_add_conn(fd);
        if (i < 0) {
            close(fd);
            return;
        }
        struct gw_conn *c = &gw.c[i];
        c->deadline = ad_now() + gw.hello_timeout;
        /* first a challenge: its HELLO must carry a MAC of it under the job's key */
        gw_buf *m = gw_msg_new(-1, 0);
        if (!m || getrandom(&c->nonce, sizeof c->nonce, 0) != (ssize_t)sizeof c->nonce) {
            free(m);
            gw_close(c);
            continue;
        }
        m->h = (gw_frame){.kind = GW_CHALLENGE, .version = GW_WIRE_VERSION, .dst = c->nonce};
        gw_enqueue(c, m);
    }
}

/* what to wait for on connection i */
static short gw_events(int i)
{
    const struct gw_conn *c = &gw.c[i];
    if (c->splice == 1)
        return POLLOUT;
    if (c->splice != 2)
        return (short)(POLLIN | (c->oq ? POLLOUT : 0));
    const struct gw_conn *p = c->peer >= 0 ? &gw.c[c->peer] : NULL;
    int out = c->oq || (p && p->slen > p->soff);
    return (short)((!c->slen && !c->eof ? POLLIN : 0) | (out ? POLLOUT : 0));
}

/* a spliced connection's bytes to its peer, and the pair's end once one side closed and
 * everything it sent went on */
static void gw_splice_pass(int i)
{
    struct gw_conn *c = &gw.c[i];
    if (c->fd < 0 || c->splice != 2)
        return;
    if (c->slen && gw_splice_write(i) != 0) {
        gw_splice_close(i);
        return;
    }
    if (c->eof && !c->slen && !c->oq)
        gw_splice_close(i);
}

/* ms until the first connection still owing its HELLO runs out of time; -1: none does */
static int gw_hello_wait(void)
{
    double first = 0;
    for (int i = 0; i < gw.n; i++)
        if (gw.c[i].fd >= 0 && gw.c[i].deadline > 0 && (first == 0 || gw.c[i].deadline < first))
            first = gw.c[i].deadline;
    if (first == 0)
        return -1;
    double ms = (first - ad_now()) * 1000.0 + 1.0;
    return ms <= 0 ? 0 : ms > 60000 ? 60000 : (int)ms;
}

static void gw_hello_expire(void)
{
    double now = ad_now();
    for (int i = 0; i < gw.n; i++) {
        struct gw_conn *c = &gw.c[i];
        if (c->fd >= 0 && c->deadline > 0 && now >= c->deadline) {
            fprintf(stderr,
                    "gateway: a connection said no HELLO within %.0f s of its CHALLENGE: closing "
                    "it\n",
                    gw.hello_timeout);
            gw_close(c);
        }
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
        for (int i = 0; i < gw.n; i++) {
            pfd[i + 1] = (struct pollfd){.fd = gw.c[i].fd, .events = gw_events(i)};
            if (gw.c[i].got && gw.c[i].fd >= 0) {
                /* acknowledged before the gateway may sleep: the sender may wait for that ACK
                 * to send the rest of a frame, the frame's forwarding for the rest, and the
                 * sender's next frames for the token the forwarding gives back */
                util_tcp_ack_now(gw.c[i].fd);
                gw.c[i].got = 0;
            }
        }
        int n = gw.n;
        if (poll(pfd, (nfds_t)n + 1, gw_hello_wait()) < 0 && errno != EINTR)
            return 1;
        gw_hello_expire();
        for (int i = 0; i < n; i++) {
            struct gw_conn *c = &gw.c[i];
            short re = pfd[i + 1].revents;
            if (c->fd < 0 || !re)
                continue;
            if (c->splice == 1) {
                gw_proxy_connected(i);
            } else if (c->splice == 2) {
                if ((re & (POLLIN | POLLHUP | POLLERR)) && !c->slen && !c->eof &&
                    gw_splice_read(i) != 0)
                    c->eof = 1;
            } else if ((re & (POLLIN | POLLHUP | POLLERR)) && gw_read(i) != 0) {
                gw_close(&gw.c[i]); /* (gw_read may have moved the array: a PROXY) */
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
                    gw_buf *t = c->oq_tail;
                    if (t && t->from < 0 && t->h.kind == GW_TOKENS && t->off == 0)
                        t->h.arg += c->owed; /* one TOKENS frame not yet begun: it says all */
                    else
                        gw_ctl(c, GW_TOKENS, c->owed);
                    c->owed = 0;
                }
                if (c->oq && gw_write(c) != 0)
                    gw_close(c);
            }
            for (int i = 0; i < n; i++)
                gw_splice_pass(i);
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
    if (gw_key_parse(getenv("DCFA_GATEWAY_KEY"), gw.key) != 0) {
        snprintf(err, errlen,
                 "mpirun: host '%s': the gateway daemon has no job key (DCFA_GATEWAY_KEY, set by "
                 "mpirun --gateways, is not 32 hex digits)",
                 host);
        close(lfd);
        return -EINVAL;
    }
    const char *t = getenv("DCFA_GW_TOKENS");
    long tokens = t && *t ? strtol(t, NULL, 10) : 16;
    if (tokens < 1 || tokens > 4096) {
        snprintf(err, errlen, "mpirun: DCFA_GW_TOKENS=%s: not a number of tokens from 1 to 4096",
                 t);
        close(lfd);
        return -EINVAL;
    }
    const char *ht = getenv("DCFA_GW_HELLO_TIMEOUT");
    char *end = NULL;
    double hello = ht && *ht ? strtod(ht, &end) : 10.0;
    if ((ht && *ht && *end) || !(hello >= 0.1 && hello <= 3600)) {
        snprintf(err, errlen,
                 "mpirun: DCFA_GW_HELLO_TIMEOUT=%s: not a number of seconds from 0.1 to 3600", ht);
        close(lfd);
        return -EINVAL;
    }
    const char *nv = getenv("DCFA_GW_NICE");
    long nice = nv && *nv ? strtol(nv, &end, 10) : -10;
    if ((nv && *nv && *end) || nice < -20 || nice > 19) {
        snprintf(err, errlen, "mpirun: DCFA_GW_NICE=%s: not a nice value from -20 to 19", nv);
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
        gw.hello_timeout = hello;
        /* frames come and go by the thousand a second: memory a frame leaves stays with the
         * allocator for the next one (no brk and fresh pages per frame); what it holds at
         * most is still the tokens' bound */
        mallopt(M_TRIM_THRESHOLD, 64 << 20);
        mallopt(M_MMAP_THRESHOLD, 8 << 20);
        /* a frame waits while the gateway is not on a core: ahead of processes that poll,
         * where allowed (root, CAP_SYS_NICE); else its daemon's priority */
        setpriority(PRIO_PROCESS, 0, (int)nice);
        _exit(gw_loop(3));
    }
    close(lfd);
    *pid = p;
    snprintf(info, infolen, "%u:%s", (unsigned)ntohs(sa.sin_port), list);
    return 0;
}

/* "mpirun --gateway-daemon": a gateway daemon that no mpirun daemon tree starts (a job
 * launched by srun, docs/gateway.md "Without mpirun"). The job's key comes from
 * DCFA_GATEWAY_KEY; the one line on stdout is this gateway's entry of DCFA_GATEWAYS
 * ("host:port:networks"), for the ranks' environment. It runs until SIGTERM, SIGINT or
 * SIGHUP (then the gateway ends too) or until the gateway ends by itself. */
int ad_gateway_main(int argc, char **argv)
{
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            printf("usage: DCFA_GATEWAY_KEY=<32 hex digits> mpirun --gateway-daemon\n"
                   "  runs a gateway daemon on this host until SIGTERM; prints its entry of\n"
                   "  DCFA_GATEWAYS (host:port:networks); the ranks need the same key\n"
                   "  (docs/gateway.md, \"Without mpirun\")\n");
            return 0;
        }
        fprintf(stderr, "mpirun --gateway-daemon: bad argument '%s' (see --help)\n", argv[i]);
        return 2;
    }
    const char *key = getenv("DCFA_GATEWAY_KEY");
    uint64_t k[2];
    if (gw_key_parse(key, k) != 0) {
        fprintf(stderr,
                "mpirun --gateway-daemon: DCFA_GATEWAY_KEY is %s: give the gateway daemons and "
                "the ranks the same 32 hex digits, e.g. export DCFA_GATEWAY_KEY=$(od -An -N16 "
                "-tx1 /dev/urandom | tr -d ' \\n')\n",
                key && *key ? "not 32 hex digits" : "not set");
        return 2;
    }
    char host[256];
    if (gethostname(host, sizeof host) != 0)
        snprintf(host, sizeof host, "localhost");
    host[sizeof host - 1] = 0;
    /* the signals that end it, taken by sigwait (blocked before the gateway is forked: it
     * unblocks them for itself) */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGCHLD);
    sigprocmask(SIG_BLOCK, &set, NULL);
    char info[440], err[600];
    pid_t pid;
    if (ad_gateway_start(host, info, sizeof info, &pid, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    printf("%s:%s\n", host, info);
    fflush(stdout);
    int status = 0;
    for (;;) {
        int sig = 0;
        if (sigwait(&set, &sig) != 0)
            continue;
        if (sig == SIGCHLD) {
            pid_t w = waitpid(pid, &status, WNOHANG);
            if (w != pid)
                continue;
            fprintf(stderr,
                    "mpirun --gateway-daemon: the gateway daemon on host %s ended (%s %d)\n", host,
                    WIFSIGNALED(status) ? "signal" : "status",
                    WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
            return 1;
        }
        kill(pid, SIGTERM);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
        return 0;
    }
}
