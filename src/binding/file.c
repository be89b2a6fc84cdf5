/* MPI-IO bindings (MPI 4.1 chapter 14): argument checks, handles -> file
 * objects, errors through the file's error handler (MPI_ERRORS_RETURN unless
 * changed; errors of MPI_File_open/delete and of invalid handles go to
 * MPI_FILE_NULL's handler), with messages naming the call, the file and the
 * rank. The work is in src/mpi/io. */
#include "mpi/mpii.h"
#include "mpi/datatype/datatype.h"
#include "mpi/datatype/dtype_check.h"
#include "mpi/errhan/errhan.h"
#include "mpi/info/info.h"
#include "mpi/io/io.h"
#include "binding/impl.h"

#include <stdio.h>
#include <string.h>

/* ---- checks and errors --------------------------------------------------------------- */

static int file_get(const char *fn, MPI_File fh, io_file **out)
{
    io_file *f = io_file_get(fh);
    if (!f)
        return mpii_err(MPII_OBJ_FILE, fh, MPI_ERR_FILE, fn, "fh: invalid file handle");
    *out = f;
    return MPI_SUCCESS;
}

/* an error of the I/O layer, with the cause it recorded in f->why */
static int file_raise(const char *fn, io_file *f, int cls)
{
    if (cls == MPI_SUCCESS)
        return MPI_SUCCESS;
    return mpii_err(MPII_OBJ_FILE, f->handle, cls, fn, "file '%s': %s", f->name, f->why);
}

static int file_info_ok(const char *fn, int objh, MPI_Info info)
{
    if (info != MPI_INFO_NULL && !mpii_info_exists(info))
        return mpii_err(MPII_OBJ_FILE, objh, MPI_ERR_INFO, fn, "info: invalid info object");
    return MPI_SUCCESS;
}

/* size of one element of t in the file under f's representation */
static MPI_Count file_elem_size(io_file *f, mpii_dtype *t)
{
    return f->view.rep == IO_REP_EXTERNAL32 ? mpii_dtype_external32_size(t) : (MPI_Count)t->dt.size;
}

enum { FILE_READ = 0, FILE_WRITE = 1 };

