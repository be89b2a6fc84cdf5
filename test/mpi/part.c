/*
 * Partitioned communication: sender and receiver with different
 * partitionings (8 x 1000 ints sent, 4 x 2000 received), partitions made
 * ready in reverse order, by MPI_Pready_range and MPI_Pready_list, three
 * rounds each with new data, MPI_Parrived per receive partition (data
 * checked as soon as it says so), a strided receive datatype, two operations
 * with the same peer and tag paired in the order of their init calls, and
 * MPI_PROC_NULL.
 */
#include "mtest.h"

#define SP 8
#define SN 1000
#define RP 4
#define RN 2000
#define TOTAL (SP * SN)

static int val(int src, int round, int op, int i) { return src * 1000003 + round * 7919 + op * 131 + i; }

int main(int argc, char **argv)
{
    int rank, size;
    static int sbuf[2][TOTAL], rbuf[2][2 * TOTAL];
    MPI_Request sreq[2], rreq[2];
    MPI_Datatype strided;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int peer = rank ^ 1;
    if (peer >= size)
        peer = rank;
    /* op 0: contiguous receive; op 1: every other int of rbuf[1] */
    MPI_Datatype vec;
    MPI_Type_vector(RN, 1, 2, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint)(2 * RN * sizeof(int)), &strided);
    MPI_Type_free(&vec);
    MPI_Type_commit(&strided);

    /* both ops have the same peer and tag: they pair in init order */
    MPI_Precv_init(rbuf[0], RP, RN, MPI_INT, peer, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &rreq[0]);
    MPI_Precv_init(rbuf[1], RP, 1, strided, peer, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &rreq[1]);
    MPI_Psend_init(sbuf[0], SP, SN, MPI_INT, peer, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &sreq[0]);
    MPI_Psend_init(sbuf[1], SP, SN, MPI_INT, peer, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &sreq[1]);

    for (int round = 0; round < 3; round++) {
        for (int op = 0; op < 2; op++)
            for (int i = 0; i < TOTAL; i++)
                sbuf[op][i] = val(rank, round, op, i);
        memset(rbuf, 0xff, sizeof rbuf);
        MPI_Startall(2, rreq);
        MPI_Startall(2, sreq);
        /* op 0 ready in reverse order, op 1 by range then list */
        for (int p = SP - 1; p >= 0; p--)
            MPI_Pready(p, sreq[0]);
        int list[SP / 2];
        for (int i = 0; i < SP / 2; i++)
            list[i] = SP - 1 - 2 * i; /* 7 5 3 1 */
        MPI_Pready_list(SP / 2, list, sreq[1]);
        MPI_Pready_range(0, 0, sreq[1]);
        MPI_Pready_range(2, 2, sreq[1]);
        MPI_Pready_range(4, 4, sreq[1]);
        MPI_Pready_range(6, 6, sreq[1]);

        int seen[2][RP] = {{0}}, left = 2 * RP;
        while (left > 0) {
            for (int op = 0; op < 2; op++) {
                for (int p = 0; p < RP; p++) {
                    int flag = 0;
                    if (seen[op][p])
                        continue;
                    MPI_Parrived(rreq[op], p, &flag);
                    if (!flag)
                        continue;
                    seen[op][p] = 1;
                    left--;
                    for (int i = p * RN; i < (p + 1) * RN; i++) {
                        int got = op == 0 ? rbuf[0][i] : rbuf[1][2 * i];
                        if (got != val(peer, round, op, i)) {
                            mtest_fail("round %d op %d partition %d: [%d] = %d, expected %d", round,
                                       op, p, i, got, val(peer, round, op, i));
                            break;
                        }
                    }
                }
            }
        }
        MPI_Status st[2];
        MPI_Waitall(2, rreq, st);
        MPI_Waitall(2, sreq, MPI_STATUSES_IGNORE);
        for (int op = 0; op < 2; op++) {
            int n = -1;
            MPI_Get_count(&st[op], MPI_INT, &n);
            mtest_check(st[op].MPI_SOURCE == peer && st[op].MPI_TAG == 5 && n == TOTAL,
                        "round %d op %d status: source %d tag %d count %d", round, op,
                        st[op].MPI_SOURCE, st[op].MPI_TAG, n);
        }
        for (int i = 0; i < TOTAL; i++)
            if (rbuf[1][2 * i + 1] != -1) {
                mtest_fail("round %d: the strided receive wrote a gap at %d", round, 2 * i + 1);
                break;
            }
        int flag = 0;
        MPI_Parrived(rreq[0], 0, &flag);
        mtest_check(flag == 1, "MPI_Parrived on an inactive request: flag %d", flag);
    }
    for (int op = 0; op < 2; op++) {
        MPI_Request_free(&sreq[op]);
        MPI_Request_free(&rreq[op]);
    }

    /* MPI_PROC_NULL: rounds complete at once */
    MPI_Request r;
    MPI_Psend_init(sbuf[0], 2, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    MPI_Start(&r);
    MPI_Pready_range(0, 1, r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Request_free(&r);

    /* less data than room, as for a receive: the status counts what was sent */
    {
        MPI_Request ss, rr;
        MPI_Status st;
        int got = -1;
        for (int i = 0; i < 30; i++)
            rbuf[0][i] = -7, sbuf[0][i] = val(rank, 9, 0, i);
        MPI_Precv_init(rbuf[0], 1, 30, MPI_INT, peer, 12, MPI_COMM_WORLD, MPI_INFO_NULL, &rr);
        MPI_Psend_init(sbuf[0], 2, 10, MPI_INT, peer, 12, MPI_COMM_WORLD, MPI_INFO_NULL, &ss);
        MPI_Start(&rr);
        MPI_Start(&ss);
        MPI_Pready_range(0, 1, ss);
        /* MPI_Wait reports errors by its return code: it need not set st.MPI_ERROR */
        int rc = MPI_Wait(&rr, &st);
        MPI_Wait(&ss, MPI_STATUS_IGNORE);
        MPI_Get_count(&st, MPI_INT, &got);
        mtest_check(got == 20 && rc == MPI_SUCCESS, "short message: count %d, MPI_Wait returned %d", got, rc);
        for (int i = 0; i < 30; i++)
            if (rbuf[0][i] != (i < 20 ? val(peer, 9, 0, i) : -7)) {
                mtest_fail("short message: [%d] = %d", i, rbuf[0][i]);
                break;
            }
        MPI_Request_free(&rr);
        MPI_Request_free(&ss);
    }

    /* zero bytes: a partition still arrives only once the sender made it ready */
    MPI_Request zs, zr;
    int zflag = 1;
    MPI_Precv_init(rbuf[0], 2, 0, MPI_INT, peer, 11, MPI_COMM_WORLD, MPI_INFO_NULL, &zr);
    MPI_Psend_init(sbuf[0], 2, 0, MPI_INT, peer, 11, MPI_COMM_WORLD, MPI_INFO_NULL, &zs);
    MPI_Start(&zr);
    MPI_Parrived(zr, 0, &zflag);
    mtest_check(!zflag, "a zero-byte partition arrived before the sender started");
    MPI_Barrier(MPI_COMM_WORLD); /* every receiver has looked before any sender starts */
    MPI_Start(&zs);
    MPI_Pready_range(0, 1, zs);
    for (int p = 0; p < 2; p++) {
        zflag = 0;
        while (!zflag)
            MPI_Parrived(zr, p, &zflag);
    }
    MPI_Wait(&zr, MPI_STATUS_IGNORE);
    MPI_Wait(&zs, MPI_STATUS_IGNORE);
    MPI_Request_free(&zr);
    MPI_Request_free(&zs);

    /* errors */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Psend_init(sbuf[0], 2, 1, MPI_INT, peer, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    mtest_check_class("MPI_Pready before MPI_Start", MPI_Pready(0, r), MPI_ERR_REQUEST);
    MPI_Start(&r);
    mtest_check_class("MPI_Pready out of range", MPI_Pready(2, r), MPI_ERR_ARG);
    MPI_Pready(0, r);
    mtest_check_class("MPI_Pready twice", MPI_Pready(0, r), MPI_ERR_ARG);
    MPI_Pready(1, r);
    MPI_Request pr;
    MPI_Precv_init(rbuf[0], 1, 2, MPI_INT, peer, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &pr);
    MPI_Start(&pr);
    MPI_Wait(&pr, MPI_STATUS_IGNORE);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    mtest_check(rbuf[0][0] == val(peer, 9, 0, 0) && rbuf[0][1] == val(peer, 9, 0, 1),
                "2-partition message: %d %d", rbuf[0][0], rbuf[0][1]);
    MPI_Request_free(&r);
    MPI_Request_free(&pr);
    mtest_check_class("MPI_Precv_init from MPI_ANY_SOURCE",
                      MPI_Precv_init(rbuf[0], 1, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD,
                                     MPI_INFO_NULL, &r),
                      MPI_ERR_RANK);
    MPI_Type_free(&strided);
    return mtest_finalize();
}
