/* MPI_Comm_spawn_multiple, twice, from a parent job of any size (root 0):
 *   round 0: command 0 = this program with argv {CHILD_ARG, "first", "a b"},
 *            1 process; command 1 = this program with MPI_ARGV_NULL, 2
 *            processes;
 *   round 1: MPI_ARGVS_NULL, 2 processes then 1, with an info object (empty)
 *            for the first command and MPI_INFO_NULL for the second.
 * Every errcode is MPI_SUCCESS; the children's MPI_COMM_WORLD holds all 3,
 * ranked in command order; a child's MPI_APPNUM is the index of its command;
 * its argv is exactly what its command got. Each child tells the parent its
 * appnum and world rank (allgather over the inter-communicator) and its error
 * count (allreduce); then both sides disconnect. Children print nothing; their
 * stderr lines are tagged "rank 100+". */
#include "mtest.h"
#include <limits.h>
#include <unistd.h>

#define NTOTAL    3
#define CHILD_ARG "--spawn-multiple-child"

/* Processes per command in each round. */
static const int round_np[2][2] = {{1, 2}, {2, 1}};

static void parent_round(int round, int rank, const char *exe)
{
    char *cmds[2] = {(char *)exe, (char *)exe};
    char *argv0[] = {CHILD_ARG, "first", "a b", NULL};
    char **argvs[2] = {argv0, MPI_ARGV_NULL};
    int maxprocs[2] = {round_np[round][0], round_np[round][1]};
    MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
    int errcodes[NTOTAL], i, rc, rsize = -1, zero = 0, cerrs = -1, info_round[2];
    int mine[2] = {-1, -1}, theirs[2 * NTOTAL];
    MPI_Comm inter = MPI_COMM_NULL;

    for (i = 0; i < NTOTAL; i++)
        errcodes[i] = -1;
    if (round == 0) {
        rc = MPI_Comm_spawn_multiple(2, cmds, argvs, maxprocs, infos, 0, MPI_COMM_WORLD, &inter,
                                     errcodes);
    } else {
        MPI_Info_create(&infos[0]);
        rc = MPI_Comm_spawn_multiple(2, cmds, MPI_ARGVS_NULL, maxprocs, infos, 0, MPI_COMM_WORLD,
                                     &inter, errcodes);
        MPI_Info_free(&infos[0]);
    }
    mtest_check_rc("MPI_Comm_spawn_multiple", rc);
    for (i = 0; i < NTOTAL; i++)
        mtest_check(errcodes[i] == MPI_SUCCESS, "round %d: errcodes[%d] = %d, expected MPI_SUCCESS",
                    round, i, errcodes[i]);
    if (!mtest_check(inter != MPI_COMM_NULL, "round %d: spawn returned MPI_COMM_NULL", round))
        return;
    MPI_Comm_remote_size(inter, &rsize);
    mtest_check(rsize == NTOTAL, "round %d: remote size %d, expected %d", round, rsize, NTOTAL);

    /* The round number, so that the children know what to expect. */
    info_round[0] = round;
    info_round[1] = 4242;
    MPI_Bcast(info_round, 2, MPI_INT, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter);

    /* (appnum, world rank) of every child, in their rank order (the parents
     * contribute nothing). */
    for (i = 0; i < 2 * NTOTAL; i++)
        theirs[i] = -1;
    MPI_Allgather(mine, 0, MPI_INT, theirs, 2, MPI_INT, inter);
    for (i = 0; i < NTOTAL; i++) {
        int want_app = i < round_np[round][0] ? 0 : 1;

        mtest_check(theirs[2 * i] == want_app, "round %d: child %d has MPI_APPNUM %d, expected %d",
                    round, i, theirs[2 * i], want_app);
        mtest_check(theirs[2 * i + 1] == i, "round %d: child %d says it is world rank %d", round, i,
                    theirs[2 * i + 1]);
    }

    MPI_Allreduce(&zero, &cerrs, 1, MPI_INT, MPI_SUM, inter);
    if (rank == 0)
        mtest_check(cerrs == 0, "round %d: the children found %d errors", round, cerrs);
    MPI_Comm_disconnect(&inter);
}

static int run_child(MPI_Comm parent, int argc, char **argv)
{
    int wrank = -1, wsize = -1, flag = 0, *appnum = NULL, app, round_info[2] = {-1, -1};
    int mine[2], perrs = -1, round;

    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    mtest_wrank = 100 + wrank;
    mtest_check_int("child: MPI_COMM_WORLD size", wsize, NTOTAL);

    MPI_Bcast(round_info, 2, MPI_INT, 0, parent);
    round = round_info[0];
    mtest_check(round_info[1] == 4242 && (round == 0 || round == 1),
                "child: bcast from parent gave {%d,%d}", round_info[0], round_info[1]);
    if (round != 1)
        round = 0;

    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
    app = flag && appnum ? *appnum : -1;
    mtest_check(flag, "child: MPI_APPNUM is not set");
    /* command order: the first command's processes have the lowest ranks */
    {
        int want_app = wrank < round_np[round][0] ? 0 : 1;

        mtest_check(app == want_app, "child: round %d, world rank %d: MPI_APPNUM %d, expected %d",
                    round, wrank, app, want_app);
    }

    /* argv: round 0 command 0 has 3 arguments; everything else none. */
    if (round == 0 && app == 0) {
        if (mtest_check(argc == 4, "child: round 0 appnum 0: argc %d, expected 4", argc)) {
            mtest_check(strcmp(argv[1], CHILD_ARG) == 0, "child: argv[1] '%s'", argv[1]);
            mtest_check(strcmp(argv[2], "first") == 0, "child: argv[2] '%s'", argv[2]);
            mtest_check(strcmp(argv[3], "a b") == 0, "child: argv[3] '%s'", argv[3]);
        }
    } else {
        mtest_check(argc == 1, "child: round %d appnum %d: argc %d, expected 1 (argv[1] '%s')",
                    round, app, argc, argc > 1 ? argv[1] : "");
    }
    mtest_check(argc >= 1 && argv[argc] == NULL, "child: argv[argc] is not NULL");

    mine[0] = app;
    mine[1] = wrank;
    MPI_Allgather(mine, 2, MPI_INT, round_info, 0, MPI_INT, parent);

    MPI_Allreduce(&mtest_errs, &perrs, 1, MPI_INT, MPI_SUM, parent);
    MPI_Comm_disconnect(&parent);
    MPI_Finalize();
    return mtest_errs == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    MPI_Comm parent = MPI_COMM_NULL;
    char exe[PATH_MAX];
    int rank;

    mtest_init(&argc, &argv);
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL)
        return run_child(parent, argc, argv);
    mtest_check(argc < 2 || strcmp(argv[1], CHILD_ARG) != 0,
                "started with %s but MPI_Comm_get_parent is MPI_COMM_NULL", CHILD_ARG);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    mtest_self_exe(exe, sizeof exe);
    parent_round(0, rank, exe);
    parent_round(1, rank, exe);
    return mtest_finalize();
}
