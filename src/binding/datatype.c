/* Datatype chapter bindings (MPI 4.1 chapter 5): argument checks with the
 * right error classes, handle <-> object, then src/mpi/datatype does the
 * work. Each int form converts its arguments to the MPI_Count form and
 * shares one implementation with the _c form; only the recorded envelope
 * differs. */
#include "mpi/datatype/datatype.h"
#include "mpi/attr/attr.h"
#include "mpi/errhan/errhan.h"
#include "binding/impl.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DT_NOOBJ MPII_OBJ_NONE, 0
#define DT_NOCOMM ((MPI_Comm)-1)   /* the external32 calls have no communicator */

static int dt_type(const char *fn, MPI_Datatype h, const char *arg, mpii_dtype **out)
{
    mpii_dtype *t = mpii_dtype_get(h);
    if (!t)
        return mpii_err(DT_NOOBJ, MPI_ERR_TYPE, fn, "%s: %s", arg,
                        h == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL" : "invalid datatype");
    *out = t;
    return MPI_SUCCESS;
}

static int dt_committed(const char *fn, MPI_Datatype h, mpii_dtype **out)
{
    int rc = dt_type(fn, h, "datatype", out);
    if (rc == MPI_SUCCESS && !(*out)->committed)
        return mpii_err(DT_NOOBJ, MPI_ERR_TYPE, fn, "datatype: not committed (call MPI_Type_commit)");
    return rc;
}

static int dt_null(const char *fn, const void *p, const char *arg)
{
    if (p == NULL)
        return mpii_err(DT_NOOBJ, MPI_ERR_ARG, fn, "%s is NULL", arg);
    return MPI_SUCCESS;
}

static int dt_count(const char *fn, MPI_Count c, const char *arg)
{
    if (c < 0)
        return mpii_err(DT_NOOBJ, MPI_ERR_COUNT, fn, "%s=%lld is negative", arg, (long long)c);
    return MPI_SUCCESS;
}

static int dt_fail(const char *fn, int rc)
{
    if (rc == MPI_SUCCESS)
        return rc;
    if (rc == MPI_ERR_NO_MEM)
        return mpii_err(DT_NOOBJ, rc, fn, "out of memory");
    return mpii_err(DT_NOOBJ, rc, fn, "the datatype's size, extent or run list overflows");
}

static MPI_Count *dt_widen(const int *v, MPI_Count n)
{
    MPI_Count *w = util_malloc((size_t)(n ? n : 1) * sizeof *w);
    for (MPI_Count i = 0; i < n; i++)
        w[i] = v[i];
    return w;
}

static MPI_Count *dt_widen_aint(const MPI_Aint *v, MPI_Count n)
{
    MPI_Count *w = util_malloc((size_t)(n ? n : 1) * sizeof *w);
    for (MPI_Count i = 0; i < n; i++)
        w[i] = v[i];
    return w;
}

/* memcpy that accepts the NULL arrays a zero count may come with */
static void dt_copy(void *dst, const void *src, size_t n)
{
    if (n)
        memcpy(dst, src, n);
}

/* ---- constructors --------------------------------------------------------------- */

/* count blocks of blen copies, stride `stride` in bytes (or in old extents when !bytes) */
static int dt_vector(const char *fn, const mpii_dtype_env *env, MPI_Count count, MPI_Count blen,
                     MPI_Count stride, int bytes, MPI_Datatype oldh, MPI_Datatype *newtype)
{
    mpii_dtype *old = NULL;
    int rc;
    if ((rc = dt_count(fn, count, "count")) || (rc = dt_count(fn, blen, "blocklength")) ||
        (rc = dt_type(fn, oldh, "oldtype", &old)) || (rc = dt_null(fn, newtype, "newtype")))
        return rc;
    MPI_Count sb = stride, zero = 0;
    if (!bytes && __builtin_mul_overflow(stride, (MPI_Count)old->dt.extent, &sb))
        return dt_fail(fn, MPI_ERR_ARG);
    return dt_fail(fn, mpii_dtype_build(env, 1, &old, 1, &blen, &zero, count, sb, 0, newtype));
}

int b_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    mpii_dtype_env env = {MPI_COMBINER_CONTIGUOUS, 0, 1, 0, 0, 1, &count, NULL, NULL, &oldtype};
    return dt_vector("MPI_Type_contiguous", &env, count, 1, 1, 0, oldtype, newtype);
}
int b_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    mpii_dtype_env env = {MPI_COMBINER_CONTIGUOUS, 1, 0, 0, 1, 1, NULL, NULL, &count, &oldtype};
    return dt_vector("MPI_Type_contiguous_c", &env, count, 1, 1, 0, oldtype, newtype);
}

int b_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                  MPI_Datatype *newtype)
{
    int ints[3] = {count, blocklength, stride};
    mpii_dtype_env env = {MPI_COMBINER_VECTOR, 0, 3, 0, 0, 1, ints, NULL, NULL, &oldtype};
    return dt_vector("MPI_Type_vector", &env, count, blocklength, stride, 0, oldtype, newtype);
}
int b_Type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype,
                    MPI_Datatype *newtype)
{
    MPI_Count c[3] = {count, blocklength, stride};
    mpii_dtype_env env = {MPI_COMBINER_VECTOR, 1, 0, 0, 3, 1, NULL, NULL, c, &oldtype};
    return dt_vector("MPI_Type_vector_c", &env, count, blocklength, stride, 0, oldtype, newtype);
}

int b_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                          MPI_Datatype *newtype)
{
    int ints[2] = {count, blocklength};
    mpii_dtype_env env = {MPI_COMBINER_HVECTOR, 0, 2, 1, 0, 1, ints, &stride, NULL, &oldtype};
    return dt_vector("MPI_Type_create_hvector", &env, count, blocklength, stride, 1, oldtype,
                     newtype);
}
int b_Type_create_hvector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                            MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    MPI_Count c[3] = {count, blocklength, stride};
    mpii_dtype_env env = {MPI_COMBINER_HVECTOR, 1, 0, 0, 3, 1, NULL, NULL, c, &oldtype};
    return dt_vector("MPI_Type_create_hvector_c", &env, count, blocklength, stride, 1, oldtype,
                     newtype);
}

/* count blocks; blens NULL means every block has `blen`; displacements in
 * bytes, or in extents of the (single) old type when !bytes */
