/* core: requests, matching, progress and the point-to-point protocols.
 * This is what the MPI layer calls to move a message; it knows processes by
 * their process id (lpid) and messages by (context, source rank, tag). It
 * knows nothing of MPI's objects: no handle, status or error class of <mpi.h>
 * reaches it; src/mpi converts (docs/architecture.md). */
#ifndef DCFA_CORE_H
#define DCFA_CORE_H

#include <stddef.h>
#include <stdint.h>
#include "util/util.h"
#include "core/dtype.h"
#include "fabric/fabric.h"

enum core_req_kind {
    CORE_REQ_SEND = 1,
    CORE_REQ_RECV,
    CORE_REQ_UPPER, /* the first kind of the layer above: requests it makes and completes
                       itself (core_req_complete), their state in u.other */
};

/* A source rank or tag that matches any (the MPI layer's MPI_ANY_SOURCE and MPI_ANY_TAG
 * have these values, so ranks and tags reach core as they are) */
enum { CORE_ANY_SOURCE = -2, CORE_ANY_TAG = -1 };

/* What a finished operation reports: src/mpi makes an MPI_Status of it. */
typedef struct core_status {
    int32_t source; /* the sender's rank in its communicator */
    int32_t tag;
    int error; /* 0; < 0: a util.h status (core's: UTIL_ETRUNC, UTIL_EIO, ...);
                  > 0: a code of the layer above, in requests it completes itself */
    int cancelled;
    int64_t count; /* bytes */
} core_status;

enum core_send_mode { CORE_SEND_STD = 0, CORE_SEND_SYNC, CORE_SEND_READY, CORE_SEND_BUFFERED };

struct core_conn;
struct core_uq;

typedef struct core_req core_req;
typedef void (*core_req_cb)(core_req *r);

/* A one-sided bulk transfer in chunks the fabric accepts (core/bulk.c): the
 * rendezvous read and write, and core_rma_start. The local side is the
 * contiguous range at `base`, or (reads) `count` elements of `dt` at `buf`,
 * read in place or through a bounce buffer and unpacked. */
typedef struct core_xfer {
    fab_op op;              /* the chunk in flight */
    struct core_conn *conn;
    int write;
    uint64_t raddr, rkey;   /* the peer's memory */
    size_t off;             /* bytes done */
    size_t len;             /* bytes to move */
    size_t chunk;           /* bytes of the operation in flight */
    void *base;
    void *buf;
    size_t count;
    const core_dt *dt;
    void *bounce;           /* reads into (buf, count, dt): land here, a piece at a time, and
                               are unpacked from here (core_xfer_bounce), else read in place */
    size_t bounce_len;
    uint32_t peer_req;      /* the peer's request id, for the protocol's answer */
    void (*finish)(struct core_xfer *x, int status);
} core_xfer;

/* memory registered for a peer's one-sided access while a request lives */
typedef struct core_mem {
    fab_mem mem;
    const struct fab_ops *fab;  /* NULL: nothing registered */
} core_mem;

/* One flat request: a common header and a union by kind, one level deep. */
struct core_req {
    int kind;
    int id;                 /* index in the request table: the wire id and the handle index */
    volatile int complete;
    core_status status;
    core_req_cb on_complete;/* called once when complete becomes 1 (may be NULL) */
    /* the layer above's, 0 from core_req_alloc and never read by core */
    struct {
        int obj;   /* src/mpi: the communicator its errors go to (a handle) */
        void *ref; /* src/mpi: the datatype it holds, released with the request */
    } up;
    void *owner;            /* the layer above's (a sub-request's parent, a partitioned request) */
    util_qnode qn;          /* posted queue / backlog link */
    struct core_rndv *rndv; /* core: rendezvous state (registration, bulk transfer), allocated for
                               large messages only so that small ones keep a small request */
    char *fail_text;        /* status.error UTIL_EUNREACH: why, for the error's message (NULL:
                               core_conn_failure_text); freed with the request */
    union {
        struct {
            const void *buf;
            size_t count;
            const core_dt *dt;
            size_t bytes;
            int lpid;
            int32_t src;        /* my rank in the communicator */
            int32_t tag;
            uint32_t ctx;
            uint32_t seq;
            int mode;           /* enum core_send_mode */
            int state;          /* protocol state (core private) */
            size_t sent;        /* bytes sent through the ring (copy fallback) */
            int cancel;         /* 0 none, 1 CANCEL sent and unanswered, 2 answered */
            int proto_done;     /* the protocol finished while a cancel was unanswered */
            int rts_out;        /* an RTS went out and the send is not complete (core_s.rndv_out) */
            int hold;           /* receiver-first write in flight holds the connection's backlog */
            int hot;            /* a rendezvous from the buffer and size of the one before it
                                   (core_send_hot): its data are likely in my cache; 2: with
                                   the same fingerprint, likely not written since */
            int early;          /* since my previous rendezvous send a receive of mine found
                                   its message already there (core_send_hot, core_both_ways) */
        } send;
        struct {
            void *buf;
            size_t count;
            const core_dt *dt;
            size_t capacity;    /* bytes the buffer holds */
            size_t distinct;    /* of them, counted in the core's receives under way (a
                                   buffer a recent receive used too counts 0: core_recv_count) */
            int lpid;           /* -1 for CORE_ANY_SOURCE */
            int32_t src;        /* rank or CORE_ANY_SOURCE */
            int32_t tag;        /* tag or CORE_ANY_TAG */
            uint32_t ctx;
            int state;          /* protocol state (core private) */
            uint32_t rtr_seq;   /* receiver-first: the message sequence our RTR is bound to */
            size_t received;    /* bytes received through the ring (copy fallback) */
            size_t expected;    /* message size */
            int cancel;         /* cancel asked while an RTR was outstanding */
        } recv;
        struct {
            void *state; /* kind >= CORE_REQ_UPPER: the layer above's state */
        } other;
    } u;
};

