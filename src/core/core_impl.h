/* core private state: connections, the unexpected queue, protocol entry
 * points. Only src/core includes this. */
#ifndef DCFA_CORE_IMPL_H
#define DCFA_CORE_IMPL_H

#include <stdatomic.h>

#include "core/core.h"
#include "core/wire.h"
#include "core/state.h"
#include "fabric/fabric.h"

#define CORE_CARD_MAX_ 1024

/* a packet waiting for credit */
typedef struct core_pend {
    util_qnode qn;
    core_req *req;      /* EAGER/RTS/stream from a send request, or NULL for control */
    wire_hdr hdr;
    uint32_t peer_req;  /* stream: receive request id at the peer */
    int staged;         /* stream: the receiver takes chunks of my staging pool (CTS said so) */
    unsigned held;      /* stream: chunks of the pool holding its bytes, not yet copied out */
    uint8_t payload[];  /* control: hdr.len bytes (core_pend_new) */
} core_pend;
#define CORE_PEND_PAYLOAD 40 /* the payload every pending packet has room for */
/* a pending packet with room for a control payload of len bytes (at least CORE_PEND_PAYLOAD) */
static inline core_pend *core_pend_new(size_t len)
{
    return util_calloc(1, sizeof(core_pend) + (len > CORE_PEND_PAYLOAD ? len : CORE_PEND_PAYLOAD));
}

/* an opened fabric */
typedef struct core_fab {
    const fab_ops *ops;
    const fab_caps *caps;
    int nconns;             /* connections on it */
    int made;               /* connections ever made on it */
    unsigned poll_mask;     /* poll when (pass & poll_mask) == 0 (core_fab_pace) */
} core_fab;
#define CORE_MAX_FABS 4
#define CORE_BLOCK_FDS 64 /* descriptors an idle wait sleeps on at most (core_block) */

typedef struct core_conn {
    int lpid;
    uint32_t nblocks;       /* blocks of the rings (the fabric's: caps.nblocks) */
    core_fab *fab;          /* the fabric carrying it */
    fab_conn *fc;
    uint8_t *rx_ring;       /* my receive ring (NULL with FAB_CAP_RX_QUEUE) */
    uint8_t *tx_ring;       /* FAB_CAP_RING_MAPPED: the peer's ring, mapped here (set at ready:
                               where core_conn_tx_at builds a packet, else NULL) */
    int ready;              /* 1 once the fabric said it carries packets */
    int hot;                /* in core_s.hot: progress looks at it (FAB_CAP_RX_WAKE: woken) */
    unsigned caps;          /* what the connection can do: its fabric's FAB_CAP_*, with FAB_CAP_RMA
                               cleared when the peer's memory turns out unreachable (rndv_read.c) */
    int halves;             /* half packets (wire.h): FAB_CAP_RING_MAPPED and DCFA_HALF_PACKETS */
    size_t eager_max;       /* largest eager payload to this peer (its fabric's eager_limit) */
    size_t payload_max;     /* largest payload of a packet from it (eager or DATA) */
    uint32_t sync_below;    /* core_state's sync_below for this connection's packets */
    int read_ok;            /* a read from the peer has succeeded (splits are offered after) */
    uint32_t credit_seen;   /* the largest consumed count the peer has sent (before ready too) */
    uint32_t tx_count;      /* blocks written into the peer's ring */
    uint32_t tx_limit;      /* may write while tx_count < tx_limit */
    uint32_t rx_count;      /* blocks consumed from my ring */
    uint32_t rx_freed;      /* of them, cleared for reuse (conn.c: core_conn_free_blocks) */
    uint32_t rx_advertised; /* rx_freed as last told to the peer */
    uint32_t tx_msg_seq;    /* last message sequence number sent */
    uint32_t rx_msg_seq;    /* last message sequence number received */
    int tx_half;            /* the block before tx_count has its second half free (wire_half) */
    int rx_half;            /* the block at rx_count: its first half read, the second awaited */
    util_queue backlog;     /* core_pend, FIFO */
    struct {                /* receiver-first: an RTR the peer sent us */
        int valid;
        uint32_t seq, ctx;
        int32_t src, tag;
        uint64_t addr, cap, key;
        uint32_t req;
        int access;         /* addr/key give one-sided access */
    } rtr_in;
    core_req *rtr_out;      /* my receive with an RTR outstanding to this peer */
    unsigned rtr_backoff;   /* receives that skip RTR after the next stale one (doubles) */
    unsigned rtr_skip;      /* receives that still send none (an RTR of mine went stale) */
    uint8_t *peer_stage;    /* the peer's staging pool, mapped at its first RTS that offers it */
    int stage_tried;        /* mapping it was tried (peer_stage NULL: it failed) */
    int stage_peer_ok;      /* the peer mapped my pool (a CTS or DONE said so): staged EAGER */
    int sync_wanted;        /* the peer runs low on credit: send a SYNC */
    unsigned sync_pass;     /* ... from the progress pass after this one (conn.c) */
    int fin_out, fin_in;    /* finalize: my FIN queued / the peer's FIN arrived */
    /* FAB_CAP_ROUTE (a gateway): the messages sent that the peer has not reported consumed,
     * oldest first (lost.c): what a lost connection may have taken with it */
    struct core_sent {
        uint32_t end; /* tx_count after the message's first packet */
        wire_lost env;
    } * sent;
    uint32_t sent_head, sent_n, sent_cap; /* entries [sent_head, sent_n) of sent_cap */
    char why[128];          /* why this fabric was chosen (cold: after the hot fields) */
} core_conn;

