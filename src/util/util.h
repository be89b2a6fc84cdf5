/* util: status codes, logging, handle tables, lists, tunables, timers.
 * The bottom layer: depends on nothing else in the library. */
#ifndef DCFA_UTIL_H
#define DCFA_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <errno.h>
#include <string.h>
#include <sys/types.h>

/* ---- one status type inside the library ----------------------------------
 * 0 is success, negative is an error; UTIL_EAGAIN means "not now, try again"
 * (the caller queues work, it never spins on it). Converted to MPI error
 * classes only at the binding layer. */
enum {
    UTIL_OK = 0,
    UTIL_EAGAIN = -EAGAIN,
    UTIL_ENOMEM = -ENOMEM,
    UTIL_EINVAL = -EINVAL,
    UTIL_EPROTO = -EPROTO,   /* malformed packet from a peer */
    UTIL_ETRUNC = -EMSGSIZE, /* message larger than the receive buffer */
    UTIL_EIO = -EIO,
    UTIL_ENOENT = -ENOENT,
    UTIL_ECONN = -ECONNRESET,      /* peer gone */
    UTIL_EPERM = -EPERM,           /* not permitted (e.g. the kernel refuses cross-memory attach) */
    UTIL_EACCES = -EACCES,         /* a shared-memory segment another user made: refused */
    UTIL_EUNREACH = -EHOSTUNREACH, /* no fabric (nor gateway) reaches the peer */
};

/* ---- logging ------------------------------------------------------------ */
extern int util_log_rank;   /* set once the rank is known, -1 before */
/* the job id a spawned process's lines name after its rank ("rank 0 of job j12_1: "), so
 * that they cannot be taken for its parents' ("rank 0: "); empty for the first job */
extern char util_log_job[64];
/* How a line names another process, by its lpid: "rank 2" (of this process's job) or
 * "rank 0 of job j12_1" (of another job: spawned, a parent, a connected one), through
 * util_proc_namer (set by the core); "process N" before it is set. Up to 4 names may be
 * used in one line (the buffers rotate); for log lines only, never on the message path. */
const char *util_proc(int lpid);
extern void (*util_proc_namer)(int lpid, char *buf, size_t len);
/* the host process lpid runs on, when known (its cards were read: a connection was made or
 * tried), else ""; through util_host_namer (set by the core) */
const char *util_proc_host(int lpid);
extern void (*util_host_namer)(int lpid, char *buf, size_t len);
extern int util_log_fd;     /* where log lines go: stderr; -1 drops them (fuzzers) */
void util_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void util_die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Fuzzers only (test/fuzz): when set, util_die calls it after the message
 * instead of ending the process; it must not return (it longjmps back). */
extern void (*util_die_hook)(void);
/* what util_die runs first (a few, in the order added): removing names of shared memory
 * that nobody else would remove when this process ends here (under a process manager
 * that does not clean /dev/shm); must be async-signal-safe */
void util_die_cleanup_add(void (*fn)(void));

/* ---- memory ------------------------------------------------------------- */
void *util_malloc(size_t n);            /* dies with a message on failure */
void *util_calloc(size_t n, size_t m);
void *util_realloc(void *p, size_t n);
char *util_strdup(const char *s);
/* copy n bytes with non-temporal stores when n is at least min (0: never) and this is
 * x86-64: whole lines are written without first being fetched (a staging chunk's lines sit
 * in the cache of the peer that read them last; a large receive buffer is not in cache at
 * all), then a store fence, so a release store after it publishes the bytes; otherwise
 * memcpy. Returns the bytes streamed (0: memcpy). */
size_t util_copy_nt(void *dst, const void *src, size_t n, size_t min);
/* 1 if util_copy_nt streams copies of n bytes (x86-64, n >= min > 0) */
int util_copy_nt_streams(size_t n, size_t min);

/* ---- intrusive doubly linked queue ----------------------------------------- */
typedef struct util_qnode {
    struct util_qnode *next, *prev;
} util_qnode;
typedef struct util_queue {
    util_qnode head;    /* sentinel */
} util_queue;

