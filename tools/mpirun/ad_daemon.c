/* ad: the assist daemon's main loop: starts the ranks of a job and of the
 * jobs they spawn, serves PMI, forwards stdio, watches exits, ends and cleans
 * up the jobs. Single-threaded; one poll() loop with a signalfd for signals. */
#include "ad.h"
#include "util/node_key.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
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
static pid_t ad_pid;                 /* this daemon: the ranks' parent */

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
            if (p->adopted) { /* the singleton: itself only, while it runs */
                if (p->running)
                    kill(p->pid, sig);
                continue;
            }
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

static void ad_spawn_opts_free(struct mpirun_opts *o);

void ad_job_destroy(struct ad_job *job)
{
    if (job == NULL)
        return;
    for (int r = 0; r < job->nprocs && job->procs != NULL; r++) {
        struct ad_proc *p = &job->procs[r];
        if (p->pmi_fd >= 0)
            close(p->pmi_fd);
        ad_ep_close(p);
        ad_stream_close(&p->out);
        ad_stream_close(&p->err);
        free(p->pmi_in);
        ad_spawn_req_free(p->spawn);
    }
    free(job->procs);
    ad_seg_job_end(job->jobid);
    ad_kvs_destroy(&job->kvs);
    ad_buf_free(&job->kvs_new);
    free(job->mapping);
    ad_spawn_opts_free(job->own);
    ad_tree_job_free(job);
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
    job->opts = opts;
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
        p->ep_fd = -1;
        ad_stream_init(&p->out, -1, 1, 0, r, opts->prefix_output);
        ad_stream_init(&p->err, -1, 2, 0, r, opts->prefix_output);
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
int ad_job_local_nodes(const struct mpirun_opts *opts, struct ad_job *job)
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
                          const struct ad_job *job, const struct ad_proc *p, int node_procs,
                          int in_fd, int out_fd, int err_fd, int pmi_fd, int exec_fd, int ep_fd)
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
    if (app->wdir != NULL && chdir(app->wdir) != 0)
        goto fail;
    if (job->num == 0) /* spawned jobs are not bound */
        mpirun_bind_apply((int)(p - job->procs));
    const char *iso = getenv("DCFA_ISOLATE");
    if (iso != NULL && *iso != '\0') {
        char why[300];
        int modes = ad_isolate_parse(iso, why, sizeof(why));
        if (modes < 0 || ad_isolate_child(modes, why, sizeof(why)) != 0) {
            dprintf(2, "mpirun: %s\n", why);
            errno = EPERM;
            goto fail;
        }
    }
    ad_ep_child_env(p, ep_fd);
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
    /* this job's ranks here and the other jobs' running here: the library's wait policy */
    ad_putenv_int("DCFA_NODE_NPROCS", node_procs);
    if (job->num > 0) /* as Hydra marks spawned processes */
        setenv("PMI_SPAWNED", "1", 1);
    else
        unsetenv("PMI_SPAWNED");
    setenv("DCFA_JOBID", job->jobid, 1);
    if (job->mapping != NULL) /* saves the library a PMI get at start-up */
        setenv("DCFA_PROCESS_MAPPING", job->mapping, 1);
    else
        unsetenv("DCFA_PROCESS_MAPPING");
    setrlimit(RLIMIT_NOFILE, &ad_nofile_orig); /* the other fds close at exec */
    /* a spawned program was found already (ad_find_exe): no second search */
    if (app->exe != NULL)
        execv(app->exe, app->argv);
    else
        execvp(app->argv[0], app->argv);
fail:
    err = errno;
    if (write(exec_fd, &err, sizeof(err)) < 0)
        _exit(127);
    _exit(127);
}

const char *ad_proc_label(const struct ad_job *job, const struct ad_proc *p, char *buf, size_t len)
{
    if (job->num > 0)
        snprintf(buf, len, "spawned job %d rank %d", job->num, p->rank);
    else
        snprintf(buf, len, "rank %d", p->rank);
    return buf;
}

/* Starts one rank of job. Returns 0, or a negative error with the exit
 * status it means in *code and a message in msg[len]. */
