/* The fabric interface: what a transport offers the protocol engine
 * (docs/fabric.md). A fabric is one const struct fab_ops: an endpoint (open,
 * close, caps, reachable, poll, footprint) and one small table per concern,
 * as libfabric's fi_ops_* tables:
 *
 *   - chan:  connections and the packet channel. Connections are made lazily
 *            and asynchronously (connect returns at once, the ready() upcall
 *            says when packets may flow; a peer's request is found by poll()
 *            and handed to the core, incoming()). Packets go one of two ways,
 *            which the capabilities name: into a receive ring per connection
 *            in the receiver's memory, each completed by its tail marker
 *            (fab_mark), mapped into the sender (FAB_CAP_RING_MAPPED) or
 *            written by the fabric (tx_post); or through a queue
 *            (FAB_CAP_RX_QUEUE): the fabric delivers each connection's packets
 *            in order from buffers of its own (rx_peek, rx_free), as a stream
 *            socket or a gateway would;
 *   - mr:    memory registration (with a cache where the fabric needs one),
 *            giving a key and an address a peer uses for one-sided access;
 *   - rma:   one-sided read/write with completion through a context the
 *            caller embeds (fab_op), reported from poll();
 *   - stage: memory both ends map: a staging pool per process, and blocks
 *            for MPI_Alloc_mem that peers map themselves.
 *
 * The core uses a table only as the capabilities (fab_caps.flags, FAB_CAP_*)
 * say; a fabric without one-sided memory leaves mr, rma and stage NULL and the
 * core carries every message in packets (the copy path of docs/protocol.md:
 * read and write emulated over messages; RMA windows by messages, docs/rma.md).
 * A fabric never sees an MPI object or a request; the core never sees a
 * fabric's private state. All functions are called by one thread at a time
 * (the core's entry lock serialises threads); ofi's open() may run in a thread
 * of its own while the other fabrics are used (the core's late open,
 * docs/fabric.md), and ofi is used only after that thread has ended. */
#ifndef DCFA_FABRIC_H
#define DCFA_FABRIC_H

#include <stddef.h>
#include <poll.h>
#include <stdint.h>
#include <sys/uio.h>

typedef struct fab_conn fab_conn;   /* fabric-private per-connection state */
struct fab_ops;

/* A ring block begins with this 32-bit tail marker, owned by the fabric: the
 * packet written at ring position `pos` is complete once the marker of its
 * first block reads pos + 1 (loaded with acquire order). The rest is the
 * packet, which may cover further consecutive blocks (packet_blocks()); the
 * receiver clears their first words after consuming it (with FAB_CAP_RING_MAPPED only
 * those that would read as the next lap's mark: core_conn_free_blocks). */
typedef uint32_t fab_mark;

/* rma read()/write() result: the operation completes later, through op->done() */
#define FAB_PENDING 1
/* rma read()/write() result: done now, by plain copies from or into memory of the peer that
 * this process has mapped (a key with FAB_KEY_DIRECT), no system call */
#define FAB_DIRECT 2
/* in a fab_mem key: the memory is a block the peers map themselves (stage mem_alloc), so that
 * read()/write() with it are plain copies (FAB_DIRECT) where the mapping works */
#define FAB_KEY_DIRECT (UINT64_C(1) << 63)

/* A process's name across jobs (dynamic processes: a spawned job, or one that
 * connected through a port): a 40-bit hash of its job id and its rank in that
 * job. A fabric names peers on the wire (and in shared resources) by it; the
 * core's process id (lpid) is only an index into this process's table. */
typedef uint64_t fab_gid;
#define FAB_GID(job, rank) (((uint64_t)(job) << 24) | ((uint64_t)(uint32_t)(rank) & 0xffffffu))
#define FAB_GID_JOB(g)     ((uint64_t)(g) >> 24)
#define FAB_GID_RANK(g)    ((int)((g) & 0xffffffu))
#define FAB_RANK_MAX       0xffffff
/* the 40-bit hash of a job id: FNV-1a, then a full avalanche (the finaliser of
 * MurmurHash3) before the top 40 bits are taken. FNV-1a alone, folded, maps job ids
 * that differ in their last character ("j1f_2a_44" and "j1f_2a_46", the spawned jobs
 * of one mpirun) to values that differ in a few low bits, and some pairs collide: two
 * processes then share one name. */
