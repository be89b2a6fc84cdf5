/* The gateway's wire (docs/gateway.md), shared by the gw fabric (src/fabric/gw/gw.c) and the
 * gateway daemon (tools/mpirun/ad_gateway.c); header-only, mpirun does not link libmpi.
 *
 * A process talks to a gateway over one TCP connection, the gateway to the process the same
 * way; every frame begins with this 32-byte header, in the byte order of the machines (all
 * hosts of a job are of one architecture), followed by `len` bytes:
 *
 *   CHALLENGE gateway -> process, first frame on a new connection: dst = a random nonce; len 0
 *   HELLO    process -> gateway, the answer: src = the process's gid (fab_gid), arg = the
 *            largest frame payload it will send, dst = gw_hello_mac(the job's gateway key,
 *            src, the nonce); len 0. The key (DCFA_GATEWAY_KEY, 128 bits drawn by mpirun
 *            --gateways, given to its daemons with SETUP over the tree and to the ranks in
 *            their environment) proves the process is one of the job's: without it nobody
 *            can take a gid's frames (the gateway forwards a gid's frames to the connection
 *            that said HELLO as it) nor inject frames into the job
 *   WELCOME  gateway -> process, the answer: arg = the tokens it starts with; len 0
 *   PROXY    process -> gateway, instead of HELLO: src = gw_proxy_target(IPv4 address, TCP
 *            port) on one of the gateway's networks, dst = gw_proxy_mac(key, src, nonce); the
 *            gateway connects there and answers PROXY with arg = 0 (then the connection
 *            carries raw bytes both ways, spliced) or an errno (then it closes). For a TCP
 *            connection a process cannot make itself: the port of MPI_Comm_accept on the
 *            other network (a spawn onto it, docs/gateway.md "Ports through a gateway")
 *   DATA     either way: a packet of the protocol engine (its wire_hdr: type, context, tag,
 *            source rank, sequence, credit..., then its payload) from process src for
 *            process dst; towards the gateway it uses one token
 *   TOKENS   gateway -> process: arg tokens back (that many of its DATA frames left the
 *            gateway); len 0 */
#ifndef DCFA_GW_WIRE_H
#define DCFA_GW_WIRE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#define GW_WIRE_VERSION 2
#define GW_FRAME_MAX    (4u << 20) /* no frame payload is larger */

enum gw_kind {
    GW_HELLO = 1,
    GW_WELCOME = 2,
    GW_DATA = 3,
    GW_TOKENS = 4,
    GW_CHALLENGE = 5,
    GW_PROXY = 6
};

typedef struct gw_frame {
    uint32_t len;    /* payload bytes after the header */
    uint8_t kind;    /* enum gw_kind */
    uint8_t version; /* GW_WIRE_VERSION */
    uint16_t flags;  /* 0 */
    uint32_t arg;    /* HELLO: largest payload; WELCOME, TOKENS: tokens */
    uint32_t reserved;
    uint64_t dst; /* DATA: the final destination's gid; CHALLENGE: nonce; HELLO: its MAC */
    uint64_t src; /* DATA, HELLO: the sender's gid */
} gw_frame;

_Static_assert(sizeof(gw_frame) == 32, "the gateway header is 32 bytes");
_Static_assert(offsetof(gw_frame, dst) == 16, "dst at 16");
_Static_assert(offsetof(gw_frame, src) == 24, "src at 24");

/* A frame held by either end: its header, then its payload (contiguous, so it goes out as
 * one iovec); `next` links queues and free lists. */
typedef struct gw_buf {
    struct gw_buf *next;
    size_t total; /* header + payload */
    size_t off;   /* written so far */
    int from;     /* the gateway: the connection it came from (its token), -1 its own */
    gw_frame h;
    unsigned char pkt[];
} gw_buf;
_Static_assert(offsetof(gw_buf, pkt) == offsetof(gw_buf, h) + sizeof(gw_frame),
               "the payload follows its frame header");
_Static_assert(offsetof(gw_buf, pkt) % 8 == 0, "payloads are 8-byte aligned");

/* Write the queue *q (tail *tail) to the non-blocking socket fd as far as it takes it; each
 * frame written whole leaves the queue through done(b, arg). 0, or -errno: the socket broke. */
static inline int gw_queue_write(int fd, gw_buf **q, gw_buf **tail, void (*done)(gw_buf *, void *),
                                 void *arg)
{
    while (*q) {
        struct iovec iov[64];
        int k = 0;
        for (gw_buf *b = *q; b && k < 64; b = b->next, k++)
            iov[k] = (struct iovec){(char *)&b->h + b->off, b->total - b->off};
        struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)k};
        ssize_t n = sendmsg(fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -errno;
        size_t left = (size_t)n;
        while (*q && left >= (*q)->total - (*q)->off) {
            gw_buf *b = *q;
            left -= b->total - b->off;
            *q = b->next;
            if (!*q)
                *tail = NULL;
            done(b, arg);
        }
        if (*q)
            (*q)->off += left;
        if (left || n == 0)
            return 0; /* the socket is full */
    }
    return 0;
}

