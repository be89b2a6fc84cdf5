/* Kills the launcher of a running job with SIGKILL and checks that the job
 * does not outlive it (test/faults, docs/faults.md):
 *
 *   fault_kill MPIRUN NPROCS PROGRAM MODE [MAX_SECONDS]
 *
 * Starts "MPIRUN -n NPROCS PROGRAM MODE" (PROGRAM is fault_prog), waits until
 * every rank reported itself ready, SIGKILLs mpirun, then, as the child
 * subreaper that inherits the orphaned ranks, reaps them. Passes iff every
 * rank exited by itself (status 1, not killed by a signal) within MAX_SECONDS
 * (default 5), each said why on its stderr, and no /dev/shm/dcfa-<job>-*
 * entry is left. Whatever is left is killed / removed, and reported. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAXP 64

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int read_ready(const char *dir, int rank, int *pid, char *job, size_t joblen)
{
    char path[4096], fmt[32];
    snprintf(path, sizeof path, "%s/ready.%d", dir, rank);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    snprintf(fmt, sizeof fmt, "%%d %%%zus", joblen - 1);
    int ok = fscanf(f, fmt, pid, job) == 2;
    fclose(f);
    return ok;
}

static int shm_left(const char *job, int remove)
{
    char prefix[128];
    snprintf(prefix, sizeof prefix, "dcfa-%s-", job);
    DIR *d = opendir("/dev/shm");
    struct dirent *de;
    int n = 0;
    if (!d)
        return 0;
    while ((de = readdir(d))) {
        if (strncmp(de->d_name, prefix, strlen(prefix)) != 0)
            continue;
        n++;
        if (remove) {
            char path[512];
            snprintf(path, sizeof path, "/dev/shm/%s", de->d_name);
            fprintf(stderr, "fault_kill: left in /dev/shm: %s\n", de->d_name);
            unlink(path);
        }
    }
    closedir(d);
    return n;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: fault_kill MPIRUN NPROCS PROGRAM MODE [MAX_SECONDS]\n");
        return 2;
    }
    int np = atoi(argv[2]);
    double limit = argc > 5 ? atof(argv[5]) : 5.0;
    if (np < 1 || np > MAXP)
        return 2;
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    char dir[] = "/tmp/dcfa-fault-kill.XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }
    setenv("FAULT_DIR", dir, 1);
    pid_t mpirun = fork();
    if (mpirun == 0) {
        execl(argv[1], argv[1], "-n", argv[2], argv[3], argv[4], (char *)NULL);
        _exit(127);
    }
    int pids[MAXP] = {0}, done[MAXP] = {0}, status[MAXP] = {0};
    double when[MAXP] = {0};
    char job[64] = "";
    int ready = 0, fails = 0;
    double t0 = now();
    while (ready < np && now() - t0 < 60) {
        ready = 0;
        for (int r = 0; r < np; r++)
            ready += read_ready(dir, r, &pids[r], job, sizeof job);
        int st;
        if (waitpid(mpirun, &st, WNOHANG) == mpirun) {
            fprintf(stderr, "fault_kill: mpirun ended before the job was ready (status 0x%x)\n",
                    st);
            return 1;
        }
        usleep(20000);
    }
    if (ready < np) {
        fprintf(stderr, "fault_kill: only %d of %d ranks ready after 60 s\n", ready, np);
        kill(mpirun, SIGTERM);
        waitpid(mpirun, NULL, 0);
        return 1;
    }
    usleep(200000); /* let the waiting ranks settle into their slow phase */
    double tk = now();
    kill(mpirun, SIGKILL);
    waitpid(mpirun, NULL, 0);
    int left = np;
    while (left > 0 && now() - tk < limit + 5) {
        int st;
        pid_t p = waitpid(-1, &st, WNOHANG);
        if (p > 0) {
            for (int r = 0; r < np; r++)
                if (pids[r] == p && !done[r]) {
                    done[r] = 1;
                    status[r] = st;
                    when[r] = now() - tk;
                    left--;
                }
            continue;
        }
        if (p < 0 && errno == ECHILD)
            break;
        usleep(5000);
    }
    for (int r = 0; r < np; r++) {
        char path[4096], line[512] = "";
        snprintf(path, sizeof path, "%s/err.%d", dir, r);
        FILE *f = fopen(path, "r");
        int said = 0;
        while (f && fgets(line, sizeof line, f))
            if (strstr(line, "assist daemon closed the command channel"))
                said = 1;
        if (f)
            fclose(f);
        if (!done[r]) {
            fprintf(stderr, "FAIL rank %d (pid %d) still running %.1f s after mpirun was killed\n",
                    r, pids[r], limit + 5);
            kill(pids[r], SIGKILL);
            fails++;
            continue;
        }
        printf("rank %d: ended after %.3f s, %s %d\n", r, when[r],
               WIFEXITED(status[r]) ? "exit status" : "signal",
               WIFEXITED(status[r]) ? WEXITSTATUS(status[r]) : WTERMSIG(status[r]));
        if (when[r] > limit) {
            fprintf(stderr, "FAIL rank %d took %.3f s (limit %.1f s)\n", r, when[r], limit);
            fails++;
        }
        if (!WIFEXITED(status[r]) || WEXITSTATUS(status[r]) != 1) {
            fprintf(stderr, "FAIL rank %d did not end itself with status 1\n", r);
            fails++;
        }
        if (!said) {
            fprintf(stderr, "FAIL rank %d did not say why it ended (stderr: '%s')\n", r, line);
            fails++;
        }
    }
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
    if (shm_left(job, 1) > 0) {
        fprintf(stderr, "FAIL job %s left entries in /dev/shm\n", job);
        fails++;
    }
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fails++;
    printf("%s: %d ranks, mode %s: %s\n", argv[0], np, argv[4], fails ? "FAIL" : "PASS");
    return fails ? 1 : 0;
}
