/* The data access routines (MPI 4.1 14.4): one function behind all of them.
 *
 *   positioning   explicit offset (_at), individual pointer, shared pointer
 *                 (_shared), shared pointer in rank order (_ordered)
 *   coordination  independent, collective (_all, _ordered)
 *   synchronism   blocking, nonblocking (MPI_File_i...), split (_begin/_end)
 *
 * Independent accesses are done at the call; a nonblocking one returns a
 * request that is already complete (the standard allows it; the data path
 * is the rank's own pread/pwrite either way). Collective ones run as a
 * collective schedule (twophase.c): the blocking form waits for it, the
 * nonblocking form hands out its request, a split collective keeps the
 * request in the file until the _end call. Pointers move at the start, by
 * the amount requested, as the standard says for nonblocking calls. */
#include "mpi/io/io.h"
#include "mpi/pt2pt/pt2pt.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void io_status(MPI_Status *st, MPI_Offset bytes)
{
    if (st == MPI_STATUS_IGNORE)
        return;
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    st->dcfa_count = bytes;
    st->dcfa_cancelled = 0;
}

static MPI_Request io_done_request(io_file *f, int err, MPI_Offset bytes)
{
    core_req *r = core_req_alloc(MPII_REQ_DONE);
    r->status.source = MPI_UNDEFINED;
    r->status.tag = MPI_UNDEFINED;
    r->status.error = err;
    r->status.count = bytes;
    r->up.obj = f->comm->handle;
    r->complete = 1;
    return MPII_HANDLE(MPII_KIND_REQUEST, r->id);
}

/* the etype offset of an ordered access: counts of lower ranks, after the
 * shared pointer, which moves by the total */
static int io_ordered_offset(io_file *f, MPI_Offset n, MPI_Offset *off)
{
    mpii_comm *c = f->comm;
    long long mine = n, *all = util_malloc((size_t)c->size * sizeof *all);
    int rc = mpii_allgather(&mine, 1, MPI_LONG_LONG, all, 1, MPI_LONG_LONG, c);
    MPI_Offset before = 0, total = 0;
    for (int r = 0; r < c->size; r++) {
        if (r < c->rank)
            before += all[r];
        total += all[r];
    }
    free(all);
    if (rc != MPI_SUCCESS)
        return io_fail(f, rc, "exchanging the counts failed");
    long long base[2] = {0, MPI_SUCCESS};
    if (c->rank == 0) {
        MPI_Offset old;
        base[1] = io_shfp_fetch_add(f, total, &old);
        base[0] = old;
    }
    rc = mpii_bcast(base, 2, MPI_LONG_LONG, 0, c);
    if (rc != MPI_SUCCESS)
        return io_fail(f, rc, "broadcasting the shared file pointer failed");
    if (base[1] != MPI_SUCCESS) {
        if (c->rank != 0)
            io_fail(f, (int)base[1], "updating the shared file pointer failed on rank 0");
        return (int)base[1];
    }
    *off = base[0] + before;
    return MPI_SUCCESS;
}

int io_access(io_file *f, int write, int where, int coll, int mode, MPI_Offset offset, void *buf,
              MPI_Count count, MPI_Datatype dt, MPI_Status *st, MPI_Request *req)
{
    mpii_dtype *mt = mpii_dtype_get(dt);
    io_req q;
    io_req_init(&q, f, write, 0, buf, count, mt);
    /* a read through a view with no data finds nothing, as at the end of the file (a write
     * through it was refused by the binding) */
    if (f->view.fdt->size == 0)
        q.fbytes = q.nbytes = 0;
    MPI_Offset esize = (MPI_Offset)f->view.esize, netypes = q.fbytes / esize;
    int rc = MPI_SUCCESS;
    if (mode == IO_SPLIT && f->split_kind)
        return io_fail(f, MPI_ERR_IO,
                       "a split collective access is already active on this file (one at a "
                       "time: call its _end first)");
    switch (where) {
    case IO_AT:
        break;
    case IO_INDIV:
        offset = f->fp;
        f->fp += netypes;
        break;
    case IO_SHARED:
        rc = io_shfp_fetch_add(f, netypes, &offset);
        break;
    case IO_ORDERED:
        rc = io_ordered_offset(f, netypes, &offset);
        break;
    }
    if (rc != MPI_SUCCESS)
        return rc;
    q.pos = offset * esize;
    MPI_Offset done = 0;
    if (!coll) {
        rc = io_indep(&q, &done);
        if (mode == IO_NONBLOCKING && rc == MPI_SUCCESS)
            *req = io_done_request(f, rc, done);
        else
            io_status(st, done);
        return rc;
    }
    if (mode == IO_BLOCKING) {
        rc = io_coll(&q, 0, &done, NULL);
        io_status(st, done);
        return rc;
    }
    MPI_Request h = MPI_REQUEST_NULL;
    rc = io_coll(&q, 1, NULL, &h);
    if (mode == IO_NONBLOCKING) {
        if (rc == MPI_SUCCESS)
            *req = h;
        return rc;
    }
    /* split: the request stays with the file until the _end call */
    f->split_kind = (write << 4) | where;
    f->split_req = h;
    f->split_err = rc;
    return rc;
}

