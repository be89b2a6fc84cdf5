/* Receiver-first rendezvous: a posted receive that can only take one peer's
 * next message sends RTR with its buffer, bound to that message's sequence
 * number; the sender writes the data straight into it and sends DONE.
 * Allowed only when it cannot change which message a receive gets: specific
 * source and tag, contiguous buffer, no earlier receive that could match, one
 * RTR per connection. If message `seq` turns out to be anything else (eager
 * data, an RTS that crossed the RTR, another tag), the RTR is stale: the
 * receive stays posted as usual and the sender drops the RTR.
 *
 * A write the fabric completes later (ofi) holds the connection's backlog:
 * the DONE must reach the receiver before any later message of the pair
 * (they are checked in sequence), so everything queued behind it waits. A
 * write that fails falls back to RTS: the receiver then reads, or asks for
 * the copy path. */
#include "core/core_impl.h"

#include <string.h>
#include <stdlib.h>

void core_rtr_maybe_send(core_req *r)
{
    if (r->u.recv.capacity <= core_s.eager_least || util_cfg.rndv_mode == 1 /* read */ ||
        r->u.recv.lpid < 0 || r->u.recv.lpid == core_s.self || r->u.recv.tag == CORE_ANY_TAG ||
        !r->u.recv.dt->contig)
        return;
    core_conn *c = core_conn_get(r->u.recv.lpid);
    if (!c || r->u.recv.capacity <= c->eager_max || !(c->caps & FAB_CAP_RMA) || c->rtr_out ||
        core_posted_blocks_rtr(r))
        return;
    if (c->rtr_skip) { /* RTRs to this peer went stale lately (core_rtr_seq_seen) */
        c->rtr_skip--;
        return;
    }
    /* a message this small may go through the sender's staging pool (rndv_copy.c), if it has
     * one and other messages are under way (which only the sender knows); one that fits a
     * chunk comes as staged EAGER once the sender knows I mapped its pool */
    if (core_rtr_unwanted(c, r->u.recv.capacity) ||
        (c->peer_stage && core_stage_eager_fits(r->u.recv.capacity)))
        return;
    void *buf = core_at(r->u.recv.buf, r->u.recv.dt->true_lb);
    core_mem *m = &core_rndv_of(r)->mem;
    core_mem_hold(c, m, buf, r->u.recv.capacity);
    if (!m->fab)
        return;
    wire_hdr env = {.ctx = r->u.recv.ctx, .src = r->u.recv.src, .tag = r->u.recv.tag,
                    .seq = c->rx_msg_seq + 1};
    wire_rndv rv = {
        .addr = m->mem.addr,
        .size = r->u.recv.capacity,
        .req = (uint32_t)r->id,
        .key = m->mem.key,
        .access = 1,
    };
    core_recv_move(r, CORE_RE_RTR, CORE_R_RTR);
    r->u.recv.rtr_seq = env.seq;
    c->rtr_out = r;
    core_conn_send_ctl(c, WIRE_RTR, 0, &env, &rv, sizeof rv);
}

void core_rtr_arrived(core_conn *c, const wire_hdr *h, const wire_rndv *rv)
{
    /* already sent that message (simultaneous case): the receiver reads it */
    if ((int32_t)(h->seq - c->tx_msg_seq) <= 0)
        return;
    c->rtr_in.valid = 1;
    c->rtr_in.seq = h->seq;
    c->rtr_in.ctx = h->ctx;
    c->rtr_in.src = h->src;
    c->rtr_in.tag = h->tag;
    c->rtr_in.addr = rv->addr;
    c->rtr_in.cap = rv->size;
    c->rtr_in.key = rv->key;
    c->rtr_in.access = rv->access != 0;
    c->rtr_in.req = rv->req;
}

void core_rtr_done_emit(core_conn *c, core_req *r, wire_hdr *h)
{
    wire_done d = {.req = r->rndv->xfer.peer_req, .size = r->u.send.bytes};
    h->type = WIRE_DONE;
    h->flags = WIRE_F_RTR_DATA;
    h->ctx = r->u.send.ctx;
    h->src = r->u.send.src;
    h->tag = r->u.send.tag;
    h->seq = r->u.send.seq;
    h->len = sizeof d;
    memcpy(h + 1, &d, sizeof d);
    core_conn_tx_end(c, h);
    core_send_move(r, CORE_SE_DONE_OUT, CORE_S_DONE);
    core_req_complete(r);
}

