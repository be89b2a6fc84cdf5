/* The message mode: RMA operations as messages on the window's private
 * communicator, applied by the target (its progress engine, or its assist
 * thread while it computes outside MPI).
 *
 * Origin. Operations to a target are encoded as items into one batch
 * message per target (thesis 3.3.3): the lock request first (taken lazily,
 * with the first batch), then the operations, small data inline (copied into
 * the batch), each larger payload as its own message with a tag of its own
 * (sent at once from the user's buffer, single-copy by rendezvous). Results
 * (get, get_accumulate, fetch_and_op, compare_and_swap) come back as
 * messages into receives posted when the operation is issued. A batch is
 * sent when it is full, when a request-based operation needs it, and at the
 * synchronisation that ends the operations (flush, unlock, complete, fence),
 * which appends a FLUSH / UNLOCK / COMPLETE item that the target answers
 * once everything before it is done.
 *
 * Target (the server). One receive on the window's context takes batches
 * from any origin; items of one origin are applied strictly in order. An
 * item that cannot finish at once (a lock held by another, data still to
 * arrive, a reply still going out) parks the rest of its batch in the
 * origin's queue, resumed by the poller. Every field of an item is checked
 * before use; a malformed batch ends the process with the peer's rank
 * (SYSTEM.md 8), an access outside the window is reported to the origin with
 * the next answer (MPI_ERR_RMA_RANGE at its flush/unlock).
 *
 * Wire format (fixed-width fields, in the byte order of the node: both ends
 * run the same build): osc_am_hdr, then items, each a multiple of 8 bytes. */
#include "mpi/osc/osc_impl.h"
#include "mpi/pt2pt/pt2pt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OSC_TAG_REQ    1           /* batches */
#define OSC_TAG_POST   2           /* MPI_Win_post notifications */
#define OSC_TAG_FIRST  16          /* data and replies */
#define OSC_AM_MAGIC   0x4f534341u /* "ACSO" */
#define OSC_AM_VERSION 1
#define OSC_AM_RX      (64 * 1024) /* the server's receive buffer: the largest batch */

enum {
    OSC_AM_LOCK = 1,
    OSC_AM_UNLOCK,
    OSC_AM_FLUSH,
    OSC_AM_COMPLETE,
    OSC_AM_PUT,
    OSC_AM_GET,
    OSC_AM_ACC,
    OSC_AM_GACC,
    OSC_AM_FOP,
    OSC_AM_CAS,
    OSC_AM_LARGE, /* a batch too large for the receive buffer follows as data */
    OSC_AM_KIND_MAX = OSC_AM_LARGE
};
#define OSC_AM_F_INLINE 1 /* the data follows the item (and its type description) */

typedef struct osc_am_hdr {
    uint32_t magic;
    uint8_t version;
    uint8_t pad;
    uint16_t nitems;
    uint32_t bytes; /* the whole batch */
    uint32_t pad2;
} osc_am_hdr;
_Static_assert(sizeof(osc_am_hdr) == 16, "batch header");

typedef struct osc_am_item {
    uint8_t kind;
    uint8_t flags;
    uint16_t op;    /* accumulates: the MPI_Op handle index */
    uint32_t len;   /* this item: header, type description, inline data; 8-aligned */
    uint64_t taddr; /* offset in the window (dynamic windows: the address) */
    uint64_t tcount;
    uint64_t bytes;    /* data bytes at the target: tcount times the type size */
    int32_t data_tag;  /* the data comes as a message with this tag (not inline) */
    int32_t reply_tag; /* answer (result or acknowledgement) with this tag; 0: none */
    uint32_t tdt;      /* a predefined type's index; 0: a description follows */
    uint16_t basic;    /* accumulates: the predefined type of the elements */
    uint16_t lock;     /* LOCK: OSC_LK_SHARED or OSC_LK_EXCL */
} osc_am_item;
_Static_assert(sizeof(osc_am_item) == 48, "item header");

/* a derived target type: its runs, repeated over its levels (core_dt_level):
 * the outermost in the header (nrep copies rep_stride apart; 1 and 0 if the
 * type has no level), then `nlev` more (outer to inner), then the runs */
typedef struct osc_am_dtdesc {
    int64_t lb, extent;
    int64_t rep_stride;
    uint64_t nrep;
    uint32_t nruns;
    uint32_t nlev;
} osc_am_dtdesc;
typedef struct osc_am_level {
    int64_t stride;
    uint64_t n;
} osc_am_level;
typedef struct osc_am_run {
    int64_t disp;
    uint64_t len;
} osc_am_run;
_Static_assert(sizeof(osc_am_dtdesc) == 40 && sizeof(osc_am_level) == 16 &&
                   sizeof(osc_am_run) == 16,
               "type description");

/* an answer: the first error the target met since the previous answer */
typedef struct osc_am_ack {
    int32_t err;
    int32_t pad;
} osc_am_ack;

static size_t am_align8(size_t v) { return (v + 7) & ~(size_t)7; }

/* ---- state ------------------------------------------------------------------------------- */

/* origin side, per target */
struct osc_am_out {
    uint8_t *buf; /* the batch being built */
    size_t len, cap;
    int nitems;
    int lock_sent; /* the LOCK of this epoch went out */
    int issued;    /* operations issued since the last FLUSH/UNLOCK answer */
    int inflight;  /* requests to or from it in progress (osc_pend) */
    int32_t err;   /* the first error an answer reported */
};

/* a request in flight: origin data and receives, batches, server answers */
typedef struct osc_pend {
    util_qnode qn;
    core_req *r;
    int target;     /* origin side: the target; server side: -1 */
    void *buf;      /* freed when r completes */
    core_req *ureq; /* request-based operation completed with it */
    osc_am_ack ack; /* answers are received here */
    int is_ack;
} osc_pend;

