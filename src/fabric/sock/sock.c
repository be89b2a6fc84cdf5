/* sock fabric: connections over connected stream sockets (docs/fabric.md "sock").
 *
 * Made for ranks that cannot make connections themselves (mpirun --isolate: a network
 * namespace with only loopback): the assist daemon, which keeps the host's network, makes
 * each connection and hands both ends over the endpoint channel (SCM_RIGHTS); the rank then
 * moves every byte itself. Without a daemon that offers it (DCFA_SOCK_CONNECT=self), each
 * process listens on 127.0.0.1 and connects by itself: the same fabric on one node, for tests.
 *
 * A packet channel without one-sided memory (FAB_CAP_RX_QUEUE alone): each packet goes as a
 * frame (sock_wire.h) on the sender's socket; the receiver reads whatever arrived into its
 * connection's buffer and hands complete frames to the core in order (rx_peek, rx_free).
 * The core's credits bound what is in flight (DCFA_SOCK_CREDIT, a window larger than the
 * rings of the other fabrics: each credit comes back after a round trip through two
 * processes' progress); the kernel's socket buffers hold what the fabric's own (fixed) buffers
 * do not.
 *
 * One-sided access (FAB_CAP_RMA, DCFA_SOCK_RMA), emulated on the same stream so that a
 * rendezvous moves its data without the two copies through the connection's buffers: a WRITE
 * frame carries data from the writer's memory (sendmsg from the user's buffer) into memory the
 * receiver lent (mr reg), a READQ asks the peer for a range it lent, answered by a READR with
 * the data. The receiver takes a one-sided frame's header out of its buffer and reads the data
 * straight into their place (recvmsg into the destination, with a read-ahead into the buffer
 * behind them). Served by the peer's progress: no FAB_CAP_RMA_PASSIVE, so RMA windows still go
 * by messages.
 *
 * A connection sends on one socket only: the one it opened, or, when the peer opened first,
 * the peer's. When both open at once, the socket the lower gid opened carries both directions
 * (so that each side's acknowledgements ride on its data): the higher gid's end sends SWITCH as
 * the last frame of its own socket and closes it, then goes on on the lower's socket, starting
 * with SWITCHED; the lower's end reads nothing of that socket whose first frame is SWITCHED
 * before it has read SWITCH on the other, so each direction stays one ordered stream. */
#include "fabric/fabric.h"
#include "fabric/sock/sock_wire.h"
#include "util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define SOCK_FDS_MAX   2            /* sockets a connection reads: its own and the peer's */
#define SOCK_BUF_BYTES (128u << 10) /* a connection's send buffer, and its receive buffer */
/* no packet is shorter than the core's header (32 bytes, which packet_bytes reads) */
#define SOCK_PACKET_MIN 32
#define SOCK_IOV_MAX    64         /* local ranges of a one-sided operation (the core's chunk) */
#define SOCK_RMA_MAX    (1u << 30) /* bytes of one one-sided frame (max_bulk) */
#define SOCK_RMA_HDR    (sizeof(sock_frame) + sizeof(sock_rma))
/* a one-sided frame's data go at most this many bytes per sendmsg (the last piece up to half
 * as much more): one large call leaves the rest to the kernel's deferred transmission, which on
 * a loaded host waits for softirq time. Across two test hosts, ping-pong 1-4 MiB took 2.5-3 times
 * as long with calls of 256 KiB-4 MiB as with 128 KiB in some runs and the same in others; with
 * 128 KiB calls it was never the slower (docs/fabric.md "One-sided frames") */
#define SOCK_SEND_CHUNK ((size_t)128 << 10)

/* what epoll reports: a connection's socket, a socket not yet known, the listener, the
 * endpoint channel */
enum { SOCK_REF_CONN = 1, SOCK_REF_PENDING, SOCK_REF_LISTEN, SOCK_REF_EP };
typedef struct sock_ref {
    int kind;
    int fd;
    struct fab_conn *c;  /* SOCK_REF_CONN */
    struct sock_pend *p; /* SOCK_REF_PENDING */
    int eof;             /* SOCK_REF_CONN: its end was read (counted in eofs) */
    unsigned read_gen;   /* sk.wait_gen when it last gave bytes (its fd is on sk.reads then) */
} sock_ref;

/* A one-sided frame (WRITE, READQ, READR): its header and data go from here and the process's
 * memory (not through the send buffer), after the send buffer's bytes before `at` */
typedef struct sock_seg {
    struct sock_seg *next;
    size_t at;
    uint8_t hdr[SOCK_RMA_HDR];
    struct iovec iov[SOCK_IOV_MAX + 2]; /* the header, the data, the padding */
    int niov, idx;                      /* iov[idx..] are still to go (iov[idx] advanced) */
    fab_op *op;                         /* WRITE: done once everything went */
} sock_seg;

/* a read this process asked for (READQ sent): the READR of the same id fills iov */
typedef struct sock_read {
    struct sock_read *next;
    uint32_t id;
    size_t len;
    struct iovec iov[SOCK_IOV_MAX];
    int niov;
    fab_op *op;
} sock_read;

/* a linear byte buffer: data in [head, tail) */
typedef struct sock_buf {
    uint8_t *b;
    size_t head, tail, cap;
} sock_buf;

struct fab_conn {
    int peer;  /* lpid */
    void *ctx; /* the core's */
    int tx_fd; /* the socket I send on; -1 while the daemon's answer is awaited */
    uint32_t req_seq;
    int asking; /* my request to the daemon is out (util_backoff_hold while it is) */
    sock_ref refs[SOCK_FDS_MAX]; /* the sockets I read */
    int nrefs;
    sock_buf tx, rx;
    int peeked;    /* rx_peek gave the frame at rx.head: no move until rx_free */
    int bye_in;    /* the peer said BYE */
    int closing;   /* disconnect() was called */
    int in_flush;  /* on the list of connections with bytes to send */
    int eofs;      /* sockets that reached their end */
    int own_fd;    /* the socket this process opened, -1 none */
    int own_read;  /* own_fd's first frame from the peer was judged (SWITCHED or not) */
    int switch_in; /* the peer's SWITCH was read: its frames go on on own_fd */
    int sw_fd;     /* the higher gid of both opening at once: the peer's socket, to send on */
    size_t sw_end; /* ... and the end of the SWITCH frame in tx (0: no switch under way) */
    sock_seg *seg_head, *seg_tail; /* one-sided frames to send, in order */
    sock_read *reads, *reads_tail; /* reads asked for, in the order the peer answers them */
    size_t scan;                   /* rx: [head, scan) holds whole frames for the core */
    /* rx: the data of a one-sided frame go to sink[sink_i..] (sink_left bytes), then its
     * padding is skipped (skip); sink_read: the READR's read, NULL for a WRITE */
    struct iovec sink[SOCK_IOV_MAX];
    int sink_n, sink_i;
    size_t sink_left, sink_pad, skip;
    sock_read *sink_read;
    char name[64]; /* the peer, for messages */
};

/* memory this process lent for one-sided access (mr reg): its key is (gen << 32) | (index + 1) */
typedef struct sock_loan {
    uintptr_t base;
    size_t len;
    uint32_t gen;
    int next_free; /* index of the next free loan, -1 none; while lent: -2 */
} sock_loan;

typedef struct sock_done {
    fab_op *op;
    int status;
} sock_done;

/* a socket whose opener is not known yet: its hello has not arrived */
typedef struct sock_pend {
    sock_ref ref;
    uint8_t buf[sizeof(sock_frame) + sizeof(sock_hello)];
    size_t got;
    int daemon_rank; /* handed over by the daemon for this rank of my job; -1 accepted here */
    int parked;      /* its hello names a process of another job not known here yet */
    fab_gid gid;     /* parked: that process */
    struct sock_pend *next;
} sock_pend;

static struct {
    int open;
    fab_params p;
    fab_caps caps;
    int daemon; /* connections come from the daemon (else: self) */
    int ep_fd;  /* the endpoint channel */
    int lfd;    /* self: the listening socket */
    int epfd;   /* epoll */
    sock_ref lref, epref;
    uint64_t job_hash;
    char token[17];
    fab_conn **conns; /* by lpid */
    int nconns;
    fab_conn **flush; /* connections with bytes to send */
    int nflush, flush_cap;
    sock_pend *pend;
    uint32_t seq;
    size_t bufcap;
    unsigned nblocks; /* the credit window in ring blocks (ring_blocks) */
    sock_loan *loans; /* mr reg */
    int nloans, loan_free, lent;
    uint32_t loan_gen;
    uint32_t read_seq;
    sock_done *done; /* one-sided operations ended, reported from poll() */
    int ndone, done_cap;
    int *reads; /* sockets that gave bytes since the last idle wait (sock_wait_fds) */
    int nreads, reads_cap;
    unsigned wait_gen; /* idle waits so far, + 1 */
} sk = {.ep_fd = -1, .lfd = -1, .epfd = -1, .loan_free = -1, .wait_gen = 1};

