/* shm fabric: connections between processes of one node.
 *
 * Segments (all /dev/shm/dcfa-<job>-..., so mpirun removes what a crash
 * leaves), each created by the process that owns it, exclusively (O_EXCL,
 * mode 0600, memory reserved at creation), and checked by whoever maps it
 * (owner is this user, mode 0600, exact size): a segment another user
 * planted is refused loudly, never used. Every name ends in a token T no one
 * else can guess: SipHash of (kind, peer) under the owner's name key, 128
 * random bits drawn at open and given only to its peers, in its card (the
 * key/value exchange). Seeing some of a process's names tells nothing of its
 * others, so nobody can make one before its owner does (fab_shm_name).
 *
 *   /dcfa-<job>-<p>-d<T>      p's door: a flag per process of p's job that
 *                             connected to p, and slots for processes of other
 *                             jobs (dynamic processes) naming themselves
 *   /dcfa-<job>-<p>-<q>-<T>   p's receive ring for packets from q of its job
 *   /dcfa-<job>-<p>-g<G>-<T>  p's receive ring for process G (fab_gid, hex) of
 *                             another job
 *   /dcfa-<job>-<p>-s<T>      p's staging pool (pool_create), made at its first
 *                             rendezvous and mapped by the peers it sends to; p
 *                             unlinks it at close
 *
 * A connection is made in two steps. The side that starts (A) creates its
 * ring for B and raises its flag in B's door; B's poll sees it, creates its
 * ring for A, maps A's ring and raises its flag in A's door; A's poll maps
 * B's ring. A ring's name is unlinked by the process that maps it, so a
 * finished job leaves nothing in /dev/shm. Both sides starting at once is
 * the same: each finds the other's flag with its own connection waiting.
 *
 * A ring's size is the smaller of the two ends' offers (p.local_nblocks, in the
 * card): both rings of a connection have it, and a process offers more when few
 * processes share the node.
 *
 * Packets are written straight into the peer's ring (FAB_CAP_RING_MAPPED); bulk
 * data moves single-copy with process_vm_readv/writev, to the pid in the
 * peer's card, read once at connect (never from memory the peer can write).
 *
 * MPI_Alloc_mem blocks (mem_alloc, DCFA_ALLOC_SHM) are memfds, not segments:
 * nothing in /dev/shm, gone with the process. A peer that meets one in a
 * registration (key: FAB_KEY_DIRECT, the owner's fd, a generation) takes the
 * fd with pidfd_getfd (the permission process_vm_readv needs), maps it once,
 * checks its header page, and from then on moves data from and into it with
 * plain copies. */
#include "fabric/fabric.h"
#include "util/util.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SHM_FOREIGN_SLOTS 64
typedef struct shm_door {
    _Atomic uint32_t requests;      /* bumped after a peer sets its flag */
    uint32_t pad[15];
    /* a process of another job whose ring for me is there: its gid + 1 (0: free slot) */
    _Atomic uint64_t foreign[SHM_FOREIGN_SLOTS];
    _Atomic uint8_t flag[];         /* flag[rank] = 1: that rank's ring for me is there */
} shm_door;

/* A ring segment: this header, then the ring. The header's line also keeps
 * ring blocks 64 bytes off page boundaries, as in the first layout: packet
 * data page-aligned + 32 made memcpy from user buffers (malloc'ed: page + 16)
 * hit 4K aliasing, 10-15% slower for 64-512 byte messages. */
typedef struct shm_ring_hdr {
    uint32_t magic;     /* SHM_RING_MAGIC */
    uint32_t nblocks, block_size;
    uint32_t pad0;
    uint64_t owner, peer;/* the receiver that made it, and the sender it is for (fab_gid) */
    uint32_t pad[8];
} shm_ring_hdr;
_Static_assert(sizeof(shm_ring_hdr) == 64, "ring header is one cache line");
#define SHM_RING_MAGIC 0x44435252u  /* "DCRR" */

/* a block of the peer's (mem_alloc) mapped here: its key, where it is mapped, and where
 * its bytes are in the peer's address space */
#define SHM_PEER_BLKS 32
typedef struct shm_peer_blk {
    uint64_t key;       /* 0: free slot */
    uint8_t *map;       /* the whole memfd: header page, then the bytes */
    size_t maplen;
    uint64_t base, len; /* the bytes, in the owner's address space */
    uint64_t used;      /* for eviction: the least recently used goes */
} shm_peer_blk;

struct fab_conn {
    int peer;
    fab_gid gid;        /* the peer's name */
    int foreign;        /* of another job */
    int door_wait;      /* every slot of its door was taken: retried from poll */
    char job[40];       /* its job id (names its segments), from its card */
    uint64_t key[2];    /* its name key (the tokens of its segments' names), from its card */
    int door_size;      /* its job's size: the length of its door */
    pid_t pid;          /* from the peer's card */
    uint32_t nblocks;   /* blocks of both rings: the smaller offer of the two cards */
    int ready;
    void *ctx;          /* the core's */
    uint8_t *rx;        /* my ring for the peer's packets */
    uint8_t *tx;        /* the peer's ring for mine (NULL until ready) */
    void *stage;        /* the peer's staging pool, once mapped */
    size_t stage_len;
    char rx_name[96];
    int pidfd;          /* the peer's, for pidfd_getfd (0: not opened yet, -1: failed) */
    int direct_off;     /* taking its fds was refused: process_vm_* from then on */
    uint64_t blk_clock;
    shm_peer_blk *blks; /* SHM_PEER_BLKS, made when the first is mapped */
};

