/* Point-to-point at the MPI level: requests behind MPI_Request handles, the
 * completion functions, buffered mode, matched messages (MPI_Message), and
 * the blocking helpers the other chapters use. Arguments are already checked
 * by the bindings; core does the protocols. */
#include "mpi/mpii.h"
#include "mpi/pt2pt/pt2pt.h"
#include "mpi/datatype/datatype.h"
#include "mpi/coll/sched.h"
#include "core/core.h"

#include <stdlib.h>
#include <string.h>

/* requests nobody waits for (MPI_Request_free, buffered sends): freed once complete */
static util_queue mpii_detached;
static util_htab mpii_msgs;     /* MPI_Message -> core_msg * */

typedef struct mpii_detached_node {
    util_qnode qn;
    core_req *r;
} mpii_detached_node;

int mpii_pt2pt_init(void)
{
    util_queue_init(&mpii_detached);
    util_htab_init(&mpii_msgs, sizeof(void *), 2);
    return MPI_SUCCESS;
}

/* free what finished among the detached requests */
static void mpii_detached_collect(void)
{
    util_qnode *n = mpii_detached.head.next;
    while (n != &mpii_detached.head) {
        util_qnode *next = n->next;
        mpii_detached_node *d = UTIL_CONTAINER(n, mpii_detached_node, qn);
        if (d->r->complete) {
            mpii_req_release(d->r);
            util_queue_remove(n);
            free(d);
        }
        n = next;
    }
}

/* with wait, progress until every detached request is complete. No list
 * node or request is held while waiting: another thread may collect them
 * (and their slots be reused) whenever this one gives up the entry lock. */
static void mpii_detached_sweep(int wait)
{
    util_backoff b;
    util_backoff_reset(&b);
    for (;;) {
        mpii_detached_collect();
        if (!wait || util_queue_empty(&mpii_detached))
            return;
        if (core_progress() > 0)
            util_backoff_reset(&b);
        else
            util_backoff_wait(&b);
    }
}

void mpii_pt2pt_finalize(void)
{
    mpii_detached_sweep(1);
    mpii_bbuf_drop(mpii_bbuf_process());
    mpii_part_finalize();
    util_htab_destroy(&mpii_msgs);
}

/* mpii_req_release of a point-to-point request (CORE_REQ_SEND, CORE_REQ_RECV) */
static inline void mpii_req_release_op(core_req *r)
{
    if (r->up.ref)
        mpii_dtype_release(r->up.ref);
    core_req_free(r);
}

void mpii_req_release(core_req *r)
{
    if (r->kind == MPII_REQ_SCHED) {
        (void)coll_sched_req_finish(r, MPI_STATUS_IGNORE);
        return;
    }
    if (r->kind == MPII_REQ_PERSIST) {
        if (mpii_persist_of(r)->coll)
            coll_sched_free(mpii_persist_of(r)->coll); /* deferred while a start of it runs */
        if (r->owner)
            mpii_part_free(r->owner);
        free(mpii_persist_of(r));
    }
    mpii_req_release_op(r);
}

void mpii_req_detach(core_req *r)
{
    mpii_detached_node *d = util_calloc(1, sizeof *d);
    d->r = r;
    util_queue_push(&mpii_detached, &d->qn);
}

/* ---- starting operations ----------------------------------------------------------- */

core_req *mpii_persist_new(MPI_Comm comm)
{
    core_req *r = core_req_alloc(MPII_REQ_PERSIST);
    r->up.obj = comm;
    r->u.other.state = util_calloc(1, sizeof(mpii_persist));
    return r;
}

core_req *mpii_req_null_op(mpii_comm *c)
{
    core_req *r = core_req_alloc(MPII_REQ_DONE);
    r->status.source = MPI_PROC_NULL;
    r->status.tag = MPI_ANY_TAG;
    r->status.count = 0;
    r->up.obj = c->handle;
    r->complete = 1;
    return r;
}

int mpii_start_send(const void *buf, MPI_Aint count, MPI_Datatype dt, int dest, int tag,
                    mpii_comm *c, int coll, int mode, core_req **out)
{
    return mpii_start_send_t(buf, count, mpii_dtype_get(dt), dest, tag, c, coll, mode, out);
}

