/* The datatype chapter's internal interface, between src/binding/datatype.c
 * (argument checks, handle conversion, error handler) and
 * src/mpi/datatype (objects, construction, envelopes, element counts,
 * external32). Every function here expects checked arguments and returns
 * MPI_SUCCESS or an MPI error class. */
#ifndef DCFA_MPI_DATATYPE_H
#define DCFA_MPI_DATATYPE_H

#include "mpi/mpii.h"

/* what MPI_Type_get_envelope/get_contents report for a new type; the
 * arrays are copied. large: made by an _c constructor (counts in `counts`) */
typedef struct mpii_dtype_env {
    int combiner, large;
    int ni, na, nc, nd;
    const int *ints;
    const MPI_Aint *aints;
    const MPI_Count *counts;
    const MPI_Datatype *types;
} mpii_dtype_env;

/* nrep repetitions, `stride` bytes apart, of nblocks blocks: block i is
 * blens[i] copies of types[one_type ? 0 : i] at byte displacement disps[i].
 * pad: round the extent to the alignment of the contents (struct). */
int mpii_dtype_build(const mpii_dtype_env *env, size_t nblocks, mpii_dtype *const *types,
                     int one_type, const MPI_Count *blens, const MPI_Count *disps, MPI_Count nrep,
                     MPI_Count stride, int pad, MPI_Datatype *out);
int mpii_dtype_build_resized(const mpii_dtype_env *env, mpii_dtype *old, MPI_Count lb,
                             MPI_Count extent, MPI_Datatype *out);
int mpii_dtype_build_dup(mpii_dtype *old, MPI_Datatype *out);
/* subarray and darray: per dimension, the index intervals [start, start+len)
 * of that dimension that are kept (nint[d] of them, in ints[d]); order is
 * MPI_ORDER_C or MPI_ORDER_FORTRAN. The result spans [0, prod(gsizes)*extent). */
typedef struct mpii_dtype_interval {
    MPI_Count start, len;
} mpii_dtype_interval;
int mpii_dtype_build_grid(const mpii_dtype_env *env, int ndims, const MPI_Count *gsizes,
                          const int *nint, mpii_dtype_interval *const *ints, int order,
                          mpii_dtype *old, MPI_Datatype *out);
/* darray: the intervals this process owns in one dimension (caller frees *out) */
int mpii_dtype_darray_dim(MPI_Count gsize, int distrib, int darg, int psize, int coord,
                          mpii_dtype_interval **out, int *nint);

/* envelope and contents as recorded at construction */
void mpii_dtype_envelope(const mpii_dtype *t, int *ni, int *na, int *nc, int *nd, int *combiner,
                         int *large);
/* copies the arguments; each returned derived datatype gains a reference */
void mpii_dtype_contents(const mpii_dtype *t, int *ints, MPI_Aint *aints, MPI_Count *counts,
                         MPI_Datatype *types);

/* basic elements in `bytes` bytes of packed data of t; -1 if it does not end
 * on a basic element boundary */
MPI_Count mpii_dtype_elements(const mpii_dtype *t, MPI_Count bytes);
/* bytes taken by the first `elements` basic elements of a stream of t */
MPI_Count mpii_dtype_element_bytes(const mpii_dtype *t, MPI_Count elements);
/* bytes of one element of t in external32 (long is 4 bytes there, wchar_t 2) */
MPI_Count mpii_dtype_external32_size(const mpii_dtype *t);
/* convert `count` packed elements of t from native to external32 (to_ext) or back */
void mpii_dtype_external32(const mpii_dtype *t, void *native, void *ext, MPI_Count count,
                           int to_ext);
/* MPI_Pack/MPI_Pack_external: count elements of t at buf as `bytes` packed bytes at out
 * (native, or external32); MPI_Unpack/MPI_Unpack_external: the reverse */
void mpii_dtype_pack(const mpii_dtype *t, const void *buf, MPI_Count count, void *out,
                     MPI_Count bytes, int external);
void mpii_dtype_unpack(const mpii_dtype *t, const void *in, MPI_Count bytes, void *buf,
                       MPI_Count count, int external);
/* MPI_Type_create_f90_integer/real/complex (combiner MPI_COMBINER_F90_*; p is
 * ignored for integers): one handle per (combiner, p, r); MPI_ERR_ARG if no
 * type has that precision and range */
int mpii_dtype_f90(int combiner, int p, int r, MPI_Datatype *out);
/* MPI_Type_match_size, MPI_Type_get_value_index: MPI_DATATYPE_NULL if none */
MPI_Datatype mpii_dtype_match_size(int typeclass, int size);
MPI_Datatype mpii_dtype_value_index(MPI_Datatype value, MPI_Datatype index);

#endif
