/* Connections: the receive ring, credits (thesis 3.4.2.4) and the backlog of
 * packets waiting for credit; arriving packets are checked and dispatched to
 * the protocol that owns their type.
 *
 * A credit is a ring block (a cache line by default) and a packet covers as
 * many consecutive blocks as its length needs, so small messages take little
 * of the ring and a small ring carries many of them. Credits are counted with
 * free-running 32-bit counters rather than offsets modulo the ring: tx_count
 * blocks written, tx_limit = (blocks the peer has consumed, as it last told
 * us) + ring blocks, so credit = tx_limit - tx_count, the thesis' (limit_remote
 * + MaxCredit - offset_remote) % MaxCredit. Every packet carries the sender's
 * consumed count of the reverse ring. A packet never wraps: one that does not
 * fit before the ring's end is preceded by a PAD covering the rest. A data
 * packet leaves one block free, so a SYNC can always be sent. */
#include "core/core_impl.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The largest eager payload over fabric f: its own limit (fab_caps.eager_limit), else the
 * core's (DCFA_EAGER_LIMIT) */
size_t core_fab_eager_max(const fab_caps *caps)
{
    size_t lim = caps->eager_limit;
    if (lim == 0)
        return core_s.eager_max;
    return lim > sizeof(wire_hdr) ? lim - sizeof(wire_hdr) : 0;
}

/* A connection's packet limits: its fabric's eager limit, the largest payload it may carry
 * and when its receiver sends a SYNC (the rules of core_ring_geometry with that packet). A
 * fabric whose ring is too small for its packets (fewer than twice the largest's blocks) gets
 * the core's limits; both ends compute the same. */
static void core_conn_limits(core_conn *c, const core_fab *f)
{
    c->eager_max = core_fab_eager_max(f->caps);
    c->payload_max = c->eager_max > core_s.payload_max ? c->eager_max : core_s.payload_max;
    uint32_t kmax = core_blocks((uint32_t)c->payload_max);
    if ((uint64_t)c->nblocks < 2 * (uint64_t)kmax) {
        c->eager_max = c->eager_max < core_s.eager_max ? c->eager_max : core_s.eager_max;
        c->payload_max = core_s.payload_max;
        kmax = core_blocks((uint32_t)c->payload_max);
    }
    c->sync_below = core_s.sync_below > kmax + 1 ? core_s.sync_below : kmax + 1;
    /* a long path (a gateway): credit back at half the ring, so a stream never waits for the
     * SYNC's round trip (with the rule above it sent a ring's worth, then waited for it) */
    if ((f->caps->flags & FAB_CAP_CREDIT_EARLY) && c->nblocks / 2 > c->sync_below)
        c->sync_below = c->nblocks / 2;
}

/* The connection to lpid over fabric f. The fabric reports through
 * core_conn_ready when packets may flow; until then tx_limit stays tx_count and
 * everything waits in the backlog. */
static core_conn *core_conn_make(int lpid, core_fab *f, const char *card, int passive, const char *why)
{
    core_conn *c = util_calloc(1, sizeof *c);
    c->lpid = lpid;
    c->fab = f;
    snprintf(c->why, sizeof c->why, "%s", why);
    c->caps = f->caps->flags;
    c->halves = (c->caps & FAB_CAP_RING_MAPPED) && util_cfg.half_packets;
    /* the fabric's ring size; positions start at the ring base (0; near the 32-bit wrap when
     * a test asks); no credit until ready */
    c->nblocks = f->ops->chan->ring_blocks(card);
    if (c->nblocks == 0) /* the core's, or a card connect() will refuse */
        c->nblocks = core_s.nblocks;
    core_conn_limits(c, f);
    c->tx_count = c->tx_limit = c->rx_count = c->rx_freed = c->rx_advertised = c->credit_seen =
        fab_ring_base(core_s.fp.ring_start, c->nblocks);
    util_queue_init(&c->backlog);
    void *rx = NULL;
    int rc = f->ops->chan->connect(lpid, card, passive, c, &c->fc, &rx);
    if (rc != UTIL_OK) {
        util_log("cannot connect to %s over %s", util_proc(lpid), f->ops->name);
        core_s.conn_failure = rc == UTIL_EACCES || rc == UTIL_ENOMEM ? rc : UTIL_ECONN;
        free(c);
        return NULL;
    }
    c->rx_ring = rx;
    core_s.conns[lpid] = c;
    core_s.active[core_s.nactive++] = c;
    core_conn_wake(c); /* polled until a pass finds nothing (woken ones), or always */
    f->nconns++;
    f->made++;
    core_st.connections++;
    core_fab_pace();
    if (__builtin_expect(core_s.nlost != 0, 0))
        core_lost_greet(c);
    /* the single-copy probe (about 0.1 ms, once per process) runs with the first connection
     * that could use it, not inside the first rendezvous */
    if ((c->caps & FAB_CAP_RMA) && core_copy_probed(c) && util_cfg.cma_min < 0)
        (void)core_copy_below(NULL, NULL);
    return c;
}