static size_t sock_pad8(size_t n) { return (n + 7) & ~(size_t)7; }

static fab_gid sock_gid_self(void)
{
    return sk.p.up->gid_of ? sk.p.up->gid_of(sk.p.self) : FAB_GID(sk.job_hash, sk.p.self);
}

static int sock_lpid_of(fab_gid g)
{
    if (sk.p.up->lpid_of)
        return sk.p.up->lpid_of(g);
    return FAB_GID_JOB(g) == sk.job_hash ? FAB_GID_RANK(g) : -1;
}

static void sock_watch(sock_ref *r)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = r};
    if (epoll_ctl(sk.epfd, EPOLL_CTL_ADD, r->fd, &ev) != 0)
        util_die("sock: epoll_ctl: %m");
}

static void sock_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    (void)fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one); /* fails on AF_UNIX */
    /* a peer host that stops answering: an error, not a hang; DCFA_TCP_CONGESTION */
    util_tcp_data(fd, util_cfg.net_timeout);
}

/* a send or receive on c's socket failed with errno (not its end): the process ends, naming
 * the peer, its host and what the error means */
static _Noreturn void sock_io_failed(fab_conn *c, const char *verb)
{
    int err = errno;
    const char *host = util_proc_host(c->peer);
    const char *why =
        err == ETIMEDOUT ? " (its host has not answered for DCFA_NET_TIMEOUT seconds: the host or "
                           "the network to it is down)"
        : err == ENETUNREACH || err == EHOSTUNREACH || err == ENETDOWN
            ? " (this host has no route to it any more: a network interface went down)"
            : " (it ended or its connection broke)";
    util_die("sock: cannot %s %s%s%s: %s%s", verb, c->name, *host ? " on host " : "", host,
             strerror(err), why);
}

/* ---- sending ------------------------------------------------------------------------- */

static void sock_flush_add(fab_conn *c)
{
    if (c->in_flush)
        return;
    if (sk.nflush == sk.flush_cap) {
        sk.flush_cap = sk.flush_cap ? 2 * sk.flush_cap : 16;
        fab_conn **f = realloc(sk.flush, (size_t)sk.flush_cap * sizeof *f);
        if (!f)
            util_die("sock: out of memory");
        sk.flush = f;
    }
    sk.flush[sk.nflush++] = c;
    c->in_flush = 1;
}

static void sock_conn_drop_fd(fab_conn *c, int fd);

/* the SWITCH frame is on my own socket: that socket is done, the rest goes on the peer's */
static void sock_switch_done(fab_conn *c)
{
    int old = c->tx_fd;
    c->tx_fd = c->sw_fd;
    c->sw_fd = -1;
    c->sw_end = 0;
    c->own_fd = -1;
    /* the peer never sends on it (it sends on its own), so closing it loses nothing and resets
     * nothing: the peer reads up to SWITCH, then the end */
    sock_conn_drop_fd(c, old);
}

static void sock_done_add(fab_op *op, int status)
{
    if (sk.ndone == sk.done_cap) {
        sk.done_cap = sk.done_cap ? 2 * sk.done_cap : 16;
        sk.done = util_realloc(sk.done, (size_t)sk.done_cap * sizeof *sk.done);
    }
    sk.done[sk.ndone++] = (sock_done){op, status};
}

/* a send failed with errno: 1 when it may be dropped (finalizing, the peer already gone) */
static int sock_tx_failed(fab_conn *c)
{
    if (c->closing && (errno == EPIPE || errno == ECONNRESET))
        return 1; /* finalizing: the peer finished first and closed; it needs nothing more */
    sock_io_failed(c, "send to");
}

/* send what is left of one-sided frame s: 1 when all went, 0 when the socket is full */
static int sock_seg_send(fab_conn *c, sock_seg *s)
{
    while (s->idx < s->niov) {
        /* at most a chunk a call, unless what is left is at most half a chunk more */
        size_t left = 0;
        for (int i = s->idx; i < s->niov; i++)
            left += s->iov[i].iov_len;
        size_t cap = left <= SOCK_SEND_CHUNK + SOCK_SEND_CHUNK / 2 ? left : SOCK_SEND_CHUNK;
        struct iovec v[SOCK_IOV_MAX + 2];
        int nv = 0;
        for (int i = s->idx; i < s->niov && cap > 0; i++) {
            v[nv] = s->iov[i];
            if (v[nv].iov_len > cap)
                v[nv].iov_len = cap;
            cap -= v[nv++].iov_len;
        }
        struct msghdr mh = {.msg_iov = v, .msg_iovlen = (size_t)nv};
        ssize_t n = sendmsg(c->tx_fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            return sock_tx_failed(c);
        }
        for (size_t k = (size_t)n; k > 0 || (s->idx < s->niov && s->iov[s->idx].iov_len == 0);) {
            struct iovec *w = &s->iov[s->idx];
            size_t t = k < w->iov_len ? k : w->iov_len;
            w->iov_base = (uint8_t *)w->iov_base + t;
            w->iov_len -= t;
            k -= t;
            if (w->iov_len == 0)
                s->idx++;
        }
    }
    return 1;
}

/* write what waits (the send buffer's bytes and the one-sided frames among them, in order);
 * 1 when everything went */
