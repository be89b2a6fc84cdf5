/* Shared-memory segments handed over to ranks under --isolate shm (ad_seg.c). */
#ifndef AD_SEG_H
#define AD_SEG_H

#include <stddef.h>

struct ad_job;
struct ad_proc;

/* one message of p's endpoint channel: handled (1: a segment request, answered) or not (0);
 * jobs: the daemon's, whose names p may open and remove when they end in their creator's
 * random tag (any job of this mpirun: ad_seg.c) */
int ad_seg_request(struct ad_job *const *jobs, int njobs, struct ad_job *job, struct ad_proc *p,
                   const void *buf, size_t len);
/* a rank's OPEN or REMOVE of a tagged name of another mpirun's job (ad_ep_remote.c asks that
 * mpirun's daemon): set by ad_epf_listen; without one such names are refused */
typedef void (*ad_seg_foreign_fn)(struct ad_job *job, struct ad_proc *p, int op, const char *name,
                                  unsigned long long size, unsigned seq);
void ad_seg_set_foreign(ad_seg_foreign_fn fn, int (*is_foreign)(const char *jobid));
/* one answer to p's request seq (type SEG_GRANT with fd, SEG_REFUSE with text, SEG_DONE) */
void ad_seg_reply(struct ad_proc *p, unsigned seq, const char *name, unsigned long long size,
                  int type, int status, int fd, const char *text);
/* for another mpirun's daemon: fn(name, size, fd, ctx) for each segment of job until it
 * returns nonzero (returned); ad_seg_drop: the name goes (REMOVE) */
int ad_seg_each(const char *job,
                int (*fn)(const char *name, unsigned long long size, int fd, void *ctx), void *ctx);
void ad_seg_drop(const char *job, const char *name);
/* the job's segments go (its memfds closed) */
void ad_seg_job_end(const char *jobid);

#endif
