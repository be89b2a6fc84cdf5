/* util: logging, memory, handle tables, time, backoff. */
#include "util/util.h"

#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "util/node_key.h"
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

int util_log_rank = -1;
int util_log_fd = STDERR_FILENO;
char util_log_job[64];
void (*util_proc_namer)(int lpid, char *buf, size_t len);

const char *util_proc(int lpid)
{
    static _Thread_local char names[4][96];
    static _Thread_local unsigned next;
    char *buf = names[next++ % 4];
    if (util_proc_namer)
        util_proc_namer(lpid, buf, sizeof names[0]);
    else
        snprintf(buf, sizeof names[0], "process %d", lpid);
    return buf;
}

void (*util_host_namer)(int lpid, char *buf, size_t len);

const char *util_proc_host(int lpid)
{
    static _Thread_local char hosts[2][128];
    static _Thread_local unsigned next;
    char *buf = hosts[next++ % 2];
    buf[0] = 0;
    if (util_host_namer)
        util_host_namer(lpid, buf, sizeof hosts[0]);
    return buf;
}

static void util_vlog(const char *fmt, va_list ap)
{
    char buf[1024];
    int n;
    if (util_log_rank >= 0 && util_log_job[0])
        n = snprintf(buf, sizeof buf, "[dcfa-mpi] rank %d of job %s: ", util_log_rank,
                     util_log_job);
    else if (util_log_rank >= 0)
        n = snprintf(buf, sizeof buf, "[dcfa-mpi] rank %d: ", util_log_rank);
    else
        n = snprintf(buf, sizeof buf, "[dcfa-mpi] pid %d: ", (int)getpid());
    if (n < 0 || (size_t)n >= sizeof buf)
        n = 0;
    vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
    size_t len = strlen(buf);
    if (len + 1 < sizeof buf && (len == 0 || buf[len - 1] != '\n')) {
        buf[len++] = '\n';
        buf[len] = 0;
    }
    /* one write so lines of different ranks do not interleave */
    if (util_log_fd < 0)
        return;
    ssize_t w = write(util_log_fd, buf, len);
    (void)w;
}

void util_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    util_vlog(fmt, ap);
    va_end(ap);
}

void (*util_die_hook)(void);
static void (*util_die_cleanup[4])(void);

void util_die_cleanup_add(void (*fn)(void))
{
    for (int i = 0; i < 4; i++) {
        if (util_die_cleanup[i] == fn)
            return;
        if (!util_die_cleanup[i]) {
            util_die_cleanup[i] = fn;
            return;
        }
    }
}

_Noreturn void util_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    util_vlog(fmt, ap);
    va_end(ap);
    for (int i = 0; i < 4 && util_die_cleanup[i]; i++)
        util_die_cleanup[i]();
    if (util_die_hook)
        util_die_hook();
    _exit(1);
}

void *util_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        util_die("out of memory allocating %zu bytes", n);
    return p;
}

void *util_calloc(size_t n, size_t m)
{
    void *p = calloc(n ? n : 1, m ? m : 1);
    if (!p)
        util_die("out of memory allocating %zu x %zu bytes", n, m);
    return p;
}

void *util_realloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        util_die("out of memory reallocating %zu bytes", n);
    return q;
}

char *util_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = util_malloc(n);
    memcpy(d, s, n);
    return d;
}

