/* MPI_Alloc_mem / MPI_Free_mem bindings (MPI 4.1 section 9.2). */
#include "mpi/mpii.h"
#include "mpi/info/info.h"
#include "mpi/mem/mem.h"
#include "binding/impl.h"

#include <stdlib.h>

/* the default alignment of MPI_Alloc_mem: a cache line */
#define MEM_DEFAULT_ALIGN 64

int b_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    static const char fn[] = "MPI_Alloc_mem";
    size_t align = MEM_DEFAULT_ALIGN;
    if (size < 0)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn, "size=%ld is negative", (long)size);
    if (info != MPI_INFO_NULL && !mpii_info_exists(info))
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_INFO, fn, "info: invalid info object");
    if (!baseptr)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn, "baseptr: NULL pointer");
    /* mpi_minimum_memory_alignment (MPI 4.1): a power of two; other values are ignored */
    const char *a = info != MPI_INFO_NULL ? mpii_info_lookup(info, "mpi_minimum_memory_alignment")
                                          : NULL;
    if (a) {
        char *end;
        unsigned long long v = strtoull(a, &end, 10);
        if (end != a && *end == '\0' && v && (v & (v - 1)) == 0 && v <= (1ull << 30) &&
            v > align)
            align = (size_t)v;
    }
    void *p = mpii_mem_alloc((size_t)size, align);
    if (!p)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_NO_MEM, fn, "cannot allocate %ld bytes",
                        (long)size);
    *(void **)baseptr = p;
    return MPI_SUCCESS;
}

int b_Free_mem(void *base)
{
    if (!base)
        return MPI_SUCCESS;
    if (mpii_mem_free(base) != UTIL_OK)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, "MPI_Free_mem",
                        "base=%p was not returned by MPI_Alloc_mem (or was freed already)", base);
    return MPI_SUCCESS;
}
