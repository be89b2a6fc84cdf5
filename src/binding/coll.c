/* Collective bindings (MPI 4.1 chapter 6): every collective in its blocking,
 * nonblocking (MPI_I...) and persistent (..._init) forms, each also with _c
 * (large-count) arguments. One static function per collective checks the
 * arguments of all its forms in the _c types (the int forms convert their
 * count and displacement arrays first), builds the schedule (the algorithm
 * choice of src/mpi/coll/select.c) and hands it over with coll_sched_finish()
 * in the call's mode. Intra- and inter-communicators take the same path; on an
 * inter-communicator the v/w arrays have one entry per remote process. */
#include "mpi/mpii.h"
#include "mpi/coll/algo.h"
#include "mpi/info/info.h"
#include "mpi/op/op.h"
#include "binding/impl.h"

#include <stdlib.h>

/* ---- checks ------------------------------------------------------------------------------ */

/* the communicator; for the nonblocking and persistent forms the request pointer; for the
 * persistent ones the info */
/* a schedule for the call; a persistent one is marked before it is built
 * (algorithms that cannot be restarted, such as the node segment's, are not chosen) */
static coll_sched *coll_new(mpii_comm *c, int mode)
{
    coll_sched *s = coll_sched_create_kind(c, mode != COLL_BLOCKING);
    if (mode == COLL_PERSISTENT)
        coll_sched_set_persistent(s);
    return s;
}

static int coll_begin(const char *fn, int mode, MPI_Comm comm, MPI_Info info, MPI_Request *req,
                      mpii_comm **out)
{
    mpii_comm *c = mpii_comm_get(comm);
    if (!c)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_COMM, fn, "comm: invalid communicator");
    if (mode != COLL_BLOCKING && !req)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_REQUEST, fn, "request: NULL pointer");
    if (mode == COLL_PERSISTENT && info != MPI_INFO_NULL && !mpii_info_exists(info))
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_INFO, fn,
                        "info: invalid info object (MPI_INFO_NULL when there is none)");
    *out = c;
    return MPI_SUCCESS;
}

/* a (count, datatype) pair named `what` ("sendcount"/"sendtype" ...) */
static int coll_buf(const char *fn, MPI_Comm comm, MPI_Count count, MPI_Datatype dt,
                    const char *what)
{
    if (count < 0)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_COUNT, fn, "%scount=%lld is negative", what,
                        (long long)count);
    mpii_dtype *t = mpii_dtype_get(dt);
    if (!t)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_TYPE, fn, "%stype: invalid datatype", what);
    if (!t->committed)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_TYPE, fn,
                        "%stype: not committed (call MPI_Type_commit)", what);
    return MPI_SUCCESS;
}

/* n (count, datatype) pairs of a v form */
static int coll_bufs(const char *fn, MPI_Comm comm, int n, const MPI_Count counts[],
                     const MPI_Aint displs[], MPI_Datatype dt, const char *what)
{
    if (!counts || !displs)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "%scounts/displs: NULL array", what);
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
        rc = coll_buf(fn, comm, counts[i], dt, what);
    return rc;
}

/* `what`buf must not be NULL where count > 0 elements of a datatype with data at its true
 * lower bound are significant (mpii_buf_is_null); called once the datatype is checked */
static int coll_null(const char *fn, MPI_Comm comm, const void *buf, MPI_Count count,
                     MPI_Datatype dt, const char *what)
{
    if (!mpii_buf_is_null(buf, count, mpii_dtype_get(dt)))
        return MPI_SUCCESS;
    return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_BUFFER, fn, "%sbuf: NULL with %scount=%lld", what,
                    what, (long long)count);
}

/* the same for a v form: the first nonzero count decides */
static int coll_nullv(const char *fn, MPI_Comm comm, const void *buf, int n,
                      const MPI_Count counts[], MPI_Datatype dt, const char *what)
{
    for (int i = 0; i < n; i++)
        if (counts[i] > 0)
            return coll_null(fn, comm, buf, counts[i], dt, what);
    return MPI_SUCCESS;
}

/* intra: a rank; inter: MPI_ROOT (the root itself), MPI_PROC_NULL (the rest of its group) or a
 * rank of the remote group (the root's peers) */
static int coll_root(const char *fn, MPI_Comm comm, const mpii_comm *c, int root)
{
    if (!c->is_inter && (root < 0 || root >= c->size))
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ROOT, fn,
                        "root=%d is not a valid rank: the communicator has %d ranks", root,
                        c->size);
    if (c->is_inter && root != MPI_ROOT && root != MPI_PROC_NULL &&
        (root < 0 || root >= c->remote->size))
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ROOT, fn,
                        "root=%d is not valid on an inter-communicator: MPI_ROOT, MPI_PROC_NULL "
                        "or a rank of the remote group (%d ranks)",
                        root, c->remote->size);
    return MPI_SUCCESS;
}

/* A rooted collective's roles: *at_root, this process is the root (it receives from, or sends
 * to, every peer); *at_peer, it is one of those peers. An intra-communicator's root is both;
 * on an inter-communicator MPI_PROC_NULL is neither. */
static void coll_roles(const mpii_comm *c, int root, int *at_root, int *at_peer)
{
    *at_root = c->is_inter ? root == MPI_ROOT : c->rank == root;
    *at_peer = c->is_inter ? root >= 0 : 1;
}

static int coll_op(const char *fn, MPI_Comm comm, MPI_Op op, MPI_Datatype dt)
{
    if (!mpii_op_exists(op))
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_OP, fn, "op: invalid operation");
    if (op == MPI_REPLACE || op == MPI_NO_OP)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_OP, fn,
                        "op: %s is only for accumulate operations", mpii_op_name(op));
    int rc = mpii_op_check(op, dt);
    if (rc != MPI_SUCCESS) {
        mpii_dtype *t = mpii_dtype_get(dt);
        return mpii_err(MPII_OBJ_COMM, comm, rc, fn, "op: %s is not defined for datatype %s",
                        mpii_op_name(op), mpii_dtype_label(t));
    }
    return MPI_SUCCESS;
}

/* A send and a receive buffer that alias, when count > 0 elements move: `one` (the buffer of
 * this process's own block) is `all` (the buffer of every process's blocks), or is this
 * process's block in it, at `slot` bytes (slot < 0: no such block). MPI_IN_PLACE is the way
 * to say it; MPICH answers MPI_ERR_BUFFER too, before any message. */