static int ad_proc_launch(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p, int *code,
                          char *msg, size_t len)
{
    const struct mpirun_opts *opts = job->opts;
    const struct mpirun_app *app = &opts->apps[p->appnum];
    int sv[2] = {-1, -1}, outp[2] = {-1, -1}, errp[2] = {-1, -1};
    int execp[2] = {-1, -1}, inp[2] = {-1, -1}, ep_child = -1;
    int want_stdin = job->num == 0 && p->rank == 0 && d->stdin_open;
    char label[64];
    int err = 0, rc = -EIO;
    ssize_t n;
    pid_t pid;

    *code = 1;
    ad_proc_label(job, p, label, sizeof(label));
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0 ||
        pipe2(outp, O_CLOEXEC) != 0 || pipe2(errp, O_CLOEXEC) != 0 ||
        pipe2(execp, O_CLOEXEC) != 0 || (want_stdin && pipe2(inp, O_CLOEXEC) != 0) ||
        ad_ep_pair(p, &ep_child) != 0) {
        rc = -errno;
        snprintf(msg, len, "mpirun: cannot create pipes for %s: %s", label, strerror(errno));
        goto out;
    }
    pid = fork();
    if (pid < 0) {
        rc = -errno;
        snprintf(msg, len, "mpirun: cannot fork %s: %s", label, strerror(errno));
        goto out;
    }
    if (pid == 0)
        ad_child_exec(opts, app, job, p, ad_running(d) - job->nrunning + job->nprocs, inp[0],
                      outp[1], errp[1], sv[1], execp[1], ep_child);
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
    ad_stream_init(&p->out, outp[0], 1, job->num, p->rank, opts->prefix_output);
    ad_stream_init(&p->err, errp[0], 2, job->num, p->rank, opts->prefix_output);
    ad_set_nonblock(outp[0]);
    ad_set_nonblock(errp[0]);
    outp[0] = errp[0] = -1;
    if (want_stdin) {
        d->stdin_pipe = inp[1];
        inp[1] = -1;
        ad_set_nonblock(d->stdin_pipe);
    }
    if (n == (ssize_t)sizeof(err)) {
        rc = -err;
        *code = err == ENOENT ? 127 : 126;
        snprintf(msg, len, "mpirun: cannot execute '%s': %s", app->argv[0], strerror(err));
        goto out;
    }
    rc = 0;
out:
    if (ep_child >= 0)
        close(ep_child);
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
    char msg[600], pid[300], label[64];

    /* Lines it sent before exiting (abort, finalize) count first. */
    while (p->pmi_fd >= 0 && ad_pmi_input(d, job, p) > 0)
        ;
    if (p->pmi_fd >= 0) {
        close(p->pmi_fd);
        p->pmi_fd = -1;
    }
    ad_ep_close(p);
    if (p->rank == 0 && job->num == 0 && d->stdin_pipe >= 0) {
        if (d->tree != NULL && d->stdin_len > 0)
            ad_tree_stdin_ack(d, 1);
        close(d->stdin_pipe);
        d->stdin_pipe = -1;
        d->stdin_len = 0;
    }
    if (job->discard) /* killed after its spawn failed: the spawner was told */
        return;
    ad_proc_label(job, p, label, sizeof(label));
    if (WIFSIGNALED(st)) {
        int sig = WTERMSIG(st);
        snprintf(msg, sizeof(msg), "mpirun: %s (%s) killed by signal %d (%s)", label,
                 ad_pid_text(d, p, pid, sizeof(pid)), sig, strsignal(sig));
        ad_daemon_end(d, 128 + sig, msg);
    } else if (WIFEXITED(st) && WEXITSTATUS(st) != 0) {
        snprintf(msg, sizeof(msg), "mpirun: %s (%s) exited with status %d", label,
                 ad_pid_text(d, p, pid, sizeof(pid)), WEXITSTATUS(st));
        ad_daemon_end(d, WEXITSTATUS(st), msg);
    } else if (p->pmi_inited && !p->pmi_finalized) {
        snprintf(msg, sizeof(msg),
                 "mpirun: %s (%s) exited with status 0 without calling MPI_Finalize", label,
                 ad_pid_text(d, p, pid, sizeof(pid)));
        ad_daemon_end(d, 1, msg);
    } else if (!p->pmi_inited && d->phase == AD_RUN) {
        char who[sizeof(job->noinit)];
        snprintf(who, sizeof(who), "%.63s (%.300s)", label, ad_pid_text(d, p, pid, sizeof(pid)));
        if (d->tree != NULL)
            ad_tree_noinit(d, job, who);
        else
            ad_job_noinit(job, who, d->opts != NULL ? d->opts->noinit_grace : MPIRUN_NOINIT_GRACE);
    }
}

/* ---- a process that never called MPI_Init ----------------------------------------
 * Every MPI process of a job meets the others in MPI_Init's fence, so one that exits
 * without PMI init leaves them waiting for ever. Exiting 0 is no failure by itself
 * ("mpirun -n 4 hostname"), so the job ends only when, after a grace time, a process
 * of the job is in MPI here. Across hosts mpirun tells every daemon of the job. */
void ad_job_noinit(struct ad_job *job, const char *who, double grace)
{
    if (job->noinit[0] != '\0')
        return;
    snprintf(job->noinit, sizeof(job->noinit), "%s", who);
    job->noinit_grace = grace;
    ad_job_noinit_arm(job);
}

