/* Virtual topologies: objects, constructors, cartesian arithmetic,
 * MPI_Dims_create, and the neighbour lists (see topo.h). */
#include "mpi/topo/topo.h"
#include "mpi/comm/comm.h"
#include "mpi/coll/coll.h"

#include <stdlib.h>
#include <string.h>

/* ---- objects ------------------------------------------------------------------------ */

static int *topo_ints(const int *src, int n)
{
    int *v = util_malloc((size_t)n * sizeof(int) + 1);
    if (src && n > 0)
        memcpy(v, src, (size_t)n * sizeof(int));
    else if (n > 0)
        memset(v, 0, (size_t)n * sizeof(int));
    return v;
}

static topo *topo_new(int kind)
{
    topo *t = util_malloc(sizeof *t);
    memset(t, 0, sizeof *t);
    t->kind = kind;
    return t;
}

void topo_free(topo *t)
{
    if (!t)
        return;
    free(t->dims);
    free(t->periods);
    free(t->index);
    free(t->edges);
    free(t->in);
    free(t->inw);
    free(t->out);
    free(t->outw);
    free(t);
}

topo *topo_dup(const topo *t)
{
    topo *n = topo_new(t->kind);
    *n = *t;
    n->dims = topo_ints(t->dims, t->ndims);
    n->periods = topo_ints(t->periods, t->ndims);
    n->index = topo_ints(t->index, t->nnodes);
    n->edges = topo_ints(t->edges, t->nedges);
    n->in = topo_ints(t->in, t->indeg);
    n->inw = topo_ints(t->inw, t->indeg);
    n->out = topo_ints(t->out, t->outdeg);
    n->outw = topo_ints(t->outw, t->outdeg);
    return n;
}

/* a communicator over the first n ranks of c (identity mapping); NULL for the others */
static int topo_comm_first(mpii_comm *c, int n, mpii_comm **out)
{
    mpii_group *g = mpii_group_create(n, c->group->lpids);
    int rc = mpii_comm_create(c, g, out);
    mpii_group_release(g);
    return rc;
}

/* ---- cartesian ---------------------------------------------------------------------- */

int topo_cart_size(int ndims, const int dims[])
{
    long long p = 1;
    for (int i = 0; i < ndims; i++) {
        p *= dims[i];
        if (p > 0x7fffffff)
            return -1;
    }
    return (int)p;
}

static topo *topo_cart_new(int ndims, const int dims[], const int periods[])
{
    topo *t = topo_new(MPI_CART);
    t->ndims = ndims;
    t->dims = topo_ints(dims, ndims);
    t->periods = topo_ints(NULL, ndims);
    for (int i = 0; i < ndims; i++)
        t->periods[i] = periods[i] ? 1 : 0;
    return t;
}

int topo_cart_create(mpii_comm *c, int ndims, const int dims[], const int periods[],
                     mpii_comm **out)
{
    int rc = topo_comm_first(c, topo_cart_size(ndims, dims), out);
    if (rc == MPI_SUCCESS && *out)
        (*out)->topo = topo_cart_new(ndims, dims, periods);
    return rc;
}

void topo_cart_coords(const topo *t, int rank, int coords[])
{
    for (int i = t->ndims - 1; i >= 0; i--) {
        coords[i] = rank % t->dims[i];
        rank /= t->dims[i];
    }
}

int topo_cart_rank(const topo *t, const int coords[])
{
    int r = 0;
    for (int i = 0; i < t->ndims; i++) {
        int x = coords[i], d = t->dims[i];
        if (x < 0 || x >= d) {
            if (!t->periods[i])
                return MPI_PROC_NULL;
            x %= d;
            if (x < 0)
                x += d;
        }
        r = r * d + x;
    }
    return r;
}

void topo_cart_shift(const topo *t, int rank, int dir, int disp, int *src, int *dst)
{
    int stack[16];
    int *co = t->ndims <= 16 ? stack : util_malloc((size_t)t->ndims * sizeof(int));
    topo_cart_coords(t, rank, co);
    int mine = co[dir];
    co[dir] = mine + disp;
    *dst = topo_cart_rank(t, co);
    co[dir] = mine - disp;
    *src = topo_cart_rank(t, co);
    if (co != stack)
        free(co);
}

