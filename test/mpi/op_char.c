/* The character types in the integer operations, an extension MPICH and Open MPI both have
 * (docs/datatypes.md): MPI_CHAR and MPI_CHARACTER take MAX, MIN, SUM, PROD, the logical and
 * the bitwise operations, combined as signed char, in every reduction (blocking, nonblocking,
 * short vectors through the node segment, long ones through messages, scan, reduce_local) and
 * in MPI_Accumulate, MPI_Fetch_and_op and MPI_Compare_and_swap. Each result is compared with
 * a plain loop over what every rank contributed (MPI_SIGNED_CHAR and MPI_UNSIGNED_CHAR, which
 * MPI defines, are checked the same way beside them). Types neither peer takes keep a clear
 * error naming the operation and the type: MPI_WCHAR and MPI_BYTE arithmetic in reductions
 * (MPI_ERR_OP), MPI_WCHAR in compare-and-swap (MPI_ERR_TYPE) and fetch-and-op (MPI_ERR_OP). */
#include "mtest.h"

#define NSHORT 13
#define NLONG  40000 /* beyond one node-segment slot: the message algorithms */

static const struct {
    MPI_Op op;
    const char *name;
} ops[] = {{MPI_MAX, "MPI_MAX"},   {MPI_MIN, "MPI_MIN"},   {MPI_SUM, "MPI_SUM"},
           {MPI_PROD, "MPI_PROD"}, {MPI_LAND, "MPI_LAND"}, {MPI_BAND, "MPI_BAND"},
           {MPI_LOR, "MPI_LOR"},   {MPI_BOR, "MPI_BOR"},   {MPI_LXOR, "MPI_LXOR"},
           {MPI_BXOR, "MPI_BXOR"}};
#define NOPS ((int)(sizeof ops / sizeof ops[0]))

