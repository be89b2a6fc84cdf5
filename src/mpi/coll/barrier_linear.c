/* Linear barrier: everyone signals rank 0, which releases everyone once all
 * have arrived (2 (n - 1) messages, two rounds; the reference for the others). */
#include "mpi/coll/algo.h"

int coll_barrier_linear(coll_sched *s, mpii_comm *c)
{
    int n = c->size;
    if (n == 1)
        return MPI_SUCCESS;
    if (c->rank == 0) {
        for (int i = 1; i < n; i++)
            coll_sched_recv(s, coll_nothing, 0, MPI_BYTE, i, NULL);
        coll_sched_round(s);
        for (int i = 1; i < n; i++)
            coll_sched_send(s, coll_nothing, 0, MPI_BYTE, i, NULL);
    } else {
        coll_sched_send(s, coll_nothing, 0, MPI_BYTE, 0, NULL);
        coll_sched_round(s);
        coll_sched_recv(s, coll_nothing, 0, MPI_BYTE, 0, NULL);
    }
    coll_sched_round(s);
    return MPI_SUCCESS;
}
