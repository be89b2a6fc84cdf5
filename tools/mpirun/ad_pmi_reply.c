/* ad_pmi_reply: what the daemon sends a rank over its PMI channel (PMI-1 lines, PMI-2
 * framed messages): the answers of fences, name requests and spawns, which come from the
 * PMI server (ad_pmi.c), the tree (ad_fence.c) or the spawn path (ad_spawn.c). */
#include "ad_pmi_reply.h"
#include "assist/ns_wire.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Replies are small; a rank that does not read them is broken. */
void ad_pmi_send(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p, const char *msg)
{
    size_t len = strlen(msg);

    while (len > 0 && p->pmi_fd >= 0) {
        ssize_t n = send(p->pmi_fd, msg, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            /* EPIPE/ECONNRESET: the rank is gone; its exit is reported. */
            if (errno == EAGAIN) {
                char m[160], label[64];
                snprintf(m, sizeof(m), "mpirun: %s (pid %ld%s%s) does not read its PMI replies",
                         ad_proc_label(job, p, label, sizeof(label)), (long)p->pid,
                         d->host ? " on " : "", d->host ? d->host : "");
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
void ad_pmi_send2(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p, const char *body)
{
    char hdr[32];

    snprintf(hdr, sizeof(hdr), "%-6zu", strlen(body) % 1000000);
    ad_pmi_send(d, job, p, hdr);
    ad_pmi_send(d, job, p, body);
}

void ad_pmi_fence_done(struct ad_daemon *d, struct ad_job *job)
{
    job->barrier_count = 0;
    for (int r = 0; r < job->nprocs; r++) {
        job->procs[r].in_barrier = 0;
        if (job->procs[r].pmi_version == 2)
            ad_pmi_send2(d, job, &job->procs[r], "cmd=kvs-fence-response;rc=0;");
        else
            ad_pmi_send(d, job, &job->procs[r], "cmd=barrier_out\n");
    }
}

/* The reason of a failed name request, as Hydra words the first two. */
static const char *ad_name_msg(int rc)
{
    switch (rc) {
    case 0:
        return "success";
    case -EEXIST:
        return "key_already_present";
    case -ENOENT:
        return "service_not_found";
    case -EINVAL:
        return "bad_request";
    case -ENOSPC:
        return "name_table_full";
    case -EHOSTUNREACH:
        return "name_server_failed";
    default:
        return "internal_error";
    }
}

void ad_pmi_name_reply(struct ad_daemon *d, struct ad_proc *p, int op, int rc, const char *port)
{
    struct ad_job *job = d->jobs[0];
    char reply[ASSIST_NS_PORT_MAX * 2 + 256];
    const char *m = ad_name_msg(rc);
    /* "not published" and "published already" are rc=1, as Hydra says them */
    int prc = rc == 0 ? 0 : rc == -EEXIST || rc == -ENOENT ? 1 : -1;

    for (int j = 0; j < d->njobs; j++)
        if (p >= d->jobs[j]->procs && p < d->jobs[j]->procs + d->jobs[j]->nprocs)
            job = d->jobs[j];
    if (p->pmi_version == 2) {
        const char *cmd = op == AD_NAME_PUBLISH     ? "name-publish-response"
                          : op == AD_NAME_UNPUBLISH ? "name-unpublish-response"
                                                    : "name-lookup-response";
        if (op == AD_NAME_LOOKUP && rc == 0)
            snprintf(reply, sizeof(reply), "cmd=%s;rc=0;port=%s;value=%s;found=TRUE;", cmd, port,
                     port);
        else if (op == AD_NAME_LOOKUP)
            snprintf(reply, sizeof(reply), "cmd=%s;rc=%d;found=FALSE;errmsg=%s;", cmd, prc, m);
        else if (rc == 0)
            snprintf(reply, sizeof(reply), "cmd=%s;rc=0;", cmd);
        else
            snprintf(reply, sizeof(reply), "cmd=%s;rc=%d;errmsg=%s;", cmd, prc, m);
        ad_pmi_send2(d, job, p, reply);
        return;
    }
    if (op == AD_NAME_LOOKUP && rc == 0)
        snprintf(reply, sizeof(reply), "cmd=lookup_result rc=0 port=%s msg=success\n", port);
    else
        snprintf(reply, sizeof(reply), "cmd=%s rc=%d msg=%s\n",
                 op == AD_NAME_PUBLISH     ? "publish_result"
                 : op == AD_NAME_UNPUBLISH ? "unpublish_result"
                                           : "lookup_result",
                 prc, m);
    ad_pmi_send(d, job, p, reply);
}

void ad_pmi_spawn_reply(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p,
                        struct ad_spawn_result *res)
{
    char reply[sizeof(res->msg) + 256];
    int v2 = p->pmi_version == 2;

    for (char *c = res->msg; *c != '\0'; c++) /* one line; no ';' for PMI-2 */
        if (*c == '\n' || *c == '\r' || (v2 && *c == ';'))
            *c = v2 && *c == ';' ? ',' : ' ';
    if (v2 && res->rc == 0)
        snprintf(reply, sizeof(reply), "cmd=spawn-response;rc=0;jobid=%s;nerrs=0;", res->jobid);
    else if (v2)
        snprintf(reply, sizeof(reply), "cmd=spawn-response;rc=-1;errno=%d;errcmd=%d;errmsg=%s;",
                 -res->rc, res->errcmd, res->msg);
    else if (res->rc == 0)
        snprintf(reply, sizeof(reply), "cmd=spawn_result rc=0 jobid=%s\n", res->jobid);
    else /* msg last: it runs to the end of the line */
        snprintf(reply, sizeof(reply), "cmd=spawn_result rc=-1 errno=%d errcmd=%d msg=%s\n",
                 -res->rc, res->errcmd, res->msg);
    if (v2)
        ad_pmi_send2(d, job, p, reply);
    else
        ad_pmi_send(d, job, p, reply);
}
