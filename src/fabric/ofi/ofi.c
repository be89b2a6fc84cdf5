/* ofi fabric: connections over libfabric (FI_EP_RDM endpoints with FI_MSG
 * and FI_RMA), for processes on other nodes, or on this one when forced
 * (DCFA_FABRICS=ofi). The provider is libfabric's choice (FI_PROVIDER, or
 * DCFA_OFI_PROVIDER with '+' for ';'); docs/fabric.md says what each
 * protocol needs from it.
 *
 * The receive ring is the same as on shm, in the receiver's memory: each
 * side allocates and registers, per peer it talks to, a receive ring (remote
 * write) and a staging ring of the same shape (local). The core builds a
 * packet in the staging block for its ring position; tx_post writes the
 * block, minus its first word (the tail marker), into the same block of the
 * peer's ring with fi_writemsg carrying remote CQ data (connection id, block)
 * (FI_INJECT when it is small). The receiver's poll reads the remote
 * completion, which libfabric gives only once the data is in place, and
 * stores the block's marker itself: so the core polls its ring exactly as on
 * shm, and no ordering between writes is needed. A block is written again
 * only after the receiver consumed it (credits), so the staging copy stays
 * intact until then.
 *
 * Connections: each side sends the other one handshake message (its ring's
 * address and key, and the id to put in the CQ data); it is ready to write
 * once it has the peer's. The first handshake from a peer we have no
 * connection to is handed to the core (incoming), which makes our side.
 * Bulk transfers are fi_readmsg / fi_writemsg (delivery complete) of at most
 * iov_limit local pieces each, reported through the caller's fab_op from
 * poll. Operations the provider cannot take now (-FI_EAGAIN) wait in a queue
 * that poll retries. Manual-progress providers (tcp) move data only inside
 * fi_cq_read, which the core's progress calls through poll. */
#include "fabric/fabric.h"
#include "fabric/regcache.h"
#include "util/util.h"

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OFI_API           FI_VERSION(1, 11)
#define OFI_MAGIC         0x44434641u /* "DCFA" */
#define OFI_HELLO_VERSION 1
#define OFI_NRECV         16 /* handshake receives kept posted */
#define OFI_IOV           8  /* local pieces per bulk operation, at most */

enum { OFI_CTX_RECV = 1, OFI_CTX_RING, OFI_CTX_HELLO, OFI_CTX_PIECE, OFI_CTX_TAIL, OFI_CTX_SRQ,
       OFI_CTX_SLOT };

/* Tail-marked ring writes (ofi.tail, docs/fabric.md): the write carries the packet's
 * blocks whole, its first word a lead word naming the blocks, its last word this tail */
#define OFI_LEAD_FLAG 0x80000000u
#define OFI_TAIL_WORD 0xffffffffu
#define OFI_HELLO_TAIL 1u /* hello flags: I look for tail-marked writes in my rings */
#define OFI_HELLO_SRQ  2u /* hello flags: I have no rings, send me packets as messages */
/* shared receive queue: a packet's first word (the core's mark) names the receiver's
 * connection, with this flag, which a handshake's first word (OFI_MAGIC) lacks */
#define OFI_PKT_FLAG 0x80000000u
#define OFI_PKT_MIN  32u /* the core's header: no packet is shorter */
#define OFI_LANE_MAGIC 0x4c414e45u /* "LANE": a lane offer's first word */

/* a receiver offers a busy peer a lane: a ring of its own, written one-sidedly */
typedef struct ofi_lane_offer {
    uint32_t magic;
    uint32_t conn_id; /* the peer's id of the connection (its CQ data / packet word) */
    uint64_t addr, key;
    uint32_t nblocks; /* blocks of the lane before its extension (DCFA_OFI_LANE_BLOCKS) */
    uint32_t pad;
} ofi_lane_offer;

/* every context given to libfabric starts with its fi_context2 (FI_CONTEXT2 mode) */
typedef struct ofi_ctx {
    struct fi_context2 fi;
    int kind;
} ofi_ctx;

/* the connection handshake, one each way; 48 bytes so it fits an inject */
typedef struct ofi_hello {
    uint32_t magic;
    uint16_t version;
    uint16_t flags;   /* OFI_HELLO_TAIL */
    int32_t rank;     /* the sender: its rank in its job (job below) */
    uint32_t conn_id; /* the sender's id of the connection: CQ data of writes into its ring */
    uint32_t nblocks;
    uint32_t block_size;
    uint64_t ring_addr; /* the sender's receive ring for the receiver (address as the provider wants
                           it) */
    uint64_t ring_key;
    uint64_t job; /* hash of the sender's job id (fab_job_hash) */
} ofi_hello;
_Static_assert(sizeof(ofi_hello) == 48, "handshake is 48 bytes");

typedef struct ofi_recv {
    ofi_ctx ctx;
    ofi_hello msg;
} ofi_recv;

/* Shared receive queue (ofi.srq, docs/fabric.md): receive buffers posted with FI_MULTI_RECV
 * take the messages of every peer one after the other; a buffer is posted again once the
 * provider released it (FI_MULTI_RECV) and the core consumed every packet in it */
typedef struct ofi_rxbuf {
    ofi_ctx ctx;
    uint8_t *mem;
    unsigned refs; /* packets in it not consumed yet */
    int posted;
} ofi_rxbuf;

/* an arrived packet waiting for the core, in its connection's queue */
typedef struct ofi_rxe {
    struct ofi_rxe *next;
    uint8_t *pkt;
    ofi_rxbuf *buf; /* NULL: pkt is a copy of its own (it arrived misaligned) */
} ofi_rxe;

/* a send buffer of the largest packet's size, shared by all connections */
typedef struct ofi_slot {
    ofi_ctx ctx;
    struct ofi_slot *next; /* in ofi.slot_free */
    uint8_t *mem;
    struct fab_conn *c;
    uint32_t len;
    uint32_t pos;  /* a lane write: the packet's ring position */
    int lane;      /* 1: written into the peer's lane, 0: sent into its shared queue */
    util_qnode qn; /* in ofi.tx_waiting while the provider says EAGAIN */
} ofi_slot;

struct fab_conn {
    ofi_ctx ring_ctx; /* context of the ring writes */
    ofi_ctx hello_ctx;
    ofi_ctx tail_ctx; /* of tail-marked ring writes, which report only errors */
    int peer;
    uint32_t id; /* index in ofi.conns */
    void *ctx;   /* the core's */
    int hello_in, hello_out, ready;
    int closing; /* disconnect called */
    fi_addr_t addr;
    fi_addr_t addr_serve; /* the peer's bulk target endpoint (split), else addr */
    uint8_t *rx;        /* receive ring */
    uint32_t *rx_round; /* times each block of it was written */
    uint32_t rx_expect; /* tail-marked writes: the ring position looked at next */
    int tail_out;       /* the peer looks for tail-marked writes: mine to it may be */
    struct fid_mr *rx_mr;
    uint8_t *tx; /* staging ring, then my handshake */
    struct fid_mr *tx_mr;
    void *tx_desc;
    uint64_t peer_ring, peer_key;
    uint32_t peer_id;
    int writes;      /* ring writes and handshake in flight */
    uint32_t *defer; /* ring positions waiting for the provider (FIFO, nblocks) */
    uint32_t *defer_len;
    unsigned ndefer, defer_head;
    util_qnode deferred; /* in ofi.deferred while it has some */
    ofi_rxe *rxq, *rxq_tail; /* srq: arrived packets, oldest first */
    ofi_hello hello;         /* srq: my handshake (no staging ring to keep it in) */
    uint32_t rx_next;        /* srq: the ring position of the next packet to consume */
    uint32_t srq_in;         /* srq: packets that came through the shared queue */
    uint8_t *lane;           /* srq: the lane I offered the peer (ofi_lane_bytes), or NULL */
    struct fid_mr *lane_mr;
    uint32_t lane_k;         /* blocks of the lane packet rx_peek gave */
    int lane_out;            /* srq: the peer offered me a lane, at lane_addr / lane_key */
    uint32_t lane_out_nb;    /* its blocks (before the extension) */
    uint64_t lane_addr, lane_key;
    uint32_t tx_limit;       /* the core's credit limit: the peer consumed up to
                                tx_limit - nblocks (tx_credit) */
};

/* one posted piece of a bulk operation */
typedef struct ofi_piece {
    ofi_ctx ctx;
    fab_op *op;
    fab_conn *c;
    int write;
    int n;
    struct iovec iov[OFI_IOV];
    void *desc[OFI_IOV];
    fab_rentry *reg[OFI_IOV];
    struct fi_rma_iov rma;
    util_qnode qn; /* in ofi.pieces_waiting while the provider says EAGAIN */
} ofi_piece;

/* a bulk operation's state in its fab_op */
#define OFI_OP_PENDING(op) ((op)->priv[0])
#define OFI_OP_STATUS(op)  ((op)->priv[1])

static fab_conn ofi_gone; /* stands in ofi.conns[] for a closed connection */

static struct {
    fab_params p;
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_ep *ep;       /* handshakes and ring writes */
    struct fid_ep *ep_issue; /* bulk operations this process starts (split) */
    struct fid_ep *ep_serve; /* the target of the peers' bulk operations (split) */
    int split;               /* bulk traffic on endpoints of its own (see ofi_open) */
    struct fid_cq *cq;       /* ep's completions */
    struct fid_cq *cq_bulk;  /* ep_issue's and ep_serve's (split), read only while needed */
    int exposed;             /* registrations handed to the core (mem_reg) and not yet dereg'd */
    int pieces;              /* bulk pieces this process started that have not ended */
    unsigned bulk_tick;      /* poll passes: cq_bulk is read every 64th even when idle */
    struct fid_av *av;
    ofi_recv *recvs;
    struct fid_mr *recv_mr;
    fab_caps caps;
    char provider[64];
    size_t addrlen;
    char addr[128];
    char addr_serve[128];
    uint64_t mr_mode;
    size_t inject; /* ring writes up to this many bytes go as FI_INJECT */
    int tail;      /* my rings take tail-marked writes (see ofi_open) */
    size_t iov_limit;
    int cq_data_bits; /* bits of remote CQ data: 64 or 32 */
    uint64_t next_key;
    uint64_t job;
    fab_conn **conns; /* by id */
    uint32_t nconns, capconns;
    fab_conn **by_peer;
    int npeers;
    util_queue deferred; /* connections with ring writes waiting */
    util_queue pieces_waiting;
    util_queue hellos_waiting; /* (as connections, through ->deferred of a second list) */
    int outstanding;           /* ring writes and handshakes in flight, over all connections */
    int closing;               /* in close(): handshakes are not answered any more */
    fab_rcache rcache;
    ofi_hello *unknown;        /* handshakes of processes of other jobs not known yet (their
                                  communicator is still being built here): retried from poll */
    int nunknown, capunknown;
    const ofi_hello *incoming; /* the handshake being handed to the core */
    int incoming_lpid;         /* its sender */
    /* shared receive queue (DCFA_OFI_SRQ) */
    int srq;
    int multi;                 /* receive buffers take many messages (FI_MULTI_RECV) */
    size_t pkt_bytes;          /* a send buffer: the largest packet, rounded up to 64 */
    size_t eager_limit;        /* DCFA_OFI_EAGER_LIMIT (fab_caps.eager_limit) */
    ofi_rxbuf *rxbufs;
    int nrxbufs;
    size_t rxbuf_bytes;
    uint8_t *rxmem;
    struct fid_mr *rxmem_mr;
    ofi_slot *slots;
    int nslots;
    uint8_t *txmem;
    struct fid_mr *txmem_mr;
    ofi_slot *slot_free, *slot_cur; /* free ones; the one tx_block gave */
    util_queue tx_waiting;          /* slots the provider refused, in posting order */
    ofi_rxe *rxe_free;
    size_t nrxe;                    /* queue entries allocated */
    int tail_ok;                    /* the provider allows tail-marked writes (see ofi_open) */
    int nlanes;                     /* lanes offered */
    int wake;                       /* FAB_CAP_RX_WAKE: the core polls only woken connections */
    fab_conn **lane_conns;          /* wake: the connections with a lane I offered, not closing */
    int nlane_conns;
    uint32_t lane_nb;               /* blocks of a lane I offer (DCFA_OFI_LANE_BLOCKS) */
} ofi;

static size_t ofi_ring_bytes(void) { return (size_t)ofi.p.nblocks * ofi.p.block_size; }

