/* One-sided access to a peer's memory for RMA windows (src/mpi/osc).
 *
 * The window layer never calls a fabric: it names a process, a remote
 * address and key, and local iovecs, and this file moves the bytes over the
 * connection's fabric read/write (on shm: process_vm_readv/writev, a single
 * copy by the kernel, the peer's CPU not involved). Windows use it only for
 * peers whose connection reaches any of their memory without registration
 * and without their CPU (FAB_CAP_RMA_ANY_ADDR and FAB_CAP_RMA_PASSIVE: shm
 * with cross-memory attach); other peers are served by messages (docs/rma.md).
 * Connecting is done up front (core_rma_prepare, at window creation) so that
 * later transfers never depend on the peer entering the library.
 *
 * A fabric may finish an operation later (FAB_PENDING): the context then
 * stays posted until its fab_op reports, from core_progress; callers poll
 * core_rma_test. */
#include "core/core_impl.h"

static core_conn *core_rma_conn(int lpid)
{
    if (lpid < 0 || lpid >= core_s.nprocs || lpid == core_s.self)
        return NULL;
    return core_s.conns[lpid];
}

int core_rma_prepare(int lpid)
{
    if (lpid == core_s.self)
        return UTIL_OK;
    if (lpid < 0 || lpid >= core_s.nprocs)
        return UTIL_EINVAL;
    return core_conn_get(lpid) ? UTIL_OK : core_s.conn_failure;
}

int core_rma_capable(int lpid)
{
    core_conn *c = core_rma_conn(lpid);
    unsigned all = FAB_CAP_RMA | FAB_CAP_RMA_PASSIVE | FAB_CAP_RMA_ANY_ADDR;
    return c && (c->fab->caps->flags & all) == all;
}

static void core_rma_done(fab_op *op, int status)
{
    core_rma_ctx *ctx = UTIL_CONTAINER(op, core_rma_ctx, op);
    ctx->status = status;
    ctx->posted = 0;
}

/* the fabric's answer to an operation of len bytes as core_rma_* returns it */
static int core_rma_started(core_rma_ctx *ctx, int rc, size_t len)
{
    if (rc == FAB_PENDING) {
        ctx->posted = 1;
        return CORE_RMA_POSTED;
    }
    rc = core_fab_done(rc, len);
    if (rc == UTIL_OK)
        core_st.cma_bytes += len;
    ctx->status = rc;
    return rc;
}

static int core_rma_io(int lpid, const struct iovec *local, int nlocal, uint64_t raddr,
                       uint64_t rkey, size_t len, core_rma_ctx *ctx, int write)
{
    ctx->posted = 0;
    ctx->status = UTIL_OK;
    ctx->op.done = core_rma_done;
    ctx->op.nt = 0;
    if (len == 0)
        return UTIL_OK;
    core_conn *c = core_rma_conn(lpid);
    if (!c || !(c->fab->caps->flags & FAB_CAP_RMA))
        return UTIL_ECONN;
    const fab_ops *f = c->fab->ops;
    int rc = write ? f->rma->write(c->fc, local, nlocal, raddr, rkey, len, &ctx->op)
                   : f->rma->read(c->fc, local, nlocal, raddr, rkey, len, &ctx->op);
    return core_rma_started(ctx, rc, len);
}

int core_rma_write(int lpid, const struct iovec *local, int nlocal, uint64_t raddr, uint64_t rkey,
                   size_t len, core_rma_ctx *ctx)
{
    return core_rma_io(lpid, local, nlocal, raddr, rkey, len, ctx, 1);
}

int core_rma_read(int lpid, const struct iovec *local, int nlocal, uint64_t raddr, uint64_t rkey,
                  size_t len, core_rma_ctx *ctx)
{
    return core_rma_io(lpid, local, nlocal, raddr, rkey, len, ctx, 0);
}

_Static_assert(CORE_RMA_IOV <= FAB_IOV_MAX, "the fabric takes the core's iovec lists");

static int core_rma_iov(int lpid, const struct iovec *local, int nlocal, const struct iovec *remote,
                        int nremote, uint64_t rkey, core_rma_ctx *ctx, int write)
{
    ctx->posted = 0;
    ctx->status = UTIL_OK;
    ctx->op.done = core_rma_done;
    ctx->op.nt = 0;
    core_conn *c = core_rma_conn(lpid);
    if (!c || !(c->fab->caps->flags & FAB_CAP_RMA))
        return UTIL_ECONN;
    if (nlocal > CORE_RMA_IOV || nremote > CORE_RMA_IOV)
        return UTIL_EINVAL;
    size_t total = 0;
    for (int i = 0; i < nremote; i++)
        total += remote[i].iov_len;
    const fab_ops *f = c->fab->ops;
    if (c->fab->caps->flags & FAB_CAP_RMA_IOV) {
        int rc = write ? f->rma->writev(c->fc, local, nlocal, remote, nremote, rkey, &ctx->op)
                       : f->rma->readv(c->fc, local, nlocal, remote, nremote, rkey, &ctx->op);
        return core_rma_started(ctx, rc, total);
    }
    /* one range at a time, each finished before the next (fabrics without
     * remote iovec lists are reached only for keyed memory, not by windows today) */
    struct iovec l[CORE_RMA_IOV];
    int li = 0;
    size_t lskip = 0;
    for (int k = 0; k < nremote; k++) {
        size_t need = remote[k].iov_len;
        int n = 0;
        while (need > 0 && li < nlocal) {
            size_t take = local[li].iov_len - lskip;
            if (take > need)
                take = need;
            l[n].iov_base = (char *)local[li].iov_base + lskip;
            l[n++].iov_len = take;
            need -= take;
            lskip += take;
            if (lskip == local[li].iov_len) {
                li++;
                lskip = 0;
            }
        }
        int rc = core_rma_io(lpid, l, n, (uint64_t)(uintptr_t)remote[k].iov_base, rkey,
                             remote[k].iov_len, ctx, write);
        while (rc == CORE_RMA_POSTED && ctx->posted)
            core_progress();
        if (rc == CORE_RMA_POSTED)
            rc = ctx->status;
        if (rc != UTIL_OK)
            return rc;
    }
    return UTIL_OK;
}

int core_rma_writev(int lpid, const struct iovec *local, int nlocal, const struct iovec *remote,
                    int nremote, uint64_t rkey, core_rma_ctx *ctx)
{
    return core_rma_iov(lpid, local, nlocal, remote, nremote, rkey, ctx, 1);
}

int core_rma_readv(int lpid, const struct iovec *local, int nlocal, const struct iovec *remote,
                   int nremote, uint64_t rkey, core_rma_ctx *ctx)
{
    return core_rma_iov(lpid, local, nlocal, remote, nremote, rkey, ctx, 0);
}

int core_rma_test(core_rma_ctx *ctx) { return !ctx->posted; }