static inline void util_queue_init(util_queue *q) { q->head.next = q->head.prev = &q->head; }
static inline bool util_queue_empty(const util_queue *q) { return q->head.next == &q->head; }
static inline void util_queue_push(util_queue *q, util_qnode *n)
{
    n->prev = q->head.prev;
    n->next = &q->head;
    q->head.prev->next = n;
    q->head.prev = n;
}
static inline void util_queue_remove(util_qnode *n)
{
    n->prev->next = n->next;
    n->next->prev = n->prev;
    n->next = n->prev = n;
}
static inline util_qnode *util_queue_first(util_queue *q)
{
    return util_queue_empty(q) ? NULL : q->head.next;
}
#define UTIL_CONTAINER(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

/* ---- handle table: stable pointers, small integer indices ------------------
 * Objects live in chunks that never move; index 0 is reserved (null handle). */
typedef struct util_htab {
    void ***chunks;     /* chunks[i] is an array of UTIL_HTAB_CHUNK slots */
    int nchunks;
    int next_unused;    /* first never-used index */
    int free_head;      /* -1 when empty: freed indices chained through a side array */
    int *free_next;
    int free_cap;
    size_t objsize;
} util_htab;
#define UTIL_HTAB_CHUNK 256
void util_htab_init(util_htab *t, size_t objsize, int reserved);   /* indices < reserved are pre-made */
void *util_htab_alloc(util_htab *t, int *index);   /* zeroed object */
/* NULL if index is out of range, never used or freed; inline: every handle lookup goes here */
static inline void *util_htab_get(const util_htab *t, int index)
{
    if (index <= 0 || index >= t->next_unused || t->free_next[index] != -2)
        return NULL;
    return t->chunks[index / UTIL_HTAB_CHUNK][index % UTIL_HTAB_CHUNK];
}
/* zero n bytes at p with plain 16-byte stores, unrolled where n is a constant: GCC turns a
 * memset of over 64 bytes into a `rep stos`, which takes 20-30 cycles to start (a request
 * is zeroed on every send and receive) */
typedef long long util_v16 __attribute__((vector_size(16), aligned(1), may_alias));
static inline void util_zero(void *p, size_t n)
{
    char *c = (char *)p;
    size_t i = 0;
#pragma GCC unroll 16
    for (; i + 16 <= n; i += 16)
        *(util_v16 *)(c + i) = (util_v16){0, 0};
    if (i < n)
        memset(c + i, 0, n - i);
}
/* memcpy with the small sizes inline (a message's payload of a few bytes: the call and the
 * library's size dispatch cost more than the copy): two overlapping moves of 1-16 bytes */
static inline void util_copy_small(void *dst, const void *src, size_t n)
{
    char *d = (char *)dst;
    const char *s = (const char *)src;
    if (n >= 8 && n <= 16) {
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + n - 8, &b, 8);
    } else if (n >= 4 && n < 8) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        memcpy(d, &a, 4);
        memcpy(d + n - 4, &b, 4);
    } else if (n > 0 && n < 4) {
        char a = s[0], b = s[n / 2], c = s[n - 1];
        d[0] = a;
        d[n / 2] = b;
        d[n - 1] = c;
    } else if (n) {
        memcpy(d, s, n);
    }
}
/* util_htab_alloc for an owner that sets every byte itself (a reused object keeps its old
 * contents): the free list's head inline, the rest through util_htab_alloc */
static inline void *util_htab_take(util_htab *t, int *index)
{
    int i = t->free_head;
    if (i < 0)
        return util_htab_alloc(t, index);
    t->free_head = t->free_next[i];
    t->free_next[i] = -2;
    *index = i;
    return t->chunks[i / UTIL_HTAB_CHUNK][i % UTIL_HTAB_CHUNK];
}
/* back to the free list (an index not in use is ignored) */
static inline void util_htab_free(util_htab *t, int index)
{
    if (index <= 0 || index >= t->next_unused || t->free_next[index] != -2)
        return;
    t->free_next[index] = t->free_head;
    t->free_head = index;
}
void util_htab_destroy(util_htab *t);

