/* ad: the assist daemon (one per host per job run). On the launch node it
 * runs inside the mpirun process; on other hosts it is "mpirun --dcfa-daemon"
 * started through a remote-start command. See docs/launcher.md.
 *
 * It owns a table of jobs (the one mpirun started, then those its ranks
 * spawn), starts their ranks, serves PMI-1/PMI-2 on each rank's socketpair
 * (key/value exchange, spawn, name service), forwards stdio, collects exit
 * statuses and ends/cleans up the jobs. Across hosts the daemons form a tree
 * rooted at mpirun (ad_tree.c, ad_link.h); each talks to its parent and to at most
 * DCFA_TREE_FANOUT children.
 *
 * This header holds what every file of the daemon shares: its types (buffers, the
 * key/value store, output streams, spawn requests, jobs, the daemon) and the job table's
 * functions (ad_daemon.c, ad_kvs.c, ad_io.c). Each other file has its own header, and no
 * file calls one that calls it back: they meet through the reactor (ad_reactor.h).
 * docs/launcher.md, "The daemon's structure".
 */
#ifndef DCFA_AD_H
#define DCFA_AD_H

#include "assist/assist.h"
#include "assist/pmi_wire.h"
#include "mpirun.h"
#include "ad_reactor.h"

#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#define AD_DAEMON_OPTION  "--dcfa-daemon"
#define AD_CLEANUP_OPTION "--dcfa-cleanup"
/* "mpirun --dcfa-singleton FD JOBID": the daemon a singleton starts on demand
 * (src/assist/assist_pmi.c): FD is its end of the singleton's command
 * channel, JOBID the singleton's job id ("s<pid>"). */
#define AD_SINGLETON_OPTION "--dcfa-singleton"

/* ---- growable byte buffer ---------------------------------------------------- */

struct ad_buf {
    char *data;
    size_t len, cap;
};

int ad_buf_add(struct ad_buf *b, const void *data, size_t len);
int ad_buf_add_str(struct ad_buf *b, const char *s); /* with its NUL */
int ad_buf_add_int(struct ad_buf *b, long v);        /* decimal text with NUL */
void ad_buf_consume(struct ad_buf *b, size_t len);
void ad_buf_free(struct ad_buf *b);

/* ---- key/value store (ad_kvs.c) ------------------------------------------ */

struct ad_kv;
struct ad_kvs {
    struct ad_kv **buckets;
    size_t nbuckets;
    size_t count;
};

int ad_kvs_init(struct ad_kvs *kvs);
void ad_kvs_destroy(struct ad_kvs *kvs);
int ad_kvs_put(struct ad_kvs *kvs, const char *key, const char *value);
const char *ad_kvs_get(const struct ad_kvs *kvs, const char *key);
int ad_kvs_del(struct ad_kvs *kvs, const char *key); /* 0 or -ENOENT */

/* ---- name service (ad_kvs.c) ---------------------------------------------- */

enum ad_name_op {
    AD_NAME_PUBLISH = 1,
    AD_NAME_UNPUBLISH,
    AD_NAME_LOOKUP,
};

#define AD_NAMES_MAX 65536 /* names one table holds */

struct ad_daemon;
/* One publish/unpublish/lookup at the root (or on one host): sent to the
 * name server of DCFA_NAMESERVER when mpirun has it, else done on the
 * daemon's table. A lookup's port goes to port_out[cap]. Returns 0,
 * -EEXIST (published already), -ENOENT (not published), -EINVAL, -ENOSPC
 * (table full), -EHOSTUNREACH (the name server failed). */
int ad_name_do(struct ad_daemon *d, int op, const char *service, const char *port, char *port_out,
               size_t cap);

/* ---- output forwarding (ad_io.c) ----------------------------------------- */

#define AD_IO_BUF (64 * 1024)

struct ad_stream {
    int fd;  /* read end of the rank's pipe, -1 once closed */
    int out; /* where it goes: 1 or 2 */
    int job; /* its job's number: -l tags "[rank] " for 0, "[job,rank] " after */
    int rank;
    int prefix; /* -l */
    int at_line_start;
    char *pend; /* -l: incomplete last line */
    size_t plen;
};

void ad_stream_init(struct ad_stream *s, int fd, int out, int job, int rank, int prefix);
/* Reads what is there and forwards it; closes the stream at EOF/error. */
void ad_stream_read(struct ad_stream *s);
void ad_stream_close(struct ad_stream *s);
/* Writes everything to fd 1 or 2 (EINTR/EAGAIN handled); a broken output is
 * remembered and later output to it is dropped. On a remote host the output
 * goes to the parent daemon instead (ad_io_set_sink). */
void ad_io_write(int out, const char *buf, size_t len);
void ad_io_set_sink(void (*sink)(int out, const char *buf, size_t len));

/* ---- spawn requests (ad_spawn.c: parsed, placed and run) ----------------------- */

#define AD_SPAWN_MAX_CMDS  1024      /* commands in one spawn */
#define AD_SPAWN_MAX_ARGS  4096      /* arguments, info pairs or preput pairs of one kind */
#define AD_SPAWN_MAX_BYTES (1 << 20) /* text of one request */
#define AD_SPAWN_MAX_PROCS 4096      /* processes of one spawn (as mpirun -n) */

