/* ad_fence.c: fences and names across hosts: a job's fence counted over the subtrees that run
 * it, the news of a process that exited without MPI_Init, and the name requests answered at
 * mpirun and routed back. */
#ifndef DCFA_AD_FENCE_H
#define DCFA_AD_FENCE_H

#include "ad_link.h"

/* The job's fence is complete below this node: go up, or (root) release
 * everyone. A daemon without processes of the job is in as soon as its
 * children are. */
void ad_fence_check(struct ad_tree *t, struct ad_job *job);
/* All local ranks entered the fence: go up (or complete at the root). */
void ad_tree_fence(struct ad_daemon *d, struct ad_job *job);
/* FENCE_OUT from above: the pairs put since the last fence; the local ranks go on. */
void ad_fence_out(struct ad_daemon *d, struct ad_tree *t, struct ad_job *job, const char *p,
                  size_t len);
/* A process of job exited without PMI init (ad_job_noinit): the root notes it and tells
 * every daemon with processes of the job, with its grace time; a daemon passes it up. */
void ad_noinit_root(struct ad_daemon *d, struct ad_tree *t, struct ad_job *job, const char *who);
void ad_tree_noinit(struct ad_daemon *d, struct ad_job *job, const char *who);
/* NOINIT from above. */
void ad_noinit_in(struct ad_tree *t, struct ad_job *job, const char *p, size_t len);
/* A name request of local rank index tag of job number jobnum goes up to
 * mpirun; the answer comes back through ad_pmi_name_reply. */
void ad_tree_name_request(struct ad_daemon *d, int jobnum, int tag, int op, const char *service,
                          const char *port);
/* A NAME_REQ from below: mpirun answers it, a daemon passes it up. */
void ad_name_req(struct ad_daemon *d, struct ad_tree *t, const char *p, size_t len);
/* A NAME_REP from above: for one of this node's ranks, or further down. */
void ad_name_rep(struct ad_daemon *d, struct ad_tree *t, const char *p, size_t len);

#endif
