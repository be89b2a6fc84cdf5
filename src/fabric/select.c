/* Which fabrics a process opens and which one carries each connection.
 *
 * DCFA_FABRICS names the fabrics to open: "auto" (the default) opens shm, and
 * ofi too when the job may have processes on other nodes (fewer local ranks
 * than ranks, or unknown) - or sock instead, where the daemons hand over
 * connections and libfabric has no hardware to drive (DCFA_OFI_AUTO) - and gw when the job has
 * gateway daemons (DCFA_GATEWAYS, mpirun --gateways); a comma list ("ofi", "shm,ofi") opens exactly
 * those. Each opened fabric contributes its card; the process publishes them
 * joined by ';'. In auto mode the caller may take ofi to open later itself
 * (`late`: the core opens it in a thread, off MPI_Init's path, docs/fabric.md).
 * A connection takes the opened fabric of highest priority
 * whose reachable() accepts the peer's card for it; the peer's card only
 * lists what the peer opened, so both ends make the same choice. */
#include "fabric/fabric.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const fab_ops *const fab_builtin[] = {
    &fab_shm_ops,
    &fab_sock_ops,
#ifdef DCFA_HAVE_OFI
    &fab_ofi_ops,
#endif
    &fab_gw_ops,
};
enum { FAB_NBUILTIN = sizeof fab_builtin / sizeof fab_builtin[0] };

void fab_select_mem_free(void *base, size_t len)
{
    /* whether open or not (capabilities are known only while open): each fabric whose table
     * has mem_alloc, and so mem_free, looks for the block in its own table */
    for (int i = 0; i < FAB_NBUILTIN; i++)
        if (fab_builtin[i]->stage && fab_builtin[i]->stage->mem_free)
            fab_builtin[i]->stage->mem_free(base, len);
}

static const fab_ops *fab_by_name(const char *name, size_t len)
{
    for (int i = 0; i < FAB_NBUILTIN; i++)
        if (strlen(fab_builtin[i]->name) == len && !strncmp(fab_builtin[i]->name, name, len))
            return fab_builtin[i];
    return NULL;
}

static void fab_builtin_names(char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = 0;
    for (int i = 0; i < FAB_NBUILTIN && off < len; i++) {
        int n = snprintf(buf + off, len - off, "%s%s", i ? ", " : "", fab_builtin[i]->name);
        if (n > 0)
            off += (size_t)n;
    }
}

int fab_select_open(const fab_params *p, const char *spec, const fab_ops **opened, int max,
                    int *nopened, char *cards, size_t cardslen, const fab_ops **late)
{
    if (late)
        *late = NULL;
    const fab_ops *want[FAB_NBUILTIN];
    int explicit[FAB_NBUILTIN];     /* named in DCFA_FABRICS (else chosen by auto) */
    int nwant = 0;
    char built[128];
    fab_builtin_names(built, sizeof built);
    if (!spec || !*spec || !strcmp(spec, "auto")) {
        int spans = p->local_nprocs < 0 || p->local_nprocs < p->nprocs;
        int gateways = util_cfg.gateways && *util_cfg.gateways;
        /* a confined rank (mpirun --isolate) reaches other nodes only through the sockets its
         * daemon hands over; otherwise ofi does */
        const char *iso = getenv("DCFA_ISOLATE");
        const fab_ops *net = iso && *iso ? &fab_sock_ops : NULL;
#ifdef DCFA_HAVE_OFI
        if (!net)
            net = &fab_ofi_ops;
#endif
#ifdef DCFA_HAVE_OFI
        /* the daemons hand over connections across hosts within a job and between a parent
         * and its children, spawned jobs' too (docs/launcher.md, "Endpoints across hosts");
         * but only where they reach each other: not in a job over networks joined by
         * gateways, whose pairs across them have no daemon connection to take */
        const char *ep = getenv("DCFA_SOCK_EP_FD");
        int sock_serves = ep && *ep && util_cfg.sock_connect != 2 && !gateways;
        char why[400];
        if (spans && net == &fab_ofi_ops && sock_serves && !fab_ofi_wanted(why, sizeof why)) {
            /* no hardware for libfabric here: sock carries every pair (DCFA_OFI_AUTO) */
            net = &fab_sock_ops;
            if (util_cfg.debug)
                util_log("auto: sock across hosts, ofi not opened (%s)", why);
        }
        /* the caller opens ofi itself, later (in a thread of its own): not here */
        if (late && spans && net == &fab_ofi_ops) {
            fab_ofi_prepare(p);
            *late = net;
            net = NULL;
            /* and sock for the first contacts made while ofi opens (docs/fabric.md, "First
             * contact over sock") */
            if (util_cfg.ofi_late_sock && sock_serves)
                net = &fab_sock_ops;
        }
#endif
        /* a confined job on one host opens sock too when its daemon has a data port (its
         * card then names it): a job of another mpirun on another host may connect to it
         * (docs/launcher.md "Endpoints between two mpiruns"); sock opens no socket itself */
        const char *daddr = getenv("DCFA_SOCK_DADDR");
        int reach = spans || (net == &fab_sock_ops && daddr && *daddr);
        for (int i = 0; i < FAB_NBUILTIN; i++) {
            if (fab_builtin[i] == &fab_gw_ops
                    ? gateways
                    : fab_builtin[i] == &fab_shm_ops || (reach && fab_builtin[i] == net)) {
                explicit[nwant] = 0;
                want[nwant++] = fab_builtin[i];
            }
        }
    } else {
        for (const char *s = spec; *s;) {
            size_t n = strcspn(s, ",");
            const fab_ops *f = fab_by_name(s, n);
            if (!f) {
                util_log("DCFA_FABRICS=%s: '%.*s' is not a fabric of this build (built: %s)", spec,
                         (int)n, s, built);
                return UTIL_EINVAL;
            }
            int dup = 0;
            for (int k = 0; k < nwant; k++)
                dup |= want[k] == f;
            if (!dup && nwant < FAB_NBUILTIN) {
                explicit[nwant] = 1;
                want[nwant++] = f;
            }
            s += n;
            if (*s == ',')
                s++;
        }
    }
    size_t off = 0;
    cards[0] = 0;
    *nopened = 0;
    for (int i = 0; i < nwant && *nopened < max; i++) {
        char card[512];
        int rc = want[i]->open(p, card, sizeof card);
        if (rc != UTIL_OK) {
            /* every process opens the same fabrics, or none works: a fabric auto mode wants
             * (the job may span nodes) is as necessary as one named explicitly */
            if (explicit[i])
                util_log("cannot open the %s fabric (asked for by DCFA_FABRICS=%s)", want[i]->name, spec);
            else
                util_log("cannot open the %s fabric, needed for processes on other nodes (ranks on this "
                         "node: %d of %d%s); DCFA_FABRICS=shm runs without it on one node",
                         want[i]->name, p->local_nprocs, p->nprocs, p->local_nprocs < 0 ? ", unknown" : "");
            goto fail;
        }
        int n = snprintf(cards + off, cardslen - off, "%s%s", off ? ";" : "", card);
        if (n < 0 || (size_t)n >= cardslen - off) {
            util_log("the fabric addresses do not fit in %zu bytes", cardslen);
            want[i]->close();
            goto fail;
        }
        off += (size_t)n;
        /* highest priority first */
        int at = *nopened;
        while (at > 0 && opened[at - 1]->caps()->priority < want[i]->caps()->priority) {
            opened[at] = opened[at - 1];
            at--;
        }
        opened[at] = want[i];
        (*nopened)++;
    }
    return UTIL_OK;
fail:
    for (int k = 0; k < *nopened; k++)
        opened[k]->close();
    *nopened = 0;
    return UTIL_EINVAL;
}

