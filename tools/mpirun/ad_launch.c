/* ad_launch: starting a job's processes on this host: the child's environment, descriptors,
 * binding and confinement, then exec. */
#include "ad_launch.h"
#include "ad_ep.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

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
    if (getppid() != ad_daemon_pid())
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
    setrlimit(RLIMIT_NOFILE, ad_daemon_nofile()); /* the other fds close at exec */
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

/* Starts one rank of job. Returns 0, or a negative error with the exit
 * status it means in *code and a message in msg[len]. */
int ad_proc_launch(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p, int *code, char *msg,
                   size_t len)
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
