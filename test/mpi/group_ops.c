/* Groups: size/rank, incl/excl, range_incl/range_excl, translate_ranks,
 * compare, MPI_GROUP_EMPTY, free. */
#include "mtest.h"

int main(int argc, char **argv)
{
    int rank, size, i, n, r, result, gsize, grank;
    int *ranks, *out;
    int range[1][3];
    MPI_Group world, g, g2, rev;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ranks = mtest_malloc(sizeof(int) * (size_t)size);
    out = mtest_malloc(sizeof(int) * (size_t)size);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_size(world, &gsize);
    MPI_Group_rank(world, &grank);
    mtest_check_int("world group size", gsize, size);
    mtest_check_int("world group rank", grank, rank);

    /* Reversed order with incl. */
    for (i = 0; i < size; i++)
        ranks[i] = size - 1 - i;
    MPI_Group_incl(world, size, ranks, &rev);
    MPI_Group_rank(rev, &grank);
    mtest_check_int("rank in reversed group", grank, size - 1 - rank);
    MPI_Group_compare(world, rev, &result);
    mtest_check_int("compare(world, reversed)", result, size > 1 ? MPI_SIMILAR : MPI_IDENT);
    for (i = 0; i < size; i++)
        ranks[i] = i;
    MPI_Group_translate_ranks(rev, size, ranks, world, out);
    for (i = 0; i < size; i++)
        mtest_check_int("translate reversed -> world", out[i], size - 1 - i);

    /* excl of rank 0: others shift down, rank 0 is not a member. */
    r = 0;
    MPI_Group_excl(world, 1, &r, &g);
    MPI_Group_size(g, &gsize);
    mtest_check_int("excl size", gsize, size - 1);
    MPI_Group_rank(g, &grank);
    mtest_check_int("excl rank", grank, rank == 0 ? MPI_UNDEFINED : rank - 1);
    r = 0;
    MPI_Group_translate_ranks(world, 1, &r, g, out);
    mtest_check_int("translate excluded rank", out[0], MPI_UNDEFINED);
    r = MPI_PROC_NULL;
    MPI_Group_translate_ranks(world, 1, &r, rev, out);
    mtest_check_int("translate MPI_PROC_NULL", out[0], MPI_PROC_NULL);
    MPI_Group_free(&g);
    mtest_check(g == MPI_GROUP_NULL, "Group_free did not set MPI_GROUP_NULL");

    /* range_incl: even ranks 0, 2, 4, ... */
    range[0][0] = 0;
    range[0][1] = size - 1;
    range[0][2] = 2;
    MPI_Group_range_incl(world, 1, range, &g);
    MPI_Group_size(g, &gsize);
    mtest_check_int("range_incl size", gsize, (size + 1) / 2);
    MPI_Group_rank(g, &grank);
    mtest_check_int("range_incl rank", grank, rank % 2 ? MPI_UNDEFINED : rank / 2);
    /* range_excl of the same range leaves the odd ranks. */
    MPI_Group_range_excl(world, 1, range, &g2);
    MPI_Group_size(g2, &gsize);
    mtest_check_int("range_excl size", gsize, size / 2);
    MPI_Group_rank(g2, &grank);
    mtest_check_int("range_excl rank", grank, rank % 2 ? rank / 2 : MPI_UNDEFINED);
    MPI_Group_free(&g2);
    /* A descending range. */
    range[0][0] = size - 1;
    range[0][1] = 0;
    range[0][2] = -1;
    MPI_Group_range_incl(world, 1, range, &g2);
    MPI_Group_compare(g2, rev, &result);
    mtest_check_int("descending range vs reversed incl", result, MPI_IDENT);
    MPI_Group_free(&g2);
    MPI_Group_free(&g);

    /* Empty groups. */
    MPI_Group_size(MPI_GROUP_EMPTY, &gsize);
    mtest_check_int("GROUP_EMPTY size", gsize, 0);
    MPI_Group_rank(MPI_GROUP_EMPTY, &grank);
    mtest_check_int("GROUP_EMPTY rank", grank, MPI_UNDEFINED);
    MPI_Group_incl(world, 0, ranks, &g);
    MPI_Group_compare(g, MPI_GROUP_EMPTY, &result);
    mtest_check_int("incl of nothing vs GROUP_EMPTY", result, MPI_IDENT);
    MPI_Group_free(&g);
    n = size;
    for (i = 0; i < n; i++)
        ranks[i] = i;
    MPI_Group_excl(world, n, ranks, &g);
    MPI_Group_size(g, &gsize);
    mtest_check_int("excl of everything size", gsize, 0);
    MPI_Group_free(&g);

    MPI_Group_free(&rev);
    MPI_Group_free(&world);
    free(ranks);
    free(out);
    return mtest_finalize();
}
