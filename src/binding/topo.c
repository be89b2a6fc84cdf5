/* Topology bindings (MPI 4.1 chapter 8): argument checks, then src/mpi/topo.
 * Neighbourhood collectives: one static function per collective serves the
 * blocking, MPI_Ineighbor_* and _init forms and their _c variants; the int
 * forms convert their arrays first. */
#include "mpi/mpii.h"
#include "mpi/topo/topo.h"
#include "mpi/topo/neighbor.h"
#include "binding/impl.h"

#include <stdlib.h>

/* ---- checks ----------------------------------------------------------------------------- */

static int topo_comm(const char *fn, MPI_Comm comm, mpii_comm **out)
{
    *out = mpii_comm_get(comm);
    if (!*out)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_COMM, fn, "comm: invalid communicator%s",
                        comm == MPI_COMM_NULL ? " (MPI_COMM_NULL)" : "");
    if ((*out)->is_inter)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_COMM, fn,
                        "comm: an inter-communicator cannot have a topology");
    return MPI_SUCCESS;
}

/* comm valid and carrying a topology of `kind` (0: any) */
static int topo_comm_kind(const char *fn, MPI_Comm comm, int kind, mpii_comm **out)
{
    static const char *names[] = {"none", "graph", "cartesian", "distributed graph"};
    int rc = topo_comm(fn, comm, out);
    if (rc != MPI_SUCCESS)
        return rc;
    const topo *t = topo_of(*out);
    if (!t)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_TOPOLOGY, fn,
                        "comm: has no topology (%s needs a%s topology)", fn,
                        kind ? (kind == MPI_CART ? " cartesian" : " graph") : "");
    if (kind && t->kind != kind)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_TOPOLOGY, fn,
                        "comm: has a %s topology, not a %s one", names[t->kind], names[kind]);
    return MPI_SUCCESS;
}

static int topo_ptr(const char *fn, MPI_Comm comm, const void *p, const char *arg)
{
    if (!p)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "%s: NULL pointer", arg);
    return MPI_SUCCESS;
}

static int topo_rank_arg(const char *fn, MPI_Comm comm, const mpii_comm *c, int rank,
                         const char *arg)
{
    if (rank < 0 || rank >= c->size)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_RANK, fn,
                        "%s=%d is not a rank of comm (size %d)", arg, rank, c->size);
    return MPI_SUCCESS;
}

/* ndims >= 0, dims[] > 0, periods given, the grid fits in size processes */
static int topo_grid(const char *fn, MPI_Comm comm, int size, int ndims, const int dims[],
                     const int periods[])
{
    if (ndims < 0)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_DIMS, fn, "ndims=%d is negative", ndims);
    if (ndims > 0 && (!dims || !periods))
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "dims/periods: NULL array");
    for (int i = 0; i < ndims; i++)
        if (dims[i] <= 0)
            return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_DIMS, fn,
                            "dims[%d]=%d: every dimension must be positive", i, dims[i]);
    int n = topo_cart_size(ndims, dims);
    if (n < 0 || n > size)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn,
                        "the grid has more processes (%d) than comm (%d)", n < 0 ? -1 : n, size);
    return MPI_SUCCESS;
}

/* index[] non-decreasing from >= 0, edges[] ranks below nnodes */
static int topo_graph_args(const char *fn, MPI_Comm comm, int size, int nnodes, const int index[],
                           const int edges[])
{
    if (nnodes < 0 || nnodes > size)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn,
                        "nnodes=%d is not between 0 and the size of comm (%d)", nnodes, size);
    if (nnodes == 0)
        return MPI_SUCCESS;
    if (!index)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "index: NULL array");
    for (int i = 0; i < nnodes; i++)
        if (index[i] < (i ? index[i - 1] : 0))
            return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn,
                            "index[%d]=%d: index must be non-decreasing from 0", i, index[i]);
    if (index[nnodes - 1] > 0 && !edges)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "edges: NULL array");
    for (int i = 0; i < index[nnodes - 1]; i++)
        if (edges[i] < 0 || edges[i] >= nnodes)
            return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn,
                            "edges[%d]=%d is not a node (0..%d)", i, edges[i], nnodes - 1);
    return MPI_SUCCESS;
}

static int topo_info(const char *fn, MPI_Comm comm, MPI_Info info)
{
    if (info != MPI_INFO_NULL && MPII_HANDLE_KIND(info) != MPII_KIND_INFO)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_INFO, fn, "info: not an info object");
    return MPI_SUCCESS;
}

static int topo_built(const char *fn, MPI_Comm comm, int rc, mpii_comm *n, MPI_Comm *newcomm)
{
    if (rc != MPI_SUCCESS)
        return mpii_err(MPII_OBJ_COMM, comm, rc, fn, "could not build the new communicator");
    *newcomm = n ? n->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

/* ---- cartesian ---------------------------------------------------------------------- */

int b_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
                  MPI_Comm *comm_cart)
{
    static const char fn[] = "MPI_Cart_create";
    mpii_comm *c, *n = NULL;
    (void)reorder; /* the identity mapping is a valid reordering */
    int rc = topo_comm(fn, comm_old, &c);
    if (rc == MPI_SUCCESS)
        rc = topo_ptr(fn, comm_old, comm_cart, "comm_cart");
    if (rc == MPI_SUCCESS)
        rc = topo_grid(fn, comm_old, c->size, ndims, dims, periods);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = topo_cart_create(c, ndims, dims, periods, &n);
    return topo_built(fn, comm_old, rc, n, comm_cart);
}

