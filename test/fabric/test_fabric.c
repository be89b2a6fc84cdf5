/* Fabric conformance: the same checks over every fabric built (fabric.h),
 * below the core. Two forked processes open the fabric, exchange cards,
 * and check:
 *   - reachable() accepts the peer's card and refuses foreign ones;
 *   - connect: one side starts and the other is handed the request by its
 *     poll (incoming upcall), or both start at once; ready() comes on both;
 *   - the ring: packets of every size written with tx_block/tx_post appear
 *     in the peer's ring in order, each complete once its mark reads pos+1;
 *     or with a queue (FAB_CAP_RX_QUEUE, ofi by default; ofi runs again with
 *     DCFA_OFI_SRQ=0) rx_peek gives them in order, whole;
 *   - the capabilities name only functions the fabric's tables have;
 *   - bulk read and write of registered memory, several iovecs, with
 *     completion now or through fab_op from poll;
 *   - a bulk read that cannot succeed (bad key, or on shm a bad address)
 *     completes with an error instead of hanging, and the connection works on.
 * sock runs with its own connections (no daemon hands any over here).
 * Run with no argument: every fabric; or name one (shm, sock, ofi). Over ofi the
 * traffic stays on loopback (DCFA_OFI_IFACE=lo is set here). */
#include "fabric/fabric.h"
#include "util/util.h"
#include "../unit/ut_kvs.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { NBLOCKS = 8, BLOCK = 512, NPACKETS = 300, BULK = 3 << 20 };

static const fab_ops *F;
static int self, peer, errors;
static char peer_card[1024];
static fab_conn *conn;
static void *rx;
static volatile int ready, incoming_seen;
static uint32_t tx_pos, rx_pos;

