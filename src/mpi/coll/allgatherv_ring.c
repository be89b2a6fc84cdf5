/* Ring allgather(v): after placing its own block, in step k every rank passes
 * block (rank - k) to its right neighbour and receives block (rank - k - 1)
 * from its left one; n - 1 steps, each block travels once round the ring. */
#include "mpi/coll/algo.h"

int coll_allgatherv_ring(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt,
                         void *rbuf, const MPI_Count rcounts[], const MPI_Aint displs[],
                         MPI_Datatype rdt, mpii_comm *c)
{
    int n = c->size, r = c->rank;
    if (sbuf != MPI_IN_PLACE)
        coll_sched_copy(s, sbuf, scount, sdt, coll_at(rbuf, displs[r], rdt),
                        (MPI_Aint)rcounts[r], rdt);
    int right = (r + 1) % n, left = (r - 1 + n) % n;
    for (int k = 0; k < n - 1; k++) {
        int sb = (r - k + n) % n, rb = (r - k - 1 + n) % n;
        coll_sched_recv(s, coll_at(rbuf, displs[rb], rdt), (MPI_Aint)rcounts[rb], rdt, left, NULL);
        coll_sched_send(s, coll_at(rbuf, displs[sb], rdt), (MPI_Aint)rcounts[sb], rdt, right, NULL);
        coll_sched_round(s);
    }
    coll_sched_round(s);
    return MPI_SUCCESS;
}
