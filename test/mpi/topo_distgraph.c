/* Distributed graph topologies: Dist_graph_create_adjacent (weighted and
 * MPI_UNWEIGHTED) returns the lists as given; Dist_graph_create (the general
 * form: edges named by any process, asymmetric, with a self edge) gives each
 * process exactly its in- and out-edges with their weights; MPI_WEIGHTS_EMPTY
 * from processes without edges; Topo_test; Comm_dup keeps the graph. */
#include "mtest.h"

static int cmp_pair(const void *a, const void *b)
{
    const int *x = a, *y = b;
    return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

/* the (rank, weight) pairs of one side, compared as multisets */
static void check_edges(const char *what, int n, const int *nb, const int *w, int wn,
                        const int *want)
{
    if (!mtest_check(n == wn, "%s: %d edges, want %d", what, n, wn))
        return;
    int *got = malloc(sizeof(int) * 2 * (n + 1)), *exp = malloc(sizeof(int) * 2 * (n + 1));
    for (int i = 0; i < n; i++) {
        got[2 * i] = nb[i];
        got[2 * i + 1] = w ? w[i] : 0;
        exp[2 * i] = want[2 * i];
        exp[2 * i + 1] = w ? want[2 * i + 1] : 0;
    }
    qsort(got, n, 2 * sizeof(int), cmp_pair);
    qsort(exp, n, 2 * sizeof(int), cmp_pair);
    for (int i = 0; i < 2 * n; i++)
        if (!mtest_check(got[i] == exp[i], "%s: edge %d is (%d, %d), want (%d, %d)", what, i / 2,
                         got[i & ~1], got[i | 1], exp[i & ~1], exp[i | 1]))
            break;
    free(got);
    free(exp);
}

static void check_graph(MPI_Comm g, int weighted, int nin, const int *win, int nout,
                        const int *wout)
{
    int indeg, outdeg, wt, st;
    MPI_Topo_test(g, &st);
    mtest_check_int("Topo_test", st, MPI_DIST_GRAPH);
    MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &wt);
    mtest_check(indeg == nin && outdeg == nout && !wt == !weighted,
                "neighbors_count: in %d out %d weighted %d, want %d %d %d", indeg, outdeg, wt, nin,
                nout, weighted);
    if (indeg != nin || outdeg != nout)
        return;
    int *s = malloc(sizeof(int) * (nin + 1)), *sw = malloc(sizeof(int) * (nin + 1));
    int *d = malloc(sizeof(int) * (nout + 1)), *dw = malloc(sizeof(int) * (nout + 1));
    MPI_Dist_graph_neighbors(g, nin, s, weighted ? sw : MPI_UNWEIGHTED, nout, d,
                             weighted ? dw : MPI_UNWEIGHTED);
    check_edges("in-edges", nin, s, weighted ? sw : NULL, nin, win);
    check_edges("out-edges", nout, d, weighted ? dw : NULL, nout, wout);
    free(s);
    free(sw);
    free(d);
    free(dw);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Comm g, dup;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;

    /* adjacent: in from prev (and from next+1), out to next (and to prev-1): the lists as given */
    int src[2] = {prev, (rank + 2) % size}, srcw[2] = {7, 8};
    int dst[2] = {next, (rank + size - 2) % size}, dstw[2] = {9, 10};
    int win[4] = {src[0], 7, src[1], 8}, wout[4] = {dst[0], 9, dst[1], 10};
    mtest_check_rc("create_adjacent",
                   MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, srcw, 2, dst, dstw,
                                                  MPI_INFO_NULL, 0, &g));
    check_graph(g, 1, 2, win, 2, wout);
    int s2[2], d2[2];
    MPI_Dist_graph_neighbors(g, 2, s2, MPI_UNWEIGHTED, 2, d2, MPI_UNWEIGHTED);
    mtest_check(s2[0] == src[0] && s2[1] == src[1] && d2[0] == dst[0] && d2[1] == dst[1],
                "create_adjacent: the order of the lists is kept");
    MPI_Comm_dup(g, &dup);
    check_graph(dup, 1, 2, win, 2, wout);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&g);

    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, src, MPI_UNWEIGHTED, 1, dst, MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &g);
    check_graph(g, 0, 1, win, 1, wout);
    MPI_Comm_free(&g);

    /* general form: every process names i -> i+1 (weight 100 i + i+1); rank 0
     * also names j -> 0 for every j (weight 1000 + j), 0 -> 0 included */
    int n = rank == 0 ? 1 + size : 1;
    int *sources = malloc(sizeof(int) * n), *degrees = malloc(sizeof(int) * n);
    int *dests = malloc(sizeof(int) * n), *weights = malloc(sizeof(int) * n);
    sources[0] = rank, degrees[0] = 1, dests[0] = next, weights[0] = 100 * rank + next;
    for (int j = 0; rank == 0 && j < size; j++)
        sources[1 + j] = j, degrees[1 + j] = 1, dests[1 + j] = 0, weights[1 + j] = 1000 + j;
    int ein[2 * 64 + 2], eout[4], nin = 0, nout = 0;
    ein[2 * nin] = prev, ein[2 * nin++ + 1] = 100 * prev + rank;
    for (int j = 0; rank == 0 && j < size; j++)
        ein[2 * nin] = j, ein[2 * nin++ + 1] = 1000 + j;
    eout[2 * nout] = next, eout[2 * nout++ + 1] = 100 * rank + next;
    eout[2 * nout] = 0, eout[2 * nout++ + 1] = 1000 + rank;
    mtest_check_rc("Dist_graph_create",
                   MPI_Dist_graph_create(MPI_COMM_WORLD, n, sources, degrees, dests, weights,
                                         MPI_INFO_NULL, 0, &g));
    check_graph(g, 1, nin, ein, nout, eout);
    MPI_Comm_free(&g);
    MPI_Dist_graph_create(MPI_COMM_WORLD, n, sources, degrees, dests, MPI_UNWEIGHTED, MPI_INFO_NULL,
                          0, &g);
    check_graph(g, 0, nin, ein, nout, eout);
    MPI_Comm_free(&g);

    /* only rank 0 names edges (0 -> j, weight j); the others pass MPI_WEIGHTS_EMPTY */
    int one = 0, deg = size, *w0 = malloc(sizeof(int) * size);
    int *d0 = malloc(sizeof(int) * size), *e0 = malloc(sizeof(int) * 2 * size);
    for (int j = 0; j < size; j++)
        d0[j] = j, w0[j] = j, e0[2 * j] = j, e0[2 * j + 1] = j;
    int ein0[2] = {0, rank};
    MPI_Dist_graph_create(MPI_COMM_WORLD, rank == 0 ? 1 : 0, &one, &deg, d0,
                          rank == 0 ? w0 : MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &g);
    check_graph(g, 1, 1, ein0, rank == 0 ? size : 0, e0);
    MPI_Comm_free(&g);

    int st;
    mtest_check_class("Dist_graph_neighbors_count(WORLD)",
                      MPI_Dist_graph_neighbors_count(MPI_COMM_WORLD, &st, &st, &st),
                      MPI_ERR_TOPOLOGY);
#if !defined(MPICH_VERSION) /* MPICH 4.0.2 does not check the ranks */
    int badsrc[1] = {size};
    mtest_check(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, badsrc, MPI_UNWEIGHTED, 0, NULL,
                                               MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g) != MPI_SUCCESS,
                "create_adjacent accepted a source that is not a rank");
#endif
    free(sources);
    free(degrees);
    free(dests);
    free(weights);
    free(w0);
    free(d0);
    free(e0);
    return mtest_finalize();
}
