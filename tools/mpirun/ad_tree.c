/* ad_tree: the tree of assist daemons at run time (the links, their messages and the
 * protocol: ad_link.h): the frames' dispatch, the tree's start once every daemon is up,
 * and its part of the loop (a source and the events of ad_reactor.h). */
#include "ad_tree.h"
#include "ad_ep_remote.h"
#include "ad_ep.h"
#include "ad_rsh.h"
#include "ad_place.h"
#include "ad_fence.h"
#include "ad_spawn.h"
#include "ad_launch.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- ending, phases, signals (events of the reactor, ad_tree_attach) ------------ */

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

/* ---- children ------------------------------------------------------------------- */

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

/* ---- messages ------------------------------------------------------------------- */

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
void ad_tree_check_ready(struct ad_daemon *d, struct ad_tree *t)
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
    case AD_M_SPAWN_GO:
        ad_spawn_go(d, t, ad_job_by_num(d, arg));
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
        ad_ep_set_node(t->node);
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

/* ---- the loop's hooks ------------------------------------------------------------- */

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
void ad_tree_attach(void)
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
