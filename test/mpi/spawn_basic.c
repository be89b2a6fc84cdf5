/* MPI_Comm_spawn: the parent job (any size, or a singleton) spawns 2 copies of
 * this program (argv[1] = CHILD_ARG; MPI_Comm_get_parent tells them apart
 * too), root 0, and both sides then use the inter-communicator:
 *   - errcodes all MPI_SUCCESS, remote sizes (2 for the parent, the parent's
 *     size for the children), the children's MPI_COMM_WORLD of 2, their
 *     MPI_APPNUM 0, the parent's MPI_UNIVERSE_SIZE (set, >= 1);
 *   - point-to-point both ways: tags, MPI_ANY_SOURCE / MPI_ANY_TAG with
 *     MPI_SOURCE and MPI_TAG checked, non-overtaking, receives by tag out of
 *     send order;
 *   - MPI_Bcast from each side (MPI_ROOT / MPI_PROC_NULL, one of 128 KiB),
 *     MPI_Allreduce, MPI_Barrier, MPI_Allgather over the inter-communicator;
 *   - MPI_Intercomm_merge with each side high in turn (order and sizes), an
 *     allreduce and an allgather on the merged communicator;
 *   - MPI_Comm_disconnect on both sides.
 * Children report their error count to the parent (an allreduce over the
 * inter-communicator just before the disconnect) and print nothing; their
 * stderr lines are tagged "rank 100+" (mtest_wrank). */
#include "mtest.h"
#include <limits.h>
#include <unistd.h>

#define NCHILD    2
#define CHILD_ARG "--spawn-basic-child"
#define BIG       (128 * 1024)

/* Absolute path of this program (spawned by path, whatever the launcher's cwd). */
/* ---- both sides: merges ------------------------------------------------ */

/* Merge with the given high flag; check size, rank and the order of the
 * groups (ids gathered in merged-rank order), then an allreduce. `id` is
 * unique (parent rank r: r, child c: 1000 + c). */
static void check_merge(MPI_Comm inter, int is_child, int high, int np)
{
    MPI_Comm merged;
    int lrank, msize = -1, mrank = -1, i, id, sum = -1, want_rank;
    int *ids;
    int low_n = is_child ? np : NCHILD; /* size of the other group (first when high) */

    MPI_Comm_rank(inter, &lrank);
    MPI_Intercomm_merge(inter, high, &merged);
    MPI_Comm_size(merged, &msize);
    MPI_Comm_rank(merged, &mrank);
    mtest_check_int("merged size", msize, np + NCHILD);
    want_rank = high ? low_n + lrank : lrank;
    mtest_check(mrank == want_rank, "merge(high=%d): rank %d, expected %d", high, mrank, want_rank);

    id = is_child ? 1000 + lrank : lrank;
    ids = mtest_malloc(sizeof(int) * (size_t)(np + NCHILD));
    MPI_Allgather(&id, 1, MPI_INT, ids, 1, MPI_INT, merged);
    for (i = 0; i < np + NCHILD; i++) {
        /* parents high = 0 (children high = 1): parents first, and vice versa */
        int parents_first = is_child ? high : !high;
        int want;

        if (parents_first)
            want = i < np ? i : 1000 + (i - np);
        else
            want = i < NCHILD ? 1000 + i : i - NCHILD;
        mtest_check(ids[i] == want, "merge(high=%d): merged rank %d has id %d, expected %d", high,
                    i, ids[i], want);
    }
    free(ids);
    MPI_Allreduce(&mrank, &sum, 1, MPI_INT, MPI_SUM, merged);
    mtest_check_int("allreduce of merged ranks", sum, (np + NCHILD) * (np + NCHILD - 1) / 2);
#ifdef OPEN_MPI
    /* Open MPI 4.1 hangs in MPI_Comm_disconnect of an intra-communicator
     * merged from a spawn (every process waits in PMIx_Fence; see
     * open-mpi/ompi#12004): it gets MPI_Comm_free there. */
    MPI_Comm_free(&merged);
#else
    MPI_Comm_disconnect(&merged);
#endif
    mtest_check(merged == MPI_COMM_NULL, "disconnect left the merged handle set");
}

/* ---- parent ------------------------------------------------------------ */

