/*
 * coll_noalias: a collective whose send and receive buffers alias (not MPI_IN_PLACE) is
 * MPI_ERR_BUFFER, found from the call's own arguments before any message (MPICH's
 * errors/coll/noalias2 and noalias3, and their persistent forms):
 *   - the rooted ones (gather(v), scatter(v), reduce) are called at the root only: a root
 *     that started to communicate would wait for the others forever (the test's timeout);
 *   - allgather(v) pass as sendbuf this process's own block of recvbuf (&buf[rank]), which
 *     every rank does: before, only rank 0 (whose block is buf itself) saw the alias and the
 *     others went into the collective and hung (blocking) or returned success (nonblocking);
 *   - the others pass one buffer for both;
 * each in its blocking, MPI_I... and ..._init form. Then, so that nothing waits unmatched,
 * one barrier; and the MPI_IN_PLACE forms of the same calls still work.
 */
#include "mtest.h"

#define N 2

enum { BLOCKING, NONBLOCKING, PERSISTENT, NMODES };
static const char *mode_name[NMODES] = {"blocking", "nonblocking", "persistent"};

static int rank, size;
static int *buf, *counts, *displs;
static MPI_Datatype *types;

/* one call in one mode: ret is its return code; a request it made is freed */
static void expect_buffer(const char *name, int mode, int rc, MPI_Request *req)
{
    char what[96];
    snprintf(what, sizeof what, "%s (%s)", name, mode_name[mode]);
    mtest_check_class(what, rc, MPI_ERR_BUFFER);
    if (rc == MPI_SUCCESS && req && *req != MPI_REQUEST_NULL)
        MPI_Request_free(req);
}

