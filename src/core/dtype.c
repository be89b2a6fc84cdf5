/* core datatype engine: compiling type maps into runs, and moving any byte
 * range of a packed stream between a user buffer and a contiguous one.
 *
 * An element is a pattern of runs repeated over nested levels. Copying walks
 * (element, level indices, run) with tight loops; the inner loop over whole
 * pattern copies is specialised for the common fixed run lengths (1, 2, 4,
 * 8, 16 bytes) so the compiler emits plain loads and stores. */
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

/* append every run of one element of t, shifted by disp: the pattern at
 * every index of levels d.. */
static void dt_runbuf_expand(dt_runbuf *b, const core_dt *t, int d, ptrdiff_t disp)
{
    if (d >= t->nlev || d >= CORE_DT_MAXLEV) {    /* (nlev <= CORE_DT_MAXLEV: for the compiler) */
        for (int i = 0; i < t->nruns; i++)
            dt_runbuf_add(b, disp + t->runs[i].disp, t->runs[i].len);
        return;
    }
    for (size_t k = 0; k < t->lev[d].n && !b->overflow; k++)
        dt_runbuf_expand(b, t, d + 1, disp + (ptrdiff_t)k * t->lev[d].stride);
}

/* A type being built: a pattern and the levels repeating it. Up to two
 * levels more than a type keeps: the outer count and the block length are
 * put on top of a part's own before the form is tidied. */
typedef struct dt_form {
    dt_runbuf rb;
    int nlev;
    core_dt_level lev[CORE_DT_MAXLEV + 2];
} dt_form;

static void dt_form_push(dt_form *f, size_t n, ptrdiff_t stride)
{
    f->lev[f->nlev++] = (core_dt_level){n, stride, 0};
}

static void dt_form_drop(dt_form *f, int d)
{
    memmove(&f->lev[d], &f->lev[d + 1], (size_t)(f->nlev - d - 1) * sizeof f->lev[0]);
    f->nlev--;
}

/* write the innermost level out as runs of the pattern */
static void dt_form_unroll(dt_form *f)
{
    core_dt_level l = f->lev[f->nlev - 1];
    dt_runbuf out = {0};
    for (size_t k = 0; k < l.n && !out.overflow; k++)
        for (size_t i = 0; i < f->rb.n; i++)
            dt_runbuf_add(&out, f->rb.v[i].disp + (ptrdiff_t)k * l.stride, f->rb.v[i].len);
    free(f->rb.v);
    f->rb = out;
    f->nlev--;
}

/* equal runs at a constant spacing (an indexed type of a vector's shape)
 * become one run on a new innermost level */
static void dt_form_find_level(dt_form *f)
{
    const core_dt_run *v = f->rb.v;
    size_t n = f->rb.n;
    if (n < 2 || f->nlev >= CORE_DT_MAXLEV)
        return;
    ptrdiff_t step = v[1].disp - v[0].disp;
    for (size_t i = 1; i < n; i++)
        if (v[i].len != v[0].len || v[i].disp - v[i - 1].disp != step)
            return;
    dt_form_push(f, n, step);
    f->rb.n = 1;
}

/* Equivalent simpler forms, until none applies: a level of one copy goes;
 * a single run whose copies touch grows instead of repeating; two levels
 * where the outer steps over exactly the inner's span become one. */
static void dt_form_tidy(dt_form *f)
{
    int again = 1;
    while (again && f->nlev > 0) {
        again = 0;
        for (int d = 0; d < f->nlev && !again; d++) {
            if (f->lev[d].n == 1) {
                dt_form_drop(f, d);
                again = 1;
            }
        }
        if (again || f->nlev == 0)
            continue;
        core_dt_level *in = &f->lev[f->nlev - 1];
        if (f->rb.n == 1 && in->stride == (ptrdiff_t)f->rb.v[0].len) {
            f->rb.v[0].len *= in->n;    /* no overflow: the product is the size */
            f->nlev--;
            again = 1;
            continue;
        }
        for (int d = 0; d + 1 < f->nlev && !again; d++) {
            core_dt_level *o = &f->lev[d], *i = &f->lev[d + 1];
            if (o->stride == (ptrdiff_t)i->n * i->stride) {
                i->n *= o->n;
                dt_form_drop(f, d);
                again = 1;
            }
        }
    }
}

