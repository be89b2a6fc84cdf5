/* Property test of every data path against a slow reference packer
 * (needs datatypes).
 *
 * Each iteration builds, from a seed that depends only on the iteration (so
 * every rank builds the same types), a random nested derived datatype out of
 * contiguous, vector (negative strides), hvector, indexed, hindexed, block
 * indexed, struct, resized, subarray (2-D/3-D, C and Fortran order) and dup
 * constructors, with zero-length blocks and shuffled displacements. Next to
 * the MPI type the test builds its own type map (a list of {disp, len} of one
 * element) from the same description, and packs/unpacks from that map the
 * slow obvious way. Only the extents come from MPI_Type_get_extent (the
 * bound rules are checked by the unit tests); everything else is derived from
 * the description.
 *
 * For a small count (eager) and a large one (rendezvous at the default
 * limit) the iteration checks that these agree with the reference:
 *   - MPI_Type_size, MPI_Pack (in two calls), MPI_Unpack (bytes outside the
 *     type map stay untouched);
 *   - Isend/Irecv of the type around the ring, with Get_count;
 *   - MPI_Sendrecv with different send and receive types of the same
 *     signature: the type against MPI_PACKED, and when the iteration uses a
 *     single basic type, against contiguous basic elements and against a
 *     second random type (partly filled).
 * Types whose map overlaps itself are rejected (they cannot be received).
 * Usage: dtype_prop [iterations [seed [first]]]; rank 0 reports the counts on stderr.
 */
#include "mtest.h"

#include <stdint.h>

#define MAX_ENTRIES 20000     /* type-map entries of one element */
#define MAX_SPAN    (4 << 20) /* bytes a buffer of count elements may span */
#define SLACK       64        /* guard bytes around every buffer */

typedef struct {
    int64_t disp;
    int64_t len;
} entry;

typedef struct {
    MPI_Datatype t;
    entry *e; /* the type map of one element, in type-map order */
    size_t n;
    int64_t lb, extent;
} node;

static uint64_t rng;
static MPI_Datatype made[512]; /* types to free at the end of the iteration */
static int nmade;
static int single_basic; /* -1: leaves pick any basic type */
static int ntypes, ncases;

static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return n ? (uint32_t)((rng >> 11) % n) : 0;
}

static MPI_Datatype basic_type(int i, int *size)
{
    static const int sizes[] = {1, 2, 4, 8, 4};
    *size = sizes[i];
    switch (i) {
    case 0:
        return MPI_CHAR;
    case 1:
        return MPI_SHORT;
    case 2:
        return MPI_INT;
    case 3:
        return MPI_DOUBLE;
    default:
        return MPI_FLOAT;
    }
}

static void keep(MPI_Datatype t)
{
    if (nmade < (int)(sizeof made / sizeof made[0]))
        made[nmade++] = t;
}

static void node_finish(node *x)
{
    MPI_Aint lb, ext;
    MPI_Type_get_extent(x->t, &lb, &ext);
    x->lb = lb;
    x->extent = ext;
    keep(x->t);
}

/* append one copy of c's map shifted by off */
static void add_copy(node *x, const node *c, int64_t off)
{
    for (size_t i = 0; i < c->n; i++) {
        x->e[x->n].disp = c->e[i].disp + off;
        x->e[x->n].len = c->e[i].len;
        x->n++;
    }
}

