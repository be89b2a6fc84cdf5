/* Collective algorithms: each adds the operations of one collective to a
 * schedule (see sched.h), one file per algorithm (src/mpi/coll/<coll>_<alg>.c),
 * and the choice between them in select.c by message size, communicator size
 * and the DCFA_COLL_* tunables.
 *
 * Conventions shared by every builder:
 *  - arguments were checked by the binding; counts and displacements of the
 *    v/w forms are arrays of (peer group) size entries, displacements in
 *    extents of the datatype (alltoallw: bytes);
 *  - MPI_IN_PLACE arrives as MPI_IN_PLACE, where the standard allows it;
 *  - a builder ends with coll_sched_round() when it adds operations, so the
 *    next builder added to the same schedule starts after it;
 *  - every builder is correct for every communicator size (1, non powers of
 *    two) and every count, including 0;
 *  - scratch memory comes from coll_sched_alloc*(), never malloc;
 *  - intra builders take the schedule's own (intra-)communicator c; the inter_
 *    builders an inter-communicator, whose local phases use c->local_comm.
 * Return MPI_SUCCESS or an error class. */
#ifndef DCFA_MPI_COLL_ALGO_H
#define DCFA_MPI_COLL_ALGO_H

#include "mpi/coll/sched.h"

/* ---- small helpers for builders ---------------------------------------------- */
static inline MPI_Aint coll_extent(MPI_Datatype dt) { return mpii_dtype_get(dt)->dt.extent; }
static inline size_t coll_tsize(MPI_Datatype dt) { return mpii_dtype_get(dt)->dt.size; }
/* element i of a buffer of dt (integer arithmetic: buf may be MPI_BOTTOM) */
static inline void *coll_at(const void *buf, MPI_Aint i, MPI_Datatype dt)
{
    return (void *)((uintptr_t)buf + (uintptr_t)(i * coll_extent(dt)));
}
static inline void *coll_byte_at(const void *buf, MPI_Aint off)
{
    return (void *)((uintptr_t)buf + (uintptr_t)off);
}
/* n counts all equal to count / displacements 0, count, 2 count ..., from schedule scratch */
MPI_Count *coll_counts_equal(coll_sched *s, int n, MPI_Aint count);
MPI_Aint *coll_displs_packed(coll_sched *s, int n, const MPI_Count counts[]);
/* in-place alltoallw: copies of rbuf's blocks to send from (alltoallw_linear.c) */
const void **coll_alltoallw_inplace_sources(coll_sched *s, void *rbuf, const MPI_Count rcounts[],
                                            const MPI_Aint rdispls[], const MPI_Datatype rdts[],
                                            int n);
/* a zero-byte buffer that outlives every schedule */
extern char coll_nothing[1];

/* ---- the choice (select.c): what the bindings and the library call ---------- */
int coll_barrier(coll_sched *s, mpii_comm *c);
int coll_bcast(coll_sched *s, void *buf, MPI_Aint count, MPI_Datatype dt, int root, mpii_comm *c);
int coll_reduce(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count, MPI_Datatype dt,
                MPI_Op op, int root, mpii_comm *c);
int coll_allreduce(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count, MPI_Datatype dt,
                   MPI_Op op, mpii_comm *c);
/* the choice among the message algorithms alone (what the three above take when the node
 * segment is not used); bytes: the message or vector size to choose by, which is the root's
 * or another rank's when node_shm.c joins ranks whose data did not fit its segment */
int coll_bcast_msgs(coll_sched *s, void *buf, MPI_Aint count, MPI_Datatype dt, int root,
                    mpii_comm *c, size_t bytes);
int coll_reduce_msgs(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count, MPI_Datatype dt,
                     MPI_Op op, int root, mpii_comm *c);
int coll_allreduce_msgs(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count,
                        MPI_Datatype dt, MPI_Op op, mpii_comm *c, size_t bytes);
int coll_gather(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt, void *rbuf,
                MPI_Aint rcount, MPI_Datatype rdt, int root, mpii_comm *c);
int coll_gatherv(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt, void *rbuf,
                 const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rdt, int root,
                 mpii_comm *c);
int coll_scatter(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt, void *rbuf,
                 MPI_Aint rcount, MPI_Datatype rdt, int root, mpii_comm *c);
