/* MPI-IO on POSIX files (src/mpi/io): file objects, views, independent and
 * collective (two-phase) access, shared file pointers, data representations.
 * See docs/io.md.
 *
 * Files: file.c (objects, open/close, size, hints, atomicity, errors),
 * view.c (views: the filetype's data stream mapped onto file byte runs,
 * data representations), indep.c (independent access: POSIX pread/pwrite,
 * data sieving, byte-range locks), shared.c (shared file pointers),
 * twophase.c (collective access as a schedule: aggregators and the
 * exchange), access.c (what the bindings call: the access routine families).
 *
 * The data path is each rank's own pread/pwrite; the assist daemon is not
 * involved. Every function that can fail returns MPI_SUCCESS or an MPI error
 * class and, on failure, leaves the cause in f->why (for the binding's
 * message, which adds the call, the file name and the rank). */
#ifndef DCFA_MPI_IO_H
#define DCFA_MPI_IO_H

#include "mpi/mpii.h"
#include "core/core.h"

typedef struct io_file io_file;

/* ---- data representations (view.c) ------------------------------------------ */
enum io_rep { IO_REP_NATIVE = 0, IO_REP_EXTERNAL32, IO_REP_USER };

typedef struct io_datarep {
    char name[MPI_MAX_DATAREP_STRING];
    MPI_Datarep_conversion_function *read_fn, *write_fn;
    MPI_Datarep_conversion_function_c *read_fn_c, *write_fn_c;
    MPI_Datarep_extent_function *extent_fn;
    void *extra;
} io_datarep;

/* MPI_Register_datarep(_c): MPI_ERR_DUP_DATAREP if the name is taken (the
 * predefined ones included) */
int io_datarep_register(const io_datarep *rep);
/* the registered representation of that name, NULL if none */
const io_datarep *io_datarep_find(const char *name);
void io_datarep_finalize(void);

/* ---- views (view.c) --------------------------------------------------------------- */
typedef struct io_view {
    MPI_Offset disp;     /* bytes from the start of the file */
    mpii_dtype *et, *ft; /* etype and filetype, a reference held on each */
    size_t esize;        /* bytes of one etype in the file */
    const core_dt *fdt;  /* layout of the filetype in the file: ft->dt or `scaled` */
    core_dt scaled;      /* file layout when the representation changes sizes */
    int has_scaled;
    int rep;      /* enum io_rep */
    int monotone; /* the data stream is in file order, without overlaps */
    char datarep[MPI_MAX_DATAREP_STRING];
} io_view;

/* one contiguous piece of the file */
typedef struct io_run {
    MPI_Offset off, len;
} io_run;

/* a new view of f into *v (the old one released only on success): checks the
 * etype/filetype pair and the representation; references et and ft */
int io_view_make(io_file *f, io_view *v, MPI_Offset disp, mpii_dtype *et, mpii_dtype *ft,
                 const char *datarep);
void io_view_free(io_view *v);
/* a copy holding references of its own (a nonblocking collective keeps the view it started with) */
void io_view_copy(io_view *dst, const io_view *src);
/* the file runs holding bytes [p, p+n) of the view's data stream (p counts
 * data bytes from the view's start, in the file representation): up to max
 * runs, in stream order (which is file order: filetype displacements are
 * monotonic); *covered is the bytes they hold */
int io_view_runs(const io_view *v, MPI_Offset p, MPI_Offset n, io_run *runs, int max,
                 MPI_Offset *covered);
/* file offset of stream byte p */
MPI_Offset io_view_byte(const io_view *v, MPI_Offset p);
/* the number of stream bytes stored before file offset `size` (a file of
 * that size holds them) */
MPI_Offset io_view_bytes_below(const io_view *v, MPI_Offset size);

/* ---- hints (file.c) -------------------------------------------------------------- */
enum io_tri { IO_AUTO = 0, IO_ENABLE, IO_DISABLE };
typedef struct io_hints {
    MPI_Offset cb_buffer_size; /* two-phase window per aggregator and cycle */
    int cb_nodes;              /* aggregators (0: one per node) */
    int cb_read, cb_write;     /* romio_cb_read / romio_cb_write: enum io_tri */
    int ds_read, ds_write;     /* romio_ds_read / romio_ds_write: enum io_tri */
    MPI_Offset ind_rd_buffer_size, ind_wr_buffer_size; /* data sieving buffers */
    MPI_Offset striping_unit; /* 0 none: two-phase domains are aligned to it */
    MPI_Info reserved;        /* other reserved keys the user set, reported back */
} io_hints;

/* ---- file objects (file.c) --------------------------------------------------------- */
struct io_file {
    int handle;
    int fd;
    int rdfd; /* 1 if fd can read (sieving writes need it) */
    int amode;
    char *name;
    mpii_comm *comm; /* a private duplicate of the opening communicator */
    MPI_Errhandler errh;
    io_hints hints;
    int atomic;
    io_view view;
    MPI_Offset fp;   /* individual file pointer, etypes of the view */
    char *shfp_name; /* the shared file pointer lives in this small file */
    int shfp_fd;     /* -1 until first used */
    int naggr;       /* two-phase aggregators: ranks aggr[0..naggr) */
    int *aggr;
    int *node_of; /* node index of each rank of comm */
    int nnodes;
    /* split collective in progress: its request and kind (0 none) */
    int split_kind;
    MPI_Request split_req;
    MPI_Count split_count; /* blocking-style result when the begin completed it */
    int split_err;
    char why[384]; /* cause of the last error */
};

