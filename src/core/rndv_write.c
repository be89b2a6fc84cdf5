/* Receiver-first rendezvous: a posted receive that can only take one peer's
 * next message sends RTR with its buffer, bound to that message's sequence
 * number; the sender writes the data straight into it and sends DONE.
 * Allowed only when it cannot change which message a receive gets: specific
 * source and tag, contiguous buffer, no earlier receive that could match, one
 * RTR per connection. If message `seq` turns out to be anything else (eager
 * data, an RTS that crossed the RTR, another tag), the RTR is stale: the
 * receive stays posted as usual and the sender drops the RTR. */
#include "core/core_impl.h"

#include <string.h>

void core_rtr_maybe_send(core_req *r)
{
    if (util_cfg.rndv_mode == 1 /* read */ || r->u.recv.lpid < 0 ||
        r->u.recv.lpid == core_s.self || r->u.recv.tag == MPI_ANY_TAG || !r->u.recv.dt->contig ||
        r->u.recv.capacity <= core_s.eager_max)
        return;
    core_conn *c = core_conn_get(r->u.recv.lpid);
    if (!c || !c->has_rdma || c->rtr_out || core_posted_blocks_rtr(r))
        return;
    wire_hdr env = {.ctx = r->u.recv.ctx, .src = r->u.recv.src, .tag = r->u.recv.tag,
                    .seq = c->rx_msg_seq + 1};
    wire_rndv rv = {
        .addr = (uint64_t)(uintptr_t)core_at(r->u.recv.buf, r->u.recv.dt->true_lb),
        .size = r->u.recv.capacity,
        .req = (uint32_t)r->id,
    };
    r->u.recv.state = CORE_R_RTR;
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
    c->rtr_in.req = rv->req;
}

int core_rtr_try_write(core_conn *c, core_req *r)
{
    if (!c->rtr_in.valid || (int32_t)(c->rtr_in.seq - r->u.send.seq) > 0)
        return 0;
    c->rtr_in.valid = 0;    /* message seq is being sent now, whatever happens */
    if (c->rtr_in.seq != r->u.send.seq || c->rtr_in.ctx != r->u.send.ctx ||
        c->rtr_in.src != r->u.send.src || c->rtr_in.tag != r->u.send.tag ||
        r->u.send.bytes > c->rtr_in.cap || !r->u.send.dt->contig || !c->has_rdma)
        return 0;
    struct iovec iov = {core_at(r->u.send.buf, r->u.send.dt->true_lb), r->u.send.bytes};
    if (c->fab->write(c->fc, &iov, 1, c->rtr_in.addr, r->u.send.bytes) != UTIL_OK)
        return 0;
    wire_hdr env = {.ctx = r->u.send.ctx, .src = r->u.send.src, .tag = r->u.send.tag,
                    .seq = r->u.send.seq};
    wire_done d = {.req = c->rtr_in.req, .size = r->u.send.bytes};
    core_conn_send_ctl(c, WIRE_DONE, WIRE_F_RTR_DATA, &env, &d, sizeof d);
    r->u.send.state = CORE_S_DONE;
    core_req_complete(r);
    return 1;
}

void core_rtr_seq_seen(core_conn *c, uint32_t seq)
{
    core_req *r = c->rtr_out;
    if (r && r->u.recv.rtr_seq == seq) {
        r->u.recv.state = CORE_R_POSTED;
        c->rtr_out = NULL;
        if (r->u.recv.cancel)
            core_cancel_recv(r);    /* the RTR is dead: the cancel asked meanwhile succeeds */
    }
}