int mpii_start_recv(void *buf, MPI_Aint count, MPI_Datatype dt, int src, int tag, mpii_comm *c,
                    int coll, core_req **out)
{
    return mpii_start_recv_t(buf, count, mpii_dtype_get(dt), src, tag, c, coll, out);
}

/* ---- what the bindings call (pt2pt.h) ------------------------------------------------- */

int mpii_sendrecv_user(const void *sbuf, MPI_Aint scount, MPI_Datatype sdt, int dest, int stag,
                       void *rbuf, MPI_Aint rcount, MPI_Datatype rdt, int src, int rtag,
                       mpii_comm *c, MPI_Status *st)
{
    core_req *rr, *sr;
    int rc = mpii_start_recv(rbuf, rcount, rdt, src, rtag, c, 0, &rr);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = mpii_start_send(sbuf, scount, sdt, dest, stag, c, 0, CORE_SEND_STD, &sr);
    if (rc != MPI_SUCCESS)
        return rc;
    mpii_req_wait_one(sr);
    mpii_req_wait_one(rr);
    mpii_req_release(sr);
    MPI_Request h = MPII_HANDLE(MPII_KIND_REQUEST, rr->id);
    return mpii_req_finish(rr, &h, st);
}

/* a packed copy of count elements of dt at buf: what a replacing send sends, so that its
 * receive can land in place */
static void *mpii_packed_copy(const void *buf, MPI_Aint count, MPI_Datatype dt, size_t *bytes)
{
    mpii_dtype *t = mpii_dtype_get(dt);
    *bytes = (size_t)count * t->dt.size;
    void *tmp = util_malloc(*bytes);
    if (*bytes)
        core_dt_pack(buf, (size_t)count, &t->dt, 0, tmp, *bytes);
    return tmp;
}

int mpii_sendrecv_replace(void *buf, MPI_Aint count, MPI_Datatype dt, int dest, int stag, int src,
                          int rtag, mpii_comm *c, MPI_Status *st)
{
    size_t bytes;
    void *tmp = mpii_packed_copy(buf, count, dt, &bytes);
    core_req *rr, *sr;
    int rc = mpii_start_recv(buf, count, dt, src, rtag, c, 0, &rr);
    if (rc == MPI_SUCCESS)
        rc = mpii_start_send(tmp, (MPI_Aint)bytes, MPI_BYTE, dest, stag, c, 0, CORE_SEND_STD, &sr);
    if (rc != MPI_SUCCESS) {
        free(tmp);
        return rc;
    }
    mpii_req_wait_one(sr);
    mpii_req_wait_one(rr);
    mpii_req_release(sr);
    free(tmp);
    MPI_Request h = MPII_HANDLE(MPII_KIND_REQUEST, rr->id);
    return mpii_req_finish(rr, &h, st);
}

int mpii_isendrecv_replace(void *buf, MPI_Aint count, MPI_Datatype dt, int dest, int stag, int src,
                           int rtag, mpii_comm *c, core_req **out)
{
    size_t bytes;
    void *tmp = mpii_packed_copy(buf, count, dt, &bytes);
    return mpii_isendrecv(tmp, (MPI_Aint)bytes, MPI_BYTE, dest, stag, buf, count, dt, src, rtag, c,
                          tmp, out);
}

int mpii_persist_start(core_req *r, mpii_comm *c)
{
    mpii_persist *p = mpii_persist_of(r);
    core_req *a;
    int rc = MPI_SUCCESS;
    if (p->coll)
        coll_sched_start(p->coll, &a);
    else if (p->is_send)
        rc = mpii_start_send(p->buf, p->count, p->dt, p->peer, p->tag, c, 0, p->mode, &a);
    else
        rc = mpii_start_recv((void *)p->buf, p->count, p->dt, p->peer, p->tag, c, 0, &a);
    if (rc == MPI_SUCCESS)
        p->active = a;
    return rc;
}

void mpii_req_cancel(core_req *r)
{
    if (r->kind == MPII_REQ_PERSIST)
        r = mpii_persist_of(r)->active;
    if (r && r->kind == CORE_REQ_RECV)
        core_cancel_recv(r);
    else if (r && r->kind == CORE_REQ_SEND)
        core_cancel_send(r);
}

void mpii_imrecv(void *buf, MPI_Aint count, mpii_dtype *t, core_msg *m, core_req **out)
{
    core_imrecv(buf, (size_t)count, &t->dt, m, out);
    (*out)->up.obj = MPI_COMM_WORLD;
    mpii_hold_dtype(*out, t);
}

