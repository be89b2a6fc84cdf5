/* Helpers of the Fortran glue (fort.h): sentinel storage, statuses, strings,
 * attribute values. */
#include <stdlib.h>
#include <string.h>

#include "binding/fortran/fort.h"

/* ---- the sentinels' storage (COMMON blocks of mpif.h, mpi and mpi_f08) ---------- */

_Alignas(16) MPI_Fint dcfa_f_bottom_;
_Alignas(16) MPI_Fint dcfa_f_in_place_;
_Alignas(16) MPI_Fint dcfa_f_buffer_automatic_;
_Alignas(16) MPI_Fint dcfa_f_status_ignore_[MPI_F_STATUS_SIZE];
_Alignas(16) MPI_Fint dcfa_f_statuses_ignore_[MPI_F_STATUS_SIZE];
_Alignas(16) MPI_Fint dcfa_f_errcodes_ignore_[1];
_Alignas(16) MPI_Fint dcfa_f_unweighted_[1];
_Alignas(16) MPI_Fint dcfa_f_weights_empty_[1];
_Alignas(16) char dcfa_f_argv_null_[1];
_Alignas(16) char dcfa_f_argvs_null_[1];

/* ---- statuses --------------------------------------------------------------------- */

MPI_Status fort_sts_nomem;

MPI_Status *fort_sts_c(MPI_Fint *f, int n, MPI_Status *stack)
{
    if (f == dcfa_f_statuses_ignore_ || f == dcfa_f_status_ignore_)
        return MPI_STATUSES_IGNORE;
    if (((uintptr_t)f & (_Alignof(MPI_Status) - 1)) == 0)
        return (MPI_Status *)(uintptr_t)f;
    if (n <= FORT_STS_STACK)
        return stack;
    MPI_Status *c = malloc((size_t)n * sizeof *c);
    return c != NULL ? c : FORT_STS_NOMEM;
}

void fort_sts_f(MPI_Fint *f, int n, const MPI_Status *c)
{
    if (c != NULL && c != FORT_STS_NOMEM && c != (MPI_Status *)(uintptr_t)f && n > 0)
        memcpy(f, c, (size_t)n * sizeof *c);
}

void fort_sts_free(MPI_Status *c, MPI_Status *stack, MPI_Fint *f)
{
    if (c != NULL && c != FORT_STS_NOMEM && c != stack && c != (MPI_Status *)(uintptr_t)f)
        free(c);
}

/* ---- strings ------------------------------------------------------------------------ */

char *fort_str_in(const char *s, size_t len, char *stack, int trim)
{
    if (s == NULL)
        len = 0;
    while (len > 0 && s[len - 1] == ' ')
        len--;
    if (trim == FORT_TRIM_BOTH) {
        while (len > 0 && *s == ' ') {
            s++;
            len--;
        }
    }
    char *c = len < FORT_STR_STACK ? stack : malloc(len + 1);
    if (c == NULL)
        return NULL;
    if (len > 0)
        memcpy(c, s, len);
    c[len] = '\0';
    return c;
}

void fort_str_free(char *c, const char *stack)
{
    if (c != stack)
        free(c);
}

void fort_str_out(char *f, size_t flen, const char *c)
{
    size_t n = strlen(c);
    if (n > flen)
        n = flen;
    memcpy(f, c, n);
    memset(f + n, ' ', flen - n);
}

/* ---- LOGICAL arrays, MPI-1 displacements, attribute values --------------------------- */

void fort_indices(MPI_Fint *a, int n)
{
    for (int i = 0; i < n; i++)
        a[i]++;
}

void fort_logicals(MPI_Fint *a, int n)
{
    for (int i = 0; i < n; i++)
        a[i] = a[i] != 0;
}

MPI_Aint *fort_aints(const MPI_Fint *a, int n)
{
    if (n <= 0)
        return NULL;
    MPI_Aint *c = malloc((size_t)n * sizeof *c);
    if (c == NULL)
        return NULL;
    for (int i = 0; i < n; i++)
        c[i] = a[i];
    return c;
}

MPI_Aint fort_attr_out(int kind, int keyval, void *v)
{
    if (v == NULL)
        return 0;
    if (kind == FORT_KIND_COMM && keyval >= MPI_TAG_UB && keyval <= MPI_APPNUM)
        return *(int *)v;
    if (kind == FORT_KIND_WIN) {
        switch (keyval) {
        case MPI_WIN_BASE:
            return (MPI_Aint)v;
        case MPI_WIN_SIZE:
            return *(MPI_Aint *)v;
        case MPI_WIN_DISP_UNIT:
        case MPI_WIN_CREATE_FLAVOR:
        case MPI_WIN_MODEL:
            return *(int *)v;
        }
    }
    return (MPI_Aint)v;
}

void dcfa_f_sync_reg(void *desc)
{
    /* the call itself is the point: the buffer escapes into an unknown function */
    __asm__ __volatile__("" : : "r"(desc) : "memory");
}
