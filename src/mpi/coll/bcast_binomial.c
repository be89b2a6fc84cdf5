/* Binomial-tree broadcast: in ranks relative to the root (vr), a rank receives
 * from vr minus its lowest set bit, then sends to vr + 2^k for every 2^k below
 * that bit; ceil(log2 n) steps, the whole message at each. */
#include "mpi/coll/algo.h"

int coll_bcast_binomial(coll_sched *s, void *buf, MPI_Aint count, MPI_Datatype dt, int root,
                        mpii_comm *c)
{
    int n = c->size, vr = (c->rank - root + n) % n;
    int mask = 1;
    if (n == 1 || count * (MPI_Aint)coll_tsize(dt) == 0)
        return MPI_SUCCESS;
    for (; mask < n; mask <<= 1) {
        if (vr & mask) {
            coll_sched_recv(s, buf, count, dt, (vr - mask + root) % n, NULL);
            coll_sched_round(s);
            break;
        }
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < n)
            coll_sched_send(s, buf, count, dt, (vr + mask + root) % n, NULL);
    coll_sched_round(s);
    return MPI_SUCCESS;
}
