/* Buffered sends from several threads (MPICH threads/pt2pt/mt_bsendrecv_pers_huge):
 * the attached buffer holds exactly one round of messages; each round every
 * thread of rank 0 starts persistent MPI_Bsend_init requests (large enough to go
 * by rendezvous) and the matching thread of rank 1 receives them; the ranks
 * then meet in MPI_Barrier and the next round reuses the buffer. The
 * previous round's sends have been received, so there must be room: the
 * completions still in flight are to be collected, not MPI_ERR_BUFFER
 * reported. Data checked per (thread, round, message). */
#include "mtest.h"

#include <pthread.h>

#define NTHREADS 4
#define PER      4          /* messages per thread and round */
#define ROUNDS   25
#define BYTES    (96 * 1024)

static int rank;
static int thread_errs[NTHREADS];
static pthread_barrier_t tbar;

static void *worker(void *arg)
{
    int id = (int)(long)arg;
    unsigned char *buf = mtest_malloc((size_t)PER * BYTES);
    MPI_Request req[PER];
    for (int m = 0; m < PER; m++) {
        if (rank == 0)
            MPI_Bsend_init(buf + (size_t)m * BYTES, BYTES, MPI_BYTE, 1, id * PER + m, MPI_COMM_WORLD,
                           &req[m]);
        else
            MPI_Recv_init(buf + (size_t)m * BYTES, BYTES, MPI_BYTE, 0, id * PER + m, MPI_COMM_WORLD,
                          &req[m]);
    }
    for (int r = 0; r < ROUNDS; r++) {
        for (int m = 0; m < PER; m++) {
            int tag = (id * PER + m) * ROUNDS + r;
            if (rank == 0)
                mtest_fill(buf + (size_t)m * BYTES, BYTES, 0, tag);
            else
                memset(buf + (size_t)m * BYTES, 0, BYTES);
            int rc = MPI_Start(&req[m]);
            if (rc != MPI_SUCCESS) {
                char s[MPI_MAX_ERROR_STRING];
                int len;
                MPI_Error_string(rc, s, &len);
                fprintf(stderr, "[rank %d] thread %d round %d: MPI_Start: %s\n", rank, id, r, s);
                thread_errs[id]++;
            }
        }
        MPI_Waitall(PER, req, MPI_STATUSES_IGNORE);
        if (rank == 1)
            for (int m = 0; m < PER; m++) {
                int tag = (id * PER + m) * ROUNDS + r;
                if (!mtest_verify("buffered message", buf + (size_t)m * BYTES, BYTES, 0, tag))
                    thread_errs[id]++;
            }
        /* the whole round is received before anyone starts the next */
        pthread_barrier_wait(&tbar);
        if (id == 0)
            MPI_Barrier(MPI_COMM_WORLD);
        pthread_barrier_wait(&tbar);
    }
    for (int m = 0; m < PER; m++)
        MPI_Request_free(&req[m]);
    free(buf);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    mtest_wrank = rank;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int bsize = NTHREADS * PER * (BYTES + MPI_BSEND_OVERHEAD);
    void *attached = mtest_malloc((size_t)bsize);
    MPI_Buffer_attach(attached, bsize);
    if (rank < 2) {
        pthread_barrier_init(&tbar, NULL, NTHREADS);
        pthread_t th[NTHREADS];
        for (int i = 0; i < NTHREADS; i++)
            pthread_create(&th[i], NULL, worker, (void *)(long)i);
        for (int i = 0; i < NTHREADS; i++)
            pthread_join(th[i], NULL);
        pthread_barrier_destroy(&tbar);
        for (int i = 0; i < NTHREADS; i++)
            mtest_errs += thread_errs[i];
    } else {
        for (int r = 0; r < ROUNDS; r++)
            MPI_Barrier(MPI_COMM_WORLD);
    }
    void *b;
    int bs;
    MPI_Buffer_detach(&b, &bs);
    free(attached);
    return mtest_finalize();
}