#define CHECK(cond, ...)                                                      \
    do {                                                                      \
        if (!(cond)) {                                                        \
            fprintf(stderr, "%s rank %d line %d: ", F->name, self, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                     \
            fputc('\n', stderr);                                              \
            errors++;                                                         \
        }                                                                     \
    } while (0)

static void up_ready(void *ctx, int status)
{
    CHECK(ctx == &conn && status == 0, "ready(%p, %d)", ctx, status);
    ready = 1;
}

static int up_incoming(const fab_ops *fab, int p)
{
    CHECK(fab == F && p == peer && !conn, "incoming from %d", p);
    incoming_seen = 1;
    return fab->chan->connect(p, peer_card, 1, &conn, &conn, &rx);
}

static const fab_upcalls ups = {.incoming = up_incoming, .ready = up_ready};

static void wait_until(volatile int *flag, const char *what)
{
    uint64_t until = util_now_ns() + 20000000000ull;
    while (!*flag && util_now_ns() < until)
        F->poll();
    if (!*flag) {
        CHECK(0, "timed out waiting for %s", what);
        _exit(1);
    }
}

/* ---- a little ring protocol: packet = mark, length, seq, payload ------------------- */

typedef struct pkt {
    fab_mark mark;
    uint32_t len; /* bytes of the whole packet */
    uint32_t seq;
    uint32_t kind; /* 0 data, 1 ack, 2 bulk address */
    uint64_t a, b; /* bulk: address, key */
} pkt;

static void put_packet(uint32_t kind, uint32_t len, uint64_t a, uint64_t b)
{
    pkt *p;
    uint64_t until = util_now_ns() + 20000000000ull;
    while (!(p = F->chan->tx_block(conn, tx_pos))) { /* shared send buffers all in flight */
        CHECK(F->caps()->flags & FAB_CAP_RX_QUEUE, "no tx block on a ring");
        F->poll();
        if (util_now_ns() > until) {
            CHECK(0, "no send buffer came free for packet %u", tx_pos);
            _exit(1);
        }
    }
    p->len = len;
    p->seq = tx_pos;
    p->kind = kind;
    p->a = a;
    p->b = b;
    for (uint32_t i = sizeof *p; i < len; i++)
        ((unsigned char *)p)[i] = (unsigned char)(tx_pos * 7 + i);
    F->chan->tx_post(conn, tx_pos, p, len);
    tx_pos++;
}

static unsigned ring_blocks = NBLOCKS; /* the connection's (chan->ring_blocks) */

static int arrived(pkt **p)
{
    if (F->caps()->flags & FAB_CAP_RX_QUEUE)
        return (*p = F->chan->rx_peek(conn)) != NULL;
    *p = (pkt *)((char *)rx + (size_t)(rx_pos % ring_blocks) * BLOCK);
    return atomic_load_explicit((_Atomic fab_mark *)&(*p)->mark, memory_order_acquire) == rx_pos + 1;
}

static pkt *get_packet(void)
{
    pkt *p;
    uint64_t until = util_now_ns() + 20000000000ull;
    while (!arrived(&p)) {
        F->poll();
        if (util_now_ns() > until) {
            CHECK(0, "packet %u never arrived", rx_pos);
            _exit(1);
        }
    }
    CHECK(p->seq == rx_pos && p->len >= sizeof *p && p->len <= BLOCK,
          "packet %u header (seq %u len %u)", rx_pos, p->seq, p->len);
    for (uint32_t i = sizeof *p; i < p->len; i++)
        if (((unsigned char *)p)[i] != (unsigned char)(rx_pos * 7 + i)) {
            CHECK(0, "packet %u byte %u wrong: incomplete when its mark was set?", rx_pos, i);
            break;
        }
    /* consumed: as the core does before it advertises the block (a shared queue's packet
     * is gone then: the caller gets a copy of its header) */
    static pkt last;
    last = *p;
    if (F->caps()->flags & (FAB_CAP_RX_FREE | FAB_CAP_RX_QUEUE))
        F->chan->rx_free(conn, rx_pos, p, 1);
    rx_pos++;
    return &last;
}

static void ring_traffic(void)
{
    /* windows of NBLOCKS packets from rank 0, each answered by one ack (the credit) */
    for (int sent = 0; sent < NPACKETS;) {
        if (self == 0) {
            for (int k = 0; k < NBLOCKS && sent < NPACKETS; k++, sent++)
                put_packet(
                    0, (uint32_t)(sizeof(pkt) + (size_t)(sent * 37) % (BLOCK - sizeof(pkt) + 1)), 0,
                    0);
            CHECK(get_packet()->kind == 1, "ack expected");
        } else {
            for (int k = 0; k < NBLOCKS && sent < NPACKETS; k++, sent++)
                CHECK(get_packet()->kind == 0, "data expected");
            put_packet(1, sizeof(pkt), 0, 0);
        }
    }
}

/* ---- bulk ------------------------------------------------------------------------ */

static volatile int op_finished;
static int op_status;

static void op_done(fab_op *op, int status)
{
    op_status = status;
    op_finished = 1;
}

/* run one bulk op to its end; its status */
static int bulk(int write, unsigned char *local, size_t len, uint64_t raddr, uint64_t key)
{
    struct iovec iov[3] = {
        {local, len / 3}, {local + len / 3, len / 3}, {local + 2 * (len / 3), len - 2 * (len / 3)}};
    static fab_op op;
    op.done = op_done;
    op_finished = 0;
    int rc = write ? F->rma->write(conn, iov, 3, raddr, key, len, &op)
                   : F->rma->read(conn, iov, 3, raddr, key, len, &op);
    if (rc != FAB_PENDING)
        return rc;
    wait_until(&op_finished, "a bulk completion");
    return op_status;
}

static void fill(unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(seed * 131u + i * 7u + (i >> 11));
}

static size_t mismatch(const unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != (unsigned char)(seed * 131u + i * 7u + (i >> 11)))
            return i;
    return n;
}

/* after a read with a bad key or address the connection still carries packets */
static int survives_bad_read(void) { return !strcmp(F->name, "shm") || !strcmp(F->name, "sock"); }

