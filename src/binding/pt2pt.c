/* Point-to-point bindings: argument checks, handle conversion, error handler. */
#include "mpi/mpii.h"
#include "mpi/pt2pt/pt2pt.h"
#include "mpi/coll/sched.h"
#include "binding/impl.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define PT2PT_TAG_UB ((1 << 30) - 1)

enum { CHK_SEND, CHK_RECV };

/* checks shared by every call that names (buf, count, datatype, peer, tag, comm); *tout is the
 * type to use (MPI_BYTE's for MPI_DATATYPE_NULL with count 0: mpii_pt2pt_type) */
static inline __attribute__((always_inline)) int pt2pt_check_t(const char *fn, int kind, const void *buf, MPI_Aint count, MPI_Datatype dt,
                         int peer, int tag, MPI_Comm comm, mpii_comm **out, mpii_dtype **tout)
{
    mpii_comm *c = mpii_comm_get(comm);
    if (!c)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_COMM, fn, "comm: invalid communicator");
    if (count < 0)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_COUNT, fn, "count=%ld is negative", (long)count);
    mpii_dtype *t = mpii_dtype_get(dt);
    if (!t && !(t = mpii_dtype_get(mpii_pt2pt_type(dt, count))))
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_TYPE, fn, "datatype: invalid datatype");
    if (!t->committed)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_TYPE, fn, "datatype: not committed (call MPI_Type_commit)");
    if (mpii_buf_is_null(buf, count, t))
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_BUFFER, fn, "buf: NULL with count=%ld",
                        (long)count);
    int n = mpii_comm_peer_size(c);
    const char *who = kind == CHK_SEND ? "dest" : "source";
    if (peer != MPI_PROC_NULL && !(kind == CHK_RECV && peer == MPI_ANY_SOURCE) && (peer < 0 || peer >= n))
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_RANK, fn,
                        "%s=%d is not a valid rank: the communicator has %d %sranks", who, peer, n,
                        c->is_inter ? "remote " : "");
    if (!(kind == CHK_RECV && tag == MPI_ANY_TAG) && (tag < 0 || tag > PT2PT_TAG_UB))
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_TAG, fn, "tag=%d is outside 0..MPI_TAG_UB (%d)",
                        tag, PT2PT_TAG_UB);
    *out = c;
    *tout = t;
    return MPI_SUCCESS;
}

static int pt2pt_check(const char *fn, int kind, const void *buf, MPI_Aint count, MPI_Datatype dt,
                       int peer, int tag, MPI_Comm comm, mpii_comm **out)
{
    mpii_dtype *t = NULL;
    return pt2pt_check_t(fn, kind, buf, count, dt, peer, tag, comm, out, &t);
}

static int pt2pt_opfail_report(const char *fn, MPI_Comm comm, int err)
{
    if (err == MPI_ERR_TRUNCATE)
        return mpii_err(MPII_OBJ_COMM, comm, err, fn, "message truncated: the receive buffer is too small");
    if (err == MPI_ERR_BUFFER)
        return mpii_err(MPII_OBJ_COMM, comm, err, fn,
                        "no room in the attached buffer (MPI_Buffer_attach) for this buffered send");
    return mpii_err(MPII_OBJ_COMM, comm, err, fn, "operation failed");
}

/* the error of an operation, reported naming the call (inline: nothing on success) */
static inline int pt2pt_opfail(const char *fn, MPI_Comm comm, int err)
{
    return __builtin_expect(err == MPI_SUCCESS, 1) ? MPI_SUCCESS
                                                   : pt2pt_opfail_report(fn, comm, err);
}

static MPI_Request pt2pt_handle(core_req *r) { return MPII_HANDLE(MPII_KIND_REQUEST, r->id); }

/* ---- blocking ----------------------------------------------------------------------- */