/* the item a server works on, while it waits */
typedef struct osc_item_st {
    int stage;
    core_req *wait;
    void *tmp;     /* data received / results to send */
    void *discard; /* data of a failed operation, dropped */
    core_dt *dt;   /* decoded target type (requests point at it: never moves) */
} osc_item_st;

/* the rest of a batch of one origin, parked behind a waiting item */
typedef struct osc_rem {
    util_qnode qn;
    uint8_t *buf;
    size_t len, off; /* the next item is at off */
    int left;        /* items left */
    osc_item_st st;  /* state of the item at off */
} osc_rem;

struct osc_am_in {
    util_queue rem; /* osc_rem, FIFO */
    int lock;       /* the lock this origin holds on my window */
    int32_t err;    /* first error since the last answer */
};

typedef struct osc_srv {
    core_req *rx;
    uint8_t *rxbuf;
    struct osc_am_in *in; /* per origin rank */
    uint32_t *completes;  /* per origin: COMPLETE items applied */
    util_queue sends;     /* osc_pend of answers and get data going out */
} osc_srv;

util_queue *osc_win_list(void); /* win.c */
int osc_win_local_attached(osc_win *w, uint64_t lo, uint64_t hi);
static int osc_am_poll(void);
static int osc_am_nwin;

static const core_dt *am_byte(void) { return &mpii_dtype_get(MPI_BYTE)->dt; }

static uint32_t am_tag(osc_win *w)
{
    uint32_t t = w->next_tag++;
    if (w->next_tag > (1u << 30) - 1)
        w->next_tag = OSC_TAG_FIRST;
    return t;
}

/* ---- setup -------------------------------------------------------------------------------- */

static void srv_post_rx(osc_win *w)
{
    osc_srv *s = w->srv;
    int rc = core_irecv(s->rxbuf, OSC_AM_RX, am_byte(), -1, MPI_ANY_SOURCE, OSC_TAG_REQ,
                        w->comm->ctx, &s->rx);
    if (rc != UTIL_OK)
        util_die("RMA: cannot post the window's receive (%d)", rc);
}

int osc_am_setup(osc_win *w)
{
    osc_srv *s = util_calloc(1, sizeof *s);
    s->rxbuf = util_malloc(OSC_AM_RX);
    s->in = util_calloc((size_t)w->size, sizeof *s->in);
    for (int o = 0; o < w->size; o++)
        util_queue_init(&s->in[o].rem);
    s->completes = util_calloc((size_t)w->size, sizeof *s->completes);
    util_queue_init(&s->sends);
    w->srv = s;
    srv_post_rx(w);
    osc_win_list_add(w);
    if (osc_am_nwin++ == 0 && core_poller_start(osc_am_poll) != UTIL_OK)
        util_die("RMA: no room for the window poller");
    return MPI_SUCCESS;
}

static void pend_free(osc_pend *p)
{
    util_queue_remove(&p->qn);
    mpii_req_release(p->r);
    free(p->buf);
    free(p);
}

void osc_am_teardown(osc_win *w)
{
    osc_srv *s = w->srv;
    /* answers and data going out finish once their origins took them (they
     * did, before the barrier that precedes this) */
    util_backoff b;
    util_backoff_reset(&b);
    while ((s && !util_queue_empty(&s->sends)) || !util_queue_empty(&w->pend))
        osc_backoff(&b);
    if (s) {
        if (!s->rx->complete)
            core_cancel_recv(s->rx);
        core_req_free(s->rx);
        for (int o = 0; o < w->size; o++) {
            util_qnode *n;
            while ((n = util_queue_first(&s->in[o].rem))) {
                osc_rem *r = UTIL_CONTAINER(n, osc_rem, qn);
                util_queue_remove(n);
                if (r->st.dt) {
                    core_dt_destroy(r->st.dt);
                    free(r->st.dt);
                }
                free(r->st.tmp);
                free(r->buf);
                free(r);
            }
        }
        free(s->completes);
        free(s->in);
        free(s->rxbuf);
        free(s);
        w->srv = NULL;
        if (w->assist_held)
            mpii_async_hold(-1);
        w->assist_held = 0;
        if (--osc_am_nwin == 0)
            core_poller_stop(osc_am_poll);
    }
    for (int t = 0; t < w->size; t++)
        if (w->peers[t].out) {
            free(w->peers[t].out->buf);
            free(w->peers[t].out);
            w->peers[t].out = NULL;
        }
    osc_win_list_remove(w);
}

/* ---- origin side ------------------------------------------------------------------------------
 */

static osc_am_out *am_out(osc_win *w, int t)
{
    osc_peer *p = &w->peers[t];
    if (!p->out)
        p->out = util_calloc(1, sizeof *p->out);
    return p->out;
}

static osc_pend *am_track(osc_win *w, int t, core_req *r, void *buf, core_req *ureq)
{
    osc_pend *p = util_calloc(1, sizeof *p);
    p->r = r;
    p->target = t;
    p->buf = buf;
    p->ureq = ureq;
    util_queue_push(&w->pend, &p->qn);
    if (t >= 0)
        w->peers[t].out->inflight++;
    return p;
}

/* room for an item of `len` bytes at the end of the batch */
static osc_am_item *am_item_new(osc_am_out *o, size_t len)
{
    if (!o->buf || o->len == 0) {
        if (o->cap < sizeof(osc_am_hdr) + len) {
            o->cap = sizeof(osc_am_hdr) + len > 4096 ? sizeof(osc_am_hdr) + len : 4096;
            o->buf = util_realloc(o->buf, o->cap);
        }
        o->len = sizeof(osc_am_hdr);
        o->nitems = 0;
    }
    if (o->len + len > o->cap) {
        while (o->len + len > o->cap)
            o->cap *= 2;
        o->buf = util_realloc(o->buf, o->cap);
    }
    osc_am_item *it = (osc_am_item *)(o->buf + o->len);
    memset(it, 0, len);
    it->len = (uint32_t)len;
    o->len += len;
    o->nitems++;
    return it;
}

