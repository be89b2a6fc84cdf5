/* Dissemination barrier: in round k every rank signals rank + 2^k and waits for
 * rank - 2^k (mod n); after ceil(log2 n) rounds every rank has heard,
 * directly or through others, from every rank. */
#include "mpi/coll/algo.h"

int coll_barrier_dissemination(coll_sched *s, mpii_comm *c)
{
    int n = c->size, r = c->rank;
    for (int k = 1; k < n; k <<= 1) {
        coll_sched_recv(s, coll_nothing, 0, MPI_BYTE, (r - k + n) % n, NULL);
        coll_sched_send(s, coll_nothing, 0, MPI_BYTE, (r + k) % n, NULL);
        coll_sched_round(s);
    }
    return MPI_SUCCESS;
}
