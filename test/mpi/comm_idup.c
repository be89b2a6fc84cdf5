/* MPI_Comm_idup / MPI_Comm_idup_with_info: several duplications outstanding
 * at once on overlapping communicators (COMM_WORLD, a split of it, a reversed
 * copy of it, an inter-communicator when there are >= 2 ranks), started in
 * different orders on different ranks and completed in yet another order.
 * Each duplicate is checked: congruent to its parent, point-to-point around a
 * ring, an allreduce, isolated from its parent's traffic; attributes are
 * those of the call (a value changed after it is not seen); the info given
 * to idup_with_info is there. */
#include "mtest.h"

enum { NDUP = 4 };

static int key;

static void check_comm(const char *what, MPI_Comm parent, MPI_Comm c)
{
    int result, rank, size, inter, sum, want, i, right, left, got = -1, pgot = -1;
    MPI_Request r[4];
    MPI_Status st[4];

    if (!mtest_check(c != MPI_COMM_NULL, "%s: MPI_COMM_NULL", what))
        return;
    MPI_Comm_compare(parent, c, &result);
    mtest_check_int(what, result, MPI_CONGRUENT);
    MPI_Comm_test_inter(c, &inter);
    MPI_Comm_rank(c, &rank);
    if (inter)
        MPI_Comm_remote_size(c, &size);
    else
        MPI_Comm_size(c, &size);
    if (inter) {
        /* the two rank 0s swap, on the duplicate and (other data) on the parent */
        if (rank == 0) {
            MPI_Irecv(&got, 1, MPI_INT, 0, 5, c, &r[0]);
            MPI_Irecv(&pgot, 1, MPI_INT, 0, 5, parent, &r[1]);
            i = 1000;
            MPI_Isend(&i, 1, MPI_INT, 0, 5, parent, &r[2]);
            sum = 0;
            MPI_Isend(&sum, 1, MPI_INT, 0, 5, c, &r[3]);
            MPI_Waitall(4, r, st);
            mtest_check(got == 0 && pgot == 1000, "%s: swap got %d/%d", what, got, pgot);
        }
        return;
    }
    /* a ring, and the same tag on the parent with other data: each message
     * must stay in its communicator */
    right = (rank + 1) % size;
    left = (rank - 1 + size) % size;
    MPI_Irecv(&got, 1, MPI_INT, left, 5, c, &r[0]);
    MPI_Irecv(&pgot, 1, MPI_INT, left, 5, parent, &r[1]);
    i = 1000 + rank;
    MPI_Isend(&i, 1, MPI_INT, right, 5, parent, &r[2]);
    sum = rank;
    MPI_Isend(&sum, 1, MPI_INT, right, 5, c, &r[3]);
    MPI_Waitall(4, r, st);
    mtest_check(got == left, "%s: ring got %d want %d", what, got, left);
    mtest_check(pgot == 1000 + left, "%s: parent ring got %d want %d", what, pgot, 1000 + left);
    {
        MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c);
        want = size * (size - 1) / 2;
        mtest_check(sum == want, "%s: allreduce %d want %d", what, sum, want);
        MPI_Barrier(c);
    }
}

static void check_attr(const char *what, MPI_Comm c, int want)
{
    int *v = NULL, flag = 0;
    MPI_Comm_get_attr(c, key, &v, &flag);
    if (mtest_check(flag, "%s: attribute not copied", what))
        mtest_check(*v == want, "%s: attribute %d want %d (the value at the call)", what, *v, want);
}

int main(int argc, char **argv)
{
    int rank, size, i, k, flag, attrval[2] = {11, 22};
    MPI_Comm par[NDUP], dup[NDUP], half, rev, local = MPI_COMM_NULL, inter = MPI_COMM_NULL;
    MPI_Request req[NDUP];
    MPI_Info info;
    char val[32];
    int ndup = 3, order[NDUP];

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
    par[0] = MPI_COMM_WORLD;
    par[1] = half;
    par[2] = rev;
    if (size >= 2) {
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &local);
        MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 3, &inter);
        par[ndup++] = inter;
    }
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &key, NULL);
    MPI_Comm_set_attr(rev, key, &attrval[0]);
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_no_any_tag", "true");

    for (int round = 0; round < 3; round++) {
        /* start order: even ranks forward, odd ranks backward (rotated per round) */
        for (i = 0; i < ndup; i++)
            order[i] = rank % 2 ? (ndup - 1 - i + round) % ndup : (i + round) % ndup;
        for (i = 0; i < ndup; i++) {
            k = order[i];
            if (k == 2)
                MPI_Comm_idup_with_info(par[k], info, &dup[k], &req[k]);
            else
                MPI_Comm_idup(par[k], &dup[k], &req[k]);
            /* a blocking collective on another communicator meanwhile */
            if (i == 0)
                MPI_Barrier(half);
        }
        /* changed after the call: the duplicate keeps the old value */
        MPI_Comm_set_attr(rev, key, &attrval[1]);
        /* complete in an order of their own: Waitany, or backwards */
        if (round == 1) {
            for (i = 0; i < ndup; i++)
                MPI_Waitany(ndup, req, &k, MPI_STATUS_IGNORE);
        } else {
            for (i = ndup - 1; i >= 0; i--)
                MPI_Wait(&req[i], MPI_STATUS_IGNORE);
        }
        for (i = 0; i < ndup; i++) {
            static const char *names[NDUP] = {"dup(world)", "dup(half)", "dup(rev)", "dup(inter)"};
            check_comm(names[i], par[i], dup[i]);
        }
        check_attr("dup(rev)", dup[2], 11);
        MPI_Info free_info;
        MPI_Comm_get_info(dup[2], &free_info);
        flag = 0;
        {
            int len = sizeof val;
            MPI_Info_get_string(free_info, "mpi_assert_no_any_tag", &len, val, &flag);
        }
        mtest_check(flag && strcmp(val, "true") == 0, "idup_with_info: hint not kept");
        MPI_Info_free(&free_info);
        /* the duplicates are distinct communicators */
        for (i = 0; i < ndup; i++)
            for (k = 0; k < i; k++) {
                int res;
                MPI_Comm_compare(dup[i], dup[k], &res);
                mtest_check(res != MPI_IDENT, "dup %d and %d identical", i, k);
            }
        MPI_Comm_set_attr(rev, key, &attrval[0]);
        for (i = 0; i < ndup; i++)
            MPI_Comm_free(&dup[i]);
    }

    /* many outstanding on one communicator, completed out of order */
    {
        MPI_Comm many[8];
        MPI_Request mr[8];
        for (i = 0; i < 8; i++)
            MPI_Comm_idup(half, &many[i], &mr[i]);
        for (i = 7; i >= 0; i -= 2)
            MPI_Wait(&mr[i], MPI_STATUS_IGNORE);
        MPI_Waitall(8, mr, MPI_STATUSES_IGNORE);
        for (i = 0; i < 8; i++)
            check_comm("many(half)", half, many[i]);
        for (i = 0; i < 8; i++)
            MPI_Comm_free(&many[i]);
    }

    MPI_Info_free(&info);
    MPI_Comm_free_keyval(&key);
    if (inter != MPI_COMM_NULL) {
        MPI_Comm_free(&inter);
        MPI_Comm_free(&local);
    }
    MPI_Comm_free(&rev);
    MPI_Comm_free(&half);
    return mtest_finalize();
}
