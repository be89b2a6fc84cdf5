/* The module of a process (MPIX_COMM_TYPE_MODULE, docs/gateway.md "Modules"): the side of a
 * system of several networks it is on. Processes whose hosts share an IPv4 network other
 * than loopback are in one module, and so, transitively, are their other partners; the
 * processes of one node are always in one module; DCFA_MODULE=<id> (>= 0) puts a process in
 * module <id> instead, with every process of that id (ParaStation's module ids). */
#include "core/core.h"
#include "mpi/comm/comm.h"
#include "mpi/mpii.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MOD_FIELDS = 2 + 2 * UTIL_NET_MAX }; /* explicit id, count, then (network, prefix) */

typedef struct mod_entry {
    uint32_t net;
    int prefix, rank;
} mod_entry;

static int mod_find(int *up, int r)
{
    while (up[r] != r)
        r = up[r] = up[up[r]];
    return r;
}

/* the smaller root becomes the root: a module's root is its lowest rank */
static void mod_join(int *up, int a, int b)
{
    a = mod_find(up, a);
    b = mod_find(up, b);
    if (a < b)
        up[b] = a;
    else if (b < a)
        up[a] = b;
}

static int mod_cmp(const void *x, const void *y)
{
    const mod_entry *a = x, *b = y;
    if (a->net != b->net)
        return a->net < b->net ? -1 : 1;
    if (a->prefix != b->prefix)
        return a->prefix - b->prefix;
    return a->rank - b->rank;
}

/* every process's module (its lowest rank's index) from their fields: n rows of MOD_FIELDS */
static void mod_colors(const int *every, int n, int *colors)
{
    int *up = util_malloc((size_t)n * sizeof(int));
    mod_entry *e = util_malloc((size_t)n * UTIL_NET_MAX * sizeof *e);
    size_t ne = 0;
    for (int r = 0; r < n; r++)
        up[r] = r;
    for (int r = 0; r < n; r++) {
        const int *f = every + (size_t)r * MOD_FIELDS;
        if (f[0] >= 0) { /* DCFA_MODULE: with the lowest rank of the same id */
            for (int q = 0; q < r; q++)
                if (every[(size_t)q * MOD_FIELDS] == f[0]) {
                    mod_join(up, q, r);
                    break;
                }
            continue;
        }
        /* the node's lowest rank (node_color), unless it chose a module of its own */
        if (f[1] >= 0 && f[1] < n && every[(size_t)f[1] * MOD_FIELDS] < 0)
            mod_join(up, f[1], r);
        for (int i = 0; i < UTIL_NET_MAX && f[3 + 2 * i] >= 0; i++)
            e[ne++] = (mod_entry){(uint32_t)f[2 + 2 * i], f[3 + 2 * i], r};
    }
    /* the processes of one network, sorted next to each other, join */
    qsort(e, ne, sizeof *e, mod_cmp);
    for (size_t i = 1; i < ne; i++)
        if (e[i].net == e[i - 1].net && e[i].prefix == e[i - 1].prefix)
            mod_join(up, e[i - 1].rank, e[i].rank);
    for (int r = 0; r < n; r++)
        colors[r] = mod_find(up, r);
    free(e);
    free(up);
}

/* a process's networks into its fields (from index 2), loopback left out */
static void mod_nets(int *f, const util_net *all, int nall)
{
    int nn = 0;
    for (int i = 0; i < nall && nn < UTIL_NET_MAX; i++) {
        if ((all[i].addr >> 24) == 127)
            continue;
        uint32_t mask = all[i].prefix ? ~0u << (32 - all[i].prefix) : 0;
        f[2 + 2 * nn] = (int)(all[i].addr & mask);
        f[3 + 2 * nn] = all[i].prefix;
        nn++;
    }
    for (int i = nn; i < UTIL_NET_MAX; i++)
        f[3 + 2 * i] = -1; /* no network */
}

int mpii_comm_module_color(mpii_comm *c, int node_color, int *color)
{
    int me[MOD_FIELDS];
    memset(me, 0, sizeof me);
    me[0] = util_cfg.module >= 0 ? util_cfg.module : -1;
    me[1] = node_color;
    const util_net *all;
    mod_nets(me, all, util_net_list(&all));
    int *every = util_malloc((size_t)c->size * MOD_FIELDS * sizeof(int));
    int rc = mpii_allgather(me, MOD_FIELDS, MPI_INT, every, MOD_FIELDS, MPI_INT, c);
    if (rc != MPI_SUCCESS) {
        free(every);
        return rc;
    }
    int *colors = util_malloc((size_t)c->size * sizeof(int));
    mod_colors(every, c->size, colors);
    *color = colors[c->rank];
    free(colors);
    free(every);
    return MPI_SUCCESS;
}

/* one entry ("name:...") of a process's cards, without its name; NULL if absent */
static const char *card_entry(const char *cards, const char *name, size_t *len)
{
    size_t nl = strlen(name);
    for (const char *s = cards; *s;) {
        size_t n = strcspn(s, ";");
        if (n > nl && !strncmp(s, name, nl) && s[nl] == ':') {
            *len = n - nl - 1;
            return s + nl + 1;
        }
        s += n;
        if (*s == ';')
            s++;
    }
    return NULL;
}

int mpii_module_colors_from_cards(int n, int *colors)
{
    int *every = util_calloc((size_t)n * MOD_FIELDS, sizeof(int));
    char(*hosts)[128] = util_calloc((size_t)n, sizeof *hosts);
    char cards[1024]; /* CORE_CARD_MAX */
    int rc = MPI_SUCCESS;
    for (int p = 0; p < n && rc == MPI_SUCCESS; p++) {
        int *f = every + (size_t)p * MOD_FIELDS;
        util_net nets[UTIL_NET_MAX];
        size_t len = 0;
        const char *v;
        f[0] = -1;
        f[1] = p;
        if (core_proc_cards(p, cards, sizeof cards) != UTIL_OK) {
            rc = MPI_ERR_INTERN;
            break;
        }
        if ((v = card_entry(cards, "host", &len)) != NULL) {
            snprintf(hosts[p], sizeof hosts[p], "%.*s", (int)len, v);
            for (int q = 0; q < p; q++)
                if (!strcmp(hosts[q], hosts[p])) {
                    f[1] = q;
                    break;
                }
        }
        v = card_entry(cards, "net", &len);
        int nn = v ? util_net_parse(v, len, nets, UTIL_NET_MAX) : 0;
        mod_nets(f, nets, nn < 0 ? 0 : nn);
    }
    if (rc == MPI_SUCCESS)
        mod_colors(every, n, colors);
    free(hosts);
    free(every);
    return rc;
}
