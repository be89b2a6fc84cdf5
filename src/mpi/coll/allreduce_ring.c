/* Ring allreduce (bandwidth-optimal for long messages, commutative operations):
 * the vector is cut into n blocks; in n - 1 reduce-scatter steps each rank
 * passes one block to its right neighbour and folds the block coming from its
 * left one, so that rank r ends with block r + 1 fully reduced; n - 1
 * allgather steps then pass the reduced blocks round the ring. Every rank
 * sends and receives 2 (n - 1) / n of the vector. */
#include "mpi/coll/algo.h"

int coll_allreduce_ring(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count,
                        MPI_Datatype dt, MPI_Op op, mpii_comm *c)
{
    int n = c->size, r = c->rank;
    if (sbuf != MPI_IN_PLACE)
        coll_sched_copy(s, sbuf, count, dt, rbuf, count, dt);
    if (n == 1 || count < n)
        return coll_allreduce_recursive_doubling(s, MPI_IN_PLACE, rbuf, count, dt, op, c);
    MPI_Aint *cnt = coll_sched_alloc(s, (size_t)n * sizeof *cnt);
    MPI_Aint *off = coll_sched_alloc(s, (size_t)n * sizeof *off);
    MPI_Aint base = count / n, extra = count % n, maxcnt = base + (extra ? 1 : 0);
    for (int i = 0, o = 0; i < n; i++) {
        cnt[i] = base + (i < extra ? 1 : 0);
        off[i] = o;
        o += (int)cnt[i];
    }
    void *tmp = coll_sched_alloc_typed(s, maxcnt, dt);
    int right = (r + 1) % n, left = (r - 1 + n) % n;
    for (int step = 0; step < n - 1; step++) {
        int sb = (r - step + n) % n, rb = (r - step - 1 + 2 * n) % n;
        coll_sched_recv(s, tmp, cnt[rb], dt, left, NULL);
        coll_sched_send(s, coll_at(rbuf, off[sb], dt), cnt[sb], dt, right, NULL);
        coll_sched_round(s);
        coll_sched_reduce(s, tmp, coll_at(rbuf, off[rb], dt), cnt[rb], dt, op);
    }
    for (int step = 0; step < n - 1; step++) {
        int sb = (r + 1 - step + n) % n, rb = (r - step + n) % n;
        coll_sched_recv(s, coll_at(rbuf, off[rb], dt), cnt[rb], dt, left, NULL);
        coll_sched_send(s, coll_at(rbuf, off[sb], dt), cnt[sb], dt, right, NULL);
        coll_sched_round(s);
    }
    return MPI_SUCCESS;
}
