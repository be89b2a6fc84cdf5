/* File views and data representations.
 *
 * A view is (disp, etype, filetype, datarep): from byte disp on, the file is
 * tiled by copies of the filetype, one every extent bytes; the bytes of its
 * type map are the data the process sees, in type-map order. That order is
 * the view's data stream: stream byte p lies in tile p / size, at the byte
 * of the filetype's packed form p % size. The datatype engine already
 * describes any byte range of a packed stream as pieces of memory
 * (core_dt_iov); laid over address 0, the pieces it returns are file offsets
 * relative to disp, so a view is never flattened into a list up front.
 *
 * Representations: "native" (and "internal", the same here) store memory
 * bytes; "external32" stores each basic element big-endian at the sizes of
 * MPI 4.1 Table 13.2 (the conversion of MPI_Pack_external). A filetype whose
 * external32 size equals its native size keeps its layout; a dense
 * contiguous one of another size is laid out densely at the external32
 * size; any other (a struct with a long inside, say) is refused with
 * MPI_ERR_UNSUPPORTED_DATAREP rather than given a layout of our own. */
#include "mpi/io/io.h"
#include "mpi/datatype/datatype.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/uio.h>

/* ---- registered representations ------------------------------------------------ */

static io_datarep *io_reps;
static int io_nreps;

static int io_rep_predefined(const char *name)
{
    return !strcasecmp(name, "native") || !strcasecmp(name, "internal") ||
           !strcasecmp(name, "external32");
}

const io_datarep *io_datarep_find(const char *name)
{
    for (int i = 0; i < io_nreps; i++)
        if (!strcmp(io_reps[i].name, name))
            return &io_reps[i];
    return NULL;
}

int io_datarep_register(const io_datarep *rep)
{
    if (io_rep_predefined(rep->name) || io_datarep_find(rep->name))
        return MPI_ERR_DUP_DATAREP;
    io_reps = util_realloc(io_reps, (size_t)(io_nreps + 1) * sizeof *io_reps);
    io_reps[io_nreps++] = *rep;
    return MPI_SUCCESS;
}

void io_datarep_finalize(void)
{
    free(io_reps);
    io_reps = NULL;
    io_nreps = 0;
}

/* ---- making a view ------------------------------------------------------------------ */

/* MPI 4.1 14.3: the displacements of etype and filetype are non-negative and
 * monotonically non-decreasing, and neither overlaps itself in a file opened
 * for writing (MPI_ERR_IO, as ROMIO). A read-only view may overlap; then, as
 * when the filetype's copies interleave, the data stream is not in file
 * order and *monotone is cleared (no sieving, no two-phase for it). */
static int view_check_type(io_file *f, const core_dt *t, const char *what, int writable,
                           int *monotone)
{
    struct iovec iov[64];
    MPI_Offset prev_off = -1, prev_end = 0, first = -1;
    for (size_t off = 0; off < t->size;) {
        size_t cov;
        int k = core_dt_iov(NULL, 1, t, off, t->size - off, iov, 64, &cov);
        if (k == 0)
            break;
        for (int i = 0; i < k; i++) {
            MPI_Offset o = (MPI_Offset)(intptr_t)iov[i].iov_base, len = (MPI_Offset)iov[i].iov_len;
            if (o < 0)
                return io_fail(f, MPI_ERR_IO, "%s: a displacement is negative (%lld)", what,
                               (long long)o);
            if (o < prev_off)
                return io_fail(f, MPI_ERR_IO,
                               "%s: displacements decrease (%lld after %lld): they must be "
                               "monotonically non-decreasing",
                               what, (long long)o, (long long)prev_off);
            if (o < prev_end) {
                if (writable)
                    return io_fail(f, MPI_ERR_IO,
                                   "%s: it overlaps itself (bytes %lld..%lld twice), which a file "
                                   "open for writing does not allow",
                                   what, (long long)o, (long long)prev_end);
                *monotone = 0;
            }
            if (first < 0)
                first = o;
            prev_off = o;
            if (o + len > prev_end)
                prev_end = o + len;
        }
        off += cov;
    }
    /* the next copy must start after this one ends */
    if (first >= 0 && t->extent + first < prev_end)
        *monotone = 0;
    return MPI_SUCCESS;
}

