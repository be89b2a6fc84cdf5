/* Blocking collective bindings (MPI 4.1 chapter 6): argument checks, then
 * src/mpi/coll. The int forms convert their arrays and share the _c code. */
#include "mpi/mpii.h"
#include "mpi/coll/coll.h"
#include "mpi/op/op.h"

#include <stdlib.h>

/* ---- checks ----------------------------------------------------------------------------- */

static int coll_comm(const char *fn, MPI_Comm comm, mpii_comm **out)
{
    mpii_comm *c = mpii_comm_get(comm);
    if (!c)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_COMM, fn, "comm: invalid communicator");
    if (c->is_inter)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                        "inter-communicator collectives not implemented yet");
    *out = c;
    return MPI_SUCCESS;
}

/* a (count, datatype) pair named `what` ("sendcount"/"sendtype" ...) */
static int coll_buf(const char *fn, MPI_Comm comm, MPI_Count count, MPI_Datatype dt,
                    const char *what)
{
    if (count < 0)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_COUNT, fn, "%scount=%lld is negative", what,
                        count);
    mpii_dtype *t = mpii_dtype_get(dt);
    if (!t)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_TYPE, fn, "%stype: invalid datatype", what);
    if (!t->committed)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_TYPE, fn,
                        "%stype: not committed (call MPI_Type_commit)", what);
    return MPI_SUCCESS;
}

static int coll_bufs(const char *fn, MPI_Comm comm, int n, const MPI_Count counts[],
                     const MPI_Aint displs[], MPI_Datatype dt, const char *what)
{
    if (!counts || !displs)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "%scounts/displs: NULL array", what);
    for (int i = 0; i < n; i++) {
        int rc = coll_buf(fn, comm, counts[i], dt, what);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

static int coll_root(const char *fn, MPI_Comm comm, const mpii_comm *c, int root)
{
    if (root < 0 || root >= c->size)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ROOT, fn,
                        "root=%d is not a valid rank: the communicator has %d ranks", root,
                        c->size);
    return MPI_SUCCESS;
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
                        mpii_op_name(op), t && t->name[0] ? t->name : "(derived)");
    }
    return MPI_SUCCESS;
}

static int coll_alias(const char *fn, MPI_Comm comm, const void *sbuf, const void *rbuf,
                      MPI_Count count)
{
    if (count > 0 && sbuf == rbuf && sbuf != MPI_BOTTOM)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_BUFFER, fn,
                        "sendbuf and recvbuf are the same buffer (use MPI_IN_PLACE)");
    return MPI_SUCCESS;
}

static int coll_no_inplace(const char *fn, MPI_Comm comm, const void *buf, const char *what)
{
    if (buf == MPI_IN_PLACE)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_BUFFER, fn,
                        "%s: MPI_IN_PLACE is not allowed here (only at the root)", what);
    return MPI_SUCCESS;
}

static int coll_done(const char *fn, MPI_Comm comm, int rc)
{
    if (rc == MPI_SUCCESS)
        return MPI_SUCCESS;
    if (rc == MPI_ERR_TRUNCATE)
        return mpii_err(MPII_OBJ_COMM, comm, rc, fn,
                        "message truncated: counts or datatypes do not match between processes");
    return mpii_err(MPII_OBJ_COMM, comm, rc, fn, "the collective operation failed");
}

/* int arrays of the non-_c forms; NULL stays NULL */
static MPI_Count *coll_counts(const int *a, int n)
{
    if (!a)
        return NULL;
    MPI_Count *v = util_malloc((size_t)n * sizeof *v + 1);
    for (int i = 0; i < n; i++)
        v[i] = a[i];
    return v;
}

static MPI_Aint *coll_displs(const int *a, int n)
{
    if (!a)
        return NULL;
    MPI_Aint *v = util_malloc((size_t)n * sizeof *v + 1);
    for (int i = 0; i < n; i++)
        v[i] = a[i];
    return v;
}

