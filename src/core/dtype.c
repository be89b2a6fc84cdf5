/* core datatype engine: compiling type maps into runs, and moving any byte
 * range of a packed stream between a user buffer and a contiguous one.
 *
 * An element is nrep repetitions (rep_stride apart) of a pattern of runs.
 * Copying walks (element, repetition, run) with tight loops; the inner loop
 * over whole repetitions is specialised for the common fixed run lengths
 * (1, 2, 4, 8, 16 bytes) so the compiler emits plain loads and stores. */
#include "core/dtype.h"
#include "util/util.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

/* ---- building ------------------------------------------------------------------ */

typedef struct dt_runbuf {
    core_dt_run *v;
    size_t n, cap;
    int overflow;
} dt_runbuf;

static void dt_runbuf_add(dt_runbuf *b, ptrdiff_t disp, size_t len)
{
    if (len == 0)
        return;
    if (b->n && b->v[b->n - 1].disp + (ptrdiff_t)b->v[b->n - 1].len == disp) {
        b->v[b->n - 1].len += len;
        return;
    }
    if (b->n == b->cap) {
        if (b->cap >= (size_t)INT_MAX) {
            b->overflow = 1;
            return;
        }
        b->cap = b->cap ? b->cap * 2 : 8;
        b->v = util_realloc(b->v, b->cap * sizeof *b->v);
    }
    b->v[b->n].disp = disp;
    b->v[b->n].len = len;
    b->v[b->n].pos = 0;
    b->n++;
}

/* append every run of one element of t, shifted by disp */
static void dt_runbuf_expand(dt_runbuf *b, const core_dt *t, ptrdiff_t disp)
{
    for (size_t k = 0; k < t->nrep && !b->overflow; k++) {
        ptrdiff_t base = disp + (ptrdiff_t)k * t->rep_stride;
        for (int i = 0; i < t->nruns; i++)
            dt_runbuf_add(b, base + t->runs[i].disp, t->runs[i].len);
    }
}

/* positions, common run length and the contig flag from runs/nrep/bounds */
static void dt_finish(core_dt *t)
{
    size_t pos = 0;
    t->runlen = t->nruns ? t->runs[0].len : 0;
    for (int i = 0; i < t->nruns; i++) {
        t->runs[i].pos = pos;
        pos += t->runs[i].len;
        if (t->runs[i].len != t->runlen)
            t->runlen = 0;
    }
    t->rep_size = pos;
    if (t->nrep == 0 || pos == 0) {
        free(t->runs);
        t->runs = NULL;
        t->nrep = 1;
        t->nruns = 0;
        t->rep_size = 0;
    }
    t->size = t->rep_size * t->nrep;
    t->contig = t->size == 0 ||
                (t->nrep == 1 && t->nruns == 1 && t->extent == (ptrdiff_t)t->size);
}

void core_dt_make_basic(core_dt *out, size_t size, size_t align, int basic)
{
    memset(out, 0, sizeof *out);
    out->runs = util_malloc(sizeof *out->runs);
    out->runs[0] = (core_dt_run){0, size, 0};
    out->nruns = 1;
    out->nrep = 1;
    out->extent = out->true_extent = (ptrdiff_t)size;
    out->align = align;
    out->basic = basic;
    dt_finish(out);
}

static inline ptrdiff_t dt_min(ptrdiff_t a, ptrdiff_t b) { return a < b ? a : b; }
static inline ptrdiff_t dt_max(ptrdiff_t a, ptrdiff_t b) { return a > b ? a : b; }

/* bounds of n copies of t, `step` bytes apart, starting at disp */
typedef struct dt_bounds {
    int any, anymark_lb, anymark_ub, anytrue;
    ptrdiff_t lb, ub, mlb, mub, tlb, tub;
} dt_bounds;