static int file_access_check(const char *fn, MPI_File fh, int write, int where, MPI_Count count,
                             MPI_Datatype dt, io_file **out)
{
    io_file *f = NULL;
    int rc = file_get(fn, fh, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    if (write && (f->amode & MPI_MODE_RDONLY))
        return mpii_err(MPII_OBJ_FILE, fh, MPI_ERR_READ_ONLY, fn,
                        "file '%s': opened with MPI_MODE_RDONLY, it cannot be written", f->name);
    if (!write && (f->amode & MPI_MODE_WRONLY))
        return mpii_err(MPII_OBJ_FILE, fh, MPI_ERR_ACCESS, fn,
                        "file '%s': opened with MPI_MODE_WRONLY, it cannot be read", f->name);
    if ((f->amode & MPI_MODE_SEQUENTIAL) && (where == IO_AT || where == IO_INDIV))
        return mpii_err(MPII_OBJ_FILE, fh, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                        "file '%s': opened with MPI_MODE_SEQUENTIAL, only the shared file "
                        "pointer can be used",
                        f->name);
    if (count < 0)
        return mpii_err(MPII_OBJ_FILE, fh, MPI_ERR_COUNT, fn, "count=%lld is negative",
                        (long long)count);
    const char *why;
    if (mpii_dtype_check_comm(dt, &why) != MPI_SUCCESS)
        return mpii_err(MPII_OBJ_FILE, fh, MPI_ERR_TYPE, fn, "%s", why);
    MPI_Count bytes = count * file_elem_size(f, mpii_dtype_get(dt));
    if (write && bytes > 0 && f->view.fdt->size == 0)
        return mpii_err(MPII_OBJ_FILE, fh, MPI_ERR_IO, fn,
                        "file '%s': count=%lld: the view holds no data (its filetype has size "
                        "0), nothing can be written through it",
                        f->name, (long long)count);
    if (bytes % (MPI_Count)f->view.esize != 0)
        return mpii_err(MPII_OBJ_FILE, fh, MPI_ERR_IO, fn,
                        "file '%s': %lld bytes of datatype are not a whole number of etypes (%zu "
                        "bytes each)",
                        f->name, (long long)bytes, f->view.esize);
    *out = f;
    return MPI_SUCCESS;
}

static int file_rw(const char *fn, MPI_File fh, int write, int where, int coll, int mode,
                   MPI_Offset offset, const void *buf, MPI_Count count, MPI_Datatype dt,
                   MPI_Status *st, MPI_Request *req)
{
    io_file *f = NULL;
    if (mode == IO_NONBLOCKING) {
        if (!req)
            return mpii_err(MPII_OBJ_FILE, fh, MPI_ERR_ARG, fn, "request: NULL pointer");
        *req = MPI_REQUEST_NULL;
    }
    int rc = file_access_check(fn, fh, write, where, count, dt, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    if (where == IO_AT && offset < 0)
        return mpii_err(MPII_OBJ_FILE, fh, MPI_ERR_ARG, fn, "offset=%lld is negative",
                        (long long)offset);
    rc = io_access(f, write, where, coll, mode, offset, (void *)buf, count, dt, st, req);
    return file_raise(fn, f, rc);
}

static int file_end(const char *fn, MPI_File fh, int write, int where, MPI_Status *st)
{
    io_file *f = NULL;
    int rc = file_get(fn, fh, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    return file_raise(fn, f, io_split_end(f, write, where, st));
}

/* ---- open, close, delete ------------------------------------------------------------------ */

int b_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    static const char fn[] = "MPI_File_open";
    mpii_comm *c = mpii_comm_get(comm);
    if (!c)
        return mpii_err(MPII_OBJ_FILE, MPI_FILE_NULL, MPI_ERR_COMM, fn,
                        "comm: invalid communicator");
    if (c->is_inter)
        return mpii_err(MPII_OBJ_FILE, MPI_FILE_NULL, MPI_ERR_COMM, fn,
                        "comm: an inter-communicator cannot open a file");
    if (!fh)
        return mpii_err(MPII_OBJ_FILE, MPI_FILE_NULL, MPI_ERR_ARG, fn, "fh: NULL pointer");
    *fh = MPI_FILE_NULL;
    if (!filename)
        return mpii_err(MPII_OBJ_FILE, MPI_FILE_NULL, MPI_ERR_BAD_FILE, fn,
                        "filename: NULL pointer");
    int acc = !!(amode & MPI_MODE_RDONLY) + !!(amode & MPI_MODE_WRONLY) + !!(amode & MPI_MODE_RDWR);
    if (acc != 1)
        return mpii_err(MPII_OBJ_FILE, MPI_FILE_NULL, MPI_ERR_AMODE, fn,
                        "amode=0x%x: exactly one of MPI_MODE_RDONLY, MPI_MODE_WRONLY and "
                        "MPI_MODE_RDWR is required",
                        (unsigned)amode);
    if ((amode & MPI_MODE_RDONLY) && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)))
        return mpii_err(MPII_OBJ_FILE, MPI_FILE_NULL, MPI_ERR_AMODE, fn,
                        "amode=0x%x: MPI_MODE_CREATE and MPI_MODE_EXCL need write access",
                        (unsigned)amode);
    if ((amode & MPI_MODE_RDWR) && (amode & MPI_MODE_SEQUENTIAL))
        return mpii_err(MPII_OBJ_FILE, MPI_FILE_NULL, MPI_ERR_AMODE, fn,
                        "amode=0x%x: MPI_MODE_SEQUENTIAL cannot go with MPI_MODE_RDWR",
                        (unsigned)amode);
    if (amode & ~0x1ff)
        return mpii_err(MPII_OBJ_FILE, MPI_FILE_NULL, MPI_ERR_AMODE, fn,
                        "amode=0x%x: unknown mode bits", (unsigned)amode);
    int rc = file_info_ok(fn, MPI_FILE_NULL, info);
    if (rc != MPI_SUCCESS)
        return rc;
    io_file *f = NULL;
    char why[512];
    rc = io_file_open(c, filename, amode, info, &f, why, sizeof why);
    if (rc != MPI_SUCCESS)
        return mpii_err(MPII_OBJ_FILE, MPI_FILE_NULL, rc, fn, "file '%s': %s", filename, why);
    *fh = f->handle;
    return MPI_SUCCESS;
}

