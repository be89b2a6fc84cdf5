/* core: initialisation, requests, the protocol choice and progress. */
#include "core/core_impl.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

core_state core_s;
util_htab core_reqs;
core_stats core_st;

static int core_lpid_of_up(fab_gid gid) { return core_lpid_of(gid); }
static fab_gid core_gid_of_up(int lpid) { return core_gid(lpid); }

static uint32_t core_packet_blocks_up(const void *block)
{
    return core_blocks(((const wire_hdr *)block)->len);
}

static size_t core_packet_bytes_up(const void *block)
{
    return sizeof(wire_hdr) + ((const wire_hdr *)block)->len;
}

static const fab_upcalls core_upcalls = {
    .incoming = core_conn_incoming,
    .ready = core_conn_ready,
    .lpid_of = core_lpid_of_up,
    .gid_of = core_gid_of_up,
    .packet_blocks = core_packet_blocks_up,
    .packet_bytes = core_packet_bytes_up,
    .wake = core_conn_wake,
    .lost = core_conn_lost,
};

static void core_card_key(int lpid, char *key, size_t len)
{
    snprintf(key, len, "dcfa-card-%d", lpid);
}

/* open the fabrics (once); my cards into core_s.cards, after "job:<job id>" (no fabric's:
 * it tells processes of other jobs what to call mine, core_proc_name), "host:<host name>"
 * and "net:<my networks>" (the host's IPv4 networks: messages name the hosts of a pair no
 * fabric reaches, and say whether they share a network, docs/gateway.md) */
static int core_fabrics_open(void)
{
    if (core_s.fabs_open)
        return UTIL_OK;
    const fab_ops *opened[CORE_MAX_FABS];
    char host[128] = "";
    char nets[400];
    const util_net *mine;
    if (gethostname(host, sizeof host - 1) != 0 || strpbrk(host, "; "))
        snprintf(host, sizeof host, "unknown");
    /* the networks only where other nodes may be peers (getifaddrs takes 0.1-0.3 ms: not in
     * the start-up of a job on one node) */
    nets[0] = 0;
    if (core_s.fp.local_nprocs < 0 || core_s.fp.local_nprocs < core_s.fp.nprocs ||
        (util_cfg.gateways && *util_cfg.gateways)) {
        int nn = util_net_list(&mine);
        if (util_net_format(mine, nn, nets, sizeof nets) != UTIL_OK)
            nets[0] = 0;
    }
    int n = snprintf(core_s.cards, sizeof core_s.cards, "job:%s;host:%s;net:%s;", core_s.job_id,
                     host, nets);
    int nopened = 0;
    const fab_ops *late = NULL;
    int rc = fab_select_open(&core_s.fp, util_cfg.fabrics, opened, CORE_MAX_FABS, &nopened,
                             core_s.cards + n, sizeof core_s.cards - (size_t)n,
                             core_s.late.net ? &late : NULL);
    if (rc != UTIL_OK)
        return rc;
    core_s.eager_least = core_s.eager_max;
    core_s.nfabs = 0;
    for (int i = 0; i < nopened; i++)
        core_fab_add(opened[i]);
    core_s.fabs_open = 1;
    core_fab_pace();
    core_s.late.sock = 0;
    for (int i = 0; late && i < nopened; i++)
        core_s.late.sock |= opened[i] == &fab_sock_ops; /* for first contacts while ofi opens */
    if (late) {
        /* the peers learn that my card for it comes later, through the name service */
        size_t off = strlen(core_s.cards);
        snprintf(core_s.cards + off, sizeof core_s.cards - off, "%slate:%s",
                 off && core_s.cards[off - 1] != ';' ? ";" : "", late->name);
        rc = core_late_start(late);
    }
    return rc;
}

void core_fab_add(const fab_ops *ops)
{
    core_fab *f = &core_s.fabs[core_s.nfabs++];
    f->ops = ops;
    f->caps = ops->caps();
    size_t e = core_fab_eager_max(f->caps);
    if (e < core_s.eager_least)
        core_s.eager_least = e;
}

/* open the fabrics and publish their cards: one put and one fence per process */
static int core_fabrics_publish(void)
{
    char key[64];
    int rc = core_fabrics_open();
    if (rc != UTIL_OK)
        return rc;
    core_card_key(core_s.self, key, sizeof key);
    if (!core_s.kvs.put || !core_s.kvs.fence || !core_s.kvs.get) {
        util_log("no key/value exchange to publish this process's fabric addresses through");
        return UTIL_EINVAL;
    }
    rc = core_s.kvs.put(key, core_s.cards);
    if (rc == UTIL_OK)
        rc = core_s.kvs.fence();
    if (rc != UTIL_OK)
        util_log("cannot publish this process's fabric addresses: %s", strerror(-rc));
    return rc;
}

/* every card of process lpid: a process of another job's came with it, my job's are
 * fetched at first contact */
static int core_cards_get(int lpid, char *cards, size_t len)
{
    if (lpid >= 0 && lpid < core_s.nprocs && core_s.procs[lpid].cards) {
        snprintf(cards, len, "%s", core_s.procs[lpid].cards);
        return UTIL_OK;
    }
    char key[64];
    core_card_key(lpid, key, sizeof key);
    int rc = lpid < core_s.job_size ? core_s.kvs.get(key, cards, (int)len) : UTIL_ENOENT;
    if (rc != UTIL_OK)
        util_log("no fabric address of %s in the key/value exchange (%s)", util_proc(lpid),
                 strerror(-rc));
    else if (lpid >= 0 && lpid < core_s.nprocs)
        core_s.procs[lpid].cards = util_strdup(cards); /* kept: its host names it in errors */
    return rc;
}

/* util_proc_host's answer: the "host:" entry of the process's cards, once read */
static void core_host_name(int lpid, char *buf, size_t len)
{
    char host[128];
    if (lpid >= 0 && lpid < core_s.nprocs && core_s.procs[lpid].cards &&
        fab_select_card(core_s.procs[lpid].cards, "host", host, sizeof host) == UTIL_OK)
        snprintf(buf, len, "%s", host + 5);
}

/* ---- processes ------------------------------------------------------------------------ */

/* util_proc's names: "rank R" for my job's processes, "rank R of job J" for another's, J
 * from the "job:" entry of its cards (its job's hash when it has none) */
static void core_proc_name(int lpid, char *buf, size_t len)
{
    char job[80];
    if (lpid < 0 || lpid >= core_s.nprocs) {
        snprintf(buf, len, "process %d", lpid);
    } else if (lpid < core_s.job_size) {
        snprintf(buf, len, "rank %d", lpid);
    } else if (core_s.procs[lpid].cards &&
               fab_select_card(core_s.procs[lpid].cards, "job", job, sizeof job) == UTIL_OK) {
        snprintf(buf, len, "rank %d of job %s", FAB_GID_RANK(core_s.procs[lpid].gid), job + 4);
    } else {
        snprintf(buf, len, "rank %d of job %010llx", FAB_GID_RANK(core_s.procs[lpid].gid),
                 (unsigned long long)FAB_GID_JOB(core_s.procs[lpid].gid));
    }
}

uint64_t core_gid(int lpid)
{
    if (lpid >= 0 && lpid < core_s.nprocs)
        return core_s.procs[lpid].gid;
    return FAB_GID(core_s.job, lpid);
}

int core_lpid_of(uint64_t gid)
{
    if (FAB_GID_JOB(gid) == core_s.job)
        return FAB_GID_RANK(gid) < core_s.job_size ? FAB_GID_RANK(gid) : -1;
    for (int i = core_s.job_size; i < core_s.nprocs; i++)
        if (core_s.procs[i].gid == gid)
            return i;
    return -1;
}

