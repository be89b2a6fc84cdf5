/* ad: the tree of assist daemons of a job that spans hosts.
 *
 * mpirun is the root (tree node 0) and runs no rank itself; host i of the
 * host list is node i + 1 and runs "mpirun --dcfa-daemon". Node v starts
 * nodes v*F+1 .. v*F+F (F = DCFA_TREE_FANOUT, default 2) through the
 * remote-start command (DCFA_RSH, default ssh; a host named localhost or
 * like this machine is started directly), so no daemon starts or serves more
 * than F others however many hosts there are. A child's stdin and stdout
 * (through ssh) are the link to its parent: framed messages, below.
 *
 *   down  SETUP (the job), START (node of every rank: launch now), FENCE_OUT
 *         (a job's pairs put since its last fence), PHASE (dump/term/kill),
 *         USR1, STDIN (for rank 0's host), EXIT (clean up and leave),
 *         NAME_REP (the answer to a NAME_REQ, routed to the node that asked),
 *         SPAWN_JOB (a spawned job mpirun placed: to the subtrees that run
 *         its processes), SPAWN_KILL (it failed somewhere: end it),
 *         SPAWN_REP (the answer to a SPAWN_REQ, routed like NAME_REP),
 *         NOINIT (a process of a job exited without MPI_Init: to the
 *         subtrees with processes of the job, with mpirun's grace time)
 *   up    HELLO (alive), READY (subtree up: node keys, host names), END
 *         (first failure seen in the subtree), FENCE_IN (a job's subtree
 *         pairs), OUTPUT, STDIN_ACK, DONE (subtree's ranks all ended, output
 *         forwarded), NAME_REQ (a rank's publish/unpublish/lookup: the name
 *         table is mpirun's), SPAWN_REQ (a rank's spawn: mpirun places it),
 *         SPAWN_ACK (the subtree started its part of a spawned job, or the
 *         first failure), JOB_DONE (the subtree's processes of a spawned job
 *         all ended: it may be forgotten), NOINIT_UP (a process of a job
 *         exited without MPI_Init: passed up to mpirun, which sends NOINIT)
 *
 * Every job (mpirun's, job 0, and each spawned one) has its part of the
 * tree (struct ad_jtree): which children's subtrees run its processes. Its
 * fences, spawn answers and end are counted over exactly those children, so
 * a host without processes of a job never hears of it. mpirun places a
 * spawn (info host/hosts/file, else the next slots of its host list), names
 * it, and sends it down; it answers the spawner once every subtree answered.
 *
 * A frame is a 12-byte header (length of the payload, type, argument; big
 * endian) and the payload. A child first writes the 8 bytes "DCFA-AD1";
 * whatever comes before them (a login banner) is passed to stderr.
 *
 * The root decides: it launches the ranks once every daemon is up, ends the
 * job on the first failure anywhere, and sends EXIT when every subtree is
 * DONE; each daemon then removes its host's job files and exits. A daemon
 * that loses its parent ends its ranks, cleans up and exits; a parent that
 * loses a child ends the job naming the child's host.
 */
#include "ad.h"
#include "assist/ns_wire.h"
#include "util/node_key.h"
#include "ad_gateway.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#define AD_MAGIC         "DCFA-AD1"
#define AD_MAGIC_LEN     8
#define AD_HDR           12
#define AD_FRAME_MAX     (256u << 20) /* larger is a broken link */
#define AD_UP_HIGH       (4u << 20)   /* queued upward: stop reading rank output */
#define AD_ERR_HOLD      4096         /* a child's stderr kept before its HELLO */
#define AD_EXIT_GRACE    5.0          /* seconds for children to leave after EXIT */
#define AD_LOST_GRACE    0.5          /* seconds to wait for a lost child's status */
#define AD_SETUP_VERSION "DCFA-SETUP-2"
#define AD_CLEANUP_WAIT  10.0 /* seconds for the cleanup of a lost daemon's host */

enum ad_msg {
    AD_M_SETUP = 1,
    AD_M_START,
    AD_M_FENCE_OUT,
    AD_M_PHASE,
    AD_M_USR1,
    AD_M_STDIN,
    AD_M_EXIT,
    AD_M_NAME_REP,
    AD_M_SPAWN_JOB,
    AD_M_SPAWN_KILL,
    AD_M_SPAWN_REP,
    AD_M_NOINIT,
    AD_M_EPMAP, /* the job's key and every daemon's data port (ad_ep_remote.c) */
    AD_M_HELLO = 32,
    AD_M_READY,
    AD_M_END,
    AD_M_FENCE_IN,
    AD_M_OUTPUT,
    AD_M_STDIN_ACK,
    AD_M_DONE,
    AD_M_NAME_REQ,
    AD_M_SPAWN_REQ,
    AD_M_SPAWN_ACK,
    AD_M_JOB_DONE,
    AD_M_NOINIT_UP,
    AD_M_EPADDR, /* a daemon's data port: "<port>;<networks>" (ad_ep_remote.c) */
};

/* A job's part of the tree at this daemon (struct ad_job.tree). */
struct ad_jtree {
    unsigned char *kid_has; /* [nkids]: the child's subtree runs processes of the job */
    int kids_with;          /* how many do */
    int fence_in;           /* children in the current fence */
    int fence_up;           /* 1: the local processes are in; 2: sent up, waiting */
    int acks;               /* spawned: children that answered */
    int acked;              /* the subtree's answer went up (the root: to the spawner) */
    struct ad_spawn_result res; /* the first failure here or below (rc 0: none) */
    int dones;                  /* spawned: children whose processes all ended */
    int done_sent;              /* JOB_DONE sent (the root: heard from all) */
    int origin, origin_job, origin_tag; /* the spawner: tree node, job, local index */
};

enum ad_link_state {
    AD_LINK_STARTING, /* started, no HELLO yet */
    AD_LINK_UP,       /* HELLO */
    AD_LINK_READY,    /* its subtree is up */
    AD_LINK_DONE,     /* its subtree's ranks ended */
    AD_LINK_CLOSED,   /* its input ended */
};

struct ad_link {
    int node;         /* tree node at the other end */
    const char *host; /* a child's host name */
    int in, out, err; /* -1 when closed */
    pid_t pid;        /* a child's start process, 0 = none */
    int reaped, status;
    enum ad_link_state state;
    int synced; /* magic seen */
    int eof;
    int reported;    /* loss reported (or not to be) */
    double deadline; /* HELLO deadline, or when to report a loss without status */
    struct ad_buf inq, outq, errq;
    struct ad_buf ready; /* READY entries of its subtree */
};

struct ad_tree {
    int root;
    int node;
    int fanout;
    double launch_timeout;
    struct ad_link parent; /* remote: fds 0 and 1 */
    struct ad_link *kids;
    int nkids;
    /* the job */
    struct ad_buf setup; /* SETUP payload; the remote's strings point into it */
    const struct mpirun_opts *opts;
    struct mpirun_opts ropts; /* remote: rebuilt from SETUP */
    char **hosts;
    int nhosts;
    int *host_of; /* [size] */
    int size;
    const char *jobid, *cwd, *exe, *rsh;
    char **env; /* remote: mpirun's environment */
    int nenv;
    /* progress */
    int started;
    int stdin_inflight;
    int done_sent;
    int exiting;
    double exit_deadline;
    struct ad_buf ready; /* own READY entries (node, key, host name) */
    int ready_sent;
    /* root: what spawns need */
    char (*hostkey)[UTIL_NODE_KEY_CAP]; /* [nhosts] node key of each host */
    char (*hostname)[256];               /* [nhosts] its gethostname() */
    char (*hostgw)[440];                 /* [nhosts] its gateway daemon: "<port>:<networks>" */
    pid_t gw_pid;                        /* remote: this host's gateway daemon, 0: none */
    int place_host, place_used; /* the next free slot: host, slots of it taken this pass */
};

/* this host runs a gateway daemon for the job: named in DCFA_GATEWAY_HOSTS (mpirun
 * --gateways, in the environment SETUP carries) */
static int ad_is_gateway_host(const char *host)
{
    const char *l = getenv("DCFA_GATEWAY_HOSTS");
    size_t n = strlen(host);
    for (const char *s = l; s && *s;) {
        size_t k = strcspn(s, ",");
        if (k == n && strncmp(s, host, n) == 0)
            return 1;
        s += k + (s[k] == ',');
    }
    return 0;
}

/* ---- frames ------------------------------------------------------------------ */

static void ad_put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static uint32_t ad_get32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void ad_link_flush(struct ad_link *l)
{
    while (l->out >= 0 && l->outq.len > 0) {
        ssize_t n = write(l->out, l->outq.data, l->outq.len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        if (n <= 0) { /* the other end is gone: its input side reports it */
            close(l->out);
            l->out = -1;
            l->outq.len = 0;
            return;
        }
        ad_buf_consume(&l->outq, (size_t)n);
    }
}

static void ad_link_send(struct ad_link *l, int type, int32_t arg, const void *payload, size_t len)
{
    unsigned char hdr[AD_HDR];

    if (l->out < 0)
        return;
    ad_put32(hdr, (uint32_t)len);
    ad_put32(hdr + 4, (uint32_t)type);
    ad_put32(hdr + 8, (uint32_t)arg);
    if (ad_buf_add(&l->outq, hdr, sizeof(hdr)) != 0 || ad_buf_add(&l->outq, payload, len) != 0) {
        fprintf(stderr, "mpirun: out of memory\n");
        exit(1);
    }
    ad_link_flush(l);
}

static void ad_link_close(struct ad_link *l)
{
    if (l->in >= 0)
        close(l->in);
    if (l->out >= 0 && l->out != l->in)
        close(l->out);
    if (l->err >= 0)
        close(l->err);
    l->in = l->out = l->err = -1;
    ad_buf_free(&l->inq);
    ad_buf_free(&l->outq);
    ad_buf_free(&l->errq);
    ad_buf_free(&l->ready);
}

static struct ad_tree *ad_t(struct ad_daemon *d) { return d->tree; }

static int ad_kid_finished(const struct ad_link *l)
{
    return l->state == AD_LINK_DONE || l->state == AD_LINK_CLOSED;
}

static int ad_kids_all(const struct ad_tree *t, int (*pred)(const struct ad_link *))
{
    for (int i = 0; i < t->nkids; i++)
        if (!pred(&t->kids[i]))
            return 0;
    return 1;
}

/* ---- payload strings ---------------------------------------------------------- */

struct ad_cursor {
    const char *p, *end;
    int bad;
};

static const char *ad_take(struct ad_cursor *c)
{
    const char *s = c->p;
    const char *nul = c->p < c->end ? memchr(c->p, '\0', (size_t)(c->end - c->p)) : NULL;

    if (nul == NULL) {
        c->bad = 1;
        return "";
    }
    c->p = nul + 1;
    return s;
}

static long ad_take_int(struct ad_cursor *c, long lo, long hi)
{
    const char *s = ad_take(c);
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) {
        c->bad = 1;
        return lo;
    }
    return v;
}