/* ---- copying with non-temporal stores -----------------------------------------------
 * A staging chunk is written by its owner and read by a peer, over and over: when the
 * owner refills it, each line is in the peer's cache from the last read, and an ordinary
 * store first takes the line over (a read for ownership that crosses to the other core).
 * Non-temporal stores write whole lines to memory without that. Measured on an AMD EPYC
 * (Zen 4) VM, a stream of 64 KiB messages through the pool: 2.1-8.3 GB/s with memcpy
 * (the sender's copy 4-5x slower than the receiver's), 15.7-20.5 GB/s with these. The
 * receiver copying a large message out of the pool saves the same way the read of each
 * line of its buffer, which is not in cache anyway (docs/bench.md). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

__attribute__((target("avx2"))) static void util_copy_nt_avx2(char *d, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i += 128) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(s + i));
        __m256i b = _mm256_loadu_si256((const __m256i *)(s + i + 32));
        __m256i c = _mm256_loadu_si256((const __m256i *)(s + i + 64));
        __m256i e = _mm256_loadu_si256((const __m256i *)(s + i + 96));
        _mm256_stream_si256((__m256i *)(d + i), a);
        _mm256_stream_si256((__m256i *)(d + i + 32), b);
        _mm256_stream_si256((__m256i *)(d + i + 64), c);
        _mm256_stream_si256((__m256i *)(d + i + 96), e);
    }
}

static void util_copy_nt_sse2(char *d, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(s + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(s + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(s + i + 32));
        __m128i e = _mm_loadu_si128((const __m128i *)(s + i + 48));
        _mm_stream_si128((__m128i *)(d + i), a);
        _mm_stream_si128((__m128i *)(d + i + 16), b);
        _mm_stream_si128((__m128i *)(d + i + 32), c);
        _mm_stream_si128((__m128i *)(d + i + 48), e);
    }
}

int util_copy_nt_streams(size_t n, size_t min)
{
    return min != 0 && n >= min && n >= 256;
}

size_t util_copy_nt(void *dst, const void *src, size_t n, size_t min)
{
    if (!util_copy_nt_streams(n, min)) {
        memcpy(dst, src, n);
        return 0;
    }
    size_t all = n;
    char *d = dst;
    const char *s = src;
    size_t head = (size_t)(-(uintptr_t)d & 63);     /* to the destination's next line */
    memcpy(d, s, head);
    d += head;
    s += head;
    n -= head;
    size_t body = n & ~(size_t)127;
    __builtin_cpu_init();   /* once in effect; no state of ours shared between threads */
    if (__builtin_cpu_supports("avx2"))
        util_copy_nt_avx2(d, s, body);
    else
        util_copy_nt_sse2(d, s, body);
    memcpy(d + body, s + body, n - body);
    _mm_sfence();   /* the streamed lines before any later store (the packet's release) */
    return all;
}
#else
int util_copy_nt_streams(size_t n, size_t min)
{
    return 0;
}

size_t util_copy_nt(void *dst, const void *src, size_t n, size_t min)
{
    memcpy(dst, src, n);
    return 0;
}
#endif

/* ---- handle tables ---------------------------------------------------------- */

static void util_htab_grow_state(util_htab *t, int upto)
{
    if (upto < t->free_cap)
        return;
    int cap = t->free_cap ? t->free_cap * 2 : 256;
    while (cap <= upto)
        cap *= 2;
    t->free_next = util_realloc(t->free_next, (size_t)cap * sizeof(int));
    for (int k = t->free_cap; k < cap; k++)
        t->free_next[k] = -1;
    t->free_cap = cap;
}

/* free_next[i] is -2 while index i is in use, else the next free index (-1 ends the chain) */
void util_htab_init(util_htab *t, size_t objsize, int reserved)
{
    memset(t, 0, sizeof *t);
    t->objsize = objsize;
    t->free_head = -1;
    t->next_unused = reserved > 1 ? reserved : 1;
    int need = t->next_unused / UTIL_HTAB_CHUNK + 1;
    t->chunks = util_calloc((size_t)need, sizeof *t->chunks);
    t->nchunks = need;
    for (int c = 0; c < need; c++)
        t->chunks[c] = util_calloc(UTIL_HTAB_CHUNK, sizeof(void *));
    util_htab_grow_state(t, t->next_unused);
    for (int i = 1; i < t->next_unused; i++) {
        t->chunks[i / UTIL_HTAB_CHUNK][i % UTIL_HTAB_CHUNK] = util_calloc(1, objsize);
        t->free_next[i] = -2;
    }
}

