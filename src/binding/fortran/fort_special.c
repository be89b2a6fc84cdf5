/* The Fortran routines whose C side is more than argument conversion
 * (tools/gen_fortran.py leaves them out, SPECIAL): spawn (arrays of blank
 * padded strings), keyvals, generalized requests and data representations
 * with Fortran callbacks, and the predefined callbacks Fortran passes.
 * Each routine X has mpi_x_ (calls MPI_X) and pmpi_x_ (calls PMPI_X); the
 * same symbols serve mpif.h, module mpi and module mpi_f08 (whose handles
 * are one INTEGER and whose ierror may be absent: NULL). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "binding/fortran/fort.h"

#pragma GCC diagnostic ignored "-Wmissing-prototypes"

static void set_ierror(MPI_Fint *ierror, int rc)
{
    if (ierror != NULL)
        *ierror = rc;
}

/* ---- spawn: CHARACTER(*) ARGV(*) ends at its first blank element ---------------- */

/* argv of n elements of len chars at a (stride between elements: step
 * elements), up to the first blank one, as a NULL-terminated C array (one
 * allocation); NULL on no memory */
static char **spawn_argv(const char *a, size_t len, size_t step, size_t max)
{
    size_t n = 0, bytes = 0;
    for (; max == 0 || n < max; n++) {
        const char *e = a + n * step * len;
        size_t l = len;
        while (l > 0 && e[l - 1] == ' ')
            l--;
        if (l == 0)
            break;
        bytes += l + 1;
    }
    char **v = malloc((n + 1) * sizeof *v + bytes);
    if (v == NULL)
        return NULL;
    char *p = (char *)(v + n + 1);
    for (size_t i = 0; i < n; i++) {
        const char *e = a + i * step * len;
        size_t l = len;
        while (l > 0 && e[l - 1] == ' ')
            l--;
        while (l > 0 && *e == ' ') {
            e++;
            l--;
        }
        memcpy(p, e, l);
        p[l] = '\0';
        v[i] = p;
        p += l + 1;
    }
    v[n] = NULL;
    return v;
}

static void f_comm_spawn(int prof, const char *command, const char *argv, const MPI_Fint *maxprocs,
                         const MPI_Fint *info, const MPI_Fint *root, const MPI_Fint *comm,
                         MPI_Fint *intercomm, MPI_Fint *errcodes, MPI_Fint *ierror,
                         size_t command_len, size_t argv_len)
{
    char sb[FORT_STR_STACK];
    char *cmd = fort_str_in(command, command_len, sb, FORT_TRIM_BOTH);
    char **cargv = NULL;
    int rc = MPI_ERR_NO_MEM;
    if (cmd == NULL)
        goto done;
    if (argv != dcfa_f_argv_null_ && argv_len > 0) {
        cargv = spawn_argv(argv, argv_len, 1, 0);
        if (cargv == NULL)
            goto done;
    }
    rc = (prof ? PMPI_Comm_spawn : MPI_Comm_spawn)(cmd, cargv, *maxprocs, *info, *root, *comm,
                                                   intercomm, fort_errcodes(errcodes));
done:
    free(cargv);
    if (cmd != NULL)
        fort_str_free(cmd, sb);
    set_ierror(ierror, rc);
}

void mpi_comm_spawn_(const char *command, const char *argv, const MPI_Fint *maxprocs,
                     const MPI_Fint *info, const MPI_Fint *root, const MPI_Fint *comm,
                     MPI_Fint *intercomm, MPI_Fint *errcodes, MPI_Fint *ierror, size_t command_len,
                     size_t argv_len)
{
    f_comm_spawn(0, command, argv, maxprocs, info, root, comm, intercomm, errcodes, ierror,
                 command_len, argv_len);
}

