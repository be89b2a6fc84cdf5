/* ad: the assist daemon's main loop: starts the ranks of a job, serves PMI,
 * forwards stdio, watches exits, ends and cleans up the job.
 * Single-threaded; one poll() loop with a signalfd for signals. */
#include "ad.h"
#include "util/node_key.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define AD_GRACE 1.0 /* seconds between SIGUSR1 -> SIGTERM -> SIGKILL */
#define AD_DRAIN 2.0 /* seconds to wait for output after the last rank */

static struct rlimit ad_nofile_orig; /* restored in the ranks */
static pid_t ad_pid;                  /* this daemon: the ranks' parent */

double ad_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void ad_set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);

    if (fl >= 0)
        fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* ---- ending the job ---------------------------------------------------- */

/* Records the first end cause; 1 if this one was recorded. */
static int ad_record(struct ad_daemon *d, int exit_code, const char *msg)
{
    if (d->ended)
        return 0;
    d->ended = 1;
    d->exit_code = exit_code;
    snprintf(d->end_msg, sizeof(d->end_msg), "%s", msg);
    return 1;
}

void ad_signal_all(struct ad_daemon *d, int sig, int to_group)
{
    for (int j = 0; j < d->njobs; j++) {
        struct ad_job *job = d->jobs[j];
        for (int r = 0; r < job->nprocs; r++) {
            struct ad_proc *p = &job->procs[r];
            if (p->pid <= 0)
                continue;
            if (to_group)
                kill(-p->pid, sig);
            else if (p->running)
                kill(p->pid, sig);
        }
    }
}

void ad_enter_phase(struct ad_daemon *d, enum ad_phase phase)
{
    if (phase <= d->phase && phase != AD_RUN)
        return;
    d->phase = phase;
    if (d->tree != NULL)
        ad_tree_phase(d, phase);
    switch (phase) {
    case AD_DUMP:
        ad_signal_all(d, SIGUSR1, 0);
        d->phase_deadline = ad_now() + AD_GRACE;
        break;
    case AD_TERM:
        ad_signal_all(d, SIGTERM, 1);
        d->phase_deadline = ad_now() + AD_GRACE;
        break;
    case AD_KILL:
        ad_signal_all(d, SIGKILL, 1);
        d->phase_deadline = 0;
        break;
    case AD_RUN:
        break;
    }
}

void ad_daemon_end(struct ad_daemon *d, int exit_code, const char *msg)
{
    if (ad_record(d, exit_code, msg) && d->tree != NULL)
        ad_tree_end(d, exit_code, msg);
    if (d->phase == AD_RUN)
        ad_enter_phase(d, AD_TERM);
}

/* Kills whatever the ranks left behind: their process groups, and any
 * process reparented to us (we are a child subreaper). */
void ad_kill_stragglers(struct ad_daemon *d)
{
    char path[64], buf[4096];
    int fd;
    ssize_t n;

    ad_signal_all(d, SIGKILL, 1);
    snprintf(path, sizeof(path), "/proc/self/task/%ld/children", (long)getpid());
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return;
    buf[n] = '\0';
    for (char *s = buf, *end; *s != '\0'; s = end) {
        long pid = strtol(s, &end, 10);
        if (end == s)
            break;
        if (pid > 0 && (d->tree == NULL || !ad_tree_is_link_pid(d, (pid_t)pid)))
            kill((pid_t)pid, SIGKILL);
    }
}

/* ---- removing the job's files -------------------------------------------- */

static int ad_rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    if (flag == FTW_DP)
        rmdir(path);
    else
        unlink(path);
    return 0;
}

