/* gw: the fabric of pairs that share no network, through a gateway daemon (docs/gateway.md).
 *
 * mpirun --gateways starts a gateway daemon of the job on each gateway host
 * (tools/mpirun/ad_gateway.c) and gives the ranks their addresses (DCFA_GATEWAYS,
 * "host:port:networks;..."). At open, a process connects to every gateway that shares a
 * network with it (TCP, one connection each), says who it is (HELLO) and gets its tokens
 * (WELCOME). A connection to a peer is then only a choice of gateway: the peer's card lists
 * its networks, the gateways that share a network with both ends are the candidates, and the
 * pair (a, b) of ranks takes candidate (a + b) % n. Each packet of the protocol engine goes
 * as one DATA frame (gw_wire.h: destination and source gids, then the packet unchanged: its
 * header carries context, tag, source rank, sequence and credit) to that gateway, which
 * writes it to the destination's connection. So the protocol engine is the one of every
 * fabric: a queue fabric (FAB_CAP_RX_QUEUE) without one-sided access, whose rendezvous go as
 * CTS and DATA packets through the same path.
 *
 * Flow control: end to end the core's credits (a receiver queues at most the ring blocks of
 * each connection); per hop, tokens: a DATA frame towards a gateway takes one, the gateway
 * returns it once the frame has left for its destination. Without a token tx_block gives
 * NULL and the packet waits in the core's backlog. Receiving never waits: every frame that
 * arrives is queued on its connection at once (bounded by the credits). */
#include "fabric/fabric.h"
#include "fabric/gw/gw_dial.h"
#include "fabric/gw/gw_route.h"
#include "fabric/gw/gw_wire.h"
#include "util/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

enum { GW_MAX = 8, GW_TIMEOUT_MS = 10000 };

typedef struct gw_link {
    char host[64];
    uint32_t addr; /* its address on my network (host order) */
    unsigned port;
    util_net nets[UTIL_NET_MAX];
    int nn;
    int fd;          /* -1: not mine (no network in common) or lost */
    int reading;     /* gw_read is reading it (a frame of another gateway may look at it) */
    int got;         /* it gave bytes since the last idle wait (gw_wait_fds acknowledges) */
    char failed[96]; /* a write or a check found it broken: how; gw_poll ends it (gw_link_lost) */
    uint32_t tokens;
    gw_buf *cur;            /* given by tx_block, not posted yet */
    gw_buf *oq, *oq_tail;   /* posted, not written yet */
    gw_reader rd;           /* its reading (gw_wire.h): read-ahead, the packet being read */
    struct fab_conn *rconn; /* the connection of rd.in */
} gw_link;

struct fab_conn {
    int peer;
    uint64_t gid;
    void *ctx; /* the core's, for its upcalls */
    gw_link *link;
    gw_buf *head, *tail; /* its packets, oldest first */
    int gone;            /* the core dropped it (a disconnect): its queue waits for the next */
    char via[GW_ROUTE_NAME_MAX + 40]; /* "gateway g1" (+ " (route file line 3)") */
};

static struct {
    fab_params p;
    fab_caps caps;
    uint64_t gid;
    uint64_t key[2]; /* the job's gateway key (DCFA_GATEWAY_KEY): HELLO's MAC */
    util_net nets[UTIL_NET_MAX];
    int nn;
    gw_link link[GW_MAX];
    gw_known known[GW_MAX]; /* the same gateways, for the route rule */
    int nlinks;
    char host[GW_ROUTE_NAME_MAX]; /* mine, as in my card */
    gw_rule rules[GW_ROUTES_MAX]; /* DCFA_GATEWAY_ROUTES */
    gw_link *incoming;            /* the gateway of a peer's first frame, while the core connects */
    int nrules;
    struct fab_conn **conns; /* by lpid */
    int nconns;
    gw_buf *free;    /* buffers of packet_max (sent and received packets), for reuse */
    int nfree;       /* how many: at most gw_spare() */
    size_t bytes;    /* allocated in buffers of packet_max */
    size_t rx_bytes; /* received smaller packets' buffers, each of its frame's size */
    int gone_queued; /* dropped connections with packets queued for the next one */
} gw;

/* ---- setting up ---------------------------------------------------------------------- */

/* my networks but loopback */
static int gw_my_nets(util_net *out)
{
    const util_net *all;
    int n = util_net_list(&all), k = 0;
    for (int i = 0; i < n; i++)
        if ((all[i].addr >> 24) != 127)
            out[k++] = all[i];
    return k;
}

/* "host:port:networks" */
static int gw_link_parse(gw_link *l, gw_known *k, const char *s, size_t len)
{
    if (gw_known_parse(s, len, k, &l->port) != UTIL_OK)
        return UTIL_EINVAL;
    memcpy(l->host, k->host, sizeof l->host < sizeof k->host ? sizeof l->host : sizeof k->host);
    l->host[sizeof l->host - 1] = 0;
    memcpy(l->nets, k->nets, sizeof l->nets);
    l->nn = k->nn;
    return UTIL_OK;
}

