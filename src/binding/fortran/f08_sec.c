/* Non-contiguous array sections as choice buffers of mpi_f08 (f08.h says
 * which way each goes: a derived datatype, a copy, or an error). */
#include <stdlib.h>
#include <string.h>

#include "binding/fortran/f08.h"
#include "mpi/mpii_err.h"

static CFI_index_t sec_elems(const CFI_cdesc_t *d)
{
    CFI_index_t n = 1;
    for (int i = 0; i < d->rank; i++)
        n *= d->dim[i].extent;
    return n;
}

/* copies between the section (array order) and a contiguous buffer; returns
 * the end of the contiguous part written or read */
static char *sec_copy(const CFI_cdesc_t *d, int dim, char *base, char *flat, int to_flat)
{
    for (CFI_index_t i = 0; i < d->dim[dim].extent; i++) {
        char *p = base + i * d->dim[dim].sm;
        if (dim == 0) {
            if (to_flat)
                memcpy(flat, p, d->elem_len);
            else
                memcpy(p, flat, d->elem_len);
            flat += d->elem_len;
        } else {
            flat = sec_copy(d, dim - 1, p, flat, to_flat);
        }
    }
    return flat;
}

/* The datatype of the first n elements of the section (each one elem of
 * datatype elem): the elements in array order are digits of n in the mixed
 * radix of the extents; each non-zero digit is an hvector of whole lower
 * slabs, placed after the higher ones; a struct joins them. */
static int sec_type(const CFI_cdesc_t *d, CFI_index_t n, MPI_Datatype elem, MPI_Datatype *out)
{
    MPI_Datatype slab[CFI_MAX_RANK + 1];
    MPI_Datatype part[CFI_MAX_RANK] = {0};
    MPI_Aint disp[CFI_MAX_RANK] = {0};
    int blen[CFI_MAX_RANK] = {0};
    CFI_index_t radix[CFI_MAX_RANK];
    int nslab = 0, nparts = 0, rc = MPI_SUCCESS;
    int r = d->rank;

    radix[0] = 1;
    for (int i = 1; i < r; i++)
        radix[i] = radix[i - 1] * d->dim[i - 1].extent;
    slab[0] = elem;
    /* slab[i + 1]: all of dims 0..i; needed up to the highest digit's lower slab */
    for (int i = 0; i + 1 < r && rc == MPI_SUCCESS; i++) {
        rc = PMPI_Type_create_hvector_c(d->dim[i].extent, 1, d->dim[i].sm, slab[i], &slab[i + 1]);
        if (rc == MPI_SUCCESS)
            nslab = i + 1;
    }
    MPI_Aint off = 0;
    for (int i = r - 1; i >= 0 && rc == MPI_SUCCESS; i--) {
        CFI_index_t q = n / radix[i];
        n -= q * radix[i];
        if (q == 0)
            continue;
        rc = PMPI_Type_create_hvector_c(q, 1, d->dim[i].sm, slab[i], &part[nparts]);
        if (rc != MPI_SUCCESS)
            break;
        disp[nparts] = off;
        blen[nparts] = 1;
        nparts++;
        off += (MPI_Aint)q * d->dim[i].sm;
    }
    if (rc == MPI_SUCCESS) {
        if (nparts == 1 && disp[0] == 0) {
            *out = part[0];
            nparts = 0;
        } else {
            rc = PMPI_Type_create_struct(nparts, blen, disp, part, out);
        }
    }
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_commit(out);
    for (int i = 0; i < nparts; i++)
        PMPI_Type_free(&part[i]);
    for (int i = 1; i <= nslab; i++)
        PMPI_Type_free(&slab[i]);
    return rc;
}

/* one dense element of the array: size and extent its element length, lower bound 0 */
static int sec_dense(MPI_Datatype t, size_t elem_len)
{
    MPI_Count size, lb, extent;
    if (PMPI_Type_size_c(t, &size) != MPI_SUCCESS ||
        PMPI_Type_get_extent_c(t, &lb, &extent) != MPI_SUCCESS)
        return 0;
    return lb == 0 && size == (MPI_Count)elem_len && extent == (MPI_Count)elem_len;
}

int f08_sec_prepare(f08_sec *s, int flags, void **buf, int *count, MPI_Count *bigcount,
                    MPI_Datatype *type, const char *fn, int objkind, int handle)
{
    const CFI_cdesc_t *d = s->d;
    s->flags = flags;
    if (flags & F08_ADDR) {
        s->d = NULL; /* only the address counts (windows, attached buffers) */
        return MPI_SUCCESS;
    }
    CFI_index_t total = sec_elems(d);
    if ((flags & F08_SIMPLE) && count == NULL && bigcount == NULL) {
        s->d = NULL; /* one element (MPI_Fetch_and_op ...): the section's first */
        return MPI_SUCCESS;
    }
    if ((flags & F08_SIMPLE) && sec_dense(*type, d->elem_len)) {
        MPI_Count n = count != NULL ? *count : *bigcount;
        if (n > total)
            return mpii_err(objkind, handle, MPI_ERR_COUNT, fn,
                            "count %lld exceeds the %lld elements of the array section",
                            (long long)n, (long long)total);
        if (n == 0) {
            s->d = NULL;
            return MPI_SUCCESS;
        }
        int rc = sec_type(d, (CFI_index_t)n, *type, &s->type);
        if (rc != MPI_SUCCESS)
            return mpii_err(objkind, handle, rc, fn, "array section: no datatype for it");
        *type = s->type;
        if (count != NULL)
            *count = 1;
        if (bigcount != NULL)
            *bigcount = 1;
        return MPI_SUCCESS;
    }
    if (!(flags & F08_BLOCKING))
        return mpii_err(objkind, handle, MPI_ERR_BUFFER, fn,
                        "a non-contiguous array section cannot be the buffer of this "
                        "nonblocking call (only count elements of a datatype of the "
                        "array's element size can be); pass a contiguous array");
    size_t bytes = (size_t)total * d->elem_len;
    s->tmp = malloc(bytes > 0 ? bytes : 1);
    if (s->tmp == NULL)
        return mpii_err(objkind, handle, MPI_ERR_NO_MEM, fn,
                        "no memory for a copy of the array section (%zu bytes)", bytes);
    if (flags & F08_IN)
        sec_copy(d, d->rank - 1, d->base_addr, s->tmp, 1);
    *buf = s->tmp;
    return MPI_SUCCESS;
}

void f08_sec_done(f08_sec *s)
{
    if (s->tmp != NULL) {
        if (s->flags & F08_OUT)
            sec_copy(s->d, s->d->rank - 1, s->d->base_addr, s->tmp, 0);
        free(s->tmp);
        s->tmp = NULL;
    }
    if (s->type != MPI_DATATYPE_NULL)
        PMPI_Type_free(&s->type);
    s->d = NULL;
}
