/* The accumulate kernel: a predefined operation applied to packed element
 * streams (what an origin sends and what a target's window holds, packed by
 * the target datatype), and typed copies between two layouts. Used by the
 * direct path and by the message server alike. */
#include "mpi/osc/osc_impl.h"

#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

int osc_dt_basic(MPI_Datatype h)
{
    mpii_dtype *t = mpii_dtype_get(h);
    if (!t)
        return 0;
    int b = t->dt.basic;
    return b > 0 && b < MPII_DTYPE_PREDEF_MAX ? b : 0;
}

int osc_apply_packed(MPI_Op op, int basic, const void *in, void *inout, size_t bytes)
{
    if (op == MPI_NO_OP || bytes == 0)
        return MPI_SUCCESS;
    if (op == MPI_REPLACE || basic == 0) {
        memmove(inout, in, bytes);
        return MPI_SUCCESS;
    }
    MPI_Datatype h = MPII_HANDLE(MPII_KIND_DTYPE, basic);
    const mpii_dtype *bt = mpii_dtype_get(h);
    if (!bt || bt->dt.size == 0)
        return MPI_ERR_TYPE;
    size_t n = bytes / bt->dt.size;
    if ((ptrdiff_t)bt->dt.size == bt->dt.extent && bt->dt.contig)
        return mpii_op_apply(op, in, inout, (MPI_Aint)n, h);
    /* a pair type with padding (MPI_DOUBLE_INT ...): spread the packed
     * pairs into their struct layout, combine, gather them back */
    size_t ext = (size_t)bt->dt.extent;
    char *a = util_malloc(n * ext + 1), *b = util_malloc(n * ext + 1);
    core_dt_unpack(a, n, &bt->dt, 0, in, bytes);
    core_dt_unpack(b, n, &bt->dt, 0, inout, bytes);
    int rc = mpii_op_apply(op, a, b, (MPI_Aint)n, h);
    core_dt_pack(b, n, &bt->dt, 0, inout, bytes);
    free(b);
    free(a);
    return rc;
}

void osc_typed_copy(void *dst, size_t dcount, const core_dt *ddt, const void *src, size_t scount,
                    const core_dt *sdt)
{
    size_t bytes = dcount * ddt->size;
    if (scount * sdt->size < bytes)
        bytes = scount * sdt->size;
    if (bytes == 0)
        return;
    if (ddt->contig && sdt->contig) {
        char *d = (char *)dst + ddt->true_lb;
        const char *s = (const char *)src + sdt->true_lb;
        /* the small sizes of latency-bound code as single moves */
        if (bytes == 8)
            memcpy(d, s, 8);
        else if (bytes == 4)
            memcpy(d, s, 4);
        else
            memmove(d, s, bytes);
        return;
    }
    if (ddt->contig) {
        core_dt_pack(src, scount, sdt, 0, (char *)dst + ddt->true_lb, bytes);
        return;
    }
    if (sdt->contig) {
        core_dt_unpack(dst, dcount, ddt, 0, (const char *)src + sdt->true_lb, bytes);
        return;
    }
    /* both scattered: pack the source straight into the pieces of the destination */
    size_t off = 0;
    while (off < bytes) {
        struct iovec iov[64];
        size_t covered = 0;
        int n = core_dt_iov(dst, dcount, ddt, off, bytes - off, iov, 64, &covered);
        if (n <= 0 || covered == 0)
            break;
        size_t pos = off;
        for (int k = 0; k < n; k++) {
            core_dt_pack(src, scount, sdt, pos, iov[k].iov_base, iov[k].iov_len);
            pos += iov[k].iov_len;
        }
        off += covered;
    }
}
