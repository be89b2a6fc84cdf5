/* Attribute bindings (communicators, datatypes, keyvals of windows; the
 * deprecated MPI-1 names): argument checks, then src/mpi/attr. */
#include "mpi/mpii.h"
#include "mpi/attr/attr.h"
#include "mpi/errhan/errhan.h"
#include "binding/impl.h"

static int attr_is_predef(int keyval) { return keyval >= 1 && keyval <= MPII_KEYVAL_PREDEF_LAST; }

static const char *attr_kind_name(int kind)
{
    return kind == MPII_KIND_COMM    ? "communicator"
           : kind == MPII_KIND_DTYPE ? "datatype"
                                     : "window";
}

/* keyval valid for kind; for_write: not a predefined key */
static int attr_check_keyval(const char *fn, int objkind, int h, int kind, int keyval,
                             int for_write)
{
    if (mpii_keyval_check(kind, keyval) != MPI_SUCCESS)
        return mpii_err(objkind, h, MPI_ERR_KEYVAL, fn, "keyval=%d is not a valid %s keyval",
                        keyval, attr_kind_name(kind));
    if (for_write && attr_is_predef(keyval))
        return mpii_err(objkind, h, MPI_ERR_KEYVAL, fn,
                        "keyval=%d is a predefined attribute: it cannot be set or deleted", keyval);
    return MPI_SUCCESS;
}

/* a code returned by a user copy or delete callback */
static int attr_callback_fail(const char *fn, int objkind, int h, int rc)
{
    return mpii_err(objkind, h, mpii_errh_callback_code(rc), fn,
                    "an attribute callback returned error %d", rc);
}

/* ---- keyvals ------------------------------------------------------------------------ */

static int attr_keyval_create(const char *fn, int kind, mpii_attr_fn copy, mpii_attr_fn del,
                              int *keyval, void *extra)
{
    if (!keyval)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn, "keyval: NULL pointer");
    return mpii_keyval_create(kind, copy, del, extra, keyval);
}

static int attr_keyval_free(const char *fn, int kind, int *keyval)
{
    if (!keyval)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn, "keyval: NULL pointer");
    int rc = attr_check_keyval(fn, MPII_OBJ_NONE, 0, kind, *keyval, 1);
    if (rc != MPI_SUCCESS)
        return rc;
    return mpii_keyval_free(kind, keyval);
}

int b_Comm_create_keyval(MPI_Comm_copy_attr_function *copy, MPI_Comm_delete_attr_function *del,
                         int *keyval, void *extra_state)
{
    return attr_keyval_create("MPI_Comm_create_keyval", MPII_KIND_COMM, (mpii_attr_fn)copy,
                              (mpii_attr_fn)del, keyval, extra_state);
}
int b_Keyval_create(MPI_Copy_function *copy, MPI_Delete_function *del, int *keyval,
                    void *extra_state)
{
    return attr_keyval_create("MPI_Keyval_create", MPII_KIND_COMM, (mpii_attr_fn)copy,
                              (mpii_attr_fn)del, keyval, extra_state);
}
int b_Type_create_keyval(MPI_Type_copy_attr_function *copy, MPI_Type_delete_attr_function *del,
                         int *keyval, void *extra_state)
{
    return attr_keyval_create("MPI_Type_create_keyval", MPII_KIND_DTYPE, (mpii_attr_fn)copy,
                              (mpii_attr_fn)del, keyval, extra_state);
}
int b_Win_create_keyval(MPI_Win_copy_attr_function *copy, MPI_Win_delete_attr_function *del,
                        int *keyval, void *extra_state)
{
    return attr_keyval_create("MPI_Win_create_keyval", MPII_KIND_WIN, (mpii_attr_fn)copy,
                              (mpii_attr_fn)del, keyval, extra_state);
}

int b_Comm_free_keyval(int *keyval)
{
    return attr_keyval_free("MPI_Comm_free_keyval", MPII_KIND_COMM, keyval);
}
int b_Keyval_free(int *keyval)
{
    return attr_keyval_free("MPI_Keyval_free", MPII_KIND_COMM, keyval);
}
int b_Type_free_keyval(int *keyval)
{
    return attr_keyval_free("MPI_Type_free_keyval", MPII_KIND_DTYPE, keyval);
}
int b_Win_free_keyval(int *keyval)
{
    return attr_keyval_free("MPI_Win_free_keyval", MPII_KIND_WIN, keyval);
}

