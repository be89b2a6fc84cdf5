/* Datatype objects: the handle table with the predefined types at their
 * fixed indices (src/include/dtypes.def), construction of derived types on
 * top of the core engine, envelopes, basic-element counts and external32.
 *
 * Besides the engine's compiled runs each type keeps (in `contents`) the
 * arguments it was built from and the sequence of basic elements of one
 * element, run-length encoded: Get_elements, Status_set_elements and
 * external32 walk that sequence. */
#include "mpi/datatype/datatype.h"
#include "mpi/datatype/dtype_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum dtype_cat {
    DT_CAT_INT,
    DT_CAT_UINT,
    DT_CAT_FLOAT,
    DT_CAT_COMPLEX,
    DT_CAT_LOGICAL,
    DT_CAT_BYTE,
    DT_CAT_CHAR,
    DT_CAT_WCHAR,
    DT_CAT_PACKED,
    DT_CAT_PAIR
};

typedef struct dtype_basic {
    const char *name;
    size_t size, align;
    int cat;
    int pair_v, pair_i;     /* pair types: basic indices of the value and the index */
    size_t pair_ioff, pair_size;
} dtype_basic;

#define DTYPE_IDX(h) MPII_HANDLE_INDEX(h)
/* basic index of a C type used in a pair */
#define DTYPE_OF_CTYPE(ct)                                                                       \
    _Generic((ct)0, float: DTYPE_IDX(MPI_FLOAT), double: DTYPE_IDX(MPI_DOUBLE),                \
             long double: DTYPE_IDX(MPI_LONG_DOUBLE), int: DTYPE_IDX(MPI_INT),                 \
             long: DTYPE_IDX(MPI_LONG), short: DTYPE_IDX(MPI_SHORT))

#include "include/dtypes.def" /* for DCFA_DTYPE_NPREDEF */

