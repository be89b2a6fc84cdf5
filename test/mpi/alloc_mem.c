/*
 * MPI_Alloc_mem / MPI_Free_mem: the mpi_minimum_memory_alignment hint, size 0,
 * memory usable as a message buffer, and errors (negative size, a pointer
 * the library did not hand out, freeing twice) under MPI_ERRORS_RETURN.
 */
#include "mtest.h"

#include <stdint.h>

int main(int argc, char **argv)
{
    int rank, size;
    char *p = NULL, *q = NULL;
    MPI_Info info;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    static const long aligns[] = {1, 8, 64, 4096, 65536};
    for (int i = 0; i < 5; i++) {
        char v[32];
        MPI_Info_create(&info);
        snprintf(v, sizeof v, "%ld", aligns[i]);
        MPI_Info_set(info, "mpi_minimum_memory_alignment", v);
        mtest_check_rc("MPI_Alloc_mem", MPI_Alloc_mem(1000, info, &p));
        mtest_check(p && (uintptr_t)p % (uintptr_t)aligns[i] == 0, "alignment %ld: %p", aligns[i],
                    (void *)p);
        memset(p, i, 1000);
        mtest_check_rc("MPI_Free_mem", MPI_Free_mem(p));
        MPI_Info_free(&info);
    }
    mtest_check_rc("MPI_Alloc_mem(0)", MPI_Alloc_mem(0, MPI_INFO_NULL, &p));
    mtest_check_rc("MPI_Alloc_mem(0) again", MPI_Alloc_mem(0, MPI_INFO_NULL, &q));
    mtest_check(p != q, "two size-0 blocks at the same address");
    MPI_Free_mem(p);
    MPI_Free_mem(q);

    /* a message between two allocated buffers */
    mtest_check_rc("MPI_Alloc_mem", MPI_Alloc_mem(1 << 20, MPI_INFO_NULL, &p));
    mtest_check_rc("MPI_Alloc_mem", MPI_Alloc_mem(1 << 20, MPI_INFO_NULL, &q));
    mtest_fill(p, 1 << 20, rank, 3);
    MPI_Sendrecv(p, 1 << 20, MPI_BYTE, (rank + 1) % size, 3, q, 1 << 20, MPI_BYTE,
                 (rank + size - 1) % size, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    mtest_verify("received into MPI_Alloc_mem memory", q, 1 << 20, (rank + size - 1) % size, 3);
    MPI_Free_mem(q);

    mtest_check_class("negative size", MPI_Alloc_mem(-1, MPI_INFO_NULL, &q), MPI_ERR_ARG);
    mtest_check_rc("MPI_Free_mem", MPI_Free_mem(p));
    mtest_check_class("freed twice", MPI_Free_mem(p), MPI_ERR_ARG);
    char stackbuf[16];
    mtest_check_class("not from MPI_Alloc_mem", MPI_Free_mem(stackbuf), MPI_ERR_ARG);
    return mtest_finalize();
}