static inline uint64_t fab_job_hash(const char *job_id)
{
    uint64_t h = 1469598103934665603ull;
    for (const unsigned char *s = (const unsigned char *)job_id; s && *s; s++)
        h = (h ^ *s) * 1099511628211ull;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h >> 24;
}

/* What a fabric tells the core (the upcalls). Called from inside poll() or connect(). */
typedef struct fab_upcalls {
    /* A peer opened a connection to me and I have none to it. The core makes
     * its side now, by calling connect(peer, card, passive = 1, ...) of the
     * same fabric from inside this call; 0 or a negative status. */
    int (*incoming)(const struct fab_ops *fab, int peer);
    /* The connection whose connect() got `ctx` carries packets from now on
     * (status 0), or could not be made (negative status, logged). */
    void (*ready)(void *ctx, int status);
    /* Optional (NULL: only the processes of my own job, lpid == rank): the
     * lpid of the process named gid, or -1 when the core does not know it;
     * and the name of process lpid. */
    int (*lpid_of)(fab_gid gid);
    fab_gid (*gid_of)(int lpid);
    /* The ring blocks covered by the packet that begins in this block of a receive ring
     * (its bytes have landed; at least 1). A fabric that sets tail markers itself needs it
     * to know which blocks a packet used (a packet covers consecutive blocks, never past
     * the ring's end: a larger answer is a malformed packet). NULL: one block each. */
    uint32_t (*packet_blocks)(const void *block);
    /* Optional: the bytes of the packet that begins here (its header says), so that a
     * fabric with a queue (FAB_CAP_RX_QUEUE) can check a packet arrived whole. NULL:
     * whatever arrived is the packet. */
    size_t (*packet_bytes)(const void *block);
    /* Optional (FAB_CAP_RX_WAKE): the connection whose connect() got `ctx` may have a packet
     * for rx_peek now; called from inside poll() (or any call of the fabric that reads its
     * completions) for every packet that arrives on a connection, whatever the core did
     * with earlier wakes. */
    void (*wake)(void *ctx);
    /* The connection whose connect() got `ctx` is lost: what either end had in flight on it
     * is gone (a gateway that died with the packets it held). The core fails every request
     * that depends on it with `why` as the error's text (naming what was lost and the
     * peer), drops the connection (calling disconnect() from inside this call) and makes a
     * new one at the pair's next message. Called only from inside poll(), by a fabric
     * without one-sided transfers or staging pools (gw). */
    void (*lost)(void *ctx, const char *why);
} fab_upcalls;

#define FAB_IOV_MAX 1024                /* iovec entries per side of readv/writev */

typedef struct fab_params {
    const char *job_id;     /* names this job's resources */
    int self;               /* my process id (lpid), which is my rank in my job */
    int nprocs;             /* processes known at open (the job's world); lpids of
                               processes met later (other jobs) are >= nprocs */
    int local_nprocs;       /* of them on my node, -1 if unknown */
    unsigned nblocks;       /* ring blocks per connection (MaxCredit) */
    unsigned local_nblocks; /* a fabric within the node may offer rings of this many blocks
                               (a power of two >= nblocks; a connection takes the smaller
                               of its two ends' offers: ring_blocks) */
    size_t block_size;      /* bytes per block, a multiple of 64 */
    size_t packet_max;      /* bytes of the largest packet (header + payload), at most
                               nblocks x block_size */
    int use_cma;            /* shm: single-copy bulk transfers allowed */
    size_t inline_limit;    /* DCFA_INLINE_LIMIT: payload bytes sent inline (inject) */
    uint32_t ring_start;    /* 0, or (a test, DCFA_RING_START) this many blocks before the
                               32-bit positions wrap: see fab_ring_base */
    const fab_upcalls *up;
    /* a job-wide barrier (the key/value exchange's) a fabric may use in close(); every
     * process that opened the fabric calls close() */
    int (*fence)(void);
} fab_params;