static void dt_bounds_add(dt_bounds *bd, const core_dt *t, ptrdiff_t disp, size_t n, ptrdiff_t step)
{
    if (n == 0)
        return;
    ptrdiff_t span = (ptrdiff_t)(n - 1) * step;
    ptrdiff_t lo = disp + dt_min(0, span), hi = disp + dt_max(0, span);
    ptrdiff_t lb = lo + t->lb, ub = hi + t->lb + t->extent;
    if (t->sticky_lb) {
        bd->mlb = bd->anymark_lb ? dt_min(bd->mlb, lb) : lb;
        bd->anymark_lb = 1;
    }
    if (t->sticky_ub) {
        bd->mub = bd->anymark_ub ? dt_max(bd->mub, ub) : ub;
        bd->anymark_ub = 1;
    }
    bd->lb = bd->any ? dt_min(bd->lb, lb) : lb;
    bd->ub = bd->any ? dt_max(bd->ub, ub) : ub;
    bd->any = 1;
    if (t->size) {
        ptrdiff_t tlb = lo + t->true_lb, tub = hi + t->true_lb + t->true_extent;
        bd->tlb = bd->anytrue ? dt_min(bd->tlb, tlb) : tlb;
        bd->tub = bd->anytrue ? dt_max(bd->tub, tub) : tub;
        bd->anytrue = 1;
    }
}

int core_dt_create(core_dt *out, size_t nblocks, const core_dt_block *blocks, size_t nrep,
                   ptrdiff_t stride, int pad_align)
{
    core_dt t;
    memset(&t, 0, sizeof t);
    dt_runbuf rb = {0};
    dt_bounds bd = {0};
    size_t bytes = 0;
    int basic = -1;

    /* one block of one type: the type's own repetition or the outer one carries the count */
    core_dt_block one;
    if (nblocks == 1 && nrep == 1 && blocks[0].blen > 1) {
        nrep = blocks[0].blen;
        stride = blocks[0].type->extent;
        one = (core_dt_block){blocks[0].type, 1, blocks[0].disp};
        blocks = &one;
    }
    for (size_t b = 0; b < nblocks; b++) {
        const core_dt *o = blocks[b].type;
        size_t n = blocks[b].blen;
        if (n == 0)
            continue;
        size_t sz;
        if (__builtin_mul_overflow(o->size, n, &sz) || __builtin_add_overflow(bytes, sz, &bytes))
            goto overflow;
        if (o->size && nrep && o->align > t.align)
            t.align = o->align;     /* empty parts impose no alignment */
        if (o->size) {
            if (basic == -1)
                basic = o->basic;
            else if (basic != o->basic)
                basic = 0;
        }
    }
    if (__builtin_mul_overflow(bytes, nrep, &t.size))
        goto overflow;

    if (nblocks == 1 && blocks[0].blen == 1 && (nrep == 1 || blocks[0].type->nrep == 1)) {
        /* keep the inner repetition (nrep == 1) or add an outer one to a plain pattern */
        const core_dt *o = blocks[0].type;
        for (int i = 0; i < o->nruns; i++)
            dt_runbuf_add(&rb, o->runs[i].disp + blocks[0].disp, o->runs[i].len);
        if (nrep == 1) {
            t.nrep = o->nrep;
            t.rep_stride = o->rep_stride;
        } else {
            t.nrep = nrep;
            t.rep_stride = stride;
        }
    } else {
        for (size_t b = 0; b < nblocks && !rb.overflow; b++) {
            const core_dt *o = blocks[b].type;
            size_t blen = blocks[b].blen;
            if (o->nrep == 1 && o->nruns == 1 && (ptrdiff_t)o->runs[0].len == o->extent) {
                /* copies of a gapless type touch: one run, not blen merges (a
                 * block of 2^31 ints would otherwise take seconds) */
                size_t len;
                if (__builtin_mul_overflow(o->runs[0].len, blen, &len))
                    goto overflow;
                dt_runbuf_add(&rb, blocks[b].disp + o->runs[0].disp, len);
                continue;
            }
            for (size_t j = 0; j < blen && !rb.overflow && o->size; j++)
                dt_runbuf_expand(&rb, o, blocks[b].disp + (ptrdiff_t)j * o->extent);
        }
        t.nrep = nrep;
        t.rep_stride = stride;
    }
    if (rb.overflow)
        goto overflow;

    /* repetitions that touch: one run grows, several runs are written out in full */
    if (t.nrep > 1 && rb.n > 0) {
        ptrdiff_t end = rb.v[rb.n - 1].disp + (ptrdiff_t)rb.v[rb.n - 1].len;
        if (end == rb.v[0].disp + t.rep_stride) {
            if (rb.n == 1) {
                if (__builtin_mul_overflow(rb.v[0].len, t.nrep, &rb.v[0].len))
                    goto overflow;
            } else {
                dt_runbuf full = {0};
                for (size_t k = 0; k < t.nrep && !full.overflow; k++)
                    for (size_t i = 0; i < rb.n; i++)
                        dt_runbuf_add(&full, rb.v[i].disp + (ptrdiff_t)k * t.rep_stride, rb.v[i].len);
                free(rb.v);
                rb = full;
                if (rb.overflow)
                    goto overflow;
            }
            t.nrep = 1;
            t.rep_stride = 0;
        }
    }

    /* bounds: every block's copies, then the outer repetition */
    for (size_t b = 0; b < nblocks; b++)
        dt_bounds_add(&bd, blocks[b].type, blocks[b].disp, blocks[b].blen, blocks[b].type->extent);
    if (nrep == 0)
        bd.any = bd.anytrue = bd.anymark_lb = bd.anymark_ub = 0;
    if (nrep > 1) {
        ptrdiff_t span = (ptrdiff_t)(nrep - 1) * stride;
        ptrdiff_t lo = dt_min(0, span), hi = dt_max(0, span);
        bd.lb += lo, bd.ub += hi, bd.mlb += lo, bd.mub += hi, bd.tlb += lo, bd.tub += hi;
    }
    t.sticky_lb = bd.anymark_lb;
    t.sticky_ub = bd.anymark_ub;
    t.lb = bd.anymark_lb ? bd.mlb : (bd.any ? bd.lb : 0);
    ptrdiff_t ub = bd.anymark_ub ? bd.mub : (bd.any ? bd.ub : 0);
    t.extent = ub - t.lb;
    if (pad_align && !bd.anymark_ub && t.align > 1 && t.extent > 0) {
        ptrdiff_t a = (ptrdiff_t)t.align;
        t.extent = (t.extent + a - 1) / a * a;
    }
    t.true_lb = bd.anytrue ? bd.tlb : 0;
    t.true_extent = bd.anytrue ? bd.tub - bd.tlb : 0;
    t.basic = basic > 0 ? basic : 0;
    if (rb.n > 0 && rb.n < rb.cap)
        rb.v = util_realloc(rb.v, rb.n * sizeof *rb.v);
    t.runs = rb.v;
    t.nruns = (int)rb.n;
    size_t want = t.size;
    dt_finish(&t);
    if (t.size != want)
        util_die("core_dt_create: size %zu != %zu", t.size, want);
    *out = t;
    return UTIL_OK;
overflow:
    free(rb.v);
    return UTIL_EINVAL;
}