static int coll_alias(const char *fn, MPI_Comm comm, const void *one, const char *one_name,
                      const void *all, const char *all_name, MPI_Aint slot, MPI_Count count)
{
    if (count <= 0 || one == MPI_BOTTOM || one == MPI_IN_PLACE || all == MPI_IN_PLACE)
        return MPI_SUCCESS;
    if (one == all)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_BUFFER, fn,
                        "%s and %s are the same buffer (use MPI_IN_PLACE)", one_name, all_name);
    if (slot >= 0 && all != MPI_BOTTOM && (const char *)one == (const char *)all + slot)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_BUFFER, fn,
                        "%s is this process's own block of %s (use MPI_IN_PLACE)", one_name,
                        all_name);
    return MPI_SUCCESS;
}

/* the byte offset of block `i` of `count` elements (or at displacement displs[i], when displs)
 * of datatype dt */
static MPI_Aint coll_slot(int i, MPI_Count count, const MPI_Aint displs[], MPI_Datatype dt)
{
    MPI_Aint ext = mpii_dtype_get(dt)->dt.extent;
    return (displs ? displs[i] : (MPI_Aint)(i * count)) * ext;
}

/* where MPI_IN_PLACE may stand, for the messages */
static const char coll_in_send[] = "it is passed as sendbuf";
static const char coll_root_send[] = "only the root may pass it, as sendbuf";
static const char coll_root_recv[] = "only the root may pass it, as recvbuf";

/* MPI_IN_PLACE as `what`: never on an inter-communicator, on an intra-communicator where
 * `allowed` (else `hint` tells where it belongs) */
static int coll_inplace(const char *fn, MPI_Comm comm, const mpii_comm *c, const void *buf,
                        const char *what, int allowed, const char *hint)
{
    if (buf != MPI_IN_PLACE)
        return MPI_SUCCESS;
    if (c->is_inter)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_BUFFER, fn,
                        "%s: MPI_IN_PLACE is not allowed on an inter-communicator", what);
    if (!allowed)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_BUFFER, fn,
                        "%s: MPI_IN_PLACE is not allowed here (%s)", what, hint);
    return MPI_SUCCESS;
}

/* the (sendbuf, recvbuf, count, datatype, op) of a reduction without root: MPI_IN_PLACE only
 * as sendbuf */
static int coll_red_args(const char *fn, MPI_Comm comm, const mpii_comm *c, const void *sbuf,
                         void *rbuf, MPI_Count count, MPI_Datatype dt, MPI_Op op)
{
    int rc = coll_inplace(fn, comm, c, sbuf, "sendbuf", 1, NULL);
    if (rc == MPI_SUCCESS)
        rc = coll_inplace(fn, comm, c, rbuf, "recvbuf", 0, coll_in_send);
    if (rc == MPI_SUCCESS)
        rc = coll_buf(fn, comm, count, dt, "");
    if (rc == MPI_SUCCESS)
        rc = coll_op(fn, comm, op, dt);
    if (rc == MPI_SUCCESS)
        rc = coll_alias(fn, comm, sbuf, "sendbuf", rbuf, "recvbuf", -1, count);
    return rc;
}

static int coll_done(const char *fn, MPI_Comm comm, int rc)
{
    if (rc == MPI_SUCCESS)
        return MPI_SUCCESS;
    if (rc == MPI_ERR_TRUNCATE)
        return mpii_err(MPII_OBJ_COMM, comm, rc, fn, COLL_MISMATCH_TEXT);
    if (rc == MPI_ERR_UNSUPPORTED_OPERATION)
        return mpii_err(MPII_OBJ_COMM, comm, rc, fn, "not implemented yet on inter-communicators");
    return mpii_err(MPII_OBJ_COMM, comm, rc, fn, "the collective operation failed");
}

/* Hand a built schedule over in the call's mode (blocking: run it), or drop it when building
 * failed (`built`, the builder's result). */
static int coll_end(const char *fn, MPI_Comm comm, coll_sched *s, int built, int mode,
                    MPI_Request *req)
{
    if (built != MPI_SUCCESS) {
        coll_sched_free(s);
        return coll_done(fn, comm, built);
    }
    coll_sched_set_name(s, fn);
    return coll_done(fn, comm, coll_sched_finish(s, mode, req));
}

/* entries of the arrays that are significant here: every peer's (local: the local group's) */
static int coll_nentries(MPI_Comm comm, int local)
{
    mpii_comm *c = mpii_comm_get(comm);
    if (!c)
        return 0;
    return local ? c->size : mpii_comm_peer_size(c);
}

/* ... and for the root's arrays of gatherv/scatterv: none away from the root */
static int coll_nentries_root(MPI_Comm comm, int root)
{
    mpii_comm *c = mpii_comm_get(comm);
    int at_root = 0, at_peer;
    if (c)
        coll_roles(c, root, &at_root, &at_peer);
    return at_root ? mpii_comm_peer_size(c) : 0;
}

/* ---- the collectives: one function each, all forms ----------------------------------------- */

