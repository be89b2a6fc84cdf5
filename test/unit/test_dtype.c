/* Unit test of the datatype engine and the datatype chapter, without a
 * launcher: the datatype layer is initialised directly (mpii_dtype_init).
 *
 * A reference model builds, next to every MPI datatype, its type map the
 * slow obvious way (a list of (displacement, size) entries of one element,
 * expanded from the constructor arguments) and its bounds. Random nested
 * types (vectors of structs of indexed types, negative strides, resized
 * extents, zero-length blocks, subarrays) are checked against it: size,
 * extents, packing of the whole stream, packing and unpacking of random byte
 * ranges and of random chunkings (the pipelined path), iovecs, element
 * counts. Then fixed cases: darray ownership, envelopes, names, MPI_Pack and
 * external32, huge vectors staying compact.
 *
 * Usage: unit_test_dtype [cases] [seed] */
#include "mpi/mpii.h"
#include "mpi/datatype/dtype_check.h"
#include "mpi/osc/osc_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <sys/uio.h>

static int errors;
static long checks;

#define CHECK(cond, ...)                                                                          \
    do {                                                                                          \
        checks++;                                                                                 \
        if (!(cond)) {                                                                            \
            fprintf(stderr, "line %d: ", __LINE__);                                               \
            fprintf(stderr, __VA_ARGS__);                                                         \
            fputc('\n', stderr);                                                                  \
            if (++errors > 20)                                                                    \
                exit(1);                                                                          \
        }                                                                                         \
    } while (0)

/* ---- random numbers ------------------------------------------------------------- */

static unsigned long long rng_state;
static unsigned rnd(unsigned n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return n ? (unsigned)(rng_state % n) : 0;
}
static long rnd_range(long lo, long hi) { return lo + (long)rnd((unsigned)(hi - lo + 1)); }

/* ---- the reference model ------------------------------------------------------------ */

typedef struct ent {
    long disp;
    int size;
} ent;

typedef struct rtype {
    MPI_Datatype h;
    ent *map;
    long n, cap;
    long lb, ub, tlb, tub;
    int mark_lb, mark_ub;
    int align;
    long size;
    char desc[400];     /* how it was built, for failure messages */
} rtype;

static void rt_add(rtype *t, long disp, int size)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 16;
        t->map = realloc(t->map, (size_t)t->cap * sizeof *t->map);
    }
    t->map[t->n++] = (ent){disp, size};
    t->size += size;
}

typedef struct bnd {
    int any, anymlb, anymub, anytrue;
    long lb, ub, mlb, mub, tlb, tub;
} bnd;

/* one copy of child c placed at offset o: its entries and its bounds */
static void rt_place(rtype *t, bnd *b, const rtype *c, long o)
{
    for (long i = 0; i < c->n; i++)
        rt_add(t, o + c->map[i].disp, c->map[i].size);
    long lb = o + c->lb, ub = o + c->ub;
    if (c->mark_lb) {
        b->mlb = b->anymlb && b->mlb < lb ? b->mlb : lb;
        b->anymlb = 1;
    }
    if (c->mark_ub) {
        b->mub = b->anymub && b->mub > ub ? b->mub : ub;
        b->anymub = 1;
    }
    b->lb = b->any && b->lb < lb ? b->lb : lb;
    b->ub = b->any && b->ub > ub ? b->ub : ub;
    b->any = 1;
    if (c->size) {
        long tl = o + c->tlb, tu = o + c->tub;
        b->tlb = b->anytrue && b->tlb < tl ? b->tlb : tl;
        b->tub = b->anytrue && b->tub > tu ? b->tub : tu;
        b->anytrue = 1;
    }
    if (c->size && c->align > t->align)
        t->align = c->align;
}

static void rt_close(rtype *t, const bnd *b, int pad)
{
    t->mark_lb = b->anymlb;
    t->mark_ub = b->anymub;
    t->lb = b->anymlb ? b->mlb : b->any ? b->lb : 0;
    t->ub = b->anymub ? b->mub : b->any ? b->ub : 0;
    if (pad && !b->anymub && t->align > 1 && t->ub - t->lb > 0) {
        long ext = t->ub - t->lb;
        ext = (ext + t->align - 1) / t->align * t->align;
        t->ub = t->lb + ext;
    }
    t->tlb = b->anytrue ? b->tlb : 0;
    t->tub = b->anytrue ? b->tub : 0;
}

static long rt_extent(const rtype *t) { return t->ub - t->lb; }

static void rt_free(rtype *t)
{
    if (t->h != MPI_DATATYPE_NULL) {
        mpii_dtype *o = mpii_dtype_get(t->h);
        if (o && !o->predefined)
            MPI_Type_free(&t->h);
    }
    free(t->map);
    free(t);
}

static rtype *rt_named(MPI_Datatype h, int size)
{
    rtype *t = calloc(1, sizeof *t);
    t->h = h;
    rt_add(t, 0, size);
    t->lb = 0, t->ub = size, t->tlb = 0, t->tub = size;
    t->align = size;
    snprintf(t->desc, sizeof t->desc, "b%d", size);
    return t;
}

static rtype *rt_basic(void)
{
    static const MPI_Datatype hs[] = {MPI_CHAR, MPI_SHORT, MPI_INT, MPI_DOUBLE, MPI_FLOAT};
    static const int sz[] = {1, 2, 4, 8, 4};
    int k = (int)rnd(5);
    return rt_named(hs[k], sz[k]);
}

/* ---- random types: each constructor built in MPI and in the model ---------------------- */

static rtype *rt_random(int depth);