static int coll_size(MPI_Comm comm)
{
    mpii_comm *c = mpii_comm_get(comm);
    return c ? c->size : 0;
}

static int coll_is_root(MPI_Comm comm, int root)
{
    mpii_comm *c = mpii_comm_get(comm);
    return c && c->rank == root;
}

/* ---- barrier, bcast ------------------------------------------------------------------------ */

int PMPI_Barrier(MPI_Comm comm)
{
    mpii_comm *c;
    int rc = coll_comm("MPI_Barrier", comm, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    return coll_done("MPI_Barrier", comm, mpii_barrier(c));
}

static int coll_bcast(const char *fn, void *buf, MPI_Count count, MPI_Datatype dt, int root,
                      MPI_Comm comm)
{
    mpii_comm *c;
    int rc = coll_comm(fn, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = coll_buf(fn, comm, count, dt, "");
    if (rc == MPI_SUCCESS)
        rc = coll_root(fn, comm, c, root);
    if (rc != MPI_SUCCESS)
        return rc;
    return coll_done(fn, comm, mpii_bcast(buf, count, dt, root, c));
}

int PMPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm)
{
    return coll_bcast("MPI_Bcast", buf, count, dt, root, comm);
}

int PMPI_Bcast_c(void *buf, MPI_Count count, MPI_Datatype dt, int root, MPI_Comm comm)
{
    return coll_bcast("MPI_Bcast_c", buf, count, dt, root, comm);
}

/* ---- reductions ------------------------------------------------------------------------------ */

/* checks of (sendbuf, recvbuf, count, datatype, op) on comm */
static int coll_red_args(const char *fn, MPI_Comm comm, const void *sbuf, const void *rbuf,
                         MPI_Count count, MPI_Datatype dt, MPI_Op op)
{
    int rc = coll_buf(fn, comm, count, dt, "");
    if (rc == MPI_SUCCESS)
        rc = coll_op(fn, comm, op, dt);
    if (rc == MPI_SUCCESS)
        rc = coll_alias(fn, comm, sbuf, rbuf, count);
    return rc;
}

static int coll_reduce(const char *fn, const void *sbuf, void *rbuf, MPI_Count count,
                       MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm)
{
    mpii_comm *c;
    int rc = coll_comm(fn, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = coll_root(fn, comm, c, root);
    if (rc == MPI_SUCCESS)
        rc = coll_red_args(fn, comm, sbuf, c->rank == root ? rbuf : NULL, count, dt, op);
    if (rc == MPI_SUCCESS && c->rank != root)
        rc = coll_no_inplace(fn, comm, sbuf, "sendbuf");
    if (rc != MPI_SUCCESS)
        return rc;
    return coll_done(fn, comm, mpii_reduce(sbuf, rbuf, count, dt, op, root, c));
}

int PMPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
                MPI_Comm comm)
{
    return coll_reduce("MPI_Reduce", sbuf, rbuf, count, dt, op, root, comm);
}

int PMPI_Reduce_c(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dt, MPI_Op op,
                  int root, MPI_Comm comm)
{
    return coll_reduce("MPI_Reduce_c", sbuf, rbuf, count, dt, op, root, comm);
}

/* allreduce, scan, exscan: same arguments, MPI_IN_PLACE allowed everywhere */
typedef int (*coll_redfn)(const void *, void *, MPI_Aint, MPI_Datatype, MPI_Op, mpii_comm *);

static int coll_allred(const char *fn, coll_redfn f, const void *sbuf, void *rbuf, MPI_Count count,
                       MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    mpii_comm *c;
    int rc = coll_comm(fn, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = coll_red_args(fn, comm, sbuf, rbuf, count, dt, op);
    if (rc != MPI_SUCCESS)
        return rc;
    return coll_done(fn, comm, f(sbuf, rbuf, count, dt, op, c));
}

int PMPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                   MPI_Comm comm)
{
    return coll_allred("MPI_Allreduce", mpii_allreduce, sbuf, rbuf, count, dt, op, comm);
}

int PMPI_Allreduce_c(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dt, MPI_Op op,
                     MPI_Comm comm)
{
    return coll_allred("MPI_Allreduce_c", mpii_allreduce, sbuf, rbuf, count, dt, op, comm);
}

int PMPI_Scan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    return coll_allred("MPI_Scan", mpii_scan, sbuf, rbuf, count, dt, op, comm);
}

