/* ad_reactor: fd handlers by kind, poll sources and events of the daemon's loop
 * (ad_reactor.h). */
#include "ad_reactor.h"

#include <errno.h>
#include <fcntl.h>
#include <time.h>

#define AD_SOURCES_MAX 8
#define AD_SUBS_MAX    8

static ad_fd_handler ad_handlers[AD_FD_KINDS];
static const struct ad_source *ad_sources[AD_SOURCES_MAX];
static int ad_nsources;
static ad_event_cb ad_subs[AD_EV_COUNT][AD_SUBS_MAX];
static int ad_nsubs[AD_EV_COUNT];

double ad_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void ad_set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);

    if (fl >= 0)
        fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

void ad_reactor_handle(enum ad_fd_kind kind, ad_fd_handler h) { ad_handlers[kind] = h; }

int ad_reactor_dispatch(struct ad_daemon *d, const struct ad_fd_ref *ref, short revents)
{
    ad_fd_handler h = ad_handlers[ref->kind];

    return h != NULL ? h(d, ref, revents) : 0;
}

int ad_reactor_add_source(const struct ad_source *s)
{
    for (int i = 0; i < ad_nsources; i++)
        if (ad_sources[i] == s)
            return 0;
    if (ad_nsources == AD_SOURCES_MAX)
        return -ENOSPC;
    ad_sources[ad_nsources++] = s;
    return 0;
}

int ad_reactor_nfds(struct ad_daemon *d)
{
    int n = 0;

    for (int i = 0; i < ad_nsources; i++)
        n += ad_sources[i]->nfds(d);
    return n;
}

int ad_reactor_pollfds(struct ad_daemon *d, struct pollfd *pfds, struct ad_fd_ref *refs, int n)
{
    for (int i = 0; i < ad_nsources; i++)
        n = ad_sources[i]->pollfds(d, pfds, refs, n);
    return n;
}

double ad_reactor_deadline(struct ad_daemon *d)
{
    double next = 0;

    for (int i = 0; i < ad_nsources; i++) {
        double t = ad_sources[i]->deadline != NULL ? ad_sources[i]->deadline(d) : 0;
        if (t > 0 && (next == 0 || t < next))
            next = t;
    }
    return next;
}

int ad_reactor_subscribe(enum ad_event ev, ad_event_cb cb)
{
    for (int i = 0; i < ad_nsubs[ev]; i++)
        if (ad_subs[ev][i] == cb)
            return 0;
    if (ad_nsubs[ev] == AD_SUBS_MAX)
        return -ENOSPC;
    ad_subs[ev][ad_nsubs[ev]++] = cb;
    return 0;
}

int ad_reactor_fire(struct ad_daemon *d, enum ad_event ev, const struct ad_event_arg *a)
{
    int r = 0;

    for (int i = 0; i < ad_nsubs[ev]; i++)
        r |= ad_subs[ev][i](d, a);
    return r;
}
