/* MPI_Comm_spawn corners, from a parent job of any size (root 0):
 *   1. argv reaches the child exactly: blanks, quotes, shell and glob
 *      characters, a backslash, '=' and '%', a tab, a newline, UTF-8, an
 *      empty string, "-n" and "--", a 300-byte argument;
 *   2. a program that does not exist: with MPI_ERRORS_RETURN on
 *      MPI_COMM_WORLD the call returns an error (MPI_ERR_SPAWN is what the
 *      standard suggests; any class but MPI_SUCCESS is accepted, another one
 *      noted on stderr), every errcode is an error, and the parent goes on: a
 *      world allreduce, then the next spawn works;
 *   3. info key "wdir": the child's getcwd() is that directory (a fresh one
 *      made by the parent under /tmp, so it cannot be the launcher's cwd).
 * Open MPI 4.1 cannot run part 2: its mpirun ends the whole job when a
 * spawned program cannot be started ("unable to launch the specified
 * application"), whatever the error handler. SPAWN_ARGS_SKIP_MISSING=1 in the
 * environment skips part 2, for such reference runs only (the test list
 * never sets it).
 * Children check what they got and report their error count to the parent
 * (allreduce over the inter-communicator); they print nothing; their stderr
 * lines are tagged "rank 100+". */
#include "mtest.h"
#include <errno.h>
#include <limits.h>
#include <unistd.h>

#define CHILD_ARGS "--spawn-args-argv"
#define CHILD_WDIR "--spawn-args-wdir"
#define NONEXIST   "/nonexistent-dcfa-dir/no-such-program"

static char long_arg[301];

/* The arguments after CHILD_ARGS; NULL-terminated. */
static const char *special_args[] = {
    "hello world",
    "  leading and trailing  ",
    "double\"quote",
    "single'quote",
    "$HOME ${PATH} `id` $(id)",
    "*?[a-z]~",
    "back\\slash\\",
    "semi;colon&amp|pipe<in>out",
    "key=value=more",
    "100% %s %d %n",
    "tab\there",
    "new\nline",
    "",
    "caf\xc3\xa9 \xe2\x82\xac",
    "-n",
    "--",
    long_arg,
    NULL,
};

static void make_long_arg(void)
{
    int i;

    for (i = 0; i < 300; i++)
        long_arg[i] = (char)('a' + i % 26);
    long_arg[300] = '\0';
}

/* Spawn 1 child of exe with argv; collect its error count; disconnect. */
static void spawn_one(const char *what, const char *exe, char **argv, MPI_Info info, int rank)
{
    MPI_Comm inter = MPI_COMM_NULL;
    int errcode = -1, rc, zero = 0, cerrs = -1, rsize = -1;

    rc = MPI_Comm_spawn(exe, argv, 1, info, 0, MPI_COMM_WORLD, &inter, &errcode);
    mtest_check_rc(what, rc);
    mtest_check(errcode == MPI_SUCCESS, "%s: errcode %d, expected MPI_SUCCESS", what, errcode);
    if (rc != MPI_SUCCESS || inter == MPI_COMM_NULL) {
        mtest_fail("%s: no inter-communicator", what);
        return;
    }
    MPI_Comm_remote_size(inter, &rsize);
    mtest_check(rsize == 1, "%s: remote size %d", what, rsize);
    MPI_Allreduce(&zero, &cerrs, 1, MPI_INT, MPI_SUM, inter);
    if (rank == 0)
        mtest_check(cerrs == 0, "%s: the child found %d errors", what, cerrs);
    MPI_Comm_disconnect(&inter);
}

/* Part 2: spawn a program that does not exist; the error comes back. */
static void spawn_missing(int rank, int np)
{
    char *argv[2] = {CHILD_ARGS, NULL};
    int i, rc, cls = -1, errcodes[2], sum = -1;
    MPI_Comm inter = MPI_COMM_NULL;

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    errcodes[0] = errcodes[1] = MPI_SUCCESS;
    rc = MPI_Comm_spawn(NONEXIST, argv, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errcodes);
    if (mtest_check(rc != MPI_SUCCESS, "spawn of %s succeeded", NONEXIST)) {
        MPI_Error_class(rc, &cls);
        if (cls != MPI_ERR_SPAWN && rank == 0)
            fprintf(stderr,
                    "[rank %d] note: spawn of a missing program: error class %d, not "
                    "MPI_ERR_SPAWN (%d)\n",
                    rank, cls, MPI_ERR_SPAWN);
    }
    for (i = 0; i < 2; i++)
        mtest_check(errcodes[i] != MPI_SUCCESS, "spawn of %s: errcodes[%d] is MPI_SUCCESS",
                    NONEXIST, i);
    if (rc == MPI_SUCCESS && inter != MPI_COMM_NULL)
        MPI_Comm_disconnect(&inter);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    /* the parent goes on working (and the next spawn works) */
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    mtest_check_int("allreduce after the failed spawn", sum, np * (np - 1) / 2);
}