int fab_select_card(const char *cards, const char *name, char *out, size_t len)
{
    size_t nl = strlen(name);
    for (const char *s = cards; s && *s;) {
        size_t n = strcspn(s, ";");
        if (n > nl && !strncmp(s, name, nl) && s[nl] == ':') {
            if (n >= len)
                return UTIL_EINVAL;
            memcpy(out, s, n);
            out[n] = 0;
            return UTIL_OK;
        }
        s += n;
        if (*s == ';')
            s++;
    }
    return UTIL_ENOENT;
}

const fab_ops *fab_select_choose(const fab_ops *const *opened, int n, const char *peer_cards,
                                 char *card, size_t cardlen, char *why, size_t whylen)
{
    size_t off = 0;
    why[0] = 0;
    for (int i = 0; i < n; i++) {
        const fab_ops *f = opened[i];
        int rc = fab_select_card(peer_cards, f->name, card, cardlen);
        if (rc == UTIL_OK && f->reachable(card)) {
            if (off == 0)
                snprintf(why, whylen, "%s: %s", f->name,
                         n == 1 ? "the only fabric opened" : "highest priority, reaches the peer");
            else
                snprintf(why + off, whylen - off, "; %s reaches it", f->name);
            return f;
        }
        int k = snprintf(why + off, whylen - off, "%s%s %s", off ? "; " : "", f->name,
                         rc == UTIL_OK ? "cannot reach the peer" : "not opened by the peer");
        if (k > 0 && (size_t)k < whylen - off)
            off += (size_t)k;
    }
    return NULL;
}

void fab_select_report(char *buf, size_t len)
{
    char built[128];
    fab_builtin_names(built, sizeof built);
#ifdef DCFA_HAVE_OFI
    char prov[256], why[400];
    fab_ofi_probe(prov, sizeof prov);
    int wanted = fab_ofi_wanted(why, sizeof why);
    snprintf(buf, len,
             "%s (shm: rings in shared memory, process_vm_readv/writev single copy; "
             "sock: stream sockets handed over by the assist daemon; ofi: libfabric %s; "
             "gw: through the gateway daemons of mpirun --gateways); across hosts by default: "
             "%s (%s)",
             built, prov, wanted ? "ofi, opened after MPI_Init" : "sock, libfabric not opened",
             why);
#else
    snprintf(buf, len,
             "%s (shm: rings in shared memory, process_vm_readv/writev single copy; "
             "sock: stream sockets handed over by the assist daemon; "
             "ofi: not built, libfabric not found by CMake or -DDCFA_OFI=OFF; gw: through the "
             "gateway daemons of mpirun --gateways)",
             built);
#endif
}

void fab_select_peer_cost(unsigned nblocks, size_t block_size, size_t state, char *buf, size_t len)
{
    size_t ring = fab_shm_ring_bytes(nblocks, block_size);
    int n =
        snprintf(buf, len,
                 "on shm with the smallest ring: %zu bytes allocated (the ring's segment, whole "
                 "pages, + %zu bytes of state), and the peer's ring of the same size mapped",
                 ring + state, state);
#ifdef DCFA_HAVE_OFI
    char ofi[256];
    fab_ofi_peer_cost(ofi, sizeof ofi);
    if (n > 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, "; on ofi: %s", ofi);
#else
    (void)n;
#endif
}
