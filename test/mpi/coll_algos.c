/* Algorithm-level check of the collectives: every call's result is compared
 * with what it must be, computed locally. testlist.txt runs it once with the
 * automatic choice and once per algorithm forced through DCFA_COLL_*, at
 * several sizes; each run covers MPI_COMM_WORLD and split communicators of
 * sizes n - 1, n - 2 and n / 2 (reversed rank order), so sizes 1 .. 8 and
 * non-identity rank maps come up.
 *
 * Covered: Bcast (every root), Gather and Scatter (every root, MPI_IN_PLACE
 * at the root), Allgather, Alltoall (both with MPI_IN_PLACE), Reduce_scatter
 * (uneven counts with zeros) and Reduce_scatter_block, Scan, Exscan and
 * Reduce with MPI_SUM and with a non-commutative user operation, all with
 * MPI_IN_PLACE variants and counts of 0 and counts not divisible by the size.
 * Buffers are described in "units" of two ints: either 2u MPI_INT or u of a
 * strided vector type (two ints with a hole between them), mixed between
 * sender and receiver; the holes must stay untouched. */
#include "mtest.h"

#define SENT -999999 /* what the holes and unwritten places hold */

static MPI_Datatype vec; /* two ints, stride 2: extent 3 ints, a hole in the middle */

/* a buffer of u units as kind 0 (MPI_INT) or 1 (vec): ints it spans, count, type */
static int tb_len(int kind, int u) { return kind ? 3 * u : 2 * u; }
static int tb_count(int kind, int u) { return kind ? u : 2 * u; }
static MPI_Datatype tb_type(int kind) { return kind ? vec : MPI_INT; }
/* where logical int l of the buffer lives */
static int tb_pos(int kind, int l) { return kind ? 3 * (l / 2) + 2 * (l % 2) : l; }

static int *tb_alloc(int kind, int u)
{
    int len = tb_len(kind, u) + 4, *p = mtest_malloc(sizeof(int) * (size_t)len);
    for (int i = 0; i < len; i++)
        p[i] = SENT;
    return p;
}

/* a value that names its origin: source rank, block, index */
static int val(int src, int blk, int l) { return src * 1000000 + blk * 10000 + l; }

/* check block blk (of u units) of buffer b: logical l == val(src, vblk, l) */
static int tb_check(const char *what, const int *b, int kind, int u, int blk, int src, int vblk)
{
    for (int l = 0; l < 2 * u; l++) {
        int got = b[tb_pos(kind, 2 * u * blk + l)], want = val(src, vblk, l);
        if (got != want) {
            mtest_fail("%s: block %d int %d (u %d kind %d) is %d, expected %d", what, blk, l, u,
                       kind, got, want);
            return 0;
        }
    }
    return 1;
}

static void tb_set(int *b, int kind, int u, int blk, int src, int vblk)
{
    for (int l = 0; l < 2 * u; l++)
        b[tb_pos(kind, 2 * u * blk + l)] = val(src, vblk, l);
}

/* holes and the tail must still hold SENT */
static void tb_check_holes(const char *what, const int *b, int kind, int u)
{
    int len = tb_len(kind, u) + 4;
    for (int i = 0; i < len; i++) {
        int hole = i >= tb_len(kind, u) || (kind && i % 3 == 1);
        if (hole && b[i] != SENT) {
            mtest_fail("%s: hole %d overwritten (%d)", what, i, b[i]);
            return;
        }
    }
}

static const int units[] = {0, 1, 3, 20};
#define NUNITS (int)(sizeof units / sizeof units[0])

static void t_bcast(MPI_Comm comm, int rank, int n)
{
    static const int bu[] = {0, 1, 2, 7, 50, 501};
    char what[64];
    for (int root = 0; root < n; root++)
        for (int ui = 0; ui < 6; ui++)
            for (int v = 0; v < 4; v++) {
                int u = bu[ui], kind = rank == root ? v & 1 : v >> 1;
                if (u == 501 && v != 0 && v != 3)
                    continue;
                int *b = tb_alloc(kind, u);
                if (rank == root)
                    tb_set(b, kind, u, 0, root, 7);
                MPI_Bcast(b, tb_count(kind, u), tb_type(kind), root, comm);
                snprintf(what, sizeof what, "Bcast root %d u %d v %d", root, u, v);
                tb_check(what, b, kind, u, 0, root, 7);
                tb_check_holes(what, b, kind, u);
                free(b);
            }
}

