/*
 * io_errors: the error classes of MPI-IO and where they are reported.
 *
 * Files default to MPI_ERRORS_RETURN (MPI 4.1 9.3), so every call below
 * returns its error: MPI_ERR_NO_SUCH_FILE, MPI_ERR_FILE_EXISTS (EXCL),
 * MPI_ERR_AMODE (bad modes), MPI_ERR_ACCESS (reading a write-only file),
 * MPI_ERR_READ_ONLY (writing a read-only one), MPI_ERR_BAD_FILE (a
 * directory), MPI_ERR_FILE (invalid handle), MPI_ERR_ARG (negative offset,
 * seek before the start, bad whence), MPI_ERR_COUNT, MPI_ERR_TYPE (a
 * filetype that is no multiple of the etype), MPI_ERR_UNSUPPORTED_DATAREP,
 * MPI_ERR_DUP_DATAREP, MPI_ERR_IO (an _end with no _begin, two _begin),
 * MPI_ERR_NO_SPACE (a write over the file size limit, RLIMIT_FSIZE).
 * Messages name the call, the file and the rank. A handler set on a file is
 * called for that file's errors only; MPI_FILE_NULL's handler takes the
 * errors of MPI_File_open; MPI_File_call_errhandler calls it.
 */
#include "io_util.h"

#include <signal.h>
#include <sys/resource.h>

static int rank, size;
static int calls;
static MPI_File called_on;
static int called_code;

static void handler(MPI_File *fh, int *code, ...)
{
    calls++;
    called_on = *fh;
    called_code = *code;
}

static int extent_fn(MPI_Datatype dt, MPI_Aint *extent, void *extra)
{
    MPI_Aint lb;
    (void)extra;
    return MPI_Type_get_extent(dt, &lb, extent);
}

static int conv_fn(void *ubuf, MPI_Datatype dt, int count, void *fbuf, MPI_Offset pos, void *extra)
{
    (void)ubuf, (void)dt, (void)count, (void)fbuf, (void)pos, (void)extra;
    return MPI_SUCCESS;
}

