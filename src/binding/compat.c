/* The MPI-1 functions MPI-3 removed, kept for old programs: each is the
 * modern call under its old name. */
#include <mpi.h>
#include "binding/impl.h"

int b_Address(void *location, MPI_Aint *address) { return PMPI_Get_address(location, address); }

int b_Type_hindexed(int count, int blocklens[], MPI_Aint displs[], MPI_Datatype oldtype,
                    MPI_Datatype *newtype)
{
    return PMPI_Type_create_hindexed(count, blocklens, displs, oldtype, newtype);
}

int b_Type_hvector(int count, int blocklen, MPI_Aint stride, MPI_Datatype oldtype,
                   MPI_Datatype *newtype)
{
    return PMPI_Type_create_hvector(count, blocklen, stride, oldtype, newtype);
}

int b_Type_struct(int count, int blocklens[], MPI_Aint displs[], MPI_Datatype types[],
                  MPI_Datatype *newtype)
{
    return PMPI_Type_create_struct(count, blocklens, displs, types, newtype);
}

int b_Type_extent(MPI_Datatype datatype, MPI_Aint *extent)
{
    MPI_Aint lb;
    return PMPI_Type_get_extent(datatype, &lb, extent);
}

int b_Type_lb(MPI_Datatype datatype, MPI_Aint *displacement)
{
    MPI_Aint extent;
    return PMPI_Type_get_extent(datatype, displacement, &extent);
}

int b_Type_ub(MPI_Datatype datatype, MPI_Aint *displacement)
{
    MPI_Aint lb, extent;
    int rc = PMPI_Type_get_extent(datatype, &lb, &extent);
    if (rc == MPI_SUCCESS)
        *displacement = lb + extent;
    return rc;
}

int b_Errhandler_create(MPI_Comm_errhandler_function *function, MPI_Errhandler *errhandler)
{
    return PMPI_Comm_create_errhandler(function, errhandler);
}

int b_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    return PMPI_Comm_get_errhandler(comm, errhandler);
}

int b_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler)
{
    return PMPI_Comm_set_errhandler(comm, errhandler);
}
