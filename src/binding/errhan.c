/* Error handler and error code bindings (MPI 4.1 chapter 9.3-9.5). */
#include "mpi/mpii.h"
#include "mpi/errhan/errhan.h"
#include "binding/impl.h"

#include <string.h>

static int errh_check_handler(const char *fn, int objkind, int handle, MPI_Errhandler eh,
                              enum mpii_errh_kind kind)
{
    if (!mpii_errh_exists(eh))
        return mpii_err(objkind, handle, MPI_ERR_ERRHANDLER, fn,
                        "errhandler: invalid error handler");
    if (!mpii_errh_usable(eh, kind))
        return mpii_err(objkind, handle, MPI_ERR_ARG, fn,
                        "errhandler: created for another kind of object");
    return MPI_SUCCESS;
}

static int errh_create(const char *fn, enum mpii_errh_kind kind, mpii_errh_fn f, MPI_Errhandler *eh)
{
    if (!f)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn, "function: must not be NULL");
    if (!eh)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn, "errhandler: NULL pointer");
    *eh = mpii_errh_create(kind, f);
    return MPI_SUCCESS;
}

/* ---- communicators ------------------------------------------------------------------- */

int b_Comm_create_errhandler(MPI_Comm_errhandler_function *f, MPI_Errhandler *eh)
{
    return errh_create("MPI_Comm_create_errhandler", MPII_ERRH_COMM, (mpii_errh_fn)f, eh);
}

int b_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler eh)
{
    static const char fn[] = "MPI_Comm_set_errhandler";
    mpii_comm *c = mpii_comm_get(comm);
    if (!c)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_COMM, fn, "comm: invalid communicator");
    int rc = errh_check_handler(fn, MPII_OBJ_COMM, comm, eh, MPII_ERRH_COMM);
    if (rc != MPI_SUCCESS)
        return rc;
    mpii_errh_ref(eh);
    mpii_errh_release(c->errhandler);
    c->errhandler = eh;
    return MPI_SUCCESS;
}

int b_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *eh)
{
    static const char fn[] = "MPI_Comm_get_errhandler";
    mpii_comm *c = mpii_comm_get(comm);
    if (!c)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_COMM, fn, "comm: invalid communicator");
    if (!eh)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "errhandler: NULL pointer");
    *eh = mpii_errh_or_default(c->errhandler);
    mpii_errh_ref(*eh);
    return MPI_SUCCESS;
}

int b_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    static const char fn[] = "MPI_Comm_call_errhandler";
    mpii_comm *c = mpii_comm_get(comm);
    if (!c)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_COMM, fn, "comm: invalid communicator");
    mpii_errh_invoke(MPII_OBJ_COMM, comm, mpii_errh_or_default(c->errhandler), errorcode);
    return MPI_SUCCESS;
}

int b_Errhandler_free(MPI_Errhandler *eh)
{
    if (!eh || !mpii_errh_exists(*eh))
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ERRHANDLER, "MPI_Errhandler_free",
                        "errhandler: invalid error handler");
    mpii_errh_release(*eh);
    *eh = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}

/* ---- windows and files: handlers are made here; attaching one to a file
 * (and MPI_FILE_NULL's default) is in src/binding/file.c */

int b_Win_create_errhandler(MPI_Win_errhandler_function *f, MPI_Errhandler *eh)
{
    return errh_create("MPI_Win_create_errhandler", MPII_ERRH_WIN, (mpii_errh_fn)f, eh);
}

int b_File_create_errhandler(MPI_File_errhandler_function *f, MPI_Errhandler *eh)
{
    return errh_create("MPI_File_create_errhandler", MPII_ERRH_FILE, (mpii_errh_fn)f, eh);
}

/* ---- error classes, codes and strings ----------------------------------------------- */

int b_Error_class(int errorcode, int *errorclass)
{
    static const char fn[] = "MPI_Error_class";
    if (!errorclass)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn, "errorclass: NULL pointer");
    if (mpii_errh_class_of(errorcode, errorclass) != UTIL_OK)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn, "errorcode=%d is not an error code",
                        errorcode);
    return MPI_SUCCESS;
}

int b_Error_string(int errorcode, char *string, int *resultlen)
{
    static const char fn[] = "MPI_Error_string";
    if (!string || !resultlen)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn, "string/resultlen: NULL pointer");
    if (mpii_errh_string(errorcode, string, resultlen) != UTIL_OK)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn, "errorcode=%d is not an error code",
                        errorcode);
    return MPI_SUCCESS;
}

int b_Add_error_class(int *errorclass)
{
    if (!errorclass)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, "MPI_Add_error_class",
                        "errorclass: NULL pointer");
    return mpii_errh_add_class(errorclass) == UTIL_OK ? MPI_SUCCESS : MPI_ERR_INTERN;
}

int b_Add_error_code(int errorclass, int *errorcode)
{
    static const char fn[] = "MPI_Add_error_code";
    if (!errorcode)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn, "errorcode: NULL pointer");
    if (mpii_errh_add_code(errorclass, errorcode) != UTIL_OK)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn, "errorclass=%d is not an error class",
                        errorclass);
    return MPI_SUCCESS;
}

int b_Add_error_string(int errorcode, const char *string)
{
    static const char fn[] = "MPI_Add_error_string";
    if (!string)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn, "string: NULL pointer");
    if (strlen(string) >= MPI_MAX_ERROR_STRING)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn,
                        "string: longer than MPI_MAX_ERROR_STRING-1 (%d) characters",
                        MPI_MAX_ERROR_STRING - 1);
    if (mpii_errh_add_string(errorcode, string) != UTIL_OK)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn,
                        "errorcode=%d was not added with MPI_Add_error_class/code", errorcode);
    return MPI_SUCCESS;
}

int b_Remove_error_class(int errorclass)
{
    if (mpii_errh_remove_class(errorclass) != UTIL_OK)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, "MPI_Remove_error_class",
                        "errorclass=%d is not a user class, or it still has codes or a string",
                        errorclass);
    return MPI_SUCCESS;
}

int b_Remove_error_code(int errorcode)
{
    if (mpii_errh_remove_code(errorcode) != UTIL_OK)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, "MPI_Remove_error_code",
                        "errorcode=%d is not a user code, or it still has a string", errorcode);
    return MPI_SUCCESS;
}

int b_Remove_error_string(int errorcode)
{
    if (mpii_errh_remove_string(errorcode) != UTIL_OK)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, "MPI_Remove_error_string",
                        "errorcode=%d has no string added by MPI_Add_error_string", errorcode);
    return MPI_SUCCESS;
}
