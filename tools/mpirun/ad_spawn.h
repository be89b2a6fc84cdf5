/* ad_spawn.c: the spawn path in one place: a rank's request goes up to mpirun (encoded), is
 * placed there (ad_place.h), sent down to the hosts that run it, checked and started on each
 * (ad_spawn_local, ad_spawn_run on one host), and answered once every subtree answered. */
#ifndef DCFA_AD_SPAWN_H
#define DCFA_AD_SPAWN_H

#include "ad_link.h"

/* Across hosts: a complete, checked spawn request of proc p goes up to mpirun, which
 * places it and answers through ad_pmi_spawn_reply. 0, or -1 with the failure in res
 * (answer it now). */
int ad_tree_spawn_request(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p,
                          const struct ad_spawn_req *req, struct ad_spawn_result *res);
/* A SPAWN_REP from above: for one of this node's processes, or further down. */
void ad_spawn_rep(struct ad_daemon *d, struct ad_tree *t, const char *p, size_t len);
/* Root: a rank's spawn. Checked and placed here, named (job number, id),
 * then checked by the daemons of its hosts (SPAWN_JOB) and, once every one
 * answered that its part can run, started (SPAWN_GO); the answer goes back
 * once they all answered the start (ad_spawn_ack). */
void ad_root_spawn(struct ad_daemon *d, struct ad_tree *t, const char *p, size_t len);
/* SPAWN_JOB (and the root's own spawn): this daemon's part of a spawned
 * job: "num\0jobid\0spawner\0origin\0ojob\0tag\0size\0" (host, node) x
 * size, then the request. */
void ad_spawn_job_in(struct ad_daemon *d, struct ad_tree *t, const char *p, size_t len);
/* SPAWN_ACK from child l: its subtree's part of the job, started or failed. */
void ad_spawn_ack(struct ad_daemon *d, struct ad_tree *t, struct ad_link *l, struct ad_job *job,
                  const char *p, size_t len);
/* SPAWN_KILL: the job failed to start somewhere; its processes here go (not
 * judged: the spawner is told). */
void ad_spawn_kill(struct ad_daemon *d, struct ad_tree *t, struct ad_job *job);
/* SPAWN_GO (and the root's own, once every host checked its part): the job's processes
 * here start; the subtree answers again (ad_spawn_ack) with what the starts did. */
void ad_spawn_go(struct ad_daemon *d, struct ad_tree *t, struct ad_job *job);
/* Each round: spawned jobs whose processes here and below all ended are
 * reported up (JOB_DONE) and may then be freed here. */
void ad_jobs_done_check(struct ad_daemon *d, struct ad_tree *t);
/* One host: runs a complete spawn request of proc p (job): checks it, adds the new job
 * and starts its processes on this host. */
void ad_spawn_run(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p,
                  const struct ad_spawn_req *req, struct ad_spawn_result *res);

/* Across hosts: this daemon's part of a spawn that mpirun placed. Builds the job
 * (ranks[nranks] here, node_of[size] of every rank) and adds it to the table, its programs
 * checked but not started (ad_spawn_go starts them once every host's part checked); the
 * outcome is in res (rc 0 or the first failure). 0, or -ENOMEM when not even the job could
 * be made. */
int ad_spawn_local(struct ad_daemon *d, const struct ad_spawn_req *req, int num, const char *jobid,
                   const char *spawner, const int *ranks, int nranks, const int *node_of,
                   struct ad_spawn_result *res, struct ad_job **out);
/* PMI-1: a line of a "mcmd=spawn" block of proc p; the request is checked and run (or sent
 * up to mpirun) after its last block, and answered through ad_pmi_spawn_reply. */
void ad_spawn_line(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p, const char *line);
/* PMI-2: a "cmd=spawn" message of proc p, run and answered as above. */
void ad_spawn_msg2(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p, const char *msg);

#endif