/* a message matched but not received (MPI_Mprobe's) */
typedef struct core_msg core_msg;

/* The key/value exchange the core publishes its fabric addresses ("cards")
 * through: assist_kvs_* in the library, something else in unit tests. */
typedef struct core_kvs {
    int (*put)(const char *key, const char *value);
    int (*fence)(void);
    int (*get)(const char *key, char *value, int maxlen);
    /* Optional (NULL: the network fabric opens in core_init): a name service every process
     * of the run reaches at once, without a fence (mpirun's: assist_name_*), through which a
     * fabric opened later publishes its card (core_params.net_late) */
    int (*publish)(const char *name, const char *value);
    int (*lookup)(const char *name, char *value, int maxlen);
    int (*unpublish)(const char *name);
} core_kvs;

typedef struct core_params {
    int self, nprocs;       /* my process id (lpid) and the job's size */
    int local_nprocs;       /* processes on my node, -1 if unknown */
    int node_nprocs;        /* processes of all jobs sharing my node (sizes per-peer memory),
                               0 if unknown */
    const char *job_id;     /* names shared resources */
    core_kvs kvs;
    int net_late; /* the network fabric (ofi) may open in a thread, off MPI_Init's
                     path (DCFA_OFI_LATE, with kvs.publish and kvs.lookup) */
    /* a lost connection (core_conn_lost) may have taken messages of mine that no call of
     * this process waits for (sends that completed at my end): why names what was lost.
     * The MPI layer raises it where a fatal error handler ends the job; NULL: ignored */
    void (*lost_unseen)(const char *why);
} core_params;

int core_init(const core_params *p);
int core_finalize(void);

/* ---- processes of other jobs (dynamic processes; docs/dpm.md) -------------------------
 * A process is known by its lpid, an index into this process's table: my
 * job's ranks are lpids 0..size-1; processes of other jobs (spawned, or met
 * through a port) get the next ones when the MPI layer adds them. Across
 * processes they are named by their gid (fab_gid: job hash and rank). */
uint64_t core_gid(int lpid);
int core_lpid_of(uint64_t gid);         /* -1 when not known here */
/* why the last connection failed with UTIL_EUNREACH (no fabric nor gateway reaches the peer):
 * one line naming both hosts, for the error message; "" when none did */
const char *core_conn_failure_text(void);
/* The lpid of process gid, added with its cards ("<fabric>:...;...") when new; a
 * negative status when it cannot be reached (logged). */
int core_proc_add(uint64_t gid, const char *cards);
/* this process's cards, for processes of other jobs (opens the fabrics if not yet) */
int core_self_cards(char *buf, size_t len);
/* the cards of process lpid as known here */
int core_proc_cards(int lpid, char *buf, size_t len);
/* Close the connections to these processes (MPI_Comm_disconnect): a FIN each way
 * behind everything sent, then the fabric connection is dropped; both sides call
 * it for each other. A later message reconnects. */
int core_disconnect(const int *lpids, int n);

