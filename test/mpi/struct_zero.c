/* A struct of zero blocks may be built with NULL arrays (MPICH's
 * struct_zero_count crashed us once): it is an empty type of size and extent
 * 0 that can be committed, communicated and freed. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int errs = 0, rank, size, x = 5;
    MPI_Aint lb, ext;
    MPI_Datatype t;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (MPI_Type_create_struct(0, NULL, NULL, NULL, &t) != MPI_SUCCESS) {
        fprintf(stderr, "MPI_Type_create_struct(count=0, NULL arrays) failed\n");
        errs++;
    } else {
        MPI_Type_commit(&t);
        MPI_Type_size(t, &size);
        MPI_Type_get_extent(t, &lb, &ext);
        if (size != 0 || ext != 0) {
            fprintf(stderr, "empty struct: size %d extent %ld, expected 0 and 0\n", size, (long)ext);
            errs++;
        }
        MPI_Sendrecv(&x, 1, t, rank, 0, &x, 1, t, rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (x != 5) {
            fprintf(stderr, "an empty type moved data\n");
            errs++;
        }
        MPI_Type_free(&t);
    }
    int all = 0;
    MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (all)
            printf(" Found %d errors\n", all);
        else
            printf(" No Errors\n");
    }
    MPI_Finalize();
    return all != 0;
}
