/* Module-aware barrier, bcast, reduce and allreduce (docs/collectives.md "Across modules").
 * A job over two networks joined by gateway daemons (docs/gateway.md) pays a gateway hop
 * for every message between its modules; a binomial tree over the ranks crosses that
 * boundary at several of its edges, and recursive doubling at every step. These cross it
 * once per module and direction:
 *  - bcast: the root sends to the leader (lowest rank) of every other module, then each
 *    module runs a binomial tree from its entry (the root, or the leader);
 *  - reduce: a binomial tree within each module to its entry, then every other module's
 *    leader sends its partial result to the root, which folds them;
 *  - allreduce: a tree within each module to its leader; with two modules the leaders swap
 *    their partial results (one message each way) and both fold them in the same order, so
 *    every rank gets the same bits; with more, the leaders reduce to the first and it sends
 *    the result back; then a tree within each module from its leader;
 *  - barrier: an allreduce of one byte.
 * Only commutative operations (the modules' partial results meet out of rank order: the
 * caller keeps the usual algorithms for the others). The layout is the same on every rank:
 * it follows from the world's module table (every process's cards, or DCFA_COLL_MODULES)
 * and the group. */
#include "mpi/coll/module.h"

#include "mpi/coll/algo.h"
#include "mpi/comm/comm.h"
#include "mpi/op/op.h"

#include <stdlib.h>
#include <string.h>

uint64_t coll_module_st[2];

static int *world_mod; /* module of each world process; NULL: one module */
static int world_n;
static int world_pending; /* the table is to be made from the cards */

/* keep mod as the world's table if it has two modules or more */
static void world_set(int *mod, int n)
{
    for (int i = 1; i < n; i++)
        if (mod[i] != mod[0]) {
            world_mod = mod;
            world_n = n;
            return;
        }
    free(mod);
}

typedef struct coll_mod {
    int nmod;     /* modules among the ranks; 1: the usual algorithms */
    int *of;      /* module of each rank, numbered by their lowest rank */
    int *lead;    /* lowest rank of each module */
    int *members; /* the ranks of my module, ascending */
    int nmembers;
    int mine; /* my module */
} coll_mod;

/* DCFA_COLL_MODULES: one integer per world process, comma-separated, or "mod:K" (module
 * rank % K, K >= 1) */
static int modules_parse(const char *list, int *mod, int n)
{
    const char *p = list;
    if (strncmp(p, "mod:", 4) == 0) {
        char *end;
        long k = strtol(p + 4, &end, 10);
        if (end == p + 4 || *end != '\0' || k < 1 || k > 1 << 20)
            return -1;
        for (int i = 0; i < n; i++)
            mod[i] = (int)(i % k);
        return 0;
    }
    for (int i = 0; i < n; i++) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 0 || v > 1 << 20 || (*end != ',' && *end != '\0') ||
            (*end == '\0' && i != n - 1))
            return -1;
        mod[i] = (int)v;
        p = end + 1;
    }
    return p[-1] == '\0' ? 0 : -1;
}

int coll_module_init(mpii_comm *world)
{
    int n = world->size;
    const char *list = util_cfg.coll_modules;
    world_pending = 0;
    if (n < 2)
        return MPI_SUCCESS;
    if (list && *list) {
        int *mod = util_malloc((size_t)n * sizeof(int));
        if (modules_parse(list, mod, n) != 0)
            util_die("DCFA_COLL_MODULES=%s: wanted %d module ids >= 0 separated by commas, one "
                     "per process of the world, or mod:K",
                     list, n);
        world_set(mod, n);
    } else if (util_cfg.gateways && *util_cfg.gateways) {
        world_n = n; /* from the cards at the first collective that asks (no message) */
        world_pending = 1;
    }
    return MPI_SUCCESS;
}

/* the world's table from the cards, once */
static void world_from_cards(void)
{
    if (!world_pending)
        return;
    world_pending = 0;
    int *mod = util_malloc((size_t)world_n * sizeof(int));
    if (mpii_module_colors_from_cards(world_n, mod) != MPI_SUCCESS) {
        free(mod); /* no table: the usual algorithms */
        return;
    }
    world_set(mod, world_n);
}

