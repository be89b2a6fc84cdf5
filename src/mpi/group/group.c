/* Process groups: an ordered list of process ids (lpids) behind an
 * MPI_Group handle, reference counted (communicators hold their groups).
 * Set operations use a sorted (lpid, rank) index, so they cost
 * O((n + m) log m) rather than O(n * m). */
#include "mpi/group/group.h"

#include <stdlib.h>
#include <string.h>

#define GROUP_EMPTY_INDEX 1

static util_htab group_tab;
static int group_inited;

typedef struct group_ent {
    int lpid, rank;
} group_ent;

/* the table and MPI_GROUP_EMPTY come into being on first use */
static void group_init(void)
{
    if (group_inited)
        return;
    util_htab_init(&group_tab, sizeof(mpii_group), GROUP_EMPTY_INDEX + 1);
    mpii_group *e = util_htab_get(&group_tab, GROUP_EMPTY_INDEX);
    e->handle = MPI_GROUP_EMPTY;
    e->refcount = 1;
    e->size = 0;
    e->rank = MPI_UNDEFINED;
    e->lpids = NULL;
    group_inited = 1;
}

int mpii_group_self_lpid(void) { return mpii_st.world_rank; }

mpii_group *mpii_group_get(MPI_Group h)
{
    group_init();
    if (MPII_HANDLE_KIND(h) != MPII_KIND_GROUP)
        return NULL;
    mpii_group *g = util_htab_get(&group_tab, MPII_HANDLE_INDEX(h));
    if (!g || g->handle != h || g->refcount <= 0)
        return NULL;
    return g;
}

mpii_group *mpii_group_empty(void)
{
    mpii_group *e = mpii_group_get(MPI_GROUP_EMPTY);
    mpii_group_ref(e);
    return e;
}

mpii_group *mpii_group_create(int size, const int *lpids)
{
    if (size == 0)
        return mpii_group_empty();
    group_init();
    int idx;
    mpii_group *g = util_htab_alloc(&group_tab, &idx);
    g->handle = MPII_HANDLE(MPII_KIND_GROUP, idx);
    g->refcount = 1;
    g->size = size;
    g->lpids = util_malloc((size_t)size * sizeof(int));
    memcpy(g->lpids, lpids, (size_t)size * sizeof(int));
    int me = mpii_group_self_lpid();
    g->rank = MPI_UNDEFINED;
    for (int i = 0; i < size; i++) {
        if (lpids[i] == me) {
            g->rank = i;
            break;
        }
    }
    return g;
}

void mpii_group_ref(mpii_group *g)
{
    if (g->handle != MPI_GROUP_EMPTY)
        g->refcount++;
}

void mpii_group_release(mpii_group *g)
{
    if (!g || g->handle == MPI_GROUP_EMPTY)
        return;
    if (--g->refcount > 0)
        return;
    free(g->lpids);
    g->lpids = NULL;
    util_htab_free(&group_tab, MPII_HANDLE_INDEX(g->handle));
}

void mpii_group_finalize(void)
{
    if (!group_inited)
        return;
    for (int i = GROUP_EMPTY_INDEX + 1; i < group_tab.next_unused; i++) {
        mpii_group *g = util_htab_get(&group_tab, i);
        if (g)
            free(g->lpids);
    }
    util_htab_destroy(&group_tab);
    group_inited = 0;
}

/* ---- sorted index ------------------------------------------------------------------ */