static int barrier(const char *fn, int mode, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    mpii_comm *c = NULL;
    int rc = coll_begin(fn, mode, comm, info, req, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    coll_sched *s = coll_new(c, mode);
    return coll_end(fn, comm, s, coll_barrier(s, c), mode, req);
}

static int bcast(const char *fn, int mode, void *buf, MPI_Count count, MPI_Datatype dt, int root,
                 MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    mpii_comm *c = NULL;
    int at_root = 0, at_peer = 0;
    int rc = coll_begin(fn, mode, comm, info, req, &c);
    if (rc == MPI_SUCCESS)
        rc = coll_root(fn, comm, c, root);
    if (rc == MPI_SUCCESS)
        coll_roles(c, root, &at_root, &at_peer);
    if (rc == MPI_SUCCESS)
        rc = coll_inplace(fn, comm, c, buf, "buffer", 0, "a broadcast has a single buffer");
    if (rc == MPI_SUCCESS && (at_root || at_peer))
        rc = coll_buf(fn, comm, count, dt, "");
    if (rc == MPI_SUCCESS && (at_root || at_peer))
        rc = coll_null(fn, comm, buf, count, dt, "");
    if (rc != MPI_SUCCESS)
        return rc;
    coll_sched *s = coll_new(c, mode);
    return coll_end(fn, comm, s, coll_bcast(s, buf, (MPI_Aint)count, dt, root, c), mode, req);
}

/* gather (vform 0: rcount) and gatherv (vform 1: rcounts, displs) */
static int gather(const char *fn, int mode, const void *sbuf, MPI_Count scount, MPI_Datatype sdt,
                  void *rbuf, MPI_Count rcount, const MPI_Count rcounts[], const MPI_Aint displs[],
                  MPI_Datatype rdt, int vform, int root, MPI_Comm comm, MPI_Info info,
                  MPI_Request *req)
{
    mpii_comm *c = NULL;
    int at_root = 0, at_peer = 0;
    int rc = coll_begin(fn, mode, comm, info, req, &c);
    if (rc == MPI_SUCCESS)
        rc = coll_root(fn, comm, c, root);
    if (rc == MPI_SUCCESS)
        coll_roles(c, root, &at_root, &at_peer);
    if (rc == MPI_SUCCESS && at_peer)
        rc = coll_inplace(fn, comm, c, sbuf, "sendbuf", at_root, coll_root_send);
    if (rc == MPI_SUCCESS && at_peer && sbuf != MPI_IN_PLACE)
        rc = coll_buf(fn, comm, scount, sdt, "send");
    if (rc == MPI_SUCCESS && at_peer && sbuf != MPI_IN_PLACE)
        rc = coll_null(fn, comm, sbuf, scount, sdt, "send");
    if (rc == MPI_SUCCESS && at_root)
        rc = coll_inplace(fn, comm, c, rbuf, "recvbuf", 0, coll_in_send);
    if (rc == MPI_SUCCESS && at_root && vform)
        rc = coll_bufs(fn, comm, mpii_comm_peer_size(c), rcounts, displs, rdt, "recv");
    if (rc == MPI_SUCCESS && at_root && vform)
        rc = coll_nullv(fn, comm, rbuf, mpii_comm_peer_size(c), rcounts, rdt, "recv");
    if (rc == MPI_SUCCESS && at_root && !vform)
        rc = coll_buf(fn, comm, rcount, rdt, "recv");
    if (rc == MPI_SUCCESS && at_root && !vform)
        rc = coll_null(fn, comm, rbuf, rcount, rdt, "recv");
    if (rc == MPI_SUCCESS && at_root && at_peer)
        rc = coll_alias(fn, comm, sbuf, "sendbuf", rbuf, "recvbuf",
                        coll_slot(c->rank, rcount, displs, rdt), scount);
    if (rc != MPI_SUCCESS)
        return rc;
    coll_sched *s = coll_new(c, mode);
    if (vform)
        rc = coll_gatherv(s, sbuf, (MPI_Aint)scount, sdt, rbuf, rcounts, displs, rdt, root, c);
    else
        rc = coll_gather(s, sbuf, (MPI_Aint)scount, sdt, rbuf, (MPI_Aint)rcount, rdt, root, c);
    return coll_end(fn, comm, s, rc, mode, req);
}

/* scatter (vform 0: scount) and scatterv (vform 1: scounts, displs) */
static int scatter(const char *fn, int mode, const void *sbuf, MPI_Count scount,
                   const MPI_Count scounts[], const MPI_Aint displs[], MPI_Datatype sdt, void *rbuf,
                   MPI_Count rcount, MPI_Datatype rdt, int vform, int root, MPI_Comm comm,
                   MPI_Info info, MPI_Request *req)
{
    mpii_comm *c = NULL;
    int at_root = 0, at_peer = 0;
    int rc = coll_begin(fn, mode, comm, info, req, &c);
    if (rc == MPI_SUCCESS)
        rc = coll_root(fn, comm, c, root);
    if (rc == MPI_SUCCESS)
        coll_roles(c, root, &at_root, &at_peer);
    if (rc == MPI_SUCCESS && at_peer)
        rc = coll_inplace(fn, comm, c, rbuf, "recvbuf", at_root, coll_root_recv);
    if (rc == MPI_SUCCESS && at_peer && rbuf != MPI_IN_PLACE)
        rc = coll_buf(fn, comm, rcount, rdt, "recv");
    if (rc == MPI_SUCCESS && at_peer && rbuf != MPI_IN_PLACE)
        rc = coll_null(fn, comm, rbuf, rcount, rdt, "recv");
    if (rc == MPI_SUCCESS && at_root)
        rc = coll_inplace(fn, comm, c, sbuf, "sendbuf", 0, coll_root_recv);
    if (rc == MPI_SUCCESS && at_root && vform)
        rc = coll_bufs(fn, comm, mpii_comm_peer_size(c), scounts, displs, sdt, "send");
    if (rc == MPI_SUCCESS && at_root && vform)
        rc = coll_nullv(fn, comm, sbuf, mpii_comm_peer_size(c), scounts, sdt, "send");
    if (rc == MPI_SUCCESS && at_root && !vform)
        rc = coll_buf(fn, comm, scount, sdt, "send");
    if (rc == MPI_SUCCESS && at_root && !vform)
        rc = coll_null(fn, comm, sbuf, scount, sdt, "send");
    if (rc == MPI_SUCCESS && at_root && at_peer)
        rc = coll_alias(fn, comm, rbuf, "recvbuf", sbuf, "sendbuf",
                        coll_slot(c->rank, scount, displs, sdt), rcount);
    if (rc != MPI_SUCCESS)
        return rc;
    coll_sched *s = coll_new(c, mode);
    if (vform)
        rc = coll_scatterv(s, sbuf, scounts, displs, sdt, rbuf, (MPI_Aint)rcount, rdt, root, c);
    else
        rc = coll_scatter(s, sbuf, (MPI_Aint)scount, sdt, rbuf, (MPI_Aint)rcount, rdt, root, c);
    return coll_end(fn, comm, s, rc, mode, req);
}

/* allgather (vform 0: rcount) and allgatherv (vform 1: rcounts, displs) */
static int allgather(const char *fn, int mode, const void *sbuf, MPI_Count scount, MPI_Datatype sdt,
                     void *rbuf, MPI_Count rcount, const MPI_Count rcounts[],
                     const MPI_Aint displs[], MPI_Datatype rdt, int vform, MPI_Comm comm,
                     MPI_Info info, MPI_Request *req)
{
    mpii_comm *c = NULL;
    int rc = coll_begin(fn, mode, comm, info, req, &c);
    if (rc == MPI_SUCCESS)
        rc = coll_inplace(fn, comm, c, sbuf, "sendbuf", 1, NULL);
    if (rc == MPI_SUCCESS)
        rc = coll_inplace(fn, comm, c, rbuf, "recvbuf", 0, coll_in_send);
    if (rc == MPI_SUCCESS && sbuf != MPI_IN_PLACE)
        rc = coll_buf(fn, comm, scount, sdt, "send");
    if (rc == MPI_SUCCESS && sbuf != MPI_IN_PLACE)
        rc = coll_null(fn, comm, sbuf, scount, sdt, "send");
    if (rc == MPI_SUCCESS && vform)
        rc = coll_bufs(fn, comm, mpii_comm_peer_size(c), rcounts, displs, rdt, "recv");
    if (rc == MPI_SUCCESS && vform)
        rc = coll_nullv(fn, comm, rbuf, mpii_comm_peer_size(c), rcounts, rdt, "recv");
    if (rc == MPI_SUCCESS && !vform)
        rc = coll_buf(fn, comm, rcount, rdt, "recv");
    if (rc == MPI_SUCCESS && !vform)
        rc = coll_null(fn, comm, rbuf, rcount, rdt, "recv");
    if (rc == MPI_SUCCESS)
        rc = coll_alias(fn, comm, sbuf, "sendbuf", rbuf, "recvbuf",
                        c->is_inter ? -1 : coll_slot(c->rank, rcount, displs, rdt), scount);
    if (rc != MPI_SUCCESS)
        return rc;
    coll_sched *s = coll_new(c, mode);
    if (vform)
        rc = coll_allgatherv(s, sbuf, (MPI_Aint)scount, sdt, rbuf, rcounts, displs, rdt, c);
    else
        rc = coll_allgather(s, sbuf, (MPI_Aint)scount, sdt, rbuf, (MPI_Aint)rcount, rdt, c);
    return coll_end(fn, comm, s, rc, mode, req);
}

static int alltoall(const char *fn, int mode, const void *sbuf, MPI_Count scount, MPI_Datatype sdt,
                    void *rbuf, MPI_Count rcount, MPI_Datatype rdt, MPI_Comm comm, MPI_Info info,
                    MPI_Request *req)
{
    mpii_comm *c = NULL;
    int rc = coll_begin(fn, mode, comm, info, req, &c);
    if (rc == MPI_SUCCESS)
        rc = coll_inplace(fn, comm, c, sbuf, "sendbuf", 1, NULL);
    if (rc == MPI_SUCCESS)
        rc = coll_inplace(fn, comm, c, rbuf, "recvbuf", 0, coll_in_send);
    if (rc == MPI_SUCCESS && sbuf != MPI_IN_PLACE)
        rc = coll_buf(fn, comm, scount, sdt, "send");
    if (rc == MPI_SUCCESS && sbuf != MPI_IN_PLACE)
        rc = coll_null(fn, comm, sbuf, scount, sdt, "send");
    if (rc == MPI_SUCCESS)
        rc = coll_buf(fn, comm, rcount, rdt, "recv");
    if (rc == MPI_SUCCESS)
        rc = coll_null(fn, comm, rbuf, rcount, rdt, "recv");
    if (rc == MPI_SUCCESS)
        rc = coll_alias(fn, comm, sbuf, "sendbuf", rbuf, "recvbuf", -1, rcount);
    if (rc != MPI_SUCCESS)
        return rc;
    coll_sched *s = coll_new(c, mode);
    return coll_end(fn, comm, s,
                    coll_alltoall(s, sbuf, (MPI_Aint)scount, sdt, rbuf, (MPI_Aint)rcount, rdt, c),
                    mode, req);
}

/* alltoallv (sdts, rdts NULL: sdt, rdt for every peer) and alltoallw (sdts, rdts) */
static int alltoallvw(const char *fn, int mode, const void *sbuf, const MPI_Count scounts[],
                      const MPI_Aint sdispls[], MPI_Datatype sdt, const MPI_Datatype sdts[],
                      void *rbuf, const MPI_Count rcounts[], const MPI_Aint rdispls[],
                      MPI_Datatype rdt, const MPI_Datatype rdts[], int wform, MPI_Comm comm,
                      MPI_Info info, MPI_Request *req)
{
    mpii_comm *c = NULL;
    int inplace = sbuf == MPI_IN_PLACE;
    int rc = coll_begin(fn, mode, comm, info, req, &c);
    if (rc == MPI_SUCCESS)
        rc = coll_inplace(fn, comm, c, sbuf, "sendbuf", 1, NULL);
    if (rc == MPI_SUCCESS)
        rc = coll_inplace(fn, comm, c, rbuf, "recvbuf", 0, coll_in_send);
    if (rc == MPI_SUCCESS && wform && (!rdts || (!inplace && !sdts)))
        rc = mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "sendtypes/recvtypes: NULL array");
    if (rc == MPI_SUCCESS && (!rcounts || !rdispls || (!inplace && (!scounts || !sdispls))))
        rc = mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "counts/displs: NULL array");
    int n = rc == MPI_SUCCESS ? mpii_comm_peer_size(c) : 0;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
        rc = coll_buf(fn, comm, rcounts[i], wform ? rdts[i] : rdt, "recv");
        /* the w form's displacements are bytes: MPI_BOTTOM plus an absolute address is data */
        if (rc == MPI_SUCCESS && !(wform && rdispls[i]))
            rc = coll_null(fn, comm, rbuf, rcounts[i], wform ? rdts[i] : rdt, "recv");
        if (rc == MPI_SUCCESS && !inplace)
            rc = coll_buf(fn, comm, scounts[i], wform ? sdts[i] : sdt, "send");
        if (rc == MPI_SUCCESS && !inplace && !(wform && sdispls[i]))
            rc = coll_null(fn, comm, sbuf, scounts[i], wform ? sdts[i] : sdt, "send");
    }
    /* the same buffer on both sides is an error only if data moves: all counts 0 is fine */
    MPI_Count moved = 0;
    for (int i = 0; i < n && rc == MPI_SUCCESS && !inplace && !moved; i++)
        for (int j = 0; j < n && !moved; j++)
            moved = rcounts[i] > 0 && scounts[j] > 0;
    if (rc == MPI_SUCCESS)
        rc = coll_alias(fn, comm, sbuf, "sendbuf", rbuf, "recvbuf", -1, moved);
    if (rc != MPI_SUCCESS)
        return rc;
    coll_sched *s = coll_new(c, mode);
    if (wform)
        rc = coll_alltoallw(s, sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls, rdts, c);
    else
        rc = coll_alltoallv(s, sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, c);
    return coll_end(fn, comm, s, rc, mode, req);
}