/* Removes every entry "dcfa-<jobid>-*" in dir (directories recursively). */
static void ad_remove_job_files(const char *dir, const char *jobid)
{
    char prefix[ASSIST_JOBID_MAX + 8], path[4096];
    DIR *dp = opendir(dir);
    struct dirent *de;
    size_t plen;

    if (dp == NULL)
        return;
    plen = (size_t)snprintf(prefix, sizeof(prefix), "dcfa-%s-", jobid);
    while ((de = readdir(dp)) != NULL) {
        if (strncmp(de->d_name, prefix, plen) != 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        if (unlink(path) != 0 && (errno == EISDIR || errno == EPERM))
            nftw(path, ad_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    }
    closedir(dp);
}

void ad_job_cleanup_files(const struct ad_job *job)
{
    const char *tmp = getenv("TMPDIR");

    ad_remove_job_files("/dev/shm", job->jobid);
    ad_remove_job_files(tmp != NULL && *tmp != '\0' ? tmp : "/tmp", job->jobid);
}

/* ---- jobs ------------------------------------------------------------------ */

static void ad_make_jobid(char *out, size_t len)
{
    unsigned int r;

    if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
        r = (unsigned int)(ad_now() * 1e6);
    snprintf(out, len, "j%lx_%04x", (unsigned long)getpid(), r & 0xffff);
}

void ad_job_destroy(struct ad_job *job)
{
    if (job == NULL)
        return;
    for (int r = 0; r < job->nprocs && job->procs != NULL; r++) {
        struct ad_proc *p = &job->procs[r];
        if (p->pmi_fd >= 0)
            close(p->pmi_fd);
        ad_stream_close(&p->out);
        ad_stream_close(&p->err);
    }
    free(job->procs);
    ad_kvs_destroy(&job->kvs);
    ad_buf_free(&job->kvs_new);
    free(job->mapping);
    free(job);
}

/* A job whose ranks on this host are ranks[0..nranks) (all ranks when
 * ranks is NULL); jobid NULL makes a new one. */
int ad_job_create(const struct mpirun_opts *opts, const char *jobid, const int *ranks, int nranks,
                  struct ad_job **out)
{
    struct ad_job *job = calloc(1, sizeof(*job));
    int size = 0;

    if (job == NULL)
        return -ENOMEM;
    for (int a = 0; a < opts->napps; a++)
        size += opts->apps[a].nprocs;
    job->size = size;
    job->nprocs = ranks != NULL ? nranks : size;
    job->procs = calloc((size_t)(job->nprocs > 0 ? job->nprocs : 1), sizeof(*job->procs));
    if (job->procs == NULL || ad_kvs_init(&job->kvs) != 0) {
        free(job->procs);
        free(job);
        return -ENOMEM;
    }
    if (jobid != NULL)
        snprintf(job->jobid, sizeof(job->jobid), "%s", jobid);
    else
        ad_make_jobid(job->jobid, sizeof(job->jobid));
    snprintf(job->kvsname, sizeof(job->kvsname), "kvs_%s", job->jobid);
    for (int i = 0; i < job->nprocs; i++) {
        struct ad_proc *p = &job->procs[i];
        int r = ranks != NULL ? ranks[i] : i, first = 0;
        p->rank = r;
        for (int a = 0; a < opts->napps; a++) {
            if (r < first + opts->apps[a].nprocs) {
                p->appnum = a;
                break;
            }
            first += opts->apps[a].nprocs;
        }
        p->local_id = r;
        p->local_n = size;
        p->pmi_fd = -1;
        ad_stream_init(&p->out, -1, 1, r, opts->prefix_output);
        ad_stream_init(&p->err, -1, 2, r, opts->prefix_output);
    }
    *out = job;
    return 0;
}

/* The process mapping value of node_of[size]: runs of ranks on one node as
 * (node,1,count), consecutive nodes with equal counts merged (node,n,count),
 * as MPICH's Hydra and Slurm write it. */
static char *ad_mapping_string(const int *node_of, int size)
{
    struct ad_buf b = {0};
    int start = -1, nnodes = 0, count = 0, r = 0;
    char item[64];

    ad_buf_add(&b, "(vector", 7);
    while (r < size) {
        int node = node_of[r], run = 0;
        while (r < size && node_of[r] == node) {
            run++;
            r++;
        }
        if (nnodes > 0 && node == start + nnodes && run == count) {
            nnodes++;
            continue;
        }
        if (nnodes > 0) {
            snprintf(item, sizeof(item), ",(%d,%d,%d)", start, nnodes, count);
            ad_buf_add(&b, item, strlen(item));
        }
        start = node;
        nnodes = 1;
        count = run;
    }
    if (nnodes > 0) {
        snprintf(item, sizeof(item), ",(%d,%d,%d)", start, nnodes, count);
        ad_buf_add(&b, item, strlen(item));
    }
    if (ad_buf_add(&b, ")", 2) != 0 || b.len > ASSIST_VALUE_MAX + 1) {
        ad_buf_free(&b);
        return NULL; /* too irregular for one PMI value: offered as absent */
    }
    return b.data;
}

int ad_job_set_nodes(struct ad_job *job, const int *node_of)
{
    int *count = calloc((size_t)job->size, sizeof(int));
    int *seen = calloc((size_t)job->size, sizeof(int));
    int i = 0;

    if (count == NULL || seen == NULL) {
        free(count);
        free(seen);
        return -ENOMEM;
    }
    free(job->mapping);
    job->mapping = ad_mapping_string(node_of, job->size);
    for (int r = 0; r < job->size; r++)
        count[node_of[r]]++;
    /* procs[] are in rank order */
    for (int r = 0; r < job->size && i < job->nprocs; r++) {
        int node = node_of[r];
        if (job->procs[i].rank == r) {
            job->procs[i].local_id = seen[node];
            job->procs[i].local_n = count[node];
            i++;
        }
        seen[node]++;
    }
    free(count);
    free(seen);
    return 0;
}

/* DCFA_NODE_KEY as a rank would see it: the last NAME=VALUE in the lists. */
static const char *ad_env_find(char *const *envs[], const int nenvs[], int nlists, const char *name)
{
    size_t n = strlen(name);
    const char *found = NULL;

    for (int l = 0; l < nlists; l++) {
        if (envs[l] == NULL)
            continue;
        for (int i = 0; nenvs[l] < 0 ? envs[l][i] != NULL : i < nenvs[l]; i++)
            if (strncmp(envs[l][i], name, n) == 0 && envs[l][i][n] == '=')
                found = envs[l][i] + n + 1;
    }
    return found;
}

void ad_node_key(char *key, size_t cap, char *const *envs[], const int nenvs[], int nlists)
{
    util_node_key_make(key, cap, ad_env_find(envs, nenvs, nlists, "DCFA_NODE_KEY"));
}

/* One host: every rank on node 0, unless DCFA_NODE_KEY in a rank's
 * environment names another node (tests). */
static int ad_job_local_nodes(const struct mpirun_opts *opts, struct ad_job *job)
{
    extern char **environ;
    int *node_of = calloc((size_t)job->size, sizeof(int));
    char(*keys)[UTIL_NODE_KEY_CAP] = NULL;
    int nkeys = 0, r = 0;

    if (node_of == NULL)
        return -ENOMEM;
    for (int a = 0; a < opts->napps; a++) {
        char *const *envs[3] = {environ, opts->genv, opts->apps[a].env};
        int nenvs[3] = {-1, opts->ngenv, opts->apps[a].nenv};
        if (ad_env_find(envs, nenvs, 3, "DCFA_NODE_KEY") == NULL && nkeys == 0) {
            r += opts->apps[a].nprocs; /* node 0 */
            continue;
        }
        if (keys == NULL)
            keys = calloc((size_t)job->size + 1, sizeof(*keys));
        if (keys == NULL) {
            free(node_of);
            return -ENOMEM;
        }
        if (nkeys == 0) /* the ranks before: this host's own key */
            util_node_key_make(keys[nkeys++], UTIL_NODE_KEY_CAP, NULL);
        char key[UTIL_NODE_KEY_CAP];
        ad_node_key(key, sizeof(key), envs, nenvs, 3);
        int id = 0;
        while (id < nkeys && strcmp(keys[id], key) != 0)
            id++;
        if (id == nkeys)
            snprintf(keys[nkeys++], UTIL_NODE_KEY_CAP, "%s", key);
        for (int i = 0; i < opts->apps[a].nprocs; i++)
            node_of[r++] = id;
    }
    ad_job_set_nodes(job, node_of);
    free(keys);
    free(node_of);
    return 0;
}

static void ad_putenv_int(const char *name, long v)
{
    char buf[32];

    snprintf(buf, sizeof(buf), "%ld", v);
    setenv(name, buf, 1);
}

/* In the child after fork: never returns. */
static void ad_child_exec(const struct mpirun_opts *opts, const struct mpirun_app *app,
                          const struct ad_job *job, const struct ad_proc *p, int in_fd, int out_fd,
                          int err_fd, int pmi_fd, int exec_fd)
{
    sigset_t none;
    int err;

    setpgid(0, 0);
    /* A rank must not outlive its daemon, even one that never calls MPI: if
     * the daemon dies (even by SIGKILL) the rank gets SIGTERM (the library
     * then removes the job's segments, docs/faults.md). The daemon may have
     * died before this line: then end at once. */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != ad_pid)
        _exit(127);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    if (in_fd < 0)
        in_fd = open("/dev/null", O_RDONLY);
    if (in_fd < 0 || dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
        goto fail;
    fcntl(pmi_fd, F_SETFD, 0);
    for (int i = 0; i < opts->ngenv; i++)
        putenv(opts->genv[i]);
    for (int i = 0; i < app->nenv; i++)
        putenv(app->env[i]);
    unsetenv("PMI_PORT");
    unsetenv("PMI_ID");
    ad_putenv_int("PMI_FD", pmi_fd);
    ad_putenv_int("PMI_RANK", p->rank);
    ad_putenv_int("PMI_SIZE", job->size);
    ad_putenv_int("MPI_LOCALRANKID", p->local_id);
    ad_putenv_int("MPI_LOCALNRANKS", p->local_n);
    setenv("DCFA_JOBID", job->jobid, 1);
    if (job->mapping != NULL) /* saves the library a PMI get at start-up */
        setenv("DCFA_PROCESS_MAPPING", job->mapping, 1);
    else
        unsetenv("DCFA_PROCESS_MAPPING");
    setrlimit(RLIMIT_NOFILE, &ad_nofile_orig); /* the other fds close at exec */
    execvp(app->argv[0], app->argv);
fail:
    err = errno;
    if (write(exec_fd, &err, sizeof(err)) < 0)
        _exit(127);
    _exit(127);
}

/* Starts one rank. Returns 0, or a negative error after recording the end
 * of the job. */
static int ad_proc_launch(struct ad_daemon *d, const struct mpirun_opts *opts,
                          const struct mpirun_app *app, struct ad_job *job, struct ad_proc *p)
{
    int sv[2] = {-1, -1}, outp[2] = {-1, -1}, errp[2] = {-1, -1};
    int execp[2] = {-1, -1}, inp[2] = {-1, -1};
    int want_stdin = d->njobs >= 1 && job == d->jobs[0] && p->rank == 0 && d->stdin_open;
    char msg[600];
    int err = 0, rc = -1;
    ssize_t n;
    pid_t pid;

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0 ||
        pipe2(outp, O_CLOEXEC) != 0 || pipe2(errp, O_CLOEXEC) != 0 ||
        pipe2(execp, O_CLOEXEC) != 0 || (want_stdin && pipe2(inp, O_CLOEXEC) != 0)) {
        snprintf(msg, sizeof(msg), "mpirun: cannot create pipes for rank %d: %s", p->rank,
                 strerror(errno));
        ad_daemon_end(d, 1, msg);
        goto out;
    }
    pid = fork();
    if (pid < 0) {
        snprintf(msg, sizeof(msg), "mpirun: cannot fork rank %d: %s", p->rank, strerror(errno));
        ad_daemon_end(d, 1, msg);
        goto out;
    }
    if (pid == 0)
        ad_child_exec(opts, app, job, p, inp[0], outp[1], errp[1], sv[1], execp[1]);
    setpgid(pid, pid); /* also done by the child: whichever runs first */
    p->pid = pid;
    p->running = 1;
    job->nrunning++;
    close(execp[1]);
    execp[1] = -1;
    do {
        n = read(execp[0], &err, sizeof(err));
    } while (n < 0 && errno == EINTR);
    p->pmi_fd = sv[0];
    sv[0] = -1;
    ad_set_nonblock(p->pmi_fd);
    ad_stream_init(&p->out, outp[0], 1, p->rank, opts->prefix_output);
    ad_stream_init(&p->err, errp[0], 2, p->rank, opts->prefix_output);
    ad_set_nonblock(outp[0]);
    ad_set_nonblock(errp[0]);
    outp[0] = errp[0] = -1;
    if (want_stdin) {
        d->stdin_pipe = inp[1];
        inp[1] = -1;
        ad_set_nonblock(d->stdin_pipe);
    }
    if (n == (ssize_t)sizeof(err)) {
        snprintf(msg, sizeof(msg), "mpirun: cannot execute '%s': %s", app->argv[0], strerror(err));
        ad_daemon_end(d, err == ENOENT ? 127 : 126, msg);
        goto out;
    }
    rc = 0;
out:
    for (int i = 0; i < 2; i++) {
        int *fds[] = {sv, outp, errp, execp, inp};
        for (size_t k = 0; k < sizeof(fds) / sizeof(fds[0]); k++)
            if (fds[k][i] >= 0)
                close(fds[k][i]);
    }
    return rc;
}

/* "pid 1234", or "pid 1234 on host" when the job spans hosts. */
static const char *ad_pid_text(const struct ad_daemon *d, const struct ad_proc *p, char *buf,
                               size_t len)
{
    if (d->host != NULL)
        snprintf(buf, len, "pid %ld on %s", (long)p->pid, d->host);
    else
        snprintf(buf, len, "pid %ld", (long)p->pid);
    return buf;
}

/* A rank was reaped: judge how it ended. */
static void ad_proc_exited(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p, int st)
{
    char msg[600], pid[300];

    /* Lines it sent before exiting (abort, finalize) count first. */
    while (p->pmi_fd >= 0 && ad_pmi_input(d, job, p) > 0)
        ;
    if (p->pmi_fd >= 0) {
        close(p->pmi_fd);
        p->pmi_fd = -1;
    }
    if (p->rank == 0 && d->njobs >= 1 && job == d->jobs[0] && d->stdin_pipe >= 0) {
        if (d->tree != NULL && d->stdin_len > 0)
            ad_tree_stdin_ack(d, 1);
        close(d->stdin_pipe);
        d->stdin_pipe = -1;
        d->stdin_len = 0;
    }
    if (WIFSIGNALED(st)) {
        int sig = WTERMSIG(st);
        snprintf(msg, sizeof(msg), "mpirun: rank %d (%s) killed by signal %d (%s)", p->rank,
                 ad_pid_text(d, p, pid, sizeof(pid)), sig, strsignal(sig));
        ad_daemon_end(d, 128 + sig, msg);
    } else if (WIFEXITED(st) && WEXITSTATUS(st) != 0) {
        snprintf(msg, sizeof(msg), "mpirun: rank %d (%s) exited with status %d", p->rank,
                 ad_pid_text(d, p, pid, sizeof(pid)), WEXITSTATUS(st));
        ad_daemon_end(d, WEXITSTATUS(st), msg);
    } else if (p->pmi_inited && !p->pmi_finalized) {
        snprintf(msg, sizeof(msg),
                 "mpirun: rank %d (%s) exited with status 0 without calling MPI_Finalize", p->rank,
                 ad_pid_text(d, p, pid, sizeof(pid)));
        ad_daemon_end(d, 1, msg);
    }
}

static void ad_reap(struct ad_daemon *d)
{
    for (;;) {
        int st;
        pid_t pid = waitpid(-1, &st, WNOHANG);
        if (pid < 0 && errno == EINTR)
            continue;
        if (pid <= 0)
            return;
        if (d->tree != NULL && ad_tree_is_link_pid(d, pid)) {
            ad_tree_reaped(d, pid, st);
            continue;
        }
        for (int j = 0; j < d->njobs; j++) {
            struct ad_job *job = d->jobs[j];
            for (int r = 0; r < job->nprocs; r++) {
                struct ad_proc *p = &job->procs[r];
                if (p->pid == pid && p->running) {
                    p->running = 0;
                    job->nrunning--;
                    ad_proc_exited(d, job, p, st);
                }
            }
        }
        /* anything else was a reparented straggler */
    }
}

/* ---- signals and stdin ------------------------------------------------------ */

static void ad_on_signal(struct ad_daemon *d)
{
    struct signalfd_siginfo si;
    char msg[128];

    while (read(d->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        int sig = (int)si.ssi_signo;
        if (sig == SIGCHLD) {
            ad_reap(d);
        } else if (sig == SIGUSR1) {
            ad_signal_all(d, SIGUSR1, 0);
            if (d->tree != NULL)
                ad_tree_usr1(d);
        } else if (d->phase == AD_RUN) {
            snprintf(msg, sizeof(msg), "mpirun: received signal %d (%s), terminating the job", sig,
                     strsignal(sig));
            ad_daemon_end(d, 128 + sig, msg);
        } else {
            if (ad_record(d, 128 + sig, "mpirun: terminated by a signal") && d->tree != NULL)
                ad_tree_end(d, 128 + sig, "mpirun: terminated by a signal");
            ad_enter_phase(d, AD_KILL);
        }
    }
}

static void ad_stdin_stop(struct ad_daemon *d)
{
    d->stdin_open = 0;
    if (d->stdin_len == 0 && d->stdin_pipe >= 0) {
        close(d->stdin_pipe);
        d->stdin_pipe = -1;
    }
}

static void ad_stdin_read(struct ad_daemon *d)
{
    ssize_t n = read(0, d->stdin_buf, AD_IO_BUF);

    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        ad_stdin_stop(d);
        return;
    }
    d->stdin_len = (size_t)n;
}

static void ad_stdin_write(struct ad_daemon *d)
{
    ssize_t n = write(d->stdin_pipe, d->stdin_buf, d->stdin_len);

    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n < 0) { /* rank 0 closed its stdin: stop forwarding */
        d->stdin_len = 0;
        ad_stdin_stop(d);
        close(d->stdin_pipe);
        d->stdin_pipe = -1;
        if (d->tree != NULL)
            ad_tree_stdin_ack(d, 1);
        return;
    }
    d->stdin_len -= (size_t)n;
    memmove(d->stdin_buf, d->stdin_buf + n, d->stdin_len);
    if (d->stdin_len == 0 && d->tree != NULL)
        ad_tree_stdin_ack(d, 0);
    if (d->stdin_len == 0 && !d->stdin_open)
        ad_stdin_stop(d);
}