/* What a fabric can do, named (fab_caps.flags). Each says which functions the core calls. */
enum fab_cap {
    /* -- the packet channel (chan) */
    /* The rings of a connection are memory both ends map: the tx block is the peer's ring itself,
     * tx_block(c, pos) == tx_block(c, 0) + (pos % ring blocks) * block_size, and posting is a
     * release store of pos + 1 into its mark, which the core makes inline (tx_post is not
     * called). So a packet may take half a block (wire.h, half packets), a word of a packet may
     * be claimed with a compare-and-swap by either end (split reads), and a SYNC is a store. */
    FAB_CAP_RING_MAPPED = 1u << 0,
    /* No receive ring: each connection's packets come, in the order the peer posted them, from
     * buffers the fabric fills (rx_peek, then rx_free); the core's ring blocks are credits only,
     * a packet needs no PAD and may cross the end of a lap; tx_block may give NULL (no send
     * buffer free now: the packet waits in the backlog until after poll()). connect() gives no
     * ring. */
    FAB_CAP_RX_QUEUE = 1u << 1,
    /* A ring the fabric keeps state in (a marker its writes set): rx_free as the core frees
     * blocks, in ring order, before it tells the peer they are free */
    FAB_CAP_RX_FREE = 1u << 2,
    /* tx_credit whenever the core's credit limit for a connection grows */
    FAB_CAP_TX_CREDIT = 1u << 3,
    /* -- one-sided (mr, rma) */
    /* read/write of registered memory work (mr and rma tables); without it the core copies
     * every rendezvous through packets and windows go by messages */
    FAB_CAP_RMA = 1u << 4,
    FAB_CAP_RMA_PASSIVE = 1u << 5,  /* ... and need no CPU (progress) on the peer's side */
    FAB_CAP_RMA_ANY_ADDR = 1u << 6, /* ... and reach any address of the peer, unregistered */
    FAB_CAP_RMA_IOV = 1u << 7,      /* readv/writev: many remote ranges in one call */
    /* read/write are copies by a CPU of this node (the kernel's cross-memory attach, or plain
     * copies of memory mapped here), not a network's: what the core's probe of
     * process_vm_readv against memcpy measures (core_copy_below) is their cost */
    FAB_CAP_RMA_CPU = 1u << 8,
    /* -- memory both ends map (stage) */
    FAB_CAP_STAGE = 1u << 9,      /* pool_create / pool_map: a staging pool per process */
    FAB_CAP_MEM_ALLOC = 1u << 10, /* mem_alloc: MPI_Alloc_mem memory peers map (FAB_KEY_DIRECT) */
    /* -- connections through a third host */
    FAB_CAP_ROUTE = 1u << 11, /* route: a connection may go through another host (gateway) */
    /* -- progress */
    /* With FAB_CAP_RX_QUEUE: the fabric names each connection that received a packet (the wake
     * upcall), so the core calls rx_peek only on connections woken since their queue was last
     * found empty, not on every connection each pass (docs/fabric.md, "Waking connections") */
    FAB_CAP_RX_WAKE = 1u << 12,
    /* -- credit */
    /* The receiver gives credit back (SYNC) once the sender's view of its ring is half used,
     * not only when it is nearly out: for a path whose round trip is long against the ring
     * (several hops, a gateway), so that the sender never stops while the SYNC travels */
    FAB_CAP_CREDIT_EARLY = 1u << 13,
    /* -- waiting */
    /* wait_fds: an idle wait may sleep in poll(2) on descriptors the fabric names; without
     * it a fabric with connections keeps the waits polling (docs/architecture.md) */
    FAB_CAP_WAIT_FD = 1u << 14,
};

/* What a fabric can do; valid from open() to close(). */
typedef struct fab_caps {
    const char *provider;   /* what carries the data ("cma", or the libfabric provider) */
    unsigned flags;         /* FAB_CAP_* */
    int priority;           /* higher wins when several fabrics reach a peer */
    size_t inline_limit;    /* packets up to header + this many payload bytes go inline */
    size_t eager_limit;     /* the largest eager packet (header included) on this fabric's
                               connections, at most its packet_max; 0: the core's
                               (DCFA_EAGER_LIMIT) */
    size_t max_bulk;        /* largest single read()/write() (FAB_CAP_RMA) */
    unsigned poll_interval; /* call poll() every this many progress passes (a power of two) */
} fab_caps;

/* The ring position of a connection's first packet, for rings of nblocks blocks: 0, or
 * `start` blocks (whole rings, at least two) before the 32-bit positions wrap, so that a
 * test crosses the wrap after a few laps (a first lap ending at the wrap would expect the
 * mark 0 where a new ring has zeros). Both ends of a connection compute the same. */
