/*
 * ofi_late: libfabric stays off MPI_Init's path (docs/fabric.md, "Opening ofi
 * late"), and the first messages across hosts work under MPI_THREAD_MULTIPLE.
 *
 * Every rank checks /proc/self/maps right after MPI_Init_thread: libfabric
 * must not be mapped there, whatever the job's hosts (on one host it is never
 * loaded; across hosts it is opened by a thread of its own, which the
 * multi-host stage holds back with DCFA_OFI_LATE_DELAY so that the check does
 * not race it). Then OFI_LATE_THREADS threads (default 4) of every rank
 * exchange first messages with every other rank at once, each with its own
 * tag, eager and rendezvous sizes: the first contact with a rank on another
 * host waits for the fabric while other threads queue behind it. Afterwards
 * libfabric is mapped if and only if the job spans hosts (OFI_LATE_SPANS=1
 * says it does, else it must never be mapped; across hosts it is waited for,
 * since first contacts no longer wait for it).
 *
 * OFI_LATE_FIRST_MS=T (4 ranks, 2 per host: -ppn 2; docs/fabric.md "First
 * contact over sock"): before the threads, rank r exchanges 8 bytes with
 * rank (r+2)%4 on the other host, which must take under T ms after MPI_Init
 * (the stage holds ofi back 2 s: without sock first contacts it takes longer);
 * then every rank waits until libfabric is mapped and OFI_LATE_SETTLE_MS
 * (3000) more, and exchanges with rank 3-r on the other host (ofi is open at
 * both ends by then). The stage checks the fabrics in DCFA_STATS's dcfa-conn
 * lines: sock for the first pairs, ofi for the later ones.
 */
#include "mtest.h"

#include <pthread.h>
#include <unistd.h>

#define MAXT 16

static int rank, size, nthreads = 4;
static int spans;
static int ofi_late_seq[2] = {0, 1};

static int libfabric_mapped(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int found = 0;
    if (!f)
        return -1;
    while (!found && fgets(line, sizeof line, f))
        found = strstr(line, "libfabric") != NULL;
    fclose(f);
    return found;
}

static void *exchange(void *arg)
{
    int t = (int)(long)arg;
    /* an eager message and one above every eager limit (ofi: 64 KiB) */
    static const int counts[2] = {16, 40000};
    for (int k = 0; k < 2; k++) {
        int n = counts[k];
        int *out = malloc((size_t)n * sizeof *out), *in = malloc((size_t)n * sizeof *in);
        for (int p = 0; p < size; p++) {
            if (p == rank)
                continue;
            for (int i = 0; i < n; i++)
                out[i] = rank * 1000003 + t * 101 + i;
            MPI_Sendrecv(out, n, MPI_INT, p, t * 2 + k, in, n, MPI_INT, p, t * 2 + k,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (int i = 0; i < n; i++)
                if (in[i] != p * 1000003 + t * 101 + i) {
                    mtest_fail("thread %d: from rank %d, %d ints, element %d is %d", t, p, n, i,
                               in[i]);
                    break;
                }
        }
        free(out);
        free(in);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int at_init = libfabric_mapped();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    mtest_wrank = rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *s = getenv("OFI_LATE_THREADS");
    if (s && atoi(s) > 0)
        nthreads = atoi(s) < MAXT ? atoi(s) : MAXT;
    s = getenv("OFI_LATE_SPANS");
    spans = s && atoi(s) == 1;
    if (at_init != 0)
        mtest_fail("libfabric is %s when MPI_Init_thread returns",
                   at_init < 0 ? "unknown (no /proc/self/maps)" : "mapped");
    if (provided != MPI_THREAD_MULTIPLE)
        nthreads = 1;
    s = getenv("OFI_LATE_FIRST_MS");
    if (s && atoi(s) > 0 && size == 4) {
        double bound = atoi(s) / 1e3;
        const char *w = getenv("OFI_LATE_SETTLE_MS");
        int settle = w && atoi(w) > 0 ? atoi(w) : 3000;
        char b[16] = {0};
        double t0 = MPI_Wtime();
        int p = (rank + 2) % 4;
        MPI_Sendrecv(b, 8, MPI_CHAR, p, 99, b + 8, 8, MPI_CHAR, p, 99, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        double first = MPI_Wtime() - t0;
        if (first > bound)
            mtest_fail("the first message to rank %d on the other host took %.0f ms after "
                       "MPI_Init, over the %.0f ms bound (it waited for ofi?)",
                       p, first * 1e3, bound * 1e3);
        /* ofi opens in its thread: wait for it, keeping progress going, then for the peers' */
        double until = MPI_Wtime() + 60;
        int flag;
        while (libfabric_mapped() != 1 && MPI_Wtime() < until) {
            MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            usleep(10000);
        }
        until = MPI_Wtime() + settle / 1e3;
        while (MPI_Wtime() < until) {
            MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            usleep(10000);
        }
        p = 3 - rank;
        MPI_Sendrecv(b, 8, MPI_CHAR, p, 98, b + 8, 8, MPI_CHAR, p, 98, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        if (rank == 0)
            printf("first message across hosts %.1f ms after MPI_Init\n", first * 1e3);
    }
    pthread_t th[MAXT];
    for (int t = 0; t < nthreads; t++)
        pthread_create(&th[t], NULL, exchange, (void *)(long)t);
    for (int t = 0; t < nthreads; t++)
        pthread_join(th[t], NULL);
    /* MPI_ANY_SOURCE over every connection (sock and ofi ones in the OFI_LATE_FIRST_MS run):
     * 2 messages from each peer, each peer's in order */
    {
        enum { PER = 2 };
        int next[64] = {0}, v;
        MPI_Request rq[64 * PER];
        int nrq = 0;
        for (int p = 0; p < size && p < 64; p++)
            for (int i = 0; p != rank && i < PER; i++) {
                MPI_Isend(&ofi_late_seq[i], 1, MPI_INT, p, 200, MPI_COMM_WORLD, &rq[nrq++]);
            }
        for (int k = 0; k < (size - 1) * PER; k++) {
            MPI_Status st;
            MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 200, MPI_COMM_WORLD, &st);
            int want = st.MPI_SOURCE >= 0 && st.MPI_SOURCE < 64 ? next[st.MPI_SOURCE]++ : -1;
            if (v != want)
                mtest_fail("MPI_ANY_SOURCE: from rank %d message %d, expected %d", st.MPI_SOURCE, v,
                           want);
        }
        MPI_Waitall(nrq, rq, MPI_STATUSES_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int after = libfabric_mapped();
    /* the first contacts went over sock (or all stayed on the host): ofi may still open */
    for (double until = MPI_Wtime() + 60; spans && after == 0 && MPI_Wtime() < until;
         after = libfabric_mapped())
        usleep(10000);
    if (after != spans)
        mtest_fail("libfabric %s mapped after the first messages of a job %s hosts",
                   after ? "is" : "is not", spans ? "across" : "on one of its");
    return mtest_finalize();
}
