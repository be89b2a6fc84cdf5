/* Collective schedules: rounds of local operations and messages (see sched.h).
 *
 * Ops are appended to one array; rounds are contiguous ranges of it
 * (round_end[k] is one past the last op of round k). A running schedule is on
 * the `running` list; the messages of its current round carry it as their
 * owner, and their completion callback (run inside core progress) only counts
 * down `pending` and, at zero, marks the schedule ready. Starting the next
 * round posts new messages, which core progress must not do from inside a
 * callback, so it happens in coll_sched_progress(), the poller that core
 * progress calls after its pass while any schedule runs. */
#include "mpi/coll/sched.h"
#include "mpi/op/op.h"
#include "mpi/pt2pt/pt2pt.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

enum { SCHED_SEND = 1, SCHED_RECV, SCHED_REDUCE, SCHED_COPY, SCHED_CALL, SCHED_POLL };

typedef struct sched_op {
    int kind;
    int peer;
    const void *sbuf;
    void *rbuf;
    MPI_Aint count, rcount;
    MPI_Datatype dt, rdt;
    MPI_Op op;
    mpii_comm *on;
    coll_sched_fn fn;       /* SCHED_CALL: fn(s, rbuf) */
} sched_op;

struct coll_sched {
    mpii_comm *comm;
    mpii_comm *dflt_on;     /* where messages with on == NULL go (coll_sched_set_on) */
    int tag;
    sched_op *ops;
    int nops, cap_ops;
    int *round_end;         /* closed rounds; the open round is ops[round_end[nrounds-1] .. nops) */
    int nrounds, cap_rounds;
    void **tmp;             /* scratch allocations */
    int ntmp, cap_tmp;
    mpii_dtype **dts;       /* derived datatypes referenced by ops */
    int ndts, cap_dts;
    MPI_Op *ops_held;       /* user operations referenced by ops */
    int nops_held, cap_ops_held;
    int persistent;
    int nonblocking;        /* made for a nonblocking or persistent call: the second tag space */
    int started;            /* has run: operations added now are added while running */
    int free_when_done;     /* freed (persistent request freed) while its request lives */
    int has_req;            /* a request of a start is out (not yet finished) */
    /* run state */
    int running;
    int round;              /* current round */
    int pending;            /* messages of the current round not yet complete */
    int ready;              /* pending reached 0: the round can be finished */
    int parked;             /* 1 + the op of a call that asked to be called again, or 0 */
    int err;                /* first error class */
    int broken;             /* a message could not be started (its peer cannot be reached):
                               the schedule ends with this round */
    core_req **msgs;        /* requests of the current round's messages */
    int nmsgs, cap_msgs;
    int npolls;             /* polls of the current round still false */
    core_req *req;          /* the request handed out, NULL when blocking */
    util_qnode qn;          /* in sched_running */
    MPI_Count count;        /* bytes its request's status reports (coll_sched_set_count) */
    const char *name;       /* the MPI call it was built for (coll_sched_set_name) */
};

static util_queue sched_running = {{&sched_running.head, &sched_running.head}};
static int sched_nrunning;

/* ---- building ---------------------------------------------------------------------- */

#define SCHED_GROW(arr, n, cap)                                                                    \
    do {                                                                                           \
        if ((n) == (cap)) {                                                                        \
            (cap) = (cap) ? 2 * (cap) : 8;                                                         \
            (arr) = util_realloc((arr), (size_t)(cap) * sizeof *(arr));                            \
        }                                                                                          \
    } while (0)

/* Blocking collectives take tags 0..2^29-1, nonblocking and persistent ones 2^29..2^30-1,
 * each from a sequence of its own (sched.h) */
#define SCHED_TAG_SPACE 0x1fffffffu
#define SCHED_TAG_NB    0x20000000u

/* the last schedule freed, kept for the next (a small blocking collective spent as much in
 * malloc and free as in its work); shared by the threads, reachable (no leak) at exit */
static _Atomic(coll_sched *) sched_spare;

