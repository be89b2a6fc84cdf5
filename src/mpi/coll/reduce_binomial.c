/* Binomial-tree reduce. In ranks relative to the tree root (vr), a rank
 * receives the partial results of its children vr + 2^k (all at once, one
 * scratch buffer each), folds them in increasing k, then sends its own partial
 * result to its parent. A child's subtree covers higher ranks than everything
 * folded before it, so with the tree rooted at rank 0 the ranks are combined in
 * order: non-commutative operations are rooted at 0 and the result is then
 * sent to the real root; commutative ones root the tree at the root. */
#include "mpi/coll/algo.h"
#include "mpi/op/op.h"

int coll_reduce_binomial(coll_sched *s, const void *sbuf, void *rbuf, MPI_Aint count,
                         MPI_Datatype dt, MPI_Op op, int root, mpii_comm *c)
{
    int n = c->size, rank = c->rank;
    int troot = mpii_op_is_commutative(op) ? root : 0;
    int vr = (rank - troot + n) % n;
    const void *cur = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    if (count * (MPI_Aint)coll_tsize(dt) == 0)
        return MPI_SUCCESS;
    /* children: vr + mask for every mask below vr's lowest set bit */
    int parent_mask = 0;
    for (int mask = 1; mask < n; mask <<= 1)
        if (vr & mask) {
            parent_mask = mask;
            break;
        }
    int top = parent_mask ? parent_mask : n;
    int nchild = 0;
    void *kids[32];
    for (int mask = 1; mask < top && vr + mask < n; mask <<= 1) {
        kids[nchild] = coll_sched_alloc_typed(s, count, dt);
        coll_sched_recv(s, kids[nchild], count, dt, (vr + mask + troot) % n, NULL);
        nchild++;
    }
    coll_sched_round(s);
    /* fold: kid = cur op kid, then kid is the partial result */
    for (int k = 0; k < nchild; k++) {
        coll_sched_reduce(s, cur, kids[k], count, dt, op);
        cur = kids[k];
    }
    if (parent_mask) {
        coll_sched_send(s, cur, count, dt, (vr - parent_mask + troot) % n, NULL);
    } else if (rank == root) {
        if (cur != rbuf)
            coll_sched_copy(s, cur, count, dt, rbuf, count, dt);
    } else {
        /* tree root 0 of a non-commutative reduction: the result goes to the root */
        coll_sched_send(s, cur, count, dt, root, NULL);
    }
    coll_sched_round(s);
    if (!parent_mask && rank != root)
        return MPI_SUCCESS;
    if (rank == root && troot != root) {
        coll_sched_recv(s, rbuf, count, dt, troot, NULL);
        coll_sched_round(s);
    }
    return MPI_SUCCESS;
}