static int group_ent_cmp(const void *a, const void *b)
{
    const group_ent *x = a, *y = b;
    if (x->lpid != y->lpid)
        return x->lpid < y->lpid ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static group_ent *group_index(const mpii_group *g)
{
    group_ent *ix = util_malloc((size_t)(g->size ? g->size : 1) * sizeof *ix);
    for (int i = 0; i < g->size; i++)
        ix[i] = (group_ent){g->lpids[i], i};
    qsort(ix, (size_t)g->size, sizeof *ix, group_ent_cmp);
    return ix;
}

static int group_index_find(const group_ent *ix, int n, int lpid)
{
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (ix[mid].lpid == lpid)
            return ix[mid].rank;
        if (ix[mid].lpid < lpid)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return MPI_UNDEFINED;
}

int mpii_group_rank_of(const mpii_group *g, int lpid)
{
    for (int i = 0; i < g->size; i++)
        if (g->lpids[i] == lpid)
            return i;
    return MPI_UNDEFINED;
}

/* ---- set operations -------------------------------------------------------------- */

enum { KEEP_IN_B, KEEP_NOT_IN_B };

/* members of a, in a's order, kept by their presence in b */
static mpii_group *group_filter(const mpii_group *a, const mpii_group *b, int keep, int *out,
                                int n0)
{
    group_ent *ix = group_index(b);
    int n = n0;
    for (int i = 0; i < a->size; i++) {
        int in_b = group_index_find(ix, b->size, a->lpids[i]) != MPI_UNDEFINED;
        if (in_b == (keep == KEEP_IN_B))
            out[n++] = a->lpids[i];
    }
    free(ix);
    return mpii_group_create(n, out);
}

mpii_group *mpii_group_union(const mpii_group *a, const mpii_group *b)
{
    int *l = util_malloc((size_t)(a->size + b->size + 1) * sizeof(int));
    if (a->size)
        memcpy(l, a->lpids, (size_t)a->size * sizeof(int));
    mpii_group *g = group_filter(b, a, KEEP_NOT_IN_B, l, a->size);
    free(l);
    return g;
}

mpii_group *mpii_group_intersection(const mpii_group *a, const mpii_group *b)
{
    int *l = util_malloc((size_t)(a->size + 1) * sizeof(int));
    mpii_group *g = group_filter(a, b, KEEP_IN_B, l, 0);
    free(l);
    return g;
}

mpii_group *mpii_group_difference(const mpii_group *a, const mpii_group *b)
{
    int *l = util_malloc((size_t)(a->size + 1) * sizeof(int));
    mpii_group *g = group_filter(a, b, KEEP_NOT_IN_B, l, 0);
    free(l);
    return g;
}

mpii_group *mpii_group_incl(const mpii_group *g, int n, const int *ranks)
{
    int *l = util_malloc((size_t)(n + 1) * sizeof(int));
    for (int i = 0; i < n; i++)
        l[i] = g->lpids[ranks[i]];
    mpii_group *r = mpii_group_create(n, l);
    free(l);
    return r;
}

mpii_group *mpii_group_excl(const mpii_group *g, int n, const int *ranks)
{
    char *drop = util_calloc((size_t)g->size + 1, 1);
    for (int i = 0; i < n; i++)
        drop[ranks[i]] = 1;
    int *l = util_malloc((size_t)(g->size + 1) * sizeof(int));
    int k = 0;
    for (int i = 0; i < g->size; i++)
        if (!drop[i])
            l[k++] = g->lpids[i];
    mpii_group *r = mpii_group_create(k, l);
    free(l);
    free(drop);
    return r;
}

int *mpii_group_ranges_expand(int n, const int (*ranges)[3], int *count)
{
    long total = 0;
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        total += ((long)last - first) / stride + 1;
    }
    *count = (int)total;
    int *l = util_malloc((size_t)(total + 1) * sizeof(int));
    int k = 0;
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        long steps = ((long)last - first) / stride;
        for (long s = 0; s <= steps; s++)
            l[k++] = (int)(first + s * stride);
    }
    return l;
}

mpii_group *mpii_group_range_incl(const mpii_group *g, int n, const int (*ranges)[3])
{
    int cnt;
    int *ranks = mpii_group_ranges_expand(n, ranges, &cnt);
    mpii_group *r = mpii_group_incl(g, cnt, ranks);
    free(ranks);
    return r;
}

mpii_group *mpii_group_range_excl(const mpii_group *g, int n, const int (*ranges)[3])
{
    int cnt;
    int *ranks = mpii_group_ranges_expand(n, ranges, &cnt);
    mpii_group *r = mpii_group_excl(g, cnt, ranks);
    free(ranks);
    return r;
}

void mpii_group_translate(const mpii_group *a, int n, const int *in, const mpii_group *b, int *out)
{
    group_ent *ix = group_index(b);
    for (int i = 0; i < n; i++) {
        if (in[i] == MPI_PROC_NULL)
            out[i] = MPI_PROC_NULL;
        else
            out[i] = group_index_find(ix, b->size, a->lpids[in[i]]);
    }
    free(ix);
}

int mpii_group_compare(const mpii_group *a, const mpii_group *b)
{
    if (a == b)
        return MPI_IDENT;
    if (a->size != b->size)
        return MPI_UNEQUAL;
    if (a->size == 0 || memcmp(a->lpids, b->lpids, (size_t)a->size * sizeof(int)) == 0)
        return MPI_IDENT;
    group_ent *ia = group_index(a), *ib = group_index(b);
    int same = 1;
    for (int i = 0; i < a->size && same; i++)
        same = ia[i].lpid == ib[i].lpid;
    free(ia);
    free(ib);
    return same ? MPI_SIMILAR : MPI_UNEQUAL;
}

int mpii_group_is_subset(const mpii_group *sub, const mpii_group *g)
{
    group_ent *ix = group_index(g);
    int ok = 1;
    for (int i = 0; i < sub->size && ok; i++)
        ok = group_index_find(ix, g->size, sub->lpids[i]) != MPI_UNDEFINED;
    free(ix);
    return ok;
}
