/* MPI_THREAD_MULTIPLE stress: NTHREADS threads per rank, all at once,
 *  - send to every rank (itself included) messages of sizes from 0 B to
 *    past the rendezvous threshold, standard and synchronous mode, on a
 *    communicator of their own (thread t of every rank uses comms[t]);
 *  - receive them with wildcards (MPI_ANY_SOURCE, MPI_ANY_TAG) by a random
 *    one of: MPI_Mprobe + MPI_Mrecv, MPI_Improbe + MPI_Imrecv, MPI_Probe +
 *    MPI_Recv of the probed envelope, MPI_Irecv of the largest size;
 *  - exchange a message on MPI_COMM_WORLD with a neighbour, by tag (so the
 *    threads share its unexpected queue);
 *  - build a communicator each iteration (MPI_Comm_dup, MPI_Comm_idup left
 *    pending across the traffic, MPI_Comm_split, MPI_Comm_create_group on
 *    MPI_COMM_WORLD with the thread's tag), check an allreduce on it, free it.
 * Checked: every byte (pattern of source and tag), every size (a function
 * of source and tag, so a message delivered to the wrong receive shows),
 * per-source order (tags from one source arrive increasing: non-overtaking),
 * every allreduce. THR_STRESS_ITERS sets the iterations (default 12). */
#include "mtest.h"

#include <pthread.h>

#define NTHREADS 4
#define PERPEER  3          /* messages per peer and iteration */
#define MAXBYTES (160 * 1024)

static int rank, nprocs, iters = 12;
static MPI_Comm comms[NTHREADS];
static int thread_errs[NTHREADS];

#define TFAIL(t, ...)                                                                              \
    do {                                                                                           \
        if (thread_errs[t]++ < 10) {                                                               \
            fprintf(stderr, "[rank %d thread %d] ", rank, t);                                      \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

static size_t msg_bytes(int src, int tag)
{
    static const size_t sz[] = {0, 1, 64, 3000, 9000, 17000, 40000, MAXBYTES};
    return sz[(unsigned)(src * 7 + tag * 13) % (sizeof sz / sizeof *sz)];
}

static int verify(int t, const char *how, const unsigned char *buf, const MPI_Status *st, int n)
{
    size_t want = msg_bytes(st->MPI_SOURCE, st->MPI_TAG);
    if ((size_t)n != want) {
        TFAIL(t, "%s: message from %d tag %d has %d bytes, want %zu", how, st->MPI_SOURCE,
              st->MPI_TAG, n, want);
        return 0;
    }
    for (size_t i = 0; i < want; i++)
        if (buf[i] != mtest_pattern(st->MPI_SOURCE, st->MPI_TAG, i)) {
            TFAIL(t, "%s: message from %d tag %d: byte %zu is %#x, want %#x", how, st->MPI_SOURCE,
                  st->MPI_TAG, i, buf[i], mtest_pattern(st->MPI_SOURCE, st->MPI_TAG, i));
            return 0;
        }
    return 1;
}

/* receive one message of comms[t] with wildcards, by method m */
static int recv_one(int t, int m, unsigned char *buf, int *last_tag)
{
    MPI_Comm c = comms[t];
    MPI_Status st;
    int n = -1;
    const char *how = "?";
    switch (m) {
    case 0: {
        MPI_Message msg;
        MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, c, &msg, &st);
        MPI_Get_count(&st, MPI_BYTE, &n);
        int src = st.MPI_SOURCE, tag = st.MPI_TAG;
        MPI_Mrecv(buf, n, MPI_BYTE, &msg, &st);
        if (st.MPI_SOURCE != src || st.MPI_TAG != tag)
            TFAIL(t, "Mrecv status (%d,%d) differs from Mprobe's (%d,%d)", st.MPI_SOURCE,
                  st.MPI_TAG, src, tag);
        how = "Mprobe+Mrecv";
        break;
    }
    case 1: {
        MPI_Message msg;
        int flag = 0;
        while (!flag)
            MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, c, &flag, &msg, &st);
        MPI_Get_count(&st, MPI_BYTE, &n);
        MPI_Request r;
        MPI_Imrecv(buf, n, MPI_BYTE, &msg, &r);
        MPI_Wait(&r, &st);
        how = "Improbe+Imrecv";
        break;
    }
    case 2:
        MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, c, &st);
        MPI_Get_count(&st, MPI_BYTE, &n);
        MPI_Recv(buf, n, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, c, &st);
        how = "Probe+Recv";
        break;
    default: {
        MPI_Request r;
        MPI_Irecv(buf, MAXBYTES, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, c, &r);
        MPI_Wait(&r, &st);
        how = "Irecv(ANY)";
        break;
    }
    }
    MPI_Get_count(&st, MPI_BYTE, &n);
    if (st.MPI_SOURCE < 0 || st.MPI_SOURCE >= nprocs) {
        TFAIL(t, "%s: source %d", how, st.MPI_SOURCE);
        return 0;
    }
    verify(t, how, buf, &st, n);
    if (st.MPI_TAG <= last_tag[st.MPI_SOURCE])
        TFAIL(t, "%s: from %d tag %d after tag %d (overtaken)", how, st.MPI_SOURCE, st.MPI_TAG,
              last_tag[st.MPI_SOURCE]);
    last_tag[st.MPI_SOURCE] = st.MPI_TAG;
    return st.MPI_SOURCE;
}