/* ---- libfabric, loaded when the fabric is opened ---------------------------------------
 * libfabric is opened with dlopen at the first ofi_open (or probe), not linked: a job on one
 * node never loads it and its dozen dependencies, and Debian's libfabric pulls in
 * libinfinipath, whose constructor replaces the handlers of SIGTERM, SIGINT, SIGSEGV, SIGBUS,
 * SIGILL and SIGABRT with one that exits with status 1 (no core dump, no message, and the
 * library's own SIGTERM handling of a dead launcher never runs). IPATH_NO_BACKTRACE, set
 * before the load unless the user set it, turns that off. Only these six functions are
 * exported by libfabric; the rest of its API are inline calls through its objects. */
static struct {
    void *handle;
    int (*getinfo)(uint32_t, const char *, const char *, uint64_t, const struct fi_info *,
                   struct fi_info **);
    void (*freeinfo)(struct fi_info *);
    struct fi_info *(*dupinfo)(const struct fi_info *);
    int (*fabric)(struct fi_fabric_attr *, struct fid_fabric **, void *);
    const char *(*strerror)(int);
    uint32_t (*version)(void);
} ofi_lib;

static int ofi_lib_load(void)
{
    if (ofi_lib.handle)
        return UTIL_OK;
    setenv("IPATH_NO_BACKTRACE", "1", 0); /* (set already when open() runs in a thread) */
    void *h = dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        util_log("ofi: cannot load libfabric: %s", dlerror());
        return UTIL_ENOENT;
    }
    *(void **)&ofi_lib.getinfo = dlsym(h, "fi_getinfo");
    *(void **)&ofi_lib.freeinfo = dlsym(h, "fi_freeinfo");
    *(void **)&ofi_lib.dupinfo = dlsym(h, "fi_dupinfo");
    *(void **)&ofi_lib.fabric = dlsym(h, "fi_fabric");
    *(void **)&ofi_lib.strerror = dlsym(h, "fi_strerror");
    *(void **)&ofi_lib.version = dlsym(h, "fi_version");
    if (!ofi_lib.getinfo || !ofi_lib.freeinfo || !ofi_lib.dupinfo || !ofi_lib.fabric ||
        !ofi_lib.strerror || !ofi_lib.version) {
        util_log("ofi: libfabric.so.1 lacks one of fi_getinfo, fi_freeinfo, fi_dupinfo, "
                 "fi_fabric, fi_strerror, fi_version");
        dlclose(h);
        memset(&ofi_lib, 0, sizeof ofi_lib);
        return UTIL_ENOENT;
    }
    ofi_lib.handle = h; /* kept until the process ends: providers may keep threads */
    return UTIL_OK;
}

static const char *ofi_err(int rc) { return ofi_lib.strerror(rc < 0 ? -rc : rc); }

/* ---- memory registration --------------------------------------------------------- */

static int ofi_reg(void *buf, size_t len, uint64_t access, struct fid_mr **mr)
{
    uint64_t key = ofi.mr_mode & FI_MR_PROV_KEY ? 0 : ofi.next_key++;
    int rc = fi_mr_reg(ofi.domain, buf, len, access, 0, key, 0, mr, NULL);
    if (rc != 0) {
        util_log("ofi: cannot register %zu bytes at %p: %s", len, buf, ofi_err(rc));
        return UTIL_EIO;
    }
    if (ofi.mr_mode & FI_MR_ENDPOINT) {
        if ((rc = fi_mr_bind(*mr, &ofi.ep->fid, 0)) != 0 || (rc = fi_mr_enable(*mr)) != 0) {
            util_log("ofi: cannot bind a registration to the endpoint: %s", ofi_err(rc));
            fi_close(&(*mr)->fid);
            return UTIL_EIO;
        }
    }
    return UTIL_OK;
}

/* the address a peer passes for addr inside a registration starting at base */
static uint64_t ofi_raddr(const void *base, const void *addr)
{
    return ofi.mr_mode & FI_MR_VIRT_ADDR ? (uint64_t)(uintptr_t)addr
                                         : (uint64_t)((uintptr_t)addr - (uintptr_t)base);
}

static int ofi_rcache_reg(void *arg, fab_rentry *e)
{
    struct fid_mr *mr;
    int rc = ofi_reg((void *)e->start, e->end - e->start,
                     FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE, &mr);
    if (rc != UTIL_OK)
        return rc;
    e->mr = mr;
    e->key = fi_mr_key(mr);
    e->desc = fi_mr_desc(mr);
    return UTIL_OK;
}

static void ofi_rcache_dereg(void *arg, fab_rentry *e) { fi_close(&((struct fid_mr *)e->mr)->fid); }

static int ofi_mem_reg(const void *buf, size_t len, fab_mem *mem)
{
    fab_rentry *e = fab_rcache_get(&ofi.rcache, buf, len);
    if (!e)
        return UTIL_EIO;
    mem->addr = ofi_raddr((void *)e->start, buf);
    mem->key = e->key;
    mem->handle = e;
    ofi.exposed++;
    return UTIL_OK;
}

static void ofi_mem_dereg(fab_mem *mem)
{
    if (mem->handle) {
        fab_rcache_put(&ofi.rcache, mem->handle);
        ofi.exposed--;
    }
    mem->handle = NULL;
}

static void ofi_mem_release(const void *buf, size_t len)
{
    fab_rcache_release(&ofi.rcache, buf, len);
}

/* ---- opening ------------------------------------------------------------------------ */

static struct fi_info *ofi_getinfo(int *rc_out)
{
    struct fi_info *hints = ofi_lib.dupinfo(NULL), *info = NULL;
    if (!hints) {
        *rc_out = -FI_ENOMEM;
        return NULL;
    }
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG | FI_RMA;
    if (util_cfg.ofi_srq) {
        /* packets of one peer in the order it sent them, into buffers that take many */
        if (util_cfg.ofi_srq_buf > 0)
            hints->caps |= FI_MULTI_RECV;
        hints->tx_attr->msg_order = FI_ORDER_SAS;
        hints->rx_attr->msg_order = FI_ORDER_SAS;
    }
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->domain_attr->mr_mode =
        FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    /* bulk writes must be in the peer's memory before the DONE behind them */
    hints->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
    const char *prov = util_cfg.ofi_provider;
    if (prov && *prov) {
        char *p = strdup(prov);
        for (char *q = p; *q; q++)
            if (*q == '+')
                *q = ';';
        hints->fabric_attr->prov_name = p;
    }
    const char *iface = util_cfg.ofi_iface;
    /* a job of one node talks to itself: keep its traffic on the loopback interface */
    if ((!iface || !*iface) && ofi.p.local_nprocs > 0 && ofi.p.local_nprocs == ofi.p.nprocs)
        iface = "lo";
    if (iface && *iface)
        hints->domain_attr->name = strdup(iface);
    *rc_out = ofi_lib.getinfo(OFI_API, NULL, NULL, 0, hints, &info);
    ofi_lib.freeinfo(hints);
    return *rc_out == 0 ? info : NULL;
}

static int ofi_post_recv(ofi_recv *r)
{
    void *desc = ofi.recv_mr ? fi_mr_desc(ofi.recv_mr) : NULL;
    ssize_t rc;
    do {
        rc = fi_recv(ofi.ep, &r->msg, sizeof r->msg, desc, FI_ADDR_UNSPEC, &r->ctx);
        if (rc == -FI_EAGAIN)
            (void)fi_cq_read(ofi.cq, NULL, 0);
    } while (rc == -FI_EAGAIN);
    if (rc != 0)
        util_log("ofi: cannot post a receive: %s", ofi_err((int)rc));
    return rc == 0 ? UTIL_OK : UTIL_EIO;
}

static int ofi_srq_post(ofi_rxbuf *b)
{
    struct iovec iov = {b->mem, ofi.rxbuf_bytes};
    void *desc = ofi.rxmem_mr ? fi_mr_desc(ofi.rxmem_mr) : NULL;
    struct fi_msg msg = {.msg_iov = &iov,
                         .desc = &desc,
                         .iov_count = 1,
                         .addr = FI_ADDR_UNSPEC,
                         .context = &b->ctx};
    ssize_t rc;
    do {
        rc = fi_recvmsg(ofi.ep, &msg, ofi.multi ? FI_MULTI_RECV : 0);
        if (rc == -FI_EAGAIN)
            (void)fi_cq_read(ofi.cq, NULL, 0);
    } while (rc == -FI_EAGAIN);
    if (rc != 0) {
        util_log("ofi: cannot post a shared receive buffer: %s", ofi_err((int)rc));
        return UTIL_EIO;
    }
    b->posted = 1;
    return UTIL_OK;
}

/* the shared receive buffers (posted) and send buffers, each in one registered allocation */
static int ofi_srq_open(void)
{
    size_t two = 2 * ofi.pkt_bytes;
    ofi.rxbuf_bytes = util_cfg.ofi_srq_buf > two ? (util_cfg.ofi_srq_buf + 63) / 64 * 64 : two;
    ofi.multi = util_cfg.ofi_srq_buf > 0;
    if (!ofi.multi)
        ofi.rxbuf_bytes = ofi.pkt_bytes;
    ofi.nrxbufs = util_cfg.ofi_srq_bufs > 0 ? util_cfg.ofi_srq_bufs : 1;
    ofi.nslots = util_cfg.ofi_tx_slots > 0 ? util_cfg.ofi_tx_slots : 1;
    size_t rxlen = (size_t)ofi.nrxbufs * ofi.rxbuf_bytes, txlen = (size_t)ofi.nslots * ofi.pkt_bytes;
    if (posix_memalign((void **)&ofi.rxmem, 4096, rxlen) != 0 ||
        posix_memalign((void **)&ofi.txmem, 4096, txlen) != 0)
        return -FI_ENOMEM;
    if ((ofi.mr_mode & FI_MR_LOCAL) &&
        (ofi_reg(ofi.rxmem, rxlen, FI_RECV, &ofi.rxmem_mr) != UTIL_OK ||
         ofi_reg(ofi.txmem, txlen, FI_SEND, &ofi.txmem_mr) != UTIL_OK))
        return -FI_EIO;
    ofi.slots = util_calloc((size_t)ofi.nslots, sizeof *ofi.slots);
    for (int i = ofi.nslots - 1; i >= 0; i--) {
        ofi_slot *sl = &ofi.slots[i];
        sl->ctx.kind = OFI_CTX_SLOT;
        sl->mem = ofi.txmem + (size_t)i * ofi.pkt_bytes;
        sl->next = ofi.slot_free;
        ofi.slot_free = sl;
    }
    ofi.rxbufs = util_calloc((size_t)ofi.nrxbufs, sizeof *ofi.rxbufs);
    for (int i = 0; i < ofi.nrxbufs; i++) {
        ofi.rxbufs[i].ctx.kind = OFI_CTX_SRQ;
        ofi.rxbufs[i].mem = ofi.rxmem + (size_t)i * ofi.rxbuf_bytes;
        if (ofi_srq_post(&ofi.rxbufs[i]) != UTIL_OK)
            return -FI_EIO;
    }
    return 0;
}

static void ofi_teardown(void)
{
    if (ofi.ep)
        fi_close(&ofi.ep->fid);
    if (ofi.ep_issue)
        fi_close(&ofi.ep_issue->fid);
    if (ofi.ep_serve)
        fi_close(&ofi.ep_serve->fid);
    if (ofi.recv_mr)
        fi_close(&ofi.recv_mr->fid);
    if (ofi.rxmem_mr)
        fi_close(&ofi.rxmem_mr->fid);
    if (ofi.txmem_mr)
        fi_close(&ofi.txmem_mr->fid);
    if (ofi.av)
        fi_close(&ofi.av->fid);
    if (ofi.cq)
        fi_close(&ofi.cq->fid);
    if (ofi.cq_bulk)
        fi_close(&ofi.cq_bulk->fid);
    if (ofi.domain)
        fi_close(&ofi.domain->fid);
    if (ofi.fabric)
        fi_close(&ofi.fabric->fid);
    if (ofi.info)
        ofi_lib.freeinfo(ofi.info);
    free(ofi.recvs);
    free(ofi.rxbufs);
    free(ofi.rxmem);
    free(ofi.slots);
    free(ofi.txmem);
    while (ofi.rxe_free) {
        ofi_rxe *e = ofi.rxe_free;
        ofi.rxe_free = e->next;
        free(e);
    }
    free(ofi.conns);
    free(ofi.by_peer);
    free(ofi.unknown);
    free(ofi.lane_conns);
    memset(&ofi, 0, sizeof ofi);
}

