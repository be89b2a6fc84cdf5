/* ad: the relay, mpirun --relay (DCFA_RELAY=1): the daemon forwards the bytes of the connections
 * it hands over instead of handing over the two ends of one socket pair (docs/launcher.md
 * "Endpoints and isolation"). It is the DCFA paper's host-offload baseline, there to measure
 * what the direct path saves.
 *
 * For a granted request the daemon makes two stream socket pairs: one end of each goes to a rank
 * (GRANT, INCOMING: as in the direct case, the ranks see no difference), the other two stay
 * here. A rank on another host: each of the two daemons keeps the TCP connection their
 * handshake made (ad_ep_remote.c) and relays between it and a socket pair whose other end its
 * rank gets (ad_relay_join), so the bytes pass through both hosts' daemons. One epoll set holds
 * every relayed end; the daemon's poll loop watches its fd and calls ad_relay_run, which moves what
 * is readable into a bounded buffer per direction (AD_RELAY_BUF) and writes it to the other end
 * (read and write, so /proc/<daemon>/io counts the bytes). A direction whose buffer is full stops
 * reading, so a slow reader holds the sender back through the kernel's socket buffers. An end of
 * stream (the rank's shutdown at finalize, or its exit) is passed on once its buffer is written out
 * (shutdown(SHUT_WR) of the other end); when a rank's end is gone, what was still going to it is
 * dropped and its peer's side is shut down for reading (the peer's writes then fail as they would
 * on a direct pair). A relay whose two directions have ended is closed and freed. */
#include "ad_relay.h"
#include "ad.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define AD_RELAY_BUF (128 * 1024) /* bytes held per direction */

struct ad_relay;
struct ad_relay_side {
    struct ad_relay *r;
    int fd;      /* the daemon's end facing this side's rank */
    uint32_t ev; /* events registered with epoll (0: not registered) */
    int rd_eof;  /* its rank will send nothing more (end of stream, or an error) */
    int gone;    /* its rank's end is closed: nothing can be written to it */
    int wr_shut; /* the end of the other direction was passed on to it */
    size_t head; /* buf[head, tail): bytes read from this side, not yet written to the other */
    size_t tail;
    char *buf;
};

struct ad_relay {
    struct ad_relay_side s[2];
    struct ad_relay *next;
};

static int ad_relay_ep = -1;
static struct ad_relay *ad_relays;

int ad_relay_enabled(void)
{
    const char *v = getenv("DCFA_RELAY");
    return v != NULL && *v != '\0' && strcmp(v, "0") != 0;
}

static void ad_relay_free(struct ad_relay *r)
{
    for (struct ad_relay **pp = &ad_relays; *pp; pp = &(*pp)->next)
        if (*pp == r) {
            *pp = r->next;
            break;
        }
    for (int i = 0; i < 2; i++) {
        if (r->s[i].fd >= 0)
            close(r->s[i].fd); /* leaves the epoll set with it */
        free(r->s[i].buf);
    }
    free(r);
}

/* the epoll set as a source of the loop (ad_reactor.h), from the first relayed pair */
static int ad_relay_nfds(struct ad_daemon *d)
{
    (void)d;
    return 1;
}

static int ad_relay_pollfds(struct ad_daemon *d, struct pollfd *pfds, struct ad_fd_ref *refs, int n)
{
    (void)d;
    pfds[n] = (struct pollfd){.fd = ad_relay_ep, .events = POLLIN};
    refs[n++] = (struct ad_fd_ref){.kind = AD_FD_RELAY};
    return n;
}

static void ad_relay_run(void);

static int ad_relay_on_fd(struct ad_daemon *d, const struct ad_fd_ref *ref, short revents)
{
    (void)d;
    (void)ref;
    (void)revents;
    ad_relay_run();
    return 0;
}

static const struct ad_source ad_relay_source = {ad_relay_nfds, ad_relay_pollfds, NULL};

/* a relay between two sockets the daemon holds (each a socket pair's end or a TCP connection
 * to another host's daemon), taken by it on success (0 or -errno; on failure both stay the
 * caller's) */
static int ad_relay_new(int fd0, int fd1)
{
    if (ad_relay_ep < 0) {
        if ((ad_relay_ep = epoll_create1(EPOLL_CLOEXEC)) < 0)
            return -errno;
        ad_reactor_handle(AD_FD_RELAY, ad_relay_on_fd);
        (void)ad_reactor_add_source(&ad_relay_source);
    }
    struct ad_relay *r = calloc(1, sizeof *r);
    if (r != NULL && ((r->s[0].buf = malloc(AD_RELAY_BUF)) == NULL ||
                      (r->s[1].buf = malloc(AD_RELAY_BUF)) == NULL)) {
        free(r->s[0].buf);
        free(r);
        r = NULL;
    }
    if (r == NULL)
        return -ENOMEM;
    for (int i = 0; i < 2; i++) {
        struct ad_relay_side *s = &r->s[i];
        s->r = r;
        s->fd = i == 0 ? fd0 : fd1;
        s->ev = EPOLLIN;
        ad_set_nonblock(s->fd);
        struct epoll_event e = {.events = s->ev, .data.ptr = s};
        if (epoll_ctl(ad_relay_ep, EPOLL_CTL_ADD, s->fd, &e) != 0) {
            int rc = -errno;
            if (i == 1)
                (void)epoll_ctl(ad_relay_ep, EPOLL_CTL_DEL, fd0, NULL);
            free(r->s[0].buf);
            free(r->s[1].buf);
            free(r);
            return rc;
        }
    }
    r->next = ad_relays;
    ad_relays = r;
    return 0;
}