static int dt_blocks(const char *fn, const mpii_dtype_env *env, MPI_Count count,
                     const MPI_Count *blens, MPI_Count blen, const MPI_Count *disps, int bytes,
                     const MPI_Datatype *types, int ntypes, int pad, MPI_Datatype *newtype)
{
    int rc;
    if ((rc = dt_count(fn, count, "count")) || (rc = dt_null(fn, newtype, "newtype")))
        return rc;
    if (count > 0 && ((!blens && (rc = dt_count(fn, blen, "blocklength"))) ||
                      (rc = dt_null(fn, disps, "array_of_displacements")) ||
                      (rc = dt_null(fn, types, "array_of_types"))))
        return rc;
    /* a struct of zero blocks may pass no type array at all: it builds an empty
     * type, for which any committed type stands in */
    static const MPI_Datatype dt_no_type = MPI_BYTE;
    if (count == 0 && !types)
        types = &dt_no_type;
    mpii_dtype **objs = util_malloc((size_t)(ntypes > 0 ? ntypes : 1) * sizeof *objs);
    MPI_Count *bl = util_malloc((size_t)(count ? count : 1) * sizeof *bl);
    MPI_Count *d = util_malloc((size_t)(count ? count : 1) * sizeof *d);
    if (ntypes == 1 && (rc = dt_type(fn, types[0], "oldtype", &objs[0])))
        goto out;
    for (MPI_Count i = 0; i < count; i++) {
        if (ntypes > 1 && (rc = dt_type(fn, types[i], "array_of_types[i]", &objs[i])))
            goto out;
        bl[i] = blens ? blens[i] : blen;
        if (bl[i] < 0) {
            rc = mpii_err(DT_NOOBJ, MPI_ERR_COUNT, fn, "array_of_blocklengths[%lld]=%lld is negative",
                          (long long)i, (long long)bl[i]);
            goto out;
        }
        d[i] = disps[i];
        if (!bytes && __builtin_mul_overflow(disps[i], (MPI_Count)objs[0]->dt.extent, &d[i])) {
            rc = dt_fail(fn, MPI_ERR_ARG);
            goto out;
        }
    }
    rc = dt_fail(fn, mpii_dtype_build(env, (size_t)count, objs, ntypes == 1, bl, d, 1, 0, pad,
                                      newtype));
out:
    free(d);
    free(bl);
    free(objs);
    return rc;
}

int b_Type_indexed(int count, const int array_of_blocklengths[], const int array_of_displacements[],
                   MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_indexed";
    int rc;
    if (count < 0)
        return dt_count(fn, count, "count");
    if (count > 0 && ((rc = dt_null(fn, array_of_blocklengths, "array_of_blocklengths")) ||
                      (rc = dt_null(fn, array_of_displacements, "array_of_displacements"))))
        return rc;
    int *ints = util_malloc(((size_t)count * 2 + 1) * sizeof *ints);
    ints[0] = count;
    dt_copy(ints + 1, array_of_blocklengths, (size_t)count * sizeof *ints);
    dt_copy(ints + 1 + count, array_of_displacements, (size_t)count * sizeof *ints);
    MPI_Count *bl = dt_widen(array_of_blocklengths, count), *d = dt_widen(array_of_displacements, count);
    mpii_dtype_env env = {MPI_COMBINER_INDEXED, 0, 2 * count + 1, 0, 0, 1, ints, NULL, NULL, &oldtype};
    rc = dt_blocks(fn, &env, count, bl, 0, d, 0, &oldtype, 1, 0, newtype);
    free(ints), free(bl), free(d);
    return rc;
}
int b_Type_indexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                     const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                     MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_indexed_c";
    int rc;
    if (count < 0)
        return dt_count(fn, count, "count");
    if (count > INT_MAX / 2)
        return dt_fail(fn, MPI_ERR_ARG);
    if (count > 0 && ((rc = dt_null(fn, array_of_blocklengths, "array_of_blocklengths")) ||
                      (rc = dt_null(fn, array_of_displacements, "array_of_displacements"))))
        return rc;
    MPI_Count *c = util_malloc(((size_t)count * 2 + 1) * sizeof *c);
    c[0] = count;
    dt_copy(c + 1, array_of_blocklengths, (size_t)count * sizeof *c);
    dt_copy(c + 1 + count, array_of_displacements, (size_t)count * sizeof *c);
    mpii_dtype_env env = {MPI_COMBINER_INDEXED, 1, 0, 0, (int)(2 * count + 1), 1, NULL, NULL, c, &oldtype};
    rc = dt_blocks(fn, &env, count, array_of_blocklengths, 0, array_of_displacements, 0, &oldtype,
                   1, 0, newtype);
    free(c);
    return rc;
}

int b_Type_create_hindexed(int count, const int array_of_blocklengths[],
                           const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                           MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_hindexed";
    int rc;
    if (count < 0)
        return dt_count(fn, count, "count");
    if (count > 0 && ((rc = dt_null(fn, array_of_blocklengths, "array_of_blocklengths")) ||
                      (rc = dt_null(fn, array_of_displacements, "array_of_displacements"))))
        return rc;
    int *ints = util_malloc(((size_t)count + 1) * sizeof *ints);
    ints[0] = count;
    dt_copy(ints + 1, array_of_blocklengths, (size_t)count * sizeof *ints);
    MPI_Count *bl = dt_widen(array_of_blocklengths, count);
    MPI_Count *d = dt_widen_aint(array_of_displacements, count);
    mpii_dtype_env env = {MPI_COMBINER_HINDEXED, 0, count + 1, count, 0, 1, ints,
                          array_of_displacements, NULL, &oldtype};
    rc = dt_blocks(fn, &env, count, bl, 0, d, 1, &oldtype, 1, 0, newtype);
    free(ints), free(bl), free(d);
    return rc;
}
int b_Type_create_hindexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                             const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                             MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_hindexed_c";
    int rc;
    if (count < 0)
        return dt_count(fn, count, "count");
    if (count > INT_MAX / 2)
        return dt_fail(fn, MPI_ERR_ARG);
    if (count > 0 && ((rc = dt_null(fn, array_of_blocklengths, "array_of_blocklengths")) ||
                      (rc = dt_null(fn, array_of_displacements, "array_of_displacements"))))
        return rc;
    MPI_Count *c = util_malloc(((size_t)count * 2 + 1) * sizeof *c);
    c[0] = count;
    dt_copy(c + 1, array_of_blocklengths, (size_t)count * sizeof *c);
    dt_copy(c + 1 + count, array_of_displacements, (size_t)count * sizeof *c);
    mpii_dtype_env env = {MPI_COMBINER_HINDEXED, 1, 0, 0, (int)(2 * count + 1), 1, NULL, NULL, c, &oldtype};
    rc = dt_blocks(fn, &env, count, array_of_blocklengths, 0, array_of_displacements, 1, &oldtype,
                   1, 0, newtype);
    free(c);
    return rc;
}

