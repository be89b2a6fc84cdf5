/* Algorithms still being written: each falls back to a correct simpler one
 * (or, for inter-communicators, reports that the operation is not there yet).
 * Removed function by function as the real ones land. */
#include "mpi/coll/algo.h"

/* ---- inter-communicators ---- */
#define COLL_INTER_TODO return MPI_ERR_UNSUPPORTED_OPERATION

int coll_inter_barrier(coll_sched *s, mpii_comm *c) { COLL_INTER_TODO; }
int coll_inter_bcast(coll_sched *s, void *buf, MPI_Aint count, MPI_Datatype dt, int root,
                     mpii_comm *c) { COLL_INTER_TODO; }
int coll_inter_reduce(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count,
                      MPI_Datatype dt, MPI_Op op, int root, mpii_comm *c) { COLL_INTER_TODO; }
int coll_inter_allreduce(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count,
                         MPI_Datatype dt, MPI_Op op, mpii_comm *c) { COLL_INTER_TODO; }
int coll_inter_gatherv(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt,
                       void *rbuf, const MPI_Count rcounts[], const MPI_Aint displs[],
                       MPI_Datatype rdt, int root, mpii_comm *c) { COLL_INTER_TODO; }
int coll_inter_scatterv(coll_sched *s, const void *sbuf, const MPI_Count scounts[],
                        const MPI_Aint displs[], MPI_Datatype sdt, void *rbuf, MPI_Aint rcount,
                        MPI_Datatype rdt, int root, mpii_comm *c) { COLL_INTER_TODO; }
int coll_inter_allgatherv(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt,
                          void *rbuf, const MPI_Count rcounts[], const MPI_Aint displs[],
                          MPI_Datatype rdt, mpii_comm *c) { COLL_INTER_TODO; }
int coll_inter_alltoallw(coll_sched *s, const void *sbuf, const MPI_Count scounts[],
                         const MPI_Aint sdispls[], const MPI_Datatype sdts[], void *rbuf,
                         const MPI_Count rcounts[], const MPI_Aint rdispls[],
                         const MPI_Datatype rdts[], mpii_comm *c) { COLL_INTER_TODO; }
int coll_inter_reduce_scatter(coll_sched *s, const void *sbuf, void *rbuf,
                              const MPI_Count rcounts[], MPI_Datatype dt, MPI_Op op,
                              mpii_comm *c) { COLL_INTER_TODO; }
