/* Collective access with two-phase I/O, as a collective schedule.
 *
 * 1. Every rank contributes the file range [lo, hi) its access touches and
 *    what it asks of the exchange (allgather). If the ranges do not
 *    interleave (and no rank has romio_cb_* "enable"), or any rank cannot
 *    aggregate (atomic mode, "disable", an access out of file order), each
 *    rank does its part independently, with data sieving (none for writes
 *    where the ranges interleave). Every rank takes this step, so all make
 *    the same collective calls; the exchange uses rank 0's hints.
 * 2. Otherwise the global range is cut into one contiguous file domain per
 *    aggregator (f->aggr: one rank per node by default, cb_nodes), aligned
 *    to striping_unit when given. Each rank cuts its own runs (the view's
 *    pieces of its access, in file order) at the domain boundaries and tells
 *    each aggregator how many pieces fall in its domain (alltoall), then
 *    sends it the pieces (offset, length).
 * 3. Domains are processed in cycles of cb_buffer_size bytes: in cycle k
 *    aggregator a handles the window [domain start + k W, + W). For a write
 *    the ranks send the data of their pieces in that window (a contiguous
 *    range of their data stream: packed from the user's buffer, or sent in
 *    place when it is contiguous), the aggregator copies the pieces into a
 *    window buffer in rank order and writes the window with one pwrite; if
 *    the pieces leave holes it first reads the window under a write lock
 *    (read-modify-write) so the holes keep their bytes. For a read the
 *    aggregator reads the window's span with one pread and sends each rank
 *    its pieces, which the rank unpacks.
 * 4. The ranks agree on the outcome (allreduce of the error class).
 *
 * The schedule is built step by step by call steps (coll_sched_call) that
 * add the next round when the previous one has completed, so the same code
 * is the blocking, nonblocking and split collective. External32 data is
 * converted for the whole access at once (a staging copy), because the
 * window boundaries may cut an element. */
#include "mpi/io/io.h"
#include "mpi/coll/algo.h"
#include "mpi/datatype/datatype.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* each rank's part of the first allgather: its file range [lo, hi) (-1 -1 if
 * empty), its enum tp_mode, and its hints that shape the exchange (rank 0's are
 * used by all: ranks given different ones must still make the same calls) */
enum { TP_LO, TP_HI, TP_MODE, TP_CB_BUFFER, TP_CB_NODES, TP_STRIPE, TP_NVAL };

typedef struct tp_state {
    io_req q;
    io_view view;   /* the view at the call (q.view points here) */
    io_hints hints; /* and the hints */
    io_file *f;
    mpii_comm *c;
    int rank, size;
    MPI_Offset *done_out; /* blocking: the byte count goes there */
    coll_sched *s;
    char *mem;           /* stream byte 0 of the access in memory, or NULL (pack per piece) */
    int mem_user;        /* mem is the user's buffer (not a conversion copy) */
    char *conv;          /* the external32 copy of the whole access */
    char *convn;         /* reads: the native copy it converts into */
    long long mine[TP_NVAL]; /* what I contribute to the first allgather */
    long long *ranges;       /* everybody's, TP_NVAL per rank */
    int err;             /* my first error class */
    int err_all;         /* the agreed one */
    /* plan */
    MPI_Offset base, gmax, dsize, wsize;
    int ncycles, cycle;
    int naggr, me;    /* my index among the aggregators, -1 if none */
    int *aggr;        /* aggregators at the call */
    io_run *runs;     /* my runs, file order */
    MPI_Offset *rpos; /* stream offset of each (from the start of the access) */
    int nruns;
    int *acur; /* rank side, per aggregator: cursor into my runs */
    MPI_Offset *acur_in;
    long long *scnt, *rcnt; /* pieces: to each rank (only aggregators get some), from each rank */
    io_run *mypieces;       /* my pieces, aggregator after aggregator */
    io_run **lists;         /* aggregator: each rank's pieces in my domain */
    int *lcur;              /* aggregator: cursor per rank */
    MPI_Offset *lcur_in;
    int *lsave; /* aggregator: cursor at the start of the current window */
    MPI_Offset *lsave_in;
    /* current cycle */
    char *xbuf; /* rank side: packed data for / from every aggregator */
    size_t xcap;
    MPI_Offset *xoff, *xlen, *xpos; /* per aggregator: place in xbuf, bytes, stream offset */
    char *xstaged;                  /* per aggregator: the data goes through xbuf, not mem */
    char *abuf;                     /* aggregator: data from / for every rank */
    size_t acap;
    MPI_Offset *aoff, *alen; /* per rank */
    MPI_Offset wwhi;         /* aggregator: upper end of the current window */
    int wnp;                 /* aggregator: pieces in it */
    char *win;
    size_t wcap;
    MPI_Offset eof;     /* reads: file size */
    MPI_Offset mycount; /* reads: stream bytes below end of file */
} tp_state;

