/* The module of a process (MPIX_COMM_TYPE_MODULE, docs/gateway.md "Modules"): the side of a
 * system of several networks it is on. Processes whose hosts share an IPv4 network other
 * than loopback are in one module, and so, transitively, are their other partners; the
 * processes of one node are always in one module; DCFA_MODULE=<id> (>= 0) puts a process in
 * module <id> instead, with every process of that id (ParaStation's module ids). */
#include "mpi/comm/comm.h"
#include "mpi/mpii.h"
#include "util/util.h"

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

int mpii_comm_module_color(mpii_comm *c, int node_color, int *color)
{
    int me[MOD_FIELDS];
    memset(me, 0, sizeof me);
    me[0] = util_cfg.module >= 0 ? util_cfg.module : -1;
    me[1] = node_color;
    const util_net *all;
    int nall = util_net_list(&all), nn = 0;
    for (int i = 0; i < nall && nn < UTIL_NET_MAX; i++) {
        if ((all[i].addr >> 24) == 127)
            continue;
        uint32_t mask = all[i].prefix ? ~0u << (32 - all[i].prefix) : 0;
        me[2 + 2 * nn] = (int)(all[i].addr & mask);
        me[3 + 2 * nn] = all[i].prefix;
        nn++;
    }
    for (int i = nn; i < UTIL_NET_MAX; i++)
        me[3 + 2 * i] = -1; /* no network */
    int *every = util_malloc((size_t)c->size * MOD_FIELDS * sizeof(int));
    int rc = mpii_allgather(me, MOD_FIELDS, MPI_INT, every, MOD_FIELDS, MPI_INT, c);
    if (rc != MPI_SUCCESS) {
        free(every);
        return rc;
    }
    int *up = util_malloc((size_t)c->size * sizeof(int));
    mod_entry *e = util_malloc((size_t)c->size * UTIL_NET_MAX * sizeof *e);
    size_t ne = 0;
    for (int r = 0; r < c->size; r++)
        up[r] = r;
    for (int r = 0; r < c->size; r++) {
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
        if (f[1] >= 0 && f[1] < c->size && every[(size_t)f[1] * MOD_FIELDS] < 0)
            mod_join(up, f[1], r);
        for (int i = 0; i < UTIL_NET_MAX && f[3 + 2 * i] >= 0; i++)
            e[ne++] = (mod_entry){(uint32_t)f[2 + 2 * i], f[3 + 2 * i], r};
    }
    /* the processes of one network, sorted next to each other, join */
    qsort(e, ne, sizeof *e, mod_cmp);
    for (size_t i = 1; i < ne; i++)
        if (e[i].net == e[i - 1].net && e[i].prefix == e[i - 1].prefix)
            mod_join(up, e[i - 1].rank, e[i].rank);
    *color = mod_find(up, c->rank);
    free(e);
    free(up);
    free(every);
    return MPI_SUCCESS;
}
