/* The arrays of the [twin] pairs' int forms, widened (binding/twin.h). */
#include "binding/twin.h"
#include "util/util.h"

#include <stdlib.h>

_Static_assert(sizeof(MPI_Aint) == sizeof(MPI_Count), "one size of entry for both widenings");

/* n ints as MPI_Aint (aint) or MPI_Count entries in fresh memory */
static void *twin_widen(const int *a, int n, int aint)
{
    void *w = util_malloc((size_t)n * sizeof(MPI_Count) + 1);
    for (int k = 0; k < n; k++) {
        if (aint)
            ((MPI_Aint *)w)[k] = a[k];
        else
            ((MPI_Count *)w)[k] = a[k];
    }
    return w;
}

const MPI_Count *b_counts_wide(b_counts v, int n) { return v.i ? twin_widen(v.i, n, 0) : v.c; }
const MPI_Aint *b_aints_wide(b_aints v, int n) { return v.i ? twin_widen(v.i, n, 1) : v.a; }

void b_counts_free(b_counts v, const MPI_Count *wide)
{
    if (v.i)
        free((void *)(uintptr_t)wide);
}

void b_aints_free(b_aints v, const MPI_Aint *wide)
{
    if (v.i)
        free((void *)(uintptr_t)wide);
}
