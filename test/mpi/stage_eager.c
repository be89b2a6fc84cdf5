/* Staged EAGER (docs/protocol.md): once a receiver has mapped its sender's
 * staging pool, a message above the eager limit that fits a chunk (up to
 * DCFA_STAGE_EAGER) is copied into a free chunk and sent as one eager packet
 * naming it. Ranks 0 and 1 (others wait) check what an eager message must do
 * on that path: arrive whole when the receive is posted, when it is not
 * (unexpected, received out of order), when probed, truncated (the error
 * class), from a non-contiguous type; a synchronous send must not complete
 * before its receive is posted; a burst of more messages than the pool has
 * chunks falls back to the rendezvous for the rest. The pvar
 * dcfa_stage_eager must count messages sent this way unless the variant turns
 * it off (DCFA_STAGE_EAGER=0, no pool, or DCFA_CMA_MIN at or below the
 * message: single copy), and count none then. The path is taken only below
 * DCFA_CMA_MIN, whose default for a message alone a probe of the machine
 * decides: unless the variant sets it, the test pins it at 1 MiB. */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

#define MID (24 << 10)      /* above the 16 KiB eager limit, below a 64 KiB chunk */
#define NBURST 32

static int env_is(const char *name, const char *value)
{
    const char *v = getenv(name);
    return v && strcmp(v, value) == 0;
}

