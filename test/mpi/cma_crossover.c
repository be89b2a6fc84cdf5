/* The choice between single copy and the copy path on one node
 * (docs/protocol.md, "Copy path"): the sender decides, by DCFA_CMA_MIN for a
 * message alone and DCFA_CMA_MIN_STREAM for one that follows others of its
 * own still under way, and the receiver follows unless it has rendezvous
 * sends of its own. Rank 0 sends five 64 KiB messages to rank 1: the first
 * alone (rank 1 receives it last, so its RTS stays out), the other four
 * behind it. The pvars dcfa_copy_bytes (rank 0) and dcfa_cma_bytes (rank 1)
 * must show exactly which went which way, as the variant's settings say
 * (without a staging pool the copy path is not taken: single copy). Twice
 * more with the four sent from the first one's buffer (a benchmark's window
 * reusing one buffer): those follow DCFA_CMA_MIN_HOT instead. Twice more with a
 * receive of rank 0's own posted first (traffic both ways, an exchange): the
 * first message follows DCFA_CMA_MIN_BOTH and, from one buffer, the four
 * DCFA_CMA_MIN_HOT's crossover both ways; and
 * once more with rank 0's receive complete before it sends, its message having
 * been there when it was posted (an exchange whose peer sent first): the same.
 * Then receives into vector types read single copy, small pieces through the
 * bounce buffer (80 KB, and 320 KB: several bounce buffers) and large pieces
 * in place, with the gaps untouched and a too-small one truncated; the data
 * is checked in every variant, the path where the settings force it. */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

#define BIG (64 << 10)
#define NSTREAM 4

/* the crossover a variant sets: -1 when it leaves it to the machine */
static long env_long(const char *name, long dflt)
{
    const char *v = getenv(name);
    return v && *v ? atol(v) : dflt;
}

static void counters(MPI_T_pvar_session s, unsigned long long *copy, unsigned long long *cma)
{
    *copy = mtest_pvar_counter(s, "dcfa_copy_bytes");
    *cma = mtest_pvar_counter(s, "dcfa_cma_bytes");
}

