/* Recursive-doubling scan and exscan: ceil(log2 n) steps. Each rank keeps two
 * values: `partial`, the combination of every input in its aligned group of
 * 2^k ranks (clipped to n), and the result, the combination of the inputs of
 * the ranks below it (exscan) or up to it (scan) within that group. At step
 * k it exchanges `partial` with rank ^ 2^k; the partner's group lies
 * entirely below or entirely above, so
 *  - from a lower partner: result = received op result and
 *    partial = received op partial (the lower ranks' operand first);
 *  - from a higher partner: partial = partial op received, result unchanged;
 * which keeps the operand order for non-commutative operations. The buffers
 * of partial and of what was received swap roles instead of copying.
 * Exscan: the result starts empty, the first value from a lower partner is
 * copied into rbuf, later ones folded in; rank 0 has no lower partner, so its
 * rbuf is never touched. Every rank sends and receives ceil(log2 n) vectors
 * and applies the operation up to twice per step. */
#include "mpi/coll/algo.h"

int coll_scan_recursive_doubling(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count,
                                 MPI_Datatype dt, MPI_Op op, int exclusive, mpii_comm *c)
{
    int n = c->size, r = c->rank;
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    if (count * (MPI_Aint)coll_tsize(dt) == 0)
        return MPI_SUCCESS;
    if (!exclusive && sbuf != MPI_IN_PLACE)
        coll_sched_copy(s, sbuf, count, dt, rbuf, count, dt);
    if (n == 1) {
        coll_sched_round(s);
        return MPI_SUCCESS;
    }
    void *partial = coll_sched_alloc_typed(s, count, dt);
    void *recvd = coll_sched_alloc_typed(s, count, dt);
    /* before anything is written to rbuf (exscan in place reads its input there) */
    coll_sched_copy(s, in, count, dt, partial, count, dt);
    int have_result = !exclusive;
    int pending = 0; /* 1: recvd holds a lower partner's partial, -1: a higher one's */
    for (int mask = 1; mask < n; mask <<= 1) {
        int partner = r ^ mask;
        if (partner >= n)
            continue;
        /* fold what the previous exchange brought (its round has completed) */
        if (pending == 1) {
            coll_sched_reduce(s, recvd, partial, count, dt, op);
        } else if (pending == -1) {
            coll_sched_reduce(s, partial, recvd, count, dt, op);
            void *t = partial;
            partial = recvd;
            recvd = t;
        }
        coll_sched_recv(s, recvd, count, dt, partner, NULL);
        coll_sched_send(s, partial, count, dt, partner, NULL);
        coll_sched_round(s);
        if (partner < r) {
            /* result first: partial's fold above waits for the next step */
            if (have_result)
                coll_sched_reduce(s, recvd, rbuf, count, dt, op);
            else
                coll_sched_copy(s, recvd, count, dt, rbuf, count, dt);
            have_result = 1;
            pending = 1;
        } else {
            pending = -1;
        }
    }
    coll_sched_round(s);
    return MPI_SUCCESS;
}
