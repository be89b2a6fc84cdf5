/* Reduction operation bindings: Op_create, Op_free, Op_commutative, Reduce_local. */
#include "mpi/mpii.h"
#include "binding/impl.h"
#include "mpi/op/op.h"

static int op_create(const char *fn, void (*f)(void), int large, int commute, MPI_Op *op)
{
    if (!f)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn, "user_fn: must not be NULL");
    if (!op)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn, "op: NULL pointer");
    *op = mpii_op_create(f, large, commute);
    return MPI_SUCCESS;
}

int b_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    return op_create("MPI_Op_create", (void (*)(void))user_fn, 0, commute, op);
}

int b_Op_create_c(MPI_User_function_c *user_fn, int commute, MPI_Op *op)
{
    return op_create("MPI_Op_create_c", (void (*)(void))user_fn, 1, commute, op);
}

int b_Op_free(MPI_Op *op)
{
    static const char fn[] = "MPI_Op_free";
    if (!op || !mpii_op_exists(*op))
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_OP, fn, "op: invalid operation");
    if (mpii_op_is_predefined(*op))
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_OP, fn,
                        "op: %s is predefined and cannot be freed", mpii_op_name(*op));
    mpii_op_free(*op);
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}

int b_Op_commutative(MPI_Op op, int *commute)
{
    static const char fn[] = "MPI_Op_commutative";
    if (!mpii_op_exists(op))
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_OP, fn, "op: invalid operation");
    if (!commute)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn, "commute: NULL pointer");
    *commute = mpii_op_is_commutative(op);
    return MPI_SUCCESS;
}

static int op_reduce_local(const char *fn, const void *inbuf, void *inoutbuf, MPI_Count count,
                           MPI_Datatype dt, MPI_Op op)
{
    if (count < 0)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_COUNT, fn, "count=%lld is negative", count);
    mpii_dtype *t = mpii_dtype_get(dt);
    if (!t)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_TYPE, fn, "datatype: invalid datatype");
    if (!t->committed)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_TYPE, fn,
                        "datatype: not committed (call MPI_Type_commit)");
    if (op == MPI_REPLACE || op == MPI_NO_OP)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_OP, fn,
                        "op: %s is only for accumulate operations", mpii_op_name(op));
    int rc = mpii_op_check(op, dt);
    if (rc == MPI_ERR_OP && !mpii_op_exists(op))
        return mpii_err(MPII_OBJ_NONE, 0, rc, fn, "op: invalid operation");
    if (rc != MPI_SUCCESS)
        return mpii_err(MPII_OBJ_NONE, 0, rc, fn, "op: %s is not defined for datatype %s",
                        mpii_op_name(op), mpii_dtype_label(t));
    if (inbuf == MPI_IN_PLACE || inoutbuf == MPI_IN_PLACE)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_BUFFER, fn,
                        "%s: MPI_IN_PLACE is not allowed (there is no other buffer to take the "
                        "operand from)",
                        inbuf == MPI_IN_PLACE ? "inbuf" : "inoutbuf");
    if (mpii_buf_is_null(inbuf, count, t) || mpii_buf_is_null(inoutbuf, count, t))
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_BUFFER, fn, "%s: NULL with count=%lld",
                        inbuf ? "inoutbuf" : "inbuf", count);
    if (count > 0 && inbuf == inoutbuf)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_BUFFER, fn,
                        "inbuf and inoutbuf are the same buffer");
    rc = mpii_op_apply(op, inbuf, inoutbuf, count, dt);
    if (rc != MPI_SUCCESS)
        return mpii_err(MPII_OBJ_NONE, 0, rc, fn, "applying %s failed", mpii_op_name(op));
    return MPI_SUCCESS;
}

int b_Reduce_local(const char *fn, const void *inbuf, void *inoutbuf, MPI_Count count,
                   MPI_Datatype dt, MPI_Op op)
{
    return op_reduce_local(fn, inbuf, inoutbuf, count, dt, op);
}