int b_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
    static const char fn[] = "MPI_Cart_map";
    mpii_comm *c;
    int rc = topo_comm(fn, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = topo_ptr(fn, comm, newrank, "newrank");
    if (rc == MPI_SUCCESS)
        rc = topo_grid(fn, comm, c->size, ndims, dims, periods);
    if (rc != MPI_SUCCESS)
        return rc;
    *newrank = c->rank < topo_cart_size(ndims, dims) ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int b_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Cart_sub";
    mpii_comm *c, *n = NULL;
    int rc = topo_comm_kind(fn, comm, MPI_CART, &c);
    if (rc == MPI_SUCCESS)
        rc = topo_ptr(fn, comm, newcomm, "newcomm");
    if (rc == MPI_SUCCESS && topo_of(c)->ndims > 0)
        rc = topo_ptr(fn, comm, remain_dims, "remain_dims");
    if (rc != MPI_SUCCESS)
        return rc;
    rc = topo_cart_sub(c, remain_dims, &n);
    return topo_built(fn, comm, rc, n, newcomm);
}

int b_Cartdim_get(MPI_Comm comm, int *ndims)
{
    static const char fn[] = "MPI_Cartdim_get";
    mpii_comm *c;
    int rc = topo_comm_kind(fn, comm, MPI_CART, &c);
    if (rc == MPI_SUCCESS)
        rc = topo_ptr(fn, comm, ndims, "ndims");
    if (rc != MPI_SUCCESS)
        return rc;
    *ndims = topo_of(c)->ndims;
    return MPI_SUCCESS;
}

int b_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    static const char fn[] = "MPI_Cart_get";
    mpii_comm *c;
    int rc = topo_comm_kind(fn, comm, MPI_CART, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    const topo *t = topo_of(c);
    int n = maxdims < t->ndims ? maxdims : t->ndims;
    if (maxdims < 0)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "maxdims=%d is negative", maxdims);
    if (n > 0 && (!dims || !periods || !coords))
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "dims/periods/coords: NULL array");
    int *co = util_malloc((size_t)t->ndims * sizeof(int) + 1);
    topo_cart_coords(t, c->rank, co);
    for (int i = 0; i < n; i++) {
        dims[i] = t->dims[i];
        periods[i] = t->periods[i];
        coords[i] = co[i];
    }
    free(co);
    return MPI_SUCCESS;
}

int b_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    static const char fn[] = "MPI_Cart_rank";
    mpii_comm *c;
    int rc = topo_comm_kind(fn, comm, MPI_CART, &c);
    if (rc == MPI_SUCCESS)
        rc = topo_ptr(fn, comm, rank, "rank");
    if (rc == MPI_SUCCESS && topo_of(c)->ndims > 0)
        rc = topo_ptr(fn, comm, coords, "coords");
    if (rc != MPI_SUCCESS)
        return rc;
    const topo *t = topo_of(c);
    for (int i = 0; i < t->ndims; i++)
        if (!t->periods[i] && (coords[i] < 0 || coords[i] >= t->dims[i]))
            return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn,
                            "coords[%d]=%d is outside the non-periodic dimension 0..%d", i,
                            coords[i], t->dims[i] - 1);
    *rank = topo_cart_rank(t, coords);
    return MPI_SUCCESS;
}

int b_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    static const char fn[] = "MPI_Cart_coords";
    mpii_comm *c;
    int rc = topo_comm_kind(fn, comm, MPI_CART, &c);
    if (rc == MPI_SUCCESS)
        rc = topo_rank_arg(fn, comm, c, rank, "rank");
    if (rc != MPI_SUCCESS)
        return rc;
    const topo *t = topo_of(c);
    if (maxdims < t->ndims)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn,
                        "maxdims=%d is less than the number of dimensions (%d)", maxdims, t->ndims);
    if (t->ndims > 0 && !coords)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "coords: NULL array");
    topo_cart_coords(t, rank, coords);
    return MPI_SUCCESS;
}

int b_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
    static const char fn[] = "MPI_Cart_shift";
    mpii_comm *c;
    int rc = topo_comm_kind(fn, comm, MPI_CART, &c);
    if (rc == MPI_SUCCESS)
        rc = topo_ptr(fn, comm, rank_source, "rank_source");
    if (rc == MPI_SUCCESS)
        rc = topo_ptr(fn, comm, rank_dest, "rank_dest");
    if (rc != MPI_SUCCESS)
        return rc;
    const topo *t = topo_of(c);
    if (direction < 0 || direction >= t->ndims)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn,
                        "direction=%d is not a dimension (0..%d)", direction, t->ndims - 1);
    topo_cart_shift(t, c->rank, direction, disp, rank_source, rank_dest);
    return MPI_SUCCESS;
}

