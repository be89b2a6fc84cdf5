/* Node-level collectives through one shared-memory segment per communicator
 * (the seeds' idea of doing heavy work where it is cheap): instead of
 * messages, the ranks of a node meet in a segment with a control line per rank
 * and two data sets used alternately.
 *
 *   barrier    every rank raises its arrive flag and waits for all of them
 *   bcast      the root copies the message into the set and raises the set's
 *              flag; the others copy it out (one copy each, all in parallel)
 *   allreduce  every rank copies its vector into its slot; each rank then
 *   / reduce   folds one n-th of the vector over all slots, in rank order (so
 *              non-commutative operations are right), into the result area;
 *              everyone (allreduce) or the root (reduce) copies the result out
 *              (up to DCFA_COLL_SHM_FLAT bytes: one phase, every rank, or the
 *              root, folds all slots in rank order straight into its buffer)
 *   allgather  every rank copies its block(s) into its slot and, once all
 *   / alltoall arrived, its block out of every slot (small blocks, blocking
 *              calls on a made segment only: coll_exchange_shm)
 *
 * Operation k of a communicator uses set k % 2 and sequence number k + 1 in
 * every flag. Before writing into a set a rank waits until every rank has
 * acknowledged operation k - 2 (the last one that used the set); every rank
 * acknowledges an operation when it has stopped reading its set. Flags only
 * grow, so a rank can never mistake an old flag for a new one.
 *
 * Every rank says how many bytes it brings (the bcast root beside the set's
 * flag, every rank of a reduction in its control line), with SHM_BY_MSG set
 * when its data does not fit the set. Whether the data fits is the only
 * thing decided from a rank's own count, so ranks that disagree about it
 * (counts or datatypes that do not match, or a datatype the set cannot
 * fold) still meet in the segment, where the mismatch shows:
 *   - a bcast receiver copies the root's bytes, or fails with MPI_ERR_TRUNCATE
 *     when they are more or fewer than it expects, or, when the
 *     root sends by messages, joins the message algorithm chosen by the
 *     root's size, with its own buffer (a truncation is then the receive's);
 *   - a reduction rank whose vector fits compares every rank's bytes with its
 *     own before folding: all equal is the normal case (n loads of lines the
 *     arrival poll has just read); if some rank goes by messages, every rank
 *     whose vector fits joins the message algorithm chosen by that size; if
 *     the sizes merely differ, no rank folds and each one that sees it fails
 *     with MPI_ERR_TRUNCATE.
 * A rank going by messages (or bringing nothing) announces, acknowledges at
 * once and never waits for the others in the segment.
 *
 * The segment is made on the first use, inside that first schedule: rank 0
 * creates it (/dev/shm/dcfa-<job>-coll-<world rank>-<T>, T random, so no other
 * user can make the name first; under the job's prefix, so mpirun removes
 * it after a crash) and sends T to the others, who map it and
 * raise their mapped flag; rank 0 waits for every flag and unlinks the name
 * before its first operation goes on (so a rank that leaves the operation
 * early and frees the communicator cannot unlink it under the others). Used for
 * the blocking barrier, bcast, reduce and allreduce of intra-communicators of
 * 2+ ranks (nonblocking and persistent ones, and operations a running schedule
 * appends to itself, use messages); the data goes through the set when it fits
 * (bcast: the whole set, any datatype; reductions: one DCFA_COLL_SHM_SLOT slot
 * per rank, dense contiguous datatypes), else by messages after the
 * announcement; DCFA_COLL_SHM=0 turns it off. Only for communicators whose
 * ranks are all on one node (mpii_node_group_local: the process mapping). */
#include "mpi/coll/algo.h"
#include "mpi/coll/node_shm.h"
#include "assist/assist.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct shm_ctl {
    _Atomic uint64_t arrive, done, ack, mapped;
    char pad[64 - 4 * sizeof(uint64_t)];
} shm_ctl;
_Static_assert(sizeof(shm_ctl) == 64, "one cache line per rank");

/* A reduction's or exchange's arrival, per rank and set: the sequence number, the announced
 * size and, up to SHM_INLINE bytes, the data itself, in one cache line, so a rank that sees
 * another arrive has its data with the same line (one transfer instead of a flag line and
 * then a slot line, read one after the other). */
#define SHM_INLINE 48
typedef struct shm_pkt {
    _Atomic uint64_t seq;
    _Atomic uint64_t word;
    char data[SHM_INLINE];
} shm_pkt;
_Static_assert(sizeof(shm_pkt) == 64, "one cache line per rank and set");

typedef struct shm_seg {
    void *base;
    size_t len;
    int n;
    size_t slot;            /* bytes per rank slot */
    shm_ctl *ctl;           /* n lines */
    _Atomic uint64_t *flag; /* one per set, each on its own line; the word after it: the
                               bytes of the set's bcast, then up to SHM_INLINE bytes of it */
    shm_pkt *pkt;           /* 2 x n lines: set p, rank i at pkt[p * n + i] */
    char *set[2];           /* n slots + one result area of n slots... (n + 1) * slot bytes */
    char name[96];
    int unlink_pending;
} shm_seg;