/* Forward stdin only if it is usable and we would not be stopped by SIGTTIN. */
int ad_stdin_usable(void)
{
    if (fcntl(0, F_GETFD) < 0)
        return 0;
    if (isatty(0) && tcgetpgrp(0) != getpgrp())
        return 0;
    return 1;
}

/* ---- the loop ------------------------------------------------------------ */

static int ad_streams_open(const struct ad_daemon *d)
{
    for (int j = 0; j < d->njobs; j++)
        for (int r = 0; r < d->jobs[j]->nprocs; r++)
            if (d->jobs[j]->procs[r].out.fd >= 0 || d->jobs[j]->procs[r].err.fd >= 0)
                return 1;
    return 0;
}

static int ad_running(const struct ad_daemon *d)
{
    int n = 0;

    for (int j = 0; j < d->njobs; j++)
        n += d->jobs[j]->nrunning;
    return n;
}

int ad_local_done(struct ad_daemon *d)
{
    return d->launched && ad_running(d) == 0 && !ad_streams_open(d);
}

static int ad_poll_timeout(struct ad_daemon *d, double now)
{
    double next = 0;
    double cand[4] = {d->phase_deadline, d->phase == AD_RUN ? d->timeout_deadline : 0,
                      d->drain_deadline, d->tree != NULL ? ad_tree_deadline(d) : 0};

    for (int i = 0; i < 4; i++)
        if (cand[i] > 0 && (next == 0 || cand[i] < next))
            next = cand[i];
    if (next == 0)
        return -1;
    if (next <= now)
        return 0;
    return (int)((next - now) * 1000.0) + 1;
}

