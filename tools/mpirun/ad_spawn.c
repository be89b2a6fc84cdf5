/* ad_spawn: the spawn path in one place: a rank's request goes up to mpirun (encoded), is
 * placed there (ad_place.h), sent down to the hosts that run it, checked on each
 * (ad_spawn_local), started on each once all checked (ad_spawn_go; ad_spawn_run on one
 * host), and answered once every subtree answered. */
#include "ad_spawn.h"
#include "ad_link.h"
#include "ad_pmi_reply.h"
#include "ad_place.h"
#include "ad_launch.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
        cmd->ninfok = cmd->ninfov = ad_take_pairs(c, cmd->ninfo, &cmd->info_keys, &cmd->info_vals);
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
void ad_spawn_rep(struct ad_daemon *d, struct ad_tree *t, const char *p, size_t len)
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

/* Root: a rank's spawn. Checked and placed here, named (job number, id),
 * then started by the daemons of its hosts (SPAWN_JOB); the answer goes
 * back once they all answered (ad_spawn_ack). */
void ad_root_spawn(struct ad_daemon *d, struct ad_tree *t, const char *p, size_t len)
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

/* The subtree's part of spawned job is answered, in each of the two phases (checked,
 * then started): up, or at the root, after the first phase the start everywhere
 * (ad_spawn_go), after the second the answer to the spawner. A failure anywhere ends the
 * job everywhere; one found by the checks ends it before any of its processes ran (a
 * spawn across hosts is all or nothing, as on one host). */
static void ad_spawn_start(struct ad_daemon *d, struct ad_job *nj, struct ad_spawn_result *res);

static void ad_spawn_check_acks(struct ad_daemon *d, struct ad_tree *t, struct ad_job *job)
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
        ad_spawn_kill(d, t, job); /* here and below, as every daemon does on SPAWN_KILL */
    } else if (!jt->started) {
        ad_spawn_go(d, t, job);
        return;
    } else {
        snprintf(jt->res.jobid, sizeof(jt->res.jobid), "%s", job->kvsname);
    }
    ad_spawn_answer_to(t, jt->origin, jt->origin_job, jt->origin_tag, &jt->res);
}

void ad_spawn_go(struct ad_daemon *d, struct ad_tree *t, struct ad_job *job)
{
    if (job == NULL || job->tree == NULL || job->tree->started)
        return;
    struct ad_jtree *jt = job->tree;
    jt->started = 1;
    jt->acks = 0;
    jt->acked = 0;
    t->done_sent = 0; /* its processes run here or below from now */
    ad_job_send_down(t, job, AD_M_SPAWN_GO, NULL, 0);
    if (jt->res.rc == 0 && !job->discard)
        ad_spawn_start(d, job, &jt->res);
    ad_spawn_check_acks(d, t, job);
}

/* SPAWN_JOB (and the root's own spawn): this daemon's part of a spawned
 * job: "num\0jobid\0spawner\0origin\0ojob\0tag\0size\0" (host, node) x
 * size, then the request. */
void ad_spawn_job_in(struct ad_daemon *d, struct ad_tree *t, const char *p, size_t len)
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
    ad_spawn_check_acks(d, t, job);
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
void ad_spawn_ack(struct ad_daemon *d, struct ad_tree *t, struct ad_link *l, struct ad_job *job,
                  const char *p, size_t len)
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
    ad_spawn_check_acks(d, t, job);
}

/* SPAWN_KILL: the job failed to start somewhere; its processes here go (not
 * judged: the spawner is told). */
void ad_spawn_kill(struct ad_daemon *d, struct ad_tree *t, struct ad_job *job)
{
    (void)d;
    if (job == NULL || job->tree == NULL)
        return;
    job->discard = 1;
    job->tree->started = 1; /* nothing more to start: it may end */
    for (int r = 0; r < job->nprocs; r++)
        if (job->procs[r].pid > 0 && job->procs[r].running)
            kill(-job->procs[r].pid, SIGKILL);
    ad_job_send_down(t, job, AD_M_SPAWN_KILL, NULL, 0);
}

/* Each round: spawned jobs whose processes here and below all ended are
 * reported up (JOB_DONE) and may then be freed here. */
void ad_jobs_done_check(struct ad_daemon *d, struct ad_tree *t)
{
    for (int j = 0; j < d->njobs; j++) {
        struct ad_job *job = d->jobs[j];
        struct ad_jtree *jt = job->tree;
        if (job->num == 0 || jt == NULL || jt->done_sent || !jt->started || !jt->acked ||
            job->nrunning > 0 || jt->dones < jt->kids_with)
            continue;
        jt->done_sent = 1;
        if (!t->root)
            ad_link_send(&t->parent, AD_M_JOB_DONE, job->num, NULL, 0);
    }
}

