/* Independent access: one rank's read or write, done now with POSIX calls.
 *
 * The access is the stream bytes [pos, pos + fbytes) of the view. It is
 * processed in chunks of the staging buffer (ind_rd/wr_buffer_size): the
 * memory side of a chunk is packed from (or unpacked into) the user's
 * buffer, converted to or from external32 when the view says so; a
 * contiguous native buffer is used in place. The file side of a chunk is the
 * list of runs the view maps it to:
 *  - a single run: one pwrite / pread;
 *  - several runs close together (they fill at least 1/8 of their span, or
 *    romio_ds_* = enable): data sieving, one pread of the whole span, the
 *    runs copied in or out, and for writes one pwrite of the span, under a
 *    write lock of that byte range so that other ranks writing between our
 *    runs are not overwritten with stale bytes;
 *  - otherwise one call per run.
 * In atomic mode the whole access holds a byte-range lock (read lock for
 * reads, write lock for writes) from its first to its last byte, so
 * concurrent overlapping accesses are sequentially consistent. */
#include "mpi/io/io.h"
#include "mpi/datatype/datatype.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- POSIX helpers ------------------------------------------------------------------ */

int io_lock(int fd, int type, MPI_Offset off, MPI_Offset len)
{
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = (short)type;
    fl.l_whence = SEEK_SET;
    fl.l_start = off;
    fl.l_len = len;
    for (;;) {
#ifdef F_OFD_SETLKW
        if (fcntl(fd, F_OFD_SETLKW, &fl) == 0)
            return MPI_SUCCESS;
        if (errno == EINVAL && fcntl(fd, F_SETLKW, &fl) == 0)
            return MPI_SUCCESS;
#else
        if (fcntl(fd, F_SETLKW, &fl) == 0)
            return MPI_SUCCESS;
#endif
        if (errno != EINTR)
            return io_errno_class(errno);
    }
}

int io_pwrite_all(int fd, const void *buf, MPI_Offset n, MPI_Offset off, int *err)
{
    const char *p = buf;
    while (n > 0) {
        size_t chunk = n > (1 << 30) ? (size_t)1 << 30 : (size_t)n;
        ssize_t w = pwrite(fd, p, chunk, off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            *err = errno;
            return io_errno_class(errno);
        }
        if (w == 0) {
            *err = ENOSPC;
            return MPI_ERR_NO_SPACE;
        }
        p += w;
        off += w;
        n -= w;
    }
    return MPI_SUCCESS;
}

MPI_Offset io_pread_all(int fd, void *buf, MPI_Offset n, MPI_Offset off, int *err)
{
    char *p = buf;
    MPI_Offset done = 0;
    while (done < n) {
        size_t chunk = n - done > (1 << 30) ? (size_t)1 << 30 : (size_t)(n - done);
        ssize_t r = pread(fd, p + done, chunk, off + done);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            *err = errno;
            return -1;
        }
        if (r == 0)
            break;
        done += r;
    }
    return done;
}

/* ---- the request ------------------------------------------------------------------------ */

void io_req_init(io_req *q, io_file *f, int write, MPI_Offset pos, void *buf, MPI_Count count,
                 mpii_dtype *mt)
{
    memset(q, 0, sizeof *q);
    q->f = f;
    q->view = &f->view;
    q->write = write;
    q->pos = pos;
    q->buf = buf;
    q->count = count;
    q->mt = mt;
    q->esz_native = (MPI_Offset)mt->dt.size;
    q->esz_file = q->esz_native;
    if (f->view.rep == IO_REP_EXTERNAL32 && q->esz_native > 0) {
        q->conv = 1;
        q->esz_file = mpii_dtype_external32_size(mt);
    }
    q->nbytes = count * q->esz_native;
    q->fbytes = count * q->esz_file;
}

MPI_Offset io_req_native_bytes(const io_req *q, MPI_Offset fbytes)
{
    if (!q->conv || q->esz_file == q->esz_native)
        return fbytes;
    return fbytes / q->esz_file * q->esz_native;
}

/* ---- the file side of a chunk ---------------------------------------------------------------- */

typedef struct io_ctx {
    io_file *f;
    const io_view *view;
    int write;
    int locked;        /* the whole access holds a lock (atomic mode) */
    int sieve;         /* enum io_tri of romio_ds_read/write */
    MPI_Offset sbsize; /* sieving buffer size */
    char *sbuf;        /* sieving buffer, allocated on first use */
    io_run *runs;      /* IO_RUNS of them */
} io_ctx;

/* runs looked at together: a sieving window never spans two batches */
#define IO_RUNS 16384
/* auto sieving: pieces shorter than this on average and filling 1/8 of their span */
#define IO_SIEVE_RUN 4096

