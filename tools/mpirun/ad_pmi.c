/* ad: PMI-1 "simple" server, one connection per rank (see docs/launcher.md). */
#include "ad.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Replies are small; a rank that does not read them is broken. */
static void ad_pmi_send(struct ad_daemon *d, struct ad_proc *p, const char *msg)
{
    size_t len = strlen(msg);

    while (len > 0 && p->pmi_fd >= 0) {
        ssize_t n = send(p->pmi_fd, msg, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            /* EPIPE/ECONNRESET: the rank is gone; its exit is reported. */
            if (errno == EAGAIN) {
                char m[128];
                snprintf(m, sizeof(m),
                         "mpirun: rank %d (pid %ld%s%s) does not read its PMI replies", p->rank,
                         (long)p->pid, d->host ? " on " : "", d->host ? d->host : "");
                ad_daemon_end(d, 1, m);
            }
            close(p->pmi_fd);
            p->pmi_fd = -1;
            return;
        }
        msg += n;
        len -= (size_t)n;
    }
}

static void ad_pmi_bad(struct ad_daemon *d, struct ad_proc *p, const char *line)
{
    char m[512];

    snprintf(m, sizeof(m), "mpirun: rank %d (pid %ld%s%s) sent a bad PMI command: '%.300s'",
             p->rank, (long)p->pid, d->host ? " on " : "", d->host ? d->host : "", line);
    ad_daemon_end(d, 1, m);
}

void ad_pmi_fence_done(struct ad_daemon *d, struct ad_job *job)
{
    job->barrier_count = 0;
    for (int r = 0; r < job->nprocs; r++) {
        job->procs[r].in_barrier = 0;
        ad_pmi_send(d, &job->procs[r], "cmd=barrier_out\n");
    }
}

static void ad_pmi_barrier_in(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p)
{
    if (p->in_barrier)
        return;
    p->in_barrier = 1;
    if (++job->barrier_count < job->nprocs)
        return;
    if (d->tree != NULL)
        ad_tree_fence(d, job); /* the other hosts' ranks too */
    else
        ad_pmi_fence_done(d, job);
}

static void ad_pmi_abort(struct ad_daemon *d, struct ad_proc *p, const char *line)
{
    char m[ASSIST_WIRE_LINE_MAX + 128];
    const char *msg = strstr(line, "error_msg=");
    long code = 1;
    int n;

    if (assist_wire_get_int(line, "exitcode", &code) != 0)
        code = 1;
    n = snprintf(m, sizeof(m), "mpirun: rank %d (pid %ld%s%s) aborted the job with exit code %ld",
                 p->rank, (long)p->pid, d->host ? " on " : "", d->host ? d->host : "", code);
    if (msg != NULL && msg[10] != '\0' && n > 0 && (size_t)n < sizeof(m))
        snprintf(m + n, sizeof(m) - (size_t)n, ": %s", msg + 10);
    ad_daemon_end(d, (int)(code & 0xff), m);
}

