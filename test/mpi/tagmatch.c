/* Matching by tag, out of order: the sender sends tag 1 then tag 2; the
 * receiver receives tag 2 first, then tag 1. All size combinations of an
 * eager and a rendezvous message; then tags 1..20 received in reverse. */
#include "mtest.h"

#define BIG 200000
#define NT 20

int main(int argc, char **argv)
{
    static const int lens[] = {10, BIG};
    int rank, size, peer, a, b, t;
    unsigned char *s1, *s2, *r1, *r2;
    MPI_Request req[NT + 1];
    MPI_Status st;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    peer = mtest_partner(rank, size);
    s1 = mtest_malloc(BIG);
    s2 = mtest_malloc(BIG);
    r1 = mtest_malloc(BIG);
    r2 = mtest_malloc(BIG);

    for (a = 0; a < 2; a++) {
        for (b = 0; b < 2; b++) {
            int l1 = lens[a], l2 = lens[b], count = -1;
            int nreq = 0;
            if (rank <= peer) {
                mtest_fill(s1, (size_t)l1, rank, 1);
                mtest_fill(s2, (size_t)l2, rank, 2);
                MPI_Isend(s1, l1, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &req[nreq++]);
                MPI_Isend(s2, l2, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &req[nreq++]);
            }
            if (rank >= peer) {
                MPI_Recv(r2, BIG, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &st);
                MPI_Get_count(&st, MPI_BYTE, &count);
                mtest_check_int("tag 2 count", count, l2);
                mtest_check_int("tag 2 status tag", st.MPI_TAG, 2);
                mtest_verify("tag 2 data", r2, (size_t)l2, peer, 2);
                MPI_Recv(r1, BIG, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &st);
                MPI_Get_count(&st, MPI_BYTE, &count);
                mtest_check_int("tag 1 count", count, l1);
                mtest_check_int("tag 1 status tag", st.MPI_TAG, 1);
                mtest_verify("tag 1 data", r1, (size_t)l1, peer, 1);
            }
            MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
        }
    }

    /* Tags 1..NT sent in order, received in reverse; small messages with
     * the tag as content. */
    {
        int vals[NT], got;
        int nreq = 0;
        if (rank <= peer) {
            for (t = 0; t < NT; t++) {
                vals[t] = 1000 + t;
                MPI_Isend(&vals[t], 1, MPI_INT, peer, t + 1, MPI_COMM_WORLD, &req[nreq++]);
            }
        }
        if (rank >= peer) {
            for (t = NT - 1; t >= 0; t--) {
                got = -1;
                MPI_Recv(&got, 1, MPI_INT, peer, t + 1, MPI_COMM_WORLD, &st);
                mtest_check_int("reverse tag value", got, 1000 + t);
            }
        }
        MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
    }
    free(s1);
    free(s2);
    free(r1);
    free(r2);
    return mtest_finalize();
}
