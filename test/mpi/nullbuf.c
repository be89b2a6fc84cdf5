/*
 * A NULL buffer with count > 0 (issue 15 item 11): under MPI_ERRORS_RETURN
 * every call that takes a buffer returns MPI_ERR_BUFFER instead of crashing
 * (point-to-point, nonblocking, persistent, collectives, pack/unpack,
 * reduce_local, neighbourhood collectives), as MPICH does. What stays legal:
 * a NULL buffer with count 0, a buffer that is not significant at this rank
 * (gather's recvbuf off the root), and MPI_BOTTOM with a derived datatype of
 * absolute addresses (its true lower bound is not 0).
 */
#include "mtest.h"

static void expect_buffer_error(const char *what, int rc)
{
    mtest_check_class(what, rc, MPI_ERR_BUFFER);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm w = MPI_COMM_WORLD;
    int rank, size;
    MPI_Comm_rank(w, &rank);
    MPI_Comm_size(w, &size);
    MPI_Comm_set_errhandler(w, MPI_ERRORS_RETURN);
    int peer = (rank + 1) % size, from = (rank + size - 1) % size;
    int x = 7, y = 0;
    MPI_Request req = MPI_REQUEST_NULL;

    /* point-to-point */
    expect_buffer_error("MPI_Send", MPI_Send(NULL, 1, MPI_INT, peer, 0, w));
    expect_buffer_error("MPI_Ssend", MPI_Ssend(NULL, 3, MPI_DOUBLE, peer, 0, w));
    expect_buffer_error("MPI_Recv", MPI_Recv(NULL, 1, MPI_INT, from, 0, w, MPI_STATUS_IGNORE));
    expect_buffer_error("MPI_Isend", MPI_Isend(NULL, 1, MPI_INT, peer, 0, w, &req));
    expect_buffer_error("MPI_Irecv", MPI_Irecv(NULL, 1, MPI_INT, from, 0, w, &req));
    expect_buffer_error("MPI_Send_init", MPI_Send_init(NULL, 1, MPI_INT, peer, 0, w, &req));
    expect_buffer_error("MPI_Recv_init", MPI_Recv_init(NULL, 1, MPI_INT, from, 0, w, &req));
    expect_buffer_error(
        "MPI_Sendrecv (send)",
        MPI_Sendrecv(NULL, 1, MPI_INT, peer, 0, &y, 1, MPI_INT, from, 0, w, MPI_STATUS_IGNORE));
    expect_buffer_error(
        "MPI_Sendrecv (recv)",
        MPI_Sendrecv(&x, 1, MPI_INT, peer, 0, NULL, 1, MPI_INT, from, 0, w, MPI_STATUS_IGNORE));
    expect_buffer_error(
        "MPI_Sendrecv_replace",
        MPI_Sendrecv_replace(NULL, 1, MPI_INT, peer, 0, from, 0, w, MPI_STATUS_IGNORE));
    expect_buffer_error("MPI_Send to MPI_PROC_NULL",
                        MPI_Send(NULL, 1, MPI_INT, MPI_PROC_NULL, 0, w));
    expect_buffer_error("MPI_Buffer_attach", MPI_Buffer_attach(NULL, 1024));

    /* collectives */
    expect_buffer_error("MPI_Allreduce (send)", MPI_Allreduce(NULL, &y, 1, MPI_INT, MPI_SUM, w));
    expect_buffer_error("MPI_Allreduce (recv)", MPI_Allreduce(&x, NULL, 1, MPI_INT, MPI_SUM, w));
    expect_buffer_error("MPI_Iallreduce", MPI_Iallreduce(NULL, &y, 1, MPI_INT, MPI_SUM, w, &req));
    expect_buffer_error("MPI_Bcast", MPI_Bcast(NULL, 1, MPI_INT, 0, w));
    if (rank == 0)
        expect_buffer_error("MPI_Reduce (root recvbuf)",
                            MPI_Reduce(&x, NULL, 1, MPI_INT, MPI_SUM, 0, w));
    else
        expect_buffer_error("MPI_Reduce (sendbuf)",
                            MPI_Reduce(NULL, NULL, 1, MPI_INT, MPI_SUM, 0, w));
    int *all = malloc((size_t)size * sizeof *all);
    int *counts = malloc((size_t)size * sizeof *counts),
        *displs = malloc((size_t)size * sizeof *displs);
    for (int i = 0; i < size; i++) {
        counts[i] = 1;
        displs[i] = i;
    }
    expect_buffer_error("MPI_Allgather (recv)", MPI_Allgather(&x, 1, MPI_INT, NULL, 1, MPI_INT, w));
    expect_buffer_error("MPI_Allgatherv (recv)",
                        MPI_Allgatherv(&x, 1, MPI_INT, NULL, counts, displs, MPI_INT, w));
    expect_buffer_error("MPI_Alltoall (send)", MPI_Alltoall(NULL, 1, MPI_INT, all, 1, MPI_INT, w));
    expect_buffer_error("MPI_Alltoallv (recv)", MPI_Alltoallv(all, counts, displs, MPI_INT, NULL,
                                                              counts, displs, MPI_INT, w));
    expect_buffer_error("MPI_Scan", MPI_Scan(NULL, &y, 1, MPI_INT, MPI_SUM, w));
    if (rank == 0)
        expect_buffer_error("MPI_Scatter (root sendbuf)",
                            MPI_Scatter(NULL, 1, MPI_INT, &y, 1, MPI_INT, 0, w));
    expect_buffer_error("MPI_Reduce_scatter_block",
                        MPI_Reduce_scatter_block(all, NULL, 1, MPI_INT, MPI_SUM, w));

    /* local calls */
    char packed[64];
    int pos = 0;
    expect_buffer_error("MPI_Pack (inbuf)",
                        MPI_Pack(NULL, 2, MPI_INT, packed, sizeof packed, &pos, w));
    pos = 0;
    expect_buffer_error("MPI_Unpack (outbuf)",
                        MPI_Unpack(packed, sizeof packed, &pos, NULL, 2, MPI_INT, w));
    expect_buffer_error("MPI_Reduce_local", MPI_Reduce_local(NULL, &y, 1, MPI_INT, MPI_SUM));

    /* neighbourhood collective on a ring */
    MPI_Comm ring;
    int dims = size, periods = 1;
    MPI_Cart_create(w, 1, &dims, &periods, 0, &ring);
    MPI_Comm_set_errhandler(ring, MPI_ERRORS_RETURN);
    int two[2];
    expect_buffer_error("MPI_Neighbor_allgather (recv)",
                        MPI_Neighbor_allgather(&x, 1, MPI_INT, NULL, 1, MPI_INT, ring));
    expect_buffer_error("MPI_Neighbor_alltoall (send)",
                        MPI_Neighbor_alltoall(NULL, 1, MPI_INT, two, 1, MPI_INT, ring));
    MPI_Comm_free(&ring);

    /* still legal: count 0, buffers not significant here, MPI_BOTTOM with absolute addresses */
    mtest_check_rc(
        "MPI_Sendrecv of 0 elements from NULL",
        MPI_Sendrecv(NULL, 0, MPI_INT, peer, 1, NULL, 0, MPI_INT, from, 1, w, MPI_STATUS_IGNORE));
    mtest_check_rc("MPI_Gather with NULL recvbuf off the root",
                   MPI_Gather(&x, 1, MPI_INT, rank == 0 ? all : NULL, 1, MPI_INT, 0, w));
    mtest_check_rc("MPI_Bcast of 0 elements from NULL", MPI_Bcast(NULL, 0, MPI_INT, 0, w));
    int value = 1000 + rank, got = -1;
    MPI_Aint addr_value, addr_got;
    MPI_Get_address(&value, &addr_value);
    MPI_Get_address(&got, &addr_got);
    int one = 1;
    MPI_Datatype abs_send, abs_recv, ints = MPI_INT;
    MPI_Type_create_struct(1, &one, &addr_value, &ints, &abs_send);
    MPI_Type_create_struct(1, &one, &addr_got, &ints, &abs_recv);
    MPI_Type_commit(&abs_send);
    MPI_Type_commit(&abs_recv);
    if (mtest_check_rc("MPI_Sendrecv from/to MPI_BOTTOM with absolute addresses",
                       MPI_Sendrecv(MPI_BOTTOM, 1, abs_send, peer, 2, MPI_BOTTOM, 1, abs_recv, from,
                                    2, w, MPI_STATUS_IGNORE)))
        mtest_check_int("value received at an absolute address", got, 1000 + from);
    value = rank;
    if (mtest_check_rc("MPI_Allreduce in place at MPI_BOTTOM with absolute addresses",
                       MPI_Allreduce(MPI_IN_PLACE, MPI_BOTTOM, 1, abs_send, MPI_SUM, w)))
        mtest_check_int("sum of ranks", value, size * (size - 1) / 2);
    MPI_Type_free(&abs_send);
    MPI_Type_free(&abs_recv);

    /* MPI_Alltoallw from and to MPI_BOTTOM with absolute byte displacements (mpi4py's
     * testAlltoallwBottom; NULL plus a displacement is data, not a NULL buffer) */
    {
        int *got_all = malloc((size_t)size * sizeof(int)),
            *cnt = malloc((size_t)size * sizeof(int));
        MPI_Aint *sd = malloc((size_t)size * sizeof(MPI_Aint)),
                 *rd = malloc((size_t)size * sizeof(MPI_Aint));
        MPI_Datatype *ty = malloc((size_t)size * sizeof(MPI_Datatype));
        int mine = 100 + rank;
        for (int i = 0; i < size; i++) {
            cnt[i] = 1;
            ty[i] = MPI_INT;
            got_all[i] = -1;
            MPI_Get_address(&mine, &sd[i]);
            MPI_Get_address(&got_all[i], &rd[i]);
        }
        int *sdi = malloc((size_t)size * sizeof(int)), *rdi = malloc((size_t)size * sizeof(int));
        int fits = 1;
        for (int i = 0; i < size; i++) {
            fits &= sd[i] == (MPI_Aint)(int)sd[i] && rd[i] == (MPI_Aint)(int)rd[i];
            sdi[i] = (int)sd[i];
            rdi[i] = (int)rd[i];
        }
        /* the int displacements of MPI_Alltoallw hold addresses only below 2 GiB: the
         * large-count form takes MPI_Aint */
        MPI_Count *cc = malloc((size_t)size * sizeof(MPI_Count));
        for (int i = 0; i < size; i++)
            cc[i] = 1;
        if (mtest_check_rc("MPI_Alltoallw_c from/to MPI_BOTTOM with absolute displacements",
                           MPI_Alltoallw_c(MPI_BOTTOM, cc, sd, ty, MPI_BOTTOM, cc, rd, ty, w)))
            for (int i = 0; i < size; i++)
                mtest_check_int("alltoallw at absolute addresses", got_all[i], 100 + i);
        if (fits)
            mtest_check_rc("MPI_Alltoallw from/to MPI_BOTTOM (int displacements)",
                           MPI_Alltoallw(MPI_BOTTOM, cnt, sdi, ty, MPI_BOTTOM, cnt, rdi, ty, w));
        free(cc);
        free(sdi);
        free(rdi);
        free(got_all);
        free(cnt);
        free(sd);
        free(rd);
        free(ty);
    }

    /* an accumulate of no data: the operation need not be defined for the type (mpi4py's
     * testGetAccumulate: MPI_SUM on 0 MPI_BYTEs) */
    {
        int cell = 0;
        MPI_Win win;
        MPI_Win_create(&cell, sizeof cell, 1, MPI_INFO_NULL, w, &win);
        MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
        MPI_Win_fence(0, win);
        char o = 0, r = 0;
        mtest_check_rc("MPI_Get_accumulate of 0 MPI_BYTE with MPI_SUM",
                       MPI_Get_accumulate(&o, 0, MPI_BYTE, &r, 0, MPI_BYTE, rank, 0, 0, MPI_BYTE,
                                          MPI_SUM, win));
        MPI_Win_fence(0, win);
        MPI_Win_free(&win);
    }
    free(all);
    free(counts);
    free(displs);
    return mtest_finalize();
}
