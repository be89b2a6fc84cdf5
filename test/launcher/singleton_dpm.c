/* Launcher test: an MPI program started without mpirun (a singleton) that
 * needs a process manager: the library starts an assist daemon on demand
 * (docs/launcher.md, "Singletons"). Run by singleton_test.sh.
 *
 *   singleton_dpm spawn      spawns 2 children (this program, "child"): errcodes, sizes,
 *                            a bcast and an allreduce over the inter-communicator, the
 *                            children's stdout lines; then its own fork()ed child is the
 *                            only one wait() sees (the daemon is not our child)
 *   singleton_dpm names      MPI_Publish_name / MPI_Lookup_name / MPI_Unpublish_name
 *   singleton_dpm plain      MPI_Init and MPI_Finalize only
 *   singleton_dpm early      spawns 2 children that outlive its MPI_Finalize (they sleep
 *                            2 s after the disconnect, then print)
 *   singleton_dpm hang       spawns 2 children that wait forever, prints "spawned", waits
 *                            forever too (the test kills it)
 *   singleton_dpm childfail  spawns 1 child that exits with status 3 (the run ends)
 *   singleton_dpm abort      spawns 2 children that wait forever, then MPI_Abort(7)
 *   singleton_dpm after N    spawns 2 children that say so and disconnect, then wait
 *                            forever; disconnects, calls MPI_Finalize, prints "finalized",
 *                            exits with status N
 *   singleton_dpm after pause  ... prints "finalized" and waits forever (the test kills it)
 *   singleton_dpm nompirun   spawn and a name call fail cleanly (DCFA_MPIRUN is bad)
 * Prints " No Errors" when its checks passed. */
#include <mpi.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static int errs;

#define CHECK(cond, ...)                                      \
    do {                                                      \
        if (!(cond)) {                                        \
            fprintf(stderr, "singleton_dpm line %d: ", __LINE__); \
            fprintf(stderr, __VA_ARGS__);                     \
            fprintf(stderr, "\n");                            \
            errs++;                                           \
        }                                                     \
    } while (0)

static char self[PATH_MAX];

static int child_main(const char *mode)
{
    MPI_Comm parent;
    int rank, size, v = 0, sum = 0;

    MPI_Init(NULL, NULL);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_get_parent(&parent);
    if (parent == MPI_COMM_NULL) {
        fprintf(stderr, "child %d: no parent\n", rank);
        return 1;
    }
    if (strcmp(mode, "fail") == 0)
        _exit(3);
    if (strcmp(mode, "hang") == 0 || strcmp(mode, "hold") == 0) {
        printf("child rank %d pid %ld waiting\n", rank, (long)getpid());
        fflush(stdout);
        if (mode[1] == 'o') { /* hold: the parent knows we printed, we part */
            MPI_Send(&rank, 1, MPI_INT, 0, 0, parent);
            MPI_Comm_disconnect(&parent);
        }
        for (;;)
            pause();
    }
    MPI_Bcast(&v, 1, MPI_INT, 0, parent);
    int mine = 10 + rank;
    MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, parent);
    MPI_Comm_disconnect(&parent);
    if (strcmp(mode, "late") == 0)
        sleep(2);
    printf("child rank %d of %d got %d sum %d%s\n", rank, size, v, sum,
           strcmp(mode, "late") == 0 ? " late" : "");
    fflush(stdout);
    MPI_Finalize();
    return 0;
}

/* Spawns n copies of this program in child mode cmode. */
static MPI_Comm spawn(int n, const char *cmode)
{
    char *args[] = {"child", (char *)cmode, NULL};
    int codes[4] = {-1, -1, -1, -1}, rc, rsize = -1;
    MPI_Comm inter = MPI_COMM_NULL;

    rc = MPI_Comm_spawn(self, args, n, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter, codes);
    CHECK(rc == MPI_SUCCESS, "MPI_Comm_spawn: %d", rc);
    for (int i = 0; i < n; i++)
        CHECK(codes[i] == MPI_SUCCESS, "errcodes[%d] = %d", i, codes[i]);
    if (inter != MPI_COMM_NULL) {
        MPI_Comm_remote_size(inter, &rsize);
        CHECK(rsize == n, "remote size %d", rsize);
    }
    return inter;
}

static void exchange(MPI_Comm inter)
{
    int v = 42, mine = 5, sum = -1;

    MPI_Bcast(&v, 1, MPI_INT, MPI_ROOT, inter);
    MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, inter);
    CHECK(sum == 21, "allreduce from the children: %d", sum);
    MPI_Comm_disconnect(&inter);
}

