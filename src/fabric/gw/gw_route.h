/* Which gateway a pair takes (docs/gateway.md, "The route rule"), shared by the gw fabric
 * (gw.c), mpirun (--gateway-routes: the file is checked before anything starts) and mpiinfo
 * (--routes). Needs only util_net (src/util/net.c, which mpirun compiles in too) and libc.
 *
 * A route file has one rule a line, "SIDE SIDE GATEWAY": the pairs of a process on one side
 * and a process on the other (either way round) go through GATEWAY. A side is a host name or
 * a network "a.b.c.d/n" (a module: every host with an interface on it). '#' begins a comment;
 * blank lines are skipped. The first rule that matches a pair wins; a pair no rule matches,
 * or whose rule names a gateway it cannot use, takes the rule of the gateway list:
 * candidate (a + b) % n, a and b the two ranks. */
#ifndef DCFA_GW_ROUTE_H
#define DCFA_GW_ROUTE_H

#include "util/util.h"

#include <stddef.h>

enum { GW_ROUTE_NAME_MAX = 64, GW_ROUTES_MAX = 64 };

typedef struct gw_side {
    char host[GW_ROUTE_NAME_MAX]; /* "" when the side is a network */
    util_net net;
} gw_side;

typedef struct gw_rule {
    gw_side a, b;
    char gw[GW_ROUTE_NAME_MAX];
    int line; /* in the file, from 1 */
} gw_rule;

/* Parse rules from text whose lines end at sep: '\n' in a file; ';' in DCFA_GATEWAY_ROUTES,
 * where mpirun passes the file's lines without their comments, one entry a line, so the
 * numbers stay the file's. The count, or -1 with err naming the line ("line 3: ..."). */
int gw_routes_parse(const char *text, char sep, gw_rule *rules, int max, char *err, size_t errlen);

/* 1 if the process on host `host` with networks nets[nn] is on side s */
int gw_side_has(const gw_side *s, const char *host, const util_net *nets, int nn);

/* The first rule for the pair (host ha with networks na, host hb with nb), either way
 * round: its index, or -1. */
int gw_routes_find(const gw_rule *rules, int n, const char *ha, const util_net *na, int nna,
                   const char *hb, const util_net *nb, int nnb);

/* A gateway as a rank knows it (DCFA_GATEWAYS: "host:port:networks;..."). */
typedef struct gw_known {
    char host[GW_ROUTE_NAME_MAX];
    util_net nets[UTIL_NET_MAX];
    int nn;
    int usable; /* this process is connected to it (or, for a table, could be) */
} gw_known;

/* One entry "host:port:networks" of DCFA_GATEWAYS (len bytes at s) into k (usable 0) and
 * *port: UTIL_OK or UTIL_EINVAL. */
int gw_known_parse(const char *s, size_t len, gw_known *k, unsigned *port);

/* The gateway of the pair (rank ra on host ha with networks na, rank rb on hb with nb) among
 * gws[ngw] in list order: the rule's gateway when a rule matches and that gateway is usable
 * and shares a network with both, else candidate (ra + rb) % n of the usable gateways that
 * share a network with both. Its index, or -1 (none); *rule gets the index of the rule
 * followed, or -1. */
int gw_route_pick(const gw_known *gws, int ngw, const gw_rule *rules, int nrules, int ra,
                  const char *ha, const util_net *na, int nna, int rb, const char *hb,
                  const util_net *nb, int nnb, int *rule);

#endif