static void core_procs_grow(int n)
{
    if (n <= core_s.procs_cap)
        return;
    int cap = core_s.procs_cap ? core_s.procs_cap : 4;
    while (cap < n)
        cap *= 2;
    core_s.procs = util_realloc(core_s.procs, (size_t)cap * sizeof *core_s.procs);
    core_s.conns = util_realloc(core_s.conns, (size_t)cap * sizeof *core_s.conns);
    core_s.active = util_realloc(core_s.active, (size_t)cap * sizeof *core_s.active);
    core_s.hot = util_realloc(core_s.hot, (size_t)cap * sizeof *core_s.hot);
    for (int i = core_s.procs_cap; i < cap; i++) {
        core_s.procs[i] = (core_proc){0};
        core_s.conns[i] = NULL;
    }
    core_s.procs_cap = cap;
}

int core_proc_add(uint64_t gid, const char *cards)
{
    int lpid = core_lpid_of(gid);
    if (lpid >= 0) {
        /* the same name from another job: two job ids with one hash (fab_job_hash) */
        char job[160], known_job[160];
        if (lpid < core_s.job_size)
            snprintf(known_job, sizeof known_job, "job:%s", core_s.job_id);
        else if (fab_select_card(core_s.procs[lpid].cards, "job", known_job, sizeof known_job) !=
                 UTIL_OK)
            known_job[0] = 0;
        if (cards && known_job[0] && fab_select_card(cards, "job", job, sizeof job) == UTIL_OK &&
            strcmp(job, known_job) != 0) {
            util_log("process %llx: the jobs '%s' and '%s' have one name (their ids' hashes are "
                     "equal); the second is refused",
                     (unsigned long long)gid, known_job + 4, job + 4);
            return UTIL_EINVAL;
        }
        return lpid;
    }
    if (FAB_GID_JOB(gid) == core_s.job) {
        util_log("%s of this job is named as another job's", util_proc(FAB_GID_RANK(gid)));
        return UTIL_EINVAL;
    }
    if (!cards || strlen(cards) >= CORE_CARD_MAX || strchr(cards, ' ')) {
        util_log("process %llx of another job comes without usable fabric addresses",
                 (unsigned long long)gid);
        return UTIL_EINVAL;
    }
    int rc = core_fabrics_open();
    if (rc != UTIL_OK)
        return rc;
    core_procs_grow(core_s.nprocs + 1);
    lpid = core_s.nprocs++;
    core_s.procs[lpid].gid = gid;
    core_s.procs[lpid].cards = util_strdup(cards);
    return lpid;
}

int core_self_cards(char *buf, size_t len)
{
    int rc = core_fabrics_open();
    if (rc != UTIL_OK)
        return rc;
    if ((size_t)snprintf(buf, len, "%s", core_s.cards) >= len)
        return UTIL_EINVAL;
    return UTIL_OK;
}

int core_proc_cards(int lpid, char *buf, size_t len)
{
    if (lpid == core_s.self)
        return core_self_cards(buf, len);
    return core_cards_get(lpid, buf, len);
}

/* the one line for a peer no fabric reaches: the two hosts, whether they share a network
 * (the cards' "net:" entries), and each fabric's answer; kept for the MPI layer's error
 * message (core_conn_failure_text: printed only by an error handler that prints) */
static char core_unreach_text[700];

const char *core_conn_failure_text(void) { return core_unreach_text; }

static void core_unreachable(int lpid, const char *cards, const char *why)
{
    char mine[CORE_CARD_MAX], host[140], peer_host[140], nets[420], peer_nets[420];
    (void)core_self_cards(mine, sizeof mine);
    if (fab_select_card(mine, "host", host, sizeof host) != UTIL_OK ||
        fab_select_card(cards, "host", peer_host, sizeof peer_host) != UTIL_OK) {
        snprintf(core_unreach_text, sizeof core_unreach_text,
                 "no fabric reaches %s: %s (its addresses: %.300s; DCFA_FABRICS=%s)",
                 util_proc(lpid), why, cards, util_cfg.fabrics);
        return;
    }
    const char *common = "";
    if (fab_select_card(mine, "net", nets, sizeof nets) == UTIL_OK &&
        fab_select_card(cards, "net", peer_nets, sizeof peer_nets) == UTIL_OK) {
        util_net a[UTIL_NET_MAX], b[UTIL_NET_MAX];
        int na = util_net_parse(nets + 4, strlen(nets + 4), a, UTIL_NET_MAX);
        int nb = util_net_parse(peer_nets + 4, strlen(peer_nets + 4), b, UTIL_NET_MAX);
        if (na > 0 && nb > 0 && !util_net_common(a, na, b, nb))
            common = "no network in common and no gateway between them; ";
        else if ((na <= 0 || nb <= 0) && strcmp(host, peer_host) != 0)
            /* a job on one host opens no fabric for other hosts (auto: shm alone) */
            common = "a job that runs on one host opens no fabric for other hosts "
                     "(DCFA_FABRICS=shm,ofi in both jobs opens one); ";
    }
    snprintf(core_unreach_text, sizeof core_unreach_text,
             "host %s cannot reach %s on host %s: %s%s (networks here %s, there %s; "
             "DCFA_FABRICS=%s)",
             host + 5, util_proc(lpid), peer_host + 5, common, why,
             fab_select_card(mine, "net", nets, sizeof nets) == UTIL_OK ? nets + 4 : "?",
             fab_select_card(cards, "net", peer_nets, sizeof peer_nets) == UTIL_OK ? peer_nets + 4
                                                                                   : "?",
             util_cfg.fabrics);
}

core_fab *core_fab_choose(int lpid, char *card, size_t cardlen, char *why, size_t whylen)
{
    char cards[CORE_CARD_MAX];
    if (core_s.nfabs == 0) {
        util_log("no fabric is open to reach %s", util_proc(lpid));
        return NULL;
    }
    if (core_cards_get(lpid, cards, sizeof cards) != UTIL_OK)
        return NULL;
    const fab_ops *f = NULL;
    for (int round = 0; !f && round < 2; round++) {
        /* highest priority first (a fabric opened late is at the end of core_s.fabs) */
        const fab_ops *opened[CORE_MAX_FABS];
        for (int i = 0; i < core_s.nfabs; i++) {
            int at = i;
            while (at > 0 && opened[at - 1]->caps()->priority < core_s.fabs[i].caps->priority) {
                opened[at] = opened[at - 1];
                at--;
            }
            opened[at] = core_s.fabs[i].ops;
        }
        f = fab_select_choose(opened, core_s.nfabs, cards, card, cardlen, why, whylen);
        if (round > 0 || (!core_s.late.ops && !strstr(cards, "late:")))
            break;
        /* a fabric opened late (mine, or the peer's) may be the one both ends choose: only
         * the first (shm: the peer is on my node) is sure to outrank it; otherwise mine is
         * taken in (waiting for its thread) and the peer's card read, then the choice made */
        if (f == opened[0])
            break;
        /* a first contact while ofi opens at either end goes over sock, if both ends agree
         * (docs/fabric.md, "First contact over sock") */
        if (core_late_pair(lpid, cards)) {
            f = &fab_sock_ops;
            if (fab_select_card(cards, f->name, card, cardlen) != UTIL_OK)
                return NULL;
            snprintf(why, whylen, "sock: first contact while ofi opens");
            break;
        }
        f = NULL;
        core_late_join();
        if (core_late_resolve(lpid, cards, sizeof cards) != UTIL_OK)
            return NULL;
    }
    if (!f) {
        core_unreachable(lpid, cards, why);
        return NULL;
    }
    for (int i = 0; i < core_s.nfabs; i++)
        if (core_s.fabs[i].ops == f)
            return &core_s.fabs[i];
    return NULL;
}