static void check_msg(const char *what, int rc, const char *call, const char *file)
{
    char msg[MPI_MAX_ERROR_STRING], want[64];
    int len;
    MPI_Error_string(rc, msg, &len);
    snprintf(want, sizeof want, "rank %d", rank);
    mtest_check(strstr(msg, call) && (!file || strstr(msg, file)) && strstr(msg, want),
                "%s: message '%s' does not name %s, %s and %s", what, msg, call, file ? file : "-",
                want);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    io_tmpdir_make();
    const char *path = io_path("err.dat"), *missing = io_path("missing.dat");
    MPI_File fh;
    MPI_Status st;
    char buf[64] = {0};
    int rc;

    /* default handler of files: errors return */
    MPI_Errhandler eh;
    MPI_File_get_errhandler(MPI_FILE_NULL, &eh);
    mtest_check(eh == MPI_ERRORS_RETURN, "MPI_FILE_NULL's handler is not MPI_ERRORS_RETURN");
    MPI_Errhandler_free(&eh);

    rc = MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    mtest_check_class("open of a missing file", rc, MPI_ERR_NO_SUCH_FILE);
    if (rc != MPI_SUCCESS)
        check_msg("open of a missing file", rc, "MPI_File_open", "missing.dat");
    mtest_check(fh == MPI_FILE_NULL, "failed open left fh != MPI_FILE_NULL");
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    mtest_check_class("open RDONLY|WRONLY", rc, MPI_ERR_AMODE);
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh);
    mtest_check_class("open RDONLY|CREATE", rc, MPI_ERR_AMODE);
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL, MPI_INFO_NULL,
                       &fh);
    mtest_check_class("open RDWR|SEQUENTIAL", rc, MPI_ERR_AMODE);
    rc = MPI_File_open(MPI_COMM_WORLD, io_dir, MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    mtest_check_class("open of a directory", rc, MPI_ERR_BAD_FILE);
    rc = MPI_File_delete(missing, MPI_INFO_NULL);
    mtest_check_class("delete of a missing file", rc, MPI_ERR_NO_SUCH_FILE);

    /* EXCL: exactly one open creates the file */
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL,
                       MPI_INFO_NULL, &fh);
    if (mtest_check_rc("open CREATE|EXCL of a new file", rc))
        MPI_File_close(&fh);
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL,
                       MPI_INFO_NULL, &fh);
    mtest_check_class("open CREATE|EXCL of an existing file", rc, MPI_ERR_FILE_EXISTS);

    /* access modes */
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    if (mtest_check_rc("open WRONLY", rc)) {
        rc = MPI_File_read_at(fh, 0, buf, 4, MPI_BYTE, &st);
        mtest_check_class("read of a write-only file", rc, MPI_ERR_ACCESS);
        if (rc != MPI_SUCCESS)
            check_msg("read of a write-only file", rc, "MPI_File_read_at", "err.dat");
        mtest_check_rc("write to a write-only file",
                       MPI_File_write_at(fh, rank, buf, 1, MPI_BYTE, &st));
        MPI_File_close(&fh);
    }
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    if (mtest_check_rc("open RDONLY", rc)) {
        rc = MPI_File_write(fh, buf, 4, MPI_BYTE, &st);
        mtest_check_class("write to a read-only file", rc, MPI_ERR_READ_ONLY);
        rc = MPI_File_set_size(fh, 0);
        mtest_check_class("set_size of a read-only file", rc, MPI_ERR_READ_ONLY);
        MPI_File_close(&fh);
    }

    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    if (mtest_check_rc("open RDWR", rc)) {
        MPI_File bad = MPI_FILE_NULL;
        rc = MPI_File_read(bad, buf, 1, MPI_BYTE, &st);
        mtest_check_class("read of MPI_FILE_NULL", rc, MPI_ERR_FILE);
        rc = MPI_File_read_at(fh, -1, buf, 1, MPI_BYTE, &st);
        mtest_check_class("read_at a negative offset", rc, MPI_ERR_ARG);
        rc = MPI_File_read_at(fh, 0, buf, -1, MPI_BYTE, &st);
        mtest_check_class("read_at a negative count", rc, MPI_ERR_COUNT);
        rc = MPI_File_seek(fh, -1, MPI_SEEK_SET);
        mtest_check_class("seek before the start", rc, MPI_ERR_ARG);
        rc = MPI_File_seek(fh, 0, 12345);
        mtest_check_class("seek with a bad whence", rc, MPI_ERR_ARG);
        MPI_Datatype uncommitted;
        MPI_Type_contiguous(2, MPI_INT, &uncommitted);
        rc = MPI_File_read_at(fh, 0, buf, 1, uncommitted, &st);
        mtest_check_class("read with an uncommitted datatype", rc, MPI_ERR_TYPE);
        MPI_Type_free(&uncommitted);
        MPI_Datatype three;
        MPI_Type_contiguous(3, MPI_BYTE, &three);
        MPI_Type_commit(&three);
        rc = MPI_File_set_view(fh, 0, MPI_INT, three, "native", MPI_INFO_NULL);
        mtest_check_class("set_view with a filetype of 3 bytes and etype int", rc, MPI_ERR_TYPE);
        MPI_Type_free(&three);
        /* displacements: negative, decreasing, overlapping (writable file) */
        int bl[2] = {1, 1}, dneg[2] = {-2, 2}, ddec[2] = {3, 0}, dovl[2] = {0, 1}, bovl[2] = {3, 1};
        MPI_Datatype t;
        MPI_Type_indexed(2, bl, dneg, MPI_INT, &t);
        MPI_Type_commit(&t);
        rc = MPI_File_set_view(fh, 0, MPI_INT, t, "native", MPI_INFO_NULL);
        mtest_check_class("set_view with a negative displacement", rc, MPI_ERR_IO);
        MPI_Type_free(&t);
        MPI_Type_indexed(2, bl, ddec, MPI_INT, &t);
        MPI_Type_commit(&t);
        rc = MPI_File_set_view(fh, 0, MPI_INT, t, "native", MPI_INFO_NULL);
        mtest_check_class("set_view with decreasing displacements", rc, MPI_ERR_IO);
        MPI_Type_free(&t);
        MPI_Type_indexed(2, bovl, dovl, MPI_INT, &t);
        MPI_Type_commit(&t);
        rc = MPI_File_set_view(fh, 0, MPI_INT, t, "native", MPI_INFO_NULL);
        mtest_check_class("set_view with an overlapping filetype (writable)", rc, MPI_ERR_IO);
        MPI_Type_free(&t);
        rc = MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "no-such-rep", MPI_INFO_NULL);
        mtest_check_class("set_view with an unknown datarep", rc, MPI_ERR_UNSUPPORTED_DATAREP);
        rc = MPI_File_read_all_end(fh, buf, &st);
        mtest_check_class("read_all_end without begin", rc, MPI_ERR_IO);
        mtest_check_rc("read_all_begin", MPI_File_read_all_begin(fh, buf, 1, MPI_BYTE));
        rc = MPI_File_write_all_begin(fh, buf, 1, MPI_BYTE);
        mtest_check_class("a second split collective", rc, MPI_ERR_IO);
        mtest_check_rc("read_all_end", MPI_File_read_all_end(fh, buf, &st));

        /* a handler on this file: called for its errors, not for others' */
        MPI_Errhandler mine;
        MPI_File_create_errhandler(handler, &mine);
        MPI_File_set_errhandler(fh, mine);
        MPI_Errhandler_free(&mine);
        calls = 0;
        rc = MPI_File_read_at(fh, -5, buf, 1, MPI_BYTE, &st);
        mtest_check(calls == 1 && called_on == fh, "the file's handler was called %d times", calls);
        int cls = -1;
        MPI_Error_class(called_code, &cls);
        mtest_check_int("class given to the file's handler", cls, MPI_ERR_ARG);
        rc = MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &bad);
        mtest_check(calls == 1, "the file's handler was called for MPI_File_open");
        MPI_File_call_errhandler(fh, MPI_ERR_OTHER);
        mtest_check(calls == 2 && called_code == MPI_ERR_OTHER,
                    "MPI_File_call_errhandler did not call the handler");
        MPI_File_get_errhandler(fh, &eh);
        mtest_check(eh != MPI_ERRORS_RETURN, "MPI_File_get_errhandler lost the handler");
        MPI_Errhandler_free(&eh);

        /* MPI_FILE_NULL's handler takes open errors */
        MPI_File_create_errhandler(handler, &mine);
        MPI_File_set_errhandler(MPI_FILE_NULL, mine);
        MPI_Errhandler_free(&mine);
        calls = 0;
        rc = MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &bad);
        mtest_check(calls == 1 && called_on == MPI_FILE_NULL,
                    "MPI_FILE_NULL's handler was called %d times for a failed open", calls);
        MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
        MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);

        /* no space: a write beyond the file size limit (signal ignored: EFBIG) */
        if (rank == 0) {
            struct rlimit old, lim;
            getrlimit(RLIMIT_FSIZE, &old);
            lim = old;
            lim.rlim_cur = 4096;
            signal(SIGXFSZ, SIG_IGN);
            if (setrlimit(RLIMIT_FSIZE, &lim) == 0) {
                rc = MPI_File_write_at(fh, 8192, buf, 16, MPI_BYTE, &st);
                mtest_check_class("write beyond RLIMIT_FSIZE", rc, MPI_ERR_NO_SPACE);
                if (rc != MPI_SUCCESS)
                    check_msg("write beyond RLIMIT_FSIZE", rc, "MPI_File_write_at", "err.dat");
                setrlimit(RLIMIT_FSIZE, &old);
            }
        }
        MPI_File_close(&fh);
    }

    /* data representations */
    rc = MPI_Register_datarep("io-errors-rep", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL,
                              extent_fn, NULL);
    mtest_check_rc("Register_datarep", rc);
    rc = MPI_Register_datarep("io-errors-rep", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL,
                              extent_fn, NULL);
    mtest_check_class("Register_datarep twice", rc, MPI_ERR_DUP_DATAREP);
    rc = MPI_Register_datarep("external32", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL,
                              extent_fn, NULL);
    mtest_check_class("Register_datarep external32", rc, MPI_ERR_DUP_DATAREP);
    rc = MPI_Register_datarep("io-errors-conv", conv_fn, conv_fn, extent_fn, NULL);
    mtest_check_rc("Register_datarep with conversions", rc);
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    if (mtest_check_rc("open RDWR", rc)) {
        char rep[MPI_MAX_DATAREP_STRING];
        MPI_Offset disp;
        MPI_Datatype et, ft;
        mtest_check_rc("set_view with a registered datarep without conversions",
                       MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "io-errors-rep", MPI_INFO_NULL));
        MPI_File_get_view(fh, &disp, &et, &ft, rep);
        mtest_check(!strcmp(rep, "io-errors-rep") && et == MPI_INT, "get_view gives datarep '%s'",
                    rep);
        rc = MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "io-errors-conv", MPI_INFO_NULL);
        mtest_check_class("set_view with a datarep that converts", rc, MPI_ERR_UNSUPPORTED_DATAREP);
        MPI_File_close(&fh);
    }
    mtest_check_rc("delete", rank == 0 ? MPI_File_delete(path, MPI_INFO_NULL) : MPI_SUCCESS);
    io_tmpdir_remove();
    return mtest_finalize();
}
