/*
 * Error handlers of sessions: the handler given to MPI_Session_init is used
 * for errors on the session (it was MPI_ERRORS_ARE_FATAL whatever the
 * program asked), and MPI_Session_create/set/get/call_errhandler.
 */
#include "mtest.h"

static int calls, last_code;
static MPI_Session last_session;

static void on_error(MPI_Session *s, int *code, ...)
{
    calls++;
    last_session = *s;
    last_code = *code;
}

int main(int argc, char **argv)
{
    MPI_Session s;
    MPI_Errhandler eh, got;
    int len = 0, cls = -1;
    char name[64];

    mtest_init(&argc, &argv);
    mtest_check_rc("MPI_Session_init", MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    /* an error on the session returns */
    len = sizeof name;
    int rc = MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 99, &len, name);
    MPI_Error_class(rc, &cls);
    mtest_check(rc != MPI_SUCCESS && cls == MPI_ERR_ARG, "nth_pset(99): rc %d class %d", rc, cls);
    MPI_Session_get_errhandler(s, &got);
    mtest_check(got == MPI_ERRORS_RETURN, "get_errhandler: %d, expected MPI_ERRORS_RETURN", got);
    MPI_Errhandler_free(&got);

    /* a handler of our own */
    mtest_check_rc("MPI_Session_create_errhandler", MPI_Session_create_errhandler(on_error, &eh));
    mtest_check_rc("MPI_Session_set_errhandler", MPI_Session_set_errhandler(s, eh));
    len = sizeof name;
    rc = MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 99, &len, name);
    mtest_check(calls == 1 && last_session == s && last_code == rc,
                "user handler: %d calls, session %d (want %d), code %d (want %d)", calls,
                last_session, s, last_code, rc);
    MPI_Session_call_errhandler(s, MPI_ERR_OTHER);
    mtest_check(calls == 2 && last_code == MPI_ERR_OTHER, "call_errhandler: %d calls, code %d",
                calls, last_code);
    MPI_Session_get_errhandler(s, &got);
    mtest_check(got == eh, "get_errhandler: not the handler set");
    MPI_Errhandler_free(&got);
    /* a communicator's handler cannot be attached to a session */
    MPI_Errhandler ceh;
    MPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)on_error, &ceh);
    MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN);
    mtest_check_class("comm handler on a session", MPI_Session_set_errhandler(s, ceh), MPI_ERR_ARG);
    MPI_Errhandler_free(&ceh);
    MPI_Errhandler_free(&eh);
    MPI_Session_finalize(&s);
    return mtest_finalize();
}