void *util_htab_alloc(util_htab *t, int *index)
{
    int i;
    if (t->free_head >= 0) {
        i = t->free_head;
        t->free_head = t->free_next[i];
    } else {
        i = t->next_unused++;
        if (i >= (1 << 24) - 1)
            util_die("handle table exhausted");
        int c = i / UTIL_HTAB_CHUNK;
        if (c >= t->nchunks) {
            t->chunks = util_realloc(t->chunks, (size_t)(c + 1) * sizeof *t->chunks);
            t->chunks[c] = util_calloc(UTIL_HTAB_CHUNK, sizeof(void *));
            t->nchunks = c + 1;
        }
        util_htab_grow_state(t, i);
    }
    void **slot = &t->chunks[i / UTIL_HTAB_CHUNK][i % UTIL_HTAB_CHUNK];
    if (!*slot)
        *slot = util_calloc(1, t->objsize);
    else
        memset(*slot, 0, t->objsize);
    t->free_next[i] = -2;
    *index = i;
    return *slot;
}

void util_htab_destroy(util_htab *t)
{
    for (int c = 0; c < t->nchunks; c++) {
        for (int k = 0; k < UTIL_HTAB_CHUNK; k++)
            free(t->chunks[c][k]);
        free(t->chunks[c]);
    }
    free(t->chunks);
    free(t->free_next);
    memset(t, 0, sizeof *t);
}

/* ---- time -------------------------------------------------------------------- */

uint64_t util_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double util_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- backoff: spin briefly, then yield, then sleep in short naps ---------------- */

static struct {
    int spin_auto; /* DCFA_SPIN_US was -1 ("auto") */
    int procs;     /* processes known on this node, this one included */
    int over;      /* more of them than cores */
    int held;      /* util_backoff_hold: answers awaited from another process of this host */
} backoff_st;

static void backoff_resolve(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int over = cores > 0 && backoff_st.procs > cores;
    __atomic_store_n(&backoff_st.over, over, __ATOMIC_RELAXED);
    /* read by waiting threads without the entry lock: stored atomically */
    if (backoff_st.spin_auto)
        __atomic_store_n(&util_cfg.spin_us, over ? 0 : 2000, __ATOMIC_RELAXED);
}

void util_backoff_configure(int local_ranks)
{
    backoff_st.spin_auto = util_cfg.spin_us < 0;
    if (util_cfg.yield_us < 0) /* auto: the same whether the node is oversubscribed or not */
        __atomic_store_n(&util_cfg.yield_us, 20000, __ATOMIC_RELAXED);
    backoff_st.procs = local_ranks;
    backoff_resolve();
}

int util_node_procs(void) { return __atomic_load_n(&backoff_st.procs, __ATOMIC_RELAXED); }

int util_node_oversubscribed(void)
{
    return __atomic_load_n(&backoff_st.over, __ATOMIC_RELAXED);
}

void util_backoff_neighbours(int delta)
{
    if (delta == 0)
        return;
    __atomic_add_fetch(&backoff_st.procs, delta, __ATOMIC_RELAXED);
    backoff_resolve();
}

static inline void util_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

void (*util_wait_unlock)(void);
void (*util_wait_lock)(void);
void (*util_wait_idle)(void);
int (*util_wait_block)(int max_ms);

void util_backoff_hold(int delta) { __atomic_add_fetch(&backoff_st.held, delta, __ATOMIC_RELAXED); }

/* the spin of a wait now: none while an answer of another process of this host is awaited */
static inline uint64_t util_backoff_spin(void)
{
    if (__atomic_load_n(&backoff_st.held, __ATOMIC_RELAXED) > 0)
        return 0;
    return (uint64_t)__atomic_load_n(&util_cfg.spin_us, __ATOMIC_RELAXED);
}

static void util_backoff_pause(util_backoff *b, uint64_t waited_us)
{
    uint64_t spin = util_backoff_spin();
    uint64_t yield = (uint64_t)__atomic_load_n(&util_cfg.yield_us, __ATOMIC_RELAXED);
    if (waited_us < spin) {
        util_cpu_relax();
        return;
    }
    b->yielding = 1;
    if (waited_us < spin + yield) {
        sched_yield();
        return;
    }
    /* asleep: 20 us naps keep an oversubscribed node responsive without burning a core */
    struct timespec ts = {0, 20000};
    nanosleep(&ts, NULL);
}

