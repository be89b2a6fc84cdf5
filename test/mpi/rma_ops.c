/*
 * rma_ops: every RMA operation against a reference computed locally, in
 * every synchronisation mode, on every window flavour, with derived
 * datatypes on the origin and the target side.
 *
 * In each case rank r operates on rank t = (r + 1) % n (itself when alone),
 * so every window is the target of exactly one origin, o = (t - 1) % n.
 * Windows hold NW ints, initialised to init(rank, i); the origin's data is
 * data(rank, case, k). The reference never uses RMA: the target positions of
 * an operation are found by packing an index array with the target datatype
 * (MPI_Pack), the origin's values by packing its buffer, and the expected
 * window is the initial one with the operation applied element by element;
 * results (get, get_accumulate, fetch_and_op, compare_and_swap) are checked
 * against the initial values at those positions.
 *
 * Synchronisation modes: fence; post/start/complete/wait; lock exclusive +
 * unlock; lock shared + flush + unlock; lock_all + flush_all + unlock_all;
 * lock_all + flush_local_all; request-based operations (MPI_Rput ...) +
 * MPI_Wait inside lock_all. Flavours: MPI_Win_create, MPI_Win_allocate,
 * MPI_Win_allocate_shared, MPI_Win_create_dynamic (+ attach).
 *
 * Options: RMA_ONLY_FLAVOR=0..3, RMA_ONLY_SYNC=0..6 to narrow a failure,
 * RMA_TRACE=1 prints each case on rank 0.
 */
#include "mtest.h"

#include <stdint.h>

#define NW   96 /* ints in each window */
#define DISP 16 /* where operations start in the target window */

enum { F_CREATE, F_ALLOCATE, F_SHARED, F_DYNAMIC, NFLAVOR };
static const char *flavor_name[] = {"create", "allocate", "allocate_shared", "dynamic"};
enum {
    S_FENCE,
    S_PSCW,
    S_LOCK_EXCL,
    S_LOCK_FLUSH,
    S_LOCKALL_FLUSH,
    S_LOCKALL_LOCAL,
    S_REQUEST,
    NSYNC
};
static const char *sync_name[] = {
    "fence",  "pscw", "lock", "lock+flush", "lock_all+flush_all", "lock_all+flush_local_all",
    "request"};
enum { K_PUT, K_GET, K_ACC, K_GACC, K_FOP, K_CAS, NKIND };
static const char *kind_name[] = {
    "put", "get", "accumulate", "get_accumulate", "fetch_and_op", "compare_and_swap"};

static int rank, nprocs, tgt, org;
static MPI_Datatype types[5];
static int type_count[5]; /* count so that every type describes 8 ints */
static const char *type_name[5] = {"int x8", "vector(4,2,3)", "indexed(3,1,4)", "contig(8)",
                                   "resized vector(2,4,5) ext 4"};

static int init_val(int r, int i) { return 1000 * (r + 1) + i; }
static int data_val(int r, int c, int k) { return (c % 7 + 1) * 100000 + 100 * r + k; }

static void make_types(void)
{
    types[0] = MPI_INT;
    type_count[0] = 8;
    MPI_Type_vector(4, 2, 3, MPI_INT, &types[1]);
    type_count[1] = 1;
    int bl[3] = {3, 1, 4}, dp[3] = {0, 5, 9};
    MPI_Type_indexed(3, bl, dp, MPI_INT, &types[2]);
    type_count[2] = 1;
    MPI_Type_contiguous(8, MPI_INT, &types[3]);
    type_count[3] = 1;
    /* two blocks of 4 ints 5 apart, resized to an extent of 4 ints: count 1 */
    MPI_Datatype v;
    MPI_Type_vector(2, 4, 5, MPI_INT, &v);
    MPI_Type_create_resized(v, 0, 4 * (MPI_Aint)sizeof(int), &types[4]);
    MPI_Type_free(&v);
    type_count[4] = 1;
    for (int i = 1; i < 5; i++)
        MPI_Type_commit(&types[i]);
}

