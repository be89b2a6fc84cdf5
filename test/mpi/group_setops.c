/* Group set operations: union, intersection, difference, with their
 * orders as the standard defines them, and compare (IDENT/SIMILAR/UNEQUAL). */
#include "mtest.h"

int main(int argc, char **argv)
{
    int rank, size, i, n, result, gsize;
    int *ranks, *idx, *out;
    MPI_Group world, evens, low, g;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ranks = mtest_malloc(sizeof(int) * (size_t)size);
    idx = mtest_malloc(sizeof(int) * (size_t)size);
    out = mtest_malloc(sizeof(int) * (size_t)size);
    for (i = 0; i < size; i++)
        idx[i] = i;
    MPI_Comm_group(MPI_COMM_WORLD, &world);

    /* evens in descending order; low = first half ascending. */
    n = 0;
    for (i = size - 1; i >= 0; i--)
        if (i % 2 == 0)
            ranks[n++] = i;
    MPI_Group_incl(world, n, ranks, &evens);
    n = 0;
    for (i = 0; i < (size + 1) / 2; i++)
        ranks[n++] = i;
    MPI_Group_incl(world, n, ranks, &low);

    /* union(evens, low): all of evens (descending), then low's others. */
    MPI_Group_union(evens, low, &g);
    MPI_Group_size(g, &gsize);
    n = 0;
    for (i = size - 1; i >= 0; i--)
        if (i % 2 == 0)
            ranks[n++] = i;
    for (i = 0; i < (size + 1) / 2; i++)
        if (i % 2 == 1)
            ranks[n++] = i;
    mtest_check_int("union size", gsize, n);
    MPI_Group_translate_ranks(g, gsize, idx, world, out);
    for (i = 0; i < gsize && i < n; i++)
        mtest_check_int("union order", out[i], ranks[i]);
    MPI_Group_free(&g);

    /* intersection(evens, low): in evens' order. */
    MPI_Group_intersection(evens, low, &g);
    MPI_Group_size(g, &gsize);
    n = 0;
    for (i = size - 1; i >= 0; i--)
        if (i % 2 == 0 && i < (size + 1) / 2)
            ranks[n++] = i;
    mtest_check_int("intersection size", gsize, n);
    MPI_Group_translate_ranks(g, gsize, idx, world, out);
    for (i = 0; i < gsize && i < n; i++)
        mtest_check_int("intersection order", out[i], ranks[i]);
    MPI_Group_free(&g);

    /* difference(low, evens): low's odd members, ascending. */
    MPI_Group_difference(low, evens, &g);
    MPI_Group_size(g, &gsize);
    n = 0;
    for (i = 0; i < (size + 1) / 2; i++)
        if (i % 2 == 1)
            ranks[n++] = i;
    mtest_check_int("difference size", gsize, n);
    MPI_Group_translate_ranks(g, gsize, idx, world, out);
    for (i = 0; i < gsize && i < n; i++)
        mtest_check_int("difference order", out[i], ranks[i]);
    MPI_Group_free(&g);

    /* Identities. */
    MPI_Group_difference(world, world, &g);
    MPI_Group_compare(g, MPI_GROUP_EMPTY, &result);
    mtest_check_int("world - world is empty", result, MPI_IDENT);
    MPI_Group_free(&g);
    MPI_Group_union(world, MPI_GROUP_EMPTY, &g);
    MPI_Group_compare(g, world, &result);
    mtest_check_int("world + empty", result, MPI_IDENT);
    MPI_Group_free(&g);
    MPI_Group_intersection(world, evens, &g);
    MPI_Group_compare(g, evens, &result);
    /* world's order is ascending, evens' descending. */
    mtest_check_int("world & evens vs evens", result, (size + 1) / 2 > 1 ? MPI_SIMILAR : MPI_IDENT);
    MPI_Group_free(&g);
    MPI_Group_compare(evens, low, &result);
    if (size > 2)
        mtest_check_int("evens vs low", result, MPI_UNEQUAL);

    MPI_Group_free(&evens);
    MPI_Group_free(&low);
    MPI_Group_free(&world);
    free(ranks);
    free(idx);
    free(out);
    return mtest_finalize();
}
