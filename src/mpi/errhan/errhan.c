/* Error handlers, error classes and codes, and mpii_err(): how every error
 * of the library reaches the user. See errhan.h for the code space. */
#include "mpi/errhan/errhan.h"
#include "mpi/comm/dpm.h"
#include "assist/assist.h"
#include "mpi/io/io.h"
#include "mpi/osc/osc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- error handler objects ---------------------------------------------------- */

typedef struct errh_obj {
    enum mpii_errh_kind kind; /* MPII_ERRH_ANY for the predefined ones */
    int refcount;
    mpii_errh_fn fn;
} errh_obj;

#define ERRH_NPREDEF 4 /* NULL, ARE_FATAL, RETURN, ABORT */

static util_htab errh_tab;
static int errh_ready;
static MPI_Errhandler errh_file_default = MPI_ERRORS_RETURN;

static void errh_setup(void)
{
    if (errh_ready)
        return;
    util_htab_init(&errh_tab, sizeof(errh_obj), ERRH_NPREDEF);
    errh_ready = 1;
}

int mpii_errh_init(void)
{
    errh_setup();
    return MPI_SUCCESS;
}

/* the runtime runs (MPI_Init or a session): communicators and windows exist */
static int errh_live(void) { return mpii_live; }

/* A communicator or window whose handler the program never set (MPI_ERRHANDLER_NULL,
 * MPI_COMM_WORLD and MPI_COMM_SELF included, and what they pass on to the objects made from
 * them) uses MPI_COMM_WORLD's handler as it is at the time of the error, as MPICH does: a
 * handler set on MPI_COMM_WORLD after the object was made still applies to it. MPI 4.1 9.3
 * has a new communicator inherit its parent's handler when it is made; the two differ only
 * for objects made before MPI_COMM_WORLD's handler changed, where ours returns the error
 * like MPICH instead of ending the job. */
MPI_Errhandler mpii_errh_or_default(MPI_Errhandler eh)
{
    if (eh != MPI_ERRHANDLER_NULL)
        return eh;
    mpii_comm *world = errh_live() ? mpii_comm_get(MPI_COMM_WORLD) : NULL;
    if (world && world->errhandler != MPI_ERRHANDLER_NULL)
        return world->errhandler;
    return MPI_ERRORS_ARE_FATAL;
}

static errh_obj *errh_get(MPI_Errhandler eh)
{
    if (MPII_HANDLE_KIND(eh) != MPII_KIND_ERRH)
        return NULL;
    errh_setup();
    return util_htab_get(&errh_tab, MPII_HANDLE_INDEX(eh));
}

static int errh_predefined(MPI_Errhandler eh)
{
    return eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_RETURN || eh == MPI_ERRORS_ABORT;
}

MPI_Errhandler mpii_errh_create(enum mpii_errh_kind kind, mpii_errh_fn fn)
{
    int idx;
    errh_setup();
    errh_obj *o = util_htab_alloc(&errh_tab, &idx);
    o->kind = kind;
    o->refcount = 1;
    o->fn = fn;
    return MPII_HANDLE(MPII_KIND_ERRH, idx);
}

int mpii_errh_exists(MPI_Errhandler eh)
{
    return errh_predefined(eh) || (MPII_HANDLE_INDEX(eh) >= ERRH_NPREDEF && errh_get(eh));
}

int mpii_errh_usable(MPI_Errhandler eh, enum mpii_errh_kind kind)
{
    if (errh_predefined(eh))
        return 1;
    errh_obj *o = MPII_HANDLE_INDEX(eh) >= ERRH_NPREDEF ? errh_get(eh) : NULL;
    return o && o->kind == kind;
}

void mpii_errh_ref(MPI_Errhandler eh)
{
    errh_obj *o = MPII_HANDLE_INDEX(eh) >= ERRH_NPREDEF ? errh_get(eh) : NULL;
    if (o)
        o->refcount++;
}

void mpii_errh_release(MPI_Errhandler eh)
{
    errh_obj *o = MPII_HANDLE_INDEX(eh) >= ERRH_NPREDEF ? errh_get(eh) : NULL;
    if (o && --o->refcount == 0)
        util_htab_free(&errh_tab, MPII_HANDLE_INDEX(eh));
}

MPI_Errhandler mpii_errh_file_default(void) { return errh_file_default; }

