/* Sender-first rendezvous: the sender writes RTS with its buffer; the
 * receiver, when it matches, reads the data straight from the sender's
 * memory with a one-sided read and answers DONE. Also handles the simultaneous
 * case (RTS and RTR crossed: the receiver reads, the sender ignores the RTR).
 * The read may complete later (the receive waits in CORE_R_READING). A read
 * the fabric refuses outright (UTIL_EPERM) falls back to the copy path; any
 * other failure is answered with DONE(ERROR): both requests complete with
 * MPI_ERR_OTHER and the reason is logged, nobody hangs. A large read may be shared
 * with the sender (rndv_split.c). */
#include "core/core_impl.h"

#include <stdlib.h>
#include <string.h>

void core_rts_emit(core_conn *c, core_req *r, wire_hdr *h)
{
    const core_dt *dt = r->u.send.dt;
    wire_rndv rv = {.size = r->u.send.bytes, .req = (uint32_t)r->id};
    int direct = 0;
    /* a non-contiguous buffer cannot be read in one range: no access asks for the copy path */
    if (dt->contig && (c->caps & FAB_CAP_RMA)) {
        const void *buf = core_at(r->u.send.buf, dt->true_lb);
        core_mem *m = &core_rndv_of(r)->mem;
        core_mem_hold(c, m, buf, r->u.send.bytes);
        if (m->fab) {
            rv.addr = m->mem.addr;
            rv.key = m->mem.key;
            rv.access = 1;
            direct = (m->mem.key & FAB_KEY_DIRECT) != 0;
        }
    }
    h->type = WIRE_RTS;
    /* below the crossover the copy path, through my pool (made now) if the fabric has pools;
     * above it single copy, my pool offered only if it exists (the receiver maps it for the
     * staged EAGER of later messages). A buffer the receiver maps itself (an MPI_Alloc_mem
     * block) is read with one plain copy at every size: no system call, nothing pinned */
    if (!direct && core_copy_wanted(c, r))
        h->flags = WIRE_F_COPY | (core_stage_offer(c) ? WIRE_F_STAGED : 0);
    else
        h->flags = core_s.stage.base && core_stage_offer(c) ? WIRE_F_STAGED : 0;
    /* with receives of its own posted this process is about to be busy with them (traffic
     * both ways): a split would give it work its core has no time for (bi-bandwidth at
     * 256 KiB 9.1 against 10.5 GB/s) */
    if (util_queue_empty(&core_s.posted))
        h->flags |= WIRE_F_SPLIT;
    if (!r->u.send.rts_out) {
        r->u.send.rts_out = 1;
        core_s.rndv_out++;
    }
    h->ctx = r->u.send.ctx;
    h->src = r->u.send.src;
    h->tag = r->u.send.tag;
    h->seq = r->u.send.seq;
    h->len = sizeof rv;
    memcpy(h + 1, &rv, sizeof rv);
    core_send_move(r, CORE_SE_RTS, CORE_S_RNDV_WAIT);
    core_conn_tx_end(c, h);
}

int core_rts_send(core_conn *c, core_req *r)
{
    wire_hdr *h = util_queue_empty(&c->backlog) ? core_conn_tx_begin(c, sizeof(wire_rndv), 0) : NULL;
    if (h) {
        core_rts_emit(c, r, h);
        return UTIL_OK;
    }
    core_pend *p = core_pend_new(0);
    p->req = r;
    core_send_move(r, CORE_SE_BACKLOG, CORE_S_QUEUED);
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
    m->flags = h->flags;
    m->size = (size_t)rv->size;
    m->rndv = *rv;
    core_st.unexpected++;
    util_queue_push(&core_s.unexpected, &m->qn);
}

/* copy path: ask the sender to stream the message, through its staging pool when
 * `staged` (mapped here), else through the ring; `ev`: an RTS matched, or my read refused */
static void core_cts_request(core_conn *c, core_req *r, enum core_recv_ev ev, uint32_t sreq,
                             int staged)
{
    core_recv_move(r, ev, CORE_R_FRAGS);
    r->u.recv.received = 0;
    wire_done d = {.req = sreq, .peer_req = (uint32_t)r->id};
    core_conn_send_ctl(c, WIRE_CTS, staged ? WIRE_F_STAGED : 0, NULL, &d, sizeof d);
}

