/* ad_tree_main.c: the entry points: mpirun's job on one host (ad_run) or across hosts
 * (ad_tree_run), a remote host's daemon (ad_remote_main) and the cleanup of a lost one's host
 * (ad_cleanup_main). */
#ifndef DCFA_AD_TREE_MAIN_H
#define DCFA_AD_TREE_MAIN_H

#include "ad.h"

/* "mpirun --dcfa-daemon": a daemon of another host. */
int ad_remote_main(void);
/* "mpirun --dcfa-cleanup JOBID": on a host whose daemon died, kill the
 * processes of the job (DCFA_JOBID=JOBID in their environment, our user's)
 * and remove its files. */
int ad_cleanup_main(const char *jobid);
/* mpirun's job: on this host (the daemon runs in this process), or across the hosts of
 * opts->hosts (ad_tree_run: the root of the tree). */
int ad_run(const struct mpirun_opts *opts);

#endif