static inline __attribute__((always_inline)) int pt2pt_send(const char *fn, int mode, const void *buf, MPI_Count count, MPI_Datatype dt, int dest,
                      int tag, MPI_Comm comm)
{
    mpii_comm *c = NULL;
    mpii_dtype *t = NULL;
    int rc = pt2pt_check_t(fn, CHK_SEND, buf, count, dt, dest, tag, comm, &c, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    return pt2pt_opfail(fn, comm, mpii_send_t(buf, count, t, dest, tag, c, mode));
}

int b_Send(const char *fn, const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    return pt2pt_send(fn, CORE_SEND_STD, buf, count, dt, dest, tag, comm);
}
int b_Ssend(const char *fn, const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    return pt2pt_send(fn, CORE_SEND_SYNC, buf, count, dt, dest, tag, comm);
}
int b_Rsend(const char *fn, const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    return pt2pt_send(fn, CORE_SEND_READY, buf, count, dt, dest, tag, comm);
}
int b_Bsend(const char *fn, const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    return pt2pt_send(fn, CORE_SEND_BUFFERED, buf, count, dt, dest, tag, comm);
}

int b_Recv(const char *fn, void *buf, MPI_Count count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,
              MPI_Status *status)
{
    mpii_comm *c = NULL;
    mpii_dtype *t = NULL;
    int rc = pt2pt_check_t(fn, CHK_RECV, buf, count, dt, source, tag, comm, &c, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    return pt2pt_opfail(fn, comm, mpii_recv_t(buf, count, t, source, tag, c, status));
}

int b_Sendrecv(const char *fn, const void *sbuf, MPI_Count scount, MPI_Datatype sdt, int dest, int stag, void *rbuf,
                  MPI_Count rcount, MPI_Datatype rdt, int source, int rtag, MPI_Comm comm, MPI_Status *status)
{
    sdt = mpii_pt2pt_type(sdt, scount);
    rdt = mpii_pt2pt_type(rdt, rcount);
    mpii_comm *c = NULL;
    int rc = pt2pt_check(fn, CHK_SEND, sbuf, scount, sdt, dest, stag, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = pt2pt_check(fn, CHK_RECV, rbuf, rcount, rdt, source, rtag, comm, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = mpii_sendrecv_user(sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, source, rtag, c,
                            status);
    return pt2pt_opfail(fn, comm, rc);
}

int b_Sendrecv_replace(const char *fn, void *buf, MPI_Count count, MPI_Datatype dt, int dest, int stag, int source,
                          int rtag, MPI_Comm comm, MPI_Status *status)
{
    dt = mpii_pt2pt_type(dt, count);
    mpii_comm *c = NULL;
    int rc = pt2pt_check(fn, CHK_SEND, buf, count, dt, dest, stag, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = pt2pt_check(fn, CHK_RECV, buf, count, dt, source, rtag, comm, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = mpii_sendrecv_replace(buf, count, dt, dest, stag, source, rtag, c, status);
    return pt2pt_opfail(fn, comm, rc);
}

/* ---- nonblocking ------------------------------------------------------------------------ */

static inline __attribute__((always_inline)) int pt2pt_isend(const char *fn, int mode, const void *buf, MPI_Count count, MPI_Datatype dt,
                       int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    mpii_comm *c = NULL;
    mpii_dtype *t = NULL;
    int rc = pt2pt_check_t(fn, CHK_SEND, buf, count, dt, dest, tag, comm, &c, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!req)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_REQUEST, fn, "request: NULL pointer");
    core_req *r;
    rc = mpii_start_send_t(buf, count, t, dest, tag, c, 0, mode, &r);
    if (rc != MPI_SUCCESS)
        return pt2pt_opfail(fn, comm, rc);
    *req = pt2pt_handle(r);
    return MPI_SUCCESS;
}

int b_Isend(const char *fn, const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    return pt2pt_isend(fn, CORE_SEND_STD, buf, count, dt, dest, tag, comm, req);
}
int b_Issend(const char *fn, const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    return pt2pt_isend(fn, CORE_SEND_SYNC, buf, count, dt, dest, tag, comm, req);
}
int b_Irsend(const char *fn, const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    return pt2pt_isend(fn, CORE_SEND_READY, buf, count, dt, dest, tag, comm, req);
}
int b_Ibsend(const char *fn, const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    return pt2pt_isend(fn, CORE_SEND_BUFFERED, buf, count, dt, dest, tag, comm, req);
}

int b_Irecv(const char *fn, void *buf, MPI_Count count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Request *req)
{
    mpii_comm *c = NULL;
    mpii_dtype *t = NULL;
    int rc = pt2pt_check_t(fn, CHK_RECV, buf, count, dt, source, tag, comm, &c, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    core_req *r;
    rc = mpii_start_recv_t(buf, count, t, source, tag, c, 0, &r);
    if (rc != MPI_SUCCESS)
        return pt2pt_opfail(fn, comm, rc);
    *req = pt2pt_handle(r);
    return MPI_SUCCESS;
}

/* ---- persistent ------------------------------------------------------------------------------ */

static int pt2pt_init(const char *fn, int is_send, int mode, const void *buf, MPI_Count count,
                      MPI_Datatype dt, int peer, int tag, MPI_Comm comm, MPI_Request *req)
{
    dt = mpii_pt2pt_type(dt, count);
    mpii_comm *c = NULL;
    int rc = pt2pt_check(fn, is_send ? CHK_SEND : CHK_RECV, buf, count, dt, peer, tag, comm, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    core_req *r = mpii_persist_new(comm);
    mpii_persist *p = mpii_persist_of(r);
    *p = (mpii_persist){.is_send = is_send,
                        .mode = mode,
                        .buf = buf,
                        .count = (MPI_Aint)count,
                        .dt = dt,
                        .peer = peer,
                        .tag = tag,
                        .comm = comm};
    mpii_hold_dtype(r, mpii_dtype_get(dt));
    *req = pt2pt_handle(r);
    return MPI_SUCCESS;
}

int b_Send_init(const char *fn, const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    return pt2pt_init(fn, 1, CORE_SEND_STD, buf, count, dt, dest, tag, comm, req);
}
int b_Ssend_init(const char *fn, const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    return pt2pt_init(fn, 1, CORE_SEND_SYNC, buf, count, dt, dest, tag, comm, req);
}
int b_Rsend_init(const char *fn, const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    return pt2pt_init(fn, 1, CORE_SEND_READY, buf, count, dt, dest, tag, comm, req);
}
int b_Bsend_init(const char *fn, const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    return pt2pt_init(fn, 1, CORE_SEND_BUFFERED, buf, count, dt, dest, tag, comm, req);
}
int b_Recv_init(const char *fn, void *buf, MPI_Count count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Request *req)
{
    return pt2pt_init(fn, 0, 0, buf, count, dt, source, tag, comm, req);
}

int b_Start(MPI_Request *req)
{
    core_req *r = req ? mpii_req_get(*req) : NULL;
    if (!r || r->kind != MPII_REQ_PERSIST)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_REQUEST, "MPI_Start", "request: not a persistent request");
    mpii_persist *p = mpii_persist_of(r);
    if (p->active)
        return mpii_err(MPII_OBJ_COMM, r->up.obj, MPI_ERR_REQUEST, "MPI_Start",
                        "request: already active");
    if (r->owner)
        return mpii_part_start(r);
    mpii_comm *c = NULL;
    if (!p->coll && !(c = mpii_comm_get(p->comm)))
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_COMM, "MPI_Start", "the request's communicator was freed");
    int rc = mpii_persist_start(r, c);
    if (rc != MPI_SUCCESS)
        return pt2pt_opfail("MPI_Start", r->up.obj, rc);
    return MPI_SUCCESS;
}

int b_Startall(int count, MPI_Request reqs[])
{
    for (int i = 0; i < count; i++) {
        int rc = PMPI_Start(&reqs[i]);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* ---- completion --------------------------------------------------------------------------- */

static int pt2pt_req_check(const char *fn, MPI_Request h)
{
    if (h == MPI_REQUEST_NULL || mpii_req_get(h))
        return MPI_SUCCESS;
    return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_REQUEST, fn, "request: invalid request handle 0x%x", (unsigned)h);
}

static int pt2pt_empty(MPI_Status *st)
{
    if (st != MPI_STATUS_IGNORE) {
        st->MPI_SOURCE = MPI_ANY_SOURCE;
        st->MPI_TAG = MPI_ANY_TAG;
        st->MPI_ERROR = MPI_SUCCESS;
        st->dcfa_count = 0;
        st->dcfa_cancelled = 0;
    }
    return MPI_SUCCESS;
}

static int pt2pt_finish(const char *fn, core_req *r, MPI_Request *h, MPI_Status *st)
{
    int comm = r->up.obj;
    const char *coll = coll_sched_req_name(r); /* a collective's request: say which */
    int rc = mpii_req_finish(r, h, st);
    if (rc == MPI_ERR_TRUNCATE && coll)
        return mpii_err(MPII_OBJ_COMM, comm, rc, fn, "%s: " COLL_MISMATCH_TEXT, coll);
    return pt2pt_opfail(fn, comm, rc);
}

int b_Wait(MPI_Request *req, MPI_Status *status)
{
    core_req *r = mpii_req_active_of(*req);
    if (!r) {
        int rc = pt2pt_req_check("MPI_Wait", *req);
        return rc != MPI_SUCCESS ? rc : pt2pt_empty(status);
    }
    mpii_req_wait_one(r);
    return pt2pt_finish("MPI_Wait", r, req, status);
}

int b_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
    core_req *r = mpii_req_active_of(*req);
    if (!r) {
        int rc = pt2pt_req_check("MPI_Test", *req);
        if (rc != MPI_SUCCESS)
            return rc;
        *flag = 1;
        return pt2pt_empty(status);
    }
    if (!mpii_req_is_done(r))
        mpii_progress();
    *flag = mpii_req_is_done(r);
    if (!*flag)
        return MPI_SUCCESS;
    return pt2pt_finish("MPI_Test", r, req, status);
}

/* multiple completion: errors go to MPI_ERROR of each status and MPI_ERR_IN_STATUS */
static int pt2pt_finish_many(core_req *r, MPI_Request *h, MPI_Status *st, int *any_err, int *comm)
{
    *comm = r->up.obj;
    int rc = mpii_req_finish(r, h, st);
    if (st != MPI_STATUS_IGNORE)
        st->MPI_ERROR = rc;
    if (rc != MPI_SUCCESS)
        *any_err = 1;
    return rc;
}

static MPI_Status *pt2pt_st(MPI_Status *sts, int i)
{
    return sts == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &sts[i];
}

/* the status of a complete request without finishing it; returns its error */
static int pt2pt_peek(core_req *r, MPI_Status *st)
{
    core_req *a = r->kind == MPII_REQ_PERSIST ? mpii_persist_of(r)->active : r;
    if (st != MPI_STATUS_IGNORE)
        mpii_status_of(&a->status, st);
    return mpii_req_error(a);
}

static int pt2pt_check_array(const char *fn, int count, MPI_Request reqs[])
{
    if (count < 0)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_COUNT, fn, "count=%d is negative", count);
    for (int i = 0; i < count; i++) {
        int rc = pt2pt_req_check(fn, reqs[i]);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

static int pt2pt_in_status(const char *fn, int any_err, int comm)
{
    if (!any_err)
        return MPI_SUCCESS;
    return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_IN_STATUS, fn, "at least one request failed: see the statuses");
}

int b_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[])
{
    int rc = pt2pt_check_array("MPI_Waitall", count, reqs);
    if (rc != MPI_SUCCESS)
        return rc;
    int any_err = 0, comm = MPI_COMM_WORLD;
    for (int i = 0; i < count; i++) {
        core_req *r = mpii_req_active_of(reqs[i]);
        if (!r) {
            pt2pt_empty(pt2pt_st(statuses, i));
            continue;
        }
        mpii_req_wait_one(r);
        pt2pt_finish_many(r, &reqs[i], pt2pt_st(statuses, i), &any_err, &comm);
    }
    return pt2pt_in_status("MPI_Waitall", any_err, comm);
}

int b_Testall(int count, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    int rc = pt2pt_check_array("MPI_Testall", count, reqs);
    if (rc != MPI_SUCCESS)
        return rc;
    mpii_progress();
    for (int i = 0; i < count; i++) {
        core_req *r = mpii_req_active_of(reqs[i]);
        if (r && !mpii_req_is_done(r)) {
            *flag = 0;
            return MPI_SUCCESS;
        }
    }
    *flag = 1;
    int any_err = 0, comm = MPI_COMM_WORLD;
    for (int i = 0; i < count; i++) {
        core_req *r = mpii_req_active_of(reqs[i]);
        if (!r)
            pt2pt_empty(pt2pt_st(statuses, i));
        else
            pt2pt_finish_many(r, &reqs[i], pt2pt_st(statuses, i), &any_err, &comm);
    }
    return pt2pt_in_status("MPI_Testall", any_err, comm);
}

static int pt2pt_testany(const char *fn, int count, MPI_Request reqs[], int *index, int *flag,
                         MPI_Status *status)
{
    int active = 0;
    for (int i = 0; i < count; i++) {
        core_req *r = mpii_req_active_of(reqs[i]);
        if (!r)
            continue;
        active++;
        if (mpii_req_is_done(r)) {
            *index = i;
            *flag = 1;
            return pt2pt_finish(fn, r, &reqs[i], status);
        }
    }
    *index = MPI_UNDEFINED;
    *flag = active == 0;
    if (!active)
        pt2pt_empty(status);
    return MPI_SUCCESS;
}

int b_Testany(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    int rc = pt2pt_check_array("MPI_Testany", count, reqs);
    if (rc != MPI_SUCCESS)
        return rc;
    mpii_progress();
    return pt2pt_testany("MPI_Testany", count, reqs, index, flag, status);
}

int b_Waitany(int count, MPI_Request reqs[], int *index, MPI_Status *status)
{
    int rc = pt2pt_check_array("MPI_Waitany", count, reqs);
    if (rc != MPI_SUCCESS)
        return rc;
    util_backoff b;
    util_backoff_reset(&b);
    for (;;) {
        int flag;
        rc = pt2pt_testany("MPI_Waitany", count, reqs, index, &flag, status);
        if (flag || rc != MPI_SUCCESS)
            return rc;
        mpii_progress_wait(&b);
    }
}

static int pt2pt_testsome(const char *fn, int incount, MPI_Request reqs[], int *outcount,
                          int indices[], MPI_Status statuses[])
{
    int active = 0, n = 0, any_err = 0, comm = MPI_COMM_WORLD;
    for (int i = 0; i < incount; i++) {
        core_req *r = mpii_req_active_of(reqs[i]);
        if (!r)
            continue;
        active++;
        if (mpii_req_is_done(r)) {
            pt2pt_finish_many(r, &reqs[i], pt2pt_st(statuses, n), &any_err, &comm);
            indices[n++] = i;
        }
    }
    *outcount = active ? n : MPI_UNDEFINED;
    return pt2pt_in_status(fn, any_err, comm);
}

int b_Testsome(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
    int rc = pt2pt_check_array("MPI_Testsome", incount, reqs);
    if (rc != MPI_SUCCESS)
        return rc;
    mpii_progress();
    return pt2pt_testsome("MPI_Testsome", incount, reqs, outcount, indices, statuses);
}

int b_Waitsome(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
    int rc = pt2pt_check_array("MPI_Waitsome", incount, reqs);
    if (rc != MPI_SUCCESS)
        return rc;
    util_backoff b;
    util_backoff_reset(&b);
    for (;;) {
        rc = pt2pt_testsome("MPI_Waitsome", incount, reqs, outcount, indices, statuses);
        if (rc != MPI_SUCCESS || *outcount != 0)
            return rc;
        mpii_progress_wait(&b);
    }
}

int b_Request_get_status(MPI_Request req, int *flag, MPI_Status *status)
{
    int rc = pt2pt_req_check("MPI_Request_get_status", req);
    if (rc != MPI_SUCCESS)
        return rc;
    if (mpii_req_inactive(req)) {
        *flag = 1;
        return pt2pt_empty(status);
    }
    core_req *r = mpii_req_get(req);
    if (!mpii_req_is_done(r))
        mpii_progress();
    *flag = mpii_req_is_done(r);
    if (*flag)
        pt2pt_peek(r, status);
    return MPI_SUCCESS;
}

/* MPI 4.1: the status of any, all or some completed requests, none freed or made inactive */
int b_Request_get_status_any(int count, const MPI_Request reqs[], int *index, int *flag,
                             MPI_Status *status)
{
    static const char fn[] = "MPI_Request_get_status_any";
    int rc = pt2pt_check_array(fn, count, (MPI_Request *)reqs);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!index || !flag)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn, "%s: NULL pointer", index ? "flag" : "index");
    mpii_progress();
    int active = 0;
    *index = MPI_UNDEFINED;
    for (int i = 0; i < count; i++) {
        if (mpii_req_inactive(reqs[i]))
            continue;
        active++;
        core_req *r = mpii_req_get(reqs[i]);
        if (mpii_req_is_done(r)) {
            *index = i;
            *flag = 1;
            pt2pt_peek(r, status);
            return MPI_SUCCESS;
        }
    }
    *flag = active == 0;
    if (!active)
        pt2pt_empty(status);
    return MPI_SUCCESS;
}

int b_Request_get_status_all(int count, const MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    static const char fn[] = "MPI_Request_get_status_all";
    int rc = pt2pt_check_array(fn, count, (MPI_Request *)reqs);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!flag)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn, "flag: NULL pointer");
    mpii_progress();
    for (int i = 0; i < count; i++) {
        if (!mpii_req_inactive(reqs[i]) && !mpii_req_is_done(mpii_req_get(reqs[i]))) {
            *flag = 0;
            return MPI_SUCCESS;
        }
    }
    *flag = 1;
    int any_err = 0, comm = MPI_COMM_WORLD;
    for (int i = 0; i < count; i++) {
        MPI_Status *st = pt2pt_st(statuses, i);
        if (mpii_req_inactive(reqs[i])) {
            pt2pt_empty(st);
            continue;
        }
        core_req *r = mpii_req_get(reqs[i]);
        int err = pt2pt_peek(r, st);
        if (st != MPI_STATUS_IGNORE)
            st->MPI_ERROR = err;
        if (err != MPI_SUCCESS) {
            any_err = 1;
            comm = r->up.obj;
        }
    }
    return pt2pt_in_status(fn, any_err, comm);
}

