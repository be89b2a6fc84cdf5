/* Scatter + allgather broadcast (van de Geijn), for long messages. The
 * message's m bytes are cut into n pieces as evenly as possible (the first
 * m % n pieces one byte longer; pieces may be empty), piece j belonging to the
 * rank j places after the root (relative rank j). A binomial scatter hands
 * every relative rank vr the pieces of its subtree [vr, vr + 2^k), where 2^k
 * is vr's lowest set bit; those pieces are adjacent in the message, so each
 * tree edge carries one contiguous range. A ring allgather then passes the
 * pieces round in n - 1 steps. Cost: ceil(log2 n) + n - 1 steps and about
 * 2 m (n - 1) / n bytes sent by the root and received by every other rank,
 * against m ceil(log2 n) for the binomial tree.
 *
 * The algorithm works on bytes. A contiguous datatype is used in place; a
 * non-contiguous one is packed into a contiguous scratch at the root and
 * unpacked from it at the other ranks at the end (one extra copy of m bytes,
 * small next to the traffic this algorithm is chosen for). Empty pieces send
 * no message (both sides know the sizes). */
#include "mpi/coll/algo.h"

int coll_bcast_scatter_allgather(coll_sched *s, void *buf, MPI_Aint count, MPI_Datatype dt,
                                 int root, mpii_comm *c)
{
    int n = c->size, rank = c->rank, vr = (rank - root + n) % n;
    const core_dt *t = &mpii_dtype_get(dt)->dt;
    MPI_Aint m = count * (MPI_Aint)t->size;
    if (n == 1 || m == 0)
        return MPI_SUCCESS;
    char *bytes;
    if (t->contig) {
        bytes = coll_byte_at(buf, t->true_lb);
    } else {
        bytes = coll_sched_alloc(s, (size_t)m);
        if (rank == root)
            coll_sched_copy(s, buf, count, dt, bytes, m, MPI_BYTE);
    }
    /* off[j] .. off[j + 1]: the bytes of piece j */
    MPI_Aint *off = coll_sched_alloc(s, (size_t)(n + 1) * sizeof *off);
    MPI_Aint base = m / n, extra = m % n;
    off[0] = 0;
    for (int j = 0; j < n; j++)
        off[j + 1] = off[j] + base + (j < extra ? 1 : 0);

    /* binomial scatter: receive the subtree's pieces, then pass on the children's */
    int mask = 1;
    for (; mask < n; mask <<= 1) {
        if (vr & mask) {
            int hi = vr + mask < n ? vr + mask : n;
            MPI_Aint len = off[hi] - off[vr];
            if (len > 0)
                coll_sched_recv(s, bytes + off[vr], len, MPI_BYTE, (vr - mask + root) % n, NULL);
            coll_sched_round(s);
            break;
        }
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        int child = vr + mask;
        if (child >= n)
            continue;
        int hi = child + mask < n ? child + mask : n;
        MPI_Aint len = off[hi] - off[child];
        if (len > 0)
            coll_sched_send(s, bytes + off[child], len, MPI_BYTE, (child + root) % n, NULL);
    }
    coll_sched_round(s);

    /* ring allgather of the pieces, in relative ranks */
    int right = (rank + 1) % n, left = (rank - 1 + n) % n;
    for (int k = 0; k < n - 1; k++) {
        int sp = (vr - k + n) % n, rp = (vr - k - 1 + n) % n;
        if (off[rp + 1] > off[rp])
            coll_sched_recv(s, bytes + off[rp], off[rp + 1] - off[rp], MPI_BYTE, left, NULL);
        if (off[sp + 1] > off[sp])
            coll_sched_send(s, bytes + off[sp], off[sp + 1] - off[sp], MPI_BYTE, right, NULL);
        coll_sched_round(s);
    }
    if (!t->contig && rank != root)
        coll_sched_copy(s, bytes, m, MPI_BYTE, buf, count, dt);
    coll_sched_round(s);
    return MPI_SUCCESS;
}