void pmpi_comm_spawn_(const char *command, const char *argv, const MPI_Fint *maxprocs,
                      const MPI_Fint *info, const MPI_Fint *root, const MPI_Fint *comm,
                      MPI_Fint *intercomm, MPI_Fint *errcodes, MPI_Fint *ierror, size_t command_len,
                      size_t argv_len)
{
    f_comm_spawn(1, command, argv, maxprocs, info, root, comm, intercomm, errcodes, ierror,
                 command_len, argv_len);
}

/* ARRAY_OF_ARGV(COUNT, *): the arguments of command i are (i, 1), (i, 2) ... */
static void f_comm_spawn_multiple(int prof, const MPI_Fint *count, const char *commands,
                                  const char *argvs, const MPI_Fint *maxprocs,
                                  const MPI_Fint *infos, const MPI_Fint *root, const MPI_Fint *comm,
                                  MPI_Fint *intercomm, MPI_Fint *errcodes, MPI_Fint *ierror,
                                  size_t commands_len, size_t argvs_len)
{
    int n = *count > 0 ? *count : 0, rc = MPI_ERR_NO_MEM;
    char **cmds = calloc((size_t)n + 1, sizeof *cmds);
    char ***cargvs = NULL;
    if (cmds == NULL)
        goto done;
    if (argvs != dcfa_f_argvs_null_) {
        cargvs = calloc((size_t)n + 1, sizeof *cargvs);
        if (cargvs == NULL)
            goto done;
    }
    for (int i = 0; i < n; i++) {
        char **one = spawn_argv(commands + (size_t)i * commands_len, commands_len, 1, 1);
        if (one == NULL)
            goto done;
        cmds[i] = one[0] != NULL ? strdup(one[0]) : strdup("");
        free(one);
        if (cmds[i] == NULL)
            goto done;
        if (cargvs != NULL) {
            cargvs[i] = spawn_argv(argvs + (size_t)i * argvs_len, argvs_len, (size_t)n, 0);
            if (cargvs[i] == NULL)
                goto done;
        }
    }
    rc = (prof ? PMPI_Comm_spawn_multiple : MPI_Comm_spawn_multiple)(
        n, cmds, cargvs, maxprocs, infos, *root, *comm, intercomm, fort_errcodes(errcodes));
done:
    for (int i = 0; cmds != NULL && i < n; i++)
        free(cmds[i]);
    for (int i = 0; cargvs != NULL && i < n; i++)
        free(cargvs[i]);
    free(cmds);
    free(cargvs);
    set_ierror(ierror, rc);
}

void mpi_comm_spawn_multiple_(const MPI_Fint *count, const char *commands, const char *argvs,
                              const MPI_Fint *maxprocs, const MPI_Fint *infos, const MPI_Fint *root,
                              const MPI_Fint *comm, MPI_Fint *intercomm, MPI_Fint *errcodes,
                              MPI_Fint *ierror, size_t commands_len, size_t argvs_len)
{
    f_comm_spawn_multiple(0, count, commands, argvs, maxprocs, infos, root, comm, intercomm,
                          errcodes, ierror, commands_len, argvs_len);
}

void pmpi_comm_spawn_multiple_(const MPI_Fint *count, const char *commands, const char *argvs,
                               const MPI_Fint *maxprocs, const MPI_Fint *infos,
                               const MPI_Fint *root, const MPI_Fint *comm, MPI_Fint *intercomm,
                               MPI_Fint *errcodes, MPI_Fint *ierror, size_t commands_len,
                               size_t argvs_len)
{
    f_comm_spawn_multiple(1, count, commands, argvs, maxprocs, infos, root, comm, intercomm,
                          errcodes, ierror, commands_len, argvs_len);
}

/* ---- predefined callbacks, callable from Fortran ------------------------------------ */

typedef void f_copy_fn(const MPI_Fint *old, const MPI_Fint *keyval, const void *extra,
                       const void *in, void *out, MPI_Fint *flag, MPI_Fint *ierror);
