/* Process groups (src/mpi/group): the set operations behind MPI_Group_*,
 * beyond the object calls of mpii.h. Arguments are checked by the bindings;
 * every constructor returns a new reference (MPI_GROUP_EMPTY's object for an
 * empty result) that the caller releases. */
#ifndef DCFA_MPI_GROUP_H
#define DCFA_MPI_GROUP_H

#include "mpi/mpii.h"

/* the process id of the calling process (its index in the job's process table) */
int mpii_group_self_lpid(void);
mpii_group *mpii_group_empty(void); /* new reference to MPI_GROUP_EMPTY's object */

mpii_group *mpii_group_union(const mpii_group *a, const mpii_group *b);
mpii_group *mpii_group_intersection(const mpii_group *a, const mpii_group *b);
mpii_group *mpii_group_difference(const mpii_group *a, const mpii_group *b);
/* ranks: n distinct valid ranks of g */
mpii_group *mpii_group_incl(const mpii_group *g, int n, const int *ranks);
mpii_group *mpii_group_excl(const mpii_group *g, int n, const int *ranks);
/* ranges: n valid (first, last, stride) triplets; excl requires the ranks distinct */
mpii_group *mpii_group_range_incl(const mpii_group *g, int n, const int (*ranges)[3]);
mpii_group *mpii_group_range_excl(const mpii_group *g, int n, const int (*ranges)[3]);
/* out[i] = rank in b of rank in[i] of a, MPI_UNDEFINED if absent; MPI_PROC_NULL is kept */
void mpii_group_translate(const mpii_group *a, int n, const int *in, const mpii_group *b, int *out);
int mpii_group_compare(const mpii_group *a, const mpii_group *b); /* MPI_IDENT/SIMILAR/UNEQUAL */
/* rank of process lpid in g, MPI_UNDEFINED if absent */
int mpii_group_rank_of(const mpii_group *g, int lpid);
/* 1 if every member of sub is in g */
int mpii_group_is_subset(const mpii_group *sub, const mpii_group *g);
/* ranks of a (first, last, stride) triplet list, in order; *count set; NULL if none */
int *mpii_group_ranges_expand(int n, const int (*ranges)[3], int *count);
void mpii_group_finalize(void);

#endif