static void shuffle(int *perm, int n)
{
    for (int i = 0; i < n; i++)
        perm[i] = i;
    if (rnd(2))
        for (int i = n - 1; i > 0; i--) {
            int j = (int)rnd((uint32_t)i + 1), t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
}

static node gen(int depth);

static node gen_basic(void)
{
    node x;
    int size, b = single_basic >= 0 ? single_basic : (int)rnd(5);
    MPI_Type_contiguous(1, basic_type(b, &size), &x.t);
    x.e = malloc(sizeof(entry));
    x.e[0].disp = 0;
    x.e[0].len = size;
    x.n = 1;
    node_finish(&x);
    return x;
}

/* a derived type of n copies of the child c; blocks and displacements random */
static node gen_one_child(const node *c, int kind)
{
    node x = {MPI_DATATYPE_NULL, NULL, 0, 0, 0};
    int64_t ext = c->extent;
    int count = 1 + (int)rnd(4), bl = (int)rnd(4), perm[4], bls[4], disps[4];
    MPI_Aint hdisps[4];
    size_t copies = (size_t)count * 3 + 27;
    if (c->n * copies > MAX_ENTRIES)
        return x;
    x.e = malloc(sizeof(entry) * (c->n * copies + 1));
    switch (kind) {
    case 0: /* contiguous */
        MPI_Type_contiguous(count, c->t, &x.t);
        for (int k = 0; k < count; k++)
            add_copy(&x, c, k * ext);
        break;
    case 1: { /* vector, stride in extents, maybe negative */
        int stride = (bl > 0 ? bl : 1) + (int)rnd(3);
        if (rnd(2))
            stride = -stride;
        MPI_Type_vector(count, bl, stride, c->t, &x.t);
        for (int k = 0; k < count; k++)
            for (int j = 0; j < bl; j++)
                add_copy(&x, c, ((int64_t)k * stride + j) * ext);
        break;
    }
    case 2: { /* hvector, stride in bytes */
        int64_t stride = bl * ext + 8 * (int64_t)rnd(3);
        if (stride == 0)
            stride = 8;
        if (rnd(2))
            stride = -stride;
        MPI_Type_create_hvector(count, bl, (MPI_Aint)stride, c->t, &x.t);
        for (int k = 0; k < count; k++)
            for (int j = 0; j < bl; j++)
                add_copy(&x, c, k * stride + j * ext);
        break;
    }
    case 3:   /* indexed */
    case 4:   /* hindexed */
    case 5:   /* indexed_block */
    case 6: { /* hindexed_block */
        int block = kind >= 5;
        int64_t cursor = -(int64_t)rnd(3); /* in extents; may start below 0 */
        shuffle(perm, count);
        for (int i = 0; i < count; i++)
            bls[i] = block ? bl : (int)rnd(4);
        /* non-overlapping slots in memory order, listed in perm order */
        int64_t slot[4];
        for (int i = 0; i < count; i++) {
            cursor += rnd(2);
            slot[i] = cursor;
            cursor += bls[perm[i]] > 0 ? bls[perm[i]] : 0;
        }
        for (int i = 0; i < count; i++) {
            int64_t d = slot[0];
            for (int k = 0; k < count; k++)
                if (perm[k] == i)
                    d = slot[k];
            disps[i] = (int)d;
            hdisps[i] = (MPI_Aint)(d * ext);
        }
        if (kind == 3)
            MPI_Type_indexed(count, bls, disps, c->t, &x.t);
        else if (kind == 4)
            MPI_Type_create_hindexed(count, bls, hdisps, c->t, &x.t);
        else if (kind == 5)
            MPI_Type_create_indexed_block(count, bl, disps, c->t, &x.t);
        else
            MPI_Type_create_hindexed_block(count, bl, hdisps, c->t, &x.t);
        for (int i = 0; i < count; i++)
            for (int j = 0; j < bls[i]; j++)
                add_copy(&x, c, (int64_t)hdisps[i] + j * ext);
        break;
    }
    case 7: { /* resized: a looser or shifted frame */
        int64_t lb = c->lb - 8 * (int64_t)rnd(3);
        int64_t e = c->lb + c->extent - lb + 8 * (int64_t)rnd(3);
        MPI_Type_create_resized(c->t, (MPI_Aint)lb, (MPI_Aint)e, &x.t);
        add_copy(&x, c, 0);
        break;
    }
    case 8: { /* subarray */
        int nd = 2 + (int)rnd(2), order = rnd(2) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
        int sizes[3] = {1, 1, 1}, sub[3] = {1, 1, 1}, st[3] = {0, 0, 0}, idx[3];
        for (int d = 0; d < nd; d++) {
            sizes[d] = 1 + (int)rnd(4);
            sub[d] = 1 + (int)rnd((uint32_t)sizes[d]);
            st[d] = (int)rnd((uint32_t)(sizes[d] - sub[d] + 1));
        }
        free(x.e);
        x.e = NULL;
        if (c->n * (size_t)(sub[0] * sub[1] * sub[2]) > MAX_ENTRIES)
            return x;
        x.e = malloc(sizeof(entry) * (c->n * (size_t)(sub[0] * sub[1] * sub[2]) + 1));
        MPI_Type_create_subarray(nd, sizes, sub, st, order, c->t, &x.t);
        /* type-map order: the last dimension fastest for C, the first for Fortran */
        for (int a = 0; a < sub[0] * sub[1] * sub[2]; a++) {
            int r = a;
            if (order == MPI_ORDER_C) {
                for (int d = nd - 1; d >= 0; d--) {
                    idx[d] = st[d] + r % sub[d];
                    r /= sub[d];
                }
            } else {
                for (int d = 0; d < nd; d++) {
                    idx[d] = st[d] + r % sub[d];
                    r /= sub[d];
                }
            }
            int64_t lin = 0;
            if (order == MPI_ORDER_C)
                for (int d = 0; d < nd; d++)
                    lin = lin * sizes[d] + idx[d];
            else
                for (int d = nd - 1; d >= 0; d--)
                    lin = lin * sizes[d] + idx[d];
            add_copy(&x, c, lin * ext);
        }
        break;
    }
    default: /* dup */
        MPI_Type_dup(c->t, &x.t);
        add_copy(&x, c, 0);
        break;
    }
    node_finish(&x);
    return x;
}

static node gen_struct(int depth)
{
    node x = {MPI_DATATYPE_NULL, NULL, 0, 0, 0}, kids[3];
    int count = 1 + (int)rnd(3), bls[3], perm[3];
    MPI_Aint disps[3];
    MPI_Datatype types[3];
    size_t total = 0;
    for (int i = 0; i < count; i++) {
        kids[i] = gen(depth - 1);
        bls[i] = (int)rnd(3);
        total += kids[i].n * (size_t)bls[i];
    }
    if (total <= MAX_ENTRIES) {
        x.e = malloc(sizeof(entry) * (total + 1));
        /* blocks at 8-aligned, non-overlapping places, listed in shuffled order */
        int64_t cursor = -8 * (int64_t)rnd(2), at[3];
        shuffle(perm, count);
        for (int i = 0; i < count; i++) {
            const node *k = &kids[perm[i]];
            int64_t lo = 0, hi = 0;
            for (size_t j = 0; j < k->n; j++) {
                for (int b = 0; b < bls[perm[i]]; b++) {
                    int64_t d = k->e[j].disp + b * k->extent;
                    lo = d < lo ? d : lo;
                    hi = d + k->e[j].len > hi ? d + k->e[j].len : hi;
                }
            }
            cursor = (cursor + 7) & ~(int64_t)7;
            at[perm[i]] = cursor - lo;
            cursor += hi - lo + 8 * (int64_t)rnd(2);
        }
        for (int i = 0; i < count; i++) {
            disps[i] = (MPI_Aint)at[i];
            types[i] = kids[i].t;
        }
        MPI_Type_create_struct(count, bls, disps, types, &x.t);
        for (int i = 0; i < count; i++)
            for (int b = 0; b < bls[i]; b++)
                add_copy(&x, &kids[i], at[i] + b * kids[i].extent);
        node_finish(&x);
    }
    for (int i = 0; i < count; i++)
        free(kids[i].e);
    return x;
}

static node gen(int depth)
{
    if (depth == 0 || rnd(5) == 0)
        return gen_basic();
    if (rnd(6) == 0) {
        node x = gen_struct(depth);
        return x.e ? x : gen_basic();
    }
    node c = gen(depth - 1);
    node x = gen_one_child(&c, (int)rnd(10));
    if (!x.e) {
        x = c;
        return x;
    }
    free(c.e);
    return x;
}

static int cmp_entry(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    return x->disp < y->disp ? -1 : x->disp > y->disp;
}

/* size of one element; lo/hi: the bytes count elements touch; 0 if the map
 * of count elements overlaps itself */
static int map_check(const node *x, int count, int64_t *size, int64_t *lo, int64_t *hi)
{
    int64_t s = 0, l = 0, h = 0, span_lo = 0, span_hi = 0;
    int first = 1;
    for (size_t i = 0; i < x->n; i++) {
        s += x->e[i].len;
        if (first || x->e[i].disp < span_lo)
            span_lo = x->e[i].disp;
        if (first || x->e[i].disp + x->e[i].len > span_hi)
            span_hi = x->e[i].disp + x->e[i].len;
        first = 0;
    }
    *size = s;
    if (first) {
        *lo = *hi = 0;
        return 1;
    }
    l = span_lo + (x->extent < 0 ? (count - 1) * x->extent : 0);
    h = span_hi + (x->extent > 0 ? (count - 1) * x->extent : 0);
    *lo = l;
    *hi = h;
    if (h - l > MAX_SPAN)
        return 0;
    /* one element must not overlap itself, and consecutive elements must not
     * interleave (checked as: the element fits its extent) */
    entry *sorted = malloc(sizeof(entry) * x->n);
    memcpy(sorted, x->e, sizeof(entry) * x->n);
    qsort(sorted, x->n, sizeof(entry), cmp_entry);
    int ok = 1;
    for (size_t i = 1; i < x->n && ok; i++)
        ok = sorted[i].disp >= sorted[i - 1].disp + sorted[i - 1].len;
    free(sorted);
    if (count > 1 && span_hi - span_lo > x->extent)
        ok = 0;
    return ok;
}

/* the reference packer: the type map, element by element, entry by entry */
static void ref_pack(const node *x, int count, const unsigned char *base, unsigned char *out)
{
    for (int k = 0; k < count; k++)
        for (size_t i = 0; i < x->n; i++) {
            memcpy(out, base + k * x->extent + x->e[i].disp, (size_t)x->e[i].len);
            out += x->e[i].len;
        }
}

/* unpack the first len bytes of the stream */
static void ref_unpack(const node *x, int count, unsigned char *base, const unsigned char *in,
                       int64_t len)
{
    for (int k = 0; k < count && len > 0; k++)
        for (size_t i = 0; i < x->n && len > 0; i++) {
            int64_t n = x->e[i].len < len ? x->e[i].len : len;
            memcpy(base + k * x->extent + x->e[i].disp, in, (size_t)n);
            in += n;
            len -= n;
        }
}

/* a buffer covering [lo, hi) plus guard bytes; *base is the address of byte 0 */
typedef struct {
    unsigned char *mem;
    size_t len;
    unsigned char *base;
} buffer;

static void buf_make(buffer *b, int64_t lo, int64_t hi, int seed)
{
    b->len = (size_t)(hi - lo) + 2 * SLACK;
    b->mem = mtest_malloc(b->len);
    b->base = b->mem + SLACK - lo;
    mtest_fill(b->mem, b->len, seed, 7);
}

static int same(const char *what, int it, const unsigned char *got, const unsigned char *want,
                size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (got[i] != want[i])
            return mtest_check(0, "iteration %d: %s: byte %zu is %d, expected %d", it, what, i,
                               got[i], want[i]);
    return 1;
}

/* one transfer size: count elements of x (and of the receive-side y) */
static void check_count(int it, const node *x, const node *y, int count, int rank, int left,
                        int right)
{
    int64_t size, lo, hi, ysize, ylo, yhi;
    if (!map_check(x, count, &size, &lo, &hi))
        return;
    size_t bytes = (size_t)(size * count);
    buffer src, peer, dst, want;
    unsigned char *packed = mtest_malloc(bytes + 1), *peer_packed = mtest_malloc(bytes + 1);
    unsigned char *mpacked = mtest_malloc(bytes + 16);
    MPI_Status st;
    int pos, n, psize;
    ncases++;
    if (getenv("DTYPE_PROP_VERBOSE"))
        fprintf(stderr,
                "iteration %d: count %d, size %lld, extent %lld, %zu map entries, basic %d\n", it,
                count, (long long)size, (long long)x->extent, x->n, single_basic);

    buf_make(&src, lo, hi, rank + 3 * it);
    buf_make(&peer, lo, hi, left + 3 * it); /* what the left neighbour sends */
    ref_pack(x, count, src.base, packed);
    ref_pack(x, count, peer.base, peer_packed);

    /* size, Pack in two calls, Unpack */
    MPI_Type_size(x->t, &n);
    mtest_check(n == size, "iteration %d: MPI_Type_size %d, reference %lld", it, n,
                (long long)size);
    MPI_Pack_size(count, x->t, MPI_COMM_WORLD, &psize);
    mtest_check(psize >= (int)bytes, "iteration %d: Pack_size %d < %zu", it, psize, bytes);
    pos = 0;
    MPI_Pack(src.base, count / 2, x->t, mpacked, (int)bytes + 16, &pos, MPI_COMM_WORLD);
    MPI_Pack(src.base + (count / 2) * x->extent, count - count / 2, x->t, mpacked, (int)bytes + 16,
             &pos, MPI_COMM_WORLD);
    mtest_check_int("MPI_Pack position", pos, (long long)bytes);
    same("MPI_Pack", it, mpacked, packed, bytes);
    buf_make(&dst, lo, hi, 99);
    buf_make(&want, lo, hi, 99);
    ref_unpack(x, count, want.base, peer_packed, (int64_t)bytes);
    pos = 0;
    MPI_Unpack(peer_packed, (int)bytes, &pos, dst.base, count, x->t, MPI_COMM_WORLD);
    same("MPI_Unpack", it, dst.mem, want.mem, dst.len);

    /* point-to-point around the ring, same type on both sides */
    MPI_Request rq[2];
    mtest_fill(dst.mem, dst.len, 99, 7);
    MPI_Irecv(dst.base, count, x->t, left, it, MPI_COMM_WORLD, &rq[0]);
    MPI_Isend(src.base, count, x->t, right, it, MPI_COMM_WORLD, &rq[1]);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    same("Isend/Irecv", it, dst.mem, want.mem, dst.len);

    /* Sendrecv: the type against MPI_PACKED */
    memset(mpacked, 0, bytes);
    MPI_Sendrecv(src.base, count, x->t, right, it, mpacked, (int)bytes, MPI_PACKED, left, it,
                 MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_PACKED, &n);
    mtest_check_int("received as MPI_PACKED: count", n, (long long)bytes);
    same("received as MPI_PACKED", it, mpacked, peer_packed, bytes);
    /* ... and MPI_PACKED (a packed stream) against the type */
    mtest_fill(dst.mem, dst.len, 99, 7);
    MPI_Sendrecv(packed, (int)bytes, MPI_PACKED, right, it, dst.base, count, x->t, left, it,
                 MPI_COMM_WORLD, &st);
    same("sent as MPI_PACKED", it, dst.mem, want.mem, dst.len);

    if (single_basic >= 0 && size > 0) {
        int bsize;
        MPI_Datatype b = basic_type(single_basic, &bsize);
        int nb = (int)(bytes / (size_t)bsize);
        MPI_Datatype cb;
        /* the type against contiguous basic elements, both directions */
        MPI_Type_contiguous(nb, b, &cb);
        MPI_Type_commit(&cb);
        memset(mpacked, 0, bytes);
        MPI_Sendrecv(src.base, count, x->t, right, it, mpacked, 1, cb, left, it, MPI_COMM_WORLD,
                     &st);
        MPI_Get_count(&st, b, &n);
        mtest_check_int("received as basic elements: count", n, nb);
        same("received as contiguous basic elements", it, mpacked, peer_packed, bytes);
        mtest_fill(dst.mem, dst.len, 99, 7);
        MPI_Sendrecv(packed, nb, b, right, it, dst.base, count, x->t, left, it, MPI_COMM_WORLD,
                     &st);
        same("sent as basic elements", it, dst.mem, want.mem, dst.len);
        MPI_Type_free(&cb);

        /* the type against another random type of the same basic type, with
         * enough elements to hold the message; the rest stays untouched */
        if (y && map_check(y, 1, &ysize, &ylo, &yhi) && ysize > 0) {
            int yc = (int)((int64_t)bytes / ysize + 1);
            if (map_check(y, yc, &ysize, &ylo, &yhi)) {
                buffer yd, yw;
                buf_make(&yd, ylo, yhi, 98);
                buf_make(&yw, ylo, yhi, 98);
                ref_unpack(y, yc, yw.base, peer_packed, (int64_t)bytes);
                MPI_Sendrecv(src.base, count, x->t, right, it, yd.base, yc, y->t, left, it,
                             MPI_COMM_WORLD, &st);
                MPI_Get_elements(&st, b, &n);
                mtest_check_int("other receive type: elements", n, nb);
                same("received as another type", it, yd.mem, yw.mem, yd.len);
                ncases++;
                free(yd.mem);
                free(yw.mem);
            }
        }
    }
    free(src.mem);
    free(peer.mem);
    free(dst.mem);
    free(want.mem);
    free(packed);
    free(peer_packed);
    free(mpacked);
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 500;
    unsigned seed = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 0) : 20261123u;
    int first = argc > 3 ? atoi(argv[3]) : 0; /* to replay one failing iteration */
    int rank, size;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    for (int it = first; it < first + iters; it++) {
        /* the same types on every rank: the seed depends on the iteration only */
        rng = ((uint64_t)seed << 20) ^ ((uint64_t)it * 0x9E3779B97F4A7C15ull) ^ 0x5DEECE66Dull;
        if (rng == 0)
            rng = 1;
        nmade = 0;
        single_basic = rnd(3) ? (int)rnd(5) : -1;
        node x = gen(1 + (int)rnd(4));
        node y = gen(1 + (int)rnd(3));
        MPI_Type_commit(&x.t);
        MPI_Type_commit(&y.t);
        ntypes += 2;
        int64_t sz = 0;
        for (size_t i = 0; i < x.n; i++)
            sz += x.e[i].len;
        /* eager: a few elements; rendezvous: ~64-512 KiB, if the span allows */
        check_count(it, &x, &y, 1 + (int)rnd(3), rank, left, right);
        if (sz > 0) {
            int64_t want = (int64_t)(65536 << rnd(4));
            int64_t big = want / sz + 1;
            int64_t per = x.extent > 0 ? x.extent : 1;
            if (big * per > MAX_SPAN)
                big = MAX_SPAN / per;
            if (big > 4)
                check_count(it, &x, &y, (int)big, rank, left, right);
        }
        free(x.e);
        free(y.e);
        for (int i = 0; i < nmade; i++)
            MPI_Type_free(&made[i]);
    }
    if (rank == 0)
        fprintf(stderr, "dtype_prop: %d iterations, %d random types, %d transfer cases\n", iters,
                ntypes, ncases);
    return mtest_finalize();
}