int b_File_close(MPI_File *fh)
{
    static const char fn[] = "MPI_File_close";
    if (!fh)
        return mpii_err(MPII_OBJ_FILE, MPI_FILE_NULL, MPI_ERR_ARG, fn, "fh: NULL pointer");
    io_file *f = NULL;
    int rc = file_get(fn, *fh, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    char name[256], why[sizeof f->why];
    snprintf(name, sizeof name, "%s", f->name);
    rc = io_file_close(f, why, sizeof why); /* f is gone */
    *fh = MPI_FILE_NULL;
    if (rc != MPI_SUCCESS)
        return mpii_err(MPII_OBJ_FILE, MPI_FILE_NULL, rc, fn, "file '%s': %s", name, why);
    return MPI_SUCCESS;
}

int b_File_delete(const char *filename, MPI_Info info)
{
    static const char fn[] = "MPI_File_delete";
    if (!filename)
        return mpii_err(MPII_OBJ_FILE, MPI_FILE_NULL, MPI_ERR_BAD_FILE, fn,
                        "filename: NULL pointer");
    int rc = file_info_ok(fn, MPI_FILE_NULL, info);
    if (rc != MPI_SUCCESS)
        return rc;
    char why[512];
    rc = io_file_delete(filename, why, sizeof why);
    if (rc != MPI_SUCCESS)
        return mpii_err(MPII_OBJ_FILE, MPI_FILE_NULL, rc, fn, "%s", why);
    return MPI_SUCCESS;
}

/* ---- size, group, mode, info -------------------------------------------------------------- */

static int file_resize(const char *fn, MPI_File fh, MPI_Offset size, int grow_only)
{
    io_file *f = NULL;
    int rc = file_get(fn, fh, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    if (size < 0)
        return mpii_err(MPII_OBJ_FILE, fh, MPI_ERR_ARG, fn, "size=%lld is negative",
                        (long long)size);
    if (f->amode & MPI_MODE_RDONLY)
        return mpii_err(MPII_OBJ_FILE, fh, MPI_ERR_READ_ONLY, fn,
                        "file '%s': opened with MPI_MODE_RDONLY", f->name);
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return mpii_err(MPII_OBJ_FILE, fh, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                        "file '%s': opened with MPI_MODE_SEQUENTIAL", f->name);
    rc = grow_only ? io_file_preallocate(f, size) : io_file_set_size(f, size);
    return file_raise(fn, f, rc);
}

int b_File_set_size(MPI_File fh, MPI_Offset size)
{
    return file_resize("MPI_File_set_size", fh, size, 0);
}

int b_File_preallocate(MPI_File fh, MPI_Offset size)
{
    return file_resize("MPI_File_preallocate", fh, size, 1);
}

int b_File_get_size(MPI_File fh, MPI_Offset *size)
{
    static const char fn[] = "MPI_File_get_size";
    io_file *f = NULL;
    int rc = file_get(fn, fh, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!size)
        return mpii_err(MPII_OBJ_FILE, fh, MPI_ERR_ARG, fn, "size: NULL pointer");
    return file_raise(fn, f, io_file_get_size(f, size));
}

int b_File_get_group(MPI_File fh, MPI_Group *group)
{
    static const char fn[] = "MPI_File_get_group";
    io_file *f = NULL;
    int rc = file_get(fn, fh, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!group)
        return mpii_err(MPII_OBJ_FILE, fh, MPI_ERR_ARG, fn, "group: NULL pointer");
    mpii_group_ref(f->comm->group);
    *group = f->comm->group->handle;
    return MPI_SUCCESS;
}

int b_File_get_amode(MPI_File fh, int *amode)
{
    static const char fn[] = "MPI_File_get_amode";
    io_file *f = NULL;
    int rc = file_get(fn, fh, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!amode)
        return mpii_err(MPII_OBJ_FILE, fh, MPI_ERR_ARG, fn, "amode: NULL pointer");
    *amode = f->amode;
    return MPI_SUCCESS;
}

int b_File_set_info(MPI_File fh, MPI_Info info)
{
    static const char fn[] = "MPI_File_set_info";
    io_file *f = NULL;
    int rc = file_get(fn, fh, &f);
    if (rc == MPI_SUCCESS)
        rc = file_info_ok(fn, fh, info);
    if (rc != MPI_SUCCESS)
        return rc;
    return file_raise(fn, f, io_file_set_info(f, info));
}

int b_File_get_info(MPI_File fh, MPI_Info *info_used)
{
    static const char fn[] = "MPI_File_get_info";
    io_file *f = NULL;
    int rc = file_get(fn, fh, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!info_used)
        return mpii_err(MPII_OBJ_FILE, fh, MPI_ERR_ARG, fn, "info_used: NULL pointer");
    *info_used = io_file_get_info(f);
    return MPI_SUCCESS;
}

/* ---- views --------------------------------------------------------------------------------- */

int b_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                    const char *datarep, MPI_Info info)
{
    static const char fn[] = "MPI_File_set_view";
    io_file *f = NULL;
    int rc = file_get(fn, fh, &f);
    if (rc == MPI_SUCCESS)
        rc = file_info_ok(fn, fh, info);
    if (rc != MPI_SUCCESS)
        return rc;
    const char *why;
    if (mpii_dtype_check_comm(etype, &why) != MPI_SUCCESS)
        return mpii_err(MPII_OBJ_FILE, fh, MPI_ERR_TYPE, fn, "etype: %s", why);
    if (mpii_dtype_check_comm(filetype, &why) != MPI_SUCCESS)
        return mpii_err(MPII_OBJ_FILE, fh, MPI_ERR_TYPE, fn, "filetype: %s", why);
    if (!datarep)
        return mpii_err(MPII_OBJ_FILE, fh, MPI_ERR_UNSUPPORTED_DATAREP, fn,
                        "datarep: NULL pointer");
    if (strnlen(datarep, MPI_MAX_DATAREP_STRING) >= MPI_MAX_DATAREP_STRING)
        return mpii_err(MPII_OBJ_FILE, fh, MPI_ERR_UNSUPPORTED_DATAREP, fn,
                        "datarep: longer than MPI_MAX_DATAREP_STRING-1 characters");
    if (disp < 0 && disp != MPI_DISPLACEMENT_CURRENT)
        return mpii_err(MPII_OBJ_FILE, fh, MPI_ERR_ARG, fn, "disp=%lld is negative",
                        (long long)disp);
    if (disp == MPI_DISPLACEMENT_CURRENT && !(f->amode & MPI_MODE_SEQUENTIAL))
        return mpii_err(MPII_OBJ_FILE, fh, MPI_ERR_ARG, fn,
                        "disp: MPI_DISPLACEMENT_CURRENT needs a file opened with "
                        "MPI_MODE_SEQUENTIAL");
    if (f->split_kind)
        return mpii_err(MPII_OBJ_FILE, fh, MPI_ERR_IO, fn,
                        "file '%s': a split collective access is active", f->name);
    return file_raise(fn, f, io_file_set_view(f, disp, etype, filetype, datarep, info));
}

int b_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype,
                    char *datarep)
{
    static const char fn[] = "MPI_File_get_view";
    io_file *f = NULL;
    int rc = file_get(fn, fh, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!disp || !etype || !filetype || !datarep)
        return mpii_err(MPII_OBJ_FILE, fh, MPI_ERR_ARG, fn,
                        "disp/etype/filetype/datarep: NULL pointer");
    *disp = f->view.disp;
    /* derived types come back with a reference of their own: the caller frees them */
    mpii_dtype_ref(f->view.et);
    mpii_dtype_ref(f->view.ft);
    *etype = f->view.et->handle;
    *filetype = f->view.ft->handle;
    strcpy(datarep, f->view.datarep);
    return MPI_SUCCESS;
}

