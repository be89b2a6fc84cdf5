/* Recursive-doubling allreduce (latency-optimal for short messages). With p
 * the largest power of two <= n and rem = n - p, the first 2 rem ranks pair
 * up: each even one hands its data to the odd one above it and sits out;
 * the remaining p ranks exchange whole vectors with partner newrank ^ 2^k for
 * k = 0 .. log2 p - 1, each combining in rank order (the lower group's value
 * first, so non-commutative operations are right too); at the end the odd
 * ranks send the result back to the even ones that sat out. */
#include "mpi/coll/algo.h"

static int rd_real(int newrank, int rem) { return newrank < rem ? 2 * newrank + 1 : newrank + rem; }

int coll_allreduce_recursive_doubling(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count,
                                      MPI_Datatype dt, MPI_Op op, mpii_comm *c)
{
    int n = c->size, rank = c->rank;
    if (sbuf != MPI_IN_PLACE)
        coll_sched_copy(s, sbuf, count, dt, rbuf, count, dt);
    if (n == 1 || count * (MPI_Aint)coll_tsize(dt) == 0) {
        coll_sched_round(s);
        return MPI_SUCCESS;
    }
    int p = 1;
    while (p * 2 <= n)
        p *= 2;
    int rem = n - p, newrank;
    void *tmp = coll_sched_alloc_typed(s, count, dt);
    if (rank < 2 * rem) {
        if (rank % 2 == 0) {
            coll_sched_send(s, rbuf, count, dt, rank + 1, NULL);
            coll_sched_round(s);
            coll_sched_recv(s, rbuf, count, dt, rank + 1, NULL);
            coll_sched_round(s);
            return MPI_SUCCESS;
        }
        coll_sched_recv(s, tmp, count, dt, rank - 1, NULL);
        coll_sched_round(s);
        coll_sched_reduce(s, tmp, rbuf, count, dt, op);   /* rank - 1 is lower */
        newrank = rank / 2;
    } else {
        newrank = rank - rem;
    }
    for (int mask = 1; mask < p; mask <<= 1) {
        int partner = rd_real(newrank ^ mask, rem);
        coll_sched_recv(s, tmp, count, dt, partner, NULL);
        coll_sched_send(s, rbuf, count, dt, partner, NULL);
        coll_sched_round(s);
        if (partner < rank) {
            coll_sched_reduce(s, tmp, rbuf, count, dt, op);
        } else {
            coll_sched_reduce(s, rbuf, tmp, count, dt, op);
            coll_sched_copy(s, tmp, count, dt, rbuf, count, dt);
        }
    }
    if (rank < 2 * rem)
        coll_sched_send(s, rbuf, count, dt, rank - 1, NULL);
    coll_sched_round(s);
    return MPI_SUCCESS;
}
