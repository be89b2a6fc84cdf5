/* Concurrent spawns, as mpi4py's test_spawn makes them (issue 33 item 5: its
 * TestSpawnSingleSelf.testNoArgs, every rank spawning one child on
 * MPI_COMM_SELF at the same time, once hung at 3 ranks on a busy machine).
 * ROUNDS times (argv[1], default 10): a spawn of 1 + 2 children by the whole
 * world (MPI_Comm_spawn_multiple, as TestSpawnMultipleWorld), then on
 * MPI_COMM_SELF one child per rank, all at once (TestSpawnSingleSelf); each
 * followed by a barrier over the inter-communicator, a message each way
 * between every parent and every child, and a disconnect. Children sleep a
 * random 0-20 ms before and inside their part, as children that take their
 * time to start (Python's) do. With SPAWN_SELF_LOAD=1 rank 0 also starts
 * one busy-looping process per online CPU for the whole run (ended before it
 * returns), so everyone is preempted in the middle of the exchanges.
 *
 * With SPAWN_SELF_NAMES=1 (test list variant "names", expected to fail): rank
 * 0 spawns one child, they meet in a barrier over the inter-communicator, each
 * posts a receive the other never satisfies and prints its hang report
 * (SIGUSR1), then both exit 1 after a second barrier. The report lines must
 * name the other process with its job: the child's own lines say "rank 0 of
 * job <id>_1", and each names its connection to the other as "rank 0 of job
 * <the other's id>" (a world rank and a child were both "process N" before). */
#include "mtest.h"
#include <limits.h>
#include <signal.h>
#include <sys/wait.h>

#define CHILD_ARG "--spawn-self-child"
#define MAX_LOAD  64

static pid_t load_pids[MAX_LOAD];
static int nload;

static void load_start(void)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

    for (long i = 0; i < ncpu && nload < MAX_LOAD; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            alarm(600); /* never outlives a lost parent for long */
            for (volatile unsigned long x = 0;; x++)
                ;
        }
        if (pid > 0)
            load_pids[nload++] = pid;
    }
}

static void load_stop(void)
{
    for (int i = 0; i < nload; i++) {
        kill(load_pids[i], SIGKILL);
        waitpid(load_pids[i], NULL, 0);
    }
    nload = 0;
}

static void jitter(void) { mtest_sleep_ms(rand() % 21); }

/* every member of one group sends its value to every member of the other and checks
 * what it gets: the value of the sender's rank */
static void exchange(MPI_Comm inter, int tag, const char *who, int round)
{
    int rank, rsize;
    MPI_Comm_rank(inter, &rank);
    MPI_Comm_remote_size(inter, &rsize);
    int *in = malloc((size_t)rsize * sizeof(int));
    MPI_Request *rq = malloc((size_t)(2 * rsize) * sizeof(MPI_Request));
    int out = 1000 * round + rank;
    for (int r = 0; r < rsize; r++) {
        MPI_Irecv(&in[r], 1, MPI_INT, r, tag, inter, &rq[r]);
        MPI_Isend(&out, 1, MPI_INT, r, tag, inter, &rq[rsize + r]);
    }
    MPI_Waitall(2 * rsize, rq, MPI_STATUSES_IGNORE);
    for (int r = 0; r < rsize; r++)
        mtest_check(in[r] == 1000 * round + r,
                    "%s round %d: got %d from remote rank %d, expected %d", who, round, in[r], r,
                    1000 * round + r);
    free(in);
    free(rq);
}

/* the names mode: a receive that stays pending, the hang report, and exit 1 */
static int report_names(MPI_Comm inter)
{
    int v;
    MPI_Request rq;
    MPI_Barrier(inter);
    MPI_Irecv(&v, 1, MPI_INT, 0, 9, inter, &rq);
    raise(SIGUSR1);
    MPI_Barrier(inter); /* both reported before either exits */
    return 1;
}

static int run_child(MPI_Comm parent, int argc, char **argv)
{
    mtest_wrank = 100;
    if (argc == 3 && strcmp(argv[2], "names") == 0)
        return report_names(parent);
    srand((unsigned)getpid());
    mtest_check(argc == 3 && strcmp(argv[1], CHILD_ARG) == 0, "child: unexpected arguments");
    int round = argc == 3 ? atoi(argv[2]) : -1;
    jitter();
    MPI_Barrier(parent);
    jitter();
    exchange(parent, 5, "child", round);
    MPI_Comm_disconnect(&parent);
    MPI_Finalize();
    return mtest_errs != 0;
}

int main(int argc, char **argv)
{
    MPI_Comm parent = MPI_COMM_NULL;
    char exe[PATH_MAX];
    int rounds = 10, rank;
    const char *load = getenv("SPAWN_SELF_LOAD");

    if (argc == 3 && strcmp(argv[1], CHILD_ARG) == 0) /* as Python children: slow to start */
        srand((unsigned)getpid()), jitter();
    mtest_init(&argc, &argv);
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL)
        return run_child(parent, argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (getenv("SPAWN_SELF_NAMES") && atoi(getenv("SPAWN_SELF_NAMES")) > 0) {
        char *args[] = {CHILD_ARG, "names", NULL};
        MPI_Comm inter;
        mtest_self_exe(exe, sizeof exe);
        MPI_Comm_spawn(exe, args, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter, MPI_ERRCODES_IGNORE);
        return report_names(inter);
    }
    if (argc >= 2)
        rounds = atoi(argv[1]);
    srand((unsigned)getpid());
    mtest_self_exe(exe, sizeof exe);
    if (rank == 0 && load != NULL && atoi(load) > 0)
        load_start();
    for (int it = 0; it < rounds && mtest_errs == 0; it++) {
        char round[32];
        snprintf(round, sizeof round, "%d", it);
        char *args[] = {CHILD_ARG, round, NULL};
        for (int self = 0; self < 2 && mtest_errs == 0; self++) {
            MPI_Comm inter = MPI_COMM_NULL, comm = self ? MPI_COMM_SELF : MPI_COMM_WORLD;
            int errcodes[3] = {-1, -1, -1}, rc;
            if (!self) /* as mpi4py: nothing keeps the ranks together in the self spawns */
                MPI_Barrier(MPI_COMM_WORLD);
            if (self) {
                rc = MPI_Comm_spawn(exe, args, 1, MPI_INFO_NULL, 0, comm, &inter, errcodes);
            } else {
                char *cmds[2] = {exe, exe};
                char **argvs[2] = {args, args};
                int np[2] = {1, 2};
                MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
                rc = MPI_Comm_spawn_multiple(2, cmds, argvs, np, infos, 0, comm, &inter, errcodes);
            }
            if (!mtest_check_rc(self ? "MPI_Comm_spawn" : "MPI_Comm_spawn_multiple", rc) ||
                inter == MPI_COMM_NULL) {
                mtest_fail("round %d: %s spawn failed", it, self ? "self" : "world");
                break;
            }
            jitter();
            MPI_Barrier(inter);
            exchange(inter, 5, self ? "self parent" : "world parent", it);
            MPI_Comm_disconnect(&inter);
        }
    }
    load_stop();
    return mtest_finalize();
}