/* wait for fd to be ready for events, at most the remaining time until deadline */
static int gw_wait(int fd, short events, uint64_t deadline)
{
    for (;;) {
        uint64_t now = util_now_ns();
        if (now >= deadline)
            return UTIL_EAGAIN;
        struct pollfd pf = {.fd = fd, .events = events};
        int rc = poll(&pf, 1, (int)((deadline - now) / 1000000 + 1));
        if (rc > 0)
            return UTIL_OK;
        if (rc < 0 && errno != EINTR)
            return -errno;
    }
}

static int gw_io_all(int fd, void *buf, size_t len, int out, uint64_t deadline)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = out ? send(fd, (char *)buf + done, len - done, MSG_DONTWAIT | MSG_NOSIGNAL)
                        : recv(fd, (char *)buf + done, len - done, MSG_DONTWAIT);
        if (n > 0) {
            done += (size_t)n;
            continue;
        }
        if (n == 0)
            return UTIL_ECONN;
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return -errno;
        int rc = gw_wait(fd, out ? POLLOUT : POLLIN, deadline);
        if (rc != UTIL_OK)
            return rc;
    }
    return UTIL_OK;
}

/* Connect to the gateway daemon at addr:port, hear its CHALLENGE, send the first frame of
 * kind (HELLO: src = my gid; PROXY: src = the target) with its MAC under key, and hear the
 * answer (WELCOME to HELLO, PROXY to PROXY) into *ans: the socket, or a negative code with
 * the step that failed in *step. */
static int gw_greet(uint32_t addr, unsigned port, const uint64_t key[2], int kind, uint64_t src,
                    uint32_t arg, uint64_t deadline, gw_frame *ans, const char **step)
{
    *step = "connect to";
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    struct sockaddr_in sa = {
        .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(addr)};
    int rc = UTIL_OK;
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        rc = errno == EINPROGRESS ? gw_wait(fd, POLLOUT, deadline) : -errno;
        int err = 0;
        socklen_t el = sizeof err;
        if (rc == UTIL_OK && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && err)
            rc = -err;
    }
    gw_frame h;
    if (rc == UTIL_OK) {
        *step = "hear CHALLENGE from";
        rc = gw_io_all(fd, &h, sizeof h, 0, deadline);
        if (rc == UTIL_OK && (h.kind != GW_CHALLENGE || h.version != GW_WIRE_VERSION))
            rc = UTIL_EPROTO;
    }
    if (rc == UTIL_OK) {
        uint64_t mac =
            kind == GW_HELLO ? gw_hello_mac(key, src, h.dst) : gw_proxy_mac(key, src, h.dst);
        h = (gw_frame){
            .kind = (uint8_t)kind, .version = GW_WIRE_VERSION, .src = src, .arg = arg, .dst = mac};
        *step = kind == GW_HELLO ? "send HELLO to" : "send PROXY to";
        rc = gw_io_all(fd, &h, sizeof h, 1, deadline);
    }
    if (rc == UTIL_OK) {
        *step = kind == GW_HELLO ? "hear WELCOME from" : "hear the PROXY answer from";
        rc = gw_io_all(fd, ans, sizeof *ans, 0, deadline);
        int want = kind == GW_HELLO ? GW_WELCOME : GW_PROXY;
        if (rc == UTIL_OK && (ans->kind != want || ans->version != GW_WIRE_VERSION))
            rc = UTIL_EPROTO;
    }
    if (rc != UTIL_OK) {
        close(fd);
        return rc;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    util_tcp_data(fd, util_cfg.net_timeout);
    return fd;
}

/* connect to gateway l at its address on my network, HELLO, WELCOME */
static int gw_link_open(gw_link *l)
{
    uint64_t deadline = util_now_ns() + (uint64_t)GW_TIMEOUT_MS * 1000000;
    const char *step;
    gw_frame h;
    int fd = gw_greet(l->addr, l->port, gw.key, GW_HELLO, gw.gid, (uint32_t)gw.p.packet_max,
                      deadline, &h, &step);
    if (fd >= 0 && !h.arg) {
        close(fd);
        fd = UTIL_EPROTO;
    }
    if (fd < 0) {
        util_log("gw: cannot %s the gateway daemon on host %s at %u.%u.%u.%u:%u: %s", step, l->host,
                 l->addr >> 24, (l->addr >> 16) & 255, (l->addr >> 8) & 255, l->addr & 255, l->port,
                 fd == UTIL_EAGAIN ? "no answer within 10 s" : strerror(-fd));
        return fd;
    }
    l->fd = fd;
    l->tokens = h.arg;
    return UTIL_OK;
}

