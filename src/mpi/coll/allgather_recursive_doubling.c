/* Recursive-doubling allgather, for short messages on power-of-two sizes. At
 * step k (mask 2^k) every rank holds the 2^k blocks of its aligned group
 * [rank & ~(2^k - 1), + 2^k) in place in rbuf, exchanges them with partner
 * rank ^ 2^k and so holds the 2^(k+1) blocks of the group twice as large;
 * a group is a contiguous range of rbuf, so each step is one typed send and
 * one typed receive straight out of and into rbuf (any datatype, no scratch).
 * Cost: log2 n steps, (n - 1) blocks received per rank. Other sizes have no
 * partner at every step: they run Bruck's algorithm (allgather_bruck.c),
 * which has the same step count for any n. */
#include "mpi/coll/algo.h"

int coll_allgather_recursive_doubling(coll_sched *s, const void *sbuf, MPI_Aint scount,
                                      MPI_Datatype sdt, void *rbuf, MPI_Aint rcount,
                                      MPI_Datatype rdt, mpii_comm *c)
{
    int n = c->size, rank = c->rank;
    if (n & (n - 1))
        return coll_allgather_bruck(s, sbuf, scount, sdt, rbuf, rcount, rdt, c);
    if (sbuf != MPI_IN_PLACE)
        coll_sched_copy(s, sbuf, scount, sdt, coll_at(rbuf, (MPI_Aint)rank * rcount, rdt), rcount,
                        rdt);
    if (rcount * (MPI_Aint)coll_tsize(rdt) == 0) {
        coll_sched_round(s);
        return MPI_SUCCESS;
    }
    for (int mask = 1; mask < n; mask <<= 1) {
        int partner = rank ^ mask;
        MPI_Aint mine = (MPI_Aint)(rank & ~(mask - 1)) * rcount;
        MPI_Aint theirs = (MPI_Aint)(partner & ~(mask - 1)) * rcount;
        coll_sched_recv(s, coll_at(rbuf, theirs, rdt), mask * rcount, rdt, partner, NULL);
        coll_sched_send(s, coll_at(rbuf, mine, rdt), mask * rcount, rdt, partner, NULL);
        coll_sched_round(s);
    }
    coll_sched_round(s);
    return MPI_SUCCESS;
}