static int reduce(const char *fn, int mode, const void *sbuf, void *rbuf, MPI_Count count,
                  MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm, MPI_Info info,
                  MPI_Request *req)
{
    mpii_comm *c = NULL;
    int at_root = 0, at_peer = 0;
    int rc = coll_begin(fn, mode, comm, info, req, &c);
    if (rc == MPI_SUCCESS)
        rc = coll_root(fn, comm, c, root);
    if (rc == MPI_SUCCESS)
        coll_roles(c, root, &at_root, &at_peer);
    if (rc == MPI_SUCCESS)
        rc = coll_inplace(fn, comm, c, sbuf, "sendbuf", at_root, coll_root_send);
    /* the reduction's checks, of the buffers that are significant here */
    if (rc == MPI_SUCCESS && (at_root || at_peer))
        rc =
            coll_red_args(fn, comm, c, at_peer ? sbuf : NULL, at_root ? rbuf : NULL, count, dt, op);
    if (rc == MPI_SUCCESS && at_peer && sbuf != MPI_IN_PLACE)
        rc = coll_null(fn, comm, sbuf, count, dt, "send");
    if (rc == MPI_SUCCESS && at_root)
        rc = coll_null(fn, comm, rbuf, count, dt, "recv");
    if (rc != MPI_SUCCESS)
        return rc;
    coll_sched *s = coll_new(c, mode);
    return coll_end(fn, comm, s, coll_reduce(s, sbuf, rbuf, (MPI_Aint)count, dt, op, root, c), mode,
                    req);
}