static void ad_pmi_line(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p, char *line)
{
    char reply[ASSIST_WIRE_LINE_MAX + 64];
    char key[ASSIST_KEY_MAX + 1], value[ASSIST_VALUE_MAX + 1];
    long v;

    if (assist_wire_is(line, "init")) {
        if (assist_wire_get_int(line, "pmi_version", &v) != 0 || v != 1) {
            ad_pmi_send(d, p, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1\n");
            return;
        }
        p->pmi_inited = 1;
        ad_pmi_send(d, p, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n");
    } else if (assist_wire_is(line, "get_maxes")) {
        snprintf(reply, sizeof(reply),
                 "cmd=maxes rc=0 kvsname_max=%d keylen_max=%d vallen_max=%d\n",
                 ASSIST_WIRE_KVSNAME_MAX, ASSIST_KEY_MAX, ASSIST_VALUE_MAX);
        ad_pmi_send(d, p, reply);
    } else if (assist_wire_is(line, "get_appnum")) {
        snprintf(reply, sizeof(reply), "cmd=appnum rc=0 appnum=%d\n", p->appnum);
        ad_pmi_send(d, p, reply);
    } else if (assist_wire_is(line, "get_my_kvsname")) {
        snprintf(reply, sizeof(reply), "cmd=my_kvsname rc=0 kvsname=%s\n", job->kvsname);
        ad_pmi_send(d, p, reply);
    } else if (assist_wire_is(line, "get_universe_size")) {
        snprintf(reply, sizeof(reply), "cmd=universe_size rc=0 size=%d\n", job->size);
        ad_pmi_send(d, p, reply);
    } else if (assist_wire_is(line, "put")) {
        int vrc = assist_wire_get(line, "value", value, sizeof(value));
        if (assist_wire_get(line, "key", key, sizeof(key)) != 0 || vrc == -ENOSPC) {
            ad_pmi_send(d, p, "cmd=put_result rc=-1 msg=bad_key_or_value\n");
            return;
        }
        if (vrc != 0) /* "value=" absent: empty value */
            value[0] = '\0';
        if (ad_kvs_put(&job->kvs, key, value) != 0 ||
            (d->tree != NULL && (ad_buf_add_str(&job->kvs_new, key) != 0 ||
                                 ad_buf_add_str(&job->kvs_new, value) != 0)))
            ad_pmi_send(d, p, "cmd=put_result rc=-1 msg=no_memory\n");
        else
            ad_pmi_send(d, p, "cmd=put_result rc=0 msg=success\n");
    } else if (assist_wire_is(line, "get")) {
        const char *val = NULL;
        if (assist_wire_get(line, "key", key, sizeof(key)) == 0) {
            val = ad_kvs_get(&job->kvs, key);
            if (val == NULL && strcmp(key, "PMI_process_mapping") == 0)
                val = job->mapping;
        }
        if (val != NULL)
            snprintf(reply, sizeof(reply), "cmd=get_result rc=0 msg=success value=%s\n", val);
        else
            snprintf(reply, sizeof(reply), "cmd=get_result rc=-1 msg=key_not_found\n");
        ad_pmi_send(d, p, reply);
    } else if (assist_wire_is(line, "barrier_in")) {
        ad_pmi_barrier_in(d, job, p);
    } else if (assist_wire_is(line, "finalize")) {
        p->pmi_finalized = 1;
        ad_pmi_send(d, p, "cmd=finalize_ack rc=0\n");
    } else if (assist_wire_is(line, "abort")) {
        ad_pmi_abort(d, p, line);
    } else {
        ad_pmi_bad(d, p, line);
    }
}

int ad_pmi_input(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p)
{
    ssize_t n;

    if (p->pmi_fd < 0)
        return 0;
    n = read(p->pmi_fd, p->pmi_in + p->pmi_inlen, sizeof(p->pmi_in) - p->pmi_inlen);
    if (n < 0 && errno == EINTR)
        return 1;
    if (n < 0 && errno == EAGAIN)
        return 0;
    if (n <= 0) {
        /* The rank closed the channel (finalize or exit); its exit is
         * reported when it is reaped. */
        close(p->pmi_fd);
        p->pmi_fd = -1;
        return 0;
    }
    p->pmi_inlen += (size_t)n;
    for (;;) {
        char *nl = memchr(p->pmi_in, '\n', p->pmi_inlen);
        if (nl == NULL)
            break;
        *nl = '\0';
        ad_pmi_line(d, job, p, p->pmi_in);
        p->pmi_inlen -= (size_t)(nl + 1 - p->pmi_in);
        memmove(p->pmi_in, nl + 1, p->pmi_inlen);
    }
    if (p->pmi_inlen == sizeof(p->pmi_in)) {
        p->pmi_in[sizeof(p->pmi_in) - 1] = '\0';
        ad_pmi_bad(d, p, p->pmi_in);
        if (p->pmi_fd >= 0)
            close(p->pmi_fd);
        p->pmi_fd = -1;
        return 0;
    }
    return 1;
}
