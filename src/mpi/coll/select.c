/* The algorithm choice, in one place: by communicator size, message size and
 * the DCFA_COLL_* tunables (a forced algorithm that cannot apply, e.g. a ring
 * allreduce of a non-commutative operation, falls back to one that can).
 * Inter-communicators go to inter.c. The v/w forms of the same collective
 * share one algorithm through count/displacement arrays made here. */
#include "mpi/coll/algo.h"
#include "mpi/coll/module.h"
#include "mpi/coll/node_shm.h"
#include "mpi/op/op.h"

char coll_nothing[1];

MPI_Count *coll_counts_equal(coll_sched *s, int n, MPI_Aint count)
{
    MPI_Count *v = coll_sched_alloc(s, (size_t)n * sizeof *v);
    for (int i = 0; i < n; i++)
        v[i] = count;
    return v;
}

MPI_Aint *coll_displs_packed(coll_sched *s, int n, const MPI_Count counts[])
{
    MPI_Aint *v = coll_sched_alloc(s, (size_t)n * sizeof *v), o = 0;
    for (int i = 0; i < n; i++) {
        v[i] = o;
        o += (MPI_Aint)counts[i];
    }
    return v;
}

static int coll_is_pow2(int n) { return (n & (n - 1)) == 0; }

int coll_barrier(coll_sched *s, mpii_comm *c)
{
    if (c->is_inter)
        return coll_inter_barrier(s, c);
    int alg = util_cfg.coll_barrier;
    if (alg == 0 && coll_module_usable(c))
        return coll_barrier_module(s, c);
    if (alg == 2)
        return coll_barrier_linear(s, c);
    if ((alg == 0 || alg == 3) && coll_shm_usable(s, c))
        return coll_barrier_shm(s, c);
    return coll_barrier_dissemination(s, c);
}

int coll_bcast(coll_sched *s, void *buf, MPI_Aint count, MPI_Datatype dt, int root, mpii_comm *c)
{
    if (c->is_inter)
        return coll_inter_bcast(s, buf, count, dt, root, c);
    int alg = util_cfg.coll_bcast;
    if (alg == 0 && coll_module_usable(c))
        return coll_bcast_module(s, buf, count, dt, root, c);
    if ((alg == 0 || alg == 4) && coll_shm_usable(s, c))
        return coll_bcast_shm(s, buf, count, dt, root, c);
    return coll_bcast_msgs(s, buf, count, dt, root, c, (size_t)count * coll_tsize(dt));
}

int coll_bcast_msgs(coll_sched *s, void *buf, MPI_Aint count, MPI_Datatype dt, int root,
                    mpii_comm *c, size_t bytes)
{
    switch (util_cfg.coll_bcast) {
    case 2:
        return coll_bcast_scatter_allgather(s, buf, count, dt, root, c);
    case 3:
        return coll_bcast_linear(s, buf, count, dt, root, c);
    case 1:
    case 4: /* shm, where the root's message does not fit the segment */
        return coll_bcast_binomial(s, buf, count, dt, root, c);
    default:
        if (c->size < 3 || bytes < util_cfg.coll_bcast_long)
            return coll_bcast_binomial(s, buf, count, dt, root, c);
        return coll_bcast_scatter_allgather(s, buf, count, dt, root, c);
    }
}

int coll_reduce(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count, MPI_Datatype dt,
                MPI_Op op, int root, mpii_comm *c)
{
    if (c->is_inter)
        return coll_inter_reduce(s, sbuf, rbuf, count, dt, op, root, c);
    if (util_cfg.coll_reduce == 0 && mpii_op_is_commutative(op) && coll_module_usable(c))
        return coll_reduce_module(s, sbuf, rbuf, count, dt, op, root, c);
    if ((util_cfg.coll_reduce == 0 || util_cfg.coll_reduce == 3) && coll_shm_usable(s, c))
        return coll_reduce_shm(s, sbuf, rbuf, count, dt, op, root, c);
    return coll_reduce_msgs(s, sbuf, rbuf, count, dt, op, root, c);
}

int coll_reduce_msgs(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count, MPI_Datatype dt,
                     MPI_Op op, int root, mpii_comm *c)
{
    if (util_cfg.coll_reduce == 2)
        return coll_reduce_linear(s, sbuf, rbuf, count, dt, op, root, c);
    return coll_reduce_binomial(s, sbuf, rbuf, count, dt, op, root, c);
}