/* c's layout, made on first use from the world's table (local: the same on every rank) */
static coll_mod *mod_of(mpii_comm *c)
{
    if (c->coll_mod)
        return c->coll_mod;
    coll_mod *m = util_calloc(1, sizeof *m);
    m->nmod = 1;
    c->coll_mod = m;
    int n = c->size;
    world_from_cards();
    if (!world_mod || c->is_inter || n < 2)
        return m;
    /* a process of another world (spawned, connected): its module is unknown here, and
     * every member sees one such, so all keep the usual algorithms */
    for (int r = 0; r < n; r++)
        if (c->group->lpids[r] < 0 || c->group->lpids[r] >= world_n)
            return m;
    int *of = util_malloc((size_t)n * sizeof(int)), *lead = util_malloc((size_t)n * sizeof(int));
    int nmod = 0;
    for (int r = 0; r < n; r++) {
        int w = world_mod[c->group->lpids[r]], k = 0;
        while (k < nmod && world_mod[c->group->lpids[lead[k]]] != w)
            k++;
        if (k == nmod)
            lead[nmod++] = r;
        of[r] = k;
    }
    if (nmod < 2) {
        free(of);
        free(lead);
        return m;
    }
    m->nmod = nmod;
    m->of = of;
    m->lead = lead;
    m->mine = of[c->rank];
    m->members = util_malloc((size_t)n * sizeof(int));
    for (int r = 0; r < n; r++)
        if (of[r] == m->mine)
            m->members[m->nmembers++] = r;
    return m;
}

int coll_module_usable(mpii_comm *c)
{
    return util_cfg.coll_module && (world_mod || world_pending) && !c->is_inter &&
           mod_of(c)->nmod > 1;
}

void coll_module_release(mpii_comm *c)
{
    coll_mod *m = c->coll_mod;
    if (!m)
        return;
    free(m->of);
    free(m->lead);
    free(m->members);
    free(m);
    c->coll_mod = NULL;
}

/* ---- trees within my module, rooted at its member `entry` ---------------------------- */

static int member_index(const coll_mod *m, int rank)
{
    for (int i = 0; i < m->nmembers; i++)
        if (m->members[i] == rank)
            return i;
    return 0; /* not reached: entry and self are members */
}

/* the member at tree position v of a tree rooted at member index ri */
static int member_at(const coll_mod *m, int v, int ri)
{
    return m->members[(v + ri) % m->nmembers];
}

static void tree_bcast(coll_sched *s, const coll_mod *m, void *buf, MPI_Aint count, MPI_Datatype dt,
                       int me, int entry)
{
    int k = m->nmembers, ri = member_index(m, entry);
    int vr = (member_index(m, me) - ri + k) % k, mask = 1;
    for (; mask < k; mask <<= 1)
        if (vr & mask) {
            coll_sched_recv(s, buf, count, dt, member_at(m, vr - mask, ri), NULL);
            coll_sched_round(s);
            break;
        }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < k)
            coll_sched_send(s, buf, count, dt, member_at(m, vr + mask, ri), NULL);
    coll_sched_round(s);
}

/* my module's reduction of cur at its member `entry`: the buffer that holds it there (its
 * folds are the current round's first local operations), NULL elsewhere (sent up) */
static const void *tree_reduce(coll_sched *s, const coll_mod *m, const void *cur, MPI_Aint count,
                               MPI_Datatype dt, MPI_Op op, int me, int entry)
{
    int k = m->nmembers, ri = member_index(m, entry);
    int vr = (member_index(m, me) - ri + k) % k, parent = 0;
    for (int mask = 1; mask < k; mask <<= 1)
        if (vr & mask) {
            parent = mask;
            break;
        }
    int top = parent ? parent : k;
    void *kids[32];
    int nkids = 0;
    for (int mask = 1; mask < top && vr + mask < k; mask <<= 1) {
        kids[nkids] = coll_sched_alloc_typed(s, count, dt);
        coll_sched_recv(s, kids[nkids++], count, dt, member_at(m, vr + mask, ri), NULL);
    }
    coll_sched_round(s);
    for (int i = 0; i < nkids; i++) {
        coll_sched_reduce(s, cur, kids[i], count, dt, op);
        cur = kids[i];
    }
    if (!parent)
        return cur;
    coll_sched_send(s, cur, count, dt, member_at(m, vr - parent, ri), NULL);
    coll_sched_round(s);
    return NULL;
}

/* ---- the collectives -------------------------------------------------------------------- */

int coll_bcast_module(coll_sched *s, void *buf, MPI_Aint count, MPI_Datatype dt, int root,
                      mpii_comm *c)
{
    coll_mod *m = mod_of(c);
    if (count * (MPI_Aint)coll_tsize(dt) == 0)
        return MPI_SUCCESS;
    coll_module_st[0]++;
    int me = c->rank, rm = m->of[root];
    int entry = m->mine == rm ? root : m->lead[m->mine];
    if (me == root) {
        /* with the root's first sends within its module, in one round */
        for (int k = 0; k < m->nmod; k++)
            if (k != rm) {
                coll_sched_send(s, buf, count, dt, m->lead[k], NULL);
                coll_module_st[1]++;
            }
    } else if (me == entry) {
        coll_sched_recv(s, buf, count, dt, root, NULL);
        coll_sched_round(s);
    }
    tree_bcast(s, m, buf, count, dt, me, entry);
    return MPI_SUCCESS;
}

