/* Every collective of MPI 4.1 chapter 6 in its three forms on MPI_COMM_WORLD:
 * blocking, nonblocking (MPI_I... + MPI_Wait) and persistent (..._init, then
 * MPI_Start + MPI_Wait twice with fresh inputs, then MPI_Request_free), at
 * small counts, rooted ones at the last rank; results checked exactly (int
 * sums). Then argument errors under MPI_ERRORS_RETURN: negative counts, bad
 * roots, MPI_IN_PLACE where it is not allowed, an invalid op, a NULL request
 * pointer, and MPI_Cancel of a collective request (erroneous: an error, and
 * the operation still completes).
 *
 * MPICH 4.0.2 fails the persistent gather, scatter and allgather checks of a
 * rank's own block: it copies that block at _init time instead of at each
 * MPI_Start (pmodels/mpich issue 7078, fixed in 2024). */
#include "mtest.h"

#define K    2 /* elements per block */
#define VW   4 /* stride of the v/w blocks: the largest variable count is 3 */
#define MAXN 64

enum { BLOCKING, NONBLOCKING, PERSISTENT };

static int rank, size, root;
static int *sb, *rb;
static int cnt[MAXN], dsp[MAXN], acnt[MAXN], adsp[MAXN], bdsp[MAXN];
static MPI_Datatype types[MAXN];
static MPI_Info info;
#define W MPI_COMM_WORLD

/* the value rank r contributes at index i */
static int val(int r, int i) { return r * 100 + i + 1; }

static void fill(void)
{
    for (int i = 0; i < size * VW * K + VW; i++) {
        sb[i] = val(rank, i);
        rb[i] = -1;
    }
}

/* ---- the calls: form f; the nonblocking and persistent ones set *r ---------------------- */

static int c_barrier(int f, MPI_Request *r)
{
    if (f == BLOCKING)
        return MPI_Barrier(W);
    return f == NONBLOCKING ? MPI_Ibarrier(W, r) : MPI_Barrier_init(W, info, r);
}

static int c_bcast(int f, MPI_Request *r)
{
    int *b = rank == root ? sb : rb;
    if (f == BLOCKING)
        return MPI_Bcast(b, K, MPI_INT, root, W);
    return f == NONBLOCKING ? MPI_Ibcast(b, K, MPI_INT, root, W, r)
                            : MPI_Bcast_init(b, K, MPI_INT, root, W, info, r);
}

static int c_gather(int f, MPI_Request *r)
{
    if (f == BLOCKING)
        return MPI_Gather(sb, K, MPI_INT, rb, K, MPI_INT, root, W);
    return f == NONBLOCKING ? MPI_Igather(sb, K, MPI_INT, rb, K, MPI_INT, root, W, r)
                            : MPI_Gather_init(sb, K, MPI_INT, rb, K, MPI_INT, root, W, info, r);
}

static int c_gatherv(int f, MPI_Request *r)
{
    if (f == BLOCKING)
        return MPI_Gatherv(sb, cnt[rank], MPI_INT, rb, cnt, dsp, MPI_INT, root, W);
    if (f == NONBLOCKING)
        return MPI_Igatherv(sb, cnt[rank], MPI_INT, rb, cnt, dsp, MPI_INT, root, W, r);
    return MPI_Gatherv_init(sb, cnt[rank], MPI_INT, rb, cnt, dsp, MPI_INT, root, W, info, r);
}

static int c_scatter(int f, MPI_Request *r)
{
    if (f == BLOCKING)
        return MPI_Scatter(sb, K, MPI_INT, rb, K, MPI_INT, root, W);
    return f == NONBLOCKING ? MPI_Iscatter(sb, K, MPI_INT, rb, K, MPI_INT, root, W, r)
                            : MPI_Scatter_init(sb, K, MPI_INT, rb, K, MPI_INT, root, W, info, r);
}

static int c_scatterv(int f, MPI_Request *r)
{
    if (f == BLOCKING)
        return MPI_Scatterv(sb, cnt, dsp, MPI_INT, rb, cnt[rank], MPI_INT, root, W);
    if (f == NONBLOCKING)
        return MPI_Iscatterv(sb, cnt, dsp, MPI_INT, rb, cnt[rank], MPI_INT, root, W, r);
    return MPI_Scatterv_init(sb, cnt, dsp, MPI_INT, rb, cnt[rank], MPI_INT, root, W, info, r);
}

static int c_allgather(int f, MPI_Request *r)
{
    if (f == BLOCKING)
        return MPI_Allgather(sb, K, MPI_INT, rb, K, MPI_INT, W);
    return f == NONBLOCKING ? MPI_Iallgather(sb, K, MPI_INT, rb, K, MPI_INT, W, r)
                            : MPI_Allgather_init(sb, K, MPI_INT, rb, K, MPI_INT, W, info, r);
}

