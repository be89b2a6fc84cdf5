/* ad_tree_main: the entry points: mpirun's job on one host (ad_run) or across hosts
 * (ad_tree_run), a remote host's daemon (ad_remote_main) and the cleanup of a lost one's host
 * (ad_cleanup_main). */
#include "ad_tree_main.h"
#include "ad_pmi.h"
#include "ad_ep.h"
#include "ad_ep_remote.h"
#include "ad_link.h"
#include "ad_tree.h"
#include "ad_rsh.h"
#include "ad_place.h"
#include "ad_launch.h"
#include "ad_gateway.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- the job description -------------------------------------------------------- */

static int ad_setup_encode(struct ad_tree *t, const struct mpirun_opts *o, int stdin_usable)
{
    extern char **environ;
    struct ad_buf *b = &t->setup;
    int rc = 0, nenv = 0;
    static const char *const skip[] = {"HOSTNAME=",
                                       "PWD=",
                                       "OLDPWD=",
                                       "SHLVL=",
                                       "_=",
                                       "SSH_",
                                       "PMI_",
                                       "MPI_LOCALRANKID=",
                                       "MPI_LOCALNRANKS=",
                                       "DCFA_JOBID=",
                                       "DCFA_PROCESS_MAPPING=",
                                       "SLURM_",
                                       "OMPI_",
                                       "HYDRA_",
                                       "HYDI_"};

    rc |= ad_buf_add_str(b, AD_SETUP_VERSION);
    rc |= ad_buf_add_str(b, t->jobid);
    rc |= ad_buf_add_str(b, t->cwd);
    rc |= ad_buf_add_str(b, t->exe);
    rc |= ad_buf_add_str(b, t->rsh);
    rc |= ad_buf_add_int(b, t->fanout);
    rc |= ad_buf_add_int(b, (long)t->launch_timeout);
    rc |= ad_buf_add_int(b, o->prefix_output);
    rc |= ad_buf_add_int(b, stdin_usable);
    rc |= ad_buf_add_int(b, o->universe);
    rc |= ad_buf_add_int(b, t->nhosts);
    for (int i = 0; i < t->nhosts; i++)
        rc |= ad_buf_add_str(b, t->hosts[i]);
    rc |= ad_buf_add_int(b, t->size);
    for (int r = 0; r < t->size; r++)
        rc |= ad_buf_add_int(b, t->host_of[r]);
    rc |= ad_buf_add_int(b, o->ngenv);
    for (int i = 0; i < o->ngenv; i++)
        rc |= ad_buf_add_str(b, o->genv[i]);
    rc |= ad_buf_add_int(b, o->napps);
    for (int a = 0; a < o->napps; a++) {
        int argc = 0;
        while (o->apps[a].argv[argc] != NULL)
            argc++;
        rc |= ad_buf_add_int(b, o->apps[a].nprocs);
        rc |= ad_buf_add_int(b, argc);
        for (int i = 0; i < argc; i++)
            rc |= ad_buf_add_str(b, o->apps[a].argv[i]);
        rc |= ad_buf_add_int(b, o->apps[a].nenv);
        for (int i = 0; i < o->apps[a].nenv; i++)
            rc |= ad_buf_add_str(b, o->apps[a].env[i]);
    }
    for (char **e = environ; *e != NULL; e++) {
        int keep = strchr(*e, '=') != NULL;
        for (size_t k = 0; keep && k < sizeof(skip) / sizeof(skip[0]); k++)
            if (strncmp(*e, skip[k], strlen(skip[k])) == 0)
                keep = 0;
        nenv += keep;
    }
    rc |= ad_buf_add_int(b, nenv);
    for (char **e = environ; *e != NULL; e++) {
        int keep = strchr(*e, '=') != NULL;
        for (size_t k = 0; keep && k < sizeof(skip) / sizeof(skip[0]); k++)
            if (strncmp(*e, skip[k], strlen(skip[k])) == 0)
                keep = 0;
        if (keep)
            rc |= ad_buf_add_str(b, *e);
    }
    /* mapping and binding: each daemon plans its host's ranks (bind.h) */
    rc |= ad_buf_add_int(b, o->bind.bind_given);
    rc |= ad_buf_add_int(b, o->bind.bind);
    rc |= ad_buf_add_int(b, o->bind.map);
    rc |= ad_buf_add_int(b, o->bind.ppr);
    rc |= ad_buf_add_int(b, o->bind.report);
    rc |= ad_buf_add_int(b, o->bind.oversubscribe);
    return rc != 0 ? -ENOMEM : 0;
}

