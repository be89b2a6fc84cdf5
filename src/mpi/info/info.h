/* Info objects (src/mpi/info): ordered (key, value) string pairs. Usable
 * before MPI_Init. Other chapters read hints with mpii_info_lookup. */
#ifndef DCFA_MPI_INFO_H
#define DCFA_MPI_INFO_H

#include "mpi/mpii.h"

int mpii_info_exists(MPI_Info info); /* live info, MPI_INFO_ENV included */
MPI_Info mpii_info_new(void);
MPI_Info mpii_info_dup(MPI_Info info); /* MPI_INFO_NULL stays MPI_INFO_NULL */
void mpii_info_free(MPI_Info info);
/* key and value are checked by the caller (lengths); replaces an existing value */
void mpii_info_set(MPI_Info info, const char *key, const char *value);
const char *mpii_info_lookup(MPI_Info info, const char *key); /* NULL if absent */
int mpii_info_delete(MPI_Info info, const char *key);         /* UTIL_ENOENT if absent */
int mpii_info_nkeys(MPI_Info info);
const char *mpii_info_nthkey(MPI_Info info, int n); /* NULL if out of range */
/* the MPI_INFO_ENV contents, with command/argv from (argc, argv) when argv != NULL */
MPI_Info mpii_info_env(int argc, char **argv);

#endif