/* the read of an RTS's data ended: answer DONE and complete the receive */
static void core_read_finished(core_xfer *x, int status)
{
    core_rndv *rd = UTIL_CONTAINER(x, core_rndv, xfer);
    core_req *r = rd->req;
    core_conn *c = x->conn;
    /* what ends the receive: the end of my read, or (my part of a split read before) the
     * sender's DONE(SPLIT) */
    enum core_recv_ev ev = r->u.recv.state == CORE_R_SPLIT ? CORE_RE_SPLIT_DONE : CORE_RE_READ;
    size_t size = r->u.recv.expected;
    size_t take = size < r->u.recv.capacity ? size : r->u.recv.capacity;
    if (status == UTIL_OK)
        c->read_ok = 1;
    if (rd->split == 1 && !core_split_join(rd, x, status))
        return;
    if (rd->split == 2 && rd->split_err && status == UTIL_OK)
        status = UTIL_EIO;      /* the sender could not write its half (it logged why) */
    rd->split = 0;
    core_req_mem_drop(r);
    if (status == UTIL_OK) {
        wire_done d = {.req = x->peer_req, .size = take};
        core_st.cma_bytes += take;
        core_conn_send_ctl(c, WIRE_DONE, c->peer_stage ? WIRE_F_STAGED : 0, NULL, &d, sizeof d);
        core_recv_done(r, ev, r->status.source, r->status.tag, take, size > take);
        return;
    }
    if (status == UTIL_EPERM && x->off == 0) {
        /* the fabric cannot reach this peer's memory at all (e.g. ptrace restrictions): the
         * copy path is a correct fallback, for this and every later message */
        util_log("single-copy transfers with %s are refused; copying through the ring",
                 util_proc(c->lpid));
        c->caps &= ~FAB_CAP_RMA;
        core_cts_request(c, r, CORE_RE_REFUSED, x->peer_req, c->peer_stage != NULL);
        return;
    }
    /* anything else is an error of this message: both sides are told, nobody hangs */
    util_log("rendezvous: reading %zu bytes (ctx %u tag %d) from %s failed at byte %zu: %s", x->len,
             r->u.recv.ctx, r->status.tag, util_proc(c->lpid), x->off, strerror(-status));
    wire_done d = {.req = x->peer_req, .size = 0};
    core_conn_send_ctl(c, WIRE_DONE, WIRE_F_ERROR, NULL, &d, sizeof d);
    core_req_set_status(r, r->status.source, r->status.tag, 0, UTIL_EIO);
    core_recv_move(r, ev, CORE_R_DONE);
    core_req_complete(r);
}

void core_rts_matched(core_req *r, int lpid, const wire_hdr *env, const wire_rndv *rv)
{
    core_conn *c = core_conn_get(lpid);
    if (!c)
        util_die("lost the connection to %s", util_proc(lpid));
    size_t size = (size_t)rv->size;
    size_t take = size < r->u.recv.capacity ? size : r->u.recv.capacity;
    r->u.recv.lpid = lpid;
    r->u.recv.expected = size;
    r->status.source = env->src;
    r->status.tag = env->tag;
    const core_dt *dt = r->u.recv.dt;
    /* the sender has a pool: map it now, whatever this message's path, so that its DONE or
     * CTS can tell the sender, whose later messages up to DCFA_STAGE_EAGER then come as
     * staged EAGER */
    if ((env->flags & WIRE_F_STAGED) && util_cfg.stage_eager > 0)
        (void)core_stage_accept(c);
    /* two copies through the sender's pool when the sender asks (below its crossover,
     * core_cma_min_for). Where the sender copies into its pool with ordinary stores, not
     * while this process has rendezvous sends of its own under way: traffic both ways
     * then ran faster single-copy (bi-bandwidth at 64 KiB 7.9 against 14.2 GB/s,
     * docs/results/staging-pool); with non-temporal stores (DCFA_STAGE_NT) two copies
     * win both ways too (256 KiB-4 MiB 12-19 against 7-9 GB/s, docs/bench.md). A receive
     * buffer that is not contiguous follows the same rule: read, it is read in place when
     * its pieces are large, else into a bounce buffer and unpacked here */
    int copy = !rv->access || !(c->caps & FAB_CAP_RMA) ||
               ((env->flags & WIRE_F_COPY) && (core_s.rndv_out == 0 || core_stage_streamed()));
    int staged = copy && (env->flags & WIRE_F_STAGED) && core_stage_accept(c);
    if (staged || !rv->access || !(c->caps & FAB_CAP_RMA)) {
        core_cts_request(c, r, CORE_RE_RTS, rv->req, staged);
        return;
    }
    core_recv_move(r, CORE_RE_RTS, CORE_R_READING);
    core_xfer *x = &core_rndv_of(r)->xfer;
    *x = (core_xfer){.conn = c, .write = 0, .raddr = rv->addr, .rkey = rv->key, .len = take,
                     .peer_req = rv->req, .finish = core_read_finished};
    if (dt->contig) {
        x->base = core_at(r->u.recv.buf, dt->true_lb);
        x->op.nt = core_recv_nt_others(r);
        if (core_split_wanted(c, env, x->len))
            core_split_offer(c, r, env, rv, x);
    } else {
        x->buf = r->u.recv.buf;
        x->count = r->u.recv.count;
        x->dt = dt;
        if (core_dt_piece(dt) < CORE_READ_PIECE_MIN)
            core_xfer_bounce(x);
    }
    core_bulk_start(x);
}

/* DONE: the receiver read the message (flag ERROR: it could not) */
void core_read_done_arrived(core_conn *c, const wire_hdr *h, const wire_done *d)
{
    core_req *s = core_req_expect(c, d->req, CORE_REQ_SEND, CORE_TO(CORE_S_RNDV_WAIT), "DONE");
    core_req_mem_drop(s);
    if ((h->flags & WIRE_F_STAGED) && core_s.stage.base)
        c->stage_peer_ok = 1;
    if (h->flags & WIRE_F_ERROR) {
        util_log("%s could not read message %u (ctx %u tag %d, %zu bytes) from this process",
                 util_proc(c->lpid), s->u.send.seq, s->u.send.ctx, s->u.send.tag, s->u.send.bytes);
        s->status.error = UTIL_EIO;
    }
    if (s->rndv && s->rndv->split == 1) {
        s->rndv->split = 2; /* my part of a split is still being written (rndv_split.c) */
        return;
    }
    core_send_move(s, CORE_SE_DONE, CORE_S_DONE);
    core_req_complete(s);
}
