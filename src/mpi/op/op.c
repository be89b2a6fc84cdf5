/* The reduction engine: predefined operations on every predefined type they
 * are defined for (MPI 4.1 section 6.9.2), generated from src/include/dtypes.def,
 * user-defined operations, and their application to derived datatypes made
 * of one basic type. One extension, because MPICH and Open MPI both have it
 * and programs rely on it: the one-byte character types (MPI_CHAR,
 * MPI_CHARACTER) take the integer operations, combined as signed char. */
#include "mpi/op/op.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef void (*op_fn)(const void *in, void *inout, size_t n);

/* the predefined operations with a function per type; slot = handle index - 1 */
enum {
    OPI_MAX,
    OPI_MIN,
    OPI_SUM,
    OPI_PROD,
    OPI_LAND,
    OPI_BAND,
    OPI_LOR,
    OPI_BOR,
    OPI_LXOR,
    OPI_BXOR,
    OPI_MINLOC,
    OPI_MAXLOC,
    OP_NFN
};
#define OP_IDX_REPLACE 13
#define OP_IDX_NO_OP   14

/* ---- function generators ----------------------------------------------------------
 * OP_FN(name, idx, T, EXPR) defines op_<name>_<idx>: inout[k] = EXPR for k < n,
 * with a[k] the input and b[k] the inout element. Integer sums and products
 * are computed in uintmax_t so that they wrap instead of overflowing. */
#define OP_FN(name, idx, T, EXPR)                                       \
    static void op_##name##_##idx(const void *vin, void *vio, size_t n) \
    {                                                                   \
        const T *a = vin;                                               \
        T *b = vio;                                                     \
        for (size_t k = 0; k < n; k++)                                  \
            b[k] = (EXPR);                                              \
    }

#define GEN_MAXMIN(i, T)                        \
    OP_FN(max, i, T, a[k] > b[k] ? a[k] : b[k]) \
    OP_FN(min, i, T, a[k] < b[k] ? a[k] : b[k])
#define GEN_ISUMPROD(i, T)                                   \
    OP_FN(sum, i, T, (T)((uintmax_t)a[k] + (uintmax_t)b[k])) \
    OP_FN(prod, i, T, (T)((uintmax_t)a[k] * (uintmax_t)b[k]))
#define GEN_FSUMPROD(i, T)        \
    OP_FN(sum, i, T, a[k] + b[k]) \
    OP_FN(prod, i, T, a[k] * b[k])
#define GEN_LOGIC(i, T)                  \
    OP_FN(land, i, T, (T)(a[k] && b[k])) \
    OP_FN(lor, i, T, (T)(a[k] || b[k]))  \
    OP_FN(lxor, i, T, (T)(!a[k] != !b[k]))
#define GEN_BITS(i, T)                  \
    OP_FN(band, i, T, (T)(a[k] & b[k])) \
    OP_FN(bor, i, T, (T)(a[k] | b[k]))  \
    OP_FN(bxor, i, T, (T)(a[k] ^ b[k]))

#define GEN_INT(i, T)     GEN_MAXMIN(i, T) GEN_ISUMPROD(i, T) GEN_LOGIC(i, T) GEN_BITS(i, T)
#define GEN_UINT(i, T)    GEN_INT(i, T)
#define GEN_FLOAT(i, T)   GEN_MAXMIN(i, T) GEN_FSUMPROD(i, T)
#define GEN_COMPLEX(i, T) GEN_FSUMPROD(i, T)
#define GEN_LOGICAL(i, T) GEN_LOGIC(i, T)
#define GEN_BYTE(i, T)    GEN_BITS(i, T)
#define GEN_CHAR(i, T)    GEN_INT(i, signed char)
#define GEN_WCHAR(i, T)
#define GEN_PACKED(i, T)

/* MINLOC/MAXLOC: the better value wins; on a tie the smaller index. Only
 * the two fields are touched: a buffer may end right after the last index. */
#define OP_LOCFN(name, ix, CMP)                                               \
    static void op_##name##_##ix(const void *vin, void *vio, size_t n)        \
    {                                                                         \
        const pair_##ix *a = vin;                                             \
        pair_##ix *b = vio;                                                   \
        for (size_t k = 0; k < n; k++) {                                      \
            if (a[k].v CMP b[k].v || (a[k].v == b[k].v && a[k].i < b[k].i)) { \
                b[k].v = a[k].v;                                              \
                b[k].i = a[k].i;                                              \
            }                                                                 \
        }                                                                     \
    }
