/* core datatype engine: a committed datatype compiled into a compact
 * description that every data path (pt2pt, collectives, RMA) uses to move
 * bytes. The MPI-level constructors (src/mpi/datatype) build these; the
 * protocols only call the pack/unpack/iov functions below.
 *
 * One element of a type is a pattern of `nruns` runs (disp, len) repeated
 * over up to CORE_DT_MAXLEV nested levels (`n` copies `stride` bytes apart,
 * the outermost first). A vector of a million blocks is one run on one
 * level; a vector of vectors (a transpose) is one run on two; most other
 * types have no level. See docs/datatypes.md. */
#ifndef DCFA_CORE_DTYPE_H
#define DCFA_CORE_DTYPE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct iovec;

typedef struct core_dt_run {
    ptrdiff_t disp;     /* byte offset from the element start (buf) */
    size_t len;         /* bytes */
    size_t pos;         /* offset of this run in the packed pattern */
} core_dt_run;

/* one level of repetition: n copies (n >= 2), stride bytes apart, of what
 * the inner levels and the pattern describe */
typedef struct core_dt_level {
    size_t n;
    ptrdiff_t stride;
    size_t psize;       /* packed bytes of one copy */
} core_dt_level;

#define CORE_DT_MAXLEV 4

typedef struct core_dt {
    size_t size;            /* bytes of data in one element (MPI_Type_size) */
    ptrdiff_t lb, extent;   /* MPI_Type_get_extent */
    ptrdiff_t true_lb, true_extent;
    int contig;             /* 1: `count` elements are size*count bytes starting at buf + true_lb */
    int nruns;              /* runs of one pattern, type-map order, adjacent ones merged */
    core_dt_run *runs;      /* for contig types: one run {true_lb, size} (none if size 0) */
    int basic;              /* predefined type index (dtypes.def) when every byte is of one basic type, else 0 */
    /* added by the engine */
    int nlev;               /* levels repeating the pattern (0: the pattern is the element) */
    core_dt_level lev[CORE_DT_MAXLEV];  /* lev[0] outermost */
    size_t rep_size;        /* packed bytes of one pattern */
    size_t runlen;          /* common length of every run, 0 if they differ */
    size_t align;           /* largest alignment of the basic types inside */
    int sticky_lb, sticky_ub;   /* bounds set explicitly (create_resized), MPI 4.1 5.1.7 */
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

/* average bytes of one contiguous piece of an element (its size for a contiguous type) */
size_t core_dt_piece(const core_dt *dt);

/* ---- building (used by src/mpi/datatype) -------------------------------------
 * All return 0 or a negative util status (UTIL_ENOMEM, UTIL_EINVAL on overflow)
 * and leave *out untouched on failure. */

/* one basic element of `size` bytes (a predefined type) */
void core_dt_make_basic(core_dt *out, size_t size, size_t align, int basic);

/* `blen` consecutive copies (old->extent apart) of `type`, placed at byte `disp` */
typedef struct core_dt_block {
    const core_dt *type;
    size_t blen;
    ptrdiff_t disp;
} core_dt_block;

/* The general constructor: nrep repetitions, `stride` bytes apart, of the
 * blocks. pad_align: round the extent up to the alignment of the contents
 * unless an upper bound was set explicitly (create_struct does this). */
int core_dt_create(core_dt *out, size_t nblocks, const core_dt_block *blocks, size_t nrep,
                   ptrdiff_t stride, int pad_align);
/* old with its bounds replaced: lb, extent */
int core_dt_resized(core_dt *out, const core_dt *old, ptrdiff_t lb, ptrdiff_t extent);
int core_dt_copy(core_dt *out, const core_dt *old);
void core_dt_destroy(core_dt *dt);

#endif