static struct {
    fab_params p;
    shm_door *door;
    size_t door_len;
    char door_name[96];
    uint64_t key[2]; /* my name key: in my card, for my peers only */
    uint32_t seen_requests;
    fab_conn **by_peer;     /* by lpid */
    int npeers;             /* by_peer's length */
    int door_waits;         /* connections with door_wait */
    int foreign_waiting;    /* a slot names a process not known yet: looked at every poll */
    uint64_t job;           /* my job's hash */
    void *stage;            /* my staging pool (pool_create) */
    size_t stage_len;
    char stage_name[96];
    fab_caps caps;
} shm;

static size_t shm_seg_bytes(const fab_conn *c)
{
    return sizeof(shm_ring_hdr) + (size_t)c->nblocks * shm.p.block_size;
}
size_t fab_shm_ring_bytes(unsigned nblocks, size_t block_size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return (sizeof(shm_ring_hdr) + (size_t)nblocks * block_size + page - 1) / page * page;
}
/* Map every page of a ring into this process now, in one call:
 * otherwise each page faults at its first write or read by this process,
 * the first pass of a ring costs a fault every 64 small messages on each
 * side, and in a lockstep exchange each one stalls both ranks (about 12
 * us a fault there, 1.6 us a page here: docs/fabric.md, "shm"). A kernel
 * without MADV_POPULATE_WRITE (before 5.14) faults as before. */
static void shm_prefault(void *p, size_t len)
{
#ifdef MADV_POPULATE_WRITE
    (void)madvise(p, len, MADV_POPULATE_WRITE);
#else
    (void)p;
    (void)len;
#endif
}

static void shm_seg_unmap(const fab_conn *c, uint8_t *ring)
{
    munmap(ring - sizeof(shm_ring_hdr), shm_seg_bytes(c));
}

int fab_shm_card_key(const char *cards, uint64_t key[2])
{
    const char *shm = strstr(cards, "shm:"), *end = shm ? strchr(shm, ';') : NULL;
    if (!shm)
        return UTIL_EPROTO;
    if (!end)
        end = shm + strlen(shm);
    const char *k = end - 32;
    if (end - shm < 34 || k[-1] != '/' || strspn(k, "0123456789abcdef") < 32)
        return UTIL_EPROTO;
    for (int i = 0; i < 2; i++) {
        char half[17];
        memcpy(half, k + 16 * i, 16);
        half[16] = 0;
        key[i] = strtoull(half, NULL, 16);
    }
    return UTIL_OK;
}

void fab_shm_name(char *buf, size_t len, const char *job, int rank, const uint64_t key[2], int kind,
                  fab_gid peer, int foreign)
{
    const uint64_t what[2] = {(uint64_t)kind, kind == 'r' ? peer : 0};
    unsigned long long t = util_siphash(key, what, sizeof what);
    if (kind != 'r')
        snprintf(buf, len, "/dcfa-%s-%d-%c%016llx", job, rank, kind, t);
    else if (!foreign)
        snprintf(buf, len, "/dcfa-%s-%d-%d-%016llx", job, rank, FAB_GID_RANK(peer), t);
    else
        snprintf(buf, len, "/dcfa-%s-%d-g%llx-%016llx", job, rank, (unsigned long long)peer, t);
}

static fab_gid shm_gid_of(int lpid)
{
    return shm.p.up->gid_of ? shm.p.up->gid_of(lpid) : FAB_GID(shm.job, lpid);
}

static fab_gid shm_self_gid(void) { return FAB_GID(shm.job, shm.p.self); }

static int shm_open_ep(const fab_params *p, char *card, size_t cardlen)
{
    shm.p = *p;
    if (shm.p.local_nblocks < shm.p.nblocks)
        shm.p.local_nblocks = shm.p.nblocks;
    shm.job = fab_job_hash(p->job_id);
    shm.door_len = sizeof(shm_door) + (size_t)p->nprocs;
    int rc = util_random(shm.key, sizeof shm.key);
    if (rc != UTIL_OK) {
        util_log("shm fabric: cannot draw the key of this process's segment names: %s",
                 strerror(-rc));
        return rc;
    }
    fab_shm_name(shm.door_name, sizeof shm.door_name, p->job_id, p->self, shm.key, 'd', 0, 0);
    void *door;
    rc = util_shm_create(shm.door_name, shm.door_len, "shm fabric", &door);
    if (rc != UTIL_OK)
        return rc;
    shm.door = door;
    shm.npeers = p->nprocs;
    shm.by_peer = util_calloc((size_t)p->nprocs, sizeof *shm.by_peer);
    /* rings mapped at both ends; one-sided access by cross-memory attach unless DCFA_CMA=0
     * (then the core copies through the rings or the staging pool); pools and MPI_Alloc_mem
     * blocks in memory both map */
    unsigned rma = FAB_CAP_RMA | FAB_CAP_RMA_PASSIVE | FAB_CAP_RMA_ANY_ADDR | FAB_CAP_RMA_IOV;
    shm.caps = (fab_caps){.provider = p->use_cma ? "cma" : "copy",
                          .flags = FAB_CAP_RING_MAPPED | FAB_CAP_RMA_CPU | FAB_CAP_STAGE |
                                   FAB_CAP_MEM_ALLOC | FAB_CAP_WAIT_FD | (p->use_cma ? rma : 0),
                          .priority = 100,
                          .max_bulk = (size_t)1 << 30,
                          .poll_interval = 32};
    /* the node key says who shares /dev/shm and may attach to my memory; the pid is
     * what single-copy transfers use; the job id and the name key name my segments;
     * then my ring offer */
    snprintf(card, cardlen, "shm:%s:%d/%s/%d/%u/%016llx%016llx", util_node_key(), (int)getpid(),
             p->job_id, p->nprocs, shm.p.local_nblocks, (unsigned long long)shm.key[0],
             (unsigned long long)shm.key[1]);
    return UTIL_OK;
}

