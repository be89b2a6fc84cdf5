/* Direct copies between MPI_Alloc_mem blocks (DCFA_ALLOC_SHM, docs/protocol.md): a block
 * is memory the peers on the node map, so a rendezvous from or into it is one plain copy.
 * Every rank sends to the next and receives from the one before, from and into the middle
 * of blocks (odd offsets and lengths, guard bytes around what is received), then windows
 * both ways at once, then heap to block and block to heap, a truncated receive (nothing
 * written past the buffer), blocks freed and allocated again more times than a peer keeps
 * blocks mapped (each round's bytes must be the new block's, never a stale mapping's), and
 * MPI_Put/MPI_Get on a window over a block. The pvar dcfa_direct_bytes must count the
 * copies (where this kernel lets a process take another's file descriptors), and stay 0
 * where the blocks come from the heap (DCFA_ALLOC_SHM=0, DCFA_CMA=0, or the ofi fabric). */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BIG (4 << 20)
#define GUARD 0xEE

static int rank, size;

/* can this process take a file descriptor from another with pidfd_getfd (Linux 5.6,
 * allowed by seccomp)? Asked of itself; without it the blocks are reached with
 * process_vm_readv/writev and no copy is direct */
static int can_take_fds(void)
{
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_getfd)
    int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
    if (pidfd < 0)
        return 0;
    int fd = (int)syscall(SYS_pidfd_getfd, pidfd, pidfd, 0);
    close(pidfd);
    if (fd < 0)
        return 0;
    close(fd);
    return 1;
#else
    return 0;
#endif
}

static unsigned char pat(int who, int round, size_t k) { return (unsigned char)(who * 53 + round * 17 + k * 7 + (k >> 12)); }

static void *alloc(size_t n)
{
    void *p = NULL;
    mtest_check_rc("MPI_Alloc_mem", MPI_Alloc_mem((MPI_Aint)n, MPI_INFO_NULL, &p));
    return p;
}

static void fill(unsigned char *b, size_t n, int who, int round)
{
    for (size_t k = 0; k < n; k++)
        b[k] = pat(who, round, k);
}

/* [b, b + n) holds who's round pattern; the `guard` bytes on each side are untouched */
static void expect(const char *what, const unsigned char *b, size_t n, int who, int round, size_t guard)
{
    for (size_t k = 0; k < n; k++)
        if (b[k] != pat(who, round, k)) {
            mtest_fail("%s: byte %zu of %zu is %u, want %u (rank %d's round %d)", what, k, n, b[k],
                       pat(who, round, k), who, round);
            return;
        }
    for (size_t k = 1; k <= guard; k++)
        if (b[-(ptrdiff_t)k] != GUARD || b[n + k - 1] != GUARD) {
            mtest_fail("%s: a guard byte next to the %zu bytes received was overwritten", what, n);
            return;
        }
}