/* ---- tunables (one table, see util/tunables.c) ------------------------------ */
typedef struct util_config {
    size_t eager_limit;         /* DCFA_EAGER_LIMIT: largest eager message, header included */
    int max_credit;             /* DCFA_MAX_CREDIT: blocks in a connection's receive ring (-1: auto) */
    int coop_min;               /* DCFA_COOP_MIN: split reads from this size (-1 auto, 0 never) */
    size_t shm_rings;           /* DCFA_SHM_RINGS: receive ring bytes spread over the node's peers */
    size_t shm_ring_max;        /* DCFA_SHM_RING_MAX: the largest shm ring (auto) */
    size_t block_size;          /* DCFA_BLOCK_SIZE: one ring block */
    int credit_sync_limit;      /* DCFA_CREDIT_SYNC_LIMIT */
    size_t inline_limit;        /* DCFA_INLINE_LIMIT */
    int rndv_mode;              /* DCFA_RNDV_MODE: 0 auto, 1 read (sender-first only), 2 write (receiver-first when allowed) */
    int cma;                    /* DCFA_CMA: use process_vm_readv/writev */
    int cma_min;                /* DCFA_CMA_MIN: smaller rendezvous messages go through the staging
                                   pool (-1: auto, core_cma_min_for()), for a message alone */
    int cma_min_stream;         /* DCFA_CMA_MIN_STREAM: the same for a message that follows others
                                   still under way (-1: DCFA_CMA_MIN if set, else auto) */
    int cma_min_hot;            /* DCFA_CMA_MIN_HOT: the same for a stream's message sent from
                                   the buffer and size of the sender's previous rendezvous
                                   (-1: auto, core_cma_min_hot()) */
    int cma_min_both;           /* DCFA_CMA_MIN_BOTH: the same for a message alone sent with
                                   traffic both ways (-1: auto, core_cma_min_both()) */
    size_t stage_chunk;         /* DCFA_STAGE_CHUNK: bytes per staging chunk (a multiple of 4096) */
    int stage_chunks;           /* DCFA_STAGE_CHUNKS: chunks in a process's staging pool (0: none) */
    size_t stage_eager;         /* DCFA_STAGE_EAGER: messages up to this size go eager through a
                                   chunk of the staging pool (0: never) */
    size_t stage_nt;            /* DCFA_STAGE_NT: copies into the staging pool of at least this
                                   many bytes use non-temporal stores (0: never) */
    size_t recv_nt;             /* DCFA_RECV_NT: messages of at least this many bytes are copied
                                   out of the pool with non-temporal stores (0: never) */
    int half_packets;           /* DCFA_HALF_PACKETS: small eager messages two to a ring block */
    size_t alloc_shm;           /* DCFA_ALLOC_SHM: MPI_Alloc_mem blocks of at least this many bytes
                                   are memory the node's peers map (0: never) */
    int spin_us;                /* DCFA_SPIN_US: busy-poll this long before yielding (-1: auto) */
    int yield_us;               /* DCFA_YIELD_US: then yield this long before napping (-1: auto) */
    int sleep_us; /* DCFA_SLEEP_US: a wait this old of a process alone on its node sleeps on
                     its fabrics' descriptors (-1: never) */
    int async_progress;         /* DCFA_ASYNC_PROGRESS */
    int stats;                  /* DCFA_STATS: print counters at finalize */
    int debug;                  /* DCFA_DEBUG */
    /* collective algorithm choice (src/mpi/coll): 0 is auto (by size), then the
     * listed algorithms in the order of their tunable's choices */
    int coll_barrier;           /* DCFA_COLL_BARRIER */
    int coll_bcast;             /* DCFA_COLL_BCAST */
    int coll_reduce;            /* DCFA_COLL_REDUCE */
    int coll_allreduce;         /* DCFA_COLL_ALLREDUCE */
    int coll_gather;            /* DCFA_COLL_GATHER (gather and scatter) */
    int coll_allgather;         /* DCFA_COLL_ALLGATHER */
    int coll_alltoall;          /* DCFA_COLL_ALLTOALL */
    int coll_reduce_scatter;    /* DCFA_COLL_REDUCE_SCATTER */
    int coll_scan;              /* DCFA_COLL_SCAN (scan and exscan) */
    size_t coll_bcast_long;     /* DCFA_COLL_BCAST_LONG */
    size_t coll_allreduce_short;/* DCFA_COLL_ALLREDUCE_SHORT */
    size_t coll_allreduce_long; /* DCFA_COLL_ALLREDUCE_LONG */
    size_t coll_allgather_short;/* DCFA_COLL_ALLGATHER_SHORT */
    size_t coll_alltoall_short; /* DCFA_COLL_ALLTOALL_SHORT */
    int coll_shm;               /* DCFA_COLL_SHM: node-level collectives in shared memory */
    int coll_module;            /* DCFA_COLL_MODULE: module-aware collectives across gateways */
    const char *coll_modules;   /* DCFA_COLL_MODULES: each world process's module (a test) */
    size_t coll_shm_slot;       /* DCFA_COLL_SHM_SLOT */
    size_t coll_shm_flat;       /* DCFA_COLL_SHM_FLAT */
    size_t coll_reduce_scatter_long; /* DCFA_COLL_REDUCE_SCATTER_LONG */
    int ctx_wait;               /* DCFA_CTX_WAIT: seconds a message may wait for its context */
    int spawn_timeout;          /* DCFA_SPAWN_TIMEOUT: seconds spawned processes have to connect */
    /* MPI-IO (src/mpi/io): defaults of the file hints */
    size_t io_cb_buffer;        /* DCFA_IO_CB_BUFFER: two-phase window (cb_buffer_size) */
    int io_cb_nodes;            /* DCFA_IO_CB_NODES: aggregators (cb_nodes), 0 one per node */
    int io_cb;                  /* DCFA_IO_CB: collective buffering, 0 auto, 1 enable, 2 disable */
    int io_ds;                  /* DCFA_IO_DS: data sieving, 0 auto, 1 enable, 2 disable */
    size_t io_ind_buffer;       /* DCFA_IO_IND_BUFFER: data sieving buffer */
    int rma_mode;               /* DCFA_RMA_MODE: 0 auto (direct on the node), 1 am (messages) */
    size_t rma_batch;           /* DCFA_RMA_BATCH: bytes of one batch of RMA operations (0: no batching) */
    size_t rma_inline;          /* DCFA_RMA_INLINE: data up to this size travels inside the batch */
    int rma_assist;             /* DCFA_RMA_ASSIST: the assist thread serves windows in message mode */
    const char *fabrics;        /* DCFA_FABRICS: auto, or a comma list of fabrics to open */
    const char *gateways;       /* DCFA_GATEWAYS: the job's gateway daemons (mpirun --gateways) */
    const char *net_exclude;    /* DCFA_NET_EXCLUDE: interfaces and networks MPI does not use */
    const char *gateway_routes; /* DCFA_GATEWAY_ROUTES: rules of mpirun --gateway-routes */
    const char *gateway_key;    /* DCFA_GATEWAY_KEY: the job's key for its gateway daemons */
    int module;                 /* DCFA_MODULE: this process's module id (-1: by its networks) */
    int sock_connect;           /* DCFA_SOCK_CONNECT: 0 auto, 1 daemon, 2 self */
    int net_timeout;            /* DCFA_NET_TIMEOUT: s a TCP peer may not answer (0: no bound) */
    size_t sock_credit;         /* DCFA_SOCK_CREDIT: bytes in flight per sock connection */
    size_t sock_eager_limit;    /* DCFA_SOCK_EAGER_LIMIT: largest eager message over sock (header
                                   included; 0: the core's) */
    int sock_rma;               /* DCFA_SOCK_RMA: one-sided frames on sock (rendezvous data from and
                                   into the user's buffers) */
    const char *ofi_provider;   /* DCFA_OFI_PROVIDER: libfabric provider ('+' for ';') */
    const char *ofi_iface;      /* DCFA_OFI_IFACE: network interface (libfabric domain) */
    int mr_cache;               /* DCFA_MR_CACHE: registrations kept cached per fabric */
    int ofi_split;              /* DCFA_OFI_SPLIT: bulk transfers on endpoints of their own */
    int ofi_late;               /* DCFA_OFI_LATE: open ofi in a thread of its own, off MPI_Init */
    int ofi_late_delay;         /* DCFA_OFI_LATE_DELAY: ms the thread waits first (tests) */
    int ofi_late_sock;          /* DCFA_OFI_LATE_SOCK: first contacts over sock while ofi opens */
    int ofi_auto;               /* DCFA_OFI_AUTO: auto mode opens ofi across hosts (-1: where
                                   fab_ofi_wanted says, 1: always, 0: never when sock serves) */
    int ofi_max_credit;         /* DCFA_OFI_MAX_CREDIT: blocks of an ofi connection's rings */
    size_t gw_eager_limit;      /* DCFA_GW_EAGER_LIMIT: the same through a gateway daemon */
    size_t ofi_eager_limit;     /* DCFA_OFI_EAGER_LIMIT: largest eager message over ofi (header
                                   included; 0: DCFA_EAGER_LIMIT's) */
    int ofi_tail;               /* DCFA_OFI_TAIL: tail-marked ring writes where the provider allows */
    int ofi_srq;                /* DCFA_OFI_SRQ: shared receive buffers instead of rings per peer */
    int ofi_srq_bufs;           /* DCFA_OFI_SRQ_BUFS: shared receive buffers posted */
    size_t ofi_srq_buf;         /* DCFA_OFI_SRQ_BUF: bytes of each */
    int ofi_tx_slots;           /* DCFA_OFI_TX_SLOTS: send buffers shared by all connections */
    int ofi_lanes;              /* DCFA_OFI_LANES: busy peers given a ring (lane) of their own */
    int ofi_lane_after;         /* DCFA_OFI_LANE_AFTER: packets from a peer before it gets one */
    int ofi_lane_blocks;        /* DCFA_OFI_LANE_BLOCKS: blocks of a lane */
    int ofi_wake;               /* DCFA_OFI_WAKE: poll only connections that received something */
    int ring_start;             /* DCFA_RING_START: ring positions start this far before the wrap */
} util_config;
extern util_config util_cfg;

