/* Every collective on an inter-communicator. COMM_WORLD is split into two
 * groups of unequal size (A: the first (size - 1) / 2 ranks, B: the rest) and
 * joined with MPI_Intercomm_create. Rooted collectives run once with the root
 * in A and once with the root in B (MPI_ROOT / MPI_PROC_NULL in the root's
 * group, the root's rank in the other); results are checked element by
 * element. The whole set runs with the blocking calls, then with the
 * nonblocking ones (MPI_I... + MPI_Wait). Needs >= 3 ranks. */
#include "mtest.h"

static int isb, lrank, lsize, rsize;
static MPI_Comm inter;

/* the value element i of local rank r of group g contributes */
static int val(int g, int r, int i) { return g * 100000 + r * 1000 + i % 1000; }

/* the v forms: block k has k + 1 elements, blocks stored in reverse order
 * with a one-element gap after each */
static int vdispl(int k)
{
    int d = 0, j;
    for (j = rsize - 1; j > k; j--)
        d += j + 2;
    return d;
}

/* complete a nonblocking call, or nothing for a blocking one */
static void done(int nb, MPI_Request *req)
{
    if (nb)
        MPI_Wait(req, MPI_STATUS_IGNORE);
}

/* first(a, b) = a: associative, not commutative; the result is the lowest rank's */
static void op_first(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    memcpy(inout, in, (size_t)*len * sizeof(int));
}

static void t_barrier(int nb)
{
    MPI_Request req;
    if (nb)
        MPI_Ibarrier(inter, &req);
    else
        MPI_Barrier(inter);
    done(nb, &req);
}

/* root: local rank `root` of group rootg. What this process passes as root. */
static int root_arg(int rootg, int root)
{
    if (isb == rootg)
        return lrank == root ? MPI_ROOT : MPI_PROC_NULL;
    return root;
}

static void t_bcast(int nb, int rootg, int root)
{
    enum { N = 37 };
    int buf[N], i, r = root_arg(rootg, root);
    MPI_Request req;
    for (i = 0; i < N; i++)
        buf[i] = r == MPI_ROOT ? val(isb, lrank, i) : -1;
    if (nb)
        MPI_Ibcast(buf, N, MPI_INT, r, inter, &req);
    else
        MPI_Bcast(buf, N, MPI_INT, r, inter);
    done(nb, &req);
    for (i = 0; i < N; i++) {
        int want = r == MPI_PROC_NULL ? -1 : val(rootg, root, i);
        if (!mtest_check(buf[i] == want, "bcast(nb=%d root %d/%d) buf[%d]=%d want %d", nb, rootg,
                         root, i, buf[i], want))
            break;
    }
}

static void t_reduce(int nb, int rootg, int root, MPI_Op op, int first)
{
    enum { N = 23 };
    int sbuf[N], rbuf[N], i, r = root_arg(rootg, root);
    MPI_Request req;
    for (i = 0; i < N; i++) {
        sbuf[i] = val(isb, lrank, i);
        rbuf[i] = -1;
    }
    if (nb)
        MPI_Ireduce(sbuf, rbuf, N, MPI_INT, op, r, inter, &req);
    else
        MPI_Reduce(sbuf, rbuf, N, MPI_INT, op, r, inter);
    done(nb, &req);
    for (i = 0; i < N; i++) {
        int want = -1, k;
        if (r == MPI_ROOT) {
            want = first ? val(!isb, 0, i) : 0;
            for (k = 0; !first && k < rsize; k++)
                want += val(!isb, k, i);
        }
        if (!mtest_check(rbuf[i] == want, "reduce(nb=%d first=%d root %d/%d) rbuf[%d]=%d want %d",
                         nb, first, rootg, root, i, rbuf[i], want))
            break;
    }
}

static void t_allreduce(int nb, MPI_Op op, int first)
{
    enum { N = 1000 };
    int *sbuf = mtest_malloc(N * sizeof(int)), *rbuf = mtest_malloc(N * sizeof(int)), i, k;
    MPI_Request req;
    for (i = 0; i < N; i++) {
        sbuf[i] = val(isb, lrank, i);
        rbuf[i] = -1;
    }
    if (nb)
        MPI_Iallreduce(sbuf, rbuf, N, MPI_INT, op, inter, &req);
    else
        MPI_Allreduce(sbuf, rbuf, N, MPI_INT, op, inter);
    done(nb, &req);
    for (i = 0; i < N; i++) {
        int want = first ? val(!isb, 0, i) : 0;
        for (k = 0; !first && k < rsize; k++)
            want += val(!isb, k, i);
        if (!mtest_check(rbuf[i] == want, "allreduce(nb=%d first=%d) rbuf[%d]=%d want %d", nb,
                         first, i, rbuf[i], want))
            break;
    }
    free(sbuf);
    free(rbuf);
}

