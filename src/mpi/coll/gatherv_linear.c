/* Linear gather(v): every rank sends its block to the root, which posts all
 * the receives at once and copies its own block locally (unless in place). */
#include "mpi/coll/algo.h"

int coll_gatherv_linear(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt,
                        void *rbuf, const MPI_Count rcounts[], const MPI_Aint displs[],
                        MPI_Datatype rdt, int root, mpii_comm *c)
{
    if (c->rank != root) {
        coll_sched_send(s, sbuf, scount, sdt, root, NULL);
    } else {
        for (int i = 0; i < c->size; i++) {
            void *at = coll_at(rbuf, displs[i], rdt);
            if (i != root)
                coll_sched_recv(s, at, (MPI_Aint)rcounts[i], rdt, i, NULL);
            else if (sbuf != MPI_IN_PLACE)
                coll_sched_copy(s, sbuf, scount, sdt, at, (MPI_Aint)rcounts[i], rdt);
        }
    }
    coll_sched_round(s);
    return MPI_SUCCESS;
}
