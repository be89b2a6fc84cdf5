/*
 * coll_ref.h: every intra-communicator collective checked against a slow,
 * obvious reference computed locally.  Shared by coll_ref.c (blocking),
 * coll_ref_nb.c (MPI_I... forms) and coll_ref_persist.c (..._init forms);
 * coll_ref also accepts -nb / -persist, and CR_MODE=blocking|nb|persist in
 * the environment overrides the built-in mode.
 *
 * Every rank can compute what every rank contributes: element k of rank r's
 * data in iteration it is cr_val(r, k, it, seed), so each receiver builds the
 * whole expected buffer (holes of vector types and gaps between blocks must
 * keep the sentinel) and compares it element by element.
 *
 * Cases run on MPI_COMM_WORLD, an odd/even split and a reversed-rank split.
 * The case list is generated in the same order on every rank (kind, then
 * communicator), so the sequence of operations on each communicator is the
 * same everywhere.  Modes:
 *   blocking  one case at a time;
 *   nb        batches of CR_BATCH cases started together, completed by
 *             MPI_Waitall, an MPI_Test loop or an MPI_Testall loop in turn;
 *   persist   batches initialised once, started CR_STARTS times (buffers
 *             refilled with other contents before each start), MPI_Start
 *             and MPI_Startall in turn, then freed.
 * A failure names the case (collective, communicator, root, count, type, op,
 * in-place, vector layout, mode, iteration), the DCFA_COLL_* variables set,
 * the rank, and the first differing index with expected and actual values.
 */
#ifndef COLL_REF_H
#define COLL_REF_H

#include "mtest.h"

#include <stdint.h>

enum { CR_BLOCKING, CR_NB, CR_PERSIST };

#define CR_BATCH  6
#define CR_STARTS 3
#define CR_SENT   0x5A5A5A5A /* never a value: cr_val() < 2^30 */
#define CR_NCOMM  3

static int cr_mode;
static int cr_trace;              /* CR_TRACE=1: print each case as it is issued */
static int cr_starts = CR_STARTS; /* CR_STARTS=N overrides (debugging) */
static char cr_envdesc[512];
static MPI_Datatype cr_tvec; /* 2 ints with a 1-int hole: extent 3 ints */
static MPI_Datatype cr_tmat; /* 2x2 matrix: 4 contiguous ints */
static MPI_Op cr_op_mulmod, cr_op_matmul;

static MPI_Comm cr_comm[CR_NCOMM];
static const char *cr_comm_name[CR_NCOMM] = {"world", "split_parity", "split_reversed"};

static int cr_val(int r, long k, int it, int seed)
{
    uint32_t v = (uint32_t)(r + 1) * 1000003u + (uint32_t)k * 7919u + (uint32_t)it * 104729u +
                 (uint32_t)seed * 611953u;
    v ^= v >> 13;
    v *= 2654435761u;
    v ^= v >> 16;
    return (int)(v & 0x3fffffff);
}

/* ---- layouts: logical int k of a buffer in int (vec=0) or vector (vec=1) layout */
static long cr_off(int vec, long k) { return vec ? (k / 2) * 3 + (k & 1) * 2 : k; }
static long cr_ints(int vec, long n) { return vec ? (n / 2) * 3 : n; }
static int cr_mcount(int vec, long n) { return (int)(vec ? n / 2 : n); }
static MPI_Datatype cr_mtype(int vec) { return vec ? cr_tvec : MPI_INT; }

/* ---- reduction types and ops ------------------------------------------------ */
enum { T_INT, T_DBL, T_LL, T_U8, T_DI, T_2I, T_MAT, T_NTYPES };
enum {
    O_SUM,
    O_PROD,
    O_MAX,
    O_MIN,
    O_LAND,
    O_LOR,
    O_LXOR,
    O_BAND,
    O_BOR,
    O_BXOR,
    O_MINLOC,
    O_MAXLOC,
    O_MULMOD, /* user, commutative: a*b mod 65521 */
    O_MATMUL, /* user, non-commutative: 2x2 matrix product, earlier rank on the left */
    O_NOPS
};
typedef struct {
    double v;
    int i;
} cr_di;
typedef struct {
    int v, i;
} cr_2i;

static const char *cr_tname[T_NTYPES] = {"int",        "double", "long_long",   "unsigned_char",
                                         "double_int", "2int",   "mat2x2(user)"};
static const char *cr_oname[O_NOPS] = {
    "SUM",  "PROD", "MAX",  "MIN",    "LAND",   "LOR",         "LXOR",
    "BAND", "BOR",  "BXOR", "MINLOC", "MAXLOC", "user_mulmod", "user_matmul_noncomm"};

static size_t cr_tsize(int t)
{
    switch (t) {
    case T_INT:
        return sizeof(int);
    case T_DBL:
        return sizeof(double);
    case T_LL:
        return sizeof(long long);
    case T_U8:
        return 1;
    case T_DI:
        return sizeof(cr_di);
    case T_2I:
        return sizeof(cr_2i);
    default:
        return 4 * sizeof(int);
    }
}

static MPI_Datatype cr_tmpi(int t)
{
    switch (t) {
    case T_INT:
        return MPI_INT;
    case T_DBL:
        return MPI_DOUBLE;
    case T_LL:
        return MPI_LONG_LONG;
    case T_U8:
        return MPI_UNSIGNED_CHAR;
    case T_DI:
        return MPI_DOUBLE_INT;
    case T_2I:
        return MPI_2INT;
    default:
        return cr_tmat;
    }
}

static MPI_Op cr_ompi(int o)
{
    switch (o) {
    case O_SUM:
        return MPI_SUM;
    case O_PROD:
        return MPI_PROD;
    case O_MAX:
        return MPI_MAX;
    case O_MIN:
        return MPI_MIN;
    case O_LAND:
        return MPI_LAND;
    case O_LOR:
        return MPI_LOR;
    case O_LXOR:
        return MPI_LXOR;
    case O_BAND:
        return MPI_BAND;
    case O_BOR:
        return MPI_BOR;
    case O_BXOR:
        return MPI_BXOR;
    case O_MINLOC:
        return MPI_MINLOC;
    case O_MAXLOC:
        return MPI_MAXLOC;
    case O_MULMOD:
        return cr_op_mulmod;
    default:
        return cr_op_matmul;
    }
}

