/* Where an idle wait sleeps in the kernel (DCFA_SLEEP_US, docs/architecture.md): rank 0
 * holds every other rank in MPI_Recv for 300 ms, three times (a small message, 1 MiB, and
 * an MPI_Irecv + MPI_Wait), then 200 round trips of alternating sizes that must all arrive
 * intact; every value is checked. The MPI_T counter dcfa_sleeps, read before and after the
 * waits, says whether the waiting ranks slept:
 *   - a rank that shares its node with another rank (MPI_COMM_TYPE_SHARED size > 1) must not
 *     have slept: shared memory has no descriptor to wake it, a sleep there could miss a
 *     packet for up to a millisecond each time;
 *   - with --expect-sleep, a waiting rank alone on its node must have slept (its fabric is
 *     sock or gw, the test's launcher says so).
 * Each rank prints the CPU seconds of its 900 ms of waiting with --verbose. Other MPI
 * libraries have no such counter: the checks are skipped there. */
#include "mtest.h"
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static int ours;

static unsigned long long sleeps(void)
{
    if (!ours)
        return 0;
    MPI_T_pvar_session s;
    MPI_T_pvar_session_create(&s);
    unsigned long long v = mtest_pvar_counter(s, "dcfa_sleeps");
    MPI_T_pvar_session_free(&s);
    return v;
}

static double cpu_seconds(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           1e-6 * (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

int main(int argc, char **argv)
{
    int rank, size, expect = 0, verbose = 0;
    if (!mtest_init_pvars(&argc, &argv, 2, &rank, &size))
        return mtest_finalize();
    for (int i = 1; i < argc; i++) {
        expect |= strcmp(argv[i], "--expect-sleep") == 0;
        verbose |= strcmp(argv[i], "--verbose") == 0;
    }
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    ours = strncmp(lib, "DCFA-MPI", 8) == 0;
    MPI_Comm node;
    int node_size;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size);

    const int big = 1 << 20;
    int *buf = mtest_malloc((size_t)big);
    /* connect every pair first, so the waits below wait for data, not for a connection */
    int any = rank;
    MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    unsigned long long s0 = sleeps();
    double c0 = cpu_seconds();
    for (int phase = 0; phase < 3; phase++) {
        int n = phase == 1 ? big / (int)sizeof(int) : 4;
        if (rank == 0) {
            usleep(300000);
            for (int p = 1; p < size; p++) {
                for (int i = 0; i < n; i++)
                    buf[i] = phase * 1000 + p + i;
                MPI_Send(buf, n, MPI_INT, p, phase, MPI_COMM_WORLD);
            }
        } else {
            memset(buf, 0xff, (size_t)n * sizeof(int));
            if (phase == 2) {
                MPI_Request r;
                MPI_Irecv(buf, n, MPI_INT, 0, phase, MPI_COMM_WORLD, &r);
                MPI_Wait(&r, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(buf, n, MPI_INT, MPI_ANY_SOURCE, phase, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
            for (int i = 0; i < n; i++)
                if (buf[i] != phase * 1000 + rank + i) {
                    mtest_fail("phase %d: element %d is %d, not %d", phase, i, buf[i],
                               phase * 1000 + rank + i);
                    break;
                }
        }
    }
    double cpu = cpu_seconds() - c0;
    unsigned long long slept = sleeps() - s0;
    if (verbose && rank != 0)
        printf(
            "idle_sleep rank %d: node shared by %d, %.3f CPU s in 0.9 s of waiting, %llu sleeps\n",
            rank, node_size, cpu, slept);
    if (ours && rank != 0) {
        mtest_check(node_size == 1 || slept == 0,
                    "slept %llu times on descriptors while sharing its node", slept);
        mtest_check(node_size > 1 || !expect || slept > 0,
                    "alone on its node, waited 0.9 s and never slept");
    }
    /* then round trips between rank 0 and each other rank, sizes alternating, all checked */
    for (int it = 0; it < 200; it++) {
        int n = (it % 4 == 3) ? 70000 : 1 + it % 3 * 100;
        for (int p = 1; p < size; p++) {
            if (rank == 0) {
                for (int i = 0; i < n; i++)
                    buf[i] = it + p + i;
                MPI_Send(buf, n, MPI_INT, p, 7, MPI_COMM_WORLD);
                MPI_Recv(buf, n, MPI_INT, p, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                for (int i = 0; i < n; i++)
                    if (buf[i] != it + p + i + 1) {
                        mtest_fail("trip %d from %d: element %d is %d", it, p, i, buf[i]);
                        break;
                    }
            } else if (rank == p) {
                MPI_Recv(buf, n, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                for (int i = 0; i < n; i++)
                    buf[i]++;
                MPI_Send(buf, n, MPI_INT, 0, 8, MPI_COMM_WORLD);
            }
        }
    }
    free(buf);
    MPI_Comm_free(&node);
    return mtest_finalize();
}
