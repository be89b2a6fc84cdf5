/* Cartesian topologies: MPI_Dims_create (balanced, non-increasing, given
 * entries kept, MPI_ERR_DIMS when impossible), Cart_create over fewer ranks
 * than the communicator (the rest get MPI_COMM_NULL), Cart_get / coords /
 * rank round trips, periodic and non-periodic shifts (MPI_PROC_NULL at the
 * borders), Cart_sub keeping the right dimensions, Cart_map, Topo_test,
 * Comm_dup keeping the topology, and the error classes of bad arguments. */
#include "mtest.h"

static void check_dims(int nnodes, int ndims, const int *in, const int *want)
{
    int d[8], i;
    for (i = 0; i < ndims; i++)
        d[i] = in[i];
    int rc = MPI_Dims_create(nnodes, ndims, d);
    mtest_check_rc("Dims_create", rc);
    for (i = 0; i < ndims; i++)
        mtest_check(d[i] == want[i], "Dims_create(%d, %d): dims[%d]=%d, want %d", nnodes, ndims, i,
                    d[i], want[i]);
}

static void test_dims(void)
{
    check_dims(6, 2, (int[]){0, 0}, (int[]){3, 2});
    check_dims(7, 2, (int[]){0, 0}, (int[]){7, 1});
    check_dims(6, 3, (int[]){0, 3, 0}, (int[]){2, 3, 1});
    check_dims(16, 3, (int[]){0, 0, 0}, (int[]){4, 2, 2});
    check_dims(72, 2, (int[]){0, 0}, (int[]){9, 8});
    check_dims(24, 3, (int[]){0, 0, 0}, (int[]){4, 3, 2});
    check_dims(64, 3, (int[]){0, 0, 0}, (int[]){4, 4, 4});
    check_dims(12, 3, (int[]){0, 2, 0}, (int[]){3, 2, 2});
    check_dims(1, 4, (int[]){0, 0, 0, 0}, (int[]){1, 1, 1, 1});
    check_dims(8, 2, (int[]){2, 4}, (int[]){2, 4});
    check_dims(1024, 4, (int[]){0, 0, 0, 0}, (int[]){8, 8, 4, 4});
    int d[3] = {0, 3, 0};
    mtest_check_class("Dims_create(7, {0,3,0})", MPI_Dims_create(7, 3, d), MPI_ERR_DIMS);
    mtest_check(d[0] == 0 && d[2] == 0, "Dims_create changed dims on error");
    int e[2] = {-1, 0};
    mtest_check_class("Dims_create negative dim", MPI_Dims_create(4, 2, e), MPI_ERR_DIMS);
}

