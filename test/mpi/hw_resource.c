/*
 * MPI_Get_hw_resource_info (MPI 4.1): an info object naming the resource
 * type DCFA-MPI knows (the node's shared memory), usable with
 * MPI_Comm_split_type(MPI_COMM_TYPE_HW_GUIDED) and (RESOURCE_GUIDED, which
 * also takes mpi_pset_name; it gave MPI_COMM_NULL whatever the info), which
 * then group the ranks of each node.
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    MPI_Info hw;
    char val[MPI_MAX_INFO_VAL];
    int flag = 0, len = sizeof val;

    mtest_init(&argc, &argv);
    mtest_check_rc("MPI_Get_hw_resource_info", MPI_Get_hw_resource_info(&hw));
    MPI_Info_get_string(hw, "mpi_hw_resource_type", &len, val, &flag);
    mtest_check(flag && !strcmp(val, "mpi_shared_memory"), "mpi_hw_resource_type: flag %d '%s'",
                flag, flag ? val : "");
    MPI_Comm node, shared;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, hw, &node);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
    int result = MPI_UNEQUAL;
    mtest_check(node != MPI_COMM_NULL, "HW_GUIDED with the resource's info gave MPI_COMM_NULL");
    if (node != MPI_COMM_NULL) {
        MPI_Comm_compare(node, shared, &result);
        mtest_check(result == MPI_CONGRUENT, "HW_GUIDED and SHARED split differ (%d)", result);
        MPI_Comm_free(&node);
    }
    /* MPI_COMM_TYPE_RESOURCE_GUIDED: the same resource, a process set, or nothing */
    MPI_Comm rg;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, 0, hw, &rg);
    mtest_check(rg != MPI_COMM_NULL, "RESOURCE_GUIDED with mpi_shared_memory gave MPI_COMM_NULL");
    if (rg != MPI_COMM_NULL) {
        MPI_Comm_compare(rg, shared, &result);
        mtest_check(result == MPI_CONGRUENT, "RESOURCE_GUIDED and SHARED split differ (%d)", result);
        MPI_Comm_free(&rg);
    }
    MPI_Info ps;
    MPI_Info_create(&ps);
    MPI_Info_set(ps, "mpi_pset_name", "mpi://SELF");
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, 0, ps, &rg);
    int rgsize = -1;
    if (rg != MPI_COMM_NULL) {
        MPI_Comm_size(rg, &rgsize);
        MPI_Comm_free(&rg);
    }
    mtest_check(rgsize == 1, "RESOURCE_GUIDED mpi://SELF: size %d", rgsize);
    MPI_Info_free(&ps);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, 0, MPI_INFO_NULL, &rg);
    mtest_check(rg == MPI_COMM_NULL, "RESOURCE_GUIDED without a resource: not MPI_COMM_NULL");
    MPI_Comm_free(&shared);
    MPI_Info_free(&hw);
    return mtest_finalize();
}