static int sock_tx_flush(fab_conn *c)
{
    while (c->tx_fd >= 0) {
        sock_seg *s = c->seg_head;
        if (c->sw_end && c->tx.head == c->sw_end) {
            sock_switch_done(c);
            continue;
        }
        if (s && s->at == c->tx.head) {
            if (!sock_seg_send(c, s))
                break;
            c->seg_head = s->next;
            if (!c->seg_head)
                c->seg_tail = NULL;
            if (s->op)
                sock_done_add(s->op, UTIL_OK);
            free(s);
            continue;
        }
        if (c->tx.head == c->tx.tail)
            break;
        size_t end = c->sw_end ? c->sw_end : c->tx.tail;
        if (s && s->at < end)
            end = s->at;
        ssize_t n =
            send(c->tx_fd, c->tx.b + c->tx.head, end - c->tx.head, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n > 0) {
            c->tx.head += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (sock_tx_failed(c)) {
            c->tx.head = c->tx.tail;
            while ((s = c->seg_head)) {
                c->seg_head = s->next;
                free(s);
            }
            c->seg_tail = NULL;
            break;
        }
    }
    if (c->tx.head == c->tx.tail) {
        for (sock_seg *s = c->seg_head; s; s = s->next)
            s->at = 0; /* each at the buffer's end */
        c->tx.head = c->tx.tail = 0;
        return c->seg_head == NULL;
    }
    return 0;
}

/* room for a frame of up to `bytes` at the buffer's end (moving what waits to the front) */
static uint8_t *sock_tx_room(fab_conn *c, size_t bytes)
{
    size_t need = sizeof(sock_frame) + sock_pad8(bytes);
    if (c->tx.cap - c->tx.tail < need && c->tx.head > 0) {
        memmove(c->tx.b, c->tx.b + c->tx.head, c->tx.tail - c->tx.head);
        c->tx.tail -= c->tx.head;
        if (c->sw_end)
            c->sw_end -= c->tx.head;
        for (sock_seg *s = c->seg_head; s; s = s->next)
            s->at -= c->tx.head;
        c->tx.head = 0;
    }
    if (c->tx.cap - c->tx.tail < need)
        return NULL;
    return c->tx.b + c->tx.tail;
}

static void sock_tx_frame(fab_conn *c, unsigned kind, const void *body, size_t len)
{
    uint8_t *at = sock_tx_room(c, len);
    if (!at)
        util_die("sock: no room to send a frame to %s", c->name);
    sock_frame f = {.len = (uint32_t)len, .check = sock_frame_check((uint32_t)len, kind)};
    memcpy(at, &f, sizeof f);
    if (len)
        memcpy(at + sizeof f, body, len);
    c->tx.tail += sizeof f + sock_pad8(len);
}

/* both opened at once and I am the higher gid: once my own socket is there (a daemon's grant
 * may come after the peer's socket), SWITCH ends it and SWITCHED starts the peer's */
static void sock_switch_start(fab_conn *c)
{
    if (c->sw_fd < 0 || c->tx_fd < 0 || c->sw_end)
        return;
    if (!sock_tx_room(c, 2 * sizeof(sock_frame)))
        util_die("sock: no room to send a frame to %s", c->name);
    sock_tx_frame(c, SOCK_FRAME_SWITCH, NULL, 0);
    c->sw_end = c->tx.tail;
    sock_tx_frame(c, SOCK_FRAME_SWITCHED, NULL, 0);
    if (!sock_tx_flush(c))
        sock_flush_add(c);
}

static void *sock_tx_block(fab_conn *c, uint32_t pos)
{
    (void)pos;
    uint8_t *at = sock_tx_room(c, sk.p.packet_max);
    return at ? at + sizeof(sock_frame) : NULL;
}

static void sock_tx_post(fab_conn *c, uint32_t pos, void *block, size_t bytes)
{
    (void)pos;
    sock_frame *f = (sock_frame *)((uint8_t *)block - sizeof(sock_frame));
    f->len = (uint32_t)bytes;
    f->check = sock_frame_check((uint32_t)bytes, SOCK_FRAME_PACKET);
    c->tx.tail += sizeof *f + sock_pad8(bytes);
    if (!sock_tx_flush(c))
        sock_flush_add(c);
}

/* ---- receiving ----------------------------------------------------------------------- */

_Noreturn static void sock_corrupt(fab_conn *c, const char *why, const sock_frame *f)
{
    util_die("sock: malformed frame from %s: %s (length %u, check %08x); aborting: the "
             "connection is corrupt",
             c->name, why, f->len, f->check);
}

/* the kind of a frame header on a connection; one whose check does not match, of a kind no
 * connection carries or with a length no frame of its kind has is a corrupt connection */
static unsigned sock_frame_kind(fab_conn *c, const sock_frame *f)
{
    unsigned kind = (f->check ^ f->len ^ SOCK_FRAME_MAGIC) >> 24;
    size_t data = f->len - (f->len >= sizeof(sock_rma) ? sizeof(sock_rma) : f->len);
    int ok = 0;
    switch (sock_frame_check(f->len, kind) == f->check ? kind : 0) {
    case SOCK_FRAME_PACKET:
        ok = f->len >= SOCK_PACKET_MIN && f->len <= sk.p.packet_max;
        break;
    case SOCK_FRAME_BYE:
    case SOCK_FRAME_SWITCH:
        ok = f->len == 0;
        break;
    case SOCK_FRAME_WRITE:
        ok = f->len > sizeof(sock_rma) && data <= SOCK_RMA_MAX;
        break;
    case SOCK_FRAME_READQ:
        ok = f->len == sizeof(sock_rma);
        break;
    case SOCK_FRAME_READR:
        ok = f->len >= sizeof(sock_rma) && data <= SOCK_RMA_MAX;
        break;
    default:
        sock_corrupt(c, "not a frame header", f);
    }
    if (!ok)
        sock_corrupt(c,
                     kind == SOCK_FRAME_PACKET ? "a length no packet has"
                                               : "a length no frame of its kind has",
                     f);
    return kind;
}

/* the frame at rx.head when it has arrived whole (and was scanned): its kind, or 0 */
static unsigned sock_rx_frame(fab_conn *c, sock_frame *f)
{
    size_t have = c->scan - c->rx.head;
    if (have < sizeof *f)
        return 0;
    memcpy(f, c->rx.b + c->rx.head, sizeof *f);
    unsigned kind = sock_frame_kind(c, f);
    /* only where I opened a socket too (or asked the daemon for one), once */
    if (kind == SOCK_FRAME_SWITCH && (c->switch_in || (c->own_fd < 0 && c->tx_fd >= 0)))
        sock_corrupt(c, "a SWITCH where no second socket is to switch to", f);
    if (have < sizeof *f + sock_pad8(f->len))
        return 0;
    if (kind == SOCK_FRAME_PACKET && sk.p.up->packet_bytes &&
        sk.p.up->packet_bytes(c->rx.b + c->rx.head + sizeof *f) != f->len)
        sock_corrupt(c, "a packet whose header gives another length", f);
    return kind;
}

static void *sock_rx_peek(fab_conn *c)
{
    sock_frame f;
    for (;;) {
        unsigned kind = sock_rx_frame(c, &f);
        if (kind == 0) {
            if (__builtin_expect(c->nrefs && c->eofs == c->nrefs && !c->bye_in && !c->closing, 0))
                util_die("sock: %s closed its connection to this process before finalizing (it "
                         "exited or failed)",
                         c->name);
            return NULL;
        }
        if (kind == SOCK_FRAME_BYE) {
            c->bye_in = 1;
            c->rx.head += sizeof f;
            continue;
        }
        if (kind == SOCK_FRAME_SWITCH) {
            /* the peer's socket ends here (it closes it); its frames go on on mine */
            c->rx.head += sizeof f;
            c->switch_in = 1;
            for (int i = c->nrefs - 1; i >= 0; i--)
                if (c->refs[i].fd != c->own_fd)
                    sock_conn_drop_fd(c, c->refs[i].fd);
            continue;
        }
        if (c->bye_in)
            sock_corrupt(c, "a packet after the peer's BYE", &f);
        c->peeked = 1;
        return c->rx.b + c->rx.head + sizeof f;
    }
}

static void sock_rx_free(fab_conn *c, uint32_t pos, void *block, uint32_t blocks)
{
    (void)pos;
    (void)blocks;
    sock_frame *f = (sock_frame *)((uint8_t *)block - sizeof(sock_frame));
    c->rx.head += sizeof *f + sock_pad8(f->len);
    c->peeked = 0;
    if (c->rx.head == c->rx.tail)
        c->rx.head = c->rx.tail = c->scan = 0;
}

/* ---- one-sided frames ---------------------------------------------------------------- */

/* the memory lent as key covering [addr, addr + len), or NULL */
static void *sock_loan_find(uint64_t key, uint64_t addr, uint64_t len)
{
    uint64_t i = (key & 0xffffffffu) - 1;
    if (i >= (uint64_t)sk.nloans)
        return NULL;
    const sock_loan *l = &sk.loans[i];
    if (l->next_free != -2 || l->gen != (uint32_t)(key >> 32) || addr < l->base ||
        addr - l->base > l->len || len > l->len - (addr - l->base))
        return NULL;
    return (void *)(uintptr_t)addr;
}

static int sock_reg(const void *buf, size_t len, fab_mem *mem)
{
    int i = sk.loan_free;
    if (i < 0) {
        sk.loans = util_realloc(sk.loans, (size_t)(sk.nloans + 1) * sizeof *sk.loans);
        i = sk.nloans++;
    } else {
        sk.loan_free = sk.loans[i].next_free;
    }
    sk.loan_gen = (sk.loan_gen + 1) & 0x7fffffffu; /* bit 63 of a key is FAB_KEY_DIRECT */
    if (sk.loan_gen == 0)
        sk.loan_gen = 1;
    sk.loans[i] =
        (sock_loan){.base = (uintptr_t)buf, .len = len, .gen = sk.loan_gen, .next_free = -2};
    sk.lent++;
    mem->addr = (uint64_t)(uintptr_t)buf;
    mem->key = ((uint64_t)sk.loan_gen << 32) | (uint32_t)(i + 1);
    mem->handle = NULL;
    return UTIL_OK;
}

static void sock_dereg(fab_mem *mem)
{
    uint64_t i = (mem->key & 0xffffffffu) - 1;
    if (i >= (uint64_t)sk.nloans || sk.loans[i].next_free != -2 ||
        sk.loans[i].gen != (uint32_t)(mem->key >> 32))
        return;
    sk.loans[i].next_free = sk.loan_free; /* its key is dead: a later loan has another gen */
    sk.loan_free = (int)i;
    sk.lent--;
}

static void sock_release(const void *buf, size_t len)
{
    (void)buf; /* nothing cached: a loan lives from reg to dereg */
    (void)len;
}

/* queue a one-sided frame: header `m` of kind, then len bytes from local[0..nlocal) */
static void sock_seg_queue(fab_conn *c, unsigned kind, const sock_rma *m, const struct iovec *local,
                           int nlocal, size_t len, fab_op *op)
{
    static const uint8_t zeros[8];
    sock_seg *s = util_calloc(1, sizeof *s);
    uint32_t flen = (uint32_t)(sizeof *m + len);
    sock_frame f = {.len = flen, .check = sock_frame_check(flen, kind)};
    memcpy(s->hdr, &f, sizeof f);
    memcpy(s->hdr + sizeof f, m, sizeof *m);
    s->iov[s->niov++] = (struct iovec){s->hdr, sizeof s->hdr};
    for (int i = 0; i < nlocal; i++)
        if (local[i].iov_len)
            s->iov[s->niov++] = local[i];
    if (sock_pad8(flen) > flen)
        s->iov[s->niov++] = (struct iovec){(void *)zeros, sock_pad8(flen) - flen};
    s->at = c->tx.tail;
    s->op = op;
    if (c->seg_tail)
        c->seg_tail->next = s;
    else
        c->seg_head = s;
    c->seg_tail = s;
    if (!sock_tx_flush(c))
        sock_flush_add(c);
}

static int sock_iov_ok(const struct iovec *local, int nlocal, size_t len)
{
    size_t sum = 0;
    for (int i = 0; i < nlocal; i++)
        sum += local[i].iov_len;
    return nlocal > 0 && nlocal <= SOCK_IOV_MAX && len > 0 && len <= SOCK_RMA_MAX && sum == len;
}

static int sock_rma_write(fab_conn *c, const struct iovec *local, int nlocal, uint64_t raddr,
                          uint64_t rkey, size_t len, fab_op *op)
{
    if (!sock_iov_ok(local, nlocal, len))
        return UTIL_EINVAL;
    sock_rma m = {.addr = raddr, .key = rkey, .len = len};
    sock_seg_queue(c, SOCK_FRAME_WRITE, &m, local, nlocal, len, op);
    /* done (from poll) once the kernel has every byte: the core's DONE follows on the stream */
    return FAB_PENDING;
}

static int sock_rma_read(fab_conn *c, const struct iovec *local, int nlocal, uint64_t raddr,
                         uint64_t rkey, size_t len, fab_op *op)
{
    if (!sock_iov_ok(local, nlocal, len))
        return UTIL_EINVAL;
    sock_read *r = util_calloc(1, sizeof *r);
    r->id = ++sk.read_seq;
    r->len = len;
    r->op = op;
    for (int i = 0; i < nlocal; i++)
        if (local[i].iov_len)
            r->iov[r->niov++] = local[i];
    if (c->reads_tail)
        c->reads_tail->next = r;
    else
        c->reads = r;
    c->reads_tail = r;
    sock_rma m = {.addr = raddr, .key = rkey, .len = len, .id = r->id};
    sock_seg_queue(c, SOCK_FRAME_READQ, &m, NULL, 0, 0, NULL);
    return FAB_PENDING;
}

/* n bytes of the receive buffer from `at` are taken out (a one-sided frame's header, data or
 * padding): what follows moves down */
static void sock_rx_cut(fab_conn *c, size_t at, size_t n)
{
    memmove(c->rx.b + at, c->rx.b + at + n, c->rx.tail - at - n);
    c->rx.tail -= n;
}

/* n more bytes of the sink's data are in place */
static void sock_sink_took(fab_conn *c, size_t n)
{
    c->sink_left -= n;
    while (n > 0) {
        struct iovec *v = &c->sink[c->sink_i];
        size_t t = n < v->iov_len ? n : v->iov_len;
        v->iov_base = (uint8_t *)v->iov_base + t;
        v->iov_len -= t;
        n -= t;
        if (v->iov_len == 0)
            c->sink_i++;
    }
    if (c->sink_left == 0) {
        c->skip = c->sink_pad;
        if (c->sink_read) {
            sock_done_add(c->sink_read->op, UTIL_OK);
            free(c->sink_read);
            c->sink_read = NULL;
        }
    }
}

/* copy n bytes from src into the sink */
static void sock_sink_put(fab_conn *c, const uint8_t *src, size_t n)
{
    size_t done = 0;
    for (int i = c->sink_i; done < n; i++) {
        size_t t = n - done < c->sink[i].iov_len ? n - done : c->sink[i].iov_len;
        memcpy(c->sink[i].iov_base, src + done, t);
        done += t;
    }
    sock_sink_took(c, n);
}

/* a one-sided frame's header (its data, if any, follow on the stream) */
static void sock_rma_frame(fab_conn *c, unsigned kind, const sock_frame *f, const sock_rma *m)
{
    size_t data = f->len - sizeof *m;
    c->sink_pad = sock_pad8(f->len) - f->len;
    if (kind == SOCK_FRAME_WRITE) {
        void *to = m->len == data ? sock_loan_find(m->key, m->addr, m->len) : NULL;
        if (!to)
            sock_corrupt(c, "a WRITE outside the memory this process lent it", f);
        c->sink[0] = (struct iovec){to, data};
        c->sink_n = 1;
        c->sink_i = 0;
        c->sink_read = NULL;
        c->sink_left = data;
        return;
    }
    if (kind == SOCK_FRAME_READQ) {
        void *from = sock_loan_find(m->key, m->addr, m->len);
        sock_rma a = {.len = m->len, .id = m->id};
        if (!from || m->len == 0 || m->len > SOCK_RMA_MAX) {
            util_log("sock: %s asked to read %llu bytes at %#llx, which this process did not lend "
                     "it (key %#llx): refused",
                     c->name, (unsigned long long)m->len, (unsigned long long)m->addr,
                     (unsigned long long)m->key);
            a.status = UTIL_EIO;
            a.len = 0;
            sock_seg_queue(c, SOCK_FRAME_READR, &a, NULL, 0, 0, NULL);
            return;
        }
        struct iovec v = {from, m->len};
        sock_seg_queue(c, SOCK_FRAME_READR, &a, &v, 1, m->len, NULL);
        return;
    }
    /* READR: the answer to my oldest read */
    sock_read *r = c->reads;
    if (!r || r->id != m->id ||
        (m->status == 0 ? m->len != r->len || data != r->len : m->status > 0 || data != 0))
        sock_corrupt(c, "a READR that answers no read of this process", f);
    c->reads = r->next;
    if (!c->reads)
        c->reads_tail = NULL;
    if (m->status != 0) {
        sock_done_add(r->op, m->status);
        free(r);
        c->skip = c->sink_pad;
        return;
    }
    memcpy(c->sink, r->iov, (size_t)r->niov * sizeof *r->iov);
    c->sink_n = r->niov;
    c->sink_i = 0;
    c->sink_read = r;
    c->sink_left = data;
}

/* judge what arrived from scan on: whole frames for the core stay (scan passes them); a
 * one-sided frame's header is taken out of the buffer and its data go to their place */
static void sock_rx_scan(fab_conn *c)
{
    for (;;) {
        size_t have = c->rx.tail - c->scan;
        if (c->sink_left || c->skip) {
            if (have == 0)
                return;
            size_t n;
            if (c->sink_left) {
                n = have < c->sink_left ? have : c->sink_left;
                sock_sink_put(c, c->rx.b + c->scan, n);
            } else {
                n = have < c->skip ? have : c->skip;
                c->skip -= n;
            }
            sock_rx_cut(c, c->scan, n);
            continue;
        }
        sock_frame f;
        if (have < sizeof f)
            return;
        memcpy(&f, c->rx.b + c->scan, sizeof f);
        unsigned kind = sock_frame_kind(c, &f);
        if (kind < SOCK_FRAME_WRITE) {
            size_t whole = sizeof f + sock_pad8(f.len);
            if (have < whole)
                return;
            c->scan += whole;
            continue;
        }
        if (have < SOCK_RMA_HDR)
            return;
        sock_rma m;
        memcpy(&m, c->rx.b + c->scan + sizeof f, sizeof m);
        sock_rx_cut(c, c->scan, SOCK_RMA_HDR);
        sock_rma_frame(c, kind, &f, &m);
    }
}

/* r gave bytes: before an idle wait sleeps, its pending ACK goes out (sock_wait_fds; a socket
 * closed meanwhile gets EBADF there, or one that took its number a harmless QUICKACK) */
static void sock_read_mark(sock_ref *r)
{
    if (r->read_gen == sk.wait_gen)
        return;
    if (sk.nreads == sk.reads_cap) {
        sk.reads_cap = sk.reads_cap ? 2 * sk.reads_cap : 16;
        int *v = realloc(sk.reads, (size_t)sk.reads_cap * sizeof *v);
        if (!v)
            util_die("sock: out of memory");
        sk.reads = v;
    }
    sk.reads[sk.nreads++] = r->fd;
    r->read_gen = sk.wait_gen;
}

/* read what socket r of connection c has; 1 when bytes came */
static int sock_rx_read(fab_conn *c, sock_ref *r)
{
    if (!c->peeked && c->rx.head > 0 && c->rx.cap - c->rx.tail < c->rx.cap / 2) {
        memmove(c->rx.b, c->rx.b + c->rx.head, c->rx.tail - c->rx.head);
        c->rx.tail -= c->rx.head;
        c->scan -= c->rx.head;
        c->rx.head = 0;
    }
    if (c->rx.tail == c->rx.cap && !c->sink_left)
        return 0; /* full: the core consumes first (credits bound what the peer sends) */
    if (r->fd == c->own_fd && !c->own_read) {
        /* the peer's first frame on my socket: SWITCHED when it opened one too, and then what
         * it sent on its own socket up to SWITCH comes first */
        sock_frame f;
        ssize_t k = recv(r->fd, &f, sizeof f, MSG_PEEK | MSG_DONTWAIT);
        if (k == (ssize_t)sizeof f) {
            if (f.len == 0 && f.check == sock_frame_check(0, SOCK_FRAME_SWITCHED)) {
                if (!c->switch_in)
                    return 0;
                (void)recv(r->fd, &f, sizeof f, MSG_DONTWAIT); /* peeked whole: it is there */
            }
            c->own_read = 1;
        } else if (k > 0 ||
                   (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))) {
            return 0;
        } else if (k < 0 && errno != ECONNRESET) {
            sock_io_failed(c, "read from"); /* a peek takes the socket's error: it is told here */
        }                                   /* its end: judged below */
    }
    /* a one-sided frame with data may come next (a read of mine is under way, or memory is
     * lent): when its header leads, it is read alone, so that its data go into place */
    if (!c->sink_left && !c->skip && c->scan == c->rx.tail && (c->reads || sk.lent) &&
        c->rx.cap - c->rx.tail >= SOCK_RMA_HDR) {
        sock_frame f;
        ssize_t k = recv(r->fd, &f, sizeof f, MSG_PEEK | MSG_DONTWAIT);
        if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
            errno != ECONNRESET)
            sock_io_failed(c, "read from"); /* a peek takes the socket's error: it is told here */
        if (k == (ssize_t)sizeof f) {
            unsigned kind = (f.check ^ f.len ^ SOCK_FRAME_MAGIC) >> 24;
            if ((kind == SOCK_FRAME_WRITE || kind == SOCK_FRAME_READR) &&
                f.len > sizeof(sock_rma)) {
                ssize_t k = recv(r->fd, c->rx.b + c->rx.tail, SOCK_RMA_HDR, MSG_DONTWAIT);
                if (k > 0) {
                    c->rx.tail += (size_t)k;
                    sock_rx_scan(c);
                }
            }
        }
    }
    ssize_t n;
    if (c->sink_left) {
        /* straight into the data's place, and what follows into the buffer */
        struct iovec v[SOCK_IOV_MAX + 1];
        int nv = 0;
        for (int i = c->sink_i; i < c->sink_n; i++)
            if (c->sink[i].iov_len)
                v[nv++] = c->sink[i];
        if (c->rx.cap > c->rx.tail)
            v[nv++] = (struct iovec){c->rx.b + c->rx.tail, c->rx.cap - c->rx.tail};
        struct msghdr mh = {.msg_iov = v, .msg_iovlen = (size_t)nv};
        n = recvmsg(r->fd, &mh, MSG_DONTWAIT);
        if (n > 0) {
            sock_read_mark(r);
            size_t took = (size_t)n < c->sink_left ? (size_t)n : c->sink_left;
            sock_sink_took(c, took);
            c->rx.tail += (size_t)n - took;
            sock_rx_scan(c);
            return 1;
        }
    } else {
        n = recv(r->fd, c->rx.b + c->rx.tail, c->rx.cap - c->rx.tail, MSG_DONTWAIT);
        if (n > 0) {
            sock_read_mark(r);
            c->rx.tail += (size_t)n;
            sock_rx_scan(c);
            return 1;
        }
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return 0;
    if (n == 0 || errno == ECONNRESET) {
        /* the end of the peer's stream: expected after its BYE (or on the socket it does not
         * send on, once it is done), an error otherwise */
        (void)epoll_ctl(sk.epfd, EPOLL_CTL_DEL, r->fd, NULL);
        r->eof = 1;
        c->eofs++;
        sock_frame f;
        while (!c->bye_in && !c->peeked && sock_rx_frame(c, &f) == SOCK_FRAME_BYE) {
            c->bye_in = 1;
            c->rx.head += sizeof f;
        }
        return 1; /* rx_peek judges it once what came before is consumed */
    }
    sock_io_failed(c, "read from");
}

