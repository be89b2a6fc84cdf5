/*
 * Several nonblocking collectives outstanding at once, on the same and on
 * different communicators (MPI_COMM_WORLD, a dup of it, an odd/even split),
 * completed in another order than started (reversed MPI_Wait, MPI_Waitany),
 * interleaved with point-to-point on the same communicators using tags 0..3
 * and MPI_ANY_TAG receives that would catch a collective's internal message
 * if it leaked into the point-to-point context.  Repeated a few rounds.
 */
#include "mtest.h"

#define N      64
#define ROUNDS 4

static int val(int r, int k, int round) { return r * 10007 + k * 31 + round * 7; }

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Comm dup, half;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
    int hrank, hsize;
    MPI_Comm_rank(half, &hrank);
    MPI_Comm_size(half, &hsize);

    int *bc = mtest_malloc(sizeof(int) * N), *ar_s = mtest_malloc(sizeof(int) * N);
    int *ar_r = mtest_malloc(sizeof(int) * N), *ag = mtest_malloc(sizeof(int) * N * size);
    int *hb = mtest_malloc(sizeof(int) * N), *hr = mtest_malloc(sizeof(int) * N);
    int *a2s = mtest_malloc(sizeof(int) * size), *a2r = mtest_malloc(sizeof(int) * size);
    int p2s[4], p2r[4];

    for (int round = 0; round < ROUNDS; round++) {
        MPI_Request req[12];
        int nr = 0, right = (rank + 1) % size, left = (rank + size - 1) % size;
        int root = round % size, hroot = (round + 1) % hsize;

        for (int k = 0; k < N; k++) {
            bc[k] = rank == root ? val(root, k, round) : -1;
            ar_s[k] = val(rank, k, round);
            hb[k] = hrank == hroot ? val(hroot, k, round) + 1 : -1;
        }
        for (int k = 0; k < N * size; k++)
            ag[k] = -1;
        for (int j = 0; j < size; j++)
            a2s[j] = val(rank, j, round);
        /* point-to-point receives posted first, with tags the collectives might use */
        MPI_Irecv(&p2r[0], 1, MPI_INT, left, 0, MPI_COMM_WORLD, &req[nr++]);
        MPI_Irecv(&p2r[1], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &req[nr++]);
        MPI_Ibcast(bc, N, MPI_INT, root, MPI_COMM_WORLD, &req[nr++]);                 /* 2 */
        MPI_Iallreduce(ar_s, ar_r, N, MPI_INT, MPI_SUM, dup, &req[nr++]);             /* 3 */
        MPI_Ibcast(hb, N, MPI_INT, hroot, half, &req[nr++]);                          /* 4 */
        MPI_Iallgather(ar_s, N, MPI_INT, ag, N, MPI_INT, MPI_COMM_WORLD, &req[nr++]); /* 5 */
        MPI_Ialltoall(a2s, 1, MPI_INT, a2r, 1, MPI_INT, dup, &req[nr++]);             /* 6 */
        MPI_Iallreduce(MPI_IN_PLACE, hr, 0, MPI_INT, MPI_MAX, half, &req[nr++]);      /* 7 */
        MPI_Ibarrier(MPI_COMM_WORLD, &req[nr++]);                                     /* 8 */
        p2s[0] = val(rank, 1000, round);
        p2s[1] = val(rank, 2000, round);
        MPI_Isend(&p2s[0], 1, MPI_INT, right, 0, MPI_COMM_WORLD, &req[nr++]);
        MPI_Isend(&p2s[1], 1, MPI_INT, right, round % 4, dup, &req[nr++]);
        if (round % 2 == 0) {
            for (int i = nr - 1; i >= 0; i--)
                mtest_check_rc("MPI_Wait", MPI_Wait(&req[i], MPI_STATUS_IGNORE));
        } else {
            for (int i = 0; i < nr; i++) {
                int idx;
                mtest_check_rc("MPI_Waitany", MPI_Waitany(nr, req, &idx, MPI_STATUS_IGNORE));
            }
        }
        for (int k = 0; k < N; k++) {
            int want = 0;
            for (int q = 0; q < size; q++)
                want += val(q, k, round);
            if (bc[k] != val(root, k, round))
                mtest_fail("ibcast world round %d root %d index %d: expected %d got %d", round,
                           root, k, val(root, k, round), bc[k]);
            if (ar_r[k] != want)
                mtest_fail("iallreduce dup round %d index %d: expected %d got %d", round, k, want,
                           ar_r[k]);
            if (hb[k] != val(hroot, k, round) + 1)
                mtest_fail("ibcast half round %d root %d index %d: expected %d got %d", round,
                           hroot, k, val(hroot, k, round) + 1, hb[k]);
        }
        for (int q = 0; q < size; q++) {
            for (int k = 0; k < N; k++)
                if (ag[q * N + k] != val(q, k, round)) {
                    mtest_fail("iallgather world round %d block %d index %d: expected %d got %d",
                               round, q, k, val(q, k, round), ag[q * N + k]);
                    break;
                }
            if (a2r[q] != val(q, rank, round))
                mtest_fail("ialltoall dup round %d from %d: expected %d got %d", round, q,
                           val(q, rank, round), a2r[q]);
        }
        if (p2r[0] != val(left, 1000, round))
            mtest_fail("irecv world round %d: expected %d got %d", round, val(left, 1000, round),
                       p2r[0]);
        if (p2r[1] != val(left, 2000, round))
            mtest_fail("irecv dup ANY_TAG round %d: expected %d got %d", round,
                       val(left, 2000, round), p2r[1]);
    }
    free(bc);
    free(ar_s);
    free(ar_r);
    free(ag);
    free(hb);
    free(hr);
    free(a2s);
    free(a2r);
    MPI_Comm_free(&half);
    MPI_Comm_free(&dup);
    return mtest_finalize();
}