static void parent_side(MPI_Comm inter, int rank, int np)
{
    int info[4] = {np, 12345, 0xbeef, -7};
    int msg[2][3], got[3], seen[NCHILD], i, flag = 0, rsize = -1;
    int v[2], r[2], ag_out, ag_in[NCHILD];
    unsigned char *big;
    MPI_Request req[2];
    MPI_Status st;

    MPI_Comm_test_inter(inter, &flag);
    mtest_check_int("Comm_test_inter(spawn intercomm)", flag, 1);
    MPI_Comm_remote_size(inter, &rsize);
    mtest_check_int("parent: remote size", rsize, NCHILD);
    MPI_Comm_size(inter, &i);
    mtest_check_int("parent: local size of the intercomm", i, np);
    MPI_Comm_rank(inter, &i);
    mtest_check_int("parent: local rank in the intercomm", i, rank);

    /* 1. Bcast parent -> children: our rank 0 is the root. */
    MPI_Bcast(info, 4, MPI_INT, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter);

    /* 2. Each parent rank sends tags 10, 11 to child rank % 2, which receives
     * them with MPI_ANY_SOURCE / MPI_ANY_TAG. */
    for (i = 0; i < 2; i++) {
        msg[i][0] = rank;
        msg[i][1] = 10 + i;
        msg[i][2] = 1000 * rank + 10 + i;
        MPI_Isend(msg[i], 3, MPI_INT, rank % NCHILD, 10 + i, inter, &req[i]);
    }
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);

    /* 3. Every child sends tag 30 + c to every parent rank once it has all its
     * wildcard messages (so the tags 20, 21 below cannot match them). */
    for (i = 0; i < NCHILD; i++)
        seen[i] = 0;
    for (i = 0; i < NCHILD; i++) {
        got[0] = got[1] = got[2] = -1;
        MPI_Recv(got, 3, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, inter, &st);
        if (!mtest_check(got[0] >= 0 && got[0] < NCHILD, "parent: bad child id %d", got[0]))
            continue;
        seen[got[0]]++;
        mtest_check(st.MPI_SOURCE == got[0], "parent: MPI_SOURCE %d for a message of child %d",
                    st.MPI_SOURCE, got[0]);
        mtest_check(st.MPI_TAG == 30 + got[0], "parent: MPI_TAG %d for a message of child %d",
                    st.MPI_TAG, got[0]);
        mtest_check(got[1] == rank && got[2] == 7 * rank + got[0],
                    "parent: child %d sent {%d,%d}, expected {%d,%d}", got[0], got[1], got[2], rank,
                    7 * rank + got[0]);
    }
    for (i = 0; i < NCHILD; i++)
        mtest_check(seen[i] == 1, "parent: %d messages from child %d, expected 1", seen[i], i);

    /* 3b. Tags 20, 21 to child rank % 2, which receives 21 first, by tag. */
    for (i = 0; i < 2; i++) {
        msg[i][0] = rank;
        msg[i][1] = 20 + i;
        msg[i][2] = 1000 * rank + 20 + i;
        MPI_Isend(msg[i], 3, MPI_INT, rank % NCHILD, 20 + i, inter, &req[i]);
    }
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);

    /* 4. Bcast children -> parents (child 0 is the root), small and 128 KiB. */
    v[0] = v[1] = -1;
    MPI_Bcast(v, 2, MPI_INT, 0, inter);
    mtest_check(v[0] == 42 && v[1] == np, "parent: bcast from child gave {%d,%d}, expected {42,%d}",
                v[0], v[1], np);
    big = mtest_malloc(BIG);
    memset(big, 0, BIG);
    MPI_Bcast(big, BIG, MPI_BYTE, 0, inter);
    mtest_verify("parent: 128 KiB bcast from child 0", big, BIG, 0, 77);
    free(big);

    /* 5. Allreduce: each side gets the other side's sum. */
    v[0] = rank + 1;
    v[1] = 1;
    r[0] = r[1] = -1;
    MPI_Allreduce(v, r, 2, MPI_INT, MPI_SUM, inter);
    mtest_check(r[0] == 300 && r[1] == NCHILD, "parent: allreduce {%d,%d}, expected {300,%d}", r[0],
                r[1], NCHILD);

    /* 6. Barrier. */
    MPI_Barrier(inter);

    /* 7. Allgather: parents get the children's values. */
    ag_out = 3 * rank + 1;
    for (i = 0; i < NCHILD; i++)
        ag_in[i] = -1;
    MPI_Allgather(&ag_out, 1, MPI_INT, ag_in, 1, MPI_INT, inter);
    for (i = 0; i < NCHILD; i++)
        mtest_check(ag_in[i] == 5 * i + 2, "parent: allgather[%d] = %d, expected %d", i, ag_in[i],
                    5 * i + 2);

    /* 8. Merges: parents low first, then parents high. */
    check_merge(inter, 0, 0, np);
    check_merge(inter, 0, 1, np);
}