/* gather (v = 0) and gatherv (v = 1: remote rank k sends k + 1 elements, see vdispl) */
static void t_gather(int nb, int v, int rootg, int root)
{
    enum { B = 4 };
    int r = root_arg(rootg, root), n = rsize * (B + 3 * rsize), i, k;
    int *rbuf = mtest_malloc((size_t)n * sizeof(int)), sbuf[B + 64];
    int *counts = mtest_malloc((size_t)rsize * sizeof(int));
    int *displs = mtest_malloc((size_t)rsize * sizeof(int));
    int scount = v ? lrank + 1 : B;
    MPI_Request req;
    for (i = 0; i < n; i++)
        rbuf[i] = -1;
    for (i = 0; i < scount; i++)
        sbuf[i] = val(isb, lrank, i);
    for (k = 0; k < rsize; k++) {
        counts[k] = v ? k + 1 : B;
        displs[k] = v ? vdispl(k) : B * k;
    }
    if (v && nb)
        MPI_Igatherv(sbuf, scount, MPI_INT, rbuf, counts, displs, MPI_INT, r, inter, &req);
    else if (v)
        MPI_Gatherv(sbuf, scount, MPI_INT, rbuf, counts, displs, MPI_INT, r, inter);
    else if (nb)
        MPI_Igather(sbuf, scount, MPI_INT, rbuf, B, MPI_INT, r, inter, &req);
    else
        MPI_Gather(sbuf, scount, MPI_INT, rbuf, B, MPI_INT, r, inter);
    done(nb, &req);
    if (r == MPI_ROOT) {
        for (k = 0; k < rsize; k++)
            for (i = 0; i < counts[k]; i++)
                mtest_check(rbuf[displs[k] + i] == val(!isb, k, i),
                            "gather(nb=%d v=%d root %d/%d) block %d [%d]=%d want %d", nb, v, rootg,
                            root, k, i, rbuf[displs[k] + i], val(!isb, k, i));
    } else {
        for (i = 0; i < n; i++)
            mtest_check(rbuf[i] == -1, "gather(nb=%d v=%d) non-root rbuf[%d] written", nb, v, i);
    }
    free(rbuf);
    free(counts);
    free(displs);
}

/* scatter / scatterv: the root sends remote rank k the values val(root, k, i) */
static void t_scatter(int nb, int v, int rootg, int root)
{
    enum { B = 5 };
    int r = root_arg(rootg, root), n = rsize * (B + 3 * rsize), i, k;
    int *sbuf = mtest_malloc((size_t)n * sizeof(int)), rbuf[B + 64];
    int *counts = mtest_malloc((size_t)rsize * sizeof(int));
    int *displs = mtest_malloc((size_t)rsize * sizeof(int));
    int rcount = v ? lrank + 1 : B;
    MPI_Request req;
    for (k = 0; k < rsize; k++) {
        counts[k] = v ? k + 1 : B;
        displs[k] = v ? vdispl(k) : B * k;
        for (i = 0; i < counts[k]; i++)
            sbuf[displs[k] + i] = 1000000 + val(!isb, k, i);
    }
    for (i = 0; i < B + 64; i++)
        rbuf[i] = -1;
    if (v && nb)
        MPI_Iscatterv(sbuf, counts, displs, MPI_INT, rbuf, rcount, MPI_INT, r, inter, &req);
    else if (v)
        MPI_Scatterv(sbuf, counts, displs, MPI_INT, rbuf, rcount, MPI_INT, r, inter);
    else if (nb)
        MPI_Iscatter(sbuf, B, MPI_INT, rbuf, rcount, MPI_INT, r, inter, &req);
    else
        MPI_Scatter(sbuf, B, MPI_INT, rbuf, rcount, MPI_INT, r, inter);
    done(nb, &req);
    for (i = 0; i < B + 64; i++) {
        int want = r >= 0 && i < rcount ? 1000000 + val(isb, lrank, i) : -1;
        if (!mtest_check(rbuf[i] == want, "scatter(nb=%d v=%d root %d/%d) rbuf[%d]=%d want %d", nb,
                         v, rootg, root, i, rbuf[i], want))
            break;
    }
    free(sbuf);
    free(counts);
    free(displs);
}