void core_conn_ready(void *ctx, int status)
{
    core_conn *c = ctx;
    if (status != UTIL_OK)
        util_die("cannot connect to %s over %s", util_proc(c->lpid), c->fab->ops->name);
    c->ready = 1;
    if (c->caps & FAB_CAP_RING_MAPPED)
        c->tx_ring = c->fab->ops->chan->tx_block(c->fc, 0);
    c->tx_limit = c->credit_seen + c->nblocks;
    if (c->caps & FAB_CAP_TX_CREDIT)
        c->fab->ops->chan->tx_credit(c->fc, c->tx_limit);
}

core_conn *core_conn_first(int lpid)
{
    char why[128];
    char card[CORE_CARD_MAX];
    core_fab *f = core_fab_choose(lpid, card, sizeof card, why, sizeof why);
    if (!f) {
        /* no fabric reaches the peer (core_conn_failure_text says why), or its card is not
         * there (logged) */
        core_s.conn_failure = core_conn_failure_text()[0] ? UTIL_EUNREACH : UTIL_ECONN;
        return NULL;
    }
    return core_conn_make(lpid, f, card, 0, why);
}

/* a peer opened a connection to us on fabric fab: make our side */
int core_conn_incoming(const fab_ops *fab, int peer)
{
    if (peer < 0 || peer >= core_s.nprocs || peer == core_s.self) {
        util_log("%s: a connection request names %s, which this process does not know", fab->name,
                 util_proc(peer));
        return UTIL_EPROTO;
    }
    core_fab *f = NULL;
    for (int i = 0; i < core_s.nfabs; i++)
        if (core_s.fabs[i].ops == fab)
            f = &core_s.fabs[i];
    core_conn *c = core_s.conns[peer];
    if (c || !f) {
        util_log("%s: %s asks for a connection, but mine to it runs over %s", fab->name,
                 util_proc(peer), c ? c->fab->ops->name : "no fabric");
        return UTIL_ECONN;
    }
    /* the peer waits for our side: failing to make it ends this process (with the reason
     * logged), so the job ends instead of hanging */
    char card[CORE_CARD_MAX];
    char why[128];
    snprintf(why, sizeof why, "%s: the peer connected with it", fab->name);
    if (core_card_get(peer, fab, card, sizeof card) != UTIL_OK || !core_conn_make(peer, f, card, 1, why))
        util_die("cannot accept the connection %s opened over %s", util_proc(peer), fab->name);
    return UTIL_OK;
}

_Static_assert(WIRE_TYPE_MAX < sizeof core_st.sent / sizeof core_st.sent[0],
               "the packet counters have a slot for every type");
_Static_assert(WIRE_PAD_HALF < sizeof core_st.sent / sizeof core_st.sent[0], "stats count half packets too");

/* where the second half of the block before tx_count is */
static wire_half *core_conn_tx_second_half(core_conn *c)
{
    return (wire_half *)(c->tx_ring + (size_t)((c->tx_count - 1) & (c->nblocks - 1)) * core_s.block_size +
                         WIRE_HALF_OFFSET);
}