typedef struct shm_state {
    shm_seg *seg;      /* NULL until made (inside the first schedule) */
    int planned;       /* a schedule that makes it has been built */
    uint64_t seq;      /* operations built so far */
    uint64_t finished; /* operations this rank has finished */
    uint64_t seen;     /* the last operation every rank was seen to have arrived at */
    uint64_t token;    /* rank 0's segment token (random: no one else can guess the name),
                          sent to the others; 0: it could not make it */
    int node_local;    /* 1: all ranks on one node, 0: not, -1: not known yet */
} shm_state;

typedef struct shm_arg {
    mpii_comm *c;
    uint64_t seq;
    const void *sbuf;
    void *rbuf;
    MPI_Aint count;
    MPI_Datatype dt;
    MPI_Op op;
    int root;
    size_t bytes;
    uint64_t word; /* what this rank announces: bytes, | SHM_BY_MSG when not through the set */
    int mismatch;  /* a reduction whose sizes differ: nothing to copy out */
    int flat;      /* a reduction in one phase: each rank folds all slots into its own buffer */
} shm_arg;

/* in an announced byte count: this rank's data goes by messages, not through the set */
#define SHM_BY_MSG ((uint64_t)1 << 63)

static size_t shm_set_bytes(int n, size_t slot) { return (size_t)(n + 1) * slot; }
static shm_state *shm_state_of(mpii_comm *c);

int coll_shm_usable(const coll_sched *s, mpii_comm *c)
{
    /* Operation numbers are taken when the operation is built, which must be
     * in the same order on every rank: not for a schedule extended while it
     * runs (built when each rank gets there), nor for a persistent one (it
     * would reuse its number at every start), nor for a nonblocking one (its
     * order against blocking collectives may differ between ranks: sched.h).
     * Nothing here depends on the counts or datatypes, which may differ. */
    if (!util_cfg.coll_shm || c->is_inter || c->size < 2 || coll_sched_is_persistent(s) ||
        coll_sched_is_nonblocking(s) || coll_sched_is_started(s))
        return 0;
    /* only when every rank is on my node (the process mapping; the same on every
     * rank, so all decide alike): never shared memory across hosts */
    shm_state *st = shm_state_of(c);
    if (st->node_local < 0)
        st->node_local = mpii_node_group_local(c->group);
    return st->node_local;
}

static shm_state *shm_state_of(mpii_comm *c)
{
    if (!c->coll_shm) {
        shm_state *st = util_calloc(1, sizeof(shm_state));
        st->node_local = -1;
        c->coll_shm = st;
    }
    return c->coll_shm;
}

/* ---- the segment -------------------------------------------------------------------- */

static shm_seg *shm_seg_map(const char *name, int n, size_t slot, int create)
{
    size_t ctl = (size_t)n * sizeof(shm_ctl) + 2 * 64 + 2 * (size_t)n * sizeof(shm_pkt);
    size_t len = ctl + 2 * shm_set_bytes(n, slot);
    /* made exclusively with its memory reserved, and checked (owner, mode, size) by the
     * others: a full /dev/shm is an error here, a segment planted by another user is refused */
    void *p;
    int rc = create ? util_shm_create(name, len, "collectives", &p)
                    : util_shm_attach(name, len, "collectives", &p);
    if (rc == UTIL_ENOENT)
        mpii_cause("shared segment %s is not there", name);
    if (rc == UTIL_ENOMEM)
        mpii_cause("the node segment takes 2 x (ranks + 1) x DCFA_COLL_SHM_SLOT bytes; "
                   "DCFA_COLL_SHM=0 does without it");
    if (rc != UTIL_OK)
        return NULL;
    shm_seg *g = util_calloc(1, sizeof *g);
    g->base = p;
    g->len = len;
    g->n = n;
    g->slot = slot;
    g->ctl = p;
    g->flag = (_Atomic uint64_t *)((char *)p + (size_t)n * sizeof(shm_ctl));
    g->pkt = (shm_pkt *)((char *)g->flag + 2 * 64);
    g->set[0] = (char *)p + ctl;
    g->set[1] = g->set[0] + shm_set_bytes(n, slot);
    snprintf(g->name, sizeof g->name, "%s", name);
    return g;
}

/* Segments made here whose names are not unlinked yet: a process that dies (util_die)
 * before every rank mapped one removes the name (under mpirun the daemon would, under
 * Hydra or Slurm nobody: faults.mismatch_hydra found one left) */
#define SHM_PENDING_MAX 16
static shm_seg *shm_pending[SHM_PENDING_MAX];

static void shm_pending_unlink(void)
{
    for (int i = 0; i < SHM_PENDING_MAX; i++)
        if (shm_pending[i] && shm_pending[i]->unlink_pending)
            util_shm_remove(shm_pending[i]->name);
}

