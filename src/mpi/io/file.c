/* File objects: the handle table, open / close / delete, size, sync, hints,
 * atomicity, views, and the errors of the chapter.
 *
 * Opening is collective: rank 0 of the communicator opens first (it alone
 * creates the file, so MPI_MODE_EXCL means what it says), the others open
 * the file it made, then one allgather tells every rank whether all opened
 * it and on which node each rank runs (to pick the two-phase aggregators:
 * by default the lowest rank of each node). The file keeps a private
 * duplicate of the communicator for its collectives. */
#include "mpi/io/io.h"
#include "mpi/comm/comm.h"
#include "mpi/datatype/datatype.h"
#include "mpi/errhan/errhan.h"
#include "mpi/info/info.h"

#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static util_htab io_tab;
static int io_tab_ready;

static void io_tab_setup(void)
{
    if (!io_tab_ready) {
        util_htab_init(&io_tab, sizeof(io_file), 1);
        io_tab_ready = 1;
    }
}

io_file *io_file_get(MPI_File h)
{
    if (MPII_HANDLE_KIND(h) != MPII_KIND_FILE || !io_tab_ready)
        return NULL;
    return util_htab_get(&io_tab, MPII_HANDLE_INDEX(h));
}

MPI_Errhandler io_file_errhandler(MPI_File h)
{
    io_file *f = io_file_get(h);
    return f ? f->errh : mpii_errh_file_default();
}

void io_file_set_errhandler(io_file *f, MPI_Errhandler eh)
{
    mpii_errh_ref(eh);
    mpii_errh_release(f->errh);
    f->errh = eh;
}

/* ---- errors ------------------------------------------------------------------------- */

int io_errno_class(int err)
{
    switch (err) {
    case 0:
        return MPI_SUCCESS;
    case ENOENT:
        return MPI_ERR_NO_SUCH_FILE;
    case EACCES:
    case EPERM:
        return MPI_ERR_ACCESS;
    case EEXIST:
        return MPI_ERR_FILE_EXISTS;
    case EROFS:
        return MPI_ERR_READ_ONLY;
    case ENOSPC:
    case EFBIG:
        return MPI_ERR_NO_SPACE;
    case EDQUOT:
        return MPI_ERR_QUOTA;
    case ENAMETOOLONG:
    case ENOTDIR:
    case EISDIR:
    case ELOOP:
        return MPI_ERR_BAD_FILE;
    case EBUSY:
    case ETXTBSY:
        return MPI_ERR_FILE_IN_USE;
    case ENOMEM:
        return MPI_ERR_NO_MEM;
    default:
        return MPI_ERR_IO;
    }
}

int io_fail(io_file *f, int cls, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->why, sizeof f->why, fmt, ap);
    va_end(ap);
    return cls;
}

/* ---- hints ---------------------------------------------------------------------------- */

static const char *const io_reserved_keys[] = {
    "access_style", "cb_block_size", "chunked", "chunked_item", "chunked_size",    "filename",
    "file_perm",    "io_node_list",  "nb_proc", "num_io_nodes", "striping_factor", "cb_config_list",
};

static void hints_default(io_hints *h)
{
    memset(h, 0, sizeof *h);
    h->cb_buffer_size = (MPI_Offset)util_cfg.io_cb_buffer;
    if (h->cb_buffer_size <= 0)
        h->cb_buffer_size = 16 << 20;
    h->cb_nodes = util_cfg.io_cb_nodes;
    h->cb_read = h->cb_write = util_cfg.io_cb;
    h->ds_read = h->ds_write = util_cfg.io_ds;
    h->ind_rd_buffer_size = h->ind_wr_buffer_size =
        util_cfg.io_ind_buffer > 0 ? (MPI_Offset)util_cfg.io_ind_buffer : 4 << 20;
    h->reserved = MPI_INFO_NULL;
}

static int hint_size(const char *v, MPI_Offset *out)
{
    char *end;
    long long x = strtoll(v, &end, 10);
    if (end == v || *end || x <= 0)
        return 0;
    *out = x;
    return 1;
}

