/* Communicators: the handle table (WORLD and SELF at fixed indices), the
 * constructors and their context-id agreement (see comm.h), free, compare,
 * info. An inter-communicator also owns an intra-communicator over its
 * local group (local_comm) for the library's collectives; it gets a context
 * pair of its own in the same agreement. */
#include "core/core.h"
#include "mpi/coll/module.h"
#include "mpi/coll/node_shm.h"
#include "mpi/comm/comm.h"
#include "mpi/comm/dpm.h"
#include "mpi/group/group.h"
#include "mpi/attr/attr.h"
#include "mpi/errhan/errhan.h"
#include "mpi/topo/topo.h"
#include "mpi/pt2pt/pt2pt.h"
#include "mpi/info/info.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define COMM_WORLD_INDEX 1
#define COMM_SELF_INDEX  2

/* Tags of the construction traffic on a parent's collective context: far
 * below anything a collective uses, never MPI_ANY_TAG. MPI_Comm_create_group
 * uses COMM_TAG_GROUP + the user's tag (0..MPII_TAG_UB). */
#define COMM_TAG_GROUP INT_MIN
#define COMM_TAG_INTER (INT_MIN + MPII_TAG_UB + 1)
enum {
    COMM_TAG_CTX = COMM_TAG_INTER,
    COMM_TAG_SPLIT,
    COMM_TAG_SIZE,
    COMM_TAG_LPIDS,
    COMM_TAG_MERGE
};

util_htab mpii_comm_tab;   /* zeroed while not initialized: every lookup fails */
static int comm_inited;
/* the communicator holding each context pair in this process (at most one:
 * comm.h), for the core's check of who may send what */
static mpii_comm *comm_by_pair[MPII_CTX_PAIRS];

/* core_peer_fn: the process behind rank src of the communicator of ctx */
static int comm_peer_of(uint32_t ctx, int32_t src)
{
    uint32_t pair = ctx / 2;
    mpii_comm *c = pair < MPII_CTX_PAIRS ? comm_by_pair[pair] : NULL;
    if (!c)
        return CORE_PEER_NO_CTX;
    if (src < 0 || src >= mpii_comm_peer_size(c))
        return CORE_PEER_NO_RANK;
    return mpii_comm_peer_lpid(c, src);
}

/* ---- objects ------------------------------------------------------------------------ */

static void comm_fill(mpii_comm *c, const mpii_comm *parent, mpii_group *g, uint32_t ctx)
{
    c->refcount = 1;
    c->ctx = ctx;
    if (ctx / 2 < MPII_CTX_PAIRS)
        comm_by_pair[ctx / 2] = c;
    c->group = g;
    c->rank = g->rank;
    c->size = g->size;
    /* MPI_ERRHANDLER_NULL: never set, MPI_COMM_WORLD's applies (mpii_errh_or_default) */
    c->errhandler = parent ? parent->errhandler : MPI_ERRHANDLER_NULL;
    mpii_errh_ref(c->errhandler);
    c->info = MPI_INFO_NULL;
    c->session = parent ? parent->session : 0;
}

/* A new communicator owning the references g and remote (NULL: intra) on
 * pair; an inter-communicator's local_comm gets local_pair. The members
 * take their pairs here. */
static mpii_comm *comm_build(const mpii_comm *parent, mpii_group *g, mpii_group *remote, int pair,
                             int local_pair)
{
    int idx;
    mpii_comm *c = util_htab_alloc(&mpii_comm_tab, &idx);
    c->handle = MPII_HANDLE(MPII_KIND_COMM, idx);
    mpii_ctx_take(&mpii_ctx_st, pair);
    comm_fill(c, parent, g, mpii_ctx_of_pair(pair));
    if (remote) {
        c->is_inter = 1;
        c->remote = remote;
        mpii_group_ref(g);
        c->local_comm = comm_build(parent, g, NULL, local_pair, -1);
    }
    return c;
}

static void comm_destroy(mpii_comm *c)
{
    if (c->ctx / 2 < MPII_CTX_PAIRS && comm_by_pair[c->ctx / 2] == c)
        comm_by_pair[c->ctx / 2] = NULL;
    mpii_bbuf_drop(&c->bbuf);
    util_backoff_neighbours(-c->neighbours);
    mpii_ctx_release(&mpii_ctx_st, c->ctx);
    if (c->local_comm)
        comm_destroy(c->local_comm);
    mpii_group_release(c->group);
    mpii_group_release(c->remote);
    mpii_errh_release(c->errhandler);
    coll_shm_release(c);
    coll_module_release(c);
    topo_free(c->topo);
    c->topo = NULL;
    if (c->info != MPI_INFO_NULL)
        PMPI_Info_free(&c->info);
    c->refcount = 0;
    util_htab_free(&mpii_comm_tab, MPII_HANDLE_INDEX(c->handle));
}

void mpii_comm_ref(mpii_comm *c) { c->refcount++; }

void mpii_comm_release(mpii_comm *c)
{
    if (--c->refcount == 0)
        comm_destroy(c);
}