/* Element k of rank r's contribution. Ranges keep every result exact. */
static void cr_gen(int t, int o, int r, long k, int it, int seed, void *out)
{
    int h = cr_val(r, k, it, seed);

    switch (t) {
    case T_INT: {
        int v;
        if (o == O_PROD)
            v = 1 + (h % 3 == 0);
        else if (o == O_LAND || o == O_LOR || o == O_LXOR)
            v = (h % 4 == 0) ? 0 : (h % 7) - 3; /* zeros, and non-zero values other than 1 */
        else if (o == O_BAND || o == O_BOR || o == O_BXOR)
            v = h & 0xffffff;
        else if (o == O_MULMOD)
            v = 1 + h % 65520;
        else
            v = h % 2001 - 1000;
        *(int *)out = v;
        break;
    }
    case T_DBL:
        if (o == O_PROD)
            *(double *)out = (h % 3 == 0) ? 0.5 : (h % 3 == 1) ? 1.0 : 2.0;
        else
            *(double *)out = (h % 2001 - 1000) * 0.25;
        break;
    case T_LL:
        *(long long *)out = (long long)(h % 2001 - 1000) * 1099511627776LL + h % 977;
        break;
    case T_U8:
        *(unsigned char *)out = (unsigned char)((h & 0xff) | ((k & 1) ? 0x81 : 0));
        break;
    case T_DI: {
        cr_di d;
        memset(&d, 0, sizeof(d));
        d.v = (h % 5) * 0.5; /* many ties: the lower index must win */
        d.i = (r * 5 + (int)(k % 11)) % 11;
        memcpy(out, &d, sizeof(d));
        break;
    }
    case T_2I: {
        cr_2i d;
        d.v = h % 5 - 2;
        d.i = (r * 7 + (int)(k % 13)) % 13;
        memcpy(out, &d, sizeof(d));
        break;
    }
    default: {
        int *m = out;
        for (int j = 0; j < 4; j++)
            m[j] = cr_val(r, k * 4 + j, it, seed) % 3;
        break;
    }
    }
}

/* inout[i] = in[i] op inout[i] (in is the earlier rank), for n elements. */
static void cr_apply(int t, int o, const void *in, void *inout, long n)
{
    for (long i = 0; i < n; i++) {
        size_t es = cr_tsize(t);
        const char *a = (const char *)in + i * es;
        char *b = (char *)inout + i * es;
        switch (t) {
        case T_INT: {
            int x, y, z = 0;
            memcpy(&x, a, sizeof(x));
            memcpy(&y, b, sizeof(y));
            switch (o) {
            case O_SUM:
                z = x + y;
                break;
            case O_PROD:
                z = x * y;
                break;
            case O_MAX:
                z = x > y ? x : y;
                break;
            case O_MIN:
                z = x < y ? x : y;
                break;
            case O_LAND:
                z = x && y;
                break;
            case O_LOR:
                z = x || y;
                break;
            case O_LXOR:
                z = !x != !y;
                break;
            case O_BAND:
                z = x & y;
                break;
            case O_BOR:
                z = x | y;
                break;
            case O_BXOR:
                z = x ^ y;
                break;
            case O_MULMOD:
                z = (int)(((long long)x * y) % 65521);
                break;
            }
            memcpy(b, &z, sizeof(z));
            break;
        }
        case T_DBL: {
            double x, y, z = 0;
            memcpy(&x, a, sizeof(x));
            memcpy(&y, b, sizeof(y));
            z = o == O_SUM    ? x + y
                : o == O_PROD ? x * y
                : o == O_MAX  ? (x > y ? x : y)
                              : (x < y ? x : y);
            memcpy(b, &z, sizeof(z));
            break;
        }
        case T_LL: {
            long long x, y, z;
            memcpy(&x, a, sizeof(x));
            memcpy(&y, b, sizeof(y));
            z = o == O_SUM ? x + y : o == O_MAX ? (x > y ? x : y) : (x < y ? x : y);
            memcpy(b, &z, sizeof(z));
            break;
        }
        case T_U8: {
            unsigned char x = *(const unsigned char *)a, y = *(unsigned char *)b;
            *(unsigned char *)b = o == O_BAND ? (x & y) : o == O_BOR ? (x | y) : (x ^ y);
            break;
        }
        case T_DI: {
            cr_di x, y;
            memcpy(&x, a, sizeof(x));
            memcpy(&y, b, sizeof(y));
            if ((o == O_MINLOC && x.v < y.v) || (o == O_MAXLOC && x.v > y.v))
                y = x;
            else if (x.v == y.v && x.i < y.i)
                y.i = x.i;
            memcpy(b, &y, sizeof(y));
            break;
        }
        case T_2I: {
            cr_2i x, y;
            memcpy(&x, a, sizeof(x));
            memcpy(&y, b, sizeof(y));
            if ((o == O_MINLOC && x.v < y.v) || (o == O_MAXLOC && x.v > y.v))
                y = x;
            else if (x.v == y.v && x.i < y.i)
                y.i = x.i;
            memcpy(b, &y, sizeof(y));
            break;
        }
        default: {
            int x[4], y[4], z[4];
            memcpy(x, a, sizeof(x));
            memcpy(y, b, sizeof(y));
            z[0] = x[0] * y[0] + x[1] * y[2];
            z[1] = x[0] * y[1] + x[1] * y[3];
            z[2] = x[2] * y[0] + x[3] * y[2];
            z[3] = x[2] * y[1] + x[3] * y[3];
            memcpy(b, z, sizeof(z));
            break;
        }
        }
    }
}

static int cr_equal(int t, const void *a, const void *b, char *msg, size_t len)
{
    switch (t) {
    case T_DI: {
        cr_di x, y;
        memcpy(&x, a, sizeof(x));
        memcpy(&y, b, sizeof(y));
        snprintf(msg, len, "expected (%g,%d) got (%g,%d)", x.v, x.i, y.v, y.i);
        return x.v == y.v && x.i == y.i;
    }
    case T_DBL: {
        double x, y;
        memcpy(&x, a, sizeof(x));
        memcpy(&y, b, sizeof(y));
        snprintf(msg, len, "expected %.17g got %.17g", x, y);
        return x == y;
    }
    case T_LL: {
        long long x, y;
        memcpy(&x, a, sizeof(x));
        memcpy(&y, b, sizeof(y));
        snprintf(msg, len, "expected %lld got %lld", x, y);
        return x == y;
    }
    case T_U8:
        snprintf(msg, len, "expected %u got %u", *(const unsigned char *)a,
                 *(const unsigned char *)b);
        return *(const unsigned char *)a == *(const unsigned char *)b;
    default: {
        int x[4] = {0}, y[4] = {0};
        size_t n = cr_tsize(t) / sizeof(int);
        memcpy(x, a, n * sizeof(int));
        memcpy(y, b, n * sizeof(int));
        if (n == 1)
            snprintf(msg, len, "expected %d got %d", x[0], y[0]);
        else
            snprintf(msg, len, "expected (%d,%d,%d,%d) got (%d,%d,%d,%d)", x[0], x[1], x[2], x[3],
                     y[0], y[1], y[2], y[3]);
        return memcmp(x, y, sizeof(x)) == 0;
    }
    }
}

static void cr_user_mulmod(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    cr_apply(T_INT, O_MULMOD, in, inout, *len);
}

static void cr_user_matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    cr_apply(T_MAT, O_MATMUL, in, inout, *len);
}

/* ---- cases ---------------------------------------------------------------- */
enum {
    K_BARRIER,
    K_BCAST,
    K_GATHER,
    K_GATHERV,
    K_SCATTER,
    K_SCATTERV,
    K_ALLGATHER,
    K_ALLGATHERV,
    K_ALLTOALL,
    K_ALLTOALLV,
    K_ALLTOALLW,
    K_REDUCE,
    K_ALLREDUCE,
    K_REDUCE_SCATTER,
    K_REDUCE_SCATTER_BLOCK,
    K_SCAN,
    K_EXSCAN,
    K_REDUCE_LOCAL,
    K_NKINDS
};
static const char *cr_kname[K_NKINDS] = {
    "barrier",   "bcast",     "gather",      "gatherv",        "scatter",
    "scatterv",  "allgather", "allgatherv",  "alltoall",       "alltoallv",
    "alltoallw", "reduce",    "allreduce",   "reduce_scatter", "reduce_scatter_block",
    "scan",      "exscan",    "reduce_local"};