static int hint_tri(const char *v, int *out)
{
    if (!strcmp(v, "enable") || !strcmp(v, "true"))
        *out = IO_ENABLE;
    else if (!strcmp(v, "disable") || !strcmp(v, "false"))
        *out = IO_DISABLE;
    else if (!strcmp(v, "automatic"))
        *out = IO_AUTO;
    else
        return 0;
    return 1;
}

/* applies the hints of info (values that do not parse are ignored, as are unknown keys) */
static void hints_apply(io_hints *h, MPI_Info info)
{
    if (info == MPI_INFO_NULL || !mpii_info_exists(info))
        return;
    int n = mpii_info_nkeys(info);
    for (int i = 0; i < n; i++) {
        const char *k = mpii_info_nthkey(info, i), *v = mpii_info_lookup(info, k);
        MPI_Offset x;
        int t;
        if (!strcmp(k, "cb_buffer_size") && hint_size(v, &x))
            h->cb_buffer_size = x;
        else if (!strcmp(k, "cb_nodes") && hint_size(v, &x))
            h->cb_nodes = x > INT_MAX ? INT_MAX : (int)x;
        else if (!strcmp(k, "romio_cb_read") && hint_tri(v, &t))
            h->cb_read = t;
        else if (!strcmp(k, "romio_cb_write") && hint_tri(v, &t))
            h->cb_write = t;
        else if (!strcmp(k, "collective_buffering") && hint_tri(v, &t))
            h->cb_read = h->cb_write = t;
        else if (!strcmp(k, "romio_ds_read") && hint_tri(v, &t))
            h->ds_read = t;
        else if (!strcmp(k, "romio_ds_write") && hint_tri(v, &t))
            h->ds_write = t;
        else if (!strcmp(k, "ind_rd_buffer_size") && hint_size(v, &x))
            h->ind_rd_buffer_size = x;
        else if (!strcmp(k, "ind_wr_buffer_size") && hint_size(v, &x))
            h->ind_wr_buffer_size = x;
        else if (!strcmp(k, "striping_unit") && hint_size(v, &x))
            h->striping_unit = x;
        else
            for (size_t j = 0; j < sizeof io_reserved_keys / sizeof *io_reserved_keys; j++)
                if (!strcmp(k, io_reserved_keys[j])) {
                    if (h->reserved == MPI_INFO_NULL)
                        h->reserved = mpii_info_new();
                    mpii_info_set(h->reserved, k, v);
                }
    }
}

/* aggregators: ranks spread over the nodes, node by node, lowest ranks first */
int io_aggregators(const io_file *f, int want, int *aggr)
{
    int size = f->comm->size;
    if (want <= 0)
        want = f->nnodes;
    if (want > size)
        want = size;
    int *next = util_calloc((size_t)f->nnodes, sizeof *next); /* per node: ranks taken */
    int n = 0;
    while (n < want) {
        for (int node = 0; node < f->nnodes && n < want; node++) {
            /* the next[node]-th rank of this node */
            int seen = 0;
            for (int r = 0; r < size; r++)
                if (f->node_of[r] == node && seen++ == next[node]) {
                    aggr[n++] = r;
                    next[node]++;
                    break;
                }
        }
    }
    free(next);
    /* in rank order: a rank finds its own index by search */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && aggr[j - 1] > aggr[j]; j--) {
            int t = aggr[j];
            aggr[j] = aggr[j - 1];
            aggr[j - 1] = t;
        }
    return n;
}

static void hints_aggregators(io_file *f)
{
    free(f->aggr);
    f->aggr = util_malloc((size_t)f->comm->size * sizeof *f->aggr);
    f->naggr = io_aggregators(f, f->hints.cb_nodes, f->aggr);
}

static const char *tri_name(int t)
{
    return t == IO_ENABLE ? "enable" : t == IO_DISABLE ? "disable" : "automatic";
}

int io_file_set_info(io_file *f, MPI_Info info)
{
    hints_apply(&f->hints, info);
    hints_aggregators(f);
    return MPI_SUCCESS;
}

