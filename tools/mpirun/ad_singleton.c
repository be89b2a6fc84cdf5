/* ad: the assist daemon of a singleton, "mpirun --dcfa-singleton FD JOBID".
 *
 * A program started without a launcher (a singleton) runs without a daemon
 * until it needs one: its first MPI_Comm_spawn, or a name service call
 * without DCFA_NAMESERVER. The library (src/assist/assist_pmi.c) then starts
 * this binary with one end of a socketpair as FD; we fork once more (the
 * singleton reaps the first process at once: the daemon is not its child),
 * leave its session and adopt the singleton as rank 0 of job 0, size 1, its
 * job id JOBID (the "s<pid>" its files are named with). From then on it is
 * the same daemon as mpirun's own (ad_loop): PMI-1 on the channel, spawned
 * jobs, names, fences, the end of jobs. Differences:
 *   - the singleton is not our child: it is done once it finalizes, or its
 *     channel closes, or its pidfd says it ended; it is signalled alone
 *     (never its process group), and only while it is not done;
 *   - no stdin is forwarded and no timeout applies;
 *   - an abort by the singleton is not printed here (the library prints it);
 *   - we end once the singleton is done and every spawned process ended; if
 *     it ends without MPI_Finalize, the processes it spawned are ended as
 *     mpirun ends a job; after MPI_Finalize its pidfd is still watched, and
 *     an exit with a non-zero status or by a signal ends them too (as mpirun
 *     ends a job whose rank does that), while after an exit with status 0
 *     they may go on. Its status is not ours to wait for: it is read from
 *     its pidfd once its parent reaped it, or from /proc while it is a zombie.
 * See docs/launcher.md, "Singletons". */
#include "ad_singleton.h"
#include "ad.h"
#include "ad_pmi.h"
#include "ad_ep.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define AD_STATUS_WAIT 2.0  /* seconds to wait for an ended singleton's status */
#define AD_STATUS_POLL 0.02 /* ... looking again this often */

/* PIDFD_GET_INFO (Linux 6.15, <linux/pidfd.h>), its first published layout:
 * the exit status (wait() form) of a process whose pidfd we hold, once it
 * was reaped. Older kernels answer ENOTTY/EINVAL. */
struct ad_pidfd_info {
    uint64_t mask;
    uint64_t cgroupid;
    uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
    int32_t exit_code;
};
_Static_assert(sizeof(struct ad_pidfd_info) == 64, "PIDFD_INFO_SIZE_VER0");
#define AD_PIDFD_GET_INFO  _IOWR(0xFF, 11, struct ad_pidfd_info)
#define AD_PIDFD_INFO_EXIT (1ULL << 3)

/* Closes every descriptor but 0, 1, 2 and keep: what the singleton had open
 * without FD_CLOEXEC is none of our business (and must not reach the
 * processes we start). */
static void ad_singleton_close_fds(int keep)
{
    int fds[256], n;

    do { /* closing while reading the directory: collect, close, read again */
        DIR *dp = opendir("/proc/self/fd");
        struct dirent *de;
        if (dp == NULL)
            return;
        n = 0;
        while ((de = readdir(dp)) != NULL && n < (int)(sizeof(fds) / sizeof(fds[0]))) {
            char *end;
            long fd = strtol(de->d_name, &end, 10);
            if (*end != '\0' || end == de->d_name || fd <= 2 || fd == keep || fd == dirfd(dp))
                continue;
            fds[n++] = (int)fd;
        }
        closedir(dp);
        for (int i = 0; i < n; i++)
            close(fds[i]);
    } while (n > 0);
}

static int ad_singleton_jobid_ok(const char *s)
{
    size_t n = strlen(s);

    /* room for the spawned jobs' "_<n>" */
    if (n == 0 || n > ASSIST_JOBID_MAX - 8)
        return 0;
    return strspn(s,
                  "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == n;
}

static int ad_pidfd_open(pid_t pid)
{
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    errno = ENOSYS;
    return -1;
#endif
}

/* The exit status of the process of pidfd, once it was reaped: 0 and *st,
 * or -1 (not reaped yet, or no PIDFD_GET_INFO). */
static int ad_pidfd_exit_status(int pidfd, int *st)
{
    struct ad_pidfd_info info = {.mask = AD_PIDFD_INFO_EXIT};

    if (ioctl(pidfd, AD_PIDFD_GET_INFO, &info) != 0 || !(info.mask & AD_PIDFD_INFO_EXIT))
        return -1;
    *st = info.exit_code;
    return 0;
}

/* The exit status of pid while it is a zombie: field 52 of /proc/PID/stat
 * (Linux 3.5), in wait() form. 0 and *st, or -1 (not a zombie, gone). */
static int ad_zombie_status(pid_t pid, int *st)
{
    char path[64], buf[1024], *s, *end;
    long v = -1;
    ssize_t n;
    int fd;

    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    s = strrchr(buf, ')'); /* the name may hold anything: fields follow its last ')' */
    if (s == NULL || s[1] != ' ' || (s[2] != 'Z' && s[2] != 'X'))
        return -1;
    s += 2; /* field 3, the state */
    for (int field = 3; field < 52; field++) {
        s = strchr(s, ' ');
        if (s == NULL)
            return -1;
        s++;
    }
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || end == s || v < 0 || v > 0xffff)
        return -1;
    *st = (int)v;
    return 0;
}

