/* MPI_Error_string and MPI_Error_class: every predefined class maps to
 * itself, has a non-empty terminated string, and MPI_SUCCESS differs from
 * the error strings; codes returned by a failing call map to their class. */
#include "mtest.h"

int main(int argc, char **argv)
{
    static const int classes[] = {
        MPI_SUCCESS,  MPI_ERR_BUFFER,   MPI_ERR_COUNT,    MPI_ERR_TYPE,  MPI_ERR_TAG,
        MPI_ERR_COMM, MPI_ERR_RANK,     MPI_ERR_REQUEST,  MPI_ERR_ROOT,  MPI_ERR_GROUP,
        MPI_ERR_OP,   MPI_ERR_TOPOLOGY, MPI_ERR_DIMS,     MPI_ERR_ARG,   MPI_ERR_UNKNOWN,
        MPI_ERR_TRUNCATE, MPI_ERR_OTHER, MPI_ERR_INTERN,  MPI_ERR_IN_STATUS, MPI_ERR_PENDING,
        MPI_ERR_INFO_KEY, MPI_ERR_INFO_VALUE, MPI_ERR_INFO_NOKEY, MPI_ERR_KEYVAL, MPI_ERR_NO_MEM,
        MPI_ERR_WIN,  MPI_ERR_SPAWN,    MPI_ERR_PORT,     MPI_ERR_NAME,  MPI_ERR_SERVICE};
    int n = (int)(sizeof(classes) / sizeof(classes[0]));
    int i, cls, len, rc, lastcode;
    char str[MPI_MAX_ERROR_STRING], okstr[MPI_MAX_ERROR_STRING];
    int buf = 0;

    mtest_init(&argc, &argv);
    MPI_Error_string(MPI_SUCCESS, okstr, &len);
    for (i = 0; i < n; i++) {
        cls = -1;
        MPI_Error_class(classes[i], &cls);
        mtest_check_int("Error_class(class)", cls, classes[i]);
        mtest_check(classes[i] <= MPI_ERR_LASTCODE, "class %d above MPI_ERR_LASTCODE", classes[i]);
        len = -1;
        memset(str, 'x', sizeof(str));
        MPI_Error_string(classes[i], str, &len);
        if (!mtest_check(len > 0 && len < MPI_MAX_ERROR_STRING, "class %d: string length %d",
                         classes[i], len))
            continue;
        mtest_check(strlen(str) == (size_t)len, "class %d: string not terminated at %d",
                    classes[i], len);
        if (classes[i] != MPI_SUCCESS)
            mtest_check(strcmp(str, okstr) != 0, "class %d has the MPI_SUCCESS text '%s'",
                        classes[i], str);
    }
    for (i = 1; i < n; i++) {
        char other[MPI_MAX_ERROR_STRING];
        MPI_Error_string(classes[i], str, &len);
        MPI_Error_string(classes[i - 1], other, &len);
        mtest_check(strcmp(str, other) != 0, "classes %d and %d have the same text '%s'",
                    classes[i - 1], classes[i], str);
    }

    /* A real error code (possibly more specific than its class). */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    rc = MPI_Send(&buf, 1, MPI_INT, 0, -1, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    mtest_check_int("class of a bad-tag Send's code", cls, MPI_ERR_TAG);
    MPI_Error_string(rc, str, &len);
    mtest_check(len > 0 && strlen(str) == (size_t)len, "string of a returned code is empty");
    lastcode = MPI_ERR_LASTCODE;
    mtest_check(lastcode >= MPI_ERR_SERVICE, "MPI_ERR_LASTCODE %d too small", lastcode);
    return mtest_finalize();
}