static int c_allgatherv(int f, MPI_Request *r)
{
    if (f == BLOCKING)
        return MPI_Allgatherv(sb, cnt[rank], MPI_INT, rb, cnt, dsp, MPI_INT, W);
    if (f == NONBLOCKING)
        return MPI_Iallgatherv(sb, cnt[rank], MPI_INT, rb, cnt, dsp, MPI_INT, W, r);
    return MPI_Allgatherv_init(sb, cnt[rank], MPI_INT, rb, cnt, dsp, MPI_INT, W, info, r);
}

static int c_alltoall(int f, MPI_Request *r)
{
    if (f == BLOCKING)
        return MPI_Alltoall(sb, K, MPI_INT, rb, K, MPI_INT, W);
    return f == NONBLOCKING ? MPI_Ialltoall(sb, K, MPI_INT, rb, K, MPI_INT, W, r)
                            : MPI_Alltoall_init(sb, K, MPI_INT, rb, K, MPI_INT, W, info, r);
}

/* alltoallv/w: rank a sends (a + b) % 3 + 1 elements to b, blocks VW elements apart */
static int c_alltoallv(int f, MPI_Request *r)
{
    if (f == BLOCKING)
        return MPI_Alltoallv(sb, acnt, adsp, MPI_INT, rb, acnt, adsp, MPI_INT, W);
    if (f == NONBLOCKING)
        return MPI_Ialltoallv(sb, acnt, adsp, MPI_INT, rb, acnt, adsp, MPI_INT, W, r);
    return MPI_Alltoallv_init(sb, acnt, adsp, MPI_INT, rb, acnt, adsp, MPI_INT, W, info, r);
}

static int c_alltoallw(int f, MPI_Request *r)
{
    if (f == BLOCKING)
        return MPI_Alltoallw(sb, acnt, bdsp, types, rb, acnt, bdsp, types, W);
    if (f == NONBLOCKING)
        return MPI_Ialltoallw(sb, acnt, bdsp, types, rb, acnt, bdsp, types, W, r);
    return MPI_Alltoallw_init(sb, acnt, bdsp, types, rb, acnt, bdsp, types, W, info, r);
}

static int c_reduce(int f, MPI_Request *r)
{
    if (f == BLOCKING)
        return MPI_Reduce(sb, rb, K, MPI_INT, MPI_SUM, root, W);
    return f == NONBLOCKING ? MPI_Ireduce(sb, rb, K, MPI_INT, MPI_SUM, root, W, r)
                            : MPI_Reduce_init(sb, rb, K, MPI_INT, MPI_SUM, root, W, info, r);
}

static int c_allreduce(int f, MPI_Request *r)
{
    if (f == BLOCKING)
        return MPI_Allreduce(sb, rb, K, MPI_INT, MPI_SUM, W);
    return f == NONBLOCKING ? MPI_Iallreduce(sb, rb, K, MPI_INT, MPI_SUM, W, r)
                            : MPI_Allreduce_init(sb, rb, K, MPI_INT, MPI_SUM, W, info, r);
}

static int c_reduce_scatter_block(int f, MPI_Request *r)
{
    if (f == BLOCKING)
        return MPI_Reduce_scatter_block(sb, rb, K, MPI_INT, MPI_SUM, W);
    if (f == NONBLOCKING)
        return MPI_Ireduce_scatter_block(sb, rb, K, MPI_INT, MPI_SUM, W, r);
    return MPI_Reduce_scatter_block_init(sb, rb, K, MPI_INT, MPI_SUM, W, info, r);
}

static int c_reduce_scatter(int f, MPI_Request *r)
{
    if (f == BLOCKING)
        return MPI_Reduce_scatter(sb, rb, cnt, MPI_INT, MPI_SUM, W);
    return f == NONBLOCKING ? MPI_Ireduce_scatter(sb, rb, cnt, MPI_INT, MPI_SUM, W, r)
                            : MPI_Reduce_scatter_init(sb, rb, cnt, MPI_INT, MPI_SUM, W, info, r);
}

static int c_scan(int f, MPI_Request *r)
{
    if (f == BLOCKING)
        return MPI_Scan(sb, rb, K, MPI_INT, MPI_SUM, W);
    return f == NONBLOCKING ? MPI_Iscan(sb, rb, K, MPI_INT, MPI_SUM, W, r)
                            : MPI_Scan_init(sb, rb, K, MPI_INT, MPI_SUM, W, info, r);
}