/* The wait() status of the singleton, which ended (its pidfd fired): 0 and
 * *st, or -1 while neither source has it. /proc first, then the pidfd: if
 * the pidfd says it was reaped, its answer wins (the pid may have been reused
 * since); if not, the zombie we read was the singleton. */
static int ad_singleton_status(const struct ad_daemon *d, pid_t pid, int *st)
{
    int zst = 0, zombie = ad_zombie_status(pid, &zst) == 0;

    if (ad_pidfd_exit_status(d->adopt_fd, st) == 0)
        return 0;
    if (!zombie)
        return -1;
    *st = zst;
    return 0;
}

/* After its MPI_Finalize the singleton exited: a non-zero status or a signal
 * ends what it spawned, as mpirun ends a job whose rank exits so; status 0
 * lets them go on (the processes of a finalized parent may outlive it). */
static void ad_singleton_exited(struct ad_daemon *d, const struct ad_proc *p)
{
    double now = ad_now();
    char msg[200], how[80];
    int st = 0, code;

    if (d->adopt_fd < 0 || !d->adopt_gone)
        return; /* it still runs (or, without a pidfd, cannot be watched) */
    if (ad_singleton_status(d, p->pid, &st) != 0) {
        if (d->adopt_giveup == 0)
            d->adopt_giveup = now + AD_STATUS_WAIT;
        if (now < d->adopt_giveup) {
            d->adopt_retry = now + AD_STATUS_POLL;
            return;
        }
        st = 0; /* reaped by its parent before we looked, on a kernel that keeps no status */
    }
    d->adopt_retry = 0;
    close(d->adopt_fd);
    d->adopt_fd = -1;
    if (WIFSIGNALED(st)) {
        snprintf(how, sizeof(how), "was killed by signal %d (%s)", WTERMSIG(st),
                 strsignal(WTERMSIG(st)));
        code = 128 + WTERMSIG(st);
    } else if (WIFEXITED(st) && WEXITSTATUS(st) != 0) {
        snprintf(how, sizeof(how), "exited with status %d", WEXITSTATUS(st));
        code = WEXITSTATUS(st);
    } else {
        return;
    }
    if (ad_running(d) == 0)
        return; /* nothing to end: quietly, as when it ends unfinalized */
    snprintf(msg, sizeof(msg),
             "mpirun: the singleton (pid %ld) %s after MPI_Finalize: ending the processes it "
             "spawned",
             (long)p->pid, how);
    ad_daemon_end(d, code, msg);
}

/* Singleton mode, each round of the loop (AD_EV_ROUND): the singleton is done once it
 * finalized, or its channel closed, or its pidfd fired; ending without MPI_Finalize while
 * spawned processes run ends them, and so does exiting with a non-zero status or by a
 * signal after MPI_Finalize. */
static void ad_singleton_update(struct ad_daemon *d)
{
    struct ad_job *job = d->njobs > 0 ? d->jobs[0] : NULL;
    struct ad_proc *p = job != NULL && job->nprocs > 0 ? &job->procs[0] : NULL;
    const struct ad_fd_ref pmi = {AD_FD_PMI, job, p, NULL, NULL};
    char msg[200];

    if (p == NULL || !p->adopted)
        return;
    if (!p->running) { /* done: after a finalize, its exit is still judged */
        if (p->pmi_finalized)
            ad_singleton_exited(d, p);
        return;
    }
    if (d->adopt_gone) /* what it sent before it ended counts first */
        while (p->pmi_fd >= 0 && ad_reactor_dispatch(d, &pmi, POLLIN) > 0)
            ;
    if (!p->running) /* it aborted */
        return;
    if (!p->pmi_finalized && p->pmi_fd >= 0 && !d->adopt_gone)
        return;
    ad_adopted_done(d, job, p);
    if (p->pmi_finalized) {
        ad_singleton_exited(d, p);
    } else if (ad_running(d) > 0) {
        snprintf(msg, sizeof(msg),
                 "mpirun: the singleton (pid %ld) ended without calling MPI_Finalize: ending "
                 "the processes it spawned",
                 (long)p->pid);
        ad_daemon_end(d, 1, msg);
    }
}

