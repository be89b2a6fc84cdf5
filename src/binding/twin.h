/* The input arrays of a [twin] pair (tools/gen_api.py, docs/handles.md): MPI_X passes its
 * int array, MPI_X_c its MPI_Count or MPI_Aint array, to the one implementation b_X. One
 * of the two pointers is set; both are NULL when the program passed NULL. */
#ifndef DCFA_BINDING_TWIN_H
#define DCFA_BINDING_TWIN_H

#include "mpi.h"

typedef struct b_counts {
    const int *i;
    const MPI_Count *c;
} b_counts;

typedef struct b_aints {
    const int *i;
    const MPI_Aint *a;
} b_aints;

/* The first n entries as the _c form's type: its own array, or the int form's widened
 * into memory that b_counts_free / b_aints_free give back. NULL stays NULL. */
const MPI_Count *b_counts_wide(b_counts v, int n);
void b_counts_free(b_counts v, const MPI_Count *wide);
const MPI_Aint *b_aints_wide(b_aints v, int n);
void b_aints_free(b_aints v, const MPI_Aint *wide);

#endif