/* ---- a rank's request, as the PMI server reads it (PMI-1 blocks, PMI-2 messages) ---- */

static void ad_spawn_err(struct ad_spawn_req *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Notes the first problem of the request (answered once it is complete). */
static void ad_spawn_err(struct ad_spawn_req *r, const char *fmt, ...)
{
    va_list ap;

    if (r->err[0] != '\0')
        return;
    va_start(ap, fmt);
    vsnprintf(r->err, sizeof(r->err), fmt, ap);
    va_end(ap);
}

/* A decimal number 0..max, or -1. */
static long ad_spawn_num(const char *s, long max)
{
    char *end;
    long v;

    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    return errno != 0 || *end != '\0' || v > max ? -1 : v;
}

/* Sets (*v)[idx] = copy of val, growing the array of *n slots. */
static int ad_spawn_slot(struct ad_spawn_req *r, char ***v, int *n, const char *idxs,
                         const char *val)
{
    long idx = ad_spawn_num(idxs, AD_SPAWN_MAX_ARGS - 1);
    char *copy;

    if (idx < 0) {
        ad_spawn_err(r, "spawn: bad index '%.40s'", idxs);
        return -1;
    }
    if (idx >= *n) {
        int cap = *n * 2 > idx + 1 ? *n * 2 : (int)idx + 1;
        char **nv = realloc(*v, (size_t)cap * sizeof(char *));
        if (nv == NULL)
            goto oom;
        memset(nv + *n, 0, (size_t)(cap - *n) * sizeof(char *));
        *v = nv;
        *n = cap;
    }
    if ((copy = strdup(val)) == NULL)
        goto oom;
    free((*v)[idx]);
    (*v)[idx] = copy;
    return 0;
oom:
    ad_spawn_err(r, "spawn: out of memory");
    return -1;
}

/* Starts a new command (a PMI-1 block, a PMI-2 subcmd). */
static struct ad_spawn_cmd *ad_spawn_new_cmd(struct ad_spawn_req *r)
{
    struct ad_spawn_cmd *c;

    if (r->ncmds >= AD_SPAWN_MAX_CMDS) {
        ad_spawn_err(r, "spawn: more than %d commands", AD_SPAWN_MAX_CMDS);
        return NULL;
    }
    c = realloc(r->cmds, (size_t)(r->ncmds + 1) * sizeof(*c));
    if (c == NULL) {
        ad_spawn_err(r, "spawn: out of memory");
        return NULL;
    }
    r->cmds = c;
    c = &r->cmds[r->ncmds];
    *c = (struct ad_spawn_cmd){.maxprocs = -1, .argc = -1, .ninfo = -1};
    return c;
}

/* One key=value of a spawn request; cur is the command being received
 * (NULL before the first PMI-2 subcmd). Unknown keys are ignored. */
static void ad_spawn_token(struct ad_spawn_req *r, struct ad_spawn_cmd *cur, int v2,
                           const char *key, const char *val)
{
    static const char *const k1[] = {"totspawns", "preput_num", "preput_key_", "preput_val_",
                                     "execname",  "nprocs",     "argcnt",      "arg",
                                     "info_num",  "info_key_",  "info_val_"};
    static const char *const k2[] = {"ncmds",        "preputcount", "ppkey",  "ppval",
                                     "subcmd",       "maxprocs",    "argc",   "argv",
                                     "infokeycount", "infokey",     "infoval"};
    const char *const *k = v2 ? k2 : k1;
    int which = -1;
    size_t klen = 0;
    long v;

    if (r->err[0] != '\0')
        return; /* answered as failed anyway */
    for (int i = 0; i < 11 && which < 0; i++) {
        size_t n = strlen(k[i]);
        int prefix = i == 2 || i == 3 || i == 7 || i == 9 || i == 10; /* name + index */
        if (prefix ? strncmp(key, k[i], n) == 0 && key[n] >= '0' && key[n] <= '9'
                   : strcmp(key, k[i]) == 0) {
            which = i;
            klen = n;
        }
    }
    if (which < 0 ||
        which == 4) /* unknown (thrid, spawnssofar...), or subcmd: done by the caller */
        return;
    if (which >= 5 && cur == NULL) {
        ad_spawn_err(r, "spawn: '%.40s' before the first command", key);
        return;
    }
    switch (which) {
    case 0: /* totspawns / ncmds */
        v = ad_spawn_num(val, AD_SPAWN_MAX_CMDS);
        if (v < 1 || (r->total >= 0 && v != r->total))
            ad_spawn_err(r, "spawn: bad number of commands '%.40s'", val);
        r->total = (int)v;
        break;
    case 1:
        v = ad_spawn_num(val, AD_SPAWN_MAX_ARGS);
        if (v < 0)
            ad_spawn_err(r, "spawn: bad number of preput pairs '%.40s'", val);
        r->npreput = (int)v;
        break;
    case 2:
        ad_spawn_slot(r, &r->pp_keys, &r->nppk, key + klen, val);
        break;
    case 3:
        ad_spawn_slot(r, &r->pp_vals, &r->nppv, key + klen, val);
        break;
    case 5:
        v = ad_spawn_num(val, AD_SPAWN_MAX_PROCS);
        if (v < 1)
            ad_spawn_err(r, "spawn: bad number of processes '%.40s'", val);
        cur->maxprocs = (int)v;
        break;
    case 6:
        v = ad_spawn_num(val, AD_SPAWN_MAX_ARGS);
        if (v < 0)
            ad_spawn_err(r, "spawn: bad number of arguments '%.40s'", val);
        cur->argc = (int)v;
        break;
    case 7: { /* PMI-1 numbers arguments from 1, PMI-2 from 0 */
        char idx[24];
        v = ad_spawn_num(key + klen, AD_SPAWN_MAX_ARGS);
        if (!v2 && v < 1) {
            ad_spawn_err(r, "spawn: bad argument key '%.40s'", key);
            break;
        }
        snprintf(idx, sizeof(idx), "%ld", v2 ? v : v - 1);
        ad_spawn_slot(r, &cur->argv, &cur->nargv, v < 0 ? key + klen : idx, val);
        break;
    }
    case 8:
        v = ad_spawn_num(val, AD_SPAWN_MAX_ARGS);
        if (v < 0)
            ad_spawn_err(r, "spawn: bad number of info keys '%.40s'", val);
        cur->ninfo = (int)v;
        break;
    case 9:
        ad_spawn_slot(r, &cur->info_keys, &cur->ninfok, key + klen, val);
        break;
    case 10:
        ad_spawn_slot(r, &cur->info_vals, &cur->ninfov, key + klen, val);
        break;
    }
}

/* 1 when v[0..count) are all given and nothing beyond. */
static int ad_spawn_slots_ok(char **v, int n, int count)
{
    for (int i = 0; i < n; i++)
        if ((i < count) != (v[i] != NULL))
            return 0;
    return n >= count;
}

/* The request is complete: is it whole and sound? (err set if not) */
static void ad_spawn_check(struct ad_spawn_req *r)
{
    long total = 0;

    if (r->err[0] != '\0')
        return;
    if (r->total < 1 || r->ncmds != r->total) {
        ad_spawn_err(r, "spawn: %d commands received, %d announced", r->ncmds, r->total);
        return;
    }
    if (r->npreput < 0)
        r->npreput = 0;
    if (!ad_spawn_slots_ok(r->pp_keys, r->nppk, r->npreput) ||
        !ad_spawn_slots_ok(r->pp_vals, r->nppv, r->npreput)) {
        ad_spawn_err(r, "spawn: preput pairs do not match their count %d", r->npreput);
        return;
    }
    for (int k = 0; k < r->npreput; k++) {
        if (!assist_wire_key_ok(r->pp_keys[k], ASSIST_KEY_MAX) ||
            !assist_wire_value_ok(r->pp_vals[k], ASSIST_VALUE_MAX)) {
            ad_spawn_err(r, "spawn: bad preput pair '%.64s'", r->pp_keys[k]);
            return;
        }
    }
    for (int i = 0; i < r->ncmds; i++) {
        struct ad_spawn_cmd *c = &r->cmds[i];
        if (c->argc < 0)
            c->argc = 0;
        if (c->ninfo < 0)
            c->ninfo = 0;
        if (c->command == NULL || c->command[0] == '\0' || c->maxprocs < 1) {
            ad_spawn_err(r, "spawn: command %d has no program or number of processes", i);
            return;
        }
        if (!ad_spawn_slots_ok(c->argv, c->nargv, c->argc) ||
            !ad_spawn_slots_ok(c->info_keys, c->ninfok, c->ninfo) ||
            !ad_spawn_slots_ok(c->info_vals, c->ninfov, c->ninfo)) {
            ad_spawn_err(r, "spawn: arguments or info of command %d do not match their counts", i);
            return;
        }
        c->nargv = c->argc; /* the slots beyond are NULL */
        total += c->maxprocs;
    }
    if (total > AD_SPAWN_MAX_PROCS)
        ad_spawn_err(r, "spawn: %ld processes, more than %d", total, AD_SPAWN_MAX_PROCS);
}

/* Our client's extension: "key:hex=<hex>" carries a value the wire cannot
 * (a newline in a PMI-1 line, ';' in PMI-2). When key ends in ":hex" the
 * suffix is cut and the value decoded: a new string (the caller frees it),
 * or NULL after noting the problem. Otherwise returns val itself. */
static char *ad_spawn_unhex(struct ad_spawn_req *r, char *key, const char *val)
{
    size_t klen = strlen(key), n = strlen(val);
    char *out;

    if (klen < 5 || strcmp(key + klen - 4, ":hex") != 0)
        return (char *)val;
    key[klen - 4] = '\0';
    if (n % 2 != 0 || (out = malloc(n / 2 + 1)) == NULL) {
        ad_spawn_err(r, "spawn: bad hex value of '%.40s'", key);
        return NULL;
    }
    for (size_t i = 0; i < n / 2; i++) {
        int hi = val[2 * i], lo = val[2 * i + 1];
        hi = hi >= '0' && hi <= '9' ? hi - '0' : hi >= 'a' && hi <= 'f' ? hi - 'a' + 10 : -1;
        lo = lo >= '0' && lo <= '9' ? lo - '0' : lo >= 'a' && lo <= 'f' ? lo - 'a' + 10 : -1;
        if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) { /* no NUL inside a string */
            ad_spawn_err(r, "spawn: bad hex value of '%.40s'", key);
            free(out);
            return NULL;
        }
        out[i] = (char)(hi << 4 | lo);
    }
    out[n / 2] = '\0';
    return out;
}