int io_split_end(io_file *f, int write, int where, MPI_Status *st)
{
    if (!f->split_kind)
        return io_fail(f, MPI_ERR_IO, "no split collective access is active on this file");
    if (f->split_kind != ((write << 4) | where))
        return io_fail(f, MPI_ERR_IO,
                       "the active split collective access is of another kind than this _end");
    f->split_kind = 0;
    MPI_Request h = f->split_req;
    f->split_req = MPI_REQUEST_NULL;
    if (h == MPI_REQUEST_NULL) {
        io_status(st, 0);
        return f->split_err;
    }
    core_req *r = mpii_req_get(h);
    mpii_req_wait_one(r);
    MPI_Status tmp;
    int rc = mpii_req_finish(r, &h, &tmp);
    io_status(st, tmp.dcfa_count);
    return rc;
}

/* ---- pointers ------------------------------------------------------------------------------ */

/* the etype offset of the end of the file in the view (rounded up) */
static int io_eof_offset(io_file *f, MPI_Offset *off)
{
    MPI_Offset size;
    int rc = io_file_get_size(f, &size);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Offset bytes = io_view_bytes_below(&f->view, size), e = (MPI_Offset)f->view.esize;
    *off = (bytes + e - 1) / e;
    return MPI_SUCCESS;
}

static int io_new_position(io_file *f, MPI_Offset cur, MPI_Offset offset, int whence,
                           MPI_Offset *out)
{
    MPI_Offset base = 0;
    if (whence == MPI_SEEK_CUR) {
        base = cur;
    } else if (whence == MPI_SEEK_END) {
        int rc = io_eof_offset(f, &base);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    if (base + offset < 0)
        return io_fail(f, MPI_ERR_ARG, "offset=%lld: the new position %lld would be negative",
                       (long long)offset, (long long)(base + offset));
    *out = base + offset;
    return MPI_SUCCESS;
}

int io_seek(io_file *f, MPI_Offset offset, int whence)
{
    MPI_Offset pos = 0;
    int rc = io_new_position(f, f->fp, offset, whence, &pos);
    if (rc == MPI_SUCCESS)
        f->fp = pos;
    return rc;
}

int io_seek_shared(io_file *f, MPI_Offset offset, int whence)
{
    /* collective: every earlier shared access is done before rank 0 moves
     * the pointer, and nobody uses it before it has moved */
    int rc = mpii_barrier(f->comm);
    if (rc != MPI_SUCCESS)
        return io_fail(f, rc, "barrier failed");
    int res = MPI_SUCCESS;
    if (f->comm->rank == 0) {
        MPI_Offset cur = 0, pos = 0;
        if (whence == MPI_SEEK_CUR)
            res = io_shfp_get(f, &cur);
        if (res == MPI_SUCCESS)
            res = io_new_position(f, cur, offset, whence, &pos);
        if (res == MPI_SUCCESS)
            res = io_shfp_set(f, pos);
    }
    rc = mpii_bcast(&res, 1, MPI_INT, 0, f->comm);
    if (rc != MPI_SUCCESS)
        return io_fail(f, rc, "broadcast failed");
    if (res != MPI_SUCCESS && f->comm->rank != 0)
        io_fail(f, res, "moving the shared file pointer failed on rank 0");
    return res;
}

int io_position_shared(io_file *f, MPI_Offset *pos) { return io_shfp_get(f, pos); }

int io_byte_offset(io_file *f, MPI_Offset offset, MPI_Offset *disp)
{
    *disp = io_view_byte(&f->view, offset * (MPI_Offset)f->view.esize);
    return MPI_SUCCESS;
}
