/* The node segment's one-cache-line path (node_shm.c: up to 48 bytes travel in the arrival
 * line itself, on the bcast flag's line or in a rank's packet) and its neighbours: every size
 * from 1 to 64 bytes and 1024/1025 (the slots, one phase up to DCFA_COLL_SHM_FLAT), checked
 * against a loop over the ranks' values computed here.
 *   allreduce / reduce (every root; also MPI_IN_PLACE): SUM, PROD, MAX, MIN, BXOR on MPI_CHAR
 *     (sums that wrap), MPI_INT, MPI_FLOAT (exact small integers), MPI_DOUBLE and MPI_INT64_T,
 *     and a non-commutative user operation (composition of affine maps x -> a x + b on pairs
 *     of unsigned ints, in rank order);
 *   bcast (every root), allgather and alltoall (a block of 1..64 bytes: alltoall's n blocks
 *     cross 48 bytes at other block sizes than allgather's).
 * The operations alternate between the two sets of the segment and between the line and the
 * slots, each call a different size than the one before. */
#include "mtest.h"

#include <stdint.h>
#include <string.h>

enum { T_CHAR, T_INT, T_FLOAT, T_DOUBLE, T_I64, T_NT };
static MPI_Datatype ty(int t)
{
    static const MPI_Datatype d[T_NT] = {MPI_CHAR, MPI_INT, MPI_FLOAT, MPI_DOUBLE, MPI_INT64_T};
    return d[t];
}
static const size_t tsz[T_NT] = {1, sizeof(int), sizeof(float), sizeof(double), 8};
static const char *const tname[T_NT] = {"char", "int", "float", "double", "int64"};

enum { O_SUM, O_PROD, O_MAX, O_MIN, O_BXOR, O_NOP };
static const char *const oname[O_NOP] = {"SUM", "PROD", "MAX", "MIN", "BXOR"};

/* rank r's element i for op o: PROD small (1..2) so products stay exact, else spread */
static long long val(int o, int r, int i)
{
    if (o == O_PROD)
        return 1 + (r + i) % 2;
    return (long long)((r * 37 + i * 11) % 120) - (o == O_BXOR ? 0 : 30) + (o == O_SUM ? 60 : 0);
}

static void put(int t, void *buf, int i, long long v)
{
    switch (t) {
    case T_CHAR:
        ((char *)buf)[i] = (char)(signed char)(unsigned char)v;
        break;
    case T_INT:
        ((int *)buf)[i] = (int)v;
        break;
    case T_FLOAT:
        ((float *)buf)[i] = (float)v;
        break;
    case T_DOUBLE:
        ((double *)buf)[i] = (double)v;
        break;
    default:
        ((int64_t *)buf)[i] = v;
    }
}

/* the expected element: the loop over ranks in rank order, wrapping like the type */
static long long expect(int t, int o, int n, int i)
{
    long long r = val(o, 0, i);
    for (int k = 1; k < n; k++) {
        long long v = val(o, k, i);
        if (o == O_SUM)
            r += v;
        else if (o == O_PROD)
            r *= v;
        else if (o == O_MAX)
            r = v > r ? v : r;
        else if (o == O_MIN)
            r = v < r ? v : r;
        else
            r ^= v;
    }
    if (t == T_CHAR) /* MPI_CHAR sums wrap as signed char */
        r = (signed char)(unsigned char)r;
    return r;
}

static int same(int t, const void *buf, int i, long long want)
{
    switch (t) {
    case T_CHAR:
        return ((const signed char *)buf)[i] == (signed char)want;
    case T_INT:
        return ((const int *)buf)[i] == (int)want;
    case T_FLOAT:
        return ((const float *)buf)[i] == (float)want;
    case T_DOUBLE:
        return ((const double *)buf)[i] == (double)want;
    default:
        return ((const int64_t *)buf)[i] == want;
    }
}

/* x -> a x + b as (a, b), one element of a pair type (an operation may see any run of whole
 * elements); in o inout = in(inout(x)): the earlier rank's map applied last */
static void affine(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const unsigned *f = in;
    unsigned *g = inout;
    for (int k = 0; k < *len; k++) {
        unsigned a = f[2 * k] * g[2 * k], b = f[2 * k] * g[2 * k + 1] + f[2 * k + 1];
        g[2 * k] = a;
        g[2 * k + 1] = b;
    }
}

static void affine_val(int r, int k, unsigned *a, unsigned *b)
{
    *a = 2u + (unsigned)(r * 3 + k) % 5u;
    *b = 1u + (unsigned)(r * 7 + k * 5) % 11u;
}

static int sizes[] = {1,  2,  3,  4,  5,  7,  8,  12, 15, 16, 17, 24,   31,   32, 33,
                      40, 44, 47, 48, 49, 52, 56, 57, 63, 64, 8,  1024, 1025, 48, 4};
#define NSIZES (int)(sizeof sizes / sizeof sizes[0])

