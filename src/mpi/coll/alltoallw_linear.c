/* Linear alltoall(v/w): every receive and every send posted at once, the own
 * block copied locally. Displacements are in bytes. In place, each block is
 * first copied aside so that sends read the old contents while receives
 * overwrite them. */
#include "mpi/coll/algo.h"

/* the send side of an in-place alltoallw: copies of rbuf's blocks */
const void **coll_alltoallw_inplace_sources(coll_sched *s, void *rbuf, const MPI_Count rcounts[],
                                            const MPI_Aint rdispls[], const MPI_Datatype rdts[],
                                            int n)
{
    const void **src = coll_sched_alloc(s, (size_t)n * sizeof *src);
    for (int i = 0; i < n; i++) {
        void *t = coll_sched_alloc_typed(s, (MPI_Aint)rcounts[i], rdts[i]);
        coll_sched_copy(s, coll_byte_at(rbuf, rdispls[i]), (MPI_Aint)rcounts[i], rdts[i], t,
                        (MPI_Aint)rcounts[i], rdts[i]);
        src[i] = t;
    }
    coll_sched_round(s);
    return src;
}

int coll_alltoallw_linear(coll_sched *s, const void *sbuf, const MPI_Count scounts[],
                          const MPI_Aint sdispls[], const MPI_Datatype sdts[], void *rbuf,
                          const MPI_Count rcounts[], const MPI_Aint rdispls[],
                          const MPI_Datatype rdts[], mpii_comm *c)
{
    int n = c->size, r = c->rank;
    const void **inplace = NULL;
    if (sbuf == MPI_IN_PLACE)
        inplace = coll_alltoallw_inplace_sources(s, rbuf, rcounts, rdispls, rdts, n);
    for (int k = 0; k < n; k++) {
        int i = (r + k) % n;  /* start with the right neighbour: fewer senders hit one rank */
        const void *from = inplace ? inplace[i] : coll_byte_at(sbuf, sdispls[i]);
        MPI_Aint scnt = inplace ? (MPI_Aint)rcounts[i] : (MPI_Aint)scounts[i];
        MPI_Datatype st = inplace ? rdts[i] : sdts[i];
        if (i == r) {
            if (!inplace)
                coll_sched_copy(s, from, scnt, st, coll_byte_at(rbuf, rdispls[i]),
                                (MPI_Aint)rcounts[i], rdts[i]);
            continue;
        }
        coll_sched_recv(s, coll_byte_at(rbuf, rdispls[i]), (MPI_Aint)rcounts[i], rdts[i], i, NULL);
        coll_sched_send(s, from, scnt, st, i, NULL);
    }
    coll_sched_round(s);
    return MPI_SUCCESS;
}
