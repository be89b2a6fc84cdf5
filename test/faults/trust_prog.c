/* The job test/faults/trust_test.sh plays another user against: after
 * MPI_Init rank 0 writes its job id to $TRUST_DIR/job, then every rank waits
 * (outside communication, at most 60 s) for $TRUST_DIR/go, which the test
 * makes once the other user has planted every name it could guess; then the
 * ranks use every kind of segment a job makes: rings (messages between all
 * pairs), staging pools (64 KiB and 4 MiB messages), the collectives' node
 * segment and a window's. Rank 0 prints " No Errors" if all data arrived. */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int errs;

static void fill(char *b, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (char)(seed * 31 + (int)(i % 251));
}

static void check(const char *what, const char *b, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != (char)(seed * 31 + (int)(i % 251))) {
            fprintf(stderr, "%s: byte %zu differs\n", what, i);
            errs++;
            return;
        }
}

int main(int argc, char **argv)
{
    const char *dir = getenv("TRUST_DIR");
    char path[4096];
    int rank, size;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (dir && rank == 0) {
        snprintf(path, sizeof path, "%s/job.tmp", dir);
        FILE *f = fopen(path, "w");
        if (f) {
            fprintf(f, "%s\n", getenv("DCFA_JOBID") ? getenv("DCFA_JOBID") : "");
            fclose(f);
            char done[4096];
            snprintf(done, sizeof done, "%s/job", dir);
            rename(path, done);
        }
    }
    if (dir) {
        snprintf(path, sizeof path, "%s/go", dir);
        for (int i = 0; i < 6000 && access(path, F_OK) != 0; i++)
            usleep(10000);
    }
    size_t sizes[] = {8, 65536, 4u << 20};
    for (int s = 0; s < 3; s++) {
        size_t n = sizes[s];
        char *out = malloc(n), *in = malloc(n);
        for (int d = 1; d < size; d++) {
            int to = (rank + d) % size, from = (rank - d + size) % size;
            fill(out, n, rank * 7 + s);
            MPI_Sendrecv(out, (int)n, MPI_CHAR, to, s, in, (int)n, MPI_CHAR, from, s,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            check("sendrecv", in, n, from * 7 + s);
        }
        fill(out, n, 99);
        if (rank != 0)
            memset(out, 0, n);
        MPI_Bcast(out, (int)n, MPI_CHAR, 0, MPI_COMM_WORLD);
        check("bcast", out, n, 99);
        free(out);
        free(in);
    }
    int one = 1, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (sum != size) {
        fprintf(stderr, "allreduce: %d, expected %d\n", sum, size);
        errs++;
    }
    int *base = NULL;
    MPI_Win win;
    MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    *base = -1;
    MPI_Win_fence(0, win);
    int v = rank;
    MPI_Put(&v, 1, MPI_INT, (rank + 1) % size, 0, 1, MPI_INT, win);
    MPI_Win_fence(0, win);
    if (*base != (rank - 1 + size) % size) {
        fprintf(stderr, "window: %d, expected %d\n", *base, (rank - 1 + size) % size);
        errs++;
    }
    MPI_Win_free(&win);
    int all = 0;
    MPI_Reduce(&errs, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return all != 0;
}