int b_Dims_create(int nnodes, int ndims, int dims[])
{
    static const char fn[] = "MPI_Dims_create";
    if (nnodes < 0)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn, "nnodes=%d is negative", nnodes);
    if (ndims < 0)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_DIMS, fn, "ndims=%d is negative", ndims);
    if (ndims > 0 && !dims)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_ARG, fn, "dims: NULL array");
    for (int i = 0; i < ndims; i++)
        if (dims[i] < 0)
            return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_DIMS, fn, "dims[%d]=%d is negative", i,
                            dims[i]);
    if (topo_dims_create(nnodes, ndims, dims) != MPI_SUCCESS)
        return mpii_err(MPII_OBJ_NONE, 0, MPI_ERR_DIMS, fn,
                        "nnodes=%d is not a multiple of the product of the nonzero dims[]", nnodes);
    return MPI_SUCCESS;
}

/* ---- graph -------------------------------------------------------------------------- */

int b_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder,
                   MPI_Comm *comm_graph)
{
    static const char fn[] = "MPI_Graph_create";
    mpii_comm *c, *n = NULL;
    (void)reorder;
    int rc = topo_comm(fn, comm_old, &c);
    if (rc == MPI_SUCCESS)
        rc = topo_ptr(fn, comm_old, comm_graph, "comm_graph");
    if (rc == MPI_SUCCESS)
        rc = topo_graph_args(fn, comm_old, c->size, nnodes, index, edges);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = topo_graph_create(c, nnodes, index, edges, &n);
    return topo_built(fn, comm_old, rc, n, comm_graph);
}

int b_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank)
{
    static const char fn[] = "MPI_Graph_map";
    mpii_comm *c;
    int rc = topo_comm(fn, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = topo_ptr(fn, comm, newrank, "newrank");
    if (rc == MPI_SUCCESS && nnodes <= 0)
        rc = mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "nnodes=%d must be positive", nnodes);
    if (rc == MPI_SUCCESS)
        rc = topo_graph_args(fn, comm, c->size, nnodes, index, edges);
    if (rc != MPI_SUCCESS)
        return rc;
    *newrank = c->rank < nnodes ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int b_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
    static const char fn[] = "MPI_Graphdims_get";
    mpii_comm *c;
    int rc = topo_comm_kind(fn, comm, MPI_GRAPH, &c);
    if (rc == MPI_SUCCESS)
        rc = topo_ptr(fn, comm, nnodes, "nnodes");
    if (rc == MPI_SUCCESS)
        rc = topo_ptr(fn, comm, nedges, "nedges");
    if (rc != MPI_SUCCESS)
        return rc;
    *nnodes = topo_of(c)->nnodes;
    *nedges = topo_of(c)->nedges;
    return MPI_SUCCESS;
}

int b_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
    static const char fn[] = "MPI_Graph_get";
    mpii_comm *c;
    int rc = topo_comm_kind(fn, comm, MPI_GRAPH, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    const topo *t = topo_of(c);
    if (maxindex < 0 || maxedges < 0)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn,
                        "maxindex=%d, maxedges=%d: must not be negative", maxindex, maxedges);
    int ni = maxindex < t->nnodes ? maxindex : t->nnodes;
    int ne = maxedges < t->nedges ? maxedges : t->nedges;
    if ((ni > 0 && !index) || (ne > 0 && !edges))
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "index/edges: NULL array");
    for (int i = 0; i < ni; i++)
        index[i] = t->index[i];
    for (int i = 0; i < ne; i++)
        edges[i] = t->edges[i];
    return MPI_SUCCESS;
}

int b_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
    static const char fn[] = "MPI_Graph_neighbors_count";
    mpii_comm *c;
    const int *nb;
    int rc = topo_comm_kind(fn, comm, MPI_GRAPH, &c);
    if (rc == MPI_SUCCESS)
        rc = topo_rank_arg(fn, comm, c, rank, "rank");
    if (rc == MPI_SUCCESS)
        rc = topo_ptr(fn, comm, nneighbors, "nneighbors");
    if (rc != MPI_SUCCESS)
        return rc;
    *nneighbors = topo_graph_neighbors(topo_of(c), rank, &nb);
    return MPI_SUCCESS;
}

int b_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
    static const char fn[] = "MPI_Graph_neighbors";
    mpii_comm *c;
    const int *nb;
    int rc = topo_comm_kind(fn, comm, MPI_GRAPH, &c);
    if (rc == MPI_SUCCESS)
        rc = topo_rank_arg(fn, comm, c, rank, "rank");
    if (rc != MPI_SUCCESS)
        return rc;
    int n = topo_graph_neighbors(topo_of(c), rank, &nb);
    if (maxneighbors < n && maxneighbors < 0)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "maxneighbors=%d is negative",
                        maxneighbors);
    if (maxneighbors < n)
        n = maxneighbors;
    if (n > 0 && !neighbors)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "neighbors: NULL array");
    for (int i = 0; i < n; i++)
        neighbors[i] = nb[i];
    return MPI_SUCCESS;
}

int b_Topo_test(MPI_Comm comm, int *status)
{
    static const char fn[] = "MPI_Topo_test";
    mpii_comm *c = mpii_comm_get(comm);
    if (!c)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_COMM, fn, "comm: invalid communicator%s",
                        comm == MPI_COMM_NULL ? " (MPI_COMM_NULL)" : "");
    int rc = topo_ptr(fn, comm, status, "status");
    if (rc != MPI_SUCCESS)
        return rc;
    *status = c->topo ? topo_of(c)->kind : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* ---- distributed graph -------------------------------------------------------------- */

