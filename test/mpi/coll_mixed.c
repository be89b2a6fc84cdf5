/*
 * coll_mixed: a long random sequence of barrier, bcast, allreduce and reduce
 * (every root, counts from 0 to 9000 ints: both sides of DCFA_COLL_SHM_SLOT)
 * on one communicator, then nonblocking ones outstanding together. It checks
 * the node segment's alternating sets and flags (an operation must never
 * read a set the next-but-one operation is writing) and the switch between
 * the segment and the message algorithms; the same seed on every rank keeps
 * the sequence collective.
 */
#include "mtest.h"

#define NITER 2000
#define MAXCNT 9000

int main(int argc, char **argv)
{
    int r, n;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int *a = malloc(MAXCNT * sizeof(int)), *b = malloc(MAXCNT * sizeof(int));
    unsigned seed = 7;
    for (int it = 0; it < NITER && mtest_errs == 0; it++) {
        int kind = rand_r(&seed) % 4, big = rand_r(&seed) % 3 == 0;
        int cnt = big ? rand_r(&seed) % MAXCNT : rand_r(&seed) % 20, root = rand_r(&seed) % n;
        for (int i = 0; i < cnt; i++) {
            a[i] = r * 7 + i + it;
            b[i] = -1;
        }
        int sum0 = 7 * n * (n - 1) / 2;
        if (kind == 0) {
            MPI_Barrier(MPI_COMM_WORLD);
        } else if (kind == 1) {
            if (r == root)
                for (int i = 0; i < cnt; i++)
                    b[i] = it + i;
            MPI_Bcast(b, cnt, MPI_INT, root, MPI_COMM_WORLD);
            for (int i = 0; i < cnt; i++)
                if (!mtest_check(b[i] == it + i, "iteration %d bcast root %d count %d: [%d] = %d",
                                 it, root, cnt, i, b[i]))
                    break;
        } else if (kind == 2) {
            MPI_Allreduce(a, b, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            for (int i = 0; i < cnt; i++)
                if (!mtest_check(b[i] == sum0 + n * (i + it),
                                 "iteration %d allreduce count %d: [%d] = %d, expected %d", it, cnt,
                                 i, b[i], sum0 + n * (i + it)))
                    break;
        } else {
            MPI_Reduce(a, b, cnt, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
            for (int i = 0; r == root && i < cnt; i++)
                if (!mtest_check(b[i] == sum0 + n * (i + it),
                                 "iteration %d reduce root %d count %d: [%d] = %d, expected %d", it,
                                 root, cnt, i, b[i], sum0 + n * (i + it)))
                    break;
        }
    }
    /* nonblocking ones in flight together, completed at once */
    MPI_Request q[4];
    int x = r, y[3] = {-1, -1, -1};
    MPI_Iallreduce(&x, &y[0], 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &q[0]);
    MPI_Iallreduce(&x, &y[1], 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &q[1]);
    MPI_Ibarrier(MPI_COMM_WORLD, &q[2]);
    if (r == 0)
        y[2] = 4711;
    MPI_Ibcast(&y[2], 1, MPI_INT, 0, MPI_COMM_WORLD, &q[3]);
    MPI_Waitall(4, q, MPI_STATUSES_IGNORE);
    mtest_check(y[0] == n - 1 && y[1] == 0 && y[2] == 4711, "nonblocking: max %d min %d bcast %d",
                y[0], y[1], y[2]);
    free(a);
    free(b);
    return mtest_finalize();
}