void core_conn_close_half(core_conn *c)
{
    wire_half *hh = core_conn_tx_second_half(c);
    hh->type = WIRE_PAD_HALF;
    hh->len = 0;
    atomic_store_explicit((_Atomic uint32_t *)&hh->mark, c->tx_count | WIRE_HALF_BIT, memory_order_release);
    c->tx_half = 0;
}

int core_conn_send_half(core_conn *c, const void *data, size_t bytes, int32_t src_rank, int32_t tag,
                        uint32_t ctx)
{
    wire_half *hh;
    uint32_t mark;
    if (c->tx_half) {
        hh = core_conn_tx_second_half(c);
        mark = c->tx_count | WIRE_HALF_BIT;
        c->tx_half = 0;
    } else {
        wire_hdr *h = core_conn_tx_begin(c, 0, 0);
        if (!h)
            return UTIL_EAGAIN;
        hh = (wire_half *)h;
        /* the second half's mark is zeroed before the first half is published: the receiver
         * looks at it only after that, and then sees nothing of an older lap */
        *(uint32_t *)((uint8_t *)h + WIRE_HALF_OFFSET) = 0;
        mark = ++c->tx_count;
        c->tx_half = 1;
    }
    hh->type = WIRE_EAGER_HALF;
    hh->len = (uint8_t)bytes;
    hh->zero = 0;
    hh->ctx = ctx;
    hh->src = src_rank;
    hh->tag = tag;
    util_copy_small(hh + 1, data, bytes);
    ++c->tx_msg_seq;
    core_st.sent[WIRE_EAGER]++;
    core_st.sent[WIRE_EAGER_HALF]++;
    atomic_store_explicit((_Atomic uint32_t *)&hh->mark, mark, memory_order_release);
    return UTIL_OK;
}

/* the rest of the ring before a packet of k blocks, as a PAD once its blocks are free (a SYNC
 * never needs one: it is one block). So a sender never needs more than the blocks of its
 * packet + 1 at once, and the receiver's SYNC rule can promise them. 0 when out of credit */
int core_conn_tx_pad(core_conn *c, uint32_t pad)
{
    if ((int32_t)(c->tx_limit - c->tx_count) < (int32_t)pad + 1)
        return 0;
    wire_hdr *h = core_conn_tx_at(c);
    memset(h, 0, sizeof *h);
    h->type = WIRE_PAD;
    h->len = (uint32_t)(pad * core_s.block_size - sizeof *h);
    core_conn_tx_end(c, h);
    return 1;
}

void core_conn_backlog(core_conn *c, core_pend *p)
{
    core_st.backlog++;
    util_queue_push(&c->backlog, &p->qn);
    core_conn_wake(c); /* the backlog drains in progress */
}

void core_conn_wake(void *ctx)
{
    core_conn *c = ctx;
    if (!c->hot) {
        c->hot = 1;
        core_s.hot[core_s.nhot++] = c;
    }
}

int core_conn_cool(core_conn *c)
{
    if (!(c->caps & FAB_CAP_RX_WAKE) || !util_queue_empty(&c->backlog) || c->sync_wanted ||
        c->rx_freed != c->rx_count)
        return 0;
    c->hot = 0;
    return 1;
}

int core_conn_send_ctl(core_conn *c, int type, uint16_t flags, const wire_hdr *env,
                       const void *payload, size_t len)
{
    wire_hdr *h = util_queue_empty(&c->backlog) ? core_conn_tx_begin(c, len, type == WIRE_SYNC) : NULL;
    if (!h) {
        core_pend *p = core_pend_new(len);
        if (env)
            p->hdr = *env;
        p->hdr.type = (uint8_t)type;
        p->hdr.flags = flags;
        p->hdr.len = (uint32_t)len;
        memcpy(p->payload, payload, len);
        core_conn_backlog(c, p);
        return UTIL_OK;
    }
    if (env) {
        h->ctx = env->ctx;
        h->src = env->src;
        h->tag = env->tag;
        h->seq = env->seq;
    } else {
        h->ctx = 0;
        h->src = 0;
        h->tag = 0;
        h->seq = 0;
    }
    h->type = (uint8_t)type;
    h->flags = flags;
    h->len = (uint32_t)len;
    memcpy(h + 1, payload, len);
    core_conn_tx_end(c, h);
    return UTIL_OK;
}