/* ---- communicator attributes -------------------------------------------------------- */

static int attr_comm(const char *fn, MPI_Comm comm, int keyval, int for_write, mpii_comm **c)
{
    *c = mpii_comm_get(comm);
    if (!*c)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_COMM, fn, "comm: invalid communicator");
    return attr_check_keyval(fn, MPII_OBJ_COMM, comm, MPII_KIND_COMM, keyval, for_write);
}

static int attr_comm_set(const char *fn, MPI_Comm comm, int keyval, void *val)
{
    mpii_comm *c;
    int rc = attr_comm(fn, comm, keyval, 1, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = mpii_attr_set(comm, &c->attrs, keyval, val);
    return rc == MPI_SUCCESS ? rc : attr_callback_fail(fn, MPII_OBJ_COMM, comm, rc);
}

static int attr_comm_get(const char *fn, MPI_Comm comm, int keyval, void *val, int *flag)
{
    mpii_comm *c;
    int rc = attr_comm(fn, comm, keyval, 0, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!val || !flag)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "%s: NULL pointer",
                        val ? "flag" : "attribute_val");
    return mpii_attr_get(comm, c->attrs, keyval, (void **)val, flag);
}

static int attr_comm_delete(const char *fn, MPI_Comm comm, int keyval)
{
    mpii_comm *c;
    int rc = attr_comm(fn, comm, keyval, 1, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = mpii_attr_delete(comm, &c->attrs, keyval);
    return rc == MPI_SUCCESS ? rc : attr_callback_fail(fn, MPII_OBJ_COMM, comm, rc);
}

int b_Comm_set_attr(MPI_Comm comm, int keyval, void *attribute_val)
{
    return attr_comm_set("MPI_Comm_set_attr", comm, keyval, attribute_val);
}
int b_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
    return attr_comm_set("MPI_Attr_put", comm, keyval, attribute_val);
}
int b_Comm_get_attr(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    return attr_comm_get("MPI_Comm_get_attr", comm, keyval, attribute_val, flag);
}
int b_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    return attr_comm_get("MPI_Attr_get", comm, keyval, attribute_val, flag);
}
int b_Comm_delete_attr(MPI_Comm comm, int keyval)
{
    return attr_comm_delete("MPI_Comm_delete_attr", comm, keyval);
}
int b_Attr_delete(MPI_Comm comm, int keyval)
{
    return attr_comm_delete("MPI_Attr_delete", comm, keyval);
}

/* ---- datatype attributes ------------------------------------------------------------ */

static int attr_type(const char *fn, MPI_Datatype type, int keyval, mpii_dtype **t)
{
    *t = mpii_dtype_get(type);
    if (!*t)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_TYPE, fn, "datatype: invalid datatype");
    return attr_check_keyval(fn, MPII_OBJ_NONE, 0, MPII_KIND_DTYPE, keyval, 1);
}

int b_Type_set_attr(MPI_Datatype type, int keyval, void *attribute_val)
{
    static const char fn[] = "MPI_Type_set_attr";
    mpii_dtype *t;
    int rc = attr_type(fn, type, keyval, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = mpii_attr_set(type, &t->attrs, keyval, attribute_val);
    return rc == MPI_SUCCESS ? rc : attr_callback_fail(fn, MPII_OBJ_NONE, 0, rc);
}

int b_Type_get_attr(MPI_Datatype type, int keyval, void *attribute_val, int *flag)
{
    static const char fn[] = "MPI_Type_get_attr";
    mpii_dtype *t;
    int rc = attr_type(fn, type, keyval, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!attribute_val || !flag)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn, "%s: NULL pointer",
                        attribute_val ? "flag" : "attribute_val");
    return mpii_attr_get(type, t->attrs, keyval, (void **)attribute_val, flag);
}

int b_Type_delete_attr(MPI_Datatype type, int keyval)
{
    static const char fn[] = "MPI_Type_delete_attr";
    mpii_dtype *t;
    int rc = attr_type(fn, type, keyval, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = mpii_attr_delete(type, &t->attrs, keyval);
    return rc == MPI_SUCCESS ? rc : attr_callback_fail(fn, MPII_OBJ_NONE, 0, rc);
}