static int topo_unweighted_mark, topo_weights_empty_mark;
int *const MPI_UNWEIGHTED = &topo_unweighted_mark;
int *const MPI_WEIGHTS_EMPTY = &topo_weights_empty_mark;

/* n ranks of comm in list[] (NULL allowed when n is 0); weights, unless w is
 * MPI_UNWEIGHTED, an array of n non-negative ones (MPI_WEIGHTS_EMPTY if n is 0) */
static int topo_dist_list(const char *fn, MPI_Comm comm, int size, int n, const int list[],
                          int has_w, const int w[], const char *what, const char *wwhat)
{
    const int *wa = !has_w || w == MPI_UNWEIGHTED || w == MPI_WEIGHTS_EMPTY ? NULL : w;
    if (n < 0)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "%s: negative degree %d", what, n);
    if (n > 0 && !list)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "%s: NULL array", what);
    if (n > 0 && has_w && w != MPI_UNWEIGHTED && !wa)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "%s: %s with %d edges", wwhat,
                        w ? "MPI_WEIGHTS_EMPTY" : "NULL array", n);
    for (int i = 0; i < n; i++) {
        if (list[i] < 0 || list[i] >= size)
            return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_RANK, fn,
                            "%s[%d]=%d is not a rank of comm (size %d)", what, i, list[i], size);
        if (wa && wa[i] < 0)
            return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "%s[%d]=%d is negative", wwhat, i,
                            wa[i]);
    }
    return MPI_SUCCESS;
}

int b_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                 const int sourceweights[], int outdegree, const int destinations[],
                                 const int destweights[], MPI_Info info, int reorder,
                                 MPI_Comm *comm_dist_graph)
{
    static const char fn[] = "MPI_Dist_graph_create_adjacent";
    mpii_comm *c, *n = NULL;
    (void)reorder;
    int rc = topo_comm(fn, comm_old, &c);
    if (rc == MPI_SUCCESS)
        rc = topo_ptr(fn, comm_old, comm_dist_graph, "comm_dist_graph");
    if (rc == MPI_SUCCESS)
        rc = topo_info(fn, comm_old, info);
    if (rc == MPI_SUCCESS)
        rc = topo_dist_list(fn, comm_old, c->size, indegree, sources, 1, sourceweights, "sources",
                            "sourceweights");
    if (rc == MPI_SUCCESS)
        rc = topo_dist_list(fn, comm_old, c->size, outdegree, destinations, 1, destweights,
                            "destinations", "destweights");
    if (rc != MPI_SUCCESS)
        return rc;
    int weighted = sourceweights != MPI_UNWEIGHTED || destweights != MPI_UNWEIGHTED;
    if (weighted && ((indegree > 0 && sourceweights == MPI_UNWEIGHTED) ||
                     (outdegree > 0 && destweights == MPI_UNWEIGHTED)))
        return mpii_err(MPII_OBJ_COMM, comm_old, MPI_ERR_ARG, fn,
                        "sourceweights/destweights: MPI_UNWEIGHTED on one side only");
    rc = topo_dist_adjacent(c, indegree, sources, sourceweights, outdegree, destinations,
                            destweights, weighted, &n);
    return topo_built(fn, comm_old, rc, n, comm_dist_graph);
}

int b_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                        const int destinations[], const int weights[], MPI_Info info, int reorder,
                        MPI_Comm *comm_dist_graph)
{
    static const char fn[] = "MPI_Dist_graph_create";
    mpii_comm *c, *nc = NULL;
    (void)reorder;
    int rc = topo_comm(fn, comm_old, &c);
    if (rc == MPI_SUCCESS)
        rc = topo_ptr(fn, comm_old, comm_dist_graph, "comm_dist_graph");
    if (rc == MPI_SUCCESS)
        rc = topo_info(fn, comm_old, info);
    if (rc == MPI_SUCCESS)
        rc = topo_dist_list(fn, comm_old, c->size, n, sources, 0, NULL, "sources", "");
    if (rc == MPI_SUCCESS && n > 0 && !degrees)
        rc = mpii_err(MPII_OBJ_COMM, comm_old, MPI_ERR_ARG, fn, "degrees: NULL array");
    if (rc != MPI_SUCCESS)
        return rc;
    int total = 0;
    for (int i = 0; i < n; i++) {
        if (degrees[i] < 0)
            return mpii_err(MPII_OBJ_COMM, comm_old, MPI_ERR_ARG, fn, "degrees[%d]=%d is negative",
                            i, degrees[i]);
        total += degrees[i];
    }
    rc = topo_dist_list(fn, comm_old, c->size, total, destinations, 1, weights, "destinations",
                        "weights");
    if (rc != MPI_SUCCESS)
        return rc;
    rc = topo_dist_create(c, n, sources, degrees, destinations, weights, weights != MPI_UNWEIGHTED,
                          &nc);
    return topo_built(fn, comm_old, rc, nc, comm_dist_graph);
}

int b_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted)
{
    static const char fn[] = "MPI_Dist_graph_neighbors_count";
    mpii_comm *c;
    int rc = topo_comm_kind(fn, comm, MPI_DIST_GRAPH, &c);
    if (rc == MPI_SUCCESS)
        rc = topo_ptr(fn, comm, indegree, "indegree");
    if (rc == MPI_SUCCESS)
        rc = topo_ptr(fn, comm, outdegree, "outdegree");
    if (rc == MPI_SUCCESS)
        rc = topo_ptr(fn, comm, weighted, "weighted");
    if (rc != MPI_SUCCESS)
        return rc;
    *indegree = topo_of(c)->indeg;
    *outdegree = topo_of(c)->outdeg;
    *weighted = topo_of(c)->weighted;
    return MPI_SUCCESS;
}