static void shm_close(void)
{
    if (shm.stage) {
        munmap(shm.stage, shm.stage_len);
        util_shm_remove(shm.stage_name);
        shm.stage = NULL;
    }
    if (shm.door) {
        munmap(shm.door, shm.door_len);
        util_shm_remove(shm.door_name);
        shm.door = NULL;
    }
    free(shm.by_peer);
    shm.by_peer = NULL;
    shm.npeers = 0;
    shm.door_waits = 0;
    shm.foreign_waiting = 0;
}

static const fab_caps *shm_caps(void) { return &shm.caps; }

/* "shm:<node key>:<pid>": reachable on the same node only */
static int shm_reachable(const char *peer_card)
{
    const char *key = util_node_key();
    size_t n = strlen(key);
    if (strncmp(peer_card, "shm:", 4) != 0 || strncmp(peer_card + 4, key, n) != 0 ||
        peer_card[4 + n] != ':')
        return 0;
    /* --isolate shm: the daemon hands over the segments of this job and of its parent and
     * spawned jobs (another mpirun's are refused, with the reason, when first opened) */
    return 1;
}

/* "shm:<node key>:<pid>/<job id>/<job size>/<ring blocks>/<name key>": the pid, job id,
 * size (its door's length), the ring blocks it offers (a power of two, at least mine: the
 * smallest ring, DCFA_MAX_CREDIT, must agree) and the key of its segments' names (32 hex
 * digits) */
static int shm_card_parse(const char *card, pid_t *pid, char *job, size_t joblen, int *jobsize,
                          uint32_t *nblocks, uint64_t key[2])
{
    const char *slash = card ? strchr(card, '/') : NULL;
    const char *colon = slash ? slash : NULL;
    while (colon && colon > card && colon[-1] != ':')
        colon--;
    if (!slash || colon <= card)
        return UTIL_EPROTO;
    char *end = NULL;
    long v = strtol(colon, &end, 10);
    if (end != slash || v <= 0)
        return UTIL_EPROTO;
    *pid = (pid_t)v;
    const char *j = slash + 1, *slash2 = strchr(j, '/');
    if (!slash2 || slash2 == j || (size_t)(slash2 - j) >= joblen)
        return UTIL_EPROTO;
    memcpy(job, j, (size_t)(slash2 - j));
    job[slash2 - j] = 0;
    long n = strtol(slash2 + 1, &end, 10);
    if (*end != '/' || n <= 0 || n > FAB_RANK_MAX)
        return UTIL_EPROTO;
    *jobsize = (int)n;
    unsigned long nb = strtoul(end + 1, &end, 10);
    if (*end != '/' || nb < shm.p.nblocks || nb > (1ul << 24) || (nb & (nb - 1)))
        return UTIL_EPROTO;
    *nblocks = (uint32_t)(nb < shm.p.local_nblocks ? nb : shm.p.local_nblocks);
    if (strlen(end + 1) != 32)
        return UTIL_EPROTO;
    return fab_shm_card_key(card, key);
}

static unsigned shm_ring_blocks(const char *peer_card)
{
    pid_t pid;
    char job[40];
    int size;
    uint32_t nb = 0;
    uint64_t key[2];
    return shm_card_parse(peer_card, &pid, job, sizeof job, &size, &nb, key) == UTIL_OK ? nb : 0;
}

/* Raise my flag in the peer's door (a slot with my name when I am of another job).
 * UTIL_EAGAIN: every slot for other jobs is taken (retried from poll). */
static int shm_ring_door(fab_conn *c)
{
    char name[96];
    void *door;
    size_t len = sizeof(shm_door) + (size_t)c->door_size;
    fab_shm_name(name, sizeof name, c->job, FAB_GID_RANK(c->gid), c->key, 'd', 0, 0);
    int rc = util_shm_attach(name, len, "shm fabric", &door);
    if (rc == UTIL_ENOENT)
        util_log("shm: %s has no door segment /dev/shm%s (has it exited?)", util_proc(c->peer),
                 name);
    if (rc != UTIL_OK)
        return rc;
    shm_door *d = door;
    rc = UTIL_OK;
    if (!c->foreign) {
        atomic_store(&d->flag[shm.p.self], 1);
    } else {
        rc = UTIL_EAGAIN;
        for (int i = 0; i < SHM_FOREIGN_SLOTS && rc != UTIL_OK; i++) {
            uint64_t free_slot = 0;
            if (atomic_compare_exchange_strong(&d->foreign[i], &free_slot, shm_self_gid() + 1))
                rc = UTIL_OK;
        }
    }
    if (rc == UTIL_OK)
        atomic_fetch_add(&d->requests, 1);
    munmap(door, len);
    return rc;
}

