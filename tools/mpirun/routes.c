/* mpirun --gateway-routes FILE: the route file, checked before anything starts and passed to
 * the ranks as DCFA_GATEWAY_ROUTES (docs/gateway.md, "The route rule"). */
#include "mpirun.h"

#include "fabric/gw/gw_route.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the host named s among hosts [from, to) of o */
static int mpirun_routes_has(const struct mpirun_opts *o, int from, int to, const char *s)
{
    for (int i = from; i < to; i++)
        if (strcmp(o->hosts[i].name, s) == 0)
            return 1;
    return 0;
}

int mpirun_gateway_routes(const struct mpirun_opts *o, const char *file)
{
    enum { MAX = 1 << 16 };
    int ranks = o->nhosts - o->ngateways;
    if (o->ngateways == 0) {
        fprintf(stderr, "mpirun: --gateway-routes needs --gateways\n");
        return -EINVAL;
    }
    FILE *f = fopen(file, "r");
    if (!f) {
        fprintf(stderr, "mpirun: --gateway-routes %s: %s\n", file, strerror(errno));
        return -EINVAL;
    }
    char *text = malloc(MAX + 1), *env = malloc(MAX + 1);
    size_t n = text && env ? fread(text, 1, MAX + 1, f) : 0;
    int bad = ferror(f);
    fclose(f);
    if (!text || !env) {
        free(text);
        free(env);
        return -ENOMEM;
    }
    if (bad || n > MAX || memchr(text, 0, n)) {
        fprintf(stderr, "mpirun: --gateway-routes %s: %s\n", file,
                bad       ? "cannot read it"
                : n > MAX ? "larger than 64 KiB"
                          : "not a text file");
        free(text);
        free(env);
        return -EINVAL;
    }
    text[n] = 0;
    static gw_rule rules[GW_ROUTES_MAX];
    char err[200];
    int rc = 0, nr = gw_routes_parse(text, '\n', rules, GW_ROUTES_MAX, err, sizeof(err));
    if (nr < 0) {
        fprintf(stderr, "mpirun: --gateway-routes %s, %s\n", file, err);
        rc = -EINVAL;
    }
    for (int i = 0; i < nr && rc == 0; i++) {
        const gw_rule *r = &rules[i];
        const char *side = NULL;
        if (r->a.host[0] && !mpirun_routes_has(o, 0, ranks, r->a.host))
            side = r->a.host;
        else if (r->b.host[0] && !mpirun_routes_has(o, 0, ranks, r->b.host))
            side = r->b.host;
        if (side)
            fprintf(stderr,
                    "mpirun: --gateway-routes %s, line %d: unknown host '%s' (not a host of "
                    "-hosts/-hostfile)\n",
                    file, r->line, side);
        else if (!mpirun_routes_has(o, ranks, o->nhosts, r->gw))
            fprintf(stderr,
                    "mpirun: --gateway-routes %s, line %d: '%s' is not a gateway of --gateways\n",
                    file, r->line, r->gw);
        rc = side || !mpirun_routes_has(o, ranks, o->nhosts, r->gw) ? -EINVAL : 0;
    }
    /* the ranks get the lines without comments, one ';' entry each: the numbers stay */
    size_t off = 0;
    for (const char *s = text; rc == 0 && *s;) {
        size_t len = strcspn(s, "\n"), body = strcspn(s, "#\n");
        memcpy(env + off, s, body);
        off += body;
        s += len;
        if (*s) {
            s++;
            env[off++] = ';';
        }
    }
    env[off] = 0;
    if (rc == 0 && setenv("DCFA_GATEWAY_ROUTES", env, 1) != 0)
        rc = -ENOMEM;
    free(text);
    free(env);
    return rc;
}
