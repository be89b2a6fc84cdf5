/*
 * MPI_Alltoallv/MPI_Alltoallw with every count 0 and the same (empty) buffer
 * on both sides move no data and must succeed (they failed with
 * MPI_ERR_BUFFER, "sendbuf and recvbuf are the same buffer"; mpi4py's
 * test_cco_vec testAlltoallv3 passes one empty buffer for both); with data
 * the same buffer is still an error.
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    int size, buf[64];

    mtest_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int *counts = calloc((size_t)size, sizeof *counts), *displs = calloc((size_t)size, sizeof *displs);
    MPI_Datatype *types = malloc((size_t)size * sizeof *types);
    for (int i = 0; i < size; i++)
        types[i] = MPI_INT;
    mtest_check_rc("MPI_Alltoallv, zero counts, one buffer",
                   MPI_Alltoallv(buf, counts, displs, MPI_INT, buf, counts, displs, MPI_INT,
                                 MPI_COMM_WORLD));
    mtest_check_rc("MPI_Alltoallw, zero counts, one buffer",
                   MPI_Alltoallw(buf, counts, displs, types, buf, counts, displs, types,
                                 MPI_COMM_WORLD));
    for (int i = 0; i < size; i++)
        counts[i] = 1, displs[i] = i;
    mtest_check_class("MPI_Alltoallv with data, one buffer",
                      MPI_Alltoallv(buf, counts, displs, MPI_INT, buf, counts, displs, MPI_INT,
                                    MPI_COMM_WORLD),
                      MPI_ERR_BUFFER);
    free(counts);
    free(displs);
    free(types);
    return mtest_finalize();
}