static void shm_pending_set(shm_seg *g, int pending)
{
    g->unlink_pending = pending;
    for (int i = 0; i < SHM_PENDING_MAX; i++) {
        if (pending && !shm_pending[i]) {
            shm_pending[i] = g;
            util_die_cleanup_add(shm_pending_unlink);
            return;
        }
        if (!pending && shm_pending[i] == g)
            shm_pending[i] = NULL;
    }
}

static void shm_name(char *buf, size_t len, int lpid0, uint64_t token)
{
    snprintf(buf, len, "/dcfa-%s-coll-%d-%016llx", assist_job_id(), lpid0,
             (unsigned long long)token);
}

static int shm_create(coll_sched *s, void *arg)
{
    mpii_comm *c = arg;
    shm_state *st = c->coll_shm;
    char name[96];
    st->token = util_shm_token();
    shm_name(name, sizeof name, c->group->lpids[0], st->token);
    st->seg = shm_seg_map(name, c->size, util_cfg.coll_shm_slot, 1);
    if (!st->seg) {
        st->token = 0; /* tells the others */
        return MPI_ERR_NO_MEM;
    }
    shm_pending_set(st->seg, 1);
    return MPI_SUCCESS;
}

static int shm_open_seg(coll_sched *s, void *arg)
{
    mpii_comm *c = arg;
    shm_state *st = c->coll_shm;
    char name[96];
    if (st->token == 0)
        return MPI_ERR_NO_MEM;
    shm_name(name, sizeof name, c->group->lpids[0], st->token);
    st->seg = shm_seg_map(name, c->size, util_cfg.coll_shm_slot, 0);
    if (!st->seg)
        return MPI_ERR_NO_MEM;
    atomic_store_explicit(&st->seg->ctl[c->rank].mapped, 1, memory_order_release);
    return MPI_SUCCESS;
}

static int shm_poll_mapped(coll_sched *s, void *arg)
{
    shm_seg *g = ((shm_state *)((mpii_comm *)arg)->coll_shm)->seg;
    if (!g)
        return 1;
    for (int i = 1; i < g->n; i++)
        if (!atomic_load_explicit(&g->ctl[i].mapped, memory_order_acquire))
            return 0;
    return 1;
}

static int shm_unlink_name(coll_sched *s, void *arg)
{
    shm_seg *g = ((shm_state *)((mpii_comm *)arg)->coll_shm)->seg;
    if (!g)
        return MPI_ERR_NO_MEM;
    util_shm_remove(g->name); /* everyone has it mapped */
    shm_pending_set(g, 0);
    return MPI_SUCCESS;
}

/* add the rounds that make the segment, once per communicator */
static void shm_plan(coll_sched *s, mpii_comm *c)
{
    shm_state *st = shm_state_of(c);
    if (st->planned)
        return;
    st->planned = 1;
    if (c->rank == 0) {
        coll_sched_call(s, shm_create, c);
        for (int i = 1; i < c->size; i++)
            coll_sched_send(s, &st->token, 1, MPI_UINT64_T, i, NULL);
        coll_sched_poll(s, shm_poll_mapped, c);
        coll_sched_round(s);
        coll_sched_call(s, shm_unlink_name, c);
    } else {
        coll_sched_recv(s, &st->token, 1, MPI_UINT64_T, 0, NULL);
        coll_sched_round(s);
        coll_sched_call(s, shm_open_seg, c);
    }
    coll_sched_round(s);
}

void coll_shm_release(mpii_comm *c)
{
    shm_state *st = c->coll_shm;
    if (!st)
        return;
    if (st->seg) {
        if (st->seg->unlink_pending)
            util_shm_remove(st->seg->name);
        shm_pending_set(st->seg, 0);
        munmap(st->seg->base, st->seg->len);
        free(st->seg);
    }
    free(st);
    c->coll_shm = NULL;
}

/* ---- steps ------------------------------------------------------------------------------- */

static shm_seg *shm_seg_of(const shm_arg *a) { return ((shm_state *)a->c->coll_shm)->seg; }

static int shm_all_geq(shm_seg *g, size_t field, uint64_t v, int except)
{
    for (int i = 0; i < g->n; i++) {
        if (i == except)
            continue;
        _Atomic uint64_t *f = (_Atomic uint64_t *)((char *)&g->ctl[i] + field);
        if (atomic_load_explicit(f, memory_order_acquire) < v)
            return 0;
    }
    return 1;
}

/* a set may be written once everyone acknowledged the operation two before */
static int shm_poll_set_free(coll_sched *s, void *arg)
{
    shm_arg *a = arg;
    shm_state *st = a->c->coll_shm;
    /* a rank arrives at operation k only after finishing (and so acknowledging) k - 1: all
     * arrived at k - 1 means all acknowledged k - 2, with no line to read */
    if (a->seq < 3 || st->seen + 1 >= a->seq)
        return 1;
    return !st->seg || shm_all_geq(st->seg, offsetof(shm_ctl, ack), a->seq - 2, -1);
}