/* send the batch being built; ureq completes when it is out */
static int am_send_batch(osc_win *w, int t, core_req *ureq)
{
    osc_am_out *o = w->peers[t].out;
    if (!o || o->nitems == 0) {
        if (ureq)
            core_req_complete(ureq);
        return UTIL_OK;
    }
    osc_am_hdr *h = (osc_am_hdr *)o->buf;
    h->magic = OSC_AM_MAGIC;
    h->version = OSC_AM_VERSION;
    h->nitems = (uint16_t)o->nitems;
    h->bytes = (uint32_t)o->len;
    uint8_t *msg = o->buf;
    size_t len = o->len;
    o->buf = NULL;
    o->len = o->cap = 0;
    o->nitems = 0;
    int tag = OSC_TAG_REQ;
    if (len > OSC_AM_RX) {
        /* too large for the receive buffer: announce it, then send it as data */
        osc_am_out tmp = {0};
        osc_am_item *it = am_item_new(&tmp, sizeof(osc_am_item));
        it->kind = OSC_AM_LARGE;
        it->bytes = len;
        it->data_tag = (int32_t)am_tag(w);
        tag = it->data_tag;
        osc_am_hdr *th = (osc_am_hdr *)tmp.buf;
        th->magic = OSC_AM_MAGIC;
        th->version = OSC_AM_VERSION;
        th->nitems = 1;
        th->bytes = (uint32_t)tmp.len;
        core_req *r;
        int rc = core_isend(tmp.buf, tmp.len, am_byte(), w->peers[t].lpid, w->rank, OSC_TAG_REQ,
                            w->comm->ctx, CORE_SEND_STD, &r);
        if (rc != UTIL_OK) {
            free(tmp.buf);
            free(msg);
            return rc;
        }
        am_track(w, t, r, tmp.buf, NULL);
    }
    core_req *r;
    int rc = core_isend(msg, len, am_byte(), w->peers[t].lpid, w->rank, tag, w->comm->ctx,
                        CORE_SEND_STD, &r);
    if (rc != UTIL_OK) {
        free(msg);
        return rc;
    }
    am_track(w, t, r, msg, ureq);
    return UTIL_OK;
}

static void am_batch_limit(osc_win *w, int t, size_t need)
{
    osc_am_out *o = w->peers[t].out;
    size_t limit = util_cfg.rma_batch < 256 ? 256 : util_cfg.rma_batch;
    if (limit > OSC_AM_RX)
        limit = OSC_AM_RX;
    if (o->nitems && (o->len + need > limit || util_cfg.rma_batch == 0))
        am_send_batch(w, t, NULL);
}

static size_t am_dt_desc_bytes(uint64_t nlev, uint64_t nruns)
{
    return sizeof(osc_am_dtdesc) + nlev * sizeof(osc_am_level) + nruns * sizeof(osc_am_run);
}

size_t osc_am_dt_desc_size(const core_dt *dt)
{
    return am_dt_desc_bytes(dt->nlev > 0 ? (uint64_t)dt->nlev - 1 : 0, (uint64_t)dt->nruns);
}

/* bytes of the description of a derived type (0 for a predefined one) */
static size_t am_dt_desc_len(MPI_Datatype h, const core_dt *dt)
{
    mpii_dtype *t = mpii_dtype_get(h);
    if (t->predefined)
        return 0;
    return osc_am_dt_desc_size(dt);
}

void osc_am_dt_encode(const core_dt *dt, uint8_t *p)
{
    osc_am_dtdesc d = {.lb = dt->lb,
                       .extent = dt->extent,
                       .rep_stride = dt->nlev ? dt->lev[0].stride : 0,
                       .nrep = dt->nlev ? dt->lev[0].n : 1,
                       .nruns = (uint32_t)dt->nruns,
                       .nlev = dt->nlev > 0 ? (uint32_t)dt->nlev - 1 : 0};
    memcpy(p, &d, sizeof d);
    p += sizeof d;
    for (int k = 1; k < dt->nlev; k++, p += sizeof(osc_am_level)) {
        osc_am_level l = {dt->lev[k].stride, dt->lev[k].n};
        memcpy(p, &l, sizeof l);
    }
    for (int i = 0; i < dt->nruns; i++, p += sizeof(osc_am_run)) {
        osc_am_run x = {dt->runs[i].disp, dt->runs[i].len};
        memcpy(p, &x, sizeof x);
    }
}

/* The type a description describes, rebuilt with the engine's constructor:
 * the runs as blocks of bytes repeated by the innermost level, then one
 * single-block type per outer level; the bounds last. */
int osc_am_dt_decode(const uint8_t *p, size_t avail, core_dt *out, const char **why)
{
    osc_am_dtdesc d;
    *why = "truncated type description";
    if (avail < sizeof d)
        return UTIL_EINVAL;
    memcpy(&d, p, sizeof d);
    *why = "bad type description";
    if (d.nruns == 0 || d.nlev >= CORE_DT_MAXLEV || d.nrep == 0 ||
        am_dt_desc_bytes(d.nlev, d.nruns) > avail)
        return UTIL_EINVAL;
    osc_am_level lev[CORE_DT_MAXLEV];
    int nl = (int)d.nlev + 1;
    lev[0] = (osc_am_level){d.rep_stride, d.nrep};
    memcpy(&lev[1], p + sizeof d, d.nlev * sizeof lev[0]);
    for (int k = 0; k < nl; k++)
        if (lev[k].n == 0)
            return UTIL_EINVAL;
    const uint8_t *rp = p + sizeof d + d.nlev * sizeof(osc_am_level);
    core_dt byte, cur, next;
    core_dt_make_basic(&byte, 1, 1, 0);
    core_dt_block *blocks = util_malloc(d.nruns * sizeof *blocks);
    for (uint32_t i = 0; i < d.nruns; i++) {
        osc_am_run r;
        memcpy(&r, rp + i * sizeof r, sizeof r);
        blocks[i] = (core_dt_block){&byte, (size_t)r.len, (ptrdiff_t)r.disp};
    }
    int rc = core_dt_create(&cur, d.nruns, blocks, (size_t)lev[nl - 1].n,
                            (ptrdiff_t)lev[nl - 1].stride, 0);
    free(blocks);
    core_dt_destroy(&byte);
    for (int k = nl - 2; k >= 0 && rc == UTIL_OK; k--) {
        core_dt_block b = {&cur, 1, 0};
        rc = core_dt_create(&next, 1, &b, (size_t)lev[k].n, (ptrdiff_t)lev[k].stride, 0);
        core_dt_destroy(&cur);
        cur = next;
    }
    *why = "type description does not describe a type";
    if (rc != UTIL_OK)
        return rc;
    rc = core_dt_resized(out, &cur, (ptrdiff_t)d.lb, (ptrdiff_t)d.extent);
    core_dt_destroy(&cur);
    *why = "type description has bad bounds";
    return rc;
}