int core_dt_copy(core_dt *out, const core_dt *old)
{
    core_dt t = *old;
    t.runs = NULL;
    if (old->nruns) {
        t.runs = util_malloc((size_t)old->nruns * sizeof *t.runs);
        memcpy(t.runs, old->runs, (size_t)old->nruns * sizeof *t.runs);
    }
    *out = t;
    return UTIL_OK;
}

int core_dt_resized(core_dt *out, const core_dt *old, ptrdiff_t lb, ptrdiff_t extent)
{
    int rc = core_dt_copy(out, old);
    if (rc != UTIL_OK)
        return rc;
    out->lb = lb;
    out->extent = extent;
    out->sticky_lb = out->sticky_ub = 1;
    dt_finish(out);
    return UTIL_OK;
}

void core_dt_destroy(core_dt *dt)
{
    free(dt->runs);
    dt->runs = NULL;
    dt->nruns = 0;
}

/* ---- copying ------------------------------------------------------------------- */

/* p + d computed on integers: MPI_BOTTOM (NULL) plus absolute addresses is legal MPI */
static inline char *dt_at(char *p, ptrdiff_t d) { return (char *)((uintptr_t)p + (uintptr_t)d); }

/* a run of any length: small common sizes become single moves */
static inline __attribute__((always_inline)) void dt_mov(char *d, const char *s, size_t len)
{
    switch (len) {
    case 1: *d = *s; break;
    case 2: memcpy(d, s, 2); break;
    case 4: memcpy(d, s, 4); break;
    case 8: memcpy(d, s, 8); break;
    case 16: memcpy(d, s, 16); break;
    default: memcpy(d, s, len); break;
    }
}

