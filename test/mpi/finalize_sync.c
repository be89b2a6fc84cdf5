/* MPI_Finalize returns only once every process of the job has reached it (the
 * process manager's barrier), even between ranks that never communicated: rank
 * 0 finalizes at once and then exits with status 3 after 200 ms; the others
 * compute for 1 s first and report on stderr that they got past MPI_Finalize.
 * If rank 0 left MPI_Finalize early, the launcher would end the job (its
 * status 3) before they reach it. The test list expects the failure status
 * and every other rank's line. */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank != 0)
        nap_ms(1000);
    MPI_Finalize();
    if (rank == 0) {
        nap_ms(200);
        return 3;
    }
    fprintf(stderr, "rank %d of %d got past MPI_Finalize\n", rank, size);
    return 0;
}