int b_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
                                MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_indexed_block";
    int rc;
    if (count < 0)
        return dt_count(fn, count, "count");
    if (count > 0 && (rc = dt_null(fn, array_of_displacements, "array_of_displacements")))
        return rc;
    int *ints = util_malloc(((size_t)count + 2) * sizeof *ints);
    ints[0] = count;
    ints[1] = blocklength;
    dt_copy(ints + 2, array_of_displacements, (size_t)count * sizeof *ints);
    MPI_Count *d = dt_widen(array_of_displacements, count);
    mpii_dtype_env env = {MPI_COMBINER_INDEXED_BLOCK, 0, count + 2, 0, 0, 1, ints, NULL, NULL, &oldtype};
    rc = dt_blocks(fn, &env, count, NULL, blocklength, d, 0, &oldtype, 1, 0, newtype);
    free(ints), free(d);
    return rc;
}
int b_Type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength,
                                  const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                                  MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_indexed_block_c";
    int rc;
    if (count < 0)
        return dt_count(fn, count, "count");
    if (count > INT_MAX - 2)
        return dt_fail(fn, MPI_ERR_ARG);
    if (count > 0 && (rc = dt_null(fn, array_of_displacements, "array_of_displacements")))
        return rc;
    MPI_Count *c = util_malloc(((size_t)count + 2) * sizeof *c);
    c[0] = count;
    c[1] = blocklength;
    dt_copy(c + 2, array_of_displacements, (size_t)count * sizeof *c);
    mpii_dtype_env env = {MPI_COMBINER_INDEXED_BLOCK, 1, 0, 0, (int)(count + 2), 1, NULL, NULL, c, &oldtype};
    rc = dt_blocks(fn, &env, count, NULL, blocklength, array_of_displacements, 0, &oldtype, 1, 0,
                   newtype);
    free(c);
    return rc;
}

int b_Type_create_hindexed_block(int count, int blocklength,
                                 const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                 MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_hindexed_block";
    int rc;
    if (count < 0)
        return dt_count(fn, count, "count");
    if (count > 0 && (rc = dt_null(fn, array_of_displacements, "array_of_displacements")))
        return rc;
    int ints[2] = {count, blocklength};
    MPI_Count *d = dt_widen_aint(array_of_displacements, count);
    mpii_dtype_env env = {MPI_COMBINER_HINDEXED_BLOCK, 0, 2, count, 0, 1, ints,
                          array_of_displacements, NULL, &oldtype};
    rc = dt_blocks(fn, &env, count, NULL, blocklength, d, 1, &oldtype, 1, 0, newtype);
    free(d);
    return rc;
}
int b_Type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength,
                                   const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                                   MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_hindexed_block_c";
    int rc;
    if (count < 0)
        return dt_count(fn, count, "count");
    if (count > INT_MAX - 2)
        return dt_fail(fn, MPI_ERR_ARG);
    if (count > 0 && (rc = dt_null(fn, array_of_displacements, "array_of_displacements")))
        return rc;
    MPI_Count *c = util_malloc(((size_t)count + 2) * sizeof *c);
    c[0] = count;
    c[1] = blocklength;
    dt_copy(c + 2, array_of_displacements, (size_t)count * sizeof *c);
    mpii_dtype_env env = {MPI_COMBINER_HINDEXED_BLOCK, 1, 0, 0, (int)(count + 2), 1, NULL, NULL, c, &oldtype};
    rc = dt_blocks(fn, &env, count, NULL, blocklength, array_of_displacements, 1, &oldtype, 1, 0,
                   newtype);
    free(c);
    return rc;
}

int b_Type_create_struct(int count, const int array_of_blocklengths[],
                         const MPI_Aint array_of_displacements[],
                         const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_struct";
    int rc;
    if (count < 0)
        return dt_count(fn, count, "count");
    if (count > 0 && ((rc = dt_null(fn, array_of_blocklengths, "array_of_blocklengths")) ||
                      (rc = dt_null(fn, array_of_displacements, "array_of_displacements")) ||
                      (rc = dt_null(fn, array_of_types, "array_of_types"))))
        return rc;
    int *ints = util_malloc(((size_t)count + 1) * sizeof *ints);
    ints[0] = count;
    dt_copy(ints + 1, array_of_blocklengths, (size_t)count * sizeof *ints);
    MPI_Count *bl = dt_widen(array_of_blocklengths, count);
    MPI_Count *d = dt_widen_aint(array_of_displacements, count);
    mpii_dtype_env env = {MPI_COMBINER_STRUCT, 0, count + 1, count, 0, count, ints,
                          array_of_displacements, NULL, array_of_types};
    rc = dt_blocks(fn, &env, count, bl, 0, d, 1, array_of_types, count > 1 ? count : 1, 1, newtype);
    free(ints), free(bl), free(d);
    return rc;
}
int b_Type_create_struct_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                           const MPI_Count array_of_displacements[],
                           const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_struct_c";
    int rc;
    if (count < 0)
        return dt_count(fn, count, "count");
    if (count > INT_MAX / 2)
        return dt_fail(fn, MPI_ERR_ARG);
    if (count > 0 && ((rc = dt_null(fn, array_of_blocklengths, "array_of_blocklengths")) ||
                      (rc = dt_null(fn, array_of_displacements, "array_of_displacements")) ||
                      (rc = dt_null(fn, array_of_types, "array_of_types"))))
        return rc;
    MPI_Count *c = util_malloc(((size_t)count * 2 + 1) * sizeof *c);
    c[0] = count;
    dt_copy(c + 1, array_of_blocklengths, (size_t)count * sizeof *c);
    dt_copy(c + 1 + count, array_of_displacements, (size_t)count * sizeof *c);
    mpii_dtype_env env = {MPI_COMBINER_STRUCT, 1, 0, 0, (int)(2 * count + 1), (int)count, NULL, NULL,
                          c, array_of_types};
    rc = dt_blocks(fn, &env, count, array_of_blocklengths, 0, array_of_displacements, 1,
                   array_of_types, count > 1 ? (int)count : 1, 1, newtype);
    free(c);
    return rc;
}

static int dt_order(const char *fn, int order)
{
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return mpii_err(DT_NOOBJ, MPI_ERR_ARG, fn, "order=%d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN",
                        order);
    return MPI_SUCCESS;
}

