/* Wire format of the packets that travel through a connection's receive
 * ring. Fixed-width fields, documented one by one; fields are only ever
 * appended; sizes pinned by _Static_assert. Every field a peer sends is
 * checked on arrival (core/conn.c: core_wire_check). */
#ifndef DCFA_CORE_WIRE_H
#define DCFA_CORE_WIRE_H

#include <stddef.h>
#include <stdint.h>

/* 1: the first format; 2: wire_rndv gained `key` and `access` (fabrics with
 * registration keys), DONE gained WIRE_F_ERROR; 3: a packet covers as many
 * consecutive ring blocks as its length needs (wire_blocks), WIRE_PAD; 4: DATA may name a
 * chunk of the sender's staging pool instead of carrying the bytes (WIRE_F_STAGED); 5: so may
 * EAGER, and DONE says the receiver mapped the sender's pool (WIRE_F_STAGED); 6: the sender
 * of an RTS chooses between single copy and the copy path (WIRE_F_COPY); 7: the receiver may
 * split a read with the sender (WIRE_SPLIT, DONE with WIRE_F_SPLIT); 8: half packets (two
 * small eager messages to a 64-byte block: wire_half); 9: WIRE_LOST (a connection through a
 * gateway that died, made again: the messages of the old one its receiver may not have had) */
#define WIRE_VERSION 9

enum wire_type {
    WIRE_EAGER = 1,     /* header + whole message */
    WIRE_RTS = 2,       /* sender-first rendezvous: sender's buffer (wire_rndv) */
    WIRE_RTR = 3,       /* receiver-first rendezvous: receiver's buffer (wire_rndv), bound to `seq` */
    WIRE_DONE = 4,      /* bulk transfer finished (wire_done) */
    WIRE_SYNC = 5,      /* credit update only */
    WIRE_CTS = 6,       /* clear to send through the ring (no single-copy): wire_done names both requests */
    WIRE_DATA = 7,      /* one fragment of a message copied through the ring (wire_frag + bytes) */
    WIRE_ACK = 8,       /* a synchronous-mode eager message was matched (wire_done) */
    WIRE_CANCEL = 9,    /* sender asks to withdraw message `size` (a seq) if unmatched (wire_done) */
    WIRE_CANCEL_ACK = 10, /* answer: size = 1 withdrawn, 0 too late (wire_done) */
    WIRE_PAD = 11,      /* no content: covers the blocks up to the ring's end, where the next
                           packet did not fit (len says how many, as for any packet) */
    WIRE_SPLIT = 12,    /* version 7: the receiver of an RTS reads part of the message and offers
                           the sender the rest to write (wire_split) */
    WIRE_TYPE_MAX = 12
};

/* version 9, connections of a fabric with FAB_CAP_ROUTE only (a gateway): the first packets of
 * the connection a pair makes after its previous one was lost with the gateway it went through
 * (core/lost.c). The payload is an array of wire_lost, one per message the sender had sent on
 * the old connection and not seen reported consumed (its credit), in the order sent; the
 * receiver fails a receive for each one it had not received (seq after its last on the old
 * connection), as the message would have matched it, instead of letting the receive wait for
 * ever. Its header's ctx, src, tag and seq are 0. */
#define WIRE_LOST 15
typedef struct wire_lost {
    uint32_t seq; /* the message's sequence number on the old connection */
    uint32_t ctx; /* its envelope */
    int32_t src;
    int32_t tag;
} wire_lost;
_Static_assert(sizeof(wire_lost) == 16, "lost entry is 16 bytes");

/* Half packets (version 8, mapped rings only): an eager message of at most WIRE_HALF_MAX bytes
 * in standard or ready mode, not staged, may take half a block. The first half (offset 0) is a
 * packet of the block as any other: its mark is the block's position + 1, and before storing
 * it the sender zeroes the second half's mark word. The sender's next packet then takes the
 * second half (offset WIRE_HALF_OFFSET) with mark (position + 1) | WIRE_HALF_BIT: another half
 * packet, or a WIRE_PAD_HALF that closes the block before any other packet. The receiver,
 * having read a first half, polls the second half's mark and consumes the block (one credit)
 * once it read it. Two 8-byte messages share one cache line. A half carries no credit and no
 * sequence number: its seq is the receiver's last + 1, as the sender counted it. */
enum wire_half_type {
    WIRE_EAGER_HALF = 13,   /* wire_half + len bytes of message */
    WIRE_PAD_HALF = 14      /* the second half is empty: the block is done */
};
#define WIRE_HALF_OFFSET 32
#define WIRE_HALF_BIT 0x80000000u
typedef struct wire_half {
    uint32_t mark;      /* as wire_hdr's (WIRE_HALF_BIT set in a second half) */
    uint8_t type;       /* enum wire_half_type, at wire_hdr's type */
    uint8_t len;        /* message bytes after this header, at most WIRE_HALF_MAX */
    uint16_t zero;
    uint32_t ctx;
    int32_t src;
    int32_t tag;
} wire_half;
#define WIRE_HALF_MAX (WIRE_HALF_OFFSET - sizeof(wire_half))
_Static_assert(sizeof(wire_half) == 20 && offsetof(wire_half, type) == 4, "half header: 20 bytes, type where wire_hdr has it");