int b_File_get_type_extent(const char *fn, MPI_File fh, MPI_Datatype dt, MPI_Count *extent)
{
    io_file *f = NULL;
    int rc = file_get(fn, fh, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    mpii_dtype *t = mpii_dtype_get(dt);
    if (!t)
        return mpii_err(MPII_OBJ_FILE, fh, MPI_ERR_TYPE, fn, "datatype: invalid datatype");
    if (!extent)
        return mpii_err(MPII_OBJ_FILE, fh, MPI_ERR_ARG, fn, "extent: NULL pointer");
    *extent = io_file_type_extent(f, t);
    return MPI_SUCCESS;
}

/* ---- data access: explicit offsets ----------------------------------------------------------- */

#define RD FILE_READ
#define WR FILE_WRITE

int b_File_read_at(const char *fn, MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                   MPI_Datatype datatype, MPI_Status *status)
{
    return file_rw(fn, fh, RD, IO_AT, 0, IO_BLOCKING, offset, buf, count, datatype, status, NULL);
}

int b_File_read_at_all(const char *fn, MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                       MPI_Datatype datatype, MPI_Status *status)
{
    return file_rw(fn, fh, RD, IO_AT, 1, IO_BLOCKING, offset, buf, count, datatype, status, NULL);
}

int b_File_write_at(const char *fn, MPI_File fh, MPI_Offset offset, const void *buf,
                    MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    return file_rw(fn, fh, WR, IO_AT, 0, IO_BLOCKING, offset, buf, count, datatype, status, NULL);
}

int b_File_write_at_all(const char *fn, MPI_File fh, MPI_Offset offset, const void *buf,
                        MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    return file_rw(fn, fh, WR, IO_AT, 1, IO_BLOCKING, offset, buf, count, datatype, status, NULL);
}

int b_File_iread_at(const char *fn, MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                    MPI_Datatype datatype, MPI_Request *request)
{
    return file_rw(fn, fh, RD, IO_AT, 0, IO_NONBLOCKING, offset, buf, count, datatype, NULL,
                   request);
}

int b_File_iwrite_at(const char *fn, MPI_File fh, MPI_Offset offset, const void *buf,
                     MPI_Count count, MPI_Datatype datatype, MPI_Request *request)
{
    return file_rw(fn, fh, WR, IO_AT, 0, IO_NONBLOCKING, offset, buf, count, datatype, NULL,
                   request);
}

int b_File_iread_at_all(const char *fn, MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                        MPI_Datatype datatype, MPI_Request *request)
{
    return file_rw(fn, fh, RD, IO_AT, 1, IO_NONBLOCKING, offset, buf, count, datatype, NULL,
                   request);
}

int b_File_iwrite_at_all(const char *fn, MPI_File fh, MPI_Offset offset, const void *buf,
                         MPI_Count count, MPI_Datatype datatype, MPI_Request *request)
{
    return file_rw(fn, fh, WR, IO_AT, 1, IO_NONBLOCKING, offset, buf, count, datatype, NULL,
                   request);
}

/* ---- data access: individual file pointer ------------------------------------------------------
 */

int b_File_read(const char *fn, MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                MPI_Status *status)
{
    return file_rw(fn, fh, RD, IO_INDIV, 0, IO_BLOCKING, 0, buf, count, datatype, status, NULL);
}

int b_File_read_all(const char *fn, MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                    MPI_Status *status)
{
    return file_rw(fn, fh, RD, IO_INDIV, 1, IO_BLOCKING, 0, buf, count, datatype, status, NULL);
}

int b_File_write(const char *fn, MPI_File fh, const void *buf, MPI_Count count,
                 MPI_Datatype datatype, MPI_Status *status)
{
    return file_rw(fn, fh, WR, IO_INDIV, 0, IO_BLOCKING, 0, buf, count, datatype, status, NULL);
}

int b_File_write_all(const char *fn, MPI_File fh, const void *buf, MPI_Count count,
                     MPI_Datatype datatype, MPI_Status *status)
{
    return file_rw(fn, fh, WR, IO_INDIV, 1, IO_BLOCKING, 0, buf, count, datatype, status, NULL);
}

int b_File_iread(const char *fn, MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                 MPI_Request *request)
{
    return file_rw(fn, fh, RD, IO_INDIV, 0, IO_NONBLOCKING, 0, buf, count, datatype, NULL, request);
}

int b_File_iwrite(const char *fn, MPI_File fh, const void *buf, MPI_Count count,
                  MPI_Datatype datatype, MPI_Request *request)
{
    return file_rw(fn, fh, WR, IO_INDIV, 0, IO_NONBLOCKING, 0, buf, count, datatype, NULL, request);
}

int b_File_iread_all(const char *fn, MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                     MPI_Request *request)
{
    return file_rw(fn, fh, RD, IO_INDIV, 1, IO_NONBLOCKING, 0, buf, count, datatype, NULL, request);
}

int b_File_iwrite_all(const char *fn, MPI_File fh, const void *buf, MPI_Count count,
                      MPI_Datatype datatype, MPI_Request *request)
{
    return file_rw(fn, fh, WR, IO_INDIV, 1, IO_NONBLOCKING, 0, buf, count, datatype, NULL, request);
}

/* ---- data access: shared file pointer ----------------------------------------------------------
 */

int b_File_read_shared(const char *fn, MPI_File fh, void *buf, MPI_Count count,
                       MPI_Datatype datatype, MPI_Status *status)
{
    return file_rw(fn, fh, RD, IO_SHARED, 0, IO_BLOCKING, 0, buf, count, datatype, status, NULL);
}

int b_File_write_shared(const char *fn, MPI_File fh, const void *buf, MPI_Count count,
                        MPI_Datatype datatype, MPI_Status *status)
{
    return file_rw(fn, fh, WR, IO_SHARED, 0, IO_BLOCKING, 0, buf, count, datatype, status, NULL);
}

int b_File_iread_shared(const char *fn, MPI_File fh, void *buf, MPI_Count count,
                        MPI_Datatype datatype, MPI_Request *request)
{
    return file_rw(fn, fh, RD, IO_SHARED, 0, IO_NONBLOCKING, 0, buf, count, datatype, NULL,
                   request);
}

int b_File_iwrite_shared(const char *fn, MPI_File fh, const void *buf, MPI_Count count,
                         MPI_Datatype datatype, MPI_Request *request)
{
    return file_rw(fn, fh, WR, IO_SHARED, 0, IO_NONBLOCKING, 0, buf, count, datatype, NULL,
                   request);
}

int b_File_read_ordered(const char *fn, MPI_File fh, void *buf, MPI_Count count,
                        MPI_Datatype datatype, MPI_Status *status)
{
    return file_rw(fn, fh, RD, IO_ORDERED, 1, IO_BLOCKING, 0, buf, count, datatype, status, NULL);
}

int b_File_write_ordered(const char *fn, MPI_File fh, const void *buf, MPI_Count count,
                         MPI_Datatype datatype, MPI_Status *status)
{
    return file_rw(fn, fh, WR, IO_ORDERED, 1, IO_BLOCKING, 0, buf, count, datatype, status, NULL);
}

/* ---- split collectives
 * ----------------------------------------------------------------------------- */

int b_File_read_at_all_begin(const char *fn, MPI_File fh, MPI_Offset offset, void *buf,
                             MPI_Count count, MPI_Datatype datatype)
{
    return file_rw(fn, fh, RD, IO_AT, 1, IO_SPLIT, offset, buf, count, datatype, NULL, NULL);
}

int b_File_read_at_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
    return file_end("MPI_File_read_at_all_end", fh, RD, IO_AT, status);
}