coll_sched *coll_sched_create_kind(mpii_comm *c, int nonblocking)
{
    coll_sched *s = atomic_exchange_explicit(&sched_spare, NULL, memory_order_acquire);
    if (s) {
        memset(s, 0, sizeof *s);
    } else {
        s = util_calloc(1, sizeof *s);
    }
    s->comm = c;
    s->dflt_on = c;
    s->nonblocking = nonblocking;
    /* an inter-communicator's schedules post on its local_comm too: one tag
     * sequence for both, or a schedule of each could share a tag there */
    mpii_comm *seq = c->is_inter ? c->local_comm : c;
    if (nonblocking)
        s->tag = (int)(SCHED_TAG_NB | (seq->coll_nb_tag++ & SCHED_TAG_SPACE));
    else
        s->tag = (int)(seq->coll_tag++ & SCHED_TAG_SPACE);
    s->qn.next = s->qn.prev = &s->qn;
    return s;
}

coll_sched *coll_sched_create(mpii_comm *c) { return coll_sched_create_kind(c, 0); }

int coll_sched_is_nonblocking(const coll_sched *s) { return s->nonblocking; }

mpii_comm *coll_sched_comm(const coll_sched *s) { return s->comm; }

mpii_comm *coll_sched_set_on(coll_sched *s, mpii_comm *on)
{
    mpii_comm *old = s->dflt_on;
    s->dflt_on = on ? on : s->comm;
    return old;
}

void *coll_sched_alloc(coll_sched *s, size_t bytes)
{
    SCHED_GROW(s->tmp, s->ntmp, s->cap_tmp);
    void *p = util_malloc(bytes ? bytes : 1);
    s->tmp[s->ntmp++] = p;
    return p;
}

void *coll_sched_alloc_typed(coll_sched *s, MPI_Aint count, MPI_Datatype dt)
{
    const core_dt *t = &mpii_dtype_get(dt)->dt;
    ptrdiff_t span = count > 0 ? (count - 1) * t->extent : 0;
    ptrdiff_t lo = t->true_lb + (span < 0 ? span : 0);
    ptrdiff_t hi = t->true_lb + t->true_extent + (span > 0 ? span : 0);
    char *base = coll_sched_alloc(s, (size_t)(hi - lo));
    return (void *)((uintptr_t)base - (uintptr_t)lo);
}

void coll_sched_hold_op(coll_sched *s, MPI_Op op)
{
    if (mpii_op_is_predefined(op))
        return;
    for (int i = 0; i < s->nops_held; i++)
        if (s->ops_held[i] == op)
            return;
    SCHED_GROW(s->ops_held, s->nops_held, s->cap_ops_held);
    mpii_op_ref(op);
    s->ops_held[s->nops_held++] = op;
}

void coll_sched_hold_type(coll_sched *s, MPI_Datatype dt)
{
    mpii_dtype *t = mpii_dtype_get(dt);
    if (!t || t->predefined)
        return;
    for (int i = 0; i < s->ndts; i++)
        if (s->dts[i] == t)
            return;
    SCHED_GROW(s->dts, s->ndts, s->cap_dts);
    mpii_dtype_ref(t);
    s->dts[s->ndts++] = t;
}

static sched_op *sched_add(coll_sched *s, int kind)
{
    SCHED_GROW(s->ops, s->nops, s->cap_ops);
    sched_op *o = &s->ops[s->nops++];
    memset(o, 0, sizeof *o);
    o->kind = kind;
    return o;
}

int coll_sched_send(coll_sched *s, const void *buf, MPI_Aint count, MPI_Datatype dt, int peer,
                    mpii_comm *on)
{
    if (peer == MPI_PROC_NULL)
        return MPI_SUCCESS;
    sched_op *o = sched_add(s, SCHED_SEND);
    o->sbuf = buf;
    o->count = count;
    o->dt = dt;
    o->peer = peer;
    o->on = on ? on : s->dflt_on;
    coll_sched_hold_type(s, dt);
    return MPI_SUCCESS;
}