static void core_write_finished(core_xfer *x, int status)
{
    core_req *r = UTIL_CONTAINER(x, core_rndv, xfer)->req;
    core_conn *c = x->conn;
    if (status != UTIL_OK)
        util_log("receiver-first: writing %zu bytes into %s's buffer failed (%s); sending RTS "
                 "instead",
                 r->u.send.bytes, util_proc(c->lpid), strerror(-status));
    if (status != UTIL_OK)
        core_send_move(r, CORE_SE_WRITE_FAILED, CORE_S_QUEUED);
    if (r->u.send.hold) {
        /* its place in the backlog: the drain sends the DONE, or the RTS instead */
        if (status == UTIL_OK)
            core_send_move(r, CORE_SE_WRITTEN, CORE_S_WRITTEN);
        return;
    }
    if (status != UTIL_OK) {
        core_rts_send(c, r);
        return;
    }
    wire_hdr env = {.ctx = r->u.send.ctx, .src = r->u.send.src, .tag = r->u.send.tag,
                    .seq = r->u.send.seq};
    wire_done d = {.req = x->peer_req, .size = r->u.send.bytes};
    core_conn_send_ctl(c, WIRE_DONE, WIRE_F_RTR_DATA, &env, &d, sizeof d);
    core_send_move(r, CORE_SE_DONE_OUT, CORE_S_DONE);
    core_req_complete(r);
}

int core_rtr_try_write(core_conn *c, core_req *r)
{
    if (!c->rtr_in.valid || (int32_t)(c->rtr_in.seq - r->u.send.seq) > 0)
        return 0;
    c->rtr_in.valid = 0;    /* message seq is being sent now, whatever happens */
    if (c->rtr_in.seq != r->u.send.seq || c->rtr_in.ctx != r->u.send.ctx ||
        c->rtr_in.src != r->u.send.src || c->rtr_in.tag != r->u.send.tag ||
        r->u.send.bytes > c->rtr_in.cap || !r->u.send.dt->contig || !(c->caps & FAB_CAP_RMA) ||
        !c->rtr_in.access || (core_copy_wanted(c, r) && core_stage_offer(c)))
        return 0;
    core_send_move(r, CORE_SE_WRITE, CORE_S_WRITING);
    r->u.send.hold = 0;
    core_xfer *x = &core_rndv_of(r)->xfer;
    *x = (core_xfer){.conn = c, .write = 1, .raddr = c->rtr_in.addr, .rkey = c->rtr_in.key,
                     .len = r->u.send.bytes, .peer_req = c->rtr_in.req,
                     .base = core_at(r->u.send.buf, r->u.send.dt->true_lb), .finish = core_write_finished};
    core_bulk_start(x);
    if (r->u.send.state == CORE_S_WRITING) {
        /* completes later: hold the backlog at this message's place */
        core_pend *p = core_pend_new(0);
        p->req = r;
        r->u.send.hold = 1;
        core_conn_backlog(c, p);
    }
    return 1;
}

void core_rtr_seq_seen(core_conn *c, uint32_t seq)
{
    core_req *r = c->rtr_out;
    if (r && r->u.recv.rtr_seq == seq) {
        core_recv_move(r, CORE_RE_STALE, CORE_R_POSTED);
        c->rtr_out = NULL;
        /* A stale RTR cost a packet each way and the buffer's registration for nothing. In
         * an exchange (both ranks MPI_Irecv, MPI_Isend, MPI_Waitall) every RTR crosses the
         * peer's RTS: so after each stale one the next 1, 3, 7 ... 63 receives to this peer
         * send none, and one that is used resets it (2 ranks, 64 KiB, one buffer: 24 against
         * 36 GB/s both ways with an RTR per receive) */
        c->rtr_backoff = c->rtr_backoff < 63 ? 2 * c->rtr_backoff + 1 : 63;
        c->rtr_skip = c->rtr_backoff;
        core_req_mem_drop(r);
        if (r->u.recv.cancel)
            core_cancel_recv(r);    /* the RTR is dead: the cancel asked meanwhile succeeds */
    }
}

/* DONE(RTR_DATA): the sender wrote message h->seq into my RTR's buffer */
void core_write_done_arrived(core_conn *c, const wire_hdr *h, const wire_done *d)
{
    core_req *r =
        core_req_expect(c, d->req, CORE_REQ_RECV, CORE_TO(CORE_R_RTR), "DONE (receiver-first)");
    if (r->u.recv.rtr_seq != h->seq || c->rtr_out != r || d->size > r->u.recv.capacity)
        util_die("malformed packet from %s: DONE for message %u does not fit its RTR",
                 util_proc(c->lpid), h->seq);
    util_queue_remove(&r->qn);
    c->rtr_out = NULL;
    c->rtr_backoff = 0; /* RTRs to this peer are used: no receive skips one */
    core_req_mem_drop(r);
    r->u.recv.lpid = c->lpid;
    core_st.cma_bytes += d->size;
    /* an RTR names both source and tag */
    core_recv_done(r, CORE_RE_WRITTEN, r->u.recv.src, r->u.recv.tag, (size_t)d->size, 0);
}