/* appends sep and an endpoint address (ofi.addrlen bytes) in hex to the card at *off */
static int ofi_card_add(char *card, size_t cardlen, size_t *off, char sep, const char *addr)
{
    if (*off + 2 + 2 * ofi.addrlen >= cardlen)
        return UTIL_EINVAL;
    card[(*off)++] = sep;
    for (size_t i = 0; i < ofi.addrlen; i++)
        *off += (size_t)snprintf(card + *off, cardlen - *off, "%02x", (unsigned char)addr[i]);
    return UTIL_OK;
}

/* packets as large as ofi's own eager limit (the core's limits are for rings in memory;
 * across a network a rendezvous costs a round trip: docs/fabric.md) */
static size_t ofi_packet_max(const fab_params *p)
{
    size_t block = p->block_size ? p->block_size : 64;
    if (util_cfg.ofi_eager_limit > p->packet_max)
        return (util_cfg.ofi_eager_limit + block - 1) / block * block;
    return p->packet_max;
}

/* rxm sends a message above its eager limit (by default its buffer size, 16 KiB) in segments
 * or by a rendezvous of its own, whose completion can come after that of a later packet to
 * the same peer: the queue's packets must stay eager in rxm. With tcp below it, rxm takes
 * larger eager messages without larger buffers (its env, read when libfabric initialises;
 * every process sets the same, which rxm checks at connect). IPATH_NO_BACKTRACE: see
 * ofi_lib_load. Neither is replaced when the user set it. */
void fab_ofi_prepare(const fab_params *p)
{
    char rxm_eager[32];
    snprintf(rxm_eager, sizeof rxm_eager, "%zu", ofi_packet_max(p));
    setenv("FI_OFI_RXM_EAGER_LIMIT", rxm_eager, 0);
    setenv("IPATH_NO_BACKTRACE", "1", 0);
}

/* the first entry of directory dir other than . and .., in name[len]; 0 when none */
static int ofi_dir_entry(const char *dir, char *name, size_t len)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    int found = 0;
    while (!found && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(name, len, "%s/%s", dir, e->d_name);
            found = 1;
        }
    closedir(d);
    return found;
}

/* Across hosts, ofi is worth its open (300-500 ms with Debian's libfabric, docs/bench.md)
 * where one of its providers drives hardware: an RDMA device (verbs over InfiniBand, RoCE,
 * iWARP; EFA and usNIC list themselves there too), HPE Slingshot (cxi), Omni-Path (psm2,
 * opx). Without any, its providers move bytes through the kernel's TCP or UDP, as the sock
 * fabric does over the connections the daemons make, which serve at once. A provider the user
 * names (FI_PROVIDER, DCFA_OFI_PROVIDER) is taken as asked for. */
int fab_ofi_wanted(char *why, size_t whylen)
{
    char dev[300] = "";
    const char *prov = util_cfg.ofi_provider && *util_cfg.ofi_provider ? util_cfg.ofi_provider
                                                                       : getenv("FI_PROVIDER");
    if (util_cfg.ofi_auto >= 0) {
        snprintf(why, whylen, "DCFA_OFI_AUTO=%d", util_cfg.ofi_auto);
        return util_cfg.ofi_auto > 0;
    }
    if (prov && *prov) {
        snprintf(why, whylen, "a provider named: %s", prov);
        return 1;
    }
    if (ofi_dir_entry("/sys/class/infiniband", dev, sizeof dev) ||
        ofi_dir_entry("/sys/class/cxi", dev, sizeof dev) || access("/dev/hfi1_0", F_OK) == 0) {
        snprintf(why, whylen, "RDMA hardware: %s", dev[0] ? dev : "/dev/hfi1_0");
        return 1;
    }
    snprintf(why, whylen, "no RDMA hardware (/sys/class/infiniband, /sys/class/cxi, /dev/hfi1_0)");
    return 0;
}

/* May run in a thread of its own (the core's late open, DCFA_OFI_LATE) while the main thread
 * uses the other fabrics: it touches only this fabric's state and libfabric, and the
 * environment only where fab_ofi_prepare has set the same already (setenv of a set name
 * with overwrite 0 changes nothing). */
static int ofi_open(const fab_params *p, char *card, size_t cardlen)
{
    memset(&ofi, 0, sizeof ofi);
    ofi.p = *p;
    size_t block = p->block_size ? p->block_size : 64;
    ofi.eager_limit = util_cfg.ofi_eager_limit;
    ofi.p.packet_max = ofi_packet_max(p);
    fab_ofi_prepare(p);
    util_queue_init(&ofi.deferred);
    util_queue_init(&ofi.pieces_waiting);
    util_queue_init(&ofi.hellos_waiting);
    util_queue_init(&ofi.tx_waiting);
    int rc = ofi_lib_load();
    if (rc != UTIL_OK) {
        memset(&ofi, 0, sizeof ofi);
        return rc;
    }
    ofi.info = ofi_getinfo(&rc);
    if (!ofi.info) {
        util_log("ofi: no libfabric provider offers reliable datagram endpoints (FI_EP_RDM) with "
                 "FI_MSG and FI_RMA%s%s%s%s: %s",
                 *util_cfg.ofi_provider ? ", provider " : "", util_cfg.ofi_provider,
                 *util_cfg.ofi_iface ? ", interface " : "", util_cfg.ofi_iface, ofi_err(rc));
        memset(&ofi, 0, sizeof ofi);
        return UTIL_ENOENT;
    }
    struct fi_info *info = ofi.info;
    snprintf(ofi.provider, sizeof ofi.provider, "%s", info->fabric_attr->prov_name);
    const char *rxm_set = getenv("FI_OFI_RXM_EAGER_LIMIT");
    if (ofi.srq && strstr(ofi.provider, "ofi_rxm") && rxm_set &&
        strtoull(rxm_set, NULL, 0) < ofi.p.packet_max) {
        util_log("ofi: FI_OFI_RXM_EAGER_LIMIT=%s is below the largest packet, %zu bytes: rxm "
                 "would reorder the packets to a peer; unset it or lower DCFA_OFI_EAGER_LIMIT",
                 rxm_set, ofi.p.packet_max);
        ofi_teardown();
        return UTIL_EINVAL;
    }
    ofi.srq = util_cfg.ofi_srq;
    if (!ofi.srq && info->domain_attr->cq_data_size < 4) {
        util_log(
            "ofi: provider %s carries no remote CQ data (%zu bytes), which the ring writes need; "
            "choose another with DCFA_OFI_PROVIDER or FI_PROVIDER",
            ofi.provider, info->domain_attr->cq_data_size);
        ofi_teardown();
        return UTIL_ENOENT;
    }
    if (ofi.srq && (info->domain_attr->mr_mode & FI_MR_LOCAL) &&
        info->tx_attr->inject_size < sizeof(ofi_hello)) {
        util_log("ofi: provider %s needs registered send buffers and injects %zu bytes: the "
                 "shared receive queue's handshake cannot go; set DCFA_OFI_SRQ=0",
                 ofi.provider, info->tx_attr->inject_size);
        ofi_teardown();
        return UTIL_ENOENT;
    }
    ofi.cq_data_bits = info->domain_attr->cq_data_size >= 8 ? 64 : 32;
    /* rings across a network hold more: a window of 8-16 KiB messages needs more than the
     * 32 KiB a ring between processes of a node has (docs/fabric.md) */
    unsigned nb = p->nblocks;
    size_t kmax = (ofi.p.packet_max + block - 1) / block; /* the largest packet's blocks */
    while ((nb < (unsigned)util_cfg.ofi_max_credit || nb < 2 * kmax) && nb < (1u << 20))
        nb *= 2;
    ofi.p.nblocks = nb;
    /* a lane: the largest power of two of blocks within DCFA_OFI_LANE_BLOCKS and the ring */
    ofi.lane_nb = 1;
    while (ofi.lane_nb * 2 <= (unsigned)util_cfg.ofi_lane_blocks && ofi.lane_nb * 2 <= nb)
        ofi.lane_nb *= 2;
    if (ofi.cq_data_bits == 32 && ofi.p.nblocks > 0xffff) {
        util_log("ofi: provider %s has 4 bytes of CQ data: at most 65535 ring blocks",
                 ofi.provider);
        ofi_teardown();
        return UTIL_EINVAL;
    }
    ofi.mr_mode = info->domain_attr->mr_mode;
    ofi.next_key = 1;
    ofi.iov_limit = info->tx_attr->iov_limit < OFI_IOV ? info->tx_attr->iov_limit : OFI_IOV;
    if (ofi.iov_limit < 1)
        ofi.iov_limit = 1;
    size_t inject = 32 - sizeof(fab_mark) + p->inline_limit;
    ofi.inject = inject < info->tx_attr->inject_size ? inject : info->tx_attr->inject_size;
    /* tail-marked ring writes need a provider that applies a write's bytes in order and
     * only from inside this process's own calls: tcp (a byte stream read by manual
     * progress); others get a write with CQ data each (docs/fabric.md) */
    ofi.tail_ok = util_cfg.ofi_tail && !strncmp(ofi.provider, "tcp", 3) &&
                  info->domain_attr->data_progress == FI_PROGRESS_MANUAL;
    ofi.tail = !ofi.srq && ofi.tail_ok;
    ofi.wake = ofi.srq && util_cfg.ofi_wake && p->up && p->up->wake;
    ofi.job = fab_job_hash(p->job_id);
    struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_DATA, .size = 4096};
    struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
    const char *step = "fi_fabric";
    if ((rc = ofi_lib.fabric(info->fabric_attr, &ofi.fabric, NULL)) != 0)
        goto fail;
    step = "fi_domain";
    if ((rc = fi_domain(ofi.fabric, info, &ofi.domain, NULL)) != 0)
        goto fail;
    step = "fi_cq_open";
    if ((rc = fi_cq_open(ofi.domain, &cq_attr, &ofi.cq, NULL)) != 0)
        goto fail;
    step = "fi_av_open";
    if ((rc = fi_av_open(ofi.domain, &av_attr, &ofi.av, NULL)) != 0)
        goto fail;
    step = "fi_endpoint";
    if ((rc = fi_endpoint(ofi.domain, info, &ofi.ep, NULL)) != 0)
        goto fail;
    step = "fi_ep_bind";
    if ((rc = fi_ep_bind(ofi.ep, &ofi.cq->fid, FI_TRANSMIT | FI_SELECTIVE_COMPLETION)) != 0 ||
        (rc = fi_ep_bind(ofi.ep, &ofi.cq->fid, FI_RECV)) != 0 ||
        (rc = fi_ep_bind(ofi.ep, &ofi.av->fid, 0)) != 0)
        goto fail;
    if (ofi.srq) {
        /* a buffer with less room than the largest packet goes back to us (FI_MULTI_RECV) */
        size_t pmax = ofi.p.packet_max ? ofi.p.packet_max : p->block_size;
        ofi.pkt_bytes = (pmax + p->block_size - 1) / p->block_size * p->block_size;
        size_t min = ofi.pkt_bytes;
        step = "fi_setopt (FI_OPT_MIN_MULTI_RECV)";
        if ((rc = fi_setopt(&ofi.ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &min,
                            sizeof min)) != 0)
            goto fail;
    }
    step = "fi_enable";
    if ((rc = fi_enable(ofi.ep)) != 0)
        goto fail;
    step = "fi_getname";
    ofi.addrlen = sizeof ofi.addr;
    if ((rc = fi_getname(&ofi.ep->fid, ofi.addr, &ofi.addrlen)) != 0)
        goto fail;
    /* Bulk traffic on two endpoints of its own: reads and writes this process starts go
     * out of ep_issue to the peer's ep_serve. Providers that queue an endpoint's outgoing
     * traffic in one FIFO (tcp: one socket per endpoint pair) would otherwise put a ring
     * packet or a read request behind megabytes of another transfer's read response, and
     * transfers both ways would take turns (docs/fabric.md). Only with DCFA_OFI_SPLIT=1 (over
     * tcp between hosts one endpoint measured faster both ways), and not with
     * FI_MR_ENDPOINT, where a registration belongs to one endpoint. */
    ofi.split = util_cfg.ofi_split && !(ofi.mr_mode & FI_MR_ENDPOINT);
    /* ...with a completion queue of their own: reading a CQ progresses every endpoint bound
     * to it (tcp: a poll() of each endpoint's sockets), which a small message's path should
     * not pay for while no transfer is under way (ofi_poll) */
    step = "fi_cq_open (bulk)";
    if (ofi.split && (rc = fi_cq_open(ofi.domain, &cq_attr, &ofi.cq_bulk, NULL)) != 0)
        goto fail;
    for (int k = 0; ofi.split && k < 2; k++) {
        struct fid_ep **e = k == 0 ? &ofi.ep_issue : &ofi.ep_serve;
        step = "fi_endpoint (bulk)";
        if ((rc = fi_endpoint(ofi.domain, info, e, NULL)) != 0)
            goto fail;
        step = "fi_ep_bind (bulk)";
        if ((rc = fi_ep_bind(*e, &ofi.cq_bulk->fid, FI_TRANSMIT | FI_SELECTIVE_COMPLETION)) !=
                0 ||
            (rc = fi_ep_bind(*e, &ofi.cq_bulk->fid, FI_RECV)) != 0 ||
            (rc = fi_ep_bind(*e, &ofi.av->fid, 0)) != 0)
            goto fail;
        step = "fi_enable (bulk)";
        if ((rc = fi_enable(*e)) != 0)
            goto fail;
    }
    if (ofi.split) {
        size_t len = sizeof ofi.addr_serve;
        step = "fi_getname (bulk)";
        if ((rc = fi_getname(&ofi.ep_serve->fid, ofi.addr_serve, &len)) != 0)
            goto fail;
        if (len != ofi.addrlen) {
            rc = -FI_EINVAL;
            goto fail;
        }
    }
    fab_rcache_init(&ofi.rcache, util_cfg.mr_cache, ofi_rcache_reg, ofi_rcache_dereg, NULL);
    if (ofi.srq) {
        step = "setting up the shared receive queue";
        if ((rc = ofi_srq_open()) != 0)
            goto fail;
    } else {
        ofi.recvs = util_calloc(OFI_NRECV, sizeof *ofi.recvs);
        if ((ofi.mr_mode & FI_MR_LOCAL) &&
            ofi_reg(ofi.recvs, OFI_NRECV * sizeof *ofi.recvs, FI_RECV, &ofi.recv_mr) != UTIL_OK) {
            step = "registering the receive buffers";
            rc = -FI_EIO;
            goto fail;
        }
        for (int i = 0; i < OFI_NRECV; i++) {
            ofi.recvs[i].ctx.kind = OFI_CTX_RECV;
            if (ofi_post_recv(&ofi.recvs[i]) != UTIL_OK) {
                step = "fi_recv";
                rc = -FI_EIO;
                goto fail;
            }
        }
    }
    ofi.npeers = p->nprocs;
    ofi.by_peer = util_calloc((size_t)p->nprocs, sizeof *ofi.by_peer);
    /* packets through the shared receive queue, or written into rings whose tails this
     * fabric sets (rx_free clears them); lanes need the core's credit (tx_credit); one-sided
     * access to registered memory over the network */
    ofi.caps = (fab_caps){
        .provider = ofi.provider,
        .flags = (ofi.srq ? FAB_CAP_RX_QUEUE : FAB_CAP_RX_FREE) | (ofi.wake ? FAB_CAP_RX_WAKE : 0) |
                 FAB_CAP_TX_CREDIT | FAB_CAP_RMA |
                 (info->domain_attr->data_progress == FI_PROGRESS_AUTO ? FAB_CAP_RMA_PASSIVE : 0),
        .priority = 50,
        .inline_limit =
            ofi.inject > 32 - sizeof(fab_mark) ? ofi.inject - (32 - sizeof(fab_mark)) : 0,
        .eager_limit = ofi.eager_limit,
        .max_bulk = info->ep_attr->max_msg_size < ((size_t)1 << 30) ? info->ep_attr->max_msg_size
                                                                    : (size_t)1 << 30,
        .poll_interval = 1};
    /* the card: ofi:<provider, ';' as '+'>:<endpoint address in hex>[.<bulk endpoint's>] */
    size_t off = (size_t)snprintf(card, cardlen, "ofi:");
    for (const char *s = ofi.provider; *s && off + 1 < cardlen; s++)
        card[off++] = *s == ';' ? '+' : *s;
    if (ofi_card_add(card, cardlen, &off, ':', ofi.addr) != UTIL_OK ||
        (ofi.split && ofi_card_add(card, cardlen, &off, '.', ofi.addr_serve) != UTIL_OK)) {
        util_log("ofi: the endpoint addresses (%zu bytes each) do not fit in a card", ofi.addrlen);
        ofi_teardown();
        return UTIL_EINVAL;
    }
    return UTIL_OK;