/* a message that arrived before its receive (also what MPI_Mprobe hands out) */
#define CORE_MSG_LOST                                                  \
    0 /* core_msg.type of a message lost with its connection (lost.c): \
         the receive it matches fails with data's text */
struct core_msg {
    util_qnode qn;
    int type; /* WIRE_EAGER or WIRE_RTS, or CORE_MSG_LOST */
    uint16_t flags;
    uint32_t ctx;
    int32_t src, tag;
    int lpid;
    uint32_t seq;
    size_t size;
    void *data;             /* eager: a copy of the payload */
    wire_rndv rndv;         /* rts */
    core_req *local_send;   /* message from myself: the send request (ssend waits on it) */
};

/* a process this one knows: its name across jobs, and its cards when it is of another job
 * (this job's come from the key/value exchange at first contact) */
typedef struct core_proc {
    fab_gid gid;
    char *cards;
} core_proc;

typedef struct core_state {
    int self, nprocs;       /* my lpid; processes known (lpids 0..nprocs-1) */
    int job_size;           /* my job's: lpids 0..job_size-1 are its ranks */
    uint64_t job;           /* my job's hash (fab_job_hash) */
    core_proc *procs;       /* by lpid, nprocs of procs_cap */
    int procs_cap;
    fab_params fp;          /* what the fabrics are opened with */
    char job_id[64];
    int fabs_open;          /* fabrics opened (at init when the job has several processes,
                               else at the first process of another job) */
    char cards[CORE_CARD_MAX_]; /* mine, joined by ';' */
    struct core_late {          /* a fabric opened in a thread of its own (late.c) */
        const fab_ops *ops;     /* opening, or opened and not taken in yet; NULL: none */
        int net;                /* the job may defer its network fabric (core_params.net_late) */
        _Atomic int done;       /* the thread has ended (its rc, card and name are set) */
        int rc;                 /* open()'s status */
        int published;          /* my card is in the name service (taken out at finalize) */
        fab_params fp;          /* the thread's copy */
        char name[64];          /* my name in the name service: dcfa-card-<gid in hex> */
        char card[512];         /* the card open() gave */
        int sock;        /* sock opened at MPI_Init for first contacts (DCFA_OFI_LATE_SOCK) */
        uint64_t *pairs; /* peers whose pair fabric I published (withdrawn at finalize) */
        int npairs, cappairs;
    } late;
    unsigned nblocks;       /* ring blocks per connection (the credits) */
    unsigned local_nblocks; /* ... on shm: more where few processes share the node */
    size_t block_size;      /* bytes per block, a power of two; a packet covers
                               wire_blocks(len) of them (core_blocks: the same by a shift) */
    unsigned block_shift;   /* log2(block_size) */
    size_t eager_max;       /* largest eager payload (DCFA_EAGER_LIMIT; a fabric may have its
                               own: core_conn.eager_max) */
    size_t eager_least;     /* the smallest eager payload of the fabrics opened and the core's:
                               a receive no larger never sends RTR */
    size_t payload_max;     /* largest payload of any packet (eager, or a DATA fragment) */
    uint32_t sync_below;    /* the receiver sends a SYNC when the sender's credit falls below
                               this: the blocks of the largest packet + 1, at least
                               DCFA_CREDIT_SYNC_LIMIT (a sender waiting for room always gets it) */
    core_conn **conns;      /* by lpid, NULL until first use */
    int conn_failure;       /* why the last connection that could not be made failed:
                               UTIL_EACCES (a segment another user made), UTIL_ENOMEM, or
                               UTIL_ECONN (anything else: the peer is gone or unreachable) */
    core_conn **active;     /* connected ones */
    int nactive;
    core_conn **hot; /* of them, the ones progress polls: all but those of a fabric
                        with FAB_CAP_RX_WAKE, which are here from their wake until a
                        pass finds nothing to do on them (core_conn_cool) */
    int nhot;
    util_queue posted;      /* receive requests */
    util_queue unexpected;  /* core_msg */
    int in_progress;
    int (*poller)(void);    /* core_set_poller */
    int (*pollers[CORE_MAX_POLLERS])(void); /* core_poller_start */
    int npollers;
    core_peer_fn peer_of;   /* core_set_peer_lookup, NULL: nothing checked (unit tests) */
    struct core_held {      /* (context, process) pairs that sent for a context unknown here */
        uint32_t ctx;
        int lpid;
        uint64_t since_ns;
    } *held;
    int nheld, held_cap;
    unsigned passes;        /* progress passes, to pace the fabrics' polls */
    core_fab fabs[CORE_MAX_FABS];   /* opened fabrics, highest priority first */
    int nfabs;
    unsigned poll_mask;     /* the smallest of the fabrics' poll masks: the hot loop's one test */
    core_kvs kvs;
    void (*lost_unseen)(const char *why); /* core_params.lost_unseen */
    int finalizing;         /* after the FIN handshake: no SYNC any more */
    int rndv_out;           /* my sends with an RTS out, not complete: traffic goes both ways */
    const void *hot_buf;    /* buffer and size of my last rendezvous send (core_send_hot) */
    size_t hot_bytes;
    uint64_t hot_sample;        /* and its fingerprint (core_send_sample) */
    size_t recv_bytes;          /* memory of my receives not complete (DCFA_RECV_NT): their
                                   distinct bytes, added by core_irecv and core_imrecv
                                   (core_recv_count), taken off by core_req_complete */
    const void *recv_recent[4]; /* the buffers of the last counted receives under way */
    unsigned recv_recent_at;
    int recvs_open;         /* how many of them (core_both_ways) */
    int recv_early;         /* since my last rendezvous send (core_send_hot) a receive found
                               its message already there (core_irecv matched it, core_imrecv):
                               a peer sends while I do */
    struct core_stage {     /* my staging pool (rndv_copy.c), made at the first RTS */
        uint8_t *base;      /* NULL: none yet */
        int failed;         /* creating it failed: not tried again */
        core_pend **owner;  /* the stream each busy chunk was given to (NULL: none, or done) */
        uint32_t last;      /* the chunk filled last (core_stage_pending) */
    } stage;
    struct core_lost *lost; /* pairs whose connection through a gateway was lost (lost.c) */
    int nlost;
    int lost_resync;        /* some of them are to be connected again (core_lost_progress) */
    void *bounce;           /* the bounce buffer of reads into non-contiguous buffers, kept */
    int bounce_busy;        /* lent to a read under way (another one gets its own) */
} core_state;
extern core_state core_s;

