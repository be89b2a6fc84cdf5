/* shm fabric: connections between processes of one node.
 *
 * Each process owns a small "door" segment /dcfa-<job>-<self> where peers
 * announce new connections. A connection is one segment
 * /dcfa-<job>-<lo>-<hi> holding two receive rings (lo->hi and hi->lo) of
 * nblocks x block_size bytes each; it is made on first use by either side
 * with O_CREAT, and a zero-filled ring is an empty ring, so there is no
 * initialisation race. The second process to map it unlinks the name, so a
 * finished job leaves nothing in /dev/shm (mpirun removes what a crash left).
 * Bulk data moves single-copy with process_vm_readv/writev. */
#include "fabric/fabric.h"
#include "util/util.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct shm_door {
    _Atomic uint32_t requests;      /* bumped after a peer sets its flag */
    uint32_t pad[15];
    _Atomic uint8_t flag[];         /* flag[peer] = 1: peer connected to me */
} shm_door;

typedef struct shm_pair_hdr {
    _Atomic uint32_t attached;      /* processes that mapped the segment */
    _Atomic int32_t pid[2];         /* [0] the lower process id's pid, [1] the higher's */
    uint32_t pad[13];
} shm_pair_hdr;
_Static_assert(sizeof(shm_pair_hdr) == 64, "pair header is one cache line");

struct fab_conn {
    int peer;
    int side;           /* 0 if self < peer */
    void *base;
    size_t len;
    shm_pair_hdr *hdr;
};

static struct {
    fab_params p;
    shm_door *door;
    size_t door_len;
    char door_name[64];
    uint32_t seen_requests;
    int scan_from;
} shm;

static size_t shm_ring_bytes(void) { return (size_t)shm.p.nblocks * shm.p.block_size; }

static void shm_name(char *buf, size_t len, int a, int b)
{
    if (b < 0)
        snprintf(buf, len, "/dcfa-%s-%d", shm.p.job_id, a);
    else
        snprintf(buf, len, "/dcfa-%s-%d-%d", shm.p.job_id, a, b);
}

static void *shm_map(const char *name, size_t len, int create)
{
    int fd = shm_open(name, O_RDWR | (create ? O_CREAT : 0), 0600);
    if (fd < 0) {
        if (create || errno != ENOENT)
            util_log("shm: cannot open %s: %m", name);
        return NULL;
    }
    if (create && ftruncate(fd, (off_t)len) != 0) {
        util_log("shm: cannot size %s to %zu bytes: %m", name, len);
        close(fd);
        return NULL;
    }
    struct stat st;
    if (!create && (fstat(fd, &st) != 0 || (size_t)st.st_size < len)) {
        /* its owner made it but has not sized it yet: not there for us yet */
        close(fd);
        errno = ENOENT;
        return NULL;
    }
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        util_log("shm: cannot map %s (%zu bytes): %m", name, len);
        return NULL;
    }
    return p;
}

static int shm_open_ep(const fab_params *p, char *addr, size_t addrlen)
{
    shm.p = *p;
    shm.door_len = sizeof(shm_door) + (size_t)p->nprocs;
    shm_name(shm.door_name, sizeof shm.door_name, p->self, -1);
    shm.door = shm_map(shm.door_name, shm.door_len, 1);
    if (!shm.door)
        return UTIL_EIO;
    char host[128] = "";
    gethostname(host, sizeof host - 1);
    snprintf(addr, addrlen, "shm:%s", host);
    return UTIL_OK;
}

static void shm_close(void)
{
    if (shm.door) {
        munmap(shm.door, shm.door_len);
        shm_unlink(shm.door_name);
        shm.door = NULL;
    }
}

static int shm_reachable(const char *peer_addr)
{
    char host[128] = "";
    gethostname(host, sizeof host - 1);
    return strncmp(peer_addr, "shm:", 4) == 0 && strcmp(peer_addr + 4, host) == 0;
}

static int shm_attach(int peer, fab_conn **out, fab_rings *rings)
{
    char name[96];
    int lo = shm.p.self < peer ? shm.p.self : peer;
    int hi = shm.p.self < peer ? peer : shm.p.self;
    size_t len = sizeof(shm_pair_hdr) + 2 * shm_ring_bytes();
    shm_name(name, sizeof name, lo, hi);
    void *base = shm_map(name, len, 1);
    if (!base)
        return UTIL_EIO;
    fab_conn *c = util_calloc(1, sizeof *c);
    c->peer = peer;
    c->side = shm.p.self < peer ? 0 : 1;
    c->base = base;
    c->len = len;
    c->hdr = base;
    atomic_store(&c->hdr->pid[c->side], (int32_t)getpid());
    if (atomic_fetch_add(&c->hdr->attached, 1) == 1)
        shm_unlink(name);   /* both sides have it mapped: the name is no longer needed */
    uint8_t *ring0 = (uint8_t *)base + sizeof(shm_pair_hdr); /* lo -> hi */
    uint8_t *ring1 = ring0 + shm_ring_bytes();                /* hi -> lo */
    rings->rx = c->side == 0 ? ring1 : ring0;
    rings->tx = c->side == 0 ? ring0 : ring1;
    *out = c;
    return UTIL_OK;
}

