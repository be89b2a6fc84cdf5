/* One-sided access to a peer's memory for RMA windows (src/mpi/osc).
 *
 * The window layer never calls a fabric: it names a process, a remote
 * address and key, and local iovecs, and this file moves the bytes over the
 * connection's fabric read/write (on shm: process_vm_readv/writev, a single
 * copy by the kernel, the peer's CPU not involved). Connecting is done up
 * front (core_rma_prepare, at window creation) so that later transfers never
 * depend on the peer entering the library: on shm both ends map the
 * connection segment when both have asked for it, which is what a transfer
 * needs (the peer's pid in the segment header).
 *
 * The shape is that of posted one-sided operations with completions (a
 * context, a POSTED answer, core_rma_test): today's fabrics complete before
 * returning, so POSTED is never answered yet, but callers handle it. */
#include "core/core_impl.h"

int core_rma_prepare(int lpid)
{
    if (lpid == core_s.self)
        return UTIL_OK;
    if (lpid < 0 || lpid >= core_s.nprocs)
        return UTIL_EINVAL;
    return core_conn_get(lpid) ? UTIL_OK : UTIL_ECONN;
}

int core_rma_capable(int lpid)
{
    if (lpid < 0 || lpid >= core_s.nprocs || lpid == core_s.self)
        return 0;
    core_conn *c = core_s.conns[lpid];
    return c && c->has_rdma && c->fab->read && c->fab->write;
}

static int core_rma_io(int lpid, const struct iovec *local, int nlocal, uint64_t raddr,
                       uint64_t rkey, size_t len, core_rma_ctx *ctx, int write)
{
    (void)rkey; /* shm reaches every address of the peer: no registration */
    ctx->posted = 0;
    ctx->status = UTIL_OK;
    if (len == 0)
        return UTIL_OK;
    core_conn *c = lpid >= 0 && lpid < core_s.nprocs ? core_s.conns[lpid] : NULL;
    if (!c || !c->has_rdma)
        return UTIL_ECONN;
    int rc = write ? c->fab->write(c->fc, local, nlocal, raddr, len)
                   : c->fab->read(c->fc, local, nlocal, raddr, len);
    if (rc == UTIL_OK)
        core_st.cma_bytes += len;
    ctx->status = rc;
    return rc;
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
    core_conn *c = lpid >= 0 && lpid < core_s.nprocs ? core_s.conns[lpid] : NULL;
    if (!c || !c->has_rdma)
        return UTIL_ECONN;
    if (nlocal > CORE_RMA_IOV || nremote > CORE_RMA_IOV)
        return UTIL_EINVAL;
    size_t total = 0;
    for (int i = 0; i < nremote; i++)
        total += remote[i].iov_len;
    int rc;
    if (write ? c->fab->writev != NULL : c->fab->readv != NULL) {
        rc = write ? c->fab->writev(c->fc, local, nlocal, remote, nremote)
                   : c->fab->readv(c->fc, local, nlocal, remote, nremote);
    } else {
        /* one range at a time: the local pieces that belong to each */
        struct iovec l[CORE_RMA_IOV];
        int li = 0;
        size_t lskip = 0;
        rc = UTIL_OK;
        for (int k = 0; k < nremote && rc == UTIL_OK; k++) {
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
            uint64_t ra = (uint64_t)(uintptr_t)remote[k].iov_base;
            rc = write ? c->fab->write(c->fc, l, n, ra, remote[k].iov_len)
                       : c->fab->read(c->fc, l, n, ra, remote[k].iov_len);
        }
    }
    (void)rkey;
    if (rc == UTIL_OK)
        core_st.cma_bytes += total;
    ctx->status = rc;
    return rc;
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