int coll_allreduce(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count, MPI_Datatype dt,
                   MPI_Op op, mpii_comm *c)
{
    if (c->is_inter)
        return coll_inter_allreduce(s, sbuf, rbuf, count, dt, op, c);
    int alg = util_cfg.coll_allreduce;
    if (alg == 0 && mpii_op_is_commutative(op) && coll_module_usable(c))
        return coll_allreduce_module(s, sbuf, rbuf, count, dt, op, c);
    if ((alg == 0 || alg == 5) && coll_shm_usable(s, c))
        return coll_reduce_shm(s, sbuf, rbuf, count, dt, op, -1, c);
    return coll_allreduce_msgs(s, sbuf, rbuf, count, dt, op, c, (size_t)count * coll_tsize(dt));
}

int coll_allreduce_msgs(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count,
                        MPI_Datatype dt, MPI_Op op, mpii_comm *c, size_t bytes)
{
    int commute = mpii_op_is_commutative(op);
    int alg = util_cfg.coll_allreduce;
    if (alg == 5) /* shm, where the vectors do not fit the segment */
        alg = 0;
    if (alg == 0) {
        if (bytes < util_cfg.coll_allreduce_short || c->size == 1)
            alg = 1;
        else if (!commute)
            alg = 4;
        else
            alg = bytes < util_cfg.coll_allreduce_long ? 2 : 3;
    }
    if ((alg == 2 || alg == 3) && !commute)
        alg = 1; /* order-keeping */
    switch (alg) {
    case 2:
        return coll_allreduce_rabenseifner(s, sbuf, rbuf, count, dt, op, c);
    case 3:
        return coll_allreduce_ring(s, sbuf, rbuf, count, dt, op, c);
    case 4:
        return coll_allreduce_reduce_bcast(s, sbuf, rbuf, count, dt, op, c);
    default:
        return coll_allreduce_recursive_doubling(s, sbuf, rbuf, count, dt, op, c);
    }
}

/* binomial gather/scatter for short messages: log n steps instead of n - 1 receives at the root */
static int coll_gather_binomial_wanted(mpii_comm *c, size_t block)
{
    if (util_cfg.coll_gather)
        return util_cfg.coll_gather == 1;
    return c->size > 2 && block * (size_t)c->size < 65536;
}

int coll_gather(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt, void *rbuf,
                MPI_Aint rcount, MPI_Datatype rdt, int root, mpii_comm *c)
{
    if (!c->is_inter) {
        size_t block = c->rank == root ? (size_t)rcount * coll_tsize(rdt)
                                       : (size_t)scount * coll_tsize(sdt);
        if (coll_gather_binomial_wanted(c, block))
            return coll_gather_binomial(s, sbuf, scount, sdt, rbuf, rcount, rdt, root, c);
    }
    int n = mpii_comm_peer_size(c);
    MPI_Count *counts = coll_counts_equal(s, n, rcount);
    return coll_gatherv(s, sbuf, scount, sdt, rbuf, counts, coll_displs_packed(s, n, counts), rdt,
                        root, c);
}

int coll_gatherv(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt, void *rbuf,
                 const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rdt, int root,
                 mpii_comm *c)
{
    if (c->is_inter)
        return coll_inter_gatherv(s, sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root, c);
    return coll_gatherv_linear(s, sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root, c);
}

int coll_scatter(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt, void *rbuf,
                 MPI_Aint rcount, MPI_Datatype rdt, int root, mpii_comm *c)
{
    if (!c->is_inter) {
        size_t block = c->rank == root ? (size_t)scount * coll_tsize(sdt)
                                       : (size_t)rcount * coll_tsize(rdt);
        if (coll_gather_binomial_wanted(c, block))
            return coll_scatter_binomial(s, sbuf, scount, sdt, rbuf, rcount, rdt, root, c);
    }
    int n = mpii_comm_peer_size(c);
    MPI_Count *counts = coll_counts_equal(s, n, scount);
    return coll_scatterv(s, sbuf, counts, coll_displs_packed(s, n, counts), sdt, rbuf, rcount, rdt,
                         root, c);
}

int coll_scatterv(coll_sched *s, const void *sbuf, const MPI_Count scounts[],
                  const MPI_Aint displs[], MPI_Datatype sdt, void *rbuf, MPI_Aint rcount,
                  MPI_Datatype rdt, int root, mpii_comm *c)
{
    if (c->is_inter)
        return coll_inter_scatterv(s, sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root, c);
    return coll_scatterv_linear(s, sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root, c);
}

