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

#include <errno.h>
#include <fcntl.h>

static long long nullout_scratch[64];

#include "nullout_cases.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    char path[] = "/tmp/dcfa-nullout-XXXXXX";
    int fd = mkstemp(path), saved = dup(2);
    if (fd < 0 || saved < 0) {
        mtest_fail("mkstemp/dup: %s", strerror(errno));
        return mtest_finalize();
    }
    unlink(path);
    fflush(stderr);
    dup2(fd, 2);
    int bad = 0;
    for (int i = 0; i < NULLOUT_NCASES; i++) {
        int rc = nullout_call(i), cls = -1, len = 0;
        char msg[MPI_MAX_ERROR_STRING] = "", want[256];
        MPI_Error_class(rc, &cls);
        MPI_Error_string(rc, msg, &len);
        snprintf(want, sizeof want, "%s: %s: NULL pointer", nullout_what[i][0], nullout_what[i][1]);
        if (cls != MPI_ERR_ARG || !strstr(msg, want)) {
            if (bad++ < 20) {
                dup2(saved, 2);
                mtest_fail("%s with %s NULL: error class %d, message '%s' (expected "
                           "MPI_ERR_ARG, '%s')",
                           nullout_what[i][0], nullout_what[i][1], cls, msg, want);
                dup2(fd, 2);
            } else {
                mtest_errs++;
            }
        }
    }
    fflush(stderr);
    dup2(saved, 2);
    off_t printed = lseek(fd, 0, SEEK_END);
    if (printed > 0) {
        char text[512] = "";
        ssize_t n = pread(fd, text, sizeof text - 1, 0);
        text[n > 0 ? n : 0] = '\0';
        mtest_fail("the library printed %lld bytes under MPI_ERRORS_RETURN: %s", (long long)printed,
                   text);
    }
    close(fd);
    close(saved);
    if (mtest_wrank == 0 && bad == 0)
        fprintf(stderr, "err_nullout_all: %d output arguments checked\n", NULLOUT_NCASES);
    return mtest_finalize();
}
