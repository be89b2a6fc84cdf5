/*
 * The int and large-count (_c) forms of the functions that tools/gen_api.py
 * generates as twins ([twin] in src/binding/api.txt): each form reaches the
 * implementation, widens its int arguments, and its errors name the function
 * the program called (MPI_Send_c, not MPI_Send). Then a round trip through the
 * int and _c forms of a few of them with data checked.
 */
#include "mtest.h"

static char sbuf[64], rbuf[64];

/* rc must be an error whose message starts with "name:" */
static void expect_named(const char *name, int rc)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    size_t n = strlen(name);

    if (!mtest_check(rc != MPI_SUCCESS, "%s: an invalid call returned MPI_SUCCESS", name))
        return;
    MPI_Error_string(rc, msg, &len);
    mtest_check(strncmp(msg, name, n) == 0 && msg[n] == ':',
                "%s: the error message names another function: '%s'", name, msg);
}

#define BAD MPI_COMM_NULL
#define TWIN(name, ...)                                                                            \
    do {                                                                                           \
        expect_named("MPI_" #name, MPI_##name(__VA_ARGS__));                                       \
        expect_named("MPI_" #name "_c", MPI_##name##_c(__VA_ARGS__));                              \
    } while (0)

static void errors_name_the_call(void)
{
    MPI_Request req;
    MPI_Status st;
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Info info = MPI_INFO_NULL;
    MPI_Datatype t = MPI_CHAR;

    TWIN(Send, sbuf, 1, t, 0, 0, BAD);
    TWIN(Ssend, sbuf, 1, t, 0, 0, BAD);
    TWIN(Rsend, sbuf, 1, t, 0, 0, BAD);
    TWIN(Bsend, sbuf, 1, t, 0, 0, BAD);
    TWIN(Recv, rbuf, 1, t, 0, 0, BAD, &st);
    TWIN(Sendrecv, sbuf, 1, t, 0, 0, rbuf, 1, t, 0, 0, BAD, &st);
    TWIN(Sendrecv_replace, rbuf, 1, t, 0, 0, 0, 0, BAD, &st);
    TWIN(Isend, sbuf, 1, t, 0, 0, BAD, &req);
    TWIN(Issend, sbuf, 1, t, 0, 0, BAD, &req);
    TWIN(Irsend, sbuf, 1, t, 0, 0, BAD, &req);
    TWIN(Ibsend, sbuf, 1, t, 0, 0, BAD, &req);
    TWIN(Irecv, rbuf, 1, t, 0, 0, BAD, &req);
    TWIN(Send_init, sbuf, 1, t, 0, 0, BAD, &req);
    TWIN(Ssend_init, sbuf, 1, t, 0, 0, BAD, &req);
    TWIN(Rsend_init, sbuf, 1, t, 0, 0, BAD, &req);
    TWIN(Bsend_init, sbuf, 1, t, 0, 0, BAD, &req);
    TWIN(Recv_init, rbuf, 1, t, 0, 0, BAD, &req);
    TWIN(Imrecv, rbuf, 1, t, &msg, &req);
    TWIN(Mrecv, rbuf, 1, t, &msg, &st);
    TWIN(Isendrecv, sbuf, 1, t, 0, 0, rbuf, 1, t, 0, 0, BAD, &req);
    TWIN(Isendrecv_replace, rbuf, 1, t, 0, 0, 0, 0, BAD, &req);
    TWIN(Buffer_attach, rbuf, -1);

    TWIN(Bcast, rbuf, 1, t, 0, BAD);
    TWIN(Ibcast, rbuf, 1, t, 0, BAD, &req);
    TWIN(Bcast_init, rbuf, 1, t, 0, BAD, info, &req);
    TWIN(Gather, sbuf, 1, t, rbuf, 1, t, 0, BAD);
    TWIN(Igather, sbuf, 1, t, rbuf, 1, t, 0, BAD, &req);
    TWIN(Gather_init, sbuf, 1, t, rbuf, 1, t, 0, BAD, info, &req);
    TWIN(Scatter, sbuf, 1, t, rbuf, 1, t, 0, BAD);
    TWIN(Iscatter, sbuf, 1, t, rbuf, 1, t, 0, BAD, &req);
    TWIN(Scatter_init, sbuf, 1, t, rbuf, 1, t, 0, BAD, info, &req);
    TWIN(Allgather, sbuf, 1, t, rbuf, 1, t, BAD);
    TWIN(Iallgather, sbuf, 1, t, rbuf, 1, t, BAD, &req);
    TWIN(Allgather_init, sbuf, 1, t, rbuf, 1, t, BAD, info, &req);
    TWIN(Alltoall, sbuf, 1, t, rbuf, 1, t, BAD);
    TWIN(Ialltoall, sbuf, 1, t, rbuf, 1, t, BAD, &req);
    TWIN(Alltoall_init, sbuf, 1, t, rbuf, 1, t, BAD, info, &req);
    TWIN(Reduce, sbuf, rbuf, 1, t, MPI_MAX, 0, BAD);
    TWIN(Ireduce, sbuf, rbuf, 1, t, MPI_MAX, 0, BAD, &req);
    TWIN(Reduce_init, sbuf, rbuf, 1, t, MPI_MAX, 0, BAD, info, &req);
    TWIN(Allreduce, sbuf, rbuf, 1, t, MPI_MAX, BAD);
    TWIN(Iallreduce, sbuf, rbuf, 1, t, MPI_MAX, BAD, &req);
    TWIN(Allreduce_init, sbuf, rbuf, 1, t, MPI_MAX, BAD, info, &req);
    TWIN(Reduce_scatter_block, sbuf, rbuf, 1, t, MPI_MAX, BAD);
    TWIN(Ireduce_scatter_block, sbuf, rbuf, 1, t, MPI_MAX, BAD, &req);
    TWIN(Reduce_scatter_block_init, sbuf, rbuf, 1, t, MPI_MAX, BAD, info, &req);
    TWIN(Scan, sbuf, rbuf, 1, t, MPI_MAX, BAD);
    TWIN(Iscan, sbuf, rbuf, 1, t, MPI_MAX, BAD, &req);
    TWIN(Scan_init, sbuf, rbuf, 1, t, MPI_MAX, BAD, info, &req);
    TWIN(Exscan, sbuf, rbuf, 1, t, MPI_MAX, BAD);
    TWIN(Iexscan, sbuf, rbuf, 1, t, MPI_MAX, BAD, &req);
    TWIN(Exscan_init, sbuf, rbuf, 1, t, MPI_MAX, BAD, info, &req);
    TWIN(Neighbor_allgather, sbuf, 1, t, rbuf, 1, t, BAD);
    TWIN(Ineighbor_allgather, sbuf, 1, t, rbuf, 1, t, BAD, &req);
    TWIN(Neighbor_allgather_init, sbuf, 1, t, rbuf, 1, t, BAD, info, &req);
    TWIN(Neighbor_alltoall, sbuf, 1, t, rbuf, 1, t, BAD);
    TWIN(Ineighbor_alltoall, sbuf, 1, t, rbuf, 1, t, BAD, &req);
    TWIN(Neighbor_alltoall_init, sbuf, 1, t, rbuf, 1, t, BAD, info, &req);
    TWIN(Reduce_local, sbuf, rbuf, -1, MPI_INT, MPI_SUM);
}

/* a ring exchange through both forms; the _c form with a count that only fits an MPI_Count
 * when it is widened correctly is not tried (no 2 GiB buffers in a test) */
static void round_trip(void)
{
    int rank, size, v[4], w[4], sum = 0, expect = 0;
    long long lv = 0;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int form = 0; form < 2; form++) {
        for (int i = 0; i < 4; i++)
            v[i] = rank * 10 + i + form, w[i] = -1;
        if (form == 0)
            MPI_Sendrecv(v, 4, MPI_INT, right, 7, w, 4, MPI_INT, left, 7, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
        else
            MPI_Sendrecv_c(v, 4, MPI_INT, right, 7, w, 4, MPI_INT, left, 7, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE);
        for (int i = 0; i < 4; i++)
            mtest_check(w[i] == left * 10 + i + form, "form %d: w[%d]=%d, expected %d", form, i,
                        w[i], left * 10 + i + form);
    }
    MPI_Allreduce_c(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        expect += r;
    mtest_check(sum == expect, "MPI_Allreduce_c: sum %d, expected %d", sum, expect);
    lv = rank;
    MPI_Bcast_c(&lv, 1, MPI_LONG_LONG, size - 1, MPI_COMM_WORLD);
    mtest_check(lv == size - 1, "MPI_Bcast_c: %lld, expected %d", lv, size - 1);
    MPI_Reduce_local_c(v, w, 4, MPI_INT, MPI_SUM);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    errors_name_the_call();
    round_trip();
    return mtest_finalize();
}
