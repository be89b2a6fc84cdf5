/* ad: PMI server, one connection per rank (see docs/launcher.md): PMI-1
 * "simple" lines, and PMI-2 messages for a rank whose init asks for
 * version 2 (the wire format is in src/assist/pmi_wire.h). */
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

/* A PMI-2 reply: body framed by its 6-character length. */
static void ad_pmi_send2(struct ad_daemon *d, struct ad_proc *p, const char *body)
{
    char hdr[32];

    snprintf(hdr, sizeof(hdr), "%-6zu", strlen(body) % 1000000);
    ad_pmi_send(d, p, hdr);
    ad_pmi_send(d, p, body);
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
        if (job->procs[r].pmi_version == 2)
            ad_pmi_send2(d, &job->procs[r], "cmd=kvs-fence-response;rc=0;");
        else
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
    char m[ASSIST_WIRE_LINE_MAX + 128], text[ASSIST_WIRE_LINE_MAX];
    const char *msg = strstr(line, "error_msg=");
    long code = 1;
    int n;

    if (p->pmi_version == 2) { /* cmd=abort;isworld=TRUE;exitcode=N;message=text; */
        if (assist_wire2_get_int(line, "exitcode", &code) != 0)
            code = 1;
        snprintf(text, sizeof(text), "error_msg=");
        if (assist_wire2_get(line, "message", text + 10, sizeof(text) - 10) == 0)
            msg = text;
        else
            msg = NULL;
    } else if (assist_wire_get_int(line, "exitcode", &code) != 0) {
        code = 1;
    }
    n = snprintf(m, sizeof(m), "mpirun: rank %d (pid %ld%s%s) aborted the job with exit code %ld",
                 p->rank, (long)p->pid, d->host ? " on " : "", d->host ? d->host : "", code);
    if (msg != NULL && msg[10] != '\0' && n > 0 && (size_t)n < sizeof(m))
        snprintf(m + n, sizeof(m) - (size_t)n, ": %s", msg + 10);
    ad_daemon_end(d, (int)(code & 0xff), m);
}

static int ad_pmi_store(struct ad_daemon *d, struct ad_job *job, const char *key,
                        const char *value);