int b_File_write_at_all_begin(const char *fn, MPI_File fh, MPI_Offset offset, const void *buf,
                              MPI_Count count, MPI_Datatype datatype)
{
    return file_rw(fn, fh, WR, IO_AT, 1, IO_SPLIT, offset, buf, count, datatype, NULL, NULL);
}

int b_File_write_at_all_end(MPI_File fh, const void *buf, MPI_Status *status)
{
    return file_end("MPI_File_write_at_all_end", fh, WR, IO_AT, status);
}

int b_File_read_all_begin(const char *fn, MPI_File fh, void *buf, MPI_Count count,
                          MPI_Datatype datatype)
{
    return file_rw(fn, fh, RD, IO_INDIV, 1, IO_SPLIT, 0, buf, count, datatype, NULL, NULL);
}

int b_File_read_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
    return file_end("MPI_File_read_all_end", fh, RD, IO_INDIV, status);
}

int b_File_write_all_begin(const char *fn, MPI_File fh, const void *buf, MPI_Count count,
                           MPI_Datatype datatype)
{
    return file_rw(fn, fh, WR, IO_INDIV, 1, IO_SPLIT, 0, buf, count, datatype, NULL, NULL);
}

int b_File_write_all_end(MPI_File fh, const void *buf, MPI_Status *status)
{
    return file_end("MPI_File_write_all_end", fh, WR, IO_INDIV, status);
}