/* A complete request: run it and answer (across hosts mpirun answers later,
 * through ad_pmi_spawn_reply). */
static void ad_spawn_answer(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p,
                            struct ad_spawn_req *r)
{
    struct ad_spawn_result res = {.rc = -EINVAL, .errcmd = -1};

    ad_spawn_check(r);
    if (r->err[0] != '\0')
        snprintf(res.msg, sizeof(res.msg), "%s", r->err);
    else if (!p->running)
        snprintf(res.msg, sizeof(res.msg), "spawn: the spawning process has ended");
    else if (d->tree != NULL && ad_tree_spawn_request(d, job, p, r, &res) == 0)
        return;
    else if (d->tree == NULL)
        ad_spawn_run(d, job, p, r, &res);
    ad_pmi_spawn_reply(d, job, p, &res);
}

/* PMI-1: a line of a "mcmd=spawn" block ("mcmd=spawn", "key=value" with the
 * value up to the end of the line, "endcmd"). The reply follows the block
 * whose spawnssofar reaches totspawns. */
void ad_spawn_line(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p, const char *line)
{
    struct ad_spawn_req *r = p->spawn;
    const char *eq = strchr(line, '=');
    char key[64], *val;
    long v;

    if (r == NULL) {
        r = p->spawn = calloc(1, sizeof(*r));
        if (r == NULL) {
            ad_daemon_end(d, 1, "mpirun: out of memory");
            return;
        }
        r->total = r->npreput = -1;
    }
    r->bytes += strlen(line) + 1;
    if (r->bytes > AD_SPAWN_MAX_BYTES)
        ad_spawn_err(r, "spawn: request larger than %d bytes", AD_SPAWN_MAX_BYTES);
    if (strcmp(line, "mcmd=spawn") == 0) {
        if (r->in_block)
            ad_spawn_err(r, "spawn: 'mcmd=spawn' before 'endcmd'");
        else if (ad_spawn_new_cmd(r) != NULL)
            r->in_block = 1;
        r->sofar = 0;
        return;
    }
    if (strcmp(line, "endcmd") == 0) {
        if (r->in_block) {
            r->in_block = 0;
            r->ncmds++;
        }
        if (r->sofar > 0 && r->total > 0 && r->sofar < r->total)
            return; /* more blocks to come (one answer, after the last) */
        p->spawn = NULL;
        ad_spawn_answer(d, job, p, r);
        ad_spawn_req_free(r);
        return;
    }
    if (eq == NULL || eq == line || (size_t)(eq - line) >= sizeof(key)) {
        ad_spawn_err(r, "spawn: bad line '%.60s'", line);
        return;
    }
    memcpy(key, line, (size_t)(eq - line));
    key[eq - line] = '\0';
    /* counted even in a broken request: they tell when to answer */
    if (strcmp(key, "spawnssofar") == 0) {
        v = ad_spawn_num(eq + 1, AD_SPAWN_MAX_CMDS);
        r->sofar = v > 0 ? (int)v : 0;
        return;
    }
    if (strcmp(key, "totspawns") == 0) {
        v = ad_spawn_num(eq + 1, AD_SPAWN_MAX_CMDS);
        if (v < 1 || (r->total > 0 && v != r->total))
            ad_spawn_err(r, "spawn: bad number of commands '%.40s'", eq + 1);
        else
            r->total = (int)v;
        return;
    }
    if (!r->in_block) {
        ad_spawn_err(r, "spawn: '%.40s' outside a block", key);
        return;
    }
    if ((val = ad_spawn_unhex(r, key, eq + 1)) == NULL)
        return;
    if (strcmp(key, "execname") == 0) {
        struct ad_spawn_cmd *c = &r->cmds[r->ncmds];
        free(c->command);
        if ((c->command = strdup(val)) == NULL)
            ad_spawn_err(r, "spawn: out of memory");
    } else {
        ad_spawn_token(r, &r->cmds[r->ncmds], 0, key, val);
    }
    if (val != eq + 1)
        free(val);
}

