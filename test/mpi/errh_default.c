/*
 * errh_default: errors raised on the object the call was made on, through the handler that
 * object has (issue 38 item 4; MPICH's errors/comm nullarg tests, errors/attr/keyvalmis,
 * errors/session/comm_create_from_group, errors/comm/userdup).
 *
 *   - A communicator or window whose handler the program never set uses MPI_COMM_WORLD's
 *     handler at the time of the error (MPICH's rule): made before MPI_COMM_WORLD got
 *     MPI_ERRORS_RETURN, a duplicate of it returns the errors of MPI_Comm_create,
 *     MPI_Comm_create_group, MPI_Comm_split and MPI_Comm_split_type (before: the job ended
 *     through MPI_ERRORS_ARE_FATAL), a window the errors of its attribute calls, and
 *     MPI_Comm_get_errhandler says MPI_ERRORS_RETURN. A handler set on the object itself
 *     stays its own.
 *   - MPI_Comm_create_from_group reports to its errhandler argument (called once for a NULL
 *     newcomm), and gives MPI_COMM_NULL for MPI_GROUP_EMPTY.
 *   - An attribute copy callback's own error code is what MPI_Comm_dup returns and what the
 *     communicator's user handler receives (it got the code's class before); so is the code
 *     given to MPI_Comm_call_errhandler.
 * Every call here fails on its local arguments, so no rank waits for another.
 */
#include "mtest.h"

static int eh_calls, eh_code;
static MPI_Comm eh_comm;

static void count_eh(MPI_Comm *comm, int *code, ...)
{
    eh_calls++;
    eh_code = *code;
    eh_comm = *comm;
}

static int my_class, my_code, copy_calls;

static int copybomb(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag)
{
    *flag = 1;
    return copy_calls++ == 0 ? my_class : my_code;
}