static inline uint32_t fab_ring_base(uint32_t start, uint32_t nblocks)
{
    if (start == 0)
        return 0;
    uint64_t n = ((uint64_t)start + nblocks - 1) / nblocks * nblocks;
    if (n < 2 * (uint64_t)nblocks)
        n = 2 * (uint64_t)nblocks;
    if (n > (UINT64_C(1) << 31))
        n = UINT64_C(1) << 31;
    return (uint32_t)((UINT64_C(1) << 32) - n);
}

/* A registration: what a peer needs to reach [buf, buf+len) one-sidedly.
 * addr is the address a peer passes for `buf` (the virtual address, or an
 * offset for providers that want offsets); addresses inside the buffer are
 * addr + offset. Fabrics without keys give key 0 and addr == buf. */
typedef struct fab_mem {
    uint64_t addr;
    uint64_t key;
    void *handle; /* the fabric's, for mr->dereg() */
} fab_mem;

/* The context of one bulk operation. The caller embeds it in its own state,
 * sets done, and gets it back (container_of) when the operation ends. */
typedef struct fab_op {
    void (*done)(struct fab_op *op, int status);    /* 0, or a negative status */
    int nt;                 /* the caller's hint: the destination is not read again soon (a
                               window of receives larger than a cache); a fabric that copies
                               may write it with non-temporal stores */
    uintptr_t priv[6];      /* the fabric's while the operation runs */
} fab_op;

/* Memory a fabric uses, for DCFA_STATS (per connection, or the fabric's own) */
typedef struct fab_usage {
    size_t rings;           /* receive / staging rings this process allocated (whole pages) */
    size_t regs;            /* registered memory */
    size_t endpoint;        /* endpoints, queues, receive buffers */
    size_t mapped;          /* the peer's memory mapped here (its ring, on shm): counted by
                               the peer as its own, listed apart */
} fab_usage;

/* ---- the tables ---------------------------------------------------------------------- */

/* Connections and the packet channel. Every fabric has it. */
typedef struct fab_chan_ops {
    /* The ring blocks, each way, of a connection to the peer with this card (the same at both
     * ends, computed from the two cards); 0: the core's default (params.nblocks), or a card
     * connect() will refuse. Asked before connect(). */
    unsigned (*ring_blocks)(const char *peer_card);
    /* Start a connection; *rx_ring is my receive ring for it (ring blocks x block_size, marks
     * zero; NULL with FAB_CAP_RX_QUEUE). Asynchronous: ready(ctx, ...) says when it carries
     * packets (possibly before connect returns; *conn is set first). `passive`: the peer's
     * request was handed over by incoming(). */
    int (*connect)(int peer, const char *peer_card, int passive, void *ctx, fab_conn **conn,
                   void **rx_ring);
    /* at the end (MPI_Finalize); the fabric may keep the connection's memory until close() */
    void (*disconnect)(fab_conn *c);
    /* Where to build the packet for ring position pos (once ready); NULL only with
     * FAB_CAP_RX_QUEUE. With FAB_CAP_RING_MAPPED the peer's ring block itself. */
    void *(*tx_block)(fab_conn *c, uint32_t pos);
    /* publish the packet of `bytes` (from the block's start) built at pos; the fabric makes its
     * tail marker visible in the receiver's ring once the whole packet is there, or delivers
     * it to the peer's queue (not called with FAB_CAP_RING_MAPPED) */
    void (*tx_post)(fab_conn *c, uint32_t pos, void *block, size_t bytes);
    /* FAB_CAP_TX_CREDIT: the peer has consumed the packets before ring position limit - ring
     * blocks, as it last told the core (the core's tx_limit, called whenever it grows). A
     * fabric that writes into a receive area smaller than the credit window (an ofi lane)
     * needs it to know which part of that area the peer is done with. */
    void (*tx_credit)(fab_conn *c, uint32_t limit);
    /* FAB_CAP_RX_QUEUE: connection c's next packet, in the order the peer posted them, or NULL
     * when none has arrived; the same until rx_free() */
    void *(*rx_peek)(fab_conn *c);
    /* FAB_CAP_RX_QUEUE: the packet rx_peek() gave is consumed, its buffer space free.
     * FAB_CAP_RX_FREE: the core consumed the packet at ring position pos, which covers
     * `blocks` blocks from `block` in my receive ring, and is about to tell the peer they are
     * free: the fabric resets the state it keeps there (called in ring order). */
    void (*rx_free)(fab_conn *c, uint32_t pos, void *block, uint32_t blocks);
    /* FAB_CAP_ROUTE: what connection c goes through on its way to the peer ("gateway
     * dcfa-g1"), for DCFA_STATS and the hang report; NULL: straight to the peer */
    const char *(*route)(fab_conn *c);
} fab_chan_ops;