/* what a rank asks of the exchange; the ranks decide together (tp_plan) */
enum tp_mode {
    TP_AUTO = 0, /* aggregate if the ranges interleave (romio_cb_* automatic) */
    TP_AGGR,     /* aggregate (enable) */
    TP_ALONE,    /* every rank on its own: atomic mode, disable, or an access out of file order */
};

static void tp_seterr(tp_state *t, int cls)
{
    if (cls != MPI_SUCCESS && t->err == MPI_SUCCESS)
        t->err = cls;
}

static void *tp_grow(char **p, size_t *cap, size_t need)
{
    if (need > *cap) {
        free(*p);
        *p = util_malloc(need);
        *cap = need;
    }
    return *p;
}

/* ---- pieces ------------------------------------------------------------------------------ */

/* Walks runs r[0..n) from cursor (*i, *in) over everything below whi,
 * advancing the cursor; returns the bytes, stores the pieces in out (if
 * not NULL) and the stream offset of the first one in *s0 (if rpos). */
static MPI_Offset tp_take(const io_run *r, const MPI_Offset *rpos, int n, int *i, MPI_Offset *in,
                          MPI_Offset whi, MPI_Offset *s0, io_run *out, int *nout)
{
    MPI_Offset bytes = 0;
    int k = 0;
    while (*i < n) {
        MPI_Offset a = r[*i].off + *in, e = r[*i].off + r[*i].len;
        if (a >= whi)
            break;
        MPI_Offset b = e < whi ? e : whi;
        if (k == 0 && s0 && rpos)
            *s0 = rpos[*i] + *in;
        if (out)
            out[k] = (io_run){a, b - a};
        k++;
        bytes += b - a;
        if (b == e) {
            (*i)++;
            *in = 0;
        } else {
            *in += b - a;
            break;
        }
    }
    if (nout)
        *nout = k;
    return bytes;
}

/* the domain of aggregator a */
static void tp_domain(const tp_state *t, int a, MPI_Offset *lo, MPI_Offset *hi)
{
    MPI_Offset gmax = t->gmax;
    *lo = t->base + a * t->dsize;
    *hi = *lo + t->dsize < gmax ? *lo + t->dsize : gmax;
    if (*hi < *lo)
        *hi = *lo;
}

static void tp_window(const tp_state *t, int a, int k, MPI_Offset *lo, MPI_Offset *hi)
{
    MPI_Offset dlo, dhi;
    tp_domain(t, a, &dlo, &dhi);
    *lo = dlo + k * t->wsize;
    *hi = *lo + t->wsize < dhi ? *lo + t->wsize : dhi;
    if (*lo > dhi)
        *lo = dhi;
    if (*hi < *lo)
        *hi = *lo;
}

/* ---- steps -------------------------------------------------------------------------------- */

static int tp_plan(coll_sched *s, void *arg);
static int tp_lists(coll_sched *s, void *arg);
static int tp_cycle(coll_sched *s, void *arg);
static int tp_agree(coll_sched *s, void *arg);
static int tp_finish(coll_sched *s, void *arg);

/* my runs, the whole access */
static void tp_runs(tp_state *t)
{
    int cap = 64;
    t->runs = util_malloc((size_t)cap * sizeof *t->runs);
    t->rpos = util_malloc((size_t)cap * sizeof *t->rpos);
    MPI_Offset done = 0;
    while (done < t->q.fbytes) {
        if (cap - t->nruns < 64) {
            cap *= 2;
            t->runs = util_realloc(t->runs, (size_t)cap * sizeof *t->runs);
            t->rpos = util_realloc(t->rpos, (size_t)cap * sizeof *t->rpos);
        }
        MPI_Offset cov;
        int k = io_view_runs(&t->view, t->q.pos + done, t->q.fbytes - done, t->runs + t->nruns,
                             cap - t->nruns, &cov);
        MPI_Offset p = done;
        for (int i = 0; i < k; i++) {
            t->rpos[t->nruns + i] = p;
            p += t->runs[t->nruns + i].len;
        }
        /* a run continuing the previous batch's last one stays separate: harmless */
        t->nruns += k;
        done += cov;
        if (k == 0)
            break;
    }
}

