/* Rendezvous by copying (a message below DCFA_CMA_MIN, a non-contiguous send buffer,
 * no single-copy at all): after RTS, the receiver answers CTS and the sender
 * streams the message as DATA fragments, packing each straight from the user
 * buffer, and the receiver unpacks each straight into its buffer.
 *
 * A fragment's bytes travel in one of two places. In the staging pool: one
 * pool per process (DCFA_STAGE_CHUNKS chunks of DCFA_STAGE_CHUNK bytes, in
 * memory the fabric lets its peers map, made at the first RTS), shared by
 * all its streams to all its peers; the DATA packet names the chunk, the
 * receiver copies it out and clears the chunk's busy word. Sender and
 * receiver then copy at the same time, chunk after chunk. Or in the ring
 * itself, the packet carrying the bytes (no pool, or the receiver could not
 * map it, or every chunk is held by other streams). A stream holds at most
 * half the pool (rounded up) at a time. A stream waits for a
 * chunk only while it holds one itself, which its own receiver frees; it
 * never waits for another stream's receiver, so streams cannot block each
 * other (docs/protocol.md). */
#include "core/core_impl.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ---- the staging pool ------------------------------------------------------------
 * A header line, a busy word per chunk (each in its own cache line: the sender sets it,
 * the receiver clears it), then the chunks from the next page. */
#define CORE_STAGE_MAGIC 0x50534344u    /* "DCSP" */
typedef struct core_stage_hdr {
    uint32_t magic;
    uint32_t nchunks;
    uint64_t chunk;
    uint8_t pad[48];
} core_stage_hdr;
_Static_assert(sizeof(core_stage_hdr) == 64, "pool header is one cache line");

static size_t core_stage_data_off(unsigned n)
{
    return (sizeof(core_stage_hdr) + 64 * (size_t)n + 4095) & ~(size_t)4095;
}
size_t core_stage_size(void)
{
    unsigned n = (unsigned)util_cfg.stage_chunks;
    return core_stage_data_off(n) + (size_t)n * util_cfg.stage_chunk;
}
static _Atomic uint32_t *core_stage_busy(uint8_t *base, uint32_t k)
{
    return (_Atomic uint32_t *)(base + sizeof(core_stage_hdr) + 64 * (size_t)k);
}
static uint8_t *core_stage_chunk(uint8_t *base, uint32_t k)
{
    return base + core_stage_data_off((unsigned)util_cfg.stage_chunks) + (size_t)k * util_cfg.stage_chunk;
}

int core_stage_offer(core_conn *c)
{
    struct core_stage *st = &core_s.stage;
    if (st->base)
        return (c->caps & FAB_CAP_STAGE) != 0;
    if (util_cfg.stage_chunks <= 0 || !(c->caps & FAB_CAP_STAGE) || st->failed)
        return 0;
    uint8_t *base = c->fab->ops->stage->pool_create(core_stage_size());
    if (!base) {
        st->failed = 1;
        util_log("no staging pool (%zu bytes): rendezvous copies go through the rings",
                 core_stage_size());
        return 0;
    }
    *(core_stage_hdr *)base = (core_stage_hdr){.magic = CORE_STAGE_MAGIC,
                                               .nchunks = (uint32_t)util_cfg.stage_chunks,
                                               .chunk = util_cfg.stage_chunk};
    st->owner = util_calloc((size_t)util_cfg.stage_chunks, sizeof *st->owner);
    st->base = base;
    return 1;
}

int core_stage_accept(core_conn *c)
{
    if (c->peer_stage)
        return 1;
    if (c->stage_tried || util_cfg.stage_chunks <= 0 || !(c->caps & FAB_CAP_STAGE))
        return 0;
    c->stage_tried = 1;
    uint8_t *base = c->fab->ops->stage->pool_map(c->fc, core_stage_size());
    if (!base)
        return 0;
    const core_stage_hdr *h = (const core_stage_hdr *)base;
    if (h->magic != CORE_STAGE_MAGIC || h->nchunks != (uint32_t)util_cfg.stage_chunks ||
        h->chunk != util_cfg.stage_chunk) {
        util_log("%s's staging pool is not one of %d chunks of %zu bytes: copying through the ring",
                 util_proc(c->lpid), util_cfg.stage_chunks, util_cfg.stage_chunk);
        return 0;
    }
    c->peer_stage = base;
    return 1;
}

int core_stage_pending(void)
{
    struct core_stage *st = &core_s.stage;
    return st->base && atomic_load_explicit(core_stage_busy(st->base, st->last), memory_order_relaxed);
}

void core_stage_close(void)
{
    free(core_s.stage.owner);
    memset(&core_s.stage, 0, sizeof core_s.stage);
}