static rtype *rt_vector_of(const rtype *c, int hv, int count, int bl, long stride)
{
    rtype *t = calloc(1, sizeof *t);
    bnd b = {0};
    long sb = hv ? stride : stride * rt_extent(c);
    for (int i = 0; i < count; i++)
        for (int j = 0; j < bl; j++)
            rt_place(t, &b, c, i * sb + j * rt_extent(c));
    rt_close(t, &b, 0);
    int rc = hv ? MPI_Type_create_hvector(count, bl, stride, c->h, &t->h)
                : MPI_Type_vector(count, bl, (int)stride, c->h, &t->h);
    CHECK(rc == MPI_SUCCESS, "vector rc %d", rc);
    snprintf(t->desc, sizeof t->desc, "%svec(%d,%d,%ld,%.300s)", hv ? "h" : "", count, bl, stride, c->desc);
    return t;
}

static rtype *rt_vector(rtype *c, int hv)
{
    /* sometimes long enough to stay a level of repetition (not written out) */
    int count = rnd(4) ? (int)rnd(5) : 17 + (int)rnd(24), bl = (int)rnd(4);
    long stride = hv ? rnd_range(-3 * rt_extent(c) - 8, 3 * rt_extent(c) + 8) : rnd_range(-4, 4);
    return rt_vector_of(c, hv, count, bl, stride);
}

/* kind 0 indexed, 1 hindexed, 2 indexed_block, 3 hindexed_block (bls[0]
 * for every block); di: displacements in extents, da: in bytes */
static rtype *rt_indexed_of(const rtype *c, int kind, int count, const int *bls, const int *di,
                            const MPI_Aint *da)
{
    rtype *t = calloc(1, sizeof *t);
    bnd b = {0};
    for (int i = 0; i < count; i++) {
        long d = kind == 0 || kind == 2 ? di[i] * rt_extent(c) : da[i];
        for (int j = 0; j < bls[kind >= 2 ? 0 : i]; j++)
            rt_place(t, &b, c, d + j * rt_extent(c));
    }
    rt_close(t, &b, 0);
    int rc = kind == 0   ? MPI_Type_indexed(count, bls, di, c->h, &t->h)
             : kind == 1 ? MPI_Type_create_hindexed(count, bls, da, c->h, &t->h)
             : kind == 2 ? MPI_Type_create_indexed_block(count, bls[0], di, c->h, &t->h)
                         : MPI_Type_create_hindexed_block(count, bls[0], da, c->h, &t->h);
    CHECK(rc == MPI_SUCCESS, "indexed kind %d rc %d", kind, rc);
    int o = snprintf(t->desc, sizeof t->desc, "idx%d(", kind);
    for (int i = 0; i < count && o < 200; i++)
        o += snprintf(t->desc + o, sizeof t->desc - (size_t)o, "%d@%ld ", bls[kind >= 2 ? 0 : i],
                      kind == 0 || kind == 2 ? (long)di[i] : (long)da[i]);
    snprintf(t->desc + o, sizeof t->desc - (size_t)o, "%.150s)", c->desc);
    return t;
}

static rtype *rt_indexed(rtype *c, int kind)
{
    /* short lists, or long ones of a regular shape: equal blocks at one
     * spacing (a vector in disguise) or at 3i + i%3 (neighbours merge) */
    int shape = rnd(3) ? 0 : 1 + (int)rnd(2);
    int count = shape ? 17 + (int)rnd(24) : (int)rnd(5), bl1 = shape ? 1 + (int)rnd(2) : (int)rnd(4);
    int bls[40], di[40];
    MPI_Aint da[40];
    long first = rnd_range(-5, 5), step = rnd_range(-3, 6);
    for (int i = 0; i < count; i++) {
        bls[i] = kind >= 2 || shape ? bl1 : (int)rnd(4);
        di[i] = shape == 1 ? (int)(first + i * step) : shape == 2 ? 3 * i + i % 3 : (int)rnd_range(-5, 10);
        da[i] = shape ? di[i] * rt_extent(c) : rnd_range(-40, 80);
    }
    if (count == 0)
        bls[0] = bl1;
    return rt_indexed_of(c, kind, count, bls, di, da);
}

static rtype *rt_struct(int depth)
{
    rtype *t = calloc(1, sizeof *t);
    bnd b = {0};
    int count = 1 + (int)rnd(3);
    rtype *cs[3];
    int bls[3];
    MPI_Aint da[3];
    MPI_Datatype hs[3];
    for (int i = 0; i < count; i++) {
        cs[i] = rt_random(depth - 1);
        hs[i] = cs[i]->h;
        bls[i] = (int)rnd(3);
        da[i] = rnd_range(-32, 64);
        for (int j = 0; j < bls[i]; j++)
            rt_place(t, &b, cs[i], da[i] + j * rt_extent(cs[i]));
    }
    rt_close(t, &b, 1);
    int rc = MPI_Type_create_struct(count, bls, da, hs, &t->h);
    CHECK(rc == MPI_SUCCESS, "struct rc %d", rc);
    int o = snprintf(t->desc, sizeof t->desc, "struct(");
    for (int i = 0; i < count && o < 300; i++)
        o += snprintf(t->desc + o, sizeof t->desc - (size_t)o, "%d@%ld:%.90s ", bls[i], (long)da[i],
                      cs[i]->desc);
    snprintf(t->desc + o, sizeof t->desc - (size_t)o, ")");
    for (int i = 0; i < count; i++)
        rt_free(cs[i]);
    return t;
}

static rtype *rt_resized(rtype *c)
{
    rtype *t = calloc(1, sizeof *t);
    MPI_Aint lb = rnd_range(-16, 16), ext = rnd_range(1, 48);
    for (long i = 0; i < c->n; i++)
        rt_add(t, c->map[i].disp, c->map[i].size);
    t->lb = lb, t->ub = lb + ext, t->tlb = c->tlb, t->tub = c->tub;
    t->mark_lb = t->mark_ub = 1;
    t->align = c->align;
    int rc = MPI_Type_create_resized(c->h, lb, ext, &t->h);
    CHECK(rc == MPI_SUCCESS, "resized rc %d", rc);
    snprintf(t->desc, sizeof t->desc, "rsz(%ld,%ld,%.300s)", (long)lb, (long)ext, c->desc);
    return t;
}

