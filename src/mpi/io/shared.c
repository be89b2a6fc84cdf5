/* Shared file pointers.
 *
 * The pointer (in etypes of the current view) is an 8-byte value in a small
 * hidden file next to the data file (its name chosen by rank 0 at open, see
 * file.c), read and updated under a byte-range lock: any rank of the file's
 * group, on any node that sees the file system, takes its turn with
 * fcntl(F_OFD_SETLKW), so no rank has to serve the others and nobody spins
 * (a waiting rank sleeps in the kernel). A missing or empty file means 0. The
 * file is created on first use and removed by rank 0 at close. */
#include "mpi/io/io.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

static int shfp_open(io_file *f)
{
    if (f->shfp_fd >= 0)
        return MPI_SUCCESS;
    f->shfp_fd = open(f->shfp_name, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (f->shfp_fd < 0)
        return io_fail(f, io_errno_class(errno), "shared file pointer file '%s': %s", f->shfp_name,
                       strerror(errno));
    return MPI_SUCCESS;
}

static int shfp_rw(io_file *f, MPI_Offset *val, int write)
{
    int e = 0;
    if (write) {
        int rc = io_pwrite_all(f->shfp_fd, val, sizeof *val, 0, &e);
        return rc == MPI_SUCCESS
                   ? rc
                   : io_fail(f, rc, "writing the shared file pointer: %s", strerror(e));
    }
    MPI_Offset v = 0;
    MPI_Offset got = io_pread_all(f->shfp_fd, &v, sizeof v, 0, &e);
    if (got < 0)
        return io_fail(f, io_errno_class(e), "reading the shared file pointer: %s", strerror(e));
    *val = got == (MPI_Offset)sizeof v ? v : 0;
    return MPI_SUCCESS;
}

/* locked read, optional update, unlock */
static int shfp_op(io_file *f, MPI_Offset *old, const MPI_Offset *set, MPI_Offset add)
{
    int rc = shfp_open(f);
    if (rc != MPI_SUCCESS)
        return rc;
    int exclusive = set || add;
    rc = io_lock(f->shfp_fd, exclusive ? F_WRLCK : F_RDLCK, 0, sizeof(MPI_Offset));
    if (rc != MPI_SUCCESS)
        return io_fail(f, rc, "locking the shared file pointer: %s", strerror(errno));
    MPI_Offset v = 0;
    if (!set || old)
        rc = shfp_rw(f, &v, 0);
    if (rc == MPI_SUCCESS && old)
        *old = v;
    if (rc == MPI_SUCCESS && exclusive) {
        MPI_Offset nv = set ? *set : v + add;
        rc = shfp_rw(f, &nv, 1);
    }
    io_lock(f->shfp_fd, F_UNLCK, 0, sizeof(MPI_Offset));
    return rc;
}

int io_shfp_get(io_file *f, MPI_Offset *val) { return shfp_op(f, val, NULL, 0); }

int io_shfp_set(io_file *f, MPI_Offset val) { return shfp_op(f, NULL, &val, 0); }

int io_shfp_fetch_add(io_file *f, MPI_Offset add, MPI_Offset *old)
{
    return shfp_op(f, old, NULL, add);
}

void io_shfp_close(io_file *f, int unlink_it)
{
    if (f->shfp_fd >= 0)
        close(f->shfp_fd);
    f->shfp_fd = -1;
    if (unlink_it)
        unlink(f->shfp_name);
}