int coll_scatterv(coll_sched *s, const void *sbuf, const MPI_Count scounts[],
                  const MPI_Aint displs[], MPI_Datatype sdt, void *rbuf, MPI_Aint rcount,
                  MPI_Datatype rdt, int root, mpii_comm *c);
int coll_allgather(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt, void *rbuf,
                   MPI_Aint rcount, MPI_Datatype rdt, mpii_comm *c);
/* the message algorithms of allgather and alltoall (not the node segment) */
int coll_allgather_msgs(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt,
                        void *rbuf, MPI_Aint rcount, MPI_Datatype rdt, mpii_comm *c);
int coll_alltoall_msgs(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt,
                       void *rbuf, MPI_Aint rcount, MPI_Datatype rdt, mpii_comm *c);
int coll_allgatherv(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt,
                    void *rbuf, const MPI_Count rcounts[], const MPI_Aint displs[],
                    MPI_Datatype rdt, mpii_comm *c);
int coll_alltoall(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt, void *rbuf,
                  MPI_Aint rcount, MPI_Datatype rdt, mpii_comm *c);
int coll_alltoallv(coll_sched *s, const void *sbuf, const MPI_Count scounts[],
                   const MPI_Aint sdispls[], MPI_Datatype sdt, void *rbuf,
                   const MPI_Count rcounts[], const MPI_Aint rdispls[], MPI_Datatype rdt,
                   mpii_comm *c);
int coll_alltoallw(coll_sched *s, const void *sbuf, const MPI_Count scounts[],
                   const MPI_Aint sdispls[], const MPI_Datatype sdts[], void *rbuf,
                   const MPI_Count rcounts[], const MPI_Aint rdispls[],
                   const MPI_Datatype rdts[], mpii_comm *c);
int coll_reduce_scatter(coll_sched *s, const void *sbuf, void *rbuf, const MPI_Count rcounts[],
                        MPI_Datatype dt, MPI_Op op, mpii_comm *c);
int coll_reduce_scatter_block(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint rcount,
                              MPI_Datatype dt, MPI_Op op, mpii_comm *c);
int coll_scan(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count, MPI_Datatype dt,
              MPI_Op op, mpii_comm *c);
int coll_exscan(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count, MPI_Datatype dt,
                MPI_Op op, mpii_comm *c);

/* ---- the algorithms (one file each) ---------------------------------------------- */
int coll_barrier_dissemination(coll_sched *s, mpii_comm *c);
int coll_barrier_linear(coll_sched *s, mpii_comm *c);
int coll_bcast_binomial(coll_sched *s, void *buf, MPI_Aint count, MPI_Datatype dt, int root,
                        mpii_comm *c);
int coll_bcast_scatter_allgather(coll_sched *s, void *buf, MPI_Aint count, MPI_Datatype dt,
                                 int root, mpii_comm *c);
int coll_bcast_linear(coll_sched *s, void *buf, MPI_Aint count, MPI_Datatype dt, int root,
                      mpii_comm *c);
int coll_reduce_binomial(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count,
                         MPI_Datatype dt, MPI_Op op, int root, mpii_comm *c);
int coll_reduce_linear(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count,
                       MPI_Datatype dt, MPI_Op op, int root, mpii_comm *c);
int coll_allreduce_recursive_doubling(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count,
                                      MPI_Datatype dt, MPI_Op op, mpii_comm *c);
int coll_allreduce_rabenseifner(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count,
                                MPI_Datatype dt, MPI_Op op, mpii_comm *c);
int coll_allreduce_ring(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count,
                        MPI_Datatype dt, MPI_Op op, mpii_comm *c);
int coll_allreduce_reduce_bcast(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count,
                                MPI_Datatype dt, MPI_Op op, mpii_comm *c);
int coll_gatherv_linear(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt,
                        void *rbuf, const MPI_Count rcounts[], const MPI_Aint displs[],
                        MPI_Datatype rdt, int root, mpii_comm *c);
int coll_gather_binomial(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt,
                         void *rbuf, MPI_Aint rcount, MPI_Datatype rdt, int root, mpii_comm *c);
int coll_scatterv_linear(coll_sched *s, const void *sbuf, const MPI_Count scounts[],
                         const MPI_Aint displs[], MPI_Datatype sdt, void *rbuf, MPI_Aint rcount,
                         MPI_Datatype rdt, int root, mpii_comm *c);
