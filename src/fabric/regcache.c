/* The registration cache (regcache.h). */
#include "fabric/regcache.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void fab_rcache_init(fab_rcache *rc, int max, int (*reg)(void *, fab_rentry *),
                     void (*dereg)(void *, fab_rentry *), void *arg)
{
    memset(rc, 0, sizeof *rc);
    rc->max = max < 0 ? 0 : max;
    rc->reg = reg;
    rc->dereg = dereg;
    rc->arg = arg;
    util_queue_init(&rc->lru);
}

/* index of the last entry starting at or before addr, -1 if none */
static int fab_rcache_find(const fab_rcache *rc, uintptr_t addr)
{
    int lo = 0, hi = rc->n - 1, at = -1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (rc->v[mid]->start <= addr) {
            at = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return at;
}

static void fab_rcache_free(fab_rcache *rc, fab_rentry *e)
{
    rc->dereg(rc->arg, e);
    rc->bytes -= e->end - e->start;
    free(e);
}

/* take entry i out of the sorted array: freed now if unused, else when its last user lets go */
static void fab_rcache_detach(fab_rcache *rc, int i)
{
    fab_rentry *e = rc->v[i];
    memmove(rc->v + i, rc->v + i + 1, (size_t)(rc->n - i - 1) * sizeof *rc->v);
    rc->n--;
    if (e->refs == 0) {
        util_queue_remove(&e->lru);
        fab_rcache_free(rc, e);
    } else {
        e->detached = 1;
    }
}

static void fab_rcache_insert(fab_rcache *rc, fab_rentry *e)
{
    if (rc->n == rc->cap) {
        rc->cap = rc->cap ? 2 * rc->cap : 16;
        rc->v = util_realloc(rc->v, (size_t)rc->cap * sizeof *rc->v);
    }
    int at = fab_rcache_find(rc, e->start) + 1;
    memmove(rc->v + at + 1, rc->v + at, (size_t)(rc->n - at) * sizeof *rc->v);
    rc->v[at] = e;
    rc->n++;
}

static fab_rentry *fab_rcache_new(fab_rcache *rc, uintptr_t start, uintptr_t end)
{
    fab_rentry *e = util_calloc(1, sizeof *e);
    e->start = start;
    e->end = end;
    e->lru.next = e->lru.prev = &e->lru;
    if (rc->reg(rc->arg, e) != UTIL_OK) {
        free(e);
        return NULL;
    }
    rc->bytes += end - start;
    return e;
}

fab_rentry *fab_rcache_get(fab_rcache *rc, const void *buf, size_t len)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t s = (uintptr_t)buf & ~(page - 1);
    uintptr_t e = ((uintptr_t)buf + (len ? len : 1) + page - 1) & ~(page - 1);
    int i = fab_rcache_find(rc, s);
    if (i >= 0 && rc->v[i]->end >= e) {
        fab_rentry *hit = rc->v[i];
        if (hit->refs++ == 0)
            util_queue_remove(&hit->lru);
        rc->hits++;
        return hit;
    }
    rc->misses++;
    /* cached entries overlapping [s, e) are contiguous in the array: replace them by the union */
    int first = i >= 0 && rc->v[i]->end > s ? i : i + 1;
    int last = first;
    uintptr_t us = s, ue = e;
    while (last < rc->n && rc->v[last]->start < e) {
        if (rc->v[last]->start < us)
            us = rc->v[last]->start;
        if (rc->v[last]->end > ue)
            ue = rc->v[last]->end;
        last++;
    }
    for (int k = last - 1; k >= first; k--)
        fab_rcache_detach(rc, k);
    fab_rentry *ne = NULL;
    if (us != s || ue != e)
        ne = fab_rcache_new(rc, us, ue);    /* may fail if some of it was unmapped since */
    if (!ne)
        ne = fab_rcache_new(rc, s, e);
    if (!ne)
        return NULL;
    ne->refs = 1;
    fab_rcache_insert(rc, ne);
    /* keep at most max unused entries */
    while (rc->n > rc->max && !util_queue_empty(&rc->lru)) {
        fab_rentry *old = UTIL_CONTAINER(util_queue_first(&rc->lru), fab_rentry, lru);
        int at = fab_rcache_find(rc, old->start);
        fab_rcache_detach(rc, at);
    }
    return ne;
}

void fab_rcache_put(fab_rcache *rc, fab_rentry *e)
{
    if (--e->refs > 0)
        return;
    if (e->detached) {
        fab_rcache_free(rc, e);
        return;
    }
    if (rc->max == 0) {
        fab_rcache_detach(rc, fab_rcache_find(rc, e->start));
        return;
    }
    util_queue_push(&rc->lru, &e->lru);
    while (rc->n > rc->max && !util_queue_empty(&rc->lru)) {
        fab_rentry *old = UTIL_CONTAINER(util_queue_first(&rc->lru), fab_rentry, lru);
        fab_rcache_detach(rc, fab_rcache_find(rc, old->start));
    }
}

void fab_rcache_release(fab_rcache *rc, const void *buf, size_t len)
{
    uintptr_t s = (uintptr_t)buf, e = (uintptr_t)buf + len;
    int i = fab_rcache_find(rc, s);
    int k = i >= 0 && rc->v[i]->end > s ? i : i + 1;
    while (k < rc->n && rc->v[k]->start < e)
        fab_rcache_detach(rc, k);   /* the next one slides into k */
}

void fab_rcache_destroy(fab_rcache *rc)
{
    while (rc->n > 0)
        fab_rcache_detach(rc, rc->n - 1);
    free(rc->v);
    rc->v = NULL;
    rc->cap = 0;
}