int core_card_get(int lpid, const fab_ops *fab, char *card, size_t cardlen)
{
    char cards[CORE_CARD_MAX];
    int rc = core_cards_get(lpid, cards, sizeof cards);
    if (rc == UTIL_OK)
        rc = core_late_resolve(lpid, cards, sizeof cards);
    if (rc != UTIL_OK)
        return rc;
    rc = fab_select_card(cards, fab->name, card, cardlen);
    if (rc != UTIL_OK)
        util_log("%s has no %s address (its addresses: %s)", util_proc(lpid), fab->name, cards);
    return rc;
}

/* DCFA_CMA_MIN=-1 (auto) on a node where every process has a core, for a message alone
 * (core_cma_min_for): below which size two copies through the staging pool beat one
 * process_vm_readv, decided by the machine. A single copy pays the kernel's pinning of each
 * page; two copies pay a second pass and, on a machine whose cores share lines slowly, every
 * line crossing twice. Measured (docs/bench.md): where one readv of 64 KiB took 5.2 memcpys
 * of it in cache, the copies won up to 1 MiB (ping-pong 16 KiB 4.3-5.2 against 7.1 us);
 * where it took 2.3-2.8, single copy won from the eager limit up (ping-pong from a buffer
 * not just written, 16-256 KiB: 1.5-2.6x faster) and stayed within 4% of the copies
 * elsewhere. So: a probe of both on this process's own memory, once, the best of 8; single
 * copy from the eager limit when readv costs under 3.5 memcpys. A message that follows
 * others still under way (a stream) keeps the copies whatever the probe says: there they
 * keep both cores busy (bw 16-256 KiB 20-30% ahead of single copy), and with the sender's
 * copy streamed (DCFA_STAGE_NT) at every size (bw 1-4 MiB 2.2x the peers against 1.6-1.8x
 * single-copy, bi-bandwidth 1.25x against 0.94-0.99x). */
static _Atomic uint64_t core_probe[3];  /* readv ns, memcpy ns, done */

size_t core_copy_below(uint64_t *readv_ns, uint64_t *memcpy_ns)
{
    if (!atomic_load_explicit(&core_probe[2], memory_order_acquire)) {
        enum { N = 64 << 10 };
        char *a = util_malloc(N), *b = util_malloc(N);
        memset(a, 1, N);
        memset(b, 0, N);
        uint64_t rd = UINT64_MAX, cp = UINT64_MAX;
        for (int i = 0; i < 8; i++) {
            struct iovec l = {b, N}, r = {a, N};
            uint64_t t0 = util_now_ns();
            ssize_t n = process_vm_readv(getpid(), &l, 1, &r, 1, 0);
            uint64_t t1 = util_now_ns();
            memcpy(b, a, N);
            __asm__ volatile("" : : "r"(b) : "memory");
            uint64_t t2 = util_now_ns();
            if (n != N) {
                rd = UINT64_MAX;    /* no single copy here: the copies, whatever the sizes */
                break;
            }
            rd = t1 - t0 < rd ? t1 - t0 : rd;
            cp = t2 - t1 < cp ? t2 - t1 : cp;
        }
        free(a);
        free(b);
        atomic_store_explicit(&core_probe[0], rd, memory_order_relaxed);
        atomic_store_explicit(&core_probe[1], cp, memory_order_relaxed);
        atomic_store_explicit(&core_probe[2], 1, memory_order_release);
    }
    uint64_t rd = atomic_load_explicit(&core_probe[0], memory_order_relaxed);
    uint64_t cp = atomic_load_explicit(&core_probe[1], memory_order_relaxed);
    if (readv_ns)
        *readv_ns = rd;
    if (memcpy_ns)
        *memcpy_ns = cp;
    return rd != UINT64_MAX && (double)rd < 3.5 * (double)cp ? 0 : (size_t)1 << 20;
}

/* Where a stream's copies through the pool beat single copy depends on the CPU more than on
 * anything one process can probe alone (docs/bench.md, "The copy path by CPU"): on an AMD EPYC
 * (Zen 4) the streamed copies won (a buffer per message, bw 1-4 MiB 2.2x the peers against
 * 1.6-1.8x single copy), on an Intel Xeon they lost (bw 7.0-9.3 against 10-20 GB/s single
 * copy, bi-bandwidth 7-9.5 against 10.7-21.5, the peers 4.8-21.1), although this process's
 * own timings of either copy (core_copy_below, a copy into a pool with non-temporal stores)
 * looked alike on both. So: on Intel a stream takes the crossover of a message alone */
int core_copy_streams_win(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    static int intel = -1;
    if (intel < 0) {
        __builtin_cpu_init();
        intel = __builtin_cpu_is("intel") ? 1 : 0;
    }
    return !intel;
#else
    return 1;
#endif
}

static void core_crossover_text(char *buf, size_t len, size_t crossover)
{
    snprintf(buf, len, crossover == SIZE_MAX ? "copies at every size" : "%zu", crossover);
}

void core_copy_describe(char *buf, size_t len)
{
    uint64_t rd, cp;
    size_t below = core_copy_below(&rd, &cp);
    char probe[160];
    if (rd == UINT64_MAX)
        snprintf(probe, sizeof probe, "process_vm_readv is not allowed here");
    else
        snprintf(probe, sizeof probe, "one process_vm_readv of 64 KiB took %.2f us, %.1f memcpys of it, %s 3.5",
                 (double)rd / 1e3, (double)rd / (double)(cp ? cp : 1), below ? "not under" : "under");
    char lone[32], stream[32], hot[32], hotb[32], both[32];
    core_crossover_text(lone, sizeof lone, core_cma_min_for(1));
    core_crossover_text(stream, sizeof stream, core_cma_min_for(0));
    core_crossover_text(hot, sizeof hot, core_cma_min_hot(0));
    core_crossover_text(hotb, sizeof hotb, core_cma_min_hot(1));
    core_crossover_text(both, sizeof both, core_cma_min_both());
    snprintf(buf, len,
             "%s for a message alone%s, %s in a stream%s, %s in a stream from a reused buffer%s "
             "(%s with traffic both ways), %s for a message alone with traffic both ways%s "
             "(probe: %s; auto is 0 on an oversubscribed node)",
             lone, util_cfg.cma_min >= 0 ? " (set)" : "", stream,
             util_cfg.cma_min_stream >= 0 ? " (set)"
             : core_copy_streams_win()    ? ""
                                          : " (an Intel CPU: as a message alone)",
             hot, util_cfg.cma_min_hot >= 0 ? " (set)" : "", hotb, both,
             util_cfg.cma_min_both >= 0 ? " (set)" : "", probe);
}

static int core_block(int max_ms);

