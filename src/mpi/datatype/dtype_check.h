/* Datatype checks for the bindings of other chapters (pt2pt, collectives, RMA). */
#ifndef DCFA_MPI_DTYPE_CHECK_H
#define DCFA_MPI_DTYPE_CHECK_H

#include <mpi.h>

/* MPI_SUCCESS if h may be used to move data (a valid, committed datatype),
 * else MPI_ERR_TYPE with *why set to a short reason ("datatype: ...") for
 * the error message. */
int mpii_dtype_check_comm(MPI_Datatype h, const char **why);

#endif