static int shm_poll_arrived(coll_sched *s, void *arg)
{
    shm_arg *a = arg;
    shm_state *st = a->c->coll_shm;
    if (!st->seg)
        return 1;
    if (!shm_all_geq(st->seg, offsetof(shm_ctl, arrive), a->seq, -1))
        return 0;
    if (st->seen < a->seq)
        st->seen = a->seq;
    return 1;
}

/* every rank's packet of this operation is there (a reduction's or an exchange's arrival) */
static int shm_poll_pkts(coll_sched *s, void *arg)
{
    shm_arg *a = arg;
    shm_state *st = a->c->coll_shm;
    shm_seg *g = st->seg;
    if (!g)
        return 1;
    shm_pkt *p = g->pkt + (size_t)(a->seq & 1) * (size_t)g->n;
    for (int i = 0; i < g->n; i++)
        if (atomic_load_explicit(&p[i].seq, memory_order_acquire) < a->seq)
            return 0;
    if (st->seen < a->seq)
        st->seen = a->seq;
    return 1;
}

static shm_pkt *shm_pkt_of(shm_seg *g, uint64_t seq, int rank)
{
    return g->pkt + (size_t)(seq & 1) * (size_t)g->n + rank;
}

/* where rank i's data of this operation is: in its packet when it is that small, else its slot */
static char *shm_in(shm_seg *g, const shm_arg *a, int i)
{
    if (a->bytes <= SHM_INLINE)
        return shm_pkt_of(g, a->seq, i)->data;
    return g->set[a->seq & 1] + (size_t)i * g->slot;
}

static int shm_poll_done(coll_sched *s, void *arg)
{
    shm_arg *a = arg;
    shm_seg *g = shm_seg_of(a);
    return !g || shm_all_geq(g, offsetof(shm_ctl, done), a->seq, -1);
}

static int shm_poll_flag(coll_sched *s, void *arg)
{
    shm_arg *a = arg;
    shm_seg *g = shm_seg_of(a);
    return !g || atomic_load_explicit(&g->flag[(a->seq & 1) * 8], memory_order_acquire) >= a->seq;
}

static void shm_set(_Atomic uint64_t *f, uint64_t v)
{
    atomic_store_explicit(f, v, memory_order_release);
}

static int shm_arrive(coll_sched *s, void *arg)
{
    shm_arg *a = arg;
    shm_seg *g = shm_seg_of(a);
    if (!g)
        return MPI_ERR_NO_MEM;
    shm_set(&g->ctl[a->c->rank].arrive, a->seq);
    return MPI_SUCCESS;
}

static int shm_ack(coll_sched *s, void *arg)
{
    shm_arg *a = arg;
    shm_seg *g = shm_seg_of(a);
    if (!g)
        return MPI_ERR_NO_MEM;
    shm_set(&g->ctl[a->c->rank].ack, a->seq);
    return MPI_SUCCESS;
}

/* a copy of n bytes; a zero-count operation may name NULL buffers (memcpy may not) */
static inline void shm_copy(void *dst, const void *src, size_t n)
{
    if (n)
        memcpy(dst, src, n);
}

static const char *shm_src(const shm_arg *a)
{
    const void *in = a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf;
    return mpii_buf_at(in, mpii_dtype_get(a->dt)->dt.true_lb);
}

static char *shm_dst(const shm_arg *a)
{
    return (char *)mpii_buf_at(a->rbuf, mpii_dtype_get(a->dt)->dt.true_lb);
}

/* the message algorithm a rank joins from inside its schedule (its rounds run after every
 * round built so far); on the segment's communicator, which for an inter-communicator's local
 * phase is not the schedule's own */
static int shm_join_msgs(coll_sched *s, const shm_arg *a, size_t bytes)
{
    mpii_comm *on = coll_sched_set_on(s, a->c);
    int rc;
    if (a->op == MPI_OP_NULL)
        rc = coll_bcast_msgs(s, a->rbuf, a->count, a->dt, a->root, a->c, bytes);
    else if (a->root < 0)
        rc = coll_allreduce_msgs(s, a->sbuf, a->rbuf, a->count, a->dt, a->op, a->c, bytes);
    else
        rc = coll_reduce_msgs(s, a->sbuf, a->rbuf, a->count, a->dt, a->op, a->root, a->c);
    coll_sched_set_on(s, on);
    return rc;
}

/* allreduce/reduce: my vector into my packet (up to SHM_INLINE bytes) or my slot, my size
 * and my arrival in my packet. A rank whose vector goes by messages, or that brings none, is
 * then done with the segment (it never waits for the others there). */
