/* A user error handler (MPI_Comm_create_errhandler) on a duplicate
 * communicator is called with that communicator and an error code of the
 * right class; the failing call then returns that code. Comm_call_errhandler
 * passes a given code through. Other communicators are not affected.
 * A handler that changes its code argument makes the failing call return
 * the new code (MPI 4.1 9.3: "the error code to be returned by the MPI
 * routine that raised the error"), MPI_SUCCESS included, and the library
 * still stops the failed operation (nothing is sent to a bad rank); a later
 * error whose handler leaves the code returns its own code. */
#include "mtest.h"

static int calls;
static int last_code;
static MPI_Comm last_comm;

static void handler(MPI_Comm *comm, int *code, ...)
{
    calls++;
    last_comm = *comm;
    last_code = *code;
}

static int replace_with, replace_calls;

static void replacer(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    replace_calls++;
    *code = replace_with;
}

/* errors on a communicator whose handler replaces the code */
static void replaced_codes(int rank, int size)
{
    MPI_Comm c;
    MPI_Errhandler eh;
    int buf = rank, rc, cls;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_create_errhandler(replacer, &eh);
    MPI_Comm_set_errhandler(c, eh);
    MPI_Errhandler_free(&eh);

    replace_with = MPI_SUCCESS;
    rc = MPI_Send(&buf, 1, MPI_INT, size + 2, 0, c);
    mtest_check_int("Send to a bad rank, handler leaves MPI_SUCCESS: returned", rc, MPI_SUCCESS);
    mtest_check_int("replacer calls", replace_calls, 1);
    MPI_Request req = MPI_REQUEST_NULL;
    rc = MPI_Irecv(&buf, 1, MPI_INT, 0, -9, c, &req);
    mtest_check_int("Irecv with a bad tag, handler leaves MPI_SUCCESS: returned", rc, MPI_SUCCESS);
    mtest_check(req == MPI_REQUEST_NULL, "a failed Irecv made a request");

    replace_with = MPI_ERR_OTHER;
    rc = MPI_Recv(&buf, 1, MPI_INT, 0, -9, c, MPI_STATUS_IGNORE);
    MPI_Error_class(rc, &cls);
    mtest_check_int("Recv with a bad tag, handler leaves MPI_ERR_OTHER: class", cls, MPI_ERR_OTHER);
    mtest_check_int("replacer calls", replace_calls, 3);

    /* the handler leaves the code it was given: that code is returned */
    replace_with = -1;
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    rc = MPI_Send(&buf, 1, MPI_INT, size + 2, 0, c);
    mtest_check_class("Send to a bad rank under MPI_ERRORS_RETURN after replaced codes", rc,
                      MPI_ERR_RANK);

    /* the communicator still works, ring exchange */
    int got = -1, right = (rank + 1) % size, left = (rank + size - 1) % size;
    rc = MPI_Sendrecv(&buf, 1, MPI_INT, right, 5, &got, 1, MPI_INT, left, 5, c, MPI_STATUS_IGNORE);
    mtest_check_rc("Sendrecv after replaced codes", rc);
    mtest_check_int("Sendrecv value", got, left);
    MPI_Comm_free(&c);
}

int main(int argc, char **argv)
{
    int rank, size, rc, cls, buf = 1;
    MPI_Comm dup;
    MPI_Errhandler eh, got;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    mtest_check_rc("Comm_create_errhandler", MPI_Comm_create_errhandler(handler, &eh));
    mtest_check_rc("Comm_set_errhandler", MPI_Comm_set_errhandler(dup, eh));
    MPI_Comm_get_errhandler(dup, &got);
    mtest_check(got == eh, "Comm_get_errhandler returned another handler");
    MPI_Errhandler_free(&got);

    rc = MPI_Send(&buf, 1, MPI_INT, size + 2, 0, dup);
    mtest_check_int("handler calls after bad Send", calls, 1);
    mtest_check(last_comm == dup, "handler got another communicator");
    MPI_Error_class(last_code, &cls);
    mtest_check_int("class of the code given to the handler", cls, MPI_ERR_RANK);
    mtest_check_int("Send returned the handler's code", rc, last_code);

    /* An error on WORLD does not call dup's handler. */
    rc = MPI_Send(&buf, 1, MPI_INT, size + 2, 0, MPI_COMM_WORLD);
    mtest_check_class("bad Send on WORLD", rc, MPI_ERR_RANK);
    mtest_check_int("handler calls after an error on WORLD", calls, 1);

    /* Comm_call_errhandler hands the code over unchanged. */
    MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER);
    mtest_check_int("handler calls after Comm_call_errhandler", calls, 2);
    mtest_check_int("code from Comm_call_errhandler", last_code, MPI_ERR_OTHER);

    /* A dup of dup inherits the user handler. */
    {
        MPI_Comm dup2;
        MPI_Comm_dup(dup, &dup2);
        rc = MPI_Recv(&buf, 1, MPI_INT, 0, -9, dup2, MPI_STATUS_IGNORE);
        mtest_check_int("handler calls via inherited handler", calls, 3);
        mtest_check(last_comm == dup2, "inherited handler got another communicator");
        MPI_Error_class(last_code, &cls);
        mtest_check_int("class via inherited handler", cls, MPI_ERR_TAG);
        MPI_Comm_free(&dup2);
    }

    /* The handler may be freed while attached; it stays in use. */
    MPI_Errhandler_free(&eh);
    mtest_check(eh == MPI_ERRHANDLER_NULL, "Errhandler_free did not set MPI_ERRHANDLER_NULL");
    rc = MPI_Send(&buf, -1, MPI_INT, 0, 0, dup);
    mtest_check_int("handler calls after free", calls, 4);
    MPI_Comm_free(&dup);
    replaced_codes(rank, size);
    return mtest_finalize();
}
