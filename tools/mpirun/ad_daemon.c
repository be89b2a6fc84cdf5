/* ad: the assist daemon's job table and loop: the jobs and their processes, their
 * exits, stdin, output and deadlines, ending and cleaning up the jobs. Single-threaded;
 * one poll() loop with a signalfd for signals, which names no other module: the PMI
 * server, the endpoints, the tree and the rest register with the reactor
 * (ad_reactor.h). Starting processes is ad_launch.c's, spawns ad_spawn.c's. */
#include "ad.h"
#include "ad_seg.h"
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

pid_t ad_daemon_pid(void) { return ad_pid; }

const struct rlimit *ad_daemon_nofile(void) { return &ad_nofile_orig; }

/* ---- ending the job ---------------------------------------------------- */

/* Records the first end cause; 1 if this one was recorded. */
int ad_daemon_record(struct ad_daemon *d, int exit_code, const char *msg)
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
    ad_reactor_fire(d, AD_EV_PHASE, &(struct ad_event_arg){.code = (int)phase});
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
    if (ad_daemon_record(d, exit_code, msg))
        ad_reactor_fire(d, AD_EV_END, &(struct ad_event_arg){.code = exit_code, .msg = msg});
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
        if (pid > 0 &&
            !ad_reactor_fire(d, AD_EV_OWN_PID, &(struct ad_event_arg){.pid = (pid_t)pid}))
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
        ad_proc_close_ep(p);
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
    ad_reactor_fire(NULL, AD_EV_JOB_FREE, &(struct ad_event_arg){.job = job});
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
const char *ad_env_find(char *const *envs[], const int nenvs[], int nlists, const char *name)
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