static void run(int mode)
{
    MPI_Comm comm = MPI_COMM_WORLD;
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Info in = MPI_INFO_NULL;
    int *sb = buf;
#define CALL(name, blocking, nonblocking, persistent)   \
    expect_buffer(name, mode,                           \
                  mode == BLOCKING      ? (blocking)    \
                  : mode == NONBLOCKING ? (nonblocking) \
                                        : (persistent), \
                  &r)
    if (rank == 0) {
        CALL("gather", MPI_Gather(sb, N, MPI_INT, sb, N, MPI_INT, 0, comm),
             MPI_Igather(sb, N, MPI_INT, sb, N, MPI_INT, 0, comm, &r),
             MPI_Gather_init(sb, N, MPI_INT, sb, N, MPI_INT, 0, comm, in, &r));
        CALL("gatherv", MPI_Gatherv(sb, N, MPI_INT, sb, counts, displs, MPI_INT, 0, comm),
             MPI_Igatherv(sb, N, MPI_INT, sb, counts, displs, MPI_INT, 0, comm, &r),
             MPI_Gatherv_init(sb, N, MPI_INT, sb, counts, displs, MPI_INT, 0, comm, in, &r));
        CALL("scatter", MPI_Scatter(sb, N, MPI_INT, sb, N, MPI_INT, 0, comm),
             MPI_Iscatter(sb, N, MPI_INT, sb, N, MPI_INT, 0, comm, &r),
             MPI_Scatter_init(sb, N, MPI_INT, sb, N, MPI_INT, 0, comm, in, &r));
        CALL("scatterv", MPI_Scatterv(sb, counts, displs, MPI_INT, sb, N, MPI_INT, 0, comm),
             MPI_Iscatterv(sb, counts, displs, MPI_INT, sb, N, MPI_INT, 0, comm, &r),
             MPI_Scatterv_init(sb, counts, displs, MPI_INT, sb, N, MPI_INT, 0, comm, in, &r));
        CALL("reduce", MPI_Reduce(sb, sb, N, MPI_INT, MPI_SUM, 0, comm),
             MPI_Ireduce(sb, sb, N, MPI_INT, MPI_SUM, 0, comm, &r),
             MPI_Reduce_init(sb, sb, N, MPI_INT, MPI_SUM, 0, comm, in, &r));
    }
    /* the last rank as root, with its own block of recvbuf as sendbuf */
    if (rank == size - 1) {
        int *mine = buf + rank * N;
        CALL("gather, own block", MPI_Gather(mine, N, MPI_INT, sb, N, MPI_INT, rank, comm),
             MPI_Igather(mine, N, MPI_INT, sb, N, MPI_INT, rank, comm, &r),
             MPI_Gather_init(mine, N, MPI_INT, sb, N, MPI_INT, rank, comm, in, &r));
        CALL("gatherv, own block",
             MPI_Gatherv(mine, N, MPI_INT, sb, counts, displs, MPI_INT, rank, comm),
             MPI_Igatherv(mine, N, MPI_INT, sb, counts, displs, MPI_INT, rank, comm, &r),
             MPI_Gatherv_init(mine, N, MPI_INT, sb, counts, displs, MPI_INT, rank, comm, in, &r));
        CALL("scatter, own block", MPI_Scatter(sb, N, MPI_INT, mine, N, MPI_INT, rank, comm),
             MPI_Iscatter(sb, N, MPI_INT, mine, N, MPI_INT, rank, comm, &r),
             MPI_Scatter_init(sb, N, MPI_INT, mine, N, MPI_INT, rank, comm, in, &r));
        CALL("scatterv, own block",
             MPI_Scatterv(sb, counts, displs, MPI_INT, mine, N, MPI_INT, rank, comm),
             MPI_Iscatterv(sb, counts, displs, MPI_INT, mine, N, MPI_INT, rank, comm, &r),
             MPI_Scatterv_init(sb, counts, displs, MPI_INT, mine, N, MPI_INT, rank, comm, in, &r));
    }
    int *own = buf + rank * N;
    CALL("allgather, own block", MPI_Allgather(own, N, MPI_INT, sb, N, MPI_INT, comm),
         MPI_Iallgather(own, N, MPI_INT, sb, N, MPI_INT, comm, &r),
         MPI_Allgather_init(own, N, MPI_INT, sb, N, MPI_INT, comm, in, &r));
    CALL("allgatherv, own block",
         MPI_Allgatherv(own, N, MPI_INT, sb, counts, displs, MPI_INT, comm),
         MPI_Iallgatherv(own, N, MPI_INT, sb, counts, displs, MPI_INT, comm, &r),
         MPI_Allgatherv_init(own, N, MPI_INT, sb, counts, displs, MPI_INT, comm, in, &r));
    CALL("allgather", MPI_Allgather(sb, N, MPI_INT, sb, N, MPI_INT, comm),
         MPI_Iallgather(sb, N, MPI_INT, sb, N, MPI_INT, comm, &r),
         MPI_Allgather_init(sb, N, MPI_INT, sb, N, MPI_INT, comm, in, &r));
    CALL("alltoall", MPI_Alltoall(sb, N, MPI_INT, sb, N, MPI_INT, comm),
         MPI_Ialltoall(sb, N, MPI_INT, sb, N, MPI_INT, comm, &r),
         MPI_Alltoall_init(sb, N, MPI_INT, sb, N, MPI_INT, comm, in, &r));
    CALL(
        "alltoallv", MPI_Alltoallv(sb, counts, displs, MPI_INT, sb, counts, displs, MPI_INT, comm),
        MPI_Ialltoallv(sb, counts, displs, MPI_INT, sb, counts, displs, MPI_INT, comm, &r),
        MPI_Alltoallv_init(sb, counts, displs, MPI_INT, sb, counts, displs, MPI_INT, comm, in, &r));
    CALL("alltoallw", MPI_Alltoallw(sb, counts, displs, types, sb, counts, displs, types, comm),
         MPI_Ialltoallw(sb, counts, displs, types, sb, counts, displs, types, comm, &r),
         MPI_Alltoallw_init(sb, counts, displs, types, sb, counts, displs, types, comm, in, &r));
    CALL("allreduce", MPI_Allreduce(sb, sb, N, MPI_INT, MPI_SUM, comm),
         MPI_Iallreduce(sb, sb, N, MPI_INT, MPI_SUM, comm, &r),
         MPI_Allreduce_init(sb, sb, N, MPI_INT, MPI_SUM, comm, in, &r));
    CALL("reduce_scatter", MPI_Reduce_scatter(sb, sb, counts, MPI_INT, MPI_SUM, comm),
         MPI_Ireduce_scatter(sb, sb, counts, MPI_INT, MPI_SUM, comm, &r),
         MPI_Reduce_scatter_init(sb, sb, counts, MPI_INT, MPI_SUM, comm, in, &r));
    CALL("reduce_scatter_block", MPI_Reduce_scatter_block(sb, sb, N, MPI_INT, MPI_SUM, comm),
         MPI_Ireduce_scatter_block(sb, sb, N, MPI_INT, MPI_SUM, comm, &r),
         MPI_Reduce_scatter_block_init(sb, sb, N, MPI_INT, MPI_SUM, comm, in, &r));
    CALL("scan", MPI_Scan(sb, sb, N, MPI_INT, MPI_SUM, comm),
         MPI_Iscan(sb, sb, N, MPI_INT, MPI_SUM, comm, &r),
         MPI_Scan_init(sb, sb, N, MPI_INT, MPI_SUM, comm, in, &r));
    CALL("exscan", MPI_Exscan(sb, sb, N, MPI_INT, MPI_SUM, comm),
         MPI_Iexscan(sb, sb, N, MPI_INT, MPI_SUM, comm, &r),
         MPI_Exscan_init(sb, sb, N, MPI_INT, MPI_SUM, comm, in, &r));
#undef CALL
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    buf = mtest_malloc((size_t)(N * size) * sizeof *buf);
    counts = mtest_malloc((size_t)size * sizeof *counts);
    displs = mtest_malloc((size_t)size * sizeof *displs);
    types = mtest_malloc((size_t)size * sizeof *types);
    for (int i = 0; i < size; i++) {
        counts[i] = N;
        displs[i] = i * N;
        types[i] = MPI_INT;
    }
    for (int mode = 0; mode < NMODES; mode++)
        run(mode);
    mtest_check_rc("MPI_Barrier after the refused calls", MPI_Barrier(MPI_COMM_WORLD));

    /* the same exchanges said the right way */
    for (int i = 0; i < N * size; i++)
        buf[i] = i / N == rank ? 100 * rank + i % N : -1;
    mtest_check_rc("MPI_Allgather in place", MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf,
                                                           N, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < N * size; i++)
        mtest_check_int("MPI_Allgather in place: data", buf[i], 100 * (i / N) + i % N);
    for (int i = 0; i < N * size; i++)
        buf[i] = i / N == rank ? 100 * rank + i % N : -1;
    mtest_check_rc("MPI_Gather in place", MPI_Gather(rank == 0 ? MPI_IN_PLACE : buf + rank * N, N,
                                                     MPI_INT, buf, N, MPI_INT, 0, MPI_COMM_WORLD));
    if (rank == 0)
        for (int i = 0; i < N * size; i++)
            mtest_check_int("MPI_Gather in place: data", buf[i], 100 * (i / N) + i % N);
    free(buf);
    free(counts);
    free(displs);
    free(types);
    return mtest_finalize();
}
