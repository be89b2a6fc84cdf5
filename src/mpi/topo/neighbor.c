/* Neighbourhood collectives: every form is an alltoallw over the neighbour
 * lists (see neighbor.h); the others fill its per-neighbour arrays. */
#include "mpi/topo/neighbor.h"
#include "mpi/topo/topo.h"

/* per-neighbour arrays of one side (send or receive), schedule scratch */
typedef struct nbr_side {
    int n;
    MPI_Count *counts;
    MPI_Aint *displs; /* bytes */
    MPI_Datatype *dts;
} nbr_side;

static void nbr_side_alloc(coll_sched *s, nbr_side *x, int n)
{
    x->n = n;
    x->counts = coll_sched_alloc(s, (size_t)n * sizeof *x->counts + 1);
    x->displs = coll_sched_alloc(s, (size_t)n * sizeof *x->displs + 1);
    x->dts = coll_sched_alloc(s, (size_t)n * sizeof *x->dts + 1);
}

/* buf + off on integers (buf may be MPI_BOTTOM with absolute displacements) */
static void *nbr_at(void *buf, MPI_Aint off) { return (void *)((uintptr_t)buf + (uintptr_t)off); }

static MPI_Aint nbr_extent(MPI_Datatype dt) { return (MPI_Aint)mpii_dtype_get(dt)->dt.extent; }

/* n blocks of count elements, one after the other (stride 0: the same block n times) */
static void nbr_side_uniform(coll_sched *s, nbr_side *x, int n, MPI_Aint count, MPI_Datatype dt,
                             int stride)
{
    nbr_side_alloc(s, x, n);
    MPI_Aint step = stride ? count * nbr_extent(dt) : 0;
    for (int i = 0; i < n; i++) {
        x->counts[i] = count;
        x->displs[i] = (MPI_Aint)i * step;
        x->dts[i] = dt;
    }
}

/* v form: displacements in extents of dt */
static void nbr_side_v(coll_sched *s, nbr_side *x, int n, const MPI_Count counts[],
                       const MPI_Aint displs[], MPI_Datatype dt)
{
    nbr_side_alloc(s, x, n);
    MPI_Aint ext = nbr_extent(dt);
    for (int i = 0; i < n; i++) {
        x->counts[i] = counts[i];
        x->displs[i] = displs[i] * ext;
        x->dts[i] = dt;
    }
}

static int nbr_exchange(coll_sched *s, const void *sbuf, const MPI_Count scounts[],
                        const MPI_Aint sdispls[], const MPI_Datatype sdts[], void *rbuf,
                        const MPI_Count rcounts[], const MPI_Aint rdispls[],
                        const MPI_Datatype rdts[])
{
    mpii_comm *c = coll_sched_comm(s);
    int indeg, outdeg;
    const int *in, *out;
    topo_degrees(c, &indeg, &outdeg);
    int *cart_in = coll_sched_alloc(s, (size_t)indeg * sizeof(int) + 1);
    int *cart_out = coll_sched_alloc(s, (size_t)outdeg * sizeof(int) + 1);
    topo_neighbors(c, cart_in, cart_out, &indeg, &in, &outdeg, &out);
    /* on a grid, receive from the +1 neighbour of a dimension first: its first
     * message to me is the one it sends in its -1 direction, which belongs in my
     * +1 block (when both neighbours are one process: dimensions of size 1, 2) */
    int swap = topo_of(c)->kind == MPI_CART;
    for (int k = 0; k < indeg; k++) {
        int i = swap ? k ^ 1 : k;
        int rc = coll_sched_recv(s, nbr_at(rbuf, rdispls[i]), (MPI_Aint)rcounts[i], rdts[i], in[i],
                                 NULL);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    for (int i = 0; i < outdeg; i++) {
        int rc = coll_sched_send(s, mpii_buf_at(sbuf, sdispls[i]), (MPI_Aint)scounts[i], sdts[i],
                                 out[i], NULL);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    coll_sched_round(s);
    return MPI_SUCCESS;
}

int topo_neighbor_alltoallw(coll_sched *s, const void *sbuf, const MPI_Count scounts[],
                            const MPI_Aint sdispls[], const MPI_Datatype sdts[], void *rbuf,
                            const MPI_Count rcounts[], const MPI_Aint rdispls[],
                            const MPI_Datatype rdts[])
{
    return nbr_exchange(s, sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls, rdts);
}

int topo_neighbor_alltoallv(coll_sched *s, const void *sbuf, const MPI_Count scounts[],
                            const MPI_Aint sdispls[], MPI_Datatype sdt, void *rbuf,
                            const MPI_Count rcounts[], const MPI_Aint rdispls[], MPI_Datatype rdt)
{
    int indeg, outdeg;
    nbr_side snd, rcv;
    topo_degrees(coll_sched_comm(s), &indeg, &outdeg);
    nbr_side_v(s, &snd, outdeg, scounts, sdispls, sdt);
    nbr_side_v(s, &rcv, indeg, rcounts, rdispls, rdt);
    return nbr_exchange(s, sbuf, snd.counts, snd.displs, snd.dts, rbuf, rcv.counts, rcv.displs,
                        rcv.dts);
}

int topo_neighbor_alltoall(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt,
                           void *rbuf, MPI_Aint rcount, MPI_Datatype rdt)
{
    int indeg, outdeg;
    nbr_side snd, rcv;
    topo_degrees(coll_sched_comm(s), &indeg, &outdeg);
    nbr_side_uniform(s, &snd, outdeg, scount, sdt, 1);
    nbr_side_uniform(s, &rcv, indeg, rcount, rdt, 1);
    return nbr_exchange(s, sbuf, snd.counts, snd.displs, snd.dts, rbuf, rcv.counts, rcv.displs,
                        rcv.dts);
}

int topo_neighbor_allgatherv(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt,
                             void *rbuf, const MPI_Count rcounts[], const MPI_Aint displs[],
                             MPI_Datatype rdt)
{
    int indeg, outdeg;
    nbr_side snd, rcv;
    topo_degrees(coll_sched_comm(s), &indeg, &outdeg);
    nbr_side_uniform(s, &snd, outdeg, scount, sdt, 0);
    nbr_side_v(s, &rcv, indeg, rcounts, displs, rdt);
    return nbr_exchange(s, sbuf, snd.counts, snd.displs, snd.dts, rbuf, rcv.counts, rcv.displs,
                        rcv.dts);
}

int topo_neighbor_allgather(coll_sched *s, const void *sbuf, MPI_Aint scount, MPI_Datatype sdt,
                            void *rbuf, MPI_Aint rcount, MPI_Datatype rdt)
{
    int indeg, outdeg;
    nbr_side snd, rcv;
    topo_degrees(coll_sched_comm(s), &indeg, &outdeg);
    nbr_side_uniform(s, &snd, outdeg, scount, sdt, 0);
    nbr_side_uniform(s, &rcv, indeg, rcount, rdt, 1);
    return nbr_exchange(s, sbuf, snd.counts, snd.displs, snd.dts, rbuf, rcv.counts, rcv.displs,
                        rcv.dts);
}
