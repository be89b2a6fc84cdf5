/* ad_rsh: remote start: a child daemon started through the remote-start command (DCFA_RSH,
 * quoting its command line), its stderr, its loss, and the cleanup of a lost one's host. */
#include "ad_rsh.h"
#include "ad_link.h"

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

/* this host runs a gateway daemon for the job: named in DCFA_GATEWAY_HOSTS (mpirun
 * --gateways, in the environment SETUP carries) */
int ad_is_gateway_host(const char *host)
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

int ad_host_is_local(const char *host)
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
void ad_kid_start(struct ad_daemon *d, struct ad_tree *t, struct ad_link *l)
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
void ad_kid_lost(struct ad_daemon *d, struct ad_tree *t, struct ad_link *l, const char *why)
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

void ad_kid_err_input(struct ad_link *l)
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