/* allreduce, reduce_scatter_block, scan, exscan: one count, MPI_IN_PLACE as sendbuf */
typedef int (*coll_red_builder)(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count,
                                MPI_Datatype dt, MPI_Op op, mpii_comm *c);

static int allred(const char *fn, int mode, coll_red_builder build, const void *sbuf, void *rbuf,
                  MPI_Count count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Info info,
                  MPI_Request *req)
{
    mpii_comm *c = NULL;
    int rc = coll_begin(fn, mode, comm, info, req, &c);
    if (rc == MPI_SUCCESS && c->is_inter && (build == coll_scan || build == coll_exscan))
        rc = mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_COMM, fn,
                      "comm: an inter-communicator (scans are defined on intra-communicators)");
    if (rc == MPI_SUCCESS)
        rc = coll_red_args(fn, comm, c, sbuf, rbuf, count, dt, op);
    if (rc == MPI_SUCCESS)
        rc = coll_null(fn, comm, sbuf, count, dt, "send");
    /* reduce_scatter_block: count elements arrive here; exscan's rank 0 gets nothing */
    if (rc == MPI_SUCCESS && !(build == coll_exscan && c->rank == 0))
        rc = coll_null(fn, comm, rbuf, count, dt, "recv");
    if (rc != MPI_SUCCESS)
        return rc;
    coll_sched *s = coll_new(c, mode);
    return coll_end(fn, comm, s, build(s, sbuf, rbuf, (MPI_Aint)count, dt, op, c), mode, req);
}

/* rcounts: one entry per process of the local group */
static int reduce_scatter(const char *fn, int mode, const void *sbuf, void *rbuf,
                          const MPI_Count rcounts[], MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                          MPI_Info info, MPI_Request *req)
{
    mpii_comm *c = NULL;
    MPI_Count total = 0;
    int rc = coll_begin(fn, mode, comm, info, req, &c);
    if (rc == MPI_SUCCESS && !rcounts)
        rc = mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "recvcounts: NULL array");
    int n = rc == MPI_SUCCESS ? c->size : 0;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
        rc = coll_buf(fn, comm, rcounts[i], dt, "recv");
        total += rcounts[i];
    }
    if (rc == MPI_SUCCESS)
        rc = coll_red_args(fn, comm, c, sbuf, rbuf, total, dt, op);
    if (rc == MPI_SUCCESS)
        rc = coll_null(fn, comm, sbuf, total, dt, "send");
    if (rc == MPI_SUCCESS)
        rc = coll_null(fn, comm, rbuf, sbuf == MPI_IN_PLACE ? total : rcounts[c->rank], dt, "recv");
    if (rc != MPI_SUCCESS)
        return rc;
    coll_sched *s = coll_new(c, mode);
    return coll_end(fn, comm, s, coll_reduce_scatter(s, sbuf, rbuf, rcounts, dt, op, c), mode, req);
}

/* ---- the v/w collectives: the arrays of either form (binding/twin.h) as the _c form's ---- */

static int gatherv(const char *fn, int mode, const void *sbuf, MPI_Count scount, MPI_Datatype sdt,
                   void *rbuf, b_counts rcounts, b_aints displs, MPI_Datatype rdt, int root,
                   MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    int n = coll_nentries_root(comm, root);
    const MPI_Count *rc_ = b_counts_wide(rcounts, n);
    const MPI_Aint *d = b_aints_wide(displs, n);
    int rc = gather(fn, mode, sbuf, scount, sdt, rbuf, 0, rc_, d, rdt, 1, root, comm, info, req);
    b_aints_free(displs, d);
    b_counts_free(rcounts, rc_);
    return rc;
}

static int scatterv(const char *fn, int mode, const void *sbuf, b_counts scounts, b_aints displs,
                    MPI_Datatype sdt, void *rbuf, MPI_Count rcount, MPI_Datatype rdt, int root,
                    MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    int n = coll_nentries_root(comm, root);
    const MPI_Count *sc = b_counts_wide(scounts, n);
    const MPI_Aint *d = b_aints_wide(displs, n);
    int rc = scatter(fn, mode, sbuf, 0, sc, d, sdt, rbuf, rcount, rdt, 1, root, comm, info, req);
    b_aints_free(displs, d);
    b_counts_free(scounts, sc);
    return rc;
}

static int allgatherv(const char *fn, int mode, const void *sbuf, MPI_Count scount,
                      MPI_Datatype sdt, void *rbuf, b_counts rcounts, b_aints displs,
                      MPI_Datatype rdt, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    int n = coll_nentries(comm, 0);
    const MPI_Count *rc_ = b_counts_wide(rcounts, n);
    const MPI_Aint *d = b_aints_wide(displs, n);
    int rc = allgather(fn, mode, sbuf, scount, sdt, rbuf, 0, rc_, d, rdt, 1, comm, info, req);
    b_aints_free(displs, d);
    b_counts_free(rcounts, rc_);
    return rc;
}

/* alltoallv (sdts, rdts NULL) and alltoallw; in place the send arrays are not read */
static int alltoallvw_twin(const char *fn, int mode, const void *sbuf, b_counts scounts,
                           b_aints sdispls, MPI_Datatype sdt, const MPI_Datatype sdts[], void *rbuf,
                           b_counts rcounts, b_aints rdispls, MPI_Datatype rdt,
                           const MPI_Datatype rdts[], int wform, MPI_Comm comm, MPI_Info info,
                           MPI_Request *req)
{
    int n = coll_nentries(comm, 0), ns = sbuf == MPI_IN_PLACE ? 0 : n;
    const MPI_Count *sc = b_counts_wide(scounts, ns), *rc_ = b_counts_wide(rcounts, n);
    const MPI_Aint *sd = b_aints_wide(sdispls, ns), *rd = b_aints_wide(rdispls, n);
    int rc = alltoallvw(fn, mode, sbuf, sc, sd, sdt, sdts, rbuf, rc_, rd, rdt, rdts, wform, comm,
                        info, req);
    b_aints_free(rdispls, rd);
    b_aints_free(sdispls, sd);
    b_counts_free(rcounts, rc_);
    b_counts_free(scounts, sc);
    return rc;
}

