/*
 * err_nullout_all: every output argument of the C API passed NULL, one at a time.
 *
 * The generated PMPI_X (tools/gen_api.py) checks its output arguments before the
 * implementation runs; the cases come from the same description (src/binding/api.txt,
 * build/gen/binding/nullout_cases.h): the output arguments checked before the one under
 * test point to scratch memory, every other argument is 0. Each call must return
 * MPI_ERR_ARG through MPI_ERRORS_RETURN (set on MPI_COMM_SELF and MPI_COMM_WORLD; files
 * have it by default), with a message naming the call and the argument, and the library
 * must print nothing (stderr is captured around the calls). Before, most of these calls
 * dereferenced the NULL pointer (SIGSEGV).
 */
#include "mtest.h"

static long long nullout_scratch[64];

#include "nullout_cases.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    int bad = 0;
    for (int i = 0; i < NULLOUT_NCASES; i++) {
        char what[256], want[256];
        snprintf(what, sizeof what, "%s with %s NULL", nullout_what[i][0], nullout_what[i][1]);
        snprintf(want, sizeof want, "%s: %s: NULL pointer", nullout_what[i][0], nullout_what[i][1]);
        mtest_quiet(1);
        int rc = nullout_call(i);
        mtest_quiet(0);
        bad += !mtest_check_error(what, rc, MPI_ERR_ARG, want);
    }
    mtest_quiet_check();
    if (mtest_wrank == 0 && bad == 0)
        fprintf(stderr, "err_nullout_all: %d output arguments checked\n", NULLOUT_NCASES);
    return mtest_finalize();
}
