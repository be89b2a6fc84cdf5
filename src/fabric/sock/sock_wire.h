/* The sock fabric's messages (docs/fabric.md "sock"), shared by the library and the assist
 * daemon (tools/mpirun/ad_ep.c).
 *
 * On a connection's stream every packet is a frame: an 8-byte header and the packet, padded to
 * 8 bytes. The first frame on a socket is the hello of the process that opened it.
 *
 * The endpoint channel: a SOCK_SEQPACKET socketpair the daemon makes per rank at launch (the
 * rank's end is DCFA_SOCK_EP_FD). Each message is one sock_ep_msg; GRANT and INCOMING carry
 * one connected stream socket as SCM_RIGHTS. */
#ifndef DCFA_SOCK_WIRE_H
#define DCFA_SOCK_WIRE_H

#include <stddef.h>
#include <stdint.h>

/* ---- frames on a connection ---------------------------------------------------------- */

#define SOCK_FRAME_MAGIC 0x5dcfa000u /* in check: len ^ magic ^ kind */
enum sock_frame_kind {
    SOCK_FRAME_PACKET = 1, /* the core's packet of len bytes follows */
    SOCK_FRAME_HELLO = 2,  /* a sock_hello follows (the first frame of a socket) */
    SOCK_FRAME_BYE = 3,    /* nothing follows: the sender is done with the socket (finalize) */
    /* both ends opened a socket at once: the one the higher gid opened ends with SWITCH, and
     * that end's next frames go on the lower gid's socket, starting with SWITCHED */
    SOCK_FRAME_SWITCH = 4,   /* nothing follows: my next frames come on the other socket */
    SOCK_FRAME_SWITCHED = 5, /* nothing follows: the first frame on the socket switched to */
    /* one-sided access emulated on the stream (docs/fabric.md "sock: one-sided frames"): a
     * sock_rma follows, then (WRITE, READR) its len bytes of data, then the padding to 8 */
    SOCK_FRAME_WRITE = 6, /* the data go to [addr, addr + len) of the receiver, lent as key */
    SOCK_FRAME_READQ = 7, /* send me [addr, addr + len), lent as key, as READR id (no data) */
    SOCK_FRAME_READR = 8, /* the answer to READQ id: status 0 and len bytes, or an error */
};

typedef struct sock_rma {
    uint64_t addr;  /* WRITE, READQ: in the memory the receiver of the frame lent */
    uint64_t key;   /* WRITE, READQ: the key of that loan (mr reg) */
    uint64_t len;   /* the data's bytes */
    uint32_t id;    /* READQ, READR: the asker's number for the read */
    int32_t status; /* READR: 0, or a negative errno (then no data follow) */
} sock_rma;
_Static_assert(sizeof(sock_rma) == 32, "one-sided frame header is 32 bytes");

typedef struct sock_frame {
    uint32_t len;   /* bytes after this header, before the padding to 8 */
    uint32_t check; /* len ^ SOCK_FRAME_MAGIC ^ (kind << 24): a frame out of step is caught */
} sock_frame;
_Static_assert(sizeof(sock_frame) == 8, "frame header is 8 bytes");

static inline uint32_t sock_frame_check(uint32_t len, unsigned kind)
{
    return len ^ SOCK_FRAME_MAGIC ^ ((uint32_t)kind << 24);
}

#define SOCK_VERSION 1
typedef struct sock_hello {
    uint32_t version; /* SOCK_VERSION */
    uint32_t zero;
    uint64_t gid; /* the opener's fab_gid (job hash, rank) */
} sock_hello;
_Static_assert(sizeof(sock_hello) == 16, "hello is 16 bytes");

/* ---- the endpoint channel (rank <-> its assist daemon) -------------------------------- */

#define SOCK_EP_MAGIC 0x50454344u /* "DCEP" */
enum sock_ep_type {
    SOCK_EP_REQUEST = 1,  /* rank -> daemon: a connected socket to (job, rank), please */
    SOCK_EP_GRANT = 2,    /* daemon -> rank: here it is (SCM_RIGHTS), seq of the request */
    SOCK_EP_REFUSE = 3,   /* daemon -> rank: no (status, text), seq of the request */
    SOCK_EP_INCOMING = 4, /* daemon -> rank: (job, rank) asked for you; its socket (SCM_RIGHTS) */
};

#define SOCK_EP_JOB_MAX  40
#define SOCK_EP_TEXT_MAX 160
typedef struct sock_ep_msg {
    uint32_t magic;  /* SOCK_EP_MAGIC */
    uint8_t version; /* SOCK_VERSION */
    uint8_t type;    /* enum sock_ep_type */
    uint16_t zero;
    uint32_t seq;              /* REQUEST: the rank's number for it; GRANT, REFUSE: echoed */
    int32_t rank;              /* REQUEST: the peer's rank; INCOMING: the asker's rank */
    uint64_t token;            /* REQUEST: the peer's token, from its card */
    char job[SOCK_EP_JOB_MAX]; /* REQUEST: the peer's job id; INCOMING: the asker's; NUL-ended */
    int32_t status;            /* REFUSE: a negative errno */
    int32_t node; /* REQUEST: the peer's daemon's tree node from its card (a hint), 0 unknown */
    char text[SOCK_EP_TEXT_MAX]; /* REFUSE: why; REQUEST: the peer's daemon's data address
                                  * from its card ("<port>:<networks>", "" none); NUL-ended */
} sock_ep_msg;
_Static_assert(sizeof(sock_ep_msg) == 232, "endpoint message is 232 bytes");
_Static_assert(offsetof(sock_ep_msg, job) == 24 && offsetof(sock_ep_msg, text) == 72,
               "endpoint message layout");

#endif
