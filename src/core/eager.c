/* Eager protocol: header + data in one packet of the ring; the receiver copies into
 * the user buffer, or into the unexpected queue when no receive is posted.
 * Also the self path (a message to my own process) and receive completion. */
#include "core/core_impl.h"

#include <stdlib.h>
#include <string.h>

/* synchronous-mode eager messages carry the send request id before the data */
#define CORE_SSEND_PREFIX 8

static void core_pack(const core_req *r, void *out, size_t off, size_t len)
{
    const core_dt *dt = r->u.send.dt;
    if (len == 0)
        return;
    if (dt->contig)
        util_copy_small(out, core_at(r->u.send.buf, dt->true_lb + (ptrdiff_t)off), len);
    else
        core_dt_pack(r->u.send.buf, r->u.send.count, dt, off, out, len);
}

/* where the body of send request r's EAGER packet at h goes: after the synchronous-mode prefix */
static uint8_t *core_eager_body(const core_req *r, wire_hdr *h)
{
    return (uint8_t *)(h + 1) + (r->u.send.mode == CORE_SEND_SYNC ? CORE_SSEND_PREFIX : 0);
}

/* an EAGER header for send request r with `body` payload bytes after the synchronous-mode
 * prefix (written here): returns where the body goes (core_eager_body) */
static uint8_t *core_eager_head(const core_req *r, wire_hdr *h, uint16_t flags, size_t body)
{
    uint8_t *p = (uint8_t *)(h + 1);
    h->type = WIRE_EAGER;
    h->flags = flags;
    h->ctx = r->u.send.ctx;
    h->src = r->u.send.src;
    h->tag = r->u.send.tag;
    h->seq = r->u.send.seq;
    h->len = (uint32_t)body;
    if (r->u.send.mode == CORE_SEND_SYNC) {
        h->flags |= WIRE_F_SSEND;
        uint32_t id = (uint32_t)r->id;
        memcpy(p, &id, 4);
        memset(p + 4, 0, 4);
        h->len += CORE_SSEND_PREFIX;
    }
    return core_eager_body(r, h);
}

/* the message is out of the user's buffer: done, or (synchronous mode) waiting to be matched */
static void core_eager_sent(core_req *r)
{
    if (r->u.send.mode == CORE_SEND_SYNC) {
        core_send_move(r, CORE_SE_EAGER, CORE_S_ACK_WAIT);
    } else {
        core_send_move(r, CORE_SE_EAGER, CORE_S_DONE);
        core_req_complete(r);
    }
}

void core_eager_emit(core_conn *c, core_req *r, wire_hdr *h)
{
    /* the payload first, then the header (core_send_eager_now says why) */
    core_pack(r, core_eager_body(r, h), 0, r->u.send.bytes);
    (void)core_eager_head(r, h, 0, r->u.send.bytes);
    core_conn_tx_end(c, h);
    core_eager_sent(r);
}

/* Staged EAGER (docs/protocol.md): a message above the eager limit that fits a chunk of my
 * staging pool, to a peer that has mapped the pool, is copied into a free chunk and sent as
 * an EAGER packet naming it. The receiver copies it out when the packet arrives (into the
 * posted receive, or an unexpected message's copy) and clears the chunk's busy word: one
 * copy on each side and one packet, where a rendezvous takes a round trip first. The send
 * waits for nothing; with no chunk free, no credit or packets queued before it, the message
 * takes the rendezvous, and so it does at or above the copy path's crossover (a message alone
 * on a machine whose single copy is cheap: core_cma_min_for). */
int core_stage_eager_send(core_conn *c, core_req *r)
{
    if (!c->stage_peer_ok || !core_stage_eager_fits(r->u.send.bytes) || !util_queue_empty(&c->backlog) ||
        !util_queue_empty(&core_s.posted) || !core_copy_wanted(c, r))
        return 0;
    size_t body = sizeof(wire_stage) + (r->u.send.mode == CORE_SEND_SYNC ? CORE_SSEND_PREFIX : 0);
    int k = core_stage_put(r);
    if (k < 0)
        return 0;
    wire_hdr *h = core_conn_tx_begin(c, body, 0);
    if (!h) {
        core_stage_unput(k);
        return 0;
    }
    wire_stage g = {.chunk = (uint32_t)k, .len = (uint32_t)r->u.send.bytes};
    memcpy(core_eager_head(r, h, WIRE_F_STAGED, sizeof g), &g, sizeof g);
    core_conn_tx_end(c, h);
    core_st.stage_eager++;
    core_eager_sent(r);
    return 1;
}

