/* Rabenseifner's allreduce (medium and long messages, commutative operations):
 * a reduce-scatter by recursive halving (each step exchanges half of the part
 * still being reduced with partner newrank ^ 2^k, from the largest 2^k down,
 * until every rank holds one fully reduced block) followed by an allgather by
 * recursive doubling (exchanging ever larger ranges of reduced blocks).
 * Non-power-of-two sizes pair up the first 2 rem ranks as recursive doubling
 * does. Each rank moves about 2 (p - 1) / p of the vector in 2 log2 p steps. */
#include "mpi/coll/algo.h"

static int rab_real(int newrank, int rem) { return newrank < rem ? 2 * newrank + 1 : newrank + rem; }

int coll_allreduce_rabenseifner(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count,
                                MPI_Datatype dt, MPI_Op op, mpii_comm *c)
{
    int n = c->size, rank = c->rank;
    int p = 1;
    while (p * 2 <= n)
        p *= 2;
    if (n == 1 || count < p)
        return coll_allreduce_recursive_doubling(s, sbuf, rbuf, count, dt, op, c);
    if (sbuf != MPI_IN_PLACE)
        coll_sched_copy(s, sbuf, count, dt, rbuf, count, dt);
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
        void *whole = coll_sched_alloc_typed(s, count, dt);
        coll_sched_recv(s, whole, count, dt, rank - 1, NULL);
        coll_sched_round(s);
        coll_sched_reduce(s, whole, rbuf, count, dt, op);
        newrank = rank / 2;
    } else {
        newrank = rank - rem;
    }
    /* p blocks as even as possible; block b is elements [off[b], off[b + 1]) */
    MPI_Aint *off = coll_sched_alloc(s, (size_t)(p + 1) * sizeof *off);
    for (int b = 0; b <= p; b++)
        off[b] = (count / p) * b + (b < count % p ? b : count % p);
    int lo = 0, hi = p;
    for (int mask = p / 2; mask > 0; mask >>= 1) {
        int partner = rab_real(newrank ^ mask, rem), mid = lo + (hi - lo) / 2;
        int klo = (newrank & mask) ? mid : lo, khi = (newrank & mask) ? hi : mid;
        int glo = (newrank & mask) ? lo : mid, ghi = (newrank & mask) ? mid : hi;
        coll_sched_recv(s, tmp, off[khi] - off[klo], dt, partner, NULL);
        coll_sched_send(s, coll_at(rbuf, off[glo], dt), off[ghi] - off[glo], dt, partner, NULL);
        coll_sched_round(s);
        coll_sched_reduce(s, tmp, coll_at(rbuf, off[klo], dt), off[khi] - off[klo], dt, op);
        lo = klo;
        hi = khi;
    }
    for (int mask = 1; mask < p; mask <<= 1) {
        int partner_new = newrank ^ mask, partner = rab_real(partner_new, rem);
        int mlo = newrank & ~(mask - 1), plo = partner_new & ~(mask - 1);
        coll_sched_recv(s, coll_at(rbuf, off[plo], dt), off[plo + mask] - off[plo], dt, partner,
                        NULL);
        coll_sched_send(s, coll_at(rbuf, off[mlo], dt), off[mlo + mask] - off[mlo], dt, partner,
                        NULL);
        coll_sched_round(s);
    }
    if (rank < 2 * rem)
        coll_sched_send(s, rbuf, count, dt, rank - 1, NULL);
    coll_sched_round(s);
    return MPI_SUCCESS;
}