mpii_comm *mpii_comm_build_dup(mpii_comm *c, int pair, int local_pair)
{
    mpii_group_ref(c->group);
    if (c->remote)
        mpii_group_ref(c->remote);
    return comm_build(c, c->group, c->remote, pair, local_pair);
}

int mpii_comm_free(mpii_comm *c)
{
    int rc = mpii_attr_delete_all(MPII_OBJ_COMM, c->handle, &c->attrs);
    if (rc != MPI_SUCCESS)
        return rc;
    if (--c->refcount == 0)
        comm_destroy(c);
    return MPI_SUCCESS;
}

static void comm_predefined(int index, int size, const int *lpids, uint32_t ctx, const char *name)
{
    mpii_comm *c = util_htab_get(&mpii_comm_tab, index);
    c->handle = MPII_HANDLE(MPII_KIND_COMM, index);
    comm_fill(c, NULL, mpii_group_create(size, lpids), ctx);
    strcpy(c->name, name);
}

int mpii_comm_init_world(void)
{
    util_htab_init(&mpii_comm_tab, sizeof(mpii_comm), COMM_SELF_INDEX + 1);
    comm_inited = 1;
    mpii_ctx_space_init(&mpii_ctx_st);
    int n = mpii_st.world_size;
    int *l = util_malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++)
        l[i] = i;
    comm_predefined(COMM_WORLD_INDEX, n, l, mpii_ctx_of_pair(0), "MPI_COMM_WORLD");
    int me = mpii_group_self_lpid();
    comm_predefined(COMM_SELF_INDEX, 1, &me, mpii_ctx_of_pair(1), "MPI_COMM_SELF");
    free(l);
    core_set_peer_lookup(comm_peer_of);
    return MPI_SUCCESS;
}

/* Attributes still on MPI_COMM_WORLD (and on communicators the program did
 * not free) see their delete callbacks; then every object goes. Info and
 * error-handler references are not dropped: their chapters may be gone. */
void mpii_comm_finalize(void)
{
    if (!comm_inited)
        return;
    for (int i = 1; i < mpii_comm_tab.next_unused; i++) {
        mpii_comm *c = util_htab_get(&mpii_comm_tab, i);
        if (c && c->refcount > 0) {
            mpii_attr_delete_all(MPII_OBJ_COMM, c->handle, &c->attrs);
            mpii_attr_drop_all(&c->attrs);
            coll_shm_release(c);
            coll_module_release(c);
        }
    }
    util_htab_destroy(&mpii_comm_tab);
    memset(comm_by_pair, 0, sizeof comm_by_pair);
    comm_inited = 0;
    mpii_group_finalize();
}

/* ---- context agreement -------------------------------------------------------------- */

/* An agreement's key: the parent's context and its count of agreements (the
 * same in every member: dup, split, create... are collective over it). */
uint64_t mpii_comm_ctx_key(mpii_comm *c)
{
    return (uint64_t)c->ctx << 32 | (c->ctxag_seq++ & 0x7fffffffu);
}

/* one round's exchange: all = the AND of every participant's mine */
typedef int (*ctx_and_fn)(void *arg, const unsigned *mine, unsigned *all);

/* the rounds of an agreement (ctx.c) until n pairs are chosen */
static int ctx_agree(uint64_t key, int n, int *pairs, ctx_and_fn and_fn, void *arg)
{
    mpii_ctxag ag;
    unsigned mine[MPII_CTXAG_W], all[MPII_CTXAG_W];
    util_backoff b;
    util_backoff_reset(&b);
    mpii_ctxag_begin(&mpii_ctx_st, &ag, key);
    for (;;) {
        mpii_ctxag_offer(&mpii_ctx_st, &ag, mine);
        int rc = and_fn(arg, mine, all);
        if (rc != MPI_SUCCESS) {
            mpii_ctxag_end(&mpii_ctx_st, &ag);
            return rc;
        }
        rc = mpii_ctxag_decide(&mpii_ctx_st, &ag, all, n, pairs);
        if (rc == UTIL_OK)
            return MPI_SUCCESS;
        if (rc == UTIL_ENOENT) {
            mpii_cause("no context id free on every process (%d in use)", MPII_CTX_PAIRS);
            return MPI_ERR_OTHER;
        }
        util_backoff_wait(&b); /* another agreement of this process goes first */
    }
}

static int ctx_and_intra(void *arg, const unsigned *mine, unsigned *all)
{
    return mpii_allreduce(mine, all, MPII_CTXAG_W, MPI_UNSIGNED, MPI_BAND, arg);
}

static int ctx_agree_intra(mpii_comm *c, int n, int *pairs)
{
    return ctx_agree(mpii_comm_ctx_key(c), n, pairs, ctx_and_intra, c);
}

/* leader-to-leader exchange over an inter-communicator (remote rank 0) */
static int inter_swap(mpii_comm *inter, const void *sbuf, int scount, void *rbuf, int rcount,
                      MPI_Datatype dt, int tag)
{
    return mpii_sendrecv(sbuf, scount, dt, 0, tag, rbuf, rcount, dt, 0, tag, inter, 1,
                         MPI_STATUS_IGNORE);
}

