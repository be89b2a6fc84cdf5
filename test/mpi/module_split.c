/* MPI_Comm_split_type(MPIX_COMM_TYPE_MODULE) and MPI_COMM_TYPE_HW_GUIDED with
 * mpi_hw_resource_type=mpix_module give the communicator of the ranks of my module
 * (docs/gateway.md, "Modules"). The modules expected: MTEST_MODULES=0,0,1,1 (one id per world
 * rank, the multi-host stage twonet sets it: cluster and booster hosts), else by DCFA_MODULE
 * as each rank sees it (lastenv= in testlist.txt gives the last rank one of its own), the
 * ranks without it forming one module (on one host they share every network). The key orders
 * ranks; an inter-communicator is refused with MPI_ERR_COMM. */
#include "mtest.h"

static int expected_module(int rank)
{
    const char *list = getenv("MTEST_MODULES");
    if (list) {
        for (int i = 0; i < rank && list; i++) {
            list = strchr(list, ',');
            list = list ? list + 1 : NULL;
        }
        return list ? atoi(list) : -2;
    }
    const char *m = getenv("DCFA_MODULE");
    return m && atoi(m) >= 0 ? atoi(m) : -1;
}

static void check_module_comm(MPI_Comm mod, const int *want, int rank, int size, const char *how)
{
    int msize, n = 0;
    MPI_Comm_size(mod, &msize);
    for (int r = 0; r < size; r++)
        if (want[r] == want[rank])
            n++;
    mtest_check(msize == n, "%s: module communicator of %d ranks, want %d", how, msize, n);
    /* its members are exactly the world ranks of my module, in key order (the reversed
     * world rank below) */
    int *got = mtest_malloc((size_t)msize * sizeof(int));
    MPI_Allgather(&rank, 1, MPI_INT, got, 1, MPI_INT, mod);
    for (int r = size - 1, i = 0; r >= 0; r--)
        if (want[r] == want[rank]) {
            if (i < msize)
                mtest_check(got[i] == r, "%s: member %d is world rank %d, want %d", how, i, got[i],
                            r);
            i++;
        }
    free(got);
}

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int me = expected_module(rank), *want = mtest_malloc((size_t)size * sizeof(int));
    MPI_Allgather(&me, 1, MPI_INT, want, 1, MPI_INT, MPI_COMM_WORLD);

    MPI_Comm mod, hw;
    mtest_check_rc("MPI_Comm_split_type(MPIX_COMM_TYPE_MODULE)",
                   MPI_Comm_split_type(MPI_COMM_WORLD, MPIX_COMM_TYPE_MODULE, size - rank,
                                       MPI_INFO_NULL, &mod));
    check_module_comm(mod, want, rank, size, "MPIX_COMM_TYPE_MODULE");
    /* a collective within the module */
    int one = 1, sum = 0, n = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, mod);
    for (int r = 0; r < size; r++)
        n += want[r] == me;
    mtest_check_int("the module's sum", sum, n);
    MPI_Comm_free(&mod);

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_hw_resource_type", "mpix_module");
    mtest_check_rc(
        "MPI_Comm_split_type(MPI_COMM_TYPE_HW_GUIDED, mpix_module)",
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, size - rank, info, &hw));
    if (hw != MPI_COMM_NULL) {
        check_module_comm(hw, want, rank, size, "MPI_COMM_TYPE_HW_GUIDED mpix_module");
        MPI_Comm_free(&hw);
    } else {
        mtest_check(0, "HW_GUIDED with mpix_module gave MPI_COMM_NULL");
    }
    MPI_Info_free(&info);

    /* an inter-communicator: MPI_ERR_COMM, nothing made */
    if (size >= 2) {
        MPI_Comm half, inter, x = MPI_COMM_NULL;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 7, &inter);
        MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
        int rc = MPI_Comm_split_type(inter, MPIX_COMM_TYPE_MODULE, 0, MPI_INFO_NULL, &x);
        mtest_check_class("MODULE on an inter-communicator", rc, MPI_ERR_COMM);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }
    free(want);
    return mtest_finalize();
}
