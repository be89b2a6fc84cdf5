/*
 * local_first: a collective call whose arguments are wrong on this process alone returns
 * the error before it communicates (issue 38's sweep: "every local argument checked before
 * any communication"). Rank 0 alone makes each call below with one argument wrong; a call
 * that sent or waited for a message first would hang there (the test's timeout), or take
 * the others' part of a later call. Then every rank meets in a barrier.
 *
 * Covered: collectives (count, root, op, datatype, arrays, aliased buffers), their
 * MPI_I and _init forms, neighbourhood collectives, communicator and topology
 * constructors, window constructors, MPI_File_open / set_view, MPI_Comm_idup.
 */
#include "mtest.h"

static int rank, size;

static void expect(const char *what, int rc, int cls) { mtest_check_class(what, rc, cls); }

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm w = MPI_COMM_WORLD;
    int *buf = mtest_malloc(64 * (size_t)size * sizeof *buf);
    int *counts = mtest_malloc((size_t)size * sizeof *counts);
    int *displs = mtest_malloc((size_t)size * sizeof *displs);
    for (int i = 0; i < size; i++) {
        counts[i] = 1;
        displs[i] = i;
    }
    MPI_Datatype loose;
    MPI_Type_contiguous(2, MPI_INT, &loose); /* never committed */
    MPI_Group wg;
    MPI_Comm_group(w, &wg);

    if (rank == 0) {
        MPI_Request r;
        MPI_Comm nc;
        MPI_Win win;
        void *base;
        expect("MPI_Bcast(count -1)", MPI_Bcast(buf, -1, MPI_INT, 0, w), MPI_ERR_COUNT);
        expect("MPI_Bcast(root size)", MPI_Bcast(buf, 1, MPI_INT, size, w), MPI_ERR_ROOT);
        expect("MPI_Ibcast(type not committed)", MPI_Ibcast(buf, 1, loose, 0, w, &r), MPI_ERR_TYPE);
        expect("MPI_Reduce(MPI_REPLACE)", MPI_Reduce(buf, buf + 8, 1, MPI_INT, MPI_REPLACE, 0, w),
               MPI_ERR_OP);
        expect("MPI_Allreduce_init(MPI_MINLOC on MPI_INT)",
               MPI_Allreduce_init(buf, buf + 8, 1, MPI_INT, MPI_MINLOC, w, MPI_INFO_NULL, &r),
               MPI_ERR_OP);
        expect("MPI_Gatherv(recvcounts NULL at the root)",
               MPI_Gatherv(buf, 1, MPI_INT, buf + 8, NULL, displs, MPI_INT, 0, w), MPI_ERR_ARG);
        expect("MPI_Iscatterv(count -1)",
               MPI_Iscatterv(buf, counts, displs, MPI_INT, buf + 8, -1, MPI_INT, 0, w, &r),
               MPI_ERR_COUNT);
        expect("MPI_Alltoallw(sendtypes NULL)",
               MPI_Alltoallw(buf, counts, displs, NULL, buf + 8, counts, displs, NULL, w),
               MPI_ERR_ARG);
        expect("MPI_Iallgather(recvbuf MPI_IN_PLACE)",
               MPI_Iallgather(buf, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, w, &r), MPI_ERR_BUFFER);
        expect("MPI_Scan(sendbuf = recvbuf)", MPI_Scan(buf, buf, 1, MPI_INT, MPI_SUM, w),
               MPI_ERR_BUFFER);
        expect("MPI_Ibarrier(request NULL)", MPI_Ibarrier(w, NULL), MPI_ERR_ARG);
        expect("MPI_Neighbor_allgather(no topology)",
               MPI_Neighbor_allgather(buf, 1, MPI_INT, buf + 8, 1, MPI_INT, w), MPI_ERR_TOPOLOGY);
        expect("MPI_Comm_split(color -5)", MPI_Comm_split(w, -5, 0, &nc), MPI_ERR_ARG);
        expect("MPI_Comm_split_type(type 12345)",
               MPI_Comm_split_type(w, 12345, 0, MPI_INFO_NULL, &nc), MPI_ERR_ARG);
        expect("MPI_Comm_create(MPI_GROUP_NULL)", MPI_Comm_create(w, MPI_GROUP_NULL, &nc),
               MPI_ERR_GROUP);
        expect("MPI_Comm_create_group(tag -1)", MPI_Comm_create_group(w, wg, -1, &nc), MPI_ERR_TAG);
        expect("MPI_Comm_dup_with_info(not an info)",
               MPI_Comm_dup_with_info(w, (MPI_Info)0x12345, &nc), MPI_ERR_INFO);
        expect("MPI_Comm_idup(newcomm NULL)", MPI_Comm_idup(w, NULL, &r), MPI_ERR_ARG);
        int dims[2] = {size + 1, size + 1}, periods[2] = {0, 0};
        expect("MPI_Cart_create(grid larger than comm)",
               MPI_Cart_create(w, 2, dims, periods, 0, &nc), MPI_ERR_ARG);
        expect("MPI_Cart_create(ndims -1)", MPI_Cart_create(w, -1, dims, periods, 0, &nc),
               MPI_ERR_DIMS);
        int src[1] = {size}, wt[1] = {1};
        expect("MPI_Dist_graph_create_adjacent(source out of range)",
               MPI_Dist_graph_create_adjacent(w, 1, src, wt, 0, NULL, wt, MPI_INFO_NULL, 0, &nc),
               MPI_ERR_RANK);
        expect("MPI_Intercomm_create(local_leader out of range)",
               MPI_Intercomm_create(w, size, w, 0, 7, &nc), MPI_ERR_RANK);
        expect("MPI_Win_create(size -1)", MPI_Win_create(buf, -1, 1, MPI_INFO_NULL, w, &win),
               MPI_ERR_SIZE);
        expect("MPI_Win_create(disp_unit 0)", MPI_Win_create(buf, 4, 0, MPI_INFO_NULL, w, &win),
               MPI_ERR_DISP);
        expect("MPI_Win_allocate(size -1)", MPI_Win_allocate(-1, 1, MPI_INFO_NULL, w, &base, &win),
               MPI_ERR_SIZE);
        MPI_File fh;
        expect("MPI_File_open(amode with two access modes)",
               MPI_File_open(w, "/tmp/dcfa-local-first", MPI_MODE_RDONLY | MPI_MODE_RDWR,
                             MPI_INFO_NULL, &fh),
               MPI_ERR_AMODE);
    }
    mtest_check_rc("MPI_Barrier after the refused calls", MPI_Barrier(w));
    MPI_Group_free(&wg);
    MPI_Type_free(&loose);
    free(buf);
    free(counts);
    free(displs);
    return mtest_finalize();
}
