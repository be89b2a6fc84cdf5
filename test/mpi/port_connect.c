/* MPI_Open_port / MPI_Comm_accept / MPI_Comm_connect within one job of >= 2
 * ranks: MPI_COMM_WORLD is split into half A (the first size/2 ranks) and
 * half B (the rest). A's rank 0 opens a port and sends its name to B's rank 0
 * over MPI_COMM_WORLD; A accepts, B connects (roots 0). Over the new
 * inter-communicator: remote sizes, point-to-point both ways (MPI_ANY_SOURCE
 * with MPI_SOURCE checked), MPI_Bcast (MPI_ROOT / MPI_PROC_NULL) and
 * MPI_Allreduce, MPI_Intercomm_merge (A low) with an allreduce; then
 * MPI_Comm_disconnect. Then accept/connect again 10 times on the same port,
 * each time an allreduce and a disconnect; A's rank 0 closes the port. */
#include "mtest.h"

#define REPEAT 10

/* Each rank sends {world rank, local rank} to remote rank (lrank % rsize)
 * and receives one message from every remote rank r with r % lsize == lrank. */
static void exchange(MPI_Comm inter, int is_a, int wrank, int na)
{
    int lrank, lsize, rsize, i, n = 0, out[2], got[2], *seen;
    MPI_Request req;
    MPI_Status st;

    MPI_Comm_rank(inter, &lrank);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    out[0] = wrank;
    out[1] = lrank;
    MPI_Isend(out, 2, MPI_INT, lrank % rsize, 40 + is_a, inter, &req);
    for (i = 0; i < rsize; i++)
        if (i % lsize == lrank)
            n++;
    if (rsize < 1 || lsize < 1) {
        mtest_fail("bad sizes: local %d, remote %d", lsize, rsize);
        MPI_Abort(MPI_COMM_WORLD, 3);
        return;
    }
    seen = mtest_malloc(sizeof(int) * (size_t)rsize);
    memset(seen, 0, sizeof(int) * (size_t)rsize);
    for (i = 0; i < n; i++) {
        got[0] = got[1] = -1;
        MPI_Recv(got, 2, MPI_INT, MPI_ANY_SOURCE, 40 + !is_a, inter, &st);
        if (!mtest_check(got[1] >= 0 && got[1] < rsize && got[1] % lsize == lrank,
                         "message from unexpected remote rank %d", got[1]))
            continue;
        seen[got[1]]++;
        mtest_check(st.MPI_SOURCE == got[1], "MPI_SOURCE %d for a message of remote rank %d",
                    st.MPI_SOURCE, got[1]);
        /* remote rank r is world rank r (A) or na + r (B) */
        mtest_check(got[0] == (is_a ? na + got[1] : got[1]),
                    "remote rank %d says it is world rank %d", got[1], got[0]);
    }
    for (i = 0; i < rsize; i++)
        mtest_check(seen[i] == (i % lsize == lrank), "%d messages from remote rank %d", seen[i], i);
    free(seen);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
}