/* element indices (relative to buf) that (count, type) covers, in order */
static int positions(int count, MPI_Datatype t, int *pos, int max)
{
    int idx[NW + 64], psize = 0;
    for (int i = 0; i < NW + 64; i++)
        idx[i] = i;
    MPI_Pack_size(count, t, MPI_COMM_SELF, &psize);
    char *packed = malloc((size_t)psize + 1);
    int p = 0;
    MPI_Pack(idx, count, t, packed, psize, &p, MPI_COMM_SELF);
    int n = p / (int)sizeof(int);
    if (n > max)
        n = max;
    memcpy(pos, packed, (size_t)n * sizeof(int));
    free(packed);
    return n;
}

static int apply_op(MPI_Op op, int in, int inout)
{
    if (op == MPI_SUM)
        return in + inout;
    if (op == MPI_MAX)
        return in > inout ? in : inout;
    if (op == MPI_BXOR)
        return in ^ inout;
    if (op == MPI_REPLACE)
        return in;
    return inout; /* MPI_NO_OP */
}

typedef struct rcase {
    int kind;
    MPI_Op op;
    int ot, tt; /* origin/result and target type indices */
    int cas_match;
} rcase;

/* ---- windows ------------------------------------------------------------------------- */

typedef struct win {
    MPI_Win w;
    int *mem;        /* my window memory */
    MPI_Aint *bases; /* dynamic: every rank's address */
    int flavor;
} win;

static void win_make(win *x, int flavor)
{
    x->flavor = flavor;
    x->bases = NULL;
    x->mem = NULL;
    MPI_Aint bytes = NW * (MPI_Aint)sizeof(int);
    switch (flavor) {
    case F_CREATE:
        x->mem = malloc((size_t)bytes);
        MPI_Win_create(x->mem, bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &x->w);
        break;
    case F_ALLOCATE:
        MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &x->mem, &x->w);
        break;
    case F_SHARED:
        MPI_Win_allocate_shared(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &x->mem, &x->w);
        break;
    case F_DYNAMIC: {
        MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &x->w);
        x->mem = malloc((size_t)bytes);
        MPI_Win_attach(x->w, x->mem, bytes);
        MPI_Aint mine;
        MPI_Get_address(x->mem, &mine);
        x->bases = malloc((size_t)nprocs * sizeof(MPI_Aint));
        MPI_Allgather(&mine, 1, MPI_AINT, x->bases, 1, MPI_AINT, MPI_COMM_WORLD);
        break;
    }
    }
    MPI_Win_set_errhandler(x->w, MPI_ERRORS_RETURN);
}

static void win_free(win *x)
{
    if (x->flavor == F_DYNAMIC)
        MPI_Win_detach(x->w, x->mem);
    MPI_Win_free(&x->w);
    if (x->flavor == F_CREATE || x->flavor == F_DYNAMIC)
        free(x->mem);
    free(x->bases);
}

static MPI_Aint win_disp(const win *x, int t, int elem)
{
    if (x->flavor == F_DYNAMIC)
        return x->bases[t] + (MPI_Aint)elem * (MPI_Aint)sizeof(int);
    return elem;
}

/* set my window to its initial contents, visible to everybody afterwards */
static void win_reset(win *x)
{
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, x->w);
    for (int i = 0; i < NW; i++)
        x->mem[i] = init_val(rank, i);
    MPI_Win_unlock(rank, x->w);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- one case ----------------------------------------------------------------------- */