void mpii_errh_set_file_default(MPI_Errhandler eh)
{
    mpii_errh_ref(eh);
    mpii_errh_release(errh_file_default);
    errh_file_default = eh;
}

/* ---- predefined classes ---------------------------------------------------------- */

typedef struct err_class_desc {
    const char *name;
    const char *text;
} err_class_desc;

static const err_class_desc err_classes[MPII_ERR_NCLASSES] = {
    [MPI_SUCCESS] = {"MPI_SUCCESS", "no error"},
    [MPI_ERR_BUFFER] = {"MPI_ERR_BUFFER", "invalid buffer pointer"},
    [MPI_ERR_COUNT] = {"MPI_ERR_COUNT", "invalid count argument"},
    [MPI_ERR_TYPE] = {"MPI_ERR_TYPE", "invalid datatype"},
    [MPI_ERR_TAG] = {"MPI_ERR_TAG", "invalid tag argument"},
    [MPI_ERR_COMM] = {"MPI_ERR_COMM", "invalid communicator"},
    [MPI_ERR_RANK] = {"MPI_ERR_RANK", "invalid rank"},
    [MPI_ERR_ROOT] = {"MPI_ERR_ROOT", "invalid root"},
    [MPI_ERR_GROUP] = {"MPI_ERR_GROUP", "invalid group"},
    [MPI_ERR_OP] = {"MPI_ERR_OP", "invalid reduction operation"},
    [MPI_ERR_TOPOLOGY] = {"MPI_ERR_TOPOLOGY", "invalid topology"},
    [MPI_ERR_DIMS] = {"MPI_ERR_DIMS", "invalid dimension argument"},
    [MPI_ERR_ARG] = {"MPI_ERR_ARG", "invalid argument of some other kind"},
    [MPI_ERR_UNKNOWN] = {"MPI_ERR_UNKNOWN", "unknown error"},
    [MPI_ERR_TRUNCATE] = {"MPI_ERR_TRUNCATE", "message truncated on receive"},
    [MPI_ERR_OTHER] = {"MPI_ERR_OTHER", "known error not in this list"},
    [MPI_ERR_INTERN] = {"MPI_ERR_INTERN", "internal MPI (implementation) error"},
    [MPI_ERR_IN_STATUS] = {"MPI_ERR_IN_STATUS", "error code is in status"},
    [MPI_ERR_PENDING] = {"MPI_ERR_PENDING", "pending request"},
    [MPI_ERR_REQUEST] = {"MPI_ERR_REQUEST", "invalid request (handle)"},
    [MPI_ERR_ACCESS] = {"MPI_ERR_ACCESS", "permission denied"},
    [MPI_ERR_AMODE] = {"MPI_ERR_AMODE", "error related to the amode passed to MPI_FILE_OPEN"},
    [MPI_ERR_BAD_FILE] = {"MPI_ERR_BAD_FILE", "invalid file name"},
    [MPI_ERR_CONVERSION] = {"MPI_ERR_CONVERSION",
                            "an error occurred in a user supplied data conversion function"},
    [MPI_ERR_DUP_DATAREP] = {"MPI_ERR_DUP_DATAREP",
                             "conversion functions could not be registered because a data "
                             "representation identifier that was already defined was passed"},
    [MPI_ERR_FILE_EXISTS] = {"MPI_ERR_FILE_EXISTS", "file exists"},
    [MPI_ERR_FILE_IN_USE] = {"MPI_ERR_FILE_IN_USE",
                             "file operation could not be completed, as the file is currently "
                             "open by some process"},
    [MPI_ERR_FILE] = {"MPI_ERR_FILE", "invalid file handle"},
    [MPI_ERR_INFO] = {"MPI_ERR_INFO", "invalid info argument"},
    [MPI_ERR_INFO_KEY] = {"MPI_ERR_INFO_KEY", "key longer than MPI_MAX_INFO_KEY"},
    [MPI_ERR_INFO_VALUE] = {"MPI_ERR_INFO_VALUE", "value longer than MPI_MAX_INFO_VAL"},
    [MPI_ERR_INFO_NOKEY] = {"MPI_ERR_INFO_NOKEY", "invalid key passed to MPI_INFO_DELETE"},
    [MPI_ERR_IO] = {"MPI_ERR_IO", "other I/O error"},
    [MPI_ERR_NAME] = {"MPI_ERR_NAME", "invalid service name passed to MPI_LOOKUP_NAME"},
    [MPI_ERR_NO_MEM] = {"MPI_ERR_NO_MEM", "MPI_ALLOC_MEM failed because memory is exhausted"},
    [MPI_ERR_NOT_SAME] = {"MPI_ERR_NOT_SAME",
                          "collective argument not identical on all processes, or collective "
                          "routines called in a different order by different processes"},
    [MPI_ERR_NO_SPACE] = {"MPI_ERR_NO_SPACE", "not enough space"},
    [MPI_ERR_NO_SUCH_FILE] = {"MPI_ERR_NO_SUCH_FILE", "file does not exist"},
    [MPI_ERR_PORT] = {"MPI_ERR_PORT", "invalid port name passed to MPI_COMM_CONNECT"},
    [MPI_ERR_QUOTA] = {"MPI_ERR_QUOTA", "quota exceeded"},
    [MPI_ERR_READ_ONLY] = {"MPI_ERR_READ_ONLY", "read-only file or file system"},
    [MPI_ERR_SERVICE] = {"MPI_ERR_SERVICE", "invalid service name passed to MPI_UNPUBLISH_NAME"},
    [MPI_ERR_SPAWN] = {"MPI_ERR_SPAWN", "error in spawning processes"},
    [MPI_ERR_UNSUPPORTED_DATAREP] = {"MPI_ERR_UNSUPPORTED_DATAREP",
                                     "unsupported datarep passed to MPI_FILE_SET_VIEW"},
    [MPI_ERR_UNSUPPORTED_OPERATION] = {"MPI_ERR_UNSUPPORTED_OPERATION", "unsupported operation"},
    [MPI_ERR_WIN] = {"MPI_ERR_WIN", "invalid window argument"},
    [MPI_ERR_BASE] = {"MPI_ERR_BASE", "invalid base passed to MPI_FREE_MEM"},
    [MPI_ERR_LOCKTYPE] = {"MPI_ERR_LOCKTYPE", "invalid locktype argument"},
    [MPI_ERR_KEYVAL] = {"MPI_ERR_KEYVAL", "invalid keyval"},
    [MPI_ERR_RMA_CONFLICT] = {"MPI_ERR_RMA_CONFLICT", "conflicting accesses to window"},
    [MPI_ERR_RMA_SYNC] = {"MPI_ERR_RMA_SYNC", "wrong synchronization of RMA calls"},
    [MPI_ERR_SIZE] = {"MPI_ERR_SIZE", "invalid size argument"},
    [MPI_ERR_DISP] = {"MPI_ERR_DISP", "invalid disp argument"},
    [MPI_ERR_ASSERT] = {"MPI_ERR_ASSERT", "invalid assert argument"},
    [MPI_ERR_RMA_RANGE] = {"MPI_ERR_RMA_RANGE",
                           "target memory is not part of the window (dynamic windows)"},
    [MPI_ERR_RMA_ATTACH] = {"MPI_ERR_RMA_ATTACH", "memory cannot be attached"},
    [MPI_ERR_RMA_SHARED] = {"MPI_ERR_RMA_SHARED", "memory cannot be shared"},
    [MPI_ERR_RMA_FLAVOR] = {"MPI_ERR_RMA_FLAVOR", "passed window has the wrong flavor"},
    [MPI_T_ERR_MEMORY] = {"MPI_T_ERR_MEMORY", "out of memory"},
    [MPI_T_ERR_NOT_INITIALIZED] = {"MPI_T_ERR_NOT_INITIALIZED", "interface not initialized"},
    [MPI_T_ERR_CANNOT_INIT] = {"MPI_T_ERR_CANNOT_INIT",
                               "interface not in the state to be initialized"},
    [MPI_T_ERR_INVALID_INDEX] = {"MPI_T_ERR_INVALID_INDEX", "the index is invalid"},
    [MPI_T_ERR_INVALID_ITEM] = {"MPI_T_ERR_INVALID_ITEM", "the item index queried is out of range"},
    [MPI_T_ERR_INVALID_HANDLE] = {"MPI_T_ERR_INVALID_HANDLE", "the handle is invalid"},
    [MPI_T_ERR_OUT_OF_HANDLES] = {"MPI_T_ERR_OUT_OF_HANDLES", "no more handles available"},
    [MPI_T_ERR_OUT_OF_SESSIONS] = {"MPI_T_ERR_OUT_OF_SESSIONS", "no more sessions available"},
    [MPI_T_ERR_INVALID_SESSION] = {"MPI_T_ERR_INVALID_SESSION", "session argument is not valid"},
    [MPI_T_ERR_CVAR_SET_NOT_NOW] = {"MPI_T_ERR_CVAR_SET_NOT_NOW",
                                    "variable cannot be set at this moment"},
    [MPI_T_ERR_CVAR_SET_NEVER] = {"MPI_T_ERR_CVAR_SET_NEVER",
                                  "variable cannot be set until end of execution"},
    [MPI_T_ERR_PVAR_NO_STARTSTOP] = {"MPI_T_ERR_PVAR_NO_STARTSTOP",
                                     "variable cannot be started or stopped"},
    [MPI_T_ERR_PVAR_NO_WRITE] = {"MPI_T_ERR_PVAR_NO_WRITE", "variable cannot be written or reset"},
    [MPI_T_ERR_PVAR_NO_ATOMIC] = {"MPI_T_ERR_PVAR_NO_ATOMIC",
                                  "variable cannot be read and written atomically"},
    [MPI_T_ERR_INVALID_NAME] = {"MPI_T_ERR_INVALID_NAME", "name doesn't match"},
    [MPI_T_ERR_INVALID] = {"MPI_T_ERR_INVALID", "invalid use of the interface or bad parameter"},
    [MPI_ERR_SESSION] = {"MPI_ERR_SESSION", "invalid session handle"},
    [MPI_ERR_PROC_ABORTED] = {"MPI_ERR_PROC_ABORTED",
                              "operation failed because a peer process has aborted"},
    [MPI_ERR_VALUE_TOO_LARGE] = {"MPI_ERR_VALUE_TOO_LARGE", "value is too large to store"},
    [MPI_T_ERR_NOT_SUPPORTED] = {"MPI_T_ERR_NOT_SUPPORTED",
                                 "requested functionality not supported"},
    [MPI_ERR_ERRHANDLER] = {"MPI_ERR_ERRHANDLER", "invalid errhandler handle"},
    [MPI_T_ERR_NOT_ACCESSIBLE] = {"MPI_T_ERR_NOT_ACCESSIBLE",
                                  "requested functionality not accessible"},
};