/* How the two leaders of an inter-communicator under construction talk:
 * point-to-point over a communicator holding both (MPI_Intercomm_create's peer,
 * the inter-communicator itself), or a connected socket (fd >= 0: a port's
 * connection, MPI_Comm_join's). */
typedef struct comm_link {
    mpii_comm *peer;
    int remote_leader, tag, peer_coll;
    int fd;
} comm_link;

/* the leaders swap slen bytes for rlen bytes */
static int link_swap(const comm_link *l, const void *s, size_t slen, void *r, size_t rlen)
{
    if (l->fd >= 0)
        return mpii_sock_swap(l->fd, s, slen, r, rlen);
    if (slen > INT_MAX || rlen > INT_MAX)
        return MPI_ERR_COUNT;
    return mpii_sendrecv(s, (int)slen, MPI_BYTE, l->remote_leader, l->tag, r, (int)rlen, MPI_BYTE,
                         l->remote_leader, l->tag, l->peer, l->peer_coll, MPI_STATUS_IGNORE);
}

/* an inter-communicator round: AND in each group, the leaders swap and AND,
 * the result is broadcast in each group (status word first) */
typedef struct ctx_inter_round {
    mpii_comm *local; /* the local group's intra-communicator */
    int leader;       /* its rank of the leader */
    const comm_link *link;
} ctx_inter_round;

static int ctx_and_inter(void *arg, const unsigned *mine, unsigned *all)
{
    ctx_inter_round *x = arg;
    unsigned local[MPII_CTXAG_W], remote[MPII_CTXAG_W], res[MPII_CTXAG_W + 1];
    int rc = mpii_allreduce(mine, local, MPII_CTXAG_W, MPI_UNSIGNED, MPI_BAND, x->local);
    if (rc != MPI_SUCCESS)
        return rc;
    if (x->local->rank == x->leader) {
        res[0] = (unsigned)link_swap(x->link, local, sizeof local, remote, sizeof remote);
        for (int w = 0; w < MPII_CTXAG_W; w++)
            res[w + 1] = local[w] & remote[w];
    }
    rc = mpii_bcast(res, MPII_CTXAG_W + 1, MPI_UNSIGNED, x->leader, x->local);
    if (rc == MPI_SUCCESS)
        rc = (int)res[0];
    memcpy(all, res + 1, sizeof(unsigned) * MPII_CTXAG_W);
    return rc;
}

/* both sides of an inter-communicator agree on n pairs */
static int ctx_agree_inter(mpii_comm *inter, int n, int *pairs)
{
    comm_link link = {inter, 0, COMM_TAG_CTX, 1, -1};
    ctx_inter_round x = {inter->local_comm, 0, &link};
    return ctx_agree(mpii_comm_ctx_key(inter), n, pairs, ctx_and_inter, &x);
}

/* the names across jobs of n processes, two ints each (what leaders swap: lpids are
 * this process's own numbering) */
static int *comm_gids_of(const int *lpids, int n)
{
    int *g = util_malloc((size_t)(2 * n + 1) * sizeof(int));
    for (int i = 0; i < n; i++) {
        uint64_t v = core_gid(lpids[i]);
        g[2 * i] = (int)(uint32_t)(v >> 32);
        g[2 * i + 1] = (int)(uint32_t)v;
    }
    return g;
}

static uint64_t comm_gid_at(const int *g, int i)
{
    return (uint64_t)(uint32_t)g[2 * i] << 32 | (uint32_t)g[2 * i + 1];
}

/* the lpids of n processes named by gids (two ints each) in place of them; each must be known
 * here (a process of another job is known once it came with its cards) */
static int comm_lpids_of(int *g, int n)
{
    for (int i = 0; i < n; i++) {
        int lp = core_lpid_of(comm_gid_at(g, i));
        if (lp < 0) {
            mpii_cause("process %llx (rank %d of another job) is not known "
                       "to this process",
                       (unsigned long long)comm_gid_at(g, i), FAB_GID_RANK(comm_gid_at(g, i)));
            return MPI_ERR_INTERN;
        }
        g[i] = lp; /* i <= 2i: what is still to be read is not overwritten */
    }
    return MPI_SUCCESS;
}

/* leaders swap an int array whose length the other side does not know
 * yet; everybody of the local group gets the remote array (malloc'ed) */
static int inter_swap_bcast(mpii_comm *inter, const int *sbuf, int scount, int **rbuf, int *rcount)
{
    int hdr[2] = {MPI_SUCCESS, 0};
    int *r = NULL;
    mpii_comm *lc = inter->local_comm;
    if (lc->rank == 0) {
        hdr[0] = inter_swap(inter, &scount, 1, &hdr[1], 1, MPI_INT, COMM_TAG_SIZE);
        if (hdr[0] == MPI_SUCCESS) {
            r = util_malloc((size_t)(hdr[1] + 1) * sizeof(int));
            hdr[0] = inter_swap(inter, sbuf, scount, r, hdr[1], MPI_INT, COMM_TAG_LPIDS);
        }
    }
    int rc = mpii_bcast(hdr, 2, MPI_INT, 0, lc);
    if (rc == MPI_SUCCESS)
        rc = hdr[0];
    if (rc == MPI_SUCCESS && lc->rank != 0)
        r = util_malloc((size_t)(hdr[1] + 1) * sizeof(int));
    if (rc == MPI_SUCCESS)
        rc = mpii_bcast(r, hdr[1], MPI_INT, 0, lc);
    if (rc != MPI_SUCCESS) {
        free(r);
        return rc;
    }
    *rbuf = r;
    *rcount = hdr[1];
    return MPI_SUCCESS;
}