/* ---- connections ----------------------------------------------------------------------- */

static void sock_conn_add_fd(fab_conn *c, int fd)
{
    if (c->nrefs == SOCK_FDS_MAX)
        util_die("sock: a third socket for the connection to %s", c->name);
    sock_ref *r = &c->refs[c->nrefs++];
    *r = (sock_ref){.kind = SOCK_REF_CONN, .fd = fd, .c = c};
    sock_watch(r);
}

/* one socket of c is done (a switch): closed, and no longer read */
static void sock_conn_drop_fd(fab_conn *c, int fd)
{
    for (int i = 0; i < c->nrefs; i++) {
        if (c->refs[i].fd != fd)
            continue;
        (void)epoll_ctl(sk.epfd, EPOLL_CTL_DEL, fd, NULL);
        if (c->refs[i].eof)
            c->eofs--;
        close(fd);
        if (i != --c->nrefs) {
            c->refs[i] = c->refs[c->nrefs];
            struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &c->refs[i]};
            (void)epoll_ctl(sk.epfd, EPOLL_CTL_MOD, c->refs[i].fd, &ev); /* gone after its end */
        }
        return;
    }
}

/* room in sk.conns for lpid (processes of other jobs come after my job's ranks) */
static void sock_conns_grow(int lpid)
{
    if (lpid < sk.nconns)
        return;
    int n = sk.nconns ? sk.nconns : 4;
    while (n <= lpid)
        n *= 2;
    sk.conns = util_realloc(sk.conns, (size_t)n * sizeof *sk.conns);
    for (int i = sk.nconns; i < n; i++)
        sk.conns[i] = NULL;
    sk.nconns = n;
}

