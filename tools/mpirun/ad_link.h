/* ad_link.c: the links of the tree of daemons and their frames: the frame codec (a 12-byte
 * header and a payload), a link's queue and flush, payload strings (ad_cursor), and the
 * routes along the tree (the child toward a node, a job's subtrees, replies down to a rank).
 *
 * The tree of assist daemons of a job that spans hosts.
 *
 * mpirun is the root (tree node 0) and runs no rank itself; host i of the
 * host list is node i + 1 and runs "mpirun --dcfa-daemon". Node v starts
 * nodes v*F+1 .. v*F+F (F = DCFA_TREE_FANOUT, default 2) through the
 * remote-start command (DCFA_RSH, default ssh; a host named localhost or
 * like this machine is started directly), so no daemon starts or serves more
 * than F others however many hosts there are. A child's stdin and stdout
 * (through ssh) are the link to its parent: framed messages, below.
 *
 *   down  SETUP (the job), START (node of every rank: launch now), FENCE_OUT
 *         (a job's pairs put since its last fence), PHASE (dump/term/kill),
 *         USR1, STDIN (for rank 0's host), EXIT (clean up and leave),
 *         NAME_REP (the answer to a NAME_REQ, routed to the node that asked),
 *         SPAWN_JOB (a spawned job mpirun placed: to the subtrees that run
 *         its processes), SPAWN_KILL (it failed somewhere: end it),
 *         SPAWN_REP (the answer to a SPAWN_REQ, routed like NAME_REP),
 *         NOINIT (a process of a job exited without MPI_Init: to the
 *         subtrees with processes of the job, with mpirun's grace time)
 *   up    HELLO (alive), READY (subtree up: node keys, host names), END
 *         (first failure seen in the subtree), FENCE_IN (a job's subtree
 *         pairs), OUTPUT, STDIN_ACK, DONE (subtree's ranks all ended, output
 *         forwarded), NAME_REQ (a rank's publish/unpublish/lookup: the name
 *         table is mpirun's), SPAWN_REQ (a rank's spawn: mpirun places it),
 *         SPAWN_ACK (the subtree started its part of a spawned job, or the
 *         first failure), JOB_DONE (the subtree's processes of a spawned job
 *         all ended: it may be forgotten), NOINIT_UP (a process of a job
 *         exited without MPI_Init: passed up to mpirun, which sends NOINIT)
 *
 * Every job (mpirun's, job 0, and each spawned one) has its part of the
 * tree (struct ad_jtree): which children's subtrees run its processes. Its
 * fences, spawn answers and end are counted over exactly those children, so
 * a host without processes of a job never hears of it. mpirun places a
 * spawn (info host/hosts/file, else the next slots of its host list), names
 * it, and sends it down; it answers the spawner once every subtree answered.
 *
 * A frame is a 12-byte header (length of the payload, type, argument; big
 * endian) and the payload. A child first writes the 8 bytes "DCFA-AD1";
 * whatever comes before them (a login banner) is passed to stderr.
 *
 * The root decides: it launches the ranks once every daemon is up, ends the
 * job on the first failure anywhere, and sends EXIT when every subtree is
 * DONE; each daemon then removes its host's job files and exits. A daemon
 * that loses its parent ends its ranks, cleans up and exits; a parent that
 * loses a child ends the job naming the child's host.
 */

#ifndef DCFA_AD_LINK_H
#define DCFA_AD_LINK_H

#include "ad.h"
#include "util/node_key.h"

#define AD_MAGIC         "DCFA-AD1"
#define AD_MAGIC_LEN     8
#define AD_HDR           12
#define AD_FRAME_MAX     (256u << 20) /* larger is a broken link */
#define AD_UP_HIGH       (4u << 20)   /* queued upward: stop reading rank output */
#define AD_ERR_HOLD      4096         /* a child's stderr kept before its HELLO */
#define AD_EXIT_GRACE    5.0          /* seconds for children to leave after EXIT */
#define AD_LOST_GRACE    0.5          /* seconds to wait for a lost child's status */
#define AD_SETUP_VERSION "DCFA-SETUP-2"
#define AD_CLEANUP_WAIT  10.0 /* seconds for the cleanup of a lost daemon's host */

enum ad_msg {
    AD_M_SETUP = 1,
    AD_M_START,
    AD_M_FENCE_OUT,
    AD_M_PHASE,
    AD_M_USR1,
    AD_M_STDIN,
    AD_M_EXIT,
    AD_M_NAME_REP,
    AD_M_SPAWN_JOB,
    AD_M_SPAWN_KILL,
    AD_M_SPAWN_REP,
    AD_M_NOINIT,
    AD_M_EPMAP,    /* the job's key and every daemon's data port (ad_ep_remote.c) */
    AD_M_SPAWN_GO, /* a spawned job checked on every host: start its processes (ad_spawn.c) */
    AD_M_HELLO = 32,
    AD_M_READY,
    AD_M_END,
    AD_M_FENCE_IN,
    AD_M_OUTPUT,
    AD_M_STDIN_ACK,
    AD_M_DONE,
    AD_M_NAME_REQ,
    AD_M_SPAWN_REQ,
    AD_M_SPAWN_ACK,
    AD_M_JOB_DONE,
    AD_M_NOINIT_UP,
    AD_M_EPADDR, /* a daemon's data port: "<port>;<networks>" (ad_ep_remote.c) */
};