static int reduce_scatter_twin(const char *fn, int mode, const void *sbuf, void *rbuf,
                               b_counts rcounts, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                               MPI_Info info, MPI_Request *req)
{
    const MPI_Count *rc_ = b_counts_wide(rcounts, coll_nentries(comm, 1));
    int rc = reduce_scatter(fn, mode, sbuf, rbuf, rc_, dt, op, comm, info, req);
    b_counts_free(rcounts, rc_);
    return rc;
}

/* ---- Barrier -------------------------------------------------------------------------------- */

int b_Barrier(MPI_Comm comm)
{
    return barrier("MPI_Barrier", COLL_BLOCKING, comm, MPI_INFO_NULL, NULL);
}

int b_Ibarrier(MPI_Comm comm, MPI_Request *req)
{
    return barrier("MPI_Ibarrier", COLL_NONBLOCKING, comm, MPI_INFO_NULL, req);
}

int b_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    return barrier("MPI_Barrier_init", COLL_PERSISTENT, comm, info, req);
}

/* ---- Bcast ---------------------------------------------------------------------------------- */

int b_Bcast(const char *fn, void *buf, MPI_Count count, MPI_Datatype dt, int root, MPI_Comm comm)
{
    return bcast(fn, COLL_BLOCKING, buf, count, dt, root, comm, MPI_INFO_NULL, NULL);
}

int b_Ibcast(const char *fn, void *buf, MPI_Count count, MPI_Datatype dt, int root, MPI_Comm comm,
             MPI_Request *req)
{
    return bcast(fn, COLL_NONBLOCKING, buf, count, dt, root, comm, MPI_INFO_NULL, req);
}

int b_Bcast_init(const char *fn, void *buf, MPI_Count count, MPI_Datatype dt, int root,
                 MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    return bcast(fn, COLL_PERSISTENT, buf, count, dt, root, comm, info, req);
}

/* ---- Gather --------------------------------------------------------------------------------- */

int b_Gather(const char *fn, const void *sbuf, MPI_Count scount, MPI_Datatype sdt, void *rbuf,
             MPI_Count rcount, MPI_Datatype rdt, int root, MPI_Comm comm)
{
    return gather(fn, COLL_BLOCKING, sbuf, scount, sdt, rbuf, rcount, NULL, NULL, rdt, 0, root,
                  comm, MPI_INFO_NULL, NULL);
}

int b_Igather(const char *fn, const void *sbuf, MPI_Count scount, MPI_Datatype sdt, void *rbuf,
              MPI_Count rcount, MPI_Datatype rdt, int root, MPI_Comm comm, MPI_Request *req)
{
    return gather(fn, COLL_NONBLOCKING, sbuf, scount, sdt, rbuf, rcount, NULL, NULL, rdt, 0, root,
                  comm, MPI_INFO_NULL, req);
}

int b_Gather_init(const char *fn, const void *sbuf, MPI_Count scount, MPI_Datatype sdt, void *rbuf,
                  MPI_Count rcount, MPI_Datatype rdt, int root, MPI_Comm comm, MPI_Info info,
                  MPI_Request *req)
{
    return gather(fn, COLL_PERSISTENT, sbuf, scount, sdt, rbuf, rcount, NULL, NULL, rdt, 0, root,
                  comm, info, req);
}

/* ---- Gatherv -------------------------------------------------------------------------------- */

int b_Gatherv(const char *fn, const void *sbuf, MPI_Count scount, MPI_Datatype sdt, void *rbuf,
              b_counts rcounts, b_aints displs, MPI_Datatype rdt, int root, MPI_Comm comm)
{
    return gatherv(fn, COLL_BLOCKING, sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root, comm,
                   MPI_INFO_NULL, NULL);
}

int b_Igatherv(const char *fn, const void *sbuf, MPI_Count scount, MPI_Datatype sdt, void *rbuf,
               b_counts rcounts, b_aints displs, MPI_Datatype rdt, int root, MPI_Comm comm,
               MPI_Request *req)
{
    return gatherv(fn, COLL_NONBLOCKING, sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root, comm,
                   MPI_INFO_NULL, req);
}

int b_Gatherv_init(const char *fn, const void *sbuf, MPI_Count scount, MPI_Datatype sdt, void *rbuf,
                   b_counts rcounts, b_aints displs, MPI_Datatype rdt, int root, MPI_Comm comm,
                   MPI_Info info, MPI_Request *req)
{
    return gatherv(fn, COLL_PERSISTENT, sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root, comm,
                   info, req);
}

/* ---- Scatter -------------------------------------------------------------------------------- */

int b_Scatter(const char *fn, const void *sbuf, MPI_Count scount, MPI_Datatype sdt, void *rbuf,
              MPI_Count rcount, MPI_Datatype rdt, int root, MPI_Comm comm)
{
    return scatter(fn, COLL_BLOCKING, sbuf, scount, NULL, NULL, sdt, rbuf, rcount, rdt, 0, root,
                   comm, MPI_INFO_NULL, NULL);
}

int b_Iscatter(const char *fn, const void *sbuf, MPI_Count scount, MPI_Datatype sdt, void *rbuf,
               MPI_Count rcount, MPI_Datatype rdt, int root, MPI_Comm comm, MPI_Request *req)
{
    return scatter(fn, COLL_NONBLOCKING, sbuf, scount, NULL, NULL, sdt, rbuf, rcount, rdt, 0, root,
                   comm, MPI_INFO_NULL, req);
}

int b_Scatter_init(const char *fn, const void *sbuf, MPI_Count scount, MPI_Datatype sdt, void *rbuf,
                   MPI_Count rcount, MPI_Datatype rdt, int root, MPI_Comm comm, MPI_Info info,
                   MPI_Request *req)
{
    return scatter(fn, COLL_PERSISTENT, sbuf, scount, NULL, NULL, sdt, rbuf, rcount, rdt, 0, root,
                   comm, info, req);
}

/* ---- Scatterv ------------------------------------------------------------------------------- */

int b_Scatterv(const char *fn, const void *sbuf, b_counts scounts, b_aints displs, MPI_Datatype sdt,
               void *rbuf, MPI_Count rcount, MPI_Datatype rdt, int root, MPI_Comm comm)
{
    return scatterv(fn, COLL_BLOCKING, sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root, comm,
                    MPI_INFO_NULL, NULL);
}