static int io_sieve_worth(const io_ctx *c, const io_run *r, int n)
{
    if (n < 2 || c->sieve == IO_DISABLE || (c->write && !c->f->rdfd) || !c->view->monotone)
        return 0;
    MPI_Offset span = r[n - 1].off + r[n - 1].len - r[0].off, data = 0;
    for (int i = 0; i < n; i++)
        data += r[i].len;
    return c->sieve == IO_ENABLE || (data < (MPI_Offset)n * IO_SIEVE_RUN && data * 8 >= span);
}

/* runs r[0..n) of one sieving window, data `d` in stream order */
static int io_sieve_write(io_ctx *c, const io_run *r, int n, const char *d)
{
    io_file *f = c->f;
    MPI_Offset lo = r[0].off, span = r[n - 1].off + r[n - 1].len - lo;
    int rc = MPI_SUCCESS, e = 0;
    if (!c->locked && (rc = io_lock(f->fd, F_WRLCK, lo, span)) != MPI_SUCCESS)
        return io_fail(f, rc, "locking bytes %lld..%lld for a sieving write failed", (long long)lo,
                       (long long)(lo + span));
    MPI_Offset got = io_pread_all(f->fd, c->sbuf, span, lo, &e);
    if (got < 0) {
        rc = io_fail(f, io_errno_class(e), "pread of %lld bytes at %lld: %s", (long long)span,
                     (long long)lo, strerror(e));
        goto unlock;
    }
    memset(c->sbuf + got, 0, (size_t)(span - got));
    for (int i = 0; i < n; i++) {
        memcpy(c->sbuf + (r[i].off - lo), d, (size_t)r[i].len);
        d += r[i].len;
    }
    rc = io_pwrite_all(f->fd, c->sbuf, span, lo, &e);
    if (rc != MPI_SUCCESS)
        io_fail(f, rc, "pwrite of %lld bytes at %lld: %s", (long long)span, (long long)lo,
                strerror(e));
unlock:
    if (!c->locked)
        io_lock(f->fd, F_UNLCK, lo, span);
    return rc;
}

/* reads runs r[0..n) through the sieving buffer; *got: stream bytes read (short at EOF) */
static int io_sieve_read(io_ctx *c, const io_run *r, int n, char *d, MPI_Offset *got)
{
    io_file *f = c->f;
    MPI_Offset lo = r[0].off, span = r[n - 1].off + r[n - 1].len - lo;
    int e = 0;
    MPI_Offset have = io_pread_all(f->fd, c->sbuf, span, lo, &e);
    if (have < 0)
        return io_fail(f, io_errno_class(e), "pread of %lld bytes at %lld: %s", (long long)span,
                       (long long)lo, strerror(e));
    *got = 0;
    for (int i = 0; i < n; i++) {
        MPI_Offset rel = r[i].off - lo;
        if (rel >= have)
            break;
        MPI_Offset len = rel + r[i].len <= have ? r[i].len : have - rel;
        memcpy(d, c->sbuf + rel, (size_t)len);
        d += len;
        *got += len;
        if (len < r[i].len)
            break;
    }
    return MPI_SUCCESS;
}

/* stream bytes [p, p+n) to or from data; for reads *got says how many came
 * (short only at end of file) */
static int io_file_side(io_ctx *c, MPI_Offset p, MPI_Offset n, char *data, MPI_Offset *got)
{
    io_file *f = c->f;
    io_run *runs = c->runs;
    MPI_Offset done = 0;
    int e = 0, rc;
    while (done < n) {
        MPI_Offset cov;
        int nr = io_view_runs(c->view, p + done, n - done, runs, IO_RUNS, &cov);
        char *d = data + done;
        int direct_until = 0; /* runs before it were found not worth sieving: one call each */
        int may_sieve = c->sieve != IO_DISABLE && c->view->monotone && (!c->write || f->rdfd);
        for (int i = 0; i < nr;) {
            /* the window of runs starting at i that fits the sieving buffer */
            int j = i + 1;
            MPI_Offset wlen = runs[i].len;
            if (may_sieve && i >= direct_until)
                for (; j < nr && runs[j].off + runs[j].len - runs[i].off <= c->sbsize; j++)
                    wlen += runs[j].len;
            if (j - i > 1 && !io_sieve_worth(c, runs + i, j - i)) {
                direct_until = j; /* each on its own, without looking again */
                j = i + 1;
                wlen = runs[i].len;
            }
            if (j - i > 1) {
                if (!c->sbuf)
                    c->sbuf = util_malloc((size_t)c->sbsize);
                if (c->write) {
                    rc = io_sieve_write(c, runs + i, j - i, d);
                } else {
                    MPI_Offset g = 0;
                    rc = io_sieve_read(c, runs + i, j - i, d, &g);
                    if (rc == MPI_SUCCESS && g < wlen) {
                        *got = done + (d - (data + done)) + g;
                        return MPI_SUCCESS;
                    }
                }
                if (rc != MPI_SUCCESS)
                    return rc;
                d += wlen;
                i = j;
                continue;
            }
            /* one run */
            if (c->write) {
                rc = io_pwrite_all(f->fd, d, runs[i].len, runs[i].off, &e);
                if (rc != MPI_SUCCESS)
                    return io_fail(f, rc, "pwrite of %lld bytes at %lld: %s",
                                   (long long)runs[i].len, (long long)runs[i].off, strerror(e));
            } else {
                MPI_Offset g = io_pread_all(f->fd, d, runs[i].len, runs[i].off, &e);
                if (g < 0)
                    return io_fail(f, io_errno_class(e), "pread of %lld bytes at %lld: %s",
                                   (long long)runs[i].len, (long long)runs[i].off, strerror(e));
                if (g < runs[i].len) {
                    *got = (d - data) + g;
                    return MPI_SUCCESS;
                }
            }
            d += runs[i].len;
            i++;
        }
        done += cov;
    }
    *got = n;
    return MPI_SUCCESS;
}