int b_Request_get_status_some(int incount, const MPI_Request reqs[], int *outcount, int indices[],
                              MPI_Status statuses[])
{
    static const char fn[] = "MPI_Request_get_status_some";
    int rc = pt2pt_check_array(fn, incount, (MPI_Request *)reqs);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!outcount)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn, "outcount: NULL pointer");
    mpii_progress();
    int active = 0, n = 0, any_err = 0, comm = MPI_COMM_WORLD;
    for (int i = 0; i < incount; i++) {
        if (mpii_req_inactive(reqs[i]))
            continue;
        active++;
        core_req *r = mpii_req_get(reqs[i]);
        if (!mpii_req_is_done(r))
            continue;
        MPI_Status *st = pt2pt_st(statuses, n);
        int err = pt2pt_peek(r, st);
        if (st != MPI_STATUS_IGNORE)
            st->MPI_ERROR = err;
        if (err != MPI_SUCCESS) {
            any_err = 1;
            comm = r->up.obj;
        }
        indices[n++] = i;
    }
    *outcount = active ? n : MPI_UNDEFINED;
    return pt2pt_in_status(fn, any_err, comm);
}

int b_Request_free(MPI_Request *req)
{
    core_req *r = req ? mpii_req_get(*req) : NULL;
    if (!r)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_REQUEST, "MPI_Request_free", "request: invalid request");
    if (r->kind == MPII_REQ_PERSIST) {
        if (mpii_persist_of(r)->active)
            mpii_req_detach(mpii_persist_of(r)->active);
        mpii_req_release(r);
    } else if (r->complete) {
        mpii_req_release(r);
    } else {
        mpii_req_detach(r);
    }
    *req = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

