#ifndef DCFA_AD_RELAY_H
#define DCFA_AD_RELAY_H

/* ad_relay.c: mpirun --relay (DCFA_RELAY=1), the daemon forwards the bytes. ad_relay_pair: a
 * relayed connection, sv[0] for the asker and sv[1] for the peer (0 or -errno); its epoll set
 * is a source of the reactor from the first. */
int ad_relay_enabled(void);
int ad_relay_pair(int sv[2]);
/* ad_relay_join: a relayed connection over fd, a connected socket the daemon holds (the TCP
 * connection to another host's daemon): the relay takes fd and returns the end for the rank
 * (or -errno, fd still the caller's) */
int ad_relay_join(int fd);

#endif
