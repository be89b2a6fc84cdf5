/* The cost of idle network peers on progress (docs/fabric.md, "Waking connections"):
 * rank 0 and the first rank on another host (its partner) exchange one message with every
 * rank, so that each holds a connection to all of them, and the others only with those two;
 * then the two ping-pong --size bytes (8) while every other rank waits for a barrier,
 * asleep but for a test every 20 ms. With
 * N ranks the two have N - 2 idle peers each. Prints per round the mean one-way latency
 * (half the round trip) in us, the median of the rounds, and the time of one MPI_Iprobe
 * that finds nothing on rank 0 (one progress pass):
 *
 *   mpirun -hosts h1,h2 -ppn 33 -n 66 idle_peers [--size 8] [--reps 2000] [--rounds 7]
 */
#include "bench_common.h"

#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long len = bc_arg_long(argc, argv, "--size", 8);
    long reps = bc_arg_long(argc, argv, "--reps", 2000);
    int rounds = (int)bc_arg_long(argc, argv, "--rounds", 7);
    char name[MPI_MAX_PROCESSOR_NAME] = "";
    int nlen;
    MPI_Get_processor_name(name, &nlen);
    char *names = calloc((size_t)size, MPI_MAX_PROCESSOR_NAME);
    MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                  MPI_COMM_WORLD);
    int partner = -1;
    for (int r = 1; r < size && partner < 0; r++)
        if (strcmp(names + (size_t)r * MPI_MAX_PROCESSOR_NAME, names) != 0)
            partner = r;
    if (partner < 0)
        partner = size > 1 ? 1 : 0; /* one host: the next rank */
    int timer = rank == 0 || rank == partner;

    /* connections: the two to everyone, the others to the two */
    int *in = calloc((size_t)size, sizeof(int)), *out = calloc((size_t)size, sizeof(int));
    MPI_Request *reqs = calloc(2 * (size_t)size, sizeof(MPI_Request));
    int nreq = 0;
    for (int p = 0; p < size; p++) {
        if (p == rank || (!timer && p != 0 && p != partner))
            continue;
        out[p] = rank;
        MPI_Irecv(&in[p], 1, MPI_INT, p, 7, MPI_COMM_WORLD, &reqs[nreq++]);
        MPI_Isend(&out[p], 1, MPI_INT, p, 7, MPI_COMM_WORLD, &reqs[nreq++]);
    }
    MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE);

    char *buf = calloc(1, (size_t)len + 1);
    double *lat = calloc((size_t)rounds, sizeof(double));
    if (timer && size > 1) {
        int other = rank == 0 ? partner : 0;
        for (int r = -1; r < rounds; r++) { /* round -1 warms up */
            MPI_Sendrecv(NULL, 0, MPI_BYTE, other, 1, NULL, 0, MPI_BYTE, other, 1, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            double t0 = MPI_Wtime();
            for (long i = 0; i < reps; i++) {
                if (rank == 0) {
                    MPI_Send(buf, (int)len, MPI_BYTE, other, 2, MPI_COMM_WORLD);
                    MPI_Recv(buf, (int)len, MPI_BYTE, other, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else {
                    MPI_Recv(buf, (int)len, MPI_BYTE, other, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(buf, (int)len, MPI_BYTE, other, 2, MPI_COMM_WORLD);
                }
            }
            double us = (MPI_Wtime() - t0) * 1e6 / (double)reps / 2;
            if (r >= 0)
                lat[r] = us;
        }
    }
    /* one progress pass with nothing arriving: rank 0 times MPI_Iprobe (its partner waits) */
    double probe_us = 0;
    if (timer && size > 1) {
        int flag, other = rank == 0 ? partner : 0;
        MPI_Sendrecv(NULL, 0, MPI_BYTE, other, 3, NULL, 0, MPI_BYTE, other, 3, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        if (rank == 0) {
            double t0 = MPI_Wtime();
            for (long i = 0; i < 20 * reps; i++)
                MPI_Iprobe(MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            probe_us = (MPI_Wtime() - t0) * 1e6 / (double)(20 * reps);
        }
    }
    /* the others wait asleep (a blocking MPI call would poll, and with more ranks than
     * cores take the timing ranks' CPU): a barrier tested every 20 ms */
    MPI_Request bar;
    MPI_Ibarrier(MPI_COMM_WORLD, &bar);
    for (int done = 0; !done;) {
        MPI_Test(&bar, &done, MPI_STATUS_IGNORE);
        if (!done && !timer)
            usleep(20000);
    }
    if (rank == 0) {
        printf("idle_peers: %d ranks, %d idle peers of each timing rank, partner %d (%s), %ld B:",
               size, size - 2, partner, names + (size_t)partner * MPI_MAX_PROCESSOR_NAME, len);
        for (int r = 0; r < rounds; r++)
            printf(" %.2f", lat[r]);
        for (int i = 1; i < rounds; i++) /* insertion sort for the median */
            for (int j = i; j > 0 && lat[j] < lat[j - 1]; j--) {
                double t = lat[j];
                lat[j] = lat[j - 1];
                lat[j - 1] = t;
            }
        printf("  median %.2f us; MPI_Iprobe %.3f us\n", rounds > 0 ? lat[rounds / 2] : 0.0,
               probe_us);
    }
    free(lat);
    free(buf);
    free(in);
    free(out);
    free(reqs);
    free(names);
    MPI_Finalize();
    return 0;
}