int PMPI_Scan_c(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dt, MPI_Op op,
                MPI_Comm comm)
{
    return coll_allred("MPI_Scan_c", mpii_scan, sbuf, rbuf, count, dt, op, comm);
}

int PMPI_Exscan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    return coll_allred("MPI_Exscan", mpii_exscan, sbuf, rbuf, count, dt, op, comm);
}

int PMPI_Exscan_c(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dt, MPI_Op op,
                  MPI_Comm comm)
{
    return coll_allred("MPI_Exscan_c", mpii_exscan, sbuf, rbuf, count, dt, op, comm);
}

static int coll_redscat_block(const char *fn, const void *sbuf, void *rbuf, MPI_Count rcount,
                              MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    mpii_comm *c;
    int rc = coll_comm(fn, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = coll_red_args(fn, comm, sbuf, rbuf, rcount, dt, op);
    if (rc != MPI_SUCCESS)
        return rc;
    return coll_done(fn, comm, mpii_reduce_scatter_block(sbuf, rbuf, rcount, dt, op, c));
}

int PMPI_Reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype dt, MPI_Op op,
                              MPI_Comm comm)
{
    return coll_redscat_block("MPI_Reduce_scatter_block", sbuf, rbuf, rcount, dt, op, comm);
}

int PMPI_Reduce_scatter_block_c(const void *sbuf, void *rbuf, MPI_Count rcount, MPI_Datatype dt,
                                MPI_Op op, MPI_Comm comm)
{
    return coll_redscat_block("MPI_Reduce_scatter_block_c", sbuf, rbuf, rcount, dt, op, comm);
}

static int coll_redscat(const char *fn, const void *sbuf, void *rbuf, const MPI_Count rcounts[],
                        MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    mpii_comm *c;
    int rc = coll_comm(fn, comm, &c);
    if (rc == MPI_SUCCESS && !rcounts)
        rc = mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "recvcounts: NULL array");
    MPI_Count total = 0;
    for (int i = 0; rc == MPI_SUCCESS && i < c->size; i++) {
        rc = coll_buf(fn, comm, rcounts[i], dt, "recv");
        total += rcounts[i];
    }
    if (rc == MPI_SUCCESS)
        rc = coll_red_args(fn, comm, sbuf, rbuf, total, dt, op);
    if (rc != MPI_SUCCESS)
        return rc;
    return coll_done(fn, comm, mpii_reduce_scatter(sbuf, rbuf, rcounts, dt, op, c));
}

int PMPI_Reduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype dt,
                        MPI_Op op, MPI_Comm comm)
{
    MPI_Count *rc_ = coll_counts(rcounts, coll_size(comm));
    int rc = coll_redscat("MPI_Reduce_scatter", sbuf, rbuf, rc_, dt, op, comm);
    free(rc_);
    return rc;
}

int PMPI_Reduce_scatter_c(const void *sbuf, void *rbuf, const MPI_Count rcounts[], MPI_Datatype dt,
                          MPI_Op op, MPI_Comm comm)
{
    return coll_redscat("MPI_Reduce_scatter_c", sbuf, rbuf, rcounts, dt, op, comm);
}

/* ---- gather, scatter --------------------------------------------------------------------------
 */