/* allgather / allgatherv: remote rank k's block (k + 1 elements for v) */
static void t_allgather(int nb, int v)
{
    enum { B = 3 };
    int n = rsize * (B + 3 * rsize), i, k, sbuf[B + 64];
    int *rbuf = mtest_malloc((size_t)n * sizeof(int));
    int *counts = mtest_malloc((size_t)rsize * sizeof(int));
    int *displs = mtest_malloc((size_t)rsize * sizeof(int));
    int scount = v ? lrank + 1 : B;
    MPI_Request req;
    for (i = 0; i < n; i++)
        rbuf[i] = -1;
    for (i = 0; i < scount; i++)
        sbuf[i] = val(isb, lrank, i);
    for (k = 0; k < rsize; k++) {
        counts[k] = v ? k + 1 : B;
        displs[k] = v ? vdispl(k) : B * k;
    }
    if (v && nb)
        MPI_Iallgatherv(sbuf, scount, MPI_INT, rbuf, counts, displs, MPI_INT, inter, &req);
    else if (v)
        MPI_Allgatherv(sbuf, scount, MPI_INT, rbuf, counts, displs, MPI_INT, inter);
    else if (nb)
        MPI_Iallgather(sbuf, scount, MPI_INT, rbuf, B, MPI_INT, inter, &req);
    else
        MPI_Allgather(sbuf, scount, MPI_INT, rbuf, B, MPI_INT, inter);
    done(nb, &req);
    for (k = 0; k < rsize; k++)
        for (i = 0; i < counts[k]; i++)
            mtest_check(rbuf[displs[k] + i] == val(!isb, k, i),
                        "allgather(nb=%d v=%d) block %d [%d]=%d want %d", nb, v, k, i,
                        rbuf[displs[k] + i], val(!isb, k, i));
    free(rbuf);
    free(counts);
    free(displs);
}

/* the value local rank `from` of group g sends remote rank `to`, element i */
static int a2a(int g, int from, int to, int i) { return g * 100000 + from * 1000 + to * 10 + i; }

/* form 0: alltoall, 1: alltoallv (to remote k: k + 1 + lrank elements), 2: alltoallw */
static void t_alltoall(int nb, int form)
{
    enum { B = 2, MAXB = 32 };
    int i, k;
    int *sbuf = mtest_malloc((size_t)rsize * MAXB * sizeof(int));
    int *rbuf = mtest_malloc((size_t)rsize * MAXB * sizeof(int));
    int *sc = mtest_malloc((size_t)rsize * sizeof(int)), *sd = mtest_malloc(rsize * sizeof(int));
    int *rc = mtest_malloc((size_t)rsize * sizeof(int)), *rd = mtest_malloc(rsize * sizeof(int));
    MPI_Datatype *types = mtest_malloc((size_t)rsize * sizeof(MPI_Datatype));
    MPI_Request req;
    for (k = 0; k < rsize; k++) {
        sc[k] = form ? k + 1 + lrank : B;
        rc[k] = form ? lrank + 1 + k : B;
        sd[k] = k * MAXB * (form == 2 ? (int)sizeof(int) : 1);
        rd[k] = (rsize - 1 - k) * MAXB * (form == 2 ? (int)sizeof(int) : 1);
        types[k] = MPI_INT;
        for (i = 0; i < MAXB; i++) {
            sbuf[k * MAXB + i] = a2a(isb, lrank, k, i);
            rbuf[k * MAXB + i] = -1;
        }
    }
    if (form == 0) {
        /* packed blocks of B: rearrange sbuf */
        for (k = 0; k < rsize; k++)
            for (i = 0; i < B; i++)
                sbuf[k * B + i] = a2a(isb, lrank, k, i);
        if (nb)
            MPI_Ialltoall(sbuf, B, MPI_INT, rbuf, B, MPI_INT, inter, &req);
        else
            MPI_Alltoall(sbuf, B, MPI_INT, rbuf, B, MPI_INT, inter);
        for (k = 0; k < rsize; k++)
            rd[k] = k * B;
    } else if (form == 1 && nb) {
        MPI_Ialltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, inter, &req);
    } else if (form == 1) {
        MPI_Alltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, inter);
    } else if (nb) {
        MPI_Ialltoallw(sbuf, sc, sd, types, rbuf, rc, rd, types, inter, &req);
    } else {
        MPI_Alltoallw(sbuf, sc, sd, types, rbuf, rc, rd, types, inter);
    }
    done(nb, &req);
    for (k = 0; k < rsize; k++) {
        int at = form == 2 ? rd[k] / (int)sizeof(int) : rd[k];
        for (i = 0; i < rc[k]; i++)
            mtest_check(rbuf[at + i] == a2a(!isb, k, lrank, i),
                        "alltoall(nb=%d form=%d) from %d [%d]=%d want %d", nb, form, k, i,
                        rbuf[at + i], a2a(!isb, k, lrank, i));
    }
    free(sbuf);
    free(rbuf);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(types);
}

