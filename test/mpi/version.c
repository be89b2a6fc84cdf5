/* MPI_Get_version / MPI_Get_library_version / MPI_Get_processor_name. */
#include "mtest.h"

int main(int argc, char **argv)
{
    int major = -1, minor = -1, len = -1;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    char name[MPI_MAX_PROCESSOR_NAME];
    char all[MPI_MAX_PROCESSOR_NAME];

    /* MPI_Get_version may be called before MPI_Init. */
    MPI_Get_version(&major, &minor);
    mtest_check_int("Get_version major before Init", major, MPI_VERSION);
    mtest_check_int("Get_version minor before Init", minor, MPI_SUBVERSION);

    mtest_init(&argc, &argv);
    major = minor = -1;
    MPI_Get_version(&major, &minor);
    mtest_check_int("Get_version major", major, MPI_VERSION);
    mtest_check_int("Get_version minor", minor, MPI_SUBVERSION);
    mtest_check(major >= 3, "MPI version %d.%d is older than 3.0", major, minor);

    memset(lib, 'x', sizeof(lib));
    MPI_Get_library_version(lib, &len);
    mtest_check(len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING, "library version length %d", len);
    if (len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING)
        /* Open MPI counts the terminating NUL in len; accept both. */
        mtest_check(strnlen(lib, (size_t)len + 1) == (size_t)len ||
                        strnlen(lib, (size_t)len + 1) == (size_t)len - 1,
                    "library version string not terminated at its length %d", len);

    len = -1;
    memset(name, 'x', sizeof(name));
    MPI_Get_processor_name(name, &len);
    mtest_check(len > 0 && len < MPI_MAX_PROCESSOR_NAME, "processor name length %d", len);
    if (len > 0 && len < MPI_MAX_PROCESSOR_NAME) {
        mtest_check(name[len] == '\0' && (int)strlen(name) == len,
                    "processor name not terminated at its length %d", len);
        /* Everything runs on one host here: all ranks must agree with rank 0
         * when they are on the same node (same shared-memory communicator). */
        MPI_Comm node;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
        memcpy(all, name, sizeof(all));
        MPI_Bcast(all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, node);
        mtest_check(strcmp(all, name) == 0, "processor name '%s' differs from node leader's '%s'",
                    name, all);
        MPI_Comm_free(&node);
    }
    return mtest_finalize();
}
