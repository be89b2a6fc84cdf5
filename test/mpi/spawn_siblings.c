/* Two sibling jobs joined by their parent (docs/launcher.md "Endpoints between jobs"): the
 * parent spawns job A and job B (SIBLINGS_N processes each, default 2) with two separate
 * MPI_Comm_spawn calls, then joins them twice:
 *  1. through itself as bridge: A merges its parent inter-communicator (parent low), that
 *     intra-communicator and B make an inter-communicator with the parent's rank 0 and B's
 *     rank 0 as leaders (MPI_Intercomm_create over the parent's inter-communicator with B),
 *     which all merge into one; A and B then build their own inter-communicator over it
 *     (MPI_Intercomm_create, leaders A's rank 0 and B's rank 0);
 *  2. through a port: A's rank 0 opens one, sends its name to the parent, the parent passes it
 *     to B, A accepts and B connects.
 * Over each inter-communicator A's rank i and B's rank i exchange a 64 KiB pattern both ways,
 * and A and B allreduce (each side gets the sum of the other side's values) and barrier.
 * Under mpirun --isolate the connections between A and B are the daemons' (a sibling's, which
 * the daemon grants on the peer's true token); the test list runs it under --isolate net over
 * sock and net,shm, the multi-host stage with A and B on two hosts (SIBLINGS_HOST_A and
 * SIBLINGS_HOST_B: info "host" of each spawn). */
#include "mtest.h"
#include <limits.h>

#define CHILD_A "--spawn-siblings-a"
#define CHILD_B "--spawn-siblings-b"
#define LEN     65536

/* A's rank i and B's rank i exchange LEN bytes both ways, then an allreduce and a barrier
 * across: side 0 is A, 1 is B */
static void talk(MPI_Comm inter, int side, const char *how)
{
    int rank, size, rsize;
    MPI_Comm_rank(inter, &rank);
    MPI_Comm_size(inter, &size);
    MPI_Comm_remote_size(inter, &rsize);
    mtest_check(rsize == size, "%s: %d processes across, %d here", how, rsize, size);
    unsigned char *out = mtest_malloc(LEN), *in = mtest_malloc(LEN);
    int me = side * 1000 + rank, other = (1 - side) * 1000 + rank;
    if (rank < rsize) {
        mtest_fill(out, LEN, me, 7);
        memset(in, 0, LEN);
        MPI_Sendrecv(out, LEN, MPI_BYTE, rank, 7, in, LEN, MPI_BYTE, rank, 7, inter,
                     MPI_STATUS_IGNORE);
        mtest_verify(how, in, LEN, other, 7);
    }
    long v = (long)(side + 1) * 100 + rank, sum = -1, want = 0;
    for (int i = 0; i < rsize; i++)
        want += (long)(2 - side) * 100 + i;
    MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, inter);
    mtest_check(sum == want, "%s: allreduce across gave %ld at %c's rank %d, not %ld", how, sum,
                side ? 'B' : 'A', rank, want);
    MPI_Barrier(inter);
    free(out);
    free(in);
}

