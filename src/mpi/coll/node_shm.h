/* Node-level collectives through a shared-memory segment per communicator
 * (node_shm.c); used by select.c, released with the communicator. */
#ifndef DCFA_MPI_COLL_NODE_SHM_H
#define DCFA_MPI_COLL_NODE_SHM_H

#include "mpi/coll/sched.h"

/* can this collective go through the segment? dt MPI_DATATYPE_NULL: barrier;
 * reduction: allreduce/reduce (dense contiguous types, DCFA_COLL_SHM_SLOT
 * bytes), else bcast (any type, the whole set). Decided alike on every rank. */
int coll_shm_usable(const coll_sched *s, mpii_comm *c, MPI_Datatype dt, MPI_Aint count, int reduction);
int coll_barrier_shm(coll_sched *s, mpii_comm *c);
int coll_bcast_shm(coll_sched *s, void *buf, MPI_Aint count, MPI_Datatype dt, int root,
                   mpii_comm *c);
/* root < 0: allreduce */
int coll_reduce_shm(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count, MPI_Datatype dt,
                    MPI_Op op, int root, mpii_comm *c);
/* unmap (and unlink if still named) the communicator's segment */
void coll_shm_release(mpii_comm *c);

#endif