enum util_tunable_type { UTIL_T_SIZE, UTIL_T_INT, UTIL_T_BOOL, UTIL_T_ENUM,
                         UTIL_T_STR /* const char *: the environment's string */ };
/* UTIL_TF_AGREE: every process of a job must have the same value (ring
 * geometry, collective algorithm choice); checked at start-up.
 * UTIL_TF_LIVE: read at each use, so MPI_T may change it while the library runs. */
enum util_tunable_flags { UTIL_TF_AGREE = 1, UTIL_TF_LIVE = 2 };
/* Who sets a variable (mpiinfo shows USER by default, every level with --all; MPI_T's
 * verbosity follows it):
 *   USER      what a user sets to run a job (fabric choice, diagnostics, timeouts);
 *   TUNING    thresholds and algorithm choices a tuner sweeps (docs/bench.md);
 *   DEV       switches that force a protocol or turn a mechanism off, for developers;
 *   TEST      only tests set them (they make rare cases happen);
 *   LAUNCHER  set by mpirun / the assist daemon for the processes it starts, not by users. */
enum util_tunable_level {
    UTIL_LVL_USER,
    UTIL_LVL_TUNING,
    UTIL_LVL_DEV,
    UTIL_LVL_TEST,
    UTIL_LVL_LAUNCHER,
    UTIL_NLVL
};
/* What a variable is about: its MPI_T category (util_tunable_cats) */
enum util_tunable_cat {
    UTIL_CAT_PROTOCOL,
    UTIL_CAT_PROGRESS,
    UTIL_CAT_COLL,
    UTIL_CAT_FABRIC,
    UTIL_CAT_RMA,
    UTIL_CAT_IO,
    UTIL_CAT_DPM,
    UTIL_CAT_LAUNCH,
    UTIL_CAT_DEBUG,
    UTIL_NCAT
};
typedef struct util_tunable {
    const char *name;           /* environment variable */
    enum util_tunable_type type;
    void *ptr; /* the library's copy; NULL: read by mpirun, the assist daemon
                  or start-up code of their own (entries after util_ntunables) */
    const char *defval;
    const char *choices;        /* UTIL_T_ENUM: "auto,read,write" */
    const char *help;
    unsigned flags;      /* enum util_tunable_flags */
    unsigned char level; /* enum util_tunable_level */
    unsigned char cat;   /* enum util_tunable_cat */
} util_tunable;
/* Every DCFA_* environment variable of the library, mpirun and the assist daemon, once
 * (util/tunables.c): util_var(0 .. util_nvars); the first util_ntunables of them are the
 * library's tunables, util_tunables[] (util_cfg, MPI_T control variables), the others are
 * read elsewhere (ptr NULL). */