static const struct {
    MPI_Datatype dt;
    const char *name;
    int is_signed;
} types[] = {{MPI_CHAR, "MPI_CHAR", 1},
             {MPI_CHARACTER, "MPI_CHARACTER", 1},
             {MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", 1},
             {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", 0}};
#define NTYPES ((int)(sizeof types / sizeof types[0]))

/* rank r's element i: negative, positive and zero values, every rank different */
static unsigned char value(int r, size_t i)
{
    if ((i + (size_t)r) % 7 == 3)
        return 0;
    return (unsigned char)(r * 37 + (int)i * 11 - 60);
}

/* one step of the plain loop: acc = acc op v, the values read as the type reads them */
static unsigned char fold(int o, int sgn, unsigned char acc, unsigned char v)
{
    int a = sgn ? (signed char)acc : acc, b = sgn ? (signed char)v : v;
    MPI_Op op = ops[o].op;
    if (op == MPI_MAX)
        return (unsigned char)(a > b ? a : b);
    if (op == MPI_MIN)
        return (unsigned char)(a < b ? a : b);
    if (op == MPI_SUM)
        return (unsigned char)(acc + v);
    if (op == MPI_PROD)
        return (unsigned char)(acc * v);
    if (op == MPI_LAND)
        return (unsigned char)(acc && v);
    if (op == MPI_LOR)
        return (unsigned char)(acc || v);
    if (op == MPI_LXOR)
        return (unsigned char)(!acc != !v);
    if (op == MPI_BAND)
        return acc & v;
    if (op == MPI_BOR)
        return acc | v;
    return acc ^ v;
}

/* element i folded over ranks lo..hi (in rank order) */
static unsigned char expect(int o, int sgn, int lo, int hi, size_t i)
{
    unsigned char acc = value(lo, i);
    for (int r = lo + 1; r <= hi; r++)
        acc = fold(o, sgn, acc, value(r, i));
    return acc;
}

static void check_vec(const char *what, int t, int o, const unsigned char *got, size_t n,
                      size_t first, int lo, int hi)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char want = expect(o, types[t].is_signed, lo, hi, first + i);
        if (got[i] != want) {
            mtest_fail("%s %s %s: element %zu is %d, the loop gives %d", what, types[t].name,
                       ops[o].name, first + i, got[i], want);
            return;
        }
    }
}

static void reductions(int rank, int size)
{
    unsigned char *in = mtest_malloc(NLONG), *out = mtest_malloc(NLONG);
    int *counts = mtest_malloc((size_t)size * sizeof *counts);
    for (int t = 0; t < NTYPES; t++) {
        MPI_Datatype dt = types[t].dt;
        for (int o = 0; o < NOPS; o++) {
            for (size_t i = 0; i < NLONG; i++)
                in[i] = value(rank, i);
            for (int pass = 0; pass < 2; pass++) {
                int n = pass ? NLONG : NSHORT;
                MPI_Request req;
                memset(out, 0x55, (size_t)n);
                mtest_check_rc("MPI_Allreduce",
                               MPI_Allreduce(in, out, n, dt, ops[o].op, MPI_COMM_WORLD));
                check_vec("MPI_Allreduce", t, o, out, (size_t)n, 0, 0, size - 1);
                memset(out, 0x55, (size_t)n);
                mtest_check_rc("MPI_Iallreduce",
                               MPI_Iallreduce(in, out, n, dt, ops[o].op, MPI_COMM_WORLD, &req));
                MPI_Wait(&req, MPI_STATUS_IGNORE);
                check_vec("MPI_Iallreduce", t, o, out, (size_t)n, 0, 0, size - 1);
                memset(out, 0x55, (size_t)n);
                mtest_check_rc("MPI_Reduce",
                               MPI_Reduce(in, out, n, dt, ops[o].op, size - 1, MPI_COMM_WORLD));
                if (rank == size - 1)
                    check_vec("MPI_Reduce", t, o, out, (size_t)n, 0, 0, size - 1);
                memset(out, 0x55, (size_t)n);
                mtest_check_rc("MPI_Ireduce",
                               MPI_Ireduce(in, out, n, dt, ops[o].op, 0, MPI_COMM_WORLD, &req));
                MPI_Wait(&req, MPI_STATUS_IGNORE);
                if (rank == 0)
                    check_vec("MPI_Ireduce", t, o, out, (size_t)n, 0, 0, size - 1);
            }
            /* reduce_scatter: rank r gets r + 1 elements, after the earlier ranks' */
            size_t first = 0;
            for (int r = 0; r < size; r++) {
                counts[r] = r + 1;
                if (r < rank)
                    first += (size_t)r + 1;
            }
            MPI_Request req;
            mtest_check_rc("MPI_Reduce_scatter",
                           MPI_Reduce_scatter(in, out, counts, dt, ops[o].op, MPI_COMM_WORLD));
            check_vec("MPI_Reduce_scatter", t, o, out, (size_t)rank + 1, first, 0, size - 1);
            mtest_check_rc(
                "MPI_Ireduce_scatter",
                MPI_Ireduce_scatter(in, out, counts, dt, ops[o].op, MPI_COMM_WORLD, &req));
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            check_vec("MPI_Ireduce_scatter", t, o, out, (size_t)rank + 1, first, 0, size - 1);
            mtest_check_rc("MPI_Reduce_scatter_block",
                           MPI_Reduce_scatter_block(in, out, 3, dt, ops[o].op, MPI_COMM_WORLD));
            check_vec("MPI_Reduce_scatter_block", t, o, out, 3, 3 * (size_t)rank, 0, size - 1);
            mtest_check_rc("MPI_Scan", MPI_Scan(in, out, NSHORT, dt, ops[o].op, MPI_COMM_WORLD));
            check_vec("MPI_Scan", t, o, out, NSHORT, 0, 0, rank);
            /* reduce_local: in (rank 1's values) op inout (rank 0's) */
            for (size_t i = 0; i < NSHORT; i++)
                in[i] = value(1, i), out[i] = value(0, i);
            mtest_check_rc("MPI_Reduce_local", MPI_Reduce_local(in, out, NSHORT, dt, ops[o].op));
            check_vec("MPI_Reduce_local", t, o, out, NSHORT, 0, 0, 1);
        }
    }
    free(counts);
    free(out);
    free(in);
}

/* rank 0's window: element 0 takes every rank's fetch_and_op, element 1 + o every rank's
 * accumulate of op o, element 1 + NOPS + o every rank's get_accumulate, the last one the
 * compare-and-swap race */
static void rma(int rank, int size)
{
    enum { FOP = 0, ACC = 1, GACC = 1 + NOPS, CAS = 1 + 2 * NOPS, WINLEN };
    for (int t = 0; t < NTYPES; t++) {
        MPI_Datatype dt = types[t].dt;
        int sgn = types[t].is_signed;
        unsigned char *base;
        MPI_Win win;
        MPI_Win_allocate(WINLEN, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
        memset(base, 0, WINLEN);
        for (int o = 0; o < NOPS; o++) {
            base[ACC + o] = value(size, (size_t)o); /* the "rank" before the first */
            base[GACC + o] = value(size, (size_t)o);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_lock_all(0, win);
        unsigned char mine = value(rank, 5), got = 0, cmp = 0, res = 0xff;
        unsigned char newv = (unsigned char)(rank + 1);
        mtest_check_rc("MPI_Fetch_and_op", MPI_Fetch_and_op(&mine, &got, dt, 0, FOP, MPI_SUM, win));
        /* origin and result buffers live until the epoch ends */
        unsigned char v[NOPS], old[NOPS];
        for (int o = 0; o < NOPS; o++) {
            v[o] = value(rank, (size_t)o);
            mtest_check_rc("MPI_Accumulate",
                           MPI_Accumulate(&v[o], 1, dt, 0, ACC + o, 1, dt, ops[o].op, win));
            mtest_check_rc("MPI_Get_accumulate",
                           MPI_Get_accumulate(&v[o], 1, dt, &old[o], 1, dt, 0, GACC + o, 1, dt,
                                              ops[o].op, win));
        }
        mtest_check_rc("MPI_Compare_and_swap",
                       MPI_Compare_and_swap(&newv, &cmp, &res, dt, 0, CAS, win));
        MPI_Win_unlock_all(win);
        MPI_Barrier(MPI_COMM_WORLD);
        /* who won the race: exactly one rank found 0 */
        int won = res == 0, winners = 0;
        MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        mtest_check(winners == 1, "%s compare-and-swap: %d ranks found 0", types[t].name, winners);
        if (rank == 0) {
            unsigned char sum = 0;
            for (int r = 0; r < size; r++)
                sum = (unsigned char)(sum + value(r, 5));
            mtest_check(base[FOP] == sum, "%s fetch_and_op MPI_SUM: %d, the loop gives %d",
                        types[t].name, base[FOP], sum);
            mtest_check(base[CAS] >= 1 && base[CAS] <= size, "%s compare-and-swap: %d",
                        types[t].name, base[CAS]);
            /* accumulates arrive in any order: check the commutative result of all of them */
            for (int o = 0; o < NOPS; o++) {
                unsigned char want = value(size, (size_t)o);
                for (int r = 0; r < size; r++)
                    want = fold(o, sgn, want, value(r, (size_t)o));
                mtest_check(base[ACC + o] == want, "%s accumulate %s: %d, the loop gives %d",
                            types[t].name, ops[o].name, base[ACC + o], want);
                mtest_check(base[GACC + o] == want, "%s get_accumulate %s: %d, the loop gives %d",
                            types[t].name, ops[o].name, base[GACC + o], want);
            }
        }
        MPI_Win_free(&win);
    }
}

/* rc must be of class cls, with a message naming w1 (and w2 unless NULL) */
static void check_err(const char *what, int rc, int cls, const char *w1, const char *w2)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (!mtest_check_class(what, rc, cls) || rc == MPI_SUCCESS)
        return;
    MPI_Error_string(rc, msg, &len);
    mtest_check(strstr(msg, w1) && (!w2 || strstr(msg, w2)),
                "%s: message '%s' does not name %s%s%s", what, msg, w1, w2 ? " and " : "",
                w2 ? w2 : "");
}

static void refused(int rank)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int in[4] = {1, 2, 3, 4}, out[4];
    check_err("MPI_Allreduce MPI_WCHAR MPI_SUM",
              MPI_Allreduce(in, out, 4, MPI_WCHAR, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP, "MPI_SUM",
              "MPI_WCHAR");
    check_err("MPI_Reduce MPI_WCHAR MPI_BAND",
              MPI_Reduce(in, out, 4, MPI_WCHAR, MPI_BAND, 0, MPI_COMM_WORLD), MPI_ERR_OP,
              "MPI_BAND", "MPI_WCHAR");
    check_err("MPI_Allreduce MPI_BYTE MPI_MAX",
              MPI_Allreduce(in, out, 4, MPI_BYTE, MPI_MAX, MPI_COMM_WORLD), MPI_ERR_OP, "MPI_MAX",
              "MPI_BYTE");
    check_err("MPI_Reduce_local MPI_WCHAR MPI_PROD",
              MPI_Reduce_local(in, out, 4, MPI_WCHAR, MPI_PROD), MPI_ERR_OP, "MPI_PROD",
              "MPI_WCHAR");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    int *base;
    MPI_Win win;
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Win_lock_all(0, win);
    int v = 1, c = 0, r;
    float f = 1;
    check_err("MPI_Compare_and_swap MPI_WCHAR",
              MPI_Compare_and_swap(&v, &c, &r, MPI_WCHAR, 0, 0, win), MPI_ERR_TYPE, "MPI_WCHAR",
              NULL);
    check_err("MPI_Fetch_and_op MPI_WCHAR MPI_SUM",
              MPI_Fetch_and_op(&v, &r, MPI_WCHAR, 0, 0, MPI_SUM, win), MPI_ERR_OP, "MPI_SUM",
              "MPI_WCHAR");
    check_err("MPI_Accumulate MPI_FLOAT MPI_BAND",
              MPI_Accumulate(&f, 1, MPI_FLOAT, 0, 1, 1, MPI_FLOAT, MPI_BAND, win), MPI_ERR_OP,
              "MPI_BAND", "MPI_FLOAT");
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    (void)rank;
}

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    reductions(rank, size);
    rma(rank, size);
    refused(rank);
    return mtest_finalize();
}