int coll_sched_recv(coll_sched *s, void *buf, MPI_Aint count, MPI_Datatype dt, int peer,
                    mpii_comm *on)
{
    if (peer == MPI_PROC_NULL)
        return MPI_SUCCESS;
    sched_op *o = sched_add(s, SCHED_RECV);
    o->rbuf = buf;
    o->count = count;
    o->dt = dt;
    o->peer = peer;
    o->on = on ? on : s->dflt_on;
    coll_sched_hold_type(s, dt);
    return MPI_SUCCESS;
}

int coll_sched_reduce(coll_sched *s, const void *in, void *inout, MPI_Aint count, MPI_Datatype dt,
                      MPI_Op op)
{
    if (count == 0)
        return MPI_SUCCESS;
    sched_op *o = sched_add(s, SCHED_REDUCE);
    o->sbuf = in;
    o->rbuf = inout;
    o->count = count;
    o->dt = dt;
    o->op = op;
    coll_sched_hold_type(s, dt);
    coll_sched_hold_op(s, op);
    return MPI_SUCCESS;
}

int coll_sched_copy(coll_sched *s, const void *src, MPI_Aint scount, MPI_Datatype sdt, void *dst,
                    MPI_Aint rcount, MPI_Datatype rdt)
{
    sched_op *o = sched_add(s, SCHED_COPY);
    o->sbuf = src;
    o->count = scount;
    o->dt = sdt;
    o->rbuf = dst;
    o->rcount = rcount;
    o->rdt = rdt;
    coll_sched_hold_type(s, sdt);
    coll_sched_hold_type(s, rdt);
    return MPI_SUCCESS;
}

int coll_sched_call(coll_sched *s, coll_sched_fn fn, void *arg)
{
    sched_op *o = sched_add(s, SCHED_CALL);
    o->fn = fn;
    o->rbuf = arg;
    return MPI_SUCCESS;
}

int coll_sched_poll(coll_sched *s, coll_sched_fn test, void *arg)
{
    sched_op *o = sched_add(s, SCHED_POLL);
    o->fn = test;
    o->rbuf = arg;
    return MPI_SUCCESS;
}

void coll_sched_round(coll_sched *s)
{
    int begin = s->nrounds ? s->round_end[s->nrounds - 1] : 0;
    if (s->nops == begin)
        return;
    SCHED_GROW(s->round_end, s->nrounds, s->cap_rounds);
    s->round_end[s->nrounds++] = s->nops;
}

void coll_sched_set_persistent(coll_sched *s) { s->persistent = 1; }
int coll_sched_is_persistent(const coll_sched *s) { return s->persistent; }
int coll_sched_is_started(const coll_sched *s) { return s->started; }

int coll_sched_is_empty(const coll_sched *s) { return s->nops == 0 && s->nrounds == 0; }
void coll_sched_set_count(coll_sched *s, MPI_Count bytes) { s->count = bytes; }
void coll_sched_set_name(coll_sched *s, const char *fn) { s->name = fn; }

const char *coll_sched_req_name(const core_req *r)
{
    const coll_sched *s = r->kind == MPII_REQ_SCHED     ? r->u.other.state
                          : r->kind == MPII_REQ_PERSIST ? mpii_persist_of(r)->coll
                                                        : NULL;
    return s ? s->name : NULL;
}

static void sched_destroy(coll_sched *s)
{
    for (int i = 0; i < s->nops_held; i++)
        mpii_op_release(s->ops_held[i]);
    free(s->ops_held);
    for (int i = 0; i < s->ntmp; i++)
        free(s->tmp[i]);
    for (int i = 0; i < s->ndts; i++)
        mpii_dtype_release(s->dts[i]);
    free(s->tmp);
    free(s->dts);
    free(s->ops);
    free(s->round_end);
    free(s->msgs);
    coll_sched *none = NULL;
    if (!atomic_compare_exchange_strong_explicit(&sched_spare, &none, s, memory_order_release,
                                                 memory_order_relaxed))
        free(s);
}

void coll_sched_free(coll_sched *s)
{
    if (s->running || s->has_req) {
        s->free_when_done = 1;
        return;
    }
    sched_destroy(s);
}

/* ---- local operations ---------------------------------------------------------------- */

static void *sched_at(void *buf, ptrdiff_t off) { return (void *)((uintptr_t)buf + (uintptr_t)off); }

