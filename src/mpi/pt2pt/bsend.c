/* Buffered mode (MPI 4.1 section 3.6): buffers attached to the process
 * (MPI_Buffer_attach), to a communicator or to a session. A buffered send
 * copies the packed message into the buffer of its communicator, else of the
 * communicator's session, else of the process, and starts a standard send
 * from that copy, which nobody waits for: when it completes, its callback
 * gives the space back and, once nothing of the buffer is in flight any
 * more, completes the MPI_*iflush* requests waiting for it. An
 * MPI_BUFFER_AUTOMATIC buffer copies each message to memory of its own. */
#include "mpi/mpii.h"
#include "mpi/pt2pt/pt2pt.h"
#include "core/core.h"

#include <stdlib.h>
#include <string.h>

struct mpii_bbuf {
    char *buf;              /* the user's memory; NULL when automatic */
    size_t size;
    int automatic;
    struct mpii_bseg {
        size_t off, len;
    } *used;                /* the parts held by sends in flight, sorted by offset */
    int nused, capused;
    int pending;            /* buffered sends in flight */
    core_req **flush;       /* iflush requests completed when pending drops to 0 */
    int nflush, capflush;
};

/* one buffered send in flight, hung on its core request (owner) */
typedef struct bsend_copy {
    mpii_bbuf *bb;
    size_t off;             /* of its part of bb->buf */
    void *own;              /* automatic: its own copy */
} bsend_copy;

static mpii_bbuf *mpii_bbuf_proc;   /* MPI_Buffer_attach */

mpii_bbuf **mpii_bbuf_process(void) { return &mpii_bbuf_proc; }

int mpii_bbuf_attach(mpii_bbuf **slot, void *buf, size_t size)
{
    if (*slot)
        return MPI_ERR_BUFFER;
    mpii_bbuf *bb = util_calloc(1, sizeof *bb);
    if (buf == MPI_BUFFER_AUTOMATIC) {
        bb->automatic = 1;
    } else {
        bb->buf = buf;
        bb->size = size;
    }
    *slot = bb;
    return MPI_SUCCESS;
}

static void bbuf_release(mpii_bbuf *bb, size_t off)
{
    for (int i = 0; i < bb->nused; i++) {
        if (bb->used[i].off == off) {
            memmove(&bb->used[i], &bb->used[i + 1], (size_t)(bb->nused - i - 1) * sizeof *bb->used);
            bb->nused--;
            return;
        }
    }
}

/* first fit; each message takes MPI_BSEND_OVERHEAD bytes more than its data */
static int bbuf_alloc(mpii_bbuf *bb, size_t len, size_t *off)
{
    size_t need = len + MPI_BSEND_OVERHEAD, at = 0;
    for (int i = 0; i <= bb->nused; i++) {
        size_t end = i < bb->nused ? bb->used[i].off : bb->size;
        if (end >= at && end - at >= need) {
            if (bb->nused == bb->capused) {
                bb->capused = bb->capused ? 2 * bb->capused : 16;
                bb->used = util_realloc(bb->used, (size_t)bb->capused * sizeof *bb->used);
            }
            memmove(&bb->used[i + 1], &bb->used[i], (size_t)(bb->nused - i) * sizeof *bb->used);
            bb->used[i].off = at;
            bb->used[i].len = need;
            bb->nused++;
            *off = at;
            return 1;
        }
        if (i < bb->nused)
            at = bb->used[i].off + bb->used[i].len;
    }
    return 0;
}

/* Room for a buffered message. When the buffer is full of messages already
 * sent, the completions that arrive within about a millisecond of progress
 * free it: a DONE may still sit in the ring while the peer has long received
 * the data (after an MPI_Barrier run through the node segment, say: MPICH
 * threads/pt2pt/mt_bsendrecv_pers_huge). */
static int bbuf_room(mpii_bbuf *bb, size_t len, size_t *off)
{
    if (bbuf_alloc(bb, len, off))
        return 1;
    uint64_t until = util_now_ns() + 1000000u;
    util_backoff b;
    util_backoff_reset(&b);
    while (bb->pending > 0 && util_now_ns() < until) {
        if (core_progress() > 0)
            util_backoff_reset(&b);
        else
            util_backoff_wait(&b);
        if (bbuf_alloc(bb, len, off))
            return 1;
    }
    return 0;
}

static void bbuf_flushed(mpii_bbuf *bb)
{
    for (int i = 0; i < bb->nflush; i++)
        core_req_complete(bb->flush[i]);
    bb->nflush = 0;
}