typedef void f_delete_fn(const MPI_Fint *obj, const MPI_Fint *keyval, const void *val,
                         const void *extra, MPI_Fint *ierror);

void mpi_comm_null_copy_fn_(const MPI_Fint *old, const MPI_Fint *keyval, const MPI_Aint *extra,
                            const MPI_Aint *in, MPI_Aint *out, MPI_Fint *flag, MPI_Fint *ierror)
{
    *flag = 0;
    *ierror = MPI_SUCCESS;
}

void mpi_comm_dup_fn_(const MPI_Fint *old, const MPI_Fint *keyval, const MPI_Aint *extra,
                      const MPI_Aint *in, MPI_Aint *out, MPI_Fint *flag, MPI_Fint *ierror)
{
    *out = *in;
    *flag = 1;
    *ierror = MPI_SUCCESS;
}

void mpi_comm_null_delete_fn_(const MPI_Fint *comm, const MPI_Fint *keyval, const MPI_Aint *val,
                              const MPI_Aint *extra, MPI_Fint *ierror)
{
    *ierror = MPI_SUCCESS;
}

/* the INTEGER forms of MPI_KEYVAL_CREATE (MPI-1) */
void mpi_null_copy_fn_(const MPI_Fint *old, const MPI_Fint *keyval, const MPI_Fint *extra,
                       const MPI_Fint *in, MPI_Fint *out, MPI_Fint *flag, MPI_Fint *ierror)
{
    *flag = 0;
    *ierror = MPI_SUCCESS;
}

void mpi_dup_fn_(const MPI_Fint *old, const MPI_Fint *keyval, const MPI_Fint *extra,
                 const MPI_Fint *in, MPI_Fint *out, MPI_Fint *flag, MPI_Fint *ierror)
{
    *out = *in;
    *flag = 1;
    *ierror = MPI_SUCCESS;
}

void mpi_null_delete_fn_(const MPI_Fint *comm, const MPI_Fint *keyval, const MPI_Fint *val,
                         const MPI_Fint *extra, MPI_Fint *ierror)
{
    *ierror = MPI_SUCCESS;
}

/* the datatype and window forms do the same */
void mpi_type_null_copy_fn_(const MPI_Fint *, const MPI_Fint *, const MPI_Aint *, const MPI_Aint *,
                            MPI_Aint *, MPI_Fint *, MPI_Fint *)
    __attribute__((alias("mpi_comm_null_copy_fn_")));
void mpi_win_null_copy_fn_(const MPI_Fint *, const MPI_Fint *, const MPI_Aint *, const MPI_Aint *,
                           MPI_Aint *, MPI_Fint *, MPI_Fint *)
    __attribute__((alias("mpi_comm_null_copy_fn_")));
void mpi_type_dup_fn_(const MPI_Fint *, const MPI_Fint *, const MPI_Aint *, const MPI_Aint *,
                      MPI_Aint *, MPI_Fint *, MPI_Fint *)
    __attribute__((alias("mpi_comm_dup_fn_")));
void mpi_win_dup_fn_(const MPI_Fint *, const MPI_Fint *, const MPI_Aint *, const MPI_Aint *,
                     MPI_Aint *, MPI_Fint *, MPI_Fint *) __attribute__((alias("mpi_comm_dup_fn_")));
void mpi_type_null_delete_fn_(const MPI_Fint *, const MPI_Fint *, const MPI_Aint *,
                              const MPI_Aint *, MPI_Fint *)
    __attribute__((alias("mpi_comm_null_delete_fn_")));
void mpi_win_null_delete_fn_(const MPI_Fint *, const MPI_Fint *, const MPI_Aint *, const MPI_Aint *,
                             MPI_Fint *) __attribute__((alias("mpi_comm_null_delete_fn_")));