static int shm_red_in(coll_sched *s, void *arg)
{
    shm_arg *a = arg;
    shm_seg *g = shm_seg_of(a);
    if (!g)
        return MPI_ERR_NO_MEM;
    shm_ctl *me = &g->ctl[a->c->rank];
    shm_pkt *p = shm_pkt_of(g, a->seq, a->c->rank);
    int through = a->bytes && !(a->word & SHM_BY_MSG);
    if (through)
        shm_copy(shm_in(g, a, a->c->rank), shm_src(a), a->bytes);
    atomic_store_explicit(&p->word, a->word, memory_order_relaxed);
    shm_set(&p->seq, a->seq);
    if (!through) {
        shm_set(&me->done, a->seq);
        shm_set(&me->ack, a->seq);
    }
    return MPI_SUCCESS;
}

/* the sizes differ (every rank sees the same ones): if a rank goes by messages, join them (by
 * the largest such size); else nobody folds and this rank fails */
static int shm_red_mismatch(coll_sched *s, shm_arg *a, shm_seg *g)
{
    uint64_t by_msg = 0;
    for (int i = 0; i < g->n; i++) {
        uint64_t w = atomic_load_explicit(&shm_pkt_of(g, a->seq, i)->word, memory_order_relaxed);
        if ((w & SHM_BY_MSG) && (w & ~SHM_BY_MSG) >= by_msg)
            by_msg = (w & ~SHM_BY_MSG) | SHM_BY_MSG;
    }
    a->mismatch = 1;
    if (by_msg)
        return shm_join_msgs(s, a, (size_t)(by_msg & ~SHM_BY_MSG));
    return MPI_ERR_TRUNCATE;
}

/* fold my n-th of the vector over all slots, in rank order, into the result area */
static int shm_red_fold(coll_sched *s, void *arg)
{
    shm_arg *a = arg;
    shm_seg *g = shm_seg_of(a);
    if (!g)
        return MPI_ERR_NO_MEM;
    int n = g->n, r = a->c->rank, rc = MPI_SUCCESS;
    /* every rank has arrived: did all bring my size? (lines the arrival poll has just read) */
    uint64_t differ = 0;
    for (int i = 0; i < n; i++)
        differ |=
            atomic_load_explicit(&shm_pkt_of(g, a->seq, i)->word, memory_order_relaxed) ^ a->word;
    if (differ) {
        rc = shm_red_mismatch(s, a, g);
    } else if (a->flat) {
        /* one phase: the whole vector, in rank order, straight into my buffer (reduce: the
         * root only); the same steps on every rank, so every rank gets the same bits */
        if (a->root < 0 || r == a->root) {
            MPI_Aint lb = mpii_dtype_get(a->dt)->dt.true_lb;
            /* the last rank's contribution: from its buffer on that rank (the same bits as in
             * its slot; in place, it is there already) */
            if (r != n - 1)
                shm_copy(shm_dst(a), shm_in(g, a, n - 1), a->bytes);
            else if (a->sbuf != MPI_IN_PLACE)
                shm_copy(shm_dst(a), shm_src(a), a->bytes);
            for (int i = n - 2; i >= 0 && rc == MPI_SUCCESS; i--)
                rc = mpii_op_apply(a->op, mpii_buf_at(shm_in(g, a, i), -lb), a->rbuf, a->count,
                                   a->dt);
        }
    } else {
        MPI_Aint lo = a->count * r / n, hi = a->count * (r + 1) / n;
        size_t esz = a->bytes / (size_t)a->count, off = (size_t)lo * esz;
        char *set = g->set[a->seq & 1], *res = set + (size_t)n * g->slot + off;
        if (hi > lo) {
            /* the slots hold the elements from offset 0; the op looks at buf + true_lb, which
             * is not 0 for a type of absolute addresses used with MPI_BOTTOM: shift it back */
            MPI_Aint lb = mpii_dtype_get(a->dt)->dt.true_lb;
            shm_copy(res, shm_in(g, a, n - 1) + off, (size_t)(hi - lo) * esz);
            for (int i = n - 2; i >= 0 && rc == MPI_SUCCESS; i--)
                rc = mpii_op_apply(a->op, mpii_buf_at(shm_in(g, a, i) + off, -lb),
                                   (void *)mpii_buf_at(res, -lb), hi - lo, a->dt);
        }
    }
    shm_set(&g->ctl[r].done, a->seq);
    if (a->flat || (a->root >= 0 && r != a->root))
        shm_set(&g->ctl[r].ack, a->seq); /* one phase, or a reduce's non-root: reads no more */
    return rc;
}

static int shm_red_out(coll_sched *s, void *arg)
{
    shm_arg *a = arg;
    shm_seg *g = shm_seg_of(a);
    if (!g)
        return MPI_ERR_NO_MEM;
    if (!a->mismatch)
        shm_copy(shm_dst(a), g->set[a->seq & 1] + (size_t)g->n * g->slot, a->bytes);
    return shm_ack(s, arg);
}