/* buffer + byte offset, computed on integers: buf may be MPI_BOTTOM (NULL) with absolute displacements */
static inline void *core_at(const void *buf, ptrdiff_t off)
{
    return (void *)((uintptr_t)buf + (uintptr_t)off);
}

/* core.c: the fabrics and the cards */
#define CORE_CARD_MAX CORE_CARD_MAX_
/* the fabric for a first connection to lpid and the peer's card for it; NULL if none (logged) */
core_fab *core_fab_choose(int lpid, char *card, size_t cardlen, char *why, size_t whylen);
/* recompute the fabrics' poll masks (after a connection count changed) */
void core_fab_pace(void);
/* the card of lpid for fabric fab */
int core_card_get(int lpid, const fab_ops *fab, char *card, size_t cardlen);

/* late.c: the network fabric opened off MPI_Init's path (docs/fabric.md, "Opening ofi late").
 * start: the thread that opens fab and publishes its card under my name; join: wait for it
 * and take the fabric in (the end of the job, with the reason, if it failed); poll: take it in
 * if the thread has ended (progress); resolve: the card of a peer that had published only
 * "late:<fabric>" (waits for it to appear), appended to cards; finish: my name withdrawn. */
int core_late_start(const fab_ops *fab);
void core_late_join(void);
static inline void core_late_poll(void)
{
    if (core_s.late.ops && atomic_load_explicit(&core_s.late.done, memory_order_acquire))
        core_late_join();
}
int core_late_resolve(int lpid, char *cards, size_t len);
/* pair: whether the first connection to lpid (cards: its cards) goes over sock because ofi
 * is not open yet at one end, agreed by both ends through the name service (1: sock, 0: as
 * before, the late fabric) */
int core_late_pair(int lpid, const char *cards);
void core_late_finish(void);
/* the fabric table entry for an opened fabric (core.c): caps, the smallest eager limit */
void core_fab_add(const fab_ops *ops);

/* the ring blocks a packet of len payload bytes covers (wire_blocks, without a division) */
static inline uint32_t core_blocks(uint32_t len)
{
    return (uint32_t)((sizeof(wire_hdr) + (size_t)len + core_s.block_size - 1) >> core_s.block_shift);
}
#define CORE_RING_BLOCKS 512    /* DCFA_MAX_CREDIT auto: blocks of a ring (32 KiB of 64 B) */
/* the ring's shape (core.c): sets nblocks, local_nblocks, block_size, eager_max,
 * payload_max, sync_below; nblocks <= 0: auto (512, local rings sized by node_nprocs) */
void core_ring_geometry(size_t eager_limit, size_t block_size, int nblocks, unsigned sync_limit,
                        int node_nprocs);

/* conn.c */
core_conn *core_conn_first(int lpid); /* core_conn_get's first use: connects; NULL (the
                                         status in core_s.conn_failure) if it cannot */
/* the connection to lpid; connects on first use; NULL on failure (logged) */
static inline core_conn *core_conn_get(int lpid)
{
    core_conn *c = core_s.conns[lpid];
    return c ? c : core_conn_first(lpid);
}
/* The request a packet from c names (wire_done.req and the like): of `kind`, not complete, for
 * c's peer, in one of `states` (CORE_TO bits of enum core_send_state / core_recv_state).
 * Anything else is a malformed packet: the process ends with the peer and the packet named. */
