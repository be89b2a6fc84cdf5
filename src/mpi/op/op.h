/* Reduction operations (src/mpi/op): the calls the bindings and the
 * collectives use beyond mpii_op_apply / mpii_op_is_commutative / mpii_op_init. */
#ifndef DCFA_MPI_OP_H
#define DCFA_MPI_OP_H

#include "mpi/mpii.h"

#define MPII_OP_NPREDEF 15 /* MPI_OP_NULL .. MPI_NO_OP, docs/handles.md */

int mpii_op_exists(MPI_Op op); /* predefined (not MPI_OP_NULL) or a live user op */
int mpii_op_is_predefined(MPI_Op op);
/* MPI_SUCCESS if op may be applied to dt, else MPI_ERR_OP (or MPI_ERR_TYPE for a bad dt) */
int mpii_op_check(MPI_Op op, MPI_Datatype dt);
const char *mpii_op_name(MPI_Op op); /* "MPI_SUM", "user op" */

/* large != 0: fn is an MPI_User_function_c */
MPI_Op mpii_op_create(void (*fn)(void), int large, int commute);
void mpii_op_free(MPI_Op op); /* MPI_Op_free: the handle dies, held references keep the op */
/* a reference for an operation in flight (collective schedule): a user op
 * freed meanwhile stays usable until the last mpii_op_release */
void mpii_op_ref(MPI_Op op);
void mpii_op_release(MPI_Op op);

#endif