typedef struct {
    int kind, ci, root, inplace, svec, rvec, t, o, seed;
    long count; /* ints per block (data movement) or elements (reductions) */
    MPI_Comm comm;
    int rank, size;
    void *sbuf, *rbuf;
    long sints, rints;     /* sizes in ints (data movement) */
    size_t sbytes, rbytes; /* sizes in bytes (reductions) */
    int *scounts, *sdispls, *rcounts, *rdispls;
    MPI_Datatype *stypes, *rtypes;
    MPI_Request req;
    double t_late, t_done;
    char desc[256];
} cr_case;

static double cr_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* system-wide: comparable between ranks */
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static const char *cr_modename(void)
{
    return cr_mode == CR_NB ? "nb" : cr_mode == CR_PERSIST ? "persist" : "blocking";
}

/* v-variant count for block i (logical ints, even): zero for some blocks */
static long cr_vcount(const cr_case *c, int i) { return c->count * ((i + c->seed) % 3); }

/* alltoallv/w count from rank a to rank b; symmetric when in place */
static long cr_acount(const cr_case *c, int a, int b)
{
    if (c->inplace)
        return c->count * ((a + b + c->seed) % 3);
    return c->count * ((a + 2 * b + c->seed) % 3);
}

/* reversed block order with 2-int gaps: displacement (logical ints) of block i of n */
static long cr_rdispl(int n, int i, long (*cnt)(const cr_case *, int), const cr_case *c)
{
    long d = 0;
    for (int j = n - 1; j > i; j--)
        d += cnt(c, j) + 2;
    return d;
}

static long cr_rs_count(const cr_case *c, int i)
{
    return c->kind == K_REDUCE_SCATTER ? c->count * ((i + c->seed) % 3) : c->count;
}

static void cr_fill_ints(int *buf, long n)
{
    for (long i = 0; i < n; i++)
        buf[i] = CR_SENT;
}

/* Compares n ints; reports the first difference. */
static void cr_cmp_ints(cr_case *c, int it, const char *which, const int *exp, const int *got,
                        long n)
{
    for (long i = 0; i < n; i++) {
        if (exp[i] != got[i]) {
            mtest_fail("%s [mode=%s iter=%d%s%s]: comm rank %d: %s int %ld of %ld: expected %d "
                       "(0x%x) got %d (0x%x)",
                       c->desc, cr_modename(), it, cr_envdesc[0] ? " " : "", cr_envdesc, c->rank,
                       which, i, n, exp[i], (unsigned)exp[i], got[i], (unsigned)got[i]);
            return;
        }
    }
}

static int cr_red_kind(int k) { return k >= K_REDUCE; }

/* Builds case buffers and argument arrays (sizes do not depend on the iteration). */
static void cr_setup(cr_case *c)
{
    int n = c->size, r = c->rank;
    long cnt = c->count;

    c->comm = cr_comm[c->ci];
    c->req = MPI_REQUEST_NULL;
    snprintf(c->desc, sizeof(c->desc),
             "%s comm=%s(size %d) root=%d count=%ld inplace=%d svec=%d rvec=%d type=%s op=%s",
             cr_kname[c->kind], cr_comm_name[c->ci], n, c->root, cnt, c->inplace, c->svec, c->rvec,
             cr_red_kind(c->kind) ? cr_tname[c->t] : "-",
             cr_red_kind(c->kind) ? cr_oname[c->o] : "-");
    c->sints = c->rints = 0;
    c->sbytes = c->rbytes = 0;
    switch (c->kind) {
    case K_BARRIER:
        break;
    case K_BCAST:
        c->rints = cr_ints(r == c->root ? c->svec : c->rvec, cnt);
        break;
    case K_GATHER:
    case K_SCATTER:
        c->sints = cr_ints(c->svec, c->kind == K_GATHER ? cnt : cnt * n);
        c->rints = cr_ints(c->rvec, c->kind == K_GATHER ? cnt * n : cnt);
        break;
    case K_ALLGATHER:
        c->sints = cr_ints(c->svec, cnt);
        c->rints = cr_ints(c->rvec, cnt * n);
        break;
    case K_ALLTOALL:
        c->sints = cr_ints(c->svec, cnt * n);
        c->rints = cr_ints(c->rvec, cnt * n);
        break;
    case K_GATHERV:
    case K_SCATTERV:
    case K_ALLGATHERV: {
        int vside = c->kind == K_SCATTERV ? c->svec : c->rvec;
        long tot = cr_rdispl(n, -1, cr_vcount, c); /* whole root-side buffer */
        c->rcounts = mtest_malloc(sizeof(int) * n);
        c->rdispls = mtest_malloc(sizeof(int) * n);
        for (int i = 0; i < n; i++) {
            c->rcounts[i] = cr_mcount(vside, cr_vcount(c, i));
            c->rdispls[i] = cr_mcount(vside, cr_rdispl(n, i, cr_vcount, c));
        }
        if (c->kind == K_SCATTERV) {
            c->sints = cr_ints(c->svec, tot);
            c->rints = cr_ints(c->rvec, cr_vcount(c, r) + 2);
        } else {
            c->sints = cr_ints(c->svec, cr_vcount(c, r));
            c->rints = cr_ints(c->rvec, tot);
        }
        break;
    }
    case K_ALLTOALLV:
    case K_ALLTOALLW: {
        int w = c->kind == K_ALLTOALLW;
        long so = 0, ro = 0;
        c->scounts = mtest_malloc(sizeof(int) * n);
        c->sdispls = mtest_malloc(sizeof(int) * n);
        c->rcounts = mtest_malloc(sizeof(int) * n);
        c->rdispls = mtest_malloc(sizeof(int) * n);
        c->stypes = mtest_malloc(sizeof(MPI_Datatype) * n);
        c->rtypes = mtest_malloc(sizeof(MPI_Datatype) * n);
        /* blocks laid out in reverse peer order with 3-int gaps; alltoallw uses a
         * vector type for every other peer, and byte displacements */
        for (int j = n - 1; j >= 0; j--) {
            int sv = w ? (j + c->seed) % 2 : c->svec, rv = w ? (j + c->seed + 1) % 2 : c->rvec;
            long sc = cr_acount(c, r, j), rc = cr_acount(c, j, r);
            /* MPICH 4.0.2's nonblocking/persistent in-place alltoallw truncates when the
             * peers' types differ (blocking is fine): one type for every peer there */
            if (c->inplace && w && cr_mode != CR_BLOCKING)
                rv = c->rvec;
            if (c->inplace)
                sv = rv;
            c->stypes[j] = cr_mtype(sv);
            c->rtypes[j] = cr_mtype(rv);
            c->scounts[j] = cr_mcount(sv, sc);
            c->rcounts[j] = cr_mcount(rv, rc);
            if (w) {
                c->sdispls[j] = (int)(so * sizeof(int));
                c->rdispls[j] = (int)(ro * sizeof(int));
            } else {
                /* v: displacements in extents of the (single) type; keep them aligned */
                so = sv ? (so + 2) / 3 * 3 : so;
                ro = rv ? (ro + 2) / 3 * 3 : ro;
                c->sdispls[j] = (int)(sv ? so / 3 : so);
                c->rdispls[j] = (int)(rv ? ro / 3 : ro);
            }
            so += cr_ints(sv, sc) + 3;
            ro += cr_ints(rv, rc) + 3;
        }
        c->sints = so;
        c->rints = ro;
        break;
    }
    case K_REDUCE:
    case K_ALLREDUCE:
    case K_SCAN:
    case K_EXSCAN:
    case K_REDUCE_LOCAL:
        c->sbytes = c->rbytes = cnt * cr_tsize(c->t);
        break;
    case K_REDUCE_SCATTER:
    case K_REDUCE_SCATTER_BLOCK: {
        long tot = 0;
        c->rcounts = mtest_malloc(sizeof(int) * n);
        for (int i = 0; i < n; i++) {
            c->rcounts[i] = (int)cr_rs_count(c, i);
            tot += c->rcounts[i];
        }
        c->sbytes = tot * cr_tsize(c->t);
        c->rbytes = c->inplace ? c->sbytes : c->rcounts[r] * cr_tsize(c->t);
        break;
    }
    }
    if (!cr_red_kind(c->kind)) {
        c->sbytes = c->sints * sizeof(int);
        c->rbytes = c->rints * sizeof(int);
    }
    c->sbuf = mtest_malloc(c->sbytes);
    c->rbuf = mtest_malloc(c->rbytes);
}