static rtype *rt_subarray(rtype *c)
{
    rtype *t = calloc(1, sizeof *t);
    int nd = 1 + (int)rnd(3), order = rnd(2) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
    int sizes[3] = {0}, sub[3] = {0}, st[3] = {0};
    long total = 1;
    for (int d = 0; d < nd; d++) {
        sizes[d] = 1 + (int)rnd(4);
        sub[d] = (int)rnd((unsigned)sizes[d] + 1);
        st[d] = (int)rnd((unsigned)(sizes[d] - sub[d]) + 1);
        total *= sizes[d];
    }
    /* every index tuple of the box, the fastest dimension varying first */
    int idx[3] = {0, 0, 0};
    long nsub = 1;
    for (int d = 0; d < nd; d++)
        nsub *= sub[d];
    for (long k = 0; k < nsub; k++) {
        long lin = 0;
        for (int q = 0; q < nd; q++) {
            int d = order == MPI_ORDER_C ? q : nd - 1 - q;
            lin = lin * sizes[d] + st[d] + idx[d];
        }
        for (long i = 0; i < c->n; i++)
            rt_add(t, lin * rt_extent(c) + c->map[i].disp, c->map[i].size);
        for (int q = 0; q < nd; q++) {
            int d = order == MPI_ORDER_C ? nd - 1 - q : q;
            if (++idx[d] < sub[d])
                break;
            idx[d] = 0;
        }
    }
    t->lb = 0, t->ub = total * rt_extent(c);
    t->mark_lb = t->mark_ub = 1;
    t->align = c->align;
    /* true bounds: over the entries */
    int any = 0;
    for (long i = 0; i < t->n; i++) {
        long lo = t->map[i].disp, hi = lo + t->map[i].size;
        t->tlb = any && t->tlb < lo ? t->tlb : lo;
        t->tub = any && t->tub > hi ? t->tub : hi;
        any = 1;
    }
    int rc = MPI_Type_create_subarray(nd, sizes, sub, st, order, c->h, &t->h);
    CHECK(rc == MPI_SUCCESS, "subarray rc %d", rc);
    snprintf(t->desc, sizeof t->desc, "sub%c%d(%d/%d+%d %d/%d+%d,%.300s)", order == MPI_ORDER_C ? 'C' : 'F',
             nd, sub[0], sizes[0], st[0], sub[1], sizes[1], st[1], c->desc);
    return t;
}

static rtype *rt_random(int depth)
{
    if (depth <= 0 || rnd(5) == 0)
        return rt_basic();
    int k = (int)rnd(10);
    if (k == 6)
        return rt_struct(depth);
    rtype *c = rt_random(depth - 1), *t;
    switch (k) {
    case 0: t = rt_vector(c, 0); break;
    case 1: t = rt_vector(c, 1); break;
    case 2: t = rt_indexed(c, 0); break;
    case 3: t = rt_indexed(c, 1); break;
    case 4: t = rt_indexed(c, 2); break;
    case 5: t = rt_indexed(c, 3); break;
    case 7: t = rt_resized(c); break;
    case 8: t = rt_subarray(c); break;
    default: {
        t = calloc(1, sizeof *t);
        bnd b = {0};
        int n = (int)rnd(4);
        for (int i = 0; i < n; i++)
            rt_place(t, &b, c, i * rt_extent(c));
        rt_close(t, &b, 0);
        CHECK(MPI_Type_contiguous(n, c->h, &t->h) == MPI_SUCCESS, "contiguous");
        snprintf(t->desc, sizeof t->desc, "contig(%d,%.300s)", n, c->desc);
        break;
    }
    }
    rt_free(c);     /* the new type must keep working after its parts are freed */
    return t;
}

/* ---- reference packing ---------------------------------------------------------------- */

static void ref_pack(const char *base, long count, const rtype *t, char *out)
{
    for (long e = 0; e < count; e++)
        for (long i = 0; i < t->n; i++) {
            memcpy(out, base + e * rt_extent(t) + t->map[i].disp, (size_t)t->map[i].size);
            out += t->map[i].size;
        }
}

static void ref_unpack(char *base, long count, const rtype *t, const char *in)
{
    for (long e = 0; e < count; e++)
        for (long i = 0; i < t->n; i++) {
            memcpy(base + e * rt_extent(t) + t->map[i].disp, in, (size_t)t->map[i].size);
            in += t->map[i].size;
        }
}

/* unpack only the stream bytes [off, off+len), byte by byte */
static void ref_unpack_range(char *base, long count, const rtype *t, const char *in, size_t off,
                             size_t len)
{
    size_t pos = 0;
    for (long e = 0; e < count; e++)
        for (long i = 0; i < t->n; i++)
            for (int b = 0; b < t->map[i].size; b++, pos++)
                if (pos >= off && pos < off + len)
                    base[e * rt_extent(t) + t->map[i].disp + b] = in[pos];
}

/* the byte span touched by count elements */
static void ref_span(const rtype *t, long count, long *lo, long *hi)
{
    *lo = 0, *hi = 0;
    int any = 0;
    for (long e = 0; e < count; e++)
        for (long i = 0; i < t->n; i++) {
            long a = e * rt_extent(t) + t->map[i].disp, b = a + t->map[i].size;
            *lo = any && *lo < a ? *lo : a;
            *hi = any && *hi > b ? *hi : b;
            any = 1;
        }
}

/* One packed range [off, off+len) of (base, count, dt): packed alone, and
 * as iovecs with a budget of 3 (each call continues where the last stopped). */