/* Remote: rebuilds the job from SETUP (strings stay in t->setup). */
static int ad_setup_decode(struct ad_tree *t, int *stdin_usable)
{
    struct ad_cursor c = {t->setup.data, t->setup.data + t->setup.len, 0};
    struct mpirun_opts *o = &t->ropts;

    if (strcmp(ad_take(&c), AD_SETUP_VERSION) != 0)
        return -EPROTO;
    t->jobid = ad_take(&c);
    t->cwd = ad_take(&c);
    t->exe = ad_take(&c);
    t->rsh = ad_take(&c);
    t->fanout = (int)ad_take_int(&c, 1, 1024);
    t->launch_timeout = (double)ad_take_int(&c, 1, 1000000);
    o->prefix_output = (int)ad_take_int(&c, 0, 1);
    *stdin_usable = (int)ad_take_int(&c, 0, 1);
    o->universe = (int)ad_take_int(&c, 0, INT_MAX);
    t->nhosts = (int)ad_take_int(&c, 1, 1 << 20);
    if (c.bad)
        return -EPROTO;
    t->hosts = calloc((size_t)t->nhosts, sizeof(char *));
    if (t->hosts == NULL)
        return -ENOMEM;
    for (int i = 0; i < t->nhosts; i++)
        t->hosts[i] = (char *)ad_take(&c);
    t->size = (int)ad_take_int(&c, 1, 1 << 20);
    if (c.bad)
        return -EPROTO;
    t->host_of = calloc((size_t)t->size, sizeof(int));
    if (t->host_of == NULL)
        return -ENOMEM;
    for (int r = 0; r < t->size; r++)
        t->host_of[r] = (int)ad_take_int(&c, 0, t->nhosts - 1);
    o->ngenv = (int)ad_take_int(&c, 0, 1 << 20);
    if (c.bad)
        return -EPROTO;
    o->genv = calloc((size_t)o->ngenv + 1, sizeof(char *));
    if (o->genv == NULL)
        return -ENOMEM;
    for (int i = 0; i < o->ngenv; i++)
        o->genv[i] = (char *)ad_take(&c);
    o->napps = (int)ad_take_int(&c, 1, 1 << 20);
    if (c.bad)
        return -EPROTO;
    o->apps = calloc((size_t)o->napps, sizeof(*o->apps));
    if (o->apps == NULL)
        return -ENOMEM;
    for (int a = 0; a < o->napps && !c.bad; a++) {
        struct mpirun_app *app = &o->apps[a];
        int argc;
        app->nprocs = (int)ad_take_int(&c, 1, 1 << 20);
        argc = (int)ad_take_int(&c, 1, 1 << 20);
        if (c.bad)
            break;
        app->argv = calloc((size_t)argc + 1, sizeof(char *));
        if (app->argv == NULL)
            return -ENOMEM;
        for (int i = 0; i < argc; i++)
            app->argv[i] = (char *)ad_take(&c);
        app->nenv = (int)ad_take_int(&c, 0, 1 << 20);
        if (c.bad)
            break;
        app->env = calloc((size_t)app->nenv + 1, sizeof(char *));
        if (app->env == NULL)
            return -ENOMEM;
        for (int i = 0; i < app->nenv; i++)
            app->env[i] = (char *)ad_take(&c);
    }
    t->nenv = (int)ad_take_int(&c, 0, 1 << 20);
    if (c.bad)
        return -EPROTO;
    t->env = calloc((size_t)t->nenv + 1, sizeof(char *));
    if (t->env == NULL)
        return -ENOMEM;
    for (int i = 0; i < t->nenv; i++)
        t->env[i] = (char *)ad_take(&c);
    o->bind.bind_given = (int)ad_take_int(&c, 0, 1);
    o->bind.bind = (int)ad_take_int(&c, MPIRUN_RES_NONE, MPIRUN_RES_SOCKET);
    o->bind.map = (int)ad_take_int(&c, MPIRUN_RES_NONE, MPIRUN_RES_NODE);
    o->bind.ppr = (int)ad_take_int(&c, 0, 4096);
    o->bind.report = (int)ad_take_int(&c, 0, 1);
    o->bind.oversubscribe = (int)ad_take_int(&c, 0, 1);
    t->opts = o;
    return c.bad ? -EPROTO : 0;
}