/* ---- ending, phases, signals (hooks of ad_daemon.c) ---------------------------- */

static void ad_tree_end(struct ad_daemon *d, int exit_code, const char *msg)
{
    struct ad_tree *t = ad_t(d);

    if (!t->root)
        ad_link_send(&t->parent, AD_M_END, exit_code, msg, strlen(msg) + 1);
}

static void ad_tree_phase(struct ad_daemon *d, enum ad_phase phase)
{
    struct ad_tree *t = ad_t(d);

    for (int i = 0; i < t->nkids; i++)
        ad_link_send(&t->kids[i], AD_M_PHASE, (int32_t)phase, NULL, 0);
    if (!d->launched && phase != AD_RUN)
        d->launched = 1; /* the ranks will never start here */
}

static void ad_tree_usr1(struct ad_daemon *d)
{
    struct ad_tree *t = ad_t(d);

    for (int i = 0; i < t->nkids; i++)
        ad_link_send(&t->kids[i], AD_M_USR1, 0, NULL, 0);
}

static int ad_tree_is_link_pid(struct ad_daemon *d, pid_t pid)
{
    struct ad_tree *t = ad_t(d);

    if (t->gw_pid > 0 && pid == t->gw_pid) /* the gateway daemon lives as long as the daemon */
        return 1;
    for (int i = 0; i < t->nkids; i++)
        if (t->kids[i].pid == pid)
            return 1;
    return 0;
}

static void ad_tree_stdin_ack(struct ad_daemon *d, int stop)
{
    struct ad_tree *t = ad_t(d);

    if (!t->root)
        ad_link_send(&t->parent, AD_M_STDIN_ACK, stop, NULL, 0);
}

static int ad_tree_output_ok(struct ad_daemon *d)
{
    struct ad_tree *t = ad_t(d);

    return t->root || t->parent.outq.len < AD_UP_HIGH;
}

/* Remote hosts: output of the ranks goes up as OUTPUT frames. */
static struct ad_daemon *ad_sink_daemon;

static void ad_tree_sink(int out, const char *buf, size_t len)
{
    struct ad_tree *t = ad_t(ad_sink_daemon);

    ad_link_send(&t->parent, AD_M_OUTPUT, out, buf, len);
}

/* ---- children ------------------------------------------------------------------- */

static int ad_host_is_local(const char *host)
{
    char me[256] = "";

    if (strcmp(host, "localhost") == 0)
        return 1;
    gethostname(me, sizeof(me) - 1);
    return strcmp(host, me) == 0;
}

/* The words of DCFA_RSH (default "ssh"), split at blanks. */
static int ad_rsh_words(const char *rsh, char **words, int max)
{
    static char copy[1024];
    char *save = NULL;
    int n = 0;

    snprintf(copy, sizeof(copy), "%s", rsh);
    for (char *w = strtok_r(copy, " \t", &save); w != NULL && n < max;
         w = strtok_r(NULL, " \t", &save))
        words[n++] = w;
    return n;
}

/* 'text' for a POSIX shell. */
static void ad_shell_quote(char *out, size_t cap, const char *s)
{
    size_t n = 0;

    if (cap < 3)
        return;
    out[n++] = '\'';
    for (; *s != '\0' && n + 5 < cap; s++) {
        if (*s == '\'') {
            memcpy(out + n, "'\\''", 4);
            n += 4;
        } else {
            out[n++] = *s;
        }
    }
    out[n++] = '\'';
    out[n] = '\0';
}