int b_Cancel(MPI_Request *req)
{
    core_req *r = req ? mpii_req_get(*req) : NULL;
    if (!r)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_REQUEST, "MPI_Cancel", "request: invalid request");
    if (r->kind == MPII_REQ_GREQ)
        return mpii_greq_cancel(r);
    /* erroneous for nonblocking and persistent collectives: report it, the operation goes on */
    if (r->kind == MPII_REQ_SCHED || (r->kind == MPII_REQ_PERSIST && mpii_persist_of(r)->coll))
        return mpii_err(MPII_OBJ_COMM, r->up.obj, MPI_ERR_REQUEST, "MPI_Cancel",
                        "request: a collective operation cannot be cancelled (complete it with "
                        "MPI_Wait or MPI_Test)");
    mpii_req_cancel(r);
    return MPI_SUCCESS;
}

/* ---- probes ----------------------------------------------------------------------------------- */

int b_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    mpii_comm *c = NULL;
    int rc = pt2pt_check("MPI_Iprobe", CHK_RECV, NULL, 0, MPI_BYTE, source, tag, comm, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        if (status != MPI_STATUS_IGNORE) {
            status->MPI_SOURCE = MPI_PROC_NULL;
            status->MPI_TAG = MPI_ANY_TAG;
            status->dcfa_count = 0;
            status->dcfa_cancelled = 0;
        }
        return MPI_SUCCESS;
    }
    mpii_iprobe(source, tag, c, flag, status, NULL);
    return MPI_SUCCESS;
}