int core_send_eager_now(const void *data, size_t bytes, int lpid, int32_t src_rank, int32_t tag,
                        uint32_t ctx)
{
    core_conn *c = core_s.conns[lpid];
    if (lpid == core_s.self || !c || bytes > c->eager_max || !util_queue_empty(&c->backlog))
        return UTIL_EAGAIN;
    if (bytes <= WIRE_HALF_MAX && c->halves)
        return core_conn_send_half(c, data, bytes, src_rank, tag, ctx);
    wire_hdr *h = core_conn_tx_begin(c, bytes, 0);
    if (!h)
        return UTIL_EAGAIN;
    /* The payload before the header: written after it, the payload's stores (at addresses
     * the compiler cannot tell from the header's) made tx_end read the header back from the
     * ring, and 13-16-byte messages (two 8-byte moves) went at half the rate of 12 or 20
     * bytes on one host (9-10 against 18-19 million a second, `bw`; one-way 0.285 against
     * 0.21 us), 8-16 bytes alike without half packets (2026-12-08). */
    util_copy_small(h + 1, data, bytes);
    h->type = WIRE_EAGER;
    h->flags = 0;
    h->ctx = ctx;
    h->src = src_rank;
    h->tag = tag;
    h->seq = ++c->tx_msg_seq;
    h->len = (uint32_t)bytes;
    core_conn_tx_end(c, h);
    return UTIL_OK;
}

int core_eager_send(core_conn *c, core_req *r)
{
    wire_hdr *h = util_queue_empty(&c->backlog) ? core_conn_tx_begin(c, core_eager_len(r), 0) : NULL;
    if (h) {
        core_eager_emit(c, r, h);
        return UTIL_OK;
    }
    core_pend *p = core_pend_new(0);
    p->req = r;
    core_send_move(r, CORE_SE_BACKLOG, CORE_S_QUEUED);
    core_conn_backlog(c, p);
    return UTIL_OK;
}

/* copy (part of) a message into a receive buffer; true if it was truncated */
static int core_unpack_to(core_req *r, const void *data, size_t size, size_t *got)
{
    size_t n = size < r->u.recv.capacity ? size : r->u.recv.capacity;
    const core_dt *dt = r->u.recv.dt;
    if (n) {
        if (dt->contig)
            util_copy_small(core_at(r->u.recv.buf, dt->true_lb), data, n);
        else
            core_dt_unpack(r->u.recv.buf, r->u.recv.count, dt, 0, data, n);
    }
    *got = n;
    return size > r->u.recv.capacity;
}

void core_recv_finish(core_req *r, int32_t src, int32_t tag, size_t got, int truncated)
{
    core_req_mem_drop(r);
    core_req_set_status(r, src, tag, got, truncated ? UTIL_ETRUNC : UTIL_OK);
    core_req_complete(r);
}

static void core_send_ack(int lpid, uint32_t sreq)
{
    core_conn *c = core_conn_get(lpid);
    wire_done d = {.req = sreq};
    if (c)
        core_conn_send_ctl(c, WIRE_ACK, 0, NULL, &d, sizeof d);
}

/* ACK: the receiver matched my synchronous-mode message */
void core_ack_arrived(core_conn *c, const wire_done *d)
{
    core_req *s = core_req_expect(c, d->req, CORE_REQ_SEND, CORE_TO(CORE_S_ACK_WAIT), "ACK");
    core_send_move(s, CORE_SE_ACK, CORE_S_DONE);
    core_req_complete(s);
}

void core_eager_arrived(core_conn *c, const wire_hdr *h, const void *payload)
{
    const uint8_t *data = payload;
    size_t size = h->len;
    uint32_t sreq = 0;
    if (h->flags & WIRE_F_SSEND) {
        if (size < CORE_SSEND_PREFIX)
            util_die("malformed packet from %s: short synchronous eager message",
                     util_proc(c->lpid));
        memcpy(&sreq, data, 4);
        data += CORE_SSEND_PREFIX;
        size -= CORE_SSEND_PREFIX;
    }
    _Atomic uint32_t *busy = NULL;
    if (h->flags & WIRE_F_STAGED)   /* the message is in a chunk of the sender's pool */
        data = core_stage_get(c, data, size, &size, &busy, "EAGER");
    core_req *r = core_match_arrival(c, h);
    if (r) {
        size_t got;
        int trunc = core_unpack_to(r, data, size, &got);
        if (busy)
            atomic_store_explicit(busy, 0, memory_order_release);   /* the sender may reuse it */
        r->u.recv.lpid = c->lpid;
        if (h->flags & WIRE_F_SSEND)
            core_send_ack(c->lpid, sreq);
        core_recv_done(r, CORE_RE_EAGER, h->src, h->tag, got, trunc);
        return;
    }
    core_msg *m = util_calloc(1, sizeof *m);
    m->type = WIRE_EAGER;
    m->flags = h->flags;
    m->ctx = h->ctx;
    m->src = h->src;
    m->tag = h->tag;
    m->lpid = c->lpid;
    m->seq = h->seq;
    m->size = size;
    m->rndv.req = sreq;
    m->data = util_malloc(size);
    memcpy(m->data, data, size);
    if (busy)
        atomic_store_explicit(busy, 0, memory_order_release);
    core_st.unexpected++;
    util_queue_push(&core_s.unexpected, &m->qn);
}