io_file *io_file_get(MPI_File h); /* NULL if not a live file handle */
/* the handler errors on file h are raised with (the default for MPI_FILE_NULL) */
MPI_Errhandler io_file_errhandler(MPI_File h);
void io_file_set_errhandler(io_file *f, MPI_Errhandler eh);

/* collective over comm; *out set only on success */
int io_file_open(mpii_comm *comm, const char *name, int amode, MPI_Info info, io_file **out,
                 char *why, size_t whylen);
/* collective; frees f whatever happens (the cause of an error goes to why) */
int io_file_close(io_file *f, char *why, size_t whylen);
int io_file_delete(const char *name, char *why, size_t whylen);
int io_file_set_size(io_file *f, MPI_Offset size);
int io_file_preallocate(io_file *f, MPI_Offset size);
int io_file_get_size(io_file *f, MPI_Offset *size);
int io_file_sync(io_file *f);
int io_file_set_info(io_file *f, MPI_Info info);
/* the two-phase aggregators for cb_nodes = want (0: one per node) into aggr (room for every
 * rank of f's communicator), in rank order; returns their number */
int io_aggregators(const io_file *f, int want, int *aggr);
MPI_Info io_file_get_info(io_file *f);
int io_file_set_view(io_file *f, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                     const char *datarep, MPI_Info info);
/* extent of datatype in the file under the current view's representation */
MPI_Count io_file_type_extent(io_file *f, mpii_dtype *t);
/* the errno of a failed system call as an MPI error class */
int io_errno_class(int err);
/* records the cause of an error in f->why; returns cls */
int io_fail(io_file *f, int cls, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void io_finalize(void);

/* ---- byte-range locks and whole POSIX transfers (indep.c) ------------------------------ */
/* F_OFD_SETLKW (per open file description, so ranks and file handles of one
 * process exclude each other too); type F_RDLCK / F_WRLCK / F_UNLCK */
int io_lock(int fd, int type, MPI_Offset off, MPI_Offset len);
/* the whole length or an error class (errno kept in *err) */
int io_pwrite_all(int fd, const void *buf, MPI_Offset n, MPI_Offset off, int *err);
/* bytes read (short only at end of file) or -1 with *err set */
MPI_Offset io_pread_all(int fd, void *buf, MPI_Offset n, MPI_Offset off, int *err);

/* ---- one access of a rank ------------------------------------------------------------ */
typedef struct io_req {
    io_file *f;
    const io_view *view; /* the view of the access (f's, or a copy that outlives a change) */
    int write;
    MPI_Offset pos; /* first byte of the view's data stream */
    void *buf;
    MPI_Count count;
    mpii_dtype *mt;                  /* memory datatype */
    int conv;                        /* external32: convert between native and the file */
    MPI_Offset nbytes;               /* packed native bytes: count * size(mt) */
    MPI_Offset fbytes;               /* bytes in the file */
    MPI_Offset esz_native, esz_file; /* one memory element, native and in the file */
    int nosieve; /* no sieving writes: other ranks write between my runs now, without locks */
} io_req;
void io_req_init(io_req *q, io_file *f, int write, MPI_Offset pos, void *buf, MPI_Count count,
                 mpii_dtype *mt);
/* the file-representation byte count of the first `fbytes` bytes read, as
 * native bytes (whole elements when sizes change) */
MPI_Offset io_req_native_bytes(const io_req *q, MPI_Offset fbytes);

/* Independent access (indep.c): all of q now; *done = native bytes moved */
int io_indep(const io_req *q, MPI_Offset *done);

/* Collective access (twophase.c): a schedule on f->comm; completes with the
 * error class agreed by all ranks. Blocking: *done set. Nonblocking: *req is
 * the request handle (its status counts the bytes). */
int io_coll(const io_req *q, int nonblocking, MPI_Offset *done, MPI_Request *req);

/* ---- shared file pointer (shared.c) ----------------------------------------------------- */
int io_shfp_get(io_file *f, MPI_Offset *val);
int io_shfp_set(io_file *f, MPI_Offset val);
int io_shfp_fetch_add(io_file *f, MPI_Offset add, MPI_Offset *old);
void io_shfp_close(io_file *f, int unlink_it);

/* ---- the access routine families (access.c) --------------------------------------------- */
enum io_where { IO_AT = 1, IO_INDIV, IO_SHARED, IO_ORDERED };
enum io_mode { IO_BLOCKING = 0, IO_NONBLOCKING, IO_SPLIT };
/* offset: etypes, used by IO_AT. Blocking: *st gets the byte count (may be
 * MPI_STATUS_IGNORE). Nonblocking: *req. Split: the operation is remembered
 * in f for io_split_end. */
int io_access(io_file *f, int write, int where, int coll, int mode, MPI_Offset offset, void *buf,
              MPI_Count count, MPI_Datatype dt, MPI_Status *st, MPI_Request *req);
/* kind: the same (write, where) the begin had */
int io_split_end(io_file *f, int write, int where, MPI_Status *st);
int io_seek(io_file *f, MPI_Offset offset, int whence);
int io_seek_shared(io_file *f, MPI_Offset offset, int whence);
int io_position_shared(io_file *f, MPI_Offset *pos);
int io_byte_offset(io_file *f, MPI_Offset offset, MPI_Offset *disp);

#endif