static void am_ensure_lock(osc_win *w, int t)
{
    osc_peer *p = &w->peers[t];
    osc_am_out *o = am_out(w, t);
    if (p->lock && !p->nocheck && !o->lock_sent) {
        osc_am_item *it = am_item_new(o, sizeof(osc_am_item));
        it->kind = OSC_AM_LOCK;
        it->lock = p->lock;
        o->lock_sent = 1;
    }
}

int osc_am_op(osc_win *w, int t, const osc_args *a, uint64_t taddr, int basic, core_req *ureq)
{
    osc_am_out *o = am_out(w, t);
    int is_req = ureq != NULL;
    const core_dt *tdt = &mpii_dtype_get(a->tdt)->dt;
    size_t bytes = (size_t)a->tcount * tdt->size;
    int has_data = a->kind == OSC_PUT || a->kind == OSC_ACC || a->kind == OSC_CAS ||
                   ((a->kind == OSC_GACC || a->kind == OSC_FOP) && a->op != MPI_NO_OP);
    int has_reply = a->kind != OSC_PUT && a->kind != OSC_ACC;
    size_t dlen = has_data ? (a->kind == OSC_CAS ? 2 * bytes : bytes) : 0;
    int inl = has_data && (dlen <= util_cfg.rma_inline || a->kind == OSC_CAS || a->kind == OSC_FOP);
    size_t desc = am_dt_desc_len(a->tdt, tdt);
    size_t len = am_align8(sizeof(osc_am_item) + desc + (inl ? dlen : 0));
    am_batch_limit(w, t, len + sizeof(osc_am_item));
    am_ensure_lock(w, t);
    osc_am_item *it = am_item_new(o, len);
    static const uint8_t kinds[] = {0,           OSC_AM_PUT, OSC_AM_GET, OSC_AM_ACC,
                                    OSC_AM_GACC, OSC_AM_FOP, OSC_AM_CAS};
    it->kind = kinds[a->kind];
    it->flags = inl ? OSC_AM_F_INLINE : 0;
    it->op = (uint16_t)MPII_HANDLE_INDEX(a->kind == OSC_PUT ? MPI_REPLACE : a->op);
    it->taddr = taddr;
    it->tcount = (uint64_t)a->tcount;
    it->bytes = bytes;
    it->tdt = desc ? 0 : (uint32_t)MPII_HANDLE_INDEX(a->tdt);
    it->basic = (uint16_t)basic;
    uint8_t *p = (uint8_t *)(it + 1);
    if (desc)
        osc_am_dt_encode(tdt, p);
    p += desc;
    if (inl) {
        core_dt_pack(a->obuf, (size_t)a->ocount, &mpii_dtype_get(a->odt)->dt, 0, p, bytes);
        if (a->kind == OSC_CAS)
            memcpy(p + bytes, a->cbuf, bytes);
    } else if (has_data) {
        it->data_tag = (int32_t)am_tag(w);
        core_req *r;
        int rc = mpii_start_send(a->obuf, a->ocount, a->odt, t, it->data_tag, w->comm, 0,
                                 CORE_SEND_STD, &r);
        if (rc != MPI_SUCCESS)
            return UTIL_EIO;
        am_track(w, t, r, NULL, has_reply ? NULL : ureq);
        if (!has_reply)
            ureq = NULL;
    }
    if (has_reply) {
        it->reply_tag = (int32_t)am_tag(w);
        core_req *r;
        int rc = mpii_start_recv(a->rbuf, a->rcount, a->rdt, t, it->reply_tag, w->comm, 0, &r);
        if (rc != MPI_SUCCESS)
            return UTIL_EIO;
        am_track(w, t, r, NULL, ureq);
        ureq = NULL;
    }
    o->issued++;
    /* a request must be able to complete without a later synchronisation */
    if (is_req || util_cfg.rma_batch == 0)
        return am_send_batch(w, t, ureq);
    return UTIL_OK;
}

int osc_am_pending(osc_win *w, int t)
{
    osc_am_out *o = w->peers[t].out;
    return o && (o->issued || o->nitems || o->inflight);
}

/* progress until no request of t is in flight; the first error answered */
static int am_wait_target(osc_win *w, int t)
{
    osc_am_out *o = w->peers[t].out;
    util_backoff b;
    util_backoff_reset(&b);
    while (o->inflight > 0)
        osc_backoff(&b);
    return MPI_SUCCESS;
}

