/* Sender-first rendezvous: the sender writes RTS with its buffer; the
 * receiver, when it matches, reads the data straight from the sender's
 * memory with a one-sided read and answers DONE. Also handles the simultaneous
 * case (RTS and RTR crossed: the receiver reads, the sender ignores the RTR). */
#include "core/core_impl.h"

#include <stdlib.h>
#include <string.h>

void core_rts_emit(core_conn *c, core_req *r, wire_hdr *h)
{
    const core_dt *dt = r->u.send.dt;
    wire_rndv rv = {
        /* a non-contiguous buffer cannot be read in one range: address 0 asks for the copy path */
        .addr = dt->contig ? (uint64_t)(uintptr_t)core_at(r->u.send.buf, dt->true_lb) : 0,
        .size = r->u.send.bytes,
        .req = (uint32_t)r->id,
    };
    h->type = WIRE_RTS;
    h->flags = 0;
    h->ctx = r->u.send.ctx;
    h->src = r->u.send.src;
    h->tag = r->u.send.tag;
    h->seq = r->u.send.seq;
    h->len = sizeof rv;
    memcpy(h + 1, &rv, sizeof rv);
    r->u.send.state = CORE_S_RNDV_WAIT;
    core_conn_tx_end(c, h);
}

int core_rts_send(core_conn *c, core_req *r)
{
    wire_hdr *h = util_queue_empty(&c->backlog) ? core_conn_tx_begin(c, 0) : NULL;
    if (h) {
        core_rts_emit(c, r, h);
        return UTIL_OK;
    }
    core_pend *p = util_calloc(1, sizeof *p);
    p->req = r;
    r->u.send.state = CORE_S_QUEUED;
    core_conn_backlog(c, p);
    return UTIL_OK;
}

void core_rts_arrived(core_conn *c, const wire_hdr *h, const wire_rndv *rv)
{
    core_req *r = core_match_arrival(c, h);
    if (r) {
        core_rts_matched(r, c->lpid, h, rv);
        return;
    }
    core_msg *m = util_calloc(1, sizeof *m);
    m->type = WIRE_RTS;
    m->ctx = h->ctx;
    m->src = h->src;
    m->tag = h->tag;
    m->lpid = c->lpid;
    m->seq = h->seq;
    m->size = (size_t)rv->size;
    m->rndv = *rv;
    core_st.unexpected++;
    util_queue_push(&core_s.unexpected, &m->qn);
}

/* read [0, take) of the message into the receive buffer, 64 iovecs at a time */
static int core_read_into(core_conn *c, core_req *r, uint64_t raddr, size_t take)
{
    const core_dt *dt = r->u.recv.dt;
    if (dt->contig) {
        struct iovec iov = {core_at(r->u.recv.buf, dt->true_lb), take};
        return c->fab->read(c->fc, &iov, 1, raddr, take);
    }
    struct iovec iov[64];
    size_t off = 0;
    while (off < take) {
        size_t covered = 0;
        int n = core_dt_iov(r->u.recv.buf, r->u.recv.count, dt, off, take - off, iov, 64, &covered);
        if (n <= 0 || covered == 0)
            return UTIL_EIO;
        int rc = c->fab->read(c->fc, iov, n, raddr + off, covered);
        if (rc != UTIL_OK)
            return rc;
        off += covered;
    }
    return UTIL_OK;
}

void core_rts_matched(core_req *r, int lpid, const wire_hdr *env, const wire_rndv *rv)
{
    core_conn *c = core_conn_get(lpid);
    if (!c)
        util_die("lost the connection to process %d", lpid);
    size_t size = (size_t)rv->size;
    size_t take = size < r->u.recv.capacity ? size : r->u.recv.capacity;
    r->u.recv.lpid = lpid;
    if (rv->addr && c->has_rdma && core_read_into(c, r, rv->addr, take) == UTIL_OK) {
        wire_done d = {.req = rv->req, .size = take};
        core_st.cma_bytes += take;
        core_conn_send_ctl(c, WIRE_DONE, 0, NULL, &d, sizeof d);
        core_recv_finish(r, env->src, env->tag, take, size > take);
        return;
    }
    /* copy path: ask the sender to stream the message through the ring */
    r->u.recv.state = CORE_R_FRAGS;
    r->u.recv.expected = size;
    r->u.recv.received = 0;
    r->status.MPI_SOURCE = env->src;
    r->status.MPI_TAG = env->tag;
    wire_done d = {.req = rv->req, .peer_req = (uint32_t)r->id};
    core_conn_send_ctl(c, WIRE_CTS, 0, NULL, &d, sizeof d);
}

static core_req *core_req_expect(core_conn *c, uint32_t id, int kind, int state, const char *what)
{
    core_req *r = core_req_get((int)id);
    int ok = r && r->kind == kind && !r->complete &&
             (kind == CORE_REQ_SEND ? r->u.send.state == state && r->u.send.lpid == c->lpid
                                    : r->u.recv.state == state);
    if (!ok)
        util_die("malformed packet from process %d: %s names request %u, which is not waiting for it",
                 c->lpid, what, id);
    return r;
}

void core_done_arrived(core_conn *c, const wire_hdr *h, const wire_done *d)
{
    if (h->type == WIRE_ACK) {
        core_req *s = core_req_expect(c, d->req, CORE_REQ_SEND, CORE_S_ACK_WAIT, "ACK");
        s->u.send.state = CORE_S_DONE;
        core_req_complete(s);
        return;
    }
    if (h->flags & WIRE_F_RTR_DATA) {
        core_req *r = core_req_expect(c, d->req, CORE_REQ_RECV, CORE_R_RTR, "DONE (receiver-first)");
        if (r->u.recv.rtr_seq != h->seq || c->rtr_out != r || d->size > r->u.recv.capacity)
            util_die("malformed packet from process %d: DONE for message %u does not fit its RTR",
                     c->lpid, h->seq);
        util_queue_remove(&r->qn);
        c->rtr_out = NULL;
        r->u.recv.lpid = c->lpid;
        core_st.cma_bytes += d->size;
        core_recv_finish(r, r->u.recv.src, r->u.recv.tag, (size_t)d->size, 0);   /* an RTR names both */
        return;
    }
    core_req *s = core_req_expect(c, d->req, CORE_REQ_SEND, CORE_S_RNDV_WAIT, "DONE");
    s->u.send.state = CORE_S_DONE;
    core_req_complete(s);
}
