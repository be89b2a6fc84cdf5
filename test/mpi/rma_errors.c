/*
 * rma_errors: bad input to the RMA calls gives the right error class
 * through the window's error handler, with a message naming the call, the
 * window and the rank (MPI_Error_string of the returned code).
 *
 * With RMA_ERRORS_FATAL=1 the program instead makes one access outside the
 * window under the default handler (MPI_ERRORS_ARE_FATAL): the job must end
 * with the message on stderr (test list: expect_fail).
 */
#include "mtest.h"

static int rank, nprocs;
static int handler_calls, handler_code;
static MPI_Win handler_win;

static void win_handler(MPI_Win *win, int *code, ...)
{
    handler_calls++;
    handler_code = *code;
    handler_win = *win;
}

/* rc must be of class `cls`, and its text must name `call`, the window and the rank */
static void expect(const char *what, int rc, int cls, const char *call, const char *winname)
{
    int got = MPI_SUCCESS;
    if (rc == MPI_SUCCESS) {
        mtest_fail("%s: succeeded, expected error class %d", what, cls);
        return;
    }
    MPI_Error_class(rc, &got);
    if (got != cls) {
        char s[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(rc, s, &len);
        mtest_fail("%s: error class %d, expected %d (%s)", what, got, cls, s);
        return;
    }
    char s[MPI_MAX_ERROR_STRING], r[32];
    int len;
    MPI_Error_string(rc, s, &len);
    snprintf(r, sizeof r, "rank %d", rank);
    mtest_check(strstr(s, call) != NULL, "%s: message '%s' does not name %s", what, s, call);
    if (winname)
        mtest_check(strstr(s, winname) != NULL, "%s: message '%s' does not name the window %s",
                    what, s, winname);
    mtest_check(strstr(s, r) != NULL, "%s: message '%s' does not name the rank", what, s);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int peer = (rank + 1) % nprocs;
    int *mem;
    MPI_Win w;
    MPI_Win_allocate(16 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &w);
    MPI_Win_set_name(w, "errwin");

    if (getenv("RMA_ERRORS_FATAL")) {
        int v = 1;
        MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, w);
        MPI_Put(&v, 1, MPI_INT, peer, 16, 1, MPI_INT, w); /* one past the end: fatal */
        MPI_Win_unlock(peer, w);
        MPI_Win_free(&w);
        return mtest_finalize();
    }

    MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int v[4] = {1, 2, 3, 4}, got[4];

    /* epochs */
    expect("put outside an epoch", MPI_Put(v, 1, MPI_INT, peer, 0, 1, MPI_INT, w), MPI_ERR_RMA_SYNC,
           "MPI_Put", "errwin");
    expect("unlock without lock", MPI_Win_unlock(peer, w), MPI_ERR_RMA_SYNC, "MPI_Win_unlock",
           "errwin");
    expect("flush without lock", MPI_Win_flush(peer, w), MPI_ERR_RMA_SYNC, "MPI_Win_flush",
           "errwin");
    expect("complete without start", MPI_Win_complete(w), MPI_ERR_RMA_SYNC, "MPI_Win_complete",
           "errwin");
    expect("wait without post", MPI_Win_wait(w), MPI_ERR_RMA_SYNC, "MPI_Win_wait", "errwin");
    expect("unlock_all without lock_all", MPI_Win_unlock_all(w), MPI_ERR_RMA_SYNC,
           "MPI_Win_unlock_all", "errwin");

    /* locks */
    expect("lock of an invalid rank", MPI_Win_lock(MPI_LOCK_SHARED, nprocs, 0, w), MPI_ERR_RANK,
           "MPI_Win_lock", "errwin");
    expect("lock of a negative rank", MPI_Win_lock(MPI_LOCK_SHARED, -5, 0, w), MPI_ERR_RANK,
           "MPI_Win_lock", "errwin");
    expect("bad lock type", MPI_Win_lock(12345, peer, 0, w), MPI_ERR_LOCKTYPE, "MPI_Win_lock",
           "errwin");
    expect("bad lock assertion", MPI_Win_lock(MPI_LOCK_SHARED, peer, MPI_MODE_NOPUT, w),
           MPI_ERR_ASSERT, "MPI_Win_lock", "errwin");
    expect("bad fence assertion", MPI_Win_fence(MPI_MODE_NOCHECK, w), MPI_ERR_ASSERT,
           "MPI_Win_fence", "errwin");

    MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, w);
    expect("lock twice", MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, w), MPI_ERR_RMA_SYNC,
           "MPI_Win_lock", "errwin");
    expect("fence inside a lock epoch", MPI_Win_fence(0, w), MPI_ERR_RMA_SYNC, "MPI_Win_fence",
           "errwin");
    expect("free inside a lock epoch", MPI_Win_free(&w), MPI_ERR_RMA_SYNC, "MPI_Win_free",
           "errwin");
    /* ranges */
    expect("put past the end", MPI_Put(v, 1, MPI_INT, peer, 16, 1, MPI_INT, w), MPI_ERR_RMA_RANGE,
           "MPI_Put", "errwin");
    expect("get straddling the end", MPI_Get(got, 4, MPI_INT, peer, 14, 4, MPI_INT, w),
           MPI_ERR_RMA_RANGE, "MPI_Get", "errwin");
    expect("negative displacement", MPI_Put(v, 1, MPI_INT, peer, -1, 1, MPI_INT, w),
           MPI_ERR_RMA_RANGE, "MPI_Put", "errwin");
    expect("accumulate past the end",
           MPI_Accumulate(v, 2, MPI_INT, peer, 15, 2, MPI_INT, MPI_SUM, w), MPI_ERR_RMA_RANGE,
           "MPI_Accumulate", "errwin");
    expect("put to an invalid rank", MPI_Put(v, 1, MPI_INT, nprocs, 0, 1, MPI_INT, w), MPI_ERR_RANK,
           "MPI_Put", "errwin");
    /* types and sizes */
    expect("mismatched sizes", MPI_Put(v, 2, MPI_INT, peer, 0, 3, MPI_INT, w), MPI_ERR_TYPE,
           "MPI_Put", "errwin");
    expect("mismatched get sizes", MPI_Get(got, 4, MPI_INT, peer, 0, 1, MPI_INT, w), MPI_ERR_TYPE,
           "MPI_Get", "errwin");
    expect("accumulate of different basic types",
           MPI_Accumulate(v, 1, MPI_INT, peer, 0, 1, MPI_FLOAT, MPI_SUM, w), MPI_ERR_TYPE,
           "MPI_Accumulate", "errwin");
    expect("negative count", MPI_Put(v, -1, MPI_INT, peer, 0, 1, MPI_INT, w), MPI_ERR_COUNT,
           "MPI_Put", "errwin");
    MPI_Datatype unc;
    MPI_Type_contiguous(2, MPI_INT, &unc);
    expect("uncommitted datatype", MPI_Put(v, 1, unc, peer, 0, 2, MPI_INT, w), MPI_ERR_TYPE,
           "MPI_Put", "errwin");
    MPI_Type_commit(&unc);
    expect("fetch_and_op of a derived type", MPI_Fetch_and_op(v, got, unc, peer, 0, MPI_SUM, w),
           MPI_ERR_TYPE, "MPI_Fetch_and_op", "errwin");
    MPI_Type_free(&unc);
    double d = 1, dc = 0, dr;
    expect("compare_and_swap of doubles",
           MPI_Compare_and_swap(&d, &dc, &dr, MPI_DOUBLE, peer, 0, w), MPI_ERR_TYPE,
           "MPI_Compare_and_swap", "errwin");
    /* operations */
    MPI_Op uop;
    MPI_Op_create((MPI_User_function *)(void (*)(void))win_handler, 1, &uop);
    expect("accumulate with a user operation",
           MPI_Accumulate(v, 1, MPI_INT, peer, 0, 1, MPI_INT, uop, w), MPI_ERR_OP, "MPI_Accumulate",
           "errwin");
    MPI_Op_free(&uop);
    expect("accumulate with MPI_OP_NULL",
           MPI_Accumulate(v, 1, MPI_INT, peer, 0, 1, MPI_INT, MPI_OP_NULL, w), MPI_ERR_OP,
           "MPI_Accumulate", "errwin");
    expect("bitwise op on floats",
           MPI_Accumulate(&d, 1, MPI_DOUBLE, peer, 0, 1, MPI_DOUBLE, MPI_BXOR, w), MPI_ERR_OP,
           "MPI_Accumulate", "errwin");
    MPI_Win_unlock(peer, w);

    /* request-based operations need a passive-target epoch */
    MPI_Request req;
    MPI_Win_fence(0, w);
    expect("MPI_Rput in a fence epoch", MPI_Rput(v, 1, MPI_INT, peer, 0, 1, MPI_INT, w, &req),
           MPI_ERR_RMA_SYNC, "MPI_Rput", "errwin");
    MPI_Win_fence(MPI_MODE_NOSUCCEED, w);

    /* flavours */
    MPI_Aint sz;
    int du;
    void *bp;
    expect("attach to an allocated window", MPI_Win_attach(w, v, sizeof v), MPI_ERR_RMA_FLAVOR,
           "MPI_Win_attach", "errwin");
    MPI_Win dw;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dw);
    MPI_Win_set_errhandler(dw, MPI_ERRORS_RETURN);
    MPI_Win_set_name(dw, "dynwin");
    expect("shared_query on a dynamic window", MPI_Win_shared_query(dw, 0, &sz, &du, &bp),
           MPI_ERR_RMA_FLAVOR, "MPI_Win_shared_query", "dynwin");
    int *region = calloc(32, sizeof(int));
    mtest_check_rc("MPI_Win_attach", MPI_Win_attach(dw, region, 16 * sizeof(int)));
    expect("attach overlapping memory", MPI_Win_attach(dw, region + 8, 16 * sizeof(int)),
           MPI_ERR_RMA_ATTACH, "MPI_Win_attach", "dynwin");
    expect("detach of memory never attached", MPI_Win_detach(dw, region + 20), MPI_ERR_RMA_ATTACH,
           "MPI_Win_detach", "dynwin");
    MPI_Aint addr, *addrs = malloc((size_t)nprocs * sizeof(MPI_Aint));
    MPI_Get_address(region, &addr);
    MPI_Allgather(&addr, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD);
    /* inside is fine; beyond the attached 16 ints is an error, at the call (direct) or at
     * the unlock (message mode: the target finds it) */
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, peer, 0, dw);
    mtest_check_rc(
        "put into attached memory",
        MPI_Put(v, 4, MPI_INT, peer, addrs[peer] + 4 * (MPI_Aint)sizeof(int), 4, MPI_INT, dw));
    int rc1 =
        MPI_Put(v, 4, MPI_INT, peer, addrs[peer] + 14 * (MPI_Aint)sizeof(int), 4, MPI_INT, dw);
    int rc2 = MPI_Win_unlock(peer, dw);
    if (rc1 != MPI_SUCCESS)
        expect("put beyond attached memory", rc1, MPI_ERR_RMA_RANGE, "MPI_Put", "dynwin");
    else
        expect("put beyond attached memory (reported at unlock)", rc2, MPI_ERR_RMA_RANGE,
               "MPI_Win_unlock", "dynwin");
    MPI_Barrier(MPI_COMM_WORLD);
    mtest_check(region[4] == 1 && region[7] == 4, "put into attached memory: %d %d", region[4],
                region[7]);
    mtest_check(region[14] == 0 && region[15] == 0, "a put beyond attached memory changed it");
    MPI_Win_detach(dw, region);
    MPI_Win_free(&dw);
    free(region);
    free(addrs);

    /* window creation */
    MPI_Win bad;
    expect("negative size", MPI_Win_create(v, -4, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &bad),
           MPI_ERR_SIZE, "MPI_Win_create", NULL);
    expect("zero disp_unit", MPI_Win_allocate(16, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &bp, &bad),
           MPI_ERR_DISP, "MPI_Win_allocate", NULL);
    expect("invalid window", MPI_Win_fence(0, (MPI_Win)0x08001234), MPI_ERR_WIN, "MPI_Win_fence",
           NULL);
    expect("MPI_WIN_NULL", MPI_Put(v, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_WIN_NULL), MPI_ERR_WIN,
           "MPI_Put", NULL);

    /* a user error handler gets the window and the code */
    MPI_Errhandler eh;
    MPI_Win_create_errhandler(win_handler, &eh);
    MPI_Win_set_errhandler(w, eh);
    MPI_Errhandler_free(&eh);
    int rc = MPI_Win_unlock(peer, w);
    mtest_check(handler_calls == 1 && handler_win == w && handler_code == rc,
                "window error handler: %d calls, window %d, code %d (returned %d)", handler_calls,
                (int)handler_win, handler_code, rc);
    mtest_check_rc("MPI_Win_call_errhandler", MPI_Win_call_errhandler(w, MPI_ERR_OTHER));
    mtest_check(handler_calls == 2 && handler_code == MPI_ERR_OTHER,
                "MPI_Win_call_errhandler: %d calls, code %d", handler_calls, handler_code);
    MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&w);
    return mtest_finalize();
}