/* on_complete of a buffered send's own request */
static void bsend_done(core_req *r)
{
    bsend_copy *cp = r->owner;
    mpii_bbuf *bb = cp->bb;
    r->owner = NULL;
    if (cp->own)
        free(cp->own);
    else
        bbuf_release(bb, cp->off);
    free(cp);
    if (--bb->pending == 0)
        bbuf_flushed(bb);
}

static mpii_bbuf *bbuf_of(const mpii_comm *c)
{
    if (c->bbuf)
        return c->bbuf;
    if (c->session) {
        mpii_bbuf **s = mpii_session_bbuf(c->session);
        if (s && *s)
            return *s;
    }
    return mpii_bbuf_proc;
}

int mpii_bsend_start(const void *buf, MPI_Aint count, MPI_Datatype dt, int dest, int tag,
                     mpii_comm *c, core_req **out)
{
    mpii_dtype *t = mpii_dtype_get(dt);
    size_t bytes = (size_t)count * t->dt.size, off = 0;
    mpii_bbuf *bb = bbuf_of(c);
    if (!bb)
        return MPI_ERR_BUFFER;
    bsend_copy *cp = util_calloc(1, sizeof *cp);
    char *copy;
    if (bb->automatic) {
        cp->own = util_malloc(bytes ? bytes : 1);
        copy = cp->own;
    } else if (bbuf_room(bb, bytes, &off)) {
        copy = bb->buf + off;
    } else {
        free(cp);
        return MPI_ERR_BUFFER;
    }
    cp->bb = bb;
    cp->off = off;
    if (bytes)
        core_dt_pack(buf, (size_t)count, &t->dt, 0, copy, bytes);
    mpii_dtype *byte = mpii_dtype_get(MPI_BYTE);
    core_req *r;
    int rc = core_isend(copy, bytes, &byte->dt, mpii_comm_peer_lpid(c, dest), c->rank, tag, c->ctx,
                        CORE_SEND_STD, &r);
    if (rc != UTIL_OK) {
        if (cp->own)
            free(cp->own);
        else
            bbuf_release(bb, off);
        free(cp);
        return mpii_errclass(rc);
    }
    r->up.obj = c->handle;
    bb->pending++;
    r->owner = cp;
    r->on_complete = bsend_done;
    if (r->complete)
        bsend_done(r);
    mpii_req_detach(r);
    /* the user's request is complete: the data is in the attached buffer */
    core_req *u = core_req_alloc(MPII_REQ_DONE);
    u->status.source = MPI_UNDEFINED;
    u->status.tag = MPI_UNDEFINED;
    u->up.obj = c->handle;
    u->complete = 1;
    *out = u;
    return MPI_SUCCESS;
}

void mpii_bbuf_flush(mpii_bbuf *bb)
{
    if (!bb)
        return;
    util_backoff b;
    util_backoff_reset(&b);
    while (bb->pending > 0) {
        if (core_progress() > 0)
            util_backoff_reset(&b);
        else
            util_backoff_wait(&b);
    }
}

int mpii_bbuf_iflush(mpii_bbuf *bb, core_req **out)
{
    core_req *r;
    int rc = mpii_greq_start(NULL, NULL, NULL, NULL, &r);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!bb || bb->pending == 0) {
        core_req_complete(r);
    } else {
        if (bb->nflush == bb->capflush) {
            bb->capflush = bb->capflush ? 2 * bb->capflush : 4;
            bb->flush = util_realloc(bb->flush, (size_t)bb->capflush * sizeof *bb->flush);
        }
        bb->flush[bb->nflush++] = r;
    }
    *out = r;
    return MPI_SUCCESS;
}

int mpii_bbuf_detach(mpii_bbuf **slot, void **buf, size_t *size)
{
    mpii_bbuf *bb = *slot;
    if (!bb)
        return MPI_ERR_BUFFER;
    mpii_bbuf_flush(bb);
    *buf = bb->automatic ? MPI_BUFFER_AUTOMATIC : bb->buf;
    *size = bb->size;
    *slot = NULL;
    /* an iflush still waiting cannot be: pending is 0, so all were completed */
    free(bb->used);
    free(bb->flush);
    free(bb);
    return MPI_SUCCESS;
}

void mpii_bbuf_drop(mpii_bbuf **slot)
{
    void *b;
    size_t s;
    if (*slot)
        (void)mpii_bbuf_detach(slot, &b, &s);
}