/* typed copy between two buffers with the same type signature: every caller
 * copies a block whose two descriptions agree when the ranks' arguments do
 * (a rank's own block: its send count and type against its receive count and
 * type), so a size difference either way is a mismatch, as for a receive */
static int sched_copy(const sched_op *o)
{
    const core_dt *st = &mpii_dtype_get(o->dt)->dt, *rt = &mpii_dtype_get(o->rdt)->dt;
    size_t sbytes = (size_t)o->count * st->size, rbytes = (size_t)o->rcount * rt->size;
    if (sbytes != rbytes)
        return MPI_ERR_TRUNCATE;
    if (sbytes == 0 || (o->sbuf == o->rbuf && o->dt == o->rdt))
        return MPI_SUCCESS;
    if (st->contig && rt->contig) {
        memmove(sched_at(o->rbuf, rt->true_lb), mpii_buf_at(o->sbuf, st->true_lb), sbytes);
    } else if (rt->contig) {
        core_dt_pack(o->sbuf, (size_t)o->count, st, 0, sched_at(o->rbuf, rt->true_lb), sbytes);
    } else if (st->contig) {
        core_dt_unpack(o->rbuf, (size_t)o->rcount, rt, 0, mpii_buf_at(o->sbuf, st->true_lb),
                       sbytes);
    } else {
        /* both non-contiguous: through a bounded bounce buffer, piece by piece */
        char bounce[16384];
        for (size_t off = 0; off < sbytes; off += sizeof bounce) {
            size_t len = sbytes - off < sizeof bounce ? sbytes - off : sizeof bounce;
            core_dt_pack(o->sbuf, (size_t)o->count, st, off, bounce, len);
            core_dt_unpack(o->rbuf, (size_t)o->rcount, rt, off, bounce, len);
        }
    }
    return MPI_SUCCESS;
}

static void sched_seterr(coll_sched *s, int err)
{
    if (err != MPI_SUCCESS && s->err == MPI_SUCCESS)
        s->err = err;
}

/* ---- running ------------------------------------------------------------------------------- */

static void sched_msg_done(core_req *r)
{
    coll_sched *s = r->owner;
    if (--s->pending == 0)
        s->ready = 1;
}

/* run the local ops of the current round from op `from` on, then post its
 * messages (receives first); a call answering COLL_SCHED_AGAIN parks the
 * round there until coll_sched_progress calls it again */
static void sched_round_continue(coll_sched *s, int from)
{
    int begin = s->round ? s->round_end[s->round - 1] : 0, end = s->round_end[s->round];
    s->parked = 0;
    for (int i = from; i < end; i++) {
        /* by index: a call may add operations, moving the array */
        if (s->ops[i].kind == SCHED_CALL) {
            int rc = s->ops[i].fn(s, s->ops[i].rbuf);
            if (rc == COLL_SCHED_AGAIN) {
                s->parked = i + 1;
                return;
            }
            sched_seterr(s, rc);
        } else if (s->ops[i].kind == SCHED_REDUCE)
            sched_seterr(s, mpii_op_apply(s->ops[i].op, s->ops[i].sbuf, s->ops[i].rbuf,
                                          s->ops[i].count, s->ops[i].dt));
        else if (s->ops[i].kind == SCHED_COPY)
            sched_seterr(s, sched_copy(&s->ops[i]));
    }
    for (int pass = 0; pass < 2; pass++) {
        int kind = pass == 0 ? SCHED_RECV : SCHED_SEND;
        for (int i = begin; i < end; i++) {
            const sched_op *o = &s->ops[i];
            if (o->kind != kind)
                continue;
            core_req *r = NULL;
            int rc;
            if (kind == SCHED_RECV)
                rc = mpii_start_recv(o->rbuf, o->count, o->dt, o->peer, s->tag, o->on, 1, &r);
            else if (s->err == MPI_SUCCESS)
                rc = mpii_start_send(o->sbuf, o->count, o->dt, o->peer, s->tag, o->on, 1,
                                     CORE_SEND_STD, &r);
            else /* failed: an empty message instead of data this process may not have, so
                    a receive expecting data fails short (sched_round_end) and the error goes
                    down a tree to every rank below, which would otherwise hear nothing of it */
                rc = mpii_start_send(o->sbuf, 0, MPI_BYTE, o->peer, s->tag, o->on, 1, CORE_SEND_STD,
                                     &r);
            if (rc != MPI_SUCCESS) {
                sched_seterr(s, rc);
                s->broken = 1;
                continue;
            }
            SCHED_GROW(s->msgs, s->nmsgs, s->cap_msgs);
            s->msgs[s->nmsgs++] = r;
            if (!r->complete) {
                r->owner = s;
                r->on_complete = sched_msg_done;
                s->pending++;
            }
        }
    }
    s->npolls = 0;
    if (s->broken) {
        /* what this round waits for may never come (a peer that cannot be reached waits
         * for this process's message too, and each would wait for ever): the receives not
         * matched yet are withdrawn and the polls skipped, so the round ends (with the
         * sends under way) and the schedule completes with the error */
        for (int i = 0; i < s->nmsgs; i++)
            if (!s->msgs[i]->complete && s->msgs[i]->kind == CORE_REQ_RECV)
                (void)core_cancel_recv(s->msgs[i]);
        s->ready = s->pending == 0;
        return;
    }
    for (int i = begin; i < end; i++)
        if (s->ops[i].kind == SCHED_POLL && !s->ops[i].fn(s, s->ops[i].rbuf))
            s->npolls++;
    /* pending may have touched 0 while the messages were posted (a send to
     * my own process completes the receive posted before it at once): only
     * the count after posting says whether the round is done */
    if (s->npolls)
        s->pending++;   /* the polls count as one outstanding item */
    s->ready = s->pending == 0;
}

