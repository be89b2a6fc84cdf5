/* Virtual topologies (src/mpi/topo, MPI 4.1 chapter 8): the topology a
 * communicator carries in mpii_comm.topo, its constructors (a new
 * communicator over the first ranks of the old one: reorder is allowed to
 * keep the identity mapping, and does), the queries, and the neighbour lists
 * the neighbourhood collectives (neighbor.c) walk.
 *
 * Neighbour order, which every neighbourhood collective follows:
 *   cartesian  for each dimension, the -1 then the +1 neighbour (MPI_PROC_NULL
 *              at a non-periodic border; the same rank twice in a periodic
 *              dimension of size 1 or 2); sources and destinations alike
 *   graph      the rank's entries of `edges`, as sources and destinations
 *   dist graph the lists given to MPI_Dist_graph_create_adjacent, or for
 *              MPI_Dist_graph_create the edges in the order of the ranks
 *              that named them, then of their position in that rank's lists */
#ifndef DCFA_MPI_TOPO_H
#define DCFA_MPI_TOPO_H

#include "mpi/mpii.h"

typedef struct topo {
    int kind; /* MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH */
    /* cartesian */
    int ndims;
    int *dims, *periods;
    /* graph: index[nnodes], edges[index[nnodes - 1]] as the user gave them */
    int nnodes, nedges;
    int *index, *edges;
    /* distributed graph: this rank's in- and out-edges */
    int indeg, outdeg, weighted;
    int *in, *inw, *out, *outw;
} topo;

static inline topo *topo_of(const mpii_comm *c) { return (topo *)c->topo; }
topo *topo_dup(const topo *t);
void topo_free(topo *t);

/* Constructors: MPI_SUCCESS or an error class; *out NULL (MPI_COMM_NULL) for
 * the processes left out. Arguments are checked by the binding. */
int topo_cart_create(mpii_comm *c, int ndims, const int dims[], const int periods[],
                     mpii_comm **out);
int topo_cart_sub(mpii_comm *c, const int remain[], mpii_comm **out);
int topo_graph_create(mpii_comm *c, int nnodes, const int index[], const int edges[],
                      mpii_comm **out);
/* weighted: whether weights are arrays (neither MPI_UNWEIGHTED nor, with
 * edges, MPI_WEIGHTS_EMPTY: the binding checks) */
int topo_dist_adjacent(mpii_comm *c, int indeg, const int src[], const int srcw[], int outdeg,
                       const int dst[], const int dstw[], int weighted, mpii_comm **out);
int topo_dist_create(mpii_comm *c, int n, const int src[], const int deg[], const int dst[],
                     const int w[], int weighted, mpii_comm **out);

/* Cartesian arithmetic (t a cartesian topology) */
void topo_cart_coords(const topo *t, int rank, int coords[]);
/* the rank at coords (periodic dimensions wrap); MPI_PROC_NULL outside a
 * non-periodic dimension */
int topo_cart_rank(const topo *t, const int coords[]);
void topo_cart_shift(const topo *t, int rank, int dir, int disp, int *src, int *dst);
int topo_cart_size(int ndims, const int dims[]); /* product of dims */

/* MPI_Dims_create: MPI_SUCCESS or MPI_ERR_DIMS (dims not changed then) */
int topo_dims_create(int nnodes, int ndims, int dims[]);

/* Graph neighbours of rank (graph topology): count and pointer into edges */
int topo_graph_neighbors(const topo *t, int rank, const int **nbrs);

/* The neighbour lists of the calling process for the neighbourhood
 * collectives: *in and *out point into t or into storage (2 * ndims ints each)
 * the caller provides as cart_in/cart_out for cartesian topologies. */
void topo_neighbors(const mpii_comm *c, int *cart_in, int *cart_out, int *indeg, const int **in,
                    int *outdeg, const int **out);
/* 2 * ndims for cartesian, else the in/out degree; 0 if no topology */
void topo_degrees(const mpii_comm *c, int *indeg, int *outdeg);

#endif