/* Runs of different short lengths that are all multiples of one move
 * (2, 4, 8 or 16 bytes) are cut into runs of that length when it at most
 * doubles their number: the copy loops then run with a constant length
 * (an indexed type whose neighbouring blocks merged into 8- and 16-byte runs). */
static void dt_form_split(dt_form *f)
{
    size_t g = 0, units = 0, n = f->rb.n;
    if (n < 2)
        return;
    for (size_t i = 0; i < n; i++) {
        size_t a = f->rb.v[i].len, b = g;
        while (b) {
            size_t r = a % b;
            a = b, b = r;
        }
        g = a;
    }
    if (g != 2 && g != 4 && g != 8 && g != 16)
        return;
    for (size_t i = 0; i < n; i++)
        units += f->rb.v[i].len / g;
    if (units == n || units > 2 * n || units > (size_t)INT_MAX)
        return;
    core_dt_run *v = util_malloc(units * sizeof *v);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t off = 0; off < f->rb.v[i].len; off += g)
            v[k++] = (core_dt_run){f->rb.v[i].disp + (ptrdiff_t)off, g, 0};
    free(f->rb.v);
    f->rb.v = v;
    f->rb.n = f->rb.cap = units;
}

/* positions, packed sizes, common run length and the contig flag */
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
    if (pos == 0) {
        free(t->runs);
        t->runs = NULL;
        t->nruns = 0;
        t->nlev = 0;
    }
    size_t psize = pos;
    for (int d = t->nlev - 1; d >= 0; d--) {
        t->lev[d].psize = psize;
        psize *= t->lev[d].n;
    }
    t->size = psize;
    t->contig = t->size == 0 ||
                (t->nlev == 0 && t->nruns == 1 && t->extent == (ptrdiff_t)t->size);
}

