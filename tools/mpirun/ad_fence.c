/* ad_fence: fences and names across hosts: a job's fence counted over the subtrees that run
 * it, the news of a process that exited without MPI_Init, and the name requests answered at
 * mpirun and routed back. */
#include "ad_fence.h"
#include "ad_link.h"
#include "ad_pmi_reply.h"
#include "assist/ns_wire.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* The job's fence is complete below this node: go up, or (root) release
 * everyone. A daemon without processes of the job is in as soon as its
 * children are. */
void ad_fence_check(struct ad_tree *t, struct ad_job *job)
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

void ad_fence_out(struct ad_daemon *d, struct ad_tree *t, struct ad_job *job, const char *p,
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

void ad_noinit_root(struct ad_daemon *d, struct ad_tree *t, struct ad_job *job, const char *who)
{
    double grace = d->opts != NULL ? d->opts->noinit_grace : MPIRUN_NOINIT_GRACE;

    ad_noinit_down(t, job, who, (long)(grace * 1000.0 + 0.5));
}

void ad_tree_noinit(struct ad_daemon *d, struct ad_job *job, const char *who)
{
    struct ad_tree *t = ad_t(d);

    if (t->root)
        ad_noinit_root(d, t, job, who);
    else
        ad_link_send(&t->parent, AD_M_NOINIT_UP, job->num, who, strlen(who) + 1);
}

void ad_noinit_in(struct ad_tree *t, struct ad_job *job, const char *p, size_t len)
{
    struct ad_cursor c = {p, p + len, 0};
    const char *who = ad_take(&c);
    long grace_ms = ad_take_int(&c, 0, 86400L * 1000);

    if (!c.bad)
        ad_noinit_down(t, job, who, grace_ms);
}

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
void ad_name_req(struct ad_daemon *d, struct ad_tree *t, const char *p, size_t len)
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

/* A NAME_REP from above: for one of this node's ranks, or further down. */
void ad_name_rep(struct ad_daemon *d, struct ad_tree *t, const char *p, size_t len)
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
