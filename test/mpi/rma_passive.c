/*
 * rma_passive: the passive-target progress guarantee, checked.
 *
 * Rank 0 computes for 1 s without any MPI call (a loop on clock_gettime).
 * Meanwhile every other rank, as origin, does on rank 0's window, ROUNDS
 * (5) times:
 *   lock exclusive / put / unlock, lock shared / get / unlock,
 *   lock / accumulate / unlock, lock / fetch_and_op / unlock,
 *   lock / compare_and_swap / unlock
 * and times each epoch. The claim of the window's info key
 * dcfa_passive_progress is checked:
 *   "direct" or "assist"  each kind of epoch takes under LIMIT_MS (50 ms,
 *                         median of its rounds: one descheduling of an
 *                         overloaded machine does not decide) and all of
 *                         them complete before rank 0 stops computing (the
 *                         clocks of one node are comparable: CLOCK_MONOTONIC);
 *   "target-calls"        no claim: the epochs only have to complete and be
 *                         right once rank 0 calls MPI again.
 * Expected values (PASSIVE_EXPECT=direct|assist|target-calls, from the test
 * list) make sure the mode is the one the configuration promises. Done on a
 * window of MPI_Win_allocate and of MPI_Win_create (PASSIVE_EXPECT_CREATE, if
 * set, is the expectation for the latter). Needs 2+ ranks.
 */
#include "mtest.h"

#include <time.h>

#define LIMIT_MS  50.0
#define COMPUTE_S 1.0
#define ROUNDS    5

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* sorts v */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static volatile double sink;

/* no MPI call in here */
static void compute(double seconds)
{
    double t0 = now(), x = 1.0;
    while (now() - t0 < seconds)
        for (int i = 0; i < 1000; i++)
            x = x * 1.0000001 + 1e-9;
    sink = x;
}

static int rank, nprocs;

static void run(int flavor, const char *expect)
{
    const char *fname = flavor ? "MPI_Win_create" : "MPI_Win_allocate";
    MPI_Win w;
    long *mem, *own = NULL;
    MPI_Aint bytes = 64 * (MPI_Aint)sizeof(long);
    if (flavor) {
        own = calloc(64, sizeof(long));
        mem = own;
        MPI_Win_create(mem, bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &w);
    } else {
        MPI_Win_allocate(bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &w);
        memset(mem, 0, (size_t)bytes);
    }
    MPI_Info info;
    MPI_Win_get_info(w, &info);
    char claim[64] = "";
    int flag = 0;
    MPI_Info_get(info, "dcfa_passive_progress", sizeof claim - 1, claim, &flag);
    MPI_Info_free(&info);
    mtest_check(flag, "%s: no dcfa_passive_progress info key", fname);
    if (expect)
        mtest_check(!strcmp(claim, expect), "%s: dcfa_passive_progress is '%s', expected '%s'",
                    fname, claim, expect);
    int claimed = !strcmp(claim, "direct") || !strcmp(claim, "assist");
    MPI_Barrier(MPI_COMM_WORLD);

    double t_end = 0;
    double times[5][ROUNDS], done_at = 0;
    if (rank == 0) {
        compute(COMPUTE_S);
        t_end = now();
    } else {
        mtest_sleep_ms(50 + 20 * rank); /* rank 0 is computing by now */
        long v = 1000 + rank, got = -1, one = 1, cmp = 0, old = -1;
        for (int k = 0; k < ROUNDS; k++) {
            double t;
            /* 0: lock / put / unlock */
            t = now();
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w);
            MPI_Put(&v, 1, MPI_LONG, 0, rank, 1, MPI_LONG, w);
            MPI_Win_unlock(0, w);
            times[0][k] = now() - t;
            /* 1: get of what I put */
            t = now();
            MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w);
            MPI_Get(&got, 1, MPI_LONG, 0, rank, 1, MPI_LONG, w);
            MPI_Win_unlock(0, w);
            times[1][k] = now() - t;
            mtest_check(got == v, "%s: get during the target's computation read %ld, expected %ld",
                        fname, got, v);
            /* 2: accumulate */
            t = now();
            MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w);
            MPI_Accumulate(&one, 1, MPI_LONG, 0, 32, 1, MPI_LONG, MPI_SUM, w);
            MPI_Win_unlock(0, w);
            times[2][k] = now() - t;
            /* 3: fetch_and_op */
            t = now();
            MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w);
            MPI_Fetch_and_op(&one, &got, MPI_LONG, 0, 33, MPI_SUM, w);
            MPI_Win_unlock(0, w);
            times[3][k] = now() - t;
            /* 4: compare_and_swap: exactly one origin's first try wins */
            t = now();
            MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w);
            MPI_Compare_and_swap(&v, &cmp, &old, MPI_LONG, 0, 34, w);
            MPI_Win_unlock(0, w);
            times[4][k] = now() - t;
        }
        done_at = now();
    }
    MPI_Bcast(&t_end, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    static const char *what[5] = {"lock/put/unlock", "lock/get/unlock", "lock/accumulate/unlock",
                                  "lock/fetch_and_op/unlock", "lock/compare_and_swap/unlock"};
    if (rank != 0 && claimed) {
        mtest_check(
            done_at < t_end,
            "%s (%s): the %d rounds of epochs ended %.1f ms after the target stopped computing",
            fname, claim, ROUNDS, (done_at - t_end) * 1e3);
        for (int k = 0; k < 5; k++) {
            double med = median(times[k], ROUNDS);
            mtest_check(med * 1e3 < LIMIT_MS,
                        "%s (%s): %s took %.1f ms (median of %d) while the target computed "
                        "(limit %.0f ms)",
                        fname, claim, what[k], med * 1e3, ROUNDS, LIMIT_MS);
            if (getenv("PASSIVE_VERBOSE"))
                fprintf(stderr, "[rank %d] %s %s %s: median %.3f ms, max %.3f ms\n", rank, fname,
                        claim, what[k], med * 1e3, times[k][ROUNDS - 1] * 1e3);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w);
        for (int r = 1; r < nprocs; r++)
            mtest_check_int("value put during the computation", mem[r], 1000 + r);
        mtest_check_int("accumulated during the computation", mem[32],
                        (long long)(nprocs - 1) * ROUNDS);
        mtest_check_int("fetch_and_op during the computation", mem[33],
                        (long long)(nprocs - 1) * ROUNDS);
        mtest_check(mem[34] > 1000 && mem[34] < 1000 + nprocs,
                    "compare_and_swap during the computation: %ld", mem[34]);
        MPI_Win_unlock(0, w);
    }
    MPI_Win_free(&w);
    free(own);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    const char *expect = getenv("PASSIVE_EXPECT");
    const char *expect_create = getenv("PASSIVE_EXPECT_CREATE");
    run(0, expect);
    run(1, expect_create ? expect_create : expect);
    return mtest_finalize();
}