int coll_allgather(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt, void *rbuf,
                   MPI_Aint rcount, MPI_Datatype rdt, mpii_comm *c)
{
    if (!c->is_inter && util_cfg.coll_allgather == 0 && coll_shm_ready(s, c))
        return coll_exchange_shm(s, sbuf, scount, sdt, rbuf, rcount, rdt, 0, c);
    return coll_allgather_msgs(s, sbuf, scount, sdt, rbuf, rcount, rdt, c);
}

int coll_allgather_msgs(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt,
                        void *rbuf, MPI_Aint rcount, MPI_Datatype rdt, mpii_comm *c)
{
    if (!c->is_inter) {
        size_t total = (size_t)rcount * coll_tsize(rdt) * (size_t)c->size;
        int alg = util_cfg.coll_allgather;
        if (alg == 0)
            alg = total >= util_cfg.coll_allgather_short ? 1 : coll_is_pow2(c->size) ? 2 : 3;
        if (alg == 2)
            return coll_allgather_recursive_doubling(s, sbuf, scount, sdt, rbuf, rcount, rdt, c);
        if (alg == 3)
            return coll_allgather_bruck(s, sbuf, scount, sdt, rbuf, rcount, rdt, c);
    }
    int n = mpii_comm_peer_size(c);
    MPI_Count *counts = coll_counts_equal(s, n, rcount);
    return coll_allgatherv(s, sbuf, scount, sdt, rbuf, counts, coll_displs_packed(s, n, counts),
                           rdt, c);
}

int coll_allgatherv(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt,
                    void *rbuf, const MPI_Count rcounts[], const MPI_Aint displs[],
                    MPI_Datatype rdt, mpii_comm *c)
{
    if (c->is_inter)
        return coll_inter_allgatherv(s, sbuf, scount, sdt, rbuf, rcounts, displs, rdt, c);
    return coll_allgatherv_ring(s, sbuf, scount, sdt, rbuf, rcounts, displs, rdt, c);
}

/* alltoall(v) as alltoallw: byte displacements and one datatype per peer */
static int coll_alltoall_as_w(coll_sched *s, const void *sbuf, const MPI_Count scounts[],
                              const MPI_Aint sdispls[], MPI_Datatype sdt, void *rbuf,
                              const MPI_Count rcounts[], const MPI_Aint rdispls[],
                              MPI_Datatype rdt, mpii_comm *c, int alg)
{
    int n = mpii_comm_peer_size(c);
    MPI_Aint *sd = coll_sched_alloc(s, (size_t)n * sizeof *sd);
    MPI_Aint *rd = coll_sched_alloc(s, (size_t)n * sizeof *rd);
    MPI_Datatype *st = coll_sched_alloc(s, (size_t)n * sizeof *st);
    MPI_Datatype *rt = coll_sched_alloc(s, (size_t)n * sizeof *rt);
    int inplace = sbuf == MPI_IN_PLACE;
    for (int i = 0; i < n; i++) {
        sd[i] = inplace ? 0 : sdispls[i] * coll_extent(sdt);
        rd[i] = rdispls[i] * coll_extent(rdt);
        st[i] = inplace ? rdt : sdt;
        rt[i] = rdt;
    }
    const MPI_Count *sc = inplace ? rcounts : scounts;
    if (c->is_inter)
        return coll_inter_alltoallw(s, sbuf, sc, sd, st, rbuf, rcounts, rd, rt, c);
    if (alg == 2)
        return coll_alltoallw_pairwise(s, sbuf, sc, sd, st, rbuf, rcounts, rd, rt, c);
    return coll_alltoallw_linear(s, sbuf, sc, sd, st, rbuf, rcounts, rd, rt, c);
}

/* linear (everything posted at once) for short and medium blocks, pairwise for long ones */
static int coll_alltoallw_alg(size_t avg_block)
{
    if (util_cfg.coll_alltoall == 2 || util_cfg.coll_alltoall == 3)
        return util_cfg.coll_alltoall;
    return avg_block >= 32768 ? 2 : 3;
}

/* Bruck's log2 n rounds only beat posting everything at once from this many
 * ranks on (shared memory, 2 cores: linear won at 4, 8 and 16 ranks, Bruck at 32) */
#define COLL_ALLTOALL_BRUCK_MIN_RANKS 32

int coll_alltoall(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt, void *rbuf,
                  MPI_Aint rcount, MPI_Datatype rdt, mpii_comm *c)
{
    if (!c->is_inter && util_cfg.coll_alltoall == 0 && coll_shm_ready(s, c))
        return coll_exchange_shm(s, sbuf, scount, sdt, rbuf, rcount, rdt, 1, c);
    return coll_alltoall_msgs(s, sbuf, scount, sdt, rbuf, rcount, rdt, c);
}