static int gw_open(const fab_params *p, char *card, size_t cardlen)
{
    memset(&gw, 0, sizeof gw);
    gw.p = *p;
    gw.gid = p->up->gid_of(p->self);
    /* packets as large as the gw eager limit (64 KiB of payload by default): through a gateway
     * a rendezvous costs two hops each way, and every packet a frame the gateway forwards */
    size_t block = p->block_size ? p->block_size : 64;
    if (util_cfg.gw_eager_limit > gw.p.packet_max)
        gw.p.packet_max = (util_cfg.gw_eager_limit + block - 1) / block * block;
    gw.caps = (fab_caps){.provider = "tcp+gateway",
                         .flags = FAB_CAP_RX_QUEUE | FAB_CAP_ROUTE | FAB_CAP_CREDIT_EARLY |
                                  FAB_CAP_WAIT_FD,
                         .priority = 10,
                         .eager_limit = util_cfg.gw_eager_limit,
                         .poll_interval = 1};
    const char *list = util_cfg.gateways;
    if (!list || !*list) {
        util_log("gw: no gateway daemon (DCFA_GATEWAYS is empty: start the job with mpirun "
                 "--gateways)");
        return UTIL_EINVAL;
    }
    if (gw_key_parse(util_cfg.gateway_key, gw.key) != 0) {
        util_log("gw: no gateway key (DCFA_GATEWAY_KEY, set by mpirun --gateways, is not 32 hex "
                 "digits): the gateway daemons would refuse this process");
        return UTIL_EINVAL;
    }
    gw.nn = gw_my_nets(gw.nets);
    if (gethostname(gw.host, sizeof gw.host - 1) != 0 || strpbrk(gw.host, "=; "))
        snprintf(gw.host, sizeof gw.host, "unknown");
    if (util_cfg.gateway_routes && *util_cfg.gateway_routes) {
        char err[200];
        gw.nrules =
            gw_routes_parse(util_cfg.gateway_routes, ';', gw.rules, GW_ROUTES_MAX, err, sizeof err);
        if (gw.nrules < 0) {
            util_log("gw: DCFA_GATEWAY_ROUTES: rule %s", err);
            return UTIL_EINVAL;
        }
    }
    for (const char *s = list; *s && gw.nlinks < GW_MAX;) {
        size_t k = strcspn(s, ";");
        gw_link *l = &gw.link[gw.nlinks];
        l->fd = -1;
        if (gw_link_parse(l, &gw.known[gw.nlinks], s, k) != UTIL_OK) {
            util_log("gw: DCFA_GATEWAYS: bad entry '%.*s'", (int)k, s);
            goto fail;
        }
        gw.nlinks++;
        /* its address on a network of mine: the gateways of the other side are not mine */
        for (int i = 0; i < l->nn && !l->addr; i++)
            for (int j = 0; j < gw.nn; j++)
                if (l->nets[i].prefix == gw.nets[j].prefix &&
                    util_net_on(&gw.nets[j], l->nets[i].addr))
                    l->addr = l->nets[i].addr;
        if (l->addr && gw_link_open(l) != UTIL_OK)
            goto fail;
        gw.known[gw.nlinks - 1].usable = l->fd >= 0;
        s += k + (s[k] == ';');
    }
    char nets[400];
    if (util_net_format(gw.nets, gw.nn, nets, sizeof nets) != UTIL_OK ||
        (size_t)snprintf(card, cardlen, "gw:%s=%s", gw.host, nets) >= cardlen) {
        util_log("gw: this host's networks do not fit in a card");
        goto fail;
    }
    return UTIL_OK;
fail:
    for (int i = 0; i < gw.nlinks; i++)
        if (gw.link[i].fd >= 0)
            close(gw.link[i].fd);
    gw.nlinks = 0;
    return UTIL_EINVAL;
}

/* ---- sending ------------------------------------------------------------------------- */

/* Buffers of the largest packet, for sending and for received packets of at least half of it,
 * and up to 4 MiB of them kept for the next ones (16 of 256 KiB; 4 to 64): a stream of a
 * rendezvous's DATA no longer frees at the top of the heap and faults fresh pages in for
 * every packet */
static int gw_spare(void)
{
    size_t n = ((size_t)4 << 20) / gw.p.packet_max;
    return n < 4 ? 4 : n > 64 ? 64 : (int)n;
}
static gw_buf *gw_buf_take(void)
{
    gw_buf *b = gw.free;
    if (b) {
        gw.free = b->next;
        gw.nfree--;
        return b;
    }
    gw.bytes += sizeof *b + gw.p.packet_max;
    return util_malloc(sizeof *b + gw.p.packet_max);
}