static void run_parent(void)
{
    char exe[PATH_MAX], dir[64];
    char *argv[32];
    const char *skip = getenv("SPAWN_ARGS_SKIP_MISSING");
    int rank, np, i, n;
    MPI_Info info;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    mtest_self_exe(exe, sizeof exe);

    /* 1. argv. */
    n = 0;
    argv[n++] = CHILD_ARGS;
    for (i = 0; special_args[i] != NULL; i++)
        argv[n++] = (char *)special_args[i];
    argv[n] = NULL;
    spawn_one("spawn with special arguments", exe, argv, MPI_INFO_NULL, rank);

    /* 2. A program that does not exist. */
    if (skip == NULL || strcmp(skip, "1") != 0)
        spawn_missing(rank, np);

    /* 3. wdir: a directory of our own under /tmp (made by rank 0: only the
     * root's info counts). */
    memset(dir, 0, sizeof dir);
    if (rank == 0) {
        strcpy(dir, "/tmp/spawn_args.XXXXXX");
        if (mkdtemp(dir) == NULL) {
            mtest_fail("mkdtemp: %s", strerror(errno));
            strcpy(dir, "/tmp");
        }
    }
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Info_create(&info);
    MPI_Info_set(info, "wdir", dir);
    argv[0] = CHILD_WDIR;
    argv[1] = dir;
    argv[2] = NULL;
    spawn_one("spawn with info wdir", exe, argv, info, rank);
    MPI_Info_free(&info);
    if (rank == 0 && strcmp(dir, "/tmp") != 0 && rmdir(dir) != 0)
        mtest_fail("rmdir %s: %s", dir, strerror(errno));
}

static void child_args(int argc, char **argv)
{
    int i, n = 0;

    while (special_args[n] != NULL)
        n++;
    if (!mtest_check(argc == n + 2, "child: argc %d, expected %d", argc, n + 2))
        return;
    for (i = 0; i < n; i++)
        mtest_check(strcmp(argv[i + 2], special_args[i]) == 0,
                    "child: argv[%d] is '%s' (%zu bytes), expected '%s' (%zu bytes)", i + 2,
                    argv[i + 2], strlen(argv[i + 2]), special_args[i], strlen(special_args[i]));
    mtest_check(argv[argc] == NULL, "child: argv[argc] is not NULL");
}

static void child_wdir(int argc, char **argv)
{
    char cwd[PATH_MAX], want[PATH_MAX];

    if (!mtest_check(argc == 3, "child (wdir): argc %d, expected 3", argc))
        return;
    if (!mtest_check(getcwd(cwd, sizeof cwd) != NULL, "child: getcwd: %s", strerror(errno)))
        return;
    if (realpath(argv[2], want) == NULL)
        snprintf(want, sizeof want, "%s", argv[2]);
    mtest_check(strcmp(cwd, want) == 0, "child: cwd is '%s', expected '%s'", cwd, want);
}

static int run_child(MPI_Comm parent, int argc, char **argv)
{
    int wrank = -1, wsize = -1, perrs = -1;

    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    mtest_wrank = 100 + wrank;
    mtest_check_int("child: world size", wsize, 1);
    if (argc >= 2 && strcmp(argv[1], CHILD_ARGS) == 0)
        child_args(argc, argv);
    else if (argc >= 2 && strcmp(argv[1], CHILD_WDIR) == 0)
        child_wdir(argc, argv);
    else
        mtest_fail("child: unexpected argv[1] '%s' (argc %d)", argc > 1 ? argv[1] : "", argc);

    MPI_Allreduce(&mtest_errs, &perrs, 1, MPI_INT, MPI_SUM, parent);
    MPI_Comm_disconnect(&parent);
    MPI_Finalize();
    return mtest_errs == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    MPI_Comm parent = MPI_COMM_NULL;

    make_long_arg();
    mtest_init(&argc, &argv);
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL)
        return run_child(parent, argc, argv);
    run_parent();
    return mtest_finalize();
}
