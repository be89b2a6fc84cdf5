/* MPI_Alloc_mem / MPI_Free_mem, interim (MPI 4.1 9.2): plain malloc/free, so
 * that RMA programs (most of MPICH's rma folder) run on the rma branch.
 * The api branch owns these two functions: when it is merged, this file
 * goes away in favour of its version (both define PMPI_Alloc_mem). */
#include "mpi/mpii.h"

#include <stdlib.h>

int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    static const char fn[] = "MPI_Alloc_mem";
    (void)info;
    if (size < 0)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_SIZE, fn, "size=%ld is negative", (long)size);
    if (!baseptr)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn, "baseptr: NULL pointer");
    void *p = malloc(size ? (size_t)size : 1);
    if (!p)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_NO_MEM, fn, "cannot allocate %ld bytes",
                        (long)size);
    *(void **)baseptr = p;
    return MPI_SUCCESS;
}

int PMPI_Free_mem(void *base)
{
    free(base);
    return MPI_SUCCESS;
}