static void bulk_traffic(void)
{
    unsigned char *buf = malloc(BULK);
    if (self == 1) {
        fill(buf, BULK, 1);
        fab_mem m;
        CHECK(F->mr->reg(buf, BULK, &m) == 0, "mem_reg");
        put_packet(2, sizeof(pkt), m.addr, m.key);
        CHECK(get_packet()->kind == 1, "read done");
        CHECK(get_packet()->kind == 1, "write done");
        size_t at = mismatch(buf, BULK, 2);
        CHECK(at == BULK, "written data wrong at byte %zu", at);
        put_packet(1, sizeof(pkt), 0, 0);
        if (survives_bad_read())
            CHECK(get_packet()->kind == 1, "the connection works after a failed read");
        F->mr->dereg(&m);
    } else {
        pkt *p = get_packet();
        CHECK(p->kind == 2, "bulk address expected");
        uint64_t addr = p->a, key = p->b;
        memset(buf, 0, BULK);
        int rc = bulk(0, buf, BULK, addr, key);
        size_t at = mismatch(buf, BULK, 1);
        CHECK(rc == 0 && at == BULK, "read: status %d, data wrong at byte %zu", rc, at);
        put_packet(1, sizeof(pkt), 0, 0);
        fill(buf, BULK, 2);
        rc = bulk(1, buf, BULK, addr, key);
        CHECK(rc == 0, "write: status %d", rc);
        put_packet(1, sizeof(pkt), 0, 0);
        CHECK(get_packet()->kind == 1, "final ack");
        /* a read that cannot succeed: an error, not a hang (shm has no keys: an address
         * below mmap_min_addr, never mapped). On shm and sock the connection works on (sock's
         * peer answers the READQ with an error, from its progress: it waits for a packet);
         * libfabric's tcp provider closes the connection on a bad key, so nothing follows it
         * there */
        if (!strcmp(F->name, "shm"))
            rc = bulk(0, buf, 4096, 4096, key);
        else
            rc = bulk(0, buf, 4096, addr, key ^ 0x5a5a5a5a5a5aull);
        CHECK(rc < 0, "a read with a bad %s completed with status %d",
              strcmp(F->name, "shm") ? "key" : "address", rc);
        if (survives_bad_read())
            put_packet(1, sizeof(pkt), 0, 0);
    }
    free(buf);
}

/* every function a capability names is in the fabric's tables, and the modes exclude each other */
static void check_tables(unsigned f)
{
    const fab_chan_ops *ch = F->chan;
    CHECK(F->open && F->close && F->caps && F->reachable && F->poll && F->footprint, "endpoint");
    CHECK(ch && ch->ring_blocks && ch->connect && ch->disconnect && ch->tx_block && ch->tx_post,
          "packet channel");
    CHECK(!(f & FAB_CAP_RX_QUEUE) || (ch->rx_peek && ch->rx_free),
          "FAB_CAP_RX_QUEUE without rx_peek, rx_free");
    CHECK(!(f & FAB_CAP_RX_FREE) || ch->rx_free, "FAB_CAP_RX_FREE without rx_free");
    CHECK(!(f & FAB_CAP_TX_CREDIT) || ch->tx_credit, "FAB_CAP_TX_CREDIT without tx_credit");
    CHECK(!(f & FAB_CAP_RING_MAPPED) || !(f & (FAB_CAP_RX_QUEUE | FAB_CAP_RX_FREE)),
          "a mapped ring with a queue or a ring the fabric keeps state in (%#x)", f);
    CHECK(!(f & FAB_CAP_RX_QUEUE) || !(f & FAB_CAP_RX_FREE), "a queue and a ring (%#x)", f);
    CHECK(!(f & FAB_CAP_RMA) || (F->mr && F->mr->reg && F->mr->dereg && F->mr->release && F->rma &&
                                 F->rma->read && F->rma->write),
          "FAB_CAP_RMA without the mr and rma tables");
    CHECK(!(f & (FAB_CAP_RMA_PASSIVE | FAB_CAP_RMA_ANY_ADDR | FAB_CAP_RMA_IOV)) ||
              (f & FAB_CAP_RMA),
          "a property of one-sided access without FAB_CAP_RMA (%#x)", f);
    CHECK(!(f & FAB_CAP_RMA_IOV) || (F->rma->readv && F->rma->writev),
          "FAB_CAP_RMA_IOV without readv, writev");
    CHECK(!(f & FAB_CAP_STAGE) || (F->stage && F->stage->pool_create && F->stage->pool_map),
          "FAB_CAP_STAGE without pool_create, pool_map");
    CHECK(!(f & FAB_CAP_MEM_ALLOC) || (F->stage && F->stage->mem_alloc && F->stage->mem_free),
          "FAB_CAP_MEM_ALLOC without mem_alloc, mem_free");
    CHECK(!(f & FAB_CAP_ROUTE) || ch->route, "FAB_CAP_ROUTE without route");
}