MPI_Info io_file_get_info(io_file *f)
{
    const io_hints *h = &f->hints;
    MPI_Info info = mpii_info_new();
    char v[64];
    snprintf(v, sizeof v, "%lld", (long long)h->cb_buffer_size);
    mpii_info_set(info, "cb_buffer_size", v);
    snprintf(v, sizeof v, "%d", f->naggr);
    mpii_info_set(info, "cb_nodes", v);
    mpii_info_set(info, "romio_cb_read", tri_name(h->cb_read));
    mpii_info_set(info, "romio_cb_write", tri_name(h->cb_write));
    mpii_info_set(info, "romio_ds_read", tri_name(h->ds_read));
    mpii_info_set(info, "romio_ds_write", tri_name(h->ds_write));
    snprintf(v, sizeof v, "%lld", (long long)h->ind_rd_buffer_size);
    mpii_info_set(info, "ind_rd_buffer_size", v);
    snprintf(v, sizeof v, "%lld", (long long)h->ind_wr_buffer_size);
    mpii_info_set(info, "ind_wr_buffer_size", v);
    if (h->striping_unit > 0) {
        snprintf(v, sizeof v, "%lld", (long long)h->striping_unit);
        mpii_info_set(info, "striping_unit", v);
    }
    if (h->reserved != MPI_INFO_NULL) {
        int n = mpii_info_nkeys(h->reserved);
        for (int i = 0; i < n; i++) {
            const char *k = mpii_info_nthkey(h->reserved, i);
            mpii_info_set(info, k, mpii_info_lookup(h->reserved, k));
        }
    }
    return info;
}

/* ---- open and close ---------------------------------------------------------------------- */

/* ROMIO-style file system prefixes ("ufs:name") name the same POSIX file */
static const char *io_strip_prefix(const char *name)
{
    static const char *const pfx[] = {
        "ufs:", "nfs:", "lustre:", "gpfs:", "pvfs2:", "xfs:", "panfs:", "testfs:"};
    for (size_t i = 0; i < sizeof pfx / sizeof *pfx; i++)
        if (!strncmp(name, pfx[i], strlen(pfx[i])))
            return name + strlen(pfx[i]);
    return name;
}

/* open with the access the amode gives; a write-only file is opened
 * read-write when permitted so that sieving writes can read (*rd says) */
static int io_posix_open(const char *name, int amode, int create, mode_t perm, int *rd)
{
    int acc = (amode & MPI_MODE_RDONLY) ? O_RDONLY : (amode & MPI_MODE_WRONLY) ? O_WRONLY : O_RDWR;
    int flags = O_CLOEXEC;
    if (create && (amode & MPI_MODE_CREATE))
        flags |= O_CREAT;
    if (create && (amode & MPI_MODE_EXCL))
        flags |= O_EXCL;
    int fd = -1;
    if (acc == O_WRONLY) {
        fd = open(name, flags | O_RDWR, perm);
        if (fd >= 0) {
            *rd = 1;
            return fd;
        }
        if (errno != EACCES && errno != EPERM)
            return -1;
    }
    fd = open(name, flags | acc, perm);
    *rd = acc != O_WRONLY;
    return fd;
}

static uint64_t io_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* where the shared file pointer of `name` lives: a hidden file next to it,
 * or in /tmp when that directory cannot be written */