static int err_is_predef_class(int cls)
{
    return cls >= 0 && cls < MPII_ERR_NCLASSES && err_classes[cls].name;
}

/* ---- messages of raised errors: a ring of the last ones --------------------------- */

#define ERR_RING     64
#define ERR_SEQ_MASK 0x1fffff

typedef struct err_msg {
    int code;
    char text[MPI_MAX_ERROR_STRING];
} err_msg;

static err_msg err_ring[ERR_RING];
static unsigned err_seq;

/* copies src into dst[n], cutting it if it is too long */
static void err_copy(char *dst, size_t n, const char *src)
{
    size_t len = strnlen(src, n - 1);
    memcpy(dst, src, len);
    dst[len] = 0;
}

static int err_ring_store(int cls, const char *text)
{
    unsigned seq = err_seq++ & ERR_SEQ_MASK;
    int code = (int)(MPII_ERR_MSG_BASE | (seq << 8) | (unsigned)cls);
    err_msg *m = &err_ring[seq % ERR_RING];
    m->code = code;
    err_copy(m->text, sizeof m->text, text);
    return code;
}

static const err_msg *err_ring_find(int code)
{
    unsigned seq = ((unsigned)code >> 8) & ERR_SEQ_MASK;
    const err_msg *m = &err_ring[seq % ERR_RING];
    return m->code == code ? m : NULL;
}