static void check_range(const core_dt *dt, char *base, long count, const char *want, size_t off,
                        size_t len, char *got)
{
    memset(got, 0, len);
    size_t n = core_dt_pack(base, (size_t)count, dt, off, got, len);
    CHECK(n == len && memcmp(got, want + off, len) == 0, "pack of [%zu,+%zu) differs", off, len);
    struct iovec iov[3];
    size_t covered = 0, pos = off;
    while (pos < off + len) {
        size_t cov;
        int ni = core_dt_iov(base, (size_t)count, dt, pos, off + len - pos, iov, 3, &cov);
        size_t sum = 0;
        for (int i = 0; i < ni; i++) {
            CHECK(memcmp(iov[i].iov_base, want + pos + sum, iov[i].iov_len) == 0, "iov bytes differ");
            sum += iov[i].iov_len;
        }
        CHECK(sum == cov && cov > 0, "iov covered %zu, sum %zu", cov, sum);
        if (cov == 0)
            break;
        pos += cov;
        covered += cov;
    }
    CHECK(covered == len, "iov [%zu,+%zu) covered %zu", off, len, covered);
}

/* unpacking [off, off+len) alone touches exactly the reference's bytes */
static void check_unpack_range(const rtype *t, const core_dt *dt, long count, const char *want,
                               size_t span, long lo, size_t off, size_t len)
{
    char *m2 = malloc(span), *b2 = m2 - lo, *m3 = malloc(span), *b3 = m3 - lo;
    memset(m2, 0x33, span);
    memset(m3, 0x33, span);
    ref_unpack_range(b3, count, t, want, off, len);
    size_t n = core_dt_unpack(b2, (size_t)count, dt, off, want + off, len);
    CHECK(n == len && memcmp(m2, m3, span) == 0, "unpack of [%zu,+%zu) differs", off, len);
    free(m2), free(m3);
}

/* Moving data with dt against the reference stream `want` of t: the whole
 * stream, random ranges (exhaustive: every start with several lengths),
 * random chunkings (the pipelined path) packed and unpacked. */
static void check_moves(const rtype *t, const core_dt *dt, long count, char *base, size_t span,
                        long lo, const char *want, int exhaustive)
{
    size_t total = (size_t)(count * t->size);
    char *got = malloc(total + 1);
    memset(got, 0, total + 1);
    size_t n = core_dt_pack(base, (size_t)count, dt, 0, got, total + 1);
    CHECK(n == total && memcmp(got, want, total) == 0, "pack of the whole stream differs (%zu/%zu)",
          n, total);
    if (exhaustive) {
        for (size_t off = 0; off < total; off++) {
            size_t lens[4] = {1, 1 + off % 13, (size_t)t->size, total - off};
            for (int k = 0; k < 4; k++) {
                size_t len = lens[k] < total - off ? lens[k] : total - off;
                check_range(dt, base, count, want, off, len, got);
                if (k == 1 || k == 3)
                    check_unpack_range(t, dt, count, want, span, lo, off, len);
            }
        }
    }
    for (int r = 0; r < 4 && total; r++) {
        size_t off = rnd((unsigned)total), len = 1 + rnd((unsigned)(total - off));
        check_range(dt, base, count, want, off, len, got);
    }
    char *m2 = malloc(span), *b2 = m2 - lo, *m3 = malloc(span), *b3 = m3 - lo;
    memset(m2, 0x5a, span);
    memset(m3, 0x5a, span);
    ref_unpack(b3, count, t, want);
    size_t pos = 0;
    memset(got, 0, total + 1);
    while (pos < total) {
        size_t len = 1 + rnd((unsigned)(total - pos < 64 ? total - pos : 64));
        n = core_dt_pack(base, (size_t)count, dt, pos, got + pos, len);
        CHECK(n == len, "chunk pack short");
        n = core_dt_unpack(b2, (size_t)count, dt, pos, want + pos, len);
        CHECK(n == len, "chunk unpack short");
        pos += len;
    }
    CHECK(memcmp(got, want, total) == 0, "chunked pack differs");
    CHECK(memcmp(m2, m3, span) == 0, "chunked unpack differs");
    /* the whole stream unpacked in one call, its input left alone */
    memset(m2, 0x5a, span);
    memcpy(got, want, total);
    n = core_dt_unpack(b2, (size_t)count, dt, 0, got, total);
    CHECK(n == total && memcmp(m2, m3, span) == 0, "unpack of the whole stream differs");
    CHECK(memcmp(got, want, total) == 0, "unpack wrote into its input");
    if (total) {
        size_t off = rnd((unsigned)total), len = 1 + rnd((unsigned)(total - off));
        check_unpack_range(t, dt, count, want, span, lo, off, len);
    }
    free(m2), free(m3), free(got);
}

/* The description RMA message mode sends with a derived target type
 * (osc_am_dt_encode), rebuilt as the target does: the same type map. */
static void check_rma_desc(const rtype *t, const core_dt *dt, long count, char *base,
                           const char *want)
{
    size_t dlen = osc_am_dt_desc_size(dt), total = (size_t)(count * t->size);
    uint8_t *desc = malloc(dlen);
    osc_am_dt_encode(dt, desc);
    core_dt back;
    const char *why = NULL;
    int rc = osc_am_dt_decode(desc, dlen, &back, &why);
    CHECK(rc == 0, "RMA description does not decode: %s", why ? why : "?");
    CHECK(osc_am_dt_decode(desc, dlen - 1, &back, &why) != 0, "truncated description accepted");
    if (rc == 0) {
        CHECK(back.size == dt->size && back.lb == dt->lb && back.extent == dt->extent,
              "RMA description: size/extent differ");
        char *got = malloc(total + 1);
        size_t n = core_dt_pack(base, (size_t)count, &back, 0, got, total);
        CHECK(n == total && memcmp(got, want, total) == 0, "RMA description packs differently");
        if (total) {
            size_t off = rnd((unsigned)total), len = 1 + rnd((unsigned)(total - off));
            check_range(&back, base, count, want, off, len, got);
        }
        free(got);
        core_dt_destroy(&back);
    }
    free(desc);
}

