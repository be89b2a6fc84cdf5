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
/* the job's segments go (its memfds closed) */
void ad_seg_job_end(const char *jobid);

#endif