/* nk whole repetitions of the pattern, the first at `rep`, `stride` bytes
 * apart; L is the run length when every run has it (a constant at each call
 * site, so the copies compile to plain moves), else 0 */
static inline __attribute__((always_inline)) char *
dt_copy_reps(char *rep, ptrdiff_t stride, size_t nk, const core_dt *dt, char *s, int unpack, size_t L)
{
    const core_dt_run *runs = dt->runs;
    int nruns = dt->nruns;
    if (nruns == 1 && L) {
        char *p = dt_at(rep, runs[0].disp);
        for (size_t k = 0; k < nk; k++, p = dt_at(p, stride), s += L) {
            if (unpack)
                memcpy(p, s, L);
            else
                memcpy(s, p, L);
        }
        return s;
    }
    for (size_t k = 0; k < nk; k++, rep = dt_at(rep, stride)) {
        for (int i = 0; i < nruns; i++) {
            size_t len = L ? L : runs[i].len;
            if (unpack)
                dt_mov(dt_at(rep, runs[i].disp), s, len);
            else
                dt_mov(s, dt_at(rep, runs[i].disp), len);
            s += len;
        }
    }
    return s;
}

static char *dt_copy_reps_any(char *rep, ptrdiff_t stride, size_t nk, const core_dt *dt, char *s,
                              int unpack)
{
    switch (unpack ? dt->runlen : dt->runlen + 1000) {
    case 1: return dt_copy_reps(rep, stride, nk, dt, s, 1, 1);
    case 2: return dt_copy_reps(rep, stride, nk, dt, s, 1, 2);
    case 4: return dt_copy_reps(rep, stride, nk, dt, s, 1, 4);
    case 8: return dt_copy_reps(rep, stride, nk, dt, s, 1, 8);
    case 16: return dt_copy_reps(rep, stride, nk, dt, s, 1, 16);
    case 1001: return dt_copy_reps(rep, stride, nk, dt, s, 0, 1);
    case 1002: return dt_copy_reps(rep, stride, nk, dt, s, 0, 2);
    case 1004: return dt_copy_reps(rep, stride, nk, dt, s, 0, 4);
    case 1008: return dt_copy_reps(rep, stride, nk, dt, s, 0, 8);
    case 1016: return dt_copy_reps(rep, stride, nk, dt, s, 0, 16);
    default:
        if (unpack)
            return dt_copy_reps(rep, stride, nk, dt, s, 1, 0);
        return dt_copy_reps(rep, stride, nk, dt, s, 0, 0);
    }
}

/* part of one repetition: from run i, `in` bytes into it, at most `len` bytes */
static char *dt_copy_part(char *rep, const core_dt *dt, int i, size_t in, char *s, size_t len,
                          int unpack)
{
    const core_dt_run *runs = dt->runs;
    for (; len > 0 && i < dt->nruns; i++, in = 0) {
        size_t n = runs[i].len - in;
        if (n > len)
            n = len;
        char *p = dt_at(rep, runs[i].disp + (ptrdiff_t)in);
        if (unpack)
            dt_mov(p, s, n);
        else
            dt_mov(s, p, n);
        s += n;
        len -= n;
    }
    return s;
}