#define GEN_PAIR(ix, VT, IT)   \
    typedef struct pair_##ix { \
        VT v;                  \
        IT i;                  \
    } pair_##ix;               \
    OP_LOCFN(minloc, ix, <)    \
    OP_LOCFN(maxloc, ix, >)

#define DTYPE(NAME, idx, ctype, size, cat)                                \
    _Static_assert(sizeof(ctype) == (size), "dtypes.def size of " #NAME); \
    GEN_##cat(idx, ctype)
#define PAIRTYPE(NAME, idx, vt, it) GEN_PAIR(idx, vt, it)
#include "include/dtypes.def"

/* ---- tables: function per (type, op), element size, pair layout ------------------------ */

#define OPS_MAXMIN(i)  [OPI_MAX] = op_max_##i, [OPI_MIN] = op_min_##i,
#define OPS_SUMPROD(i) [OPI_SUM] = op_sum_##i, [OPI_PROD] = op_prod_##i,
#define OPS_LOGIC(i)   [OPI_LAND] = op_land_##i, [OPI_LOR] = op_lor_##i, [OPI_LXOR] = op_lxor_##i,
#define OPS_BITS(i)    [OPI_BAND] = op_band_##i, [OPI_BOR] = op_bor_##i, [OPI_BXOR] = op_bxor_##i,
#define OPS_INT(i)     OPS_MAXMIN(i) OPS_SUMPROD(i) OPS_LOGIC(i) OPS_BITS(i)
#define OPS_UINT(i)    OPS_INT(i)
#define OPS_FLOAT(i)   OPS_MAXMIN(i) OPS_SUMPROD(i)
#define OPS_COMPLEX(i) OPS_SUMPROD(i)
#define OPS_LOGICAL(i) OPS_LOGIC(i)
#define OPS_BYTE(i)    OPS_BITS(i)
#define OPS_CHAR(i)    OPS_INT(i)
#define OPS_WCHAR(i)
#define OPS_PACKED(i)

static const op_fn op_fns[DCFA_DTYPE_NPREDEF + 1][OP_NFN] = {
#define DTYPE(NAME, idx, ctype, size, cat) [idx] = {OPS_##cat(idx)},
#define PAIRTYPE(NAME, idx, vt, it) \
    [idx] = {[OPI_MINLOC] = op_minloc_##idx, [OPI_MAXLOC] = op_maxloc_##idx},
#include "include/dtypes.def"
};

/* bytes of one element in memory (pairs: the struct, padding included) */
static const size_t op_esize[DCFA_DTYPE_NPREDEF + 1] = {
#define DTYPE(NAME, idx, ctype, size, cat) [idx] = sizeof(ctype),
#define PAIRTYPE(NAME, idx, vt, it)        [idx] = sizeof(pair_##idx),
#include "include/dtypes.def"
};

/* pairs: where the index lives, for the packed form without padding */
typedef struct op_pair_layout {
    size_t vsize, ioff, isize;
} op_pair_layout;
static const op_pair_layout op_pairs[DCFA_DTYPE_NPREDEF + 1] = {
#define PAIRTYPE(NAME, idx, vt, it) [idx] = {sizeof(vt), offsetof(pair_##idx, i), sizeof(it)},
#include "include/dtypes.def"
};

static const char *const op_names[MPII_OP_NPREDEF] = {
    "MPI_OP_NULL", "MPI_MAX",    "MPI_MIN",    "MPI_SUM",     "MPI_PROD",
    "MPI_LAND",    "MPI_BAND",   "MPI_LOR",    "MPI_BOR",     "MPI_LXOR",
    "MPI_BXOR",    "MPI_MINLOC", "MPI_MAXLOC", "MPI_REPLACE", "MPI_NO_OP",
};

/* ---- user operations ---------------------------------------------------------------- */

typedef struct op_user {
    int commute;
    int refs;       /* the user's handle (until MPI_Op_free) + operations in flight */
    int freed;      /* MPI_Op_free was called: the handle is invalid for new calls */
    MPI_User_function *fn;
    MPI_User_function_c *fn_c;
} op_user;

static util_htab op_tab;
static int op_ready;

int mpii_op_init(void)
{
    if (!op_ready) {
        util_htab_init(&op_tab, sizeof(op_user), MPII_OP_NPREDEF);
        op_ready = 1;
    }
    return MPI_SUCCESS;
}

/* the operation, also when freed by the user but still held by an operation in flight */
static op_user *op_user_raw(MPI_Op op)
{
    if (MPII_HANDLE_KIND(op) != MPII_KIND_OP || MPII_HANDLE_INDEX(op) < MPII_OP_NPREDEF)
        return NULL;
    mpii_op_init();
    return util_htab_get(&op_tab, MPII_HANDLE_INDEX(op));
}

/* the operation behind a handle the user may still use */
static op_user *op_user_get(MPI_Op op)
{
    op_user *u = op_user_raw(op);
    return u && !u->freed ? u : NULL;
}

int mpii_op_is_predefined(MPI_Op op)
{
    return MPII_HANDLE_KIND(op) == MPII_KIND_OP && MPII_HANDLE_INDEX(op) > 0 &&
           MPII_HANDLE_INDEX(op) < MPII_OP_NPREDEF;
}

int mpii_op_exists(MPI_Op op) { return mpii_op_is_predefined(op) || op_user_get(op) != NULL; }

const char *mpii_op_name(MPI_Op op)
{
    return mpii_op_is_predefined(op) ? op_names[MPII_HANDLE_INDEX(op)] : "user-defined op";
}

int mpii_op_is_commutative(MPI_Op op)
{
    op_user *u = op_user_raw(op);
    return u ? u->commute : 1;
}

MPI_Op mpii_op_create(void (*fn)(void), int large, int commute)
{
    int idx;
    mpii_op_init();
    op_user *u = util_htab_alloc(&op_tab, &idx);
    u->commute = commute != 0;
    u->refs = 1;
    u->freed = 0;
    if (large)
        u->fn_c = (MPI_User_function_c *)fn;
    else
        u->fn = (MPI_User_function *)fn;
    return MPII_HANDLE(MPII_KIND_OP, idx);
}

void mpii_op_ref(MPI_Op op)
{
    op_user *u = op_user_raw(op);
    if (u)
        u->refs++;
}

void mpii_op_release(MPI_Op op)
{
    op_user *u = op_user_raw(op);
    if (u && --u->refs == 0)
        util_htab_free(&op_tab, MPII_HANDLE_INDEX(op));
}

void mpii_op_free(MPI_Op op)
{
    op_user *u = op_user_get(op);
    if (u) {
        u->freed = 1;
        mpii_op_release(op);
    }
}

/* ---- type resolution ------------------------------------------------------------------ */

static int op_predef_type(MPI_Datatype dt)
{
    int i = MPII_HANDLE_INDEX(dt);
    return MPII_HANDLE_KIND(dt) == MPII_KIND_DTYPE && i > 0 && i <= DCFA_DTYPE_NPREDEF ? i : 0;
}

/* basic type index of dt (predefined or made of one basic type), 0 if none;
 * *t is set for derived types */
static int op_basic(MPI_Datatype dt, mpii_dtype **t, int *err)
{
    *t = NULL;
    *err = MPI_SUCCESS;
    int b = op_predef_type(dt);
    if (b)
        return b;
    *t = mpii_dtype_get(dt);
    if (!*t) {
        *err = MPI_ERR_TYPE;
        return 0;
    }
    b = (*t)->dt.basic;
    if (b <= 0 || b > DCFA_DTYPE_NPREDEF)
        *err = MPI_ERR_OP;
    return b;
}

int mpii_op_check(MPI_Op op, MPI_Datatype dt)
{
    if (!mpii_op_exists(op))
        return MPI_ERR_OP;
    if (!mpii_op_is_predefined(op))
        return mpii_dtype_get(dt) || op_predef_type(dt) ? MPI_SUCCESS : MPI_ERR_TYPE;
    mpii_dtype *t;
    int err;
    int b = op_basic(dt, &t, &err);
    int oi = MPII_HANDLE_INDEX(op);
    if (err == MPI_ERR_TYPE)
        return err;
    if (oi == OP_IDX_REPLACE || oi == OP_IDX_NO_OP)
        return MPI_SUCCESS;
    if (err != MPI_SUCCESS || !op_fns[b][oi - 1])
        return MPI_ERR_OP;
    return MPI_SUCCESS;
}

/* ---- application ---------------------------------------------------------------------- */

static void op_apply_user(op_user *u, const void *in, void *inout, MPI_Aint count, MPI_Datatype dt)
{
    MPI_Datatype d = dt;
    if (u->fn_c) {
        MPI_Count len = count;
        u->fn_c((void *)in, inout, &len, &d);
        return;
    }
    MPI_Aint extent = 0;
    if (count > INT_MAX) {
        mpii_dtype *t = mpii_dtype_get(dt);
        extent = t ? t->dt.extent : 0;
    }
    while (count > 0) {
        int len = count > INT_MAX ? INT_MAX : (int)count;
        u->fn((void *)in, inout, &len, &d);
        count -= len;
        in = (const char *)in + (MPI_Aint)len * extent;
        inout = (char *)inout + (MPI_Aint)len * extent;
    }
}

/* pairs packed without padding <-> the struct layout the functions use */
static void op_pairs_spread(const op_pair_layout *l, size_t esize, size_t psize, const char *packed,
                            char *structs, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        memcpy(structs + k * esize, packed + k * psize, l->vsize);
        memcpy(structs + k * esize + l->ioff, packed + k * psize + l->vsize, l->isize);
    }
}

static void op_pairs_gather(const op_pair_layout *l, size_t esize, size_t psize,
                            const char *structs, char *packed, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        memcpy(packed + k * psize, structs + k * esize, l->vsize);
        memcpy(packed + k * psize + l->vsize, structs + k * esize + l->ioff, l->isize);
    }
}