/* ---- dup ---------------------------------------------------------------------------- */

int mpii_comm_dup_internal(mpii_comm *c, mpii_comm **out)
{
    int pairs[1] = {0};
    int rc = ctx_agree_intra(c, 1, pairs);
    if (rc != MPI_SUCCESS)
        return rc;
    mpii_group_ref(c->group);
    *out = comm_build(c, c->group, NULL, pairs[0], -1);
    return MPI_SUCCESS;
}

int mpii_comm_dup(mpii_comm *c, MPI_Info info, int use_info, mpii_comm **out)
{
    int pairs[2] = {0, 0};
    int rc = c->is_inter ? ctx_agree_inter(c, 2, pairs) : ctx_agree_intra(c, 1, pairs);
    if (rc != MPI_SUCCESS)
        return rc;
    mpii_group_ref(c->group);
    if (c->remote)
        mpii_group_ref(c->remote);
    mpii_comm *n = comm_build(c, c->group, c->remote, pairs[0], pairs[1]);
    if (c->topo)
        n->topo = topo_dup(c->topo); /* MPI_Comm_dup keeps the topology */
    rc = mpii_attr_copy_comm(c->handle, n->handle, c->attrs, &n->attrs);
    if (rc != MPI_SUCCESS)
        goto fail_attrs;
    MPI_Info src = use_info ? info : c->info;
    if (src != MPI_INFO_NULL) {
        rc = PMPI_Info_dup(src, &n->info);
        if (rc != MPI_SUCCESS)
            goto fail_attrs;
    }
    *out = n;
    return MPI_SUCCESS;

fail_attrs:
    mpii_attr_delete_all(MPII_OBJ_COMM, n->handle, &n->attrs);
    comm_destroy(n);
    return rc;
}

/* ---- split -------------------------------------------------------------------------- */

typedef struct comm_member {
    int key, rank;
} comm_member;