void core_dt_make_basic(core_dt *out, size_t size, size_t align, int basic)
{
    memset(out, 0, sizeof *out);
    out->runs = util_malloc(sizeof *out->runs);
    out->runs[0] = (core_dt_run){0, size, 0};
    out->nruns = 1;
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

/* the pattern and levels of the parts: one part keeps its levels (under the
 * outer count and its block length); several are written out as runs */
static void dt_form_parts(dt_form *f, size_t nblocks, const core_dt_block *blocks, size_t nrep,
                          ptrdiff_t stride, int only)
{
    if (only >= 0) {
        const core_dt_block *b = &blocks[only];
        const core_dt *o = b->type;
        for (int i = 0; i < o->nruns; i++)
            dt_runbuf_add(&f->rb, o->runs[i].disp + b->disp, o->runs[i].len);
        if (nrep > 1)
            dt_form_push(f, nrep, stride);
        if (b->blen > 1)
            dt_form_push(f, b->blen, o->extent);
        for (int d = 0; d < o->nlev; d++)
            dt_form_push(f, o->lev[d].n, o->lev[d].stride);
        return;
    }
    for (size_t b = 0; b < nblocks && !f->rb.overflow; b++) {
        const core_dt *o = blocks[b].type;
        size_t blen = blocks[b].blen;
        if (o->size == 0)
            continue;
        if (o->nlev == 0 && o->nruns == 1 && (ptrdiff_t)o->runs[0].len == o->extent) {
            /* copies of a gapless type touch: one run, not blen merges (a
             * block of 2^31 ints would otherwise take seconds); the
             * product is below the checked size */
            dt_runbuf_add(&f->rb, blocks[b].disp + o->runs[0].disp, o->runs[0].len * blen);
            continue;
        }
        for (size_t j = 0; j < blen && !f->rb.overflow; j++)
            dt_runbuf_expand(&f->rb, o, 0, blocks[b].disp + (ptrdiff_t)j * o->extent);
    }
    if (nrep > 1)
        dt_form_push(f, nrep, stride);
}

int core_dt_create(core_dt *out, size_t nblocks, const core_dt_block *blocks, size_t nrep,
                   ptrdiff_t stride, int pad_align)
{
    core_dt t;
    memset(&t, 0, sizeof t);
    dt_form f = {0};
    dt_bounds bd = {0};
    size_t bytes = 0;
    int basic = -1, only = -1;  /* the one block with data, -2 if several */

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
            only = only == -1 ? (int)b : -2;
            if (basic == -1)
                basic = o->basic;
            else if (basic != o->basic)
                basic = 0;
        }
    }
    if (__builtin_mul_overflow(bytes, nrep, &t.size))
        goto overflow;
    if (t.size > 0) {
        dt_form_parts(&f, nblocks, blocks, nrep, stride, only);
        dt_form_tidy(&f);
        while (f.nlev > CORE_DT_MAXLEV && !f.rb.overflow)
            dt_form_unroll(&f);     /* too deep: the innermost levels become runs */
        if (!f.rb.overflow) {
            dt_form_find_level(&f);
            dt_form_tidy(&f);
        }
        if (f.rb.overflow)
            goto overflow;
        dt_form_split(&f);
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
    if (f.rb.n > 0 && f.rb.n < f.rb.cap)
        f.rb.v = util_realloc(f.rb.v, f.rb.n * sizeof *f.rb.v);
    t.runs = f.rb.v;
    t.nruns = (int)f.rb.n;
    t.nlev = f.nlev;
    memcpy(t.lev, f.lev, (size_t)f.nlev * sizeof t.lev[0]);
    size_t want = t.size;
    dt_finish(&t);
    if (t.size != want)
        util_die("core_dt_create: size %zu != %zu", t.size, want);
    *out = t;
    return UTIL_OK;
overflow:
    free(f.rb.v);
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

/* rows x nk whole copies of the pattern, the first at `rep`: nk `stride`
 * bytes apart in a row, the rows `ostride` apart */
typedef struct dt_span {
    ptrdiff_t stride, ostride;
    size_t nk, rows;
} dt_span;

/* L is the run length when every run has it (a constant at each call site,
 * so the copies compile to plain moves), else 0 */
static inline __attribute__((always_inline)) char *
dt_copy_reps(char *rep, const dt_span *sp, const core_dt *dt, char *s, int unpack, size_t L)
{
    const core_dt_run *runs = dt->runs;
    int nruns = dt->nruns;
    ptrdiff_t stride = sp->stride;
    size_t nk = sp->nk;
    for (size_t r = 0; r < sp->rows; r++, rep = dt_at(rep, sp->ostride)) {
        if (nruns == 1 && L) {
            /* four at a time, the loads ahead of the stores: the speed of a
             * hand-written strided loop whatever the code's alignment */
            char *p = dt_at(rep, runs[0].disp);
            size_t k = 0;
            for (; k + 4 <= nk; k += 4, p = dt_at(p, 4 * stride), s += 4 * L) {
                uint64_t a[2], b[2], c[2], d[2];
                char *from = unpack ? s : p, *to = unpack ? p : s;
                ptrdiff_t fstep = unpack ? (ptrdiff_t)L : stride, tstep = unpack ? stride : (ptrdiff_t)L;
                memcpy(a, from, L);
                memcpy(b, dt_at(from, fstep), L);
                memcpy(c, dt_at(from, 2 * fstep), L);
                memcpy(d, dt_at(from, 3 * fstep), L);
                memcpy(to, a, L);
                memcpy(dt_at(to, tstep), b, L);
                memcpy(dt_at(to, 2 * tstep), c, L);
                memcpy(dt_at(to, 3 * tstep), d, L);
            }
            for (; k < nk; k++, p = dt_at(p, stride), s += L) {
                if (unpack)
                    memcpy(p, s, L);
                else
                    memcpy(s, p, L);
            }
            continue;
        }
        char *q = rep;
        for (size_t k = 0; k < nk; k++, q = dt_at(q, stride)) {
            for (int i = 0; i < nruns; i++) {
                size_t len = L ? L : runs[i].len;
                if (unpack)
                    dt_mov(dt_at(q, runs[i].disp), s, len);
                else
                    dt_mov(s, dt_at(q, runs[i].disp), len);
                s += len;
            }
        }
    }
    return s;
}

/* The copy loop for dt's common run length and direction. The key keeps
 * the two apart: (length << 1 | unpack), 0 for other lengths (once keyed
 * `unpack ? runlen : runlen + 1000`, which sent the unpack of 1008-byte
 * runs down the pack loop for 8 bytes). */
static char *dt_copy_reps_any(char *rep, const dt_span *sp, const core_dt *dt, char *s, int unpack)
{
    size_t key = (dt->runlen <= 16 ? dt->runlen << 1 : 0) | (unpack ? 1 : 0);
    switch (key) {
    case 1 << 1 | 1: return dt_copy_reps(rep, sp, dt, s, 1, 1);
    case 2 << 1 | 1: return dt_copy_reps(rep, sp, dt, s, 1, 2);
    case 4 << 1 | 1: return dt_copy_reps(rep, sp, dt, s, 1, 4);
    case 8 << 1 | 1: return dt_copy_reps(rep, sp, dt, s, 1, 8);
    case 16 << 1 | 1: return dt_copy_reps(rep, sp, dt, s, 1, 16);
    case 1 << 1: return dt_copy_reps(rep, sp, dt, s, 0, 1);
    case 2 << 1: return dt_copy_reps(rep, sp, dt, s, 0, 2);
    case 4 << 1: return dt_copy_reps(rep, sp, dt, s, 0, 4);
    case 8 << 1: return dt_copy_reps(rep, sp, dt, s, 0, 8);
    case 16 << 1: return dt_copy_reps(rep, sp, dt, s, 0, 16);
    default:
        if (unpack)
            return dt_copy_reps(rep, sp, dt, s, 1, 0);
        return dt_copy_reps(rep, sp, dt, s, 0, 0);
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

/* A position in (buf, count, dt): the pattern copy it lies in, as its index
 * along every dimension (the elements, then the levels) and its address. */
typedef struct dt_cur {
    int in;                                  /* innermost dimension */
    size_t idx[CORE_DT_MAXLEV + 1];
    size_t n[CORE_DT_MAXLEV + 1];
    ptrdiff_t stride[CORE_DT_MAXLEV + 1];
    char *p;                                 /* start of the current pattern copy */
} dt_cur;

/* the cursor at packed byte `offset` (< count * size); returns the byte
 * inside the pattern */
static inline size_t dt_cur_init(dt_cur *c, char *base, size_t count, const core_dt *dt,
                                 size_t offset)
{
    c->in = dt->nlev;
    c->n[0] = count;
    c->stride[0] = dt->extent;
    c->idx[0] = 0;
    c->p = base;
    for (int d = 1; d <= dt->nlev; d++) {
        c->n[d] = dt->lev[d - 1].n;
        c->stride[d] = dt->lev[d - 1].stride;
        c->idx[d] = 0;
    }
    if (offset == 0)
        return 0;   /* the usual case: no division */
    size_t r = offset % dt->size;
    c->idx[0] = offset / dt->size;
    c->p = dt_at(base, (ptrdiff_t)c->idx[0] * dt->extent);
    for (int d = 1; d <= dt->nlev; d++) {
        c->idx[d] = r / dt->lev[d - 1].psize;
        r %= dt->lev[d - 1].psize;
        c->p = dt_at(c->p, (ptrdiff_t)c->idx[d] * c->stride[d]);
    }
    return r;
}

/* m steps on along dimension d (not past its end), carrying into the
 * outer ones */
static inline void dt_cur_step(dt_cur *c, int d, size_t m)
{
    c->idx[d] += m;
    c->p = dt_at(c->p, (ptrdiff_t)m * c->stride[d]);
    while (d > 0 && c->idx[d] == c->n[d]) {
        c->p = dt_at(c->p, c->stride[d - 1] - (ptrdiff_t)c->n[d] * c->stride[d]);
        c->idx[d] = 0;
        c->idx[--d]++;
    }
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
    size_t whole;
    if (offset == 0 && dt->nlev <= 1 && !__builtin_mul_overflow(count, dt->size, &whole) &&
        len == whole) {
        /* all of (buf, count) with at most one level, the usual case: one
         * loop, no cursor */
        dt_span sp = {dt->extent, 0, count, 1};
        if (dt->nlev)
            sp = (dt_span){dt->lev[0].stride, dt->extent, dt->lev[0].n, count};
        dt_copy_reps_any(base, &sp, dt, s, unpack);
        return len;
    }
    dt_cur c;
    size_t rr = dt_cur_init(&c, base, count, dt, offset), left = len, rep = dt->rep_size;
    if (rr) {
        /* finish the pattern copy the range starts in */
        int i = dt_find_run(dt, rr);
        size_t n = rep - rr < left ? rep - rr : left;
        s = dt_copy_part(c.p, dt, i, rr - dt->runs[i].pos, s, n, unpack);
        left -= n;
        dt_cur_step(&c, c.in, 1);
    }
    /* whole copies: a tight loop along the innermost dimension (the
     * elements themselves when the type has no level); from the start of
     * a row, whole rows of it along the next dimension out in the same loop */
    while (left >= rep) {
        int d = c.in;
        dt_span sp = {c.stride[d], 0, c.n[d] - c.idx[d], 1};
        size_t b;   /* a division only when the range ends first */
        if (__builtin_mul_overflow(sp.nk, rep, &b) || b > left)
            sp.nk = left / rep;
        if (d > 0 && c.idx[d] == 0 && sp.nk == c.n[d]) {
            size_t row = rep * c.n[d];
            d--;
            sp.rows = c.n[d] - c.idx[d];
            sp.ostride = c.stride[d];
            if (__builtin_mul_overflow(sp.rows, row, &b) || b > left)
                sp.rows = left / row;
        }
        s = dt_copy_reps_any(c.p, &sp, dt, s, unpack);
        left -= sp.rows * sp.nk * rep;
        dt_cur_step(&c, d, d == c.in ? sp.nk : sp.rows);
    }
    if (left)
        dt_copy_part(c.p, dt, 0, 0, s, left, unpack);
    return len;
}

size_t core_dt_piece(const core_dt *dt)
{
    size_t pieces = dt->nruns > 0 ? (size_t)dt->nruns : 1;
    for (int d = 0; d < dt->nlev; d++)
        pieces *= dt->lev[d].n;
    return dt->size / pieces;
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
    dt_cur c;
    size_t rr = dt_cur_init(&c, base, count, dt, offset);
    int i = dt_find_run(dt, rr);
    size_t in = rr - dt->runs[i].pos;
    while (done < len) {
        size_t take = dt->runs[i].len - in;
        if (take > len - done)
            take = len - done;
        int m = dt_iov_add(iov, n, maxiov, dt_at(c.p, dt->runs[i].disp + (ptrdiff_t)in), take);
        if (m < 0)
            break;
        n = m;
        done += take;
        in = 0;
        if (++i == dt->nruns) {
            i = 0;
            dt_cur_step(&c, c.in, 1);
        }
    }
    *covered = done;
    return n;
}
