/* ad_launch.c: starting a job's processes on this host: the child's environment, descriptors,
 * binding and confinement, then exec. */
#ifndef DCFA_AD_LAUNCH_H
#define DCFA_AD_LAUNCH_H

#include "ad.h"

/* Starts one rank of job. Returns 0, or a negative error with the exit
 * status it means in *code and a message in msg[len]. */
int ad_proc_launch(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p, int *code, char *msg,
                   size_t len);
/* Starts this host's ranks of the job (all its procs). */
void ad_launch_local(struct ad_daemon *d, const struct mpirun_opts *opts);

#endif