/* append an item answered by the target, send, wait for the answer */
static int am_answered(osc_win *w, int t, int kind, int lock)
{
    osc_am_out *o = am_out(w, t);
    am_batch_limit(w, t, sizeof(osc_am_item));
    osc_am_item *it = am_item_new(o, sizeof(osc_am_item));
    it->kind = (uint8_t)kind;
    it->lock = (uint16_t)lock;
    it->reply_tag = (int32_t)am_tag(w);
    osc_pend *p = util_calloc(1, sizeof *p);
    int rc = core_irecv(&p->ack, sizeof p->ack, am_byte(), w->peers[t].lpid, t, it->reply_tag,
                        w->comm->ctx, &p->r);
    if (rc != UTIL_OK) {
        free(p);
        return MPI_ERR_OTHER;
    }
    p->target = t;
    p->is_ack = 1;
    util_queue_push(&w->pend, &p->qn);
    o->inflight++;
    rc = am_send_batch(w, t, NULL);
    if (rc != UTIL_OK)
        return mpii_errclass(rc);
    /* the answer's error is kept in the target's out state by the poller */
    am_wait_target(w, t);
    int err = o->err;
    o->err = MPI_SUCCESS;
    o->issued = 0;
    return err;
}

int osc_am_flush(osc_win *w, int t, int local)
{
    osc_am_out *o = am_out(w, t);
    if (local) {
        int rc = am_send_batch(w, t, NULL);
        if (rc != UTIL_OK)
            return mpii_errclass(rc);
        return am_wait_target(w, t);
    }
    if (!o->issued && !o->nitems && !o->inflight)
        return MPI_SUCCESS;
    return am_answered(w, t, OSC_AM_FLUSH, 0);
}

int osc_am_lock(osc_win *w, int t, int type, int grant)
{
    osc_am_out *o = am_out(w, t);
    o->lock_sent = 0;
    o->issued = 0;
    if (!grant)
        return MPI_SUCCESS; /* with the first operations */
    o->lock_sent = 1;
    return am_answered(w, t, OSC_AM_LOCK, type);
}

int osc_am_unlock(osc_win *w, int t)
{
    osc_peer *p = &w->peers[t];
    osc_am_out *o = am_out(w, t);
    int rc = MPI_SUCCESS;
    if (o->lock_sent)
        rc = am_answered(w, t, OSC_AM_UNLOCK, p->lock);
    else if (o->issued || o->nitems || o->inflight)
        rc = am_answered(w, t, OSC_AM_FLUSH, 0); /* MPI_MODE_NOCHECK: no lock to give back */
    o->lock_sent = 0;
    return rc;
}

int osc_am_post(osc_win *w, int origin)
{
    uint64_t *z = util_calloc(1, sizeof *z);
    core_req *r;
    int rc = core_isend(z, sizeof *z, am_byte(), w->peers[origin].lpid, w->rank, OSC_TAG_POST,
                        w->comm->ctx, CORE_SEND_STD, &r);
    if (rc != UTIL_OK) {
        free(z);
        return mpii_errclass(rc);
    }
    am_track(w, -1, r, z, NULL);
    return MPI_SUCCESS;
}

int osc_am_wait_post(osc_win *w, int t)
{
    uint64_t z;
    return mpii_recv(&z, (MPI_Aint)sizeof z, MPI_BYTE, t, OSC_TAG_POST, w->comm, 0,
                     MPI_STATUS_IGNORE);
}

int osc_am_complete(osc_win *w, int t)
{
    osc_am_out *o = am_out(w, t);
    am_batch_limit(w, t, sizeof(osc_am_item));
    osc_am_item *it = am_item_new(o, sizeof(osc_am_item));
    it->kind = OSC_AM_COMPLETE;
    int rc = am_send_batch(w, t, NULL);
    if (rc != UTIL_OK)
        return mpii_errclass(rc);
    o->issued = 0;
    return am_wait_target(w, t);
}

int osc_am_completes_seen(osc_win *w, int o) { return w->srv ? (int)w->srv->completes[o] : 0; }

/* origin-side requests that finished */
static int am_pend_poll(osc_win *w)
{
    int ev = 0;
    util_qnode *n = w->pend.head.next;
    while (n != &w->pend.head) {
        util_qnode *next = n->next;
        osc_pend *p = UTIL_CONTAINER(n, osc_pend, qn);
        if (p->r->complete) {
            if (p->target >= 0) {
                osc_am_out *o = w->peers[p->target].out;
                o->inflight--;
                if (p->is_ack && p->ack.err != MPI_SUCCESS && o->err == MPI_SUCCESS)
                    o->err = p->ack.err; /* read by am_answered */
            }
            if (p->ureq)
                core_req_complete(p->ureq);
            pend_free(p);
            ev++;
        }
        n = next;
    }
    return ev;
}

/* ---- the server -------------------------------------------------------------------------------
 */

_Noreturn static void srv_bad(osc_win *w, int o, const char *what)
{
    util_die("RMA: malformed request from rank %d (%s) on %s: %s", o, util_proc(w->peers[o].lpid),
             osc_win_label(w), what);
}

/* send (src, count, dt) to origin o; the item st waits for it, or (st NULL)
 * it is tracked on its own and `owned` freed when it is out */
static void srv_send(osc_win *w, int o, const void *src, size_t count, const core_dt *dt, int tag,
                     osc_item_st *st, void *owned)
{
    core_req *r;
    int rc =
        core_isend(src, count, dt, w->peers[o].lpid, w->rank, tag, w->comm->ctx, CORE_SEND_STD, &r);
    if (rc != UTIL_OK)
        util_die("RMA: cannot answer rank %d (%d)", o, rc);
    if (st) {
        st->wait = r;
        return;
    }
    osc_pend *p = util_calloc(1, sizeof *p);
    p->r = r;
    p->target = -1;
    p->buf = owned;
    util_queue_push(&w->srv->sends, &p->qn);
}

static void srv_ack(osc_win *w, int o, int tag)
{
    osc_am_ack *a = util_calloc(1, sizeof *a);
    a->err = w->srv->in[o].err;
    w->srv->in[o].err = MPI_SUCCESS;
    srv_send(w, o, a, sizeof *a, am_byte(), tag, NULL, a);
}