core_req *mpii_req_no_proc(void)
{
    core_req *r = core_req_alloc(MPII_REQ_DONE);
    r->status.source = MPI_PROC_NULL;
    r->status.tag = MPI_ANY_TAG;
    r->complete = 1;
    r->up.obj = MPI_COMM_WORLD;
    return r;
}

/* ---- completion ---------------------------------------------------------------------- */

static void mpii_status_out(const core_req *r, MPI_Status *st)
{
    if (st == MPI_STATUS_IGNORE)
        return;
    mpii_status_of(&r->status, st);
}

static void mpii_status_empty(MPI_Status *st)
{
    if (st == MPI_STATUS_IGNORE)
        return;
    st->MPI_SOURCE = MPI_ANY_SOURCE;
    st->MPI_TAG = MPI_ANY_TAG;
    st->dcfa_count = 0;
    st->dcfa_cancelled = 0;
}

/* the request a handle waits on: for persistent requests their active operation */
static core_req *mpii_req_active(core_req *r)
{
    if (r->kind == MPII_REQ_PERSIST)
        return mpii_persist_of(r)->active;
    return r;
}

int mpii_req_is_done_other(core_req *r)
{
    if (r->kind == MPII_REQ_PERSIST && r->owner)
        mpii_part_poll(r);
    core_req *a = mpii_req_active(r);
    if (r->kind == MPII_REQ_GREQ || r->kind == MPII_REQ_COLL || r->kind == MPII_REQ_SCHED)
        return r->complete;
    return !a || a->complete;
}

/* A receive's error: core's, or MPI_ERR_TYPE when the message ended inside a basic
 * element of the receive's datatype (3 bytes into MPI_INT: the type signatures do not
 * match, MPI 4.1 3.3.1). The test costs a division only when the message is shorter than
 * the buffer by a part of an element; every MPI datatype's core_dt is the first member
 * of its mpii_dtype (asserted in mpii.h). */
static int req_recv_error(const core_req *r)
{
    int err = mpii_req_error(r);
    const core_dt *dt = r->u.recv.dt;
    size_t got = (size_t)r->status.count;
    if (__builtin_expect(err != MPI_SUCCESS || !dt || dt->size <= 1 || got % dt->size == 0, 1))
        return err;
    const mpii_dtype *t = (const mpii_dtype *)dt;
    if (mpii_dtype_elements(t, (MPI_Count)got) >= 0)
        return MPI_SUCCESS;
    mpii_cause("the message's %zu bytes end inside a basic element of the receive's "
               "datatype (%s): the send's and the receive's type signatures do not match",
               got, mpii_dtype_label(t));
    return MPI_ERR_TYPE;
}

static int req_error_of(const core_req *r)
{
    return r->kind == CORE_REQ_RECV ? req_recv_error(r) : mpii_req_error(r);
}

int mpii_req_finish(core_req *r, MPI_Request *h, MPI_Status *st)
{
    int err;
    if (__builtin_expect(r->kind != CORE_REQ_SEND && r->kind != CORE_REQ_RECV, 0)) {
        if (r->kind == MPII_REQ_PERSIST) {
            core_req *a = mpii_persist_of(r)->active;
            if (!a) {
                mpii_status_empty(st);
                return MPI_SUCCESS;
            }
            mpii_status_out(a, st);
            err = req_error_of(a);
            mpii_req_release(a);
            mpii_persist_of(r)->active = NULL;
            return err;
        }
        if (r->kind == MPII_REQ_SCHED || r->kind == MPII_REQ_GREQ || r->kind == MPII_REQ_COLL) {
            err = r->kind == MPII_REQ_SCHED ? coll_sched_req_finish(r, st)
                                            : mpii_req_finish_other(r, st);
            *h = MPI_REQUEST_NULL;
            return err;
        }
    }
    mpii_status_out(r, st);
    err = req_error_of(r);
    mpii_req_release_op(r);
    *h = MPI_REQUEST_NULL;
    return err;
}

int mpii_req_inactive(MPI_Request h) { return !mpii_req_active_of(h); }

void mpii_req_wait_slow(core_req *r)
{
    util_backoff b;
    util_backoff_reset(&b);
    while (!mpii_req_is_done(r))
        mpii_progress_wait(&b);
}