extern const util_tunable util_tunables[];
extern const int util_ntunables;
extern const int util_nvars;
const util_tunable *util_var(int i); /* NULL outside 0 .. util_nvars */
/* the registry entry of variable `name`, or NULL */
const util_tunable *util_tunable_find(const char *name);
extern const char *const util_tunable_level_names[UTIL_NLVL];
/* MPI_T categories: name and description per enum util_tunable_cat */
extern const char *const util_tunable_cat_names[UTIL_NCAT][2];
int util_tunables_load(void);   /* reads the environment; <0 with a logged message on bad values */
int util_tunable_format(const util_tunable *t, char *buf, size_t len);  /* current value as text */
/* The UTIL_TF_AGREE values as one string ("<version>/v1,v2,...": no spaces),
 * to compare with another process's. UTIL_OK, or UTIL_ENOMEM if len is short. */
int util_tunables_agree_format(const char *version, char *buf, size_t len);
/* Compares two such strings, a of process `ra` and b of process `rb`; writes
 * "NAME is A on rank ra but B on rank rb" for each tunable that differs
 * (joined by "; ", or that the versions differ) to msg. Returns how many differ. */
int util_tunables_agree_compare(const char *a, int ra, const char *b, int rb, char *msg,
                                size_t len);
/* the value of tunable i was set through MPI_T: util_tunables_load keeps it */
void util_tunable_fix(int i);