static int dt_subarray(const char *fn, const mpii_dtype_env *env, int ndims, const MPI_Count *sizes,
                       const MPI_Count *subsizes, const MPI_Count *starts, int order,
                       MPI_Datatype oldh, MPI_Datatype *newtype)
{
    mpii_dtype *old = NULL;
    int rc;
    if (ndims <= 0)
        return mpii_err(DT_NOOBJ, MPI_ERR_ARG, fn, "ndims=%d must be positive", ndims);
    if ((rc = dt_order(fn, order)) || (rc = dt_type(fn, oldh, "oldtype", &old)) ||
        (rc = dt_null(fn, newtype, "newtype")))
        return rc;
    for (int d = 0; d < ndims; d++) {
        if (sizes[d] <= 0 || subsizes[d] < 0 || subsizes[d] > sizes[d] || starts[d] < 0 ||
            starts[d] > sizes[d] - subsizes[d])
            return mpii_err(DT_NOOBJ, MPI_ERR_ARG, fn,
                            "dimension %d: size=%lld subsize=%lld start=%lld do not satisfy "
                            "0 <= start <= start+subsize <= size, size > 0",
                            d, (long long)sizes[d], (long long)subsizes[d], (long long)starts[d]);
    }
    mpii_dtype_interval *iv = util_malloc((size_t)ndims * sizeof *iv);
    mpii_dtype_interval **ivp = util_malloc((size_t)ndims * sizeof *ivp);
    int *nint = util_malloc((size_t)ndims * sizeof *nint);
    for (int d = 0; d < ndims; d++) {
        iv[d] = (mpii_dtype_interval){starts[d], subsizes[d]};
        ivp[d] = &iv[d];
        nint[d] = 1;
    }
    rc = dt_fail(fn, mpii_dtype_build_grid(env, ndims, sizes, nint, ivp, order, old, newtype));
    free(iv), free(ivp), free(nint);
    return rc;
}

int b_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                           const int array_of_starts[], int order, MPI_Datatype oldtype,
                           MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_subarray";
    int rc;
    if (ndims <= 0)
        return mpii_err(DT_NOOBJ, MPI_ERR_ARG, fn, "ndims=%d must be positive", ndims);
    if ((rc = dt_null(fn, array_of_sizes, "array_of_sizes")) ||
        (rc = dt_null(fn, array_of_subsizes, "array_of_subsizes")) ||
        (rc = dt_null(fn, array_of_starts, "array_of_starts")))
        return rc;
    int *ints = util_malloc(((size_t)ndims * 3 + 2) * sizeof *ints);
    ints[0] = ndims;
    dt_copy(ints + 1, array_of_sizes, (size_t)ndims * sizeof *ints);
    dt_copy(ints + 1 + ndims, array_of_subsizes, (size_t)ndims * sizeof *ints);
    dt_copy(ints + 1 + 2 * ndims, array_of_starts, (size_t)ndims * sizeof *ints);
    ints[1 + 3 * ndims] = order;
    MPI_Count *s = dt_widen(array_of_sizes, ndims), *ss = dt_widen(array_of_subsizes, ndims),
              *st = dt_widen(array_of_starts, ndims);
    mpii_dtype_env env = {MPI_COMBINER_SUBARRAY, 0, 3 * ndims + 2, 0, 0, 1, ints, NULL, NULL, &oldtype};
    rc = dt_subarray(fn, &env, ndims, s, ss, st, order, oldtype, newtype);
    free(ints), free(s), free(ss), free(st);
    return rc;
}
int b_Type_create_subarray_c(int ndims, const MPI_Count array_of_sizes[],
                             const MPI_Count array_of_subsizes[], const MPI_Count array_of_starts[],
                             int order, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_subarray_c";
    int rc;
    if (ndims <= 0)
        return mpii_err(DT_NOOBJ, MPI_ERR_ARG, fn, "ndims=%d must be positive", ndims);
    if ((rc = dt_null(fn, array_of_sizes, "array_of_sizes")) ||
        (rc = dt_null(fn, array_of_subsizes, "array_of_subsizes")) ||
        (rc = dt_null(fn, array_of_starts, "array_of_starts")))
        return rc;
    int ints[2] = {ndims, order};
    MPI_Count *c = util_malloc((size_t)ndims * 3 * sizeof *c);
    dt_copy(c, array_of_sizes, (size_t)ndims * sizeof *c);
    dt_copy(c + ndims, array_of_subsizes, (size_t)ndims * sizeof *c);
    dt_copy(c + 2 * ndims, array_of_starts, (size_t)ndims * sizeof *c);
    mpii_dtype_env env = {MPI_COMBINER_SUBARRAY, 1, 2, 0, 3 * ndims, 1, ints, NULL, c, &oldtype};
    rc = dt_subarray(fn, &env, ndims, array_of_sizes, array_of_subsizes, array_of_starts, order,
                     oldtype, newtype);
    free(c);
    return rc;
}

static int dt_darray(const char *fn, const mpii_dtype_env *env, int size, int rank, int ndims,
                     const MPI_Count *gsizes, const int *distribs, const int *dargs,
                     const int *psizes, int order, MPI_Datatype oldh, MPI_Datatype *newtype)
{
    mpii_dtype *old = NULL;
    int rc;
    if (size <= 0 || rank < 0 || rank >= size)
        return mpii_err(DT_NOOBJ, MPI_ERR_ARG, fn, "rank=%d size=%d: need 0 <= rank < size", rank, size);
    if ((rc = dt_order(fn, order)) || (rc = dt_type(fn, oldh, "oldtype", &old)) ||
        (rc = dt_null(fn, newtype, "newtype")) || (rc = dt_null(fn, distribs, "array_of_distribs")) ||
        (rc = dt_null(fn, dargs, "array_of_dargs")) || (rc = dt_null(fn, psizes, "array_of_psizes")))
        return rc;
    long long nprocs = 1;
    for (int d = 0; d < ndims; d++) {
        int ds = distribs[d], p = psizes[d], a = dargs[d];
        if (gsizes[d] <= 0 || p <= 0)
            return mpii_err(DT_NOOBJ, MPI_ERR_ARG, fn, "dimension %d: gsize=%lld psize=%d must be positive",
                            d, (long long)gsizes[d], p);
        if (ds != MPI_DISTRIBUTE_BLOCK && ds != MPI_DISTRIBUTE_CYCLIC && ds != MPI_DISTRIBUTE_NONE)
            return mpii_err(DT_NOOBJ, MPI_ERR_ARG, fn, "dimension %d: invalid distribution %d", d, ds);
        if (ds == MPI_DISTRIBUTE_NONE && p != 1)
            return mpii_err(DT_NOOBJ, MPI_ERR_ARG, fn,
                            "dimension %d: MPI_DISTRIBUTE_NONE needs psize 1, not %d", d, p);
        if (a != MPI_DISTRIBUTE_DFLT_DARG && a <= 0)
            return mpii_err(DT_NOOBJ, MPI_ERR_ARG, fn, "dimension %d: darg=%d must be positive", d, a);
        if (ds == MPI_DISTRIBUTE_BLOCK && a != MPI_DISTRIBUTE_DFLT_DARG && (MPI_Count)a * p < gsizes[d])
            return mpii_err(DT_NOOBJ, MPI_ERR_ARG, fn,
                            "dimension %d: block darg=%d times psize=%d does not cover gsize=%lld", d,
                            a, p, (long long)gsizes[d]);
        nprocs *= p;
        if (nprocs > size)
            break;
    }
    if (nprocs != size)
        return mpii_err(DT_NOOBJ, MPI_ERR_ARG, fn, "the product of array_of_psizes is not size=%d", size);
    mpii_dtype_interval **iv = util_calloc((size_t)ndims, sizeof *iv);
    int *nint = util_calloc((size_t)ndims, sizeof *nint);
    /* process grid coordinates are always row-major */
    int rem = rank;
    for (int d = ndims - 1; d >= 0 && rc == MPI_SUCCESS; d--) {
        int coord = rem % psizes[d];
        rem /= psizes[d];
        rc = mpii_dtype_darray_dim(gsizes[d], distribs[d], dargs[d], psizes[d], coord, &iv[d], &nint[d]);
    }
    if (rc == MPI_SUCCESS)
        rc = mpii_dtype_build_grid(env, ndims, gsizes, nint, iv, order, old, newtype);
    for (int d = 0; d < ndims; d++)
        free(iv[d]);
    free(iv), free(nint);
    return dt_fail(fn, rc);
}