static fab_conn *sock_conn_new(int peer, void *ctx)
{
    sock_conns_grow(peer);
    fab_conn *c = util_calloc(1, sizeof *c);
    c->peer = peer;
    c->ctx = ctx;
    c->tx_fd = c->own_fd = c->sw_fd = -1;
    c->tx.cap = c->rx.cap = sk.bufcap;
    c->tx.b = util_malloc(sk.bufcap);
    c->rx.b = util_malloc(sk.bufcap);
    snprintf(c->name, sizeof c->name, "%s", util_proc(peer));
    sk.conns[peer] = c;
    return c;
}

/* my hello goes first on a socket I opened */
static void sock_conn_hello(fab_conn *c)
{
    sock_hello h = {.version = SOCK_VERSION, .gid = sock_gid_self()};
    sock_tx_frame(c, SOCK_FRAME_HELLO, &h, sizeof h);
}

/* a daemon's data address ("<port>:<networks>") has only these characters, none of a card's
 * separators */
static int sock_daddr_ok(const char *daddr)
{
    return strspn(daddr, "0123456789.,/:") == strlen(daddr);
}

/* the card's parts: daemon "sock:d:<job>/<rank>/<token>[/<tree node>][@<daemon address>]",
 * self "sock:s:<node>/<port>"; the tree node (DCFA_SOCK_NODE, across hosts) is 0 when absent;
 * the daemon's address (DCFA_SOCK_DADDR, "<port>:<networks>", when it has a data port) goes
 * into daddr[daddrlen] ("" when absent), NULL: not wanted */
static int sock_card_daemon(const char *card, char *job, size_t joblen, int *rank, uint64_t *token,
                            int *node, char *daddr, size_t daddrlen)
{
    const char *s = card + 7, *slash = strchr(s, '/');
    if (strncmp(card, "sock:d:", 7) != 0 || !slash || (size_t)(slash - s) >= joblen)
        return UTIL_EPROTO;
    memcpy(job, s, (size_t)(slash - s));
    job[slash - s] = 0;
    char *end;
    long r = strtol(slash + 1, &end, 10);
    if (*end != '/' || r < 0 || r > FAB_RANK_MAX)
        return UTIL_EPROTO;
    *rank = (int)r;
    unsigned long long t = strtoull(end + 1, &end, 16);
    long v = 0;
    if (*end == '/')
        v = strtol(end + 1, &end, 10);
    if ((*end != 0 && *end != '@') || v < 0 || v > INT32_MAX)
        return UTIL_EPROTO;
    const char *at = *end == '@' ? end + 1 : "";
    if (!sock_daddr_ok(at) || (daddr != NULL && strlen(at) >= daddrlen))
        return UTIL_EPROTO;
    if (daddr != NULL)
        memcpy(daddr, at, strlen(at) + 1);
    *token = t;
    *node = (int)v;
    return UTIL_OK;
}

