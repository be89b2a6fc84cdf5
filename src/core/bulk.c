/* One-sided bulk transfers: the data movement of the two rendezvous
 * protocols (the receiver reads, the sender writes) and of core_rma_start.
 * A transfer goes in chunks the fabric accepts (caps.max_bulk bytes, 64
 * iovecs); a fabric either finishes a chunk before returning (shm) or
 * reports it later through the fab_op embedded in the transfer, from its
 * poll (ofi). Either way the next chunk follows, and x->finish(x, status)
 * runs once at the end: status 0, or the first error.
 *
 * A read into a non-contiguous buffer of small pieces goes through a bounce
 * buffer: each chunk lands there contiguous (one system call) and is unpacked
 * into place, all on the receiver's core; read in place, 64 pieces of 8 bytes
 * would cost a system call per 512 bytes. */
#include "core/core_impl.h"

#include <stdlib.h>

enum { CORE_BOUNCE = 128 << 10 };  /* bytes of a bounce buffer: one read, unpacked from cache */

void core_xfer_bounce(core_xfer *x)
{
    if (!core_s.bounce_busy) {
        if (!core_s.bounce)
            core_s.bounce = util_malloc(CORE_BOUNCE);
        core_s.bounce_busy = 1;
        x->bounce = core_s.bounce;
    } else {
        x->bounce = util_malloc(CORE_BOUNCE);
    }
    x->bounce_len = CORE_BOUNCE;
}

static void core_bulk_end(core_xfer *x, int status)
{
    if (x->bounce) {
        if (x->bounce == core_s.bounce)
            core_s.bounce_busy = 0;
        else
            free(x->bounce);
        x->bounce = NULL;
    }
    x->finish(x, status);
}

/* bytes [off, off + n) of the transfer are where they belong; a bounced read unpacks them */
static void core_bulk_landed(core_xfer *x, size_t n)
{
    if (x->bounce)
        core_dt_unpack(x->buf, x->count, x->dt, x->off, x->bounce, n);
    x->off += n;
}

static void core_bulk_step(core_xfer *x);

static void core_bulk_done(fab_op *op, int status)
{
    core_xfer *x = UTIL_CONTAINER(op, core_xfer, op);
    if (status != UTIL_OK) {
        core_bulk_end(x, status);
        return;
    }
    core_bulk_landed(x, x->chunk);
    x->chunk = 0;
    core_bulk_step(x);
}

static void core_bulk_step(core_xfer *x)
{
    core_conn *c = x->conn;
    const fab_ops *fab = c->fab->ops;
    size_t max = c->fab->caps->max_bulk;
    while (x->off < x->len) {
        struct iovec iov[64];
        size_t want = x->len - x->off < max ? x->len - x->off : max;
        size_t covered = want;
        int n = 1;
        if (x->base) {
            iov[0].iov_base = core_at(x->base, (ptrdiff_t)x->off);
            iov[0].iov_len = want;
        } else if (x->bounce) {
            covered = want = want < x->bounce_len ? want : x->bounce_len;
            iov[0].iov_base = x->bounce;
            iov[0].iov_len = want;
        } else {
            n = core_dt_iov(x->buf, x->count, x->dt, x->off, want, iov, 64, &covered);
            if (n <= 0 || covered == 0) {
                util_log("bulk transfer: no memory ranges for bytes %zu.. of the buffer", x->off);
                core_bulk_end(x, UTIL_EIO);
                return;
            }
        }
        x->op.done = core_bulk_done;
        int rc = x->write
                     ? fab->rma->write(c->fc, iov, n, x->raddr + x->off, x->rkey, covered, &x->op)
                     : fab->rma->read(c->fc, iov, n, x->raddr + x->off, x->rkey, covered, &x->op);
        if (rc == FAB_PENDING) {
            x->chunk = covered;
            return;
        }
        rc = core_fab_done(rc, covered);
        if (rc != UTIL_OK) {
            core_bulk_end(x, rc);
            return;
        }
        core_bulk_landed(x, covered);
    }
    core_bulk_end(x, UTIL_OK);
}

void core_bulk_start(core_xfer *x)
{
    x->off = 0;
    x->chunk = 0;
    core_bulk_step(x);
}

void core_mem_hold(core_conn *c, core_mem *m, const void *buf, size_t len)
{
    m->fab = NULL;
    if (!(c->caps & FAB_CAP_RMA))
        return;
    if (c->fab->ops->mr->reg(buf, len, &m->mem) == UTIL_OK)
        m->fab = c->fab->ops;
}

void core_mem_release_reg(core_mem *m)
{
    m->fab->mr->dereg(&m->mem);
    m->fab = NULL;
}

/* ---- one-sided access for the layer above (RMA windows) --------------------------- */

int core_rma_reg(int lpid, const void *buf, size_t len, uint64_t *addr, uint64_t *key, void **handle)
{
    core_conn *c = lpid >= 0 && lpid < core_s.nprocs && lpid != core_s.self ? core_conn_get(lpid) : NULL;
    if (!c || !(c->fab->caps->flags & FAB_CAP_RMA))
        return UTIL_EPERM;
    core_mem *m = util_calloc(1, sizeof *m);
    int rc = c->fab->ops->mr->reg(buf, len, &m->mem);
    if (rc != UTIL_OK) {
        free(m);
        return rc;
    }
    m->fab = c->fab->ops;
    *addr = m->mem.addr;
    *key = m->mem.key;
    *handle = m;
    return UTIL_OK;
}

void core_rma_dereg(void *handle)
{
    core_mem *m = handle;
    if (!m)
        return;
    core_mem_drop(m);
    free(m);
}

static void core_rma_finish(core_xfer *x, int status)
{
    core_rma *op = UTIL_CONTAINER(x, core_rma, x);
    if (status != UTIL_OK)
        util_log("one-sided %s of %zu bytes with %s failed", x->write ? "write" : "read", x->len,
                 util_proc(x->conn->lpid));
    if (op->starting) {         /* still inside core_rma_start: it returns the result */
        op->starting = 0;
        op->result = status;
        return;
    }
    op->done(op, status);
}

int core_rma_start(core_rma *op, int lpid, int write, void *local, size_t len, uint64_t raddr,
                   uint64_t rkey)
{
    core_conn *c = lpid >= 0 && lpid < core_s.nprocs && lpid != core_s.self ? core_conn_get(lpid) : NULL;
    if (!c || !(c->fab->caps->flags & FAB_CAP_RMA))
        return UTIL_EPERM;
    op->x = (core_xfer){.conn = c, .write = write, .raddr = raddr, .rkey = rkey, .len = len,
                        .base = local, .finish = core_rma_finish};
    op->starting = 1;
    op->result = 1;
    core_bulk_start(&op->x);
    if (op->starting) {         /* finishes later, through op->done */
        op->starting = 0;
        return 1;
    }
    return op->result;
}