static void ad_check_deadlines(struct ad_daemon *d, double now)
{
    char msg[64];

    if (d->phase == AD_RUN && d->timeout_deadline > 0 && now >= d->timeout_deadline) {
        snprintf(msg, sizeof(msg), "mpirun: job timed out after %d s", d->timeout);
        ad_record(d, 124, msg);
        ad_enter_phase(d, AD_DUMP);
    } else if (d->phase == AD_DUMP && now >= d->phase_deadline) {
        ad_enter_phase(d, AD_TERM);
    } else if (d->phase == AD_TERM && now >= d->phase_deadline) {
        ad_enter_phase(d, AD_KILL);
    }
    if (d->drain_deadline > 0 && now >= d->drain_deadline) {
        for (int j = 0; j < d->njobs; j++) {
            for (int r = 0; r < d->jobs[j]->nprocs; r++) {
                ad_stream_close(&d->jobs[j]->procs[r].out);
                ad_stream_close(&d->jobs[j]->procs[r].err);
            }
        }
    }
}

int ad_loop(struct ad_daemon *d)
{
    int cap = 8;
    struct pollfd *pfds = NULL;
    struct ad_fd_ref *refs = NULL;

    for (int j = 0; j < d->njobs; j++)
        cap += 3 * d->jobs[j]->nprocs;
    if (d->tree != NULL)
        cap += ad_tree_nfds(d);
    pfds = calloc((size_t)cap, sizeof(*pfds));
    refs = calloc((size_t)cap, sizeof(*refs));
    if (pfds == NULL || refs == NULL) {
        free(pfds);
        free(refs);
        return -ENOMEM;
    }
    for (;;) {
        int n = 0;
        double now = ad_now();

        if (d->launched && ad_running(d) == 0) {
            if (d->drain_deadline == 0) {
                ad_kill_stragglers(d);
                d->drain_deadline = now + AD_DRAIN;
            }
            if (d->tree == NULL && !ad_streams_open(d))
                break;
        }
        if (d->tree != NULL) {
            ad_tree_tick(d, now);
            if (ad_tree_finished(d))
                break;
        }
        int output_ok = d->tree == NULL || ad_tree_output_ok(d);
        pfds[n] = (struct pollfd){.fd = d->sigfd, .events = POLLIN};
        refs[n++] = (struct ad_fd_ref){.kind = AD_FD_SIG};
        if (d->tree == NULL && d->stdin_open && d->stdin_pipe >= 0 && d->stdin_len == 0) {
            pfds[n] = (struct pollfd){.fd = 0, .events = POLLIN};
            refs[n++] = (struct ad_fd_ref){.kind = AD_FD_STDIN};
        }
        if (d->stdin_pipe >= 0 && d->stdin_len > 0) {
            pfds[n] = (struct pollfd){.fd = d->stdin_pipe, .events = POLLOUT};
            refs[n++] = (struct ad_fd_ref){.kind = AD_FD_STDIN_PIPE};
        }
        for (int j = 0; j < d->njobs; j++) {
            struct ad_job *job = d->jobs[j];
            for (int r = 0; r < job->nprocs; r++) {
                struct ad_proc *p = &job->procs[r];
                if (p->pmi_fd >= 0) {
                    pfds[n] = (struct pollfd){.fd = p->pmi_fd, .events = POLLIN};
                    refs[n++] = (struct ad_fd_ref){AD_FD_PMI, job, p, NULL};
                }
                if (p->out.fd >= 0 && output_ok) {
                    pfds[n] = (struct pollfd){.fd = p->out.fd, .events = POLLIN};
                    refs[n++] = (struct ad_fd_ref){AD_FD_OUT, job, p, NULL};
                }
                if (p->err.fd >= 0 && output_ok) {
                    pfds[n] = (struct pollfd){.fd = p->err.fd, .events = POLLIN};
                    refs[n++] = (struct ad_fd_ref){AD_FD_ERR, job, p, NULL};
                }
            }
        }
        if (d->tree != NULL)
            n = ad_tree_pollfds(d, pfds, refs, n);
        int rc = poll(pfds, (nfds_t)n, ad_poll_timeout(d, now));
        if (rc < 0 && errno != EINTR)
            break;
        for (int i = 0; rc > 0 && i < n; i++) {
            short ev = pfds[i].revents;
            if (ev == 0)
                continue;
            switch (refs[i].kind) {
            case AD_FD_SIG:
                ad_on_signal(d);
                break;
            case AD_FD_STDIN:
                if (d->tree != NULL)
                    ad_tree_event(d, &refs[i], ev);
                else if (ev & POLLNVAL)
                    ad_stdin_stop(d);
                else
                    ad_stdin_read(d);
                break;
            case AD_FD_STDIN_PIPE:
                if (d->stdin_pipe >= 0)
                    ad_stdin_write(d);
                break;
            case AD_FD_PMI:
                ad_pmi_input(d, refs[i].job, refs[i].proc);
                break;
            case AD_FD_OUT:
                ad_stream_read(&refs[i].proc->out);
                break;
            case AD_FD_ERR:
                ad_stream_read(&refs[i].proc->err);
                break;
            case AD_FD_LINK_IN:
            case AD_FD_LINK_OUT:
            case AD_FD_LINK_ERR:
                ad_tree_event(d, &refs[i], ev);
                break;
            }
        }
        ad_check_deadlines(d, ad_now());
    }
    free(pfds);
    free(refs);
    return 0;
}