static void ad_setup_free(struct ad_tree *t)
{
    if (!t->root) {
        for (int a = 0; a < t->ropts.napps; a++) {
            free(t->ropts.apps[a].argv);
            free(t->ropts.apps[a].env);
        }
        free(t->ropts.apps);
        free(t->ropts.genv);
        free(t->hosts);
        free(t->env);
    }
    free(t->host_of);
    free(t->kids);
    free(t->hostkey);
    free(t->hostname);
    free(t->hostgw);
    ad_buf_free(&t->setup);
    ad_buf_free(&t->ready);
}

/* Children of this node in the tree: v*F+1 .. v*F+F, up to nhosts. */
static int ad_tree_make_kids(struct ad_tree *t, const char *const *node_host)
{
    long first = (long)t->node * t->fanout + 1;
    int n = 0;

    for (long v = first; v < first + t->fanout && v <= t->nhosts; v++)
        n++;
    t->kids = calloc((size_t)(n > 0 ? n : 1), sizeof(*t->kids));
    if (t->kids == NULL)
        return -ENOMEM;
    t->nkids = n;
    for (int i = 0; i < n; i++) {
        struct ad_link *l = &t->kids[i];
        l->node = (int)first + i;
        l->host = node_host[l->node - 1];
        l->in = l->out = l->err = -1;
        l->state = AD_LINK_CLOSED;
    }
    return 0;
}

/* Remote hosts: output of the ranks goes up as OUTPUT frames. */
static struct ad_daemon *ad_sink_daemon;

static void ad_tree_sink(int out, const char *buf, size_t len)
{
    struct ad_tree *t = ad_t(ad_sink_daemon);

    ad_link_send(&t->parent, AD_M_OUTPUT, out, buf, len);
}

static int ad_tree_env_int(const char *name, int def, int lo, int hi)
{
    const char *s = getenv(name);
    char *end;
    long v;

    if (s == NULL || *s == '\0')
        return def;
    v = strtol(s, &end, 10);
    if (*end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "mpirun: bad %s '%s' (expected %d to %d), using %d\n", name, s, lo, hi,
                def);
        return def;
    }
    return (int)v;
}

static void ad_tree_cleanup_links(struct ad_tree *t)
{
    for (int i = 0; i < t->nkids; i++) {
        if (t->kids[i].pid > 0 && !t->kids[i].reaped)
            kill(-t->kids[i].pid, SIGKILL);
        ad_link_close(&t->kids[i]);
    }
}