static int do_op(const win *x, const rcase *c, int sync, int cidx, int *obuf, int *rbuf, int *cmp,
                 MPI_Request *req)
{
    MPI_Datatype ot = types[c->ot], tt = types[c->tt];
    int oc = type_count[c->ot], tc = type_count[c->tt];
    MPI_Aint disp = win_disp(x, tgt, DISP);
    int use_req = sync == S_REQUEST;
    *req = MPI_REQUEST_NULL;
    switch (c->kind) {
    case K_PUT:
        return use_req ? MPI_Rput(obuf, oc, ot, tgt, disp, tc, tt, x->w, req)
                       : MPI_Put(obuf, oc, ot, tgt, disp, tc, tt, x->w);
    case K_GET:
        return use_req ? MPI_Rget(rbuf, oc, ot, tgt, disp, tc, tt, x->w, req)
                       : MPI_Get(rbuf, oc, ot, tgt, disp, tc, tt, x->w);
    case K_ACC:
        return use_req ? MPI_Raccumulate(obuf, oc, ot, tgt, disp, tc, tt, c->op, x->w, req)
                       : MPI_Accumulate(obuf, oc, ot, tgt, disp, tc, tt, c->op, x->w);
    case K_GACC:
        return use_req
                   ? MPI_Rget_accumulate(obuf, oc, ot, rbuf, oc, ot, tgt, disp, tc, tt, c->op, x->w,
                                         req)
                   : MPI_Get_accumulate(obuf, oc, ot, rbuf, oc, ot, tgt, disp, tc, tt, c->op, x->w);
    case K_FOP:
        return MPI_Fetch_and_op(obuf, rbuf, MPI_INT, tgt, disp, c->op, x->w);
    case K_CAS:
        return MPI_Compare_and_swap(obuf, cmp, rbuf, MPI_INT, tgt, disp, x->w);
    }
    (void)cidx;
    return MPI_ERR_OTHER;
}

