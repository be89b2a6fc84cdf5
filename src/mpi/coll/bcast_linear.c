/* Linear broadcast: the root sends the message to every other rank at once. */
#include "mpi/coll/algo.h"

int coll_bcast_linear(coll_sched *s, void *buf, MPI_Aint count, MPI_Datatype dt, int root,
                      mpii_comm *c)
{
    if (c->size == 1 || count * (MPI_Aint)coll_tsize(dt) == 0)
        return MPI_SUCCESS;
    if (c->rank == root) {
        for (int i = 0; i < c->size; i++)
            if (i != root)
                coll_sched_send(s, buf, count, dt, i, NULL);
    } else {
        coll_sched_recv(s, buf, count, dt, root, NULL);
    }
    coll_sched_round(s);
    return MPI_SUCCESS;
}
