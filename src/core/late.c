/* The network fabric opened late (docs/fabric.md, "Opening ofi late").
 *
 * Opening ofi costs about 300 ms with Debian's libfabric (docs/bench.md: the
 * constructors of libpsm2 and libinfinipath, which libfabric.so.1 links,
 * fi_getinfo, rxm's pools), and no setting removes it. A job that our mpirun
 * runs across hosts (core_params.net_late) therefore opens it in a thread of
 * its own, started where the fabrics open (MPI_Init), and MPI_Init returns
 * without waiting:
 *
 *   - the card this process publishes at start-up says "late:ofi" instead of
 *     ofi's address; the thread, once ofi is open, publishes the address in
 *     mpirun's name service under dcfa-card-<gid in hex> (seen by every process
 *     of the run at once, without the fence the key/value exchange would need,
 *     also by other jobs: a spawn's parent and children), or "none" if the
 *     fabric could not open;
 *   - the first connection that no fabric open reaches (a peer on another
 *     host) waits for the thread (core_late_join) and for the peer's address
 *     (core_late_resolve: the name service until it is there), and progress
 *     takes the fabric in as soon as the thread has ended (core_late_poll), so
 *     that a peer's first packets are read whether or not this process ever
 *     sends across hosts itself.
 *
 * The thread runs only the fabric's open() and the publication; it touches no
 * core state but core_s.late, which the main thread reads only after `done`
 * (release/acquire) and pthread_join. It blocks every signal (they stay the
 * process's other threads'). Nothing waits for another process's main thread:
 * a peer's address appears when its own thread has ended, as long as that
 * process is not inside a fence (the name service and the fence share the
 * daemon channel), which is why core_finalize joins the thread before its
 * fences. */
#include "core/core_impl.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* how long a first contact waits for a peer's late card: its open takes about 300 ms,
 * seconds on a loaded node; a peer that never publishes is gone or not of this run */
#define CORE_LATE_WAIT_NS (120ull * 1000000000ull)

static pthread_t core_late_thread;
static int core_late_threaded; /* core_late_thread runs (else open() ran in core_late_start) */

static void core_late_name(uint64_t gid, char *buf, size_t len)
{
    snprintf(buf, len, "dcfa-card-%llx", (unsigned long long)gid);
}

static void *core_late_main(void *arg)
{
    const fab_ops *fab = arg;
    char card[sizeof core_s.late.card];
    uint64_t t0 = util_now_ns();
    if (util_cfg.ofi_late_delay > 0) {
        struct timespec d = {util_cfg.ofi_late_delay / 1000,
                             (long)(util_cfg.ofi_late_delay % 1000) * 1000000L};
        nanosleep(&d, NULL);
    }
    int rc = fab->open(&core_s.late.fp, card, sizeof card);
    if (rc == UTIL_OK && strchr(card, ';')) {
        util_log("%s: its card '%s' holds a ';'", fab->name, card);
        fab->close();
        rc = UTIL_EINVAL;
    }
    int prc = core_s.kvs.publish(core_s.late.name, rc == UTIL_OK ? card : "none");
    if (prc != 0)
        util_log("cannot publish this process's %s address as %s: %s", fab->name, core_s.late.name,
                 strerror(prc < 0 ? -prc : prc));
    if (util_cfg.debug)
        util_log("%s opened in %.1f ms, off MPI_Init's path (%s)", fab->name,
                 (double)(util_now_ns() - t0) / 1e6, rc == UTIL_OK ? card : "failed");
    snprintf(core_s.late.card, sizeof core_s.late.card, "%s", rc == UTIL_OK ? card : "");
    core_s.late.rc = rc;
    core_s.late.published = prc == 0;
    atomic_store_explicit(&core_s.late.done, 1, memory_order_release);
    return NULL;
}

