/* Neighbourhood collectives: allgather(v), alltoall(v/w) in their blocking,
 * nonblocking (MPI_Ineighbor_*) and persistent (_init, started twice) forms
 * and one _c form each, on cartesian grids (1-D and 2-D, periodic and not,
 * dimensions of size 1 and 2 where a process is its own or the same
 * neighbour twice), a graph, and an asymmetric weighted distributed graph.
 *
 * The expected data: on a cartesian grid, the block from the -1 neighbour
 * of dimension d is what that neighbour sent to its +1 neighbour, and the
 * other way round (MPI 4.1 8.6; this decides the periodic dimensions of
 * size 1 and 2). On graphs, from every process's out-list (allgathered): the
 * m-th time s appears among my sources is matched with the m-th time I
 * appear among s's destinations (slot j), and s sends v(s, j) there.
 * MPI_PROC_NULL neighbours leave their receive block untouched. */
#include "mtest.h"

#define MAXD 64
#define CNT  2
static int rank, size;
/* MPICH 4.0.2 matches the v/w forms on such grids by posting order instead */
static int skip_vw;
static int is_cart, nin, nout, in[MAXD], out[MAXD];
static int *allout, *alldeg; /* [size][MAXD], [size] */

static int val(int s, int j, int i) { return s * 100000 + j * 100 + i; }

/* the slot of s's destinations that my k-th source is, -1 for MPI_PROC_NULL */
static int slot_of(int k)
{
    int s = in[k], m = 0, seen = 0;
    if (s == MPI_PROC_NULL)
        return -1;
    if (is_cart)
        return k ^ 1;
    for (int i = 0; i < k; i++)
        m += in[i] == s;
    for (int j = 0; j < alldeg[s]; j++)
        if (allout[s * MAXD + j] == rank && seen++ == m)
            return j;
    mtest_fail("source %d has no matching destination slot", s);
    return -1;
}

static void lists(MPI_Comm c)
{
    int st, w;
    MPI_Topo_test(c, &st);
    is_cart = st == MPI_CART;
    if (st == MPI_CART) {
        int nd;
        MPI_Cartdim_get(c, &nd);
        nin = nout = 2 * nd;
        for (int d = 0; d < nd; d++) {
            MPI_Cart_shift(c, d, 1, &in[2 * d], &in[2 * d + 1]);
            out[2 * d] = in[2 * d];
            out[2 * d + 1] = in[2 * d + 1];
        }
    } else if (st == MPI_GRAPH) {
        MPI_Graph_neighbors_count(c, rank, &nin);
        MPI_Graph_neighbors(c, rank, MAXD, in);
        nout = nin;
        memcpy(out, in, sizeof(int) * nin);
    } else {
        MPI_Dist_graph_neighbors_count(c, &nin, &nout, &w);
        MPI_Dist_graph_neighbors(c, MAXD, in, MPI_UNWEIGHTED, MAXD, out, MPI_UNWEIGHTED);
    }
    int padded[MAXD];
    for (int j = 0; j < MAXD; j++)
        padded[j] = j < nout ? out[j] : -1;
    MPI_Allgather(padded, MAXD, MPI_INT, allout, MAXD, MPI_INT, c);
    MPI_Allgather(&nout, 1, MPI_INT, alldeg, 1, MPI_INT, c);
}

enum { BLOCKING, NONBLOCKING, PERSISTENT, LARGE };
static const char *form_name[] = {"blocking", "nonblocking", "persistent", "_c"};

static void finish(int form, MPI_Request *req, int rc, const char *what)
{
    mtest_check_rc(what, rc);
    if (form == NONBLOCKING)
        mtest_check_rc(what, MPI_Wait(req, MPI_STATUS_IGNORE));
    if (form == PERSISTENT) {
        for (int t = 0; t < 2; t++) {
            mtest_check_rc(what, MPI_Start(req));
            mtest_check_rc(what, MPI_Wait(req, MPI_STATUS_IGNORE));
        }
        MPI_Request_free(req);
    }
}