/* a free chunk of my pool for stream p, or -1. Chunks its receivers copied out are
 * credited back to their streams on the way. */
static int core_stage_take(core_pend *p)
{
    struct core_stage *st = &core_s.stage;
    int found = -1;
    for (uint32_t k = 0; k < (uint32_t)util_cfg.stage_chunks; k++) {
        if (atomic_load_explicit(core_stage_busy(st->base, k), memory_order_acquire))
            continue;
        if (st->owner[k]) {
            st->owner[k]->held--;
            st->owner[k] = NULL;
        }
        if (found < 0)
            found = (int)k;
    }
    return found;
}

/* the stream ended (every byte is out of the user's buffer): its busy chunks stay
 * busy until copied out, owned by nobody */
static void core_stage_forget(core_pend *p)
{
    struct core_stage *st = &core_s.stage;
    for (uint32_t k = 0; k < (uint32_t)util_cfg.stage_chunks && p->held; k++)
        if (st->owner[k] == p) {
            st->owner[k] = NULL;
            p->held--;
        }
}

static void core_stream_pack(core_req *s, uint8_t *dst, size_t n, int to_pool);

int core_stage_put(core_req *r)
{
    if (!core_s.stage.base)
        return -1;
    int k = core_stage_take(NULL);
    if (k < 0)
        return -1;
    r->u.send.sent = 0;
    core_stream_pack(r, core_stage_chunk(core_s.stage.base, (uint32_t)k), r->u.send.bytes, 1);
    core_st.stage_bytes += r->u.send.bytes;
    core_s.stage.last = (uint32_t)k;
    /* published with the packet that names the chunk (its release store) */
    atomic_store_explicit(core_stage_busy(core_s.stage.base, (uint32_t)k), 1, memory_order_relaxed);
    return k;
}

void core_stage_unput(int k)
{
    atomic_store_explicit(core_stage_busy(core_s.stage.base, (uint32_t)k), 0, memory_order_relaxed);
}

const uint8_t *core_stage_get(core_conn *c, const void *desc, size_t desc_len, size_t *len,
                              _Atomic uint32_t **busy, const char *what)
{
    wire_stage g = {0};
    if (desc_len == sizeof g)
        memcpy(&g, desc, sizeof g);
    if (!c->peer_stage || desc_len != sizeof g || g.chunk >= (uint32_t)util_cfg.stage_chunks ||
        g.len == 0 || g.len > util_cfg.stage_chunk)
        util_die("malformed packet from %s: %s names chunk %u (%u bytes) of a staging pool "
                 "of %d chunks of %zu bytes%s",
                 util_proc(c->lpid), what, g.chunk, g.len, util_cfg.stage_chunks,
                 util_cfg.stage_chunk, c->peer_stage ? "" : ", which this process never mapped");
    *len = g.len;
    *busy = core_stage_busy(c->peer_stage, g.chunk);
    return core_stage_chunk(c->peer_stage, g.chunk);
}

/* a DATA header and its wire_frag in h, `more` payload bytes to follow: returns where */
static uint8_t *core_data_hdr(wire_hdr *h, uint16_t flags, const wire_frag *f, size_t more)
{
    memset(h, 0, sizeof *h);
    h->type = WIRE_DATA;
    h->flags = flags;
    h->len = (uint32_t)(sizeof *f + more);
    memcpy(h + 1, f, sizeof *f);
    return (uint8_t *)(h + 1) + sizeof *f;
}

/* pack bytes [sent, sent + n) of send request s into dst: a chunk of my staging pool
 * (to_pool: its lines were last read by a peer, util_copy_nt) or a ring packet */
static void core_stream_pack(core_req *s, uint8_t *dst, size_t n, int to_pool)
{
    const core_dt *dt = s->u.send.dt;
    if (dt->contig) {
        const void *src = core_at(s->u.send.buf, dt->true_lb + (ptrdiff_t)s->u.send.sent);
        if (to_pool)
            core_st.stage_nt_bytes += util_copy_nt(dst, src, n, util_cfg.stage_nt);
        else
            memcpy(dst, src, n);
    } else
        core_dt_pack(s->u.send.buf, s->u.send.count, dt, s->u.send.sent, dst, n);
    s->u.send.sent += n;
    core_st.copy_bytes += n;
}