static int rank_main(int rank, int both_start)
{
    self = rank;
    peer = 1 - rank;
    util_log_rank = rank;
    util_tunables_load();
    fab_params p = {.job_id = getenv("UT_JOB"),
                    .self = rank,
                    .nprocs = 2,
                    .local_nprocs = 2,
                    .nblocks = NBLOCKS,
                    /* offers that differ: a fabric that sizes rings per connection gives
                     * both ends the smaller */
                    .local_nblocks = rank == 0 ? 4 * NBLOCKS : 2 * NBLOCKS,
                    .block_size = BLOCK,
                    .packet_max = BLOCK,
                    .use_cma = 1,
                    .inline_limit = 16,
                    .up = &ups,
                    .fence = ut_kvs_fence};
    char card[1024], key[32];
    if (F->open(&p, card, sizeof card) != 0)
        return 3;
    CHECK(!strncmp(card, F->name, strlen(F->name)) && card[strlen(F->name)] == ':' &&
              !strchr(card, ';') && !strchr(card, ' '),
          "card '%s'", card);
    snprintf(key, sizeof key, "card-%d", rank);
    ut_kvs_put(key, card);
    ut_kvs_fence();
    snprintf(key, sizeof key, "card-%d", peer);
    CHECK(ut_kvs_get(key, peer_card, sizeof peer_card) == 0, "no peer card");
    CHECK(F->reachable(peer_card), "peer card '%s' not reachable", peer_card);
    CHECK(!F->reachable("shm:another-node:1") && !F->reachable("ofi:nosuchprovider:00") &&
              !F->reachable("bogus"),
          "a foreign card is reachable");
    const fab_caps *caps = F->caps();
    CHECK(caps && caps->provider && caps->poll_interval > 0 &&
              (caps->poll_interval & (caps->poll_interval - 1)) == 0 &&
              (!(caps->flags & FAB_CAP_RMA) || caps->max_bulk > 0),
          "caps");
    check_tables(caps->flags);
    unsigned nb = F->chan->ring_blocks(peer_card);
    if (!strcmp(F->name, "shm")) {
        /* shm sizes its rings per connection: both ends take the smaller offer */
        CHECK(nb == 2 * NBLOCKS, "ring_blocks gives %u for offers of %u and %u", nb, 4 * NBLOCKS,
              2 * NBLOCKS);
        CHECK(F->chan->ring_blocks("shm:x:1/j/2/3") == 0 &&
                  F->chan->ring_blocks("shm:x:1/j/2") == 0,
              "ring_blocks accepts a card with a bad or no ring offer");
    }
    CHECK(nb == 0 || (nb >= NBLOCKS && (nb & (nb - 1)) == 0), "ring_blocks gives %u", nb);
    if (nb)
        ring_blocks = nb;
    if (rank == 0 || both_start)
        CHECK(F->chan->connect(peer, peer_card, 0, &conn, &conn, &rx) == 0, "connect");
    wait_until(&ready, "the connection");
    CHECK(both_start || rank == 0 || incoming_seen, "the passive side was not handed the request");
    CHECK((rx != NULL) == !(caps->flags & FAB_CAP_RX_QUEUE), "receive ring %p with flags %#x", rx,
          caps->flags);
    if (caps->flags & FAB_CAP_RING_MAPPED)
        CHECK((char *)F->chan->tx_block(conn, 3) ==
                      (char *)F->chan->tx_block(conn, 0) + 3 * BLOCK &&
                  F->chan->tx_block(conn, ring_blocks) == F->chan->tx_block(conn, 0) &&
                  F->chan->tx_block(conn, ring_blocks - 1) != F->chan->tx_block(conn, 0),
              "mapped ring layout");
    ring_traffic();
    if (caps->flags & FAB_CAP_RMA)
        bulk_traffic();
    fab_usage u = {0};
    F->footprint(conn, &u);
    /* a shared queue: a connection costs its state, plus a lane for a busy peer (rank 1
     * receives 300 packets: over tcp it offered rank 0 one after DCFA_OFI_LANE_AFTER) */
    int lane_expected = self == 1 && !strncmp(caps->provider, "tcp", 3) && util_cfg.ofi_lanes > 0 &&
                        util_cfg.ofi_lane_after <= NPACKETS;
    /* sock: its send and receive buffers hold the credit window each */
    if (!strcmp(F->name, "sock"))
        lane_expected = 1;
    CHECK(caps->flags & FAB_CAP_RX_QUEUE
              ? u.endpoint > 0 && u.endpoint < 4096 &&
                    (lane_expected ? u.rings >= (size_t)NBLOCKS * BLOCK : u.rings == 0)
              : u.rings >= (size_t)NBLOCKS * BLOCK,
          "footprint: rings %zu endpoint %zu", u.rings, u.endpoint);
    F->chan->disconnect(conn);
    F->close();
    return errors ? 1 : 0;
}