/* a vector of n doubles, one every `stride`, received from rank 0's contiguous n doubles */
static void vector_case(int rank, MPI_T_pvar_session ses, int n, int blen, int stride, int single)
{
    size_t span = (size_t)(n / blen) * (size_t)stride;
    double *buf = mtest_malloc(span * sizeof(double));
    MPI_Datatype vec;
    MPI_Type_vector(n / blen, blen, stride, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    if (rank == 0) {
        for (int i = 0; i < n; i++)
            buf[i] = i + 0.5;
        MPI_Send(buf, n, MPI_DOUBLE, 1, 20, MPI_COMM_WORLD);
        MPI_Send(buf, n, MPI_DOUBLE, 1, 21, MPI_COMM_WORLD);
    } else if (rank == 1) {
        for (size_t i = 0; i < span; i++)
            buf[i] = -1.0;
        unsigned long long copy0, cma0, copy1, cma1;
        counters(ses, &copy0, &cma0);
        MPI_Status st;
        MPI_Recv(buf, 1, vec, 0, 20, MPI_COMM_WORLD, &st);
        counters(ses, &copy1, &cma1);
        int bad = 0;
        for (size_t i = 0; i < span && bad < 5; i++) {
            size_t blk = i / (size_t)stride, in = i % (size_t)stride;
            double want = in < (size_t)blen ? (double)(blk * (size_t)blen + in) + 0.5 : -1.0;
            if (buf[i] != want)
                bad += mtest_check(0, "vector %d/%d/%d: element %zu is %g, not %g", n, blen, stride, i,
                                   buf[i], want) == 0;
        }
        if (single)
            mtest_check(cma1 - cma0 == (unsigned long long)n * sizeof(double),
                        "vector %d/%d/%d: %llu bytes single copy, not %zu", n, blen, stride, cma1 - cma0,
                        (size_t)n * sizeof(double));
        /* one element fewer: MPI_ERR_TRUNCATE, what fits is there */
        MPI_Datatype less;
        MPI_Type_vector(n / blen - 1, blen, stride, MPI_DOUBLE, &less);
        MPI_Type_commit(&less);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        memset(buf, 0, span * sizeof(double));
        int rc = MPI_Recv(buf, 1, less, 0, 21, MPI_COMM_WORLD, &st);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        mtest_check_class("truncated vector receive", rc, MPI_ERR_TRUNCATE);
        mtest_check(buf[0] == 0.5 && buf[(size_t)(n / blen - 2) * (size_t)stride] ==
                                         (double)((n / blen - 2) * blen) + 0.5,
                    "vector %d/%d/%d: the truncated receive's first and last blocks", n, blen, stride);
        mtest_check(buf[span - (size_t)stride] == 0.0, "vector %d/%d/%d: the truncated receive wrote past "
                    "its type", n, blen, stride);
        MPI_Type_free(&less);
    }
    MPI_Type_free(&vec);
    free(buf);
}

int main(int argc, char **argv)
{
    int rank, size;
    if (!mtest_init_pvars(&argc, &argv, 2, &rank, &size))
        return mtest_finalize();
    long alone = env_long("DCFA_CMA_MIN", -1), stream = env_long("DCFA_CMA_MIN_STREAM", -1);
    if (stream < 0)
        stream = alone;
    /* a stream from a reused buffer: auto 256 KiB or the crossover alone if smaller, never
     * above the stream's */
    long hot = env_long("DCFA_CMA_MIN_HOT", -1);
    if (hot < 0)
        hot = alone < (256 << 10) ? alone : (256 << 10);
    if (hot > stream)
        hot = stream;
    /* with a receive of my own open: alone, DCFA_CMA_MIN_BOTH (auto: DCFA_CMA_MIN when
     * set; else 128 KiB or less, not checked); from a reused buffer, DCFA_CMA_MIN_HOT
     * (auto: 32 KiB or the crossover alone if smaller, never above the stream's) */
    long both = env_long("DCFA_CMA_MIN_BOTH", -1);
    if (both < 0)
        both = alone >= 0 ? alone : 0;
    long hot_both = env_long("DCFA_CMA_MIN_HOT", -1);
    if (hot_both < 0)
        hot_both = alone < (32 << 10) ? alone : (32 << 10);
    if (hot_both > stream)
        hot_both = stream;
    int known = alone >= 0 && getenv("DCFA_CMA") == NULL;
    /* the copy path is taken through the sender's staging pool; with none, single copy */
    int pool = env_long("DCFA_STAGE_CHUNKS", 8) > 0;

    MPI_T_pvar_session ses;
    MPI_T_pvar_session_create(&ses);
    unsigned char *m = mtest_malloc((size_t)(NSTREAM + 1) * BIG);
    /* twice: the second time the receiver has mapped the pool (staged EAGER may carry the
     * stream), the counts stay the same; then twice from one buffer; then with a receive of
     * rank 0's posted, from fresh buffers and from one; then with one that found its
     * message already there */
    for (int pass = 0; pass < 7 && rank < 2; pass++) {
        unsigned long long copy0, cma0, copy1, cma1;
        MPI_Request rq[NSTREAM + 1], back;
        int posted = pass == 4 || pass == 5, early = pass == 6;
        int reused = pass == 2 || pass == 3 || pass == 5;
        int alone_copies = pool && (posted || early ? both : alone) > BIG;
        int stream_copies = pool && (!reused ? stream : posted ? hot_both : hot) > BIG;
        if (rank == 0)
            for (int i = 0; i <= NSTREAM; i++)
                mtest_fill(m + (size_t)i * BIG, BIG, pass, reused ? 0 : i);
        else
            memset(m, 0, (size_t)(NSTREAM + 1) * BIG);
        MPI_Barrier(MPI_COMM_WORLD);
        counters(ses, &copy0, &cma0);
        if (rank == 0) {
            if (posted)
                MPI_Irecv(NULL, 0, MPI_BYTE, 1, 50, MPI_COMM_WORLD, &back);
            if (early) {
                /* the peer's message is here before the receive is posted */
                int here = 0;
                while (!here)
                    MPI_Iprobe(1, 60, MPI_COMM_WORLD, &here, MPI_STATUS_IGNORE);
                MPI_Recv(NULL, 0, MPI_BYTE, 1, 60, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
            /* alone: nothing else of mine under way */
            MPI_Isend(m, BIG, MPI_BYTE, 1, 0, MPI_COMM_WORLD, &rq[0]);
            /* behind it, while its RTS is out (rank 1 takes it last) */
            for (int i = 1; i <= NSTREAM; i++)
                MPI_Isend(m + (reused ? 0 : (size_t)i * BIG), BIG, MPI_BYTE, 1, i, MPI_COMM_WORLD,
                          &rq[i]);
            MPI_Waitall(NSTREAM + 1, rq, MPI_STATUSES_IGNORE);
            if (posted)
                MPI_Wait(&back, MPI_STATUS_IGNORE);
        } else {
            if (early)
                MPI_Send(NULL, 0, MPI_BYTE, 0, 60, MPI_COMM_WORLD);
            for (int i = 1; i <= NSTREAM; i++)
                MPI_Irecv(m + (size_t)i * BIG, BIG, MPI_BYTE, 0, i, MPI_COMM_WORLD, &rq[i]);
            MPI_Waitall(NSTREAM, rq + 1, MPI_STATUSES_IGNORE);
            MPI_Recv(m, BIG, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (int i = 0; i <= NSTREAM; i++)
                if (!mtest_verify("message", m + (size_t)i * BIG, BIG, pass, reused ? 0 : i))
                    break;
            if (posted)
                MPI_Send(NULL, 0, MPI_BYTE, 0, 50, MPI_COMM_WORLD);
        }
        counters(ses, &copy1, &cma1);
        unsigned long long mine[2] = {copy1 - copy0, cma1 - cma0}, theirs[2];
        MPI_Sendrecv(mine, 2, MPI_UNSIGNED_LONG_LONG, 1 - rank, 9, theirs, 2, MPI_UNSIGNED_LONG_LONG,
                     1 - rank, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rank == 0 && known) {
            unsigned long long copied = mine[0], read = theirs[1];
            unsigned long long want_copy = (unsigned long long)BIG * (unsigned)(alone_copies + NSTREAM * stream_copies);
            unsigned long long want_read = (unsigned long long)BIG * (NSTREAM + 1) - want_copy;
            mtest_check(
                copied == want_copy && read == want_read,
                "pass %d (DCFA_CMA_MIN %ld, stream %ld, from one buffer %ld, both ways %ld): the "
                "sender "
                "copied %llu bytes and the receiver read %llu single copy; expected %llu and "
                "%llu",
                pass, alone, stream, reused ? (posted ? hot_both : hot) : -1,
                posted || early ? both : -1, copied, read, want_copy, want_read);
        }
    }
    free(m);
    if (rank < 2) {
        int single = known && alone == 0 && stream == 0;
        vector_case(rank, ses, 10000, 1, 7, single);       /* 8-byte pieces: bounce buffer */
        vector_case(rank, ses, 40000, 2, 3, single);       /* 320 KB: several bounce buffers */
        vector_case(rank, ses, 40960, 512, 600, single);   /* 4 KiB pieces: read in place */
    }
    MPI_T_pvar_session_free(&ses);
    MPI_T_finalize();
    return mtest_finalize();
}