int b_Iscatterv(const char *fn, const void *sbuf, b_counts scounts, b_aints displs,
                MPI_Datatype sdt, void *rbuf, MPI_Count rcount, MPI_Datatype rdt, int root,
                MPI_Comm comm, MPI_Request *req)
{
    return scatterv(fn, COLL_NONBLOCKING, sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root, comm,
                    MPI_INFO_NULL, req);
}

int b_Scatterv_init(const char *fn, const void *sbuf, b_counts scounts, b_aints displs,
                    MPI_Datatype sdt, void *rbuf, MPI_Count rcount, MPI_Datatype rdt, int root,
                    MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    return scatterv(fn, COLL_PERSISTENT, sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root, comm,
                    info, req);
}

/* ---- Allgather ------------------------------------------------------------------------------ */

int b_Allgather(const char *fn, const void *sbuf, MPI_Count scount, MPI_Datatype sdt, void *rbuf,
                MPI_Count rcount, MPI_Datatype rdt, MPI_Comm comm)
{
    return allgather(fn, COLL_BLOCKING, sbuf, scount, sdt, rbuf, rcount, NULL, NULL, rdt, 0, comm,
                     MPI_INFO_NULL, NULL);
}

int b_Iallgather(const char *fn, const void *sbuf, MPI_Count scount, MPI_Datatype sdt, void *rbuf,
                 MPI_Count rcount, MPI_Datatype rdt, MPI_Comm comm, MPI_Request *req)
{
    return allgather(fn, COLL_NONBLOCKING, sbuf, scount, sdt, rbuf, rcount, NULL, NULL, rdt, 0,
                     comm, MPI_INFO_NULL, req);
}

int b_Allgather_init(const char *fn, const void *sbuf, MPI_Count scount, MPI_Datatype sdt,
                     void *rbuf, MPI_Count rcount, MPI_Datatype rdt, MPI_Comm comm, MPI_Info info,
                     MPI_Request *req)
{
    return allgather(fn, COLL_PERSISTENT, sbuf, scount, sdt, rbuf, rcount, NULL, NULL, rdt, 0, comm,
                     info, req);
}

/* ---- Allgatherv ----------------------------------------------------------------------------- */

int b_Allgatherv(const char *fn, const void *sbuf, MPI_Count scount, MPI_Datatype sdt, void *rbuf,
                 b_counts rcounts, b_aints displs, MPI_Datatype rdt, MPI_Comm comm)
{
    return allgatherv(fn, COLL_BLOCKING, sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm,
                      MPI_INFO_NULL, NULL);
}

int b_Iallgatherv(const char *fn, const void *sbuf, MPI_Count scount, MPI_Datatype sdt, void *rbuf,
                  b_counts rcounts, b_aints displs, MPI_Datatype rdt, MPI_Comm comm,
                  MPI_Request *req)
{
    return allgatherv(fn, COLL_NONBLOCKING, sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm,
                      MPI_INFO_NULL, req);
}

int b_Allgatherv_init(const char *fn, const void *sbuf, MPI_Count scount, MPI_Datatype sdt,
                      void *rbuf, b_counts rcounts, b_aints displs, MPI_Datatype rdt, MPI_Comm comm,
                      MPI_Info info, MPI_Request *req)
{
    return allgatherv(fn, COLL_PERSISTENT, sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm,
                      info, req);
}

/* ---- Alltoall ------------------------------------------------------------------------------- */

int b_Alltoall(const char *fn, const void *sbuf, MPI_Count scount, MPI_Datatype sdt, void *rbuf,
               MPI_Count rcount, MPI_Datatype rdt, MPI_Comm comm)
{
    return alltoall(fn, COLL_BLOCKING, sbuf, scount, sdt, rbuf, rcount, rdt, comm, MPI_INFO_NULL,
                    NULL);
}

int b_Ialltoall(const char *fn, const void *sbuf, MPI_Count scount, MPI_Datatype sdt, void *rbuf,
                MPI_Count rcount, MPI_Datatype rdt, MPI_Comm comm, MPI_Request *req)
{
    return alltoall(fn, COLL_NONBLOCKING, sbuf, scount, sdt, rbuf, rcount, rdt, comm, MPI_INFO_NULL,
                    req);
}

int b_Alltoall_init(const char *fn, const void *sbuf, MPI_Count scount, MPI_Datatype sdt,
                    void *rbuf, MPI_Count rcount, MPI_Datatype rdt, MPI_Comm comm, MPI_Info info,
                    MPI_Request *req)
{
    return alltoall(fn, COLL_PERSISTENT, sbuf, scount, sdt, rbuf, rcount, rdt, comm, info, req);
}

/* ---- Alltoallv ------------------------------------------------------------------------------ */

int b_Alltoallv(const char *fn, const void *sbuf, b_counts scounts, b_aints sdispls,
                MPI_Datatype sdt, void *rbuf, b_counts rcounts, b_aints rdispls, MPI_Datatype rdt,
                MPI_Comm comm)
{
    return alltoallvw_twin(fn, COLL_BLOCKING, sbuf, scounts, sdispls, sdt, NULL, rbuf, rcounts,
                           rdispls, rdt, NULL, 0, comm, MPI_INFO_NULL, NULL);
}

int b_Ialltoallv(const char *fn, const void *sbuf, b_counts scounts, b_aints sdispls,
                 MPI_Datatype sdt, void *rbuf, b_counts rcounts, b_aints rdispls, MPI_Datatype rdt,
                 MPI_Comm comm, MPI_Request *req)
{
    return alltoallvw_twin(fn, COLL_NONBLOCKING, sbuf, scounts, sdispls, sdt, NULL, rbuf, rcounts,
                           rdispls, rdt, NULL, 0, comm, MPI_INFO_NULL, req);
}

int b_Alltoallv_init(const char *fn, const void *sbuf, b_counts scounts, b_aints sdispls,
                     MPI_Datatype sdt, void *rbuf, b_counts rcounts, b_aints rdispls,
                     MPI_Datatype rdt, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    return alltoallvw_twin(fn, COLL_PERSISTENT, sbuf, scounts, sdispls, sdt, NULL, rbuf, rcounts,
                           rdispls, rdt, NULL, 0, comm, info, req);
}

/* ---- Alltoallw ------------------------------------------------------------------------------ */