static void first_connection(MPI_Comm inter, int is_a, int wrank, int na, int nb)
{
    int lrank, lsize = -1, rsize = -1, flag = 0, v[3] = {-1, -1, -1}, sum = -1, msize = -1;
    int mrank = -1;
    MPI_Comm merged;

    MPI_Comm_rank(inter, &lrank);
    MPI_Comm_test_inter(inter, &flag);
    mtest_check_int("Comm_test_inter", flag, 1);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    mtest_check_int("local size", lsize, is_a ? na : nb);
    mtest_check_int("remote size", rsize, is_a ? nb : na);

    exchange(inter, is_a, wrank, na);

    /* Bcast A -> B (A's rank 0 is the root), then B -> A. */
    if (is_a) {
        v[0] = 31;
        v[1] = 41;
        v[2] = 59;
        MPI_Bcast(v, 3, MPI_INT, lrank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter);
        v[0] = v[1] = v[2] = -1;
        MPI_Bcast(v, 3, MPI_INT, 0, inter);
        mtest_check(v[0] == 27 && v[1] == 18 && v[2] == 28, "bcast from B: {%d,%d,%d}", v[0], v[1],
                    v[2]);
    } else {
        MPI_Bcast(v, 3, MPI_INT, 0, inter);
        mtest_check(v[0] == 31 && v[1] == 41 && v[2] == 59, "bcast from A: {%d,%d,%d}", v[0], v[1],
                    v[2]);
        v[0] = 27;
        v[1] = 18;
        v[2] = 28;
        MPI_Bcast(v, 3, MPI_INT, lrank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter);
    }

    /* Allreduce: each side gets the sum of the other side's world ranks. */
    MPI_Allreduce(&wrank, &sum, 1, MPI_INT, MPI_SUM, inter);
    if (is_a)
        mtest_check_int("allreduce over the intercomm (A)", sum,
                        (na + nb) * (na + nb - 1) / 2 - na * (na - 1) / 2);
    else
        mtest_check_int("allreduce over the intercomm (B)", sum, na * (na - 1) / 2);

    /* Merge, A low: the merged rank is the world rank. */
    MPI_Intercomm_merge(inter, !is_a, &merged);
    MPI_Comm_size(merged, &msize);
    MPI_Comm_rank(merged, &mrank);
    mtest_check_int("merged size", msize, na + nb);
    mtest_check_int("merged rank", mrank, wrank);
    sum = -1;
    MPI_Allreduce(&mrank, &sum, 1, MPI_INT, MPI_SUM, merged);
    mtest_check_int("allreduce on the merged comm", sum, (na + nb) * (na + nb - 1) / 2);
    MPI_Comm_disconnect(&merged);
}

int main(int argc, char **argv)
{
    char port[MPI_MAX_PORT_NAME];
    int wrank, wsize, na, nb, is_a, lrank, rc, k, sum;
    MPI_Comm half, inter;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (wsize < 2) {
        mtest_fail("port_connect needs at least 2 ranks");
        return mtest_finalize();
    }
    na = wsize / 2;
    nb = wsize - na;
    is_a = wrank < na;
    MPI_Comm_split(MPI_COMM_WORLD, is_a, wrank, &half);
    MPI_Comm_rank(half, &lrank);

    memset(port, 0, sizeof port);
    if (is_a && lrank == 0) {
        rc = MPI_Open_port(MPI_INFO_NULL, port);
        mtest_check_rc("MPI_Open_port", rc);
        mtest_check(port[0] != '\0' && strlen(port) < MPI_MAX_PORT_NAME,
                    "MPI_Open_port: empty or unterminated port name");
        MPI_Send(port, (int)strlen(port) + 1, MPI_CHAR, na, 1, MPI_COMM_WORLD);
    } else if (!is_a && lrank == 0) {
        MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }

    /* The port name is significant at the root only. */
    if (is_a)
        rc = MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &inter);
    else
        rc = MPI_Comm_connect(port, MPI_INFO_NULL, 0, half, &inter);
    mtest_check_rc(is_a ? "MPI_Comm_accept" : "MPI_Comm_connect", rc);
    first_connection(inter, is_a, wrank, na, nb);
    MPI_Comm_disconnect(&inter);
    mtest_check(inter == MPI_COMM_NULL, "MPI_Comm_disconnect left the handle set");

    /* Again and again on the same port. */
    for (k = 0; k < REPEAT; k++) {
        int v = 1000 * k + wrank;

        if (is_a)
            rc = MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &inter);
        else
            rc = MPI_Comm_connect(port, MPI_INFO_NULL, 0, half, &inter);
        if (!mtest_check_rc(is_a ? "MPI_Comm_accept (repeat)" : "MPI_Comm_connect (repeat)", rc))
            break;
        sum = -1;
        MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, inter);
        if (is_a)
            mtest_check(sum == 1000 * k * nb + (wsize * (wsize - 1) / 2 - na * (na - 1) / 2),
                        "repeat %d: allreduce %d", k, sum);
        else
            mtest_check(sum == 1000 * k * na + na * (na - 1) / 2, "repeat %d: allreduce %d", k,
                        sum);
        MPI_Comm_disconnect(&inter);
    }

    if (is_a && lrank == 0) {
        rc = MPI_Close_port(port);
        mtest_check_rc("MPI_Close_port", rc);
    }
    MPI_Comm_free(&half);
    return mtest_finalize();
}
