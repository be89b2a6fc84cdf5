/* Node-level collectives through a shared-memory segment per communicator
 * (node_shm.c); used by select.c, released with the communicator. */
#ifndef DCFA_MPI_COLL_NODE_SHM_H
#define DCFA_MPI_COLL_NODE_SHM_H

#include "mpi/coll/sched.h"

/* can this blocking barrier, bcast, reduce or allreduce meet in the segment? Decided alike
 * on every rank, from nothing the ranks may disagree about (not the counts or datatypes:
 * the data that does not fit goes by messages after the meeting, node_shm.c). */
int coll_shm_usable(const coll_sched *s, mpii_comm *c);
int coll_barrier_shm(coll_sched *s, mpii_comm *c);
int coll_bcast_shm(coll_sched *s, void *buf, MPI_Aint count, MPI_Datatype dt, int root,
                   mpii_comm *c);
/* root < 0: allreduce */
int coll_reduce_shm(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count, MPI_Datatype dt,
                    MPI_Op op, int root, mpii_comm *c);
/* Allgather (all2all 0) and alltoall (1) through the segment in one phase: only for a
 * blocking operation on a segment already made, whose schedule is empty (coll_shm_ready, the
 * same answer on every rank); the data goes through the set when every rank's blocks are dense,
 * of one size on every rank, at most DCFA_COLL_SHM_FLAT bytes each and fit a slot, else all
 * ranks join the message algorithm (sizes that differ, all small: MPI_ERR_TRUNCATE). */
int coll_shm_ready(const coll_sched *s, mpii_comm *c);
int coll_exchange_shm(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt,
                      void *rbuf, MPI_Aint rcount, MPI_Datatype rdt, int all2all, mpii_comm *c);
/* unmap (and unlink if still named) the communicator's segment */
void coll_shm_release(mpii_comm *c);

#endif
