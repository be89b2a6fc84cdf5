/* MPI-level point-to-point internals shared by the pt2pt bindings and the
 * chapters that make requests of their own (collectives, generalized requests). */
#ifndef DCFA_MPI_PT2PT_H
#define DCFA_MPI_PT2PT_H

#include "mpi/mpii.h"
#include "core/core.h"

/* The kinds of request src/mpi makes and completes itself (core's own are CORE_REQ_SEND and
 * CORE_REQ_RECV); their state is r->u.other.state. */
enum mpii_req_kind {
    MPII_REQ_PERSIST = CORE_REQ_UPPER, /* persistent: an mpii_persist */
    MPII_REQ_GREQ,                     /* generalized request: an mpii_greq (compound.c) */
    MPII_REQ_COLL,                     /* MPI_Isendrecv's: an mpii_compound (compound.c) */
    MPII_REQ_DONE,                     /* born complete (MPI_PROC_NULL's operations) */
    MPII_REQ_SCHED,                    /* a collective schedule's: its coll_sched */
};

/* A persistent request's operation: what MPI_Start starts */
typedef struct mpii_persist {
    core_req *active; /* the request of the current start, NULL when inactive */
    int is_send;
    int mode; /* enum core_send_mode */
    const void *buf;
    MPI_Aint count;
    MPI_Datatype dt;
    int peer; /* rank */
    int tag;
    MPI_Comm comm;
    struct coll_sched *coll; /* persistent collective: its schedule (then the rest is unused) */
} mpii_persist;
static inline mpii_persist *mpii_persist_of(const core_req *r) { return r->u.other.state; }
/* a persistent request (MPII_REQ_PERSIST) with its operation zeroed; its errors go to comm */
core_req *mpii_persist_new(MPI_Comm comm);

/* MPI_DATATYPE_NULL with count 0 stands for a message of no data (an extension: MPICH takes
 * it in every send, receive and partitioned init, and its test suite sends that way); any
 * other use of it stays MPI_ERR_TYPE. The bindings pass their datatype through this. */
static inline MPI_Datatype mpii_pt2pt_type(MPI_Datatype dt, MPI_Aint count)
{
    return dt == MPI_DATATYPE_NULL && count == 0 ? MPI_BYTE : dt;
}

int mpii_start_send(const void *buf, MPI_Aint count, MPI_Datatype dt, int dest, int tag,
                    mpii_comm *c, int coll, int mode, core_req **out);
int mpii_start_recv(void *buf, MPI_Aint count, MPI_Datatype dt, int src, int tag, mpii_comm *c,
                    int coll, core_req **out);
core_req *mpii_req_null_op(mpii_comm *c);   /* a complete request: MPI_PROC_NULL's operations */

/* bsend.c: buffered mode. A buffer is attached to a slot: the process's
 * (mpii_bbuf_process()), a communicator's (&c->bbuf) or a session's
 * (mpii_session_bbuf()); a buffered send uses its communicator's, else its
 * session's, else the process's. */
int mpii_bsend_start(const void *buf, MPI_Aint count, MPI_Datatype dt, int dest, int tag,
                     mpii_comm *c, core_req **out);
mpii_bbuf **mpii_bbuf_process(void);
/* buf may be MPI_BUFFER_AUTOMATIC; MPI_ERR_BUFFER if the slot has one already */
int mpii_bbuf_attach(mpii_bbuf **slot, void *buf, size_t size);
/* flushes, then empties the slot; MPI_ERR_BUFFER if it is empty */
int mpii_bbuf_detach(mpii_bbuf **slot, void **buf, size_t *size);
void mpii_bbuf_drop(mpii_bbuf **slot);        /* detach if attached (object teardown) */
void mpii_bbuf_flush(mpii_bbuf *bb);          /* waits until no send of bb is in flight */
int mpii_bbuf_iflush(mpii_bbuf *bb, core_req **out); /* a request completing then */

/* Ranks and tags reach core as they are; a status comes back as core's (core.h) and is
 * converted here. */
_Static_assert(CORE_ANY_SOURCE == MPI_ANY_SOURCE && CORE_ANY_TAG == MPI_ANY_TAG,
               "core's wildcards are MPI's");

/* the MPI error class of a finished request: core reports util.h statuses (< 0), the
 * requests src/mpi completes itself carry their class */
static inline int mpii_req_error(const core_req *r)
{
    int e = r->status.error;
    if (__builtin_expect(e >= 0, 1))
        return e;
    if (e == UTIL_EUNREACH) { /* with its own text (core_req_failure_text) */
        mpii_cause("%s", core_req_failure_text(r));
        return MPI_ERR_OTHER;
    }
    return mpii_errclass(e);
}

/* core's status as an MPI_Status; MPI_ERROR is left as it is (only the calls completing many
 * requests set it) */
static inline void mpii_status_of(const core_status *cs, MPI_Status *st)
{
    st->MPI_SOURCE = cs->source;
    st->MPI_TAG = cs->tag;
    st->dcfa_cancelled = cs->cancelled;
    st->dcfa_count = cs->count;
}