void core_cts_arrived(core_conn *c, const wire_hdr *h, const wire_done *d)
{
    core_req *s = core_req_expect(c, d->req, CORE_REQ_SEND, CORE_TO(CORE_S_RNDV_WAIT), "CTS");
    core_req_mem_drop(s);
    core_send_move(s, CORE_SE_CTS, CORE_S_STREAM);
    s->u.send.sent = 0;
    core_pend *p = core_pend_new(0);
    p->req = s;
    p->peer_req = d->peer_req;
    p->staged = (h->flags & WIRE_F_STAGED) && core_s.stage.base;
    if (p->staged)
        c->stage_peer_ok = 1;
    core_conn_backlog(c, p);
}

int core_stream_push(core_conn *c, core_pend *p)
{
    core_req *s = p->req;
    /* fragments as large as the connection's packets (a gw connection's: 64 KiB, where the
     * core's 16 KiB made four times the frames through the gateway) */
    size_t room = c->payload_max - sizeof(wire_frag);
    while (s->u.send.sent < s->u.send.bytes) {
        size_t left = s->u.send.bytes - s->u.send.sent;
        wire_frag f = {.req = p->peer_req, .offset = s->u.send.sent};
        wire_hdr *h;
        int k = p->staged ? core_stage_take(p) : -1;
        if (p->held >= ((unsigned)util_cfg.stage_chunks + 1) / 2)
            k = -1;     /* at most half the pool per stream: a stalled receiver leaves the rest */
        if (k >= 0 || p->held) {
            /* through the pool; while this stream holds chunks its receiver frees them */
            if (k < 0 || !(h = core_conn_tx_begin(c, sizeof f + sizeof(wire_stage), 0)))
                return 0;
            size_t n = left < util_cfg.stage_chunk ? left : util_cfg.stage_chunk;
            wire_stage g = {.chunk = (uint32_t)k, .len = (uint32_t)n};
            core_stream_pack(s, core_stage_chunk(core_s.stage.base, (uint32_t)k), n, 1);
            core_st.stage_bytes += n;
            atomic_store_explicit(core_stage_busy(core_s.stage.base, (uint32_t)k), 1, memory_order_relaxed);
            core_s.stage.owner[k] = p;
            core_s.stage.last = (uint32_t)k;
            p->held++;
            memcpy(core_data_hdr(h, WIRE_F_STAGED, &f, sizeof g), &g, sizeof g);
            core_conn_tx_end(c, h);     /* publishes the chunk's bytes and busy word too */
            continue;
        }
        size_t n = left < room ? left : room;
        if (!(h = core_conn_tx_begin(c, sizeof f + n, 0)))
            return 0;
        core_stream_pack(s, core_data_hdr(h, 0, &f, n), n, 0);
        core_conn_tx_end(c, h);
    }
    core_stage_forget(p);
    core_send_move(s, CORE_SE_STREAMED, CORE_S_DONE);
    core_req_complete(s);
    return 1;
}

void core_data_arrived(core_conn *c, const wire_hdr *h, const wire_frag *f, const void *bytes)
{
    core_req *r = core_req_expect(c, f->req, CORE_REQ_RECV, CORE_TO(CORE_R_FRAGS), "DATA");
    size_t n = h->len - sizeof *f;
    _Atomic uint32_t *busy = NULL;
    if (h->flags & WIRE_F_STAGED)
        bytes = core_stage_get(c, bytes, n, &n, &busy, "DATA");
    if (f->offset != r->u.recv.received || f->offset + n > r->u.recv.expected)
        util_die("malformed packet from %s: DATA fragment at offset %llu does not follow %zu of "
                 "%zu bytes",
                 util_proc(c->lpid), (unsigned long long)f->offset, r->u.recv.received,
                 r->u.recv.expected);
    size_t cap = r->u.recv.capacity;
    if (f->offset < cap) {
        size_t take = n < cap - f->offset ? n : cap - f->offset;
        const core_dt *dt = r->u.recv.dt;
        if (dt->contig && busy && core_recv_nt(r))
            core_st.recv_nt_bytes += util_copy_nt(core_at(r->u.recv.buf, dt->true_lb + (ptrdiff_t)f->offset),
                                                  bytes, take, 1);
        else if (dt->contig)
            memcpy(core_at(r->u.recv.buf, dt->true_lb + (ptrdiff_t)f->offset), bytes, take);
        else
            core_dt_unpack(r->u.recv.buf, r->u.recv.count, dt, f->offset, bytes, take);
    }
    if (busy)
        atomic_store_explicit(busy, 0, memory_order_release);   /* the sender may refill it */
    r->u.recv.received += n;
    if (r->u.recv.received == r->u.recv.expected) {
        size_t got = r->u.recv.expected < cap ? r->u.recv.expected : cap;
        core_recv_done(r, CORE_RE_DATA, r->status.source, r->status.tag, got,
                       r->u.recv.expected > cap);
    }
}