static void names(void)
{
    char port[MPI_MAX_PORT_NAME], got[MPI_MAX_PORT_NAME] = "", svc[64];
    int rc;

    snprintf(svc, sizeof(svc), "singleton-dpm-%ld", (long)getpid());
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    snprintf(port, sizeof(port), "fake-port-%ld", (long)getpid());
    rc = MPI_Publish_name(svc, MPI_INFO_NULL, port);
    CHECK(rc == MPI_SUCCESS, "MPI_Publish_name: %d", rc);
    rc = MPI_Lookup_name(svc, MPI_INFO_NULL, got);
    CHECK(rc == MPI_SUCCESS && strcmp(got, port) == 0, "MPI_Lookup_name: %d '%s'", rc, got);
    rc = MPI_Publish_name(svc, MPI_INFO_NULL, port);
    CHECK(rc != MPI_SUCCESS, "a second MPI_Publish_name of one name succeeded");
    rc = MPI_Unpublish_name(svc, MPI_INFO_NULL, port);
    CHECK(rc == MPI_SUCCESS, "MPI_Unpublish_name: %d", rc);
    rc = MPI_Lookup_name(svc, MPI_INFO_NULL, got);
    CHECK(rc != MPI_SUCCESS, "MPI_Lookup_name after MPI_Unpublish_name succeeded");
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int size = 0, flag = 0, *usize = NULL;
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

    if (n <= 0)
        return 1;
    self[n] = '\0';
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (strcmp(mode, "child") == 0)
        return child_main(argc > 2 ? argv[2] : "");
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 1, "a singleton's world has %d processes", size);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &usize, &flag);
    if (getenv("DCFA_UNIVERSE_SIZE") != NULL)
        CHECK(flag && *usize == atoi(getenv("DCFA_UNIVERSE_SIZE")), "MPI_UNIVERSE_SIZE %d",
              flag ? *usize : -1);
    if (strcmp(mode, "spawn") == 0) {
        exchange(spawn(2, "plain"));
        /* our own child: wait() must see it, and nothing else */
        pid_t pid = fork(), got;
        int st = 0;
        if (pid == 0)
            _exit(7);
        got = wait(&st);
        CHECK(got == pid && WIFEXITED(st) && WEXITSTATUS(st) == 7, "wait: %ld (status %d)",
              (long)got, st);
        got = wait(&st);
        CHECK(got == -1 && errno == ECHILD, "another child: %ld", (long)got);
        names(); /* the same daemon */
    } else if (strcmp(mode, "names") == 0) {
        names();
    } else if (strcmp(mode, "plain") == 0) {
        /* nothing */
    } else if (strcmp(mode, "early") == 0) {
        exchange(spawn(2, "late"));
    } else if (strcmp(mode, "hang") == 0 || strcmp(mode, "abort") == 0) {
        spawn(2, "hang");
        printf("spawned\n");
        fflush(stdout);
        if (mode[0] == 'a') {
            sleep(1);
            MPI_Abort(MPI_COMM_WORLD, 7);
        }
        for (;;)
            pause();
    } else if (strcmp(mode, "after") == 0 && argc > 2) {
        /* the children disconnect, then go on (for ever) */
        MPI_Comm inter = spawn(2, "hold");
        int r;
        for (int i = 0; i < 2 && inter != MPI_COMM_NULL; i++)
            MPI_Recv(&r, 1, MPI_INT, MPI_ANY_SOURCE, 0, inter, MPI_STATUS_IGNORE);
        if (inter != MPI_COMM_NULL)
            MPI_Comm_disconnect(&inter);
        MPI_Finalize();
        printf("finalized\n");
        fflush(stdout);
        if (strcmp(argv[2], "pause") == 0)
            for (;;)
                pause();
        return atoi(argv[2]);
    } else if (strcmp(mode, "childfail") == 0) {
        spawn(1, "fail");
        printf("spawned\n");
        fflush(stdout);
        for (;;) /* the daemon ends us when the child fails */
            pause();
    } else if (strcmp(mode, "nompirun") == 0) {
        char *args[] = {"child", "plain", NULL};
        char port[MPI_MAX_PORT_NAME] = "";
        MPI_Comm inter = MPI_COMM_NULL;
        int code = MPI_SUCCESS, rc;
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        rc = MPI_Comm_spawn(self, args, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter, &code);
        CHECK(rc != MPI_SUCCESS && code != MPI_SUCCESS, "spawn without mpirun: %d %d", rc, code);
        rc = MPI_Lookup_name("singleton-dpm-none", MPI_INFO_NULL, port);
        CHECK(rc != MPI_SUCCESS, "lookup without mpirun succeeded");
    } else {
        fprintf(stderr, "usage: singleton_dpm spawn|names|plain|early|hang|childfail|abort|"
                        "after N|nompirun\n");
        return 2;
    }
    MPI_Finalize();
    if (errs == 0)
        printf(" No Errors\n");
    return errs != 0;
}