/* ---- classes and codes added by the user -------------------------------------------- */

typedef struct err_dyn {
    int used;
    int is_class;
    int cls;    /* its class (itself for a class) */
    int ncodes; /* class: codes added to it and not removed */
    char *text; /* MPI_Add_error_string, NULL if none */
} err_dyn;

static err_dyn *err_dyns;
static int err_ndyn, err_dyn_cap;

static err_dyn *err_dyn_get(int code)
{
    if (code < MPII_ERR_DYN_BASE)
        return NULL;
    int i = code - MPII_ERR_DYN_BASE;
    return i < err_ndyn && err_dyns[i].used ? &err_dyns[i] : NULL;
}

static int err_dyn_new(int is_class, int cls)
{
    if (err_ndyn == err_dyn_cap) {
        err_dyn_cap = err_dyn_cap ? 2 * err_dyn_cap : 16;
        err_dyns = util_realloc(err_dyns, (size_t)err_dyn_cap * sizeof *err_dyns);
    }
    int code = MPII_ERR_DYN_BASE + err_ndyn;
    err_dyn *d = &err_dyns[err_ndyn++];
    memset(d, 0, sizeof *d);
    d->used = 1;
    d->is_class = is_class;
    d->cls = is_class ? code : cls;
    return code;
}

int mpii_errh_lastusedcode(void)
{
    return err_ndyn ? MPII_ERR_DYN_BASE + err_ndyn - 1 : MPI_ERR_LASTCODE;
}