static int comm_member_cmp(const void *a, const void *b)
{
    const comm_member *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* the group of the processes with this color; ck holds (color, key) per rank of base */
static mpii_group *split_group(const int *ck, const mpii_group *base, int color)
{
    comm_member *m = util_malloc((size_t)(base->size + 1) * sizeof *m);
    int n = 0;
    for (int r = 0; r < base->size; r++)
        if (ck[2 * r] == color)
            m[n++] = (comm_member){ck[2 * r + 1], r};
    qsort(m, (size_t)n, sizeof *m, comm_member_cmp);
    int *l = util_malloc((size_t)(n + 1) * sizeof(int));
    for (int i = 0; i < n; i++)
        l[i] = base->lpids[m[i].rank];
    mpii_group *g = mpii_group_create(n, l);
    free(l);
    free(m);
    return g;
}

static int split_inter(mpii_comm *c, const int *ck, int color, mpii_comm **out)
{
    int *all = util_malloc((size_t)c->size * 2 * sizeof(int));
    int *rall = NULL, rn = 0;
    int rc = mpii_allgather(ck, 2, MPI_INT, all, 2, MPI_INT, c->local_comm);
    if (rc == MPI_SUCCESS)
        rc = inter_swap_bcast(c, all, 2 * c->size, &rall, &rn);
    int pairs[2];
    if (rc == MPI_SUCCESS)
        rc = ctx_agree_inter(c, 2, pairs);
    if (rc != MPI_SUCCESS || color == MPI_UNDEFINED)
        goto done;
    mpii_group *rg = split_group(rall, c->remote, color);
    if (rg->size == 0) {
        mpii_group_release(rg);
        goto done;
    }
    *out = comm_build(c, split_group(all, c->group, color), rg, pairs[0], pairs[1]);
done:
    free(rall);
    free(all);
    return rc;
}

int mpii_comm_split(mpii_comm *c, int color, int key, mpii_comm **out)
{
    int ck[2] = {color, key};
    *out = NULL;
    if (c->is_inter)
        return split_inter(c, ck, color, out);
    int *all = util_malloc((size_t)c->size * 2 * sizeof(int));
    int pairs[1];
    int rc = mpii_allgather(ck, 2, MPI_INT, all, 2, MPI_INT, c);
    if (rc == MPI_SUCCESS)
        rc = ctx_agree_intra(c, 1, pairs);
    if (rc == MPI_SUCCESS && color != MPI_UNDEFINED)
        *out = comm_build(c, split_group(all, c->group, color), NULL, pairs[0], -1);
    free(all);
    return rc;
}

/* the value of an info key, "" when absent or info is null */
static void comm_info_value(MPI_Info info, const char *key, char *val, int len)
{
    val[0] = 0;
    if (info == MPI_INFO_NULL)
        return;
    int flag = 0, buflen = len;
    if (PMPI_Info_get_string(info, key, &buflen, val, &flag) != MPI_SUCCESS || !flag)
        val[0] = 0;
}

/* My node's color for a split of c by node: the same on every process of c (both groups of an
 * inter-communicator) on one node, different across nodes. A node is a shared-memory domain:
 * processes with the same util_node_key(). Within an intra-communicator the color is the lowest
 * rank on the node; across the two groups of an inter-communicator, the number of distinct
 * node keys ordered below the node's. *local_n counts my node's processes in my group. */
static int node_color(mpii_comm *c, int *color, int *local_n)
{
    enum { KL = UTIL_NODE_KEY_MAX + 1, KI = (KL + (int)sizeof(int) - 1) / (int)sizeof(int) };
    mpii_comm *lc = c->is_inter ? c->local_comm : c;
    int *keys = util_calloc((size_t)lc->size * KI, sizeof(int));
    int me[KI];
    memset(me, 0, sizeof me);
    memcpy(me, util_node_key(), strnlen(util_node_key(), KL - 1));
    int *rkeys = NULL, rn = 0;
    int rc = mpii_allgather(me, KI, MPI_INT, keys, KI, MPI_INT, lc);
    if (rc == MPI_SUCCESS && c->is_inter)
        rc = inter_swap_bcast(c, keys, lc->size * KI, &rkeys, &rn);
    if (rc != MPI_SUCCESS) {
        free(keys);
        return rc;
    }
    *color = -1;
    *local_n = 0;
    for (int r = 0; r < lc->size; r++) {
        if (memcmp(keys + (size_t)r * KI, me, sizeof me) != 0)
            continue;
        if (*color < 0)
            *color = r;
        ++*local_n;
    }
    if (c->is_inter) {
        /* both groups: the number of distinct node keys below mine (lpids are each process's
         * own numbering once processes of other jobs take part) */
        int n = lc->size + rn / KI, below = 0;
        for (int i = 0; i < n; i++) {
            const int *k = i < lc->size ? keys + (size_t)i * KI : rkeys + (size_t)(i - lc->size) * KI;
            if (memcmp(k, me, sizeof me) >= 0)
                continue;
            int seen = 0;
            for (int j = 0; j < i && !seen; j++) {
                const int *kj = j < lc->size ? keys + (size_t)j * KI : rkeys + (size_t)(j - lc->size) * KI;
                seen = memcmp(kj, k, sizeof me) == 0;
            }
            below += !seen;
        }
        *color = below;
    }
    free(rkeys);
    free(keys);
    return MPI_SUCCESS;
}

static int comm_split_module(mpii_comm *c, int node_color_v, int key, mpii_comm **out)
{
    int color;
    int rc = mpii_comm_module_color(c, node_color_v, &color);
    return rc == MPI_SUCCESS ? mpii_comm_split(c, color, key, out) : rc;
}

int mpii_comm_split_type(mpii_comm *c, int type, int key, MPI_Info info, mpii_comm **out)
{
    int node_size = 0, node_color_v = -1;
    int rc = node_color(c, &node_color_v, &node_size);
    if (rc != MPI_SUCCESS)
        return rc;
    char want[64];
    int color = MPI_UNDEFINED;
    switch (type) {
    case MPI_COMM_TYPE_SHARED:
        color = node_color_v;
        break;
    case MPI_COMM_TYPE_HW_GUIDED:
    case MPI_COMM_TYPE_RESOURCE_GUIDED:
        /* the resource named by the info: the node, or (resource guided) a process set */
        comm_info_value(info, "mpi_hw_resource_type", want, sizeof want);
        if (strcmp(want, "mpi_shared_memory") == 0)
            color = node_color_v;
        else if (strcmp(want, "mpix_module") == 0 && !c->is_inter)
            return comm_split_module(c, node_color_v, key, out);
        if (type == MPI_COMM_TYPE_RESOURCE_GUIDED) {
            comm_info_value(info, "mpi_pset_name", want, sizeof want);
            if (strcmp(want, "mpi://WORLD") == 0)
                color = 0;
            else if (strcmp(want, "mpi://SELF") == 0)
                color = c->rank;
        }
        break;
    case MPI_COMM_TYPE_HW_UNGUIDED:
        /* the one level we know of below the parent: the node, if it is smaller; MPI 4.1
         * names the resource in the caller's info */
        if (node_size < c->size) {
            color = node_color_v;
            if (info != MPI_INFO_NULL && info != MPI_INFO_ENV)
                mpii_info_set(info, "mpi_hw_resource_type", "mpi_shared_memory");
        }
        break;
    case MPIX_COMM_TYPE_MODULE:
        return comm_split_module(c, node_color_v, key, out);
    default: /* MPI_UNDEFINED */
        break;
    }
    return mpii_comm_split(c, color, key, out);
}

/* ---- create ------------------------------------------------------------------------- */

int mpii_comm_create(mpii_comm *c, mpii_group *g, mpii_comm **out)
{
    int pairs[2];
    *out = NULL;
    if (!c->is_inter) {
        int rc = ctx_agree_intra(c, 1, pairs);
        if (rc != MPI_SUCCESS || g->rank == MPI_UNDEFINED)
            return rc;
        mpii_group_ref(g);
        *out = comm_build(c, g, NULL, pairs[0], -1);
        return MPI_SUCCESS;
    }
    /* inter: each side names a subgroup of its local group */
    int *rl = NULL, rn = 0;
    int *gids = comm_gids_of(g->lpids, g->size);
    int rc = inter_swap_bcast(c, gids, 2 * g->size, &rl, &rn);
    free(gids);
    rn /= 2;
    if (rc == MPI_SUCCESS)
        rc = comm_lpids_of(rl, rn);
    if (rc == MPI_SUCCESS)
        rc = ctx_agree_inter(c, 2, pairs);
    if (rc == MPI_SUCCESS && g->rank != MPI_UNDEFINED && rn > 0) {
        mpii_group_ref(g);
        *out = comm_build(c, g, mpii_group_create(rn, rl), pairs[0], pairs[1]);
    }
    free(rl);
    return rc;
}

/* Only the members of g take part: each round, the first member gathers the
 * contributions through the parent's point-to-point (collective context, a
 * tag of its own per user tag) and sends the AND back. */
typedef struct ctx_group_round {
    mpii_comm *c;
    const int *prank; /* member i's rank in c */
    int n, me, tag;
} ctx_group_round;

static int ctx_and_group(void *arg, const unsigned *mine, unsigned *all)
{
    ctx_group_round *x = arg;
    unsigned res[MPII_CTXAG_W + 1], other[MPII_CTXAG_W];
    int rc = MPI_SUCCESS;
    if (x->me == 0) {
        res[0] = MPI_SUCCESS;
        memcpy(res + 1, mine, sizeof other);
        for (int i = 1; i < x->n && res[0] == MPI_SUCCESS; i++) {
            res[0] = (unsigned)mpii_recv(other, MPII_CTXAG_W, MPI_UNSIGNED, x->prank[i], x->tag,
                                         x->c, 1, MPI_STATUS_IGNORE);
            for (int w = 0; w < MPII_CTXAG_W; w++)
                res[w + 1] &= other[w];
        }
        for (int i = 1; i < x->n && rc == MPI_SUCCESS; i++)
            rc = mpii_send(res, MPII_CTXAG_W + 1, MPI_UNSIGNED, x->prank[i], x->tag, x->c, 1);
    } else {
        rc = mpii_send(mine, MPII_CTXAG_W, MPI_UNSIGNED, x->prank[0], x->tag, x->c, 1);
        if (rc == MPI_SUCCESS)
            rc = mpii_recv(res, MPII_CTXAG_W + 1, MPI_UNSIGNED, x->prank[0], x->tag, x->c, 1,
                           MPI_STATUS_IGNORE);
    }
    if (rc == MPI_SUCCESS)
        rc = (int)res[0];
    memcpy(all, res + 1, sizeof other);
    return rc;
}

int mpii_comm_create_group(mpii_comm *c, mpii_group *g, int tag, mpii_comm **out)
{
    *out = NULL;
    if (g->rank == MPI_UNDEFINED)
        return MPI_SUCCESS;
    int n = g->size;
    int *prank = util_malloc((size_t)n * sizeof(int));
    int *all = util_malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++)
        all[i] = i;
    mpii_group_translate(g, n, all, c->group, prank);
    free(all);
    /* not collective over c: the key is the user's tag, which concurrent
     * calls on c with overlapping groups must make distinct (MPI 4.1 7.4.2) */
    ctx_group_round x = {c, prank, n, g->rank, COMM_TAG_GROUP + tag};
    int pair;
    int rc = ctx_agree((uint64_t)c->ctx << 32 | 0x80000000u | (uint32_t)tag, 1, &pair,
                       ctx_and_group, &x);
    free(prank);
    if (rc != MPI_SUCCESS)
        return rc;
    mpii_group_ref(g);
    *out = comm_build(c, g, NULL, pair, -1);
    return MPI_SUCCESS;
}