int main(int argc, char **argv)
{
    int rank, size, provided;
    setenv("DCFA_CMA_MIN", "1048576", 0);
    mtest_init(&argc, &argv);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        mtest_fail("needs 2 ranks");
        return mtest_finalize();
    }
    int peer = 1 - rank;
    int on = rank < 2;
    unsigned char *sb = mtest_malloc(64 << 10), *rb = mtest_malloc(64 << 10);
    unsigned char *burst = mtest_malloc((size_t)NBURST * (48 << 10));
    MPI_Status st;
    int count;

    if (on) {
        /* 1: the first message of that size takes the rendezvous (the receiver maps the pool
         * then), then a ping-pong both ways */
        for (int i = 0; i < 20; i++) {
            size_t n = MID + (size_t)i * 1000;
            if ((i & 1) == rank) {
                mtest_fill(sb, n, rank, i);
                MPI_Send(sb, (int)n, MPI_BYTE, peer, i, MPI_COMM_WORLD);
            } else {
                memset(rb, 0, n);
                MPI_Recv(rb, (int)n, MPI_BYTE, peer, i, MPI_COMM_WORLD, &st);
                MPI_Get_count(&st, MPI_BYTE, &count);
                mtest_check_int("ping-pong count", count, (long long)n);
                mtest_verify("ping-pong", rb, n, peer, i);
            }
        }
    }

    /* 2: unexpected, received in reverse order */
    if (rank == 0) {
        MPI_Request rq[4];
        for (int t = 0; t < 4; t++) {
            mtest_fill(burst + (size_t)t * MID, MID, 0, 100 + t);
            MPI_Isend(burst + (size_t)t * MID, MID, MPI_BYTE, 1, 100 + t, MPI_COMM_WORLD, &rq[t]);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1) {
            mtest_sleep_ms(20);   /* the four have arrived: they wait as unexpected messages */
            for (int t = 3; t >= 0; t--) {
                memset(rb, 0, MID);
                MPI_Recv(rb, MID, MPI_BYTE, 0, 100 + t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                mtest_verify("unexpected", rb, MID, 0, 100 + t);
            }
        }
    }

    /* 3: a synchronous send completes only once its receive is posted */
    if (rank == 0) {
        MPI_Request rq;
        int flag = 0;
        mtest_fill(sb, 30000, 0, 7);
        MPI_Issend(sb, 30000, MPI_BYTE, 1, 7, MPI_COMM_WORLD, &rq);
        for (int i = 0; i < 50 && !flag; i++) {
            MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
            mtest_sleep_ms(1);
        }
        mtest_check(!flag, "MPI_Issend of 30000 bytes completed before its receive was posted");
        MPI_Send(NULL, 0, MPI_BYTE, 1, 8, MPI_COMM_WORLD);
        if (!flag)
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
        MPI_Recv(NULL, 0, MPI_BYTE, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        memset(rb, 0, 30000);
        MPI_Recv(rb, 30000, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        mtest_verify("synchronous", rb, 30000, 0, 7);
    }

    /* 4: probed, then truncated (MPI_ERR_TRUNCATE, the bytes that fit delivered) */
    if (rank == 0) {
        mtest_fill(sb, 25000, 0, 9);
        MPI_Send(sb, 25000, MPI_BYTE, 1, 9, MPI_COMM_WORLD);
        mtest_fill(sb, 40000, 0, 10);
        MPI_Send(sb, 40000, MPI_BYTE, 1, 10, MPI_COMM_WORLD);
    } else if (rank == 1) {
        MPI_Probe(0, 9, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_BYTE, &count);
        mtest_check_int("probed count", count, 25000);
        MPI_Recv(rb, count, MPI_BYTE, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        mtest_verify("probed", rb, 25000, 0, 9);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        memset(rb, 0, 40000);
        int rc = MPI_Recv(rb, 20000, MPI_BYTE, 0, 10, MPI_COMM_WORLD, &st);
        mtest_check_class("truncated receive", rc, MPI_ERR_TRUNCATE);
        mtest_verify("truncated", rb, 20000, 0, 10);
        mtest_check(rb[20000] == 0, "a truncated receive wrote past its buffer");
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    }

    /* 5: a non-contiguous type (every other double) into a contiguous buffer */
    if (on) {
        enum { N = 3000 };
        double *v = mtest_malloc(2 * N * sizeof *v);
        MPI_Datatype vec;
        MPI_Type_vector(N, 1, 2, MPI_DOUBLE, &vec);
        MPI_Type_commit(&vec);
        if (rank == 0) {
            for (int i = 0; i < 2 * N; i++)
                v[i] = (i & 1) ? -1.0 : i * 0.5;
            MPI_Send(v, 1, vec, 1, 11, MPI_COMM_WORLD);
        } else {
            MPI_Recv(v, N, MPI_DOUBLE, 0, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            int bad = -1;
            for (int i = 0; i < N && bad < 0; i++)
                if (v[i] != 2 * i * 0.5)
                    bad = i;
            mtest_check(bad < 0, "vector element %d wrong", bad);
        }
        MPI_Type_free(&vec);
        free(v);
    }

    /* 6: more messages at once than the pool has chunks: the rest take the rendezvous */
    if (rank == 0) {
        MPI_Request rq[NBURST];
        for (int i = 0; i < NBURST; i++) {
            mtest_fill(burst + (size_t)i * (48 << 10), 48 << 10, 0, 200 + i);
            MPI_Isend(burst + (size_t)i * (48 << 10), 48 << 10, MPI_BYTE, 1, 200 + i,
                      MPI_COMM_WORLD, &rq[i]);
        }
        MPI_Waitall(NBURST, rq, MPI_STATUSES_IGNORE);
    } else if (rank == 1) {
        mtest_sleep_ms(10);
        for (int i = 0; i < NBURST; i++) {
            memset(rb, 0, 48 << 10);
            MPI_Recv(rb, 48 << 10, MPI_BYTE, 0, 200 + i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            mtest_verify("burst", rb, 48 << 10, 0, 200 + i);
        }
    }

    if (rank == 0) {
        MPI_T_pvar_session ses;
        MPI_T_pvar_session_create(&ses);
        unsigned long long n = mtest_pvar_counter(ses, "dcfa_stage_eager");
        MPI_T_pvar_session_free(&ses);
        if (env_is("DCFA_STAGE_EAGER", "0") || env_is("DCFA_STAGE_CHUNKS", "0") ||
            atol(getenv("DCFA_CMA_MIN")) <= MID)
            mtest_check(n == 0, "%llu messages went staged EAGER with the path off", n);
        else
            /* the ping-pong's 9 after the first (a rendezvous: the receiver maps the pool), at
             * most every later one: 4 unexpected, 3 of sections 3-4, the vector, the burst */
            mtest_check(n >= 9 && n <= 9 + 4 + 3 + 1 + NBURST,
                        "%llu messages went staged EAGER, expected 9 to %d", n, 17 + NBURST);
    }
    free(burst);
    free(sb);
    free(rb);
    MPI_T_finalize();
    return mtest_finalize();
}
