/* ad_tree.c: the tree of assist daemons at run time: the frames' dispatch (ad_link.h
 * lists them), the tree's start once every daemon is up, and its part of the loop. */
#ifndef DCFA_AD_TREE_H
#define DCFA_AD_TREE_H

#include "ad_link.h"

/* d->tree is set: the tree's fds, deadline and events join the loop (ad_reactor.h), and
 * the other hosts' endpoints (ad_ep_remote.c). */
void ad_tree_attach(void);
/* Every child is READY: the root starts the job, a daemon reports up. */
void ad_tree_check_ready(struct ad_daemon *d, struct ad_tree *t);

#endif