static int c_exscan(int f, MPI_Request *r)
{
    if (f == BLOCKING)
        return MPI_Exscan(sb, rb, K, MPI_INT, MPI_SUM, W);
    return f == NONBLOCKING ? MPI_Iexscan(sb, rb, K, MPI_INT, MPI_SUM, W, r)
                            : MPI_Exscan_init(sb, rb, K, MPI_INT, MPI_SUM, W, info, r);
}

/* ---- the expected results: rb[at + i] for i < n, element i from `from`(its index) --------- */

static void expect(const char *what, int at, int n, int from, int from_at)
{
    for (int i = 0; i < n; i++)
        if (!mtest_check(rb[at + i] == val(from, from_at + i), "%s: recvbuf[%d] = %d, expected %d",
                         what, at + i, rb[at + i], val(from, from_at + i)))
            return;
}

/* the sum over ranks lo..hi-1 of val(r, from_at + i) */
static void expect_sum(const char *what, int n, int lo, int hi, int from_at)
{
    for (int i = 0; i < n; i++) {
        int want = 0;
        for (int r = lo; r < hi; r++)
            want += val(r, from_at + i);
        if (!mtest_check(rb[i] == want, "%s: recvbuf[%d] = %d, expected %d", what, i, rb[i], want))
            return;
    }
}

static void check(int coll, const char *what)
{
    int off = 0;
    switch (coll) {
    case 1:
        if (rank != root)
            expect(what, 0, K, root, 0);
        break;
    case 2:
    case 6:
        for (int j = 0; j < size && (coll == 6 || rank == root); j++)
            expect(what, j * K, K, j, 0);
        break;
    case 3:
    case 7:
        for (int j = 0; j < size && (coll == 7 || rank == root); j++)
            expect(what, dsp[j], cnt[j], j, 0);
        break;
    case 4:
        expect(what, 0, K, root, rank * K);
        break;
    case 5:
        expect(what, 0, cnt[rank], root, dsp[rank]);
        break;
    case 8:
        for (int j = 0; j < size; j++)
            expect(what, j * K, K, j, rank * K);
        break;
    case 9:
    case 10:
        for (int j = 0; j < size; j++)
            expect(what, j * VW, acnt[j], j, rank * VW);
        break;
    case 11:
        if (rank == root)
            expect_sum(what, K, 0, size, 0);
        break;
    case 12:
        expect_sum(what, K, 0, size, 0);
        break;
    case 13:
        expect_sum(what, K, 0, size, rank * K);
        break;
    case 14:
        for (int j = 0; j < rank; j++)
            off += cnt[j];
        expect_sum(what, cnt[rank], 0, size, off);
        break;
    case 15:
        expect_sum(what, K, 0, rank + 1, 0);
        break;
    case 16:
        if (rank > 0)
            expect_sum(what, K, 0, rank, 0);
        break;
    }
}

static const struct {
    const char *name;
    int (*call)(int f, MPI_Request *r);
} colls[] = {
    {"barrier", c_barrier},
    {"bcast", c_bcast},
    {"gather", c_gather},
    {"gatherv", c_gatherv},
    {"scatter", c_scatter},
    {"scatterv", c_scatterv},
    {"allgather", c_allgather},
    {"allgatherv", c_allgatherv},
    {"alltoall", c_alltoall},
    {"alltoallv", c_alltoallv},
    {"alltoallw", c_alltoallw},
    {"reduce", c_reduce},
    {"allreduce", c_allreduce},
    {"reduce_scatter_block", c_reduce_scatter_block},
    {"reduce_scatter", c_reduce_scatter},
    {"scan", c_scan},
    {"exscan", c_exscan},
};

/* the MPI_Wait of a started collective, named after it */
static void wait_for(const char *what, MPI_Request *r)
{
    char call[128];
    snprintf(call, sizeof call, "%s: MPI_Wait", what);
    mtest_check_rc(call, MPI_Wait(r, MPI_STATUS_IGNORE));
}

static void run(int coll)
{
    static const char *forms[] = {"blocking", "nonblocking", "persistent"};
    char what[96];
    MPI_Request r = MPI_REQUEST_NULL;
    for (int f = BLOCKING; f <= PERSISTENT; f++) {
        snprintf(what, sizeof what, "%s %s", forms[f], colls[coll].name);
        fill();
        if (!mtest_check_rc(what, colls[coll].call(f, &r)))
            continue;
        if (f == NONBLOCKING)
            wait_for(what, &r);
        for (int k = 0; f == PERSISTENT && k < 2; k++) {
            fill(); /* new inputs for each start */
            mtest_check_rc("MPI_Start", MPI_Start(&r));
            wait_for(what, &r);
            mtest_check(r != MPI_REQUEST_NULL, "%s: the request became MPI_REQUEST_NULL", what);
            if (k == 0)
                check(coll, what);
        }
        if (f == PERSISTENT)
            mtest_check_rc("MPI_Request_free", MPI_Request_free(&r));
        check(coll, what);
    }
}

