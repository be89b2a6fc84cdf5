/* One MPI_COMM_WORLD over the programs of an MPMD line (mpirun's host lists per program,
 * docs/launcher.md): world ranks in program order (MPI_APPNUM non-decreasing from 0), an
 * allreduce over the world and within each program, a ring of sendrecvs (crossing from each
 * program to the next and from the last back to the first) and a 256 KiB exchange between
 * rank 0 and the last rank. With --print every rank first prints
 *   mpmd_hosts rank R appnum A host NAME
 * (MPI_Get_processor_name) on stdout, which test/hosts/run_multihost.sh checks against the
 * program's host list. Any other arguments (the program's role) are ignored. */
#include "mtest.h"

#define BIG (256 * 1024)

int main(int argc, char **argv)
{
    int rank, size, appnum = -1, flag = 0, *app_of, sum = -1, prog_sum = -1, prog_size;
    int *appnum_attr = NULL, print = 0;
    char name[MPI_MAX_PROCESSOR_NAME];
    MPI_Comm prog;

    mtest_init(&argc, &argv);
    for (int i = 1; i < argc; i++)
        print |= strcmp(argv[i], "--print") == 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum_attr, &flag);
    if (flag)
        appnum = *appnum_attr;
    mtest_check(flag && appnum >= 0, "MPI_APPNUM: flag %d, value %d", flag, appnum);
    if (print) {
        int len = 0;
        MPI_Get_processor_name(name, &len);
        printf("mpmd_hosts rank %d appnum %d host %s\n", rank, appnum, name);
        fflush(stdout);
    }

    /* world ranks numbered in program order */
    app_of = malloc((size_t)size * sizeof(int));
    MPI_Allgather(&appnum, 1, MPI_INT, app_of, 1, MPI_INT, MPI_COMM_WORLD);
    mtest_check(app_of[0] == 0, "rank 0 has appnum %d", app_of[0]);
    for (int r = 1; r < size; r++)
        mtest_check(app_of[r] == app_of[r - 1] || app_of[r] == app_of[r - 1] + 1,
                    "appnum %d of rank %d after %d of rank %d", app_of[r], r, app_of[r - 1], r - 1);

    /* an allreduce over the world and one within each program */
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    mtest_check_int("allreduce of the world ranks", sum, (long long)size * (size - 1) / 2);
    MPI_Comm_split(MPI_COMM_WORLD, appnum, rank, &prog);
    MPI_Comm_size(prog, &prog_size);
    MPI_Allreduce(&rank, &prog_sum, 1, MPI_INT, MPI_SUM, prog);
    {
        long long want = 0;
        int n = 0;
        for (int r = 0; r < size; r++)
            if (app_of[r] == appnum) {
                want += r;
                n++;
            }
        mtest_check_int("ranks of my program", prog_size, n);
        mtest_check_int("allreduce within my program", prog_sum, want);
    }

    /* a ring: each program's last rank sends to the next program's first */
    {
        int to = (rank + 1) % size, from = (rank + size - 1) % size, got = -1;
        int msg = rank * 1000 + appnum;
        MPI_Sendrecv(&msg, 1, MPI_INT, to, 7, &got, 1, MPI_INT, from, 7, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        mtest_check_int("ring message", got, (long long)from * 1000 + app_of[from]);
    }

    /* a large message both ways between the first and the last rank */
    if (size > 1 && (rank == 0 || rank == size - 1)) {
        unsigned char *out = malloc(BIG), *in = malloc(BIG);
        int peer = rank == 0 ? size - 1 : 0;
        mtest_fill(out, BIG, rank, 11);
        MPI_Sendrecv(out, BIG, MPI_BYTE, peer, 11, in, BIG, MPI_BYTE, peer, 11, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        mtest_verify("256 KiB between the first and the last rank", in, BIG, peer, 11);
        free(out);
        free(in);
    }
    MPI_Comm_free(&prog);
    free(app_of);
    return mtest_finalize();
}