/* a derived datatype lives as long as the operations that use it */
static inline void mpii_hold_dtype(core_req *r, mpii_dtype *t)
{
    if (!t->predefined) {
        mpii_dtype_ref(t);
        r->up.ref = t;
    }
}

/* mpii_start_send/recv with the datatype already looked up (the bindings, which checked it;
 * inline: the small-message path) */
static inline int mpii_start_send_t(const void *buf, MPI_Aint count, mpii_dtype *t, int dest,
                                    int tag, mpii_comm *c, int coll, int mode, core_req **out)
{
    if (dest == MPI_PROC_NULL) {
        *out = mpii_req_null_op(c);
        return MPI_SUCCESS;
    }
    if (mode == CORE_SEND_BUFFERED)
        return mpii_bsend_start(buf, count, t->handle, dest, tag, c, out);
    int rc = core_isend(buf, (size_t)count, &t->dt, mpii_comm_peer_lpid(c, dest), c->rank, tag,
                        c->ctx + (coll ? 1u : 0u), mode, out);
    if (rc != UTIL_OK)
        return mpii_errclass(rc);
    (*out)->up.obj = c->handle;
    mpii_hold_dtype(*out, t);
    return MPI_SUCCESS;
}

static inline int mpii_start_recv_t(void *buf, MPI_Aint count, mpii_dtype *t, int src, int tag,
                                    mpii_comm *c, int coll, core_req **out)
{
    if (src == MPI_PROC_NULL) {
        *out = mpii_req_null_op(c);
        return MPI_SUCCESS;
    }
    int lpid = src == MPI_ANY_SOURCE ? -1 : mpii_comm_peer_lpid(c, src);
    int rc = core_irecv(buf, (size_t)count, &t->dt, lpid, src, tag, c->ctx + (coll ? 1u : 0u), out);
    if (rc != UTIL_OK)
        return mpii_errclass(rc);
    (*out)->up.obj = c->handle;
    mpii_hold_dtype(*out, t);
    return MPI_SUCCESS;
}

/* NULL if not a live request */
static inline core_req *mpii_req_get(MPI_Request h)
{
    if (MPII_HANDLE_KIND(h) != MPII_KIND_REQUEST)
        return NULL;
    return core_req_get(MPII_HANDLE_INDEX(h));
}
int mpii_req_is_done_other(core_req *r);     /* mpii_req_is_done of the other kinds */
/* a point-to-point operation is done when complete; the other kinds ask their owners */
static inline int mpii_req_is_done(core_req *r)
{
    if (r->kind == CORE_REQ_SEND || r->kind == CORE_REQ_RECV)
        return r->complete;
    return mpii_req_is_done_other(r);
}
/* finish r, the request behind handle *h, once done: status out, freed (or made inactive), *h
 * updated; returns the operation's error class */
int mpii_req_finish(core_req *r, MPI_Request *h, MPI_Status *st);
int mpii_req_inactive(MPI_Request h);        /* null or inactive persistent */
/* the request behind h if it is active: NULL for MPI_REQUEST_NULL, an unknown handle and an
 * inactive persistent request (one lookup for the completion calls' whole work) */
static inline core_req *mpii_req_active_of(MPI_Request h)
{
    core_req *r = mpii_req_get(h);
    return r && !(r->kind == MPII_REQ_PERSIST && !mpii_persist_of(r)->active) ? r : NULL;
}
void mpii_req_wait_slow(core_req *r);
/* progress until r is done, yielding when idle */
static inline void mpii_req_wait_one(core_req *r)
{
    if (!mpii_req_is_done(r))
        mpii_req_wait_slow(r);
}
void mpii_req_release(core_req *r);          /* drops the datatype reference and frees */
void mpii_req_detach(core_req *r);           /* freed by the library once complete */
/* completion of MPII_REQ_GREQ / MPII_REQ_COLL requests, provided by their owners */
int mpii_req_finish_other(core_req *r, MPI_Status *st);
void mpii_progress(void);
/* one turn of a wait loop: progress, backing off while nothing moves */
static inline void mpii_progress_wait(util_backoff *b)
{
    if (core_progress() > 0)
        util_backoff_reset(b);
    else
        util_backoff_wait(b);
}

/* ---- the operations the bindings call, with checked arguments; each returns an MPI error
 * class (inline: the small-message path) ---- */

/* MPI_Send and its modes: a contiguous message that fits one eager packet goes out at once
 * and no request is made (core_send_eager_now); any other waits on one */