int coll_scatter_binomial(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt,
                          void *rbuf, MPI_Aint rcount, MPI_Datatype rdt, int root, mpii_comm *c);
int coll_allgatherv_ring(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt,
                         void *rbuf, const MPI_Count rcounts[], const MPI_Aint displs[],
                         MPI_Datatype rdt, mpii_comm *c);
int coll_allgather_recursive_doubling(coll_sched *s, const void *sbuf, MPI_Aint scount,
                                      MPI_Datatype sdt, void *rbuf, MPI_Aint rcount,
                                      MPI_Datatype rdt, mpii_comm *c);
int coll_allgather_bruck(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt,
                         void *rbuf, MPI_Aint rcount, MPI_Datatype rdt, mpii_comm *c);
int coll_alltoall_bruck(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt,
                        void *rbuf, MPI_Aint rcount, MPI_Datatype rdt, mpii_comm *c);
int coll_alltoallw_pairwise(coll_sched *s, const void *sbuf, const MPI_Count scounts[],
                            const MPI_Aint sdispls[], const MPI_Datatype sdts[], void *rbuf,
                            const MPI_Count rcounts[], const MPI_Aint rdispls[],
                            const MPI_Datatype rdts[], mpii_comm *c);
int coll_alltoallw_linear(coll_sched *s, const void *sbuf, const MPI_Count scounts[],
                          const MPI_Aint sdispls[], const MPI_Datatype sdts[], void *rbuf,
                          const MPI_Count rcounts[], const MPI_Aint rdispls[],
                          const MPI_Datatype rdts[], mpii_comm *c);
int coll_reduce_scatter_reduce_scatterv(coll_sched *s, const void *sbuf, void *rbuf,
                                        const MPI_Count rcounts[], MPI_Datatype dt, MPI_Op op,
                                        mpii_comm *c);
int coll_reduce_scatter_pairwise(coll_sched *s, const void *sbuf, void *rbuf,
                                 const MPI_Count rcounts[], MPI_Datatype dt, MPI_Op op,
                                 mpii_comm *c);
int coll_scan_recursive_doubling(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count,
                                 MPI_Datatype dt, MPI_Op op, int exclusive, mpii_comm *c);
int coll_scan_linear(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count, MPI_Datatype dt,
                     MPI_Op op, int exclusive, mpii_comm *c);

/* ---- inter-communicators (inter.c): same signatures, root may be MPI_ROOT or
 * MPI_PROC_NULL; counts are of the remote group where the standard says so ---- */
int coll_inter_barrier(coll_sched *s, mpii_comm *c);
int coll_inter_bcast(coll_sched *s, void *buf, MPI_Aint count, MPI_Datatype dt, int root,
                     mpii_comm *c);
int coll_inter_reduce(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count,
                      MPI_Datatype dt, MPI_Op op, int root, mpii_comm *c);
int coll_inter_allreduce(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count,
                         MPI_Datatype dt, MPI_Op op, mpii_comm *c);
int coll_inter_gatherv(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt,
                       void *rbuf, const MPI_Count rcounts[], const MPI_Aint displs[],
                       MPI_Datatype rdt, int root, mpii_comm *c);
int coll_inter_scatterv(coll_sched *s, const void *sbuf, const MPI_Count scounts[],
                        const MPI_Aint displs[], MPI_Datatype sdt, void *rbuf, MPI_Aint rcount,
                        MPI_Datatype rdt, int root, mpii_comm *c);
int coll_inter_allgatherv(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt,
                          void *rbuf, const MPI_Count rcounts[], const MPI_Aint displs[],
                          MPI_Datatype rdt, mpii_comm *c);
int coll_inter_alltoallw(coll_sched *s, const void *sbuf, const MPI_Count scounts[],
                         const MPI_Aint sdispls[], const MPI_Datatype sdts[], void *rbuf,
                         const MPI_Count rcounts[], const MPI_Aint rdispls[],
                         const MPI_Datatype rdts[], mpii_comm *c);
int coll_inter_reduce_scatter(coll_sched *s, const void *sbuf, void *rbuf,
                              const MPI_Count rcounts[], MPI_Datatype dt, MPI_Op op,
                              mpii_comm *c);

#endif