/* where a bcast's bytes are: up to SHM_INLINE on the set's flag line, after the flag and the
 * size (one line for the receivers to read), else the set */
static char *shm_bcast_data(shm_seg *g, uint64_t seq, size_t bytes)
{
    if (bytes <= SHM_INLINE)
        return (char *)&g->flag[(seq & 1) * 8 + 2];
    return g->set[seq & 1];
}

/* the root: the message into the set if it fits, its size beside the flag, the flag */
static int shm_bcast_in(coll_sched *s, void *arg)
{
    shm_arg *a = arg;
    shm_seg *g = shm_seg_of(a);
    if (!g)
        return MPI_ERR_NO_MEM;
    const core_dt *t = &mpii_dtype_get(a->dt)->dt;
    _Atomic uint64_t *flag = &g->flag[(a->seq & 1) * 8];
    char *to = shm_bcast_data(g, a->seq, a->bytes);
    if (!(a->word & SHM_BY_MSG) && t->contig)
        shm_copy(to, shm_dst(a), a->bytes);
    else if (!(a->word & SHM_BY_MSG))
        core_dt_pack(a->rbuf, (size_t)a->count, t, 0, to, a->bytes);
    atomic_store_explicit(flag + 1, a->word, memory_order_relaxed);
    shm_set(flag, a->seq);
    return shm_ack(s, arg);
}

/* a receiver: the root's bytes out of the set (as many as I expect), or join its messages */
static int shm_bcast_out(coll_sched *s, void *arg)
{
    shm_arg *a = arg;
    shm_seg *g = shm_seg_of(a);
    if (!g)
        return MPI_ERR_NO_MEM;
    const core_dt *t = &mpii_dtype_get(a->dt)->dt;
    uint64_t sent = atomic_load_explicit(&g->flag[(a->seq & 1) * 8 + 1], memory_order_relaxed);
    int rc = MPI_SUCCESS;
    if (sent & SHM_BY_MSG)
        rc = shm_join_msgs(s, a, (size_t)(sent & ~SHM_BY_MSG));
    else if (sent != a->bytes) /* more than I expect, or fewer: the counts differ */
        rc = MPI_ERR_TRUNCATE;
    else if (t->contig)
        shm_copy(shm_dst(a), shm_bcast_data(g, a->seq, (size_t)sent), (size_t)sent);
    else
        core_dt_unpack(a->rbuf, (size_t)a->count, t, 0, shm_bcast_data(g, a->seq, (size_t)sent),
                       (size_t)sent);
    shm_ack(s, arg);
    return rc;
}

/* ---- the collectives ------------------------------------------------------------------------ */

/* Operations run in sequence order on each rank: a rank's flags only grow
 * because its operation k + 1 starts after its operation k has finished
 * (nonblocking ones may otherwise be progressed in any order). */
static int shm_poll_turn(coll_sched *s, void *arg)
{
    shm_arg *a = arg;
    return ((shm_state *)a->c->coll_shm)->finished + 1 >= a->seq;
}

static int shm_finish(coll_sched *s, void *arg)
{
    shm_arg *a = arg;
    ((shm_state *)a->c->coll_shm)->finished = a->seq;
    return MPI_SUCCESS;
}

static shm_arg *shm_begin(coll_sched *s, mpii_comm *c)
{
    shm_plan(s, c);
    shm_state *st = c->coll_shm;
    shm_arg *a = coll_sched_alloc(s, sizeof *a);
    memset(a, 0, sizeof *a);
    a->c = c;
    a->seq = ++st->seq;
    a->root = -1;
    coll_sched_poll(s, shm_poll_turn, a);
    coll_sched_round(s);
    return a;
}

static void shm_end(coll_sched *s, shm_arg *a)
{
    coll_sched_round(s);
    coll_sched_call(s, shm_finish, a);
    coll_sched_round(s);
}

/* ---- at once ------------------------------------------------------------------------------- */

/* Once the segment is made, a blocking operation whose schedule is still empty (the whole
 * collective, not a step of a larger one) runs here while it is built: the same steps, flags
 * and order as through the schedule, with the waits in place (core progress and backoff
 * between tests, as coll_sched_wait), so no rounds are built, started and ended. Data that
 * goes by messages (a mismatch, a bcast that does not fit) is added to the schedule, which
 * the caller runs as usual. */
static shm_state *shm_now(const coll_sched *s, mpii_comm *c)
{
    shm_state *st = c->coll_shm;
    return st && st->seg && st->finished == st->seq && coll_sched_is_empty(s) ? st : NULL;
}

static void shm_wait(coll_sched_fn test, shm_arg *a)
{
    if (test(NULL, a))
        return;
    util_backoff b;
    util_backoff_reset(&b);
    while (!test(NULL, a)) {
        if (core_progress() > 0)
            util_backoff_reset(&b);
        else
            util_backoff_wait(&b);
    }
}

