/*
 * coll_release: the user frees a user operation and a derived datatype while
 * nonblocking and persistent collectives that use them are still pending
 * (MPI 4.1 2.5.1: freeing marks the object, pending operations complete
 * normally). Rank 0 enters late so the operations are surely in flight; small
 * counts take the node segment, large ones the message algorithms.
 */
#include "mtest.h"

static void usum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    int *a = in, *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] += a[i];
}

int main(int argc, char **argv)
{
    int r, n;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    static const int counts[] = {1, 7, 20000};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        int cnt = counts[k];
        int *a = malloc(sizeof(int) * (size_t)cnt), *b = malloc(sizeof(int) * (size_t)cnt);
        int *v = malloc(sizeof(int) * 2 * (size_t)cnt);
        for (int i = 0; i < cnt; i++) {
            a[i] = r + i;
            b[i] = -1;
            v[2 * i] = r == 0 ? i * 3 : -1;
            v[2 * i + 1] = -7;
        }
        MPI_Op op;
        MPI_Datatype col;
        MPI_Op_create(usum, 1, &op);
        MPI_Type_vector(cnt, 1, 2, MPI_INT, &col);
        MPI_Type_commit(&col);
        MPI_Request q[3];
        MPI_Iallreduce(a, b, cnt, MPI_INT, op, MPI_COMM_WORLD, &q[0]);
        MPI_Ibcast(v, 1, col, 0, MPI_COMM_WORLD, &q[1]);
        int x = r + 1, y = -1;
        MPI_Allreduce_init(&x, &y, 1, MPI_INT, op, MPI_COMM_WORLD, MPI_INFO_NULL, &q[2]);
        mtest_check_rc("MPI_Op_free", MPI_Op_free(&op));
        mtest_check_rc("MPI_Type_free", MPI_Type_free(&col));
        mtest_check(op == MPI_OP_NULL && col == MPI_DATATYPE_NULL, "handles not set to null");
        if (r == 0)
            mtest_sleep_ms(20);
        MPI_Start(&q[2]);
        mtest_check_rc("MPI_Waitall", MPI_Waitall(3, q, MPI_STATUSES_IGNORE));
        for (int i = 0; i < cnt; i++) {
            int want = n * i + n * (n - 1) / 2;
            if (!mtest_check(b[i] == want, "count %d: allreduce [%d] = %d, expected %d", cnt, i,
                             b[i], want))
                break;
        }
        for (int i = 0; i < cnt; i++)
            if (!mtest_check(v[2 * i] == i * 3 && v[2 * i + 1] == -7,
                             "count %d: bcast column [%d] = %d/%d", cnt, i, v[2 * i], v[2 * i + 1]))
                break;
        mtest_check(y == n * (n + 1) / 2, "count %d: persistent allreduce %d, expected %d", cnt, y,
                    n * (n + 1) / 2);
        /* restart after the op was freed: the schedule still holds it */
        x = 1;
        MPI_Start(&q[2]);
        MPI_Wait(&q[2], MPI_STATUS_IGNORE);
        mtest_check(y == n, "restarted persistent allreduce %d, expected %d", y, n);
        MPI_Request_free(&q[2]);
        free(a);
        free(b);
        free(v);
    }
    return mtest_finalize();
}
