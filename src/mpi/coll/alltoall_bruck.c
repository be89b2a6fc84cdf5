/* Bruck's alltoall, for small blocks: ceil(log2 n) steps instead of n - 1,
 * at the price of each block travelling up to log2 n hops (about
 * (n / 2) ceil(log2 n) blocks sent per rank instead of n - 1).
 * Every rank works on bytes in a scratch of n blocks:
 *  1. rotation: block j of the scratch is the block for rank (rank + j) mod n
 *     (two contiguous copies out of sbuf; with MPI_IN_PLACE out of rbuf, which
 *     is only written at the end, so this is the copy aside);
 *  2. for each bit d = 2^k: pack the blocks whose index has bit k set, send
 *     them to rank + d, receive the same block indices from rank - d and
 *     unpack them in their place (at the start of the next round). A block
 *     at index j has gone, by the end, exactly j ranks forward: to its
 *     destination;
 *  3. inversion: at rank q, block j now came from rank q - j, so it goes to
 *     rbuf block (q - j) mod n (one copy per block).
 * Any datatype: blocks are packed bytes, signatures must match as the
 * standard requires. */
#include "mpi/coll/algo.h"

int coll_alltoall_bruck(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt,
                        void *rbuf, MPI_Aint rcount, MPI_Datatype rdt, mpii_comm *c)
{
    int n = c->size, rank = c->rank;
    MPI_Aint bb = rcount * (MPI_Aint)coll_tsize(rdt);
    if (sbuf == MPI_IN_PLACE) {
        sbuf = rbuf;
        scount = rcount;
        sdt = rdt;
    }
    if (bb == 0) {
        coll_sched_round(s);
        return MPI_SUCCESS;
    }
    if (n == 1) {
        if (sbuf != rbuf)
            coll_sched_copy(s, sbuf, scount, sdt, rbuf, rcount, rdt);
        coll_sched_round(s);
        return MPI_SUCCESS;
    }
    char *tmp = coll_sched_alloc(s, (size_t)(n * bb));
    char *spack = coll_sched_alloc(s, (size_t)((n / 2 + 1) * bb));
    char *rpack = coll_sched_alloc(s, (size_t)((n / 2 + 1) * bb));
    coll_sched_copy(s, coll_at(sbuf, (MPI_Aint)rank * scount, sdt), (n - rank) * scount, sdt, tmp,
                    (n - rank) * bb, MPI_BYTE);
    if (rank > 0)
        coll_sched_copy(s, sbuf, rank * scount, sdt, tmp + (n - rank) * bb, rank * bb, MPI_BYTE);
    int prev = 0; /* the bit whose blocks arrived in rpack last round */
    for (int d = 1; d < n; d <<= 1) {
        int np = 0;
        if (prev) /* unpack the previous step's blocks before packing this one's */
            for (int j = prev; j < n; j++)
                if (j & prev)
                    coll_sched_copy(s, rpack + np++ * bb, bb, MPI_BYTE, tmp + j * bb, bb, MPI_BYTE);
        np = 0;
        for (int j = d; j < n; j++)
            if (j & d)
                coll_sched_copy(s, tmp + j * bb, bb, MPI_BYTE, spack + np++ * bb, bb, MPI_BYTE);
        coll_sched_recv(s, rpack, np * bb, MPI_BYTE, (rank - d + n) % n, NULL);
        coll_sched_send(s, spack, np * bb, MPI_BYTE, (rank + d) % n, NULL);
        coll_sched_round(s);
        prev = d;
    }
    int np = 0;
    for (int j = prev; j < n; j++)
        if (j & prev)
            coll_sched_copy(s, rpack + np++ * bb, bb, MPI_BYTE, tmp + j * bb, bb, MPI_BYTE);
    /* inversion: block j came from rank - j */
    for (int j = 0; j < n; j++)
        coll_sched_copy(s, tmp + j * bb, bb, MPI_BYTE,
                        coll_at(rbuf, (MPI_Aint)((rank - j + n) % n) * rcount, rdt), rcount, rdt);
    coll_sched_round(s);
    return MPI_SUCCESS;
}