/* Starts the daemon of child l; its failure is found by the loop. */
static void ad_kid_start(struct ad_daemon *d, struct ad_tree *t, struct ad_link *l)
{
    int tokid[2] = {-1, -1}, fromkid[2] = {-1, -1}, errp[2] = {-1, -1};
    char *argv[40], cmd[PATH_MAX * 4 + 32], quoted[PATH_MAX * 4];
    int argc = 0;
    pid_t pid;

    l->in = l->out = l->err = -1;
    l->deadline = ad_now() + t->launch_timeout;
    if (pipe2(tokid, O_CLOEXEC) != 0 || pipe2(fromkid, O_CLOEXEC) != 0 ||
        pipe2(errp, O_CLOEXEC) != 0) {
        char msg[512];
        snprintf(msg, sizeof(msg), "mpirun: cannot start the assist daemon on host '%s': %s",
                 l->host, strerror(errno));
        l->state = AD_LINK_CLOSED;
        l->reported = 1;
        ad_daemon_end(d, 1, msg);
        goto out;
    }
    if (ad_host_is_local(l->host)) {
        argv[argc++] = (char *)t->exe;
        argv[argc++] = AD_DAEMON_OPTION;
    } else {
        argc = ad_rsh_words(t->rsh, argv, 32);
        ad_shell_quote(quoted, sizeof(quoted), t->exe);
        snprintf(cmd, sizeof(cmd), "%s %s", quoted, AD_DAEMON_OPTION);
        argv[argc++] = (char *)l->host;
        argv[argc++] = cmd;
    }
    argv[argc] = NULL;
    pid = fork();
    if (pid < 0) {
        char msg[512];
        snprintf(msg, sizeof(msg), "mpirun: cannot start the assist daemon on host '%s': %s",
                 l->host, strerror(errno));
        l->state = AD_LINK_CLOSED;
        l->reported = 1;
        ad_daemon_end(d, 1, msg);
        goto out;
    }
    if (pid == 0) {
        sigset_t none;
        setpgid(0, 0); /* terminal signals go to mpirun only */
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, SIG_DFL);
        if (dup2(tokid[0], 0) < 0 || dup2(fromkid[1], 1) < 0 || dup2(errp[1], 2) < 0)
            _exit(127);
        execvp(argv[0], argv);
        fprintf(stderr, "cannot run the remote-start command '%s': %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid);
    l->pid = pid;
    l->out = tokid[1];
    l->in = fromkid[0];
    l->err = errp[0];
    tokid[1] = fromkid[0] = errp[0] = -1;
    ad_set_nonblock(l->out);
    ad_set_nonblock(l->in);
    ad_set_nonblock(l->err);
    l->state = AD_LINK_STARTING;
    ad_link_send(l, AD_M_SETUP, l->node, t->setup.data, t->setup.len);
out:
    for (int i = 0; i < 2; i++) {
        int *fds[] = {tokid, fromkid, errp};
        for (int k = 0; k < 3; k++)
            if (fds[k][i] >= 0)
                close(fds[k][i]);
    }
}

/* The last non-empty line of what a child wrote on stderr. */
static void ad_kid_err_tail(struct ad_link *l, char *out, size_t cap)
{
    size_t end = l->errq.len, start;

    out[0] = '\0';
    while (end > 0 && (l->errq.data[end - 1] == '\n' || l->errq.data[end - 1] == '\r'))
        end--;
    start = end;
    while (start > 0 && l->errq.data[start - 1] != '\n')
        start--;
    if (end > start)
        snprintf(out, cap, "%.*s", (int)(end - start), l->errq.data + start);
}

static void ad_status_text(int st, char *out, size_t cap)
{
    if (WIFEXITED(st))
        snprintf(out, cap, "exited with status %d", WEXITSTATUS(st));
    else if (WIFSIGNALED(st))
        snprintf(out, cap, "killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
    else
        snprintf(out, cap, "ended");
}

/* A child's daemon died without cleaning up: run "mpirun --dcfa-cleanup
 * JOBID" on its host (at most AD_CLEANUP_WAIT seconds), which ends the
 * job's processes there and removes its files. */
static void ad_kid_cleanup(struct ad_tree *t, struct ad_link *l)
{
    char *argv[40], cmd[PATH_MAX * 4 + 64], quoted[PATH_MAX * 4];
    int argc = 0, st;
    pid_t pid;

    if (ad_host_is_local(l->host)) {
        argv[argc++] = (char *)t->exe;
        argv[argc++] = AD_CLEANUP_OPTION;
        argv[argc++] = (char *)t->jobid;
    } else {
        argc = ad_rsh_words(t->rsh, argv, 32);
        ad_shell_quote(quoted, sizeof(quoted), t->exe);
        snprintf(cmd, sizeof(cmd), "%s %s %s", quoted, AD_CLEANUP_OPTION, t->jobid);
        argv[argc++] = (char *)l->host;
        argv[argc++] = cmd;
    }
    argv[argc] = NULL;
    pid = fork();
    if (pid == 0) {
        sigset_t none;
        int null = open("/dev/null", O_RDWR);
        setpgid(0, 0);
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        if (null >= 0) {
            dup2(null, 0);
            dup2(null, 1);
        }
        execvp(argv[0], argv);
        _exit(127);
    }
    if (pid < 0)
        return;
    for (double end = ad_now() + AD_CLEANUP_WAIT; ad_now() < end;) {
        if (waitpid(pid, &st, WNOHANG) == pid)
            return;
        usleep(20000);
    }
    kill(-pid, SIGKILL);
    waitpid(pid, &st, 0);
}

/* Child l is gone (its input ended, its start process ended, or it did not
 * answer in time): end the job unless it had finished. */
static void ad_kid_lost(struct ad_daemon *d, struct ad_tree *t, struct ad_link *l, const char *why)
{
    char msg[1200], tail[600], st[128];

    if (l->reported)
        return;
    l->reported = 1;
    if (l->err >= 0) { /* what it said last */
        char buf[4096];
        ssize_t n;
        while ((n = read(l->err, buf, sizeof(buf))) > 0)
            ad_buf_add(&l->errq, buf, (size_t)n);
    }
    if (l->state == AD_LINK_DONE || t->exiting) {
        l->state = AD_LINK_CLOSED;
        return;
    }
    ad_kid_err_tail(l, tail, sizeof(tail));
    if (l->reaped)
        ad_status_text(l->status, st, sizeof(st));
    else
        snprintf(st, sizeof(st), "%s", why);
    if (l->state == AD_LINK_STARTING) {
        if (tail[0] != '\0')
            snprintf(msg, sizeof(msg), "mpirun: cannot start the assist daemon on host '%s': %s",
                     l->host, tail);
        else
            snprintf(msg, sizeof(msg),
                     "mpirun: cannot start the assist daemon on host '%s': '%s' %s", l->host,
                     ad_host_is_local(l->host) ? t->exe : t->rsh, st);
    } else {
        snprintf(msg, sizeof(msg), "mpirun: lost the assist daemon on host '%s' (%s%s%s)", l->host,
                 st, tail[0] != '\0' ? ": " : "", tail);
    }
    l->state = AD_LINK_CLOSED;
    ad_daemon_end(d, 1, msg);
    if (l->synced)
        ad_kid_cleanup(t, l);
}

static void ad_tree_reaped(struct ad_daemon *d, pid_t pid, int status)
{
    struct ad_tree *t = ad_t(d);

    for (int i = 0; i < t->nkids; i++) {
        struct ad_link *l = &t->kids[i];
        if (l->pid != pid || l->reaped)
            continue;
        l->reaped = 1;
        l->status = status;
        if (l->eof)
            ad_kid_lost(d, t, l, "");
        else
            l->deadline = ad_now() + AD_LOST_GRACE; /* its input may still hold frames */
    }
}

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

/* ---- messages ------------------------------------------------------------------- */

/* The node of every rank from the subtree's (node, key) entries and the
 * DCFA_NODE_KEY a rank's environment sets (root only). */
static int ad_tree_node_of(struct ad_tree *t, int *node_of)
{
    extern char **environ;
    char(*keys)[UTIL_NODE_KEY_CAP] = calloc((size_t)t->size, sizeof(*keys));
    int nkeys = 0, r = 0;

    t->hostkey = calloc((size_t)t->nhosts, sizeof(*t->hostkey));
    t->hostname = calloc((size_t)t->nhosts, sizeof(*t->hostname));
    t->hostgw = calloc((size_t)t->nhosts, sizeof(*t->hostgw));
    if (t->hostkey == NULL || t->hostname == NULL || t->hostgw == NULL || keys == NULL) {
        free(keys);
        return -ENOMEM;
    }
    for (int i = 0; i < t->nkids; i++) {
        struct ad_cursor c = {t->kids[i].ready.data, t->kids[i].ready.data + t->kids[i].ready.len,
                              0};
        while (c.p < c.end && !c.bad) {
            long node = ad_take_int(&c, 1, t->nhosts);
            const char *key = ad_take(&c);
            const char *name = ad_take(&c);
            const char *gw = ad_take(&c);
            if (!c.bad) {
                snprintf(t->hostkey[node - 1], UTIL_NODE_KEY_CAP, "%s", key);
                snprintf(t->hostname[node - 1], sizeof(t->hostname[0]), "%s", name);
                snprintf(t->hostgw[node - 1], sizeof(t->hostgw[0]), "%s", gw);
            }
        }
    }
    for (int a = 0; a < t->opts->napps; a++) {
        const struct mpirun_app *app = &t->opts->apps[a];
        char *const *envs[3] = {environ, t->opts->genv, app->env};
        int nenvs[3] = {-1, t->opts->ngenv, app->nenv};
        char forced[UTIL_NODE_KEY_CAP] = "";
        int has = 0;
        for (int l = 0; l < 3; l++)
            for (int i = 0; envs[l] != NULL && (nenvs[l] < 0 ? envs[l][i] != NULL : i < nenvs[l]);
                 i++)
                if (strncmp(envs[l][i], "DCFA_NODE_KEY=", 14) == 0 && envs[l][i][14] != '\0')
                    has = 1;
        if (has)
            ad_node_key(forced, sizeof(forced), envs, nenvs, 3);
        for (int i = 0; i < app->nprocs; i++, r++) {
            const char *key = has ? forced : t->hostkey[t->host_of[r]];
            int id = 0;
            while (id < nkeys && strcmp(keys[id], key) != 0)
                id++;
            if (id == nkeys)
                snprintf(keys[nkeys++], UTIL_NODE_KEY_CAP, "%s", key);
            node_of[r] = id;
        }
    }
    free(keys);
    return 0;
}

static void ad_tree_start(struct ad_daemon *d, struct ad_tree *t, const int *node_of)
{
    t->started = 1;
    if (d->njobs > 0)
        ad_job_set_nodes(d->jobs[0], node_of);
    if (d->phase == AD_RUN && !d->ended) {
        if (d->njobs > 0)
            ad_launch_local(d, t->opts);
        else
            d->launched = 1;
    } else {
        d->launched = 1;
    }
}

/* Every child is READY: the root starts the job, a daemon reports up. */
static void ad_tree_check_ready(struct ad_daemon *d, struct ad_tree *t)
{
    if (t->ready_sent)
        return;
    for (int i = 0; i < t->nkids; i++)
        if (t->kids[i].state != AD_LINK_READY)
            return;
    t->ready_sent = 1;
    if (!t->root) {
        for (int i = 0; i < t->nkids; i++)
            ad_buf_add(&t->ready, t->kids[i].ready.data, t->kids[i].ready.len);
        ad_link_send(&t->parent, AD_M_READY, 0, t->ready.data, t->ready.len);
        return;
    }
    if (d->phase != AD_RUN || d->ended)
        return;
    int *node_of = calloc((size_t)t->size, sizeof(int));
    unsigned char *wire = calloc((size_t)t->size, 4);
    if (node_of == NULL || wire == NULL || ad_tree_node_of(t, node_of) != 0) {
        free(node_of);
        free(wire);
        ad_daemon_end(d, 1, "mpirun: out of memory");
        return;
    }
    for (int r = 0; r < t->size; r++)
        ad_put32(wire + 4 * r, (uint32_t)node_of[r]);
    /* the gateway daemons (docs/gateway.md) after the nodes: "host:port:networks;..." */
    struct ad_buf start = {0};
    ad_buf_add(&start, (const char *)wire, (size_t)t->size * 4);
    if (t->opts->ngateways > 0) {
        for (int h = t->nhosts - t->opts->ngateways; h < t->nhosts; h++) {
            char one[800];
            int n =
                snprintf(one, sizeof(one), "%s%s:%s", h > t->nhosts - t->opts->ngateways ? ";" : "",
                         t->hosts[h], t->hostgw[h]);
            ad_buf_add(&start, one, (size_t)n);
        }
        ad_buf_add(&start, "", 1);
        setenv("DCFA_GATEWAYS", start.data + (size_t)t->size * 4, 1);
    }
    struct ad_buf epmap = {0}; /* endpoints across hosts: before START, so before any rank */
    if (ad_epr_map(&epmap, t->nhosts) == 0)
        for (int i = 0; i < t->nkids; i++)
            ad_link_send(&t->kids[i], AD_M_EPMAP, 0, epmap.data, epmap.len);
    ad_buf_free(&epmap);
    for (int i = 0; i < t->nkids; i++)
        ad_link_send(&t->kids[i], AD_M_START, 0, start.data, start.len);
    ad_buf_free(&start);
    ad_tree_start(d, t, node_of);
    free(node_of);
    free(wire);
}

/* ---- a job's part of the tree ---------------------------------------------------- */

/* The child of this node whose subtree holds node v (NULL if none). */
static struct ad_link *ad_tree_kid_toward(struct ad_tree *t, int v)
{
    while (v > 0) {
        int parent = (v - 1) / t->fanout;
        if (parent == t->node) {
            for (int i = 0; i < t->nkids; i++)
                if (t->kids[i].node == v)
                    return &t->kids[i];
            return NULL;
        }
        v = parent;
    }
    return NULL;
}

/* The part of a job whose rank r runs on host host_of[r] (node host + 1). */
static struct ad_jtree *ad_jtree_new(struct ad_tree *t, const int *host_of, int size)
{
    struct ad_jtree *jt = calloc(1, sizeof(*jt));

    if (jt == NULL || (jt->kid_has = calloc((size_t)t->nkids + 1, 1)) == NULL) {
        free(jt);
        return NULL;
    }
    jt->res.errcmd = -1;
    for (int r = 0; r < size; r++) {
        struct ad_link *l = ad_tree_kid_toward(t, host_of[r] + 1);
        if (l != NULL && !jt->kid_has[l - t->kids]) {
            jt->kid_has[l - t->kids] = 1;
            jt->kids_with++;
        }
    }
    return jt;
}

static void ad_tree_job_free(struct ad_job *job)
{
    if (job->tree != NULL)
        free(job->tree->kid_has);
    free(job->tree);
    job->tree = NULL;
}

static int ad_tree_job_held(struct ad_daemon *d, struct ad_job *job)
{
    (void)d;
    return job->tree != NULL && !job->tree->done_sent;
}

/* Sends a frame to every child whose subtree runs processes of the job. */
static void ad_job_send_down(struct ad_tree *t, const struct ad_job *job, int type, const void *p,
                             size_t len)
{
    for (int i = 0; i < t->nkids; i++)
        if (job->tree->kid_has[i])
            ad_link_send(&t->kids[i], type, job->num, p, len);
}

/* The job's fence is complete below this node: go up, or (root) release
 * everyone. A daemon without processes of the job is in as soon as its
 * children are. */
static void ad_fence_check(struct ad_tree *t, struct ad_job *job)
{
    struct ad_jtree *jt = job->tree;

    if (jt == NULL || jt->fence_up == 2 || (job->nprocs > 0 && jt->fence_up != 1) ||
        jt->fence_in < jt->kids_with || (job->nprocs == 0 && jt->kids_with == 0))
        return;
    jt->fence_in = 0;
    if (t->root) {
        ad_job_send_down(t, job, AD_M_FENCE_OUT, job->kvs_new.data, job->kvs_new.len);
        job->kvs_new.len = 0;
        jt->fence_up = 0;
        return;
    }
    ad_link_send(&t->parent, AD_M_FENCE_IN, job->num, job->kvs_new.data, job->kvs_new.len);
    job->kvs_new.len = 0;
    jt->fence_up = 2;
}

void ad_tree_fence(struct ad_daemon *d, struct ad_job *job)
{
    if (job->tree == NULL)
        return;
    job->tree->fence_up = 1;
    ad_fence_check(ad_t(d), job);
}

static void ad_fence_out(struct ad_daemon *d, struct ad_tree *t, struct ad_job *job, const char *p,
                         size_t len)
{
    struct ad_cursor c = {p, p + len, 0};

    if (job == NULL || job->tree == NULL)
        return;
    while (c.p < c.end) {
        const char *key = ad_take(&c);
        const char *value = ad_take(&c);
        if (c.bad)
            break;
        ad_kvs_put(&job->kvs, key, value);
    }
    ad_job_send_down(t, job, AD_M_FENCE_OUT, p, len);
    job->tree->fence_up = 0;
    job->kvs_new.len = 0;
    ad_pmi_fence_done(d, job);
}

/* ---- a process that exited without MPI_Init --------------------------------------- */

/* mpirun, or a daemon told by its parent: note it here and tell the subtrees with
 * processes of the job. Payload of NOINIT: "who\0grace in ms\0". */
static void ad_noinit_down(struct ad_tree *t, struct ad_job *job, const char *who, long grace_ms)
{
    struct ad_buf b = {0};

    if (job == NULL || job->tree == NULL || job->noinit[0] != '\0') /* the first one only */
        return;
    ad_job_noinit(job, who, (double)grace_ms / 1000.0);
    if (ad_buf_add_str(&b, who) == 0 && ad_buf_add_int(&b, grace_ms) == 0)
        ad_job_send_down(t, job, AD_M_NOINIT, b.data, b.len);
    ad_buf_free(&b);
}

static void ad_noinit_root(struct ad_daemon *d, struct ad_tree *t, struct ad_job *job,
                           const char *who)
{
    double grace = d->opts != NULL ? d->opts->noinit_grace : MPIRUN_NOINIT_GRACE;

    ad_noinit_down(t, job, who, (long)(grace * 1000.0 + 0.5));
}

static void ad_tree_noinit(struct ad_daemon *d, struct ad_job *job, const char *who)
{
    struct ad_tree *t = ad_t(d);

    if (t->root)
        ad_noinit_root(d, t, job, who);
    else
        ad_link_send(&t->parent, AD_M_NOINIT_UP, job->num, who, strlen(who) + 1);
}

static void ad_noinit_in(struct ad_tree *t, struct ad_job *job, const char *p, size_t len)
{
    struct ad_cursor c = {p, p + len, 0};
    const char *who = ad_take(&c);
    long grace_ms = ad_take_int(&c, 0, 86400L * 1000);

    if (!c.bad)
        ad_noinit_down(t, job, who, grace_ms);
}

/* ---- name requests: answered at mpirun ------------------------------------------- */

int ad_tree_is_root(struct ad_daemon *d) { return ad_t(d)->root; }

/* Payload "origin\0job\0tag\0op\0<service or rc>\0port\0". */
static void ad_name_frame(struct ad_buf *b, int origin, int jobnum, int tag, int op,
                          const char *mid, const char *port)
{
    b->len = 0;
    ad_buf_add_int(b, origin);
    ad_buf_add_int(b, jobnum);
    ad_buf_add_int(b, tag);
    ad_buf_add_int(b, op);
    ad_buf_add_str(b, mid);
    ad_buf_add_str(b, port);
}

void ad_tree_name_request(struct ad_daemon *d, int jobnum, int tag, int op, const char *service,
                          const char *port)
{
    struct ad_tree *t = ad_t(d);
    struct ad_buf b = {0};

    ad_name_frame(&b, t->node, jobnum, tag, op, service, port);
    ad_link_send(&t->parent, AD_M_NAME_REQ, 0, b.data, b.len);
    ad_buf_free(&b);
}

/* A NAME_REQ from below: mpirun answers it, a daemon passes it up. */
static void ad_name_req(struct ad_daemon *d, struct ad_tree *t, const char *p, size_t len)
{
    struct ad_cursor c = {p, p + len, 0};
    char port[ASSIST_NS_PORT_MAX + 1] = "", rcs[16];
    struct ad_link *down;
    struct ad_buf b = {0};
    int origin, jobnum, tag, op, rc;
    const char *service, *pub;

    if (!t->root) {
        ad_link_send(&t->parent, AD_M_NAME_REQ, 0, p, len);
        return;
    }
    origin = (int)ad_take_int(&c, 1, t->nhosts);
    jobnum = (int)ad_take_int(&c, 0, INT_MAX);
    tag = (int)ad_take_int(&c, 0, INT_MAX);
    op = (int)ad_take_int(&c, AD_NAME_PUBLISH, AD_NAME_LOOKUP);
    service = ad_take(&c);
    pub = ad_take(&c);
    if (c.bad || (down = ad_tree_kid_toward(t, origin)) == NULL)
        return; /* not from one of ours */
    rc = ad_name_do(d, op, service, pub, port, sizeof(port));
    snprintf(rcs, sizeof(rcs), "%d", rc);
    ad_name_frame(&b, origin, jobnum, tag, op, rcs, port);
    ad_link_send(down, AD_M_NAME_REP, 0, b.data, b.len);
    ad_buf_free(&b);
}

/* A reply that travels down the tree to process `tag` of a job on host `origin` (the fields
 * its message starts with): passed on toward that host, or, here, the process if it still
 * listens. NULL when passed on, malformed, or nobody is left to answer. */
static struct ad_proc *ad_rep_route(struct ad_tree *t, const struct ad_cursor *c, int origin,
                                    struct ad_job *job, int tag, int type, const char *p,
                                    size_t len)
{
    struct ad_link *down;

    if (c->bad)
        return NULL;
    if (origin != t->node) {
        if ((down = ad_tree_kid_toward(t, origin)) != NULL)
            ad_link_send(down, type, 0, p, len);
        return NULL;
    }
    if (job == NULL || tag >= job->nprocs || job->procs[tag].pmi_fd < 0)
        return NULL;
    return &job->procs[tag];
}

/* A NAME_REP from above: for one of this node's ranks, or further down. */
static void ad_name_rep(struct ad_daemon *d, struct ad_tree *t, const char *p, size_t len)
{
    struct ad_cursor c = {p, p + len, 0};
    int origin = (int)ad_take_int(&c, 1, t->nhosts);
    struct ad_job *job = ad_job_by_num(d, (int)ad_take_int(&c, 0, INT_MAX));
    int tag = (int)ad_take_int(&c, 0, INT_MAX);
    int op = (int)ad_take_int(&c, AD_NAME_PUBLISH, AD_NAME_LOOKUP);
    int rc = (int)ad_take_int(&c, -4096, 0);
    const char *port = ad_take(&c);
    struct ad_proc *to = ad_rep_route(t, &c, origin, job, tag, AD_M_NAME_REP, p, len);

    if (to != NULL)
        ad_pmi_name_reply(d, to, op, rc, port);
}

/* ---- spawn: placed at mpirun, started by the daemons of the hosts ------------------- */

/* The request as strings: ncmds, then per command the program, maxprocs,
 * argc, the arguments, the info count and pairs; then the preput count and
 * pairs. Info "file"/"hostfile" is read here, by the spawner's daemon, and
 * goes up as "host" (the names and slots it lists). 0, or -1 with the
 * failure in res. */
static int ad_req_encode(struct ad_buf *b, const struct ad_spawn_req *req,
                         struct ad_spawn_result *res)
{
    int rc = ad_buf_add_int(b, req->ncmds);

    for (int i = 0; i < req->ncmds; i++) {
        const struct ad_spawn_cmd *c = &req->cmds[i];
        rc |= ad_buf_add_str(b, c->command);
        rc |= ad_buf_add_int(b, c->maxprocs);
        rc |= ad_buf_add_int(b, c->argc);
        for (int k = 0; k < c->argc; k++)
            rc |= ad_buf_add_str(b, c->argv[k] != NULL ? c->argv[k] : "");
        rc |= ad_buf_add_int(b, c->ninfo);
        for (int k = 0; k < c->ninfo; k++) {
            const char *key = c->info_keys[k], *val = c->info_vals[k];
            if (strcmp(key, "file") == 0 || strcmp(key, "hostfile") == 0) {
                struct mpirun_opts ho = {0};
                struct ad_buf list = {0};
                char slots[24], why[400];
                if (mpirun_hosts_read_file_err(&ho, val, why, sizeof(why)) != 0) {
                    mpirun_hosts_free(&ho);
                    res->rc = -EINVAL;
                    res->errcmd = i;
                    snprintf(res->msg, sizeof(res->msg), "spawn: info '%s': %s", key, why);
                    return -1;
                }
                for (int h = 0; h < ho.nhosts; h++) {
                    snprintf(slots, sizeof(slots), ":%d", ho.hosts[h].slots);
                    if (h > 0)
                        rc |= ad_buf_add(&list, ",", 1);
                    rc |= ad_buf_add(&list, ho.hosts[h].name, strlen(ho.hosts[h].name));
                    rc |= ad_buf_add(&list, slots, strlen(slots));
                }
                rc |= ad_buf_add(&list, "", 1);
                rc |= ad_buf_add_str(b, "host");
                rc |= ad_buf_add_str(b, list.data != NULL ? list.data : "");
                ad_buf_free(&list);
                mpirun_hosts_free(&ho);
                continue;
            }
            rc |= ad_buf_add_str(b, key);
            rc |= ad_buf_add_str(b, val);
        }
    }
    rc |= ad_buf_add_int(b, req->npreput);
    for (int k = 0; k < req->npreput; k++) {
        rc |= ad_buf_add_str(b, req->pp_keys[k]);
        rc |= ad_buf_add_str(b, req->pp_vals[k]);
    }
    if (rc != 0) {
        *res = (struct ad_spawn_result){.rc = -ENOMEM, .errcmd = -1};
        snprintf(res->msg, sizeof(res->msg), "spawn: out of memory");
        return -1;
    }
    return 0;
}

/* n strings from c into a new array (NULL with c->bad on a short payload). */
static char **ad_take_strs(struct ad_cursor *c, int n)
{
    char **v = calloc((size_t)n + 1, sizeof(char *));

    for (int i = 0; v != NULL && i < n && !c->bad; i++)
        if ((v[i] = strdup(ad_take(c))) == NULL)
            c->bad = 1;
    if (v == NULL)
        c->bad = 1;
    return v;
}

/* n key/value pairs from c into new arrays *keys and *vals; returns how many
 * entries the arrays have (for freeing), c->bad set on a short payload. */
static int ad_take_pairs(struct ad_cursor *c, int n, char ***keys, char ***vals)
{
    if (c->bad)
        return 0;
    *keys = calloc((size_t)n + 1, sizeof(char *));
    *vals = calloc((size_t)n + 1, sizeof(char *));
    if (*keys == NULL || *vals == NULL) {
        c->bad = 1;
        return 0;
    }
    for (int k = 0; k < n && !c->bad; k++) {
        (*keys)[k] = strdup(ad_take(c));
        (*vals)[k] = strdup(ad_take(c));
        if ((*keys)[k] == NULL || (*vals)[k] == NULL)
            c->bad = 1;
    }
    return n;
}

/* The request back from its strings; NULL when malformed or out of memory. */
static struct ad_spawn_req *ad_req_decode(struct ad_cursor *c)
{
    struct ad_spawn_req *r = calloc(1, sizeof(*r));
    int ncmds = (int)ad_take_int(c, 1, AD_SPAWN_MAX_CMDS);

    if (r == NULL || c->bad || (r->cmds = calloc((size_t)ncmds, sizeof(*r->cmds))) == NULL) {
        free(r);
        return NULL;
    }
    for (int i = 0; i < ncmds && !c->bad; i++) {
        struct ad_spawn_cmd *cmd = &r->cmds[i];
        r->ncmds = i + 1;
        cmd->command = strdup(ad_take(c));
        cmd->maxprocs = (int)ad_take_int(c, 1, AD_SPAWN_MAX_PROCS);
        cmd->argc = (int)ad_take_int(c, 0, AD_SPAWN_MAX_ARGS);
        if (c->bad)
            break;
        if ((cmd->argv = ad_take_strs(c, cmd->argc)) != NULL)
            cmd->nargv = cmd->argc;
        cmd->ninfo = (int)ad_take_int(c, 0, AD_SPAWN_MAX_ARGS);
        if (c->bad)
            break;
        if (cmd->command == NULL)
            c->bad = 1;
        cmd->ninfok = cmd->ninfov =
            ad_take_pairs(c, cmd->ninfo, &cmd->info_keys, &cmd->info_vals);
    }
    r->total = r->ncmds;
    if (!c->bad)
        r->npreput = (int)ad_take_int(c, 0, AD_SPAWN_MAX_ARGS);
    if (!c->bad)
        r->nppk = r->nppv = ad_take_pairs(c, r->npreput, &r->pp_keys, &r->pp_vals);
    if (c->bad) {
        ad_spawn_req_free(r);
        return NULL;
    }
    return r;
}

int ad_tree_spawn_request(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p,
                          const struct ad_spawn_req *req, struct ad_spawn_result *res)
{
    struct ad_tree *t = ad_t(d);
    struct ad_buf b = {0};

    if (t->root) { /* no rank runs at mpirun */
        snprintf(res->msg, sizeof(res->msg), "spawn: not available here");
        return -1;
    }
    ad_buf_add_int(&b, t->node);
    ad_buf_add_int(&b, job->num);
    ad_buf_add_int(&b, (int)(p - job->procs));
    if (ad_req_encode(&b, req, res) != 0) {
        ad_buf_free(&b);
        return -1;
    }
    ad_link_send(&t->parent, AD_M_SPAWN_REQ, 0, b.data, b.len);
    ad_buf_free(&b);
    return 0;
}

/* Payload of SPAWN_REP and SPAWN_ACK: "rc\0errcmd\0jobid\0msg\0". */
static void ad_res_add(struct ad_buf *b, const struct ad_spawn_result *res)
{
    ad_buf_add_int(b, res->rc);
    ad_buf_add_int(b, res->errcmd);
    ad_buf_add_str(b, res->jobid);
    ad_buf_add_str(b, res->msg);
}

static void ad_res_take(struct ad_cursor *c, struct ad_spawn_result *res)
{
    res->rc = (int)ad_take_int(c, -4096, 0);
    res->errcmd = (int)ad_take_int(c, -1, AD_SPAWN_MAX_CMDS);
    snprintf(res->jobid, sizeof(res->jobid), "%s", ad_take(c));
    snprintf(res->msg, sizeof(res->msg), "%s", ad_take(c));
}

/* Root: the answer goes down to the spawner's daemon. */
static void ad_spawn_answer_to(struct ad_tree *t, int origin, int ojob, int tag,
                               const struct ad_spawn_result *res)
{
    struct ad_link *down = ad_tree_kid_toward(t, origin);
    struct ad_buf b = {0};

    if (down == NULL)
        return;
    ad_buf_add_int(&b, origin);
    ad_buf_add_int(&b, ojob);
    ad_buf_add_int(&b, tag);
    ad_res_add(&b, res);
    ad_link_send(down, AD_M_SPAWN_REP, 0, b.data, b.len);
    ad_buf_free(&b);
}

/* A SPAWN_REP from above: for one of this node's processes, or further down. */
static void ad_spawn_rep(struct ad_daemon *d, struct ad_tree *t, const char *p, size_t len)
{
    struct ad_cursor c = {p, p + len, 0};
    struct ad_spawn_result res = {0};
    int origin = (int)ad_take_int(&c, 1, t->nhosts);
    struct ad_job *job = ad_job_by_num(d, (int)ad_take_int(&c, 0, INT_MAX));
    int tag = (int)ad_take_int(&c, 0, INT_MAX);
    struct ad_proc *to;

    ad_res_take(&c, &res);
    if ((to = ad_rep_route(t, &c, origin, job, tag, AD_M_SPAWN_REP, p, len)) != NULL)
        ad_pmi_spawn_reply(d, job, to, &res);
}

/* Root: the host (index) a spawn's info names: an entry of mpirun's host
 * list, else the one whose daemon has that host name ("localhost": the
 * name of mpirun's host); -1 if none. */
static int ad_host_index(struct ad_tree *t, const char *name)
{
    char me[256] = "";

    for (int h = 0; h < t->nhosts; h++)
        if (strcmp(t->hosts[h], name) == 0)
            return h;
    if (strcmp(name, "localhost") == 0 && gethostname(me, sizeof(me) - 1) == 0)
        name = me;
    for (int h = 0; h < t->nhosts; h++)
        if (ad_same_host(t->hosts[h], name) || ad_same_host(t->hostname[h], name))
            return h;
    return -1;
}

/* Root: the next free slot of mpirun's host list (its block placement,
 * continued after job 0 and the spawns before). */
static int ad_place_next(struct ad_tree *t)
{
    const struct mpirun_opts *o = t->opts;
    int h = t->place_host;
    int per = o->ppn > 0 ? o->ppn : o->hosts[h].slots;

    if (++t->place_used >= per) {
        t->place_used = 0;
        t->place_host = (h + 1) % (t->nhosts - o->ngateways); /* gateways: no ranks */
    }
    return h;
}

/* Root: the host of every process of the request (host_of[total]): info
 * host/hosts ("a,b:2": by blocks of their slots, pass after pass), else the
 * next free slots. 0, or -1 with the failure in res. */
static int ad_place(struct ad_tree *t, const struct ad_spawn_req *req, int *host_of,
                    struct ad_spawn_result *res)
{
    int r = 0;

    for (int i = 0; i < req->ncmds; i++) {
        const struct ad_spawn_cmd *c = &req->cmds[i];
        const char *list = NULL;
        int idx[64], slots[64], n = 0;
        for (int k = 0; k < c->ninfo; k++)
            if (strcmp(c->info_keys[k], "host") == 0 || strcmp(c->info_keys[k], "hosts") == 0)
                list = c->info_vals[k];
        for (const char *h = list; h != NULL && *h != '\0';) {
            size_t len = strcspn(h, ","), nlen = strcspn(h, ",:");
            char name[256];
            long sl = 1;
            if (nlen < len) {
                char *end;
                sl = strtol(h + nlen + 1, &end, 10);
                if (end != h + len || sl < 1)
                    sl = -1;
            }
            snprintf(name, sizeof(name), "%.*s", (int)(nlen < sizeof(name) ? nlen : 255), h);
            if (n == 64 || sl < 1 || (idx[n] = ad_host_index(t, name)) < 0) {
                struct ad_buf all = {0};
                for (int k = 0; k < t->nhosts; k++) {
                    if (k > 0)
                        ad_buf_add(&all, ",", 1);
                    ad_buf_add(&all, t->hosts[k], strlen(t->hosts[k]));
                }
                ad_buf_add(&all, "", 1);
                res->rc = n == 64 || sl < 1 ? -EINVAL : -EHOSTUNREACH;
                res->errcmd = i;
                if (n == 64)
                    snprintf(res->msg, sizeof(res->msg), "spawn: info host lists more than 64 hosts");
                else if (sl < 1)
                    snprintf(res->msg, sizeof(res->msg), "spawn: bad info host entry '%.*s'",
                             (int)(len < 200 ? len : 200), h);
                else
                    snprintf(res->msg, sizeof(res->msg),
                             "spawn: info host '%.200s' is not one of mpirun's hosts (%.300s)", name,
                             all.data != NULL ? all.data : "");
                ad_buf_free(&all);
                return -1;
            }
            slots[n++] = (int)sl;
            h += len;
            if (*h == ',')
                h++;
        }
        for (int k = 0, h = 0, used = 0; k < c->maxprocs; k++, r++) {
            if (n == 0) {
                host_of[r] = ad_place_next(t);
                continue;
            }
            host_of[r] = idx[h];
            if (++used == slots[h]) {
                used = 0;
                h = (h + 1) % n;
            }
        }
    }
    return 0;
}

static void ad_spawn_job_in(struct ad_daemon *d, struct ad_tree *t, const char *p, size_t len);

/* Root: a rank's spawn. Checked and placed here, named (job number, id),
 * then started by the daemons of its hosts (SPAWN_JOB); the answer goes
 * back once they all answered (ad_spawn_ack). */
static void ad_root_spawn(struct ad_daemon *d, struct ad_tree *t, const char *p, size_t len)
{
    struct ad_cursor c = {p, p + len, 0};
    struct ad_spawn_result res = {.rc = -EINVAL, .errcmd = -1};
    int origin = (int)ad_take_int(&c, 1, t->nhosts);
    int ojob = (int)ad_take_int(&c, 0, INT_MAX);
    int tag = (int)ad_take_int(&c, 0, INT_MAX);
    const char *reqp = c.p;
    struct ad_spawn_req *req = c.bad ? NULL : ad_req_decode(&c);
    struct ad_job *spawner = ad_job_by_num(d, ojob);
    int *host_of = NULL, *node_of = NULL, total = 0, running = 0;
    char(*keys)[UTIL_NODE_KEY_CAP] = NULL;
    char jobid[ASSIST_JOBID_MAX + 16];
    struct ad_buf b = {0};

    if (c.bad || req == NULL) {
        if (c.bad && ad_tree_kid_toward(t, origin) == NULL)
            goto out; /* not from one of ours */
        snprintf(res.msg, sizeof(res.msg), "spawn: a malformed request between the daemons");
        goto answer;
    }
    for (int i = 0; i < req->ncmds; i++)
        total += req->cmds[i].maxprocs;
    for (int j = 0; j < d->njobs; j++) /* job 0 and the spawned jobs not yet ended */
        running += d->jobs[j]->size;
    if (spawner == NULL) {
        res.rc = -ECANCELED;
        snprintf(res.msg, sizeof(res.msg), "spawn: the spawning job has ended");
    } else if (d->phase != AD_RUN || d->ended) {
        res.rc = -ECANCELED;
        snprintf(res.msg, sizeof(res.msg), "spawn: the job is ending");
    } else if (total > AD_SPAWN_MAX_PROCS) {
        snprintf(res.msg, sizeof(res.msg), "spawn: %d processes, more than %d", total,
                 AD_SPAWN_MAX_PROCS);
    } else if (d->no_oversubscribe && (long)running + total > d->universe) {
        res.rc = -EAGAIN;
        snprintf(res.msg, sizeof(res.msg),
                 "spawn: %d processes would run (%d running, %d new), more than the universe "
                 "size %d, and mpirun has --no-oversubscribe",
                 running + total, running, total, d->universe);
    } else if (snprintf(jobid, sizeof(jobid), "%s_%d", d->jobs[0]->jobid, d->spawned + 1) >
               ASSIST_JOBID_MAX) {
        res.rc = -ENAMETOOLONG;
        snprintf(res.msg, sizeof(res.msg), "spawn: no job id left");
    } else {
        res.rc = 0;
    }
    if (res.rc != 0)
        goto answer;
    host_of = calloc((size_t)total, sizeof(int));
    node_of = calloc((size_t)total, sizeof(int));
    keys = calloc((size_t)total, sizeof(*keys));
    if (host_of == NULL || node_of == NULL || keys == NULL) {
        res.rc = -ENOMEM;
        snprintf(res.msg, sizeof(res.msg), "spawn: out of memory");
        goto answer;
    }
    if (ad_place(t, req, host_of, &res) != 0)
        goto answer;
    for (int r = 0, nkeys = 0; r < total; r++) { /* nodes numbered in rank order */
        const char *key = t->hostkey[host_of[r]];
        int id = 0;
        while (id < nkeys && strcmp(keys[id], key) != 0)
            id++;
        if (id == nkeys)
            snprintf(keys[nkeys++], UTIL_NODE_KEY_CAP, "%s", key);
        node_of[r] = id;
    }
    d->spawned++;
    ad_buf_add_int(&b, d->spawned);
    ad_buf_add_str(&b, jobid);
    ad_buf_add_str(&b, spawner->kvsname);
    ad_buf_add_int(&b, origin);
    ad_buf_add_int(&b, ojob);
    ad_buf_add_int(&b, tag);
    ad_buf_add_int(&b, total);
    for (int r = 0; r < total; r++) {
        ad_buf_add_int(&b, host_of[r]);
        ad_buf_add_int(&b, node_of[r]);
    }
    if (ad_buf_add(&b, reqp, (size_t)(p + len - reqp)) != 0) {
        res.rc = -ENOMEM;
        snprintf(res.msg, sizeof(res.msg), "spawn: out of memory");
        goto answer;
    }
    ad_spawn_job_in(d, t, b.data, b.len); /* as every daemon of it does */
    goto out;
answer:
    ad_spawn_answer_to(t, origin, ojob, tag, &res);
out:
    ad_buf_free(&b);
    free(host_of);
    free(node_of);
    free(keys);
    ad_spawn_req_free(req);
}

/* The subtree's part of spawned job is answered: up, or (root) to the
 * spawner; a failure anywhere ends the job everywhere. */
static void ad_spawn_check_acks(struct ad_tree *t, struct ad_job *job)
{
    struct ad_jtree *jt = job->tree;
    struct ad_buf b = {0};

    if (jt->acked || jt->acks < jt->kids_with)
        return;
    jt->acked = 1;
    if (!t->root) {
        ad_res_add(&b, &jt->res);
        ad_link_send(&t->parent, AD_M_SPAWN_ACK, job->num, b.data, b.len);
        ad_buf_free(&b);
        return;
    }
    if (jt->res.rc != 0) {
        job->discard = 1;
        ad_job_send_down(t, job, AD_M_SPAWN_KILL, NULL, 0);
    } else {
        snprintf(jt->res.jobid, sizeof(jt->res.jobid), "%s", job->kvsname);
    }
    ad_spawn_answer_to(t, jt->origin, jt->origin_job, jt->origin_tag, &jt->res);
}

/* SPAWN_JOB (and the root's own spawn): this daemon's part of a spawned
 * job: "num\0jobid\0spawner\0origin\0ojob\0tag\0size\0" (host, node) x
 * size, then the request. */
static void ad_spawn_job_in(struct ad_daemon *d, struct ad_tree *t, const char *p, size_t len)
{
    struct ad_cursor c = {p, p + len, 0};
    int num = (int)ad_take_int(&c, 1, INT_MAX);
    const char *jobid = ad_take(&c);
    const char *spawner = ad_take(&c);
    int origin = (int)ad_take_int(&c, 1, t->nhosts);
    int ojob = (int)ad_take_int(&c, 0, INT_MAX);
    int tag = (int)ad_take_int(&c, 0, INT_MAX);
    int size = (int)ad_take_int(&c, 1, AD_SPAWN_MAX_PROCS);
    int *host_of = NULL, *node_of = NULL, *ranks = NULL, nranks = 0;
    struct ad_spawn_req *req = NULL;
    struct ad_spawn_result res;
    struct ad_job *job = NULL;

    if (c.bad || strlen(jobid) > ASSIST_JOBID_MAX || ad_job_by_num(d, num) != NULL)
        goto bad;
    host_of = calloc((size_t)size, sizeof(int));
    node_of = calloc((size_t)size, sizeof(int));
    ranks = calloc((size_t)size, sizeof(int));
    if (host_of == NULL || node_of == NULL || ranks == NULL)
        goto oom;
    for (int r = 0; r < size; r++) {
        host_of[r] = (int)ad_take_int(&c, 0, t->nhosts - 1);
        node_of[r] = (int)ad_take_int(&c, 0, size - 1);
        if (host_of[r] == t->node - 1)
            ranks[nranks++] = r;
    }
    if (c.bad || (req = ad_req_decode(&c)) == NULL)
        goto bad;
    if (ad_spawn_local(d, req, num, jobid, spawner, ranks, nranks, node_of, &res, &job) != 0)
        goto oom;
    if ((job->tree = ad_jtree_new(t, host_of, size)) == NULL)
        goto oom;
    job->tree->res = res;
    job->tree->origin = origin;
    job->tree->origin_job = ojob;
    job->tree->origin_tag = tag;
    /* Processes of the job may run here or below: DONE is said again once
     * they ended (the parent took its DONE back on the ACK, ad_spawn_ack). */
    t->done_sent = 0;
    ad_job_send_down(t, job, AD_M_SPAWN_JOB, p, len);
    ad_spawn_check_acks(t, job);
    goto out;
bad:
    ad_daemon_end(d, 1, "mpirun: a bad spawn message between the assist daemons");
    goto out;
oom:
    ad_daemon_end(d, 1, "mpirun: out of memory");
out:
    free(host_of);
    free(node_of);
    free(ranks);
    ad_spawn_req_free(req);
}

/* SPAWN_ACK from child l: its subtree's part of the job, started or failed. */
static void ad_spawn_ack(struct ad_daemon *d, struct ad_tree *t, struct ad_link *l,
                         struct ad_job *job, const char *p, size_t len)
{
    struct ad_cursor c = {p, p + len, 0};
    struct ad_spawn_result res = {0};

    ad_res_take(&c, &res);
    if (job == NULL || job->tree == NULL || c.bad)
        return;
    if (job->tree->res.rc == 0 && res.rc != 0)
        job->tree->res = res;
    if (l->state == AD_LINK_DONE) { /* it says DONE again (ad_spawn_job_in) */
        l->state = AD_LINK_READY;
        t->done_sent = 0;
    }
    job->tree->acks++;
    ad_spawn_check_acks(t, job);
}

/* SPAWN_KILL: the job failed to start somewhere; its processes here go (not
 * judged: the spawner is told). */
static void ad_spawn_kill(struct ad_daemon *d, struct ad_tree *t, struct ad_job *job)
{
    (void)d;
    if (job == NULL || job->tree == NULL)
        return;
    job->discard = 1;
    for (int r = 0; r < job->nprocs; r++)
        if (job->procs[r].pid > 0 && job->procs[r].running)
            kill(-job->procs[r].pid, SIGKILL);
    ad_job_send_down(t, job, AD_M_SPAWN_KILL, NULL, 0);
}

/* Each round: spawned jobs whose processes here and below all ended are
 * reported up (JOB_DONE) and may then be freed here. */
static void ad_jobs_done_check(struct ad_daemon *d, struct ad_tree *t)
{
    for (int j = 0; j < d->njobs; j++) {
        struct ad_job *job = d->jobs[j];
        struct ad_jtree *jt = job->tree;
        if (job->num == 0 || jt == NULL || jt->done_sent || !jt->acked || job->nrunning > 0 ||
            jt->dones < jt->kids_with)
            continue;
        jt->done_sent = 1;
        if (!t->root)
            ad_link_send(&t->parent, AD_M_JOB_DONE, job->num, NULL, 0);
    }
}

static void ad_tree_exit(struct ad_tree *t)
{
    if (t->exiting)
        return;
    t->exiting = 1;
    t->exit_deadline = ad_now() + AD_EXIT_GRACE;
    for (int i = 0; i < t->nkids; i++)
        ad_link_send(&t->kids[i], AD_M_EXIT, 0, NULL, 0);
}

/* A frame from the parent (remote daemons). */
static void ad_from_parent(struct ad_daemon *d, struct ad_tree *t, int type, int32_t arg,
                           const char *p, size_t len)
{
    switch (type) {
    case AD_M_START: {
        int *node_of = calloc((size_t)t->size, sizeof(int));
        size_t nodes = (size_t)t->size * 4;
        if (node_of == NULL || len < nodes || (len > nodes && p[len - 1] != '\0')) {
            free(node_of);
            ad_daemon_end(d, 1, "mpirun: bad START message");
            return;
        }
        if (len > nodes) /* the gateways, for the ranks (and the processes they spawn) */
            setenv("DCFA_GATEWAYS", p + nodes, 1);
        for (int r = 0; r < t->size; r++)
            node_of[r] = (int)ad_get32((const unsigned char *)p + 4 * r);
        for (int i = 0; i < t->nkids; i++)
            ad_link_send(&t->kids[i], AD_M_START, 0, p, len);
        ad_tree_start(d, t, node_of);
        free(node_of);
        break;
    }
    case AD_M_FENCE_OUT:
        ad_fence_out(d, t, ad_job_by_num(d, arg), p, len);
        break;
    case AD_M_SPAWN_JOB:
        ad_spawn_job_in(d, t, p, len);
        break;
    case AD_M_SPAWN_KILL:
        ad_spawn_kill(d, t, ad_job_by_num(d, arg));
        break;
    case AD_M_SPAWN_REP:
        ad_spawn_rep(d, t, p, len);
        break;
    case AD_M_PHASE:
        if (arg > AD_RUN && arg <= AD_KILL)
            ad_enter_phase(d, (enum ad_phase)arg);
        break;
    case AD_M_USR1:
        ad_signal_all(d, SIGUSR1, 0);
        ad_tree_usr1(d);
        break;
    case AD_M_STDIN:
        if (len == 0) {
            d->stdin_open = 0;
            if (d->stdin_len == 0 && d->stdin_pipe >= 0) {
                close(d->stdin_pipe);
                d->stdin_pipe = -1;
            }
        } else if (d->stdin_pipe >= 0 && len <= AD_IO_BUF) {
            memcpy(d->stdin_buf, p, len);
            d->stdin_len = len;
        } else {
            ad_tree_stdin_ack(d, 1);
        }
        break;
    case AD_M_EXIT:
        ad_tree_exit(t);
        break;
    case AD_M_NAME_REP:
        ad_name_rep(d, t, p, len);
        break;
    case AD_M_NOINIT:
        ad_noinit_in(t, ad_job_by_num(d, arg), p, len);
        break;
    case AD_M_EPMAP:
        if (ad_epr_set_map(t->nhosts, p, len) != 0)
            ad_daemon_end(d, 1, "mpirun: bad EPMAP message");
        for (int i = 0; i < t->nkids; i++)
            ad_link_send(&t->kids[i], AD_M_EPMAP, 0, p, len);
        break;
    default:
        ad_daemon_end(d, 1, "mpirun: bad message from the parent daemon");
        break;
    }
}

/* A frame from child l. */
static void ad_from_kid(struct ad_daemon *d, struct ad_tree *t, struct ad_link *l, int type,
                        int32_t arg, const char *p, size_t len)
{
    switch (type) {
    case AD_M_HELLO:
        if (l->state == AD_LINK_STARTING) {
            l->state = AD_LINK_UP;
            if (l->errq.len > 0) /* what it said while starting */
                ad_io_write(2, l->errq.data, l->errq.len);
            l->errq.len = 0;
        }
        break;
    case AD_M_READY:
        l->state = AD_LINK_READY;
        ad_buf_add(&l->ready, p, len);
        ad_tree_check_ready(d, t);
        break;
    case AD_M_END: {
        char msg[1200];
        snprintf(msg, sizeof(msg), "%.*s", (int)(len > 0 ? strnlen(p, len) : 0), p);
        ad_daemon_end(d, arg, msg);
        break;
    }
    case AD_M_FENCE_IN: {
        struct ad_job *job = ad_job_by_num(d, arg);
        if (job != NULL && job->tree != NULL && ad_buf_add(&job->kvs_new, p, len) == 0) {
            job->tree->fence_in++;
            ad_fence_check(t, job);
        }
        break;
    }
    case AD_M_SPAWN_REQ:
        if (t->root)
            ad_root_spawn(d, t, p, len);
        else
            ad_link_send(&t->parent, AD_M_SPAWN_REQ, 0, p, len);
        break;
    case AD_M_SPAWN_ACK:
        ad_spawn_ack(d, t, l, ad_job_by_num(d, arg), p, len);
        break;
    case AD_M_JOB_DONE: {
        struct ad_job *job = ad_job_by_num(d, arg);
        if (job != NULL && job->tree != NULL)
            job->tree->dones++;
        break;
    }
    case AD_M_OUTPUT:
        if (arg == 1 || arg == 2)
            ad_io_write(arg, p, len); /* up again, or to mpirun's stdout/stderr */
        break;
    case AD_M_STDIN_ACK:
        t->stdin_inflight = 0;
        if (arg != 0)
            d->stdin_open = 0;
        break;
    case AD_M_DONE:
        l->state = AD_LINK_DONE;
        break;
    case AD_M_NAME_REQ:
        ad_name_req(d, t, p, len);
        break;
    case AD_M_NOINIT_UP: {
        char who[sizeof(((struct ad_job *)0)->noinit)];
        snprintf(who, sizeof(who), "%.*s", (int)(len > 0 ? strnlen(p, len) : 0), p);
        if (t->root)
            ad_noinit_root(d, t, ad_job_by_num(d, arg), who);
        else
            ad_link_send(&t->parent, AD_M_NOINIT_UP, arg, who, strlen(who) + 1);
        break;
    }
    case AD_M_EPADDR:
        if (t->root)
            ad_epr_note(arg, t->nhosts, p, len);
        else
            ad_link_send(&t->parent, AD_M_EPADDR, arg, p, len);
        break;
    default: {
        char msg[300];
        snprintf(msg, sizeof(msg), "mpirun: bad message %d from the assist daemon on host '%s'",
                 type, l->host);
        ad_daemon_end(d, 1, msg);
        break;
    }
    }
}

/* Reads from link l (the parent when kid is NULL... see callers). */
static void ad_link_input(struct ad_daemon *d, struct ad_tree *t, struct ad_link *l, int is_kid)
{
    char buf[65536];
    ssize_t n = read(l->in, buf, sizeof(buf));

    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        close(l->in);
        if (l->out == l->in)
            l->out = -1;
        l->in = -1;
        l->eof = 1;
        if (!is_kid) { /* lost mpirun: end everything here */
            if (!t->exiting) {
                ad_daemon_end(d, 1, "mpirun: lost the parent daemon");
                ad_enter_phase(d, AD_TERM);
            }
            d->launched = 1;
            ad_tree_exit(t);
        } else if (l->reaped || l->state == AD_LINK_DONE || t->exiting) {
            ad_kid_lost(d, t, l, "its connection closed");
        } else {
            l->deadline = ad_now() + AD_LOST_GRACE;
        }
        return;
    }
    if (ad_buf_add(&l->inq, buf, (size_t)n) != 0)
        return;
    if (is_kid && !l->synced) {
        char *m = memmem(l->inq.data, l->inq.len, AD_MAGIC, AD_MAGIC_LEN);
        size_t junk = m != NULL ? (size_t)(m - l->inq.data)
                                : (l->inq.len > AD_MAGIC_LEN ? l->inq.len - AD_MAGIC_LEN : 0);
        if (junk > 0) { /* a login banner or the like */
            ad_buf_add(&l->errq, l->inq.data, junk);
            ad_buf_consume(&l->inq, junk);
        }
        if (m == NULL)
            return;
        ad_buf_consume(&l->inq, AD_MAGIC_LEN);
        l->synced = 1;
    }
    while (l->inq.len >= AD_HDR && l->in >= 0) {
        const unsigned char *h = (const unsigned char *)l->inq.data;
        uint32_t len = ad_get32(h), type = ad_get32(h + 4);
        int32_t arg = (int32_t)ad_get32(h + 8);
        if (len > AD_FRAME_MAX) {
            ad_daemon_end(d, 1, "mpirun: a broken message between assist daemons");
            l->inq.len = 0;
            return;
        }
        if (l->inq.len < AD_HDR + (size_t)len)
            break;
        if (is_kid)
            ad_from_kid(d, t, l, (int)type, arg, l->inq.data + AD_HDR, len);
        else
            ad_from_parent(d, t, (int)type, arg, l->inq.data + AD_HDR, len);
        ad_buf_consume(&l->inq, AD_HDR + (size_t)len);
    }
}

static void ad_kid_err_input(struct ad_link *l)
{
    char buf[4096];
    ssize_t n = read(l->err, buf, sizeof(buf));

    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        close(l->err);
        l->err = -1;
        return;
    }
    if (l->state == AD_LINK_STARTING) { /* kept for the error message */
        ad_buf_add(&l->errq, buf, (size_t)n);
        if (l->errq.len > AD_ERR_HOLD)
            ad_buf_consume(&l->errq, l->errq.len - AD_ERR_HOLD);
    } else {
        ad_io_write(2, buf, (size_t)n);
    }
}