/* ---- entry point ------------------------------------------------------------- */

/* Blocks the signals the loop reads from a signalfd, raises the fd limit and
 * makes this process a subreaper. 0 or -1 (message printed). */
int ad_daemon_setup(struct ad_daemon *d, sigset_t *oldmask)
{
    sigset_t mask;

    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGHUP);
    sigaddset(&mask, SIGUSR1);
    if (sigprocmask(SIG_BLOCK, &mask, oldmask) != 0)
        return -1;
    d->sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    if (d->sigfd < 0) {
        fprintf(stderr, "mpirun: signalfd: %s\n", strerror(errno));
        sigprocmask(SIG_SETMASK, oldmask, NULL);
        return -1;
    }
    signal(SIGPIPE, SIG_IGN);
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    ad_pid = getpid();
    /* Three descriptors per rank: raise the soft limit for large jobs. */
    if (getrlimit(RLIMIT_NOFILE, &ad_nofile_orig) == 0) {
        struct rlimit raised = ad_nofile_orig;
        raised.rlim_cur = raised.rlim_max;
        setrlimit(RLIMIT_NOFILE, &raised);
    }
    d->stdin_buf = malloc(AD_IO_BUF);
    if (d->stdin_buf == NULL) {
        close(d->sigfd);
        sigprocmask(SIG_SETMASK, oldmask, NULL);
        return -1;
    }
    return 0;
}