int b_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    util_backoff b;
    util_backoff_reset(&b);
    for (;;) {
        int flag;
        int rc = PMPI_Iprobe(source, tag, comm, &flag, status);
        if (rc != MPI_SUCCESS || flag)
            return rc;
        util_backoff_wait(&b);
    }
}

int b_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
              MPI_Status *status)
{
    mpii_comm *c = NULL;
    int rc = pt2pt_check("MPI_Improbe", CHK_RECV, NULL, 0, MPI_BYTE, source, tag, comm, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        *message = MPI_MESSAGE_NO_PROC;
        if (status != MPI_STATUS_IGNORE) {
            status->MPI_SOURCE = MPI_PROC_NULL;
            status->MPI_TAG = MPI_ANY_TAG;
            status->dcfa_count = 0;
            status->dcfa_cancelled = 0;
        }
        return MPI_SUCCESS;
    }
    mpii_iprobe(source, tag, c, flag, status, message);
    return MPI_SUCCESS;
}

int b_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    util_backoff b;
    util_backoff_reset(&b);
    for (;;) {
        int flag;
        int rc = PMPI_Improbe(source, tag, comm, &flag, message, status);
        if (rc != MPI_SUCCESS || flag)
            return rc;
        util_backoff_wait(&b);
    }
}

