/*
 * ctor_null: a communicator constructor that fails leaves MPI_COMM_NULL in its output
 * (MPICH's errors/topo/cartsmall checks it after MPI_Cart_create of a size x size grid;
 * before, the output kept whatever the program had there). Every call fails on its
 * local arguments at every rank, so nobody waits. Each also returns its error class.
 */
#include "mtest.h"

#define JUNK ((MPI_Comm)0x7777)

/* out is read after the call (not as an argument evaluated beside it) */
static void expect_null(const char *what, int rc, int cls, const MPI_Comm *out)
{
    mtest_check_class(what, rc, cls);
    mtest_check(*out == MPI_COMM_NULL, "%s: the output is 0x%x, not MPI_COMM_NULL", what,
                (unsigned)*out);
}

int main(int argc, char **argv)
{
    int size;
    mtest_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    MPI_Comm out = JUNK;
    int dims[2] = {size + 1, size + 1}, periods[2] = {0, 0};
    expect_null("MPI_Cart_create(grid larger than comm)",
                MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &out), MPI_ERR_ARG, &out);
    out = JUNK;
    int edges[1] = {0};
    int nnodes = size + 1, *idx = mtest_malloc((size_t)nnodes * sizeof *idx);
    for (int i = 0; i < nnodes; i++)
        idx[i] = 0;
    expect_null("MPI_Graph_create(more nodes than comm)",
                MPI_Graph_create(MPI_COMM_WORLD, nnodes, idx, edges, 0, &out), MPI_ERR_ARG, &out);
    free(idx);
    out = JUNK;
    expect_null("MPI_Comm_split(color -5)", MPI_Comm_split(MPI_COMM_WORLD, -5, 0, &out),
                MPI_ERR_ARG, &out);
    out = JUNK;
    expect_null("MPI_Comm_create(MPI_GROUP_NULL)",
                MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_NULL, &out), MPI_ERR_GROUP, &out);
    out = JUNK;
    expect_null("MPI_Comm_dup(MPI_COMM_NULL)", MPI_Comm_dup(MPI_COMM_NULL, &out), MPI_ERR_COMM,
                &out);
    out = JUNK;
    int srcs[1] = {size}, w[1] = {1};
    expect_null("MPI_Dist_graph_create_adjacent(source out of range)",
                MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, srcs, w, 0, NULL, w,
                                               MPI_INFO_NULL, 0, &out),
                MPI_ERR_RANK, &out);
    out = JUNK;
    expect_null("MPI_Intercomm_merge(an intra-communicator)",
                MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &out), MPI_ERR_COMM, &out);
    return mtest_finalize();
}