enum wire_flags {
    WIRE_F_SSEND = 1,       /* EAGER: sender waits for ACK (MPI_Ssend) */
    WIRE_F_RTR_DATA = 2,    /* DONE: data of message `seq` was written into the RTR buffer */
    WIRE_F_RTR = 4,         /* CANCEL / CANCEL_ACK: about an RTR (receiver withdraws its buffer) */
    WIRE_F_ERROR = 8,       /* DONE: the bulk transfer failed; the request completes with an error */
    WIRE_F_FIN = 16,        /* SYNC: the sender is in MPI_Finalize with everything before this
                               sent; after the peer's FIN it sends nothing more here */
    WIRE_F_STAGED = 32,     /* RTS: the sender has a staging pool; CTS: the receiver mapped it,
                               the data may come through it; DONE: the receiver mapped it (later
                               messages may come as staged EAGER); DATA: wire_frag + wire_stage,
                               the bytes are in the named chunk of the sender's pool; EAGER: the
                               payload (after the synchronous-mode prefix) is a wire_stage naming
                               the chunk that holds the whole message */
    WIRE_F_COPY = 64,       /* RTS: the sender asks for the copy path (the message is below its
                               crossover, core_cma_min_for): the receiver answers CTS unless it
                               has rendezvous sends of its own under way; without it, it reads */
    WIRE_F_SPLIT = 128,     /* RTS: the sender has no receive posted, so it is free to write half
                               of this message if the receiver offers it (SPLIT); DONE: the
                               sender of a message wrote the part a SPLIT offered it
                               (wire_done: req = the receive, size = the part's bytes) */
};

/* One packet header, at the start of a ring block. 32 bytes. Its first word
 * is the fabric's tail marker (fabric.h: fab_mark). The packet (header and
 * len payload bytes) covers wire_blocks(len) consecutive blocks of the ring,
 * never past its end. */
typedef struct wire_hdr {
    uint32_t mark;      /* ring position + 1 of this block: stored last with release order; the
                           receiver sees the whole packet once it reads the expected mark (the
                           tail marker of the DCFA protocol, kept in the header's cache line) */
    uint8_t type;       /* enum wire_type */
    uint8_t version;    /* WIRE_VERSION */
    uint16_t flags;     /* enum wire_flags */
    uint32_t credit;    /* piggy-backed credit: packets the sender has consumed from the reverse ring */
    uint32_t ctx;       /* context id of the communicator */
    int32_t src;        /* sender's rank in that communicator */
    int32_t tag;
    uint32_t seq;       /* per-pair message sequence number (0 for SYNC and control packets) */
    uint32_t len;       /* payload bytes following this header */
} wire_hdr;
_Static_assert(sizeof(wire_hdr) == 32, "wire header is 32 bytes");
/* the ring blocks of block_size bytes that a packet of len payload bytes covers */
static inline uint32_t wire_blocks(uint32_t len, size_t block_size)
{
    return (uint32_t)((sizeof(wire_hdr) + (size_t)len + block_size - 1) / block_size);
}
_Static_assert(offsetof(wire_hdr, mark) == 0 && sizeof(((wire_hdr *)0)->mark) == sizeof(uint32_t),
               "the tail marker is the block's first word (fabric.h)");

/* RTS and RTR payload */
typedef struct wire_rndv {
    uint64_t addr;      /* buffer address for one-sided access (fab_mem.addr: the virtual address,
                           or an offset where the fabric wants offsets) */
    uint64_t size;      /* message size (RTS) / buffer capacity (RTR) */
    uint32_t req;       /* the request id of the packet's sender */
    uint32_t pad;
    uint64_t key;       /* version 2: registration key of the buffer (0 on shm) */
    uint32_t access;    /* version 2: 1 if addr/key give one-sided access, 0 for the copy path */
    uint32_t pad2;
} wire_rndv;
_Static_assert(sizeof(wire_rndv) == 40, "rndv payload is 40 bytes");
_Static_assert(offsetof(wire_rndv, key) == 24 && offsetof(wire_rndv, access) == 32,
               "fields are only appended");

/* version 7: SPLIT payload. The receiver of an RTS reads [0, off) of the message and offers
 * the sender [off, off + len) to write at addr; whoever takes the part first sets `claim` with
 * a compare-and-swap, on shm in the packet itself (the sender's ring, mapped by both; the
 * receiver touches it only while its credit says the packet is not consumed): 0 open, 1 the
 * sender writes it, 2 the receiver read it itself. */
typedef struct wire_split {
    uint32_t claim;
    uint32_t req;       /* the send request (the RTS's) */
    uint32_t peer_req;  /* the receive request */
    uint32_t pad;
    uint64_t off;       /* the sender's part: its offset in the message */
    uint64_t len;       /* ... and bytes */
    uint64_t addr;      /* where it goes (the receive buffer + off; fab_mem.addr) */
    uint64_t key;
} wire_split;
_Static_assert(sizeof(wire_split) == 48 && offsetof(wire_split, claim) == 0,
               "split payload is 48 bytes, the claim word in the header's block");

/* DONE, CTS, ACK payload */
typedef struct wire_done {
    uint32_t req;       /* request id at the packet's receiver */
    uint32_t peer_req;  /* request id at the packet's sender (CTS) */
    uint64_t size;      /* bytes transferred (DONE with RTR data: the message size) */
} wire_done;
_Static_assert(sizeof(wire_done) == 16, "done payload is 16 bytes");

/* DATA payload header, followed by the fragment bytes */
typedef struct wire_frag {
    uint32_t req;       /* receive request id at the packet's receiver */
    uint32_t pad;
    uint64_t offset;    /* offset of this fragment in the packed message */
} wire_frag;
_Static_assert(sizeof(wire_frag) == 16, "frag header is 16 bytes");

/* version 4: after wire_frag in a DATA packet with WIRE_F_STAGED: where the fragment's bytes
 * are. The receiver copies them out, then clears the chunk's busy word in the pool. */
typedef struct wire_stage {
    uint32_t chunk;     /* chunk index in the sender's pool */
    uint32_t len;       /* bytes of the fragment, at most the pool's chunk size */
} wire_stage;
_Static_assert(sizeof(wire_stage) == 8, "stage descriptor is 8 bytes");

#endif
