/*
 * MPI 4.1 names the null handles: MPI_Comm_get_name(MPI_COMM_NULL) is
 * "MPI_COMM_NULL", MPI_Type_get_name(MPI_DATATYPE_NULL) "MPI_DATATYPE_NULL" and
 * MPI_Win_get_name(MPI_WIN_NULL) "MPI_WIN_NULL" (they were invalid-handle errors).
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;

    mtest_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    mtest_check_rc("MPI_Comm_get_name(MPI_COMM_NULL)",
                   MPI_Comm_get_name(MPI_COMM_NULL, name, &len));
    mtest_check(!strcmp(name, "MPI_COMM_NULL") && len == 13, "comm null name '%s' %d", name, len);
    len = -1;
    mtest_check_rc("MPI_Type_get_name(MPI_DATATYPE_NULL)",
                   MPI_Type_get_name(MPI_DATATYPE_NULL, name, &len));
    mtest_check(!strcmp(name, "MPI_DATATYPE_NULL") && len == 17, "datatype null name '%s' %d", name,
                len);
    len = -1;
    mtest_check_rc("MPI_Win_get_name(MPI_WIN_NULL)", MPI_Win_get_name(MPI_WIN_NULL, name, &len));
    mtest_check(!strcmp(name, "MPI_WIN_NULL") && len == 12, "window null name '%s' %d", name, len);
    return mtest_finalize();
}
