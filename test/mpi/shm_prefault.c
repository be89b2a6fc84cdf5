/*
 * shm_prefault: the small messages of the first pass through a ring take no
 * page faults (docs/fabric.md, shm: both ends map a ring's pages when they
 * map it). Two ranks on one node exchange 8 bytes 4000 times (Isend, Irecv,
 * Waitall: 256 KiB of 64-byte blocks, the whole ring of 2 ranks at least
 * once) after one message made the connection; each counts its minor and
 * major page faults over the loop with getrusage. Before, each end faulted
 * once per page it reached: 4 faults every 500 exchanges at each end, 32 in
 * all. Checked on our library only, only where the kernel has
 * MADV_POPULATE_WRITE (5.14 on), and not under AddressSanitizer (whose
 * shadow of the ring faults in); the data are checked everywhere.
 */
#include "mtest.h"

#include <sys/mman.h>
#include <sys/resource.h>

static long faults(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt + u.ru_majflt;
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define SHADOW_FAULTS 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define SHADOW_FAULTS 1
#endif

/* MADV_POPULATE_WRITE works on this kernel (and no sanitizer's shadow
 * memory faults in at the ring's first touch) */
static int kernel_populates(void)
{
#if defined(MADV_POPULATE_WRITE) && !defined(SHADOW_FAULTS)
    size_t len = 4096;
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    int ok = p != MAP_FAILED && madvise(p, len, MADV_POPULATE_WRITE) == 0;
    if (p != MAP_FAILED)
        munmap(p, len);
    return ok;
#else
    return 0;
#endif
}

int main(int argc, char **argv)
{
    enum { ITERS = 4000 };
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int rank, size, len;
    double out = 0, in = -1;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_library_version(lib, &len);
    if (size != 2) {
        mtest_fail("needs 2 ranks, has %d", size);
        return mtest_finalize();
    }
    int peer = 1 - rank, ours = strncmp(lib, "DCFA-MPI", 8) == 0 && kernel_populates();
    /* the connection, and every buffer and request the loop uses, once */
    MPI_Sendrecv(&out, 1, MPI_DOUBLE, peer, 1, &in, 1, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    long f0 = faults();
    for (int i = 0; i < ITERS; i++) {
        MPI_Request r[2];
        out = rank * 1e6 + i;
        MPI_Isend(&out, 1, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD, &r[0]);
        MPI_Irecv(&in, 1, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD, &r[1]);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        if (in != peer * 1e6 + i) {
            mtest_fail("exchange %d: got %.0f, expected %.0f", i, in, peer * 1e6 + i);
            break;
        }
    }
    long f = faults() - f0;
    /* a few for the library's own bookkeeping may come; a fault per page
     * of the ring is 16 or more at each end */
    if (ours && f > 4)
        mtest_fail("%ld page faults in %d exchanges of 8 bytes (the ring's pages not mapped "
                   "when the connection was made?)",
                   f, ITERS);
    return mtest_finalize();
}
