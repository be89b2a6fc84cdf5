/* The ceiling of bi-directional bandwidth between two processes on one node
 * with heap buffers, no MPI (docs/bench.md, "Bi-directional bandwidth with
 * heap buffers: the limit"). Two processes (fork) each send a window of
 * messages to the other, as bench/src/bw.c --mode bi does (a window of 64,
 * fewer so that a window fits 32 MiB, every message from and into its own
 * slot), by one of:
 *   copy  the pipelined two copies of the library's staging pool, with
 *         nothing else: the sender copies 64 KiB chunks into a pool of 8 in
 *         shared memory and raises the chunk's flag, the receiver copies the
 *         chunk out and clears it; each process alternates between filling
 *         its own pool and emptying the peer's. NT_IN / NT_OUT: non-temporal
 *         stores (AVX2) for the copy in / out.
 *   cma   single copy: each process reads the peer's messages with
 *         process_vm_readv, then both wait for the other's window.
 * Build: gcc -O2 -mavx2 -o bidi_ceiling bench/tools/bidi_ceiling.c
 * Usage: bidi_ceiling copy|cma BYTES [NT_IN NT_OUT [CHUNK [CHUNKS]]]
 * Prints the bi-directional bandwidth in MB/s (both directions, 10^6 B/s),
 * the better of two passes of 256 MiB each way. */
#define _GNU_SOURCE
#include <immintrin.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* n a multiple of 128, dst 32-byte aligned when streamed */
static void copy(void *dst, const void *src, size_t n, int nt)
{
    if (!nt) {
        memcpy(dst, src, n);
        return;
    }
    char *d = dst;
    const char *s = src;
    for (size_t i = 0; i < n; i += 128)
        for (int k = 0; k < 128; k += 32)
            _mm256_stream_si256((__m256i *)(d + i + k), _mm256_loadu_si256((const __m256i *)(s + i + k)));
    _mm_sfence();
}

typedef struct {
    _Atomic long full[64];  /* per chunk: 1 while the receiver has not copied it out */
} pool_flags;

typedef struct {
    _Atomic long ready;      /* both processes started */
    _Atomic long pass[2];    /* passes begun, per process */
    _Atomic long window[2];  /* cma: windows done, per process */
    pid_t pid[2];
} shared_sync;

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[1], "copy") && strcmp(argv[1], "cma"))) {
        fprintf(stderr, "usage: %s copy|cma BYTES [NT_IN NT_OUT [CHUNK [CHUNKS]]]\n", argv[0]);
        return 2;
    }
    int cma = !strcmp(argv[1], "cma");
    size_t size = strtoull(argv[2], NULL, 0);
    int nt_in = argc > 3 ? atoi(argv[3]) : 1, nt_out = argc > 4 ? atoi(argv[4]) : 1;
    size_t chunk = argc > 5 ? strtoull(argv[5], NULL, 0) : 65536;
    int nchunks = argc > 6 ? atoi(argv[6]) : 8;
    if (size == 0 || size % 128 || chunk == 0 || chunk % 4096 || nchunks < 1 || nchunks > 64) {
        fprintf(stderr, "BYTES: a multiple of 128; CHUNK: of 4096; CHUNKS: 1-64\n");
        return 2;
    }
    size_t cap = 32u << 20;
    long window = size * 64 <= cap ? 64 : (long)(cap / size) > 0 ? (long)(cap / size) : 1;
    long iters = (long)((256ul << 20) / (window * size));
    if (iters < 4)
        iters = 4;
    size_t per = (size_t)window * size, pool = chunk * (size_t)nchunks;
    char *sh = mmap(NULL, 3 * 4096 + 2 * pool, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED)
        return 1;
    pool_flags *flags[2] = {(pool_flags *)sh, (pool_flags *)(sh + 4096)};
    shared_sync *sync = (shared_sync *)(sh + 8192);
    char *pools[2] = {sh + 3 * 4096, sh + 3 * 4096 + pool};
    char *sbuf = aligned_alloc(4096, per), *rbuf = aligned_alloc(4096, per);
    if (!sbuf || !rbuf)
        return 1;
    memset(sbuf, 1, per);
    memset(rbuf, 2, per);
    pid_t child = fork();
    int me = child == 0, peer = 1 - me;
    sync->pid[me] = getpid();
    atomic_fetch_add(&sync->ready, 1);
    while (atomic_load(&sync->ready) < 2)
        ;
    size_t per_msg = (size + chunk - 1) / chunk;
    long total = iters * window * (long)per_msg;
    double best = 0;
    for (int pass = 0; pass < 2; pass++) {
        atomic_fetch_add(&sync->pass[me], 1);
        while (atomic_load(&sync->pass[peer]) < pass + 1)
            sched_yield();
        double t0 = now();
        if (!cma) {
            long out = 0, in = 0;
            while (out < total || in < total) {
                if (out < total) {
                    int k = (int)(out % nchunks);
                    if (!atomic_load_explicit(&flags[me]->full[k], memory_order_acquire)) {
                        long m = (out / (long)per_msg) % window;
                        size_t off = (size_t)(out % (long)per_msg) * chunk;
                        size_t n = size - off < chunk ? size - off : chunk;
                        copy(pools[me] + (size_t)k * chunk, sbuf + (size_t)m * size + off, n, nt_in);
                        atomic_store_explicit(&flags[me]->full[k], 1, memory_order_release);
                        out++;
                    }
                }
                if (in < total) {
                    int k = (int)(in % nchunks);
                    if (atomic_load_explicit(&flags[peer]->full[k], memory_order_acquire)) {
                        long m = (in / (long)per_msg) % window;
                        size_t off = (size_t)(in % (long)per_msg) * chunk;
                        size_t n = size - off < chunk ? size - off : chunk;
                        copy(rbuf + (size_t)m * size + off, pools[peer] + (size_t)k * chunk, n, nt_out);
                        atomic_store_explicit(&flags[peer]->full[k], 0, memory_order_release);
                        in++;
                    }
                }
            }
        } else {
            for (long it = 0; it < iters; it++) {
                for (long m = 0; m < window; m++) {
                    struct iovec l = {rbuf + (size_t)m * size, size}, r = {sbuf + (size_t)m * size, size};
                    if (process_vm_readv(sync->pid[peer], &l, 1, &r, 1, 0) != (ssize_t)size) {
                        perror("process_vm_readv");
                        _exit(1);
                    }
                }
                long done = pass * iters + it + 1;
                atomic_store(&sync->window[me], done);
                while (atomic_load(&sync->window[peer]) < done)
                    ;
            }
        }
        double mbps = 2.0 * (double)iters * (double)per / (now() - t0) / 1e6;
        if (mbps > best)
            best = mbps;
    }
    if (me == 1)
        _exit(0);
    int st = 0;
    waitpid(child, &st, 0);
    printf("%s %zu bytes (nt in %d, out %d, %zu x %d chunks): %.0f MB/s\n", argv[1], size, nt_in, nt_out,
           chunk, nchunks, best);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