int b_File_read_ordered_begin(const char *fn, MPI_File fh, void *buf, MPI_Count count,
                              MPI_Datatype datatype)
{
    return file_rw(fn, fh, RD, IO_ORDERED, 1, IO_SPLIT, 0, buf, count, datatype, NULL, NULL);
}

int b_File_read_ordered_end(MPI_File fh, void *buf, MPI_Status *status)
{
    return file_end("MPI_File_read_ordered_end", fh, RD, IO_ORDERED, status);
}

int b_File_write_ordered_begin(const char *fn, MPI_File fh, const void *buf, MPI_Count count,
                               MPI_Datatype datatype)
{
    return file_rw(fn, fh, WR, IO_ORDERED, 1, IO_SPLIT, 0, buf, count, datatype, NULL, NULL);
}

int b_File_write_ordered_end(MPI_File fh, const void *buf, MPI_Status *status)
{
    return file_end("MPI_File_write_ordered_end", fh, WR, IO_ORDERED, status);
}

/* ---- pointers
 * ------------------------------------------------------------------------------------ */

static int file_whence_ok(const char *fn, MPI_File fh, int whence)
{
    if (whence != MPI_SEEK_SET && whence != MPI_SEEK_CUR && whence != MPI_SEEK_END)
        return mpii_err(MPII_OBJ_FILE, fh, MPI_ERR_ARG, fn,
                        "whence=%d is not MPI_SEEK_SET, MPI_SEEK_CUR or MPI_SEEK_END", whence);
    return MPI_SUCCESS;
}