/* derived type of basic type b: pack both sides, combine, unpack the result */
static int op_apply_packed(op_fn fn, int b, const void *in, void *inout, MPI_Aint count,
                           const mpii_dtype *t)
{
    size_t total = (size_t)count * t->dt.size;
    size_t esize = op_esize[b], psize = esize;
    if (op_pairs[b].vsize) {
        const mpii_dtype *bt = mpii_dtype_get(MPII_HANDLE(MPII_KIND_DTYPE, b));
        psize = bt ? bt->dt.size : esize;
    }
    size_t n = total / psize;
    char *pa = util_malloc(total + 1), *pb = util_malloc(total + 1);
    char *sa = NULL, *sb = NULL;
    core_dt_pack(in, (size_t)count, &t->dt, 0, pa, total);
    if (!fn) { /* MPI_REPLACE */
        core_dt_unpack(inout, (size_t)count, &t->dt, 0, pa, total);
        goto out_free;
    }
    core_dt_pack(inout, (size_t)count, &t->dt, 0, pb, total);
    if (psize == esize) {
        fn(pa, pb, n);
    } else {
        sa = util_malloc(n * esize + 1);
        sb = util_malloc(n * esize + 1);
        op_pairs_spread(&op_pairs[b], esize, psize, pa, sa, n);
        op_pairs_spread(&op_pairs[b], esize, psize, pb, sb, n);
        fn(sa, sb, n);
        op_pairs_gather(&op_pairs[b], esize, psize, sb, pb, n);
    }
    core_dt_unpack(inout, (size_t)count, &t->dt, 0, pb, total);
    free(sb);
    free(sa);
out_free:
    free(pb);
    free(pa);
    return MPI_SUCCESS;
}