static shm_arg shm_arg_now(shm_state *st, mpii_comm *c)
{
    shm_arg a;
    memset(&a, 0, sizeof a);
    a.c = c;
    a.seq = ++st->seq;
    a.root = -1;
    return a;
}

int coll_barrier_shm(coll_sched *s, mpii_comm *c)
{
    shm_state *st = shm_now(s, c);
    if (st) {
        /* a barrier reads no set, and every earlier operation of this rank has finished: it
         * acknowledges before it arrives, so the line the others poll changes once, not again
         * while they may be polling it for the next operation (2 ranks, back to back: 0.55 ->
         * 0.39 us a barrier, and a bcast between barriers 0.60-0.70 -> 0.24-0.28 us) */
        shm_arg now = shm_arg_now(st, c);
        shm_ack(s, &now);
        shm_arrive(s, &now);
        shm_wait(shm_poll_arrived, &now);
        st->finished = now.seq;
        return MPI_SUCCESS;
    }
    shm_arg *a = shm_begin(s, c);
    coll_sched_call(s, shm_arrive, a);
    coll_sched_poll(s, shm_poll_arrived, a);
    coll_sched_round(s);
    coll_sched_call(s, shm_ack, a);
    shm_end(s, a);
    return MPI_SUCCESS;
}

/* the operation's fields, alike for one run at once (shm_now) and one in a schedule */
static void shm_arg_op(shm_arg *a, const void *sbuf, void *rbuf, MPI_Aint count, MPI_Datatype dt,
                       MPI_Op op, int root, size_t bytes)
{
    a->sbuf = sbuf;
    a->rbuf = rbuf;
    a->count = count;
    a->dt = dt;
    a->op = op;
    a->root = root;
    a->bytes = bytes;
}

int coll_bcast_shm(coll_sched *s, void *buf, MPI_Aint count, MPI_Datatype dt, int root,
                   mpii_comm *c)
{
    size_t bytes = (size_t)count * coll_tsize(dt);
    int fits = bytes <= shm_set_bytes(c->size, util_cfg.coll_shm_slot);
    shm_state *st = shm_now(s, c);
    if (st) {
        shm_arg now = shm_arg_now(st, c);
        shm_arg_op(&now, now.sbuf, buf, count, dt, MPI_OP_NULL, root, bytes);
        now.word = bytes | (fits ? 0 : SHM_BY_MSG);
        int rc;
        if (c->rank != root) {
            shm_wait(shm_poll_flag, &now);
            rc = shm_bcast_out(s, &now); /* may join the root's messages */
        } else {
            shm_wait(shm_poll_set_free, &now);
            rc = shm_bcast_in(s, &now);
        }
        st->finished = now.seq;
        if (rc == MPI_SUCCESS && c->rank == root && !fits)
            rc = coll_bcast_msgs(s, buf, count, dt, root, c, bytes);
        return rc;
    }
    shm_arg *a = shm_begin(s, c);
    shm_arg_op(a, a->sbuf, buf, count, dt, MPI_OP_NULL, root, bytes);
    coll_sched_hold_type(s, dt);
    if (c->rank != root) {
        coll_sched_poll(s, shm_poll_flag, a);
        coll_sched_round(s);
        coll_sched_call(s, shm_bcast_out, a); /* may join the root's messages */
        shm_end(s, a);
        return MPI_SUCCESS;
    }
    /* any datatype (packed), the whole set */
    a->word = a->bytes | (fits ? 0 : SHM_BY_MSG);
    coll_sched_poll(s, shm_poll_set_free, a);
    coll_sched_round(s);
    coll_sched_call(s, shm_bcast_in, a);
    shm_end(s, a);
    return fits ? MPI_SUCCESS : coll_bcast_msgs(s, buf, count, dt, root, c, a->bytes);
}