fail:
    util_log("ofi: %s failed for provider %s: %s", step, ofi.provider, ofi_err(rc));
    ofi_teardown();
    return UTIL_EIO;
}

static const fab_caps *ofi_caps(void) { return &ofi.caps; }

/* every connection's rings have DCFA_OFI_MAX_CREDIT blocks (the handshake checks both ends) */
static unsigned ofi_ring_blocks(const char *peer_card) { return ofi.p.nblocks; }

static int ofi_hex_decode(const char *hex, size_t hexlen, char *addr, size_t *addrlen)
{
    size_t n = hexlen / 2;
    if (hexlen != 2 * ofi.addrlen || n > *addrlen)
        return UTIL_EINVAL;
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1)
            return UTIL_EINVAL;
        addr[i] = (char)v;
    }
    *addrlen = n;
    return UTIL_OK;
}

/* the card's provider part, and its addresses decoded: "ofi:<prov>:<hex>[.<hex>]", the
 * second the bulk target endpoint of a split process (serve NULL: only the first) */
static int ofi_card_parse2(const char *card, char *addr, size_t *addrlen, char *serve,
                           size_t *servelen, int *has_serve)
{
    if (strncmp(card, "ofi:", 4) != 0)
        return UTIL_EINVAL;
    const char *prov = card + 4;
    const char *colon = strchr(prov, ':');
    if (!colon || (size_t)(colon - prov) != strlen(ofi.provider))
        return UTIL_EINVAL;
    for (size_t i = 0; prov + i < colon; i++)
        if (prov[i] != (ofi.provider[i] == ';' ? '+' : ofi.provider[i]))
            return UTIL_EINVAL;
    const char *hex = colon + 1;
    const char *dot = strchr(hex, '.');
    if (ofi_hex_decode(hex, dot ? (size_t)(dot - hex) : strlen(hex), addr, addrlen) != UTIL_OK)
        return UTIL_EINVAL;
    *has_serve = 0;
    if (dot && serve) {
        if (ofi_hex_decode(dot + 1, strlen(dot + 1), serve, servelen) != UTIL_OK)
            return UTIL_EINVAL;
        *has_serve = 1;
    }
    return UTIL_OK;
}

static int ofi_card_parse(const char *card, char *addr, size_t *addrlen)
{
    int has_serve;
    return ofi_card_parse2(card, addr, addrlen, NULL, NULL, &has_serve);
}

/* the same provider, and, when both addresses are IPv4 (tcp, sockets, udp), the peer's on a
 * network of this host (util_net_reaches): two hosts on networks that cannot reach each
 * other are not connected over a route no packet takes (docs/gateway.md); other address
 * formats reach every peer of the provider */
static int ofi_reachable(const char *peer_card)
{
    char addr[128];
    size_t len = sizeof addr;
    if (ofi_card_parse(peer_card, addr, &len) != UTIL_OK)
        return 0;
    struct sockaddr_in mine, peer;
    if (len != sizeof peer || ofi.addrlen != sizeof mine)
        return 1;
    memcpy(&mine, ofi.addr, sizeof mine);
    memcpy(&peer, addr, sizeof peer);
    if (mine.sin_family != AF_INET || peer.sin_family != AF_INET)
        return 1;
    return util_net_reaches(ntohl(peer.sin_addr.s_addr));
}

/* ---- connections ------------------------------------------------------------------- */

static uint64_t ofi_cq_data(uint32_t conn_id, uint32_t block)
{
    return ofi.cq_data_bits == 64 ? ((uint64_t)conn_id << 32) | block
                                  : ((uint64_t)conn_id << 16) | block;
}

/* the handshake, after the staging ring */
static ofi_hello *ofi_hello_out(fab_conn *c)
{
    return ofi.srq ? &c->hello : (ofi_hello *)(c->tx + ofi_ring_bytes());
}

static ssize_t ofi_send_msg(fab_conn *c, ofi_hello *m, ofi_ctx *ctx)
{
    struct iovec iov = {m, sizeof *m};
    void *desc = c->tx_desc;
    struct fi_msg msg = {
        .msg_iov = &iov, .desc = &desc, .iov_count = 1, .addr = c->addr, .context = ctx};
    uint64_t flags = FI_COMPLETION | (sizeof *m <= ofi.info->tx_attr->inject_size ? FI_INJECT : 0);
    return fi_sendmsg(ofi.ep, &msg, flags);
}

static int ofi_send_hello(fab_conn *c)
{
    ssize_t rc = ofi_send_msg(c, ofi_hello_out(c), &c->hello_ctx);
    if (rc == -FI_EAGAIN)
        return UTIL_EAGAIN;
    if (rc != 0) {
        util_log("ofi: cannot send the connection handshake to %s: %s", util_proc(c->peer),
                 ofi_err((int)rc));
        return UTIL_EIO;
    }
    c->hello_out = 1;
    c->writes++;
    ofi.outstanding++;
    return UTIL_OK;
}

static void ofi_maybe_ready(fab_conn *c)
{
    if (c->ready || !c->hello_in || !c->hello_out)
        return;
    c->ready = 1;
    ofi.p.up->ready(c->ctx, UTIL_OK);
}

static void ofi_hello_apply(fab_conn *c, const ofi_hello *h)
{
    c->peer_ring = h->ring_addr;
    c->peer_key = h->ring_key;
    c->peer_id = h->conn_id;
    c->tail_out = (h->flags & OFI_HELLO_TAIL) != 0;
    c->hello_in = 1;
    ofi_maybe_ready(c);
}

static void ofi_rxe_done(fab_conn *c);

static void ofi_conn_unreg(fab_conn *c)
{
    if (c->lane_mr)
        fi_close(&c->lane_mr->fid);
    c->lane_mr = NULL;
    if (c->rx_mr)
        fi_close(&c->rx_mr->fid);
    if (c->tx_mr)
        fi_close(&c->tx_mr->fid);
    c->rx_mr = c->tx_mr = NULL;
}

static void ofi_conn_free(fab_conn *c)
{
    while (c->rxq)
        ofi_rxe_done(c);
    ofi_conn_unreg(c);
    free(c->lane);
    free(c->rx);
    free(c->tx);
    free(c->rx_round);
    free(c->defer);
    free(c->defer_len);
    free(c);
}

static void ofi_conn_forget(fab_conn *c)
{
    util_queue_remove(&c->deferred);
    fi_av_remove(ofi.av, &c->addr, 1, 0);
    if (c->addr_serve != c->addr)
        fi_av_remove(ofi.av, &c->addr_serve, 1, 0);
    ofi.conns[c->id] = &ofi_gone;
    ofi.by_peer[c->peer] = NULL;
}

/* without a shared receive queue: the connection's receive ring and staging ring */
static int ofi_conn_rings(fab_conn *c)
{
    size_t ring = ofi_ring_bytes();
    if (posix_memalign((void **)&c->rx, 4096, ring) != 0 ||
        posix_memalign((void **)&c->tx, 4096, ring + sizeof(ofi_hello)) != 0)
        return UTIL_ENOMEM;
    memset(c->rx, 0, ring);
    c->rx_round = util_calloc(ofi.p.nblocks, sizeof *c->rx_round);
    c->rx_expect = fab_ring_base(ofi.p.ring_start, ofi.p.nblocks);
    for (uint32_t b = 0; b < ofi.p.nblocks; b++) /* laps before the first (ring base) */
        c->rx_round[b] = c->rx_expect / ofi.p.nblocks;
    c->defer = util_calloc(ofi.p.nblocks, sizeof *c->defer);
    c->defer_len = util_calloc(ofi.p.nblocks, sizeof *c->defer_len);
    int rc;
    if ((rc = ofi_reg(c->rx, ring, FI_REMOTE_WRITE, &c->rx_mr)) != UTIL_OK ||
        (rc = ofi_reg(c->tx, ring + sizeof(ofi_hello), FI_WRITE | FI_SEND, &c->tx_mr)) != UTIL_OK)
        return rc;
    c->tx_desc = fi_mr_desc(c->tx_mr);
    return UTIL_OK;
}

