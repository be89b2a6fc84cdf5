/* The C side of the Fortran bindings (libmpifort): helpers the generated glue
 * (build/gen/fortran/f77.c and f08.c, tools/gen_fortran.py) calls to turn
 * Fortran arguments into C ones. docs/fortran.md describes the conventions.
 *
 * Handles are ints on both sides (docs/handles.md), so they pass unchanged;
 * what needs work is the sentinels (MPI_BOTTOM, MPI_STATUS_IGNORE ... are
 * COMMON blocks in Fortran, recognised here by their address), statuses
 * (6 INTEGERs, maybe not 8-byte aligned), strings (blank padded, no NUL),
 * LOGICALs (gfortran: 1 and 0) and the attribute values. */
#ifndef DCFA_BINDING_FORT_H
#define DCFA_BINDING_FORT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mpi.h"

/* The storage of the Fortran sentinels: COMMON /dcfa_f_bottom/ MPI_BOTTOM ...
 * (gfortran names a COMMON block's symbol as the block, lower case, with one
 * underscore). Defined in fort_util.c. */
extern MPI_Fint dcfa_f_bottom_;
extern MPI_Fint dcfa_f_in_place_;
extern MPI_Fint dcfa_f_buffer_automatic_;
extern MPI_Fint dcfa_f_status_ignore_[MPI_F_STATUS_SIZE];
extern MPI_Fint dcfa_f_statuses_ignore_[MPI_F_STATUS_SIZE];
extern MPI_Fint dcfa_f_errcodes_ignore_[1];
extern MPI_Fint dcfa_f_unweighted_[1];
extern MPI_Fint dcfa_f_weights_empty_[1];
extern char dcfa_f_argv_null_[1];
extern char dcfa_f_argvs_null_[1];

/* handle kinds of docs/handles.md, for fort_attr_out */
#define FORT_KIND_COMM  1
#define FORT_KIND_DTYPE 3
#define FORT_KIND_WIN   8

/* a choice buffer: the Fortran sentinels become the C ones */
static inline void *fort_buf(const void *p)
{
    if (__builtin_expect(p == &dcfa_f_bottom_, 0))
        return MPI_BOTTOM;
    if (__builtin_expect(p == &dcfa_f_in_place_, 0))
        return MPI_IN_PLACE;
    if (__builtin_expect(p == &dcfa_f_buffer_automatic_, 0))
        return MPI_BUFFER_AUTOMATIC;
    return (void *)p;
}

static inline int *fort_weights(MPI_Fint *w)
{
    if (w == dcfa_f_unweighted_)
        return MPI_UNWEIGHTED;
    if (w == dcfa_f_weights_empty_)
        return MPI_WEIGHTS_EMPTY;
    return w;
}

static inline int *fort_errcodes(MPI_Fint *e)
{
    return e == dcfa_f_errcodes_ignore_ ? MPI_ERRCODES_IGNORE : e;
}

/* One status: INTEGER(MPI_STATUS_SIZE) holds the bytes of an MPI_Status, but
 * a Fortran array is only 4-byte aligned; then the call uses tmp, copied in
 * before (for in and inout statuses) and back after. */
static inline MPI_Status *fort_st_c(const MPI_Fint *f, MPI_Status *tmp)
{
    if (f == dcfa_f_status_ignore_ || f == dcfa_f_statuses_ignore_)
        return MPI_STATUS_IGNORE;
    if (((uintptr_t)f & (_Alignof(MPI_Status) - 1)) == 0)
        return (MPI_Status *)(uintptr_t)f;
    memcpy(tmp, f, sizeof *tmp);
    return tmp;
}

static inline void fort_st_f(MPI_Fint *f, const MPI_Status *c, const MPI_Status *tmp)
{
    if (c == tmp)
        memcpy(f, tmp, sizeof *tmp);
}

/* mpi_f08's TYPE(MPI_Status) has the C layout and alignment */
static inline MPI_Status *fort_st08(const MPI_Fint *f)
{
    if (f == dcfa_f_status_ignore_ || f == dcfa_f_statuses_ignore_)
        return MPI_STATUS_IGNORE;
    return (MPI_Status *)(uintptr_t)f;
}

static inline MPI_Status *fort_sts08(MPI_Fint *f)
{
    return f == dcfa_f_statuses_ignore_ ? MPI_STATUSES_IGNORE : (MPI_Status *)(uintptr_t)f;
}

/* Arrays of statuses: as one status; up to FORT_STS_STACK of them misaligned
 * go through the caller's stack array, more through malloc (FORT_STS_NOMEM
 * when that fails). */
#define FORT_STS_STACK 8
extern MPI_Status fort_sts_nomem;
#define FORT_STS_NOMEM (&fort_sts_nomem)
MPI_Status *fort_sts_c(MPI_Fint *f, int n, MPI_Status *stack);
void fort_sts_f(MPI_Fint *f, int n, const MPI_Status *c);
void fort_sts_free(MPI_Status *c, MPI_Status *stack, MPI_Fint *f);

/* Input strings: the Fortran text without trailing (and, FORT_TRIM_BOTH,
 * leading) blanks, NUL-terminated, in stack (FORT_STR_STACK bytes) or a
 * malloc'd copy; NULL when that fails. fort_str_free frees the latter. */
#define FORT_STR_STACK 256
enum { FORT_TRIM_TRAILING, FORT_TRIM_BOTH };
char *fort_str_in(const char *s, size_t len, char *stack, int trim);
void fort_str_free(char *c, const char *stack);
/* Output strings: c copied into the Fortran buffer f of flen characters,
 * blank padded (cut at flen). */
void fort_str_out(char *f, size_t flen, const char *c);

/* the indices MPI_WAITSOME ... return: 1-based in Fortran (n may be MPI_UNDEFINED) */
void fort_indices(MPI_Fint *a, int n);
/* LOGICAL arrays the library filled: gfortran's .TRUE. is 1 */
void fort_logicals(MPI_Fint *a, int n);
/* INTEGER displacements of the MPI-1 routines (MPI_TYPE_STRUCT ...) as MPI_Aint */
MPI_Aint *fort_aints(const MPI_Fint *a, int n);

/* The value MPI_X_GET_ATTR gives Fortran: the stored value, or for the
 * predefined attributes the value C gets a pointer to. */
MPI_Aint fort_attr_out(int kind, int keyval, void *v);

/* MPI_F_SYNC_REG: the compiler must assume the buffer is read and written */
void dcfa_f_sync_reg(void *desc);

#endif
