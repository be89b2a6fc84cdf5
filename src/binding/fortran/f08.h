/* Choice buffers of mpi_f08 (TYPE(*), DIMENSION(..)): the BIND(C) routines of
 * build/gen/fortran/f08.c get an ISO_Fortran_binding descriptor. A
 * contiguous array (or a scalar) passes its address, with the sentinels of
 * fort.h translated; a non-contiguous section (MPI_SUBARRAYS_SUPPORTED is
 * .TRUE.) is described by f08_sec and f08_sec_prepare decides how it goes:
 *   - F08_SIMPLE (the buffer is exactly count elements of datatype) and the
 *     datatype is one dense element of the array: a derived datatype that
 *     picks the section's elements in place (no copy; nonblocking calls too);
 *   - else, F08_BLOCKING: a contiguous copy of the whole section (copied in
 *     for F08_IN, back for F08_OUT) for the duration of the call;
 *   - else (a nonblocking call): MPI_ERR_BUFFER through the error handler,
 *     naming the call: the library would have to keep a copy alive until the
 *     request completes. */
#ifndef DCFA_BINDING_F08_H
#define DCFA_BINDING_F08_H

#include <ISO_Fortran_binding.h>

#include "binding/fortran/fort.h"
#include "mpi/mpii_err.h"

enum { F08_SIMPLE = 1, F08_BLOCKING = 2, F08_IN = 4, F08_OUT = 8, F08_ADDR = 16 };

typedef struct f08_sec {
    CFI_cdesc_t *d;    /* the section, NULL when contiguous */
    void *tmp;         /* contiguous copy (blocking fallback) */
    MPI_Datatype type; /* derived datatype made for the section */
    int flags;
} f08_sec;

static inline int f08_contig(const CFI_cdesc_t *d)
{
    CFI_index_t want = (CFI_index_t)d->elem_len;
    for (int i = 0; i < d->rank; i++) {
        if (d->dim[i].extent == 0)
            return 1;
        if (d->dim[i].extent != 1 && d->dim[i].sm != want)
            return 0;
        want *= d->dim[i].extent;
    }
    return 1;
}

/* the fast path: a scalar (maybe a sentinel) or a contiguous array; *addr
 * is its address. 0: a section, for f08_buf and f08_sec_prepare */
static inline int f08_plain(const CFI_cdesc_t *d, void **addr)
{
    if (d->rank == 0) {
        *addr = fort_buf(d->base_addr);
        return 1;
    }
    *addr = d->base_addr;
    if (d->rank == 1)
        return d->dim[0].sm == (CFI_index_t)d->elem_len || d->dim[0].extent <= 1;
    return f08_contig(d);
}

static inline void *f08_buf(CFI_cdesc_t *d, f08_sec *s)
{
    s->d = NULL;
    if (__builtin_expect(d->rank == 0 || f08_contig(d), 1))
        return fort_buf(d->base_addr);
    s->d = d;
    s->tmp = NULL;
    s->type = MPI_DATATYPE_NULL;
    return d->base_addr;
}

/* count: the int count argument or NULL, bigcount: the MPI_Count one or NULL
 * (both NULL: one element); *buf, *count and *type are replaced as the
 * section requires. objkind/handle: where errors go (mpii_err). */
int f08_sec_prepare(f08_sec *s, int flags, void **buf, int *count, MPI_Count *bigcount,
                    MPI_Datatype *type, const char *fn, int objkind, int handle);
void f08_sec_done(f08_sec *s);

static inline void f08_sec_finish(f08_sec *s)
{
    if (__builtin_expect(s->d != NULL, 0))
        f08_sec_done(s);
}

#endif