static void run(MPI_Comm c, const char *tname)
{
    int sb[MAXD * 4], rb[MAXD * 4], sc[MAXD], sd[MAXD], rcn[MAXD], rd[MAXD];
    MPI_Aint sdb[MAXD], rdb[MAXD];
    MPI_Count scc[MAXD], rcc[MAXD];
    MPI_Aint sda[MAXD], rda[MAXD];
    MPI_Datatype st[MAXD], rt[MAXD];
    MPI_Request req = MPI_REQUEST_NULL;
    int rc = MPI_SUCCESS, slot[MAXD];
    char what[160];
    lists(c);
    for (int k = 0; k < nin; k++)
        slot[k] = slot_of(k);
    for (int form = BLOCKING; form <= LARGE; form++) {
        /* allgather: CNT ints v(me, 99, i) to every destination */
        for (int i = 0; i < CNT; i++)
            sb[i] = val(rank, 99, i);
        for (int i = 0; i < MAXD * 4; i++)
            rb[i] = -1;
        snprintf(what, sizeof what, "%s: Neighbor_allgather %s", tname, form_name[form]);
        if (form == BLOCKING)
            rc = MPI_Neighbor_allgather(sb, CNT, MPI_INT, rb, CNT, MPI_INT, c);
        else if (form == NONBLOCKING)
            rc = MPI_Ineighbor_allgather(sb, CNT, MPI_INT, rb, CNT, MPI_INT, c, &req);
        else if (form == PERSISTENT)
            rc = MPI_Neighbor_allgather_init(sb, CNT, MPI_INT, rb, CNT, MPI_INT, c, MPI_INFO_NULL,
                                             &req);
        else
            rc = MPI_Neighbor_allgather_c(sb, CNT, MPI_INT, rb, CNT, MPI_INT, c);
        finish(form, &req, rc, what);
        for (int k = 0; k < nin; k++)
            for (int i = 0; i < CNT; i++)
                mtest_check(rb[k * CNT + i] == (slot[k] < 0 ? -1 : val(in[k], 99, i)),
                            "%s: block %d[%d] = %d", what, k, i, rb[k * CNT + i]);

        /* alltoall: v(me, j, i) to destination j */
        for (int j = 0; j < nout; j++)
            for (int i = 0; i < CNT; i++)
                sb[j * CNT + i] = val(rank, j, i);
        for (int i = 0; i < MAXD * 4; i++)
            rb[i] = -1;
        snprintf(what, sizeof what, "%s: Neighbor_alltoall %s", tname, form_name[form]);
        if (form == BLOCKING)
            rc = MPI_Neighbor_alltoall(sb, CNT, MPI_INT, rb, CNT, MPI_INT, c);
        else if (form == NONBLOCKING)
            rc = MPI_Ineighbor_alltoall(sb, CNT, MPI_INT, rb, CNT, MPI_INT, c, &req);
        else if (form == PERSISTENT)
            rc = MPI_Neighbor_alltoall_init(sb, CNT, MPI_INT, rb, CNT, MPI_INT, c, MPI_INFO_NULL,
                                            &req);
        else
            rc = MPI_Neighbor_alltoall_c(sb, CNT, MPI_INT, rb, CNT, MPI_INT, c);
        finish(form, &req, rc, what);
        for (int k = 0; k < nin; k++)
            for (int i = 0; i < CNT; i++)
                mtest_check(rb[k * CNT + i] == (slot[k] < 0 ? -1 : val(in[k], slot[k], i)),
                            "%s: block %d[%d] = %d", what, k, i, rb[k * CNT + i]);

        /* allgatherv: (me % 3) + 1 ints; blocks stored in reverse order */
        int mine = rank % 3 + 1, pos = 0;
        for (int i = 0; i < mine; i++)
            sb[i] = val(rank, 98, i);
        for (int k = nin - 1; k >= 0; k--) {
            rcn[k] = in[k] == MPI_PROC_NULL ? 1 : in[k] % 3 + 1;
            rd[k] = pos;
            pos += rcn[k] + 1;
            rcc[k] = rcn[k];
            rda[k] = rd[k];
        }
        for (int i = 0; i < MAXD * 4; i++)
            rb[i] = -1;
        snprintf(what, sizeof what, "%s: Neighbor_allgatherv %s", tname, form_name[form]);
        if (form == BLOCKING)
            rc = MPI_Neighbor_allgatherv(sb, mine, MPI_INT, rb, rcn, rd, MPI_INT, c);
        else if (form == NONBLOCKING)
            rc = MPI_Ineighbor_allgatherv(sb, mine, MPI_INT, rb, rcn, rd, MPI_INT, c, &req);
        else if (form == PERSISTENT)
            rc = MPI_Neighbor_allgatherv_init(sb, mine, MPI_INT, rb, rcn, rd, MPI_INT, c,
                                              MPI_INFO_NULL, &req);
        else
            rc = MPI_Neighbor_allgatherv_c(sb, mine, MPI_INT, rb, rcc, rda, MPI_INT, c);
        finish(form, &req, rc, what);
        for (int k = 0; k < nin; k++)
            for (int i = 0; i <= rcn[k]; i++) {
                int want = slot[k] < 0 || i == rcn[k] ? -1 : val(in[k], 98, i);
                mtest_check(rb[rd[k] + i] == want, "%s: block %d[%d] = %d, want %d", what, k, i,
                            rb[rd[k] + i], want);
            }

        /* alltoallv / alltoallw: (j % 3) + 1 ints to destination j, blocks reversed */
        pos = 0;
        for (int j = nout - 1; j >= 0; j--) {
            sc[j] = j % 3 + 1;
            sd[j] = pos;
            for (int i = 0; i < sc[j]; i++)
                sb[pos + i] = val(rank, j, i);
            pos += sc[j];
        }
        pos = 0;
        for (int k = nin - 1; k >= 0; k--) {
            rcn[k] = slot[k] < 0 ? 1 : slot[k] % 3 + 1;
            rd[k] = pos;
            pos += rcn[k] + 1;
        }
        for (int j = 0; j < nout; j++) {
            scc[j] = sc[j], sda[j] = sd[j], sdb[j] = (MPI_Aint)sd[j] * sizeof(int);
            st[j] = MPI_INT;
        }
        for (int k = 0; k < nin; k++) {
            rcc[k] = rcn[k], rda[k] = rd[k], rdb[k] = (MPI_Aint)rd[k] * sizeof(int);
            rt[k] = MPI_INT;
        }
        for (int wf = 0; wf < 2 && !skip_vw; wf++) {
            for (int i = 0; i < MAXD * 4; i++)
                rb[i] = -1;
            snprintf(what, sizeof what, "%s: Neighbor_alltoall%c %s", tname, wf ? 'w' : 'v',
                     form_name[form]);
            if (!wf && form == BLOCKING)
                rc = MPI_Neighbor_alltoallv(sb, sc, sd, MPI_INT, rb, rcn, rd, MPI_INT, c);
            else if (!wf && form == NONBLOCKING)
                rc = MPI_Ineighbor_alltoallv(sb, sc, sd, MPI_INT, rb, rcn, rd, MPI_INT, c, &req);
            else if (!wf && form == PERSISTENT)
                rc = MPI_Neighbor_alltoallv_init(sb, sc, sd, MPI_INT, rb, rcn, rd, MPI_INT, c,
                                                 MPI_INFO_NULL, &req);
            else if (!wf)
                rc = MPI_Neighbor_alltoallv_c(sb, scc, sda, MPI_INT, rb, rcc, rda, MPI_INT, c);
            else if (form == BLOCKING)
                rc = MPI_Neighbor_alltoallw(sb, sc, sdb, st, rb, rcn, rdb, rt, c);
            else if (form == NONBLOCKING)
                rc = MPI_Ineighbor_alltoallw(sb, sc, sdb, st, rb, rcn, rdb, rt, c, &req);
            else if (form == PERSISTENT)
                rc = MPI_Neighbor_alltoallw_init(sb, sc, sdb, st, rb, rcn, rdb, rt, c,
                                                 MPI_INFO_NULL, &req);
            else
                rc = MPI_Neighbor_alltoallw_c(sb, scc, sdb, st, rb, rcc, rdb, rt, c);
            finish(form, &req, rc, what);
            for (int k = 0; k < nin; k++)
                for (int i = 0; i <= rcn[k]; i++) {
                    int want = slot[k] < 0 || i == rcn[k] ? -1 : val(in[k], slot[k], i);
                    mtest_check(rb[rd[k] + i] == want, "%s: block %d[%d] = %d, want %d", what, k, i,
                                rb[rd[k] + i], want);
                }
        }
    }
}