int b_Imrecv(const char *fn, void *buf, MPI_Count count, MPI_Datatype dt, MPI_Message *message, MPI_Request *req)
{
    dt = mpii_pt2pt_type(dt, count);
    if (!message)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn, "message: NULL pointer");
    if (*message == MPI_MESSAGE_NO_PROC) {
        *req = pt2pt_handle(mpii_req_no_proc());
        *message = MPI_MESSAGE_NULL;
        return MPI_SUCCESS;
    }
    mpii_dtype *t = mpii_dtype_get(dt);
    if (count < 0)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_COUNT, fn, "count=%lld is negative", (long long)count);
    if (!t || !t->committed)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_TYPE, fn, "datatype: invalid or not committed");
    if (mpii_buf_is_null(buf, count, t))
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_BUFFER, fn, "buf: NULL with count=%lld",
                        (long long)count);
    core_msg *m = mpii_msg_take(*message);
    if (!m)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_REQUEST, fn, "message: not a matched message handle");
    core_req *r;
    mpii_imrecv(buf, count, t, m, &r);
    *req = pt2pt_handle(r);
    *message = MPI_MESSAGE_NULL;
    return MPI_SUCCESS;
}

int b_Mrecv(const char *fn, void *buf, MPI_Count count, MPI_Datatype dt, MPI_Message *message, MPI_Status *status)
{
    MPI_Request req;
    int rc = b_Imrecv(fn, buf, count, dt, message, &req);
    if (rc != MPI_SUCCESS)
        return rc;
    return PMPI_Wait(&req, status);
}

