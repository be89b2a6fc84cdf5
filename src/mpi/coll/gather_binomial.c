/* Binomial-tree gather, for short blocks. In ranks relative to the root (vr),
 * the subtree of vr is [vr, vr + 2^k) (2^k: vr's lowest set bit; the whole
 * communicator for the root), clipped to n. A leaf sends its block straight
 * from sbuf; an inner node packs its own block and receives each child's
 * subtree, vr + 2^j for 2^j < 2^k, into a contiguous byte scratch in relative
 * order, then sends the lot to its parent vr - 2^k. The root receives the
 * blocks of relative ranks 1 .. n-1 the same way and unpacks them into rbuf:
 * relative block j is rank (root + j) mod n's, so the rotation is two
 * contiguous copies (ranks root+1 .. n-1, then 0 .. root-1). With
 * MPI_IN_PLACE the root's own block is not touched.
 * Cost: ceil(log2 n) steps instead of n - 1 receives at the root; every block
 * travels up to log2 n hops (b n log2 n / 2 bytes moved in total for blocks of
 * b bytes), which is why select.c only takes it for short blocks. */
#include "mpi/coll/algo.h"

int coll_gather_binomial(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt,
                         void *rbuf, MPI_Aint rcount, MPI_Datatype rdt, int root, mpii_comm *c)
{
    int n = c->size, rank = c->rank, vr = (rank - root + n) % n;
    MPI_Aint bb =
        rank == root ? rcount * (MPI_Aint)coll_tsize(rdt) : scount * (MPI_Aint)coll_tsize(sdt);
    if (rank == root && sbuf != MPI_IN_PLACE)
        coll_sched_copy(s, sbuf, scount, sdt, coll_at(rbuf, (MPI_Aint)root * rcount, rdt), rcount,
                        rdt);
    if (n == 1 || bb == 0) {
        coll_sched_round(s);
        return MPI_SUCCESS;
    }
    int mask = 1; /* vr's lowest set bit: the subtree size and the distance to the parent */
    while (mask < n && !(vr & mask))
        mask <<= 1;
    int sub = vr + mask < n ? mask : n - vr; /* blocks in the subtree */

    if (sub == 1) { /* leaf */
        coll_sched_send(s, sbuf, scount, sdt, (vr - mask + root) % n, NULL);
        coll_sched_round(s);
        return MPI_SUCCESS;
    }
    /* tmp: the subtree's blocks, block j of relative rank vr + j */
    char *tmp = coll_sched_alloc(s, (size_t)(sub * bb));
    if (rank != root)
        coll_sched_copy(s, sbuf, scount, sdt, tmp, bb, MPI_BYTE);
    for (int m = 1; m < mask && vr + m < n; m <<= 1) {
        int cnt = vr + 2 * m <= n ? m : n - vr - m;
        coll_sched_recv(s, tmp + m * bb, cnt * bb, MPI_BYTE, (vr + m + root) % n, NULL);
    }
    coll_sched_round(s);
    if (rank != root) {
        coll_sched_send(s, tmp, sub * bb, MPI_BYTE, (vr - mask + root) % n, NULL);
    } else {
        /* relative 1 .. n-root-1 are ranks root+1 .. n-1; relative n-root .. n-1 are 0 .. root-1 */
        int hi = n - root - 1;
        if (hi > 0)
            coll_sched_copy(s, tmp + bb, hi * bb, MPI_BYTE,
                            coll_at(rbuf, (MPI_Aint)(root + 1) * rcount, rdt), hi * rcount, rdt);
        if (root > 0)
            coll_sched_copy(s, tmp + (n - root) * bb, root * bb, MPI_BYTE, rbuf, root * rcount,
                            rdt);
    }
    coll_sched_round(s);
    return MPI_SUCCESS;
}