core_req *core_req_alloc(int kind);
/* the request table: ids are its indices (inline: every MPI_Request lookup comes here) */
extern util_htab core_reqs;
static inline core_req *core_req_get(int id) { return util_htab_get(&core_reqs, id); }   /* NULL if not live */
void core_req_rndv_drop(core_req *r);      /* core_req_free of a request with rendezvous state */
void core_req_fail_text_drop(core_req *r); /* ... with a failure's text */
static inline void core_req_free(core_req *r)
{
    if (__builtin_expect(r->rndv != NULL, 0))
        core_req_rndv_drop(r);
    if (__builtin_expect(r->fail_text != NULL, 0))
        core_req_fail_text_drop(r);
    util_htab_free(&core_reqs, r->id);
}
/* a request that failed with UTIL_EUNREACH: its own text, else the last failure's */
const char *core_req_failure_text(const core_req *r);
void core_req_complete(core_req *r);/* marks complete and runs on_complete */

/* ctx: a communicator's context; the MPI layer sends its own collective traffic on the odd
 * one of a pair (ctx + 1), which the rendezvous' choice of path tells apart (core_both_ways) */
int core_isend(const void *buf, size_t count, const core_dt *dt, int lpid, int32_t src_rank,
               int32_t tag, uint32_t ctx, int mode, core_req **out);
/* The blocking small-message fast path: a contiguous standard-mode message that
 * fits one eager packet goes straight into the peer's ring, with no request.
 * UTIL_EAGAIN when that is not possible now (send to self, connection not yet
 * made, packets waiting for credit): the caller takes the general path. */
int core_send_eager_now(const void *data, size_t bytes, int lpid, int32_t src_rank, int32_t tag,
                        uint32_t ctx);
/* lpid: the source's process id, or -1 with src_rank == CORE_ANY_SOURCE */
int core_irecv(void *buf, size_t count, const core_dt *dt, int lpid, int32_t src_rank, int32_t tag,
               uint32_t ctx, core_req **out);
/* *flag set when a matching message is there; with msg != NULL it is taken out of the queue */
int core_iprobe(int32_t src_rank, int32_t tag, uint32_t ctx, int *flag, core_status *status,
                core_msg **msg);
int core_imrecv(void *buf, size_t count, const core_dt *dt, core_msg *msg, core_req **out);
/* 1 if the receive was cancelled, 0 if it is too late */
int core_cancel_recv(core_req *r);
/* ask to withdraw a send; it completes (with status.dcfa_cancelled set or not) once decided */
int core_cancel_send(core_req *r);

/* Who may send what: the MPI layer's answer to "which process is rank `src`
 * of the communicator with context `ctx`" (ctx and ctx + 1 of a pair give the
 * same answer): its lpid, CORE_PEER_NO_CTX when no communicator of this
 * process has that context (yet), CORE_PEER_NO_RANK when src is not one of
 * its ranks. O(1); set once by the MPI layer. An arriving message whose
 * connection is not that process is a forged packet: reported with the peer,
 * never matched. One for a context not known yet is held (a communicator may
 * be created a moment later) for at most DCFA_CTX_WAIT seconds. */
enum { CORE_PEER_NO_CTX = -1, CORE_PEER_NO_RANK = -2 };
typedef int (*core_peer_fn)(uint32_t ctx, int32_t src);
void core_set_peer_lookup(core_peer_fn fn);
/* The slow checks a waiting process runs (util_wait_idle): messages held for
 * a context that became known are verified, ones held too long reported. */
void core_idle_check(void);

int core_progress(void);            /* one pass; returns the number of events handled */
/* The layer above's poller, called at the end of every progress pass while set
 * (collective schedules set it while any runs); it returns its event count. */
void core_set_poller(int (*poll)(void));
/* More pollers of the layers above (RMA windows serving messages), called
 * after that one; at most CORE_MAX_POLLERS, each added once. Start/stop pairs. */
#define CORE_MAX_POLLERS 4
int core_poller_start(int (*poll)(void));   /* UTIL_ENOMEM when the list is full */
void core_poller_stop(int (*poll)(void));
int core_wait(core_req *r);         /* progress until r completes (yields when idle) */

/* ---- one-sided access to a peer's memory (src/core/rma_io.c) ------------------------
 * What RMA windows use to reach a window in another process without that
 * process's CPU: today the connection's fabric read/write (shm: cross-memory
 * attach). `rkey` names the peer's registration (0 on shm, where any address
 * of the peer is reachable). A call returns UTIL_OK when the transfer is
 * complete, CORE_RMA_POSTED when it was only started (then core_rma_test on
 * its context until it answers 1), or a negative status. */
#define CORE_RMA_POSTED 1
typedef struct core_rma_ctx {
    fab_op op;              /* the fabric's context while posted */
    int posted;             /* a transfer under way (fabrics with posted operations) */
    int status;             /* its final status */
} core_rma_ctx;
/* connect to the peer (both ends map the connection before this returns on
 * shm: the peer need not call MPI again); UTIL_OK or a negative status */