/* ---- one property case -------------------------------------------------------------------- */

static long cases, nested;  /* nested: cases whose type kept two levels or more */

static void check_type(rtype *t, int exhaustive)
{
    mpii_dtype *o = mpii_dtype_get(t->h);
    CHECK(o != NULL, "no object");
    if (!o)
        return;
    const char *why = NULL;
    CHECK(o->predefined || (mpii_dtype_check_comm(t->h, &why) == MPI_ERR_TYPE && why),
          "uncommitted type accepted");
    CHECK(MPI_Type_commit(&t->h) == MPI_SUCCESS, "commit");
    CHECK(mpii_dtype_check_comm(t->h, &why) == MPI_SUCCESS, "committed type refused");
    MPI_Count size, lb, ext, tlb, text;
    MPI_Type_size_c(t->h, &size);
    MPI_Type_get_extent_c(t->h, &lb, &ext);
    MPI_Type_get_true_extent_c(t->h, &tlb, &text);
    CHECK(size == t->size, "size %lld != %ld", size, t->size);
    CHECK(lb == t->lb && ext == rt_extent(t), "extent (%lld,%lld) != (%ld,%ld)", lb, ext, t->lb,
          rt_extent(t));
    CHECK(tlb == t->tlb && text == t->tub - t->tlb, "true extent (%lld,%lld) != (%ld,%ld)", tlb, text,
          t->tlb, t->tub - t->tlb);
    if (size != t->size || lb != t->lb || ext != rt_extent(t) || tlb != t->tlb) {
        fprintf(stderr, "  type: %s\n", t->desc);
        return;
    }

    long count = rnd(4) ? (long)rnd(4) : (long)rnd(64), lo, hi;
    if (count > 3 && (rt_extent(t) > 4096 || t->n > 2000))
        count = 3;
    if (exhaustive)
        count = 2 + (long)rnd(2);    /* ranges across elements */
    if (rt_extent(t) == 0 && count > 1)
        count = 1;
    ref_span(t, count, &lo, &hi);
    size_t span = (size_t)(hi - lo) + 1, total = (size_t)(count * t->size);
    char *mem = malloc(span), *base = mem - lo;
    for (size_t i = 0; i < span; i++)
        mem[i] = (char)rnd(256);
    char *want = malloc(total + 1);
    ref_pack(base, count, t, want);
    nested += o->dt.nlev >= 2;
    int before = errors;
    check_moves(t, &o->dt, count, base, span, lo, want, exhaustive);
    if (o->dt.size > 0)     /* an empty target type never goes out */
        check_rma_desc(t, &o->dt, count, base, want);
    if (errors != before)
        fprintf(stderr, "  type: %s, count %ld\n", t->desc, count);
    /* element counts: every prefix that ends on a basic element */
    MPI_Status st;
    memset(&st, 0, sizeof st);
    long nb = 0;
    size_t bytes = 0;
    for (long i = 0; i < t->n && count; i++) {
        bytes += (size_t)t->map[i].size;
        nb++;
        st.dcfa_count = (long long)bytes;
        MPI_Count el;
        MPI_Get_elements_x(&st, t->h, &el);
        CHECK(el == nb, "Get_elements(%zu bytes) = %lld, want %ld", bytes, el, nb);
        MPI_Status_set_elements_x(&st, t->h, nb);
        CHECK(st.dcfa_count == (long long)bytes, "Status_set_elements(%ld) = %lld bytes", nb,
              st.dcfa_count);
    }
    free(mem), free(want);
    cases++;
}

/* ---- fixed cases ------------------------------------------------------------------------ */