/* the run of the pattern holding packed byte r (< rep_size) */
static int dt_find_run(const core_dt *dt, size_t r)
{
    int lo = 0, hi = dt->nruns - 1;
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (dt->runs[mid].pos <= r)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static size_t dt_clip(size_t count, const core_dt *dt, size_t offset, size_t len)
{
    size_t total;
    if (__builtin_mul_overflow(count, dt->size, &total))
        total = SIZE_MAX;
    if (offset >= total)
        return 0;
    return len < total - offset ? len : total - offset;
}

static size_t dt_copy(char *base, size_t count, const core_dt *dt, size_t offset, char *s,
                      size_t len, int unpack)
{
    len = dt_clip(count, dt, offset, len);
    if (len == 0)
        return 0;
    if (dt->contig) {
        char *p = dt_at(base, dt->true_lb + (ptrdiff_t)offset);
        if (unpack)
            memcpy(p, s, len);
        else
            memcpy(s, p, len);
        return len;
    }
    size_t e = offset / dt->size, r = offset % dt->size;
    size_t k = r / dt->rep_size, rr = r % dt->rep_size;
    size_t left = len;
    char *ebase = dt_at(base, (ptrdiff_t)e * dt->extent);
    if (rr) {
        /* finish the repetition the range starts in */
        int i = dt_find_run(dt, rr);
        size_t n = dt->rep_size - rr < left ? dt->rep_size - rr : left;
        s = dt_copy_part(dt_at(ebase, (ptrdiff_t)k * dt->rep_stride), dt, i, rr - dt->runs[i].pos, s, n,
                         unpack);
        left -= n;
        if (++k == dt->nrep) {
            k = 0;
            ebase = dt_at(ebase, dt->extent);
        }
    }
    if (dt->nrep == 1 && left >= dt->rep_size) {
        /* whole elements are the repetitions: one loop over all of them */
        size_t m = left / dt->rep_size;
        s = dt_copy_reps_any(ebase, dt->extent, m, dt, s, unpack);
        left -= m * dt->rep_size;
        ebase = dt_at(ebase, (ptrdiff_t)m * dt->extent);
    }
    while (left >= dt->rep_size) {
        size_t m = dt->nrep - k;
        if (m > left / dt->rep_size)
            m = left / dt->rep_size;
        s = dt_copy_reps_any(dt_at(ebase, (ptrdiff_t)k * dt->rep_stride), dt->rep_stride, m, dt, s,
                             unpack);
        left -= m * dt->rep_size;
        k += m;
        if (k == dt->nrep) {
            k = 0;
            ebase = dt_at(ebase, dt->extent);
        }
    }
    if (left)
        dt_copy_part(dt_at(ebase, (ptrdiff_t)k * dt->rep_stride), dt, 0, 0, s, left, unpack);
    return len;
}

size_t core_dt_pack(const void *buf, size_t count, const core_dt *dt, size_t offset, void *out,
                    size_t len)
{
    return dt_copy((char *)(uintptr_t)buf, count, dt, offset, out, len, 0);
}

size_t core_dt_unpack(void *buf, size_t count, const core_dt *dt, size_t offset, const void *in,
                      size_t len)
{
    return dt_copy(buf, count, dt, offset, (char *)(uintptr_t)in, len, 1);
}

/* ---- iovecs ------------------------------------------------------------------- */

static int dt_iov_add(struct iovec *iov, int n, int maxiov, char *p, size_t len)
{
    if (n > 0 && (uintptr_t)iov[n - 1].iov_base + iov[n - 1].iov_len == (uintptr_t)p) {
        iov[n - 1].iov_len += len;
        return n;
    }
    if (n == maxiov)
        return -1;
    iov[n].iov_base = p;
    iov[n].iov_len = len;
    return n + 1;
}

int core_dt_iov(const void *buf, size_t count, const core_dt *dt, size_t offset, size_t len,
                struct iovec *iov, int maxiov, size_t *covered)
{
    char *base = (char *)(uintptr_t)buf;
    size_t done = 0;
    int n = 0;
    len = dt_clip(count, dt, offset, len);
    if (len == 0 || maxiov <= 0) {
        *covered = 0;
        return 0;
    }
    if (dt->contig) {
        iov[0].iov_base = dt_at(base, dt->true_lb + (ptrdiff_t)offset);
        iov[0].iov_len = len;
        *covered = len;
        return 1;
    }
    size_t e = offset / dt->size, r = offset % dt->size;
    size_t k = r / dt->rep_size, rr = r % dt->rep_size;
    int i = dt_find_run(dt, rr);
    size_t in = rr - dt->runs[i].pos;
    char *ebase = dt_at(base, (ptrdiff_t)e * dt->extent);
    while (done < len) {
        size_t take = dt->runs[i].len - in;
        if (take > len - done)
            take = len - done;
        char *p = dt_at(ebase, (ptrdiff_t)k * dt->rep_stride + dt->runs[i].disp + (ptrdiff_t)in);
        int m = dt_iov_add(iov, n, maxiov, p, take);
        if (m < 0)
            break;
        n = m;
        done += take;
        in = 0;
        if (++i == dt->nruns) {
            i = 0;
            if (++k == dt->nrep) {
                k = 0;
                ebase = dt_at(ebase, dt->extent);
            }
        }
    }
    *covered = done;
    return n;
}