/* ---- node identity ----------------------------------------------------------- */
/* A key naming the shared-memory domain this process lives in: two processes
 * with the same key can map each other's /dev/shm segments and use
 * cross-memory attach. It is the hostname, the kernel's boot id and the device
 * of /dev/shm, so test "hosts" made of namespaces with their own hostname and
 * /dev/shm mount count as different nodes. DCFA_NODE_KEY overrides it (tests).
 * Computed once; [A-Za-z0-9._:-] only, at most UTIL_NODE_KEY_MAX chars. */
#define UTIL_NODE_KEY_MAX 127
const char *util_node_key(void);

/* ---- networks (net.c) ---------------------------------------------------------
 * The IPv4 networks of this host (interfaces that are up: address and prefix, host byte
 * order), found once; util_net_reaches: the kernel has a route to the address. The card's
 * "net:" entry is util_net_format's text ("10.77.1.1/24,127.0.0.1/8"); util_net_common says
 * whether two such lists share a network other than loopback (docs/gateway.md). */
#define UTIL_NET_MAX 16
typedef struct {
    uint32_t addr;
    int prefix;
} util_net;
int util_net_list(const util_net **out); /* the count; *out valid for the process's life */
/* DCFA_NET_EXCLUDE ("eth9,10.77.9.0/24": interfaces and networks) names this interface or
 * address: util_net_list leaves it out (docs/gateway.md, "Without mpirun") */