/* stream bytes of my access stored below end of file */
static MPI_Offset tp_below_eof(const tp_state *t)
{
    MPI_Offset n = 0;
    for (int i = 0; i < t->nruns; i++) {
        if (t->runs[i].off >= t->eof)
            break;
        MPI_Offset e = t->runs[i].off + t->runs[i].len;
        n += (e <= t->eof ? t->runs[i].len : t->eof - t->runs[i].off);
        if (e > t->eof)
            break;
    }
    return n;
}

static int tp_plan(coll_sched *s, void *arg)
{
    tp_state *t = arg;
    int interleaved = 0, mode = TP_AUTO;
    MPI_Offset gmin = -1, gmax = 0;
    /* sorted by lo, any two neighbours overlapping? (O(n^2) on tiny n is not worth a sort) */
    for (int r = 0; r < t->size; r++) {
        const long long *v = t->ranges + TP_NVAL * r;
        MPI_Offset lo = v[TP_LO], hi = v[TP_HI];
        if (v[TP_MODE] > mode)
            mode = (int)v[TP_MODE];
        if (lo < 0)
            continue;
        if (gmin < 0 || lo < gmin)
            gmin = lo;
        if (hi > gmax)
            gmax = hi;
        for (int q = 0; q < r && !interleaved; q++) {
            MPI_Offset lo2 = t->ranges[TP_NVAL * q + TP_LO], hi2 = t->ranges[TP_NVAL * q + TP_HI];
            if (lo2 >= 0 && lo < hi2 && lo2 < hi)
                interleaved = 1;
        }
    }
    /* the same decision on every rank, from the same allgather: one rank that
     * cannot take part makes everyone do their own part */
    if (gmin < 0 || mode == TP_ALONE || (mode == TP_AUTO && !interleaved)) {
        /* each on its own; where the ranges interleave, a sieving write (read,
         * modify, write back the span under a lock) would put back stale bytes
         * over what another rank writes between its runs without a lock */
        t->q.nosieve = interleaved;
        MPI_Offset done = 0;
        tp_seterr(t, io_indep(&t->q, &done));
        t->mycount = t->q.write ? t->q.fbytes : done;
        t->ncycles = -1; /* nothing converted or staged: io_indep did it all */
        return tp_agree(s, t);
    }
    io_file *f = t->f;
    t->hints.cb_buffer_size = t->ranges[TP_CB_BUFFER];
    t->hints.striping_unit = t->ranges[TP_STRIPE];
    t->aggr = util_malloc((size_t)t->size * sizeof *t->aggr);
    t->naggr = io_aggregators(f, (int)t->ranges[TP_CB_NODES], t->aggr);
    t->me = -1;
    for (int a = 0; a < t->naggr; a++)
        if (t->aggr[a] == t->rank)
            t->me = a;
    MPI_Offset unit = t->hints.striping_unit;
    t->base = unit > 0 ? gmin - gmin % unit : gmin;
    t->gmax = gmax;
    t->dsize = (gmax - t->base + t->naggr - 1) / t->naggr;
    if (unit > 0)
        t->dsize = (t->dsize + unit - 1) / unit * unit;
    if (t->dsize <= 0)
        t->dsize = 1;
    t->wsize = t->hints.cb_buffer_size;
    t->ncycles = (int)((t->dsize + t->wsize - 1) / t->wsize);
    t->cycle = 0;
    tp_runs(t);
    if (!t->q.write) {
        struct stat sb;
        if (fstat(f->fd, &sb) != 0) {
            tp_seterr(t, io_fail(f, io_errno_class(errno), "fstat: %s", strerror(errno)));
            sb.st_size = 0;
        }
        t->eof = sb.st_size;
        t->mycount = tp_below_eof(t);
    }
    /* my pieces per aggregator: the runs cut at the domain boundaries */
    t->acur = util_calloc((size_t)t->naggr, sizeof *t->acur);
    t->acur_in = util_calloc((size_t)t->naggr, sizeof *t->acur_in);
    t->scnt = util_calloc((size_t)t->size, sizeof *t->scnt);
    t->rcnt = util_calloc((size_t)t->size, sizeof *t->rcnt);
    int i = 0, total = 0;
    MPI_Offset in = 0;
    for (int a = 0; a < t->naggr; a++) {
        MPI_Offset dlo, dhi;
        tp_domain(t, a, &dlo, &dhi);
        t->acur[a] = i;
        t->acur_in[a] = in;
        int np;
        tp_take(t->runs, NULL, t->nruns, &i, &in, dhi, NULL, NULL, &np);
        t->scnt[t->aggr[a]] = np;
        total += np;
    }
    t->mypieces = util_malloc((size_t)(total ? total : 1) * sizeof *t->mypieces);
    i = 0;
    in = 0;
    for (int a = 0, k = 0; a < t->naggr; a++) {
        MPI_Offset dlo, dhi;
        tp_domain(t, a, &dlo, &dhi);
        int np;
        tp_take(t->runs, NULL, t->nruns, &i, &in, dhi, NULL, t->mypieces + k, &np);
        k += np;
    }
    int rc = coll_alltoall(s, t->scnt, 1, MPI_LONG_LONG, t->rcnt, 1, MPI_LONG_LONG, t->c);
    tp_seterr(t, rc);
    coll_sched_round(s);
    coll_sched_call(s, tp_lists, t);
    return MPI_SUCCESS;
}