static int shm_connect(int peer, const char *peer_addr, int passive, fab_conn **out,
                       fab_rings *rings)
{
    char name[96];
    int rc = shm_attach(peer, out, rings);
    if (rc != UTIL_OK || passive)
        return rc;
    /* ring the peer's door */
    shm_name(name, sizeof name, peer, -1);
    size_t door_len = sizeof(shm_door) + (size_t)shm.p.nprocs;
    /* a peer still starting up may not have made its door yet: wait for it a while */
    shm_door *door = NULL;
    for (int tries = 0; !door && tries < 60000; tries++) {
        door = shm_map(name, door_len, 0);
        if (!door)
            usleep(1000);
    }
    if (!door) {
        util_log("shm: process %d has no door segment %s after 60 s (has it exited?)", peer, name);
        return UTIL_ECONN;
    }
    atomic_store(&door->flag[shm.p.self], 1);
    atomic_fetch_add(&door->requests, 1);
    munmap(door, door_len);
    return UTIL_OK;
}

static int shm_accept(int *peer)
{
    uint32_t now = atomic_load_explicit(&shm.door->requests, memory_order_acquire);
    if (now == shm.seen_requests)
        return 0;
    for (int i = 0; i < shm.p.nprocs; i++) {
        if (atomic_load(&shm.door->flag[i])) {
            atomic_store(&shm.door->flag[i], 0);
            *peer = i;
            return 1;
        }
    }
    shm.seen_requests = now;
    return 0;
}

static void shm_caps(fab_caps *caps)
{
    caps->priority = 100;
    caps->has_rdma = shm.p.use_cma;
}

static int shm_bulk(fab_conn *c, const struct iovec *local, int nlocal, uint64_t raddr,
                    size_t len, int write)
{
    pid_t pid = atomic_load(&c->hdr->pid[1 - c->side]);
    if (pid <= 0)
        return UTIL_ECONN;
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
            ssize_t r = write ? process_vm_writev(pid, cur, (unsigned long)n, &remote, 1, 0)
                              : process_vm_readv(pid, cur, (unsigned long)n, &remote, 1, 0);
            if (r <= 0) {
                if (r < 0 && errno == EINTR)
                    continue;
                util_log("shm: process_vm_%s from process %d (pid %d) failed: %m",
                         write ? "writev" : "readv", c->peer, (int)pid);
                return UTIL_EIO;
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

static int shm_read(fab_conn *c, const struct iovec *local, int nlocal, uint64_t raddr, size_t len)
{
    return shm_bulk(c, local, nlocal, raddr, len, 0);
}

static int shm_write(fab_conn *c, const struct iovec *local, int nlocal, uint64_t raddr, size_t len)
{
    return shm_bulk(c, local, nlocal, raddr, len, 1);
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
    pid_t pid = atomic_load(&c->hdr->pid[1 - c->side]);
    if (pid <= 0)
        return UTIL_ECONN;
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
            util_log("shm: process_vm_%s from process %d (pid %d) failed: %m",
                     write ? "writev" : "readv", c->peer, (int)pid);
            return UTIL_EIO;
        }
        nlocal = shm_iov_advance(l, nlocal, (size_t)n);
        nremote = shm_iov_advance(r, nremote, (size_t)n);
    }
    return UTIL_OK;
}

static int shm_readv(fab_conn *c, const struct iovec *local, int nlocal, const struct iovec *remote,
                     int nremote)
{
    return shm_bulkv(c, local, nlocal, remote, nremote, 0);
}

static int shm_writev(fab_conn *c, const struct iovec *local, int nlocal,
                      const struct iovec *remote, int nremote)
{
    return shm_bulkv(c, local, nlocal, remote, nremote, 1);
}

static size_t shm_footprint(fab_conn *c) { return c->len; }

static void shm_disconnect(fab_conn *c)
{
    munmap(c->base, c->len);
    free(c);
}

const fab_ops fab_shm_ops = {
    .name = "shm",
    .open = shm_open_ep,
    .close = shm_close,
    .reachable = shm_reachable,
    .connect = shm_connect,
    .accept = shm_accept,
    .caps = shm_caps,
    .read = shm_read,
    .write = shm_write,
    .readv = shm_readv,
    .writev = shm_writev,
    .footprint = shm_footprint,
    .disconnect = shm_disconnect,
};