/* MPI_CONVERSION_FN_NULL(_C): only its address is used, to mean "none" */
void mpi_conversion_fn_null_(void *userbuf, const MPI_Fint *datatype, const MPI_Fint *count,
                             void *filebuf, const MPI_Offset *position, const MPI_Aint *extra,
                             MPI_Fint *ierror)
{
    *ierror = MPI_SUCCESS;
}

void mpi_conversion_fn_null_c_(void *userbuf, const MPI_Fint *datatype, const MPI_Count *count,
                               void *filebuf, const MPI_Offset *position, const MPI_Aint *extra,
                               MPI_Fint *ierror)
{
    *ierror = MPI_SUCCESS;
}

/* ---- keyvals with Fortran callbacks ---------------------------------------------------- */

/* The Fortran callbacks and extra_state of each keyval, by keyval number (the
 * attribute layer's keyvals are small indices). The C keyval gets the
 * trampolines below, which find them by the keyval they are called with. A
 * freed keyval's entry is overwritten when its number is reused. */
enum { FKV_ADDR, FKV_INT }; /* attribute values INTEGER(KIND=MPI_ADDRESS_KIND) / INTEGER */
typedef struct fkv {
    f_copy_fn *copy;
    f_delete_fn *del;
    MPI_Aint extra;
    int form;
} fkv;
static fkv *fkv_tab;
static int fkv_len;
static pthread_mutex_t fkv_lock = PTHREAD_MUTEX_INITIALIZER;

static int fkv_set(int keyval, const fkv *e)
{
    int rc = MPI_SUCCESS;
    pthread_mutex_lock(&fkv_lock);
    if (keyval >= fkv_len) {
        int n = keyval + 16;
        fkv *t = realloc(fkv_tab, (size_t)n * sizeof *t);
        if (t == NULL) {
            rc = MPI_ERR_NO_MEM;
        } else {
            memset(t + fkv_len, 0, (size_t)(n - fkv_len) * sizeof *t);
            fkv_tab = t;
            fkv_len = n;
        }
    }
    if (rc == MPI_SUCCESS)
        fkv_tab[keyval] = *e;
    pthread_mutex_unlock(&fkv_lock);
    return rc;
}

static fkv fkv_get(int keyval)
{
    fkv e = {0};
    pthread_mutex_lock(&fkv_lock);
    if (keyval >= 0 && keyval < fkv_len)
        e = fkv_tab[keyval];
    pthread_mutex_unlock(&fkv_lock);
    return e;
}

/* comm, datatype and window callbacks have the same C shape (handles are ints) */
static int fkv_copy(int old, int keyval, void *extra, void *in, void *out, int *flag)
{
    fkv e = fkv_get(keyval);
    MPI_Fint ierr = MPI_SUCCESS, fflag = 0;
    *flag = 0;
    if (e.copy == NULL)
        return MPI_SUCCESS;
    if (e.form == FKV_INT) {
        MPI_Fint fin = (MPI_Fint)(MPI_Aint)in, fout = 0, fextra = (MPI_Fint)e.extra;
        e.copy(&old, &keyval, &fextra, &fin, &fout, &fflag, &ierr);
        if (fflag)
            *(void **)out = (void *)(MPI_Aint)fout;
    } else {
        MPI_Aint fin = (MPI_Aint)in, fout = 0;
        e.copy(&old, &keyval, &e.extra, &fin, &fout, &fflag, &ierr);
        if (fflag)
            *(void **)out = (void *)fout;
    }
    *flag = fflag != 0;
    return ierr;
}

static int fkv_delete(int obj, int keyval, void *val, void *extra)
{
    fkv e = fkv_get(keyval);
    MPI_Fint ierr = MPI_SUCCESS;
    if (e.del == NULL)
        return MPI_SUCCESS;
    if (e.form == FKV_INT) {
        MPI_Fint fval = (MPI_Fint)(MPI_Aint)val, fextra = (MPI_Fint)e.extra;
        e.del(&obj, &keyval, &fval, &fextra, &ierr);
    } else {
        MPI_Aint fval = (MPI_Aint)val;
        e.del(&obj, &keyval, &fval, &e.extra, &ierr);
    }
    return ierr;
}

