/*
 * rma_atomic: concurrent accumulate-class operations from every rank to the
 * same locations, checked for the standard's atomicity (every element
 * updated as if the operations ran one after the other, none lost):
 *   - MPI_Fetch_and_op(SUM, +1) on one counter: the fetched values are all
 *     different and are exactly 0 .. n*K-1, the counter ends at n*K;
 *   - MPI_Accumulate(SUM) of a vector of M ints from every rank, K times,
 *     into every rank's window: each element ends at the exact sum;
 *   - MPI_Get_accumulate(SUM) on one element: the fetched values plus the
 *     contributions are consistent (each rank's fetched values increase);
 *   - a lock built on MPI_Compare_and_swap protecting a non-atomic
 *     read-modify-write by MPI_Get + MPI_Put: no increment is lost;
 *   - MPI_Accumulate(MAXLOC) of MPI_DOUBLE_INT pairs and MPI_MAX of doubles:
 *     the winner is the largest value with the smallest index.
 * Each on a window of MPI_Win_create (CMA) and of MPI_Win_allocate (shared
 * mapping) -- or everything by messages with DCFA_RMA_MODE=am.
 */
#include "mtest.h"

#define K 200
#define M 64

static int rank, nprocs;

static void counter_fop(MPI_Win w, long *mem)
{
    long one = 1, got;
    long *mine = malloc(K * sizeof(long));
    MPI_Win_lock_all(0, w);
    for (int i = 0; i < K; i++) {
        mtest_check_rc("MPI_Fetch_and_op",
                       MPI_Fetch_and_op(&one, &got, MPI_LONG, 0, 0, MPI_SUM, w));
        MPI_Win_flush(0, w);
        mine[i] = got;
    }
    MPI_Win_unlock_all(w);
    long *all = rank == 0 ? malloc((size_t)nprocs * K * sizeof(long)) : NULL;
    MPI_Gather(mine, K, MPI_LONG, all, K, MPI_LONG, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        char *seen = calloc((size_t)nprocs * K, 1);
        for (int i = 0; i < nprocs * K; i++) {
            long v = all[i];
            if (v < 0 || v >= (long)nprocs * K || seen[v]++)
                mtest_fail("fetch_and_op: value %ld fetched twice or out of range", v);
        }
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w);
        mtest_check_int("fetch_and_op: final counter", mem[0], (long long)nprocs * K);
        MPI_Win_unlock(0, w);
        free(seen);
        free(all);
    }
    free(mine);
}

static void vector_sum(MPI_Win w, int *vec)
{
    int contrib[M];
    for (int j = 0; j < M; j++)
        contrib[j] = (rank + 1) * (j + 1);
    MPI_Win_lock_all(0, w);
    for (int i = 0; i < K / 4; i++)
        for (int t = 0; t < nprocs; t++)
            mtest_check_rc("MPI_Accumulate",
                           MPI_Accumulate(contrib, M, MPI_INT, t, 1, M, MPI_INT, MPI_SUM, w));
    MPI_Win_unlock_all(w);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, w);
    long tri = (long)nprocs * (nprocs + 1) / 2;
    for (int j = 0; j < M; j++) {
        long want = (long)(K / 4) * tri * (j + 1);
        if (vec[1 + j] != want) {
            mtest_fail("accumulate SUM: element %d = %d, expected %ld (updates lost)", j,
                       vec[1 + j], want);
            break;
        }
    }
    MPI_Win_unlock(rank, w);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void gacc_sum(MPI_Win w, int *vec)
{
    int add = rank + 1, prev = -1, got;
    MPI_Win_lock_all(0, w);
    for (int i = 0; i < K / 2; i++) {
        MPI_Get_accumulate(&add, 1, MPI_INT, &got, 1, MPI_INT, 0, M + 1, 1, MPI_INT, MPI_SUM, w);
        MPI_Win_flush(0, w);
        if (got <= prev && i > 0)
            mtest_fail("get_accumulate: fetched %d after %d: not increasing", got, prev);
        prev = got;
    }
    MPI_Win_unlock_all(w);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w);
        long want = (long)(K / 2) * nprocs * (nprocs + 1) / 2;
        mtest_check_int("get_accumulate SUM: final value", vec[M + 1], want);
        MPI_Win_unlock(0, w);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* a spin lock on rank 0's word M+2, a counter at M+3 incremented by get + put */