static void run_case(const win *x, const rcase *c, int sync, int cidx)
{
    char where[200];
    snprintf(where, sizeof where, "%s on %s, %s, %s, origin %s, target %s", kind_name[c->kind],
             flavor_name[x->flavor], sync_name[sync],
             c->op == MPI_SUM       ? "SUM"
             : c->op == MPI_MAX     ? "MAX"
             : c->op == MPI_BXOR    ? "BXOR"
             : c->op == MPI_REPLACE ? "REPLACE"
                                    : "NO_OP",
             type_name[c->ot], type_name[c->tt]);
    if (getenv("RMA_TRACE") && rank == 0)
        fprintf(stderr, "case %d: %s\n", cidx, where);
    int single = c->kind == K_FOP || c->kind == K_CAS;
    int obuf[64], rbuf[64], cmp = 0;
    for (int k = 0; k < 64; k++) {
        obuf[k] = data_val(rank, cidx, k);
        rbuf[k] = -7;
    }
    if (c->kind == K_CAS)
        cmp = c->cas_match ? init_val(tgt, DISP) : -12345;
    win_reset((win *)x);

    /* the epoch */
    MPI_Request req;
    int rc;
    MPI_Group wg, g;
    MPI_Win_get_group(x->w, &wg);
    switch (sync) {
    case S_FENCE:
        MPI_Win_fence(0, x->w);
        rc = do_op(x, c, sync, cidx, obuf, rbuf, &cmp, &req);
        mtest_check_rc(where, rc);
        MPI_Win_fence(0, x->w);
        break;
    case S_PSCW:
        MPI_Group_incl(wg, 1, &org, &g);
        MPI_Win_post(g, 0, x->w);
        MPI_Group_free(&g);
        MPI_Group_incl(wg, 1, &tgt, &g);
        MPI_Win_start(g, 0, x->w);
        MPI_Group_free(&g);
        rc = do_op(x, c, sync, cidx, obuf, rbuf, &cmp, &req);
        mtest_check_rc(where, rc);
        MPI_Win_complete(x->w);
        MPI_Win_wait(x->w);
        break;
    case S_LOCK_EXCL:
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, tgt, 0, x->w);
        rc = do_op(x, c, sync, cidx, obuf, rbuf, &cmp, &req);
        mtest_check_rc(where, rc);
        MPI_Win_unlock(tgt, x->w);
        break;
    case S_LOCK_FLUSH:
        MPI_Win_lock(MPI_LOCK_SHARED, tgt, 0, x->w);
        rc = do_op(x, c, sync, cidx, obuf, rbuf, &cmp, &req);
        mtest_check_rc(where, rc);
        MPI_Win_flush(tgt, x->w);
        MPI_Win_unlock(tgt, x->w);
        break;
    case S_LOCKALL_FLUSH:
    case S_LOCKALL_LOCAL:
        MPI_Win_lock_all(0, x->w);
        rc = do_op(x, c, sync, cidx, obuf, rbuf, &cmp, &req);
        mtest_check_rc(where, rc);
        if (sync == S_LOCKALL_FLUSH)
            MPI_Win_flush_all(x->w);
        else
            MPI_Win_flush_local_all(x->w);
        MPI_Win_unlock_all(x->w);
        break;
    case S_REQUEST:
        MPI_Win_lock_all(0, x->w);
        rc = do_op(x, c, sync, cidx, obuf, rbuf, &cmp, &req);
        mtest_check_rc(where, rc);
        if (req != MPI_REQUEST_NULL)
            mtest_check_rc(where, MPI_Wait(&req, MPI_STATUS_IGNORE));
        else if (!single)
            mtest_fail("%s: no request returned", where);
        /* local completion: the result buffer is ready; the target's copy after the unlock */
        MPI_Win_unlock_all(x->w);
        break;
    }
    MPI_Group_free(&wg);
    MPI_Barrier(MPI_COMM_WORLD);

    /* the reference, for my window (origin org) and for my result buffer (target tgt) */
    int tpos[64], opos[64];
    int nt = single ? 1 : positions(type_count[c->tt], types[c->tt], tpos, 64);
    int no = single ? 1 : positions(type_count[c->ot], types[c->ot], opos, 64);
    if (single)
        tpos[0] = opos[0] = 0;
    if (nt != no)
        mtest_fail("%s: test types disagree (%d vs %d elements)", where, nt, no);
    int expect[NW];
    for (int i = 0; i < NW; i++)
        expect[i] = init_val(rank, i);
    for (int k = 0; k < nt; k++) {
        int i = DISP + tpos[k];
        int in = data_val(org, cidx, opos[k]);
        switch (c->kind) {
        case K_PUT:
            expect[i] = in;
            break;
        case K_ACC:
        case K_GACC:
        case K_FOP:
            expect[i] = apply_op(c->op, in, expect[i]);
            break;
        case K_CAS:
            if (c->cas_match)
                expect[i] = in;
            break;
        }
    }
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, x->w);
    int bad = 0;
    for (int i = 0; i < NW && bad < 3; i++)
        if (x->mem[i] != expect[i]) {
            mtest_fail("%s: target window[%d] = %d, expected %d", where, i, x->mem[i], expect[i]);
            bad++;
        }
    MPI_Win_unlock(rank, x->w);
    if (c->kind != K_PUT && c->kind != K_ACC) {
        for (int k = 0; k < nt && bad < 6; k++) {
            int want = init_val(tgt, DISP + tpos[k]);
            if (rbuf[opos[k]] != want) {
                mtest_fail("%s: result element %d (buffer index %d) = %d, expected %d", where, k,
                           opos[k], rbuf[opos[k]], want);
                bad++;
            }
        }
        /* nothing outside the result type's elements was written */
        int covered[64] = {0};
        for (int k = 0; k < nt; k++)
            covered[opos[k]] = 1;
        for (int k = 0; k < 64; k++)
            if (!covered[k] && rbuf[k] != -7 && bad < 9) {
                mtest_fail("%s: result buffer index %d outside the datatype was written (%d)",
                           where, k, rbuf[k]);
                bad++;
            }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- many small operations in one epoch (batched and coalesced in message mode) -------- */

static void run_many(const win *x, int sync)
{
    char where[128];
    snprintf(where, sizeof where, "64 single-int puts + 32 accumulates on %s, %s",
             flavor_name[x->flavor], sync_name[sync]);
    win_reset((win *)x);
    int vals[64];
    for (int k = 0; k < 64; k++)
        vals[k] = data_val(rank, 3, k);
    if (sync == S_FENCE)
        MPI_Win_fence(0, x->w);
    else
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, tgt, 0, x->w);
    for (int k = 0; k < 64; k++)
        mtest_check_rc(where,
                       MPI_Put(&vals[k], 1, MPI_INT, tgt, win_disp(x, tgt, k), 1, MPI_INT, x->w));
    int one = 1;
    for (int k = 0; k < 32; k++)
        mtest_check_rc(where, MPI_Accumulate(&one, 1, MPI_INT, tgt, win_disp(x, tgt, 64 + k % 8), 1,
                                             MPI_INT, MPI_SUM, x->w));
    if (sync == S_FENCE)
        MPI_Win_fence(0, x->w);
    else
        MPI_Win_unlock(tgt, x->w);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, x->w);
    int bad = 0;
    for (int i = 0; i < NW && bad < 3; i++) {
        int want = i < 64   ? data_val(org, 3, i)
                   : i < 72 ? init_val(rank, i) + 4
                            : init_val(rank, i);
        if (x->mem[i] != want) {
            mtest_fail("%s: window[%d] = %d, expected %d", where, i, x->mem[i], want);
            bad++;
        }
    }
    MPI_Win_unlock(rank, x->w);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- a large transfer (data by its own message in message mode) ------------------------- */