/* send n bytes at s to the next rank, receive n at r from the one before */
static void ring(const char *what, unsigned char *s, unsigned char *r, size_t n, int round, size_t guard)
{
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    fill(s, n, rank, round);
    memset(r - guard, GUARD, n + 2 * guard);
    MPI_Sendrecv(s, (int)n, MPI_BYTE, next, round, r, (int)n, MPI_BYTE, prev, round, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    expect(what, r, n, prev, round, guard);
}

int main(int argc, char **argv)
{
    if (!mtest_init_pvars(&argc, &argv, 2, &rank, &size))
        return mtest_finalize();
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_T_pvar_session ses;
    MPI_T_pvar_session_create(&ses);
    unsigned long long direct0 = mtest_pvar_counter(ses, "dcfa_direct_bytes");
    const char *shm = getenv("DCFA_ALLOC_SHM"), *cma = getenv("DCFA_CMA"), *fab = getenv("DCFA_FABRICS");
    int want_direct = !(shm && !strcmp(shm, "0")) && !(cma && !strcmp(cma, "0")) && !(fab && !strcmp(fab, "ofi")) &&
                      can_take_fds();

    unsigned char *a = alloc(BIG), *b = alloc(BIG);
    unsigned char *heap = malloc(BIG);

    /* block to block, odd offsets and lengths, small to large */
    static const size_t lens[] = {20011, 65536, 100003, 262144 + 5, 1048576 + 77, BIG - 8192};
    for (int i = 0; i < 6; i++)
        ring("block to block", a + 101 + i, b + 4096 - 3 + i, lens[i], i, 2);

    /* windows both ways at once: 8 messages of 300 KiB each way, from and into slices */
    {
        enum { W = 8, LEN = 300 * 1024 };
        int next = (rank + 1) % size, prev = (rank + size - 1) % size;
        MPI_Request rq[2 * W];
        for (int w = 0; w < W; w++)
            fill(a + (size_t)w * (LEN + 64), LEN, rank, 10 + w);
        memset(b, GUARD, BIG);
        for (int w = 0; w < W; w++) {
            MPI_Irecv(b + 64 + (size_t)w * (LEN + 64), LEN, MPI_BYTE, prev, w, MPI_COMM_WORLD, &rq[w]);
            MPI_Isend(a + (size_t)w * (LEN + 64), LEN, MPI_BYTE, next, w, MPI_COMM_WORLD, &rq[W + w]);
        }
        mtest_check_rc("MPI_Waitall", MPI_Waitall(2 * W, rq, MPI_STATUSES_IGNORE));
        for (int w = 0; w < W; w++)
            expect("window", b + 64 + (size_t)w * (LEN + 64), LEN, prev, 10 + w, 1);
    }

    /* heap to block and block to heap (one side maps nothing) */
    ring("heap to block", heap + 8, b + 8, 700000, 20, 8);
    ring("block to heap", a + 8, heap + 8, 700000, 21, 8);

    /* truncated: 300000 bytes into 200000, nothing written past them */
    {
        int next = (rank + 1) % size, prev = (rank + size - 1) % size;
        MPI_Request rq[2];
        MPI_Status st[2];
        fill(a, 300000, rank, 22);
        memset(b, GUARD, 200000 + 4096);
        MPI_Irecv(b, 200000, MPI_BYTE, prev, 22, MPI_COMM_WORLD, &rq[0]);
        MPI_Isend(a, 300000, MPI_BYTE, next, 22, MPI_COMM_WORLD, &rq[1]);
        MPI_Waitall(2, rq, st);
        int cls = -1;
        MPI_Error_class(st[0].MPI_ERROR, &cls);
        mtest_check(cls == MPI_ERR_TRUNCATE, "truncated receive: error class %d, want MPI_ERR_TRUNCATE", cls);
        for (size_t k = 0; k < 200000; k++)
            if (b[k] != pat(prev, 22, k)) {
                mtest_fail("truncated receive: byte %zu wrong", k);
                break;
            }
        for (size_t k = 200000; k < 200000 + 4096; k++)
            if (b[k] != GUARD) {
                mtest_fail("truncated receive: byte %zu past the buffer was written", k);
                break;
            }
    }

    /* blocks freed and made again (fd numbers come back with new generations), more of them
     * than a peer keeps mapped: every round must carry the new block's bytes */
    for (int round = 0; round < 40; round++) {
        size_t n = round % 3 == 0 ? 40000 : round % 3 == 1 ? 333333 : 1 << 20;
        unsigned char *s = alloc(n), *r = alloc(n + 64);
        ring("a new block", s, r + 32, n, 100 + round, 32);
        mtest_check_rc("MPI_Free_mem", MPI_Free_mem(s));
        mtest_check_rc("MPI_Free_mem", MPI_Free_mem(r));
    }

    /* one-sided: a window over a block; Put into the next rank's, Get from the one before */
    {
        enum { LEN = 512 * 1024 };
        MPI_Win win;
        int next = (rank + 1) % size, prev = (rank + size - 1) % size;
        memset(b, GUARD, 2 * LEN);
        mtest_check_rc("MPI_Win_create", MPI_Win_create(b, 2 * LEN, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        fill(a, LEN, rank, 200);
        MPI_Win_fence(0, win);
        MPI_Put(a, LEN, MPI_BYTE, next, 1, LEN, MPI_BYTE, win);
        MPI_Win_fence(0, win);
        /* b + 1 now holds prev's pattern; read next's window where my own pattern went */
        MPI_Get(heap, LEN, MPI_BYTE, next, 1, LEN, MPI_BYTE, win);
        MPI_Win_fence(0, win);
        if (b[0] != GUARD || b[LEN + 1] != GUARD)
            mtest_fail("MPI_Put: a byte next to the target range was overwritten");
        for (size_t k = 0; k < LEN; k++)
            if (b[1 + k] != pat(prev, 200, k) || heap[k] != pat(rank, 200, k)) {
                mtest_fail("MPI_Put/MPI_Get: byte %zu wrong", k);
                break;
            }
        MPI_Win_free(&win);
    }

    unsigned long long direct = mtest_pvar_counter(ses, "dcfa_direct_bytes") - direct0;
    if (want_direct)
        mtest_check(direct >= lens[5], "dcfa_direct_bytes grew by %llu: no direct copies", direct);
    else
        mtest_check(direct == 0, "dcfa_direct_bytes grew by %llu with the blocks from the heap", direct);
    MPI_T_pvar_session_free(&ses);
    mtest_check_rc("MPI_Free_mem", MPI_Free_mem(a));
    mtest_check_rc("MPI_Free_mem", MPI_Free_mem(b));
    free(heap);
    MPI_T_finalize();
    return mtest_finalize();
}