int b_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
    static const char fn[] = "MPI_File_seek";
    io_file *f = NULL;
    int rc = file_get(fn, fh, &f);
    if (rc == MPI_SUCCESS)
        rc = file_whence_ok(fn, fh, whence);
    if (rc != MPI_SUCCESS)
        return rc;
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return mpii_err(MPII_OBJ_FILE, fh, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                        "file '%s': opened with MPI_MODE_SEQUENTIAL", f->name);
    return file_raise(fn, f, io_seek(f, offset, whence));
}

int b_File_get_position(MPI_File fh, MPI_Offset *offset)
{
    static const char fn[] = "MPI_File_get_position";
    io_file *f = NULL;
    int rc = file_get(fn, fh, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!offset)
        return mpii_err(MPII_OBJ_FILE, fh, MPI_ERR_ARG, fn, "offset: NULL pointer");
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return mpii_err(MPII_OBJ_FILE, fh, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                        "file '%s': opened with MPI_MODE_SEQUENTIAL", f->name);
    *offset = f->fp;
    return MPI_SUCCESS;
}

int b_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp)
{
    static const char fn[] = "MPI_File_get_byte_offset";
    io_file *f = NULL;
    int rc = file_get(fn, fh, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!disp)
        return mpii_err(MPII_OBJ_FILE, fh, MPI_ERR_ARG, fn, "disp: NULL pointer");
    if (offset < 0)
        return mpii_err(MPII_OBJ_FILE, fh, MPI_ERR_ARG, fn, "offset=%lld is negative",
                        (long long)offset);
    return file_raise(fn, f, io_byte_offset(f, offset, disp));
}

int b_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
    static const char fn[] = "MPI_File_seek_shared";
    io_file *f = NULL;
    int rc = file_get(fn, fh, &f);
    if (rc == MPI_SUCCESS)
        rc = file_whence_ok(fn, fh, whence);
    if (rc != MPI_SUCCESS)
        return rc;
    return file_raise(fn, f, io_seek_shared(f, offset, whence));
}

int b_File_get_position_shared(MPI_File fh, MPI_Offset *offset)
{
    static const char fn[] = "MPI_File_get_position_shared";
    io_file *f = NULL;
    int rc = file_get(fn, fh, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!offset)
        return mpii_err(MPII_OBJ_FILE, fh, MPI_ERR_ARG, fn, "offset: NULL pointer");
    return file_raise(fn, f, io_position_shared(f, offset));
}

/* ---- consistency
 * ---------------------------------------------------------------------------------- */

