/* Linear reduce: the root receives every contribution at once and folds them
 * in rank order from the highest down (x_i op (x_i+1 op ...)), which keeps the
 * order of non-commutative operations. */
#include "mpi/coll/algo.h"

int coll_reduce_linear(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count,
                       MPI_Datatype dt, MPI_Op op, int root, mpii_comm *c)
{
    int n = c->size;
    if (count * (MPI_Aint)coll_tsize(dt) == 0)
        return MPI_SUCCESS;
    if (c->rank != root) {
        coll_sched_send(s, sbuf, count, dt, root, NULL);
        coll_sched_round(s);
        return MPI_SUCCESS;
    }
    const void *mine = sbuf;
    if (sbuf == MPI_IN_PLACE) {
        /* rbuf is overwritten by the fold below: keep my input aside */
        void *t = coll_sched_alloc_typed(s, count, dt);
        coll_sched_copy(s, rbuf, count, dt, t, count, dt);
        mine = t;
    }
    const void **in = coll_sched_alloc(s, (size_t)n * sizeof *in);
    for (int i = 0; i < n; i++) {
        if (i == root) {
            in[i] = mine;
            continue;
        }
        void *t = coll_sched_alloc_typed(s, count, dt);
        coll_sched_recv(s, t, count, dt, i, NULL);
        in[i] = t;
    }
    coll_sched_round(s);
    coll_sched_copy(s, in[n - 1], count, dt, rbuf, count, dt);
    for (int i = n - 2; i >= 0; i--)
        coll_sched_reduce(s, in[i], rbuf, count, dt, op);
    coll_sched_round(s);
    return MPI_SUCCESS;
}