static int sock_card_self(const char *card, int *port)
{
    const char *node = util_node_key();
    size_t nl = strlen(node);
    if (strncmp(card, "sock:s:", 7) != 0 || strncmp(card + 7, node, nl) != 0 || card[7 + nl] != '/')
        return UTIL_EPROTO;
    char *end;
    long v = strtol(card + 8 + nl, &end, 10);
    if (*end != 0 || v <= 0 || v > 65535)
        return UTIL_EPROTO;
    *port = (int)v;
    return UTIL_OK;
}

static int sock_ep_send(const sock_ep_msg *m)
{
    for (;;) {
        ssize_t n = send(sk.ep_fd, m, sizeof *m, MSG_NOSIGNAL);
        if (n == (ssize_t)sizeof *m)
            return UTIL_OK;
        if (n < 0 && errno == EINTR)
            continue;
        util_log("sock: cannot write to the assist daemon's endpoint channel: %m");
        return UTIL_ECONN;
    }
}

static int sock_connect(int peer, const char *card, int passive, void *ctx, fab_conn **out,
                        void **rx_ring)
{
    *rx_ring = NULL;
    if (peer < 0 || peer == sk.p.self || (peer < sk.nconns && sk.conns[peer]))
        return UTIL_EINVAL;
    if (passive) {
        /* incoming() for a socket already here (sock_pend_done made the connection) */
        return UTIL_EINVAL;
    }
    fab_conn *c = sock_conn_new(peer, ctx);
    if (sk.daemon) {
        sock_ep_msg m = {.magic = SOCK_EP_MAGIC, .version = SOCK_VERSION, .type = SOCK_EP_REQUEST};
        /* text: the peer's daemon's address, for this daemon when the peer's is another
         * mpirun's on another host */
        if (sock_card_daemon(card, m.job, sizeof m.job, &m.rank, &m.token, &m.node, m.text,
                             sizeof m.text) != UTIL_OK) {
            util_log("sock: %s's card '%s' is not one of a daemon's endpoint", c->name, card);
            goto fail;
        }
        c->req_seq = m.seq = ++sk.seq;
        if (sock_ep_send(&m) != UTIL_OK)
            goto fail;
        /* the daemons make the connection: a wait until the grant yields them the core */
        c->asking = 1;
        util_backoff_hold(1);
    } else {
        int port;
        if (sock_card_self(card, &port) != UTIL_OK) {
            util_log("sock: %s's card '%s' names no listening socket of this node", c->name, card);
            goto fail;
        }
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = {.sin_family = AF_INET,
                                .sin_port = htons((uint16_t)port),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        /* blocking connect to loopback: immediate (the listener's backlog takes it) */
        if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
            util_log("sock: cannot connect to %s at 127.0.0.1:%d: %m", c->name, port);
            if (fd >= 0)
                close(fd);
            goto fail;
        }
        sock_nonblock(fd);
        c->tx_fd = c->own_fd = fd;
        sock_conn_add_fd(c, fd);
    }
    sock_conn_hello(c);
    (void)sock_tx_flush(c);
    if (c->tx.head != c->tx.tail)
        sock_flush_add(c);
    *out = c;
    sk.p.up->ready(ctx, UTIL_OK); /* packets may be queued from now on */
    return UTIL_OK;
fail:
    sk.conns[peer] = NULL;
    free(c->tx.b);
    free(c->rx.b);
    free(c);
    return UTIL_ECONN;
}

/* a socket whose hello arrived from lpid: it becomes the connection's (made now, through the
 * core, when there is none) */
static void sock_pend_done(sock_pend *p, int lpid, fab_gid gid)
{
    fab_conn *c = lpid >= 0 && lpid < sk.nconns ? sk.conns[lpid] : NULL;
    int fd = p->ref.fd;
    if (lpid < 0 || lpid == sk.p.self) {
        util_log("sock: a connection from %s, which this process does not know: closed",
                 lpid < 0 ? "a process of another job" : util_proc(lpid));
        close(fd);
        return;
    }
    if (!c) {
        /* the core makes its side now: incoming() calls connect(passive = 1), which takes
         * this connection (no ctx yet) and sends on the peer's socket */
        c = sock_conn_new(lpid, NULL);
        c->tx_fd = fd;
        sock_conn_add_fd(c, fd);
        if (sk.p.up->incoming(&fab_sock_ops, lpid) != UTIL_OK)
            util_die("sock: cannot accept the connection %s opened", c->name);
        return;
    }
    /* both opened at once: I read it; the lower gid's socket carries both directions */
    sock_conn_add_fd(c, fd);
    if (gid < sock_gid_self()) {
        c->sw_fd = fd;
        sock_switch_start(c);
    }
}

