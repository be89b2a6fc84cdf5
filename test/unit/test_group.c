/* Unit test of the group set operations (src/mpi/group) and the success
 * paths of the MPI_Group_* bindings, without MPI_Init: groups are plain
 * lists of process ids. The calling process pretends to be process 3. */
#include "mpi/group/group.h"

#include <stdio.h>
#include <string.h>

#include "ut_check.h"

/* g holds exactly the process ids want[0..n-1], in that order */
static void expect(const char *what, const mpii_group *g, int n, const int *want)
{
    int ok = g->size == n && (n == 0 || memcmp(g->lpids, want, (size_t)n * sizeof(int)) == 0);
    CHECK(ok, "%s: got size %d, want %d", what, g->size, n);
    if (!ok) {
        fprintf(stderr, "  got:");
        for (int i = 0; i < g->size; i++)
            fprintf(stderr, " %d", g->lpids[i]);
        fprintf(stderr, "\n");
    }
}

#define EXPECT(what, g, ...) \
    expect(what, g, (int)(sizeof((int[]){__VA_ARGS__}) / sizeof(int)), (int[]){__VA_ARGS__})

static void test_setops(void)
{
    int la[] = {0, 1, 2, 3, 4, 5, 6, 7}, lb[] = {6, 4, 2, 0, 8, 10}, lc[] = {20, 21};
    mpii_group *a = mpii_group_create(8, la), *b = mpii_group_create(6, lb),
               *c = mpii_group_create(2, lc);
    CHECK(a->rank == 3, "rank in a: %d", a->rank);
    CHECK(b->rank == MPI_UNDEFINED, "rank in b: %d", b->rank);
    CHECK(mpii_group_get(a->handle) == a, "lookup of a");

    mpii_group *u = mpii_group_union(a, b);
    EXPECT("union(a,b)", u, 0, 1, 2, 3, 4, 5, 6, 7, 8, 10);
    mpii_group *u2 = mpii_group_union(b, a);
    EXPECT("union(b,a)", u2, 6, 4, 2, 0, 8, 10, 1, 3, 5, 7);
    mpii_group *i1 = mpii_group_intersection(a, b);
    EXPECT("intersection(a,b)", i1, 0, 2, 4, 6);
    mpii_group *i2 = mpii_group_intersection(b, a);
    EXPECT("intersection(b,a)", i2, 6, 4, 2, 0);
    mpii_group *d = mpii_group_difference(a, b);
    EXPECT("difference(a,b)", d, 1, 3, 5, 7);
    CHECK(d->rank == 1, "rank in difference: %d", d->rank);
    mpii_group *e = mpii_group_intersection(a, c);
    CHECK(e->handle == MPI_GROUP_EMPTY && e->size == 0, "empty intersection is MPI_GROUP_EMPTY");
    mpii_group *e2 = mpii_group_difference(c, c);
    CHECK(e2->handle == MPI_GROUP_EMPTY, "c - c is MPI_GROUP_EMPTY");

    mpii_group *in = mpii_group_incl(a, 2, (int[]){3, 1});
    EXPECT("incl(a,{3,1})", in, 3, 1);
    CHECK(in->rank == 0, "rank in incl: %d", in->rank);
    mpii_group *ex = mpii_group_excl(a, 2, (int[]){0, 7});
    EXPECT("excl(a,{0,7})", ex, 1, 2, 3, 4, 5, 6);
    mpii_group *ri = mpii_group_range_incl(a, 2, (const int[][3]){{0, 6, 2}, {7, 1, -3}});
    EXPECT("range_incl", ri, 0, 2, 4, 6, 7, 4, 1);
    mpii_group *re = mpii_group_range_excl(a, 1, (const int[][3]){{1, 7, 2}});
    EXPECT("range_excl", re, 0, 2, 4, 6);
    mpii_group *r1 = mpii_group_range_incl(a, 1, (const int[][3]){{5, 5, -1}});
    EXPECT("range_incl single", r1, 5);

    int out[4];
    mpii_group_translate(b, 4, (int[]){0, 1, 4, MPI_PROC_NULL}, a, out);
    CHECK(out[0] == 6 && out[1] == 4 && out[2] == MPI_UNDEFINED && out[3] == MPI_PROC_NULL,
          "translate b->a: %d %d %d %d", out[0], out[1], out[2], out[3]);
    mpii_group_translate(a, 2, (int[]){1, 6}, b, out);
    CHECK(out[0] == MPI_UNDEFINED && out[1] == 0, "translate a->b: %d %d", out[0], out[1]);

    CHECK(mpii_group_compare(a, a) == MPI_IDENT, "compare(a,a)");
    CHECK(mpii_group_compare(i1, re) == MPI_IDENT, "compare of equal lists");
    CHECK(mpii_group_compare(i1, i2) == MPI_SIMILAR, "compare of permuted lists");
    CHECK(mpii_group_compare(a, b) == MPI_UNEQUAL, "compare(a,b)");
    CHECK(mpii_group_compare(e, e2) == MPI_IDENT, "compare of empties");
    CHECK(mpii_group_compare(a, u) == MPI_UNEQUAL, "compare of different sizes");
    CHECK(mpii_group_is_subset(i1, a) && !mpii_group_is_subset(b, a) && mpii_group_is_subset(e, c),
          "subset");
    CHECK(mpii_group_rank_of(b, 8) == 4 && mpii_group_rank_of(b, 3) == MPI_UNDEFINED, "rank_of");

    int ha = a->handle;
    mpii_group *all[] = {a, b, c, u, u2, i1, i2, d, e, e2, in, ex, ri, re, r1};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++)
        mpii_group_release(all[k]);
    CHECK(mpii_group_get(ha) == NULL, "a released");
    CHECK(mpii_group_get(MPI_GROUP_EMPTY) != NULL, "MPI_GROUP_EMPTY survives releases");
}