/* A job's part of the tree at this daemon (struct ad_job.tree). */
struct ad_jtree {
    unsigned char *kid_has;     /* [nkids]: the child's subtree runs processes of the job */
    int kids_with;              /* how many do */
    int fence_in;               /* children in the current fence */
    int fence_up;               /* 1: the local processes are in; 2: sent up, waiting */
    int acks;                   /* spawned: children that answered (in this phase) */
    int acked;                  /* the subtree's answer went up (the root: to the spawner) */
    int started;                /* spawned: 0 checked, not started (the first phase); 1 after
                                   SPAWN_GO (its processes started) or SPAWN_KILL */
    struct ad_spawn_result res; /* the first failure here or below (rc 0: none) */
    int dones;                  /* spawned: children whose processes all ended */
    int done_sent;              /* JOB_DONE sent (the root: heard from all) */
    int origin, origin_job, origin_tag; /* the spawner: tree node, job, local index */
};

enum ad_link_state {
    AD_LINK_STARTING, /* started, no HELLO yet */
    AD_LINK_UP,       /* HELLO */
    AD_LINK_READY,    /* its subtree is up */
    AD_LINK_DONE,     /* its subtree's ranks ended */
    AD_LINK_CLOSED,   /* its input ended */
};

struct ad_link {
    int node;         /* tree node at the other end */
    const char *host; /* a child's host name */
    int in, out, err; /* -1 when closed */
    pid_t pid;        /* a child's start process, 0 = none */
    int reaped, status;
    enum ad_link_state state;
    int synced; /* magic seen */
    int eof;
    int reported;    /* loss reported (or not to be) */
    double deadline; /* HELLO deadline, or when to report a loss without status */
    struct ad_buf inq, outq, errq;
    struct ad_buf ready; /* READY entries of its subtree */
};

struct ad_tree {
    int root;
    int node;
    int fanout;
    double launch_timeout;
    struct ad_link parent; /* remote: fds 0 and 1 */
    struct ad_link *kids;
    int nkids;
    /* the job */
    struct ad_buf setup; /* SETUP payload; the remote's strings point into it */
    const struct mpirun_opts *opts;
    struct mpirun_opts ropts; /* remote: rebuilt from SETUP */
    char **hosts;
    int nhosts;
    int *host_of; /* [size] */
    int size;
    const char *jobid, *cwd, *exe, *rsh;
    char **env; /* remote: mpirun's environment */
    int nenv;
    /* progress */
    int started;
    int stdin_inflight;
    int done_sent;
    int exiting;
    double exit_deadline;
    struct ad_buf ready; /* own READY entries (node, key, host name) */
    int ready_sent;
    /* root: what spawns need */
    char (*hostkey)[UTIL_NODE_KEY_CAP]; /* [nhosts] node key of each host */
    char (*hostname)[256];              /* [nhosts] its gethostname() */
    char (*hostgw)[440];                /* [nhosts] its gateway daemon: "<port>:<networks>" */
    pid_t gw_pid;                       /* remote: this host's gateway daemon, 0: none */
    int place_host, place_used;         /* the next free slot: host, slots of it taken this pass */
};

struct ad_cursor {
    const char *p, *end;
    int bad;
};

/* big-endian 32-bit fields of a frame's header */
void ad_put32(unsigned char *p, uint32_t v);
uint32_t ad_get32(const unsigned char *p);
/* A frame (type, arg, payload) queued on l and written as far as it goes; flush writes
 * more of the queue; close closes its fds and frees its buffers. */
void ad_link_flush(struct ad_link *l);
void ad_link_send(struct ad_link *l, int type, int32_t arg, const void *payload, size_t len);
void ad_link_close(struct ad_link *l);
struct ad_tree *ad_t(struct ad_daemon *d);
/* child l's subtree is done (or gone); 1 when pred holds for every child */
int ad_kid_finished(const struct ad_link *l);
int ad_kids_all(const struct ad_tree *t, int (*pred)(const struct ad_link *));
/* the next NUL-terminated string of a payload (c->bad and "" past its end), or an integer
 * in [lo, hi] written as one (c->bad and lo otherwise) */
const char *ad_take(struct ad_cursor *c);
long ad_take_int(struct ad_cursor *c, long lo, long hi);
/* The child of this node whose subtree holds node v (NULL if none). */
struct ad_link *ad_tree_kid_toward(struct ad_tree *t, int v);
/* Sends a frame to every child whose subtree runs processes of the job. */
void ad_job_send_down(struct ad_tree *t, const struct ad_job *job, int type, const void *p,
                      size_t len);
/* 1 at mpirun (the root), 0 on another host's daemon. */
int ad_tree_is_root(struct ad_daemon *d);
/* A reply that travels down the tree to process `tag` of a job on host `origin` (the fields
 * its message starts with): passed on toward that host, or, here, the process if it still
 * listens. NULL when passed on, malformed, or nobody is left to answer. */
struct ad_proc *ad_rep_route(struct ad_tree *t, const struct ad_cursor *c, int origin,
                             struct ad_job *job, int tag, int type, const char *p, size_t len);
/* Reads exactly len bytes from fd 0 within timeout_s. */
int ad_read_full(int fd, void *buf, size_t len, double deadline);

#endif
