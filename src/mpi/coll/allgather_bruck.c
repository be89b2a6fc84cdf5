/* Bruck's allgather, for short messages on any size. Every rank works in a
 * byte scratch whose block j ends up holding rank (rank + j) mod n's block:
 * it starts with its own block at 0; at step k (distance d = 2^k) it sends its
 * first min(d, n - d) blocks to rank - d and receives as many from rank + d
 * into blocks d ..; after ceil(log2 n) steps it holds all n, and a final local
 * rotation (two contiguous copies) puts them in rank order in rbuf.
 * Cost: ceil(log2 n) steps, n - 1 blocks received per rank, plus packing the
 * own block and one unpacking pass over the result. With MPI_IN_PLACE the own
 * block is taken from its place in rbuf. */
#include "mpi/coll/algo.h"

int coll_allgather_bruck(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt,
                         void *rbuf, MPI_Aint rcount, MPI_Datatype rdt, mpii_comm *c)
{
    int n = c->size, rank = c->rank;
    MPI_Aint bb = rcount * (MPI_Aint)coll_tsize(rdt);
    void *mine = coll_at(rbuf, (MPI_Aint)rank * rcount, rdt);
    if (n == 1 || bb == 0) {
        if (sbuf != MPI_IN_PLACE)
            coll_sched_copy(s, sbuf, scount, sdt, mine, rcount, rdt);
        coll_sched_round(s);
        return MPI_SUCCESS;
    }
    char *tmp = coll_sched_alloc(s, (size_t)(n * bb));
    if (sbuf == MPI_IN_PLACE)
        coll_sched_copy(s, mine, rcount, rdt, tmp, bb, MPI_BYTE);
    else
        coll_sched_copy(s, sbuf, scount, sdt, tmp, bb, MPI_BYTE);
    for (int d = 1; d < n; d <<= 1) {
        int cnt = d < n - d ? d : n - d;
        coll_sched_recv(s, tmp + d * bb, cnt * bb, MPI_BYTE, (rank + d) % n, NULL);
        coll_sched_send(s, tmp, cnt * bb, MPI_BYTE, (rank - d + n) % n, NULL);
        coll_sched_round(s);
    }
    /* block j is rank (rank + j) mod n's: j < n - rank go to rank .., the rest to 0 .. */
    coll_sched_copy(s, tmp, (n - rank) * bb, MPI_BYTE, mine, (n - rank) * rcount, rdt);
    if (rank > 0)
        coll_sched_copy(s, tmp + (n - rank) * bb, rank * bb, MPI_BYTE, rbuf, rank * rcount, rdt);
    coll_sched_round(s);
    return MPI_SUCCESS;
}
