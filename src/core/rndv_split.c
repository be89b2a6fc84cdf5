/* Split reads (docs/protocol.md, wire version 7): a sender-first rendezvous the
 * receiver shares with the sender. On matching a large RTS on a mapped ring, the
 * receiver reads the first part of the message and offers the sender the rest in a
 * SPLIT packet; the sender, waiting in MPI, writes its part meanwhile and answers
 * DONE(SPLIT): two cores copy. Whoever claims the part first (a compare-and-swap on
 * the SPLIT's first word, in the sender's ring, which both map) moves it. The
 * receive completes when both parts are in; its own read ends in the read protocol
 * (rndv_read.c: core_read_finished), which asks core_split_join whether the other
 * part is still to come. The send completes at the receiver's DONE, after its own
 * write if that is still under way. */
#include "core/core_impl.h"

#include <stdatomic.h>
#include <string.h>

/* Offered when core_split_wanted says so: a receiver done with its own half while the sender
 * has not taken the other reads that too, so a sender away from MPI costs nothing more than
 * the plain read. x->len shrinks to the receiver's half. */
void core_split_offer(core_conn *c, core_req *r, const wire_hdr *env, const wire_rndv *rv,
                      core_xfer *x)
{
    if (r->rndv && r->rndv->mem.fab)
        return; /* the buffer is registered for an RTR that crossed this RTS */
    core_rndv *rd = core_rndv_of(r);
    core_mem_hold(c, &rd->mem, x->base, x->len);
    wire_hdr *h = rd->mem.fab ? core_conn_tx_begin(c, sizeof(wire_split), 0) : NULL;
    if (!h) {
        core_mem_drop(&rd->mem);
        return;
    }
    size_t off = (x->len / 2) & ~(size_t)4095;
    wire_split *sp = (wire_split *)(h + 1);
    *sp = (wire_split){.req = rv->req,
                       .peer_req = (uint32_t)r->id,
                       .off = off,
                       .len = x->len - off,
                       .addr = rd->mem.mem.addr + off,
                       .key = rd->mem.mem.key};
    h->type = WIRE_SPLIT;
    h->flags = 0;
    h->ctx = env->ctx;
    h->src = env->src;
    h->tag = env->tag;
    h->seq = 0;
    h->len = sizeof *sp;
    rd->claim = (_Atomic uint32_t *)&sp->claim;
    rd->split_pos = c->tx_count;
    rd->split = 1;
    rd->split_err = 0;
    rd->split_raddr = x->raddr + off;
    rd->split_off = off;
    rd->split_len = x->len - off;
    core_conn_tx_end(c, h);
    x->len = off;
}

/* The receiver's half ended with `status`; the sender's is written (split 2), or not taken:
 * then read it here (after a failure: withdrawn), unless the sender has it (its credit says
 * it consumed the SPLIT, which it claims before; until then the packet's block is not
 * reused, so the claim word is still there): then its DONE(SPLIT) ends the receive.
 * Called while a split is under way (split 1). 1: the receive ends now, 0: it goes on */
int core_split_join(core_rndv *rd, core_xfer *x, int status)
{
    core_conn *c = x->conn;
    uint32_t open = 0;
    if ((int32_t)(c->credit_seen - rd->split_pos) <= 0 &&
        atomic_compare_exchange_strong(rd->claim, &open, 2)) {
        rd->split = 0;
        if (status != UTIL_OK)
            return 1;
        core_st.split_back++;
        x->base = core_at(x->base, (ptrdiff_t)rd->split_off);
        x->raddr = rd->split_raddr;
        x->len = rd->split_len;
        core_bulk_start(x);
        return 0;
    }
    rd->mine = status;
    core_recv_move(rd->req, CORE_RE_READ, CORE_R_SPLIT);
    return 0;
}

/* the sender's half of a split is written (or failed): send DONE(SPLIT); the send completes
 * at the receiver's DONE, which may have come meanwhile (split 2) */
static void core_split_written(core_xfer *x, int status)
{
    core_rndv *rd = UTIL_CONTAINER(x, core_rndv, xfer);
    core_req *s = rd->req;
    if (status != UTIL_OK)
        util_log("rendezvous: writing %zu bytes of message %u (ctx %u tag %d) into %s's "
                 "buffer failed: %s",
                 x->len, s->u.send.seq, s->u.send.ctx, s->u.send.tag, util_proc(x->conn->lpid),
                 strerror(-status));
    else
        core_st.split_written += x->len;
    wire_done d = {.req = x->peer_req, .size = x->len};
    core_conn_send_ctl(x->conn, WIRE_DONE, WIRE_F_SPLIT | (status != UTIL_OK ? WIRE_F_ERROR : 0),
                       NULL, &d, sizeof d);
    int done_seen = rd->split == 2;
    rd->split = 0;
    if (done_seen) {
        core_send_move(s, CORE_SE_SPLIT_DONE, CORE_S_DONE);
        core_req_complete(s);
    }
}

void core_split_arrived(core_conn *c, wire_split *sp)
{
    core_req *s = core_req_expect(c, sp->req, CORE_REQ_SEND, CORE_TO(CORE_S_RNDV_WAIT), "SPLIT");
    const core_dt *dt = s->u.send.dt;
    if (!dt->contig || sp->len == 0 || sp->off > s->u.send.bytes ||
        sp->len > s->u.send.bytes - sp->off)
        util_die("malformed packet from %s: SPLIT offers bytes %llu.. (%llu) of message %u, "
                 "which has %zu%s",
                 util_proc(c->lpid), (unsigned long long)sp->off, (unsigned long long)sp->len,
                 s->u.send.seq, s->u.send.bytes, dt->contig ? "" : " in a non-contiguous buffer");
    uint32_t open = 0;
    if (!atomic_compare_exchange_strong((_Atomic uint32_t *)&sp->claim, &open, 1))
        return; /* the receiver read it itself */
    core_rndv *rd = core_rndv_of(s);
    rd->split = 1;
    core_xfer *x = &rd->xfer;
    *x = (core_xfer){.conn = c,
                     .write = 1,
                     .raddr = sp->addr,
                     .rkey = sp->key,
                     .len = (size_t)sp->len,
                     .base = core_at(s->u.send.buf, dt->true_lb + (ptrdiff_t)sp->off),
                     .peer_req = sp->peer_req,
                     .finish = core_split_written};
    core_bulk_start(x);
}

/* DONE(SPLIT): the sender wrote the part the SPLIT offered it (flag ERROR: it could not) */
void core_split_done_arrived(core_conn *c, const wire_hdr *h, const wire_done *d)
{
    core_req *r = core_req_expect(c, d->req, CORE_REQ_RECV,
                                  CORE_TO(CORE_R_SPLIT) | CORE_TO(CORE_R_READING), "DONE (split)");
    core_rndv *rd = r->rndv;
    if (!rd || rd->split != 1 || d->size != rd->split_len)
        util_die("malformed packet from %s: DONE (split) names request %u, which is "
                 "not waiting for it",
                 util_proc(c->lpid), d->req);
    rd->split = 2;
    rd->split_err = (h->flags & WIRE_F_ERROR) != 0;
    if (r->u.recv.state == CORE_R_SPLIT)
        rd->xfer.finish(&rd->xfer, rd->mine); /* the receive's own read ended before */
}