/* test the current round's polls that are still false */
static int sched_polls_test(coll_sched *s)
{
    int begin = s->round ? s->round_end[s->round - 1] : 0, end = s->round_end[s->round], left = 0;
    for (int i = begin; i < end; i++)
        if (s->ops[i].kind == SCHED_POLL && !s->ops[i].fn(s, s->ops[i].rbuf))
            left++;
    if (left == 0) {
        s->npolls = 0;
        if (--s->pending == 0)
            s->ready = 1;
        return 1;
    }
    return 0;
}

static void sched_round_start(coll_sched *s)
{
    s->nmsgs = 0;
    s->pending = 0;
    s->ready = 0;
    sched_round_continue(s, s->round ? s->round_end[s->round - 1] : 0);
}

/* the current round's messages are complete: collect their errors and free them. A receive
 * that got fewer bytes than it was posted for fails as one that got more would: no algorithm
 * here learns how much a receive got (every receive is posted for what its sender sends when
 * the ranks' counts and datatypes agree, as MPI requires of collectives), so a short one means
 * they do not, and what it left unwritten would be used as data (MPI_Bcast of 1 int at the root
 * and 10 elsewhere completed with 9 ints of garbage) */
static void sched_round_end(coll_sched *s)
{
    for (int i = 0; i < s->nmsgs; i++) {
        core_req *r = s->msgs[i];
        int err = mpii_req_error(r);
        if (err == MPI_SUCCESS && r->kind == CORE_REQ_RECV && !r->status.cancelled &&
            (uint64_t)r->status.count < (uint64_t)r->u.recv.capacity)
            err = MPI_ERR_TRUNCATE;
        sched_seterr(s, err);
        mpii_req_release(r);
    }
    s->nmsgs = 0;
}

static void sched_complete(coll_sched *s)
{
    s->running = 0;
    util_queue_remove(&s->qn);
    s->qn.next = s->qn.prev = &s->qn;
    sched_nrunning--;
    if (sched_nrunning == 0)
        core_set_poller(NULL);
    core_req *r = s->req;
    s->req = NULL;
    if (r) {
        r->status.source = MPI_ANY_SOURCE;
        r->status.tag = MPI_ANY_TAG;
        r->status.count = s->count;
        r->status.error = s->err;
        core_req_complete(r);
    }
}

