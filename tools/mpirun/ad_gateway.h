/* The gateway daemon (ad_gateway.c, docs/gateway.md). */
#ifndef DCFA_AD_GATEWAY_H
#define DCFA_AD_GATEWAY_H

#include <stddef.h>
#include <sys/types.h>

/* On a gateway host: start the job's gateway daemon (forked; it ends with this process).
 * info gets "<port>:<networks>" (address/prefix, ',' between) for READY; on failure a
 * negative errno and one line "mpirun: ..." in err (a host with fewer than two networks). */
int ad_gateway_start(const char *host, char *info, size_t infolen, pid_t *pid, char *err,
                     size_t errlen);

/* "mpirun --gateway-daemon": one gateway daemon on this host, without a daemon tree */
int ad_gateway_main(int argc, char **argv);

#endif
