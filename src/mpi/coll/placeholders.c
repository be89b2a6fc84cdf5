/* Algorithms still being written: each falls back to a correct simpler one.
 * Removed function by function as the real ones land. */
#include "mpi/coll/algo.h"

int coll_bcast_scatter_allgather(coll_sched *s, void *buf, MPI_Aint count, MPI_Datatype dt,
                                 int root, mpii_comm *c)
{
    return coll_bcast_binomial(s, buf, count, dt, root, c);
}

int coll_gather_binomial(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt,
                         void *rbuf, MPI_Aint rcount, MPI_Datatype rdt, int root, mpii_comm *c)
{
    MPI_Count *counts = coll_counts_equal(s, c->size, rcount);
    return coll_gatherv_linear(s, sbuf, scount, sdt, rbuf, counts,
                               coll_displs_packed(s, c->size, counts), rdt, root, c);
}

int coll_scatter_binomial(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt,
                          void *rbuf, MPI_Aint rcount, MPI_Datatype rdt, int root, mpii_comm *c)
{
    MPI_Count *counts = coll_counts_equal(s, c->size, scount);
    return coll_scatterv_linear(s, sbuf, counts, coll_displs_packed(s, c->size, counts), sdt, rbuf,
                                rcount, rdt, root, c);
}

int coll_allgather_recursive_doubling(coll_sched *s, const void *sbuf, MPI_Aint scount,
                                      MPI_Datatype sdt, void *rbuf, MPI_Aint rcount,
                                      MPI_Datatype rdt, mpii_comm *c)
{
    MPI_Count *counts = coll_counts_equal(s, c->size, rcount);
    return coll_allgatherv_ring(s, sbuf, scount, sdt, rbuf, counts,
                                coll_displs_packed(s, c->size, counts), rdt, c);
}

int coll_allgather_bruck(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt,
                         void *rbuf, MPI_Aint rcount, MPI_Datatype rdt, mpii_comm *c)
{
    return coll_allgather_recursive_doubling(s, sbuf, scount, sdt, rbuf, rcount, rdt, c);
}

int coll_alltoall_bruck(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt,
                        void *rbuf, MPI_Aint rcount, MPI_Datatype rdt, mpii_comm *c)
{
    int n = c->size;
    MPI_Aint *sd = coll_sched_alloc(s, (size_t)n * sizeof *sd);
    MPI_Aint *rd = coll_sched_alloc(s, (size_t)n * sizeof *rd);
    MPI_Datatype *st = coll_sched_alloc(s, (size_t)n * sizeof *st);
    MPI_Datatype *rt = coll_sched_alloc(s, (size_t)n * sizeof *rt);
    int inplace = sbuf == MPI_IN_PLACE;
    for (int i = 0; i < n; i++) {
        sd[i] = inplace ? 0 : i * scount * coll_extent(sdt);
        rd[i] = i * rcount * coll_extent(rdt);
        st[i] = inplace ? rdt : sdt;
        rt[i] = rdt;
    }
    MPI_Count *rc = coll_counts_equal(s, n, rcount);
    return coll_alltoallw_linear(s, sbuf, inplace ? rc : coll_counts_equal(s, n, scount), sd, st,
                                 rbuf, rc, rd, rt, c);
}

int coll_reduce_scatter_pairwise(coll_sched *s, const void *sbuf, void *rbuf,
                                 const MPI_Count rcounts[], MPI_Datatype dt, MPI_Op op,
                                 mpii_comm *c)
{
    return coll_reduce_scatter_reduce_scatterv(s, sbuf, rbuf, rcounts, dt, op, c);
}

int coll_scan_recursive_doubling(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count,
                                 MPI_Datatype dt, MPI_Op op, int exclusive, mpii_comm *c)
{
    return coll_scan_linear(s, sbuf, rbuf, count, dt, op, exclusive, c);
}