static int coll_gather(const char *fn, const void *sbuf, MPI_Count scount, MPI_Datatype sdt,
                       void *rbuf, MPI_Count rcount, const MPI_Count rcounts[],
                       const MPI_Aint displs[], MPI_Datatype rdt, int root, MPI_Comm comm)
{
    mpii_comm *c;
    int rc = coll_comm(fn, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = coll_root(fn, comm, c, root);
    if (rc != MPI_SUCCESS)
        return rc;
    int at_root = c->rank == root;
    if (!at_root)
        rc = coll_no_inplace(fn, comm, sbuf, "sendbuf");
    if (rc == MPI_SUCCESS && sbuf != MPI_IN_PLACE)
        rc = coll_buf(fn, comm, scount, sdt, "send");
    if (rc == MPI_SUCCESS && at_root && !rcounts)
        rc = coll_buf(fn, comm, rcount, rdt, "recv");
    if (rc == MPI_SUCCESS && at_root && rcounts)
        rc = coll_bufs(fn, comm, c->size, rcounts, displs, rdt, "recv");
    if (rc == MPI_SUCCESS && at_root)
        rc = coll_alias(fn, comm, sbuf, rbuf, scount);
    if (rc != MPI_SUCCESS)
        return rc;
    if (rcounts)
        rc = mpii_gatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root, c);
    else
        rc = mpii_gather(sbuf, scount, sdt, rbuf, rcount, rdt, root, c);
    return coll_done(fn, comm, rc);
}

int PMPI_Gather(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                MPI_Datatype rdt, int root, MPI_Comm comm)
{
    return coll_gather("MPI_Gather", sbuf, scount, sdt, rbuf, rcount, NULL, NULL, rdt, root, comm);
}

int PMPI_Gather_c(const void *sbuf, MPI_Count scount, MPI_Datatype sdt, void *rbuf,
                  MPI_Count rcount, MPI_Datatype rdt, int root, MPI_Comm comm)
{
    return coll_gather("MPI_Gather_c", sbuf, scount, sdt, rbuf, rcount, NULL, NULL, rdt, root,
                       comm);
}

int PMPI_Gatherv(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, const int rcounts[],
                 const int displs[], MPI_Datatype rdt, int root, MPI_Comm comm)
{
    static const MPI_Count none[1];
    static const MPI_Aint nodispl[1];
    int at_root = coll_is_root(comm, root);
    MPI_Count *rc_ = at_root ? coll_counts(rcounts, coll_size(comm)) : NULL;
    MPI_Aint *d = at_root ? coll_displs(displs, coll_size(comm)) : NULL;
    /* non-roots: the arrays are not significant, pass dummies that mark the v form */
    int rc = coll_gather("MPI_Gatherv", sbuf, scount, sdt, rbuf, 0, at_root ? rc_ : none,
                         at_root ? d : nodispl, rdt, root, comm);
    free(d);
    free(rc_);
    return rc;
}

int PMPI_Gatherv_c(const void *sbuf, MPI_Count scount, MPI_Datatype sdt, void *rbuf,
                   const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rdt, int root,
                   MPI_Comm comm)
{
    static const MPI_Count none[1];
    static const MPI_Aint nodispl[1];
    int at_root = coll_is_root(comm, root);
    return coll_gather("MPI_Gatherv_c", sbuf, scount, sdt, rbuf, 0, at_root ? rcounts : none,
                       at_root ? displs : nodispl, rdt, root, comm);
}