/* map the peer's ring for me (it made it before raising its flag) and drop its name */
static int shm_map_peer_ring(fab_conn *c)
{
    char name[96];
    void *tx;
    fab_shm_name(name, sizeof name, c->job, FAB_GID_RANK(c->gid), c->key, 'r', shm_self_gid(),
                 c->foreign);
    int rc = util_shm_attach(name, shm_seg_bytes(c), "shm fabric", &tx);
    if (rc == UTIL_ENOENT)
        util_log("shm: %s announced its ring /dev/shm%s, which is not there", util_proc(c->peer),
                 name);
    if (rc != UTIL_OK)
        return rc;
    util_shm_remove(name);
    shm_prefault(tx, shm_seg_bytes(c));
    const shm_ring_hdr *h = tx;
    if (h->magic != SHM_RING_MAGIC || h->nblocks != c->nblocks || h->block_size != shm.p.block_size ||
        h->owner != c->gid || h->peer != shm_self_gid()) {
        util_log("shm: /dev/shm%s is not %s's ring for this one (%u blocks of %u bytes, made by "
                 "%llx for %llx)",
                 name, util_proc(c->peer), h->nblocks, h->block_size, (unsigned long long)h->owner,
                 (unsigned long long)h->peer);
        munmap(tx, shm_seg_bytes(c));
        return UTIL_EPROTO;
    }
    c->tx = (uint8_t *)tx + sizeof(shm_ring_hdr);
    c->ready = 1;
    return UTIL_OK;
}

static void shm_by_peer_grow(int lpid)
{
    if (lpid < shm.npeers)
        return;
    int n = shm.npeers ? shm.npeers : 8;
    while (n <= lpid)
        n *= 2;
    shm.by_peer = util_realloc(shm.by_peer, (size_t)n * sizeof *shm.by_peer);
    memset(shm.by_peer + shm.npeers, 0, (size_t)(n - shm.npeers) * sizeof *shm.by_peer);
    shm.npeers = n;
}

static int shm_connect(int peer, const char *peer_card, int passive, void *ctx, fab_conn **out,
                       void **rx)
{
    fab_conn *c = util_calloc(1, sizeof *c);
    if (shm_card_parse(peer_card, &c->pid, c->job, sizeof c->job, &c->door_size, &c->nblocks,
                       c->key) != UTIL_OK) {
        util_log("shm: %s's card '%s' is not one of this fabric, or offers rings of "
                 "fewer blocks than this process's %u (DCFA_MAX_CREDIT must agree)",
                 util_proc(peer), peer_card ? peer_card : "", shm.p.nblocks);
        free(c);
        return UTIL_EPROTO;
    }
    c->peer = peer;
    c->gid = shm_gid_of(peer);
    c->foreign = FAB_GID_JOB(c->gid) != shm.job;
    c->ctx = ctx;
    fab_shm_name(c->rx_name, sizeof c->rx_name, shm.p.job_id, shm.p.self, shm.key, 'r', c->gid,
                 c->foreign);
    void *ring;
    int rc = util_shm_create(c->rx_name, shm_seg_bytes(c), "shm fabric", &ring);
    if (rc == UTIL_ENOMEM)
        util_log("shm fabric: each connection needs a ring of %u x %zu bytes on each side "
                 "(DCFA_MAX_CREDIT x DCFA_BLOCK_SIZE, or with DCFA_MAX_CREDIT auto up to "
                 "DCFA_SHM_RING_MAX)", c->nblocks, shm.p.block_size);
    if (rc != UTIL_OK)
        goto free;
    shm_prefault(ring, shm_seg_bytes(c));
    *(shm_ring_hdr *)ring = (shm_ring_hdr){.magic = SHM_RING_MAGIC, .nblocks = c->nblocks,
                                           .block_size = (uint32_t)shm.p.block_size,
                                           .owner = shm_self_gid(), .peer = c->gid};
    c->rx = (uint8_t *)ring + sizeof(shm_ring_hdr);
    if (passive && (rc = shm_map_peer_ring(c)) != UTIL_OK)
        goto unmap;
    rc = shm_ring_door(c);
    if (rc == UTIL_EAGAIN) {
        c->door_wait = 1;   /* the peer's slots for other jobs are all in use: poll retries */
        shm.door_waits++;
    } else if (rc != UTIL_OK) {
        goto unmap;
    }
    shm_by_peer_grow(peer);
    shm.by_peer[peer] = c;
    *out = c;
    *rx = c->rx;
    if (c->ready)
        shm.p.up->ready(ctx, UTIL_OK);
    return UTIL_OK;
unmap:
    if (c->tx)
        shm_seg_unmap(c, c->tx);
    shm_seg_unmap(c, c->rx);
    util_shm_remove(c->rx_name);
free:
    free(c);
    return rc;
}

/* a peer whose ring for me is there: the connection is ready, or new */
static void shm_peer_arrived(int lpid)
{
    fab_conn *c = lpid < shm.npeers ? shm.by_peer[lpid] : NULL;
    if (lpid == shm.p.self || (c && c->ready))
        return;
    if (!c) {
        (void)shm.p.up->incoming(&fab_shm_ops, lpid);
        return;
    }
    int rc = shm_map_peer_ring(c);
    shm.p.up->ready(c->ctx, rc);
}