/* send what waits for credit, in order */
static int core_conn_drain(core_conn *c)
{
    int events = 0;
    util_qnode *n;
    while ((n = util_queue_first(&c->backlog))) {
        core_pend *p = UTIL_CONTAINER(n, core_pend, qn);
        core_req *r = p->req;
        wire_hdr *h;
        if (r && r->u.send.state == CORE_S_STREAM) {
            /* a stream that moved some bytes made progress (the waits must not back off:
             * the chunks it waits for come free without a packet) */
            size_t before = r->u.send.sent;
            if (!core_stream_push(c, p))
                return events + (r->u.send.sent != before);
        } else if (r && r->u.send.state == CORE_S_WRITING) {
            return events;  /* its DONE keeps its place until the write completes */
        } else if (r) {
            /* an EAGER or RTS of a send request, or the DONE of a finished write */
            size_t len = r->u.send.state == CORE_S_WRITTEN ? sizeof(wire_done)
                         : core_send_is_eager(c, r)        ? core_eager_len(r)
                                                           : sizeof(wire_rndv);
            if (!(h = core_conn_tx_begin(c, len, 0)))
                return events;
            util_queue_remove(n);
            free(p);
            if (r->u.send.state == CORE_S_WRITTEN)
                core_rtr_done_emit(c, r, h);
            else if (core_send_is_eager(c, r))
                core_eager_emit(c, r, h);
            else
                core_rts_emit(c, r, h);
            events++;
            continue;
        } else {
            if (!(h = core_conn_tx_begin(c, p->hdr.len, p->hdr.type == WIRE_SYNC)))
                return events;
            h->ctx = p->hdr.ctx;
            h->src = p->hdr.src;
            h->tag = p->hdr.tag;
            h->seq = p->hdr.seq;
            h->type = p->hdr.type;
            h->flags = p->hdr.flags;
            h->len = p->hdr.len;
            memcpy(h + 1, p->payload, p->hdr.len);
            core_conn_tx_end(c, h);
        }
        util_queue_remove(n);
        free(p);
        events++;
    }
    return events;
}

/* Everything a peer sends is checked before it is used. */
static int core_wire_check(core_conn *c, const wire_hdr *h)
{
    const char *why = NULL;
    if (h->version != WIRE_VERSION)
        why = "unknown wire version";
    else if ((h->type < WIRE_EAGER || h->type > WIRE_TYPE_MAX) && h->type != WIRE_LOST)
        why = "unknown packet type";
    else if (h->type == WIRE_LOST &&
             (!(c->caps & FAB_CAP_ROUTE) || !h->len || h->len % sizeof(wire_lost)))
        why = "a report of lost messages on a connection that goes through no gateway, or "
              "of a bad size";
    else if (h->type != WIRE_PAD && h->len > c->payload_max)
        why = "payload longer than the largest packet";
    else if ((c->caps & FAB_CAP_RX_QUEUE) && h->type == WIRE_PAD)
        why = "padding on a connection without a ring";
    else if (!(c->caps & FAB_CAP_RX_QUEUE) &&
             (c->rx_count & (c->nblocks - 1)) + core_blocks(h->len) > c->nblocks)
        why = "packet past the ring's end";
    else if (!(c->caps & FAB_CAP_RX_QUEUE) && h->type == WIRE_PAD &&
             (c->rx_count & (c->nblocks - 1)) + core_blocks(h->len) != c->nblocks)
        why = "padding that does not end at the ring's end";
    else if ((h->type == WIRE_RTS || h->type == WIRE_RTR) && h->len != sizeof(wire_rndv))
        why = "bad rendezvous payload size";
    else if ((h->type == WIRE_DONE || h->type == WIRE_CTS || h->type == WIRE_ACK ||
              h->type == WIRE_CANCEL || h->type == WIRE_CANCEL_ACK) &&
             h->len != sizeof(wire_done))
        why = "bad control payload size";
    else if (h->type == WIRE_SPLIT &&
             (h->len != sizeof(wire_split) || !(c->caps & FAB_CAP_RING_MAPPED)))
        why = "bad split payload size, or a split on a connection without a mapped ring";
    else if (h->type == WIRE_DATA && h->len < sizeof(wire_frag))
        why = "bad fragment size";
    else if ((int32_t)(h->credit - c->tx_count) > 0)
        why = "credit for packets never sent";
    else if ((h->type == WIRE_EAGER || h->type == WIRE_RTS ||
              (h->type == WIRE_DONE && (h->flags & WIRE_F_RTR_DATA))) &&
             h->seq != c->rx_msg_seq + 1)
        why = "message out of sequence";
    if (!why)
        return UTIL_OK;
    util_log("malformed packet from %s: %s (type %u version %u len %u seq %u, expected seq %u)",
             util_proc(c->lpid), why, h->type, h->version, h->len, h->seq, c->rx_msg_seq + 1);
    return UTIL_EPROTO;
}

