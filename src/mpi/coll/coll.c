/* Blocking collectives over intra-communicators: simple algorithms that are
 * correct at any size, built on the internal point-to-point calls in the
 * collective context (coll = 1).
 *
 *   barrier            dissemination, ceil(log2 n) rounds
 *   bcast              binomial tree
 *   reduce             binomial tree; rooted at 0 in rank order for
 *                      non-commutative ops (then sent on to the root)
 *   allreduce          reduce to 0 + bcast
 *   gather(v)/scatter(v)  linear at the root
 *   allgather(v)       ring
 *   alltoall(v,w)      pairwise exchange; in place: pair by pair in a global order
 *   reduce_scatter     reduce to 0 + scatterv
 *   scan / exscan      chain in rank order */
#include "mpi/coll/coll.h"
#include "mpi/op/op.h"

#include <stdlib.h>
#include <string.h>

enum {
    COLL_TAG_BARRIER = 1,
    COLL_TAG_BCAST,
    COLL_TAG_REDUCE,
    COLL_TAG_REDUCE_ROOT,
    COLL_TAG_GATHER,
    COLL_TAG_SCATTER,
    COLL_TAG_ALLGATHER,
    COLL_TAG_ALLTOALL,
    COLL_TAG_SCAN,
};

/* ---- buffers ---------------------------------------------------------------------- */

static const core_dt *coll_dt(MPI_Datatype dt) { return &mpii_dtype_get(dt)->dt; }

/* A temporary buffer for count elements of dt: returns the pointer to pass
 * as `buf` (it may point outside the allocation by the type's lower bound);
 * *base is what to free. */
static void *coll_alloc(MPI_Aint count, MPI_Datatype dt, void **base)
{
    const core_dt *t = coll_dt(dt);
    ptrdiff_t span = count > 0 ? (count - 1) * t->extent : 0;
    ptrdiff_t lo = t->true_lb + (span < 0 ? span : 0);
    ptrdiff_t hi = t->true_lb + t->true_extent + (span > 0 ? span : 0);
    *base = util_malloc((size_t)(hi - lo) + 1);
    return (char *)*base - lo;
}

/* local copy between two typed buffers with the same type signature */
static int coll_copy(const void *src, MPI_Aint scount, MPI_Datatype sdt, void *dst, MPI_Aint rcount,
                     MPI_Datatype rdt)
{
    const core_dt *st = coll_dt(sdt), *rt = coll_dt(rdt);
    size_t sbytes = (size_t)scount * st->size, rbytes = (size_t)rcount * rt->size;
    if (sbytes > rbytes)
        return MPI_ERR_TRUNCATE;
    if (sbytes == 0 || src == dst)
        return MPI_SUCCESS;
    if (st->contig && rt->contig) {
        memmove((char *)dst + rt->true_lb, (const char *)src + st->true_lb, sbytes);
    } else if (rt->contig) {
        core_dt_pack(src, (size_t)scount, st, 0, (char *)dst + rt->true_lb, sbytes);
    } else if (st->contig) {
        core_dt_unpack(dst, (size_t)rcount, rt, 0, (const char *)src + st->true_lb, sbytes);
    } else {
        char *tmp = util_malloc(sbytes);
        core_dt_pack(src, (size_t)scount, st, 0, tmp, sbytes);
        core_dt_unpack(dst, (size_t)rcount, rt, 0, tmp, sbytes);
        free(tmp);
    }
    return MPI_SUCCESS;
}

static char *coll_at(const void *buf, MPI_Aint index, MPI_Datatype dt)
{
    return (char *)buf + index * coll_dt(dt)->extent;
}

/* ---- barrier, bcast ------------------------------------------------------------------ */

