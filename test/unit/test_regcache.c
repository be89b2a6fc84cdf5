/* Unit test of the registration cache (src/fabric/regcache.c) with a fake
 * fabric that counts registrations: hits inside a cached range, a request
 * overlapping cached ranges registered as their union, least-recently-used
 * eviction within the bound, entries in use never dropped, release on free,
 * and no caching at all with max 0. */
#include "fabric/regcache.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int live, regs, deregs, fail_next;
#include "ut_check.h"

static int fake_reg(void *arg, fab_rentry *e)
{
    if (fail_next) {
        fail_next--;
        return UTIL_EIO;
    }
    regs++;
    live++;
    e->key = (uint64_t)regs;
    return UTIL_OK;
}

static void fake_dereg(void *arg, fab_rentry *e) { deregs++, live--; }

int main(void)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    char *mem = aligned_alloc(pg, 64 * pg);
    fab_rcache rc;
    fab_rcache_init(&rc, 4, fake_reg, fake_dereg, NULL);

    /* a miss, then hits inside the registered pages */
    fab_rentry *a = fab_rcache_get(&rc, mem + 10, 100);
    CHECK(a && a->start == (uintptr_t)mem && a->end == (uintptr_t)mem + pg, "page-aligned entry");
    fab_rentry *b = fab_rcache_get(&rc, mem + 200, pg - 200);
    CHECK(b == a && a->refs == 2 && regs == 1, "hit in the same page: refs %d regs %d", a->refs,
          regs);
    fab_rcache_put(&rc, a);
    fab_rcache_put(&rc, b);
    CHECK(live == 1 && rc.n == 1, "unused entry stays cached");

    /* overlapping the cached page and the next: one registration of the union replaces it */
    fab_rentry *u = fab_rcache_get(&rc, mem + pg - 8, 16);
    CHECK(u && u->start == (uintptr_t)mem && u->end == (uintptr_t)mem + 2 * pg && rc.n == 1 &&
              live == 1,
          "union of overlapping ranges: n %d live %d", rc.n, live);
    /* an entry in use that gets replaced is only detached */
    fab_rentry *v = fab_rcache_get(&rc, mem + pg, 2 * pg);
    CHECK(v && v != u && u->detached && live == 2 && rc.n == 1,
          "in-use entry detached, not dropped");
    fab_rcache_put(&rc, u);
    CHECK(live == 1, "detached entry freed at its last put (live %d)", live);
    fab_rcache_put(&rc, v);

    /* LRU within the bound of 4 unused entries */
    fab_rentry *e[6];
    for (int i = 0; i < 6; i++) {
        e[i] = fab_rcache_get(&rc, mem + (size_t)(10 + 4 * i) * pg, 10);
        fab_rcache_put(&rc, e[i]);
    }
    CHECK(rc.n == 4 && live == 4, "bound kept: n %d live %d", rc.n, live);
    int before = regs;
    fab_rentry *last = fab_rcache_get(&rc, mem + (size_t)(10 + 4 * 5) * pg, 10);
    CHECK(regs == before && last, "most recent still cached");
    fab_rcache_put(&rc, last);
    fab_rentry *first = fab_rcache_get(&rc, mem + 10 * pg, 10);
    CHECK(regs == before + 1, "least recent was evicted");
    /* entries in use are never evicted, even beyond the bound */
    fab_rentry *held[6];
    for (int i = 0; i < 6; i++)
        held[i] = fab_rcache_get(&rc, mem + (size_t)(40 + 3 * i) * pg, 10);
    CHECK(rc.n >= 7 && live == rc.n, "held entries stay: n %d", rc.n);
    for (int i = 0; i < 6; i++)
        fab_rcache_put(&rc, held[i]);
    fab_rcache_put(&rc, first);
    CHECK(rc.n <= 4, "back within the bound after use: n %d", rc.n);

    /* memory being freed: its registrations go */
    fab_rentry *r = fab_rcache_get(&rc, mem + 60 * pg, pg);
    fab_rcache_put(&rc, r);
    int n0 = rc.n, regs0 = regs;
    fab_rcache_release(&rc, mem + 60 * pg + 5, 1);
    CHECK(rc.n == n0 - 1, "released range dropped");
    r = fab_rcache_get(&rc, mem + 60 * pg, 1);
    CHECK(regs == regs0 + 1, "released range registered again");
    fab_rcache_put(&rc, r);

    /* a registration that fails is reported, not cached */
    fail_next = 1;
    CHECK(fab_rcache_get(&rc, mem + 62 * pg, 1) == NULL, "failed registration gives NULL");
    fab_rcache_destroy(&rc);
    CHECK(live == 0, "destroy drops everything: live %d", live);

    /* max 0: nothing kept after use */
    fab_rcache_init(&rc, 0, fake_reg, fake_dereg, NULL);
    fab_rentry *z = fab_rcache_get(&rc, mem, 1);
    fab_rentry *z2 = fab_rcache_get(&rc, mem, 1);
    CHECK(z == z2 && live == 1, "shared while in use");
    fab_rcache_put(&rc, z);
    fab_rcache_put(&rc, z2);
    CHECK(live == 0 && rc.n == 0, "no caching with max 0: live %d", live);
    fab_rcache_destroy(&rc);
    free(mem);
    printf("%s: %d errors\n", errors ? "FAIL" : "ok", errors);
    return errors ? 1 : 0;
}