typedef int c_create_keyval(MPI_Comm_copy_attr_function *, MPI_Comm_delete_attr_function *, int *,
                            void *);

/* create: the C function creating the keyval (MPI_Comm_create_keyval ...: their
 * callback types differ only by the handle type, an int, so they all have the
 * type c_create_keyval); the Fortran predefined callbacks become the C ones */
static void f_create_keyval(c_create_keyval *create, int form, void *copy, void *del,
                            MPI_Fint *keyval, MPI_Aint extra, MPI_Fint *ierror)
{
    MPI_Comm_copy_attr_function *ccopy = fkv_copy;
    MPI_Comm_delete_attr_function *cdel = fkv_delete;
    if (copy == (void *)mpi_comm_null_copy_fn_ || copy == (void *)mpi_null_copy_fn_)
        ccopy = MPI_COMM_NULL_COPY_FN;
    else if (copy == (void *)mpi_comm_dup_fn_ || copy == (void *)mpi_dup_fn_)
        ccopy = MPI_COMM_DUP_FN;
    if (del == (void *)mpi_comm_null_delete_fn_ || del == (void *)mpi_null_delete_fn_)
        cdel = MPI_COMM_NULL_DELETE_FN;
    int rc = create(ccopy, cdel, keyval, NULL);
    if (rc == MPI_SUCCESS) {
        fkv e = {
            .copy = (f_copy_fn *)copy, .del = (f_delete_fn *)del, .extra = extra, .form = form};
        rc = fkv_set(*keyval, &e);
    }
    set_ierror(ierror, rc);
}

void mpi_comm_create_keyval_(void *copy, void *del, MPI_Fint *keyval, const MPI_Aint *extra,
                             MPI_Fint *ierror)
{
    f_create_keyval(MPI_Comm_create_keyval, FKV_ADDR, copy, del, keyval, *extra, ierror);
}
void pmpi_comm_create_keyval_(void *copy, void *del, MPI_Fint *keyval, const MPI_Aint *extra,
                              MPI_Fint *ierror)
{
    f_create_keyval(PMPI_Comm_create_keyval, FKV_ADDR, copy, del, keyval, *extra, ierror);
}
void mpi_type_create_keyval_(void *copy, void *del, MPI_Fint *keyval, const MPI_Aint *extra,
                             MPI_Fint *ierror)
{
    f_create_keyval(MPI_Type_create_keyval, FKV_ADDR, copy, del, keyval, *extra, ierror);
}
void pmpi_type_create_keyval_(void *copy, void *del, MPI_Fint *keyval, const MPI_Aint *extra,
                              MPI_Fint *ierror)
{
    f_create_keyval(PMPI_Type_create_keyval, FKV_ADDR, copy, del, keyval, *extra, ierror);
}
void mpi_win_create_keyval_(void *copy, void *del, MPI_Fint *keyval, const MPI_Aint *extra,
                            MPI_Fint *ierror)
{
    f_create_keyval(MPI_Win_create_keyval, FKV_ADDR, copy, del, keyval, *extra, ierror);
}
void pmpi_win_create_keyval_(void *copy, void *del, MPI_Fint *keyval, const MPI_Aint *extra,
                             MPI_Fint *ierror)
{
    f_create_keyval(PMPI_Win_create_keyval, FKV_ADDR, copy, del, keyval, *extra, ierror);
}
void mpi_keyval_create_(void *copy, void *del, MPI_Fint *keyval, const MPI_Fint *extra,
                        MPI_Fint *ierror)
{
    f_create_keyval(MPI_Keyval_create, FKV_INT, copy, del, keyval, *extra, ierror);
}
void pmpi_keyval_create_(void *copy, void *del, MPI_Fint *keyval, const MPI_Fint *extra,
                         MPI_Fint *ierror)
{
    f_create_keyval(PMPI_Keyval_create, FKV_INT, copy, del, keyval, *extra, ierror);
}

