/* Linear scatter(v): the root sends every rank its block at once and copies
 * its own locally (unless in place). */
#include "mpi/coll/algo.h"

int coll_scatterv_linear(coll_sched *s, const void *sbuf, const MPI_Count scounts[],
                         const MPI_Aint displs[], MPI_Datatype sdt, void *rbuf, MPI_Aint rcount,
                         MPI_Datatype rdt, int root, mpii_comm *c)
{
    if (c->rank != root) {
        coll_sched_recv(s, rbuf, rcount, rdt, root, NULL);
    } else {
        for (int i = 0; i < c->size; i++) {
            const void *at = coll_at(sbuf, displs[i], sdt);
            if (i != root)
                coll_sched_send(s, at, (MPI_Aint)scounts[i], sdt, i, NULL);
            else if (rbuf != MPI_IN_PLACE)
                coll_sched_copy(s, at, (MPI_Aint)scounts[i], sdt, rbuf, rcount, rdt);
        }
    }
    coll_sched_round(s);
    return MPI_SUCCESS;
}
