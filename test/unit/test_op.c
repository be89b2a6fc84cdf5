/* Unit test of the reduction engine (src/mpi/op): every predefined operation
 * on every predefined datatype against a naive reference written from the
 * MPI 4.1 table of 6.9.2 (plus the integer ops on MPI_CHAR and MPI_CHARACTER, an
 * extension), the op/type mismatches (MPI_ERR_OP), MPI_REPLACE and
 * MPI_NO_OP, MINLOC/MAXLOC on every pair type, derived datatypes made of one
 * basic type, and user operations. Runs without MPI_Init; exits 0 on success. */
#include "mpi/mpii.h"
#include "mpi/op/op.h"

#include <complex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 37

static int errors;

__attribute__((format(printf, 1, 2))) static void fail(const char *fmt, ...)
{
    if (errors++ >= 30)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "test_op: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

enum cat { INT, UINT, FLOAT, COMPLEX, LOGICAL, BYTE, CHAR, WCHAR, PACKED };

typedef struct tdesc {
    int idx;
    const char *name;
    size_t size;
    enum cat cat;
} tdesc;

static const tdesc types[] = {
#define DTYPE(NAME, idx, ctype, size, cat) {idx, #NAME, size, cat},
#include "include/dtypes.def"
};
static const int ntypes = sizeof types / sizeof types[0];

static const char *const opnames[] = {"",     "MAX",    "MIN",    "SUM",     "PROD",
                                      "LAND", "BAND",   "LOR",    "BOR",     "LXOR",
                                      "BXOR", "MINLOC", "MAXLOC", "REPLACE", "NO_OP"};

/* MPI 4.1 6.9.2: which op applies to which group of types; and the extension: the one-byte
 * character types (MPI_CHAR, MPI_CHARACTER) take the integer ops, as signed char */
static int valid(int op, enum cat c)
{
    int integer = c == INT || c == UINT || c == CHAR;
    switch (op) {
    case 1:
    case 2:
        return integer || c == FLOAT;
    case 3:
    case 4:
        return integer || c == FLOAT || c == COMPLEX;
    case 5:
    case 7:
    case 9:
        return integer || c == LOGICAL;
    case 6:
    case 8:
    case 10:
        return integer || c == BYTE;
    default:
        return 0;
    }
}

/* ---- values by (category, size) -------------------------------------------------------- */

static int64_t get_s(const unsigned char *p, size_t sz)
{
    switch (sz) {
    case 1: {
        int8_t v;
        memcpy(&v, p, 1);
        return v;
    }
    case 2: {
        int16_t v;
        memcpy(&v, p, 2);
        return v;
    }
    case 4: {
        int32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    default: {
        int64_t v;
        memcpy(&v, p, 8);
        return v;
    }
    }
}

static uint64_t get_u(const unsigned char *p, size_t sz)
{
    uint64_t v = 0;
    memcpy(&v, p, sz); /* little endian */
    return v;
}

static void put_u(unsigned char *p, size_t sz, uint64_t v) { memcpy(p, &v, sz); }

static long double get_f(const unsigned char *p, size_t sz)
{
    if (sz == 4) {
        float v;
        memcpy(&v, p, 4);
        return v;
    }
    if (sz == 8) {
        double v;
        memcpy(&v, p, 8);
        return v;
    }
    long double v;
    memcpy(&v, p, sizeof v);
    return v;
}

static void put_f(unsigned char *p, size_t sz, long double x)
{
    if (sz == 4) {
        float v = (float)x;
        memcpy(p, &v, 4);
        return;
    }
    if (sz == 8) {
        double v = (double)x;
        memcpy(p, &v, 8);
        return;
    }
    memset(p, 0, sz);
    memcpy(p, &x, sizeof x);
}

static void fill(unsigned char *buf, const tdesc *t, int n)
{
    for (int k = 0; k < n; k++) {
        unsigned char *p = buf + (size_t)k * t->size;
        switch (t->cat) {
        case FLOAT:
            put_f(p, t->size, (long double)(rand() % 17 - 8));
            break;
        case COMPLEX:
            put_f(p, t->size / 2, (long double)(rand() % 17 - 8));
            put_f(p + t->size / 2, t->size / 2, (long double)(rand() % 17 - 8));
            break;
        case LOGICAL:
            put_u(p, t->size,
                  t->size == 1 ? (uint64_t)(rand() % 2) : (uint64_t)(int64_t)(rand() % 5 - 2));
            break;
        default:
            for (size_t b = 0; b < t->size; b++)
                p[b] = (unsigned char)rand();
            if (k % 5 == 0) /* some zeros for the logical ops */
                memset(p, 0, t->size);
        }
    }
}

/* reference: out = a op b for one element */
static void ref_int(int op, const tdesc *t, const unsigned char *pa, const unsigned char *pb,
                    unsigned char *out)
{
    size_t sz = t->size;
    uint64_t ua = get_u(pa, sz), ub = get_u(pb, sz), r = 0;
    int64_t sa = get_s(pa, sz), sb = get_s(pb, sz);
    int sgn = t->cat == INT || t->cat == CHAR;
    int lt = sgn ? sa < sb : ua < ub; /* a < b */
    int ta = ua != 0, tb = ub != 0;
    switch (op) {
    case 1:
        r = lt ? ub : ua;
        break;
    case 2:
        r = lt ? ua : ub;
        break;
    case 3:
        r = ua + ub;
        break;
    case 4:
        r = ua * ub;
        break;
    case 5:
        r = ta && tb;
        break;
    case 6:
        r = ua & ub;
        break;
    case 7:
        r = ta || tb;
        break;
    case 8:
        r = ua | ub;
        break;
    case 9:
        r = ta != tb;
        break;
    case 10:
        r = ua ^ ub;
        break;
    }
    put_u(out, sz, r);
}

static int check_float(int op, const tdesc *t, const unsigned char *pa, const unsigned char *pb,
                       const unsigned char *got)
{
    if (t->cat == FLOAT) {
        long double a = get_f(pa, t->size), b = get_f(pb, t->size), r = 0;
        switch (op) {
        case 1:
            r = a > b ? a : b;
            break;
        case 2:
            r = a < b ? a : b;
            break;
        case 3:
            r = a + b;
            break;
        case 4:
            r = a * b;
            break;
        }
        return get_f(got, t->size) == r;
    }
    size_t h = t->size / 2;
    long double complex a = get_f(pa, h) + I * get_f(pa + h, h);
    long double complex b = get_f(pb, h) + I * get_f(pb + h, h);
    long double complex r = op == 3 ? a + b : a * b;
    return get_f(got, h) == creall(r) && get_f(got + h, h) == cimagl(r);
}

static void test_basic(const tdesc *t)
{
    MPI_Datatype dt = MPII_HANDLE(MPII_KIND_DTYPE, t->idx);
    size_t bytes = N * t->size;
    unsigned char *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes), *e = malloc(t->size);
    for (int op = 1; op <= 14; op++) {
        MPI_Op h = MPII_HANDLE(MPII_KIND_OP, op);
        fill(a, t, N);
        fill(b, t, N);
        memcpy(c, b, bytes);
        int rc = mpii_op_apply(h, a, c, N, dt);
        int ok = op >= 13 || valid(op, t->cat);
        if (mpii_op_check(h, dt) != (ok ? MPI_SUCCESS : MPI_ERR_OP))
            fail("%s %s: mpii_op_check disagrees", t->name, opnames[op]);
        if (!ok) {
            if (rc != MPI_ERR_OP)
                fail("%s %s: expected MPI_ERR_OP", t->name, opnames[op]);
            if (memcmp(c, b, bytes) != 0)
                fail("%s %s: inout changed by a rejected op", t->name, opnames[op]);
            continue;
        }
        if (rc != MPI_SUCCESS) {
            fail("%s %s: rc %d", t->name, opnames[op], rc);
            continue;
        }
        for (int k = 0; k < N; k++) {
            const unsigned char *pa = a + k * t->size, *pb = b + k * t->size;
            const unsigned char *pc = c + k * t->size;
            int good;
            if (op == 13)
                good = memcmp(pc, pa, t->size) == 0;
            else if (op == 14)
                good = memcmp(pc, pb, t->size) == 0;
            else if (t->cat == FLOAT || t->cat == COMPLEX)
                good = check_float(op, t, pa, pb, pc);
            else {
                ref_int(op, t, pa, pb, e);
                good = memcmp(pc, e, t->size) == 0;
            }
            if (!good) {
                fail("%s %s: wrong result at element %d", t->name, opnames[op], k);
                break;
            }
        }
    }
    free(a), free(b), free(c), free(e);
}

/* ---- pair types: MINLOC / MAXLOC with ties --------------------------------------------------- */

#define PAIRTYPE(NAME, idx, vt, it)                                                         \
    static void test_pair_##idx(void)                                                       \
    {                                                                                       \
        struct pr {                                                                         \
            vt v;                                                                           \
            it i;                                                                           \
        } a[N], b[N], c[N];                                                                 \
        MPI_Datatype dt = MPII_HANDLE(MPII_KIND_DTYPE, idx);                                \
        memset(a, 0, sizeof a), memset(b, 0, sizeof b);                                     \
        for (int k = 0; k < N; k++) {                                                       \
            a[k].v = (vt)(rand() % 5), a[k].i = (it)(rand() % 9);                           \
            b[k].v = (vt)(rand() % 5), b[k].i = (it)(rand() % 9);                           \
        }                                                                                   \
        for (int op = 1; op <= 12; op++) {                                                  \
            memcpy(c, b, sizeof b);                                                         \
            int rc = mpii_op_apply(MPII_HANDLE(MPII_KIND_OP, op), a, c, N, dt);             \
            if (op < 11) {                                                                  \
                if (rc != MPI_ERR_OP)                                                       \
                    fail("%s %s: expected MPI_ERR_OP", #NAME, opnames[op]);                 \
                continue;                                                                   \
            }                                                                               \
            for (int k = 0; k < N; k++) {                                                   \
                int amin = a[k].v<b[k].v, amax = a[k].v> b[k].v, tie = a[k].v == b[k].v;    \
                int takea = op == 11 ? amin : amax;                                         \
                vt v = takea ? a[k].v : tie ? a[k].v : b[k].v;                              \
                it i = takea ? a[k].i : tie ? (a[k].i < b[k].i ? a[k].i : b[k].i) : b[k].i; \
                if (rc != MPI_SUCCESS || c[k].v != v || c[k].i != i) {                      \
                    fail("%s %s: wrong result at element %d", #NAME, opnames[op], k);       \
                    break;                                                                  \
                }                                                                           \
            }                                                                               \
        }                                                                                   \
    }
#include "include/dtypes.def"

static void test_pairs(void)
{
#define PAIRTYPE(NAME, idx, vt, it) test_pair_##idx();
#include "include/dtypes.def"
}

/* ---- derived datatypes of one basic type ---------------------------------------------------- */

static void test_derived(void)
{
    /* every other int of 2*N: SUM on the odd ones only */
    MPI_Datatype vec;
    if (PMPI_Type_vector(N, 1, 2, MPI_INT, &vec) != MPI_SUCCESS ||
        PMPI_Type_commit(&vec) != MPI_SUCCESS) {
        fail("%s %s: cannot build a vector type", "vector", "");
        return;
    }
    int a[2 * N], c[2 * N], b[2 * N];
    for (int k = 0; k < 2 * N; k++)
        a[k] = k * 3 - 7, b[k] = c[k] = 1000 + k;
    if (mpii_op_apply(MPI_SUM, a, c, 1, vec) != MPI_SUCCESS)
        fail("%s %s: rc", "vector(int)", "SUM");
    for (int k = 0; k < 2 * N; k++)
        if (c[k] != (k % 2 == 0 ? a[k] + b[k] : b[k]))
            fail("%s %s: wrong element %d", "vector(int)", "SUM", k);
    if (mpii_op_apply(MPI_BOR, a, c, 1, vec) != MPI_SUCCESS)
        fail("%s %s: rc", "vector(int)", "BOR");
    if (mpii_op_apply(MPI_REPLACE, a, c, 1, vec) != MPI_SUCCESS)
        fail("%s %s: rc", "vector(int)", "REPLACE");
    for (int k = 0; k < 2 * N; k++)
        if (c[k] != (k % 2 == 0 ? a[k] : b[k]))
            fail("%s %s: wrong element %d", "vector(int)", "REPLACE", k);
    PMPI_Type_free(&vec);

    /* contiguous and vector of pair types (the packed form has no padding) */
    MPI_Datatype pairs[2];
    struct {
        double v;
        int i;
    } da[4], dc[4];
    struct {
        short v;
        int i;
    } sa[8], sc[8];
    PMPI_Type_contiguous(4, MPI_DOUBLE_INT, &pairs[0]);
    PMPI_Type_vector(4, 1, 2, MPI_SHORT_INT, &pairs[1]);
    PMPI_Type_commit(&pairs[0]);
    PMPI_Type_commit(&pairs[1]);
    for (int k = 0; k < 4; k++)
        da[k].v = k, da[k].i = k, dc[k].v = 2 - k, dc[k].i = 10 + k;
    if (mpii_op_apply(MPI_MAXLOC, da, dc, 1, pairs[0]) != MPI_SUCCESS)
        fail("%s %s: rc", "contiguous(double_int)", "MAXLOC");
    for (int k = 0; k < 4; k++) {
        double v = k > 2 - k ? k : 2 - k;
        int i = k > 2 - k ? k : k == 1 ? 1 : 10 + k;
        if (dc[k].v != v || dc[k].i != i)
            fail("%s %s: wrong element %d", "contiguous(double_int)", "MAXLOC", k);
    }
    for (int k = 0; k < 8; k++)
        sa[k].v = (short)(k % 3), sa[k].i = k, sc[k].v = 1, sc[k].i = 100;
    if (mpii_op_apply(MPI_MINLOC, sa, sc, 1, pairs[1]) != MPI_SUCCESS)
        fail("%s %s: rc", "vector(short_int)", "MINLOC");
    for (int k = 0; k < 8; k++) {
        int take = k % 2 == 0 && sa[k].v <= 1;
        short v = take ? sa[k].v : 1;
        int i = take ? sa[k].i : 100;
        if (sc[k].v != v || sc[k].i != i)
            fail("%s %s: wrong element %d", "vector(short_int)", "MINLOC", k);
    }
    if (mpii_op_apply(MPI_SUM, sa, sc, 1, pairs[1]) != MPI_ERR_OP)
        fail("%s %s: expected MPI_ERR_OP", "vector(short_int)", "SUM");
    PMPI_Type_free(&pairs[0]);
    PMPI_Type_free(&pairs[1]);

    /* a struct of two different basic types has no reduction */
    MPI_Datatype st, ts[2] = {MPI_INT, MPI_DOUBLE};
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {0, 8};
    PMPI_Type_create_struct(2, bl, disp, ts, &st);
    PMPI_Type_commit(&st);
    if (mpii_op_check(MPI_SUM, st) != MPI_ERR_OP)
        fail("%s %s: expected MPI_ERR_OP", "struct(int,double)", "SUM");
    PMPI_Type_free(&st);
}

/* ---- user operations ------------------------------------------------------------------------ */

static MPI_Datatype user_seen;

static void user_sub(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const int *a = in;
    int *b = inout;
    user_seen = *dt;
    for (int k = 0; k < *len; k++)
        b[k] = a[k] - b[k];
}

static void user_sub_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
    const int *a = in;
    int *b = inout;
    for (MPI_Count k = 0; k < *len; k++)
        b[k] = 2 * a[k] - b[k];
}

static void test_user(void)
{
    MPI_Op op = mpii_op_create((void (*)(void))user_sub, 0, 0);
    MPI_Op opc = mpii_op_create((void (*)(void))user_sub_c, 1, 1);
    int a[N], c[N];
    for (int k = 0; k < N; k++)
        a[k] = 5 * k, c[k] = k;
    if (mpii_op_is_commutative(op) || !mpii_op_is_commutative(opc))
        fail("%s %s: commutativity flag wrong", "user", "");
    if (mpii_op_apply(op, a, c, N, MPI_INT) != MPI_SUCCESS || user_seen != MPI_INT)
        fail("%s %s: call failed", "user", "MPI_User_function");
    if (mpii_op_apply(opc, a, c, N, MPI_INT) != MPI_SUCCESS)
        fail("%s %s: call failed", "user", "MPI_User_function_c");
    for (int k = 0; k < N; k++)
        if (c[k] != 2 * 5 * k - (5 * k - k))
            fail("%s %s: wrong element %d", "user", "", k);
    mpii_op_free(op);
    mpii_op_free(opc);
    if (mpii_op_exists(op) || mpii_op_apply(op, a, c, N, MPI_INT) != MPI_ERR_OP)
        fail("%s %s: freed op still usable", "user", "");
    if (mpii_op_apply(MPI_OP_NULL, a, c, N, MPI_INT) != MPI_ERR_OP)
        fail("%s %s: MPI_OP_NULL accepted", "null", "");
}

int main(void)
{
    srand(12345);
    mpii_op_init();
    mpii_dtype_init();
    for (int i = 0; i < ntypes; i++)
        test_basic(&types[i]);
    test_pairs();
    test_derived();
    test_user();
    if (errors) {
        fprintf(stderr, "test_op: %d errors\n", errors);
        return 1;
    }
    printf("test_op: %d predefined types x 14 ops, pairs, derived and user ops: OK\n", ntypes);
    return 0;
}