int b_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[],
                         const int array_of_distribs[], const int array_of_dargs[],
                         const int array_of_psizes[], int order, MPI_Datatype oldtype,
                         MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_darray";
    int rc;
    if (ndims <= 0)
        return mpii_err(DT_NOOBJ, MPI_ERR_ARG, fn, "ndims=%d must be positive", ndims);
    if ((rc = dt_null(fn, array_of_gsizes, "array_of_gsizes")) ||
        (rc = dt_null(fn, array_of_distribs, "array_of_distribs")) ||
        (rc = dt_null(fn, array_of_dargs, "array_of_dargs")) ||
        (rc = dt_null(fn, array_of_psizes, "array_of_psizes")))
        return rc;
    int *ints = util_malloc(((size_t)ndims * 4 + 4) * sizeof *ints);
    ints[0] = size, ints[1] = rank, ints[2] = ndims;
    dt_copy(ints + 3, array_of_gsizes, (size_t)ndims * sizeof *ints);
    dt_copy(ints + 3 + ndims, array_of_distribs, (size_t)ndims * sizeof *ints);
    dt_copy(ints + 3 + 2 * ndims, array_of_dargs, (size_t)ndims * sizeof *ints);
    dt_copy(ints + 3 + 3 * ndims, array_of_psizes, (size_t)ndims * sizeof *ints);
    ints[3 + 4 * ndims] = order;
    MPI_Count *g = dt_widen(array_of_gsizes, ndims);
    mpii_dtype_env env = {MPI_COMBINER_DARRAY, 0, 4 * ndims + 4, 0, 0, 1, ints, NULL, NULL, &oldtype};
    rc = dt_darray(fn, &env, size, rank, ndims, g, array_of_distribs, array_of_dargs,
                   array_of_psizes, order, oldtype, newtype);
    free(ints), free(g);
    return rc;
}
int b_Type_create_darray_c(int size, int rank, int ndims, const MPI_Count array_of_gsizes[],
                           const int array_of_distribs[], const int array_of_dargs[],
                           const int array_of_psizes[], int order, MPI_Datatype oldtype,
                           MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_darray_c";
    int rc;
    if (ndims <= 0)
        return mpii_err(DT_NOOBJ, MPI_ERR_ARG, fn, "ndims=%d must be positive", ndims);
    if ((rc = dt_null(fn, array_of_gsizes, "array_of_gsizes")) ||
        (rc = dt_null(fn, array_of_distribs, "array_of_distribs")) ||
        (rc = dt_null(fn, array_of_dargs, "array_of_dargs")) ||
        (rc = dt_null(fn, array_of_psizes, "array_of_psizes")))
        return rc;
    int *ints = util_malloc(((size_t)ndims * 3 + 4) * sizeof *ints);
    ints[0] = size, ints[1] = rank, ints[2] = ndims;
    dt_copy(ints + 3, array_of_distribs, (size_t)ndims * sizeof *ints);
    dt_copy(ints + 3 + ndims, array_of_dargs, (size_t)ndims * sizeof *ints);
    dt_copy(ints + 3 + 2 * ndims, array_of_psizes, (size_t)ndims * sizeof *ints);
    ints[3 + 3 * ndims] = order;
    mpii_dtype_env env = {MPI_COMBINER_DARRAY, 1, 3 * ndims + 4, 0, ndims, 1, ints, NULL,
                          array_of_gsizes, &oldtype};
    rc = dt_darray(fn, &env, size, rank, ndims, array_of_gsizes, array_of_distribs, array_of_dargs,
                   array_of_psizes, order, oldtype, newtype);
    free(ints);
    return rc;
}

static int dt_resized(const char *fn, const mpii_dtype_env *env, MPI_Datatype oldh, MPI_Count lb,
                      MPI_Count extent, MPI_Datatype *newtype)
{
    mpii_dtype *old = NULL;
    int rc;
    if ((rc = dt_type(fn, oldh, "oldtype", &old)) || (rc = dt_null(fn, newtype, "newtype")))
        return rc;
    return dt_fail(fn, mpii_dtype_build_resized(env, old, lb, extent, newtype));
}
int b_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype)
{
    MPI_Aint a[2] = {lb, extent};
    mpii_dtype_env env = {MPI_COMBINER_RESIZED, 0, 0, 2, 0, 1, NULL, a, NULL, &oldtype};
    return dt_resized("MPI_Type_create_resized", &env, oldtype, lb, extent, newtype);
}
int b_Type_create_resized_c(MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent,
                            MPI_Datatype *newtype)
{
    MPI_Count c[2] = {lb, extent};
    mpii_dtype_env env = {MPI_COMBINER_RESIZED, 1, 0, 0, 2, 1, NULL, NULL, c, &oldtype};
    return dt_resized("MPI_Type_create_resized_c", &env, oldtype, lb, extent, newtype);
}

int b_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_dup";
    mpii_dtype *old = NULL;
    int rc;
    if ((rc = dt_type(fn, oldtype, "oldtype", &old)) || (rc = dt_null(fn, newtype, "newtype")))
        return rc;
    rc = dt_fail(fn, mpii_dtype_build_dup(old, newtype));
    if (rc != MPI_SUCCESS || !old->attrs)
        return rc;
    /* attributes follow the type, through their copy callbacks */
    mpii_dtype *t = mpii_dtype_get(*newtype);
    rc = mpii_attr_copy(oldtype, *newtype, old->attrs, &t->attrs);
    if (rc != MPI_SUCCESS) {
        PMPI_Type_free(newtype);
        return mpii_err(MPII_OBJ_NONE, 0, mpii_errh_callback_code(rc), fn,
                        "an attribute copy callback failed (code %d)", rc);
    }
    return MPI_SUCCESS;
}

