/* Nested spawn: the parent job (any size, root 0) spawns 1 child, which
 * spawns 1 grandchild (argv "--level N" tells them apart; each checks it
 * against MPI_Comm_get_parent). A token goes down parent -> child ->
 * grandchild, data comes back up grandchild -> child -> parent:
 *   grandchild: gets the token t, sends {t * 3, 777} and a 64 KiB pattern;
 *   child:      receives them, checks, sends {t * 3 + 1, 777 + 1000} and the
 *               pattern on to every parent rank;
 *   parent:     checks what arrived.
 * Error counts travel up the same way (allreduce over each inter-
 * communicator), then every level disconnects. Children print nothing; their
 * stderr lines are tagged "rank 100" (child) and "rank 200" (grandchild). */
#include "mtest.h"
#include <limits.h>
#include <unistd.h>

#define LEVEL_ARG "--level"
#define BIG       (64 * 1024)

/* Spawn 1 process at the next level (collective over MPI_COMM_WORLD). */
static MPI_Comm spawn_level(int level)
{
    char exe[PATH_MAX], lv[16];
    char *argv[] = {LEVEL_ARG, lv, NULL};
    MPI_Comm inter = MPI_COMM_NULL;
    int errcode = -1, rc, rsize = -1;

    mtest_self_exe(exe, sizeof exe);
    snprintf(lv, sizeof lv, "%d", level);
    rc = MPI_Comm_spawn(exe, argv, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, &errcode);
    mtest_check_rc("MPI_Comm_spawn", rc);
    mtest_check(errcode == MPI_SUCCESS, "spawn of level %d: errcode %d", level, errcode);
    if (inter == MPI_COMM_NULL) {
        mtest_fail("spawn of level %d returned MPI_COMM_NULL", level);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    MPI_Comm_remote_size(inter, &rsize);
    mtest_check(rsize == 1, "spawn of level %d: remote size %d", level, rsize);
    return inter;
}

static void run_parent(void)
{
    int rank, np, token[2], got[2] = {-1, -1}, zero = 0, cerrs = -1;
    unsigned char *big = mtest_malloc(BIG);
    MPI_Comm inter;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    inter = spawn_level(1);

    token[0] = 4321;
    token[1] = np;
    MPI_Bcast(token, 2, MPI_INT, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter);

    MPI_Recv(got, 2, MPI_INT, 0, 11, inter, MPI_STATUS_IGNORE);
    mtest_check(got[0] == 4321 * 3 + 1 && got[1] == 1777,
                "parent: from the child {%d,%d}, expected {%d,1777}", got[0], got[1], 4321 * 3 + 1);
    memset(big, 0, BIG);
    MPI_Recv(big, BIG, MPI_BYTE, 0, 12, inter, MPI_STATUS_IGNORE);
    mtest_verify("parent: grandchild's pattern via the child", big, BIG, 2, 12);
    free(big);

    MPI_Allreduce(&zero, &cerrs, 1, MPI_INT, MPI_SUM, inter);
    if (rank == 0)
        mtest_check(cerrs == 0, "the child and grandchild found %d errors", cerrs);
    MPI_Comm_disconnect(&inter);
}

/* Level 1: between the parent job and the grandchild. */
static void run_child(MPI_Comm parent)
{
    int token[2] = {-1, -1}, got[2] = {-1, -1}, out[2], np = -1, rsize = -1, i, zero = 0;
    int gerrs = -1, perrs = -1;
    unsigned char *big = mtest_malloc(BIG);
    MPI_Comm down;

    MPI_Bcast(token, 2, MPI_INT, 0, parent);
    np = token[1];
    MPI_Comm_remote_size(parent, &rsize);
    mtest_check(token[0] == 4321 && rsize == np, "child: token {%d,%d}, remote size %d", token[0],
                token[1], rsize);

    down = spawn_level(2);
    MPI_Bcast(token, 1, MPI_INT, MPI_ROOT, down);
    MPI_Recv(got, 2, MPI_INT, 0, 21, down, MPI_STATUS_IGNORE);
    mtest_check(got[0] == token[0] * 3 && got[1] == 777,
                "child: from the grandchild {%d,%d}, expected {%d,777}", got[0], got[1],
                token[0] * 3);
    memset(big, 0, BIG);
    MPI_Recv(big, BIG, MPI_BYTE, 0, 22, down, MPI_STATUS_IGNORE);
    mtest_verify("child: grandchild's pattern", big, BIG, 2, 12);
    MPI_Allreduce(&zero, &gerrs, 1, MPI_INT, MPI_SUM, down);
    mtest_check(gerrs == 0, "child: the grandchild found %d errors", gerrs);
    MPI_Comm_disconnect(&down);

    out[0] = got[0] + 1;
    out[1] = got[1] + 1000;
    for (i = 0; i < rsize; i++) {
        MPI_Send(out, 2, MPI_INT, i, 11, parent);
        MPI_Send(big, BIG, MPI_BYTE, i, 12, parent);
    }
    free(big);
    MPI_Allreduce(&mtest_errs, &perrs, 1, MPI_INT, MPI_SUM, parent);
    MPI_Comm_disconnect(&parent);
}

/* Level 2: the grandchild. */
static void run_grandchild(MPI_Comm parent)
{
    int token = -1, out[2], perrs = -1, rsize = -1;
    unsigned char *big = mtest_malloc(BIG);

    MPI_Comm_remote_size(parent, &rsize);
    mtest_check(rsize == 1, "grandchild: remote size %d, expected 1 (the child)", rsize);
    MPI_Bcast(&token, 1, MPI_INT, 0, parent);
    mtest_check(token == 4321, "grandchild: token %d, expected 4321", token);
    out[0] = token * 3;
    out[1] = 777;
    MPI_Send(out, 2, MPI_INT, 0, 21, parent);
    mtest_fill(big, BIG, 2, 12);
    MPI_Send(big, BIG, MPI_BYTE, 0, 22, parent);
    free(big);
    MPI_Allreduce(&mtest_errs, &perrs, 1, MPI_INT, MPI_SUM, parent);
    MPI_Comm_disconnect(&parent);
}

int main(int argc, char **argv)
{
    MPI_Comm parent = MPI_COMM_NULL;
    int level = 0, wsize = -1;

    mtest_init(&argc, &argv);
    if (argc == 3 && strcmp(argv[1], LEVEL_ARG) == 0)
        level = atoi(argv[2]);
    MPI_Comm_get_parent(&parent);
    if (parent == MPI_COMM_NULL) {
        mtest_check(level == 0, "level %d but no parent", level);
        run_parent();
        return mtest_finalize();
    }
    mtest_wrank = 100 * (level > 0 ? level : 9);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    mtest_check(wsize == 1, "level %d: world size %d, expected 1", level, wsize);
    if (level == 1) {
        run_child(parent);
    } else if (level == 2) {
        run_grandchild(parent);
    } else {
        /* cannot take part: the others will hang until the test's timeout */
        fprintf(stderr, "[rank %d] spawned with a bad level (argc %d)\n", mtest_wrank, argc);
        MPI_Abort(MPI_COMM_WORLD, 4);
    }
    MPI_Finalize();
    return mtest_errs == 0 ? 0 : 1;
}