/* move s on as far as it goes without waiting; 1 when it completed */
static int sched_advance(coll_sched *s)
{
    while (s->ready) {
        sched_round_end(s);
        coll_sched_round(s); /* operations a call added without closing their round */
        if (s->broken || ++s->round >= s->nrounds) {
            sched_complete(s);
            return 1;
        }
        sched_round_start(s);
    }
    return 0;
}

int coll_sched_running(void) { return sched_nrunning; }

int coll_sched_progress(void)
{
    int events = 0;
    util_qnode *n = sched_running.head.next;
    while (n != &sched_running.head) {
        util_qnode *next = n->next;
        coll_sched *s = UTIL_CONTAINER(n, coll_sched, qn);
        if (s->parked)
            sched_round_continue(s, s->parked - 1);
        if (s->npolls)
            events += sched_polls_test(s);
        if (s->ready) {
            events++;
            sched_advance(s);
        }
        n = next;
    }
    return events;
}

static void sched_run(coll_sched *s)
{
    s->started = 1;
    coll_sched_round(s);
    s->running = 1;
    s->round = 0;
    s->err = MPI_SUCCESS;
    s->broken = 0;
    s->count = 0;
    util_queue_push(&sched_running, &s->qn);
    if (sched_nrunning++ == 0)
        core_set_poller(coll_sched_progress);
    if (s->nrounds == 0) {
        sched_complete(s);
        return;
    }
    sched_round_start(s);
    sched_advance(s);
}

int coll_sched_wait(coll_sched *s)
{
    if (s->nops == 0) { /* nothing to run (a builder did its work at once, node_shm.c) */
        sched_destroy(s);
        return MPI_SUCCESS;
    }
    sched_run(s);
    if (s->running) {
        util_backoff b;
        util_backoff_reset(&b);
        while (s->running) {
            if (core_progress() > 0)
                util_backoff_reset(&b);
            else
                util_backoff_wait(&b);
        }
    }
    int err = s->err;
    sched_destroy(s);
    return err;
}

int coll_sched_start(coll_sched *s, core_req **out)
{
    core_req *r = core_req_alloc(MPII_REQ_SCHED);
    r->u.other.state = s;
    r->up.obj = s->comm->handle;
    s->req = r;
    s->has_req = 1;
    *out = r;
    sched_run(s);
    if (s->running)
        mpii_async_kick();
    return MPI_SUCCESS;
}

int coll_sched_req_finish(core_req *r, MPI_Status *st)
{
    coll_sched *s = r->u.other.state;
    int err = r->status.error;
    if (st && st != MPI_STATUS_IGNORE) {
        st->MPI_SOURCE = r->status.source;
        st->MPI_TAG = r->status.tag;
        st->dcfa_count = r->status.count;
        st->dcfa_cancelled = 0;
    }
    core_req_free(r);
    s->has_req = 0;
    if (!s->persistent || s->free_when_done)
        sched_destroy(s);
    return err;
}

int coll_sched_finish(coll_sched *s, int mode, MPI_Request *req)
{
    core_req *r;
    switch (mode) {
    case COLL_BLOCKING:
        return coll_sched_wait(s);
    case COLL_NONBLOCKING:
        coll_sched_start(s, &r);
        *req = MPII_HANDLE(MPII_KIND_REQUEST, r->id);
        return MPI_SUCCESS;
    default:
        coll_sched_round(s);
        s->persistent = 1;
        r = mpii_persist_new(s->comm->handle);
        mpii_persist_of(r)->coll = s;
        *req = MPII_HANDLE(MPII_KIND_REQUEST, r->id);
        return MPI_SUCCESS;
    }
}

void coll_sched_dump_pending(void)
{
    util_qnode *n;
    for (n = sched_running.head.next; n != &sched_running.head; n = n->next) {
        coll_sched *s = UTIL_CONTAINER(n, coll_sched, qn);
        util_log("  collective on communicator %s (handle 0x%x): round %d of %d, %d of %d messages "
                 "pending, tag %d",
                 s->comm->name[0] ? s->comm->name : "(unnamed)", (unsigned)s->comm->handle,
                 s->round + 1, s->nrounds, s->pending, s->nmsgs, s->tag);
    }
}
