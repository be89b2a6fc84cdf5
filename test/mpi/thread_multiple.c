/*
 * thread_multiple: MPI_THREAD_MULTIPLE with several threads per process in
 * blocking calls at once.
 *
 * Each rank runs NT threads; thread t of rank r exchanges NITER messages with
 * thread t of rank r^1 (tag t), blocking MPI_Send/MPI_Recv in an order that
 * deadlocks unless a thread blocked in MPI_Recv lets another thread of its
 * process in (the odd rank's threads receive first while the even rank's
 * thread 0 receives from its own process's last thread before sending).
 * Then every thread runs a collective on its own duplicate of the world.
 */
#include "mtest.h"

#include <pthread.h>

#define NT 4
#define NITER 200

static int rank, size;
static MPI_Comm comms[NT];

static void *worker(void *arg)
{
    int t = (int)(long)arg, peer = rank ^ 1;
    if (peer < size) {
        for (int i = 0; i < NITER; i++) {
            int out = rank * 100000 + t * 1000 + i, in = -1;
            if (rank % 2 == 0) {
                MPI_Send(&out, 1, MPI_INT, peer, t, MPI_COMM_WORLD);
                MPI_Recv(&in, 1, MPI_INT, peer, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(&in, 1, MPI_INT, peer, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(&out, 1, MPI_INT, peer, t, MPI_COMM_WORLD);
            }
            int want = peer * 100000 + t * 1000 + i;
            if (!mtest_check(in == want, "thread %d iteration %d: got %d, expected %d", t, i, in,
                             want))
                break;
        }
    }
    /* within one process: thread 0 receives what the last thread sends to itself */
    int self = -1, val = 4242 + rank;
    if (t == 0)
        MPI_Recv(&self, 1, MPI_INT, rank, 999, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    else if (t == NT - 1)
        MPI_Send(&val, 1, MPI_INT, rank, 999, MPI_COMM_WORLD);
    if (t == 0)
        mtest_check(self == val, "self message: got %d, expected %d", self, val);
    int sum = 0, one = t + 1;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comms[t]);
    mtest_check(sum == size * (t + 1), "thread %d allreduce: %d, expected %d", t, sum,
                size * (t + 1));
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    mtest_wrank = rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (!mtest_check(provided == MPI_THREAD_MULTIPLE, "provided %d, asked MPI_THREAD_MULTIPLE",
                     provided))
        return mtest_finalize();
    for (int t = 0; t < NT; t++)
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
    pthread_t th[NT];
    for (int t = 0; t < NT; t++)
        pthread_create(&th[t], NULL, worker, (void *)(long)t);
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < NT; t++)
        MPI_Comm_free(&comms[t]);
    return mtest_finalize();
}