static void cr_teardown(cr_case *c)
{
    free(c->sbuf);
    free(c->rbuf);
    free(c->scounts);
    free(c->sdispls);
    free(c->rcounts);
    free(c->rdispls);
    free(c->stypes);
    free(c->rtypes);
}

/* Contribution of comm rank r (count elements starting at element first) into buf. */
static void cr_gen_red(const cr_case *c, int r, long first, long count, int it, void *buf)
{
    size_t es = cr_tsize(c->t);
    for (long k = 0; k < count; k++)
        cr_gen(c->t, c->o, r, first + k, it, c->seed, (char *)buf + k * es);
}

/* Writes the send data (and receive-side sentinels) of iteration it. */
static void cr_fill(cr_case *c, int it)
{
    int n = c->size, r = c->rank, *s = c->sbuf, *d = c->rbuf;
    long cnt = c->count;

    if (!cr_red_kind(c->kind)) {
        cr_fill_ints(s, c->sints);
        cr_fill_ints(d, c->rints);
    }
    switch (c->kind) {
    case K_BARRIER:
        break;
    case K_BCAST:
        if (r == c->root)
            for (long k = 0; k < cnt; k++)
                d[cr_off(c->svec, k)] = cr_val(c->root, k, it, c->seed);
        break;
    case K_GATHER:
        for (long k = 0; k < cnt; k++)
            s[cr_off(c->svec, k)] = cr_val(r, k, it, c->seed);
        if (c->inplace && r == c->root)
            for (long k = 0; k < cnt; k++)
                d[cr_off(c->rvec, r * cnt + k)] = cr_val(r, k, it, c->seed);
        break;
    case K_SCATTER:
        if (r == c->root)
            for (long k = 0; k < cnt * n; k++)
                s[cr_off(c->svec, k)] = cr_val(r, k, it, c->seed);
        break;
    case K_ALLGATHER:
        for (long k = 0; k < cnt; k++) {
            s[cr_off(c->svec, k)] = cr_val(r, k, it, c->seed);
            if (c->inplace)
                d[cr_off(c->rvec, r * cnt + k)] = cr_val(r, k, it, c->seed);
        }
        break;
    case K_ALLTOALL:
        for (long k = 0; k < cnt * n; k++) {
            s[cr_off(c->svec, k)] = cr_val(r, k, it, c->seed);
            if (c->inplace)
                d[cr_off(c->rvec, k)] = cr_val(r, k, it, c->seed);
        }
        break;
    case K_GATHERV:
    case K_ALLGATHERV: {
        long vc = cr_vcount(c, r), base = cr_rdispl(n, r, cr_vcount, c);
        for (long k = 0; k < vc; k++) {
            s[cr_off(c->svec, k)] = cr_val(r, k, it, c->seed);
            if (c->inplace && (c->kind == K_ALLGATHERV || r == c->root))
                d[cr_off(c->rvec, base + k)] = cr_val(r, k, it, c->seed);
        }
        break;
    }
    case K_SCATTERV:
        if (r == c->root)
            for (int i = 0; i < n; i++) {
                long base = cr_rdispl(n, i, cr_vcount, c);
                for (long k = 0; k < cr_vcount(c, i); k++)
                    s[cr_off(c->svec, base + k)] = cr_val(r, i * 100000L + k, it, c->seed);
            }
        break;
    case K_ALLTOALLV:
    case K_ALLTOALLW: {
        int w = c->kind == K_ALLTOALLW;
        int *buf = c->inplace ? d : s;
        for (int j = 0; j < n; j++) {
            MPI_Datatype ty = c->inplace ? c->rtypes[j] : c->stypes[j];
            int vec = ty != MPI_INT;
            long base = c->inplace ? c->rdispls[j] : c->sdispls[j];
            base = w ? base / (long)sizeof(int) : base * (vec ? 3 : 1);
            for (long k = 0; k < cr_acount(c, r, j); k++)
                buf[base + cr_off(vec, k)] = cr_val(r, j * 100000L + k, it, c->seed);
        }
        break;
    }
    case K_REDUCE:
    case K_ALLREDUCE:
    case K_SCAN:
    case K_EXSCAN:
        memset(c->rbuf, 0xA5, c->rbytes);
        cr_gen_red(c, r, 0, cnt, it,
                   (c->inplace && (c->kind != K_REDUCE || r == c->root)) ? c->rbuf : c->sbuf);
        break;
    case K_REDUCE_LOCAL:
        cr_gen_red(c, 0, 0, cnt, it, c->sbuf);
        cr_gen_red(c, 1, 0, cnt, it, c->rbuf);
        break;
    case K_REDUCE_SCATTER:
    case K_REDUCE_SCATTER_BLOCK:
        memset(c->rbuf, 0xA5, c->rbytes);
        cr_gen_red(c, r, 0, (long)(c->sbytes / cr_tsize(c->t)), it, c->inplace ? c->rbuf : c->sbuf);
        break;
    }
}