int core_rma_prepare(int lpid);
/* 1 if core_rma_read/write reach the peer's memory one-sidedly */
int core_rma_capable(int lpid);
int core_rma_write(int lpid, const struct iovec *local, int nlocal, uint64_t raddr, uint64_t rkey,
                   size_t len, core_rma_ctx *ctx);
int core_rma_read(int lpid, const struct iovec *local, int nlocal, uint64_t raddr, uint64_t rkey,
                  size_t len, core_rma_ctx *ctx);
/* many remote ranges (at most CORE_RMA_IOV each side, as many bytes on both) */
#define CORE_RMA_IOV 1024
int core_rma_writev(int lpid, const struct iovec *local, int nlocal, const struct iovec *remote,
                    int nremote, uint64_t rkey, core_rma_ctx *ctx);
int core_rma_readv(int lpid, const struct iovec *local, int nlocal, const struct iovec *remote,
                   int nremote, uint64_t rkey, core_rma_ctx *ctx);
int core_rma_test(core_rma_ctx *ctx);   /* 1 when the transfer is over (ctx->status says how) */
/* ---- one-sided access to a peer's memory (RMA windows; docs/fabric.md) ----
 * Register [buf, buf+len) for access by process lpid: *addr and *key are what
 * that peer passes to core_rma_start; *handle goes to core_rma_dereg. */
int core_rma_reg(int lpid, const void *buf, size_t len, uint64_t *addr, uint64_t *key, void **handle);
void core_rma_dereg(void *handle);
typedef struct core_rma {
    void (*done)(struct core_rma *op, int status);  /* set by the caller: 0 or negative */
    core_xfer x;            /* the core's */
    int starting, result;   /* the core's */
} core_rma;
/* Read (write = 0) or write len bytes between local and process lpid's
 * [raddr, raddr+len). UTIL_OK: done now (done() not called); 1: done() is
 * called from a later core_progress(); negative: failed (logged). */
int core_rma_start(core_rma *op, int lpid, int write, void *local, size_t len, uint64_t raddr,
                   uint64_t rkey);
/* memory for MPI_Alloc_mem that the peers of an open fabric map themselves (the shm
 * fabric's memfd blocks, DCFA_ALLOC_SHM): a rendezvous from or into it is a plain copy.
 * NULL: no fabric offers it for this request (the caller takes heap memory). core_mem_free
 * takes what core_mem_alloc gave, also after core_finalize. */
void *core_mem_alloc(size_t len, size_t align);
void core_mem_free(void *base, size_t len);
/* the memory [buf, buf+len) is being freed (MPI_Free_mem, window free): fabrics drop cached
 * registrations of it */
void core_mem_release(const void *buf, size_t len);

/* counters for DCFA_STATS and the bench */
typedef struct core_stats {
    uint64_t sent[16];              /* by wire_type (conn.c: WIRE_TYPE_MAX fits); a half packet
                                       counts as EAGER and as WIRE_EAGER_HALF */
    uint64_t received[16];
    uint64_t unexpected;
    uint64_t backlog;
    uint64_t cma_bytes;
    uint64_t direct_bytes;          /* bytes this process moved by plain copies from or into a
                                       peer's MPI_Alloc_mem block mapped here (FAB_DIRECT) */
    uint64_t copy_bytes;
    uint64_t stage_bytes;           /* of copy_bytes, moved through the staging pool */
    uint64_t stage_nt_bytes;        /* of stage_bytes, copied in with non-temporal stores */
    uint64_t recv_nt_bytes;         /* bytes received from a peer's pool with non-temporal stores */
    uint64_t stage_eager;           /* messages sent as staged EAGER (in a chunk of the pool) */
    uint64_t split_written;         /* bytes this process wrote as the sender's part of a split */
    uint64_t split_back;            /* splits whose sender's part this receiver read itself */
    uint64_t connections;           /* connections made (either side opened them) */
    uint64_t sleeps;                /* idle waits that slept in poll(2) on the fabrics'
                                       descriptors (core_block, DCFA_SLEEP_US) */
} core_stats;
extern core_stats core_st;
size_t core_footprint(int *nconns);
/* the ring's shape the tunables give and the memory per connected peer (mpiinfo) */
void core_ring_describe(char *buf, size_t len);
/* DCFA_CMA_MIN resolved on this machine, with the probe's timings (mpiinfo) */
void core_copy_describe(char *buf, size_t len);
/* "dcfa-stats" line (counters, per-fabric connections and bytes) and one
 * "dcfa-conn" line per connected peer to stderr (DCFA_STATS=1) */
void core_stats_report(int rank);
void core_dump_pending(void);       /* the hang report: pending operations to stderr */

#endif
