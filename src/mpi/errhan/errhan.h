/* Error handlers and error codes (src/mpi/errhan): the calls the bindings
 * and the other chapters use beyond mpii_err() and mpii_errh_init().
 *
 * Error code space:
 *   0 .. MPII_ERR_NCLASSES-1          predefined classes (mpi.h), code == class
 *   MPII_ERR_MSG_BASE | seq<<8 | cls  a code raised by mpii_err(): its class is
 *                                     the low byte, its text is kept in a ring
 *                                     of the last MPII_ERR_RING messages
 *   MPII_ERR_DYN_BASE + n             classes and codes added by the user
 *                                     (> MPI_ERR_LASTCODE, as the standard asks) */
#ifndef DCFA_MPI_ERRHAN_H
#define DCFA_MPI_ERRHAN_H

#include "mpi/mpii.h"

#define MPII_ERR_NCLASSES 81
#define MPII_ERR_MSG_BASE 0x20000000
#define MPII_ERR_DYN_BASE 0x40000000

/* what a user-created error handler may be attached to */
enum mpii_errh_kind {
    MPII_ERRH_ANY,
    MPII_ERRH_COMM,
    MPII_ERRH_WIN,
    MPII_ERRH_FILE,
    MPII_ERRH_SESSION
};

typedef void (*mpii_errh_fn)(void); /* cast to the kind's function type before calling */

MPI_Errhandler mpii_errh_create(enum mpii_errh_kind kind, mpii_errh_fn fn);
/* 1 if eh is a live handler that may be attached to an object of kind `kind` */
int mpii_errh_usable(MPI_Errhandler eh, enum mpii_errh_kind kind);
int mpii_errh_exists(MPI_Errhandler eh);
/* references held by objects (communicators, files): predefined handlers ignore them */
void mpii_errh_ref(MPI_Errhandler eh);
void mpii_errh_release(MPI_Errhandler eh);

/* eh, or for MPI_ERRHANDLER_NULL (an object whose handler was never set) the handler it
 * uses: MPI_COMM_WORLD's at this moment, else MPI_ERRORS_ARE_FATAL */
MPI_Errhandler mpii_errh_or_default(MPI_Errhandler eh);

/* Calls handler eh for an error `code` on object (objkind, handle); under
 * MPI_ERRORS_ARE_FATAL / MPI_ERRORS_ABORT it prints and ends the job. */
void mpii_errh_invoke(int objkind, int handle, MPI_Errhandler eh, int code);

/* handler used for files with no file object (MPI_FILE_NULL) */
MPI_Errhandler mpii_errh_file_default(void);
void mpii_errh_set_file_default(MPI_Errhandler eh);

/* What a code returned by a user callback (attribute copy or delete, ...) becomes for the
 * call that ran it, to raise with mpii_err: a class or code the program added stays itself,
 * so its handler and the call's caller see that very code (MPICH's errors/comm/userdup); a
 * predefined class or a library code gives its class; anything else MPI_ERR_OTHER */
int mpii_errh_callback_code(int rc);

/* error codes: UTIL_OK or UTIL_EINVAL (unknown code / not allowed) */
int mpii_errh_class_of(int code, int *cls);
int mpii_errh_string(int code, char *buf, int *len); /* buf has MPI_MAX_ERROR_STRING chars */
int mpii_errh_add_class(int *cls);
int mpii_errh_add_code(int cls, int *code);
int mpii_errh_add_string(int code, const char *s);
int mpii_errh_remove_class(int cls);
int mpii_errh_remove_code(int code);
int mpii_errh_remove_string(int code);
/* value of the MPI_LASTUSEDCODE attribute */
int mpii_errh_lastusedcode(void);
/* "MPI_ERR_RANK" etc. for a class, "MPI_ERR_<n>" for user classes */
const char *mpii_errh_class_name(int cls);

#endif
