/* ad: PMI server, one connection per rank (see docs/launcher.md): PMI-1
 * "simple" lines, and PMI-2 messages for a rank whose init asks for
 * version 2 (the wire format is in src/assist/pmi_wire.h). Besides the
 * key/value exchange it takes spawn requests (PMI-1 "mcmd=spawn" blocks,
 * PMI-2 "cmd=spawn"), handed to the spawn path (ad_spawn.h), and the name
 * service's publish/unpublish/lookup (ad_name_do, or up the tree to mpirun:
 * ad_fence.h). Its answers are written by ad_pmi_reply.c. */
#include "ad_pmi.h"
#include "ad.h"
#include "ad_pmi_reply.h"
#include "ad_link.h"
#include "ad_fence.h"
#include "ad_spawn.h"
#include "assist/ns_wire.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define AD_PMI2_MSG_MAX (256 * 1024) /* longest PMI-2 message (a spawn's) */

static void ad_pmi_bad(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p, const char *line)
{
    char m[512], label[64];

    snprintf(m, sizeof(m), "mpirun: %s (pid %ld%s%s) sent a bad PMI command: '%.300s'",
             ad_proc_label(job, p, label, sizeof(label)), (long)p->pid, d->host ? " on " : "",
             d->host ? d->host : "", line);
    ad_daemon_end(d, 1, m);
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

static void ad_pmi_abort(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p,
                         const char *line)
{
    char m[ASSIST_WIRE_LINE_MAX + 128], text[ASSIST_WIRE_LINE_MAX], label[64];
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
    n = snprintf(m, sizeof(m), "mpirun: %s (pid %ld%s%s) aborted the job with exit code %ld",
                 ad_proc_label(job, p, label, sizeof(label)), (long)p->pid, d->host ? " on " : "",
                 d->host ? d->host : "", code);
    if (msg != NULL && msg[10] != '\0' && n > 0 && (size_t)n < sizeof(m))
        snprintf(m + n, sizeof(m) - (size_t)n, ": %.1000s", msg + 10);
    /* A singleton says it itself, at once (nothing waits for this daemon's last
     * line), and exits with its code: no signal for it */
    if (p->adopted)
        ad_adopted_done(d, job, p);
    ad_daemon_end(d, (int)(code & 0xff), p->adopted ? "" : m);
}

static int ad_pmi_universe(const struct ad_daemon *d, const struct ad_job *job)
{
    return d->universe > 0 ? d->universe : job->size;
}

/* ---- name service --------------------------------------------------------------- */

/* publish_name / unpublish_name / lookup_name (PMI-1), name-publish /
 * name-unpublish / name-lookup (PMI-2). */
static void ad_pmi_name(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p, int op,
                        const char *msg)
{
    char service[ASSIST_NS_SERVICE_MAX + 1] = "", port[ASSIST_NS_PORT_MAX + 1] = "";
    char found[ASSIST_NS_PORT_MAX + 1] = "";
    int v2 = p->pmi_version == 2, rc;

    rc = v2 ? assist_wire2_get(msg, "name", service, sizeof(service))
            : assist_wire_get(msg, "service", service, sizeof(service));
    if (rc == 0 && op == AD_NAME_PUBLISH)
        rc = v2 ? assist_wire2_get(msg, "port", port, sizeof(port))
                : assist_wire_get(msg, "port", port, sizeof(port));
    if (rc != 0 || !assist_ns_field_ok(service, ASSIST_NS_SERVICE_MAX) ||
        (op == AD_NAME_PUBLISH && !assist_ns_field_ok(port, ASSIST_NS_PORT_MAX))) {
        ad_pmi_name_reply(d, p, op, -EINVAL, "");
        return;
    }
    if (d->tree != NULL && !ad_tree_is_root(d)) {
        ad_tree_name_request(d, job->num, (int)(p - job->procs), op, service, port);
        return;
    }
    rc = ad_name_do(d, op, service, port, found, sizeof(found));
    ad_pmi_name_reply(d, p, op, rc, found);
}

/* ---- PMI-1 ------------------------------------------------------------------------ */

static int ad_pmi_store(struct ad_daemon *d, struct ad_job *job, const char *key,
                        const char *value);

static void ad_pmi_line(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p, char *line)
{
    char reply[ASSIST_WIRE_LINE_MAX + 64];
    char key[ASSIST_KEY_MAX + 1], value[ASSIST_VALUE_MAX + 1];
    long v;

    if ((p->spawn != NULL && p->spawn->in_block) || strcmp(line, "mcmd=spawn") == 0) {
        ad_spawn_line(d, job, p, line);
    } else if (p->spawn != NULL || strncmp(line, "mcmd=", 5) == 0) {
        ad_pmi_bad(d, job, p, line); /* only spawn blocks until the last one */
    } else if (assist_wire_is(line, "init")) {
        if (assist_wire_get_int(line, "pmi_version", &v) == 0 && v == 2 && p->pmi_version == 0) {
            p->pmi_version = 2; /* PMI-2 messages from now on */
            ad_pmi_send(d, job, p, "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n");
            return;
        }
        if (assist_wire_get_int(line, "pmi_version", &v) != 0 || v != 1) {
            ad_pmi_send(d, job, p, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1\n");
            return;
        }
        p->pmi_version = 1;
        p->pmi_inited = 1;
        ad_job_noinit_arm(job);
        ad_pmi_send(d, job, p, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n");
    } else if (assist_wire_is(line, "get_maxes")) {
        snprintf(reply, sizeof(reply),
                 "cmd=maxes rc=0 kvsname_max=%d keylen_max=%d vallen_max=%d\n",
                 ASSIST_WIRE_KVSNAME_MAX, ASSIST_KEY_MAX, ASSIST_VALUE_MAX);
        ad_pmi_send(d, job, p, reply);
    } else if (assist_wire_is(line, "get_appnum")) {
        snprintf(reply, sizeof(reply), "cmd=appnum rc=0 appnum=%d\n", p->appnum);
        ad_pmi_send(d, job, p, reply);
    } else if (assist_wire_is(line, "get_my_kvsname")) {
        snprintf(reply, sizeof(reply), "cmd=my_kvsname rc=0 kvsname=%s\n", job->kvsname);
        ad_pmi_send(d, job, p, reply);
    } else if (assist_wire_is(line, "get_universe_size")) {
        snprintf(reply, sizeof(reply), "cmd=universe_size rc=0 size=%d\n", ad_pmi_universe(d, job));
        ad_pmi_send(d, job, p, reply);
    } else if (assist_wire_is(line, "put")) {
        int vrc = assist_wire_get(line, "value", value, sizeof(value));
        if (assist_wire_get(line, "key", key, sizeof(key)) != 0 || vrc == -ENOSPC) {
            ad_pmi_send(d, job, p, "cmd=put_result rc=-1 msg=bad_key_or_value\n");
            return;
        }
        if (vrc != 0) /* "value=" absent: empty value */
            value[0] = '\0';
        if (ad_pmi_store(d, job, key, value) != 0)
            ad_pmi_send(d, job, p, "cmd=put_result rc=-1 msg=no_memory\n");
        else
            ad_pmi_send(d, job, p, "cmd=put_result rc=0 msg=success\n");
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
        ad_pmi_send(d, job, p, reply);
    } else if (assist_wire_is(line, "barrier_in")) {
        ad_pmi_barrier_in(d, job, p);
    } else if (assist_wire_is(line, "publish_name")) {
        ad_pmi_name(d, job, p, AD_NAME_PUBLISH, line);
    } else if (assist_wire_is(line, "unpublish_name")) {
        ad_pmi_name(d, job, p, AD_NAME_UNPUBLISH, line);
    } else if (assist_wire_is(line, "lookup_name")) {
        ad_pmi_name(d, job, p, AD_NAME_LOOKUP, line);
    } else if (assist_wire_is(line, "finalize")) {
        p->pmi_finalized = 1;
        ad_pmi_send(d, job, p, "cmd=finalize_ack rc=0\n");
    } else if (assist_wire_is(line, "abort")) {
        ad_pmi_abort(d, job, p, line);
    } else {
        ad_pmi_bad(d, job, p, line);
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

/* ---- PMI-2 ------------------------------------------------------------------------ */

/* One PMI-2 message (NUL-terminated, without its length). */
static void ad_pmi2_msg(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p, char *msg)
{
    char reply[ASSIST_WIRE_LINE_MAX + 128];
    char key[ASSIST_KEY_MAX + 1], value[ASSIST_VALUE_MAX + 1];
    const char *val;

    if (assist_wire2_is(msg, "fullinit")) {
        int n;
        p->pmi_inited = 1;
        ad_job_noinit_arm(job);
        n = snprintf(reply, sizeof(reply),
                     "cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=%d;size=%d;"
                     "appnum=%d;debugged=FALSE;pmiverbose=FALSE;",
                     p->rank, job->size, p->appnum);
        if (job->spawner[0] != '\0' && n > 0 && (size_t)n < sizeof(reply))
            snprintf(reply + n, sizeof(reply) - (size_t)n, "spawner-jobid=%s;", job->spawner);
        ad_pmi_send2(d, job, p, reply);
    } else if (assist_wire2_is(msg, "job-getid")) {
        snprintf(reply, sizeof(reply), "cmd=job-getid-response;rc=0;jobid=%s;", job->kvsname);
        ad_pmi_send2(d, job, p, reply);
    } else if (assist_wire2_is(msg, "kvs-put")) {
        int vrc = assist_wire2_get(msg, "value", value, sizeof(value));
        if (assist_wire2_get(msg, "key", key, sizeof(key)) != 0 || vrc == -ENOSPC)
            ad_pmi_send2(d, job, p, "cmd=kvs-put-response;rc=-1;errmsg=bad key or value;");
        else if (ad_pmi_store(d, job, key, vrc == 0 ? value : "") != 0)
            ad_pmi_send2(d, job, p, "cmd=kvs-put-response;rc=-1;errmsg=no memory;");
        else
            ad_pmi_send2(d, job, p, "cmd=kvs-put-response;rc=0;");
    } else if (assist_wire2_is(msg, "kvs-get") || assist_wire2_is(msg, "info-getjobattr")) {
        int job_attr = assist_wire2_is(msg, "info-getjobattr");
        val = NULL;
        if (assist_wire2_get(msg, "key", key, sizeof(key)) == 0) {
            val = ad_kvs_get(&job->kvs, key);
            if (val == NULL && strcmp(key, "PMI_process_mapping") == 0)
                val = job->mapping;
            if (val == NULL && strcmp(key, "universeSize") == 0) {
                snprintf(value, sizeof(value), "%d", ad_pmi_universe(d, job));
                val = value;
            }
        }
        snprintf(reply, sizeof(reply), "cmd=%s;rc=0;found=%s;%s%s%s",
                 job_attr ? "info-getjobattr-response" : "kvs-get-response",
                 val != NULL ? "TRUE" : "FALSE", val != NULL ? "value=" : "",
                 val != NULL ? val : "", val != NULL ? ";" : "");
        ad_pmi_send2(d, job, p, reply);
    } else if (assist_wire2_is(msg, "info-getnodeattr")) {
        ad_pmi_send2(d, job, p, "cmd=info-getnodeattr-response;rc=0;found=FALSE;");
    } else if (assist_wire2_is(msg, "info-putnodeattr")) {
        ad_pmi_send2(d, job, p, "cmd=info-putnodeattr-response;rc=0;");
    } else if (assist_wire2_is(msg, "kvs-fence")) {
        ad_pmi_barrier_in(d, job, p);
    } else if (assist_wire2_is(msg, "spawn")) {
        ad_spawn_msg2(d, job, p, msg);
    } else if (assist_wire2_is(msg, "name-publish")) {
        ad_pmi_name(d, job, p, AD_NAME_PUBLISH, msg);
    } else if (assist_wire2_is(msg, "name-unpublish")) {
        ad_pmi_name(d, job, p, AD_NAME_UNPUBLISH, msg);
    } else if (assist_wire2_is(msg, "name-lookup")) {
        ad_pmi_name(d, job, p, AD_NAME_LOOKUP, msg);
    } else if (assist_wire2_is(msg, "finalize")) {
        p->pmi_finalized = 1;
        ad_pmi_send2(d, job, p, "cmd=finalize-response;rc=0;");
    } else if (assist_wire2_is(msg, "abort")) {
        ad_pmi_abort(d, job, p, msg);
    } else {
        ad_pmi_bad(d, job, p, msg);
    }
}

/* Handles every complete PMI-2 message in the input buffer. */
static void ad_pmi2_input(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p)
{
    while (p->pmi_fd >= 0 && p->pmi_inlen >= ASSIST_WIRE2_HDR) {
        long len = assist_wire2_len(p->pmi_in);
        char small[ASSIST_WIRE_LINE_MAX], *msg;
        if (len < 0 || len > AD_PMI2_MSG_MAX) {
            size_t n = p->pmi_inlen < ASSIST_WIRE_LINE_MAX ? p->pmi_inlen : ASSIST_WIRE_LINE_MAX;
            memcpy(small, p->pmi_in, n);
            small[n < sizeof(small) ? n : sizeof(small) - 1] = '\0';
            ad_pmi_bad(d, job, p, small);
            close(p->pmi_fd);
            p->pmi_fd = -1;
            return;
        }
        if ((size_t)len + ASSIST_WIRE2_HDR > p->pmi_incap) { /* a long one: make room */
            char *b = realloc(p->pmi_in, (size_t)len + ASSIST_WIRE2_HDR);
            if (b == NULL) {
                ad_daemon_end(d, 1, "mpirun: out of memory");
                return;
            }
            p->pmi_in = b;
            p->pmi_incap = (size_t)len + ASSIST_WIRE2_HDR;
        }
        if (p->pmi_inlen < ASSIST_WIRE2_HDR + (size_t)len)
            return;
        msg = (size_t)len < sizeof(small) ? small : malloc((size_t)len + 1);
        if (msg == NULL) {
            ad_daemon_end(d, 1, "mpirun: out of memory");
            return;
        }
        memcpy(msg, p->pmi_in + ASSIST_WIRE2_HDR, (size_t)len);
        msg[len] = '\0';
        p->pmi_inlen -= ASSIST_WIRE2_HDR + (size_t)len;
        memmove(p->pmi_in, p->pmi_in + ASSIST_WIRE2_HDR + len, p->pmi_inlen);
        ad_pmi2_msg(d, job, p, msg);
        if (msg != small)
            free(msg);
    }
}

int ad_pmi_input(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p)
{
    ssize_t n;

    if (p->pmi_fd < 0)
        return 0;
    if (p->pmi_in == NULL) {
        p->pmi_in = malloc(ASSIST_WIRE_LINE_MAX);
        if (p->pmi_in == NULL) {
            ad_daemon_end(d, 1, "mpirun: out of memory");
            return 0;
        }
        p->pmi_incap = ASSIST_WIRE_LINE_MAX;
    }
    n = read(p->pmi_fd, p->pmi_in + p->pmi_inlen, p->pmi_incap - p->pmi_inlen);
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
    if (p->pmi_inlen == p->pmi_incap) {
        p->pmi_in[p->pmi_incap - 1] = '\0';
        ad_pmi_bad(d, job, p, p->pmi_in);
        if (p->pmi_fd >= 0)
            close(p->pmi_fd);
        p->pmi_fd = -1;
        return 0;
    }
    return 1;
}

static int ad_pmi_on_fd(struct ad_daemon *d, const struct ad_fd_ref *ref, short revents)
{
    (void)revents;
    return ad_pmi_input(d, ref->job, ref->proc);
}

void ad_pmi_attach(void) { ad_reactor_handle(AD_FD_PMI, ad_pmi_on_fd); }
