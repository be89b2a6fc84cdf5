/* Connections only to the peers a rank talks to: each rank exchanges with its
 * ring neighbours only (sendrecv both ways, 50 rounds, every value checked),
 * then MPI_Finalize. The MPI_T counter dcfa_connections, read after
 * MPI_Finalize (so finalize's own synchronisation counts), must be exactly the
 * number of neighbours (2; 1 at 2 ranks, 0 alone): no world barrier, no
 * collective, nothing connects to anyone else, and a counter that stays 0 fails
 * too. Every rank checks itself and exits 1 on failure; rank 0 prints
 * " No Errors" when its own checks pass (mpirun fails the job if any rank
 * exits non-zero). In DCFA-MPI (its library version string says so) a missing
 * counter is a failure; other MPI libraries have no such counter: the check is
 * skipped there. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int provided, rank, size, errors = 0;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int round = 0; round < 50; round++) {
        int out[2] = {rank, round}, from_left[2] = {-1, -1}, from_right[2] = {-1, -1};
        MPI_Sendrecv(out, 2, MPI_INT, right, round, from_left, 2, MPI_INT, left, round,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(out, 2, MPI_INT, left, 1000 + round, from_right, 2, MPI_INT, right,
                     1000 + round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (from_left[0] != left || from_left[1] != round || from_right[0] != right ||
            from_right[1] != round) {
            if (errors++ < 5)
                fprintf(stderr,
                        "[rank %d] round %d: got (%d,%d) from the left, (%d,%d) from the right\n",
                        rank, round, from_left[0], from_left[1], from_right[0], from_right[1]);
        }
    }
    MPI_Finalize();

    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len, index;
    MPI_Get_library_version(lib, &len);
    int ours = strncmp(lib, "DCFA-MPI", 8) == 0;
    if (MPI_T_pvar_get_index("dcfa_connections", MPI_T_PVAR_CLASS_COUNTER, &index) != MPI_SUCCESS) {
        if (ours) {
            fprintf(stderr, "[rank %d] no MPI_T counter dcfa_connections in %s\n", rank, lib);
            errors++;
        }
    } else {
        MPI_T_pvar_session s;
        MPI_T_pvar_handle h;
        int count;
        unsigned long long conns = 0;
        MPI_T_pvar_session_create(&s);
        MPI_T_pvar_handle_alloc(s, index, NULL, &h, &count);
        MPI_T_pvar_read(s, h, &conns);
        MPI_T_pvar_handle_free(s, &h);
        MPI_T_pvar_session_free(&s);
        /* 1 rank: none; 2 ranks: the one peer; more: the two neighbours */
        unsigned long long want = size == 1 ? 0 : size == 2 ? 1 : 2;
        if (conns != want) {
            fprintf(stderr,
                    "[rank %d] %llu connections made, %llu expected (the ring neighbours)\n", rank,
                    conns, want);
            errors++;
        }
    }
    MPI_T_finalize();
    if (errors)
        return 1;
    if (rank == 0)
        printf(" No Errors\n");
    return 0;
}