struct ad_spawn_cmd {
    char *command;
    int maxprocs; /* -1 until given */
    int argc;     /* -1 until given */
    int nargv, ninfok, ninfov;
    char **argv; /* [nargv]: arguments after the command, NULL where missing */
    int ninfo;   /* -1 until given */
    char **info_keys, **info_vals;
};

struct ad_spawn_req {
    int total; /* commands announced (totspawns, ncmds), -1 until given */
    int ncmds; /* commands received */
    struct ad_spawn_cmd *cmds;
    int npreput; /* -1 until given */
    int nppk, nppv;
    char **pp_keys, **pp_vals;
    size_t bytes;
    int in_block;  /* PMI-1: inside "mcmd=spawn" ... "endcmd" */
    int sofar;     /* PMI-1: spawnssofar of the last block */
    char err[300]; /* the first problem found in the request, "" = none */
};

void ad_spawn_req_free(struct ad_spawn_req *r);

/* The outcome of a spawn, for the reply. */
struct ad_spawn_result {
    int rc;     /* 0 or a negative errno */
    int errcmd; /* the command at fault, -1 = the spawn as a whole */
    char jobid[64 + 8];
    char msg[600];
};

/* ---- jobs ------------------------------------------------------------------ */

struct ad_proc {
    int rank;
    int appnum;
    int local_id, local_n; /* MPI_LOCALRANKID / MPI_LOCALNRANKS (its node) */
    pid_t pid;             /* also its process group id; 0 = not started */
    int running;           /* started and not yet reaped */
    int pmi_fd;            /* daemon end of the PMI socketpair, -1 when closed */
    int ep_fd;             /* daemon end of the endpoint channel (ad_ep.c), -1 when closed */
    uint64_t ep_token;     /* the rank's endpoint token (its sock card carries it) */
    char *pmi_in;          /* input not yet handled (allocated at the first read) */
    size_t pmi_inlen, pmi_incap;
    struct ad_spawn_req *spawn; /* PMI-1: a spawn whose blocks are arriving */
    int pmi_version;            /* 0 until init, then 1 or 2 (wire format) */
    int pmi_inited;
    int pmi_finalized;
    int in_barrier;
    int adopted; /* the singleton this daemon was started for: not our child,
                    running until it finalizes or ends; signalled alone, never
                    its process group */
    struct ad_stream out, err;
};

struct ad_job {
    int num; /* 0: the job mpirun started; n: the n-th spawned job */
    char jobid[ASSIST_JOBID_MAX + 1];
    char kvsname[64];
    char spawner[64];               /* kvsname of the spawning job, "" for job 0 */
    const struct mpirun_opts *opts; /* its programs */
    struct mpirun_opts *own;        /* a spawned job's programs (freed with it) */
    int discard;                    /* a spawn that failed: its ends are not judged */
    double done_at;                 /* spawned: when its last rank ended */
    int size;                       /* ranks in the job (all hosts) */
    int nprocs;                     /* ranks on this host: procs[] */
    struct ad_proc *procs;
    struct ad_kvs kvs;
    struct ad_buf kvs_new; /* "key\0value\0" put here since the last fence */
    char *mapping;         /* PMI_process_mapping value, NULL = none */
    int barrier_count;
    int nrunning;
    /* a process that exited 0 without PMI init (here or on another host) while
       others may be in MPI: they wait for it in vain (ad_job_noinit) */
    char noinit[400];    /* the first one: "rank 2 (pid 1234)", "" = none */
    double noinit_grace; /* seconds to give it */
    double noinit_check; /* when to look for processes here in MPI, 0 = not armed */
    /* across hosts (ad_tree.c): this job's part of the tree */
    struct ad_jtree *tree; /* NULL on one host */
};

enum ad_phase {
    AD_RUN,  /* normal operation */
    AD_DUMP, /* timed out: SIGUSR1 sent, waiting for the dumps */
    AD_TERM, /* SIGTERM sent */
    AD_KILL, /* SIGKILL sent */
};

struct ad_tree; /* ad_link.h: links to the parent and children daemons */

