/* Blocking collectives over intra-communicators (src/mpi/coll), beyond the
 * four of mpii.h. Arguments are checked by the caller; counts and
 * displacements of the v/w forms are arrays of comm->size entries
 * (displacements in extents of the datatype, for alltoallw in bytes).
 * MPI_IN_PLACE is accepted where the standard allows it. Return MPI_SUCCESS
 * or an error class. */
#ifndef DCFA_MPI_COLL_H
#define DCFA_MPI_COLL_H

#include "mpi/mpii.h"

int mpii_reduce(const void *sbuf, void *rbuf, MPI_Aint count, MPI_Datatype dt, MPI_Op op, int root,
                mpii_comm *c);
int mpii_gather(const void *sbuf, MPI_Aint scount, MPI_Datatype sdt, void *rbuf, MPI_Aint rcount,
                MPI_Datatype rdt, int root, mpii_comm *c);
int mpii_gatherv(const void *sbuf, MPI_Aint scount, MPI_Datatype sdt, void *rbuf,
                 const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rdt, int root,
                 mpii_comm *c);
int mpii_scatter(const void *sbuf, MPI_Aint scount, MPI_Datatype sdt, void *rbuf, MPI_Aint rcount,
                 MPI_Datatype rdt, int root, mpii_comm *c);
int mpii_scatterv(const void *sbuf, const MPI_Count scounts[], const MPI_Aint displs[],
                  MPI_Datatype sdt, void *rbuf, MPI_Aint rcount, MPI_Datatype rdt, int root,
                  mpii_comm *c);
int mpii_allgatherv(const void *sbuf, MPI_Aint scount, MPI_Datatype sdt, void *rbuf,
                    const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rdt,
                    mpii_comm *c);
int mpii_alltoall(const void *sbuf, MPI_Aint scount, MPI_Datatype sdt, void *rbuf, MPI_Aint rcount,
                  MPI_Datatype rdt, mpii_comm *c);
int mpii_alltoallv(const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[],
                   MPI_Datatype sdt, void *rbuf, const MPI_Count rcounts[],
                   const MPI_Aint rdispls[], MPI_Datatype rdt, mpii_comm *c);
int mpii_alltoallw(const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[],
                   const MPI_Datatype sdts[], void *rbuf, const MPI_Count rcounts[],
                   const MPI_Aint rdispls[], const MPI_Datatype rdts[], mpii_comm *c);
int mpii_reduce_scatter(const void *sbuf, void *rbuf, const MPI_Count rcounts[], MPI_Datatype dt,
                        MPI_Op op, mpii_comm *c);
int mpii_reduce_scatter_block(const void *sbuf, void *rbuf, MPI_Aint rcount, MPI_Datatype dt,
                              MPI_Op op, mpii_comm *c);
int mpii_scan(const void *sbuf, void *rbuf, MPI_Aint count, MPI_Datatype dt, MPI_Op op,
              mpii_comm *c);
int mpii_exscan(const void *sbuf, void *rbuf, MPI_Aint count, MPI_Datatype dt, MPI_Op op,
                mpii_comm *c);

#endif