int mpii_errh_callback_code(int rc)
{
    int cls;
    if (mpii_errh_class_of(rc, &cls) != UTIL_OK || cls == MPI_SUCCESS)
        return MPI_ERR_OTHER;
    return rc >= MPII_ERR_DYN_BASE ? rc : cls;
}

int mpii_errh_class_of(int code, int *cls)
{
    if (err_is_predef_class(code)) {
        *cls = code;
        return UTIL_OK;
    }
    if (code >= MPII_ERR_MSG_BASE && code < MPII_ERR_DYN_BASE && err_is_predef_class(code & 0xff)) {
        *cls = code & 0xff;
        return UTIL_OK;
    }
    err_dyn *d = err_dyn_get(code);
    if (!d)
        return UTIL_EINVAL;
    *cls = d->cls;
    return UTIL_OK;
}

static int err_is_class(int cls)
{
    err_dyn *d = err_dyn_get(cls);
    return err_is_predef_class(cls) || (d && d->is_class);
}

const char *mpii_errh_class_name(int cls)
{
    static char buf[32];
    if (err_is_predef_class(cls))
        return err_classes[cls].name;
    snprintf(buf, sizeof buf, "MPI_ERR_%d", cls);
    return buf;
}

int mpii_errh_string(int code, char *buf, int *len)
{
    int cls;
    if (mpii_errh_class_of(code, &cls) != UTIL_OK)
        return UTIL_EINVAL;
    const char *text = "";
    const err_dyn *d = err_dyn_get(code);
    const err_msg *m = NULL;
    if (d)
        text = d->text ? d->text : "";
    else if (code >= MPII_ERR_MSG_BASE && (m = err_ring_find(code)))
        text = m->text;
    else
        text = err_classes[cls].text;
    err_copy(buf, MPI_MAX_ERROR_STRING, text);
    *len = (int)strlen(buf);
    return UTIL_OK;
}

int mpii_errh_add_class(int *cls)
{
    *cls = err_dyn_new(1, 0);
    return UTIL_OK;
}

int mpii_errh_add_code(int cls, int *code)
{
    if (!err_is_class(cls))
        return UTIL_EINVAL;
    *code = err_dyn_new(0, cls);
    err_dyn *c = err_dyn_get(cls);
    if (c)
        c->ncodes++;
    return UTIL_OK;
}

int mpii_errh_add_string(int code, const char *s)
{
    err_dyn *d = err_dyn_get(code);
    if (!d || strlen(s) >= MPI_MAX_ERROR_STRING)
        return UTIL_EINVAL;
    free(d->text);
    d->text = util_strdup(s);
    return UTIL_OK;
}

int mpii_errh_remove_string(int code)
{
    err_dyn *d = err_dyn_get(code);
    if (!d || !d->text)
        return UTIL_EINVAL;
    free(d->text);
    d->text = NULL;
    return UTIL_OK;
}

int mpii_errh_remove_code(int code)
{
    err_dyn *d = err_dyn_get(code);
    if (!d || d->is_class || d->text)
        return UTIL_EINVAL;
    err_dyn *c = err_dyn_get(d->cls);
    if (c)
        c->ncodes--;
    d->used = 0;
    return UTIL_OK;
}

int mpii_errh_remove_class(int cls)
{
    err_dyn *d = err_dyn_get(cls);
    if (!d || !d->is_class || d->ncodes > 0 || d->text)
        return UTIL_EINVAL;
    d->used = 0;
    return UTIL_OK;
}

/* ---- raising an error ------------------------------------------------------------- */

/* The handler for an error on (objkind, handle); may redirect the object
 * (an invalid communicator raises on MPI_COMM_SELF / MPI_COMM_WORLD). */