static void shm_door_retry(void)
{
    for (int i = 0; i < shm.npeers && shm.door_waits > 0; i++) {
        fab_conn *c = shm.by_peer[i];
        if (!c || !c->door_wait)
            continue;
        int rc = shm_ring_door(c);
        if (rc == UTIL_EAGAIN)
            continue;
        c->door_wait = 0;
        shm.door_waits--;
        if (rc != UTIL_OK)
            shm.p.up->ready(c->ctx, rc);
    }
}

/* the slots of processes of other jobs; one this process does not know yet (its
 * communicator is still being built here), or one that connects again while my side
 * of its previous connection is still closing, stays in its slot until then.
 * 1 if some slot waits so. */
static int shm_foreign_poll(int *events)
{
    int waiting = 0;
    for (int i = 0; i < SHM_FOREIGN_SLOTS; i++) {
        uint64_t g = atomic_load(&shm.door->foreign[i]);
        if (!g)
            continue;
        int lpid = shm.p.up->lpid_of ? shm.p.up->lpid_of(g - 1) : -1;
        /* a request from a process my connection to is still up: it closed its side
         * (MPI_Comm_disconnect) and connects again before mine is closed: it waits for that */
        fab_conn *c = lpid >= 0 && lpid < shm.npeers ? shm.by_peer[lpid] : NULL;
        if (lpid < 0 || (c && c->ready)) {
            waiting = 1;
            continue;
        }
        atomic_store(&shm.door->foreign[i], 0);
        ++*events;
        shm_peer_arrived(lpid);
    }
    return waiting;
}

/* the door: peers whose ring for me is there */
static int shm_poll(void)
{
    if (__builtin_expect(shm.door_waits > 0, 0))
        shm_door_retry();
    int events = 0;
    uint32_t now = atomic_load_explicit(&shm.door->requests, memory_order_acquire);
    if (now == shm.seen_requests) {
        if (__builtin_expect(shm.foreign_waiting, 0))
            shm.foreign_waiting = shm_foreign_poll(&events);
        return events;
    }
    shm.seen_requests = now;
    for (int i = 0; i < shm.p.nprocs; i++) {
        if (!atomic_load(&shm.door->flag[i]))
            continue;
        atomic_store(&shm.door->flag[i], 0);
        events++;
        shm_peer_arrived(i);
    }
    shm.foreign_waiting = shm_foreign_poll(&events);
    return events;
}

/* Shared memory has no descriptor: an idle wait may sleep only while no ring is connected
 * (the core checks), no door work waits, and no other process of this node could knock at
 * my door (I am alone on it: util_backoff_wait sleeps only then); nothing to sleep on */
static int shm_wait_fds(struct pollfd *fds, int cap)
{
    (void)fds, (void)cap;
    return shm.door_waits || shm.foreign_waiting || util_node_procs() > 1 ? -1 : 0;
}

static void *shm_tx_block(fab_conn *c, uint32_t pos)
{
    return c->tx + (size_t)(pos & (c->nblocks - 1)) * shm.p.block_size;
}

static void shm_tx_post(fab_conn *c, uint32_t pos, void *block, size_t bytes)
{
    atomic_store_explicit((_Atomic fab_mark *)block, pos + 1, memory_order_release);
}

/* ---- MPI_Alloc_mem blocks peers map ------------------------------------------------
 * A block is a memfd: a header page (written once, before the block is handed out), then
 * the bytes. Blocks live in a table of their own, apart from the fabric's state: one is
 * freed with MPI_Free_mem, which may come after MPI_Finalize closed the fabric. */
#define SHM_BLK_MAGIC 0x4b4c4244u   /* "DBLK" */
#define SHM_BLK_MAX 256
#define SHM_BLK_HDR 4096
#define SHM_BLK_LARGEST ((size_t)1 << 30)
#define SHM_KEY_FD_SHIFT 40         /* key: FAB_KEY_DIRECT | fd << 40 | generation (40 bits) */
#define SHM_KEY_GEN_MASK ((UINT64_C(1) << SHM_KEY_FD_SHIFT) - 1)
typedef struct shm_blk_hdr {
    uint32_t magic;
    uint32_t pad;
    uint64_t gen;       /* as in the key: a reused fd number names another block */
    uint64_t base, len; /* where the bytes are in the owner's address space */
} shm_blk_hdr;
typedef struct shm_blk {
    uint8_t *map;       /* NULL: free slot */
    size_t maplen;
    int fd;
    uint64_t key;
} shm_blk;
static shm_blk shm_blks[SHM_BLK_MAX];
static int shm_nblks;
static uint64_t shm_blk_gen;