/* ---- generalized requests -------------------------------------------------------------- */

typedef void f_query_fn(MPI_Aint *extra, MPI_Fint *status, MPI_Fint *ierror);
typedef void f_free_fn(MPI_Aint *extra, MPI_Fint *ierror);
typedef void f_cancel_fn(MPI_Aint *extra, MPI_Fint *complete, MPI_Fint *ierror);
/* extra_state is the caller's variable itself, as MPICH passes it: a free
 * function that changes it changes the caller's (MPICH's f77/pt2pt/greqf) */
typedef struct fgreq {
    f_query_fn *query;
    f_free_fn *free;
    f_cancel_fn *cancel;
    MPI_Aint *extra;
} fgreq;

static int fgreq_query(void *extra, MPI_Status *status)
{
    fgreq *g = extra;
    MPI_Fint ierr = MPI_SUCCESS;
    g->query(g->extra, (MPI_Fint *)status, &ierr);
    return ierr;
}

static int fgreq_free(void *extra)
{
    fgreq *g = extra;
    MPI_Fint ierr = MPI_SUCCESS;
    g->free(g->extra, &ierr);
    free(g);
    return ierr;
}

static int fgreq_cancel(void *extra, int complete)
{
    fgreq *g = extra;
    MPI_Fint ierr = MPI_SUCCESS, fcomplete = complete != 0;
    g->cancel(g->extra, &fcomplete, &ierr);
    return ierr;
}

static void f_grequest_start(int prof, void *query, void *freefn, void *cancel, MPI_Aint *extra,
                             MPI_Fint *request, MPI_Fint *ierror)
{
    fgreq *g = malloc(sizeof *g);
    int rc = MPI_ERR_NO_MEM;
    if (g != NULL) {
        g->query = (f_query_fn *)query;
        g->free = (f_free_fn *)freefn;
        g->cancel = (f_cancel_fn *)cancel;
        g->extra = extra;
        rc = (prof ? PMPI_Grequest_start : MPI_Grequest_start)(fgreq_query, fgreq_free,
                                                               fgreq_cancel, g, request);
        if (rc != MPI_SUCCESS)
            free(g);
    }
    set_ierror(ierror, rc);
}

void mpi_grequest_start_(void *query, void *freefn, void *cancel, MPI_Aint *extra,
                         MPI_Fint *request, MPI_Fint *ierror)
{
    f_grequest_start(0, query, freefn, cancel, extra, request, ierror);
}

void pmpi_grequest_start_(void *query, void *freefn, void *cancel, MPI_Aint *extra,
                          MPI_Fint *request, MPI_Fint *ierror)
{
    f_grequest_start(1, query, freefn, cancel, extra, request, ierror);
}

/* ---- data representations -------------------------------------------------------------- */

typedef void f_conv_fn(void *userbuf, MPI_Fint *datatype, void *count, void *filebuf,
                       MPI_Offset *position, MPI_Aint *extra, MPI_Fint *ierror);
typedef void f_extent_fn(MPI_Fint *datatype, MPI_Aint *extent, MPI_Aint *extra, MPI_Fint *ierror);
/* kept for as long as the representation is registered: for the life of the process */
typedef struct fdrep {
    f_conv_fn *read, *write;
    f_extent_fn *extent;
    MPI_Aint extra;
} fdrep;

