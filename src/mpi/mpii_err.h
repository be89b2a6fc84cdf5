/* Error reporting at the MPI boundary: one call raises an MPI error class
 * through the error handler of the object concerned. */
#ifndef DCFA_MPII_ERR_H
#define DCFA_MPII_ERR_H

/* MPII_OBJ_ERRH: no object yet, the error goes to the error handler given as the handle
 * (MPI_Session_init's, MPI_Comm_create_from_group's errhandler argument; MPI_ERRHANDLER_NULL
 * or an invalid one: as MPII_OBJ_NONE) */
enum mpii_obj {
    MPII_OBJ_NONE,
    MPII_OBJ_COMM,
    MPII_OBJ_WIN,
    MPII_OBJ_FILE,
    MPII_OBJ_SESSION,
    MPII_OBJ_ERRH
};

/* Formats "<func>: <message> (rank R)", stores it for MPI_Error_string on the
 * returned code, invokes the error handler attached to (objkind, handle) --
 * MPI_COMM_WORLD's / the default handler when the object is null or invalid --
 * and returns the error code to give back to the caller. Under
 * MPI_ERRORS_ARE_FATAL it prints the message and ends the job. */
int mpii_err(int objkind, int handle, int errclass, const char *func, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* core_params.lost_unseen: a lost connection may have taken messages no call waits for;
 * the job ends where the process's handler is fatal, else nothing (no call to return to) */
void mpii_err_lost_unseen(const char *why);

/* The cause of a failure found below the bindings (a system call, the process manager, a
 * peer), kept for the error the binding raises about it: the next mpii_err() of this
 * thread ends its message with it ("...: <cause>") and forgets it. Recorded, not printed:
 * under MPI_ERRORS_RETURN the library prints nothing, MPI_Error_string tells it, and
 * MPI_ERRORS_ARE_FATAL prints it with the rest. */
void mpii_cause(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* MPI_ERR_ARG "<func>: <arg>: NULL pointer" on (objkind, handle): an output argument the
 * generated PMPI_X found NULL (tools/gen_api.py) */
int mpii_err_null_arg(int objkind, int handle, const char *func, const char *arg);
/* The code a call returns for the error code rc it raised: the one a user's error handler
 * left in its code argument if it changed it (MPI 4.1 9.3: "the error code to be returned by
 * the MPI routine that raised the error"), else rc. Applied by every PMPI_X on its way out
 * (tools/gen_api.py), not inside the library, whose own paths still see the failure. */
int mpii_err_returned(int rc);

#endif