/* ---- the whole access ------------------------------------------------------------------------ */

static char *io_mem_at(const io_req *q, MPI_Offset native_off)
{
    return (char *)mpii_buf_at(q->buf, q->mt->dt.true_lb + native_off);
}

int io_indep(const io_req *q, MPI_Offset *done)
{
    io_file *f = q->f;
    *done = 0;
    if (q->fbytes == 0)
        return MPI_SUCCESS;
    io_ctx c = {.f = f, .view = q->view, .write = q->write};
    c.runs = util_malloc(IO_RUNS * sizeof *c.runs);
    c.sieve =
        q->write ? (q->nosieve && !f->atomic ? IO_DISABLE : f->hints.ds_write) : f->hints.ds_read;
    c.sbsize = q->write ? f->hints.ind_wr_buffer_size : f->hints.ind_rd_buffer_size;
    int direct = !q->conv && q->mt->dt.contig;
    /* chunk: whole elements of the memory type when converting */
    MPI_Offset chunk = c.sbsize;
    if (q->conv) {
        chunk = chunk / q->esz_file * q->esz_file;
        if (chunk == 0)
            chunk = q->esz_file;
    }
    if (direct)
        chunk = q->fbytes; /* no staging: the runs are walked in IO_RUNS batches */
    char *stage = direct ? NULL : util_malloc((size_t)chunk);
    char *native = q->conv ? util_malloc((size_t)(chunk / q->esz_file * q->esz_native)) : NULL;
    int rc = MPI_SUCCESS;
    MPI_Offset lo = 0, span = 0;
    if (f->atomic) {
        if (q->view->monotone) {
            lo = io_view_byte(q->view, q->pos);
            span = io_view_byte(q->view, q->pos + q->fbytes - 1) + 1 - lo;
        } /* else the whole file (span 0: to the end and beyond) */
        rc = io_lock(f->fd, q->write ? F_WRLCK : F_RDLCK, lo, span);
        if (rc != MPI_SUCCESS) {
            io_fail(f, rc, "locking bytes %lld..%lld (atomic mode) failed", (long long)lo,
                    (long long)(lo + span));
            goto out;
        }
        c.locked = 1;
    }
    for (MPI_Offset off = 0; off < q->fbytes;) {
        MPI_Offset n = q->fbytes - off < chunk ? q->fbytes - off : chunk;
        MPI_Offset noff = io_req_native_bytes(q, off), nn = io_req_native_bytes(q, n);
        char *data = direct ? io_mem_at(q, off) : stage;
        MPI_Offset got = n;
        if (q->write) {
            if (!direct) {
                core_dt_pack(q->buf, (size_t)q->count, &q->mt->dt, (size_t)noff,
                             q->conv ? native : stage, (size_t)nn);
                if (q->conv)
                    mpii_dtype_external32(q->mt, native, stage, n / q->esz_file, 1);
            }
            rc = io_file_side(&c, q->pos + off, n, data, &got);
            if (rc != MPI_SUCCESS)
                break;
        } else {
            rc = io_file_side(&c, q->pos + off, n, data, &got);
            if (rc != MPI_SUCCESS)
                break;
            MPI_Offset gn = io_req_native_bytes(q, got);
            if (!direct && gn > 0) {
                if (q->conv)
                    mpii_dtype_external32(q->mt, native, stage, got / q->esz_file, 0);
                core_dt_unpack(q->buf, (size_t)q->count, &q->mt->dt, (size_t)noff,
                               q->conv ? native : stage, (size_t)gn);
            }
        }
        *done += io_req_native_bytes(q, got);
        off += n;
        if (got < n)
            break; /* end of file */
    }
    if (c.locked)
        io_lock(f->fd, F_UNLCK, lo, span);
out:
    free(c.runs);
    free(c.sbuf);
    free(stage);
    free(native);
    return rc;
}
