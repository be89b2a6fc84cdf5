/*
 * io_atomic: MPI_File_set_atomicity(1) makes concurrent overlapping
 * accesses of different ranks sequentially consistent (MPI 4.1 14.6.1).
 *
 * Every rank opens the file with data sieving off, so a non-contiguous
 * access is many separate writes, and in atomic mode repeatedly writes the
 * same region (64 separate blocks of a strided view) stamped with (rank,
 * iteration), and reads it back in between. Each read must see the 64
 * blocks of one single write, never a mix of two; at the end, after a
 * barrier, the file must hold one write entirely. The same is then done
 * with every rank writing the whole region collectively (write_at_all).
 * Run without atomic mode (argument "-nonatomic"), the same program sees
 * torn reads on two or more ranks: that is what the locks prevent.
 */
#include "io_util.h"

#define NB    64 /* blocks */
#define BL    16 /* bytes per block */
#define ST    48 /* stride */
#define ITERS 400

static int rank, size;

static void stamp(unsigned char *blk, int r, int it, int j)
{
    for (int k = 0; k < BL; k++)
        blk[k] = (unsigned char)(k < 4 ? r : k < 8 ? it >> (8 * (k - 4)) : j + k);
}

/* which (rank, iteration) wrote buf, -1 if its blocks do not agree */
static int who(const unsigned char *buf, int *it)
{
    int r = buf[0];
    *it = buf[4] | buf[5] << 8;
    unsigned char want[BL];
    for (int j = 0; j < NB; j++) {
        stamp(want, r, *it, j);
        if (memcmp(want, buf + j * BL, BL))
            return -1;
    }
    return r;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int atomic = !(argc > 1 && !strcmp(argv[1], "-nonatomic"));
    io_tmpdir_make();
    const char *path = io_path("atomic.dat");
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_ds_write", "disable");
    MPI_Info_set(info, "romio_ds_read", "disable");
    MPI_File fh;
    int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
    MPI_Info_free(&info);
    if (!mtest_check_rc("MPI_File_open", rc)) {
        io_tmpdir_remove();
        return mtest_finalize();
    }
    mtest_check_rc("set_atomicity", MPI_File_set_atomicity(fh, atomic));
    int flag = -1;
    MPI_File_get_atomicity(fh, &flag);
    mtest_check_int("get_atomicity", flag, atomic);
    MPI_Datatype vec, ft;
    MPI_Type_vector(NB, BL, ST, MPI_BYTE, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint)NB * ST, &ft);
    MPI_Type_commit(&ft);
    MPI_Type_free(&vec);
    mtest_check_rc("set_view", MPI_File_set_view(fh, 0, MPI_BYTE, ft, "native", MPI_INFO_NULL));

    unsigned char wbuf[NB * BL], rbuf[NB * BL];
    int torn = 0;
    for (int pass = 0; pass < 2; pass++) {
        MPI_Status st;
        MPI_Barrier(MPI_COMM_WORLD);
        for (int it = 0; it < ITERS; it++) {
            for (int j = 0; j < NB; j++)
                stamp(wbuf + j * BL, rank, it, j);
            rc = pass == 0 ? MPI_File_write_at(fh, 0, wbuf, NB * BL, MPI_BYTE, &st)
                           : MPI_File_write_at_all(fh, 0, wbuf, NB * BL, MPI_BYTE, &st);
            if (!mtest_check_rc("write", rc))
                break;
            if (pass == 0 || it % 8 == 0) {
                rc = MPI_File_read_at(fh, 0, rbuf, NB * BL, MPI_BYTE, &st);
                if (!mtest_check_rc("read", rc))
                    break;
                int i2;
                if (who(rbuf, &i2) < 0)
                    torn++;
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            long long len;
            unsigned char *b = io_posix_read_all(path, &len), blocks[NB * BL];
            if (len >= (long long)(NB - 1) * ST + BL) {
                for (int j = 0; j < NB; j++)
                    memcpy(blocks + j * BL, b + (long long)j * ST, BL);
                int i2, r = who(blocks, &i2);
                if (atomic)
                    mtest_check(r >= 0, "pass %d: the file holds blocks of different writes", pass);
            } else {
                mtest_fail("pass %d: file of %lld bytes", pass, len);
            }
            free(b);
        }
    }
    int all = 0;
    MPI_Allreduce(&torn, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (atomic)
        mtest_check(torn == 0, "%d reads saw blocks of different writes in atomic mode", torn);
    else if (rank == 0)
        fprintf(stderr, "non-atomic mode: %d torn reads\n", all);
    MPI_Type_free(&ft);
    mtest_check_rc("MPI_File_close", MPI_File_close(&fh));
    io_tmpdir_remove();
    return mtest_finalize();
}