/* ---- the loop's hooks ------------------------------------------------------------- */

int ad_tree_rank_node(struct ad_daemon *d, const struct ad_job *job, int rank)
{
    struct ad_tree *t = ad_t(d);

    if (t == NULL || job->num != 0 || rank < 0 || rank >= t->size)
        return -1;
    return t->host_of[rank] + 1;
}

static int ad_tree_nfds(struct ad_daemon *d) { return 3 * ad_t(d)->nkids + 4; }

static int ad_tree_pollfds(struct ad_daemon *d, struct pollfd *pfds, struct ad_fd_ref *refs, int n)
{
    struct ad_tree *t = ad_t(d);

    if (!t->root) {
        if (t->parent.in >= 0) {
            pfds[n] = (struct pollfd){.fd = t->parent.in, .events = POLLIN};
            refs[n++] = (struct ad_fd_ref){AD_FD_LINK_IN, NULL, NULL, &t->parent};
        }
        if (t->parent.out >= 0 && t->parent.outq.len > 0) {
            pfds[n] = (struct pollfd){.fd = t->parent.out, .events = POLLOUT};
            refs[n++] = (struct ad_fd_ref){AD_FD_LINK_OUT, NULL, NULL, &t->parent};
        }
    } else if (d->stdin_open && !t->stdin_inflight && t->started && t->nkids > 0 &&
               t->kids[0].out >= 0) {
        pfds[n] = (struct pollfd){.fd = 0, .events = POLLIN};
        refs[n++] = (struct ad_fd_ref){AD_FD_ROOT_STDIN, NULL, NULL, NULL};
    }
    for (int i = 0; i < t->nkids; i++) {
        struct ad_link *l = &t->kids[i];
        if (l->in >= 0) {
            pfds[n] = (struct pollfd){.fd = l->in, .events = POLLIN};
            refs[n++] = (struct ad_fd_ref){AD_FD_LINK_IN, NULL, NULL, l};
        }
        if (l->out >= 0 && l->outq.len > 0) {
            pfds[n] = (struct pollfd){.fd = l->out, .events = POLLOUT};
            refs[n++] = (struct ad_fd_ref){AD_FD_LINK_OUT, NULL, NULL, l};
        }
        if (l->err >= 0) {
            pfds[n] = (struct pollfd){.fd = l->err, .events = POLLIN};
            refs[n++] = (struct ad_fd_ref){AD_FD_LINK_ERR, NULL, NULL, l};
        }
    }
    return n;
}

