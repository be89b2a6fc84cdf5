/* Partitioned point-to-point bindings (MPI 4.1 chapter 4). */
#include "mpi/mpii.h"
#include "mpi/info/info.h"
#include "mpi/pt2pt/pt2pt.h"
#include "binding/impl.h"

#define PART_TAG_UB ((1 << 30) - 1)

static int part_init(const char *fn, int is_send, void *buf, int partitions, MPI_Count count,
                     MPI_Datatype dt, int peer, int tag, MPI_Comm comm, MPI_Info info,
                     MPI_Request *req)
{
    mpii_comm *c = mpii_comm_get(comm);
    if (!c)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_COMM, fn, "comm: invalid communicator");
    if (partitions < 0)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "partitions=%d is negative",
                        partitions);
    if (count < 0)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_COUNT, fn, "count=%lld is negative",
                        (long long)count);
    dt = mpii_pt2pt_type(dt, count);
    mpii_dtype *t = mpii_dtype_get(dt);
    if (!t || !t->committed)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_TYPE, fn, "datatype: %s",
                        t ? "not committed (call MPI_Type_commit)" : "invalid datatype");
    int n = mpii_comm_peer_size(c);
    if (peer != MPI_PROC_NULL && (peer < 0 || peer >= n))
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_RANK, fn,
                        "%s=%d is not a valid rank (no wildcards): the communicator has %d %sranks",
                        is_send ? "dest" : "source", peer, n, c->is_inter ? "remote " : "");
    if (tag < 0 || tag > PART_TAG_UB)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_TAG, fn,
                        "tag=%d is outside 0..MPI_TAG_UB (%d; no MPI_ANY_TAG)", tag, PART_TAG_UB);
    if (info != MPI_INFO_NULL && !mpii_info_exists(info))
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_INFO, fn, "info: invalid info object");
    if (!req)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_REQUEST, fn, "request: NULL pointer");
    core_req *r = NULL;
    int rc = mpii_part_init(is_send, buf, partitions, count, dt, peer, tag, c, &r);
    if (rc != MPI_SUCCESS)
        return mpii_err(MPII_OBJ_COMM, comm, rc, fn, "cannot start the pairing with rank %d", peer);
    *req = MPII_HANDLE(MPII_KIND_REQUEST, r->id);
    return MPI_SUCCESS;
}

int b_Psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int dest,
                 int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return part_init("MPI_Psend_init", 1, (void *)buf, partitions, count, datatype, dest, tag, comm,
                     info, request);
}

int b_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source,
                 int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return part_init("MPI_Precv_init", 0, buf, partitions, count, datatype, source, tag, comm, info,
                     request);
}

/* the partitioned request behind h, active, of the wanted side */
static int part_req(const char *fn, MPI_Request h, int want_send, core_req **out)
{
    core_req *r = mpii_req_get(h);
    if (!r || r->kind != MPII_REQ_PERSIST || !r->owner)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_REQUEST, fn,
                        "request: not a partitioned request");
    if (want_send >= 0 && mpii_part_is_send(r) != want_send)
        return mpii_err(MPII_OBJ_COMM, r->up.obj, MPI_ERR_REQUEST, fn,
                        "request: a partitioned %s request", want_send ? "receive" : "send");
    if (!mpii_persist_of(r)->active)
        return mpii_err(MPII_OBJ_COMM, r->up.obj, MPI_ERR_REQUEST, fn,
                        "request: not active (call MPI_Start first)");
    *out = r;
    return MPI_SUCCESS;
}

static int part_ready(const char *fn, core_req *r, int p)
{
    int n = mpii_part_partitions(r);
    if (p < 0 || p >= n)
        return mpii_err(MPII_OBJ_COMM, r->up.obj, MPI_ERR_ARG, fn, "partition=%d is outside 0..%d",
                        p, n - 1);
    int rc = mpii_part_ready(r, p);
    if (rc == MPI_ERR_ARG)
        return mpii_err(MPII_OBJ_COMM, r->up.obj, rc, fn,
                        "partition %d was already marked ready in this round", p);
    if (rc != MPI_SUCCESS)
        return mpii_err(MPII_OBJ_COMM, r->up.obj, rc, fn, "cannot send partition %d", p);
    return MPI_SUCCESS;
}

int b_Pready(int partition, MPI_Request request)
{
    core_req *r = NULL;
    int rc = part_req("MPI_Pready", request, 1, &r);
    return rc != MPI_SUCCESS ? rc : part_ready("MPI_Pready", r, partition);
}

int b_Pready_range(int partition_low, int partition_high, MPI_Request request)
{
    static const char fn[] = "MPI_Pready_range";
    core_req *r = NULL;
    int rc = part_req(fn, request, 1, &r);
    if (rc != MPI_SUCCESS)
        return rc;
    if (partition_low > partition_high)
        return mpii_err(MPII_OBJ_COMM, r->up.obj, MPI_ERR_ARG, fn,
                        "partition_low=%d > partition_high=%d", partition_low, partition_high);
    for (int p = partition_low; p <= partition_high && rc == MPI_SUCCESS; p++)
        rc = part_ready(fn, r, p);
    return rc;
}

int b_Pready_list(int length, const int array_of_partitions[], MPI_Request request)
{
    static const char fn[] = "MPI_Pready_list";
    core_req *r = NULL;
    int rc = part_req(fn, request, 1, &r);
    if (rc != MPI_SUCCESS)
        return rc;
    if (length < 0 || (length > 0 && !array_of_partitions))
        return mpii_err(MPII_OBJ_COMM, r->up.obj, MPI_ERR_ARG, fn,
                        "length=%d with array_of_partitions=%p", length,
                        (const void *)array_of_partitions);
    for (int i = 0; i < length && rc == MPI_SUCCESS; i++)
        rc = part_ready(fn, r, array_of_partitions[i]);
    return rc;
}

int b_Parrived(MPI_Request request, int partition, int *flag)
{
    static const char fn[] = "MPI_Parrived";
    core_req *r = mpii_req_get(request);
    if (r && r->kind == MPII_REQ_PERSIST && r->owner && !mpii_persist_of(r)->active) {
        if (flag)
            *flag = 1; /* an inactive request: nothing to wait for */
        return MPI_SUCCESS;
    }
    int rc = part_req(fn, request, 0, &r);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!flag)
        return mpii_err(MPII_OBJ_COMM, r->up.obj, MPI_ERR_ARG, fn, "flag: NULL pointer");
    int n = mpii_part_partitions(r);
    if (partition < 0 || partition >= n)
        return mpii_err(MPII_OBJ_COMM, r->up.obj, MPI_ERR_ARG, fn, "partition=%d is outside 0..%d",
                        partition, n - 1);
    *flag = mpii_part_arrived(r, partition);
    return MPI_SUCCESS;
}