/* the file layout of ft under representation rep; MPI_SUCCESS or an error class */
static int view_layout(io_view *v, io_file *f)
{
    v->fdt = &v->ft->dt;
    v->esize = v->et->dt.size;
    if (v->rep != IO_REP_EXTERNAL32)
        return MPI_SUCCESS;
    MPI_Count ee = mpii_dtype_external32_size(v->et), fe = mpii_dtype_external32_size(v->ft);
    v->esize = (size_t)ee;
    if (fe == (MPI_Count)v->ft->dt.size)
        return MPI_SUCCESS;
    const core_dt *t = &v->ft->dt;
    if (t->contig && t->extent == (ptrdiff_t)t->size) {
        core_dt_make_basic(&v->scaled, (size_t)fe, 1, 0);
        v->has_scaled = 1;
        v->fdt = &v->scaled;
        return MPI_SUCCESS;
    }
    return io_fail(f, MPI_ERR_UNSUPPORTED_DATAREP,
                   "filetype: its external32 size (%lld bytes) differs from its native size "
                   "(%zu) and it is not contiguous; such a layout is not supported",
                   (long long)fe, t->size);
}

static void view_release(io_view *v)
{
    if (v->has_scaled)
        core_dt_destroy(&v->scaled);
    v->has_scaled = 0;
    if (v->et)
        mpii_dtype_release(v->et);
    if (v->ft)
        mpii_dtype_release(v->ft);
    v->et = v->ft = NULL;
}

void io_view_free(io_view *v) { view_release(v); }

void io_view_copy(io_view *dst, const io_view *src)
{
    *dst = *src;
    mpii_dtype_ref(dst->et);
    mpii_dtype_ref(dst->ft);
    if (src->has_scaled) {
        core_dt_copy(&dst->scaled, &src->scaled);
        dst->fdt = &dst->scaled;
    } else {
        dst->fdt = &dst->ft->dt;
    }
}

int io_view_make(io_file *f, io_view *v, MPI_Offset disp, mpii_dtype *et, mpii_dtype *ft,
                 const char *datarep)
{
    io_view n;
    memset(&n, 0, sizeof n);
    if (!strcasecmp(datarep, "native") || !strcasecmp(datarep, "internal")) {
        n.rep = IO_REP_NATIVE;
    } else if (!strcasecmp(datarep, "external32")) {
        n.rep = IO_REP_EXTERNAL32;
    } else {
        const io_datarep *r = io_datarep_find(datarep);
        if (!r)
            return io_fail(f, MPI_ERR_UNSUPPORTED_DATAREP,
                           "datarep '%s': not native, internal, external32 or registered", datarep);
        if (r->read_fn || r->write_fn || r->read_fn_c || r->write_fn_c)
            return io_fail(f, MPI_ERR_UNSUPPORTED_DATAREP,
                           "datarep '%s': representations with conversion functions are "
                           "registered but cannot be used in a view",
                           datarep);
        n.rep = IO_REP_USER; /* no conversion: the bytes are the memory bytes */
    }
    size_t len = strlen(datarep);
    memcpy(n.datarep, datarep, len + 1);
    n.disp = disp;
    n.et = et;
    n.ft = ft;
    int rc = view_layout(&n, f);
    if (rc != MPI_SUCCESS) {
        if (n.has_scaled)
            core_dt_destroy(&n.scaled);
        return rc;
    }
    if (n.esize == 0)
        return io_fail(f, MPI_ERR_TYPE, "etype: its size is 0");
    /* a filetype of size 0 is a view with no data: a process that takes no part in
     * the file's accesses (MPICH's io/setview_zero) */
    if (n.fdt->size % n.esize != 0)
        return io_fail(f, MPI_ERR_TYPE,
                       "filetype: its size (%zu bytes) is not a multiple of the etype's size "
                       "(%zu)",
                       n.fdt->size, n.esize);
    int writable = !(f->amode & MPI_MODE_RDONLY), mono = 1;
    rc = view_check_type(f, &et->dt, "etype", writable, &mono);
    if (rc == MPI_SUCCESS)
        rc = view_check_type(f, n.fdt, "filetype", writable, &mono);
    if (rc == MPI_SUCCESS && n.fdt->extent <= 0 && n.fdt->size > 0)
        rc = io_fail(f, MPI_ERR_IO, "filetype: its extent must be positive");
    if (rc != MPI_SUCCESS) {
        if (n.has_scaled)
            core_dt_destroy(&n.scaled);
        return rc;
    }
    n.monotone = mono;
    mpii_dtype_ref(et);
    mpii_dtype_ref(ft);
    view_release(v);
    *v = n;
    if (v->has_scaled) /* fdt pointed into the copy on the stack */
        v->fdt = &v->scaled;
    else
        v->fdt = &v->ft->dt;
    return MPI_SUCCESS;
}