/* Root: mpirun's stdin goes to rank 0's host (node 1, the first child), one
 * chunk at a time (acknowledged once written to rank 0). */
static void ad_root_stdin(struct ad_daemon *d, struct ad_tree *t)
{
    char buf[AD_IO_BUF];
    ssize_t n = read(0, buf, sizeof(buf));

    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        d->stdin_open = 0;
        ad_link_send(&t->kids[0], AD_M_STDIN, 0, NULL, 0);
        return;
    }
    t->stdin_inflight = 1;
    ad_link_send(&t->kids[0], AD_M_STDIN, 0, buf, (size_t)n);
}

static void ad_tree_event(struct ad_daemon *d, const struct ad_fd_ref *ref, short revents)
{
    struct ad_tree *t = ad_t(d);
    struct ad_link *l = ref->link;

    if (ref->kind == AD_FD_ROOT_STDIN) {
        if (revents & POLLNVAL)
            d->stdin_open = 0;
        else
            ad_root_stdin(d, t);
        return;
    }
    if (ref->kind == AD_FD_LINK_OUT) {
        ad_link_flush(l);
        if (l == &t->parent && l->out < 0 && !t->exiting) {
            ad_daemon_end(d, 1, "mpirun: lost the parent daemon");
            d->launched = 1;
            ad_tree_exit(t);
        }
        return;
    }
    if (ref->kind == AD_FD_LINK_ERR) {
        if (l->err >= 0)
            ad_kid_err_input(l);
        return;
    }
    if (l->in >= 0)
        ad_link_input(d, t, l, l != &t->parent);
}