static void test_darray(void)
{
    /* 2D 7x5 doubles over a 2x3 grid: BLOCK x CYCLIC(2), then NONE x CYCLIC */
    int gs[2] = {7, 5}, ps[2] = {2, 3};
    int dist[2][2] = {{MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
                      {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK}};
    int darg[2][2] = {{MPI_DISTRIBUTE_DFLT_DARG, 2}, {1, MPI_DISTRIBUTE_DFLT_DARG}};
    for (int v = 0; v < 2; v++)
        for (int order = 0; order < 2; order++) {
            int ord = order ? MPI_ORDER_FORTRAN : MPI_ORDER_C;
            int owner[35];
            memset(owner, -1, sizeof owner);
            for (int rank = 0; rank < 6; rank++) {
                MPI_Datatype t;
                CHECK(MPI_Type_create_darray(6, rank, 2, gs, dist[v], darg[v], ps, ord, MPI_INT, &t) ==
                          MPI_SUCCESS, "darray");
                MPI_Type_commit(&t);
                MPI_Aint lb, ext;
                MPI_Type_get_extent(t, &lb, &ext);
                CHECK(lb == 0 && ext == 35 * 4, "darray extent %ld", (long)ext);
                int coord[2] = {rank / 3, rank % 3};
                /* expected: the global indices owned, in local array order */
                int mine[2][7], nm[2] = {0, 0};
                for (int d = 0; d < 2; d++)
                    for (int g = 0; g < gs[d]; g++) {
                        int b = darg[v][d] == MPI_DISTRIBUTE_DFLT_DARG
                                    ? (dist[v][d] == MPI_DISTRIBUTE_BLOCK ? (gs[d] + ps[d] - 1) / ps[d] : 1)
                                    : darg[v][d];
                        int who = dist[v][d] == MPI_DISTRIBUTE_BLOCK ? g / b : (g / b) % ps[d];
                        if (who == coord[d])
                            mine[d][nm[d]++] = g;
                    }
                int src[35], got[35];
                for (int i = 0; i < 35; i++)
                    src[i] = i;
                size_t n = core_dt_pack(src, 1, &mpii_dtype_get(t)->dt, 0, got, sizeof got);
                CHECK(n == (size_t)(nm[0] * nm[1] * 4), "darray size %zu", n);
                int k = 0;
                int outer = ord == MPI_ORDER_C ? 0 : 1, inner = 1 - outer;
                for (int a = 0; a < nm[outer]; a++)
                    for (int b = 0; b < nm[inner]; b++) {
                        int gi[2];
                        gi[outer] = mine[outer][a];
                        gi[inner] = mine[inner][b];
                        int lin = ord == MPI_ORDER_C ? gi[0] * 5 + gi[1] : gi[1] * 7 + gi[0];
                        CHECK(got[k] == lin, "darray v%d order %d rank %d elem %d: %d != %d", v, order,
                              rank, k, got[k], lin);
                        CHECK(owner[lin] == -1, "element %d owned twice", lin);
                        owner[lin] = rank;
                        k++;
                    }
                MPI_Type_free(&t);
                cases++;
            }
            for (int i = 0; i < 35; i++)
                CHECK(owner[i] >= 0, "element %d owned by nobody", i);
        }
}

static void test_envelope(void)
{
    MPI_Datatype v, s, r;
    int ni, na, nd, comb;
    MPI_Type_vector(3, 2, 5, MPI_INT, &v);
    MPI_Type_get_envelope(v, &ni, &na, &nd, &comb);
    CHECK(comb == MPI_COMBINER_VECTOR && ni == 3 && na == 0 && nd == 1, "vector envelope");
    int ints[3];
    MPI_Datatype types[1];
    MPI_Type_get_contents(v, 3, 0, 1, ints, NULL, types);
    CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 5 && types[0] == MPI_INT, "vector contents");
    int bl[2] = {1, 2};
    MPI_Aint d[2] = {0, 16};
    MPI_Datatype ts[2] = {MPI_DOUBLE, v};
    MPI_Type_create_struct(2, bl, d, ts, &s);
    MPI_Type_free(&v);  /* s still holds it */
    MPI_Type_get_envelope(s, &ni, &na, &nd, &comb);
    CHECK(comb == MPI_COMBINER_STRUCT && ni == 3 && na == 2 && nd == 2, "struct envelope");
    int si[3];
    MPI_Aint sa[2];
    MPI_Datatype st[2];
    MPI_Type_get_contents(s, 3, 2, 2, si, sa, st);
    CHECK(si[0] == 2 && si[2] == 2 && sa[1] == 16 && st[0] == MPI_DOUBLE, "struct contents");
    MPI_Type_get_envelope(st[1], &ni, &na, &nd, &comb);
    CHECK(comb == MPI_COMBINER_VECTOR, "inner type still decodes after its handle was freed");
    MPI_Type_free(&st[1]);
    MPI_Count sz;
    MPI_Type_size_x(s, &sz);
    CHECK(sz == 8 + 2 * 24, "struct size %lld", sz);
    MPI_Type_get_envelope(MPI_INT, &ni, &na, &nd, &comb);
    CHECK(comb == MPI_COMBINER_NAMED, "named");
    MPI_Type_create_resized(s, -8, 100, &r);
    MPI_Aint lb, ext;
    MPI_Type_get_extent(r, &lb, &ext);
    CHECK(lb == -8 && ext == 100, "resized extent");
    MPI_Datatype dup;
    MPI_Type_commit(&r);
    MPI_Type_dup(r, &dup);
    CHECK(mpii_dtype_get(dup)->committed, "dup keeps committed state");
    MPI_Type_get_envelope(dup, &ni, &na, &nd, &comb);
    CHECK(comb == MPI_COMBINER_DUP && nd == 1, "dup envelope");
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Type_get_name(MPI_DOUBLE_INT, name, &len);
    CHECK(strcmp(name, "MPI_DOUBLE_INT") == 0 && len == 14, "predefined name %s", name);
    MPI_Type_set_name(dup, "mine");
    MPI_Type_get_name(dup, name, &len);
    CHECK(strcmp(name, "mine") == 0, "set name");
    MPI_Type_free(&dup);
    MPI_Type_free(&r);
    MPI_Type_free(&s);
    CHECK(s == MPI_DATATYPE_NULL && mpii_dtype_get(r) == NULL, "freed");
    const char *why;
    CHECK(mpii_dtype_check_comm(MPI_DATATYPE_NULL, &why) == MPI_ERR_TYPE, "null type accepted");
    cases++;
}

static void test_predefined(void)
{
    struct { MPI_Datatype h; long size, ext; } want[] = {
        {MPI_INT, 4, 4}, {MPI_DOUBLE, 8, 8}, {MPI_DOUBLE_INT, 12, 16}, {MPI_SHORT_INT, 6, 8},
        {MPI_LONG_DOUBLE_INT, 20, 32}, {MPI_2INT, 8, 8}, {MPI_C_DOUBLE_COMPLEX, 16, 16},
        {MPI_LONG_LONG, 8, 8}, {MPI_BYTE, 1, 1}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        int sz;
        MPI_Aint lb, ext;
        MPI_Type_size(want[i].h, &sz);
        MPI_Type_get_extent(want[i].h, &lb, &ext);
        CHECK(sz == want[i].size && ext == want[i].ext && lb == 0, "predefined %zu: %d %ld", i, sz,
              (long)ext);
    }
    MPI_Datatype t;
    MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &t);
    CHECK(t == MPI_REAL8, "match_size");
    MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &t);
    CHECK(t == MPI_DOUBLE_INT, "value_index");
    /* struct {double; char} pads its extent to 16 */
    int bl[2] = {1, 1};
    MPI_Aint d[2] = {0, 8};
    MPI_Datatype ts[2] = {MPI_DOUBLE, MPI_CHAR};
    MPI_Type_create_struct(2, bl, d, ts, &t);
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t, &lb, &ext);
    CHECK(ext == 16, "struct padding: extent %ld", (long)ext);
    MPI_Type_free(&t);
    MPI_Status st = {0};
    st.dcfa_count = 10;
    int c;
    MPI_Get_count(&st, MPI_INT, &c);
    CHECK(c == MPI_UNDEFINED, "Get_count of 10 bytes of int");
    MPI_Get_elements(&st, MPI_SHORT, &c);
    CHECK(c == 5, "Get_elements 10 bytes of short");
    cases++;
}