int core_init(const core_params *p)
{
    memset(&core_s, 0, sizeof core_s);
    core_s.self = p->self;
    core_s.nprocs = p->nprocs;
    core_s.job_size = p->nprocs;
    snprintf(core_s.job_id, sizeof core_s.job_id, "%s", p->job_id ? p->job_id : "");
    core_s.job = fab_job_hash(core_s.job_id);
    core_s.kvs = p->kvs;
    core_s.lost_unseen = p->lost_unseen;
    core_s.late.net = p->net_late && util_cfg.ofi_late && p->kvs.publish && p->kvs.lookup;
    core_ring_geometry(util_cfg.eager_limit, util_cfg.block_size, util_cfg.max_credit,
                       (unsigned)util_cfg.credit_sync_limit, p->node_nprocs);
    core_s.eager_least = core_s.eager_max; /* until the fabrics open */
    core_procs_grow(p->nprocs);
    for (int i = 0; i < p->nprocs; i++)
        core_s.procs[i].gid = FAB_GID(core_s.job, i);
    util_queue_init(&core_s.posted);
    util_queue_init(&core_s.unexpected);
    util_htab_init(&core_reqs, sizeof(core_req), 1);
    util_proc_namer = core_proc_name;
    util_wait_block = core_block;
    util_host_namer = core_host_name;
    core_s.fp = (fab_params){.job_id = core_s.job_id, .self = p->self, .nprocs = p->nprocs,
                             .local_nprocs = p->local_nprocs, .nblocks = core_s.nblocks,
                             .local_nblocks = core_s.local_nblocks,
                             .block_size = core_s.block_size,
                             .packet_max = sizeof(wire_hdr) + core_s.payload_max,
                             .use_cma = util_cfg.cma,
                             .inline_limit = util_cfg.inline_limit,
                             .ring_start = util_cfg.ring_start > 0 ? (uint32_t)util_cfg.ring_start : 0,
                             .up = &core_upcalls,
                             .fence = p->kvs.fence};
    if (p->nprocs > 1)
        return core_fabrics_publish();
    return UTIL_OK;
}

/* The ring's shape from the tunables (docs/protocol.md: ring and credits). A packet
 * covers wire_blocks(len) blocks; the largest (an eager message at the limit, or a DATA
 * fragment) covers kmax. A sender needs at most kmax + 1 free blocks at once (its packet
 * and the one kept for SYNC; a PAD to the ring's end goes first, on its own), so a
 * receiver sends a SYNC whenever the sender's view of its credit falls below kmax + 1,
 * and the ring has at least 2 kmax blocks (grown to that if the tunables ask for less)
 * so that a SYNC is not due after every packet. The block count is a power of two
 * (positions are free-running 32-bit counters taken modulo it). */
void core_ring_geometry(size_t eager_limit, size_t block_size, int nblocks, unsigned sync_limit,
                        int node_nprocs)
{
    size_t lim = eager_limit > sizeof(wire_hdr) ? eager_limit : sizeof(wire_hdr);
    core_s.eager_max = lim - sizeof(wire_hdr);
    /* a power of two (packets' block counts are shifts), at least a cache line */
    core_s.block_size = 64;
    core_s.block_shift = 6;
    while (core_s.block_size < block_size) {
        core_s.block_size *= 2;
        core_s.block_shift++;
    }
    /* room for the control payloads and a useful DATA fragment whatever the eager limit */
    size_t pmax = core_s.eager_max;
    if (pmax < core_s.block_size - sizeof(wire_hdr))
        pmax = core_s.block_size - sizeof(wire_hdr);
    if (pmax < 256)
        pmax = 256;
    core_s.payload_max = pmax;
    uint32_t kmax = core_blocks((uint32_t)pmax);
    unsigned n = 1;
    while (n < (unsigned)(nblocks > 0 ? nblocks : CORE_RING_BLOCKS) || n < 2 * kmax)
        n *= 2;
    core_s.nblocks = n;
    core_s.sync_below = sync_limit > kmax + 1 ? sync_limit : kmax + 1;
    /* Auto: rings to the node's processes double while they fit the process's budget
     * shared among them and the cap. Few peers get large rings (8 KiB messages streamed
     * 1.8x faster through 256 KiB rings than through 32 KiB here); many keep 32 KiB, so
     * memory per peer does not grow where it counts (docs/bench.md). */
    core_s.local_nblocks = n;
    if (nblocks <= 0) {
        size_t peers = node_nprocs > 1 ? (size_t)node_nprocs - 1 : 1;
        size_t fit = util_cfg.shm_rings / peers;
        if (fit > util_cfg.shm_ring_max)
            fit = util_cfg.shm_ring_max;
        while ((size_t)core_s.local_nblocks * 2 * core_s.block_size <= fit &&
               core_s.local_nblocks < (1u << 24))
            core_s.local_nblocks *= 2;
    }
}

void core_ring_describe(char *buf, size_t len)
{
    /* the shm ring by the node's process count: "2-3 processes 524288, ..." */
    char sizes[256] = "";
    size_t at = 0;
    unsigned prev = 0;
    int from = 2;
    for (int n = 2;; n++) {
        core_ring_geometry(util_cfg.eager_limit, util_cfg.block_size, util_cfg.max_credit,
                           (unsigned)util_cfg.credit_sync_limit, n);
        unsigned cur = core_s.local_nblocks;
        if (prev && cur != prev && at < sizeof sizes) {
            at += (size_t)snprintf(sizes + at, sizeof sizes - at, "%s%d-%d processes %zu",
                                   at ? ", " : "", from, n - 1, (size_t)prev * core_s.block_size);
            from = n;
        }
        prev = cur;
        if (cur == core_s.nblocks || n >= 4096)
            break;
    }
    if (at < sizeof sizes)
        snprintf(sizes + at, sizeof sizes - at, "%s%d or more processes %zu", at ? ", " : "", from,
                 (size_t)prev * core_s.block_size);
    core_ring_geometry(util_cfg.eager_limit, util_cfg.block_size, util_cfg.max_credit,
                       (unsigned)util_cfg.credit_sync_limit, 0);
    size_t ring = (size_t)core_s.nblocks * core_s.block_size;
    char fabs[512];
    fab_select_peer_cost(core_s.nblocks, core_s.block_size, sizeof(core_conn), fabs, sizeof fabs);
    snprintf(buf, len,
             "receive ring %u blocks x %zu bytes = %zu bytes (SYNC below %u free blocks); "
             "on shm the ring of a connection by the processes sharing the node (all jobs; the "
             "smaller of the two ends' sizes): %s bytes; per process: a staging pool of %d x %zu "
             "bytes (%zu bytes with its header, made at the first rendezvous, shared by all peers "
             "on shm); per connected peer %s",
             core_s.nblocks, core_s.block_size, ring, core_s.sync_below, sizes,
             util_cfg.stage_chunks, util_cfg.stage_chunk,
             util_cfg.stage_chunks > 0 ? core_stage_size() : 0, fabs);
}

/* The FIN handshake (docs/protocol.md): a FIN (a SYNC with WIRE_F_FIN, queued after
 * everything else) on each connection asked for, then progress until each brought the
 * peer's FIN and its backlog is empty. MPI_Finalize runs it on every connection, so it is
 * no barrier over the world: a rank that talked to two neighbours waits for those two, and
 * no connection is made for it (a connection that appears meanwhile, a peer's handshake
 * arriving late, gets its FIN too); MPI_Comm_disconnect runs it on the connections to the
 * other job's processes. Credit keeps flowing (SYNCs) until the peer's FIN is in: a FIN
 * waiting for credit is never stuck behind a peer that waits for ours. */
static int core_fin_wanted(const core_conn *c, const int *lpids, int n)
{
    if (!lpids)
        return 1;
    for (int i = 0; i < n; i++)
        if (lpids[i] == c->lpid)
            return 1;
    return 0;
}