struct ad_daemon {
    struct ad_job **jobs; /* [0] the job mpirun started, then the spawned ones alive */
    int njobs, jobs_cap;
    int spawned;                    /* jobs spawned so far (numbers the next) */
    const struct mpirun_opts *opts; /* mpirun's command line; NULL: no spawn here */
    int universe;                   /* universe size */
    int no_oversubscribe;
    struct ad_kvs names;    /* published names (root or one host) */
    const char *nameserver; /* DCFA_NAMESERVER of mpirun: names go there */
    int sigfd;
    int prefix_output;
    int timeout;
    enum ad_phase phase;
    double phase_deadline; /* monotonic seconds, 0 = none */
    double timeout_deadline;
    double drain_deadline;
    int ended; /* end cause recorded (first failure wins) */
    int exit_code;
    char end_msg[1200];
    /* stdin of mpirun -> rank 0 of job 0 */
    int stdin_open; /* still reading fd 0 (or the tree delivers it) */
    int stdin_pipe; /* write end to rank 0, -1 when closed */
    char *stdin_buf;
    size_t stdin_len;
    /* several hosts */
    struct ad_tree *tree; /* NULL: one host, everything in this process */
    const char *host;     /* this host's name in messages, NULL on one host */
    int launched;         /* the local ranks were started (or never will be) */
    /* singleton mode (ad_singleton.c): job 0 is the adopted singleton */
    int singleton;
    int adopt_fd;        /* pidfd of the singleton, -1 = none (watched through its channel);
                            kept after its MPI_Finalize until its exit status is judged */
    int adopt_gone;      /* the pidfd said it ended */
    double adopt_retry;  /* ended, status not readable yet: look again then (0 = no) */
    double adopt_giveup; /* ... and stop looking then (the status counts as 0) */
};

/* Signals to a signalfd, subreaper, fd limit, stdin buffer; 0 or -1. */
int ad_daemon_setup(struct ad_daemon *d, sigset_t *oldmask);
/* Records the first reason the job ends (later ones are ignored) and starts
 * terminating the ranks. msg is printed to stderr at the end of the run (by
 * mpirun; a remote daemon sends it up the tree). */
void ad_daemon_end(struct ad_daemon *d, int exit_code, const char *msg);
/* Records the end cause if none was (1), without acting on it. */
int ad_daemon_record(struct ad_daemon *d, int exit_code, const char *msg);
void ad_enter_phase(struct ad_daemon *d, enum ad_phase phase);
/* Closes p's endpoint channel (ad_ep.c's). */
void ad_proc_close_ep(struct ad_proc *p);
/* The adopted singleton p (of job) is done: finalized, ended, or aborting (it exits
 * by itself, with its own status: it is not signalled). */
void ad_adopted_done(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p);
/* Sends sig to every local rank (group: to its process group). */
void ad_signal_all(struct ad_daemon *d, int sig, int to_group);
/* 1 when mpirun's stdin can be forwarded (open, and not a terminal that
 * would stop us with SIGTTIN). */
int ad_stdin_usable(void);
/* "rank 2" for job 0, "spawned job 1 rank 0" after: the start of messages. */
const char *ad_proc_label(const struct ad_job *job, const struct ad_proc *p, char *buf, size_t len);
/* Processes running now, every job. */
int ad_running(const struct ad_daemon *d);
/* 1 when every local rank is reaped and its output drained. */
int ad_local_done(struct ad_daemon *d);
/* A process of job, named by who ("rank 2 (pid 1234)"), exited with status 0
 * without PMI init: once grace seconds passed and as long as a process of the
 * job here is in MPI (PMI init, no finalize), the job ends naming both. The
 * first one counts; a later PMI init arms the check again (ad_job_noinit_arm). */
void ad_job_noinit(struct ad_job *job, const char *who, double grace);
void ad_job_noinit_arm(struct ad_job *job);
/* Frees the spawned jobs whose processes all ended (their files removed). */
void ad_jobs_reap(struct ad_daemon *d);
/* At the end: removes every job's files, frees the job table and the names. */
void ad_daemon_free(struct ad_daemon *d);
/* Computes the job's process mapping and each local rank's node-local id
 * from node_of[size] (the node index of every rank). */
int ad_job_set_nodes(struct ad_job *job, const int *node_of);
/* The loop shared by mpirun and the remote daemons; returns when the job is
 * over on this host and its subtree. */
int ad_loop(struct ad_daemon *d);
int ad_job_create(const struct mpirun_opts *opts, const char *jobid, const int *ranks, int nranks,
                  struct ad_job **out);
/* Appends a job to the table (0 or -ENOMEM). */
int ad_jobs_add(struct ad_daemon *d, struct ad_job *job);
/* One host: node ids from DCFA_NODE_KEY as the ranks would see it. */
int ad_job_local_nodes(const struct mpirun_opts *opts, struct ad_job *job);
void ad_job_destroy(struct ad_job *job);
/* Frees a spawned job's programs (struct ad_job.own). */
void ad_spawn_opts_free(struct mpirun_opts *o);
/* This daemon (the ranks' parent) and the fd limit it started with (restored in the ranks). */
pid_t ad_daemon_pid(void);
struct rlimit;
const struct rlimit *ad_daemon_nofile(void);
void ad_job_cleanup_files(const struct ad_job *job);
void ad_kill_stragglers(struct ad_daemon *d);
/* The node key of this host (util_node_key's definition), with DCFA_NODE_KEY
 * taken from env (NAME=VALUE list, later entries win) when set there. */
void ad_node_key(char *key, size_t cap, char *const *envs[], const int nenvs[], int nlists);
/* The value of name in env lists (NAME=VALUE, later entries win), NULL when unset. */
const char *ad_env_find(char *const *envs[], const int nenvs[], int nlists, const char *name);

/* A (spawned) job by its number, NULL when it is gone. */
struct ad_job *ad_job_by_num(struct ad_daemon *d, int num);

#endif