static void srv_error(osc_win *w, int o, int cls)
{
    if (w->srv->in[o].err == MPI_SUCCESS)
        w->srv->in[o].err = cls;
}

/* the target type of an item; *desc_len set to the bytes of its description */
static const core_dt *srv_type(osc_win *w, int o, const osc_am_item *it, const uint8_t *p,
                               size_t avail, osc_item_st *st, size_t *desc_len)
{
    *desc_len = 0;
    if (it->tdt) {
        mpii_dtype *t = it->tdt < MPII_DTYPE_PREDEF_MAX ? mpii_dtype_predef[it->tdt] : NULL;
        if (!t)
            srv_bad(w, o, "unknown predefined datatype");
        return &t->dt;
    }
    const char *why = NULL;
    if (!st->dt) {
        st->dt = util_calloc(1, sizeof *st->dt);
        if (osc_am_dt_decode(p, avail, st->dt, &why) != UTIL_OK)
            srv_bad(w, o, why);
    }
    osc_am_dtdesc d;   /* decoded and checked above, perhaps for an earlier call */
    memcpy(&d, p, sizeof d);
    *desc_len = am_dt_desc_bytes(d.nlev, d.nruns);
    return st->dt;
}

/* the local address of an item's target data; NULL (and the error noted) if
 * it is not in my window */
static char *srv_target(osc_win *w, int o, const osc_am_item *it, const core_dt *dt)
{
    if (it->bytes == 0)
        return NULL;
    ptrdiff_t lo = dt->true_lb, hi = dt->true_lb + dt->true_extent;
    ptrdiff_t last = (ptrdiff_t)(it->tcount - 1) * dt->extent;
    if (last < 0)
        lo += last;
    else
        hi += last;
    uint64_t a = it->taddr + (uint64_t)lo, b = it->taddr + (uint64_t)hi;
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        if (osc_win_local_attached(w, a, b))
            return (char *)(uintptr_t)it->taddr;
    } else if ((int64_t)it->taddr + lo >= 0 && b <= (uint64_t)w->bytes && a <= b) {
        char *base = w->peers[w->rank].map ? w->peers[w->rank].map : (char *)w->base;
        return base + it->taddr;
    }
    srv_error(w, o, MPI_ERR_RMA_RANGE);
    return NULL;
}

enum { SRV_DONE = 1, SRV_WAIT = 0 };

/* apply one item; SRV_WAIT leaves st describing what it waits for */
static int srv_item(osc_win *w, int o, const osc_am_item *it, size_t avail, osc_item_st *st)
{
    osc_srv *s = w->srv;
    struct osc_am_in *in = &s->in[o];
    const uint8_t *p = (const uint8_t *)(it + 1);
    size_t rest = avail - sizeof *it;
    if (st->wait) {
        if (!st->wait->complete)
            return SRV_WAIT;
        mpii_req_release(st->wait);
        st->wait = NULL;
        free(st->discard);
        st->discard = NULL;
    }
    switch (it->kind) {
    case OSC_AM_LOCK: {
        if (it->lock != OSC_LK_SHARED && it->lock != OSC_LK_EXCL)
            srv_bad(w, o, "bad lock type");
        if (in->lock)
            srv_bad(w, o, "lock requested twice");
        if (!osc_lock_try(&w->lranks[w->my_local].lock, it->lock))
            return SRV_WAIT; /* tried again at the next poll */
        in->lock = it->lock;
        if (it->reply_tag)
            srv_ack(w, o, it->reply_tag);
        return SRV_DONE;
    }
    case OSC_AM_UNLOCK:
        if (in->lock)
            osc_lock_release(&w->lranks[w->my_local].lock, in->lock);
        in->lock = 0;
        atomic_thread_fence(memory_order_seq_cst);
        srv_ack(w, o, it->reply_tag);
        return SRV_DONE;
    case OSC_AM_FLUSH:
        atomic_thread_fence(memory_order_seq_cst);
        srv_ack(w, o, it->reply_tag);
        return SRV_DONE;
    case OSC_AM_COMPLETE:
        atomic_thread_fence(memory_order_seq_cst);
        s->completes[o]++;
        return SRV_DONE;
    default:
        break;
    }
    size_t desc = 0;
    const core_dt *dt = srv_type(w, o, it, p, rest, st, &desc);
    if (it->tcount > ((uint64_t)1 << 46) || it->bytes > ((uint64_t)1 << 46) ||
        dt->size * it->tcount != it->bytes)
        srv_bad(w, o, "data size does not match the type");
    size_t bytes = (size_t)it->bytes;
    size_t dlen = it->kind == OSC_AM_CAS ? 2 * bytes : bytes;
    const uint8_t *data = NULL;
    if (it->flags & OSC_AM_F_INLINE) {
        if (rest - desc < dlen)
            srv_bad(w, o, "inline data beyond the item");
        data = p + desc;
    }
    char *tp = srv_target(w, o, it, dt);
    switch (it->kind) {
    case OSC_AM_PUT:
        if (st->stage == 1)
            return SRV_DONE;
        if (data) {
            if (tp)
                core_dt_unpack(tp, (size_t)it->tcount, dt, 0, data, bytes);
            return SRV_DONE;
        }
        st->stage = 1;
        if (tp) {
            if (core_irecv(tp, (size_t)it->tcount, dt, w->peers[o].lpid, o, it->data_tag,
                           w->comm->ctx, &st->wait) != UTIL_OK)
                util_die("RMA: cannot receive data from rank %d", o);
        } else {
            st->discard = util_malloc(bytes + 1);
            if (core_irecv(st->discard, bytes, am_byte(), w->peers[o].lpid, o, it->data_tag,
                           w->comm->ctx, &st->wait) != UTIL_OK)
                util_die("RMA: cannot receive data from rank %d", o);
        }
        return srv_item(w, o, it, avail, st);
    case OSC_AM_GET:
        if (st->stage == 1)
            return SRV_DONE;
        st->stage = 1;
        if (tp) {
            srv_send(w, o, tp, (size_t)it->tcount, dt, it->reply_tag, st, NULL);
        } else {
            st->tmp = util_calloc(1, bytes + 1);
            srv_send(w, o, st->tmp, bytes, am_byte(), it->reply_tag, st, NULL);
        }
        return srv_item(w, o, it, avail, st);
    case OSC_AM_ACC:
    case OSC_AM_GACC:
    case OSC_AM_FOP:
    case OSC_AM_CAS: {
        if (st->stage == 2) {
            free(st->tmp);
            st->tmp = NULL;
            return SRV_DONE;
        }
        MPI_Op op = MPII_HANDLE(MPII_KIND_OP, it->op);
        int needs_data = !(it->flags & OSC_AM_F_INLINE) && it->data_tag;
        if (st->stage == 0 && needs_data) {
            st->stage = 1;
            st->discard = NULL;
            st->tmp = util_malloc(dlen + 1);
            if (core_irecv(st->tmp, dlen, am_byte(), w->peers[o].lpid, o, it->data_tag,
                           w->comm->ctx, &st->wait) != UTIL_OK)
                util_die("RMA: cannot receive data from rank %d", o);
            return srv_item(w, o, it, avail, st);
        }
        if (needs_data)
            data = st->tmp;
        int reply = it->kind != OSC_AM_ACC;
        if (it->basic >= MPII_DTYPE_PREDEF_MAX || !mpii_dtype_predef[it->basic] || it->op == 0 ||
            it->op > MPII_HANDLE_INDEX(MPI_NO_OP))
            srv_bad(w, o, "bad accumulate operation or type");
        void *old = reply ? util_calloc(1, bytes + 1) : NULL;
        if (tp && bytes) {
            char *t = util_malloc(bytes + 1);
            osc_acc_lock(w, w->rank);
            core_dt_pack(tp, (size_t)it->tcount, dt, 0, t, bytes);
            if (old)
                memcpy(old, t, bytes);
            int change = op != MPI_NO_OP;
            if (it->kind == OSC_AM_CAS) {
                change = memcmp(t, data + bytes, bytes) == 0;
                if (change)
                    memcpy(t, data, bytes);
            } else if (change) {
                osc_apply_packed(op, it->basic, data, t, bytes);
            }
            if (change)
                core_dt_unpack(tp, (size_t)it->tcount, dt, 0, t, bytes);
            osc_acc_unlock(w, w->rank);
            free(t);
        }
        free(st->tmp);
        st->tmp = old;
        st->stage = 2;
        if (!reply)
            return SRV_DONE;
        srv_send(w, o, old, bytes, am_byte(), it->reply_tag, st, NULL);
        return srv_item(w, o, it, avail, st);
    }
    case OSC_AM_LARGE:
        srv_bad(w, o, "nested large batch");
    default:
        srv_bad(w, o, "unknown item");
    }
}