static int coll_scatter(const char *fn, const void *sbuf, MPI_Count scount,
                        const MPI_Count scounts[], const MPI_Aint displs[], MPI_Datatype sdt,
                        void *rbuf, MPI_Count rcount, MPI_Datatype rdt, int root, MPI_Comm comm)
{
    mpii_comm *c;
    int rc = coll_comm(fn, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = coll_root(fn, comm, c, root);
    if (rc != MPI_SUCCESS)
        return rc;
    int at_root = c->rank == root;
    if (!at_root)
        rc = coll_no_inplace(fn, comm, rbuf, "recvbuf");
    if (rc == MPI_SUCCESS && rbuf != MPI_IN_PLACE)
        rc = coll_buf(fn, comm, rcount, rdt, "recv");
    if (rc == MPI_SUCCESS && at_root && !scounts)
        rc = coll_buf(fn, comm, scount, sdt, "send");
    if (rc == MPI_SUCCESS && at_root && scounts)
        rc = coll_bufs(fn, comm, c->size, scounts, displs, sdt, "send");
    if (rc == MPI_SUCCESS && at_root)
        rc = coll_alias(fn, comm, sbuf, rbuf, rcount);
    if (rc != MPI_SUCCESS)
        return rc;
    if (scounts)
        rc = mpii_scatterv(sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root, c);
    else
        rc = mpii_scatter(sbuf, scount, sdt, rbuf, rcount, rdt, root, c);
    return coll_done(fn, comm, rc);
}

int PMPI_Scatter(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                 MPI_Datatype rdt, int root, MPI_Comm comm)
{
    return coll_scatter("MPI_Scatter", sbuf, scount, NULL, NULL, sdt, rbuf, rcount, rdt, root,
                        comm);
}

int PMPI_Scatter_c(const void *sbuf, MPI_Count scount, MPI_Datatype sdt, void *rbuf,
                   MPI_Count rcount, MPI_Datatype rdt, int root, MPI_Comm comm)
{
    return coll_scatter("MPI_Scatter_c", sbuf, scount, NULL, NULL, sdt, rbuf, rcount, rdt, root,
                        comm);
}

int PMPI_Scatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype sdt,
                  void *rbuf, int rcount, MPI_Datatype rdt, int root, MPI_Comm comm)
{
    static const MPI_Count none[1];
    static const MPI_Aint nodispl[1];
    int at_root = coll_is_root(comm, root);
    MPI_Count *sc = at_root ? coll_counts(scounts, coll_size(comm)) : NULL;
    MPI_Aint *d = at_root ? coll_displs(displs, coll_size(comm)) : NULL;
    int rc = coll_scatter("MPI_Scatterv", sbuf, 0, at_root ? sc : none, at_root ? d : nodispl, sdt,
                          rbuf, rcount, rdt, root, comm);
    free(d);
    free(sc);
    return rc;
}

int PMPI_Scatterv_c(const void *sbuf, const MPI_Count scounts[], const MPI_Aint displs[],
                    MPI_Datatype sdt, void *rbuf, MPI_Count rcount, MPI_Datatype rdt, int root,
                    MPI_Comm comm)
{
    static const MPI_Count none[1];
    static const MPI_Aint nodispl[1];
    int at_root = coll_is_root(comm, root);
    return coll_scatter("MPI_Scatterv_c", sbuf, 0, at_root ? scounts : none,
                        at_root ? displs : nodispl, sdt, rbuf, rcount, rdt, root, comm);
}

/* ---- allgather, alltoall ----------------------------------------------------------------------
 */

static int coll_allgather(const char *fn, const void *sbuf, MPI_Count scount, MPI_Datatype sdt,
                          void *rbuf, MPI_Count rcount, const MPI_Count rcounts[],
                          const MPI_Aint displs[], MPI_Datatype rdt, int vform, MPI_Comm comm)
{
    mpii_comm *c;
    int rc = coll_comm(fn, comm, &c);
    if (rc == MPI_SUCCESS && sbuf != MPI_IN_PLACE)
        rc = coll_buf(fn, comm, scount, sdt, "send");
    if (rc == MPI_SUCCESS && !vform)
        rc = coll_buf(fn, comm, rcount, rdt, "recv");
    if (rc == MPI_SUCCESS && vform)
        rc = coll_bufs(fn, comm, c->size, rcounts, displs, rdt, "recv");
    if (rc == MPI_SUCCESS && sbuf != MPI_IN_PLACE)
        rc = coll_alias(fn, comm, sbuf, rbuf, scount);
    if (rc != MPI_SUCCESS)
        return rc;
    if (vform)
        rc = mpii_allgatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, c);
    else
        rc = mpii_allgather(sbuf, scount, sdt, rbuf, rcount, rdt, c);
    return coll_done(fn, comm, rc);
}

