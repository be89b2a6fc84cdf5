/*
 * MPI calls outside MPI (issue 15 item 11), chosen by NOTINIT_MODE:
 *   before   MPI_Comm_rank before MPI_Init: the job must fail saying that MPI
 *            is not initialized (not "invalid communicator")
 *   after    MPI_Comm_size after MPI_Finalize: it must say MPI is finalized
 *   session  no MPI_Init at all: the calls allowed at any time work, then a
 *            session's communicator is used (the sessions model needs no
 *            MPI_Init)
 * The calls MPI 4.1 allows at any time (MPI_Initialized, MPI_Finalized,
 * MPI_Get_version, MPI_Get_library_version, info objects) are made first in
 * every mode and must work.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int errs;

static void anytime_calls(int want_init, int want_fin)
{
    int flag = -1, v = 0, sv = 0, len = 0;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING], val[16];
    MPI_Info info;
    if (MPI_Initialized(&flag) != MPI_SUCCESS || flag != want_init)
        errs++, fprintf(stderr, "MPI_Initialized: %d\n", flag);
    if (MPI_Finalized(&flag) != MPI_SUCCESS || flag != want_fin)
        errs++, fprintf(stderr, "MPI_Finalized: %d\n", flag);
    if (MPI_Get_version(&v, &sv) != MPI_SUCCESS || v != MPI_VERSION)
        errs++, fprintf(stderr, "MPI_Get_version\n");
    if (MPI_Get_library_version(lib, &len) != MPI_SUCCESS || len <= 0)
        errs++, fprintf(stderr, "MPI_Get_library_version\n");
    if (MPI_Info_create(&info) != MPI_SUCCESS || MPI_Info_set(info, "k", "v") != MPI_SUCCESS ||
        MPI_Info_get_string(info, "k", &(int){sizeof val}, val, &flag) != MPI_SUCCESS || !flag ||
        strcmp(val, "v") != 0 || MPI_Info_free(&info) != MPI_SUCCESS)
        errs++, fprintf(stderr, "MPI_Info_* outside MPI\n");
}

int main(int argc, char **argv)
{
    const char *mode = getenv("NOTINIT_MODE");
    int rank = -1, size = -1;
    if (!mode || !strcmp(mode, "before")) {
        anytime_calls(0, 0);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank); /* fatal: not initialized */
        fprintf(stderr, "MPI_Comm_rank before MPI_Init returned\n");
        return 3;
    }
    if (!strcmp(mode, "after")) {
        MPI_Init(&argc, &argv);
        MPI_Finalize();
        anytime_calls(1, 1);
        if (errs)
            return 2;
        MPI_Comm_size(MPI_COMM_WORLD, &size); /* fatal: finalized */
        fprintf(stderr, "MPI_Comm_size after MPI_Finalize returned\n");
        return 3;
    }
    /* session */
    anytime_calls(0, 0);
    MPI_Session s;
    MPI_Group g;
    MPI_Comm c;
    if (MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s) != MPI_SUCCESS ||
        MPI_Group_from_session_pset(s, "mpi://WORLD", &g) != MPI_SUCCESS ||
        MPI_Comm_create_from_group(g, "notinit", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c) !=
            MPI_SUCCESS) {
        fprintf(stderr, "session set-up failed\n");
        return 2;
    }
    int one = 1, sum = 0;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    if (MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c) != MPI_SUCCESS || sum != size)
        errs++, fprintf(stderr, "allreduce over the session's communicator: %d\n", sum);
    anytime_calls(0, 0);
    MPI_Comm_free(&c);
    MPI_Group_free(&g);
    MPI_Session_finalize(&s);
    if (rank == 0 && !errs)
        printf(" No Errors\n");
    fflush(stdout);
    return errs ? 1 : 0;
}
