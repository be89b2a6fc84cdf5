/* Unit test of the gateway route rule and the route file (src/fabric/gw/gw_route.c,
 * docs/gateway.md "The route rule"): the (a + b) % n rule, a rule by hosts and by networks
 * (either way round, first match wins), a rule whose gateway cannot serve the pair, the
 * one-line form mpirun passes (';', line numbers kept), and bad lines named by number; the
 * interfaces and networks DCFA_NET_EXCLUDE leaves out of a host's networks (src/util/net.c). */
#include "fabric/gw/gw_route.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ut_check.h"

static util_net net(const char *s)
{
    util_net n = {0};
    if (util_net_parse(s, strlen(s), &n, 1) != 1)
        errors++;
    return n;
}

static void bad(const char *text, const char *want)
{
    gw_rule r[4];
    char err[200] = "";
    int n = gw_routes_parse(text, '\n', r, 4, err, sizeof err);
    CHECK(n == -1 && strstr(err, want), "'%s': got %d, '%s', want an error with '%s'", text, n, err,
          want);
}

int main(void)
{
    /* two gateways on both networks, one on A only (a gateway of another pair of networks) */
    gw_known g[3] = {
        {.host = "g1", .usable = 1}, {.host = "g2", .usable = 1}, {.host = "g3", .usable = 1}};
    g[0].nn = util_net_parse("10.77.1.101/24,10.77.2.101/24", 29, g[0].nets, UTIL_NET_MAX);
    g[1].nn = util_net_parse("10.77.1.102/24,10.77.2.102/24", 29, g[1].nets, UTIL_NET_MAX);
    g[2].nn = util_net_parse("10.77.1.103/24,10.77.9.103/24", 29, g[2].nets, UTIL_NET_MAX);
    util_net c1 = net("10.77.1.1/24"), c2 = net("10.77.1.2/24"), b1 = net("10.77.2.1/24");
    int rule;

    /* the rule: candidates g1, g2 (g3 has no network of b1's); (a + b) % 2 */
    CHECK(gw_route_pick(g, 3, NULL, 0, 0, "c1", &c1, 1, 2, "b1", &b1, 1, &rule) == 0 && rule == -1,
          "ranks 0,2: g1");
    CHECK(gw_route_pick(g, 3, NULL, 0, 1, "c1", &c1, 1, 2, "b1", &b1, 1, &rule) == 1,
          "ranks 1,2: g2");
    CHECK(gw_route_pick(g, 3, NULL, 0, 2, "b1", &b1, 1, 1, "c1", &c1, 1, &rule) == 1,
          "both ends choose the same");
    g[1].usable = 0; /* not connected (lost): only g1 remains */
    CHECK(gw_route_pick(g, 3, NULL, 0, 1, "c1", &c1, 1, 2, "b1", &b1, 1, &rule) == 0,
          "g2 unusable");
    g[1].usable = 1;
    util_net x = net("10.99.0.1/24");
    CHECK(gw_route_pick(g, 3, NULL, 0, 0, "c1", &c1, 1, 1, "x1", &x, 1, &rule) == -1, "no gateway");

    /* a route file: comments, blank lines, a rule by hosts, one by networks */
    const char *file = "# routes\n"
                       "\n"
                       "c1 b1 g2   # this pair through g2\n"
                       "10.77.2.0/24 10.77.1.0/24 g1\n"
                       "c2 b1 g3\n";
    gw_rule r[8];
    char err[200] = "";
    int n = gw_routes_parse(file, '\n', r, 8, err, sizeof err);
    CHECK(n == 3, "parsed %d rules (%s)", n, err);
    CHECK(n == 3 && r[0].line == 3 && r[1].line == 4 && r[2].line == 5 && !strcmp(r[0].gw, "g2") &&
              !strcmp(r[0].a.host, "c1") && r[1].a.host[0] == 0 && r[1].b.net.prefix == 24,
          "rules as written");
    /* c1-b1: the hosts' rule, either way round, whatever the ranks */
    CHECK(gw_route_pick(g, 3, r, n, 0, "c1", &c1, 1, 2, "b1", &b1, 1, &rule) == 1 && rule == 0,
          "c1-b1 by the host rule: g2");
    CHECK(gw_route_pick(g, 3, r, n, 2, "b1", &b1, 1, 0, "c1", &c1, 1, &rule) == 1 && rule == 0,
          "b1-c1 by the host rule: g2");
    /* c2-b1: the network rule (line 4) matches first: g1 */
    CHECK(gw_route_pick(g, 3, r, n, 1, "c2", &c2, 1, 2, "b1", &b1, 1, &rule) == 0 && rule == 1,
          "c2-b1 by the network rule: g1");
    /* a rule whose gateway shares no network with the pair is not followed */
    gw_rule r3[1];
    CHECK(gw_routes_parse("c2 b1 g3", '\n', r3, 1, err, sizeof err) == 1, "one rule");
    CHECK(gw_route_pick(g, 3, r3, 1, 1, "c2", &c2, 1, 2, "b1", &b1, 1, &rule) == 1 && rule == -1,
          "g3 cannot serve c2-b1: the list's rule");
    /* the rule's gateway lost: the other one */
    g[1].usable = 0;
    CHECK(gw_route_pick(g, 3, r, n, 0, "c1", &c1, 1, 2, "b1", &b1, 1, &rule) == 0 && rule == -1,
          "g2 lost: g1");
    g[1].usable = 1;

    /* mpirun's form: the lines without comments, joined by ';' (numbers kept) */
    n = gw_routes_parse(";;c1 b1 g2   ;10.77.2.0/24 10.77.1.0/24 g1", ';', r, 8, err, sizeof err);
    CHECK(n == 2 && r[0].line == 3 && r[1].line == 4, "';' form: %d rules", n);

    bad("c1 b1\n", "line 1: expected 'SIDE SIDE GATEWAY'");
    bad("\n# x\nc1 b1 g1 g2\n", "line 3: expected");
    bad("c1 10.77.1.0/33 g1\n", "line 1: '10.77.1.0/33' is not a side");
    bad("c1 b1 10.0.0.1/8\n", "line 1: '10.0.0.1/8' is not a gateway host");
    bad("c1 b;1 g1\n", "line 1: 'b;1' is not a side");
    bad("a b g\na b g\na b g\na b g\na b g\n", "line 5: more than 4 rules");

    /* DCFA_NET_EXCLUDE: interfaces by name and networks; a bad network is ignored */
    setenv("DCFA_NET_EXCLUDE", "eth9,10.77.9.0/24,10.1.0.0/33,lo", 1);
    CHECK(util_net_excluded("eth9", 0x0a000001), "eth9 by name");
    CHECK(util_net_excluded("eth1", 0x0a4d0965), "10.77.9.101 on 10.77.9.0/24");
    CHECK(!util_net_excluded("eth1", 0x0a4d0165), "10.77.1.101 kept");
    CHECK(!util_net_excluded("eth", 0x0a010001), "eth kept (names whole, 10.1.0.0/33 bad)");
    CHECK(util_net_excluded("lo", 0x7f000001), "lo by name");
    CHECK(!util_net_excluded("eth90", 0x0a000001), "eth90 kept");
    unsetenv("DCFA_NET_EXCLUDE");
    CHECK(!util_net_excluded("eth9", 0x0a4d0965), "nothing excluded without it");

    if (errors)
        return 1;
    printf(" No Errors\n");
    return 0;
}
