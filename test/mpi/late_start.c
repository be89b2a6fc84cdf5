/* Ranks that send their first message late: with MTEST_GO_FILE set, each rank says on stderr
 * that it waits, then waits (outside MPI) until that file exists, so a test can change the
 * system between MPI_Init and the first connection (stage twonet kills a gateway daemon
 * there: the pairs must take the other gateway, docs/gateway.md "Failure behaviour").
 * Then every rank exchanges with both ring neighbours, large and small, and all reduce. */
#include "mtest.h"

#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *go = getenv("MTEST_GO_FILE");
    if (go) {
        fprintf(stderr, "late_start: rank %d waits for %s\n", rank, go);
        int waited = 0;
        while (access(go, F_OK) != 0 && waited++ < 3000)
            usleep(20000);
        mtest_check(waited <= 3000, "%s did not appear within 60 s", go);
    }
    enum { BIG = 1 << 20 };
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    char *out = mtest_malloc(BIG), *in = mtest_malloc(BIG);
    for (int round = 0; round < 3; round++) {
        int n = round == 1 ? BIG : 8;
        for (int i = 0; i < n; i++)
            out[i] = (char)(rank * 7 + i + round);
        MPI_Sendrecv(out, n, MPI_CHAR, right, round, in, n, MPI_CHAR, left, round, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        int bad = 0;
        for (int i = 0; i < n; i++)
            bad += in[i] != (char)(left * 7 + i + round);
        mtest_check(bad == 0, "round %d: %d of %d bytes from rank %d wrong", round, bad, n, left);
    }
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    mtest_check_int("the sum of the ranks", sum, size * (size - 1) / 2);
    free(out);
    free(in);
    return mtest_finalize();
}
