/* ad: PMI server, one connection per rank (see docs/launcher.md): PMI-1
 * "simple" lines, and PMI-2 messages for a rank whose init asks for
 * version 2 (the wire format is in src/assist/pmi_wire.h). Besides the
 * key/value exchange it takes spawn requests (PMI-1 "mcmd=spawn" blocks,
 * PMI-2 "cmd=spawn"), run by ad_spawn_run, and the name service's
 * publish/unpublish/lookup (ad_name_do, or up the tree to mpirun). */
#include "ad.h"
#include "assist/ns_wire.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define AD_PMI2_MSG_MAX (256 * 1024) /* longest PMI-2 message (a spawn's) */

/* Replies are small; a rank that does not read them is broken. */
static void ad_pmi_send(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p, const char *msg)
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
static void ad_pmi_send2(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p,
                         const char *body)
{
    char hdr[32];

    snprintf(hdr, sizeof(hdr), "%-6zu", strlen(body) % 1000000);
    ad_pmi_send(d, job, p, hdr);
    ad_pmi_send(d, job, p, body);
}

static void ad_pmi_bad(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p, const char *line)
{
    char m[512], label[64];

    snprintf(m, sizeof(m), "mpirun: %s (pid %ld%s%s) sent a bad PMI command: '%.300s'",
             ad_proc_label(job, p, label, sizeof(label)), (long)p->pid, d->host ? " on " : "",
             d->host ? d->host : "", line);
    ad_daemon_end(d, 1, m);
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

/* ---- spawn requests -------------------------------------------------------------- */

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
static void ad_spawn_line(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p,
                          const char *line)
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
static void ad_spawn_msg2(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p,
                          const char *msg)
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