int main(int argc, char **argv)
{
    int rank, n;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    static const MPI_Op ops[O_NOP] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_BXOR};
    char *in = mtest_malloc(2048), *out = mtest_malloc(2048), *blk = mtest_malloc(64 * 64 * 2);
    char *all = mtest_malloc(64 * 64 * 2);
    MPI_Op aff;
    MPI_Op_create(affine, 0, &aff);
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_UNSIGNED, &pair);
    MPI_Type_commit(&pair);

    for (int si = 0; si < NSIZES; si++) {
        int bytes = sizes[si];
        /* reductions: every type whose element divides the size */
        for (int t = 0; t < T_NT; t++) {
            if (bytes % (int)tsz[t])
                continue;
            int cnt = bytes / (int)tsz[t];
            for (int o = 0; o < O_NOP; o++) {
                if (o == O_BXOR && (t == T_FLOAT || t == T_DOUBLE))
                    continue;
                for (int i = 0; i < cnt; i++)
                    put(t, in, i, val(o, rank, i));
                memset(out, 0x5a, (size_t)bytes);
                mtest_check_rc("MPI_Allreduce",
                               MPI_Allreduce(in, out, cnt, ty(t), ops[o], MPI_COMM_WORLD));
                for (int i = 0; i < cnt; i++)
                    if (!mtest_check(same(t, out, i, expect(t, o, n, i)),
                                     "Allreduce %s %s %d B [%d]: wrong", tname[t], oname[o], bytes,
                                     i))
                        break;
                int root = (si + o) % n;
                memset(out, 0x5a, (size_t)bytes);
                if (rank == root)
                    memcpy(out, in, (size_t)bytes);
                mtest_check_rc("MPI_Reduce", MPI_Reduce(rank == root ? MPI_IN_PLACE : in, out, cnt,
                                                        ty(t), ops[o], root, MPI_COMM_WORLD));
                for (int i = 0; rank == root && i < cnt; i++)
                    if (!mtest_check(same(t, out, i, expect(t, o, n, i)),
                                     "Reduce (in place) %s %s %d B root %d [%d]: wrong", tname[t],
                                     oname[o], bytes, root, i))
                        break;
            }
        }
        /* the non-commutative user operation, pairs of unsigned ints; every root for reduce */
        if (bytes % 8 == 0) {
            int pairs = bytes / 8;
            unsigned *u = (unsigned *)in, *w = (unsigned *)out;
            for (int k = 0; k < pairs; k++)
                affine_val(rank, k, &u[2 * k], &u[2 * k + 1]);
            for (int root = -1; root < n; root++) {
                memset(out, 0x5a, (size_t)bytes);
                int rc = root < 0 ? MPI_Allreduce(in, out, pairs, pair, aff, MPI_COMM_WORLD)
                                  : MPI_Reduce(in, out, pairs, pair, aff, root, MPI_COMM_WORLD);
                mtest_check_rc("affine", rc);
                if (root >= 0 && rank != root)
                    continue;
                for (int k = 0; k < pairs; k++) {
                    unsigned a, b;
                    affine_val(n - 1, k, &a, &b);
                    for (int r = n - 2; r >= 0; r--) {
                        unsigned fa, fb;
                        affine_val(r, k, &fa, &fb);
                        b = fa * b + fb;
                        a = fa * a;
                    }
                    if (!mtest_check(w[2 * k] == a && w[2 * k + 1] == b,
                                     "affine %d B root %d pair %d: (%u,%u), expected (%u,%u)",
                                     bytes, root, k, w[2 * k], w[2 * k + 1], a, b))
                        break;
                }
            }
        }
        /* bcast from every root */
        for (int root = 0; root < n; root++) {
            for (int i = 0; i < bytes; i++)
                out[i] = rank == root ? (char)(root * 31 + i * 7 + bytes) : 0;
            mtest_check_rc("MPI_Bcast", MPI_Bcast(out, bytes, MPI_CHAR, root, MPI_COMM_WORLD));
            for (int i = 0; i < bytes; i++)
                if (!mtest_check(out[i] == (char)(root * 31 + i * 7 + bytes),
                                 "Bcast %d B root %d [%d]: wrong", bytes, root, i))
                    break;
        }
        if (bytes > 64)
            continue;
        /* allgather: my block; alltoall: block j for rank j */
        for (int i = 0; i < bytes; i++)
            blk[i] = (char)(rank * 13 + i);
        memset(all, 0x5a, (size_t)(unsigned)bytes * (unsigned)n);
        mtest_check_rc("MPI_Allgather",
                       MPI_Allgather(blk, bytes, MPI_CHAR, all, bytes, MPI_CHAR, MPI_COMM_WORLD));
        for (int j = 0; j < n * bytes; j++)
            if (!mtest_check(all[j] == (char)((j / bytes) * 13 + j % bytes),
                             "Allgather %d B [%d]: wrong", bytes, j))
                break;
        for (int j = 0; j < n * bytes; j++)
            blk[j] = (char)(rank * 29 + (j / bytes) * 5 + j % bytes);
        memset(all, 0x5a, (size_t)(unsigned)bytes * (unsigned)n);
        mtest_check_rc("MPI_Alltoall",
                       MPI_Alltoall(blk, bytes, MPI_CHAR, all, bytes, MPI_CHAR, MPI_COMM_WORLD));
        for (int j = 0; j < n * bytes; j++)
            if (!mtest_check(all[j] == (char)((j / bytes) * 29 + rank * 5 + j % bytes),
                             "Alltoall %d B [%d]: wrong", bytes, j))
                break;
    }
    MPI_Op_free(&aff);
    MPI_Type_free(&pair);
    free(in);
    free(out);
    free(blk);
    free(all);
    return mtest_finalize();
}
