/* The gateway's wire (docs/gateway.md), shared by the gw fabric (src/fabric/gw/gw.c) and the
 * gateway daemon (tools/mpirun/ad_gateway.c); header-only, mpirun does not link libmpi.
 *
 * A process talks to a gateway over one TCP connection, the gateway to the process the same
 * way; every frame begins with this 32-byte header, in the byte order of the machines (all
 * hosts of a job are of one architecture), followed by `len` bytes:
 *
 *   HELLO    process -> gateway, first frame: src = the process's gid (fab_gid), arg = the
 *            largest frame payload it will send; len 0
 *   WELCOME  gateway -> process, the answer: arg = the tokens it starts with; len 0
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
#include <sys/socket.h>
#include <sys/uio.h>

#define GW_WIRE_VERSION 1
#define GW_FRAME_MAX    (4u << 20) /* no frame payload is larger */

enum gw_kind { GW_HELLO = 1, GW_WELCOME = 2, GW_DATA = 3, GW_TOKENS = 4 };

typedef struct gw_frame {
    uint32_t len;    /* payload bytes after the header */
    uint8_t kind;    /* enum gw_kind */
    uint8_t version; /* GW_WIRE_VERSION */
    uint16_t flags;  /* 0 */
    uint32_t arg;    /* HELLO: largest payload; WELCOME, TOKENS: tokens */
    uint32_t reserved;
    uint64_t dst; /* DATA: the final destination's gid */
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

#endif