/* Memory registration (FAB_CAP_RMA). */
typedef struct fab_mr_ops {
    int (*reg)(const void *buf, size_t len, fab_mem *mem);
    void (*dereg)(fab_mem *mem);
    /* [buf, buf+len) is being freed: drop cached registrations of it */
    void (*release)(const void *buf, size_t len);
} fab_mr_ops;

/* One-sided access (FAB_CAP_RMA). Move len bytes between the local iovecs and the peer's
 * [raddr, raddr+len) (registered with key rkey). 0: done now; FAB_DIRECT: done now by plain
 * copies; FAB_PENDING: op->done() will be called from poll(); negative: failed now
 * (UTIL_EPERM: this fabric cannot reach that peer's memory at all). */
typedef struct fab_rma_ops {
    int (*read)(fab_conn *c, const struct iovec *local, int nlocal, uint64_t raddr, uint64_t rkey,
                size_t len, fab_op *op);
    int (*write)(fab_conn *c, const struct iovec *local, int nlocal, uint64_t raddr, uint64_t rkey,
                 size_t len, fab_op *op);
    /* FAB_CAP_RMA_IOV: many remote ranges in one go, at most FAB_IOV_MAX entries on each side,
     * as many bytes on both; results as read() */
    int (*readv)(fab_conn *c, const struct iovec *local, int nlocal, const struct iovec *remote,
                 int nremote, uint64_t rkey, fab_op *op);
    int (*writev)(fab_conn *c, const struct iovec *local, int nlocal, const struct iovec *remote,
                  int nremote, uint64_t rkey, fab_op *op);
} fab_rma_ops;

/* Memory both ends map (FAB_CAP_STAGE, FAB_CAP_MEM_ALLOC). */
typedef struct fab_stage_ops {
    /* FAB_CAP_STAGE: a staging pool, memory of len bytes of this process that every peer on
     * this fabric can map, for copies through memory both sides reach (the core lays it out).
     * pool_create: mine, made on the first call, the same on later calls; NULL on failure
     * (logged). pool_map: the pool of connection c's peer, mapped on the first call; NULL when
     * it has none of that size. Both are unmapped at close(). */
    void *(*pool_create)(size_t len);
    void *(*pool_map)(fab_conn *c, size_t len);
    /* FAB_CAP_MEM_ALLOC: memory for MPI_Alloc_mem that peers on this fabric map themselves
     * once they meet it (its registrations carry FAB_KEY_DIRECT); NULL declines (too small,
     * too large, too strictly aligned, too many). mem_free takes only what mem_alloc gave, and
     * works whether the fabric is open or not (a table with mem_alloc has mem_free). */
    void *(*mem_alloc)(size_t len, size_t align);
    void (*mem_free)(void *base, size_t len);
} fab_stage_ops;

/* A fabric: its endpoint and its tables (NULL where no capability asks for one). */
typedef struct fab_ops {
    const char *name;
    /* open the endpoint; the card (a printable address blob without ' ' or ';', starting
     * with "<name>:") goes into card[cardlen] */
    int (*open)(const fab_params *p, char *card, size_t cardlen);
    void (*close)(void);
    const fab_caps *(*caps)(void);
    /* 1 if this fabric can connect to the peer whose card this is */
    int (*reachable)(const char *peer_card);
    /* progress: new connections, completions, arrived packets; returns events */
    int (*poll)(void);
    /* memory used for connection c, or with c == NULL by the fabric itself */
    void (*footprint)(fab_conn *c, fab_usage *u);
    /* FAB_CAP_WAIT_FD: the descriptors an idle wait may sleep on in poll(2) until this fabric has
     * something for poll() (a packet, a connection, room to send what waits): up to cap
     * into fds, returns how many (0: nothing can come from it now), or -1 when it cannot
     * be woken by descriptors now (work in hand, or something that arrives without one,
     * as a ring in shared memory). Asked only after a progress pass found nothing to do
     * (core_block, docs/architecture.md). */
    int (*wait_fds)(struct pollfd *fds, int cap);
    const fab_chan_ops *chan;
    const fab_mr_ops *mr;
    const fab_rma_ops *rma;
    const fab_stage_ops *stage;
} fab_ops;

