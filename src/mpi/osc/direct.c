/* The direct path: targets on this node, reached without their CPU.
 *
 * Memory: windows of MPI_Win_allocate(_shared) are in the node segment that
 * every local rank maps, so an operation is a copy between two local
 * addresses; windows of MPI_Win_create and dynamic windows are in the
 * target's own memory, reached with core_rma_read/write (cross-memory
 * attach, one kernel copy).
 *
 * Synchronisation state lives in the node segment: the target's lock word
 * (exclusive bit + shared holders) and its accumulate lock, a spin lock that
 * every accumulate-class operation on that target holds for its
 * read-modify-write, which gives the standard's atomicity for accumulates
 * from any number of origins (and from the message server, which takes the
 * same lock). */
#include "mpi/osc/osc_impl.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

/* ---- locks ---------------------------------------------------------------------------------- */

int osc_lock_try(_Atomic uint64_t *word, int type)
{
    uint64_t v = atomic_load_explicit(word, memory_order_relaxed);
    if (type == OSC_LK_EXCL) {
        uint64_t zero = 0;
        return v == 0 &&
               atomic_compare_exchange_strong_explicit(word, &zero, OSC_LOCK_EXCL,
                                                       memory_order_acquire, memory_order_relaxed);
    }
    while (!(v & OSC_LOCK_EXCL))
        if (atomic_compare_exchange_weak_explicit(word, &v, v + 1, memory_order_acquire,
                                                  memory_order_relaxed))
            return 1;
    return 0;
}

void osc_lock_release(_Atomic uint64_t *word, int type)
{
    if (type == OSC_LK_EXCL)
        atomic_store_explicit(word, 0, memory_order_release);
    else
        atomic_fetch_sub_explicit(word, 1, memory_order_release);
}