int core_late_start(const fab_ops *fab)
{
    core_s.late.fp = core_s.fp;
    core_late_name(core_gid(core_s.self), core_s.late.name, sizeof core_s.late.name);
    atomic_store_explicit(&core_s.late.done, 0, memory_order_relaxed);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&core_late_thread, NULL, core_late_main, (void *)fab);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        /* no thread: open it here, as without DCFA_OFI_LATE */
        util_log("cannot start the thread that opens %s (%s): opened now", fab->name, strerror(rc));
        core_s.late.ops = fab;
        core_late_main((void *)fab);
        core_late_join();
        return UTIL_OK;
    }
    core_late_threaded = 1;
    core_s.late.ops = fab;
    return UTIL_OK;
}

void core_late_join(void)
{
    const fab_ops *fab = core_s.late.ops;
    if (!fab)
        return;
    if (core_late_threaded)
        pthread_join(core_late_thread, NULL);
    core_late_threaded = 0;
    core_s.late.ops = NULL;
    if (core_s.late.rc != UTIL_OK)
        util_die("cannot open the %s fabric, needed for processes on other hosts (opened after "
                 "MPI_Init, DCFA_OFI_LATE; the reason is logged above)",
                 fab->name);
    core_fab_add(fab);
    core_fab_pace();
    /* my cards for other jobs carry the address itself from now on */
    char late[64], rest[CORE_CARD_MAX];
    snprintf(late, sizeof late, "late:%s", fab->name);
    char *at = strstr(core_s.cards, late);
    if (at) {
        snprintf(rest, sizeof rest, "%s", at + strlen(late));
        snprintf(at, sizeof core_s.cards - (size_t)(at - core_s.cards), "%s%s", core_s.late.card,
                 rest);
    }
}

int core_late_resolve(int lpid, char *cards, size_t len)
{
    const char *late = strstr(cards, "late:");
    if (!late)
        return UTIL_OK;
    char name[32];
    size_t n = strcspn(late + 5, ";");
    if (n == 0 || n >= sizeof name)
        return UTIL_OK;
    memcpy(name, late + 5, n);
    name[n] = 0;
    char card[CORE_CARD_MAX];
    if (fab_select_card(cards, name, card, sizeof card) == UTIL_OK)
        return UTIL_OK; /* resolved already */
    int mine = 0;
    for (int i = 0; i < core_s.nfabs; i++)
        mine |= !strcmp(core_s.fabs[i].ops->name, name);
    if (!mine)
        return UTIL_OK; /* a fabric I have not opened: no use waiting for its card */
    if (!core_s.kvs.lookup) {
        util_log("%s publishes its %s address in a name service this process has not",
                 util_proc(lpid), name);
        return UTIL_ECONN;
    }
    char key[64];
    core_late_name(core_gid(lpid), key, sizeof key);
    uint64_t until = util_now_ns() + CORE_LATE_WAIT_NS;
    /* asked again after 0.5 ms, then doubling up to 8 ms: a few dozen requests to mpirun
     * while the peer's thread runs */
    struct timespec nap = {0, 500000};
    int rc;
    while ((rc = core_s.kvs.lookup(key, card, (int)sizeof card)) == -ENOENT &&
           util_now_ns() < until) {
        nanosleep(&nap, NULL);
        if (nap.tv_nsec < 8000000)
            nap.tv_nsec *= 2;
    }
    if (rc != 0) {
        util_log("%s has not published its %s address (%s, name %s) within %llu s", util_proc(lpid),
                 name, strerror(rc < 0 ? -rc : rc), key,
                 (unsigned long long)(CORE_LATE_WAIT_NS / 1000000000ull));
        return UTIL_ECONN;
    }
    if (!strcmp(card, "none") || strncmp(card, name, n) != 0 || card[n] != ':') {
        util_log("%s could not open its %s fabric (published '%s'; its log says why)",
                 util_proc(lpid), name, card);
        return UTIL_ECONN;
    }
    size_t used = strlen(cards);
    if (used + 1 + strlen(card) >= len || used + 1 + strlen(card) >= CORE_CARD_MAX) {
        util_log("%s's addresses do not fit in %zu bytes", util_proc(lpid), len);
        return UTIL_EINVAL;
    }
    snprintf(cards + used, len - used, ";%s", card);
    /* kept: the next connection to it (after a disconnect) looks no more */
    if (lpid >= 0 && lpid < core_s.nprocs) {
        free(core_s.procs[lpid].cards);
        core_s.procs[lpid].cards = util_strdup(cards);
    }
    return UTIL_OK;
}