/* a packet's work by its type; payload: the bytes after its header */
static void core_dispatch(core_conn *c, const wire_hdr *h, const void *payload)
{
    switch (h->type) {
    case WIRE_EAGER:
        c->rx_msg_seq = h->seq;
        core_rtr_seq_seen(c, h->seq);
        core_eager_arrived(c, h, payload);
        break;
    case WIRE_RTS:
        c->rx_msg_seq = h->seq;
        core_rtr_seq_seen(c, h->seq);
        core_rts_arrived(c, h, payload);
        break;
    case WIRE_RTR:
        core_rtr_arrived(c, h, payload);
        break;
    case WIRE_SPLIT:
        core_split_arrived(c, (wire_split *)(uintptr_t)payload);
        break;
    case WIRE_DONE: /* the protocol that moved the data completes it */
        if (h->flags & WIRE_F_RTR_DATA) {
            c->rx_msg_seq = h->seq;
            core_write_done_arrived(c, h, payload);
        } else if (h->flags & WIRE_F_SPLIT) {
            core_split_done_arrived(c, h, payload);
        } else {
            core_read_done_arrived(c, h, payload);
        }
        break;
    case WIRE_ACK:
        core_ack_arrived(c, payload);
        break;
    case WIRE_CTS:
        core_cts_arrived(c, h, payload);
        break;
    case WIRE_DATA:
        core_data_arrived(c, h, payload, (const uint8_t *)payload + sizeof(wire_frag));
        break;
    case WIRE_CANCEL:
    case WIRE_CANCEL_ACK:
        core_cancel_arrived(c, h, payload);
        break;
    case WIRE_SYNC:
        if (h->flags & WIRE_F_FIN)
            c->fin_in = 1;
        break;
    case WIRE_PAD:
        break;
    case WIRE_LOST:
        core_lost_arrived(c, payload, h->len / sizeof(wire_lost));
        break;
    }
}

/* The later blocks of a consumed packet of k blocks at position pos: a first word that could
 * read as a tail marker becomes the block's index. On a mapped ring the mark the receiver
 * waits for is the only thing that reads a block's first word, and the next mark a later
 * block of the packet can be asked for is its position one lap on + 1 (every block is
 * written in every lap, or left as it was under a PAD and looked at again then): only a
 * payload word equal to that is cleared, the rest are only read. Writing every later
 * block's first word, as other fabrics need (ofi's lead words), cost each shm ring line a
 * third transfer between the two cores: 2 ranks, one buffer, window 64, 2 KiB messages 8.3
 * against 9.9 GB/s one way and 12.5 against 13.8 both ways, 8 KiB 10.5 against 13.2 and
 * 13.6 against 16.5. (Done at arrival instead, both ways at 1-2 KiB went at 0.55x.) */
static inline void core_conn_unmark(const core_conn *c, uint8_t *b, uint32_t pos, uint32_t k)
{
    int every = !(c->caps & FAB_CAP_RING_MAPPED);
    uint32_t next = pos + c->nblocks + 1;
    for (uint32_t j = 1; j < k; j++) {
        uint32_t *w = (uint32_t *)(b + (size_t)j * core_s.block_size);
        if (every || __builtin_expect(*w == next + j, 0))
            *w = (pos + j) & (c->nblocks - 1); /* a packet never wraps: at + j */
    }
}