int b_Type_commit(MPI_Datatype *datatype)
{
    const char *fn = "MPI_Type_commit";
    mpii_dtype *t = NULL;
    int rc;
    if ((rc = dt_null(fn, datatype, "datatype")) || (rc = dt_type(fn, *datatype, "datatype", &t)))
        return rc;
    t->committed = 1;
    return MPI_SUCCESS;
}

int b_Type_free(MPI_Datatype *datatype)
{
    const char *fn = "MPI_Type_free";
    mpii_dtype *t = NULL;
    int rc;
    if ((rc = dt_null(fn, datatype, "datatype")) || (rc = dt_type(fn, *datatype, "datatype", &t)))
        return rc;
    if (t->predefined)
        return mpii_err(DT_NOOBJ, MPI_ERR_TYPE, fn, "datatype: %s is predefined and cannot be freed",
                        t->name);
    if (t->attrs && (rc = mpii_attr_delete_all(MPII_KIND_DTYPE, t->handle, &t->attrs)) != MPI_SUCCESS)
        return mpii_err(DT_NOOBJ, mpii_errh_callback_code(rc), fn,
                        "an attribute delete callback failed (code %d)", rc);
    mpii_dtype_release(t);
    *datatype = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}

/* ---- queries -------------------------------------------------------------------- */

static int dt_query(const char *fn, MPI_Datatype h, const void *a, const void *b, mpii_dtype **t)
{
    int rc;
    if ((rc = dt_type(fn, h, "datatype", t)) || (rc = dt_null(fn, a, "output argument")) ||
        (b && (rc = dt_null(fn, b, "output argument"))))
        return rc;
    return MPI_SUCCESS;
}

int b_Type_get_extent(const char *fn, MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    mpii_dtype *t = NULL;
    int rc = dt_query(fn, datatype, lb, extent, &t);
    if (rc == MPI_SUCCESS)
        *lb = t->dt.lb, *extent = t->dt.extent;
    return rc;
}
int b_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    return b_Type_get_extent("MPI_Type_get_extent_x", datatype, lb, extent);
}
int b_Type_get_true_extent(const char *fn, MPI_Datatype datatype, MPI_Count *true_lb,
                           MPI_Count *true_extent)
{
    mpii_dtype *t = NULL;
    int rc = dt_query(fn, datatype, true_lb, true_extent, &t);
    if (rc == MPI_SUCCESS)
        *true_lb = t->dt.true_lb, *true_extent = t->dt.true_extent;
    return rc;
}
int b_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent)
{
    return b_Type_get_true_extent("MPI_Type_get_true_extent_x", datatype, true_lb, true_extent);
}

int b_Type_size(const char *fn, MPI_Datatype datatype, MPI_Count *size)
{
    mpii_dtype *t = NULL;
    int rc = dt_query(fn, datatype, size, NULL, &t);
    if (rc == MPI_SUCCESS)
        *size = (MPI_Count)t->dt.size;
    return rc;
}
int b_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
    return b_Type_size("MPI_Type_size_x", datatype, size);
}

/* ---- envelopes -------------------------------------------------------------------- */

int b_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses,
                        int *num_datatypes, int *combiner)
{
    const char *fn = "MPI_Type_get_envelope";
    mpii_dtype *t = NULL;
    int rc, nc, large;
    if ((rc = dt_query(fn, datatype, num_integers, num_addresses, &t)) ||
        (rc = dt_null(fn, num_datatypes, "num_datatypes")) || (rc = dt_null(fn, combiner, "combiner")))
        return rc;
    mpii_dtype_envelope(t, num_integers, num_addresses, &nc, num_datatypes, combiner, &large);
    if (large)
        return mpii_err(DT_NOOBJ, MPI_ERR_TYPE, fn,
                        "datatype was made by a large-count constructor: use MPI_Type_get_envelope_c");
    return MPI_SUCCESS;
}
int b_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count *num_integers, MPI_Count *num_addresses,
                          MPI_Count *num_large_counts, MPI_Count *num_datatypes, int *combiner)
{
    const char *fn = "MPI_Type_get_envelope_c";
    mpii_dtype *t = NULL;
    int rc, ni, na, nc, nd, large;
    if ((rc = dt_query(fn, datatype, num_integers, num_addresses, &t)) ||
        (rc = dt_null(fn, num_large_counts, "num_large_counts")) ||
        (rc = dt_null(fn, num_datatypes, "num_datatypes")) || (rc = dt_null(fn, combiner, "combiner")))
        return rc;
    mpii_dtype_envelope(t, &ni, &na, &nc, &nd, combiner, &large);
    *num_integers = ni, *num_addresses = na, *num_large_counts = nc, *num_datatypes = nd;
    return MPI_SUCCESS;
}

static int dt_contents(const char *fn, MPI_Datatype datatype, MPI_Count max_i, MPI_Count max_a,
                       MPI_Count max_c, MPI_Count max_d, int *ints, MPI_Aint *aints,
                       MPI_Count *counts, MPI_Datatype *types, int want_large)
{
    mpii_dtype *t = NULL;
    int rc, ni, na, nc, nd, comb, large;
    if ((rc = dt_type(fn, datatype, "datatype", &t)))
        return rc;
    mpii_dtype_envelope(t, &ni, &na, &nc, &nd, &comb, &large);
    if (comb == MPI_COMBINER_NAMED)
        return mpii_err(DT_NOOBJ, MPI_ERR_TYPE, fn, "datatype: %s is predefined: it has no contents",
                        t->name);
    if (large && !want_large)
        return mpii_err(DT_NOOBJ, MPI_ERR_TYPE, fn,
                        "datatype was made by a large-count constructor: use MPI_Type_get_contents_c");
    if (max_i < ni || max_a < na || max_c < nc || max_d < nd)
        return mpii_err(DT_NOOBJ, MPI_ERR_ARG, fn,
                        "the arrays are too small: need %d integers, %d addresses, %d large counts, "
                        "%d datatypes",
                        ni, na, nc, nd);
    if ((ni && (rc = dt_null(fn, ints, "array_of_integers"))) ||
        (na && (rc = dt_null(fn, aints, "array_of_addresses"))) ||
        (nc && (rc = dt_null(fn, counts, "array_of_large_counts"))) ||
        (nd && (rc = dt_null(fn, types, "array_of_datatypes"))))
        return rc;
    mpii_dtype_contents(t, ints, aints, counts, types);
    return MPI_SUCCESS;
}
int b_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                        int max_datatypes, int array_of_integers[], MPI_Aint array_of_addresses[],
                        MPI_Datatype array_of_datatypes[])
{
    return dt_contents("MPI_Type_get_contents", datatype, max_integers, max_addresses, 0,
                       max_datatypes, array_of_integers, array_of_addresses, NULL,
                       array_of_datatypes, 0);
}
int b_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers, MPI_Count max_addresses,
                          MPI_Count max_large_counts, MPI_Count max_datatypes,
                          int array_of_integers[], MPI_Aint array_of_addresses[],
                          MPI_Count array_of_large_counts[], MPI_Datatype array_of_datatypes[])
{
    return dt_contents("MPI_Type_get_contents_c", datatype, max_integers, max_addresses,
                       max_large_counts, max_datatypes, array_of_integers, array_of_addresses,
                       array_of_large_counts, array_of_datatypes, 1);
}