static const dtype_basic dtype_basics[DCFA_DTYPE_NPREDEF + 1] = {
#define DTYPE(NAME, index, c_type, size, category)                                               \
    [index] = {#NAME, size, _Alignof(c_type), DT_CAT_##category, 0, 0, 0, 0},
#define PAIRTYPE(NAME, index, vt, it)                                                            \
    [index] = {#NAME, 0, _Alignof(struct { vt v; it i; }), DT_CAT_PAIR, DTYPE_OF_CTYPE(vt),    \
               DTYPE_OF_CTYPE(it), offsetof(struct { vt v; it i; }, i),                      \
               sizeof(struct { vt v; it i; })},
#include "include/dtypes.def"
};

#define DTYPE(NAME, index, c_type, size, category)                                               \
    _Static_assert(sizeof(c_type) == size, #NAME " has the wrong size");
#include "include/dtypes.def"

/* run-length encoded basic elements of one element, in type-map order */
typedef struct dtype_seg {
    int basic;
    size_t n;
} dtype_seg;

typedef struct dtype_info {
    int combiner, large;
    int ni, na, nc, nd;
    int *ints;
    MPI_Aint *aints;
    MPI_Count *counts;
    mpii_dtype **types;     /* referenced */
    size_t nseg;
    dtype_seg *seg;
    size_t nbasic;          /* basic elements in one element */
} dtype_info;

static util_htab dtype_tab;
static int dtype_inited;
/* the MPI_Type_create_f90_* types made so far (mpii_dtype_f90) */
#define DTYPE_F90_MAX 64
static struct {
    int combiner, p, r;
    MPI_Datatype h;
} dtype_f90[DTYPE_F90_MAX];
static int dtype_nf90;

static dtype_info *dtype_info_of(const mpii_dtype *t) { return t->contents; }

/* ---- basic-element sequences ------------------------------------------------------ */

typedef struct dtype_segbuf {
    dtype_seg *v;
    size_t n, cap, total;
} dtype_segbuf;

static void dtype_seg_add(dtype_segbuf *b, int basic, size_t n)
{
    if (n == 0)
        return;
    b->total += n;
    if (b->n && b->v[b->n - 1].basic == basic) {
        b->v[b->n - 1].n += n;
        return;
    }
    if (b->n == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 4;
        b->v = util_realloc(b->v, b->cap * sizeof *b->v);
    }
    b->v[b->n++] = (dtype_seg){basic, n};
}

/* `times` elements of a type whose sequence is (seg, nseg) */
static void dtype_seg_repeat(dtype_segbuf *b, const dtype_seg *seg, size_t nseg, size_t times)
{
    if (nseg == 1) {
        dtype_seg_add(b, seg[0].basic, seg[0].n * times);
        return;
    }
    for (size_t k = 0; k < times; k++)
        for (size_t i = 0; i < nseg; i++)
            dtype_seg_add(b, seg[i].basic, seg[i].n);
}

/* ---- objects ------------------------------------------------------------------------ */

static mpii_dtype *dtype_new(dtype_info **info)
{
    int idx;
    mpii_dtype *t = util_htab_alloc(&dtype_tab, &idx);
    t->handle = MPII_HANDLE(MPII_KIND_DTYPE, idx);
    t->refcount = 1;
    *info = util_calloc(1, sizeof **info);
    t->contents = *info;
    return t;
}

static void dtype_info_free(dtype_info *in)
{
    for (int i = 0; i < in->nd; i++)
        if (in->types && in->types[i])
            mpii_dtype_release(in->types[i]);
    free(in->ints);
    free(in->aints);
    free(in->counts);
    free(in->types);
    free(in->seg);
    free(in);
}

/* record the envelope; references the component types */
static void dtype_set_env(dtype_info *in, const mpii_dtype_env *env)
{
    if (!env)
        return;
    in->combiner = env->combiner;
    in->large = env->large;
    in->ni = env->ni, in->na = env->na, in->nc = env->nc, in->nd = env->nd;
    if (env->ni) {
        in->ints = util_malloc((size_t)env->ni * sizeof *in->ints);
        memcpy(in->ints, env->ints, (size_t)env->ni * sizeof *in->ints);
    }
    if (env->na) {
        in->aints = util_malloc((size_t)env->na * sizeof *in->aints);
        memcpy(in->aints, env->aints, (size_t)env->na * sizeof *in->aints);
    }
    if (env->nc) {
        in->counts = util_malloc((size_t)env->nc * sizeof *in->counts);
        memcpy(in->counts, env->counts, (size_t)env->nc * sizeof *in->counts);
    }
    if (env->nd) {
        in->types = util_calloc((size_t)env->nd, sizeof *in->types);
        for (int i = 0; i < env->nd; i++) {
            in->types[i] = mpii_dtype_get(env->types[i]);
            if (in->types[i])
                mpii_dtype_ref(in->types[i]);
        }
    }
}

/* a new derived type around a compiled description and its element sequence */
static int dtype_register(core_dt *dt, dtype_segbuf *segs, const mpii_dtype_env *env,
                          MPI_Datatype *out)
{
    dtype_info *in;
    mpii_dtype *t = dtype_new(&in);
    t->dt = *dt;
    in->seg = segs->v;
    in->nseg = segs->n;
    in->nbasic = segs->total;
    dtype_set_env(in, env);
    *out = t->handle;
    return MPI_SUCCESS;
}

mpii_dtype *mpii_dtype_predef[MPII_DTYPE_PREDEF_MAX];

mpii_dtype *mpii_dtype_get_slow(MPI_Datatype h)
{
    if (MPII_HANDLE_KIND(h) != MPII_KIND_DTYPE || !dtype_inited)
        return NULL;
    mpii_dtype *t = util_htab_get(&dtype_tab, MPII_HANDLE_INDEX(h));
    if (!t || t->handle != h || t->refcount <= 0)
        return NULL;
    return t;
}

void mpii_dtype_ref(mpii_dtype *t)
{
    if (!t->predefined)
        t->refcount++;
}

void mpii_dtype_release(mpii_dtype *t)
{
    if (t->predefined || --t->refcount > 0)
        return;
    int idx = MPII_HANDLE_INDEX(t->handle);
    core_dt_destroy(&t->dt);
    dtype_info_free(t->contents);
    t->contents = NULL;
    util_htab_free(&dtype_tab, idx);
}

int mpii_dtype_check_comm(MPI_Datatype h, const char **why)
{
    mpii_dtype *t = mpii_dtype_get(h);
    if (!t) {
        *why = h == MPI_DATATYPE_NULL ? "datatype: MPI_DATATYPE_NULL" : "datatype: invalid datatype";
        return MPI_ERR_TYPE;
    }
    if (!t->committed) {
        *why = "datatype: not committed (call MPI_Type_commit)";
        return MPI_ERR_TYPE;
    }
    return MPI_SUCCESS;
}

/* ---- predefined types ---------------------------------------------------------- */

static void dtype_init_predef(int i)
{
    const dtype_basic *b = &dtype_basics[i];
    mpii_dtype *t = util_htab_get(&dtype_tab, i);
    dtype_info *in = util_calloc(1, sizeof *in);
    in->combiner = MPI_COMBINER_NAMED;
    t->handle = MPII_HANDLE(MPII_KIND_DTYPE, i);
    t->refcount = 1;
    t->committed = 1;
    t->predefined = 1;
    t->contents = in;
    snprintf(t->name, sizeof t->name, "%s", b->name);
    dtype_segbuf sb = {0};
    if (b->cat == DT_CAT_PAIR) {
        const dtype_basic *v = &dtype_basics[b->pair_v], *x = &dtype_basics[b->pair_i];
        core_dt vt, xt;
        core_dt_make_basic(&vt, v->size, v->align, b->pair_v);
        core_dt_make_basic(&xt, x->size, x->align, b->pair_i);
        core_dt_block blk[2] = {{&vt, 1, 0}, {&xt, 1, (ptrdiff_t)b->pair_ioff}};
        if (core_dt_create(&t->dt, 2, blk, 1, 0, 1) != UTIL_OK)
            util_die("datatype: cannot build %s", b->name);
        if (t->dt.extent != (ptrdiff_t)b->pair_size)
            util_die("datatype: %s extent %td != %zu", b->name, t->dt.extent, b->pair_size);
        t->dt.basic = i;
        core_dt_destroy(&vt);
        core_dt_destroy(&xt);
        dtype_seg_add(&sb, b->pair_v, 1);
        dtype_seg_add(&sb, b->pair_i, 1);
    } else {
        core_dt_make_basic(&t->dt, b->size, b->align, i);
        dtype_seg_add(&sb, i, 1);
    }
    in->seg = sb.v;
    in->nseg = sb.n;
    in->nbasic = sb.total;
}

int mpii_dtype_init(void)
{
    if (dtype_inited)
        return MPI_SUCCESS;
    util_htab_init(&dtype_tab, sizeof(mpii_dtype), DCFA_DTYPE_NPREDEF + 1);
    for (int i = 1; i <= DCFA_DTYPE_NPREDEF; i++)
        dtype_init_predef(i);
    dtype_inited = 1;
    _Static_assert(DCFA_DTYPE_NPREDEF < MPII_DTYPE_PREDEF_MAX, "predefined types fit the fast table");
    for (int i = 1; i <= DCFA_DTYPE_NPREDEF; i++)
        mpii_dtype_predef[i] = mpii_dtype_get_slow(MPII_HANDLE(MPII_KIND_DTYPE, i));
    return MPI_SUCCESS;
}

void mpii_dtype_finalize(void)
{
    if (!dtype_inited)
        return;
    for (int i = 1; i < dtype_tab.next_unused; i++) {
        mpii_dtype *t = util_htab_get(&dtype_tab, i);
        if (!t)
            continue;
        dtype_info *in = t->contents;
        core_dt_destroy(&t->dt);
        if (in) {
            free(in->ints);
            free(in->aints);
            free(in->counts);
            free(in->types);
            free(in->seg);
            free(in);
        }
    }
    util_htab_destroy(&dtype_tab);
    memset(mpii_dtype_predef, 0, sizeof mpii_dtype_predef);
    dtype_nf90 = 0;
    dtype_inited = 0;
}

/* ---- construction ---------------------------------------------------------------- */

static int dtype_errclass(int st) { return st == UTIL_ENOMEM ? MPI_ERR_NO_MEM : MPI_ERR_ARG; }

int mpii_dtype_build(const mpii_dtype_env *env, size_t nblocks, mpii_dtype *const *types,
                     int one_type, const MPI_Count *blens, const MPI_Count *disps, MPI_Count nrep,
                     MPI_Count stride, int pad, MPI_Datatype *out)
{
    core_dt_block *blk = util_malloc((nblocks ? nblocks : 1) * sizeof *blk);
    dtype_segbuf pat = {0}, all = {0};
    core_dt dt;
    for (size_t i = 0; i < nblocks; i++) {
        mpii_dtype *t = types[one_type ? 0 : i];
        blk[i] = (core_dt_block){&t->dt, (size_t)blens[i], (ptrdiff_t)disps[i]};
    }
    int st = core_dt_create(&dt, nblocks, blk, (size_t)nrep, (ptrdiff_t)stride, pad);
    free(blk);
    if (st != UTIL_OK)
        return dtype_errclass(st);
    for (size_t i = 0; i < nblocks; i++) {
        const dtype_info *in = dtype_info_of(types[one_type ? 0 : i]);
        dtype_seg_repeat(&pat, in->seg, in->nseg, (size_t)blens[i]);
    }
    dtype_seg_repeat(&all, pat.v, pat.n, (size_t)nrep);
    free(pat.v);
    return dtype_register(&dt, &all, env, out);
}

static void dtype_seg_copy(dtype_segbuf *b, const mpii_dtype *old)
{
    const dtype_info *in = dtype_info_of(old);
    for (size_t i = 0; i < in->nseg; i++)
        dtype_seg_add(b, in->seg[i].basic, in->seg[i].n);
}

int mpii_dtype_build_resized(const mpii_dtype_env *env, mpii_dtype *old, MPI_Count lb,
                             MPI_Count extent, MPI_Datatype *out)
{
    core_dt dt;
    dtype_segbuf sb = {0};
    int st = core_dt_resized(&dt, &old->dt, (ptrdiff_t)lb, (ptrdiff_t)extent);
    if (st != UTIL_OK)
        return dtype_errclass(st);
    dtype_seg_copy(&sb, old);
    return dtype_register(&dt, &sb, env, out);
}

int mpii_dtype_build_dup(mpii_dtype *old, MPI_Datatype *out)
{
    core_dt dt;
    dtype_segbuf sb = {0};
    int st = core_dt_copy(&dt, &old->dt);
    if (st != UTIL_OK)
        return dtype_errclass(st);
    dtype_seg_copy(&sb, old);
    MPI_Datatype h = old->handle;
    mpii_dtype_env env = {.combiner = MPI_COMBINER_DUP, .nd = 1, .types = &h};
    dtype_register(&dt, &sb, &env, out);
    mpii_dtype *t = mpii_dtype_get(*out);
    t->committed = old->committed;
    return MPI_SUCCESS;
}

/* ---- parameterized Fortran 90 types (MPI_Type_create_f90_*) ------------------------
 * A copy of the predefined type of the right size whose envelope records the
 * combiner and (p, r); predefined == 2 (never freed, envelope not NAMED).
 * The same (combiner, p, r) gives the same handle, as MPI requires. */

static MPI_Datatype dtype_f90_base(int combiner, int p, int r)
{
    if (combiner == MPI_COMBINER_F90_INTEGER)
        return r <= 2 ? MPI_INTEGER1 : r <= 4 ? MPI_INTEGER2 : r <= 9 ? MPI_INTEGER4
               : r <= 18 ? MPI_INTEGER8 : MPI_DATATYPE_NULL;
    int cx = combiner == MPI_COMBINER_F90_COMPLEX;
    /* IEEE single and double, and x87 extended precision (long double) */
    if (p <= 6 && r <= 37)
        return cx ? MPI_COMPLEX8 : MPI_REAL4;
    if (p <= 15 && r <= 307)
        return cx ? MPI_COMPLEX16 : MPI_REAL8;
    if (p <= 18 && r <= 4931)
        return cx ? MPI_COMPLEX32 : MPI_REAL16;
    return MPI_DATATYPE_NULL;
}

int mpii_dtype_f90(int combiner, int p, int r, MPI_Datatype *out)
{
    for (int i = 0; i < dtype_nf90; i++) {
        if (dtype_f90[i].combiner == combiner && dtype_f90[i].p == p && dtype_f90[i].r == r) {
            *out = dtype_f90[i].h;
            return MPI_SUCCESS;
        }
    }
    MPI_Datatype bh = dtype_f90_base(combiner, p == MPI_UNDEFINED ? 0 : p,
                                     r == MPI_UNDEFINED ? 0 : r);
    if (bh == MPI_DATATYPE_NULL)
        return MPI_ERR_ARG;
    if (dtype_nf90 == DTYPE_F90_MAX)
        return MPI_ERR_INTERN;
    mpii_dtype *base = mpii_dtype_get(bh);
    core_dt dt;
    dtype_segbuf sb = {0};
    int st = core_dt_copy(&dt, &base->dt);
    if (st != UTIL_OK)
        return dtype_errclass(st);
    dtype_seg_copy(&sb, base);
    int ints[2] = {p, r};
    mpii_dtype_env env = {.combiner = combiner, .ni = 2, .ints = ints};
    if (combiner == MPI_COMBINER_F90_INTEGER)
        env.ni = 1, ints[0] = r;
    MPI_Datatype h;
    int rc = dtype_register(&dt, &sb, &env, &h);
    if (rc != MPI_SUCCESS)
        return rc;
    mpii_dtype *t = mpii_dtype_get(h);
    t->committed = 1;
    t->predefined = 2;
    snprintf(t->name, sizeof t->name, "%s", base->name);
    dtype_f90[dtype_nf90].combiner = combiner;
    dtype_f90[dtype_nf90].p = p;
    dtype_f90[dtype_nf90].r = r;
    dtype_f90[dtype_nf90++].h = h;
    *out = h;
    return MPI_SUCCESS;
}

int mpii_dtype_build_grid(const mpii_dtype_env *env, int ndims, const MPI_Count *gsizes,
                          const int *nint, mpii_dtype_interval *const *ints, int order,
                          mpii_dtype *old, MPI_Datatype *out)
{
    core_dt cur, next;
    size_t nelem = 1;
    int st = core_dt_copy(&cur, &old->dt);
    if (st != UTIL_OK)
        return dtype_errclass(st);
    /* innermost dimension first: the last one in C order, the first in Fortran order */
    for (int k = 0; k < ndims; k++) {
        int d = order == MPI_ORDER_C ? ndims - 1 - k : k;
        core_dt_block *blk = util_malloc((nint[d] ? (size_t)nint[d] : 1) * sizeof *blk);
        size_t kept = 0;
        for (int j = 0; j < nint[d]; j++) {
            blk[j] = (core_dt_block){&cur, (size_t)ints[d][j].len,
                                     (ptrdiff_t)ints[d][j].start * cur.extent};
            kept += (size_t)ints[d][j].len;
        }
        nelem *= kept;
        st = core_dt_create(&next, (size_t)nint[d], blk, 1, 0, 0);
        free(blk);
        ptrdiff_t ext = cur.extent * (ptrdiff_t)gsizes[d];
        core_dt_destroy(&cur);
        if (st != UTIL_OK)
            return dtype_errclass(st);
        st = core_dt_resized(&cur, &next, 0, ext);
        core_dt_destroy(&next);
        if (st != UTIL_OK)
            return dtype_errclass(st);
    }
    dtype_segbuf sb = {0};
    const dtype_info *in = dtype_info_of(old);
    dtype_seg_repeat(&sb, in->seg, in->nseg, nelem);
    return dtype_register(&cur, &sb, env, out);
}

int mpii_dtype_darray_dim(MPI_Count gsize, int distrib, int darg, int psize, int coord,
                          mpii_dtype_interval **out, int *nint)
{
    mpii_dtype_interval *v = NULL;
    int n = 0;
    if (distrib == MPI_DISTRIBUTE_NONE) {
        v = util_malloc(sizeof *v);
        v[n++] = (mpii_dtype_interval){0, gsize};
    } else if (distrib == MPI_DISTRIBUTE_BLOCK) {
        MPI_Count b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (gsize + psize - 1) / psize : darg;
        MPI_Count start = b * coord, len = gsize - start < b ? gsize - start : b;
        v = util_malloc(sizeof *v);
        if (len > 0)
            v[n++] = (mpii_dtype_interval){start, len};
    } else {
        MPI_Count b = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
        MPI_Count nblk = (gsize + b - 1) / b;
        MPI_Count mine = nblk > coord ? (nblk - coord + psize - 1) / psize : 0;
        if (mine > 0x7fffffff)
            return MPI_ERR_ARG;
        v = util_malloc((size_t)(mine ? mine : 1) * sizeof *v);
        for (MPI_Count j = coord; j < nblk; j += psize) {
            MPI_Count start = j * b, len = gsize - start < b ? gsize - start : b;
            v[n++] = (mpii_dtype_interval){start, len};
        }
    }
    *out = v;
    *nint = n;
    return MPI_SUCCESS;
}

/* ---- envelopes --------------------------------------------------------------- */

void mpii_dtype_envelope(const mpii_dtype *t, int *ni, int *na, int *nc, int *nd, int *combiner,
                         int *large)
{
    const dtype_info *in = dtype_info_of(t);
    *ni = in->ni, *na = in->na, *nc = in->nc, *nd = in->nd;
    *combiner = t->predefined == 1 ? MPI_COMBINER_NAMED : in->combiner;
    *large = in->large;
}

void mpii_dtype_contents(const mpii_dtype *t, int *ints, MPI_Aint *aints, MPI_Count *counts,
                         MPI_Datatype *types)
{
    const dtype_info *in = dtype_info_of(t);
    if (in->ni)
        memcpy(ints, in->ints, (size_t)in->ni * sizeof *ints);
    if (in->na)
        memcpy(aints, in->aints, (size_t)in->na * sizeof *aints);
    if (in->nc)
        memcpy(counts, in->counts, (size_t)in->nc * sizeof *counts);
    for (int i = 0; i < in->nd; i++) {
        types[i] = in->types[i]->handle;
        mpii_dtype_ref(in->types[i]);
    }
}

/* ---- basic elements -------------------------------------------------------------- */

static size_t dtype_basic_size(int basic) { return dtype_basics[basic].size; }

MPI_Count mpii_dtype_elements(const mpii_dtype *t, MPI_Count bytes)
{
    const dtype_info *in = dtype_info_of(t);
    if (t->dt.size == 0 || bytes <= 0)
        return 0;
    MPI_Count full = bytes / (MPI_Count)t->dt.size, rem = bytes % (MPI_Count)t->dt.size;
    MPI_Count n = full * (MPI_Count)in->nbasic;
    for (size_t i = 0; i < in->nseg && rem > 0; i++) {
        MPI_Count bs = (MPI_Count)dtype_basic_size(in->seg[i].basic);
        MPI_Count segbytes = bs * (MPI_Count)in->seg[i].n;
        if (rem >= segbytes) {
            n += (MPI_Count)in->seg[i].n;
            rem -= segbytes;
        } else {
            n += rem / bs;
            rem %= bs;
            break;
        }
    }
    return rem ? -1 : n;
}

MPI_Count mpii_dtype_element_bytes(const mpii_dtype *t, MPI_Count elements)
{
    const dtype_info *in = dtype_info_of(t);
    if (in->nbasic == 0 || elements <= 0)
        return 0;
    MPI_Count full = elements / (MPI_Count)in->nbasic, rem = elements % (MPI_Count)in->nbasic;
    MPI_Count bytes = full * (MPI_Count)t->dt.size;
    for (size_t i = 0; i < in->nseg && rem > 0; i++) {
        MPI_Count take = rem < (MPI_Count)in->seg[i].n ? rem : (MPI_Count)in->seg[i].n;
        bytes += take * (MPI_Count)dtype_basic_size(in->seg[i].basic);
        rem -= take;
    }
    return bytes;
}

/* ---- external32: big-endian, the standard's sizes ---------------------------------- */

/* Bytes of one basic element in external32 (MPI 4.1 Table 13.2): the native
 * size except for long (4, where LP64 has 8) and wchar_t (2, where glibc has 4). */
static size_t dtype_ext32_size(int basic)
{
    if (basic == DTYPE_IDX(MPI_LONG) || basic == DTYPE_IDX(MPI_UNSIGNED_LONG))
        return 4;
    if (basic == DTYPE_IDX(MPI_WCHAR))
        return 2;
    return dtype_basics[basic].size;
}

MPI_Count mpii_dtype_external32_size(const mpii_dtype *t)
{
    const dtype_info *in = dtype_info_of(t);
    MPI_Count bytes = 0;
    for (size_t i = 0; i < in->nseg; i++)
        bytes += (MPI_Count)(in->seg[i].n * dtype_ext32_size(in->seg[i].basic));
    return bytes;
}

/* copy n bytes reversing their order on a little-endian host */
static void dtype_copy_be(unsigned char *dst, const unsigned char *src, size_t n)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    memcpy(dst, src, n);
#else
    for (size_t a = 0; a < n; a++)
        dst[a] = src[n - 1 - a];
#endif
}

/* one basic element between native (nat) and external32 (ext) */
static void dtype_ext32_one(int basic, unsigned char *nat, unsigned char *ext, int to_ext)
{
    const dtype_basic *b = &dtype_basics[basic];
    size_t es = dtype_ext32_size(basic);
    if (es != b->size) {
        /* a narrower integer: keep the low bits; widen by the sign of signed types */
        uint64_t v = 0;
        unsigned char be[8];
        if (to_ext) {
            memcpy(&v, nat, b->size); /* little-endian host: the low bytes come first */
            for (size_t k = 0; k < es; k++)
                be[es - 1 - k] = (unsigned char)(v >> (8 * k));
            memcpy(ext, be, es);
        } else {
            for (size_t k = 0; k < es; k++)
                v |= (uint64_t)ext[es - 1 - k] << (8 * k);
            if (b->cat == DT_CAT_INT && (v >> (8 * es - 1)) & 1)
                v |= ~(uint64_t)0 << (8 * es);
            memcpy(nat, &v, b->size);
        }
        return;
    }
    /* complex numbers swap each part; long double is swapped as 16 bytes,
     * not converted to IEEE binary128 */
    size_t unit = b->cat == DT_CAT_COMPLEX ? b->size / 2 : b->size;
    for (size_t off = 0; off < b->size; off += unit) {
        if (to_ext)
            dtype_copy_be(ext + off, nat + off, unit);
        else
            dtype_copy_be(nat + off, ext + off, unit);
    }
}

void mpii_dtype_external32(const mpii_dtype *t, void *native, void *ext, MPI_Count count,
                           int to_ext)
{
    const dtype_info *in = dtype_info_of(t);
    unsigned char *n = native, *e = ext;
    for (MPI_Count c = 0; c < count; c++)
        for (size_t i = 0; i < in->nseg; i++) {
            int basic = in->seg[i].basic;
            size_t ns = dtype_basics[basic].size, es = dtype_ext32_size(basic);
            for (size_t k = 0; k < in->seg[i].n; k++, n += ns, e += es)
                dtype_ext32_one(basic, n, e, to_ext);
        }
}

void mpii_dtype_pack(const mpii_dtype *t, const void *buf, MPI_Count count, void *out,
                     MPI_Count bytes, int external)
{
    if (!external) {
        core_dt_pack(buf, (size_t)count, &t->dt, 0, out, (size_t)bytes);
        return;
    }
    /* native packed bytes first: external32 sizes may differ (long) */
    size_t native = (size_t)count * t->dt.size;
    char *tmp = util_malloc(native ? native : 1);
    core_dt_pack(buf, (size_t)count, &t->dt, 0, tmp, native);
    mpii_dtype_external32(t, tmp, out, count, 1);
    free(tmp);
}

void mpii_dtype_unpack(const mpii_dtype *t, const void *in, MPI_Count bytes, void *buf,
                       MPI_Count count, int external)
{
    if (!external || bytes == 0) {
        core_dt_unpack(buf, (size_t)count, &t->dt, 0, in, (size_t)bytes);
        return;
    }
    size_t native = (size_t)count * t->dt.size;
    char *tmp = util_malloc(native ? native : 1);
    mpii_dtype_external32(t, tmp, (void *)(uintptr_t)in, count, 0);
    core_dt_unpack(buf, (size_t)count, &t->dt, 0, tmp, native);
    free(tmp);
}

MPI_Datatype mpii_dtype_match_size(int typeclass, int size)
{
    switch (typeclass) {
    case MPI_TYPECLASS_INTEGER:
        return size == 1 ? MPI_INTEGER1 : size == 2 ? MPI_INTEGER2 : size == 4 ? MPI_INTEGER4
               : size == 8 ? MPI_INTEGER8 : MPI_DATATYPE_NULL;
    case MPI_TYPECLASS_REAL:
        return size == 4 ? MPI_REAL4 : size == 8 ? MPI_REAL8 : size == 16 ? MPI_REAL16
               : MPI_DATATYPE_NULL;
    case MPI_TYPECLASS_COMPLEX:
        return size == 8 ? MPI_COMPLEX8 : size == 16 ? MPI_COMPLEX16 : size == 32 ? MPI_COMPLEX32
               : MPI_DATATYPE_NULL;
    default:
        return MPI_DATATYPE_NULL;
    }
}

MPI_Datatype mpii_dtype_value_index(MPI_Datatype value, MPI_Datatype index)
{
    static const MPI_Datatype tab[][3] = {
        {MPI_FLOAT, MPI_INT, MPI_FLOAT_INT},
        {MPI_DOUBLE, MPI_INT, MPI_DOUBLE_INT},
        {MPI_LONG, MPI_INT, MPI_LONG_INT},
        {MPI_INT, MPI_INT, MPI_2INT},
        {MPI_SHORT, MPI_INT, MPI_SHORT_INT},
        {MPI_LONG_DOUBLE, MPI_INT, MPI_LONG_DOUBLE_INT},
        {MPI_INTEGER, MPI_INTEGER, MPI_2INTEGER},
        {MPI_REAL, MPI_REAL, MPI_2REAL},
        {MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, MPI_2DOUBLE_PRECISION},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (tab[i][0] == value && tab[i][1] == index)
            return tab[i][2];
    return MPI_DATATYPE_NULL;
}