/* up to max entries of list (and weights, unless w is MPI_UNWEIGHTED/MPI_WEIGHTS_EMPTY) */
static int topo_dist_copy(const char *fn, MPI_Comm comm, const topo *t, int max, int deg,
                          const int *list, const int *lw, int *out, int *w, const char *what)
{
    int n = max < deg ? max : deg;
    if (max < 0)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "max%s=%d is negative", what, max);
    if (n > 0 && !out)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "%s: NULL array", what);
    for (int i = 0; i < n; i++) {
        out[i] = list[i];
        if (t->weighted && w && w != MPI_UNWEIGHTED && w != MPI_WEIGHTS_EMPTY)
            w[i] = lw[i];
    }
    return MPI_SUCCESS;
}

int b_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                           int maxoutdegree, int destinations[], int destweights[])
{
    static const char fn[] = "MPI_Dist_graph_neighbors";
    mpii_comm *c;
    int rc = topo_comm_kind(fn, comm, MPI_DIST_GRAPH, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    const topo *t = topo_of(c);
    rc = topo_dist_copy(fn, comm, t, maxindegree, t->indeg, t->in, t->inw, sources, sourceweights,
                        "sources");
    if (rc == MPI_SUCCESS)
        rc = topo_dist_copy(fn, comm, t, maxoutdegree, t->outdeg, t->out, t->outw, destinations,
                            destweights, "destinations");
    return rc;
}

/* ---- neighbourhood collectives ---------------------------------------------------------- */

/* a (count, datatype) pair of one neighbour (what: "send"/"recv") */
static int nbr_buf(const char *fn, MPI_Comm comm, MPI_Count count, MPI_Datatype dt,
                   const char *what, int i)
{
    if (count < 0)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_COUNT, fn, "%scount%s=%lld is negative", what,
                        i >= 0 ? "s[i]" : "", (long long)count);
    mpii_dtype *t = mpii_dtype_get(dt);
    if (!t)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_TYPE, fn, "%stype: invalid datatype", what);
    if (!t->committed)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_TYPE, fn,
                        "%stype: not committed (call MPI_Type_commit)", what);
    return MPI_SUCCESS;
}

/* a NULL buffer where n neighbours' counts[i] (count for all when counts is NULL) elements
 * of dts[i] (dt for all when dts is NULL) are significant: MPI_ERR_BUFFER (mpii_buf_is_null;
 * the first nonzero count decides, as MPICH does) */
static int nbr_null(const char *fn, MPI_Comm comm, const void *buf, int n, MPI_Count count,
                    const MPI_Count counts[], MPI_Datatype dt, const MPI_Datatype dts[],
                    const MPI_Aint wdispls[], const char *what)
{
    for (int i = 0; i < n; i++) {
        MPI_Count k = counts ? counts[i] : count;
        if (k <= 0)
            continue;
        /* the w form's displacements are bytes: MPI_BOTTOM plus an absolute address is data */
        if (wdispls && wdispls[i] != 0)
            return MPI_SUCCESS;
        if (mpii_buf_is_null(buf, k, mpii_dtype_get(dts ? dts[i] : dt)))
            return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_BUFFER, fn,
                            "%sbuf: NULL with %s elements to %s", what,
                            counts ? "counts[i]" : "count", *what == 's' ? "send" : "receive");
        return MPI_SUCCESS;
    }
    return MPI_SUCCESS;
}

/* comm with a topology, the call form's request / info, no MPI_IN_PLACE */
static int nbr_start(const char *fn, MPI_Comm comm, const void *sbuf, int mode, MPI_Info info,
                     MPI_Request *req, mpii_comm **c)
{
    int rc = topo_comm_kind(fn, comm, 0, c);
    if (rc == MPI_SUCCESS && mode != COLL_BLOCKING)
        rc = topo_ptr(fn, comm, req, "request");
    if (rc == MPI_SUCCESS && mode == COLL_PERSISTENT)
        rc = topo_info(fn, comm, info);
    if (rc == MPI_SUCCESS && sbuf == MPI_IN_PLACE)
        rc = mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_BUFFER, fn,
                      "sendbuf: MPI_IN_PLACE is not allowed in neighbourhood collectives");
    return rc;
}