static MPI_Errhandler errh_pick(int *objkind, int *handle)
{
    if (*objkind == MPII_OBJ_ERRH) {
        /* a handler given to a call that makes the object: its callback gets the null
         * handle of its kind */
        MPI_Errhandler eh = *handle;
        errh_obj *o = MPII_HANDLE_INDEX(eh) >= ERRH_NPREDEF ? errh_get(eh) : NULL;
        static const int null_of[][2] = {
            [MPII_ERRH_ANY] = {MPII_OBJ_COMM, MPI_COMM_NULL},
            [MPII_ERRH_COMM] = {MPII_OBJ_COMM, MPI_COMM_NULL},
            [MPII_ERRH_WIN] = {MPII_OBJ_WIN, MPI_WIN_NULL},
            [MPII_ERRH_FILE] = {MPII_OBJ_FILE, MPI_FILE_NULL},
            [MPII_ERRH_SESSION] = {MPII_OBJ_SESSION, MPI_SESSION_NULL},
        };
        if (errh_predefined(eh) || o) {
            int k = o ? o->kind : MPII_ERRH_ANY;
            *objkind = null_of[k][0];
            *handle = null_of[k][1];
            return eh;
        }
        *objkind = MPII_OBJ_NONE;
        *handle = 0;
    }
    if (*objkind == MPII_OBJ_FILE)
        return io_file_errhandler(*handle); /* MPI_FILE_NULL's for no file */
    if (*objkind == MPII_OBJ_SESSION) {
        /* a session's own handler; an invalid session's error goes where object-less ones go */
        MPI_Errhandler eh = mpii_session_errh(*handle);
        if (eh != MPI_ERRHANDLER_NULL)
            return eh;
        *objkind = MPII_OBJ_NONE;
    }
    if (errh_live() && *objkind == MPII_OBJ_WIN) {
        if (osc_win_get(*handle))
            return mpii_errh_or_default(osc_errhandler_of(*handle));
        *objkind = MPII_OBJ_NONE; /* no such window: the process's handler below */
    }
    if (!errh_live() || *objkind == MPII_OBJ_WIN)
        return MPI_ERRORS_ARE_FATAL;
    mpii_comm *c = *objkind == MPII_OBJ_COMM ? mpii_comm_get(*handle) : NULL;
    if (c)
        return mpii_errh_or_default(c->errhandler);
    /* No usable object: MPI 4 attaches the error to MPI_COMM_SELF; programs
     * written for MPI 3 set their handler on MPI_COMM_WORLD. A handler set on
     * MPI_COMM_SELF wins, else the one of MPI_COMM_WORLD is used. */
    *objkind = MPII_OBJ_COMM;
    mpii_comm *self = mpii_comm_get(MPI_COMM_SELF);
    if (self && self->errhandler != MPI_ERRORS_ARE_FATAL &&
        self->errhandler != MPI_ERRHANDLER_NULL) {
        *handle = MPI_COMM_SELF;
        return self->errhandler;
    }
    mpii_comm *world = mpii_comm_get(MPI_COMM_WORLD);
    if (world && world->errhandler != MPI_ERRHANDLER_NULL) {
        *handle = MPI_COMM_WORLD;
        return world->errhandler;
    }
    return MPI_ERRORS_ARE_FATAL;
}

_Noreturn static void errh_fatal(int code, const char *text)
{
    int cls = MPI_ERR_UNKNOWN;
    mpii_errh_class_of(code, &cls);
    char line[MPI_MAX_ERROR_STRING + 128];
    snprintf(line, sizeof line, "%s (%s: %s)", text, mpii_errh_class_name(cls),
             err_is_predef_class(cls) ? err_classes[cls].text : "user-defined error class");
    fflush(stdout);
    fprintf(stderr, "[dcfa-mpi] rank %d: %s\n", mpii_st.world_rank, line);
    fflush(stderr);
    int status = cls & 0xff;
    if (status == 0)
        status = 1;
    mpii_dpm_ports_unlink();
    assist_abort(status, line);
    _exit(status);
}

/* the code a user's handler was given by mpii_err and the one it left, while the call that
 * raised it has not returned (mpii_err_returned) */
static __thread int errh_given, errh_left, errh_changed;

int mpii_err_returned(int rc)
{
    if (!errh_changed || rc != errh_given)
        return rc;
    errh_changed = 0;
    return errh_left;
}

