/* assist: the library's command channel to its assist daemon.
 *
 * The channel speaks the PMI-1 "simple" wire protocol, so the same client
 * works under our mpirun (PMI_FD), under MPICH's Hydra (PMI_FD, or PMI_PORT +
 * PMI_ID with -pmi-port) and, with nothing set, as a singleton.
 * See docs/launcher.md for the messages used.
 *
 * Every function returns 0 (or the documented value) on success and a
 * negative errno-style code on failure. The functions are thread-safe.
 */
#ifndef DCFA_ASSIST_H
#define DCFA_ASSIST_H

#define ASSIST_KEY_MAX   64   /* longest key, without the NUL */
#define ASSIST_VALUE_MAX 1024 /* longest value, without the NUL */
#define ASSIST_JOBID_MAX 32   /* longest job id, without the NUL */

/* Connect to the daemon: PMI_FD/PMI_RANK/PMI_SIZE, or PMI_PORT+PMI_ID
 * (Hydra -pmi-port). With none of them set: singleton, rank 0 of 1, appnum 0,
 * no daemon. Calling it again after success returns the same values. */
int assist_init(int *rank, int *size, int *appnum);

/* 1 when running without a daemon (after assist_init), else 0. */
int assist_is_singleton(void);

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

/* Universe size (>= 1), or a negative error. */
int assist_universe_size(void);

/* 1 when the daemon's end of the command channel is closed (the daemon or
 * the launcher died), else 0 (also for a singleton or after finalize). One
 * poll() with no timeout and no lock: async-signal-safe, consumes nothing. */
int assist_channel_lost(void);

#endif