static int ofi_connect(int peer, const char *peer_card, int passive, void *ctx, fab_conn **out,
                       void **rx)
{
    char addr[128], serve[128];
    size_t addrlen = sizeof addr, servelen = sizeof serve;
    int has_serve = 0;
    if (peer < 0 ||
        ofi_card_parse2(peer_card, addr, &addrlen, serve, &servelen, &has_serve) != UTIL_OK) {
        util_log("ofi: %s's card '%s' is not one of provider %s", util_proc(peer), peer_card,
                 ofi.provider);
        return UTIL_EINVAL;
    }
    fab_conn *c = util_calloc(1, sizeof *c);
    c->peer = peer;
    c->ctx = ctx;
    c->ring_ctx.kind = OFI_CTX_RING;
    c->hello_ctx.kind = OFI_CTX_HELLO;
    c->deferred.next = c->deferred.prev = &c->deferred;
    int rc = ofi.srq ? UTIL_OK : ofi_conn_rings(c);
    if (rc != UTIL_OK)
        goto fail;
    c->rx_next = fab_ring_base(ofi.p.ring_start, ofi.p.nblocks);
    if (fi_av_insert(ofi.av, addr, 1, &c->addr, 0, NULL) != 1) {
        util_log("ofi: cannot add %s's address to the address vector", util_proc(peer));
        rc = UTIL_EIO;
        goto fail;
    }
    /* a split peer is reached at its bulk target; one that is not at its only endpoint */
    c->addr_serve = c->addr;
    if (has_serve && fi_av_insert(ofi.av, serve, 1, &c->addr_serve, 0, NULL) != 1) {
        util_log("ofi: cannot add %s's bulk address to the address vector", util_proc(peer));
        fi_av_remove(ofi.av, &c->addr, 1, 0);
        rc = UTIL_EIO;
        goto fail;
    }
    if (ofi.nconns == ofi.capconns) {
        ofi.capconns = ofi.capconns ? 2 * ofi.capconns : 16;
        ofi.conns = util_realloc(ofi.conns, ofi.capconns * sizeof *ofi.conns);
    }
    if (ofi.cq_data_bits == 32 && ofi.nconns > 0xffff) {
        util_log("ofi: provider %s has 4 bytes of CQ data: at most 65536 connections",
                 ofi.provider);
        rc = UTIL_EINVAL;
        goto fail;
    }
    c->id = ofi.nconns++;
    ofi.conns[c->id] = c;
    if (peer >= ofi.npeers) {
        int n = ofi.npeers ? ofi.npeers : 8;
        while (n <= peer)
            n *= 2;
        ofi.by_peer = util_realloc(ofi.by_peer, (size_t)n * sizeof *ofi.by_peer);
        memset(ofi.by_peer + ofi.npeers, 0, (size_t)(n - ofi.npeers) * sizeof *ofi.by_peer);
        ofi.npeers = n;
    }
    ofi.by_peer[peer] = c;
    *ofi_hello_out(c) = (ofi_hello){.magic = OFI_MAGIC,
                                    .version = OFI_HELLO_VERSION,
                                    .flags = ofi.srq    ? OFI_HELLO_SRQ
                                             : ofi.tail ? OFI_HELLO_TAIL
                                                        : 0,
                                    .rank = ofi.p.self,
                                    .conn_id = c->id,
                                    .nblocks = ofi.p.nblocks,
                                    .block_size = (uint32_t)ofi.p.block_size,
                                    .ring_addr = c->rx ? ofi_raddr(c->rx, c->rx) : 0,
                                    .ring_key = c->rx_mr ? fi_mr_key(c->rx_mr) : 0,
                                    .job = ofi.job};
    *out = c;
    *rx = c->rx;
    rc = ofi_send_hello(c);
    if (rc == UTIL_EAGAIN) {
        util_queue_push(&ofi.hellos_waiting, &c->deferred);
    } else if (rc != UTIL_OK) {
        ofi_conn_forget(c);
        goto fail;
    }
    if (passive && ofi.incoming && ofi.incoming_lpid == peer)
        ofi_hello_apply(c, ofi.incoming);
    return UTIL_OK;
fail:
    ofi_conn_free(c);
    return rc;
}

/* Closing (MPI_Finalize, after the last barrier): connections stay until
 * close(), which waits for this process's writes and then for every process
 * of the job (params.fence) while a thread keeps progressing, so no process
 * closes its endpoint while a peer may still need it to (providers that
 * acknowledge in software: rxd; writes a peer never waited for: SYNC). */
static void ofi_lane_conn_drop(fab_conn *c)
{
    for (int i = 0; i < ofi.nlane_conns; i++)
        if (ofi.lane_conns[i] == c) {
            ofi.lane_conns[i] = ofi.lane_conns[--ofi.nlane_conns];
            return;
        }
}

static void ofi_disconnect(fab_conn *c)
{
    c->closing = 1;
    ofi_lane_conn_drop(c); /* the core forgets c's ctx now: no wake for it any more */
    while (c->rxq) /* what arrives from now on is dropped on arrival (ofi_srq_arrived) */
        ofi_rxe_done(c);
    /* a later connection to the same process (dynamic processes: connect after disconnect)
     * is a new one; this one's writes may still arrive, under its own id */
    if (c->peer < ofi.npeers && ofi.by_peer[c->peer] == c)
        ofi.by_peer[c->peer] = NULL;
}

/* ---- the ring ---------------------------------------------------------------------- */

static void *ofi_tx_block(fab_conn *c, uint32_t pos)
{
    if (ofi.srq) { /* a shared send buffer, kept until tx_post sends it */
        if (!ofi.slot_cur && (ofi.slot_cur = ofi.slot_free))
            ofi.slot_free = ofi.slot_cur->next;
        return ofi.slot_cur ? ofi.slot_cur->mem : NULL;
    }
    return c->tx + (size_t)(pos % ofi.p.nblocks) * ofi.p.block_size;
}

/* ---- the shared receive queue ----------------------------------------------------- */

static void ofi_slot_put(ofi_slot *sl)
{
    sl->c = NULL;
    sl->next = ofi.slot_free;
    ofi.slot_free = sl;
}

/* A packet goes as one message, padded to 8 bytes (packets follow each other in a receive
 * buffer: the next starts aligned). Inject when the provider copies it at once (the buffer
 * is free on return); else the buffer is freed by the send's completion. */
static int ofi_slot_send(ofi_slot *sl)
{
    struct iovec iov = {sl->mem, sl->len};
    void *desc = ofi.txmem_mr ? fi_mr_desc(ofi.txmem_mr) : NULL;
    int inject = sl->len <= ofi.info->tx_attr->inject_size;
    ssize_t rc;
    if (sl->lane) { /* the packet's blocks whole, at its position's block of the peer's lane */
        size_t off = (size_t)(sl->pos % sl->c->lane_out_nb) * ofi.p.block_size;
        struct fi_rma_iov rma = {sl->c->lane_addr + off, sl->len, sl->c->lane_key};
        struct fi_msg_rma msg = {.msg_iov = &iov,
                                 .desc = &desc,
                                 .iov_count = 1,
                                 .addr = sl->c->addr,
                                 .rma_iov = &rma,
                                 .rma_iov_count = 1,
                                 .context = &sl->ctx};
        rc = fi_writemsg(ofi.ep, &msg, inject ? FI_INJECT : FI_COMPLETION);
    } else {
        struct fi_msg msg = {.msg_iov = &iov,
                             .desc = &desc,
                             .iov_count = 1,
                             .addr = sl->c->addr,
                             .context = &sl->ctx};
        rc = fi_sendmsg(ofi.ep, &msg, inject ? FI_INJECT : FI_COMPLETION);
    }
    if (rc == -FI_EAGAIN)
        return UTIL_EAGAIN;
    if (rc != 0)
        util_die("ofi: sending a packet to %s failed: %s", util_proc(sl->c->peer),
                 ofi_err((int)rc));
    if (inject) {
        ofi_slot_put(sl);
    } else {
        sl->c->writes++;
        ofi.outstanding++;
    }
    return UTIL_OK;
}

static int ofi_tail_fits(uint32_t bytes, uint32_t *blocks);
static uint32_t ofi_lead_word(uint32_t pos, uint32_t blocks);

/* sends (or queues, behind packets the provider refused before: they keep every
 * connection's order) what slot sl holds */
static void ofi_slot_go(ofi_slot *sl)
{
    if (!util_queue_empty(&ofi.tx_waiting) || ofi_slot_send(sl) != UTIL_OK)
        util_queue_push(&ofi.tx_waiting, &sl->qn);
}

/* A packet goes into the peer's lane when it has offered one, the tail word fits in the
 * packet's last block (as ofi_post_ring's) and its blocks are ones the peer has consumed
 * (a lane has fewer blocks than the credit window: the packet must end within a lane's
 * length of what the peer last said it consumed), else into its shared queue. The receiver looks
 * into the lane first (ofi_rx_peek): a lane write posted before a send is applied before
 * the send is delivered (the provider's one byte stream, as for tail-marked rings). */
static void ofi_srq_tx_post(fab_conn *c, uint32_t pos, void *block, size_t bytes)
{
    ofi_slot *sl = ofi.slot_cur;
    if (!sl || block != sl->mem || bytes < OFI_PKT_MIN || bytes > ofi.pkt_bytes)
        util_die("ofi: a packet of %zu bytes posted outside the send buffer tx_block gave", bytes);
    ofi.slot_cur = NULL;
    uint32_t k;
    sl->c = c;
    sl->pos = pos;
    sl->lane = c->lane_out && ofi_tail_fits((uint32_t)bytes, &k) &&
               (int32_t)(c->tx_limit - ofi.p.nblocks + c->lane_out_nb - (pos + k)) >= 0;
    if (sl->lane) {
        sl->len = k * (uint32_t)ofi.p.block_size;
        *(uint32_t *)sl->mem = ofi_lead_word(pos, k);
        *(uint32_t *)(sl->mem + sl->len - sizeof(uint32_t)) = OFI_TAIL_WORD;
    } else {
        *(uint32_t *)sl->mem = OFI_PKT_FLAG | c->peer_id;
        sl->len = (uint32_t)((bytes + 7) & ~(size_t)7);
    }
    ofi_slot_go(sl);
}

/* a lane: DCFA_OFI_LANE_BLOCKS blocks, plus room for a packet that starts in its last
 * block (a packet at position p is written at block p % lane_nb and never wraps: no PAD is
 * needed) */
static size_t ofi_lane_bytes(void)
{
    return (size_t)ofi.lane_nb * ofi.p.block_size + ofi.pkt_bytes;
}

static void ofi_tx_credit(fab_conn *c, uint32_t limit) { c->tx_limit = limit; }

/* the peer sends much: offer it a lane, if the budget and a send buffer allow */
static void ofi_lane_offer_to(fab_conn *c)
{
    if (ofi.nlanes >= util_cfg.ofi_lanes || !ofi.slot_free || c->closing)
        return;
    size_t len = ofi_lane_bytes();
    if (posix_memalign((void **)&c->lane, 4096, len) != 0) {
        c->lane = NULL;
        return;
    }
    memset(c->lane, 0, len);
    if (ofi_reg(c->lane, len, FI_REMOTE_WRITE, &c->lane_mr) != UTIL_OK) {
        free(c->lane);
        c->lane = NULL;
        return;
    }
    ofi.nlanes++;
    if (ofi.wake) {
        if (!ofi.lane_conns)
            ofi.lane_conns = util_calloc((size_t)util_cfg.ofi_lanes, sizeof *ofi.lane_conns);
        ofi.lane_conns[ofi.nlane_conns++] = c;
    }
    ofi_slot *sl = ofi.slot_free;
    ofi.slot_free = sl->next;
    ofi_lane_offer m = {.magic = OFI_LANE_MAGIC,
                        .conn_id = c->peer_id,
                        .addr = ofi_raddr(c->lane, c->lane),
                        .key = fi_mr_key(c->lane_mr),
                        .nblocks = ofi.lane_nb};
    memcpy(sl->mem, &m, sizeof m);
    sl->c = c;
    sl->lane = 0;
    sl->len = sizeof m;
    ofi_slot_go(sl);
}