/* calls eh's function for the error; returns the code the function left in its argument */
static int errh_call(int objkind, int handle, MPI_Errhandler eh, int code, const char *text)
{
    if (eh == MPI_ERRORS_RETURN)
        return code;
    errh_obj *o = MPII_HANDLE_INDEX(eh) >= ERRH_NPREDEF ? errh_get(eh) : NULL;
    if (!o || !o->fn)
        errh_fatal(code, text);
    int h = handle, c = code;
    switch (o->kind) {
    case MPII_ERRH_COMM:
        ((MPI_Comm_errhandler_function *)o->fn)(&h, &c);
        break;
    case MPII_ERRH_WIN:
        ((MPI_Win_errhandler_function *)o->fn)(&h, &c);
        break;
    case MPII_ERRH_FILE:
        ((MPI_File_errhandler_function *)o->fn)(&h, &c);
        break;
    case MPII_ERRH_SESSION:
        ((MPI_Session_errhandler_function *)o->fn)(&h, &c);
        break;
    default:
        errh_fatal(code, text);
    }
    return c;
}

void mpii_errh_invoke(int objkind, int handle, MPI_Errhandler eh, int code)
{
    char text[MPI_MAX_ERROR_STRING];
    int len;
    if (mpii_errh_string(code, text, &len) != UTIL_OK)
        snprintf(text, sizeof text, "error code %d", code);
    errh_call(objkind, handle, eh, code, text);
}

static __thread char err_cause[MPI_MAX_ERROR_STRING];

void mpii_cause(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err_cause, sizeof err_cause, fmt, ap);
    va_end(ap);
}

int mpii_err(int objkind, int handle, int errclass, const char *func, const char *fmt, ...)
{
    if (errclass == MPI_SUCCESS)
        return MPI_SUCCESS;
    char body[MPI_MAX_ERROR_STRING], text[MPI_MAX_ERROR_STRING + 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    snprintf(text, sizeof text, "%s: %s", func, body);
    size_t used = strlen(text);
    if (err_cause[0] && used + 2 < sizeof text)
        snprintf(text + used, sizeof text - used, ": %s", err_cause);
    err_cause[0] = '\0';
    int code = errclass;
    if (err_is_predef_class(errclass)) {
        char stored[MPI_MAX_ERROR_STRING + 96];
        snprintf(stored, sizeof stored, "%s (rank %d)", text, mpii_st.world_rank);
        code = err_ring_store(errclass, stored);
    }
    MPI_Errhandler eh = errh_pick(&objkind, &handle);
    errh_changed = 0;
    int left = errh_call(objkind, handle, eh, code, text);
    if (left != code) { /* after the call: a handler's own failing calls record first */
        errh_given = code;
        errh_left = left;
        errh_changed = 1;
    }
    return code;
}

void mpii_err_lost_unseen(const char *why)
{
    /* from inside progress: only where the process's handler (MPI_COMM_SELF's, else
     * MPI_COMM_WORLD's) ends the job; a user's function or MPI_ERRORS_RETURN has no call to
     * return it from, and is not called from within progress */
    int objkind = MPII_OBJ_NONE, handle = 0;
    MPI_Errhandler eh = errh_pick(&objkind, &handle);
    if (eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_ABORT)
        mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_OTHER, "MPI progress", "%s", why);
}

int mpii_err_null_arg(int objkind, int handle, const char *func, const char *arg)
{
    return mpii_err(objkind, handle, MPI_ERR_ARG, func, "%s: NULL pointer", arg);
}

/* ---- internal status to error class ---------------------------------------------------- */

int mpii_errclass(int status)
{
    switch (status) {
    case UTIL_OK:
        return MPI_SUCCESS;
    case UTIL_ENOMEM:
        return MPI_ERR_NO_MEM;
    case UTIL_ETRUNC:
        return MPI_ERR_TRUNCATE;
    case UTIL_EPROTO:
        return MPI_ERR_INTERN;
    case UTIL_ECONN:
        return MPI_ERR_PROC_ABORTED;
    case UTIL_EACCES: /* a shared-memory segment another user made: refused */
        return MPI_ERR_ACCESS;
    case UTIL_EUNREACH: /* no network in common: the message names the two hosts */
        mpii_cause("%s", core_conn_failure_text());
        return MPI_ERR_OTHER;
    default:
        return MPI_ERR_OTHER;
    }
}
