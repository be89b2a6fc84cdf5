/* ad_link: the links of the tree of daemons and their frames: the frame codec (a 12-byte
 * header and a payload), a link's queue and flush, payload strings (ad_cursor), and the
 * routes along the tree (the child toward a node, a job's subtrees, replies down to a rank). */
#include "ad_link.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void ad_put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

uint32_t ad_get32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

void ad_link_flush(struct ad_link *l)
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

void ad_link_send(struct ad_link *l, int type, int32_t arg, const void *payload, size_t len)
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

void ad_link_close(struct ad_link *l)
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

struct ad_tree *ad_t(struct ad_daemon *d) { return d->tree; }

int ad_kid_finished(const struct ad_link *l)
{
    return l->state == AD_LINK_DONE || l->state == AD_LINK_CLOSED;
}

int ad_kids_all(const struct ad_tree *t, int (*pred)(const struct ad_link *))
{
    for (int i = 0; i < t->nkids; i++)
        if (!pred(&t->kids[i]))
            return 0;
    return 1;
}

const char *ad_take(struct ad_cursor *c)
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

long ad_take_int(struct ad_cursor *c, long lo, long hi)
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

/* The child of this node whose subtree holds node v (NULL if none). */
struct ad_link *ad_tree_kid_toward(struct ad_tree *t, int v)
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

/* Sends a frame to every child whose subtree runs processes of the job. */
void ad_job_send_down(struct ad_tree *t, const struct ad_job *job, int type, const void *p,
                      size_t len)
{
    for (int i = 0; i < t->nkids; i++)
        if (job->tree->kid_has[i])
            ad_link_send(&t->kids[i], type, job->num, p, len);
}

int ad_tree_is_root(struct ad_daemon *d) { return ad_t(d)->root; }

/* A reply that travels down the tree to process `tag` of a job on host `origin` (the fields
 * its message starts with): passed on toward that host, or, here, the process if it still
 * listens. NULL when passed on, malformed, or nobody is left to answer. */
struct ad_proc *ad_rep_route(struct ad_tree *t, const struct ad_cursor *c, int origin,
                             struct ad_job *job, int tag, int type, const char *p, size_t len)
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

/* Reads exactly len bytes from fd 0 within timeout_s. */
int ad_read_full(int fd, void *buf, size_t len, double deadline)
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