static void cart(int ndims, int *dims, int px, int py, const char *name)
{
    int periods[2] = {px, py};
    MPI_Comm c;
    MPI_Cart_create(MPI_COMM_WORLD, ndims, dims, periods, 0, &c);
#if defined(MPICH_VERSION)
    for (int d = 0; d < ndims; d++)
        skip_vw |= periods[d] && dims[d] <= 2;
#endif
    if (c != MPI_COMM_NULL) {
        run(c, name);
        skip_vw = 0;
        MPI_Comm_free(&c);
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    allout = malloc(sizeof(int) * MAXD * size);
    alldeg = malloc(sizeof(int) * size);

    int d1[1] = {size};
    cart(1, d1, 1, 0, "1-D periodic");
    cart(1, d1, 0, 0, "1-D non-periodic");
    int d2[2] = {0, 0};
    MPI_Dims_create(size, 2, d2);
    cart(2, d2, 1, 1, "2-D periodic");
    cart(2, d2, 1, 0, "2-D periodic x non-periodic");
    cart(2, d2, 0, 0, "2-D non-periodic");
    int d3[2] = {size, 1}; /* a periodic dimension of size 1: itself twice */
    cart(2, d3, 0, 1, "2-D size x 1 periodic");
    if (size >= 2) {
        int d4[2] = {2, size / 2}; /* a periodic dimension of size 2 */
        cart(2, d4, 1, 0, "2-D 2 x n periodic");
    }

    /* graph: ring (i -> i+1, i -> i-1), symmetric as neighbourhood collectives need */
    int *index = malloc(sizeof(int) * size), *edges = malloc(sizeof(int) * 2 * size);
    for (int i = 0; i < size; i++) {
        edges[2 * i] = (i + 1) % size;
        edges[2 * i + 1] = (i + size - 1) % size;
        index[i] = 2 * i + 2;
    }
    MPI_Comm g;
    MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g);
#if defined(MPICH_VERSION) /* repeated edges below 3 ranks: see the dist graph */
    if (size > 2)
#endif
        run(g, "graph ring");
    MPI_Comm_free(&g);

    /* distributed graph: i -> i+1, i -> i+2, and rank 0 -> everybody, weighted */
    int n = 1, src = rank, deg = rank == 0 ? 2 + size : 2, dst[2 + MAXD], w[2 + MAXD];
    dst[0] = (rank + 1) % size, dst[1] = (rank + 2) % size;
    for (int j = 0; rank == 0 && j < size; j++)
        dst[2 + j] = j;
#if defined(MPICH_VERSION) /* MPICH 4.0.2 orders repeated edges differently: none */
    int nd = 0;
    for (int j = 0; j < deg; j++) {
        int dup = 0;
        for (int k = 0; k < nd; k++)
            dup |= dst[k] == dst[j];
        if (!dup)
            dst[nd++] = dst[j];
    }
    deg = nd;
#endif
    for (int j = 0; j < deg; j++)
        w[j] = j + 1;
    MPI_Dist_graph_create(MPI_COMM_WORLD, n, &src, &deg, dst, w, MPI_INFO_NULL, 0, &g);
    run(g, "dist graph");
    MPI_Comm_free(&g);

    /* adjacent: only from the previous rank, only to the next (a one-way ring) */
    int prev = (rank + size - 1) % size, next = (rank + 1) % size;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &prev, MPI_UNWEIGHTED, 1, &next,
                                   MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g);
    run(g, "dist graph adjacent");
    MPI_Comm_free(&g);

    /* without a topology */
    int x = 0, y;
    mtest_check_class("Neighbor_allgather on WORLD",
                      MPI_Neighbor_allgather(&x, 1, MPI_INT, &y, 1, MPI_INT, MPI_COMM_WORLD),
                      MPI_ERR_TOPOLOGY);
    free(index);
    free(edges);
    free(allout);
    free(alldeg);
    return mtest_finalize();
}