static void gw_buf_give(gw_buf *b)
{
    if (gw.nfree >= gw_spare()) {
        gw.bytes -= sizeof *b + gw.p.packet_max;
        free(b);
        return;
    }
    b->next = gw.free;
    gw.free = b;
    gw.nfree++;
}

/* a received packet's buffer: the largest packet's for one of at least half of it, else its
 * own size (a peer's queue may hold as many packets as its credits' blocks, most of them
 * small: with packet_max each, 8192 one-block packets would hold 512 MiB) */
static gw_buf *gw_rx_take(uint32_t len)
{
    if (len >= gw.p.packet_max / 2)
        return gw_buf_take();
    gw.rx_bytes += sizeof(gw_buf) + len;
    return util_malloc(sizeof(gw_buf) + len);
}

static void gw_rx_give(gw_buf *r)
{
    if (r->h.len >= gw.p.packet_max / 2) {
        gw_buf_give(r);
        return;
    }
    gw.rx_bytes -= sizeof *r + r->h.len;
    free(r);
}

static void gw_flush_done(gw_buf *b, void *arg)
{
    (void)arg;
    gw_buf_give(b);
}

/* Gateway l is gone: its socket at end of file (err NULL) or broken (err says how); called
 * from inside gw_poll only. It is left out from now on (the route rule skips it, so the
 * connections made from now on take another gateway, and a peer's first frame through
 * another gateway makes my side there, gw_conn_of). The connections through it cannot go on
 * (the packets the gateway held are lost): each is failed in the core (fab_upcalls.lost:
 * its requests complete with an error naming the gateway's host and the peer, and the
 * pair's next message makes a new connection, through another gateway). */
static void gw_link_lost(gw_link *l, const char *err_in)
{
    char what[240], errbuf[96];
    const char *err = NULL;
    if (err_in) { /* (it may be l->failed, cleared below) */
        snprintf(errbuf, sizeof errbuf, "%s", err_in);
        err = errbuf;
    }
    if (err)
        snprintf(what, sizeof what, "lost the gateway daemon on host %s: %s", l->host, err);
    else
        snprintf(what, sizeof what, "the gateway daemon on host %s closed its connection", l->host);
    close(l->fd);
    l->fd = -1;
    l->failed[0] = 0;
    gw.known[l - gw.link].usable = 0;
    while (l->oq) {
        gw_buf *t = l->oq;
        l->oq = t->next;
        gw_buf_give(t);
    }
    l->oq_tail = NULL;
    gw_reader_free(&l->rd);
    l->rconn = NULL;
    /* its connections (the core's upcall may make new ones, which replace only dropped ones
     * in gw.conns: the list is taken first) */
    fab_conn **lost = NULL;
    int through = 0;
    for (int i = 0; i < gw.nconns; i++) {
        fab_conn *c = gw.conns[i];
        if (!c || c->gone || c->link != l)
            continue;
        lost = util_realloc(lost, (size_t)(through + 1) * sizeof *lost);
        lost[through++] = c;
        while (c->head) { /* what came through it before: the peer failed it too */
            gw_buf *r = c->head;
            c->head = r->next;
            gw_rx_give(r);
        }
        c->tail = NULL;
    }
    if (!through)
        util_log("gw: %s; no connection of this process went through it: new connections take "
                 "another gateway",
                 what);
    else
        util_log("gw: %s; %d connection%s of this process went through it (to %s%s): %s with an "
                 "error, new connections take another gateway",
                 what, through, through == 1 ? "" : "s", util_proc(lost[0]->peer),
                 through > 1 ? ", ..." : "",
                 through == 1 ? "its requests fail" : "their requests fail");
    for (int i = 0; i < through; i++) {
        char why[320];
        snprintf(why, sizeof why,
                 "the connection to %s through the gateway daemon on host %s was lost (%s): "
                 "messages in flight on it are lost; the next message to it takes another "
                 "gateway",
                 util_proc(lost[i]->peer), l->host,
                 err ? err : "the gateway closed its connection");
        gw.p.up->lost(lost[i]->ctx, why); /* (the core drops it: gw_disconnect) */
    }
    free(lost);
}

/* a gateway found broken outside gw_poll (a write, a check before a new connection): left out
 * of new connections at once, ended by the next gw_poll (the core's upcall for its
 * connections runs only from inside poll) */
static void gw_link_failed(gw_link *l, const char *err)
{
    if (!l->failed[0])
        snprintf(l->failed, sizeof l->failed, "%s", err ? err : "");
    if (!l->failed[0])
        snprintf(l->failed, sizeof l->failed, "eof");
    gw.known[l - gw.link].usable = 0;
}

/* write what l has posted, as far as its socket takes it; a lost gateway ends the process */
static void gw_flush(gw_link *l)
{
    if (l->failed[0])
        return;
    int rc = gw_queue_write(l->fd, &l->oq, &l->oq_tail, gw_flush_done, NULL);
    if (rc != 0)
        gw_link_failed(l, strerror(-rc));
}

