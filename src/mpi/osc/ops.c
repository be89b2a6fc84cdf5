/* RMA operations: the checks that need the window (epoch, rank, range,
 * matching sizes and types), then the operation goes to the direct path or
 * to the message mode of its target. */
#include "mpi/osc/osc_impl.h"
#include "mpi/op/op.h"
#include "mpi/pt2pt/pt2pt.h"

#include <string.h>

static const char *osc_kind_verb(int kind)
{
    static const char *v[] = {"",
                              "put to",
                              "get from",
                              "accumulate to",
                              "get_accumulate on",
                              "fetch_and_op on",
                              "compare_and_swap on"};
    return kind >= OSC_PUT && kind <= OSC_CAS ? v[kind] : "access";
}

static core_req *osc_req_done(osc_win *w)
{
    core_req *r = core_req_alloc(MPII_REQ_DONE);
    r->up.obj = w->comm->handle;
    r->complete = 1;
    r->status.source = MPI_ANY_SOURCE;
    r->status.tag = MPI_ANY_TAG;
    return r;
}

/* an access epoch to t is open */
static int osc_epoch_open(const osc_win *w, const osc_peer *p)
{
    return w->fence || w->lock_all || p->lock || (w->started && p->in_start);
}

int osc_rma(const char *fn, osc_win *w, const osc_args *a, MPI_Request *req)
{
    int t = a->target;
    if (t == MPI_PROC_NULL) {
        if (req)
            *req = MPII_HANDLE(MPII_KIND_REQUEST, osc_req_done(w)->id);
        return MPI_SUCCESS;
    }
    if (t < 0 || t >= w->size)
        return osc_err(w, MPI_ERR_RANK, fn,
                       "target_rank=%d is not a valid rank: the window has %d ranks", t, w->size);
    osc_peer *p = &w->peers[t];
    /* the latency-bound case: a put or get of one contiguous predefined type,
     * the same on both sides, to a window in my mapping, in an open epoch */
    if (a->kind <= OSC_GET && !req && (p->mode == OSC_MODE_MAP || p->mode == OSC_MODE_SELF) &&
        w->flavor != MPI_WIN_FLAVOR_DYNAMIC && (p->lock || w->lock_all || w->fence)) {
        MPI_Datatype odt = a->kind == OSC_PUT ? a->odt : a->rdt;
        MPI_Aint ocount = a->kind == OSC_PUT ? a->ocount : a->rcount;
        const mpii_dtype *t = mpii_dtype_get(a->tdt);
        if (odt == a->tdt && ocount == a->tcount && t->predefined && a->disp >= 0 && p->map) {
            size_t bytes = (size_t)a->tcount * t->dt.size;
            uint64_t off = (uint64_t)a->disp * (uint64_t)p->disp_unit;
            if (off + bytes <= (uint64_t)p->size && off + bytes >= off) {
                char *d = a->kind == OSC_PUT ? p->map + off : (char *)a->rbuf;
                const char *s = a->kind == OSC_PUT ? (const char *)a->obuf : p->map + off;
                if (bytes == 8)
                    memcpy(d, s, 8); /* one move */
                else
                    memmove(d, s, bytes);
                return MPI_SUCCESS;
            }
        }
    }
    if (!osc_epoch_open(w, p))
        return osc_err(w, MPI_ERR_RMA_SYNC, fn,
                       "no access epoch to rank %d is open (call MPI_Win_fence, MPI_Win_start "
                       "or MPI_Win_lock first)",
                       t);
    if (req && !(w->lock_all || p->lock))
        return osc_err(w, MPI_ERR_RMA_SYNC, fn,
                       "request-based operations need a passive-target epoch (MPI_Win_lock or "
                       "MPI_Win_lock_all) to rank %d",
                       t);
    const core_dt *tdt = &mpii_dtype_get(a->tdt)->dt;
    size_t tbytes = (size_t)a->tcount * tdt->size;
    /* the origin side must describe as many bytes as the target side */
    if (a->kind == OSC_PUT || a->kind == OSC_ACC ||
        ((a->kind == OSC_GACC || a->kind == OSC_FOP || a->kind == OSC_CAS) && a->op != MPI_NO_OP)) {
        size_t obytes = (size_t)a->ocount * mpii_dtype_get(a->odt)->dt.size;
        if (obytes != tbytes)
            return osc_err(w, MPI_ERR_TYPE, fn,
                           "the origin data (%zu bytes) and the target data (%zu bytes) of this "
                           "%s rank %d do not match",
                           obytes, tbytes, osc_kind_verb(a->kind), t);
    }
    if (a->kind != OSC_PUT && a->kind != OSC_ACC) {
        size_t rbytes = (size_t)a->rcount * mpii_dtype_get(a->rdt)->dt.size;
        if (rbytes != tbytes)
            return osc_err(w, MPI_ERR_TYPE, fn,
                           "the %s buffer (%zu bytes) and the target data (%zu bytes) of this %s "
                           "rank %d do not match",
                           a->kind == OSC_GET ? "origin" : "result", rbytes, tbytes,
                           osc_kind_verb(a->kind), t);
    }
    int basic = 0;
    if (a->kind >= OSC_ACC) {
        if (!mpii_op_is_predefined(a->op))
            return osc_err(
                w, MPI_ERR_OP, fn, "%s: RMA accumulate operations take only predefined operations",
                mpii_op_exists(a->op) ? "a user-defined operation" : "op: invalid operation");
        /* the operations of reductions, MPI_CHAR's included (op.c) */
        basic = osc_dt_basic(a->tdt);
        if (a->op != MPI_NO_OP && a->op != MPI_REPLACE &&
            tbytes) { /* no data: nothing to combine */
            if (mpii_op_check(a->op, a->tdt) != MPI_SUCCESS || !basic) {
                const mpii_dtype *bt = mpii_dtype_get(MPII_HANDLE(MPII_KIND_DTYPE, basic));
                return osc_err(w, MPI_ERR_OP, fn, "%s is not defined for the target datatype (%s)",
                               mpii_op_name(a->op),
                               bt ? bt->name : "made of more than one predefined type");
            }
        }
        int obasic = osc_dt_basic(a->odt);
        if (a->op != MPI_NO_OP && a->kind != OSC_CAS && tbytes && obasic != basic)
            return osc_err(w, MPI_ERR_TYPE, fn,
                           "origin and target datatypes of an accumulate must be built from the "
                           "same predefined type");
    }
    /* the target range: inside its window (an attached region for dynamic windows) */
    MPI_Aint unit = w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? 1 : p->disp_unit;
    uint64_t off = (uint64_t)(a->disp * unit);
    if (tbytes) {
        ptrdiff_t lo = tdt->true_lb, hi = tdt->true_lb + tdt->true_extent;
        ptrdiff_t last = (ptrdiff_t)(a->tcount - 1) * tdt->extent;
        if (last < 0)
            lo += last;
        else
            hi += last;
        if ((w->flavor != MPI_WIN_FLAVOR_DYNAMIC && (a->disp < 0 || (ptrdiff_t)off + lo < 0)) ||
            !osc_range_ok(w, t, off + (uint64_t)lo, off + (uint64_t)hi))
            return osc_err(w, MPI_ERR_RMA_RANGE, fn,
                           "target_disp=%ld: bytes %ld..%ld of rank %d's window %s", (long)a->disp,
                           (long)((ptrdiff_t)off + lo), (long)((ptrdiff_t)off + hi), t,
                           w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? "are not in memory it attached"
                                                               : "are outside it");
    }
    if (w->started && p->in_start && !p->post_seen) {
        int rc = osc_pscw_ready(w, t);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    if (p->mode == OSC_MODE_AM) {
        core_req *ureq = NULL;
        if (req) {
            ureq = osc_req_done(w);
            ureq->complete = 0;
            *req = MPII_HANDLE(MPII_KIND_REQUEST, ureq->id);
        }
        if (tbytes == 0 && a->kind != OSC_FOP && a->kind != OSC_CAS) {
            if (ureq)
                core_req_complete(ureq);
            return MPI_SUCCESS;
        }
        int rc = osc_am_op(w, t, a, off, basic, ureq);
        return rc == UTIL_OK ? MPI_SUCCESS
                             : osc_err(w, mpii_errclass(rc), fn, "the %s rank %d failed",
                                       osc_kind_verb(a->kind), t);
    }
    if (tbytes) {
        uint64_t loc;
        if (p->mode == OSC_MODE_CMA)
            loc = (w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? 0 : p->base) + off;
        else
            loc = (w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? 0 : (uint64_t)(uintptr_t)p->map) + off;
        int rc = osc_direct_op(w, t, a, loc, basic);
        if (rc != UTIL_OK)
            return osc_err(w, rc == UTIL_EINVAL ? MPI_ERR_ARG : MPI_ERR_RMA_RANGE, fn,
                           "the %s rank %d failed: its memory could not be reached (%s)",
                           osc_kind_verb(a->kind), t,
                           rc == UTIL_EIO ? "the kernel refused the copy" : "internal error");
    }
    if (req)
        *req = MPII_HANDLE(MPII_KIND_REQUEST, osc_req_done(w)->id);
    return MPI_SUCCESS;
}