static void test_pack_api(void)
{
    int v[6] = {1, 2, 3, 4, 5, 6}, w[6] = {0};
    MPI_Datatype t;
    MPI_Type_vector(3, 1, 2, MPI_INT, &t);
    MPI_Type_commit(&t);
    char buf[64];
    MPI_Aint pos = 0;
    CHECK(MPI_Pack_external("external32", v, 1, t, buf, sizeof buf, &pos) == MPI_SUCCESS && pos == 12,
          "pack_external");
    CHECK(buf[0] == 0 && buf[3] == 1 && buf[7] == 3 && buf[11] == 5, "external32 is big-endian");
    MPI_Aint ipos = 0;
    MPI_Unpack_external("external32", buf, pos, &ipos, w, 1, t);
    CHECK(ipos == 12 && w[0] == 1 && w[2] == 3 && w[4] == 5 && w[1] == 0, "unpack_external");
    double z[2] = {1.5, -2.25}, z2[2];
    pos = 0;
    MPI_Pack_external("external32", z, 1, MPI_C_DOUBLE_COMPLEX, buf, sizeof buf, &pos);
    CHECK((unsigned char)buf[0] == 0x3f && (unsigned char)buf[8] == 0xc0, "external32 complex parts");
    ipos = 0;
    MPI_Unpack_external("external32", buf, pos, &ipos, z2, 1, MPI_C_DOUBLE_COMPLEX);
    CHECK(z2[0] == 1.5 && z2[1] == -2.25, "external32 complex round trip");
    MPI_Type_free(&t);

    /* external32 sizes differ from LP64's: long is 4 bytes, wchar_t 2 (MPI 4.1 Table 13.2) */
    long l[2] = {-2, 0x01020304L}, l2[2] = {0, 0};
    MPI_Aint esz = 0;
    MPI_Pack_external_size("external32", 2, MPI_LONG, &esz);
    CHECK(esz == 8, "external32 size of 2 longs");
    MPI_Pack_external_size("external32", 3, MPI_LONG_INT, &esz);
    CHECK(esz == 24, "external32 size of 3 MPI_LONG_INT");
    pos = 0;
    MPI_Pack_external("external32", l, 2, MPI_LONG, buf, sizeof buf, &pos);
    CHECK(pos == 8 && (unsigned char)buf[0] == 0xff && (unsigned char)buf[3] == 0xfe &&
              buf[4] == 1 && buf[7] == 4,
          "external32 long: 4 bytes big-endian");
    ipos = 0;
    MPI_Unpack_external("external32", buf, pos, &ipos, l2, 2, MPI_LONG);
    CHECK(ipos == 8 && l2[0] == -2 && l2[1] == 0x01020304L, "external32 long round trip (sign)");
    unsigned long ul = 0xfffffffeUL, ul2 = 0;
    pos = ipos = 0;
    MPI_Pack_external("external32", &ul, 1, MPI_UNSIGNED_LONG, buf, sizeof buf, &pos);
    MPI_Unpack_external("external32", buf, pos, &ipos, &ul2, 1, MPI_UNSIGNED_LONG);
    CHECK(pos == 4 && ul2 == 0xfffffffeUL, "external32 unsigned long round trip (no sign)");
    wchar_t wc[2] = {L'A', 0x263a}, wc2[2] = {0, 0};
    pos = ipos = 0;
    MPI_Pack_external("external32", wc, 2, MPI_WCHAR, buf, sizeof buf, &pos);
    MPI_Unpack_external("external32", buf, pos, &ipos, wc2, 2, MPI_WCHAR);
    CHECK(pos == 4 && buf[1] == 'A' && (unsigned char)buf[2] == 0x26 && wc2[0] == L'A' &&
              wc2[1] == 0x263a,
          "external32 wchar_t: 2 bytes");

    /* MPI_C_COMPLEX and MPI_C_FLOAT_COMPLEX are one handle, named MPI_C_COMPLEX */
    char name[MPI_MAX_OBJECT_NAME];
    int nlen;
    MPI_Type_get_name(MPI_C_FLOAT_COMPLEX, name, &nlen);
    CHECK(MPI_C_COMPLEX == MPI_C_FLOAT_COMPLEX && strcmp(name, "MPI_C_COMPLEX") == 0,
          "MPI_C_COMPLEX name");
    cases++;
}

static void test_huge(void)
{
    /* a vector of 1M blocks stays one run; a 2D subarray of 1000 rows stays compact */
    MPI_Datatype t;
    MPI_Type_vector(1 << 20, 1, 2, MPI_INT, &t);
    mpii_dtype *o = mpii_dtype_get(t);
    CHECK(o->dt.nruns == 1 && o->dt.nlev == 1 && o->dt.lev[0].n == (1u << 20),
          "vector of 1M blocks: %d runs x %d levels", o->dt.nruns, o->dt.nlev);
    MPI_Type_free(&t);
    MPI_Type_contiguous(1 << 20, MPI_DOUBLE, &t);
    o = mpii_dtype_get(t);
    CHECK(o->dt.contig && o->dt.nruns == 1, "contiguous is one run");
    MPI_Type_free(&t);
    int sizes[2] = {1000, 1000}, sub[2] = {1000, 10}, st[2] = {0, 5};
    MPI_Type_create_subarray(2, sizes, sub, st, MPI_ORDER_C, MPI_DOUBLE, &t);
    o = mpii_dtype_get(t);
    CHECK(o->dt.nruns == 1 && o->dt.nlev == 1 && o->dt.lev[0].n == 1000, "subarray: %d runs x %d levels",
          o->dt.nruns, o->dt.nlev);
    MPI_Type_free(&t);
    cases++;
}

