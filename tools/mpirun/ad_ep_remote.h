#ifndef DCFA_AD_EP_REMOTE_H
#define DCFA_AD_EP_REMOTE_H

#include "ad.h"

struct sock_ep_msg;

/* ad_ep_remote.c: endpoints across hosts. ad_epr_listen: a remote daemon's data port, its
 * "<port>;<networks>" for EPADDR (or "" when it cannot listen); ad_epr_note: mpirun keeps
 * node's; ad_epr_map: mpirun's EPMAP (the job's key, every node's), ad_epr_set_map: a daemon
 * takes it; ad_epr_request: p's request for a rank on another host (its daemon is asked). */
const char *ad_epr_listen(void);
void ad_epr_note(int node, int nnodes, const char *info, size_t len);
int ad_epr_map(struct ad_buf *b, int nnodes);
int ad_epr_set_map(int nnodes, const char *p, size_t len);
/* the data port and the handshakes join the loop (a source of the reactor) */
void ad_epr_attach(void);
void ad_epr_request(struct ad_daemon *d, struct ad_job *mine, struct ad_proc *p,
                    struct ad_job *peer, const struct sock_ep_msg *req);
void ad_epr_close(void);
/* between two mpiruns on one host (docs/launcher.md "Endpoints between two mpiruns"): d
 * listens for other mpiruns' daemons at "@dcfa-ad-<its mpirun's part of jobid>" and asks them
 * for what its ranks request of their jobs; 0, or -errno when it cannot listen (it still asks) */
int ad_epf_listen(struct ad_daemon *d, const char *jobid);

#endif