/* ---- mapping the data stream onto the file ---------------------------------------------- */

int io_view_runs(const io_view *v, MPI_Offset p, MPI_Offset n, io_run *runs, int max,
                 MPI_Offset *covered)
{
    const core_dt *t = v->fdt;
    struct iovec iov[64];
    int nr = 0;
    MPI_Offset done = 0;
    *covered = 0;
    if (t->size == 0 || n <= 0) /* a view with no data, or nothing asked */
        return 0;
    size_t tiles = (size_t)((p + n + (MPI_Offset)t->size - 1) / (MPI_Offset)t->size);
    while (done < n && nr < max) {
        int want = max - nr < 64 ? max - nr : 64;
        size_t cov = 0;
        int k =
            core_dt_iov(NULL, tiles, t, (size_t)(p + done), (size_t)(n - done), iov, want, &cov);
        if (k == 0)
            break;
        for (int i = 0; i < k; i++) {
            MPI_Offset off = v->disp + (MPI_Offset)(intptr_t)iov[i].iov_base;
            if (nr > 0 && runs[nr - 1].off + runs[nr - 1].len == off) {
                runs[nr - 1].len += (MPI_Offset)iov[i].iov_len;
            } else {
                runs[nr].off = off;
                runs[nr].len = (MPI_Offset)iov[i].iov_len;
                nr++;
            }
        }
        done += (MPI_Offset)cov;
        if (nr == max)
            break;
    }
    *covered = done;
    return nr;
}

MPI_Offset io_view_byte(const io_view *v, MPI_Offset p)
{
    io_run r;
    MPI_Offset cov;
    return io_view_runs(v, p, 1, &r, 1, &cov) == 1 ? r.off : v->disp;
}

MPI_Offset io_view_bytes_below(const io_view *v, MPI_Offset size)
{
    const core_dt *t = v->fdt;
    MPI_Offset rel = size - v->disp, E = t->extent, S = (MPI_Offset)t->size;
    MPI_Offset tlb = t->true_lb, tex = t->true_extent;
    if (S == 0 || rel <= tlb)
        return 0;
    /* tiles whose data ends at or below rel are whole */
    MPI_Offset whole = rel >= tlb + tex ? (rel - tlb - tex) / E + 1 : 0;
    MPI_Offset bytes = whole * S;
    /* the next few tiles may hold data below rel too (tiles can interleave
     * when the extent is smaller than the true extent); walk them */
    for (MPI_Offset tile = whole;; tile++) {
        if (tile * E + tlb >= rel)
            break;
        MPI_Offset p = tile * S, left = S;
        while (left > 0) {
            io_run r[64];
            MPI_Offset cov;
            int k = io_view_runs(v, p, left, r, 64, &cov);
            for (int i = 0; i < k; i++) {
                if (r[i].off >= size)
                    return bytes;
                MPI_Offset in = r[i].off + r[i].len <= size ? r[i].len : size - r[i].off;
                bytes += in;
                if (in < r[i].len)
                    return bytes;
            }
            p += cov;
            left -= cov;
        }
    }
    return bytes;
}