/* ---- the fabrics built in, and the choice per peer (select.c) --------------------- */

extern const fab_ops fab_shm_ops;
/* bytes a shm connection allocates for its receive ring of nblocks x block_size (mpiinfo) */
size_t fab_shm_ring_bytes(unsigned nblocks, size_t block_size);
/* The names of the shm segments of process `rank` of job `job`, whose card carries the
 * name key `key`: kind 'd' its door, 's' its staging pool, 'r' its ring for peer `peer`
 * (a fab_gid; of another job when `foreign`). Each ends in a token derived from the key,
 * which a process gives only to its peers (its card), so no other user can make one of
 * them before its owner does (tests plant and remove them with it). */
void fab_shm_name(char *buf, size_t len, const char *job, int rank, const uint64_t key[2], int kind,
                  fab_gid peer, int foreign);
/* the name key in a process's shm card (its last field, 32 hex digits; `cards` may be
 * several joined by ';'): UTIL_OK or UTIL_EPROTO */
int fab_shm_card_key(const char *cards, uint64_t key[2]);
/* gw: pairs that share no network, through the job's gateway daemons (docs/gateway.md);
 * opened in auto mode when DCFA_GATEWAYS names them (mpirun --gateways) */
extern const fab_ops fab_gw_ops;
/* sock: packets over connected stream sockets, made by the assist daemon (or by the process
 * itself, DCFA_SOCK_CONNECT=self); docs/fabric.md */
extern const fab_ops fab_sock_ops;
#ifdef DCFA_HAVE_OFI
extern const fab_ops fab_ofi_ops;
/* the provider fi_getinfo would give (for mpiinfo), or why there is none */
void fab_ofi_probe(char *buf, size_t len);
/* what a connected peer costs on ofi with the current tunables (mpiinfo) */
void fab_ofi_peer_cost(char *buf, size_t len);
/* what open() sets in the environment for libfabric, set now by the calling thread: before
 * open() runs in another thread (setenv is not safe while other threads read it) */
void fab_ofi_prepare(const fab_params *p);
/* auto mode opens ofi for processes on other hosts when sock could carry them too
 * (DCFA_OFI_AUTO: where the node has hardware a provider drives, or a provider is named);
 * why in why[whylen] */
int fab_ofi_wanted(char *why, size_t whylen);
#endif

/* Open the fabrics DCFA_FABRICS (spec) names, "auto" by default: shm, plus
 * ofi when the job may span nodes. opened[] gets them highest priority
 * first, cards their cards joined by ';'. A fabric named explicitly must
 * open; so must one auto mode wants. With late != NULL, auto mode leaves ofi
 * unopened and gives it in *late (its environment prepared, fab_ofi_prepare):
 * the caller opens it itself, from another thread (else *late = NULL). */
int fab_select_open(const fab_params *p, const char *spec, const fab_ops **opened, int max,
                    int *nopened, char *cards, size_t cardslen, const fab_ops **late);
/* the card of fabric `name` in a process's cards; UTIL_ENOENT if it has none */
int fab_select_card(const char *cards, const char *name, char *out, size_t len);
/* the fabric for a connection to the peer with these cards: the first of
 * opened[] whose reachable() accepts the peer's card for it, its card in
 * card[], and why in why[]; NULL if none (why says why) */
const fab_ops *fab_select_choose(const fab_ops *const *opened, int n, const char *peer_cards,
                                 char *card, size_t cardlen, char *why, size_t whylen);
/* give back a block some built-in fabric's mem_alloc made (each looks for it in its own
 * table), whether that fabric is open or not */
void fab_select_mem_free(void *base, size_t len);
/* the fabrics built in, and the ofi provider found (mpiinfo) */
void fab_select_report(char *buf, size_t len);
/* what a connected peer costs on each fabric built, with rings of nblocks x block_size (the
 * smallest a node gives) and `state` bytes of the core's per connection (mpiinfo) */
void fab_select_peer_cost(unsigned nblocks, size_t block_size, size_t state, char *buf, size_t len);

#endif
