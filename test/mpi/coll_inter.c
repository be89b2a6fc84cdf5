/*
 * Collectives on an inter-communicator: MPI_COMM_WORLD is split into group A
 * (the first third of the ranks, at least one) and group B (the rest), joined
 * by MPI_Intercomm_create, so the two groups have unequal sizes.  Checked:
 * bcast (MPI_ROOT / MPI_PROC_NULL / remote root, from either group), barrier,
 * reduce, allreduce, allgather, allgatherv, alltoall, gather, scatter,
 * reduce_scatter_block; blocking, then the same with the MPI_I... forms
 * (started together, completed by MPI_Waitall).  Needs at least 2 ranks.
 * Data: element k of local rank r of group g is val(g, r, k, root).
 */
#include "mtest.h"

#define CNT 5

static int nb; /* 0 blocking, 1 nonblocking */
static MPI_Request reqs[64];
static int nreq;

static int val(int g, int r, int k, int salt) { return g * 100000 + r * 1000 + k * 10 + salt; }

/* run the collective now (blocking) or queue it (nb) */
#define CALL(B, I, ...)                                              \
    do {                                                             \
        if (nb)                                                      \
            mtest_check_rc(#I, MPI_##I(__VA_ARGS__, &reqs[nreq++])); \
        else                                                         \
            mtest_check_rc(#B, MPI_##B(__VA_ARGS__));                \
    } while (0)

static void flush(void)
{
    if (nreq)
        mtest_check_rc("MPI_Waitall", MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE));
    nreq = 0;
}

static void check(const char *what, int root, int idx, int got, int want)
{
    if (got != want)
        mtest_fail("%s (%s): root %d, index %d: expected %d got %d", what,
                   nb ? "nonblocking" : "blocking", root, idx, want, got);
}

int main(int argc, char **argv)
{
    int wrank, wsize, g, rank, lsize, rsize;
    MPI_Comm local, inter;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (wsize < 2) {
        mtest_fail("needs at least 2 ranks");
        return mtest_finalize();
    }
    int na = wsize / 3 > 0 ? wsize / 3 : 1;
    g = wrank < na ? 0 : 1;
    MPI_Comm_split(MPI_COMM_WORLD, g, wrank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, g == 0 ? na : 0, 77, &inter);
    MPI_Comm_rank(inter, &rank);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    int rg = 1 - g;

    for (nb = 0; nb < 2; nb++) {
        /* ---- bcast: each group roots in turn, root = each rank of it */
        for (int sg = 0; sg < 2; sg++) {
            int ssize = sg == g ? lsize : rsize;
            for (int root = 0; root < ssize; root++) {
                int buf[CNT];
                for (int k = 0; k < CNT; k++)
                    buf[k] = sg == g && rank == root ? val(g, rank, k, 1) : -1;
                int r = sg == g ? (rank == root ? MPI_ROOT : MPI_PROC_NULL) : root;
                CALL(Bcast, Ibcast, buf, CNT, MPI_INT, r, inter);
                flush();
                for (int k = 0; k < CNT; k++) {
                    if (sg != g)
                        check("bcast receiver", root, k, buf[k], val(sg, root, k, 1));
                    else if (rank == root)
                        check("bcast root buffer", root, k, buf[k], val(g, rank, k, 1));
                    else
                        check("bcast MPI_PROC_NULL buffer untouched", root, k, buf[k], -1);
                }
            }
        }
        /* ---- barrier: group 0 rank 0 enters late; nobody in group 1 leaves before */
        {
            double t = 0;
            if (g == 0 && rank == 0) {
                mtest_sleep_ms(20);
                t = MPI_Wtime();
            }
            CALL(Barrier, Ibarrier, inter);
            flush();
            double t_out = MPI_Wtime(), t_in = t;
            MPI_Bcast(&t_in, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
            if (t_out < t_in)
                mtest_fail("barrier (%s): left %.6f s before group 0 rank 0 entered",
                           nb ? "nonblocking" : "blocking", t_in - t_out);
        }
        /* ---- allreduce (SUM over the remote group), allgather, allgatherv, alltoall,
         * reduce_scatter_block: all started together in nb mode */
        {
            int s[CNT], ar[CNT], ag[8 * CNT], agv[8 * CNT + 16], rcounts[8], displs[8];
            int *a2s = mtest_malloc(sizeof(int) * CNT * rsize);
            int *a2r = mtest_malloc(sizeof(int) * CNT * rsize);
            /* reduce_scatter_block: recvcount = remote size in each group, so both
             * groups' input vectors hold lsize * rsize elements */
            int *rss = mtest_malloc(sizeof(int) * lsize * rsize);
            int rsr[8];
            for (int k = 0; k < CNT; k++)
                s[k] = val(g, rank, k, 2);
            for (int i = 0; i < 8 * CNT; i++)
                ag[i] = -1;
            for (int i = 0; i < 8 * CNT + 16; i++)
                agv[i] = -1;
            /* allgatherv: remote rank i sends i%3+1 ints, placed in reverse order */
            int off = 0;
            for (int i = rsize - 1; i >= 0; i--) {
                rcounts[i] = i % 3 + 1;
                displs[i] = off;
                off += rcounts[i] + 1;
            }
            for (int j = 0; j < CNT * rsize; j++)
                a2s[j] = val(g, rank, j, 3); /* block for remote rank j / CNT */
            for (int j = 0; j < lsize * rsize; j++)
                rss[j] = val(g, rank, j, 4);
            CALL(Allreduce, Iallreduce, s, ar, CNT, MPI_INT, MPI_SUM, inter);
            CALL(Allgather, Iallgather, s, CNT, MPI_INT, ag, CNT, MPI_INT, inter);
            CALL(Allgatherv, Iallgatherv, s, rank % 3 + 1, MPI_INT, agv, rcounts, displs, MPI_INT,
                 inter);
            CALL(Alltoall, Ialltoall, a2s, CNT, MPI_INT, a2r, CNT, MPI_INT, inter);
            flush();
            for (int k = 0; k < CNT; k++) {
                int want = 0;
                for (int q = 0; q < rsize; q++)
                    want += val(rg, q, k, 2);
                check("allreduce", -1, k, ar[k], want);
            }
            for (int q = 0; q < rsize; q++)
                for (int k = 0; k < CNT; k++)
                    check("allgather", -1, q * CNT + k, ag[q * CNT + k], val(rg, q, k, 2));
            for (int i = CNT * rsize; i < 8 * CNT; i++)
                check("allgather beyond the data", -1, i, ag[i], -1);
            for (int q = 0; q < rsize; q++)
                for (int k = 0; k < rcounts[q]; k++)
                    check("allgatherv", -1, displs[q] + k, agv[displs[q] + k], val(rg, q, k, 2));
            for (int q = 0; q < rsize; q++)
                check("allgatherv gap", -1, displs[q] + rcounts[q], agv[displs[q] + rcounts[q]],
                      -1);
            for (int q = 0; q < rsize; q++)
                for (int k = 0; k < CNT; k++)
                    check("alltoall", -1, q * CNT + k, a2r[q * CNT + k],
                          val(rg, q, rank * CNT + k, 3));
            /* our block `rank` (rsize elements) of the sum of the remote group's vectors */
            for (int k = 0; k < 8; k++)
                rsr[k] = -1;
            CALL(Reduce_scatter_block, Ireduce_scatter_block, rss, rsr, rsize, MPI_INT, MPI_SUM,
                 inter);
            flush();
            for (int k = 0; k < 8; k++) {
                int want = -1;
                if (k < rsize) {
                    want = 0;
                    for (int q = 0; q < rsize; q++)
                        want += val(rg, q, rank * rsize + k, 4);
                }
                check("reduce_scatter_block", -1, k, rsr[k], want);
            }
            free(a2s);
            free(a2r);
            free(rss);
        }
        /* ---- rooted: reduce, gather, scatter with each rank of each group as root */
        for (int sg = 0; sg < 2; sg++) {
            int ssize = sg == g ? lsize : rsize;
            for (int root = 0; root < ssize; root++) {
                int isroot = sg == g && rank == root;
                int r = sg == g ? (isroot ? MPI_ROOT : MPI_PROC_NULL) : root;
                int s[CNT], red[CNT], sc[CNT];
                int *gat = mtest_malloc(sizeof(int) * CNT * 8);
                int *scs = mtest_malloc(sizeof(int) * CNT * 8);
                for (int k = 0; k < CNT; k++) {
                    s[k] = val(g, rank, k, 5 + root);
                    red[k] = sc[k] = -1;
                }
                for (int i = 0; i < CNT * 8; i++) {
                    gat[i] = -1;
                    scs[i] = isroot ? val(g, rank, i, 6 + root) : -1;
                }
                CALL(Reduce, Ireduce, s, red, CNT, MPI_INT, MPI_SUM, r, inter);
                CALL(Gather, Igather, s, CNT, MPI_INT, gat, CNT, MPI_INT, r, inter);
                CALL(Scatter, Iscatter, scs, CNT, MPI_INT, sc, CNT, MPI_INT, r, inter);
                flush();
                if (isroot) {
                    for (int k = 0; k < CNT; k++) {
                        int want = 0;
                        for (int q = 0; q < rsize; q++)
                            want += val(rg, q, k, 5 + root);
                        check("reduce at root", root, k, red[k], want);
                    }
                    for (int q = 0; q < rsize; q++)
                        for (int k = 0; k < CNT; k++)
                            check("gather at root", root, q * CNT + k, gat[q * CNT + k],
                                  val(rg, q, k, 5 + root));
                } else if (sg == g) {
                    for (int k = 0; k < CNT; k++) {
                        check("reduce MPI_PROC_NULL untouched", root, k, red[k], -1);
                        check("scatter MPI_PROC_NULL untouched", root, k, sc[k], -1);
                    }
                } else {
                    for (int k = 0; k < CNT; k++)
                        check("scatter receiver", root, k, sc[k],
                              val(sg, root, rank * CNT + k, 6 + root));
                }
                free(gat);
                free(scs);
            }
        }
    }
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
    return mtest_finalize();
}