/* ---- names ---------------------------------------------------------------------- */

int b_Type_set_name(MPI_Datatype datatype, const char *type_name)
{
    const char *fn = "MPI_Type_set_name";
    mpii_dtype *t = NULL;
    int rc;
    if ((rc = dt_type(fn, datatype, "datatype", &t)) || (rc = dt_null(fn, type_name, "type_name")))
        return rc;
    snprintf(t->name, sizeof t->name, "%s", type_name);
    return MPI_SUCCESS;
}
int b_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen)
{
    const char *fn = "MPI_Type_get_name";
    mpii_dtype *t = NULL;
    int rc;
    if (type_name == NULL || resultlen == NULL)
        return dt_null(fn, NULL, type_name ? "resultlen" : "type_name");
    if (datatype == MPI_DATATYPE_NULL) {
        /* MPI 4.1: the null handle is named too */
        strcpy(type_name, "MPI_DATATYPE_NULL");
        *resultlen = (int)strlen(type_name);
        return MPI_SUCCESS;
    }
    if ((rc = dt_type(fn, datatype, "datatype", &t)))
        return rc;
    size_t n = strnlen(t->name, MPI_MAX_OBJECT_NAME - 1);
    dt_copy(type_name, t->name, n);
    type_name[n] = '\0';
    *resultlen = (int)n;
    return MPI_SUCCESS;
}

int b_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
    const char *fn = "MPI_Type_match_size";
    int rc = dt_null(fn, datatype, "datatype");
    if (rc)
        return rc;
    MPI_Datatype t = mpii_dtype_match_size(typeclass, size);
    if (t == MPI_DATATYPE_NULL)
        return mpii_err(DT_NOOBJ, MPI_ERR_ARG, fn, "no predefined type of class %d and size %d",
                        typeclass, size);
    *datatype = t;
    return MPI_SUCCESS;
}

/* ---- parameterized Fortran 90 types ---------------------------------------------- */

static int dt_f90(const char *fn, int combiner, int p, int r, MPI_Datatype *newtype)
{
    int rc = dt_null(fn, newtype, "newtype");
    if (rc)
        return rc;
    if (combiner != MPI_COMBINER_F90_INTEGER && p == MPI_UNDEFINED && r == MPI_UNDEFINED)
        return mpii_err(DT_NOOBJ, MPI_ERR_ARG, fn, "p and r are both MPI_UNDEFINED");
    if ((p < 0 && p != MPI_UNDEFINED) || (r < 0 && r != MPI_UNDEFINED))
        return mpii_err(DT_NOOBJ, MPI_ERR_ARG, fn, "p=%d, r=%d: negative", p, r);
    rc = mpii_dtype_f90(combiner, p, r, newtype);
    if (rc == MPI_ERR_ARG) {
        if (combiner == MPI_COMBINER_F90_INTEGER)
            return mpii_err(DT_NOOBJ, rc, fn, "r=%d: no integer type has more than 18 digits", r);
        return mpii_err(DT_NOOBJ, rc, fn,
                        "p=%d, r=%d: no floating-point type has that precision and range"
                        " (at most 18 digits and exponent range 4931)", p, r);
    }
    return dt_fail(fn, rc);
}

int b_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
    return dt_f90("MPI_Type_create_f90_integer", MPI_COMBINER_F90_INTEGER, MPI_UNDEFINED, r,
                  newtype);
}

int b_Type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
    return dt_f90("MPI_Type_create_f90_real", MPI_COMBINER_F90_REAL, p, r, newtype);
}

int b_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
    return dt_f90("MPI_Type_create_f90_complex", MPI_COMBINER_F90_COMPLEX, p, r, newtype);
}

int b_Type_get_value_index(MPI_Datatype value_type, MPI_Datatype index_type,
                           MPI_Datatype *pair_type)
{
    const char *fn = "MPI_Type_get_value_index";
    mpii_dtype *v = NULL, *i = NULL;
    int rc;
    if ((rc = dt_type(fn, value_type, "value_type", &v)) ||
        (rc = dt_type(fn, index_type, "index_type", &i)) || (rc = dt_null(fn, pair_type, "pair_type")))
        return rc;
    *pair_type = mpii_dtype_value_index(value_type, index_type);
    return MPI_SUCCESS;
}

int b_Get_address(const void *location, MPI_Aint *address)
{
    int rc = dt_null("MPI_Get_address", address, "address");
    if (rc == MPI_SUCCESS)
        *address = (MPI_Aint)(uintptr_t)location;
    return rc;
}

/* ---- status: dcfa_count holds bytes -------------------------------------------------- */

static int dt_status(const char *fn, const MPI_Status *status, MPI_Datatype datatype, const void *out,
                     mpii_dtype **t)
{
    int rc;
    if (status == NULL || status == MPI_STATUS_IGNORE)
        return mpii_err(DT_NOOBJ, MPI_ERR_ARG, fn, "status is NULL or MPI_STATUS_IGNORE");
    if ((rc = dt_type(fn, datatype, "datatype", t)) || (rc = dt_null(fn, out, "count")))
        return rc;
    return MPI_SUCCESS;
}

static MPI_Count dt_count_of(const mpii_dtype *t, MPI_Count bytes)
{
    if (t->dt.size == 0)
        return 0;
    return bytes % (MPI_Count)t->dt.size ? MPI_UNDEFINED : bytes / (MPI_Count)t->dt.size;
}

int b_Get_count(const char *fn, const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    mpii_dtype *t = NULL;
    int rc = dt_status(fn, status, datatype, count, &t);
    if (rc == MPI_SUCCESS)
        *count = dt_count_of(t, status->dcfa_count);
    return rc;
}

static MPI_Count dt_elements(const mpii_dtype *t, MPI_Count bytes)
{
    MPI_Count n = mpii_dtype_elements(t, bytes);
    return n < 0 ? MPI_UNDEFINED : n;
}
int b_Get_elements(const char *fn, const MPI_Status *status, MPI_Datatype datatype,
                   MPI_Count *count)
{
    mpii_dtype *t = NULL;
    int rc = dt_status(fn, status, datatype, count, &t);
    if (rc == MPI_SUCCESS)
        *count = dt_elements(t, status->dcfa_count);
    return rc;
}
int b_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    return b_Get_elements("MPI_Get_elements_x", status, datatype, count);
}