int b_File_set_atomicity(MPI_File fh, int flag)
{
    static const char fn[] = "MPI_File_set_atomicity";
    io_file *f = NULL;
    int rc = file_get(fn, fh, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    f->atomic = flag != 0;
    return MPI_SUCCESS;
}

int b_File_get_atomicity(MPI_File fh, int *flag)
{
    static const char fn[] = "MPI_File_get_atomicity";
    io_file *f = NULL;
    int rc = file_get(fn, fh, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!flag)
        return mpii_err(MPII_OBJ_FILE, fh, MPI_ERR_ARG, fn, "flag: NULL pointer");
    *flag = f->atomic;
    return MPI_SUCCESS;
}

int b_File_sync(MPI_File fh)
{
    static const char fn[] = "MPI_File_sync";
    io_file *f = NULL;
    int rc = file_get(fn, fh, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    if (f->split_kind)
        return mpii_err(MPII_OBJ_FILE, fh, MPI_ERR_IO, fn,
                        "file '%s': a split collective access is active", f->name);
    return file_raise(fn, f, io_file_sync(f));
}

/* ---- data representations
 * ------------------------------------------------------------------------- */

static int file_register(const char *fn, const io_datarep *rep, const char *name)
{
    if (!name)
        return mpii_err(MPII_OBJ_FILE, MPI_FILE_NULL, MPI_ERR_ARG, fn, "datarep: NULL pointer");
    if (strnlen(name, MPI_MAX_DATAREP_STRING) >= MPI_MAX_DATAREP_STRING || !name[0])
        return mpii_err(MPII_OBJ_FILE, MPI_FILE_NULL, MPI_ERR_ARG, fn,
                        "datarep: empty or longer than MPI_MAX_DATAREP_STRING-1 characters");
    if (!rep->extent_fn)
        return mpii_err(MPII_OBJ_FILE, MPI_FILE_NULL, MPI_ERR_ARG, fn,
                        "dtype_file_extent_fn: must not be NULL");
    io_datarep r = *rep;
    strcpy(r.name, name);
    if (io_datarep_register(&r) != MPI_SUCCESS)
        return mpii_err(MPII_OBJ_FILE, MPI_FILE_NULL, MPI_ERR_DUP_DATAREP, fn,
                        "datarep '%s': already defined", name);
    return MPI_SUCCESS;
}

int b_Register_datarep(const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
                       MPI_Datarep_conversion_function *write_conversion_fn,
                       MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    io_datarep r;
    memset(&r, 0, sizeof r);
    r.read_fn = read_conversion_fn;
    r.write_fn = write_conversion_fn;
    r.extent_fn = dtype_file_extent_fn;
    r.extra = extra_state;
    return file_register("MPI_Register_datarep", &r, datarep);
}

int b_Register_datarep_c(const char *datarep, MPI_Datarep_conversion_function_c *read_conversion_fn,
                         MPI_Datarep_conversion_function_c *write_conversion_fn,
                         MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    io_datarep r;
    memset(&r, 0, sizeof r);
    r.read_fn_c = read_conversion_fn;
    r.write_fn_c = write_conversion_fn;
    r.extent_fn = dtype_file_extent_fn;
    r.extra = extra_state;
    return file_register("MPI_Register_datarep_c", &r, datarep);
}

/* ---- error handlers
 * -------------------------------------------------------------------------------- */

int b_File_set_errhandler(MPI_File file, MPI_Errhandler eh)
{
    static const char fn[] = "MPI_File_set_errhandler";
    io_file *f = NULL;
    if (file != MPI_FILE_NULL && !(f = io_file_get(file)))
        return mpii_err(MPII_OBJ_FILE, file, MPI_ERR_FILE, fn, "file: invalid file handle");
    if (!mpii_errh_exists(eh))
        return mpii_err(MPII_OBJ_FILE, file, MPI_ERR_ERRHANDLER, fn,
                        "errhandler: invalid error handler");
    if (!mpii_errh_usable(eh, MPII_ERRH_FILE))
        return mpii_err(MPII_OBJ_FILE, file, MPI_ERR_ARG, fn,
                        "errhandler: created for another kind of object");
    if (f)
        io_file_set_errhandler(f, eh);
    else
        mpii_errh_set_file_default(eh);
    return MPI_SUCCESS;
}

int b_File_get_errhandler(MPI_File file, MPI_Errhandler *eh)
{
    static const char fn[] = "MPI_File_get_errhandler";
    if (file != MPI_FILE_NULL && !io_file_get(file))
        return mpii_err(MPII_OBJ_FILE, file, MPI_ERR_FILE, fn, "file: invalid file handle");
    if (!eh)
        return mpii_err(MPII_OBJ_FILE, file, MPI_ERR_ARG, fn, "errhandler: NULL pointer");
    *eh = io_file_errhandler(file);
    mpii_errh_ref(*eh);
    return MPI_SUCCESS;
}

int b_File_call_errhandler(MPI_File file, int errorcode)
{
    if (file != MPI_FILE_NULL && !io_file_get(file))
        return mpii_err(MPII_OBJ_FILE, file, MPI_ERR_FILE, "MPI_File_call_errhandler",
                        "file: invalid file handle");
    mpii_errh_invoke(MPII_OBJ_FILE, file, io_file_errhandler(file), errorcode);
    return MPI_SUCCESS;
}
