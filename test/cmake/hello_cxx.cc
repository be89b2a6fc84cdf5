// hello.c's check from C++ (the C API through mpi.h's extern "C"): built by
// check.sh with find_package(MPI COMPONENTS CXX) and with pkg-config mpi-cxx.
#include <mpi.h>
#include <cstdio>
#include <vector>

int main(int argc, char **argv)
{
    int rank = 0, size = 0, errs = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::vector<int> all(static_cast<size_t>(size));
    MPI_Allgather(&rank, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++)
        if (all[static_cast<size_t>(i)] != i) {
            std::fprintf(stderr, "rank %d: entry %d is %d\n", rank, i, all[static_cast<size_t>(i)]);
            errs++;
        }
    if (rank == 0 && errs == 0)
        std::printf(" No Errors\n");
    MPI_Finalize();
    return errs != 0;
}
