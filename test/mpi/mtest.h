/*
 * mtest.h: shared helpers for the MPI test programs in test/mpi/.
 *
 * Header-only (static inline).  A test calls mtest_init(), records failures
 * with mtest_fail()/mtest_check*() (details go to stderr, tagged with the
 * world rank), and ends with `return mtest_finalize();`, which sums the error
 * counts over MPI_COMM_WORLD; rank 0 prints " No Errors" or " Found N errors"
 * on stdout and every rank returns non-zero when any rank failed.
 *
 * Data patterns: mtest_fill()/mtest_verify() write and check a byte pattern
 * that depends on (source rank, tag, byte index), so a message delivered to
 * the wrong receive, out of order, shifted or partially is detected.
 */
#ifndef MTEST_H
#define MTEST_H

#include <mpi.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int mtest_errs;
static int mtest_wrank = -1;

static inline void mtest_vreport(const char *fmt, va_list ap)
{
    fprintf(stderr, "[rank %d] ", mtest_wrank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    fflush(stderr);
}

/* Record one failure with a printf-style description. */
static inline void mtest_fail(const char *fmt, ...)
{
    va_list ap;

    mtest_errs++;
    va_start(ap, fmt);
    mtest_vreport(fmt, ap);
    va_end(ap);
}

/* Record a failure when cond is false; returns cond. */
static inline int mtest_check(int cond, const char *fmt, ...)
{
    va_list ap;

    if (cond)
        return 1;
    mtest_errs++;
    va_start(ap, fmt);
    mtest_vreport(fmt, ap);
    va_end(ap);
    return 0;
}

/* Record a failure when got != want; returns 1 when equal. */
static inline int mtest_check_int(const char *what, long long got, long long want)
{
    return mtest_check(got == want, "%s: got %lld, expected %lld", what, got, want);
}

/* Record a failure when an MPI call did not return MPI_SUCCESS. */
static inline int mtest_check_rc(const char *what, int rc)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;

    if (rc == MPI_SUCCESS)
        return 1;
    msg[0] = '\0';
    MPI_Error_string(rc, msg, &len);
    mtest_fail("%s returned %d (%s)", what, rc, msg);
    return 0;
}

/* Record a failure unless rc's error class is want_class. */
static inline int mtest_check_class(const char *what, int rc, int want_class)
{
    int cls = -1;

    if (rc == MPI_SUCCESS)
        return mtest_check(want_class == MPI_SUCCESS, "%s: succeeded, expected error class %d",
                           what, want_class);
    MPI_Error_class(rc, &cls);
    return mtest_check(cls == want_class, "%s: error class %d (code %d), expected %d", what, cls,
                       rc, want_class);
}

/* mtest_check_class, and the message of rc (MPI_Error_string) contains text (if not NULL) */
static inline int mtest_check_error(const char *what, int rc, int want_class, const char *text)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;

    if (!mtest_check_class(what, rc, want_class) || !text)
        return 0;
    MPI_Error_string(rc, msg, &len);
    return mtest_check(strstr(msg, text) != NULL, "%s: message '%s' does not say '%s'", what, msg,
                       text);
}

/* What the library prints: mtest_quiet(1) sends stderr to a temporary file, mtest_quiet(0)
 * brings it back (the test's own reports go to the real stderr), mtest_quiet_check() records
 * a failure showing whatever was captured. */
static int mtest_quiet_fd = -1, mtest_stderr_fd = -1;

static inline void mtest_quiet(int on)
{
    if (mtest_quiet_fd < 0) {
        char path[] = "/tmp/dcfa-mtest-quiet-XXXXXX";
        mtest_quiet_fd = mkstemp(path);
        mtest_stderr_fd = dup(2);
        if (mtest_quiet_fd < 0 || mtest_stderr_fd < 0) {
            fprintf(stderr, "[rank %d] mkstemp/dup for the stderr capture failed\n", mtest_wrank);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        unlink(path);
    }
    fflush(stderr);
    dup2(on ? mtest_quiet_fd : mtest_stderr_fd, 2);
}

static inline void mtest_quiet_check(void)
{
    char text[1024] = "";
    off_t printed;
    ssize_t n;

    if (mtest_quiet_fd < 0)
        return;
    mtest_quiet(0);
    printed = lseek(mtest_quiet_fd, 0, SEEK_END);
    if (printed <= 0)
        return;
    n = pread(mtest_quiet_fd, text, sizeof text - 1, 0);
    text[n > 0 ? n : 0] = '\0';
    mtest_fail("the library printed %lld bytes under MPI_ERRORS_RETURN:\n%s", (long long)printed,
               text);
}

static inline void mtest_init(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mtest_wrank);
}

/* mtest_init, then MPI_T (for the library's pvars), the rank and size in MPI_COMM_WORLD; 0 when
 * there are fewer than min ranks (a failure recorded: return mtest_finalize()) */
