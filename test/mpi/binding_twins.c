/*
 * The int and large-count (_c) forms of the functions that tools/gen_api.py
 * generates as twins ([twin] in src/binding/api.txt): each form reaches the
 * implementation, widens its int arguments, and its errors name the function
 * the program called (MPI_Send_c, not MPI_Send). The int forms' outputs are
 * narrowed after the call: MPI_UNDEFINED where the standard says so ([undefined]:
 * MPI_Type_size, MPI_Get_count, MPI_Get_elements), else MPI_ERR_VALUE_TOO_LARGE
 * (MPI_Pack_size); MPI_Pack's position is read and written ([inout]). Their int
 * arrays (the v and w collectives) are widened. Then a round trip through the int
 * and _c forms of a few of them with data checked.
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

    /* outputs the int form narrows, input arrays it widens */
    int ia[1] = {1}, ib[1] = {0};
    MPI_Count ca[1] = {1};
    MPI_Aint aa[1] = {0};
    MPI_Datatype ts[1] = {MPI_CHAR};
    int isz;
    MPI_Count csz;
    MPI_Aint asz;
    expect_named("MPI_Gatherv", MPI_Gatherv(sbuf, 1, t, rbuf, ia, ib, t, 0, BAD));
    expect_named("MPI_Gatherv_c", MPI_Gatherv_c(sbuf, 1, t, rbuf, ca, aa, t, 0, BAD));
    expect_named("MPI_Iscatterv", MPI_Iscatterv(sbuf, ia, ib, t, rbuf, 1, t, 0, BAD, &req));
    expect_named("MPI_Iscatterv_c", MPI_Iscatterv_c(sbuf, ca, aa, t, rbuf, 1, t, 0, BAD, &req));
    expect_named("MPI_Alltoallw_init",
                 MPI_Alltoallw_init(sbuf, ia, ib, ts, rbuf, ia, ib, ts, BAD, info, &req));
    expect_named("MPI_Alltoallw_init_c",
                 MPI_Alltoallw_init_c(sbuf, ca, aa, ts, rbuf, ca, aa, ts, BAD, info, &req));
    expect_named("MPI_Reduce_scatter", MPI_Reduce_scatter(sbuf, rbuf, ia, t, MPI_MAX, BAD));
    expect_named("MPI_Reduce_scatter_c", MPI_Reduce_scatter_c(sbuf, rbuf, ca, t, MPI_MAX, BAD));
    expect_named("MPI_Neighbor_alltoallv",
                 MPI_Neighbor_alltoallv(sbuf, ia, ib, t, rbuf, ia, ib, t, MPI_COMM_WORLD));
    expect_named("MPI_Neighbor_alltoallv_c",
                 MPI_Neighbor_alltoallv_c(sbuf, ca, aa, t, rbuf, ca, aa, t, MPI_COMM_WORLD));
    TWIN(File_write_at, MPI_FILE_NULL, 0, sbuf, 1, t, &st);
    TWIN(File_iread_shared, MPI_FILE_NULL, rbuf, 1, t, &req);
    TWIN(File_read_all_begin, MPI_FILE_NULL, rbuf, 1, t);
    TWIN(Put, sbuf, 1, t, 0, 0, 1, t, MPI_WIN_NULL);
    TWIN(Rget_accumulate, sbuf, 1, t, rbuf, 1, t, 0, 0, 1, t, MPI_SUM, MPI_WIN_NULL, &req);
    expect_named("MPI_Type_size", MPI_Type_size(MPI_DATATYPE_NULL, &isz));
    expect_named("MPI_Type_size_c", MPI_Type_size_c(MPI_DATATYPE_NULL, &csz));
    expect_named("MPI_Comm_detach_buffer", MPI_Comm_detach_buffer(BAD, rbuf, &isz));
    expect_named("MPI_Comm_detach_buffer_c", MPI_Comm_detach_buffer_c(BAD, rbuf, &csz));
    expect_named("MPI_Type_get_extent", MPI_Type_get_extent(MPI_DATATYPE_NULL, &asz, &asz));
    expect_named("MPI_Type_get_extent_c", MPI_Type_get_extent_c(MPI_DATATYPE_NULL, &csz, &csz));
    expect_named("MPI_Pack_size", MPI_Pack_size(1, t, BAD, &isz));
    expect_named("MPI_Pack_size_c", MPI_Pack_size_c(1, t, BAD, &csz));
}

