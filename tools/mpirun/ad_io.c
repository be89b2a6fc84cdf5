/* ad: forwarding of the ranks' stdout/stderr to mpirun's, byte-exact unless
 * -l asks for line prefixes (then whole lines are written): "[rank] " for the
 * job mpirun started, "[job,rank] " for spawned jobs. */
#include "ad.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define AD_IO_LINE_HOLD 4096 /* -l: longest incomplete line held back */

static int ad_io_broken[3]; /* fd 1 or 2 failed (EPIPE...): drop output */
static void (*ad_io_sink)(int out, const char *buf, size_t len);

void ad_io_set_sink(void (*sink)(int out, const char *buf, size_t len)) { ad_io_sink = sink; }

void ad_io_write(int out, const char *buf, size_t len)
{
    if (ad_io_sink != NULL) {
        ad_io_sink(out, buf, len);
        return;
    }
    while (len > 0 && !ad_io_broken[out]) {
        ssize_t n = write(out, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN) {
            struct pollfd pfd = {.fd = out, .events = POLLOUT};
            poll(&pfd, 1, 1000);
            continue;
        }
        if (n <= 0) {
            ad_io_broken[out] = 1;
            return;
        }
        buf += n;
        len -= (size_t)n;
    }
}

void ad_stream_init(struct ad_stream *s, int fd, int out, int job, int rank, int prefix)
{
    s->fd = fd;
    s->out = out;
    s->job = job;
    s->rank = rank;
    s->prefix = prefix;
    s->at_line_start = 1;
    s->pend = NULL;
    s->plen = 0;
}

/* -l: writes data as complete lines with prefixes; keeps a short tail. */
static void ad_stream_emit_prefixed(struct ad_stream *s, const char *data, size_t len, int final)
{
    char tag[32];
    int taglen = s->job > 0 ? snprintf(tag, sizeof(tag), "[%d,%d] ", s->job, s->rank)
                            : snprintf(tag, sizeof(tag), "[%d] ", s->rank);
    size_t start = 0;

    while (start < len) {
        const char *nl = memchr(data + start, '\n', len - start);
        size_t end = nl != NULL ? (size_t)(nl - data) + 1 : len;
        if (nl == NULL && !final && len - start <= AD_IO_LINE_HOLD) {
            /* hold the incomplete line for the next read */
            char *p = realloc(s->pend, len - start);
            if (p != NULL) {
                memcpy(p, data + start, len - start);
                s->pend = p;
                s->plen = len - start;
                return;
            }
        }
        if (s->at_line_start) {
            /* tag and line in one write: output of other ranks (and, across
             * hosts, of other daemons) never lands in between */
            char line[AD_IO_LINE_HOLD + 64];
            size_t len = end - start;
            if (len + (size_t)taglen <= sizeof(line)) {
                memcpy(line, tag, (size_t)taglen);
                memcpy(line + taglen, data + start, len);
                ad_io_write(s->out, line, (size_t)taglen + len);
            } else {
                ad_io_write(s->out, tag, (size_t)taglen);
                ad_io_write(s->out, data + start, len);
            }
        } else {
            ad_io_write(s->out, data + start, end - start);
        }
        s->at_line_start = nl != NULL;
        start = end;
    }
    s->plen = 0;
}

void ad_stream_read(struct ad_stream *s)
{
    char buf[AD_IO_BUF];
    ssize_t n;

    if (s->fd < 0)
        return;
    n = read(s->fd, buf, sizeof(buf));
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        ad_stream_close(s);
        return;
    }
    if (!s->prefix) {
        ad_io_write(s->out, buf, (size_t)n);
        return;
    }
    if (s->plen > 0) {
        size_t total = s->plen + (size_t)n;
        char *all = malloc(total);
        if (all != NULL) {
            memcpy(all, s->pend, s->plen);
            memcpy(all + s->plen, buf, (size_t)n);
            s->plen = 0;
            ad_stream_emit_prefixed(s, all, total, 0);
            free(all);
            return;
        }
        ad_stream_emit_prefixed(s, s->pend, s->plen, 1);
    }
    ad_stream_emit_prefixed(s, buf, (size_t)n, 0);
}

void ad_stream_close(struct ad_stream *s)
{
    if (s->fd < 0)
        return;
    if (s->plen > 0)
        ad_stream_emit_prefixed(s, s->pend, s->plen, 1);
    if (s->prefix && !s->at_line_start) /* -l output stays line-oriented */
        ad_io_write(s->out, "\n", 1);
    free(s->pend);
    s->pend = NULL;
    s->plen = 0;
    close(s->fd);
    s->fd = -1;
}

/* ---- growable buffers ----------------------------------------------------- */

int ad_buf_add(struct ad_buf *b, const void *data, size_t len)
{
    if (b->len + len > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + len)
            cap *= 2;
        char *p = realloc(b->data, cap);
        if (p == NULL)
            return -ENOMEM;
        b->data = p;
        b->cap = cap;
    }
    if (len > 0)
        memcpy(b->data + b->len, data, len);
    b->len += len;
    return 0;
}

int ad_buf_add_str(struct ad_buf *b, const char *s) { return ad_buf_add(b, s, strlen(s) + 1); }

int ad_buf_add_int(struct ad_buf *b, long v)
{
    char num[32];

    snprintf(num, sizeof(num), "%ld", v);
    return ad_buf_add_str(b, num);
}

void ad_buf_consume(struct ad_buf *b, size_t len)
{
    if (len >= b->len) {
        b->len = 0;
        return;
    }
    memmove(b->data, b->data + len, b->len - len);
    b->len -= len;
}

void ad_buf_free(struct ad_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