static double ad_tree_deadline(struct ad_daemon *d)
{
    struct ad_tree *t = ad_t(d);
    double next = t->exiting ? t->exit_deadline : 0;

    for (int i = 0; i < t->nkids; i++) {
        const struct ad_link *l = &t->kids[i];
        if ((l->state == AD_LINK_STARTING || ((l->eof || l->reaped) && !l->reported)) &&
            l->deadline > 0 && (next == 0 || l->deadline < next))
            next = l->deadline;
    }
    return next;
}

static void ad_tree_tick(struct ad_daemon *d, double now)
{
    struct ad_tree *t = ad_t(d);

    for (int i = 0; i < t->nkids; i++) {
        struct ad_link *l = &t->kids[i];
        if (l->reported) {
            if (l->eof)
                l->state = AD_LINK_CLOSED;
            continue;
        }
        if (l->state == AD_LINK_STARTING && !l->eof && !l->reaped && l->deadline > 0 &&
            now >= l->deadline && !t->exiting) {
            char msg[600];
            snprintf(msg, sizeof(msg),
                     "mpirun: no answer from the assist daemon on host '%s' after %.0f s "
                     "(remote-start command '%s')",
                     l->host, t->launch_timeout, ad_host_is_local(l->host) ? t->exe : t->rsh);
            l->reported = 1;
            l->state = AD_LINK_CLOSED;
            if (l->pid > 0)
                kill(-l->pid, SIGKILL);
            ad_daemon_end(d, 1, msg);
        } else if ((l->eof || l->reaped) && ((l->eof && l->reaped) || now >= l->deadline)) {
            ad_kid_lost(d, t, l, "its connection closed");
        }
    }
    ad_jobs_done_check(d, t);
    if (t->root) {
        if (!t->exiting && ad_kids_all(t, ad_kid_finished) && (t->started || d->ended))
            ad_tree_exit(t);
    } else if (!t->done_sent && !t->exiting && ad_local_done(d) &&
               ad_kids_all(t, ad_kid_finished)) {
        t->done_sent = 1;
        ad_link_send(&t->parent, AD_M_DONE, 0, NULL, 0);
    }
    if (t->exiting && now >= t->exit_deadline) {
        for (int i = 0; i < t->nkids; i++) {
            struct ad_link *l = &t->kids[i];
            if (l->pid > 0 && !l->reaped)
                kill(-l->pid, SIGKILL);
            ad_link_close(l);
            l->eof = 1;
            l->reaped = 1;
        }
    }
}

