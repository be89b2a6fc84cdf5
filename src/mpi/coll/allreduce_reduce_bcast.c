/* Allreduce as a binomial reduce to rank 0 followed by a binomial broadcast:
 * the general fallback (any operation, any datatype layout). */
#include "mpi/coll/algo.h"

int coll_allreduce_reduce_bcast(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count,
                                MPI_Datatype dt, MPI_Op op, mpii_comm *c)
{
    /* in place: the input is in rbuf; only rank 0, the reduce's root, may say MPI_IN_PLACE */
    const void *in = sbuf == MPI_IN_PLACE && c->rank != 0 ? rbuf : sbuf;
    int rc = coll_reduce_binomial(s, in, rbuf, count, dt, op, 0, c);
    if (rc == MPI_SUCCESS)
        rc = coll_bcast_binomial(s, rbuf, count, dt, 0, c);
    return rc;
}