void ad_job_noinit_arm(struct ad_job *job)
{
    if (job->noinit[0] != '\0' && job->noinit_check == 0)
        job->noinit_check = ad_now() + job->noinit_grace;
}

/* The grace passed: a process here in MPI ends the job. */
static void ad_job_noinit_check(struct ad_daemon *d, struct ad_job *job)
{
    char msg[sizeof(job->noinit) + 500], pid[300], label[64];

    job->noinit_check = 0;
    for (int r = 0; r < job->nprocs; r++) {
        const struct ad_proc *p = &job->procs[r];
        if (!p->running || !p->pmi_inited || p->pmi_finalized)
            continue;
        snprintf(msg, sizeof(msg),
                 "mpirun: %s exited with status 0 without calling MPI_Init while %s (%s) is in "
                 "MPI: ending the job",
                 job->noinit, ad_proc_label(job, p, label, sizeof(label)),
                 ad_pid_text(d, p, pid, sizeof(pid)));
        ad_daemon_end(d, 1, msg);
        return;
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
                    if (--job->nrunning == 0)
                        job->done_at = ad_now();
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

int ad_running(const struct ad_daemon *d)
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
    /* (a passed drain deadline was acted on; a daemon of the tree lives on) */
    double cand[6] = {d->phase_deadline,
                      d->phase == AD_RUN ? d->timeout_deadline : 0,
                      d->drain_deadline > now ? d->drain_deadline : 0,
                      d->tree != NULL ? ad_tree_deadline(d) : 0,
                      d->adopt_retry,
                      ad_epr_deadline()};

    for (int i = 0; i < 6; i++)
        if (cand[i] > 0 && (next == 0 || cand[i] < next))
            next = cand[i];
    for (int j = 0; j < d->njobs; j++) /* a process that never called MPI_Init */
        if (d->jobs[j]->noinit_check > 0 && (next == 0 || d->jobs[j]->noinit_check < next))
            next = d->jobs[j]->noinit_check;
    for (int j = 1; j < d->njobs; j++) { /* output of ended spawned jobs */
        double t = d->jobs[j]->done_at + AD_DRAIN;
        /* (t passed: freed, unless the tree holds it) */
        if (d->jobs[j]->nrunning == 0 && d->jobs[j]->done_at > 0 && t > now &&
            (next == 0 || t < next))
            next = t;
    }
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
    for (int j = 0; j < d->njobs && d->phase == AD_RUN; j++)
        if (d->jobs[j]->noinit_check > 0 && now >= d->jobs[j]->noinit_check)
            ad_job_noinit_check(d, d->jobs[j]);
    if (d->drain_deadline > 0 && now >= d->drain_deadline) {
        for (int j = 0; j < d->njobs; j++) {
            for (int r = 0; r < d->jobs[j]->nprocs; r++) {
                ad_stream_close(&d->jobs[j]->procs[r].out);
                ad_stream_close(&d->jobs[j]->procs[r].err);
            }
        }
    }
}

/* Entries the loop may poll: a few of its own (the relay's set among them), four per rank, the
 * tree's. */
static int ad_loop_nfds(struct ad_daemon *d)
{
    int n = 8;

    for (int j = 0; j < d->njobs; j++)
        n += 4 * d->jobs[j]->nprocs;
    if (d->tree != NULL)
        n += ad_tree_nfds(d) + ad_epr_nfds();
    return n;
}

int ad_loop(struct ad_daemon *d)
{
    int cap = 0, rc = 0;
    struct pollfd *pfds = NULL;
    struct ad_fd_ref *refs = NULL;

    for (;;) {
        int n = 0, need;
        double now = ad_now();

        ad_jobs_reap(d);
        if (d->singleton)
            ad_singleton_update(d);
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
        need = ad_loop_nfds(d); /* spawns add jobs: grow as needed */
        if (need > cap) {
            struct pollfd *np = realloc(pfds, (size_t)need * sizeof(*pfds));
            if (np != NULL)
                pfds = np;
            struct ad_fd_ref *nr = realloc(refs, (size_t)need * sizeof(*refs));
            if (nr != NULL)
                refs = nr;
            if (np == NULL || nr == NULL) {
                rc = -ENOMEM;
                break;
            }
            cap = need;
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
        if (d->singleton && d->adopt_fd >= 0 && !d->adopt_gone) { /* stays readable */
            pfds[n] = (struct pollfd){.fd = d->adopt_fd, .events = POLLIN};
            refs[n++] = (struct ad_fd_ref){.kind = AD_FD_ADOPTED};
        }
        for (int j = 0; j < d->njobs; j++) {
            struct ad_job *job = d->jobs[j];
            for (int r = 0; r < job->nprocs; r++) {
                struct ad_proc *p = &job->procs[r];
                if (p->pmi_fd >= 0) {
                    pfds[n] = (struct pollfd){.fd = p->pmi_fd, .events = POLLIN};
                    refs[n++] = (struct ad_fd_ref){AD_FD_PMI, job, p, NULL};
                }
                if (p->ep_fd >= 0) {
                    pfds[n] = (struct pollfd){.fd = p->ep_fd, .events = POLLIN};
                    refs[n++] = (struct ad_fd_ref){AD_FD_EP, job, p, NULL};
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
        if (ad_relay_fd() >= 0) {
            pfds[n] = (struct pollfd){.fd = ad_relay_fd(), .events = POLLIN};
            refs[n++] = (struct ad_fd_ref){.kind = AD_FD_RELAY};
        }
        if (d->tree != NULL) {
            n = ad_tree_pollfds(d, pfds, refs, n);
            n = ad_epr_pollfds(d, pfds, refs, n);
        }
        int prc = poll(pfds, (nfds_t)n, ad_poll_timeout(d, now));
        if (prc < 0 && errno != EINTR)
            break;
        /* Jobs spawned while handling these events are polled from the next
         * round; none is freed before it (ad_jobs_reap above). */
        for (int i = 0; prc > 0 && i < n; i++) {
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
            case AD_FD_EP:
                ad_ep_input(d, refs[i].job, refs[i].proc);
                break;
            case AD_FD_RELAY:
                ad_relay_run();
                break;
            case AD_FD_EPR:
                ad_epr_event(d, &refs[i], ev);
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
            case AD_FD_ADOPTED: /* the singleton ended */
                d->adopt_gone = 1;
                break;
            }
        }
        ad_check_deadlines(d, ad_now());
    }
    free(pfds);
    free(refs);
    return rc;
}

/* ---- the job table and spawned jobs ------------------------------------------ */

int ad_jobs_add(struct ad_daemon *d, struct ad_job *job)
{
    if (d->njobs == d->jobs_cap) {
        int cap = d->jobs_cap > 0 ? 2 * d->jobs_cap : 4;
        struct ad_job **j = realloc(d->jobs, (size_t)cap * sizeof(*j));
        if (j == NULL)
            return -ENOMEM;
        d->jobs = j;
        d->jobs_cap = cap;
    }
    d->jobs[d->njobs++] = job;
    return 0;
}

void ad_jobs_reap(struct ad_daemon *d)
{
    double now = ad_now();

    for (int j = d->njobs - 1; j >= 1; j--) {
        struct ad_job *job = d->jobs[j];
        int open = 0;
        if (job->num == 0 || job->nrunning > 0 || (d->tree != NULL && ad_tree_job_held(d, job)))
            continue;
        if (job->done_at == 0)
            job->done_at = now;
        for (int r = 0; r < job->nprocs; r++)
            open |= job->procs[r].out.fd >= 0 || job->procs[r].err.fd >= 0;
        if (open && now < job->done_at + AD_DRAIN)
            continue; /* its output is still coming */
        /* what its ranks left in their process groups, as at the end of the run */
        for (int r = 0; r < job->nprocs; r++)
            if (job->procs[r].pid > 0)
                kill(-job->procs[r].pid, SIGKILL);
        ad_job_cleanup_files(job);
        ad_job_destroy(job);
        memmove(&d->jobs[j], &d->jobs[j + 1], (size_t)(d->njobs - j - 1) * sizeof(*d->jobs));
        d->njobs--;
    }
}

void ad_daemon_free(struct ad_daemon *d)
{
    for (int j = 0; j < d->njobs; j++) {
        ad_job_cleanup_files(d->jobs[j]);
        ad_job_destroy(d->jobs[j]);
    }
    free(d->jobs);
    d->jobs = NULL;
    d->njobs = d->jobs_cap = 0;
    if (d->names.buckets != NULL)
        ad_kvs_destroy(&d->names);
}

/* The spawn failed (as a whole when errcmd < 0). */
static void ad_spawn_fail(struct ad_spawn_result *res, int rc, int errcmd, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void ad_spawn_fail(struct ad_spawn_result *res, int rc, int errcmd, const char *fmt, ...)
{
    va_list ap;

    res->rc = rc;
    res->errcmd = errcmd;
    va_start(ap, fmt);
    vsnprintf(res->msg, sizeof(res->msg), fmt, ap);
    va_end(ap);
}

/* 1 when name (a host of info "host", ":slots" allowed) is this machine. */
static int ad_host_is_here(const char *name, size_t len)
{
    char me[256] = "", want[256];

    if (len >= sizeof(want))
        return 0;
    memcpy(want, name, len);
    want[len] = '\0';
    want[strcspn(want, ":")] = '\0';
    if (strcmp(want, "localhost") == 0 || strcmp(want, "127.0.0.1") == 0)
        return 1;
    gethostname(me, sizeof(me) - 1);
    return ad_same_host(want, me);
}

int ad_same_host(const char *a, const char *b)
{
    size_t la = strcspn(a, "."), lb = strcspn(b, ".");

    if (strcmp(a, b) == 0)
        return 1;
    return la == lb && strncmp(a, b, la) == 0 && (a[la] == '\0' || b[lb] == '\0');
}

/* " on host 'h'" in a spawn's message when the job spans hosts, else "". */
static const char *ad_on_host(const struct ad_daemon *d, char *buf, size_t cap)
{
    if (d->host == NULL)
        return "";
    snprintf(buf, cap, " on host '%s'", d->host);
    return buf;
}

/* path made absolute against dir (or the daemon's directory when NULL);
 * 0 or -ENAMETOOLONG. */
static int ad_abs_path(const char *path, const char *dir, char *out, size_t cap)
{
    char cwd[PATH_MAX];
    int n;

    if (path[0] == '/') {
        n = snprintf(out, cap, "%s", path);
    } else {
        if (dir == NULL)
            dir = getcwd(cwd, sizeof(cwd)) != NULL ? cwd : ".";
        n = snprintf(out, cap, "%s/%s", dir, path);
    }
    return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* 0 when path (relative to wdir) is a file we may execute; else -errno. */
static int ad_exe_check(const char *path, const char *wdir, char *out, size_t cap)
{
    struct stat st;
    int rc = ad_abs_path(path, wdir, out, cap);

    if (rc != 0)
        return rc;
    if (stat(out, &st) != 0)
        return -errno;
    if (!S_ISREG(st.st_mode))
        return -EACCES; /* as execve says for a directory */
    return access(out, X_OK) == 0 ? 0 : -errno;
}

/* What execvp would run for command once in wdir: with a '/' the file itself,
 * else the first executable dir/command of the search path (EACCES wins over
 * ENOENT, as execvp does). 0 with the absolute path in out[cap], or -errno. */
static int ad_find_exe(const char *command, const char *search, const char *wdir, char *out,
                       size_t cap)
{
    char cand[PATH_MAX];
    int err = -ENOENT;

    if (strchr(command, '/') != NULL)
        return ad_exe_check(command, wdir, out, cap);
    if (search == NULL)
        search = "/bin:/usr/bin"; /* execvp's default without PATH */
    for (const char *s = search;;) {
        size_t len = strcspn(s, ":");
        int rc = len == 0 ? snprintf(cand, sizeof(cand), "%s", command)
                          : snprintf(cand, sizeof(cand), "%.*s/%s", (int)len, s, command);
        if (rc > 0 && (size_t)rc < sizeof(cand)) {
            rc = ad_exe_check(cand, wdir, out, cap);
            if (rc == 0)
                return 0;
            if (rc == -EACCES)
                err = rc;
        }
        if (s[len] == '\0')
            break;
        s += len + 1;
    }
    return err;
}

static void ad_spawn_opts_free(struct mpirun_opts *o)
{
    if (o == NULL)
        return;
    for (int a = 0; a < o->napps; a++) {
        for (int i = 0; o->apps[a].argv != NULL && o->apps[a].argv[i] != NULL; i++)
            free(o->apps[a].argv[i]);
        free(o->apps[a].argv);
        free(o->apps[a].exe);
        free(o->apps[a].wdir);
    }
    free(o->apps);
    free(o); /* genv belongs to mpirun's command line */
}

/* The program of command c: info keys, working directory, executable. 0, or
 * the error in res. */
static int ad_spawn_app(struct ad_daemon *d, const struct ad_spawn_cmd *c, int i, int here,
                        struct mpirun_app *app, struct ad_spawn_result *res)
{
    extern char **environ;
    char *const *envs[2] = {environ, d->opts->genv};
    int nenvs[2] = {-1, d->opts->ngenv};
    const char *wdir = NULL, *search = NULL;
    char path[PATH_MAX], me[256] = "", where[300];
    struct stat st;
    int rc;

    for (int k = 0; k < c->ninfo; k++) {
        const char *key = c->info_keys[k], *val = c->info_vals[k];
        if (strcmp(key, "wdir") == 0) {
            wdir = val;
        } else if (strcmp(key, "path") == 0) {
            search = val;
        } else if (d->tree != NULL) {
            /* host, hosts, file: placed by mpirun (ad_tree.c) */
        } else if (strcmp(key, "host") == 0 || strcmp(key, "hosts") == 0) {
            for (const char *h = val;; h++) {
                size_t len = strcspn(h, ",");
                if (!ad_host_is_here(h, len)) {
                    gethostname(me, sizeof(me) - 1);
                    ad_spawn_fail(res, -EHOSTUNREACH, i,
                                  "spawn: info host '%.*s' is not this host ('%s'), and mpirun "
                                  "runs on this host only (-hosts/-hostfile name more)",
                                  (int)len, h, me);
                    return -1;
                }
                h += len;
                if (*h == '\0')
                    break;
            }
        } else if (strcmp(key, "file") == 0 || strcmp(key, "hostfile") == 0) {
            struct mpirun_opts ho = {0};
            char why[400];
            int h = 0;
            if (mpirun_hosts_read_file_err(&ho, val, why, sizeof(why)) != 0) {
                mpirun_hosts_free(&ho);
                ad_spawn_fail(res, -EINVAL, i, "spawn: info '%s': %s", key, why);
                return -1;
            }
            while (h < ho.nhosts && ad_host_is_here(ho.hosts[h].name, strlen(ho.hosts[h].name)))
                h++;
            if (h < ho.nhosts) {
                gethostname(me, sizeof(me) - 1);
                ad_spawn_fail(res, -EHOSTUNREACH, i,
                              "spawn: host '%s' of info '%s' is not this host ('%s'), and mpirun "
                              "runs on this host only (-hosts/-hostfile name more)",
                              ho.hosts[h].name, key, me);
                mpirun_hosts_free(&ho);
                return -1;
            }
            mpirun_hosts_free(&ho);
        } /* other keys: ignored */
    }
    app->nprocs = c->maxprocs;
    if (!here) /* none of its processes runs on this host: nothing to check */
        wdir = NULL;
    if (wdir != NULL) {
        rc = ad_abs_path(wdir, NULL, path, sizeof(path));
        if (rc == 0 && stat(path, &st) != 0)
            rc = -errno;
        else if (rc == 0 && !S_ISDIR(st.st_mode))
            rc = -ENOTDIR;
        else if (rc == 0 && access(path, X_OK) != 0)
            rc = -errno;
        if (rc != 0) {
            ad_spawn_fail(res, rc, i, "spawn: cannot use working directory '%s'%s: %s", wdir,
                          ad_on_host(d, where, sizeof(where)), strerror(-rc));
            return -1;
        }
        if ((app->wdir = strdup(path)) == NULL)
            goto oom;
    }
    if (search == NULL)
        search = ad_env_find(envs, nenvs, 2, "PATH"); /* as the ranks will have it */
    rc = here ? ad_find_exe(c->command, search, app->wdir, path, sizeof(path)) : 0;
    if (rc != 0) {
        ad_spawn_fail(res, rc, i, "spawn: cannot execute '%s'%s: %s", c->command,
                      ad_on_host(d, where, sizeof(where)), strerror(-rc));
        return -1;
    }
    if (here && (app->exe = strdup(path)) == NULL)
        goto oom;
    app->argv = calloc((size_t)c->nargv + 2, sizeof(char *));
    if (app->argv == NULL || (app->argv[0] = strdup(c->command)) == NULL)
        goto oom;
    for (int k = 0; k < c->nargv; k++)
        if ((app->argv[k + 1] = strdup(c->argv[k])) == NULL)
            goto oom;
    return 0;
oom:
    ad_spawn_fail(res, -ENOMEM, -1, "spawn: out of memory");
    return -1;
}

/* The request's programs as a job's options (here[i]: command i has
 * processes on this host, NULL: all do); NULL with the failure in res. */
static struct mpirun_opts *ad_spawn_opts(struct ad_daemon *d, const struct ad_spawn_req *req,
                                         const unsigned char *here, struct ad_spawn_result *res)
{
    struct mpirun_opts *own = calloc(1, sizeof(*own));

    if (own == NULL || (own->apps = calloc((size_t)req->ncmds, sizeof(*own->apps))) == NULL) {
        free(own);
        ad_spawn_fail(res, -ENOMEM, -1, "spawn: out of memory");
        return NULL;
    }
    own->genv = d->opts->genv;
    own->ngenv = d->opts->ngenv;
    own->prefix_output = d->prefix_output;
    for (int i = 0; i < req->ncmds; i++) {
        own->napps = i + 1;
        if (ad_spawn_app(d, &req->cmds[i], i, here == NULL || here[i], &own->apps[i], res) != 0) {
            ad_spawn_opts_free(own);
            return NULL;
        }
    }
    return own;
}

/* Job num (jobid) of the request, its ranks here ranks[nranks] (NULL: all),
 * with the preput pairs, in the table; NULL with the failure in res (own
 * freed either way with the job). */
static struct ad_job *ad_spawn_job(struct ad_daemon *d, struct mpirun_opts *own,
                                   const struct ad_spawn_req *req, int num, const char *jobid,
                                   const char *spawner, const int *ranks, int nranks,
                                   const int *node_of, struct ad_spawn_result *res)
{
    struct ad_job *nj = NULL;

    if (ad_job_create(own, jobid, ranks, nranks, &nj) != 0) {
        ad_spawn_opts_free(own);
        ad_spawn_fail(res, -ENOMEM, -1, "spawn: out of memory");
        return NULL;
    }
    nj->own = own;
    nj->num = num;
    snprintf(nj->spawner, sizeof(nj->spawner), "%s", spawner);
    for (int r = 0; r < nj->nprocs; r++)
        nj->procs[r].out.job = nj->procs[r].err.job = nj->num;
    for (int k = 0; k < req->npreput; k++)
        if (ad_kvs_put(&nj->kvs, req->pp_keys[k], req->pp_vals[k]) != 0)
            nj->discard = 1;
    if (nj->discard ||
        (node_of != NULL ? ad_job_set_nodes(nj, node_of) : ad_job_local_nodes(own, nj)) != 0 ||
        ad_jobs_add(d, nj) != 0) {
        ad_job_destroy(nj);
        ad_spawn_fail(res, -ENOMEM, -1, "spawn: out of memory");
        return NULL;
    }
    snprintf(res->jobid, sizeof(res->jobid), "%s", nj->kvsname);
    return nj;
}

/* Starts the job's processes here; after a failure the started ones are
 * killed (and not judged: the spawner is told). */
static void ad_spawn_start(struct ad_daemon *d, struct ad_job *nj, struct ad_spawn_result *res)
{
    if (nj->nprocs > 0)
        d->drain_deadline = 0; /* output flows again (a tree daemon idle till now) */
    for (int r = 0; r < nj->nprocs; r++) {
        struct ad_proc *np = &nj->procs[r];
        char msg[600], where[300];
        int code, rc = ad_proc_launch(d, nj, np, &code, msg, sizeof(msg));
        if (rc == 0)
            continue;
        nj->discard = 1; /* the job is freed once they are reaped */
        for (int k = 0; k <= r; k++)
            if (nj->procs[k].pid > 0)
                kill(-nj->procs[k].pid, SIGKILL);
        ad_spawn_fail(res, rc, np->appnum, "spawn: %s%s", msg + strlen("mpirun: "),
                      ad_on_host(d, where, sizeof(where)));
        return;
    }
}

void ad_spawn_run(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p,
                  const struct ad_spawn_req *req, struct ad_spawn_result *res)
{
    struct mpirun_opts *own;
    struct ad_job *nj;
    char jobid[ASSIST_JOBID_MAX + 16];
    int total = 0, running = ad_running(d), n;

    *res = (struct ad_spawn_result){.errcmd = -1};
    if (p->adopted) { /* a singleton's relative paths are from its directory, as it has it now */
        char cwd[64];
        snprintf(cwd, sizeof(cwd), "/proc/%ld/cwd", (long)p->pid);
        if (chdir(cwd) != 0) {
            /* keep ours */
        }
    }
    if (d->opts == NULL || d->njobs < 1) {
        ad_spawn_fail(res, -ENOSYS, -1, "spawn: not available here");
        return;
    }
    if (d->phase != AD_RUN || d->ended) {
        ad_spawn_fail(res, -ECANCELED, -1, "spawn: the job is ending");
        return;
    }
    for (int i = 0; i < req->ncmds; i++)
        total += req->cmds[i].maxprocs;
    if (d->no_oversubscribe && (long)running + total > d->universe) {
        ad_spawn_fail(res, -EAGAIN, -1,
                      "spawn: %d processes would run (%d running, %d new), more than the universe "
                      "size %d, and mpirun has --no-oversubscribe",
                      running + total, running, total, d->universe);
        return;
    }
    n = snprintf(jobid, sizeof(jobid), "%s_%d", d->jobs[0]->jobid, d->spawned + 1);
    if (n < 0 || n > ASSIST_JOBID_MAX) {
        ad_spawn_fail(res, -ENAMETOOLONG, -1, "spawn: no job id left");
        return;
    }
    if ((own = ad_spawn_opts(d, req, NULL, res)) == NULL)
        return;
    nj = ad_spawn_job(d, own, req, d->spawned + 1, jobid, job->kvsname, NULL, 0, NULL, res);
    if (nj == NULL)
        return;
    d->spawned++;
    ad_spawn_start(d, nj, res);
}

int ad_spawn_local(struct ad_daemon *d, const struct ad_spawn_req *req, int num, const char *jobid,
                   const char *spawner, const int *ranks, int nranks, const int *node_of,
                   struct ad_spawn_result *res, struct ad_job **out)
{
    struct ad_spawn_result oom = {.errcmd = -1};
    unsigned char *here = calloc((size_t)req->ncmds + 1, 1);
    struct mpirun_opts *own;
    struct ad_job *nj;
    int failed = 0;

    *res = (struct ad_spawn_result){.errcmd = -1};
    *out = NULL;
    if (here == NULL)
        return -ENOMEM;
    for (int i = 0, first = 0, k = 0; i < req->ncmds; first += req->cmds[i++].maxprocs)
        for (; k < nranks && ranks[k] < first + req->cmds[i].maxprocs; k++)
            here[i] = 1;
    /* Without a program here the job still exists (its fences pass through
     * this daemon), with no process. */
    own = ad_spawn_opts(d, req, here, res);
    if (own == NULL) {
        failed = 1;
        nranks = 0;
        memset(here, 0, (size_t)req->ncmds);
        own = ad_spawn_opts(d, req, here, &oom);
    }
    free(here);
    if (own == NULL)
        return -ENOMEM;
    if (d->phase != AD_RUN || d->ended) {
        if (!failed)
            ad_spawn_fail(res, -ECANCELED, -1, "spawn: the job is ending");
        failed = 1;
        nranks = 0;
    }
    nj = ad_spawn_job(d, own, req, num, jobid, spawner, ranks, nranks, node_of,
                      failed ? &oom : res);
    if (nj == NULL)
        return -ENOMEM;
    if (!failed)
        ad_spawn_start(d, nj, res);
    *out = nj;
    return 0;
}

/* A job by its number (0 is mpirun's), NULL if gone. */
struct ad_job *ad_job_by_num(struct ad_daemon *d, int num)
{
    for (int j = 0; j < d->njobs; j++)
        if (d->jobs[j]->num == num)
            return d->jobs[j];
    return NULL;
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
    char msg[600];
    int code;

    (void)opts; /* the job's own (job->opts) */
    /* this host's placement from its own topology, before any rank starts */
    if (mpirun_bind_plan(&job->opts->bind, job->nprocs, d->host, msg, sizeof(msg)) != 0)
        ad_daemon_end(d, 2, msg);
    for (int i = 0; i < job->nprocs && !d->ended; i++) {
        if (ad_proc_launch(d, job, &job->procs[i], &code, msg, sizeof(msg)) != 0)
            ad_daemon_end(d, code, msg);
        else if (job->opts->bind.report) {
            mpirun_bind_report(i, job->procs[i].rank, job->procs[i].pid, msg, sizeof(msg));
            ad_io_write(2, msg, strlen(msg));
        }
    }
    d->launched = 1;
}

int ad_run(const struct mpirun_opts *opts)
{
    struct ad_daemon d = {.sigfd = -1, .stdin_pipe = -1};
    struct ad_job *job = NULL;
    const char *ns = getenv("DCFA_NAMESERVER");
    sigset_t oldmask;
    int rc = 1;

    if (opts->nhosts > 0)
        return ad_tree_run(opts);
    if (ad_daemon_setup(&d, &oldmask) != 0)
        return 1;
    d.opts = opts;
    d.universe = opts->universe;
    d.no_oversubscribe = opts->no_oversubscribe;
    d.nameserver = ns != NULL && *ns != '\0' ? ns : NULL;
    d.prefix_output = opts->prefix_output;
    d.timeout = opts->timeout;
    d.stdin_open = ad_stdin_usable();
    if (ad_job_create(opts, NULL, NULL, 0, &job) != 0 || ad_job_local_nodes(opts, job) != 0 ||
        ad_jobs_add(&d, job) != 0) {
        ad_job_destroy(job);
        fprintf(stderr, "mpirun: out of memory\n");
        goto out;
    }
    if (opts->timeout > 0)
        d.timeout_deadline = ad_now() + opts->timeout;
    ad_launch_local(&d, opts);
    if (ad_loop(&d) != 0)
        ad_record(&d, 1, "mpirun: out of memory");
    ad_kill_stragglers(&d);
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
    ad_daemon_free(&d); /* every job's files */
    if (d.ended) {
        ad_io_write(2, d.end_msg, strlen(d.end_msg));
        ad_io_write(2, "\n", 1);
    }
    rc = d.ended ? d.exit_code : 0;
    if (d.stdin_pipe >= 0)
        close(d.stdin_pipe);
out:
    ad_daemon_free(&d);
    free(d.stdin_buf);
    close(d.sigfd);
    sigprocmask(SIG_SETMASK, &oldmask, NULL);
    return rc;
}