_Noreturn void core_req_unexpected(const core_conn *c, uint32_t id, const char *what);
static inline core_req *core_req_expect(const core_conn *c, uint32_t id, int kind, unsigned states,
                                        const char *what)
{
    core_req *r = core_req_get((int)id);
    if (__builtin_expect(!r || r->kind != kind || r->complete, 0))
        core_req_unexpected(c, id, what);
    int state = kind == CORE_REQ_SEND ? r->u.send.state : r->u.recv.state;
    int lpid = kind == CORE_REQ_SEND ? r->u.send.lpid : r->u.recv.lpid;
    if (__builtin_expect(!(CORE_TO(state) & states) || lpid != c->lpid, 0))
        core_req_unexpected(c, id, what);
    return r;
}
int core_conn_incoming(const fab_ops *fab, int peer);  /* fabric upcall */
void core_conn_ready(void *ctx, int status);            /* fabric upcall */
void core_conn_wake(void *ctx);                         /* fabric upcall: poll it again */
void core_conn_lost(void *ctx, const char *why);        /* fabric upcall: fail it (core.c) */
int core_conn_cool(core_conn *c); /* nothing to do: 1 and out of core_s.hot (woken ones) */
/* the next packet's place in the peer's ring (or the fabric's block) */
static inline wire_hdr *core_conn_tx_at(core_conn *c)
{
    if (c->tx_ring) /* FAB_CAP_RING_MAPPED: the peer's ring, cached at ready */
        return (wire_hdr *)(c->tx_ring + (size_t)(c->tx_count & (c->nblocks - 1)) * core_s.block_size);
    return c->fab->ops->chan->tx_block(c->fc, c->tx_count);
}
int core_conn_tx_pad(core_conn *c, uint32_t pad);
void core_conn_close_half(core_conn *c);
/* an eager message of at most WIRE_HALF_MAX bytes as a half packet (wire.h); UTIL_EAGAIN when
 * out of credit */
int core_conn_send_half(core_conn *c, const void *data, size_t bytes, int32_t src_rank, int32_t tag,
                        uint32_t ctx);
static inline void core_conn_tx_end(core_conn *c, wire_hdr *h);
/* lost.c: messages lost with a connection through a gateway (FAB_CAP_ROUTE). log: message h
 * (EAGER or RTS) went out on c; prune: what c's credit says the peer consumed is forgotten;
 * conn: c is lost (why: how), what it may have taken is kept for the pair, which is
 * connected again at the next progress pass (core_lost_progress); failed_recv: a receive
 * for the peer failed with it (a lost message it stood for is not reported again); greet: a
 * new connection to the pair: its first packets name what the last one may have taken
 * (WIRE_LOST); arrived: the peer's WIRE_LOST; recv: receive r matched lost message m (it
 * fails, m freed); message: unexpected message m can no longer be received (why) and becomes
 * a lost one; unreachable: no connection to lpid can be made any more (a receive for it
 * fails at once, with that text); close: at finalize */
void core_lost_log(core_conn *c, const wire_hdr *h);
void core_lost_prune(core_conn *c);
void core_lost_conn(core_conn *c, const char *why);
void core_lost_failed_recv(int lpid, const core_req *r);
void core_lost_greet(core_conn *c);
void core_lost_arrived(core_conn *c, const wire_lost *e, size_t n);
void core_lost_recv(core_req *r, core_msg *m);
/* receive r (not queued) fails as lost, from (lpid, src, tag), with that text; the caller
 * completes it */
void core_lost_fail_recv(core_req *r, int lpid, int32_t src, int32_t tag, const char *text);
void core_lost_message(core_msg *m, const char *why);
int core_lost_progress(void);
const char *core_lost_unreachable(int lpid); /* NULL, or the error's text */
void core_lost_close(void);
/* core.c: the text of request r's UTIL_EUNREACH (core_req_failure_text) */
void core_req_set_fail_text(core_req *r, const char *text); /* (a copy) */
/* Where to build the next packet, of at most len payload bytes; NULL when out of credit.
 * control: a SYNC, which may take the block kept for it. The packet is published by
 * tx_end with its h->len (not above len). */