const char *ad_proc_label(const struct ad_job *job, const struct ad_proc *p, char *buf, size_t len)
{
    if (job->num > 0)
        snprintf(buf, len, "spawned job %d rank %d", job->num, p->rank);
    else
        snprintf(buf, len, "rank %d", p->rank);
    return buf;
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
    const struct ad_fd_ref pmi = {AD_FD_PMI, job, p, NULL, NULL};

    /* Lines it sent before exiting (abort, finalize) count first. */
    while (p->pmi_fd >= 0 && ad_reactor_dispatch(d, &pmi, POLLIN) > 0)
        ;
    if (p->pmi_fd >= 0) {
        close(p->pmi_fd);
        p->pmi_fd = -1;
    }
    ad_proc_close_ep(p);
    if (p->rank == 0 && job->num == 0 && d->stdin_pipe >= 0) {
        if (d->stdin_len > 0)
            ad_reactor_fire(d, AD_EV_STDIN_ACK, &(struct ad_event_arg){.code = 1});
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
        if (!ad_reactor_fire(d, AD_EV_NOINIT, &(struct ad_event_arg){.job = job, .who = who}))
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
        if (ad_reactor_fire(d, AD_EV_CHILD, &(struct ad_event_arg){.pid = pid, .status = st}))
            continue; /* a child daemon's start process, or the gateway */
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
            ad_reactor_fire(d, AD_EV_USR1, NULL);
        } else if (d->phase == AD_RUN) {
            snprintf(msg, sizeof(msg), "mpirun: received signal %d (%s), terminating the job", sig,
                     strsignal(sig));
            ad_daemon_end(d, 128 + sig, msg);
        } else {
            if (ad_daemon_record(d, 128 + sig, "mpirun: terminated by a signal"))
                ad_reactor_fire(d, AD_EV_END,
                                &(struct ad_event_arg){.code = 128 + sig,
                                                       .msg = "mpirun: terminated by a signal"});
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
        ad_reactor_fire(d, AD_EV_STDIN_ACK, &(struct ad_event_arg){.code = 1});
        return;
    }
    d->stdin_len -= (size_t)n;
    memmove(d->stdin_buf, d->stdin_buf + n, d->stdin_len);
    if (d->stdin_len == 0)
        ad_reactor_fire(d, AD_EV_STDIN_ACK, &(struct ad_event_arg){.code = 0});
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
    double cand[5] = {d->phase_deadline, d->phase == AD_RUN ? d->timeout_deadline : 0,
                      d->drain_deadline > now ? d->drain_deadline : 0, ad_reactor_deadline(d),
                      d->adopt_retry};

    for (int i = 0; i < 5; i++)
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
        ad_daemon_record(d, 124, msg);
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

/* Entries the loop may poll: a few of its own, four per rank, the sources' (ad_reactor.h). */
static int ad_loop_nfds(struct ad_daemon *d)
{
    int n = 8;

    for (int j = 0; j < d->njobs; j++)
        n += 4 * d->jobs[j]->nprocs;
    return n + ad_reactor_nfds(d);
}

/* The daemon's own fds (ad_reactor_handle, in ad_daemon_setup). */
static int ad_on_sigfd(struct ad_daemon *d, const struct ad_fd_ref *ref, short ev)
{
    (void)ref;
    (void)ev;
    ad_on_signal(d);
    return 0;
}

static int ad_on_stdin(struct ad_daemon *d, const struct ad_fd_ref *ref, short ev)
{
    (void)ref;
    if (ev & POLLNVAL)
        ad_stdin_stop(d);
    else
        ad_stdin_read(d);
    return 0;
}

static int ad_on_stdin_pipe(struct ad_daemon *d, const struct ad_fd_ref *ref, short ev)
{
    (void)ref;
    (void)ev;
    if (d->stdin_pipe >= 0)
        ad_stdin_write(d);
    return 0;
}

static int ad_on_output(struct ad_daemon *d, const struct ad_fd_ref *ref, short ev)
{
    (void)d;
    (void)ev;
    ad_stream_read(ref->kind == AD_FD_OUT ? &ref->proc->out : &ref->proc->err);
    return 0;
}

static int ad_on_adopted(struct ad_daemon *d, const struct ad_fd_ref *ref, short ev)
{
    (void)ref;
    (void)ev;
    d->adopt_gone = 1; /* the singleton ended */
    return 0;
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
        ad_reactor_fire(d, AD_EV_ROUND, NULL);
        if (d->launched && ad_running(d) == 0) {
            if (d->drain_deadline == 0) {
                ad_kill_stragglers(d);
                d->drain_deadline = now + AD_DRAIN;
            }
            if (d->tree == NULL && !ad_streams_open(d))
                break;
        }
        if (ad_reactor_fire(d, AD_EV_TICK, &(struct ad_event_arg){.now = now}))
            break;              /* the tree is done */
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
        int output_ok = !ad_reactor_fire(d, AD_EV_OUTPUT_HOLD, NULL);
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
        n = ad_reactor_pollfds(d, pfds, refs, n);
        int prc = poll(pfds, (nfds_t)n, ad_poll_timeout(d, now));
        if (prc < 0 && errno != EINTR)
            break;
        /* Jobs spawned while handling these events are polled from the next
         * round; none is freed before it (ad_jobs_reap above). */
        for (int i = 0; prc > 0 && i < n; i++) {
            short ev = pfds[i].revents;
            if (ev == 0)
                continue;
            ad_reactor_dispatch(d, &refs[i], ev);
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
        if (job->num == 0 || job->nrunning > 0 ||
            ad_reactor_fire(d, AD_EV_JOB_HELD, &(struct ad_event_arg){.job = job}))
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

void ad_spawn_opts_free(struct mpirun_opts *o)
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
    ad_reactor_handle(AD_FD_SIG, ad_on_sigfd);
    ad_reactor_handle(AD_FD_STDIN, ad_on_stdin);
    ad_reactor_handle(AD_FD_STDIN_PIPE, ad_on_stdin_pipe);
    ad_reactor_handle(AD_FD_OUT, ad_on_output);
    ad_reactor_handle(AD_FD_ERR, ad_on_output);
    ad_reactor_handle(AD_FD_ADOPTED, ad_on_adopted);
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

void ad_proc_close_ep(struct ad_proc *p)
{
    if (p->ep_fd >= 0)
        close(p->ep_fd);
    p->ep_fd = -1;
}

void ad_spawn_req_free(struct ad_spawn_req *r)
{
    if (r == NULL)
        return;
    for (int i = 0; i < r->ncmds + (r->in_block ? 1 : 0) && r->cmds != NULL; i++) {
        struct ad_spawn_cmd *c = &r->cmds[i];
        free(c->command);
        for (int k = 0; k < c->nargv; k++)
            free(c->argv[k]);
        for (int k = 0; k < c->ninfok; k++)
            free(c->info_keys[k]);
        for (int k = 0; k < c->ninfov; k++)
            free(c->info_vals[k]);
        free(c->argv);
        free(c->info_keys);
        free(c->info_vals);
    }
    free(r->cmds);
    for (int k = 0; k < r->nppk; k++)
        free(r->pp_keys[k]);
    for (int k = 0; k < r->nppv; k++)
        free(r->pp_vals[k]);
    free(r->pp_keys);
    free(r->pp_vals);
    free(r);
}

void ad_adopted_done(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p)
{
    if (!p->running)
        return;
    p->running = 0;
    job->nrunning--;
    job->done_at = ad_now();
    if (p->pmi_fd >= 0) { /* nothing more comes */
        close(p->pmi_fd);
        p->pmi_fd = -1;
    }
    if (d->adopt_fd >= 0 && !p->pmi_finalized) { /* after a finalize: its exit is judged */
        close(d->adopt_fd);
        d->adopt_fd = -1;
    }
}