static void run_large(int flavor)
{
    const int N = 1 << 17; /* 512 KiB of ints */
    char where[96];
    snprintf(where, sizeof where, "512 KiB put/get/accumulate on %s", flavor_name[flavor]);
    MPI_Win w;
    int *mem = NULL;
    MPI_Aint bytes = (MPI_Aint)N * (MPI_Aint)sizeof(int);
    if (flavor == F_CREATE) {
        mem = malloc((size_t)bytes);
        MPI_Win_create(mem, bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w);
    } else {
        MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &w);
    }
    int *src = malloc((size_t)bytes), *back = malloc((size_t)bytes);
    for (int i = 0; i < N; i++) {
        src[i] = rank * 7 + i;
        mem[i] = 0;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, tgt, 0, w);
    mtest_check_rc(where, MPI_Put(src, N, MPI_INT, tgt, 0, N, MPI_INT, w));
    MPI_Win_flush(tgt, w);
    mtest_check_rc(where, MPI_Accumulate(src, N, MPI_INT, tgt, 0, N, MPI_INT, MPI_SUM, w));
    MPI_Win_flush(tgt, w);
    mtest_check_rc(where, MPI_Get(back, N, MPI_INT, tgt, 0, N, MPI_INT, w));
    MPI_Win_unlock(tgt, w);
    int bad = 0;
    for (int i = 0; i < N && bad < 3; i++)
        if (back[i] != 2 * src[i]) {
            mtest_fail("%s: element %d read back %d, expected %d", where, i, back[i], 2 * src[i]);
            bad++;
        }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&w);
    if (flavor == F_CREATE)
        free(mem);
    free(src);
    free(back);
}

/* ---- a target type with thousands of pieces (its description alone exceeds a batch) ---- */

