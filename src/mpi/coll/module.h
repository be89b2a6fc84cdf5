/* Collectives over a communicator whose ranks sit in several modules (network sides joined
 * only through gateway daemons, docs/gateway.md "Modules"; docs/collectives.md "Across
 * modules"): a phase within each module, one message per module between them. */
#ifndef DCFA_MPI_COLL_MODULE_H
#define DCFA_MPI_COLL_MODULE_H

#include "mpi/coll/sched.h"

/* [0] collectives built by the module-aware algorithms, [1] the messages they send from one
 * module to another (MPI_T: dcfa_coll_module_ops, dcfa_coll_module_cross) */
extern uint64_t coll_module_st[2];

/* Once at MPI_Init, local (no message): each world process's module, from
 * DCFA_COLL_MODULES when set, else, when the job has gateways (DCFA_GATEWAYS), found at the
 * first collective that asks from every process's cards ("host:", "net:": the rule of
 * MPIX_COMM_TYPE_MODULE); nothing otherwise. An error class. */
int coll_module_init(mpii_comm *world);
/* the module-aware algorithms apply to c: an intra-communicator of my world's processes in
 * at least two modules, DCFA_COLL_MODULE on (the same answer on every rank of c) */
int coll_module_usable(mpii_comm *c);
/* forget c's module layout (made on first use) */
void coll_module_release(mpii_comm *c);

int coll_barrier_module(coll_sched *s, mpii_comm *c);
int coll_bcast_module(coll_sched *s, void *buf, MPI_Aint count, MPI_Datatype dt, int root,
                      mpii_comm *c);
/* commutative operations only (the modules' partial results meet out of rank order) */
int coll_reduce_module(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count, MPI_Datatype dt,
                       MPI_Op op, int root, mpii_comm *c);
int coll_allreduce_module(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count,
                          MPI_Datatype dt, MPI_Op op, mpii_comm *c);

#endif
