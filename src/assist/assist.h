/* assist: the library's command channel to its assist daemon.
 *
 * The channel speaks the PMI-1 "simple" wire protocol (or PMI-2), so the same
 * client works under our mpirun (PMI_FD), under MPICH's Hydra (PMI_FD, or
 * PMI_PORT + PMI_ID with -pmi-port), under Slurm (PMI-2) and, with nothing
 * set, as a singleton. See docs/launcher.md for the messages used.
 *
 * Every function returns 0 (or the documented value) on success and a
 * negative errno-style code on failure. The functions are thread-safe.
 */
#ifndef DCFA_ASSIST_H
#define DCFA_ASSIST_H

#include <stddef.h>

#define ASSIST_KEY_MAX     64   /* longest key, without the NUL */
#define ASSIST_VALUE_MAX   1024 /* longest value, without the NUL */
#define ASSIST_JOBID_MAX   32   /* longest job id, without the NUL */
#define ASSIST_SERVICE_MAX 256  /* longest published service name, without the NUL */
#define ASSIST_PORT_MAX    1024 /* longest published port name, without the NUL */

/* Connect to the daemon: PMI_FD/PMI_RANK/PMI_SIZE, or PMI_PORT+PMI_ID
 * (Hydra -pmi-port). With none of them set: singleton, rank 0 of 1, appnum 0,
 * no daemon (until assist_spawn or a name function needs one: it is then
 * started, "mpirun --dcfa-singleton", docs/launcher.md "Singletons"); but
 * -EPROTONOSUPPORT, after one line on stderr naming it, when the environment
 * shows a launcher we do not speak that started a job of several processes
 * (Open MPI's mpirun, PMIx, srun without --mpi=pmi2, PMI_RANK/PMI_SIZE
 * without a channel), unless DCFA_SINGLETON=1.
 * Calling it again after success returns the same values. */
int assist_init(int *rank, int *size, int *appnum);

/* 1 when started without a process manager (after assist_init), also once
 * a daemon was started for it on demand; else 0. */
int assist_is_singleton(void);
/* 1 when this process's launcher is another MPI's (Hydra, Slurm) or none: nobody removes
 * the job's /dev/shm entries when its processes end, so a process that ends the job (abort,
 * the launcher's SIGTERM) removes those of this node itself (our daemon does otherwise) */
int assist_cleanup_is_mine(void);

/* Short id of this job, only [A-Za-z0-9_]: DCFA_JOBID under our mpirun, a
 * hash of the PMI kvsname under other process managers, "s<pid>" for a
 * singleton. Name job resources "/dev/shm/dcfa-<jobid>-..." (removed by the
 * daemon at job end). Empty string before assist_init. */
const char *assist_job_id(void);

/* Key: 1..ASSIST_KEY_MAX chars, no space, '=' or control characters.
 * Value: 0..ASSIST_VALUE_MAX printable chars, no space (encode binary data,
 * e.g. as hex). -EINVAL otherwise. */
int assist_kvs_put(const char *key, const char *value);

/* PMI barrier over the whole job: puts before it are visible to gets after. */
int assist_kvs_fence(void);

/* Copies the value (NUL-terminated) into value[maxlen]. -ENOENT if the key
 * is absent, -ENOSPC if maxlen is too small. */
int assist_kvs_get(const char *key, char *value, int maxlen);

/* Asks the daemon to end the whole job with exitcode; msg is reported by
 * mpirun (under another process manager, which does not print it, it is
 * written to stderr here). Returns after sending: the caller must
 * _exit(exitcode) next. */
int assist_abort(int exitcode, const char *msg);

/* Tells the daemon this process finalized and closes the channel. */
int assist_finalize(void);

/* Universe size (>= 1), or a negative error. A singleton: as mpirun counts
 * it, DCFA_UNIVERSE_SIZE, else the number of online CPUs. */
int assist_universe_size(void);

/* 1 when the daemon's end of the command channel is closed (the daemon or
 * the launcher died), else 0 (also for a singleton or after finalize). One
 * poll() with no timeout and no lock: async-signal-safe, consumes nothing. */
int assist_channel_lost(void);

/* ---- dynamic processes ------------------------------------------------------- */

/* One command of a spawn (MPI_Comm_spawn_multiple's arrays, one entry). */
typedef struct assist_spawn_cmd {
    const char *command; /* program to run (searched as execvp does, or by info "path") */
    char **argv;         /* NULL-terminated arguments after argv[0], or NULL */
    int maxprocs;        /* >= 1 */
    int ninfo;           /* info key/values passed to the process manager */
    const char *const *info_keys;
    const char *const *info_vals;
} assist_spawn_cmd;

/* Starts one new job of sum(maxprocs) processes from ncmds commands (command
 * i's processes get appnum i; ranks numbered in order). The npreput
 * key/values (keys and values as for assist_kvs_put) are visible to the
 * children through assist_kvs_get from their start. errcodes (may be NULL)
 * get, per process in rank order, 0 when it started or a negative errno:
 * after a failed spawn nothing runs, the processes of the command at fault
 * get its error and the others -ECANCELED (or all get the error when the
 * spawn failed as a whole). Returns 0, or a negative errno with a one-line
 * reason in errmsg[errlen] (errmsg may be NULL): -EINVAL (bad arguments),
 * -ENOENT/-EACCES (a program that cannot be executed), -EAGAIN (beyond the
 * universe with mpirun --no-oversubscribe), -EHOSTUNREACH/-ENOTSUP (info
 * "host" not this host, info "file"), -EIO (another process manager
 * refused). A singleton first starts its daemon: DCFA_MPIRUN, else mpirun
 * next to this library (<libdir>/../bin, <libdir>), else in the install
 * prefix; -ENOENT (none found, errmsg says where it looked), -EIO or
 * -ETIMEDOUT (it did not answer). Under Slurm's mpi/pmi2: -ETIMEDOUT when
 * Slurm gives no answer within DCFA_SPAWN_TIMEOUT (the children's srun
 * failed), and several commands' programs and arguments go escaped for
 * srun --multi-prog (no '\n' there, -EINVAL). Info keys our mpirun
 * honours: wdir, path, host; others are ignored. Lines of a PMI-1 request
 * cannot hold '\n', PMI-2 messages no ';' (-EINVAL). */
int assist_spawn(int ncmds, const assist_spawn_cmd *cmds, int npreput, const char *const *keys,
                 const char *const *vals, int *errcodes, char *errmsg, size_t errlen);

/* The name service (MPI_Publish_name ...): a table shared by every job of
 * one mpirun, or by every run given DCFA_NAMESERVER=host:port (mpirun
 * --nameserver). A service is 1..ASSIST_SERVICE_MAX and a port
 * 1..ASSIST_PORT_MAX printable characters without spaces or ';' (-EINVAL
 * otherwise). A singleton uses the name server of DCFA_NAMESERVER, else its
 * daemon, started on demand as for assist_spawn (-ENOSYS, with a message on
 * stderr, when it cannot be). -EHOSTUNREACH when the name server fails. */
int assist_name_publish(const char *service, const char *port);      /* -EEXIST if taken */
int assist_name_unpublish(const char *service);                      /* -ENOENT if absent */
int assist_name_lookup(const char *service, char *port, int maxlen); /* -ENOENT, -ENOSPC */

#endif
