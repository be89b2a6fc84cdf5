/*
 * MPI_Type_create_f90_integer/real/complex: the size chosen for a precision
 * and range, one handle per (p, r), the envelope (MPI_COMBINER_F90_*, with p
 * and r as its integers), no MPI_Type_free, use in a message, and errors for
 * a precision or range no type has.
 */
#include "mtest.h"

static void check_env(const char *what, MPI_Datatype t, int combiner, int ni, int p, int r)
{
    int nints, naddr, ntypes, comb, ints[2] = {-9, -9};
    MPI_Aint a[1];
    MPI_Datatype d[1];

    MPI_Type_get_envelope(t, &nints, &naddr, &ntypes, &comb);
    mtest_check(comb == combiner && nints == ni && naddr == 0 && ntypes == 0,
                "%s: envelope combiner %d ni %d na %d nd %d", what, comb, nints, naddr, ntypes);
    MPI_Type_get_contents(t, 2, 0, 0, ints, a, d);
    if (ni == 1)
        mtest_check(ints[0] == r, "%s: contents r=%d, expected %d", what, ints[0], r);
    else
        mtest_check(ints[0] == p && ints[1] == r, "%s: contents p=%d r=%d, expected %d %d", what,
                    ints[0], ints[1], p, r);
}

static void check_size(const char *what, MPI_Datatype t, int want)
{
    int size = -1;
    MPI_Type_size(t, &size);
    mtest_check(size == want, "%s: size %d, expected %d", what, size, want);
}

int main(int argc, char **argv)
{
    MPI_Datatype t, u;
    int rank, size;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    static const int ir[][2] = {{1, 1}, {2, 1}, {3, 2}, {4, 2}, {5, 4}, {9, 4}, {10, 8}, {18, 8}};
    for (size_t i = 0; i < sizeof ir / sizeof ir[0]; i++) {
        mtest_check_rc("MPI_Type_create_f90_integer", MPI_Type_create_f90_integer(ir[i][0], &t));
        check_size("f90_integer", t, ir[i][1]);
        check_env("f90_integer", t, MPI_COMBINER_F90_INTEGER, 1, 0, ir[i][0]);
        MPI_Type_create_f90_integer(ir[i][0], &u);
        mtest_check(t == u, "f90_integer(%d) twice: two handles", ir[i][0]);
    }
    static const int pr[][3] = {{6, 30, 4},   {6, MPI_UNDEFINED, 4}, {MPI_UNDEFINED, 37, 4},
                                {7, 30, 8},   {15, 307, 8},          {6, 38, 8},
                                {16, 10, 16}, {18, 4931, 16}};
    for (size_t i = 0; i < sizeof pr / sizeof pr[0]; i++) {
        mtest_check_rc("MPI_Type_create_f90_real", MPI_Type_create_f90_real(pr[i][0], pr[i][1], &t));
        check_size("f90_real", t, pr[i][2]);
        check_env("f90_real", t, MPI_COMBINER_F90_REAL, 2, pr[i][0], pr[i][1]);
        mtest_check_rc("MPI_Type_create_f90_complex",
                       MPI_Type_create_f90_complex(pr[i][0], pr[i][1], &u));
        check_size("f90_complex", u, 2 * pr[i][2]);
        check_env("f90_complex", u, MPI_COMBINER_F90_COMPLEX, 2, pr[i][0], pr[i][1]);
    }

    /* predefined: cannot be freed; usable in a message */
    MPI_Type_create_f90_real(15, 300, &t);
    mtest_check_class("MPI_Type_free of an f90 type", MPI_Type_free(&t), MPI_ERR_TYPE);
    double v = rank + 0.5, w = -1;
    MPI_Sendrecv(&v, 1, t, (rank + 1) % size, 0, &w, 1, t, (rank + size - 1) % size, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    mtest_check(w == (rank + size - 1) % size + 0.5, "received %g", w);

    mtest_check_class("f90_integer(19)", MPI_Type_create_f90_integer(19, &t), MPI_ERR_ARG);
    mtest_check_class("f90_real(19, 10)", MPI_Type_create_f90_real(19, 10, &t), MPI_ERR_ARG);
    mtest_check_class("f90_real(10, 5000)", MPI_Type_create_f90_real(10, 5000, &t), MPI_ERR_ARG);
    mtest_check_class("f90_complex(undefined, undefined)",
                      MPI_Type_create_f90_complex(MPI_UNDEFINED, MPI_UNDEFINED, &t), MPI_ERR_ARG);
    return mtest_finalize();
}