/* PMI-2: "cmd=spawn;ncmds=..;preputcount=..;ppkey0=..;ppval0=..;subcmd=..;
 * maxprocs=..;argc=..;argv0=..;infokeycount=..;infokey0=..;infoval0=..;". */
void ad_spawn_msg2(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p, const char *msg)
{
    struct ad_spawn_req *r = calloc(1, sizeof(*r));
    struct ad_spawn_cmd *cur = NULL;
    char key[64];

    if (r == NULL) {
        ad_daemon_end(d, 1, "mpirun: out of memory");
        return;
    }
    r->total = r->npreput = -1;
    for (const char *s = msg; *s != '\0';) {
        size_t len = strcspn(s, ";");
        const char *eq = memchr(s, '=', len);
        char *val, *dec;
        if (eq == NULL || (size_t)(eq - s) >= sizeof(key)) {
            if (len > 0)
                ad_spawn_err(r, "spawn: bad token '%.*s'", (int)(len < 40 ? len : 40), s);
        } else if ((val = strndup(eq + 1, len - (size_t)(eq + 1 - s))) == NULL) {
            ad_spawn_err(r, "spawn: out of memory");
        } else {
            memcpy(key, s, (size_t)(eq - s));
            key[eq - s] = '\0';
            if ((dec = ad_spawn_unhex(r, key, val)) != val) {
                free(val);
                val = dec; /* NULL after a bad one: noted, and ignored below */
            }
            if (val == NULL) {
                /* nothing to store */
            } else if (strcmp(key, "subcmd") == 0 && r->err[0] == '\0') {
                if (cur != NULL)
                    r->ncmds++;
                cur = ad_spawn_new_cmd(r);
                if (cur != NULL)
                    cur->command = val;
                else
                    free(val);
                val = NULL;
            } else if (strcmp(key, "cmd") != 0) {
                ad_spawn_token(r, cur, 1, key, val);
            }
            free(val);
        }
        s += len;
        if (*s == ';')
            s++;
    }
    if (cur != NULL)
        r->ncmds++;
    ad_spawn_answer(d, job, p, r);
    ad_spawn_req_free(r);
}

