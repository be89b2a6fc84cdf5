/* A TCP connection through one of the job's gateway daemons (docs/gateway.md "Ports through a
 * gateway"): for a process that must reach an address on a network it is not on, such as the
 * port of an MPI_Comm_accept on the other side of the gateways (a spawn onto it). */
#ifndef DCFA_GW_DIAL_H
#define DCFA_GW_DIAL_H

#include <stddef.h>
#include <stdint.h>

/* 1 if the job has gateways this process could ask (DCFA_GATEWAYS and its key are set) */
int fab_gw_can_dial(void);
/* A connected, non-blocking TCP socket to addr:port (host byte order) spliced through the
 * first gateway that shares a network with this host and with addr and makes the
 * connection, within timeout_ms (< 0: 60 s); or a negative UTIL_E* code with the reason in
 * why (every gateway tried). */
int fab_gw_dial(uint32_t addr, uint16_t port, int timeout_ms, char *why, size_t whylen);

#endif
