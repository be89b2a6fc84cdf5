/* ad_pmi_reply.c: what the daemon sends a rank over its PMI channel. */
#ifndef DCFA_AD_PMI_REPLY_H
#define DCFA_AD_PMI_REPLY_H

#include "ad.h"

/* msg to p's PMI channel (a rank that does not read its replies ends the job); send2: a
 * PMI-2 message, framed by its length. */
void ad_pmi_send(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p, const char *msg);
void ad_pmi_send2(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p, const char *body);
/* The job's fence completed everywhere: release the local ranks. */
void ad_pmi_fence_done(struct ad_daemon *d, struct ad_job *job);
/* The answer to proc p's spawn request (sent at once on one host, when
 * mpirun answers across hosts). */
void ad_pmi_spawn_reply(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p,
                        struct ad_spawn_result *res);
/* The answer to a name request of proc p (done here, or come back down the tree). */
void ad_pmi_name_reply(struct ad_daemon *d, struct ad_proc *p, int op, int rc, const char *port);

#endif