static void ofi_lane_taken(const uint8_t *buf)
{
    ofi_lane_offer m;
    memcpy(&m, buf, sizeof m);
    fab_conn *c = m.conn_id < ofi.nconns ? ofi.conns[m.conn_id] : NULL;
    if (c == &ofi_gone || (c && c->closing))
        return;
    if (!c)
        util_die("ofi: a lane offer names connection %u, which this process does not have",
                 m.conn_id);
    if (m.nblocks == 0 || m.nblocks > ofi.p.nblocks || (m.nblocks & (m.nblocks - 1)))
        util_die("ofi: a lane offer for connection %u has %u blocks: not a power of two of at "
                 "most the credit window's %u", m.conn_id, m.nblocks, ofi.p.nblocks);
    c->lane_out_nb = m.nblocks;
    c->lane_addr = m.addr;
    c->lane_key = m.key;
    c->lane_out = 1;
}

static void ofi_rxbuf_put(ofi_rxbuf *b)
{
    if (--b->refs == 0 && !b->posted && ofi.ep && !ofi.closing)
        (void)ofi_srq_post(b);
}

/* the oldest packet of c's queue is consumed: its entry and buffer space are free */
static void ofi_rxe_done(fab_conn *c)
{
    ofi_rxe *e = c->rxq;
    if (!(c->rxq = e->next))
        c->rxq_tail = NULL;
    if (e->buf)
        ofi_rxbuf_put(e->buf);
    else
        free(e->pkt);
    e->next = ofi.rxe_free;
    ofi.rxe_free = e;
}

/* the next packet: in my lane (complete once its tail is there, ofi_tail_scan), or the
 * oldest of the shared queue's. Only the packet at rx_next can have a lead word at its
 * block: credits keep every later one within a ring's length, and consumed blocks are
 * cleared (ofi_rx_free). */
static inline uint32_t ofi_lane_lead(fab_conn *c, uint8_t **at_out)
{
    uint32_t pos = c->rx_next;
    uint8_t *at = c->lane + (size_t)(pos % ofi.lane_nb) * ofi.p.block_size;
    uint32_t w = atomic_load_explicit((_Atomic uint32_t *)at, memory_order_acquire);
    *at_out = at;
    return (w & OFI_LEAD_FLAG) && (w & 0xffu) == (~(pos + 1) & 0xffu) ? w : 0;
}

/* wake: a lane gets no completion at its receiver, so each poll looks at the next position
 * of every lane (at most DCFA_OFI_LANES of them) and wakes the connection whose lane has a
 * lead word there (the core then peeks until the packet is whole) */
static void ofi_lane_wake(void)
{
    for (int i = 0; i < ofi.nlane_conns; i++) {
        fab_conn *c = ofi.lane_conns[i];
        uint8_t *at;
        if (ofi_lane_lead(c, &at))
            ofi.p.up->wake(c->ctx);
    }
}

/* the next packet (see ofi_lane_lead) */
static void *ofi_rx_peek(fab_conn *c)
{
    if (c->lane) {
        uint8_t *at;
        uint32_t w = ofi_lane_lead(c, &at);
        if (w) {
            uint32_t k = (w & ~OFI_LEAD_FLAG) >> 8;
            size_t bs = ofi.p.block_size;
            if (k == 0 || k * bs > ofi.pkt_bytes)
                util_die("malformed packet from %s: a lane packet of %u blocks", util_proc(c->peer),
                         k);
            if (at[k * bs - 1] == 0)
                return NULL; /* on its way */
            size_t want = ofi.p.up->packet_bytes ? ofi.p.up->packet_bytes(at) : k * bs - 4;
            if (want + sizeof(uint32_t) > k * bs || want <= (k - 1) * bs)
                util_die("malformed packet from %s: %u lane blocks, its header says %zu "
                         "bytes",
                         util_proc(c->peer), k, want);
            c->lane_k = k;
            return at;
        }
    }
    return c->rxq ? c->rxq->pkt : NULL;
}

static int ofi_hello_take(const ofi_hello *h);
static void ofi_hello_keep(const ofi_hello *h);

/* a message landed in shared receive buffer b: a handshake, or a packet for the queue of
 * the connection its first word names, checked to be whole */
static void ofi_srq_arrived(ofi_rxbuf *b, uint8_t *buf, size_t len)
{
    uint32_t w;
    if (len >= sizeof w)
        memcpy(&w, buf, sizeof w);
    if (len == sizeof(ofi_hello) && w == OFI_MAGIC) {
        ofi_hello h;
        memcpy(&h, buf, sizeof h);
        if (!ofi_hello_take(&h))
            ofi_hello_keep(&h);
        return;
    }
    if (len == sizeof(ofi_lane_offer) && w == OFI_LANE_MAGIC) {
        ofi_lane_taken(buf);
        return;
    }
    if (len < OFI_PKT_MIN || len > ofi.pkt_bytes || !(w & OFI_PKT_FLAG))
        util_die("ofi: a %zu-byte message is neither a connection handshake nor a packet "
                 "(first word 0x%x)", len, len >= sizeof w ? w : 0);
    uint32_t id = w & ~OFI_PKT_FLAG;
    fab_conn *c = id < ofi.nconns ? ofi.conns[id] : NULL;
    if (c == &ofi_gone || (c && c->closing))
        return; /* late traffic of a connection that ended here */
    if (!c)
        util_die("ofi: a packet names connection %u, which this process does not have", id);
    ofi_rxe *e = ofi.rxe_free;
    if (e)
        ofi.rxe_free = e->next;
    else {
        e = util_malloc(sizeof *e);
        ofi.nrxe++;
    }
    e->next = NULL;
    e->pkt = buf;
    e->buf = b;
    if ((uintptr_t)buf & 7) { /* the provider packed it misaligned: the core gets a copy */
        e->pkt = util_malloc(len);
        memcpy(e->pkt, buf, len);
        e->buf = NULL;
    } else {
        b->refs++;
    }
    size_t want = ofi.p.up->packet_bytes ? ofi.p.up->packet_bytes(e->pkt) : len;
    if (want > len || ((want + 7) & ~(size_t)7) != len)
        util_die("malformed packet from %s: %zu bytes arrived, its header says %zu",
                 util_proc(c->peer), len, want);
    if (c->rxq_tail)
        c->rxq_tail->next = e;
    else
        c->rxq = e;
    c->rxq_tail = e;
    if (ofi.wake)
        ofi.p.up->wake(c->ctx);
    if (++c->srq_in == (uint32_t)util_cfg.ofi_lane_after && ofi.tail_ok && !c->lane)
        ofi_lane_offer_to(c);
}

/* A tail-marked write (ofi.tail on the peer's side): the packet's blocks go whole, the
 * first word a lead word (the blocks, a flag, and a low byte that no mark of this position
 * has), the last word a tail, set in the staging copy here. The receiver finds the packet
 * by the lead word, and knows it complete once the tail is there (ofi_tail_scan). Such a
 * write asks for no completion on either side. Only for a packet that leaves its last
 * block's last word free. */
static int ofi_tail_fits(uint32_t bytes, uint32_t *blocks)
{
    size_t bs = ofi.p.block_size;
    uint32_t k = (uint32_t)((bytes + bs - 1) / bs);
    *blocks = k;
    return bytes + sizeof(uint32_t) <= k * bs;
}

static uint32_t ofi_lead_word(uint32_t pos, uint32_t blocks)
{
    return OFI_LEAD_FLAG | (blocks << 8) | (~(pos + 1) & 0xffu);
}

static int ofi_post_ring(fab_conn *c, uint32_t pos, uint32_t bytes)
{
    uint32_t block = pos % ofi.p.nblocks, k;
    int tail = c->tail_out && ofi_tail_fits(bytes, &k);
    size_t off = (size_t)block * ofi.p.block_size + (tail ? 0 : sizeof(fab_mark));
    size_t len = tail ? k * ofi.p.block_size : bytes - sizeof(fab_mark);
    if (tail) {
        uint8_t *at = c->tx + (size_t)block * ofi.p.block_size;
        *(uint32_t *)at = ofi_lead_word(pos, k);
        *(uint32_t *)(at + len - sizeof(uint32_t)) = OFI_TAIL_WORD;
    }
    struct iovec iov = {c->tx + off, len};
    void *desc = c->tx_desc;
    struct fi_rma_iov rma = {c->peer_ring + off, len, c->peer_key};
    struct fi_msg_rma msg = {.msg_iov = &iov,
                             .desc = &desc,
                             .iov_count = 1,
                             .addr = c->addr,
                             .rma_iov = &rma,
                             .rma_iov_count = 1,
                             .context = tail ? &c->tail_ctx : &c->ring_ctx,
                             .data = ofi_cq_data(c->peer_id, block)};
    uint64_t flags = tail ? (len <= ofi.info->tx_attr->inject_size ? FI_INJECT : 0)
                          : FI_REMOTE_CQ_DATA | FI_COMPLETION | (len <= ofi.inject ? FI_INJECT : 0);
    ssize_t rc = fi_writemsg(ofi.ep, &msg, flags);
    if (rc == -FI_EAGAIN)
        return UTIL_EAGAIN;
    if (rc != 0)
        util_die("ofi: writing a packet into %s's ring failed: %s", util_proc(c->peer),
                 ofi_err((int)rc));
    if (!tail) {
        c->writes++;
        ofi.outstanding++;
    }
    return UTIL_OK;
}

static void ofi_tx_post(fab_conn *c, uint32_t pos, void *block, size_t bytes)
{
    if (ofi.srq) {
        ofi_srq_tx_post(c, pos, block, bytes);
        return;
    }
    if (c->ndefer == 0 && ofi_post_ring(c, pos, (uint32_t)bytes) == UTIL_OK)
        return;
    /* the provider is busy: poll posts it later (the block stays untouched until consumed) */
    unsigned at = (c->defer_head + c->ndefer) % ofi.p.nblocks;
    c->defer[at] = pos;
    c->defer_len[at] = (uint32_t)bytes;
    if (c->ndefer++ == 0)
        util_queue_push(&ofi.deferred, &c->deferred);
}

/* the packet of k blocks at block `block` of c's ring is all there: set its tail marker
 * (from the laps each block was covered in: writes with CQ data may land out of order). A
 * packet past the ring's end is a malformed one. */
static void ofi_ring_mark(fab_conn *c, uint32_t block, uint32_t k)
{
    if (k == 0 || k > ofi.p.nblocks - block)
        util_die("ofi: %s wrote a packet of %u blocks at block %u of a %u-block ring",
                 util_proc(c->peer), k, block, ofi.p.nblocks);
    uint8_t *at = c->rx + (size_t)block * ofi.p.block_size;
    uint32_t mark = block + 1 + c->rx_round[block] * ofi.p.nblocks;
    for (uint32_t j = 0; j < k; j++)
        c->rx_round[block + j]++;
    atomic_store_explicit((_Atomic fab_mark *)at, mark, memory_order_release);
}

/* Tail-marked writes into my rings: the provider applies a write's bytes in order, from
 * inside my own fi_cq_read, so once a packet's lead word and then its tail word read as
 * written, the whole packet is there (a write cut short between two reads leaves its
 * beginning). Lead words are recognised by their flag and low byte: the block's first
 * word holds otherwise a mark of an earlier lap (same low byte parity as this one's, never
 * its complement), or the block's index (below the flag). Tail words were cleared when
 * the blocks were last freed (ofi_rx_free). */
static int ofi_tail_scan(void)
{
    int events = 0;
    uint32_t n = ofi.p.nblocks;
    size_t bs = ofi.p.block_size;
    for (uint32_t i = 0; i < ofi.nconns; i++) {
        fab_conn *c = ofi.conns[i];
        if (!c || c == &ofi_gone)
            continue;
        for (;;) {
            uint32_t pos = c->rx_expect, block = pos % n;
            uint8_t *at = c->rx + (size_t)block * bs;
            uint32_t w = atomic_load_explicit((_Atomic uint32_t *)at, memory_order_acquire);
            uint32_t k;
            if (w == pos + 1) { /* a write with CQ data, marked already */
                k = ofi.p.up->packet_blocks ? ofi.p.up->packet_blocks(at) : 1;
            } else if ((w & OFI_LEAD_FLAG) && (w & 0xffu) == (~(pos + 1) & 0xffu)) {
                k = (w & ~OFI_LEAD_FLAG) >> 8;
                if (k != 0 && k <= n - block && at[k * bs - 1] == 0)
                    break; /* on its way (a bad count is reported by ofi_ring_mark) */
                ofi_ring_mark(c, block, k);
                events++;
            } else {
                break;
            }
            c->rx_expect = pos + k;
        }
    }
    return events;
}