static void run_parent(void)
{
    char exe[PATH_MAX];
    char *cargv[] = {CHILD_ARG, NULL};
    int errcodes[NCHILD], rank, np, i, rc, flag = 0, cerrs = -1, zero = 0;
    int *usize = NULL;
    MPI_Comm inter = MPI_COMM_NULL;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);

    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &usize, &flag);
    if (mtest_check(flag, "MPI_UNIVERSE_SIZE is not set"))
        mtest_check(usize != NULL && *usize >= 1, "MPI_UNIVERSE_SIZE is %d, expected >= 1",
                    usize ? *usize : -1);

    mtest_self_exe(exe, sizeof exe);
    for (i = 0; i < NCHILD; i++)
        errcodes[i] = -1;
    rc = MPI_Comm_spawn(exe, cargv, NCHILD, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errcodes);
    mtest_check_rc("MPI_Comm_spawn", rc);
    for (i = 0; i < NCHILD; i++)
        mtest_check(errcodes[i] == MPI_SUCCESS, "errcodes[%d] = %d, expected MPI_SUCCESS", i,
                    errcodes[i]);
    if (!mtest_check(inter != MPI_COMM_NULL, "MPI_Comm_spawn returned MPI_COMM_NULL"))
        return;

    parent_side(inter, rank, np);

    /* The children's error count, then disconnect. */
    MPI_Allreduce(&zero, &cerrs, 1, MPI_INT, MPI_SUM, inter);
    if (rank == 0)
        mtest_check(cerrs == 0, "the children found %d errors", cerrs);
    MPI_Comm_disconnect(&inter);
    mtest_check(inter == MPI_COMM_NULL, "parent: disconnect left the handle set");
}

/* ---- child ------------------------------------------------------------- */

static void child_side(MPI_Comm parent, int c)
{
    int info[4] = {0, 0, 0, 0};
    int got[3], i, k, np, rsize = -1, flag = 0, wsize = -1, nsrc, *seen, *order;
    int v[2], r[2], ag_out, *ag_in, *appnum = NULL;
    unsigned char *big;
    MPI_Request *reqs;
    MPI_Status st;

    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    mtest_check_int("child: MPI_COMM_WORLD size", wsize, NCHILD);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
    if (mtest_check(flag, "child: MPI_APPNUM is not set"))
        mtest_check(appnum != NULL && *appnum == 0, "child: MPI_APPNUM is %d, expected 0",
                    appnum ? *appnum : -1);
    MPI_Comm_test_inter(parent, &flag);
    mtest_check_int("child: Comm_test_inter(parent)", flag, 1);

    /* 1. Bcast from parent rank 0. */
    MPI_Bcast(info, 4, MPI_INT, 0, parent);
    mtest_check(info[1] == 12345 && info[2] == 0xbeef && info[3] == -7,
                "child: bcast from parent gave {%d,%d,%d,%d}", info[0], info[1], info[2], info[3]);
    np = info[0];
    MPI_Comm_remote_size(parent, &rsize);
    mtest_check(rsize == np, "child: remote size %d, parent says it has %d ranks", rsize, np);
    if (np < 1 || np > 4096 || rsize != np) {
        mtest_fail("child: cannot go on with parent size %d", np);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }

    /* 2. From every parent rank p with p % 2 == c: tags 10, 11 by wildcard. */
    nsrc = 0;
    for (i = c; i < np; i += NCHILD)
        nsrc++;
    seen = calloc((size_t)np, sizeof(int));
    order = calloc((size_t)np, sizeof(int));
    for (k = 0; k < 2 * nsrc; k++) {
        got[0] = got[1] = got[2] = -1;
        MPI_Recv(got, 3, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, parent, &st);
        if (!mtest_check(got[0] >= 0 && got[0] < np && got[0] % NCHILD == c,
                         "child %d: message of unexpected parent rank %d", c, got[0]))
            continue;
        mtest_check(st.MPI_SOURCE == got[0], "child %d: MPI_SOURCE %d for a message of parent %d",
                    c, st.MPI_SOURCE, got[0]);
        mtest_check(st.MPI_TAG == got[1], "child %d: MPI_TAG %d for a message with tag %d", c,
                    st.MPI_TAG, got[1]);
        /* non-overtaking: from one source, tag 10 arrives before tag 11 */
        mtest_check(got[1] == 10 + order[got[0]],
                    "child %d: from parent %d got tag %d, expected %d", c, got[0], got[1],
                    10 + order[got[0]]);
        mtest_check(got[2] == 1000 * got[0] + got[1], "child %d: payload %d from parent %d", c,
                    got[2], got[0]);
        order[got[0]]++;
        seen[got[0]]++;
    }
    for (i = c; i < np; i += NCHILD)
        mtest_check(seen[i] == 2, "child %d: %d messages from parent %d, expected 2", c, seen[i],
                    i);
    free(seen);
    free(order);

    /* 3. To every parent rank: tag 30 + c. */
    reqs = mtest_malloc(sizeof(MPI_Request) * (size_t)np);
    {
        int(*outs)[3] = mtest_malloc(sizeof(int[3]) * (size_t)np);

        for (i = 0; i < np; i++) {
            outs[i][0] = c;
            outs[i][1] = i;
            outs[i][2] = 7 * i + c;
            MPI_Isend(outs[i], 3, MPI_INT, i, 30 + c, parent, &reqs[i]);
        }
        MPI_Waitall(np, reqs, MPI_STATUSES_IGNORE);
        free(outs);
    }
    free(reqs);

    /* 3b. From every parent rank p with p % 2 == c: tag 21, then tag 20. */
    for (i = c; i < np; i += NCHILD) {
        for (k = 21; k >= 20; k--) {
            got[0] = got[1] = got[2] = -1;
            MPI_Recv(got, 3, MPI_INT, i, k, parent, &st);
            mtest_check(st.MPI_SOURCE == i && st.MPI_TAG == k,
                        "child %d: status (%d,%d), expected (%d,%d)", c, st.MPI_SOURCE, st.MPI_TAG,
                        i, k);
            mtest_check(got[0] == i && got[1] == k && got[2] == 1000 * i + k,
                        "child %d: tag-%d message from parent %d is {%d,%d,%d}", c, k, i, got[0],
                        got[1], got[2]);
        }
    }

    /* 4. Bcast children -> parents: child 0 is the root. */
    v[0] = 42;
    v[1] = np;
    MPI_Bcast(v, 2, MPI_INT, c == 0 ? MPI_ROOT : MPI_PROC_NULL, parent);
    big = mtest_malloc(BIG);
    mtest_fill(big, BIG, 0, 77);
    MPI_Bcast(big, BIG, MPI_BYTE, c == 0 ? MPI_ROOT : MPI_PROC_NULL, parent);
    free(big);

    /* 5. Allreduce. */
    v[0] = 100 * (c + 1);
    v[1] = 1;
    r[0] = r[1] = -1;
    MPI_Allreduce(v, r, 2, MPI_INT, MPI_SUM, parent);
    mtest_check(r[0] == np * (np + 1) / 2 && r[1] == np,
                "child %d: allreduce {%d,%d}, expected {%d,%d}", c, r[0], r[1], np * (np + 1) / 2,
                np);

    /* 6. Barrier. */
    MPI_Barrier(parent);

    /* 7. Allgather. */
    ag_out = 5 * c + 2;
    ag_in = mtest_malloc(sizeof(int) * (size_t)np);
    for (i = 0; i < np; i++)
        ag_in[i] = -1;
    MPI_Allgather(&ag_out, 1, MPI_INT, ag_in, 1, MPI_INT, parent);
    for (i = 0; i < np; i++)
        mtest_check(ag_in[i] == 3 * i + 1, "child %d: allgather[%d] = %d, expected %d", c, i,
                    ag_in[i], 3 * i + 1);
    free(ag_in);

    /* 8. Merges: children high first (parents low), then children low. */
    check_merge(parent, 1, 1, np);
    check_merge(parent, 1, 0, np);
}