/* read the hello of a socket not known yet */
static void sock_pend_read(sock_pend *p)
{
    ssize_t n = recv(p->ref.fd, p->buf + p->got, sizeof p->buf - p->got, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    const char *why = NULL;
    if (n <= 0)
        why = n == 0 ? "it closed before its hello" : "it failed before its hello";
    else if ((p->got += (size_t)n) < sizeof p->buf)
        return;
    sock_frame f;
    sock_hello h;
    memcpy(&f, p->buf, sizeof f);
    memcpy(&h, p->buf + sizeof f, sizeof h);
    int lpid = -1;
    if (!why && (f.len != sizeof h || f.check != sock_frame_check(f.len, SOCK_FRAME_HELLO) ||
                 h.version != SOCK_VERSION))
        why = "its first frame is no hello of this version";
    if (!why) {
        lpid = sock_lpid_of(h.gid);
        if (p->daemon_rank >= 0 && lpid != p->daemon_rank)
            why = "its hello names another process than the daemon said";
        else if (lpid < 0 && FAB_GID_JOB(h.gid) != sk.job_hash) {
            /* a process of another job whose inter-communicator this process has not built
             * yet (its leader's broadcast is on its way): keep the socket until it is known */
            p->parked = 1;
            p->gid = h.gid;
            (void)epoll_ctl(sk.epfd, EPOLL_CTL_DEL, p->ref.fd, NULL);
            return;
        }
    }
    /* off the pending list */
    for (sock_pend **pp = &sk.pend; *pp; pp = &(*pp)->next)
        if (*pp == p) {
            *pp = p->next;
            break;
        }
    (void)epoll_ctl(sk.epfd, EPOLL_CTL_DEL, p->ref.fd, NULL);
    if (why) {
        util_log("sock: a connection %s was refused: %s",
                 p->daemon_rank >= 0 ? "handed over" : "accepted", why);
        close(p->ref.fd);
    } else {
        sock_pend_done(p, lpid, h.gid);
    }
    free(p);
}

static void sock_pend_add(int fd, int daemon_rank)
{
    sock_nonblock(fd);
    sock_pend *p = util_calloc(1, sizeof *p);
    p->ref = (sock_ref){.kind = SOCK_REF_PENDING, .fd = fd, .p = p};
    p->daemon_rank = daemon_rank;
    p->next = sk.pend;
    sk.pend = p;
    sock_watch(&p->ref);
}

/* one message from the daemon: a grant or refusal of my request, or a peer's socket */
static int sock_ep_read(void)
{
    sock_ep_msg m;
    char cbuf[CMSG_SPACE(sizeof(int))];
    struct iovec iov = {.iov_base = &m, .iov_len = sizeof m};
    struct msghdr mh = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
    /* what came while a segment request waited (--isolate shm) first */
    int fd = -1;
    ssize_t n = util_epch_take(&m, sizeof m, &fd);
    if (n == 0)
        n = recvmsg(sk.ep_fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    else
        mh.msg_controllen = 0;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return 0;
    if (n == 0)
        util_die("sock: the assist daemon closed the endpoint channel (it ended)");
    if (n < 0)
        util_die("sock: cannot read the assist daemon's endpoint channel: %m");
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm && fd < 0; cm = CMSG_NXTHDR(&mh, cm))
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
            cm->cmsg_len == CMSG_LEN(sizeof(int)))
            memcpy(&fd, CMSG_DATA(cm), sizeof fd);
    int stype = 0;
    socklen_t sl = sizeof stype;
    int is_stream =
        fd >= 0 && getsockopt(fd, SOL_SOCKET, SO_TYPE, &stype, &sl) == 0 && stype == SOCK_STREAM;
    if (n != (ssize_t)sizeof m || m.magic != SOCK_EP_MAGIC || m.version != SOCK_VERSION ||
        (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
        util_die(
            "sock: a malformed message from the assist daemon on the endpoint channel (%zd bytes)",
            n);
    m.job[sizeof m.job - 1] = 0;
    m.text[sizeof m.text - 1] = 0;
    fab_conn *c = NULL;
    if (m.type == SOCK_EP_GRANT || m.type == SOCK_EP_REFUSE)
        for (int i = 0; i < sk.nconns && !c; i++)
            if (sk.conns[i] && sk.conns[i]->req_seq == m.seq && sk.conns[i]->tx_fd < 0)
                c = sk.conns[i];
    switch (m.type) {
    case SOCK_EP_GRANT:
        if (!c)
            util_die("sock: the assist daemon granted request %u, which this process has not made",
                     m.seq);
        if (!is_stream)
            util_die("sock: the assist daemon answered request %u (a connection to %s) with %s",
                     m.seq, c->name, fd < 0 ? "no socket" : "an fd that is no stream socket");
        sock_nonblock(fd);
        c->tx_fd = c->own_fd = fd;
        c->asking = 0;
        util_backoff_hold(-1);
        sock_conn_add_fd(c, fd);
        if (!sock_tx_flush(c))
            sock_flush_add(c);
        sock_switch_start(c); /* the peer's socket came first */
        return 1;
    case SOCK_EP_REFUSE:
        if (fd >= 0)
            close(fd);
        util_die("sock: the assist daemon refused request %u (a connection to %s): %s", m.seq,
                 c ? c->name : "an unknown peer", m.text);
    case SOCK_EP_INCOMING:
        if (!is_stream)
            util_die("sock: the assist daemon handed over %s from %s rank %d",
                     fd < 0 ? "no socket" : "an fd that is no stream socket", m.job, (int)m.rank);
        /* a process of another job (spawn, ports): its hello names it */
        sock_pend_add(fd, strcmp(m.job, sk.p.job_id) == 0 ? m.rank : -1);
        return 1;
    default:
        util_die("sock: a message of unknown type %u from the assist daemon", m.type);
    }
}

static void sock_accept(void)
{
    for (;;) {
        int fd = accept4(sk.lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED)
                util_log("sock: accept: %m");
            return;
        }
        sock_pend_add(fd, -1);
    }
}

static int sock_poll(void)
{
    int events = 0;
    for (int i = 0; i < sk.ndone; i++) { /* a completion may start the next operation */
        sock_done d = sk.done[i];
        d.op->done(d.op, d.status);
        events++;
    }
    sk.ndone = 0;
    for (int i = 0; i < sk.nflush;) {
        fab_conn *c = sk.flush[i];
        if (sock_tx_flush(c)) {
            c->in_flush = 0;
            sk.flush[i] = sk.flush[--sk.nflush];
            events++;
        } else {
            i++;
        }
    }
    while (sk.ep_fd >= 0 && util_epch_pending())
        events += sock_ep_read();
    for (sock_pend **pp = &sk.pend; *pp;) { /* parked sockets whose process became known */
        sock_pend *p = *pp;
        int lpid = p->parked ? sock_lpid_of(p->gid) : -1;
        if (lpid < 0) {
            pp = &p->next;
            continue;
        }
        *pp = p->next;
        sock_pend_done(p, lpid, p->gid);
        free(p);
        events++;
    }
    struct epoll_event ev[32];
    int n = epoll_wait(sk.epfd, ev, 32, 0);
    for (int i = 0; i < n; i++) {
        sock_ref *r = ev[i].data.ptr;
        switch (r->kind) {
        case SOCK_REF_CONN:
            events += sock_rx_read(r->c, r);
            break;
        case SOCK_REF_PENDING:
            sock_pend_read(r->p);
            events++;
            break;
        case SOCK_REF_LISTEN:
            sock_accept();
            events++;
            break;
        case SOCK_REF_EP:
            events += sock_ep_read();
            break;
        }
    }
    return events;
}

/* an idle wait sleeps on the epoll descriptor (packets, connections, the daemon's channel)
 * and on the sockets with bytes waiting to be sent (room) */
static int sock_wait_fds(struct pollfd *fds, int cap)
{
    if (sk.ndone || (sk.ep_fd >= 0 && util_epch_pending()) || sk.nflush + 1 > cap)
        return -1;
    for (sock_pend *p = sk.pend; p; p = p->next)
        if (p->parked)
            return -1; /* taken in once its process is known, not by a descriptor */
    /* every socket read since the last sleep acknowledges now (util_tcp_ack_now) */
    for (int i = 0; i < sk.nreads; i++)
        util_tcp_ack_now(sk.reads[i]);
    sk.nreads = 0;
    sk.wait_gen++;
    int n = 0;
    fds[n++] = (struct pollfd){.fd = sk.epfd, .events = POLLIN};
    for (int i = 0; i < sk.nflush; i++)
        fds[n++] = (struct pollfd){.fd = sk.flush[i]->tx_fd, .events = POLLOUT};
    return n;
}

/* the core asks (incoming): the connection made in sock_pend_done is the one */
static int sock_connect_entry(int peer, const char *card, int passive, void *ctx, fab_conn **out,
                              void **rx_ring)
{
    if (passive && peer >= 0 && peer < sk.nconns && sk.conns[peer] && !sk.conns[peer]->ctx) {
        fab_conn *c = sk.conns[peer];
        *rx_ring = NULL;
        c->ctx = ctx; /* no hello: the peer knows who is on the socket it opened */
        *out = c;
        sk.p.up->ready(ctx, UTIL_OK);
        return UTIL_OK;
    }
    return sock_connect(peer, card, passive, ctx, out, rx_ring);
}

/* wait until everything of c is sent (finalize), at most a few seconds */
static void sock_drain_tx(fab_conn *c)
{
    for (int waited = 0; !sock_tx_flush(c) && waited < 10000; waited++) {
        struct pollfd pf = {.fd = c->tx_fd, .events = POLLOUT};
        (void)poll(&pf, 1, 1);
    }
}

static void sock_disconnect(fab_conn *c)
{
    c->closing = 1;
    c->ctx = NULL;
    sock_tx_frame(c, SOCK_FRAME_BYE, NULL, 0);
    sock_drain_tx(c);
    if (c->tx_fd >= 0)
        (void)shutdown(c->tx_fd, SHUT_WR);
    for (int i = 0; i < c->nrefs; i++)
        if (c->refs[i].fd != c->tx_fd)
            (void)shutdown(c->refs[i].fd, SHUT_WR);
}

static void sock_conn_free(fab_conn *c);

/* the core drops a connection (MPI_Comm_disconnect, finalize): one to a process of another job
 * is freed now, since a later communicator with that process connects anew */
static void sock_disconnect_drop(fab_conn *c)
{
    sock_disconnect(c);
    if (c->peer >= sk.p.nprocs && c->peer < sk.nconns && sk.conns[c->peer] == c) {
        sk.conns[c->peer] = NULL;
        sock_conn_free(c);
    }
}

static void sock_conn_free(fab_conn *c)
{
    if (c->asking)
        util_backoff_hold(-1);
    for (int i = 0; i < sk.nflush; i++)
        if (sk.flush[i] == c)
            sk.flush[i--] = sk.flush[--sk.nflush];
    for (int i = 0; i < c->nrefs; i++) {
        /* wait briefly for the peer's end so that closing sends no reset over its last bytes */
        char tmp[256];
        struct pollfd pf = {.fd = c->refs[i].fd, .events = POLLIN};
        for (int k = 0; k < 200 && poll(&pf, 1, 10) > 0; k++)
            if (recv(c->refs[i].fd, tmp, sizeof tmp, MSG_DONTWAIT) <= 0)
                break;
        close(c->refs[i].fd);
    }
    while (c->seg_head) {
        sock_seg *s = c->seg_head;
        c->seg_head = s->next;
        free(s);
    }
    while (c->reads) {
        sock_read *r = c->reads;
        c->reads = r->next;
        free(r);
    }
    free(c->sink_read);
    free(c->tx.b);
    free(c->rx.b);
    free(c);
}

/* ---- the endpoint ---------------------------------------------------------------------- */

static int sock_open(const fab_params *p, char *card, size_t cardlen)
{
    sk.p = *p;
    sk.job_hash = fab_job_hash(p->job_id);
    /* packets as large as DCFA_SOCK_EAGER_LIMIT (as ofi's: between hosts a rendezvous costs
     * round trips, and over a stream socket its data travel as packets anyway) */
    size_t block = p->block_size ? p->block_size : 64;
    if (util_cfg.sock_eager_limit > sk.p.packet_max)
        sk.p.packet_max = (util_cfg.sock_eager_limit + block - 1) / block * block;
    /* room for two largest frames at least; what does not fit waits in the kernel's buffers
     * (receiving) or in the core's backlog (sending: tx_block gives NULL) */
    sk.bufcap = SOCK_BUF_BYTES + 2 * (sk.p.packet_max + 64);
    sk.nblocks = p->nblocks;
    size_t kmax = (sk.p.packet_max + block - 1) / block; /* the largest packet's blocks */
    while (((size_t)sk.nblocks * block < util_cfg.sock_credit || sk.nblocks < 2 * kmax) &&
           sk.nblocks < (1u << 24))
        sk.nblocks *= 2;
    sk.nconns = p->nprocs;
    sk.conns = util_calloc((size_t)p->nprocs, sizeof *sk.conns);
    sk.epfd = epoll_create1(EPOLL_CLOEXEC);
    if (sk.epfd < 0) {
        util_log("sock: epoll_create1: %m");
        return UTIL_ENOMEM;
    }
    const char *epfd = getenv("DCFA_SOCK_EP_FD");
    const char *token = getenv("DCFA_SOCK_TOKEN");
    int have_daemon = epfd && *epfd && token && strlen(token) == 16;
    sk.daemon = util_cfg.sock_connect == 1 || (util_cfg.sock_connect == 0 && have_daemon);
    int n;
    if (sk.daemon) {
        if (!have_daemon) {
            util_log("sock: DCFA_SOCK_CONNECT=daemon, but no daemon offers endpoints "
                     "(DCFA_SOCK_EP_FD and DCFA_SOCK_TOKEN unset: not started by our mpirun?)");
            goto fail;
        }
        sk.ep_fd = atoi(epfd);
        int stype = 0;
        socklen_t sl = sizeof stype;
        if (getsockopt(sk.ep_fd, SOL_SOCKET, SO_TYPE, &stype, &sl) != 0 ||
            stype != SOCK_SEQPACKET) {
            util_log("sock: DCFA_SOCK_EP_FD=%s is not the assist daemon's endpoint channel", epfd);
            goto fail;
        }
        (void)fcntl(sk.ep_fd, F_SETFD, FD_CLOEXEC);
        snprintf(sk.token, sizeof sk.token, "%s", token);
        sk.epref = (sock_ref){.kind = SOCK_REF_EP, .fd = sk.ep_fd};
        sock_watch(&sk.epref);
        /* and the tree node of my daemon, across hosts: a hint for a peer's daemon that does
         * not know where my job runs (a spawned job's, docs/launcher.md) */
        const char *node = getenv("DCFA_SOCK_NODE");
        int nv = node != NULL ? atoi(node) : 0;
        if (nv > 0)
            n = snprintf(card, cardlen, "sock:d:%s/%d/%s/%d", p->job_id, p->self, sk.token, nv);
        else
            n = snprintf(card, cardlen, "sock:d:%s/%d/%s", p->job_id, p->self, sk.token);
        /* and my daemon's data port, for the daemon of another mpirun on another host */
        const char *daddr = getenv("DCFA_SOCK_DADDR");
        if (daddr != NULL && *daddr != 0 && n > 0 && (size_t)n < cardlen &&
            strlen(daddr) < SOCK_EP_TEXT_MAX && sock_daddr_ok(daddr))
            n += snprintf(card + n, cardlen - (size_t)n, "@%s", daddr);
    } else {
        sk.lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t al = sizeof a;
        if (sk.lfd < 0 || bind(sk.lfd, (struct sockaddr *)&a, sizeof a) != 0 ||
            listen(sk.lfd, 128) != 0 || getsockname(sk.lfd, (struct sockaddr *)&a, &al) != 0) {
            util_log("sock: cannot listen on 127.0.0.1: %m");
            goto fail;
        }
        sk.lref = (sock_ref){.kind = SOCK_REF_LISTEN, .fd = sk.lfd};
        sock_watch(&sk.lref);
        n = snprintf(card, cardlen, "sock:s:%s/%d", util_node_key(), ntohs(a.sin_port));
    }
    if (n < 0 || (size_t)n >= cardlen || strpbrk(card, " ;")) {
        util_log("sock: the card does not fit, or the job id or node key has ' ' or ';'");
        goto fail;
    }
    sk.caps = (fab_caps){.provider = sk.daemon ? "daemon" : "self",
                         .flags = FAB_CAP_RX_QUEUE | FAB_CAP_WAIT_FD |
                                  (util_cfg.sock_rma ? FAB_CAP_RMA : 0),
                         .priority = 40,
                         .inline_limit = 0,
                         .eager_limit = util_cfg.sock_eager_limit,
                         .max_bulk = util_cfg.sock_rma ? SOCK_RMA_MAX : 0,
                         .poll_interval = 1};
    sk.open = 1;
    return UTIL_OK;
fail:
    if (sk.lfd >= 0)
        close(sk.lfd);
    sk.lfd = -1;
    close(sk.epfd);
    sk.epfd = -1;
    free(sk.conns);
    sk.conns = NULL;
    return UTIL_ECONN;
}

static void sock_close(void)
{
    if (!sk.open)
        return;
    for (int i = 0; i < sk.nconns; i++)
        if (sk.conns[i]) {
            if (!sk.conns[i]->closing)
                sock_disconnect(sk.conns[i]);
            sock_conn_free(sk.conns[i]);
        }
    while (sk.pend) {
        sock_pend *p = sk.pend;
        sk.pend = p->next;
        close(p->ref.fd);
        free(p);
    }
    free(sk.conns);
    free(sk.flush);
    free(sk.loans);
    free(sk.done);
    free(sk.reads);
    sk.reads = NULL;
    sk.nreads = sk.reads_cap = 0;
    sk.conns = NULL;
    sk.flush = NULL;
    sk.loans = NULL;
    sk.done = NULL;
    sk.nflush = sk.flush_cap = sk.nloans = sk.lent = sk.ndone = sk.done_cap = 0;
    sk.loan_free = -1;
    if (sk.lfd >= 0)
        close(sk.lfd);
    close(sk.epfd);
    sk.lfd = sk.epfd = -1;
    sk.open = 0;
}

static const fab_caps *sock_caps(void) { return &sk.caps; }

static int sock_reachable(const char *card)
{
    char job[SOCK_EP_JOB_MAX];
    int rank, port, node;
    uint64_t token;
    if (sk.daemon)
        return sock_card_daemon(card, job, sizeof job, &rank, &token, &node, NULL, 0) == UTIL_OK;
    return sock_card_self(card, &port) == UTIL_OK;
}

static void sock_footprint(fab_conn *c, fab_usage *u)
{
    memset(u, 0, sizeof *u);
    if (c) {
        u->rings = c->tx.cap + c->rx.cap; /* the send and receive buffers */
        u->endpoint = sizeof *c;
    } else
        u->endpoint = (size_t)sk.nconns * sizeof *sk.conns;
}

static unsigned sock_ring_blocks(const char *card)
{
    (void)card;
    return sk.nblocks; /* from tunables that must agree: the same at both ends */
}

static const fab_chan_ops sock_chan = {
    .ring_blocks = sock_ring_blocks,
    .connect = sock_connect_entry,
    .disconnect = sock_disconnect_drop,
    .tx_block = sock_tx_block,
    .tx_post = sock_tx_post,
    .rx_peek = sock_rx_peek,
    .rx_free = sock_rx_free,
};

static const fab_mr_ops sock_mr = {
    .reg = sock_reg,
    .dereg = sock_dereg,
    .release = sock_release,
};

static const fab_rma_ops sock_rma_ops = {
    .read = sock_rma_read,
    .write = sock_rma_write,
};

const fab_ops fab_sock_ops = {
    .name = "sock",
    .open = sock_open,
    .close = sock_close,
    .caps = sock_caps,
    .reachable = sock_reachable,
    .poll = sock_poll,
    .footprint = sock_footprint,
    .wait_fds = sock_wait_fds,
    .chan = &sock_chan,
    .mr = &sock_mr,
    .rma = &sock_rma_ops,
};