static int tp_lists(coll_sched *s, void *arg)
{
    tp_state *t = arg;
    if (t->me >= 0) {
        t->lists = util_calloc((size_t)t->size, sizeof *t->lists);
        for (int r = 0; r < t->size; r++)
            if (t->rcnt[r] > 0) {
                t->lists[r] = util_malloc((size_t)t->rcnt[r] * sizeof(io_run));
                tp_seterr(t, coll_sched_recv(s, t->lists[r],
                                             (MPI_Aint)(t->rcnt[r] * (long long)sizeof(io_run)),
                                             MPI_BYTE, r, NULL));
            }
        t->lcur = util_calloc((size_t)t->size, sizeof *t->lcur);
        t->lcur_in = util_calloc((size_t)t->size, sizeof *t->lcur_in);
        t->lsave = util_calloc((size_t)t->size, sizeof *t->lsave);
        t->lsave_in = util_calloc((size_t)t->size, sizeof *t->lsave_in);
        t->aoff = util_calloc((size_t)t->size, sizeof *t->aoff);
        t->alen = util_calloc((size_t)t->size, sizeof *t->alen);
    }
    for (int a = 0, k = 0; a < t->naggr; a++) {
        long long n = t->scnt[t->aggr[a]];
        if (n > 0)
            tp_seterr(t,
                      coll_sched_send(s, t->mypieces + k, (MPI_Aint)(n * (long long)sizeof(io_run)),
                                      MPI_BYTE, t->aggr[a], NULL));
        k += (int)n;
    }
    t->xoff = util_calloc((size_t)t->naggr, sizeof *t->xoff);
    t->xlen = util_calloc((size_t)t->naggr, sizeof *t->xlen);
    t->xpos = util_calloc((size_t)t->naggr, sizeof *t->xpos);
    t->xstaged = util_calloc((size_t)t->naggr, sizeof *t->xstaged);
    coll_sched_round(s);
    coll_sched_call(s, tp_cycle, t);
    return MPI_SUCCESS;
}

/* ---- the aggregator's window ----------------------------------------------------------------- */

static int tp_cmp_run(const void *a, const void *b)
{
    const io_run *x = a, *y = b;
    return (x->off > y->off) - (x->off < y->off);
}

/* the pieces of rank r in the current window (from the saved cursor) */
static int tp_rank_pieces(tp_state *t, int r, io_run *out)
{
    int i = t->lsave[r], np;
    MPI_Offset in = t->lsave_in[r];
    tp_take(t->lists[r], NULL, (int)t->rcnt[r], &i, &in, t->wwhi, NULL, out, &np);
    return np;
}