void osc_acc_lock(osc_win *w, int t)
{
    _Atomic uint32_t *l = &w->lranks[w->peers[t].local].acc;
    int spins = 0;
    for (;;) {
        uint32_t zero = 0;
        if (atomic_load_explicit(l, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_weak_explicit(l, &zero, 1, memory_order_acquire,
                                                  memory_order_relaxed))
            return;
        /* holders never wait while holding it: spin a little, then let them run */
        if (++spins > 64)
            sched_yield();
    }
}

void osc_acc_unlock(osc_win *w, int t)
{
    atomic_store_explicit(&w->lranks[w->peers[t].local].acc, 0, memory_order_release);
}

/* ---- ranges -------------------------------------------------------------------------------- */

int osc_win_local_attached(osc_win *w, uint64_t lo, uint64_t hi);

int osc_range_ok_dynamic(osc_win *w, int t, uint64_t lo, uint64_t hi)
{
    osc_peer *p = &w->peers[t];
    if (t == w->rank)
        return osc_win_local_attached(w, lo, hi);
    if (p->local < 0)
        return 1; /* checked by the target */
    osc_seg_rank *r = &w->lranks[p->local];
    if (atomic_load_explicit(&r->attach_overflow, memory_order_acquire))
        return 1; /* the table is full: the kernel refuses unmapped addresses */
    const osc_seg_attach *tab = w->attach + (size_t)p->local * OSC_ATTACH_MAX;
    uint32_t n = atomic_load_explicit(&r->nattach, memory_order_acquire);
    /* covered by attached regions, which may be adjacent (an access may span them) */
    uint64_t at = lo;
    for (int progress = 1; progress && at < hi;) {
        progress = 0;
        for (uint32_t i = 0; i < n; i++) {
            uint64_t sz = atomic_load_explicit(&tab[i].size, memory_order_acquire);
            uint64_t b = atomic_load_explicit(&tab[i].base, memory_order_relaxed);
            if (sz && at >= b && at < b + sz) {
                at = b + sz;
                progress = 1;
            }
        }
    }
    return at >= hi && (lo < hi || n > 0);
}

/* ---- moving bytes with cross-memory attach ------------------------------------------------------
 */

static int osc_cma_call(int lpid, const struct iovec *l, int n, uint64_t raddr, size_t len,
                        int write)
{
    core_rma_ctx ctx;
    int rc = write ? core_rma_write(lpid, l, n, raddr, 0, len, &ctx)
                   : core_rma_read(lpid, l, n, raddr, 0, len, &ctx);
    if (rc == CORE_RMA_POSTED) {
        while (!core_rma_test(&ctx))
            core_progress();
        rc = ctx.status;
    }
    return rc;
}

/* cut an iovec list down to its first `bytes` bytes; returns the new count */
static int osc_iov_trim(struct iovec *v, int n, size_t bytes)
{
    size_t sum = 0;
    for (int k = 0; k < n; k++) {
        if (sum + v[k].iov_len >= bytes) {
            v[k].iov_len = bytes - sum;
            return v[k].iov_len ? k + 1 : k;
        }
        sum += v[k].iov_len;
    }
    return n;
}

/* packed bytes [0, bytes) of (lbuf, lcount, ldt) <-> of the target's (raddr,
 * rcount, rdt): pieces of both sides zipped into calls of up to CORE_RMA_IOV
 * each, so a scattered type costs one system call per 1024 pieces */
static int osc_cma_move(int lpid, void *lbuf, size_t lcount, const core_dt *ldt, uint64_t raddr,
                        size_t rcount, const core_dt *rdt, size_t bytes, int write)
{
    struct iovec liov[CORE_RMA_IOV], riov[CORE_RMA_IOV]; /* 32 KiB of stack */
    size_t off = 0;
    while (off < bytes) {
        size_t rcov = 0, lcov = 0;
        int rn = core_dt_iov((const void *)(uintptr_t)raddr, rcount, rdt, off, bytes - off, riov,
                             CORE_RMA_IOV, &rcov);
        if (rn <= 0 || rcov == 0)
            return UTIL_EINVAL;
        int ln = core_dt_iov(lbuf, lcount, ldt, off, rcov, liov, CORE_RMA_IOV, &lcov);
        if (ln <= 0 || lcov == 0)
            return UTIL_EINVAL;
        if (lcov < rcov)
            rn = osc_iov_trim(riov, rn, lcov);
        int rc;
        if (rn == 1) {
            rc = osc_cma_call(lpid, liov, ln, (uint64_t)(uintptr_t)riov[0].iov_base, lcov, write);
        } else {
            core_rma_ctx ctx;
            rc = write ? core_rma_writev(lpid, liov, ln, riov, rn, 0, &ctx)
                       : core_rma_readv(lpid, liov, ln, riov, rn, 0, &ctx);
            if (rc == CORE_RMA_POSTED) {
                while (!core_rma_test(&ctx))
                    core_progress();
                rc = ctx.status;
            }
        }
        if (rc != UTIL_OK)
            return rc;
        off += lcov;
    }
    return UTIL_OK;
}

/* the target's data as a packed stream, read with one call when it is dense enough */
static int osc_cma_read_packed(int lpid, uint64_t raddr, size_t rcount, const core_dt *rdt,
                               void *packed, size_t bytes)
{
    if (rcount == 0 || bytes == 0)
        return UTIL_OK;
    ptrdiff_t lo = rdt->true_lb, hi = rdt->true_lb + rdt->true_extent;
    ptrdiff_t last = (ptrdiff_t)(rcount - 1) * rdt->extent;
    if (last < 0)
        lo += last;
    else
        hi += last;
    size_t span = (size_t)(hi - lo);
    if (!rdt->contig && span <= 4 * bytes + 4096) {
        char *tmp = util_malloc(span);
        struct iovec l = {tmp, span};
        int rc = osc_cma_call(lpid, &l, 1, raddr + (uint64_t)lo, span, 0);
        if (rc == UTIL_OK)
            core_dt_pack(tmp - lo, rcount, rdt, 0, packed, bytes);
        free(tmp);
        return rc;
    }
    return osc_cma_move(lpid, packed, bytes, &mpii_dtype_get(MPI_BYTE)->dt, raddr, rcount, rdt,
                        bytes, 0);
}

static int osc_cma_write_packed(int lpid, uint64_t raddr, size_t rcount, const core_dt *rdt,
                                const void *packed, size_t bytes)
{
    return osc_cma_move(lpid, (void *)packed, bytes, &mpii_dtype_get(MPI_BYTE)->dt, raddr, rcount,
                        rdt, bytes, 1);
}

/* ---- one operation ------------------------------------------------------------------------------
 */

static const core_dt *osc_dt(MPI_Datatype h) { return &mpii_dtype_get(h)->dt; }

void *osc_scratch(osc_win *w, int slot, size_t n)
{
    if (w->scratch_len[slot] < n + 1) {
        free(w->scratch[slot]);
        w->scratch_len[slot] = n + 1 > 4096 ? n + 1 : 4096;
        w->scratch[slot] = util_malloc(w->scratch_len[slot]);
    }
    return w->scratch[slot];
}

/* the origin's data as one packed stream: its own memory when contiguous and aligned */
static const void *osc_packed_origin(osc_win *w, const void *buf, size_t count, const core_dt *dt,
                                     size_t bytes, size_t align)
{
    const char *p = (const char *)buf + dt->true_lb;
    if (dt->contig && ((uintptr_t)p % (align ? align : 1)) == 0)
        return p;
    void *tmp = osc_scratch(w, 0, bytes);
    core_dt_pack(buf, count, dt, 0, tmp, bytes);
    return tmp;
}

static int osc_direct_acc(osc_win *w, int t, const osc_args *a, uint64_t loc, int basic)
{
    osc_peer *p = &w->peers[t];
    const core_dt *tdt = osc_dt(a->tdt);
    size_t tcount = (size_t)a->tcount;
    size_t bytes = tcount * tdt->size;
    size_t align = basic ? osc_dt(MPII_HANDLE(MPII_KIND_DTYPE, basic))->align : 1;
    void *ttmp = NULL;
    const void *in = NULL;
    if (a->op != MPI_NO_OP && bytes)
        in = osc_packed_origin(w, a->obuf, (size_t)a->ocount, osc_dt(a->odt), bytes, align);
    const core_dt *rdt = a->rdt ? osc_dt(a->rdt) : NULL;
    int want_old = a->kind != OSC_ACC;
    int rc = UTIL_OK;
    osc_acc_lock(w, t);
    if (p->mode == OSC_MODE_CMA) {
        ttmp = osc_scratch(w, 1, bytes);
        rc = osc_cma_read_packed(p->lpid, loc, tcount, tdt, ttmp, bytes);
        if (rc == UTIL_OK && want_old)
            core_dt_unpack(a->rbuf, (size_t)a->rcount, rdt, 0, ttmp, bytes);
        if (rc == UTIL_OK && a->op != MPI_NO_OP) {
            int change = 1;
            if (a->kind == OSC_CAS)
                change = memcmp(ttmp, a->cbuf, bytes) == 0;
            else
                osc_apply_packed(a->op, basic, in, ttmp, bytes);
            if (a->kind == OSC_CAS && change)
                memcpy(ttmp, in, bytes);
            if (change)
                rc = osc_cma_write_packed(p->lpid, loc, tcount, tdt, ttmp, bytes);
        }
    } else {
        char *tp = (char *)(uintptr_t)loc;
        char *dense = tp + tdt->true_lb;
        int inplace = tdt->contig && ((uintptr_t)dense % (align ? align : 1)) == 0;
        if (!inplace) {
            ttmp = osc_scratch(w, 1, bytes);
            core_dt_pack(tp, tcount, tdt, 0, ttmp, bytes);
            dense = ttmp;
        }
        if (want_old)
            core_dt_unpack(a->rbuf, (size_t)a->rcount, rdt, 0, dense, bytes);
        if (a->op != MPI_NO_OP) {
            int change = 1;
            if (a->kind == OSC_CAS) {
                change = memcmp(dense, a->cbuf, bytes) == 0;
                if (change)
                    memcpy(dense, in, bytes);
            } else {
                osc_apply_packed(a->op, basic, in, dense, bytes);
            }
            if (!inplace && change)
                core_dt_unpack(tp, tcount, tdt, 0, ttmp, bytes);
        }
    }
    osc_acc_unlock(w, t);
    return rc;
}

int osc_direct_op(osc_win *w, int t, const osc_args *a, uint64_t loc, int basic)
{
    osc_peer *p = &w->peers[t];
    const core_dt *tdt = osc_dt(a->tdt);
    size_t tcount = (size_t)a->tcount;
    size_t bytes = tcount * tdt->size;
    switch (a->kind) {
    case OSC_PUT:
        if (p->mode == OSC_MODE_CMA)
            return osc_cma_move(p->lpid, (void *)a->obuf, (size_t)a->ocount, osc_dt(a->odt), loc,
                                tcount, tdt, bytes, 1);
        osc_typed_copy((void *)(uintptr_t)loc, tcount, tdt, a->obuf, (size_t)a->ocount,
                       osc_dt(a->odt));
        return UTIL_OK;
    case OSC_GET:
        if (p->mode == OSC_MODE_CMA) {
            const core_dt *rdt = osc_dt(a->rdt);
            if (!tdt->contig && !rdt->contig) {
                void *tmp = util_malloc(bytes + 1);
                int rc = osc_cma_read_packed(p->lpid, loc, tcount, tdt, tmp, bytes);
                if (rc == UTIL_OK)
                    core_dt_unpack(a->rbuf, (size_t)a->rcount, rdt, 0, tmp, bytes);
                free(tmp);
                return rc;
            }
            return osc_cma_move(p->lpid, a->rbuf, (size_t)a->rcount, rdt, loc, tcount, tdt, bytes,
                                0);
        }
        osc_typed_copy(a->rbuf, (size_t)a->rcount, osc_dt(a->rdt), (const void *)(uintptr_t)loc,
                       tcount, tdt);
        return UTIL_OK;
    default:
        return osc_direct_acc(w, t, a, loc, basic);
    }
}