/* Processes whose coordinates agree in the dropped dimensions form one
 * subgrid; keyed by their rank, which keeps the kept dimensions row-major. */
int topo_cart_sub(mpii_comm *c, const int remain[], mpii_comm **out)
{
    const topo *t = topo_of(c);
    int *co = topo_ints(NULL, t->ndims);
    int *dims = topo_ints(NULL, t->ndims), *per = topo_ints(NULL, t->ndims);
    topo_cart_coords(t, c->rank, co);
    int color = 0, n = 0;
    for (int i = 0; i < t->ndims; i++) {
        if (remain[i]) {
            dims[n] = t->dims[i];
            per[n++] = t->periods[i];
        } else {
            color = color * t->dims[i] + co[i];
        }
    }
    int rc = mpii_comm_split(c, color, c->rank, out);
    if (rc == MPI_SUCCESS && *out)
        (*out)->topo = topo_cart_new(n, dims, per);
    free(per);
    free(dims);
    free(co);
    return rc;
}

/* ---- graph -------------------------------------------------------------------------- */

int topo_graph_create(mpii_comm *c, int nnodes, const int index[], const int edges[],
                      mpii_comm **out)
{
    int rc = topo_comm_first(c, nnodes, out);
    if (rc != MPI_SUCCESS || !*out)
        return rc;
    topo *t = topo_new(MPI_GRAPH);
    t->nnodes = nnodes;
    t->nedges = nnodes > 0 ? index[nnodes - 1] : 0;
    t->index = topo_ints(index, nnodes);
    t->edges = topo_ints(edges, t->nedges);
    (*out)->topo = t;
    return MPI_SUCCESS;
}

int topo_graph_neighbors(const topo *t, int rank, const int **nbrs)
{
    int first = rank > 0 ? t->index[rank - 1] : 0;
    *nbrs = t->edges + first;
    return t->index[rank] - first;
}

/* ---- distributed graph -------------------------------------------------------------- */

static topo *topo_dist_new(int indeg, const int src[], const int srcw[], int outdeg,
                           const int dst[], const int dstw[], int weighted)
{
    topo *t = topo_new(MPI_DIST_GRAPH);
    t->weighted = weighted;
    t->indeg = indeg;
    t->outdeg = outdeg;
    t->in = topo_ints(src, indeg);
    t->out = topo_ints(dst, outdeg);
    t->inw = topo_ints(weighted ? srcw : NULL, indeg);
    t->outw = topo_ints(weighted ? dstw : NULL, outdeg);
    return t;
}

int topo_dist_adjacent(mpii_comm *c, int indeg, const int src[], const int srcw[], int outdeg,
                       const int dst[], const int dstw[], int weighted, mpii_comm **out)
{
    int rc = topo_comm_first(c, c->size, out);
    if (rc == MPI_SUCCESS && *out)
        (*out)->topo = topo_dist_new(indeg, src, srcw, outdeg, dst, dstw, weighted);
    return rc;
}

/* Every edge (s, d, w) a process names travels as a triple to both ends:
 * (DIST_OUT, d, w) to s and (DIST_IN, s, w) to d. Counts first (alltoall),
 * then the triples (alltoallv); each process reads its edges in the order
 * of the ranks that named them. */
enum { DIST_IN = 0, DIST_OUT = 1 };