/* window k of mine: bytes per rank (aoff/alen), cursors saved and advanced;
 * returns the total */
static MPI_Offset tp_window_scan(tp_state *t, int k)
{
    MPI_Offset wlo, total = 0;
    tp_window(t, t->me, k, &wlo, &t->wwhi);
    t->wnp = 0;
    for (int r = 0; r < t->size; r++) {
        t->alen[r] = 0;
        if (!t->lists || !t->lists[r])
            continue;
        t->lsave[r] = t->lcur[r];
        t->lsave_in[r] = t->lcur_in[r];
        int np;
        t->alen[r] = tp_take(t->lists[r], NULL, (int)t->rcnt[r], &t->lcur[r], &t->lcur_in[r],
                             t->wwhi, NULL, NULL, &np);
        t->aoff[r] = total;
        total += t->alen[r];
        t->wnp += np;
    }
    return total;
}

/* every piece of the window, rank after rank; *lo / *hi: their span */
static io_run *tp_window_pieces(tp_state *t, MPI_Offset *lo, MPI_Offset *hi)
{
    io_run *all = util_malloc((size_t)t->wnp * sizeof *all);
    int n = 0;
    for (int r = 0; r < t->size; r++)
        if (t->alen[r] > 0)
            n += tp_rank_pieces(t, r, all + n);
    *lo = all[0].off;
    *hi = all[0].off + all[0].len;
    for (int i = 1; i < n; i++) {
        if (all[i].off < *lo)
            *lo = all[i].off;
        if (all[i].off + all[i].len > *hi)
            *hi = all[i].off + all[i].len;
    }
    return all;
}

/* write the window whose data arrived in abuf */
static void tp_window_write(tp_state *t)
{
    io_file *f = t->f;
    if (t->wnp == 0)
        return;
    MPI_Offset lo, hi;
    io_run *all = tp_window_pieces(t, &lo, &hi);
    MPI_Offset span = hi - lo;
    char *win = tp_grow(&t->win, &t->wcap, (size_t)span);
    int n = t->wnp;
    /* covered bytes: merge the pieces in file order */
    io_run *seg = util_malloc((size_t)n * sizeof *seg);
    memcpy(seg, all, (size_t)n * sizeof *seg);
    qsort(seg, (size_t)n, sizeof *seg, tp_cmp_run);
    int ns = 0;
    for (int i = 0; i < n; i++) {
        if (ns > 0 && seg[i].off <= seg[ns - 1].off + seg[ns - 1].len) {
            MPI_Offset e = seg[i].off + seg[i].len;
            if (e > seg[ns - 1].off + seg[ns - 1].len)
                seg[ns - 1].len = e - seg[ns - 1].off;
        } else {
            seg[ns++] = seg[i];
        }
    }
    int rmw = ns > 1 && f->rdfd && t->hints.ds_write != IO_DISABLE;
    int e = 0, rc = MPI_SUCCESS;
    if (rmw) {
        rc = io_lock(f->fd, F_WRLCK, lo, span);
        if (rc != MPI_SUCCESS) {
            tp_seterr(t, io_fail(f, rc, "locking bytes %lld..%lld failed", (long long)lo,
                                 (long long)(lo + span)));
            rmw = 0;
        } else {
            MPI_Offset got = io_pread_all(f->fd, win, span, lo, &e);
            if (got < 0) {
                tp_seterr(t, io_fail(f, io_errno_class(e), "pread of %lld bytes at %lld: %s",
                                     (long long)span, (long long)lo, strerror(e)));
                got = 0;
            }
            memset(win + got, 0, (size_t)(span - got));
        }
    }
    /* the pieces in rank order: a later rank's bytes win where two overlap */
    const io_run *p = all;
    for (int r = 0; r < t->size; r++) {
        if (t->alen[r] == 0)
            continue;
        const char *d = t->abuf + t->aoff[r];
        for (MPI_Offset left = t->alen[r]; left > 0; p++) {
            memcpy(win + (p->off - lo), d, (size_t)p->len);
            d += p->len;
            left -= p->len;
        }
    }
    if (rmw || ns == 1) {
        rc = io_pwrite_all(f->fd, win, span, lo, &e);
        if (rc != MPI_SUCCESS)
            tp_seterr(t, io_fail(f, rc, "pwrite of %lld bytes at %lld: %s", (long long)span,
                                 (long long)lo, strerror(e)));
        if (rmw)
            io_lock(f->fd, F_UNLCK, lo, span);
    } else {
        for (int i = 0; i < ns; i++) {
            rc = io_pwrite_all(f->fd, win + (seg[i].off - lo), seg[i].len, seg[i].off, &e);
            if (rc != MPI_SUCCESS) {
                tp_seterr(t, io_fail(f, rc, "pwrite of %lld bytes at %lld: %s",
                                     (long long)seg[i].len, (long long)seg[i].off, strerror(e)));
                break;
            }
        }
    }
    free(seg);
    free(all);
}

