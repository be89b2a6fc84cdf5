/* Connections: the receive ring, credits (thesis 3.4.2.4) and the backlog of
 * packets waiting for credit; arriving packets are checked and dispatched to
 * the protocol that owns their type.
 *
 * Credits are counted with free-running 32-bit counters rather than offsets
 * modulo MaxCredit: tx_count packets written, tx_limit = (packets the peer has
 * consumed, as it last told us) + MaxCredit, so credit = tx_limit - tx_count,
 * which is the thesis' (limit_remote + MaxCredit - offset_remote) % MaxCredit.
 * Every packet carries the sender's consumed count of the reverse ring. A data
 * packet needs two credits, so the last block is always free for a SYNC. */
#include "core/core_impl.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static core_conn *core_conn_make(int lpid, int passive)
{
    core_conn *c = util_calloc(1, sizeof *c);
    c->lpid = lpid;
    c->fab = &fab_shm_ops;
    if (c->fab->connect(lpid, "", passive, &c->fc, &c->rings) != UTIL_OK) {
        util_log("cannot connect to process %d", lpid);
        free(c);
        return NULL;
    }
    fab_caps caps;
    c->fab->caps(&caps);
    c->has_rdma = caps.has_rdma;
    c->tx_limit = core_s.nblocks;
    util_queue_init(&c->backlog);
    core_s.conns[lpid] = c;
    core_s.active[core_s.nactive++] = c;
    return c;
}

core_conn *core_conn_get(int lpid)
{
    core_conn *c = core_s.conns[lpid];
    if (c)
        return c;
    return core_conn_make(lpid, 0);
}

/* accept(): a peer started a connection; complete it unless we already have it */
int core_conn_accept(int lpid)
{
    if (core_s.conns[lpid])
        return 0;
    return core_conn_make(lpid, 1) ? 1 : -1;
}

wire_hdr *core_conn_tx_begin(core_conn *c, int control)
{
    int32_t credit = (int32_t)(c->tx_limit - c->tx_count);
    if (credit < (control ? 1 : 2))
        return NULL;
    return (wire_hdr *)(c->rings.tx + (size_t)(c->tx_count % core_s.nblocks) * core_s.block_size);
}

void core_conn_tx_end(core_conn *c, wire_hdr *h)
{
    h->version = WIRE_VERSION;
    h->credit = c->rx_count;
    c->rx_advertised = c->rx_count;
    if (h->type <= WIRE_TYPE_MAX)
        core_st.sent[h->type]++;
    c->tx_count++;
    atomic_store_explicit((_Atomic uint32_t *)&h->mark, c->tx_count, memory_order_release);
}

void core_conn_backlog(core_conn *c, core_pend *p)
{
    core_st.backlog++;
    util_queue_push(&c->backlog, &p->qn);
}

int core_conn_send_ctl(core_conn *c, int type, uint16_t flags, const wire_hdr *env,
                       const void *payload, size_t len)
{
    wire_hdr *h = util_queue_empty(&c->backlog) ? core_conn_tx_begin(c, type == WIRE_SYNC) : NULL;
    if (!h) {
        core_pend *p = util_calloc(1, sizeof *p);
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
        if (p->req && p->req->u.send.state == CORE_S_STREAM) {
            if (!core_stream_push(c, p))
                return events;
        } else if (p->req) {
            /* an EAGER or RTS of a send request */
            core_req *r = p->req;
            wire_hdr *h = core_conn_tx_begin(c, 0);
            if (!h)
                return events;
            util_queue_remove(n);
            free(p);
            if (core_send_is_eager(r))
                core_eager_emit(c, r, h);
            else
                core_rts_emit(c, r, h);
            events++;
            continue;
        } else {
            wire_hdr *h = core_conn_tx_begin(c, p->hdr.type == WIRE_SYNC);
            if (!h)
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
    else if (h->type < WIRE_EAGER || h->type > WIRE_TYPE_MAX)
        why = "unknown packet type";
    else if (h->len > core_payload_max())
        why = "payload longer than a ring block";
    else if ((h->type == WIRE_RTS || h->type == WIRE_RTR) && h->len != sizeof(wire_rndv))
        why = "bad rendezvous payload size";
    else if ((h->type == WIRE_DONE || h->type == WIRE_CTS || h->type == WIRE_ACK ||
              h->type == WIRE_CANCEL || h->type == WIRE_CANCEL_ACK) &&
             h->len != sizeof(wire_done))
        why = "bad control payload size";
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
    util_log("malformed packet from process %d: %s (type %u version %u len %u seq %u, expected seq %u)",
             c->lpid, why, h->type, h->version, h->len, h->seq, c->rx_msg_seq + 1);
    return UTIL_EPROTO;
}

static void core_dispatch(core_conn *c, const wire_hdr *h)
{
    const void *payload = h + 1;
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
    case WIRE_DONE:
        if (h->flags & WIRE_F_RTR_DATA)
            c->rx_msg_seq = h->seq;
        core_done_arrived(c, h, payload);
        break;
    case WIRE_ACK:
        core_done_arrived(c, h, payload);
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
        break;
    }
}

int core_progress_conn(core_conn *c)
{
    int events = 0;
    for (;;) {
        wire_hdr *h = (wire_hdr *)(c->rings.rx + (size_t)(c->rx_count % core_s.nblocks) * core_s.block_size);
        uint32_t mark = atomic_load_explicit((_Atomic uint32_t *)&h->mark, memory_order_acquire);
        if (mark != c->rx_count + 1)
            break;
        if (core_wire_check(c, h) != UTIL_OK)
            util_die("aborting: the connection to process %d is corrupt", c->lpid);
        uint32_t lim = h->credit + core_s.nblocks;
        if ((int32_t)(lim - c->tx_limit) > 0)
            c->tx_limit = lim;
        core_st.received[h->type]++;
        core_dispatch(c, h);
        c->rx_count++;
        events++;
        /* the sender's credit as it sees it: what we last advertised + MaxCredit - what it
         * sent. SYNCs count too: they use up credit like any packet. (No SYNC storm: ours
         * advertises, so the peer's view of us is full right after it.) */
        int32_t peer_credit = (int32_t)(c->rx_advertised + core_s.nblocks - c->rx_count);
        if (peer_credit < util_cfg.credit_sync_limit)
            c->sync_wanted = 1;
    }
    if (c->sync_wanted) {
        /* a SYNC needs no order: it may take the reserved last credit ahead of the backlog */
        wire_hdr *h = core_conn_tx_begin(c, 1);
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