static inline wire_hdr *core_conn_tx_begin(core_conn *c, size_t len, int control)
{
    if (c->tx_half)     /* a packet other than a half: the open block's second half is closed */
        core_conn_close_half(c);
    /* a packet needs its blocks + for data the one kept for SYNC */
    uint32_t k = core_blocks((uint32_t)len);
    uint32_t at = c->tx_count & (c->nblocks - 1);
    if (__builtin_expect(at + k > c->nblocks && !(c->caps & FAB_CAP_RX_QUEUE), 0) &&
        !core_conn_tx_pad(c, c->nblocks - at))
        return NULL;
    if ((int32_t)(c->tx_limit - c->tx_count) < (int32_t)(k + (control ? 0 : 1)))
        return NULL;
    return core_conn_tx_at(c);
}
/* publish the packet at h (from tx_begin) */
static inline void core_conn_tx_end(core_conn *c, wire_hdr *h)
{
    h->version = WIRE_VERSION;
    h->credit = c->rx_freed;
    c->rx_advertised = c->rx_freed;
    if (h->type <= WIRE_TYPE_MAX)
        core_st.sent[h->type]++;
    uint32_t pos = c->tx_count;
    c->tx_count += core_blocks(h->len);
    /* The tail marker: on a mapped ring a release store (fabric.h), else the fabric's post.
     * Only the header's block gets a mark; the blocks after it hold payload, and the
     * receiver clears their first words once it has consumed the packet
     * (core_progress_conn). (A sender clearing the next header's place instead put a
     * second cache line on every small message's path: 10-40% on 8-byte latency.) */
    if (c->tx_ring) { /* FAB_CAP_RING_MAPPED (the block came from it: core_conn_tx_at) */
        atomic_store_explicit((_Atomic uint32_t *)&h->mark, pos + 1, memory_order_release);
    } else {
        if (__builtin_expect(c->caps & FAB_CAP_ROUTE, 0) &&
            (h->type == WIRE_EAGER || h->type == WIRE_RTS))
            core_lost_log(c, h);
        c->fab->ops->chan->tx_post(c->fc, pos, h, sizeof *h + h->len);
    }
}
int core_conn_send_ctl(core_conn *c, int type, uint16_t flags, const wire_hdr *env,
                       const void *payload, size_t len);
void core_conn_backlog(core_conn *c, core_pend *p);
static inline size_t core_payload_max(void) { return core_s.payload_max; }
size_t core_fab_eager_max(const fab_caps *caps); /* conn.c */
/* the payload of an eager packet: the message, after an 8-byte request id for ssend */
static inline size_t core_eager_len(const core_req *r)
{
    return r->u.send.bytes + (r->u.send.mode == CORE_SEND_SYNC ? 8 : 0);
}
/* the protocol choice: eager when the packet fits the connection's eager limit (ssend carries
 * an 8-byte request id) */
static inline int core_send_is_eager(const core_conn *c, const core_req *r)
{
    return r->u.send.bytes + (r->u.send.mode == CORE_SEND_SYNC ? 8 : 0) <= c->eager_max;
}

/* match.c */
core_req *core_match_posted(uint32_t ctx, int32_t src, int32_t tag);   /* removes it */
/* the posted receive an arriving EAGER/RTS takes (removed), or NULL for the
 * unexpected queue; first checks that connection c may claim the header's
 * (ctx, src): a forged one ends the process with the peer named */
core_req *core_match_arrival(core_conn *c, const wire_hdr *h);
core_msg *core_match_unexpected(uint32_t ctx, int32_t src, int32_t tag, int remove);
int core_posted_blocks_rtr(const core_req *r);  /* an earlier receive could take the message */

/* protocols */
int core_eager_send(core_conn *c, core_req *r);           /* eager.c */
void core_eager_emit(core_conn *c, core_req *r, wire_hdr *h);
void core_rts_emit(core_conn *c, core_req *r, wire_hdr *h);
void core_eager_arrived(core_conn *c, const wire_hdr *h, const void *payload);
void core_recv_from_msg(core_req *r, core_msg *m);         /* eager.c: complete a receive from an unexpected message */
int core_rts_send(core_conn *c, core_req *r);              /* rndv_read.c */
void core_rts_arrived(core_conn *c, const wire_hdr *h, const wire_rndv *rv);
void core_rts_matched(core_req *r, int lpid, const wire_hdr *env, const wire_rndv *rv);
void core_read_done_arrived(core_conn *c, const wire_hdr *h, const wire_done *d);
void core_ack_arrived(core_conn *c, const wire_done *d); /* eager.c */
/* rndv_split.c: offer the sender a part of the read x of an RTS (x->len shrinks to mine), where
 * core_split_wanted; with a split under way, whether the receive ends as my part ends with
 * `status` (1) or the other is still to come */
void core_split_offer(core_conn *c, core_req *r, const wire_hdr *env, const wire_rndv *rv,
                      core_xfer *x);
int core_split_join(struct core_rndv *rd, core_xfer *x, int status);
void core_split_arrived(core_conn *c, wire_split *sp);
void core_split_done_arrived(core_conn *c, const wire_hdr *h, const wire_done *d);
void core_rtr_maybe_send(core_req *r);                     /* rndv_write.c */
void core_rtr_arrived(core_conn *c, const wire_hdr *h, const wire_rndv *rv);
int core_rtr_try_write(core_conn *c, core_req *r);         /* 1 if the message went into the RTR buffer */
void core_rtr_seq_seen(core_conn *c, uint32_t seq);
void core_rtr_done_emit(core_conn *c, core_req *r, wire_hdr *h);   /* DONE of a finished write */
void core_write_done_arrived(core_conn *c, const wire_hdr *h, const wire_done *d);
/* bulk.c: move x->len bytes in chunks; x->finish(x, status) at the end (maybe before it returns) */
void core_bulk_start(core_xfer *x);
/* a read into (buf, count, dt) whose pieces are small lands in a bounce buffer and is
 * unpacked from it (bulk.c): one system call per bounce buffer, not one per 64 pieces */