void util_backoff_wait(util_backoff *b)
{
    if (b->polls == 0)
        b->start_ns = util_now_ns();
    b->polls++;
    /* while spinning, read the clock only every 64 polls; no pause instruction in
     * between: on recent x86 it costs ~140 cycles, a third of a message's latency. With no
     * spin at all (DCFA_SPIN_US 0: more processes than cores) the first idle poll yields:
     * the process waited for may be the one kept off the core. Only a process alone on its
     * node may sleep on its fabrics' descriptors (what others of the node write to shared
     * memory, rings, the node segment's collectives, shared windows, has no descriptor),
     * after DCFA_SLEEP_US: it reads the clock every 8 polls */
    int may_sleep = util_wait_block && util_cfg.sleep_us >= 0 && util_node_procs() <= 1;
    unsigned every = may_sleep ? 7 : 63;
    if (!b->yielding && ((unsigned)b->polls & every) != 0 && util_backoff_spin() != 0)
        return;
    uint64_t now = util_now_ns();
    uint64_t waited_us = (now - b->start_ns) / 1000;
    if (util_wait_idle &&
        waited_us >=
            util_backoff_spin() + (uint64_t)__atomic_load_n(&util_cfg.yield_us, __ATOMIC_RELAXED) &&
        now - b->idle_ns >= (uint64_t)UTIL_IDLE_CHECK_MS * 1000000u) {
        b->idle_ns = now;
        util_wait_idle();
    }
    if (!util_wait_unlock) {
        /* alone in the library: once the wait is DCFA_SLEEP_US old, sleep in the kernel on
         * the fabrics' descriptors when they can wake it (the core decides), else pause */
        if (may_sleep && waited_us >= (uint64_t)util_cfg.sleep_us &&
            util_wait_block(UTIL_WAIT_BLOCK_MS)) {
            b->yielding = 1;
            return;
        }
        util_backoff_pause(b, waited_us);
        return;
    }
    util_wait_unlock();
    util_backoff_pause(b, waited_us);
    util_wait_lock();
}

int util_backoff_wait_fd(util_backoff *b, int fd, short events, int max_ms)
{
    uint64_t now = util_now_ns();
    if (b->polls++ == 0)
        b->start_ns = b->idle_ns = now;
    if (util_wait_idle && now - b->idle_ns >= (uint64_t)UTIL_IDLE_CHECK_MS * 1000000u) {
        b->idle_ns = now;
        util_wait_idle();
    }
    struct pollfd p = {.fd = fd, .events = events};
    if (util_wait_unlock)
        util_wait_unlock();
    int n = poll(&p, 1, max_ms);
    int err = n < 0 ? errno : 0;
    if (util_wait_lock)
        util_wait_lock();
    if (n < 0)
        return err == EINTR ? 0 : -err;
    return n > 0;
}

const char *util_node_key(void)
{
    static char key[UTIL_NODE_KEY_MAX + 1];
    if (!key[0])
        util_node_key_make(key, sizeof key, getenv("DCFA_NODE_KEY"));
    return key;
}

/* ---- job resources in /dev/shm ---------------------------------------------------- */

