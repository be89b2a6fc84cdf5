/* A registration cache for fabrics whose memory registration costs a
 * system call or pins pages (ofi). Registrations cover whole pages, never
 * overlap (a request that overlaps cached ones is registered as their union
 * and replaces them), are found by binary search on their start, and are
 * kept after use in least-recently-used order, at most `max` of them; an
 * entry in use is never dropped, only detached (freed when its last user
 * lets go).
 *
 * The classic hazard of such caches is memory that is freed and reused
 * while a registration of it is cached: the rule here is that the layers
 * above call fab_rcache_release (through fab_ops.mem_release) when they free
 * memory they handed out (MPI_Free_mem, window free); memory the
 * application frees itself may stay registered until evicted, which is
 * harmless for providers that do not pin pages (tcp, sockets, shm) and is
 * why DCFA_MR_CACHE=0 exists for those that do. See docs/fabric.md. */
#ifndef DCFA_FABRIC_REGCACHE_H
#define DCFA_FABRIC_REGCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

typedef struct fab_rentry {
    uintptr_t start, end;   /* [start, end), page aligned */
    int refs;
    int detached;           /* replaced or released: no longer found, freed at refs 0 */
    util_qnode lru;         /* in the cache's LRU list while unused */
    void *mr;               /* the fabric's registration */
    void *desc;             /* local descriptor */
    uint64_t key;           /* what a peer needs */
} fab_rentry;

typedef struct fab_rcache {
    fab_rentry **v;         /* attached entries, sorted by start */
    int n, cap;
    int max;                /* unused entries kept */
    util_queue lru;
    size_t bytes;           /* registered */
    uint64_t hits, misses;
    /* register e->start..e->end, filling mr, desc and key; 0 or a negative status */
    int (*reg)(void *arg, fab_rentry *e);
    void (*dereg)(void *arg, fab_rentry *e);
    void *arg;
} fab_rcache;

void fab_rcache_init(fab_rcache *rc, int max, int (*reg)(void *, fab_rentry *),
                     void (*dereg)(void *, fab_rentry *), void *arg);
/* a registration covering [buf, buf+len), held until fab_rcache_put; NULL if it cannot be made */
fab_rentry *fab_rcache_get(fab_rcache *rc, const void *buf, size_t len);
void fab_rcache_put(fab_rcache *rc, fab_rentry *e);
/* [buf, buf+len) is being freed: forget registrations that touch it */
void fab_rcache_release(fab_rcache *rc, const void *buf, size_t len);
/* every registration is dropped (entries still held are freed by their last put) */
void fab_rcache_destroy(fab_rcache *rc);

#endif
