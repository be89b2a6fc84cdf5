/* ad_place.c: placement: which host runs each process (mpirun's block placement continued by
 * spawns, info host/hosts), the node of every rank from the node keys, the children a job
 * reaches, and host names compared. */
#ifndef DCFA_AD_PLACE_H
#define DCFA_AD_PLACE_H

#include "ad_link.h"

/* Root: the next free slot of mpirun's host list (its block placement,
 * continued after job 0 and the spawns before). */
int ad_place_next(struct ad_tree *t);
/* Root: the host of every process of the request (host_of[total]): info
 * host/hosts ("a,b:2": by blocks of their slots, pass after pass), else the
 * next free slots. 0, or -1 with the failure in res. */
int ad_place(struct ad_tree *t, const struct ad_spawn_req *req, int *host_of,
             struct ad_spawn_result *res);
/* The part of a job whose rank r runs on host host_of[r] (node host + 1). */
struct ad_jtree *ad_jtree_new(struct ad_tree *t, const int *host_of, int size);
/* The tree node (host index + 1) rank of job runs on; -1 if not known (a spawned job). */
int ad_tree_rank_node(struct ad_daemon *d, const struct ad_job *job, int rank);
/* The node of every rank from the subtree's (node, key) entries and the
 * DCFA_NODE_KEY a rank's environment sets (root only). */
int ad_tree_node_of(struct ad_tree *t, int *node_of);
/* 1 when host names a and b name one host: equal, or "h" and "h.domain". */
int ad_same_host(const char *a, const char *b);

#endif