int mpii_barrier(mpii_comm *c)
{
    int n = c->size, r = c->rank;
    char none[1]; /* zero-byte messages, but never a NULL buffer */
    for (int k = 1; k < n; k <<= 1) {
        int rc = mpii_sendrecv(none, 0, MPI_BYTE, (r + k) % n, COLL_TAG_BARRIER, none, 0, MPI_BYTE,
                               (r - k + n) % n, COLL_TAG_BARRIER, c, 1, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

int mpii_bcast(void *buf, MPI_Aint count, MPI_Datatype dt, int root, mpii_comm *c)
{
    int n = c->size, vr = (c->rank - root + n) % n;
    int mask = 1, rc = MPI_SUCCESS;
    for (; mask < n; mask <<= 1) {
        if (vr & mask) {
            rc = mpii_recv(buf, count, dt, (vr - mask + root) % n, COLL_TAG_BCAST, c, 1,
                           MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS)
                return rc;
            break;
        }
    }
    MPI_Request reqs[32];
    int nreq = 0;
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (vr + mask >= n)
            continue;
        rc = mpii_isend(buf, count, dt, (vr + mask + root) % n, COLL_TAG_BCAST, c, 1, &reqs[nreq]);
        if (rc != MPI_SUCCESS)
            break;
        nreq++;
    }
    int rc2 = mpii_waitall(nreq, reqs, MPI_STATUSES_IGNORE);
    return rc != MPI_SUCCESS ? rc : rc2;
}

/* ---- reduce, allreduce ------------------------------------------------------------------ */

int mpii_reduce(const void *sbuf, void *rbuf, MPI_Aint count, MPI_Datatype dt, MPI_Op op, int root,
                mpii_comm *c)
{
    int n = c->size, rank = c->rank;
    /* the tree covers ranks in order; a commutative op may rotate it to the root */
    int troot = mpii_op_is_commutative(op) ? root : 0;
    int vr = (rank - troot + n) % n;
    const void *cur = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    void *acc = NULL, *accb = NULL, *tmp = NULL, *tmpb = NULL;
    int rc = MPI_SUCCESS;
    int sent_up = 0;
    for (int mask = 1; mask < n; mask <<= 1) {
        if (vr & mask) {
            rc = mpii_send(cur, count, dt, (vr - mask + troot) % n, COLL_TAG_REDUCE, c, 1);
            sent_up = 1;
            break;
        }
        if (vr + mask >= n)
            continue;
        if (!tmp)
            tmp = coll_alloc(count, dt, &tmpb);
        rc = mpii_recv(tmp, count, dt, (vr + mask + troot) % n, COLL_TAG_REDUCE, c, 1,
                       MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            goto out_free;
        if (!acc) {
            acc = coll_alloc(count, dt, &accb);
            coll_copy(cur, count, dt, acc, count, dt);
        }
        /* acc holds the lower ranks, tmp the higher ones: tmp = acc op tmp */
        rc = mpii_op_apply(op, acc, tmp, count, dt);
        if (rc != MPI_SUCCESS)
            goto out_free;
        void *t = acc, *tb = accb;
        acc = tmp;
        accb = tmpb;
        tmp = t;
        tmpb = tb;
        cur = acc;
    }
    if (rc != MPI_SUCCESS)
        goto out_free;
    if (!sent_up && rank == root)
        rc = coll_copy(cur, count, dt, rbuf, count, dt);
    else if (!sent_up)
        rc = mpii_send(cur, count, dt, root, COLL_TAG_REDUCE_ROOT, c, 1);
    else if (rank == root)
        rc = mpii_recv(rbuf, count, dt, troot, COLL_TAG_REDUCE_ROOT, c, 1, MPI_STATUS_IGNORE);
out_free:
    free(tmpb);
    free(accb);
    return rc;
}

int mpii_allreduce(const void *sbuf, void *rbuf, MPI_Aint count, MPI_Datatype dt, MPI_Op op,
                   mpii_comm *c)
{
    /* in place: the input is in rbuf; only rank 0 (the root) must say so */
    const void *s = sbuf == MPI_IN_PLACE && c->rank != 0 ? rbuf : sbuf;
    int rc = mpii_reduce(s, rbuf, count, dt, op, 0, c);
    if (rc != MPI_SUCCESS)
        return rc;
    return mpii_bcast(rbuf, count, dt, 0, c);
}

/* ---- gather, scatter ------------------------------------------------------------------------ */

int mpii_gatherv(const void *sbuf, MPI_Aint scount, MPI_Datatype sdt, void *rbuf,
                 const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rdt, int root,
                 mpii_comm *c)
{
    int n = c->size;
    if (c->rank != root)
        return mpii_send(sbuf, scount, sdt, root, COLL_TAG_GATHER, c, 1);
    int rc = MPI_SUCCESS;
    if (sbuf != MPI_IN_PLACE)
        rc = coll_copy(sbuf, scount, sdt, coll_at(rbuf, displs[root], rdt), rcounts[root], rdt);
    MPI_Request *reqs = util_malloc((size_t)n * sizeof *reqs);
    int nreq = 0;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
        if (i == root)
            continue;
        rc = mpii_irecv(coll_at(rbuf, displs[i], rdt), rcounts[i], rdt, i, COLL_TAG_GATHER, c, 1,
                        &reqs[nreq]);
        if (rc == MPI_SUCCESS)
            nreq++;
    }
    int rc2 = mpii_waitall(nreq, reqs, MPI_STATUSES_IGNORE);
    free(reqs);
    return rc != MPI_SUCCESS ? rc : rc2;
}

/* counts and displacements of a regular (non-v) collective */
static void coll_regular(int n, MPI_Aint count, MPI_Count **counts, MPI_Aint **displs)
{
    *counts = util_malloc((size_t)n * sizeof **counts);
    *displs = util_malloc((size_t)n * sizeof **displs);
    for (int i = 0; i < n; i++) {
        (*counts)[i] = count;
        (*displs)[i] = (MPI_Aint)i * count;
    }
}

int mpii_gather(const void *sbuf, MPI_Aint scount, MPI_Datatype sdt, void *rbuf, MPI_Aint rcount,
                MPI_Datatype rdt, int root, mpii_comm *c)
{
    if (c->rank != root)
        return mpii_send(sbuf, scount, sdt, root, COLL_TAG_GATHER, c, 1);
    MPI_Count *counts;
    MPI_Aint *displs;
    coll_regular(c->size, rcount, &counts, &displs);
    int rc = mpii_gatherv(sbuf, scount, sdt, rbuf, counts, displs, rdt, root, c);
    free(displs);
    free(counts);
    return rc;
}

int mpii_scatterv(const void *sbuf, const MPI_Count scounts[], const MPI_Aint displs[],
                  MPI_Datatype sdt, void *rbuf, MPI_Aint rcount, MPI_Datatype rdt, int root,
                  mpii_comm *c)
{
    int n = c->size;
    if (c->rank != root)
        return mpii_recv(rbuf, rcount, rdt, root, COLL_TAG_SCATTER, c, 1, MPI_STATUS_IGNORE);
    int rc = MPI_SUCCESS;
    if (rbuf != MPI_IN_PLACE)
        rc = coll_copy(coll_at(sbuf, displs[root], sdt), scounts[root], sdt, rbuf, rcount, rdt);
    MPI_Request *reqs = util_malloc((size_t)n * sizeof *reqs);
    int nreq = 0;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
        if (i == root)
            continue;
        rc = mpii_isend(coll_at(sbuf, displs[i], sdt), scounts[i], sdt, i, COLL_TAG_SCATTER, c, 1,
                        &reqs[nreq]);
        if (rc == MPI_SUCCESS)
            nreq++;
    }
    int rc2 = mpii_waitall(nreq, reqs, MPI_STATUSES_IGNORE);
    free(reqs);
    return rc != MPI_SUCCESS ? rc : rc2;
}

int mpii_scatter(const void *sbuf, MPI_Aint scount, MPI_Datatype sdt, void *rbuf, MPI_Aint rcount,
                 MPI_Datatype rdt, int root, mpii_comm *c)
{
    if (c->rank != root)
        return mpii_recv(rbuf, rcount, rdt, root, COLL_TAG_SCATTER, c, 1, MPI_STATUS_IGNORE);
    MPI_Count *counts;
    MPI_Aint *displs;
    coll_regular(c->size, scount, &counts, &displs);
    int rc = mpii_scatterv(sbuf, counts, displs, sdt, rbuf, rcount, rdt, root, c);
    free(displs);
    free(counts);
    return rc;
}

/* ---- allgather: ring ----------------------------------------------------------------------- */

int mpii_allgatherv(const void *sbuf, MPI_Aint scount, MPI_Datatype sdt, void *rbuf,
                    const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rdt,
                    mpii_comm *c)
{
    int n = c->size, r = c->rank;
    int rc = MPI_SUCCESS;
    if (sbuf != MPI_IN_PLACE)
        rc = coll_copy(sbuf, scount, sdt, coll_at(rbuf, displs[r], rdt), rcounts[r], rdt);
    int right = (r + 1) % n, left = (r - 1 + n) % n;
    /* step s: pass on the block that came from s ranks to the left */
    for (int s = 0; s < n - 1 && rc == MPI_SUCCESS; s++) {
        int sb = (r - s + n) % n, rb = (r - s - 1 + n) % n;
        rc = mpii_sendrecv(coll_at(rbuf, displs[sb], rdt), rcounts[sb], rdt, right,
                           COLL_TAG_ALLGATHER, coll_at(rbuf, displs[rb], rdt), rcounts[rb], rdt,
                           left, COLL_TAG_ALLGATHER, c, 1, MPI_STATUS_IGNORE);
    }
    return rc;
}

int mpii_allgather(const void *sbuf, MPI_Aint scount, MPI_Datatype sdt, void *rbuf, MPI_Aint rcount,
                   MPI_Datatype rdt, mpii_comm *c)
{
    MPI_Count *counts;
    MPI_Aint *displs;
    coll_regular(c->size, rcount, &counts, &displs);
    int rc = mpii_allgatherv(sbuf, scount, sdt, rbuf, counts, displs, rdt, c);
    free(displs);
    free(counts);
    return rc;
}

/* ---- alltoall: everything goes through the w form (byte displacements) ------------------------
 */

static int coll_alltoall_inplace(void *rbuf, const MPI_Count rcounts[], const MPI_Aint rdispls[],
                                 const MPI_Datatype rdts[], mpii_comm *c)
{
    /* Every rank exchanges with its peers in increasing order: the pairs are
     * then taken in one global (lexicographic) order, so nobody waits in a cycle. */
    int rc = MPI_SUCCESS;
    for (int j = 0; j < c->size && rc == MPI_SUCCESS; j++) {
        if (j == c->rank)
            continue;
        char *slot = (char *)rbuf + rdispls[j];
        void *tb;
        void *tmp = coll_alloc(rcounts[j], rdts[j], &tb);
        coll_copy(slot, rcounts[j], rdts[j], tmp, rcounts[j], rdts[j]);
        rc = mpii_sendrecv(tmp, rcounts[j], rdts[j], j, COLL_TAG_ALLTOALL, slot, rcounts[j],
                           rdts[j], j, COLL_TAG_ALLTOALL, c, 1, MPI_STATUS_IGNORE);
        free(tb);
    }
    return rc;
}

int mpii_alltoallw(const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[],
                   const MPI_Datatype sdts[], void *rbuf, const MPI_Count rcounts[],
                   const MPI_Aint rdispls[], const MPI_Datatype rdts[], mpii_comm *c)
{
    int n = c->size, r = c->rank;
    if (sbuf == MPI_IN_PLACE)
        return coll_alltoall_inplace(rbuf, rcounts, rdispls, rdts, c);
    int rc = coll_copy((const char *)sbuf + sdispls[r], scounts[r], sdts[r],
                       (char *)rbuf + rdispls[r], rcounts[r], rdts[r]);
    for (int i = 1; i < n && rc == MPI_SUCCESS; i++) {
        int dst = (r + i) % n, src = (r - i + n) % n;
        rc = mpii_sendrecv((const char *)sbuf + sdispls[dst], scounts[dst], sdts[dst], dst,
                           COLL_TAG_ALLTOALL, (char *)rbuf + rdispls[src], rcounts[src], rdts[src],
                           src, COLL_TAG_ALLTOALL, c, 1, MPI_STATUS_IGNORE);
    }
    return rc;
}

/* the w-form arrays of a v-form side: byte displacements, one type */
static void coll_wside(int n, const MPI_Aint displs[], MPI_Datatype dt, MPI_Aint **bdispls,
                       MPI_Datatype **dts)
{
    MPI_Aint ext = coll_dt(dt)->extent;
    *bdispls = util_malloc((size_t)n * sizeof **bdispls);
    *dts = util_malloc((size_t)n * sizeof **dts);
    for (int i = 0; i < n; i++) {
        (*bdispls)[i] = displs[i] * ext;
        (*dts)[i] = dt;
    }
}

int mpii_alltoallv(const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[],
                   MPI_Datatype sdt, void *rbuf, const MPI_Count rcounts[],
                   const MPI_Aint rdispls[], MPI_Datatype rdt, mpii_comm *c)
{
    int n = c->size;
    MPI_Aint *sd = NULL, *rd;
    MPI_Datatype *st = NULL, *rt;
    if (sbuf != MPI_IN_PLACE)
        coll_wside(n, sdispls, sdt, &sd, &st);
    coll_wside(n, rdispls, rdt, &rd, &rt);
    int rc = mpii_alltoallw(sbuf, scounts, sd, st, rbuf, rcounts, rd, rt, c);
    free(rt);
    free(rd);
    free(st);
    free(sd);
    return rc;
}

int mpii_alltoall(const void *sbuf, MPI_Aint scount, MPI_Datatype sdt, void *rbuf, MPI_Aint rcount,
                  MPI_Datatype rdt, mpii_comm *c)
{
    MPI_Count *sc, *rc_;
    MPI_Aint *sd, *rd;
    coll_regular(c->size, scount, &sc, &sd);
    coll_regular(c->size, rcount, &rc_, &rd);
    int rc = mpii_alltoallv(sbuf, sc, sd, sdt, rbuf, rc_, rd, rdt, c);
    free(rd);
    free(rc_);
    free(sd);
    free(sc);
    return rc;
}

/* ---- reduce_scatter ------------------------------------------------------------------------ */

int mpii_reduce_scatter(const void *sbuf, void *rbuf, const MPI_Count rcounts[], MPI_Datatype dt,
                        MPI_Op op, mpii_comm *c)
{
    int n = c->size;
    MPI_Aint *displs = util_malloc((size_t)n * sizeof *displs);
    MPI_Aint total = 0;
    for (int i = 0; i < n; i++) {
        displs[i] = total;
        total += rcounts[i];
    }
    void *tmp = NULL, *tmpb = NULL;
    if (c->rank == 0)
        tmp = coll_alloc(total, dt, &tmpb);
    /* in place: the input is in rbuf; the full result goes to a buffer at rank 0 */
    const void *s = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    int rc = mpii_reduce(s, tmp, total, dt, op, 0, c);
    if (rc == MPI_SUCCESS)
        rc = mpii_scatterv(tmp, rcounts, displs, dt, rbuf, rcounts[c->rank], dt, 0, c);
    free(tmpb);
    free(displs);
    return rc;
}

int mpii_reduce_scatter_block(const void *sbuf, void *rbuf, MPI_Aint rcount, MPI_Datatype dt,
                              MPI_Op op, mpii_comm *c)
{
    MPI_Count *counts;
    MPI_Aint *displs;
    coll_regular(c->size, rcount, &counts, &displs);
    int rc = mpii_reduce_scatter(sbuf, rbuf, counts, dt, op, c);
    free(displs);
    free(counts);
    return rc;
}

/* ---- scan, exscan: a chain in rank order ------------------------------------------------------
 */

int mpii_scan(const void *sbuf, void *rbuf, MPI_Aint count, MPI_Datatype dt, MPI_Op op,
              mpii_comm *c)
{
    int r = c->rank, n = c->size;
    int rc = MPI_SUCCESS;
    if (sbuf != MPI_IN_PLACE)
        rc = coll_copy(sbuf, count, dt, rbuf, count, dt);
    if (rc == MPI_SUCCESS && r > 0) {
        void *tb;
        void *tmp = coll_alloc(count, dt, &tb);
        rc = mpii_recv(tmp, count, dt, r - 1, COLL_TAG_SCAN, c, 1, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            rc = mpii_op_apply(op, tmp, rbuf, count, dt); /* rbuf = prefix op mine */
        free(tb);
    }
    if (rc == MPI_SUCCESS && r < n - 1)
        rc = mpii_send(rbuf, count, dt, r + 1, COLL_TAG_SCAN, c, 1);
    return rc;
}

int mpii_exscan(const void *sbuf, void *rbuf, MPI_Aint count, MPI_Datatype dt, MPI_Op op,
                mpii_comm *c)
{
    int r = c->rank, n = c->size;
    const void *mine = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    if (r == n - 1 && r == 0)
        return MPI_SUCCESS;
    if (r == 0)
        return mpii_send(mine, count, dt, 1, COLL_TAG_SCAN, c, 1);
    /* keep my contribution before rbuf receives the prefix of the lower ranks */
    void *tb = NULL, *tmp = NULL;
    int rc = MPI_SUCCESS;
    if (r < n - 1) {
        tmp = coll_alloc(count, dt, &tb);
        rc = coll_copy(mine, count, dt, tmp, count, dt);
    }
    if (rc == MPI_SUCCESS)
        rc = mpii_recv(rbuf, count, dt, r - 1, COLL_TAG_SCAN, c, 1, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS && r < n - 1) {
        rc = mpii_op_apply(op, rbuf, tmp, count, dt); /* tmp = prefix op mine */
        if (rc == MPI_SUCCESS)
            rc = mpii_send(tmp, count, dt, r + 1, COLL_TAG_SCAN, c, 1);
    }
    free(tb);
    return rc;
}