/* read the window and pack each rank's pieces into abuf */
static void tp_window_read(tp_state *t)
{
    io_file *f = t->f;
    if (t->wnp == 0)
        return;
    MPI_Offset lo, hi;
    io_run *all = tp_window_pieces(t, &lo, &hi);
    MPI_Offset span = hi - lo;
    char *win = tp_grow(&t->win, &t->wcap, (size_t)span);
    int e = 0;
    MPI_Offset got = io_pread_all(f->fd, win, span, lo, &e);
    if (got < 0) {
        tp_seterr(t, io_fail(f, io_errno_class(e), "pread of %lld bytes at %lld: %s",
                             (long long)span, (long long)lo, strerror(e)));
        got = 0;
    }
    memset(win + got, 0, (size_t)(span - got));
    const io_run *p = all;
    for (int r = 0; r < t->size; r++) {
        if (t->alen[r] == 0)
            continue;
        char *d = t->abuf + t->aoff[r];
        for (MPI_Offset left = t->alen[r]; left > 0; p++) {
            memcpy(d, win + (p->off - lo), (size_t)p->len);
            d += p->len;
            left -= p->len;
        }
    }
    free(all);
}

/* ---- the rank's side of a cycle
 * ------------------------------------------------------------------ */

/* For a read, whether aggregator a's pieces of this cycle go through xbuf: always for
 * non-contiguous memory, and for the user's contiguous buffer when they reach past the end of
 * the file (the aggregator sends zeros there; the user's bytes past the count stay as they are) */
static int tp_staged(const tp_state *t, int a)
{
    if (!t->mem)
        return 1;
    return !t->q.write && t->mem_user && t->xpos[a] + t->xlen[a] > t->mycount;
}

/* unpack what arrived through xbuf in the last cycle, only the bytes below the end of file */
static void tp_unpack(tp_state *t)
{
    if (t->q.write)
        return;
    for (int a = 0; a < t->naggr; a++) {
        MPI_Offset p = t->xpos[a], n = t->xlen[a];
        if (n <= 0 || p >= t->mycount || !t->xstaged[a])
            continue;
        if (p + n > t->mycount)
            n = t->mycount - p;
        if (t->mem)
            memcpy(t->mem + p, t->xbuf + t->xoff[a], (size_t)n);
        else
            core_dt_unpack(t->q.buf, (size_t)t->q.count, &t->q.mt->dt, (size_t)p,
                           t->xbuf + t->xoff[a], (size_t)n);
    }
}