void core_xfer_bounce(core_xfer *x);
/* pieces of a non-contiguous receive buffer below this many bytes on average are read
 * through the bounce buffer (a piece read in place costs the kernel an iovec, 64 a call) */
#define CORE_READ_PIECE_MIN 2048
/* register buf for the peer of connection c (nothing without FAB_CAP_RMA) */
void core_mem_hold(core_conn *c, core_mem *m, const void *buf, size_t len);
/* a rendezvous' state, hung off its request (core_req.rndv), freed with it */
typedef struct core_rndv {
    core_req *req;
    core_mem mem;           /* the buffer, registered for the RTS (send) or the RTR (receive) */
    core_xfer xfer;         /* the bulk transfer: the receive's read, the receiver-first write */
    /* a split read (docs/protocol.md). Receive: the SPLIT's claim word in the peer's ring and
     * the packet's ring position; split 1 while the sender's part is offered or written, 2
     * once its DONE(SPLIT) came; the sender's buffer and its part. Send: split 1 while
     * writing the part, 2 when the receiver's DONE came meanwhile */
    _Atomic uint32_t *claim;
    uint32_t split_pos;
    int split, split_err;
    int mine;               /* receive: how the receiver's own half ended */
    uint64_t split_raddr;
    size_t split_off, split_len;
} core_rndv;
static inline core_rndv *core_rndv_of(core_req *r)
{
    if (!r->rndv) {
        r->rndv = util_calloc(1, sizeof *r->rndv);
        r->rndv->req = r;
    }
    return r->rndv;
}
void core_mem_release_reg(core_mem *m);    /* bulk.c: the slow part of core_mem_drop */
static inline void core_mem_drop(core_mem *m)
{
    if (__builtin_expect(m->fab != NULL, 0))
        core_mem_release_reg(m);
}
/* the request's registration, if it has one */
static inline void core_req_mem_drop(core_req *r)
{
    if (__builtin_expect(r->rndv != NULL, 0))
        core_mem_drop(&r->rndv->mem);
}
void core_cts_arrived(core_conn *c, const wire_hdr *h, const wire_done *d);   /* rndv_copy.c */
void core_data_arrived(core_conn *c, const wire_hdr *h, const wire_frag *f, const void *bytes);
int core_stream_push(core_conn *c, core_pend *p);          /* 1 when the whole message went */
int core_stage_offer(core_conn *c);     /* 1 if an RTS to c may offer my staging pool (made now) */
int core_stage_accept(core_conn *c);    /* 1 if c's peer's pool is mapped here (mapped now) */
int core_stage_eager_send(core_conn *c, core_req *r);   /* 1: sent as staged EAGER (eager.c) */
/* a message of this size may go as staged EAGER (DCFA_STAGE_EAGER, within one chunk) */
static inline int core_stage_eager_fits(size_t bytes)
{
    return bytes <= util_cfg.stage_eager && bytes <= util_cfg.stage_chunk;
}
/* the chunk of my pool filled last is not copied out yet: the peer still has copying to do */
int core_stage_pending(void);
/* copy send request r's whole message into a free chunk of my pool (marked busy): the chunk,
 * or -1 when none is free */
int core_stage_put(core_req *r);
void core_stage_unput(int k);           /* the chunk core_stage_put gave is free again */
/* the bytes a staged packet from c names (checked against the pool; `what` for the message
 * of a malformed one), and the chunk's busy word to clear once they are copied out */
const uint8_t *core_stage_get(core_conn *c, const void *desc, size_t desc_len, size_t *len,
                              _Atomic uint32_t **busy, const char *what);
void core_stage_close(void);            /* forget the pool (the fabric unmaps it at close) */
size_t core_stage_size(void);           /* bytes of a staging pool (header, busy words, chunks) */
/* DCFA_CMA_MIN auto for a message alone, on a node with a core per process: what this
 * machine's probe found (core.c, once per process): 0 or 1 MiB; its timings in ns (mpiinfo) */
size_t core_copy_below(uint64_t *readv_ns, uint64_t *memcpy_ns);
/* in a stream, does the copy path win over single copy on this CPU (core.c)? */
int core_copy_streams_win(void);
/* the sender has nothing else under way: no RTS out but `own` (the message's own, when its
 * RTS goes again), the pool's last chunk copied out */
static inline int core_send_lone(int own)
{
    return core_s.rndv_out == own && !core_stage_pending();
}
/* my copies into my staging pool are streamed (DCFA_STAGE_NT, x86-64): then the copy path
 * wins in streams at every size and with traffic both ways (docs/bench.md) */
static inline int core_stage_streamed(void)
{
    return util_copy_nt_streams(util_cfg.stage_chunk, util_cfg.stage_nt);
}
/* DCFA_CMA_MIN resolved (DCFA_CMA_MIN_STREAM for a message that is not `lone`): rendezvous
 * below it go through the staging pool (the copy path). Auto: 0 when the node is
 * oversubscribed (each chunk needs both processes on a core at once); else for a message
 * alone what the probe found, and for one that follows others still under way (a stream:
 * the copies keep both cores busy) every size (SIZE_MAX) where the sender streams its
 * copies into the pool, else 1 MiB */