int ad_relay_pair(int sv[2])
{
    int a[2], b[2], rc;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, a) != 0)
        return -errno;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, b) != 0) {
        rc = -errno;
        goto fail_a;
    }
    if ((rc = ad_relay_new(a[1], b[1])) != 0)
        goto fail_b;
    sv[0] = a[0];
    sv[1] = b[0];
    return 0;
fail_b:
    close(b[0]);
    close(b[1]);
fail_a:
    close(a[0]);
    close(a[1]);
    return rc;
}

int ad_relay_join(int fd)
{
    int a[2], rc;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, a) != 0)
        return -errno;
    if ((rc = ad_relay_new(a[1], fd)) != 0) {
        close(a[0]);
        close(a[1]);
        return rc;
    }
    return a[0];
}

/* the rank behind s closed its end: drop what was still going to it and stop its peer's sends */
static void ad_relay_lost(struct ad_relay_side *s, struct ad_relay_side *o)
{
    s->gone = 1;
    o->head = o->tail = 0;
    if (!o->rd_eof) {
        o->rd_eof = 1;
        shutdown(o->fd, SHUT_RD);
    }
}

/* move what can be moved from in to out; in's rank's end of stream is passed on once written */
static void ad_relay_pump(struct ad_relay_side *in, struct ad_relay_side *out)
{
    for (;;) {
        if (in->tail > in->head && !out->gone) {
            ssize_t n = write(out->fd, in->buf + in->head, in->tail - in->head);
            if (n > 0) {
                in->head += (size_t)n;
                if (in->head == in->tail)
                    in->head = in->tail = 0;
                continue;
            }
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
                ad_relay_lost(out, in);
            else
                break; /* out is full: epoll says when it has room */
        }
        if (in->rd_eof || in->tail == AD_RELAY_BUF)
            break;
        ssize_t n = read(in->fd, in->buf + in->tail, AD_RELAY_BUF - in->tail);
        if (n > 0) {
            in->tail += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        in->rd_eof = 1; /* the end of its stream, or its end failed */
    }
    if (in->rd_eof && in->tail == in->head && !out->wr_shut && !out->gone) {
        shutdown(out->fd, SHUT_WR);
        out->wr_shut = 1;
    }
}

/* register the events s waits for now (none: out of the set); 1 when the direction from s
 * has ended (its end of stream passed on, or its peer gone) */
static int ad_relay_update(struct ad_relay_side *s, const struct ad_relay_side *o)
{
    uint32_t ev = 0;
    if (!s->rd_eof && s->tail < AD_RELAY_BUF)
        ev |= EPOLLIN;
    if (!s->gone && o->tail > o->head)
        ev |= EPOLLOUT;
    if (ev != s->ev) {
        struct epoll_event e = {.events = ev, .data.ptr = s};
        int op = ev == 0 ? EPOLL_CTL_DEL : s->ev == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
        if (epoll_ctl(ad_relay_ep, op, s->fd, &e) == 0)
            s->ev = ev;
    }
    return s->rd_eof && s->tail == s->head && (o->gone || o->wr_shut);
}

static struct ad_relay_side ad_relay_dead; /* stands for a side freed during a round */

static void ad_relay_run(void)
{
    struct epoll_event evs[32];
    int n = epoll_wait(ad_relay_ep, evs, 32, 0);
    for (int i = 0; i < n; i++) {
        struct ad_relay_side *s = evs[i].data.ptr;
        struct ad_relay *r = s->r;
        if (r == NULL)
            continue;
        struct ad_relay_side *o = &r->s[s == &r->s[0]];
        /* both halves of s's end are shut: its rank closed it (or the stream has ended both
         * ways); what it sent before is still read */
        if ((evs[i].events & (EPOLLHUP | EPOLLERR)) && !s->gone)
            ad_relay_lost(s, o);
        ad_relay_pump(s, o);
        ad_relay_pump(o, s);
        int done = ad_relay_update(s, o);
        done &= ad_relay_update(o, s);
        if (done) {
            for (int k = i + 1; k < n; k++)
                if (evs[k].data.ptr == &r->s[0] || evs[k].data.ptr == &r->s[1])
                    evs[k].data.ptr = &ad_relay_dead;
            ad_relay_free(r);
        }
    }
}