static void core_fin_exchange(const int *lpids, int n)
{
    static const uint8_t none;
    util_backoff b;
    util_backoff_reset(&b);
    for (;;) {
        int waiting = 0;
        for (int i = 0; i < core_s.nactive; i++) {
            core_conn *c = core_s.active[i];
            if (!core_fin_wanted(c, lpids, n))
                continue;
            if (!c->fin_out) {
                core_conn_send_ctl(c, WIRE_SYNC, WIRE_F_FIN, NULL, &none, 0);
                c->fin_out = 1;
            }
            waiting |= !c->fin_in || !util_queue_empty(&c->backlog);
        }
        if (!waiting)
            break;
        if (core_progress() == 0)
            util_backoff_wait(&b);
    }
}

static void core_conn_drop(core_conn *c)
{
    c->fab->ops->chan->disconnect(c->fc);
    c->fab->nconns--;
    core_s.conns[c->lpid] = NULL;
    free(c->sent);
    free(c);
}

/* The fabric lost connection c (fab_upcalls.lost, from inside its poll(): no connection list
 * is being walked). What either end had in flight on it is gone, so everything that waits
 * for the peer on it fails: its send requests and the receives bound to the peer (posted
 * with its rank, or matched to a message of it: a rendezvous under way) complete with
 * UTIL_EUNREACH (MPI_ERR_OTHER) and `why` as the error's text; a receive from any source
 * stays posted (the peer is alive, and others may send). The peer's messages in my
 * unexpected queue that still need it (an RTS, a synchronous EAGER waiting for its ACK) go:
 * their sender failed them at its end. The connection is dropped; the pair's next message
 * makes a new one, with sequence numbers and credits from the start at both ends (the
 * peer's end fails the same way when its fabric notices). */
void core_conn_lost(void *ctx, const char *why)
{
    core_conn *c = ctx;
    int lpid = c->lpid;
    /* blocks written that the peer has not reported consumed: a message in them may be gone
     * (or only its credit not back yet) */
    int unacked = c->tx_count != c->credit_seen && !(c->fin_out && c->fin_in);
    snprintf(core_unreach_text, sizeof core_unreach_text, "%s", why);
    /* 0. through a gateway: what it may have taken, for the pair's next connection */
    core_lost_conn(c, why);
    /* 1. the requests to fail, marked done with the error first: completing one runs the
     * layer above, which may start others (to the peer: on a new connection) */
    int *ids = NULL, n = 0, cap = 0;
    for (int id = 1; id < core_reqs.next_unused; id++) {
        core_req *r = core_req_get(id);
        if (!r || r->complete)
            continue;
        if (r->kind == CORE_REQ_SEND && r->u.send.lpid == lpid) {
            if (r->u.send.state != CORE_S_DONE) /* (DONE: an eager send reopened by a cancel) */
                core_send_move(r, CORE_SE_LOST, CORE_S_DONE);
            if (r->u.send.cancel == 1)
                r->u.send.cancel = 2; /* no answer will come: complete, not cancelled */
        } else if (r->kind == CORE_REQ_RECV && r->u.recv.lpid == lpid &&
                   r->u.recv.state != CORE_R_DONE) {
            if (r->u.recv.state == CORE_R_POSTED || r->u.recv.state == CORE_R_RTR) {
                util_queue_remove(&r->qn);
                core_lost_failed_recv(lpid, r);
            }
            core_recv_move(r, CORE_RE_LOST, CORE_R_DONE);
            r->status.source = r->u.recv.src;
            r->status.tag = r->u.recv.tag;
            r->status.count = 0;
        } else {
            continue;
        }
        core_req_mem_drop(r);
        r->status.error = UTIL_EUNREACH;
        core_req_set_fail_text(r, why);
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            ids = util_realloc(ids, (size_t)cap * sizeof *ids);
        }
        ids[n++] = id;
    }
    /* 2. the peer's unexpected messages that need it (an RTS, whose data stay at the
     * sender; a synchronous EAGER, whose sender failed): lost, the receive that matches one
     * fails (before, they were dropped and that receive waited for ever) */
    for (util_qnode *q = core_s.unexpected.head.next; q != &core_s.unexpected.head; q = q->next) {
        core_msg *m = UTIL_CONTAINER(q, core_msg, qn);
        if (m->lpid == lpid && (m->type == WIRE_RTS || (m->flags & WIRE_F_SSEND)))
            core_lost_message(m, why);
    }
    /* 3. the connection: its backlog's packets are not sent */
    util_qnode *q;
    while ((q = util_queue_first(&c->backlog))) {
        util_queue_remove(q);
        free(UTIL_CONTAINER(q, core_pend, qn));
    }
    int k = 0;
    for (int i = 0; i < core_s.nhot; i++)
        if (core_s.hot[i] != c)
            core_s.hot[k++] = core_s.hot[i];
    core_s.nhot = k;
    k = 0;
    for (int i = 0; i < core_s.nactive; i++)
        if (core_s.active[i] != c)
            core_s.active[k++] = core_s.active[i];
    core_s.nactive = k;
    core_conn_drop(c);
    core_fab_pace();
    /* 4. the requests complete (a request completed meanwhile by the layer above is left) */
    for (int i = 0; i < n; i++) {
        core_req *r = core_req_get(ids[i]);
        int state = r && r->kind == CORE_REQ_SEND   ? r->u.send.state
                    : r && r->kind == CORE_REQ_RECV ? r->u.recv.state
                                                    : -1;
        if (r && !r->complete && state == (r->kind == CORE_REQ_SEND ? CORE_S_DONE : CORE_R_DONE) &&
            r->status.error == UTIL_EUNREACH)
            core_req_complete(r);
    }
    free(ids);
    /* nothing of mine waits for the peer, but what I sent may not have reached it: its
     * receive for it would wait for ever. Said where a fatal handler ends the job
     * (docs/faults.md, "A connection is lost") */
    if (n == 0 && unacked && core_s.lost_unseen && !core_s.finalizing) {
        char text[900];
        snprintf(text, sizeof text,
                 "%s; what this process sent to %s that its end had not reported received may "
                 "be lost with it, and no call of this process waited for it",
                 why, util_proc(lpid));
        core_s.lost_unseen(text);
    }
}

int core_disconnect(const int *lpids, int n)
{
    int any = 0;
    for (int i = 0; i < n; i++)
        any |= lpids[i] >= 0 && lpids[i] < core_s.nprocs && core_s.conns[lpids[i]] != NULL;
    if (!any)
        return UTIL_OK;
    core_fin_exchange(lpids, n);
    /* nothing the peer needs is left: its FIN came after all its packets, mine after all of
     * mine, and both backlogs are empty */
    int k = 0;
    for (int i = 0; i < core_s.nhot; i++)
        if (!core_fin_wanted(core_s.hot[i], lpids, n))
            core_s.hot[k++] = core_s.hot[i];
    core_s.nhot = k;
    k = 0;
    for (int i = 0; i < core_s.nactive; i++) {
        core_conn *c = core_s.active[i];
        if (core_fin_wanted(c, lpids, n))
            core_conn_drop(c);
        else
            core_s.active[k++] = c;
    }
    core_s.nactive = k;
    core_fab_pace();
    return UTIL_OK;
}

int core_finalize(void)
{
    /* every process that started opening a fabric late has it open at close (ofi's close
     * fences the job) */
    core_late_join();
    core_fin_exchange(NULL, 0);
    core_s.finalizing = 1;
    util_wait_block = NULL;
    for (int i = 0; i < core_s.nactive; i++)
        core_conn_drop(core_s.active[i]);
    core_s.nactive = 0;
    core_s.nhot = 0;
    core_stage_close();
    free(core_s.bounce);
    core_s.bounce = NULL;
    for (int i = 0; i < core_s.nfabs; i++)
        core_s.fabs[i].ops->close();
    core_s.nfabs = 0;
    core_late_finish();
    core_lost_close();
    util_qnode *n;
    while ((n = util_queue_first(&core_s.unexpected))) {
        core_msg *m = UTIL_CONTAINER(n, core_msg, qn);
        util_queue_remove(n);
        free(m->data);
        free(m);
    }
    for (int i = 0; i < core_s.nprocs; i++)
        free(core_s.procs[i].cards);
    free(core_s.procs);
    free(core_s.conns);
    free(core_s.active);
    free(core_s.hot);
    free(core_s.held);
    util_htab_destroy(&core_reqs);
    return UTIL_OK;
}