/* the core is done with the packet at pos: clear the blocks' last words, where tails land */
static void ofi_rx_free(fab_conn *c, uint32_t pos, void *block, uint32_t blocks)
{
    if (ofi.srq) {
        c->rx_next = pos + blocks;
        if (c->lane && (uint8_t *)block >= c->lane && (uint8_t *)block < c->lane + ofi_lane_bytes()) {
            /* clear the blocks' first words (lead words) and last words (tails) */
            size_t bs = ofi.p.block_size;
            for (uint32_t j = 0; j < c->lane_k; j++) {
                *(uint32_t *)((uint8_t *)block + j * bs) = 0;
                *(uint32_t *)((uint8_t *)block + (j + 1) * bs - sizeof(uint32_t)) = 0;
            }
        } else {
            ofi_rxe_done(c);
        }
        return;
    }
    if (!ofi.tail)
        return;
    size_t bs = ofi.p.block_size;
    for (uint32_t j = 1; j <= blocks; j++)
        *(uint32_t *)((uint8_t *)block + j * bs - sizeof(uint32_t)) = 0;
}

/* a remote write landed in block `block` of connection id's ring: set its tail marker */
static void ofi_ring_arrived(uint64_t data)
{
    uint32_t id = ofi.cq_data_bits == 64 ? (uint32_t)(data >> 32) : (uint32_t)(data >> 16) & 0xffff;
    uint32_t block = ofi.cq_data_bits == 64 ? (uint32_t)data : (uint32_t)data & 0xffff;
    fab_conn *c = id < ofi.nconns ? ofi.conns[id] : NULL;
    if (c == &ofi_gone)
        return; /* a late write into a closed connection */
    if (!c || block >= ofi.p.nblocks)
        util_die(
            "ofi: a remote write names connection %u block %u, which this process does not have",
            id, block);
    uint8_t *at = c->rx + (size_t)block * ofi.p.block_size;
    ofi_ring_mark(c, block, ofi.p.up->packet_blocks ? ofi.p.up->packet_blocks(at) : 1);
}

/* ---- bulk operations --------------------------------------------------------------- */

static void ofi_piece_free(ofi_piece *pc)
{
    ofi.pieces--;
    for (int i = 0; i < pc->n; i++)
        if (pc->reg[i])
            fab_rcache_put(&ofi.rcache, pc->reg[i]);
    free(pc);
}

static void ofi_piece_done(ofi_piece *pc, int status)
{
    fab_op *op = pc->op;
    if (status != UTIL_OK && OFI_OP_STATUS(op) == 0)
        OFI_OP_STATUS(op) = (uintptr_t)(intptr_t)status;
    ofi_piece_free(pc);
    if (--OFI_OP_PENDING(op) == 0)
        op->done(op, (int)(intptr_t)OFI_OP_STATUS(op));
}

static int ofi_piece_post(ofi_piece *pc)
{
    struct fi_msg_rma msg = {.msg_iov = pc->iov,
                             .desc = pc->desc,
                             .iov_count = (size_t)pc->n,
                             .addr = pc->c->addr_serve,
                             .rma_iov = &pc->rma,
                             .rma_iov_count = 1,
                             .context = &pc->ctx};
    struct fid_ep *ep = ofi.split ? ofi.ep_issue : ofi.ep;
    ssize_t rc = pc->write ? fi_writemsg(ep, &msg, FI_COMPLETION | FI_DELIVERY_COMPLETE)
                           : fi_readmsg(ep, &msg, FI_COMPLETION);
    if (rc == -FI_EAGAIN)
        return UTIL_EAGAIN;
    if (rc != 0) {
        util_log("ofi: one-sided %s of %zu bytes with %s failed: %s", pc->write ? "write" : "read",
                 (size_t)pc->rma.len, util_proc(pc->c->peer), ofi_err((int)rc));
        return UTIL_EIO;
    }
    return UTIL_OK;
}

static int ofi_bulk(fab_conn *c, const struct iovec *local, int nlocal, uint64_t raddr,
                    uint64_t rkey, size_t len, fab_op *op, int write)
{
    OFI_OP_PENDING(op) = 0;
    OFI_OP_STATUS(op) = 0;
    size_t off = 0;
    int i = 0;
    int rc = UTIL_OK;
    while (i < nlocal && rc == UTIL_OK) {
        ofi_piece *pc = util_calloc(1, sizeof *pc);
        ofi.pieces++;
        pc->ctx.kind = OFI_CTX_PIECE;
        pc->op = op;
        pc->c = c;
        pc->write = write;
        size_t plen = 0;
        while (i < nlocal && pc->n < (int)ofi.iov_limit) {
            pc->iov[pc->n] = local[i++];
            plen += pc->iov[pc->n].iov_len;
            if (ofi.mr_mode & FI_MR_LOCAL) {
                pc->reg[pc->n] =
                    fab_rcache_get(&ofi.rcache, pc->iov[pc->n].iov_base, pc->iov[pc->n].iov_len);
                if (!pc->reg[pc->n]) {
                    rc = UTIL_EIO;
                    break;
                }
                pc->desc[pc->n] = pc->reg[pc->n]->desc;
            }
            pc->n++;
        }
        pc->rma = (struct fi_rma_iov){raddr + off, plen, rkey};
        off += plen;
        if (rc == UTIL_OK)
            rc = ofi_piece_post(pc);
        if (rc == UTIL_EAGAIN) {
            util_queue_push(&ofi.pieces_waiting, &pc->qn);
            rc = UTIL_OK;
        } else if (rc != UTIL_OK) {
            ofi_piece_free(pc);
            break;
        }
        OFI_OP_PENDING(op)++;
    }
    if (rc != UTIL_OK) {
        if (OFI_OP_PENDING(op) == 0)
            return rc;
        OFI_OP_STATUS(op) = (uintptr_t)(intptr_t)rc; /* reported when the posted pieces end */
    }
    (void)len;
    return OFI_OP_PENDING(op) ? FAB_PENDING : UTIL_OK;
}

static int ofi_read(fab_conn *c, const struct iovec *local, int nlocal, uint64_t raddr,
                    uint64_t rkey, size_t len, fab_op *op)
{
    return ofi_bulk(c, local, nlocal, raddr, rkey, len, op, 0);
}

static int ofi_write(fab_conn *c, const struct iovec *local, int nlocal, uint64_t raddr,
                     uint64_t rkey, size_t len, fab_op *op)
{
    return ofi_bulk(c, local, nlocal, raddr, rkey, len, op, 1);
}

/* ---- progress --------------------------------------------------------------------- */

/* 1 if the handshake was handled, 0 if it must wait: its sender is of another job and
 * not known yet, or connects again while my side of its previous connection is still
 * closing (MPI_Comm_disconnect) */
static int ofi_hello_take(const ofi_hello *h)
{
    int lpid = -1;
    if (h->magic == OFI_MAGIC && h->version == OFI_HELLO_VERSION && h->rank >= 0 &&
        h->rank <= FAB_RANK_MAX) {
        if (h->job == ofi.job)
            lpid = h->rank < ofi.p.nprocs ? h->rank : -1;
        else if (ofi.p.up->lpid_of)
            lpid = ofi.p.up->lpid_of(FAB_GID(h->job, h->rank));
        if (lpid < 0 && h->job != ofi.job && ofi.p.up->lpid_of)
            return 0;
    }
    if (lpid < 0 || lpid == ofi.p.self) {
        util_log("ofi: ignoring a connection handshake from a process this one does not know "
                 "(rank %d of job %llx)", h->rank, (unsigned long long)h->job);
        return 1;
    }
    if (((h->flags & OFI_HELLO_SRQ) != 0) != (ofi.srq != 0))
        util_die("ofi: %s %s a shared receive queue and this one %s: DCFA_OFI_SRQ must "
                 "agree",
                 util_proc(lpid), h->flags & OFI_HELLO_SRQ ? "has" : "has no",
                 ofi.srq ? "has" : "has none");
    if (h->nblocks != ofi.p.nblocks || h->block_size != ofi.p.block_size)
        util_die("ofi: %s's rings have %u blocks of %u bytes, mine %u of %zu: DCFA_MAX_CREDIT, "
                 "DCFA_BLOCK_SIZE and DCFA_EAGER_LIMIT must agree",
                 util_proc(lpid), h->nblocks, h->block_size, ofi.p.nblocks, ofi.p.block_size);
    fab_conn *c = lpid < ofi.npeers ? ofi.by_peer[lpid] : NULL;
    if (ofi.closing)
        return 1; /* nobody starts a connection at MPI_Finalize; the core is not listening */
    if (c && c->hello_in && h->job != ofi.job)
        return 0; /* it closed its side and connects again before mine is closed: later */
    if (c) {
        if (!c->hello_in)
            ofi_hello_apply(c, h);
        return 1;
    }
    ofi.incoming = h;
    ofi.incoming_lpid = lpid;
    (void)ofi.p.up->incoming(&fab_ofi_ops, lpid);
    ofi.incoming = NULL;
    return 1;
}

/* a handshake of a process not known yet: retried from poll */
static void ofi_hello_keep(const ofi_hello *h)
{
    if (ofi.nunknown == ofi.capunknown) {
        ofi.capunknown = ofi.capunknown ? 2 * ofi.capunknown : 8;
        ofi.unknown = util_realloc(ofi.unknown, (size_t)ofi.capunknown * sizeof *ofi.unknown);
    }
    ofi.unknown[ofi.nunknown++] = *h;
}

static void ofi_hello_arrived(ofi_recv *r)
{
    if (!ofi_hello_take(&r->msg))
        ofi_hello_keep(&r->msg);
}

/* the handshakes kept for processes not known then */
static int ofi_unknown_retry(void)
{
    int k = 0, events = 0;
    for (int i = 0; i < ofi.nunknown; i++) {
        if (ofi_hello_take(&ofi.unknown[i]))
            events++;
        else
            ofi.unknown[k++] = ofi.unknown[i];
    }
    ofi.nunknown = k;
    return events;
}

static void ofi_completion(const struct fi_cq_data_entry *e)
{
    /* a write into my ring (some providers also mark the writer's own completion
     * FI_REMOTE_CQ_DATA: FI_REMOTE_WRITE tells the target's apart) */
    if ((e->flags & (FI_REMOTE_CQ_DATA | FI_REMOTE_WRITE)) ==
        (FI_REMOTE_CQ_DATA | FI_REMOTE_WRITE)) {
        ofi_ring_arrived(e->data);
        return;
    }
    ofi_ctx *x = e->op_context;
    if (!x)
        return;
    switch (x->kind) {
    case OFI_CTX_RECV: {
        ofi_recv *r = (ofi_recv *)x;
        if (e->len == sizeof(ofi_hello))
            ofi_hello_arrived(r);
        else
            util_log("ofi: ignoring a %zu-byte message that is no connection handshake", e->len);
        ofi_post_recv(r);
        break;
    }
    case OFI_CTX_RING:
    case OFI_CTX_HELLO: {
        fab_conn *c = UTIL_CONTAINER(x, fab_conn, ring_ctx);
        if (x->kind == OFI_CTX_HELLO)
            c = UTIL_CONTAINER(x, fab_conn, hello_ctx);
        c->writes--;
        ofi.outstanding--;
        break;
    }
    case OFI_CTX_PIECE:
        ofi_piece_done((ofi_piece *)x, UTIL_OK);
        break;
    case OFI_CTX_SRQ: {
        ofi_rxbuf *b = (ofi_rxbuf *)x;
        b->refs++; /* held while its message is looked at */
        if (e->len)
            ofi_srq_arrived(b, e->buf, e->len);
        if ((e->flags & FI_MULTI_RECV) || !ofi.multi)
            b->posted = 0; /* the provider is done with it */
        ofi_rxbuf_put(b);
        break;
    }
    case OFI_CTX_SLOT: {
        ofi_slot *sl = (ofi_slot *)x;
        sl->c->writes--;
        ofi.outstanding--;
        ofi_slot_put(sl);
        break;
    }
    }
}