static void t_gather_scatter(MPI_Comm comm, int rank, int n)
{
    char what[64];
    for (int root = 0; root < n; root++)
        for (int ui = 0; ui < NUNITS; ui++)
            for (int v = 0; v < 3; v++) {
                /* v 0: int / int; 1: vec / int; 2: int / vec, in place at the root */
                int u = units[ui], sk = v == 1, rk = v == 2, inplace = v == 2 && rank == root;
                int *sb = tb_alloc(sk, u), *rb = tb_alloc(rk, n * u);
                /* gather */
                tb_set(sb, sk, u, 0, rank, root);
                if (inplace)
                    tb_set(rb, rk, u, root, root, root);
                MPI_Gather(inplace ? MPI_IN_PLACE : sb, tb_count(sk, u), tb_type(sk), rb,
                           tb_count(rk, u), tb_type(rk), root, comm);
                snprintf(what, sizeof what, "Gather root %d u %d v %d", root, u, v);
                if (rank == root) {
                    for (int i = 0; i < n; i++)
                        if (!tb_check(what, rb, rk, u, i, i, root))
                            break;
                    tb_check_holes(what, rb, rk, n * u);
                }
                free(sb);
                free(rb);
                /* scatter: the same shapes the other way round */
                int *big = tb_alloc(rk, n * u), *mine = tb_alloc(sk, u);
                if (rank == root)
                    for (int i = 0; i < n; i++)
                        tb_set(big, rk, u, i, root, i);
                MPI_Scatter(big, tb_count(rk, u), tb_type(rk), inplace ? MPI_IN_PLACE : mine,
                            tb_count(sk, u), tb_type(sk), root, comm);
                snprintf(what, sizeof what, "Scatter root %d u %d v %d", root, u, v);
                if (inplace) {
                    for (int i = 0; i < n; i++)
                        if (!tb_check(what, big, rk, u, i, root, i))
                            break;
                } else {
                    tb_check(what, mine, sk, u, 0, root, rank);
                    tb_check_holes(what, mine, sk, u);
                }
                free(big);
                free(mine);
            }
}

static void t_allgather(MPI_Comm comm, int rank, int n)
{
    char what[64];
    for (int ui = 0; ui < NUNITS; ui++)
        for (int v = 0; v < 4; v++) {
            /* v 0: int / int; 1: vec / int; 2: int / vec; 3: in place, vec */
            int u = units[ui], sk = v == 1, rk = v >= 2, inplace = v == 3;
            int *sb = tb_alloc(sk, u), *rb = tb_alloc(rk, n * u);
            tb_set(sb, sk, u, 0, rank, 3);
            if (inplace)
                tb_set(rb, rk, u, rank, rank, 3);
            MPI_Allgather(inplace ? MPI_IN_PLACE : sb, tb_count(sk, u), tb_type(sk), rb,
                          tb_count(rk, u), tb_type(rk), comm);
            snprintf(what, sizeof what, "Allgather u %d v %d", u, v);
            for (int i = 0; i < n; i++)
                if (!tb_check(what, rb, rk, u, i, i, 3))
                    break;
            tb_check_holes(what, rb, rk, n * u);
            free(sb);
            free(rb);
        }
}

static void t_alltoall(MPI_Comm comm, int rank, int n)
{
    char what[64];
    for (int ui = 0; ui < NUNITS; ui++)
        for (int v = 0; v < 4; v++) {
            int u = units[ui], sk = v == 1, rk = v >= 2, inplace = v == 3;
            int *sb = tb_alloc(sk, n * u), *rb = tb_alloc(rk, n * u);
            for (int j = 0; j < n; j++)
                tb_set(inplace ? rb : sb, inplace ? rk : sk, u, j, rank, j);
            MPI_Alltoall(inplace ? MPI_IN_PLACE : sb, tb_count(sk, u), tb_type(sk), rb,
                         tb_count(rk, u), tb_type(rk), comm);
            snprintf(what, sizeof what, "Alltoall u %d v %d", u, v);
            for (int i = 0; i < n; i++)
                if (!tb_check(what, rb, rk, u, i, i, rank))
                    break;
            tb_check_holes(what, rb, rk, n * u);
            free(sb);
            free(rb);
        }
}