int util_net_excluded(const char *ifname, uint32_t addr);
int util_net_on(const util_net *n, uint32_t addr);
int util_net_reaches(uint32_t addr);
int util_net_format(const util_net *nets, int n, char *buf, size_t len);
int util_net_parse(const char *s, size_t len, util_net *nets, int max); /* count, or <0 */
int util_net_common(const util_net *a, int na, const util_net *b, int nb);
/* Every TCP socket that carries MPI data (sock's, gw's, the gateway daemon's, the daemons'
 * connections for ranks on other hosts): a peer host that stops answering fails it within
 * about secs seconds (DCFA_NET_TIMEOUT: keepalive probes while it idles, TCP_USER_TIMEOUT on
 * unacknowledged data; nothing for secs <= 0) instead of never, and, when
 * DCFA_TCP_CONGESTION names one, that congestion control instead of the system's (a process
 * that cannot set it says so once, naming the choices, and keeps the system's). Nothing for
 * another family. */
void util_tcp_data(int fd, int secs);
/* TCP socket fd's congestion control set to `name`: 0, or -errno (ENOENT: the kernel has none
 * of that name; EPERM: not in net.ipv4.tcp_allowed_congestion_control for this user) */
int util_tcp_congestion(int fd, const char *name);
/* where util_tcp_data's line goes: the library's log (util_log, naming the rank; set by
 * util_tunables_load), else stderr with the pid (mpirun's daemons) */
extern void (*util_net_say)(const char *line);
/* what TCP socket fd received is acknowledged now, not at the kernel's delayed-ACK timer: for
 * a process about to sleep in poll(2) (one that polls sends them with its next empty read);
 * a sender waiting for that ACK to send the rest of a frame would stall until the sleep ends.
 * Nothing for another family or a closed fd */
void util_tcp_ack_now(int fd);
/* DCFA_NET_TIMEOUT read from the environment (60 if unset): for mpirun's daemons, which have
 * no tunables table (the library reads util_cfg.net_timeout) */
int util_net_timeout_env(void);

/* ---- shared-memory segments (/dev/shm) -------------------------------------------
 * util_shm_create makes a new segment exclusively (O_CREAT | O_EXCL, mode
 * 0600), reserves its memory (posix_fallocate: a full /dev/shm is an error
 * here, naming /dev/shm and the size, never a SIGBUS later) and maps it.
 * A name that already exists is refused (UTIL_EACCES), naming its owner.
 * util_shm_attach maps a segment another process of this user made: its
 * owner must be this user, its mode 0600 and its size `len`, else it is
 * refused loudly (UTIL_EACCES / UTIL_EINVAL); UTIL_ENOENT (not logged) if
 * there is no such segment. `what` names the segment's use in messages.
 * Names carry a token no other user can guess (util_shm_token), so that
 * nobody can make one before its owner does. */
int util_shm_create(const char *name, size_t len, const char *what, void **out);
int util_shm_attach(const char *name, size_t len, const char *what, void **out);
/* Drops a segment's name (shm_unlink): UTIL_OK, or a negative errno (UTIL_ENOENT: none). */
int util_shm_remove(const char *name);

/* ---- segments from the assist daemon (shm_seg.c, mpirun --isolate shm) ---------------
 * util_shm_daemon: 1 when DCFA_ISOLATE names shm: this process has no /dev/shm of its own,
 * and util_shm_create, util_shm_attach and util_shm_remove ask the assist daemon on the
 * endpoint channel (DCFA_SOCK_EP_FD) instead, by the same names (util_shm_daemon_map: a
 * memfd it hands over, mapped). Messages of the sock fabric that arrive on the channel while
 * such a request waits are kept: util_epch_pending counts them, util_epch_take gives the
 * oldest (its length, 0 if none; *fd its descriptor or -1). */
int util_shm_daemon(void);
int util_shm_daemon_map(int create, const char *name, size_t len, const char *what, void **out);
int util_epch_pending(void);
ssize_t util_epch_take(void *buf, size_t cap, int *fd);

/* ---- names no one else can guess ---------------------------------------------------
 * util_random fills buf from the kernel's random source (getrandom): UTIL_OK or -errno.
 * util_siphash is SipHash-2-4 of data under a 128-bit key: a keyed hash whose outputs
 * say nothing about the key or about its other outputs, so a process can derive the
 * names of all its segments from one secret it gives only to its peers (the shm card)
 * while seeing some of them tells nobody the others. */