static void srv_item_done(osc_item_st *st)
{
    if (st->dt) {
        core_dt_destroy(st->dt);
        free(st->dt);
    }
    free(st->tmp);
    free(st->discard);
    memset(st, 0, sizeof *st);
}

static void srv_check_header(osc_win *w, int o, const uint8_t *buf, size_t len)
{
    osc_am_hdr h;
    if (len < sizeof h)
        srv_bad(w, o, "short batch");
    memcpy(&h, buf, sizeof h);
    if (h.magic != OSC_AM_MAGIC || h.version != OSC_AM_VERSION || h.bytes != len)
        srv_bad(w, o, "bad batch header");
}

static void srv_park(osc_win *w, int o, const uint8_t *buf, size_t len, size_t off, int left,
                     const osc_item_st *st, int front)
{
    osc_rem *r = util_calloc(1, sizeof *r);
    r->len = len - off;
    r->buf = util_malloc(r->len + 1);
    memcpy(r->buf, buf + off, r->len);
    r->off = 0;
    r->left = left;
    r->st = *st;
    struct osc_am_in *in = &w->srv->in[o];
    if (front) {
        r->qn.next = in->rem.head.next;
        r->qn.prev = &in->rem.head;
        in->rem.head.next->prev = &r->qn;
        in->rem.head.next = &r->qn;
    } else {
        util_queue_push(&in->rem, &r->qn);
    }
}

/* run items of a batch from off; returns the offset where it stopped (len if all done) */
static size_t srv_run(osc_win *w, int o, uint8_t *buf, size_t len, size_t off, int *left,
                      osc_item_st *st, int *large)
{
    while (*left > 0) {
        if (len - off < sizeof(osc_am_item))
            srv_bad(w, o, "truncated item");
        osc_am_item it;
        memcpy(&it, buf + off, sizeof it);
        if (it.len < sizeof it || it.len > len - off || (it.len & 7) || it.kind == 0 ||
            it.kind > OSC_AM_KIND_MAX)
            srv_bad(w, o, "bad item length or kind");
        if (it.kind == OSC_AM_LARGE) {
            /* the big batch comes as data: receive it, then run it before the rest */
            if (!st->wait && st->stage == 0) {
                if (it.bytes < sizeof(osc_am_hdr) || it.bytes > ((uint64_t)1 << 36))
                    srv_bad(w, o, "bad large batch size");
                st->tmp = util_malloc((size_t)it.bytes);
                st->stage = 1;
                if (core_irecv(st->tmp, (size_t)it.bytes, am_byte(), w->peers[o].lpid, o,
                               it.data_tag, w->comm->ctx, &st->wait) != UTIL_OK)
                    util_die("RMA: cannot receive a batch from rank %d", o);
            }
            if (!st->wait->complete)
                return off;
            mpii_req_release(st->wait);
            st->wait = NULL;
            *large = 1;
            return off; /* the caller splices the received batch in */
        }
        /* items reference memory inside the batch: keep them aligned */
        osc_am_item *ip = (osc_am_item *)(buf + off);
        if (((uintptr_t)ip & 7) != 0)
            srv_bad(w, o, "misaligned item");
        if (srv_item(w, o, ip, it.len, st) == SRV_WAIT)
            return off;
        srv_item_done(st);
        off += it.len;
        (*left)--;
    }
    return off;
}