/* ---- reductions: MPI_SUM on ints and a non-commutative op on affine maps ---- */

#define P 9973
/* an element (a, b) is the map x -> a x + b (mod P); in op inout means "first
 * in, then inout": x -> a2 (a1 x + b1) + b2 */
static void affine_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const int *x = in;
    int *y = inout;
    (void)dt;
    for (int i = 0; i < *len; i++) {
        long long a1 = x[2 * i], b1 = x[2 * i + 1], a2 = y[2 * i], b2 = y[2 * i + 1];
        y[2 * i] = (int)(a1 * a2 % P);
        y[2 * i + 1] = (int)((b1 * a2 + b2) % P);
    }
}

static void aff_in(int rank, int i, int out[2])
{
    out[0] = 1 + (rank * 5 + i * 3) % 11;
    out[1] = (rank * 17 + i * 7 + 1) % P;
}

static int sum_in(int rank, int i) { return (rank + 1) * 1000 + i; }

/* the maps of ranks lo .. hi combined in order (the identity when empty) */
static void aff_range(int lo, int hi, int i, int out[2])
{
    int acc[2] = {1, 0}, x[2];
    for (int r = lo; r <= hi; r++) {
        aff_in(r, i, x);
        affine_op(acc, x, &(int){1}, NULL);
        acc[0] = x[0];
        acc[1] = x[1];
    }
    out[0] = acc[0];
    out[1] = acc[1];
}

static void t_scan(MPI_Comm comm, int rank, int n, MPI_Op aff, MPI_Datatype pair)
{
    static const int counts[] = {0, 1, 7, 100};
    char what[64];
    for (int ci = 0; ci < 4; ci++)
        for (int v = 0; v < 8; v++) {
            /* v bit 0: exscan; bit 1: in place; bit 2: affine op */
            int cnt = counts[ci], ex = v & 1, inplace = v & 2, affine = v & 4;
            int w = affine ? 2 : 1;
            int *sb = mtest_malloc(sizeof(int) * (size_t)(w * cnt + 1));
            int *rb = mtest_malloc(sizeof(int) * (size_t)(w * cnt + 1));
            for (int i = 0; i < w * cnt + 1; i++)
                rb[i] = SENT;
            int *in = inplace ? rb : sb;
            for (int i = 0; i < cnt; i++) {
                if (affine)
                    aff_in(rank, i, &in[2 * i]);
                else
                    in[i] = sum_in(rank, i);
            }
            const void *s = inplace ? MPI_IN_PLACE : sb;
            MPI_Datatype dt = affine ? pair : MPI_INT;
            MPI_Op op = affine ? aff : MPI_SUM;
            if (ex)
                MPI_Exscan(s, rb, cnt, dt, op, comm);
            else
                MPI_Scan(s, rb, cnt, dt, op, comm);
            snprintf(what, sizeof what, "%s cnt %d %s%s", ex ? "Exscan" : "Scan", cnt,
                     affine ? "affine" : "sum", inplace ? " in place" : "");
            int hi = ex ? rank - 1 : rank;
            for (int i = 0; i < cnt && hi >= 0; i++) {
                int want[2] = {0, 0};
                if (affine) {
                    aff_range(0, hi, i, want);
                } else {
                    for (int r = 0; r <= hi; r++)
                        want[0] += sum_in(r, i);
                }
                if (!mtest_check(rb[w * i] == want[0] && (!affine || rb[w * i + 1] == want[1]),
                                 "%s: [%d] is %d %d, expected %d %d", what, i, rb[w * i],
                                 affine ? rb[w * i + 1] : 0, want[0], want[1]))
                    break;
            }
            if (ex && rank == 0 && !inplace)
                for (int i = 0; i < w * cnt; i++)
                    if (!mtest_check(rb[i] == SENT, "%s: rank 0's rbuf written", what))
                        break;
            mtest_check(rb[w * cnt] == SENT, "%s: written past the end", what);
            free(sb);
            free(rb);
        }
}

static void t_reduce_affine(MPI_Comm comm, int rank, int n, MPI_Op aff, MPI_Datatype pair)
{
    int cnt = 13, sb[26], rb[26];
    for (int root = 0; root < n; root++) {
        for (int i = 0; i < cnt; i++)
            aff_in(rank, i, &sb[2 * i]);
        MPI_Reduce(sb, rb, cnt, pair, aff, root, comm);
        if (rank != root)
            continue;
        for (int i = 0; i < cnt; i++) {
            int want[2];
            aff_range(0, n - 1, i, want);
            if (!mtest_check(rb[2 * i] == want[0] && rb[2 * i + 1] == want[1],
                             "Reduce affine root %d [%d]", root, i))
                break;
        }
    }
}

