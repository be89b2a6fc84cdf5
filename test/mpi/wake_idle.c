/* Packets to connections that went quiet must still be found (docs/fabric.md, "Waking
 * connections": progress polls only connections the fabric woke). Every rank first
 * exchanges a message with every other one, so that all connections exist; then, round
 * after round, a pair (sender, receiver) drawn from a generator all ranks share: the
 * sender waits a little (its connection to the receiver idles), then sends one message,
 * now and then a burst (enough packets for a lane, DCFA_OFI_LANE_AFTER), of sizes from 1
 * byte to past the eager limit. The receiver waits for it with a deadline: a message not
 * found in WAKE_IDLE_DEADLINE seconds (default 20) is reported as missed, and the job
 * ends. Meant for 4-8 ranks; rounds from WAKE_IDLE_ROUNDS (default 300). */
#include "mtest.h"

#include <time.h>
#include <unistd.h>

#define BURST 80
#define BIG   100000

static unsigned long long lcg = 88172645463325252ull;

static unsigned next(void)
{
    lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)(lcg >> 33);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int len_of(unsigned pick)
{
    static const int lens[] = {1, 8, 60, 200, 1000, 4000, 20000, BIG};
    return lens[pick % 8];
}

/* receives one message of round r from src (MPI_ANY_SOURCE on odd picks), with a deadline */
static void recv_one(unsigned char *buf, int src, int r, int len, int any, double deadline)
{
    MPI_Request req;
    MPI_Status st;
    int done = 0, count;
    MPI_Irecv(buf, BIG, MPI_BYTE, any ? MPI_ANY_SOURCE : src, r, MPI_COMM_WORLD, &req);
    double end = now() + deadline;
    while (!done) {
        MPI_Test(&req, &done, &st);
        if (!done && now() > end) {
            int me;
            MPI_Comm_rank(MPI_COMM_WORLD, &me);
            fprintf(stderr,
                    "wake_idle: rank %d: round %d: the %d-byte message from rank %d was not "
                    "found in %.0f s (a packet to an idle connection was missed)\n",
                    me, r, len, src, deadline);
            fflush(stderr);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    MPI_Get_count(&st, MPI_BYTE, &count);
    mtest_check_int("source", st.MPI_SOURCE, src);
    mtest_check_int("count", count, len);
    mtest_verify("wake_idle data", buf, (size_t)count, src, r);
}

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *e = getenv("WAKE_IDLE_ROUNDS");
    int rounds = e ? atoi(e) : 300;
    e = getenv("WAKE_IDLE_DEADLINE");
    double deadline = e ? atof(e) : 20.0;
    unsigned char *sbuf = mtest_malloc(BIG), *rbuf = mtest_malloc(BIG);

    /* every connection made */
    int *in = calloc((size_t)size, sizeof(int)), *out = calloc((size_t)size, sizeof(int));
    MPI_Request *reqs = calloc(2 * (size_t)size, sizeof(MPI_Request));
    for (int p = 0; p < size; p++) {
        out[p] = rank;
        MPI_Irecv(&in[p], 1, MPI_INT, p, 1000000, MPI_COMM_WORLD, &reqs[2 * p]);
        MPI_Isend(&out[p], 1, MPI_INT, p, 1000000, MPI_COMM_WORLD, &reqs[2 * p + 1]);
    }
    MPI_Waitall(2 * size, reqs, MPI_STATUSES_IGNORE);
    for (int p = 0; p < size; p++)
        mtest_check_int("first exchange", in[p], p);

    for (int r = 0; r < rounds && size > 1; r++) {
        int s = (int)(next() % (unsigned)size);
        int d = (int)((unsigned)s + 1 + next() % (unsigned)(size - 1)) % size;
        unsigned pick = next();
        int burst = pick % 16 == 0 ? BURST : 1;
        int any = (pick >> 4) & 1;
        unsigned idle_us = (pick >> 5) % 3000;
        int len = len_of(pick >> 8);
        if (burst > 1)
            len = len_of(pick >> 8) % 1001 + 1; /* a lane takes small packets */
        if (rank == s) {
            usleep(idle_us);
            for (int b = 0; b < burst; b++) {
                mtest_fill(sbuf, (size_t)len, s, r * BURST + b);
                MPI_Send(sbuf, len, MPI_BYTE, d, r * BURST + b, MPI_COMM_WORLD);
            }
        } else if (rank == d) {
            for (int b = 0; b < burst; b++)
                recv_one(rbuf, s, r * BURST + b, len, any, deadline);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(in);
    free(out);
    free(reqs);
    free(sbuf);
    free(rbuf);
    return mtest_finalize();
}