static void run_bigtype(void)
{
    enum { NB = 6000 };
    char where[] = "indexed target type of 6000 blocks (put, accumulate, get)";
    int *bl = malloc(NB * sizeof(int)), *dp = malloc(NB * sizeof(int));
    for (int i = 0; i < NB; i++) {
        bl[i] = 1 + i % 2;
        dp[i] = 3 * i;
    }
    MPI_Datatype big;
    MPI_Type_indexed(NB, bl, dp, MPI_INT, &big);
    MPI_Type_commit(&big);
    int nelem = 0;
    for (int i = 0; i < NB; i++)
        nelem += bl[i];
    MPI_Win w;
    int *mem;
    MPI_Aint bytes = 3 * NB * (MPI_Aint)sizeof(int);
    MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &w);
    for (int i = 0; i < 3 * NB; i++)
        mem[i] = -1;
    int *src = malloc((size_t)nelem * sizeof(int)), *back = malloc((size_t)nelem * sizeof(int));
    for (int i = 0; i < nelem; i++)
        src[i] = rank * 100000 + i;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, tgt, 0, w);
    mtest_check_rc(where, MPI_Put(src, nelem, MPI_INT, tgt, 0, 1, big, w));
    mtest_check_rc(where, MPI_Accumulate(src, nelem, MPI_INT, tgt, 0, 1, big, MPI_SUM, w));
    MPI_Win_flush(tgt, w);
    mtest_check_rc(where, MPI_Get(back, nelem, MPI_INT, tgt, 0, 1, big, w));
    MPI_Win_unlock(tgt, w);
    int bad = 0;
    for (int i = 0; i < nelem && bad < 3; i++)
        if (back[i] != 2 * src[i]) {
            mtest_fail("%s: element %d read back %d, expected %d", where, i, back[i], 2 * src[i]);
            bad++;
        }
    MPI_Barrier(MPI_COMM_WORLD);
    /* the gaps of the type were not touched */
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, w);
    for (int i = 0; i < NB && bad < 6; i++)
        if (mem[3 * i + 2] != -1) {
            mtest_fail("%s: gap element %d was written (%d)", where, 3 * i + 2, mem[3 * i + 2]);
            bad++;
        }
    MPI_Win_unlock(rank, w);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&w);
    MPI_Type_free(&big);
    free(src);
    free(back);
    free(bl);
    free(dp);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    tgt = (rank + 1) % nprocs;
    org = (rank - 1 + nprocs) % nprocs;
    make_types();
    const char *of = getenv("RMA_ONLY_FLAVOR"), *os = getenv("RMA_ONLY_SYNC");

    /* the cases: (kind, op, origin type, target type) */
    static const int pairs[][2] = {{0, 0}, {0, 1}, {1, 2}, {2, 0}, {3, 1}, {4, 2}, {1, 4}};
    const int npairs = (int)(sizeof pairs / sizeof pairs[0]);
    rcase cases[256];
    int nc = 0;
    for (int p = 0; p < npairs; p++) {
        cases[nc++] = (rcase){K_PUT, MPI_REPLACE, pairs[p][0], pairs[p][1], 0};
        cases[nc++] = (rcase){K_GET, MPI_NO_OP, pairs[p][0], pairs[p][1], 0};
        cases[nc++] = (rcase){K_ACC, MPI_SUM, pairs[p][0], pairs[p][1], 0};
        cases[nc++] = (rcase){K_GACC, MPI_SUM, pairs[p][0], pairs[p][1], 0};
    }
    MPI_Op ops[] = {MPI_MAX, MPI_BXOR, MPI_REPLACE};
    for (int i = 0; i < 3; i++) {
        cases[nc++] = (rcase){K_ACC, ops[i], 1, 2, 0};
        cases[nc++] = (rcase){K_GACC, ops[i], 2, 4, 0};
    }
    cases[nc++] = (rcase){K_GACC, MPI_NO_OP, 0, 1, 0};
    cases[nc++] = (rcase){K_FOP, MPI_SUM, 0, 0, 0};
    cases[nc++] = (rcase){K_FOP, MPI_NO_OP, 0, 0, 0};
    cases[nc++] = (rcase){K_FOP, MPI_REPLACE, 0, 0, 0};
    cases[nc++] = (rcase){K_CAS, MPI_REPLACE, 0, 0, 1};
    cases[nc++] = (rcase){K_CAS, MPI_REPLACE, 0, 0, 0};

    for (int f = 0; f < NFLAVOR; f++) {
        if (of && atoi(of) != f)
            continue;
        win x;
        win_make(&x, f);
        for (int s = 0; s < NSYNC; s++) {
            if (os && atoi(os) != s)
                continue;
            for (int i = 0; i < nc; i++)
                run_case(&x, &cases[i], s, i);
            if (s == S_FENCE || s == S_LOCK_EXCL)
                run_many(&x, s);
        }
        win_free(&x);
    }
    if (!of && !os) {
        run_large(F_CREATE);
        run_large(F_ALLOCATE);
        run_bigtype();
    }
    for (int i = 1; i < 5; i++)
        MPI_Type_free(&types[i]);
    return mtest_finalize();
}