int topo_dist_create(mpii_comm *c, int n, const int src[], const int deg[], const int dst[],
                     const int w[], int weighted, mpii_comm **out)
{
    int p = c->size, rc;
    MPI_Count *scnt = util_malloc((size_t)p * sizeof *scnt),
              *rcnt = util_malloc((size_t)p * sizeof *rcnt);
    MPI_Aint *sdis = util_malloc((size_t)p * sizeof *sdis),
             *rdis = util_malloc((size_t)p * sizeof *rdis);
    int *sbuf = NULL, *rbuf = NULL, *pos = util_malloc((size_t)p * sizeof *pos);
    int *in = NULL, *inw = NULL, *outv = NULL, *outw = NULL;
    memset(scnt, 0, (size_t)p * sizeof *scnt);
    for (int i = 0, k = 0; i < n; i++) {
        for (int j = 0; j < deg[i]; j++, k++) {
            scnt[src[i]] += 3;
            scnt[dst[k]] += 3;
        }
    }
    MPI_Aint total = 0;
    for (int r = 0; r < p; r++) {
        sdis[r] = total;
        pos[r] = (int)total;
        total += (MPI_Aint)scnt[r];
    }
    sbuf = util_malloc((size_t)total * sizeof(int) + 1);
    for (int i = 0, k = 0; i < n; i++) {
        for (int j = 0; j < deg[i]; j++, k++) {
            int wt = weighted ? w[k] : 1;
            int *a = sbuf + pos[src[i]];
            a[0] = DIST_OUT, a[1] = dst[k], a[2] = wt;
            pos[src[i]] += 3;
            int *b = sbuf + pos[dst[k]];
            b[0] = DIST_IN, b[1] = src[i], b[2] = wt;
            pos[dst[k]] += 3;
        }
    }
    rc = mpii_alltoall(scnt, 1, MPI_COUNT, rcnt, 1, MPI_COUNT, c);
    if (rc != MPI_SUCCESS)
        goto done;
    MPI_Aint rtotal = 0;
    for (int r = 0; r < p; r++) {
        rdis[r] = rtotal;
        rtotal += (MPI_Aint)rcnt[r];
    }
    rbuf = util_malloc((size_t)rtotal * sizeof(int) + 1);
    rc = mpii_alltoallv(sbuf, scnt, sdis, MPI_INT, rbuf, rcnt, rdis, MPI_INT, c);
    if (rc != MPI_SUCCESS)
        goto done;
    int nin = 0, nout = 0;
    for (MPI_Aint i = 0; i < rtotal; i += 3)
        if (rbuf[i] == DIST_IN)
            nin++;
        else
            nout++;
    in = topo_ints(NULL, nin), inw = topo_ints(NULL, nin);
    outv = topo_ints(NULL, nout), outw = topo_ints(NULL, nout);
    nin = nout = 0;
    for (MPI_Aint i = 0; i < rtotal; i += 3) {
        if (rbuf[i] == DIST_IN) {
            in[nin] = rbuf[i + 1];
            inw[nin++] = rbuf[i + 2];
        } else {
            outv[nout] = rbuf[i + 1];
            outw[nout++] = rbuf[i + 2];
        }
    }
    rc = topo_dist_adjacent(c, nin, in, inw, nout, outv, outw, weighted, out);
done:
    free(outw);
    free(outv);
    free(inw);
    free(in);
    free(rbuf);
    free(sbuf);
    free(pos);
    free(rdis);
    free(sdis);
    free(rcnt);
    free(scnt);
    return rc;
}

/* ---- neighbour lists ------------------------------------------------------------------ */

void topo_degrees(const mpii_comm *c, int *indeg, int *outdeg)
{
    const topo *t = topo_of(c);
    *indeg = *outdeg = 0;
    if (!t)
        return;
    if (t->kind == MPI_CART) {
        *indeg = *outdeg = 2 * t->ndims;
    } else if (t->kind == MPI_GRAPH) {
        const int *nb;
        *indeg = *outdeg = topo_graph_neighbors(t, c->rank, &nb);
    } else {
        *indeg = t->indeg;
        *outdeg = t->outdeg;
    }
}

