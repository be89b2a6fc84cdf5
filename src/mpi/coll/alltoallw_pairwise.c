/* Pairwise-exchange alltoall(v/w): in step k every rank sends to rank + k and
 * receives from rank - k, one pair of messages in flight per rank (n - 1
 * steps; the choice for long blocks, where posting everything at once would
 * only make the transfers compete). */
#include "mpi/coll/algo.h"

int coll_alltoallw_pairwise(coll_sched *s, const void *sbuf, const MPI_Count scounts[],
                            const MPI_Aint sdispls[], const MPI_Datatype sdts[], void *rbuf,
                            const MPI_Count rcounts[], const MPI_Aint rdispls[],
                            const MPI_Datatype rdts[], mpii_comm *c)
{
    int n = c->size, r = c->rank;
    const void **inplace = NULL;
    if (sbuf == MPI_IN_PLACE)
        inplace = coll_alltoallw_inplace_sources(s, rbuf, rcounts, rdispls, rdts, n);
    else
        coll_sched_copy(s, coll_byte_at(sbuf, sdispls[r]), (MPI_Aint)scounts[r], sdts[r],
                        coll_byte_at(rbuf, rdispls[r]), (MPI_Aint)rcounts[r], rdts[r]);
    for (int k = 1; k < n; k++) {
        int to = (r + k) % n, from = (r - k + n) % n;
        coll_sched_recv(s, coll_byte_at(rbuf, rdispls[from]), (MPI_Aint)rcounts[from], rdts[from],
                        from, NULL);
        if (inplace)
            coll_sched_send(s, inplace[to], (MPI_Aint)rcounts[to], rdts[to], to, NULL);
        else
            coll_sched_send(s, coll_byte_at(sbuf, sdispls[to]), (MPI_Aint)scounts[to], sdts[to],
                            to, NULL);
        coll_sched_round(s);
    }
    coll_sched_round(s);
    return MPI_SUCCESS;
}
