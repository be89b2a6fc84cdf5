/* MPI_Reduce (every root) and MPI_Allreduce with MPI_SUM, MAX, MIN, PROD on
 * int and double vectors, plus MPI_IN_PLACE. Values are chosen so that the
 * results are exact. */
#include "mtest.h"

#define N 1000

static long long expect_int(MPI_Op op, int size, int i)
{
    long long r = 0;
    int k;
    for (k = 0; k < size; k++) {
        long long v = (op == MPI_PROD) ? 1 + (k + i) % 2 : (k * 7 + i) % 101 - 50;
        if (k == 0)
            r = v;
        else if (op == MPI_SUM)
            r += v;
        else if (op == MPI_MAX)
            r = v > r ? v : r;
        else if (op == MPI_MIN)
            r = v < r ? v : r;
        else
            r *= v;
    }
    return r;
}

int main(int argc, char **argv)
{
    static const MPI_Op ops[4] = {MPI_SUM, MPI_MAX, MPI_MIN, MPI_PROD};
    static const char *names[4] = {"SUM", "MAX", "MIN", "PROD"};
    int rank, size, o, i, root;
    int *ia, *ir;
    double *da, *dr;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ia = mtest_malloc(sizeof(int) * N);
    ir = mtest_malloc(sizeof(int) * N);
    da = mtest_malloc(sizeof(double) * N);
    dr = mtest_malloc(sizeof(double) * N);

    for (o = 0; o < 4; o++) {
        for (i = 0; i < N; i++) {
            ia[i] = (ops[o] == MPI_PROD) ? 1 + (rank + i) % 2 : (rank * 7 + i) % 101 - 50;
            da[i] = ia[i] * 0.5;
        }
        /* Allreduce. */
        MPI_Allreduce(ia, ir, N, MPI_INT, ops[o], MPI_COMM_WORLD);
        MPI_Allreduce(da, dr, N, MPI_DOUBLE, ops[o], MPI_COMM_WORLD);
        for (i = 0; i < N; i++) {
            long long e = expect_int(ops[o], size, i);
            double de = (double)e * 0.5;
            if (ops[o] == MPI_PROD) {
                int k;
                de = 1.0;
                for (k = 0; k < size; k++)
                    de *= (1 + (k + i) % 2) * 0.5;
            }
            if (!mtest_check(ir[i] == e, "Allreduce int %s [%d]: %d, expected %lld", names[o], i,
                             ir[i], e))
                break;
            if (!mtest_check(dr[i] == de, "Allreduce double %s [%d]: %g, expected %g", names[o],
                             i, dr[i], de))
                break;
        }
        /* Reduce to every root. */
        for (root = 0; root < size; root++) {
            for (i = 0; i < N; i++)
                ir[i] = -777;
            MPI_Reduce(ia, ir, N, MPI_INT, ops[o], root, MPI_COMM_WORLD);
            if (rank == root) {
                for (i = 0; i < N; i++)
                    if (!mtest_check(ir[i] == expect_int(ops[o], size, i),
                                     "Reduce %s root %d [%d]: %d", names[o], root, i, ir[i]))
                        break;
            }
        }
        /* In place. */
        memcpy(ir, ia, sizeof(int) * N);
        MPI_Allreduce(MPI_IN_PLACE, ir, N, MPI_INT, ops[o], MPI_COMM_WORLD);
        for (i = 0; i < N; i++)
            if (!mtest_check(ir[i] == expect_int(ops[o], size, i), "in-place Allreduce %s [%d]",
                             names[o], i))
                break;
        memcpy(ir, ia, sizeof(int) * N);
        if (rank == 0)
            MPI_Reduce(MPI_IN_PLACE, ir, N, MPI_INT, ops[o], 0, MPI_COMM_WORLD);
        else
            MPI_Reduce(ir, NULL, N, MPI_INT, ops[o], 0, MPI_COMM_WORLD);
        if (rank == 0)
            for (i = 0; i < N; i++)
                if (!mtest_check(ir[i] == expect_int(ops[o], size, i), "in-place Reduce %s [%d]",
                                 names[o], i))
                    break;
    }
    free(ia);
    free(ir);
    free(da);
    free(dr);
    return mtest_finalize();
}