/* before a new connection chooses its gateway: a gateway that died since the last progress
 * pass (its socket at end of file or broken) is left out now, not after the first packet
 * (one recv with MSG_PEEK per gateway and new connection, never on the message path) */
static void gw_links_check(void)
{
    for (int i = 0; i < gw.nlinks; i++) {
        gw_link *l = &gw.link[i];
        char c;
        if (l->fd < 0)
            continue;
        ssize_t n = recv(l->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
        if (n == 0)
            gw_link_failed(l, NULL);
        else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            gw_link_failed(l, strerror(errno));
    }
}

static void *gw_tx_block(fab_conn *c, uint32_t pos)
{
    (void)pos;
    gw_link *l = c->link;
    if (l->tokens == 0 || l->fd < 0 || l->failed[0])
        return NULL; /* the gateway holds all it may of mine (the backlog waits for TOKENS),
                      * or it is gone (gw_poll fails the connection) */
    if (!l->cur)
        l->cur = gw_buf_take();
    return l->cur->pkt;
}

static void gw_tx_post(fab_conn *c, uint32_t pos, void *block, size_t bytes)
{
    (void)pos;
    gw_link *l = c->link;
    gw_buf *t = l->cur;
    if (!t || block != t->pkt || bytes > gw.p.packet_max)
        util_die("gw: a packet posted that tx_block did not give");
    l->cur = NULL;
    l->tokens--;
    t->h = (gw_frame){.len = (uint32_t)bytes,
                      .kind = GW_DATA,
                      .version = GW_WIRE_VERSION,
                      .dst = c->gid,
                      .src = gw.gid};
    t->total = sizeof t->h + bytes;
    t->off = 0;
    t->next = NULL;
    if (l->oq_tail)
        l->oq_tail->next = t;
    else
        l->oq = t;
    l->oq_tail = t;
    gw_flush(l);
}

/* ---- receiving ----------------------------------------------------------------------- */

static int gw_read(gw_link *l);

/* the connection of the process src, whose frame came through gateway l: made now (the
 * core's side, gw_connect) if it is the peer's first, through the gateway the peer chose */
static fab_conn *gw_conn_of(uint64_t src, gw_link *l)
{
    int lpid = gw.p.up->lpid_of(src);
    if (lpid < 0)
        return NULL;
    fab_conn *c = lpid < gw.nconns ? gw.conns[lpid] : NULL;
    if (c && !c->gone && c->link != l && c->link->fd >= 0 && !c->link->reading) {
        /* a frame through another gateway than my connection's: the peer may have made a
         * new connection after my connection's gateway died, which I have not seen yet
         * (its end of file waits behind frames I have not read): read that gateway to its
         * end now (gw_link_lost fails my connection there, and the frame makes the new one) */
        gw_link *o = c->link;
        if (!o->failed[0])
            (void)gw_read(o);
        char b;
        ssize_t n = o->fd >= 0 && !o->failed[0] ? recv(o->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) : 1;
        if (n == 0)
            gw_link_failed(o, NULL);
        else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            gw_link_failed(o, strerror(errno));
        if (o->fd >= 0 && o->failed[0])
            gw_link_lost(o, strcmp(o->failed, "eof") ? o->failed : NULL);
    }
    if (lpid >= gw.nconns || !gw.conns[lpid] || gw.conns[lpid]->gone) {
        gw.incoming = l;
        gw.p.up->incoming(&fab_gw_ops, lpid);
        gw.incoming = NULL;
    }
    return lpid < gw.nconns ? gw.conns[lpid] : NULL;
}

/* a whole packet r from l: on its connection's queue */
static void gw_rx_queue(gw_link *l, gw_buf *r)
{
    fab_conn *c = l->rconn;
    if (c->tail)
        c->tail->next = r;
    else
        c->head = r;
    c->tail = r;
}

/* the frames whole at the start of l's read-ahead; a packet begun there whose payload goes
 * on is left in l->rd.in. Returns the frames taken */
static int gw_parse(gw_link *l)
{
    int events = 0;
    size_t off = 0;
    while (l->rd.ilen - off >= sizeof(gw_frame)) {
        gw_frame h;
        memcpy(&h, l->rd.ib + off, sizeof h);
        if (h.version != GW_WIRE_VERSION || h.len > gw.p.packet_max ||
            (h.kind != GW_DATA && h.kind != GW_TOKENS) || (h.kind == GW_DATA && h.dst != gw.gid))
            util_die("gw: a malformed frame from the gateway daemon on host %s (kind %u, "
                     "%u bytes)",
                     l->host, h.kind, h.len);
        off += sizeof h;
        events++;
        if (h.kind == GW_TOKENS) {
            l->tokens += h.arg;
            continue;
        }
        l->rconn = gw_conn_of(h.src, l);
        if (!l->rconn)
            util_die("gw: a packet through the gateway on host %s from process %llx, "
                     "which this process does not know",
                     l->host, (unsigned long long)h.src);
        gw_buf *r = gw_rx_take(h.len);
        r->h = h;
        r->next = NULL;
        size_t have = l->rd.ilen - off < h.len ? l->rd.ilen - off : h.len;
        memcpy(r->pkt, l->rd.ib + off, have);
        off += have;
        if (have < h.len) { /* the rest comes straight into it */
            l->rd.in = r;
            l->rd.ingot = have;
            events--; /* (counted when whole) */
            break;
        }
        gw_rx_queue(l, r);
    }
    gw_reader_take(&l->rd, off);
    return events;
}

/* read what l has; returns the frames taken */
static int gw_read_frames(gw_link *l)
{
    int events = 0;
    for (;;) {
        gw_buf *whole;
        int drained;
        ssize_t n = gw_reader_recv(l->fd, &l->rd, &whole, &drained);
        l->got |= n > 0;
        if (n <= 0) {
            if (n == 0)
                gw_link_lost(l, NULL);
            else if (n != -EAGAIN)
                gw_link_lost(l, strerror((int)-n));
            return events;
        }
        if (whole) {
            gw_rx_queue(l, whole);
            events++;
        }
        events += gw_parse(l);
        if (drained || l->fd < 0)
            return events; /* the socket had no more */
    }
}

static int gw_read(gw_link *l)
{
    l->reading = 1;
    int events = gw_read_frames(l);
    l->reading = 0;
    return events;
}

static int gw_poll(void)
{
    int events = 0;
    for (int i = 0; i < gw.nlinks; i++) {
        gw_link *l = &gw.link[i];
        if (l->fd < 0)
            continue;
        if (__builtin_expect(l->failed[0] != 0, 0)) {
            gw_link_lost(l, strcmp(l->failed, "eof") ? l->failed : NULL);
            events++;
            continue;
        }
        if (l->oq)
            gw_flush(l);
        if (l->fd >= 0)
            events += gw_read(l);
    }
    if (__builtin_expect(gw.gone_queued, 0)) {
        /* packets that came after a peer's FIN, for the connection after the dropped one:
         * the core makes it now, as for a peer's first frame (gw_connect takes the queue) */
        gw.gone_queued = 0;
        for (int p = 0; p < gw.nconns; p++) {
            fab_conn *c = gw.conns[p];
            if (c && c->gone && c->head) {
                gw.incoming = c->link;
                gw.p.up->incoming(&fab_gw_ops, p);
                gw.incoming = NULL;
                events++;
            }
        }
    }
    return events;
}

/* an idle wait sleeps on each gateway's socket: frames and tokens in, room for what waits */
static int gw_wait_fds(struct pollfd *fds, int cap)
{
    if (gw.gone_queued)
        return -1;
    int n = 0;
    for (int i = 0; i < gw.nlinks; i++) {
        gw_link *l = &gw.link[i];
        if (l->fd < 0)
            continue;
        if (l->failed[0] || n == cap)
            return -1;
        if (l->got) { /* the gateway may wait for that ACK to send the rest of a frame */
            util_tcp_ack_now(l->fd);
            l->got = 0;
        }
        fds[n++] = (struct pollfd){.fd = l->fd, .events = (short)(POLLIN | (l->oq ? POLLOUT : 0))};
    }
    return n;
}

static void *gw_rx_peek(fab_conn *c) { return c->head ? c->head->pkt : NULL; }

static void gw_rx_free(fab_conn *c, uint32_t pos, void *block, uint32_t blocks)
{
    (void)pos, (void)block, (void)blocks;
    gw_buf *r = c->head;
    c->head = r->next;
    if (!c->head)
        c->tail = NULL;
    gw_rx_give(r);
}

/* ---- connections --------------------------------------------------------------------- */

/* the gateway of the pair (me, the peer on host `host` with these networks): the rule of the
 * route file, else among the gateways I am connected to that share a network with the
 * peer, number (a + b) % n for ranks a and b (gw_route.h) */
static gw_link *gw_route(uint64_t peer_gid, const char *host, const util_net *nets, int nn,
                         int *rule)
{
    unsigned a = (unsigned)FAB_GID_RANK(gw.gid), b = (unsigned)FAB_GID_RANK(peer_gid);
    int i = gw_route_pick(gw.known, gw.nlinks, gw.rules, gw.nrules, (int)a, gw.host, gw.nets, gw.nn,
                          (int)b, host, nets, nn, rule);
    return i < 0 ? NULL : &gw.link[i];
}

/* "gw:<host>=<networks>": the host into host[GW_ROUTE_NAME_MAX], the count of networks */
static int gw_card_nets(const char *card, char *host, util_net *nets)
{
    if (strncmp(card, "gw:", 3) != 0)
        return UTIL_EINVAL;
    const char *eq = strchr(card + 3, '=');
    if (!eq || eq - (card + 3) >= GW_ROUTE_NAME_MAX)
        return UTIL_EINVAL;
    memcpy(host, card + 3, (size_t)(eq - (card + 3)));
    host[eq - (card + 3)] = 0;
    return util_net_parse(eq + 1, strlen(eq + 1), nets, UTIL_NET_MAX);
}

static int gw_reachable(const char *peer_card)
{
    util_net nets[UTIL_NET_MAX];
    char host[GW_ROUTE_NAME_MAX];
    int rule, nn = gw_card_nets(peer_card, host, nets);
    gw_links_check(); /* a new connection: the gateways that died are left out */
    return nn >= 0 && gw_route(0, host, nets, nn, &rule) != NULL;
}

/* Credits of a connection through a gateway: 32768 blocks (2 MiB of 64-byte blocks), 64
 * times the core's default, as ofi takes 2048: the window must cover the two hops' round
 * trip (with 512 blocks, two 16 KiB packets in flight, a 1 MiB ping-pong through a gateway
 * took 18 times the direct path's time; with 8192, a 4 MiB one twice the time of 32768,
 * docs/gateway.md). A receiver's queue holds at most this much per peer, in buffers taken
 * as packets arrive. */
static unsigned gw_ring_blocks(const char *peer_card)
{
    (void)peer_card;
    return 32768;
}

static int gw_connect(int peer, const char *peer_card, int passive, void *ctx, fab_conn **out,
                      void **rx_ring)
{
    util_net nets[UTIL_NET_MAX];
    char host[GW_ROUTE_NAME_MAX];
    int rule = -1, nn = gw_card_nets(peer_card, host, nets);
    uint64_t gid = gw.p.up->gid_of(peer);
    gw_link *l = nn >= 0 ? gw_route(gid, host, nets, nn, &rule) : NULL;
    /* made for a peer's first frame: through the gateway it came by, which is the rule's
     * unless the peer already left out a gateway that died (I will at my next pass) */
    gw_link *in = passive ? gw.incoming : NULL;
    if (in && in != l) {
        l = in;
        rule = -2;
    }
    if (!l) {
        util_log("gw: no gateway of this job shares a network with %s", util_proc(peer));
        return UTIL_EUNREACH;
    }
    if (peer >= gw.nconns) {
        int n = gw.nconns ? gw.nconns : 16;
        while (n <= peer)
            n *= 2;
        gw.conns = util_realloc(gw.conns, (size_t)n * sizeof *gw.conns);
        memset(gw.conns + gw.nconns, 0, (size_t)(n - gw.nconns) * sizeof *gw.conns);
        gw.nconns = n;
    }
    fab_conn *c = util_calloc(1, sizeof *c);
    c->peer = peer;
    c->gid = gid;
    c->ctx = ctx;
    c->link = l;
    if (rule >= 0)
        snprintf(c->via, sizeof c->via, "gateway %s (route file line %d)", l->host,
                 gw.rules[rule].line);
    else if (rule == -2)
        snprintf(c->via, sizeof c->via, "gateway %s (the peer's choice)", l->host);
    else
        snprintf(c->via, sizeof c->via, "gateway %s", l->host);
    fab_conn *old = gw.conns[peer];
    if (old && old->gone) { /* the packets that came after the last connection's end */
        c->head = old->head;
        c->tail = old->tail;
        free(old);
    }
    gw.conns[peer] = c;
    *out = c;
    *rx_ring = NULL;
    gw.p.up->ready(ctx, UTIL_OK); /* nothing to set up: packets may go */
    return UTIL_OK;
}

/* The core dropped c after the FIN handshake (MPI_Comm_disconnect). Packets that came after
 * the peer's FIN are the next connection's (the peer may connect again at once, through the
 * same gateway and queue, with its sequence numbers from the start): c stays in gw.conns
 * holding them until that connection is made, which takes them (gw_connect). */
static void gw_disconnect(fab_conn *c)
{
    c->gone = 1;
    gw.gone_queued |= c->head != NULL;
}

static const char *gw_conn_route(fab_conn *c) { return c->via; }

/* ---- the rest ------------------------------------------------------------------------ */

static void gw_close(void)
{
    /* what is posted reaches the gateway before the connection closes (the gateway then
     * forwards it; what comes for this process after is dropped there) */
    uint64_t deadline = util_now_ns() + (uint64_t)GW_TIMEOUT_MS * 1000000;
    for (int i = 0; i < gw.nlinks; i++) {
        gw_link *l = &gw.link[i];
        while (l->fd >= 0 && l->oq && util_now_ns() < deadline) {
            gw_flush(l);
            if (l->oq)
                (void)gw_wait(l->fd, POLLOUT, deadline);
        }
        if (l->fd >= 0)
            close(l->fd);
        l->fd = -1;
        free(l->cur);
        while (l->oq) {
            gw_buf *t = l->oq;
            l->oq = t->next;
            free(t);
        }
        gw_reader_free(&l->rd);
    }
    for (int i = 0; i < gw.nconns; i++) {
        fab_conn *c = gw.conns[i];
        if (!c)
            continue;
        while (c->head) {
            gw_buf *r = c->head;
            c->head = r->next;
            free(r);
        }
        free(c);
    }
    free(gw.conns);
    while (gw.free) {
        gw_buf *b = gw.free;
        gw.free = b->next;
        free(b);
    }
    memset(&gw, 0, sizeof gw);
}

static const fab_caps *gw_caps(void) { return &gw.caps; }

static void gw_footprint(fab_conn *c, fab_usage *u)
{
    *u = (fab_usage){0};
    if (!c)
        u->endpoint = gw.bytes + gw.rx_bytes;
}

static const fab_chan_ops gw_chan = {
    .ring_blocks = gw_ring_blocks,
    .connect = gw_connect,
    .disconnect = gw_disconnect,
    .tx_block = gw_tx_block,
    .tx_post = gw_tx_post,
    .rx_peek = gw_rx_peek,
    .rx_free = gw_rx_free,
    .route = gw_conn_route,
};

const fab_ops fab_gw_ops = {
    .name = "gw",
    .open = gw_open,
    .close = gw_close,
    .caps = gw_caps,
    .reachable = gw_reachable,
    .poll = gw_poll,
    .footprint = gw_footprint,
    .wait_fds = gw_wait_fds,
    .chan = &gw_chan,
};

/* ---- a TCP connection through a gateway (PROXY) ------------------------------------ */

int fab_gw_can_dial(void)
{
    uint64_t key[2];
    return util_cfg.gateways && *util_cfg.gateways && gw_key_parse(util_cfg.gateway_key, key) == 0;
}

/* one gateway's try: the fd, or a negative code with why */
static int gw_dial_one(uint32_t gaddr, unsigned gport, const uint64_t key[2], uint64_t target,
                       uint64_t deadline, char *why, size_t whylen)
{
    const char *step;
    gw_frame h;
    int fd = gw_greet(gaddr, gport, key, GW_PROXY, target, 0, deadline, &h, &step);
    if (fd >= 0 && h.arg) {
        close(fd);
        step = "have the connection made by";
        fd = -(int)h.arg;
    }
    if (fd < 0)
        snprintf(why, whylen, "cannot %s the gateway daemon at %u.%u.%u.%u:%u: %s", step,
                 gaddr >> 24, (gaddr >> 16) & 255, (gaddr >> 8) & 255, gaddr & 255, gport,
                 fd == UTIL_EAGAIN ? "no answer in time" : strerror(-fd));
    return fd;
}

int fab_gw_dial(uint32_t addr, uint16_t port, int timeout_ms, char *why, size_t whylen)
{
    uint64_t key[2];
    snprintf(why, whylen, "no gateway daemon shares a network with this host and %u.%u.%u.%u",
             addr >> 24, (addr >> 16) & 255, (addr >> 8) & 255, addr & 255);
    if (!util_cfg.gateways || gw_key_parse(util_cfg.gateway_key, key) != 0)
        return UTIL_ENOENT;
    uint64_t deadline = util_now_ns() + (uint64_t)(timeout_ms < 0 ? 60000 : timeout_ms) * 1000000;
    util_net mine[UTIL_NET_MAX];
    int nmine = gw_my_nets(mine), rc = UTIL_ENOENT;
    for (const char *s = util_cfg.gateways; *s;) {
        size_t k = strcspn(s, ";");
        gw_known g;
        unsigned gport;
        if (gw_known_parse(s, k, &g, &gport) == UTIL_OK) {
            uint32_t gaddr = 0;
            int there = 0;
            for (int i = 0; i < g.nn; i++) {
                there |= util_net_on(&g.nets[i], addr);
                for (int j = 0; j < nmine && !gaddr; j++)
                    if (g.nets[i].prefix == mine[j].prefix && util_net_on(&mine[j], g.nets[i].addr))
                        gaddr = g.nets[i].addr;
            }
            if (gaddr && there) {
                int fd = gw_dial_one(gaddr, gport, key, gw_proxy_target(addr, port), deadline, why,
                                     whylen);
                if (fd >= 0)
                    return fd;
                rc = fd;
            }
        }
        s += k + (s[k] == ';');
    }
    return rc;
}