static void *shm_mem_alloc(size_t len, size_t align)
{
    if (!util_cfg.alloc_shm || len < util_cfg.alloc_shm || len > SHM_BLK_LARGEST || align > SHM_BLK_HDR ||
        shm_nblks == SHM_BLK_MAX)
        return NULL;
    int slot = 0;
    while (shm_blks[slot].map)
        slot++;
    int fd = memfd_create("dcfa-alloc-mem", MFD_CLOEXEC);
    if (fd < 0 || fd >= (1 << (63 - SHM_KEY_FD_SHIFT))) {
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    size_t maplen = SHM_BLK_HDR + (len + 4095) / 4096 * 4096;
    uint8_t *map = ftruncate(fd, (off_t)maplen) == 0
                       ? mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
    if (map == MAP_FAILED) {
        close(fd);
        return NULL;
    }
    /* a child of fork() gets none of it: shared, its writes would land in this process's
     * buffer, where heap memory would be copied on write */
    (void)madvise(map, maplen, MADV_DONTFORK);
    uint64_t gen = ++shm_blk_gen & SHM_KEY_GEN_MASK;
    *(shm_blk_hdr *)map = (shm_blk_hdr){.magic = SHM_BLK_MAGIC, .gen = gen,
                                        .base = (uint64_t)(uintptr_t)(map + SHM_BLK_HDR), .len = len};
    shm_blks[slot] = (shm_blk){.map = map, .maplen = maplen, .fd = fd,
                               .key = FAB_KEY_DIRECT | (uint64_t)fd << SHM_KEY_FD_SHIFT | gen};
    shm_nblks++;
    return map + SHM_BLK_HDR;
}

static void shm_mem_free(void *base, size_t len)
{
    for (int i = 0; i < SHM_BLK_MAX; i++) {
        shm_blk *b = &shm_blks[i];
        if (!b->map || b->map + SHM_BLK_HDR != (uint8_t *)base)
            continue;
        /* peers may still map it: its pages go now all the same (they never touch it again:
         * a new block has a new generation, so no key of theirs names this one) */
        (void)fallocate(b->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)b->maplen);
        munmap(b->map, b->maplen);
        close(b->fd);
        *b = (shm_blk){0};
        shm_nblks--;
        return;
    }
}

static int shm_mem_reg(const void *buf, size_t len, fab_mem *mem)
{
    mem->addr = (uint64_t)(uintptr_t)buf;
    mem->key = 0;
    mem->handle = NULL;
    for (int i = 0, seen = 0; seen < shm_nblks && i < SHM_BLK_MAX; i++) {
        const shm_blk *b = &shm_blks[i];
        if (!b->map)
            continue;
        seen++;
        const uint8_t *lo = b->map + SHM_BLK_HDR, *p = buf;
        if (p >= lo && p <= b->map + b->maplen && len <= (size_t)(b->map + b->maplen - p)) {
            mem->key = b->key;
            break;
        }
    }
    return UTIL_OK;
}

static void shm_mem_dereg(fab_mem *mem) {}

static void shm_mem_release(const void *buf, size_t len) {}

static int shm_bulk(fab_conn *c, const struct iovec *local, int nlocal, uint64_t raddr,
                    size_t len, int write)
{
    struct iovec remote = {(void *)(uintptr_t)raddr, len};
    size_t done = 0;
    int li = 0;
    struct iovec cur[64];
    /* process_vm_* take at most IOV_MAX iovecs and may transfer partially */
    while (done < len) {
        int n = 0;
        size_t chunk = 0;
        while (li < nlocal && n < 64) {
            cur[n++] = local[li++];
            chunk += cur[n - 1].iov_len;
        }
        remote.iov_base = (void *)(uintptr_t)(raddr + done);
        remote.iov_len = chunk;
        size_t got = 0;
        while (got < chunk) {
            ssize_t r = write ? process_vm_writev(c->pid, cur, (unsigned long)n, &remote, 1, 0)
                              : process_vm_readv(c->pid, cur, (unsigned long)n, &remote, 1, 0);
            if (r <= 0) {
                if (r < 0 && errno == EINTR)
                    continue;
                int err = r < 0 ? errno : EIO;
                util_log("shm: process_vm_%s with %s (pid %d) failed: %s",
                         write ? "writev" : "readv", util_proc(c->peer), (int)c->pid,
                         strerror(err));
                return err == EPERM || err == ENOSYS ? UTIL_EPERM : -err;
            }
            got += (size_t)r;
            /* advance local and remote past what moved */
            size_t skip = (size_t)r;
            int k = 0;
            while (k < n && skip >= cur[k].iov_len)
                skip -= cur[k++].iov_len;
            memmove(cur, cur + k, (size_t)(n - k) * sizeof cur[0]);
            n -= k;
            if (n > 0) {
                cur[0].iov_base = (char *)cur[0].iov_base + skip;
                cur[0].iov_len -= skip;
            }
            remote.iov_base = (char *)remote.iov_base + r;
            remote.iov_len -= (size_t)r;
        }
        done += chunk;
        if (li >= nlocal)
            break;
    }
    return UTIL_OK;
}

static void shm_peer_blk_drop(shm_peer_blk *b)
{
    munmap(b->map, b->maplen);
    *b = (shm_peer_blk){0};
}