/* Reading a connection, the same at both ends (the gw fabric's gw_read, the gateway daemon's):
 * each recvmsg takes the rest of the frame being read straight into its buffer and up to
 * GW_READ_AHEAD bytes after it (the next headers, small frames, TOKENS). So a stream of large
 * frames costs about one system call each, many small frames share one, and at most
 * GW_READ_AHEAD bytes of a large frame's payload are copied out of the read-ahead. The caller
 * parses the frames whole at the start of ib (gw_reader_take: their bytes leave it) and,
 * for a frame begun there whose payload goes on, sets `in` (holding `ingot` bytes of it). */
enum { GW_READ_AHEAD = 4096 };

typedef struct gw_reader {
    unsigned char *ib; /* the read-ahead (GW_READ_AHEAD bytes, taken at the first read) */
    size_t ilen;       /* bytes in ib, from its start */
    gw_buf *in;        /* a frame whose payload is being read (straight into it), or NULL */
    size_t ingot;      /* bytes of its payload read */
} gw_reader;

/* One recvmsg from the non-blocking socket fd into r. Returns the bytes read (> 0), 0 at end
 * of file, or -errno (-EAGAIN: nothing to read; -ENOMEM: no read-ahead). With bytes: *whole
 * is the frame r->in completed (taken from r, the caller's now) or NULL, the rest of the bytes
 * are in r->ib, and *drained says the socket gave less than asked (it had no more: wait for
 * poll rather than try again). */
static inline ssize_t gw_reader_recv(int fd, gw_reader *r, gw_buf **whole, int *drained)
{
    *whole = NULL;
    *drained = 0;
    if (!r->ib && !(r->ib = malloc(GW_READ_AHEAD)))
        return -ENOMEM;
    struct iovec iov[2];
    int k = 0;
    if (r->in)
        iov[k++] = (struct iovec){r->in->pkt + r->ingot, r->in->h.len - r->ingot};
    iov[k++] = (struct iovec){r->ib + r->ilen, GW_READ_AHEAD - r->ilen};
    size_t want = iov[0].iov_len + (k > 1 ? iov[1].iov_len : 0);
    struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)k};
    ssize_t n;
    while ((n = recvmsg(fd, &mh, MSG_DONTWAIT)) < 0 && errno == EINTR)
        ;
    if (n < 0)
        return errno == EWOULDBLOCK ? -EAGAIN : -errno;
    if (n == 0)
        return 0;
    size_t got = (size_t)n;
    if (r->in) {
        size_t t = r->in->h.len - r->ingot;
        t = got < t ? got : t;
        r->ingot += t;
        got -= t;
        if (r->ingot == r->in->h.len) {
            *whole = r->in;
            r->in = NULL;
        }
    }
    r->ilen += got;
    *drained = (size_t)n < want;
    return n;
}

/* the first `used` bytes of r's read-ahead are parsed: drop them */
static inline void gw_reader_take(gw_reader *r, size_t used)
{
    memmove(r->ib, r->ib + used, r->ilen - used);
    r->ilen -= used;
}

/* r's buffers freed (its connection closed) */
static inline void gw_reader_free(gw_reader *r)
{
    free(r->in);
    free(r->ib);
    *r = (gw_reader){0};
}

#ifndef GW_WIRE_FRAMES_ONLY /* (a test program that plays a stranger: no key, no util) */
#include "util/util.h"

/* the MAC a HELLO carries: SipHash-2-4 under the job's gateway key of a label, the gid and
 * the gateway's nonce */
static inline uint64_t gw_hello_mac(const uint64_t key[2], uint64_t gid, uint64_t nonce)
{
    uint64_t m[3] = {0x6477682d6f6c6c65ull /* a label: this MAC is a HELLO's */, gid, nonce};
    return util_siphash(key, m, sizeof m);
}

/* a PROXY's target, and its MAC (another label than HELLO's: one cannot stand for the other) */
static inline uint64_t gw_proxy_target(uint32_t addr, uint16_t port)
{
    return (uint64_t)addr << 16 | port;
}

static inline uint64_t gw_proxy_mac(const uint64_t key[2], uint64_t target, uint64_t nonce)
{
    uint64_t m[3] = {0x79786f72702d7767ull /* a label: this MAC is a PROXY's */, target, nonce};
    return util_siphash(key, m, sizeof m);
}

/* DCFA_GATEWAY_KEY's text (32 hex digits) as a key: 0, or -1 if it is not one */
static inline int gw_key_parse(const char *hex, uint64_t key[2])
{
    if (!hex || strspn(hex, "0123456789abcdefABCDEF") != 32 || hex[32] != '\0')
        return -1;
    for (int w = 0; w < 2; w++) {
        uint64_t v = 0;
        for (int i = 0; i < 16; i++) {
            char c = hex[16 * w + i];
            v = v << 4 | (uint64_t)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
        }
        key[w] = v;
    }
    return 0;
}
#endif
#endif
