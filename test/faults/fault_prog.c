/* An MPI program that waits where a fault test wants it (test/faults).
 *
 *   fault_prog MODE
 *     barrier        rank 0 sleeps outside MPI, the others wait in MPI_Barrier
 *     recv           every rank waits in MPI_Recv from MPI_ANY_SOURCE
 *     compute        every rank spins outside MPI
 *     recv-ignterm   as recv, with SIGTERM ignored from before MPI_Init (so
 *                    only the library's watch of the command channel can
 *                    notice that the launcher died)
 *
 * With FAULT_DIR set, each rank sends its stderr to FAULT_DIR/err.<rank> and,
 * once every rank is inside MPI (after a barrier), writes "<pid> <jobid>" to
 * FAULT_DIR/ready.<rank>. */
#include <mpi.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "recv";
    const char *dir = getenv("FAULT_DIR");
    const char *prank = getenv("PMI_RANK");
    char path[4096];
    if (dir && prank) {
        snprintf(path, sizeof path, "%s/err.%s", dir, prank);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 2);
            close(fd);
        }
    }
    if (!strcmp(mode, "recv-ignterm"))
        signal(SIGTERM, SIG_IGN);
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    if (dir) {
        char tmp[4200];
        snprintf(path, sizeof path, "%s/ready.%d", dir, rank);
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        FILE *f = fopen(tmp, "w");
        if (f) {
            const char *job = getenv("DCFA_JOBID");
            fprintf(f, "%d %s\n", (int)getpid(), job ? job : "-");
            fclose(f);
            rename(tmp, path);
        }
    }
    if (!strcmp(mode, "barrier")) {
        if (rank == 0)
            for (;;)
                sleep(1000);
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (!strcmp(mode, "abort")) {
        /* connections to both neighbours exist (their rings), then the last rank aborts */
        int size, x = rank, y;
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        MPI_Sendrecv(&x, 1, MPI_INT, (rank + 1) % size, 1, &y, 1, MPI_INT, (rank + size - 1) % size,
                     1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rank == size - 1)
            MPI_Abort(MPI_COMM_WORLD, 7);
        MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (!strcmp(mode, "compute")) {
        volatile unsigned long spin = 0;
        for (;;)
            spin++;
    } else {
        int x;
        MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