/* a batch received from origin o: run it, park what has to wait */
static void srv_batch(osc_win *w, int o, uint8_t *buf, size_t len)
{
    srv_check_header(w, o, buf, len);
    osc_am_hdr h;
    memcpy(&h, buf, sizeof h);
    struct osc_am_in *in = &w->srv->in[o];
    osc_item_st st;
    memset(&st, 0, sizeof st);
    if (!util_queue_empty(&in->rem)) { /* behind parked items of the same origin */
        srv_park(w, o, buf, len, sizeof h, h.nitems, &st, 0);
        return;
    }
    int left = h.nitems, large = 0;
    size_t off = srv_run(w, o, buf, len, sizeof h, &left, &st, &large);
    if (left == 0)
        return;
    if (large) {
        /* the rest of this batch after the LARGE item, then the large batch in front */
        osc_am_item it;
        memcpy(&it, buf + off, sizeof it);
        uint8_t *big = st.tmp;
        size_t blen = (size_t)it.bytes;
        st.tmp = NULL;
        st.stage = 0;
        if (left > 1) {
            osc_item_st none;
            memset(&none, 0, sizeof none);
            srv_park(w, o, buf, len, off + it.len, left - 1, &none, 0);
        }
        srv_check_header(w, o, big, blen);
        osc_am_hdr bh;
        memcpy(&bh, big, sizeof bh);
        osc_item_st none;
        memset(&none, 0, sizeof none);
        srv_park(w, o, big, blen, sizeof bh, bh.nitems, &none, 1);
        free(big);
        return;
    }
    srv_park(w, o, buf, len, off, left, &st, 0);
}

/* resume the parked batches of origin o */
static int srv_resume(osc_win *w, int o)
{
    struct osc_am_in *in = &w->srv->in[o];
    int ev = 0;
    util_qnode *n;
    while ((n = util_queue_first(&in->rem))) {
        osc_rem *r = UTIL_CONTAINER(n, osc_rem, qn);
        int large = 0;
        int before = r->left;
        r->off = srv_run(w, o, r->buf, r->len, r->off, &r->left, &r->st, &large);
        ev += before - r->left;
        if (large) {
            osc_am_item it;
            memcpy(&it, r->buf + r->off, sizeof it);
            uint8_t *big = r->st.tmp;
            size_t blen = (size_t)it.bytes;
            r->st.tmp = NULL;
            r->st.stage = 0;
            r->off += it.len;
            r->left--;
            srv_check_header(w, o, big, blen);
            osc_am_hdr bh;
            memcpy(&bh, big, sizeof bh);
            osc_item_st none;
            memset(&none, 0, sizeof none);
            srv_park(w, o, big, blen, sizeof bh, bh.nitems, &none, 1);
            free(big);
            if (r->left == 0) {
                util_queue_remove(&r->qn);
                free(r->buf);
                free(r);
            }
            ev++;
            continue;
        }
        if (r->left > 0)
            break; /* still waiting */
        util_queue_remove(&r->qn);
        free(r->buf);
        free(r);
    }
    return ev;
}

static int srv_poll(osc_win *w)
{
    osc_srv *s = w->srv;
    int ev = 0;
    while (s->rx->complete) {
        core_req *r = s->rx;
        if (r->status.error != 0 || r->status.source < 0 || r->status.source >= w->size)
            util_die("RMA: a request to %s could not be received (error %d)", osc_win_label(w),
                     r->status.error);
        int o = r->status.source;
        size_t len = (size_t)r->status.count;
        core_req_free(r);
        s->rx = NULL;
        srv_batch(w, o, s->rxbuf, len);
        srv_post_rx(w);
        ev++;
    }
    for (int o = 0; o < w->size; o++)
        if (!util_queue_empty(&s->in[o].rem))
            ev += srv_resume(w, o);
    util_qnode *n = s->sends.head.next;
    while (n != &s->sends.head) {
        util_qnode *next = n->next;
        osc_pend *p = UTIL_CONTAINER(n, osc_pend, qn);
        if (p->r->complete) {
            pend_free(p);
            ev++;
        }
        n = next;
    }
    return ev;
}

void osc_am_dump(osc_win *w)
{
    for (int t = 0; t < w->size; t++) {
        osc_am_out *o = w->peers[t].out;
        if (o && (o->nitems || o->inflight || o->issued))
            util_log(
                "    to rank %d: %d item(s) not sent, %d request(s) in flight, %d operation(s) "
                "not yet flushed%s",
                t, o->nitems, o->inflight, o->issued, o->lock_sent ? ", lock requested" : "");
    }
    for (int o = 0; w->srv && o < w->size; o++) {
        struct osc_am_in *in = &w->srv->in[o];
        int n = 0;
        for (util_qnode *q = in->rem.head.next; q != &in->rem.head; q = q->next)
            n++;
        if (n || in->lock)
            util_log("    from rank %d: %d parked batch part(s)%s%s", o, n,
                     in->lock ? ", holds a lock on my window" : "",
                     n ? " (waiting for a lock, data or a reply to go out)" : "");
    }
}

static int osc_am_poll(void)
{
    int ev = 0;
    util_queue *l = osc_win_list();
    for (util_qnode *n = l->head.next; n != &l->head; n = n->next) {
        osc_win *w = UTIL_CONTAINER(n, osc_win, qn);
        if (w->srv)
            ev += srv_poll(w);
        if (!util_queue_empty(&w->pend))
            ev += am_pend_poll(w);
    }
    return ev;
}