/* a new communicator of kind k into *n (idup: set when *pending completes) */
static void make_comm(int t, int k, MPI_Comm *n, MPI_Request *pending)
{
    *n = MPI_COMM_NULL;
    switch (k) {
    case 0:
        MPI_Comm_dup(comms[t], n);
        break;
    case 1:
        MPI_Comm_idup(comms[t], n, pending); /* completed after the traffic */
        break;
    case 2:
        MPI_Comm_split(comms[t], rank % 2, nprocs - rank, n);
        break;
    default: {
        MPI_Group wg, g;
        MPI_Comm_group(MPI_COMM_WORLD, &wg);
        int range[1][3] = {{0, nprocs - 1, (t % 2) ? 2 : 1}};
        MPI_Group_range_incl(wg, 1, range, &g);
        int in;
        MPI_Group_rank(g, &in);
        if (in != MPI_UNDEFINED)
            MPI_Comm_create_group(MPI_COMM_WORLD, g, t, n);
        MPI_Group_free(&g);
        MPI_Group_free(&wg);
        break;
    }
    }
}

static void check_comm(int t, int k, MPI_Comm n)
{
    int expect_size = nprocs;
    if (k == 2)
        expect_size = nprocs / 2 + (nprocs % 2 && rank % 2 == 0);
    if (k == 3)
        expect_size = (t % 2) ? (nprocs + 1) / 2 : nprocs;
    if (n == MPI_COMM_NULL) {
        if (!(k == 3 && (t % 2) && rank % 2))
            TFAIL(t, "communicator of kind %d is MPI_COMM_NULL", k);
        return;
    }
    int sz, me, sum = -1, want = 0;
    MPI_Comm_size(n, &sz);
    MPI_Comm_rank(n, &me);
    if (sz != expect_size)
        TFAIL(t, "communicator of kind %d has %d processes, want %d", k, sz, expect_size);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, n);
    int all[64];
    MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, n);
    for (int i = 0; i < sz && i < 64; i++)
        want += all[i];
    if (sum != want)
        TFAIL(t, "allreduce on communicator of kind %d: %d, want %d", k, sum, want);
    MPI_Comm_free(&n);
}

static void *worker(void *arg)
{
    int t = (int)(long)arg;
    unsigned seed = (unsigned)(rank * 7919 + t * 104729 + 1);
    unsigned char *sbuf = mtest_malloc((size_t)nprocs * PERPEER * MAXBYTES);
    unsigned char *rbuf = mtest_malloc(MAXBYTES);
    MPI_Request *sreq = mtest_malloc(sizeof(MPI_Request) * (size_t)(nprocs * PERPEER + 2));
    int *last_tag = mtest_malloc(sizeof(int) * (size_t)nprocs);
    int *got = mtest_malloc(sizeof(int) * (size_t)nprocs); /* messages received, by source */
    for (int p = 0; p < nprocs; p++)
        last_tag[p] = -1, got[p] = 0;
    for (int it = 0; it < iters; it++) {
        int k = (it + t) % 4;
        MPI_Request idup = MPI_REQUEST_NULL;
        MPI_Comm n;
        make_comm(t, k, &n, &idup);
        /* sends: tags grow with the iteration so per-source order can be checked */
        int ns = 0;
        for (int p = 0; p < nprocs; p++)
            for (int j = 0; j < PERPEER; j++) {
                int tag = it * PERPEER + j;
                size_t b = msg_bytes(rank, tag);
                unsigned char *s = sbuf + (size_t)(p * PERPEER + j) * MAXBYTES;
                mtest_fill(s, b, rank, tag);
                if (rand_r(&seed) % 3 == 0)
                    MPI_Issend(s, (int)b, MPI_BYTE, p, tag, comms[t], &sreq[ns++]);
                else
                    MPI_Isend(s, (int)b, MPI_BYTE, p, tag, comms[t], &sreq[ns++]);
            }
        /* a message on MPI_COMM_WORLD to the next rank, by tag */
        int wtag = 1000000 + t * 10000 + it, wout = rank * 1000 + t, win = -1;
        MPI_Isend(&wout, 1, MPI_INT, (rank + 1) % nprocs, wtag, MPI_COMM_WORLD, &sreq[ns++]);
        MPI_Request wr;
        MPI_Irecv(&win, 1, MPI_INT, (rank + nprocs - 1) % nprocs, wtag, MPI_COMM_WORLD, &wr);
        /* a faster rank's next iteration may arrive too: receive until every
         * source has sent this iteration's messages */
        for (int p = 0; p < nprocs; p++)
            while (got[p] < PERPEER * (it + 1))
                got[recv_one(t, (int)(rand_r(&seed) % 4), rbuf, last_tag)]++;
        MPI_Wait(&wr, MPI_STATUS_IGNORE);
        if (win != ((rank + nprocs - 1) % nprocs) * 1000 + t)
            TFAIL(t, "world message %d, want %d", win, ((rank + nprocs - 1) % nprocs) * 1000 + t);
        MPI_Waitall(ns, sreq, MPI_STATUSES_IGNORE);
        if (k == 1)
            MPI_Wait(&idup, MPI_STATUS_IGNORE);
        check_comm(t, k, n);
    }
    for (int p = 0; p < nprocs; p++)
        if (got[p] != PERPEER * iters)
            TFAIL(t, "%d messages from %d, want %d", got[p], p, PERPEER * iters);
    free(got);
    free(last_tag);
    free(sreq);
    free(rbuf);
    free(sbuf);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    mtest_wrank = rank;
    mtest_check(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    const char *e = getenv("THR_STRESS_ITERS");
    if (e && atoi(e) > 0)
        iters = atoi(e);
    for (int t = 0; t < NTHREADS; t++)
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
    pthread_t th[NTHREADS];
    for (int t = 0; t < NTHREADS; t++)
        pthread_create(&th[t], NULL, worker, (void *)(long)t);
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < NTHREADS; t++) {
        mtest_errs += thread_errs[t];
        MPI_Comm_free(&comms[t]);
    }
    return mtest_finalize();
}
