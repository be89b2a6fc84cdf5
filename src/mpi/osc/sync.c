/* Synchronisation: fence, post/start/complete/wait/test, lock/unlock,
 * lock_all/unlock_all, flush and sync.
 *
 * Direct targets: operations complete when they return, so ending an epoch
 * is a memory fence plus the signal of the epoch (a barrier, a counter in
 * the node segment, the lock word). Passive-target locks on direct targets
 * are taken when MPI_Win_lock is called (atomics on the target's lock word:
 * the target never takes part). Targets in message mode get their locks
 * lazily, with the first batch of operations, and their operations are
 * completed by a FLUSH / UNLOCK / COMPLETE item answered by the target
 * (am.c). */
#include "mpi/osc/osc_impl.h"
#include "mpi/group/group.h"

#include <stdlib.h>

static int osc_direct(const osc_peer *p) { return p->mode != OSC_MODE_AM; }

static _Atomic uint64_t *osc_lock_word(osc_win *w, int t)
{
    return &w->lranks[w->peers[t].local].lock;
}

/* take a lock word, progressing (and serving others) while it is held elsewhere */
static void osc_lock_acquire(osc_win *w, int t, int type)
{
    util_backoff b;
    util_backoff_reset(&b);
    while (!osc_lock_try(osc_lock_word(w, t), type))
        osc_backoff(&b);
}

/* window ranks of the members of g; error if one is not in the window */
static int osc_group_ranks(const char *fn, osc_win *w, mpii_group *g, int **out)
{
    int *r = util_malloc(((size_t)g->size + 1) * sizeof(int));
    for (int i = 0; i < g->size; i++) {
        r[i] = mpii_group_rank_of(w->group, g->lpids[i]);
        if (r[i] == MPI_UNDEFINED) {
            free(r);
            return osc_err(w, MPI_ERR_GROUP, fn,
                           "group: its rank %d is not a process of the window", i);
        }
    }
    *out = r;
    return MPI_SUCCESS;
}

/* ---- fence ------------------------------------------------------------------------------- */

int osc_fence(const char *fn, osc_win *w, int assert)
{
    if (assert & ~(MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED))
        return osc_err(w, MPI_ERR_ASSERT, fn,
                       "assert=%d: MPI_Win_fence takes MPI_MODE_NOSTORE, _NOPUT, _NOPRECEDE and "
                       "_NOSUCCEED",
                       assert);
    if (w->nlocked || w->lock_all || w->started || w->posted)
        return osc_err(w, MPI_ERR_RMA_SYNC, fn, "a %s epoch is open on this window",
                       w->started || w->posted ? "post/start/complete/wait" : "passive-target");
    int err = MPI_SUCCESS;
    for (int t = 0; w->am_origin && t < w->size; t++)
        if (!osc_direct(&w->peers[t]) && osc_am_pending(w, t)) {
            int rc = osc_am_flush(w, t, 0);
            if (rc != MPI_SUCCESS && err == MPI_SUCCESS)
                err = rc;
        }
    atomic_thread_fence(memory_order_seq_cst);
    int rc = mpii_barrier(w->comm);
    atomic_thread_fence(memory_order_seq_cst);
    w->fence = !(assert &MPI_MODE_NOSUCCEED);
    if (rc != MPI_SUCCESS)
        return osc_err(w, rc, fn, "the fence's barrier failed");
    if (err != MPI_SUCCESS)
        return osc_err(w, err, fn, "an operation of the epoch failed at its target");
    return MPI_SUCCESS;
}

/* ---- post / start / complete / wait -----------------------------------------------------------
 */