static inline __attribute__((always_inline)) int mpii_send_t(const void *buf, MPI_Aint count,
                                                             mpii_dtype *t, int dest, int tag,
                                                             mpii_comm *c, int mode)
{
    if ((mode == CORE_SEND_STD || mode == CORE_SEND_READY) && t->dt.contig &&
        dest != MPI_PROC_NULL &&
        core_send_eager_now(mpii_buf_at(buf, t->dt.true_lb), (size_t)count * t->dt.size,
                            mpii_comm_peer_lpid(c, dest), c->rank, tag, c->ctx) == UTIL_OK)
        return MPI_SUCCESS;
    core_req *r;
    int rc = mpii_start_send_t(buf, count, t, dest, tag, c, 0, mode, &r);
    if (rc != MPI_SUCCESS)
        return rc;
    mpii_req_wait_one(r);
    rc = mpii_req_error(r);
    mpii_req_release(r);
    return rc;
}

/* MPI_Recv */
static inline int mpii_recv_t(void *buf, MPI_Aint count, mpii_dtype *t, int src, int tag,
                              mpii_comm *c, MPI_Status *st)
{
    core_req *r;
    int rc = mpii_start_recv_t(buf, count, t, src, tag, c, 0, &r);
    if (rc != MPI_SUCCESS)
        return rc;
    mpii_req_wait_one(r);
    MPI_Request h = MPII_HANDLE(MPII_KIND_REQUEST, r->id);
    return mpii_req_finish(r, &h, st);
}

/* MPI_Sendrecv, MPI_Sendrecv_replace (the message sent from a packed copy): the receive's
 * status and error, as MPI_Recv's (mpii_sendrecv, the library's own, also reports the send's) */
int mpii_sendrecv_user(const void *sbuf, MPI_Aint scount, MPI_Datatype sdt, int dest, int stag,
                       void *rbuf, MPI_Aint rcount, MPI_Datatype rdt, int src, int rtag,
                       mpii_comm *c, MPI_Status *st);
int mpii_sendrecv_replace(void *buf, MPI_Aint count, MPI_Datatype dt, int dest, int stag, int src,
                          int rtag, mpii_comm *c, MPI_Status *st);
int mpii_isendrecv_replace(void *buf, MPI_Aint count, MPI_Datatype dt, int dest, int stag, int src,
                           int rtag, mpii_comm *c, core_req **out);
/* MPI_Start of a persistent point-to-point or collective request (not a partitioned one:
 * mpii_part_start); c is the communicator of a point-to-point one */
int mpii_persist_start(core_req *r, mpii_comm *c);
/* MPI_Cancel of a point-to-point operation (of a persistent request: its active one); too
 * late is no error */
void mpii_req_cancel(core_req *r);
MPI_Message mpii_msg_put(core_msg *m);
/* MPI_Iprobe (msg NULL) and MPI_Improbe (*msg the matched message, or MPI_MESSAGE_NULL) */
static inline void mpii_iprobe(int src, int tag, const mpii_comm *c, int *flag, MPI_Status *st,
                               MPI_Message *msg)
{
    core_msg *m = NULL;
    core_status cs;
    core_iprobe(src, tag, c->ctx, flag, &cs, msg ? &m : NULL);
    if (msg)
        *msg = *flag ? mpii_msg_put(m) : MPI_MESSAGE_NULL; /* undefined when nothing matched */
    if (*flag && st != MPI_STATUS_IGNORE)
        mpii_status_of(&cs, st);
}
/* MPI_Imrecv of a matched message; its errors go to MPI_COMM_WORLD's handler */
void mpii_imrecv(void *buf, MPI_Aint count, mpii_dtype *t, core_msg *m, core_req **out);
/* MPI_Imrecv of MPI_MESSAGE_NO_PROC: a complete request, as from MPI_PROC_NULL */
core_req *mpii_req_no_proc(void);

/* compound.c */
int mpii_isendrecv(const void *sbuf, MPI_Aint scount, MPI_Datatype sdt, int dest, int stag,
                   void *rbuf, MPI_Aint rcount, MPI_Datatype rdt, int src, int rtag, mpii_comm *c,
                   void *tmp, core_req **out);
int mpii_greq_start(MPI_Grequest_query_function *query, MPI_Grequest_free_function *free_fn,
                    MPI_Grequest_cancel_function *cancel, void *extra, core_req **out);
int mpii_greq_cancel(core_req *r);
void mpii_greq_complete(core_req *r); /* MPI_Grequest_complete */

/* part.c: partitioned requests are MPII_REQ_PERSIST with owner an mpii_part */
typedef struct mpii_part mpii_part;
int mpii_part_init(int is_send, void *buf, int partitions, MPI_Count count, MPI_Datatype dt,
                   int peer, int tag, mpii_comm *c, core_req **out);
int mpii_part_start(core_req *r);          /* MPI_Start: a new round */
void mpii_part_poll(core_req *r);          /* moves the round on; completes its request */
int mpii_part_is_send(core_req *r);
int mpii_part_partitions(core_req *r);
int mpii_part_ready(core_req *r, int p);   /* MPI_ERR_ARG if p was ready already */
int mpii_part_arrived(core_req *r, int p); /* 1 once every byte of partition p is there */
void mpii_part_free(mpii_part *pt);
void mpii_part_finalize(void);

core_msg *mpii_msg_take(MPI_Message h);

#endif