void core_recv_from_msg(core_req *r, core_msg *m)
{
    if (__builtin_expect(m->type == CORE_MSG_LOST, 0)) {
        core_lost_recv(r, m);
        return;
    }
    r->u.recv.lpid = m->lpid;
    if (m->type == WIRE_RTS) {
        wire_hdr env = {.ctx = m->ctx, .src = m->src, .tag = m->tag, .seq = m->seq, .flags = m->flags};
        core_rts_matched(r, m->lpid, &env, &m->rndv);
        free(m);
        return;
    }
    size_t got;
    int trunc = core_unpack_to(r, m->data, m->size, &got);
    if (m->local_send) { /* my own synchronous message: matched */
        core_send_move(m->local_send, CORE_SE_ACK, CORE_S_DONE);
        core_req_complete(m->local_send);
    } else if (m->flags & WIRE_F_SSEND) {
        core_send_ack(m->lpid, m->rndv.req);
    }
    core_recv_done(r, CORE_RE_EAGER, m->src, m->tag, got, trunc);
    free(m->data);
    free(m);
}

/* A message to myself whose receive is already posted: copied buffer to
 * buffer through a small bounce buffer, so a large non-contiguous message is
 * never staged whole. */
static void core_send_local_direct(core_req *r, core_req *rr)
{
    enum { CHUNK = 16384 };
    const core_dt *sdt = r->u.send.dt, *rdt = rr->u.recv.dt;
    size_t bytes = r->u.send.bytes;
    size_t take = bytes < rr->u.recv.capacity ? bytes : rr->u.recv.capacity;
    rr->u.recv.lpid = core_s.self;
    if (take && sdt->contig) {
        /* the sender's bytes are already the packed stream */
        const void *src = core_at(r->u.send.buf, sdt->true_lb);
        if (rdt->contig)
            memmove(core_at(rr->u.recv.buf, rdt->true_lb), src, take);
        else
            core_dt_unpack(rr->u.recv.buf, rr->u.recv.count, rdt, 0, src, take);
    } else if (take && rdt->contig) {
        core_pack(r, core_at(rr->u.recv.buf, rdt->true_lb), 0, take);
    } else {
        uint8_t chunk[CHUNK];
        for (size_t off = 0; off < take; off += CHUNK) {
            size_t n = take - off < CHUNK ? take - off : CHUNK;
            core_pack(r, chunk, off, n);
            core_dt_unpack(rr->u.recv.buf, rr->u.recv.count, rdt, off, chunk, n);
        }
    }
    core_send_move(r, CORE_SE_EAGER, CORE_S_DONE);
    core_req_complete(r);
    core_recv_done(rr, CORE_RE_EAGER, r->u.send.src, r->u.send.tag, take, bytes > take);
}

/* a message to myself: always copied, so a send never waits for its receive
 * (except in synchronous mode, which completes when matched) */
void core_send_local(core_req *r)
{
    /* a number of its own names the message for MPI_Cancel (cancel.c) */
    static uint32_t local_seq;
    r->u.send.seq = ++local_seq;
    core_req *posted = core_match_posted(r->u.send.ctx, r->u.send.src, r->u.send.tag);
    if (posted) {
        core_send_local_direct(r, posted);
        return;
    }
    /* nobody waits yet: the unexpected queue keeps a packed copy, as for any
     * unexpected eager message */
    core_msg *m = util_calloc(1, sizeof *m);
    m->type = WIRE_EAGER;
    m->ctx = r->u.send.ctx;
    m->src = r->u.send.src;
    m->tag = r->u.send.tag;
    m->lpid = core_s.self;
    m->seq = r->u.send.seq;
    m->size = r->u.send.bytes;
    m->data = util_malloc(m->size);
    core_pack(r, m->data, 0, m->size);
    if (r->u.send.mode == CORE_SEND_SYNC) {
        m->local_send = r;
        core_send_move(r, CORE_SE_EAGER, CORE_S_ACK_WAIT);
    } else {
        core_send_move(r, CORE_SE_EAGER, CORE_S_DONE);
        core_req_complete(r);
    }
    core_st.unexpected++;
    util_queue_push(&core_s.unexpected, &m->qn);
}