static inline size_t core_cma_min_for(int lone)
{
    if (!lone && util_cfg.cma_min_stream >= 0)
        return (size_t)util_cfg.cma_min_stream;
    if (util_cfg.cma_min >= 0)
        return (size_t)util_cfg.cma_min;
    if (util_node_oversubscribed())
        return 0;
    if (lone || !core_copy_streams_win())
        return core_copy_below(NULL, NULL);
    /* a stream: with the copies into the pool streamed (DCFA_STAGE_NT) they win at every
     * size, one way and both ways (docs/bench.md); with ordinary stores below 1 MiB */
    return core_stage_streamed() ? SIZE_MAX : (size_t)1 << 20;
}
/* DCFA_CMA_MIN_HOT resolved: the crossover of a stream's message sent from the buffer and
 * size of the sender's previous rendezvous (r->u.send.hot). Its data are in the sender's
 * cache, where the single copy reads them at cache speed and the copy path's second pass is
 * pure cost: bi-bandwidth with one reused buffer, 256 KiB-4 MiB, 14.2-19 GB/s by the copies
 * against 18.3-20.9 single copy (docs/bench.md). And the buffer cannot have been written
 * since the message before it was sent (that send is still under way), so the receiver may
 * still hold its lines. Auto: 0 oversubscribed, else 256 KiB (below it the copies'
 * pipelining wins one way), 32 KiB with traffic both ways (`both`: then both cores are busy
 * with their own transfers; bi-bandwidth with one reused buffer at 64-128 KiB was 0.6-0.7x
 * the peers through the copies), or the crossover of a message alone if smaller, and never
 * above the stream's own crossover */
static inline size_t core_cma_min_hot(int both)
{
    size_t hot = (size_t)(both ? 32 : 256) << 10, lone = core_cma_min_for(1),
           stream = core_cma_min_for(0);
    if (util_cfg.cma_min_hot >= 0)
        hot = (size_t)util_cfg.cma_min_hot;
    else if (util_node_oversubscribed())
        hot = 0;
    else if (lone < hot)
        hot = lone;
    return hot < stream ? hot : stream;
}
/* traffic both ways at send r: this process has receives of its own not complete (open),
 * posted or matched, or one of them found its message already there since my previous
 * rendezvous send (in an exchange whose peer sent first my receive may be complete before
 * my send: without this both would then take staged EAGER, each side copying twice). Not
 * for the library's collective traffic (an odd context, core.h): it sends what it has just
 * produced (a local copy, a partial reduction), which the copies move faster here
 * (allgather and allreduce of 64-256 KiB at 2 ranks 2-3x) */
static inline int core_both_ways(const core_req *r)
{
    return !(r->u.send.ctx & 1) && (core_s.recvs_open > 0 || r->u.send.early);
}
/* DCFA_CMA_MIN_BOTH resolved: the crossover of a message alone sent with traffic both ways
 * (core_both_ways: an exchange of MPI_Irecv, MPI_Isend, MPI_Waitall) whose data may have been
 * written since it was last sent. Both cores are then busy with their own transfers and each
 * copy-path chunk hand-off waits for a peer that is copying too; but data the sender has just
 * written leave its cache faster through the copies' non-temporal stores: an exchange of
 * 128-512 KiB written each time, 1.2-1.3x faster through the copies, one never written
 * 1.5-1.7x faster single copy (docs/bench.md, "Traffic both ways"). Auto: 128 KiB or the
 * crossover alone if smaller; DCFA_CMA_MIN's when that is set */
static inline size_t core_cma_min_both(void)
{
    size_t lone = core_cma_min_for(1);
    if (util_cfg.cma_min_both >= 0)
        return (size_t)util_cfg.cma_min_both;
    if (util_cfg.cma_min >= 0)
        return lone;
    return lone < ((size_t)128 << 10) ? lone : (size_t)128 << 10;
}
/* DCFA_COOP_MIN resolved: reads of at least this many bytes are split with the sender
 * (docs/protocol.md); 0: never. Auto: 256 KiB, never on an oversubscribed node (the sender's
 * part would wait for its turn on the core) */
static inline size_t core_coop_min(void)
{
    if (util_cfg.coop_min >= 0)
        return (size_t)util_cfg.coop_min;
    return util_node_oversubscribed() ? 0 : (size_t)256 << 10;
}
/* A read of len bytes from an RTS (env) is split with the sender (rndv_split.c): the sender
 * offers it (RTS flag SPLIT: no receive of its own posted), the read is at least
 * DCFA_COOP_MIN, on a mapped ring whose reads have worked and reach any address, while this
 * process has no rendezvous sends of its own and nothing waits for credit */