/* ---- buffered mode ----------------------------------------------------------------------------- */

/* the buffer slot of a communicator or session, or an error naming the bad handle */
static int bbuf_slot(const char *fn, int kind, int h, mpii_bbuf ***slot)
{
    if (kind == MPII_OBJ_COMM) {
        mpii_comm *c = mpii_comm_get(h);
        if (!c)
            return mpii_err(MPII_OBJ_COMM, h, MPI_ERR_COMM, fn, "comm: invalid communicator");
        *slot = &c->bbuf;
    } else if (kind == MPII_OBJ_SESSION) {
        *slot = mpii_session_bbuf(h);
        if (!*slot)
            return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_SESSION, fn, "session: invalid session");
    } else {
        *slot = mpii_bbuf_process();
    }
    return MPI_SUCCESS;
}

static int bbuf_attach(const char *fn, int kind, int h, void *buffer, MPI_Count size)
{
    mpii_bbuf **slot = NULL;
    int rc = bbuf_slot(fn, kind, h, &slot);
    if (rc != MPI_SUCCESS)
        return rc;
    if (size < 0 && buffer != MPI_BUFFER_AUTOMATIC)
        return mpii_err(kind, h, MPI_ERR_ARG, fn, "size=%lld is negative", (long long)size);
    if (!buffer && size > 0)
        return mpii_err(kind, h, MPI_ERR_BUFFER, fn, "buffer: NULL with size=%lld", (long long)size);
    if (mpii_bbuf_attach(slot, buffer, (size_t)(size < 0 ? 0 : size)) != MPI_SUCCESS)
        return mpii_err(kind, h, MPI_ERR_BUFFER, fn, "a buffer is already attached");
    return MPI_SUCCESS;
}

/* nothing attached: NULL and 0, as MPI_Buffer_detach always answered */
static int bbuf_detach(const char *fn, int kind, int h, void *buffer_addr, MPI_Count *size)
{
    mpii_bbuf **slot = NULL;
    int rc = bbuf_slot(fn, kind, h, &slot);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!buffer_addr || !size)
        return mpii_err(kind, h, MPI_ERR_ARG, fn, "%s: NULL pointer", size ? "buffer_addr" : "size");
    void *b = NULL;
    size_t s = 0;
    (void)mpii_bbuf_detach(slot, &b, &s);
    *(void **)buffer_addr = b;
    *size = (MPI_Count)s;
    return MPI_SUCCESS;
}

static int bbuf_flush(const char *fn, int kind, int h, MPI_Request *req)
{
    mpii_bbuf **slot = NULL;
    int rc = bbuf_slot(fn, kind, h, &slot);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!req) {
        mpii_bbuf_flush(*slot);
        return MPI_SUCCESS;
    }
    core_req *r;
    rc = mpii_bbuf_iflush(*slot, &r);
    if (rc != MPI_SUCCESS)
        return mpii_err(kind, h, rc, fn, "cannot make the request");
    *req = pt2pt_handle(r);
    return MPI_SUCCESS;
}

int b_Buffer_attach(const char *fn, void *buffer, MPI_Count size)
{
    return bbuf_attach(fn, MPII_OBJ_NONE, 0, buffer, size);
}
int b_Comm_attach_buffer(const char *fn, MPI_Comm comm, void *buffer, MPI_Count size)
{
    return bbuf_attach(fn, MPII_OBJ_COMM, comm, buffer, size);
}
int b_Session_attach_buffer(const char *fn, MPI_Session session, void *buffer, MPI_Count size)
{
    return bbuf_attach(fn, MPII_OBJ_SESSION, session, buffer, size);
}