/* an error of class a or b */
static void check_class2(const char *what, int rc, int a, int b)
{
    int cls = -1;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    mtest_check(cls == a || cls == b, "%s: error class %d, expected %d or %d", what, cls, a, b);
}

static void bad_args(void)
{
    MPI_Request r;
    int one = 1, neg[MAXN];
    for (int j = 0; j < size; j++)
        neg[j] = j == size - 1 ? -1 : 1;
    fill();
    mtest_check_class("MPI_Bcast count=-1", MPI_Bcast(rb, -1, MPI_INT, 0, W), MPI_ERR_COUNT);
    mtest_check_class("MPI_Ialltoall sendcount=-1",
                      MPI_Ialltoall(sb, -1, MPI_INT, rb, 1, MPI_INT, W, &r), MPI_ERR_COUNT);
    mtest_check_class("MPI_Bcast_init count=-1", MPI_Bcast_init(rb, -1, MPI_INT, 0, W, info, &r),
                      MPI_ERR_COUNT);
    mtest_check_class("MPI_Alltoallv a count=-1",
                      MPI_Alltoallv(sb, neg, adsp, MPI_INT, rb, neg, adsp, MPI_INT, W),
                      MPI_ERR_COUNT);
    mtest_check_class("MPI_Reduce root=size", MPI_Reduce(sb, rb, 1, MPI_INT, MPI_SUM, size, W),
                      MPI_ERR_ROOT);
    mtest_check_class("MPI_Ibcast root=size", MPI_Ibcast(rb, 1, MPI_INT, size, W, &r),
                      MPI_ERR_ROOT);
    mtest_check_class("MPI_Gather_init root=size",
                      MPI_Gather_init(sb, 1, MPI_INT, rb, 1, MPI_INT, size, W, info, &r),
                      MPI_ERR_ROOT);
    mtest_check_class("MPI_Allreduce recvbuf=MPI_IN_PLACE",
                      MPI_Allreduce(sb, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, W), MPI_ERR_BUFFER);
    if (rank == 0)
        mtest_check_class("MPI_Gather recvbuf=MPI_IN_PLACE at the root",
                          MPI_Gather(sb, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, 0, W),
                          MPI_ERR_BUFFER);
    mtest_check_class("MPI_Allreduce op=MPI_OP_NULL",
                      MPI_Allreduce(sb, rb, 1, MPI_INT, MPI_OP_NULL, W), MPI_ERR_OP);
    check_class2("MPI_Ibarrier request=NULL", MPI_Ibarrier(W, NULL), MPI_ERR_REQUEST, MPI_ERR_ARG);
    /* MPI_Cancel of a collective is erroneous: an error, and the collective still completes */
    MPI_Ibcast(&one, 1, MPI_INT, 0, W, &r);
    mtest_check(MPI_Cancel(&r) != MPI_SUCCESS, "MPI_Cancel of an MPI_Ibcast request succeeded");
    mtest_check_rc("MPI_Wait after MPI_Cancel", MPI_Wait(&r, MPI_STATUS_IGNORE));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_rank(W, &rank);
    MPI_Comm_size(W, &size);
    if (size > MAXN) {
        mtest_fail("at most %d ranks", MAXN);
        return mtest_finalize();
    }
    MPI_Comm_set_errhandler(W, MPI_ERRORS_RETURN);
    root = size - 1;
    sb = mtest_malloc(sizeof(int) * (size_t)(size * VW * K + VW));
    rb = mtest_malloc(sizeof(int) * (size_t)(size * VW * K + VW));
    for (int j = 0, at = 0; j < size; j++) {
        cnt[j] = j % 3 + 1;
        dsp[j] = at;
        at += cnt[j] + 1; /* a gap between blocks */
        acnt[j] = (rank + j) % 3 + 1;
        adsp[j] = j * VW;
        bdsp[j] = j * VW * (int)sizeof(int);
        types[j] = MPI_INT;
    }
    MPI_Info_create(&info);
    MPI_Info_set(info, "dcfa_test", "coll_forms");
    for (int c = 0; c < (int)(sizeof colls / sizeof colls[0]); c++)
        run(c);
    bad_args();
    MPI_Info_free(&info);
    free(sb);
    free(rb);
    return mtest_finalize();
}