int main(int argc, char **argv)
{
    int rank;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    /* made while MPI_COMM_WORLD still has MPI_ERRORS_ARE_FATAL, never given a handler */
    MPI_Comm dup, own;
    MPI_Group group;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_dup(MPI_COMM_WORLD, &own);
    MPI_Comm_set_errhandler(own, MPI_ERRORS_ARE_FATAL); /* set: stays fatal */
    MPI_Comm_group(dup, &group);
    int wbuf = 0;
    MPI_Win win;
    MPI_Win_create(&wbuf, sizeof wbuf, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    int comm_keyval;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &comm_keyval, NULL);

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    MPI_Comm_get_errhandler(dup, &eh);
    mtest_check(eh == MPI_ERRORS_RETURN, "MPI_Comm_get_errhandler(dup): not MPI_COMM_WORLD's");
    MPI_Errhandler_free(&eh);
    MPI_Comm_get_errhandler(own, &eh);
    mtest_check(eh == MPI_ERRORS_ARE_FATAL, "MPI_Comm_get_errhandler(own): not its own");
    MPI_Errhandler_free(&eh);

    mtest_check_class("MPI_Comm_create(dup, newcomm NULL)", MPI_Comm_create(dup, group, NULL),
                      MPI_ERR_ARG);
    mtest_check_class("MPI_Comm_create_group(dup, newcomm NULL)",
                      MPI_Comm_create_group(dup, group, 10, NULL), MPI_ERR_ARG);
    mtest_check_class("MPI_Comm_split(dup, newcomm NULL)",
                      MPI_Comm_split(dup, rank % 2, rank, NULL), MPI_ERR_ARG);
    MPI_Comm bad = MPI_COMM_NULL;
    mtest_check_class("MPI_Comm_split(dup, color -5)", MPI_Comm_split(dup, -5, rank, &bad),
                      MPI_ERR_ARG);
    mtest_check_class("MPI_Comm_split_type(dup, newcomm NULL)",
                      MPI_Comm_split_type(dup, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, NULL),
                      MPI_ERR_ARG);
    mtest_check_class("MPI_Win_set_attr(win, a communicator keyval)",
                      MPI_Win_set_attr(win, comm_keyval, &wbuf), MPI_ERR_KEYVAL);
    void *val;
    int flag;
    mtest_check_class("MPI_Win_get_attr(win, a communicator keyval)",
                      MPI_Win_get_attr(win, comm_keyval, &val, &flag), MPI_ERR_KEYVAL);
    MPI_Win_get_errhandler(win, &eh);
    mtest_check(eh == MPI_ERRORS_RETURN, "MPI_Win_get_errhandler: not MPI_COMM_WORLD's");
    MPI_Errhandler_free(&eh);

    /* the errhandler argument of MPI_Comm_create_from_group */
    MPI_Errhandler counting;
    MPI_Comm_create_errhandler(count_eh, &counting);
    MPI_Group wgroup;
    MPI_Comm_group(MPI_COMM_WORLD, &wgroup);
    eh_calls = 0;
    mtest_check_class(
        "MPI_Comm_create_from_group(newcomm NULL)",
        MPI_Comm_create_from_group(wgroup, "h38.errh_default", MPI_INFO_NULL, counting, NULL),
        MPI_ERR_ARG);
    mtest_check_int("calls of create_from_group's errhandler", eh_calls, 1);
    mtest_check(eh_comm == MPI_COMM_NULL, "the errhandler got a communicator other than "
                                          "MPI_COMM_NULL");
    MPI_Comm fromg = MPI_COMM_NULL;
    if (mtest_check_rc("MPI_Comm_create_from_group",
                       MPI_Comm_create_from_group(wgroup, "h38.errh_default", MPI_INFO_NULL,
                                                  counting, &fromg))) {
        mtest_check_int("calls of create_from_group's errhandler", eh_calls, 1);
        MPI_Comm_free(&fromg);
    }
    MPI_Comm empty = MPI_COMM_WORLD;
    mtest_check_rc("MPI_Comm_create_from_group(MPI_GROUP_EMPTY)",
                   MPI_Comm_create_from_group(MPI_GROUP_EMPTY, "h38.empty", MPI_INFO_NULL,
                                              MPI_ERRORS_RETURN, &empty));
    mtest_check(empty == MPI_COMM_NULL, "MPI_GROUP_EMPTY did not give MPI_COMM_NULL");
    MPI_Group_free(&wgroup);

    /* codes of the program's own, through a copy callback and MPI_Comm_call_errhandler */
    MPI_Add_error_class(&my_class);
    MPI_Add_error_code(my_class, &my_code);
    MPI_Comm src;
    MPI_Comm_dup(MPI_COMM_WORLD, &src);
    MPI_Comm_set_errhandler(src, counting);
    int key;
    MPI_Comm_create_keyval(copybomb, MPI_COMM_NULL_DELETE_FN, &key, NULL);
    MPI_Comm_set_attr(src, key, &rank);
    MPI_Comm out;
    eh_calls = 0;
    int rc = MPI_Comm_dup(src, &out);
    mtest_check(rc == my_class, "MPI_Comm_dup returned %d, the callback's class is %d", rc,
                my_class);
    mtest_check(eh_calls == 1 && eh_code == my_class && eh_comm == src,
                "the handler of the communicator got (%d calls, code %d), expected (1, %d)",
                eh_calls, eh_code, my_class);
    eh_calls = 0;
    rc = MPI_Comm_dup(src, &out);
    mtest_check(rc == my_code, "MPI_Comm_dup returned %d, the callback's code is %d", rc, my_code);
    mtest_check(eh_calls == 1 && eh_code == my_code,
                "the handler of the communicator got (%d calls, code %d), expected (1, %d)",
                eh_calls, eh_code, my_code);
    eh_calls = 0;
    MPI_Comm_call_errhandler(src, my_code);
    mtest_check(eh_calls == 1 && eh_code == my_code,
                "MPI_Comm_call_errhandler: the handler got (%d calls, code %d), expected "
                "(1, %d)",
                eh_calls, eh_code, my_code);
    MPI_Comm_delete_attr(src, key);
    MPI_Comm_free_keyval(&key);
    MPI_Comm_free(&src);
    MPI_Errhandler_free(&counting);

    MPI_Comm_free_keyval(&comm_keyval);
    MPI_Win_free(&win);
    MPI_Group_free(&group);
    MPI_Comm_free(&own);
    MPI_Comm_free(&dup);
    return mtest_finalize();
}