int b_Status_set_elements(const char *fn, MPI_Status *status, MPI_Datatype datatype,
                          MPI_Count count)
{
    mpii_dtype *t = NULL;
    int rc = dt_status(fn, status, datatype, status, &t);
    if (rc == MPI_SUCCESS && (rc = dt_count(fn, count, "count")) == MPI_SUCCESS)
        status->dcfa_count = mpii_dtype_element_bytes(t, count);
    return rc;
}
int b_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    return b_Status_set_elements("MPI_Status_set_elements_x", status, datatype, count);
}

/* ---- pack / unpack: the packed format is the data bytes, no header ------------------------- */

/* *bytes: the packed size of count elements, in external32 when external */
static int dt_packcheck(const char *fn, MPI_Comm comm, MPI_Count count, MPI_Datatype datatype,
                        const void *position, mpii_dtype **t, MPI_Count *bytes, int external)
{
    int rc;
    if (comm != DT_NOCOMM && !mpii_comm_get(comm))
        return mpii_err(DT_NOOBJ, MPI_ERR_COMM, fn, "comm: invalid communicator");
    if ((rc = dt_count(fn, count, "count")) || (rc = dt_committed(fn, datatype, t)) ||
        (rc = dt_null(fn, position, "position")))
        return rc;
    MPI_Count one = external ? mpii_dtype_external32_size(*t) : (MPI_Count)(*t)->dt.size;
    MPI_Count native;
    if (__builtin_mul_overflow(count, one, bytes) ||
        __builtin_mul_overflow(count, (MPI_Count)(*t)->dt.size, &native))
        return mpii_err(DT_NOOBJ, MPI_ERR_COUNT, fn, "count * datatype size overflows");
    return MPI_SUCCESS;
}

static int dt_pack(const char *fn, MPI_Comm comm, const void *inbuf, MPI_Count incount,
                   MPI_Datatype datatype, void *outbuf, MPI_Count outsize, MPI_Count *position,
                   int external)
{
    mpii_dtype *t = NULL;
    MPI_Count bytes = 0;
    int rc = dt_packcheck(fn, comm, incount, datatype, position, &t, &bytes, external);
    if (rc)
        return rc;
    if (mpii_buf_is_null(inbuf, incount, t) || (!outbuf && bytes > 0))
        return mpii_err(DT_NOOBJ, MPI_ERR_BUFFER, fn, "%s: NULL with %lld bytes to pack",
                        inbuf ? "outbuf" : "inbuf", (long long)bytes);
    if (*position < 0 || *position > outsize || bytes > outsize - *position)
        return mpii_err(DT_NOOBJ, MPI_ERR_TRUNCATE, fn,
                        "%lld bytes do not fit at position %lld of a %lld-byte buffer",
                        (long long)bytes, (long long)*position, (long long)outsize);
    mpii_dtype_pack(t, inbuf, incount, (char *)outbuf + *position, bytes, external);
    *position += bytes;
    return MPI_SUCCESS;
}

static int dt_unpack(const char *fn, MPI_Comm comm, const void *inbuf, MPI_Count insize,
                     MPI_Count *position, void *outbuf, MPI_Count outcount, MPI_Datatype datatype,
                     int external)
{
    mpii_dtype *t = NULL;
    MPI_Count bytes = 0;
    int rc = dt_packcheck(fn, comm, outcount, datatype, position, &t, &bytes, external);
    if (rc)
        return rc;
    if ((!inbuf && bytes > 0) || mpii_buf_is_null(outbuf, outcount, t))
        return mpii_err(DT_NOOBJ, MPI_ERR_BUFFER, fn, "%s: NULL with %lld bytes to unpack",
                        inbuf ? "outbuf" : "inbuf", (long long)bytes);
    if (*position < 0 || *position > insize || bytes > insize - *position)
        return mpii_err(DT_NOOBJ, MPI_ERR_TRUNCATE, fn,
                        "%lld bytes wanted at position %lld of a %lld-byte buffer", (long long)bytes,
                        (long long)*position, (long long)insize);
    mpii_dtype_unpack(t, (const char *)inbuf + *position, bytes, outbuf, outcount, external);
    *position += bytes;
    return MPI_SUCCESS;
}

int b_Pack(const char *fn, const void *inbuf, MPI_Count incount, MPI_Datatype datatype,
           void *outbuf, MPI_Count outsize, MPI_Count *position, MPI_Comm comm)
{
    return dt_pack(fn, comm, inbuf, incount, datatype, outbuf, outsize, position, 0);
}
int b_Unpack(const char *fn, const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf,
             MPI_Count outcount, MPI_Datatype datatype, MPI_Comm comm)
{
    return dt_unpack(fn, comm, inbuf, insize, position, outbuf, outcount, datatype, 0);
}

static int dt_pack_size(const char *fn, MPI_Comm comm, MPI_Count count, MPI_Datatype datatype,
                        const void *out, MPI_Count *bytes, int external)
{
    mpii_dtype *t = NULL;
    return dt_packcheck(fn, comm, count, datatype, out, &t, bytes, external);
}
int b_Pack_size(const char *fn, MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm,
                MPI_Count *size)
{
    return dt_pack_size(fn, comm, incount, datatype, size, size, 0);
}

static int dt_datarep(const char *fn, const char *datarep)
{
    if (datarep == NULL || strcmp(datarep, "external32") != 0)
        return mpii_err(DT_NOOBJ, MPI_ERR_UNSUPPORTED_DATAREP, fn,
                        "datarep \"%s\": only \"external32\" is supported", datarep ? datarep : "(null)");
    return MPI_SUCCESS;
}

int b_Pack_external(const char *fn, const char datarep[], const void *inbuf, MPI_Count incount,
                    MPI_Datatype datatype, void *outbuf, MPI_Count outsize, MPI_Count *position)
{
    int rc = dt_datarep(fn, datarep);
    if (rc)
        return rc;
    return dt_pack(fn, DT_NOCOMM, inbuf, incount, datatype, outbuf, outsize, position, 1);
}
int b_Unpack_external(const char *fn, const char datarep[], const void *inbuf, MPI_Count insize,
                      MPI_Count *position, void *outbuf, MPI_Count outcount, MPI_Datatype datatype)
{
    int rc = dt_datarep(fn, datarep);
    if (rc)
        return rc;
    return dt_unpack(fn, DT_NOCOMM, inbuf, insize, position, outbuf, outcount, datatype, 1);
}
int b_Pack_external_size(const char *fn, const char datarep[], MPI_Count incount,
                         MPI_Datatype datatype, MPI_Count *size)
{
    int rc = dt_datarep(fn, datarep);
    if (rc)
        return rc;
    return dt_pack_size(fn, DT_NOCOMM, incount, datatype, size, size, 1);
}