static void t_reduce_scatter(MPI_Comm comm, int rank, int n, MPI_Op aff, MPI_Datatype pair)
{
    int *counts = mtest_malloc(sizeof(int) * (size_t)n),
        *displs = mtest_malloc(sizeof(int) * (size_t)n);
    char what[80];
    for (int pat = 0; pat < 4; pat++)
        for (int v = 0; v < 6; v++) {
            /* v bit 0: in place; v >> 1: 0 sum, 1 affine, 2 reduce_scatter_block (sum) */
            int inplace = v & 1, kind = v >> 1, w = kind == 1 ? 2 : 1, total = 0;
            for (int i = 0; i < n; i++) {
                counts[i] = kind == 2 ? pat * 3 : pat == 0 ? 0 : (i * 3 + pat) % (2 * pat + 1);
                displs[i] = total;
                total += counts[i];
            }
            int *sb = mtest_malloc(sizeof(int) * (size_t)(w * total + 1));
            int *rb = mtest_malloc(sizeof(int) * (size_t)(w * total + 1));
            for (int i = 0; i < w * total + 1; i++)
                rb[i] = SENT;
            int *in = inplace ? rb : sb;
            for (int i = 0; i < total; i++) {
                if (kind == 1)
                    aff_in(rank, i, &in[2 * i]);
                else
                    in[i] = sum_in(rank, i);
            }
            const void *s = inplace ? MPI_IN_PLACE : sb;
            if (kind == 2)
                MPI_Reduce_scatter_block(s, rb, counts[0], MPI_INT, MPI_SUM, comm);
            else
                MPI_Reduce_scatter(s, rb, counts, kind ? pair : MPI_INT, kind ? aff : MPI_SUM,
                                   comm);
            snprintf(what, sizeof what, "Reduce_scatter%s pat %d %s%s", kind == 2 ? "_block" : "",
                     pat, kind == 1 ? "affine" : "sum", inplace ? " in place" : "");
            for (int j = 0; j < counts[rank]; j++) {
                int i = displs[rank] + j, want[2] = {0, 0};
                if (kind == 1) {
                    aff_range(0, n - 1, i, want);
                } else {
                    for (int r = 0; r < n; r++)
                        want[0] += sum_in(r, i);
                }
                if (!mtest_check(rb[w * j] == want[0] && (kind != 1 || rb[w * j + 1] == want[1]),
                                 "%s: [%d] is %d %d, expected %d %d", what, j, rb[w * j],
                                 kind == 1 ? rb[w * j + 1] : 0, want[0], want[1]))
                    break;
            }
            if (!inplace)
                mtest_check(rb[w * counts[rank]] == SENT, "%s: written past the block", what);
            free(sb);
            free(rb);
        }
    free(counts);
    free(displs);
}

static void run(MPI_Comm comm, MPI_Op aff, MPI_Datatype pair)
{
    int rank, n;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &n);
    t_bcast(comm, rank, n);
    t_gather_scatter(comm, rank, n);
    t_allgather(comm, rank, n);
    t_alltoall(comm, rank, n);
    t_scan(comm, rank, n, aff, pair);
    t_reduce_affine(comm, rank, n, aff, pair);
    t_reduce_scatter(comm, rank, n, aff, pair);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Op aff;
    MPI_Datatype pair;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    MPI_Op_create(affine_op, 0, &aff);

    run(MPI_COMM_WORLD, aff, pair);
    /* split communicators: halves in reversed order, then the first n - 1 and n - 2 ranks */
    for (int k = 0; k < 3; k++) {
        MPI_Comm sub;
        int color = k == 0 ? rank % 2 : rank < size - k;
        MPI_Comm_split(MPI_COMM_WORLD, color, k == 0 ? size - rank : rank, &sub);
        run(sub, aff, pair);
        MPI_Comm_free(&sub);
    }

    MPI_Op_free(&aff);
    MPI_Type_free(&pair);
    MPI_Type_free(&vec);
    return mtest_finalize();
}