#define CR_CALL(B, I, ...)                              \
    (cr_mode == CR_BLOCKING ? MPI_##B(__VA_ARGS__)      \
     : cr_mode == CR_NB     ? MPI_##I(__VA_ARGS__, req) \
                            : MPI_##B##_init(__VA_ARGS__, MPI_INFO_NULL, req))

/* Blocking: runs the collective.  nb: starts it.  persist: initialises it. */
static void cr_issue(cr_case *c)
{
    MPI_Request *req = &c->req;
    void *ip = MPI_IN_PLACE;
    int rc = MPI_SUCCESS, n = c->size, r = c->rank, root = c->root;
    long cnt = c->count;
    MPI_Comm comm = c->comm;
    MPI_Datatype st = cr_mtype(c->svec), rt = cr_mtype(c->rvec);
    MPI_Datatype dt = cr_red_kind(c->kind) ? cr_tmpi(c->t) : MPI_INT;
    MPI_Op op = cr_red_kind(c->kind) ? cr_ompi(c->o) : MPI_OP_NULL;
    int atroot = r == root;

    *req = MPI_REQUEST_NULL;
    if (cr_trace)
        fprintf(stderr, "[rank %d] %s\n", mtest_wrank, c->desc);
    switch (c->kind) {
    case K_BARRIER:
        if (cr_mode == CR_BLOCKING)
            rc = MPI_Barrier(comm);
        else if (cr_mode == CR_NB)
            rc = MPI_Ibarrier(comm, req);
        else
            rc = MPI_Barrier_init(comm, MPI_INFO_NULL, req);
        break;
    case K_BCAST: {
        int v = atroot ? c->svec : c->rvec;
        rc = CR_CALL(Bcast, Ibcast, c->rbuf, cr_mcount(v, cnt), cr_mtype(v), root, comm);
        break;
    }
    case K_GATHER:
        rc = CR_CALL(Gather, Igather, (c->inplace && atroot) ? ip : c->sbuf,
                     cr_mcount(c->svec, cnt), st, c->rbuf, cr_mcount(c->rvec, cnt), rt, root, comm);
        break;
    case K_SCATTER:
        rc =
            CR_CALL(Scatter, Iscatter, c->sbuf, cr_mcount(c->svec, cnt), st,
                    (c->inplace && atroot) ? ip : c->rbuf, cr_mcount(c->rvec, cnt), rt, root, comm);
        break;
    case K_ALLGATHER:
        rc = CR_CALL(Allgather, Iallgather, c->inplace ? ip : c->sbuf, cr_mcount(c->svec, cnt), st,
                     c->rbuf, cr_mcount(c->rvec, cnt), rt, comm);
        break;
    case K_ALLTOALL:
        rc = CR_CALL(Alltoall, Ialltoall, c->inplace ? ip : c->sbuf, cr_mcount(c->svec, cnt), st,
                     c->rbuf, cr_mcount(c->rvec, cnt), rt, comm);
        break;
    case K_GATHERV:
        rc = CR_CALL(Gatherv, Igatherv, (c->inplace && atroot) ? ip : c->sbuf,
                     cr_mcount(c->svec, cr_vcount(c, r)), st, c->rbuf, c->rcounts, c->rdispls, rt,
                     root, comm);
        break;
    case K_ALLGATHERV:
        rc = CR_CALL(Allgatherv, Iallgatherv, c->inplace ? ip : c->sbuf,
                     cr_mcount(c->svec, cr_vcount(c, r)), st, c->rbuf, c->rcounts, c->rdispls, rt,
                     comm);
        break;
    case K_SCATTERV:
        rc = CR_CALL(Scatterv, Iscatterv, c->sbuf, c->rcounts, c->rdispls, st,
                     (c->inplace && atroot) ? ip : c->rbuf, cr_mcount(c->rvec, cr_vcount(c, r)), rt,
                     root, comm);
        break;
    case K_ALLTOALLV:
        rc = CR_CALL(Alltoallv, Ialltoallv, c->inplace ? ip : c->sbuf, c->scounts, c->sdispls, st,
                     c->rbuf, c->rcounts, c->rdispls, rt, comm);
        break;
    case K_ALLTOALLW:
        rc = CR_CALL(Alltoallw, Ialltoallw, c->inplace ? ip : c->sbuf, c->scounts, c->sdispls,
                     c->stypes, c->rbuf, c->rcounts, c->rdispls, c->rtypes, comm);
        break;
    case K_REDUCE:
        rc = CR_CALL(Reduce, Ireduce, (c->inplace && atroot) ? ip : c->sbuf, c->rbuf, (int)cnt, dt,
                     op, root, comm);
        break;
    case K_ALLREDUCE:
        rc = CR_CALL(Allreduce, Iallreduce, c->inplace ? ip : c->sbuf, c->rbuf, (int)cnt, dt, op,
                     comm);
        break;
    case K_REDUCE_SCATTER:
        rc = CR_CALL(Reduce_scatter, Ireduce_scatter, c->inplace ? ip : c->sbuf, c->rbuf,
                     c->rcounts, dt, op, comm);
        break;
    case K_REDUCE_SCATTER_BLOCK:
        rc = CR_CALL(Reduce_scatter_block, Ireduce_scatter_block, c->inplace ? ip : c->sbuf,
                     c->rbuf, (int)cnt, dt, op, comm);
        break;
    case K_SCAN:
        rc = CR_CALL(Scan, Iscan, c->inplace ? ip : c->sbuf, c->rbuf, (int)cnt, dt, op, comm);
        break;
    case K_EXSCAN:
        rc = CR_CALL(Exscan, Iexscan, c->inplace ? ip : c->sbuf, c->rbuf, (int)cnt, dt, op, comm);
        break;
    case K_REDUCE_LOCAL:
        rc = MPI_Reduce_local(c->sbuf, c->rbuf, (int)cnt, dt, op);
        break;
    }
    (void)n;
    if (rc != MPI_SUCCESS) {
        char what[1024];
        snprintf(what, sizeof(what), "%s [mode=%s%s%s]", c->desc, cr_modename(),
                 cr_envdesc[0] ? " " : "", cr_envdesc);
        mtest_check_rc(what, rc);
        *req = MPI_REQUEST_NULL;
    }
}

/* Expected reduction of elements [first, first+count) over comm ranks lo..hi into out. */
static void cr_ref_red(const cr_case *c, int lo, int hi, long first, long count, int it, void *out)
{
    size_t es = cr_tsize(c->t);
    char *tmp = mtest_malloc(count * es);

    cr_gen_red(c, lo, first, count, it, out);
    for (int q = lo + 1; q <= hi; q++) {
        cr_gen_red(c, q, first, count, it, tmp);
        cr_apply(c->t, c->o, out, tmp, count); /* tmp = out op tmp */
        memcpy(out, tmp, count * es);
    }
    free(tmp);
}

static void cr_cmp_red(cr_case *c, int it, const void *exp, const void *got, long count)
{
    size_t es = cr_tsize(c->t);
    char msg[200];

    for (long k = 0; k < count; k++) {
        if (!cr_equal(c->t, (const char *)exp + k * es, (const char *)got + k * es, msg,
                      sizeof(msg))) {
            mtest_fail("%s [mode=%s iter=%d%s%s]: comm rank %d: element %ld of %ld: %s", c->desc,
                       cr_modename(), it, cr_envdesc[0] ? " " : "", cr_envdesc, c->rank, k, count,
                       msg);
            return;
        }
    }
}

static void cr_verify(cr_case *c, int it)
{
    int n = c->size, r = c->rank, root = c->root;
    long cnt = c->count;
    int *e = NULL;

    if (!cr_red_kind(c->kind) && c->kind != K_BARRIER) {
        long ne = c->rints > c->sints ? c->rints : c->sints;
        e = mtest_malloc(sizeof(int) * ne);
        cr_fill_ints(e, ne);
    }
    switch (c->kind) {
    case K_BARRIER: {
        /* rank root entered late: nobody may have left before it entered */
        double late = c->t_late;
        MPI_Bcast(&late, 1, MPI_DOUBLE, root, c->comm);
        if (c->t_done < late)
            mtest_fail("%s [mode=%s iter=%d%s%s]: comm rank %d left the barrier %.6f s before "
                       "rank %d entered it",
                       c->desc, cr_modename(), it, cr_envdesc[0] ? " " : "", cr_envdesc, r,
                       late - c->t_done, root);
        break;
    }
    case K_BCAST: {
        int v = r == root ? c->svec : c->rvec;
        for (long k = 0; k < cnt; k++)
            e[cr_off(v, k)] = cr_val(root, k, it, c->seed);
        cr_cmp_ints(c, it, "buffer", e, c->rbuf, c->rints);
        break;
    }
    case K_GATHER:
        if (r == root) {
            for (int i = 0; i < n; i++)
                for (long k = 0; k < cnt; k++)
                    e[cr_off(c->rvec, i * cnt + k)] = cr_val(i, k, it, c->seed);
            cr_cmp_ints(c, it, "recvbuf", e, c->rbuf, c->rints);
        }
        break;
    case K_ALLGATHER:
        for (int i = 0; i < n; i++)
            for (long k = 0; k < cnt; k++)
                e[cr_off(c->rvec, i * cnt + k)] = cr_val(i, k, it, c->seed);
        cr_cmp_ints(c, it, "recvbuf", e, c->rbuf, c->rints);
        break;
    case K_SCATTER:
        if (c->inplace && r == root) {
            for (long k = 0; k < cnt * n; k++)
                e[cr_off(c->svec, k)] = cr_val(r, k, it, c->seed);
            cr_cmp_ints(c, it, "root sendbuf (in place)", e, c->sbuf, c->sints);
        } else {
            for (long k = 0; k < cnt; k++)
                e[cr_off(c->rvec, k)] = cr_val(root, r * cnt + k, it, c->seed);
            cr_cmp_ints(c, it, "recvbuf", e, c->rbuf, c->rints);
        }
        break;
    case K_ALLTOALL:
        for (int i = 0; i < n; i++)
            for (long k = 0; k < cnt; k++)
                e[cr_off(c->rvec, i * cnt + k)] = cr_val(i, r * cnt + k, it, c->seed);
        cr_cmp_ints(c, it, "recvbuf", e, c->rbuf, c->rints);
        break;
    case K_GATHERV:
    case K_ALLGATHERV:
        if (c->kind == K_ALLGATHERV || r == root) {
            for (int i = 0; i < n; i++) {
                long base = cr_rdispl(n, i, cr_vcount, c);
                for (long k = 0; k < cr_vcount(c, i); k++)
                    e[cr_off(c->rvec, base + k)] = cr_val(i, k, it, c->seed);
            }
            cr_cmp_ints(c, it, "recvbuf", e, c->rbuf, c->rints);
        }
        break;
    case K_SCATTERV:
        if (!(c->inplace && r == root)) {
            for (long k = 0; k < cr_vcount(c, r); k++)
                e[cr_off(c->rvec, k)] = cr_val(root, r * 100000L + k, it, c->seed);
            cr_cmp_ints(c, it, "recvbuf", e, c->rbuf, c->rints);
        }
        break;
    case K_ALLTOALLV:
    case K_ALLTOALLW: {
        int w = c->kind == K_ALLTOALLW;
        for (int i = 0; i < n; i++) {
            int vec = c->rtypes[i] != MPI_INT;
            long base = c->rdispls[i];
            base = w ? base / (long)sizeof(int) : base * (vec ? 3 : 1);
            for (long k = 0; k < cr_acount(c, i, r); k++)
                e[base + cr_off(vec, k)] = cr_val(i, r * 100000L + k, it, c->seed);
        }
        cr_cmp_ints(c, it, "recvbuf", e, c->rbuf, c->rints);
        break;
    }
    case K_REDUCE:
    case K_ALLREDUCE:
    case K_SCAN:
    case K_EXSCAN: {
        int hi = c->kind == K_SCAN ? r : c->kind == K_EXSCAN ? r - 1 : n - 1;
        if ((c->kind == K_REDUCE && r != root) || hi < 0)
            break;
        void *x = mtest_malloc(c->rbytes);
        cr_ref_red(c, 0, hi, 0, cnt, it, x);
        cr_cmp_red(c, it, x, c->rbuf, cnt);
        free(x);
        break;
    }
    case K_REDUCE_LOCAL: {
        void *x = mtest_malloc(c->rbytes);
        cr_ref_red(c, 0, 1, 0, cnt, it, x);
        cr_cmp_red(c, it, x, c->rbuf, cnt);
        free(x);
        break;
    }
    case K_REDUCE_SCATTER:
    case K_REDUCE_SCATTER_BLOCK: {
        long first = 0;
        for (int i = 0; i < r; i++)
            first += c->rcounts[i];
        void *x = mtest_malloc(c->rcounts[r] * cr_tsize(c->t));
        cr_ref_red(c, 0, n - 1, first, c->rcounts[r], it, x);
        cr_cmp_red(c, it, x, c->rbuf, c->rcounts[r]);
        free(x);
        break;
    }
    }
    free(e);
}

/* ---- the case list ---------------------------------------------------------- */
static cr_case *cr_cases;
static int cr_ncases, cr_cap;
static int cr_ccount[CR_NCOMM]; /* cases so far per communicator: the same on all its ranks */

static cr_case *cr_add(int kind, int ci, int root, long count)
{
    cr_case *c;
    const char *only = getenv("CR_ONLY"); /* debugging: run one kind only */
    static cr_case dummy;
    if (only && strcmp(only, cr_kname[kind]) != 0) {
        ++cr_ccount[ci];
        return &dummy;
    }
    if (cr_ncases == cr_cap) {
        cr_cap = cr_cap ? 2 * cr_cap : 256;
        cr_cases = realloc(cr_cases, sizeof(cr_case) * cr_cap);
        if (!cr_cases)
            MPI_Abort(MPI_COMM_WORLD, 2);
    }
    c = &cr_cases[cr_ncases++];
    memset(c, 0, sizeof(*c));
    c->kind = kind;
    c->ci = ci;
    c->root = root;
    c->count = count;
    c->seed = ++cr_ccount[ci];
    MPI_Comm_rank(cr_comm[ci], &c->rank);
    MPI_Comm_size(cr_comm[ci], &c->size);
    return c;
}

static int cr_csize(int ci)
{
    int n;
    MPI_Comm_size(cr_comm[ci], &n);
    return n;
}

/* (t, o) pairs of the reduction tests */
static const int cr_pairs[][2] = {
    {T_INT, O_SUM},    {T_INT, O_PROD},  {T_INT, O_MAX},   {T_INT, O_MIN},   {T_INT, O_LAND},
    {T_INT, O_LOR},    {T_INT, O_LXOR},  {T_INT, O_BAND},  {T_INT, O_BOR},   {T_INT, O_BXOR},
    {T_INT, O_MULMOD}, {T_DBL, O_SUM},   {T_DBL, O_PROD},  {T_DBL, O_MAX},   {T_DBL, O_MIN},
    {T_LL, O_SUM},     {T_LL, O_MAX},    {T_LL, O_MIN},    {T_U8, O_BAND},   {T_U8, O_BOR},
    {T_U8, O_BXOR},    {T_DI, O_MINLOC}, {T_DI, O_MAXLOC}, {T_2I, O_MINLOC}, {T_2I, O_MAXLOC},
    {T_MAT, O_MATMUL},
};
#define CR_NPAIRS ((int)(sizeof(cr_pairs) / sizeof(cr_pairs[0])))

static void cr_build(void)
{
    static const long mcounts[] = {0, 1, 18, 100, 1000}; /* data movement (even ones get vec) */
    static const long rcounts[] = {0, 1, 3, 17, 100};    /* reductions */
    int wn = cr_csize(0);

    for (int kind = 0; kind < K_NKINDS; kind++) {
        for (int ci = 0; ci < CR_NCOMM; ci++) {
            int n = cr_csize(ci);
            cr_case *c;
            switch (kind) {
            case K_BARRIER:
                cr_add(kind, ci, 0, 0);
                if (n > 1)
                    cr_add(kind, ci, n - 1, 0);
                break;
            case K_BCAST:
            case K_GATHER:
            case K_SCATTER:
            case K_GATHERV:
            case K_SCATTERV:
                /* every root, the count cycling with it */
                for (int root = 0; root < n; root++) {
                    int v = kind == K_GATHERV || kind == K_SCATTERV;
                    c = cr_add(kind, ci, root, v ? (root % 2 ? 4 : 16) : mcounts[(root + ci) % 5]);
                    c->inplace = kind != K_BCAST && (c->seed % 2);
                    if (c->count % 2 == 0) {
                        c->svec = (c->seed / 2) % 2;
                        c->rvec = (c->seed / 4) % 2;
                    }
                }
                break;
            case K_ALLGATHER:
            case K_ALLTOALL:
                for (int m = 1; m < 5; m++) {
                    long cnt = mcounts[(m + ci) % 5];
                    if (kind == K_ALLTOALL && cnt == 1000)
                        cnt = 300; /* 1200 B blocks: above the short-block threshold */
                    c = cr_add(kind, ci, 0, cnt);
                    c->inplace = m % 2;
                    if (cnt % 2 == 0) {
                        c->svec = (c->seed / 2) % 2;
                        c->rvec = (c->seed / 4) % 2;
                    }
                }
                break;
            case K_ALLGATHERV:
            case K_ALLTOALLV:
            case K_ALLTOALLW:
                for (int m = 0; m < 2; m++) {
                    c = cr_add(kind, ci, 0, (m + ci) % 2 ? 2 : 20);
                    c->inplace = m;
                    c->svec = (c->seed / 2) % 2;
                    c->rvec = (c->seed / 4) % 2;
                }
                break;
            default: /* reductions */
                for (int p = 0; p < CR_NPAIRS; p++) {
                    int t = cr_pairs[p][0], o = cr_pairs[p][1];
                    /* each (type, op) on one communicator; every root for int SUM and
                     * the non-commutative op, which also runs on every communicator */
                    int all = o == O_MATMUL || (t == T_INT && o == O_SUM && kind == K_REDUCE);
                    int nroot = (kind == K_REDUCE && all) ? n : all ? 2 : 1;
                    if (kind == K_REDUCE_LOCAL) {
                        if (ci != 0)
                            continue;
                    } else if (!all && (p + kind) % CR_NCOMM != ci) {
                        continue;
                    } else if (!all && kind > K_ALLREDUCE && (p + kind) % 2) {
                        continue; /* keeps the run short: every pair still runs somewhere */
                    }
                    for (int rr = 0; rr < nroot; rr++) {
                        int root = kind == K_REDUCE && all ? rr : (p + ci + rr) % n;
                        long cnt = rcounts[(p + ci + kind + rr) % 5];
                        if (kind == K_REDUCE_SCATTER || kind == K_REDUCE_SCATTER_BLOCK)
                            cnt = cnt > 20 ? 20 : cnt;
                        c = cr_add(kind, ci, root, cnt);
                        c->t = t;
                        c->o = o;
                        c->inplace = kind != K_REDUCE_LOCAL && (c->seed % 2);
                    }
                }
                break;
            }
        }
        /* a few big ones on MPI_COMM_WORLD (~1 MiB) */
        cr_case *c;
        switch (kind) {
        case K_BCAST:
            cr_add(kind, 0, 0, 262144);
            c = cr_add(kind, 0, wn - 1, 262144);
            c->svec = 1;
            break;
        case K_GATHER:
            c = cr_add(kind, 0, wn / 2, 262144 / wn / 2 * 2);
            c->rvec = 1;
            c->inplace = 1;
            break;
        case K_ALLGATHER:
            cr_add(kind, 0, 0, 131072 / wn);
            break;
        case K_ALLTOALL:
            cr_add(kind, 0, 0, 65536 / wn / 2 * 2);
            break;
        case K_ALLREDUCE:
            c = cr_add(kind, 0, 0, 262144 + 17); /* just over 1 MiB */
            c->t = T_INT;
            c->o = O_SUM;
            c = cr_add(kind, 0, 0, 65536 + 3);
            c->t = T_DBL;
            c->o = O_MAX;
            c->inplace = 1;
            c = cr_add(kind, 0, 0, 4096);
            c->t = T_MAT;
            c->o = O_MATMUL;
            break;
        case K_REDUCE:
            c = cr_add(kind, 0, wn - 1, 131072);
            c->t = T_DBL;
            c->o = O_SUM;
            break;
        case K_REDUCE_SCATTER_BLOCK:
            c = cr_add(kind, 0, 0, 32768 / wn);
            c->t = T_INT;
            c->o = O_SUM;
            c->inplace = 1;
            break;
        }
    }
}

/* ---- drivers ------------------------------------------------------------------ */
static void cr_prestart(cr_case *c)
{
    if (c->kind == K_BARRIER && c->rank == c->root) {
        mtest_sleep_ms(10);
        c->t_late = cr_now();
    }
}

/* Completes the requests of cases b[0..m-1]: method 0 MPI_Waitall, 1 an MPI_Test loop,
 * 2 an MPI_Testall loop (nb) or MPI_Wait in reverse order (persist). */
static void cr_complete(cr_case *b, int m, int method)
{
    MPI_Request reqs[CR_BATCH];
    int done[CR_BATCH], left = m, flag;

    for (int i = 0; i < m; i++) {
        reqs[i] = b[i].req;
        done[i] = 0;
    }
    if (method == 0) {
        mtest_check_rc("MPI_Waitall", MPI_Waitall(m, reqs, MPI_STATUSES_IGNORE));
        for (int i = 0; i < m; i++)
            b[i].t_done = cr_now();
    } else if (method == 1) {
        while (left > 0) {
            for (int i = 0; i < m; i++) {
                if (done[i])
                    continue;
                if (!mtest_check_rc("MPI_Test", MPI_Test(&reqs[i], &flag, MPI_STATUS_IGNORE)))
                    flag = 1;
                if (flag) {
                    b[i].t_done = cr_now();
                    done[i] = 1;
                    left--;
                }
            }
        }
    } else if (cr_mode == CR_PERSIST) {
        /* MPICH 4.0.2's MPI_Testall reports MPI_ERR_PENDING on persistent collective
         * requests: MPI_Wait in reverse order instead */
        for (int i = m - 1; i >= 0; i--) {
            mtest_check_rc("MPI_Wait", MPI_Wait(&reqs[i], MPI_STATUS_IGNORE));
            b[i].t_done = cr_now();
        }
    } else {
        flag = 0;
        while (!flag)
            if (!mtest_check_rc("MPI_Testall", MPI_Testall(m, reqs, &flag, MPI_STATUSES_IGNORE)))
                break;
        for (int i = 0; i < m; i++)
            b[i].t_done = cr_now();
    }
    /* persistent requests stay allocated: keep the handles */
    for (int i = 0; i < m; i++)
        if (cr_mode != CR_PERSIST)
            b[i].req = MPI_REQUEST_NULL;
}

static void cr_run(void)
{
    int nb = 0;

    for (int i = 0; i < cr_ncases; i++)
        cr_setup(&cr_cases[i]);
    if (cr_mode == CR_BLOCKING) {
        double tk[K_NKINDS] = {0};
        int nk[K_NKINDS] = {0};
        for (int i = 0; i < cr_ncases; i++) {
            cr_case *c = &cr_cases[i];
            double t0 = cr_now();
            cr_fill(c, 0);
            cr_prestart(c);
            cr_issue(c);
            c->t_done = cr_now();
            cr_verify(c, 0);
            tk[c->kind] += cr_now() - t0;
            nk[c->kind]++;
        }
        if (getenv("CR_VERBOSE") && mtest_wrank == 0)
            for (int k = 0; k < K_NKINDS; k++)
                fprintf(stderr, "%-22s %4d cases %.3f s\n", cr_kname[k], nk[k], tk[k]);
        return;
    }
    for (int first = 0, m; first < cr_ncases; first += m, nb++) {
        cr_case *b = &cr_cases[first];
        /* A batch holds cases of one communicator only: the case lists of the
         * ranks differ where a split communicator has other sizes on other
         * ranks, and a batch that mixed communicators would then group
         * different operations on different ranks (a persistent batch is
         * restarted before the next one begins: that would deadlock in any MPI). */
        for (m = 1; m < CR_BATCH && first + m < cr_ncases && b[m].ci == b[0].ci; m++)
            ;
        if (cr_mode == CR_NB) {
            for (int i = 0; i < m; i++) {
                cr_fill(&b[i], 0);
                cr_prestart(&b[i]);
                cr_issue(&b[i]);
            }
            cr_complete(b, m, nb % 3);
            for (int i = 0; i < m; i++)
                cr_verify(&b[i], 0);
            continue;
        }
        /* persistent: reduce_local has no persistent form and runs at each start
         * on the buffers filled for it, not here on unfilled ones */
        for (int i = 0; i < m; i++) {
            if (b[i].kind == K_REDUCE_LOCAL)
                b[i].req = MPI_REQUEST_NULL;
            else
                cr_issue(&b[i]);
        }
        for (int it = 0; it < cr_starts; it++) {
            MPI_Request reqs[CR_BATCH];
            int k = 0;
            for (int i = 0; i < m; i++)
                cr_fill(&b[i], it);
            if ((it + nb) % 2 == 0) {
                for (int i = 0; i < m; i++) {
                    cr_prestart(&b[i]);
                    if (b[i].req != MPI_REQUEST_NULL)
                        mtest_check_rc("MPI_Start", MPI_Start(&b[i].req));
                    else if (b[i].kind == K_REDUCE_LOCAL)
                        cr_issue(&b[i]); /* no persistent form: run it again */
                }
            } else {
                for (int i = 0; i < m; i++) {
                    cr_prestart(&b[i]);
                    if (b[i].req != MPI_REQUEST_NULL)
                        reqs[k++] = b[i].req;
                    else if (b[i].kind == K_REDUCE_LOCAL)
                        cr_issue(&b[i]);
                }
                if (k > 0)
                    mtest_check_rc("MPI_Startall", MPI_Startall(k, reqs));
            }
            cr_complete(b, m, (nb + it) % 3);
            for (int i = 0; i < m; i++)
                cr_verify(&b[i], it);
        }
        for (int i = 0; i < m; i++)
            if (b[i].req != MPI_REQUEST_NULL)
                mtest_check_rc("MPI_Request_free", MPI_Request_free(&b[i].req));
    }
}

static int cr_main(int argc, char **argv, int mode)
{
    const char *env;
    int wrank, wsize;

    mtest_init(&argc, &argv);
    cr_mode = mode;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-nb") == 0)
            cr_mode = CR_NB;
        else if (strcmp(argv[i], "-persist") == 0)
            cr_mode = CR_PERSIST;
        else if (strcmp(argv[i], "-blocking") == 0)
            cr_mode = CR_BLOCKING;
    }
    cr_trace = getenv("CR_TRACE") != NULL;
    if (getenv("CR_STARTS"))
        cr_starts = atoi(getenv("CR_STARTS"));
    env = getenv("CR_MODE");
    if (env && *env)
        cr_mode = strcmp(env, "nb") == 0        ? CR_NB
                  : strcmp(env, "persist") == 0 ? CR_PERSIST
                                                : CR_BLOCKING;
    {
        static const char *vars[] = {
            "DCFA_COLL_BARRIER",   "DCFA_COLL_BCAST",          "DCFA_COLL_REDUCE",
            "DCFA_COLL_ALLREDUCE", "DCFA_COLL_GATHER",         "DCFA_COLL_ALLGATHER",
            "DCFA_COLL_ALLTOALL",  "DCFA_COLL_REDUCE_SCATTER", "DCFA_COLL_SCAN"};
        size_t len = 0;
        for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
            const char *v = getenv(vars[i]);
            if (v && len < sizeof(cr_envdesc) - 1)
                len += snprintf(cr_envdesc + len, sizeof(cr_envdesc) - len, "%s%s=%s",
                                len ? " " : "", vars[i], v);
        }
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Type_vector(2, 1, 2, MPI_INT, &cr_tvec);
    MPI_Type_commit(&cr_tvec);
    MPI_Type_contiguous(4, MPI_INT, &cr_tmat);
    MPI_Type_commit(&cr_tmat);
    MPI_Op_create(cr_user_mulmod, 1, &cr_op_mulmod);
    MPI_Op_create(cr_user_matmul, 0, &cr_op_matmul);
    cr_comm[0] = MPI_COMM_WORLD;
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &cr_comm[1]);
    MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - wrank, &cr_comm[2]);

    cr_build();
    cr_run();
    for (int i = 0; i < cr_ncases; i++)
        cr_teardown(&cr_cases[i]);
    free(cr_cases);

    MPI_Comm_free(&cr_comm[1]);
    MPI_Comm_free(&cr_comm[2]);
    MPI_Op_free(&cr_op_mulmod);
    MPI_Op_free(&cr_op_matmul);
    MPI_Type_free(&cr_tvec);
    MPI_Type_free(&cr_tmat);
    return mtest_finalize();
}

#endif /* COLL_REF_H */