int ad_tree_run(const struct mpirun_opts *opts)
{
    struct ad_daemon d = {.sigfd = -1, .stdin_pipe = -1};
    struct ad_tree t = {.root = 1};
    struct ad_job *job = NULL;
    char cwd[PATH_MAX], exe[PATH_MAX], jobid[ASSIST_JOBID_MAX + 1];
    const char **node_host = NULL;
    sigset_t oldmask;
    int rc = 1;
    ssize_t n;

    if (ad_daemon_setup(&d, &oldmask) != 0)
        return 1;
    d.tree = &t;
    ad_tree_attach();
    ad_pmi_attach();
    ad_ep_attach();
    d.prefix_output = opts->prefix_output;
    d.timeout = opts->timeout;
    d.launched = 1; /* no rank here */
    d.universe = opts->universe;
    d.opts = opts;
    d.no_oversubscribe = opts->no_oversubscribe;
    d.nameserver = getenv("DCFA_NAMESERVER");
    if (d.nameserver != NULL && *d.nameserver == '\0')
        d.nameserver = NULL;
    t.opts = opts;
    t.fanout = ad_tree_env_int("DCFA_TREE_FANOUT", 2, 1, 1024);
    t.launch_timeout = ad_tree_env_int("DCFA_LAUNCH_TIMEOUT", 60, 1, 1000000);
    t.rsh = getenv("DCFA_RSH") != NULL && *getenv("DCFA_RSH") != '\0' ? getenv("DCFA_RSH") : "ssh";
    if (getcwd(cwd, sizeof(cwd)) == NULL)
        snprintf(cwd, sizeof(cwd), "/");
    n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0) {
        fprintf(stderr, "mpirun: cannot find its own executable: %s\n", strerror(errno));
        goto out;
    }
    exe[n] = '\0';
    t.cwd = opts->wdir != NULL ? opts->wdir : cwd; /* -wdir: the daemons start there */
    t.exe = exe;
    if (ad_job_create(opts, NULL, &t.size, 0, &job) != 0) /* no rank runs here */
        goto oom;
    if (ad_jobs_add(&d, job) != 0) {
        ad_job_destroy(job);
        goto oom;
    }
    snprintf(jobid, sizeof(jobid), "%s", job->jobid);
    t.jobid = jobid;
    for (int a = 0; a < opts->napps; a++)
        t.size += opts->apps[a].nprocs;
    t.host_of = calloc((size_t)t.size, sizeof(int));
    node_host = calloc((size_t)opts->nhosts, sizeof(char *));
    t.hosts = calloc((size_t)opts->nhosts, sizeof(char *));
    if (t.host_of == NULL || node_host == NULL || t.hosts == NULL)
        goto oom;
    /* Every host gets a daemon, also one without ranks of job 0: spawns
     * may place processes there. */
    mpirun_hosts_place(opts, t.size, t.host_of);
    t.nhosts = opts->nhosts;
    for (int h = 0; h < opts->nhosts; h++)
        node_host[h] = t.hosts[h] = opts->hosts[h].name;
    for (int r = 0; r < t.size; r++) /* spawns take the slots after job 0's */
        ad_place_next(&t);
    d.stdin_open = ad_stdin_usable();
    if (ad_setup_encode(&t, opts, d.stdin_open) != 0 || ad_tree_make_kids(&t, node_host) != 0 ||
        (job->tree = ad_jtree_new(&t, t.host_of, t.size)) == NULL)
        goto oom;
    if (opts->timeout > 0)
        d.timeout_deadline = ad_now() + opts->timeout;
    for (int i = 0; i < t.nkids && !d.ended; i++)
        ad_kid_start(&d, &t, &t.kids[i]);
    if (ad_loop(&d) != 0)
        ad_daemon_end(&d, 1, "mpirun: out of memory");
    ad_tree_cleanup_links(&t);
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
    for (int j = 0; j < d.njobs; j++)
        ad_job_cleanup_files(d.jobs[j]);
    if (d.ended) {
        ad_io_write(2, d.end_msg, strlen(d.end_msg));
        ad_io_write(2, "\n", 1);
    }
    rc = d.ended ? d.exit_code : 0;
    /* a host of a program's own list that no daemon could be started on, before any rank
     * started: a bad host of the command line (status 2), named with its option and program */
    if (d.ended && !t.started && mpirun_hosts_blame(opts, d.end_msg))
        rc = 2;
    goto out;
oom:
    fprintf(stderr, "mpirun: out of memory\n");
out:
    ad_tree_cleanup_links(&t);
    ad_epr_close();
    ad_daemon_free(&d); /* the jobs and the names */
    free(node_host);
    free(t.hosts);
    t.hosts = NULL;
    ad_setup_free(&t);
    free(d.stdin_buf);
    close(d.sigfd);
    sigprocmask(SIG_SETMASK, &oldmask, NULL);
    return rc;
}

