/* Many messages in flight: every rank other than 0 Isends 1000 small
 * messages to rank 0 at once while rank 0 is busy; rank 0 then receives
 * them per source in order. Exercises credit exhaustion and queued sends.
 * With one rank, rank 0 sends to itself. */
#include "mtest.h"

#define NMSG 1000

int main(int argc, char **argv)
{
    int rank, size, i, src, nsend;
    int *vals, *got;
    MPI_Request *reqs;
    MPI_Status st;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    vals = mtest_malloc(sizeof(int) * 4 * NMSG);
    got = mtest_malloc(sizeof(int) * 4);
    reqs = mtest_malloc(sizeof(*reqs) * NMSG);
    nsend = (rank != 0 || size == 1) ? NMSG : 0;

    for (i = 0; i < nsend; i++) {
        int *v = &vals[4 * i];
        v[0] = rank;
        v[1] = i;
        v[2] = rank * 100000 + i;
        v[3] = ~i;
        MPI_Isend(v, 4, MPI_INT, 0, 5, MPI_COMM_WORLD, &reqs[i]);
    }
    if (rank == 0) {
        int *next = calloc((size_t)size, sizeof(int));
        int nrecv = (size == 1) ? NMSG : (size - 1) * NMSG;
        mtest_sleep_ms(200);
        for (i = 0; i < nrecv; i++) {
            MPI_Recv(got, 4, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &st);
            src = st.MPI_SOURCE;
            if (!mtest_check(src >= 0 && src < size && got[0] == src,
                             "message from %d claims source %d", src, got[0]))
                break;
            if (!mtest_check(got[1] == next[src] && got[2] == src * 100000 + next[src] &&
                                 got[3] == ~next[src],
                             "from %d: got seq %d, expected %d", src, got[1], next[src]))
                break;
            next[src]++;
        }
        for (src = (size == 1 ? 0 : 1); src < size; src++)
            mtest_check_int("messages received from a source", next[src], NMSG);
        free(next);
    }
    MPI_Waitall(nsend, reqs, MPI_STATUSES_IGNORE);
    free(vals);
    free(got);
    free(reqs);
    return mtest_finalize();
}
