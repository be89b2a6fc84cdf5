#ifndef DCFA_AD_EP_H
#define DCFA_AD_EP_H

#include "ad.h"
#include "util/util.h"

/* ad_ep.c: endpoints handed over to the ranks (the sock fabric), and their confinement.
 * ad_ep_pair: the endpoint channel and token of p before it starts (the rank's end in
 * *child_fd); ad_ep_child_env: in the child, DCFA_SOCK_EP_FD and DCFA_SOCK_TOKEN;
 * ad_ep_input: p's requests, each granted (a connected socket to each end) or refused. */
struct sock_ep_msg;
int ad_ep_pair(struct ad_proc *p, int *child_fd);
void ad_ep_child_env(const struct ad_proc *p, int child_fd);
void ad_ep_input(struct ad_daemon *d, struct ad_job *job, struct ad_proc *p);
/* the ranks' endpoint channels are read through ad_ep_input (ad_reactor_handle) */
void ad_ep_attach(void);
/* who is asked for a rank on another host (ad_epr_request, set by ad_epr_attach): without
 * one the request is refused. mine: p's job; peer: the peer's job when this daemon runs part
 * of it (else NULL: the request's job id and node hint name it) */
typedef void (*ad_ep_remote_fn)(struct ad_daemon *d, struct ad_job *mine, struct ad_proc *p,
                                struct ad_job *peer, const struct sock_ep_msg *req);
void ad_ep_set_remote(ad_ep_remote_fn fn);
/* a REQUEST for a job of another mpirun (is_foreign(jobid)) goes to fn (ad_ep_remote.c) */
typedef void (*ad_ep_foreign_fn)(struct ad_daemon *d, struct ad_job *mine, struct ad_proc *p,
                                 const struct sock_ep_msg *req);
void ad_ep_set_foreign(int (*is_foreign)(const char *jobid), ad_ep_foreign_fn fn);
/* this daemon's tree node across hosts (ad_tree.c): the ranks' DCFA_SOCK_NODE */
void ad_ep_set_node(int node);
/* this daemon's data port and networks (ad_epr_listen's): the ranks' DCFA_SOCK_DADDR,
 * "<port>:<networks>", which their sock cards carry for the daemons of other mpiruns */
void ad_ep_set_daddr(int port, const util_net *nets, int nnets);
/* one message to p's endpoint channel with fd (or -1): 0 or -errno; a REFUSE of req to p */
int ad_ep_send(struct ad_proc *p, const struct sock_ep_msg *m, int fd);
void ad_ep_refuse(struct ad_proc *p, const struct sock_ep_msg *req, int status, const char *fmt,
                  ...) __attribute__((format(printf, 4, 5)));
#define AD_ISOLATE_NET     1 /* a network namespace with only loopback */
#define AD_ISOLATE_SECCOMP 2 /* a filter: no socket but AF_UNIX (ad_seccomp.c) */
#define AD_ISOLATE_SHM     4 /* an empty read-only /dev/shm; segments from the daemon (ad_seg.c) */
/* the modes of "--isolate net[,...]" / DCFA_ISOLATE (AD_ISOLATE_*), or -EINVAL with err */
int ad_isolate_parse(const char *spec, char *err, size_t cap);
/* in the child before exec: confine it as modes ask; 0, or -errno with err */
int ad_isolate_child(int modes, char *err, size_t cap);
/* in the child: its own uid and gid mapped in the user namespace it just made (0 or -errno) */
int ad_isolate_idmap(uid_t uid, gid_t gid);
/* in the child before exec (--isolate shm): an empty read-only /dev/shm in a mount namespace
 * of its own; 0, or -errno with err */
int ad_isolate_shm(char *err, size_t cap);

#endif