static void io_shfp_path(const char *name, char *out, size_t len)
{
    static unsigned seq;
    char dir[PATH_MAX];
    const char *slash = strrchr(name, '/');
    const char *base = slash ? slash + 1 : name;
    if (slash) {
        size_t n = (size_t)(slash - name);
        if (n >= sizeof dir)
            n = sizeof dir - 1;
        memcpy(dir, name, n);
        dir[n] = 0;
        if (n == 0)
            strcpy(dir, "/");
    } else {
        strcpy(dir, ".");
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    unsigned long long id = ((unsigned long long)getpid() << 20) ^ (unsigned long long)ts.tv_nsec ^
                            ((unsigned long long)seq++ << 40);
    int n = -1;
    if (access(dir, W_OK) == 0)
        n = snprintf(out, len, "%s/.%s.%llx.shfp", dir, base, id);
    if (n < 0 || (size_t)n >= len)
        snprintf(out, len, "/tmp/.dcfa-%llx-%llx.shfp", (unsigned long long)io_hash(name), id);
}

static int io_perm(MPI_Info info, mode_t *perm)
{
    *perm = 0666;
    const char *v = info != MPI_INFO_NULL && mpii_info_exists(info)
                        ? mpii_info_lookup(info, "file_perm")
                        : NULL;
    if (v) {
        char *end;
        long p = strtol(v, &end, 8);
        if (end != v && !*end && p >= 0 && p <= 07777)
            *perm = (mode_t)p;
    }
    return 0;
}

typedef struct io_open_hdr {
    int err; /* errno of rank 0's open */
    char shfp[PATH_MAX];
} io_open_hdr;

int io_file_open(mpii_comm *comm, const char *uname, int amode, MPI_Info info, io_file **out,
                 char *why, size_t whylen)
{
    const char *name = io_strip_prefix(uname);
    mpii_comm *dc;
    int rc = mpii_comm_dup(comm, MPI_INFO_NULL, 0, &dc);
    if (rc != MPI_SUCCESS) {
        snprintf(why, whylen, "duplicating the communicator failed");
        return rc;
    }
    mpii_errh_release(dc->errhandler); /* errors of its requests return to the I/O layer */
    dc->errhandler = MPI_ERRORS_RETURN;
    mode_t perm;
    io_perm(info, &perm);

    io_open_hdr *hdr = util_calloc(1, sizeof *hdr);
    int fd = -1, rd = 0, err = 0;
    if (dc->rank == 0) {
        fd = io_posix_open(name, amode, 1, perm, &rd);
        if (fd < 0)
            hdr->err = errno;
        else
            io_shfp_path(name, hdr->shfp, sizeof hdr->shfp);
    }
    rc = mpii_bcast(hdr, (MPI_Aint)sizeof *hdr, MPI_BYTE, 0, dc);
    if (rc == MPI_SUCCESS && hdr->err) {
        snprintf(why, whylen, "cannot open: %s", strerror(hdr->err));
        rc = io_errno_class(hdr->err);
    }
    if (rc != MPI_SUCCESS)
        goto fail_comm;
    if (dc->rank != 0) {
        fd = io_posix_open(name, amode, 0, perm, &rd);
        if (fd < 0)
            err = errno;
    }
    /* every rank: (errno, node) */
    long long mine[2] = {err, (long long)io_hash(util_node_key())};
    long long *all = util_malloc((size_t)dc->size * 2 * sizeof *all);
    rc = mpii_allgather(mine, 2, MPI_LONG_LONG, all, 2, MPI_LONG_LONG, dc);
    if (rc != MPI_SUCCESS)
        goto fail_all;
    for (int r = 0; r < dc->size; r++)
        if (all[2 * r]) {
            int e = (int)all[2 * r];
            snprintf(why, whylen, "cannot open%s: %s",
                     r == dc->rank ? "" : " on another rank of the communicator", strerror(e));
            rc = io_errno_class(e);
            goto fail_all;
        }

    io_tab_setup();
    int idx;
    io_file *f = util_htab_alloc(&io_tab, &idx);
    f->handle = MPII_HANDLE(MPII_KIND_FILE, idx);
    f->fd = fd;
    f->rdfd = rd;
    f->amode = amode;
    f->name = util_strdup(name);
    f->comm = dc;
    f->errh = mpii_errh_file_default();
    mpii_errh_ref(f->errh);
    f->shfp_name = util_strdup(hdr->shfp);
    f->shfp_fd = -1;
    f->node_of = util_malloc((size_t)dc->size * sizeof *f->node_of);
    for (int r = 0; r < dc->size; r++) {
        int node = -1;
        for (int q = 0; q < r && node < 0; q++)
            if (all[2 * q + 1] == all[2 * r + 1])
                node = f->node_of[q];
        f->node_of[r] = node >= 0 ? node : f->nnodes++;
    }
    hints_default(&f->hints);
    hints_apply(&f->hints, info);
    hints_aggregators(f);
    io_view_make(f, &f->view, 0, mpii_dtype_get(MPI_BYTE), mpii_dtype_get(MPI_BYTE), "native");
    free(all);
    free(hdr);
    if (amode & MPI_MODE_APPEND) {
        struct stat sb;
        if (fstat(fd, &sb) == 0)
            f->fp = sb.st_size;
        if (dc->rank == 0)
            rc = io_shfp_set(f, f->fp);
        int rc2 = mpii_barrier(dc);
        if (rc == MPI_SUCCESS)
            rc = rc2;
        if (rc != MPI_SUCCESS) {
            snprintf(why, whylen, "%s", f->why);
            io_file_close(f, NULL, 0);
            return rc;
        }
    }
    *out = f;
    return MPI_SUCCESS;

fail_all:
    free(all);
    if (fd >= 0)
        close(fd);
fail_comm:
    free(hdr);
    mpii_comm_free(dc);
    return rc;
}

int io_file_close(io_file *f, char *why, size_t whylen)
{
    int rc = MPI_SUCCESS;
    if (f->split_kind) {
        MPI_Status st;
        io_split_end(f, f->split_kind >> 4, f->split_kind & 15, &st);
    }
    rc = mpii_barrier(f->comm); /* every rank's accesses are done */
    if (close(f->fd) != 0 && rc == MPI_SUCCESS)
        rc = io_fail(f, io_errno_class(errno), "close: %s", strerror(errno));
    io_shfp_close(f, f->comm->rank == 0);
    if ((f->amode & MPI_MODE_DELETE_ON_CLOSE) && f->comm->rank == 0 && unlink(f->name) != 0 &&
        rc == MPI_SUCCESS)
        rc = io_fail(f, io_errno_class(errno), "deleting on close: %s", strerror(errno));
    io_view_free(&f->view);
    if (f->hints.reserved != MPI_INFO_NULL)
        mpii_info_free(f->hints.reserved);
    mpii_errh_release(f->errh);
    mpii_comm_free(f->comm);
    free(f->name);
    free(f->shfp_name);
    free(f->aggr);
    free(f->node_of);
    if (why)
        snprintf(why, whylen, "%s", f->why);
    util_htab_free(&io_tab, MPII_HANDLE_INDEX(f->handle));
    return rc;
}

int io_file_delete(const char *uname, char *why, size_t whylen)
{
    const char *name = io_strip_prefix(uname);
    if (unlink(name) == 0)
        return MPI_SUCCESS;
    int e = errno;
    snprintf(why, whylen, "cannot delete '%s': %s", name, strerror(e));
    return io_errno_class(e);
}

/* Files a program did not close (erroneous, but common): after MPI_Finalize's
 * barrier nobody accesses them any more; their descriptors are closed and
 * the shared-pointer side file removed, the objects freed. */
void io_finalize(void)
{
    if (io_tab_ready) {
        for (int i = 1; i < io_tab.next_unused; i++) {
            io_file *f = util_htab_get(&io_tab, i);
            if (!f)
                continue;
            close(f->fd);
            io_shfp_close(f, f->comm->rank == 0);
            io_view_free(&f->view);
            if (f->hints.reserved != MPI_INFO_NULL)
                mpii_info_free(f->hints.reserved);
            mpii_errh_release(f->errh);
            mpii_comm_release(f->comm);
            free(f->name);
            free(f->shfp_name);
            free(f->aggr);
            free(f->node_of);
            util_htab_free(&io_tab, i);
        }
        util_htab_destroy(&io_tab);
        io_tab_ready = 0;
    }
    io_datarep_finalize();
}

/* ---- size, sync, atomicity, views ----------------------------------------------------------- */

/* rank 0 runs op after every rank arrived; everyone returns its result */
static int io_rank0_op(io_file *f, int (*op)(io_file *, MPI_Offset), MPI_Offset arg)
{
    int rc = mpii_barrier(f->comm);
    if (rc != MPI_SUCCESS)
        return io_fail(f, rc, "the barrier before the operation failed");
    int res[2] = {MPI_SUCCESS, 0};
    if (f->comm->rank == 0) {
        res[0] = op(f, arg);
        res[1] = errno;
    }
    rc = mpii_bcast(res, 2, MPI_INT, 0, f->comm);
    if (rc != MPI_SUCCESS)
        return io_fail(f, rc, "broadcasting the result failed");
    if (res[0] != MPI_SUCCESS && f->comm->rank != 0)
        io_fail(f, res[0], "failed on rank 0 of the file's communicator: %s", strerror(res[1]));
    return res[0];
}

static int io_op_truncate(io_file *f, MPI_Offset size)
{
    if (ftruncate(f->fd, size) == 0)
        return MPI_SUCCESS;
    return io_fail(f, io_errno_class(errno), "ftruncate to %lld bytes: %s", (long long)size,
                   strerror(errno));
}

static int io_op_allocate(io_file *f, MPI_Offset size)
{
    if (size == 0)
        return MPI_SUCCESS;
    int e = posix_fallocate(f->fd, 0, size);
    if (e == 0)
        return MPI_SUCCESS;
    errno = e;
    return io_fail(f, io_errno_class(e), "posix_fallocate of %lld bytes: %s", (long long)size,
                   strerror(e));
}

int io_file_set_size(io_file *f, MPI_Offset size) { return io_rank0_op(f, io_op_truncate, size); }

int io_file_preallocate(io_file *f, MPI_Offset size)
{
    return io_rank0_op(f, io_op_allocate, size);
}

int io_file_get_size(io_file *f, MPI_Offset *size)
{
    struct stat sb;
    if (fstat(f->fd, &sb) != 0)
        return io_fail(f, io_errno_class(errno), "fstat: %s", strerror(errno));
    *size = sb.st_size;
    return MPI_SUCCESS;
}

int io_file_sync(io_file *f)
{
    if (fsync(f->fd) != 0 && errno != EINVAL && errno != EROFS)
        return io_fail(f, io_errno_class(errno), "fsync: %s", strerror(errno));
    return MPI_SUCCESS;
}

int io_file_set_view(io_file *f, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                     const char *datarep, MPI_Info info)
{
    int rc = MPI_SUCCESS;
    if (disp == MPI_DISPLACEMENT_CURRENT) {
        MPI_Offset sh;
        rc = io_shfp_get(f, &sh);
        if (rc == MPI_SUCCESS)
            disp = io_view_byte(&f->view, sh * (MPI_Offset)f->view.esize);
    }
    io_view v;
    memset(&v, 0, sizeof v);
    if (rc == MPI_SUCCESS)
        rc = io_view_make(f, &v, disp, mpii_dtype_get(etype), mpii_dtype_get(filetype), datarep);
    /* Every rank takes the new view or none does (a rank that returned on its own
     * left the others waiting below), and the shared pointer goes back to 0 once
     * every rank is here, so no earlier shared access is lost */
    int all = MPI_SUCCESS, rc2 = mpii_allreduce(&rc, &all, 1, MPI_INT, MPI_MAX, f->comm);
    if (rc2 != MPI_SUCCESS && rc == MPI_SUCCESS)
        rc = io_fail(f, rc2, "agreeing on the view failed");
    if (rc == MPI_SUCCESS && all != MPI_SUCCESS)
        rc = io_fail(f, all, "the view was refused on another rank of the file's communicator");
    if (rc != MPI_SUCCESS) {
        io_view_free(&v);
        return rc;
    }
    io_view_free(&f->view);
    io_view_copy(&f->view, &v);
    io_view_free(&v);
    hints_apply(&f->hints, info);
    hints_aggregators(f);
    f->fp = 0;
    if (f->comm->rank == 0 && access(f->shfp_name, F_OK) == 0)
        rc = io_shfp_set(f, 0);
    rc2 = mpii_barrier(f->comm); /* nobody uses the shared pointer before it is reset */
    return rc != MPI_SUCCESS ? rc : rc2;
}

MPI_Count io_file_type_extent(io_file *f, mpii_dtype *t)
{
    if (f->view.rep != IO_REP_EXTERNAL32)
        return t->dt.extent;
    MPI_Count es = mpii_dtype_external32_size(t);
    if (es == (MPI_Count)t->dt.size)
        return t->dt.extent;
    if (t->dt.contig && t->dt.extent == (ptrdiff_t)t->dt.size)
        return es;
    return t->dt.extent + (es - (MPI_Count)t->dt.size);
}