static int ad_tree_finished(struct ad_daemon *d)
{
    struct ad_tree *t = ad_t(d);

    if (!t->exiting)
        return 0;
    if (!t->root && !ad_local_done(d) && ad_now() < t->exit_deadline + AD_EXIT_GRACE)
        return 0;
    for (int i = 0; i < t->nkids; i++)
        if (!t->kids[i].eof || !t->kids[i].reaped)
            return 0;
    if (!t->root && t->parent.outq.len > 0 && t->parent.out >= 0 &&
        ad_now() < t->exit_deadline) /* the last output and DONE */
        return 0;
    return 1;
}

/* ---- what the tree hears from the reactor (ad_tree_attach) ------------------------- */

static int ad_tree_on_fd(struct ad_daemon *d, const struct ad_fd_ref *ref, short revents)
{
    ad_tree_event(d, ref, revents);
    return 0;
}

static int ad_tree_on_end(struct ad_daemon *d, const struct ad_event_arg *a)
{
    if (d->tree != NULL)
        ad_tree_end(d, a->code, a->msg);
    return 0;
}

static int ad_tree_on_phase(struct ad_daemon *d, const struct ad_event_arg *a)
{
    if (d->tree != NULL)
        ad_tree_phase(d, (enum ad_phase)a->code);
    return 0;
}