/* ---- requests ------------------------------------------------------------------ */

core_req *core_req_alloc(int kind)
{
    int id;
    core_req *r = util_htab_take(&core_reqs, &id);
    util_zero(r, sizeof *r);
    r->kind = kind;
    r->id = id;
    r->qn.next = r->qn.prev = &r->qn;
    return r;
}

void core_req_unexpected(const core_conn *c, uint32_t id, const char *what)
{
    util_die("malformed packet from %s: %s names request %u, which is not waiting for it",
             util_proc(c->lpid), what, id);
}

void core_req_fail_text_drop(core_req *r)
{
    free(r->fail_text);
    r->fail_text = NULL;
}

/* the text of request r's UTIL_EUNREACH: kept per request, so that two failures at once
 * (two connections lost, a loss and then no other way) each keep their own */
void core_req_set_fail_text(core_req *r, const char *text)
{
    free(r->fail_text);
    r->fail_text = util_strdup(text);
}

const char *core_req_failure_text(const core_req *r)
{
    return r->fail_text ? r->fail_text : core_unreach_text;
}

void core_req_rndv_drop(core_req *r)
{
    core_req_mem_drop(r);
    free(r->rndv);
    r->rndv = NULL;
}

void core_req_complete(core_req *r)
{
    if (r->kind == CORE_REQ_SEND && r->u.send.cancel == 1) {
        r->u.send.proto_done = 1;   /* completes when the CANCEL is answered */
        return;
    }
    if (r->kind == CORE_REQ_RECV && !r->complete) {
        core_s.recv_bytes -= r->u.recv.distinct; /* counted since core_irecv/core_imrecv */
        for (int i = 0; r->u.recv.distinct && r->u.recv.buf && i < 4; i++)
            if (core_s.recv_recent[i] == r->u.recv.buf)
                core_s.recv_recent[i] = NULL; /* the next receive into it counts again */
        core_s.recvs_open--;
    }
    r->complete = 1;
    if (r->kind == CORE_REQ_SEND && r->u.send.rts_out) {
        r->u.send.rts_out = 0;
        core_s.rndv_out--;
    }
    if (r->on_complete)
        r->on_complete(r);
}

void core_req_set_status(core_req *r, int32_t src, int32_t tag, size_t bytes, int err)
{
    r->status.source = src;
    r->status.tag = tag;
    r->status.count = (int64_t)bytes;
    r->status.error = err;
}

/* ---- sends: the protocol choice, in one place ---------------------------------------- */

/* a fingerprint of send r's contiguous data: 8 words spread over it (core_send_hot); 0 for
 * data that is not contiguous or shorter than 64 bytes */
static uint64_t core_send_sample(const core_req *r)
{
    size_t n = r->u.send.bytes;
    if (!r->u.send.dt->contig || n < 64)
        return 0;
    const unsigned char *p = core_at(r->u.send.buf, r->u.send.dt->true_lb);
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < 8; i++) {
        uint64_t w;
        memcpy(&w, p + i * ((n - 8) / 7), sizeof w);
        h = (h ^ w) * 0x100000001b3ull;
    }
    return h;
}

/* rendezvous send r: is it from the buffer and size of my previous one (core_cma_min_hot),
 * and with the same fingerprint (hot 2: likely not written since, so the receiver may still
 * hold its lines)? Did a receive of mine find its message already there since that one
 * (core_both_ways)? The fingerprint is taken only where it decides (core_copy_wanted: both
 * ways, between the crossover of such data and DCFA_CMA_MIN_BOTH's): it reads the buffer,
 * whose being unmapped a refused transfer reports otherwise */
static void core_send_hot(core_req *r)
{
    r->u.send.hot = r->u.send.buf == core_s.hot_buf && r->u.send.bytes == core_s.hot_bytes;
    core_s.hot_buf = r->u.send.buf;
    core_s.hot_bytes = r->u.send.bytes;
    r->u.send.early = core_s.recv_early;
    core_s.recv_early = 0;
    uint64_t fp = 0;
    if (core_both_ways(r) && r->u.send.bytes >= core_cma_min_hot(1) &&
        r->u.send.bytes < core_cma_min_both())
        fp = core_send_sample(r);
    if (r->u.send.hot && fp && fp == core_s.hot_sample)
        r->u.send.hot = 2;
    core_s.hot_sample = fp;
}

int core_isend(const void *buf, size_t count, const core_dt *dt, int lpid, int32_t src_rank,
               int32_t tag, uint32_t ctx, int mode, core_req **out)
{
    /* a contiguous message that fits one eager packet goes out as MPI_Send's does
     * (core_send_eager_now) and its request is born complete; it keeps what MPI_Cancel needs */
    int now = (mode == CORE_SEND_STD || mode == CORE_SEND_READY) && dt->contig &&
              core_send_eager_now(core_at(buf, dt->true_lb), count * dt->size, lpid, src_rank, tag,
                                  ctx) == UTIL_OK;
    core_req *r = core_req_alloc(CORE_REQ_SEND);
    r->u.send.buf = buf;
    r->u.send.count = count;
    r->u.send.dt = dt;
    r->u.send.bytes = count * dt->size;
    r->u.send.lpid = lpid;
    r->u.send.src = src_rank;
    r->u.send.tag = tag;
    r->u.send.ctx = ctx;
    r->u.send.mode = mode;
    *out = r;
    if (now) {
        r->u.send.seq = core_s.conns[lpid]->tx_msg_seq;
        core_send_move(r, CORE_SE_EAGER, CORE_S_DONE);
        r->complete = 1;
        return UTIL_OK;
    }
    if (lpid == core_s.self) {
        core_send_local(r);
        return UTIL_OK;
    }
    core_conn *c = core_conn_get(lpid);
    if (!c) {
        core_req_free(r);
        *out = NULL;
        return core_s.conn_failure;
    }
    r->u.send.seq = ++c->tx_msg_seq;
    if (core_send_is_eager(c, r))
        return core_eager_send(c, r);
    core_send_hot(r);
    if (core_stage_eager_send(c, r))
        return UTIL_OK;
    if (core_rtr_try_write(c, r))
        return UTIL_OK;
    return core_rts_send(c, r);
}

/* ---- receives ------------------------------------------------------------------------ */

/* A receive's memory among those under way (DCFA_RECV_NT): its bytes, unless one of the
 * last four counted receives, still under way, was posted into the same buffer. A window of
 * receives into one buffer, as the field's bandwidth programs post, is that buffer's bytes
 * once and stays in cache: counted 64 times it made the copies stream past the cache (2
 * ranks, 256 KiB from MPI_Alloc_mem, one buffer: both ways 38.6 against 89 GB/s, one way
 * 37.5 against 52). (MPI_BOTTOM, NULL, is always counted.) */
static void core_recv_count(core_req *r)
{
    const void *buf = r->u.recv.buf;
    r->u.recv.distinct = r->u.recv.capacity;
    for (int i = 0; buf && i < 4; i++)
        if (core_s.recv_recent[i] == buf)
            r->u.recv.distinct = 0;
    if (r->u.recv.distinct)
        core_s.recv_recent[core_s.recv_recent_at++ & 3] = buf;
    core_s.recv_bytes += r->u.recv.distinct;
}