static int run_child(MPI_Comm parent, int argc, char **argv)
{
    int c = -1, perrs = -1;
    MPI_Comm again = MPI_COMM_NULL;

    MPI_Comm_rank(MPI_COMM_WORLD, &c);
    mtest_wrank = 100 + c;
    mtest_check(argc == 2 && strcmp(argv[1], CHILD_ARG) == 0,
                "child: argc %d, argv[1] '%s', expected 2 and '%s'", argc,
                argc > 1 ? argv[1] : "(none)", CHILD_ARG);
    MPI_Comm_get_parent(&again);
    mtest_check(again == parent, "child: MPI_Comm_get_parent returns another handle the 2nd time");

    child_side(parent, c);

    /* Our error count to the parent (it gets the children's sum), then done. */
    MPI_Allreduce(&mtest_errs, &perrs, 1, MPI_INT, MPI_SUM, parent);
    MPI_Comm_disconnect(&parent);
    if (parent != MPI_COMM_NULL)
        fprintf(stderr, "[rank %d] child: disconnect left the handle set\n", mtest_wrank);
    MPI_Finalize();
    return mtest_errs == 0 && parent == MPI_COMM_NULL ? 0 : 1;
}

int main(int argc, char **argv)
{
    MPI_Comm parent = MPI_COMM_NULL;

    mtest_init(&argc, &argv);
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL)
        return run_child(parent, argc, argv);
    mtest_check(argc < 2 || strcmp(argv[1], CHILD_ARG) != 0,
                "started with %s but MPI_Comm_get_parent is MPI_COMM_NULL", CHILD_ARG);
    run_parent();
    return mtest_finalize();
}
