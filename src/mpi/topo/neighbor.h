/* Neighbourhood collectives (MPI 4.1 section 8.6) as collective schedules:
 * each builder adds, in one round, a receive from every source and a send to
 * every destination of the calling process, in the neighbour order of topo.h
 * (MPI_PROC_NULL neighbours add nothing), then ends the round. Arguments are
 * checked by the binding; the schedule's communicator has a topology.
 * Displacements: the v forms in extents of the datatype, the w form in
 * bytes, as in the MPI calls. Return MPI_SUCCESS or an error class. */
#ifndef DCFA_MPI_TOPO_NEIGHBOR_H
#define DCFA_MPI_TOPO_NEIGHBOR_H

#include "mpi/coll/sched.h"

int topo_neighbor_allgather(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt,
                            void *rbuf, MPI_Aint rcount, MPI_Datatype rdt);
int topo_neighbor_allgatherv(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt,
                             void *rbuf, const MPI_Count rcounts[], const MPI_Aint displs[],
                             MPI_Datatype rdt);
int topo_neighbor_alltoall(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt,
                           void *rbuf, MPI_Aint rcount, MPI_Datatype rdt);
int topo_neighbor_alltoallv(coll_sched *s, const void *sbuf, const MPI_Count scounts[],
                            const MPI_Aint sdispls[], MPI_Datatype sdt, void *rbuf,
                            const MPI_Count rcounts[], const MPI_Aint rdispls[], MPI_Datatype rdt);
int topo_neighbor_alltoallw(coll_sched *s, const void *sbuf, const MPI_Count scounts[],
                            const MPI_Aint sdispls[], const MPI_Datatype sdts[], void *rbuf,
                            const MPI_Count rcounts[], const MPI_Aint rdispls[],
                            const MPI_Datatype rdts[]);

#endif