static void ad_pmi_line(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p, char *line)
{
    char reply[ASSIST_WIRE_LINE_MAX + 64];
    char key[ASSIST_KEY_MAX + 1], value[ASSIST_VALUE_MAX + 1];
    long v;

    if (assist_wire_is(line, "init")) {
        if (assist_wire_get_int(line, "pmi_version", &v) == 0 && v == 2 && p->pmi_version == 0) {
            p->pmi_version = 2; /* PMI-2 messages from now on */
            ad_pmi_send(d, p, "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n");
            return;
        }
        if (assist_wire_get_int(line, "pmi_version", &v) != 0 || v != 1) {
            ad_pmi_send(d, p, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1\n");
            return;
        }
        p->pmi_version = 1;
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
        if (ad_pmi_store(d, job, key, value) != 0)
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

/* Stores a put (and notes it for the next fence across hosts); 0 or -1. */
static int ad_pmi_store(struct ad_daemon *d, struct ad_job *job, const char *key, const char *value)
{
    if (ad_kvs_put(&job->kvs, key, value) != 0 ||
        (d->tree != NULL &&
         (ad_buf_add_str(&job->kvs_new, key) != 0 || ad_buf_add_str(&job->kvs_new, value) != 0)))
        return -1;
    return 0;
}

/* One PMI-2 message (NUL-terminated, without its length). */
static void ad_pmi2_msg(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p, char *msg)
{
    char reply[ASSIST_WIRE_LINE_MAX + 64];
    char key[ASSIST_KEY_MAX + 1], value[ASSIST_VALUE_MAX + 1];
    const char *val;

    if (assist_wire2_is(msg, "fullinit")) {
        p->pmi_inited = 1;
        snprintf(reply, sizeof(reply),
                 "cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=%d;size=%d;"
                 "appnum=%d;debugged=FALSE;pmiverbose=FALSE;",
                 p->rank, job->size, p->appnum);
        ad_pmi_send2(d, p, reply);
    } else if (assist_wire2_is(msg, "job-getid")) {
        snprintf(reply, sizeof(reply), "cmd=job-getid-response;rc=0;jobid=%s;", job->kvsname);
        ad_pmi_send2(d, p, reply);
    } else if (assist_wire2_is(msg, "kvs-put")) {
        int vrc = assist_wire2_get(msg, "value", value, sizeof(value));
        if (assist_wire2_get(msg, "key", key, sizeof(key)) != 0 || vrc == -ENOSPC)
            ad_pmi_send2(d, p, "cmd=kvs-put-response;rc=-1;errmsg=bad key or value;");
        else if (ad_pmi_store(d, job, key, vrc == 0 ? value : "") != 0)
            ad_pmi_send2(d, p, "cmd=kvs-put-response;rc=-1;errmsg=no memory;");
        else
            ad_pmi_send2(d, p, "cmd=kvs-put-response;rc=0;");
    } else if (assist_wire2_is(msg, "kvs-get") || assist_wire2_is(msg, "info-getjobattr")) {
        int job_attr = assist_wire2_is(msg, "info-getjobattr");
        val = NULL;
        if (assist_wire2_get(msg, "key", key, sizeof(key)) == 0) {
            val = ad_kvs_get(&job->kvs, key);
            if (val == NULL && strcmp(key, "PMI_process_mapping") == 0)
                val = job->mapping;
            if (val == NULL && strcmp(key, "universeSize") == 0) {
                snprintf(value, sizeof(value), "%d", job->size);
                val = value;
            }
        }
        snprintf(reply, sizeof(reply), "cmd=%s;rc=0;found=%s;%s%s%s",
                 job_attr ? "info-getjobattr-response" : "kvs-get-response",
                 val != NULL ? "TRUE" : "FALSE", val != NULL ? "value=" : "",
                 val != NULL ? val : "", val != NULL ? ";" : "");
        ad_pmi_send2(d, p, reply);
    } else if (assist_wire2_is(msg, "info-getnodeattr")) {
        ad_pmi_send2(d, p, "cmd=info-getnodeattr-response;rc=0;found=FALSE;");
    } else if (assist_wire2_is(msg, "info-putnodeattr")) {
        ad_pmi_send2(d, p, "cmd=info-putnodeattr-response;rc=0;");
    } else if (assist_wire2_is(msg, "kvs-fence")) {
        ad_pmi_barrier_in(d, job, p);
    } else if (assist_wire2_is(msg, "finalize")) {
        p->pmi_finalized = 1;
        ad_pmi_send2(d, p, "cmd=finalize-response;rc=0;");
    } else if (assist_wire2_is(msg, "abort")) {
        ad_pmi_abort(d, p, msg);
    } else {
        ad_pmi_bad(d, p, msg);
    }
}

/* Handles every complete PMI-2 message in the input buffer. */
static void ad_pmi2_input(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p)
{
    while (p->pmi_fd >= 0 && p->pmi_inlen >= ASSIST_WIRE2_HDR) {
        long len = assist_wire2_len(p->pmi_in);
        if (len < 0 || (size_t)len + ASSIST_WIRE2_HDR >= sizeof(p->pmi_in)) {
            p->pmi_in[p->pmi_inlen < sizeof(p->pmi_in) ? p->pmi_inlen : sizeof(p->pmi_in) - 1] =
                '\0';
            ad_pmi_bad(d, p, p->pmi_in);
            close(p->pmi_fd);
            p->pmi_fd = -1;
            return;
        }
        if (p->pmi_inlen < ASSIST_WIRE2_HDR + (size_t)len)
            return;
        char msg[ASSIST_WIRE_LINE_MAX];
        memcpy(msg, p->pmi_in + ASSIST_WIRE2_HDR, (size_t)len);
        msg[len] = '\0';
        p->pmi_inlen -= ASSIST_WIRE2_HDR + (size_t)len;
        memmove(p->pmi_in, p->pmi_in + ASSIST_WIRE2_HDR + len, p->pmi_inlen);
        ad_pmi2_msg(d, job, p, msg);
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
        if (p->pmi_version == 2) {
            ad_pmi2_input(d, job, p);
            return 1;
        }
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
