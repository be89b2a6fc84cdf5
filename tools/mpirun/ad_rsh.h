/* ad_rsh.c: remote start: a child daemon started through the remote-start command (DCFA_RSH,
 * quoting its command line), its stderr, its loss, and the cleanup of a lost one's host. */
#ifndef DCFA_AD_RSH_H
#define DCFA_AD_RSH_H

#include "ad_link.h"

/* this host runs a gateway daemon for the job: named in DCFA_GATEWAY_HOSTS (mpirun
 * --gateways, in the environment SETUP carries) */
int ad_is_gateway_host(const char *host);
/* 1 when host is started directly, without the remote-start command (localhost, this
 * machine). */
int ad_host_is_local(const char *host);
/* Starts the daemon of child l; its failure is found by the loop. */
void ad_kid_start(struct ad_daemon *d, struct ad_tree *t, struct ad_link *l);
/* Child l is gone (its input ended, its start process ended, or it did not
 * answer in time): end the job unless it had finished. */
void ad_kid_lost(struct ad_daemon *d, struct ad_tree *t, struct ad_link *l, const char *why);
/* What child l writes on stderr: kept for the error message until its HELLO, then passed
 * on. */
void ad_kid_err_input(struct ad_link *l);

#endif