static void ofi_error(struct fid_cq *cq)
{
    struct fi_cq_err_entry err = {0};
    if (fi_cq_readerr(cq, &err, 0) != 1)
        return;
    ofi_ctx *x = err.op_context;
    char buf[256] = "";
    const char *detail = fi_cq_strerror(cq, err.prov_errno, err.err_data, buf, sizeof buf);
    if (!x || err.err == FI_ECANCELED) {
        if (x && x->kind == OFI_CTX_PIECE)
            ofi_piece_done((ofi_piece *)x, -FI_ECANCELED);
        return;
    }
    switch (x->kind) {
    case OFI_CTX_TAIL: {
        fab_conn *c = UTIL_CONTAINER(x, fab_conn, tail_ctx);
        if (c->closing)
            return;
        util_die("ofi: writing a packet into %s's ring failed: %s (%s)", util_proc(c->peer),
                 ofi_err(err.err), detail ? detail : "");
    }
    case OFI_CTX_RING:
    case OFI_CTX_HELLO: {
        fab_conn *c = x->kind == OFI_CTX_RING ? UTIL_CONTAINER(x, fab_conn, ring_ctx)
                                              : UTIL_CONTAINER(x, fab_conn, hello_ctx);
        if (c->closing) { /* the peer is gone already: nothing it needs is lost */
            c->writes--;
            ofi.outstanding--;
            return;
        }
        util_die("ofi: %s to %s failed: %s (%s)",
                 x->kind == OFI_CTX_RING ? "writing a packet into the ring"
                                         : "the connection handshake",
                 util_proc(c->peer), ofi_err(err.err), detail ? detail : "");
    }
    case OFI_CTX_PIECE: {
        ofi_piece *pc = (ofi_piece *)x;
        util_log("ofi: one-sided %s of %zu bytes with %s failed: %s (%s)",
                 pc->write ? "write" : "read", (size_t)pc->rma.len, util_proc(pc->c->peer),
                 ofi_err(err.err), detail ? detail : "");
        ofi_piece_done(pc, err.err > 0 ? -err.err : UTIL_EIO);
        break;
    }
    case OFI_CTX_RECV:
        util_log("ofi: a handshake receive failed: %s", ofi_err(err.err));
        ofi_post_recv((ofi_recv *)x);
        break;
    case OFI_CTX_SRQ: {
        ofi_rxbuf *b = (ofi_rxbuf *)x;
        util_log("ofi: a shared receive buffer reported an error: %s (%s)", ofi_err(err.err),
                 detail ? detail : "");
        if (err.flags & FI_MULTI_RECV) {
            b->posted = 0;
            b->refs++;
            ofi_rxbuf_put(b);
        }
        break;
    }
    case OFI_CTX_SLOT: {
        ofi_slot *sl = (ofi_slot *)x;
        fab_conn *c = sl->c;
        c->writes--;
        ofi.outstanding--;
        ofi_slot_put(sl);
        if (c->closing)
            return;
        util_die("ofi: sending a packet to %s failed: %s (%s)", util_proc(c->peer),
                 ofi_err(err.err), detail ? detail : "");
    }
    }
}

/* post what the provider refused before */
static int ofi_retry(void)
{
    int events = 0;
    util_qnode *n;
    while ((n = util_queue_first(&ofi.hellos_waiting))) {
        fab_conn *c = UTIL_CONTAINER(n, fab_conn, deferred);
        int rc = ofi_send_hello(c);
        if (rc == UTIL_EAGAIN)
            break;
        util_queue_remove(n);
        if (rc != UTIL_OK)
            ofi.p.up->ready(c->ctx, rc);
        else
            ofi_maybe_ready(c);
        events++;
    }
    while ((n = util_queue_first(&ofi.tx_waiting))) {
        if (ofi_slot_send(UTIL_CONTAINER(n, ofi_slot, qn)) != UTIL_OK)
            break;
        util_queue_remove(n);
        events++;
    }
    for (n = ofi.deferred.head.next; n != &ofi.deferred.head;) {
        fab_conn *c = UTIL_CONTAINER(n, fab_conn, deferred);
        n = n->next;
        while (c->ndefer > 0 && c->hello_in) {
            unsigned at = c->defer_head;
            if (ofi_post_ring(c, c->defer[at], c->defer_len[at]) != UTIL_OK)
                break;
            c->defer_head = (at + 1) % ofi.p.nblocks;
            c->ndefer--;
            events++;
        }
        if (c->ndefer == 0)
            util_queue_remove(&c->deferred);
    }
    while ((n = util_queue_first(&ofi.pieces_waiting))) {
        ofi_piece *pc = UTIL_CONTAINER(n, ofi_piece, qn);
        int rc = ofi_piece_post(pc);
        if (rc == UTIL_EAGAIN)
            break;
        util_queue_remove(n);
        if (rc != UTIL_OK)
            ofi_piece_done(pc, rc);
        events++;
    }
    return events;
}

/* reads a completion queue dry */
static int ofi_cq_drain(struct fid_cq *cq)
{
    int events = 0;
    for (;;) {
        struct fi_cq_data_entry e[16];
        ssize_t n = fi_cq_read(cq, e, 16);
        if (n == -FI_EAGAIN)
            break;
        if (n == -FI_EAVAIL) {
            ofi_error(cq);
            events++;
            continue;
        }
        if (n < 0)
            util_die("ofi: reading the completion queue failed: %s", ofi_err((int)n));
        for (ssize_t i = 0; i < n; i++)
            ofi_completion(&e[i]);
        events += (int)n;
        if (n < 16)
            break;
    }
    return events;
}

static int ofi_poll(void)
{
    int events = 0;
    if (__builtin_expect(ofi.nunknown > 0, 0))
        events += ofi_unknown_retry();
    if (!util_queue_empty(&ofi.hellos_waiting) || !util_queue_empty(&ofi.deferred) ||
        !util_queue_empty(&ofi.pieces_waiting) || !util_queue_empty(&ofi.tx_waiting))
        events += ofi_retry();
    events += ofi_cq_drain(ofi.cq);
    if (ofi.tail)
        events += ofi_tail_scan();
    if (ofi.nlane_conns)
        ofi_lane_wake();
    /* The bulk endpoints need progress while this process has transfers of its own under
     * way (pieces) or memory a peer may read or write (exposed: a rendezvous' buffer, a
     * window): manual-progress providers answer a peer's read only inside our fi_cq_read.
     * Otherwise nothing can arrive there but a connection's set-up or tear-down, which every
     * 64th pass keeps moving. */
    if (ofi.cq_bulk && (ofi.pieces > 0 || ofi.exposed > 0 || ofi.closing ||
                        (++ofi.bulk_tick & 63) == 0))
        events += ofi_cq_drain(ofi.cq_bulk);
    return events;
}

static void ofi_footprint(fab_conn *c, fab_usage *u)
{
    if (c && ofi.srq) {
        u->endpoint += sizeof *c;
        u->rings += c->lane ? ofi_lane_bytes() : 0;
    } else if (c) {
        u->rings += 2 * ofi_ring_bytes() + sizeof(ofi_hello);
        u->endpoint += sizeof *c + 3 * ofi.p.nblocks * sizeof(uint32_t);
    } else {
        u->regs += ofi.rcache.bytes;
        u->endpoint += (ofi.recvs ? OFI_NRECV * sizeof(ofi_recv) : 0) +
                       ofi.capconns * sizeof(void *) + (size_t)ofi.npeers * sizeof(void *);
        /* the shared receive queue: its buffers, send buffers and queue entries */
        u->rings += (size_t)ofi.nrxbufs * ofi.rxbuf_bytes + (size_t)ofi.nslots * ofi.pkt_bytes;
        u->endpoint += (size_t)ofi.nrxbufs * sizeof(ofi_rxbuf) +
                       (size_t)ofi.nslots * sizeof(ofi_slot) + ofi.nrxe * sizeof(ofi_rxe);
    }
}

static int ofi_busy(void)
{
    if (ofi.outstanding > 0 || !util_queue_empty(&ofi.deferred) ||
        !util_queue_empty(&ofi.hellos_waiting) || !util_queue_empty(&ofi.tx_waiting))
        return 1;
    return 0;
}

/* the closing thread: progress while the main thread waits for everyone */
static struct {
    _Atomic int stop, busy;
} ofi_linger;

static void *ofi_linger_main(void *arg)
{
    while (!atomic_load(&ofi_linger.stop)) {
        if (ofi_poll() == 0)
            sched_yield();
        atomic_store(&ofi_linger.busy, ofi_busy());
    }
    return NULL;
}

static void ofi_close(void)
{
    if (!ofi.ep)
        return;
    for (uint32_t i = 0; i < ofi.nconns; i++)
        if (ofi.conns[i] != &ofi_gone)
            ofi.conns[i]->closing = 1;
    ofi.closing = 1;
    atomic_store(&ofi_linger.stop, 0);
    atomic_store(&ofi_linger.busy, 1);
    pthread_t t;
    int threaded = pthread_create(&t, NULL, ofi_linger_main, NULL) == 0;
    uint64_t until = util_now_ns() + 10000000000ull;
    if (threaded) {
        while (atomic_load(&ofi_linger.busy) && util_now_ns() < until)
            usleep(100);
        if (atomic_load(&ofi_linger.busy))
            util_log("ofi: writes still unfinished after 10 s at close");
        if (ofi.p.fence)
            (void)ofi.p.fence();
        atomic_store(&ofi_linger.stop, 1);
        pthread_join(t, NULL);
    } else {
        while (ofi_busy() && util_now_ns() < until)
            ofi_poll();
        if (ofi.p.fence)
            (void)ofi.p.fence();
    }
    /* registrations first (some providers bind them to the endpoint), then the endpoint:
     * no completion refers to a connection after that */
    for (uint32_t i = 0; i < ofi.nconns; i++)
        if (ofi.conns[i] != &ofi_gone)
            ofi_conn_unreg(ofi.conns[i]);
    fab_rcache_destroy(&ofi.rcache);
    if (ofi.recv_mr)
        fi_close(&ofi.recv_mr->fid);
    ofi.recv_mr = NULL;
    fi_close(&ofi.ep->fid);
    ofi.ep = NULL;
    if (ofi.ep_issue)
        fi_close(&ofi.ep_issue->fid);
    if (ofi.ep_serve)
        fi_close(&ofi.ep_serve->fid);
    ofi.ep_issue = ofi.ep_serve = NULL;
    for (uint32_t i = 0; i < ofi.nconns; i++) {
        fab_conn *c = ofi.conns[i];
        if (c != &ofi_gone) {
            ofi_conn_forget(c);
            ofi_conn_free(c);
        }
    }
    ofi_teardown();
}

void fab_ofi_probe(char *buf, size_t len)
{
    int rc = ofi_lib_load();
    if (rc != UTIL_OK) {
        snprintf(buf, len, "libfabric.so.1 cannot be loaded");
        return;
    }
    fab_params saved = ofi.p;
    ofi.p.local_nprocs = -1;
    struct fi_info *info = ofi_getinfo(&rc);
    ofi.p = saved;
    if (!info) {
        snprintf(buf, len, "%u.%u, no provider with FI_EP_RDM, FI_MSG and FI_RMA found (%s)",
                 FI_MAJOR(ofi_lib.version()), FI_MINOR(ofi_lib.version()), ofi_err(rc));
        return;
    }
    snprintf(buf, len, "%u.%u, provider %s (fabric %s, domain %s)", FI_MAJOR(ofi_lib.version()),
             FI_MINOR(ofi_lib.version()), info->fabric_attr->prov_name, info->fabric_attr->name,
             info->domain_attr->name);
    ofi_lib.freeinfo(info);
}

void fab_ofi_peer_cost(char *buf, size_t len)
{
    snprintf(buf, len, "%s",
             util_cfg.ofi_srq ? "about 0.8 KiB of state (a shared receive queue, DCFA_OFI_SRQ=1: "
                                "per process its receive and send buffers, and a lane for each "
                                "of at most DCFA_OFI_LANES busy peers)"
                              : "two rings of DCFA_OFI_MAX_CREDIT blocks (DCFA_OFI_SRQ=0)");
}

static const fab_chan_ops ofi_chan = {
    .ring_blocks = ofi_ring_blocks,
    .connect = ofi_connect,
    .disconnect = ofi_disconnect,
    .tx_block = ofi_tx_block,
    .tx_post = ofi_tx_post,
    .tx_credit = ofi_tx_credit,
    .rx_peek = ofi_rx_peek,
    .rx_free = ofi_rx_free,
};

static const fab_mr_ops ofi_mr = {
    .reg = ofi_mem_reg,
    .dereg = ofi_mem_dereg,
    .release = ofi_mem_release,
};

static const fab_rma_ops ofi_rma = {
    .read = ofi_read,
    .write = ofi_write,
};

const fab_ops fab_ofi_ops = {
    .name = "ofi",
    .open = ofi_open,
    .close = ofi_close,
    .caps = ofi_caps,
    .reachable = ofi_reachable,
    .poll = ofi_poll,
    .footprint = ofi_footprint,
    .chan = &ofi_chan,
    .mr = &ofi_mr,
    .rma = &ofi_rma,
};