/* Blocks consumed become free once no stale first word of a packet's later blocks (which
 * held payload) can read as the tail marker of a later packet. A cleared word is the
 * block's own index, which no mark of that block ever equals (marks of block i are i + 1
 * modulo the ring; 0 would be one, once the 32-bit positions wrap): core_conn_unmark. Done
 * in order,
 * off the message's path: when a progress pass finds nothing new, before a SYNC, and when
 * half the ring waits (a stream). Only blocks up to rx_freed are advertised. The headers
 * are read again for their lengths: a peer that changed one since it arrived is reported. */
static void core_conn_free_blocks(core_conn *c)
{
    while (c->rx_freed != c->rx_count) {
        uint32_t at = c->rx_freed & (c->nblocks - 1);
        uint8_t *b = c->rx_ring + (size_t)at * core_s.block_size;
        uint32_t k = b[offsetof(wire_hdr, type)] == WIRE_EAGER_HALF ? 1 : core_blocks(((const wire_hdr *)b)->len);
        if (k > c->rx_count - c->rx_freed || at + k > c->nblocks)
            util_die("malformed packet from %s: a header changed after it arrived; "
                     "aborting: the connection is corrupt",
                     util_proc(c->lpid));
        core_conn_unmark(c, b, c->rx_freed, k);
        if (c->caps & FAB_CAP_RX_FREE)
            c->fab->ops->chan->rx_free(c->fc, c->rx_freed, b, k);
        c->rx_freed += k;
    }
}

/* The sender's credit as it sees it (what we last advertised + the ring - what it sent) is
 * below what its next packet may need: it wants a SYNC */
static inline int core_conn_peer_low(const core_conn *c)
{
    return (int32_t)(c->rx_advertised + c->nblocks - c->rx_count) < (int32_t)c->sync_below;
}

/* after a block was consumed: a SYNC is wanted once the sender's view of my ring runs low */
static inline void core_conn_want_sync(core_conn *c)
{
    if (core_conn_peer_low(c) && !c->sync_wanted) {
        c->sync_wanted = 1;
        c->sync_pass = core_s.passes;
    }
}

/* a half packet's message (the first half when second is 0): its envelope as an EAGER's */
static void core_half_arrived(core_conn *c, const wire_half *hh, int second)
{
    if ((hh->type != WIRE_EAGER_HALF && !(second && hh->type == WIRE_PAD_HALF)) || hh->len > WIRE_HALF_MAX)
        util_die("malformed packet from %s: a half packet of type %u, length %u "
                 "(aborting: the connection is corrupt)",
                 util_proc(c->lpid), hh->type, hh->len);
    if (hh->type == WIRE_PAD_HALF)
        return;
    core_st.received[WIRE_EAGER]++;
    core_st.received[WIRE_EAGER_HALF]++;
    wire_hdr e = {.type = WIRE_EAGER, .version = WIRE_VERSION, .ctx = hh->ctx, .src = hh->src,
                  .tag = hh->tag, .seq = c->rx_msg_seq + 1, .len = hh->len, .credit = c->credit_seen};
    core_dispatch(c, &e, hh + 1);
}

