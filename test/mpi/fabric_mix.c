/* A job whose connections use different fabrics: before MPI_Init each rank
 * claims a node by the parity of its rank (DCFA_NODE_KEY, unless
 * FABRIC_MIX_KEEP_NODE is set), so with DCFA_FABRICS=shm,ofi ranks of one
 * parity talk over shm and the others over ofi. Every pair exchanges
 * messages of every protocol's size (eager, rendezvous both ways) in both
 * directions at once, checked byte by byte. test/fabric/fabric_mix.sh also
 * checks, from DCFA_STATS, which fabric each connection took and why. */
#include "mtest.h"

int main(int argc, char **argv)
{
    const char *r = getenv("PMI_RANK");
    if (r && !getenv("FABRIC_MIX_KEEP_NODE"))
        setenv("DCFA_NODE_KEY", atoi(r) % 2 ? "fabric-mix-odd" : "fabric-mix-even", 1);
    mtest_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    static const size_t sizes[] = {0, 8, 1000, 20000, 300000, 2u << 20};
    enum { NS = sizeof sizes / sizeof sizes[0] };
    size_t max = sizes[NS - 1];
    unsigned char *sbuf = mtest_malloc(max), *rbuf = mtest_malloc(max);
    for (int step = 1; step < size; step++) {
        int to = (rank + step) % size, from = (rank - step + size) % size;
        for (int k = 0; k < NS; k++) {
            int tag = step * 16 + k;
            MPI_Request rq[2];
            memset(rbuf, 0, sizes[k]);
            mtest_fill(sbuf, sizes[k], rank, tag);
            /* receive posted first on odd steps (receiver-first possible), late on even ones */
            if (step % 2)
                MPI_Irecv(rbuf, (int)sizes[k], MPI_BYTE, from, tag, MPI_COMM_WORLD, &rq[0]);
            MPI_Isend(sbuf, (int)sizes[k], MPI_BYTE, to, tag, MPI_COMM_WORLD, &rq[1]);
            if (!(step % 2))
                MPI_Irecv(rbuf, (int)sizes[k], MPI_BYTE, from, tag, MPI_COMM_WORLD, &rq[0]);
            MPI_Status st[2];
            mtest_check_rc("MPI_Waitall", MPI_Waitall(2, rq, st));
            int count;
            MPI_Get_count(&st[0], MPI_BYTE, &count);
            mtest_check_int("received bytes", count, (long long)sizes[k]);
            mtest_verify("message", rbuf, sizes[k], from, tag);
        }
    }
    free(sbuf);
    free(rbuf);
    return mtest_finalize();
}
