/* core datatype engine: a committed datatype compiled into a compact
 * description that every data path (pt2pt, collectives, RMA) uses to move
 * bytes. The MPI-level constructors (src/mpi/datatype) build these; the
 * protocols only call the functions below. */
#ifndef DCFA_CORE_DTYPE_H
#define DCFA_CORE_DTYPE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct iovec;

typedef struct core_dt_run {
    ptrdiff_t disp;     /* byte offset from the element start (buf) */
    size_t len;         /* bytes */
} core_dt_run;

typedef struct core_dt {
    size_t size;            /* bytes of data in one element (MPI_Type_size) */
    ptrdiff_t lb, extent;   /* MPI_Type_get_extent */
    ptrdiff_t true_lb, true_extent;
    int contig;             /* 1: `count` elements are size*count bytes starting at buf + true_lb */
    int nruns;              /* runs of one element, type-map order, adjacent ones merged */
    core_dt_run *runs;      /* for contig types: one run {true_lb, size} */
    int basic;              /* predefined type index (dtypes.def) when every byte is of one basic type, else 0 */
} core_dt;

/* Copy bytes [offset, offset+len) of the packed stream of (buf, count, dt)
 * into out / from in. Return the number of bytes copied (short only at the end). */
size_t core_dt_pack(const void *buf, size_t count, const core_dt *dt, size_t offset,
                    void *out, size_t len);
size_t core_dt_unpack(void *buf, size_t count, const core_dt *dt, size_t offset,
                      const void *in, size_t len);
/* Fill up to maxiov iovecs describing packed bytes [offset, offset+len) in
 * place; returns the number of iovecs and sets *covered to the bytes they cover. */
int core_dt_iov(const void *buf, size_t count, const core_dt *dt, size_t offset, size_t len,
                struct iovec *iov, int maxiov, size_t *covered);

#endif
