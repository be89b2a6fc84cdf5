/* Binomial-tree scatter, for short blocks: the gather tree (gather_binomial.c)
 * run downwards. In ranks relative to the root (vr), the subtree of vr is
 * [vr, vr + 2^k) (2^k: vr's lowest set bit), clipped to n. The root packs the
 * blocks of relative ranks 1 .. n-1 into a byte scratch in relative order
 * (relative j is rank (root + j) mod n: two contiguous copies out of sbuf)
 * and sends each child vr + 2^j its subtree's range. An inner node receives
 * its subtree's blocks into a byte scratch, keeps the first one and passes the
 * children's ranges on; a leaf receives its block straight into rbuf. With
 * MPI_IN_PLACE at the root its own block stays where it is in sbuf.
 * Cost: ceil(log2 n) steps instead of n - 1 sends at the root. */
#include "mpi/coll/algo.h"

int coll_scatter_binomial(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt,
                          void *rbuf, MPI_Aint rcount, MPI_Datatype rdt, int root, mpii_comm *c)
{
    int n = c->size, rank = c->rank, vr = (rank - root + n) % n;
    MPI_Aint bb =
        rank == root ? scount * (MPI_Aint)coll_tsize(sdt) : rcount * (MPI_Aint)coll_tsize(rdt);
    if (rank == root && rbuf != MPI_IN_PLACE)
        coll_sched_copy(s, coll_at(sbuf, (MPI_Aint)root * scount, sdt), scount, sdt, rbuf, rcount,
                        rdt);
    if (n == 1 || bb == 0) {
        coll_sched_round(s);
        return MPI_SUCCESS;
    }
    int mask = 1; /* vr's lowest set bit: the subtree size and the distance to the parent */
    while (mask < n && !(vr & mask))
        mask <<= 1;
    int sub = vr + mask < n ? mask : n - vr; /* blocks in the subtree */
    int parent = (vr - mask + root) % n;

    if (sub == 1) { /* leaf */
        coll_sched_recv(s, rbuf, rcount, rdt, parent, NULL);
        coll_sched_round(s);
        return MPI_SUCCESS;
    }
    /* tmp: the subtree's blocks, block j for relative rank vr + j */
    char *tmp = coll_sched_alloc(s, (size_t)(sub * bb));
    if (rank != root) {
        coll_sched_recv(s, tmp, sub * bb, MPI_BYTE, parent, NULL);
        coll_sched_round(s);
        coll_sched_copy(s, tmp, bb, MPI_BYTE, rbuf, rcount, rdt);
    } else {
        int hi = n - root - 1;
        if (hi > 0)
            coll_sched_copy(s, coll_at(sbuf, (MPI_Aint)(root + 1) * scount, sdt), hi * scount, sdt,
                            tmp + bb, hi * bb, MPI_BYTE);
        if (root > 0)
            coll_sched_copy(s, sbuf, root * scount, sdt, tmp + (n - root) * bb, root * bb,
                            MPI_BYTE);
    }
    for (int m = 1; m < mask && vr + m < n; m <<= 1) {
        int cnt = vr + 2 * m <= n ? m : n - vr - m;
        coll_sched_send(s, tmp + m * bb, cnt * bb, MPI_BYTE, (vr + m + root) % n, NULL);
    }
    coll_sched_round(s);
    return MPI_SUCCESS;
}