int util_shm_unlink_job(const char *job_id)
{
    /* "dcfa-<job_id>-", built by hand: snprintf is not async-signal-safe */
    char prefix[96];
    size_t plen = 0, jlen = strlen(job_id);
    if (jlen == 0 || jlen + 6 >= sizeof prefix)
        return 0;
    memcpy(prefix, "dcfa-", 5);
    plen = 5;
    memcpy(prefix + plen, job_id, jlen);
    plen += jlen;
    prefix[plen++] = '-';
    int dfd = open("/dev/shm", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return 0;
    /* getdents64 straight from the kernel: opendir() allocates. Removing
     * entries while reading may make a pass skip some: read again until a
     * pass finds nothing to remove. */
    _Alignas(8) char buf[4096];
    int removed = 0;
    for (int pass = 0, more = 1; more && pass < 8; pass++) {
        more = 0;
        lseek(dfd, 0, SEEK_SET);
        long n;
        while ((n = syscall(SYS_getdents64, dfd, buf, sizeof buf)) > 0) {
            for (long off = 0; off < n;) {
                struct util_dirent64 {
                    uint64_t ino;
                    int64_t off;
                    unsigned short reclen;
                    unsigned char type;
                    char name[];
                } *d = (struct util_dirent64 *)(buf + off);
                off += d->reclen;
                if (strncmp(d->name, prefix, plen) == 0 && unlinkat(dfd, d->name, 0) == 0) {
                    removed++;
                    more = 1;
                }
            }
        }
    }
    close(dfd);
    return removed;
}

/* ---- shared-memory segments ------------------------------------------------------ */

int util_shm_create(const char *name, size_t len, const char *what, void **out)
{
    if (util_shm_daemon())
        return util_shm_daemon_map(1, name, len, what, out);
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
        int err = errno;
        char path[256];
        struct stat st;
        snprintf(path, sizeof path, "/dev/shm%s", name);
        if (err == EEXIST && stat(path, &st) == 0) {
            util_log("%s: shared-memory segment %s already exists (owner uid %u, mode %04o), made by "
                     "someone else: refusing to use it",
                     what, path, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
            return UTIL_EACCES;
        }
        util_log("%s: cannot create shared-memory segment %s: %s", what, path, strerror(err));
        return err == EEXIST ? UTIL_EACCES : -err;
    }
    int rc = UTIL_OK;
    /* reserve the memory now: tmpfs would otherwise hand out pages on first touch, and a
     * full /dev/shm would kill the process with SIGBUS in the middle of a message */
    int err = posix_fallocate(fd, 0, (off_t)len);
    if (err != 0) {
        struct statvfs vs;
        unsigned long long avail = statvfs("/dev/shm", &vs) == 0 ? (unsigned long long)vs.f_bavail * vs.f_frsize : 0;
        util_log("%s: cannot reserve %zu bytes in /dev/shm for %s: %s (/dev/shm has %llu bytes free; "
                 "make it larger, e.g. docker run --shm-size)",
                 what, len, name, strerror(err), avail);
        rc = err == ENOSPC ? UTIL_ENOMEM : -err;
        goto unlink;
    }
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        rc = -errno;
        util_log("%s: cannot map shared-memory segment %s (%zu bytes): %m", what, name, len);
        goto unlink;
    }
    close(fd);
    *out = p;
    return UTIL_OK;
unlink:
    shm_unlink(name);
    close(fd);
    return rc;
}

int util_shm_attach(const char *name, size_t len, const char *what, void **out)
{
    if (util_shm_daemon())
        return util_shm_daemon_map(0, name, len, what, out);
    int fd = shm_open(name, O_RDWR, 0);
    if (fd < 0) {
        if (errno == ENOENT)
            return UTIL_ENOENT;
        int rc = -errno;
        util_log("%s: cannot open shared-memory segment /dev/shm%s: %m", what, name);
        return rc;
    }
    int rc = UTIL_OK;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        rc = -errno;
        util_log("%s: cannot inspect shared-memory segment /dev/shm%s: %m", what, name);
        goto close;
    }
    if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 07777) != 0600) {
        util_log("%s: shared-memory segment /dev/shm%s belongs to uid %u with mode %04o, not to this "
                 "user (uid %u) with mode 0600: someone else made it, refusing to use it",
                 what, name, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), (unsigned)geteuid());
        rc = UTIL_EACCES;
        goto close;
    }
    if ((size_t)st.st_size != len) {
        util_log("%s: shared-memory segment /dev/shm%s has %lld bytes, this process expects %zu (do "
                 "DCFA_MAX_CREDIT, DCFA_BLOCK_SIZE and DCFA_EAGER_LIMIT differ between the processes?)",
                 what, name, (long long)st.st_size, len);
        rc = UTIL_EINVAL;
        goto close;
    }
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        rc = -errno;
        util_log("%s: cannot map shared-memory segment /dev/shm%s: %m", what, name);
        goto close;
    }
    *out = p;
close:
    close(fd);
    return rc;
}

/* ---- names no one else can guess ---------------------------------------------------- */

int util_random(void *buf, size_t len)
{
    for (size_t got = 0; got < len;) {
        ssize_t n = getrandom((char *)buf + got, len - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -errno : UTIL_EIO;
        got += (size_t)n;
    }
    return UTIL_OK;
}

uint64_t util_shm_token(void)
{
    uint64_t t = 0;
    while (t == 0)
        if (util_random(&t, sizeof t) != UTIL_OK)
            util_die("cannot draw a random name for a shared-memory segment: %m");
    return t;
}