/* the name of the pair's fabric: the two gids, lower first, so both ends ask for one name */
static void core_late_pair_name(uint64_t a, uint64_t b, char *buf, size_t len)
{
    snprintf(buf, len, "dcfa-pair-%llx-%llx", (unsigned long long)(a < b ? a : b),
             (unsigned long long)(a < b ? b : a));
}

int core_late_pair(int lpid, const char *cards)
{
    char card[CORE_CARD_MAX], key[64], want[16], got[16];
    /* the daemons make connections across hosts within a job and between a parent and its
     * children (docs/launcher.md, "Endpoints across hosts"): any peer I know, of my job or
     * of another, when both ends opened sock (the peer's card lists it) */
    if (!core_s.late.sock || lpid < 0 || lpid >= core_s.nprocs || !core_s.kvs.publish ||
        !core_s.kvs.lookup || fab_select_card(cards, "sock", card, sizeof card) != UTIL_OK)
        return 0;
    /* what I would take: sock while my ofi is not open, or while the peer's address is not
     * published (its thread still runs); ofi when both are there */
    int mine_open =
        !core_s.late.ops || atomic_load_explicit(&core_s.late.done, memory_order_acquire);
    int peer_open = 1;
    if (mine_open && strstr(cards, "late:") &&
        fab_select_card(cards, "ofi", card, sizeof card) != UTIL_OK) {
        core_late_name(core_gid(lpid), key, sizeof key);
        peer_open = core_s.kvs.lookup(key, card, (int)sizeof card) == 0;
    }
    snprintf(want, sizeof want, "%s", mine_open && peer_open ? "ofi" : "sock");
    /* both ends may start the connection at once, each deciding from what it sees: the first
     * to publish the pair's name decides for both (a name is published once), the other
     * reads it */
    core_late_pair_name(core_gid(core_s.self), core_gid(lpid), key, sizeof key);
    int rc = core_s.kvs.publish(key, want);
    if (rc == 0) {
        if (core_s.late.npairs == core_s.late.cappairs) {
            core_s.late.cappairs = core_s.late.cappairs ? 2 * core_s.late.cappairs : 8;
            core_s.late.pairs = util_realloc(core_s.late.pairs, (size_t)core_s.late.cappairs *
                                                                    sizeof *core_s.late.pairs);
        }
        core_s.late.pairs[core_s.late.npairs++] = core_gid(lpid);
        snprintf(got, sizeof got, "%s", want);
    } else if (rc == -EEXIST) {
        rc = core_s.kvs.lookup(key, got, (int)sizeof got);
        if (rc != 0)
            got[0] = 0;
    }
    if (rc != 0) {
        util_log("cannot agree with %s on the fabric of our first connection (name %s: %s): "
                 "waiting for ofi",
                 util_proc(lpid), key, strerror(rc < 0 ? -rc : rc));
        return 0;
    }
    if (util_cfg.debug)
        util_log("first connection to %s over %s (mine: %s; ofi open here %d, there %d)",
                 util_proc(lpid), got, want, mine_open, peer_open);
    return !strcmp(got, "sock");
}

void core_late_finish(void)
{
    if (core_s.late.published && core_s.kvs.unpublish)
        (void)core_s.kvs.unpublish(core_s.late.name);
    core_s.late.published = 0;
    char key[64];
    for (int i = 0; i < core_s.late.npairs; i++) {
        core_late_pair_name(core_gid(core_s.self), core_s.late.pairs[i], key, sizeof key);
        if (core_s.kvs.unpublish)
            (void)core_s.kvs.unpublish(key);
    }
    free(core_s.late.pairs);
    core_s.late.pairs = NULL;
    core_s.late.npairs = core_s.late.cappairs = 0;
}