static int tp_cycle(coll_sched *s, void *arg)
{
    tp_state *t = arg;
    int k = t->cycle;
    int write = t->q.write;
    /* finish cycle k-1 */
    if (k > 0) {
        if (write && t->me >= 0)
            tp_window_write(t);
        if (!write)
            tp_unpack(t);
    }
    if (k == t->ncycles)
        return tp_agree(s, t);
    t->cycle = k + 1;
    /* aggregator: what each rank sends / gets in window k */
    if (t->me >= 0) {
        MPI_Offset total = tp_window_scan(t, k);
        char *abuf = tp_grow(&t->abuf, &t->acap, (size_t)total);
        if (!write)
            tp_window_read(t);
        for (int r = 0; r < t->size; r++) {
            if (t->alen[r] == 0)
                continue;
            if (write)
                tp_seterr(t, coll_sched_recv(s, abuf + t->aoff[r], (MPI_Aint)t->alen[r], MPI_BYTE,
                                             r, NULL));
            else
                tp_seterr(t, coll_sched_send(s, abuf + t->aoff[r], (MPI_Aint)t->alen[r], MPI_BYTE,
                                             r, NULL));
        }
    }
    /* rank side: my pieces in each aggregator's window k */
    MPI_Offset total = 0;
    for (int a = 0; a < t->naggr; a++) {
        MPI_Offset wlo, whi, s0 = 0;
        tp_window(t, a, k, &wlo, &whi);
        t->xlen[a] =
            tp_take(t->runs, t->rpos, t->nruns, &t->acur[a], &t->acur_in[a], whi, &s0, NULL, NULL);
        t->xpos[a] = s0;
        t->xoff[a] = total;
        t->xstaged[a] = (char)tp_staged(t, a);
        if (t->xstaged[a])
            total += t->xlen[a];
    }
    char *xbuf = total ? tp_grow(&t->xbuf, &t->xcap, (size_t)total) : NULL;
    for (int a = 0; a < t->naggr; a++) {
        MPI_Offset n = t->xlen[a];
        if (n == 0)
            continue;
        char *d = t->xstaged[a] ? xbuf + t->xoff[a] : t->mem + t->xpos[a];
        if (write) {
            if (!t->mem)
                core_dt_pack(t->q.buf, (size_t)t->q.count, &t->q.mt->dt, (size_t)t->xpos[a], d,
                             (size_t)n);
            tp_seterr(t, coll_sched_send(s, d, (MPI_Aint)n, MPI_BYTE, t->aggr[a], NULL));
        } else {
            tp_seterr(t, coll_sched_recv(s, d, (MPI_Aint)n, MPI_BYTE, t->aggr[a], NULL));
        }
    }
    coll_sched_round(s);
    coll_sched_call(s, tp_cycle, t);
    return MPI_SUCCESS;
}

/* ---- agreement and the end
 * --------------------------------------------------------------------------- */

static int tp_agree(coll_sched *s, void *arg)
{
    tp_state *t = arg;
    int rc = coll_allreduce(s, &t->err, &t->err_all, 1, MPI_INT, MPI_MAX, t->c);
    if (rc != MPI_SUCCESS) {
        tp_seterr(t, rc);
        t->err_all = t->err;
    }
    coll_sched_round(s);
    coll_sched_call(s, tp_finish, t);
    return MPI_SUCCESS;
}

static void tp_free(tp_state *t)
{
    if (t->lists)
        for (int r = 0; r < t->size; r++)
            free(t->lists[r]);
    free(t->lists);
    free(t->ranges);
    free(t->runs);
    free(t->rpos);
    free(t->acur);
    free(t->acur_in);
    free(t->scnt);
    free(t->rcnt);
    free(t->mypieces);
    free(t->lcur);
    free(t->lcur_in);
    free(t->lsave);
    free(t->lsave_in);
    free(t->xbuf);
    free(t->xoff);
    free(t->xlen);
    free(t->xpos);
    free(t->xstaged);
    free(t->abuf);
    free(t->aoff);
    free(t->alen);
    free(t->win);
    free(t->conv);
    free(t->convn);
    free(t->aggr);
    io_view_free(&t->view);
    free(t);
}

static int tp_finish(coll_sched *s, void *arg)
{
    tp_state *t = arg;
    int err = t->err_all;
    MPI_Offset done = 0;
    if (err == MPI_SUCCESS) {
        if (t->q.write) {
            done = t->q.nbytes;
        } else if (t->ncycles < 0) {
            done = t->mycount; /* io_indep counted native bytes */
        } else {
            done = io_req_native_bytes(&t->q, t->mycount);
            if (t->conv && done > 0) {
                /* the whole access arrived in external32: convert and unpack */
                mpii_dtype_external32(t->q.mt, t->convn, t->conv, done / t->q.esz_native, 0);
                core_dt_unpack(t->q.buf, (size_t)t->q.count, &t->q.mt->dt, 0, t->convn,
                               (size_t)done);
            }
        }
    } else if (t->err == MPI_SUCCESS) {
        io_fail(t->f, err, "the collective access failed on another rank of the file's group");
    }
    if (t->done_out)
        *t->done_out = done;
    coll_sched_set_count(s, done);
    tp_free(t);
    return err;
}

/* ---- building it
 * ----------------------------------------------------------------------------------------- */