int osc_post(const char *fn, osc_win *w, mpii_group *g, int assert)
{
    if (assert & ~(MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT))
        return osc_err(w, MPI_ERR_ASSERT, fn,
                       "assert=%d: MPI_Win_post takes MPI_MODE_NOCHECK, _NOSTORE and _NOPUT",
                       assert);
    if (w->posted)
        return osc_err(w, MPI_ERR_RMA_SYNC, fn,
                       "an exposure epoch is already open (MPI_Win_wait or MPI_Win_test first)");
    int *r = NULL;
    int rc = osc_group_ranks(fn, w, g, &r);
    if (rc != MPI_SUCCESS)
        return rc;
    atomic_thread_fence(memory_order_seq_cst); /* my stores before the post are seen */
    for (int i = 0; i < g->size; i++) {
        int o = r[i];
        osc_peer *p = &w->peers[o];
        p->in_post = 1;
        if (assert & MPI_MODE_NOCHECK)
            continue;
        if (osc_direct(p))
            atomic_fetch_add_explicit(
                &w->post[(size_t)p->local * (size_t)w->nlocal + (size_t)w->my_local], 1,
                memory_order_release);
        else
            osc_am_post(w, o);
    }
    w->npost = g->size;
    w->posted = 1;
    w->post_nocheck = (assert &MPI_MODE_NOCHECK) != 0;
    free(r);
    return MPI_SUCCESS;
}

int osc_start(const char *fn, osc_win *w, mpii_group *g, int assert)
{
    if (assert & ~MPI_MODE_NOCHECK)
        return osc_err(w, MPI_ERR_ASSERT, fn, "assert=%d: MPI_Win_start takes MPI_MODE_NOCHECK",
                       assert);
    if (w->started)
        return osc_err(w, MPI_ERR_RMA_SYNC, fn,
                       "an access epoch is already open (MPI_Win_complete first)");
    if (w->nlocked || w->lock_all)
        return osc_err(w, MPI_ERR_RMA_SYNC, fn, "a passive-target epoch is open on this window");
    int *r = NULL;
    int rc = osc_group_ranks(fn, w, g, &r);
    if (rc != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < g->size; i++) {
        osc_peer *p = &w->peers[r[i]];
        p->in_start = 1;
        p->post_seen = (assert &MPI_MODE_NOCHECK) != 0;
    }
    w->nstart = g->size;
    w->started = 1;
    w->start_nocheck = (assert &MPI_MODE_NOCHECK) != 0;
    w->fence = 0;
    free(r);
    return MPI_SUCCESS;
}

