/* Reduce-scatter as a reduce of the whole vector to rank 0 followed by a
 * scatterv of the blocks: any operation (rank order kept), any size. */
#include "mpi/coll/algo.h"

int coll_reduce_scatter_reduce_scatterv(coll_sched *s, const void *sbuf, void *rbuf,
                                        const MPI_Count rcounts[], MPI_Datatype dt, MPI_Op op,
                                        mpii_comm *c)
{
    int n = c->size;
    MPI_Aint total = 0;
    for (int i = 0; i < n; i++)
        total += (MPI_Aint)rcounts[i];
    /* in place: the whole input vector is in rbuf */
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    void *whole = c->rank == 0 ? coll_sched_alloc_typed(s, total, dt) : NULL;
    int rc = coll_reduce_binomial(s, in, whole, total, dt, op, 0, c);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Aint *displs = coll_displs_packed(s, n, rcounts);
    return coll_scatterv_linear(s, whole, rcounts, displs, dt, rbuf, (MPI_Aint)rcounts[c->rank],
                                dt, 0, c);
}