static int ad_singleton_on_round(struct ad_daemon *d, const struct ad_event_arg *a)
{
    (void)a;
    if (d->singleton)
        ad_singleton_update(d);
    return 0;
}

int ad_singleton_main(int argc, char **argv)
{
    struct mpirun_opts opts = {0};
    struct mpirun_app app = {.nprocs = 1};
    char *app_argv[] = {"(singleton)", NULL};
    struct ad_daemon d = {.sigfd = -1, .stdin_pipe = -1, .singleton = 1, .adopt_fd = -1};
    struct ad_job *job = NULL;
    struct ad_proc *p;
    struct ucred cred;
    socklen_t clen = sizeof(cred);
    const char *ns = getenv("DCFA_NAMESERVER");
    sigset_t oldmask;
    char *end;
    long fd;
    pid_t pid;
    int rc = 1;

    if (argc != 4) {
        fprintf(stderr, "mpirun: %s is started by the library, not by hand\n", AD_SINGLETON_OPTION);
        return 2;
    }
    errno = 0;
    fd = strtol(argv[2], &end, 10);
    if (errno != 0 || *end != '\0' || fd < 3 || fd > 1000000 || !ad_singleton_jobid_ok(argv[3])) {
        fprintf(stderr, "mpirun: %s: bad arguments '%s' '%s'\n", AD_SINGLETON_OPTION, argv[2],
                argv[3]);
        return 2;
    }
    /* the peer of the socketpair is the process that made it: the singleton */
    if (getsockopt((int)fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) != 0 || cred.pid <= 0) {
        fprintf(stderr, "mpirun: %s: descriptor %ld is not the singleton's channel: %s\n",
                AD_SINGLETON_OPTION, fd, strerror(errno));
        return 1;
    }
    app.argv = app_argv;
    opts.apps = &app;
    opts.napps = 1;
    if (mpirun_env_read(&opts) != 0)
        return 2; /* said; the singleton sees its channel close */
    mpirun_default_universe(&opts);

    /* Not the singleton's child: it reaps this process now, the daemon goes on
     * in the grandchild, in a session of its own (terminal signals meant for
     * the singleton's job do not reach it; it follows the singleton instead). */
    pid = fork();
    if (pid < 0) {
        fprintf(stderr, "mpirun: cannot fork the singleton's assist daemon: %s\n",
                strerror(errno));
        return 1;
    }
    if (pid > 0)
        _exit(0);
    setsid();
    ad_singleton_close_fds((int)fd);
    fcntl((int)fd, F_SETFD, FD_CLOEXEC); /* not for the processes we start */

    if (ad_daemon_setup(&d, &oldmask) != 0)
        return 1;
    d.opts = &opts;
    d.universe = opts.universe;
    d.no_oversubscribe = opts.no_oversubscribe;
    d.nameserver = ns != NULL && *ns != '\0' ? ns : NULL;
    d.stdin_open = 0;
    if (ad_job_create(&opts, argv[3], NULL, 0, &job) != 0 || ad_job_local_nodes(&opts, job) != 0 ||
        ad_jobs_add(&d, job) != 0) {
        ad_job_destroy(job);
        fprintf(stderr, "mpirun: out of memory\n");
        goto out;
    }
    p = &job->procs[0];
    p->pid = cred.pid;
    p->adopted = 1;
    p->running = 1;
    p->pmi_inited = 1; /* it is past its start: an init handshake is welcome, not needed */
    p->pmi_fd = (int)fd;
    ad_set_nonblock(p->pmi_fd);
    job->nrunning = 1;
    d.adopt_fd = ad_pidfd_open(cred.pid);
    if (d.adopt_fd < 0 && errno == ESRCH)
        d.adopt_gone = 1; /* gone already */
    else if (d.adopt_fd >= 0)
        fcntl(d.adopt_fd, F_SETFD, FD_CLOEXEC);
    /* else (no pidfd): its channel tells, closing when it ends */
    d.launched = 1;
    (void)ad_reactor_subscribe(AD_EV_ROUND, ad_singleton_on_round);
    ad_pmi_attach();
    ad_ep_attach();
    if (ad_loop(&d) != 0)
        ad_daemon_end(&d, 1, "mpirun: out of memory");
    ad_kill_stragglers(&d);
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
    ad_daemon_free(&d); /* every job's files, the singleton's too */
    if (d.ended && d.end_msg[0] != '\0') {
        ad_io_write(2, d.end_msg, strlen(d.end_msg));
        ad_io_write(2, "\n", 1);
    }
    rc = d.ended ? d.exit_code : 0;
out:
    ad_daemon_free(&d);
    if (d.adopt_fd >= 0)
        close(d.adopt_fd);
    free(d.stdin_buf);
    close(d.sigfd);
    sigprocmask(SIG_SETMASK, &oldmask, NULL);
    return rc;
}
