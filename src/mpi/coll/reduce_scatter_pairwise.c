/* Pairwise-exchange reduce-scatter, for commutative operations (select.c
 * sends non-commutative ones to reduce + scatterv). Rank r's result is block r
 * of every rank's input, combined. Starting from its own block r, in step
 * k = 1 .. n-1 rank r sends block r + k of its input to rank r + k, receives
 * block r of rank r - k's input and folds it in (at the start of the next
 * round, so one receive buffer serves every step).
 * Cost: n - 1 steps, each rank sends and receives (n - 1) / n of the vector
 * once and applies the operation to that much: bandwidth-optimal, but linear
 * in n for latency. Blocks of zero elements send nothing (every rank knows
 * the counts). MPI_IN_PLACE: the input is the whole vector in rbuf, whose
 * first rcounts[r] elements receive the result: the blocks are sent out of
 * rbuf while the result grows in a scratch, copied to rbuf after the last
 * step. */
#include "mpi/coll/algo.h"

int coll_reduce_scatter_pairwise(coll_sched *s, const void *sbuf, void *rbuf,
                                 const MPI_Count rcounts[], MPI_Datatype dt, MPI_Op op,
                                 mpii_comm *c)
{
    int n = c->size, r = c->rank;
    int inplace = sbuf == MPI_IN_PLACE;
    const void *in = inplace ? rbuf : sbuf;
    MPI_Aint *displs = coll_displs_packed(s, n, rcounts);
    MPI_Aint mine = (MPI_Aint)rcounts[r];
    void *acc = inplace ? coll_sched_alloc_typed(s, mine, dt) : rbuf;
    void *tmp = coll_sched_alloc_typed(s, mine, dt);
    coll_sched_copy(s, coll_at(in, displs[r], dt), mine, dt, acc, mine, dt);
    for (int k = 1; k < n; k++) {
        int to = (r + k) % n, from = (r - k + n) % n;
        if (k > 1)
            coll_sched_reduce(s, tmp, acc, mine, dt, op);
        if (mine > 0)
            coll_sched_recv(s, tmp, mine, dt, from, NULL);
        if (rcounts[to] > 0)
            coll_sched_send(s, coll_at(in, displs[to], dt), (MPI_Aint)rcounts[to], dt, to, NULL);
        coll_sched_round(s);
    }
    if (n > 1)
        coll_sched_reduce(s, tmp, acc, mine, dt, op);
    if (inplace)
        coll_sched_copy(s, acc, mine, dt, rbuf, mine, dt);
    coll_sched_round(s);
    return MPI_SUCCESS;
}