static void cas_mutex(MPI_Win w, int *vec)
{
    int zero = 0, me = rank + 1, old, v;
    MPI_Win_lock_all(0, w);
    for (int i = 0; i < K / 4; i++) {
        do {
            MPI_Compare_and_swap(&me, &zero, &old, MPI_INT, 0, M + 2, w);
            MPI_Win_flush(0, w);
        } while (old != 0);
        MPI_Get(&v, 1, MPI_INT, 0, M + 3, 1, MPI_INT, w);
        MPI_Win_flush(0, w);
        v++;
        MPI_Put(&v, 1, MPI_INT, 0, M + 3, 1, MPI_INT, w);
        MPI_Win_flush(0, w);
        MPI_Compare_and_swap(&zero, &me, &old, MPI_INT, 0, M + 2, w);
        MPI_Win_flush(0, w);
        if (old != me)
            mtest_fail("compare_and_swap: the lock word held %d while I (%d) owned it", old, me);
    }
    MPI_Win_unlock_all(w);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w);
        mtest_check_int("compare_and_swap mutex: counter", vec[M + 3], (long long)nprocs * (K / 4));
        mtest_check_int("compare_and_swap mutex: lock word", vec[M + 2], 0);
        MPI_Win_unlock(0, w);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

typedef struct {
    double v;
    int i;
} dbl_int;

static void maxloc(void)
{
    MPI_Win w;
    dbl_int *mem;
    MPI_Win_allocate(8 * sizeof(dbl_int), sizeof(dbl_int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &w);
    for (int j = 0; j < 8; j++) {
        mem[j].v = -1e9;
        mem[j].i = -1;
    }
    double *dw;
    MPI_Win w2;
    MPI_Win_allocate(8 * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &dw, &w2);
    for (int j = 0; j < 8; j++)
        dw[j] = -1e9;
    MPI_Barrier(MPI_COMM_WORLD);
    dbl_int mine[8];
    double d[8];
    for (int j = 0; j < 8; j++) {
        /* ranks tie on even j: the smallest index must win */
        mine[j].v = j % 2 ? 1.5 * rank + j : 100.0 + j;
        mine[j].i = rank;
        d[j] = 0.25 * ((rank * 7 + j) % nprocs);
    }
    MPI_Win_lock_all(0, w);
    MPI_Win_lock_all(0, w2);
    for (int t = 0; t < nprocs; t++) {
        mtest_check_rc("MPI_Accumulate MAXLOC", MPI_Accumulate(mine, 8, MPI_DOUBLE_INT, t, 0, 8,
                                                               MPI_DOUBLE_INT, MPI_MAXLOC, w));
        mtest_check_rc("MPI_Accumulate MAX",
                       MPI_Accumulate(d, 8, MPI_DOUBLE, t, 0, 8, MPI_DOUBLE, MPI_MAX, w2));
    }
    MPI_Win_unlock_all(w2);
    MPI_Win_unlock_all(w);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, w);
    for (int j = 0; j < 8; j++) {
        double wantv = j % 2 ? 1.5 * (nprocs - 1) + j : 100.0 + j;
        int wanti = j % 2 ? nprocs - 1 : 0;
        if (mem[j].v != wantv || mem[j].i != wanti)
            mtest_fail("MAXLOC element %d = (%g, %d), expected (%g, %d)", j, mem[j].v, mem[j].i,
                       wantv, wanti);
    }
    MPI_Win_unlock(rank, w);
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, w2);
    for (int j = 0; j < 8; j++) {
        double want = 0;
        for (int r = 0; r < nprocs; r++)
            if (0.25 * ((r * 7 + j) % nprocs) > want)
                want = 0.25 * ((r * 7 + j) % nprocs);
        if (dw[j] != want)
            mtest_fail("MAX double element %d = %g, expected %g", j, dw[j], want);
    }
    MPI_Win_unlock(rank, w2);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&w2);
    MPI_Win_free(&w);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    for (int flavor = 0; flavor < 2; flavor++) {
        MPI_Win w;
        MPI_Aint bytes = (M + 8) * (MPI_Aint)sizeof(long);
        long *mem;
        if (flavor == 0) {
            mem = calloc(M + 8, sizeof(long));
            MPI_Win_create(mem, bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &w);
        } else {
            MPI_Win_allocate(bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &w);
            memset(mem, 0, (size_t)bytes);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        counter_fop(w, mem);
        MPI_Win_free(&w);
        if (flavor == 0)
            free(mem);

        /* an int window for the rest */
        int *vec;
        bytes = (M + 8) * (MPI_Aint)sizeof(int);
        if (flavor == 0) {
            vec = calloc(M + 8, sizeof(int));
            MPI_Win_create(vec, bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w);
        } else {
            MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &vec, &w);
            memset(vec, 0, (size_t)bytes);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        vector_sum(w, vec);
        gacc_sum(w, vec);
        cas_mutex(w, vec);
        MPI_Win_free(&w);
        if (flavor == 0)
            free(vec);
    }
    maxloc();
    return mtest_finalize();
}
