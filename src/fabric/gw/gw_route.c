/* Which gateway a pair takes: the route file and the rule (gw_route.h, docs/gateway.md). */
#include "fabric/gw/gw_route.h"

#include <stdio.h>
#include <string.h>

/* a host name as hosts give them: letters, digits, '.', '-', '_' */
static int gw_name_ok(const char *s, size_t n)
{
    if (n == 0 || n >= GW_ROUTE_NAME_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '-' || c == '_'))
            return 0;
    }
    return 1;
}

static int gw_side_parse(gw_side *s, const char *w, size_t n)
{
    memset(s, 0, sizeof *s);
    if (memchr(w, '/', n)) {
        util_net net;
        if (util_net_parse(w, n, &net, 1) != 1)
            return UTIL_EINVAL;
        s->net = net;
        return UTIL_OK;
    }
    if (!gw_name_ok(w, n))
        return UTIL_EINVAL;
    memcpy(s->host, w, n);
    return UTIL_OK;
}

int gw_routes_parse(const char *text, char sep, gw_rule *rules, int max, char *err, size_t errlen)
{
    int n = 0, line = 0;
    const char ends[] = {sep, 0}, cut[] = {'#', sep, 0};
    for (const char *s = text; s && *s;) {
        size_t len = strcspn(s, ends);
        line++;
        size_t body = strcspn(s, cut); /* up to a comment */
        const char *w[4];
        size_t wl[4];
        int nw = 0;
        for (size_t i = 0; i < body;) {
            while (i < body && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
                i++;
            if (i == body)
                break;
            size_t k = i;
            while (k < body && s[k] != ' ' && s[k] != '\t' && s[k] != '\r')
                k++;
            if (nw < 4) {
                w[nw] = s + i;
                wl[nw] = k - i;
            }
            nw++;
            i = k;
        }
        if (nw != 0) {
            gw_rule r = {.line = line};
            const char *bad = NULL;
            if (nw != 3)
                snprintf(err, errlen,
                         "line %d: expected 'SIDE SIDE GATEWAY' (a side: a host or a network "
                         "a.b.c.d/n), got %d word%s",
                         line, nw, nw == 1 ? "" : "s");
            else if (gw_side_parse(&r.a, w[0], wl[0]) != UTIL_OK)
                bad = "side";
            else if (gw_side_parse(&r.b, w[1], wl[1]) != UTIL_OK)
                bad = "side", w[0] = w[1], wl[0] = wl[1];
            else if (!gw_name_ok(w[2], wl[2]))
                bad = "gateway host", w[0] = w[2], wl[0] = wl[2];
            else if (n == max)
                snprintf(err, errlen, "line %d: more than %d rules", line, max);
            if (bad)
                snprintf(err, errlen, "line %d: '%.*s' is not a %s (a host name%s)", line,
                         (int)wl[0], w[0], bad, bad[0] == 's' ? " or a network a.b.c.d/n" : "");
            if (nw != 3 || bad || n == max)
                return -1;
            memcpy(r.gw, w[2], wl[2]);
            rules[n++] = r;
        }
        s += len;
        if (*s)
            s++;
    }
    return n;
}

int gw_side_has(const gw_side *s, const char *host, const util_net *nets, int nn)
{
    if (s->host[0])
        return host && strcmp(s->host, host) == 0;
    for (int i = 0; i < nn; i++)
        if ((nets[i].addr >> 24) != 127 && util_net_on(&s->net, nets[i].addr))
            return 1;
    return 0;
}

int gw_routes_find(const gw_rule *rules, int n, const char *ha, const util_net *na, int nna,
                   const char *hb, const util_net *nb, int nnb)
{
    for (int i = 0; i < n; i++) {
        const gw_rule *r = &rules[i];
        if ((gw_side_has(&r->a, ha, na, nna) && gw_side_has(&r->b, hb, nb, nnb)) ||
            (gw_side_has(&r->a, hb, nb, nnb) && gw_side_has(&r->b, ha, na, nna)))
            return i;
    }
    return -1;
}

int gw_route_pick(const gw_known *gws, int ngw, const gw_rule *rules, int nrules, int ra,
                  const char *ha, const util_net *na, int nna, int rb, const char *hb,
                  const util_net *nb, int nnb, int *rule)
{
    int cand[UTIL_NET_MAX * 4], n = 0;
    for (int i = 0; i < ngw && n < (int)(sizeof cand / sizeof cand[0]); i++)
        if (gws[i].usable && util_net_common(gws[i].nets, gws[i].nn, na, nna) &&
            util_net_common(gws[i].nets, gws[i].nn, nb, nnb))
            cand[n++] = i;
    *rule = gw_routes_find(rules, nrules, ha, na, nna, hb, nb, nnb);
    if (*rule >= 0)
        for (int k = 0; k < n; k++)
            if (strcmp(gws[cand[k]].host, rules[*rule].gw) == 0)
                return cand[k];
    *rule = -1; /* no rule, or its gateway is not one the pair can use: the list's rule */
    if (n == 0)
        return -1;
    return cand[((unsigned)ra + (unsigned)rb) % (unsigned)n];
}

int gw_known_parse(const char *s, size_t len, gw_known *k, unsigned *port)
{
    const char *c1 = memchr(s, ':', len);
    const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - s)) : NULL;
    memset(k, 0, sizeof *k);
    if (!c1 || !c2 || c1 == s || (size_t)(c1 - s) >= sizeof k->host)
        return UTIL_EINVAL;
    memcpy(k->host, s, (size_t)(c1 - s));
    unsigned long p = 0;
    for (const char *d = c1 + 1; d < c2; d++) {
        if (*d < '0' || *d > '9' || p > 65535)
            return UTIL_EINVAL;
        p = p * 10 + (unsigned long)(*d - '0');
    }
    if (p == 0 || p > 65535)
        return UTIL_EINVAL;
    *port = (unsigned)p;
    k->nn = util_net_parse(c2 + 1, len - (size_t)(c2 + 1 - s), k->nets, UTIL_NET_MAX);
    return k->nn < 0 ? UTIL_EINVAL : UTIL_OK;
}