int osc_pscw_ready(osc_win *w, int t)
{
    osc_peer *p = &w->peers[t];
    if (p->post_seen)
        return MPI_SUCCESS;
    uint32_t want = p->posts_used + 1;
    if (osc_direct(p)) {
        _Atomic uint32_t *c = &w->post[(size_t)w->my_local * (size_t)w->nlocal + (size_t)p->local];
        util_backoff b;
        util_backoff_reset(&b);
        while ((int32_t)(atomic_load_explicit(c, memory_order_acquire) - want) < 0)
            osc_backoff(&b);
    } else {
        int rc = osc_am_wait_post(w, t);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    p->posts_used = want;
    p->post_seen = 1;
    return MPI_SUCCESS;
}

int osc_complete(const char *fn, osc_win *w)
{
    if (!w->started)
        return osc_err(w, MPI_ERR_RMA_SYNC, fn, "no access epoch is open (MPI_Win_start first)");
    int err = MPI_SUCCESS;
    atomic_thread_fence(memory_order_seq_cst);
    for (int t = 0; t < w->size; t++) {
        osc_peer *p = &w->peers[t];
        if (!p->in_start)
            continue;
        int rc = osc_pscw_ready(w, t);
        if (rc == MPI_SUCCESS) {
            if (osc_direct(p))
                atomic_fetch_add_explicit(
                    &w->done[(size_t)p->local * (size_t)w->nlocal + (size_t)w->my_local], 1,
                    memory_order_release);
            else
                rc = osc_am_complete(w, t);
        }
        if (rc != MPI_SUCCESS && err == MPI_SUCCESS)
            err = rc;
        p->in_start = 0;
        p->post_seen = 0;
    }
    w->started = 0;
    w->nstart = 0;
    if (err != MPI_SUCCESS)
        return osc_err(w, err, fn, "an operation of the access epoch failed");
    return MPI_SUCCESS;
}

/* completes that origin o sent to me so far */
static uint32_t osc_dones(osc_win *w, int o)
{
    osc_peer *p = &w->peers[o];
    if (osc_direct(p))
        return atomic_load_explicit(
            &w->done[(size_t)w->my_local * (size_t)w->nlocal + (size_t)p->local],
            memory_order_acquire);
    return (uint32_t)osc_am_completes_seen(w, o);
}

static int osc_all_completed(osc_win *w)
{
    for (int o = 0; o < w->size; o++) {
        osc_peer *p = &w->peers[o];
        if (p->in_post && (int32_t)(osc_dones(w, o) - (p->dones_used + 1)) < 0)
            return 0;
    }
    return 1;
}

int osc_wait(const char *fn, osc_win *w, int *flag)
{
    if (!w->posted)
        return osc_err(w, MPI_ERR_RMA_SYNC, fn, "no exposure epoch is open (MPI_Win_post first)");
    if (flag) {
        core_progress();
        if (!osc_all_completed(w)) {
            *flag = 0;
            return MPI_SUCCESS;
        }
    } else {
        util_backoff b;
        util_backoff_reset(&b);
        while (!osc_all_completed(w))
            osc_backoff(&b);
    }
    atomic_thread_fence(memory_order_seq_cst);
    for (int o = 0; o < w->size; o++) {
        osc_peer *p = &w->peers[o];
        if (p->in_post) {
            p->dones_used++;
            p->in_post = 0;
        }
    }
    w->posted = 0;
    w->npost = 0;
    if (flag)
        *flag = 1;
    return MPI_SUCCESS;
}

/* ---- passive target ------------------------------------------------------------------------- */

static int osc_lock_checks(const char *fn, osc_win *w, int assert)
{
    if (assert & ~MPI_MODE_NOCHECK)
        return osc_err(w, MPI_ERR_ASSERT, fn, "assert=%d: only MPI_MODE_NOCHECK is allowed",
                       assert);
    if (w->lock_all)
        return osc_err(w, MPI_ERR_RMA_SYNC, fn,
                       "an MPI_Win_lock_all epoch is open (MPI_Win_unlock_all first)");
    if (w->started)
        return osc_err(w, MPI_ERR_RMA_SYNC, fn,
                       "a post/start access epoch is open (MPI_Win_complete first)");
    return MPI_SUCCESS;
}

static int osc_lock_one(osc_win *w, int t, int type, int nocheck)
{
    osc_peer *p = &w->peers[t];
    p->lock = (uint8_t)type;
    p->nocheck = (uint8_t)nocheck;
    p->lock_held = 0;
    if (nocheck)
        return MPI_SUCCESS;
    if (osc_direct(p)) {
        osc_lock_acquire(w, t, type);
        p->lock_held = 1;
        return MPI_SUCCESS;
    }
    /* shared-memory windows are read and written with loads and stores
     * under the lock too: take it now; otherwise with the first operations */
    return osc_am_lock(w, t, type, w->flavor == MPI_WIN_FLAVOR_SHARED);
}

static int osc_unlock_one(osc_win *w, int t)
{
    osc_peer *p = &w->peers[t];
    int rc = MPI_SUCCESS;
    if (osc_direct(p)) {
        atomic_thread_fence(memory_order_seq_cst);
        if (p->lock_held)
            osc_lock_release(osc_lock_word(w, t), p->lock);
    } else {
        rc = osc_am_unlock(w, t);
    }
    p->lock = OSC_LK_NONE;
    p->lock_held = 0;
    p->nocheck = 0;
    return rc;
}

int osc_lock(const char *fn, osc_win *w, int type, int rank, int assert)
{
    if (type != MPI_LOCK_SHARED && type != MPI_LOCK_EXCLUSIVE)
        return osc_err(w, MPI_ERR_LOCKTYPE, fn,
                       "lock_type=%d is neither MPI_LOCK_SHARED nor MPI_LOCK_EXCLUSIVE", type);
    int rc = osc_lock_checks(fn, w, assert);
    if (rc != MPI_SUCCESS)
        return rc;
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (rank < 0 || rank >= w->size)
        return osc_err(w, MPI_ERR_RANK, fn, "rank=%d is not a valid rank: the window has %d ranks",
                       rank, w->size);
    if (w->peers[rank].lock)
        return osc_err(w, MPI_ERR_RMA_SYNC, fn, "rank %d is already locked by this process", rank);
    w->fence = 0;
    rc = osc_lock_one(w, rank, type == MPI_LOCK_EXCLUSIVE ? OSC_LK_EXCL : OSC_LK_SHARED,
                      (assert &MPI_MODE_NOCHECK) != 0);
    w->nlocked++;
    return rc == MPI_SUCCESS ? rc : osc_err(w, rc, fn, "locking rank %d failed", rank);
}

int osc_unlock(const char *fn, osc_win *w, int rank)
{
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (rank < 0 || rank >= w->size)
        return osc_err(w, MPI_ERR_RANK, fn, "rank=%d is not a valid rank: the window has %d ranks",
                       rank, w->size);
    if (w->lock_all)
        return osc_err(w, MPI_ERR_RMA_SYNC, fn,
                       "rank %d is locked by MPI_Win_lock_all: use MPI_Win_unlock_all", rank);
    if (!w->peers[rank].lock)
        return osc_err(w, MPI_ERR_RMA_SYNC, fn, "rank %d is not locked by this process", rank);
    int rc = osc_unlock_one(w, rank);
    w->nlocked--;
    return rc == MPI_SUCCESS
               ? rc
               : osc_err(w, rc, fn, "an operation of the epoch to rank %d failed", rank);
}

int osc_lock_all(const char *fn, osc_win *w, int assert)
{
    int rc = osc_lock_checks(fn, w, assert);
    if (rc != MPI_SUCCESS)
        return rc;
    if (w->nlocked)
        return osc_err(w, MPI_ERR_RMA_SYNC, fn,
                       "%d target(s) are locked with MPI_Win_lock (MPI_Win_unlock first)",
                       w->nlocked);
    w->fence = 0;
    w->lock_all = 1;
    w->lock_all_nocheck = (assert &MPI_MODE_NOCHECK) != 0;
    int err = MPI_SUCCESS;
    for (int t = 0; t < w->size; t++) {
        rc = osc_lock_one(w, t, OSC_LK_SHARED, w->lock_all_nocheck);
        if (rc != MPI_SUCCESS && err == MPI_SUCCESS)
            err = rc;
    }
    return err == MPI_SUCCESS ? err : osc_err(w, err, fn, "locking every rank failed");
}

int osc_unlock_all(const char *fn, osc_win *w)
{
    if (!w->lock_all)
        return osc_err(w, MPI_ERR_RMA_SYNC, fn, "no MPI_Win_lock_all epoch is open");
    int err = MPI_SUCCESS;
    for (int t = 0; t < w->size; t++) {
        int rc = osc_unlock_one(w, t);
        if (rc != MPI_SUCCESS && err == MPI_SUCCESS)
            err = rc;
    }
    w->lock_all = 0;
    return err == MPI_SUCCESS
               ? err
               : osc_err(w, err, fn, "an operation of the epoch failed at its target");
}

int osc_flush(const char *fn, osc_win *w, int rank, int local)
{
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (rank == OSC_ALL) {
        if (!w->nlocked && !w->lock_all)
            return osc_err(
                w, MPI_ERR_RMA_SYNC, fn,
                "no passive-target epoch is open (MPI_Win_lock or MPI_Win_lock_all first)");
    } else if (rank < 0 || rank >= w->size) {
        return osc_err(w, MPI_ERR_RANK, fn, "rank=%d is not a valid rank: the window has %d ranks",
                       rank, w->size);
    } else if (!w->peers[rank].lock) {
        return osc_err(w, MPI_ERR_RMA_SYNC, fn,
                       "no passive-target epoch to rank %d is open (MPI_Win_lock first)", rank);
    }
    /* direct targets: the operations are done; their stores are ordered
     * before anything this process stores next (MPI_Win_sync on the reading
     * side makes them visible to its loads) */
    atomic_thread_fence(memory_order_release);
    if (!w->am_origin)
        return MPI_SUCCESS;
    int err = MPI_SUCCESS;
    for (int t = rank >= 0 ? rank : 0; t < (rank >= 0 ? rank + 1 : w->size); t++) {
        osc_peer *p = &w->peers[t];
        if (!p->lock || osc_direct(p))
            continue;
        int rc = osc_am_flush(w, t, local);
        if (rc != MPI_SUCCESS && err == MPI_SUCCESS)
            err = rc;
    }
    return err == MPI_SUCCESS
               ? err
               : osc_err(w, err, fn, "an operation of the epoch failed at its target");
}

int osc_sync(const char *fn, osc_win *w)
{
    (void)fn;
    atomic_thread_fence(memory_order_seq_cst);
    if (w->am_target || w->am_origin)
        core_progress();
    return MPI_SUCCESS;
}