static int run(const fab_ops *f, int both_start)
{
    char job[64];
    snprintf(job, sizeof job, "tf%d", (int)getpid());
    setenv("UT_JOB", job, 1);
    F = f;
    ut_kvs_make(2);
    fflush(stdout);
    pid_t pids[2];
    for (int r = 0; r < 2; r++) {
        pids[r] = fork();
        if (pids[r] == 0) {
            alarm(60);
            _exit(rank_main(r, both_start));
        }
    }
    int fails = 0;
    for (int r = 0; r < 2; r++) {
        int st;
        waitpid(pids[r], &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "FAIL %s (%s): rank %d status 0x%x\n", f->name,
                    both_start ? "both start" : "one starts", r, st);
            fails++;
            kill(pids[1 - r], SIGKILL);
        }
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "ls /dev/shm 2>/dev/null | grep -q '^dcfa-%s-'", job);
    if (system(cmd) == 0) {
        fprintf(stderr, "FAIL %s: segments of %s left in /dev/shm\n", f->name, job);
        snprintf(cmd, sizeof cmd, "rm -f /dev/shm/dcfa-%s-*", job);
        if (system(cmd) != 0)
            fails++;
        fails++;
    }
    printf("%s%s %s: %s\n", f->name, getenv("TF_VARIANT") ? getenv("TF_VARIANT") : "",
           both_start ? "both start" : "one starts", fails ? "FAIL" : "ok");
    return fails ? 1 : 0;
}

int main(int argc, char **argv)
{
    const fab_ops *all[] = {
        &fab_shm_ops,
        &fab_sock_ops, /* its own connections (DCFA_SOCK_CONNECT=self): no daemon here */
#ifdef DCFA_HAVE_OFI
        &fab_ofi_ops,
#endif
    };
    setenv("DCFA_OFI_IFACE", "lo", 0); /* never leave this host */
    setenv("FI_TCP_IFACE", "lo", 0);
    setenv("FI_SOCKETS_IFACE", "lo", 0);
    int runs = 0, failed = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (argc > 1 && strcmp(argv[1], all[i]->name))
            continue;
        /* ofi: with its shared receive queue (the default) and with rings per peer */
        int variants = strcmp(all[i]->name, "ofi") ? 1 : 2;
        for (int v = 0; v < variants; v++) {
            if (variants > 1) {
                setenv("DCFA_OFI_SRQ", v ? "0" : "1", 1);
                setenv("TF_VARIANT", v ? " (rings)" : " (shared receive queue)", 1);
            }
            for (int both = 0; both < 2; both++) {
                failed += run(all[i], both);
                runs++;
            }
        }
        unsetenv("TF_VARIANT");
    }
    if (runs == 0) {
        fprintf(stderr, "no fabric named %s in this build\n", argc > 1 ? argv[1] : "");
        return 2;
    }
    printf("%d passed, %d failed\n", runs - failed, failed);
    return failed ? 1 : 0;
}