/* refcounts: a group referenced twice survives one release */
static void test_refs(void)
{
    mpii_group *g = mpii_group_create(3, (int[]){9, 3, 1});
    CHECK(g->rank == 1, "rank %d", g->rank);
    mpii_group_ref(g);
    mpii_group_release(g);
    CHECK(mpii_group_get(g->handle) == g, "alive after one release");
    int h = g->handle;
    mpii_group_release(g);
    CHECK(mpii_group_get(h) == NULL, "gone after the second");
    CHECK(mpii_group_get(MPI_GROUP_NULL) == NULL, "MPI_GROUP_NULL is not a group");
    CHECK(mpii_group_get(MPI_COMM_WORLD) == NULL, "a communicator handle is not a group");
}

/* the bindings on valid arguments */
static void test_bindings(void)
{
    mpii_group *a = mpii_group_create(5, (int[]){0, 1, 2, 3, 4});
    MPI_Group ga = a->handle, g1, g2, g3;
    int n, r, res;
    CHECK(PMPI_Group_size(ga, &n) == MPI_SUCCESS && n == 5, "Group_size");
    CHECK(PMPI_Group_rank(ga, &r) == MPI_SUCCESS && r == 3, "Group_rank");
    CHECK(PMPI_Group_incl(ga, 3, (int[]){0, 2, 4}, &g1) == MPI_SUCCESS, "Group_incl");
    int ranges[1][3] = {{4, 0, -2}};
    CHECK(PMPI_Group_range_incl(ga, 1, ranges, &g2) == MPI_SUCCESS, "Group_range_incl");
    CHECK(PMPI_Group_compare(g1, g2, &res) == MPI_SUCCESS && res == MPI_SIMILAR,
          "Group_compare: %d", res);
    CHECK(PMPI_Group_difference(g1, g2, &g3) == MPI_SUCCESS && g3 == MPI_GROUP_EMPTY,
          "Group_difference gives MPI_GROUP_EMPTY");
    int tr[3];
    CHECK(PMPI_Group_translate_ranks(g1, 3, (int[]){0, 1, 2}, ga, tr) == MPI_SUCCESS &&
              tr[0] == 0 && tr[1] == 2 && tr[2] == 4,
          "Group_translate_ranks");
    CHECK(PMPI_Group_free(&g1) == MPI_SUCCESS && g1 == MPI_GROUP_NULL, "Group_free");
    CHECK(PMPI_Group_free(&g2) == MPI_SUCCESS && PMPI_Group_free(&g3) == MPI_SUCCESS, "frees");
    CHECK(PMPI_Group_free(&ga) == MPI_SUCCESS, "free a");
}

int main(void)
{
    mpii_st.world_rank = 3;
    test_setops();
    test_refs();
    test_bindings();
    mpii_group_finalize();
    if (errors)
        fprintf(stderr, "test_group: %d failures\n", errors);
    else
        printf("test_group: ok\n");
    return errors ? 1 : 0;
}
