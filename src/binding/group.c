/* Group bindings: argument checks, handle <-> object, then src/mpi/group. */
#include "mpi/mpii.h"
#include "mpi/group/group.h"
#include "binding/impl.h"

#include <stdlib.h>

/* errors on groups have no object of their own: the default handler applies */
#define GRP_ERR(cls, fn, ...) mpii_err(MPII_OBJ_NONE, 0, cls, fn, __VA_ARGS__)

static int grp_lookup(const char *fn, const char *arg, MPI_Group h, mpii_group **out)
{
    *out = mpii_group_get(h);
    if (!*out)
        return GRP_ERR(MPI_ERR_GROUP, fn, "%s: invalid group%s", arg,
                       h == MPI_GROUP_NULL ? " (MPI_GROUP_NULL)" : "");
    return MPI_SUCCESS;
}

static int grp_out(const char *fn, const void *p, const char *arg)
{
    if (!p)
        return GRP_ERR(MPI_ERR_ARG, fn, "%s: NULL pointer", arg);
    return MPI_SUCCESS;
}

static int grp_result(mpii_group *g, MPI_Group *newgroup)
{
    *newgroup = g->handle;
    return MPI_SUCCESS;
}

int b_Group_size(MPI_Group group, int *size)
{
    mpii_group *g;
    int rc = grp_lookup("MPI_Group_size", "group", group, &g);
    if (rc == MPI_SUCCESS)
        rc = grp_out("MPI_Group_size", size, "size");
    if (rc != MPI_SUCCESS)
        return rc;
    *size = g->size;
    return MPI_SUCCESS;
}

int b_Group_rank(MPI_Group group, int *rank)
{
    mpii_group *g;
    int rc = grp_lookup("MPI_Group_rank", "group", group, &g);
    if (rc == MPI_SUCCESS)
        rc = grp_out("MPI_Group_rank", rank, "rank");
    if (rc != MPI_SUCCESS)
        return rc;
    *rank = g->rank;
    return MPI_SUCCESS;
}

int b_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                            int ranks2[])
{
    static const char fn[] = "MPI_Group_translate_ranks";
    mpii_group *a, *b;
    int rc = grp_lookup(fn, "group1", group1, &a);
    if (rc == MPI_SUCCESS)
        rc = grp_lookup(fn, "group2", group2, &b);
    if (rc != MPI_SUCCESS)
        return rc;
    if (n < 0)
        return GRP_ERR(MPI_ERR_ARG, fn, "n=%d is negative", n);
    if (n > 0 && (!ranks1 || !ranks2))
        return GRP_ERR(MPI_ERR_ARG, fn, "%s: NULL pointer", ranks1 ? "ranks2" : "ranks1");
    for (int i = 0; i < n; i++)
        if (ranks1[i] != MPI_PROC_NULL && (ranks1[i] < 0 || ranks1[i] >= a->size))
            return GRP_ERR(MPI_ERR_RANK, fn, "ranks1[%d]=%d is not a rank of group1 (size %d)", i,
                           ranks1[i], a->size);
    mpii_group_translate(a, n, ranks1, b, ranks2);
    return MPI_SUCCESS;
}

int b_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
    static const char fn[] = "MPI_Group_compare";
    mpii_group *a, *b;
    int rc = grp_lookup(fn, "group1", group1, &a);
    if (rc == MPI_SUCCESS)
        rc = grp_lookup(fn, "group2", group2, &b);
    if (rc == MPI_SUCCESS)
        rc = grp_out(fn, result, "result");
    if (rc != MPI_SUCCESS)
        return rc;
    *result = mpii_group_compare(a, b);
    return MPI_SUCCESS;
}

enum { GRP_UNION, GRP_INTERSECTION, GRP_DIFFERENCE };

static int grp_setop(const char *fn, int op, MPI_Group group1, MPI_Group group2,
                     MPI_Group *newgroup)
{
    mpii_group *a, *b;
    int rc = grp_lookup(fn, "group1", group1, &a);
    if (rc == MPI_SUCCESS)
        rc = grp_lookup(fn, "group2", group2, &b);
    if (rc == MPI_SUCCESS)
        rc = grp_out(fn, newgroup, "newgroup");
    if (rc != MPI_SUCCESS)
        return rc;
    if (op == GRP_UNION)
        return grp_result(mpii_group_union(a, b), newgroup);
    if (op == GRP_INTERSECTION)
        return grp_result(mpii_group_intersection(a, b), newgroup);
    return grp_result(mpii_group_difference(a, b), newgroup);
}

int b_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return grp_setop("MPI_Group_union", GRP_UNION, group1, group2, newgroup);
}
int b_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return grp_setop("MPI_Group_intersection", GRP_INTERSECTION, group1, group2, newgroup);
}
int b_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return grp_setop("MPI_Group_difference", GRP_DIFFERENCE, group1, group2, newgroup);
}