/* reduce_scatter(_block): both groups reduce vectors of the same length T;
 * each group's is scattered over the other group */
static void t_reduce_scatter(int nb, int block, int nA, int nB)
{
    int T = 2 * nA * nB, i, k, off = 0;
    int *sbuf = mtest_malloc((size_t)T * sizeof(int)), *rbuf = mtest_malloc(T * sizeof(int));
    int *counts = mtest_malloc((size_t)lsize * sizeof(int));
    MPI_Request req;
    for (k = 0; k < lsize; k++)
        counts[k] = T / lsize;
    if (!block && lsize > 1) {
        counts[0]--;
        counts[lsize - 1]++;
    }
    for (k = 0; k < lrank; k++)
        off += counts[k];
    for (i = 0; i < T; i++) {
        sbuf[i] = val(isb, lrank, i);
        rbuf[i] = -1;
    }
    if (block && nb)
        MPI_Ireduce_scatter_block(sbuf, rbuf, counts[0], MPI_INT, MPI_SUM, inter, &req);
    else if (block)
        MPI_Reduce_scatter_block(sbuf, rbuf, counts[0], MPI_INT, MPI_SUM, inter);
    else if (nb)
        MPI_Ireduce_scatter(sbuf, rbuf, counts, MPI_INT, MPI_SUM, inter, &req);
    else
        MPI_Reduce_scatter(sbuf, rbuf, counts, MPI_INT, MPI_SUM, inter);
    done(nb, &req);
    for (i = 0; i < counts[lrank]; i++) {
        int want = 0;
        for (k = 0; k < rsize; k++)
            want += val(!isb, k, off + i);
        if (!mtest_check(rbuf[i] == want, "reduce_scatter(nb=%d block=%d) rbuf[%d]=%d want %d", nb,
                         block, i, rbuf[i], want))
            break;
    }
    free(sbuf);
    free(rbuf);
    free(counts);
}

static void run_all(int nb, int nA, int nB, MPI_Op first)
{
    int g, v;
    t_barrier(nb);
    for (g = 0; g < 2; g++) {
        int root = g == 0 ? 0 : nB - 1; /* A's first rank, B's last */
        /* MPICH 4.0.2's MPI_Ibcast mishandles a nonzero root on an
         * inter-communicator: the reference runs only root 0 there */
        t_bcast(nb, g, nb ? 0 : root);
        t_reduce(nb, g, root, MPI_SUM, 0);
        t_reduce(nb, g, root, first, 1);
        for (v = 0; v < 2; v++) {
            t_gather(nb, v, g, root);
            t_scatter(nb, v, g, root);
        }
    }
    t_allreduce(nb, MPI_SUM, 0);
    t_allreduce(nb, first, 1);
    for (v = 0; v < 2; v++) {
        t_allgather(nb, v);
        t_reduce_scatter(nb, v, nA, nB);
    }
    for (v = 0; v < 3; v++)
        t_alltoall(nb, v);
    t_barrier(nb);
}

int main(int argc, char **argv)
{
    int rank, size, nA, nB, rc, ok;
    MPI_Comm local;
    MPI_Op first;
    MPI_Request req;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 3) {
        mtest_fail("coll_intercomm needs at least 3 ranks");
        return mtest_finalize();
    }
    nA = (size - 1) / 2;
    nB = size - nA;
    isb = rank >= nA;
    MPI_Comm_split(MPI_COMM_WORLD, isb, rank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, isb ? 0 : nA, 12, &inter);
    MPI_Comm_rank(inter, &lrank);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    mtest_check_int("local size", lsize, isb ? nB : nA);
    mtest_check_int("remote size", rsize, isb ? nA : nB);
    MPI_Op_create(op_first, 0, &first);

    run_all(0, nA, nB, first);

    /* the nonblocking forms, where the library has them */
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    rc = MPI_Ibarrier(inter, &req);
    ok = rc == MPI_SUCCESS;
    if (ok)
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (ok)
        run_all(1, nA, nB, first);
    else if (rank == 0)
        fprintf(stderr, "coll_intercomm: no nonblocking inter-communicator collectives, "
                        "blocking forms only\n");

    MPI_Op_free(&first);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
    return mtest_finalize();
}