int coll_reduce_module(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count, MPI_Datatype dt,
                       MPI_Op op, int root, mpii_comm *c)
{
    coll_mod *m = mod_of(c);
    if (count * (MPI_Aint)coll_tsize(dt) == 0)
        return MPI_SUCCESS;
    coll_module_st[0]++;
    int me = c->rank, rm = m->of[root];
    int entry = m->mine == rm ? root : m->lead[m->mine];
    const void *cur = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    cur = tree_reduce(s, m, cur, count, dt, op, me, entry);
    if (me != entry)
        return MPI_SUCCESS;
    if (me != root) {
        coll_sched_send(s, cur, count, dt, root, NULL);
        coll_sched_round(s);
        coll_module_st[1]++;
        return MPI_SUCCESS;
    }
    void **parts = coll_sched_alloc(s, (size_t)m->nmod * sizeof *parts);
    for (int k = 0; k < m->nmod; k++)
        if (k != rm) {
            parts[k] = coll_sched_alloc_typed(s, count, dt);
            coll_sched_recv(s, parts[k], count, dt, m->lead[k], NULL);
        }
    coll_sched_round(s);
    for (int k = 0; k < m->nmod; k++)
        if (k != rm) {
            coll_sched_reduce(s, cur, parts[k], count, dt, op);
            cur = parts[k];
        }
    if (cur != rbuf)
        coll_sched_copy(s, cur, count, dt, rbuf, count, dt);
    coll_sched_round(s);
    return MPI_SUCCESS;
}

int coll_allreduce_module(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count,
                          MPI_Datatype dt, MPI_Op op, mpii_comm *c)
{
    coll_mod *m = mod_of(c);
    if (count * (MPI_Aint)coll_tsize(dt) == 0)
        return MPI_SUCCESS;
    coll_module_st[0]++;
    int me = c->rank, entry = m->lead[m->mine];
    const void *cur = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    cur = tree_reduce(s, m, cur, count, dt, op, me, entry);
    if (me == entry && m->nmod == 2) {
        /* the two leaders swap, and both compute part(module 0) op part(module 1) */
        void *theirs = coll_sched_alloc_typed(s, count, dt);
        coll_sched_send(s, cur, count, dt, m->lead[1 - m->mine], NULL);
        coll_sched_recv(s, theirs, count, dt, m->lead[1 - m->mine], NULL);
        coll_sched_round(s);
        coll_module_st[1]++;
        if (m->mine == 0) {
            coll_sched_reduce(s, cur, theirs, count, dt, op);
            coll_sched_copy(s, theirs, count, dt, rbuf, count, dt);
        } else {
            if (cur != rbuf)
                coll_sched_copy(s, cur, count, dt, rbuf, count, dt);
            coll_sched_reduce(s, theirs, rbuf, count, dt, op);
        }
    } else if (me == entry && m->mine == 0) {
        void **parts = coll_sched_alloc(s, (size_t)m->nmod * sizeof *parts);
        for (int k = 1; k < m->nmod; k++) {
            parts[k] = coll_sched_alloc_typed(s, count, dt);
            coll_sched_recv(s, parts[k], count, dt, m->lead[k], NULL);
        }
        coll_sched_round(s);
        for (int k = 1; k < m->nmod; k++) {
            coll_sched_reduce(s, cur, parts[k], count, dt, op);
            cur = parts[k];
        }
        coll_sched_copy(s, cur, count, dt, rbuf, count, dt);
        coll_sched_round(s);
        for (int k = 1; k < m->nmod; k++) {
            coll_sched_send(s, rbuf, count, dt, m->lead[k], NULL);
            coll_module_st[1]++;
        }
        coll_sched_round(s);
    } else if (me == entry) {
        coll_sched_send(s, cur, count, dt, m->lead[0], NULL);
        coll_sched_round(s);
        coll_sched_recv(s, rbuf, count, dt, m->lead[0], NULL);
        coll_sched_round(s);
        coll_module_st[1]++;
    }
    tree_bcast(s, m, rbuf, count, dt, me, entry);
    return MPI_SUCCESS;
}

int coll_barrier_module(coll_sched *s, mpii_comm *c)
{
    char *token = coll_sched_alloc(s, 2);
    token[0] = token[1] = 0;
    return coll_allreduce_module(s, token, token + 1, 1, MPI_BYTE, MPI_BOR, c);
}