static inline int core_split_wanted(const core_conn *c, const wire_hdr *env, size_t len)
{
    size_t min = core_coop_min();
    return (env->flags & WIRE_F_SPLIT) && min && len >= min && len >= 2 * 4096 &&
           (c->caps & FAB_CAP_RING_MAPPED) && c->read_ok && (c->caps & FAB_CAP_RMA_ANY_ADDR) &&
           core_s.rndv_out == 0 && util_queue_empty(&c->backlog);
}
/* the probe (core_copy_below) decides between the copies through a staging pool and single
 * copy on connection c: it has a pool (FAB_CAP_STAGE) and its one-sided copies are a CPU's of
 * this node (FAB_CAP_RMA_CPU), what the probe measured */
static inline int core_copy_probed(const core_conn *c)
{
    return (c->caps & (FAB_CAP_STAGE | FAB_CAP_RMA_CPU)) == (FAB_CAP_STAGE | FAB_CAP_RMA_CPU);
}
/* the sender's choice for send request r to c's peer: the copy path (1) or single copy (0) */
static inline int core_copy_wanted(const core_conn *c, const core_req *r)
{
    int lone = core_copy_probed(c) && core_send_lone(r->u.send.rts_out);
    int both = core_both_ways(r);
    /* from one buffer both ways, where the data were likely not written since the send
     * before (single copy reads lines the receiver may still hold): a window (others of my
     * rendezvous sends under way, not merely my pool's last chunk, as after a staged EAGER
     * in an exchange), or the same fingerprint (hot 2) */
    if (both && r->u.send.hot && (r->u.send.hot == 2 || core_s.rndv_out > r->u.send.rts_out))
        return r->u.send.bytes < core_cma_min_hot(1);
    if (both && (lone || r->u.send.hot))
        return r->u.send.bytes < core_cma_min_both();
    if (!lone && r->u.send.hot)
        return r->u.send.bytes < core_cma_min_hot(0);
    return r->u.send.bytes < core_cma_min_for(lone);
}
/* a receive of this many bytes from c's peer is likely copied through the sender's staging
 * pool (rndv_copy.c), so an RTR for it is not worth sending: on a fabric with pools, below
 * the stream crossover and below the crossover of a message alone or 1 MiB, whichever is
 * larger (a stream's sender copies every size where its copies are streamed, and declines
 * an RTR; from 1 MiB a declined RTR costs little against the message) */
static inline int core_rtr_unwanted(const core_conn *c, size_t bytes)
{
    size_t rtr_min = core_cma_min_for(1), stream = core_cma_min_for(0);
    if (rtr_min < (size_t)1 << 20)
        rtr_min = (size_t)1 << 20;
    if (stream < rtr_min)
        rtr_min = stream;
    return bytes < rtr_min && util_cfg.stage_chunks > 0 && (c->caps & FAB_CAP_STAGE);
}
/* receive r copies out of a peer's pool with non-temporal stores (DCFA_RECV_NT): a message
 * of at least DCFA_RECV_NT bytes among receives under way whose memory adds up to 8 times
 * that at least, more than a core's cache holds (a window of them into a buffer each, as
 * bi-directional bandwidth posts with a buffer per message; not a window into one buffer,
 * which stays in cache, nor the one receive a collective reduces at once) */
static inline int core_recv_nt(const core_req *r)
{
    size_t min = util_cfg.recv_nt;
    return min && r->u.recv.expected >= min && core_s.recv_bytes / 8 >= min;
}
/* the same with the receives under way besides r adding up to 8 times DCFA_RECV_NT: the hint
 * for a copy the fabric makes straight from the sender's buffer (an MPI_Alloc_mem block the
 * receiver maps), whose source is often in cache (a ping-pong of 4 MiB: 45 us with ordinary
 * stores, 96 streamed), so a receive alone keeps ordinary stores at every size */
static inline int core_recv_nt_others(const core_req *r)
{
    return core_recv_nt(r) && core_s.recv_bytes - r->u.recv.distinct >= 8 * util_cfg.recv_nt;
}
/* a fabric's read()/write() result as the core goes on with it: FAB_DIRECT (done by plain
 * copies, counted in dcfa_direct_bytes) is done, like UTIL_OK */
static inline int core_fab_done(int rc, size_t len)
{
    if (rc != FAB_DIRECT)
        return rc;
    core_st.direct_bytes += len;
    return UTIL_OK;
}
void core_send_local(core_req *r);
void core_cancel_arrived(core_conn *c, const wire_hdr *h, const wire_done *d);   /* cancel.c */
int core_cancel_rtr(core_req *r);                         /* self.c-like path in eager.c */

/* complete receive r (in state DONE) with this status */
void core_recv_finish(core_req *r, int32_t src, int32_t tag, size_t got, int truncated);
/* receive r is done: `ev` ends it (state.h; the event is only checked, so the move is a store
 * where the check is compiled away), and it completes with this status */
static inline void core_recv_done(core_req *r, enum core_recv_ev ev, int32_t src, int32_t tag,
                                  size_t got, int truncated)
{
    core_recv_move(r, ev, CORE_R_DONE);
    core_recv_finish(r, src, tag, got, truncated);
}
void core_req_set_status(core_req *r, int32_t src, int32_t tag, size_t bytes, int err);

#endif