/* every neighbour's (count, datatype); dts NULL: dt for all */
static int nbr_bufs(const char *fn, MPI_Comm comm, int n, const MPI_Count counts[],
                    const MPI_Aint displs[], MPI_Datatype dt, const MPI_Datatype dts[], int wform,
                    const char *what)
{
    if (n > 0 && (!counts || !displs || (wform && !dts)))
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "%scounts/%sdispls%s: NULL array",
                        what, what, wform ? "/types" : "");
    for (int i = 0; i < n; i++) {
        int rc = nbr_buf(fn, comm, counts[i], wform ? dts[i] : dt, what, i);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* run or hand out the built schedule */
static int nbr_finish(const char *fn, MPI_Comm comm, coll_sched *s, int rc, int mode,
                      MPI_Request *req)
{
    if (rc != MPI_SUCCESS) {
        coll_sched_free(s);
        return mpii_err(MPII_OBJ_COMM, comm, rc, fn, "could not build the schedule");
    }
    coll_sched_set_name(s, fn);
    rc = coll_sched_finish(s, mode, req);
    if (rc == MPI_ERR_TRUNCATE)
        return mpii_err(MPII_OBJ_COMM, comm, rc, fn,
                        "counts or datatypes do not match between neighbours (a message is longer "
                        "or shorter than the receive expecting it)");
    if (rc != MPI_SUCCESS)
        return mpii_err(MPII_OBJ_COMM, comm, rc, fn, "the neighbourhood collective failed");
    return MPI_SUCCESS;
}

/* the degrees of comm's topology (0, 0 when the comm is invalid: the checks report it) */
static void nbr_degrees(MPI_Comm comm, int *indeg, int *outdeg)
{
    mpii_comm *c = mpii_comm_get(comm);
    *indeg = *outdeg = 0;
    if (c && !c->is_inter)
        topo_degrees(c, indeg, outdeg);
}

static int nbr_allgather(const char *fn, int mode, const void *sbuf, MPI_Count scount,
                         MPI_Datatype sdt, void *rbuf, MPI_Count rcount, MPI_Datatype rdt,
                         MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    mpii_comm *c;
    int rc = nbr_start(fn, comm, sbuf, mode, info, req, &c);
    if (rc == MPI_SUCCESS)
        rc = nbr_buf(fn, comm, scount, sdt, "send", -1);
    if (rc == MPI_SUCCESS)
        rc = nbr_buf(fn, comm, rcount, rdt, "recv", -1);
    if (rc != MPI_SUCCESS)
        return rc;
    int indeg, outdeg;
    topo_degrees(c, &indeg, &outdeg);
    rc = nbr_null(fn, comm, sbuf, outdeg, scount, NULL, sdt, NULL, NULL, "send");
    if (rc == MPI_SUCCESS)
        rc = nbr_null(fn, comm, rbuf, indeg, rcount, NULL, rdt, NULL, NULL, "recv");
    if (rc != MPI_SUCCESS)
        return rc;
    coll_sched *s = coll_sched_create_kind(c, mode != COLL_BLOCKING);
    rc = topo_neighbor_allgather(s, sbuf, (MPI_Aint)scount, sdt, rbuf, (MPI_Aint)rcount, rdt);
    return nbr_finish(fn, comm, s, rc, mode, req);
}

static int nbr_allgatherv(const char *fn, int mode, const void *sbuf, MPI_Count scount,
                          MPI_Datatype sdt, void *rbuf, const MPI_Count rcounts[],
                          const MPI_Aint displs[], MPI_Datatype rdt, MPI_Comm comm, MPI_Info info,
                          MPI_Request *req)
{
    mpii_comm *c;
    int indeg, outdeg;
    int rc = nbr_start(fn, comm, sbuf, mode, info, req, &c);
    if (rc == MPI_SUCCESS)
        rc = nbr_buf(fn, comm, scount, sdt, "send", -1);
    if (rc != MPI_SUCCESS)
        return rc;
    topo_degrees(c, &indeg, &outdeg);
    rc = nbr_bufs(fn, comm, indeg, rcounts, displs, rdt, NULL, 0, "recv");
    if (rc == MPI_SUCCESS)
        rc = nbr_null(fn, comm, sbuf, outdeg, scount, NULL, sdt, NULL, NULL, "send");
    if (rc == MPI_SUCCESS)
        rc = nbr_null(fn, comm, rbuf, indeg, 0, rcounts, rdt, NULL, NULL, "recv");
    if (rc != MPI_SUCCESS)
        return rc;
    coll_sched *s = coll_sched_create_kind(c, mode != COLL_BLOCKING);
    rc = topo_neighbor_allgatherv(s, sbuf, (MPI_Aint)scount, sdt, rbuf, rcounts, displs, rdt);
    return nbr_finish(fn, comm, s, rc, mode, req);
}

static int nbr_alltoall(const char *fn, int mode, const void *sbuf, MPI_Count scount,
                        MPI_Datatype sdt, void *rbuf, MPI_Count rcount, MPI_Datatype rdt,
                        MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    mpii_comm *c;
    int rc = nbr_start(fn, comm, sbuf, mode, info, req, &c);
    if (rc == MPI_SUCCESS)
        rc = nbr_buf(fn, comm, scount, sdt, "send", -1);
    if (rc == MPI_SUCCESS)
        rc = nbr_buf(fn, comm, rcount, rdt, "recv", -1);
    if (rc != MPI_SUCCESS)
        return rc;
    int indeg, outdeg;
    topo_degrees(c, &indeg, &outdeg);
    rc = nbr_null(fn, comm, sbuf, outdeg, scount, NULL, sdt, NULL, NULL, "send");
    if (rc == MPI_SUCCESS)
        rc = nbr_null(fn, comm, rbuf, indeg, rcount, NULL, rdt, NULL, NULL, "recv");
    if (rc != MPI_SUCCESS)
        return rc;
    coll_sched *s = coll_sched_create_kind(c, mode != COLL_BLOCKING);
    rc = topo_neighbor_alltoall(s, sbuf, (MPI_Aint)scount, sdt, rbuf, (MPI_Aint)rcount, rdt);
    return nbr_finish(fn, comm, s, rc, mode, req);
}

/* alltoallv (sdts == rdts == NULL) and alltoallw */
static int nbr_alltoallvw(const char *fn, int mode, const void *sbuf, const MPI_Count scounts[],
                          const MPI_Aint sdispls[], MPI_Datatype sdt, const MPI_Datatype sdts[],
                          void *rbuf, const MPI_Count rcounts[], const MPI_Aint rdispls[],
                          MPI_Datatype rdt, const MPI_Datatype rdts[], int wform, MPI_Comm comm,
                          MPI_Info info, MPI_Request *req)
{
    mpii_comm *c;
    int indeg, outdeg;
    int rc = nbr_start(fn, comm, sbuf, mode, info, req, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    topo_degrees(c, &indeg, &outdeg);
    rc = nbr_bufs(fn, comm, outdeg, scounts, sdispls, sdt, sdts, wform, "send");
    if (rc == MPI_SUCCESS)
        rc = nbr_bufs(fn, comm, indeg, rcounts, rdispls, rdt, rdts, wform, "recv");
    if (rc == MPI_SUCCESS)
        rc =
            nbr_null(fn, comm, sbuf, outdeg, 0, scounts, sdt, sdts, wform ? sdispls : NULL, "send");
    if (rc == MPI_SUCCESS)
        rc = nbr_null(fn, comm, rbuf, indeg, 0, rcounts, rdt, rdts, wform ? rdispls : NULL, "recv");
    if (rc != MPI_SUCCESS)
        return rc;
    coll_sched *s = coll_sched_create_kind(c, mode != COLL_BLOCKING);
    if (wform)
        rc = topo_neighbor_alltoallw(s, sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls, rdts);
    else
        rc = topo_neighbor_alltoallv(s, sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt);
    return nbr_finish(fn, comm, s, rc, mode, req);
}

/* the v/w forms: the arrays of either form (binding/twin.h) as the _c form's */
static int nbr_alltoallvw_twin(const char *fn, int mode, const void *sbuf, b_counts scounts,
                               b_aints sdispls, MPI_Datatype sdt, const MPI_Datatype sdts[],
                               void *rbuf, b_counts rcounts, b_aints rdispls, MPI_Datatype rdt,
                               const MPI_Datatype rdts[], int wform, MPI_Comm comm, MPI_Info info,
                               MPI_Request *req)
{
    int indeg, outdeg;
    nbr_degrees(comm, &indeg, &outdeg);
    const MPI_Count *sc = b_counts_wide(scounts, outdeg), *rcn = b_counts_wide(rcounts, indeg);
    const MPI_Aint *sd = b_aints_wide(sdispls, outdeg), *rd = b_aints_wide(rdispls, indeg);
    int rc = nbr_alltoallvw(fn, mode, sbuf, sc, sd, sdt, sdts, rbuf, rcn, rd, rdt, rdts, wform,
                            comm, info, req);
    b_aints_free(rdispls, rd);
    b_aints_free(sdispls, sd);
    b_counts_free(rcounts, rcn);
    b_counts_free(scounts, sc);
    return rc;
}

static int nbr_allgatherv_twin(const char *fn, int mode, const void *sbuf, MPI_Count scount,
                               MPI_Datatype sdt, void *rbuf, b_counts rcounts, b_aints displs,
                               MPI_Datatype rdt, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    int indeg, outdeg;
    nbr_degrees(comm, &indeg, &outdeg);
    const MPI_Count *rc_ = b_counts_wide(rcounts, indeg);
    const MPI_Aint *d = b_aints_wide(displs, indeg);
    int rc = nbr_allgatherv(fn, mode, sbuf, scount, sdt, rbuf, rc_, d, rdt, comm, info, req);
    b_aints_free(displs, d);
    b_counts_free(rcounts, rc_);
    return rc;
}

/* ---- the entry points ---------------------------------------------------------------- */
int b_Neighbor_allgather(const char *fn, const void *sendbuf, MPI_Count sendcount,
                         MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                         MPI_Datatype recvtype, MPI_Comm comm)
{
    return nbr_allgather(fn, COLL_BLOCKING, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                         recvtype, comm, MPI_INFO_NULL, NULL);
}

int b_Ineighbor_allgather(const char *fn, const void *sendbuf, MPI_Count sendcount,
                          MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return nbr_allgather(fn, COLL_NONBLOCKING, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                         recvtype, comm, MPI_INFO_NULL, request);
}

int b_Neighbor_allgather_init(const char *fn, const void *sendbuf, MPI_Count sendcount,
                              MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                              MPI_Request *request)
{
    return nbr_allgather(fn, COLL_PERSISTENT, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                         recvtype, comm, info, request);
}

int b_Neighbor_allgatherv(const char *fn, const void *sendbuf, MPI_Count sendcount,
                          MPI_Datatype sendtype, void *recvbuf, b_counts recvcounts, b_aints displs,
                          MPI_Datatype recvtype, MPI_Comm comm)
{
    return nbr_allgatherv_twin(fn, COLL_BLOCKING, sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                               displs, recvtype, comm, MPI_INFO_NULL, NULL);
}

int b_Ineighbor_allgatherv(const char *fn, const void *sendbuf, MPI_Count sendcount,
                           MPI_Datatype sendtype, void *recvbuf, b_counts recvcounts,
                           b_aints displs, MPI_Datatype recvtype, MPI_Comm comm,
                           MPI_Request *request)
{
    return nbr_allgatherv_twin(fn, COLL_NONBLOCKING, sendbuf, sendcount, sendtype, recvbuf,
                               recvcounts, displs, recvtype, comm, MPI_INFO_NULL, request);
}

int b_Neighbor_allgatherv_init(const char *fn, const void *sendbuf, MPI_Count sendcount,
                               MPI_Datatype sendtype, void *recvbuf, b_counts recvcounts,
                               b_aints displs, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                               MPI_Request *request)
{
    return nbr_allgatherv_twin(fn, COLL_PERSISTENT, sendbuf, sendcount, sendtype, recvbuf,
                               recvcounts, displs, recvtype, comm, info, request);
}

int b_Neighbor_alltoall(const char *fn, const void *sendbuf, MPI_Count sendcount,
                        MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                        MPI_Datatype recvtype, MPI_Comm comm)
{
    return nbr_alltoall(fn, COLL_BLOCKING, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, comm, MPI_INFO_NULL, NULL);
}

int b_Ineighbor_alltoall(const char *fn, const void *sendbuf, MPI_Count sendcount,
                         MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                         MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return nbr_alltoall(fn, COLL_NONBLOCKING, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, comm, MPI_INFO_NULL, request);
}

int b_Neighbor_alltoall_init(const char *fn, const void *sendbuf, MPI_Count sendcount,
                             MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                             MPI_Request *request)
{
    return nbr_alltoall(fn, COLL_PERSISTENT, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, comm, info, request);
}

int b_Neighbor_alltoallv(const char *fn, const void *sendbuf, b_counts sendcounts, b_aints sdispls,
                         MPI_Datatype sendtype, void *recvbuf, b_counts recvcounts, b_aints rdispls,
                         MPI_Datatype recvtype, MPI_Comm comm)
{
    return nbr_alltoallvw_twin(fn, COLL_BLOCKING, sendbuf, sendcounts, sdispls, sendtype, NULL,
                               recvbuf, recvcounts, rdispls, recvtype, NULL, 0, comm, MPI_INFO_NULL,
                               NULL);
}

int b_Ineighbor_alltoallv(const char *fn, const void *sendbuf, b_counts sendcounts, b_aints sdispls,
                          MPI_Datatype sendtype, void *recvbuf, b_counts recvcounts,
                          b_aints rdispls, MPI_Datatype recvtype, MPI_Comm comm,
                          MPI_Request *request)
{
    return nbr_alltoallvw_twin(fn, COLL_NONBLOCKING, sendbuf, sendcounts, sdispls, sendtype, NULL,
                               recvbuf, recvcounts, rdispls, recvtype, NULL, 0, comm, MPI_INFO_NULL,
                               request);
}

int b_Neighbor_alltoallv_init(const char *fn, const void *sendbuf, b_counts sendcounts,
                              b_aints sdispls, MPI_Datatype sendtype, void *recvbuf,
                              b_counts recvcounts, b_aints rdispls, MPI_Datatype recvtype,
                              MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return nbr_alltoallvw_twin(fn, COLL_PERSISTENT, sendbuf, sendcounts, sdispls, sendtype, NULL,
                               recvbuf, recvcounts, rdispls, recvtype, NULL, 0, comm, info,
                               request);
}

int b_Neighbor_alltoallw(const char *fn, const void *sendbuf, b_counts sendcounts, b_aints sdispls,
                         const MPI_Datatype sendtypes[], void *recvbuf, b_counts recvcounts,
                         b_aints rdispls, const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    return nbr_alltoallvw_twin(fn, COLL_BLOCKING, sendbuf, sendcounts, sdispls, MPI_DATATYPE_NULL,
                               sendtypes, recvbuf, recvcounts, rdispls, MPI_DATATYPE_NULL,
                               recvtypes, 1, comm, MPI_INFO_NULL, NULL);
}

int b_Ineighbor_alltoallw(const char *fn, const void *sendbuf, b_counts sendcounts, b_aints sdispls,
                          const MPI_Datatype sendtypes[], void *recvbuf, b_counts recvcounts,
                          b_aints rdispls, const MPI_Datatype recvtypes[], MPI_Comm comm,
                          MPI_Request *request)
{
    return nbr_alltoallvw_twin(fn, COLL_NONBLOCKING, sendbuf, sendcounts, sdispls,
                               MPI_DATATYPE_NULL, sendtypes, recvbuf, recvcounts, rdispls,
                               MPI_DATATYPE_NULL, recvtypes, 1, comm, MPI_INFO_NULL, request);
}

int b_Neighbor_alltoallw_init(const char *fn, const void *sendbuf, b_counts sendcounts,
                              b_aints sdispls, const MPI_Datatype sendtypes[], void *recvbuf,
                              b_counts recvcounts, b_aints rdispls, const MPI_Datatype recvtypes[],
                              MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return nbr_alltoallvw_twin(fn, COLL_PERSISTENT, sendbuf, sendcounts, sdispls, MPI_DATATYPE_NULL,
                               sendtypes, recvbuf, recvcounts, rdispls, MPI_DATATYPE_NULL,
                               recvtypes, 1, comm, info, request);
}