/* ---- inter-communicators ------------------------------------------------------------ */

static int intercomm_create(mpii_comm *local, int local_leader, const comm_link *link,
                            mpii_comm **out);

/* The two leaders swap their group's size, context bitmap and process ids
 * over peer (the user's tag, point-to-point context), pick the pairs, and
 * broadcast the outcome over local. */
int mpii_intercomm_create(mpii_comm *local, int local_leader, mpii_comm *peer, int remote_leader,
                          int tag, mpii_comm **out)
{
    comm_link link = {peer, remote_leader, tag, 0, -1};
    return intercomm_create(local, local_leader, &link, out);
}

int mpii_intercomm_join(mpii_comm *local, int root, int fd, mpii_comm **out)
{
    comm_link link = {NULL, 0, 0, 0, fd};
    return intercomm_create(local, root, &link, out);
}

/* the job all of group g is in (its hash), or 0 when it spans jobs */
static uint64_t comm_group_job(const mpii_group *g)
{
    uint64_t job = FAB_GID_JOB(core_gid(g->lpids[0]));
    for (int i = 1; i < g->size; i++)
        if (FAB_GID_JOB(core_gid(g->lpids[i])) != job)
            return 0;
    return job;
}

/* the cards of group g's processes, one line each ('\n' after each): what processes of
 * another job need to reach them */
