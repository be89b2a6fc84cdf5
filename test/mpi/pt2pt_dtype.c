/* Point-to-point with simple derived datatypes (needs datatypes):
 * MPI_Type_contiguous and MPI_Type_vector, for eager and large counts;
 * a vector received as plain ints; Get_count/Get_elements on a partial
 * derived-type receive. Ring neighbours. */
#include "mtest.h"

int main(int argc, char **argv)
{
    static const int nvec[] = {4, 100000};
    int rank, size, right, left, s, i, count, elems;
    int *src, *dst;
    MPI_Datatype contig, vec;
    MPI_Status st;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    src = mtest_malloc(sizeof(int) * 3 * 100000);
    dst = mtest_malloc(sizeof(int) * 3 * 100000);

    MPI_Type_contiguous(3, MPI_INT, &contig);
    MPI_Type_commit(&contig);
    for (s = 0; s < 2; s++) {
        int n = nvec[s];                     /* blocks of 2 ints, stride 3 */
        MPI_Type_vector(n, 2, 3, MPI_INT, &vec);
        MPI_Type_commit(&vec);
        for (i = 0; i < 3 * n; i++) {
            src[i] = rank * 1000000 + i;
            dst[i] = -1;
        }
        /* Contiguous: n elements of 3 ints. */
        MPI_Sendrecv(src, n, contig, right, 1, dst, n, contig, left, 1, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, contig, &count);
        mtest_check_int("contig count", count, n);
        for (i = 0; i < 3 * n; i++)
            if (!mtest_check(dst[i] == left * 1000000 + i, "contig: int %d is %d", i, dst[i]))
                break;

        /* Vector to vector: the gaps must stay untouched. */
        for (i = 0; i < 3 * n; i++)
            dst[i] = -1;
        MPI_Sendrecv(src, 1, vec, right, 2, dst, 1, vec, left, 2, MPI_COMM_WORLD, &st);
        MPI_Get_elements(&st, MPI_INT, &elems);
        mtest_check_int("vector elements", elems, 2 * n);
        for (i = 0; i < 3 * n; i++) {
            int want = (i % 3 == 2) ? -1 : left * 1000000 + i;
            if (!mtest_check(dst[i] == want, "vector: int %d is %d, expected %d", i, dst[i], want))
                break;
        }

        /* Vector sent, received as 2n contiguous ints. */
        MPI_Sendrecv(src, 1, vec, right, 3, dst, 2 * n, MPI_INT, left, 3, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_INT, &count);
        mtest_check_int("vector as ints count", count, 2 * n);
        for (i = 0; i < 2 * n; i++) {
            int want = left * 1000000 + (i / 2) * 3 + i % 2;
            if (!mtest_check(dst[i] == want, "vector as ints: int %d is %d, expected %d", i,
                             dst[i], want))
                break;
        }
        MPI_Type_free(&vec);
    }

    /* 7 ints received with a 3-int type: count undefined, 7 elements. */
    MPI_Sendrecv(src, 7, MPI_INT, right, 4, dst, 3, contig, left, 4, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, contig, &count);
    mtest_check_int("partial contig Get_count", count, MPI_UNDEFINED);
    MPI_Get_elements(&st, contig, &elems);
    mtest_check_int("partial contig Get_elements", elems, 7);
    MPI_Type_free(&contig);
    free(src);
    free(dst);
    return mtest_finalize();
}