static int fdrep_call(f_conv_fn *fn, void *userbuf, MPI_Datatype dt, void *count, void *filebuf,
                      MPI_Offset position, void *extra)
{
    fdrep *r = extra;
    MPI_Fint ierr = MPI_SUCCESS;
    fn(userbuf, &dt, count, filebuf, &position, &r->extra, &ierr);
    return ierr;
}
static int fdrep_read(void *u, MPI_Datatype dt, int count, void *f, MPI_Offset pos, void *x)
{
    return fdrep_call(((fdrep *)x)->read, u, dt, &count, f, pos, x);
}
static int fdrep_write(void *u, MPI_Datatype dt, int count, void *f, MPI_Offset pos, void *x)
{
    return fdrep_call(((fdrep *)x)->write, u, dt, &count, f, pos, x);
}
static int fdrep_read_c(void *u, MPI_Datatype dt, MPI_Count count, void *f, MPI_Offset pos, void *x)
{
    return fdrep_call(((fdrep *)x)->read, u, dt, &count, f, pos, x);
}
static int fdrep_write_c(void *u, MPI_Datatype dt, MPI_Count count, void *f, MPI_Offset pos,
                         void *x)
{
    return fdrep_call(((fdrep *)x)->write, u, dt, &count, f, pos, x);
}
static int fdrep_extent(MPI_Datatype dt, MPI_Aint *extent, void *x)
{
    fdrep *r = x;
    MPI_Fint ierr = MPI_SUCCESS;
    r->extent(&dt, extent, &r->extra, &ierr);
    return ierr;
}

static void f_register_datarep(int prof, int big, const char *datarep, void *rd, void *wr,
                               void *ext, const MPI_Aint *extra, MPI_Fint *ierror, size_t len)
{
    char sb[FORT_STR_STACK];
    char *name = fort_str_in(datarep, len, sb, FORT_TRIM_BOTH);
    fdrep *r = malloc(sizeof *r);
    int rc = MPI_ERR_NO_MEM;
    if (name != NULL && r != NULL) {
        int rnull =
            rd == (void *)mpi_conversion_fn_null_ || rd == (void *)mpi_conversion_fn_null_c_;
        int wnull =
            wr == (void *)mpi_conversion_fn_null_ || wr == (void *)mpi_conversion_fn_null_c_;
        r->read = (f_conv_fn *)rd;
        r->write = (f_conv_fn *)wr;
        r->extent = (f_extent_fn *)ext;
        r->extra = *extra;
        if (big)
            rc = (prof ? PMPI_Register_datarep_c : MPI_Register_datarep_c)(
                name, rnull ? NULL : fdrep_read_c, wnull ? NULL : fdrep_write_c, fdrep_extent, r);
        else
            rc = (prof ? PMPI_Register_datarep : MPI_Register_datarep)(
                name, rnull ? NULL : fdrep_read, wnull ? NULL : fdrep_write, fdrep_extent, r);
        if (rc == MPI_SUCCESS)
            r = NULL;
    }
    free(r);
    if (name != NULL)
        fort_str_free(name, sb);
    set_ierror(ierror, rc);
}

void mpi_register_datarep_(const char *datarep, void *rd, void *wr, void *ext,
                           const MPI_Aint *extra, MPI_Fint *ierror, size_t len)
{
    f_register_datarep(0, 0, datarep, rd, wr, ext, extra, ierror, len);
}
void pmpi_register_datarep_(const char *datarep, void *rd, void *wr, void *ext,
                            const MPI_Aint *extra, MPI_Fint *ierror, size_t len)
{
    f_register_datarep(1, 0, datarep, rd, wr, ext, extra, ierror, len);
}
void mpi_register_datarep_c_(const char *datarep, void *rd, void *wr, void *ext,
                             const MPI_Aint *extra, MPI_Fint *ierror, size_t len)
{
    f_register_datarep(0, 1, datarep, rd, wr, ext, extra, ierror, len);
}
void pmpi_register_datarep_c_(const char *datarep, void *rd, void *wr, void *ext,
                              const MPI_Aint *extra, MPI_Fint *ierror, size_t len)
{
    f_register_datarep(1, 1, datarep, rd, wr, ext, extra, ierror, len);
}
