/* mpirun --isolate shm (DCFA_ISOLATE=shm, alone or with net/seccomp): each rank must have no
 * /dev/shm of its own (empty: none of the host's segments visible; creating a segment there
 * fails), its ranks on this host must still count as one node (DCFA_NODE_KEY fixed by the
 * daemon; across hosts, test/hosts/run_multihost.sh stage isolate, one node per host), and what
 * needs shared segments must still work with the daemon's memfds: messages over the shm fabric
 * (door, rings, staging pool), node-level collectives, RMA windows (MPI_Win_allocate and
 * MPI_Win_allocate_shared, whose memory the ranks load and store directly). Fails when run
 * unconfined. */
#include "mtest.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* nothing of the host's /dev/shm is visible */
    DIR *d = opendir("/dev/shm");
    int entries = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            entries++;
    if (d)
        closedir(d);
    mtest_check(entries == 0, "/dev/shm has %d entries, not none", entries);
    /* and the rank cannot make a segment itself */
    char name[64];
    snprintf(name, sizeof name, "/isolate-shm-%d", (int)getpid());
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    mtest_check(fd < 0, "shm_open(%s, O_CREAT) worked: this rank has a /dev/shm of its own", name);
    if (fd >= 0) {
        close(fd);
        shm_unlink(name);
    }

    /* the ranks the daemon started on this host (MPI_LOCALNRANKS) are one node */
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int nsize;
    MPI_Comm_size(node, &nsize);
    const char *local = getenv("MPI_LOCALNRANKS");
    int nlocal = local ? atoi(local) : size;
    mtest_check(nsize == nlocal,
                "MPI_COMM_TYPE_SHARED has %d ranks, this host %d: the ranks "
                "disagree on their node",
                nsize, nlocal);

    /* messages, eager and rendezvous (the staging pool with DCFA_CMA=0) */
    mtest_ring_sizes(MPI_COMM_WORLD, 1 << 20);

    /* collectives (the node segment) */
    long v = rank + 1, sum = 0;
    MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    mtest_check_int("allreduce sum", sum, (long)size * (size + 1) / 2);
    enum { NB = 1 << 16 };
    int *big = mtest_malloc(NB * sizeof *big);
    for (int i = 0; i < NB; i++)
        big[i] = rank == 0 ? i * 7 : -1;
    MPI_Bcast(big, NB, MPI_INT, 0, MPI_COMM_WORLD);
    int bad = 0;
    for (int i = 0; i < NB; i++)
        bad += big[i] != i * 7;
    mtest_check(bad == 0, "bcast: %d wrong elements", bad);
    free(big);
    MPI_Barrier(node);

    /* RMA: a window in memory of the library's (puts to the right neighbour) */
    int *base;
    MPI_Win win;
    MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    *base = -1;
    MPI_Win_fence(0, win);
    int me = rank;
    MPI_Put(&me, 1, MPI_INT, (rank + 1) % size, 0, 1, MPI_INT, win);
    MPI_Win_fence(0, win);
    mtest_check_int("put from the left neighbour", *base, (rank + size - 1) % size);
    MPI_Win_free(&win);

    /* a shared window: the node's ranks store into each other's memory directly */
    int *mine, nrank;
    MPI_Comm_rank(node, &nrank);
    MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, node, &mine, &win);
    MPI_Win_lock_all(0, win);
    *mine = 100 + nrank;
    MPI_Win_sync(win);
    MPI_Barrier(node);
    MPI_Win_sync(win);
    MPI_Aint sz;
    int du, *left, l = (nrank + nsize - 1) % nsize;
    MPI_Win_shared_query(win, l, &sz, &du, &left);
    mtest_check_int("shared window: the left neighbour's value", *left, 100 + l);
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    MPI_Comm_free(&node);
    return mtest_finalize();
}