int mpii_op_apply(MPI_Op op, const void *in, void *inout, MPI_Aint count, MPI_Datatype dt)
{
    op_user *u = op_user_raw(op);
    if (count <= 0)
        return u || mpii_op_is_predefined(op) ? MPI_SUCCESS : MPI_ERR_OP;
    if (u) {
        op_apply_user(u, in, inout, count, dt);
        return MPI_SUCCESS;
    }
    if (!mpii_op_is_predefined(op))
        return MPI_ERR_OP;
    int oi = MPII_HANDLE_INDEX(op);
    if (oi == OP_IDX_NO_OP)
        return MPI_SUCCESS;
    mpii_dtype *t;
    int err;
    int b = op_basic(dt, &t, &err);
    if (err == MPI_ERR_TYPE)
        return err;
    if (oi == OP_IDX_REPLACE) {
        if (!t) {
            memmove(inout, in, (size_t)count * op_esize[b]);
            return MPI_SUCCESS;
        }
        if (err != MPI_SUCCESS) { /* mixed types: copy the packed bytes */
            size_t total = (size_t)count * t->dt.size;
            char *p = util_malloc(total + 1);
            core_dt_pack(in, (size_t)count, &t->dt, 0, p, total);
            core_dt_unpack(inout, (size_t)count, &t->dt, 0, p, total);
            free(p);
            return MPI_SUCCESS;
        }
        return op_apply_packed(NULL, b, in, inout, count, t);
    }
    if (err != MPI_SUCCESS)
        return err;
    op_fn fn = op_fns[b][oi - 1];
    if (!fn)
        return MPI_ERR_OP;
    if (!t) {
        fn(in, inout, (size_t)count);
        return MPI_SUCCESS;
    }
    if (t->dt.contig && !op_pairs[b].vsize) {
        size_t n = (size_t)count * t->dt.size / op_esize[b];
        fn(mpii_buf_at(in, t->dt.true_lb), (void *)mpii_buf_at(inout, t->dt.true_lb), n);
        return MPI_SUCCESS;
    }
    return op_apply_packed(fn, b, in, inout, count, t);
}