int PMPI_Allgather(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                   MPI_Datatype rdt, MPI_Comm comm)
{
    return coll_allgather("MPI_Allgather", sbuf, scount, sdt, rbuf, rcount, NULL, NULL, rdt, 0,
                          comm);
}

int PMPI_Allgather_c(const void *sbuf, MPI_Count scount, MPI_Datatype sdt, void *rbuf,
                     MPI_Count rcount, MPI_Datatype rdt, MPI_Comm comm)
{
    return coll_allgather("MPI_Allgather_c", sbuf, scount, sdt, rbuf, rcount, NULL, NULL, rdt, 0,
                          comm);
}

int PMPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, const int rcounts[],
                    const int displs[], MPI_Datatype rdt, MPI_Comm comm)
{
    MPI_Count *rc_ = coll_counts(rcounts, coll_size(comm));
    MPI_Aint *d = coll_displs(displs, coll_size(comm));
    int rc = coll_allgather("MPI_Allgatherv", sbuf, scount, sdt, rbuf, 0, rc_, d, rdt, 1, comm);
    free(d);
    free(rc_);
    return rc;
}

int PMPI_Allgatherv_c(const void *sbuf, MPI_Count scount, MPI_Datatype sdt, void *rbuf,
                      const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rdt,
                      MPI_Comm comm)
{
    return coll_allgather("MPI_Allgatherv_c", sbuf, scount, sdt, rbuf, 0, rcounts, displs, rdt, 1,
                          comm);
}

static int coll_alltoall(const char *fn, const void *sbuf, MPI_Count scount, MPI_Datatype sdt,
                         void *rbuf, MPI_Count rcount, MPI_Datatype rdt, MPI_Comm comm)
{
    mpii_comm *c;
    int rc = coll_comm(fn, comm, &c);
    if (rc == MPI_SUCCESS && sbuf != MPI_IN_PLACE)
        rc = coll_buf(fn, comm, scount, sdt, "send");
    if (rc == MPI_SUCCESS)
        rc = coll_buf(fn, comm, rcount, rdt, "recv");
    if (rc == MPI_SUCCESS)
        rc = coll_alias(fn, comm, sbuf, rbuf, rcount);
    if (rc != MPI_SUCCESS)
        return rc;
    return coll_done(fn, comm, mpii_alltoall(sbuf, scount, sdt, rbuf, rcount, rdt, c));
}

int PMPI_Alltoall(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                  MPI_Datatype rdt, MPI_Comm comm)
{
    return coll_alltoall("MPI_Alltoall", sbuf, scount, sdt, rbuf, rcount, rdt, comm);
}

int PMPI_Alltoall_c(const void *sbuf, MPI_Count scount, MPI_Datatype sdt, void *rbuf,
                    MPI_Count rcount, MPI_Datatype rdt, MPI_Comm comm)
{
    return coll_alltoall("MPI_Alltoall_c", sbuf, scount, sdt, rbuf, rcount, rdt, comm);
}