/* Nested repetitions: compact forms, and every byte range moved right
 * (exhaustively where the stream is small) against the reference map. */
static void test_levels(void)
{
    rtype *ti = rt_named(MPI_INT, 4), *td = rt_named(MPI_DOUBLE, 8), *t, *u;
    mpii_dtype *o;
    /* transposes: vector(n, 1, n) of ints inside hvector(n, 1, 4) */
    static const int ns[] = {2, 4, 5, 17, 40};
    for (int k = 0; k < 5; k++) {
        int n = ns[k];
        u = rt_vector_of(ti, 0, n, 1, n);
        t = rt_vector_of(u, 1, n, 1, 4);
        o = mpii_dtype_get(t->h);
        CHECK(o->dt.nlev == 2 && o->dt.nruns == 1, "transpose %d: %d levels, %d runs", n, o->dt.nlev,
              o->dt.nruns);
        check_type(t, n * n * 4 <= 2048);
        rt_free(u), rt_free(t);
    }
    /* five levels: the innermost is written out, four stay */
    t = rt_vector_of(ti, 1, 17, 1, 12);
    static const long strides[] = {210, 430, 870, 1750};
    for (int k = 0; k < 4; k++) {
        u = rt_vector_of(t, 1, 2, 1, strides[k]);
        rt_free(t);
        t = u;
    }
    o = mpii_dtype_get(t->h);
    CHECK(o->dt.nlev == CORE_DT_MAXLEV && o->dt.nruns == 17, "five levels: %d levels, %d runs",
          o->dt.nlev, o->dt.nruns);
    check_type(t, 1);
    rt_free(t);
    /* short levels stay levels too (the copy loop takes two dimensions at once) */
    u = rt_vector_of(ti, 1, 3, 1, 8);
    t = rt_vector_of(u, 1, 20, 1, 40);
    rt_free(u);
    u = rt_vector_of(t, 1, 20, 1, 1000);
    o = mpii_dtype_get(u->h);
    CHECK(o->dt.nlev == 3 && o->dt.nruns == 1, "short inner level: %d levels, %d runs", o->dt.nlev,
          o->dt.nruns);
    check_type(u, 0);
    rt_free(t), rt_free(u);
    /* copies that touch grow one run: hvector(20, 1, 8) of hvector(2, 1, 4) of int */
    u = rt_vector_of(ti, 1, 2, 1, 4);
    t = rt_vector_of(u, 1, 20, 1, 8);
    o = mpii_dtype_get(t->h);
    CHECK(o->dt.contig && o->dt.nruns == 1, "touching copies: contig %d, %d runs", o->dt.contig,
          o->dt.nruns);
    check_type(t, 1);
    rt_free(u), rt_free(t);
    /* runs of 1008 bytes: their unpack once took the pack loop for 8 bytes */
    t = rt_vector_of(td, 0, 3, 126, 200);
    check_type(t, 0);
    rt_free(t);
    /* indexed blocks at a constant spacing are a vector */
    int bl = 1, di[40];
    for (int step = -4; step <= 4; step += 8) {
        for (int i = 0; i < 30; i++)
            di[i] = 3 + step * i;
        t = rt_indexed_of(td, 2, 30, &bl, di, NULL);
        o = mpii_dtype_get(t->h);
        CHECK(o->dt.nlev == 1 && o->dt.nruns == 1 && o->dt.lev[0].stride == 8 * step,
              "indexed at a spacing: %d levels, %d runs", o->dt.nlev, o->dt.nruns);
        check_type(t, 1);
        rt_free(t);
    }
    /* displacements 3i + i%3: 8- and 16-byte runs cut into 8-byte ones,
     * also inside a struct of one block */
    for (int i = 0; i < 40; i++)
        di[i] = 3 * i + i % 3;
    t = rt_indexed_of(td, 2, 40, &bl, di, NULL);
    o = mpii_dtype_get(t->h);
    CHECK(o->dt.runlen == 8 && o->dt.nruns == 40, "indexperf shape: runlen %zu, %d runs", o->dt.runlen,
          o->dt.nruns);
    check_type(t, 1);
    u = calloc(1, sizeof *u);
    bnd b = {0};
    rt_place(u, &b, t, 24);
    rt_close(u, &b, 1);
    MPI_Aint d24 = 24;
    CHECK(MPI_Type_create_struct(1, &bl, &d24, &t->h, &u->h) == MPI_SUCCESS, "struct");
    o = mpii_dtype_get(u->h);
    CHECK(o->dt.runlen == 8, "struct of the indexperf shape: runlen %zu", o->dt.runlen);
    check_type(u, 0);
    rt_free(t), rt_free(u), rt_free(ti), rt_free(td);
    cases++;
}

int main(int argc, char **argv)
{
    long ncases = argc > 1 ? atol(argv[1]) : 10000;
    unsigned long long seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 0x9e3779b97f4a7c15ull;
    rng_state = seed;
    mpii_dtype_init();
    mpii_live = 1; /* the MPI_Type_* entry points refuse calls while MPI is not running */
    test_predefined();
    test_envelope();
    test_pack_api();
    test_darray();
    test_huge();
    test_levels();
    long fixed = cases;
    for (long i = 0; i < ncases; i++) {
        rtype *t = rt_random(3);
        if (t->n > 20000 || rt_extent(t) > 1000000 || rt_extent(t) < 0) {
            rt_free(t);
            i--;
            continue;
        }
        check_type(t, 0);
        rt_free(t);
    }
    mpii_dtype_finalize();
    printf("test_dtype: %ld property cases, %ld fixed cases (%ld types with 2+ levels), %ld checks "
           "(seed %#llx)\n",
           cases - fixed, fixed, nested, checks, seed);
    printf("%ld passed, %d failed\n", cases, errors ? 1 : 0);
    return errors ? 1 : 0;
}
