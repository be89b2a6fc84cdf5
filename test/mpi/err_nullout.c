/*
 * err_nullout: the erroneous arguments of issue 38 item 2, with MPI_ERRORS_RETURN: each is
 * an error class, never a SIGSEGV (err_nullout_all passes every output argument NULL).
 *   - MPI_Type_get_extent / _c / _x, MPI_Type_get_true_extent / _c / _x with either output
 *     NULL: MPI_ERR_ARG naming the argument (the second one was dereferenced before);
 *   - MPI_Session_get_nth_pset: pset_name NULL with *pset_len > 0 is MPI_ERR_ARG through
 *     the session's handler; with *pset_len 0 it asks for the length only and succeeds
 *     (MPICH's errors/session/getnthpset);
 *   - MPI_Reduce_local with MPI_IN_PLACE as either buffer: MPI_ERR_BUFFER (crashed);
 *   - a user error handler sees the code the call returns.
 */
#include "mtest.h"

static int calls, last_code;

static void session_eh(MPI_Session *s, int *code, ...)
{
    calls++;
    last_code = *code;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    MPI_Aint a = 0;
    MPI_Count c = 0;
    mtest_check_error("MPI_Type_get_extent(lb NULL)", MPI_Type_get_extent(MPI_INT, NULL, &a),
                      MPI_ERR_ARG, "MPI_Type_get_extent: lb: NULL pointer");
    mtest_check_error("MPI_Type_get_extent(extent NULL)", MPI_Type_get_extent(MPI_INT, &a, NULL),
                      MPI_ERR_ARG, "MPI_Type_get_extent: extent: NULL pointer");
    mtest_check_error("MPI_Type_get_extent_c(extent NULL)",
                      MPI_Type_get_extent_c(MPI_INT, &c, NULL), MPI_ERR_ARG,
                      "extent: NULL pointer");
    mtest_check_error("MPI_Type_get_extent_x(extent NULL)",
                      MPI_Type_get_extent_x(MPI_INT, &c, NULL), MPI_ERR_ARG,
                      "extent: NULL pointer");
    mtest_check_error("MPI_Type_get_true_extent(true_lb NULL)",
                      MPI_Type_get_true_extent(MPI_INT, NULL, &a), MPI_ERR_ARG,
                      "true_lb: NULL pointer");
    mtest_check_error("MPI_Type_get_true_extent(true_extent NULL)",
                      MPI_Type_get_true_extent(MPI_INT, &a, NULL), MPI_ERR_ARG,
                      "true_extent: NULL pointer");
    mtest_check_error("MPI_Type_get_true_extent_c(true_extent NULL)",
                      MPI_Type_get_true_extent_c(MPI_INT, &c, NULL), MPI_ERR_ARG,
                      "true_extent: NULL pointer");
    mtest_check_error("MPI_Type_get_true_extent_x(true_extent NULL)",
                      MPI_Type_get_true_extent_x(MPI_INT, &c, NULL), MPI_ERR_ARG,
                      "MPI_Type_get_true_extent_x: true_extent: NULL pointer");
    mtest_check_rc("MPI_Type_get_true_extent_x", MPI_Type_get_true_extent_x(MPI_INT, &c, &c));

    /* MPI_Reduce_local has no MPI_IN_PLACE */
    int x[4] = {1, 2, 3, 4};
    mtest_check_error("MPI_Reduce_local(MPI_IN_PLACE, x)",
                      MPI_Reduce_local(MPI_IN_PLACE, x, 4, MPI_INT, MPI_SUM), MPI_ERR_BUFFER,
                      "inbuf: MPI_IN_PLACE");
    mtest_check_error("MPI_Reduce_local(x, MPI_IN_PLACE)",
                      MPI_Reduce_local(x, MPI_IN_PLACE, 4, MPI_INT, MPI_SUM), MPI_ERR_BUFFER,
                      "inoutbuf: MPI_IN_PLACE");
    for (int i = 0; i < 4; i++)
        mtest_check_int("MPI_Reduce_local left its buffer", x[i], i + 1);

    /* MPI_Session_get_nth_pset: the length first, then the name */
    MPI_Session s = MPI_SESSION_NULL;
    MPI_Errhandler eh;
    MPI_Session_create_errhandler(session_eh, &eh);
    if (mtest_check_rc("MPI_Session_init", MPI_Session_init(MPI_INFO_NULL, eh, &s))) {
        int len = 0;
        mtest_check_rc("MPI_Session_get_nth_pset(len 0, name NULL)",
                       MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, &len, NULL));
        mtest_check_int("pset name length", len, (int)strlen("mpi://WORLD") + 1);
        calls = 0;
        int rc = MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, &len, NULL);
        mtest_check_error("MPI_Session_get_nth_pset(len > 0, name NULL)", rc, MPI_ERR_ARG,
                          "pset_name: NULL pointer");
        mtest_check_int("session handler calls", calls, 1);
        mtest_check_int("code the session handler saw", last_code, rc);
        char name[64];
        mtest_check_rc("MPI_Session_get_nth_pset",
                       MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, &len, name));
        mtest_check(!strcmp(name, "mpi://WORLD"), "pset 0 is '%s'", name);
        calls = 0;
        rc = MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, NULL, name);
        mtest_check_error("MPI_Session_get_nth_pset(pset_len NULL)", rc, MPI_ERR_ARG,
                          "pset_len: NULL pointer");
        mtest_check_int("session handler calls", calls, 1);
        MPI_Session_finalize(&s);
    }
    MPI_Errhandler_free(&eh);
    return mtest_finalize();
}