static int child(MPI_Comm parent, int side)
{
    int rank, size, psize, perrs = 0;
    MPI_Comm merged, up, all, ab;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_remote_size(parent, &psize);
    mtest_wrank = (side + 1) * 100 + rank;
    /* 1. the parent as bridge */
    if (side == 0) {
        MPI_Intercomm_merge(parent, 1, &merged); /* the parent's ranks first, then A's */
        MPI_Intercomm_create(merged, 0, MPI_COMM_NULL, 0, 1, &up);
        MPI_Intercomm_merge(up, 0, &all); /* parent, A, then B */
        MPI_Intercomm_create(MPI_COMM_WORLD, 0, all, psize + size, 2, &ab);
        MPI_Comm_free(&merged);
    } else {
        MPI_Intercomm_create(MPI_COMM_WORLD, 0, parent, 0, 1, &up);
        MPI_Intercomm_merge(up, 1, &all);
        int asize;
        MPI_Comm_remote_size(up, &asize); /* the parent's and A's */
        MPI_Intercomm_create(MPI_COMM_WORLD, 0, all, psize, 2, &ab);
        mtest_check(asize == psize + size, "B: %d processes of the parent and A", asize);
    }
    talk(ab, side, "bridge");
    MPI_Comm_free(&ab);
    MPI_Comm_free(&all);
    MPI_Comm_free(&up);
    /* 2. a port whose name the parent passes */
    char port[MPI_MAX_PORT_NAME] = "";
    if (side == 0) {
        if (rank == 0) {
            mtest_check_rc("open port", MPI_Open_port(MPI_INFO_NULL, port));
            MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 3, parent);
        }
        mtest_check_rc("accept", MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ab));
        if (rank == 0)
            MPI_Close_port(port);
    } else {
        if (rank == 0)
            MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 3, parent, MPI_STATUS_IGNORE);
        mtest_check_rc("connect", MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ab));
    }
    talk(ab, side, "port");
    MPI_Comm_disconnect(&ab);
    MPI_Allreduce(&mtest_errs, &perrs, 1, MPI_INT, MPI_SUM, parent);
    MPI_Comm_disconnect(&parent);
    MPI_Finalize();
    return mtest_errs == 0 ? 0 : 1;
}

static MPI_Comm spawn(const char *exe, const char *which, int n, const char *host)
{
    char *args[] = {(char *)which, NULL};
    MPI_Info info = MPI_INFO_NULL;
    MPI_Comm c = MPI_COMM_NULL;
    if (host != NULL && host[0]) {
        MPI_Info_create(&info);
        MPI_Info_set(info, "host", host);
    }
    mtest_check_rc(which,
                   MPI_Comm_spawn(exe, args, n, info, 0, MPI_COMM_WORLD, &c, MPI_ERRCODES_IGNORE));
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    return c;
}

int main(int argc, char **argv)
{
    MPI_Comm parent = MPI_COMM_NULL;
    char exe[PATH_MAX];
    mtest_init(&argc, &argv);
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL)
        return child(parent, argc > 1 && strcmp(argv[1], CHILD_B) == 0);
    int rank, n = getenv("SIBLINGS_N") ? atoi(getenv("SIBLINGS_N")) : 2, zero = 0, cerrs = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    mtest_self_exe(exe, sizeof exe);
    MPI_Comm a = spawn(exe, CHILD_A, n, getenv("SIBLINGS_HOST_A"));
    MPI_Comm b = spawn(exe, CHILD_B, n, getenv("SIBLINGS_HOST_B"));
    if (a == MPI_COMM_NULL || b == MPI_COMM_NULL)
        return mtest_finalize();
    /* 1. the bridge: the parent and A merged, with B */
    MPI_Comm merged, up, all;
    MPI_Intercomm_merge(a, 0, &merged);
    MPI_Intercomm_create(merged, 0, b, 0, 1, &up);
    MPI_Intercomm_merge(up, 0, &all);
    int asize, wsize;
    MPI_Comm_size(all, &asize);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    mtest_check(asize == wsize + 2 * n, "the merged communicator has %d processes, not %d", asize,
                wsize + 2 * n);
    MPI_Comm_free(&all);
    MPI_Comm_free(&up);
    MPI_Comm_free(&merged);
    /* 2. the port: A's name passed to B */
    if (rank == 0) {
        char port[MPI_MAX_PORT_NAME];
        MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 3, a, MPI_STATUS_IGNORE);
        MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 3, b);
    }
    MPI_Allreduce(&zero, &cerrs, 1, MPI_INT, MPI_SUM, a);
    mtest_check(cerrs == 0, "job A: %d errors", cerrs);
    MPI_Allreduce(&zero, &cerrs, 1, MPI_INT, MPI_SUM, b);
    mtest_check(cerrs == 0, "job B: %d errors", cerrs);
    MPI_Comm_disconnect(&a);
    MPI_Comm_disconnect(&b);
    return mtest_finalize();
}
