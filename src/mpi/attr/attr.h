/* Attribute caching (src/mpi/attr): keyvals and the attribute lists hung off
 * communicators, datatypes and windows (beyond mpii_attr_copy_comm and
 * mpii_attr_delete_all of mpii.h).
 *
 * The object kind of a list is taken from the handle it belongs to
 * (MPII_HANDLE_KIND: comm, datatype or win). A keyval value is a small index;
 * 1..12 are the predefined keys of mpi.h (MPI_TAG_UB .. MPI_WIN_MODEL).
 * Lists keep the newest attribute first; deleting them all runs the delete
 * callbacks newest first (the reverse order of setting, as MPI_Finalize
 * must on MPI_COMM_SELF). A keyval freed while attributes use it lives on
 * until the last of them is deleted.
 *
 * The bindings check keyvals (mpii_keyval_check) before calling; after that
 * a non-zero return is the error code a user callback returned. */
#ifndef DCFA_MPI_ATTR_H
#define DCFA_MPI_ATTR_H

#include "mpi/mpii.h"

#define MPII_KEYVAL_PREDEF_LAST 12
typedef void (*mpii_attr_fn)(void); /* cast from/to the kind's callback type */

/* kind: MPII_KIND_COMM, MPII_KIND_DTYPE or MPII_KIND_WIN */
int mpii_keyval_create(int kind, mpii_attr_fn copy, mpii_attr_fn del, void *extra, int *keyval);
int mpii_keyval_free(int kind, int *keyval);
/* MPI_SUCCESS if keyval is a keyval of kind still alive (freed by the user
 * perhaps, but kept by attributes), else MPI_ERR_KEYVAL */
int mpii_keyval_check(int kind, int keyval);

int mpii_attr_set(int handle, mpii_attr **list, int keyval, void *val);
/* predefined communicator keys (MPI_TAG_UB .. MPI_APPNUM) answer on every
 * communicator with a pointer to a static int; window keys are the window's */
int mpii_attr_get(int handle, mpii_attr *list, int keyval, void **val, int *flag);
int mpii_attr_delete(int handle, mpii_attr **list, int keyval);
/* copy callbacks for a duplicated object (MPI_Type_dup, a window's copy):
 * like mpii_attr_copy_comm for any kind */
int mpii_attr_copy(int oldh, int newh, mpii_attr *src, mpii_attr **dst);

/* frees the list without running callbacks (objects torn down at finalize) */
void mpii_attr_drop_all(mpii_attr **list);
void mpii_attr_finalize(void);

#endif