static char *comm_group_cards(const mpii_group *g, size_t *len)
{
    size_t cap = 256, n = 0;
    char *blob = util_malloc(cap);
    for (int i = 0; i < g->size; i++) {
        char card[1024];
        if (core_proc_cards(g->lpids[i], card, sizeof card) != UTIL_OK) {
            free(blob);
            return NULL;
        }
        size_t k = strlen(card);
        while (n + k + 2 > cap)
            blob = util_realloc(blob, cap *= 2);
        memcpy(blob + n, card, k);
        n += k;
        blob[n++] = '\n';
    }
    *len = n;
    return blob;
}

/* register the n processes of another group (gids, two ints each) with their cards
 * (n lines), if any; their lpids replace the gids */
static int comm_procs_add(int *g, int n, char *cards, size_t clen)
{
    if (!cards)
        return comm_lpids_of(g, n);
    char *line = cards, *end = cards + clen;
    for (int i = 0; i < n; i++) {
        char *nl = line < end ? memchr(line, '\n', (size_t)(end - line)) : NULL;
        if (!nl) {
            mpii_cause("the other group's addresses are cut short");
            return MPI_ERR_INTERN;
        }
        *nl = 0;
        int lp = core_proc_add(comm_gid_at(g, i), line);
        if (lp < 0)
            return MPI_ERR_INTERN;
        g[i] = lp;
        line = nl + 1;
    }
    return MPI_SUCCESS;
}

/* The leaders first swap their group's size, agreement key and the job their group is in,
 * then their process names (gids) and, when the groups are not all of one job, the
 * processes' cards (so that every member can reach every process of the other group); the
 * agreement's key is the lower of the two, so both groups order it alike. Then the pairs
 * are agreed in rounds (ctx_and_inter). */
static int intercomm_create(mpii_comm *local, int local_leader, const comm_link *link,
                            mpii_comm **out)
{
    uint64_t key = mpii_comm_ctx_key(local);
    /* size, key (high, low), job (high, low) */
    unsigned mine[5], theirs[5];
    /* status, remote size, key (high, low), bytes of cards */
    int res[5] = {MPI_SUCCESS, 0, 0, 0, 0};
    int *rl = NULL;
    char *rcards = NULL;
    *out = NULL;
    if (local->rank == local_leader) {
        uint64_t job = comm_group_job(local->group);
        mine[0] = (unsigned)local->size;
        mine[1] = (unsigned)(key >> 32);
        mine[2] = (unsigned)key;
        mine[3] = (unsigned)(job >> 32);
        mine[4] = (unsigned)job;
        res[0] = link_swap(link, mine, sizeof mine, theirs, sizeof theirs);
        res[1] = (int)theirs[0];
        uint64_t rkey = (uint64_t)theirs[1] << 32 | theirs[2];
        uint64_t rjob = (uint64_t)theirs[3] << 32 | theirs[4];
        if (rkey < key)
            key = rkey;
        res[2] = (int)(key >> 32);
        res[3] = (int)(uint32_t)key;
        if (res[0] == MPI_SUCCESS && (res[1] <= 0 || res[1] > FAB_RANK_MAX + 1))
            res[0] = MPI_ERR_INTERN;
        if (res[0] == MPI_SUCCESS) {
            int *gids = comm_gids_of(local->group->lpids, local->size);
            rl = util_malloc((size_t)(2 * res[1] + 1) * sizeof(int));
            res[0] = link_swap(link, gids, (size_t)local->size * 2 * sizeof(int), rl,
                               (size_t)res[1] * 2 * sizeof(int));
            free(gids);
        }
        if (res[0] == MPI_SUCCESS && (job == 0 || rjob == 0 || job != rjob)) {
            size_t len = 0;
            char *cards = comm_group_cards(local->group, &len);
            uint64_t mlen = cards ? len : UINT64_MAX, rlen = 0;
            res[0] = link_swap(link, &mlen, sizeof mlen, &rlen, sizeof rlen);
            if (res[0] == MPI_SUCCESS && (mlen == UINT64_MAX || rlen == UINT64_MAX ||
                                          rlen > (uint64_t)res[1] * 1024))
                res[0] = MPI_ERR_INTERN;
            if (res[0] == MPI_SUCCESS) {
                rcards = util_malloc((size_t)rlen + 1);
                res[0] = link_swap(link, cards, len, rcards, (size_t)rlen);
                res[4] = (int)rlen;
            }
            free(cards);
        }
    }
    int rc = mpii_bcast(res, 5, MPI_INT, local_leader, local);
    if (rc == MPI_SUCCESS)
        rc = res[0];
    if (rc == MPI_SUCCESS && local->rank != local_leader) {
        rl = util_malloc((size_t)(2 * res[1] + 1) * sizeof(int));
        if (res[4] > 0)
            rcards = util_malloc((size_t)res[4] + 1);
    }
    if (rc == MPI_SUCCESS)
        rc = mpii_bcast(rl, 2 * res[1], MPI_INT, local_leader, local);
    if (rc == MPI_SUCCESS && res[4] > 0)
        rc = mpii_bcast(rcards, res[4], MPI_CHAR, local_leader, local);
    if (rc == MPI_SUCCESS)
        rc = comm_procs_add(rl, res[1], res[4] > 0 ? rcards : NULL, (size_t)res[4]);
    free(rcards);
    int pairs[2];
    if (rc == MPI_SUCCESS) {
        ctx_inter_round x = {local, local_leader, link};
        key = (uint64_t)(uint32_t)res[2] << 32 | (uint32_t)res[3];
        rc = ctx_agree(key, 2, pairs, ctx_and_inter, &x);
    }
    if (rc == MPI_SUCCESS) {
        mpii_group_ref(local->group);
        *out = comm_build(local, local->group, mpii_group_create(res[1], rl), pairs[0], pairs[1]);
    }
    free(rl);
    return rc;
}