void ad_launch_local(struct ad_daemon *d, const struct mpirun_opts *opts)
{
    struct ad_job *job = d->jobs[0];

    for (int i = 0; i < job->nprocs && !d->ended; i++) {
        struct ad_proc *p = &job->procs[i];
        ad_proc_launch(d, opts, &opts->apps[p->appnum], job, p);
    }
    d->launched = 1;
}

int ad_run(const struct mpirun_opts *opts)
{
    struct ad_daemon d = {.sigfd = -1, .stdin_pipe = -1};
    struct ad_job *job = NULL;
    sigset_t oldmask;
    int rc = 1;

    if (opts->nhosts > 0)
        return ad_tree_run(opts);
    if (ad_daemon_setup(&d, &oldmask) != 0)
        return 1;
    d.prefix_output = opts->prefix_output;
    d.timeout = opts->timeout;
    d.stdin_open = ad_stdin_usable();
    if (ad_job_create(opts, NULL, NULL, 0, &job) != 0 || ad_job_local_nodes(opts, job) != 0) {
        fprintf(stderr, "mpirun: out of memory\n");
        goto out;
    }
    d.jobs = &job;
    d.njobs = 1;
    if (opts->timeout > 0)
        d.timeout_deadline = ad_now() + opts->timeout;
    ad_launch_local(&d, opts);
    if (ad_loop(&d) != 0)
        ad_record(&d, 1, "mpirun: out of memory");
    ad_kill_stragglers(&d);
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
    ad_job_cleanup_files(job);
    if (d.ended) {
        ad_io_write(2, d.end_msg, strlen(d.end_msg));
        ad_io_write(2, "\n", 1);
    }
    rc = d.ended ? d.exit_code : 0;
    if (d.stdin_pipe >= 0)
        close(d.stdin_pipe);
out:
    ad_job_destroy(job);
    free(d.stdin_buf);
    close(d.sigfd);
    sigprocmask(SIG_SETMASK, &oldmask, NULL);
    return rc;
}