int core_irecv(void *buf, size_t count, const core_dt *dt, int lpid, int32_t src_rank, int32_t tag,
               uint32_t ctx, core_req **out)
{
    core_req *r = core_req_alloc(CORE_REQ_RECV);
    r->u.recv.buf = buf;
    r->u.recv.count = count;
    r->u.recv.dt = dt;
    r->u.recv.capacity = count * dt->size;
    r->u.recv.lpid = lpid;
    r->u.recv.src = src_rank;
    r->u.recv.tag = tag;
    r->u.recv.ctx = ctx;
    core_recv_count(r);
    core_s.recvs_open++;
    *out = r;
    core_msg *m = core_match_unexpected(ctx, src_rank, tag, 1);
    if (m) {
        core_s.recv_early = 1;
        core_recv_from_msg(r, m);
        return UTIL_OK;
    }
    const char *gone =
        __builtin_expect(core_s.nlost != 0, 0) && lpid >= 0 ? core_lost_unreachable(lpid) : NULL;
    if (gone) {
        /* its connection was lost and no gateway is left to it: nothing can come */
        core_lost_fail_recv(r, lpid, src_rank, tag, gone);
        core_req_complete(r);
        return UTIL_OK;
    }
    r->u.recv.state = CORE_R_POSTED;
    util_queue_push(&core_s.posted, &r->qn);
    if (r->u.recv.capacity > core_s.eager_least)
        core_rtr_maybe_send(r);
    return UTIL_OK;
}

int core_iprobe(int32_t src_rank, int32_t tag, uint32_t ctx, int *flag, core_status *status,
                core_msg **msg)
{
    core_msg *m = core_match_unexpected(ctx, src_rank, tag, msg != NULL);
    if (!m) {
        core_progress();
        m = core_match_unexpected(ctx, src_rank, tag, msg != NULL);
    }
    *flag = m != NULL;
    if (m && status) {
        *status = (core_status){.source = m->src, .tag = m->tag, .count = (int64_t)m->size};
    }
    if (msg)
        *msg = m;
    return UTIL_OK;
}

int core_imrecv(void *buf, size_t count, const core_dt *dt, core_msg *m, core_req **out)
{
    core_req *r = core_req_alloc(CORE_REQ_RECV);
    r->u.recv.buf = buf;
    r->u.recv.count = count;
    r->u.recv.dt = dt;
    r->u.recv.capacity = count * dt->size;
    r->u.recv.lpid = m->lpid;
    r->u.recv.src = m->src;
    r->u.recv.tag = m->tag;
    r->u.recv.ctx = m->ctx;
    core_recv_count(r);
    core_s.recvs_open++;
    core_s.recv_early = 1;
    *out = r;
    core_recv_from_msg(r, m);
    return UTIL_OK;
}

int core_cancel_recv(core_req *r)
{
    if (r->complete || r->kind != CORE_REQ_RECV)
        return 0;
    if (r->u.recv.state == CORE_R_RTR)
        return core_cancel_rtr(r);
    if (r->u.recv.state != CORE_R_POSTED)
        return 0;
    util_queue_remove(&r->qn);
    core_req_mem_drop(r);
    r->status.cancelled = 1;
    r->status.count = 0;
    core_recv_move(r, CORE_RE_CANCEL, CORE_R_DONE);
    core_req_complete(r);
    return 1;
}

/* ---- progress -------------------------------------------------------------------------- */

int core_progress_conn(core_conn *c);   /* conn.c */

void core_fab_pace(void)
{
    core_s.poll_mask = 31;
    for (int i = 0; i < core_s.nfabs; i++) {
        core_fab *f = &core_s.fabs[i];
        unsigned every = f->caps->poll_interval;
        if (f->nconns == 0 && every < 32)
            every = 32;
        f->poll_mask = every - 1;
        if (f->poll_mask < core_s.poll_mask)
            core_s.poll_mask = f->poll_mask;
    }
}

int core_progress(void)
{
    int events = 0;
    if (core_s.in_progress)
        return 0;
    core_s.in_progress = 1;
    /* each fabric at its own pace (shm: new connections are rare, its door is looked at every
     * 32nd pass, and the hot loop polls only the rings); a fabric without connections only
     * listens for new ones, at most every 32nd pass */
    unsigned pass = core_s.passes++;
    if ((pass & core_s.poll_mask) == 0) {
        core_late_poll();
        for (int i = 0; i < core_s.nfabs; i++)
            if ((pass & core_s.fabs[i].poll_mask) == 0)
                events += core_s.fabs[i].ops->poll();
    }
    /* the connections with something to do (all of those whose fabric does not wake them);
     * a woken one that had nothing leaves the list, its slot taken by the last one */
    for (int i = 0; i < core_s.nhot;) {
        core_conn *c = core_s.hot[i];
        int ev = core_progress_conn(c);
        events += ev;
        if (ev == 0 && core_conn_cool(c))
            core_s.hot[i] = core_s.hot[--core_s.nhot];
        else
            i++;
    }
    if (__builtin_expect(core_s.lost_resync, 0))
        events += core_lost_progress();
    core_s.in_progress = 0;
    if (core_s.poller)
        events += core_s.poller();
    for (int i = 0; i < core_s.npollers; i++)
        events += core_s.pollers[i]();
    return events;
}

/* util_wait_block (docs/architecture.md, "Waiting"): after a pass that found nothing, sleep
 * in poll(2) on every fabric's descriptors, at most max_ms. Only when nothing can change
 * without one of them becoming ready: no pollers of the MPI layer (schedules, windows), no
 * fabric opening in its thread, no lost connection being resolved, no connection of a
 * fabric that is polled rather than woken (shm's rings) and no packet a fabric holds for
 * the core; a connection still hot for want of credit waits for its peer's SYNC, which
 * comes by a descriptor. A fabric without descriptors (ofi) and without connections does
 * not keep it awake: a first packet on it is seen after the timeout at most. 1 slept (or a
 * descriptor was ready), 0 declined. */
static int core_block(int max_ms)
{
    if (core_s.in_progress || core_s.poller || core_s.npollers || core_s.lost_resync ||
        core_s.late.ops || core_s.nfabs == 0)
        return 0;
    for (int i = 0; i < core_s.nhot; i++) {
        core_conn *c = core_s.hot[i];
        if (!(c->caps & FAB_CAP_RX_QUEUE) || c->fab->ops->chan->rx_peek(c->fc))
            return 0;
    }
    struct pollfd fds[CORE_BLOCK_FDS];
    int n = 0;
    for (int i = 0; i < core_s.nfabs; i++) {
        core_fab *f = &core_s.fabs[i];
        if (!(f->caps->flags & FAB_CAP_WAIT_FD)) {
            if (f->nconns > 0)
                return 0;
            continue; /* a peer's first packet on it waits for the timeout at most */
        }
        if (f->nconns > 0 && !(f->caps->flags & FAB_CAP_RX_QUEUE))
            return 0; /* rings in memory: no descriptor says a packet came */
        int k = f->ops->wait_fds(fds + n, CORE_BLOCK_FDS - n);
        if (k < 0)
            return 0;
        n += k;
    }
    if (n == 0)
        return 0;
    core_st.sleeps++;
    (void)poll(fds, (nfds_t)n, max_ms); /* EINTR: a signal; the caller polls again */
    return 1;
}

void core_set_poller(int (*poll)(void)) { core_s.poller = poll; }