void topo_neighbors(const mpii_comm *c, int *cart_in, int *cart_out, int *indeg, const int **in,
                    int *outdeg, const int **out)
{
    const topo *t = topo_of(c);
    topo_degrees(c, indeg, outdeg);
    if (t->kind == MPI_CART) {
        for (int d = 0; d < t->ndims; d++) {
            int lo, hi;
            topo_cart_shift(t, c->rank, d, 1, &lo, &hi);
            cart_in[2 * d] = cart_out[2 * d] = lo;
            cart_in[2 * d + 1] = cart_out[2 * d + 1] = hi;
        }
        *in = cart_in;
        *out = cart_out;
    } else if (t->kind == MPI_GRAPH) {
        topo_graph_neighbors(t, c->rank, in);
        *out = *in;
    } else {
        *in = t->in;
        *out = t->out;
    }
}

/* ---- MPI_Dims_create ------------------------------------------------------------------ */

typedef struct dims_search {
    int k; /* free dimensions */
    int ndiv;
    const int *div; /* divisors of the product to spread, ascending */
    int *cur, *best;
    long long spread; /* best max - min so far, -1 none */
} dims_search;

/* compare two non-increasing factor lists from their smallest entries up */
static int dims_cmp_from_end(const int *a, const int *b, int k)
{
    for (int i = k - 1; i >= 0; i--)
        if (a[i] != b[i])
            return a[i] > b[i] ? 1 : -1;
    return 0;
}

/* choose cur[depth..k-1] non-increasing, at most maxf, with product m */
static void dims_try(dims_search *s, int depth, int m, int maxf)
{
    int left = s->k - depth;
    if (left == 1) {
        if (m > maxf)
            return;
        s->cur[depth] = m;
        long long spread = (long long)s->cur[0] - m;
        /* ties (as MPICH chooses): the larger smallest factor, then the larger
         * next-smallest, ... */
        if (s->spread < 0 || spread < s->spread ||
            (spread == s->spread && dims_cmp_from_end(s->cur, s->best, s->k) > 0)) {
            s->spread = spread;
            memcpy(s->best, s->cur, (size_t)s->k * sizeof(int));
        }
        return;
    }
    for (int i = 0; i < s->ndiv; i++) {
        int f = s->div[i];
        if (f > maxf)
            break;
        if (m % f)
            continue;
        /* the remaining left - 1 factors are at most f: f^left must reach m */
        long long pw = 1;
        for (int j = 0; j < left && pw < m; j++)
            pw *= f;
        if (pw < m)
            continue;
        /* the first factor fixes the largest; min is at most f */
        if (depth > 0 && s->spread >= 0 && (long long)s->cur[0] - f > s->spread)
            continue;
        s->cur[depth] = f;
        dims_try(s, depth + 1, m / f, f);
    }
}

/* The free entries get the most balanced factorisation (smallest max - min,
 * then the largest smallest factor, next-smallest, ...) of nnodes / (product of the given entries), in
 * non-increasing order. */
int topo_dims_create(int nnodes, int ndims, int dims[])
{
    long long fixed = 1;
    int k = 0;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0)
            return MPI_ERR_DIMS;
        if (dims[i] > 0)
            fixed *= dims[i];
        else
            k++;
        if (fixed > nnodes && nnodes > 0)
            return MPI_ERR_DIMS;
    }
    if (nnodes == 0 || fixed == 0 || nnodes % fixed)
        return MPI_ERR_DIMS;
    int m = (int)(nnodes / fixed);
    if (k == 0)
        return m == 1 ? MPI_SUCCESS : MPI_ERR_DIMS;
    int *div = util_malloc(2 * 1600 * sizeof(int) + 64 * sizeof(int));
    int nlo = 0, nhi = 0, *hi = div + 1600;
    for (int f = 1; (long long)f * f <= m; f++) {
        if (m % f == 0) {
            div[nlo++] = f;
            if (f != m / f)
                hi[nhi++] = m / f;
        }
    }
    for (int i = nhi - 1; i >= 0; i--)
        div[nlo++] = hi[i];
    int *cur = util_malloc((size_t)k * 2 * sizeof(int));
    dims_search s = {k, nlo, div, cur, cur + k, -1};
    dims_try(&s, 0, m, m);
    for (int i = 0, j = 0; i < ndims; i++)
        if (dims[i] == 0)
            dims[i] = s.best[j++];
    free(cur);
    free(div);
    return MPI_SUCCESS;
}
