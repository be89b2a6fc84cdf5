/* Rendezvous without single-copy (the kernel refuses cross-memory attach, the
 * sender's buffer is not contiguous, or DCFA_CMA=0): after RTS, the receiver
 * answers CTS and the sender streams the message as DATA fragments through
 * the ring, packing each fragment straight from the user buffer; the ring is
 * the bounce buffer, and credits pace the pipeline. */
#include "core/core_impl.h"

#include <stdlib.h>
#include <string.h>

static core_req *core_copy_expect(core_conn *c, uint32_t id, int kind, int state, const char *what)
{
    core_req *r = core_req_get((int)id);
    int ok = r && r->kind == kind && !r->complete &&
             (kind == CORE_REQ_SEND ? r->u.send.state == state && r->u.send.lpid == c->lpid
                                    : r->u.recv.state == state && r->u.recv.lpid == c->lpid);
    if (!ok)
        util_die("malformed packet from process %d: %s names request %u, which is not waiting for it",
                 c->lpid, what, id);
    return r;
}

void core_cts_arrived(core_conn *c, const wire_hdr *h, const wire_done *d)
{
    core_req *s = core_copy_expect(c, d->req, CORE_REQ_SEND, CORE_S_RNDV_WAIT, "CTS");
    core_req_mem_drop(s);
    s->u.send.state = CORE_S_STREAM;
    s->u.send.sent = 0;
    core_pend *p = util_calloc(1, sizeof *p);
    p->req = s;
    p->peer_req = d->peer_req;
    core_conn_backlog(c, p);
}

int core_stream_push(core_conn *c, core_pend *p)
{
    core_req *s = p->req;
    size_t room = core_payload_max() - sizeof(wire_frag);
    while (s->u.send.sent < s->u.send.bytes) {
        size_t n = s->u.send.bytes - s->u.send.sent;
        if (n > room)
            n = room;
        wire_hdr *h = core_conn_tx_begin(c, sizeof(wire_frag) + n, 0);
        if (!h)
            return 0;
        wire_frag f = {.req = p->peer_req, .offset = s->u.send.sent};
        memset(h, 0, sizeof *h);
        h->type = WIRE_DATA;
        h->len = (uint32_t)(sizeof f + n);
        memcpy(h + 1, &f, sizeof f);
        uint8_t *dst = (uint8_t *)(h + 1) + sizeof f;
        const core_dt *dt = s->u.send.dt;
        if (dt->contig)
            memcpy(dst, core_at(s->u.send.buf, dt->true_lb + (ptrdiff_t)s->u.send.sent), n);
        else
            core_dt_pack(s->u.send.buf, s->u.send.count, dt, s->u.send.sent, dst, n);
        core_conn_tx_end(c, h);
        s->u.send.sent += n;
        core_st.copy_bytes += n;
    }
    s->u.send.state = CORE_S_DONE;
    core_req_complete(s);
    return 1;
}

void core_data_arrived(core_conn *c, const wire_hdr *h, const wire_frag *f, const void *bytes)
{
    core_req *r = core_copy_expect(c, f->req, CORE_REQ_RECV, CORE_R_FRAGS, "DATA");
    size_t n = h->len - sizeof *f;
    if (f->offset != r->u.recv.received || f->offset + n > r->u.recv.expected)
        util_die("malformed packet from process %d: DATA fragment at offset %llu does not follow %zu of %zu bytes",
                 c->lpid, (unsigned long long)f->offset, r->u.recv.received, r->u.recv.expected);
    size_t cap = r->u.recv.capacity;
    if (f->offset < cap) {
        size_t take = n < cap - f->offset ? n : cap - f->offset;
        const core_dt *dt = r->u.recv.dt;
        if (dt->contig)
            memcpy(core_at(r->u.recv.buf, dt->true_lb + (ptrdiff_t)f->offset), bytes, take);
        else
            core_dt_unpack(r->u.recv.buf, r->u.recv.count, dt, f->offset, bytes, take);
    }
    r->u.recv.received += n;
    if (r->u.recv.received == r->u.recv.expected) {
        size_t got = r->u.recv.expected < cap ? r->u.recv.expected : cap;
        core_recv_finish(r, r->status.MPI_SOURCE, r->status.MPI_TAG, got, r->u.recv.expected > cap);
    }
}