/* ---- running a spawn on this host ---------------------------------------------------- */

/* The spawn failed (as a whole when errcmd < 0). */
static void ad_spawn_fail(struct ad_spawn_result *res, int rc, int errcmd, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void ad_spawn_fail(struct ad_spawn_result *res, int rc, int errcmd, const char *fmt, ...)
{
    va_list ap;

    res->rc = rc;
    res->errcmd = errcmd;
    va_start(ap, fmt);
    vsnprintf(res->msg, sizeof(res->msg), fmt, ap);
    va_end(ap);
}

/* " on host 'h'" in a spawn's message when the job spans hosts, else "". */
static const char *ad_on_host(const struct ad_daemon *d, char *buf, size_t cap)
{
    if (d->host == NULL)
        return "";
    snprintf(buf, cap, " on host '%s'", d->host);
    return buf;
}

/* path made absolute against dir (or the daemon's directory when NULL);
 * 0 or -ENAMETOOLONG. */
static int ad_abs_path(const char *path, const char *dir, char *out, size_t cap)
{
    char cwd[PATH_MAX];
    int n;

    if (path[0] == '/') {
        n = snprintf(out, cap, "%s", path);
    } else {
        if (dir == NULL)
            dir = getcwd(cwd, sizeof(cwd)) != NULL ? cwd : ".";
        n = snprintf(out, cap, "%s/%s", dir, path);
    }
    return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* 0 when path (relative to wdir) is a file we may execute; else -errno. */
static int ad_exe_check(const char *path, const char *wdir, char *out, size_t cap)
{
    struct stat st;
    int rc = ad_abs_path(path, wdir, out, cap);

    if (rc != 0)
        return rc;
    if (stat(out, &st) != 0)
        return -errno;
    if (!S_ISREG(st.st_mode))
        return -EACCES; /* as execve says for a directory */
    return access(out, X_OK) == 0 ? 0 : -errno;
}

/* What execvp would run for command once in wdir: with a '/' the file itself,
 * else the first executable dir/command of the search path (EACCES wins over
 * ENOENT, as execvp does). 0 with the absolute path in out[cap], or -errno. */
static int ad_find_exe(const char *command, const char *search, const char *wdir, char *out,
                       size_t cap)
{
    char cand[PATH_MAX];
    int err = -ENOENT;

    if (strchr(command, '/') != NULL)
        return ad_exe_check(command, wdir, out, cap);
    if (search == NULL)
        search = "/bin:/usr/bin"; /* execvp's default without PATH */
    for (const char *s = search;;) {
        size_t len = strcspn(s, ":");
        int rc = len == 0 ? snprintf(cand, sizeof(cand), "%s", command)
                          : snprintf(cand, sizeof(cand), "%.*s/%s", (int)len, s, command);
        if (rc > 0 && (size_t)rc < sizeof(cand)) {
            rc = ad_exe_check(cand, wdir, out, cap);
            if (rc == 0)
                return 0;
            if (rc == -EACCES)
                err = rc;
        }
        if (s[len] == '\0')
            break;
        s += len + 1;
    }
    return err;
}

/* 1 when name (a host of info "host", ":slots" allowed) is this machine. */
static int ad_host_is_here(const char *name, size_t len)
{
    char me[256] = "", want[256];

    if (len >= sizeof(want))
        return 0;
    memcpy(want, name, len);
    want[len] = '\0';
    want[strcspn(want, ":")] = '\0';
    if (strcmp(want, "localhost") == 0 || strcmp(want, "127.0.0.1") == 0)
        return 1;
    gethostname(me, sizeof(me) - 1);
    return ad_same_host(want, me);
}

/* The program of command c: info keys, working directory, executable. 0, or
 * the error in res. */
static int ad_spawn_app(struct ad_daemon *d, const struct ad_spawn_cmd *c, int i, int here,
                        struct mpirun_app *app, struct ad_spawn_result *res)
{
    extern char **environ;
    char *const *envs[2] = {environ, d->opts->genv};
    int nenvs[2] = {-1, d->opts->ngenv};
    const char *wdir = NULL, *search = NULL;
    char path[PATH_MAX], me[256] = "", where[300];
    struct stat st;
    int rc;

    for (int k = 0; k < c->ninfo; k++) {
        const char *key = c->info_keys[k], *val = c->info_vals[k];
        if (strcmp(key, "wdir") == 0) {
            wdir = val;
        } else if (strcmp(key, "path") == 0) {
            search = val;
        } else if (d->tree != NULL) {
            /* host, hosts, file: placed by mpirun (ad_place.c) */
        } else if (strcmp(key, "host") == 0 || strcmp(key, "hosts") == 0) {
            for (const char *h = val;; h++) {
                size_t len = strcspn(h, ",");
                if (!ad_host_is_here(h, len)) {
                    gethostname(me, sizeof(me) - 1);
                    ad_spawn_fail(res, -EHOSTUNREACH, i,
                                  "spawn: info host '%.*s' is not this host ('%s'), and mpirun "
                                  "runs on this host only (-hosts/-hostfile name more)",
                                  (int)len, h, me);
                    return -1;
                }
                h += len;
                if (*h == '\0')
                    break;
            }
        } else if (strcmp(key, "file") == 0 || strcmp(key, "hostfile") == 0) {
            struct mpirun_opts ho = {0};
            char why[400];
            int h = 0;
            if (mpirun_hosts_read_file_err(&ho, val, why, sizeof(why)) != 0) {
                mpirun_hosts_free(&ho);
                ad_spawn_fail(res, -EINVAL, i, "spawn: info '%s': %s", key, why);
                return -1;
            }
            while (h < ho.nhosts && ad_host_is_here(ho.hosts[h].name, strlen(ho.hosts[h].name)))
                h++;
            if (h < ho.nhosts) {
                gethostname(me, sizeof(me) - 1);
                ad_spawn_fail(res, -EHOSTUNREACH, i,
                              "spawn: host '%s' of info '%s' is not this host ('%s'), and mpirun "
                              "runs on this host only (-hosts/-hostfile name more)",
                              ho.hosts[h].name, key, me);
                mpirun_hosts_free(&ho);
                return -1;
            }
            mpirun_hosts_free(&ho);
        } /* other keys: ignored */
    }
    app->nprocs = c->maxprocs;
    if (!here) /* none of its processes runs on this host: nothing to check */
        wdir = NULL;
    if (wdir != NULL) {
        rc = ad_abs_path(wdir, NULL, path, sizeof(path));
        if (rc == 0 && stat(path, &st) != 0)
            rc = -errno;
        else if (rc == 0 && !S_ISDIR(st.st_mode))
            rc = -ENOTDIR;
        else if (rc == 0 && access(path, X_OK) != 0)
            rc = -errno;
        if (rc != 0) {
            ad_spawn_fail(res, rc, i, "spawn: cannot use working directory '%s'%s: %s", wdir,
                          ad_on_host(d, where, sizeof(where)), strerror(-rc));
            return -1;
        }
        if ((app->wdir = strdup(path)) == NULL)
            goto oom;
    }
    if (search == NULL)
        search = ad_env_find(envs, nenvs, 2, "PATH"); /* as the ranks will have it */
    rc = here ? ad_find_exe(c->command, search, app->wdir, path, sizeof(path)) : 0;
    if (rc != 0) {
        ad_spawn_fail(res, rc, i, "spawn: cannot execute '%s'%s: %s", c->command,
                      ad_on_host(d, where, sizeof(where)), strerror(-rc));
        return -1;
    }
    if (here && (app->exe = strdup(path)) == NULL)
        goto oom;
    app->argv = calloc((size_t)c->nargv + 2, sizeof(char *));
    if (app->argv == NULL || (app->argv[0] = strdup(c->command)) == NULL)
        goto oom;
    for (int k = 0; k < c->nargv; k++)
        if ((app->argv[k + 1] = strdup(c->argv[k])) == NULL)
            goto oom;
    return 0;
oom:
    ad_spawn_fail(res, -ENOMEM, -1, "spawn: out of memory");
    return -1;
}

/* The request's programs as a job's options (here[i]: command i has
 * processes on this host, NULL: all do); NULL with the failure in res. */
static struct mpirun_opts *ad_spawn_opts(struct ad_daemon *d, const struct ad_spawn_req *req,
                                         const unsigned char *here, struct ad_spawn_result *res)
{
    struct mpirun_opts *own = calloc(1, sizeof(*own));

    if (own == NULL || (own->apps = calloc((size_t)req->ncmds, sizeof(*own->apps))) == NULL) {
        free(own);
        ad_spawn_fail(res, -ENOMEM, -1, "spawn: out of memory");
        return NULL;
    }
    own->genv = d->opts->genv;
    own->ngenv = d->opts->ngenv;
    own->prefix_output = d->prefix_output;
    for (int i = 0; i < req->ncmds; i++) {
        own->napps = i + 1;
        if (ad_spawn_app(d, &req->cmds[i], i, here == NULL || here[i], &own->apps[i], res) != 0) {
            ad_spawn_opts_free(own);
            return NULL;
        }
    }
    return own;
}

/* Job num (jobid) of the request, its ranks here ranks[nranks] (NULL: all),
 * with the preput pairs, in the table; NULL with the failure in res (own
 * freed either way with the job). */
static struct ad_job *ad_spawn_job(struct ad_daemon *d, struct mpirun_opts *own,
                                   const struct ad_spawn_req *req, int num, const char *jobid,
                                   const char *spawner, const int *ranks, int nranks,
                                   const int *node_of, struct ad_spawn_result *res)
{
    struct ad_job *nj = NULL;

    if (ad_job_create(own, jobid, ranks, nranks, &nj) != 0) {
        ad_spawn_opts_free(own);
        ad_spawn_fail(res, -ENOMEM, -1, "spawn: out of memory");
        return NULL;
    }
    nj->own = own;
    nj->num = num;
    snprintf(nj->spawner, sizeof(nj->spawner), "%s", spawner);
    for (int r = 0; r < nj->nprocs; r++)
        nj->procs[r].out.job = nj->procs[r].err.job = nj->num;
    for (int k = 0; k < req->npreput; k++)
        if (ad_kvs_put(&nj->kvs, req->pp_keys[k], req->pp_vals[k]) != 0)
            nj->discard = 1;
    if (nj->discard ||
        (node_of != NULL ? ad_job_set_nodes(nj, node_of) : ad_job_local_nodes(own, nj)) != 0 ||
        ad_jobs_add(d, nj) != 0) {
        ad_job_destroy(nj);
        ad_spawn_fail(res, -ENOMEM, -1, "spawn: out of memory");
        return NULL;
    }
    snprintf(res->jobid, sizeof(res->jobid), "%s", nj->kvsname);
    return nj;
}

/* Starts the job's processes here; after a failure the started ones are
 * killed (and not judged: the spawner is told). */
static void ad_spawn_start(struct ad_daemon *d, struct ad_job *nj, struct ad_spawn_result *res)
{
    if (nj->nprocs > 0)
        d->drain_deadline = 0; /* output flows again (a tree daemon idle till now) */
    for (int r = 0; r < nj->nprocs; r++) {
        struct ad_proc *np = &nj->procs[r];
        char msg[600], where[300];
        int code, rc = ad_proc_launch(d, nj, np, &code, msg, sizeof(msg));
        if (rc == 0)
            continue;
        nj->discard = 1; /* the job is freed once they are reaped */
        for (int k = 0; k <= r; k++)
            if (nj->procs[k].pid > 0)
                kill(-nj->procs[k].pid, SIGKILL);
        ad_spawn_fail(res, rc, np->appnum, "spawn: %s%s", msg + strlen("mpirun: "),
                      ad_on_host(d, where, sizeof(where)));
        return;
    }
}

void ad_spawn_run(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p,
                  const struct ad_spawn_req *req, struct ad_spawn_result *res)
{
    struct mpirun_opts *own;
    struct ad_job *nj;
    char jobid[ASSIST_JOBID_MAX + 16];
    int total = 0, running = ad_running(d), n;

    *res = (struct ad_spawn_result){.errcmd = -1};
    if (p->adopted) { /* a singleton's relative paths are from its directory, as it has it now */
        char cwd[64];
        snprintf(cwd, sizeof(cwd), "/proc/%ld/cwd", (long)p->pid);
        if (chdir(cwd) != 0) {
            /* keep ours */
        }
    }
    if (d->opts == NULL || d->njobs < 1) {
        ad_spawn_fail(res, -ENOSYS, -1, "spawn: not available here");
        return;
    }
    if (d->phase != AD_RUN || d->ended) {
        ad_spawn_fail(res, -ECANCELED, -1, "spawn: the job is ending");
        return;
    }
    for (int i = 0; i < req->ncmds; i++)
        total += req->cmds[i].maxprocs;
    if (d->no_oversubscribe && (long)running + total > d->universe) {
        ad_spawn_fail(res, -EAGAIN, -1,
                      "spawn: %d processes would run (%d running, %d new), more than the universe "
                      "size %d, and mpirun has --no-oversubscribe",
                      running + total, running, total, d->universe);
        return;
    }
    n = snprintf(jobid, sizeof(jobid), "%s_%d", d->jobs[0]->jobid, d->spawned + 1);
    if (n < 0 || n > ASSIST_JOBID_MAX) {
        ad_spawn_fail(res, -ENAMETOOLONG, -1, "spawn: no job id left");
        return;
    }
    if ((own = ad_spawn_opts(d, req, NULL, res)) == NULL)
        return;
    nj = ad_spawn_job(d, own, req, d->spawned + 1, jobid, job->kvsname, NULL, 0, NULL, res);
    if (nj == NULL)
        return;
    d->spawned++;
    ad_spawn_start(d, nj, res);
}

int ad_spawn_local(struct ad_daemon *d, const struct ad_spawn_req *req, int num, const char *jobid,
                   const char *spawner, const int *ranks, int nranks, const int *node_of,
                   struct ad_spawn_result *res, struct ad_job **out)
{
    struct ad_spawn_result oom = {.errcmd = -1};
    unsigned char *here = calloc((size_t)req->ncmds + 1, 1);
    struct mpirun_opts *own;
    struct ad_job *nj;
    int failed = 0;

    *res = (struct ad_spawn_result){.errcmd = -1};
    *out = NULL;
    if (here == NULL)
        return -ENOMEM;
    for (int i = 0, first = 0, k = 0; i < req->ncmds; first += req->cmds[i++].maxprocs)
        for (; k < nranks && ranks[k] < first + req->cmds[i].maxprocs; k++)
            here[i] = 1;
    /* Without a program here the job still exists (its fences pass through
     * this daemon), with no process. */
    own = ad_spawn_opts(d, req, here, res);
    if (own == NULL) {
        failed = 1;
        nranks = 0;
        memset(here, 0, (size_t)req->ncmds);
        own = ad_spawn_opts(d, req, here, &oom);
    }
    free(here);
    if (own == NULL)
        return -ENOMEM;
    if (d->phase != AD_RUN || d->ended) {
        if (!failed)
            ad_spawn_fail(res, -ECANCELED, -1, "spawn: the job is ending");
        failed = 1;
        nranks = 0;
    }
    nj =
        ad_spawn_job(d, own, req, num, jobid, spawner, ranks, nranks, node_of, failed ? &oom : res);
    if (nj == NULL)
        return -ENOMEM;
    *out = nj;
    return 0;
}