static inline int mtest_init_pvars(int *argc, char ***argv, int min, int *rank, int *size)
{
    int provided;
    mtest_init(argc, argv);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    if (*size >= min)
        return 1;
    mtest_fail("needs %d ranks", min);
    return 0;
}

/* Sum the errors over MPI_COMM_WORLD, report on rank 0, finalize.
 * Returns the process exit status (0 iff no rank found an error). */
static inline int mtest_finalize(void)
{
    int total = 0;

    MPI_Allreduce(&mtest_errs, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (mtest_wrank == 0) {
        if (total == 0)
            printf(" No Errors\n");
        else
            printf(" Found %d errors\n", total);
        fflush(stdout);
    }
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}

/* The byte expected at index i of a message from src with tag. */
static inline unsigned char mtest_pattern(int src, int tag, size_t i)
{
    size_t v = (size_t)src * 131u + (size_t)tag * 17u + i * 7u + (i >> 9) * 3u;

    return (unsigned char)(v ^ (v >> 8));
}

static inline void mtest_fill(void *buf, size_t len, int src, int tag)
{
    unsigned char *p = buf;
    size_t i;

    for (i = 0; i < len; i++)
        p[i] = mtest_pattern(src, tag, i);
}

/* Check len bytes against the pattern; records one failure (naming the first
 * bad index) and returns 0 on mismatch. */
static inline int mtest_verify(const char *what, const void *buf, size_t len, int src, int tag)
{
    const unsigned char *p = buf;
    size_t i;

    for (i = 0; i < len; i++) {
        if (p[i] != mtest_pattern(src, tag, i)) {
            mtest_fail("%s: byte %zu of %zu is 0x%02x, expected 0x%02x (src %d tag %d)", what, i,
                       len, p[i], mtest_pattern(src, tag, i), src, tag);
            return 0;
        }
    }
    return 1;
}

/* Partner for pairwise tests: ranks 0-1, 2-3, ...; the last rank of an odd
 * sized communicator is its own partner. */
static inline int mtest_partner(int rank, int size)
{
    int p = rank ^ 1;

    return p < size ? p : rank;
}

static inline void mtest_sleep_ms(long ms)
{
    struct timespec ts;

    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (ms % 1000) * 1000000L;
    nanosleep(&ts, NULL);
}

/* malloc that records a failure and exits the test cleanly on failure. */
static inline void *mtest_malloc(size_t len)
{
    void *p = malloc(len ? len : 1);

    if (p == NULL) {
        fprintf(stderr, "[rank %d] out of memory (%zu bytes)\n", mtest_wrank, len);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

/* The value of the library's counter pvar `name` (MPI_T initialized, session s open);
 * records a failure and gives 0 when there is no such variable. */
static inline unsigned long long mtest_pvar_counter(MPI_T_pvar_session s, const char *name)
{
    int idx = -1, count;
    unsigned long long v = 0;
    MPI_T_pvar_handle h;

    if (MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &idx) != MPI_SUCCESS) {
        mtest_fail("no performance variable %s", name);
        return 0;
    }
    MPI_T_pvar_handle_alloc(s, idx, NULL, &h, &count);
    MPI_T_pvar_read(s, h, &v);
    MPI_T_pvar_handle_free(s, &h);
    return v;
}

/* The path of this program (the spawn tests start themselves as children). */
static inline void mtest_self_exe(char *buf, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", buf, len - 1);

    if (n <= 0) {
        fprintf(stderr, "[rank %d] readlink(/proc/self/exe) failed\n", mtest_wrank);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    buf[n] = '\0';
}

/* The number after "key:" on a line of a /proc file (/proc/self/status, /proc/PID/io), or -1. */
static inline long long mtest_proc_value(const char *path, const char *key)
{
    FILE *f = fopen(path, "r");
    char line[256];
    long long v = -1;
    size_t n = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, n) && line[n] == ':' && sscanf(line + n + 1, "%lld", &v) == 1)
            break;
    if (f)
        fclose(f);
    return v;
}

/* A ring over comm at 1 B, 32 B, ... up to max bytes (eager and rendezvous sizes): each rank
 * sends to the next and checks what the previous one sent. */
static inline void mtest_ring_sizes(MPI_Comm comm, int max)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int len = 1; len <= max; len *= 32) {
        char *out = mtest_malloc((size_t)len), *in = mtest_malloc((size_t)len);
        mtest_fill(out, (size_t)len, rank, len);
        MPI_Sendrecv(out, len, MPI_CHAR, (rank + 1) % size, len, in, len, MPI_CHAR,
                     (rank + size - 1) % size, len, comm, MPI_STATUS_IGNORE);
        mtest_verify("ring", in, (size_t)len, (rank + size - 1) % size, len);
        free(out);
        free(in);
    }
}

#endif /* MTEST_H */
