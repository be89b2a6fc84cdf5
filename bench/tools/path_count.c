/* Instructions per call on the point-to-point paths, counted with callgrind
 * (docs/bench.md, "Counting instructions"): deterministic where timings on a
 * loaded 2-core machine are not. Run by bench/tools/path_count.sh, 2 ranks,
 * each under callgrind; every measured MPI call is made by one of the m_*
 * wrappers below (not inlined), so its inclusive count divided by the number
 * of calls is the call's cost.
 *
 * A call never waits for the other rank: what it needs has already arrived,
 * because the ranks pass turns through a flag in shared memory outside MPI
 * (the packet a rank sent is in the peer's ring before the flag says so), so
 * no count includes polls that found nothing. Phases (argv[1], default all):
 *   eager  64 MPI_Isend of 8 B and MPI_Waitall (all born complete); the peer
 *          posts 64 MPI_Irecv and its MPI_Waitall takes the 64 arrivals in
 *          one pass; then MPI_Send of 8 B and MPI_Recv of it (in the ring,
 *          taken by the receive's first pass)
 *   read   64 KiB sender-first (run with DCFA_RNDV_MODE=read DCFA_CMA_MIN=0):
 *          MPI_Isend (the RTS), MPI_Recv (the read and DONE), MPI_Wait of the
 *          send (the DONE's arrival)
 *   write  64 KiB receiver-first (DCFA_CMA_MIN=0): MPI_Irecv (the RTR),
 *          MPI_Iprobe at the sender (the RTR's arrival), MPI_Send (the write
 *          and DONE), MPI_Wait of the receive (the DONE's arrival)
 * Usage: path_count [eager|read|write|all] [ITER] */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define WIN      64
#define BIG      (64 << 10)
#define NOINLINE __attribute__((noinline))

NOINLINE int m_isend8(const void *b, int peer, int tag, MPI_Request *r)
{
    return MPI_Isend(b, 8, MPI_CHAR, peer, tag, MPI_COMM_WORLD, r);
}
NOINLINE int m_irecv8(void *b, int peer, int tag, MPI_Request *r)
{
    return MPI_Irecv(b, 8, MPI_CHAR, peer, tag, MPI_COMM_WORLD, r);
}
NOINLINE int m_waitall_send(MPI_Request *r) { return MPI_Waitall(WIN, r, MPI_STATUSES_IGNORE); }
NOINLINE int m_waitall_recv(MPI_Request *r) { return MPI_Waitall(WIN, r, MPI_STATUSES_IGNORE); }
NOINLINE int m_send8(const void *b, int peer)
{
    return MPI_Send(b, 8, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
}
NOINLINE int m_recv8(void *b, int peer)
{
    return MPI_Recv(b, 8, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}
NOINLINE int m_isend_big(const void *b, int peer, MPI_Request *r)
{
    return MPI_Isend(b, BIG, MPI_CHAR, peer, 2, MPI_COMM_WORLD, r);
}
NOINLINE int m_recv_big(void *b, int peer)
{
    return MPI_Recv(b, BIG, MPI_CHAR, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}
NOINLINE int m_wait_send_big(MPI_Request *r) { return MPI_Wait(r, MPI_STATUS_IGNORE); }
NOINLINE int m_irecv_big(void *b, int peer, MPI_Request *r)
{
    return MPI_Irecv(b, BIG, MPI_CHAR, peer, 3, MPI_COMM_WORLD, r);
}
NOINLINE int m_iprobe(int peer)
{
    int flag;
    return MPI_Iprobe(peer, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
}
NOINLINE int m_send_big(const void *b, int peer)
{
    return MPI_Send(b, BIG, MPI_CHAR, peer, 3, MPI_COMM_WORLD);
}
NOINLINE int m_wait_recv_big(MPI_Request *r) { return MPI_Wait(r, MPI_STATUS_IGNORE); }

/* Steps: each is one rank's, and begins once every earlier step has ended. `turn` (shared
 * memory, outside MPI) counts the steps ended; both ranks count the steps begun alike. */
static _Atomic unsigned *turn;
static unsigned steps;
static int me;

/* begin the next step: 1 if it is this rank's (every earlier step has ended), else 0 */
static int mine(int owner)
{
    unsigned s = steps++;
    if (owner != me)
        return 0;
    while (atomic_load_explicit(turn, memory_order_acquire) != s)
        sched_yield();
    return 1;
}
static void done(void) { atomic_fetch_add_explicit(turn, 1, memory_order_release); }

int main(int argc, char **argv)
{
    const char *phase = argc > 1 ? argv[1] : "all";
    int iter = argc > 2 ? atoi(argv[2]) : 200;
    int size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (me == 0)
            fprintf(stderr, "path_count: run with 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int peer = 1 - me;
    char name[64] = "";
    if (me == 0) {
        snprintf(name, sizeof name, "/tmp/path_count.XXXXXX");
        int fd = mkstemp(name);
        if (fd < 0 || ftruncate(fd, 4096) != 0)
            MPI_Abort(MPI_COMM_WORLD, 2);
        close(fd);
    }
    MPI_Bcast(name, sizeof name, MPI_CHAR, 0, MPI_COMM_WORLD);
    FILE *f = fopen(name, "r+");
    if (!f)
        MPI_Abort(MPI_COMM_WORLD, 2);
    turn = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fileno(f), 0);
    fclose(f);
    if (turn == MAP_FAILED)
        MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0)
        unlink(name);

    char small[WIN][8];
    char *big = malloc(BIG);
    memset(big, me, BIG);
    memset(small, me, sizeof small);
    MPI_Request req[WIN];
    /* connect and warm up outside the measured calls */
    MPI_Sendrecv_replace(small[0], 8, MPI_CHAR, peer, 0, peer, 0, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
    MPI_Sendrecv_replace(big, BIG, MPI_CHAR, peer, 0, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);

    int all = !strcmp(phase, "all");
    for (int it = 0; it < iter; it++) {
        if (all || !strcmp(phase, "eager")) {
            if (mine(0)) {
                for (int i = 0; i < WIN; i++)
                    m_isend8(small[i], peer, 10 + i, &req[i]);
                m_waitall_send(req);
                done();
            }
            if (mine(1)) {
                for (int i = 0; i < WIN; i++)
                    m_irecv8(small[i], peer, 10 + i, &req[i]);
                m_waitall_recv(req);
                done();
            }
            if (mine(0)) {
                m_send8(small[0], peer);
                done();
            }
            if (mine(1)) {
                m_recv8(small[0], peer);
                done();
            }
        }
        if (all || !strcmp(phase, "read")) {
            if (mine(0)) {
                m_isend_big(big, peer, &req[0]);
                done();
            }
            if (mine(1)) {
                m_recv_big(big, peer);
                done();
            }
            if (mine(0)) {
                m_wait_send_big(&req[0]);
                done();
            }
        }
        if (all || !strcmp(phase, "write")) {
            if (mine(1)) {
                m_irecv_big(big, peer, &req[0]);
                done();
            }
            if (mine(0)) {
                m_iprobe(peer);
                m_send_big(big, peer);
                done();
            }
            if (mine(1)) {
                m_wait_recv_big(&req[0]);
                done();
            }
        }
    }
    free(big);
    MPI_Barrier(MPI_COMM_WORLD);
    munmap((void *)turn, 4096);
    MPI_Finalize();
    return 0;
}