/* map the peer's block named by key (its fd and generation): NULL when it cannot be */
static shm_peer_blk *shm_peer_blk_map(fab_conn *c, uint64_t key)
{
    if (c->pidfd == 0) {
        c->pidfd = (int)syscall(SYS_pidfd_open, c->pid, 0);
        if (c->pidfd <= 0) {
            util_log("shm: pidfd_open of %s (pid %d): %m; its MPI_Alloc_mem memory is "
                     "reached with process_vm_readv/writev",
                     util_proc(c->peer), (int)c->pid);
            c->pidfd = -1;
            c->direct_off = 1;
            return NULL;
        }
    }
    int fd = (int)syscall(SYS_pidfd_getfd, c->pidfd, (int)((key & ~FAB_KEY_DIRECT) >> SHM_KEY_FD_SHIFT), 0);
    if (fd < 0) {
        if (errno == EPERM || errno == ENOSYS || errno == ESRCH) {
            util_log("shm: pidfd_getfd from %s (pid %d): %m; its MPI_Alloc_mem memory is "
                     "reached with process_vm_readv/writev",
                     util_proc(c->peer), (int)c->pid);
            c->direct_off = 1;
        }
        return NULL;    /* EBADF: that block is gone (a stale key cannot reach here) */
    }
    struct stat st;
    uint8_t *map = MAP_FAILED;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > SHM_BLK_HDR &&
        (uint64_t)st.st_size <= SHM_BLK_HDR + SHM_BLK_LARGEST)
        map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);  /* the mapping keeps the memory */
    if (map == MAP_FAILED)
        return NULL;    /* the fd number names something else now */
    shm_blk_hdr h;
    memcpy(&h, map, sizeof h);
    if (h.magic != SHM_BLK_MAGIC || h.gen != (key & SHM_KEY_GEN_MASK) ||
        h.len > (uint64_t)st.st_size - SHM_BLK_HDR || h.base + h.len < h.base) {
        munmap(map, (size_t)st.st_size);
        return NULL;    /* another block has that fd number now */
    }
    if (!c->blks)
        c->blks = util_calloc(SHM_PEER_BLKS, sizeof *c->blks);
    shm_peer_blk *b = &c->blks[0];
    for (int i = 0; i < SHM_PEER_BLKS; i++) {
        if (!c->blks[i].key) {
            b = &c->blks[i];
            break;
        }
        if (c->blks[i].used < b->used)
            b = &c->blks[i];
    }
    if (b->key)
        shm_peer_blk_drop(b);
    *b = (shm_peer_blk){.key = key, .map = map, .maplen = (size_t)st.st_size, .base = h.base, .len = h.len};
    return b;
}

/* where [raddr, raddr + len) of the peer's block `key` is mapped here, or NULL */
static uint8_t *shm_direct(fab_conn *c, uint64_t raddr, uint64_t key, size_t len)
{
    if (!(key & FAB_KEY_DIRECT) || c->direct_off)
        return NULL;
    shm_peer_blk *b = NULL;
    for (int i = 0; i < SHM_PEER_BLKS && c->blks && !b; i++)
        if (c->blks[i].key == key)
            b = &c->blks[i];
    if (!b && !(b = shm_peer_blk_map(c, key)))
        return NULL;
    b->used = ++c->blk_clock;
    if (raddr < b->base || raddr - b->base > b->len || len > b->len - (raddr - b->base))
        return NULL;
    return b->map + SHM_BLK_HDR + (raddr - b->base);
}

/* a direct copy into the local buffers (read) or the peer's block (write); op->nt: the
 * destination is a window no cache keeps, written with non-temporal stores */
static void shm_direct_copy(uint8_t *blk, const struct iovec *local, int nlocal, size_t len, int write,
                            const fab_op *op)
{
    size_t nt_min = op->nt ? 1 : 0;
    for (int i = 0; i < nlocal && len; i++) {
        size_t n = local[i].iov_len < len ? local[i].iov_len : len;
        if (write)
            util_copy_nt(blk, local[i].iov_base, n, nt_min);
        else
            util_copy_nt(local[i].iov_base, blk, n, nt_min);
        blk += n;
        len -= n;
    }
}

static int shm_read(fab_conn *c, const struct iovec *local, int nlocal, uint64_t raddr, uint64_t rkey,
                    size_t len, fab_op *op)
{
    uint8_t *src = shm_direct(c, raddr, rkey, len);
    if (!src)
        return shm_bulk(c, local, nlocal, raddr, len, 0);
    shm_direct_copy(src, local, nlocal, len, 0, op);
    return FAB_DIRECT;
}

static int shm_write(fab_conn *c, const struct iovec *local, int nlocal, uint64_t raddr, uint64_t rkey,
                     size_t len, fab_op *op)
{
    uint8_t *dst = shm_direct(c, raddr, rkey, len);
    if (!dst)
        return shm_bulk(c, local, nlocal, raddr, len, 1);
    shm_direct_copy(dst, local, nlocal, len, 1, op);
    return FAB_DIRECT;
}

/* drop `done` bytes from the front of an iovec list (in place) */
static int shm_iov_advance(struct iovec *v, int n, size_t done)
{
    int k = 0;
    while (k < n && done >= v[k].iov_len)
        done -= v[k++].iov_len;
    memmove(v, v + k, (size_t)(n - k) * sizeof *v);
    n -= k;
    if (n > 0 && done) {
        v[0].iov_base = (char *)v[0].iov_base + done;
        v[0].iov_len -= done;
    }
    return n;
}

