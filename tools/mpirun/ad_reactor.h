/* ad_reactor: the assist daemon's loop machinery (docs/launcher.md, "The daemon's
 * structure"). The loop (ad_loop, ad_daemon.c) waits on fds and deadlines; it names no
 * module. A module hands it what it owns:
 *   - a handler per kind of fd (ad_reactor_handle): the loop calls it for each ready fd
 *     of that kind;
 *   - a source (ad_reactor_add_source): fds of its own to poll each round, and its next
 *     deadline;
 *   - subscriptions to events (ad_reactor_subscribe): "end the job" (AD_EV_END) and the
 *     others below, fired by whoever sees them.
 * One daemon per process: the tables are this process's. */
#ifndef DCFA_AD_REACTOR_H
#define DCFA_AD_REACTOR_H

#include <poll.h>
#include <sys/types.h>

struct ad_daemon;
struct ad_job;
struct ad_proc;
struct ad_link;
struct ad_epr_hs;

/* monotonic seconds */
double ad_now(void);
void ad_set_nonblock(int fd);

enum ad_fd_kind {
    AD_FD_SIG,
    AD_FD_STDIN,
    AD_FD_STDIN_PIPE,
    AD_FD_PMI,
    AD_FD_OUT,
    AD_FD_ERR,
    AD_FD_LINK_IN,    /* a parent or child daemon's messages */
    AD_FD_LINK_OUT,   /* room to write to it */
    AD_FD_LINK_ERR,   /* a child's remote-start command's stderr */
    AD_FD_ADOPTED,    /* singleton mode: the singleton's pidfd */
    AD_FD_EP,         /* a rank's endpoint channel (ad_ep.c) */
    AD_FD_RELAY,      /* the relay's epoll set (ad_relay.c) */
    AD_FD_EPR,        /* the data port or a handshake with another host's daemon (ad_ep_remote.c) */
    AD_FD_ROOT_STDIN, /* mpirun's stdin at the root of a tree: to rank 0's host */
    AD_FD_KINDS
};

struct ad_fd_ref {
    enum ad_fd_kind kind;
    struct ad_job *job;
    struct ad_proc *proc;
    struct ad_link *link;
    struct ad_epr_hs *epr; /* AD_FD_EPR: the handshake, NULL for the data port */
};

/* What handles the fds of a kind; returns 1 when it read something (the loop drains a
 * rank's PMI channel through it before judging its exit), else 0. */
typedef int (*ad_fd_handler)(struct ad_daemon *d, const struct ad_fd_ref *ref, short revents);
void ad_reactor_handle(enum ad_fd_kind kind, ad_fd_handler h);
/* Calls the handler of ref's kind (0 when none). */
int ad_reactor_dispatch(struct ad_daemon *d, const struct ad_fd_ref *ref, short revents);

/* A module's own fds: nfds bounds what pollfds adds at pfds[n...] (it returns the new n);
 * deadline (or NULL) is its next deadline, 0 = none. Polled after the daemon's own fds,
 * in the order added. */
struct ad_source {
    int (*nfds)(struct ad_daemon *d);
    int (*pollfds)(struct ad_daemon *d, struct pollfd *pfds, struct ad_fd_ref *refs, int n);
    double (*deadline)(struct ad_daemon *d);
};
/* 0, or -ENOSPC; adding one twice adds it once */
int ad_reactor_add_source(const struct ad_source *s);
int ad_reactor_nfds(struct ad_daemon *d);
int ad_reactor_pollfds(struct ad_daemon *d, struct pollfd *pfds, struct ad_fd_ref *refs, int n);
double ad_reactor_deadline(struct ad_daemon *d); /* the earliest of the sources', 0 = none */

enum ad_event {
    AD_EV_END,         /* the job ends: code, msg (the first cause: ad_daemon_end) */
    AD_EV_PHASE,       /* phase entered (enum ad_phase) */
    AD_EV_USR1,        /* SIGUSR1: the ranks dump their state */
    AD_EV_STDIN_ACK,   /* rank 0's stdin took a chunk (stop: it closed) */
    AD_EV_NOINIT,      /* job, who: a process exited 0 without PMI init; 1 = taken (tree) */
    AD_EV_CHILD,       /* pid, status: a child not a rank was reaped; 1 = it was the subscriber's */
    AD_EV_ROUND,       /* each round of the loop, after spawned jobs were freed */
    AD_EV_TICK,        /* each round, after the local checks: now; 1 = the loop is over */
    AD_EV_JOB_HELD,    /* job: 1 while it may not be freed */
    AD_EV_JOB_FREE,    /* job: being destroyed */
    AD_EV_OUTPUT_HOLD, /* 1: do not read the ranks' output this round */
    AD_EV_OWN_PID,     /* pid: 1 when it is a subscriber's child, to be left alive */
    AD_EV_COUNT
};

struct ad_event_arg {
    int code; /* AD_EV_END: exit code; AD_EV_PHASE: phase; AD_EV_STDIN_ACK: stop */
    const char *msg;
    struct ad_job *job;
    const char *who;
    pid_t pid;
    int status;
    double now;
};

typedef int (*ad_event_cb)(struct ad_daemon *d, const struct ad_event_arg *a);
/* 0, or -ENOSPC; subscribing one callback twice subscribes it once */
int ad_reactor_subscribe(enum ad_event ev, ad_event_cb cb);
/* Calls every subscriber of ev in the order they subscribed; the OR of their answers. */
int ad_reactor_fire(struct ad_daemon *d, enum ad_event ev, const struct ad_event_arg *a);

#endif
