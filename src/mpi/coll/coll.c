/* The blocking collectives the library uses inside itself (communicator
 * construction, MPI_Init's barrier) and that older code calls: each builds a
 * schedule with the algorithm choice of select.c and runs it. */
#include "mpi/coll/coll.h"
#include "mpi/coll/algo.h"

/* run a built schedule, or drop it when building failed */
static int coll_run(coll_sched *s, int built)
{
    if (built == MPI_SUCCESS)
        return coll_sched_wait(s);
    coll_sched_free(s);
    return built;
}

int mpii_reduce(const void *sbuf, void *rbuf, MPI_Aint count, MPI_Datatype dt, MPI_Op op,
                int root, mpii_comm *c)
{
    coll_sched *s = coll_sched_create(c);
    return coll_run(s, coll_reduce(s, sbuf, rbuf, count, dt, op, root, c));
}

int mpii_gather(const void *sbuf, MPI_Aint scount, MPI_Datatype sdt, void *rbuf, MPI_Aint rcount,
                MPI_Datatype rdt, int root, mpii_comm *c)
{
    coll_sched *s = coll_sched_create(c);
    return coll_run(s, coll_gather(s, sbuf, scount, sdt, rbuf, rcount, rdt, root, c));
}

int mpii_gatherv(const void *sbuf, MPI_Aint scount, MPI_Datatype sdt, void *rbuf,
                 const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rdt, int root,
        mpii_comm *c)
{
    coll_sched *s = coll_sched_create(c);
    return coll_run(s, coll_gatherv(s, sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root, c));
}

int mpii_scatter(const void *sbuf, MPI_Aint scount, MPI_Datatype sdt, void *rbuf, MPI_Aint rcount,
                 MPI_Datatype rdt, int root, mpii_comm *c)
{
    coll_sched *s = coll_sched_create(c);
    return coll_run(s, coll_scatter(s, sbuf, scount, sdt, rbuf, rcount, rdt, root, c));
}

int mpii_scatterv(const void *sbuf, const MPI_Count scounts[], const MPI_Aint displs[],
                  MPI_Datatype sdt, void *rbuf, MPI_Aint rcount, MPI_Datatype rdt, int root,
        mpii_comm *c)
{
    coll_sched *s = coll_sched_create(c);
    return coll_run(s, coll_scatterv(s, sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root, c));
}

int mpii_allgatherv(const void *sbuf, MPI_Aint scount, MPI_Datatype sdt, void *rbuf,
                    const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rdt,
        mpii_comm *c)
{
    coll_sched *s = coll_sched_create(c);
    return coll_run(s, coll_allgatherv(s, sbuf, scount, sdt, rbuf, rcounts, displs, rdt, c));
}

int mpii_alltoall(const void *sbuf, MPI_Aint scount, MPI_Datatype sdt, void *rbuf,
                  MPI_Aint rcount, MPI_Datatype rdt, mpii_comm *c)
{
    coll_sched *s = coll_sched_create(c);
    return coll_run(s, coll_alltoall(s, sbuf, scount, sdt, rbuf, rcount, rdt, c));
}

int mpii_alltoallv(const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[],
                   MPI_Datatype sdt, void *rbuf, const MPI_Count rcounts[],
        const MPI_Aint rdispls[], MPI_Datatype rdt, mpii_comm *c)
{
    coll_sched *s = coll_sched_create(c);
    return coll_run(s, coll_alltoallv(s, sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt,
        c));
}

int mpii_alltoallw(const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[],
                   const MPI_Datatype sdts[], void *rbuf, const MPI_Count rcounts[],
        const MPI_Aint rdispls[], const MPI_Datatype rdts[], mpii_comm *c)
{
    coll_sched *s = coll_sched_create(c);
    return coll_run(s, coll_alltoallw(s, sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls,
        rdts, c));
}

int mpii_reduce_scatter(const void *sbuf, void *rbuf, const MPI_Count rcounts[], MPI_Datatype dt,
                        MPI_Op op, mpii_comm *c)
{
    coll_sched *s = coll_sched_create(c);
    return coll_run(s, coll_reduce_scatter(s, sbuf, rbuf, rcounts, dt, op, c));
}

int mpii_reduce_scatter_block(const void *sbuf, void *rbuf, MPI_Aint rcount, MPI_Datatype dt,
                              MPI_Op op, mpii_comm *c)
{
    coll_sched *s = coll_sched_create(c);
    return coll_run(s, coll_reduce_scatter_block(s, sbuf, rbuf, rcount, dt, op, c));
}

int mpii_scan(const void *sbuf, void *rbuf, MPI_Aint count, MPI_Datatype dt, MPI_Op op,
              mpii_comm *c)
{
    coll_sched *s = coll_sched_create(c);
    return coll_run(s, coll_scan(s, sbuf, rbuf, count, dt, op, c));
}

int mpii_exscan(const void *sbuf, void *rbuf, MPI_Aint count, MPI_Datatype dt, MPI_Op op,
                mpii_comm *c)
{
    coll_sched *s = coll_sched_create(c);
    return coll_run(s, coll_exscan(s, sbuf, rbuf, count, dt, op, c));
}

int mpii_barrier(mpii_comm *c)
{
    coll_sched *s = coll_sched_create(c);
    return coll_run(s, coll_barrier(s, c));
}

int mpii_bcast(void *buf, MPI_Aint count, MPI_Datatype dt, int root, mpii_comm *c)
{
    coll_sched *s = coll_sched_create(c);
    return coll_run(s, coll_bcast(s, buf, count, dt, root, c));
}

int mpii_allreduce(const void *sbuf, void *rbuf, MPI_Aint count, MPI_Datatype dt, MPI_Op op,
                   mpii_comm *c)
{
    coll_sched *s = coll_sched_create(c);
    return coll_run(s, coll_allreduce(s, sbuf, rbuf, count, dt, op, c));
}

int mpii_allgather(const void *sbuf, MPI_Aint scount, MPI_Datatype sdt, void *rbuf,
                   MPI_Aint rcount, MPI_Datatype rdt, mpii_comm *c)
{
    coll_sched *s = coll_sched_create(c);
    return coll_run(s, coll_allgather(s, sbuf, scount, sdt, rbuf, rcount, rdt, c));
}