/* root < 0: allreduce */
int coll_reduce_shm(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count, MPI_Datatype dt,
                    MPI_Op op, int root, mpii_comm *c)
{
    size_t bytes = (size_t)count * coll_tsize(dt);
    /* the set folds elements in place: a dense contiguous type, one slot per rank */
    const core_dt *t = &mpii_dtype_get(dt)->dt;
    int fits = t->contig && (t->extent == (MPI_Aint)t->size || count <= 1) &&
               bytes <= util_cfg.coll_shm_slot;
    /* small vectors in one phase (decided alike on every rank whose size matches) */
    int flat = fits && bytes && bytes <= util_cfg.coll_shm_flat;
    shm_state *st = flat ? shm_now(s, c) : NULL;
    if (st) {
        shm_arg now = shm_arg_now(st, c);
        shm_arg_op(&now, sbuf, rbuf, count, dt, op, root, bytes);
        now.word = bytes;
        now.flat = 1;
        shm_wait(shm_poll_set_free, &now);
        shm_red_in(s, &now);
        shm_wait(shm_poll_pkts, &now);
        int rc = shm_red_fold(s, &now); /* may join the messages of another rank */
        st->finished = now.seq;
        return rc;
    }
    shm_arg *a = shm_begin(s, c);
    shm_arg_op(a, sbuf, rbuf, count, dt, op, root, bytes);
    a->flat = flat;
    coll_sched_hold_op(s, op);
    coll_sched_hold_type(s, dt);
    a->word = a->bytes | (fits ? 0 : SHM_BY_MSG);
    coll_sched_poll(s, shm_poll_set_free, a);
    coll_sched_round(s);
    coll_sched_call(s, shm_red_in, a);
    if (!fits || a->bytes == 0) {
        shm_end(s, a);
        if (!fits)
            return root < 0 ? coll_allreduce_msgs(s, sbuf, rbuf, count, dt, op, c, a->bytes)
                            : coll_reduce_msgs(s, sbuf, rbuf, count, dt, op, root, c);
        return MPI_SUCCESS;
    }
    coll_sched_poll(s, shm_poll_pkts, a);
    coll_sched_round(s);
    coll_sched_call(s, shm_red_fold, a); /* may join the messages of another rank */
    if (!flat && (root < 0 || c->rank == root)) {
        coll_sched_poll(s, shm_poll_done, a);
        coll_sched_round(s);
        coll_sched_call(s, shm_red_out, a);
    }
    shm_end(s, a);
    return MPI_SUCCESS;
}

/* ---- allgather and alltoall: one phase, at once only --------------------------------------- */

int coll_shm_ready(const coll_sched *s, mpii_comm *c)
{
    return coll_shm_usable(s, c) && shm_now(s, c) != NULL;
}

static int shm_dense(const core_dt *t, MPI_Aint count)
{
    return t->contig && (t->extent == (MPI_Aint)t->size || count <= 1);
}

/* every rank puts its block(s) into its slot (alltoall: the n blocks in rank order), arrives,
 * and once all have arrived copies its block from every slot (alltoall: block [me] of each) */
int coll_exchange_shm(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt,
                      void *rbuf, MPI_Aint rcount, MPI_Datatype rdt, int all2all, mpii_comm *c)
{
    shm_state *st = shm_now(s, c);
    shm_seg *g = st->seg;
    int n = c->size, r = c->rank, rc = MPI_SUCCESS;
    const core_dt *rt = &mpii_dtype_get(rdt)->dt;
    int inplace = sbuf == MPI_IN_PLACE;
    const void *src = sbuf;
    MPI_Aint cnt = scount;
    MPI_Datatype dt = sdt;
    if (inplace) {
        src = all2all ? rbuf : mpii_buf_at(rbuf, (MPI_Aint)r * rcount * rt->extent);
        cnt = rcount;
        dt = rdt;
    }
    const core_dt *t = &mpii_dtype_get(dt)->dt;
    size_t block = (size_t)cnt * t->size, rblock = (size_t)rcount * rt->size;
    /* a rank whose own send and receive blocks differ goes by messages, where it shows */
    int fits = block == rblock && shm_dense(t, all2all ? cnt * n : cnt) &&
               shm_dense(rt, rcount * n) && block <= util_cfg.coll_shm_flat &&
               (all2all ? block * (size_t)n : block) <= g->slot;
    shm_arg now = shm_arg_now(st, c);
    now.word = block | (fits ? 0 : SHM_BY_MSG);
    now.bytes = all2all ? block * (size_t)n : block; /* what my packet or slot holds */
    shm_wait(shm_poll_set_free, &now);
    shm_ctl *me = &g->ctl[r];
    shm_pkt *p = shm_pkt_of(g, now.seq, r);
    if (fits)
        shm_copy(shm_in(g, &now, r), mpii_buf_at(src, t->true_lb), now.bytes);
    atomic_store_explicit(&p->word, now.word, memory_order_relaxed);
    shm_set(&p->seq, now.seq);
    shm_wait(shm_poll_pkts, &now);
    uint64_t differ = 0, by_msg = 0;
    for (int i = 0; i < n; i++) {
        uint64_t w = atomic_load_explicit(&shm_pkt_of(g, now.seq, i)->word, memory_order_relaxed);
        differ |= w ^ now.word;
        by_msg |= w & SHM_BY_MSG;
    }
    if (!differ && fits) {
        size_t stride = (size_t)rcount * (size_t)rt->extent;
        char *dst = (char *)mpii_buf_at(rbuf, rt->true_lb);
        for (int i = 0; i < n; i++)
            shm_copy(dst + (size_t)i * stride,
                     shm_in(g, &now, i) + (all2all ? (size_t)r * block : 0), block);
    }
    shm_set(&me->ack, now.seq);
    st->finished = now.seq;
    if (by_msg)
        return all2all ? coll_alltoall_msgs(s, sbuf, scount, sdt, rbuf, rcount, rdt, c)
                       : coll_allgather_msgs(s, sbuf, scount, sdt, rbuf, rcount, rdt, c);
    if (differ)
        rc = MPI_ERR_TRUNCATE;
    return rc;
}