/* both sides scattered: one system call moves up to FAB_IOV_MAX pieces each way */
static int shm_bulkv(fab_conn *c, const struct iovec *local, int nlocal, const struct iovec *remote,
                     int nremote, int write)
{
    pid_t pid = c->pid;
    if (nlocal > FAB_IOV_MAX || nremote > FAB_IOV_MAX)
        return UTIL_EINVAL;
    struct iovec l[FAB_IOV_MAX], r[FAB_IOV_MAX];
    memcpy(l, local, (size_t)nlocal * sizeof *l);
    memcpy(r, remote, (size_t)nremote * sizeof *r);
    while (nlocal > 0 && nremote > 0) {
        ssize_t n = write ? process_vm_writev(pid, l, (unsigned long)nlocal, r, (unsigned long)nremote, 0)
                          : process_vm_readv(pid, l, (unsigned long)nlocal, r, (unsigned long)nremote, 0);
        if (n <= 0) {
            if (n < 0 && errno == EINTR)
                continue;
            util_log("shm: process_vm_%s from %s (pid %d) failed: %m", write ? "writev" : "readv",
                     util_proc(c->peer), (int)pid);
            return UTIL_EIO;
        }
        nlocal = shm_iov_advance(l, nlocal, (size_t)n);
        nremote = shm_iov_advance(r, nremote, (size_t)n);
    }
    return UTIL_OK;
}

static int shm_readv(fab_conn *c, const struct iovec *local, int nlocal, const struct iovec *remote,
                     int nremote, uint64_t rkey, fab_op *op)
{
    return shm_bulkv(c, local, nlocal, remote, nremote, 0);
}

static int shm_writev(fab_conn *c, const struct iovec *local, int nlocal,
                      const struct iovec *remote, int nremote, uint64_t rkey, fab_op *op)
{
    return shm_bulkv(c, local, nlocal, remote, nremote, 1);
}


/* my staging pool: made once, exclusively, like a ring */
static void *shm_stage_create(size_t len)
{
    if (shm.stage)
        return shm.stage_len == len ? shm.stage : NULL;
    char name[96];
    fab_shm_name(name, sizeof name, shm.p.job_id, shm.p.self, shm.key, 's', 0, 0);
    void *mem;
    if (util_shm_create(name, len, "shm staging pool", &mem) != UTIL_OK)
        return NULL;
    snprintf(shm.stage_name, sizeof shm.stage_name, "%s", name);
    shm.stage = mem;
    shm.stage_len = len;
    return mem;
}

/* the peer's pool, named by its job, rank and name key (from its card and gid) */
static void *shm_stage_map(fab_conn *c, size_t len)
{
    if (c->stage)
        return c->stage_len == len ? c->stage : NULL;
    char name[96];
    fab_shm_name(name, sizeof name, c->job, FAB_GID_RANK(c->gid), c->key, 's', 0, 0);
    void *mem;
    if (util_shm_attach(name, len, "shm staging pool", &mem) != UTIL_OK)
        return NULL;
    c->stage = mem;
    c->stage_len = len;
    return mem;
}

static void shm_footprint(fab_conn *c, fab_usage *u)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (c) {
        size_t seg = (shm_seg_bytes(c) + page - 1) / page * page;
        u->rings += seg;
        u->endpoint += sizeof *c;
        if (c->tx)
            u->mapped += seg;
        u->mapped += c->stage_len;
        for (int i = 0; i < SHM_PEER_BLKS && c->blks; i++)
            u->mapped += c->blks[i].maplen;
        u->endpoint += c->blks ? SHM_PEER_BLKS * sizeof *c->blks : 0;
    } else {
        u->endpoint += shm.door_len;
        u->rings += shm.stage_len;
    }
}

static void shm_disconnect(fab_conn *c)
{
    shm.by_peer[c->peer] = NULL;
    if (c->door_wait)
        shm.door_waits--;
    if (c->tx)
        shm_seg_unmap(c, c->tx);
    if (c->stage)
        munmap(c->stage, c->stage_len);
    for (int i = 0; i < SHM_PEER_BLKS && c->blks; i++)
        if (c->blks[i].key)
            shm_peer_blk_drop(&c->blks[i]);
    free(c->blks);
    if (c->pidfd > 0)
        close(c->pidfd);
    shm_seg_unmap(c, c->rx);
    util_shm_remove(c->rx_name); /* if the peer never mapped it */
    free(c);
}

static const fab_chan_ops shm_chan = {
    .ring_blocks = shm_ring_blocks,
    .connect = shm_connect,
    .disconnect = shm_disconnect,
    .tx_block = shm_tx_block,
    .tx_post = shm_tx_post,
};

static const fab_mr_ops shm_mr = {
    .reg = shm_mem_reg,
    .dereg = shm_mem_dereg,
    .release = shm_mem_release,
};

static const fab_rma_ops shm_rma = {
    .read = shm_read,
    .write = shm_write,
    .readv = shm_readv,
    .writev = shm_writev,
};

static const fab_stage_ops shm_stage = {
    .pool_create = shm_stage_create,
    .pool_map = shm_stage_map,
    .mem_alloc = shm_mem_alloc,
    .mem_free = shm_mem_free,
};

const fab_ops fab_shm_ops = {
    .name = "shm",
    .open = shm_open_ep,
    .close = shm_close,
    .caps = shm_caps,
    .reachable = shm_reachable,
    .poll = shm_poll,
    .footprint = shm_footprint,
    .wait_fds = shm_wait_fds,
    .chan = &shm_chan,
    .mr = &shm_mr,
    .rma = &shm_rma,
    .stage = &shm_stage,
};