int core_progress_conn(core_conn *c)
{
    int events = 0;
    for (;;) {
        wire_hdr *h;
        if (__builtin_expect(c->caps & FAB_CAP_RX_QUEUE, 0)) {
            /* nothing comes after the peer's FIN on this connection: what its queue holds
             * then is the next connection's (a queue fabric may keep one queue per peer) */
            if (c->fin_in || !(h = c->fab->ops->chan->rx_peek(c->fc)))
                break;
        } else {
            h = (wire_hdr *)(c->rx_ring + (size_t)(c->rx_count & (c->nblocks - 1)) * core_s.block_size);
            if (c->rx_half) {
                /* the block's second half: a half packet or the PAD that closes it */
                const wire_half *hh = (const wire_half *)((const uint8_t *)h + WIRE_HALF_OFFSET);
                uint32_t mark = atomic_load_explicit((_Atomic uint32_t *)&hh->mark, memory_order_acquire);
                if (mark != ((c->rx_count + 1) | WIRE_HALF_BIT))
                    break;
                core_half_arrived(c, hh, 1);
                c->rx_half = 0;
                c->rx_count++;
                events++;
                core_conn_want_sync(c);
                continue;
            }
            uint32_t mark = atomic_load_explicit((_Atomic uint32_t *)&h->mark, memory_order_acquire);
            if (mark != c->rx_count + 1)
                break;
            if (h->type == WIRE_EAGER_HALF) {
                c->rx_half = 1;
                core_half_arrived(c, (const wire_half *)h, 0);
                events++;
                continue;
            }
        }
        if (core_wire_check(c, h) != UTIL_OK)
            util_die("aborting: the connection to %s is corrupt", util_proc(c->lpid));
        /* credit counts only once the connection is ready (a fabric may deliver the peer's
         * first packets before it has told us where the peer's ring is) */
        if ((int32_t)(h->credit - c->credit_seen) > 0) {
            c->credit_seen = h->credit;
            if (c->sent_head != c->sent_n)
                core_lost_prune(c);
            if (c->ready) {
                c->tx_limit = h->credit + c->nblocks;
                if (__builtin_expect(c->caps & FAB_CAP_TX_CREDIT, 0))
                    c->fab->ops->chan->tx_credit(c->fc, c->tx_limit);
            }
        }
        core_st.received[h->type]++;
        uint32_t k = core_blocks(h->len);
        core_dispatch(c, h, h + 1);
        c->rx_count += k;
        if (c->caps & FAB_CAP_RX_QUEUE) {
            /* nothing of a packet is used after its dispatch (payloads kept are copies): its
             * buffer space goes back at once, and its blocks count as freed credit */
            c->fab->ops->chan->rx_free(c->fc, c->rx_count - k, h, k);
            c->rx_freed = c->rx_count;
        }
        events++;
        /* SYNCs count too: they use up credit like any packet. (No SYNC storm: ours
         * advertises, so the peer's view of us is full right after it.) */
        core_conn_want_sync(c);
    }
    /* SYNCs go on during finalize's FIN handshake (a FIN may wait for the credit a SYNC
     * brings, core_fin_exchange); a late one lands in a ring nobody reads any more (shm), or
     * in an endpoint kept open until every process passed the fence at close (ofi). Once
     * both FINs are through, neither side sends anything else: no SYNC either */
    if (c->rx_freed != c->rx_count &&
        (events == 0 || c->sync_wanted || c->rx_count - c->rx_freed >= c->nblocks / 2))
        core_conn_free_blocks(c);
    /* Where a packet is a fabric operation (no mapped ring: ofi, a write and a completion on
     * both sides), the SYNC waits for a later progress pass: a packet the process sends to
     * the peer meanwhile (the reply a receive was waiting for) carries the blocks just freed
     * and makes it unnecessary. Sent at once it went ahead of that reply on every 8 KiB
     * ping-pong (the credit advertised one packet late): 10.0 against 9.2 us between two
     * hosts. On a mapped ring a SYNC is a store, and waiting cost bi-directional bandwidth
     * at 12-16 KiB (6-12%), so it goes at once there. */
    if (c->sync_wanted && !core_conn_peer_low(c))
        c->sync_wanted = 0;
    if (c->sync_wanted && ((c->caps & FAB_CAP_RING_MAPPED) || c->sync_pass != core_s.passes) &&
        !core_s.finalizing && !(c->fin_in && c->fin_out)) {
        /* a SYNC needs no order: it may take the reserved last credit ahead of the backlog */
        wire_hdr *h = core_conn_tx_begin(c, 0, 1);
        if (h) {
            memset(h, 0, sizeof *h);
            h->type = WIRE_SYNC;
            core_conn_tx_end(c, h);
            c->sync_wanted = 0;
            events++;
        }
    }
    if (!util_queue_empty(&c->backlog))
        events += core_conn_drain(c);
    return events;
}
