/* ad: the assist daemon (one per node per job run). On the launch node it
 * runs inside the mpirun process; see docs/launcher.md.
 *
 * It owns a table of jobs (one today; spawned jobs later), starts their
 * ranks, serves PMI-1 on each rank's socketpair, forwards stdio, collects
 * exit statuses and ends/cleans up the job.
 */
#ifndef DCFA_AD_H
#define DCFA_AD_H

#include "assist/assist.h"
#include "assist/pmi_wire.h"
#include "mpirun.h"

#include <stddef.h>
#include <sys/types.h>

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

/* ---- output forwarding (ad_io.c) ----------------------------------------- */

#define AD_IO_BUF (64 * 1024)

struct ad_stream {
    int fd;  /* read end of the rank's pipe, -1 once closed */
    int out; /* where it goes: 1 or 2 */
    int rank;
    int prefix; /* -l */
    int at_line_start;
    char *pend; /* -l: incomplete last line */
    size_t plen;
};

void ad_stream_init(struct ad_stream *s, int fd, int out, int rank, int prefix);
/* Reads what is there and forwards it; closes the stream at EOF/error. */
void ad_stream_read(struct ad_stream *s);
void ad_stream_close(struct ad_stream *s);
/* Writes everything to fd 1 or 2 (EINTR/EAGAIN handled); a broken output is
 * remembered and later output to it is dropped. */
void ad_io_write(int out, const char *buf, size_t len);

/* ---- jobs ------------------------------------------------------------------ */

struct ad_proc {
    int rank;
    int appnum;
    pid_t pid;   /* also its process group id; 0 = not started */
    int running; /* started and not yet reaped */
    int pmi_fd;  /* daemon end of the PMI socketpair, -1 when closed */
    char pmi_in[ASSIST_WIRE_LINE_MAX];
    size_t pmi_inlen;
    int pmi_inited;
    int pmi_finalized;
    int in_barrier;
    struct ad_stream out, err;
};

struct ad_job {
    char jobid[ASSIST_JOBID_MAX + 1];
    char kvsname[64];
    int size;
    struct ad_proc *procs;
    struct ad_kvs kvs;
    int barrier_count;
    int nrunning;
};

enum ad_phase {
    AD_RUN,  /* normal operation */
    AD_DUMP, /* timed out: SIGUSR1 sent, waiting for the dumps */
    AD_TERM, /* SIGTERM sent */
    AD_KILL, /* SIGKILL sent */
};

struct ad_daemon {
    struct ad_job **jobs;
    int njobs;
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
    int stdin_open; /* still reading fd 0 */
    int stdin_pipe; /* write end to rank 0, -1 when closed */
    char *stdin_buf;
    size_t stdin_len;
};

/* ad_daemon.c */
int ad_run(const struct mpirun_opts *opts);
/* Records the first reason the job ends (later ones are ignored) and starts
 * terminating the ranks. msg is printed to stderr at the end of the run. */
void ad_daemon_end(struct ad_daemon *d, int exit_code, const char *msg);

/* ad_pmi.c: reads once from the rank's channel and handles every complete
 * line. Returns 1 if data was read, 0 if none was waiting or it closed. */
int ad_pmi_input(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p);

#endif
