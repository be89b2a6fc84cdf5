/* Another local user must not be able to read a job's messages by planting
 * its shared-memory segments (issue 15 item 8): a process of uid nobody
 * creates, mode 0666, the names the pair's rings and a door will have, before
 * the pair starts. The pair must refuse them loudly (non-zero exit, a message
 * naming the segment and its owner), and nothing may be written into them.
 * Needs root (to act as nobody); without it the test says so and is skipped. */
#include "core/core_impl.h"
#include "ut_kvs.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static core_dt bytes_dt = {.size = 1, .lb = 0, .extent = 1, .true_lb = 0, .true_extent = 1,
                           .contig = 1, .nruns = 1, .runs = &(core_dt_run){0, 1}};

/* as uid/gid 65534, create /dev/shm<name> with mode 0666 */
static int plant(const char *name)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (setgid(65534) != 0 || setuid(65534) != 0)
            _exit(2);
        umask(0);
        int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0666);
        _exit(fd >= 0 ? 0 : 3);
    }
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static int rank_main(int rank, const char *job)
{
    util_tunables_load();
    util_backoff_configure(2);
    util_log_rank = rank;
    core_params cp = {.self = rank, .nprocs = 2, .local_nprocs = 2, .job_id = job,
                      .kvs = {.put = ut_kvs_put, .fence = ut_kvs_fence, .get = ut_kvs_get}};
    if (core_init(&cp) != UTIL_OK)
        return 3;
    char secret[64] = "the secret of rank 0";
    core_req *r;
    if (rank == 0)
        core_isend(secret, sizeof secret, &bytes_dt, 1, 0, 1, 7, CORE_SEND_STD, &r);
    else
        core_irecv(secret, sizeof secret, &bytes_dt, 0, 0, 1, 7, &r);
    if (!r)
        return 4;
    core_wait(r);   /* a refused connection ends the process with a message */
    core_finalize();
    return 0;
}

/* run the pair with these names planted; 0 if both refused and the plants stayed empty */
static int run(const char *what, const char *const *names, int nnames)
{
    char job[64], path[128], log[64];
    snprintf(job, sizeof job, "ug%d", (int)getpid());
    snprintf(log, sizeof log, "/tmp/test_shm_guard.%d.log", (int)getpid());
    for (int i = 0; i < nnames; i++) {
        char name[96];
        snprintf(name, sizeof name, names[i], job);
        if (plant(name) != 0) {
            fprintf(stderr, "FAIL %s: cannot plant %s as nobody\n", what, name);
            return 1;
        }
    }
    ut_kvs_make(2);
    pid_t pids[2];
    for (int r = 0; r < 2; r++) {
        pids[r] = fork();
        if (pids[r] == 0) {
            int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
            dup2(fd, 2);
            alarm(20);  /* a hang is a failure too */
            _exit(rank_main(r, job));
        }
    }
    /* as mpirun does: the first rank to fail ends the other */
    int fails = 0, refused = 0;
    int st;
    pid_t first = wait(&st);
    if (WIFEXITED(st) && WEXITSTATUS(st) != 0)
        refused = 1;
    else if (WIFSIGNALED(st))
        fprintf(stderr, "FAIL %s: rank %d died of signal %d\n", what, first == pids[0] ? 0 : 1,
                WTERMSIG(st));
    for (int k = 0; k < 2; k++)
        if (pids[k] != first)
            kill(pids[k], SIGKILL);
    wait(&st);
    if (refused == 0) {
        fprintf(stderr, "FAIL %s: the pair ran over segments another user planted\n", what);
        fails++;
    }
    char cmd[256];
    snprintf(cmd, sizeof cmd, "grep -q 'someone else' %s", log);
    if (system(cmd) != 0) {
        fprintf(stderr, "FAIL %s: no message about the planted segment; the ranks said:\n", what);
        snprintf(cmd, sizeof cmd, "cat %s >&2", log);
        if (system(cmd) != 0)
            fails++;
        fails++;
    }
    for (int i = 0; i < nnames; i++) {
        struct stat st;
        snprintf(path, sizeof path, "/dev/shm");
        snprintf(path + strlen(path), sizeof path - strlen(path), names[i], job);
        if (stat(path, &st) != 0 || st.st_size != 0) {
            fprintf(stderr, "FAIL %s: planted %s was used (%s, %lld bytes)\n", what, path,
                    stat(path, &st) != 0 ? "gone" : "there", (long long)st.st_size);
            fails++;
        }
        unlink(path);
    }
    snprintf(cmd, sizeof cmd, "rm -f /dev/shm/dcfa-%s-* %s", job, log);
    if (system(cmd) != 0)
        fails++;
    return fails;
}

int main(void)
{
    if (geteuid() != 0) {
        printf("SKIP: acting as another user (nobody) needs root\n");
        return 77;
    }
    int failed = 0;
    /* the rings of both directions */
    failed += run("rings", (const char *const[]){"/dcfa-%s-0-1", "/dcfa-%s-1-0"}, 2) != 0;
    /* the receiver's ring only (the sender's stays its own) */
    failed += run("one ring", (const char *const[]){"/dcfa-%s-1-0"}, 1) != 0;
    /* a door */
    failed += run("door", (const char *const[]){"/dcfa-%s-1"}, 1) != 0;
    printf("%d passed, %d failed\n", 3 - failed, failed);
    return failed ? 1 : 0;
}