int ad_remote_main(void)
{
    struct ad_daemon d = {.sigfd = -1, .stdin_pipe = -1};
    struct ad_tree t = {.root = 0};
    struct ad_job *job = NULL;
    const char **node_host = NULL;
    unsigned char hdr[AD_HDR];
    char host[256] = "", key[UTIL_NODE_KEY_CAP], msg[PATH_MAX + 300];
    int *ranks = NULL, nranks = 0, stdin_usable = 0, rc = 1, setup_err = 0;
    sigset_t oldmask;
    uint32_t len;

    t.parent.in = 0;
    t.parent.out = 1;
    t.parent.err = -1;
    t.parent.node = -1;
    /* the job: one SETUP frame */
    if (ad_read_full(0, hdr, sizeof(hdr), ad_now() + 60) != 0 || ad_get32(hdr + 4) != AD_M_SETUP ||
        (len = ad_get32(hdr)) > AD_FRAME_MAX) {
        fprintf(stderr, "mpirun %s: no job from the parent daemon\n", AD_DAEMON_OPTION);
        return 1;
    }
    t.node = (int)ad_get32(hdr + 8);
    if ((t.setup.data = malloc(len + 1)) == NULL)
        return 1;
    t.setup.cap = len + 1;
    t.setup.len = len;
    if (ad_read_full(0, t.setup.data, len, ad_now() + 60) != 0 ||
        ad_setup_decode(&t, &stdin_usable) != 0 || t.node < 1 || t.node > t.nhosts) {
        fprintf(stderr, "mpirun %s: a bad job from the parent daemon\n", AD_DAEMON_OPTION);
        goto out_setup;
    }
    if (ad_daemon_setup(&d, &oldmask) != 0)
        goto out_setup;
    d.tree = &t;
    ad_tree_attach();
    ad_pmi_attach();
    ad_ep_attach();
    d.host = t.hosts[t.node - 1];
    d.prefix_output = t.ropts.prefix_output;
    d.universe = t.ropts.universe;
    ad_set_nonblock(0);
    ad_set_nonblock(1);
    ad_sink_daemon = &d;
    ad_io_set_sink(ad_tree_sink);
    /* alive */
    gethostname(host, sizeof(host) - 1);
    if (write(1, AD_MAGIC, AD_MAGIC_LEN) != AD_MAGIC_LEN)
        goto out;
    ad_link_send(&t.parent, AD_M_HELLO, t.node, host, strlen(host) + 1);
    /* the ranks' world: mpirun's environment and directory */
    clearenv();
    for (int i = 0; i < t.nenv; i++)
        putenv(t.env[i]);
    /* spawned processes may run on any host of the list: the library opens the
     * fabrics for other nodes even in a job all on this one */
    snprintf(msg, sizeof(msg), "%d", t.nhosts);
    setenv("DCFA_UNIVERSE_HOSTS", msg, 1);
    if (chdir(t.cwd) != 0) {
        snprintf(msg, sizeof(msg), "mpirun: host '%s': cannot change to directory '%s': %s", d.host,
                 t.cwd, strerror(errno));
        setup_err = 1;
    }
    ranks = calloc((size_t)t.size, sizeof(int));
    node_host = calloc((size_t)t.nhosts, sizeof(char *));
    if (ranks == NULL || node_host == NULL)
        goto out;
    for (int r = 0; r < t.size; r++)
        if (t.host_of[r] == t.node - 1)
            ranks[nranks++] = r;
    for (int i = 0; i < t.nhosts; i++)
        node_host[i] = t.hosts[i];
    if (ad_job_create(&t.ropts, t.jobid, ranks, nranks, &job) != 0)
        goto out;
    if (ad_jobs_add(&d, job) != 0) {
        ad_job_destroy(job);
        goto out;
    }
    if (ad_tree_make_kids(&t, node_host) != 0 ||
        (job->tree = ad_jtree_new(&t, t.host_of, t.size)) == NULL)
        goto out;
    d.opts = &t.ropts;
    d.stdin_open = stdin_usable && nranks > 0 && ranks[0] == 0;
    util_node_key_make(key, sizeof(key), NULL);
    ad_buf_add_int(&t.ready, t.node);
    ad_buf_add_str(&t.ready, key);
    ad_buf_add_str(&t.ready, host);
    {
        char gwinfo[440] = "";
        if (!setup_err && ad_is_gateway_host(d.host) &&
            ad_gateway_start(d.host, gwinfo, sizeof(gwinfo), &t.gw_pid, msg, sizeof(msg)) != 0)
            setup_err = 1;
        ad_buf_add_str(&t.ready, gwinfo);
    }
    if (!setup_err) { /* the data port, announced before READY */
        const char *info = ad_epr_listen();
        (void)ad_epf_listen(&d, t.jobid); /* other mpiruns' requests for ranks here */
        ad_link_send(&t.parent, AD_M_EPADDR, t.node, info, strlen(info) + 1);
    }
    if (setup_err) {
        ad_daemon_end(&d, 1, msg);
        ad_enter_phase(&d, AD_TERM);
    }
    for (int i = 0; i < t.nkids && !d.ended; i++)
        ad_kid_start(&d, &t, &t.kids[i]);
    if (!d.ended)
        ad_tree_check_ready(&d, &t);
    if (ad_loop(&d) != 0)
        ad_daemon_end(&d, 1, "mpirun: out of memory");
    ad_kill_stragglers(&d);
    ad_tree_cleanup_links(&t);
    if (t.gw_pid > 0) { /* the gateway daemon ends with the job */
        kill(t.gw_pid, SIGTERM);
        waitpid(t.gw_pid, NULL, 0);
    }
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
    for (int j = 0; j < d.njobs; j++)
        ad_job_cleanup_files(d.jobs[j]);
    ad_link_flush(&t.parent);
    rc = 0;
out:
    ad_io_set_sink(NULL);
    ad_tree_cleanup_links(&t);
    ad_epr_close();
    if (d.stdin_pipe >= 0)
        close(d.stdin_pipe);
    ad_daemon_free(&d);
    free(ranks);
    free(node_host);
    free(d.stdin_buf);
    close(d.sigfd);
    sigprocmask(SIG_SETMASK, &oldmask, NULL);
out_setup:
    ad_setup_free(&t);
    ad_buf_free(&t.parent.outq);
    ad_buf_free(&t.parent.inq);
    return rc;
}