/* a 2-D grid over up to size ranks, the first dimension periodic */
static void test_grid(int size, int rank, int px, int py)
{
    int dims[2], periods[2] = {px, py}, coords[2], r, ndims, topo, src, dst;
    MPI_Comm cart, dup, row, col;
    dims[0] = dims[1] = 0;
    int n = size >= 2 ? size - (size % 2) : 1; /* even grid, one rank left out when odd */
    MPI_Dims_create(n, 2, dims);
    mtest_check_rc("Cart_create", MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
    if (rank >= n) {
        mtest_check(cart == MPI_COMM_NULL, "rank %d outside the grid got a communicator", rank);
        return;
    }
    mtest_check(cart != MPI_COMM_NULL, "rank %d inside the grid got MPI_COMM_NULL", rank);
    MPI_Topo_test(cart, &topo);
    mtest_check_int("Topo_test(cart)", topo, MPI_CART);
    MPI_Cartdim_get(cart, &ndims);
    mtest_check_int("Cartdim_get", ndims, 2);
    int gd[2], gp[2], gc[2];
    MPI_Cart_get(cart, 2, gd, gp, gc);
    mtest_check(gd[0] == dims[0] && gd[1] == dims[1], "Cart_get dims");
    mtest_check(!gp[0] == !px && !gp[1] == !py, "Cart_get periods");
    mtest_check(gc[0] == rank / dims[1] && gc[1] == rank % dims[1], "Cart_get coords (row-major)");
    for (r = 0; r < n; r++) {
        int back;
        MPI_Cart_coords(cart, r, 2, coords);
        MPI_Cart_rank(cart, coords, &back);
        mtest_check(back == r, "Cart_rank(Cart_coords(%d)) = %d", r, back);
    }
    /* shifts along each dimension by 1 and by -2 */
    for (int d = 0; d < 2; d++) {
        int per = d ? py : px;
        for (int disp = -2; disp <= 2; disp += 3) {
            MPI_Cart_shift(cart, d, disp, &src, &dst);
            int c[2] = {gc[0], gc[1]}, want_dst, want_src;
            c[d] = gc[d] + disp;
            if (c[d] < 0 || c[d] >= dims[d])
                want_dst = per ? -2 : MPI_PROC_NULL;
            else
                want_dst = c[0] * dims[1] + c[1];
            if (want_dst == -2) {
                c[d] = ((c[d] % dims[d]) + dims[d]) % dims[d];
                want_dst = c[0] * dims[1] + c[1];
            }
            c[d] = gc[d] - disp;
            if (c[d] < 0 || c[d] >= dims[d])
                want_src = per ? -2 : MPI_PROC_NULL;
            else
                want_src = c[0] * dims[1] + c[1];
            if (want_src == -2) {
                c[d] = ((c[d] % dims[d]) + dims[d]) % dims[d];
                want_src = c[0] * dims[1] + c[1];
            }
            mtest_check(dst == want_dst && src == want_src,
                        "Cart_shift(dim %d, disp %d) at (%d,%d): src %d dst %d, want %d %d", d,
                        disp, gc[0], gc[1], src, dst, want_src, want_dst);
        }
    }
    /* periodic wrap in Cart_rank */
    if (px) {
        int far[2] = {gc[0] + dims[0], gc[1]}, back;
        MPI_Cart_rank(cart, far, &back);
        mtest_check_int("Cart_rank wraps a periodic dimension", back, rank);
    }
    /* the dup keeps the topology */
    MPI_Comm_dup(cart, &dup);
    MPI_Topo_test(dup, &topo);
    mtest_check_int("Topo_test(dup of cart)", topo, MPI_CART);
    MPI_Cart_get(dup, 2, gd, gp, gc);
    mtest_check(gd[0] == dims[0] && gd[1] == dims[1] && !gp[0] == !px, "Cart_get on the dup");
    MPI_Comm_free(&dup);
    /* rows keep dimension 1, columns dimension 0 */
    MPI_Cart_sub(cart, (int[]){0, 1}, &row);
    MPI_Cart_sub(cart, (int[]){1, 0}, &col);
    int rs, rr, cs, cr;
    MPI_Comm_size(row, &rs);
    MPI_Comm_rank(row, &rr);
    MPI_Comm_size(col, &cs);
    MPI_Comm_rank(col, &cr);
    mtest_check(rs == dims[1] && rr == rank % dims[1], "row: size %d rank %d", rs, rr);
    mtest_check(cs == dims[0] && cr == rank / dims[1], "col: size %d rank %d", cs, cr);
    MPI_Cartdim_get(col, &ndims);
    mtest_check_int("Cartdim_get(col)", ndims, 1);
    MPI_Cart_get(col, 1, gd, gp, gc);
    mtest_check(gd[0] == dims[0] && !gp[0] == !px && gc[0] == cr, "Cart_get(col)");
    /* the row carries traffic among the right ranks: sum of world ranks */
    int sum;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, row);
    int first = rank - rank % dims[1];
    mtest_check_int("sum over the row", sum, first * dims[1] + dims[1] * (dims[1] - 1) / 2);
    /* keeping no dimension: a 0-dimensional grid of one process (MPI 4.1
     * 8.5.6; MPICH 4.0.2 returns a 1-D grid over more processes) */
#if !defined(MPICH_VERSION)
    MPI_Comm pt;
    MPI_Cart_sub(cart, (int[]){0, 0}, &pt);
    MPI_Comm_size(pt, &rs);
    MPI_Cartdim_get(pt, &ndims);
    mtest_check(rs == 1 && ndims == 0, "Cart_sub keeping nothing: size %d ndims %d", rs, ndims);
    MPI_Comm_free(&pt);
#endif
    MPI_Comm_free(&row);
    MPI_Comm_free(&col);
    MPI_Comm_free(&cart);
}

static void test_errors(int size, int rank)
{
    MPI_Comm cart;
    int st, r;
    MPI_Topo_test(MPI_COMM_WORLD, &st);
    mtest_check_int("Topo_test(WORLD)", st, MPI_UNDEFINED);
    mtest_check_class("Cartdim_get(WORLD)", MPI_Cartdim_get(MPI_COMM_WORLD, &st), MPI_ERR_TOPOLOGY);
    mtest_check_class("Cart_shift(WORLD)", MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &st, &r),
                      MPI_ERR_TOPOLOGY);
    int big[1] = {size + 1}, per[1] = {0};
    mtest_check_class("Cart_create too big", MPI_Cart_create(MPI_COMM_WORLD, 1, big, per, 0, &cart),
                      MPI_ERR_ARG);
    int one[1] = {size};
    MPI_Cart_create(MPI_COMM_WORLD, 1, one, per, 0, &cart);
    mtest_check_class("Cart_shift bad direction", MPI_Cart_shift(cart, 1, 1, &st, &r), MPI_ERR_ARG);
    int out[1] = {size};
    mtest_check_class("Cart_rank outside a non-periodic dimension", MPI_Cart_rank(cart, out, &r),
                      MPI_ERR_ARG);
    mtest_check_class("Cart_coords bad rank", MPI_Cart_coords(cart, size, 1, out), MPI_ERR_RANK);
    MPI_Cart_map(MPI_COMM_WORLD, 1, one, per, &r);
    mtest_check_int("Cart_map", r, rank);
    int half[1] = {size / 2 ? size / 2 : 1};
    MPI_Cart_map(MPI_COMM_WORLD, 1, half, per, &r);
    mtest_check_int("Cart_map outside", r, rank < half[0] ? rank : MPI_UNDEFINED);
    MPI_Comm_free(&cart);
}

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    test_dims();
    for (int p = 0; p < 4; p++)
        test_grid(size, rank, p & 1, p >> 1);
    test_errors(size, rank);
    return mtest_finalize();
}