static int ad_tree_on_usr1(struct ad_daemon *d, const struct ad_event_arg *a)
{
    (void)a;
    if (d->tree != NULL)
        ad_tree_usr1(d);
    return 0;
}

static int ad_tree_on_stdin_ack(struct ad_daemon *d, const struct ad_event_arg *a)
{
    if (d->tree != NULL)
        ad_tree_stdin_ack(d, a->code);
    return 0;
}

static int ad_tree_on_noinit(struct ad_daemon *d, const struct ad_event_arg *a)
{
    if (d->tree == NULL)
        return 0;
    ad_tree_noinit(d, a->job, a->who);
    return 1;
}

static int ad_tree_on_child(struct ad_daemon *d, const struct ad_event_arg *a)
{
    if (d->tree == NULL || !ad_tree_is_link_pid(d, a->pid))
        return 0;
    ad_tree_reaped(d, a->pid, a->status);
    return 1;
}

static int ad_tree_on_own_pid(struct ad_daemon *d, const struct ad_event_arg *a)
{
    return d->tree != NULL && ad_tree_is_link_pid(d, a->pid);
}

static int ad_tree_on_tick(struct ad_daemon *d, const struct ad_event_arg *a)
{
    if (d->tree == NULL)
        return 0;
    ad_tree_tick(d, a->now);
    return ad_tree_finished(d);
}

static int ad_tree_on_job_held(struct ad_daemon *d, const struct ad_event_arg *a)
{
    return d->tree != NULL && ad_tree_job_held(d, a->job);
}

static int ad_tree_on_job_free(struct ad_daemon *d, const struct ad_event_arg *a)
{
    (void)d;
    ad_tree_job_free(a->job);
    return 0;
}

static int ad_tree_on_output_hold(struct ad_daemon *d, const struct ad_event_arg *a)
{
    (void)a;
    return d->tree != NULL && !ad_tree_output_ok(d);
}

static const struct ad_source ad_tree_source = {ad_tree_nfds, ad_tree_pollfds, ad_tree_deadline};

/* d->tree is set: the tree's fds, deadlines and events join the loop, then the other
 * hosts' endpoints (ad_ep_remote.c). */
static void ad_tree_attach(void)
{
    static const struct {
        enum ad_event ev;
        ad_event_cb cb;
    } subs[] = {
        {AD_EV_END, ad_tree_on_end},
        {AD_EV_PHASE, ad_tree_on_phase},
        {AD_EV_USR1, ad_tree_on_usr1},
        {AD_EV_STDIN_ACK, ad_tree_on_stdin_ack},
        {AD_EV_NOINIT, ad_tree_on_noinit},
        {AD_EV_CHILD, ad_tree_on_child},
        {AD_EV_OWN_PID, ad_tree_on_own_pid},
        {AD_EV_TICK, ad_tree_on_tick},
        {AD_EV_JOB_HELD, ad_tree_on_job_held},
        {AD_EV_JOB_FREE, ad_tree_on_job_free},
        {AD_EV_OUTPUT_HOLD, ad_tree_on_output_hold},
    };

    for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++)
        (void)ad_reactor_subscribe(subs[i].ev, subs[i].cb);
    ad_reactor_handle(AD_FD_LINK_IN, ad_tree_on_fd);
    ad_reactor_handle(AD_FD_LINK_OUT, ad_tree_on_fd);
    ad_reactor_handle(AD_FD_LINK_ERR, ad_tree_on_fd);
    ad_reactor_handle(AD_FD_ROOT_STDIN, ad_tree_on_fd);
    (void)ad_reactor_add_source(&ad_tree_source);
    ad_epr_attach();
}

/* ---- entry points ------------------------------------------------------------------ */

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

/* Reads exactly len bytes from fd 0 within timeout_s. */
static int ad_read_full(int fd, void *buf, size_t len, double deadline)
{
    char *p = buf;

    while (len > 0) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int ms = (int)((deadline - ad_now()) * 1000.0);
        if (ms <= 0)
            return -ETIMEDOUT;
        int rc = poll(&pfd, 1, ms);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc <= 0)
            return rc == 0 ? -ETIMEDOUT : -errno;
        ssize_t n = read(fd, p, len);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0)
            return n == 0 ? -ECONNRESET : -errno;
        p += n;
        len -= (size_t)n;
    }
    return 0;
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
    ad_daemon_free(&d);
    free(d.stdin_buf);
    close(d.sigfd);
    sigprocmask(SIG_SETMASK, &oldmask, NULL);
    return rc;
}