int core_poller_start(int (*poll)(void))
{
    for (int i = 0; i < core_s.npollers; i++)
        if (core_s.pollers[i] == poll)
            return UTIL_OK;
    if (core_s.npollers == CORE_MAX_POLLERS)
        return UTIL_ENOMEM;
    core_s.pollers[core_s.npollers++] = poll;
    return UTIL_OK;
}

void core_poller_stop(int (*poll)(void))
{
    for (int i = 0; i < core_s.npollers; i++)
        if (core_s.pollers[i] == poll) {
            core_s.pollers[i] = core_s.pollers[--core_s.npollers];
            return;
        }
}

void *core_mem_alloc(size_t len, size_t align)
{
    for (int i = 0; i < core_s.nfabs; i++)
        if ((core_s.fabs[i].caps->flags & (FAB_CAP_MEM_ALLOC | FAB_CAP_RMA)) ==
            (FAB_CAP_MEM_ALLOC | FAB_CAP_RMA)) {
            void *p = core_s.fabs[i].ops->stage->mem_alloc(len, align);
            if (p)
                return p;
        }
    return NULL;
}

void core_mem_free(void *base, size_t len) { fab_select_mem_free(base, len); }

void core_mem_release(const void *buf, size_t len)
{
    for (int i = 0; i < core_s.nfabs; i++)
        if (core_s.fabs[i].caps->flags & FAB_CAP_RMA)
            core_s.fabs[i].ops->mr->release(buf, len);
}

int core_wait(core_req *r)
{
    util_backoff b;
    util_backoff_reset(&b);
    while (!r->complete) {
        if (core_progress() > 0)
            util_backoff_reset(&b);
        else
            util_backoff_wait(&b);
    }
    return UTIL_OK;
}

static size_t core_conn_bytes(const core_conn *c)
{
    fab_usage u = {0};
    c->fab->ops->footprint(c->fc, &u);
    return u.rings + u.regs + u.endpoint + sizeof(core_conn);
}

size_t core_footprint(int *nconns)
{
    size_t total = 0;
    for (int i = 0; i < core_s.nactive; i++)
        total += core_conn_bytes(core_s.active[i]);
    if (nconns)
        *nconns = core_s.nactive;
    return total;
}

/* what a connection goes through: "direct", or its fabric's word ("gateway dcfa-g1") */
static const char *core_conn_route(core_conn *c)
{
    const char *r =
        c->fc && (c->fab->caps->flags & FAB_CAP_ROUTE) ? c->fab->ops->chan->route(c->fc) : NULL;
    return r ? r : "direct";
}

void core_stats_report(int rank)
{
    int nconn = 0;
    size_t fp = core_footprint(&nconn);
    char fabs[512] = "";
    size_t off = 0;
    for (int i = 0; i < core_s.nfabs && off < sizeof fabs; i++) {
        core_fab *f = &core_s.fabs[i];
        size_t bytes = 0;
        for (int k = 0; k < core_s.nactive; k++)
            if (core_s.active[k]->fab == f)
                bytes += core_conn_bytes(core_s.active[k]);
        fab_usage u = {0};
        f->ops->footprint(NULL, &u);
        int n = snprintf(fabs + off, sizeof fabs - off,
                         " %s_conns=%d %s_conn_bytes=%zu %s_reg_bytes=%zu %s_ep_bytes=%zu", f->ops->name,
                         f->made, f->ops->name, bytes, f->ops->name, u.regs, f->ops->name,
                         u.rings + u.endpoint);
        if (n > 0)
            off += (size_t)n;
    }
    fprintf(stderr,
            "dcfa-stats rank=%d sync_sent=%llu eager_sent=%llu rts_sent=%llu rtr_sent=%llu "
            "done_sent=%llu data_sent=%llu unexpected=%llu backlog=%llu connections=%d "
            "conn_bytes=%zu cma_bytes=%llu direct_bytes=%llu copy_bytes=%llu stage_bytes=%llu "
            "sleeps=%llu%s\n",
            rank, (unsigned long long)core_st.sent[WIRE_SYNC],
            (unsigned long long)core_st.sent[WIRE_EAGER],
            (unsigned long long)core_st.sent[WIRE_RTS], (unsigned long long)core_st.sent[WIRE_RTR],
            (unsigned long long)core_st.sent[WIRE_DONE],
            (unsigned long long)core_st.sent[WIRE_DATA], (unsigned long long)core_st.unexpected,
            (unsigned long long)core_st.backlog, nconn, fp, (unsigned long long)core_st.cma_bytes,
            (unsigned long long)core_st.direct_bytes, (unsigned long long)core_st.copy_bytes,
            (unsigned long long)core_st.stage_bytes, (unsigned long long)core_st.sleeps, fabs);
    for (int i = 0; i < core_s.nactive; i++) {
        core_conn *c = core_s.active[i];
        fab_usage u = {0};
        c->fab->ops->footprint(c->fc, &u);
        fprintf(stderr,
                "dcfa-conn rank=%d peer=%d fabric=%s provider=%s route=\"%s\" rings=%zu regs=%zu "
                "endpoint=%zu state=%zu peer_mapped=%zu why=\"%s\"\n",
                rank, c->lpid, c->fab->ops->name, c->fab->caps->provider, core_conn_route(c),
                u.rings, u.regs, u.endpoint, sizeof *c, u.mapped, c->why);
    }
}

static const char *core_tag_str(int32_t tag, char *buf, size_t len)
{
    if (tag == CORE_ANY_TAG)
        return "MPI_ANY_TAG";
    snprintf(buf, len, "%d", tag);
    return buf;
}

static const char *core_src_str(int32_t src, char *buf, size_t len)
{
    if (src == CORE_ANY_SOURCE)
        return "MPI_ANY_SOURCE";
    snprintf(buf, len, "rank %d", src);
    return buf;
}

void core_dump_pending(void)
{
    char t[32], sbuf[32];
    int n = 0;
    util_log("pending operations (hang report):");
    for (int id = 1; id < core_reqs.next_unused; id++) {
        core_req *r = core_req_get(id);
        if (!r || r->complete)
            continue;
        if (r->kind == CORE_REQ_SEND)
            util_log("  send to %s: ctx %u tag %s, %zu bytes, seq %u, state %s",
                     util_proc(r->u.send.lpid), r->u.send.ctx,
                     core_tag_str(r->u.send.tag, t, sizeof t), r->u.send.bytes, r->u.send.seq,
                     core_send_state_names[r->u.send.state]);
        else if (r->kind == CORE_REQ_RECV)
            util_log("  receive from %s: ctx %u tag %s, buffer %zu bytes, state %s",
                     core_src_str(r->u.recv.src, sbuf, sizeof sbuf), r->u.recv.ctx,
                     core_tag_str(r->u.recv.tag, t, sizeof t), r->u.recv.capacity,
                     core_recv_state_names[r->u.recv.state]);
        else
            util_log("  request %d of kind %d not complete", id, r->kind);
        n++;
    }
    for (int i = 0; i < core_s.nactive; i++) {
        core_conn *c = core_s.active[i];
        util_log("  connection to %s over %s (%s, %s; %s)%s: credit %d of %u, %s backlog, sent seq "
                 "%u, received seq %u",
                 util_proc(c->lpid), c->fab->ops->name, c->fab->caps->provider, core_conn_route(c),
                 c->why, c->ready ? "" : ", still connecting", (int)(c->tx_limit - c->tx_count),
                 c->nblocks, util_queue_empty(&c->backlog) ? "empty" : "non-empty", c->tx_msg_seq,
                 c->rx_msg_seq);
    }
    if (!n)
        util_log("  no pending point-to-point operation");
}
