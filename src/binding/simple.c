/*
 * The MPI functions that need no library state: handle and status
 * conversions, address arithmetic, version query, status field access,
 * timers, profiling control and the predefined attribute callbacks.
 *
 * They are callable before MPI_Init and after MPI_Finalize. Bad pointer
 * arguments return an error class directly (there is no object whose error
 * handler could be invoked). Includes only mpi.h and standard headers.
 */
#include <string.h>
#include <time.h>

#include "mpi.h"
#include "binding/impl.h"

/* ---- handle conversion: handles are ints, the Fortran handle is the same int */

MPI_Fint b_Comm_c2f(MPI_Comm comm) { return comm; }
MPI_Comm b_Comm_f2c(MPI_Fint comm) { return comm; }
MPI_Fint b_Errhandler_c2f(MPI_Errhandler errhandler) { return errhandler; }
MPI_Errhandler b_Errhandler_f2c(MPI_Fint errhandler) { return errhandler; }
MPI_Fint b_File_c2f(MPI_File file) { return file; }
MPI_File b_File_f2c(MPI_Fint file) { return file; }
MPI_Fint b_Group_c2f(MPI_Group group) { return group; }
MPI_Group b_Group_f2c(MPI_Fint group) { return group; }
MPI_Fint b_Info_c2f(MPI_Info info) { return info; }
MPI_Info b_Info_f2c(MPI_Fint info) { return info; }
MPI_Fint b_Message_c2f(MPI_Message message) { return message; }
MPI_Message b_Message_f2c(MPI_Fint message) { return message; }
MPI_Fint b_Op_c2f(MPI_Op op) { return op; }
MPI_Op b_Op_f2c(MPI_Fint op) { return op; }
MPI_Fint b_Request_c2f(MPI_Request request) { return request; }
MPI_Request b_Request_f2c(MPI_Fint request) { return request; }
MPI_Fint b_Session_c2f(MPI_Session session) { return session; }
MPI_Session b_Session_f2c(MPI_Fint session) { return session; }
MPI_Fint b_Type_c2f(MPI_Datatype datatype) { return datatype; }
MPI_Datatype b_Type_f2c(MPI_Fint datatype) { return datatype; }
MPI_Fint b_Win_c2f(MPI_Win win) { return win; }
MPI_Win b_Win_f2c(MPI_Fint win) { return win; }

/* ---- status conversion: all three forms hold the same bytes */

_Static_assert(sizeof(MPI_Status) == MPI_F_STATUS_SIZE * sizeof(MPI_Fint),
               "MPI_F_STATUS_SIZE must cover MPI_Status");
_Static_assert(sizeof(MPI_F08_status) == sizeof(MPI_Status),
               "MPI_F08_status must have the size of MPI_Status");

static int status_copy(void *dst, const void *src)
{
    if (dst == NULL || src == NULL || dst == (void *)MPI_STATUS_IGNORE ||
        src == (const void *)MPI_STATUS_IGNORE)
        return MPI_ERR_ARG;
    memcpy(dst, src, sizeof(MPI_Status));
    return MPI_SUCCESS;
}

int b_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status)
{
    return status_copy(f_status, c_status);
}

int b_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status)
{
    return status_copy(c_status, f_status);
}

int b_Status_c2f08(const MPI_Status *c_status, MPI_F08_status *f08_status)
{
    return status_copy(f08_status, c_status);
}

int b_Status_f082c(const MPI_F08_status *f08_status, MPI_Status *c_status)
{
    return status_copy(c_status, f08_status);
}

int b_Status_f2f08(const MPI_Fint *f_status, MPI_F08_status *f08_status)
{
    return status_copy(f08_status, f_status);
}

int b_Status_f082f(const MPI_F08_status *f08_status, MPI_Fint *f_status)
{
    return status_copy(f_status, f08_status);
}

/* ---- status fields */

static int status_ok(const MPI_Status *status)
{
    return status != NULL && status != MPI_STATUS_IGNORE;
}

int b_Status_get_source(MPI_Status *status, int *source)
{
    if (!status_ok(status) || source == NULL)
        return MPI_ERR_ARG;
    *source = status->MPI_SOURCE;
    return MPI_SUCCESS;
}

int b_Status_set_source(MPI_Status *status, int source)
{
    if (!status_ok(status))
        return MPI_ERR_ARG;
    status->MPI_SOURCE = source;
    return MPI_SUCCESS;
}

int b_Status_get_tag(MPI_Status *status, int *tag)
{
    if (!status_ok(status) || tag == NULL)
        return MPI_ERR_ARG;
    *tag = status->MPI_TAG;
    return MPI_SUCCESS;
}

int b_Status_set_tag(MPI_Status *status, int tag)
{
    if (!status_ok(status))
        return MPI_ERR_ARG;
    status->MPI_TAG = tag;
    return MPI_SUCCESS;
}

int b_Status_get_error(MPI_Status *status, int *error)
{
    if (!status_ok(status) || error == NULL)
        return MPI_ERR_ARG;
    *error = status->MPI_ERROR;
    return MPI_SUCCESS;
}