int util_random(void *buf, size_t len);
uint64_t util_siphash(const uint64_t key[2], const void *data, size_t len);
/* a random 64-bit token for a segment name (never 0) */
uint64_t util_shm_token(void);

/* ---- time ------------------------------------------------------------------ */
double util_wtime(void);        /* seconds, monotonic */
uint64_t util_now_ns(void);

/* ---- waiting without burning a core --------------------------------------- */
/* Set by the layer above while its entry lock guards the library (several
 * application threads, or the assist thread): a waiting thread releases the
 * lock whenever it looks at the clock, yields or naps, so others get in. */
extern void (*util_wait_unlock)(void);
extern void (*util_wait_lock)(void);
typedef struct util_backoff {
    int polls;
    int yielding;
    uint64_t start_ns;
    uint64_t idle_ns;       /* when util_wait_idle last ran for this wait */
} util_backoff;
static inline void util_backoff_reset(util_backoff *b)
{
    b->polls = 0;
    b->yielding = 0;
    b->idle_ns = 0;
}
void util_backoff_wait(util_backoff *b);   /* spin, then sched_yield, then short sleeps */
/* Set by the core: sleep at most max_ms in the kernel until a fabric has something (its
 * descriptors, fab_ops.wait_fds); 1 if it slept, 0 if it cannot now (a fabric without
 * descriptors has connections, work is in hand). util_backoff_wait calls it once an idle
 * wait is DCFA_SLEEP_US old, when no other thread shares the library (util_wait_unlock
 * NULL). */
extern int (*util_wait_block)(int max_ms);
#define UTIL_WAIT_BLOCK_MS 1
/* processes of all jobs on this node that this process knows of, itself included */
int util_node_procs(void);
/* A wait on a file descriptor (a socket of the dynamic-process calls, whose
 * peer may be a process still starting): sleeps in poll() for fd to be ready
 * for events, at most max_ms, with the entry lock released, instead of
 * spinning: a spinning waiter can keep the very process it waits for off the
 * core. Runs the idle hook as util_backoff_wait does. 1 ready, 0 not yet,
 * negative errno. */
int util_backoff_wait_fd(util_backoff *b, int fd, short events, int max_ms);
/* resolve the "auto" waiting policy: spin long when every process on the node
 * has a core (local_ranks: the processes of all jobs on this node that the
 * process knows of at start-up) */
void util_backoff_configure(int local_ranks);
/* processes on this node came (delta > 0: children spawned here) or went: the
 * "auto" spin is resolved again (thread-safe; an explicit DCFA_SPIN_US is
 * kept) */
void util_backoff_neighbours(int delta);
/* delta +1: this process now awaits an answer that another process of this host must compute
 * (its assist daemon making a connection); -1: it came. While any is awaited a wait does not
 * spin (DCFA_SPIN_US is taken as 0): it yields at once, so the process it waits for gets a
 * core (on a host whose cores are all busy with spinning ranks the daemon waited for
 * otherwise runs only when the scheduler preempts one of them, about a millisecond a hop).
 * Thread-safe. */
void util_backoff_hold(int delta);
/* 1 when this node has more processes of known jobs than cores (util_backoff_configure's
 * count, with util_backoff_neighbours' changes) */
int util_node_oversubscribed(void);
/* Set by the layer above: called by a waiting thread once it naps (the slow
 * phase of the backoff) and then every UTIL_IDLE_CHECK_MS while it keeps
 * napping, with the entry lock held. It watches what may fail while nobody
 * talks: the launcher's channel, messages held for unknown contexts. Never on
 * the small-message path. */
#define UTIL_IDLE_CHECK_MS 100
extern void (*util_wait_idle)(void);

/* ---- job resources in /dev/shm ------------------------------------------------- */
/* Removes every /dev/shm/dcfa-<job_id>-* entry this process may remove (the
 * job is over: its launcher is gone). Async-signal-safe: no allocation, no
 * stdio; names that are not there or not ours are skipped. Returns how many
 * entries were removed. */
int util_shm_unlink_job(const char *job_id);

#endif