/* The side that passed high = false comes first; on a tie, the side whose
 * first process has the lower process id. */
int mpii_intercomm_merge(mpii_comm *inter, int high, mpii_comm **out)
{
    int hi = high ? 1 : 0, rhi[2] = {MPI_SUCCESS, 0}, pair;
    mpii_comm *lc = inter->local_comm;
    *out = NULL;
    if (lc->rank == 0)
        rhi[0] = inter_swap(inter, &hi, 1, &rhi[1], 1, MPI_INT, COMM_TAG_MERGE);
    int rc = mpii_bcast(rhi, 2, MPI_INT, 0, lc);
    if (rc == MPI_SUCCESS)
        rc = rhi[0];
    if (rc == MPI_SUCCESS)
        rc = ctx_agree_inter(inter, 1, &pair);
    if (rc != MPI_SUCCESS)
        return rc;
    const mpii_group *a = inter->group, *b = inter->remote;
    int local_first = hi != rhi[1] ? !hi : core_gid(a->lpids[0]) < core_gid(b->lpids[0]);
    if (!local_first) {
        a = inter->remote;
        b = inter->group;
    }
    int *l = util_malloc((size_t)(a->size + b->size) * sizeof(int));
    memcpy(l, a->lpids, (size_t)a->size * sizeof(int));
    memcpy(l + a->size, b->lpids, (size_t)b->size * sizeof(int));
    *out = comm_build(inter, mpii_group_create(a->size + b->size, l), NULL, pair, -1);
    free(l);
    return MPI_SUCCESS;
}

/* ---- queries ------------------------------------------------------------------------ */

int mpii_comm_compare(mpii_comm *a, mpii_comm *b)
{
    if (a == b)
        return MPI_IDENT;
    if (a->is_inter != b->is_inter)
        return MPI_UNEQUAL;
    int r = mpii_group_compare(a->group, b->group);
    if (a->is_inter) {
        int r2 = mpii_group_compare(a->remote, b->remote);
        if (r2 > r)
            r = r2;
    }
    if (r == MPI_IDENT)
        return MPI_CONGRUENT;
    return r;
}

int mpii_comm_set_info(mpii_comm *c, MPI_Info info)
{
    MPI_Info n = MPI_INFO_NULL;
    if (info != MPI_INFO_NULL) {
        int rc = PMPI_Info_dup(info, &n);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    if (c->info != MPI_INFO_NULL)
        PMPI_Info_free(&c->info);
    c->info = n;
    return MPI_SUCCESS;
}

/* ---- from groups (no parent communicator) --------------------------------------------
 * Every process of the job is in MPI_COMM_WORLD (process id == world rank)
 * until dynamic processes exist, so MPI_COMM_WORLD's collective context
 * carries the construction traffic, with a tag hashed from the string tag. */

static int comm_stringtag(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return (int)(h & MPII_TAG_UB);
}

int mpii_comm_create_from_group(mpii_group *g, const char *stringtag, mpii_comm **out)
{
    mpii_comm *world = mpii_comm_get(MPI_COMM_WORLD);
    int rc = mpii_comm_create_group(world, g, comm_stringtag(stringtag), out);
    if (rc == MPI_SUCCESS && *out)
        (*out)->session = g->session;
    return rc;
}

int mpii_intercomm_from_groups(mpii_group *local, int local_leader, mpii_group *remote,
                               int remote_leader, const char *stringtag, mpii_comm **out)
{
    mpii_comm *world = mpii_comm_get(MPI_COMM_WORLD), *lc = NULL;
    int tag = comm_stringtag(stringtag);
    *out = NULL;
    int rc = mpii_comm_create_group(world, local, tag, &lc);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!lc)
        return MPI_ERR_GROUP;
    comm_link link = {world, remote->lpids[remote_leader], COMM_TAG_GROUP + tag, 1, -1};
    rc = intercomm_create(lc, local_leader, &link, out);
    comm_destroy(lc);
    return rc;
}