int b_Status_set_error(MPI_Status *status, int error)
{
    if (!status_ok(status))
        return MPI_ERR_ARG;
    status->MPI_ERROR = error;
    return MPI_SUCCESS;
}

int b_Status_set_cancelled(MPI_Status *status, int flag)
{
    if (!status_ok(status))
        return MPI_ERR_ARG;
    status->dcfa_cancelled = flag != 0;
    return MPI_SUCCESS;
}

int b_Test_cancelled(const MPI_Status *status, int *flag)
{
    if (!status_ok(status) || flag == NULL)
        return MPI_ERR_ARG;
    *flag = status->dcfa_cancelled != 0;
    return MPI_SUCCESS;
}

/* ---- addresses, version, timers, profiling control */

MPI_Aint b_Aint_add(MPI_Aint base, MPI_Aint disp)
{
    /* unsigned arithmetic: addresses may wrap past LONG_MAX without UB */
    return (MPI_Aint)((unsigned long)base + (unsigned long)disp);
}

MPI_Aint b_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
    return (MPI_Aint)((unsigned long)addr1 - (unsigned long)addr2);
}

int b_Get_version(int *version, int *subversion)
{
    if (version == NULL || subversion == NULL)
        return MPI_ERR_ARG;
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}

/* Local monotonic clock; MPI_WTIME_IS_GLOBAL is false. */
double b_Wtime(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double b_Wtick(void)
{
    struct timespec res;

    if (clock_getres(CLOCK_MONOTONIC, &res) != 0 || (res.tv_sec == 0 && res.tv_nsec == 0))
        return 1e-9;
    return (double)res.tv_sec + (double)res.tv_nsec * 1e-9;
}

/* No profiling library is built in, so there is nothing to switch. */
int b_Pcontrol(const int level, ...) { return MPI_SUCCESS; }

/* ---- predefined attribute copy and delete callbacks */

static int null_copy(int *flag)
{
    *flag = 0;
    return MPI_SUCCESS;
}

static int dup_copy(void *attribute_val_in, void *attribute_val_out, int *flag)
{
    /* attribute_val_out is the address of a void * that receives the copy */
    memcpy(attribute_val_out, &attribute_val_in, sizeof(void *));
    *flag = 1;
    return MPI_SUCCESS;
}

int MPI_COMM_NULL_COPY_FN(MPI_Comm oldcomm, int comm_keyval, void *extra_state,
                          void *attribute_val_in, void *attribute_val_out, int *flag)
{
    return null_copy(flag);
}

int MPI_COMM_DUP_FN(MPI_Comm oldcomm, int comm_keyval, void *extra_state,
                    void *attribute_val_in, void *attribute_val_out, int *flag)
{
    return dup_copy(attribute_val_in, attribute_val_out, flag);
}

int MPI_COMM_NULL_DELETE_FN(MPI_Comm comm, int comm_keyval, void *attribute_val,
                            void *extra_state)
{
    return MPI_SUCCESS;
}

int MPI_TYPE_NULL_COPY_FN(MPI_Datatype oldtype, int type_keyval, void *extra_state,
                          void *attribute_val_in, void *attribute_val_out, int *flag)
{
    return null_copy(flag);
}

int MPI_TYPE_DUP_FN(MPI_Datatype oldtype, int type_keyval, void *extra_state,
                    void *attribute_val_in, void *attribute_val_out, int *flag)
{
    return dup_copy(attribute_val_in, attribute_val_out, flag);
}

int MPI_TYPE_NULL_DELETE_FN(MPI_Datatype datatype, int type_keyval, void *attribute_val,
                            void *extra_state)
{
    return MPI_SUCCESS;
}

int MPI_WIN_NULL_COPY_FN(MPI_Win oldwin, int win_keyval, void *extra_state,
                         void *attribute_val_in, void *attribute_val_out, int *flag)
{
    return null_copy(flag);
}

int MPI_WIN_DUP_FN(MPI_Win oldwin, int win_keyval, void *extra_state,
                   void *attribute_val_in, void *attribute_val_out, int *flag)
{
    return dup_copy(attribute_val_in, attribute_val_out, flag);
}

int MPI_WIN_NULL_DELETE_FN(MPI_Win win, int win_keyval, void *attribute_val,
                           void *extra_state)
{
    return MPI_SUCCESS;
}

int MPI_NULL_COPY_FN(MPI_Comm oldcomm, int keyval, void *extra_state,
                     void *attribute_val_in, void *attribute_val_out, int *flag)
{
    return null_copy(flag);
}

int MPI_DUP_FN(MPI_Comm oldcomm, int keyval, void *extra_state,
               void *attribute_val_in, void *attribute_val_out, int *flag)
{
    return dup_copy(attribute_val_in, attribute_val_out, flag);
}

int MPI_NULL_DELETE_FN(MPI_Comm comm, int keyval, void *attribute_val, void *extra_state)
{
    return MPI_SUCCESS;
}