/* The file range [lo, hi) of q's access (-1 -1 if empty); 1 if its runs are in
 * file order without overlaps, which two-phase needs. Through a monotone view
 * they are; through another they may still be: PnetCDF gives rank 0 a view
 * whose tiles interleave (a filetype resized to an extent shorter than its
 * data) and accesses only the first tile. */
static int tp_access_range(const io_req *q, long long range[2])
{
    const io_view *v = q->view;
    range[0] = range[1] = -1;
    if (q->fbytes <= 0)
        return 1;
    if (v->monotone) {
        range[0] = io_view_byte(v, q->pos);
        range[1] = io_view_byte(v, q->pos + q->fbytes - 1) + 1;
        return 1;
    }
    int ordered = 1;
    for (MPI_Offset done = 0; done < q->fbytes;) {
        io_run r[64];
        MPI_Offset cov;
        int k = io_view_runs(v, q->pos + done, q->fbytes - done, r, 64, &cov);
        if (k == 0)
            break;
        for (int i = 0; i < k; i++) {
            if (r[i].off < range[1])
                ordered = 0;
            if (range[0] < 0 || r[i].off < range[0])
                range[0] = r[i].off;
            if (r[i].off + r[i].len > range[1])
                range[1] = r[i].off + r[i].len;
        }
        done += cov;
    }
    return ordered;
}

int io_coll(const io_req *q, int nonblocking, MPI_Offset *done, MPI_Request *req)
{
    io_file *f = q->f;
    int cb = q->write ? f->hints.cb_write : f->hints.cb_read;
    tp_state *t = util_calloc(1, sizeof *t);
    t->q = *q;
    io_view_copy(&t->view, q->view);
    t->q.view = &t->view;
    t->hints = f->hints;
    t->f = f;
    t->c = f->comm;
    t->rank = f->comm->rank;
    t->size = f->comm->size;
    t->done_out = nonblocking ? NULL : done;
    if (q->conv && q->fbytes > 0) {
        t->conv = util_malloc((size_t)q->fbytes);
        if (q->write) {
            char *nat = util_malloc((size_t)q->nbytes);
            core_dt_pack(q->buf, (size_t)q->count, &q->mt->dt, 0, nat, (size_t)q->nbytes);
            mpii_dtype_external32(q->mt, nat, t->conv, q->count, 1);
            free(nat);
        } else {
            t->convn = util_malloc((size_t)q->nbytes);
        }
        t->mem = t->conv;
    } else if (q->mt->dt.contig) {
        t->mem = (char *)mpii_buf_at(q->buf, q->mt->dt.true_lb);
        t->mem_user = 1;
    }
    /* Every rank takes part in the schedule, whatever it can do: the ranks
     * decide together whether to aggregate (a rank that skipped the exchange
     * on its own left the others waiting in it: PnetCDF's column_wise) */
    int ordered = tp_access_range(&t->q, t->mine + TP_LO);
    t->mine[TP_MODE] = f->atomic || cb == IO_DISABLE || !ordered ? TP_ALONE
                       : cb == IO_ENABLE                         ? TP_AGGR
                                                                 : TP_AUTO;
    t->mine[TP_CB_BUFFER] = f->hints.cb_buffer_size;
    t->mine[TP_CB_NODES] = f->hints.cb_nodes;
    t->mine[TP_STRIPE] = f->hints.striping_unit;
    t->ranges = util_malloc((size_t)t->size * TP_NVAL * sizeof *t->ranges);
    coll_sched *s = coll_sched_create(f->comm);
    t->s = s;
    coll_sched_hold_type(s, q->mt->handle);
    int rc = coll_allgather(s, t->mine, TP_NVAL, MPI_LONG_LONG, t->ranges, TP_NVAL, MPI_LONG_LONG,
                            f->comm);
    if (rc != MPI_SUCCESS) {
        coll_sched_free(s);
        tp_free(t);
        return io_fail(f, rc, "starting the exchange failed");
    }
    coll_sched_round(s);
    coll_sched_call(s, tp_plan, t);
    if (!nonblocking) {
        rc = coll_sched_wait(s);
        return rc;
    }
    core_req *r;
    coll_sched_start(s, &r);
    *req = MPII_HANDLE(MPII_KIND_REQUEST, r->id);
    return MPI_SUCCESS;
}