/* a type of 2^32 bytes (nothing that large is allocated): what the int forms cannot report */
static void narrowed_outputs(void)
{
    MPI_Datatype k64, big;
    MPI_Status st;
    int isz = 0;
    MPI_Count csz = 0;
    const MPI_Count four_g = (MPI_Count)1 << 32;

    MPI_Type_contiguous(1 << 16, MPI_CHAR, &k64);
    MPI_Type_contiguous(1 << 16, k64, &big);
    MPI_Type_commit(&big);
    mtest_check_rc("MPI_Type_size", MPI_Type_size(big, &isz));
    mtest_check_int("MPI_Type_size of 4 GiB", isz, MPI_UNDEFINED);
    mtest_check_rc("MPI_Type_size_c", MPI_Type_size_c(big, &csz));
    mtest_check_int("MPI_Type_size_c of 4 GiB", csz, four_g);
    isz = 7;
    mtest_check_error("MPI_Pack_size of 4 GiB", MPI_Pack_size(1, big, MPI_COMM_WORLD, &isz),
                      MPI_ERR_VALUE_TOO_LARGE, "MPI_Pack_size_c");
    mtest_check_int("MPI_Pack_size left its output", isz, 7);
    mtest_check_rc("MPI_Pack_size_c", MPI_Pack_size_c(1, big, MPI_COMM_WORLD, &csz));
    mtest_check_int("MPI_Pack_size_c of 4 GiB", csz, four_g);
    MPI_Type_size(k64, &isz);
    mtest_check_int("MPI_Type_size of 64 KiB", isz, 1 << 16);

    MPI_Status_set_elements_c(&st, MPI_CHAR, four_g + 3);
    mtest_check_rc("MPI_Get_count", MPI_Get_count(&st, MPI_CHAR, &isz));
    mtest_check_int("MPI_Get_count past INT_MAX", isz, MPI_UNDEFINED);
    mtest_check_rc("MPI_Get_elements", MPI_Get_elements(&st, MPI_CHAR, &isz));
    mtest_check_int("MPI_Get_elements past INT_MAX", isz, MPI_UNDEFINED);
    MPI_Get_count_c(&st, MPI_CHAR, &csz);
    mtest_check_int("MPI_Get_count_c", csz, four_g + 3);
    MPI_Status_set_elements(&st, MPI_CHAR, 12);
    MPI_Get_count(&st, MPI_CHAR, &isz);
    mtest_check_int("MPI_Get_count", isz, 12);
    MPI_Type_free(&big);
    MPI_Type_free(&k64);

    /* MPI_Pack's position is read and written: two ints packed one after the other */
    int v[2] = {11, 22}, w[2] = {0, 0}, pos = 0;
    char packed[16];
    MPI_Pack(&v[0], 1, MPI_INT, packed, sizeof packed, &pos, MPI_COMM_WORLD);
    MPI_Pack(&v[1], 1, MPI_INT, packed, sizeof packed, &pos, MPI_COMM_WORLD);
    mtest_check_int("MPI_Pack position", pos, 2 * (int)sizeof(int));
    MPI_Count cpos = 0;
    MPI_Unpack_c(packed, sizeof packed, &cpos, &w[0], 1, MPI_INT, MPI_COMM_WORLD);
    pos = (int)cpos;
    MPI_Unpack(packed, sizeof packed, &pos, &w[1], 1, MPI_INT, MPI_COMM_WORLD);
    mtest_check(w[0] == 11 && w[1] == 22 && pos == 2 * (int)sizeof(int),
                "MPI_Unpack_c then MPI_Unpack: %d %d at %d", w[0], w[1], pos);
}

/* the v collectives through both forms: rank r contributes r + 1 ints */
static void v_round_trip(void)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int n = size * (size + 1) / 2, *icounts = malloc(size * sizeof *icounts);
    int *idispls = malloc(size * sizeof *idispls), *mine = malloc((rank + 1) * sizeof *mine);
    int *all = malloc(n * sizeof *all);
    MPI_Count *ccounts = malloc(size * sizeof *ccounts);
    MPI_Aint *cdispls = malloc(size * sizeof *cdispls);
    for (int r = 0, d = 0; r < size; d += r + 1, r++) {
        icounts[r] = r + 1, idispls[r] = d;
        ccounts[r] = r + 1, cdispls[r] = d;
    }
    for (int i = 0; i <= rank; i++)
        mine[i] = rank * 100 + i;
    for (int form = 0; form < 2; form++) {
        for (int i = 0; i < n; i++)
            all[i] = -1;
        if (form == 0)
            MPI_Allgatherv(mine, rank + 1, MPI_INT, all, icounts, idispls, MPI_INT, MPI_COMM_WORLD);
        else
            MPI_Allgatherv_c(mine, rank + 1, MPI_INT, all, ccounts, cdispls, MPI_INT,
                             MPI_COMM_WORLD);
        for (int r = 0; r < size; r++)
            for (int i = 0; i <= r; i++)
                mtest_check(all[idispls[r] + i] == r * 100 + i, "%s: block %d [%d] = %d",
                            form ? "MPI_Allgatherv_c" : "MPI_Allgatherv", r, i,
                            all[idispls[r] + i]);
    }
    free(cdispls), free(ccounts), free(all), free(mine), free(idispls), free(icounts);
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
    narrowed_outputs();
    v_round_trip();
    round_trip();
    return mtest_finalize();
}
