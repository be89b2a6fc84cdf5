/* ad: forwarding of the ranks' stdout/stderr to mpirun's, byte-exact unless
 * -l asks for "[rank] " line prefixes (then whole lines are written). */
#include "ad.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define AD_IO_LINE_HOLD 4096 /* -l: longest incomplete line held back */

static int ad_io_broken[3]; /* fd 1 or 2 failed (EPIPE...): drop output */

void ad_io_write(int out, const char *buf, size_t len)
{
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

void ad_stream_init(struct ad_stream *s, int fd, int out, int rank, int prefix)
{
    s->fd = fd;
    s->out = out;
    s->rank = rank;
    s->prefix = prefix;
    s->at_line_start = 1;
    s->pend = NULL;
    s->plen = 0;
}

/* -l: writes data as complete lines with prefixes; keeps a short tail. */
static void ad_stream_emit_prefixed(struct ad_stream *s, const char *data, size_t len, int final)
{
    char tag[24];
    int taglen = snprintf(tag, sizeof(tag), "[%d] ", s->rank);
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
        if (s->at_line_start)
            ad_io_write(s->out, tag, (size_t)taglen);
        ad_io_write(s->out, data + start, end - start);
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