/* alltoallv (one type per side: sdts/rdts NULL, sdt/rdt used) and alltoallw */
static int coll_alltoallvw(const char *fn, const void *sbuf, const MPI_Count scounts[],
                           const MPI_Aint sdispls[], MPI_Datatype sdt, const MPI_Datatype sdts[],
                           void *rbuf, const MPI_Count rcounts[], const MPI_Aint rdispls[],
                           MPI_Datatype rdt, const MPI_Datatype rdts[], int wform, MPI_Comm comm)
{
    mpii_comm *c;
    int rc = coll_comm(fn, comm, &c);
    if (rc == MPI_SUCCESS && wform && !rdts)
        rc = mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "recvtypes: NULL array");
    if (rc == MPI_SUCCESS && wform && sbuf != MPI_IN_PLACE && !sdts)
        rc = mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "sendtypes: NULL array");
    if (rc != MPI_SUCCESS)
        return rc;
    if (!rcounts || !rdispls || (sbuf != MPI_IN_PLACE && (!scounts || !sdispls)))
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "counts/displs: NULL array");
    for (int i = 0; i < c->size && rc == MPI_SUCCESS; i++) {
        rc = coll_buf(fn, comm, rcounts[i], wform ? rdts[i] : rdt, "recv");
        if (rc == MPI_SUCCESS && sbuf != MPI_IN_PLACE)
            rc = coll_buf(fn, comm, scounts[i], wform ? sdts[i] : sdt, "send");
    }
    if (rc == MPI_SUCCESS && sbuf == rbuf && sbuf != MPI_BOTTOM)
        rc = mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_BUFFER, fn,
                      "sendbuf and recvbuf are the same buffer (use MPI_IN_PLACE)");
    if (rc != MPI_SUCCESS)
        return rc;
    if (wform)
        rc = mpii_alltoallw(sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls, rdts, c);
    else
        rc = mpii_alltoallv(sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, c);
    return coll_done(fn, comm, rc);
}

int PMPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype sdt,
                   void *rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rdt,
                   MPI_Comm comm)
{
    int n = coll_size(comm);
    int inplace = sbuf == MPI_IN_PLACE;
    MPI_Count *sc = inplace ? NULL : coll_counts(scounts, n), *rc_ = coll_counts(rcounts, n);
    MPI_Aint *sd = inplace ? NULL : coll_displs(sdispls, n), *rd = coll_displs(rdispls, n);
    int rc = coll_alltoallvw("MPI_Alltoallv", sbuf, sc, sd, sdt, NULL, rbuf, rc_, rd, rdt, NULL, 0,
                             comm);
    free(rd);
    free(sd);
    free(rc_);
    free(sc);
    return rc;
}

int PMPI_Alltoallv_c(const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[],
                     MPI_Datatype sdt, void *rbuf, const MPI_Count rcounts[],
                     const MPI_Aint rdispls[], MPI_Datatype rdt, MPI_Comm comm)
{
    return coll_alltoallvw("MPI_Alltoallv_c", sbuf, scounts, sdispls, sdt, NULL, rbuf, rcounts,
                           rdispls, rdt, NULL, 0, comm);
}

int PMPI_Alltoallw(const void *sbuf, const int scounts[], const int sdispls[],
                   const MPI_Datatype sdts[], void *rbuf, const int rcounts[], const int rdispls[],
                   const MPI_Datatype rdts[], MPI_Comm comm)
{
    int n = coll_size(comm);
    int inplace = sbuf == MPI_IN_PLACE;
    MPI_Count *sc = inplace ? NULL : coll_counts(scounts, n), *rc_ = coll_counts(rcounts, n);
    MPI_Aint *sd = inplace ? NULL : coll_displs(sdispls, n), *rd = coll_displs(rdispls, n);
    int rc =
        coll_alltoallvw("MPI_Alltoallw", sbuf, sc, sd, MPI_DATATYPE_NULL, inplace ? NULL : sdts,
                        rbuf, rc_, rd, MPI_DATATYPE_NULL, rdts, 1, comm);
    free(rd);
    free(sd);
    free(rc_);
    free(sc);
    return rc;
}

int PMPI_Alltoallw_c(const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[],
                     const MPI_Datatype sdts[], void *rbuf, const MPI_Count rcounts[],
                     const MPI_Aint rdispls[], const MPI_Datatype rdts[], MPI_Comm comm)
{
    int inplace = sbuf == MPI_IN_PLACE;
    return coll_alltoallvw("MPI_Alltoallw_c", sbuf, scounts, sdispls, MPI_DATATYPE_NULL,
                           inplace ? NULL : sdts, rbuf, rcounts, rdispls, MPI_DATATYPE_NULL, rdts,
                           1, comm);
}
