/* Linear scan / exscan: a chain in rank order. Rank r receives the prefix of
 * ranks 0 .. r-1 from r - 1, combines it with its own contribution (prefix
 * first, for non-commutative operations) and passes the result on; n - 1
 * sequential steps. */
#include "mpi/coll/algo.h"

int coll_scan_linear(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count, MPI_Datatype dt,
                     MPI_Op op, int exclusive, mpii_comm *c)
{
    int n = c->size, r = c->rank;
    const void *mine = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    if (count * (MPI_Aint)coll_tsize(dt) == 0)
        return MPI_SUCCESS;
    if (!exclusive) {
        if (sbuf != MPI_IN_PLACE)
            coll_sched_copy(s, sbuf, count, dt, rbuf, count, dt);
        if (r > 0) {
            void *prefix = coll_sched_alloc_typed(s, count, dt);
            coll_sched_recv(s, prefix, count, dt, r - 1, NULL);
            coll_sched_round(s);
            coll_sched_reduce(s, prefix, rbuf, count, dt, op);
        }
        if (r + 1 < n)
            coll_sched_send(s, rbuf, count, dt, r + 1, NULL);
        coll_sched_round(s);
        return MPI_SUCCESS;
    }
    /* exclusive: rbuf gets the prefix of the ranks below (undefined on rank 0) */
    if (r == 0) {
        if (n > 1)
            coll_sched_send(s, mine, count, dt, 1, NULL);
        coll_sched_round(s);
        return MPI_SUCCESS;
    }
    void *prefix = coll_sched_alloc_typed(s, count, dt);
    void *acc = NULL;
    if (r + 1 < n) {
        acc = coll_sched_alloc_typed(s, count, dt);
        coll_sched_copy(s, mine, count, dt, acc, count, dt);   /* before rbuf is overwritten */
    }
    coll_sched_recv(s, prefix, count, dt, r - 1, NULL);
    coll_sched_round(s);
    if (acc) {
        coll_sched_reduce(s, prefix, acc, count, dt, op);
        coll_sched_send(s, acc, count, dt, r + 1, NULL);
    }
    coll_sched_copy(s, prefix, count, dt, rbuf, count, dt);
    coll_sched_round(s);
    return MPI_SUCCESS;
}