void mpii_progress(void)
{
    core_progress();
}

/* ---- matched probes ------------------------------------------------------------------ */

MPI_Message mpii_msg_put(core_msg *m)
{
    int idx;
    core_msg **slot = util_htab_alloc(&mpii_msgs, &idx);
    *slot = m;
    return MPII_HANDLE(MPII_KIND_MESSAGE, idx);
}

core_msg *mpii_msg_take(MPI_Message h)
{
    if (MPII_HANDLE_KIND(h) != MPII_KIND_MESSAGE)
        return NULL;
    core_msg **slot = util_htab_get(&mpii_msgs, MPII_HANDLE_INDEX(h));
    if (!slot)
        return NULL;
    core_msg *m = *slot;
    util_htab_free(&mpii_msgs, MPII_HANDLE_INDEX(h));
    return m;
}

/* ---- blocking helpers for the other chapters --------------------------------------------- */

static int mpii_wait_release(core_req *r, MPI_Status *st)
{
    mpii_req_wait_one(r);
    int err = mpii_req_error(r);
    if (st && st != MPI_STATUS_IGNORE) {
        mpii_status_of(&r->status, st);
        st->MPI_ERROR = err;
    }
    mpii_req_release(r);
    return err;
}

int mpii_send(const void *buf, MPI_Aint count, MPI_Datatype dt, int dest, int tag, mpii_comm *c,
              int coll)
{
    core_req *r;
    int rc = mpii_start_send(buf, count, dt, dest, tag, c, coll, CORE_SEND_STD, &r);
    if (rc != MPI_SUCCESS)
        return rc;
    return mpii_wait_release(r, NULL);
}

int mpii_recv(void *buf, MPI_Aint count, MPI_Datatype dt, int src, int tag, mpii_comm *c, int coll,
              MPI_Status *status)
{
    core_req *r;
    int rc = mpii_start_recv(buf, count, dt, src, tag, c, coll, &r);
    if (rc != MPI_SUCCESS)
        return rc;
    return mpii_wait_release(r, status);
}

int mpii_sendrecv(const void *sbuf, MPI_Aint scount, MPI_Datatype sdt, int dest, int stag,
                  void *rbuf, MPI_Aint rcount, MPI_Datatype rdt, int src, int rtag, mpii_comm *c,
                  int coll, MPI_Status *status)
{
    core_req *rr, *sr;
    int rc = mpii_start_recv(rbuf, rcount, rdt, src, rtag, c, coll, &rr);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = mpii_start_send(sbuf, scount, sdt, dest, stag, c, coll, CORE_SEND_STD, &sr);
    if (rc != MPI_SUCCESS) {
        mpii_wait_release(rr, NULL);
        return rc;
    }
    int e1 = mpii_wait_release(sr, NULL);
    int e2 = mpii_wait_release(rr, status);
    return e2 != MPI_SUCCESS ? e2 : e1;
}

int mpii_isend(const void *buf, MPI_Aint count, MPI_Datatype dt, int dest, int tag, mpii_comm *c,
               int coll, MPI_Request *req)
{
    core_req *r;
    int rc = mpii_start_send(buf, count, dt, dest, tag, c, coll, CORE_SEND_STD, &r);
    if (rc == MPI_SUCCESS)
        *req = MPII_HANDLE(MPII_KIND_REQUEST, r->id);
    return rc;
}

int mpii_irecv(void *buf, MPI_Aint count, MPI_Datatype dt, int src, int tag, mpii_comm *c, int coll,
               MPI_Request *req)
{
    core_req *r;
    int rc = mpii_start_recv(buf, count, dt, src, tag, c, coll, &r);
    if (rc == MPI_SUCCESS)
        *req = MPII_HANDLE(MPII_KIND_REQUEST, r->id);
    return rc;
}

int mpii_waitall(int n, MPI_Request *reqs, MPI_Status *statuses)
{
    int err = MPI_SUCCESS;
    for (int i = 0; i < n; i++) {
        if (reqs[i] == MPI_REQUEST_NULL)
            continue;
        core_req *r = mpii_req_get(reqs[i]);
        mpii_req_wait_one(r);
        int e = mpii_req_finish(r, &reqs[i], statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i]);
        if (e != MPI_SUCCESS)
            err = e;
    }
    return err;
}
