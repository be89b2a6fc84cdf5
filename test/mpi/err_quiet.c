/*
 * err_quiet: with MPI_ERRORS_RETURN the library prints nothing (issue 38 item 6). Erroneous
 * calls of several chapters, stderr captured around them: each returns its class, the
 * cause is in MPI_Error_string, and nothing reached stderr. Before, MPI_Comm_connect to a
 * malformed port name printed "[dcfa-mpi] rank 0: MPI_Comm_connect: '...' is not a port
 * name", and the other causes found below the bindings (ports, spawn, segments, context
 * ids) were printed the same way.
 */
#include "mtest.h"

/* class `want`, and a message that contains `text` (if given); rc was made quietly */
static void expect(const char *what, int rc, int want, const char *text)
{
    mtest_quiet(0);
    mtest_check_error(what, rc, want, text);
}

#define QUIETLY(call) (mtest_quiet(1), (call))

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    MPI_Comm c = MPI_COMM_NULL;
    expect("MPI_Comm_connect(malformed port name)",
           QUIETLY(MPI_Comm_connect("not-a-port", MPI_INFO_NULL, 0, MPI_COMM_WORLD, &c)),
           MPI_ERR_PORT, rank == 0 ? "'not-a-port' is not a port name" : NULL);
    expect("MPI_Comm_connect(nobody listening)",
           QUIETLY(MPI_Comm_connect("dcfa-port:127.0.0.1:1:00000000000000ff", MPI_INFO_NULL, 0,
                                    MPI_COMM_WORLD, &c)),
           MPI_ERR_PORT, rank == 0 ? "nobody accepts on port" : NULL);
    expect("MPI_Comm_accept(a port not opened)",
           QUIETLY(MPI_Comm_accept("dcfa-port:127.0.0.1:9:00000000000000ff", MPI_INFO_NULL, 0,
                                   MPI_COMM_WORLD, &c)),
           MPI_ERR_PORT, rank == 0 ? "is not open in this process" : NULL);
    expect("MPI_Close_port(malformed)", QUIETLY(MPI_Close_port("not-a-port")), MPI_ERR_PORT, NULL);
    int x = 0, y = 0;
    expect("MPI_Send(dest out of range)",
           QUIETLY(MPI_Send(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD)), MPI_ERR_RANK,
           "is not a valid rank");
    expect("MPI_Allreduce(MPI_MINLOC on MPI_INT)",
           QUIETLY(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_MINLOC, MPI_COMM_WORLD)), MPI_ERR_OP,
           NULL);
    MPI_Datatype t;
    MPI_Type_contiguous(2, MPI_INT, &t);
    expect("MPI_Send(type not committed)", QUIETLY(MPI_Send(&x, 1, t, 0, 0, MPI_COMM_SELF)),
           MPI_ERR_TYPE, "not committed");
    MPI_Type_free(&t);
    MPI_File fh;
    expect("MPI_File_open(no such file)",
           QUIETLY(MPI_File_open(MPI_COMM_SELF, "/nonexistent-dcfa-dir/f", MPI_MODE_RDONLY,
                                 MPI_INFO_NULL, &fh)),
           MPI_ERR_NO_SUCH_FILE, "No such file");
    MPI_Info info;
    char key[MPI_MAX_INFO_KEY];
    MPI_Info_create(&info);
    expect("MPI_Info_get_nthkey(out of range)", QUIETLY(MPI_Info_get_nthkey(info, 3, key)),
           MPI_ERR_ARG, NULL);
    MPI_Info_free(&info);
    int wbuf[4];
    MPI_Win win;
    MPI_Win_create(wbuf, sizeof wbuf, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    expect("MPI_Put outside an epoch", QUIETLY(MPI_Put(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, win)),
           MPI_ERR_RMA_SYNC, NULL);
    MPI_Win_free(&win);

    mtest_quiet_check();
    return mtest_finalize();
}