int coll_alltoall_msgs(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt,
                       void *rbuf, MPI_Aint rcount, MPI_Datatype rdt, mpii_comm *c)
{
    size_t block = (size_t)rcount * coll_tsize(rdt);
    int alg = util_cfg.coll_alltoall;
    if (alg == 0)
        alg = block < util_cfg.coll_alltoall_short && c->size >= COLL_ALLTOALL_BRUCK_MIN_RANKS
                  ? 1
                  : coll_alltoallw_alg(block);
    if (alg == 1 && !c->is_inter)
        return coll_alltoall_bruck(s, sbuf, scount, sdt, rbuf, rcount, rdt, c);
    int n = mpii_comm_peer_size(c);
    MPI_Count *sc = coll_counts_equal(s, n, scount), *rc = coll_counts_equal(s, n, rcount);
    return coll_alltoall_as_w(s, sbuf, sc, coll_displs_packed(s, n, sc), sdt, rbuf, rc,
                              coll_displs_packed(s, n, rc), rdt, c, alg == 1 ? 3 : alg);
}

int coll_alltoallv(coll_sched *s, const void *sbuf, const MPI_Count scounts[],
                   const MPI_Aint sdispls[], MPI_Datatype sdt, void *rbuf,
                   const MPI_Count rcounts[], const MPI_Aint rdispls[], MPI_Datatype rdt,
                   mpii_comm *c)
{
    int n = mpii_comm_peer_size(c);
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += (size_t)rcounts[i] * coll_tsize(rdt);
    return coll_alltoall_as_w(s, sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, c,
                              coll_alltoallw_alg(total / (size_t)n));
}

int coll_alltoallw(coll_sched *s, const void *sbuf, const MPI_Count scounts[],
                   const MPI_Aint sdispls[], const MPI_Datatype sdts[], void *rbuf,
                   const MPI_Count rcounts[], const MPI_Aint rdispls[],
                   const MPI_Datatype rdts[], mpii_comm *c)
{
    if (c->is_inter)
        return coll_inter_alltoallw(s, sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls, rdts,
                                    c);
    size_t total = 0;
    for (int i = 0; i < c->size; i++)
        total += (size_t)rcounts[i] * coll_tsize(rdts[i]);
    if (coll_alltoallw_alg(total / (size_t)c->size) == 2)
        return coll_alltoallw_pairwise(s, sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls,
                                       rdts, c);
    return coll_alltoallw_linear(s, sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls, rdts, c);
}

int coll_reduce_scatter(coll_sched *s, const void *sbuf, void *rbuf, const MPI_Count rcounts[],
                        MPI_Datatype dt, MPI_Op op, mpii_comm *c)
{
    if (c->is_inter)
        return coll_inter_reduce_scatter(s, sbuf, rbuf, rcounts, dt, op, c);
    int alg = util_cfg.coll_reduce_scatter;
    if (alg == 0) {
        /* pairwise: n - 1 rounds but each element sent once; reduce + scatterv: 2 log n rounds */
        size_t bytes = 0;
        for (int i = 0; i < c->size; i++)
            bytes += (size_t)rcounts[i] * coll_tsize(dt);
        int pairwise = bytes >= util_cfg.coll_reduce_scatter_long && c->size > 1;
        alg = pairwise && mpii_op_is_commutative(op) ? 2 : 1;
    }
    if (alg == 2 && mpii_op_is_commutative(op))
        return coll_reduce_scatter_pairwise(s, sbuf, rbuf, rcounts, dt, op, c);
    return coll_reduce_scatter_reduce_scatterv(s, sbuf, rbuf, rcounts, dt, op, c);
}

int coll_reduce_scatter_block(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint rcount,
                              MPI_Datatype dt, MPI_Op op, mpii_comm *c)
{
    return coll_reduce_scatter(s, sbuf, rbuf, coll_counts_equal(s, c->size, rcount), dt, op, c);
}

int coll_scan(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count, MPI_Datatype dt,
              MPI_Op op, mpii_comm *c)
{
    if (util_cfg.coll_scan == 2)
        return coll_scan_linear(s, sbuf, rbuf, count, dt, op, 0, c);
    return coll_scan_recursive_doubling(s, sbuf, rbuf, count, dt, op, 0, c);
}

int coll_exscan(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count, MPI_Datatype dt,
                MPI_Op op, mpii_comm *c)
{
    if (util_cfg.coll_scan == 2)
        return coll_scan_linear(s, sbuf, rbuf, count, dt, op, 1, c);
    return coll_scan_recursive_doubling(s, sbuf, rbuf, count, dt, op, 1, c);
}