/* n distinct valid ranks of g */
static int grp_check_ranks(const char *fn, const mpii_group *g, int n, const int *ranks)
{
    if (n < 0 || n > g->size)
        return GRP_ERR(MPI_ERR_ARG, fn, "n=%d is outside 0..%d (the group size)", n, g->size);
    if (n > 0 && !ranks)
        return GRP_ERR(MPI_ERR_ARG, fn, "ranks: NULL pointer");
    char *seen = util_calloc((size_t)g->size + 1, 1);
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
        if (ranks[i] < 0 || ranks[i] >= g->size)
            rc = GRP_ERR(MPI_ERR_RANK, fn, "ranks[%d]=%d is not a rank of the group (size %d)", i,
                         ranks[i], g->size);
        else if (seen[ranks[i]]++)
            rc = GRP_ERR(MPI_ERR_RANK, fn, "ranks[%d]=%d appears more than once", i, ranks[i]);
    }
    free(seen);
    return rc;
}

static int grp_inclexcl(const char *fn, int excl, MPI_Group group, int n, const int ranks[],
                        MPI_Group *newgroup)
{
    mpii_group *g;
    int rc = grp_lookup(fn, "group", group, &g);
    if (rc == MPI_SUCCESS)
        rc = grp_out(fn, newgroup, "newgroup");
    if (rc == MPI_SUCCESS)
        rc = grp_check_ranks(fn, g, n, ranks);
    if (rc != MPI_SUCCESS)
        return rc;
    return grp_result(excl ? mpii_group_excl(g, n, ranks) : mpii_group_incl(g, n, ranks), newgroup);
}

int b_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    return grp_inclexcl("MPI_Group_incl", 0, group, n, ranks, newgroup);
}
int b_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    return grp_inclexcl("MPI_Group_excl", 1, group, n, ranks, newgroup);
}

/* every triplet valid and the ranks they name distinct */
static int grp_check_ranges(const char *fn, const mpii_group *g, int n, const int (*ranges)[3])
{
    if (n < 0)
        return GRP_ERR(MPI_ERR_ARG, fn, "n=%d is negative", n);
    if (n > 0 && !ranges)
        return GRP_ERR(MPI_ERR_ARG, fn, "ranges: NULL pointer");
    long total = 0;
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (first < 0 || first >= g->size || last < 0 || last >= g->size)
            return GRP_ERR(MPI_ERR_RANK, fn,
                           "ranges[%d] = (%d, %d, %d) names a rank outside the group (size %d)", i,
                           first, last, stride, g->size);
        if (stride == 0)
            return GRP_ERR(MPI_ERR_ARG, fn, "ranges[%d]: stride is 0", i);
        if ((stride > 0 && first > last) || (stride < 0 && first < last))
            return GRP_ERR(MPI_ERR_ARG, fn, "ranges[%d] = (%d, %d, %d): stride goes away from last",
                           i, first, last, stride);
        total += ((long)last - first) / stride + 1;
        if (total > g->size)
            return GRP_ERR(MPI_ERR_RANK, fn, "ranges name more ranks than the group has (%d)",
                           g->size);
    }
    int cnt;
    int *ranks = mpii_group_ranges_expand(n, ranges, &cnt);
    int rc = grp_check_ranks(fn, g, cnt, ranks);
    free(ranks);
    return rc;
}

static int grp_range(const char *fn, int excl, MPI_Group group, int n, int ranges[][3],
                     MPI_Group *newgroup)
{
    mpii_group *g;
    int rc = grp_lookup(fn, "group", group, &g);
    if (rc == MPI_SUCCESS)
        rc = grp_out(fn, newgroup, "newgroup");
    if (rc == MPI_SUCCESS)
        rc = grp_check_ranges(fn, g, n, (const int(*)[3])ranges);
    if (rc != MPI_SUCCESS)
        return rc;
    const int(*r)[3] = (const int(*)[3])ranges;
    return grp_result(excl ? mpii_group_range_excl(g, n, r) : mpii_group_range_incl(g, n, r),
                      newgroup);
}

int b_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return grp_range("MPI_Group_range_incl", 0, group, n, ranges, newgroup);
}
int b_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return grp_range("MPI_Group_range_excl", 1, group, n, ranges, newgroup);
}

int b_Group_free(MPI_Group *group)
{
    static const char fn[] = "MPI_Group_free";
    int rc = grp_out(fn, group, "group");
    if (rc != MPI_SUCCESS)
        return rc;
    mpii_group *g;
    rc = grp_lookup(fn, "group", *group, &g);
    if (rc != MPI_SUCCESS)
        return rc;
    mpii_group_release(g);
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}

int b_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    static const char fn[] = "MPI_Comm_group";
    mpii_comm *c = mpii_comm_get(comm);
    if (!c)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_COMM, fn, "comm: invalid communicator");
    if (!group)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "group: NULL pointer");
    mpii_group_ref(c->group);
    *group = c->group->handle;
    return MPI_SUCCESS;
}

int b_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    static const char fn[] = "MPI_Comm_remote_group";
    mpii_comm *c = mpii_comm_get(comm);
    if (!c)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_COMM, fn, "comm: invalid communicator");
    if (!c->is_inter)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_COMM, fn, "comm: not an inter-communicator");
    if (!group)
        return mpii_err(MPII_OBJ_COMM, comm, MPI_ERR_ARG, fn, "group: NULL pointer");
    mpii_group_ref(c->remote);
    *group = c->remote->handle;
    return MPI_SUCCESS;
}