int b_Buffer_detach(const char *fn, void *buffer_addr, MPI_Count *size)
{
    return bbuf_detach(fn, MPII_OBJ_NONE, 0, buffer_addr, size);
}
int b_Comm_detach_buffer(const char *fn, MPI_Comm comm, void *buffer_addr, MPI_Count *size)
{
    return bbuf_detach(fn, MPII_OBJ_COMM, comm, buffer_addr, size);
}
int b_Session_detach_buffer(const char *fn, MPI_Session session, void *buffer_addr, MPI_Count *size)
{
    return bbuf_detach(fn, MPII_OBJ_SESSION, session, buffer_addr, size);
}

int b_Buffer_flush(void) { return bbuf_flush("MPI_Buffer_flush", MPII_OBJ_NONE, 0, NULL); }
int b_Buffer_iflush(MPI_Request *request)
{
    if (!request)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_REQUEST, "MPI_Buffer_iflush", "request: NULL pointer");
    return bbuf_flush("MPI_Buffer_iflush", MPII_OBJ_NONE, 0, request);
}
int b_Comm_flush_buffer(MPI_Comm comm)
{
    return bbuf_flush("MPI_Comm_flush_buffer", MPII_OBJ_COMM, comm, NULL);
}
int b_Comm_iflush_buffer(MPI_Comm comm, MPI_Request *request)
{
    if (!request)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_REQUEST, "MPI_Comm_iflush_buffer",
                        "request: NULL pointer");
    return bbuf_flush("MPI_Comm_iflush_buffer", MPII_OBJ_COMM, comm, request);
}
int b_Session_flush_buffer(MPI_Session session)
{
    return bbuf_flush("MPI_Session_flush_buffer", MPII_OBJ_SESSION, session, NULL);
}
int b_Session_iflush_buffer(MPI_Session session, MPI_Request *request)
{
    if (!request)
        return mpii_err(MPII_OBJ_SESSION, session, MPI_ERR_REQUEST, "MPI_Session_iflush_buffer",
                        "request: NULL pointer");
    return bbuf_flush("MPI_Session_iflush_buffer", MPII_OBJ_SESSION, session, request);
}

/* ---- compound and generalized requests --------------------------------------------------------- */

int b_Isendrecv(const char *fn, const void *sbuf, MPI_Count scount, MPI_Datatype sdt, int dest, int stag, void *rbuf,
                   MPI_Count rcount, MPI_Datatype rdt, int source, int rtag, MPI_Comm comm, MPI_Request *req)
{
    sdt = mpii_pt2pt_type(sdt, scount);
    rdt = mpii_pt2pt_type(rdt, rcount);
    mpii_comm *c = NULL;
    int rc = pt2pt_check(fn, CHK_SEND, sbuf, scount, sdt, dest, stag, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = pt2pt_check(fn, CHK_RECV, rbuf, rcount, rdt, source, rtag, comm, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    core_req *r;
    rc = mpii_isendrecv(sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, source, rtag, c, NULL, &r);
    if (rc != MPI_SUCCESS)
        return pt2pt_opfail(fn, comm, rc);
    *req = pt2pt_handle(r);
    return MPI_SUCCESS;
}

int b_Isendrecv_replace(const char *fn, void *buf, MPI_Count count, MPI_Datatype dt, int dest, int stag, int source,
                           int rtag, MPI_Comm comm, MPI_Request *req)
{
    dt = mpii_pt2pt_type(dt, count);
    mpii_comm *c = NULL;
    int rc = pt2pt_check(fn, CHK_SEND, buf, count, dt, dest, stag, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = pt2pt_check(fn, CHK_RECV, buf, count, dt, source, rtag, comm, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    core_req *r;
    rc = mpii_isendrecv_replace(buf, count, dt, dest, stag, source, rtag, c, &r);
    if (rc != MPI_SUCCESS)
        return pt2pt_opfail(fn, comm, rc);
    *req = pt2pt_handle(r);
    return MPI_SUCCESS;
}

int b_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                     MPI_Grequest_cancel_function *cancel_fn, void *extra_state, MPI_Request *req)
{
    if (!req)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, "MPI_Grequest_start", "request: NULL pointer");
    core_req *r;
    mpii_greq_start(query_fn, free_fn, cancel_fn, extra_state, &r);
    *req = pt2pt_handle(r);
    return MPI_SUCCESS;
}

int b_Grequest_complete(MPI_Request req)
{
    core_req *r = mpii_req_get(req);
    if (!r || r->kind != MPII_REQ_GREQ)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_REQUEST, "MPI_Grequest_complete",
                        "request: not a generalized request");
    mpii_greq_complete(r);
    return MPI_SUCCESS;
}