/* "mpirun --dcfa-cleanup JOBID": on a host whose daemon died, kill the
 * processes of the job (DCFA_JOBID=JOBID in their environment, our user's)
 * and remove its files. */
int ad_cleanup_main(const char *jobid)
{
    char want[ASSIST_JOBID_MAX + 16], path[64], buf[65536];
    struct ad_job job = {0};
    DIR *dp = opendir("/proc");
    struct dirent *de;
    size_t wlen;

    if (strlen(jobid) == 0 || strlen(jobid) > ASSIST_JOBID_MAX || strchr(jobid, '/') != NULL)
        return 2;
    wlen = (size_t)snprintf(want, sizeof(want), "DCFA_JOBID=%s", jobid) + 1; /* with NUL */
    while (dp != NULL && (de = readdir(dp)) != NULL) {
        long pid = strtol(de->d_name, NULL, 10);
        if (pid <= 1 || pid == (long)getpid())
            continue;
        snprintf(path, sizeof(path), "/proc/%ld/environ", pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
            continue;
        buf[n] = '\0';
        for (char *e = buf; e < buf + n; e += strlen(e) + 1) {
            if ((size_t)(buf + n - e) >= wlen - 1 && memcmp(e, want, wlen) == 0) {
                kill((pid_t)pid, SIGKILL);
                break;
            }
        }
    }
    if (dp != NULL)
        closedir(dp);
    snprintf(job.jobid, sizeof(job.jobid), "%s", jobid);
    ad_job_cleanup_files(&job);
    return 0;
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
    ad_pmi_attach();
    ad_ep_attach();
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
    (void)ad_epf_listen(&d, job->jobid); /* other mpiruns' requests for its ranks */
    const char *iso = getenv("DCFA_ISOLATE");
    if (iso != NULL && *iso != 0)
        (void)ad_epr_listen(); /* and those of other hosts' mpiruns, on a data port */
    ad_launch_local(&d, opts);
    if (ad_loop(&d) != 0)
        ad_daemon_record(&d, 1, "mpirun: out of memory");
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
    ad_epr_close();
    ad_daemon_free(&d);
    free(d.stdin_buf);
    close(d.sigfd);
    sigprocmask(SIG_SETMASK, &oldmask, NULL);
    return rc;
}
