/* MPI_Bcast from every root, sizes 0 B to 1 MiB, on WORLD and on a
 * reversed split communicator; non-roots' buffers start as garbage. */
#include "mtest.h"

#define BIG (1 << 20)

static void run(MPI_Comm comm, const char *what)
{
    static const int lens[] = {0, 1, 100, 8192, 65537, BIG};
    int rank, size, root, s;
    unsigned char *buf = mtest_malloc(BIG);

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (root = 0; root < size; root++) {
        for (s = 0; s < 6; s++) {
            int len = lens[s];
            if (rank == root)
                mtest_fill(buf, (size_t)len, root, s);
            else
                memset(buf, 0x33, (size_t)len);
            MPI_Bcast(buf, len, MPI_BYTE, root, comm);
            mtest_verify(what, buf, (size_t)len, root, s);
        }
        /* Typed: ints. */
        {
            int v[5], i;
            for (i = 0; i < 5; i++)
                v[i] = rank == root ? root * 10 + i : -1;
            MPI_Bcast(v, 5, MPI_INT, root, comm);
            for (i = 0; i < 5; i++)
                mtest_check_int("Bcast int", v[i], root * 10 + i);
        }
    }
    free(buf);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Comm rev;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    run(MPI_COMM_WORLD, "Bcast on WORLD");
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
    run(rev, "Bcast on reversed comm");
    MPI_Comm_free(&rev);
    return mtest_finalize();
}