int b_Alltoallw(const char *fn, const void *sbuf, b_counts scounts, b_aints sdispls,
                const MPI_Datatype sdts[], void *rbuf, b_counts rcounts, b_aints rdispls,
                const MPI_Datatype rdts[], MPI_Comm comm)
{
    return alltoallvw_twin(fn, COLL_BLOCKING, sbuf, scounts, sdispls, MPI_DATATYPE_NULL, sdts, rbuf,
                           rcounts, rdispls, MPI_DATATYPE_NULL, rdts, 1, comm, MPI_INFO_NULL, NULL);
}

int b_Ialltoallw(const char *fn, const void *sbuf, b_counts scounts, b_aints sdispls,
                 const MPI_Datatype sdts[], void *rbuf, b_counts rcounts, b_aints rdispls,
                 const MPI_Datatype rdts[], MPI_Comm comm, MPI_Request *req)
{
    return alltoallvw_twin(fn, COLL_NONBLOCKING, sbuf, scounts, sdispls, MPI_DATATYPE_NULL, sdts,
                           rbuf, rcounts, rdispls, MPI_DATATYPE_NULL, rdts, 1, comm, MPI_INFO_NULL,
                           req);
}

int b_Alltoallw_init(const char *fn, const void *sbuf, b_counts scounts, b_aints sdispls,
                     const MPI_Datatype sdts[], void *rbuf, b_counts rcounts, b_aints rdispls,
                     const MPI_Datatype rdts[], MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    return alltoallvw_twin(fn, COLL_PERSISTENT, sbuf, scounts, sdispls, MPI_DATATYPE_NULL, sdts,
                           rbuf, rcounts, rdispls, MPI_DATATYPE_NULL, rdts, 1, comm, info, req);
}

/* ---- Reduce --------------------------------------------------------------------------------- */

int b_Reduce(const char *fn, const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dt,
             MPI_Op op, int root, MPI_Comm comm)
{
    return reduce(fn, COLL_BLOCKING, sbuf, rbuf, count, dt, op, root, comm, MPI_INFO_NULL, NULL);
}

int b_Ireduce(const char *fn, const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dt,
              MPI_Op op, int root, MPI_Comm comm, MPI_Request *req)
{
    return reduce(fn, COLL_NONBLOCKING, sbuf, rbuf, count, dt, op, root, comm, MPI_INFO_NULL, req);
}

int b_Reduce_init(const char *fn, const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dt,
                  MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    return reduce(fn, COLL_PERSISTENT, sbuf, rbuf, count, dt, op, root, comm, info, req);
}

/* ---- Allreduce ------------------------------------------------------------------------------ */

int b_Allreduce(const char *fn, const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dt,
                MPI_Op op, MPI_Comm comm)
{
    return allred(fn, COLL_BLOCKING, coll_allreduce, sbuf, rbuf, count, dt, op, comm, MPI_INFO_NULL,
                  NULL);
}

int b_Iallreduce(const char *fn, const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dt,
                 MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    return allred(fn, COLL_NONBLOCKING, coll_allreduce, sbuf, rbuf, count, dt, op, comm,
                  MPI_INFO_NULL, req);
}

int b_Allreduce_init(const char *fn, const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dt,
                     MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    return allred(fn, COLL_PERSISTENT, coll_allreduce, sbuf, rbuf, count, dt, op, comm, info, req);
}

/* ---- Reduce_scatter_block ------------------------------------------------------------------- */

int b_Reduce_scatter_block(const char *fn, const void *sbuf, void *rbuf, MPI_Count rcount,
                           MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    return allred(fn, COLL_BLOCKING, coll_reduce_scatter_block, sbuf, rbuf, rcount, dt, op, comm,
                  MPI_INFO_NULL, NULL);
}

int b_Ireduce_scatter_block(const char *fn, const void *sbuf, void *rbuf, MPI_Count rcount,
                            MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    return allred(fn, COLL_NONBLOCKING, coll_reduce_scatter_block, sbuf, rbuf, rcount, dt, op, comm,
                  MPI_INFO_NULL, req);
}

int b_Reduce_scatter_block_init(const char *fn, const void *sbuf, void *rbuf, MPI_Count rcount,
                                MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                MPI_Request *req)
{
    return allred(fn, COLL_PERSISTENT, coll_reduce_scatter_block, sbuf, rbuf, rcount, dt, op, comm,
                  info, req);
}

/* ---- Reduce_scatter ------------------------------------------------------------------------- */

int b_Reduce_scatter(const char *fn, const void *sbuf, void *rbuf, b_counts rcounts,
                     MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    return reduce_scatter_twin(fn, COLL_BLOCKING, sbuf, rbuf, rcounts, dt, op, comm, MPI_INFO_NULL,
                               NULL);
}

int b_Ireduce_scatter(const char *fn, const void *sbuf, void *rbuf, b_counts rcounts,
                      MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    return reduce_scatter_twin(fn, COLL_NONBLOCKING, sbuf, rbuf, rcounts, dt, op, comm,
                               MPI_INFO_NULL, req);
}

int b_Reduce_scatter_init(const char *fn, const void *sbuf, void *rbuf, b_counts rcounts,
                          MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Info info,
                          MPI_Request *req)
{
    return reduce_scatter_twin(fn, COLL_PERSISTENT, sbuf, rbuf, rcounts, dt, op, comm, info, req);
}

/* ---- Scan ----------------------------------------------------------------------------------- */

int b_Scan(const char *fn, const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dt,
           MPI_Op op, MPI_Comm comm)
{
    return allred(fn, COLL_BLOCKING, coll_scan, sbuf, rbuf, count, dt, op, comm, MPI_INFO_NULL,
                  NULL);
}

int b_Iscan(const char *fn, const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dt,
            MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    return allred(fn, COLL_NONBLOCKING, coll_scan, sbuf, rbuf, count, dt, op, comm, MPI_INFO_NULL,
                  req);
}

int b_Scan_init(const char *fn, const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dt,
                MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    return allred(fn, COLL_PERSISTENT, coll_scan, sbuf, rbuf, count, dt, op, comm, info, req);
}

/* ---- Exscan --------------------------------------------------------------------------------- */

int b_Exscan(const char *fn, const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dt,
             MPI_Op op, MPI_Comm comm)
{
    return allred(fn, COLL_BLOCKING, coll_exscan, sbuf, rbuf, count, dt, op, comm, MPI_INFO_NULL,
                  NULL);
}

int b_Iexscan(const char *fn, const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dt,
              MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    return allred(fn, COLL_NONBLOCKING, coll_exscan, sbuf, rbuf, count, dt, op, comm, MPI_INFO_NULL,
                  req);
}

int b_Exscan_init(const char *fn, const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dt,
                  MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    return allred(fn, COLL_PERSISTENT, coll_exscan, sbuf, rbuf, count, dt, op, comm, info, req);
}
